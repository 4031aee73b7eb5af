import Foundation
import ShoalStorage
import Synchronization
import Testing

@testable import Shoal

/// `changes(keyPaths:)` streams: on every observable type, bounded however slow the consumer,
/// and ended (with their pins released) by cancelling the consuming task.
@Suite("Async change streams", .serialized)
struct AsyncChangeStreamTests {
  /// Distinct versions in use in the file (the newest plus every pinned older one), read from
  /// a Realm on another thread.
  private func activeVersions(_ config: Realm.Configuration) -> Int {
    let count = Mutex(0)
    _ = Thread.detachAndWait {
      let realm = try Realm(configuration: config)
      count.withLock { $0 = realm.core.store.activeVersionCount }
    }
    return count.withLock { $0 }
  }

  /// The store of `config`'s file (the Realm that opened it is gone: nothing is pinned for it).
  private func store(_ config: Realm.Configuration) throws -> Store {
    try Realm(configuration: config).core.store
  }

  /// Waits until this process's listener thread has told every listener added so far of the
  /// commits up to `store`'s newest version. Listeners hear each commit in the order they were
  /// added, so once one added now hears it, so has every observation registered before.
  private func listenersHaveHeardTheNewestVersion(
    _ store: Store, _ token: ChangeListenerToken, _ heard: AsyncStream<UInt64>
  ) async {
    let newest = store.latestVersion
    for await version in heard where version >= newest { break }
    withExtendedLifetime(token) {}
  }

  private func commit(_ config: Realm.Configuration, times: Int) -> Bool {
    Thread.detachAndWait {
      let realm = try Realm(configuration: config)
      for i in 0..<times { try realm.write { realm.add(Counter(value: ["c\(i)", i])) } }
    }
  }

  @Test func aSlowConsumerGetsOneCoalescedChangeAndPinsAtMostTwoVersions() async throws {
    let config = fileConfiguration()
    let stream = try { () throws -> RealmChanges<RealmCollectionChange<Results<Counter>>> in
      let realm = try Realm(configuration: config)
      return realm.objects(Counter.self).sorted(byKeyPath: "value").changes()
    }()
    var iterator = stream.makeAsyncIterator()
    guard case .initial(let initial)? = await iterator.next() else {
      Issue.record("no initial change")
      return
    }
    #expect(initial.isEmpty)
    // The consumer does not ask for more (holding `initial`) while 1,000 commits land: the
    // stream only notes that commits arrived, and its Realm stays where `initial` is.
    let store = try store(config)
    let (heard, listener) = AsyncStream<UInt64>.makeStream()
    let token = store.addChangeListener { _, to in listener.yield(to) }
    #expect(commit(config, times: 1000))
    await listenersHaveHeardTheNewestVersion(store, token, heard)
    #expect(stream.owner.channel.commitWaiting)
    #expect(stream.owner.channel.pendingCount == 0)
    // Besides the newest version, only the one `initial` (and the stream's Realm) is at.
    #expect(activeVersions(config) <= 2)
    var inserted = 0
    var updates = 0
    while inserted < 1000, case .update(let counters, let deletions, let insertions, _)? = await iterator.next() {
      #expect(counters.isFrozen && deletions.isEmpty)
      inserted += insertions.count
      updates += 1
    }
    #expect(inserted == 1000)
    #expect(updates <= 2)
    withExtendedLifetime(initial) {}
  }

  @Test func cancellingTheConsumingTaskEndsTheStreamAndReleasesItsVersion() async throws {
    let config = fileConfiguration()
    let stream = try { () throws -> RealmChanges<RealmCollectionChange<Results<Counter>>> in
      let realm = try Realm(configuration: config)
      return realm.objects(Counter.self).changes()
    }()
    let (started, signal) = AsyncStream<Void>.makeStream()
    let consumer = Task {
      var seen = 0
      for await _ in stream {
        seen += 1
        signal.yield()
      }
      return seen
    }
    for await _ in started { break }  // the consumer has its first change
    consumer.cancel()
    #expect(await consumer.value >= 1)
    // The observation has stopped (its Realm is let go on the stream's queue, so once that
    // queue is idle, it is gone): after later commits, only the newest version is in use.
    stream.owner.channel.queue.sync {}
    #expect(commit(config, times: 3))
    #expect(activeVersions(config) == 1)
  }

  @Test func everyObservableTypeHasAChangeStream() async throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    let person = Person(id: 1, name: "a", age: 1)
    let dog = Dog()
    try realm.write {
      realm.add(person)
      person.dogs.append(dog)
      person.luckyNumbers.insert(3)
    }
    func initialCount<S: AsyncSequence>(_ stream: S, _ count: (S.Element) -> Int?) async -> Int? {
      var iterator = stream.makeAsyncIterator()
      guard let first = try? await iterator.next() else { return nil }
      return count(first)
    }
    func collectionCount<C>(_ change: RealmCollectionChange<C>) -> Int? where C: Collection {
      if case .initial(let collection) = change { return collection.count }
      return nil
    }
    func sectionCount<C>(_ change: SectionedResultsChange<C>) -> Int? where C: Collection {
      if case .initial(let collection) = change { return collection.count }
      return nil
    }
    #expect(await initialCount(person.dogs.changes(), collectionCount) == 1)
    #expect(await initialCount(person.luckyNumbers.changes(), collectionCount) == 1)
    #expect(await initialCount(dog.walkers.changes(), collectionCount) == 1)
    #expect(await initialCount(AnyRealmCollection(person.dogs).changes(), collectionCount) == 1)
    let sectioned = realm.objects(Person.self).sectioned(by: \.age)
    #expect(await initialCount(sectioned.changes(), sectionCount) == 1)
    #expect(await initialCount(sectioned[0].changes(), sectionCount) == 1)
  }

  @Test func projectionsAndRealmsStreamTheirChanges() async throws {
    let config = fileConfiguration()
    let (projected, commits) = try {
      () throws -> (
        RealmChanges<ObjectChange<PersonProjection>>, RealmChanges<(notification: Realm.Notification, realm: Realm)>
      ) in
      let realm = try Realm(configuration: config)
      let person = Person(id: 1, name: "a", age: 1)
      try realm.write { realm.add(person) }
      return (PersonProjection(projecting: person).changes(), realm.changes())
    }()
    #expect(
      Thread.detachAndWait {
        let realm = try Realm(configuration: config)
        try realm.write { realm.object(ofType: Person.self, forPrimaryKey: 1)?.name = "b" }
      })
    var projections = projected.makeAsyncIterator()
    if case .change(let projection, let properties)? = await projections.next() {
      #expect(projection.isFrozen)
      #expect(properties.map(\.name) == ["displayName"])
    } else {
      Issue.record("no projection change")
    }
    var realms = commits.makeAsyncIterator()
    let commit = await realms.next()
    #expect(commit?.notification == .didChange)
    #expect(commit?.realm.isFrozen == true)
    #expect(commit?.realm.object(ofType: Person.self, forPrimaryKey: 1)?.name == "b")
  }
}
