import Dispatch
import Foundation

/// Identifies an asynchronous write transaction (RealmSwift's `AsyncTransactionId`).
public typealias AsyncTransactionId = UInt32

extension RealmCore {
  /// Queued asynchronous writes by id.
  final class AsyncWrites {
    var nextID: AsyncTransactionId = 1
    var pending: [AsyncTransactionId: () -> Void] = [:]
    var running = 0
  }
}

extension Realm {
  /// Runs `block` in a write transaction later, where this Realm's notifications go (its queue,
  /// the main queue for main-thread Realms, at once on other threads), then commits and calls
  /// `onComplete` with the commit's error, if any.
  @discardableResult
  public func writeAsync(_ block: @escaping () -> Void, onComplete: ((Swift.Error?) -> Void)? = nil)
    -> AsyncTransactionId
  {
    beginAsyncWrite {
      block()
      if self.isInWriteTransaction { self.commitAsyncWrite(onComplete) } else { onComplete?(nil) }
    }
  }

  /// Begins a write transaction later and runs `asyncWriteBlock` in it; the block ends it with
  /// `commitAsyncWrite` or `cancelWrite`. A block that does neither is rolled back when it
  /// returns, as in RealmSwift.
  @discardableResult
  public func beginAsyncWrite(_ asyncWriteBlock: @escaping () -> Void) -> AsyncTransactionId {
    if core.isFrozen { fatalError("Can't perform transactions on a frozen Realm") }
    let writes = core.asyncWrites
    let id = writes.nextID
    writes.nextID &+= 1
    writes.pending[id] = { [core] in
      do { try core.beginWrite() } catch { fatalError("\(error)") }
      asyncWriteBlock()
      // A block that neither committed nor cancelled is rolled back, as in RealmSwift.
      if core.isInWriteTransaction { core.cancelWrite() }
    }
    core.schedule { [core] in
      guard let work = writes.pending.removeValue(forKey: id) else { return }
      writes.running += 1
      defer { writes.running -= 1 }
      _ = core
      work()
    }
    return id
  }

  /// Commits the current write transaction and calls `onComplete` with its error, if any.
  @discardableResult
  public func commitAsyncWrite(allowGrouping: Bool = false, _ onComplete: ((Swift.Error?) -> Void)? = nil)
    -> AsyncTransactionId
  {
    let id = core.asyncWrites.nextID
    core.asyncWrites.nextID &+= 1
    do {
      try core.commitWrite()
      onComplete?(nil)
    } catch {
      onComplete?(error)
    }
    return id
  }

  /// Cancels a queued asynchronous write that has not started yet (one already running or done
  /// is left alone).
  public func cancelAsyncWrite(_ asyncTransactionId: AsyncTransactionId) throws {
    if core.isFrozen { throw Realm.Error(.fail, "Can't perform transactions on a frozen Realm") }
    core.asyncWrites.pending[asyncTransactionId] = nil
  }

  /// Whether asynchronous writes are queued or running.
  public var isPerformingAsynchronousWriteOperations: Bool {
    !core.asyncWrites.pending.isEmpty || core.asyncWrites.running > 0
  }

  /// Runs `block` in a write transaction and commits it, from async code. It runs on its
  /// caller's executor (as RealmSwift's, isolated to its caller), so a Realm confined to the
  /// calling thread stays on it.
  ///
  /// While another thread or process holds the write lock, the task waits suspended: its actor
  /// goes on with other work. A task cancelled before the lock is taken, or while it waits,
  /// throws `CancellationError` and `block` does not run.
  ///
  /// ```swift
  /// let realm = try await Realm(configuration: config, actor: MainActor.shared)
  /// try await realm.asyncWrite { realm.add(Dog(value: ["name": "Rex"])) }
  /// ```
  @discardableResult
  nonisolated(nonsending) public func asyncWrite<Result>(_ block: () throws -> Result) async throws -> Result {
    // A queue-confined Realm has no actor to come back to, as in RealmSwift.
    if case .queue = core.deliveryMode {
      fatalError("asyncWrite() can only be called on main thread or actor-isolated Realms")
    }
    try await core.beginWriteAsync()
    let writes = core.asyncWrites
    writes.running += 1
    defer { writes.running -= 1 }
    return try finishWrite(block) { try commitWrite() }
  }
}
