import Foundation
import ShoalStorage

// The query executor: evaluates a `ResultsState` (its source, filters, distinct and sorts) to
// the stored elements, choosing between an index lookup, a scan that tests encoded rows in
// place (in parallel for large classes), and a decoding scan; then applies distinct and sort.
// `ResultsState.items()` caches what it returns until the Realm's view changes.

extension ResultsState {
  /// The elements of `source` that pass the filters, distinct and sorted, with their decoded
  /// rows when the scan that found them kept them (sorts read keys from these).
  func evaluate(core: RealmCore, source: ResultsSource) -> (items: [RowValue], rows: [[RowValue]]?) {
    var items: [RowValue] = []
    // The decoded rows of `items`, when a scan produced them: sorts read their keys from these.
    var rows: [[RowValue]]?
    let context = core.queryContext
    func matches(_ key: ObjectKey, skipping skipped: Int? = nil) -> Bool {
      do {
        for (i, filter) in filters.enumerated() where i != skipped {
          if try !filter.matches(key, context: context) { return false }
        }
        return true
      } catch {
        fatalError("\(error)")
      }
    }
    switch source {
    case .table(let table):
      if let sorted = sortedByIndex(core: core, table: table) {
        // The whole class in the sort's order, from the index: no row is read.
        return (sorted.map { .link($0) }, nil)
      }
      if let (candidates, sortedAlready, decided) = indexCandidates(core: core, table: table) {
        // The index narrowed the class to a few objects; the filters still decide (but the
        // one whose range the index read exactly). Their rows are kept for the sort that
        // follows.
        var kept: [[RowValue]] = []
        kept.reserveCapacity(candidates.count)
        items.reserveCapacity(candidates.count)
        let tested = filters.count > (decided == nil ? 0 : 1)
        core.rows(table, keys: candidates) { key, row in
          if tested { context.setCurrent(table, key, row) }
          if !tested || matches(key, skipping: decided) {
            items.append(.link(key))
            kept.append(row)
          }
        }
        context.clearCurrent()
        if sortedAlready && distinct.isEmpty {
          // In the index's order, which is the sort's: nothing to sort.
          return (items, kept)
        }
        rows = kept
      } else if filters.isEmpty && sorts.isEmpty && distinct.isEmpty {
        items = core.allKeys(table).map { .link($0) }
      } else if !filters.isEmpty, case let rowFilters = filters.compactMap({ RowFilter($0, table: table) }),
        rowFilters.count == filters.count
      {
        // Every filter tests columns of the row against constants: each encoded row is tested
        // in place; rows kept are decoded and cached for the reads (and sort keys) that follow.
        let test: @Sendable (UnsafeRawBufferPointer) throws -> Bool
        if let tests = RowFilter.columnTests(rowFilters, table: table) {
          test = { raw in try tests.quickMatches(raw) ?? tests.matches(raw) }
        } else {
          test = { raw in
            for filter in rowFilters where try !filter.matches(raw) { return false }
            return true
          }
        }
        do {
          let matches = try core.scanMatching(table, test)
          items.reserveCapacity(matches.count)
          for match in matches {
            items.append(.link(match.key))
            core.cacheRow(match.row, table: table, key: match.key)
          }
          rows = matches.map(\.row)
        } catch {
          fatalError("\(error)")
        }
      } else {
        // One pass over the class's rows, each decoded once; rows kept are cached for the
        // property reads (and sort keys) that follow.
        do {
          var scanned: [[RowValue]] = []
          try core.scanRaw(table) { key, raw in
            context.setCurrent(table, key, raw: raw)
            if filters.isEmpty || matches(key) {
              items.append(.link(key))
              let row = try RowCodec.decode(buffer: raw)
              core.cacheRow(row, table: table, key: key)
              scanned.append(row)
            }
          }
          context.clearCurrent()
          rows = scanned
        } catch {
          fatalError("\(error)")
        }
      }
    case .list(let owner, _, let index):
      switch owner._storedValue(at: index) {
      case .list(let values): items = values
      case .map(let entries): items = entries.map(\.value)
      default: items = []
      }
      if !filters.isEmpty {
        if let element = primitiveElement {
          // Values: each is tested as the `self` of a one-property object keyed by position.
          let values = ValuesQueryContext(element: element, inner: context)
          values.values = items
          items = items.indices.compactMap { position in
            do {
              for filter in filters where try !filter.matches(ObjectKey(position), context: values) { return nil }
              return items[position]
            } catch {
              fatalError("\(error)")
            }
          }
        } else {
          items = items.filter { item in CoreLinks.key(item).map { matches($0) } ?? false }
        }
      }
    }
    if !distinct.isEmpty {
      items = applyDistinct(items, core: core)
      rows = nil
    }
    if !sorts.isEmpty {
      let order = applySort(items, rows: rows, core: core)
      items = order.map { items[$0] }
      rows = rows.map { rows in order.map { rows[$0] } }
    }
    return (items, rows)
  }

