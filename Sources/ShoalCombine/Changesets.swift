import Dispatch
import Foundation
import OpenCombine
import OpenCombineDispatch
import Shoal

// MARK: - Handing changes over

/// A change whose value is handed over to another thread: as it is when the value is unmanaged
/// or frozen, else with a `ThreadSafeReference` to resolve there.
enum PassedChange<Change, T: ThreadConfined> {
  case asIs(Change)
  case reference(Change, ThreadSafeReference<T>, Realm.Configuration)
}

/// A change that carries one thread-confined value, which `receive(on:)` hands over to another
/// thread through a `ThreadSafeReference` (`ObjectChange`, `RealmCollectionChange`,
/// `RealmMapChange`, `SectionedResultsChange`). An implementation detail of the changeset
/// publishers, public only because their generic signatures name it.
public protocol _HandedOverChange {
  /// The type of the value the change carries.
  associatedtype _HandedOverValue: ThreadConfined
  /// The value the change carries, if any.
  var _handedOverValue: _HandedOverValue? { get }
  /// The same change with `value` in place of the one it carries.
  func _replacing(with value: _HandedOverValue) -> Self
}

extension RealmPublishers {
  /// Sends `upstream`'s changes to `subscriber` on `scheduler`, each value resolved there.
  static func handOver<Upstream: Publisher, S: Scheduler, Sub: Subscriber>(
    _ upstream: Upstream, to scheduler: S, _ subscriber: Sub
  ) where Upstream.Output: _HandedOverChange, Sub.Input == Upstream.Output, Sub.Failure == Upstream.Failure {
    typealias Change = Upstream.Output
    upstream
      .map { (change: Change) -> PassedChange<Change, Change._HandedOverValue> in
        guard let value = change._handedOverValue, let (reference, configuration) = RealmPublishers.reference(value)
        else { return .asIs(change) }
        return .reference(change, reference, configuration)
      }
      .receive(on: scheduler)
      .compactMap { (passed: PassedChange<Change, Change._HandedOverValue>) -> Change? in
        switch passed {
        case .asIs(let change): return change
        case .reference(let change, let reference, let configuration):
          guard let value = RealmPublishers.realm(configuration, scheduler)?.resolve(reference) else { return nil }
          return change._replacing(with: value)
        }
      }
      .receive(subscriber: subscriber)
  }
}

extension ObjectChange: _HandedOverChange where T: ThreadConfined {
  /// The value the change carries, if any.
  public var _handedOverValue: T? {
    if case .change(let object, _) = self { return object }
    return nil
  }
  /// The same change with `value` in place of the one it carries.
  public func _replacing(with value: T) -> ObjectChange<T> {
    if case .change(_, let properties) = self { return .change(value, properties) }
    return self
  }
}

extension RealmCollectionChange: _HandedOverChange where CollectionType: ThreadConfined {
  /// The value the change carries, if any.
  public var _handedOverValue: CollectionType? {
    switch self {
    case .initial(let collection), .update(let collection, _, _, _): return collection
    case .error: return nil
    }
  }
  /// The same change with `value` in place of the one it carries.
  public func _replacing(with value: CollectionType) -> RealmCollectionChange<CollectionType> {
    switch self {
    case .initial: return .initial(value)
    case .update(_, let deletions, let insertions, let modifications):
      return .update(value, deletions: deletions, insertions: insertions, modifications: modifications)
    case .error: return self
    }
  }
}

extension RealmMapChange: _HandedOverChange where Collection: ThreadConfined {
  /// The value the change carries, if any.
  public var _handedOverValue: Collection? {
    switch self {
    case .initial(let collection), .update(let collection, _, _, _): return collection
    case .error: return nil
    }
  }
  /// The same change with `value` in place of the one it carries.
  public func _replacing(with value: Collection) -> RealmMapChange<Collection> {
    switch self {
    case .initial: return .initial(value)
    case .update(_, let deletions, let insertions, let modifications):
      return .update(value, deletions: deletions, insertions: insertions, modifications: modifications)
    case .error: return self
    }
  }
}

