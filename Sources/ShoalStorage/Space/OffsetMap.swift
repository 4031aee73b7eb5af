/// A map of file offsets to 64-bit values: open addressing with linear probing and a
/// multiplicative hash, deletion by shifting the probe chain back (no tombstones). The free
/// space looks extents up by start and by end several times per commit; `Dictionary` hashed
/// each key with SipHash, a third of a small commit's CPU time. Offsets in the data area are
/// never 0, which marks an empty slot.
struct OffsetMap {
  private var keys: [UInt64]
  private var values: [UInt64]
  /// How many keys the map holds.
  private(set) var count = 0
  private var mask: Int

  /// An empty map with room for about `capacity` keys before it grows.
  init(capacity: Int = 8) {
    var size = 16
    while size < capacity * 2 { size *= 2 }
    keys = [UInt64](repeating: 0, count: size)
    values = [UInt64](repeating: 0, count: size)
    mask = size - 1
  }

  @inline(__always) private func home(_ key: UInt64) -> Int {
    Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
  }

  /// The slot holding `key`, or nil.
  @inline(__always) private func slot(of key: UInt64) -> Int? {
    var i = home(key)
    while true {
      let k = keys[i]
      if k == key { return i }
      if k == 0 { return nil }
      i = (i + 1) & mask
    }
  }

  /// The value for `key` (never 0), or nil; setting nil removes it.
  subscript(key: UInt64) -> UInt64? {
    get { slot(of: key).map { values[$0] } }
    set {
      precondition(key != 0, "offset 0 is not a key of the free space")
      if let newValue { insert(key, newValue) } else { remove(key) }
    }
  }

  private mutating func insert(_ key: UInt64, _ value: UInt64) {
    if (count + 1) * 2 > keys.count { grow() }
    var i = home(key)
    while keys[i] != 0 && keys[i] != key { i = (i + 1) & mask }
    if keys[i] == 0 { count += 1 }
    keys[i] = key
    values[i] = value
  }

  private mutating func remove(_ key: UInt64) {
    guard var hole = slot(of: key) else { return }
    count -= 1
    // Shift later members of the probe chain back into the hole, so lookups never stop early.
    var i = hole
    while true {
      i = (i + 1) & mask
      let k = keys[i]
      if k == 0 { break }
      let h = home(k)
      // `k` may move to the hole when its home is not in the cyclic range (hole, i].
      let movable = hole <= i ? (h <= hole || h > i) : (h <= hole && h > i)
      if movable {
        keys[hole] = k
        values[hole] = values[i]
        hole = i
      }
    }
    keys[hole] = 0
    values[hole] = 0
  }

  private mutating func grow() {
    let (oldKeys, oldValues) = (keys, values)
    keys = [UInt64](repeating: 0, count: oldKeys.count * 2)
    values = [UInt64](repeating: 0, count: oldKeys.count * 2)
    mask = keys.count - 1
    count = 0
    for (k, v) in zip(oldKeys, oldValues) where k != 0 { insert(k, v) }
  }

  /// Calls `body` with every key and value, in no particular order.
  func forEach(_ body: (UInt64, UInt64) throws -> Void) rethrows {
    for i in keys.indices where keys[i] != 0 { try body(keys[i], values[i]) }
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
    while capacity * 2 > keys.count { grow() }
  }
}
