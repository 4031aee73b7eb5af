import Testing

@testable import Shoal

/// The row cache's open-addressing table: what it holds after growing, per class, and after
/// being cleared.
@Suite("Row cache") struct RowCacheTests {
  final class TableA {}
  final class TableB {}

  @Test func holdsRowsByClassAndKeyThroughGrowthAndClearing() {
    let (a, b) = (TableA(), TableB())
    let (idA, idB) = (ObjectIdentifier(a), ObjectIdentifier(b))
    var cache = RowCache()
    #expect(cache[idA, 0] == nil)
    // Keys 0 and UInt64.max - 1, and far more rows than the first table holds (it grows).
    let keys: [ObjectKey] = [0, 1, 2, UInt64.max - 1] + (3..<5_000).map { $0 &* 0x9E37_79B9 }
    for key in keys {
      cache.insert([.int(Int64(truncatingIfNeeded: key))], table: idA, key: key)
      cache.insert([.string("b\(key)")], table: idB, key: key)
    }
    #expect(cache.count == keys.count * 2)
    for key in keys {
      #expect(cache[idA, key] == [.int(Int64(truncatingIfNeeded: key))])
      #expect(cache[idB, key] == [.string("b\(key)")])
    }
    #expect(cache[idA, 12_345_678] == nil)
    // Replacing a row keeps one entry.
    cache.insert([.bool(true)], table: idA, key: 2)
    #expect(cache[idA, 2] == [.bool(true)])
    #expect(cache.count == keys.count * 2)
    cache.removeAll()
    #expect(cache.isEmpty)
    for key in keys.prefix(100) { #expect(cache[idA, key] == nil && cache[idB, key] == nil) }
    // Usable again after clearing.
    cache.insert([.null], table: idB, key: 7)
    #expect(cache[idB, 7] == [.null])
    #expect(cache[idA, 7] == nil)
    withExtendedLifetime((a, b)) {}
  }
}
