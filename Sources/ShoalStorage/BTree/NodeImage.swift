/// A decompressed, validated B+tree node as stored: read in place, never decoded entry by
/// entry, shared by every reader through the node cache, and never modified.
///
/// Layout: `kind:u8, 3 reserved bytes, count:u32`, then `count + 1` entry offsets (u32, the
/// last one is the end), then the entries.
/// - leaf entry: `keyLength:u16, key, tag:u8, value` (tag 0: the value runs to the entry's
///   end; tag 1: a 33-byte `BlockPointer` to a blob holding the value).
/// - branch entry: `child:BlockPointer, subtreeCount:u64, keyLength:u16, key`; entry 0 has an
///   empty key, entry i > 0 holds the smallest key of child i.
struct NodeImage: Sendable {
  static let leafKind: UInt8 = 1
  static let branchKind: UInt8 = 2
  static let headerSize = 8

  /// One allocation, which the node cache's bucket references directly: a word with the
  /// entry count (low 32 bits), the node's length (bits 32–62) and whether it is a leaf (bit
  /// 63); the first 8 bytes of each key, big-endian (see `keyPrefix`), one word an entry; then
  /// the node's bytes, zero-padded to a word. A binary search reads the compact prefixes and
  /// touches a key's bytes only on a tie. A tree walk reads, on each level, the cache bucket and
  /// this array's first line, and no object or second array between them.
  private let storage: [UInt64]

  /// Whether the node is a leaf.
  @inline(__always) var isLeaf: Bool { storage[0] >> 63 != 0 }
  /// The number of entries.
  @inline(__always) var count: Int { Int(truncatingIfNeeded: storage[0] & 0xFFFF_FFFF) }
  /// The length of the node's bytes.
  @inline(__always) var byteCount: Int { Int(truncatingIfNeeded: (storage[0] >> 32) & 0x7FFF_FFFF) }

  /// The node's bytes (a copy: the accessors read them in place through `withBytes`).
  var bytes: [UInt8] { withBytes { Array($0) } }

  /// The key prefixes (a copy).
  var prefixes: [UInt64] { Array(storage[1..<(1 + count)]) }

