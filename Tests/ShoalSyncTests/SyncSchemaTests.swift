import Foundation
import Logging
import PostgresNIO
import Shoal
import ShoalSync
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

final class SyncTask: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var title = ""
  @Persisted var done = false
  @Persisted var priority: Int?
  @Persisted var due: Date?
  @Persisted var owner: SyncPerson?
  @Persisted var tags: List<String>
  @Persisted var note: SyncNote?
  @Persisted var score: Decimal128
  @Persisted var attachment: Data
}

final class SyncPerson: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted(primaryKey: true) var name = ""
  @Persisted var age = 0
  @Persisted(originProperty: "owner") var tasks: LinkingObjects<SyncTask>
}

final class SyncNote: EmbeddedObject {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted var text = ""
}

final class Unkeyed: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted var value = 0
}

/// The schema of `types`, as a Realm holding them has it.
func schema(_ types: [ObjectBase.Type]) throws -> Schema {
  let realm = try Realm(
    configuration: Realm.Configuration(inMemoryIdentifier: "sync-schema-" + UUID().uuidString, objectTypes: types))
  return realm.schema
}

/// The private PostgreSQL cluster `make test` starts (`scripts/postgres.sh`), by its URL in
/// SHOAL_PG_URL. Without it the tests that need a server are skipped, unless
/// SHOAL_REQUIRE_POSTGRES is set (as `make test` sets it): then they fail.
enum TestServer {
  static let url = ProcessInfo.processInfo.environment["SHOAL_PG_URL"]
  static let required = ProcessInfo.processInfo.environment["SHOAL_REQUIRE_POSTGRES"] != nil
  static var available: Bool { url != nil || required }

  static func server() throws -> PostgresServer {
    guard let url else {
      throw SyncError.invalidServerURL(
        "", reason: "SHOAL_PG_URL is not set: run the tests through `make test`, which starts a PostgreSQL")
    }
    return try PostgresServer(url: url)
  }

  /// A new, empty database on the test server, for one test: tests run in parallel, and each
  /// bootstraps its own tables.
  static func freshDatabase() async throws -> PostgresServer {
    var server = try server()
    let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    try await server.withClient { client in
      try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: Logger(label: "shoal.tests"))
    }
    server.database = name
    return server
  }

  /// Whether a test may start a cluster of its own (`PrivateCluster`): PostgreSQL's binaries
  /// are installed (`make test` installs them).
  static var canRunClusters: Bool {
    let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
    return !versions.isEmpty || required
  }

  /// A PostgreSQL cluster of one test's own (`scripts/postgres.sh` in a temporary directory),
  /// for stopping and starting it under a device.
  final class PrivateCluster {
    let directory: String
    let url: String
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("scripts/postgres.sh").path

    init() throws {
      directory = FileManager.default.temporaryDirectory.appendingPathComponent("shoal-pg-" + UUID().uuidString).path
      try PrivateCluster.run("start", directory)
      url = try String(contentsOfFile: directory + "/url", encoding: .utf8).trimmingCharacters(
        in: .whitespacesAndNewlines)
    }

    /// Turns TLS on with a self-signed certificate made for the occasion (openssl, which
    /// Debian's postgresql brings), and reloads the configuration.
    func enableTLS() throws {
      let data = directory + "/data"
      let owner = getuid() == 0 ? "chown shoalpg \(data)/server.key \(data)/server.crt && " : ""
      try PrivateCluster.shell(
        "openssl req -new -x509 -days 2 -nodes -subj /CN=127.0.0.1 -keyout \(data)/server.key "
          + "-out \(data)/server.crt 2>/dev/null && chmod 600 \(data)/server.key && \(owner)true")
    }

    /// Stops the server at once, keeping its data (as a crash would).
    func halt() throws { try PrivateCluster.run("halt", directory) }
    /// Starts it again on the same port.
    func resume() throws { try PrivateCluster.run("resume", directory) }
    /// Stops it and removes its files.
    func stop() { try? PrivateCluster.run("stop", directory) }

    /// Runs the script and waits for it with waitpid (Foundation's `Process.waitUntilExit`
    /// never returns here when called from a task: the server the script starts keeps running).
    static func run(_ command: String, _ directory: String) throws {
      try spawn(["/bin/bash", script, command, directory], command)
    }

    static func shell(_ command: String) throws { try spawn(["/bin/bash", "-c", command], command) }

    private static func spawn(_ arguments: [String], _ command: String) throws {
      var pid: pid_t = 0
      let argv = arguments.map { strdup($0) } + [nil]
      defer { for argument in argv { free(argument) } }
      guard posix_spawn(&pid, "/bin/bash", nil, nil, argv, environ) == 0 else {
        throw SyncError.server("could not run \(command)")
      }
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0, errno == EINTR {}
      guard status == 0 else { throw SyncError.server("\(command) failed with status \(status)") }
    }
  }

  /// The one integer `sql` selects on `server` (-1 when it selects no row).
  static func scalar(_ sql: String, _ server: PostgresServer) async throws -> Int64 {
    try await server.withClient { client in
      var value: Int64 = -1
      let rows = try await client.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "shoal.tests"))
      for try await row in rows.decode(Int64.self) { value = row }
      return value
    }
  }

  /// `freshDatabase`'s URL.
  static func url(of server: PostgresServer) -> String {
    "postgres://\(server.username)@\(server.host):\(server.port)/\(server.database)"
  }
}

