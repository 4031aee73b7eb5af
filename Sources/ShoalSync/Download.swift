import Foundation
import Logging
import PostgresNIO
import Shoal

/// The download half of sync: the server's changes after a device's cursor, fetched from the
/// change log (`shoal_changes`), then applied to the Realm in one write transaction that also
/// moves the cursor, so a device killed at any point applies each change once.
///
/// Fetching is asynchronous and touches no Realm; applying is synchronous on the Realm's
/// thread, as every Realm write is:
///
/// ```swift
/// let batch = try await ServerDownload.fetch(after: ServerDownload.cursor(of: realm), from: client)
/// try ServerDownload.apply(batch, to: realm)
/// ```
///
/// Within a batch only the last change of each object counts: an object updated then deleted on
/// the server is deleted. A row is applied whole (every column), over what the device has.
public enum ServerDownload {
  /// The key of the download cursor in the file's sync state.
  static let cursorKey = "download.cursor"

  /// One object's change on the server.
  public struct Change: Sendable, Equatable {
    /// The class (table) of the object.
    public var className: String
    /// The primary key, as JSON (a string, a number).
    public var primaryKey: String
    /// The row as JSON (`to_jsonb` of it), nil when the object was deleted.
    public var row: String?
  }

  /// The changes after a cursor, and the cursor after them.
  public struct Batch: Sendable, Equatable {
    /// The last change of each object in the batch, in the order of their last changes.
    public var changes: [Change]
    /// The change log's sequence number of the batch's last change (the new cursor).
    public var cursor: Int64
    /// For a snapshot (`snapshot(of:from:)`), the classes it holds every row of: objects of
    /// these classes the device has and the snapshot lacks (deleted on the server) are removed,
    /// unless they are local changes not uploaded yet. Empty for a batch of the change log.
    public var completeClasses: [String] = []
    /// The version of the subscription set a snapshot applies (recorded with it), if any.
    public var subscriptionVersion: Int? = nil
  }

  /// The key recording that a snapshot was applied (`snapshot(of:from:)`).
  static let bootstrappedKey = "download.bootstrapped"

  /// Whether a snapshot of the server was ever applied to `realm`'s file: until then, its
  /// first download should be one (the agent's choice).
  public static func isBootstrapped(_ realm: Realm) -> Bool { realm.syncState(bootstrappedKey) != nil }

  /// The sequence number of the last server change applied to `realm` (0 before the first).
  public static func cursor(of realm: Realm) -> Int64 {
    guard let bytes = realm.syncState(cursorKey), bytes.count == 8 else { return 0 }
    return bytes.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
  }

