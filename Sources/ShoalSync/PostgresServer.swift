import Foundation
import Logging
import PostgresNIO

/// Where a PostgreSQL server is and how to log in: from a URL
/// (`postgres://user:password@host:port/database?sslmode=require`) or field by field.
///
/// ```swift
/// let server = try PostgresServer(url: "postgres://app:secret@db.example.com/tasks?sslmode=require")
/// try await server.withClient { client in try await schema.bootstrap(on: client) }
/// ```
public struct PostgresServer: Sendable, Equatable, CustomStringConvertible {
  /// The host name or address.
  public var host: String
  /// The port (5432 by default).
  public var port: Int
  /// The user to log in as.
  public var username: String
  /// The password, if the server asks for one.
  public var password: String?
  /// The database.
  public var database: String
  /// Whether to connect through TLS. Off by default, as for a server on loopback or a private
  /// network.
  public var requireTLS: Bool
  /// With TLS, whether the server's certificate must chain to the system's trusted roots and
  /// name the host (libpq's `sslmode=verify-full`); when false, the connection is encrypted
  /// but the certificate is not checked (libpq's `sslmode=require`). On by default.
  public var verifiesCertificate: Bool

  /// A server given field by field.
  public init(
    host: String, port: Int = 5432, username: String, password: String? = nil, database: String,
    requireTLS: Bool = false, verifiesCertificate: Bool = true
  ) {
    self.host = host
    self.port = port
    self.username = username
    self.password = password
    self.database = database
    self.requireTLS = requireTLS
    self.verifiesCertificate = verifiesCertificate
  }

  /// A server given as a `postgres://` (or `postgresql://`) URL. `sslmode` as libpq reads it:
  /// `require` encrypts without checking the certificate, `verify-ca` and `verify-full` check
  /// it (against the system's roots, and the host name), anything else (or none) is plain TCP.
  /// Throws for another scheme, or a URL without a host, a user or a database.
  public init(url text: String) throws(SyncError) {
    guard let url = URLComponents(string: text), let scheme = url.scheme, scheme == "postgres" || scheme == "postgresql"
    else {
      throw SyncError.invalidServerURL(text, reason: "it must start with postgres:// or postgresql://")
    }
    guard let host = url.host, !host.isEmpty else { throw SyncError.invalidServerURL(text, reason: "it names no host") }
    guard let user = url.user, !user.isEmpty else { throw SyncError.invalidServerURL(text, reason: "it names no user") }
    let database = String(url.path.drop(while: { $0 == "/" }))
    guard !database.isEmpty else { throw SyncError.invalidServerURL(text, reason: "it names no database") }
    let mode = url.queryItems?.first { $0.name == "sslmode" }?.value
    self.init(
      host: host, port: url.port ?? 5432, username: user.removingPercentEncoding ?? user,
      password: url.password.map { $0.removingPercentEncoding ?? $0 }, database: database,
      requireTLS: mode == "require" || mode == "verify-full" || mode == "verify-ca",
      verifiesCertificate: mode != "require")
  }

  /// The server as a URL without its password: `postgres://user@host:port/database`.
  public var description: String {
    "postgres://\(username)@\(host):\(port)/\(database)"
      + (requireTLS ? (verifiesCertificate ? "?sslmode=verify-full" : "?sslmode=require") : "")
  }

  /// The client configuration postgres-nio takes.
  var clientConfiguration: PostgresClient.Configuration {
    var tls = TLSConfiguration.makeClientConfiguration()
    if !verifiesCertificate { tls.certificateVerification = .none }
    return PostgresClient.Configuration(
      host: host, port: port, username: username, password: password, database: database,
      tls: requireTLS ? .require(tls) : .disable)
  }

  /// Runs `body` with a connection pool to the server, closed when `body` returns or throws.
  @discardableResult
  public func withClient<R: Sendable>(_ body: @Sendable (PostgresClient) async throws -> R) async throws -> R {
    let client = PostgresClient(configuration: clientConfiguration)
    return try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { await client.run() }
      defer { group.cancelAll() }
      return try await body(client)
    }
  }
}

/// A sync failure, saying what to do about it.
public enum SyncError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The server URL could not be used.
  case invalidServerURL(String, reason: String)
  /// The schema cannot be synced (a class without a primary key).
  case unsyncableSchema(String)
  /// The server refused a statement.
  case server(String)
  /// A sync configuration names no client.
  case invalidClientIdentifier(String)
  /// The server did not answer in time.
  case timedOut(String)

  /// What went wrong and what to do about it.
  public var description: String {
    switch self {
    case .invalidServerURL(let url, let reason):
      return
        "The PostgreSQL URL '\(url)' cannot be used: \(reason). Give postgres://user[:password]@host[:port]/database."
    case .unsyncableSchema(let reason): return reason
    case .server(let message): return "PostgreSQL refused a statement: \(message)"
    case .invalidClientIdentifier(let identifier):
      return
        "The sync client identifier '\(identifier)' cannot be used: give each device a stable, non-empty name "
        + "of at most 200 characters (its uploads are recorded under it)."
    case .timedOut(let what): return "PostgreSQL did not answer in time (\(what)); the agent retries."
    }
  }
}

extension SyncSchema {
  /// Runs the bootstrap on `client`'s server, in one transaction: the tables, the change log
  /// and the triggers exist afterwards, whatever existed before.
  public func bootstrap(on client: PostgresClient, logger: Logger = Logger(label: "shoal.sync")) async throws {
    try await client.withTransaction(logger: logger) { connection in
      // One bootstrap at a time: devices connecting together would race to create the same tables.
      try await connection.query("SELECT pg_advisory_xact_lock(hashtext('shoal_bootstrap'))", logger: logger)
      for statement in statements {
        do {
          try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        } catch let error as PSQLError {
          throw SyncError.server(error.serverInfo?[.message] ?? String(reflecting: error))
        }
      }
    }
  }
}
