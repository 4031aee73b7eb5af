import Foundation

/// Queries over unmanaged objects, in memory: what `index(matching:)` of an unmanaged `List`
/// evaluates its predicate with, as RealmSwift evaluates it on an unmanaged collection.
///
/// Each object the query reaches (the elements, then any object they link to) gets a key, its
/// position in `objects`; a link is `.link` of that key. Classes are found from the objects'
/// own types, so no schema or Realm is needed.
final class UnmanagedQueryContext: QueryContext {
  private(set) var objects: [ObjectBase] = []
  private var keys: [ObjectIdentifier: ObjectKey] = [:]
  private var tables: [String: TableInfo] = [:]

  /// A context for objects of `type` (none for a collection of values).
  init(_ type: ObjectBase.Type?) {
    if let type { table(for: type) }
  }

  /// The class name the elements are queried as.
  static func className(of type: ObjectBase.Type) -> String { ClassInfo.of(type).className }

  /// The key of `object`, giving it one when it has none yet.
  func key(for object: ObjectBase) -> ObjectKey {
    let id = ObjectIdentifier(object)
    if let key = keys[id] { return key }
    let key = ObjectKey(objects.count)
    objects.append(object)
    keys[id] = key
    _ = table(for: type(of: object))
    return key
  }

  @discardableResult
  private func table(for type: ObjectBase.Type) -> TableInfo {
    let info = ClassInfo.of(type)
    if let table = tables[info.className] { return table }
    let table = TableInfo(schema: info.objectSchema, classInfo: info)
    tables[info.className] = table
    // Link targets too, so that key paths through links resolve.
    for field in info.fields { if let target = field.typeInfo.objectType { self.table(for: target) } }
    return table
  }

  func queryProperty(_ name: String, of className: String) -> QueryProperty? {
    guard let table = tables[className], let index = table.propertyIndex[name] else { return nil }
    var property = table.queryProperty(index)
    property.storageIndex = index
    return property
  }

  func queryValue(_ column: QueryColumn, of key: ObjectKey) throws -> RowValue {
    try queryValue(column.property, of: key, in: column.className)
  }

  func queryValue(_ property: QueryProperty, of key: ObjectKey, in className: String) throws -> RowValue {
    guard Int(key) < objects.count else { return .null }
    let object = objects[Int(key)]
    // Linking objects of an unmanaged object are empty, as RealmSwift's are.
    guard property.collection != .linkingObjects, let field = object._classInfo.field(named: property.name) else {
      return property.collection == .none ? .null : .list([])
    }
    if field.typeInfo.objectType == nil, field.typeInfo.type != .any {
      return field.wrapperType.storedValue(at: object._fieldAddress(field), context: _AccessContext(nil))
    }
    return stored(object._unmanagedValue(field))
  }

  /// The stored form of a value read from an unmanaged object, with links as keys here.
  private func stored(_ value: Any?) -> RowValue {
    guard let value = unwrapOptional(value), !(value is NSNull) else { return .null }
    if let object = value as? ObjectBase { return .link(key(for: object)) }
    if let mixed = value as? AnyRealmValue {
      if case .object(let object) = mixed { return .link(key(for: object)) }
      return mixed._rlmToStored(_AccessContext(nil)).value
    }
    if let collection = value as? any _KVCCollection {
      if let items = collection._kvcContents as? [Any] { return .list(items.map { stored($0) }) }
      if let entries = collection._kvcContents as? [String: Any] {
        return .map(entries.sorted { $0.key < $1.key }.map { RowValue.MapEntry(key: $0.key, value: stored($0.value)) })
      }
    }
    return RowValue(scalar: value) ?? .null
  }

  func queryArgument(_ argument: Any?) throws -> RowValue {
    guard let argument = unwrapOptional(argument), !(argument is NSNull) else { return .null }
    // A custom persistable value is queried as the value it is stored as.
    if let custom = argument as? any _CustomPersistable { return try queryArgument(custom._rlmPersistedAny) }
    if let mixed = argument as? AnyRealmValue, case .object(let object) = mixed { return try queryArgument(object) }
    if let object = argument as? ObjectBase {
      // A managed object is never among unmanaged ones.
      return object._core == nil ? .link(key(for: object)) : RealmQueryContext.unmanagedObject
    }
    if let mixed = argument as? AnyRealmValue { return mixed._rlmToStored(_AccessContext(nil)).value }
    return try RealmQueryContext.scalarArgument(argument) { try queryArgument($0) }
  }
}

extension RealmCollection {
  /// The position of the first element of an unmanaged collection matching a predicate,
  /// evaluated in memory.
  func unmanagedIndex(matching predicateFormat: String, arguments: [Any]) -> Int? {
    let elements = Array(self)
    do {
      if let type = Element.self as? ObjectBase.Type {
        let context = UnmanagedQueryContext(type)
        let query = try CompiledQuery(
          className: UnmanagedQueryContext.className(of: type), predicate: predicateFormat,
          arguments: arguments.map { $0 as Any? }, context: context)
        for (position, element) in elements.enumerated() {
          guard let object = element as? ObjectBase else { continue }
          if try query.matches(context.key(for: object), context: context) { return position }
        }
        return nil
      }
      let info = Element._rlmTypeInfo
      let element = Property(
        name: "self", type: info.type, isOptional: info.isOptional, collection: .none, objectClassName: nil,
        linkOriginPropertyName: nil, isIndexed: false, isPrimary: false)
      let values = ValuesQueryContext(element: element, inner: UnmanagedQueryContext(nil))
      values.values = elements.map { $0._rlmToStored(_AccessContext(nil)).value }
      let query = try CompiledQuery(
        className: ValuesQueryContext.className, predicate: predicateFormat, arguments: arguments.map { $0 as Any? },
        context: values)
      return try values.values.indices.first { try query.matches(ObjectKey($0), context: values) }
    } catch {
      fatalError("\(error)")
    }
  }
}
