import Foundation
import ShoalStorage

/// An object accessed by property name, without a Swift class: the objects a migration hands
/// out (`MigrationObject`) and objects of classes the program does not declare.
///
/// ```swift
/// migration.enumerateObjects(ofType: "Person") { old, new in
///   new?["fullName"] = "\(old?["first"] ?? "") \(old?["last"] ?? "")"
/// }
/// ```
@dynamicMemberLookup
public final class DynamicObject: Object {
  /// Reads or writes a property by name.
  public subscript(dynamicMember member: String) -> Any? {
    get { self[member] }
    set { self[member] = newValue }
  }

  /// Reads a property by name (RealmSwift's key-value coding fallback for dynamic objects).
  public func value(forUndefinedKey key: String) -> Any? { self[key] }

  /// Writes a property by name (RealmSwift's key-value coding fallback for dynamic objects).
  public func setValue(_ value: Any?, forUndefinedKey key: String) { self[key] = value }
}

/// The objects handed to a migration block.
public typealias MigrationObject = DynamicObject

/// The block `Migration.enumerateObjects(ofType:_:)` calls with each object's old and new form.
public typealias MigrationObjectEnumerateBlock = (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void

/// The block run when a Realm is opened with a higher `schemaVersion` than its file's
/// (RealmSwift's global name; also `Realm.MigrationBlock`).
public typealias MigrationBlock = Realm.MigrationBlock

/// Reads and writes properties of a dynamic object by name.
protocol DynamicAccess: AnyObject {
  var className: String { get }
  func value(of object: DynamicObject, _ name: String) -> Any?
  func setValue(_ value: Any?, of object: DynamicObject, _ name: String)
}

/// Performs a schema migration (RealmSwift's `Migration`): handed to the migration block when a
/// Realm opens with a higher `schemaVersion` than its file's, inside the opening transaction.
public final class Migration {
  /// The schema before the migration.
  public let oldSchema: Schema
  /// The schema after the migration.
  public var newSchema: Schema { Schema(Array(newSchemas.values)) }

  let write: WriteTransaction
  let oldSchemas: [String: ObjectSchema]
  var newSchemas: [String: ObjectSchema]
  /// Rows of changed classes as they were before the migration, by object key.
  var oldRows: [String: [ObjectKey: [RowValue]]]
  private var deletedKeys: [String: Set<ObjectKey>] = [:]
  /// The classes the program declares (their schema stays even when their data is deleted).
  private let codeClassNames: Set<String>
  private var renames: [(type: String, from: String, to: String)] = []
  private var failure: (any Error)?

  init(
    write: WriteTransaction, oldSchemas: [String: ObjectSchema], newSchemas: [String: ObjectSchema],
    oldRows: [String: [ObjectKey: [RowValue]]], classes: [ClassInfo]
  ) {
    self.write = write
    self.oldSchemas = oldSchemas
    self.newSchemas = newSchemas
    self.oldRows = oldRows
    self.oldSchema = Schema(Array(oldSchemas.values))
    self.codeClassNames = Set(classes.map(\.className))
  }

  private func record(_ error: any Error) { if failure == nil { failure = error } }

  private func table(_ name: String, old: Bool) -> TableInfo? {
    (old ? oldSchemas[name] : newSchemas[name]).map { TableInfo(schema: $0, classInfo: nil) }
  }

  /// Calls `block` for every object of `typeName` with its old and new versions (either nil
  /// when the class does not exist in that schema).
  public func enumerateObjects(ofType typeName: String, _ block: MigrationObjectEnumerateBlock) {
    let oldTable = table(typeName, old: true)
    let newTable = table(typeName, old: false)
    guard let any = newTable ?? oldTable else { return }
    var keys: [ObjectKey] = []
    do {
      if try write.hasKeyspace(any.keyspace) {
        let cursor = try write.cursor(in: any.keyspace)
        while let (key, _) = try cursor.next() { keys.append(TableInfo.key(from: key)) }
      }
    } catch {
      record(error)
      return
    }
    for key in keys where !(deletedKeys[typeName]?.contains(key) ?? false) {
      let old = oldTable.map { MigrationRow(migration: self, table: $0, key: key, isOld: true).object() }
      let new = newTable.map { MigrationRow(migration: self, table: $0, key: key, isOld: false).object() }
      block(old, new)
    }
  }

  /// Creates an object of `typeName` in the new schema from a dictionary or array of values.
  @discardableResult
  public func create(_ typeName: String, value: Any = [Any]()) -> MigrationObject {
    guard let table = table(typeName, old: false) else {
      fatalError("Object type '\(typeName)' is not in the new schema.")
    }
    do {
      let nextKey = Array(("next/" + typeName).utf8)
      var key: ObjectKey = 1
      if let bytes = try write.get(nextKey, in: RealmSchema.metaKeyspace) { key = TableInfo.key(from: bytes) }
      if try write.hasKeyspace(table.keyspace) {
        let cursor = try write.cursor(in: table.keyspace, reverse: true)
        if let (last, _) = try cursor.next(), TableInfo.key(from: last) < ObjectKey.max {
          key = max(key, TableInfo.key(from: last) + 1)
        }
        // Keys taken from primary keys may sit anywhere (the table then falls back to an index).
        while try write.get(TableInfo.keyBytes(key), in: table.keyspace) != nil { key &+= 1 }
      }
      try write.put(TableInfo.keyBytes(key + 1), forKey: nextKey, in: RealmSchema.metaKeyspace)
      try write.ensureKeyspace(table.keyspace)
      try write.put(RowCodec.encode(table.defaultRow), forKey: TableInfo.keyBytes(key), in: table.keyspace)
      let object = MigrationRow(migration: self, table: table, key: key, isOld: false).object()
      if let dictionary = value as? [String: Any] {
        for (name, item) in dictionary { object[name] = item }
      } else if let array = value as? [Any] {
        for (property, item) in zip(table.properties, array) { object[property.name] = item }
      }
      return object
    } catch {
      record(error)
      return MigrationRow(migration: self, table: table, key: 0, isOld: false).object()
    }
  }

  /// Deletes an object (from the new schema's data).
  public func delete(_ object: MigrationObject) {
    guard let access = object._dynamic as? MigrationRow else { return }
    do {
      if let table = self.table(access.table.name, old: false) {
        _ = try write.delete(TableInfo.keyBytes(access.key), in: table.keyspace)
      }
      deletedKeys[access.table.name, default: []].insert(access.key)
    } catch {
      record(error)
    }
  }

  /// Deletes every object of `typeName` and, when the class is no longer in the program, the
  /// class itself. True when there was something to delete.
  @discardableResult
  public func deleteData(forType typeName: String) -> Bool {
    let table = TableInfo(
      schema: newSchemas[typeName] ?? oldSchemas[typeName]
        ?? ObjectSchema(className: typeName, isEmbedded: false, properties: []),
      classInfo: nil)
    do {
      guard try write.hasKeyspace(table.keyspace) else { return false }
      try write.clear(table.keyspace)
      for space in [table.primaryKeyspace] + table.indexedProperties.map(table.indexKeyspace)
      where try write.hasKeyspace(space) {
        try write.dropKeyspace(space)
      }
      if !codeClassNames.contains(typeName) {
        try write.dropKeyspace(table.keyspace)
        _ = try write.delete(Array(typeName.utf8), in: RealmSchema.schemaKeyspace)
        newSchemas[typeName] = nil
      }
      return true
    } catch {
      record(error)
      return false
    }
  }

  /// Carries the values of `oldName` over to `newName` for every object of `typeName`.
  public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
    guard let old = oldSchemas[typeName], let oldIndex = old.allProperties.firstIndex(where: { $0.name == oldName })
    else { fatalError("Cannot rename property '\(typeName).\(oldName)' because it does not exist.") }
    guard let new = newSchemas[typeName], let newIndex = new.allProperties.firstIndex(where: { $0.name == newName })
    else {
      fatalError(
        "Renamed property '\(typeName).\(newName)' does not exist.")
    }
    renames.append((typeName, oldName, newName))
    let table = TableInfo(schema: new, classInfo: nil)
    for (key, oldRow) in oldRows[typeName] ?? [:] where oldIndex < oldRow.count {
      do {
        guard let bytes = try write.get(TableInfo.keyBytes(key), in: table.keyspace) else { continue }
        var row = try RowCodec.decode(bytes)
        row[newIndex] = oldRow[oldIndex]
        try write.put(RowCodec.encode(row), forKey: TableInfo.keyBytes(key), in: table.keyspace)
      } catch {
        record(error)
      }
    }
  }

  func finish() throws {
    if let failure { throw failure }
  }
}

