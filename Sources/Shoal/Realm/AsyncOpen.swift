import Dispatch
import Synchronization

extension Realm {
  /// An asynchronous open in progress (RealmSwift's `Realm.AsyncOpenTask`): cancelling it
  /// means the callback is never called.
  public struct AsyncOpenTask: Sendable {
    private let cancelled = Cancellation()

    /// Whether `cancel()` was called.
    private final class Cancellation: Sendable {
      let flag = Atomic(false)
    }

    /// Cancels the open: the callback will not be called (the file may still be opened and
    /// migrated in the background, as with RealmSwift's local Realms).
    public func cancel() {
      cancelled.flag.store(true, ordering: .releasing)
    }

    var isCancelled: Bool { cancelled.flag.load(ordering: .acquiring) }
  }

  /// Opens a Realm on a background thread (creating the file, running a migration or
  /// compaction there), then calls `callback` on `callbackQueue` with a Realm confined to that
  /// queue, as `Realm(configuration:queue:)` gives it, or with the error that prevented the
  /// open.
  ///
  /// ```swift
  /// let queue = DispatchQueue(label: "database")
  /// Realm.asyncOpen(configuration: config, callbackQueue: queue) { result in
  ///   switch result {
  ///   case .success(let realm): print(realm.objects(Dog.self).count)
  ///   case .failure(let error): print("could not open: \(error)")
  ///   }
  /// }
  /// ```
  @discardableResult
  public static func asyncOpen(
    configuration: Realm.Configuration = .defaultConfiguration, callbackQueue: DispatchQueue = .main,
    callback: @escaping (Result<Realm, Swift.Error>) -> Void
  ) -> AsyncOpenTask {
    let task = AsyncOpenTask()
    let handover = Handover(callback)
    DispatchQueue.global().async {
      // The slow part (creating, migrating, compacting) happens here, off the callback queue;
      // the Realm is released at once, so this thread pins nothing.
      let failure: Swift.Error? = {
        do {
          _ = try Realm(configuration: configuration, queue: nil)
          return nil
        } catch {
          return error
        }
      }()
      callbackQueue.async {
        guard !task.isCancelled, let callback = handover.take() else { return }
        if let failure { return callback(.failure(failure)) }
        callback(Result { try Realm(configuration: configuration, queue: callbackQueue) })
      }
    }
    return task
  }
}
