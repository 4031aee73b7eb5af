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

/// A change type that carries one thread-confined value.
protocol HandedOverChange {
  associatedtype Value: ThreadConfined
  /// The value the change carries, if any.
  var handedOverValue: Value? { get }
  /// The same change with `value` in place of the one it carries.
  func replacing(with value: Value) -> Self
}

extension RealmPublishers {
  /// Sends `upstream`'s changes to `subscriber` on `scheduler`, each value resolved there.
  static func handOver<Upstream: Publisher, S: Scheduler, Sub: Subscriber>(
    _ upstream: Upstream, to scheduler: S, _ subscriber: Sub
  ) where Upstream.Output: HandedOverChange, Sub.Input == Upstream.Output, Sub.Failure == Upstream.Failure {
    typealias Change = Upstream.Output
    upstream
      .map { (change: Change) -> PassedChange<Change, Change.Value> in
        guard let value = change.handedOverValue, let (reference, configuration) = RealmPublishers.reference(value)
        else { return .asIs(change) }
        return .reference(change, reference, configuration)
      }
      .receive(on: scheduler)
      .compactMap { (passed: PassedChange<Change, Change.Value>) -> Change? in
        switch passed {
        case .asIs(let change): return change
        case .reference(let change, let reference, let configuration):
          guard let value = RealmPublishers.realm(configuration, scheduler)?.resolve(reference) else { return nil }
          return change.replacing(with: value)
        }
      }
      .receive(subscriber: subscriber)
  }
}

extension ObjectChange: HandedOverChange where T: ThreadConfined {
  var handedOverValue: T? {
    if case .change(let object, _) = self { return object }
    return nil
  }
  func replacing(with value: T) -> ObjectChange<T> {
    if case .change(_, let properties) = self { return .change(value, properties) }
    return self
  }
}

extension RealmCollectionChange: HandedOverChange where CollectionType: ThreadConfined {
  var handedOverValue: CollectionType? {
    switch self {
    case .initial(let collection), .update(let collection, _, _, _): return collection
    case .error: return nil
    }
  }
  func replacing(with value: CollectionType) -> RealmCollectionChange<CollectionType> {
    switch self {
    case .initial: return .initial(value)
    case .update(_, let deletions, let insertions, let modifications):
      return .update(value, deletions: deletions, insertions: insertions, modifications: modifications)
    case .error: return self
    }
  }
}

extension RealmMapChange: HandedOverChange where Collection: ThreadConfined {
  var handedOverValue: Collection? {
    switch self {
    case .initial(let collection), .update(let collection, _, _, _): return collection
    case .error: return nil
    }
  }
  func replacing(with value: Collection) -> RealmMapChange<Collection> {
    switch self {
    case .initial: return .initial(value)
    case .update(_, let deletions, let insertions, let modifications):
      return .update(value, deletions: deletions, insertions: insertions, modifications: modifications)
    case .error: return self
    }
  }
}

