import Dispatch
import Synchronization

// Asynchronous sequences of changes: `changes(keyPaths:)` on every observable type. Each
// element carries frozen values (readable on any thread or task); iterate with `for await`,
// and stop by leaving the loop or cancelling the task (the observation ends with the stream).
//
// The observation runs in the consuming task, not on a thread of its own. Each stream has a
// private queue its Realm is confined to; that queue carries a `CommitGate`, so a commit does
// not refresh the Realm there but only tells the stream that one arrived (waking a waiting
// consumer). The consumer then refreshes the Realm through the queue, on its own thread
// (`DispatchQueue.sync` runs an idle queue's work on the caller), and the observer's change
// set for every commit since the last one it took comes back. So a change reaches the
// consumer with one thread wake, as a callback does, and memory stays bounded however slow
// the consumer is: commits that land while it is busy only mark the stream, its Realm stays
// at the version of the change the consumer holds, and the next refresh coalesces them all
// (the callbacks' coalescing). A stream pins at most that one version.

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
/// backlog: each change is computed when the consumer asks for it, in the consuming task, so
/// commits landing in between only mark the stream, and it pins at most the version of the
/// change last handed over. Leaving
/// the loop, dropping the iterator or cancelling the consuming task ends the observation and
/// releases its version.
public struct RealmChanges<Element>: AsyncSequence, Sendable {
  let owner: ChangeStreamOwner

  /// Makes the iterator; iterate a stream once.
  public func makeAsyncIterator() -> Iterator { Iterator(owner: owner) }

  /// Waits for the next change.
  public struct Iterator: AsyncIteratorProtocol {
    let owner: ChangeStreamOwner

    /// The next change, or nil once the stream has ended (an object deleted, the task cancelled).
    public mutating func next() async -> Element? {
      guard let change = await owner.channel.next() else { return nil }
      // Every change offered to the channel of a `RealmChanges<Element>` is a
      // `FrozenChange<Element>` (see `ChangeChannel.stream`), so the downcast cannot fail.
      return unsafeDowncast(change, to: FrozenChange<Element>.self).value
    }
  }
}

/// Ends the observation when the last stream or iterator holding it goes away.
final class ChangeStreamOwner: Sendable {
  let channel = ChangeChannel()
  deinit { channel.finish() }
}

/// A change on its way from the observation queue to the consumer: a class, so that the
/// channel moves one reference and never runs generic code for the element type (which,
/// unspecialised across modules, cost microseconds per change on this path).
class AnyFrozenChange: @unchecked Sendable {}  // safe: holds nothing; subclasses carry only frozen values

/// A change of element type `Element` (see `AnyFrozenChange`). It carries only frozen values,
/// which any thread may read.
final class FrozenChange<Element>: AnyFrozenChange, @unchecked Sendable {  // safe: frozen values only
  let value: Element
  init(_ value: Element) { self.value = value }
}

/// Set on a stream's queue (as its queue-specific value) so that the Realm confined to the
/// queue hands each commit's refresh to the stream instead of running it there.
final class CommitGate: Sendable {
  /// The queue-specific key the gate is stored under.
  static let key = DispatchSpecificKey<CommitGate>()
  /// Called on the store's listener thread for each commit, with the refresh to run on the queue.
  let arrived: @Sendable (_ refresh: @escaping @Sendable () -> Void) -> Void

  init(arrived: @escaping @Sendable (_ refresh: @escaping @Sendable () -> Void) -> Void) {
    self.arrived = arrived
  }
}

/// The hand-over between the observation and the consumer (see the file comment).
final class ChangeChannel: Sendable {
  /// What a waiting consumer is woken with.
  private enum Step {
    case change(AnyFrozenChange)
    /// A commit arrived: run the refresh on the queue, then look again.
    case refresh(@Sendable () -> Void)
    case ended
  }

  private struct State {
    /// Changes offered and not yet taken: the initial one, or what the consumer's last
    /// refresh produced.
    var pending: [AnyFrozenChange] = []
    var waiter: UnsafeContinuation<Step, Never>?
    /// The refresh to run before the consumer's next change: a commit arrived since the last.
    var refresh: (@Sendable () -> Void)?
    var finished = false
    var token: NotificationToken?
  }

