import ShoalStorage

// Sorted results kept up to date from the change records, in time proportional to the change.
//
// Results of a class, filtered by conditions on each object's own properties and sorted by
// properties of the class itself, are ordered by (sort values, object key): a strict total
// order, the one the query executor's stable sort gives (it sorts objects found in key order).
// An observer keeps the elements and their sort values side by side (`SortedItems`). After a
// commit only the objects the change records name (inserted, deleted, modified: "touched") can
// have entered, left or moved; every other object keeps its values, so the untouched objects
// keep their relative order. Each touched object is found at its old place by binary search on
// the values it had (read from the old snapshot), tested against the filter, and placed by
// binary search on its new values among the untouched ones. That is O(t log n) for t touched
// objects, however long the results; moving the elements in memory (O(n), a memmove) happens
// after the callback, or at once when the callback reads the collection.
//
// Which objects a change set reports as moved (a deletion at the old index and an insertion at
// the new one) follows from the untouched objects standing still: a touched object moved when
// the number of untouched objects before it changed, or when it changed places with another
// touched object between the same two untouched neighbours (then the most of them that keep
// their mutual order stay, the longest increasing subsequence; the rest moved). Every other
// object that stayed is a modification when a written property matters to the observer. The
// full evaluation of the same results reports the same change sets (`RankedDiff`), which the
// tests check on random histories.

/// The order of sorted results kept up to date incrementally: property columns of the element
/// class, each ascending or descending, ties by object key.
struct RowOrder {
  /// The row columns sorted by, most significant first.
  let columns: [Int]
  /// Whether each column sorts smaller values first.
  let ascending: [Bool]

  /// The sort values of `row`.
  func values(of row: [RowValue]) -> [RowValue] { columns.map { $0 < row.count ? row[$0] : .null } }

  /// Whether `a` (of object `keyA`) sorts before `b` (of `keyB`).
  func precedes(_ a: [RowValue], _ keyA: ObjectKey, _ b: [RowValue], _ keyB: ObjectKey) -> Bool {
    for i in columns.indices {
      if QueryKeyPaths.sortsBefore(a[i], b[i]) { return ascending[i] }
      if QueryKeyPaths.sortsBefore(b[i], a[i]) { return !ascending[i] }
    }
    return keyA < keyB
  }
}

/// The elements of sorted results (`.link(key)`, in order) with each element's sort values.
struct SortedItems {
  let order: RowOrder
  private(set) var items: [RowValue]
  /// `columns[c][i]`: the value of sort column `c` of element `i`.
  private var columns: [[RowValue]]

  /// `items` in `order`, with the row of each (`row(i)`; nil leaves values null, which only a
  /// row that vanished meanwhile can be).
  init(order: RowOrder, items: [RowValue], row: (Int) -> [RowValue]?) {
    self.order = order
    self.items = items
    columns = order.columns.map { _ in
      var column: [RowValue] = []
      column.reserveCapacity(items.count)
      return column
    }
    for i in items.indices {
      let values = row(i).map(order.values(of:)) ?? Array(repeating: .null, count: order.columns.count)
      for c in columns.indices { columns[c].append(values[c]) }
    }
  }

  var count: Int { items.count }

  private func key(_ i: Int) -> ObjectKey { CoreLinks.key(items[i]) ?? ObjectKey(0) }

  /// The first position whose element sorts at or after (`values`, `key`).
  private func lowerBound(_ values: [RowValue], _ key: ObjectKey) -> Int {
    var low = 0
    var high = items.count
    while low < high {
      let mid = (low + high) / 2
      if order.precedes(columns.map { $0[mid] }, self.key(mid), values, key) { low = mid + 1 } else { high = mid }
    }
    return low
  }

  /// How the results change when the objects in `touched` may have entered, left or moved.
  /// `oldValues` gives an object's sort values before the change (nil when it did not exist),
  /// `newValues` after it (nil when it is not in the results now).
  func plan(
    touched: some Sequence<ObjectKey>, oldValues: (ObjectKey) -> [RowValue]?, newValues: (ObjectKey) -> [RowValue]?
  ) -> SortedPlan {
    var removed: [Int] = []  // old positions of touched elements, ascending once sorted
    var survivors: [(key: ObjectKey, values: [RowValue], gap: Int)] = []
    var oldPosition: [ObjectKey: Int] = [:]
    var seen = Set<ObjectKey>()
    var fresh: [(ObjectKey, [RowValue])] = []
    for key in touched where seen.insert(key).inserted {
      if let old = oldValues(key) {
        let p = lowerBound(old, key)
        if p < items.count, self.key(p) == key {
          removed.append(p)
          oldPosition[key] = p
        }
      }
      if let new = newValues(key) { fresh.append((key, new)) }
    }
    removed.sort()
    /// How many touched elements stand before position `p` of the old order.
    func touchedBefore(_ p: Int) -> Int {
      var low = 0
      var high = removed.count
      while low < high {
        let mid = (low + high) / 2
        if removed[mid] < p { low = mid + 1 } else { high = mid }
      }
      return low
    }
    for (key, values) in fresh {
      // The untouched elements before it: its place in the old order (which they keep) less
      // the touched elements there.
      let p = lowerBound(values, key)
      survivors.append((key, values, p - touchedBefore(p)))
    }
    survivors.sort { a, b in a.gap != b.gap ? a.gap < b.gap : order.precedes(a.values, a.key, b.values, b.key) }
    var plan = SortedPlan(removed: removed)
    var groups: [Int: [(old: Int, new: Int)]] = [:]
    for (index, survivor) in survivors.enumerated() {
      let newPosition = survivor.gap + index
      plan.inserted.append((newPosition, survivor.key, survivor.values))
      guard let old = oldPosition[survivor.key] else {
        plan.insertions.append(newPosition)
        continue
      }
      if old - touchedBefore(old) == survivor.gap {
        groups[survivor.gap, default: []].append((old, newPosition))
      } else {
        plan.deletions.append(old)
        plan.insertions.append(newPosition)
      }
    }
    let surviving = Set(survivors.map(\.key))
    for (key, position) in oldPosition where !surviving.contains(key) { plan.deletions.append(position) }
    for (_, group) in groups {
      let byOld = group.sorted { $0.old < $1.old }
      let kept = RankedDiff.longestIncreasing(byOld.map(\.new))
      for (i, element) in byOld.enumerated() {
        if kept.contains(i) {
          plan.stayed.append((element.old, element.new))
        } else {
          plan.deletions.append(element.old)
          plan.insertions.append(element.new)
        }
      }
    }
    plan.deletions.sort()
    plan.insertions.sort()
    return plan
  }

