import Foundation
import Testing

@testable import ShoalStorage

#if canImport(Glibc)
  import Glibc
#endif

/// The lock file against a careless or hostile user: planted symbolic links, hard links and
/// directories are never followed or written, another user's lock file is never truncated or
/// re-moded, and a read-only open by another user creates none. The tests run as root and act
/// as `nobody` through `setpriv` where permissions matter.
@Suite("Lock file hardening", .serialized)
struct LockFileHardeningTests {
  static let nobody: uid_t = 65534
  static let nogroup: gid_t = 65534

  /// A file another user would want to protect: its content and mode must not change.
  private func victim(in dir: TemporaryDirectory) throws -> String {
    let path = dir.file("victim")
    try Data("precious".utf8).write(to: URL(fileURLWithPath: path))
    chmod(path, 0o600)
    return path
  }

  private func expectUntouched(_ path: String) throws {
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious")
    var info = stat()
    #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
  }

  private func lockFileError(_ body: () throws -> Void) -> String? {
    do {
      try body()
      return nil
    } catch {
      return "\(error)"
    }
  }

  @Test func aSymbolicLinkAtTheLockPathIsNeverFollowed() throws {
    let dir = TemporaryDirectory()
    let target = try victim(in: dir)
    try makeKeyValueStore(dir.file())
    unlink(dir.file() + ".lock")
    #expect(symlink(target, dir.file() + ".lock") == 0)
    let message = lockFileError { _ = try Store.open(path: dir.file()) }
    #expect(message?.contains("symbolic link") == true)
    // A read-only open carries on alone, without the lock file.
    let reader = try Store.open(path: dir.file(), options: StoreOptions(readOnly: true))
    #expect(try reader.read { try $0.get(bytes("k"), in: "kv") } == bytes("v"))
    try expectUntouched(target)
  }

  @Test func aHardLinkOrADirectoryAtTheLockPathIsRefused() throws {
    let dir = TemporaryDirectory()
    let target = try victim(in: dir)
    try makeKeyValueStore(dir.file())
    unlink(dir.file() + ".lock")
    #expect(link(target, dir.file() + ".lock") == 0)
    #expect(lockFileError { _ = try Store.open(path: dir.file()) }?.contains("hard links") == true)
    try expectUntouched(target)
    unlink(dir.file() + ".lock")
    #expect(mkdir(dir.file() + ".lock", 0o755) == 0)
    #expect(lockFileError { _ = try Store.open(path: dir.file()) } != nil)
  }

  @Test func anotherUsersLockFileIsNeverTruncatedOrRemoded() throws {
    let dir = TemporaryDirectory()
    try makeKeyValueStore(dir.file())
    let lock = dir.file() + ".lock"
    // Another user's file that is not a lock file: refused, left as it is.
    unlink(lock)
    try Data("not a lock file".utf8).write(to: URL(fileURLWithPath: lock))
    chmod(lock, 0o666)
    #expect(chown(lock, Self.nobody, Self.nogroup) == 0)
    #expect(lockFileError { _ = try Store.open(path: dir.file()) }?.contains("is not a Shoal lock file") == true)
    #expect(try String(contentsOfFile: lock, encoding: .utf8) == "not a lock file")
    // Another user's real lock file: used as it is (zeroed by the session's first opener,
    // never truncated or given another mode or owner).
    unlink(lock)
    _ = try Store.open(path: dir.file())
    chmod(lock, 0o666)
    #expect(chown(lock, Self.nobody, Self.nogroup) == 0)
    let size = fileSize(lock)
    do {
      let store = try Store.open(path: dir.file())
      try store.write { try $0.put(bytes("w"), forKey: bytes("k2"), in: "kv") }
    }
    var info = stat()
    #expect(stat(lock, &info) == 0)
    #expect(info.st_uid == Self.nobody && info.st_mode & 0o777 == 0o666 && fileSize(lock) == size)
  }

  @Test func rootHandsALockFileItCreatesToTheDataFilesOwner() throws {
    guard geteuid() == 0 else { return }
    let dir = TemporaryDirectory()
    try makeKeyValueStore(dir.file())
    unlink(dir.file() + ".lock")
    #expect(chown(dir.file(), Self.nobody, Self.nogroup) == 0)
    _ = try Store.open(path: dir.file(), options: StoreOptions(readOnly: true))
    var info = stat()
    #expect(stat(dir.file() + ".lock", &info) == 0)
    #expect(info.st_uid == Self.nobody && info.st_gid == Self.nogroup)
  }

