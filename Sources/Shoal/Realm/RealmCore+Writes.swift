import Foundation
import ShoalStorage
import Synchronization

// The object writer: `add` (with update policies, linked objects added without recursion),
// `create`, `delete` with the links to deleted objects cleared, and `deleteAll`.
extension RealmCore {
  // MARK: Add, create, delete

  /// An object `add` made managed whose row is still to be written.
  struct PendingAdd {
    let object: ObjectBase
    let table: TableInfo
    let info: ClassInfo
    /// Whether the table stores the class's properties in declaration order.
    let direct: Bool
    let key: ObjectKey
    let existing: ObjectKey?
    let primaryKey: RowValue?
    let policy: Realm.UpdatePolicy
  }

  /// Adds an unmanaged object; with an update policy, an object of a class with a primary key
  /// updates the existing object with that key. `existingKey` names the embedded object that
  /// `object` updates in place (`.modified` updates of its parent).
  ///
  /// The objects it links to are added too, without recursion: each is made managed (keyed)
  /// when first reached and its row written in turn, so a chain of any length is added in
  /// constant stack. Once its row is written an object gives up its unmanaged values (it keeps
  /// no unmanaged object alive), and the `List`, `MutableSet` and `Map` instances it held
  /// become the managed collections of its properties.
  func add(_ object: ObjectBase, update: Realm.UpdatePolicy, existingKey: ObjectKey? = nil) {
    requireWrite(RealmCore.objectsNeedWrite)
    if object._addPending { return }
    if object.isInvalidated { fatalError("Adding a deleted or invalidated object to a Realm is not permitted") }
    if let core = object._core, object._table != nil {
      guard core.file === file else {
        fatalError("Object is already managed by another Realm. Use create instead to copy it into this Realm.")
      }
      return
    }
    pendingAdds.append(register(object, update: update, existingKey: existingKey))
    guard !drainingAdds else { return }
    drainingAdds = true
    defer {
      drainingAdds = false
      pendingAdds = []
      pendingPrimaryKeys = [:]
    }
    var next = 0
    while next < pendingAdds.count {
      fill(pendingAdds[next])
      next += 1
    }
  }

  /// Makes `object` managed: finds the object its primary key updates or gives it a new key.
  private func register(_ object: ObjectBase, update: Realm.UpdatePolicy, existingKey: ObjectKey?) -> PendingAdd {
    let table = self.table(for: type(of: object))
    let info = table.classInfo ?? object._classInfo
    let direct = table.classInfo === info
    var existing: ObjectKey? = existingKey
    var primaryKey: RowValue?
    if let pk = table.primaryKeyIndex,
      let field = direct ? info.fields[pk] : info.field(named: table.properties[pk].name)
    {
      let value = field.wrapperType.storedValue(at: object._fieldAddress(field), context: _AccessContext(self))
      primaryKey = value
      if update != .error {
        existing = pendingPrimaryKeys[table.name]?[TableInfo.indexKey(value)] ?? key(forPrimaryKey: value, in: table)
      }
    }
    var row = [RowValue](repeating: .null, count: table.properties.count)
    if let pk = table.primaryKeyIndex, let primaryKey { row[pk] = primaryKey }
    let key = existing ?? newKey(table, row: row)
    if let primaryKey, update != .error {
      pendingPrimaryKeys[table.name, default: [:]][TableInfo.indexKey(primaryKey)] = key
    }
    // Managed before its values are read, so cycles of unmanaged objects link back to it.
    object._makeManaged(core: self, table: table, key: key, epoch: invalidations)
    object._addPending = true
    return PendingAdd(
      object: object, table: table, info: info, direct: direct, key: key, existing: existing, primaryKey: primaryKey,
      policy: update)
  }

