import Foundation
import ShoalStorage
import Testing

@testable import Shoal

final class OptionalStringKeyed: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted(primaryKey: true) var code: String?
  @Persisted var value = 0
}

final class KeyedByInt: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""
}

final class KeyedByInt8: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted(primaryKey: true) var id: Int8 = 0
  @Persisted var name = ""
}

final class KeyedByOptionalInt: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted(primaryKey: true) var id: Int?
  @Persisted var name = ""
}

final class KeyedByString: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted(primaryKey: true) var id = ""
  @Persisted var name = ""
}

/// Objects of a class with a non-optional integer primary key are keyed by that key itself
/// (no primary-key index, rows in key order); other primary keys use an index; a migration that
/// leaves keys and primary keys apart falls back to the index.
@Suite("Primary keys as object keys")
struct PrimaryKeyTests {
  /// The keyspaces of the file at `config`, read with the engine once no Realm holds it.
  func keyspaces(_ config: Realm.Configuration) throws -> Set<String> {
    let store = try Store.open(path: try #require(config.fileURL).path, options: StoreOptions(readOnly: true))
    defer { store.close() }
    return try store.read { try Set($0.keyspaceNames()) }
  }

  @Test func integerPrimaryKeysAreTheObjectKeys() throws {
    var config = fileConfiguration()
    config.objectTypes = [KeyedByInt.self, KeyedByInt8.self, KeyedByOptionalInt.self, KeyedByString.self]
    let ids = [5, -3, Int.max, Int.min, 0, 42, -1, 1 << 40]
    do {
      let realm = try Realm(configuration: config)
      try realm.write {
        for id in ids { realm.add(KeyedByInt(value: ["id": id, "name": "n\(id)"])) }
        for id in [Int8.max, -7, 0, Int8.min] { realm.add(KeyedByInt8(value: ["id": id, "name": "e\(id)"])) }
        for id in [3, nil, -2] as [Int?] { realm.add(KeyedByOptionalInt(value: ["id": id as Any, "name": "o"])) }
        for id in ["b", "a"] { realm.add(KeyedByString(value: ["id": id, "name": id])) }
      }
      for id in ids { #expect(realm.object(ofType: KeyedByInt.self, forPrimaryKey: id)?.name == "n\(id)") }
      #expect(realm.object(ofType: KeyedByInt.self, forPrimaryKey: 6) == nil)
      // Rows are stored in signed key order.
      #expect(realm.objects(KeyedByInt.self).map(\.id) == ids.sorted())
      #expect(realm.objects(KeyedByInt8.self).map(\.id) == [Int8.min, -7, 0, Int8.max])
      #expect(realm.object(ofType: KeyedByInt8.self, forPrimaryKey: Int8(-7))?.name == "e-7")
      #expect(realm.object(ofType: KeyedByOptionalInt.self, forPrimaryKey: nil as Int?)?.id == nil)
      #expect(realm.object(ofType: KeyedByOptionalInt.self, forPrimaryKey: -2)?.id == -2)
      #expect(realm.object(ofType: KeyedByString.self, forPrimaryKey: "a")?.name == "a")
      // Queries on the key use it; a Double equal to an integer finds it too.
      #expect(realm.objects(KeyedByInt.self).filter("id == 42").map(\.id) == [42])
      #expect(realm.objects(KeyedByInt.self).filter("id == 42.0").map(\.id) == [42])
      #expect(realm.objects(KeyedByInt.self).filter("id == 42.5").isEmpty)
      #expect(Set(realm.objects(KeyedByInt.self).filter("id IN {5, 0, 7}").map(\.id)) == [5, 0])
      #expect(realm.objects(KeyedByInt.self).where { $0.id < 0 }.map(\.id) == [Int.min, -3, -1])

      // Updates find the existing object; delete and re-add reuse the key.
      try realm.write {
        realm.add(KeyedByInt(value: ["id": 5, "name": "five"]), update: .modified)
        realm.create(KeyedByInt.self, value: ["id": Int.min, "name": "min"], update: .all)
      }
      #expect(realm.objects(KeyedByInt.self).count == ids.count)
      #expect(realm.object(ofType: KeyedByInt.self, forPrimaryKey: 5)?.name == "five")
      #expect(realm.object(ofType: KeyedByInt.self, forPrimaryKey: Int.min)?.name == "min")
      try realm.write {
        realm.delete(try #require(realm.object(ofType: KeyedByInt.self, forPrimaryKey: 42)))
      }
      #expect(realm.object(ofType: KeyedByInt.self, forPrimaryKey: 42) == nil)
      try realm.write { realm.add(KeyedByInt(value: ["id": 42, "name": "again"])) }
      #expect(realm.object(ofType: KeyedByInt.self, forPrimaryKey: 42)?.name == "again")
    }
    // Only the optional and string primary keys have an index keyspace.
    let spaces = try keyspaces(config)
    #expect(!spaces.contains("k/KeyedByInt") && !spaces.contains("k/KeyedByInt8"))
    #expect(spaces.contains("k/KeyedByOptionalInt") && spaces.contains("k/KeyedByString"))
    // Reopened (another Realm reads the mode from the stored schema), everything is found.
    let realm = try Realm(configuration: config)
    #expect(realm.object(ofType: KeyedByInt.self, forPrimaryKey: -1)?.name == "n-1")
    #expect(realm.objects(KeyedByInt.self).count == ids.count)
  }

  @Test func storedSchemasWithoutTheModeReadAsIndexed() throws {
    let schema = ClassInfo.of(KeyedByInt.self).objectSchema
    let encoded = SchemaCodec.encode(schema, keysFromPrimaryKey: true)
    #expect(try SchemaCodec.decodeWithKeyMode(encoded).keysFromPrimaryKey)
    #expect(try SchemaCodec.decodeWithKeyMode(encoded).schema == schema)
    // The three-field form written before the mode existed.
    var fields = try RowCodec.decode(encoded)
    fields.removeLast()
    let old = try SchemaCodec.decodeWithKeyMode(RowCodec.encode(fields))
    #expect(old.schema == schema && !old.keysFromPrimaryKey)
  }

  func seed() throws -> Realm.Configuration {
    var config = fileConfiguration()
    config.objectTypes = [MigratingV1.self]
    let realm = try Realm(configuration: config)
    try realm.write {
      for id in 1...3 { realm.add(MigratingV1(value: ["id": id, "firstName": "f\(id)", "age": id])) }
    }
    return config
  }

  @Test func aMigrationThatKeepsPrimaryKeysKeepsTheMode() throws {
    var config = try seed()
    config.objectTypes = [MigratingV2.self]
    config.schemaVersion = 2
    config.migrationBlock = { migration, _ in
      migration.renameProperty(onType: "Migrating", from: "age", to: "yearsOld")
    }
    do {
      let realm = try Realm(configuration: config)
      #expect(realm.object(ofType: MigratingV2.self, forPrimaryKey: 2)?.yearsOld == 2)
    }
    #expect(!(try keyspaces(config)).contains("k/Migrating"))
  }

  @Test func aMigrationThatChangesPrimaryKeysFallsBackToAnIndex() throws {
    var config = try seed()
    config.schemaVersion = 2
    config.migrationBlock = { migration, _ in
      migration.enumerateObjects(ofType: "Migrating") { _, new in
        new?["id"] = (new?["id"] as? Int ?? 0) * 10
      }
      migration.create("Migrating", value: ["id": 7, "firstName": "created"])
    }
    do {
      let realm = try Realm(configuration: config)
      #expect(realm.object(ofType: MigratingV1.self, forPrimaryKey: 1) == nil)
      #expect(realm.object(ofType: MigratingV1.self, forPrimaryKey: 20)?.firstName == "f2")
      #expect(realm.object(ofType: MigratingV1.self, forPrimaryKey: 7)?.firstName == "created")
      #expect(realm.objects(MigratingV1.self).filter("id == 30").first?.age == 3)
      try realm.write { realm.add(MigratingV1(value: ["id": 1, "firstName": "new"])) }
      #expect(realm.object(ofType: MigratingV1.self, forPrimaryKey: 1)?.firstName == "new")
      #expect(realm.objects(MigratingV1.self).count == 5)
    }
    #expect(try keyspaces(config).contains("k/Migrating"))
    // Reopened, the index mode persists.
    let realm = try Realm(configuration: config)
    #expect(realm.object(ofType: MigratingV1.self, forPrimaryKey: 10)?.firstName == "f1")
  }

  /// RealmSwift's setter refuses a managed object's primary key outright, even its own value,
  /// through the property and through `setValue(_:forKey:)` alike.
  @Test func aManagedPrimaryKeyCannotBeSetEvenToItsOwnValue() async {
    let bySetter = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: memoryConfiguration())
      try realm.write {
        let person = realm.create(Person.self, value: ["id": 1])
        person.id = 1
      }
    }
    #expect(stderrText(bySetter).contains("Primary key can't be changed after an object is inserted."))
    let byKVC = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: memoryConfiguration())
      try realm.write {
        let counter = realm.create(Counter.self, value: ["name": "a"])
        counter.setValue("a", forKey: "name")
      }
    }
    #expect(stderrText(byKVC).contains("Primary key can't be changed after an object is inserted."))
  }

  /// Updates by primary key still work: they never write the key itself.
  @Test func updatesByPrimaryKeyLeaveTheKeyAlone() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      realm.create(Counter.self, value: ["name": "a", "value": 1])
      realm.create(Counter.self, value: ["name": "a", "value": 2], update: .modified)
      realm.add(Counter(value: ["a", 3]), update: .all)
    }
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: "a")?.value == 3)
  }

  /// String primary keys and indexed strings of any length, as RealmSwift indexes them; long
  /// values sharing a long prefix stay apart.
  @Test func longStringPrimaryKeysAndIndexedStrings() throws {
    let realm = try Realm(configuration: fileConfiguration())
    let base = String(repeating: "k", count: 3000)
    let a = base + "a"
    let b = base + "b"
    try realm.write {
      realm.create(Counter.self, value: ["name": a, "value": 1])
      realm.create(Counter.self, value: ["name": b, "value": 2])
      realm.add(Person(value: ["id": 1, "name": a]))
      realm.add(Person(value: ["id": 2, "name": b]))
    }
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: a)?.value == 1)
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: b)?.value == 2)
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: base) == nil)
    try realm.write { realm.create(Counter.self, value: ["name": a, "value": 5], update: .modified) }
    #expect(realm.objects(Counter.self).count == 2)
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: a)?.value == 5)
    #expect(realm.objects(Person.self).filter("name == %@", b).map(\.id) == [2])
    #expect(realm.objects(Person.self).filter("name == %@", base).isEmpty)
    try realm.write { realm.delete(realm.object(ofType: Counter.self, forPrimaryKey: a)!) }
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: a) == nil)
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: b)?.value == 2)
  }

  @Test func aDuplicateLongPrimaryKeyIsRefused() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: memoryConfiguration())
      let key = String(repeating: "x", count: 5000)
      try realm.write {
        realm.create(Counter.self, value: ["name": key])
        realm.create(Counter.self, value: ["name": key])
      }
    }
    #expect(stderrText(result).contains("with an existing primary key value"))
  }

  /// `NSNull` stands for nil as an optional primary key, in `create` and in lookups.
  @Test func nsNullIsANilOptionalPrimaryKey() throws {
    var config = memoryConfiguration()
    config.objectTypes = [OptionalStringKeyed.self]
    let realm = try Realm(configuration: config)
    try realm.write {
      realm.create(OptionalStringKeyed.self, value: [NSNull(), 1])
      realm.create(OptionalStringKeyed.self, value: ["b", 2])
    }
    #expect(realm.object(ofType: OptionalStringKeyed.self, forPrimaryKey: NSNull())?.value == 1)
    #expect(realm.object(ofType: OptionalStringKeyed.self, forPrimaryKey: "b")?.value == 2)
    #expect(realm.object(ofType: OptionalStringKeyed.self, forPrimaryKey: "z") == nil)
  }
}