  @Test func aReadOnlyOpenByAnotherUserCreatesNoLockFile() throws {
    guard geteuid() == 0 else { return }
    let dir = TemporaryDirectory()
    try makeKeyValueStore(dir.file())
    unlink(dir.file() + ".lock")
    // The directory is writable by anyone, so only Shoal's rule keeps `nobody` from creating it.
    chmod(dir.path, 0o777)
    chmod(dir.file(), 0o644)
    let (status, text) = try CommandLineTests().run(["info", dir.file()], as: (Self.nobody, Self.nogroup))
    #expect(status == 0, "\(text)")
    #expect(!FileManager.default.fileExists(atPath: dir.file() + ".lock"))
  }

  @Test func anotherUserReadsAnEncryptedFileAloneWithItsKeyAndOnlyItsHeaderWithout() throws {
    guard geteuid() == 0 else { return }
    let dir = TemporaryDirectory()
    let key = randomKey()
    // The owner keeps the file open: `nobody` reads it outside the session (it may not open the
    // lock file), following the owner's commits in the file with the key.
    let store = try makeEncryptedStore(at: dir.file(), key: key, count: 300, length: 200)
    chmod(dir.path, 0o755)
    chmod(dir.file(), 0o644)
    let keyFile = dir.file("key")
    try Data(key).write(to: URL(fileURLWithPath: keyFile))
    chmod(keyFile, 0o644)
    func runAsNobody(_ arguments: [String]) throws -> (Int32, String) {
      try CommandLineTests().run(arguments, as: (Self.nobody, Self.nogroup))
    }
    try store.write { try $0.put(bytes("later"), forKey: bytes("k0"), in: "k") }
    #expect(try runAsNobody(["verify", "--key-file", keyFile, dir.file()]) == (0, "ok\n"))
    #expect(try runAsNobody(["dump", "--key-file", keyFile, dir.file()]).1.contains("k0 = later"))
    let header = try runAsNobody(["info", dir.file()])
    #expect(header.0 == 0 && header.1.contains("encrypted:         yes"))
    #expect(try runAsNobody(["dump", dir.file()]).0 == 1)
  }

  @Test func compactionKeepsTheFilesOwnerGroupAndMode() throws {
    guard geteuid() == 0 else { return }
    let dir = TemporaryDirectory()
    do {
      let store = try Store.open(path: dir.file())
      try store.write { txn in
        try txn.createKeyspace("kv")
        for i in 0..<2000 { try txn.put(textValue(i, length: 300), forKey: bytes("k\(i)"), in: "kv") }
      }
      try store.write { txn in for i in 0..<1900 { _ = try txn.delete(bytes("k\(i)"), in: "kv") } }
    }
    chmod(dir.file(), 0o600)
    #expect(chown(dir.file(), Self.nobody, Self.nogroup) == 0)
    let store = try Store.open(path: dir.file())
    #expect(try store.compactIfAlone { _, _ in true })
    var info = stat()
    #expect(stat(dir.file(), &info) == 0)
    #expect(info.st_uid == Self.nobody && info.st_gid == Self.nogroup && info.st_mode & 0o777 == 0o600)
    // `shoal compact FILE OUT` gives OUT the same.
    let out = dir.file("copy.shoal")
    let (status, _) = try CommandLineTests().run(["compact", dir.file(), out])
    #expect(status == 0)
    #expect(stat(out, &info) == 0)
    #expect(info.st_uid == Self.nobody && info.st_mode & 0o777 == 0o600)
  }

  @Test func aFailedCompactionLeavesNoPartialCopy() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    try store.write { txn in
      try txn.createKeyspace("kv")
      for i in 0..<3000 { try txn.put(textValue(i, length: 300), forKey: bytes("k\(i)"), in: "kv") }
    }
    // Damage the middle of the file: the copy fails reading it.
    let file = try PosixFile(path: dir.file(), create: false, readOnly: false)
    let size = try file.size()
    try file.write([UInt8](repeating: 0x5A, count: Int(size / 2)), at: size / 4)
    let out = dir.file("copy.shoal")
    let (status, _) = try CommandLineTests().run(["compact", dir.file(), out])
    #expect(status != 0)
    #expect(!FileManager.default.fileExists(atPath: out))
  }

  @Test func aFileOpenedThroughASymbolicLinkIsOneSession() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    try store.write { try $0.createKeyspace("kv") }
    let linked = dir.file("linked.shoal")
    #expect(symlink(dir.file(), linked) == 0)
    // Another process reads through the link: its pin is seen by this writer.
    let holder = try Child.worker("hold", file: linked)
    let pinned = UInt64(try holder.line(startingWith: "pinned").split(separator: " ")[1]) ?? 0
    for i in 0..<5 { try store.write { try $0.put([UInt8(i)], forKey: [UInt8(i)], in: "kv") } }
    #expect(store.pins().contains { $0.version == pinned && $0.pid == holder.process.processIdentifier })
    #expect(store.activeVersionCount == 2)
    #expect(try Store.open(path: linked).lockFilePath == store.lockFilePath)
    #expect(!FileManager.default.fileExists(atPath: linked + ".lock"))
    holder.kill()
    #expect(store.verify().isOK)
  }

  @Test func aFileWithSeveralNamesIsRefused() throws {
    let dir = TemporaryDirectory()
    try makeKeyValueStore(dir.file())
    #expect(link(dir.file(), dir.file("second.shoal")) == 0)
    let message = lockFileError { _ = try Store.open(path: dir.file("second.shoal")) }
    #expect(message?.contains("hard links") == true)
    #expect(message?.contains("writable directory") == false)
  }
}

