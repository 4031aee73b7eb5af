/// The entries put into a keyspace whose tree was empty, held in a hash table until the
/// keyspace is read in key order or committed, then built into a tree bottom-up.
///
/// A transaction that fills an empty keyspace with keys in random order (an import) would
/// otherwise insert each key into a growing tree: a descent, a search and an insertion into a
/// node in random places, and splits that leave nodes two-thirds full. (Keys in ascending order
/// are cheap appends either way.) Hashing the key instead costs a fraction of that, and the
/// tree is built once, from the sorted entries, with nodes filled evenly (`fill`). Point reads,
/// puts and deletes use the table; the first ordered read (a cursor, a count of a range) or the
/// commit builds the tree (`WriteTransaction.settle`), and the keyspace's later puts go to the
/// tree.
///
/// Entries sit in arrays in the order they were first put; the table maps a key's hash to its
/// index there. What an entry needs in the tree (its key's 8-byte prefix, its encoded size) is
/// taken while the key is at hand, and the build moves keys and values into their leaves: it
/// does not touch them again (a million keys were a million cache misses each time).
final class PutBuffer {
  /// How full a built node is made, of `DirtyNode.maximumSize`: about as full as random
  /// insertion leaves nodes, so that the keyspace's next inserts do not split a node each.
  static let fill = DirtyNode.maximumSize * 3 / 4

  // The stored properties skip Swift's run-time exclusivity checks (a tenth of a put's time):
  // a buffer belongs to one write transaction, used by one thread at a time, and no method
  // holds an access to one of them while another access to it starts.

  @exclusivity(unchecked) private var keys: [[UInt8]] = []  // safe: see above
  /// nil for an entry deleted since it was put.
  @exclusivity(unchecked) private var values: [LeafValue?] = []  // safe: see above
  @exclusivity(unchecked) private var prefixes: [UInt64] = []  // safe: see above
  /// Each entry's bytes in a leaf (`DirtyNode.leafEntrySize`).
  @exclusivity(unchecked) private var sizes: [UInt32] = []  // safe: see above
  /// Open addressing, linear probing: 0 is empty, otherwise the hash's 32 bits (which also
  /// pick the bucket, so growing needs no key) above the entry's index + 1.
  @exclusivity(unchecked) private var slots: [UInt64] = Array(repeating: 0, count: 16)  // safe: see above
  /// Per table, so that keys chosen to collide under one seed do not under another.
  private let seed = UInt64.random(in: 0...UInt64.max)
  /// Live entries (not deleted).
  @exclusivity(unchecked) private(set) var count = 0  // safe: see above

  private func hash(_ key: [UInt8]) -> UInt32 {
    let h = Checksum.xxh64(key, seed: seed)
    return UInt32(truncatingIfNeeded: h ^ (h >> 32))
  }

  /// The bucket holding `key`, or the empty bucket where it would go, and its entry's index.
  private func find(_ key: [UInt8], _ h: UInt32) -> (bucket: Int, index: Int?) {
    let mask = slots.count - 1
    var b = Int(h) & mask
    while true {
      let word = slots[b]
      if word == 0 { return (b, nil) }
      if UInt32(truncatingIfNeeded: word >> 32) == h {
        let index = Int(truncatingIfNeeded: word & 0xFFFF_FFFF) - 1
        if keys[index] == key { return (b, index) }
      }
      b = (b + 1) & mask
    }
  }

  private func grow() {
    let old = slots
    slots = Array(repeating: 0, count: old.count * 2)
    let mask = slots.count - 1
    for word in old where word != 0 {
      var b = Int(truncatingIfNeeded: word >> 32) & mask
      while slots[b] != 0 { b = (b + 1) & mask }
      slots[b] = word
    }
  }

