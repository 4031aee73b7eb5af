import Testing

@testable import ShoalStorage

/// The node cache's open-addressing index against a `Dictionary` doing the same operations.
@Suite("Node cache index")
struct NodeIndexTests {
  struct Key: Hashable {
    let offset: UInt64
    let checksum: UInt64
  }

  @Test(arguments: [1, 2, 3])
  func behavesAsADictionaryThroughRandomInsertsAndRemovals(_ seed: UInt64) {
    var rng = SplitMix64(seed: seed)  // seeded: a failure can be replayed
    var index = NodeIndex<Int>()  // starts at 16 buckets: grows, wraps around and probes
    var model: [Key: Int] = [:]
    // Few distinct offsets (block-aligned, as in a file) and two checksums each, so keys are
    // inserted, found, removed and inserted again, and runs collide and wrap.
    for step in 0..<60_000 {
      let key = Key(
        offset: 4096 * UInt64.random(in: 1...(step < 30_000 ? 300 : 3_000), using: &rng),
        checksum: UInt64.random(in: 0...1, using: &rng) &* 0xDEAD_BEEF)
      switch Int.random(in: 0..<3, using: &rng) {
      case 0:
        if model[key] == nil {
          index.insert(key.offset, key.checksum, value: step, slot: step / 2)
          model[key] = step
        }
      case 1:
        let removed = index.remove(key.offset, key.checksum)
        let expected = model.removeValue(forKey: key)
        #expect(removed?.value == expected && removed?.slot == expected.map { $0 / 2 })
      default:
        let found = index.entry(key.offset, key.checksum)
        #expect(found?.value == model[key] && found?.slot == model[key].map { $0 / 2 })
      }
      #expect(index.count == model.count)
    }
    for (key, value) in model { #expect(index.entry(key.offset, key.checksum)?.value == value) }
    for key in Array(model.keys) {
      #expect(index.remove(key.offset, key.checksum)?.value == model.removeValue(forKey: key))
    }
    #expect(index.count == 0)
  }

  @Test func offsetZeroIsNeverHeld() {
    var index = NodeIndex<Int>()
    index.insert(0, 7, value: 1, slot: 1)
    #expect(index.entry(0, 7) == nil && index.count == 0 && index.remove(0, 7) == nil)
  }

  /// The clock's second chance: a reference sets the bit, the clock's look reports and clears
  /// it, and the bit travels with its entry when the table grows and when removals shift a run.
  @Test func theSecondChanceBitFollowsItsEntry() {
    var index = NodeIndex<Int>()
    for i in 1...200 {  // grows 4 times, with bits set
      index.insert(4096 * UInt64(i), 1, value: i, slot: i)
      if i % 2 == 0 { #expect(index.reference(4096 * UInt64(i), 1) == i) }
    }
    #expect(index.reference(4096 * 201, 1) == nil)
    for i in stride(from: 3, through: 200, by: 3) { _ = index.remove(4096 * UInt64(i), 1) }  // shifts runs
    for i in 1...200 where i % 3 != 0 {
      #expect(index.takeReference(4096 * UInt64(i), 1) == (i % 2 == 0))
      #expect(index.takeReference(4096 * UInt64(i), 1) == false)
    }
    #expect(index.takeReference(4096 * 3, 1) == nil)
  }
}

/// The node cache's clock over its byte budget: a node looked up since the hand last passed
/// survives, an unreferenced one is evicted first, and removal gives back its bytes.
@Suite("Node cache")
struct NodeCacheTests {
  func node(_ i: Int) -> NodeImage {
    let leaf = DirtyNode(leafKeys: [Array("key-\(i)".utf8)], values: [.inline([UInt8](repeating: 1, count: 100))])
    return NodeImage(encoded: leaf.encode(), of: leaf)
  }

  @Test func theClockEvictsTheUnreferencedNodeAndKeepsTheBudget() {
    let nodes = (0..<4).map(node)
    let size = nodes[0].byteCount + 8 * nodes[0].count + 96  // NodeCache's charge for one node
    let cache = NodeCache(capacity: 3 * size)
    let keys = (0..<4).map { NodeCache.Key(offset: 4096 * UInt64($0 + 1), checksum: UInt64($0) &* 77) }
    for i in 0..<3 { cache.insert(keys[i], nodes[i]) }
    #expect(cache.get(keys[0]) != nil)  // referenced: gets a second chance
    cache.insert(keys[3], nodes[3])  // full: the hand spares node 0 and evicts node 1
    #expect(cache.get(keys[0]) != nil && cache.get(keys[1]) == nil)
    #expect(cache.get(keys[2]) != nil && cache.get(keys[3]) != nil)
    #expect(cache.statistics.bytes == 3 * size && cache.statistics.entries == 3)
    #expect(cache.get(NodeCache.Key(offset: keys[2].offset, checksum: 1)) == nil)  // same place, other block

    cache.remove([keys[0], keys[2]])
    #expect(cache.statistics.bytes == size && cache.statistics.entries == 1)
    #expect(cache.get(keys[0]) == nil && cache.get(keys[3]) != nil)
    cache.insert(keys[1], nodes[1])  // into a freed slot, without evicting
    #expect(cache.get(keys[1]) != nil && cache.get(keys[3]) != nil && cache.statistics.entries == 2)
  }
}
