import Dispatch
import Foundation
import OpenCombine
import OpenCombineDispatch
import ShoalCombine
import ShoalSharedModels
import Testing

@testable import Shoal

/// Holds a notification token a publisher saved (`saveToken(on:at:)`).
private final class TokenHolder {
  var token: NotificationToken?
}

/// RealmSwift's Combine API through OpenCombine: pipelines on dispatch queues fed by commits
/// from this thread, another thread and another process; cancellation; frozen values;
/// hand-over to other threads.
@Suite("Combine publishers (ShoalCombine)", .serialized)
struct PublisherTests {
  private func noteRealm(_ name: String) throws -> Realm {
    var config = fileConfiguration(name)
    config.objectTypes = [Note.self]
    return try Realm(configuration: config)
  }

  @Test func aCollectionPublisherOnAQueueSeesCommitsFromHereAnotherThreadAndAnotherProcess() throws {
    let realm = try noteRealm("publisher")
    let config = realm.configuration
    let inbox = Inbox<Int>()
    let queue = DispatchQueue(label: "publisher")
    let cancellable = realm.objects(Note.self).collectionPublisher
      .subscribe(on: queue.ocombine)
      .map { $0.count }
      .sink(receiveCompletion: { _ in }, receiveValue: { inbox.put($0) })
    #expect(inbox.next() == 0)
    try realm.write { realm.add(Note(value: ["id": "here"])) }
    #expect(inbox.next() == 1)
    #expect(
      Thread.detachAndWait {
        let other = try Realm(configuration: config)
        try other.write { other.add(Note(value: ["id": "thread"])) }
      })
    #expect(inbox.next() == 2)
    let worker = try RealmWorker(file: config.fileURL!.path)
    #expect(try worker.send("add 3 w") == "added 5")
    #expect(inbox.next() == 5)
    cancellable.cancel()
    queue.sync {}
    #expect(try worker.send("add 1 x") == "added 6")
    #expect(inbox.nextWithin(0.3) == nil)
    _ = try? worker.send("quit")
  }

  @Test func aChangesetPublisherReportsIndexesAndHandsTheCollectionOverToAnotherQueue() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let inbox = Inbox<Seen>()
    let onQueue = Inbox<Bool>()
    let queue = DispatchQueue(label: "receiver")
    let key = DispatchSpecificKey<Bool>()
    queue.setSpecific(key: key, value: true)
    let cancellable = realm.objects(Person.self).sorted(byKeyPath: "id").changesetPublisher
      .receive(on: queue.ocombine)
      .sink { change in
        onQueue.put(DispatchQueue.getSpecific(key: key) == true)
        inbox.put(Seen(change))
      }
    #expect(inbox.next() == .initial(0))
    try realm.write {
      realm.add(Person(id: 2, name: "b", age: 1))
      realm.add(Person(id: 1, name: "a", age: 1))
    }
    #expect(inbox.next() == .update(count: 2, deletions: [], insertions: [0, 1], modifications: []))
    try realm.write { realm.object(ofType: Person.self, forPrimaryKey: 2)?.age = 5 }
    #expect(inbox.next() == .update(count: 2, deletions: [], insertions: [], modifications: [1]))
    #expect(onQueue.next() == true && onQueue.next() == true && onQueue.next() == true)
    cancellable.cancel()
  }

  @Test func anObjectPublisherSendsTheObjectAndFinishesWhenItIsDeleted() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "a", age: 1)
    try realm.write { realm.add(person) }
    let names = Inbox<String>()
    let cancellable = valuePublisher(person, keyPaths: ["name"])
      .sink(
        receiveCompletion: { completion in
          if case .finished = completion { names.put("finished") }
        },
        receiveValue: { names.put($0.name) })
    try realm.write { person.age = 2 }  // not a key path observed
    try realm.write { person.name = "b" }
    #expect(names.next() == "b")
    try realm.write { realm.delete(person) }
    #expect(names.next() == "finished")
    #expect(names.nextWithin(0.2) == nil)
    withExtendedLifetime(cancellable) {}
  }

  @Test func aFrozenValueFromFreezeIsReadableOnAnyThread() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "a", age: 1)
    try realm.write { realm.add(person) }
    let seen = Inbox<String>()
    let cancellable = valuePublisher(person)
      .freeze()
      .receive(on: DispatchQueue.global().ocombine)
      .map { "\($0.isFrozen) \($0.name) \($0.age)" }
      .sink(receiveCompletion: { _ in }, receiveValue: { seen.put($0) })
    try realm.write { person.name = "frozen" }
    #expect(seen.next() == "true frozen 1")
    let changes = Inbox<String>()
    let changeset = changesetPublisher(person)
      .freeze()
      .receive(on: DispatchQueue.global().ocombine)
      .sink { change in
        if case .change(let object, let properties) = change {
          changes.put("\(object.isFrozen) \(object.age) \(properties.map(\.name))")
        }
      }
    try realm.write { person.age = 9 }
    #expect(changes.next() == "true 9 [\"age\"]")
    withExtendedLifetime((cancellable, changeset)) {}
  }

  @Test func cancellingReleasesTheTokenAndTheVersionItPinned() throws {
    let realm = try noteRealm("cancel")
    let holder = TokenHolder()
    let inbox = Inbox<Int>()
    let queue = DispatchQueue(label: "pinned")
    let cancellable = realm.objects(Note.self).changesetPublisher
      .saveToken(on: holder, at: \.token)
      .subscribe(on: queue.ocombine)
      .sink { change in
        if case .update(let notes, _, _, _) = change { inbox.put(notes.count) }
      }
    queue.sync {}
    for i in 0..<5 {
      try realm.write { realm.add(Note(value: ["id": "n\(i)"])) }
      #expect(inbox.next() == i + 1)
    }
    let token = try #require(holder.token)
    #expect(!token.isInvalidated)
    cancellable.cancel()
    #expect(token.isInvalidated)
    queue.sync {}
    try realm.write { realm.add(Note(value: ["id": "after"])) }
    #expect(inbox.nextWithin(0.3) == nil)
    // This Realm's version, and at most the queue's cached Realm: none of the delivered ones.
    #expect(realm.core.store.activeVersionCount <= 2)
  }

  @Test func aSavedTokenCanBeSkippedByWriteWithoutNotifying() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let holder = TokenHolder()
    let counts = Inbox<Int>()
    let cancellable = realm.objects(Person.self).collectionPublisher
      .saveToken(on: holder, at: \.token)
      .map { $0.count }
      .sink(receiveCompletion: { _ in }, receiveValue: { counts.put($0) })
    #expect(counts.next() == 0)
    let token = try #require(holder.token)
    try realm.write(withoutNotifying: [token]) { realm.add(Person(id: 1, name: "a", age: 1)) }
    #expect(counts.nextWithin(0.2) == nil)
    try realm.write { realm.add(Person(id: 2, name: "b", age: 1)) }
    #expect(counts.next() == 2)
    withExtendedLifetime(cancellable) {}
  }

  @Test func threadSafeReferenceHandsValuesOverAfterOtherOperators() throws {
    let realm = try noteRealm("handover")
    let queue = DispatchQueue(label: "handover")
    let seen = Inbox<String>()
    let cancellable = realm.objects(Note.self).collectionPublisher
      .filter { !$0.isEmpty }
      .threadSafeReference()
      .receive(on: queue.ocombine)
      .map { notes in "\(notes.isFrozen) \(notes.count) \(notes.realm?.isFrozen == false)" }
      .sink(receiveCompletion: { _ in }, receiveValue: { seen.put($0) })
    try realm.write { realm.add(Note(value: ["id": "a"])) }
    #expect(seen.next() == "false 1 true")
    withExtendedLifetime(cancellable) {}
  }

  @Test func willChangePublishersFireAfterEachChange() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "a", age: 1)
    try realm.write { realm.add(person) }
    let events = Inbox<String>()
    let realmChanges = realm.objectWillChange.sink { events.put("realm") }
    let objectChanges = person.objectWillChange.sink { events.put("object") }
    let listChanges = person.dogs.objectWillChange.sink { events.put("list") }
    #expect(events.next() == "list")  // collections also send at once, as RealmSwift's
    try realm.write { person.dogs.append(Dog()) }
    let after = [events.next(), events.next(), events.next()].compactMap { $0 }
    #expect(Set(after) == ["realm", "object", "list"])
    withExtendedLifetime((realmChanges, objectChanges, listChanges)) {}
  }

  @Test func everyObservableTypeHasAPublisher() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "a", age: 1)
    let dog = Dog()
    try realm.write {
      realm.add(person)
      person.dogs.append(dog)
    }
    let seen = Inbox<String>()
    var cancellables: [AnyCancellable] = []
    func record<P: Publisher>(_ name: String, _ publisher: P) {
      cancellables.append(publisher.sink(receiveCompletion: { _ in }, receiveValue: { _ in seen.put(name) }))
    }
    record("list", person.dogs.collectionPublisher)
    record("set", person.luckyNumbers.changesetPublisher)
    record("map", person.attributes.changesetPublisher)
    record("linking", dog.walkers.collectionPublisher)
    record("any", AnyRealmCollection(person.dogs).changesetPublisher)
    record("sectioned", realm.objects(Person.self).sectioned(by: \.age).changesetPublisher)
    var initial = Set<String>()
    for _ in 0..<6 { if let name = seen.next() { initial.insert(name) } }
    #expect(initial == ["list", "set", "map", "linking", "any", "sectioned"])
    try realm.write {
      person.luckyNumbers.insert(7)
      person.attributes["k"] = 1
    }
    var updated = Set<String>()
    while let name = seen.nextWithin(0.3) { updated.insert(name) }
    #expect(updated.isSuperset(of: ["set", "map", "sectioned"]))
    withExtendedLifetime(cancellables) {}
  }

  @Test func projectionPublishersSendTheProjectionsOwnClass() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "a", age: 1)
    try realm.write { realm.add(person) }
    let projection = PersonProjection(projecting: person)
    let seen = Inbox<String>()
    let values = valuePublisher(projection)
      .sink(receiveCompletion: { _ in seen.put("finished") }, receiveValue: { seen.put("value \($0.displayName)") })
    let changes = changesetPublisher(projection, keyPaths: ["years"])
      .sink { change in
        if case .change(let projected, let properties) = change {
          seen.put("change \(projected.years) \(properties.map(\.name))")
        }
      }
    let willChange = projection.objectWillChange.sink { seen.put("will change") }
    try realm.write { person.age = 7 }
    var first = Set<String>()
    for _ in 0..<3 { if let item = seen.next() { first.insert(item) } }
    #expect(first == ["value a", "change 7 [\"years\"]", "will change"])
    try realm.write { person.name = "b" }
    var second = Set<String>()
    while let item = seen.nextWithin(0.2) { second.insert(item) }
    #expect(second == ["value b", "will change"])
    withExtendedLifetime((values, changes, willChange)) {}
  }

  @Test func asyncOpenPublishesTheRealmOnTheReceivingQueue() throws {
    let config = fileConfiguration()
    let queue = DispatchQueue(label: "opened")
    let key = DispatchSpecificKey<Bool>()
    queue.setSpecific(key: key, value: true)
    let seen = Inbox<String>()
    let cancellable = Realm.asyncOpen(configuration: config)
      .receive(on: queue.ocombine)
      .sink(
        receiveCompletion: { completion in
          if case .finished = completion { seen.put("finished") }
        },
        receiveValue: { realm in seen.put("realm \(realm.isEmpty) \(DispatchQueue.getSpecific(key: key) == true)") })
    #expect(seen.next() == "realm true true")
    #expect(seen.next() == "finished")
    withExtendedLifetime(cancellable) {}
  }

  @Test func subscribingOnAnotherKindOfSchedulerIsRefused() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: memoryConfiguration())
      _ = realm.objects(Person.self).collectionPublisher.subscribe(on: ImmediateScheduler.shared)
    }
    #expect(stderrText(result).contains("only serial dispatch queues are currently implemented"))
  }
}
