import Foundation
import ShoalStorage

// RealmSwift's dynamic API: objects read and written by class and property name, for classes
// the program declares and for classes only the file knows.

extension Realm {
  /// Every object of the class named `typeName`, as `DynamicObject`s read by property name
  /// (`object["name"]`, `object.name`).
  public func dynamicObjects(_ typeName: String) -> Results<DynamicObject> {
    Results(core: core, source: .table(dynamicTable(typeName)))
  }

  /// The object of the class named `typeName` with primary key `key`, or nil.
  public func dynamicObject(ofType typeName: String, forPrimaryKey key: Any) -> DynamicObject? {
    let table = dynamicTable(typeName)
    guard let pk = table.primaryKeyIndex else { fatalError("'\(typeName)' does not have a primary key") }
    guard let stored = RowValue(scalar: key) ?? (key is NSNull ? .null : nil),
      let objectKey = core.key(forPrimaryKey: stored, in: table)
    else {
      if RowValue(scalar: key) == nil, !(key is NSNull) {
        fatalError(
          "Invalid value '\(key)' of type '\(type(of: key))' for '\(table.properties[pk].type)' primary key "
            + "property '\(typeName).\(table.properties[pk].name)'")
      }
      return nil
    }
    return core.dynamicObject(table, objectKey)
  }

  /// Creates an object of the class named `typeName` from `value` (a dictionary of property
  /// names, or an array in property order); with `update` other than `.error`, updates the
  /// object with the same primary key instead when there is one.
  @discardableResult
  public func dynamicCreate(_ typeName: String, value: Any = [String: Any](), update: UpdatePolicy = .error)
    -> DynamicObject
  {
    core.requireWrite(RealmCore.objectsNeedWrite)
    let table = dynamicTable(typeName)
    if table.isEmbedded { fatalError("Embedded objects cannot be created directly") }
    var values: [String: Any] = [:]
    if let dictionary = value as? [String: Any] {
      values = dictionary
    } else if let array = value as? [Any] {
      for (property, item) in zip(table.properties, array) { values[property.name] = item }
    }
    if update != .error, let pk = table.primaryKeyIndex, let given = values[table.properties[pk].name],
      let stored = RowValue(scalar: given), let existing = core.key(forPrimaryKey: stored, in: table)
    {
      let object = core.dynamicObject(table, existing)
      for (name, item) in values where name != table.properties[pk].name { object[name] = item }
      return object
    }
    var row = table.defaultRow
    for (name, item) in values {
      guard let index = table.propertyIndex[name] else {
        fatalError(Realm.Error.invalidProperty(name, className: typeName).description)
      }
      row[index] = core.dynamicStoredValue(item, for: table.properties[index])
    }
    return core.dynamicObject(table, core.createDynamic(table, row: row))
  }

  private func dynamicTable(_ typeName: String) -> TableInfo {
    guard let table = core.table(named: typeName) else {
      fatalError("Object type '\(typeName)' is not managed by the Realm.")
    }
    return table
  }
}

extension RealmCore {
  /// The object `key` of `table` as a `DynamicObject`, whether or not the program declares
  /// its class.
  func dynamicObject(_ table: TableInfo, _ key: ObjectKey) -> DynamicObject {
    let object = DynamicObject()
    object._makeManaged(core: self, table: table, key: key, epoch: invalidations)
    object._dynamic = ManagedDynamicRow(core: self, table: table, key: key)
    return object
  }

  /// The stored form of a value given to a dynamic object: scalars, `DynamicObject`s and
  /// objects of this Realm (links), arrays (lists) and dictionaries (maps).
  /// The stored form of `value` for `property`: as `dynamicStoredValue(_:)`, except that a
  /// dictionary given for an embedded object (alone, in a list or set, or as a map's value)
  /// becomes a new embedded object, as RealmSwift's dynamic API makes one.
  func dynamicStoredValue(_ value: Any?, for property: Property) -> RowValue {
    guard property.type == .object, property.collection != .linkingObjects,
      let target = property.objectClassName.flatMap({ table(named: $0) }), target.isEmbedded
    else { return dynamicStoredValue(value) }
    let value = (value as? any _KVCCollection)?._kvcContents ?? value
    func embedded(_ item: Any?) -> RowValue {
      guard let fields = item as? [String: Any] else { return dynamicStoredValue(item) }
      var row = target.defaultRow
      for (name, field) in fields {
        guard let index = target.propertyIndex[name] else {
          fatalError(Realm.Error.invalidProperty(name, className: target.name).description)
        }
        row[index] = dynamicStoredValue(field, for: target.properties[index])
      }
      return .link(createDynamic(target, row: row))
    }
    if property.isMap, let map = value as? [String: Any] {
      return .map(map.sorted { $0.key < $1.key }.map { RowValue.MapEntry(key: $0.key, value: embedded($0.value)) })
    }
    if property.isArray || property.isSet, let items = value as? [Any] { return .list(items.map(embedded)) }
    return embedded(value)
  }

  func dynamicStoredValue(_ value: Any?) -> RowValue {
    // A collection given whole is stored by its contents (it may be the property's own list).
    let value = (value as? any _KVCCollection)?._kvcContents ?? value
    return RowValue(dynamic: value) { item in
      guard let object = item as? ObjectBase, object._core != nil, object._table != nil else { return nil }
      return linkValue(to: object)
    }
  }
}

/// Property access of a managed `DynamicObject`: reads the current row, writes through the
/// Realm's write transaction like any object.
final class ManagedDynamicRow: DynamicAccess {
  let core: RealmCore
  let table: TableInfo
  let key: ObjectKey

  init(core: RealmCore, table: TableInfo, key: ObjectKey) {
    self.core = core
    self.table = table
    self.key = key
  }

  var className: String { table.name }

  private func index(_ name: String) -> Int {
    guard let index = table.propertyIndex[name] else {
      fatalError(Realm.Error.invalidProperty(name, className: table.name).description)
    }
    return index
  }

  func value(of object: DynamicObject, _ name: String) -> Any? {
    let index = index(name)
    guard let row = core.row(table, key) else {
      fatalError("Object has been deleted or invalidated.")
    }
    guard index < row.count else { return nil }
    let property = table.properties[index]
    // Collections of objects come back live, their elements as `DynamicObject`s, as RealmSwift's
    // `DynamicObject` subscript returns them.
    if property.type == .object, let target = property.objectClassName.flatMap(core.table(named:)) {
      switch property.collection {
      case .list: return List<DynamicObject>(parent: object, index: index, dynamicTable: target)
      case .set: return MutableSet<DynamicObject>(parent: object, index: index, dynamicTable: target)
      case .map: return Map<String, DynamicObject?>(parent: object, index: index, dynamicTable: target)
      case .none, .linkingObjects: break
      }
    }
    return anyValue(row[index], property: property)
  }

  private func anyValue(_ value: RowValue, property: Property) -> Any? {
    value.anyValue { link in
      switch link {
      case .link(let target):
        return property.objectClassName.flatMap(core.table(named:)).map { core.dynamicObject($0, target) }
      case .typedLink(let name, let target):
        return core.table(named: name).map { core.dynamicObject($0, target) }
      default: return nil
      }
    }
  }

  func setValue(_ value: Any?, of object: DynamicObject, _ name: String) {
    core.requireWrite()
    let index = index(name)
    if table.primaryKeyIndex == index {
      fatalError("Primary key can't be changed to '\(describeValue(value))' after an object is inserted.")
    }
    core.setStoredValue(
      core.dynamicStoredValue(value, for: table.properties[index]), of: object, table: table, at: index)
  }
}
