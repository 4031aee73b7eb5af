import Foundation
import Shoal
import Testing

@Suite("Results: queries, sorting, aggregates, collections")
struct ResultsTests {
  /// Ten people aged 20…65, names A0…J9, each with dogs and tags.
  func populated() throws -> Realm {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      for i in 0..<10 {
        let person = Person(id: i, name: "\(Character(UnicodeScalar(65 + i)!))\(i)", age: 20 + 5 * i)
        person.score = i % 3 == 0 ? nil : Double(i) / 2
        person.tags.append(objectsIn: i % 2 == 0 ? ["even", "vip"] : ["odd"])
        for d in 0..<(i % 4) { person.dogs.append(Dog(value: ["name": "dog\(i)-\(d)", "age": d + i])) }
        person.mood = i < 5 ? .happy : .grumpy
        person.attributes["rank"] = 10 - i
        realm.add(person)
      }
    }
    return realm
  }

  /// A class large enough to be scanned in parts on several threads gives the same objects in
  /// the same order as the one-pass scan inside a write transaction and as Swift's own filter,
  /// for a column test, a conjunction, an OR and a NOT, sorted or not.
  @Test func largeScansInPartsMatchOnePass() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let count = 40_000
    try realm.write {
      for i in 0..<count {
        let dog = Dog()
        dog.name = "dog \(i % 977)"
        dog.age = (i * 7919) % 1000
        realm.add(dog)
      }
    }
    let everyone = Array(realm.objects(Dog.self)).map { ($0.name, $0.age) }
    #expect(everyone.count == count)
    let queries: [(String, ((String, Int)) -> Bool)] = [
      ("age BETWEEN {100, 110}", { (100...110).contains($0.1) }),
      ("age > 990 AND name BEGINSWITH 'dog 9'", { $0.1 > 990 && $0.0.hasPrefix("dog 9") }),
      ("age < 3 OR age == 500", { $0.1 < 3 || $0.1 == 500 }),
      ("NOT (age >= 5)", { !($0.1 >= 5) }),
    ]
    for (query, predicate) in queries {
      let expected = everyone.filter(predicate)
      let results = realm.objects(Dog.self).filter(query)
      #expect(results.map { ($0.name, $0.age) }.elementsEqual(expected, by: ==), "\(query)")
      let sorted = results.sorted(byKeyPath: "age", ascending: false)
      #expect(sorted.map(\.age) == expected.map(\.1).sorted(by: >), "\(query) sorted")
      // Two keys (the sort reads them from the rows the scan decoded): name, then age descending.
      let byNameThenAge = expected.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 > $1.1 }
      let descriptors = [SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "age", ascending: false)]
      #expect(
        results.sorted(by: descriptors).map { ($0.name, $0.age) }.elementsEqual(byNameThenAge, by: ==),
        "\(query) sorted by name, age")
      // Inside a write transaction the same query takes the one-pass scan.
      realm.beginWrite()
      #expect(realm.objects(Dog.self).filter(query).map { ($0.name, $0.age) }.elementsEqual(expected, by: ==))
      #expect(
        realm.objects(Dog.self).filter(query).sorted(by: descriptors).map { ($0.name, $0.age) }
          .elementsEqual(byNameThenAge, by: ==))
      realm.cancelWrite()
    }
  }

  /// Results become invalid when their Realm is invalidated, and collection-backed results
  /// when their owner is deleted.
  /// Realm Core's rule: an object whose sort key path passes through a nil link comes after
  /// every other one when ascending, before them when descending; two such objects are ordered
  /// by the next descriptor.
  @Test func sortingThroughANilLinkPutsTheObjectLastWhenAscending() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      realm.create(Person.self, value: ["id": 1, "name": "no dog b"])
      realm.create(Person.self, value: ["id": 2, "name": "rex", "dog": ["name": "Rex"]])
      realm.create(Person.self, value: ["id": 3, "name": "no dog a"])
      realm.create(Person.self, value: ["id": 4, "name": "ace", "dog": ["name": "Ace"]])
    }
    let people = realm.objects(Person.self)
    #expect(people.sorted(byKeyPath: "dog.name").map(\.id) == [4, 2, 1, 3])
    #expect(people.sorted(byKeyPath: "dog.name", ascending: false).map(\.id) == [1, 3, 2, 4])
    let twoKeys = people.sorted(by: [SortDescriptor(keyPath: "dog.name"), SortDescriptor(keyPath: "name")])
    #expect(twoKeys.map(\.id) == [4, 2, 3, 1])
  }

  @Test func invalidation() throws {
    let realm = try populated()
    let people = realm.objects(Person.self).filter("age > 30")
    let tags = try #require(realm.object(ofType: Person.self, forPrimaryKey: 4)).tags.filter("self == 'vip'")
    let dogs = try #require(realm.object(ofType: Person.self, forPrimaryKey: 3)).dogs.sorted(byKeyPath: "name")
    #expect(!people.isInvalidated && !dogs.isInvalidated)
    try realm.write { realm.delete(realm.object(ofType: Person.self, forPrimaryKey: 3)!) }
    #expect(dogs.isInvalidated && !people.isInvalidated)
    #expect(Array(tags) == ["vip"] && !tags.isInvalidated)
    realm.invalidate()
    #expect(people.isInvalidated)
    #expect(!realm.objects(Person.self).isInvalidated, "results made after invalidate() are valid")
  }

  /// Collections of primitive values are queried with `self`, as in RealmSwift.
  @Test func primitiveCollectionsAreQueriedWithSelf() throws {
    let realm = try populated()
    let person = try #require(realm.object(ofType: Person.self, forPrimaryKey: 4))
    #expect(Array(person.tags.filter("self == %@", "vip")) == ["vip"])
    #expect(Array(person.tags.filter("self BEGINSWITH[c] 'E'")) == ["even"])
    #expect(person.tags.filter("self IN {'odd', 'vip'}").count == 1)
    try realm.write {
      person.luckyNumbers.insert(objectsIn: [3, 8, 13, 21])
      person.attributes["height"] = 180
    }
    let numbers = person.luckyNumbers.filter("self BETWEEN {5, 15}")
    #expect(Set(numbers) == [8, 13])
    #expect(numbers.sum() == 21)
    #expect(Array(person.luckyNumbers.filter("self > %@", 10).sorted()) == [13, 21])
    #expect(Array(person.attributes.filter("self > 100")) == [180])
    // Optional values: nil compares as in RealmSwift.
    let all = try Realm(configuration: memoryConfiguration())
    let types = AllTypes()
    types.optStrings.append(objectsIn: ["a", nil, "b"])
    try all.write { all.add(types) }
    #expect(types.optStrings.filter("self == nil").count == 1)
    #expect(Array(types.optStrings.filter("self != nil")) == ["a", "b"])
    // Live: a later write shows in the same results.
    try realm.write { person.tags.append("veteran") }
    #expect(Array(person.tags.filter("self BEGINSWITH 'v'")) == ["vip", "veteran"])
  }

  @Test func filterWithArgumentsAndOperators() throws {
    let realm = try populated()
    let people = realm.objects(Person.self)
    #expect(people.count == 10)
    #expect(people.filter("age > %@", 40).count == 5)
    #expect(people.filter("age >= 30 AND age < 50").map(\.id) == [2, 3, 4, 5])
    #expect(people.filter("name BEGINSWITH[c] %@", "c").map(\.id) == [2])
    #expect(people.filter("score == nil").count == 4)
    #expect(people.filter("ANY tags == 'vip'").count == 5)
    #expect(people.filter("dogs.@count >= 2").map(\.id) == [2, 3, 6, 7])
    #expect(people.filter("ANY dogs.age > 8").map(\.id).sorted() == [7, 9])
    #expect(people.filter("mood == %@", Mood.grumpy.rawValue).count == 5)
    #expect(people.filter("id IN %@", [1, 3, 5]).count == 3)
    #expect(people.filter("age BETWEEN {25, 35}").count == 3)
    #expect(people.filter("attributes['rank'] > 7").count == 3)
    // Chained filters AND together.
    #expect(people.filter("age > 30").filter("age < 40").map(\.id) == [3])
  }

  @Test func indexedAndPrimaryKeyEquality() throws {
    let realm = try populated()
    let people = realm.objects(Person.self)
    #expect(people.filter("name == %@", "E4").first?.id == 4)
    #expect(people.filter("id == 7").first?.name == "H7")
    #expect(people.filter("name == 'nobody'").isEmpty)
    #expect(people.filter("name IN {'A0', 'J9'}").map(\.id) == [0, 9])
    // The index stays right through updates and deletes.
    try realm.write {
      people.filter("id == 4").first?.name = "renamed"
      realm.delete(people.filter("id == 9"))
    }
    #expect(people.filter("name == 'E4'").isEmpty)
    #expect(people.filter("name == 'renamed'").first?.id == 4)
    #expect(people.filter("name == 'J9'").isEmpty)
  }

  @Test func typeSafeQueries() throws {
    let realm = try populated()
    let people = realm.objects(Person.self)
    #expect(people.where { $0.age > 40 }.count == 5)
    #expect(people.where { $0.age > 21 && $0.name.starts(with: "B") }.map(\.id) == [1])
    #expect(people.where { $0.name == "C2" || $0.age == 65 }.map(\.id) == [2, 9])
    #expect(people.where { !($0.age < 60) }.map(\.id) == [8, 9])
    #expect(people.where { $0.tags.contains("odd") }.count == 5)
    #expect(people.where { $0.dogs.count > 2 }.map(\.id) == [3, 7])
    #expect(people.where { $0.dogs.name == "dog2-1" }.map(\.id) == [2])
    #expect(people.where { $0.score == nil }.count == 4)
    #expect(people.where { $0.age.contains(30...40) }.count == 3)
    #expect(people.where { $0.id.in([1, 2]) }.count == 2)
    #expect(people.where { $0.name.contains("7", options: .caseInsensitive) }.map(\.id) == [7])
    #expect(people.where { $0.mood == .grumpy }.count == 5)
    #expect(people.where { $0.dog == nil }.count == 10)
  }

  @Test func sortingAndDistinct() throws {
    let realm = try populated()
    let people = realm.objects(Person.self)
    #expect(people.sorted(byKeyPath: "age", ascending: false).map(\.id) == Array((0..<10).reversed()))
    let byMoodThenAge = people.sorted(by: [
      SortDescriptor(keyPath: "mood"), SortDescriptor(keyPath: "age", ascending: false),
    ])
    #expect(byMoodThenAge.map(\.id) == [9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
    #expect(people.sorted(by: \.age).first?.id == 0)
    // Ascending sorts put nil first.
    #expect(people.sorted(byKeyPath: "score").prefix(4).allSatisfy { $0.score == nil })
    #expect(people.distinct(by: ["mood"]).count == 2)
    let dogs = realm.objects(Dog.self).sorted(byKeyPath: "name")
    #expect(dogs.first?.name == "dog1-0")
  }

  @Test func aggregates() throws {
    let realm = try populated()
    let people = realm.objects(Person.self)
    let minAge: Int? = people.min(ofProperty: "age")
    let maxAge: Int? = people.max(ofProperty: "age")
    let sumAge: Int = people.sum(ofProperty: "age")
    let average: Double? = people.average(ofProperty: "age")
    #expect(minAge == 20 && maxAge == 65 && sumAge == 425 && average == 42.5)
    let scoreSum: Double = people.sum(ofProperty: "score")
    #expect(scoreSum == (1 + 2 + 4 + 5 + 7 + 8) / 2.0)
    let none: Int? = people.filter("age > 100").max(ofProperty: "age")
    #expect(none == nil)
  }

  @Test func resultsAreLive() throws {
    let realm = try populated()
    let old = realm.objects(Person.self).filter("age > 60")
    #expect(old.count == 1)
    try realm.write { realm.add(Person(id: 100, name: "Zed", age: 90)) }
    #expect(old.count == 2)
    #expect(old.last?.name == "Zed")
    #expect(old.index(of: old[1]) == 1)
  }

  @Test func collectionsQueryAndTypeErase() throws {
    let realm = try populated()
    let seven = try #require(realm.object(ofType: Person.self, forPrimaryKey: 7))
    #expect(seven.dogs.filter("age > 7").count == 2)
    #expect(seven.dogs.sorted(byKeyPath: "age", ascending: false).first?.name == "dog7-2")
    let maxDogAge: Int? = seven.dogs.max(ofProperty: "age")
    #expect(maxDogAge == 9)
    let dog = seven.dogs[0]
    #expect(dog.walkers.filter("age > 50").count == 1)
    let erased: [AnyRealmCollection<Dog>] = [
      AnyRealmCollection(seven.dogs), AnyRealmCollection(realm.objects(Dog.self)),
      AnyRealmCollection(realm.objects(Dog.self).filter("age > 8")),
    ]
    #expect(erased.map(\.count) == [3, 13, 2])
    #expect(erased[0].filter("name == 'dog7-1'").count == 1)
    #expect(erased[1].sorted(byKeyPath: "age").last?.age == 9)
    let ages: Int = erased[0].sum(ofProperty: "age")
    #expect(ages == 7 + 8 + 9)
  }

  @Test func kvcOnCollections() throws {
    let realm = try populated()
    let names = realm.objects(Person.self).filter("id < 3").value(forKey: "name") as? [String]
    #expect(names == ["A0", "B1", "C2"])
    try realm.write { realm.objects(Person.self).filter("id < 3").setValue(1, forKey: "age") }
    #expect(realm.objects(Person.self).filter("age == 1").count == 3)
  }

  @Test func collectionsOfValues() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let all = AllTypes()
    all.doubles.append(objectsIn: [3.5, 1.5, 2.0])
    // Unmanaged and managed lists aggregate the same (only managed ones sort, as in RealmSwift).
    for list in [all.doubles] {
      #expect(list.sum() == 7.0)
      #expect(list.min() == 1.5 && list.max() == 3.5)
    }
    try realm.write { realm.add(all) }
    let managed = all.doubles
    #expect(managed.realm != nil)
    #expect(managed.sum() == 7.0)
    let average: Double? = managed.average()
    #expect(average == 7.0 / 3)
    #expect(managed.min() == 1.5 && managed.max() == 3.5)
    #expect(Array(managed.sorted(ascending: false)) == [3.5, 2.0, 1.5])
    #expect(managed.objects(at: IndexSet([0, 2])) == [3.5, 2.0])
    try realm.write {
      managed.append(10)
      managed.remove(at: 1)
      managed.move(from: 0, to: 2)
    }
    #expect(Array(managed) == [2.0, 10, 3.5])
  }
}
