import Foundation
import Logging
import PostgresNIO
import Shoal
import ShoalSharedModels
import ShoalSync
import Testing

@Suite("Sync: flexible-sync subscriptions", .serialized)
struct SubscriptionTests {
  let logger = Logger(label: "shoal.sync.tests")

  func sql(_ statement: String, _ server: PostgresServer) async throws {
    let logger = self.logger
    try await server.withClient { client in
      try await client.query(PostgresQuery(unsafeSQL: statement), logger: logger)
    }
  }

  @Test(.enabled(if: TestServer.available))
  func subscriptionsWidenAndNarrowWhatADeviceHolds() async throws {
    let server = try await TestServer.freshDatabase()
    try await server.withClient { client in try await SyncSchema(schema([Note.self])).bootstrap(on: client) }
    try await sql(
      """
      INSERT INTO "Note" (id, author, text, priority, tags)
      SELECT author || '-' || i, author, 'note', i, '[]'
      FROM (VALUES ('ann', 5), ('bob', 3), ('cy', 2)) AS a(author, n), generate_series(1, n) i
      """, server)
    let device = try SyncDevice(file: SyncDevice.newFile("subscriber"), url: TestServer.url(of: server), client: "s")
    // Without subscriptions, every row.
    try device.settle()
    #expect(SyncDevice.count(try device.send("digest")) == 10)
    // Narrowed to ann's notes: the others leave the device, not the server.
    #expect(try device.send("subscribe mine author == 'ann'", timeout: 60) == "subscribed mine")
    #expect(SyncDevice.count(try device.send("digest")) == 5)
    #expect(try await TestServer.scalar("SELECT count(*) FROM \"Note\"", server) == 10)
    // Widened to bob's high-priority notes too.
    #expect(
      try device.send("subscribe bobs author BEGINSWITH[c] 'BO' AND priority >= 2", timeout: 60) == "subscribed bobs")
    #expect(SyncDevice.count(try device.send("digest")) == 7)
    // Rows entering and leaving the view on the server follow.
    try await sql("UPDATE \"Note\" SET author = 'ann' WHERE id = 'cy-1'", server)
    try await sql("UPDATE \"Note\" SET author = 'zed' WHERE id = 'ann-1'", server)
    try device.settle()
    let notes = try device.send("digest")
    #expect(SyncDevice.count(notes) == 7)
    // A local note uploads whatever the subscriptions.
    #expect(try device.send("set local-1 written here") == "set local-1")
    try device.settle()
    #expect(try await TestServer.scalar("SELECT count(*) FROM \"Note\"", server) == 11)
    // A query PostgreSQL cannot run is refused with a reason; the set before it stays applied.
    let refused = try device.send("subscribe bad tags.@count > 1", timeout: 60)
    #expect(refused.hasPrefix("error ") && refused.contains("cannot be sent to PostgreSQL"), "\(refused)")
    #expect(try device.send("unsubscribe bad", timeout: 60) == "unsubscribed bad")
    // Every subscription removed: nothing in view, nothing deleted on the server.
    #expect(try device.send("unsubscribe all", timeout: 60) == "unsubscribed all")
    #expect(SyncDevice.count(try device.send("digest")) == 0)
    #expect(try await TestServer.scalar("SELECT count(*) FROM \"Note\"", server) == 11)
  }

  @Test func queriesTranslateToSQLOrSayWhatIsNotSupported() throws {
    let realm = try Realm(
      configuration: Realm.Configuration(
        inMemoryIdentifier: "subscriptions-" + UUID().uuidString, objectTypes: [Note.self]))
    let subscriptions = realm.subscriptions
    subscriptions.update {
      subscriptions.append(QuerySubscription<Note>(name: "closure") { $0.author == "ann" && $0.priority > 2 })
      subscriptions.append(QuerySubscription<Note>(name: "format", where: "text CONTAINS[c] %@", "50% off"))
      subscriptions.append(QuerySubscription<Note>(name: "list", where: "tags.@count > 1"))
    }
    #expect(subscriptions.count == 3)
    #expect(subscriptions.first(named: "closure")?.objectClassName == "Note")
    #expect(subscriptions.first(named: "closure")?.queryString.contains("ann") == true)
    if case .error(let error) = subscriptions.state {
      #expect("\(error)".contains("'tags.@count' is not a property of Note"))
    } else {
      Issue.record("a query on a list's count should leave the set in error, not \(subscriptions.state)")
    }
    subscriptions.update { subscriptions.remove(named: "list") }
    #expect(subscriptions.count == 2 && subscriptions.state == .pending)
  }
}