  /// Calls `body` with the node's bytes.
  @inline(__always) func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    let head = storage[0]
    let c = Int(truncatingIfNeeded: head & 0xFFFF_FFFF)
    let n = Int(truncatingIfNeeded: (head >> 32) & 0x7FFF_FFFF)
    return try storage.withUnsafeBytes { raw in
      try body(UnsafeRawBufferPointer(rebasing: raw[(8 + 8 * c)..<(8 + 8 * c + n)]))
    }
  }

  /// The storage of a node: its header word, `prefixes`, then `bytes`.
  private static func storage(_ prefixes: UnsafeBufferPointer<UInt64>, _ bytes: [UInt8], isLeaf: Bool) -> [UInt64] {
    let c = prefixes.count
    let words = 1 + c + (bytes.count + 7) / 8
    return [UInt64](unsafeUninitializedCapacity: words) { buffer, initialized in
      // The copies stay inside `words` words: the header, c prefixes, the bytes rounded up.
      guard let base = buffer.baseAddress else { return }
      base.initialize(to: UInt64(c) | UInt64(bytes.count) << 32 | (isLeaf ? 1 << 63 : 0))
      if let from = prefixes.baseAddress { (base + 1).initialize(from: from, count: c) }
      if words > 1 + c { (base + words - 1).initialize(to: 0) }  // the padding of the last word
      bytes.withUnsafeBytes { b in
        UnsafeMutableRawBufferPointer(start: base + 1 + c, count: b.count).copyMemory(from: b)
      }
      initialized = words
    }
  }

  /// Validates the structure so that later accessors can never read out of bounds.
  /// Returns nil with `reason` describing the first problem.
  init?(bytes: [UInt8], reason: inout String) {
    let n = bytes.count
    guard n >= NodeImage.headerSize + 4 else {
      reason = "node of \(n) bytes is too short"
      return nil
    }
    guard n < 1 << 31 else {
      reason = "node of \(n) bytes is too long"
      return nil
    }
    let kind = bytes[0]
    guard kind == NodeImage.leafKind || kind == NodeImage.branchKind else {
      reason = "unknown node kind \(kind)"
      return nil
    }
    let leaf = kind == NodeImage.leafKind
    let c = bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self))) }
    guard c >= 1, NodeImage.headerSize + 4 * (c + 1) <= n else {
      reason = "node entry count \(c) does not fit in \(n) bytes"
      return nil
    }
    let problem: String? = bytes.withUnsafeBytes { p -> String? in
      var previous = NodeImage.headerSize + 4 * (c + 1)
      for i in 0...c {
        let o = Int(
          UInt32(littleEndian: p.loadUnaligned(fromByteOffset: NodeImage.headerSize + 4 * i, as: UInt32.self)))
        if i == 0 ? o != previous : o < previous { return "entry offset \(i) is out of order" }
        if o > n { return "entry offset \(i) points past the node" }
        if i > 0 {
          let start = previous
          let length = o - start
          if leaf {
            guard length >= 3 else { return "leaf entry \(i - 1) is too short" }
            let keyLength = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
            guard 2 + keyLength + 1 <= length else { return "leaf entry \(i - 1) key overruns it" }
            let tag = p[start + 2 + keyLength]
            if tag == 1 {
              guard length == 3 + keyLength + BlockPointer.encodedSize,
                BlockPointer.decode(p, at: start + 3 + keyLength) != nil
              else { return "leaf entry \(i - 1) has a bad blob pointer" }
            } else if tag != 0 {
              return "leaf entry \(i - 1) has unknown value tag \(tag)"
            }
          } else {
            guard length >= BlockPointer.encodedSize + 10 else { return "branch entry \(i - 1) is too short" }
            let keyLength = Int(
              UInt16(
                littleEndian: p.loadUnaligned(fromByteOffset: start + BlockPointer.encodedSize + 8, as: UInt16.self)))
            guard length == BlockPointer.encodedSize + 10 + keyLength else {
              return "branch entry \(i - 1) has a bad key length"
            }
            guard BlockPointer.decode(p, at: start) != nil else {
              return "branch entry \(i - 1) has a bad child pointer"
            }
          }
        }
        previous = o
      }
      return previous == n ? nil : "node has trailing bytes"
    }
    if let problem {
      reason = problem
      return nil
    }
    let prefixes = bytes.withUnsafeBytes { p in
      (0..<c).map { i in
        let start = Int(
          UInt32(littleEndian: p.loadUnaligned(fromByteOffset: NodeImage.headerSize + 4 * i, as: UInt32.self)))
        let keyStart = leaf ? start : start + BlockPointer.encodedSize + 8
        let k = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: keyStart, as: UInt16.self)))
        return keyPrefix(UnsafeRawBufferPointer(rebasing: p[(keyStart + 2)..<(keyStart + 2 + k)]))
      }
    }
    storage = prefixes.withUnsafeBufferPointer { NodeImage.storage($0, bytes, isLeaf: leaf) }
  }

  /// The image of a node this transaction just encoded (`DirtyNode.encode`): right by
  /// construction, so not validated again (debug builds check that it would pass), with the
  /// key prefixes the node already holds.
  init(encoded bytes: [UInt8], of node: DirtyNode) {
    let prefixes = node.imagePrefixes()
    storage = prefixes.withUnsafeBufferPointer { NodeImage.storage($0, bytes, isLeaf: node.isLeaf) }
    assert(
      {
        var reason = ""
        return NodeImage(bytes: bytes, reason: &reason)?.prefixes == prefixes
      }(), "an encoded node does not validate")
  }

  @inline(__always) private static func offset(_ p: UnsafeRawBufferPointer, _ i: Int) -> Int {
    Int(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: headerSize + 4 * i, as: UInt32.self)))
  }

  /// The key of entry `i` as a slice of `p` (the node's bytes).
  @inline(__always) func key(_ p: UnsafeRawBufferPointer, _ i: Int) -> UnsafeRawBufferPointer {
    let start = NodeImage.offset(p, i)
    if isLeaf {
      let k = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
      return UnsafeRawBufferPointer(rebasing: p[(start + 2)..<(start + 2 + k)])
    }
    let base = start + BlockPointer.encodedSize + 8
    let k = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: base, as: UInt16.self)))
    return UnsafeRawBufferPointer(rebasing: p[(base + 2)..<(base + 2 + k)])
  }

  func key(at i: Int) -> [UInt8] { withBytes { Array(key($0, i)) } }

  /// Leaf: the stored value of entry `i`.
  @inline(__always) func value(_ p: UnsafeRawBufferPointer, _ i: Int) -> StoredValue {
    let start = NodeImage.offset(p, i)
    let end = NodeImage.offset(p, i + 1)
    let k = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
    let tagAt = start + 2 + k
    if p[tagAt] == 1 {
      // Validated in init: the pointer decodes.
      return .blob(BlockPointer.decode(p, at: tagAt + 1) ?? .null)
    }
    return .inline(UnsafeRawBufferPointer(rebasing: p[(tagAt + 1)..<end]))
  }

  /// Branch: child pointer and subtree entry count of entry `i`.
  @inline(__always) func child(_ p: UnsafeRawBufferPointer, _ i: Int) -> (BlockPointer, UInt64) {
    let start = NodeImage.offset(p, i)
    let pointer = BlockPointer.decode(p, at: start) ?? .null  // validated in init
    let count = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: start + BlockPointer.encodedSize, as: UInt64.self))
    return (pointer, count)
  }

  func child(at i: Int) -> (BlockPointer, UInt64) { withBytes { child($0, i) } }

  /// -1, 0 or 1 as the key of entry `i` is smaller than, equal to or greater than `key`, whose
  /// prefix is `prefix`; `raw` is the storage, `p` the node's bytes in it.
  @inline(__always)
  private func compare(
    _ raw: UnsafeRawBufferPointer, _ p: UnsafeRawBufferPointer, _ i: Int, _ key: UnsafeRawBufferPointer,
    _ prefix: UInt64
  ) -> Int {
    let mine = raw.load(fromByteOffset: 8 + 8 * i, as: UInt64.self)
    if mine != prefix { return mine < prefix ? -1 : 1 }
    return compareBytes(self.key(p, i), key)
  }

  /// Leaf: index of the first entry whose key is >= `key`, and whether it is equal.
  func lowerBound(_ key: UnsafeRawBufferPointer) -> (Int, Bool) {
    let prefix = keyPrefix(key)
    let head = storage[0]
    let count = Int(truncatingIfNeeded: head & 0xFFFF_FFFF)
    let nodeBytes = (8 + 8 * count)..<(8 + 8 * count + Int(truncatingIfNeeded: (head >> 32) & 0x7FFF_FFFF))
    return storage.withUnsafeBytes { raw in
      let p = UnsafeRawBufferPointer(rebasing: raw[nodeBytes])
      var lo = 0
      var hi = count
      while lo < hi {
        let mid = (lo + hi) >> 1
        if compare(raw, p, mid, key, prefix) < 0 { lo = mid + 1 } else { hi = mid }
      }
      return (lo, lo < count && compare(raw, p, lo, key, prefix) == 0)
    }
  }

  /// Branch: index of the child whose range holds `key`.
  func childIndex(_ key: UnsafeRawBufferPointer) -> Int {
    let prefix = keyPrefix(key)
    let head = storage[0]
    let count = Int(truncatingIfNeeded: head & 0xFFFF_FFFF)
    let nodeBytes = (8 + 8 * count)..<(8 + 8 * count + Int(truncatingIfNeeded: (head >> 32) & 0x7FFF_FFFF))
    return storage.withUnsafeBytes { raw in
      let p = UnsafeRawBufferPointer(rebasing: raw[nodeBytes])
      // Number of separators (entries 1..<count) that are <= key.
      var lo = 1
      var hi = count
      while lo < hi {
        let mid = (lo + hi) >> 1
        if compare(raw, p, mid, key, prefix) <= 0 { lo = mid + 1 } else { hi = mid }
      }
      return lo - 1
    }
  }

  /// Total blob bytes and blob pointers referenced by this leaf.
  func blobs() -> [BlockPointer] {
    guard isLeaf else { return [] }
    return withBytes { p in
      (0..<count).compactMap { i in if case .blob(let b) = value(p, i) { return b } else { return nil } }
    }
  }
}

/// A value as found in a node image.
enum StoredValue {
  case inline(UnsafeRawBufferPointer)
  case blob(BlockPointer)
}