  /// Applies `plan`: the touched elements leave their old places and the survivors take
  /// their new ones.
  mutating func apply(_ plan: SortedPlan) {
    for position in plan.removed.reversed() {
      items.remove(at: position)
      for c in columns.indices { columns[c].remove(at: position) }
    }
    for (position, key, values) in plan.inserted {
      items.insert(.link(key), at: position)
      for c in columns.indices { columns[c].insert(values[c], at: position) }
    }
  }
}

/// What a change does to sorted results (`SortedItems.plan`).
struct SortedPlan {
  /// Old positions of the touched elements, ascending: all leave before `inserted` go in.
  let removed: [Int]
  /// The touched elements in the results now, in their order: new position, key, sort values.
  var inserted: [(position: Int, key: ObjectKey, values: [RowValue])] = []
  /// The change set's deletions (old positions) and insertions (new positions), ascending.
  var deletions: [Int] = []
  var insertions: [Int] = []
  /// Touched elements that kept their place among the others: old and new position.
  var stayed: [(old: Int, new: Int)] = []

  init(removed: [Int]) { self.removed = removed }
}

/// The change set between two orders of results where only `touched` objects can have moved:
/// the full evaluation's counterpart of `SortedItems.plan`, with the same answer.
enum RankedDiff {
  /// Deletions (old positions), insertions (new positions) and the old positions of the
  /// objects in both that did not move, each ascending.
  static func changes(old: [ObjectKey], new: [ObjectKey], touched: Set<ObjectKey>)
    -> (deletions: [Int], insertions: [Int], stayed: [Int])
  {
    var newPosition: [ObjectKey: Int] = [:]
    newPosition.reserveCapacity(new.count)
    for (i, key) in new.enumerated() { newPosition[key] = i }
    let oldKeys = Set(old)
    // The untouched objects in both, and how many of them precede each position.
    func ranks(_ keys: [ObjectKey], _ isStill: (ObjectKey) -> Bool) -> [Int] {
      var rank = 0
      return keys.map { key in
        defer { if isStill(key) { rank += 1 } }
        return rank
      }
    }
    let still = { (key: ObjectKey) in !touched.contains(key) && oldKeys.contains(key) && newPosition[key] != nil }
    let oldRank = ranks(old, still)
    let newRank = ranks(new, still)
    var deletions: [Int] = []
    var insertions: [Int] = []
    var stayed: [Int] = []
    var groups: [Int: [(old: Int, new: Int)]] = [:]
    for (i, key) in old.enumerated() {
      guard let j = newPosition[key] else {
        deletions.append(i)
        continue
      }
      if still(key) {
        stayed.append(i)
      } else if oldRank[i] == newRank[j] {
        groups[oldRank[i], default: []].append((i, j))
      } else {
        deletions.append(i)
        insertions.append(j)
      }
    }
    for (j, key) in new.enumerated() where !oldKeys.contains(key) { insertions.append(j) }
    for (_, group) in groups {
      let kept = longestIncreasing(group.map(\.new))
      for (i, element) in group.enumerated() {
        if kept.contains(i) {
          stayed.append(element.old)
        } else {
          deletions.append(element.old)
          insertions.append(element.new)
        }
      }
    }
    return (deletions.sorted(), insertions.sorted(), stayed.sorted())
  }

  /// The indexes of a longest strictly increasing subsequence of `sequence`: of several, the
  /// one patience sorting finds (each element after the latest smaller one before it).
  static func longestIncreasing(_ sequence: [Int]) -> Set<Int> {
    guard sequence.count > 1 else { return Set(sequence.indices) }
    var tails: [Int] = []  // index of the smallest tail of an increasing run of each length
    var previous = [Int](repeating: -1, count: sequence.count)
    for (i, value) in sequence.enumerated() {
      var low = 0
      var high = tails.count
      while low < high {
        let mid = (low + high) / 2
        if sequence[tails[mid]] < value { low = mid + 1 } else { high = mid }
      }
      if low > 0 { previous[i] = tails[low - 1] }
      if low == tails.count { tails.append(i) } else { tails[low] = i }
    }
    var kept = Set<Int>()
    var i = tails.last ?? -1
    while i >= 0 {
      kept.insert(i)
      i = previous[i]
    }
    return kept
  }
}
