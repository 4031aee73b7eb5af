import Foundation
import ShoalStorage

/// Where a `Results` takes its elements from.
enum ResultsSource {
  /// Every object of a class.
  case table(TableInfo)
  /// The elements of a list, set, map or linking-objects property of `owner`.
  case list(owner: ObjectBase, table: TableInfo, index: Int)
}

/// The query, sort and distinct steps of a `Results`, and its cached evaluation.
final class ResultsState {
  let core: RealmCore?
  let source: ResultsSource?
  let unmanaged: [Any]?
  var filters: [CompiledQuery] = []
  var sorts: [SortDescriptor] = []
  var distinct: [String] = []
  private var cached: [RowValue]?
  /// The decoded rows of `cached`'s objects, when the evaluation scanned them (nil otherwise).
  private var cachedRows: [[RowValue]]?
  private var cachedStamp: UInt64 = 0
  /// How many times the elements were evaluated in full (for tests: a notifier keeping them up
  /// to date from change records evaluates nothing).
  private(set) var evaluations = 0
  /// What lays out items a notifier planned (`adopt(pending:)`), and the view it planned them for.
  private var pending: (() -> Void)?
  private var pendingStamp: UInt64 = 0
  /// The evaluated elements of frozen results (set once, then only read, from any thread).
  private var frozenItems: [RowValue]?

  /// Evaluates the (frozen) collection now, so later reads write nothing; `live`'s evaluation
  /// is taken instead when it is of the version this frozen collection is at (no commit or
  /// refresh since, outside a write transaction), so freezing what was just read costs nothing.
  func freezeItems(from live: ResultsState? = nil) {
    frozenItems = nil
    live?.settle()
    if let live, let core = live.core, !core.isInWriteTransaction, let cached = live.cached,
      live.cachedStamp == core.stamp
    {
      frozenItems = cached
    } else {
      frozenItems = items()
    }
  }

  /// The Realm's `invalidations` when the collection was made.
  var madeAt: UInt64

  init(core: RealmCore?, source: ResultsSource?, unmanaged: [Any]?) {
    self.core = core
    self.source = source
    self.unmanaged = unmanaged
    madeAt = core?.invalidations ?? 0
  }

  /// Whether the Realm was invalidated since, or the object owning the collection deleted.
  var isInvalidated: Bool {
    guard let core else { return false }
    if core.invalidations != madeAt { return true }
    if case .list(let owner, _, _)? = source { return owner.isInvalidated }
    return false
  }

  func copy() -> ResultsState {
    let state = ResultsState(core: core, source: source, unmanaged: unmanaged)
    state.madeAt = madeAt
    state.filters = filters
    state.sorts = sorts
    state.distinct = distinct
    return state
  }

  /// The elements of unmanaged results, sorted and made distinct as asked (values are compared
  /// by their stored form; objects by their properties).
  func unmanagedItems() -> [Any] {
    guard let unmanaged else { return [] }
    func key(_ item: Any, _ path: String) -> RowValue {
      var value: Any = item
      for name in path.split(separator: ".") where name != "self" { value = Shoal.value(of: value, String(name)) }
      return unwrapOptional(value).flatMap { RowValue(scalar: $0) } ?? .null
    }
    var items = unmanaged
    if !distinct.isEmpty {
      var seen = Set<[RowValue]>()
      items = items.filter { item in seen.insert(distinct.map { key(item, $0) }).inserted }
    }
    if !sorts.isEmpty {
      items = items.enumerated().sorted { lhs, rhs in
        for descriptor in sorts {
          let a = key(lhs.element, descriptor.keyPath)
          let b = key(rhs.element, descriptor.keyPath)
          if QueryKeyPaths.sortsBefore(a, b) { return descriptor.ascending }
          if QueryKeyPaths.sortsBefore(b, a) { return !descriptor.ascending }
        }
        return lhs.offset < rhs.offset
      }.map(\.element)
    }
    return items
  }

  /// Whether `summary` may change which elements the collection holds: its class changed,
  /// or (for a property's collection) the owner's property was written.
  func sourceMayChange(_ summary: ChangeSummary) -> Bool {
    switch source {
    case .table(let table)?:
      return summary.changes(of: table.name) != nil
    case .list(let owner, let table, let index)?:
      guard let changes = summary.changes(of: table.name) else { return false }
      if changes.wasDeleted(owner._key) { return true }
      if table.properties[index].collection == .linkingObjects {
        return table.properties[index].objectClassName.map { summary.changes(of: $0) != nil } ?? false
      }
      return changes.mask(owner._key).map { ChangeSummary.bit($0, index) } ?? false
    case nil:
      return false
    }
  }