  /// Writes the row of an object `register` made managed, from its unmanaged values.
  private func fill(_ pending: PendingAdd) {
    let (object, table, info, update) = (pending.object, pending.table, pending.info, pending.policy)
    let savedPolicy = addPolicy
    addPolicy = update
    defer { addPolicy = savedPolicy }
    let context = _AccessContext(self)
    // Every stored property is filled from the object below; linking objects stay null.
    var row = [RowValue](repeating: .null, count: table.properties.count)
    if let pk = table.primaryKeyIndex, let primaryKey = pending.primaryKey { row[pk] = primaryKey }
    var changed: [Int] = []
    let oldRow = pending.existing.flatMap { self.row(table, $0) }
    for field in info.fields {
      guard let index = pending.direct ? field.index : table.propertyIndex[field.name],
        table.properties[index].collection != .linkingObjects
      else {
        continue
      }
      if index == table.primaryKeyIndex { continue }
      let value =
        oldRow.flatMap {
          update == .modified ? embeddedUpdatedInPlace(object, field, old: $0[index], table.properties[index]) : nil
        }
        ?? field.wrapperType.storedValue(at: object._fieldAddress(field), context: context)
      row[index] = value
      if let oldRow, update == .all || oldRow[index] != value { changed.append(index) }
    }
    if let oldRow, let pk = table.primaryKeyIndex { row[pk] = oldRow[pk] }
    if !(oldRow != nil && update == .modified && changed.isEmpty) {
      writeRow(row, old: oldRow, table: table, key: pending.key, changed: changed)
    }
    if let oldRow {
      for index in changed {
        removeReplacedEmbedded(old: oldRow[index], new: row[index], property: table.properties[index])
      }
    }
    let base = Unmanaged.passUnretained(object).toOpaque()
    for field in info.fields {
      // The offsets come from the object's own class metadata.
      field.makeManaged(base: base, object: object)
      let holdsObjects =
        field.typeInfo.collection != .none || field.typeInfo.objectType != nil || field.typeInfo.type == .any
      guard holdsObjects, field.options.originProperty == nil,
        let index = pending.direct ? field.index : table.propertyIndex[field.name]
      else { continue }
      let taken = field.wrapperType.takeUnmanagedValue(at: object._fieldAddress(field))
      (taken as? any _ManagedPromotable)?._promote(to: object, index: index)
    }
    object._addPending = false
    object._row = row
    object._rowStamp = stamp
  }

  /// For a `.modified` update, the stored value of `field` when its new embedded objects update
  /// the ones the existing object holds in place, as Realm Core's update of only the modified
  /// values does: a single embedded object, or the elements of a list at the same positions
  /// (further elements are added, missing ones deleted). Nil when that does not apply.
  private func embeddedUpdatedInPlace(
    _ object: ObjectBase, _ field: ClassInfo.Field, old: RowValue, _ property: Property
  ) -> RowValue? {
    guard let target = field.typeInfo.objectType, target is EmbeddedObject.Type else { return nil }
    let current = object._unmanagedValue(field)
    switch (field.typeInfo.collection, old) {
    case (.none, .link(let oldKey)):
      guard let child = flattenedOptional(current) as? EmbeddedObject, child._core == nil else { return nil }
      add(child, update: .modified, existingKey: oldKey)
      return .link(oldKey)
    case (.list, .list(let items)):
      let oldKeys = items.compactMap { item -> ObjectKey? in if case .link(let key) = item { key } else { nil } }
      guard oldKeys.count == items.count,
        let elements = (current as? any _KVCCollection)?._kvcContents as? [Any],
        let children = elements.map({ $0 as? EmbeddedObject }) as? [EmbeddedObject],
        children.allSatisfy({ $0._core == nil })
      else { return nil }
      return .list(
        children.enumerated().map { offset, child in
          guard offset < oldKeys.count else { return linkValue(to: child) }
          add(child, update: .modified, existingKey: oldKeys[offset])
          return .link(oldKeys[offset])
        })
    default:
      return nil
    }
  }

  /// Deletes objects with their embedded objects, and clears links pointing at them.
  func delete(_ objects: [ObjectBase]) {
    requireWrite(RealmCore.objectsNeedWrite)
    var byTable: [String: (TableInfo, Set<ObjectKey>)] = [:]
    for object in objects {
      guard let core = object._core, let table = object._table else {
        fatalError("Can only delete an object from the Realm it belongs to.")
      }
      guard core.file === file else { fatalError("Can only delete an object from the Realm it belongs to.") }
      byTable[table.name, default: (table, [])].1.insert(object._key)
      object._invalidated = true
    }
    for (_, (table, keys)) in byTable { deleteKeys(keys, of: table) }
  }

  func deleteKeys(_ keys: Set<ObjectKey>, of table: TableInfo) {
    guard !keys.isEmpty else { return }
    var embedded: [String: (TableInfo, Set<ObjectKey>)] = [:]
    perform { write in
      for key in keys {
        let keyBytes = TableInfo.keyBytes(key)
        guard let row = row(table, key) else { continue }
        try noteSyncDeletes(table, [(key, row)], write)
        for index in table.indexedProperties {
          _ = try write.delete(OrderedIndexKey.key(row[index]) + keyBytes, in: table.indexKeyspace(index))
        }
        if let pk = table.primaryKeyIndex, !table.keysFromPrimaryKey {
          _ = try write.delete(TableInfo.indexKey(row[pk]), in: table.primaryKeyspace)
        }
        _ = try write.delete(keyBytes, in: table.keyspace)
        if hasBacklinks { try Backlinks.update(write, table: table, key: key, old: row, new: nil, properties: nil) }
        for (index, property) in table.properties.enumerated() {
          guard let target = property.objectClassName.flatMap({ self.table(named: $0) }), target.isEmbedded,
            property.collection != .linkingObjects
          else { continue }
          embedded[target.name, default: (target, [])].1.formUnion(Self.linkedKeys(row[index]))
        }
      }
    }
    stamp &+= 1
    nullifyLinks(to: keys, of: table)
    for (_, (target, keys)) in embedded { deleteKeys(keys, of: target) }
  }

