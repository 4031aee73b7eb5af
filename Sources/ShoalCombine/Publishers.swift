import Dispatch
import Foundation
import OpenCombine
import OpenCombineDispatch
import Shoal

/// Combine publishers for Realm types (RealmSwift's `RealmPublishers`), through OpenCombine.
///
/// You do not create these directly: `valuePublisher(_:keyPaths:)`,
/// `changesetPublisher(_:keyPaths:)`, `collectionPublisher`, `changesetPublisher` and
/// `objectWillChange` make them.
///
/// ```swift
/// import OpenCombine
/// import OpenCombineDispatch
/// import Shoal
/// import ShoalCombine
///
/// let cancellable = realm.objects(Dog.self)
///   .collectionPublisher
///   .subscribe(on: DispatchQueue(label: "background").ocombine)
///   .map { $0.count }
///   .sink(receiveCompletion: { _ in }, receiveValue: { print("\($0) dogs") })
/// ```
public enum RealmPublishers {
  /// A Realm of `configuration` for the thread `scheduler` runs on: confined to its queue for a
  /// dispatch queue scheduler, to the current thread otherwise. Nil when it cannot be opened.
  static func realm<S: Scheduler>(_ configuration: Realm.Configuration, _ scheduler: S) -> Realm? {
    try? Realm(configuration: configuration, queue: (scheduler as? DispatchQueue.OCombine)?.queue)
  }

  /// The serial dispatch queue of a scheduler given to `subscribe(on:)`; stops the process for
  /// any other scheduler, as RealmSwift does.
  static func queue<S: Scheduler>(of scheduler: S) -> DispatchQueue {
    guard let dispatch = scheduler as? DispatchQueue.OCombine else {
      fatalError("Cannot subscribe on scheduler \(scheduler): only serial dispatch queues are currently implemented.")
    }
    return dispatch.queue
  }

  /// A reference to `value` to resolve on another thread, or nil when the value can go as it is
  /// (unmanaged or frozen).
  static func reference<T: ThreadConfined>(_ value: T) -> (ThreadSafeReference<T>, Realm.Configuration)? {
    guard let realm = value.realm, !realm.isFrozen else { return nil }
    return (ThreadSafeReference(to: value), realm.configuration)
  }

  // MARK: Realm

  /// A publisher that emits `Void` after each commit to a Realm (`Realm.objectWillChange`).
  public struct RealmWillChange: Publisher {
    /// This publisher cannot fail.
    public typealias Failure = Never
    /// This publisher emits Void.
    public typealias Output = Void

    private let realm: Realm

    init(_ realm: Realm) {
      self.realm = realm
    }

    /// Stores the notification token of the subscription at `keyPath` of `object`, where
    /// `write(withoutNotifying:)` can name it.
    public func saveToken<T>(on object: T, for keyPath: WritableKeyPath<T, NotificationToken?>)
      -> RealmWillChangeWithToken<T>
    {
      RealmWillChangeWithToken<T>(realm, TokenSaver(object, keyPath))
    }