  /// Inserts or replaces; returns whether the key was there.
  func put(_ key: [UInt8], _ value: LeafValue) -> Bool {
    let h = hash(key)
    var (bucket, found) = find(key, h)
    if let index = found {
      let existed = values[index] != nil
      if !existed { count += 1 }
      sizes[index] = UInt32(DirtyNode.leafEntrySize(key: key.count, value: value.encodedSize))
      values[index] = value
      return existed
    }
    // At most three quarters full, so that a probe ends soon.
    if (keys.count + 1) * 4 > slots.count * 3 {
      grow()
      bucket = find(key, h).bucket
    }
    slots[bucket] = UInt64(h) << 32 | UInt64(keys.count + 1)
    prefixes.append(keyPrefix(key))
    sizes.append(UInt32(DirtyNode.leafEntrySize(key: key.count, value: value.encodedSize)))
    keys.append(key)
    values.append(value)
    count += 1
    return false
  }

  /// Removes `key`; returns whether it was there.
  func remove(_ key: [UInt8]) -> Bool {
    guard let index = find(key, hash(key)).index, values[index] != nil else { return false }
    values[index] = nil
    count -= 1
    // A deleted entry keeps its place (a later put of its key takes it again); once they
    // outnumber the live ones, they go, so that a transaction putting and deleting keys in
    // turn holds what is live, not everything it ever put.
    if entriesHeld - count > max(count, 64) { dropDeleted() }
    return true
  }

  /// The entries held, deleted ones included.
  var entriesHeld: Int { keys.count }

  /// Keeps only the live entries, in their order, and their table slots.
  private func dropDeleted() {
    var moved = [Int](repeating: 0, count: keys.count)
    var live = 0
    for i in keys.indices where values[i] != nil {
      moved[i] = live + 1
      keys[live] = keys[i]
      values[live] = values[i]
      prefixes[live] = prefixes[i]
      sizes[live] = sizes[i]
      live += 1
    }
    keys.removeSubrange(live...)
    values.removeSubrange(live...)
    prefixes.removeSubrange(live...)
    sizes.removeSubrange(live...)
    let old = slots
    slots = Array(repeating: 0, count: old.count)
    let mask = slots.count - 1
    for word in old where word != 0 {
      let to = moved[Int(truncatingIfNeeded: word & 0xFFFF_FFFF) - 1]
      guard to != 0 else { continue }
      var b = Int(truncatingIfNeeded: word >> 32) & mask
      while slots[b] != 0 { b = (b + 1) & mask }
      slots[b] = word & 0xFFFF_FFFF_0000_0000 | UInt64(to)
    }
  }

  func value(_ key: [UInt8]) -> LeafValue? {
    guard let index = find(key, hash(key)).index else { return nil }
    return values[index]
  }

  /// The entries as a tree of new nodes (nil for none), emptying the buffer.
  func buildTree() -> ChildSlot? {
    defer {
      keys = []
      values = []
      prefixes = []
      sizes = []
      slots = Array(repeating: 0, count: 16)
      count = 0
    }
    // The live entries' order by key: the prefixes decide but for ties.
    var order: [(prefix: UInt64, index: UInt32)] = []
    order.reserveCapacity(count)
    for i in values.indices where values[i] != nil { order.append((prefixes[i], UInt32(i))) }
    guard !order.isEmpty else { return nil }
    keys.withUnsafeBufferPointer { Self.sort(&order, keys: $0) }
    let sizes = order.map { Int(self.sizes[Int($0.index)]) }
    var level: [(firstKey: [UInt8], node: DirtyNode)] = []
    keys.withUnsafeMutableBufferPointer { keys in
      values.withUnsafeMutableBufferPointer { values in
        guard let keys = keys.baseAddress, let values = values.baseAddress else { return }
        level = Self.group(order.count, size: { sizes[$0] }) { range in
          // Each key and value is moved into its leaf, an empty one left behind: none is
          // retained or released, so none is read.
          let leafKeys = range.map { i -> [UInt8] in
            let at = keys + Int(order[i].index)
            defer { at.initialize(to: []) }
            return at.move()
          }
          let leafValues = range.map { i -> LeafValue in
            let at = values + Int(order[i].index)
            defer { at.initialize(to: nil) }
            return at.move() ?? .inline([])  // never nil: `order` holds the live entries only
          }
          let node = DirtyNode(
            leafKeys: leafKeys, prefixes: range.map { order[$0].prefix }, values: leafValues,
            byteSize: NodeImage.headerSize + 4 + range.reduce(0) { $0 + sizes[$1] })
          return (leafKeys[0], node)
        }
      }
    }
    while level.count > 1 {
      let children = level
      level = Self.group(
        children.count, size: { DirtyNode.branchEntrySize(key: children[$0].firstKey.count) }
      ) { range in
        // Key 0 of a branch is never read; the separator lives in the level above.
        let keys = range.map { $0 == range.lowerBound ? [] : children[$0].firstKey }
        let node = DirtyNode(branchKeys: keys, children: range.map { .dirty(children[$0].node) })
        return (children[range.lowerBound].firstKey, node)
      }
    }
    return .dirty(level[0].node)
  }