  /// The server's changes after `cursor`, at most `limit` log entries. With `conditions` (an
  /// SQL condition per class, from the subscriptions), a row that does not meet its class's
  /// condition comes as deleted: it left the device's view. An object whose
  /// changes in the batch all came from `uploader` (this device's own uploads, see
  /// `ServerUpload.uploader(of:client:)`) is left out: the device has it already.
  public static func fetch(
    after cursor: Int64, from client: PostgresClient, limit: Int = 1000, excluding uploader: String? = nil,
    conditions: [String: String]? = nil, logger: Logger = Logger(label: "shoal.sync")
  ) async throws -> Batch {
    let entries = try await client.query(
      """
      SELECT seq, class_name, primary_key::text, coalesce(client_id, '') FROM shoal_changes
      WHERE seq > \(cursor) ORDER BY seq LIMIT \(limit)
      """, logger: logger)
    var last: [String: (seq: Int64, className: String, key: String)] = [:]
    var foreign: Set<String> = []
    var newest = cursor
    for try await (seq, className, key, origin) in entries.decode((Int64, String, String, String).self) {
      let id = className + "\u{0}" + key
      last[id] = (seq, className, key)
      if origin != uploader || uploader == nil { foreign.insert(id) }
      newest = max(newest, seq)
    }
    last = last.filter { foreign.contains($0.key) }
    // Each object's row as it is now (absent: deleted since), fetched per class.
    var rows: [String: String] = [:]
    for className in Set(last.values.map(\.className)) {
      let condition = conditions.map { $0[className] ?? "FALSE" } ?? "TRUE"
      if condition == "FALSE" { continue }
      let keys = "[" + last.values.filter { $0.className == className }.map(\.key).joined(separator: ",") + "]"
      let table = SyncSchema.quoted(className)
      let key = try await primaryKeyColumn(of: className, client: client, logger: logger)
      let found = try await client.query(
        PostgresQuery(
          unsafeSQL: """
            SELECT to_jsonb(t.\(SyncSchema.quoted(key)))::text, to_jsonb(t)::text FROM \(table) t
            WHERE to_jsonb(t.\(SyncSchema.quoted(key))) IN (SELECT jsonb_array_elements($1::jsonb)) AND \(condition)
            """, binds: try bindings(keys)), logger: logger)
      for try await (primaryKey, row) in found.decode((String, String).self) {
        rows[className + "\u{0}" + primaryKey] = row
      }
    }
    let changes = last.values.sorted { $0.seq < $1.seq }.map { entry in
      Change(className: entry.className, primaryKey: entry.key, row: rows[entry.className + "\u{0}" + entry.key])
    }
    return Batch(changes: changes, cursor: newest)
  }

  /// Every row of `classes`' tables at one snapshot of the server, and the change log's newest
  /// sequence number at that snapshot as the batch's cursor: a new device's first download,
  /// one query per class instead of the whole change log. Applied with `apply(_:to:)`, after
  /// which downloads go on from the cursor. Classes without a table on the server are passed over.
  /// With `conditions` (from the subscriptions, whose `subscriptionVersion` the batch then
  /// records as applied), only the rows meeting their class's condition.
  public static func snapshot(
    of classes: [String], from client: PostgresClient, conditions: [String: String]? = nil,
    subscriptionVersion: Int? = nil, logger: Logger = Logger(label: "shoal.sync")
  ) async throws -> Batch {
    try await client.withConnection { connection in
      try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
      do {
        var cursor: Int64 = 0
        for try await newest in try await connection.query(
          "SELECT coalesce(max(seq), 0)::bigint FROM shoal_changes", logger: logger
        ).decode(Int64.self) {
          cursor = newest
        }
        var changes: [Change] = []
        var found: [String] = []
        for className in classes {
          var exists = false
          for try await found in try await connection.query(
            "SELECT to_regclass(\(SyncSchema.quoted(className))) IS NOT NULL", logger: logger
          ).decode(Bool.self) {
            exists = found
          }
          guard exists else { continue }
          found.append(className)
          let condition = conditions.map { $0[className] ?? "FALSE" } ?? "TRUE"
          if condition == "FALSE" { continue }
          let key = try await primaryKeyColumn(of: className, connection: connection, logger: logger)
          let rows = try await connection.query(
            PostgresQuery(
              unsafeSQL: "SELECT to_jsonb(t.\(SyncSchema.quoted(key)))::text, to_jsonb(t)::text FROM "
                + SyncSchema.quoted(className) + " t WHERE " + condition), logger: logger)
          for try await (primaryKey, row) in rows.decode((String, String).self) {
            changes.append(Change(className: className, primaryKey: primaryKey, row: row))
          }
        }
        try await connection.query("COMMIT", logger: logger)
        return Batch(
          changes: changes, cursor: cursor, completeClasses: found, subscriptionVersion: subscriptionVersion)
      } catch {
        _ = try? await connection.query("ROLLBACK", logger: logger)
        throw SyncError.describing(error)
      }
    }
  }

  private static func bindings(_ text: String) throws -> PostgresBindings {
    var binds = PostgresBindings()
    binds.append(text)
    return binds
  }

