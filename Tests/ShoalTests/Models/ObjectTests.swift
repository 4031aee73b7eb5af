import Foundation
import Shoal
import ShoalStorage
import Testing

@Suite("Objects: models, add, read, update, delete")
struct ObjectTests {
  @Test func unmanagedObjectsArePlainSwiftObjects() {
    let person = Person(id: 1, name: "Ada", age: 36)
    #expect(person.realm == nil)
    #expect(!person.isInvalidated)
    #expect(person.name == "Ada")
    person.tags.append("x")
    #expect(Array(person.tags) == ["x"])
    #expect(person.mood == .happy)
    #expect(person.score == nil)
    person.score = 1.5
    #expect(person.score == 1.5)
    #expect(person["name"] as? String == "Ada")
    person["age"] = 40
    #expect(person.age == 40)
  }

  @Test func initWithValue() {
    let person = Person(value: ["id": 7, "name": "Bo", "age": 3, "tags": ["a", "b"], "dog": ["name": "Rex"]])
    #expect(person.id == 7)
    #expect(person.name == "Bo")
    #expect(Array(person.tags) == ["a", "b"])
    #expect(person.dog?.name == "Rex")
    let counter = Counter(value: ["c", 5])
    #expect(counter.name == "c" && counter.value == 5)
    let copy = Counter(value: counter)
    #expect(copy.name == "c" && copy.value == 5)
  }