  /// Every object of `table` in the order of the one sort descriptor, read from the index of
  /// its property, when nothing filters or deduplicates them and that index orders values
  /// exactly as the sort does: nulls first, then `Date`s, `ObjectId`s, `UUID`s or `Bool`s by
  /// value, or integers when every one is within 2^53 (the index keys numbers as `Double`s).
  /// Equal values stay in object-key order either way, as the stable sort keeps them. Nil
  /// otherwise (strings, whose sort is not their byte order, among them).
  private func sortedByIndex(core: RealmCore, table: TableInfo) -> [ObjectKey]? {
    guard filters.isEmpty, distinct.isEmpty, sorts.count == 1, core.schema.hasOrderedIndexes,
      let index = table.propertyIndex[sorts[0].keyPath], table.indexedProperties.contains(index)
    else { return nil }
    let property = table.properties[index]
    let isInteger = property.type == .int
    switch property.type {
    case .int, .date, .objectId, .UUID, .bool: break
    default: return nil
    }
    guard property.collection == .none else { return nil }
    let ascending = sorts[0].ascending
    var keys: [ObjectKey] = []
    keys.reserveCapacity(core.count(table.keyspace))
    // Descending: where each run of entries with one value (the index key without its
    // 8-byte object key) starts, so the runs are reversed and each keeps its key order.
    var runStarts: [Int] = []
    var previous: [UInt8] = []
    var exact = true
    core.scan(table.indexKeyspace(index), range: .all) { key, _ in
      let value = key.dropLast(8)
      if isInteger, value.first == OrderedIndexKey.Kind.number.rawValue, !OrderedIndexKey.isExactInteger(value) {
        exact = false
        return false
      }
      if !ascending, runStarts.isEmpty || !value.elementsEqual(previous.dropLast(8)) {
        runStarts.append(keys.count)
        previous = key
      }
      keys.append(TableInfo.key(from: key.suffix(8)))
      return true
    }
    guard exact else { return nil }
    if ascending { return keys }
    var descending: [ObjectKey] = []
    descending.reserveCapacity(keys.count)
    var end = keys.count
    for start in runStarts.reversed() {
      descending += keys[start..<end]
      end = start
    }
    return descending
  }

  /// A range of an index is read when it holds at most this fraction (1/n) of the class.
  static let indexRangeMaximumShare = 8

  /// Candidate keys from an index when a filter can use one (the filters still run on them):
  /// the values an equality asks for, else a range of an ordered index.
  /// The candidates an index proposes, in the order given; whether that is the sort's order
  /// exactly; and the position of the filter the index decided alone (`IndexRange.exact`).
  private func indexCandidates(core: RealmCore, table: TableInfo)
    -> (keys: [ObjectKey], sortedAlready: Bool, decided: Int?)?
  {
    let ordered = core.schema.hasOrderedIndexes
    for filter in filters {
      guard let hint = filter.indexHint, let index = table.propertyIndex[hint.property.name],
        index == table.primaryKeyIndex || (ordered && table.indexedProperties.contains(index))
      else { continue }
      var keys: [ObjectKey] = []
      for value in hint.values { keys += core.keys(whereIndexed: index, equals: value, in: table) }
      return (Array(Set(keys)).sorted(), false, nil)
    }
    guard ordered else { return nil }
    for (position, filter) in filters.enumerated() {
      guard let hint = filter.indexRange, let index = table.propertyIndex[hint.property.name],
        table.indexedProperties.contains(index)
      else { continue }
      let decided = hint.exact ? position : nil
      let range: KeyRange?
      if let prefix = hint.prefix {
        range = OrderedIndexKey.range(beginningWith: prefix)
      } else {
        range = OrderedIndexKey.range(from: hint.lower, to: hint.upper)
      }
      guard let range else { continue }
      // Reading candidates one by one costs more than testing rows in a scan (in parallel)
      // once the range holds much of the class; the tree's counts tell without reading.
      let space = table.indexKeyspace(index)
      guard core.count(space, in: range) <= core.count(space) / Self.indexRangeMaximumShare else { return nil }
      let keys = core.keys(whereIndexed: index, in: range, of: table)
      // In index order they are nearly sorted by the property (ties by object key, as a
      // sort keeps them), so a sort by it has almost nothing to do; else (and before a
      // `distinct`, which keeps the first of each) in key order, as a scan finds them.
      if distinct.isEmpty, let first = sorts.first, first.ascending, first.keyPath == hint.property.name {
        // A date's key is its exact value and ties are in key order: sorted exactly, when
        // the sort has no other descriptor to break ties with.
        let exact = sorts.count == 1 && table.properties[index].type == .date
        return (keys, exact, decided)
      }
      return (keys.sorted(), false, decided)
    }
    return nil
  }

