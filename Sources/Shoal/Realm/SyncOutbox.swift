import Foundation
import ShoalStorage

/// The sync outbox: once sync is enabled on a file (`Realm.enableSyncOutbox()`), every commit
/// of any process that writes objects with primary keys appends one entry, in the same write
/// transaction, naming the objects it inserted, updated (with the properties) and deleted
/// (with the primary key, which the deleted row no longer holds). Entries stay until the sync
/// agent has uploaded them; the file holds them, so they survive crashes, restarts and
/// compaction (which starts the version numbers again and so could not keep a version cursor).
///
/// Entries are keyed by a sequence number of their own (big-endian), the next one kept in
/// `_sync` under `outbox.next`.
extension RealmCore {
  static let outboxKeyspace = "_sync_outbox"
  static let outboxNextKey = Array("outbox.next".utf8)

  /// Whether the file's writes are recorded for upload.
  func syncOutboxEnabled(_ write: WriteTransaction) throws -> Bool {
    if let known = syncOutboxKnown { return known }
    let enabled = try write.hasKeyspace(RealmCore.outboxKeyspace)
    syncOutboxKnown = enabled
    return enabled
  }

  /// Keeps the primary keys of objects about to be deleted, for the outbox (a deleted row's
  /// primary key is gone by commit time).
  func noteSyncDeletes(_ table: TableInfo, _ rows: [(ObjectKey, [RowValue])], _ write: WriteTransaction) throws {
    guard !table.isEmbedded, let pk = table.primaryKeyIndex, try syncOutboxEnabled(write) else { return }
    for (key, row) in rows where pk < row.count { syncDeleted[table.name, default: [:]][key] = row[pk] }
  }

  /// Appends the pending transaction's changes to the outbox, if sync is enabled and the
  /// transaction changed synced objects.
  func appendToSyncOutbox(_ write: WriteTransaction) throws {
    defer {
      syncDeleted = [:]
      syncOutboxSuppressed = false
    }
    guard !syncOutboxSuppressed, try syncOutboxEnabled(write) else { return }
    let record = try write.pendingChangeRecord()
    var byKeyspace: [String: TableInfo] = [:]
    for table in schema.tables.values { byKeyspace[table.keyspace] = table }
    // (class, key) → change; updates of embedded objects become updates of their owners.
    var changes: [String: [ObjectKey: (kind: ChangeKind, properties: Set<Int>)]] = [:]
    func note(_ table: TableInfo, _ key: ObjectKey, _ kind: ChangeKind, _ properties: Set<Int>) {
      var entry = changes[table.name, default: [:]][key] ?? (kind, [])
      if kind != .update { entry.kind = kind }
      entry.properties.formUnion(properties)
      changes[table.name, default: [:]][key] = entry
    }
    for keyspace in record.keyspaces {
      guard let table = byKeyspace[keyspace.keyspace] else { continue }
      if keyspace.created || keyspace.cleared {
        // Every object there now is new; every object noted deleted and not there now is gone.
        scan(table.keyspace) { keyBytes, _ in
          let key = TableInfo.key(from: keyBytes)
          if table.isEmbedded {
            if let (owner, ownerKey, property) = syncOwner(table, key) { note(owner, ownerKey, .update, [property]) }
          } else {
            note(table, key, .insert, [])
          }
          return true
        }
        for (key, _) in syncDeleted[table.name] ?? [:] where row(table, key) == nil { note(table, key, .delete, []) }
      }
      for change in keyspace.changes {
        let key = TableInfo.key(from: change.key[...])
        if table.isEmbedded {
          guard change.kind != .delete, let (owner, ownerKey, property) = syncOwner(table, key) else { continue }
          note(owner, ownerKey, .update, [property])
          continue
        }
        let properties = change.kind == .update ? Set(maskIndexes(change.payload, count: table.properties.count)) : []
        note(table, key, change.kind, properties)
      }
    }
    var items: [RowValue] = []
    for (name, objects) in changes.sorted(by: { $0.key < $1.key }) {
      guard let table = table(named: name), let pk = table.primaryKeyIndex else { continue }
      for (key, change) in objects.sorted(by: { $0.key < $1.key }) {
        let primaryKey: RowValue
        if change.kind == .delete {
          guard let deleted = syncDeleted[name]?[key] else { continue }
          primaryKey = deleted
        } else {
          guard let current = row(table, key), pk < current.count else { continue }
          primaryKey = current[pk]
        }
        let names = change.properties.sorted().filter { $0 != pk && $0 < table.properties.count }.map {
          RowValue.string(table.properties[$0].name)
        }
        items.append(.list([.string(name), .int(Int64(change.kind.rawValue)), primaryKey, .list(names)]))
      }
    }
    guard !items.isEmpty else { return }
    try write.ensureKeyspace(Realm.syncStateKeyspace, tracksChanges: false)
    let next =
      try write.get(RealmCore.outboxNextKey, in: Realm.syncStateKeyspace).flatMap(RealmCore.decodeSequence) ?? 1
    try write.put(RowCodec.encode(items), forKey: RealmCore.sequenceKey(next), in: RealmCore.outboxKeyspace)
    try write.put(RealmCore.sequenceKey(next + 1), forKey: RealmCore.outboxNextKey, in: Realm.syncStateKeyspace)
  }