  /// The class of the elements when they are objects.
  var elementTable: TableInfo? {
    guard let core, let source else { return nil }
    switch source {
    case .table(let table): return table
    case .list(_, let table, let index):
      return table.properties[index].objectClassName.flatMap { core.table(named: $0) }
    }
  }

  /// The property of a collection of primitive values (nil for collections of objects):
  /// queries test each value as `self`.
  var primitiveElement: Property? {
    guard case .list(_, let table, let index)? = source, table.properties[index].objectClassName == nil else {
      return nil
    }
    return table.properties[index]
  }

  /// Whether the elements are the whole class with nothing to filter or reorder.
  var isWholeTable: Bool {
    if case .table = source, filters.isEmpty, sorts.isEmpty, distinct.isEmpty { return true }
    return false
  }

  /// Whether `items()` can be brought up to date from change records alone: every object of a
  /// class in key order, filtered or not (no sort, no distinct).
  var isIncremental: Bool {
    if updatesIncrementally, case .table = source, sorts.isEmpty, distinct.isEmpty, core?.isFrozen == false {
      return true
    }
    return false
  }

  /// Whether a notifier may bring `items()` up to date from change records instead of
  /// evaluating again (turned off by tests, which compare the two).
  var updatesIncrementally = true

  /// The order of sorted results that a notifier can keep up to date from change records
  /// (`SortedItems`): every object of a class that passes filters reading only its own row,
  /// sorted by properties of the class itself (not through links, no distinct). Nil otherwise.
  /// Only the objects a commit touches can enter, leave or move in such results.
  var maintainableOrder: RowOrder? {
    guard case .table(let table) = source, !sorts.isEmpty, distinct.isEmpty,
      core?.isFrozen == false, filters.allSatisfy({ RowFilter($0, table: table) != nil })
    else { return nil }
    var columns: [Int] = []
    for descriptor in sorts {
      guard let index = table.propertyIndex[descriptor.keyPath], table.properties[index].collection == .none,
        table.properties[index].objectClassName == nil
      else { return nil }
      columns.append(index)
    }
    return RowOrder(columns: columns, ascending: sorts.map(\.ascending))
  }

  /// Whether the object `key` of the element class passes every filter (current version).
  func matches(_ key: ObjectKey) -> Bool {
    guard let core, let table = elementTable else { return false }
    if filters.isEmpty { return core.exists(table: table, key: key) }
    guard let row = core.row(table, key) else { return false }
    return matches(key, row: row)
  }

  /// Whether the object `key`, whose current row is `row`, passes every filter.
  func matches(_ key: ObjectKey, row: [RowValue]) -> Bool {
    guard let core, let table = elementTable else { return false }
    if filters.isEmpty { return true }
    let context = core.queryContext
    context.setCurrent(table, key, row)
    do {
      for filter in filters where try !filter.matches(key, context: context) { return false }
      return true
    } catch {
      fatalError("\(error)")
    }
  }

  /// Installs items computed elsewhere (by a notifier) as the current evaluation.
  func adopt(_ items: [RowValue]) {
    guard let core, !core.isFrozen else { return }
    pending = nil
    cached = items
    cachedRows = nil
    cachedStamp = core.stamp
  }

  /// Items a notifier has planned but not yet laid out: `make` lays them out (and adopts them)
  /// at the first read, unless the notifier does first.
  func adopt(pending make: @escaping () -> Void) {
    guard let core, !core.isFrozen else { return }
    cached = nil
    cachedRows = nil
    pending = make
    pendingStamp = core.stamp
  }

  /// Lays out pending items now (see `adopt(pending:)`); drops them if the Realm's view has
  /// moved since they were planned (the next read evaluates the results again).
  func settle() {
    guard let make = pending else { return }
    pending = nil
    guard let core, pendingStamp == core.stamp else { return }
    make()
  }

