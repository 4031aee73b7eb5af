import Foundation
import ShoalStorage
import Testing

@testable import Shoal

/// A model whose mixed property is indexed, as RealmSwift allows.
final class IndexedAnyValue: Object {
  @Persisted(indexed: true) var value: AnyRealmValue
}

/// RealmSwift API that ported code calls directly: error and token initialisers, `hash`, key-value
/// coding results, dynamic objects' fallbacks, typed key paths on actor observers.
@Suite("Porting API")
struct PortingAPITests {
  @Test func realmErrorsAreMadeAsRealmSwiftMakesThem() {
    let error = Realm.Error(.fail)
    #expect(error == Realm.Error(.fail) && error != Realm.Error(.fileAccess))
    #expect(error.code == .fail && error.errorCode == 1)
    let described = Realm.Error(
      .fileNotFound, userInfo: [NSLocalizedDescriptionKey: "gone", NSFilePathErrorKey: "/tmp/x.realm"])
    #expect(described.localizedDescription == "gone" && described.fileURL?.path == "/tmp/x.realm")
  }

  @Test func aPlaceholderTokenIsValidUntilInvalidated() {
    let token = NotificationToken()
    #expect(token.invalidate())
    #expect(!token.invalidate())
  }

  @Test func equalObjectsHaveEqualHashes() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 7, name: "Ada", age: 36)
    try realm.write { realm.add(person) }
    let again = try #require(realm.object(ofType: Person.self, forPrimaryKey: 7))
    #expect(person !== again && person == again && person.hash == again.hash)
  }

  @Test func listAndSetValuesForKeyAreObjects() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "Ada", age: 36)
    try realm.write {
      realm.add(person)
      person.dogs.append(objectsIn: [Dog(value: ["name": "Rex", "age": 3]), Dog(value: ["name": "Fido", "age": 5])])
      person.luckyNumbers.insert(objectsIn: [4, 8])
    }
    let names: [AnyObject] = person.dogs.value(forKey: "name")
    #expect(names as? [String] == ["Rex", "Fido"])
    let ages: [AnyObject] = person.dogs.value(forKeyPath: "age")
    #expect(ages as? [Int] == [3, 5])
    let numbers: [AnyObject] = person.luckyNumbers.value(forKey: "self")
    #expect(Set(numbers as? [Int] ?? []) == [4, 8])
  }

  @Test func dynamicObjectsReadAndWriteUndefinedKeys() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write { realm.add(Person(id: 1, name: "Ada", age: 36)) }
    let object = try #require(realm.dynamicObjects("Person").first)
    try realm.write { object.setValue(37, forUndefinedKey: "age") }
    #expect(object.value(forUndefinedKey: "age") as? Int == 37)
    #expect(realm.objects(Person.self).first?.age == 37)
  }

  @Test func anIndexedMixedPropertyFindsEveryKindOfValue() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    #expect(realm.schema["IndexedAnyValue"]?["value"]?.isIndexed == true)
    try realm.write {
      for value: AnyRealmValue in [.int(1), .double(1), .string("one"), .bool(true), .none, .int(2)] {
        realm.add(IndexedAnyValue(value: ["value": value]))
      }
    }
    let objects = realm.objects(IndexedAnyValue.self)
    // Numbers of different types are equal, as in RealmSwift; the index keeps them apart only
    // where the query does not need it to.
    #expect(objects.filter("value == 1").count == 2)
    #expect(objects.filter("value == 'one'").count == 1)
    #expect(objects.where { $0.value == .string("one") }.count == 1)
    #expect(objects.filter("value == nil").count == 1)
    try realm.write { objects.filter("value == 'one'").first?.value = .string("uno") }
    #expect(objects.filter("value == 'one'").isEmpty && objects.filter("value == 'uno'").count == 1)
  }

  @Test func actorObserversTakeTypedKeyPaths() async throws {
    let configuration = fileConfiguration()
    let realm = try await Realm(configuration: configuration, actor: MainActor.shared)
    let person = Person(id: 1, name: "Ada", age: 36)
    try await realm.asyncWrite {
      realm.add(person)
      person.attributes["dog"] = 1
    }
    let changes = AsyncStream<[String]>.makeStream()
    let token = await person.observe(keyPaths: [\Person.age], on: MainActor.shared) { _, change in
      if case .change(_, let properties) = change { changes.continuation.yield(properties.map(\.name)) }
    }
    try await realm.asyncWrite { person.name = "Ada L." }
    try await realm.asyncWrite { person.age = 37 }
    var iterator = changes.stream.makeAsyncIterator()
    #expect(await iterator.next() == ["age"])
    token.invalidate()
  }
}

/// A reference made inside a write transaction resolves in the version that transaction
/// committed, wherever the resolving Realm was (Realm Core's rule).
@Suite("References made in a write")
struct ReferencesMadeInAWriteTests {
  @Test func aThreadSafePropertySetInAWriteOnAnotherThreadResolvesHere() throws {
    let configuration = fileConfiguration()
    let realm = try Realm(configuration: configuration)
    let first = Person(id: 1, name: "before", age: 1)
    try realm.write { realm.add(first) }
    let wrapper = ThreadSafe(wrappedValue: first)
    #expect(wrapper.wrappedValue?.name == "before")
    _ = try resultOnOtherThread { () -> Bool in
      let other = try Realm(configuration: configuration)
      try other.write {
        wrapper.wrappedValue = other.create(Person.self, value: ["id": 2, "name": "after", "age": 2])
      }
      return true
    }
    // This thread's Realm read the version before that write; the reference brings it forward.
    #expect(wrapper.wrappedValue?.name == "after")
    #expect(realm.objects(Person.self).count == 2)
  }