extension SectionedResultsChange: _HandedOverChange where Collection: ThreadConfined {
  /// The value the change carries, if any.
  public var _handedOverValue: Collection? {
    switch self {
    case .initial(let collection), .update(let collection, _, _, _, _, _): return collection
    }
  }
  /// The same change with `value` in place of the one it carries.
  public func _replacing(with value: Collection) -> SectionedResultsChange<Collection> {
    switch self {
    case .initial: return .initial(value)
    case .update(_, let deletions, let insertions, let modifications, let sectionsToInsert, let sectionsToDelete):
      return .update(
        value, deletions: deletions, insertions: insertions, modifications: modifications,
        sectionsToInsert: sectionsToInsert, sectionsToDelete: sectionsToDelete)
    }
  }
}

/// How a changeset publisher registers its observation, and the queue it registers it on.
struct Observation<Output> {
  typealias Register = (_ queue: DispatchQueue?, _ send: @escaping (Output) -> Void) -> NotificationToken
  let register: Register
  let queue: DispatchQueue?
  /// Whether a change ends the stream (an object's deletion) instead of being sent.
  let isEnd: (Output) -> Bool

  init(queue: DispatchQueue? = nil, isEnd: @escaping (Output) -> Bool = { _ in false }, _ register: @escaping Register)
  {
    self.register = register
    self.queue = queue
    self.isEnd = isEnd
  }

  /// The same observation registered on `scheduler`'s serial dispatch queue.
  func on<S: Scheduler>(_ scheduler: S) -> Observation {
    Observation(queue: RealmPublishers.queue(of: scheduler), isEnd: isEnd, register)
  }

  /// Subscribes `subscriber`; `saver` keeps the token where the user asked.
  func subscribe<S: Subscriber>(_ subscriber: S, _ saver: TokenSaver? = nil) where S.Input == Output {
    let token = RealmPublishers.subscribe(subscriber) {
      register(queue) { change in
        if isEnd(change) { subscriber.receive(completion: .finished) } else { _ = subscriber.receive(change) }
      }
    }
    saver?.save(token)
  }
}

/// Where a `…WithToken` publisher stores its notification token (`saveToken(on:at:)`).
final class TokenSaver {
  private let store: (NotificationToken) -> Void

  init<T>(_ parent: T, _ keyPath: WritableKeyPath<T, NotificationToken?>) {
    var parent = parent
    store = { parent[keyPath: keyPath] = $0 }
  }

  func save(_ token: NotificationToken) { store(token) }
}

extension RealmPublishers {
  // MARK: Changesets

  /// A publisher that emits a change each time an object or collection changes: collections also
  /// at once, an object's changes finish when it is deleted (`changesetPublisher` of an object,
  /// projection or collection; its RealmSwift names are ``ObjectChangeset``,
  /// ``CollectionChangeset``, ``MapChangeset``, ``SectionedResultsChangeset`` and
  /// ``SectionChangeset``).
  public struct Changeset<Change: _HandedOverChange>: Publisher {
    /// The changes.
    public typealias Output = Change
    /// This publisher reports errors through the change's `.error` case (sectioned results
    /// cannot fail).
    public typealias Failure = Never

    let observation: Observation<Change>

    init(_ observation: Observation<Change>) {
      self.observation = observation
    }

    /// Stores the notification token of the subscription at `keyPath` of `tokenParent`.
    public func saveToken<T>(on tokenParent: T, at keyPath: WritableKeyPath<T, NotificationToken?>)
      -> ChangesetWithToken<Change, T>
    {
      ChangesetWithToken(observation, TokenSaver(tokenParent, keyPath))
    }

    /// Subscribes `subscriber` to the changes.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      observation.subscribe(subscriber)
    }

    /// Delivers the changes on `scheduler`, a serial dispatch queue (`queue.ocombine`): the
    /// observation is made there. Any other scheduler stops the process.
    public func subscribe<S: Scheduler>(on scheduler: S) -> Changeset {
      Changeset(observation.on(scheduler))
    }

