import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Shoal

/// Collects notifications delivered on another queue; `next()` waits for the next one.
final class Inbox<T: Sendable>: Sendable {
  private let items = Mutex<[T]>([])
  private let signal = DispatchSemaphore(value: 0)

  func put(_ item: T) {
    items.withLock { $0.append(item) }
    signal.signal()
  }

  /// The next item, waiting at most 30 s (nil on timeout).
  func next() -> T? { nextWithin(30) }

  /// The next item, waiting at most `seconds` (nil on timeout).
  func nextWithin(_ seconds: Double) -> T? {
    guard signal.wait(timeout: .now() + seconds) == .success else { return nil }
    return items.withLock { $0.removeFirst() }
  }
}

/// A collection change, reduced to plain values that can cross threads.
enum Seen: Equatable, Sendable {
  case initial(Int)
  case update(count: Int, deletions: [Int], insertions: [Int], modifications: [Int])
  case error

  init<C: Collection>(_ change: RealmCollectionChange<C>) {
    switch change {
    case .initial(let c): self = .initial(c.count)
    case .update(let c, let d, let i, let m):
      self = .update(count: c.count, deletions: d, insertions: i, modifications: m)
    case .error: self = .error
    }
  }
}

@Suite("Notifications: collections, objects, maps, the Realm")
struct NotificationTests {
  @Test func resultsReportInsertionsDeletionsAndModifications() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write { realm.add((0..<5).map { Person(id: $0, name: "p\($0)", age: 10 * $0) }) }
    var seen: [Seen] = []
    let results = realm.objects(Person.self).filter("age >= 20").sorted(byKeyPath: "age")
    let token = results.observe { seen.append(Seen($0)) }
    #expect(seen == [.initial(3)])  // off the main thread, delivered at once
    try realm.write { realm.add(Person(id: 9, name: "n", age: 25)) }
    #expect(seen.last == .update(count: 4, deletions: [], insertions: [1], modifications: []))
    try realm.write { realm.object(ofType: Person.self, forPrimaryKey: 3)?.name = "renamed" }
    #expect(seen.last == .update(count: 4, deletions: [], insertions: [], modifications: [2]))
    try realm.write { realm.delete(realm.object(ofType: Person.self, forPrimaryKey: 2)!) }
    #expect(seen.last == .update(count: 3, deletions: [0], insertions: [], modifications: []))
    // Leaving the query's range is a deletion; writes to objects outside it notify nothing.
    try realm.write { realm.object(ofType: Person.self, forPrimaryKey: 4)?.age = 1 }
    #expect(seen.last == .update(count: 2, deletions: [2], insertions: [], modifications: []))
    let before = seen.count
    try realm.write { realm.object(ofType: Person.self, forPrimaryKey: 0)?.name = "x" }
    #expect(seen.count == before)
    token.invalidate()
    try realm.write { realm.add(Person(id: 10, name: "late", age: 99)) }
    #expect(seen.count == before)
  }

  @Test func incrementalAndFullEvaluationAgree() throws {
    // Unsorted results of a class are updated from the change records alone; the same results
    // sorted by a key that follows insertion order, told to evaluate in full after each commit,
    // must report the same change sets through random writes.
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write { realm.add((0..<200).map { Person(id: $0, name: "p\($0)", age: $0 % 50) }) }
    var fast: [Seen] = []
    var full: [Seen] = []
    let a = realm.objects(Person.self).filter("age >= 20").observe { fast.append(Seen($0)) }
    let sorted = realm.objects(Person.self).filter("age >= 20").sorted(byKeyPath: "id")
    sorted.state.updatesIncrementally = false
    let b = sorted.observe { full.append(Seen($0)) }
    var rng = SystemRandomNumberGenerator()
    var nextID = 200
    for _ in 0..<40 {
      try realm.write {
        for _ in 0..<Int.random(in: 1...5, using: &rng) {
          switch Int.random(in: 0..<4, using: &rng) {
          case 0:
            realm.add(Person(id: nextID, name: "n", age: Int.random(in: 0..<50, using: &rng)))
            nextID += 1
          case 1:
            let people = realm.objects(Person.self)
            if !people.isEmpty { realm.delete(people[Int.random(in: 0..<people.count, using: &rng)]) }
          case 2:
            let people = realm.objects(Person.self)
            if !people.isEmpty { people[Int.random(in: 0..<people.count, using: &rng)].age = Int.random(in: 0..<50) }
          default:
            let people = realm.objects(Person.self)
            if !people.isEmpty { people[Int.random(in: 0..<people.count, using: &rng)].name = "renamed" }
          }
        }
      }
    }
    // A cleared class takes the full path once, then the incremental one again.
    try realm.write { realm.deleteAll() }
    try realm.write { realm.add((0..<10).map { Person(id: 1000 + $0, name: "c", age: 20 + $0) }) }
    try realm.write { realm.object(ofType: Person.self, forPrimaryKey: 1003)?.age = 1 }
    try realm.write { realm.object(ofType: Person.self, forPrimaryKey: 1004)?.name = "x" }
    #expect(fast.count > 1)
    #expect(fast == full)
    withExtendedLifetime([a, b]) {}
  }

  @Test func keyPathFiltersAndLinkedObjects() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      let p = Person(id: 1, name: "a", age: 1)
      p.dog = Dog(value: ["name": "rex", "age": 1])
      realm.add(p)
    }
    let people = realm.objects(Person.self)
    var all: [Seen] = []
    var onlyAge: [Seen] = []
    var dogName: [Seen] = []
    let t1 = people.observe { all.append(Seen($0)) }
    let t2 = people.observe(keyPaths: ["age"]) { onlyAge.append(Seen($0)) }
    let t3 = people.observe(keyPaths: ["dog.name"]) { dogName.append(Seen($0)) }
    try realm.write { people.first?.name = "b" }
    #expect(all.count == 2 && onlyAge.count == 1 && dogName.count == 1)
    try realm.write { people.first?.age = 2 }
    #expect(all.count == 3 && onlyAge.count == 2 && dogName.count == 1)
    // Without key paths, a linked object's change counts; with "dog.name", only its name does.
    try realm.write { people.first?.dog?.age = 5 }
    #expect(all.count == 4 && onlyAge.count == 2 && dogName.count == 1)
    try realm.write { people.first?.dog?.name = "max" }
    #expect(all.count == 5 && dogName.count == 2)
    #expect(dogName.last == .update(count: 1, deletions: [], insertions: [], modifications: [0]))
    let typed = people.observe(keyPaths: [\Person.age]) { _ in }
    withExtendedLifetime([t1, t2, t3, typed]) {}
  }

  /// Writes several links away reach observers without key paths (four links deep), and key
  /// paths name a path to any depth.
  @Test func deepLinksAndDeepKeyPaths() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      let first = Person(id: 1, name: "a", age: 1)
      let second = Person(id: 2, name: "b", age: 2)
      second.address = Address(value: ["city": "Oslo"])
      first.dog = Dog(value: ["name": "rex", "owner": second])
      realm.add([first, second])
    }
    let people = realm.objects(Person.self).sorted(byKeyPath: "id")
    let second = try #require(realm.object(ofType: Person.self, forPrimaryKey: 2))
    var all: [Seen] = []
    var ownerName: [Seen] = []
    var shallow: [Seen] = []
    var objectChanges: [[String]] = []
    let t1 = people.observe { all.append(Seen($0)) }
    let t2 = people.observe(keyPaths: ["dog.owner.name"]) { ownerName.append(Seen($0)) }
    let t3 = people.observe(keyPaths: ["dog.name"]) { shallow.append(Seen($0)) }
    let t4 = try #require(people.first).observe { change in
      if case .change(_, let properties) = change { objectChanges.append(properties.map(\.name)) }
    }
    // Person 1 -> dog -> owner (person 2) -> address -> city: three links from person 1.
    try realm.write { second.address?.city = "Bergen" }
    #expect(all.last == .update(count: 2, deletions: [], insertions: [], modifications: [0, 1]))
    #expect(ownerName.count == 1 && shallow.count == 1)
    #expect(objectChanges == [["dog"]])
    try realm.write { second.name = "z" }
    #expect(ownerName.last == .update(count: 2, deletions: [], insertions: [], modifications: [0]))
    #expect(shallow.count == 1)
    try realm.write { second.age = 9 }
    #expect(ownerName.count == 2 && shallow.count == 1 && all.count == 4)
    withExtendedLifetime([t1, t2, t3, t4]) {}
  }

  @Test func objectChangesCarryPropertyNamesAndValues() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "a", age: 1)
    try realm.write { realm.add(person) }
    var changes: [[String]] = []
    var values: [(Any?, Any?)] = []
    var deleted = false
    let token = person.observe { change in
      switch change {
      case .change(let object, let properties):
        #expect(object.id == 1)
        changes.append(properties.map(\.name))
        values += properties.map { ($0.oldValue, $0.newValue) }
      case .deleted: deleted = true
      case .error: Issue.record("unexpected error")
      }
    }
    try realm.write {
      person.name = "b"
      person.age = 2
    }
    #expect(changes == [["name", "age"]])
    // Written on this thread: no old values (as RealmSwift); new values are there.
    #expect(values.map { $0.1 as? String ?? "\($0.1 ?? "nil")" } == ["b", "2"])
    #expect(values.allSatisfy { $0.0 == nil })
    try realm.write { person.name = "b" }  // assigning the same value still notifies
    #expect(changes.count == 2)
    let ageOnly = person.observe(keyPaths: ["age"]) { change in
      if case .change = change { Issue.record("age did not change") }
    }
    try realm.write { person.nickname = "n" }
    try realm.write { realm.delete(person) }
    #expect(deleted)
    withExtendedLifetime([token, ageOnly]) {}
  }

  /// RealmSwift's object key paths through collections and linking objects: a collection or
  /// linking objects named as a whole report changes to who is in it, not writes to its
  /// objects; a path through it reports writes to that property of its objects.
  @Test func objectKeyPathsThroughListsAndLinkingObjects() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let dog = Dog()
    let person = Person(id: 1, name: "a", age: 1)
    try realm.write {
      realm.add(person)
      person.dogs.append(dog)
    }
    var seen: [String: [[String]]] = [:]
    func watch<T: Object>(_ object: T, _ keyPath: String) -> NotificationToken {
      object.observe(keyPaths: [keyPath]) { change in
        if case .change(_, let properties) = change { seen[keyPath, default: []].append(properties.map(\.name)) }
      }
    }
    let tokens = [
      watch(dog, "walkers"), watch(dog, "walkers.name"), watch(person, "dogs"), watch(person, "dogs.name"),
    ]
    try realm.write { person.name = "b" }
    #expect(seen == ["walkers.name": [["walkers"]]])
    seen = [:]
    try realm.write { dog.name = "Rex" }
    #expect(seen == ["dogs.name": [["dogs"]]])
    seen = [:]
    try realm.write { dog.age = 3 }
    #expect(seen == [:])
    try realm.write {
      let other = realm.create(Person.self, value: ["id": 2])
      other.dogs.append(dog)
    }
    #expect(seen == ["walkers": [["walkers"]], "walkers.name": [["walkers"]]])
    seen = [:]
    try realm.write { person.dogs.append(Dog()) }
    #expect(seen == ["dogs": [["dogs"]], "dogs.name": [["dogs"]]])
    withExtendedLifetime(tokens) {}
  }

  @Test func mapChangesByKey() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "a", age: 1)
    person.attributes["a"] = 1
    person.attributes["b"] = 2
    try realm.write { realm.add(person) }
    var updates: [([String], [String], [String])] = []
    var initial = 0
    let token = person.attributes.observe { change in
      switch change {
      case .initial(let map): initial = map.count
      case .update(_, let deletions, let insertions, let modifications):
        updates.append((deletions, insertions, modifications))
      case .error: Issue.record("error")
      }
    }
    #expect(initial == 2)
    try realm.write {
      person.attributes["a"] = 10
      person.attributes["b"] = nil
      person.attributes["c"] = 3
    }
    #expect(updates.count == 1)
    #expect(updates.first?.0 == ["b"] && updates.first?.1 == ["c"] && updates.first?.2 == ["a"])
    withExtendedLifetime(token) {}
  }

  @Test func listsSetsLinkingObjectsAndErasedCollections() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "a", age: 1)
    person.dogs.append(Dog(value: ["name": "d0"]))
    try realm.write { realm.add(person) }
    let dog = person.dogs[0]
    var list: [Seen] = []
    var set: [Seen] = []
    var walkers: [Seen] = []
    var erased: [Seen] = []
    let tokens = [
      person.dogs.observe { list.append(Seen($0)) },
      person.luckyNumbers.observe { set.append(Seen($0)) },
      dog.walkers.observe { walkers.append(Seen($0)) },
      AnyRealmCollection(realm.objects(Dog.self)).observe { erased.append(Seen($0)) },
    ]
    try realm.write { person.dogs.insert(Dog(value: ["name": "d1"]), at: 0) }
    #expect(list.last == .update(count: 2, deletions: [], insertions: [0], modifications: []))
    #expect(erased.last == .update(count: 2, deletions: [], insertions: [1], modifications: []))
    try realm.write { dog.name = "renamed" }
    // A list hears of its objects' changes; the linking objects of the dog do not change.
    #expect(list.last == .update(count: 2, deletions: [], insertions: [], modifications: [1]))
    try realm.write { person.luckyNumbers.insert(7) }
    #expect(set.last == .update(count: 1, deletions: [], insertions: [0], modifications: []))
    try realm.write { realm.add(Person(value: ["id": 2, "dogs": [dog]])) }
    #expect(walkers.last == .update(count: 2, deletions: [], insertions: [1], modifications: []))
    try realm.write { person.dogs.remove(at: 1) }
    #expect(list.last == .update(count: 1, deletions: [1], insertions: [], modifications: []))
    withExtendedLifetime(tokens) {}
  }

  @Test func realmObserveAndWithoutNotifying() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    var didChange = 0
    var collection = 0
    let realmToken = realm.observe { notification, _ in if notification == .didChange { didChange += 1 } }
    let people = realm.objects(Person.self)
    let token = people.observe { if case .update = $0 { collection += 1 } }
    try realm.write { realm.add(Person(id: 1, name: "a", age: 1)) }
    #expect(didChange == 1 && collection == 1)
    try realm.write(withoutNotifying: [token]) { realm.add(Person(id: 2, name: "b", age: 1)) }
    #expect(didChange == 2 && collection == 1)
    try realm.write { realm.add(Person(id: 3, name: "c", age: 1)) }
    #expect(collection == 2)
    withExtendedLifetime([realmToken, token]) {}
  }

  @Test func otherThreadsCommitsReachAQueueObserver() throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    let inbox = Inbox<Seen>()
    let queue = DispatchQueue(label: "observer")
    let token = realm.objects(Counter.self).observe(on: queue) { inbox.put(Seen($0)) }
    #expect(inbox.next() == .initial(0))
    #expect(
      Thread.detachAndWait {
        let other = try Realm(configuration: config)
        try other.write { other.add(Counter(value: ["a", 1])) }
      })
    #expect(inbox.next() == .update(count: 1, deletions: [], insertions: [0], modifications: []))
    try realm.write { realm.objects(Counter.self).first?.value = 2 }
    #expect(inbox.next() == .update(count: 1, deletions: [], insertions: [], modifications: [0]))
    token.invalidate()
  }

  @Test func objectObservedOnAQueueGetsOldValuesFromOtherThreads() throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    let counter = Counter(value: ["a", 1])
    try realm.write { realm.add(counter) }
    let inbox = Inbox<String>()
    let queue = DispatchQueue(label: "object")
    let token = counter.observe(on: queue) { change in
      if case .change(_, let properties) = change {
        inbox.put(properties.map { "\($0.name):\($0.oldValue ?? "nil")->\($0.newValue ?? "nil")" }.joined())
      } else if case .deleted = change {
        inbox.put("deleted")
      }
    }
    // The observer registers on its queue; wait for that before writing.
    queue.sync {}
    try realm.write { counter.value = 5 }
    #expect(inbox.next() == "value:1->5")
    try realm.write { realm.delete(counter) }
    #expect(inbox.next() == "deleted")
    token.invalidate()
  }
}

