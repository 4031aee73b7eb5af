import Foundation
import Shoal
import Testing

// Conformance with RealmSwift 10.x's documented behaviour of collections and queries: List,
// MutableSet, Map, Results, LinkingObjects and AnyRealmCollection, and the exact texts of the
// exceptions RealmSwift raises for them (Shoal: fatal errors, checked with exit tests whose
// standard error must contain RealmSwift's message).

// MARK: - Models (nested in the suite; every Realm here lists them in `objectTypes`)

extension CollectionQueryTests {
  final class PetDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var weight = 0.0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<DogLover>
  }

  final class DogLover: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var bestFriend: PetDog?
    @Persisted var dogs: List<PetDog>
    @Persisted var tags: List<String>
    @Persisted var ints: List<Int>
    @Persisted var numbers: MutableSet<Int>
    @Persisted var otherNumbers: MutableSet<Int>
    @Persisted var dogSet: MutableSet<PetDog>
    @Persisted var scores: Map<String, Int>
    @Persisted var pets: Map<String, PetDog?>
  }
}

private let collectionQueryTypes: [ObjectBase.Type] = [
  CollectionQueryTests.PetDog.self, CollectionQueryTests.DogLover.self,
]

/// A fresh in-memory Realm holding only the dog lovers and their dogs.
private func collectionQueryRealm() throws -> Realm {
  try Realm(
    configuration: Realm.Configuration(
      inMemoryIdentifier: "collections-" + UUID().uuidString, objectTypes: collectionQueryTypes))
}

/// A Realm holding a person (id 1) with three dogs: Rex (3, 10.5 kg), Fido (5, 20 kg), Spot (1, 4.5 kg).
private func realmWithDogs() throws -> (Realm, CollectionQueryTests.DogLover) {
  let realm = try collectionQueryRealm()
  let person = try realm.write {
    realm.create(
      CollectionQueryTests.DogLover.self,
      value: [
        "id": 1, "name": "Ann", "age": 30,
        "dogs": [["Rex", 3, 10.5], ["Fido", 5, 20.0], ["Spot", 1, 4.5]],
      ])
  }
  return (realm, person)
}

/// A Realm holding five people of varied names and ages, some with dogs.
private func peopleRealm() throws -> Realm {
  let realm = try collectionQueryRealm()
  try realm.write {
    realm.create(
      CollectionQueryTests.DogLover.self,
      value: ["id": 1, "name": "Ann", "age": 30, "bestFriend": ["Rex", 7], "dogs": [["Rex", 7], ["Bo", 2]]])
    realm.create(
      CollectionQueryTests.DogLover.self, value: ["id": 2, "name": "bob", "age": 17, "bestFriend": ["Max", 2]])
    realm.create(
      CollectionQueryTests.DogLover.self,
      value: ["id": 3, "name": "René", "age": 45, "bestFriend": ["Zed", 9], "dogs": [["Zed", 9]]])
    realm.create(
      CollectionQueryTests.DogLover.self, value: ["id": 4, "name": "Cleo", "age": 30, "bestFriend": ["Ace", 4]])
    realm.create(
      CollectionQueryTests.DogLover.self, value: ["id": 5, "name": "Dan", "age": 22, "bestFriend": ["Kit", 1]])
  }
  return realm
}

@Suite("Collections and queries")
struct CollectionQueryTests {
  // MARK: List

