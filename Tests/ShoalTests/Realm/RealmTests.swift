import Foundation
import Shoal
import Synchronization
import Testing

@Suite("Realm: configuration, instances, errors")
struct RealmTests {
  @Test func defaultSchemaHoldsEveryObjectSubclass() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let names = Set(realm.schema.objectSchema.map(\.className))
    #expect(names.isSuperset(of: ["Person", "Dog", "Address", "AllTypes", "Counter", "Note"]))
    // Classes that opt out of the default schema (the migration tests' versions) are left out.
    #expect(!names.contains("Migrating"))
    #expect(!names.contains("Extra"))
  }

  @Test func explicitObjectTypesMustIncludeLinkedClasses() {
    var config = memoryConfiguration()
    config.objectTypes = [Person.self]
    let error = #expect(throws: Realm.Error.self) { _ = try Realm(configuration: config) }
    // RealmSwift's text for a class subset that leaves out a linked class.
    #expect(error?.code == .fail)
    #expect(
      error?.localizedDescription.contains(
        "Invalid class subset list:\n- 'Person.dog' links to class 'Dog', which is missing from the list of classes "
          + "managed by the Realm") == true, "\(String(describing: error))")
  }

  @Test func oneInstancePerThreadAndFile() throws {
    let config = memoryConfiguration()
    let a = try Realm(configuration: config)
    let b = try Realm(configuration: config)
    #expect(a == b)
    #expect(a.configuration.inMemoryIdentifier == config.inMemoryIdentifier)
    #expect(a.configuration.fileURL == nil)
  }

  @Test func inMemoryRealmsShareDataWhileOpen() throws {
    let config = memoryConfiguration()
    let realm = try Realm(configuration: config)
    try realm.write { realm.add(Counter(value: ["a", 1])) }
    let other = try Realm(configuration: memoryConfiguration())
    #expect(other.objects(Counter.self).isEmpty)
    #expect(try Realm(configuration: config).objects(Counter.self).count == 1)
  }

  @Test func otherThreadsSeeCommitsAfterRefresh() async throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    #expect(realm.isEmpty)
    let done = Thread.detachAndWait {
      let other = try Realm(configuration: config)
      try other.write { other.add(Counter(value: ["t", 7])) }
    }
    #expect(done)
    #expect(realm.objects(Counter.self).isEmpty)
    #expect(realm.refresh())
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: "t")?.value == 7)
    #expect(!realm.isEmpty)
  }

  @Test func fileErrors() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("shoal-errors-" + UUID().uuidString)
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    var config = Realm.Configuration(fileURL: dir.appendingPathComponent("missing.realm"), readOnly: true)
    expectRealmError(.fileNotFound) { _ = try Realm(configuration: config) }

    let garbage = dir.appendingPathComponent("garbage.realm")
    try Data(repeating: 0x42, count: 20_000).write(to: garbage)
    config = Realm.Configuration(fileURL: garbage)
    let error = #expect(throws: Realm.Error.self) { _ = try Realm(configuration: config) }
    #expect(error?.code == .invalidDatabase)

    // A directory where the file should be: realm-core's FileOperationFailed (EISDIR).
    config = Realm.Configuration(fileURL: dir)
    expectRealmError(.fileOperationFailed) { _ = try Realm(configuration: config) }

  }

  @Test func writeCopyAndDeleteFiles() throws {
    let config = fileConfiguration()
    let copyURL = config.fileURL!.deletingLastPathComponent().appendingPathComponent("copy.realm")
    do {
      let realm = try Realm(configuration: config)
      try realm.write { realm.add((0..<10).map { Counter(value: ["c\($0)", $0]) }) }
      try realm.writeCopy(toFile: copyURL)
      expectRealmError(.fileExists) { try realm.writeCopy(toFile: copyURL) }
      expectRealmError(.alreadyOpen) { try Realm.deleteFiles(for: config) }
    }
    let copy = try Realm(configuration: Realm.Configuration(fileURL: copyURL))
    #expect(copy.objects(Counter.self).count == 10)
    #expect(try Realm.deleteFiles(for: config))
    #expect(!FileManager.default.fileExists(atPath: config.fileURL!.path))
  }

  @Test func readOnlyRealmsRead() throws {
    var config = fileConfiguration()
    do {
      let realm = try Realm(configuration: config)
      try realm.write { realm.add(Counter(value: ["r", 3])) }
    }
    config.readOnly = true
    let realm = try Realm(configuration: config)
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: "r")?.value == 3)
  }
}

