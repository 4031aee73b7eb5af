import Testing

@testable import ShoalStorage

/// Free space is reused only when no pinned version can reach it, so the file stays bounded
/// under churn, grows while a reader holds an old version, and stops growing once it lets go.
@Suite struct SpaceTests {
  static let keys = 300

  func update(_ store: Store, round: Int) throws {
    try store.write { txn in
      let i = round % SpaceTests.keys
      try txn.put(textValue(round, length: 100), forKey: bytes(String(format: "key%04d", i)), in: "k")
    }
  }

  func seed(_ store: Store) throws {
    try store.write { txn in
      try txn.createKeyspace("k")
      for i in 0..<SpaceTests.keys {
        try txn.put(textValue(i, length: 100), forKey: bytes(String(format: "key%04d", i)), in: "k")
      }
    }
  }

  /// The free space's offset map (open addressing, deletion by shifting probe chains back)
  /// holds what a `Dictionary` holds through random inserts, updates and removals, growth
  /// included, with keys that collide in its table.
  @Test func theOffsetMapAgreesWithADictionary() {
    var map = OffsetMap()
    var reference: [UInt64: UInt64] = [:]
    var rng = SplitMix64(seed: 42)
    for step in 0..<60_000 {
      // Few distinct keys early (many updates and removals), more later (growth).
      let range = UInt64(step < 20_000 ? 300 : 20_000)
      let key = FileLayout.dataStart + (rng.next() % range) * FileLayout.granule
      switch rng.next() % 3 {
      case 0, 1:
        let value = rng.next() | 1
        map[key] = value
        reference[key] = value
      default:
        map[key] = nil
        reference[key] = nil
      }
      if step % 997 == 0 {
        #expect(map.count == reference.count)
        for (k, v) in reference { #expect(map[k] == v) }
      }
    }
    var seen: [UInt64: UInt64] = [:]
    map.forEach { seen[$0] = $1 }
    #expect(seen == reference)
    for k in reference.keys { map[k] = nil }
    #expect(map.count == 0)
    #expect(map[FileLayout.dataStart] == nil)
  }

  @Test func tenThousandUpdateCommitsKeepTheFileBounded() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file(), options: StoreOptions(durability: .unsafe))
    try seed(store)
    var peak: UInt64 = 0
    for round in 0..<10_000 {
      // A short-lived reader around every commit.
      let reader = try store.beginRead()
      try update(store, round: round)
      _ = try reader.get(bytes("key0001"), in: "k")
      reader.close()
      if round % 500 == 0 { peak = max(peak, fileSize(dir.file())) }
    }
    peak = max(peak, fileSize(dir.file()))
    let info = store.info()
    // Stated bound: the data area never exceeds 4 times the live bytes, plus the fixed 12 KiB
    // of header and meta slots, plus 4 KiB per commit record kept for recovery (up to twice
    // the anchor interval of them; each splits the free run it was written in, and a small
    // file's runs are about that size).
    let bound = FileLayout.dataStart + 4 * info.liveBytes + 2 * FileLayout.anchorInterval * 4096
    #expect(peak <= bound, "peak file size \(peak) exceeds \(bound) (live \(info.liveBytes))")
    #expect(store.verify().isOK)
    #expect(store.latestVersion == 10_001)
  }

  /// Most commits store only their changes to the free list, on top of the stored chain; the
  /// chain replays to exactly the writer's extents, and is rewritten whole now and then.
  @Test func theFreeListIsStoredAsDeltasThatReplayExactly() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file(), options: StoreOptions(durability: .unsafe))
    try seed(store)
    var longest = 0
    var restarts = 0
    var shrinks = 0
    var previousEnd: UInt64 = 0
    var reader: ReadTransaction?
    for round in 0..<1_500 {
      // Readers pinned across 40 commits at a time: extents wait, then are promoted in bulk.
      if round % 40 == 0 {
        reader?.close()
        reader = try store.beginRead()
      }
      try update(store, round: round * 7)
      // Large values come and go: the file grows, and shrinks when space at its end is freed.
      if round % 50 == 10 {
        try store.write { try $0.put(textValue(round, length: 200_000), forKey: bytes("large"), in: "k") }
      } else if round % 50 == 12 {
        try store.write { _ = try $0.delete(bytes("large"), in: "k") }
      }
      let stored = try store.loadFreeSpace(store.latestMeta)
      let cached = try #require(store.cachedFreeSpace)
      #expect(stored.allExtents == cached.allExtents)
      #expect(stored.fileEnd == cached.fileEnd)
      #expect(stored.chain == cached.chain)
      if stored.chain.count == 1, longest > 1 { restarts += 1 }
      if stored.fileEnd < previousEnd { shrinks += 1 }
      previousEnd = stored.fileEnd
      longest = max(longest, stored.chain.count)
    }
    reader?.close()
    #expect(longest > 2, "commits stored deltas")
    #expect(restarts > 0, "the full list is written again")
    #expect(shrinks > 0, "space at the end was handed back")
    #expect(store.verify().isOK)
    store.close()
    let reopened = try Store.open(path: dir.file())
    #expect(reopened.verify().isOK)
    for round in 0..<50 { try update(reopened, round: round) }
    #expect(reopened.verify().isOK)
  }

  /// A chain stops growing at `maximumChainLength` deltas, or once its deltas add up to
  /// `deltaBudgetFactor` times the full list (at least `deltaBudgetFloor`), whichever comes
  /// first.
  @Test func theDeltaChainIsBounded() {
    let g = FileLayout.granule
    let start = FileLayout.dataStart
    var space = FreeSpace(fileEnd: start + 100_000 * g)
    for i in 0..<5_000 { space.free(offset: start + UInt64(i) * 4 * g, length: g, version: 2) }
    #expect(!space.shouldStoreDelta, "nothing stored yet: the first list is full")
    func block(_ i: Int) -> BlockPointer {
      BlockPointer(
        offset: start + UInt64(i) * 4 * g + 2 * g, storedLength: UInt32(g), rawLength: UInt32(g), codec: .raw,
        checksum: 0, birth: 3)
    }
    space.stored(in: block(0), delta: false)
    var deltas = 0
    while space.shouldStoreDelta {
      space.free(offset: start + 99_000 * g + UInt64(deltas) * 2 * g, length: g, version: 4)
      space.stored(in: block(deltas + 1), delta: true)
      deltas += 1
    }
    #expect(deltas == FreeSpace.maximumChainLength)
    // A small list: its budget is reached first, within one delta of it. Deltas of three
    // granules each (stored in blocks that long), so that the budget, not the count, ends it.
    func bigBlock(_ i: Int) -> BlockPointer {
      BlockPointer(
        offset: start + 2_000 * g + UInt64(i) * 4 * g, storedLength: UInt32(3 * g), rawLength: UInt32(3 * g),
        codec: .raw, checksum: 0, birth: 3)
    }
    var small = FreeSpace(fileEnd: start + 10_000 * g)
    for i in 0..<60 { small.free(offset: start + UInt64(i) * 4 * g, length: g, version: 2) }
    small.stored(in: bigBlock(0), delta: false)
    var smallDeltas = 0
    while small.shouldStoreDelta {
      small.free(offset: start + 900 * g + UInt64(smallDeltas) * 2 * g, length: g, version: 4)
      small.stored(in: bigBlock(smallDeltas + 1), delta: true)
      smallDeltas += 1
    }
    // Four times a list of 60 extents is under the floor: the floor is the budget.
    #expect(FreeSpace.deltaBudgetFactor * UInt64(small.encodedSize) < FreeSpace.deltaBudgetFloor)
    let budget = small.deltaBudget
    #expect(budget == FreeSpace.deltaBudgetFloor)
    #expect(smallDeltas > 1 && smallDeltas < FreeSpace.maximumChainLength)
    // A delta is decided on its encoded size and stored in whole granules: one delta over, at most.
    #expect(small.chainDeltaBytes <= budget + 3 * g && small.chainDeltaBytes + 6 * g > budget)
  }

  @Test func aLongLivedReaderMakesTheFileGrowAndReleasingItLetsSpaceBeReused() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file(), options: StoreOptions(durability: .unsafe))
    try seed(store)
    for round in 0..<200 { try update(store, round: round) }
    let steady = fileSize(dir.file())

    let pinned = try store.beginRead()
    let pinnedValue = try pinned.get(bytes("key0007"), in: "k")
    for round in 200..<2200 { try update(store, round: round) }
    let grown = fileSize(dir.file())
    #expect(grown > steady * 3, "a pinned version must keep its blocks: \(steady) -> \(grown)")
    // The pinned snapshot still reads exactly its version.
    #expect(try pinned.get(bytes("key0007"), in: "k") == pinnedValue)
    #expect(store.activeVersionCount == 2)

    pinned.close()
    for round in 2200..<4200 { try update(store, round: round) }
    let after = fileSize(dir.file())
    #expect(after <= grown, "after the release the freed space is reused: \(grown) -> \(after)")
    // The allocated data area shrank back: the reader's old blocks were reused or returned.
    #expect(store.latestMeta.fileEnd < grown / 2, "data area \(store.latestMeta.fileEnd) of a \(grown)-byte file")
    #expect(store.verify().isOK)
  }
}

