import ArgumentParser
import Foundation
import Shoal
import ShoalSync

/// `shoal sync-schema FILE`: the SQL that prepares a PostgreSQL database for sync with the Realm
/// file's classes, printed for an administrator, or run with `--apply URL`.
struct SyncSchemaCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "sync-schema",
    abstract:
      "Print the PostgreSQL tables, change log and triggers that sync a Realm file's classes (or run them with --apply)."
  )
  @Argument(help: "The Realm file whose classes are synced.") var file: String
  @Option(help: "Run the SQL on this server (postgres://user[:password]@host[:port]/database) instead of printing it.")
  var apply: String?
  @OptionGroup var key: KeyOption

  func run() async throws {
    let schema: SyncSchema
    do {
      // The file's own schema: this process declares no classes, so the Realm is dynamic.
      let configuration = Realm.Configuration(
        fileURL: URL(fileURLWithPath: file), encryptionKey: try key.key().map { Data($0) }, readOnly: true)
      schema = try SyncSchema(try Realm(configuration: configuration).schema)
    } catch {
      try fail(error, json: false)
    }
    guard let apply else {
      print(schema.bootstrapSQL, terminator: "")
      return
    }
    do {
      let server = try PostgresServer(url: apply)
      try await server.withClient { client in try await schema.bootstrap(on: client) }
      print(
        "applied the sync schema of \(schema.tables.count) class(es) to \(server.host):\(server.port)/\(server.database)"
      )
    } catch {
      try fail(error, json: false)
    }
  }
}
