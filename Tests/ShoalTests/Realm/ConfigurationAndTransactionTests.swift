import Dispatch
import Foundation
import Shoal
import Synchronization
import Testing

// Conformance with RealmSwift 10.x's documented behaviour of the Realm itself: configurations,
// errors, schema versions and migrations, frozen Realms, thread-safe references, transactions
// and Realm notifications. Errors that RealmSwift raises as exceptions (Shoal: fatal errors) are
// checked with exit tests whose standard error must contain RealmSwift's (or realm-core's)
// message; errors it throws are checked as thrown `Realm.Error`s.

// MARK: - Models (nested in the suite; every Realm here lists them in `objectTypes`)

extension ConfigurationAndTransactionTests {
  final class ShelterDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
  }

  final class Shelter: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var dogs: List<ShelterDog>
  }

  /// The first version of the stored class "MigratingPerson".
  final class MigratingPersonV1: Object {
    override class func _realmObjectName() -> String? { "MigratingPerson" }
    override class func shouldIncludeInDefaultSchema() -> Bool { false }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
    @Persisted var score = 0
    @Persisted var nickname = ""
  }

  /// The second version: `firstName`/`lastName` became `fullName`, `age` is renamed `yearsOld`,
  /// `score` changed from int to string and `nickname` became optional.
  final class MigratingPersonV2: Object {
    override class func _realmObjectName() -> String? { "MigratingPerson" }
    override class func shouldIncludeInDefaultSchema() -> Bool { false }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var fullName = ""
    @Persisted var yearsOld = 0
    @Persisted var score = ""
    @Persisted var nickname: String?
  }

  /// A class whose primary key moves from `code` to `label`.
  final class RekeyedV1: Object {
    override class func _realmObjectName() -> String? { "Rekeyed" }
    override class func shouldIncludeInDefaultSchema() -> Bool { false }
    @Persisted(primaryKey: true) var code = ""
    @Persisted var label = ""
  }

  final class RekeyedV2: Object {
    override class func _realmObjectName() -> String? { "Rekeyed" }
    override class func shouldIncludeInDefaultSchema() -> Bool { false }
    @Persisted var code = ""
    @Persisted(primaryKey: true) var label = ""
  }

  /// A class dropped from the program after the first version.
  final class Gone: Object {
    override class func shouldIncludeInDefaultSchema() -> Bool { false }
    @Persisted var value = 0
  }
}

private let shelterTypes: [ObjectBase.Type] = [
  ConfigurationAndTransactionTests.ShelterDog.self, ConfigurationAndTransactionTests.Shelter.self,
]

/// A fresh in-memory configuration holding only the shelter and shelter dog classes.
private func shelterMemoryConfiguration() -> Realm.Configuration {
  Realm.Configuration(inMemoryIdentifier: "shelter-" + UUID().uuidString, objectTypes: shelterTypes)
}

private func shelterRealm() throws -> Realm { try Realm(configuration: shelterMemoryConfiguration()) }

/// A configuration of the file `name` in `directory`.
private func scratchFileConfiguration(
  _ directory: URL, _ name: String = "shelter.realm", objectTypes: [ObjectBase.Type] = shelterTypes,
  schemaVersion: UInt64 = 0
) -> Realm.Configuration {
  Realm.Configuration(
    fileURL: directory.appendingPathComponent(name), schemaVersion: schemaVersion, objectTypes: objectTypes)
}

/// Runs `body` with a fresh temporary directory, removed afterwards.
private func withScratchDirectory<T>(_ body: (URL) throws -> T) throws -> T {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "configuration-tests-" + UUID().uuidString, isDirectory: true)
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  return try body(directory)
}

/// The async form of `withScratchDirectory`, for exit tests.
private func withScratchDirectory(_ body: (URL) async throws -> Void) async throws {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "configuration-tests-" + UUID().uuidString, isDirectory: true)
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  try await body(directory)
}

/// Stores two `MigratingPersonV1` objects in a file at schema version 0 and returns its configuration.
private func seedMigratingFile(_ directory: URL) throws -> Realm.Configuration {
  let config = scratchFileConfiguration(
    directory, "migrating.realm", objectTypes: [ConfigurationAndTransactionTests.MigratingPersonV1.self])
  let realm = try Realm(configuration: config)
  try realm.write {
    realm.create(
      ConfigurationAndTransactionTests.MigratingPersonV1.self,
      value: ["id": 1, "firstName": "Ada", "lastName": "Lovelace", "age": 36, "score": 7, "nickname": "A"])
    realm.create(
      ConfigurationAndTransactionTests.MigratingPersonV1.self,
      value: ["id": 2, "firstName": "Alan", "lastName": "Turing", "age": 41, "score": 9, "nickname": "T"])
  }
  return config
}

