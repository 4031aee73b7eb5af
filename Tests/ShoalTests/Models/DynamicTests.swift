import Foundation
import Shoal
import Testing

/// RealmSwift's dynamic API: `dynamicObjects`, `dynamicObject(ofType:forPrimaryKey:)` and
/// `dynamicCreate`, on declared classes and on a class only the file knows.
@Suite struct DynamicTests {
  func people() throws -> Realm {
    var configuration = memoryConfiguration()
    configuration.objectTypes = [Person.self, Dog.self, Address.self]
    let realm = try Realm(configuration: configuration)
    try realm.write {
      for i in 0..<4 { realm.add(Person(id: i, name: "P\(i)", age: 20 + i)) }
      let rex = Dog(value: ["name": "Rex", "age": 3])
      realm.add(rex)
      rex.owner = realm.object(ofType: Person.self, forPrimaryKey: 2)
    }
    return realm
  }

  /// A dynamic object freezes into, and thaws back to, a dynamic object; its links read their
  /// target's properties.
  @Test func dynamicObjectsFreezeAndFollowLinks() throws {
    let realm = try people()
    let dog = try #require(realm.dynamicObjects("Dog").first)
    let frozen = dog.freeze()
    #expect(frozen.isFrozen && frozen["name"] as? String == "Rex")
    #expect(frozen.thaw()?["age"] as? Int == 3)
    let owner = try #require(dog["owner"] as? DynamicObject)
    #expect(owner["name"] as? String == "P2")
  }

