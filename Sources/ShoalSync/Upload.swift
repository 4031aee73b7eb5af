import Foundation
import Logging
import PostgresNIO
import Shoal

/// The upload half of sync: the device's commits, kept in the file's outbox until the server
/// has them, sent one PostgreSQL transaction per commit.
///
/// Each upload is idempotent by (uploader, sequence number): its transaction first records
/// the pair in `shoal_uploads` and does nothing else if the pair is there already. A device
/// killed after the server committed but before it removed the entry from its outbox sends
/// it again, and the server skips it: nothing is lost or applied twice.
///
/// Reading the outbox and confirming an upload are synchronous, on the Realm's thread;
/// sending is asynchronous and touches no Realm:
///
/// ```swift
/// for upload in try ServerUpload.pending(in: realm) {
///   try await ServerUpload.send(upload, as: ServerUpload.uploader(of: realm, client: "phone-1"), to: client)
///   try ServerUpload.confirm(upload, in: realm)
/// }
/// ```
///
/// What is sent: an inserted object whole (an upsert: a row the server already has is
/// replaced), an updated object's changed columns only (an `UPDATE`: a row the server deleted
/// stays deleted, so a delete wins over a concurrent update), a deleted object's primary key.
/// Values are the object's as of the Realm's version when `pending` ran, which is at least as
/// new as the commit's. Collections and embedded objects are columns of their own and are
/// replaced whole.
public enum ServerUpload {
  /// One local commit, ready to send.
  public struct Upload: Sendable {
    /// The commit's sequence number in the device's outbox.
    public let sequence: UInt64
    /// The statements, each with its one `jsonb` parameter (the rows it writes).
    public let statements: [(sql: String, rows: String)]
    /// Objects the commit changed.
    public let objectCount: Int
  }

  static let generationKey = "upload.generation"

  /// The name a device's uploads go by on the server: the client identifier, then a number
  /// drawn when sync was first enabled on this file, so that a file deleted and made again
  /// (whose sequence numbers start again) is not mistaken for the one before.
  public static func uploader(of realm: Realm, client: String) -> String {
    let generation = realm.syncState(generationKey).map { $0.map { String(format: "%02x", $0) }.joined() } ?? "0"
    return client + "/" + generation
  }

