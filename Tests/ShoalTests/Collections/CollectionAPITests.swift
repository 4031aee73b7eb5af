import Foundation
import Shoal
import Testing

// Parity of the collection API with RealmSwift 10.x: the members of `List`, `MutableSet`, `Map`,
// `Results`, `LinkingObjects`, `AnyRealmCollection` and the `RealmCollection` protocol that
// CollectionQueryTests does not already cover, with the exact texts of the exceptions
// RealmSwift raises (Shoal: fatal errors, checked with exit tests).
//
// Sources cited below: the RealmSwift sources (RealmSwift/List.swift, MutableSet.swift, Map.swift,
// Results.swift, RealmCollection.swift, Impl/RealmCollectionImpl.swift, RealmKeyedCollection.swift),
// the Objective-C layer they forward to (Realm/RLMArray.mm, RLMManagedArray.mm, RLMSet.mm,
// RLMDictionary.mm, RLMResults.mm, RLMSwiftCollectionBase.mm) and RealmSwift's own tests
// (RealmSwift/Tests/ListTests.swift, RealmCollectionTypeTests.swift).

// MARK: - Models (nested in the suite; every Realm here lists them in `objectTypes`)

extension CollectionAPITests {
  final class ShowDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var weight = 0.0
    @Persisted var born = Date(timeIntervalSince1970: 0)
    @Persisted var nickname: String?
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<Breeder>
  }

  final class Breeder: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var dogs: List<ShowDog>
    @Persisted var otherDogs: List<ShowDog>
    @Persisted var ints: List<Int>
    @Persisted var strings: List<String>
    @Persisted var dogSet: MutableSet<ShowDog>
    @Persisted var intSet: MutableSet<Int>
    @Persisted var scores: Map<String, Int>
    @Persisted var dogMap: Map<String, ShowDog?>
  }
}

private let collectionAPITypes: [ObjectBase.Type] = [CollectionAPITests.ShowDog.self, CollectionAPITests.Breeder.self]

/// A fresh in-memory Realm holding only the show dogs and their breeders.
private func collectionAPIRealm() throws -> Realm {
  try Realm(
    configuration: Realm.Configuration(
      inMemoryIdentifier: "collection-api-" + UUID().uuidString, objectTypes: collectionAPITypes))
}

/// An owner (id 1) with three dogs: Rex (3 y, 10.5 kg, born 1970+300 s), Fido (5 y, 20 kg, +100 s),
/// Spot (1 y, 4.5 kg, +200 s, nicknamed "Spotty").
private func ownerWithDogs() throws -> (Realm, CollectionAPITests.Breeder) {
  let realm = try collectionAPIRealm()
  let owner = try realm.write {
    realm.create(
      CollectionAPITests.Breeder.self,
      value: [
        "id": 1, "name": "Ann",
        "dogs": [
          ["name": "Rex", "age": 3, "weight": 10.5, "born": Date(timeIntervalSince1970: 300)],
          ["name": "Fido", "age": 5, "weight": 20.0, "born": Date(timeIntervalSince1970: 100)],
          [
            "name": "Spot", "age": 1, "weight": 4.5, "born": Date(timeIntervalSince1970: 200),
            "nickname": "Spotty",
          ],
        ],
      ])
  }
  return (realm, owner)
}

@Suite("Collection API")
struct CollectionAPITests {
  // MARK: List: range-replaceable emulation

  /// List.swift: `subscript(bounds: Range<Int>)` returns a slice and its setter calls
  /// `replaceSubrange`, so a range may be replaced by fewer elements (ListTests.swift,
  /// ListRRCMethodsTests.testSubscript).
  @Test func listRangeSubscriptReadsAndReplacesRanges() throws {
    let list = List<Int>()
    list.append(objectsIn: [0, 1, 2, 3, 4, 5, 6])
    #expect(Array(list[1..<3]) == [1, 2])
    let other = List<Int>()
    other.append(objectsIn: [10, 11, 12])
    list[1..<4] = other[0..<2]
    #expect(Array(list) == [0, 10, 11, 4, 5, 6])

    let (realm, owner) = try ownerWithDogs()
    try realm.write {
      owner.ints.append(objectsIn: [0, 1, 2, 3])
      owner.ints[0..<3] = other[2..<3]
    }
    #expect(Array(owner.ints) == [12, 3])
    #expect(owner.dogs[1..<3].map(\.name) == ["Fido", "Spot"])
  }

