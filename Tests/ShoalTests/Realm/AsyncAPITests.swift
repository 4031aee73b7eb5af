import Dispatch
import Foundation
import Shoal
import Synchronization
import Testing

// Conformance with RealmSwift's documented behaviour of the asynchronous APIs (actor-isolated Realms, asynchronous writes, thread-safe references and the async sequences), checked against
// realm-swift's and realm-core's sources. RealmSwift's exceptions (Shoal: fatal errors) are exit
// tests whose standard error must hold RealmSwift's message.

// MARK: - Asynchronous APIs

private struct IntentionalError: Error {}

/// An actor with a Realm isolated to it.
private actor IsolatedRealmActor {
  private var realm: Realm?

  func open(_ configuration: Realm.Configuration) async throws {
    realm = try await Realm(configuration: configuration, actor: self)
  }

  /// `asyncWrite` returns the block's value.
  func addItems(_ names: [String]) async throws -> Int {
    guard let realm else { return -1 }
    return try await realm.asyncWrite {
      for name in names { realm.create(Item.self, value: ["name": name, "rank": 1]) }
      return realm.objects(Item.self).count
    }
  }

  /// A throwing `asyncWrite` block cancels the transaction: (caught, count, in a write).
  func failingWrite() async -> (caught: Bool, count: Int, inWrite: Bool) {
    guard let realm else { return (false, -1, false) }
    var caught = false
    do {
      try await realm.asyncWrite {
        realm.create(Item.self, value: ["name": "rolled back", "rank": 1])
        throw IntentionalError()
      }
    } catch is IntentionalError {
      caught = true
    } catch {
      caught = false
    }
    return (caught, realm.objects(Item.self).count, realm.isInWriteTransaction)
  }

  /// `writeAsync` queues the write: (id, pending right after the call, completion error, count,
  /// pending after completion).
  func writeAsyncAndWait() async -> (
    id: AsyncTransactionId, pendingBefore: Bool, error: String?, count: Int, pendingAfter: Bool
  ) {
    guard let realm else { return (0, false, "no realm", -1, false) }
    var id: AsyncTransactionId = 0
    var pendingBefore = false
    let error: String? = await withCheckedContinuation { continuation in
      id = realm.writeAsync(
        { realm.create(Item.self, value: ["name": "queued", "rank": 1]) },
        onComplete: { error in continuation.resume(returning: error.map { "\($0)" }) })
      pendingBefore = realm.isPerformingAsynchronousWriteOperations
    }
    return (
      id, pendingBefore, error, realm.objects(Item.self).count, realm.isPerformingAsynchronousWriteOperations
    )
  }

  /// `beginAsyncWrite` + `commitAsyncWrite`: (in a write inside the block, commit succeeded,
  /// count).
  func beginAndCommit() async -> (inWrite: Bool, committed: Bool, count: Int) {
    guard let realm else { return (false, false, -1) }
    let outcome: (Bool, Bool) = await withCheckedContinuation { continuation in
      realm.beginAsyncWrite {
        let inWrite = realm.isInWriteTransaction
        realm.create(Item.self, value: ["name": "begun", "rank": 1])
        realm.commitAsyncWrite { error in continuation.resume(returning: (inWrite, error == nil)) }
      }
    }
    return (outcome.0, outcome.1, realm.objects(Item.self).count)
  }

  /// `cancelAsyncWrite` of a queued write: (its block ran, count after a later write).
  func cancelQueuedWrite() async throws -> (ran: Bool, count: Int) {
    guard let realm else { return (true, -1) }
    let ran = RecordedLines()
    let id = realm.beginAsyncWrite {
      ran.append("ran")
      realm.create(Item.self, value: ["name": "cancelled", "rank": 1])
      realm.commitAsyncWrite()
    }
    try realm.cancelAsyncWrite(id)
    // A later write completes only after the cancelled one would have run.
    await withCheckedContinuation { continuation in
      realm.writeAsync(
        { realm.create(Item.self, value: ["name": "later", "rank": 1]) },
        onComplete: { _ in continuation.resume() })
    }
    return (ran.count > 0, realm.objects(Item.self).count)
  }
}