  /// Enables the outbox on `realm` if it is not yet (every object already in the file is
  /// entered as inserted), in a write transaction of its own.
  public static func enable(on realm: Realm) throws {
    guard !realm.isSyncOutboxEnabled else { return }
    try realm.write {
      guard !realm.isSyncOutboxEnabled else { return }
      realm.enableSyncOutbox()
      var generator = SystemRandomNumberGenerator()
      realm.setSyncState(generationKey, (0..<8).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
  }

  /// The number of commits waiting in `realm`'s outbox (at most `limit` counted).
  public static func pendingCount(in realm: Realm, limit: Int = 1000) -> Int {
    realm.syncOutbox(limit: limit).count
  }

  /// How many outbox entries were uploaded from `realm`'s file so far: the entries ever made
  /// minus those waiting.
  public static func uploadedCount(in realm: Realm) -> Int {
    max(0, realm.syncOutboxEntriesMade - pendingCount(in: realm, limit: Int.max))
  }

  /// The oldest commits waiting in `realm`'s outbox, at most `limit`, as uploads.
  public static func pending(in realm: Realm, limit: Int = 16) throws -> [Upload] {
    let schema = try SyncSchema(realm.schema)
    let tables = Dictionary(schema.tables.map { ($0.className, $0) }, uniquingKeysWith: { first, _ in first })
    return try realm.syncOutbox(limit: limit).map { entry in
      var inserted: [String: [[String: any Sendable]]] = [:]
      var updated: [String: [[String]: [[String: any Sendable]]]] = [:]
      var deleted: [String: [[String: any Sendable]]] = [:]
      var count = 0
      for change in entry.changes {
        guard let table = tables[change.className] else { continue }
        switch change.kind {
        case .delete:
          deleted[change.className, default: []].append([table.primaryKey: change.primaryKey])
        case .insert, .update:
          // Gone since: a later entry holds its deletion.
          guard let row = realm.syncRow(of: change) else { continue }
          let columns = Set(table.columns.map(\.name))
          let properties = change.properties.filter { columns.contains($0) }
          if change.kind == .insert {
            inserted[change.className, default: []].append(row)
          } else if !properties.isEmpty {
            updated[change.className, default: [:]][properties.sorted(), default: []].append(row)
          } else {
            continue
          }
        }
        count += 1
      }
      var statements: [(sql: String, rows: String)] = []
      for (className, rows) in inserted.sorted(by: { $0.key < $1.key }) {
        guard let table = tables[className] else { continue }
        statements.append((upsertSQL(table), try json(rows)))
      }
      for (className, groups) in updated.sorted(by: { $0.key < $1.key }) {
        guard let table = tables[className] else { continue }
        for (columns, rows) in groups.sorted(by: { $0.key.joined(separator: ",") < $1.key.joined(separator: ",") }) {
          statements.append((updateSQL(table, columns), try json(rows)))
        }
      }
      for (className, rows) in deleted.sorted(by: { $0.key < $1.key }) {
        guard let table = tables[className] else { continue }
        statements.append((deleteSQL(table), try json(rows)))
      }
      return Upload(sequence: entry.sequence, statements: statements, objectCount: count)
    }
  }

  /// Sends `upload` as `uploader` (see `uploader(of:client:)`) in one server transaction.
  /// Returns false when the server had it already (an earlier attempt committed there), true
  /// when this call applied it.
  @discardableResult
  public static func send(
    _ upload: Upload, as uploader: String, to client: PostgresClient, logger: Logger = Logger(label: "shoal.sync")
  ) async throws -> Bool {
    let sequence = Int64(upload.sequence)
    do {
      return try await client.withTransaction(logger: logger) { connection in
        // The change log names this upload as the origin of the rows it writes.
        try await connection.query(
          "SELECT set_config('shoal.client_id', \(uploader), true), set_config('shoal.local_version', \(String(sequence)), true)",
          logger: logger)
        let fresh = try await connection.query(
          """
          INSERT INTO shoal_uploads (client_id, local_version) VALUES (\(uploader), \(sequence))
          ON CONFLICT DO NOTHING RETURNING local_version
          """, logger: logger)
        var applied = false
        for try await _ in fresh.decode(Int64.self) { applied = true }
        guard applied else { return false }
        for statement in upload.statements {
          var binds = PostgresBindings()
          binds.append(statement.rows)
          try await connection.query(PostgresQuery(unsafeSQL: statement.sql, binds: binds), logger: logger)
        }
        try await connection.query(
          """
          INSERT INTO shoal_clients (client_id, uploaded_version) VALUES (\(uploader), \(sequence))
          ON CONFLICT (client_id) DO UPDATE SET uploaded_version = GREATEST(shoal_clients.uploaded_version,
            EXCLUDED.uploaded_version), last_seen = now()
          """, logger: logger)
        return true
      }
    } catch let error as PostgresTransactionError {
      if let failure = error.closureError ?? error.beginError ?? error.commitError {
        throw SyncError.describing(failure)
      }
      throw error
    }
  }

  /// Removes `upload`'s commit (and any older one) from `realm`'s outbox: call it once `send`
  /// returned, on the Realm's thread, outside a write transaction.
  public static func confirm(_ upload: Upload, in realm: Realm) throws {
    try realm.write { realm.removeFromSyncOutbox(through: upload.sequence) }
  }

  /// `INSERT … ON CONFLICT DO UPDATE` of whole rows.
  static func upsertSQL(_ table: SyncSchema.Table) -> String {
    let name = SyncSchema.quoted(table.className)
    let columns = table.columns.map { SyncSchema.quoted($0.name) }
    let key = SyncSchema.quoted(table.primaryKey)
    let assignments = columns.dropFirst().map { "\($0) = EXCLUDED.\($0)" }
    return """
      INSERT INTO \(name) (\(columns.joined(separator: ", "))) \
      SELECT \(columns.map { "r." + $0 }.joined(separator: ", ")) FROM jsonb_populate_recordset(NULL::\(name), $1::jsonb) r \
      ON CONFLICT (\(key)) DO \(assignments.isEmpty ? "NOTHING" : "UPDATE SET " + assignments.joined(separator: ", "))
      """
  }

  /// `UPDATE` of some columns of rows the server has (a row it deleted stays deleted).
  static func updateSQL(_ table: SyncSchema.Table, _ columns: [String]) -> String {
    let name = SyncSchema.quoted(table.className)
    let key = SyncSchema.quoted(table.primaryKey)
    let assignments = columns.map { "\(SyncSchema.quoted($0)) = r.\(SyncSchema.quoted($0))" }
    return """
      UPDATE \(name) t SET \(assignments.joined(separator: ", ")) \
      FROM jsonb_populate_recordset(NULL::\(name), $1::jsonb) r WHERE t.\(key) = r.\(key)
      """
  }

  /// `DELETE` of rows by primary key.
  static func deleteSQL(_ table: SyncSchema.Table) -> String {
    let name = SyncSchema.quoted(table.className)
    let key = SyncSchema.quoted(table.primaryKey)
    return """
      DELETE FROM \(name) t USING jsonb_populate_recordset(NULL::\(name), $1::jsonb) r WHERE t.\(key) = r.\(key)
      """
  }

  static func json(_ rows: [[String: any Sendable]]) throws -> String {
    String(decoding: try JSONSerialization.data(withJSONObject: rows, options: [.sortedKeys]), as: UTF8.self)
  }
}

extension SyncError {
  /// A PostgreSQL error as a `SyncError` with the server's message; others as they are.
  static func describing(_ error: any Error) -> any Error {
    if let error = error as? PSQLError {
      return SyncError.server(error.serverInfo?[.message] ?? String(reflecting: error))
    }
    return error
  }
}