/// A damaged file is an error, never silently made into an empty database.
@Suite("Files cut short")
struct CutFileTests {
  @Test(arguments: [100, 4096])
  func aValidFileCutShortIsAnErrorNotANewDatabase(keeping length: Int) throws {
    let dir = TemporaryDirectory()
    do {
      let store = try Store.open(path: dir.file())
      try store.write { txn in
        try txn.createKeyspace("kv")
        try txn.put(bytes("v"), forKey: bytes("k"), in: "kv")
      }
    }
    #expect(truncate(dir.file(), off_t(length)) == 0)
    do {
      _ = try Store.open(path: dir.file())
      Issue.record("a file cut to \(length) bytes opened")
    } catch let error as StorageError {
      guard case .truncated = error else {
        Issue.record("expected truncated, got \(error)")
        return
      }
    }
    #expect(fileSize(dir.file()) == UInt64(length))
  }

  @Test func aFileCutToItsMetaRecordsSaysItLostCommits() throws {
    let dir = TemporaryDirectory()
    do {
      let store = try Store.open(path: dir.file())
      try store.write { try $0.createKeyspace("kv") }
    }
    #expect(truncate(dir.file(), off_t(FileLayout.dataStart)) == 0)
    // The newest commit's blocks are gone: the open says it fell back (as after a torn commit),
    // or fails; it never opens as if nothing happened.
    if let store = try? Store.open(path: dir.file()) {
      #expect(store.recoveredFromVersion != nil)
    }
  }

  @Test func aFileCutUnderARunningWriterStopsItsNextCommit() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    try store.write { txn in
      try txn.createKeyspace("kv")
      for i in 0..<200 { try txn.put(textValue(i, length: 200), forKey: bytes("k\(i)"), in: "kv") }
    }
    let cut = fileSize(dir.file()) / 2
    #expect(truncate(dir.file(), off_t(cut)) == 0)
    do {
      try store.write { try $0.put(bytes("v"), forKey: bytes("new"), in: "kv") }
      Issue.record("committed over a file cut short")
    } catch let error as StorageError {
      guard case .truncated = error else {
        Issue.record("expected truncated, got \(error)")
        return
      }
    }
    #expect(fileSize(dir.file()) == cut)
  }

  @Test func aCreationThatNeverWroteItsHeaderStartsAfresh() throws {
    let dir = TemporaryDirectory()
    // What a creation interrupted before its header leaves: zeros where the header goes.
    try Data(count: Int(FileLayout.dataStart)).write(to: URL(fileURLWithPath: dir.file()))
    let store = try Store.open(path: dir.file())
    try store.write { try $0.createKeyspace("kv") }
    #expect(store.verify().isOK)
  }

  @Test func aSmallFileThatIsNotAShoalFileIsSaidToBeOne() throws {
    let dir = TemporaryDirectory()
    try Data("hello".utf8).write(to: URL(fileURLWithPath: dir.file()))
    #expect(throws: StorageError.notAShoalFile(path: dir.file())) { try Store.open(path: dir.file()) }
  }
}

/// The lock file's fixed tables, full: typed errors that name the limit and who holds it.
@Suite("Lock file limits")
struct LockFileLimitTests {
  @Test func fullReaderSlotsAreATypedErrorNamingTheHolders() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file(), options: StoreOptions(durability: .unsafe))
    try store.write { try $0.createKeyspace("kv") }
    var pins: [ReadTransaction] = []
    defer { for pin in pins { pin.close() } }
    for i in 0..<SharedCoordinator.readerSlots {
      pins.append(try store.beginRead())
      try store.write { try $0.put([UInt8(i & 0xFF)], forKey: [1], in: "kv") }
    }
    do {
      _ = try store.beginRead()
      Issue.record("a pin beyond the reader slots was taken")
    } catch let error as StorageError {
      guard case .slotsExhausted(_, let kind, let limit, let holders) = error else {
        Issue.record("expected slotsExhausted, got \(error)")
        return
      }
      #expect(kind == "reader" && limit == SharedCoordinator.readerSlots)
      #expect(holders[getpid()] == SharedCoordinator.readerSlots)
      #expect(error.description.contains("pid \(getpid()): \(SharedCoordinator.readerSlots)"))
    }
  }
}