  /// The primary key column of a synced class's table, from the trigger the bootstrap made.
  private static func primaryKeyColumn(of className: String, client: PostgresClient, logger: Logger) async throws
    -> String
  {
    try await client.withConnection { connection in
      try await primaryKeyColumn(of: className, connection: connection, logger: logger)
    }
  }

  private static func primaryKeyColumn(of className: String, connection: PostgresConnection, logger: Logger)
    async throws -> String
  {
    let rows = try await connection.query(
      """
      SELECT a.attname::text FROM pg_index i
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
      WHERE i.indrelid = \(SyncSchema.quoted(className))::regclass AND i.indisprimary
      """, logger: logger)
    for try await name in rows.decode(String.self) { return name }
    throw SyncError.server("the table \(className) has no primary key")
  }

  /// Applies `batch` to `realm` in one write transaction, with the new cursor: objects
  /// created or updated whole from their rows (links to objects the device does not have
  /// yet are left empty), deleted ones deleted. A batch at or before the Realm's cursor
  /// (applied already, by this process or another) changes nothing. Changes of classes the
  /// Realm does not have are passed over. A row that does not fit its property's type throws,
  /// naming the column, and nothing of the batch is applied. Call it on the Realm's thread,
  /// outside a write transaction.
  public static func apply(_ batch: Batch, to realm: Realm) throws {
    try realm.write {
      // A snapshot may be applied at the cursor the device has when the device never had one, or
      // for a new subscription set (the view changed, not the server).
      let current = cursor(of: realm)
      let newView =
        !batch.completeClasses.isEmpty
        && (!isBootstrapped(realm)
          || (batch.subscriptionVersion.map { $0 > SubscriptionDocument.applied(realm) } ?? false))
      guard batch.cursor > current || (newView && batch.cursor >= current) else { return }
      realm.skipSyncOutbox()
      let pending = PendingChanges(realm)
      var linksLater: [(className: String, values: [String: Any])] = []
      for change in batch.changes {
        guard let schema = realm.schema[change.className], let key = schema.primaryKeyProperty else { continue }
        let keyValue = try RowDecoder.value(json: change.primaryKey, as: key, in: realm)
        let local = pending.change(of: change.className, key: keyValue)
        guard let row = change.row else {
          // A delete wins over a local update; an object made again locally is uploaded again.
          if local != .inserted,
            let object = realm.dynamicObject(ofType: change.className, forPrimaryKey: keyValue as Any)
          {
            realm.delete(object)
          }
          continue
        }
        var (values, links) = try RowDecoder.values(json: row, schema: schema, in: realm)
        switch local {
        case .inserted, .deleted: continue  // The local object (or its deletion) is uploaded over it.
        case .updated(let properties):
          // Rebased: the local values of properties not uploaded yet stay, and win once uploaded.
          for name in properties {
            values[name] = nil
            links[name] = nil
          }
        case nil: break
        }
        realm.dynamicCreate(change.className, value: values, update: .modified)
        if !links.isEmpty {
          var linkValues = links
          linkValues[key.name] = values[key.name]
          linksLater.append((change.className, linkValues))
        }
      }
      // Links last: their targets may come later in the batch.
      for (className, values) in linksLater {
        var resolved: [String: Any] = [:]
        for (name, value) in values { resolved[name] = RowDecoder.resolve(value, in: realm) }
        realm.dynamicCreate(className, value: resolved, update: .modified)
      }
      // A snapshot holds every row of its classes: what the device has beyond it was deleted
      // on the server since (unless it is the device's own change, still to upload).
      for className in batch.completeClasses {
        guard let key = realm.schema[className]?.primaryKeyProperty else { continue }
        var present: Set<String> = []
        for change in batch.changes where change.className == className {
          present.insert(
            PendingChanges.id(className, try RowDecoder.value(json: change.primaryKey, as: key, in: realm)))
        }
        let gone = realm.dynamicObjects(className).filter { object in
          let keyValue = object[key.name]
          return !present.contains(PendingChanges.id(className, keyValue))
            && pending.change(of: className, key: keyValue) == nil
        }
        for object in gone { realm.delete(object) }
      }
      if let version = batch.subscriptionVersion { SubscriptionDocument.setApplied(version, in: realm) }
      if !batch.completeClasses.isEmpty { realm.setSyncState(bootstrappedKey, [1]) }
      var cursor = batch.cursor.littleEndian
      realm.setSyncState(cursorKey, withUnsafeBytes(of: &cursor) { Array($0) })
    }
  }
}

