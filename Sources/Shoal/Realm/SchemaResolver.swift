import Foundation
import ShoalStorage

/// Reconciles the program's classes with the schema stored in a file when it is opened:
/// creates the tables of a new file, adds new classes, runs migrations when the schema version
/// rises, and refuses a changed schema without one.
struct SchemaResolver {
  let file: SharedFile
  let configuration: Realm.Configuration
  let classes: [ClassInfo]

  private var store: Store { file.store }

  func resolve() throws(Realm.Error) -> RealmSchema {
    let codeSchemas = Dictionary(
      classes.map { ($0.className, $0.objectSchema) } + configuration.dynamicSchemas.map { ($0.className, $0) },
      uniquingKeysWith: { a, _ in a })
    if let cached = file.schema.withLock({ $0 }), cached.schemaVersion == configuration.schemaVersion,
      cached.tables.values.filter({ $0.classInfo != nil }).count == codeSchemas.count,
      codeSchemas.allSatisfy({
        cached.tables[$0.key]?.objectSchema == $0.value && cached.tables[$0.key]?.classInfo != nil
      })
    {
      return cached
    }
    let (stored, version, keyed) = try readStored(nil)
    let backlinks = try hasBacklinkIndex(nil)
    let ordered = try hasOrderedIndexes(nil)
    if let version, backlinks, ordered, isCurrent(stored: stored, version: version, code: codeSchemas) {
      return publish(stored: stored, keyed: keyed, version: version, backlinks: true)
    }
    guard !configuration.readOnly else {
      if version == nil {
        throw Realm.Error(.fileAccess, "Cannot open an empty read-only Realm: the file has no schema yet.")
      }
      try check(stored: stored, version: version ?? 0, code: codeSchemas)
      return publish(stored: stored, keyed: keyed, version: version ?? 0, backlinks: backlinks, ordered: ordered)
    }
    do {
      return try store.write { write throws -> RealmSchema in
        let (stored, version, keyed) = try readStored(write)
        let ordered = try hasOrderedIndexes(write)
        if let version, try hasBacklinkIndex(write), ordered,
          isCurrent(stored: stored, version: version, code: codeSchemas)
        {
          return publish(stored: stored, keyed: keyed, version: version, backlinks: true)
        }
        let resultStored = try apply(write, stored: stored, keyed: keyed, version: version, code: codeSchemas)
        if !ordered {
          // Written before indexes were ordered: `apply` rebuilt the program's classes; the
          // others are rebuilt here (each drops its unordered index).
          for (name, schema) in resultStored where codeSchemas[name] == nil {
            try rebuildIndexes(write, table: TableInfo(schema: schema, classInfo: nil))
          }
        }
        try write.put(RealmSchema.indexFormat, forKey: RealmSchema.indexFormatKey, in: RealmSchema.metaKeyspace)
        try Backlinks.rebuild(write, schemas: resultStored)
        let resultKeyed = try readStored(write).keyed
        return publish(stored: resultStored, keyed: resultKeyed, version: configuration.schemaVersion, backlinks: true)
      }
    } catch let error as Realm.Error {
      throw error
    } catch {
      throw Realm.Error(storage: error, fileURL: configuration.fileURL)
    }
  }

  private func isCurrent(stored: [String: ObjectSchema], version: UInt64, code: [String: ObjectSchema]) -> Bool {
    version == configuration.schemaVersion && code.allSatisfy { stored[$0.key] == $0.value }
  }

  /// Whether the file's `_meta` says the backlink index is built.
  private func hasBacklinkIndex(_ write: WriteTransaction?) throws(Realm.Error) -> Bool {
    try meta(Backlinks.formatKey, is: Backlinks.format, write)
  }

  /// Whether the file's `_meta` says its secondary indexes are ordered (`OrderedIndexKey`).
  private func hasOrderedIndexes(_ write: WriteTransaction?) throws(Realm.Error) -> Bool {
    try meta(RealmSchema.indexFormatKey, is: RealmSchema.indexFormat, write)
  }

