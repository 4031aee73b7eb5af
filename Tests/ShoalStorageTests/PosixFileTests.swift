import Foundation
import Synchronization
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

/// A `MemoryFile` that counts how often its size is asked.
private final class SizeCountingFile: StorageFile {
  let inner = MemoryFile(path: "size-counting")
  let sizeCalls = Mutex(0)
  var path: String { inner.path }
  func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    try inner.read(into: buffer, at: offset)
  }
  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws { try inner.write(bytes, at: offset) }
  func sync() throws { try inner.sync() }
  func size() throws -> UInt64 {
    sizeCalls.withLock { $0 += 1 }
    return try inner.size()
  }
  func truncate(to size: UInt64) throws { try inner.truncate(to: size) }
}

@Suite struct FileSizeQueryTests {
  /// A commit must not `stat` its file when the file is known to be long enough: on Linux 6.13
  /// and later, ext4 gives a write after a `stat` a new fine-grained modification time, which
  /// dirties the inode, and the commit's sync then writes the inode's block too. The file only
  /// grows while it is in use, so the size last seen is a lower bound to go by.
  @Test func durableCommitsAskTheFileSizeOnlyWhenItMayBeTooShort() throws {
    let file = SizeCountingFile()
    let store = try Store(file: file, options: StoreOptions(durability: .full))
    try store.write { txn in
      try txn.createKeyspace("k")
      for i in 0..<2000 { try txn.put(textValue(i, length: 100), forKey: bytes("k\(i)"), in: "k") }
    }
    try store.write { try $0.put([0], forKey: bytes("warm"), in: "k") }
    let before = file.sizeCalls.withLock { $0 }
    for i in 0..<300 {
      try store.write { try $0.put(textValue(i + 7, length: 100), forKey: bytes("k\((i * 7919) % 2000)"), in: "k") }
    }
    let asked = file.sizeCalls.withLock { $0 } - before
    let end = store.latestMeta.fileEnd
    // The zero-filled stretch ahead of the data (at least 16 KiB) is asked for at most once
    // each time the data area grows past it.
    #expect(asked <= 4, "300 small commits asked the file's size \(asked) times")
    #expect(try file.inner.size() >= end)
    #expect(store.verify().isOK)
  }
}