@Suite("Async sequences of changes")
struct AsyncChangeTests {
  @Test func resultsChangesArriveAsFrozenSnapshots() async throws {
    let config = fileConfiguration()
    let stream = try { () throws -> RealmChanges<RealmCollectionChange<Results<Counter>>> in
      let realm = try Realm(configuration: config)
      return realm.objects(Counter.self).sorted(byKeyPath: "name").changes()
    }()
    var iterator = stream.makeAsyncIterator()
    guard case .initial(let initial)? = await iterator.next() else {
      Issue.record("no initial")
      return
    }
    #expect(initial.isFrozen && initial.isEmpty)
    #expect(
      Thread.detachAndWait {
        let realm = try Realm(configuration: config)
        try realm.write { realm.add([Counter(value: ["b", 2]), Counter(value: ["a", 1])]) }
      })
    guard case .update(let results, let deletions, let insertions, _)? = await iterator.next() else {
      Issue.record("no update")
      return
    }
    #expect(results.isFrozen && results.map(\.name) == ["a", "b"])
    #expect(deletions.isEmpty && insertions == [0, 1])
  }

  @Test func objectChangesEndWithDeletion() async throws {
    let config = fileConfiguration()
    let stream = try { () throws -> RealmChanges<ObjectChange<Counter>> in
      let realm = try Realm(configuration: config)
      let counter = Counter(value: ["a", 1])
      try realm.write { realm.add(counter) }
      return counter.changes()
    }()
    // The observer starts from the version `changes()` was called at: later writes are seen
    // even if they land before its queue has registered it.
    func write(_ body: @escaping @Sendable (Realm) -> Void) -> Bool {
      Thread.detachAndWait {
        let realm = try Realm(configuration: config)
        try realm.write { body(realm) }
      }
    }
    func describe(_ change: ObjectChange<Counter>?) -> String {
      switch change {
      case .change(let object, let properties)?:
        return (object.isFrozen ? "" : "live ") + properties.map { "\($0.name)=\($0.newValue ?? "nil")" }.joined()
      case .deleted?: return "deleted"
      case .error?: return "error"
      case nil: return "end"
      }
    }
    var iterator = stream.makeAsyncIterator()
    var seen: [String] = []
    #expect(write { $0.objects(Counter.self).first?.value = 7 })
    seen.append(describe(await iterator.next()))
    // Deleted: the stream says so, then ends.
    #expect(write { $0.deleteAll() })
    seen.append(describe(await iterator.next()))
    seen.append(describe(await iterator.next()))
    #expect(seen == ["value=7", "deleted", "end"])
  }
}

