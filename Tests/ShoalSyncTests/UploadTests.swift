import Foundation
import Logging
import PostgresNIO
import Shoal
import ShoalSync
import Synchronization
import Testing

@Suite("Sync: a device's commits uploaded and merged", .serialized)
struct UploadTests {
  let logger = Logger(label: "shoal.sync.tests")
  static let types: [ObjectBase.Type] = [SyncTask.self, SyncPerson.self, SyncNote.self]

  func device() throws -> Realm.Configuration {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shoal-upload-" + UUID().uuidString)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return Realm.Configuration(
      fileURL: directory.appendingPathComponent("device.realm"), objectTypes: UploadTests.types)
  }

  /// Uploads everything `configuration`'s outbox holds, one server transaction per commit.
  func upload(_ configuration: Realm.Configuration, as name: String, to client: PostgresClient) async throws -> Int {
    let realm = try Realm(configuration: configuration)
    let uploader = ServerUpload.uploader(of: realm, client: name)
    var sent = 0
    while case let uploads = try ServerUpload.pending(in: Realm(configuration: configuration)), !uploads.isEmpty {
      for upload in uploads {
        try await ServerUpload.send(upload, as: uploader, to: client, logger: logger)
        try ServerUpload.confirm(upload, in: Realm(configuration: configuration))
        sent += 1
      }
    }
    return sent
  }

  /// Applies every server change after the device's cursor, leaving out the device's own.
  func download(_ configuration: Realm.Configuration, as name: String, from client: PostgresClient) async throws {
    while true {
      let realm = try Realm(configuration: configuration)
      let batch = try await ServerDownload.fetch(
        after: ServerDownload.cursor(of: realm), from: client,
        excluding: ServerUpload.uploader(of: realm, client: name), logger: logger)
      guard batch.cursor > ServerDownload.cursor(of: realm) else { return }
      try ServerDownload.apply(batch, to: Realm(configuration: configuration))
    }
  }

  func rows(_ sql: String, _ client: PostgresClient) async throws -> [String] {
    var out: [String] = []
    for try await row in try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(String.self) {
      out.append(row)
    }
    return out
  }

  @Test(.enabled(if: TestServer.available))
  func objectsOfEveryTypeTravelFromOneDeviceToAnother() async throws {
    let server = try await TestServer.freshDatabase()
    let (a, b) = (try device(), try device())
    try await server.withClient { client in
      try await SyncSchema(schema(UploadTests.types)).bootstrap(on: client)
      let realm = try Realm(configuration: a)
      // What the file held before sync was enabled is uploaded too.
      try realm.write { realm.create(SyncPerson.self, value: ["name": "ann", "age": 41]) }
      try ServerUpload.enable(on: realm)
      let id = ObjectId.generate()
      try realm.write {
        let task = SyncTask()
        task._id = id
        task.title = "it's \"quoted\""
        task.priority = 3
        task.due = Date(timeIntervalSince1970: 1_795_775_400.25)
        task.owner = realm.object(ofType: SyncPerson.self, forPrimaryKey: "ann")
        task.tags.append(objectsIn: ["work", "q4"])
        task.note = SyncNote(value: ["text": "by Friday"])
        task.score = try! Decimal128(string: "12.5")  // a valid literal
        task.attachment = Data([0, 1, 255])
        realm.add(task)
      }
      #expect(try await upload(a, as: "a", to: client) == 2)
      realm.refresh()
      #expect(ServerUpload.pendingCount(in: realm) == 0)
      #expect(
        try await rows("SELECT title || '/' || priority || '/' || owner FROM \"SyncTask\"", client) == [
          "it's \"quoted\"/3/ann"
        ])

      try await download(b, as: "b", from: client)
      let other = try Realm(configuration: b)
      let task = try #require(other.object(ofType: SyncTask.self, forPrimaryKey: id))
      #expect(task.title == "it's \"quoted\"" && task.priority == 3 && !task.done)
      #expect(task.due == Date(timeIntervalSince1970: 1_795_775_400.25))
      #expect(task.owner?.name == "ann" && task.owner?.age == 41)
      #expect(Array(task.tags) == ["work", "q4"] && task.note?.text == "by Friday")
      #expect(task.score == (try Decimal128(string: "12.5")) && task.attachment == Data([0, 1, 255]))

      // An embedded object changed in place, a list edited, a string-keyed object deleted.
      try realm.write {
        let local = try #require(realm.object(ofType: SyncTask.self, forPrimaryKey: id))
        local.note?.text = "by Monday"
        local.tags.remove(at: 0)
        realm.delete(try #require(realm.object(ofType: SyncPerson.self, forPrimaryKey: "ann")))
      }
      #expect(try await upload(a, as: "a", to: client) == 1)
      try await download(b, as: "b", from: client)
      other.refresh()
      #expect(task.note?.text == "by Monday" && Array(task.tags) == ["q4"])
      #expect(other.object(ofType: SyncPerson.self, forPrimaryKey: "ann") == nil && task.owner == nil)
      // The device's own changes do not come back to it as downloads.
      let before = ServerDownload.cursor(of: realm)
      try await download(a, as: "a", from: client)
      let after = try Realm(configuration: a)
      after.refresh()
      #expect(ServerDownload.cursor(of: after) > before)
    }
  }

  @Test(.enabled(if: TestServer.available))
  func anUploadSentTwiceIsAppliedOnce() async throws {
    let server = try await TestServer.freshDatabase()
    let a = try device()
    try await server.withClient { client in
      try await SyncSchema(schema(UploadTests.types)).bootstrap(on: client)
      let realm = try Realm(configuration: a)
      try ServerUpload.enable(on: realm)
      try realm.write { realm.create(SyncPerson.self, value: ["name": "ann", "age": 1]) }
      let uploader = ServerUpload.uploader(of: realm, client: "a")
      let upload = try #require(try ServerUpload.pending(in: realm).first)
      #expect(try await ServerUpload.send(upload, as: uploader, to: client, logger: logger))
      // Another application changes the row; the device, killed before confirming, sends again.
      try await client.query("UPDATE \"SyncPerson\" SET age = 2 WHERE name = 'ann'", logger: logger)
      #expect(try await !ServerUpload.send(upload, as: uploader, to: client, logger: logger))
      #expect(try await rows("SELECT age::text FROM \"SyncPerson\"", client) == ["2"])
      #expect(
        try await rows("SELECT count(*)::text FROM shoal_changes WHERE client_id = '\(uploader)'", client) == ["1"])
      #expect(try await rows("SELECT local_version::text FROM shoal_uploads", client) == [String(upload.sequence)])
      try ServerUpload.confirm(upload, in: realm)
      #expect(try ServerUpload.pending(in: realm).isEmpty && ServerUpload.pendingCount(in: realm) == 0)
      // A file made again under the same client name is another uploader.
      #expect(ServerUpload.uploader(of: try Realm(configuration: device()), client: "a") != uploader)
    }
  }

  @Test(.enabled(if: TestServer.available))
  func concurrentEditsMergeByColumnAndADeleteWinsOverAnUpdate() async throws {
    let server = try await TestServer.freshDatabase()
    let (a, b) = (try device(), try device())
    try await server.withClient { client in
      try await SyncSchema(schema(UploadTests.types)).bootstrap(on: client)
      for configuration in [a, b] { try ServerUpload.enable(on: Realm(configuration: configuration)) }
      let id = ObjectId.generate()
      let realmA = try Realm(configuration: a)
      try realmA.write {
        realmA.create(SyncTask.self, value: ["_id": id, "title": "plan", "priority": 1])
        realmA.create(SyncPerson.self, value: ["name": "bob", "age": 30])
      }
      _ = try await upload(a, as: "a", to: client)
      try await download(b, as: "b", from: client)
      let realmB = try Realm(configuration: b)
      // A edits the title, B the priority and then the title: each uploads only what it changed.
      try realmA.write { realmA.object(ofType: SyncTask.self, forPrimaryKey: id)?.title = "plan A" }
      try realmB.write {
        let task = realmB.object(ofType: SyncTask.self, forPrimaryKey: id)
        task?.priority = 2
        task?.title = "plan B"
      }
      _ = try await upload(b, as: "b", to: client)
      // A downloads before uploading: B's priority arrives, A's pending title stays (rebased).
      try await download(a, as: "a", from: client)
      realmA.refresh()
      // What A downloaded is not queued for upload again: only A's own title edit waits.
      #expect(ServerUpload.pendingCount(in: realmA) == 1)
      let taskA = try #require(realmA.object(ofType: SyncTask.self, forPrimaryKey: id))
      #expect(taskA.priority == 2 && taskA.title == "plan A")
      _ = try await upload(a, as: "a", to: client)
      try await download(b, as: "b", from: client)
      realmB.refresh()
      // Last writer in server order wins the title: A uploaded after B.
      let taskB = try #require(realmB.object(ofType: SyncTask.self, forPrimaryKey: id))
      #expect(taskB.title == "plan A" && taskB.priority == 2)

      // The server deletes bob (plain SQL) while A updates him: the delete wins everywhere.
      try await client.query("DELETE FROM \"SyncPerson\" WHERE name = 'bob'", logger: logger)
      try realmA.write { realmA.object(ofType: SyncPerson.self, forPrimaryKey: "bob")?.age = 31 }
      try await download(a, as: "a", from: client)
      realmA.refresh()
      #expect(realmA.object(ofType: SyncPerson.self, forPrimaryKey: "bob") == nil)
      _ = try await upload(a, as: "a", to: client)
      #expect(try await rows("SELECT name FROM \"SyncPerson\"", client).isEmpty)
      try await download(b, as: "b", from: client)
      realmB.refresh()
      #expect(realmB.object(ofType: SyncPerson.self, forPrimaryKey: "bob") == nil)

      // deleteAll uploads every deletion.
      try realmB.write { realmB.deleteAll() }
      _ = try await upload(b, as: "b", to: client)
      #expect(try await rows("SELECT title FROM \"SyncTask\"", client).isEmpty)
      try await download(a, as: "a", from: client)
      realmA.refresh()
      #expect(realmA.objects(SyncTask.self).isEmpty)
    }
  }

  @Test func theOutboxSurvivesCompactionWhichRestartsVersions() throws {
    let configuration = try device()
    var uploader = ""
    var before: [String] = []
    do {
      let realm = try Realm(configuration: configuration)
      try ServerUpload.enable(on: realm)
      try realm.write { realm.create(SyncPerson.self, value: ["name": "ann", "age": 1]) }
      try realm.write { realm.object(ofType: SyncPerson.self, forPrimaryKey: "ann")?.age = 2 }
      uploader = ServerUpload.uploader(of: realm, client: "a")
      before = try ServerUpload.pending(in: realm).map { "\($0.sequence) \($0.statements.map(\.rows))" }
      #expect(before.count == 2)
    }
    // Compacted on the next open: the copy starts its versions again, the outbox goes with it.
    var compacting = configuration
    let compacted = Mutex(false)
    compacting.shouldCompactOnLaunch = { _, _ in
      compacted.withLock { $0 = true }
      return true
    }
    let realm = try Realm(configuration: compacting)
    #expect(compacted.withLock { $0 })
    #expect(try ServerUpload.pending(in: realm).map { "\($0.sequence) \($0.statements.map(\.rows))" } == before)
    #expect(ServerUpload.uploader(of: realm, client: "a") == uploader)
    // And the next commit continues the sequence.
    try realm.write { realm.object(ofType: SyncPerson.self, forPrimaryKey: "ann")?.age = 3 }
    #expect(try ServerUpload.pending(in: realm).map(\.sequence) == [1, 2, 3])
  }
}