  /// Sorts entries by key: by their prefixes with a radix sort (a byte a pass, skipping the
  /// bytes all share), then each run of equal prefixes by comparing the keys. A comparison sort
  /// of a million random keys took 609 instructions an entry, this 237 (callgrind).
  static func sort(_ order: inout [(prefix: UInt64, index: UInt32)], keys: UnsafeBufferPointer<[UInt8]>) {
    let n = order.count
    guard n > 1 else { return }
    var counts = [Int](repeating: 0, count: 8 * 256)
    for entry in order {
      var p = entry.prefix
      for digit in 0..<8 {
        counts[digit &* 256 &+ Int(p & 255)] &+= 1
        p >>= 8
      }
    }
    var scratch = order
    var sortedInScratch = false
    order.withUnsafeMutableBufferPointer { a in
      scratch.withUnsafeMutableBufferPointer { b in
        for digit in 0..<8 {
          let shift = UInt64(8 * digit)
          let base = digit * 256
          let (source, target) = sortedInScratch ? (b, a) : (a, b)
          // Every entry has the same byte here: the pass would not move any.
          if counts[base + Int((source[0].prefix >> shift) & 255)] == n { continue }
          var next = 0
          for bucket in 0..<256 {
            let c = counts[base + bucket]
            counts[base + bucket] = next
            next += c
          }
          for entry in source {
            let bucket = base + Int((entry.prefix >> shift) & 255)
            target[counts[bucket]] = entry
            counts[bucket] += 1
          }
          sortedInScratch.toggle()
        }
      }
    }
    if sortedInScratch { swap(&order, &scratch) }
    var start = 0
    while start < n {
      var end = start + 1
      while end < n, order[end].prefix == order[start].prefix { end += 1 }
      if end - start > 1 {
        order[start..<end].sort { a, b in compareBytes(keys[Int(a.index)], keys[Int(b.index)]) < 0 }
      }
      start = end
    }
  }

  /// Cuts `count` entries, in order, into runs of about equal bytes, each at most `fill` bytes
  /// (at most `DirtyNode.maximumSize` when the entries are large), and makes a node of each.
  private static func group(
    _ count: Int, size: (Int) -> Int, node: (Range<Int>) -> (firstKey: [UInt8], node: DirtyNode)
  ) -> [(firstKey: [UInt8], node: DirtyNode)] {
    let header = NodeImage.headerSize + 4
    var total = 0
    var largest = 0
    for i in 0..<count {
      let s = size(i)
      total += s
      largest = max(largest, s)
    }
    // An entry goes to the run its first byte falls in, so a run holds at most its share plus
    // one entry: a share of `maximumSize - header - largest` keeps every node within the maximum.
    let share = max(1, min(fill - header, DirtyNode.maximumSize - header - largest))
    let runs = max(1, (total + share - 1) / share)
    var nodes: [(firstKey: [UInt8], node: DirtyNode)] = []
    nodes.reserveCapacity(runs)
    var start = 0
    var run = 0
    var offset = 0
    for i in 0..<count {
      let r = offset * runs / total
      if r != run {
        if i > start { nodes.append(node(start..<i)) }
        start = i
        run = r
      }
      offset += size(i)
    }
    nodes.append(node(start..<count))
    return nodes
  }
}
