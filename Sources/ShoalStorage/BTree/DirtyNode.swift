/// A value held by a node a write transaction is changing.
enum LeafValue {
  /// Small value stored in the leaf.
  case inline([UInt8])
  /// Large value already stored as a blob.
  case blob(BlockPointer)
  /// Large value to be written as a blob at commit.
  case pending([UInt8])

  /// Bytes the value takes in a leaf entry after the tag.
  var encodedSize: Int {
    switch self {
    case .inline(let v): return v.count
    case .blob, .pending: return BlockPointer.encodedSize
    }
  }
}

/// A child of a branch in a write transaction: still the committed block, or a node copied
/// for change.
enum ChildSlot {
  case clean(BlockPointer, UInt64)
  case dirty(DirtyNode)

  var count: UInt64 {
    switch self {
    case .clean(_, let c): return c
    case .dirty(let n): return n.subtreeCount
    }
  }
}

/// A node copied (or created) by a write transaction. Owned by that transaction only;
/// written as a new block at commit.
///
/// Its stored properties skip Swift's run-time exclusivity checks (a thread-local access set
/// updated on every access, 5–10% of an insert's time): a transaction is used by one thread
/// at a time, and no method of the editor holds an access to a node's array while another
/// reaches the same array.
final class DirtyNode {
  static let maximumSize = 8192
  static let minimumSize = maximumSize / 4

  let isLeaf: Bool
  /// Leaf: entry keys. Branch: key 0 is empty, key i the smallest key of child i.
  @exclusivity(unchecked) private(set) var keys: [[UInt8]]  // safe: see above
  /// The first 8 bytes of each key, big-endian: binary searches compare these and look at
  /// a key itself only on a tie.
  @exclusivity(unchecked) private(set) var prefixes: [UInt64]  // safe: see above
  @exclusivity(unchecked) var values: [LeafValue]  // safe: see above
  @exclusivity(unchecked) var children: [ChildSlot]  // safe: see above
  /// Bytes of the encoded node.
  @exclusivity(unchecked) private(set) var byteSize: Int  // safe: see above
  @exclusivity(unchecked) var subtreeCount: UInt64  // safe: see above
  /// The version that wrote the block this node was copied from (0 for a new node): one
  /// written by the previous commit is on a path every commit rewrites (see
  /// `CommitWriter.allocate`).
  var originBirth: UInt64 = 0

  init(leafKeys: [[UInt8]], values: [LeafValue]) {
    isLeaf = true
    keys = leafKeys
    prefixes = leafKeys.map(keyPrefix)
    self.values = values
    children = []
    byteSize = 0
    subtreeCount = UInt64(leafKeys.count)
    recomputeSize()
  }

  init(branchKeys: [[UInt8]], children: [ChildSlot]) {
    isLeaf = false
    keys = branchKeys
    prefixes = branchKeys.map(keyPrefix)
    values = []
    self.children = children
    byteSize = 0
    subtreeCount = children.reduce(0) { $0 + $1.count }
    recomputeSize()
  }

  convenience init(_ image: NodeImage) {
    if image.isLeaf {
      var keys: [[UInt8]] = []
      var values: [LeafValue] = []
      keys.reserveCapacity(image.count)
      values.reserveCapacity(image.count)
      image.bytes.withUnsafeBytes { p in
        for i in 0..<image.count {
          keys.append(Array(image.key(p, i)))
          switch image.value(p, i) {
          case .inline(let v): values.append(.inline(Array(v)))
          case .blob(let b): values.append(.blob(b))
          }
        }
      }
      self.init(leafKeys: keys, values: values)
    } else {
      var keys: [[UInt8]] = []
      var children: [ChildSlot] = []
      image.bytes.withUnsafeBytes { p in
        for i in 0..<image.count {
          keys.append(i == 0 ? [] : Array(image.key(p, i)))
          let (pointer, count) = image.child(p, i)
          children.append(.clean(pointer, count))
        }
      }
      self.init(branchKeys: keys, children: children)
    }
  }

  var count: Int { keys.count }

  static func leafEntrySize(key: Int, value: Int) -> Int { 4 + 2 + key + 1 + value }
  static func branchEntrySize(key: Int) -> Int { 4 + BlockPointer.encodedSize + 8 + 2 + key }