/// A file that counts, per sync, the separate stretches of the file written since the last
/// one: each costs the device a request of its own.
final class StretchCountingFile: StorageFile, @unchecked Sendable {  // Used by one test thread.
  let base = MemoryFile()
  var path: String { base.path }
  private var writes: [(UInt64, UInt64)] = []
  private(set) var stretchesPerSync: [Int] = []

  func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    try base.read(into: buffer, at: offset)
  }
  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
    writes.append((offset, offset + UInt64(bytes.count)))
    try base.write(bytes, at: offset)
  }
  func sync() throws {
    // Pages, as the kernel writes them back: touching or adjacent pages make one stretch.
    let pages = Set(writes.flatMap { (start, end) in (start / 4096)...((end - 1) / 4096) }).sorted()
    stretchesPerSync.append(zip(pages, pages.dropFirst()).filter { $1 != $0 + 1 }.count + (pages.isEmpty ? 0 : 1))
    writes = []
  }
  func size() throws -> UInt64 { try base.size() }
  func truncate(to size: UInt64) throws { try base.truncate(to: size) }
}

extension SpaceTests {
  /// Key `i` of `storeOfLongKeys`: 1,000 bytes, about eight to a node.
  static func longKey(_ i: Int) -> [UInt8] {
    Array(String(format: "%06d", i).utf8) + [UInt8](repeating: 7, count: 994)
  }

