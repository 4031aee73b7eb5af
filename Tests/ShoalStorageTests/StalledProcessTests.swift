import CShoalSystem
import Foundation
import Testing

@testable import ShoalStorage

#if canImport(Glibc)
  import Glibc
#endif

/// Processes that stall or misbehave: a user who may only read the file holding read locks, a
/// writer that keeps the writer lock (open, or stopped with SIGSTOP), a dead process whose
/// liveness byte someone else locks. Real processes; `nobody` through `setpriv` where
/// permissions matter.
@Suite("Stalled and hostile processes", .serialized)
struct StalledProcessTests {
  static let nobody: UInt32 = 65534

  @Test(.enabled(if: geteuid() == 0, "needs root to act as another user"))
  func aUserWhoMayOnlyReadTheFileCannotStallWritersOrOpens() throws {
    let dir = TemporaryDirectory()
    #expect(chmod(dir.path, 0o755) == 0)
    try makeKeyValueStore(dir.file())
    #expect(chmod(dir.file(), 0o644) == 0)
    // `nobody` read-locks all of the data file; the lock file is not open to that user.
    let attacker = try Child.worker("read-lock", file: dir.file(), as: Self.nobody)
    defer {
      attacker.closeInput()
      _ = attacker.wait()
    }
    #expect(try attacker.line() == "locked data=1 lock=0")
    let path = dir.file()
    let wrote = finishes(within: 30) {
      do {
        let store = try Store.open(path: path)
        try store.write { try $0.put(bytes("w"), forKey: bytes("k"), in: "kv") }
      } catch {
        Issue.record("\(error)")
      }
    }
    #expect(wrote, "a writer waited on another user's read lock")
    // Another process opens, commits and reads too.
    let other = try Child.worker("put", file: path, ["--key", "k2", "--value", "x"])
    #expect(try other.line(timeout: 30).hasPrefix("committed"))
    #expect(other.wait() == 0)
    let store = try Store.open(path: path)
    #expect(try store.read { try $0.get(bytes("k"), in: "kv") } == bytes("w"))
  }

  @Test func aReadLockOnADeadProcessesLivenessByteKeepsNoPinAlive() throws {
    let dir = TemporaryDirectory()
    let path = dir.file()
    try makeKeyValueStore(path)
    let store = try Store.open(path: path)
    let holder = try Child.worker("hold", file: path)
    _ = try holder.line(startingWith: "pinned")
    let pid = holder.process.processIdentifier
    #expect(store.pins().contains { $0.pid == pid })
    holder.kill()
    // Another description read-locks every liveness byte it can: the dead process's among them.
    let fd = open(path + ".lock", O_RDONLY | O_CLOEXEC)
    #expect(fd >= 0)
    defer { close(fd) }
    var locked = 0
    for i in 0..<Int64(SharedCoordinator.processSlots)
    where SharedCoordinator.ofdLock(fd, F_RDLCK, SharedCoordinator.livenessBase + i, wait: false) {
      locked += 1
    }
    #expect(locked >= SharedCoordinator.processSlots - 1)
    try store.write { try $0.put(bytes("after"), forKey: bytes("k"), in: "kv") }
    #expect(!store.pins().contains { $0.pid == pid })
  }

  @Test func aWriterWaitsNoLongerThanItsTimeoutAndNamesTheHolder() throws {
    let dir = TemporaryDirectory()
    let (path, holder, pid) = try storeWithWriterLockHeld(in: dir)
    let store = try Store.open(path: path, options: StoreOptions(writeLockTimeout: .milliseconds(300)))
    func expectTimeout() {
      do {
        try store.write { _ in }
        Issue.record("the write did not time out")
      } catch let error as StorageError {
        guard case .writeLockTimeout(_, let waited, let who) = error else {
          Issue.record("\(error)")
          return
        }
        #expect(who == pid && waited >= 0.3)
        #expect(error.description.contains("process \(pid) holds it"))
      } catch {
        Issue.record("\(error)")
      }
    }
    expectTimeout()
    // Stopped while holding it: the same, and readers are not held up.
    kill(pid, SIGSTOP)
    expectTimeout()
    #expect(try store.read { try $0.get(bytes("k"), in: "kv") } == bytes("v"))
    kill(pid, SIGCONT)
    holder.closeInput()
    #expect(holder.wait() == 0)
    try store.write { try $0.put(bytes("mine"), forKey: bytes("k"), in: "kv") }

    // Another thread of this process holding it: the error says so.
    let transaction = try store.beginWrite()
    let other = finishes(within: 10) {
      do {
        try store.write { _ in }
        Issue.record("the write did not time out")
      } catch StorageError.writeLockTimeout(_, _, let who) {
        #expect(who == nil)
      } catch {
        Issue.record("\(error)")
      }
    }
    #expect(other)
    transaction.abort()
  }