  func entrySize(_ i: Int) -> Int {
    isLeaf
      ? DirtyNode.leafEntrySize(key: keys[i].count, value: values[i].encodedSize)
      : DirtyNode.branchEntrySize(key: i == 0 ? 0 : keys[i].count)
  }

  func recomputeSize() {
    var size = NodeImage.headerSize + 4
    for i in 0..<keys.count { size += entrySize(i) }
    byteSize = size
  }

  // MARK: Leaf edits

  @inline(__always) private func compare(_ i: Int, _ key: [UInt8], _ prefix: UInt64) -> Int {
    let p = prefixes[i]
    if p != prefix { return p < prefix ? -1 : 1 }
    return compareBytes(keys[i], key)
  }

  func lowerBound(_ key: [UInt8]) -> (Int, Bool) {
    let prefix = keyPrefix(key)
    // Appends (ascending keys) go past the last key: one comparison instead of a search.
    if let last = keys.indices.last, compare(last, key, prefix) < 0 { return (keys.count, false) }
    var lo = 0
    var hi = keys.count
    while lo < hi {
      let mid = (lo + hi) >> 1
      if compare(mid, key, prefix) < 0 { lo = mid + 1 } else { hi = mid }
    }
    return (lo, lo < keys.count && compare(lo, key, prefix) == 0)
  }

  func childIndex(_ key: [UInt8]) -> Int {
    let prefix = keyPrefix(key)
    if keys.count > 1, compare(keys.count - 1, key, prefix) <= 0 { return keys.count - 1 }
    var lo = 1
    var hi = keys.count
    while lo < hi {
      let mid = (lo + hi) >> 1
      if compare(mid, key, prefix) <= 0 { lo = mid + 1 } else { hi = mid }
    }
    return lo - 1
  }

  func insertLeaf(_ key: [UInt8], _ value: LeafValue, at i: Int) {
    keys.insert(key, at: i)
    prefixes.insert(keyPrefix(key), at: i)
    values.insert(value, at: i)
    byteSize += DirtyNode.leafEntrySize(key: key.count, value: value.encodedSize)
    subtreeCount += 1
  }

  func replaceValue(at i: Int, with value: LeafValue) {
    byteSize += value.encodedSize - values[i].encodedSize
    values[i] = value
  }

  func removeLeaf(at i: Int) -> LeafValue {
    byteSize -= entrySize(i)
    keys.remove(at: i)
    prefixes.remove(at: i)
    subtreeCount -= 1
    return values.remove(at: i)
  }

  // MARK: Branch edits

  func insertChild(_ child: ChildSlot, separator: [UInt8], at i: Int) {
    keys.insert(separator, at: i)
    prefixes.insert(keyPrefix(separator), at: i)
    children.insert(child, at: i)
    byteSize += DirtyNode.branchEntrySize(key: separator.count)
  }

  /// Branch: removes child `i` (> 0) and its separator.
  func removeChild(at i: Int) {
    byteSize -= entrySize(i)
    keys.remove(at: i)
    prefixes.remove(at: i)
    children.remove(at: i)
  }

  /// Splits off the upper part of this node; returns the separator (smallest key of the new
  /// right node) and the right node. `appending` (a sequential insert at the end) leaves the
  /// left node nearly full, as bulk loads in key order want.
  func split(appending: Bool) -> ([UInt8], DirtyNode) {
    let target = appending ? byteSize * 9 / 10 : byteSize / 2
    var size = NodeImage.headerSize + 4
    var at = 1
    for i in 0..<keys.count {
      size += entrySize(i)
      if size >= target {
        at = i + 1
        break
      }
    }
    at = max(1, min(at, keys.count - 1))
    let separator = keys[at]
    let right: DirtyNode
    if isLeaf {
      right = DirtyNode(leafKeys: Array(keys[at...]), values: Array(values[at...]))
      keys.removeSubrange(at...)
      prefixes.removeSubrange(at...)
      values.removeSubrange(at...)
    } else {
      var rightKeys = Array(keys[at...])
      rightKeys[0] = []
      right = DirtyNode(branchKeys: rightKeys, children: Array(children[at...]))
      keys.removeSubrange(at...)
      prefixes.removeSubrange(at...)
      children.removeSubrange(at...)
    }
    subtreeCount -= right.subtreeCount
    recomputeSize()
    return (separator, right)
  }