  /// A durable store on a `StretchCountingFile` whose keyspace `name` holds 2,000 long keys
  /// (`longKey`), bulk-loaded (four levels) in version 1, where `alsoInVersion1` runs too.
  static func storeOfLongKeys(
    in name: String, alsoInVersion1: (WriteTransaction) throws -> Void = { _ in }
  ) throws -> (StretchCountingFile, Store) {
    let file = StretchCountingFile()
    let store = try Store(file: file, options: StoreOptions(durability: .full))
    try store.write { txn in
      var i = 0
      try txn.bulkLoad(name, tracksChanges: true) {
        defer { i += 1 }
        return i < 2000 ? (longKey(i), textValue(i, length: 20)) : nil
      }
      try alsoInVersion1(txn)
    }
    return (file, store)
  }
}

extension SpaceTests {
  /// A one-key commit into a tree with two branch levels below its root writes the leaf, the
  /// lowest branch, and one run holding its commit record and everything rewritten every few
  /// commits (the root, the branches above the lowest level, the catalog, the history, the
  /// free list): three stretches, however the changed keys fall. An anchor also writes a meta
  /// slot, a fourth.
  @Test func aOneKeyCommitWritesThreeStretchesOfTheFile() throws {
    let (file, store) = try SpaceTests.storeOfLongKeys(in: "k")
    let key = SpaceTests.longKey
    #expect(store.info().branchNodes > 40)
    var rng = SplitMix64(seed: 3)
    let before = file.stretchesPerSync.count
    for round in 0..<60 {
      let i = Int.random(in: 0..<2000, using: &rng)
      try store.write { try $0.put(textValue(round, length: 20), forKey: key(i), in: "k") }
    }
    let stretches = Array(file.stretchesPerSync[before...])
    #expect(stretches.count == 60)
    // Round r commits version r + 2; version 2 is an anchor too (the bulk load reserved nothing).
    let anchors = stretches.indices.filter { ($0 + 2) % Int(FileLayout.anchorInterval) == 0 || $0 == 0 }
    let others = stretches.indices.filter { !anchors.contains($0) }
    #expect(others.allSatisfy { stretches[$0] <= 3 }, "stretches per commit: \(stretches)")
    #expect(anchors.allSatisfy { stretches[$0] <= 4 }, "stretches per commit: \(stretches)")
    #expect(store.verify().isOK)
  }
}