@Suite("Asynchronous API")
struct AsyncAPITests {
  @Test func anActorIsolatedRealmWritesWithAsyncWrite() async throws {
    let configuration = sharedFixtureConfiguration()
    let actor = IsolatedRealmActor()
    try await actor.open(configuration)
    #expect(try await actor.addItems(["a", "b"]) == 2)
    let realm = try Realm(configuration: configuration)
    #expect(realm.objects(Item.self).map(\.name).sorted() == ["a", "b"])
  }

  @MainActor
  @Test func aMainActorRealmWritesWithAsyncWrite() async throws {
    let realm = try await Realm(configuration: sharedFixtureConfiguration(), actor: MainActor.shared)
    // `@Sendable`: Shoal's `asyncWrite` is not isolated to its caller (RealmSwift's takes
    // `_isolation: isolated (any Actor)? = #isolation`), so a plain closure formed on the main
    // actor cannot be passed to it in Swift 6.
    let count = try await realm.asyncWrite { @Sendable in
      realm.create(Item.self, value: ["name": "main", "rank": 1])
      return realm.objects(Item.self).count
    }
    #expect(count == 1)
    #expect(!realm.isInWriteTransaction)
  }

  /// "If the block throws an error, the transaction will be canceled and any changes made
  /// before the error will be rolled back."
  @Test func asyncWriteRollsBackWhenItsBlockThrows() async throws {
    let actor = IsolatedRealmActor()
    try await actor.open(sharedFixtureConfiguration())
    let outcome = await actor.failingWrite()
    #expect(outcome.caught)
    #expect(outcome.count == 0)
    #expect(!outcome.inWrite)
  }

