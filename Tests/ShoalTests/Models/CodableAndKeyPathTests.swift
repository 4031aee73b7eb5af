import Foundation
import Testing

@testable import Shoal

final class CodableDog: Object, Codable {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""
  @Persisted var weight: Double?
  @Persisted var tags: List<String>
  @Persisted var nicknames: MutableSet<String>
  @Persisted var scores: Map<String, Int>
  @Persisted var owner: CodableOwner?
}

final class CodableOwner: EmbeddedObject, Codable {
  @Persisted var name = ""
}

@Suite("Codable models, key-path aggregates and RealmSwift's remaining members")
struct CodableAndKeyPathTests {
  private func configuration() -> Realm.Configuration {
    var configuration = memoryConfiguration()
    configuration.objectTypes = [CodableDog.self, CodableOwner.self, Dog.self, Person.self, Address.self]
    return configuration
  }

  /// Objects decode from JSON (missing keys keep their defaults), are added, and encode back,
  /// managed or not, with their collections and embedded objects.
  @Test func objectsDecodeAddAndEncode() throws {
    let json = Data(
      """
      [{"id": 1, "name": "Rex", "tags": ["good", "loud"], "nicknames": ["R"], "scores": {"fetch": 9},
        "owner": {"name": "Ada"}},
       {"id": 2, "name": "Fido", "weight": 12.5}]
      """.utf8)
    let dogs = try JSONDecoder().decode([CodableDog].self, from: json)
    #expect(dogs.map(\.name) == ["Rex", "Fido"])
    #expect(dogs[0].weight == nil && dogs[1].weight == 12.5, "a missing key keeps the default")
    #expect(Array(dogs[0].tags) == ["good", "loud"] && dogs[0].scores["fetch"] == 9 && dogs[0].owner?.name == "Ada")
    #expect(dogs[1].tags.isEmpty)
    let unmanaged = try JSONSerialization.jsonObject(with: JSONEncoder().encode(dogs[0])) as? [String: Any]
    #expect(unmanaged?["name"] as? String == "Rex")

    let realm = try Realm(configuration: configuration())
    try realm.write { realm.add(dogs) }
    let rex = try #require(realm.object(ofType: CodableDog.self, forPrimaryKey: 1))
    try realm.write { rex.name = "Rex II" }
    let encoded = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(rex)) as? [String: Any])
    #expect(encoded["id"] as? Int == 1)
    #expect(encoded["name"] as? String == "Rex II", "a managed object encodes what the Realm holds")
    #expect(encoded["tags"] as? [String] == ["good", "loud"])
    #expect(encoded["nicknames"] as? [String] == ["R"])
    #expect((encoded["scores"] as? [String: Int]) == ["fetch": 9])
    #expect((encoded["owner"] as? [String: Any])?["name"] as? String == "Ada")
    let all = try #require(
      try JSONSerialization.jsonObject(
        with: JSONEncoder().encode(realm.objects(CodableDog.self).sorted(byKeyPath: "id")))
        as? [[String: Any]])
    #expect(all.map { $0["name"] as? String } == ["Rex II", "Fido"])
  }

  @Test func keyPathAggregatesSortsAndIndexesOnEveryCollection() throws {
    let realm = try Realm(configuration: configuration())
    let person = Person(id: 1, name: "Ada", age: 30)
    try realm.write {
      for (name, age) in [("Rex", 3), ("Bo", 7), ("Ace", 3), ("Zed", 1)] {
        person.dogs.append(Dog(value: ["name": name, "age": age]))
      }
      realm.add(person)
    }
    let dogs = person.dogs
    let results = realm.objects(Dog.self)
    for collection in [AnyRealmCollection(dogs), AnyRealmCollection(results)] {
      #expect(collection.min(of: \.age) == 1 && collection.max(of: \.age) == 7)
      #expect(collection.sum(of: \.age) == 14)
      #expect(collection.average(of: \.age) == 3)
      #expect(collection.sorted(by: \.name).map(\.name) == ["Ace", "Bo", "Rex", "Zed"])
      #expect(collection.sorted(by: \.age, ascending: false).map(\.age) == [7, 3, 3, 1])
      #expect(collection.distinct(by: [\Dog.age]).map(\.age).sorted() == [1, 3, 7])
      #expect(collection.index(matching: "name == %@", "Ace") == 2)
      #expect(collection.index(matching: { $0.age > 5 }) == 1)
      #expect(collection.index(matching: "name == 'nobody'") == nil)
    }
    #expect(dogs.min(of: \.age) == 1 && dogs.index(matching: { $0.name == "Zed" }) == 3)
    // Sections on a list, as on results.
    let sections = dogs.sectioned(by: \.age)
    #expect(sections.allKeys == [1, 3, 7])
    #expect(sections[1].map(\.name).sorted() == ["Ace", "Rex"])
    let byInitial = AnyRealmCollection(dogs).sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")]) {
      String($0.name.prefix(1))
    }
    #expect(byInitial.allKeys == ["A", "B", "R", "Z"])
    // Collections of values sort and find their distinct values.
    try realm.write {
      person.luckyNumbers.insert(objectsIn: [3, 1, 2])
      person.tags.append(objectsIn: ["b", "a", "b"])
    }
    #expect(Array(person.luckyNumbers.sorted(ascending: false)) == [3, 2, 1])
    #expect(Array(person.tags.distinct().sorted(ascending: true)) == ["a", "b"])
  }

  @Test func realmFilesCopiesSchemaVersionsAndFrozenObjects() throws {
    var configuration = fileConfiguration("members")
    configuration.objectTypes = [Dog.self, Person.self, Address.self]
    configuration.schemaVersion = 3
    #expect(!Realm.fileExists(for: configuration))
    try Realm.performMigration(for: configuration)
    #expect(Realm.fileExists(for: configuration))
    let url = try #require(configuration.fileURL)
    #expect(try schemaVersionAtURL(url) == 3)
    #expect(throws: Realm.Error.self) { try schemaVersionAtURL(url.appendingPathExtension("missing")) }
    #expect(!Realm.fileExists(for: memoryConfiguration()))

    let realm = try Realm(configuration: configuration)
    try realm.write { realm.add(Dog(value: ["name": "Rex", "age": 3])) }
    var copy = configuration
    copy.fileURL = url.deletingLastPathComponent().appendingPathComponent("copy.realm")
    try realm.writeCopy(configuration: copy)
    #expect(try Realm(configuration: copy).objects(Dog.self).first?.name == "Rex")
    #expect(throws: Realm.Error.self) { try realm.writeCopy(configuration: copy) }

    let rex = try #require(realm.objects(Dog.self).first)
    let frozen = realm.freeze(rex)
    #expect(frozen.isFrozen && frozen.name == "Rex")
    #expect(realm.thaw(frozen)?.isFrozen == false)
    let block: NotificationBlock = { _, _ in }
    let token = realm.observe(block)
    token.invalidate()

    // An optional enum whose stored raw value has no case reads nil (as in RealmSwift); a new
    // enum value is its first case.
    #expect(Level() == .low && Mood() == .happy)
    try realm.write {
      let person = realm.create(Person.self, value: ["id": 7, "level": 5])
      #expect(person.level == .mid)
      realm.dynamicObject(ofType: "Person", forPrimaryKey: 7)?["level"] = 4
      #expect(person.level == nil)
    }

    let dogSchema = try #require(realm.schema["Dog"])
    #expect(ObjectIdentifier(dogSchema.objectClass) == ObjectIdentifier(Dog.self))
    #expect(dogSchema == dogSchema && realm.objects(Dog.self).first?.objectSchema == dogSchema)

    let value = AnyRealmValue.object(rex)
    #expect(value.dynamicObject?["name"] as? String == "Rex")
    #expect(AnyRealmValue.int(1).dynamicObject == nil)
    #expect(AnyRealmValue() == .none)
  }

  /// List's range operations, managed and not, against the same operations on an Array.
  @Test func listRangeOperationsMatchArrays() throws {
    let realm = try Realm(configuration: configuration())
    let person = Person(id: 9, name: "Ada", age: 30)
    try realm.write { realm.add(person) }
    for managed in [false, true] {
      let list = managed ? person.tags : List<String>()
      var expected = ["a", "b", "c", "d", "e", "f"]
      func check(_ step: String, _ body: () -> Void) throws {
        if managed { try realm.write(body) } else { body() }
        #expect(Array(list) == expected, "\(step), managed \(managed)")
      }
      try check("append") { list.append(objectsIn: expected) }
      try check("insert contents") {
        list.insert(contentsOf: ["x", "y"], at: 2)
        expected.insert(contentsOf: ["x", "y"], at: 2)
      }
      try check("remove first 2") {
        list.removeFirst(2)
        expected.removeFirst(2)
      }
      try check("remove last 1") {
        list.removeLast(1)
        expected.removeLast(1)
      }
      try check("remove subrange") {
        list.removeSubrange(1...2)
        expected.removeSubrange(1...2)
      }
      try check("replace subrange") {
        list.replaceSubrange(0..<1, with: ["p", "q"])
        expected.replaceSubrange(0..<1, with: ["p", "q"])
      }
      try check("remove at offsets") {
        list.remove(atOffsets: IndexSet([0, 2]))
        expected = ["q", "e"]
      }
      try check("move from offsets") {
        list.append(objectsIn: ["m", "n"])
        list.move(fromOffsets: IndexSet([0, 2]), toOffset: 4)
        // RealmSwift's order: each offset moved in turn (not SwiftUI's `["e", "n", "q", "m"]`).
        expected = ["e", "m", "q", "n"]
      }
    }
    try realm.write {
      person.attributes["a"] = 3
      person.attributes["b"] = 1
      person.attributes["c"] = 8
    }
    #expect(person.attributes.min() == 1 && person.attributes.max() == 8 && person.attributes.sum() == 12)
    #expect(person.attributes.average() == 4.0)
    #expect(Array(person.attributes.sorted(ascending: false)) == [8, 3, 1])
  }

  @Test func queueConfinedRealmsAndErrorsAsNSErrors() throws {
    let queue = DispatchQueue(label: "confined")
    let configuration = configuration()
    // An in-memory Realm lives while an instance is open.
    let here = try Realm(configuration: configuration)
    let count: Int = try queue.sync {
      let realm = try Realm(configuration: configuration, queue: queue)
      try realm.write { realm.add(Dog(value: ["name": "Rex", "age": 3])) }
      return realm.objects(Dog.self).count
    }
    #expect(count == 1)
    // Its observers hear of a commit made on this thread, on the queue.
    let heard = DispatchSemaphore(value: 0)
    let token = try queue.sync {
      try Realm(configuration: configuration, queue: queue).objects(Dog.self).observe { change in
        dispatchPrecondition(condition: .onQueue(queue))
        if case .update(_, _, let insertions, _) = change, insertions == [1] { heard.signal() }
      }
    }
    try here.write { here.add(Dog(value: ["name": "Bo", "age": 1])) }
    #expect(heard.wait(timeout: .now() + 10) == .success, "the queue's observer heard the commit")
    token.invalidate()
    here.refresh()
    #expect(here.objects(Dog.self).count == 2)
    #expect(try Realm(configuration: configuration, queue: nil).objects(Dog.self).count == 2)
    // Without observers, a queue-confined Realm still moves to new versions on its queue. An
    // observed witness on the same queue, opened after it, is woken after it (listeners hear
    // of a commit in the order they were added, and the queue runs in order): once the
    // witness has heard of the commit, the follower has had its turn.
    let follower = try queue.sync { try Realm(configuration: configuration, queue: queue) }
    let dogs = queue.sync { follower.objects(Dog.self) }
    // A Realm opened on `queue` whose observer signals once it sees `count` dogs.
    func witness(on queue: DispatchQueue, hearing count: Int) throws -> (NotificationToken, DispatchSemaphore) {
      let heard = DispatchSemaphore(value: 0)
      let token = try queue.sync {
        try Realm(configuration: configuration, queue: queue).objects(Dog.self).observe { change in
          if case .update(let dogs, _, _, _) = change, dogs.count == count { heard.signal() }
        }
      }
      return (token, heard)
    }
    let (sameQueueToken, sameQueueHeard) = try witness(on: queue, hearing: 3)
    try here.write { here.add(Dog(value: ["name": "Max", "age": 2])) }
    #expect(sameQueueHeard.wait(timeout: .now() + 10) == .success, "the witness on the queue heard the commit")
    sameQueueToken.invalidate()
    #expect(queue.sync { dogs.count } == 3, "the queue's Realm followed the commit without refresh()")
    // With autorefresh off it stays where it is: a witness Realm on another queue, observed,
    // shows the commit reached this process's Realms before the follower is checked.
    queue.sync { follower.autorefresh = false }
    let witnessQueue = DispatchQueue(label: "witness")
    let (witnessToken, witnessHeard) = try witness(on: witnessQueue, hearing: 4)
    try here.write { here.add(Dog(value: ["name": "Fido", "age": 4])) }
    #expect(witnessHeard.wait(timeout: .now() + 10) == .success, "the witness heard the commit")
    witnessToken.invalidate()
    queue.sync {}  // anything already queued for the follower has run
    #expect(queue.sync { dogs.count } == 3)
    queue.sync { _ = follower.refresh() }
    #expect(queue.sync { dogs.count } == 4)

    var missing = Realm.Configuration(fileURL: URL(fileURLWithPath: "/nonexistent-dir-\(UUID())/x.realm"))
    missing.readOnly = true
    do {
      _ = try Realm(configuration: missing)
      Issue.record("opening a missing read-only file succeeded")
    } catch {
      let realmError = try #require(error as? Realm.Error)
      #expect(error.localizedDescription == realmError.message)
      let ns = error as NSError
      #expect(ns.domain == "io.realm" && ns.code == realmError.code.rawValue)
      #expect(realmError.userInfo[NSLocalizedDescriptionKey] as? String == realmError.message)
    }
  }
}
