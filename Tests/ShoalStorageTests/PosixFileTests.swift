import CShoalSystem
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

  /// The kernel allows O_NOATIME only to the file's owner (or a process with CAP_FOWNER): the
  /// owner's descriptor has it, and a reader that does not own the file opens it without it
  /// instead of failing with EPERM. The reader is this process with the file-system identity of
  /// user `nobody`, taken on one thread of its own (Linux keeps it per thread; leaving root
  /// drops CAP_FOWNER with it). Needs root, to take that identity and to give it back.
  @Test(.enabled(if: getuid() == 0, "needs root to read the file as another user"))
  func aReaderThatDoesNotOwnTheFileOpensItWithoutNoAtime() throws {
    let dir = TemporaryDirectory()
    try makeTextStore(at: dir.file())
    #expect(chmod(dir.path, 0o755) == 0)
    #expect(chmod(dir.file(), 0o644) == 0)
    let owned = try PosixFile(path: dir.file(), create: false, readOnly: true)
    #expect(fcntl(owned.descriptor.rawValue, F_GETFL) & SHOAL_O_NOATIME != 0)
    var expected = [UInt8](repeating: 0, count: 4096)
    let expectedCount = try expected.withUnsafeMutableBytes { try owned.read(into: $0, at: 0) }

    // glibc has setfsuid(2) but Swift's Glibc module does not declare it.
    typealias SetFileSystemID = @convention(c) (UInt32) -> Int32
    let setfsuid = try unsafeBitCast(
      #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setfsuid")), to: SetFileSystemID.self)
    let outcome = Mutex<(flags: Int32, bytes: [UInt8], error: String?)>((0, [], nil))
    let done = DispatchSemaphore(value: 0)
    let path = dir.file()
    let reader = Thread {
      defer { done.signal() }
      _ = setfsuid(65534)
      defer { _ = setfsuid(0) }
      do {
        let file = try PosixFile(path: path, create: false, readOnly: true)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        let flags = fcntl(file.descriptor.rawValue, F_GETFL)
        outcome.withLock { $0 = (flags, Array(buffer.prefix(count)), nil) }
      } catch {
        outcome.withLock { $0.error = "\(error)" }
      }
    }
    reader.start()
    done.wait()
    let result = outcome.withLock { $0 }
    #expect(result.error == nil)
    #expect(result.flags & SHOAL_O_NOATIME == 0)
    let readTheSame = expectedCount > 0 && result.bytes == Array(expected.prefix(expectedCount))
    #expect(readTheSame, "the reader read the file's first \(expectedCount) bytes as the owner did")
    // The thread's identity did not leak: this thread can still open with O_NOATIME.
    let again = try PosixFile(path: dir.file(), create: false, readOnly: true)
    #expect(fcntl(again.descriptor.rawValue, F_GETFL) & SHOAL_O_NOATIME != 0)
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
