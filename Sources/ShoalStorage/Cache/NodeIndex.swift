/// The node cache's index: from a block's (offset, checksum) to the value cached for it (the
/// node), with the entry's clock slot and second-chance bit beside it.
///
/// Every node a read visits is looked up here, so it is an open-addressing table with linear
/// probing and a multiplicative hash of the two words, not a `Dictionary` (whose SipHash of the
/// 16-byte key cost as much as the binary search inside the node). A bucket holds the key, the
/// value, the slot and the bit together: a hit reads one cache line, where keys, slots and
/// nodes in arrays of their own cost a miss each on every level of a tree walk. Removal shifts
/// the entries of the probe run back, so there are no tombstones and a lookup stops at the
/// first empty bucket. Offset 0 marks an empty bucket: no block lives there (the file's header
/// does).
struct NodeIndex<Value> {
  private struct Bucket {
    var offset: UInt64 = 0
    var checksum: UInt64 = 0
    var value: Value? = nil
    var slot: Int32 = 0
    var referenced = false
  }

  private var buckets: [Bucket]
  /// Buckets - 1 (buckets are a power of two).
  private var mask: Int
  /// 64 - log2(buckets): the hash's top bits pick the bucket.
  private var shift: Int
  /// Entries held.
  private(set) var count = 0

  /// A table that holds `minimumCapacity` entries without growing.
  init(minimumCapacity: Int = 16) {
    var size = 16
    while size < 2 * minimumCapacity { size *= 2 }
    buckets = Array(repeating: Bucket(), count: size)
    mask = size - 1
    shift = 64 - size.trailingZeroBitCount
  }

  @inline(__always) private func home(_ offset: UInt64, _ checksum: UInt64) -> Int {
    Int(truncatingIfNeeded: ((offset &+ (checksum << 29 | checksum >> 35)) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
  }

  /// The bucket holding (`offset`, `checksum`), or nil.
  @inline(__always) private func bucket(_ offset: UInt64, _ checksum: UInt64) -> Int? {
    var i = home(offset, checksum)
    while true {
      let o = buckets[i].offset
      if o == 0 { return nil }
      if o == offset && buckets[i].checksum == checksum { return i }
      i = (i + 1) & mask
    }
  }

  /// The value and slot of (`offset`, `checksum`), or nil; does not touch the second-chance bit.
  func entry(_ offset: UInt64, _ checksum: UInt64) -> (value: Value, slot: Int)? {
    guard let i = bucket(offset, checksum), let value = buckets[i].value else { return nil }
    return (value, Int(buckets[i].slot))
  }

  /// The value of (`offset`, `checksum`), or nil; marks the entry referenced (a write only
  /// when the bit was clear, so a hot entry's line stays clean).
  @inline(__always) mutating func reference(_ offset: UInt64, _ checksum: UInt64) -> Value? {
    guard let i = bucket(offset, checksum) else { return nil }
    if !buckets[i].referenced { buckets[i].referenced = true }
    return buckets[i].value
  }

  /// The clock's look at (`offset`, `checksum`): true if it was referenced since the last look
  /// (the bit is now clear: a second chance), false if it was not, nil if it is not held.
  mutating func takeReference(_ offset: UInt64, _ checksum: UInt64) -> Bool? {
    guard let i = bucket(offset, checksum) else { return nil }
    defer { buckets[i].referenced = false }
    return buckets[i].referenced
  }

  /// Records `value` in `slot` for (`offset`, `checksum`), which must not be held yet, not
  /// referenced; an offset of 0 is not recorded (no block is there).
  mutating func insert(_ offset: UInt64, _ checksum: UInt64, value: Value, slot: Int) {
    guard offset != 0 else { return }
    if 2 * (count + 1) > buckets.count { grow() }
    var i = home(offset, checksum)
    while buckets[i].offset != 0 { i = (i + 1) & mask }
    buckets[i] = Bucket(offset: offset, checksum: checksum, value: value, slot: Int32(slot), referenced: false)
    count += 1
  }

  /// Forgets (`offset`, `checksum`); returns the value and slot it had, or nil.
  mutating func remove(_ offset: UInt64, _ checksum: UInt64) -> (value: Value, slot: Int)? {
    guard offset != 0, var hole = bucket(offset, checksum) else { return nil }
    let removed = buckets[hole]
    // Shift back every entry of the run after the hole that may sit there: one whose home is
    // not cyclically within (hole, j].
    var j = hole
    while true {
      j = (j + 1) & mask
      let o = buckets[j].offset
      if o == 0 { break }
      let h = home(o, buckets[j].checksum)
      let stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j)
      if stays { continue }
      buckets[hole] = buckets[j]
      hole = j
    }
    buckets[hole] = Bucket()
    count -= 1
    return removed.value.map { ($0, Int(removed.slot)) }
  }

  private mutating func grow() {
    var bigger = NodeIndex(minimumCapacity: buckets.count)
    for b in buckets where b.offset != 0 {
      if let value = b.value { bigger.insert(b.offset, b.checksum, value: value, slot: Int(b.slot)) }
      if b.referenced { _ = bigger.reference(b.offset, b.checksum) }
    }
    self = bigger
  }
}