    /// Hands each change over to `scheduler`, its value through a `ThreadSafeReference`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverChangeset<Self, S> {
      DeferredHandoverChangeset(self, scheduler)
    }
  }

  /// A `Changeset` that stores its notification token (`saveToken(on:at:)`).
  public final class ChangesetWithToken<Change: _HandedOverChange, T>: Publisher {
    /// The changes.
    public typealias Output = Change
    /// This publisher reports errors through the change's `.error` case.
    public typealias Failure = Never

    private let observation: Observation<Change>
    private let saver: TokenSaver

    init(_ observation: Observation<Change>, _ saver: TokenSaver) {
      self.observation = observation
      self.saver = saver
    }

    /// Subscribes `subscriber` and stores the token.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      observation.subscribe(subscriber, saver)
    }

    /// Delivers the changes on `scheduler`, a serial dispatch queue.
    public func subscribe<S: Scheduler>(on scheduler: S) -> ChangesetWithToken {
      ChangesetWithToken(observation.on(scheduler), saver)
    }

    /// Hands each change over to `scheduler`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverChangeset<ChangesetWithToken, S> {
      DeferredHandoverChangeset(self, scheduler)
    }
  }

  /// A publisher made by `threadSafeReference()` on changes: a later `receive(on:)` hands the
  /// changes over through thread-safe references.
  public struct MakeThreadSafeChangeset<Upstream: Publisher>: Publisher where Upstream.Output: _HandedOverChange {
    /// The upstream's failure.
    public typealias Failure = Upstream.Failure
    /// The upstream's changes.
    public typealias Output = Upstream.Output

    private let upstream: Upstream

    init(_ upstream: Upstream) {
      self.upstream = upstream
    }

    /// Subscribes `subscriber` to the upstream.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
      upstream.receive(subscriber: subscriber)
    }

    /// Hands each change over to `scheduler`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverChangeset<Upstream, S> {
      DeferredHandoverChangeset(upstream, scheduler)
    }
  }

  /// A publisher that hands changes over to a scheduler: unmanaged and frozen values as they are,
  /// live ones through a `ThreadSafeReference` resolved there.
  public struct DeferredHandoverChangeset<Upstream: Publisher, S: Scheduler>: Publisher
  where Upstream.Output: _HandedOverChange {
    /// The upstream's failure.
    public typealias Failure = Upstream.Failure
    /// The upstream's changes, resolved on the scheduler.
    public typealias Output = Upstream.Output

    private let upstream: Upstream
    private let scheduler: S

    init(_ upstream: Upstream, _ scheduler: S) {
      self.upstream = upstream
      self.scheduler = scheduler
    }

    /// Subscribes `subscriber` to the handed-over changes.
    public func receive<Sub>(subscriber: Sub) where Sub: Subscriber, Sub.Failure == Failure, Output == Sub.Input {
      RealmPublishers.handOver(upstream, to: scheduler, subscriber)
    }
  }

  // MARK: RealmSwift's names

  /// An object's or projection's changes; finishes when the object is deleted.
  public typealias ObjectChangeset<O: ThreadConfined> = Changeset<ObjectChange<O>>
  /// `ObjectChangeset` that stores its notification token.
  public typealias ObjectChangesetWithToken<O: ThreadConfined, T> = ChangesetWithToken<ObjectChange<O>, T>
  /// `threadSafeReference()` on object changes.
  public typealias MakeThreadSafeObjectChangeset<Upstream: Publisher, T: ThreadConfined> =
    MakeThreadSafeChangeset<Upstream> where Upstream.Output == ObjectChange<T>
  /// Object changes handed over to a scheduler.
  public typealias DeferredHandoverObjectChangeset<Upstream: Publisher, T: ThreadConfined, S: Scheduler> =
    DeferredHandoverChangeset<Upstream, S> where Upstream.Output == ObjectChange<T>

  /// A collection's changes, the first at once.
  public typealias CollectionChangeset<Collection: RealmCollection> = Changeset<RealmCollectionChange<Collection>>
  /// `CollectionChangeset` that stores its notification token.
  public typealias CollectionChangesetWithToken<Collection: RealmCollection, T> =
    ChangesetWithToken<RealmCollectionChange<Collection>, T>
  /// `threadSafeReference()` on collection changes.
  public typealias MakeThreadSafeCollectionChangeset<Upstream: Publisher, T: RealmCollection> =
    MakeThreadSafeChangeset<Upstream> where Upstream.Output == RealmCollectionChange<T>
  /// Collection changes handed over to a scheduler.
  public typealias DeferredHandoverCollectionChangeset<Upstream: Publisher, T: RealmCollection, S: Scheduler> =
    DeferredHandoverChangeset<Upstream, S> where Upstream.Output == RealmCollectionChange<T>

  /// A map's changes, the first at once.
  public typealias MapChangeset<Collection: RealmKeyedCollection> = Changeset<RealmMapChange<Collection>>
  /// `MapChangeset` that stores its notification token.
  public typealias MapChangesetWithToken<Collection: RealmKeyedCollection, T> =
    ChangesetWithToken<RealmMapChange<Collection>, T>
  /// `threadSafeReference()` on map changes.
  public typealias MakeThreadSafeKeyedCollectionChangeset<Upstream: Publisher, T: RealmKeyedCollection> =
    MakeThreadSafeChangeset<Upstream> where Upstream.Output == RealmMapChange<T>
  /// Map changes handed over to a scheduler.
  public typealias DeferredHandoverKeyedCollectionChangeset<
    Upstream: Publisher, T: RealmKeyedCollection, S: Scheduler
  > =
    DeferredHandoverChangeset<Upstream, S> where Upstream.Output == RealmMapChange<T>

  /// Sectioned results' changes, the first at once.
  public typealias SectionedResultsChangeset<Collection: RealmSectionedResult> =
    Changeset<SectionedResultsChange<Collection>>
  /// `SectionedResultsChangeset` that stores its notification token.
  public typealias SectionedResultsChangesetWithToken<Collection: RealmSectionedResult, T> =
    ChangesetWithToken<SectionedResultsChange<Collection>, T>
  /// `threadSafeReference()` on sectioned results changes.
  public typealias MakeThreadSafeSectionedResultsChangeset<Upstream: Publisher, T: RealmSectionedResult> =
    MakeThreadSafeChangeset<Upstream> where Upstream.Output == SectionedResultsChange<T>
  /// Sectioned results changes handed over to a scheduler.
  public typealias DeferredHandoverSectionedResultsChangeset<
    Upstream: Publisher, T: RealmSectionedResult, S: Scheduler
  > = DeferredHandoverChangeset<Upstream, S> where Upstream.Output == SectionedResultsChange<T>

  /// One section's changes, the first at once.
  public typealias SectionChangeset<Collection: RealmSectionedResult> = Changeset<SectionedResultsChange<Collection>>
  /// `SectionChangeset` that stores its notification token.
  public typealias SectionChangesetWithToken<Collection: RealmSectionedResult, T> =
    ChangesetWithToken<SectionedResultsChange<Collection>, T>
  /// A section's changes handed over to a scheduler.
  public typealias DeferredHandoverSectionChangeset<Upstream: Publisher, T: RealmSectionedResult, S: Scheduler> =
    DeferredHandoverChangeset<Upstream, S> where Upstream.Output == SectionedResultsChange<T>
}