actor Watcher {
  var seen: [Int] = []
  func note(_ count: Int) { seen.append(count) }
}

@Suite("Asynchronous writes and actors")
struct AsyncWriteTests {
  @Test func writeAsyncCommitsAndCompletes() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    var completed = false
    let id = realm.writeAsync(
      { realm.add(Counter(value: ["a", 1])) }, onComplete: { error in completed = error == nil })
    #expect(id > 0)
    // Off the main thread, the write runs at once.
    #expect(completed)
    #expect(realm.objects(Counter.self).count == 1)
    realm.beginAsyncWrite {
      realm.objects(Counter.self).first?.value = 2
      realm.commitAsyncWrite()
    }
    #expect(realm.objects(Counter.self).first?.value == 2)
    #expect(!realm.isPerformingAsynchronousWriteOperations)
    try realm.cancelAsyncWrite(12345)
  }

  @Test func actorObserversRunIsolatedToTheirActor() async throws {
    let config = fileConfiguration()
    let watcher = Watcher()
    let realm = try await Realm(configuration: config, actor: watcher)
    // An AsyncStream, not a semaphore: blocking a cooperative thread could starve the actor.
    let (counts, continuation) = AsyncStream.makeStream(of: Int.self)
    var iterator = counts.makeAsyncIterator()
    let token = await realm.objects(Counter.self).observe(on: watcher) { watcher, change in
      switch change {
      case .initial(let results):
        watcher.note(results.count)
        continuation.yield(results.count)
      case .update(let results, _, _, _):
        watcher.note(results.count)
        continuation.yield(results.count)
      case .error: continuation.yield(-1)
      }
    }
    #expect(await iterator.next() == 0)
    #expect(
      Thread.detachAndWait {
        let other = try Realm(configuration: config)
        try other.write { other.add(Counter(value: ["x", 1])) }
      })
    #expect(await iterator.next() == 1)
    #expect(await watcher.seen == [0, 1])
    token.invalidate()
  }

  /// Lists, sets and erased collections observed on an actor: the change sets of a write in
  /// another thread, delivered isolated to the actor.
  @Test func listsSetsAndErasedCollectionsObservedOnAnActor() async throws {
    let config = {
      var config = fileConfiguration()
      config.objectTypes = [Person.self, Dog.self, Address.self]
      return config
    }()
    let realm = try Realm(configuration: config)
    try realm.write {
      let ann = Person(id: 1, name: "Ann", age: 30)
      ann.tags.append("a")
      ann.luckyNumbers.insert(7)
      realm.add(ann)
    }
    let ann = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
    let watcher = Watcher()
    let (changes, continuation) = AsyncStream.makeStream(of: String.self)
    var iterator = changes.makeAsyncIterator()
    @Sendable func describe<C>(_ change: RealmCollectionChange<C>, _ count: (C) -> Int) -> String {
      switch change {
      case .initial(let collection): return "initial \(count(collection))"
      case .update(let collection, let deletions, let insertions, let modifications):
        return "update \(count(collection)) -\(deletions) +\(insertions) ~\(modifications)"
      case .error(let error): return "error \(error)"
      }
    }
    let tags = await ann.tags.observe(on: watcher) { _, change in
      continuation.yield("tags " + describe(change) { $0.count })
    }
    #expect(await iterator.next() == "tags initial 1")
    let numbers = await ann.luckyNumbers.observe(on: watcher) { _, change in
      continuation.yield("numbers " + describe(change) { $0.count })
    }
    #expect(await iterator.next() == "numbers initial 1")
    let erased = await AnyRealmCollection(realm.objects(Person.self)).observe(on: watcher) { _, change in
      continuation.yield("people " + describe(change) { $0.count })
    }
    #expect(await iterator.next() == "people initial 1")
    let attributes = await ann.attributes.observe(on: watcher) { _, change in
      switch change {
      case .initial(let map): continuation.yield("attributes initial \(map.count)")
      case .update(let map, let deletions, let insertions, let modifications):
        continuation.yield("attributes update \(map.count) -\(deletions) +\(insertions) ~\(modifications)")
      case .error(let error): continuation.yield("error \(error)")
      }
    }
    #expect(await iterator.next() == "attributes initial 0")
    #expect(
      Thread.detachAndWait {
        let other = try Realm(configuration: config)
        try other.write {
          let person = other.object(ofType: Person.self, forPrimaryKey: 1)
          person?.tags.append("b")
          person?.luckyNumbers.insert(8)
          person?.attributes["height"] = 180
          other.add(Person(id: 2, name: "Bob", age: 40))
        }
      })
    var seen: [String] = []
    for _ in 0..<4 { seen.append(await iterator.next() ?? "end") }
    #expect(
      Set(seen) == [
        "tags update 2 -[] +[1] ~[]", "numbers update 2 -[] +[1] ~[]", "people update 2 -[] +[1] ~[0]",
        "attributes update 1 -[] +[\"height\"] ~[]",
      ])
    attributes.invalidate()
    tags.invalidate()
    numbers.invalidate()
    erased.invalidate()
  }
}