/// The dynamic access of a migration's old or new object.
final class MigrationRow: DynamicAccess {
  unowned let migration: Migration
  let table: TableInfo
  let key: ObjectKey
  let isOld: Bool

  init(migration: Migration, table: TableInfo, key: ObjectKey, isOld: Bool) {
    self.migration = migration
    self.table = table
    self.key = key
    self.isOld = isOld
  }

  var className: String { table.name }

  func object() -> DynamicObject {
    let object = DynamicObject()
    object._dynamic = self
    return object
  }

  private func row() -> [RowValue] {
    if isOld, let row = migration.oldRows[table.name]?[key] { return row }
    do {
      guard let bytes = try migration.write.get(TableInfo.keyBytes(key), in: table.keyspace) else { return [] }
      return try RowCodec.decode(bytes)
    } catch {
      return []
    }
  }

  func value(of object: DynamicObject, _ name: String) -> Any? {
    guard let index = table.propertyIndex[name] else {
      fatalError(Realm.Error.invalidProperty(name, className: table.name).description)
    }
    let row = row()
    guard index < row.count else { return nil }
    return anyValue(row[index], property: table.properties[index])
  }

  private func anyValue(_ value: RowValue, property: Property) -> Any? {
    value.anyValue { link in
      guard case .link(let key) = link, let target = property.objectClassName,
        let schema = isOld ? migration.oldSchemas[target] : migration.newSchemas[target]
      else { return nil }
      return MigrationRow(
        migration: migration, table: TableInfo(schema: schema, classInfo: nil), key: key, isOld: isOld
      )
      .object()
    }
  }