/// Expects `body` to throw a `Realm.Error`, returning it.
private func realmError(_ body: () throws -> Void) -> Realm.Error? {
  do {
    try body()
  } catch let error as Realm.Error {
    return error
  } catch {
    Issue.record("expected a Realm.Error, got \(error)")
    return nil
  }
  Issue.record("expected a Realm.Error, nothing was thrown")
  return nil
}

@Suite("Realm, configuration and transactions")
struct ConfigurationAndTransactionTests {
  // MARK: Realm.Configuration

  @Test func configurationDefaults() {
    let config = Realm.Configuration()
    #expect(config.fileURL?.lastPathComponent == "default.realm")
    #expect(config.inMemoryIdentifier == nil)
    #expect(config.schemaVersion == 0)
    #expect(config.readOnly == false)
    #expect(config.deleteRealmIfMigrationNeeded == false)
    #expect(config.encryptionKey == nil)
    #expect(config.migrationBlock == nil)
    #expect(config.shouldCompactOnLaunch == nil)
    #expect(config.objectTypes == nil)
    #expect(config.seedFilePath == nil)
    #expect(config.maximumNumberOfActiveVersions == nil)
    // The default configuration (used by `Realm()`) also names `default.realm`.
    let defaults = Realm.Configuration.defaultConfiguration
    #expect(defaults.fileURL?.lastPathComponent == "default.realm")
    #expect(defaults.inMemoryIdentifier == nil)
    #expect(defaults.schemaVersion == 0)
    #expect(defaults.readOnly == false)
  }

  @Test func fileURLAndInMemoryIdentifierAreMutuallyExclusive() {
    var config = Realm.Configuration(fileURL: URL(fileURLWithPath: "/tmp/configuration-a.realm"))
    #expect(config.fileURL?.path == "/tmp/configuration-a.realm")
    config.inMemoryIdentifier = "memory"
    #expect(config.inMemoryIdentifier == "memory")
    #expect(config.fileURL == nil)
    config.fileURL = URL(fileURLWithPath: "/tmp/configuration-b.realm")
    #expect(config.fileURL?.path == "/tmp/configuration-b.realm")
    #expect(config.inMemoryIdentifier == nil)
    // Given both, the initialiser keeps the in-memory identifier.
    let both = Realm.Configuration(
      fileURL: URL(fileURLWithPath: "/tmp/configuration-c.realm"), inMemoryIdentifier: "mem")
    #expect(both.inMemoryIdentifier == "mem")
    #expect(both.fileURL == nil)
  }

  @Test func realmReportsTheConfigurationItWasOpenedWith() throws {
    try withScratchDirectory { directory in
      let config = scratchFileConfiguration(directory, schemaVersion: 4)
      let realm = try Realm(configuration: config)
      #expect(realm.configuration.fileURL?.standardizedFileURL == config.fileURL?.standardizedFileURL)
      #expect(realm.configuration.schemaVersion == 4)
      #expect(realm.configuration.readOnly == false)
      #expect(realm.configuration.inMemoryIdentifier == nil)
      let memory = try shelterRealm()
      #expect(memory.configuration.fileURL == nil)
      #expect(memory.configuration.inMemoryIdentifier?.hasPrefix("shelter-") == true)
      #expect(Set(memory.schema.objectSchema.map(\.className)) == ["ShelterDog", "Shelter"])
    }
  }

  // MARK: Files and errors

