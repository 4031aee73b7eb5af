/// The node cache's index: from a block's (offset, checksum) to the cache slot holding its
/// node. Every node a read visits is looked up here, so it is an open-addressing table with
/// linear probing and a multiplicative hash of the two words, not a `Dictionary` (whose
/// SipHash of the 16-byte key cost as much as the binary search inside the node). Removal
/// shifts the entries of the probe run back, so there are no tombstones and a lookup stops at
/// the first empty bucket. Offset 0 marks an empty bucket: no block lives there (the file's
/// header does).
struct NodeIndex {
  private var offsets: [UInt64]
  private var checksums: [UInt64]
  private var slots: [Int]
  /// Buckets - 1 (buckets are a power of two).
  private var mask: Int
  /// 64 - log2(buckets): the hash's top bits pick the bucket.
  private var shift: Int
  /// Entries held.
  private(set) var count = 0

  /// A table that holds `minimumCapacity` entries without growing.
  init(minimumCapacity: Int = 16) {
    var buckets = 16
    while buckets < 2 * minimumCapacity { buckets *= 2 }
    offsets = Array(repeating: 0, count: buckets)
    checksums = Array(repeating: 0, count: buckets)
    slots = Array(repeating: 0, count: buckets)
    mask = buckets - 1
    shift = 64 - buckets.trailingZeroBitCount
  }

  private func home(_ offset: UInt64, _ checksum: UInt64) -> Int {
    Int(truncatingIfNeeded: ((offset &+ (checksum << 29 | checksum >> 35)) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
  }

  /// The bucket holding (`offset`, `checksum`), or nil.
  private func bucket(_ offset: UInt64, _ checksum: UInt64) -> Int? {
    var i = home(offset, checksum)
    while true {
      let o = offsets[i]
      if o == 0 { return nil }
      if o == offset && checksums[i] == checksum { return i }
      i = (i + 1) & mask
    }
  }

  /// The slot of (`offset`, `checksum`), or nil.
  func slot(_ offset: UInt64, _ checksum: UInt64) -> Int? {
    bucket(offset, checksum).map { slots[$0] }
  }

  /// Records `slot` for (`offset`, `checksum`), which must not be held yet; an offset of 0 is
  /// not recorded (no block is there).
  mutating func insert(_ offset: UInt64, _ checksum: UInt64, slot: Int) {
    guard offset != 0 else { return }
    if 2 * (count + 1) > offsets.count { grow() }
    var i = home(offset, checksum)
    while offsets[i] != 0 { i = (i + 1) & mask }
    offsets[i] = offset
    checksums[i] = checksum
    slots[i] = slot
    count += 1
  }

  /// Forgets (`offset`, `checksum`); returns the slot it had, or nil.
  mutating func remove(_ offset: UInt64, _ checksum: UInt64) -> Int? {
    guard offset != 0, var hole = bucket(offset, checksum) else { return nil }
    let removed = slots[hole]
    // Shift back every entry of the run after the hole that may sit there: one whose home is
    // not cyclically within (hole, j].
    var j = hole
    while true {
      j = (j + 1) & mask
      let o = offsets[j]
      if o == 0 { break }
      let h = home(o, checksums[j])
      let stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j)
      if stays { continue }
      offsets[hole] = o
      checksums[hole] = checksums[j]
      slots[hole] = slots[j]
      hole = j
    }
    offsets[hole] = 0
    count -= 1
    return removed
  }

  private mutating func grow() {
    var bigger = NodeIndex(minimumCapacity: offsets.count)
    for i in offsets.indices where offsets[i] != 0 {
      bigger.insert(offsets[i], checksums[i], slot: slots[i])
    }
    self = bigger
  }
}