  /// Whether the file's `_meta` holds `value` under `key`, read in `write` or, without one, in
  /// a snapshot of the newest version.
  private func meta(_ key: [UInt8], is value: [UInt8], _ write: WriteTransaction?) throws(Realm.Error) -> Bool {
    do {
      if let write {
        guard try write.hasKeyspace(RealmSchema.metaKeyspace) else { return false }
        return try write.get(key, in: RealmSchema.metaKeyspace) == value
      }
      return try store.read { snapshot in
        guard try snapshot.hasKeyspace(RealmSchema.metaKeyspace) else { return false }
        return try snapshot.get(key, in: RealmSchema.metaKeyspace) == value
      }
    } catch {
      throw Realm.Error(storage: error, fileURL: configuration.fileURL)
    }
  }

  private func publish(
    stored: [String: ObjectSchema], keyed: Set<String>, version: UInt64, backlinks: Bool, ordered: Bool = true
  ) -> RealmSchema {
    let infos = Dictionary(classes.map { ($0.className, $0) }, uniquingKeysWith: { a, _ in a })
    let tables = stored.values.map {
      TableInfo(
        schema: $0, classInfo: infos[$0.className], keysFromPrimaryKey: keyed.contains($0.className))
    }
    let schema = RealmSchema(
      tables: tables, schemaVersion: version, hasBacklinks: backlinks, hasOrderedIndexes: ordered)
    file.schema.withLock { $0 = schema }
    return schema
  }

  /// The stored schemas, the schema version, and the classes whose object keys are their
  /// primary keys.
  private func readStored(_ write: WriteTransaction?) throws(Realm.Error) -> (
    stored: [String: ObjectSchema], version: UInt64?, keyed: Set<String>
  ) {
    do {
      var schemas: [String: ObjectSchema] = [:]
      var keyed: Set<String> = []
      var version: UInt64?
      let read: (String, [UInt8]) throws -> [UInt8]?
      let entries: [([UInt8], [UInt8])]
      if let write {
        guard try write.hasKeyspace(RealmSchema.schemaKeyspace) else { return ([:], nil, []) }
        read = { try write.get($1, in: $0) }
        entries = try collect(write.cursor(in: RealmSchema.schemaKeyspace))
      } else {
        let snapshot = try store.beginRead()
        defer { snapshot.close() }
        guard try snapshot.hasKeyspace(RealmSchema.schemaKeyspace) else { return ([:], nil, []) }
        entries = try collect(snapshot.keyspace(RealmSchema.schemaKeyspace).cursor())
        let versionBytes = try snapshot.get(RealmSchema.versionKey, in: RealmSchema.metaKeyspace)
        version = versionBytes.map { TableInfo.key(from: $0) }
        read = { _, _ in nil }
      }
      if write != nil {
        version = try read(RealmSchema.metaKeyspace, RealmSchema.versionKey).map { TableInfo.key(from: $0) }
      }
      for (_, value) in entries {
        let (schema, keysFromPrimaryKey) = try SchemaCodec.decodeWithKeyMode(value)
        schemas[schema.className] = schema
        if keysFromPrimaryKey { keyed.insert(schema.className) }
      }
      return (schemas, version ?? 0, keyed)
    } catch let error as Realm.Error {
      throw error
    } catch {
      throw Realm.Error(storage: error, fileURL: configuration.fileURL)
    }
  }

  private func collect(_ cursor: Cursor) throws -> [([UInt8], [UInt8])] {
    var out: [([UInt8], [UInt8])] = []
    while let (key, value) = try cursor.next() { out.append((key, value)) }
    return out
  }

  /// Throws when opening `stored` with the program's schema needs a write or a migration.
  private func check(stored: [String: ObjectSchema], version: UInt64, code: [String: ObjectSchema]) throws(Realm.Error)
  {
    if configuration.schemaVersion < version {
      throw Realm.Error(
        .fail,
        "Provided schema version \(configuration.schemaVersion) is less than last set version \(version).")
    }
    var errors: [String] = []
    for (name, schema) in code.sorted(by: { $0.key < $1.key }) {
      guard let old = stored[name] else {
        errors.append("Class '\(name)' has been added.")
        continue
      }
      errors += RealmSchema.migrationErrors(stored: old, code: schema)
      if errors.isEmpty, old != schema { errors.append("Indexes of class '\(name)' have changed.") }
    }
    if !errors.isEmpty {
      throw Realm.Error(
        .schemaMismatch,
        "Migration is required due to the following errors:\n" + errors.map { "- " + $0 }.joined(separator: "\n"))
    }
  }

