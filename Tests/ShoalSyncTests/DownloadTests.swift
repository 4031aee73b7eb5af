import Dispatch
import Foundation
import Logging
import PostgresNIO
import Shoal
import ShoalSync
import Testing

@Suite("Sync: server changes applied to a device", .serialized)
struct DownloadTests {
  let logger = Logger(label: "shoal.sync.tests")

  func deviceConfiguration() throws -> Realm.Configuration {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shoal-download-" + UUID().uuidString)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return Realm.Configuration(
      fileURL: directory.appendingPathComponent("device.realm"),
      objectTypes: [SyncTask.self, SyncPerson.self, SyncNote.self])
  }

  /// Fetches the changes after the device's cursor and applies them (the agent's loop, once).
  func download(_ client: PostgresClient, _ configuration: Realm.Configuration) async throws -> Int {
    let cursor = try ServerDownload.cursor(of: Realm(configuration: configuration))
    let batch = try await ServerDownload.fetch(after: cursor, from: client)
    try ServerDownload.apply(batch, to: Realm(configuration: configuration))
    return batch.changes.count
  }

  @Test(.enabled(if: TestServer.available))
  func rowsWrittenWithPlainSQLReachADeviceAsOrdinaryCommits() async throws {
    let server = try await TestServer.freshDatabase()
    let configuration = try deviceConfiguration()
    let logger = self.logger
    // The observer's change sets, as they are delivered.
    let (observed, delivery) = AsyncStream<[Int]>.makeStream()
    let token = try Realm(configuration: configuration).objects(SyncPerson.self).observe(on: DispatchQueue(label: "o"))
    {
      if case .update(_, _, let insertions, _) = $0 { delivery.yield(insertions) }
    }
    defer { token.invalidate() }
    try await server.withClient { client in
      try await SyncSchema(schema([SyncTask.self, SyncPerson.self, SyncNote.self])).bootstrap(on: client)
      // Another application writes with plain SQL; the task comes before the person it links to.
      try await client.query(
        """
        INSERT INTO "SyncTask" (_id, title, done, priority, due, owner, tags, note, score, attachment)
        VALUES ('65a000000000000000000001', 'write the report', false, 2, '2026-11-27 10:30:00.25+00', 'ann',
                '["work", "q4"]', '{"text": "by Friday"}', 12.50, '\\x0102ff')
        """, logger: logger)
      try await client.query("INSERT INTO \"SyncPerson\" (name, age) VALUES ('ann', 41), ('bob', 7)", logger: logger)
      #expect(try await download(client, configuration) == 3)

      let realm = try Realm(configuration: configuration)
      let task = try #require(
        realm.object(ofType: SyncTask.self, forPrimaryKey: try ObjectId(string: "65a000000000000000000001")))
      #expect(task.title == "write the report" && !task.done && task.priority == 2)
      #expect(task.due == Date(timeIntervalSince1970: 1_795_775_400.25))
      #expect(task.owner?.name == "ann" && task.owner?.age == 41)
      #expect(Array(task.tags) == ["work", "q4"])
      #expect(task.note?.text == "by Friday")
      #expect(task.score == (try Decimal128(string: "12.5")))
      #expect(task.attachment == Data([1, 2, 255]))
      #expect(realm.objects(SyncPerson.self).count == 2)

      // Updated, then deleted, and an update of a row later deleted: only the end counts.
      try await client.query("UPDATE \"SyncPerson\" SET age = 42 WHERE name = 'ann'", logger: logger)
      try await client.query("UPDATE \"SyncPerson\" SET age = 8 WHERE name = 'bob'", logger: logger)
      try await client.query("DELETE FROM \"SyncPerson\" WHERE name = 'bob'", logger: logger)
      try await client.query(
        "UPDATE \"SyncTask\" SET done = true, tags = '[]' WHERE title = 'write the report'", logger: logger)
      #expect(try await download(client, configuration) == 3)
      realm.refresh()
      #expect(realm.object(ofType: SyncPerson.self, forPrimaryKey: "ann")?.age == 42)
      #expect(realm.object(ofType: SyncPerson.self, forPrimaryKey: "bob") == nil)
      #expect(task.done && task.tags.isEmpty)
      // The owner was not in this batch's row change: the link still holds.
      #expect(task.owner?.name == "ann")
      #expect(try await download(client, configuration) == 0)
    }
    // The observer heard the downloads as ordinary commits (waited for as delivered). A
    // watchdog on a dispatch queue, not a task, ends the stream if nothing comes within 15
    // minutes, which fails the expectation: a task's sleep would wait behind every test that
    // holds a thread of the cooperative pool, and such a limit exists only so a lost delivery
    // cannot hang the run.
    let watchdog = DispatchWorkItem { delivery.finish() }
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(900), execute: watchdog)
    var deliveries = observed.makeAsyncIterator()
    let first = await deliveries.next()
    watchdog.cancel()
    #expect(first == [0, 1])
  }

  @Test(.enabled(if: TestServer.available))
  func theCursorCommitsWithTheChangesSoABatchAppliesOnce() async throws {
    let server = try await TestServer.freshDatabase()
    let configuration = try deviceConfiguration()
    let logger = self.logger
    try await server.withClient { client in
      try await SyncSchema(schema([SyncTask.self, SyncPerson.self, SyncNote.self])).bootstrap(on: client)
      try await client.query("INSERT INTO \"SyncPerson\" (name, age) VALUES ('ann', 41)", logger: logger)
      let batch = try await ServerDownload.fetch(after: 0, from: client)
      try ServerDownload.apply(batch, to: Realm(configuration: configuration))
      // The device changes the object locally; the same batch again (a retry after a crash
      // between applying and noticing) must not roll it back.
      let realm = try Realm(configuration: configuration)
      try realm.write { realm.object(ofType: SyncPerson.self, forPrimaryKey: "ann")?.age = 50 }
      try ServerDownload.apply(batch, to: realm)
      #expect(realm.object(ofType: SyncPerson.self, forPrimaryKey: "ann")?.age == 50)
      #expect(ServerDownload.cursor(of: realm) == batch.cursor)
      // Nothing new on the server: an empty batch, the cursor unchanged.
      let empty = try await ServerDownload.fetch(after: batch.cursor, from: client)
      #expect(empty.changes.isEmpty && empty.cursor == batch.cursor)
    }
    // The cursor is in the file: another Realm of the file, after reopening, sees it.
    let reopened = try Realm(configuration: configuration)
    #expect(ServerDownload.cursor(of: reopened) > 0)
  }

  @Test(.enabled(if: TestServer.available))
  func aRowThatDoesNotFitItsPropertyStopsTheBatchWithAnErrorNamingTheColumn() async throws {
    let server = try await TestServer.freshDatabase()
    let configuration = try deviceConfiguration()
    let logger = self.logger
    try await server.withClient { client in
      try await SyncSchema(schema([SyncTask.self, SyncPerson.self, SyncNote.self])).bootstrap(on: client)
      // Another application changed the column's type and wrote text where the device expects an Int.
      try await client.query("ALTER TABLE \"SyncPerson\" ALTER COLUMN age TYPE text", logger: logger)
      try await client.query("INSERT INTO \"SyncPerson\" (name, age) VALUES ('ann', 'forty')", logger: logger)
      let batch = try await ServerDownload.fetch(after: 0, from: client)
      let realm = try Realm(configuration: configuration)
      let error = #expect(throws: SyncError.self) { try ServerDownload.apply(batch, to: realm) }
      #expect(error?.description.contains("age") == true)
      // Nothing of the batch, and not the cursor, was applied.
      #expect(realm.objects(SyncPerson.self).isEmpty)
      #expect(ServerDownload.cursor(of: realm) == 0)
    }
  }
}
