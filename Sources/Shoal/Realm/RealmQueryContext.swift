import Foundation

/// The query engine's view of a Realm: its schema and the current transaction's rows.
struct RealmQueryContext: QueryContext {
  let core: RealmCore

  func queryProperty(_ name: String, of className: String) -> QueryProperty? {
    guard let table = core.table(named: className), let index = table.propertyIndex[name] else { return nil }
    return table.queryProperty(index)
  }

  func queryValue(_ property: QueryProperty, of key: ObjectKey, in className: String) throws -> RowValue {
    guard let table = core.table(named: className), let index = table.propertyIndex[property.name] else {
      return .null
    }
    if property.collection == .linkingObjects {
      return .list(core.linkingKeys(to: key, of: table, property: table.properties[index]).map { .link($0) })
    }
    guard let row = core.row(table, key), index < row.count else { return .null }
    return row[index]
  }

  func queryArgument(_ argument: Any?) throws -> RowValue {
    guard let argument = unwrapOptional(argument), !(argument is NSNull) else { return .null }
    if let object = argument as? ObjectBase {
      guard object._core != nil, let table = object._table else {
        throw QueryError(.invalidArgument, "Unmanaged object \(type(of: object)) cannot be used as a query argument.")
      }
      return .typedLink(className: table.name, key: object._key)
    }
    if let value = argument as? AnyRealmValue { return value._rlmToStored(_AccessContext(core)).value }
    if let scalar = RowValue(scalar: argument) { return scalar }
    if let raw = argument as? any RawRepresentable, let scalar = RowValue(scalar: raw.rawValue) { return scalar }
    if let sequence = argument as? any Sequence, !(argument is String) {
      var items: [RowValue] = []
      for item in sequence { items.append(try queryArgument(item)) }
      return .list(items)
    }
    throw QueryError(.invalidArgument, "Unsupported query argument '\(argument)' of type \(type(of: argument)).")
  }
}

extension RealmCore {
  var queryContext: RealmQueryContext { RealmQueryContext(core: self) }
}
