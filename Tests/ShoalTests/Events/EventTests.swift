import Foundation
import Shoal
import Synchronization
import Testing

/// Event recording: scopes record reads and writes with RealmSwift's JSON shapes, custom
/// events and metadata, the default Shoal-file sink and the JSON Lines sink, and a failing
/// sink that reaches the error handler without losing events or failing the caller's write.
@Suite struct EventTests {
  /// The events of a JSON Lines file, each parsed.
  func lines(_ url: URL) throws -> [[String: Any]] {
    let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    return try text.split(separator: "\n").map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
  }

  func parse(_ json: Any?) throws -> [String: Any] {
    let text = try #require(json as? String)
    return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  }

  func recordingConfiguration(sink: URL, metadata: [String: String] = ["user": "ann"]) -> Realm.Configuration {
    var configuration = fileConfiguration("events")
    configuration.objectTypes = [Person.self, Dog.self, Address.self]
    configuration.eventConfiguration = EventConfiguration(metadata: metadata, sink: JSONLinesEventSink(fileURL: sink))
    return configuration
  }

  @Test func aScopeRecordsWritesWithOldAndNewValues() async throws {
    let sink = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID()).jsonl")
    let realm = try Realm(configuration: recordingConfiguration(sink: sink))
    try realm.write {
      realm.add(Person(id: 1, name: "Ann", age: 30))
      realm.add(Person(id: 2, name: "Bob", age: 40))
    }
    let events = try #require(realm.events)
    let scope = events.beginScope(activity: "birthday")
    #expect(scope.isActive)
    try realm.write {
      realm.object(ofType: Person.self, forPrimaryKey: 1)?.age = 31
      if let bob = realm.object(ofType: Person.self, forPrimaryKey: 2) { realm.delete(bob) }
      let cat = Person(id: 3, name: "Cat", age: 5)
      cat.address = Address()
      cat.address?.city = "Oslo"
      realm.add(cat)
    }
    try await scope.commit()
    #expect(!scope.isActive)
    let recorded = try lines(sink)
    #expect(recorded.count == 1)
    let event = try #require(recorded.first)
    #expect(event["activity"] as? String == "birthday")
    #expect(event["event"] as? String == "write")
    #expect(event["user"] as? String == "ann")
    #expect((event["_id"] as? String)?.count == 24)
    let data = try parse(event["data"])
    let person = try #require(data["Person"] as? [String: Any])
    let insertions = try #require(person["insertions"] as? [[String: Any]])
    #expect(insertions.count == 1)
    #expect(insertions.first?["name"] as? String == "Cat")
    #expect((insertions.first?["address"] as? [String: Any])?["city"] as? String == "Oslo")
    let deletions = try #require(person["deletions"] as? [[String: Any]])
    #expect(deletions.map { $0["name"] as? String } == ["Bob"])
    let modifications = try #require(person["modifications"] as? [[String: Any]])
    #expect(modifications.count == 1)
    let old = try #require(modifications.first?["oldValue"] as? [String: Any])
    #expect(old["age"] as? Int == 30 && old["name"] as? String == "Ann")
    let new = try #require(modifications.first?["newValue"] as? [String: Any])
    #expect(new.count == 1 && new["age"] as? Int == 31, "only the properties that changed: \(new)")
  }

  @Test func aScopeRecordsReadsPerClass() async throws {
    let sink = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID()).jsonl")
    let realm = try Realm(configuration: recordingConfiguration(sink: sink))
    try realm.write {
      for i in 0..<5 { realm.add(Person(id: i, name: "P\(i)", age: 20 + i)) }
      realm.add(Dog(value: ["name": "Rex"]))
    }
    // Reads outside a scope are not recorded.
    _ = realm.objects(Person.self).first
    let scope = try #require(realm.events).beginScope(activity: "list adults")
    let adults = realm.objects(Person.self).filter("age >= 22").sorted(byKeyPath: "id")
    #expect(adults.map(\.name) == ["P2", "P3", "P4"])
    _ = adults.first  // read again: recorded once
    _ = realm.objects(Dog.self).first
    try await scope.commit()
    let recorded = try lines(sink)
    #expect(recorded.map { $0["event"] as? String } == ["read", "read"])
    let people = try parse(recorded[0]["data"])
    #expect(people["type"] as? String == "Person")
    #expect((people["value"] as? [[String: Any]])?.map { $0["name"] as? String } == ["P2", "P3", "P4"])
    let dogs = try parse(recorded[1]["data"])
    #expect(dogs["type"] as? String == "Dog")
    #expect((dogs["value"] as? [[String: Any]])?.first?["name"] as? String == "Rex")
  }

  @Test func cancelCustomEventsAndMetadata() async throws {
    let sink = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID()).jsonl")
    let realm = try Realm(configuration: recordingConfiguration(sink: sink))
    let events = try #require(realm.events)
    let cancelled = events.beginScope(activity: "discarded")
    try realm.write { realm.add(Person(id: 1, name: "Ann", age: 30)) }
    cancelled.cancel()
    #expect(!cancelled.isActive)
    events.updateMetadata(["user": "bob", "device": "pi"])
    try await events.recordEvent(activity: "login", eventType: "custom", data: "{\"ok\":true}")
    let recorded = try lines(sink)
    #expect(recorded.count == 1)
    #expect(recorded[0]["activity"] as? String == "login")
    #expect(recorded[0]["event"] as? String == "custom")
    #expect(recorded[0]["data"] as? String == "{\"ok\":true}")
    #expect(recorded[0]["user"] as? String == "bob" && recorded[0]["device"] as? String == "pi")
    // A Realm opened without an event configuration has no recorder.
    var plain = fileConfiguration("plain")
    plain.objectTypes = [Person.self, Dog.self, Address.self]
    #expect(try Realm(configuration: plain).events == nil)
  }

  /// The default sink: `AuditEvent` objects in `<file>.events.shoal`, one column per
  /// metadata key, a column added (by a migration) when a new key appears.
  @Test func theDefaultSinkIsAShoalFileBesideTheDatabase() async throws {
    var configuration = fileConfiguration("audited")
    configuration.objectTypes = [Person.self, Dog.self, Address.self]
    configuration.eventConfiguration = EventConfiguration(metadata: ["tenant": "t1"])
    let realm = try Realm(configuration: configuration)
    let events = try #require(realm.events)
    let scope = events.beginScope(activity: "import")
    try realm.write { realm.add(Person(id: 7, name: "Gus", age: 50)) }
    try await scope.commit()
    let url = ShoalEventSink.defaultFileURL(for: try #require(configuration.fileURL))
    #expect(url.lastPathComponent == "audited.realm.events.shoal")
    var stored = try ShoalEventSink.events(in: url)
    #expect(stored.count == 1)
    let first = try #require(stored.first)
    #expect(first.activity == "import" && first.event == "write")
    #expect(first.metadata == ["tenant": "t1"])
    #expect(first.data?.contains("\"Gus\"") == true)
    // A new metadata key becomes a new column; earlier events have none for it.
    events.updateMetadata(["tenant": "t2", "device": "pi"])
    try await events.recordEvent(activity: "sync", eventType: "custom")
    stored = try ShoalEventSink.events(in: url)
    #expect(stored.map(\.activity) == ["import", "sync"])
    #expect(stored.map(\.metadata) == [["tenant": "t1"], ["tenant": "t2", "device": "pi"]])
    // The new column came with a migration: schema version 1.
    let file = try Realm(
      configuration: Realm.Configuration(fileURL: url, readOnly: true, schemaVersion: 1, objectTypes: []))
    let schema = try #require(file.schema["AuditEvent"])
    #expect(schema.properties.map(\.name) == ["_id", "timestamp", "activity", "event", "data", "tenant", "device"])
    #expect(schema.primaryKeyProperty?.name == "_id")
    #expect(schema.properties.filter { $0.name == "device" }.first?.isOptional == true)
    // A second process-like opener (a new sink on the same file) appends to the same class.
    try ShoalEventSink(fileURL: url).store([
      RecordedEvent(activity: "other", event: nil, data: nil, metadata: ["user": "x"])
    ])
    #expect(try ShoalEventSink.events(in: url).map(\.activity) == ["import", "sync", "other"])
  }

  /// `shoal events FILE` prints what the default sink stored, as text and as JSON Lines.
  @Test func theCommandLinePrintsRecordedEvents() async throws {
    var configuration = fileConfiguration("cli")
    configuration.objectTypes = [Person.self, Dog.self, Address.self]
    configuration.eventConfiguration = EventConfiguration(metadata: ["user": "ann"])
    let realm = try Realm(configuration: configuration)
    let scope = try #require(realm.events).beginScope(activity: "signup")
    try realm.write { realm.add(Person(id: 1, name: "Ann", age: 30)) }
    try await scope.commit()
    try await realm.events?.recordEvent(activity: "logout", eventType: "custom")
    let file = ShoalEventSink.defaultFileURL(for: try #require(configuration.fileURL)).path
    func shoal(_ arguments: [String]) throws -> (Int32, String) {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("shoal")
      process.arguments = arguments
      let out = Pipe()
      process.standardOutput = out
      try process.run()
      let data = out.fileHandleForReading.readDataToEndOfFile()
      process.waitUntilExit()
      return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
    let (status, text) = try shoal(["events", file])
    #expect(status == 0)
    #expect(text.contains("2 event(s)"))
    #expect(text.contains("signup  write  [user=ann]"))
    #expect(text.contains("logout  custom"))
    let (jsonStatus, json) = try shoal(["events", file, "--json", "--last", "1"])
    #expect(jsonStatus == 0)
    let lines = json.split(separator: "\n")
    #expect(lines.count == 1)
    let last = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
    #expect(last["activity"] as? String == "logout" && last["user"] as? String == "ann")
    let (missing, _) = try shoal(["events", file + ".missing"])
    #expect(missing == 1)
    // A Realm file that is not an event file: said in words, exit 1.
    let plain = fileConfiguration("plain")
    try Realm(configuration: plain).write {}
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
      .deletingLastPathComponent().appendingPathComponent("shoal")
    process.arguments = ["events", try #require(plain.fileURL).path]
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 1)
    #expect(message.contains("is not an event file"), "\(message)")
  }

  /// A custom sink runs on the recorder's queue: while it is stuck, the caller commits
  /// scopes and writes on; once it moves, every batch arrives, in order.
  @Test func aSlowSinkNeverBlocksTheCaller() async throws {
    let sink = GatedSink()
    var configuration = fileConfiguration("gated")
    configuration.objectTypes = [Person.self, Dog.self, Address.self]
    configuration.eventConfiguration = EventConfiguration(sink: sink)
    let realm = try Realm(configuration: configuration)
    let events = try #require(realm.events)
    let stored = DispatchSemaphore(value: 0)
    for i in 0..<3 {
      let scope = events.beginScope(activity: "step \(i)")
      try realm.write { realm.add(Person(id: i, name: "P\(i)", age: i)) }
      scope.commit { error in
        #expect(error == nil)
        stored.signal()
      }
    }
    // All three scopes committed and their writes are visible while the sink has stored nothing.
    #expect(realm.objects(Person.self).count == 3)
    #expect(sink.batches.isEmpty)
    for _ in 0..<3 { sink.gate.signal() }
    for _ in 0..<3 { stored.wait() }
    #expect(sink.batches.map { $0.map(\.activity) } == [["step 0"], ["step 1"], ["step 2"]])
  }

  /// The sink's directory does not exist at first: storing fails, the error handler hears of
  /// it, the caller's write is committed regardless, and the events reach the sink with the
  /// next batch once it works.
  @Test func aFailingSinkReachesTheErrorHandlerAndLosesNothing() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("events-dir-\(UUID())")
    let sink = directory.appendingPathComponent("events.jsonl")
    let failures = Failures()
    var configuration = recordingConfiguration(sink: sink)
    configuration.eventConfiguration?.errorHandler = { error in failures.add("\(error)") }
    let realm = try Realm(configuration: configuration)
    let events = try #require(realm.events)
    let first = events.beginScope(activity: "first")
    try realm.write { realm.add(Person(id: 1, name: "Ann", age: 30)) }
    await #expect(throws: (any Error).self) { try await first.commit() }
    #expect(realm.objects(Person.self).count == 1, "the write itself is committed")
    #expect(failures.all.count == 1)
    #expect(failures.all.first?.contains("Unable to open the event file") == true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let second = events.beginScope(activity: "second")
    try realm.write { realm.add(Person(id: 2, name: "Bob", age: 40)) }
    try await second.commit()
    #expect(try lines(sink).map { $0["activity"] as? String } == ["first", "second"])
  }
}

/// A custom sink that holds every batch until released, noting the thread it ran on.
final class GatedSink: EventSink {
  let gate = DispatchSemaphore(value: 0)
  private let seen = Mutex<(batches: [[RecordedEvent]], onMainThread: Bool)>(([], false))

  func store(_ events: [RecordedEvent]) throws {
    gate.wait()
    seen.withLock {
      $0.batches.append(events)
      $0.onMainThread = $0.onMainThread || Thread.isMainThread
    }
  }

  var batches: [[RecordedEvent]] { seen.withLock { $0.batches } }
}

/// Errors reported to an error handler, from the event thread.
final class Failures: Sendable {
  private let messages = Mutex<[String]>([])

  func add(_ message: String) { messages.withLock { $0.append(message) } }
  var all: [String] { messages.withLock { $0 } }
}