  private func maskIndexes(_ mask: [UInt8], count: Int) -> [Int] {
    (0..<count).filter { ChangeSummary.bit(mask, $0) }
  }

  /// The top-level object owning embedded object `key` of `table` (through any depth of
  /// embedding), with the owner's property holding the chain.
  func syncOwner(_ table: TableInfo, _ key: ObjectKey) -> (TableInfo, ObjectKey, Int)? {
    var current = (table: table, key: key)
    for _ in 0..<64 {
      guard let (parent, parentKey, property) = embeddingParent(current.table, current.key) else { return nil }
      if !parent.isEmbedded { return (parent, parentKey, property) }
      current = (parent, parentKey)
    }
    return nil
  }

  private func embeddingParent(_ table: TableInfo, _ key: ObjectKey) -> (TableInfo, ObjectKey, Int)? {
    if hasBacklinks {
      var found: (TableInfo, ObjectKey, Int)?
      scan(Backlinks.keyspace(table.name), range: .prefix(TableInfo.keyBytes(key))) { entry, _ in
        if let (source, property, sourceKey) = Backlinks.decode(entry), let parent = self.table(named: source) {
          found = (parent, sourceKey, property)
          return false
        }
        return true
      }
      return found
    }
    for (source, index) in schema.incomingLinks[table.name] ?? [] {
      var found: ObjectKey?
      scan(source.keyspace) { keyBytes, value in
        guard let row = try? RowCodec.decode(value), index < row.count,
          RealmCore.linkedKeys(row[index]).contains(key)
        else { return true }
        found = TableInfo.key(from: keyBytes)
        return false
      }
      if let found { return (source, found, index) }
    }
    return nil
  }

  static func sequenceKey(_ sequence: UInt64) -> [UInt8] {
    withUnsafeBytes(of: sequence.bigEndian) { Array($0) }
  }

  static func decodeSequence(_ bytes: [UInt8]) -> UInt64? {
    guard bytes.count == 8 else { return nil }
    return bytes.reduce(0) { $0 << 8 | UInt64($1) }
  }
}

/// One object's change waiting in the sync outbox.
package struct SyncOutboxChange: Sendable {
  /// The object's class.
  package var className: String
  /// Inserted, updated or deleted (net, over the commit).
  package var kind: ChangeKind
  /// The primary key as a JSON value, in the form of the server's column (see `Realm.syncRow`).
  package var primaryKey: any Sendable
  /// The primary key as stored.
  let rowKey: RowValue
  /// For an update, the names of the properties it changed; empty otherwise.
  package var properties: [String]
}

/// One commit's entry in the sync outbox.
package struct SyncOutboxEntry: Sendable {
  /// The entry's sequence number (only grows).
  package var sequence: UInt64
  /// The objects the commit changed.
  package var changes: [SyncOutboxChange]
}

extension Realm {
  /// How many outbox entries the file has had (the next sequence number minus one).
  package var syncOutboxEntriesMade: Int {
    guard let bytes = syncState(String(decoding: RealmCore.outboxNextKey, as: UTF8.self)),
      let next = RealmCore.decodeSequence(bytes)
    else { return 0 }
    return Int(next) - 1
  }

  /// Whether writes to this file are recorded for upload.
  package var isSyncOutboxEnabled: Bool {
    guard let write = core.write else {
      let snapshot = core.snapshot()
      return (try? snapshot.hasKeyspace(RealmCore.outboxKeyspace)) ?? false
    }
    return (try? core.syncOutboxEnabled(write)) ?? false
  }

  /// Starts recording writes for upload, in the current write transaction: creates the outbox
  /// and enters every existing object of a class with a primary key as inserted, so what the
  /// file held before sync uploads too. Does nothing if already enabled.
  package func enableSyncOutbox() {
    core.perform { write in
      guard try !write.hasKeyspace(RealmCore.outboxKeyspace) else { return }
      try write.createKeyspace(RealmCore.outboxKeyspace, tracksChanges: false)
      core.syncOutboxKnown = true
      try write.ensureKeyspace(Realm.syncStateKeyspace, tracksChanges: false)
      var items: [RowValue] = []
      for table in core.schema.tables.values.sorted(by: { $0.name < $1.name })
      where !table.isEmbedded && table.primaryKeyIndex != nil {
        let pk = table.primaryKeyIndex ?? 0
        core.scan(table.keyspace) { _, value in
          if let row = try? RowCodec.decode(value), pk < row.count {
            items.append(.list([.string(table.name), .int(Int64(ChangeKind.insert.rawValue)), row[pk], .list([])]))
          }
          return true
        }
      }
      var next: UInt64 = 1
      if !items.isEmpty {
        try write.put(RowCodec.encode(items), forKey: RealmCore.sequenceKey(1), in: RealmCore.outboxKeyspace)
        next = 2
      }
      try write.put(RealmCore.sequenceKey(next), forKey: RealmCore.outboxNextKey, in: Realm.syncStateKeyspace)
    }
  }