  /// Brings the file's schema to the program's, in one write transaction.
  private func apply(
    _ write: WriteTransaction, stored: [String: ObjectSchema], keyed: Set<String>, version: UInt64?,
    code: [String: ObjectSchema]
  ) throws -> [String: ObjectSchema] {
    var errors: [String] = []
    for (name, schema) in code.sorted(by: { $0.key < $1.key }) {
      if let old = stored[name] { errors += RealmSchema.migrationErrors(stored: old, code: schema) }
    }
    var stored = stored
    var version = version
    // RealmSwift's rule: with deleteRealmIfMigrationNeeded, a file whose schema version differs
    // (higher or lower), or whose schema changed in a way that needs a migration, starts over
    // empty; the migration block is not called.
    if let old = version, configuration.deleteRealmIfMigrationNeeded,
      old != configuration.schemaVersion || !errors.isEmpty
    {
      Log.write(
        .warn, .shoal,
        "Deleted every object of \(configuration.fileKey): "
          + (errors.isEmpty
            ? "its schema version \(old) is not \(configuration.schemaVersion)"
            : "its schema changed without a migration") + " (deleteRealmIfMigrationNeeded)")
      for name in try write.keyspaceNames() { try write.dropKeyspace(name) }
      stored = [:]
      version = nil
      errors = []
    }
    let storedVersion = version ?? configuration.schemaVersion
    if version != nil, configuration.schemaVersion < storedVersion {
      throw Realm.Error(
        .fail,
        "Provided schema version \(configuration.schemaVersion) is less than last set version \(storedVersion).")
    }
    if let version, configuration.schemaVersion > version {
      Log.write(
        .info, .shoal,
        "Migrating \(configuration.fileKey) from schema version \(version) to \(configuration.schemaVersion)")
    }
    if !errors.isEmpty, configuration.schemaVersion == storedVersion {
      throw Realm.Error(
        .schemaMismatch,
        "Migration is required due to the following errors:\n" + errors.map { "- " + $0 }.joined(separator: "\n"))
    }
    try write.ensureKeyspace(RealmSchema.schemaKeyspace, tracksChanges: false)
    try write.ensureKeyspace(RealmSchema.metaKeyspace, tracksChanges: false)
    let migrating = version != nil && configuration.schemaVersion > storedVersion
    var result = stored
    var oldRows: [String: [ObjectKey: [RowValue]]] = [:]
    for (name, schema) in code {
      let new = TableInfo(schema: schema, classInfo: nil)
      if let old = stored[name], old != schema {
        // Rows move to the new layout by property name; new properties get defaults.
        let oldTable = TableInfo(schema: old, classInfo: nil)
        var rows: [ObjectKey: [RowValue]] = [:]
        let cursor = try write.cursor(in: oldTable.keyspace)
        var updates: [([UInt8], [RowValue])] = []
        let defaults = new.defaultRow
        while let (key, value) = try cursor.next() {
          let oldRow = try RowCodec.decode(value)
          rows[TableInfo.key(from: key)] = oldRow
          var row = defaults
          for (index, property) in schema.allProperties.enumerated() {
            guard let oldIndex = old.allProperties.firstIndex(where: { $0.name == property.name }),
              oldIndex < oldRow.count,
              RealmSchema.typeName(old.allProperties[oldIndex]) == RealmSchema.typeName(property)
                || (old.allProperties[oldIndex].type == property.type
                  && old.allProperties[oldIndex].collection == property.collection)
            else { continue }
            let value = oldRow[oldIndex]
            if value.isNull, !property.isOptional, property.type != .object, property.type != .any { continue }
            row[index] = value
          }
          updates.append((key, row))
        }
        for (key, row) in updates { try write.put(RowCodec.encode(row), forKey: key, in: new.keyspace) }
        oldRows[name] = rows
        try dropIndexes(write, old: oldTable)
      }
      // A new table keys its objects by an integer primary key; an existing one keeps its
      // mode while its primary key stays the same property (checked again after migrating).
      let isNew = try stored[name] == nil && !write.hasKeyspace(new.keyspace)
      let samePrimaryKey =
        stored[name].map { old in
          old.allProperties.first(where: \.isPrimary) == schema.allProperties.first(where: \.isPrimary)
        } ?? false
      let keysFromPrimaryKey =
        TableInfo.canDeriveKeys(schema) && (isNew || (keyed.contains(name) && samePrimaryKey))
      try write.ensureKeyspace(new.keyspace)
      try write.put(
        SchemaCodec.encode(schema, keysFromPrimaryKey: keysFromPrimaryKey), forKey: Array(name.utf8),
        in: RealmSchema.schemaKeyspace)
      result[name] = schema
    }
    try write.put(
      TableInfo.keyBytes(configuration.schemaVersion), forKey: RealmSchema.versionKey, in: RealmSchema.metaKeyspace)
    if migrating, let block = configuration.migrationBlock {
      let migration = Migration(
        write: write, oldSchemas: stored, newSchemas: result, oldRows: oldRows, classes: classes)
      block(migration, storedVersion)
      try migration.finish()
      result = migration.newSchemas
    }
    for (name, schema) in result where migrating || code[name] != nil || stored[name] != schema {
      try rebuildIndexes(write, table: TableInfo(schema: schema, classInfo: nil))
    }
    return result
  }

