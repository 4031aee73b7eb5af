import Foundation
import Testing

@testable import ShoalStorage

@Suite struct PosixFileTests {
  /// The access time of `path`, in whole seconds.
  private func accessTime(_ path: String) -> Int {
    var info = stat()
    guard stat(path, &info) == 0 else { return -1 }
    return info.st_atim.tv_sec
  }

  /// Reading must not dirty the inode: on ext4 without a journal, fdatasync writes a dirty
  /// inode's block and waits for it before the cache flush. With relatime (the default), a
  /// read updates the access time whenever it is older than the modification time, which a
  /// writing process keeps making so; the store opens its file with O_NOATIME.
  @Test func readsLeaveTheAccessTimeAlone() throws {
    let dir = TemporaryDirectory()
    try makeTextStore(at: dir.file())
    // An access time an hour older than the modification time: relatime would update it.
    let old = time(nil) - 7200
    var times = [timespec(tv_sec: old, tv_nsec: 0), timespec(tv_sec: old + 3600, tv_nsec: 0)]
    #expect(utimensat(AT_FDCWD, dir.file(), &times, 0) == 0)
    try #require(accessTime(dir.file()) == old)

    let store = try Store.open(path: dir.file(), options: StoreOptions(cacheSize: 0))
    let read = try store.read { txn in
      try stride(from: 0, to: 2000, by: 7).map { try txn.get(bytes("k\($0)"), in: "k") }
    }
    #expect(read == stride(from: 0, to: 2000, by: 7).map { textValue($0, length: 200) })
    try store.write { try $0.put([1], forKey: [1], in: "k") }
    #expect(try store.read { try $0.get([1], in: "k") } == [1])
    #expect(accessTime(dir.file()) == old)
  }
}