/// The changes of a device not uploaded yet, by object: what a download must not overwrite.
struct PendingChanges {
  enum Change: Equatable {
    case inserted
    case deleted
    case updated(Set<String>)
  }

  private var changes: [String: Change] = [:]

  init(_ realm: Realm) {
    for entry in realm.syncOutbox(limit: Int.max) {
      for change in entry.changes {
        let id = PendingChanges.id(change.className, change.primaryKey)
        switch (changes[id], change.kind) {
        case (_, .delete): changes[id] = .deleted
        case (_, .insert): changes[id] = .inserted
        case (.updated(let earlier), .update): changes[id] = .updated(earlier.union(change.properties))
        case (.inserted, .update): break
        case (.deleted, .update), (nil, .update): changes[id] = .updated(Set(change.properties))
        }
      }
    }
  }

  /// The local change of an object of `className` whose primary key is `key` (as the
  /// property's type), nil when it has none waiting.
  func change(of className: String, key: Any?) -> Change? {
    guard !changes.isEmpty else { return nil }
    return changes[PendingChanges.id(className, key)]
  }

  static func id(_ className: String, _ key: Any?) -> String {
    let text: String
    switch key {
    case let value as Int64: text = String(value)
    case let value as Int: text = String(value)
    case let value as ObjectId: text = value.stringValue
    case let value as UUID: text = value.uuidString.lowercased()
    case let value as String: text = value
    case nil: text = "null"
    case let value?: text = "\(value)"
    }
    return className + "\u{0}" + text
  }
}

/// A link or list of links not resolved yet: the target class and primary key(s).
struct PendingLink {
  var className: String
  var keys: [Any?]
  var isList: Bool
}

/// Rows of the server (`to_jsonb` of them) as values for `dynamicCreate`.
enum RowDecoder {
  /// The values of `json`'s columns for the stored properties of `schema`, and apart from them
  /// the links (resolved once every row of the batch exists).
  static func values(json: String, schema: ObjectSchema, in realm: Realm) throws -> (
    values: [String: Any], links: [String: Any]
  ) {
    guard
      let object = try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
        as? [String: Any]
    else { throw SyncError.server("a row of \(schema.className) is not a JSON object") }
    var values: [String: Any] = [:]
    var links: [String: Any] = [:]
    for property in schema.properties {
      guard let raw = object[property.name] else { continue }
      if property.type == .object, let target = property.objectClassName, let targetSchema = realm.schema[target],
        !targetSchema.isEmbedded
      {
        let keys: [Any?]
        if let array = raw as? [Any] { keys = array } else { keys = [raw is NSNull ? nil : raw] }
        links[property.name] = PendingLink(
          className: target, keys: keys.map { $0 is NSNull ? nil : $0 }, isList: property.isArray || property.isSet)
        continue
      }
      if raw is NSNull {
        if property.isOptional { values[property.name] = NSNull() }
        continue
      }
      values[property.name] = try convert(raw, property, realm)
    }
    return (values, links)
  }

  /// A primary key given as JSON, as `property`'s type.
  static func value(json: String, as property: Property, in realm: Realm) throws -> Any? {
    let raw = try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
    return try convert(raw, property, realm)
  }

