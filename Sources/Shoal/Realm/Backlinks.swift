import ShoalStorage

/// The backlink index: for every link from an object of class S (property p) to an object of
/// class T, an entry in keyspace `b/T` keyed `targetKey · S · p · sourceKey`. It makes
/// `LinkingObjects` and clearing links to deleted objects cost what they find, not a scan of
/// every class that links to T.
enum Backlinks {
  static let formatKey = Array("backlinks".utf8)
  /// The index's format in `_meta`: 2 also indexes the links inside `AnyRealmValue`s; a file
  /// with an older one is rebuilt when opened for writing.
  static let format: [UInt8] = [2]

  static func keyspace(_ target: String) -> String { "b/" + target }

  /// The prefix of every entry pointing at `target` from property `property` of `source`.
  static func prefix(target: ObjectKey, source: String, property: Int) -> [UInt8] {
    var out = TableInfo.keyBytes(target)
    let name = Array(source.utf8)
    Varint.append(UInt64(name.count), to: &out)
    out += name
    Varint.append(UInt64(property), to: &out)
    return out
  }

  static func entry(target: ObjectKey, source: String, property: Int, sourceKey: ObjectKey) -> [UInt8] {
    prefix(target: target, source: source, property: property) + TableInfo.keyBytes(sourceKey)
  }

  /// Decodes an entry's source class, property and key.
  static func decode(_ key: [UInt8]) -> (source: String, property: Int, sourceKey: ObjectKey)? {
    var position = 8
    func varint() -> UInt64? { key.withUnsafeBytes { Varint.read($0, at: &position) } }
    guard key.count > 8, let length = varint(), position + Int(length) <= key.count else { return nil }
    let name = String(decoding: key[position..<position + Int(length)], as: UTF8.self)
    position += Int(length)
    guard let property = varint(), key.count == position + 8 else { return nil }
    return (name, Int(property), TableInfo.key(from: key[position...]))
  }

  /// Keeps the index in step with a row write: entries for links removed from property values
  /// go, entries for links added come.
  static func update(
    _ write: WriteTransaction, table: TableInfo, key: ObjectKey, old: [RowValue]?, new: [RowValue]?,
    properties: [Int]?
  ) throws {
    for (index, target) in table.linkProperties {
      if let properties, !properties.contains(index) { continue }
      let before = Set(old.map { RealmCore.linkedKeys($0[index]) } ?? [])
      let after = Set(new.map { RealmCore.linkedKeys($0[index]) } ?? [])
      guard before != after else { continue }
      let space = keyspace(target)
      for gone in before.subtracting(after) {
        _ = try write.delete(entry(target: gone, source: table.name, property: index, sourceKey: key), in: space)
      }
      for added in after.subtracting(before) {
        try write.put([], forKey: entry(target: added, source: table.name, property: index, sourceKey: key), in: space)
      }
    }
    for index in table.anyProperties {
      if let properties, !properties.contains(index) { continue }
      let before = Set(old.map { typedLinks($0[index]) } ?? [])
      let after = Set(new.map { typedLinks($0[index]) } ?? [])
      guard before != after else { continue }
      for gone in before.subtracting(after) {
        _ = try write.delete(
          entry(target: gone.key, source: table.name, property: index, sourceKey: key), in: keyspace(gone.className))
      }
      for added in after.subtracting(before) {
        let space = keyspace(added.className)
        guard try write.hasKeyspace(space) else { continue }
        try write.put(
          [], forKey: entry(target: added.key, source: table.name, property: index, sourceKey: key), in: space)
      }
    }
  }

  struct TypedLink: Hashable {
    var className: String
    var key: ObjectKey
  }

  /// The objects an `AnyRealmValue` (or a collection of them) links to.
  static func typedLinks(_ value: RowValue) -> [TypedLink] {
    switch value {
    case .typedLink(let name, let key): return [TypedLink(className: name, key: key)]
    case .list(let items): return items.flatMap { typedLinks($0) }
    case .map(let entries): return entries.flatMap { typedLinks($0.value) }
    default: return []
    }
  }

  /// Rebuilds every backlink keyspace from the rows (new files, migrations, older files).
  static func rebuild(_ write: WriteTransaction, schemas: [String: ObjectSchema]) throws {
    for name in try write.keyspaceNames() where name.hasPrefix("b/") { try write.dropKeyspace(name) }
    let tables = schemas.values.map { TableInfo(schema: $0, classInfo: nil) }
    for table in tables { try write.createKeyspace(keyspace(table.name), tracksChanges: false) }
    for table in tables where !table.linkProperties.isEmpty || !table.anyProperties.isEmpty {
      guard try write.hasKeyspace(table.keyspace) else { continue }
      var rows: [(ObjectKey, [RowValue])] = []
      let cursor = try write.cursor(in: table.keyspace)
      while let (key, value) = try cursor.next() { rows.append((TableInfo.key(from: key), try RowCodec.decode(value))) }
      for (key, row) in rows where row.count == table.properties.count {
        try update(write, table: table, key: key, old: nil, new: row, properties: nil)
      }
    }
    try write.put(format, forKey: formatKey, in: RealmSchema.metaKeyspace)
  }
}