extension SectionedResultsChange: HandedOverChange where Collection: ThreadConfined {
  var handedOverValue: Collection? {
    switch self {
    case .initial(let collection), .update(let collection, _, _, _, _, _): return collection
    }
  }
  func replacing(with value: Collection) -> SectionedResultsChange<Collection> {
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
  // MARK: Objects

  /// A publisher that emits an `ObjectChange` each time the object changes, and finishes when
  /// it is deleted (`changesetPublisher(_:keyPaths:)` of an object or projection).
  public struct ObjectChangeset<O: ThreadConfined>: Publisher {
    /// The object's changes.
    public typealias Output = ObjectChange<O>
    /// This publisher reports errors through `ObjectChange.error`.
    public typealias Failure = Never

    let observation: Observation<Output>

    init(_ register: @escaping Observation<Output>.Register) {
      observation = Observation(isEnd: { if case .deleted = $0 { true } else { false } }, register)
    }

    init(_ observation: Observation<Output>) {
      self.observation = observation
    }

    /// Stores the notification token of the subscription at `keyPath` of `tokenParent`.
    public func saveToken<T>(on tokenParent: T, at keyPath: WritableKeyPath<T, NotificationToken?>)
      -> ObjectChangesetWithToken<O, T>
    {
      ObjectChangesetWithToken(observation, TokenSaver(tokenParent, keyPath))
    }

    /// Subscribes `subscriber` to the object's changes.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      observation.subscribe(subscriber)
    }

    /// Delivers the changes on `scheduler`, a serial dispatch queue (`queue.ocombine`): the
    /// observation is made there. Any other scheduler stops the process.
    public func subscribe<S: Scheduler>(on scheduler: S) -> ObjectChangeset<O> {
      ObjectChangeset(observation.on(scheduler))
    }

    /// Hands each change over to `scheduler`, its object through a `ThreadSafeReference`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverObjectChangeset<Self, O, S> {
      DeferredHandoverObjectChangeset(self, scheduler)
    }
  }

  /// `ObjectChangeset` that stores its notification token (`saveToken(on:at:)`).
  public final class ObjectChangesetWithToken<O: ThreadConfined, T>: Publisher {
    /// The object's changes.
    public typealias Output = ObjectChange<O>
    /// This publisher reports errors through `ObjectChange.error`.
    public typealias Failure = Never

    private let observation: Observation<Output>
    private let saver: TokenSaver

    init(_ observation: Observation<Output>, _ saver: TokenSaver) {
      self.observation = observation
      self.saver = saver
    }

    /// Subscribes `subscriber` and stores the token.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      observation.subscribe(subscriber, saver)
    }

    /// Delivers the changes on `scheduler`, a serial dispatch queue.
    public func subscribe<S: Scheduler>(on scheduler: S) -> ObjectChangesetWithToken<O, T> {
      ObjectChangesetWithToken(observation.on(scheduler), saver)
    }

    /// Hands each change over to `scheduler`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverObjectChangeset<
      ObjectChangesetWithToken, O, S
    > {
      DeferredHandoverObjectChangeset(self, scheduler)
    }
  }

  /// A publisher made by `threadSafeReference()` on object changes: a later `receive(on:)` hands the
  /// changes over through thread-safe references.
  public struct MakeThreadSafeObjectChangeset<Upstream: Publisher, T: ThreadConfined>: Publisher
  where Upstream.Output == ObjectChange<T> {
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
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverObjectChangeset<Upstream, T, S> {
      DeferredHandoverObjectChangeset(upstream, scheduler)
    }
  }

  /// A publisher that hands object changes over to a scheduler: unmanaged and frozen values as they
  /// are, live ones through a `ThreadSafeReference` resolved there.
  public struct DeferredHandoverObjectChangeset<Upstream: Publisher, T: ThreadConfined, S: Scheduler>: Publisher
  where Upstream.Output == ObjectChange<T> {
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

  // MARK: Collections

  /// A publisher that emits a `RealmCollectionChange` at once and each time the collection
  /// changes (`changesetPublisher` of a collection).
  public struct CollectionChangeset<Collection: RealmCollection>: Publisher {
    /// The collection's changes.
    public typealias Output = RealmCollectionChange<Collection>
    /// This publisher reports errors through `RealmCollectionChange.error`.
    public typealias Failure = Never

    let observation: Observation<Output>

    init(_ collection: Collection, keyPaths: [String]? = nil, queue: DispatchQueue? = nil) {
      precondition(collection.realm != nil, "Only managed collections can be published")
      observation = Observation(queue: queue) { queue, send in collection.observe(keyPaths: keyPaths, on: queue, send) }
    }

    init(_ observation: Observation<Output>) {
      self.observation = observation
    }

    /// Stores the notification token of the subscription at `keyPath` of `object`.
    public func saveToken<T>(on object: T, at keyPath: WritableKeyPath<T, NotificationToken?>)
      -> CollectionChangesetWithToken<Collection, T>
    {
      CollectionChangesetWithToken(observation, TokenSaver(object, keyPath))
    }

    /// Subscribes `subscriber` to the changes.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      observation.subscribe(subscriber)
    }

    /// Delivers the changes on `scheduler`, a serial dispatch queue (`queue.ocombine`): the
    /// observation is made there. Any other scheduler stops the process.
    public func subscribe<S: Scheduler>(on scheduler: S) -> CollectionChangeset<Collection> {
      CollectionChangeset(observation.on(scheduler))
    }

    /// Hands each change over to `scheduler`, its value through a `ThreadSafeReference`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverCollectionChangeset<Self, Collection, S> {
      DeferredHandoverCollectionChangeset(self, scheduler)
    }
  }

  /// `CollectionChangeset` that stores its notification token (`saveToken(on:at:)`).
  public final class CollectionChangesetWithToken<Collection: RealmCollection, T>: Publisher {
    /// The collection's changes.
    public typealias Output = RealmCollectionChange<Collection>
    /// This publisher reports errors through `RealmCollectionChange.error`.
    public typealias Failure = Never

    private let observation: Observation<Output>
    private let saver: TokenSaver

    init(_ observation: Observation<Output>, _ saver: TokenSaver) {
      self.observation = observation
      self.saver = saver
    }

    /// Subscribes `subscriber` and stores the token.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      observation.subscribe(subscriber, saver)
    }

    /// Delivers the changes on `scheduler`, a serial dispatch queue.
    public func subscribe<S: Scheduler>(on scheduler: S) -> CollectionChangesetWithToken<Collection, T> {
      CollectionChangesetWithToken(observation.on(scheduler), saver)
    }

    /// Hands each change over to `scheduler`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverCollectionChangeset<
      CollectionChangesetWithToken, Collection, S
    > {
      DeferredHandoverCollectionChangeset(self, scheduler)
    }
  }

  /// A publisher made by `threadSafeReference()` on collection changes: a later `receive(on:)` hands the
  /// changes over through thread-safe references.
  public struct MakeThreadSafeCollectionChangeset<Upstream: Publisher, T: RealmCollection>: Publisher
  where Upstream.Output == RealmCollectionChange<T> {
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
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverCollectionChangeset<Upstream, T, S> {
      DeferredHandoverCollectionChangeset(upstream, scheduler)
    }
  }

  /// A publisher that hands collection changes over to a scheduler: unmanaged and frozen values as they
  /// are, live ones through a `ThreadSafeReference` resolved there.
  public struct DeferredHandoverCollectionChangeset<Upstream: Publisher, T: RealmCollection, S: Scheduler>: Publisher
  where Upstream.Output == RealmCollectionChange<T> {
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

  // MARK: Maps

  /// A publisher that emits a `RealmMapChange` at once and each time the map changes
  /// (`changesetPublisher` of a map).
  public struct MapChangeset<Collection: RealmKeyedCollection>: Publisher {
    /// The map's changes.
    public typealias Output = RealmMapChange<Collection>
    /// This publisher reports errors through `RealmMapChange.error`.
    public typealias Failure = Never

    let observation: Observation<Output>

    init(_ collection: Collection, keyPaths: [String]? = nil, queue: DispatchQueue? = nil) {
      precondition(collection.realm != nil, "Only managed collections can be published")
      observation = Observation(queue: queue) { queue, send in collection.observe(keyPaths: keyPaths, on: queue, send) }
    }

    init(_ observation: Observation<Output>) {
      self.observation = observation
    }

    /// Stores the notification token of the subscription at `keyPath` of `object`.
    public func saveToken<T>(on object: T, at keyPath: WritableKeyPath<T, NotificationToken?>)
      -> MapChangesetWithToken<Collection, T>
    {
      MapChangesetWithToken(observation, TokenSaver(object, keyPath))
    }

    /// Subscribes `subscriber` to the changes.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      observation.subscribe(subscriber)
    }

    /// Delivers the changes on `scheduler`, a serial dispatch queue (`queue.ocombine`): the
    /// observation is made there. Any other scheduler stops the process.
    public func subscribe<S: Scheduler>(on scheduler: S) -> MapChangeset<Collection> {
      MapChangeset(observation.on(scheduler))
    }

    /// Hands each change over to `scheduler`, its value through a `ThreadSafeReference`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverKeyedCollectionChangeset<Self, Collection, S>
    {
      DeferredHandoverKeyedCollectionChangeset(self, scheduler)
    }
  }

  /// `MapChangeset` that stores its notification token (`saveToken(on:at:)`).
  public final class MapChangesetWithToken<Collection: RealmKeyedCollection, T>: Publisher {
    /// The map's changes.
    public typealias Output = RealmMapChange<Collection>
    /// This publisher reports errors through `RealmMapChange.error`.
    public typealias Failure = Never

    private let observation: Observation<Output>
    private let saver: TokenSaver

    init(_ observation: Observation<Output>, _ saver: TokenSaver) {
      self.observation = observation
      self.saver = saver
    }

    /// Subscribes `subscriber` and stores the token.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      observation.subscribe(subscriber, saver)
    }

    /// Delivers the changes on `scheduler`, a serial dispatch queue.
    public func subscribe<S: Scheduler>(on scheduler: S) -> MapChangesetWithToken<Collection, T> {
      MapChangesetWithToken(observation.on(scheduler), saver)
    }

    /// Hands each change over to `scheduler`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverKeyedCollectionChangeset<
      MapChangesetWithToken, Collection, S
    > {
      DeferredHandoverKeyedCollectionChangeset(self, scheduler)
    }
  }

  /// A publisher made by `threadSafeReference()` on map changes: a later `receive(on:)` hands the
  /// changes over through thread-safe references.
  public struct MakeThreadSafeKeyedCollectionChangeset<Upstream: Publisher, T: RealmKeyedCollection>: Publisher
  where Upstream.Output == RealmMapChange<T> {
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
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverKeyedCollectionChangeset<Upstream, T, S> {
      DeferredHandoverKeyedCollectionChangeset(upstream, scheduler)
    }
  }

  /// A publisher that hands map changes over to a scheduler: unmanaged and frozen values as they
  /// are, live ones through a `ThreadSafeReference` resolved there.
  public struct DeferredHandoverKeyedCollectionChangeset<Upstream: Publisher, T: RealmKeyedCollection, S: Scheduler>:
    Publisher
  where Upstream.Output == RealmMapChange<T> {
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

  // MARK: Sectioned results

  /// A publisher that emits a `SectionedResultsChange` at once and each time the sectioned
  /// results change (`changesetPublisher` of `SectionedResults`).
  public struct SectionedResultsChangeset<Collection: RealmSectionedResult>: Publisher {
    /// The sectioned results' changes.
    public typealias Output = SectionedResultsChange<Collection>
    /// This publisher cannot fail.
    public typealias Failure = Never

    let observation: Observation<Output>

    init(_ collection: Collection, keyPaths: [String]? = nil, queue: DispatchQueue? = nil) {
      precondition(collection.realm != nil, "Only managed collections can be published")
      observation = Observation(queue: queue) { queue, send in collection.observe(keyPaths: keyPaths, on: queue, send) }
    }

    init(_ observation: Observation<Output>) {
      self.observation = observation
    }

    /// Stores the notification token of the subscription at `keyPath` of `object`.
    public func saveToken<T>(on object: T, at keyPath: WritableKeyPath<T, NotificationToken?>)
      -> SectionedResultsChangesetWithToken<Collection, T>
    {
      SectionedResultsChangesetWithToken(observation, TokenSaver(object, keyPath))
    }

    /// Subscribes `subscriber` to the changes.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      observation.subscribe(subscriber)
    }

    /// Delivers the changes on `scheduler`, a serial dispatch queue (`queue.ocombine`): the
    /// observation is made there. Any other scheduler stops the process.
    public func subscribe<S: Scheduler>(on scheduler: S) -> SectionedResultsChangeset<Collection> {
      SectionedResultsChangeset(observation.on(scheduler))
    }

    /// Hands each change over to `scheduler`, its value through a `ThreadSafeReference`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverSectionedResultsChangeset<Self, Collection, S>
    {
      DeferredHandoverSectionedResultsChangeset(self, scheduler)
    }
  }

  /// A publisher that emits a `SectionedResultsChange` at once and each time one section
  /// changes (`changesetPublisher` of a `ResultsSection`).
  public struct SectionChangeset<Collection: RealmSectionedResult>: Publisher {
    /// The section's changes.
    public typealias Output = SectionedResultsChange<Collection>
    /// This publisher cannot fail.
    public typealias Failure = Never

    let observation: Observation<Output>

    init(_ collection: Collection, keyPaths: [String]? = nil, queue: DispatchQueue? = nil) {
      precondition(collection.realm != nil, "Only managed collections can be published")
      observation = Observation(queue: queue) { queue, send in collection.observe(keyPaths: keyPaths, on: queue, send) }
    }

    init(_ observation: Observation<Output>) {
      self.observation = observation
    }

    /// Stores the notification token of the subscription at `keyPath` of `object`.
    public func saveToken<T>(on object: T, at keyPath: WritableKeyPath<T, NotificationToken?>)
      -> SectionedResultsChangesetWithToken<Collection, T>
    {
      SectionedResultsChangesetWithToken(observation, TokenSaver(object, keyPath))
    }

    /// Subscribes `subscriber` to the changes.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      observation.subscribe(subscriber)
    }

    /// Delivers the changes on `scheduler`, a serial dispatch queue (`queue.ocombine`): the
    /// observation is made there. Any other scheduler stops the process.
    public func subscribe<S: Scheduler>(on scheduler: S) -> SectionedResultsChangeset<Collection> {
      SectionedResultsChangeset(observation.on(scheduler))
    }

    /// Hands each change over to `scheduler`, its value through a `ThreadSafeReference`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverSectionedResultsChangeset<Self, Collection, S>
    {
      DeferredHandoverSectionedResultsChangeset(self, scheduler)
    }
  }

  /// `SectionedResultsChangeset` or `SectionChangeset` that stores its notification token.
  public final class SectionedResultsChangesetWithToken<Collection: RealmSectionedResult, T>: Publisher {
    /// The sectioned results' changes.
    public typealias Output = SectionedResultsChange<Collection>
    /// This publisher cannot fail.
    public typealias Failure = Never

    private let observation: Observation<Output>
    private let saver: TokenSaver

    init(_ observation: Observation<Output>, _ saver: TokenSaver) {
      self.observation = observation
      self.saver = saver
    }

    /// Subscribes `subscriber` and stores the token.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      observation.subscribe(subscriber, saver)
    }

    /// Delivers the changes on `scheduler`, a serial dispatch queue.
    public func subscribe<S: Scheduler>(on scheduler: S) -> SectionedResultsChangesetWithToken<Collection, T> {
      SectionedResultsChangesetWithToken(observation.on(scheduler), saver)
    }

    /// Hands each change over to `scheduler`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverSectionedResultsChangeset<
      SectionedResultsChangesetWithToken, Collection, S
    > {
      DeferredHandoverSectionedResultsChangeset(self, scheduler)
    }
  }

  /// A publisher made by `threadSafeReference()` on sectioned results changes: a later `receive(on:)` hands the
  /// changes over through thread-safe references.
  public struct MakeThreadSafeSectionedResultsChangeset<Upstream: Publisher, T: RealmSectionedResult>: Publisher
  where Upstream.Output == SectionedResultsChange<T> {
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
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverSectionedResultsChangeset<Upstream, T, S> {
      DeferredHandoverSectionedResultsChangeset(upstream, scheduler)
    }
  }

  /// A publisher that hands sectioned results changes over to a scheduler: unmanaged and frozen values as they
  /// are, live ones through a `ThreadSafeReference` resolved there.
  public struct DeferredHandoverSectionedResultsChangeset<Upstream: Publisher, T: RealmSectionedResult, S: Scheduler>:
    Publisher
  where Upstream.Output == SectionedResultsChange<T> {
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

  // MARK: Sections (RealmSwift declares these; `SectionChangeset.saveToken(on:at:)` returns the
  // sectioned results' type, as there)

  /// A section's changes that store their notification token.
  public final class SectionChangesetWithToken<Collection: RealmSectionedResult, T>: Publisher {
    /// The section's changes.
    public typealias Output = SectionedResultsChange<Collection>
    /// This publisher cannot fail.
    public typealias Failure = Never

    private let observation: Observation<Output>
    private let saver: TokenSaver

    init(_ observation: Observation<Output>, _ saver: TokenSaver) {
      self.observation = observation
      self.saver = saver
    }

    /// Subscribes `subscriber` and stores the token.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      observation.subscribe(subscriber, saver)
    }

    /// Delivers the changes on `scheduler`, a serial dispatch queue.
    public func subscribe<S: Scheduler>(on scheduler: S) -> SectionedResultsChangesetWithToken<Collection, T> {
      SectionedResultsChangesetWithToken(observation.on(scheduler), saver)
    }

    /// Hands each change over to `scheduler`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandoverSectionChangeset<
      SectionChangesetWithToken, Collection, S
    > {
      DeferredHandoverSectionChangeset(self, scheduler)
    }
  }

  /// A publisher that hands a section's changes over to a scheduler.
  public struct DeferredHandoverSectionChangeset<Upstream: Publisher, T: RealmSectionedResult, S: Scheduler>: Publisher
  where Upstream.Output == SectionedResultsChange<T> {
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
}
