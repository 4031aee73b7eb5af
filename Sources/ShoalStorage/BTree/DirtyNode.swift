/// A value held by a node a write transaction is changing.
enum LeafValue {
  /// Small value stored in the leaf.
  case inline([UInt8])
  /// Large value already stored as a blob. Indirect: a pointer is five words, and a leaf's
  /// values are moved on every insert; so the enum is one word, not six.
  indirect case blob(BlockPointer)
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
/// A node copied from a committed block starts in a lazy form: the block's image, read in
/// place, plus the few edits made since (a branch's replaced children; one inserted or
/// replaced leaf entry). A commit that changes one key then neither decodes the nodes on its
/// path entry by entry (an allocation per key) nor encodes them again: each is the image's
/// bytes with its edits spliced in. Anything else (a second leaf edit, a split, a merge, a
/// removal) first decodes the node into arrays (`materialize`).
///
/// Its stored properties skip Swift's run-time exclusivity checks (a thread-local access set
/// updated on every access, 5–10% of an insert's time): a transaction is used by one thread
/// at a time, and no method of the editor holds an access to a node's array while another
/// reaches the same array.
final class DirtyNode {
  static let maximumSize = 8192
  static let minimumSize = maximumSize / 4

  /// One leaf entry inserted (`inserted`) or given a new value since the copy, at `index`
  /// of the edited node.
  struct LeafEdit {
    var index: Int
    var key: [UInt8]
    var value: LeafValue
    var inserted: Bool
  }

  let isLeaf: Bool
  /// The lazy form's committed image; nil once the node is held in the arrays below.
  @exclusivity(unchecked) private var base: NodeImage?  // safe: see above
  /// Lazy branch: the children replaced since the copy, by index.
  @exclusivity(unchecked) private var replaced: [(index: Int, slot: ChildSlot)] = []  // safe: see above
  /// Lazy leaf: the one entry changed since the copy.
  @exclusivity(unchecked) private var edit: LeafEdit?  // safe: see above
  /// Leaf: entry keys. Branch: key 0 is empty, key i the smallest key of child i.
  @exclusivity(unchecked) private var storedKeys: [[UInt8]]  // safe: see above
  /// The first 8 bytes of each key, big-endian: binary searches compare these and look at
  /// a key itself only on a tie.
  @exclusivity(unchecked) private var storedPrefixes: [UInt64]  // safe: see above
  @exclusivity(unchecked) private var storedValues: [LeafValue]  // safe: see above
  @exclusivity(unchecked) private var storedChildren: [ChildSlot]  // safe: see above
  /// Bytes of the encoded node.
  @exclusivity(unchecked) private(set) var byteSize: Int  // safe: see above
  @exclusivity(unchecked) var subtreeCount: UInt64  // safe: see above
  /// The version that wrote the block this node was copied from (0 for a new node): one
  /// written by the previous commit is on a path every commit rewrites (see
  /// `CommitWriter.allocate`).
  var originBirth: UInt64 = 0

  init(leafKeys: [[UInt8]], values: [LeafValue]) {
    isLeaf = true
    storedKeys = leafKeys
    storedPrefixes = leafKeys.map(keyPrefix)
    storedValues = values
    storedChildren = []
    byteSize = 0
    subtreeCount = UInt64(leafKeys.count)
    recomputeSize()
  }

  /// A leaf whose keys' prefixes and encoded size the caller already has (`PutBuffer`): the
  /// keys and values are not read.
  init(leafKeys: [[UInt8]], prefixes: [UInt64], values: [LeafValue], byteSize: Int) {
    isLeaf = true
    storedKeys = leafKeys
    storedPrefixes = prefixes
    storedValues = values
    storedChildren = []
    self.byteSize = byteSize
    subtreeCount = UInt64(leafKeys.count)
  }

  init(branchKeys: [[UInt8]], children: [ChildSlot]) {
    isLeaf = false
    storedKeys = branchKeys
    storedPrefixes = branchKeys.map(keyPrefix)
    storedValues = []
    storedChildren = children
    byteSize = 0
    subtreeCount = children.reduce(0) { $0 + $1.count }
    recomputeSize()
  }

  /// A copy of a committed node, in the lazy form.
  init(_ image: NodeImage) {
    isLeaf = image.isLeaf
    base = image
    storedKeys = []
    storedPrefixes = []
    storedValues = []
    storedChildren = []
    byteSize = image.byteCount
    subtreeCount =
      image.isLeaf
      ? UInt64(image.count)
      : image.withBytes { p in (0..<image.count).reduce(0) { $0 + image.child(p, $1).1 } }
  }

