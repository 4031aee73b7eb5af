import Testing

@testable import ShoalStorage

@Suite struct CodecTests {
  @Test func xxh64MatchesPublishedVectors() {
    #expect(Checksum.xxh64([]) == 0xEF46_DB37_51D8_E999)
    #expect(Checksum.xxh64(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
    // Past the 32-byte stripe loop, with and without a seed: the values the reference
    // implementation (xxHash's XXH64, as python-xxhash gives it) computes.
    #expect(Checksum.xxh64(Array("Nobody inspects the spammish repetition".utf8)) == 0xFBCE_A83C_8A37_8BF1)
    let kibibyte = (0..<4).flatMap { _ in (0...255).map { UInt8($0) } }
    #expect(Checksum.xxh64(kibibyte) == 0x6F39_14F1_8FE4_DF57)
    #expect(Checksum.xxh64(Array(0..<100).map { UInt8($0) }, seed: 0x9E37_79B9_7F4A_7C15) == 0x3B97_D91E_BA03_E785)
    #expect(Checksum.xxh64([UInt8](repeating: 0x61, count: 33), seed: 1) == 0x367F_5144_4CB4_AEE7)
  }

  @Test func lz4RoundTripsAndFallsBackToRaw() throws {
    let text = Array(String(repeating: "a shoal of fish swims by; ", count: 200).utf8)
    let (codec, block, count) = BlockCodec.encode(text, granule: 128)
    #expect(codec == .lz4)
    #expect(block.count % 128 == 0 && block.count >= count && block.count < count + 128)
    #expect(block[count...].allSatisfy { $0 == 0 })
    let stored = Array(block[..<count])
    #expect(stored.count < text.count / 4)
    let back = stored.withUnsafeBytes { BlockCodec.decode($0, codec: .lz4, rawLength: text.count) }
    #expect(back == text)

    var rng = SplitMix64(seed: 42)
    let noise = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &rng) }
    let (noiseCodec, noiseBlock, noiseCount) = BlockCodec.encode(noise, granule: 128)
    #expect(noiseCodec == .raw && noiseCount == noise.count && Array(noiseBlock[..<noiseCount]) == noise)
    #expect(noiseBlock.count % 128 == 0 && noiseBlock[noiseCount...].allSatisfy { $0 == 0 })
  }

  @Test func damagedLZ4IsRejectedNotTrusted() {
    let text = Array(String(repeating: "compressible ", count: 300).utf8)
    let (_, block, count) = BlockCodec.encode(text, granule: 128)
    var stored = Array(block[..<count])
    stored[stored.count / 2] ^= 0xFF
    stored.removeLast(3)
    let back = stored.withUnsafeBytes { BlockCodec.decode($0, codec: .lz4, rawLength: text.count) }
    #expect(back == nil || back != text)
    // A wrong claimed length never decodes.
    let good = Array(block[..<count])
    #expect(good.withUnsafeBytes { BlockCodec.decode($0, codec: .lz4, rawLength: text.count + 1) } == nil)
  }

  /// Calls `check` with `trials` damaged copies of `bytes`: a byte changed, the end cut off,
  /// or a byte inserted.
  static func damage(_ bytes: [UInt8], trials: Int, rng: inout SplitMix64, _ check: ([UInt8]) -> Void) {
    for _ in 0..<trials {
      var bad = bytes
      switch rng.next() % 3 {
      case 0: bad[Int(rng.next() % UInt64(bad.count))] ^= UInt8(1 + rng.next() % 255)
      case 1: bad.removeLast(Int(1 + rng.next() % UInt64(bad.count)))
      default: bad.insert(UInt8(rng.next() % 256), at: Int(rng.next() % UInt64(bad.count)))
      }
      check(bad)
    }
  }

  /// Nodes are stored packed (varint entry lengths for the offset table) under LZ4; packing
  /// round-trips exactly, anything else falls back to plain LZ4, and damaged packed bytes
  /// never decode into a node of the wrong length or crash.
  @Test func packedNodesRoundTripAndRejectDamage() throws {
    var rng = SplitMix64(seed: 7)
    let words = ["shoal", "fish", "reef", "tide", "kelp"]
    let keys = (0..<120).map { i in Array("key-\(1000 + i)".utf8) }
    let values: [LeafValue] = keys.indices.map { i in
      let text = (0..<(i % 40)).map { _ in words[Int(rng.next() % 5)] }.joined(separator: " ")
      // Some entries longer than 127 bytes, so their lengths take two varint bytes.
      return .inline(Array(text.utf8) + (i % 7 == 0 ? [UInt8](repeating: 9, count: 200) : []))
    }
    let leaf = DirtyNode(leafKeys: keys, values: values).encode()
    let packed = try #require(BlockCodec.packNode(leaf))
    #expect(packed.count < leaf.count - 2 * keys.count)
    #expect(packed.withUnsafeBytes { BlockCodec.unpackNode($0, rawLength: leaf.count) } == leaf)

    let (codec, block, count) = BlockCodec.encode(leaf, granule: 128, isNode: true)
    #expect(codec == .lz4Node)
    let back = block.withUnsafeBytes {
      BlockCodec.decode(UnsafeRawBufferPointer(rebasing: $0[..<count]), codec: .lz4Node, rawLength: leaf.count)
    }
    #expect(back == leaf)
    var reason = ""
    #expect(NodeImage(bytes: try #require(back), reason: &reason)?.count == keys.count)

    // Not a node: plain LZ4.
    let text = Array(String(repeating: "no offset table here ", count: 40).utf8)
    #expect(BlockCodec.packNode(text) == nil)
    #expect(BlockCodec.encode(text, granule: 128, isNode: true).codec == .lz4)

    // Damage: every single-byte change and truncation either fails or yields exactly the
    // claimed length (which the node's own validation then checks).
    Self.damage(packed, trials: 2_000, rng: &rng) { bad in
      let result = bad.withUnsafeBytes { BlockCodec.unpackNode($0, rawLength: leaf.count) }
      #expect(result == nil || result?.count == leaf.count)
    }
    #expect([UInt8]().withUnsafeBytes { BlockCodec.unpackNode($0, rawLength: 64) } == nil)
  }

  /// Branches are stored compact (`.branch`: varint fields, no LZ4): smaller than LZ4 makes
  /// them, round-tripping exactly; a branch that does not fit the form goes to LZ4, and
  /// damaged compact bytes never decode into a node of the wrong length or crash.
  @Test func compactBranchesRoundTripAndRejectDamage() throws {
    var rng = SplitMix64(seed: 11)
    func randomKey() -> [UInt8] { (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
    let keys = [[UInt8]()] + (1..<120).map { _ in randomKey() }.sorted { $0.lexicographicallyPrecedes($1) }
    func child(_ i: Int, offset: UInt64) -> ChildSlot {
      .clean(
        BlockPointer(
          offset: offset, storedLength: UInt32(1_000 + rng.next() % 7_000),
          rawLength: UInt32(4_000 + rng.next() % 4_000),
          codec: i % 3 == 0 ? .raw : .lz4Node, checksum: rng.next(), birth: 1 + rng.next() % 100_000),
        1 + rng.next() % 5_000)
    }
    let children = keys.indices.map { i in child(i, offset: FileLayout.dataStart + UInt64(i) * 8 * FileLayout.granule) }
    let branch = DirtyNode(branchKeys: keys, children: children).encode()
    let packed = try #require(BlockCodec.packBranch(branch))
    #expect(packed.count < branch.count * 3 / 4)
    #expect(packed.withUnsafeBytes { BlockCodec.unpackBranch($0, rawLength: branch.count) } == branch)

    let (codec, block, count) = BlockCodec.encode(branch, granule: 128, isNode: true)
    #expect(codec == .branch)
    #expect(count == packed.count)
    let back = block.withUnsafeBytes {
      BlockCodec.decode(UnsafeRawBufferPointer(rebasing: $0[..<count]), codec: .branch, rawLength: branch.count)
    }
    #expect(back == branch)
    var reason = ""
    #expect(NodeImage(bytes: try #require(back), reason: &reason)?.count == keys.count)
    // LZ4 of the packed node, the codec branches had before, is larger.
    let lz4 = try #require(BlockCodec.packNode(branch)).withUnsafeBytes {
      BlockCodec.encode(Array($0), granule: 1).storedCount
    }
    #expect(packed.count < lz4)

    // A child offset that is not a granule multiple does not fit: LZ4 of the packed node.
    let odd = DirtyNode(branchKeys: keys, children: [child(0, offset: 12_345)] + children.dropFirst()).encode()
    #expect(BlockCodec.packBranch(odd) == nil)
    #expect(BlockCodec.encode(odd, granule: 128, isNode: true).codec == .lz4Node)
    // A leaf is never packed as a branch.
    let leaf = DirtyNode(leafKeys: [bytes("k")], values: [.inline(bytes("v"))]).encode()
    #expect(BlockCodec.packBranch(leaf) == nil)

    Self.damage(packed, trials: 3_000, rng: &rng) { bad in
      let result = bad.withUnsafeBytes { BlockCodec.unpackBranch($0, rawLength: branch.count) }
      #expect(result == nil || result?.count == branch.count)
      if let result { _ = NodeImage(bytes: result, reason: &reason) }
    }
    #expect([UInt8]().withUnsafeBytes { BlockCodec.unpackBranch($0, rawLength: 64) } == nil)
  }

  /// A tree's root branch of short keys is stored as it is encoded (`.raw`): every commit
  /// rewrites it, and every writer of another process reads it back, which a packed root made
  /// it unpack. The branches below the root stay packed (`.branch`), after a bulk load and
  /// after a one-key commit that rewrites the path to its leaf; the tree reads back whole.
  @Test func aRootBranchIsStoredRawAndTheBranchesBelowItPacked() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file(), options: StoreOptions(durability: .unsafe))
    defer { store.close() }
    // 16-byte keys with 100-byte values: about 60 to a leaf, over a hundred leaves to a
    // branch, so 40,000 of them make three levels.
    func key(_ i: Int) -> [UInt8] { Array(String(format: "key-%012d", i).utf8) }
    try store.write { txn in
      var i = 0
      try txn.bulkLoad("k", tracksChanges: false) {
        defer { i += 1 }
        return i < 40_000 ? (key(i), textValue(i, length: 100)) : nil
      }
    }
    func tree() throws -> (root: BlockPointer, children: [BlockPointer]) {
      let read = try store.beginRead()
      defer { read.close() }
      let root = try #require(try read.entry("k")).root
      var reason = ""
      let bytes = try store.blocks.read(root, limit: read.meta.fileEnd)
      let image = try #require(NodeImage(bytes: bytes, reason: &reason), "\(reason)")
      #expect(!image.isLeaf)
      return (root, (0..<image.count).map { image.child(at: $0).0 })
    }
    for round in 0..<2 {
      let (root, children) = try tree()
      #expect(root.codec == .raw, "round \(round)")
      #expect(children.count > 1)
      #expect(children.allSatisfy { $0.codec == .branch }, "round \(round): \(children.map(\.codec))")
      // A one-key commit rewrites the root and the branch above the key's leaf.
      try store.write { try $0.put(bytes("changed"), forKey: key(12_345), in: "k") }
    }
    let read = try store.beginRead()
    defer { read.close() }
    let k = try read.keyspace("k")
    #expect(k.count == 40_000)
    #expect(try k.get(key(12_345)) == bytes("changed"))
    #expect(try k.get(key(39_999)) == textValue(39_999, length: 100))

    // A root of long keys keeps its compressed form: raw, it would be many times larger.
    func branch(keyLength: Int) -> [UInt8] {
      let keys =
        [[UInt8]()]
        + (1..<40).map { i in Array(String(format: "%06d", i).utf8) + [UInt8](repeating: 7, count: keyLength - 6) }
      let children = keys.indices.map { i in
        ChildSlot.clean(
          BlockPointer(
            offset: FileLayout.dataStart + UInt64(i) * 8 * FileLayout.granule, storedLength: 3_000, rawLength: 8_000,
            codec: .lz4Node, checksum: UInt64(i) * 0x9E37_79B9, birth: UInt64(i) + 1),
          60)
      }
      return DirtyNode(branchKeys: keys, children: children).encode()
    }
    #expect(BlockCodec.encode(branch(keyLength: 16), granule: 256, isNode: true, unpacked: true).codec == .raw)
    // The threshold: 39 keys of 30 bytes and the empty first key average 29; of 40 bytes, 39.
    #expect(BlockCodec.encode(branch(keyLength: 30), granule: 256, isNode: true, unpacked: true).codec == .raw)
    #expect(BlockCodec.encode(branch(keyLength: 40), granule: 256, isNode: true, unpacked: true).codec == .branch)
    #expect(BlockCodec.encode(branch(keyLength: 16), granule: 256, isNode: true).codec == .branch)
    #expect(BlockCodec.encode(branch(keyLength: 500), granule: 256, isNode: true, unpacked: true).codec == .lz4Node)
  }

  @Test func changeRecordRoundTrips() {
    let record = ChangeRecord(
      version: 77,
      keyspaces: [
        KeyspaceChanges(
          keyspace: "people", created: true, cleared: false, dropped: false,
          changes: [
            KeyChange(kind: .insert, key: [1, 2, 3], payload: [0xFF]),
            KeyChange(kind: .update, key: [1, 2, 4], payload: []),
            KeyChange(kind: .delete, key: [9], payload: [1, 2]),
          ])
      ])
    #expect(ChangeRecord.decode(record.encode()) == record)
    #expect(ChangeRecord.decode(Array(record.encode().dropLast())) == nil)
  }

  @Test func freeSpaceCoalescesAndRoundTrips() {
    let start = FileLayout.dataStart
    let g = FileLayout.granule
    var space = FreeSpace(fileEnd: start + 1000 * g)
    space.free(offset: start, length: 2 * g, version: 5)
    space.free(offset: start + 2 * g, length: 4 * g, version: 6)
    space.free(offset: start + 10 * g, length: g, version: 9)
    space.promote(horizon: 6)
    #expect(space.available.dictionary == [start: 6 * g])
    #expect(space.pending.count == 1)
    let a = space.allocateRun(3 * g, alignment: g)
    #expect(a == start)
    #expect(space.available.dictionary == [start + 3 * g: 3 * g])
    let decoded = FreeSpace.decode(space.encode())
    #expect(decoded?.allExtents == space.allExtents)
    #expect(decoded?.fileEnd == space.fileEnd)
    // Space at the end is handed back.
    var tail = FreeSpace(fileEnd: start + 4 * g)
    tail.free(offset: start + 2 * g, length: 2 * g, version: 1)
    tail.promote(horizon: 1)
    #expect(tail.fileEnd == start + 2 * g)
  }

  /// A commit's run starts on a page boundary inside free space when one fits, else in any
  /// extent that fits, else at the end of the file (unaligned: appended files stay dense).
  @Test func runsPreferPageAlignedWindows() {
    let page: UInt64 = 4096
    let g = FileLayout.granule
    let base = 16 * page
    var space = FreeSpace(fileEnd: base + 8 * page + g)
    // One extent that straddles a page boundary, and one that holds a whole aligned page.
    space.free(offset: base + page - 2 * g, length: 4 * g, version: 1)
    space.free(offset: base + 3 * page + g, length: 2 * page, version: 1)
    space.promote(horizon: 1)
    let aligned = space.allocateRun(page, alignment: page)
    #expect(aligned == base + 4 * page)
    #expect(space.available[base + 3 * page + g] == page - g)
    #expect(space.available[base + 5 * page] == g)
    // No aligned window of two granules is left except in the straddling extent's second half.
    let small = space.allocateRun(2 * g, alignment: page)
    #expect(small == base + page)
    // Nothing fits a page now: the file grows.
    let end = space.allocateRun(page, alignment: page)
    #expect(end == base + 8 * page + g)
    #expect(space.fileEnd == base + 9 * page + g)
    #expect(FreeSpace.decode(space.encode())?.allExtents == space.allExtents)
  }
}