  @Test func listAppendInsertRemoveMoveSwapAndReplace() throws {
    let (realm, person) = try realmWithDogs()
    let dogs = person.dogs
    try realm.write {
      dogs.append(PetDog(value: ["Max", 2]))
      dogs.insert(PetDog(value: ["Ace", 4]), at: 0)
    }
    #expect(dogs.map(\.name) == ["Ace", "Rex", "Fido", "Spot", "Max"])
    try realm.write { dogs.remove(at: 1) }
    #expect(dogs.map(\.name) == ["Ace", "Fido", "Spot", "Max"])
    try realm.write { dogs.move(from: 0, to: 3) }
    #expect(dogs.map(\.name) == ["Fido", "Spot", "Max", "Ace"])
    try realm.write { dogs.swapAt(0, 2) }
    #expect(dogs.map(\.name) == ["Max", "Spot", "Fido", "Ace"])
    let kit = try realm.write { realm.create(PetDog.self, value: ["Kit", 1]) }
    try realm.write { dogs.replace(index: 1, object: kit) }
    #expect(dogs.map(\.name) == ["Max", "Kit", "Fido", "Ace"])
    try realm.write { dogs[3] = kit }
    #expect(dogs[3].name == "Kit")
    #expect(dogs.count == 4)
    // Removing from a list does not delete the object from the Realm.
    #expect(realm.objects(PetDog.self).filter("name == 'Spot'").count == 1)
  }

  @Test func listIndexOfFirstLastAndRemoveAll() throws {
    let (realm, person) = try realmWithDogs()
    let fido = person.dogs[1]
    #expect(person.dogs.index(of: fido) == 1)
    let stranger = try realm.write { realm.create(PetDog.self, value: ["Stray", 8]) }
    #expect(person.dogs.index(of: stranger) == nil)
    #expect(person.dogs.first?.name == "Rex")
    #expect(person.dogs.last?.name == "Spot")
    try realm.write { person.dogs.removeAll() }
    #expect(person.dogs.isEmpty)
    #expect(person.dogs.first == nil && person.dogs.last == nil)
    try realm.write { person.dogs.removeAll() }  // a no-op on an empty list
    #expect(person.dogs.count == 0)
    #expect(realm.objects(PetDog.self).count == 4)
  }