  /// `asyncWrite` on a Realm confined to a thread: "asyncWrite() can only be called on main
  /// thread or actor-isolated Realms".
  @Test(
    .disabled(
      "Shoal allows asyncWrite on a Realm confined to a plain thread (README); one confined to a dispatch queue refuses it as RealmSwift does (AsyncWriteCancellationTests)"
    )) func asyncWriteNeedsAnActorIsolatedRealm() async
  {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
          guard let realm = try? Realm(configuration: sharedFixtureConfiguration()) else {
            return continuation.resume()
          }
          Task {
            _ = try? await realm.asyncWrite { realm.create(Item.self, value: ["name": "x", "rank": 1]) }
            continuation.resume()
          }
        }
      }
    }
    #expect(stderrText(result).contains("asyncWrite() can only be called on main thread or actor-isolated Realms"))
  }

  /// `writeAsync` needs a Realm that can be called back (a run loop, a queue or an actor);
  /// realm-core: "Cannot schedule async transaction. Make sure you are running from inside a
  /// run loop."
  @Test(
    .disabled(
      "Linux has no run loops: writeAsync runs on the Realm's queue, actor or thread instead of failing (README)"))
  func writeAsyncOnAThreadWithoutARunLoopFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
          if let realm = try? Realm(configuration: sharedFixtureConfiguration()) {
            realm.writeAsync { realm.create(Item.self, value: ["name": "x", "rank": 1]) }
          }
          continuation.resume()
        }
      }
    }
    #expect(
      stderrText(result).contains(
        "Cannot schedule async transaction. Make sure you are running from inside a run loop."))
  }

  /// `writeAsync` returns an id at once, the write is pending until it runs on the actor, and
  /// `onComplete` hears of the commit.
  @Test func writeAsyncQueuesTheWriteAndCompletes() async throws {
    let actor = IsolatedRealmActor()
    try await actor.open(sharedFixtureConfiguration())
    let outcome = await actor.writeAsyncAndWait()
    #expect(outcome.id != 0)
    #expect(outcome.pendingBefore)
    #expect(outcome.error == nil)
    #expect(outcome.count == 1)
    #expect(!outcome.pendingAfter)
  }

  @Test func beginAsyncWriteRunsInAWriteTransactionAndCommits() async throws {
    let actor = IsolatedRealmActor()
    try await actor.open(sharedFixtureConfiguration())
    let outcome = await actor.beginAndCommit()
    #expect(outcome.inWrite)
    #expect(outcome.committed)
    #expect(outcome.count == 1)
  }

  @Test func cancelAsyncWriteSkipsAQueuedWrite() async throws {
    let actor = IsolatedRealmActor()
    try await actor.open(sharedFixtureConfiguration())
    let outcome = try await actor.cancelQueuedWrite()
    #expect(!outcome.ran)
    #expect(outcome.count == 1)
  }

  /// Shoal's stand-in for `changesetPublisher`: `.initial`, then one `.update` per commit, with
  /// frozen results.
  @Test func resultsChangesArriveAsAnAsyncSequence() async throws {
    let configuration = sharedFixtureConfiguration()
    let realm = try Realm(configuration: configuration)
    let stream = realm.objects(Item.self).sorted(byKeyPath: "name").changes()
    let seen = RecordedLines()
    let consumer = Task {
      for await change in stream {
        switch change {
        case .initial(let results): seen.append("initial \(results.count) frozen \(results.isFrozen)")
        case .update(let results, let deletions, let insertions, let modifications):
          seen.append(
            "update \(results.map(\.name)) -\(deletions) +\(insertions) ~\(modifications) frozen \(results.isFrozen)")
        case .error(let error): seen.append("error \(error)")
        }
      }
    }
    #expect(await seen.arrival(ofAtLeast: 1))
    try resultOnOtherThread {
      let other = try Realm(configuration: configuration)
      try other.write {
        other.create(Item.self, value: ["name": "b", "rank": 1])
        other.create(Item.self, value: ["name": "a", "rank": 2])
      }
    }
    #expect(await seen.arrival(ofAtLeast: 2))
    consumer.cancel()
    #expect(seen.all == ["initial 0 frozen true", "update [\"a\", \"b\"] -[] +[0, 1] ~[] frozen true"])
  }

  /// Shoal's stand-in for `objectChangeset`: each change with its properties, then `.deleted`,
  /// after which the sequence ends.
  @Test func objectChangesArriveAsAnAsyncSequenceThatEndsOnDeletion() async throws {
    let configuration = sharedFixtureConfiguration()
    let realm = try contactsRealm(configuration)
    let ada = try #require(realm.object(ofType: Contact.self, forPrimaryKey: 1))
    let stream = ada.changes(keyPaths: ["firstName"])
    let seen = RecordedLines()
    let consumer = Task {
      for await change in stream { seen.append(plainText(change)) }
      seen.append("end")
    }
    try resultOnOtherThread {
      let other = try Realm(configuration: configuration)
      try other.write { other.object(ofType: Contact.self, forPrimaryKey: 1)?.age = 40 }
      try other.write { other.object(ofType: Contact.self, forPrimaryKey: 1)?.firstName = "Augusta" }
    }
    #expect(await seen.arrival(ofAtLeast: 1))
    try resultOnOtherThread {
      let other = try Realm(configuration: configuration)
      try other.write { other.delete(other.objects(Contact.self).filter("id == 1")) }
    }
    #expect(await seen.arrival(ofAtLeast: 3))
    consumer.cancel()
    #expect(seen.all == ["firstName=Augusta", "deleted", "end"])
  }

  /// A `ThreadSafeReference` to `Results` resolves, once, to the same query in another thread's
  /// Realm, live there.
  @Test func threadSafeReferenceCarriesResultsToAnotherThread() throws {
    let configuration = sharedFixtureConfiguration()
    let realm = try itemsRealm(configuration)
    let results = realm.objects(Item.self).filter("rank > 1").sorted(byKeyPath: "name")
    let reference = ThreadSafeReference(to: results)
    #expect(!reference.isInvalidated)
    let names = try resultOnOtherThread { () -> [[String]] in
      let other = try Realm(configuration: configuration)
      guard let resolved = other.resolve(reference) else { return [] }
      let before = resolved.map(\.name)
      try other.write { other.create(Item.self, value: ["name": "avocado", "rank": 7]) }
      return [before, resolved.map(\.name)]
    }
    #expect(names == [["banana", "box", "chalk"], ["avocado", "banana", "box", "chalk"]])
    #expect(reference.isInvalidated)
  }
}