  @Test func aReferenceMadeOutsideAWriteStillResolvesAtItsVersionInAFreshRealm() throws {
    let configuration = fileConfiguration()
    let realm = try Realm(configuration: configuration)
    try realm.write { realm.add(Person(id: 1, name: "Ada", age: 36)) }
    let reference = ThreadSafeReference(to: realm.objects(Person.self))
    let count = try resultOnOtherThread { () -> Int in
      let other = try Realm(configuration: configuration)
      try other.write { other.add(Person(id: 2, name: "Bob", age: 40)) }
      return other.objects(Person.self).count
    }
    #expect(count == 2)
    let resolved = try resultOnOtherThread { () -> Int? in
      try Realm(configuration: configuration).resolve(reference)?.count
    }
    #expect(resolved == 1)
  }
}

/// A resolved reference no longer keeps its version pinned, though the reference itself lives on.
@Suite("References and pins")
struct ReferencePinTests {
  @Test func aResolvedReferenceLetsItsVersionGo() throws {
    let configuration = fileConfiguration()
    let realm = try Realm(configuration: configuration)
    try realm.write { realm.add(Person(id: 1, name: "Ada", age: 36)) }
    let made = try #require(realm.core.read?.version)
    let reference = ThreadSafeReference(to: realm.objects(Person.self))
    try realm.write { realm.add(Person(id: 2, name: "Bob", age: 40)) }
    #expect(realm.core.store.pins().contains { $0.version == made })
    let count = try resultOnOtherThread { () -> Int? in
      let other = try Realm(configuration: configuration)
      _ = other.objects(Person.self).count  // this Realm has read: it resolves at its own version
      return other.resolve(reference)?.count
    }
    #expect(count == 2)
    #expect(!realm.core.store.pins().contains { $0.version == made })
    withExtendedLifetime(reference) {}
  }
}

/// When every reader slot of the file is taken, opening a Realm throws the engine's error
/// (naming who holds the slots), and a Realm already open stays readable at its version.
@Suite("Reader slots exhausted")
struct ReaderSlotsExhaustedTests {
  @Test func openingThrowsAndOpenRealmsStayReadable() throws {
    let configuration = fileConfiguration()
    let realm = try Realm(configuration: configuration)
    try realm.write { realm.add(Counter(value: ["a", 0])) }
    let store = realm.core.store
    var pins: [ReadTransaction] = []
    var exhausted: StorageError?
    for i in 0..<1100 where exhausted == nil {
      try store.write { try $0.ensureKeyspace("filler", tracksChanges: false) }
      try store.write { try $0.put([UInt8(i & 0xFF)], forKey: [1], in: "filler") }
      do {
        pins.append(try store.beginRead())
      } catch let error as StorageError {
        exhausted = error
      }
    }
    guard case .slotsExhausted(_, "reader", let limit, let holders)? = exhausted else {
      Issue.record("no reader-slot error: \(String(describing: exhausted))")
      return
    }
    #expect(limit == 1024 && holders[getpid()] != nil)
    // Opening a Realm (here on another thread) needs a slot: a thrown error, not a stop.
    let opened = try resultOnOtherThread { () -> String? in
      do {
        _ = try Realm(configuration: configuration)
        return nil
      } catch {
        return "\(error)"
      }
    }
    #expect(opened?.contains("reader slots") == true, "\(opened ?? "opened")")
    // The open Realm cannot move on, but stays readable where it is and can be frozen.
    #expect(!realm.refresh())
    #expect(realm.objects(Counter.self).count == 1)
    #expect(realm.freeze().objects(Counter.self).count == 1)
    pins.removeAll()
    #expect(realm.refresh())
  }
}

/// Equality of objects as RealmSwift's `isSameObject` defines it: one stored object in the same
/// Realm (both live, or both frozen at one version), symmetric, and consistent with hashing.
@Suite("Object identity")
struct ObjectIdentityTests {
  @Test func aFrozenObjectIsNotTheSameAsALiveOne() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let dog = Dog(value: ["name": "Rex"])
    try realm.write { realm.add(dog) }
    let frozen = dog.freeze()
    #expect(!dog.isSameObject(as: frozen) && !frozen.isSameObject(as: dog))
    #expect(dog != frozen && frozen != dog)
    #expect(frozen == dog.freeze() && frozen.hash == dog.freeze().hash)
    try realm.write { dog.age = 4 }
    #expect(frozen != dog.freeze())
  }

  @Test func equalMixedObjectValuesHashAlike() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let dog = Dog(value: ["name": "Rex"])
    try realm.write { realm.add(dog) }
    let again = try #require(realm.objects(Dog.self).first)
    let values: [AnyRealmValue] = [.object(dog), .object(again)]
    #expect(values[0] == values[1])
    #expect(Set(values).count == 1)
  }
}