  /// Decodes the lazy form into the arrays, with its edits applied.
  private func materialize() {
    guard let image = base else { return }
    base = nil
    var keys: [[UInt8]] = []
    keys.reserveCapacity(image.count + 1)
    if isLeaf {
      var values: [LeafValue] = []
      values.reserveCapacity(image.count + 1)
      image.withBytes { p in
        for i in 0..<image.count {
          keys.append(Array(image.key(p, i)))
          switch image.value(p, i) {
          case .inline(let v): values.append(.inline(Array(v)))
          case .blob(let b): values.append(.blob(b))
          }
        }
      }
      if let e = edit {
        if e.inserted {
          keys.insert(e.key, at: e.index)
          values.insert(e.value, at: e.index)
        } else {
          values[e.index] = e.value
        }
      }
      edit = nil
      storedValues = values
      storedPrefixes = keys.map(keyPrefix)
    } else {
      var children: [ChildSlot] = []
      children.reserveCapacity(image.count + 1)
      image.withBytes { p in
        for i in 0..<image.count {
          keys.append(i == 0 ? [] : Array(image.key(p, i)))
          let (pointer, count) = image.child(p, i)
          children.append(.clean(pointer, count))
        }
      }
      for (i, slot) in replaced { children[i] = slot }
      replaced = []
      storedChildren = children
      storedPrefixes = image.prefixes
    }
    storedKeys = keys
  }

  /// Leaf: every value (the node is decoded first). The editor's paths use `value(at:)`.
  var values: [LeafValue] {
    materialize()
    return storedValues
  }

  /// Branch: every child (the node is decoded first). The editor's paths use `child(at:)`.
  var children: [ChildSlot] {
    materialize()
    return storedChildren
  }

  var count: Int {
    if let image = base { return image.count + (edit?.inserted == true ? 1 : 0) }
    return storedKeys.count
  }

  /// The lazy leaf's entry `i`: an index into the image, or nil for the edited entry.
  @inline(__always) private func imageIndex(_ i: Int) -> Int? {
    guard let e = edit else { return i }
    if i == e.index { return nil }
    return e.inserted && i > e.index ? i - 1 : i
  }

  /// Branch: child `i`.
  func child(at i: Int) -> ChildSlot {
    guard let image = base else { return storedChildren[i] }
    for r in replaced where r.index == i { return r.slot }
    let (pointer, count) = image.child(at: i)
    return .clean(pointer, count)
  }

  /// Branch: replaces child `i`.
  func setChild(_ slot: ChildSlot, at i: Int) {
    guard base != nil else {
      storedChildren[i] = slot
      return
    }
    if let r = replaced.firstIndex(where: { $0.index == i }) {
      replaced[r].slot = slot
    } else {
      replaced.append((i, slot))
    }
  }

  /// Key `i` (a branch's key 0 is empty).
  func key(at i: Int) -> [UInt8] {
    guard let image = base else { return storedKeys[i] }
    if !isLeaf && i == 0 { return [] }
    guard let j = imageIndex(i) else { return edit?.key ?? [] }
    return image.key(at: j)
  }

  /// Leaf: value `i`.
  func value(at i: Int) -> LeafValue {
    guard let image = base else { return storedValues[i] }
    guard let j = imageIndex(i) else { return edit?.value ?? .inline([]) }
    return image.withBytes { p in
      switch image.value(p, j) {
      case .inline(let v): return .inline(Array(v))
      case .blob(let b): return .blob(b)
      }
    }
  }

  /// Leaf: calls `body` with entry `i`'s key and value, seen in place.
  func withEntry<R>(_ i: Int, _ body: (UnsafeRawBufferPointer, ValueView) throws -> R) rethrows -> R {
    if let image = base, let j = imageIndex(i) {
      return try image.withBytes { p in
        switch image.value(p, j) {
        case .inline(let v): return try body(image.key(p, j), .bytes(v))
        case .blob(let b): return try body(image.key(p, j), .blob(b))
        }
      }
    }
    let (key, value) = base == nil ? (storedKeys[i], storedValues[i]) : (edit?.key ?? [], edit?.value ?? .inline([]))
    return try key.withUnsafeBytes { k in
      switch value {
      case .inline(let v), .pending(let v): return try v.withUnsafeBytes { try body(k, .bytes($0)) }
      case .blob(let b): return try body(k, .blob(b))
      }
    }
  }

