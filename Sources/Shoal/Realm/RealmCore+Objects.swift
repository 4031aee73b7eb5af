import Foundation
import ShoalStorage
import Synchronization

// Objects and lookups: the object instance for a row (one per row and Realm), link values,
// the objects linking to one, and finding objects by primary key or indexed value.
extension RealmCore {
  // MARK: Objects

  func table(for type: ObjectBase.Type) -> TableInfo {
    guard let table = schema.table(for: type) else {
      let name = ClassInfo.of(type).className
      fatalError(
        "Object type '\(name)' is not managed by the Realm. If using a custom `objectClasses` / `objectTypes` "
          + "array in your configuration, add `\(name)` to the list of `objectClasses` / `objectTypes`.")
    }
    return table
  }

  func table(named name: String) -> TableInfo? { schema.tables[name] }

  /// A managed instance for the object `key` of `table`.
  func object(_ table: TableInfo, _ key: ObjectKey) -> ObjectBase {
    let object: ObjectBase
    if let info = table.classInfo {
      object = info.makeManaged()
    } else {
      let dynamic = DynamicObject()
      dynamic._dynamic = ManagedDynamicRow(core: self, table: table, key: key)
      object = dynamic
    }
    object._makeManaged(core: self, table: table, key: key, epoch: invalidations)
    if let events, events.isRecording, write == nil, !isFrozen { events.recordRead(table, key, core: self) }
    return object
  }

  /// The object a stored link refers to, as an instance of `type` (or of the linked class).
  func object(for value: RowValue, type: ObjectBase.Type) -> ObjectBase? {
    switch value {
    case .link(let key): return object(table(for: type), key)
    case .typedLink(let name, let key): return table(named: name).map { object($0, key) }
    default: return nil
    }
  }

  /// The stored link to `target`, adding it first when it is unmanaged.
  func linkValue(to target: ObjectBase) -> RowValue {
    if let core = target._core, target._table != nil {
      guard core.file === file else {
        fatalError("Object is already managed by another Realm. Use create instead to copy it into this Realm.")
      }
      if target is EmbeddedObject, write != nil {
        fatalError("Can't set link to existing managed embedded object")
      }
      return .link(target._key)
    }
    add(target, update: addPolicy)
    return .link(target._key)
  }

  /// Keys of the objects of `property.objectClassName` linking to `key` through the origin property.
  func linkingKeys(to key: ObjectKey, of table: TableInfo, property: Property) -> [ObjectKey] {
    guard let originName = property.objectClassName, let origin = self.table(named: originName),
      let originProperty = property.linkOriginPropertyName, let index = origin.propertyIndex[originProperty]
    else { return [] }
    var keys: [ObjectKey] = []
    if hasBacklinks {
      let prefix = Backlinks.prefix(target: key, source: origin.name, property: index)
      var sources: [ObjectKey] = []
      scan(Backlinks.keyspace(table.name), range: .prefix(prefix)) { entry, _ in
        sources.append(TableInfo.key(from: entry.suffix(8)))
        return true
      }
      // As in Realm, an object linked n times from one list or map is there n times; the
      // index records each source once, so those rows are read to count.
      let collection = origin.properties[index].collection
      guard collection == .list || collection == .map else { return sources }
      for source in sources {
        let times = row(origin, source).map { index < $0.count ? Self.linkCount($0[index], to: key) : 1 } ?? 1
        keys += repeatElement(source, count: max(times, 1))
      }
      return keys
    }
    // A read-only file written before the backlink index existed: scan the origin class.
    scan(origin.keyspace) { keyBytes, value in
      guard let row = try? RowCodec.decode(value), index < row.count else { return true }
      keys += repeatElement(TableInfo.key(from: keyBytes), count: Self.linkCount(row[index], to: key))
      return true
    }
    return keys
  }

  /// How many times `value` (a link, or a list or map of them) links to `key`.
  static func linkCount(_ value: RowValue, to key: ObjectKey) -> Int {
    switch value {
    case .link(let k): return k == key ? 1 : 0
    case .list(let items): return items.reduce(0) { $0 + linkCount($1, to: key) }
    case .map(let entries): return entries.reduce(0) { $0 + linkCount($1.value, to: key) }
    default: return 0
    }
  }

  // MARK: Lookups

  func key(forPrimaryKey value: RowValue, in table: TableInfo) -> ObjectKey? {
    if table.keysFromPrimaryKey {
      guard let key = TableInfo.derivedKey(value), get(TableInfo.keyBytes(key), in: table.keyspace) != nil else {
        return nil
      }
      return key
    }
    guard let key = get(TableInfo.indexKey(value), in: table.primaryKeyspace).map({ TableInfo.key(from: $0) })
    else { return nil }
    // A long value's key is a prefix and a hash of it: the object found must hold the value.
    if TableInfo.hasHashedIndexKey(value), let pk = table.primaryKeyIndex, let row = row(table, key),
      TableInfo.normalizedForIndex(row[pk]) != TableInfo.normalizedForIndex(value)
    {
      return nil
    }
    return key
  }

  /// Keys of objects whose indexed property `index` equals `value`.
  func keys(whereIndexed index: Int, equals value: RowValue, in table: TableInfo) -> [ObjectKey] {
    if index == table.primaryKeyIndex { return key(forPrimaryKey: value, in: table).map { [$0] } ?? [] }
    var keys: [ObjectKey] = []
    scan(table.indexKeyspace(index), range: .prefix(OrderedIndexKey.key(value))) { key, _ in
      keys.append(TableInfo.key(from: key.suffix(8)))
      return true
    }
    return keys
  }

  /// Keys of objects whose (non-primary-key) indexed property `index` has an index key in
  /// `range` (see `OrderedIndexKey`), in index order.
  func keys(whereIndexed index: Int, in range: KeyRange, of table: TableInfo) -> [ObjectKey] {
    var keys: [ObjectKey] = []
    scanInPlace(table.indexKeyspace(index), range: range) { key, _ in
      // The entry's last 8 bytes are the object key, big-endian.
      keys.append(
        key.count >= 8 ? UInt64(bigEndian: key.loadUnaligned(fromByteOffset: key.count - 8, as: UInt64.self)) : 0)
      return true
    }
    return keys
  }

  /// Every key of `table`, in key (insertion) order.
  func allKeys(_ table: TableInfo) -> [ObjectKey] {
    var keys: [ObjectKey] = []
    keys.reserveCapacity(count(table.keyspace))
    scan(table.keyspace) { key, _ in
      keys.append(TableInfo.key(from: key))
      return true
    }
    return keys
  }
}