  /// List.swift: `removeFirst(_ number: Int = 1)` and `removeLast(_ number: Int = 1)` remove from
  /// either end (ListRRCMethodsTests.testRemoveFirst / testRemoveLastFew).
  @Test func listRemoveFirstAndLastTakeACount() throws {
    let (realm, owner) = try ownerWithDogs()
    try realm.write {
      owner.ints.append(objectsIn: [0, 1, 2, 3, 4, 5, 6])
      owner.ints.removeFirst()
      owner.ints.removeLast()
      owner.ints.removeFirst(2)
      owner.ints.removeLast(2)
    }
    #expect(Array(owner.ints) == [3])
  }

  /// List.swift `removeFirst/removeLast`: "It is not possible to remove more objects (n) from a
  /// list than it already contains (count)." even for the default count of 1 on an empty list
  /// (ListTests.testRemoveLast: "Should throw if already empty").
  @Test func listRemoveLastOnEmptyListFails() async {
    let lastResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = List<Int>()
      list.removeLast()
    }
    #expect(
      stderrText(lastResult).contains(
        "It is not possible to remove more objects (1) from a list than it already contains (0)."))
    let firstResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, owner) = try ownerWithDogs()
      try realm.write { owner.dogs.removeFirst(4) }
    }
    #expect(
      stderrText(firstResult).contains(
        "It is not possible to remove more objects (4) from a list than it already contains (3)."))
  }

  /// List.swift `replaceSubrange` removes and inserts element by element, so a range past the end
  /// fails with RLMArray's bounds text (ListTests.testReplaceRange).
  @Test func listReplaceSubrangePastTheEndFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, owner) = try ownerWithDogs()
      try realm.write { owner.dogs.replaceSubrange(200..<201, with: [ShowDog()]) }
    }
    #expect(stderrText(result).contains("Index 200 is out of bounds (must be less than 3)."))
  }

  /// List.swift `move(fromOffsets:toOffset:)` (SwiftUI's onMove) and `remove(atOffsets:)`.
  @Test func listMoveAndRemoveAtOffsets() throws {
    let list = List<String>()
    list.append(objectsIn: ["a", "b", "c", "d"])
    list.move(fromOffsets: IndexSet([0]), toOffset: 3)
    #expect(Array(list) == ["b", "c", "a", "d"])
    list.remove(atOffsets: IndexSet([0, 2]))
    #expect(Array(list) == ["c", "d"])
  }

  // MARK: Index retrieval and objects(at:)

  /// RealmCollection.swift `objects(at:)`: "Throws if an index supplied in the IndexSet is out of
  /// bounds"; RealmCollectionImpl raises "Indexes for collection are out of bounds."
  /// (RealmCollectionTypeTests.testObjectsAtIndexes).
  @Test func objectsAtIndexesReturnsTheElementsOrFails() async throws {
    let (realm, owner) = try ownerWithDogs()
    #expect(owner.dogs.objects(at: IndexSet([0, 2])).map(\.name) == ["Rex", "Spot"])
    let sorted = realm.objects(ShowDog.self).sorted(byKeyPath: "age")
    #expect(sorted.objects(at: IndexSet([0, 1])).map(\.name) == ["Spot", "Rex"])
    #expect(AnyRealmCollection(sorted).objects(at: IndexSet()).isEmpty)

    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, _) = try ownerWithDogs()
      _ = realm.objects(ShowDog.self).objects(at: IndexSet([0, 10]))
    }
    #expect(stderrText(result).contains("Indexes for collection are out of bounds."))
  }

  /// RealmCollectionImpl `subscript` calls `throwForNegativeIndex` first: "Cannot pass a negative
  /// value for 'index'." for `Results` too (RealmCollectionTypeTests.testSubscript: `collection[-200]`).
  @Test func resultsNegativeIndexFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, _) = try ownerWithDogs()
      _ = realm.objects(ShowDog.self)[-200]
    }
    #expect(stderrText(result).contains("Cannot pass a negative value for 'index'."))
  }

  /// RealmCollection.swift: `index(matching:)` with a format string or a type-safe query gives
  /// the position of the first match in the collection's own order, or nil
  /// (RealmCollectionTypeTests.testIndexOfFormat / testIndexOfQuery).
  @Test func indexMatchingFindsTheFirstMatchInCollectionOrder() throws {
    let (realm, owner) = try ownerWithDogs()
    #expect(owner.dogs.index(matching: "age > %@", 2) == 0)
    #expect(owner.dogs.index(matching: "name == %@", "Spot") == 2)
    #expect(owner.dogs.index(matching: "name == 'Nobody'") == nil)
    #expect(owner.dogs.index(matching: { $0.age < 2 }) == 2)
    let byAge = realm.objects(ShowDog.self).sorted(byKeyPath: "age", ascending: false)
    #expect(byAge.index(matching: "age < 4") == 1)
    #expect(byAge.index(matching: { $0.name == "Spot" }) == 2)
    #expect(AnyRealmCollection(byAge).index(matching: "name == 'Fido'") == 0)
    try realm.write { owner.ints.append(objectsIn: [4, 8, 3]) }
    #expect(owner.ints.index(matching: { $0 > 5 }) == 1)
  }

  // MARK: MutableSet: no positions

  /// MutableSet.swift: `index(of:)` and `index(matching:)` are not available on a set:
  /// "index(of:) is not available on MutableSet", "index(matching:) is not available on MutableSet".
  @Test func mutableSetHasNoIndexOf() async {
    let indexOfResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let set = MutableSet<Int>()
      set.insert(1)
      _ = set.index(of: 1)
    }
    #expect(stderrText(indexOfResult).contains("index(of:) is not available on MutableSet"))
    let matchingResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, owner) = try ownerWithDogs()
      try realm.write { owner.dogSet.insert(objectsIn: owner.dogs) }
      _ = owner.dogSet.index(matching: "age > 1")
    }
    #expect(stderrText(matchingResult).contains("index(matching:) is not available on MutableSet"))
  }

  /// MutableSet.swift set algebra with objects: membership is by object identity in the Realm.
  @Test func mutableSetAlgebraWithObjects() throws {
    let (realm, owner) = try ownerWithDogs()
    let other = try realm.write { realm.create(Breeder.self, value: ["id": 2]) }
    try realm.write {
      owner.dogSet.insert(objectsIn: [owner.dogs[0], owner.dogs[1]])
      other.dogSet.insert(objectsIn: [owner.dogs[1], owner.dogs[2]])
    }
    #expect(owner.dogSet.intersects(other.dogSet))
    #expect(!owner.dogSet.isSubset(of: other.dogSet))
    #expect(owner.dogSet.contains(owner.dogs[0]))
    #expect(!owner.dogSet.contains(owner.dogs[2]))
    try realm.write { owner.dogSet.formUnion(other.dogSet) }
    #expect(Set(owner.dogSet.map(\.name)) == ["Rex", "Fido", "Spot"])
    #expect(other.dogSet.isSubset(of: owner.dogSet))
    try realm.write { owner.dogSet.subtract(other.dogSet) }
    #expect(owner.dogSet.map(\.name) == ["Rex"])
    try realm.write {
      owner.dogSet.insert(owner.dogs[1])
      owner.dogSet.formIntersection(other.dogSet)
    }
    #expect(owner.dogSet.map(\.name) == ["Fido"])
  }

  /// MutableSet.swift `value(forKey:)` returns `NSSet.allObjects`: the distinct values; through
  /// RealmCollection it is a set (RealmCollectionTypeTests, MutableSet testValueForKey:
  /// `value(forKey: "stringCol") as! Set<String>?`); collection operators still work.
  @Test func mutableSetValueForKeyGivesDistinctValues() throws {
    let (realm, owner) = try ownerWithDogs()
    try realm.write {
      owner.dogs[2].age = 3
      owner.dogSet.insert(objectsIn: owner.dogs)
    }
    #expect(owner.dogSet.value(forKey: "age").compactMap { $0 as? Int }.sorted() == [3, 5])
    #expect(AnyRealmCollection(owner.dogSet).value(forKey: "name") as? Set<String> == ["Rex", "Fido", "Spot"])
    #expect(owner.dogSet.value(forKeyPath: "age") as? Set<Int> == [3, 5])
    #expect((AnyRealmCollection(owner.dogSet).value(forKeyPath: "@count") as? NSNumber)?.intValue == 3)
    #expect((owner.dogSet.value(forKeyPath: "@sum.age") as? NSNumber)?.intValue == 11)
  }

  // MARK: Unmanaged collections

  /// RLMArray.mm / RLMSet.mm / RLMDictionary.mm: an unmanaged collection cannot be queried,
  /// sorted, made distinct or frozen: "This method may only be called on RLMArray instances
  /// retrieved from an RLMRealm" (RLMSet / RLMDictionary for sets and maps)
  /// (RealmCollectionTypeTests, ListUnmanagedRealmCollectionTypeTests.testSortWithProperty /
  /// testFreeze).
  @Test func unmanagedCollectionsCannotBeQueriedSortedOrFrozen() async {
    let sortResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = List<Int>()
      list.append(objectsIn: [3, 1, 2])
      _ = list.sorted(ascending: true).count
    }
    #expect(
      stderrText(sortResult).contains("This method may only be called on RLMArray instances retrieved from an RLMRealm")
    )
    let freezeResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Breeder().dogs.freeze()
    }
    #expect(
      stderrText(freezeResult).contains(
        "This method may only be called on RLMArray instances retrieved from an RLMRealm"))
    let setResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Breeder().dogSet.filter("age > 1").count
    }
    #expect(
      stderrText(setResult).contains("This method may only be called on RLMSet instances retrieved from an RLMRealm"))
    let mapResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let map = Map<String, Int>()
      map["a"] = 1
      _ = map.sorted(ascending: true).count
    }
    #expect(
      stderrText(mapResult).contains(
        "This method may only be called on RLMDictionary instances retrieved from an RLMRealm"))
  }

  /// RLMArray.mm: unmanaged collections still aggregate (min/max/sum/average over their values).
  @Test func unmanagedCollectionsAggregate() throws {
    let list = List<Int>()
    list.append(objectsIn: [4, 8, 3])
    #expect(list.min() == 3)
    #expect(list.max() == 8)
    #expect(list.sum() == 15)
    #expect(list.average() as Double? == 5)
    let owner = Breeder()
    owner.dogs.append(objectsIn: [ShowDog(value: ["name": "A", "age": 2]), ShowDog(value: ["name": "B", "age": 6])])
    #expect(owner.dogs.max(ofProperty: "age") as Int? == 6)
    #expect(owner.dogs.sum(ofProperty: "age") as Int == 8)
  }

  // MARK: Equality

  /// RealmCollection is Equatable. RLMSwiftCollectionBase.mm / RLMManagedArray.mm: two managed
  /// lists are equal when they are the same property of the same object; an unmanaged list equals
  /// another unmanaged list with equal contents (RLMArray.mm `isEqual:`), never a managed one.
  @Test func listsAndSetsAreEquatable() throws {
    let (realm, owner) = try ownerWithDogs()
    #expect(owner.dogs == owner.dogs)
    let sameOwner = try #require(realm.object(ofType: Breeder.self, forPrimaryKey: 1))
    #expect(sameOwner.dogs == owner.dogs)
    #expect(owner.dogs != owner.otherDogs)
    #expect(owner.intSet == owner.intSet)
    #expect(owner.scores == owner.scores)

    let a = List<Int>()
    let b = List<Int>()
    #expect(a == b)
    a.append(objectsIn: [1, 2])
    b.append(objectsIn: [1, 2])
    #expect(a == b)
    b.append(3)
    #expect(a != b)
    #expect(owner.ints != List<Int>())
  }

  /// Results.swift `==`: results are equal when they are the same collection; RealmCollection
  /// requires Equatable so generic code can compare collections (AnyRealmCollection forwards).
  @Test func resultsAndAnyRealmCollectionAreEquatable() throws {
    let (realm, owner) = try ownerWithDogs()
    let dogs = realm.objects(ShowDog.self)
    let copy = dogs
    #expect(dogs == copy)
    #expect(dogs != dogs.filter("age > 1"))
    #expect(AnyRealmCollection(owner.dogs) == AnyRealmCollection(owner.dogs))
    #expect(AnyRealmCollection(owner.dogs) != AnyRealmCollection(owner.otherDogs))
    func same<C: RealmCollection>(_ a: C, _ b: C) -> Bool { a == b }
    #expect(same(owner.dogs, owner.dogs))
  }

  // MARK: Key-value coding

  /// RealmCollection.swift: `value(forKey:)` and `value(forKeyPath:)` return `Any?` holding an
  /// array of each element's value; key paths may go through links; `self` gives the elements
  /// (RealmCollectionTypeTests.testValueForKey: `as! [String]?`).
  @Test func resultsValueForKeyAndKeyPath() throws {
    let (realm, owner) = try ownerWithDogs()
    let dogs = realm.objects(ShowDog.self).sorted(byKeyPath: "age")
    let names: Any? = dogs.value(forKey: "name")
    #expect(names as? [String] == ["Spot", "Rex", "Fido"])
    #expect((dogs.value(forKey: "self") as? [ShowDog])?.map(\.name) == ["Spot", "Rex", "Fido"])
    let ownerNames = owner.dogs[0].owners.value(forKeyPath: "name") as? [String]
    #expect(ownerNames == ["Ann"])
    let erased = AnyRealmCollection(owner.dogs)
    #expect(erased.value(forKeyPath: "age") as? [Int] == [3, 5, 1])
    // Optional properties that are nil come back as NSNull, as NSArray holds them.
    let nicknames = dogs.value(forKey: "nickname") as? [Any]
    #expect(nicknames?.count == 3)
    #expect(nicknames?.first as? String == "Spotty")
    #expect(nicknames?[1] is NSNull)
    #expect(nicknames?[2] is NSNull)
    try realm.write { owner.name = "Bo" }
    #expect(owner.dogs.value(forKeyPath: "owners.name").count == 3)
  }

  /// RLMResults.mm `valueForKeyPath:`: the KVC collection operators `@count`, `@min`, `@max`,
  /// `@sum`, `@avg` (NSNumber, nil when empty except @sum) and `@unionOfObjects`
  /// (RealmCollectionTypeTests.testValueForKeyPath).
  @Test func collectionOperatorsInValueForKeyPath() throws {
    let (realm, owner) = try ownerWithDogs()
    let dogs = AnyRealmCollection(owner.dogs)
    #expect((dogs.value(forKeyPath: "@count") as? NSNumber)?.intValue == 3)
    #expect((dogs.value(forKeyPath: "@max.age") as? NSNumber)?.intValue == 5)
    #expect((dogs.value(forKeyPath: "@min.age") as? NSNumber)?.intValue == 1)
    #expect((dogs.value(forKeyPath: "@sum.age") as? NSNumber)?.intValue == 9)
    #expect((dogs.value(forKeyPath: "@avg.age") as? NSNumber)?.doubleValue == 3.0)
    #expect(dogs.value(forKeyPath: "@unionOfObjects.name") as? [String] == ["Rex", "Fido", "Spot"])
    let none = realm.objects(ShowDog.self).filter("age > 100")
    #expect((none.value(forKeyPath: "@count") as? NSNumber)?.intValue == 0)
    #expect(none.value(forKeyPath: "@max.age") == nil)
    #expect((none.value(forKeyPath: "@sum.age") as? NSNumber)?.intValue == 0)
  }

  /// RLMResults.mm: "Unsupported KVC collection operator found in key path '@foo.age'".
  @Test func unsupportedCollectionOperatorFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, _) = try ownerWithDogs()
      _ = realm.objects(ShowDog.self).value(forKeyPath: "@foo.age")
    }
    #expect(stderrText(result).contains("Unsupported KVC collection operator found in key path '@foo.age'"))
  }

  /// RealmCollection.swift `setValue(_:forKey:)` sets the property on every element (in a write).
  @Test func setValueForKeySetsEveryElement() throws {
    let (realm, owner) = try ownerWithDogs()
    try realm.write { realm.objects(ShowDog.self).filter("age > 2").setValue("old", forKey: "nickname") }
    #expect(owner.dogs.map(\.nickname) == ["old", "old", "Spotty"])
    try realm.write { AnyRealmCollection(owner.dogs).setValue(7, forKey: "age") }
    #expect(owner.dogs.map(\.age) == [7, 7, 7])
  }

  // MARK: Aggregates

  /// RealmCollection.swift: `min/max(ofProperty:)` accept every MinMaxType, including `NSNumber`
  /// and dates (RealmCollectionTypeTests.testMin / testMax: `as NSNumber?`, `as Date?`).
  @Test func aggregatesIntoNSNumberAndDates() throws {
    let (realm, _) = try ownerWithDogs()
    let dogs = realm.objects(ShowDog.self)
    #expect((dogs.min(ofProperty: "age") as NSNumber?)?.intValue == 1)
    #expect((dogs.max(ofProperty: "weight") as NSNumber?)?.doubleValue == 20.0)
    #expect((dogs.sum(ofProperty: "age") as NSNumber).intValue == 9)
    #expect(dogs.min(ofProperty: "born") as Date? == Date(timeIntervalSince1970: 100))
    #expect(dogs.max(ofProperty: "born") as Date? == Date(timeIntervalSince1970: 300))
    #expect(dogs.average(ofProperty: "age") as Int? == 3)
    #expect(dogs.min(of: \.born) == Date(timeIntervalSince1970: 100))
  }

  /// RLMQueryUtil.mm `RLMValidatedProperty`: an aggregate of a property the class lacks fails with
  /// "Property 'noSuchCol' not found in object of type 'ShowDog'"
  /// (RealmCollectionTypeTests.testMin: `named: "Invalid property name"`).
  @Test func aggregateOfAMissingPropertyFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, _) = try ownerWithDogs()
      _ = realm.objects(ShowDog.self).min(ofProperty: "noSuchCol") as Int?
    }
    #expect(stderrText(result).contains("Property 'noSuchCol' not found in object of type 'ShowDog'"))
  }

  /// RLMResults.mm `throwError`: an aggregate of a property of a type it does not support fails
  /// with "sumOfProperty is not supported for string property 'name'." rather than returning 0.
  @Test func aggregateOfAnUnsupportedTypeFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, _) = try ownerWithDogs()
      _ = realm.objects(ShowDog.self).sum(ofProperty: "name") as Int
    }
    #expect(stderrText(result).contains("sumOfProperty is not supported for string property 'name'."))
  }

  /// RealmCollection.swift: `sum` of an empty collection is zero; `min`, `max` and `average` are
  /// nil, for lists of values and maps alike.
  @Test func aggregatesOfEmptyCollectionsOfValues() throws {
    let (realm, owner) = try ownerWithDogs()
    #expect(owner.ints.sum() == 0)
    #expect(owner.ints.min() == nil)
    #expect(owner.ints.max() == nil)
    #expect(owner.ints.average() as Double? == nil)
    #expect(owner.scores.sum() == 0)
    #expect(owner.scores.min() == nil)
    #expect(owner.scores.average() as Double? == nil)
    try realm.write { owner.scores.merge([(key: "a", value: 2), (key: "b", value: 6)]) { $0 + $1 } }
    #expect(owner.scores.sum() == 8)
    #expect(owner.scores.max() == 6)
    #expect(owner.scores.average() as Double? == 4)
  }

  // MARK: Sorting and distinct

  /// RealmCollection.swift: `sorted(by:)` with an empty sequence keeps the collection's order;
  /// `SortDescriptor(keyPath:)` also takes a Swift key path; `sorted(by:ascending:)` takes a key
  /// path through an optional link (RealmCollectionTypeTests.testSortWithDescriptor /
  /// testSortWithSwiftKeyPath).
  @Test func sortedByDescriptorsAndSwiftKeyPaths() throws {
    let (realm, owner) = try ownerWithDogs()
    #expect(owner.dogs.sorted(by: []).map(\.name) == ["Rex", "Fido", "Spot"])
    #expect(owner.dogs.sorted(by: [SortDescriptor(keyPath: \ShowDog.weight)]).map(\.name) == ["Spot", "Rex", "Fido"])
    #expect(owner.dogs.sorted(by: \.born, ascending: false).map(\.name) == ["Rex", "Spot", "Fido"])
    let reversed = realm.objects(ShowDog.self).sorted(by: [SortDescriptor(keyPath: "age", ascending: false)])
    #expect(reversed.sorted(by: [] as [Shoal.SortDescriptor]).map(\.name) == ["Fido", "Rex", "Spot"])
  }

  /// realm-core `Results::sort` for collections of values: "Cannot sort on key path 'age': arrays
  /// of 'int' can only be sorted on 'self'" (RLMArray tests: `sortedResultsUsingKeyPath:@"not self"`
  /// throws "can only be sorted on 'self'").
  @Test func sortingValuesOnAnotherKeyPathThanSelfFails() async throws {
    let (realm, owner) = try ownerWithDogs()
    try realm.write { owner.ints.append(objectsIn: [2, 3, 1]) }
    #expect(Array(owner.ints.sorted(byKeyPath: "self", ascending: false)) == [3, 2, 1])
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, owner) = try ownerWithDogs()
      try realm.write { owner.ints.append(objectsIn: [2, 3, 1]) }
      _ = owner.ints.sorted(byKeyPath: "age", ascending: true)
    }
    #expect(
      stderrText(result).contains("Cannot sort on key path 'age': arrays of 'int' can only be sorted on 'self'"))
  }

  /// RealmCollectionImpl / RLMResults.mm `indexOfObject:`: an unmanaged object is in no managed
  /// collection (`index(of:)` is nil), even one whose other objects it resembles.
  @Test func indexOfAnUnmanagedObjectIsNil() throws {
    let (realm, owner) = try ownerWithDogs()
    let stray = ShowDog(value: ["name": "Rex", "age": 3])
    #expect(realm.objects(ShowDog.self).index(of: stray) == nil)
    #expect(owner.dogs.index(of: stray) == nil)
    #expect(owner.dogs[0].owners.index(of: Breeder()) == nil)
    #expect(realm.objects(ShowDog.self).index(of: owner.dogs[1]) == 1)
  }

  /// RLMResults.mm `distinctResultsUsingKeyPaths:`: "Cannot distinct on keypath '@sum.age': KVC
  /// collection operators are not supported." (ResultsDistinctTests: `distinct(by: ["@sum.intCol"])`
  /// throws).
  @Test func distinctOnACollectionOperatorFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, _) = try ownerWithDogs()
      _ = realm.objects(ShowDog.self).distinct(by: ["@sum.age"]).count
    }
    #expect(
      stderrText(result).contains("Cannot distinct on keypath '@sum.age': KVC collection operators are not supported."))
  }

  /// RealmCollectionTypeTests.testSortWithProperty: "Cannot sort on key path 'noSuchCol':
  /// property 'ShowDog.noSuchCol' does not exist".
  @Test func sortingOnAMissingPropertyFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (_, owner) = try ownerWithDogs()
      _ = owner.dogs.sorted(byKeyPath: "noSuchCol", ascending: true).count
    }
    #expect(
      stderrText(result).contains("Cannot sort on key path 'noSuchCol': property 'ShowDog.noSuchCol' does not exist"))
  }

  // MARK: Descriptions

  /// RealmCollection.swift `AnyRealmCollection.description`: `RLMDescriptionWithMaxDepth(
  /// "AnyRealmCollection", ...)`, i.e. "AnyRealmCollection<Type> <0x…> (\n\t[0] …\n)"
  /// (RealmCollectionTypeTests.testDescription for AnyRealmCollection).
  @Test func anyRealmCollectionDescription() throws {
    let (realm, owner) = try ownerWithDogs()
    let text = AnyRealmCollection(owner.dogs).description
    #expect(text.hasPrefix("AnyRealmCollection<ShowDog> <0x"))
    #expect(text.contains("\t[0] ShowDog {\n\t\tname = Rex;"))
    #expect(text.hasSuffix("\n)"))
    #expect(realm.objects(ShowDog.self).description.hasPrefix("Results<ShowDog> <0x"))
    #expect(owner.dogs.description.hasPrefix("List<ShowDog> <0x"))
    #expect(owner.dogs[0].owners.description.hasPrefix("LinkingObjects<Breeder> <0x"))
  }

  // MARK: LinkingObjects

  /// LinkingObjects is a RealmCollection: subscripts with bounds checks, `first`/`last`,
  /// `index(of:)`, aggregates, sorting and `value(forKey:)` all work on it.
  @Test func linkingObjectsIsAFullRealmCollection() async throws {
    let (realm, owner) = try ownerWithDogs()
    let zoe = try realm.write { realm.create(Breeder.self, value: ["id": 2, "name": "Zoe"]) }
    try realm.write { zoe.dogs.append(owner.dogs[0]) }
    let rexOwners = owner.dogs[0].owners
    #expect(rexOwners.count == 2)
    #expect(rexOwners.first?.name == "Ann")
    #expect(rexOwners.last?.name == "Zoe")
    #expect(rexOwners.index(of: zoe) == 1)
    #expect(rexOwners.sorted(byKeyPath: "name", ascending: false).map(\.id) == [2, 1])
    #expect(rexOwners.max(ofProperty: "id") as Int? == 2)
    #expect(rexOwners.value(forKey: "name") as? [String] == ["Ann", "Zoe"])
    #expect(rexOwners.index(matching: "name == 'Zoe'") == 1)

    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (_, owner) = try ownerWithDogs()
      _ = owner.dogs[0].owners[-1]
    }
    #expect(stderrText(result).contains("Cannot pass a negative value for 'index'."))
  }

  // MARK: Map

  /// Map.swift: `value(forKey:)` gives the value for a key as AnyObject, `setValue(_:forKey:)`
  /// sets it and nil removes it; `object(forKey:)` reads too; `contains(where:)` tests entries.
  @Test func mapKeyValueCodingAndContainsWhere() throws {
    let (realm, owner) = try ownerWithDogs()
    try realm.write {
      owner.scores.setValue(5, forKey: "five")
      owner.scores["six"] = 6
    }
    #expect(owner.scores.value(forKey: "five") as? Int == 5)
    #expect(owner.scores.value(forKeyPath: "six") as? Int == 6)
    #expect(owner.scores.object(forKey: "six" as AnyObject) as? Int == 6)
    #expect(owner.scores.value(forKey: "seven") == nil)
    #expect(owner.scores.contains { key, value in key == "six" && value == 6 })
    #expect(!owner.scores.contains { _, value in value > 6 })
    try realm.write { owner.scores.setValue(nil, forKey: "five") }
    #expect(owner.scores.keys == ["six"])
  }

  /// RealmKeyedCollection.swift: Map conforms to `RealmKeyedCollection`, so generic code over
  /// keyed collections can use its keys, values, subscript and aggregates.
  @Test func mapIsARealmKeyedCollection() throws {
    func total<C: RealmKeyedCollection>(_ map: C) -> Int where C.Value == Int { map.values.reduce(0, +) }
    let (realm, owner) = try ownerWithDogs()
    try realm.write {
      owner.scores["a"] = 1
      owner.scores["b"] = 2
    }
    #expect(total(owner.scores) == 3)
    let unmanaged = Map<String, Int>()
    unmanaged["x"] = 40
    #expect(total(unmanaged) == 40)
  }

  /// Map.swift: a map of optional objects filters, sorts and aggregates its values like Results.
  @Test func mapOfObjectsQueriesItsValues() throws {
    let (realm, owner) = try ownerWithDogs()
    try realm.write {
      owner.dogMap["rex"] = owner.dogs[0]
      owner.dogMap["fido"] = owner.dogs[1]
      owner.dogMap["none"] = .some(nil)
    }
    #expect(owner.dogMap.count == 3)
    #expect(owner.dogMap.filter("age > 3").compactMap { $0?.name } == ["Fido"])
    #expect(owner.dogMap.max(ofProperty: "age") as Int? == 5)
    #expect(owner.dogMap.sorted(byKeyPath: "age").compactMap { $0?.name } == ["Rex", "Fido"])
    #expect(owner.dogMap["none"] != nil)
    #expect(owner.dogMap["missing"] == nil)
  }

  // MARK: Frozen and thawed

  /// RealmCollection.swift: `freeze()` of a live collection is frozen and keeps its contents,
  /// `thaw()` gives the live one back, and queries of a frozen collection are frozen
  /// (RealmCollectionTypeTests.testThaw / testQueryFrozenCollection).
  @Test func freezeAndThawOfEveryCollection() throws {
    let (realm, owner) = try ownerWithDogs()
    try realm.write {
      owner.intSet.insert(objectsIn: [1, 2])
      owner.scores["a"] = 1
    }
    let frozenSet = owner.intSet.freeze()
    let frozenMap = owner.scores.freeze()
    let frozenLinks = owner.dogs[0].owners.freeze()
    let frozenAny = AnyRealmCollection(owner.dogs).freeze()
    #expect(frozenSet.isFrozen && frozenMap.isFrozen && frozenLinks.isFrozen && frozenAny.isFrozen)
    #expect(frozenAny.filter("age > 1").isFrozen)
    try realm.write {
      owner.intSet.insert(3)
      owner.scores["b"] = 2
      owner.dogs.removeAll()
    }
    #expect(frozenSet.count == 2 && frozenMap.count == 1 && frozenLinks.count == 1 && frozenAny.count == 3)
    let liveSet = try #require(frozenSet.thaw())
    #expect(!liveSet.isFrozen)
    #expect(liveSet.count == 3)
    #expect(try #require(frozenMap.thaw()).count == 2)
    #expect(try #require(frozenAny.thaw()).count == 0)
  }

  // MARK: Codable

  /// RealmCollection.swift: collections encode as arrays; List and MutableSet decode from one;
  /// Map.swift encodes and decodes as a dictionary.
  @Test func collectionsEncodeAndDecode() throws {
    let (realm, owner) = try ownerWithDogs()
    try realm.write {
      owner.ints.append(objectsIn: [3, 1, 2])
      owner.scores["a"] = 1
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    #expect(String(decoding: try encoder.encode(owner.ints), as: UTF8.self) == "[3,1,2]")
    #expect(String(decoding: try encoder.encode(owner.ints.sorted()), as: UTF8.self) == "[1,2,3]")
    #expect(String(decoding: try encoder.encode(AnyRealmCollection(owner.ints)), as: UTF8.self) == "[3,1,2]")
    #expect(String(decoding: try encoder.encode(owner.scores), as: UTF8.self) == "{\"a\":1}")
    let list = try JSONDecoder().decode(List<String>.self, from: Data("[\"x\",\"y\"]".utf8))
    #expect(Array(list) == ["x", "y"])
    let set = try JSONDecoder().decode(MutableSet<Int>.self, from: Data("[1,1,2]".utf8))
    #expect(set.count == 2)
    let map = try JSONDecoder().decode(Map<String, Int>.self, from: Data("{\"k\":9}".utf8))
    #expect(map["k"] == 9)
  }

  // MARK: Observation of unmanaged collections

  /// RLMArray.mm `addNotificationBlock:`: "This method may only be called on RLMArray instances
  /// retrieved from an RLMRealm" (ListUnmanagedRealmCollectionTypeTests.testObserve).
  @Test func observingAnUnmanagedListFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = List<Int>()
      _ = list.observe { _ in }
    }
    #expect(
      stderrText(result).contains("This method may only be called on RLMArray instances retrieved from an RLMRealm"))
  }
}