  /// Replaces every pending value (a large value not yet stored) with what `store` makes of it.
  func storePendingValues(_ store: ([UInt8]) throws -> BlockPointer) rethrows {
    if base != nil {
      if let e = edit, case .pending(let bytes) = e.value { edit?.value = .blob(try store(bytes)) }
      return
    }
    for i in storedValues.indices {
      if case .pending(let bytes) = storedValues[i] { storedValues[i] = .blob(try store(bytes)) }
    }
  }

  /// Branch: the children copied or created by the transaction (not yet written).
  func dirtyChildren() -> [DirtyNode] {
    var dirty: [DirtyNode] = []
    if base != nil {
      for r in replaced { if case .dirty(let child) = r.slot { dirty.append(child) } }
    } else {
      for slot in storedChildren { if case .dirty(let child) = slot { dirty.append(child) } }
    }
    return dirty
  }

  /// Leaf: whether a value is still to be stored as a blob (`storePendingValues`).
  var hasPendingValues: Bool {
    if base != nil {
      if case .pending? = edit?.value { return true }
      return false
    }
    return storedValues.contains { if case .pending = $0 { return true } else { return false } }
  }

  /// Branch: replaces every dirty child with what `flush` makes of it (a clean pointer).
  func flushChildren(_ flush: (DirtyNode) throws -> ChildSlot) rethrows {
    if base != nil {
      for r in replaced.indices {
        if case .dirty(let child) = replaced[r].slot { replaced[r].slot = try flush(child) }
      }
      return
    }
    for i in storedChildren.indices {
      if case .dirty(let child) = storedChildren[i] { storedChildren[i] = try flush(child) }
    }
  }

  /// Key prefixes of the encoded node, as `NodeImage` keeps them (a branch's first is the
  /// empty key's).
  func imagePrefixes() -> [UInt64] {
    if let image = base {
      guard let e = edit, e.inserted else { return image.prefixes }
      var prefixes = image.prefixes
      prefixes.insert(keyPrefix(e.key), at: e.index)
      return prefixes
    }
    var prefixes = storedPrefixes
    if !isLeaf, !prefixes.isEmpty { prefixes[0] = keyPrefix([UInt8]()) }
    return prefixes
  }

  static func leafEntrySize(key: Int, value: Int) -> Int { 4 + 2 + key + 1 + value }
  static func branchEntrySize(key: Int) -> Int { 4 + BlockPointer.encodedSize + 8 + 2 + key }

  private func entrySize(_ i: Int) -> Int {
    isLeaf
      ? DirtyNode.leafEntrySize(key: storedKeys[i].count, value: storedValues[i].encodedSize)
      : DirtyNode.branchEntrySize(key: i == 0 ? 0 : storedKeys[i].count)
  }

  private func recomputeSize() {
    var size = NodeImage.headerSize + 4
    for i in 0..<storedKeys.count { size += entrySize(i) }
    byteSize = size
  }

  // MARK: Leaf edits

  @inline(__always) private func compare(_ i: Int, _ key: [UInt8], _ prefix: UInt64) -> Int {
    let p = storedPrefixes[i]
    if p != prefix { return p < prefix ? -1 : 1 }
    return compareBytes(storedKeys[i], key)
  }

  func lowerBound(_ key: [UInt8]) -> (Int, Bool) {
    if let image = base {
      if edit == nil { return key.withUnsafeBytes { image.lowerBound($0) } }
      materialize()
    }
    let prefix = keyPrefix(key)
    // Appends (ascending keys) go past the last key: one comparison instead of a search.
    if let last = storedKeys.indices.last, compare(last, key, prefix) < 0 { return (storedKeys.count, false) }
    var lo = 0
    var hi = storedKeys.count
    while lo < hi {
      let mid = (lo + hi) >> 1
      if compare(mid, key, prefix) < 0 { lo = mid + 1 } else { hi = mid }
    }
    return (lo, lo < storedKeys.count && compare(lo, key, prefix) == 0)
  }

  func childIndex(_ key: [UInt8]) -> Int {
    if let image = base { return key.withUnsafeBytes { image.childIndex($0) } }
    let prefix = keyPrefix(key)
    if storedKeys.count > 1, compare(storedKeys.count - 1, key, prefix) <= 0 { return storedKeys.count - 1 }
    var lo = 1
    var hi = storedKeys.count
    while lo < hi {
      let mid = (lo + hi) >> 1
      if compare(mid, key, prefix) <= 0 { lo = mid + 1 } else { hi = mid }
    }
    return lo - 1
  }

