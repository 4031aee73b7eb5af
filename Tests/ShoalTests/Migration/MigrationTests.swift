import Foundation
import Shoal
import Testing

// Two versions of one stored class, "Migrating", kept out of the default schema.
final class MigratingV1: Object {
  override class func _realmObjectName() -> String? { "Migrating" }
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted(primaryKey: true) var id = 0
  @Persisted var firstName = ""
  @Persisted var lastName = ""
  @Persisted var age = 0
}

final class MigratingV2: Object {
  override class func _realmObjectName() -> String? { "Migrating" }
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted(primaryKey: true) var id = 0
  @Persisted var fullName = ""
  @Persisted var yearsOld = 0
  @Persisted var email: String?
}

final class Extra: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted var note = ""
}

@Suite("Schema versions and migrations")
struct MigrationTests {
  func seed() throws -> Realm.Configuration {
    var config = fileConfiguration()
    config.objectTypes = [MigratingV1.self]
    let realm = try Realm(configuration: config)
    try realm.write {
      realm.add(MigratingV1(value: ["id": 1, "firstName": "Ada", "lastName": "Lovelace", "age": 36]))
      realm.add(MigratingV1(value: ["id": 2, "firstName": "Alan", "lastName": "Turing", "age": 41]))
    }
    return config
  }

  @Test func changedSchemaWithoutMigrationIsASchemaMismatch() throws {
    var config = try seed()
    config.objectTypes = [MigratingV2.self]
    do {
      _ = try Realm(configuration: config)
      Issue.record("opening should fail")
    } catch let error as Realm.Error {
      #expect(error.code == .schemaMismatch)
      #expect(error.localizedDescription.contains("Migration is required due to the following errors:"))
      #expect(error.localizedDescription.contains("Property 'Migrating.fullName' has been added."))
      #expect(error.localizedDescription.contains("Property 'Migrating.firstName' has been removed."))
    }
  }

  @Test func lowerSchemaVersionIsRefused() throws {
    var config = try seed()
    config.schemaVersion = 2
    config.migrationBlock = { _, _ in }
    _ = try Realm(configuration: config)
    config.schemaVersion = 1
    #expect(throws: Realm.Error.self) { _ = try Realm(configuration: config) }
  }

  @Test func migrationBlockRenamesAndComputes() throws {
    var config = try seed()
    config.objectTypes = [MigratingV2.self]
    config.schemaVersion = 1
    config.migrationBlock = { migration, oldVersion in
      #expect(oldVersion == 0)
      migration.renameProperty(onType: "Migrating", from: "age", to: "yearsOld")
      migration.enumerateObjects(ofType: "Migrating") { old, new in
        let first = old?["firstName"] as? String ?? ""
        let last = old?["lastName"] as? String ?? ""
        new?["fullName"] = "\(first) \(last)"
      }
      migration.create("Migrating", value: ["id": 3, "fullName": "Grace Hopper", "yearsOld": 85])
    }
    let realm = try Realm(configuration: config)
    let people = realm.objects(MigratingV2.self).sorted(byKeyPath: "id")
    #expect(people.map(\.fullName) == ["Ada Lovelace", "Alan Turing", "Grace Hopper"])
    #expect(people.map(\.yearsOld) == [36, 41, 85])
    #expect(realm.object(ofType: MigratingV2.self, forPrimaryKey: 2)?.email == nil)
  }

  @Test func deleteRealmIfMigrationNeeded() throws {
    var config = try seed()
    config.objectTypes = [MigratingV2.self]
    config.deleteRealmIfMigrationNeeded = true
    let realm = try Realm(configuration: config)
    #expect(realm.objects(MigratingV2.self).isEmpty)
  }

  /// RealmSwift's rule: a file whose schema version differs, even with an unchanged schema,
  /// starts over empty, and the migration block is not called.
  @Test func deleteRealmIfMigrationNeededResetsOnAnotherSchemaVersion() throws {
    var config = try seed()
    config.schemaVersion = 3
    config.deleteRealmIfMigrationNeeded = true
    nonisolated(unsafe) var migrated = false
    config.migrationBlock = { _, _ in migrated = true }
    let realm = try Realm(configuration: config)
    #expect(realm.objects(MigratingV1.self).isEmpty)
    #expect(!migrated)
    try realm.write { realm.add(MigratingV1(value: ["id": 7])) }
    // A lower version resets too, instead of failing as a lower version otherwise does.
    var lower = config
    lower.schemaVersion = 1
    let reopened = try Realm(configuration: lower)
    #expect(reopened.objects(MigratingV1.self).isEmpty)
    #expect(try schemaVersionAtURL(config.fileURL!) == 1)
  }

  /// The same version and schema keep the data.
  @Test func deleteRealmIfMigrationNeededKeepsAMatchingFile() throws {
    var config = try seed()
    config.deleteRealmIfMigrationNeeded = true
    #expect(try Realm(configuration: config).objects(MigratingV1.self).count == 2)
  }

  @Test func deleteRealmIfMigrationNeededWithReadOnlyIsRealmSwiftsError() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      var config = fileConfiguration()
      config.readOnly = true
      config.deleteRealmIfMigrationNeeded = true
      _ = try Realm(configuration: config)
    }
    #expect(stderrText(result).contains("Cannot set `deleteRealmIfMigrationNeeded` when `readOnly` is set."))
  }

  @Test func addingAClassNeedsNoMigration() throws {
    var config = try seed()
    config.objectTypes = [MigratingV1.self, Extra.self]
    let realm = try Realm(configuration: config)
    #expect(realm.objects(MigratingV1.self).count == 2)
    try realm.write { realm.add(Extra(value: ["note": "hi"])) }
    #expect(realm.objects(Extra.self).count == 1)
    // A Realm's schema lists the classes it was opened with, not others the file holds.
    config.objectTypes = [Extra.self]
    #expect(try Realm(configuration: config).schema.objectSchema.map(\.className) == ["Extra"])
  }

  @Test func deleteDataForType() throws {
    var config = try seed()
    config.objectTypes = [Extra.self]
    config.schemaVersion = 1
    config.migrationBlock = { migration, _ in
      #expect(migration.deleteData(forType: "Migrating"))
    }
    let realm = try Realm(configuration: config)
    #expect(realm.schema["Migrating"] == nil)
  }
}
