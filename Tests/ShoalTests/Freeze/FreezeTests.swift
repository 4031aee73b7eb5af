import Dispatch
import Foundation
import Shoal
import Testing

@Suite("Frozen snapshots and thawing")
struct FreezeTests {
  @Test func frozenRealmSeesItsVersionOnly() throws {
    let realm = try Realm(configuration: fileConfiguration())
    try realm.write { realm.add(Counter(value: ["a", 1])) }
    let frozen = realm.freeze()
    #expect(frozen.isFrozen && !realm.isFrozen)
    try realm.write {
      realm.add(Counter(value: ["b", 2]))
      realm.objects(Counter.self).first?.value = 10
    }
    #expect(frozen.objects(Counter.self).count == 1)
    #expect(frozen.object(ofType: Counter.self, forPrimaryKey: "a")?.value == 1)
    #expect(frozen.objects(Counter.self).filter("value > 0").count == 1)
    let thawed = frozen.thaw()
    #expect(!thawed.isFrozen)
    #expect(thawed.objects(Counter.self).count == 2)
    // Writing to a frozen Realm is an error with RealmSwift's message.
    let error = #expect(throws: Realm.Error.self) { try frozen.write {} }
    #expect(error?.localizedDescription == "Can't perform transactions on a frozen Realm")
    // Freezing twice at one version gives the same frozen Realm.
    #expect(realm.freeze() == realm.freeze())
  }

  @Test func frozenObjectsAndCollectionsAreReadableFromOtherThreads() throws {
    let realm = try Realm(configuration: fileConfiguration())
    try realm.write {
      let person = Person(id: 1, name: "Ada", age: 36)
      person.dogs.append(Dog(value: ["name": "Rex", "age": 3]))
      person.attributes["x"] = 1
      realm.add(person)
      realm.add((2..<50).map { Person(id: $0, name: "p\($0)", age: $0) })
    }
    let person = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
    let frozenPerson = person.freeze()
    let frozenResults = realm.objects(Person.self).filter("age > 10").sorted(byKeyPath: "age").freeze()
    let frozenDogs = person.dogs.freeze()
    let frozenMap = person.attributes.freeze()
    #expect(frozenPerson.isFrozen && frozenResults.isFrozen && frozenDogs.isFrozen && frozenMap.isFrozen)
    try realm.write {
      person.name = "changed"
      realm.delete(realm.objects(Person.self).filter("age > 40"))
    }
    // Several threads read the same frozen values at once.
    let reads = DispatchQueue(label: "reads", attributes: .concurrent)
    let group = DispatchGroup()
    let failures = Inbox<String>()
    let shared = SharedFrozen(person: frozenPerson, results: frozenResults, dogs: frozenDogs, map: frozenMap)
    for _ in 0..<8 {
      reads.async(group: group) {
        for _ in 0..<50 {
          if shared.person.name != "Ada" { failures.put("name") }
          if shared.results.count != 40 || shared.results.first?.age != 11 { failures.put("results") }
          if shared.dogs.first?.name != "Rex" { failures.put("dogs") }
          if shared.map["x"] != 1 { failures.put("map") }
        }
      }
    }
    group.wait()
    #expect(failures.nextNow() == nil)
    #expect(person.name == "changed")
    #expect(frozenPerson.thaw()?.name == "changed")
  }

  @Test func thawOfADeletedObjectIsNil() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let counter = Counter(value: ["a", 1])
    try realm.write { realm.add(counter) }
    let frozen = counter.freeze()
    try realm.write { realm.delete(counter) }
    #expect(frozen.value == 1)
    #expect(frozen.thaw() == nil)
    #expect(realm.objects(Counter.self).freeze().thaw()?.count == 0)
  }

  @Test func frozenValuesPinTheirVersionUntilReleased() throws {
    var config = fileConfiguration()
    config.maximumNumberOfActiveVersions = 2
    let realm = try Realm(configuration: config)
    try realm.write { realm.add(Counter(value: ["a", 0])) }
    var frozen: [Counter] = []
    frozen.append(realm.objects(Counter.self)[0].freeze())
    try realm.write { realm.objects(Counter.self).first?.value = 1 }
    frozen.append(realm.objects(Counter.self)[0].freeze())
    try realm.write { realm.objects(Counter.self).first?.value = 2 }
    // Two old versions pinned by frozen objects: the limit of 2 is exceeded.
    #expect(throws: Realm.Error.self) { try realm.write { realm.objects(Counter.self).first?.value = 3 } }
    #expect(frozen.map(\.value) == [0, 1])
    frozen.removeAll()
    try realm.write { realm.objects(Counter.self).first?.value = 3 }
  }
}

/// Frozen values shared by reader threads in a test.
final class SharedFrozen: @unchecked Sendable {  // safe: frozen values are immutable and read-only
  let person: Person
  let results: Results<Person>
  let dogs: List<Dog>
  let map: Map<String, Int>
  init(person: Person, results: Results<Person>, dogs: List<Dog>, map: Map<String, Int>) {
    self.person = person
    self.results = results
    self.dogs = dogs
    self.map = map
  }
}

extension Inbox {
  /// The next item if one is already there.
  func nextNow() -> T? { nextWithin(0) }
}

