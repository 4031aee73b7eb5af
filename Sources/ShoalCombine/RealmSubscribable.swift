import Dispatch
import Foundation
import OpenCombine
import Shoal
import Synchronization

/// A value whose changes can be published: objects, collections, maps, sectioned results and
/// projections (RealmSwift's `RealmSubscribable`). The publishers use these members; call the
/// publishers (`valuePublisher(_:keyPaths:)`, `collectionPublisher`, `objectWillChange`) instead.
public protocol RealmSubscribable {
  /// Registers `subscriber` for the value itself after each change (and, for collections, at
  /// once), delivered on `queue` or, without one, on this thread.
  func _observe<S>(_ keyPaths: [String]?, on queue: DispatchQueue?, _ subscriber: S) -> NotificationToken
  where S: Subscriber, S.Input == Self
  /// Registers `subscriber` for a `Void` after each change.
  func _observe<S>(_ keyPaths: [String]?, _ subscriber: S) -> NotificationToken where S: Subscriber, S.Input == Void
}

// MARK: - Objects

extension ObjectBase: RealmSubscribable {
  /// Sends the object after each change, and finishes when it is deleted.
  public func _observe<S: Subscriber>(_ keyPaths: [String]?, on queue: DispatchQueue?, _ subscriber: S)
    -> NotificationToken where S.Input: ObjectBase
  {
    _observe(keyPaths: keyPaths, on: queue) { (change: ObjectChange<S.Input>) in
      switch change {
      case .change(let object, _): _ = subscriber.receive(object)
      case .deleted: subscriber.receive(completion: .finished)
      case .error: subscriber.receive(completion: .finished)
      }
    }
  }

  /// Sends a `Void` after each change.
  public func _observe<S>(_ keyPaths: [String]?, _ subscriber: S) -> NotificationToken
  where S: Subscriber, S.Input == Void {
    _observe(keyPaths: keyPaths, on: nil) { (_: ObjectChange<ObjectBase>) in _ = subscriber.receive() }
  }
}

// MARK: - Collections

extension RealmPublishers {
  /// Sends the value a collection's change carries to `subscriber`, or finishes it when the
  /// change is an error.
  static func send<Change: _HandedOverChange, S: Subscriber>(_ change: Change, to subscriber: S)
  where S.Input == Change._HandedOverValue {
    if let value = change._handedOverValue {
      _ = subscriber.receive(value)
    } else {
      subscriber.receive(completion: .finished)
    }
  }
}

extension RealmSubscribable where Self: RealmCollection {
  /// Sends the collection at once and after each change.
  public func _observe<S>(_ keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ subscriber: S)
    -> NotificationToken where S: Subscriber, S.Input == Self
  {
    observe(keyPaths: keyPaths, on: queue) { RealmPublishers.send($0, to: subscriber) }
  }

  /// Sends a `Void` at once and after each change.
  public func _observe<S: Subscriber>(_ keyPaths: [String]? = nil, _ subscriber: S) -> NotificationToken
  where S.Input == Void {
    observe(keyPaths: keyPaths, on: nil) { _ in _ = subscriber.receive() }
  }
}

extension Results: RealmSubscribable {}
extension List: RealmSubscribable {}
extension MutableSet: RealmSubscribable {}
extension LinkingObjects: RealmSubscribable {}
extension AnyRealmCollection: RealmSubscribable {}

// MARK: - Maps

extension RealmSubscribable where Self: RealmKeyedCollection {
  /// Sends the map at once and after each change.
  public func _observe<S>(_ keyPaths: [String]?, on queue: DispatchQueue? = nil, _ subscriber: S)
    -> NotificationToken where S: Subscriber, S.Input == Self
  {
    observe(keyPaths: keyPaths, on: queue) { RealmPublishers.send($0, to: subscriber) }
  }

  /// Sends a `Void` at once and after each change.
  public func _observe<S: Subscriber>(_ keyPaths: [String]? = nil, _ subscriber: S) -> NotificationToken
  where S.Input == Void {
    observe(keyPaths: keyPaths, on: nil) { _ in _ = subscriber.receive() }
  }
}

