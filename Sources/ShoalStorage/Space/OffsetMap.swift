/// A map of file offsets to 64-bit values: open addressing with linear probing and a
/// multiplicative hash, deletion by shifting the probe chain back (no tombstones). The free
/// space looks extents up by start and by end several times per commit; `Dictionary` hashed
/// each key with SipHash, a third of a small commit's CPU time. Offsets in the data area are
/// never 0, which marks an empty slot.
///
/// A slot's key and value sit side by side in one array (key at `2 * i`, value at
/// `2 * i + 1`): a short probe reads one cache line, and a change checks one array's uniqueness
/// once. The probes run on the array's buffer (no bounds check a step); every index they
/// form is masked to the table.
struct OffsetMap {
  /// `2 * (mask + 1)` words: the slots' keys and values, interleaved.
  private var slots: [UInt64]
  /// How many keys the map holds.
  private(set) var count = 0
  /// The number of slots minus one (a power of two minus one).
  private var mask: Int

  /// An empty map with room for about `capacity` keys before it grows.
  init(capacity: Int = 8) {
    var size = 16
    while size < capacity * 2 { size *= 2 }
    slots = [UInt64](repeating: 0, count: 2 * size)
    mask = size - 1
  }

  @inline(__always) private static func home(_ key: UInt64, _ mask: Int) -> Int {
    Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
  }

  /// The value for `key` (never 0), or nil; setting nil removes it.
  subscript(key: UInt64) -> UInt64? {
    get {
      let mask = self.mask
      return slots.withUnsafeBufferPointer { s -> UInt64? in
        var i = OffsetMap.home(key, mask)
        while true {
          let k = s[2 &* i]
          if k == key { return s[2 &* i &+ 1] }
          if k == 0 { return nil }
          i = (i &+ 1) & mask
        }
      }
    }
    set {
      precondition(key != 0, "offset 0 is not a key of the free space")
      if let newValue { insert(key, newValue) } else { remove(key) }
    }
  }

  private mutating func insert(_ key: UInt64, _ value: UInt64) {
    if (count + 1) * 2 > mask + 1 { grow() }
    let mask = self.mask
    let added = slots.withUnsafeMutableBufferPointer { s -> Bool in
      var i = OffsetMap.home(key, mask)
      while true {
        let k = s[2 &* i]
        if k == key || k == 0 {
          s[2 &* i] = key
          s[2 &* i &+ 1] = value
          return k == 0
        }
        i = (i &+ 1) & mask
      }
    }
    if added { count += 1 }
  }

  private mutating func remove(_ key: UInt64) {
    let mask = self.mask
    let removed = slots.withUnsafeMutableBufferPointer { s -> Bool in
      var hole = OffsetMap.home(key, mask)
      while true {
        let k = s[2 &* hole]
        if k == key { break }
        if k == 0 { return false }
        hole = (hole &+ 1) & mask
      }
      // Shift later members of the probe chain back into the hole, so lookups never stop early.
      var i = hole
      while true {
        i = (i &+ 1) & mask
        let k = s[2 &* i]
        if k == 0 { break }
        let h = OffsetMap.home(k, mask)
        // `k` may move to the hole when its home is not in the cyclic range (hole, i].
        let movable = hole <= i ? (h <= hole || h > i) : (h <= hole && h > i)
        if movable {
          s[2 &* hole] = k
          s[2 &* hole &+ 1] = s[2 &* i &+ 1]
          hole = i
        }
      }
      s[2 &* hole] = 0
      s[2 &* hole &+ 1] = 0
      return true
    }
    if removed { count -= 1 }
  }

  private mutating func grow() {
    let old = slots
    let size = 2 * (mask + 1)
    slots = [UInt64](repeating: 0, count: 2 * size)
    mask = size - 1
    count = 0
    for i in stride(from: 0, to: old.count, by: 2) where old[i] != 0 { insert(old[i], old[i + 1]) }
  }

  /// Calls `body` with every key and value, in no particular order.
  func forEach(_ body: (UInt64, UInt64) throws -> Void) rethrows {
    for i in stride(from: 0, to: slots.count, by: 2) where slots[i] != 0 { try body(slots[i], slots[i + 1]) }
  }

  /// The keys and values as a dictionary (for tests and reports).
  var dictionary: [UInt64: UInt64] {
    var all: [UInt64: UInt64] = [:]
    all.reserveCapacity(count)
    forEach { all[$0] = $1 }
    return all
  }

  /// Reserves room for `capacity` keys.
  mutating func reserveCapacity(_ capacity: Int) {
    while capacity * 2 > mask + 1 { grow() }
  }
}
