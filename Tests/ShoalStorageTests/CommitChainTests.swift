import Foundation
import Synchronization
import Testing

@testable import ShoalStorage

/// Commit records chained through the runs: each commit writes its record where its
/// predecessor reserved room, every `anchorInterval`-th one also into a meta slot.
@Suite struct CommitChainTests {
  /// A store over `file` with keyspace "k" after `commits` commits, each setting "v" to its
  /// round number.
  func build(_ file: StorageFile, commits: Int, durability: Durability = .full) throws -> Store {
    let store = try Store(file: file, options: StoreOptions(durability: durability))
    try store.write { try $0.createKeyspace("k") }
    for round in 0..<commits { try store.write { try $0.put(bytes("\(round)"), forKey: bytes("v"), in: "k") } }
    return store
  }

  @Test func recordsChainFromTheAnchorsAndOpenFindsTheNewest() throws {
    let file = MemoryFile()
    let store = try build(file, commits: 20)
    let newest = store.latestMeta
    #expect(newest.version == 21 && newest.next != 0)
    // The slots hold the two newest anchors: 16, and 8 (version 0's slot was overwritten).
    let anchors = try CommitChain.anchors(in: file, seal: nil).map(\.version)
    #expect(anchors == [16, 8])
    // Walking the records from either anchor reaches version 21, each naming its predecessor.
    for anchor in try CommitChain.anchors(in: file, seal: nil) {
      var current = anchor
      while let next = CommitChain.successor(of: current, in: file, seal: nil) {
        #expect(next.version == current.version + 1 && next.previous == current.checksum(seal: nil))
        current = next
      }
      #expect(current == newest)
    }
    let reopened = try Store(file: MemoryFile(contents: file.contents))
    #expect(reopened.latestVersion == 21 && reopened.recoveredFromVersion == nil)
    #expect(try reopened.read { try $0.get(bytes("v"), in: "k") } == bytes("19"))
    #expect(reopened.verify().isOK)
  }