  @Test func addReadUpdateDelete() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "Ada", age: 36)
    try realm.write { realm.add(person) }
    #expect(person.realm != nil)
    #expect(realm.objects(Person.self).count == 1)
    let fetched = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
    #expect(fetched.name == "Ada")
    #expect(fetched == person)
    try realm.write { fetched.age = 37 }
    #expect(person.age == 37)
    try realm.write { realm.delete(fetched) }
    #expect(person.isInvalidated)
    #expect(realm.objects(Person.self).isEmpty)
    #expect(realm.object(ofType: Person.self, forPrimaryKey: 1) == nil)
  }

  @Test func everyPropertyTypeRoundTrips() throws {
    let config = fileConfiguration()
    let id = ObjectId.generate()
    let uuid = UUID()
    do {
      let realm = try Realm(configuration: config)
      try realm.write {
        let all = AllTypes()
        all._id = id
        all.bool = true
        all.int = -5
        all.int8 = -8
        all.int16 = 16
        all.int32 = -32
        all.int64 = Int64.max
        all.float = 1.25
        all.double = -2.5
        all.string = "héllo"
        all.data = Data([1, 2, 3])
        all.date = Date(timeIntervalSince1970: 1_700_000_000.5)
        all.uuid = uuid
        all.decimal = try Decimal128(string: "123.456")
        all.any = .string("any")
        all.optInt = 4
        all.optDate = Date(timeIntervalSince1970: 5)
        all.doubles.append(objectsIn: [1.5, 2.5])
        all.optStrings.append(objectsIn: ["a", nil])
        all.anyMap["k"] = .int(3)
        all.dataSet.insert(Data([9]))
        realm.add(all)
      }
    }
    let realm = try Realm(configuration: config)
    let all = try #require(realm.object(ofType: AllTypes.self, forPrimaryKey: id))
    #expect(all.bool && all.int == -5 && all.int8 == -8 && all.int16 == 16 && all.int32 == -32)
    #expect(all.int64 == Int64.max && all.float == 1.25 && all.double == -2.5 && all.string == "héllo")
    #expect(all.data == Data([1, 2, 3]))
    #expect(all.date == Date(timeIntervalSince1970: 1_700_000_000.5))
    #expect(all.uuid == uuid)
    #expect(try all.decimal == Decimal128(string: "123.456"))
    #expect(all.any == .string("any"))
    #expect(all.optInt == 4 && all.optString == nil && all.optUUID == nil)
    #expect(Array(all.doubles) == [1.5, 2.5])
    #expect(Array(all.optStrings) == ["a", nil])
    #expect(all.anyMap["k"] == .int(3))
    #expect(all.dataSet.contains(Data([9])))
  }

  @Test func linksListsSetsMapsAndEmbedded() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      let person = Person(id: 1, name: "Ada", age: 36)
      person.dog = Dog(value: ["name": "Rex", "age": 3])
      person.dogs.append(Dog(value: ["name": "Fido", "age": 1]))
      person.address = Address(value: ["street": "Main", "city": "Oslo"])
      person.attributes["height"] = 170
      person.luckyNumbers.insert(7)
      person.luckyNumbers.insert(7)
      realm.add(person)
    }
    let person = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
    #expect(person.dog?.name == "Rex")
    #expect(person.dogs.map(\.name) == ["Fido"])
    #expect(person.address?.city == "Oslo")
    #expect(person.attributes["height"] == 170)
    #expect(person.luckyNumbers.count == 1)
    #expect(realm.objects(Dog.self).count == 2)
    #expect(person.dogs[0].walkers.count == 1)
    #expect(person.dogs[0].walkers.first?.name == "Ada")
    try realm.write {
      person.dogs.append(person.dog!)
      person.attributes["weight"] = 60
      person.address = Address(value: ["street": "Side", "city": "Bergen"])
    }
    #expect(person.dogs.count == 2)
    #expect(person.attributes.keys == ["height", "weight"])
    #expect(realm.objects(Address.self).count == 1)
    // Deleting the parent deletes its embedded object; links to deleted objects are cleared.
    let rex = person.dog!
    try realm.write { realm.delete(rex) }
    #expect(person.dog == nil)
    #expect(person.dogs.count == 1)
    try realm.write { realm.delete(person) }
    #expect(realm.objects(Address.self).count == 0)
  }

  @Test func updatePolicies() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      realm.add(Counter(value: ["a", 1]))
      realm.add(Counter(value: ["a", 2]), update: .modified)
      realm.create(Counter.self, value: ["name": "b", "value": 5])
      realm.create(Counter.self, value: ["name": "b", "value": 6], update: .modified)
    }
    #expect(realm.objects(Counter.self).count == 2)
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: "a")?.value == 2)
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: "b")?.value == 6)
  }

  @Test func cancelWriteDiscardsEverything() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    realm.beginWrite()
    let counter = realm.create(Counter.self, value: ["x", 1])
    #expect(realm.isInWriteTransaction)
    realm.cancelWrite()
    #expect(!realm.isInWriteTransaction)
    #expect(counter.isInvalidated)
    #expect(realm.objects(Counter.self).isEmpty)
  }

  @Test func writeReturnsTheBlocksValueAndRethrows() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let value = try realm.write { () -> Int in
      realm.add(Counter(value: ["x", 1]))
      return 42
    }
    #expect(value == 42)
    struct Oops: Error {}
    #expect(throws: Oops.self) {
      try realm.write {
        realm.add(Counter(value: ["y", 1]))
        throw Oops()
      }
    }
    #expect(realm.objects(Counter.self).count == 1)
  }

  @Test func schemaIntrospection() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let schema = try #require(realm.schema["Person"])
    #expect(schema.className == "Person")
    #expect(schema.primaryKeyProperty?.name == "id")
    #expect(schema["name"]?.isIndexed == true)
    #expect(schema["score"]?.isOptional == true)
    #expect(schema["score"]?.type == .double)
    #expect(schema["dogs"]?.isArray == true)
    #expect(schema["dogs"]?.objectClassName == "Dog")
    #expect(schema["luckyNumbers"]?.isSet == true)
    #expect(schema["attributes"]?.isMap == true)
    #expect(schema["mood"]?.type == .string)
    #expect(realm.schema["Address"]?.isEmbedded == true)
    #expect(realm.schema["Dog"]?["walkers"]?.type == .linkingObjects)
    #expect(Person().objectSchema.properties.count == schema.properties.count)
  }

  @Test func dataPersistsAcrossOpens() throws {
    let config = fileConfiguration()
    do {
      let realm = try Realm(configuration: config)
      try realm.write { realm.add((0..<100).map { Person(id: $0, name: "p\($0)", age: $0 % 50) }) }
    }
    let realm = try Realm(configuration: config)
    #expect(realm.objects(Person.self).count == 100)
    #expect(realm.object(ofType: Person.self, forPrimaryKey: 42)?.name == "p42")
  }

  @Test func initWithValueFillsCollectionsEnumsAndEmbedded() throws {
    let person = Person(value: [
      "id": 3, "name": "Cy", "dogs": [["name": "a", "age": 1], Dog(value: ["name": "b"])],
      "luckyNumbers": [1, 2, 2], "attributes": ["h": 1], "address": ["street": "S", "city": "C"],
      "mood": "grumpy", "level": 5, "score": NSNull(), "nickname": "c",
    ])
    #expect(person.dogs.map(\.name) == ["a", "b"])
    #expect(person.luckyNumbers.count == 2)
    #expect(person.attributes["h"] == 1)
    #expect(person.address?.city == "C")
    #expect(person.mood == .grumpy && person.level == .mid)
    #expect(person.score == nil && person.nickname == "c")
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write { realm.add(person) }
    let stored = try #require(realm.object(ofType: Person.self, forPrimaryKey: 3))
    #expect(stored.dogs.map(\.name) == ["a", "b"] && stored.address?.street == "S" && stored.level == .mid)
    // The subscript reads and writes managed objects too.
    #expect(stored["name"] as? String == "Cy")
    try realm.write { stored["age"] = 44 }
    #expect(stored.age == 44)
    #expect((stored["dogs"] as? List<Dog>)?.count == 2)
  }
}

