import Dispatch
import Foundation
import Shoal
import Testing

/// Details of queries, aggregates, equality and searches that RealmSwift code relies on.
@Suite("Collections: RealmSwift's semantics in the details")
struct CollectionSemanticsTests {
  private func peopleWithDogs() throws -> Realm {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      for (i, dogAge) in [1, 1, 2, nil].enumerated() {
        let person = Person(id: i, name: "p\(i)", age: 10)
        if let dogAge { person.dog = Dog(value: ["name": "d\(i)", "age": dogAge]) }
        realm.add(person)
      }
    }
    return realm
  }

  /// As in Realm Core, `distinct` through a link leaves out objects whose link is nil.
  @Test func distinctThroughANilLinkLeavesTheObjectOut() throws {
    let realm = try peopleWithDogs()
    let distinct = realm.objects(Person.self).sorted(byKeyPath: "id").distinct(by: ["dog.age"])
    #expect(distinct.map(\.id) == [0, 2])
    #expect(realm.objects(Person.self).distinct(by: ["age"]).count == 1)
  }

  /// An unmanaged object as a query argument matches nothing (and `!=` everything).
  @Test func anUnmanagedObjectArgumentMatchesNothing() throws {
    let realm = try peopleWithDogs()
    let stranger = Dog(value: ["name": "nobody"])
    #expect(realm.objects(Person.self).filter("dog == %@", stranger).isEmpty)
    #expect(realm.objects(Person.self).filter("ANY dogs == %@", stranger).isEmpty)
    #expect(realm.objects(Person.self).filter("dog != %@", stranger).count == 4)
    #expect(realm.objects(Person.self).where { $0.dogs.contains(stranger) }.isEmpty)
  }

  /// Unmanaged collections of mixed values aggregate the values they hold, dates included.
  @Test func minAndMaxOfUnmanagedMixedDates() {
    let early = Date(timeIntervalSince1970: 10)
    let late = Date(timeIntervalSince1970: 20)
    let list = List<AnyRealmValue>()
    list.append(objectsIn: [.date(late), .date(early), .none])
    #expect(list.min() == .date(early))
    #expect(list.max() == .date(late))
    let set = MutableSet<AnyRealmValue>()
    set.insert(objectsIn: [.date(late), .date(early)])
    #expect(set.min() == .date(early))
    let map = Map<String, AnyRealmValue>()
    map["a"] = .date(early)
    map["b"] = .date(late)
    #expect(map.max() == .date(late))
  }

  /// `index(matching:)` on an unmanaged list evaluates the predicate in memory.
  @Test func indexMatchingOnAnUnmanagedList() {
    let list = List<Dog>()
    let buddy = Dog(value: ["name": "Buddy", "age": 3])
    list.append(objectsIn: [Dog(value: ["name": "Rex", "age": 1]), buddy])
    #expect(list.index(matching: "name == 'Buddy'") == 1)
    #expect(list.index(matching: "age > %@", 0) == 0)
    #expect(list.index(matching: "name == %@", "Nobody") == nil)
    #expect(list.index(matching: { $0.age == 3 }) == 1)
    let numbers = List<Int>()
    numbers.append(objectsIn: [5, 7, 9])
    #expect(numbers.index(matching: "self > 6") == 1)
  }

  /// Each read of a linking-objects property is a collection of its own: two reads are not
  /// equal, a value is equal to itself.
  @Test func linkingObjectsCompareByIdentity() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let dog = Dog(value: ["name": "Rex"])
    try realm.write { realm.add(Person(value: ["id": 1, "dogs": [dog]])) }
    #expect(dog.walkers != dog.walkers)
    let walkers = dog.walkers
    #expect(walkers == walkers)
  }

  /// A managed collection checks the thread, then whether it is still valid, then the write
  /// transaction, so each misuse gets RealmSwift's message.
  @Test func collectionWritesCheckThreadThenValidityThenTheTransaction() async {
    let wrongThread = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: fileConfiguration())
      let person = Person(id: 1, name: "a", age: 1)
      try realm.write { realm.add(person) }
      let unsafeTags = person.tags
      let done = DispatchSemaphore(value: 0)
      Thread.detachNewThread {
        unsafeTags.removeAll()
        done.signal()
      }
      done.wait()
    }
    #expect(stderrText(wrongThread).contains("Realm accessed from incorrect thread"))
    let invalidated = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: fileConfiguration())
      let person = Person(id: 1, name: "a", age: 1)
      try realm.write { realm.add(person) }
      let numbers = person.luckyNumbers
      realm.invalidate()
      numbers.removeAll()
    }
    #expect(stderrText(invalidated).contains("RLMSet has been invalidated or the containing object has been deleted."))
  }

  /// Map keys follow RealmSwift's rule whichever way they get in.
  @Test func mapKeysAreCheckedOnEveryWayIn() async {
    let byValue = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Person(value: ["id": 1, "attributes": ["a.b": 1]])
    }
    #expect(stderrText(byValue).contains("key must not contain '.'"))
    let decoded = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = try JSONDecoder().decode(Map<String, Int>.self, from: Data(#"{"$x": 1}"#.utf8))
    }
    #expect(stderrText(decoded).contains("key must not start with '$'"))
  }

  /// Key-value coding gives what a mixed property holds, nil for none.
  @Test func keyValueCodingOfMixedValues() throws {
    let object = AllTypes()
    #expect(object.value(forKey: "any") == nil)
    object.any = .int(5)
    #expect(object.value(forKey: "any") as? Int == 5)
    let set = MutableSet<AnyRealmValue>()
    set.insert(.string("s"))
    #expect(set.value(forKey: "self").first as? String == "s")
    let map = Map<String, AnyRealmValue>()
    map["k"] = .bool(true)
    #expect(map.value(forKey: "k") as? Bool == true)
  }

  /// A key other than `self` on a collection of values is Foundation's NSUnknownKeyException.
  @Test func anUnknownKeyOnValuesIsAnError() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let set = MutableSet<AnyRealmValue>()
      set.insert(.int(1))
      _ = set.value(forKey: "not self")
    }
    #expect(stderrText(result).contains("NSUnknownKeyException"))
    #expect(stderrText(result).contains("not key value coding-compliant for the key not self."))
  }
}