  /// The first `limit` outbox entries, oldest first, as of this Realm's version.
  package func syncOutbox(limit: Int = 100) -> [SyncOutboxEntry] {
    var entries: [SyncOutboxEntry] = []
    core.scan(RealmCore.outboxKeyspace) { key, value in
      guard let sequence = RealmCore.decodeSequence(key), let items = try? RowCodec.decode(value) else { return true }
      var changes: [SyncOutboxChange] = []
      for item in items {
        guard case .list(let fields) = item, fields.count == 4, case .string(let name) = fields[0],
          case .int(let raw) = fields[1], let kind = ChangeKind(rawValue: UInt8(truncatingIfNeeded: raw)),
          case .list(let names) = fields[3]
        else { continue }
        let properties = names.compactMap { name -> String? in
          if case .string(let text) = name { return text } else { return nil }
        }
        changes.append(
          SyncOutboxChange(
            className: name, kind: kind, primaryKey: Realm.syncJSON(fields[2], core: core), rowKey: fields[2],
            properties: properties))
      }
      entries.append(SyncOutboxEntry(sequence: sequence, changes: changes))
      return entries.count < limit
    }
    return entries
  }

  /// Keeps the current write transaction out of the outbox: for the changes sync downloads,
  /// which the server has already (uploading them again would echo them between devices).
  package func skipSyncOutbox() {
    core.requireWrite()
    core.syncOutboxSuppressed = true
  }

  /// Removes outbox entries up to and including `sequence`, in the current write transaction.
  package func removeFromSyncOutbox(through sequence: UInt64) {
    core.perform { write in
      guard try write.hasKeyspace(RealmCore.outboxKeyspace) else { return }
      var keys: [[UInt8]] = []
      core.scan(RealmCore.outboxKeyspace, range: .all) { key, _ in
        guard let found = RealmCore.decodeSequence(key), found <= sequence else { return false }
        keys.append(key)
        return true
      }
      for key in keys { _ = try write.delete(key, in: RealmCore.outboxKeyspace) }
    }
  }

  /// The changed object as a JSON object of its stored properties, as of this Realm's
  /// version, in the forms of the server's columns (`SyncSchema`): links as the target's
  /// primary key, embedded objects as nested objects, dates as ISO 8601 text, data as `\x`
  /// hex, object identifiers, UUIDs and decimals as text. Nil when there is no such object now.
  package func syncRow(of change: SyncOutboxChange) -> [String: any Sendable]? {
    guard let table = core.table(named: change.className), let key = core.key(forPrimaryKey: change.rowKey, in: table),
      let row = core.row(table, key)
    else { return nil }
    return Realm.syncFields(table, row, core: core)
  }

  static func syncFields(_ table: TableInfo, _ row: [RowValue], core: RealmCore) -> [String: any Sendable] {
    var fields: [String: any Sendable] = [:]
    for (index, property) in table.properties.enumerated()
    where property.collection != .linkingObjects && index < row.count {
      fields[property.name] = syncJSON(row[index], core: core, target: property.objectClassName)
    }
    return fields
  }

  /// `value` as a JSON-ready value (NSNull for null).
  static func syncJSON(_ value: RowValue, core: RealmCore, target: String? = nil) -> any Sendable {
    switch value {
    case .null: return NSNull()
    case .bool(let v): return v
    case .int(let v): return v
    case .float(let v): return Double(v)
    case .double(let v): return v
    case .string(let v): return v
    case .data(let v): return "\\x" + v.map { String(format: "%02x", $0) }.joined()
    case .date(let v): return v.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    case .uuid(let v): return v.uuidString.lowercased()
    case .objectId(let v): return v.stringValue
    case .decimal(let v): return v.stringValue
    case .link(let key):
      guard let target, let table = core.table(named: target), let row = core.row(table, key) else { return NSNull() }
      if table.isEmbedded { return syncFields(table, row, core: core) }
      guard let pk = table.primaryKeyIndex, pk < row.count else { return NSNull() }
      return syncJSON(row[pk], core: core)
    case .typedLink(let name, let key):
      guard let table = core.table(named: name), let row = core.row(table, key), let pk = table.primaryKeyIndex,
        pk < row.count
      else { return NSNull() }
      return ["$class": name, "$key": syncJSON(row[pk], core: core)] as [String: any Sendable]
    case .list(let items): return items.map { syncJSON($0, core: core, target: target) }
    case .map(let entries):
      var out: [String: any Sendable] = [:]
      for entry in entries { out[entry.key] = syncJSON(entry.value, core: core, target: target) }
      return out
    }
  }
}
