import Foundation

/// The query engine's view of a Realm: its schema and the current transaction's rows.
///
/// While a filter scans a class, the row being tested is handed in (`current`), so evaluating
/// the predicate reads no row twice: a decoded row, or the raw bytes of one from which only the
/// columns the predicate reads are decoded. Other rows (linked objects) come from the core's
/// cache.
///
/// The current row's state is read for every value a filter reads, so it is exempt from dynamic
/// exclusivity checks: a context is used by one thread at a time (`Results` evaluation), and no
/// access to it overlaps another (none calls out while it lasts).
final class RealmQueryContext: QueryContext {
  let core: RealmCore
  @exclusivity(unchecked) private var currentTable: TableInfo?  // safe: see above, no overlapping access
  @exclusivity(unchecked) private var currentKey: ObjectKey = 0  // safe: see above
  @exclusivity(unchecked) private var currentRow: [RowValue]?  // safe: see above
  @exclusivity(unchecked) private var currentRaw: UnsafeRawBufferPointer?  // safe: see above
  /// Columns decoded from `currentRaw`, valid where `memoGeneration[i] == generation`.
  @exclusivity(unchecked) private var memo: [RowValue] = []  // safe: see above
  @exclusivity(unchecked) private var memoGeneration: [UInt32] = []  // safe: see above
  @exclusivity(unchecked) private var generation: UInt32 = 0  // safe: see above

  init(core: RealmCore) { self.core = core }

  func isEmbeddedClass(_ className: String) -> Bool? { core.table(named: className)?.isEmbedded }

  /// Makes `row` the one `queryValue` returns for (`table`, `key`).
  func setCurrent(_ table: TableInfo, _ key: ObjectKey, _ row: [RowValue]) {
    currentTable = table
    currentKey = key
    currentRow = row
    currentRaw = nil
  }

  /// Makes the encoded row `raw` the one `queryValue` reads for (`table`, `key`); the caller
  /// keeps `raw` valid until the next `setCurrent` or `clearCurrent`.
  func setCurrent(_ table: TableInfo, _ key: ObjectKey, raw: UnsafeRawBufferPointer) {
    if currentTable !== table || memo.count != table.properties.count {
      memo = Array(repeating: .null, count: table.properties.count)
      memoGeneration = Array(repeating: 0, count: table.properties.count)
      currentTable = table
    }
    currentKey = key
    if currentRow != nil { currentRow = nil }
    currentRaw = raw
    generation &+= 1
    if generation == 0 {
      generation = 1
      for i in memoGeneration.indices { memoGeneration[i] = 0 }
    }
  }

  func clearCurrent() {
    currentTable = nil
    currentRow = nil
    currentRaw = nil
  }

  private func currentValue(_ index: Int) throws -> RowValue? {
    if let row = currentRow { return index < row.count ? row[index] : .null }
    guard let raw = currentRaw, index < memo.count else { return nil }
    if memoGeneration[index] == generation { return memo[index] }
    let value = try RowCodec.column(index, of: raw)
    memo[index] = value
    memoGeneration[index] = generation
    return value
  }

  func queryProperty(_ name: String, of className: String) -> QueryProperty? {
    guard let table = core.table(named: className), let index = table.propertyIndex[name] else { return nil }
    var property = table.queryProperty(index)
    property.storageIndex = index
    return property
  }

  func queryValue(_ column: QueryColumn, of key: ObjectKey) throws -> RowValue {
    // The common case first: a column of the row being tested, found by its storage index.
    if key == currentKey, let current = currentTable, let index = column.property.storageIndex,
      column.property.collection != .linkingObjects, current.name == column.className,
      index < current.properties.count, current.properties[index].name == column.property.name,
      let value = try currentValue(index)
    {
      return value
    }
    return try queryValue(column.property, of: key, in: column.className)
  }

  func queryValue(_ property: QueryProperty, of key: ObjectKey, in className: String) throws -> RowValue {
    let table: TableInfo
    if let current = currentTable, current.name == className {
      table = current
    } else {
      guard let named = core.table(named: className) else { return .null }
      table = named
    }
    guard let index = table.column(of: property) else { return .null }
    if property.collection == .linkingObjects {
      return .list(core.linkingKeys(to: key, of: table, property: table.properties[index]).map { .link($0) })
    }
    if table === currentTable, key == currentKey, let value = try currentValue(index) { return value }
    guard let row = core.row(table, key), index < row.count else { return .null }
    return row[index]
  }

  /// The argument an unmanaged object becomes: a link to no class, which no stored link equals.
  static let unmanagedObject = RowValue.typedLink(className: "", key: 0)

  func queryArgument(_ argument: Any?) throws -> RowValue {
    guard let argument = unwrapOptional(argument), !(argument is NSNull) else { return .null }
    // A custom persistable value is queried as the value it is stored as.
    if let custom = argument as? any _CustomPersistable { return try queryArgument(custom._rlmPersistedAny) }
    if let object = argument as? ObjectBase {
      // An unmanaged object is in no Realm: as in RealmSwift, it equals nothing stored.
      guard object._core != nil, let table = object._table else { return RealmQueryContext.unmanagedObject }
      return .typedLink(className: table.name, key: object._key)
    }
    if let value = argument as? AnyRealmValue { return value._rlmToStored(_AccessContext(core)).value }
    return try RealmQueryContext.scalarArgument(argument) { try queryArgument($0) }
  }

  /// A query argument that is not an object: a value of a stored type, an enum by its raw
  /// value, or a sequence of arguments (each converted by `element`) for `IN`.
  static func scalarArgument(_ argument: Any, element: (Any) throws -> RowValue) throws -> RowValue {
    if let scalar = RowValue(scalar: argument) { return scalar }
    if let raw = argument as? any RawRepresentable, let scalar = RowValue(scalar: raw.rawValue) { return scalar }
    if let sequence = argument as? any Sequence, !(argument is String) {
      var items: [RowValue] = []
      for item in sequence { items.append(try element(item)) }
      return .list(items)
    }
    throw QueryError(.invalidArgument, "Unsupported query argument '\(argument)' of type \(type(of: argument)).")
  }
}

extension RealmCore {
  var queryContext: RealmQueryContext { RealmQueryContext(core: self) }
}

extension TableInfo {
  /// The column of `property`: its `storageIndex` when that names it (no lookup by name), else
  /// found by name.
  func column(of property: QueryProperty) -> Int? {
    if let index = property.storageIndex, index < properties.count, properties[index].name == property.name {
      return index
    }
    return propertyIndex[property.name]
  }
}