  private let state = Mutex(State())
  /// The queue the observation's Realm is confined to.
  let queue = DispatchQueue(label: "io.shoal.changes")

  init() {
    queue.setSpecific(key: CommitGate.key, value: CommitGate { [weak self] refresh in self?.arrived(refresh) })
  }

  /// How many changes wait for the consumer (for tests).
  var pendingCount: Int { state.withLock { $0.pending.count } }
  /// Whether a commit arrived that the consumer has not refreshed to yet (for tests).
  var commitWaiting: Bool { state.withLock { $0.refresh != nil } }

  /// Keeps `token` to invalidate when the stream ends (at once if it has ended).
  func attach(_ token: NotificationToken) {
    let ended = state.withLock { state in
      state.token = token
      return state.finished
    }
    if ended { token.invalidate() }
  }

  /// A commit arrived (on the store's listener thread): wakes a waiting consumer to run
  /// `refresh`, or keeps it for the consumer's next call.
  private func arrived(_ refresh: @escaping @Sendable () -> Void) {
    let waiter = state.withLock { state -> UnsafeContinuation<Step, Never>? in
      guard !state.finished else { return nil }
      guard let waiter = state.waiter else {
        state.refresh = refresh
        return nil
      }
      state.waiter = nil
      return waiter
    }
    waiter?.resume(returning: .refresh(refresh))
  }

  /// Called on `queue` with each change: hands it to a waiting consumer, or keeps it for the
  /// next call. After the `last` change (an object's deletion) the observation stops and the
  /// stream ends once the consumer has it.
  func offer(_ change: AnyFrozenChange, last: Bool = false) {
    let (waiter, token) = state.withLock { state -> (UnsafeContinuation<Step, Never>?, NotificationToken?) in
      if state.finished { return (nil, nil) }
      var token: NotificationToken?
      if last {
        state.finished = true
        state.refresh = nil
        token = state.token
        state.token = nil
      }
      if let waiter = state.waiter {
        state.waiter = nil
        return (waiter, token)
      }
      state.pending.append(change)
      return (nil, token)
    }
    token?.invalidate()
    waiter?.resume(returning: .change(change))
  }

  /// What the consumer does next without waiting, or nil after registering `waiter` (when
  /// given) to be woken.
  private func step(waiter: UnsafeContinuation<Step, Never>?) -> Step? {
    state.withLock { state in
      if !state.pending.isEmpty { return .change(state.pending.removeFirst()) }
      if let refresh = state.refresh {
        state.refresh = nil
        return .refresh(refresh)
      }
      if state.finished { return .ended }
      if let waiter { state.waiter = waiter }
      return nil
    }
  }

  /// The next change, waiting for one; nil once ended. Cancelling the task ends the stream.
  func next() async -> AnyFrozenChange? {
    while true {
      var next = step(waiter: nil)
      if next == nil {
        next = await withTaskCancellationHandler {
          await withUnsafeContinuation { (continuation: UnsafeContinuation<Step, Never>) in
            // Resumed exactly once: now, or by whoever takes it out of the state (`arrived`,
            // `offer`, `finish`), which removes it as it takes it.
            if let ready = step(waiter: continuation) { continuation.resume(returning: ready) }
          }
        } onCancel: {
          finish()
        }
      }
      switch next {
      case .change(let change): return change
      case .refresh(let refresh): queue.sync(execute: refresh)
      case .ended, nil: return nil
      }
    }
  }

  /// Ends the stream: the consumer gets nil, the observation stops and its versions go.
  func finish() {
    let (waiter, token) = state.withLock { state in
      state.finished = true
      state.pending.removeAll()
      state.refresh = nil
      defer {
        state.waiter = nil
        state.token = nil
      }
      return (state.waiter, state.token)
    }
    waiter?.resume(returning: .ended)
    token?.invalidate()
  }

  /// A stream fed by the observation `observe` registers on the channel's queue; `observe` gets
  /// the queue and the function to call with each (already frozen) change.
  static func stream<Element>(
    _ observe: (DispatchQueue, @escaping (Element, _ last: Bool) -> Void) -> NotificationToken
  ) -> RealmChanges<Element> {
    let owner = ChangeStreamOwner()
    let channel = owner.channel
    let token = observe(channel.queue) { [weak channel] change, last in
      channel?.offer(FrozenChange(change), last: last)
    }
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