extension RealmPublishers.Changeset {
  /// An object's or projection's changes, observed by `register`; they end at its deletion.
  init<O>(_ register: @escaping Observation<Change>.Register) where Change == ObjectChange<O> {
    self.init(Observation(isEnd: { if case .deleted = $0 { true } else { false } }, register))
  }

  /// A collection's changes.
  init<C: RealmCollection>(_ collection: C, keyPaths: [String]? = nil) where Change == RealmCollectionChange<C> {
    precondition(collection.realm != nil, "Only managed collections can be published")
    self.init(Observation { queue, send in collection.observe(keyPaths: keyPaths, on: queue, send) })
  }

  /// A map's changes.
  init<C: RealmKeyedCollection>(_ map: C, keyPaths: [String]? = nil) where Change == RealmMapChange<C> {
    precondition(map.realm != nil, "Only managed collections can be published")
    self.init(Observation { queue, send in map.observe(keyPaths: keyPaths, on: queue, send) })
  }

  /// Sectioned results' or a section's changes.
  init<C: RealmSectionedResult>(_ sections: C, keyPaths: [String]? = nil) where Change == SectionedResultsChange<C> {
    precondition(sections.realm != nil, "Only managed collections can be published")
    self.init(Observation { queue, send in sections.observe(keyPaths: keyPaths, on: queue, send) })
  }
}