extension Map: RealmSubscribable {}

// MARK: - Sectioned results

extension RealmSubscribable where Self: RealmSectionedResult {
  /// Sends the sectioned results (or section) at once and after each change.
  public func _observe<S>(_ keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ subscriber: S)
    -> NotificationToken where S: Subscriber, S.Input == Self
  {
    observe(keyPaths: keyPaths, on: queue) { RealmPublishers.send($0, to: subscriber) }
  }

  /// Sends a `Void` at once and after each change.
  public func _observe<S: Subscriber>(_ keyPaths: [String]? = nil, _ subscriber: S) -> NotificationToken
  where S.Input == Void {
    observe(keyPaths: keyPaths, on: nil) { _ in _ = subscriber.receive() }
  }
}

extension SectionedResults: RealmSubscribable {}
extension ResultsSection: RealmSubscribable {}

// MARK: - Projections

extension Projection: RealmSubscribable {
  /// Sends the projection after each change of a projected property, and finishes when its
  /// object is deleted.
  public func _observe<S: Subscriber>(_ keyPaths: [String]?, on queue: DispatchQueue?, _ subscriber: S)
    -> NotificationToken where S.Input: ProjectionObservable
  {
    // The publisher's input is this projection's own class (a subclass of `Projection`), so
    // the changes are made of that class.
    guard let projection = self as? S.Input else {
      fatalError("A publisher of \(S.Input.self) cannot observe a \(type(of: self))")
    }
    return Self.observe(projection, keyPaths, queue, subscriber)
  }

  private static func observe<P: ProjectionObservable, S: Subscriber>(
    _ projection: P, _ keyPaths: [String]?, _ queue: DispatchQueue?, _ subscriber: S
  ) -> NotificationToken where S.Input == P {
    projection.observe(keyPaths: keyPaths, on: queue) { change in
      switch change {
      case .change(let projection, _): _ = subscriber.receive(projection)
      case .deleted, .error: subscriber.receive(completion: .finished)
      }
    }
  }

  /// Sends a `Void` after each change of a projected property.
  public func _observe<S>(_ keyPaths: [String]?, _ subscriber: S) -> NotificationToken
  where S: Subscriber, S.Input == Void {
    observe(keyPaths: keyPaths, on: nil) { _ in _ = subscriber.receive() }
  }
}

// MARK: - Subscriptions

/// The subscription of a Realm publisher: cancelling it invalidates the notification token,
/// which stops the notifications and releases the version they pinned.
///
/// A publisher hands the subscription to its subscriber before it registers the observation,
/// since a thread without a run loop gets the first value during registration.
public struct ObservationSubscription: Subscription {
  /// The token, once registered, and whether the subscription was cancelled first.
  private final class State: Sendable {
    let value = Mutex<(token: NotificationToken?, cancelled: Bool)>((nil, false))
  }
  private let state = State()

  init() {}

  init(token: NotificationToken) {
    attach(token)
  }

  /// Keeps `token` to invalidate on `cancel()`; invalidates it at once if already cancelled.
  func attach(_ token: NotificationToken) {
    let cancelled = state.value.withLock { value in
      value.token = token
      return value.cancelled
    }
    if cancelled { _ = token.invalidate() }
  }

  /// A unique identifier for identifying publisher streams.
  public var combineIdentifier: CombineIdentifier { CombineIdentifier(state) }

  /// Does nothing: Realm publishers send every change (they coalesce what arrives between two
  /// deliveries) and do not support backpressure, as in RealmSwift.
  public func request(_ demand: Subscribers.Demand) {}

  /// Stops emitting values on this subscription.
  public func cancel() {
    let token = state.value.withLock { value in
      value.cancelled = true
      return value.token
    }
    _ = token?.invalidate()
  }
}

extension RealmPublishers {
  /// Gives `subscriber` its subscription, then registers the observation `observe` makes.
  static func subscribe<S: Subscriber>(_ subscriber: S, _ observe: () -> NotificationToken) -> NotificationToken {
    let subscription = ObservationSubscription()
    subscriber.receive(subscription: subscription)
    let token = observe()
    subscription.attach(token)
    return token
  }
}