    /// Subscribes `subscriber` to the Realm's notifications.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      _ = RealmPublishers.subscribe(subscriber) { realm.observe { _, _ in _ = subscriber.receive() } }
    }
  }

  /// `RealmWillChange` that stores its notification token (`saveToken(on:for:)`).
  public final class RealmWillChangeWithToken<T>: Publisher {
    /// This publisher cannot fail.
    public typealias Failure = Never
    /// This publisher emits Void.
    public typealias Output = Void

    private let realm: Realm
    private let saver: TokenSaver

    init(_ realm: Realm, _ saver: TokenSaver) {
      self.realm = realm
      self.saver = saver
    }

    /// Subscribes `subscriber` and stores the token.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      saver.save(RealmPublishers.subscribe(subscriber) { realm.observe { _, _ in _ = subscriber.receive() } })
    }
  }

  // MARK: Will change

  /// A publisher that emits `Void` each time the object or collection changes (`objectWillChange`).
  ///
  /// Despite the name, it emits *after* the change, as RealmSwift's does.
  public struct WillChange<Collection: RealmSubscribable>: Publisher where Collection: ThreadConfined {
    /// This publisher cannot fail.
    public typealias Failure = Never
    /// This publisher emits Void.
    public typealias Output = Void

    private let collection: Collection

    init(_ collection: Collection) {
      self.collection = collection
    }

    /// Stores the notification token of the subscription at `keyPath` of `object`.
    public func saveToken<T>(on object: T, at keyPath: WritableKeyPath<T, NotificationToken?>)
      -> WillChangeWithToken<Collection, T>
    {
      WillChangeWithToken<Collection, T>(collection, TokenSaver(object, keyPath))
    }

    /// Subscribes `subscriber` to the value's notifications.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      _ = RealmPublishers.subscribe(subscriber) { collection._observe(nil, subscriber) }
    }
  }

  /// `WillChange` that stores its notification token (`saveToken(on:at:)`).
  public final class WillChangeWithToken<Collection: RealmSubscribable, T>: Publisher
  where Collection: ThreadConfined {
    /// This publisher cannot fail.
    public typealias Failure = Never
    /// This publisher emits Void.
    public typealias Output = Void

    private let object: Collection
    private let saver: TokenSaver

    init(_ object: Collection, _ saver: TokenSaver) {
      self.object = object
      self.saver = saver
    }

    /// Subscribes `subscriber` and stores the token.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Never, Output == S.Input {
      saver.save(RealmPublishers.subscribe(subscriber) { object._observe(nil, subscriber) })
    }
  }

  // MARK: Values

  /// A publisher that emits the object or collection itself each time it changes (collections
  /// also at once), and finishes when an object is deleted.
  public struct Value<Subscribable: RealmSubscribable>: Publisher where Subscribable: ThreadConfined {
    /// This publisher reports a failure to observe.
    public typealias Failure = Error
    /// This publisher emits the value.
    public typealias Output = Subscribable

    private let subscribable: Subscribable
    private let keyPaths: [String]?
    private let queue: DispatchQueue?

    init(_ subscribable: Subscribable, keyPaths: [String]? = nil, queue: DispatchQueue? = nil) {
      precondition(subscribable.realm != nil, "Only managed objects can be published")
      self.subscribable = subscribable
      self.keyPaths = keyPaths
      self.queue = queue
    }

    /// Stores the notification token of the subscription at `keyPath` of `object`.
    public func saveToken<T>(on object: T, at keyPath: WritableKeyPath<T, NotificationToken?>)
      -> ValueWithToken<Subscribable, T>
    {
      ValueWithToken<Subscribable, T>(subscribable, keyPaths, queue, TokenSaver(object, keyPath))
    }

    /// Subscribes `subscriber` to the value's notifications.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
      _ = RealmPublishers.subscribe(subscriber) { subscribable._observe(keyPaths, on: queue, subscriber) }
    }

    /// Delivers the values on `scheduler`, a serial dispatch queue (`queue.ocombine`): the
    /// observation is made there and values arrive during that queue's refresh. Any other
    /// scheduler stops the process.
    public func subscribe<S: Scheduler>(on scheduler: S) -> Value<Subscribable> {
      Value(subscribable, keyPaths: keyPaths, queue: RealmPublishers.queue(of: scheduler))
    }

    /// Hands each value over to `scheduler` through a `ThreadSafeReference`, resolved there in
    /// a Realm of that thread or queue.
    public func receive<S: Scheduler>(on scheduler: S) -> Handover<Self, S> {
      Handover(self, scheduler, subscribable.realm!)  // safe: `init` requires a managed value
    }
  }

  /// `Value` that stores its notification token (`saveToken(on:at:)`).
  public final class ValueWithToken<Subscribable: RealmSubscribable, T>: Publisher where Subscribable: ThreadConfined {
    /// This publisher reports a failure to observe.
    public typealias Failure = Error
    /// This publisher emits the value.
    public typealias Output = Subscribable

    private let object: Subscribable
    private let keyPaths: [String]?
    private let queue: DispatchQueue?
    private let saver: TokenSaver

    init(_ object: Subscribable, _ keyPaths: [String]?, _ queue: DispatchQueue?, _ saver: TokenSaver) {
      precondition(object.realm != nil, "Only managed objects can be published")
      self.object = object
      self.keyPaths = keyPaths
      self.queue = queue
      self.saver = saver
    }

    /// Subscribes `subscriber` and stores the token.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
      saver.save(RealmPublishers.subscribe(subscriber) { object._observe(keyPaths, on: queue, subscriber) })
    }

    /// Delivers the values on `scheduler`, a serial dispatch queue (see `Value.subscribe(on:)`).
    public func subscribe<S: Scheduler>(on scheduler: S) -> ValueWithToken<Subscribable, T> {
      ValueWithToken(object, keyPaths, RealmPublishers.queue(of: scheduler), saver)
    }

    /// Hands each value over to `scheduler` (see `Value.receive(on:)`).
    public func receive<S: Scheduler>(on scheduler: S) -> Handover<ValueWithToken, S> {
      Handover(self, scheduler, object.realm!)  // safe: `init` requires a managed value
    }
  }

  // MARK: Handover

  /// A publisher that hands each value of its upstream over to a scheduler through a
  /// `ThreadSafeReference` (`receive(on:)` of a Realm publisher).
  public struct Handover<Upstream: Publisher, S: Scheduler>: Publisher where Upstream.Output: ThreadConfined {
    /// The upstream's failure.
    public typealias Failure = Upstream.Failure
    /// The upstream's values, resolved on the scheduler.
    public typealias Output = Upstream.Output

    private let configuration: Realm.Configuration
    private let upstream: Upstream
    private let scheduler: S

    init(_ upstream: Upstream, _ scheduler: S, _ realm: Realm) {
      configuration = realm.configuration
      self.upstream = upstream
      self.scheduler = scheduler
    }

    /// Subscribes `subscriber` to the handed-over values.
    public func receive<Sub>(subscriber: Sub) where Sub: Subscriber, Sub.Failure == Failure, Output == Sub.Input {
      let (scheduler, configuration) = (self.scheduler, self.configuration)
      upstream
        .map { ThreadSafeReference(to: $0) }
        .receive(on: scheduler)
        .compactMap { RealmPublishers.realm(configuration, scheduler)?.resolve($0) }
        .receive(subscriber: subscriber)
    }
  }

  /// A publisher made by `threadSafeReference()`: a later `receive(on:)` hands its values over
  /// through thread-safe references.
  public struct MakeThreadSafe<Upstream: Publisher>: Publisher where Upstream.Output: ThreadConfined {
    /// The upstream's failure.
    public typealias Failure = Upstream.Failure
    /// The upstream's values.
    public typealias Output = Upstream.Output

    private let upstream: Upstream

    init(_ upstream: Upstream) {
      self.upstream = upstream
    }

    /// Subscribes `subscriber` to the upstream.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
      upstream.receive(subscriber: subscriber)
    }

    /// Hands each value over to `scheduler` through a `ThreadSafeReference`.
    public func receive<S: Scheduler>(on scheduler: S) -> DeferredHandover<Upstream, S> {
      DeferredHandover(upstream, scheduler)
    }
  }

  /// A publisher that hands each value over to a scheduler, unmanaged and frozen values as they
  /// are, live ones through a `ThreadSafeReference`.
  public struct DeferredHandover<Upstream: Publisher, S: Scheduler>: Publisher where Upstream.Output: ThreadConfined {
    /// The upstream's failure.
    public typealias Failure = Upstream.Failure
    /// The upstream's values, resolved on the scheduler.
    public typealias Output = Upstream.Output

    private let upstream: Upstream
    private let scheduler: S

    init(_ upstream: Upstream, _ scheduler: S) {
      self.upstream = upstream
      self.scheduler = scheduler
    }

    /// Subscribes `subscriber` to the handed-over values.
    public func receive<Sub>(subscriber: Sub) where Sub: Subscriber, Sub.Failure == Failure, Output == Sub.Input {
      let scheduler = self.scheduler
      upstream
        .map { value in Passed(value) }
        .receive(on: scheduler)
        .compactMap { $0.resolve(scheduler) }
        .receive(subscriber: subscriber)
    }
  }

  /// A value on its way to another thread.
  enum Passed<T: ThreadConfined> {
    case value(T)
    case reference(ThreadSafeReference<T>, Realm.Configuration)

    init(_ value: T) {
      if let (reference, configuration) = RealmPublishers.reference(value) {
        self = .reference(reference, configuration)
      } else {
        self = .value(value)
      }
    }

    /// The value on the thread `scheduler` runs on; nil when it no longer exists.
    func resolve<S: Scheduler>(_ scheduler: S) -> T? {
      switch self {
      case .value(let value): return value
      case .reference(let reference, let configuration):
        return RealmPublishers.realm(configuration, scheduler)?.resolve(reference)
      }
    }
  }
}