  private func dropIndexes(_ write: WriteTransaction, old: TableInfo) throws {
    for index in old.indexedProperties {
      for space in [old.indexKeyspace(index), old.unorderedIndexKeyspace(index)] where try write.hasKeyspace(space) {
        try write.dropKeyspace(space)
      }
    }
    if try write.hasKeyspace(old.primaryKeyspace) { try write.dropKeyspace(old.primaryKeyspace) }
  }

  /// Recreates the primary-key and secondary indexes of `table` from its rows, refusing
  /// duplicate primary keys. A table whose object keys are its primary keys keeps that mode
  /// only if every row's key still is its primary key (a migration may have set primary keys
  /// or created objects); otherwise it falls back to a primary-key index.
  private func rebuildIndexes(_ write: WriteTransaction, table: TableInfo) throws {
    try dropIndexes(write, old: table)
    var keysFromPrimaryKey = false
    if let bytes = try write.get(Array(table.name.utf8), in: RealmSchema.schemaKeyspace) {
      keysFromPrimaryKey = try SchemaCodec.decodeWithKeyMode(bytes).keysFromPrimaryKey
    }
    if keysFromPrimaryKey, let pk = table.primaryKeyIndex {
      let cursor = try write.cursor(in: table.keyspace)
      while let (key, value) = try cursor.next() {
        if TableInfo.derivedKey(try RowCodec.decode(value)[pk]).map(TableInfo.keyBytes) != key {
          keysFromPrimaryKey = false
          try write.put(
            SchemaCodec.encode(table.objectSchema, keysFromPrimaryKey: false), forKey: Array(table.name.utf8),
            in: RealmSchema.schemaKeyspace)
          break
        }
      }
    }
    let indexesPrimaryKey = table.primaryKeyIndex != nil && !keysFromPrimaryKey
    guard indexesPrimaryKey || !table.indexedProperties.isEmpty else { return }
    if indexesPrimaryKey { try write.createKeyspace(table.primaryKeyspace, tracksChanges: false) }
    for index in table.indexedProperties { try write.createKeyspace(table.indexKeyspace(index), tracksChanges: false) }
    let cursor = try write.cursor(in: table.keyspace)
    var entries: [(String, [UInt8], [UInt8])] = []
    while let (key, value) = try cursor.next() {
      let row = try RowCodec.decode(value)
      if indexesPrimaryKey, let pk = table.primaryKeyIndex {
        entries.append((table.primaryKeyspace, TableInfo.indexKey(row[pk]), key))
      }
      for index in table.indexedProperties {
        entries.append((table.indexKeyspace(index), OrderedIndexKey.key(row[index]) + key, []))
      }
    }
    for (space, key, value) in entries {
      if space == table.primaryKeyspace, try write.get(key, in: space) != nil {
        throw Realm.Error(
          .schemaMismatch,
          "Primary key property '\(table.name).\(table.properties[table.primaryKeyIndex ?? 0].name)' has duplicate values after migration."
        )
      }
      try write.put(value, forKey: key, in: space)
    }
  }
}
