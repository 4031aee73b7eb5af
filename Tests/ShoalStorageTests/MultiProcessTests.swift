import Foundation
import Synchronization
import Testing

@testable import ShoalStorage

/// Real processes on one file: the lock file, the writer lock, reader slots, the notifier.
@Suite(.serialized) struct MultiProcessTests {
  @Test func twoProcessesSeeEachOthersCommits() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    let child = try Child.worker("put", file: dir.file(), ["--key", "from-child", "--value", "hello"])
    let line = try child.line(startingWith: "committed")
    #expect(child.wait() == 0)
    #expect(store.latestVersion == UInt64(line.split(separator: " ")[1]))
    #expect(try store.read { try $0.get(bytes("from-child"), in: "kv") } == bytes("hello"))
    try store.write { try $0.put(bytes("from-parent"), forKey: bytes("p"), in: "kv") }
    #expect(try store.read { try $0.get(bytes("p"), in: "kv") } == bytes("from-parent"))
    // A second child sees the parent's commit when it opens.
    let reader = try Child.worker("get", file: dir.file(), ["--key", "p"])
    #expect(try reader.line(startingWith: "value") == "value \(store.latestVersion) from-parent")
    #expect(reader.wait() == 0)
    #expect(FileManager.default.fileExists(atPath: dir.file() + ".lock"))
  }

  @Test func anObserverInAnotherProcessIsWokenByACommit() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    try store.write { try $0.createKeyspace("kv") }
    let base = store.latestVersion
    let observer = try Child.worker("wait", file: dir.file(), ["--after", "\(base)"])
    _ = try observer.line(startingWith: "waiting")
    try store.write { txn in
      try txn.put(bytes("1"), forKey: bytes("a"), in: "kv")
      try txn.put(bytes("2"), forKey: bytes("b"), in: "kv")
    }
    let woke = try observer.line(startingWith: "woke")
    #expect(woke == "woke \(base + 1) insert:a,insert:b")
    #expect(observer.wait() == 0)
  }

  @Test func listenersInThisProcessSeeAnotherProcessesCommits() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    let seen = Mutex<[(UInt64, UInt64)]>([])
    let arrived = DispatchSemaphore(value: 0)
    let token = store.addChangeListener { from, to in
      seen.withLock { $0.append((from, to)) }
      arrived.signal()
    }
    let child = try Child.worker("put", file: dir.file(), ["--key", "k", "--value", "v"])
    _ = try child.line(startingWith: "committed")
    #expect(arrived.wait(timeout: .now() + 30) == .success)
    #expect(seen.withLock { $0.last.map { $0.1 } } == store.latestVersion)
    token.invalidate()
    _ = child.wait()
  }

  /// Every delivery reaches a listener at the same stack depth, however many came before (a
  /// callback written back into the listener table used to be re-wrapped in two more thunks
  /// per delivery, so a long-running observer slowed down and would eventually overflow).
  @Test func listenersAreCalledAtOneDepthCommitAfterCommit() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file(), options: StoreOptions(durability: .unsafe))
    try store.write { try $0.ensureKeyspace("kv") }
    let depths = Mutex<[Int]>([])
    let arrived = DispatchSemaphore(value: 0)
    let token = store.addChangeListener { _, _ in
      var marker = 0
      let depth = withUnsafeMutablePointer(to: &marker) { Int(bitPattern: $0) }
      depths.withLock { $0.append(depth) }
      arrived.signal()
    }
    for i in 0..<300 {
      try store.write { try $0.put(bytes("\(i)"), forKey: bytes("k"), in: "kv") }
      #expect(arrived.wait(timeout: .now() + 30) == .success)
    }
    token.invalidate()
    let seen = depths.withLock { $0 }
    #expect(seen.count >= 300)
    #expect(Set(seen).count == 1, "listener stack depths: \(Set(seen).sorted())")
  }

  /// A writer process stopped with SIGSTOP at random moments, mid-publish included: every
  /// time, a new opener reads the newest version at once, and the writer goes on after SIGCONT.
  @Test func aStoppedWriterNeverHoldsUpNewReaders() throws {
    let dir = TemporaryDirectory()
    let writer = try Child.worker("commit-loop", file: dir.file(), ["--count", "0", "--id", "3"])
    _ = try writer.line(startingWith: "committed")
    let path = dir.file()
    let pid = writer.process.processIdentifier
    for _ in 0..<200 {
      #expect(kill(pid, SIGSTOP) == 0)
      let seen = Mutex<UInt64?>(nil)
      let read = finishes(within: 10) {
        let reader = try? Store.open(path: path)
        seen.withLock { $0 = reader?.latestVersion }
      }
      #expect(read && seen.withLock { $0 } != nil, "a reader waited for the stopped writer")
      #expect(kill(pid, SIGCONT) == 0)
      _ = try writer.line(startingWith: "committed")
      if !read { break }
    }
    writer.kill()
    #expect(try Store.open(path: path).verify().isOK)
  }

  @Test(arguments: [3, 11, 29])
  func aWriterKilledMidCommitLosesOnlyItsOwnTransaction(after commits: Int) throws {
    let dir = TemporaryDirectory()
    let writer = try Child.worker("commit-loop", file: dir.file(), ["--count", "0", "--id", "7"])
    var acknowledged = 0
    while acknowledged < commits {
      acknowledged = Int(try writer.line(startingWith: "committed").split(separator: " ")[2]) ?? 0
    }
    writer.kill()
    // Lines still in the pipe were acknowledged before the kill too.
    for line in writer.remainingLines(timeout: 5) where line.hasPrefix("committed") {
      acknowledged = max(acknowledged, Int(line.split(separator: " ")[2]) ?? 0)
    }
    // The next writer proceeds at once: the kernel released the dead writer's lock.
    let path = dir.file()
    let result = Mutex<Result<Int, Error>?>(nil)
    #expect(
      finishes(within: 60) {
        result.withLock {
          $0 = Result {
            let store = try Store.open(path: path)
            let counter = try store.read { try $0.get(bytes("counter-7"), in: "loop") }
            try store.write { try $0.put(bytes("after"), forKey: bytes("survivor"), in: "loop") }
            guard store.verify().isOK else { return -1 }
            return Int(String(decoding: counter ?? [], as: UTF8.self)) ?? 0
          }
        }
      })
    let stored = try #require(try result.withLock { $0 }?.get())
    // Every acknowledged commit is there; at most the one in flight beyond it.
    #expect(stored >= acknowledged)
    #expect(stored <= acknowledged + 1)
  }

  /// Listeners hear of a commit in the order they were added, whatever their number.
  @Test func listenersHearOfACommitInTheOrderTheyWereAdded() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    try store.write { try $0.createKeyspace("kv") }
    let calls = Mutex<[Int]>([])
    let all = DispatchSemaphore(value: 0)
    let tokens = (0..<40).map { i in
      store.addChangeListener { _, _ in
        if calls.withLock({
          $0.append(i); return $0.count
        }) == 40 {
          all.signal()
        }
      }
    }
    try store.write { try $0.put(bytes("v"), forKey: bytes("k"), in: "kv") }
    #expect(all.wait(timeout: .now() + 30) == .success)
    #expect(calls.withLock { $0 } == Array(0..<40))
    for token in tokens { token.invalidate() }
    store.close()
  }

  /// A writer that dies after writing its meta record but before publishing it leaves the
  /// file newer than the session's published version: the next writer of the session reads
  /// the newest meta from the file and builds on it, instead of on the published (older) one.
  @Test func aMetaWrittenButNotPublishedIsFoundByTheNextWriter() throws {
    let dir = TemporaryDirectory()
    let first = try Store.open(path: dir.file())
    let second = try Store.open(path: dir.file())  // another participant of the same session
    try first.write { txn in
      try txn.createKeyspace("kv")
      try txn.put(bytes("1"), forKey: bytes("a"), in: "kv")
    }
    let published = first.coordinator.latest()
    try first.write { try $0.put(bytes("2"), forKey: bytes("b"), in: "kv") }
    // The state a writer killed between its meta write and its publish leaves behind (the
    // head, the newest commit written, stays: its batch's sync is what it waited for).
    first.coordinator.publish(published)
    #expect(second.latestVersion == published.version)
    try second.write { try $0.put(bytes("3"), forKey: bytes("c"), in: "kv") }
    #expect(second.latestVersion == published.version + 2)
    for store in [first, second] {
      try store.read { txn throws in
        for (key, value) in [("a", "1"), ("b", "2"), ("c", "3")] {
          #expect(try txn.get(bytes(key), in: "kv") == bytes(value))
        }
      }
    }
    #expect(second.verify().isOK)
    first.close()
    second.close()
  }

  /// The offset of a published-meta slot: the current one, or the other.
  static func slotOffset(_ lock: PosixFile, current: Bool) throws -> UInt64 {
    let index = try lock.read(count: 8, at: UInt64(SharedCoordinator.offsetCurrentSlot)).withUnsafeBytes {
      $0.loadUnaligned(as: UInt64.self)
    }
    let slot = current ? index & 1 : 1 - (index & 1)
    return UInt64(SharedCoordinator.offsetSeqlock) + slot * UInt64(SharedCoordinator.slotSize)
  }

  /// A published-meta slot left as a publish cut short leaves it: an odd seqlock over
  /// half-written words. In the slot that is not current, that is what a publisher stopped or
  /// killed halfway leaves; in the current one, a damaged lock file (readers repair it).
  static func leaveAPublishCutShort(lockPath: String, inCurrentSlot: Bool = true) throws {
    let lock = try PosixFile(path: lockPath, create: false, readOnly: false)
    let offset = try slotOffset(lock, current: inCurrentSlot)
    let sequence = try lock.read(count: 8, at: offset).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    try lock.write(withUnsafeBytes(of: sequence | 1) { Array($0) }, at: offset)
    try lock.write([UInt8](repeating: 0xAB, count: SharedCoordinator.metaWords * 8), at: offset + 16)
  }

  /// `times` commits that each rewrite key [0] of keyspace "kv": with nothing pinned, each
  /// commit's blocks are reused two commits later.
  static func rewriteOneKey(_ store: Store, times: Int) throws {
    for i in 0..<times {
      try store.write {
        try $0.ensureKeyspace("kv")
        try $0.put([UInt8(i)], forKey: [0], in: "kv")
      }
    }
  }

  /// `store.latestVersion`, read on a thread of its own; nil if it takes over 60 seconds (a
  /// reader that would wait for ever fails the test instead of hanging it).
  static func latestVersion(of store: Store) -> UInt64? {
    let seen = Mutex<UInt64?>(nil)
    guard finishes(within: 60, { seen.withLock { $0 = store.latestVersion } }) else { return nil }
    return seen.withLock { $0 }
  }

  /// The seqlock of the current published-meta slot.
  static func lockSequence(_ lockPath: String) throws -> UInt64 {
    let lock = try PosixFile(path: lockPath, create: false, readOnly: false)
    return try lock.read(count: 8, at: try slotOffset(lock, current: true)).withUnsafeBytes {
      $0.loadUnaligned(as: UInt64.self)
    }
  }

  /// A publisher stopped halfway (SIGSTOP, a debugger, a frozen cgroup) while it holds the
  /// writer lock: readers and new openers go on with the last whole publish instead of waiting
  /// for it (with one slot, they slept until the publisher ran again).
  @Test func aPublisherStoppedHalfwayNeverHoldsUpReaders() throws {
    let dir = TemporaryDirectory()
    let writer = try Store.open(path: dir.file())
    try Self.rewriteOneKey(writer, times: 5)
    let newest = writer.latestVersion
    let stalled = try writer.beginWrite()  // holds the writer lock, as the stopped process does
    try Self.leaveAPublishCutShort(lockPath: dir.file() + ".lock", inCurrentSlot: false)
    let seen = Mutex<UInt64?>(nil)
    let path = dir.file()
    #expect(
      finishes(within: 10) {
        let reader = try? Store.open(path: path)
        seen.withLock { $0 = reader?.latestVersion }
      })
    #expect(seen.withLock { $0 } == newest)
    stalled.abort()
    try writer.write { try $0.put([1], forKey: [1], in: "kv") }
    #expect(writer.latestVersion == newest + 1)
    #expect(writer.verify().isOK)
  }

  /// A publisher killed mid-publish leaves the seqlock odd. With the writer lock free, the
  /// next reader publishes the file's newest commit again (before, every reader fell back to
  /// walking the file on each call and the seqlock stayed broken until the next commit; with
  /// writers busy, that walk chased them for ever, which hung a CI stress run). Thirty
  /// one-key commits: the commits between the newest anchor and the newest have had their
  /// blocks reused, so only the newest may be verified (checking each one published the
  /// anchor instead, a version that went backwards).
  @Test func aPublishCutShortByADeadProcessIsRepairedByTheNextReader() throws {
    let dir = TemporaryDirectory()
    let writer = try Store.open(path: dir.file())
    let reader = try Store.open(path: dir.file())  // another participant of the same session
    try Self.rewriteOneKey(writer, times: 30)
    let newest = writer.latestVersion
    try Self.leaveAPublishCutShort(lockPath: dir.file() + ".lock")
    #expect(Self.latestVersion(of: reader) == newest)
    #expect(try Self.lockSequence(dir.file() + ".lock") % 2 == 0)
    try writer.write { try $0.put([99], forKey: [99], in: "kv") }
    #expect(reader.latestVersion == newest + 1)
    #expect(reader.verify().isOK)
  }

  /// The same, found by a writer: its `beginWrite` holds the writer lock, so it repairs on
  /// its own thread and commits on top of the newest commit.
  @Test func aPublishCutShortByADeadProcessIsRepairedByTheNextWriter() throws {
    let dir = TemporaryDirectory()
    let first = try Store.open(path: dir.file())
    let second = try Store.open(path: dir.file())
    try Self.rewriteOneKey(first, times: 30)
    let newest = first.latestVersion
    try Self.leaveAPublishCutShort(lockPath: dir.file() + ".lock")
    #expect(finishes(within: 60) { _ = try? second.write { try $0.put([7], forKey: [7], in: "kv") } })
    #expect(first.latestVersion == newest + 1)
    #expect(try first.read { try $0.get([7], in: "kv") } == [7])
    #expect(first.verify().isOK)
  }

  /// A store opened read-only cannot take the writer lock: it finds the newest commit in the
  /// file and writes nothing (the seqlock stays as the dead publisher left it, for the next
  /// writer to repair).
  @Test func aReadOnlyStoreReadsTheFileAfterAPublishCutShortAndWritesNothing() throws {
    let dir = TemporaryDirectory()
    let writer = try Store.open(path: dir.file())
    try Self.rewriteOneKey(writer, times: 30)
    let newest = writer.latestVersion
    let reader = try Store.open(path: dir.file(), options: StoreOptions(readOnly: true))
    try Self.leaveAPublishCutShort(lockPath: dir.file() + ".lock")
    #expect(Self.latestVersion(of: reader) == newest)
    #expect(try Self.lockSequence(dir.file() + ".lock") % 2 == 1)
    try writer.write { try $0.put([99], forKey: [0], in: "kv") }
    #expect(reader.latestVersion == newest + 1)
    #expect(try reader.read { try $0.get([0], in: "kv") } == [99])
  }

  /// A store whose file a compaction replaced (it closed itself then, but a caller still
  /// holds it) shares the lock file with the session of the new file. Finding a publish cut
  /// short there, it keeps its own last version and publishes nothing: its file's commits
  /// mean nothing in the new file. A reader of the new file repairs from the new file.
  @Test func aStoreWhoseFileWasReplacedKeepsItsLastVersionOnAPublishCutShort() throws {
    let dir = TemporaryDirectory()
    let old = try Store.open(path: dir.file())
    try Self.rewriteOneKey(old, times: 30)
    let oldNewest = old.latestVersion
    #expect(try old.compactIfAlone { _, _ in true })
    let current = try Store.open(path: dir.file())
    for i in 0..<5 { try current.write { try $0.put([UInt8(i)], forKey: [42], in: "kv") } }
    let newest = current.latestVersion
    try Self.leaveAPublishCutShort(lockPath: dir.file() + ".lock")
    #expect(Self.latestVersion(of: old) == oldNewest)
    #expect(Self.latestVersion(of: current) == newest)
    #expect(try current.read { try $0.get([42], in: "kv") } == [4])
    try current.write { try $0.put([5], forKey: [42], in: "kv") }
    #expect(current.latestVersion == newest + 1)
    #expect(current.verify().isOK)
  }

  /// An unfinished publish while a live writer holds the writer lock is that writer's, in
  /// progress: a reader waits for it rather than reading the file, and sees its version.
  @Test func aReaderWaitsForAPublishInProgress() throws {
    let dir = TemporaryDirectory()
    let writer = try Store.open(path: dir.file())
    let reader = try Store.open(path: dir.file())
    try writer.write { try $0.createKeyspace("kv") }
    let txn = try writer.beginWrite()
    try txn.put([1], forKey: [1], in: "kv")
    try Self.leaveAPublishCutShort(lockPath: dir.file() + ".lock")
    let seen = Mutex<UInt64>(0)
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      seen.withLock { $0 = reader.latestVersion }
      done.signal()
    }
    try txn.commit()
    #expect(done.wait(timeout: .now() + 60) == .success)
    #expect(seen.withLock { $0 } == writer.latestVersion)
    #expect(reader.verify().isOK)
  }

  @Test func aKilledReadersPinIsReclaimed() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    try store.write { try $0.createKeyspace("kv") }
    let holder = try Child.worker("hold", file: dir.file())
    let pinned = UInt64(try holder.line(startingWith: "pinned").split(separator: " ")[1]) ?? 0
    for i in 0..<5 { try store.write { try $0.put([UInt8(i)], forKey: [UInt8(i)], in: "kv") } }
    #expect(store.activeVersionCount == 2)
    #expect(store.pins().contains { $0.version == pinned && $0.pid == holder.process.processIdentifier })
    #expect(store.oldestPinnedVersion == pinned)
    holder.kill()
    // Reclaimed before the next commit.
    try store.write { try $0.put([9], forKey: [9], in: "kv") }
    #expect(store.activeVersionCount == 1)
    #expect(store.reclaimedProcessCount >= 1)
    #expect(store.pins().isEmpty)
    #expect(store.verify().isOK)
  }

  @Test func compactionInPlaceOnlyWhenAloneAndLaterOpenersSeeTheNewFile() throws {
    let dir = TemporaryDirectory()
    let path = dir.file()
    do {
      let store = try Store.open(path: path)
      try store.write { try $0.createKeyspace("kv") }
      for round in 0..<30 {
        try store.write { txn in
          for i in 0..<200 { try txn.put(Array(repeating: UInt8(round), count: 200), forKey: [UInt8(i)], in: "kv") }
        }
      }
    }
    let before = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
    // Another process has the file open: no compaction, and `shouldCompact` is not even asked.
    let holder = try Child.worker("hold", file: path)
    _ = try holder.line(startingWith: "pinned")
    var asked = false
    let shared = try Store.open(path: path)
    #expect(
      try shared.compactIfAlone { _, _ in
        asked = true; return true
      } == false)
    #expect(!asked)
    holder.kill()
    // Alone (the dead holder's session byte is released by the kernel): compacted in place.
    var sizes: (UInt64, UInt64) = (0, 0)
    #expect(
      try shared.compactIfAlone { size, used in
        sizes = (size, used); return true
      })
    #expect(sizes.0 == UInt64(before) && sizes.1 < sizes.0)
    let after = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
    #expect(after < before)
    // Later openers, in this process and in another, read the compacted file.
    let reopened = try Store.open(path: path)
    #expect(try reopened.read { try $0.count(in: "kv") } == 200)
    #expect(try reopened.read { try $0.get([7], in: "kv") } == Array(repeating: 29, count: 200))
    let writer = try Child.worker("put", file: path, ["--key", "zz", "--value", "after"])
    _ = try writer.line(startingWith: "committed")
    #expect(writer.wait() == 0)
    #expect(try reopened.read { try $0.get(Array("zz".utf8), in: "kv") } == Array("after".utf8))
    #expect(try reopened.read { try $0.count(in: "kv") } == 201)
    #expect(reopened.verify().isOK)
  }

  @Test func aDeadReadersPinIsReclaimedWhenAnotherStoreOpens() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    try store.write { try $0.createKeyspace("kv") }
    let holder = try Child.worker("hold", file: dir.file())
    _ = try holder.line(startingWith: "pinned")
    try store.write { try $0.put([1], forKey: [1], in: "kv") }
    #expect(store.activeVersionCount == 2)
    holder.kill()
    // No commit in between: opening a store is enough to clear the dead process's slots.
    let opened = try Store.open(path: dir.file())
    #expect(opened.reclaimedProcessCount == 1)
    #expect(store.pins().isEmpty)
    #expect(store.activeVersionCount == 1)
  }

  /// A process keeps the reader slots of released snapshots for its next ones (a pin is then
  /// two stores, no claim), but an emptied slot pins nothing: versions are freed for writers
  /// in this and other processes as soon as the last snapshot of them ends.
  @Test func releasedSnapshotsPinNothingThoughTheirSlotsAreKept() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    try store.write { try $0.createKeyspace("kv") }
    var snapshots: [ReadTransaction] = []
    for i in 0..<4 {
      snapshots.append(try store.beginRead())
      try store.write { try $0.put([UInt8(i)], forKey: [UInt8(i)], in: "kv") }
    }
    #expect(store.activeVersionCount == 5)
    #expect(Set(store.pins().map(\.version)) == Set(snapshots.map(\.version)))
    for snapshot in snapshots { snapshot.close() }
    #expect(store.pins().isEmpty)
    #expect(store.activeVersionCount == 1)
    #expect(store.oldestPinnedVersion == store.latestVersion)
    // Another process sees no pin either, and its commits reuse the freed space.
    let child = try Child.worker("put", file: dir.file(), ["--key", "from-child", "--value", "hello"])
    _ = try child.line(startingWith: "committed")
    #expect(child.wait() == 0)
    #expect(store.pins().isEmpty)
    // The kept slots serve the next snapshots, each pinning its own version again.
    let again = try store.beginRead()
    let same = try store.beginRead()
    #expect(store.pins().map(\.version) == [store.latestVersion])
    try store.write { try $0.put([9], forKey: [9], in: "kv") }
    let newer = try store.beginRead()
    #expect(store.pins().map(\.version) == [again.version, newer.version])
    for snapshot in [again, same, newer] { snapshot.close() }
    #expect(store.pins().isEmpty)
  }

  @Test func theVersionLimitErrorSaysWhoPinsTheOldestVersion() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file(), options: StoreOptions(maximumNumberOfActiveVersions: 2))
    try store.write { try $0.createKeyspace("kv") }
    let holder = try Child.worker("hold", file: dir.file())
    let pinned = try holder.line(startingWith: "pinned").split(separator: " ")[1]
    try store.write { try $0.put([1], forKey: [1], in: "kv") }
    let mine = try store.beginRead()
    try store.write { try $0.put([2], forKey: [2], in: "kv") }
    // Three versions in use now (the holder's, mine, the newest): over the limit of 2.
    do {
      _ = try store.beginWrite()
      Issue.record("beginWrite succeeded over the limit")
    } catch let error as StorageError {
      let message = error.description
      #expect(message.hasPrefix("Number of active versions (3) in the Realm exceeded the limit of 2"))
      #expect(message.contains("version \(pinned)"))
      #expect(message.contains("process \(holder.process.processIdentifier)"))
    }
    mine.close()
    holder.kill()
    try store.write { try $0.put([3], forKey: [3], in: "kv") }
  }

  @Test func fiftyProcessesOpenAndCloseTheSameFileAtOnce() throws {
    let dir = TemporaryDirectory()
    let children = try (0..<50).map { i in
      try Child.worker("open-close", file: dir.file(), ["--id", "\(i)", "--count", "3"])
    }
    var failures = 0
    for child in children {
      let done = (try? child.line(startingWith: "done")) != nil
      if !done || child.wait() != 0 { failures += 1 }
    }
    #expect(failures == 0)
    let store = try Store.open(path: dir.file())
    #expect(try store.read { try $0.count(in: "oc") } == 50)
    #expect(store.verify().isOK)
  }

  @Test func aShortStressRunWithKillsPasses() throws {
    let dir = TemporaryDirectory()
    let run = try Child(["run", "--processes", "5", "--seconds", "4", "--kill-every", "0.5", "--file", dir.file()])
    let json = try run.line(startingWith: "{", timeout: 120)
    #expect(run.wait() == 0, "\(json)")
    let fields = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
    #expect(fields["violations"] as? Int == 0)
    #expect(fields["lost"] as? Int == 0)
    #expect(fields["verify"] as? String == "ok")
    #expect((fields["kills"] as? Int ?? 0) >= 4)
    #expect((fields["commits"] as? Int ?? 0) > 0)
  }

  /// `shoal-stress churn` with several entries a commit: one commit per batch, and the report
  /// gives the time per entry as well as per commit; a batch of none is refused.
  @Test func churnCommitsSeveralEntriesAtOnce() throws {
    let dir = TemporaryDirectory()
    let churn = try Child([
      "churn", "--entries", "2000", "--commits", "6", "--every", "3", "--entries-per-commit", "5", "--file", dir.file(),
    ])
    let lines = churn.remainingLines()
    #expect(churn.wait() == 0)
    #expect(lines.first?.hasPrefix("loaded 2000 entries") == true, "\(lines)")
    #expect(lines.count == 3 && lines[1].hasPrefix("after 3 commits: ") && lines[2].hasPrefix("after 6 commits: "))
    #expect(lines.dropFirst().allSatisfy { $0.contains(" us/entry)") }, "\(lines)")
    let store = try Store.open(path: dir.file())
    #expect(store.latestVersion == 1 + 6)
    #expect(try store.read { try $0.count(in: "kv") } == 2000)
    // Bad input is a clear error.
    let zero = try Child(["churn", "--entries-per-commit", "0", "--file", dir.file() + "-none"])
    #expect(zero.wait() != 0)
  }

  /// A stress run that stops making progress fails rather than hanging its caller: past its
  /// deadline the watchdog names the phase the run was in, kills every worker and exits 2.
  @Test func theStressWatchdogFailsARunThatHangs() throws {
    let dir = TemporaryDirectory()
    let process = Process()
    process.executableURL = Child.executable
    process.arguments = [
      "run", "--processes", "2", "--seconds", "1", "--kill-every", "0", "--file", dir.file(), "--watchdog-grace", "2",
      "--stall-when-stopping",
    ]
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let overlord = process.processIdentifier
    // The workers inherit the pipe: it ends when they are gone too.
    let message = Mutex("")
    let finished = finishes(within: 60) {
      let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      message.withLock { $0 = text }
    }
    #expect(finished, "the run was still going 60 s after it began")
    guard finished else {
      kill(overlord, SIGKILL)
      return
    }
    process.waitUntilExit()
    #expect(process.terminationStatus == 2)
    let text = message.withLock { $0 }
    #expect(text.contains("not finished 3 s after it began (stopping the workers); failing"), "\(text)")
    // No worker of that run is left (the watchdog kills them; they also end with their parent).
    let workers = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { entry in
      guard Int32(entry) != nil, let cmdline = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else {
        return false
      }
      return String(decoding: cmdline, as: UTF8.self).contains("--parent\u{0}\(overlord)\u{0}")
    }
    #expect(workers == [])
  }

  @Test func aStaleLockFileIsReinitialisedAndAForeignOneIsRefused() throws {
    let dir = TemporaryDirectory()
    // Garbage from a previous boot: nobody holds it, so the first opener starts afresh.
    try Data(repeating: 0xAB, count: 100_000).write(to: URL(fileURLWithPath: dir.file() + ".lock"))
    do {
      let store = try Store.open(path: dir.file())
      try store.write { try $0.createKeyspace("kv") }
      #expect(store.activeVersionCount == 1)
    }
    // A live session whose lock file another build wrote: refused with a clear error.
    let holder = try Child.worker("hold", file: dir.file())
    _ = try holder.line(startingWith: "pinned")
    let lock = try PosixFile(path: dir.file() + ".lock", create: false, readOnly: false)
    try lock.write([0x58, 0x58, 0x58, 0x58, 0x58, 0x58, 0x58, 0x58], at: 0)
    #expect(
      throws: StorageError.incompatibleLockFile(
        path: dir.file() + ".lock", reason: "the lock file's magic bytes do not match")
    ) {
      try Store.open(path: dir.file())
    }
    holder.kill()
  }

  @Test func deletingTheLockFileWhileProcessesRunCorruptsNothing() throws {
    let dir = TemporaryDirectory()
    let writer = try Child.worker("commit-loop", file: dir.file(), ["--count", "0", "--id", "1"])
    _ = try writer.line(startingWith: "committed")
    try FileManager.default.removeItem(atPath: dir.file() + ".lock")
    // A new session on a new lock file. The old session's writer notices at its next write
    // that its lock file is gone and stops with an error instead of writing on unseen.
    let store = try Store.open(path: dir.file())
    for i in 0..<30 {
      try store.write { txn in
        try txn.ensureKeyspace("mine")
        try txn.put(textValue(i, length: 500), forKey: bytes("m\(i)"), in: "mine")
      }
    }
    var last = 0
    for line in writer.remainingLines(timeout: 30) where line.hasPrefix("committed") {
      last = max(last, Int(line.split(separator: " ")[2]) ?? 0)
    }
    #expect(writer.wait() != 0, "the orphaned writer must stop")
    let reopened = try Store.open(path: dir.file())
    let report = reopened.verify()
    #expect(report.isOK, "\(report.problems)")
    #expect(try reopened.read { try $0.count(in: "mine") } == 30)
    let counter = try reopened.read { try $0.get(bytes("counter-1"), in: "loop") }
    #expect((Int(String(decoding: counter ?? [], as: UTF8.self)) ?? 0) >= last)
  }

  @Test func anUnusableLockFileIsAClearErrorAndReadOnlyFallsBack() throws {
    let dir = TemporaryDirectory()
    do {
      let store = try Store.open(path: dir.file())
      try store.write { txn in
        try txn.createKeyspace("kv")
        try txn.put(bytes("v"), forKey: bytes("k"), in: "kv")
      }
    }
    // Something that is not a file where the lock file belongs.
    try FileManager.default.removeItem(atPath: dir.file() + ".lock")
    try FileManager.default.createDirectory(atPath: dir.file() + ".lock", withIntermediateDirectories: false)
    do {
      _ = try Store.open(path: dir.file())
      Issue.record("opened for writing without a lock file")
    } catch let error as StorageError {
      guard case .lockFileUnavailable(let path, _) = error else {
        Issue.record("expected lockFileUnavailable, got \(error)")
        return
      }
      #expect(path == dir.file() + ".lock")
      #expect(error.description.contains("Open read-only"))
    }
    // Read-only: a single-process view of the file.
    let reader = try Store.open(path: dir.file(), options: StoreOptions(readOnly: true))
    #expect(reader.lockFilePath == nil)
    #expect(try reader.read { try $0.get(bytes("k"), in: "kv") } == bytes("v"))
  }

  /// The lock file gives read and write access to the classes of users who may write the data
  /// file, and none to those who may only read it: whoever can open the lock file can lock its
  /// bytes, so a read-only user must not (they read the file alone).
  @Test func theLockFileIsOpenOnlyToThoseWhoMayWriteTheDataFile() throws {
    for (data, lock): (mode_t, mode_t) in [
      (0o640, 0o600), (0o660, 0o660), (0o644, 0o600), (0o666, 0o666), (0o600, 0o600),
    ] {
      let dir = TemporaryDirectory()
      _ = try PosixFile(path: dir.file(), create: true, readOnly: false)
      #expect(chmod(dir.file(), data) == 0)
      let store = try Store.open(path: dir.file())
      var info = stat()
      #expect(stat(dir.file() + ".lock", &info) == 0)
      #expect(info.st_mode & 0o777 == lock, "data file \(String(data, radix: 8))")
      _ = store
    }
  }

}