@Suite("Sync: the PostgreSQL schema", .serialized)
struct SyncSchemaTests {
  @Test func classesBecomeTablesWithAColumnPerProperty() throws {
    let sync = try SyncSchema(schema([SyncTask.self, SyncPerson.self, SyncNote.self]))
    #expect(sync.tables.map(\.className).sorted() == ["SyncPerson", "SyncTask"])
    let task = try #require(sync.tables.first { $0.className == "SyncTask" })
    #expect(task.primaryKey == "_id")
    let types = Dictionary(uniqueKeysWithValues: task.columns.map { ($0.name, $0.type) })
    #expect(task.columns.first?.name == "_id")
    #expect(
      types == [
        "_id": "text", "title": "text", "done": "boolean", "priority": "bigint", "due": "timestamptz",
        // A link is the target's primary key; a list and an embedded object are JSON.
        "owner": "text", "tags": "jsonb", "note": "jsonb", "score": "numeric", "attachment": "bytea",
      ])
    let person = try #require(sync.tables.first { $0.className == "SyncPerson" })
    // Linking objects are computed, not stored.
    #expect(person.columns.map(\.name) == ["name", "age"])
    #expect(sync.bootstrapSQL.hasPrefix("-- Shoal sync"))
    #expect(sync.bootstrapSQL.contains("CREATE TABLE IF NOT EXISTS \"SyncTask\" (\n  \"_id\" text PRIMARY KEY,"))
  }

  @Test func aClassWithoutAPrimaryKeyCannotBeSynced() throws {
    let error = #expect(throws: SyncSchema.Problem.self) {
      try SyncSchema(schema([SyncTask.self, SyncPerson.self, SyncNote.self, Unkeyed.self]))
    }
    #expect(error?.description.contains("Unkeyed") == true)
    #expect(error?.description.contains("primaryKey: true") == true)
  }

  @Test func identifiersAndLiteralsAreQuoted() {
    #expect(SyncSchema.quoted("a\"b") == "\"a\"\"b\"")
    #expect(SyncSchema.literal("it's") == "'it''s'")
  }

  @Test func serverURLs() throws {
    let server = try PostgresServer(url: "postgres://ann:s%40cret@db.example.com:6543/tasks?sslmode=require")
    #expect(
      server
        == PostgresServer(
          host: "db.example.com", port: 6543, username: "ann", password: "s@cret", database: "tasks", requireTLS: true,
          verifiesCertificate: false))
    #expect(try PostgresServer(url: "postgres://ann@db.example.com/tasks?sslmode=verify-full").verifiesCertificate)
    #expect(try PostgresServer(url: "postgresql://bob@localhost/app").port == 5432)
    #expect(throws: SyncError.self) { try PostgresServer(url: "mysql://bob@localhost/app") }
    #expect(throws: SyncError.self) { try PostgresServer(url: "postgres://localhost/app") }
    #expect(throws: SyncError.self) { try PostgresServer(url: "postgres://bob@localhost") }
  }

  @Test(.enabled(if: TestServer.available))
  func theBootstrapIsIdempotentAndTheTriggersLogPlainSQLWrites() async throws {
    let server = try await TestServer.freshDatabase()
    let sync = try SyncSchema(schema([SyncTask.self, SyncPerson.self, SyncNote.self]))
    let logger = Logger(label: "shoal.sync.tests")
    try await server.withClient { client in
      try await sync.bootstrap(on: client)
      try await sync.bootstrap(on: client)

      try await client.withConnection { connection in
        try await connection.listen(on: SyncSchema.channel) { notifications in
          let other = Task {
            // Another application, with plain SQL.
            try await client.query(
              "INSERT INTO \"SyncPerson\" (name, age) VALUES ('ann', 41), ('bob', 7)", logger: logger)
            try await client.query("UPDATE \"SyncPerson\" SET age = 42 WHERE name = 'ann'", logger: logger)
            try await client.query("DELETE FROM \"SyncPerson\" WHERE name = 'bob'", logger: logger)
          }
          try await other.value
          var seen: [Int] = []
          for try await notification in notifications {
            seen.append(Int(notification.payload) ?? -1)
            if seen.count == 4 { break }
          }
          #expect(seen == seen.sorted() && Set(seen).count == 4)
        }
      }
      let rows = try await client.query(
        "SELECT class_name, primary_key::text, operation, client_id FROM shoal_changes ORDER BY seq", logger: logger)
      var log: [String] = []
      for try await (name, key, operation, client) in rows.decode((String, String, String, String?).self) {
        log.append("\(name) \(key) \(operation) \(client ?? "-")")
      }
      #expect(
        log == [
          "SyncPerson \"ann\" U -", "SyncPerson \"bob\" U -", "SyncPerson \"ann\" U -", "SyncPerson \"bob\" D -",
        ])

      // A device's upload names itself and its version for the transaction: the log says so.
      try await client.withTransaction(logger: logger) { connection in
        try await connection.query("SELECT set_config('shoal.client_id', 'device-1', true)", logger: logger)
        try await connection.query("SELECT set_config('shoal.local_version', '17', true)", logger: logger)
        try await connection.query(
          "INSERT INTO \"SyncTask\" (_id, title, tags) VALUES ('65a000000000000000000001', 'x', '[\"a\"]')",
          logger: logger)
      }
      let last = try await client.query(
        "SELECT client_id, local_version FROM shoal_changes ORDER BY seq DESC LIMIT 1", logger: logger)
      for try await (client, version) in last.decode((String?, Int64?).self) {
        #expect(client == "device-1" && version == 17)
      }
    }
  }

  /// Runs the `shoal` command built beside the tests; returns its status and standard output.
  func shoal(_ arguments: [String]) throws -> (Int32, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
      .deletingLastPathComponent().appendingPathComponent("shoal")
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text)
  }

  /// A Realm file holding the test classes, in a new directory.
  func realmFile() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shoal-sync-" + UUID().uuidString)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let url = directory.appendingPathComponent("tasks.realm")
    let realm = try Realm(
      configuration: Realm.Configuration(fileURL: url, objectTypes: [SyncTask.self, SyncPerson.self, SyncNote.self]))
    try realm.write { realm.add(SyncPerson(value: ["name": "ann", "age": 41])) }
    return url
  }

  @Test func shoalSyncSchemaPrintsTheBootstrapOfAFile() throws {
    let url = try realmFile()
    let (status, text) = try shoal(["sync-schema", url.path])
    #expect(status == 0)
    let expected = try SyncSchema(schema([SyncTask.self, SyncPerson.self, SyncNote.self]))
    // The file's stored schema, read without the classes, gives the same tables.
    #expect(text.contains("CREATE TABLE IF NOT EXISTS \"SyncTask\""))
    #expect(text.contains("CREATE TABLE IF NOT EXISTS \"SyncPerson\""))
    #expect(text.hasPrefix("-- Shoal sync: the tables, change log and triggers of \(expected.tables.count) synced"))
    #expect(
      try shoal(["sync-schema", url.deletingLastPathComponent().appendingPathComponent("missing.realm").path]).0 == 1)
  }

  @Test(.enabled(if: TestServer.available))
  func shoalSyncSchemaAppliesTheBootstrap() async throws {
    let url = try realmFile()
    let server = try await TestServer.freshDatabase()
    let logger = Logger(label: "shoal.sync.tests")
    let (status, text) = try shoal(["sync-schema", url.path, "--apply", TestServer.url(of: server)])
    #expect(status == 0, "\(text)")
    #expect(text.hasPrefix("applied the sync schema of 2 class(es)"))
    try await server.withClient { client in
      let rows = try await client.query("SELECT count(*) FROM shoal_changes", logger: logger)
      for try await count in rows.decode(Int64.self) { #expect(count == 0) }
    }
  }

  @Test(.enabled(if: TestServer.available))
  func aLaterSchemaAddsTablesAndColumns() async throws {
    let server = try await TestServer.freshDatabase()
    let logger = Logger(label: "shoal.sync.tests")
    try await server.withClient { client in
      // An older version of the schema: one class, fewer columns (as an earlier app version had).
      try await client.query("CREATE TABLE \"SyncPerson\" (name text PRIMARY KEY)", logger: logger)
      try await client.query("INSERT INTO \"SyncPerson\" VALUES ('kept')", logger: logger)
      try await SyncSchema(schema([SyncTask.self, SyncPerson.self, SyncNote.self])).bootstrap(on: client)
      let rows = try await client.query(
        """
        SELECT table_name::text, column_name::text FROM information_schema.columns
        WHERE table_name IN ('SyncPerson', 'SyncTask') ORDER BY table_name, column_name
        """, logger: logger)
      var columns: [String] = []
      for try await (table, column) in rows.decode((String, String).self) { columns.append("\(table).\(column)") }
      #expect(columns.contains("SyncPerson.age") && columns.contains("SyncTask.tags"))
      let kept = try await client.query("SELECT count(*) FROM \"SyncPerson\"", logger: logger)
      for try await count in kept.decode(Int64.self) { #expect(count == 1) }
    }
  }
}