@Suite("Thread-safe references")
struct ThreadSafeReferenceTests {
  @Test func objectsAndCollectionsCrossThreads() throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    try realm.write {
      let p = Person(id: 1, name: "Ada", age: 36)
      p.dogs.append(Dog(value: ["name": "Rex"]))
      realm.add(p)
      realm.add(Person(id: 2, name: "Bo", age: 5))
    }
    let person = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
    let personRef = ThreadSafeReference(to: person)
    let resultsRef = ThreadSafeReference(to: realm.objects(Person.self).filter("age > 10"))
    let dogsRef = ThreadSafeReference(to: person.dogs)
    #expect(!personRef.isInvalidated)
    let answers = Inbox<String>()
    #expect(
      Thread.detachAndWait {
        let other = try Realm(configuration: config)
        let p = other.resolve(personRef)
        let r = other.resolve(resultsRef)
        let d = other.resolve(dogsRef)
        answers.put("\(p?.name ?? "-") \(r?.count ?? -1) \(d?.first?.name ?? "-")")
        try other.write { p?.name = "renamed" }
      })
    #expect(answers.next() == "Ada 1 Rex")
    #expect(personRef.isInvalidated)
    realm.refresh()
    #expect(person.name == "renamed")
  }

  @Test func aDeletedObjectResolvesToNil() throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    let counter = Counter(value: ["a", 1])
    try realm.write { realm.add(counter) }
    let ref = ThreadSafeReference(to: counter)
    try realm.write { realm.delete(counter) }
    let answers = Inbox<Bool>()
    #expect(
      Thread.detachAndWait {
        let other = try Realm(configuration: config)
        other.refresh()  // a Realm that has read nothing would resolve at the reference's version
        answers.put(other.resolve(ref) == nil)
      })
    #expect(answers.next() == true)
  }

  /// Inside a write transaction, a frozen value is the state the transaction started from.
  @Test func freezingInsideAWriteGivesTheValuesAtItsStart() throws {
    let realm = try Realm(configuration: fileConfiguration())
    let counter = Counter(value: ["a", 1])
    try realm.write { realm.add(counter) }
    try realm.write {
      counter.value = 2
      #expect(counter.freeze().value == 1)
      #expect(realm.objects(Counter.self).freeze().first?.value == 1)
      #expect(realm.freeze().object(ofType: Counter.self, forPrimaryKey: "a")?.value == 1)
    }
    #expect(counter.freeze().value == 2)
  }

  @Test func anObjectCreatedInTheWriteCannotBeFrozenInIt() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: fileConfiguration())
      try realm.write { _ = realm.create(Counter.self, value: ["n", 1]).freeze() }
    }
    #expect(
      stderrText(result).contains("Cannot freeze an object in the same write transaction as it was created in."))
  }

  /// RealmSwift's order: the thread first, then whether the value still exists.
  @Test func freezingChecksTheThreadThenTheObject() async {
    let wrongThread = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: fileConfiguration())
      let counter = Counter(value: ["a", 1])
      try realm.write { realm.add(counter) }
      let unsafeResults = realm.objects(Counter.self)
      let done = DispatchSemaphore(value: 0)
      Thread.detachNewThread {
        _ = unsafeResults.freeze()
        done.signal()
      }
      done.wait()
    }
    #expect(stderrText(wrongThread).contains("Realm accessed from incorrect thread"))
    let deleted = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: fileConfiguration())
      let counter = Counter(value: ["a", 1])
      try realm.write { realm.add(counter) }
      try realm.write { realm.delete(counter) }
      _ = counter.freeze()
    }
    #expect(stderrText(deleted).contains("Object has been deleted or invalidated."))
  }
}

@Suite("Thread-safe references")
struct ThreadSafeReferenceResolutionTests {
  /// A Realm that has read nothing yet resolves a reference at the version it was made at, as
  /// RealmSwift's does; `refresh()` then brings the results up to date.
  @Test func resultsResolveAtTheReferencesVersionThenRefresh() throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    let results = realm.objects(Counter.self).filter("value != 3").sorted(byKeyPath: "name", ascending: false)
    let reference = ThreadSafeReference(to: results)
    try realm.write {
      for (i, name) in ["a", "b", "c", "d"].enumerated() { realm.add(Counter(value: [name, i + 1])) }
    }
    #expect(results.map(\.name) == ["d", "b", "a"])
    let counts = Inbox<[Int]>()
    let names = Inbox<[String]>()
    #expect(
      Thread.detachAndWait {
        let other = try Realm(configuration: config)
        guard let resolved = other.resolve(reference) else { return }
        counts.put([resolved.count, other.objects(Counter.self).count])
        other.refresh()
        names.put(resolved.map(\.name))
      })
    #expect(counts.next() == [0, 0])
    #expect(names.next() == ["d", "b", "a"])
  }

  @Test func aDeletedObjectResolvesAtTheOldVersionThenNotAfterRefresh() throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    let counter = Counter(value: ["x", 7])
    try realm.write { realm.add(counter) }
    let first = ThreadSafeReference(to: counter)
    let second = ThreadSafeReference(to: counter)
    #expect(
      Thread.detachAndWait { try Realm(configuration: config).write { try Realm(configuration: config).deleteAll() } })
    let seen = Inbox<[Bool]>()
    #expect(
      Thread.detachAndWait {
        let other = try Realm(configuration: config)
        let old = other.resolve(first)?.value == 7
        other.refresh()
        seen.put([old, other.resolve(second) == nil])
      })
    #expect(seen.next() == [true, true])
  }

  @Test func aReferenceResolvedInAnotherFileIsNil() throws {
    let realm = try Realm(configuration: fileConfiguration())
    let counter = Counter(value: ["x", 7])
    try realm.write { realm.add(counter) }
    let reference = ThreadSafeReference(to: counter)
    let other = try Realm(configuration: fileConfiguration())
    #expect(other.resolve(reference) == nil)
  }
}
