import Testing

@testable import ShoalStorage

/// A node image keeps its header word, key prefixes and bytes in one array: every accessor must
/// read the node it was made from, whatever the node's length (padded to a word or not) and kind.
@Suite("Node image")
struct NodeImageTests {
  @Test(arguments: [1, 2, 7, 8, 9, 64, 333])
  func aLeafReadsBackItsEntriesAndFindsEveryKey(_ count: Int) throws {
    var rng = SplitMix64(seed: UInt64(count))
    // Keys of 1 to 20 bytes, many sharing their first 8 bytes, so searches tie on the prefix.
    let keys = Set(
      (0..<count).map { i in
        Array("prefix-\(i % 3)".utf8.prefix(Int(1 + rng.next() % 20))) + [UInt8(truncatingIfNeeded: i), UInt8(i >> 8)]
      }
    ).sorted { $0.lexicographicallyPrecedes($1) }
    let values: [LeafValue] = keys.indices.map { i in .inline([UInt8](repeating: UInt8(i % 251), count: i % 11)) }
    let dirty = DirtyNode(leafKeys: keys, values: values)
    let encoded = dirty.encode()
    var reason = ""
    let read = try #require(NodeImage(bytes: encoded, reason: &reason), "\(reason)")
    for image in [read, NodeImage(encoded: encoded, of: dirty)] {
      #expect(image.isLeaf && image.count == keys.count && image.byteCount == encoded.count)
      #expect(image.bytes == encoded)
      #expect(image.prefixes == keys.map(keyPrefix))
      for (i, key) in keys.enumerated() {
        #expect(image.key(at: i) == key)
        let (at, found) = key.withUnsafeBytes { image.lowerBound($0) }
        #expect(at == i && found)
        let inline = image.withBytes { p -> [UInt8]? in
          if case .inline(let v) = image.value(p, i) { return Array(v) } else { return nil }
        }
        guard case .inline(let expected) = values[i] else { continue }
        #expect(inline == expected)
        // Just past the key: not found, and placed after it.
        let after = key + [0]
        #expect(after.withUnsafeBytes { image.lowerBound($0) } == (i + 1, i + 1 < keys.count && keys[i + 1] == after))
      }
    }
  }

  @Test func aBranchFindsTheChildOfEveryKey() throws {
    var rng = SplitMix64(seed: 5)
    let separators = (0..<50).map { _ in (0..<12).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
      .sorted { $0.lexicographicallyPrecedes($1) }
    let keys = [[UInt8]()] + separators
    let children: [ChildSlot] = keys.indices.map { i in
      .clean(
        BlockPointer(
          offset: FileLayout.dataStart + UInt64(i) * FileLayout.granule, storedLength: 100, rawLength: 200,
          codec: .raw, checksum: rng.next(), birth: 1),
        UInt64(i + 1))
    }
    let encoded = DirtyNode(branchKeys: keys, children: children).encode()
    var reason = ""
    let image = try #require(NodeImage(bytes: encoded, reason: &reason), "\(reason)")
    #expect(!image.isLeaf && image.count == keys.count && image.bytes == encoded)
    for (i, separator) in separators.enumerated() {
      #expect(separator.withUnsafeBytes { image.childIndex($0) } == i + 1)
      #expect(image.child(at: i + 1).1 == UInt64(i + 2))
    }
    #expect([UInt8]().withUnsafeBytes { image.childIndex($0) } == 0)
  }
}