  @Test func managedListSubscriptOutOfBoundsFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (_, person) = try realmWithDogs()
      _ = person.dogs[5]
    }
    #expect(stderrText(result).contains("Index 5 is out of bounds (must be less than 3)."))
  }

  @Test func managedListInsertRemoveMoveSwapAndReplaceOutOfBoundsFail() async {
    // `insert(_:at:)` accepts `count` itself, so its bound is one past the end.
    let insertResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, person) = try realmWithDogs()
      try realm.write { person.dogs.insert(PetDog(), at: 5) }
    }
    #expect(stderrText(insertResult).contains("Index 5 is out of bounds (must be less than 4)."))
    let removeResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, person) = try realmWithDogs()
      try realm.write { person.dogs.remove(at: 3) }
    }
    #expect(stderrText(removeResult).contains("Index 3 is out of bounds (must be less than 3)."))
    let moveResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, person) = try realmWithDogs()
      try realm.write { person.dogs.move(from: 0, to: 3) }
    }
    #expect(stderrText(moveResult).contains("Index 3 is out of bounds (must be less than 3)."))
    let swapResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, person) = try realmWithDogs()
      try realm.write { person.dogs.swapAt(0, 7) }
    }
    #expect(stderrText(swapResult).contains("Index 7 is out of bounds (must be less than 3)."))
    let replaceResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, person) = try realmWithDogs()
      try realm.write { person.dogs.replace(index: 4, object: PetDog()) }
    }
    #expect(stderrText(replaceResult).contains("Index 4 is out of bounds (must be less than 3)."))
  }

  /// Unmanaged lists are backed by an unmanaged `RLMArray`, which checks bounds with the same text.
  @Test func unmanagedListOutOfBoundsFails() async {
    let getResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = List<String>()
      list.append(objectsIn: ["a", "b", "c"])
      _ = list[5]
    }
    #expect(stderrText(getResult).contains("Index 5 is out of bounds (must be less than 3)."))
    let removeResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = List<String>()
      list.append(objectsIn: ["a", "b", "c"])
      list.remove(at: 3)
    }
    #expect(stderrText(removeResult).contains("Index 3 is out of bounds (must be less than 3)."))
  }

  @Test func listNegativeIndexFails() async {
    let getResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (_, person) = try realmWithDogs()
      _ = person.dogs[-1]
    }
    #expect(stderrText(getResult).contains("Cannot pass a negative value for 'index'."))
    let swapResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, person) = try realmWithDogs()
      try realm.write { person.dogs.swapAt(0, -1) }
    }
    #expect(stderrText(swapResult).contains("Cannot pass a negative value for 'index2'."))
  }

  @Test func listOfDeletedOwnerIsInvalidated() async throws {
    let (realm, person) = try realmWithDogs()
    let dogs = person.dogs
    #expect(dogs.isInvalidated == false)
    try realm.write { realm.delete(person) }
    #expect(dogs.isInvalidated)
    #expect(realm.objects(PetDog.self).count == 3)  // the dogs themselves remain

    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, person) = try realmWithDogs()
      let dogs = person.dogs
      try realm.write { realm.delete(person) }
      _ = dogs.count
    }
    #expect(
      stderrText(result).contains("RLMArray has been invalidated or the containing object has been deleted."))
  }

  @Test func managedListHasItsRealmAndUnmanagedListHasNone() throws {
    let (realm, person) = try realmWithDogs()
    #expect(person.dogs.realm == realm)
    #expect(person.tags.realm == realm)
    let unmanaged = DogLover()
    #expect(unmanaged.dogs.realm == nil)
    #expect(unmanaged.dogs.isInvalidated == false)
    unmanaged.tags.append("x")
    #expect(unmanaged.tags.count == 1)
  }

  @Test func modifyingAManagedListOutsideAWriteFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (_, person) = try realmWithDogs()
      person.dogs.append(PetDog())
    }
    #expect(stderrText(result).contains("Cannot modify managed RLMArray outside of a write transaction."))
  }

  @Test func listAggregatesOfObjectProperties() throws {
    let (realm, person) = try realmWithDogs()
    let dogs = person.dogs
    #expect(dogs.sum(ofProperty: "age") as Int == 9)
    #expect(dogs.min(ofProperty: "age") as Int? == 1)
    #expect(dogs.max(ofProperty: "age") as Int? == 5)
    #expect(dogs.average(ofProperty: "age") as Double? == 3.0)
    #expect(dogs.sum(ofProperty: "weight") as Double == 35.0)
    #expect(dogs.max(ofProperty: "weight") as Double? == 20.0)
    try realm.write { dogs.removeAll() }
    #expect(dogs.sum(ofProperty: "age") as Int == 0)
    #expect(dogs.min(ofProperty: "age") as Int? == nil)
    #expect(dogs.max(ofProperty: "age") as Int? == nil)
    #expect(dogs.average(ofProperty: "age") as Double? == nil)
  }

  @Test func listOfValuesAggregatesAndFindsValues() throws {
    let (realm, person) = try realmWithDogs()
    try realm.write {
      person.ints.append(objectsIn: [4, 8, 3])
      person.tags.append(objectsIn: ["a", "b", "a"])
    }
    #expect(person.ints.sum() == 15)
    #expect(person.ints.min() == 3)
    #expect(person.ints.max() == 8)
    #expect(person.ints.average() as Double? == 5.0)
    #expect(person.tags.index(of: "a") == 0)
    #expect(person.tags.index(of: "b") == 1)
    #expect(person.tags.index(of: "z") == nil)
    #expect(Array(person.tags.sorted(ascending: false)) == ["b", "a", "a"])
  }

  @Test func listValueForKeyReturnsEachElementsValue() throws {
    let (_, person) = try realmWithDogs()
    let names = person.dogs.value(forKey: "name").compactMap { $0 as? String }
    #expect(names == ["Rex", "Fido", "Spot"])
    let ages = person.dogs.value(forKeyPath: "age").compactMap { $0 as? Int }
    #expect(ages == [3, 5, 1])
  }

  @Test func listFilterAndSortedGiveResults() throws {
    let (realm, person) = try realmWithDogs()
    let older = person.dogs.filter("age > %@", 2)
    #expect(older.map(\.name) == ["Rex", "Fido"])
    let byName = person.dogs.sorted(byKeyPath: "name", ascending: false)
    #expect(byName.map(\.name) == ["Spot", "Rex", "Fido"])
    // Dogs outside the list are not included.
    try realm.write { realm.create(PetDog.self, value: ["Zed", 9]) }
    #expect(older.count == 2)
    // The results are live.
    try realm.write { person.dogs.append(PetDog(value: ["Ace", 6])) }
    #expect(older.map(\.name) == ["Rex", "Fido", "Ace"])
    #expect(byName.map(\.name) == ["Spot", "Rex", "Fido", "Ace"])
  }

  @Test func frozenListDoesNotChange() throws {
    let (realm, person) = try realmWithDogs()
    let frozen = person.dogs.freeze()
    #expect(frozen.isFrozen)
    #expect(person.dogs.isFrozen == false)
    try realm.write { person.dogs.append(PetDog(value: ["Max", 2])) }
    #expect(person.dogs.count == 4)
    #expect(frozen.count == 3)
    #expect(frozen.map(\.name) == ["Rex", "Fido", "Spot"])
    #expect(frozen.realm?.isFrozen == true)
  }

  @Test func deletingAnObjectRemovesItFromLists() throws {
    let (realm, person) = try realmWithDogs()
    let fido = person.dogs[1]
    try realm.write { realm.delete(fido) }
    #expect(person.dogs.count == 2)
    #expect(person.dogs.map(\.name) == ["Rex", "Spot"])
  }

  // MARK: MutableSet

  @Test func mutableSetInsertRemoveContainsAndCount() throws {
    let realm = try collectionQueryRealm()
    let person = try realm.write { realm.create(DogLover.self, value: ["id": 1]) }
    try realm.write {
      person.numbers.insert(1)
      person.numbers.insert(2)
      person.numbers.insert(1)  // already present
      person.numbers.insert(objectsIn: [3, 2])
    }
    #expect(person.numbers.count == 3)
    #expect(person.numbers.contains(2))
    #expect(!person.numbers.contains(4))
    try realm.write {
      person.numbers.remove(2)
      person.numbers.remove(9)  // absent: a no-op
    }
    #expect(Set(person.numbers) == [1, 3])
    try realm.write { person.numbers.removeAll() }
    #expect(person.numbers.isEmpty)
  }

  @Test func mutableSetAlgebra() throws {
    let realm = try collectionQueryRealm()
    let person = try realm.write { realm.create(DogLover.self, value: ["id": 1]) }
    try realm.write {
      person.numbers.insert(objectsIn: [1, 2, 3])
      person.otherNumbers.insert(objectsIn: [2, 3, 4])
    }
    #expect(person.numbers.intersects(person.otherNumbers))
    #expect(!person.numbers.isSubset(of: person.otherNumbers))
    try realm.write { person.numbers.formUnion(person.otherNumbers) }
    #expect(Set(person.numbers) == [1, 2, 3, 4])
    #expect(person.otherNumbers.isSubset(of: person.numbers))
    try realm.write { person.numbers.subtract(person.otherNumbers) }
    #expect(Set(person.numbers) == [1])
    #expect(!person.numbers.intersects(person.otherNumbers))
    try realm.write {
      person.numbers.insert(objectsIn: [2, 5])
      person.numbers.formIntersection(person.otherNumbers)
    }
    #expect(Set(person.numbers) == [2])
    #expect(Set(person.otherNumbers) == [2, 3, 4])
  }

  @Test func mutableSetOfObjectsHoldsEachObjectOnce() throws {
    let realm = try collectionQueryRealm()
    let person = try realm.write { realm.create(DogLover.self, value: ["id": 1]) }
    let rex = try realm.write { realm.create(PetDog.self, value: ["Rex", 3]) }
    let bo = try realm.write { realm.create(PetDog.self, value: ["Bo", 1]) }
    try realm.write {
      person.dogSet.insert(rex)
      person.dogSet.insert(rex)
      person.dogSet.insert(bo)
    }
    #expect(person.dogSet.count == 2)
    #expect(person.dogSet.contains(rex))
    try realm.write { person.dogSet.remove(rex) }
    #expect(person.dogSet.count == 1)
    #expect(!person.dogSet.contains(rex))
    #expect(person.dogSet.first?.name == "Bo")
    #expect(realm.objects(PetDog.self).count == 2)
  }

  @Test func modifyingAManagedSetOutsideAWriteFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try collectionQueryRealm()
      let person = try realm.write { realm.create(DogLover.self, value: ["id": 1]) }
      person.numbers.insert(1)
    }
    #expect(stderrText(result).contains("Cannot modify managed RLMSet outside of a write transaction."))
  }

  // MARK: Map

  @Test func mapSubscriptSetsGetsAndRemovesWithNil() throws {
    let realm = try collectionQueryRealm()
    let person = try realm.write { realm.create(DogLover.self, value: ["id": 1]) }
    try realm.write {
      person.scores["a"] = 1
      person.scores["b"] = 2
      person.scores["a"] = 3  // replaces
    }
    #expect(person.scores.count == 2)
    #expect(person.scores["a"] == 3)
    #expect(person.scores["b"] == 2)
    #expect(person.scores["missing"] == nil)
    try realm.write { person.scores["a"] = nil }
    #expect(person.scores.count == 1)
    #expect(person.scores["a"] == nil)
    #expect(person.scores.keys == ["b"])
  }

  @Test func mapKeysValuesUpdateValueRemoveObjectAndRemoveAll() throws {
    let realm = try collectionQueryRealm()
    let person = try realm.write { realm.create(DogLover.self, value: ["id": 1]) }
    try realm.write {
      person.scores.updateValue(10, forKey: "x")
      person.scores.updateValue(20, forKey: "y")
      person.scores.updateValue(30, forKey: "z")
      person.scores.updateValue(11, forKey: "x")
    }
    #expect(Set(person.scores.keys) == ["x", "y", "z"])
    #expect(person.scores.values.sorted() == [11, 20, 30])
    #expect(person.scores["x"] == 11)
    try realm.write { person.scores.removeObject(for: "y") }
    #expect(person.scores.count == 2)
    #expect(person.scores["y"] == nil)
    try realm.write { person.scores.removeObject(for: "nope") }  // absent: a no-op
    #expect(person.scores.count == 2)
    try realm.write { person.scores.removeAll() }
    #expect(person.scores.count == 0)
    #expect(person.scores.keys.isEmpty)
  }

  @Test func mapIterationYieldsKeysAndValues() throws {
    let realm = try collectionQueryRealm()
    let person = try realm.write {
      realm.create(DogLover.self, value: ["id": 1, "scores": ["one": 1, "two": 2, "three": 3]])
    }
    var entries: [String: Int] = [:]
    for entry in person.scores {
      entries[entry.key] = entry.value
    }
    #expect(entries == ["one": 1, "two": 2, "three": 3])
    var pairs: [String: Int] = [:]
    for (key, value) in person.scores.asKeyValueSequence() {
      pairs[key] = value
    }
    #expect(pairs == entries)
  }

  @Test func mapKeysContainingADotOrStartingWithADollarAreRejected() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try collectionQueryRealm()
      let person = try realm.write { realm.create(DogLover.self, value: ["id": 1]) }
      try realm.write { person.scores["a.b"] = 1 }
    }
    #expect(stderrText(result).contains("Dictionary::insert: key must not contain '.'"))
    let dollarResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try collectionQueryRealm()
      let person = try realm.write { realm.create(DogLover.self, value: ["id": 1]) }
      try realm.write { person.scores["$key"] = 1 }
    }
    #expect(stderrText(dollarResult).contains("Dictionary::insert: key must not start with '$'"))
  }

  /// A map's link to a deleted object is nullified: the key remains, with a nil value.
  @Test func mapLinkToADeletedObjectBecomesNil() throws {
    let realm = try collectionQueryRealm()
    let person = try realm.write {
      realm.create(DogLover.self, value: ["id": 1, "pets": ["rex": ["Rex", 3], "bo": ["Bo", 1]]])
    }
    #expect(person.pets.count == 2)
    let rex = try #require(person.pets["rex"] ?? nil)
    #expect(rex.name == "Rex")
    try realm.write { realm.delete(rex) }
    #expect(person.pets.count == 2)
    #expect(Set(person.pets.keys) == ["rex", "bo"])
    let entry = person.pets["rex"]
    #expect(entry != nil)
    #expect(entry.flatMap { $0 } == nil)
    #expect((person.pets["bo"] ?? nil)?.name == "Bo")
  }

  // MARK: Results

  @Test func resultsCountIsEmptyFirstLastAndIndexOf() throws {
    let realm = try peopleRealm()
    let all = realm.objects(DogLover.self)
    #expect(all.count == 5)
    #expect(!all.isEmpty)
    let byAge = all.sorted(byKeyPath: "age")
    #expect(byAge.first?.name == "bob")
    #expect(byAge.last?.name == "René")
    let rene = try #require(byAge.last)
    #expect(byAge.index(of: rene) == 4)
    let none = all.filter("age > 100")
    #expect(none.isEmpty)
    #expect(none.count == 0)
    #expect(none.first == nil && none.last == nil)
  }

  @Test func filterWithFormatArguments() throws {
    let realm = try peopleRealm()
    let people = realm.objects(DogLover.self)
    #expect(people.filter("name == %@", "Ann").map(\.id) == [1])
    #expect(people.filter("%K == %@", "age", 30).map(\.id) == [1, 4])
    #expect(people.filter("name IN %@", ["Ann", "Dan", "Nobody"]).map(\.id) == [1, 5])
    #expect(people.filter("age BETWEEN {22, 30}").map(\.id) == [1, 4, 5])
    #expect(people.filter("age >= %@ AND name BEGINSWITH %@", 18, "D").map(\.id) == [5])
    #expect(people.filter("NOT (age < 30) OR name == 'bob'").map(\.id) == [1, 2, 3, 4])
    // Filters chain.
    #expect(people.filter("age >= 30").filter("name != 'Ann'").map(\.id) == [3, 4])
  }

  @Test func filterWithAnyCountAndLinkKeyPaths() throws {
    let realm = try peopleRealm()
    let people = realm.objects(DogLover.self)
    #expect(people.filter("ANY dogs.name == %@", "Zed").map(\.id) == [3])
    #expect(people.filter("ANY dogs.age > 5").map(\.id) == [1, 3])
    #expect(people.filter("dogs.@count >= 2").map(\.id) == [1])
    #expect(people.filter("dogs.@count == 0").map(\.id) == [2, 4, 5])
    #expect(people.filter("bestFriend.age < 3").map(\.id) == [2, 5])
    let dogs = realm.objects(PetDog.self)
    #expect(Set(dogs.filter("ANY owners.name == 'Ann'").map(\.name)) == ["Rex", "Bo"])
  }

  @Test func filterWithCaseAndDiacriticInsensitiveOptions() throws {
    let realm = try peopleRealm()
    let people = realm.objects(DogLover.self)
    #expect(people.filter("name == 'BOB'").count == 0)
    #expect(people.filter("name ==[c] 'BOB'").map(\.id) == [2])
    #expect(people.filter("name == 'Rene'").count == 0)
    #expect(people.filter("name ==[d] 'Rene'").map(\.id) == [3])
    #expect(people.filter("name CONTAINS[cd] 'ENE'").map(\.id) == [3])
    #expect(people.filter("name BEGINSWITH[c] 'c'").map(\.id) == [4])
  }

  @Test func typeSafeWhereQueries() throws {
    let realm = try peopleRealm()
    let people = realm.objects(DogLover.self)
    #expect(people.where { $0.age > 25 && $0.name.starts(with: "C") }.map(\.id) == [4])
    #expect(people.where { $0.age == 30 || $0.name == "Dan" }.map(\.id) == [1, 4, 5])
    #expect(people.where { $0.age.contains(20...30) }.map(\.id) == [1, 4, 5])
    #expect(people.where { $0.name.in(["bob", "Cleo"]) }.map(\.id) == [2, 4])
    #expect(people.where { $0.dogs.count > 1 }.map(\.id) == [1])
    #expect(people.where { $0.bestFriend.age >= 7 }.map(\.id) == [1, 3])
    #expect(people.where { $0.name.contains("E", options: .caseInsensitive) }.map(\.id) == [3, 4])
  }

  @Test func sortedOnNestedKeyPathsAndDescriptors() throws {
    let realm = try peopleRealm()
    let people = realm.objects(DogLover.self)
    #expect(people.sorted(byKeyPath: "bestFriend.age").map(\.id) == [5, 2, 4, 1, 3])
    #expect(people.sorted(byKeyPath: "bestFriend.name", ascending: false).map(\.id) == [3, 1, 2, 5, 4])
    let byAgeThenName = people.sorted(by: [
      SortDescriptor(keyPath: "age", ascending: false), SortDescriptor(keyPath: "name"),
    ])
    #expect(byAgeThenName.map(\.id) == [3, 1, 4, 5, 2])
  }

  @Test func sortingOnUnsupportedKeyPathsFails() async {
    let linkResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try peopleRealm()
      _ = realm.objects(DogLover.self).sorted(byKeyPath: "bestFriend").count
    }
    #expect(
      stderrText(linkResult).contains(
        "Cannot sort on key path 'bestFriend': property 'DogLover.bestFriend' of type 'object' cannot be the final property in the key path."
      ))
    let listResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try peopleRealm()
      _ = realm.objects(DogLover.self).sorted(byKeyPath: "dogs").count
    }
    #expect(
      stderrText(listResult).contains(
        "Cannot sort on key path 'dogs': property 'DogLover.dogs' is of unsupported type 'array'."))
    let scalarResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try peopleRealm()
      _ = realm.objects(DogLover.self).sorted(byKeyPath: "age.value").count
    }
    #expect(
      stderrText(scalarResult).contains(
        "Cannot sort on key path 'age.value': property 'DogLover.age' of type 'int' may only be the final property in the key path."
      ))
  }

  @Test func distinctKeepsTheFirstObjectOfEachValue() throws {
    let realm = try peopleRealm()
    let people = realm.objects(DogLover.self)
    #expect(people.distinct(by: ["age"]).map(\.id) == [1, 2, 3, 5])
    #expect(people.sorted(byKeyPath: "age").distinct(by: ["age"]).map(\.age) == [17, 22, 30, 45])
    #expect(people.distinct(by: ["age", "name"]).count == 5)
  }

  @Test func aggregatesOfResults() throws {
    let realm = try peopleRealm()
    let people = realm.objects(DogLover.self)
    #expect(people.sum(ofProperty: "age") as Int == 144)
    #expect(people.min(ofProperty: "age") as Int? == 17)
    #expect(people.max(ofProperty: "age") as Int? == 45)
    #expect(people.average(ofProperty: "age") as Double? == 28.8)
    let dogs = realm.objects(PetDog.self)
    #expect(dogs.filter("age > 5").sum(ofProperty: "age") as Int == 32)
  }

  @Test func aggregatesOfEmptyResults() throws {
    let realm = try collectionQueryRealm()
    let dogs = realm.objects(PetDog.self)
    #expect(dogs.sum(ofProperty: "age") as Int == 0)
    #expect(dogs.sum(ofProperty: "weight") as Double == 0)
    #expect(dogs.min(ofProperty: "age") as Int? == nil)
    #expect(dogs.max(ofProperty: "weight") as Double? == nil)
    #expect(dogs.average(ofProperty: "age") as Double? == nil)
  }

  @Test func filterComparingAPropertyWithAValueOfTheWrongTypeFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try peopleRealm()
      _ = realm.objects(DogLover.self).filter("age == %@", "old").count
    }
    #expect(
      stderrText(result).contains(
        "Expected object of type int for property 'age' on object of type 'DogLover', but received: old"))
  }

  @Test func filterWithAnUnparsableFormatFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try peopleRealm()
      _ = realm.objects(DogLover.self).filter("age >").count
    }
    #expect(stderrText(result).contains("Unable to parse the format string \"age >\""))
  }

  @Test func resultsSubscriptOutOfBoundsFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try peopleRealm()
      _ = realm.objects(DogLover.self).filter("age >= 30")[5]
    }
    #expect(stderrText(result).contains("Index 5 is out of bounds (must be less than 3)."))
  }

  @Test func resultsStayLiveAndFrozenResultsDoNot() throws {
    let realm = try collectionQueryRealm()
    let adults = realm.objects(DogLover.self).filter("age >= 18").sorted(byKeyPath: "age")
    #expect(adults.count == 0)
    try realm.write {
      realm.create(DogLover.self, value: ["id": 1, "age": 40])
      realm.create(DogLover.self, value: ["id": 2, "age": 12])
    }
    #expect(adults.map(\.id) == [1])
    let frozen = adults.freeze()
    #expect(frozen.isFrozen)
    #expect(!adults.isFrozen)
    try realm.write {
      realm.create(DogLover.self, value: ["id": 3, "age": 20])
      realm.object(ofType: DogLover.self, forPrimaryKey: 2)?.age = 19
    }
    #expect(adults.map(\.id) == [2, 3, 1])
    #expect(frozen.map(\.id) == [1])
    #expect(frozen.first?.isFrozen == true)
    try realm.write { realm.delete(realm.objects(DogLover.self).filter("id == 1")) }
    #expect(adults.map(\.id) == [2, 3])
    #expect(frozen.count == 1)
  }

  @Test func anyRealmCollectionWrapsResultsListsAndLinkingObjects() throws {
    let realm = try peopleRealm()
    let ann = try #require(realm.object(ofType: DogLover.self, forPrimaryKey: 1))
    let fromResults = AnyRealmCollection(realm.objects(DogLover.self))
    #expect(fromResults.count == 5)
    #expect(fromResults.realm == realm)
    #expect(fromResults.filter("age == 30").count == 2)
    #expect(fromResults.sum(ofProperty: "age") as Int == 144)
    let fromList = AnyRealmCollection(ann.dogs)
    #expect(fromList.map(\.name) == ["Rex", "Bo"])
    #expect(fromList.sorted(byKeyPath: "age").first?.name == "Bo")
    #expect(fromList.index(of: ann.dogs[1]) == 1)
    let rex = ann.dogs[0]
    let fromLinks = AnyRealmCollection(rex.owners)
    #expect(fromLinks.map(\.id) == [1])
    try realm.write { ann.dogs.append(PetDog(value: ["Pip", 3])) }
    #expect(fromList.count == 3)
  }

  // MARK: LinkingObjects

  @Test func linkingObjectsFollowAddsAndDeletes() throws {
    let realm = try collectionQueryRealm()
    let rex = try realm.write { realm.create(PetDog.self, value: ["Rex", 3]) }
    #expect(rex.owners.isEmpty)
    let ann = try realm.write { realm.create(DogLover.self, value: ["id": 1, "name": "Ann"]) }
    let bob = try realm.write { realm.create(DogLover.self, value: ["id": 2, "name": "Bob"]) }
    try realm.write {
      ann.dogs.append(rex)
      bob.dogs.append(rex)
    }
    #expect(Set(rex.owners.map(\.name)) == ["Ann", "Bob"])
    #expect(rex.owners.count == 2)
    #expect(rex.owners.filter("name == 'Bob'").count == 1)
    // An object linked twice from the same list is listed once per link.
    try realm.write { ann.dogs.append(rex) }
    #expect(rex.owners.count == 3)
    try realm.write { ann.dogs.removeAll() }
    #expect(rex.owners.map(\.name) == ["Bob"])
    try realm.write { realm.delete(bob) }
    #expect(rex.owners.isEmpty)
    // A link that is not from the origin property (`bestFriend`) is not counted.
    try realm.write { ann.bestFriend = rex }
    #expect(rex.owners.isEmpty)
  }
}