extension SpaceTests {
  /// Commits that alternate between two keyspaces, one whose root and upper branches are
  /// large (keys of 1,000 bytes) and one whose root is a small leaf, pack several times more
  /// bytes one time than the next: the run each commit reserves holds its successor's blocks
  /// either way, so the record is not a stretch of its own. With the run sized after the last
  /// commit alone, every commit after a small one wrote four stretches.
  @Test func runsHoldTheLargerOfAlternatingCommits() throws {
    let (file, store) = try SpaceTests.storeOfLongKeys(in: "large") { txn in
      try txn.createKeyspace("small")
      for k in 0..<5 { try txn.put(textValue(k, length: 20), forKey: [UInt8(k)], in: "small") }
    }
    let key = SpaceTests.longKey
    var rng = SplitMix64(seed: 5)
    let before = file.stretchesPerSync.count
    for round in 0..<60 {
      try store.write { txn in
        if round % 2 == 0 {
          try txn.put(textValue(round, length: 20), forKey: key(Int.random(in: 0..<2000, using: &rng)), in: "large")
        } else {
          try txn.put(textValue(round, length: 20), forKey: [UInt8(round % 5)], in: "small")
        }
      }
    }
    let stretches = Array(file.stretchesPerSync[before...])
    #expect(stretches.count == 60)
    let anchors = stretches.indices.filter { ($0 + 2) % Int(FileLayout.anchorInterval) == 0 || $0 == 0 }
    let largeOnes = stretches.indices.filter { !anchors.contains($0) && $0 % 2 == 0 }
    let smallOnes = stretches.indices.filter { !anchors.contains($0) && $0 % 2 == 1 }
    // A large commit: its leaf, its lowest branch, and the run; a small one: the run alone.
    #expect(largeOnes.allSatisfy { stretches[$0] <= 3 }, "stretches per commit: \(stretches)")
    #expect(smallOnes.allSatisfy { stretches[$0] <= 1 }, "stretches per commit: \(stretches)")
    #expect(store.verify().isOK)
  }
}

/// `FreeSpace.nextFreeListEstimate`, which sizes the run a commit reserves for its successor,
/// against the list the successor then stores, over the whole life of delta chains: commits that
/// free, reuse and promote the same number of extents each, the way a stream of one-key commits
/// does, until the chain is full and a commit stores the whole list again and frees the chain.
@Suite struct FreeListEstimateTests {
  @Test(arguments: [2, 6, 20])
  func theNextListFitsTheEstimateOfACommitLikeIt(_ extentsPerCommit: Int) {
    let g = FileLayout.granule
    let start = FileLayout.dataStart
    var space = FreeSpace(fileEnd: start + 4_000 * g)
    // A list of a few hundred extents, some reusable, some waiting for a version.
    for i in 0..<300 { space.free(offset: start + UInt64(i) * 8 * g, length: g * UInt64(1 + i % 3), version: 1) }
    space.promote(horizon: 1)
    var rng = SplitMix64(seed: UInt64(extentsPerCommit))
    var listBlock = BlockPointer.null
    func storeList(_ space: inout FreeSpace, version: UInt64) -> Int {
      let delta = space.shouldStoreDelta
      if !delta {
        for block in space.chain { space.free(offset: block.offset, length: block.extentLength, version: version) }
      }
      let size = delta ? space.deltaEncodedSize : space.encodedSize
      let reserve = FreeSpace.blockLength(size)
      let offset = space.allocate(reserve)
      listBlock = BlockPointer(
        offset: offset, storedLength: UInt32(reserve), rawLength: UInt32(reserve), codec: .raw, checksum: 0,
        birth: version)
      // What the block holds: the list as it is once its own block is allocated.
      let stored = delta ? space.deltaEncodedSize : space.encodedSize
      space.stored(in: listBlock, delta: delta)
      return stored
    }
    _ = storeList(&space, version: 1)
    var estimate: Int?
    var fullLists = 0
    var checked = 0
    for version in UInt64(2)...400 {
      // A commit as a lone writer makes it: it begins by making reusable what the version
      // before freed (the horizon, nothing older pinned, each commit durable), then reuses
      // space for its blocks and frees as many (pending until the next commit).
      space.promote(horizon: version - 1)
      for _ in 0..<extentsPerCommit {
        let length = g * (1 + rng.next() % 4)
        let offset = space.allocate(length)
        space.free(offset: offset, length: length, version: version)
      }
      let full = !space.shouldStoreDelta
      let next = space.nextFreeListEstimate(version: version, overhead: 0)
      let stored = storeList(&space, version: version)
      if let estimate {
        // The run holds the estimate and 256 bytes more, beside an eighth more than this
        // commit's blocks (`CommitWriter.reserveNext`); a delta varies with how the extents
        // merge, but a whole list where a delta was estimated would not fit.
        #expect(stored <= 2 * estimate + 256, "version \(version): stored \(stored) bytes, estimated \(estimate)")
        checked += 1
      }
      if full { fullLists += 1 }
      estimate = next
    }
    #expect(checked == 398 && fullLists > 2, "the chain filled up and the full list was stored again")
  }
}
