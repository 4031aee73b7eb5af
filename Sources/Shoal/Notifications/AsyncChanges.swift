import Dispatch
import Synchronization

// Asynchronous sequences of changes: `changes(keyPaths:)` on every observable type. Each
// element carries frozen values (readable on any thread or task); iterate with `for await`,
// and stop by leaving the loop or cancelling the task (the observation ends with the stream).
//
// Memory stays bounded however slow the consumer is. The observation runs on a queue of the
// stream's own; when a change is waiting for the consumer, that queue is suspended, so its
// Realm stays at the waiting change's version and later commits pile up nowhere. When the
// consumer takes the change, the queue resumes, refreshes once to the newest version, and the
// observer reports everything since in one change set (the callbacks' coalescing). So a stream
// pins at most the version of the change it is waiting to hand over, besides the one the
// consumer holds.

/// An asynchronous sequence of change notifications, each carrying frozen values: what
/// `changes(keyPaths:)` returns on `Results`, `List`, `MutableSet`, `LinkingObjects`,
/// `AnyRealmCollection`, `Map`, `SectionedResults`, `ResultsSection`, objects, projections
/// and `Realm`.
///
/// ```swift
/// for await change in realm.objects(Dog.self).changes() {
///   switch change {
///   case .initial(let dogs): print("\(dogs.count) dogs")
///   case .update(let dogs, let deletions, let insertions, _):
///     print("\(dogs.count) dogs: -\(deletions.count) +\(insertions.count)")
///   case .error(let error): print(error)
///   }
/// }
/// ```
///
/// A consumer that falls behind gets one change covering every commit it missed, never a
/// backlog: the stream holds at most one undelivered change (and its pinned version). Leaving
/// the loop, dropping the iterator or cancelling the consuming task ends the observation and
/// releases its version.
public struct RealmChanges<Element>: AsyncSequence, Sendable {
  let owner: ChangeStreamOwner<Element>

  /// Makes the iterator; iterate a stream once.
  public func makeAsyncIterator() -> Iterator { Iterator(owner: owner) }

  /// Waits for the next change.
  public struct Iterator: AsyncIteratorProtocol {
    let owner: ChangeStreamOwner<Element>

    /// The next change, or nil once the stream has ended (an object deleted, the task cancelled).
    public mutating func next() async -> Element? { await owner.channel.next() }
  }
}

/// Ends the observation when the last stream or iterator holding it goes away.
final class ChangeStreamOwner<Element>: Sendable {
  let channel = ChangeChannel<Element>()
  deinit { channel.finish() }
}

/// A change on its way from the observation queue to the consumer.
struct FrozenChange<Element>: @unchecked Sendable {  // safe: carries only frozen values, readable from any thread
  let value: Element
}

/// The hand-over between the observation queue and the consumer (see the file comment).
final class ChangeChannel<Element>: Sendable {
  private struct State {
    /// Changes offered and not yet taken; one in practice (the queue is suspended after it).
    var pending: [FrozenChange<Element>] = []
    var waiter: CheckedContinuation<FrozenChange<Element>?, Never>?
    var finished = false
    var suspended = false
    var token: NotificationToken?
  }

  private let state = Mutex(State())
  /// The queue the observation delivers on.
  let queue = DispatchQueue(label: "io.shoal.changes")

  /// How many changes wait for the consumer (for tests: at most one once the queue is suspended).
  var pendingCount: Int { state.withLock { $0.pending.count } }

  /// Keeps `token` to invalidate when the stream ends (at once if it has ended).
  func attach(_ token: NotificationToken) {
    let ended = state.withLock { state in
      state.token = token
      return state.finished
    }
    if ended { token.invalidate() }
  }