@Suite("Backlink index")
struct BacklinkTests {
  @Test func linkingObjectsAndDeletesFollowTheIndexAndItIsRebuiltWhenMissing() throws {
    let config = fileConfiguration()
    do {
      let realm = try Realm(configuration: config)
      try realm.write {
        let dogs = (0..<20).map { Dog(value: ["name": "d\($0)", "age": $0]) }
        for i in 0..<10 {
          let person = Person(id: i, name: "p\(i)", age: i)
          person.dog = dogs[i]
          person.dogs.append(objectsIn: [dogs[i], dogs[(i + 1) % 20], dogs[10 + i]])
          realm.add(person)
        }
      }
      let d1 = try #require(realm.objects(Dog.self).filter("name == 'd1'").first)
      #expect(Set(d1.walkers.map(\.id)) == [0, 1])
      try realm.write { realm.object(ofType: Person.self, forPrimaryKey: 0)?.dogs.removeAll() }
      #expect(d1.walkers.map(\.id) == [1])
    }
    // Take the index away (as in a file written before it existed); opening rebuilds it.
    let store = try Store.open(path: config.fileURL!.path)
    try store.write { txn in
      for name in try txn.keyspaceNames() where name.hasPrefix("b/") { try txn.dropKeyspace(name) }
      _ = try txn.delete(Array("backlinks".utf8), in: "_meta")
    }
    store.close()
    let realm = try Realm(configuration: config)
    let d1 = try #require(realm.objects(Dog.self).filter("name == 'd1'").first)
    #expect(d1.walkers.map(\.id) == [1])
    // Deleting dogs clears exactly the links to them, wherever they are.
    try realm.write { realm.delete(realm.objects(Dog.self).filter("age < 5")) }
    let p3 = try #require(realm.object(ofType: Person.self, forPrimaryKey: 3))
    #expect(p3.dog == nil)
    #expect(p3.dogs.map(\.name) == ["d13"])
    let p7 = try #require(realm.object(ofType: Person.self, forPrimaryKey: 7))
    #expect(p7.dog?.name == "d7" && p7.dogs.map(\.name) == ["d7", "d8", "d17"])
    #expect(realm.objects(Person.self).filter("dog == nil").count == 5)
  }
}