  func setValue(_ value: Any?, of object: DynamicObject, _ name: String) {
    guard !isOld else { fatalError("Cannot modify the old object of a migration; modify the new object.") }
    guard let index = table.propertyIndex[name] else {
      fatalError(Realm.Error.invalidProperty(name, className: table.name).description)
    }
    var row = row()
    guard index < row.count else { return }
    row[index] = storedValue(value)
    do {
      try migration.write.put(RowCodec.encode(row), forKey: TableInfo.keyBytes(key), in: table.keyspace)
    } catch {
      fatalError("Migration write failed: \(error)")
    }
  }

  private func storedValue(_ value: Any?) -> RowValue {
    let value = (value as? any _KVCCollection)?._kvcContents ?? value
    return RowValue(dynamic: value) { object in
      ((object as? DynamicObject)?._dynamic as? MigrationRow).map { .link($0.key) }
    }
  }
}

extension RowValue {
  /// The plain Swift value, with lists as arrays and maps as dictionaries, and each link as
  /// `link` makes it.
  func anyValue(link: (RowValue) -> Any?) -> Any? {
    switch self {
    case .link, .typedLink: return link(self)
    case .list(let items): return items.map { $0.anyValue(link: link) as Any }
    case .map(let entries):
      return Dictionary(entries.map { ($0.key, $0.value.anyValue(link: link) as Any) }, uniquingKeysWith: { a, _ in a })
    default: return anyValue
    }
  }

  /// The stored form of a value given by name (the dynamic and migration APIs): scalars,
  /// arrays (lists), dictionaries (maps), and objects as `link` makes them (nil: not one).
  init(dynamic value: Any?, link: (Any) -> RowValue?) {
    guard let value, !(value is NSNull) else {
      self = .null
      return
    }
    if let linked = link(value) {
      self = linked
    } else if let scalar = RowValue(scalar: value) {
      self = scalar
    } else if let array = value as? [Any] {
      self = .list(array.map { RowValue(dynamic: $0, link: link) })
    } else if let dictionary = value as? [String: Any] {
      self = .map(
        dictionary.sorted { $0.key < $1.key }.map {
          RowValue.MapEntry(key: $0.key, value: RowValue(dynamic: $0.value, link: link))
        })
    } else {
      self = .null
    }
  }

  /// The plain Swift value of a scalar (`Int` for integers), nil for null and links.
  var anyValue: Any? {
    switch self {
    case .null: return nil
    case .bool(let v): return v
    case .int(let v): return Int(v)
    case .float(let v): return v
    case .double(let v): return v
    case .string(let v): return v
    case .data(let v): return v
    case .date(let v): return v
    case .uuid(let v): return v
    case .objectId(let v): return v
    case .decimal(let v): return v
    case .link, .typedLink: return nil
    case .list(let items): return items.map { $0.anyValue as Any }
    case .map(let entries):
      return Dictionary(entries.map { ($0.key, $0.value.anyValue as Any) }, uniquingKeysWith: { a, _ in a })
    }
  }
}