  /// Called on `queue` with each change: hands it to a waiting consumer, or keeps it and
  /// suspends the queue until the consumer takes it. After the `last` change (an object's
  /// deletion) the observation stops and the stream ends once the consumer has it.
  func offer(_ change: Element, last: Bool = false) {
    let frozen = FrozenChange(value: change)
    let (waiter, token) = state.withLock {
      state -> (CheckedContinuation<FrozenChange<Element>?, Never>?, NotificationToken?) in
      if state.finished { return (nil, nil) }
      var token: NotificationToken?
      if last {
        state.finished = true
        token = state.token
        state.token = nil
      }
      if let waiter = state.waiter {
        state.waiter = nil
        return (waiter, token)
      }
      state.pending.append(frozen)
      if !last, !state.suspended {
        // Takes effect when the current block on `queue` returns.
        state.suspended = true
        queue.suspend()
      }
      return (nil, token)
    }
    token?.invalidate()
    waiter?.resume(returning: frozen)
  }

  /// The next change, waiting for one; nil once ended. Cancelling the task ends the stream.
  func next() async -> Element? {
    let change = await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<FrozenChange<Element>?, Never>) in
        let (ready, resume) = state.withLock { state -> (FrozenChange<Element>??, Bool) in
          if !state.pending.isEmpty {
            let change = state.pending.removeFirst()
            let resume = state.pending.isEmpty && state.suspended
            if resume { state.suspended = false }
            return (.some(change), resume)
          }
          if state.finished { return (.some(nil), false) }
          state.waiter = continuation
          return (nil, false)
        }
        if resume { queue.resume() }
        if let ready { continuation.resume(returning: ready) }
      }
    } onCancel: {
      finish()
    }
    return change?.value
  }

  /// Ends the stream: the consumer gets nil, the observation stops and its versions go.
  func finish() {
    let (waiter, token, resume) = state.withLock { state in
      state.finished = true
      state.pending.removeAll()
      let resume = state.suspended
      state.suspended = false
      defer {
        state.waiter = nil
        state.token = nil
      }
      return (state.waiter, state.token, resume)
    }
    waiter?.resume(returning: nil)
    token?.invalidate()
    if resume { queue.resume() }
  }

  /// A stream fed by the observation `observe` registers on the channel's queue; `observe` gets
  /// the queue and the function to call with each (already frozen) change.
  static func stream(
    _ observe: (DispatchQueue, @escaping (Element, _ last: Bool) -> Void) -> NotificationToken
  ) -> RealmChanges<Element> {
    let owner = ChangeStreamOwner<Element>()
    let channel = owner.channel
    let token = observe(channel.queue) { [weak channel] change, last in channel?.offer(change, last: last) }
    channel.attach(token)
    return RealmChanges(owner: owner)
  }
}

extension RealmCollectionChange where CollectionType: ThreadConfined {
  /// The same change with a frozen collection.
  func frozen() -> RealmCollectionChange {
    switch self {
    case .initial(let collection): return .initial(collection.freeze())
    case .update(let collection, let deletions, let insertions, let modifications):
      return .update(collection.freeze(), deletions: deletions, insertions: insertions, modifications: modifications)
    case .error(let error): return .error(error)
    }
  }
}

extension RealmCollection {
  /// The collection's changes as an asynchronous sequence: `.initial`, then one `.update` per
  /// commit (or run of commits the consumer was too slow for) that changes it, each with a
  /// frozen collection.
  ///
  /// ```swift
  /// for await change in person.dogs.changes(keyPaths: ["name"]) {
  ///   if case .update(let dogs, _, _, let modifications) = change { print(modifications, dogs.count) }
  /// }
  /// ```
  public func changes(keyPaths: [String]? = nil) -> RealmChanges<RealmCollectionChange<Self>> {
    ChangeChannel.stream { queue, offer in
      observe(keyPaths: keyPaths, on: queue) { offer($0.frozen(), false) }
    }
  }
}