  @Test func readOnlyRealmReadsButRefusesWrites() async throws {
    try await withScratchDirectory { directory in
      let path = directory.appendingPathComponent("readonly.realm").path
      do {
        let realm = try Realm(
          configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: shelterTypes))
        try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
      }
      let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        [path = path as String] in
        let config = Realm.Configuration(
          fileURL: URL(fileURLWithPath: path), readOnly: true, objectTypes: [ShelterDog.self, Shelter.self])
        let realm = try Realm(configuration: config)
        #expect(realm.configuration.readOnly)
        #expect(realm.objects(ShelterDog.self).count == 1)
        _ = try? realm.write { realm.create(ShelterDog.self, value: ["Fido", 1]) }
      }
      #expect(stderrText(result).contains("Can't perform transactions on read-only Realms."))
    }
  }

  @Test func readOnlyOpenOfMissingFileIsFileNotFound() throws {
    try withScratchDirectory { directory in
      var config = scratchFileConfiguration(directory, "missing.realm")
      config.readOnly = true
      let error = realmError { _ = try Realm(configuration: config) }
      #expect(error?.code == .fileNotFound)
      // RealmSwift's errors match their code in a catch clause.
      do {
        _ = try Realm(configuration: config)
        Issue.record("opening should fail")
      } catch Realm.Error.fileNotFound {
        // expected
      } catch {
        Issue.record("expected Realm.Error.fileNotFound, got \(error)")
      }
      // A read-only open creates nothing.
      #expect(!FileManager.default.fileExists(atPath: config.fileURL!.path))
      #expect(!Realm.fileExists(for: config))
    }
  }

  @Test func pathBelowARegularFileIsFileOperationFailed() throws {
    // RealmSwift's own test (RealmTests.testCatchSpecificErrors) opens "/dev/null/foo" and
    // catches `Realm.Error.fileOperationFailed` (realm-core's code for ENOTDIR).
    let devNull = Realm.Configuration(fileURL: URL(fileURLWithPath: "/dev/null/foo"), objectTypes: shelterTypes)
    #expect(realmError { _ = try Realm(configuration: devNull) }?.code == .fileOperationFailed)
    do {
      _ = try Realm(configuration: devNull)
      Issue.record("opening should fail")
    } catch Realm.Error.fileOperationFailed {
      // expected
    } catch {
      Issue.record("expected Realm.Error.fileOperationFailed, got \(error)")
    }
    try withScratchDirectory { directory in
      let file = directory.appendingPathComponent("plain.txt")
      try Data("x".utf8).write(to: file)
      let config = Realm.Configuration(
        fileURL: file.appendingPathComponent("below.realm"), objectTypes: shelterTypes)
      #expect(realmError { _ = try Realm(configuration: config) }?.code == .fileOperationFailed)
    }
  }

  @Test func pathInAMissingDirectoryIsNotCreated() throws {
    try withScratchDirectory { directory in
      let config = scratchFileConfiguration(directory.appendingPathComponent("no-such-dir"))
      let error = realmError { _ = try Realm(configuration: config) }
      // realm-core reports ENOENT from open(2) as a missing file.
      #expect(error?.code == .fileNotFound)
      #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("no-such-dir").path))
    }
  }

  @Test func writeCopyCopiesAndRefusesAnExistingFile() throws {
    try withScratchDirectory { directory in
      let config = scratchFileConfiguration(directory, schemaVersion: 3)
      let copyURL = directory.appendingPathComponent("copy.realm")
      do {
        let realm = try Realm(configuration: config)
        try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
        try realm.writeCopy(toFile: copyURL)
        let error = realmError { try realm.writeCopy(toFile: copyURL) }
        #expect(error?.code == .fileExists)
      }
      #expect(try schemaVersionAtURL(copyURL) == 3)
      let copy = try Realm(configuration: scratchFileConfiguration(directory, "copy.realm", schemaVersion: 3))
      #expect(copy.objects(ShelterDog.self).map(\.name) == ["Rex"])
    }
  }

  @Test func errorCodesMatchRLMError() {
    let codes: [(Realm.Error.Code, Int)] = [
      (.fail, 1), (.fileAccess, 2), (.filePermissionDenied, 3), (.fileExists, 4), (.fileNotFound, 5),
      (.fileFormatUpgradeRequired, 6), (.incompatibleLockFile, 8), (.addressSpaceExhausted, 9),
      (.schemaMismatch, 10), (.alreadyOpen, 12), (.invalidInput, 13), (.outOfDiskSpace, 14),
      (.incompatibleSession, 15), (.unsupportedFileFormatVersion, 16), (.fileOperationFailed, 19),
      (.invalidDatabase, 20),
    ]
    for (code, raw) in codes {
      #expect(code.rawValue == raw, "\(code)")
      #expect(Realm.Error.Code(rawValue: raw) == code)
    }
    #expect(Realm.Error.fileNotFound == .fileNotFound)
    #expect(Realm.Error.schemaMismatch == .schemaMismatch)
  }

  @Test func errorsBridgeToNSErrorInTheRealmDomain() throws {
    try withScratchDirectory { directory in
      var config = scratchFileConfiguration(directory, "absent.realm")
      config.readOnly = true
      do {
        _ = try Realm(configuration: config)
        Issue.record("opening should fail")
      } catch {
        let nsError = error as NSError
        #expect(nsError.domain == "io.realm")
        #expect(nsError.code == Realm.Error.Code.fileNotFound.rawValue)
        #expect((error as? Realm.Error)?.code == .fileNotFound)
        #expect(!nsError.localizedDescription.isEmpty)
      }
    }
  }

  @Test func fileExistsAndDeleteFiles() throws {
    try withScratchDirectory { directory in
      let config = scratchFileConfiguration(directory)
      #expect(!Realm.fileExists(for: config))
      #expect(try Realm.deleteFiles(for: config) == false)
      do {
        let realm = try Realm(configuration: config)
        try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
        #expect(Realm.fileExists(for: config))
        // A Realm that is open cannot have its files deleted.
        #expect(realmError { _ = try Realm.deleteFiles(for: config) }?.code == .alreadyOpen)
      }
      #expect(Realm.fileExists(for: config))
      #expect(try Realm.deleteFiles(for: config))
      #expect(!Realm.fileExists(for: config))
      #expect(!FileManager.default.fileExists(atPath: config.fileURL!.path))
      #expect(try Realm.deleteFiles(for: config) == false)
      // Reopened, the Realm is empty.
      #expect(try Realm(configuration: config).isEmpty)
    }
  }

  // MARK: Schema versions and migrations

  @Test func schemaVersionAtURLReadsTheStoredVersion() throws {
    try withScratchDirectory { directory in
      let missing = directory.appendingPathComponent("missing.realm")
      #expect(realmError { _ = try schemaVersionAtURL(missing) } != nil)
      let config = scratchFileConfiguration(directory, schemaVersion: 5)
      do { _ = try Realm(configuration: config) }
      #expect(try schemaVersionAtURL(config.fileURL!) == 5)
    }
  }

  @Test func lowerSchemaVersionIsRefused() throws {
    try withScratchDirectory { directory in
      do { _ = try Realm(configuration: scratchFileConfiguration(directory, schemaVersion: 2)) }
      let error = realmError { _ = try Realm(configuration: scratchFileConfiguration(directory, schemaVersion: 1)) }
      #expect(error?.code == .fail)
      #expect(
        error?.localizedDescription.contains("Provided schema version 1 is less than last set version 2.") == true)
      // The file keeps its version.
      #expect(try schemaVersionAtURL(directory.appendingPathComponent("shelter.realm")) == 2)
    }
  }

  @Test func changedSchemaWithoutMigrationListsTheChanges() throws {
    try withScratchDirectory { directory in
      var config = try seedMigratingFile(directory)
      config.objectTypes = [MigratingPersonV2.self]
      let error = realmError { _ = try Realm(configuration: config) }
      #expect(error?.code == .schemaMismatch)
      let message = error?.localizedDescription ?? ""
      #expect(message.hasPrefix("Migration is required due to the following errors:"))
      #expect(message.contains("\n- Property 'MigratingPerson.fullName' has been added."))
      #expect(message.contains("\n- Property 'MigratingPerson.firstName' has been removed."))
      #expect(message.contains("\n- Property 'MigratingPerson.score' has been changed from 'int' to 'string'."))
      #expect(message.contains("\n- Property 'MigratingPerson.nickname' has been made optional."))
    }
  }

  @Test func changedPrimaryKeyIsReportedAsChanged() throws {
    try withScratchDirectory { directory in
      var config = scratchFileConfiguration(directory, "keyed.realm", objectTypes: [RekeyedV1.self])
      do { _ = try Realm(configuration: config) }
      config.objectTypes = [RekeyedV2.self]
      let error = realmError { _ = try Realm(configuration: config) }
      #expect(error?.code == .schemaMismatch)
      #expect(
        error?.localizedDescription.contains("Primary Key for class 'Rekeyed' has changed from 'code' to 'label'.")
          == true)
    }
  }

  @Test func migrationBlockRunsOnceWithTheOldVersionAndObjects() throws {
    try withScratchDirectory { directory in
      var config = try seedMigratingFile(directory)
      config.objectTypes = [MigratingPersonV2.self]
      config.schemaVersion = 1
      let calls = Mutex<[UInt64]>([])
      config.migrationBlock = { migration, oldSchemaVersion in
        calls.withLock { $0.append(oldSchemaVersion) }
        #expect(migration.oldSchema["MigratingPerson"]?["firstName"] != nil)
        #expect(migration.oldSchema["MigratingPerson"]?["fullName"] == nil)
        #expect(migration.newSchema["MigratingPerson"]?["fullName"] != nil)
        migration.renameProperty(onType: "MigratingPerson", from: "age", to: "yearsOld")
        var seen = 0
        migration.enumerateObjects(ofType: "MigratingPerson") { oldObject, newObject in
          seen += 1
          let first = oldObject?["firstName"] as? String ?? ""
          let last = oldObject?["lastName"] as? String ?? ""
          newObject?["fullName"] = "\(first) \(last)"
          newObject?["score"] = String(oldObject?["score"] as? Int ?? -1)
        }
        #expect(seen == 2)
      }
      let realm = try Realm(configuration: config)
      #expect(calls.withLock { $0 } == [0])
      let people = realm.objects(MigratingPersonV2.self).sorted(byKeyPath: "id")
      #expect(people.map(\.fullName) == ["Ada Lovelace", "Alan Turing"])
      #expect(people.map(\.yearsOld) == [36, 41])
      #expect(people.map(\.score) == ["7", "9"])
      #expect(people.map(\.nickname) == ["A", "T"])
      #expect(try schemaVersionAtURL(config.fileURL!) == 1)
      // Opening again at the same version does not migrate again.
      #expect(try Realm(configuration: config).objects(MigratingPersonV2.self).count == 2)
      #expect(calls.withLock { $0 } == [0])
    }
  }

  @Test func migrationBlockIsNotCalledWhenTheFileIsCreated() throws {
    try withScratchDirectory { directory in
      var config = scratchFileConfiguration(directory, schemaVersion: 7)
      let called = Mutex(false)
      config.migrationBlock = { _, _ in called.withLock { $0 = true } }
      let realm = try Realm(configuration: config)
      #expect(realm.isEmpty)
      #expect(!called.withLock { $0 })
      #expect(try schemaVersionAtURL(config.fileURL!) == 7)
    }
  }

  @Test func renamingAMissingPropertyFails() async throws {
    try await withScratchDirectory { directory in
      let path = try seedMigratingFile(directory).fileURL!.path
      // RealmSwift reports realm-core's error (thrown from the open, or raised); either way the
      // child prints it and fails.
      let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        [path = path as String] in
        var config = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [MigratingPersonV2.self])
        config.schemaVersion = 1
        config.migrationBlock = { migration, _ in
          migration.renameProperty(onType: "MigratingPerson", from: "noSuchProperty", to: "yearsOld")
        }
        do {
          _ = try Realm(configuration: config)
        } catch {
          FileHandle.standardError.write(Data("\(error.localizedDescription)\n".utf8))
          exit(EXIT_FAILURE)
        }
      }
      #expect(
        stderrText(result).contains(
          "Cannot rename property 'MigratingPerson.noSuchProperty' because it does not exist."))
    }
  }

  @Test func deleteRealmIfMigrationNeededRecreatesTheFileWithoutMigrating() throws {
    try withScratchDirectory { directory in
      var config = try seedMigratingFile(directory)
      config.objectTypes = [MigratingPersonV2.self]
      config.deleteRealmIfMigrationNeeded = true
      let called = Mutex(false)
      config.migrationBlock = { _, _ in called.withLock { $0 = true } }
      let realm = try Realm(configuration: config)
      #expect(!called.withLock { $0 })
      #expect(realm.objects(MigratingPersonV2.self).isEmpty)
      try realm.write { realm.create(MigratingPersonV2.self, value: ["id": 1, "fullName": "Grace Hopper"]) }
      #expect(realm.object(ofType: MigratingPersonV2.self, forPrimaryKey: 1)?.fullName == "Grace Hopper")
    }
  }

  @Test func deleteDataForTypeReportsWhetherTheClassExisted() throws {
    try withScratchDirectory { directory in
      var config = scratchFileConfiguration(directory, "gone.realm", objectTypes: [Gone.self, ShelterDog.self])
      do {
        let realm = try Realm(configuration: config)
        try realm.write {
          realm.create(Gone.self, value: [1])
          realm.create(ShelterDog.self, value: ["Rex", 3])
        }
      }
      config.objectTypes = [ShelterDog.self]
      config.schemaVersion = 1
      let results = Mutex<[Bool]>([])
      config.migrationBlock = { migration, _ in
        let gone = migration.deleteData(forType: "Gone")
        let none = migration.deleteData(forType: "NoSuchClass")
        let dogs = migration.deleteData(forType: "ShelterDog")
        results.withLock { $0 = [gone, none, dogs] }
      }
      let realm = try Realm(configuration: config)
      #expect(results.withLock { $0 } == [true, false, true])
      // The deleted class's data is gone; a class still in the program keeps its (empty) table.
      #expect(realm.schema["Gone"] == nil)
      #expect(realm.objects(ShelterDog.self).isEmpty)
    }
  }

  @Test func migrationDeleteAndCreate() throws {
    try withScratchDirectory { directory in
      var config = try seedMigratingFile(directory)
      config.schemaVersion = 1
      config.migrationBlock = { migration, _ in
        migration.enumerateObjects(ofType: "MigratingPerson") { oldObject, newObject in
          if oldObject?["id"] as? Int == 1, let newObject { migration.delete(newObject) }
        }
        var remaining: [Int] = []
        migration.enumerateObjects(ofType: "MigratingPerson") { oldObject, _ in
          remaining.append(oldObject?["id"] as? Int ?? -1)
        }
        #expect(remaining == [2])
        migration.create("MigratingPerson", value: ["id": 3, "firstName": "Grace"])
      }
      let realm = try Realm(configuration: config)
      #expect(realm.objects(MigratingPersonV1.self).sorted(byKeyPath: "id").map(\.id) == [2, 3])
      #expect(realm.object(ofType: MigratingPersonV1.self, forPrimaryKey: 3)?.firstName == "Grace")
    }
  }

  // MARK: Frozen Realms

  @Test func freezeAndThaw() throws {
    let realm = try shelterRealm()
    try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
    #expect(!realm.isFrozen)
    let frozen = realm.freeze()
    #expect(frozen.isFrozen)
    #expect(frozen.freeze().isFrozen)
    #expect(frozen.autorefresh == false)
    #expect(frozen.refresh() == false)
    #expect(frozen.objects(ShelterDog.self).isFrozen)
    // A frozen Realm keeps the version it was frozen at.
    try realm.write { realm.create(ShelterDog.self, value: ["Fido", 1]) }
    #expect(frozen.objects(ShelterDog.self).count == 1)
    #expect(realm.objects(ShelterDog.self).count == 2)
    let thawed = frozen.thaw()
    #expect(!thawed.isFrozen)
    #expect(thawed == realm)
    #expect(thawed.objects(ShelterDog.self).count == 2)
    // Thawing a live Realm gives itself.
    #expect(realm.thaw() == realm)
  }

  @Test func frozenRealmRefusesTransactions() async {
    let begin = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let frozen = try shelterRealm().freeze()
      frozen.beginWrite()
    }
    #expect(stderrText(begin).contains("Can't perform transactions on a frozen Realm"))
    // `write` is a throwing API: Shoal throws the same text there (the issue asks for frozen
    // misuse to be a thrown error wherever the API throws; RealmSwift raises an exception).
    let frozen = try? shelterRealm().freeze()
    #expect {
      try frozen?.write {}
    } throws: { error in
      (error as? Realm.Error)?.localizedDescription.contains("Can't perform transactions on a frozen Realm") == true
    }
  }

  @Test func frozenValuesAreReadableOnOtherThreadsAndDoNotChange() throws {
    let realm = try shelterRealm()
    let owner = try realm.write {
      realm.create(Shelter.self, value: ["id": 1, "name": "Ann", "dogs": [["Rex", 3], ["Fido", 1]]])
    }
    nonisolated(unsafe) let frozenOwner = owner.freeze()
    let frozenDogs = realm.objects(ShelterDog.self).sorted(byKeyPath: "name").freeze()
    #expect(frozenOwner.isFrozen && frozenDogs.isFrozen)
    #expect(!owner.isFrozen)
    try realm.write {
      owner.name = "Bea"
      realm.create(ShelterDog.self, value: ["Spot", 2])
    }
    let seen = try resultOnOtherThread { () -> [String] in
      [frozenOwner.name, "\(frozenOwner.dogs.count)"] + frozenDogs.map(\.name)
    }
    #expect(seen == ["Ann", "2", "Fido", "Rex"])
    #expect(owner.name == "Bea")
    #expect(frozenOwner.thaw()?.name == "Bea")
  }

  @Test func observingFrozenValuesFails() async {
    let message = "Frozen Realms do not change and do not have change notifications."
    let results = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let frozen = try shelterRealm().objects(ShelterDog.self).freeze()
      let token = frozen.observe { _ in }
      token.invalidate()
    }
    #expect(stderrText(results).contains(message))
    let object = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try shelterRealm()
      let dog = try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
      let token = dog.freeze().observe { (_: ObjectChange<ShelterDog>) in }
      token.invalidate()
    }
    #expect(stderrText(object).contains(message))
    let wholeRealm = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let frozen = try shelterRealm().freeze()
      let token = frozen.observe { _, _ in }
      token.invalidate()
    }
    #expect(stderrText(wholeRealm).contains(message))
  }

  @Test func modifyingAFrozenObjectFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try shelterRealm()
      let dog = try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
      let frozen = dog.freeze()
      try realm.write { frozen.name = "Max" }
    }
    #expect(
      stderrText(result).contains("Attempting to modify a frozen object - call thaw on the Object instance first."))
  }

  @Test func thawingADeletedObjectGivesNil() throws {
    let realm = try shelterRealm()
    let dog = try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
    let frozen = dog.freeze()
    #expect(frozen.thaw()?.name == "Rex")
    try realm.write { realm.delete(dog) }
    #expect(frozen.name == "Rex")
    #expect(frozen.thaw() == nil)
  }

  // MARK: ThreadSafeReference

  @Test func threadSafeReferencesResolveOnAnotherThread() throws {
    let config = shelterMemoryConfiguration()
    let realm = try Realm(configuration: config)
    let owner = try realm.write {
      realm.create(Shelter.self, value: ["id": 1, "name": "Ann", "dogs": [["Rex", 3], ["Fido", 1]]])
    }
    let ownerRef = ThreadSafeReference(to: owner)
    let resultsRef = ThreadSafeReference(to: realm.objects(ShelterDog.self).filter("age > 2"))
    let listRef = ThreadSafeReference(to: owner.dogs)
    #expect(!ownerRef.isInvalidated)
    let seen = try resultOnOtherThread { () -> [String] in
      let other = try Realm(configuration: config)
      guard let owner = other.resolve(ownerRef), let results = other.resolve(resultsRef),
        let dogs = other.resolve(listRef)
      else { return [] }
      try other.write { owner.name = "Bea" }
      return [owner.name, "\(results.count)", dogs.map(\.name).joined(separator: ",")]
    }
    #expect(seen == ["Bea", "1", "Rex,Fido"])
    #expect(ownerRef.isInvalidated)
    #expect(owner.name == "Ann")
    realm.refresh()
    #expect(owner.name == "Bea")
  }

  @Test func resolvingAReferenceTwiceFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try shelterRealm()
      let dog = try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
      let reference = ThreadSafeReference(to: dog)
      #expect(realm.resolve(reference)?.name == "Rex")
      _ = realm.resolve(reference)
    }
    #expect(stderrText(result).contains("Can only resolve a thread safe reference once."))
  }

  @Test func resolvingADeletedObjectGivesNil() throws {
    let config = shelterMemoryConfiguration()
    let realm = try Realm(configuration: config)
    let dog = try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
    let sameThread = ThreadSafeReference(to: dog)
    let otherThread = ThreadSafeReference(to: dog)
    try realm.write { realm.delete(dog) }
    #expect(realm.resolve(sameThread) == nil)
    #expect(sameThread.isInvalidated)
    let resolved = try resultOnOtherThread { () -> Bool in
      let other = try Realm(configuration: config)
      other.refresh()
      return other.resolve(otherThread) != nil
    }
    #expect(resolved == false)
  }

  @Test func referenceToAnUnmanagedObjectFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = ThreadSafeReference(to: ShelterDog(value: ["Rex", 3]))
    }
    #expect(stderrText(result).contains("Cannot construct reference to unmanaged object"))
  }

  // MARK: Transactions

  @Test func beginWriteWhileInAWriteFails() async {
    let message = "The Realm is already in a write transaction"
    let begin = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try shelterRealm()
      realm.beginWrite()
      realm.beginWrite()
    }
    #expect(stderrText(begin).contains(message))
    let nested = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try shelterRealm()
      try realm.write { _ = try? realm.write {} }
    }
    #expect(stderrText(nested).contains(message))
  }

  @Test func commitWriteWithoutAWriteThrows() async {
    // RealmSwift's `commitWrite()` reports realm-core's error as a thrown `Realm.Error`.
    await #expect(processExitsWith: .success) {
      let realm = try shelterRealm()
      let error = realmError { try realm.commitWrite() }
      #expect(error?.code == .fail)
      #expect(error?.localizedDescription.contains("Can't commit a non-existing write transaction") == true)
    }
  }

  @Test func cancelWriteWithoutAWriteFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      try shelterRealm().cancelWrite()
    }
    #expect(stderrText(result).contains("Can't cancel a non-existing write transaction"))
  }

  @Test func cancelWriteDiscardsTheTransaction() throws {
    let realm = try shelterRealm()
    #expect(!realm.isInWriteTransaction)
    realm.beginWrite()
    #expect(realm.isInWriteTransaction)
    let dog = realm.create(ShelterDog.self, value: ["Rex", 3])
    #expect(!realm.isEmpty)
    realm.cancelWrite()
    #expect(!realm.isInWriteTransaction)
    #expect(realm.isEmpty)
    #expect(dog.isInvalidated)
    // Cancelling inside `write` ends the transaction without committing and without an error.
    try realm.write {
      realm.create(ShelterDog.self, value: ["Fido", 1])
      realm.cancelWrite()
      #expect(!realm.isInWriteTransaction)
    }
    #expect(realm.objects(ShelterDog.self).isEmpty)
    // An error thrown by the block cancels the transaction and is rethrown.
    struct Intentional: Error {}
    #expect(throws: Intentional.self) {
      try realm.write {
        realm.create(ShelterDog.self, value: ["Spot", 2])
        throw Intentional()
      }
    }
    #expect(!realm.isInWriteTransaction)
    #expect(realm.objects(ShelterDog.self).isEmpty)
  }

  @Test func invalidateEndsTheWriteAndInvalidatesAccessors() throws {
    let realm = try shelterRealm()
    let dog = try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
    let results = realm.objects(ShelterDog.self)
    #expect(results.count == 1)
    realm.beginWrite()
    realm.create(ShelterDog.self, value: ["Fido", 1])
    realm.invalidate()
    #expect(!realm.isInWriteTransaction)
    #expect(dog.isInvalidated)
    #expect(results.isInvalidated)
    // A new query reads the newest version; the write was rolled back.
    #expect(realm.objects(ShelterDog.self).map(\.name) == ["Rex"])
  }

  @Test func readingResultsAfterInvalidateFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try shelterRealm()
      try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
      let results = realm.objects(ShelterDog.self).filter("age > 1")
      #expect(results.count == 1)
      realm.invalidate()
      _ = results.count
    }
    #expect(stderrText(result).contains("Access to invalidated Results objects"))
  }

  @Test func refreshReportsWhetherTheVersionChanged() throws {
    let config = shelterMemoryConfiguration()
    let realm = try Realm(configuration: config)
    #expect(realm.autorefresh == true)
    try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
    #expect(realm.refresh() == false)
    realm.autorefresh = false
    #expect(realm.autorefresh == false)
    try resultOnOtherThread {
      let other = try Realm(configuration: config)
      try other.write { other.create(ShelterDog.self, value: ["Fido", 1]) }
    }
    #expect(realm.objects(ShelterDog.self).count == 1)
    #expect(realm.refresh())
    #expect(realm.objects(ShelterDog.self).count == 2)
    #expect(realm.refresh() == false)
  }

  // MARK: Realm notifications

  @Test func realmObserveDeliversDidChangeAfterEachCommit() throws {
    let realm = try shelterRealm()
    let received = Mutex<[Realm.Notification]>([])
    let token = realm.observe { notification, observed in
      #expect(observed == realm)
      received.withLock { $0.append(notification) }
    }
    #expect(received.withLock { $0 }.isEmpty)
    try realm.write { realm.create(ShelterDog.self, value: ["Rex", 3]) }
    // A Realm's own commits notify its observers synchronously.
    #expect(received.withLock { $0 } == [.didChange])
    try realm.write {}
    #expect(received.withLock { $0 } == [.didChange, .didChange])
    token.invalidate()
    try realm.write { realm.create(ShelterDog.self, value: ["Fido", 1]) }
    #expect(received.withLock { $0.count } == 2)
  }

  @Test func writeWithoutNotifyingSkipsOnlyTheGivenTokens() throws {
    let realm = try shelterRealm()
    let skippedCalls = Mutex(0)
    let otherCalls = Mutex(0)
    let skipped = realm.observe { _, _ in skippedCalls.withLock { $0 += 1 } }
    let other = realm.observe { _, _ in otherCalls.withLock { $0 += 1 } }
    try realm.write(withoutNotifying: [skipped]) { realm.create(ShelterDog.self, value: ["Rex", 3]) }
    #expect(skippedCalls.withLock { $0 } == 0)
    #expect(otherCalls.withLock { $0 } == 1)
    // Only that transaction is skipped.
    try realm.write { realm.create(ShelterDog.self, value: ["Fido", 1]) }
    #expect(skippedCalls.withLock { $0 } == 1)
    #expect(otherCalls.withLock { $0 } == 2)
    realm.beginWrite()
    realm.create(ShelterDog.self, value: ["Spot", 2])
    try realm.commitWrite(withoutNotifying: [skipped, other])
    #expect(skippedCalls.withLock { $0 } == 1)
    #expect(otherCalls.withLock { $0 } == 2)
    skipped.invalidate()
    other.invalidate()
  }
}
