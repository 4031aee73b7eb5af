/// The read operations every transaction offers, over one tree root.
struct SnapshotReader: Sendable {
  /// Walks the trees; its blocks and limit (every block of the snapshot lies below it) are
  /// the reader's.
  let nav: TreeNavigator

  func blob(_ p: BlockPointer) throws -> [UInt8] { try nav.blocks.read(p, limit: nav.limit) }

  func withValue<R>(_ root: ChildSlot?, _ key: [UInt8], _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
    guard let root else { return try body(nil) }
    let (leaf, i, found) = try nav.find(root, key)
    guard found else { return try body(nil) }
    return try nav.withEntry(leaf, i) { _, value in
      switch value {
      case .bytes(let v): return try body(v)
      case .blob(let b): return try blob(b).withUnsafeBytes { try body($0) }
      }
    }
  }

  func get(_ root: ChildSlot?, _ key: [UInt8]) throws -> [UInt8]? {
    try withValue(root, key) { $0.map { Array($0) } }
  }

  /// Keys in `range` below or at a bound: the number of keys < k, or <= k when inclusive.
  private func rank(_ root: ChildSlot, _ key: [UInt8], inclusive: Bool) throws -> UInt64 {
    let r = try nav.rank(root, key)
    if inclusive, try nav.find(root, key).2 { return r + 1 }
    return r
  }

  func count(_ root: ChildSlot?, _ range: KeyRange) throws -> UInt64 {
    guard let root else { return 0 }
    let below = try range.lower.map { try rank(root, $0, inclusive: !range.lowerInclusive) } ?? 0
    let upTo = try range.upper.map { try rank(root, $0, inclusive: range.upperInclusive) } ?? root.count
    return upTo > below ? upTo - below : 0
  }

  func entry(_ root: ChildSlot?, at index: UInt64) throws -> (key: [UInt8], value: [UInt8])? {
    guard let root, index < root.count else { return nil }
    let (leaf, i) = try nav.entry(root, at: index)
    return try nav.withEntry(leaf, i) { k, v in
      switch v {
      case .bytes(let b): return (Array(k), Array(b))
      case .blob(let p): return (Array(k), try blob(p))
      }
    }
  }
}

/// Iterates a keyspace in key order (or reverse) within a range.
///
/// In a write transaction the cursor sees the transaction's own changes; if the keyspace is
/// modified while iterating, the cursor continues after the last key it returned.
public final class Cursor {
  let reader: SnapshotReader
  let root: () throws -> ChildSlot?
  let mutations: () -> Int
  let range: KeyRange
  let reverse: Bool
  /// Write transactions can change the tree under the cursor: remember where it was.
  let remembersKeys: Bool
  private var position = TreePosition()
  private var seen = 0
  private var lastKey: [UInt8]?
  private var started = false
  private var finished = false

  init(
    reader: SnapshotReader, range: KeyRange, reverse: Bool, root: @escaping () throws -> ChildSlot?,
    mutations: (() -> Int)?
  ) {
    self.reader = reader
    self.remembersKeys = mutations != nil
    self.range = range
    self.reverse = reverse
    self.root = root
    self.mutations = mutations ?? { 0 }
  }

  private func advance() throws {
    if !started {
      started = true
      seen = mutations()
      let bound = reverse ? range.upper : range.lower
      let inclusive = reverse ? range.upperInclusive : range.lowerInclusive
      try position.seek(reader.nav, root: root(), key: bound, inclusive: inclusive, forward: !reverse)
    } else if mutations() != seen, let lastKey {
      seen = mutations()
      try position.seek(reader.nav, root: root(), key: lastKey, inclusive: false, forward: !reverse)
    } else {
      try position.step(reader.nav, forward: !reverse)
    }
  }

  /// Calls `body` with the next entry's key and value seen in place (valid only inside
  /// `body`); returns false at the end of the range.
  public func next<R>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R) throws -> R? {
    guard !finished else { return nil }
    try advance()
    guard position.valid else {
      finished = true
      return nil
    }
    let result: R? = try reader.nav.withEntry(position.leaf, position.index) { key, value in
      if reverse ? range.beyondLower(key) : range.beyondUpper(key) { return nil }
      if remembersKeys { lastKey = Array(key) }
      switch value {
      case .bytes(let v): return try body(key, v)
      case .blob(let p): return try reader.blob(p).withUnsafeBytes { try body(key, $0) }
      }
    }
    if result == nil { finished = true }
    return result
  }

  /// The next entry, copied; nil at the end of the range.
  public func next() throws -> (key: [UInt8], value: [UInt8])? {
    try next { (Array($0), Array($1)) }
  }

  /// Calls `body` with each remaining entry's key and value seen in place (valid only inside
  /// `body`), in order, until it returns false (a later `next` or `forEach` goes on after that
  /// entry) or the range ends. A snapshot's entries are visited a leaf at a time, which costs
  /// a fraction of calling `next` for each; a write transaction's cursor, which must notice
  /// changes made while it iterates, takes them one by one.
  public func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
    if remembersKeys {
      while let more = try next(body), more {}
      return
    }
    while !finished {
      try advance()
      guard position.valid else {
        finished = true
        return
      }
      guard case .image(let leaf) = position.leaf else {
        if try next(body) == false { return }
        continue
      }
      let step = reverse ? -1 : 1
      var index = position.index
      let stopped: Bool = try leaf.withBytes { p in
        // When the leaf's last key in the direction of travel is within the range, so is every
        // entry before it: the range is compared once for the leaf instead of once per entry.
        let bounded =
          leaf.count > 0
          && (reverse ? range.beyondLower(leaf.key(p, 0)) : range.beyondUpper(leaf.key(p, leaf.count - 1)))
        while index >= 0 && index < leaf.count {
          let key = leaf.key(p, index)
          if bounded, reverse ? range.beyondLower(key) : range.beyondUpper(key) {
            finished = true
            return true
          }
          let more: Bool
          switch leaf.value(p, index) {
          case .inline(let v): more = try body(key, v)
          case .blob(let b): more = try reader.blob(b).withUnsafeBytes { try body(key, $0) }
          }
          if !more { return true }
          index += step
        }
        return false
      }
      // `advance` steps on from the last entry delivered.
      position.moveInLeaf(to: stopped ? index : index - step)
      if stopped { return }
    }
  }
}