extension _ObservableObject {
  /// The object's changes as an asynchronous sequence, with frozen objects; the sequence ends
  /// after `.deleted`.
  ///
  /// ```swift
  /// for await change in dog.changes(keyPaths: ["name"]) {
  ///   if case .change(let dog, _) = change { print(dog.name) }
  /// }
  /// ```
  public func changes(keyPaths: [String]? = nil) -> RealmChanges<ObjectChange<Self>> {
    ChangeChannel.stream { queue, offer in
      observe(keyPaths: keyPaths, on: queue) { change in
        switch change {
        case .change(let object, let properties): offer(.change(object.freeze(), properties.map { $0.frozen() }), false)
        case .deleted: offer(change, true)
        case .error: offer(change, false)
        }
      }
    }
  }
}

extension ObjectChange where T: ThreadConfined {
  /// The same change with a frozen object or projection and frozen old and new values.
  func frozen() -> ObjectChange {
    if case .change(let object, let properties) = self {
      return .change(object.freeze(), properties.map { $0.frozen() })
    }
    return self
  }
}

extension ProjectionObservable where Self: ThreadConfined {
  /// The projection's changes as an asynchronous sequence, with frozen projections; the
  /// sequence ends after `.deleted`.
  public func changes(keyPaths: [String]? = nil) -> RealmChanges<ObjectChange<Self>> {
    ChangeChannel.stream { queue, offer in
      observe(keyPaths: keyPaths, on: queue) { change in
        if case .deleted = change { offer(change, true) } else { offer(change.frozen(), false) }
      }
    }
  }
}

extension Map {
  /// The map's changes as an asynchronous sequence, with frozen maps.
  ///
  /// ```swift
  /// for await change in person.scores.changes() {
  ///   if case .update(let scores, _, let insertions, _) = change { print(insertions, scores.count) }
  /// }
  /// ```
  public func changes(keyPaths: [String]? = nil) -> RealmChanges<RealmMapChange<Map<Key, Value>>> {
    ChangeChannel.stream { queue, offer in
      observe(keyPaths: keyPaths, on: queue) { change in
        switch change {
        case .initial(let map): offer(.initial(map.freeze()), false)
        case .update(let map, let deletions, let insertions, let modifications):
          offer(
            .update(map.freeze(), deletions: deletions, insertions: insertions, modifications: modifications), false)
        case .error(let error): offer(.error(error), false)
        }
      }
    }
  }
}

extension RealmSectionedResult {
  /// The sectioned results' (or section's) changes as an asynchronous sequence, with frozen
  /// values.
  ///
  /// ```swift
  /// for await change in dogs.sectioned(by: \.age).changes() {
  ///   if case .update(let sections, _, let insertions, _, _, _) = change { print(insertions, sections.count) }
  /// }
  /// ```
  public func changes(keyPaths: [String]? = nil) -> RealmChanges<SectionedResultsChange<Self>> {
    ChangeChannel.stream { queue, offer in
      observe(keyPaths: keyPaths, on: queue) { change in
        switch change {
        case .initial(let sections): offer(.initial(sections.freeze()), false)
        case .update(let sections, let deletions, let insertions, let modifications, let inserted, let deleted):
          offer(
            .update(
              sections.freeze(), deletions: deletions, insertions: insertions, modifications: modifications,
              sectionsToInsert: inserted, sectionsToDelete: deleted), false)
        }
      }
    }
  }
}

extension Realm {
  /// The Realm's commits as an asynchronous sequence: each element is what `observe(_:)`
  /// reports, with a frozen Realm at the new version.
  ///
  /// ```swift
  /// for await (notification, snapshot) in realm.changes() {
  ///   print(notification, snapshot.objects(Dog.self).count)
  /// }
  /// ```
  public func changes() -> RealmChanges<(notification: Realm.Notification, realm: Realm)> {
    let configuration = self.configuration
    return ChangeChannel.stream { queue, offer in
      let token = NotificationToken()
      RealmCore.startOnQueue(
        queue, configuration: configuration, snapshot: core.read,
        setUp: { core in
          core.addObserver(
            RealmNotificationObserver(token: token) { notification, realm in
              offer((notification, realm.freeze()), false)
            })
        }, onError: { _ in })
      return token
    }
  }
}
