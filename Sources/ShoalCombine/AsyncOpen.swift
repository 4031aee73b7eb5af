import Dispatch
import OpenCombine
import OpenCombineDispatch
import Shoal

extension Realm {
  /// A publisher that opens a Realm in the background and emits it, confined to the main queue
  /// (or the queue given to `receive(on:)`), then finishes; a failure to open is its error.
  ///
  /// ```swift
  /// let cancellable = Realm.asyncOpen(configuration: config)
  ///   .receive(on: DispatchQueue(label: "database").ocombine)
  ///   .sink(receiveCompletion: { print($0) }, receiveValue: { realm in print(realm.isEmpty) })
  /// ```
  public static func asyncOpen(configuration: Realm.Configuration = .defaultConfiguration)
    -> RealmPublishers.AsyncOpenPublisher
  {
    RealmPublishers.AsyncOpenPublisher(configuration: configuration)
  }
}

extension RealmPublishers {
  /// A publisher that emits an asynchronously opened Realm (`Realm.asyncOpen(configuration:)`).
  public struct AsyncOpenPublisher: Publisher {
    /// This publisher fails when the Realm cannot be opened.
    public typealias Failure = Error
    /// The opened Realm.
    public typealias Output = Realm

    private let configuration: Realm.Configuration
    private let callbackQueue: DispatchQueue

    init(configuration: Realm.Configuration, callbackQueue: DispatchQueue = .main) {
      self.configuration = configuration
      self.callbackQueue = callbackQueue
    }

    /// Opens the Realm for `subscriber`.
    public func receive<S>(subscriber: S) where S: Subscriber, S.Failure == Failure, Output == S.Input {
      let task = Realm.asyncOpen(configuration: configuration, callbackQueue: callbackQueue) { result in
        switch result {
        case .success(let realm):
          _ = subscriber.receive(realm)
          subscriber.receive(completion: .finished)
        case .failure(let error):
          subscriber.receive(completion: .failure(error))
        }
      }
      subscriber.receive(subscription: AsyncOpenSubscription(task: task))
    }

    /// Delivers the Realm on `scheduler`, a serial dispatch queue (`queue.ocombine`), confined
    /// to it. Any other scheduler stops the process.
    public func receive<S: Scheduler>(on scheduler: S) -> Self {
      Self(configuration: configuration, callbackQueue: RealmPublishers.queue(of: scheduler))
    }
  }
}

/// The subscription of `Realm.asyncOpen(configuration:)`'s publisher: cancelling it cancels
/// the open.
public struct AsyncOpenSubscription: Subscription {
  private let task: Realm.AsyncOpenTask
  private let identity = Identity()

  /// Gives the subscription an identity of its own.
  private final class Identity {}

  init(task: Realm.AsyncOpenTask) {
    self.task = task
  }

  /// A unique identifier for identifying publisher streams.
  public var combineIdentifier: CombineIdentifier { CombineIdentifier(identity) }

  /// Does nothing: the publisher emits one Realm.
  public func request(_ demand: Subscribers.Demand) {}

  /// Cancels the open.
  public func cancel() {
    task.cancel()
  }
}