  /// The stored elements (`.link(key)` for objects), evaluated lazily and cached until the
  /// Realm's view changes.
  func items() -> [RowValue] {
    if let frozenItems { return frozenItems }
    guard let core, let source else { return [] }
    if core.invalidations != madeAt { fatalError("Access to invalidated Results objects") }
    if pending != nil { settle() }
    if let cached, cachedStamp == core.stamp { return cached }
    let started = Log.isEnabled(.debug, .query) ? Store.wallClock() : 0
    defer {
      if started != 0 {
        Log.write(
          .debug, .query,
          "Evaluated \(elementTable?.name ?? "values") results (\(filters.count) filters, \(sorts.count) sorts) in "
            + "\((Store.wallClock() - started) / 1000) µs")
      }
    }
    let (items, rows) = evaluate(core: core, source: source)
    evaluations += 1
    // Frozen results may be read from several threads: they write no cache.
    if !core.isFrozen {
      cached = items
      cachedRows = rows
      cachedStamp = core.stamp
    }
    return items
  }

  /// The decoded row of the element at `position` of the cached evaluation, when the scan that
  /// made it kept the rows and the Realm's view has not moved since.
  func cachedRow(at position: Int) -> [RowValue]? {
    guard let core, let cachedRows, cachedStamp == core.stamp, position < cachedRows.count else { return nil }
    return cachedRows[position]
  }

}

