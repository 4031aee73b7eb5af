import Foundation
import Synchronization
import Testing

@testable import ShoalStorage

/// Group commit: a commit's sync comes after the writer lock is released, so writers share
/// syncs; recovery finds the newest whole commit of a batch; writers of other processes read
/// only the free-space changes made since they last committed.
@Suite struct GroupCommitTests {
  /// A file in memory whose syncs are counted and last until two more commits have been written
  /// meanwhile (the newest written version, `head`, has moved by two), or 200 ms have passed: a
  /// disk slow enough that the writers behind a sync prepare theirs while it runs.
  final class SlowSyncFile: StorageFile {
    let base = MemoryFile()
    let syncs = Atomic<Int>(0)
    /// The newest version written, once the store exists.
    let head = Mutex<(@Sendable () -> UInt64)?>(nil)
    let written = NSCondition()
    var path: String { base.path }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
      try base.read(into: buffer, at: offset)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
      try base.write(bytes, at: offset)
      written.broadcast()
    }
    func sync() throws {
      syncs.add(1, ordering: .relaxed)
      guard let head = head.withLock({ $0 }) else { return }
      let start = head()
      let deadline = Date().addingTimeInterval(0.2)
      written.lock()
      defer { written.unlock() }
      // The head moves just after a commit's last write: woken by the writes, or every ms.
      while head() < start + 2, Date() < deadline {
        _ = written.wait(until: min(deadline, Date().addingTimeInterval(0.001)))
      }
    }
    func size() throws -> UInt64 { try base.size() }
    func truncate(to size: UInt64) throws { try base.truncate(to: size) }
  }

  /// Four threads each make 20 durable commits while every sync lasts until two more commits
  /// are written: the writers behind a sync prepare their commits meanwhile, and the next sync
  /// makes them all durable, so there are fewer syncs than commits. Every commit is there
  /// afterwards.
  @Test func concurrentWritersShareSyncs() throws {
    let file = SlowSyncFile()
    let store = try Store(file: file)
    let coordinator = store.coordinator
    file.head.withLock { $0 = { coordinator.head()?.version ?? 0 } }
    try store.write { try $0.createKeyspace("k") }
    let before = file.syncs.load(ordering: .relaxed)
    let failures = Mutex<[String]>([])
    let done = DispatchGroup()
    for writer in 0..<4 {
      done.enter()
      Thread {
        defer { done.leave() }
        do {
          for i in 0..<20 { try store.write { try $0.put(bytes("\(i)"), forKey: bytes("w\(writer)-\(i)"), in: "k") } }
        } catch {
          failures.withLock { $0.append("\(error)") }
        }
      }.start()
    }
    done.wait()
    #expect(failures.withLock { $0 }.isEmpty)
    let syncs = file.syncs.load(ordering: .relaxed) - before
    #expect(syncs < 80 * 3 / 4, "80 commits took \(syncs) syncs")
    #expect(store.latestVersion == 81)
    #expect(try store.read { try $0.count(in: "k") } == 80)
    #expect(store.verify().isOK)
  }

  /// Commits written and not yet durable (durability `unsafe` here, so no sync at all): their
  /// records name the version durable when they began. A damaged block born in the middle of
  /// them makes every version that reaches it unusable, and open falls back to the newest
  /// version that does not: the one before the damaged commit.
  @Test func recoveryOpensTheNewestWholeVersionOfABatch() throws {
    let file = FaultInjectingFile(crashAfterOperations: nil)
    let store = try Store(file: file, options: StoreOptions(durability: .unsafe))
    try store.write { try $0.createKeyspace("k") }
    try store.write { try $0.put(bytes("two"), forKey: bytes("a"), in: "k") }
    var generator = SplitMix64(seed: 7)
    let blob = (0..<5000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    try store.write { try $0.put(blob, forKey: bytes("blob"), in: "k") }
    for i in 4...6 { try store.write { try $0.put(bytes("\(i)"), forKey: bytes("n\(i)"), in: "k") } }
    #expect(store.latestVersion == 6 && store.latestMeta.durable == 0)
    var image = try file.read(count: Int(try file.size()), at: 0)
    // The blob is stored as it is (random bytes do not compress): damage it where it lies.
    let needle = Array(blob[0..<64])
    guard
      let at = (0..<(image.count - 64)).first(where: { image[$0] == needle[0] && Array(image[$0..<$0 + 64]) == needle })
    else {
      Issue.record("the blob is not in the file")
      return
    }
    image[at + 100] ^= 0xFF
    let reopened = try Store(file: MemoryFile(path: "damaged", contents: image))
    #expect(reopened.latestVersion == 2)
    #expect(reopened.recoveredFromVersion == 6)
    #expect(try reopened.read { try $0.get(bytes("a"), in: "k") } == bytes("two"))
    #expect(reopened.verify().isOK)
  }

  /// The same batch undamaged opens at its newest version.
  @Test func recoveryOpensTheNewestVersionOfAWholeBatch() throws {
    let file = FaultInjectingFile(crashAfterOperations: nil)
    let store = try Store(file: file, options: StoreOptions(durability: .unsafe))
    try store.write { try $0.createKeyspace("k") }
    for i in 2...6 { try store.write { try $0.put(bytes("\(i)"), forKey: bytes("n\(i)"), in: "k") } }
    let image = try file.read(count: Int(try file.size()), at: 0)
    let reopened = try Store(file: MemoryFile(path: "whole", contents: image))
    #expect(reopened.latestVersion == 6 && reopened.recoveredFromVersion == nil)
    #expect(try reopened.read { try $0.count(in: "k") } == 5)
  }

  /// A writer of durability `unsafe` leaves space freed by commits that are not durable yet
  /// unused only while a process of durability `full` has the file open (its commits must
  /// survive a power loss); alone, it reuses space as soon as no reader pins it.
  @Test func unsafeWritersKeepThePowerLossRulesOnlyBesideAFullOne() throws {
    let dir = TemporaryDirectory()
    let unsafe = try Store.open(path: dir.file(), options: StoreOptions(durability: .unsafe))
    try unsafe.write { try $0.createKeyspace("k") }
    #expect(!unsafe.powerLossRules)
    do {
      let full = try Store.open(path: dir.file())
      #expect(unsafe.powerLossRules)
      for i in 0..<3 { try unsafe.write { try $0.put(bytes("\(i)"), forKey: bytes("v"), in: "k") } }
      let txn = try unsafe.beginWrite()
      #expect(txn.horizon <= unsafe.coordinator.durableVersion && txn.horizon < txn.baseVersion)
      txn.abort()
      withExtendedLifetime(full) {}
    }
    #expect(!unsafe.powerLossRules)
    let txn = try unsafe.beginWrite()
    #expect(txn.horizon == txn.baseVersion)
    txn.abort()
  }

  /// Two stores on one file, as two processes: each writer, finding the other's commits since
  /// its own, reads only the free-space deltas stored since then, and gets exactly the list a
  /// full load gives.
  @Test func aWriterReadsOnlyTheFreeSpaceChangesOfOtherProcesses() throws {
    let dir = TemporaryDirectory()
    let first = try Store.open(path: dir.file())
    let second = try Store.open(path: dir.file())
    // A reader pinned throughout keeps what each commit frees pending, each extent with its
    // own version: the list grows long and a commit's changes to it, stored as deltas, small.
    try first.write { txn in
      try txn.createKeyspace("k")
      for i in 0..<3000 {
        try txn.put([UInt8](repeating: UInt8(i % 251), count: 600), forKey: bytes("key\(i)"), in: "k")
      }
    }
    let pinned = try first.beginRead()
    defer { pinned.close() }
    var generator = SplitMix64(seed: 11)
    var incremental = 0
    for round in 0..<60 {
      let (writer, other) = round % 3 == 0 ? (second, first) : (first, second)
      try writer.write { txn in
        for _ in 0..<2 {
          let key = bytes("key\(generator.next() % 3000)")
          if generator.next() % 4 == 0 {
            _ = try txn.delete(key, in: "k")
          } else {
            try txn.put([UInt8](repeating: UInt8(round), count: Int(generator.next() % 3000)), forKey: key, in: "k")
          }
        }
      }
      // The other store's list, as of its own last commit, brought up to date.
      guard var extended = other.cachedFreeSpace else { continue }
      let meta = other.latestMeta
      let full = try other.loadFreeSpace(meta)
      guard try other.extendFreeSpace(&extended, to: meta) else { continue }
      incremental += 1
      #expect(extended.available.dictionary == full.available.dictionary)
      #expect(extended.pending.sorted { $0.offset < $1.offset } == full.pending.sorted { $0.offset < $1.offset })
      #expect(extended.fileEnd == full.fileEnd && extended.chain == full.chain)
    }
    #expect(incremental > 10)
    #expect(first.verify().isOK)
    first.close()
    second.close()
  }
}
