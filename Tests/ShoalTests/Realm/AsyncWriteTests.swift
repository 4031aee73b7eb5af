import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Shoal

/// An actor of its own for a Realm, as RealmSwift's tests use a custom global actor.
actor WriterActor {
  var realm: Realm?
  func open(_ config: Realm.Configuration) async throws { realm = try await Realm(configuration: config, actor: self) }
  func write(_ name: String) async throws {
    try await realm?.asyncWrite { realm?.add(Counter(value: [name, 1])) }
  }
  func ping() -> Bool { true }
}

/// Holds the write lock on a thread of its own until told to let it go.
final class LockHolder: Sendable {
  private let release = DispatchSemaphore(value: 0)
  private let done = DispatchSemaphore(value: 0)

  init(_ config: Realm.Configuration) {
    let held = DispatchSemaphore(value: 0)
    Thread.detachNewThread { [release, done] in
      if let realm = try? Realm(configuration: config) {
        realm.beginWrite()
        held.signal()
        release.wait()
        realm.cancelWrite()
      } else {
        held.signal()
      }
      done.signal()
    }
    held.wait()
  }

  func letGo() {
    release.signal()
    done.wait()
  }
}

@Suite("asyncWrite: waits without blocking, and cancels")
struct AsyncWriteCancellationTests {
  @Test func aCancelledTaskThrowsWithoutRunningTheBlock() async throws {
    let config = fileConfiguration()
    let ran = Mutex(false)
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      let realm = try Realm(configuration: config)
      try await realm.asyncWrite { ran.withLock { $0 = true } }
    }
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(!ran.withLock { $0 })
  }

  @Test func cancellingAWaitingWriteEndsItAndLeavesTheLockFree() async throws {
    let config = fileConfiguration()
    let holder = LockHolder(config)
    let ran = Mutex(false)
    let started = DispatchSemaphore(value: 0)
    let task = Task {
      let realm = try Realm(configuration: config)
      started.signal()
      try await realm.asyncWrite { ran.withLock { $0 = true } }
    }
    started.wait()
    // Cancel once the write waits for the lock (bounded: the test fails rather than hang).
    let store = try Realm(configuration: config).core.store
    #expect(await waitUntil { store.asyncWritesWaiting == 1 })
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(!ran.withLock { $0 })
    holder.letGo()
    // The helper that waited let the lock go: writes go on.
    let realm = try Realm(configuration: config)
    try realm.write { realm.add(Counter(value: ["after", 1])) }
    #expect(realm.objects(Counter.self).count == 1)
  }

  @Test func aWaitingWriteLeavesItsActorFree() async throws {
    let config = fileConfiguration()
    let actor = WriterActor()
    try await actor.open(config)
    let holder = LockHolder(config)
    let write = Task { try await actor.write("queued") }
    let store = try Realm(configuration: config).core.store
    #expect(await waitUntil { store.asyncWritesWaiting == 1 })
    // The actor answers while its write waits for the lock.
    #expect(await actor.ping())
    holder.letGo()
    try await write.value
    let realm = try Realm(configuration: config)
    #expect(realm.object(ofType: Counter.self, forPrimaryKey: "queued") != nil)
  }

  /// A `beginAsyncWrite` block that neither commits nor cancels is rolled back; one that commits
  /// keeps its changes; a cancelled one never runs.
  @Test func asyncWriteBlocksThatDoNotCommitAreRolledBack() throws {
    let realm = try Realm(configuration: fileConfiguration())
    realm.beginAsyncWrite { realm.create(Counter.self, value: ["dropped", 1]) }
    #expect(!realm.isInWriteTransaction)
    realm.beginAsyncWrite {
      realm.create(Counter.self, value: ["kept", 2])
      realm.commitAsyncWrite()
    }
    #expect(realm.objects(Counter.self).map(\.name) == ["kept"])
  }

  @Test func asyncWriteIsAnAsynchronousWriteOperationWhileItRuns() async throws {
    let realm = try Realm(configuration: fileConfiguration())
    let during = try await realm.asyncWrite {
      realm.isInWriteTransaction && realm.isPerformingAsynchronousWriteOperations
    }
    #expect(during)
    #expect(!realm.isPerformingAsynchronousWriteOperations && !realm.isInWriteTransaction)
  }

  /// A Realm confined to a dispatch queue has no actor to come back to after a suspension, as
  /// RealmSwift's.
  @Test func queueConfinedRealmsRefuseAsyncRefreshAndAsyncWrite() async {
    let refresh = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let queue = DispatchQueue(label: "confined")
      let config = fileConfiguration()
      let realm = try queue.sync { try Realm(configuration: config, queue: queue) }
      _ = await realm.asyncRefresh()
    }
    #expect(stderrText(refresh).contains("asyncRefresh() can only be called on main thread or actor-isolated Realms"))
    let write = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let queue = DispatchQueue(label: "confined")
      let config = fileConfiguration()
      let realm = try queue.sync { try Realm(configuration: config, queue: queue) }
      try await realm.asyncWrite {}
    }
    #expect(stderrText(write).contains("asyncWrite() can only be called on main thread or actor-isolated Realms"))
  }
}

/// Whether `condition` holds within `seconds`, checked between yields of the task.
func waitUntil(seconds: Double = 30, _ condition: () -> Bool) async -> Bool {
  let deadline = Date(timeIntervalSinceNow: seconds)
  while !condition() {
    if Date() > deadline { return false }
    await Task.yield()
  }
  return true
}
