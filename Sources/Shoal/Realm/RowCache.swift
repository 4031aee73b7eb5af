// The decoded rows a Realm read at its current view, by class and object key: an
// open-addressing table with a multiplicative hash. A `Dictionary` keyed by (class, key)
// hashed both with SipHash on every lookup, a third of an indexed query's time per object;
// here a lookup is a multiply and a compare or two. Cleared whenever the Realm's view moves,
// in time proportional to the rows it holds (the slots used are listed), not to its capacity.

/// Decoded rows by class and object key (see the file comment). Not thread-safe: one Realm's.
struct RowCache {
  /// Per slot: the object key plus one (0: empty).
  private var keys: [UInt64] = []
  /// Per slot: the class's identity.
  private var tables: [UInt] = []
  private var rows: [[RowValue]?] = []
  /// The slots in use, for clearing.
  private var used: [Int] = []
  private var mask = 0

  /// How many rows the cache holds.
  var count: Int { used.count }
  var isEmpty: Bool { used.isEmpty }

  @inline(__always) private func slot(_ table: UInt, _ key: UInt64) -> Int {
    let mixed = (key &+ UInt64(truncatingIfNeeded: table) &* 0x632B_E59B_D9B4_E019) &* 0x9E37_79B9_7F4A_7C15
    return Int(truncatingIfNeeded: mixed >> 32) & mask
  }

  /// The row of `key` of the class `table`, when cached.
  subscript(table: ObjectIdentifier, key: ObjectKey) -> [RowValue]? {
    guard !used.isEmpty else { return nil }
    let identity = UInt(bitPattern: table)
    let stored = key &+ 1
    var i = slot(identity, key)
    while true {
      let k = keys[i]
      if k == 0 { return nil }
      if k == stored, tables[i] == identity { return rows[i] }
      i = (i + 1) & mask
    }
  }

  /// Caches `row` as the row of `key` of the class `table`.
  mutating func insert(_ row: [RowValue], table: ObjectIdentifier, key: ObjectKey) {
    if (used.count + 1) * 2 > keys.count { grow() }
    insert(row, identity: UInt(bitPattern: table), stored: key &+ 1)
  }

  private mutating func insert(_ row: [RowValue], identity: UInt, stored: UInt64) {
    var i = slot(identity, stored &- 1)
    while keys[i] != 0 {
      if keys[i] == stored, tables[i] == identity {
        rows[i] = row
        return
      }
      i = (i + 1) & mask
    }
    keys[i] = stored
    tables[i] = identity
    rows[i] = row
    used.append(i)
  }

  /// Forgets every row (keeping the table's capacity).
  mutating func removeAll() {
    for i in used {
      keys[i] = 0
      rows[i] = nil
    }
    used.removeAll(keepingCapacity: true)
  }

  private mutating func grow() {
    let capacity = max(keys.count * 2, 256)
    let (oldKeys, oldTables, oldRows, oldUsed) = (keys, tables, rows, used)
    keys = [UInt64](repeating: 0, count: capacity)
    tables = [UInt](repeating: 0, count: capacity)
    rows = [[RowValue]?](repeating: nil, count: capacity)
    used = []
    used.reserveCapacity(capacity / 2)
    mask = capacity - 1
    for i in oldUsed {
      guard let row = oldRows[i] else { continue }
      insert(row, identity: oldTables[i], stored: oldKeys[i])
    }
  }
}