  /// A committer whose batch's sync is led by a process that stopped while holding the
  /// publisher lock waits in the kernel, says so after five seconds, and returns once the lock
  /// is let go. Here this process holds the lock, through a description of its own.
  @Test func aLongWaitForAStoppedSyncLeaderIsLogged() throws {
    let dir = TemporaryDirectory()
    let path = dir.file()
    try makeKeyValueStore(path)
    let lock = open(path + ".lock", O_RDWR | O_CLOEXEC)
    #expect(lock >= 0)
    defer { close(lock) }
    #expect(SharedCoordinator.ofdLock(lock, F_WRLCK, SharedCoordinator.publisherByte, wait: false))
    let waiter = try Child(
      ["worker", "put", "--file", path, "--key", "a", "--value", "b", "--log"], mergingErrors: true)
    let warning = try waiter.line(startingWith: "warn", timeout: 30)
    #expect(warning.contains("publisher lock") && warning.contains("batch of commits"), "\(warning)")
    SharedCoordinator.ofdUnlock(lock, SharedCoordinator.publisherByte)
    #expect(try waiter.line(startingWith: "committed", timeout: 30).hasPrefix("committed"))
    #expect(waiter.wait() == 0)
    let store = try Store.open(path: path)
    #expect(try store.read { try $0.get(bytes("a"), in: "kv") } == bytes("b"))
  }

  @Test func aLongWaitForTheWriterLockIsLoggedWithTheHoldersPid() throws {
    let dir = TemporaryDirectory()
    let (path, holder, pid) = try storeWithWriterLockHeld(in: dir)
    // The waiter is a process of its own, whose log (on stderr) is read here.
    let waiter = try Child(
      ["worker", "put", "--file", path, "--key", "a", "--value", "b", "--log"], mergingErrors: true)
    let warning = try waiter.line(startingWith: "warn", timeout: 30)
    #expect(warning.contains("Waiting") && warning.contains("held by process \(pid)"), "\(warning)")
    holder.closeInput()
    #expect(holder.wait() == 0)
    #expect(try waiter.line(startingWith: "committed", timeout: 30).hasPrefix("committed"))
    #expect(waiter.wait() == 0)
  }

  /// A writer already asleep waiting for the writer lock when its holder is killed: the kernel
  /// frees the lock but no release wakes the waiter, which finds the lock free on its next look
  /// and commits; the killed holder's transaction left nothing behind.
  @Test func aWaitingWriterGetsTheLockOfAHolderKilledMeanwhile() throws {
    let dir = TemporaryDirectory()
    let (path, holder, pid) = try storeWithWriterLockHeld(in: dir)
    let waiter = try Child(["worker", "put", "--file", path, "--key", "a", "--value", "b"])
    // The waiter counts itself on the writer-lock futex word of the lock file just before it
    // sleeps there: kill the holder only once it does.
    #expect(try waitersOnTheWriterLock(of: path, reach: 1, within: 30), "the waiter never waited for the lock")
    #expect(kill(pid, SIGKILL) == 0)
    _ = holder.wait()
    #expect(try waiter.line(startingWith: "committed", timeout: 60).hasPrefix("committed"))
    #expect(waiter.wait() == 0)
    let store = try Store.open(path: path)
    #expect(try store.read { try $0.get(bytes("a"), in: "kv") } == bytes("b"))
    #expect(try store.read { try $0.get(bytes("k"), in: "kv") } == bytes("v"))
    #expect(store.verify().isOK)
  }
}