  /// The value of a key path of an element (`self` for primitive elements).
  func value(_ item: RowValue, path: [QueryProperty], core: RealmCore) -> RowValue {
    guard let table = elementTable, let key = CoreLinks.key(item) else { return item }
    do {
      return try QueryKeyPaths.value(atPath: path, of: key, in: table.name, context: core.queryContext)
    } catch {
      fatalError("\(error)")
    }
  }

  func resolve(_ keyPath: String, core: RealmCore) -> [QueryProperty] {
    guard let table = elementTable, keyPath != "self" else { return [] }
    do {
      return try QueryKeyPaths.resolve(keyPath, from: table.name, context: core.queryContext)
    } catch {
      fatalError("\(error)")
    }
  }

  /// The positions of `items` in the order of the sort descriptors (ties in their order).
  /// `rows`, when given, are the items' decoded rows: a key path that is one property of the
  /// class is read from them, not looked up.
  private func applySort(_ items: [RowValue], rows: [[RowValue]]?, core: RealmCore) -> [Int] {
    let paths = sorts.map { resolve($0.keyPath, core: core) }
    func keys(_ path: [QueryProperty]) -> [RowValue] {
      if let rows, let table = elementTable, path.count == 1, path[0].collection == .none,
        let column = table.column(of: path[0])
      {
        return rows.map { column < $0.count ? $0[column] : .null }
      }
      return items.map { value($0, path: path, core: core) }
    }
    // As in Realm Core, an element whose path passes through a nil link sorts after every
    // other element when ascending (before them when descending), and two such elements are
    // ordered by the next descriptor.
    // Only an element whose key is null can have met a nil link on the way.
    let columns = paths.map(keys)
    let broken = zip(paths, columns).map { path, keys -> [Bool]? in
      guard path.count > 1 else { return nil }
      let marks = items.indices.map { keys[$0].isNull && passesThroughNilLink(items[$0], path: path, core: core) }
      return marks.contains(true) ? marks : nil
    }
    if paths.count == 1, broken[0] == nil, let order = Self.nativeOrder(columns[0], ascending: sorts[0].ascending) {
      return order
    }
    return items.indices.sorted { lhs, rhs in
      for (i, descriptor) in sorts.enumerated() {
        if let marks = broken[i], marks[lhs] || marks[rhs] {
          if marks[lhs] && marks[rhs] { continue }
          return descriptor.ascending != marks[lhs]
        }
        let a = columns[i][lhs]
        let b = columns[i][rhs]
        if QueryKeyPaths.sortsBefore(a, b) { return descriptor.ascending }
        if QueryKeyPaths.sortsBefore(b, a) { return !descriptor.ascending }
      }
      return lhs < rhs
    }
  }

  /// The positions of `keys` in sorted order (ties in their order), compared natively when
  /// every key is a `Double` or every key an `Int`: the order `QueryKeyPaths.sortsBefore`
  /// gives (NaN before every number), without comparing `RowValue`s. Nil for other keys.
  static func nativeOrder(_ keys: [RowValue], ascending: Bool) -> [Int]? {
    var order = Array(keys.indices)
    if case .double? = keys.first {
      var doubles: [Double] = []
      doubles.reserveCapacity(keys.count)
      for key in keys {
        guard case .double(let d) = key else { return nil }
        doubles.append(d)
      }
      order.sort { i, j in
        let a = doubles[i]
        let b = doubles[j]
        if a.isNaN || b.isNaN { return a.isNaN != b.isNaN ? a.isNaN == ascending : i < j }
        return a != b ? (a < b) == ascending : i < j
      }
      return order
    }
    if case .int? = keys.first {
      var ints: [Int64] = []
      ints.reserveCapacity(keys.count)
      for key in keys {
        guard case .int(let i) = key else { return nil }
        ints.append(i)
      }
      order.sort { i, j in ints[i] != ints[j] ? (ints[i] < ints[j]) == ascending : i < j }
      return order
    }
    return nil
  }

  /// The first element of each distinct combination of the key paths' values. As in Realm
  /// Core, an element whose path passes through a nil link has no value there and is left out.
  private func applyDistinct(_ items: [RowValue], core: RealmCore) -> [RowValue] {
    let paths = distinct.map { resolve($0, core: core) }
    var seen = Set<[RowValue]>()
    return items.filter { item in
      if paths.contains(where: { passesThroughNilLink(item, path: $0, core: core) }) { return false }
      return seen.insert(paths.map { value(item, path: $0, core: core) }).inserted
    }
  }

  /// Whether following `path` from `item` meets a nil link before its last property.
  private func passesThroughNilLink(_ item: RowValue, path: [QueryProperty], core: RealmCore) -> Bool {
    guard path.count > 1 else { return false }
    return (1..<path.count).contains { value(item, path: Array(path[..<$0]), core: core).isNull }
  }
}