/// The live, lazily evaluated result of a query (RealmSwift's `Results`).
///
/// A `Results` always reflects the current state of its Realm: evaluate it again and it sees
/// objects added since. Chain `filter`, `sorted` and `distinct` freely; nothing runs until an
/// element, `count` or an aggregate is read.
public struct Results<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible, Equatable,
  RealmDescribedCollection
{
  let state: ResultsState

  init(core: RealmCore, source: ResultsSource) {
    state = ResultsState(core: core, source: source, unmanaged: nil)
  }

  init(unmanaged: [Element]) {
    state = ResultsState(core: nil, source: nil, unmanaged: unmanaged)
  }

  init(state: ResultsState) { self.state = state }

  private var context: _AccessContext {
    if Element.self == DynamicObject.self, case .table(let table)? = state.source {
      return _AccessContext(state.core, dynamicTable: table)
    }
    return _AccessContext(state.core)
  }

  private func element(_ item: RowValue) -> Element { Element._rlmFromStored(_StoredValue(item), context) }

  /// The Realm and class of the objects the results hold, when `Element` is exactly that
  /// class: its elements are then made directly from their keys, with no conversion through
  /// `_rlmFromStored` and no dynamic cast (see `object(_:at:in:table:)`).
  private var directObjects: (core: RealmCore, table: TableInfo)? {
    guard Element.self is ObjectBase.Type, let core = state.core, let table = state.elementTable,
      let info = table.classInfo, ObjectIdentifier(info.type) == ObjectIdentifier(Element.self)
    else { return nil }
    return (core, table)
  }

  /// The object `item` links to, made by `core` of `table` (see `directObjects`), with the row
  /// the evaluation decoded for `position` when it has one.
  private func object(_ item: RowValue, at position: Int, in core: RealmCore, table: TableInfo) -> Element {
    guard case .link(let key) = item else { fatalError("Link to a missing \(table.name) object") }
    let object = core.object(table, key)
    if let row = state.cachedRow(at: position) {
      object._row = row
      object._rowStamp = core.stamp
    }
    // `core.object` made an instance of `table`'s class, which `directObjects` found to be
    // `Element` itself: the same reference, of the same type.
    return unsafeBitCast(object, to: Element.self)
  }

  /// The Realm of the results.
  public var realm: Realm? { state.core.map { Realm(core: $0) } }
  /// Whether the results can no longer be accessed.
  public var isInvalidated: Bool { state.isInvalidated }

  /// The number of elements.
  public var count: Int {
    if state.unmanaged != nil { return state.unmanagedItems().count }
    if state.isWholeTable, let core = state.core, case .table(let table) = state.source {
      return core.count(table.keyspace)
    }
    return state.items().count
  }

  /// The position of the first element.
  public var startIndex: Int { 0 }
  /// The collection's past-the-end position: one greater than the last valid subscript.
  public var endIndex: Int { count }
  /// The position immediately after `i`.
  public func index(after i: Int) -> Int { i + 1 }
  /// The position immediately before `i`.
  public func index(before i: Int) -> Int { i - 1 }

  /// The element at `position`; RealmSwift's texts for a negative or too large position.
  public subscript(position: Int) -> Element {
    if state.unmanaged != nil {
      let items = state.unmanagedItems()
      checkBounds(position, count: items.count)
      return items[position] as! Element  // safe: unmanaged results hold only Elements
    }
    let items = state.items()
    checkBounds(position, count: items.count)
    if let (core, table) = directObjects { return object(items[position], at: position, in: core, table: table) }
    let value = element(items[position])
    // An object the scan decoded starts with its row: its first read needs no lookup.
    if let row = state.cachedRow(at: position), let object = value as? ObjectBase, let core = state.core {
      object._row = row
      object._rowStamp = core.stamp
    }
    return value
  }

  /// Iterates the elements the results hold now: a loop visits each of them once, whatever it
  /// writes meanwhile (RealmSwift's snapshot enumeration).
  public func makeIterator() -> RLMIterator<Element> {
    if state.unmanaged != nil {
      return RLMIterator(state.unmanagedItems().map { $0 as! Element })  // safe: unmanaged results hold only Elements
    }
    let items = state.items()
    let state = self.state
    let stamp = state.core?.stamp
    if let (core, table) = directObjects {
      // `object` takes a decoded row only while the evaluation's rows are current.
      return RLMIterator(count: items.count) { position in object(items[position], at: position, in: core, table: table)
      }
    }
    return RLMIterator(count: items.count) { position in
      let value = element(items[position])
      // The rows the evaluation decoded belong to `items` only while nothing was written since.
      if let core = state.core, core.stamp == stamp, let row = state.cachedRow(at: position),
        let object = value as? ObjectBase
      {
        object._row = row
        object._rowStamp = core.stamp
      }
      return value
    }
  }

  /// The first element, or nil.
  public var first: Element? { isEmpty ? nil : self[0] }
  /// The last element, or nil.
  public var last: Element? {
    let n = count
    return n == 0 ? nil : self[n - 1]
  }

  /// Whether the results hold no elements.
  public var isEmpty: Bool { count == 0 }

  /// The position of `object`, or nil.
  public func index(of object: Element) -> Int? {
    if let object = object as? ObjectBase, state.core != nil {
      // An unmanaged object, or one of another class, is in no managed results.
      guard object._core != nil, object._table?.name == state.elementTable?.name else { return nil }
      return state.items().firstIndex { CoreLinks.key($0) == object._key }
    }
    return firstIndex { isSame($0, object) }
  }
  /// An array of the value of `key` of every element (`NSNull` for nil; `"self"` gives the
  /// elements), as RealmSwift's key-value coding gives it.
  public func value(forKey key: String) -> Any? { value(forKeyPath: key) }

  /// An array of the value at `keyPath` of every element, or the result of a collection operator:
  /// `@count`, `@min.property`, `@max.property`, `@sum.property`, `@avg.property` (numbers, nil
  /// for an empty collection but for `@sum`), `@unionOfObjects.property`,
  /// `@distinctUnionOfObjects.property`, `@unionOfArrays.property` and
  /// `@distinctUnionOfArrays.property`.
  public func value(forKeyPath keyPath: String) -> Any? {
    if keyPath.hasPrefix("@") { return collectionOperator(keyPath) }
    return kvcValues(self, keyPath: keyPath)
  }

  /// Sets `key` of every element (objects, in a write transaction).
  public func setValue(_ value: Any?, forKey key: String) {
    for element in Array(self) { (element as? ObjectBase)?[key] = value }
  }

  /// RealmSwift's collection operators (`RLMResults.valueForKeyPath:`).
  private func collectionOperator(_ keyPath: String) -> Any? {
    if keyPath == "@count" { return NSNumber(value: count) }
    let parts = keyPath.dropFirst().split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    let name = String(parts.first ?? "")
    let operators = [
      "min", "max", "sum", "avg", "unionOfObjects", "distinctUnionOfObjects", "unionOfArrays", "distinctUnionOfArrays",
    ]
    guard operators.contains(name) else {
      fatalError("Unsupported KVC collection operator found in key path '\(keyPath)'")
    }
    guard parts.count == 2, !parts[1].isEmpty else {
      fatalError("Missing key path for KVC collection operator \(name) in key path '\(keyPath)'")
    }
    let property = String(parts[1])
    if property.contains(".") { fatalError("Nested key paths are not supported yet for KVC collection operators.") }
    switch name {
    case "min": return aggregate(.min, property).flatMap(foundationValue)
    case "max": return aggregate(.max, property).flatMap(foundationValue)
    case "sum": return aggregate(.sum, property).flatMap(foundationValue) ?? NSNumber(value: 0)
    case "avg": return aggregate(.average, property).flatMap(foundationValue)
    case "unionOfObjects": return kvcValues(self, keyPath: property)
    case "distinctUnionOfObjects": return distinctValues(kvcValues(self, keyPath: property))
    default:
      if property == "self" {
        fatalError("self is not a valid key-path for a KVC array collection operator as '\(name)'.")
      }
      let union = kvcValues(self, keyPath: property).flatMap { ($0 as? [Any]) ?? [$0] }
      return name == "unionOfArrays" ? union : distinctValues(union)
    }
  }

  /// RealmSwift's layout: `Results<Type> <address> (`, then `\t[i] description` per element
  /// (at most 100), `)`.
  public var description: String {
    describeCollection("Results", realmTypeName(Element._rlmTypeInfo), state, map { $0 as Any? })
  }

  /// Whether both are the same results: copies of one `Results` value are equal; results
  /// made separately (another query, `filter` or `sorted`, even an identical one) are not.
  public static func == (lhs: Results, rhs: Results) -> Bool { lhs.state === rhs.state }

  // MARK: Queries

  /// The elements matching a Realm Query Language predicate, e.g. `"age > %@ AND name BEGINSWITH[c] %@"`.
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
    filter(predicateFormat, argumentList: args)
  }

  func filter(_ predicateFormat: String, argumentList args: [Any]) -> Results<Element> {
    guard let core = state.core, state.elementTable != nil || state.primitiveElement != nil else {
      fatalError("This method may only be called on RLMArray instances retrieved from an RLMRealm")
    }
    let compiled: CompiledQuery
    do {
      if let element = state.primitiveElement {
        compiled = try CompiledQuery(
          className: ValuesQueryContext.className, predicate: predicateFormat, arguments: args.map { $0 as Any? },
          context: ValuesQueryContext(element: element, inner: core.queryContext))
      } else {
        compiled = try CompiledQuery(
          className: state.elementTable?.name ?? "", predicate: predicateFormat, arguments: args.map { $0 as Any? },
          context: core.queryContext)
      }
    } catch {
      fatalError("\(error)")
    }
    let next = state.copy()
    next.filters.append(compiled)
    return Results(state: next)
  }

  /// The elements matching a type-safe query: `results.where { $0.age > 21 && $0.name.starts(with: "A") }`.
  public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
    let (predicate, arguments) = isIncluded(Query<Element>.root)._constructPredicate()
    return filter(predicate, argumentList: arguments)
  }

  /// The elements sorted by a property (a key path through to-one links, or "self" for values).
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
    sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
  }

  /// The elements sorted by several properties, the first deciding first.
  public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
    let descriptors = Array(sortDescriptors)
    // No descriptors: these very results, as RealmSwift returns them.
    if descriptors.isEmpty { return self }
    if let element = state.primitiveElement {
      // realm-core's rules for collections of values: one key path, `self`.
      let typeName = element.type == .decimal128 ? "decimal" : element.type.description
      if descriptors.count > 1 { fatalError("Cannot sort array of '\(typeName)' on more than one key path") }
      if descriptors[0].keyPath != "self" {
        fatalError(
          "Cannot sort on key path '\(descriptors[0].keyPath)': arrays of '\(typeName)' can only be sorted on 'self'")
      }
    }
    if let core = state.core {
      for descriptor in descriptors { _ = state.resolve(descriptor.keyPath, core: core) }
    }
    let next = state.copy()
    next.sorts = descriptors + next.sorts.filter { old in !descriptors.contains { $0.keyPath == old.keyPath } }
    return Results(state: next)
  }

  /// The first element for each distinct combination of the key paths' values.
  public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
    let paths = Array(keyPaths)
    for path in paths where path.contains("@") {
      fatalError("Cannot distinct on keypath '\(path)': KVC collection operators are not supported.")
    }
    if let core = state.core {
      for path in paths { _ = state.resolve(path, core: core) }
    }
    let next = state.copy()
    next.distinct += paths
    return Results(state: next)
  }

  // MARK: Aggregates

  /// The values of `property` of the elements (nil values left out), once the property has
  /// passed RealmSwift's checks for `aggregate`.
  private func propertyValues(_ property: String, for aggregate: CollectionAggregate) -> [RowValue] {
    state.checkAggregate(property, aggregate, elementType: Element._rlmTypeInfo)
    if state.unmanaged != nil {
      return state.unmanagedItems().compactMap { item in
        let value = property == "self" ? item : Shoal.value(of: item, property)
        return unwrapOptional(value).flatMap { value -> RowValue? in
          // A mixed value aggregates as the value it holds; `.none` has none.
          if let mixed = value as? AnyRealmValue {
            let stored = mixed._rlmToStored(_AccessContext(nil)).value
            return stored.isNull ? nil : stored
          }
          return RowValue(scalar: value)
        }
      }
    }
    guard let core = state.core else { return [] }
    let path = state.resolve(property, core: core)
    return state.items().map { state.value($0, path: path, core: core) }.filter { !$0.isNull }
  }

  /// The minimum, maximum, sum or average of `property`: nil when there are no values, but for
  /// the sum, which is then zero.
  func aggregate(_ aggregate: CollectionAggregate, _ property: String) -> RowValue? {
    let values = propertyValues(property, for: aggregate)
    switch aggregate {
    case .min, .max:
      guard var best = values.first else { return nil }
      for value in values.dropFirst()
      where QueryKeyPaths.sortsBefore(value, best) == (aggregate == .min) && value != best {
        best = value
      }
      return best
    case .sum:
      if values.contains(where: { if case .decimal = $0 { return true } else { return false } }) {
        var total = Decimal128()
        for case .decimal(let d) in values { total += d }
        return .decimal(total)
      }
      if values.allSatisfy({ if case .int = $0 { return true } else { return false } }) {
        var total: Int64 = 0
        for case .int(let i) in values { total &+= i }
        return .int(total)
      }
      return .double(values.reduce(0.0) { $0 + (QueryKeyPaths.double($1) ?? 0) })
    case .average:
      guard !values.isEmpty else { return nil }
      if case .decimal = values[0] {
        var total = Decimal128()
        for case .decimal(let d) in values { total += d }
        return .decimal(total / Decimal128(values.count))
      }
      let total = values.reduce(0.0) { $0 + (QueryKeyPaths.double($1) ?? 0) }
      return .double(total / Double(values.count))
    }
  }

  /// The smallest value of a property, or nil when there are no values.
  public func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
    aggregate(.min, property).flatMap(convert)
  }

  /// The largest value of a property, or nil when there are no values.
  public func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
    aggregate(.max, property).flatMap(convert)
  }

  /// The sum of a property (zero when there are no values). Mixed values sum as `Decimal128`,
  /// as Realm Core sums them (an unmanaged empty collection's sum is the integer zero).
  public func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType {
    if T.self == AnyRealmValue.self {
      let values = propertyValues(property, for: .sum)
      if values.isEmpty, state.core == nil { return convertZero() }
      var total = Decimal128()
      for value in values {
        switch value {
        case .int(let i): total += Decimal128(Int(i))
        case .double(let d): total += Decimal128(d)
        case .float(let f): total += Decimal128(Double(f))
        case .decimal(let d): total += d
        default: continue  // Realm Core leaves non-numeric mixed values out of a sum.
        }
      }
      return convert(.decimal(total)) ?? convertZero()
    }
    return aggregate(.sum, property).flatMap(convert) ?? convertZero()
  }

  /// The average of a property, or nil when there are no values.
  public func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType {
    aggregate(.average, property).flatMap(convert)
  }

  private func convert<T>(_ value: RowValue) -> T? {
    guard let persistable = T.self as? any _Persistable.Type else {
      // `NSNumber` and `NSDate`, as RealmSwift bridges aggregates.
      if T.self == NSDate.self, case .date(let date) = value {
        return NSDate(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate) as? T
      }
      return foundationValue(value) as? T ?? value.anyValue as? T
    }
    return persistable._rlmFromAny(value.anyValue) as? T
  }

  private func convertZero<T>() -> T {
    if let zero: T = convert(.int(0)) { return zero }
    fatalError("Cannot sum into \(T.self)")
  }
}