  @Test func anEmbeddedClassCannotBeCreatedDynamically() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      var configuration = memoryConfiguration()
      configuration.objectTypes = [Person.self, Dog.self, Address.self]
      let realm = try Realm(configuration: configuration)
      try realm.write { _ = realm.dynamicCreate("Address", value: ["street": "x"]) }
    }
    #expect(stderrText(result).contains("Embedded objects cannot be created directly"))
  }

  @Test func aDictionaryForAnEmbeddedPropertyMakesTheEmbeddedObject() throws {
    let realm = try people()
    try realm.write {
      realm.dynamicCreate("Person", value: ["id": 10, "name": "E", "address": ["street": "1 Main", "city": "Oslo"]])
      realm.dynamicCreate("Person", value: ["id": 11, "name": "F"])
      realm.dynamicObject(ofType: "Person", forPrimaryKey: 11)?["address"] = ["street": "2 Side", "city": "Bergen"]
    }
    #expect(realm.object(ofType: Person.self, forPrimaryKey: 10)?.address?.city == "Oslo")
    #expect(realm.object(ofType: Person.self, forPrimaryKey: 11)?.address?.street == "2 Side")
    #expect(realm.objects(Address.self).count == 2)
    // Replaced by another dictionary, the old embedded object goes with its link.
    try realm.write {
      realm.dynamicCreate(
        "Person", value: ["id": 10, "address": ["street": "3 New", "city": "Oslo"]], update: .modified)
    }
    #expect(realm.object(ofType: Person.self, forPrimaryKey: 10)?.address?.street == "3 New")
    #expect(realm.objects(Address.self).count == 2)
  }

  @Test func readsDeclaredClassesByName() throws {
    let realm = try people()
    let all = realm.dynamicObjects("Person")
    #expect(all.count == 4)
    #expect(all.map { $0["name"] as? String } == ["P0", "P1", "P2", "P3"])
    let adults = realm.dynamicObjects("Person").filter("age >= %@", 22).sorted(byKeyPath: "age", ascending: false)
    #expect(adults.map { $0.age as? Int } == [23, 22])
    let dog = try #require(realm.dynamicObjects("Dog").first)
    let owner = try #require(dog["owner"] as? DynamicObject)
    #expect(owner["name"] as? String == "P2")
    let found = try #require(realm.dynamicObject(ofType: "Person", forPrimaryKey: 3))
    #expect(found["age"] as? Int == 23)
    #expect(realm.dynamicObject(ofType: "Person", forPrimaryKey: 99) == nil)
    #expect(found.description.hasPrefix("Person {\n\tid = 3;\n\tname = P3;\n\tage = 23;"), "\(found)")
    // Links that form a cycle are described to a depth of 5.
    try realm.write {
      let p2 = realm.object(ofType: Person.self, forPrimaryKey: 2)
      p2?.dog = realm.objects(Dog.self).first
    }
    #expect(realm.dynamicObjects("Dog").first?.description.contains("<Maximum depth exceeded>") == true)
    #expect(realm.objects(Dog.self).first?.description.contains("<Maximum depth exceeded>") == true)
  }

  @Test func writesThroughTheSameTransactions() throws {
    let realm = try people()
    try realm.write {
      realm.dynamicObject(ofType: "Person", forPrimaryKey: 1)?["age"] = 41
      realm.dynamicCreate("Person", value: ["id": 9, "name": "Zed", "age": 3, "tags": ["a", "b"]])
      realm.dynamicCreate("Person", value: ["id": 0, "name": "P0 again"], update: .modified)
    }
    #expect(realm.object(ofType: Person.self, forPrimaryKey: 1)?.age == 41)
    let zed = try #require(realm.object(ofType: Person.self, forPrimaryKey: 9))
    #expect(zed.name == "Zed" && zed.age == 3 && Array(zed.tags) == ["a", "b"])
    #expect(realm.object(ofType: Person.self, forPrimaryKey: 0)?.name == "P0 again")
    #expect(realm.objects(Person.self).count == 5)
    // Queries through the index see the dynamic writes.
    #expect(realm.objects(Person.self).filter("name == 'Zed'").count == 1)
  }

  /// A class the program does not declare: the event file's `AuditEvent`.
  @Test func readsClassesOnlyTheFileKnows() async throws {
    var configuration = fileConfiguration("dynamic")
    configuration.objectTypes = [Person.self, Dog.self, Address.self]
    configuration.eventConfiguration = EventConfiguration(metadata: ["user": "ann"])
    let realm = try Realm(configuration: configuration)
    try await realm.events?.recordEvent(activity: "hello", eventType: "custom", data: "{}")
    let url = ShoalEventSink.defaultFileURL(for: try #require(configuration.fileURL))
    let file = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: []))
    let events = file.dynamicObjects("AuditEvent")
    #expect(events.count == 1)
    let event = try #require(events.first)
    #expect(event["activity"] as? String == "hello")
    #expect(event.user as? String == "ann")
    #expect(event["_id"] is ObjectId)
  }

  @Test func dynamicCollectionsOfObjects() throws {
    var configuration = memoryConfiguration()
    configuration.objectTypes = [Person.self, Dog.self, Address.self, Kennel.self]
    let realm = try Realm(configuration: configuration)
    let person = Person(id: 1, name: "P", age: 30)
    let kennel = Kennel()
    try realm.write {
      person.dogs.append(objectsIn: [Dog(value: ["name": "a"]), Dog(value: ["name": "b"])])
      realm.add(person)
      realm.add(kennel)
      kennel.dogSet.insert(person.dogs[0])
      kennel.dogMap["first"] = person.dogs[1]
    }
    let list = person.dynamicList("dogs")
    #expect(list.map { $0["name"] as? String } == ["a", "b"])
    #expect(list.first?.objectSchema.className == "Dog")
    try realm.write { list.append(try #require(realm.dynamicObjects("Dog").first)) }
    #expect(person.dogs.map(\.name) == ["a", "b", "a"])
    #expect(kennel.dynamicMutableSet("dogSet").map { $0["name"] as? String } == ["a"])
    let map: Map<String, DynamicObject?> = kennel.dynamicMap("dogMap")
    #expect(map["first"]??["name"] as? String == "b")
  }

  @Test func objectKeyIdentifiableIsStablePerStoredObject() throws {
    var configuration = memoryConfiguration()
    configuration.objectTypes = [Person.self, Dog.self, Address.self, Kennel.self]
    let realm = try Realm(configuration: configuration)
    let a = Kennel()
    let b = Kennel()
    #expect(a.id != b.id)
    try realm.write { realm.add([a, b]) }
    let all = realm.objects(Kennel.self)
    #expect(all[0].id == all[0].id && all[0].id != all[1].id)
    #expect(Set(all.map(\.id)) == [a.id, b.id])
  }
}

final class Kennel: Object, ObjectKeyIdentifiable {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  override class func propertiesMapping() -> [String: String] { ["dogSet": "dog_set"] }
  @Persisted var dogSet: MutableSet<Dog>
  @Persisted var dogMap: Map<String, Dog?>
}