  /// The objects a pending link names (nil, or skipped in a list, where the device lacks them).
  static func resolve(_ value: Any, in realm: Realm) -> Any {
    guard let link = value as? PendingLink else { return value }
    guard let key = realm.schema[link.className]?.primaryKeyProperty else { return NSNull() }
    let objects = link.keys.map { raw -> DynamicObject? in
      guard let raw, let value = try? convert(raw, key, realm) else { return nil }
      return realm.dynamicObject(ofType: link.className, forPrimaryKey: value)
    }
    if link.isList { return objects.compactMap { $0 } }
    return objects.first.flatMap { $0 } ?? NSNull()
  }

  static func convert(_ raw: Any, _ property: Property, _ realm: Realm) throws -> Any {
    if property.isArray || property.isSet {
      guard let array = raw as? [Any] else { throw mismatch(property, raw) }
      return try array.map { try element($0, property, realm) }
    }
    if property.isMap {
      guard let map = raw as? [String: Any] else { throw mismatch(property, raw) }
      return try map.mapValues { try element($0, property, realm) }
    }
    return try element(raw, property, realm)
  }

  private static func element(_ raw: Any, _ property: Property, _ realm: Realm) throws -> Any {
    if raw is NSNull { return NSNull() }
    switch property.type {
    case .int, .float, .double:
      guard let number = raw as? NSNumber else { throw mismatch(property, raw) }
      switch property.type {
      case .int: return number.int64Value
      case .float: return number.floatValue
      default: return number.doubleValue
      }
    case .bool:
      guard let flag = raw as? Bool else { throw mismatch(property, raw) }
      return flag
    case .string:
      guard let text = raw as? String else { throw mismatch(property, raw) }
      return text
    case .objectId:
      guard let text = raw as? String, let id = try? ObjectId(string: text) else { throw mismatch(property, raw) }
      return id
    case .UUID:
      guard let text = raw as? String, let id = UUID(uuidString: text) else { throw mismatch(property, raw) }
      return id
    case .decimal128:
      guard let number = raw as? NSNumber, let decimal = try? Decimal128(string: number.stringValue) else {
        throw mismatch(property, raw)
      }
      return decimal
    case .date:
      guard let text = raw as? String, let date = parseTimestamp(text) else { throw mismatch(property, raw) }
      return date
    case .data:
      guard let text = raw as? String, text.hasPrefix("\\x"), let data = hex(text.dropFirst(2)) else {
        throw mismatch(property, raw)
      }
      return data
    case .object:
      // An embedded object: its fields by its own schema (links to top-level objects are
      // resolved by `values`, not here).
      guard let fields = raw as? [String: Any], let target = property.objectClassName.flatMap({ realm.schema[$0] })
      else { throw mismatch(property, raw) }
      var values: [String: Any] = [:]
      for field in target.properties {
        guard let item = fields[field.name] else { continue }
        if item is NSNull {
          if field.isOptional { values[field.name] = NSNull() }
          continue
        }
        values[field.name] = try convert(item, field, realm)
      }
      return values
    case .any, .linkingObjects:
      return raw
    }
  }

  private static func mismatch(_ property: Property, _ raw: Any) -> SyncError {
    .server("the column \(property.name) holds \(raw), not a \(property.type)")
  }

  /// A `timestamptz` as `to_jsonb` writes it: `2024-05-01T12:00:00.123456+02:00`.
  static func parseTimestamp(_ text: String) -> Date? {
    let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    let without = Date.ISO8601FormatStyle()
    return (try? withFraction.parse(text)) ?? (try? without.parse(text))
  }

  private static func hex(_ digits: Substring) -> Data? {
    guard digits.count % 2 == 0 else { return nil }
    var data = Data(capacity: digits.count / 2)
    var index = digits.startIndex
    while index < digits.endIndex {
      let next = digits.index(index, offsetBy: 2)
      guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
      data.append(byte)
      index = next
    }
    return data
  }
}
