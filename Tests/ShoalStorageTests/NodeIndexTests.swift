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
    var index = NodeIndex()  // starts at 16 buckets: grows, wraps around and probes
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
          index.insert(key.offset, key.checksum, slot: step)
          model[key] = step
        }
      case 1:
        #expect(index.remove(key.offset, key.checksum) == model.removeValue(forKey: key))
      default:
        #expect(index.slot(key.offset, key.checksum) == model[key])
      }
      #expect(index.count == model.count)
    }
    for (key, slot) in model { #expect(index.slot(key.offset, key.checksum) == slot) }
    for key in Array(model.keys) { #expect(index.remove(key.offset, key.checksum) == model.removeValue(forKey: key)) }
    #expect(index.count == 0)
  }

  @Test func offsetZeroIsNeverHeld() {
    var index = NodeIndex()
    index.insert(0, 7, slot: 1)
    #expect(index.slot(0, 7) == nil && index.count == 0 && index.remove(0, 7) == nil)
  }
}
