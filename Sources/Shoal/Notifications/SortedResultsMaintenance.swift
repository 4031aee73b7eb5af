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

  /// The sort values of `row`, packed into one value: the column's value when there is one
  /// column, else a `.list` of them.
  func sortKey(of row: [RowValue]) -> RowValue {
    if columns.count == 1 { return columns[0] < row.count ? row[columns[0]] : .null }
    return .list(columns.map { $0 < row.count ? row[$0] : .null })
  }

  /// Whether sort key `a` (of object `keyA`) sorts before `b` (of `keyB`).
  func precedes(_ a: RowValue, _ keyA: ObjectKey, _ b: RowValue, _ keyB: ObjectKey) -> Bool {
    if columns.count == 1 {
      if QueryKeyPaths.sortsBefore(a, b) { return ascending[0] }
      if QueryKeyPaths.sortsBefore(b, a) { return !ascending[0] }
    } else if case .list(let x) = a, case .list(let y) = b {
      for i in columns.indices {
        if QueryKeyPaths.sortsBefore(x[i], y[i]) { return ascending[i] }
        if QueryKeyPaths.sortsBefore(y[i], x[i]) { return !ascending[i] }
      }
    }
    return keyA < keyB
  }
}

/// The elements of sorted results (`.link(key)`, in order) and each element's sort key.
struct SortedItems {
  let order: RowOrder
  private(set) var items: [RowValue]
  /// The sort key (`RowOrder.sortKey`) of each element, by object: the values it was placed
  /// by, which are also how it is found again when a commit touches it.
  private var sortKeys: [ObjectKey: RowValue]

  /// `items` in `order`, with the row of each (`row(i)`; nil gives a null key, which only a
  /// row that vanished meanwhile can have).
  init(order: RowOrder, items: [RowValue], row: (Int) -> [RowValue]?) {
    self.order = order
    self.items = items
    sortKeys = Dictionary(minimumCapacity: items.count)
    for i in items.indices {
      guard let key = CoreLinks.key(items[i]) else { continue }
      sortKeys[key] = row(i).map(order.sortKey(of:)) ?? .null
    }
  }

  var count: Int { items.count }

  private func key(_ i: Int) -> ObjectKey { CoreLinks.key(items[i]) ?? ObjectKey(0) }

  /// The first position whose element sorts at or after (`sortKey`, `key`).
  private func lowerBound(_ sortKey: RowValue, _ key: ObjectKey) -> Int {
    var low = 0
    var high = items.count
    while low < high {
      let mid = (low + high) / 2
      let other = self.key(mid)
      if order.precedes(sortKeys[other] ?? .null, other, sortKey, key) { low = mid + 1 } else { high = mid }
    }
    return low
  }

  /// How the results change when the objects in `touched` may have entered, left or moved.
  /// `newKey` gives an object's sort key after the change, nil when it is not in the results
  /// now; where it was before is known here (no read of the previous version). Nil if an
  /// element is not where its sort key says (which would be a bug: the caller evaluates again).
  func plan(touched: Set<ObjectKey>, newKey: (ObjectKey) -> RowValue?) -> SortedPlan? {
    var removed: [Int] = []  // old positions of touched elements, ascending once sorted
    var survivors: [(key: ObjectKey, sortKey: RowValue, gap: Int)] = []
    var oldPosition: [ObjectKey: Int] = [:]
    var fresh: [(ObjectKey, RowValue)] = []
    for key in touched {
      if let old = sortKeys[key] {
        let p = lowerBound(old, key)
        guard p < items.count, self.key(p) == key else { return nil }
        removed.append(p)
        oldPosition[key] = p
      }
      if let new = newKey(key) { fresh.append((key, new)) }
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
    for (key, sortKey) in fresh {
      // The untouched elements before it: its place in the old order (which they keep) less
      // the touched elements there.
      let p = lowerBound(sortKey, key)
      survivors.append((key, sortKey, p - touchedBefore(p)))
    }
    survivors.sort { a, b in a.gap != b.gap ? a.gap < b.gap : order.precedes(a.sortKey, a.key, b.sortKey, b.key) }
    var plan = SortedPlan(removed: removed, removedKeys: Array(oldPosition.keys))
    var groups: [Int: [(old: Int, new: Int)]] = [:]
    for (index, survivor) in survivors.enumerated() {
      let newPosition = survivor.gap + index
      plan.inserted.append((newPosition, survivor.key, survivor.sortKey))
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
  /// their new ones. Only the span from the first place that changes to the last is rewritten
  /// (the elements before and after it are the same untouched ones, in the same order), so a
  /// moved element shifts only those between its old and new places.
  mutating func apply(_ plan: SortedPlan) {
    guard !plan.removed.isEmpty || !plan.inserted.isEmpty else { return }
    for key in plan.removedKeys { sortKeys[key] = nil }
    for (_, key, sortKey) in plan.inserted { sortKeys[key] = sortKey }
    let oldCount = items.count
    let newCount = oldCount - plan.removed.count + plan.inserted.count
    let low = min(plan.removed.first ?? oldCount, plan.inserted.first?.position ?? newCount)
    let same = min(oldCount - 1 - (plan.removed.last ?? -1), newCount - 1 - (plan.inserted.last?.position ?? -1))
    let (oldHigh, newHigh) = (oldCount - same, newCount - same)
    var span: [RowValue] = []
    span.reserveCapacity(newHigh - low)
    var removed = plan.removed[...]
    var inserted = plan.inserted[...]
    var old = low
    for position in low..<newHigh {
      if let next = inserted.first, next.position == position {
        span.append(.link(next.key))
        inserted.removeFirst()
        continue
      }
      while removed.first == old {
        removed.removeFirst()
        old += 1
      }
      span.append(items[old])
      old += 1
    }
    items.replaceSubrange(low..<oldHigh, with: span)
  }
}

/// What a change does to sorted results (`SortedItems.plan`).
struct SortedPlan {
  /// Old positions of the touched elements, ascending: all leave before `inserted` go in.
  let removed: [Int]
  /// The objects at those positions.
  let removedKeys: [ObjectKey]
  /// The touched elements in the results now, in their order: new position, key, sort key.
  var inserted: [(position: Int, key: ObjectKey, sortKey: RowValue)] = []
  /// The change set's deletions (old positions) and insertions (new positions), ascending.
  var deletions: [Int] = []
  var insertions: [Int] = []
  /// Touched elements that kept their place among the others: old and new position.
  var stayed: [(old: Int, new: Int)] = []

  init(removed: [Int], removedKeys: [ObjectKey]) {
    self.removed = removed
    self.removedKeys = removedKeys
  }
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