  /// Appends all entries of `right` (the next sibling) to this node. `separator` is the
  /// parent's key for `right`.
  func absorb(_ right: DirtyNode, separator: [UInt8]) {
    if isLeaf {
      keys += right.keys
      prefixes += right.prefixes
      values += right.values
    } else {
      var rightKeys = right.keys
      rightKeys[0] = separator
      keys += rightKeys
      prefixes += [keyPrefix(separator)] + right.prefixes.dropFirst()
      children += right.children
    }
    subtreeCount += right.subtreeCount
    recomputeSize()
  }

  /// The encoded node. Requires every child to be clean and every value inline or a blob.
  /// Written straight into an array of exactly `byteSize` bytes.
  func encode() -> [UInt8] {
    let size = byteSize
    return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
      // A node is at least its header and one offset, so the buffer is never empty.
      var w = RawWriter(buffer.baseAddress!)  // safe: capacity >= headerSize + 4 > 0
      w.u8(isLeaf ? NodeImage.leafKind : NodeImage.branchKind)
      w.u8(0)
      w.u16(0)
      w.u32(UInt32(keys.count))
      var offset = NodeImage.headerSize + 4 * (keys.count + 1)
      for i in 0..<keys.count {
        w.u32(UInt32(offset))
        offset += entrySize(i) - 4
      }
      w.u32(UInt32(offset))
      for i in 0..<keys.count {
        if isLeaf {
          w.u16(UInt16(keys[i].count))
          w.bytes(keys[i])
          switch values[i] {
          case .inline(let v):
            w.u8(0)
            w.bytes(v)
          case .blob(let b):
            w.u8(1)
            w.pointer(b)
          case .pending:
            preconditionFailure("pending blobs are written before their leaf is encoded")
          }
        } else {
          guard case .clean(let pointer, let count) = children[i] else {
            preconditionFailure("dirty children are written before their parent is encoded")
          }
          w.pointer(pointer)
          w.u64(count)
          if i == 0 {
            w.u16(0)
          } else {
            w.u16(UInt16(keys[i].count))
            w.bytes(keys[i])
          }
        }
      }
      precondition(w.position == size, "a node's encoding disagrees with its computed size")
      count = size
    }
  }
}

/// Stores little-endian fields at a moving position of memory the caller sized exactly.
struct RawWriter {
  let base: UnsafeMutablePointer<UInt8>
  private(set) var position = 0

  init(_ base: UnsafeMutablePointer<UInt8>) { self.base = base }

  @inline(__always) mutating func u8(_ v: UInt8) {
    base[position] = v
    position += 1
  }
  @inline(__always) mutating func u16(_ v: UInt16) { store(v) }
  @inline(__always) mutating func u32(_ v: UInt32) { store(v) }
  @inline(__always) mutating func u64(_ v: UInt64) { store(v) }
  @inline(__always) private mutating func store<T: FixedWidthInteger>(_ v: T) {
    UnsafeMutableRawPointer(base + position).storeBytes(of: v.littleEndian, as: T.self)
    position += MemoryLayout<T>.size
  }
  @inline(__always) mutating func bytes(_ data: [UInt8]) {
    data.withUnsafeBufferPointer { source in
      if let from = source.baseAddress { (base + position).update(from: from, count: source.count) }
    }
    position += data.count
  }
  @inline(__always) mutating func pointer(_ p: BlockPointer) {
    u64(p.offset)
    u32(p.storedLength)
    u32(p.rawLength)
    u8(p.codec.rawValue)
    u64(p.checksum)
    u64(p.birth)
  }
}

/// The first 8 bytes of a key as a big-endian integer (zero-padded): comparing two prefixes
/// orders keys the way `compareBytes` does, except that equal prefixes need the full keys.
@inline(__always)
func keyPrefix(_ key: UnsafeRawBufferPointer) -> UInt64 {
  if key.count >= 8 { return UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) }
  var v: UInt64 = 0
  for i in 0..<key.count { v |= UInt64(key[i]) << (56 - 8 * UInt64(i)) }
  return v
}

@inline(__always)
func keyPrefix(_ key: [UInt8]) -> UInt64 { key.withUnsafeBytes { keyPrefix($0) } }