  /// Whole records at the newest commit's reserved place that do not follow it (left by a
  /// history a recovery rolled back) end the chain quietly; damaged ones do not.
  @Test func aWholeRecordThatDoesNotFollowEndsTheChainWithoutAnError() throws {
    let file = MemoryFile()
    let store = try build(file, commits: 5)
    let newest = store.latestMeta
    var other = newest
    other.version += 1
    other.previous = newest.checksum(seal: nil) ^ 1
    var image = file.contents
    let encoded = other.encode(seal: nil)
    image.replaceSubrange(Int(newest.next)..<(Int(newest.next) + encoded.count), with: encoded)
    let reopened = try Store(file: MemoryFile(contents: image))
    #expect(reopened.latestVersion == newest.version && reopened.recoveredFromVersion == nil)
    #expect(reopened.verify().isOK)
    image[Int(newest.next) + 40] ^= 1
    #expect(
      throws: StorageError.corrupt(
        path: "<memory>", offset: newest.next, reason: "the commit record of version \(newest.version + 1) is damaged")
    ) { try Store(file: MemoryFile(contents: image)) }
  }

  @Test func aDamagedNewerAnchorIsBridgedByTheOlderOnesChain() throws {
    let file = MemoryFile()
    let store = try build(file, commits: 20)
    let newerSlot = Int(store.latestMeta.anchorSlot)
    for damage in [20, 0] {  // a byte of the body, then of the magic
      var image = file.contents
      image[Int(FileLayout.metaOffset(slot: newerSlot)) + damage] ^= 0x10
      #expect(try CommitChain.anchors(in: MemoryFile(contents: image), seal: nil).map(\.version) == [8])
      // The records after anchor 8 are kept until the second anchor after them is durable,
      // so the chain from 8 still reaches the newest commit.
      let reopened = try Store(file: MemoryFile(contents: image))
      #expect(reopened.latestVersion == 21 && reopened.recoveredFromVersion == nil)
      #expect(try reopened.read { try $0.get(bytes("v"), in: "k") } == bytes("19"))
      #expect(reopened.verify().isOK)
      // Open rewrote anchor 16 from its record, so the next anchor (version 24) replaces
      // anchor 8 and never leaves the file without a whole slot.
      #expect(try CommitChain.anchors(in: reopened.file, seal: nil).map(\.version) == [16, 8])
      for round in 20..<24 { try reopened.write { try $0.put(bytes("\(round)"), forKey: bytes("v"), in: "k") } }
      #expect(try CommitChain.anchors(in: reopened.file, seal: nil).map(\.version) == [24, 16])
      #expect(reopened.verify().isOK)
    }
  }

  @Test func aCommitTornBeforeTheSessionIsNotTakenByALaterWriter() throws {
    let dir = TemporaryDirectory()
    let path = dir.file()
    let leaf: BlockPointer
    do {
      let store = try Store.open(path: path)
      try store.write { txn in
        try txn.createKeyspace("k")
        try txn.put(bytes("one"), forKey: bytes("v"), in: "k")
      }
      try store.write { try $0.put(bytes("two"), forKey: bytes("v"), in: "k") }
      leaf = try store.read { try $0.keyspace("k").entry.root }
      #expect(leaf.birth == 2)
      store.close()
    }
    // What a power loss may leave: version 2's record landed, one of its blocks did not.
    let handle = try #require(FileHandle(forUpdatingAtPath: path))
    try handle.seek(toOffset: leaf.offset)
    try handle.write(contentsOf: Data(repeating: 0, count: Int(leaf.storedLength)))
    try handle.close()
    let first = try Store.open(path: path)  // starts the session: recovers version 1
    #expect(first.latestVersion == 1 && first.recoveredFromVersion == 2)
    // A process joining the session, and its writer, find version 2's record on the chain;
    // its commit does not verify, so neither takes it.
    let second = try Store.open(path: path)
    #expect(second.latestVersion == 1)
    try second.write { try $0.put(bytes("three"), forKey: bytes("v"), in: "k") }
    #expect(second.latestVersion == 2)
    for store in [first, second] {
      #expect(try store.read { try $0.get(bytes("v"), in: "k") } == bytes("three"))
      #expect(store.verify().isOK)
    }
    first.close()
    second.close()
    let reopened = try Store.open(path: path)
    #expect(reopened.latestVersion == 2 && reopened.recoveredFromVersion == nil)
    #expect(try reopened.read { try $0.get(bytes("v"), in: "k") } == bytes("three"))
  }

  /// A process that opened long ago and published what it saw then (the race open now avoids
  /// by publishing only under the writer lock) must not make the next writer build on it: the
  /// records after that version may have been reused, but the newest anchor's chain is whole.
  @Test func aWriterStartsFromTheNewestAnchorWhenThePublishedVersionIsFarBehind() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    try store.write { try $0.createKeyspace("k") }
    let stale = store.coordinator.latest()
    for i in 0..<40 { try store.write { try $0.put(bytes("\(i)"), forKey: bytes("key\(i)"), in: "k") } }
    store.coordinator.publish(stale)
    try store.write { try $0.put(bytes("after"), forKey: bytes("after"), in: "k") }
    #expect(store.latestVersion == stale.version + 41)
    try store.read { txn throws in
      #expect(try txn.count(in: "k") == 41)
      for i in 0..<40 { #expect(try txn.get(bytes("key\(i)"), in: "k") == bytes("\(i)")) }
    }
    #expect(store.verify().isOK)
  }

  /// An anchor commit whose writer was killed after its record and before its meta slot: the
  /// next writer takes the commit over and writes the slot, so that the older anchor (whose
  /// records are then reused) is no longer the one recovery starts from.
  @Test func aWriterTakingOverAKilledAnchorCommitWritesItsSlot() throws {
    let dir = TemporaryDirectory()
    let first = try Store.open(path: dir.file())
    let second = try Store.open(path: dir.file())
    try first.write { try $0.createKeyspace("k") }
    while first.latestVersion < 23 { try first.write { try $0.put(bytes("x"), forKey: bytes("v"), in: "k") } }
    let before = first.latestMeta
    let slot = Int(1 - before.anchorSlot)
    let file = try PosixFile(path: dir.file(), create: false, readOnly: false)
    let oldSlot = try file.read(count: Meta.encodedSize, at: FileLayout.metaOffset(slot: slot))
    try first.write { try $0.put(bytes("24"), forKey: bytes("v"), in: "k") }
    #expect(first.latestVersion == 24 && Int(first.latestMeta.anchorSlot) == slot)
    // What the killed writer left: the record of 24, the slot as before, 23 the head and
    // published.
    try file.write(oldSlot, at: FileLayout.metaOffset(slot: slot))
    first.coordinator.setHead(before)
    first.coordinator.publish(before)
    try second.write { try $0.put(bytes("25"), forKey: bytes("v"), in: "k") }
    #expect(second.latestVersion == 25)
    #expect(try CommitChain.anchors(in: file, seal: nil).first?.version == 24)
    for round in 26..<60 { try second.write { try $0.put(bytes("\(round)"), forKey: bytes("v"), in: "k") } }
    first.close()
    second.close()
    let reopened = try Store.open(path: dir.file())
    #expect(reopened.latestVersion == 59 && reopened.recoveredFromVersion == nil)
    #expect(try reopened.read { try $0.get(bytes("v"), in: "k") } == bytes("59"))
    #expect(reopened.verify().isOK)
  }

  /// A real file whose syncs fail while `failSyncs` is set, as a disk that reports an I/O
  /// error on flush does.
  final class SyncFailingFile: StorageFile {
    let base: PosixFile
    let failing = Mutex(false)
    init(_ base: PosixFile) { self.base = base }
    var path: String { base.path }
    static func error(_ path: String) -> StorageError {
      .io(path: path, operation: "fdatasync", errno: EIO, message: "Input/output error")
    }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
      try base.read(into: buffer, at: offset)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws { try base.write(bytes, at: offset) }
    func sync() throws {
      if failing.withLock({ $0 }) { throw SyncFailingFile.error(path) }
      try base.sync()
    }
    func size() throws -> UInt64 { try base.size() }
    func truncate(to size: UInt64) throws { try base.truncate(to: size) }
  }

  /// A writer that finds a commit whose writer was killed before publishing it makes that
  /// commit durable before building on it. When that sync fails, `beginWrite` throws the
  /// error (nothing is built on a commit that may not be on the disk) and lets the writer lock
  /// go; the next writer takes the commit over.
  @Test func aFailedSyncWhileTakingOverACommitIsThrownByBeginWrite() throws {
    let dir = TemporaryDirectory()
    let first = try Store.open(path: dir.file())
    let posix = try PosixFile(path: dir.file(), create: false, readOnly: false)
    let failing = SyncFailingFile(posix)
    let second = try Store(file: failing, options: StoreOptions(), shared: SharedCoordinator(dataFile: posix))
    try first.write { try $0.createKeyspace("k") }
    let before = first.latestMeta
    try first.write { try $0.put(bytes("taken"), forKey: bytes("v"), in: "k") }
    // What the killed writer left: its record on disk, the version before it the head and
    // published.
    first.coordinator.setHead(before)
    first.coordinator.publish(before)
    failing.failing.withLock { $0 = true }
    #expect(throws: SyncFailingFile.error(dir.file())) { try second.beginWrite() }
    #expect(second.latestVersion == before.version)
    failing.failing.withLock { $0 = false }
    // The lock was let go: a writer of either store takes the commit over.
    try second.write { try $0.put(bytes("after"), forKey: bytes("w"), in: "k") }
    #expect(second.latestVersion == before.version + 2)
    for store in [first, second] {
      #expect(try store.read { try $0.get(bytes("v"), in: "k") } == bytes("taken"))
      #expect(try store.read { try $0.get(bytes("w"), in: "k") } == bytes("after"))
      #expect(store.verify().isOK)
    }
  }

  /// Creation interrupted before its header (written last) landed: open writes version 0 and
  /// builds on the record it wrote, so a torn first commit falls back to it.
  @Test func aFileWhoseCreationWasInterruptedRecoversItsFirstCommit() throws {
    let file = MemoryFile(contents: [UInt8](repeating: 0, count: Int(FileLayout.headerSize)))
    do {
      let store = try Store(file: file)
      try store.write { try $0.createKeyspace("k") }
    }
    // Commit 1 torn: its catalog never reached the disk.
    let meta = try Store(file: MemoryFile(contents: file.contents)).latestMeta
    var image = file.contents
    image[Int(meta.catalog.offset) + 2] ^= 0xFF
    let reopened = try Store(file: MemoryFile(contents: image))
    #expect(reopened.latestVersion == 0 && reopened.recoveredFromVersion == 1)
    #expect(reopened.verify().isOK)
  }

  /// Commits made without a sync (durability unsafe, or a writer killed before its sync) are
  /// in the page cache only; open makes them durable before anything is built on them.
  @Test func openSyncsTheCommitItFoundBeforeBuildingOnIt() throws {
    let file = FaultInjectingFile(crashAfterOperations: nil)
    let unsynced = try build(file, commits: 12, durability: .unsafe)
    let newest = unsynced.latestVersion
    let reopened = try Store(file: file)
    #expect(reopened.latestVersion == newest)
    // Every way the power loss may treat writes not yet synced: none of these are left.
    for seed in UInt64(0)..<8 {
      let image = try Store(file: MemoryFile(contents: file.crashImage(seed: seed)))
      #expect(image.latestVersion == newest, "seed \(seed)")
      #expect(try image.read { try $0.get(bytes("v"), in: "k") } == bytes("11"))
    }
  }

  @Test func aLargeCommitReservesNothingAndTheNextOneIsAnAnchor() throws {
    let file = MemoryFile()
    let store = try Store(file: file)
    try store.write { txn in
      var i = 0
      try txn.bulkLoad("k", tracksChanges: true) {
        defer { i += 1 }
        return i < 5000 ? (bytes(String(format: "key%06d", i)), textValue(i, length: 100)) : nil
      }
    }
    #expect(store.latestMeta.next == 0)
    let slot = store.latestMeta.anchorSlot
    try store.write { try $0.put(bytes("x"), forKey: bytes("key000001"), in: "k") }
    #expect(store.latestMeta.anchorSlot == 1 - slot && store.latestMeta.next != 0)
    #expect(try CommitChain.anchors(in: file, seal: nil).first == store.latestMeta)
    let reopened = try Store(file: MemoryFile(contents: file.contents))
    #expect(reopened.latestVersion == store.latestVersion)
    #expect(reopened.verify().isOK)
  }
}