  func insertLeaf(_ key: [UInt8], _ value: LeafValue, at i: Int) {
    if base != nil, edit == nil {
      edit = LeafEdit(index: i, key: key, value: value, inserted: true)
      byteSize += DirtyNode.leafEntrySize(key: key.count, value: value.encodedSize)
      subtreeCount += 1
      return
    }
    materialize()
    storedKeys.insert(key, at: i)
    storedPrefixes.insert(keyPrefix(key), at: i)
    storedValues.insert(value, at: i)
    byteSize += DirtyNode.leafEntrySize(key: key.count, value: value.encodedSize)
    subtreeCount += 1
  }

  func replaceValue(at i: Int, with value: LeafValue) {
    if let image = base, edit == nil {
      let old = image.withBytes { p -> Int in
        switch image.value(p, i) {
        case .inline(let v): return v.count
        case .blob: return BlockPointer.encodedSize
        }
      }
      edit = LeafEdit(index: i, key: image.key(at: i), value: value, inserted: false)
      byteSize += value.encodedSize - old
      return
    }
    materialize()
    byteSize += value.encodedSize - storedValues[i].encodedSize
    storedValues[i] = value
  }

  func removeLeaf(at i: Int) -> LeafValue {
    materialize()
    byteSize -= entrySize(i)
    storedKeys.remove(at: i)
    storedPrefixes.remove(at: i)
    subtreeCount -= 1
    return storedValues.remove(at: i)
  }

  // MARK: Branch edits

  func insertChild(_ child: ChildSlot, separator: [UInt8], at i: Int) {
    materialize()
    storedKeys.insert(separator, at: i)
    storedPrefixes.insert(keyPrefix(separator), at: i)
    storedChildren.insert(child, at: i)
    byteSize += DirtyNode.branchEntrySize(key: separator.count)
  }

  /// Branch: removes child `i` (> 0) and its separator.
  func removeChild(at i: Int) {
    materialize()
    byteSize -= entrySize(i)
    storedKeys.remove(at: i)
    storedPrefixes.remove(at: i)
    storedChildren.remove(at: i)
  }

  /// Splits off the upper part of this node; returns the separator (smallest key of the new
  /// right node) and the right node. `appending` (a sequential insert at the end) leaves the
  /// left node nearly full, as bulk loads in key order want.
  func split(appending: Bool) -> ([UInt8], DirtyNode) {
    materialize()
    let target = appending ? byteSize * 9 / 10 : byteSize / 2
    var size = NodeImage.headerSize + 4
    var at = 1
    for i in 0..<storedKeys.count {
      size += entrySize(i)
      if size >= target {
        at = i + 1
        break
      }
    }
    at = max(1, min(at, storedKeys.count - 1))
    let separator = storedKeys[at]
    let right: DirtyNode
    if isLeaf {
      right = DirtyNode(leafKeys: Array(storedKeys[at...]), values: Array(storedValues[at...]))
      storedKeys.removeSubrange(at...)
      storedPrefixes.removeSubrange(at...)
      storedValues.removeSubrange(at...)
    } else {
      var rightKeys = Array(storedKeys[at...])
      rightKeys[0] = []
      right = DirtyNode(branchKeys: rightKeys, children: Array(storedChildren[at...]))
      storedKeys.removeSubrange(at...)
      storedPrefixes.removeSubrange(at...)
      storedChildren.removeSubrange(at...)
    }
    subtreeCount -= right.subtreeCount
    recomputeSize()
    return (separator, right)
  }

  /// Appends all entries of `right` (the next sibling) to this node. `separator` is the
  /// parent's key for `right`.
  func absorb(_ right: DirtyNode, separator: [UInt8]) {
    materialize()
    right.materialize()
    if isLeaf {
      storedKeys += right.storedKeys
      storedPrefixes += right.storedPrefixes
      storedValues += right.storedValues
    } else {
      var rightKeys = right.storedKeys
      rightKeys[0] = separator
      storedKeys += rightKeys
      storedPrefixes += [keyPrefix(separator)] + right.storedPrefixes.dropFirst()
      storedChildren += right.storedChildren
    }
    subtreeCount += right.subtreeCount
    recomputeSize()
  }