  static func linkedKeys(_ value: RowValue) -> [ObjectKey] {
    switch value {
    case .link(let key): return [key]
    case .list(let items): return items.flatMap { linkedKeys($0) }
    case .map(let entries): return entries.flatMap { linkedKeys($0.value) }
    default: return []
    }
  }

  /// Removes links to deleted objects: to-one links become nil, list and set entries go,
  /// map values become nil (RealmSwift's behaviour).
  private func nullifyLinks(to keys: Set<ObjectKey>, of target: TableInfo) {
    if hasBacklinks {
      // The backlink index names exactly the objects linking here.
      var sources: [String: [ObjectKey: Set<Int>]] = [:]
      for key in keys {
        scan(Backlinks.keyspace(target.name), range: .prefix(TableInfo.keyBytes(key))) { entry, _ in
          if let (source, property, sourceKey) = Backlinks.decode(entry) {
            sources[source, default: [:]][sourceKey, default: []].insert(property)
          }
          return true
        }
      }
      for (name, objects) in sources {
        guard let source = table(named: name) else { continue }
        for (sourceKey, properties) in objects {
          guard let old = self.row(source, sourceKey) else { continue }
          var row = old
          for index in properties where index < row.count {
            row[index] = Self.removingLinks(
              row[index], to: keys, of: target.name, in: source.properties[index].collection)
          }
          writeRow(row, old: old, table: source, key: sourceKey, changed: Array(properties))
        }
      }
      return
    }
    for (source, index) in schema.incomingLinks[target.name] ?? [] {
      var updates: [(ObjectKey, [RowValue])] = []
      scan(source.keyspace) { keyBytes, value in
        guard var row = try? RowCodec.decode(value), index < row.count else { return true }
        let cleared = Self.removingLinks(row[index], to: keys)
        if cleared != row[index] {
          row[index] = cleared
          updates.append((TableInfo.key(from: keyBytes), row))
        }
        return true
      }
      for (key, row) in updates {
        writeRow(row, old: self.row(source, key), table: source, key: key, changed: [index])
      }
    }
  }

  /// `value` without its links to `keys` of class `target`: a to-one link becomes nil, list
  /// and set entries go, map values become nil. An `AnyRealmValue` link becomes nil too, in a
  /// list as well (RealmSwift keeps the position).
  static func removingLinks(
    _ value: RowValue, to keys: Set<ObjectKey>, of target: String? = nil, in collection: PropertyCollection = .none
  ) -> RowValue {
    func gone(_ item: RowValue) -> Bool {
      switch item {
      case .link(let key): return keys.contains(key)
      case .typedLink(let name, let key): return name == target && keys.contains(key)
      default: return false
      }
    }
    func isTyped(_ item: RowValue) -> Bool { if case .typedLink = item { return true } else { return false } }
    switch value {
    case .link, .typedLink: return gone(value) ? .null : value
    case .list(let items):
      return .list(
        items.compactMap { item in
          guard gone(item) else { return item }
          return isTyped(item) && collection == .list ? .null : nil
        })
    case .map(let entries):
      return .map(entries.map { gone($0.value) ? RowValue.MapEntry(key: $0.key, value: .null) : $0 })
    default: return value
    }
  }

  /// Deletes embedded objects a write replaced (their parent owned them alone).
  func removeReplacedEmbedded(old: RowValue, new: RowValue, property: Property) {
    guard property.collection != .linkingObjects, let target = property.objectClassName.flatMap({ table(named: $0) }),
      target.isEmbedded
    else { return }
    let removed = Set(Self.linkedKeys(old)).subtracting(Self.linkedKeys(new))
    deleteKeys(removed, of: target)
  }

  func deleteAll() {
    perform { write in
      for table in schema.tables.values {
        if try syncOutboxEnabled(write), !table.isEmbedded, table.primaryKeyIndex != nil {
          var rows: [(ObjectKey, [RowValue])] = []
          scan(table.keyspace) { key, value in
            if let row = try? RowCodec.decode(value) { rows.append((TableInfo.key(from: key[...]), row)) }
            return true
          }
          try noteSyncDeletes(table, rows, write)
        }
        if try write.hasKeyspace(table.keyspace) { try write.clear(table.keyspace) }
        if table.primaryKeyIndex != nil, try write.hasKeyspace(table.primaryKeyspace) {
          try write.clear(table.primaryKeyspace)
        }
        for index in table.indexedProperties where try write.hasKeyspace(table.indexKeyspace(index)) {
          try write.clear(table.indexKeyspace(index))
        }
        if try write.hasKeyspace(Backlinks.keyspace(table.name)) { try write.clear(Backlinks.keyspace(table.name)) }
      }
    }
    stamp &+= 1
  }
}