extension Thread {
  /// Runs `body` on a new thread and waits for it; false if it threw.
  static func detachAndWait(_ body: @escaping @Sendable () throws -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex(false)
    Thread.detachNewThread {
      result.withLock { $0 = (try? body()) != nil }
      done.signal()
    }
    done.wait()
    return result.withLock { $0 }
  }
}

/// Expects `body` to throw a `Realm.Error` with `code`.
func expectRealmError(
  _ code: Realm.Error.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
  do {
    try body()
    Issue.record("expected Realm.Error \(code), nothing was thrown", sourceLocation: sourceLocation)
  } catch let error as Realm.Error {
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
  } catch {
    Issue.record("expected Realm.Error \(code), got \(error)", sourceLocation: sourceLocation)
  }
}

@Suite("Realm: compaction on launch and the version limit")
struct RealmLimitsTests {
  @Test func shouldCompactOnLaunchCompactsWhenAsked() throws {
    var config = fileConfiguration()
    do {
      let realm = try Realm(configuration: config)
      for round in 0..<20 {
        try realm.write {
          realm.delete(realm.objects(Counter.self))
          realm.add((0..<100).map { Counter(value: ["c\($0)", round]) })
        }
      }
    }
    let path = config.fileURL!.path
    let before = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
    let seen = Mutex<(Int, Int)>((0, 0))
    config.shouldCompactOnLaunch = { total, used in
      seen.withLock { $0 = (total, used) }
      return used < total
    }
    let realm = try Realm(configuration: config)
    let (total, used) = seen.withLock { $0 }
    #expect(total == before && used < total)
    let after = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
    #expect(after < before)
    #expect(realm.objects(Counter.self).count == 100)
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: "c5")?.value == 19)
  }

  @Test func exceedingMaximumNumberOfActiveVersionsFailsTheWrite() throws {
    var config = fileConfiguration()
    config.maximumNumberOfActiveVersions = 2
    let realm = try Realm(configuration: config)
    try realm.write { realm.add(Counter(value: ["a", 0])) }
    // Other threads' Realms pin older versions: one old version fits the limit of 2
    // besides the newest; once two are pinned, the next write fails.
    let holders = (0..<2).map { _ in HeldRealm(config) }
    holders[0].open()
    try realm.write { realm.objects(Counter.self).first?.value += 1 }
    holders[1].open()
    try realm.write { realm.objects(Counter.self).first?.value += 1 }
    let error = #expect(throws: Realm.Error.self) {
      try realm.write { realm.objects(Counter.self).first?.value += 1 }
    }
    #expect(error?.localizedDescription.contains("Number of active versions") == true)
    for holder in holders { holder.close() }
    try realm.write { realm.objects(Counter.self).first?.value += 1 }
  }
}

/// A Realm opened and kept on its own thread (pinning its version) until closed.
final class HeldRealm: Sendable {
  let configuration: Realm.Configuration
  private let opened = DispatchSemaphore(value: 0)
  private let release = DispatchSemaphore(value: 0)
  private let finished = DispatchSemaphore(value: 0)

  init(_ configuration: Realm.Configuration) { self.configuration = configuration }

  func open() {
    Thread.detachNewThread { [self] in
      let realm = try? Realm(configuration: configuration)
      _ = realm?.objects(Counter.self).count
      opened.signal()
      release.wait()
      withExtendedLifetime(realm) {}
      finished.signal()
    }
    opened.wait()
  }

  func close() {
    release.signal()
    finished.wait()
  }
}

@Suite("The thread's cached Realm")
struct RealmCacheTests {
  /// A Realm in a write transaction stays the thread's instance until the transaction ends, so
  /// three temporaries make one transaction, as in RealmSwift.
  @Test func aTransactionOutlivesTheTemporaryThatBeganIt() throws {
    let config = fileConfiguration()
    #expect(
      Thread.detachAndWait {
        try Realm(configuration: config).beginWrite()
        try Realm(configuration: config).create(Counter.self, value: ["a", 1])
        try Realm(configuration: config).commitWrite()
        guard try Realm(configuration: config).objects(Counter.self).count == 1 else {
          throw CocoaError(.coderInvalidValue)
        }
      })
  }

  /// A transaction left open by a thread that ends is cancelled: the write lock is free again.
  @Test func aTransactionLeftOpenByAnEndedThreadIsCancelled() throws {
    let config = fileConfiguration()
    #expect(
      Thread.detachAndWait {
        let realm = try Realm(configuration: config)
        realm.beginWrite()
        realm.create(Counter.self, value: ["lost", 1])
      })
    let realm = try Realm(configuration: config)
    try realm.write { realm.create(Counter.self, value: ["kept", 2]) }
    #expect(realm.objects(Counter.self).map(\.name) == ["kept"])
  }
}