  /// The encoded node. Requires every child to be clean and every value inline or a blob.
  /// Written straight into an array of exactly `byteSize` bytes.
  func encode() -> [UInt8] {
    if let image = base { return isLeaf ? encodeEditedLeaf(image) : encodePatchedBranch(image) }
    let size = byteSize
    return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
      // A node is at least its header and one offset, so the buffer is never empty.
      var w = RawWriter(buffer.baseAddress!)  // safe: capacity >= headerSize + 4 > 0
      w.u8(isLeaf ? NodeImage.leafKind : NodeImage.branchKind)
      w.u8(0)
      w.u16(0)
      w.u32(UInt32(storedKeys.count))
      var offset = NodeImage.headerSize + 4 * (storedKeys.count + 1)
      for i in 0..<storedKeys.count {
        w.u32(UInt32(offset))
        offset += entrySize(i) - 4
      }
      w.u32(UInt32(offset))
      for i in 0..<storedKeys.count {
        if isLeaf {
          w.leafEntry(storedKeys[i], storedValues[i])
        } else {
          guard case .clean(let pointer, let count) = storedChildren[i] else {
            preconditionFailure("dirty children are written before their parent is encoded")
          }
          w.pointer(pointer)
          w.u64(count)
          if i == 0 {
            w.u16(0)
          } else {
            w.u16(UInt16(storedKeys[i].count))
            w.bytes(storedKeys[i])
          }
        }
      }
      precondition(w.position == size, "a node's encoding disagrees with its computed size")
      count = size
    }
  }

  /// A lazy branch encoded: its image with the replaced children's pointers and counts
  /// written over the old ones (both fixed-size, so nothing moves).
  private func encodePatchedBranch(_ image: NodeImage) -> [UInt8] {
    var bytes = image.bytes
    bytes.withUnsafeMutableBytes { p in
      for (i, slot) in replaced {
        guard case .clean(let pointer, let count) = slot else {
          preconditionFailure("dirty children are written before their parent is encoded")
        }
        let start = Int(
          UInt32(littleEndian: p.loadUnaligned(fromByteOffset: NodeImage.headerSize + 4 * i, as: UInt32.self)))
        // A validated image: the entry holds a pointer and a count.
        var w = RawWriter(p.baseAddress!.assumingMemoryBound(to: UInt8.self) + start)  // safe: image is non-empty
        w.pointer(pointer)
        w.u64(count)
      }
    }
    return bytes
  }

  /// A lazy leaf encoded: its image's entries copied as they are, with the edited entry
  /// encoded in its place, and the offset table rebuilt.
  private func encodeEditedLeaf(_ image: NodeImage) -> [UInt8] {
    let size = byteSize
    let n = count
    return image.withBytes { source in
      func offset(_ i: Int) -> Int {
        Int(UInt32(littleEndian: source.loadUnaligned(fromByteOffset: NodeImage.headerSize + 4 * i, as: UInt32.self)))
      }
      return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
        var w = RawWriter(buffer.baseAddress!)  // safe: capacity >= headerSize + 4 > 0
        w.u8(NodeImage.leafKind)
        w.u8(0)
        w.u16(0)
        w.u32(UInt32(n))
        var entryOffset = NodeImage.headerSize + 4 * (n + 1)
        for i in 0..<n {
          w.u32(UInt32(entryOffset))
          if let j = imageIndex(i) {
            entryOffset += offset(j + 1) - offset(j)
          } else if let e = edit {
            entryOffset += DirtyNode.leafEntrySize(key: e.key.count, value: e.value.encodedSize) - 4
          }
        }
        w.u32(UInt32(entryOffset))
        // Runs of image entries are copied whole: everything before the edit, then after it.
        let e = edit
        let split = e?.index ?? n
        let resume = e.map { $0.inserted ? $0.index : $0.index + 1 } ?? image.count
        w.raw(UnsafeRawBufferPointer(rebasing: source[offset(0)..<offset(split)]))
        if let e { w.leafEntry(e.key, e.value) }
        w.raw(UnsafeRawBufferPointer(rebasing: source[offset(resume)..<offset(image.count)]))
        precondition(w.position == size, "a node's encoding disagrees with its computed size")
        count = size
      }
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
  @inline(__always) mutating func raw(_ data: UnsafeRawBufferPointer) {
    if let from = data.baseAddress, data.count > 0 {
      UnsafeMutableRawPointer(base + position).copyMemory(from: from, byteCount: data.count)
    }
    position += data.count
  }
  /// A leaf entry: key length, key, then the value's tag and the value or blob pointer.
  @inline(__always) mutating func leafEntry(_ key: [UInt8], _ value: LeafValue) {
    u16(UInt16(key.count))
    bytes(key)
    switch value {
    case .inline(let v):
      u8(0)
      bytes(v)
    case .blob(let b):
      u8(1)
      pointer(b)
    case .pending:
      preconditionFailure("pending blobs are written before their leaf is encoded")
    }
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