/// Whether the count of writers asleep on the writer-lock futex word in `path`'s lock file
/// reaches `count` within `seconds` (looked at every millisecond).
func waitersOnTheWriterLock(of path: String, reach count: UInt32, within seconds: Double) throws -> Bool {
  let fd = open(path + ".lock", O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
  defer { close(fd) }
  let deadline = Date().addingTimeInterval(seconds)
  while Date() < deadline {
    var waiters: UInt32 = 0
    let read = pread(fd, &waiters, 4, off_t(SharedCoordinator.offsetWriterWakeWaiters))
    if read == 4, waiters >= count { return true }
    usleep(1000)
  }
  return false
}

/// A reader outside the file's session (a user who may read the data file but not its lock
/// file) pins nothing: writers reuse its snapshot's space. It must never take that for a
/// damaged file, and each new read sees the newest commit.
@Suite("Readers outside the session")
struct DetachedReaderTests {
  @Test(.enabled(if: geteuid() == 0, "needs root to act as another user"))
  func aSnapshotOverwrittenByWritersIsUnavailableNotCorrupt() throws {
    let dir = TemporaryDirectory()
    #expect(chmod(dir.path, 0o755) == 0)
    let path = dir.file()
    let store = try Store.open(path: path)
    func rewriteAll(_ round: Int) throws {
      try store.write { txn in
        try txn.ensureKeyspace("kv")
        // Incompressible values, so each round needs about as much space as the last: the
        // free space of the first rounds is soon all reused.
        var rng = SystemRandomNumberGenerator()
        for i in 0..<500 {
          try txn.put((0..<1000).map { _ in UInt8.random(in: 0...255, using: &rng) }, forKey: bytes("k\(i)"), in: "kv")
        }
      }
    }
    try rewriteAll(0)
    #expect(chmod(path, 0o644) == 0)
    let reader = try Child.worker("detached-read", file: path, as: StalledProcessTests.nobody)
    #expect(try reader.line(timeout: 30) == "opened 1")
    // Opening verified (and cached) the blocks of version 1; the snapshot is of version 2,
    // whose blocks it reads from the file.
    try rewriteAll(1)
    reader.send("go")
    #expect(try reader.line(timeout: 30) == "snapshot 2 detached=true")
    for round in 2...6 { try rewriteAll(round) }
    let latest = store.latestVersion
    reader.closeInput()
    let outcome = try reader.line(timeout: 30)
    #expect(outcome == "unavailable 2 \(latest)")
    #expect(try reader.line(timeout: 30) == "newest \(latest) 500")
    #expect(reader.wait() == 0)
  }
}

/// Someone truncates the lock file while processes map it (`: > FILE.lock`): the pages past
/// its end raise SIGBUS in every process that touches them. No process dies of it: each loses
/// the session (its writes fail with `lockFileReplaced`, its reads go on from the file).
@Suite("Lock file cut short while in use")
struct LockFileCutShortTests {
  @Test func truncatingTheLockFileKillsNoProcess() throws {
    let dir = TemporaryDirectory()
    let path = dir.file()
    let store = try Store.open(path: path)
    try store.write { txn in
      try txn.createKeyspace("kv")
      try txn.put(bytes("v"), forKey: bytes("k"), in: "kv")
    }
    let reader = try Child.worker("hold", file: path)
    _ = try reader.line(startingWith: "pinned")
    let writer = try Child.worker("commit-loop", file: path, ["--count", "0"])
    _ = try writer.line(startingWith: "committed")

    #expect(truncate(path + ".lock", 0) == 0)

    // This process: writing fails with a clear error, reading goes on.
    #expect(throws: StorageError.lockFileReplaced(path: path + ".lock")) {
      try store.write { try $0.put(bytes("w"), forKey: bytes("k"), in: "kv") }
    }
    #expect(try store.read { try $0.get(bytes("k"), in: "kv") } == bytes("v"))
    // The writing process stops at its next commit with that error, not a signal.
    _ = writer.remainingLines(timeout: 30)
    #expect(writer.wait() != 0)
    #expect(writer.process.terminationReason == .exit)
    // The reading process lives on and ends normally.
    reader.closeInput()
    #expect(reader.wait() == 0)
    #expect(reader.process.terminationReason == .exit)
    // A new opener meanwhile is told what happened.
    do {
      _ = try Store.open(path: path)
      Issue.record("opened a session whose lock file was cut short")
    } catch StorageError.incompatibleLockFile(_, let reason) {
      #expect(reason.contains("truncated"))
    }
  }
}

/// `verify()` (and `shoal info`) lists every pin, those of the calling process included, but
/// not the one its own walk takes.
@Suite("Pins in file info")
struct PinsInFileInfoTests {
  @Test func theCallersOwnSnapshotsAreListed() throws {
    let dir = TemporaryDirectory()
    try makeKeyValueStore(dir.file())
    let store = try Store.open(path: dir.file())
    #expect(store.verify().info.pins.isEmpty)
    let snapshot = try store.beginRead()
    try store.write { try $0.put(bytes("w"), forKey: bytes("k"), in: "kv") }
    let pins = store.verify().info.pins
    #expect(pins.map(\.version) == [snapshot.version] && pins.first?.pid == getpid())
    snapshot.close()
  }
}
