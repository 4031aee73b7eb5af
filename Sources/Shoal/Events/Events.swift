import Foundation
import ShoalStorage

/// Configuration parameters for Realm event recording, as in RealmSwift.
///
/// Enable recording by setting `Realm.Configuration.eventConfiguration` to any non-nil
/// `EventConfiguration`; `realm.events` then records scopes and custom events. RealmSwift
/// uploads events through its sync service, which does not exist here: Shoal hands them to
/// an `EventSink` instead, by default a Shoal file beside the database (`ShoalEventSink`).
@frozen public struct EventConfiguration: Sendable {
  /// Metadata attached to each event generated (each key becomes a field of the event).
  public var metadata: [String: String]?
  /// Kept for source compatibility with RealmSwift, where it names the uploaded partitions;
  /// Shoal does not use it.
  public var partitionPrefix: String = "events"
  /// A logger callback function. Called on the background event thread for what the
  /// recorder does (a batch stored, a sink failing and being retried).
  public typealias LoggerFunction = @Sendable (Logger.Level, String) -> Void
  /// Reports the recorder's work; nil sends it to `Logger.shared` (category `Shoal`).
  public var logger: LoggerFunction?
  /// Called on the background event thread when the sink fails to store events. The events
  /// are kept and offered to the sink again with the next batch (up to
  /// `EventConfiguration.retainedEventLimit` of them), so a passing failure loses nothing.
  /// If nil, the error is logged at `error`.
  public var errorHandler: (@Sendable (Swift.Error) -> Void)?
  /// Where events go; nil means a `ShoalEventSink` beside the database file (for an in-memory
  /// Realm, an in-memory Realm of its own).
  public var sink: (any EventSink)?

  /// The most events kept in memory for a failing sink; older ones beyond it are dropped
  /// (and reported to `errorHandler`).
  public static let retainedEventLimit = 100_000

  /// Creates an `EventConfiguration` which enables Realm event recording.
  public init(
    metadata: [String: String]? = nil, partitionPrefix: String = "events", logger: LoggerFunction? = nil,
    errorHandler: (@Sendable (Swift.Error) -> Void)? = nil, sink: (any EventSink)? = nil
  ) {
    self.metadata = metadata
    self.partitionPrefix = partitionPrefix
    self.logger = logger
    self.errorHandler = errorHandler
    self.sink = sink
  }
}

/// Realm event recording: every read and write performed on a Realm inside a scope, and
/// custom events. Enable it with `Realm.Configuration.eventConfiguration`, then use the
/// `events` property of the `Realm`.
public struct Events {
  let context: EventContext

  /// Begins recording events with the given activity name.
  ///
  /// All objects read and all objects written inside the scope are reported when it is
  /// committed: reads as "read" events (`{"type": Class, "value": [objects]}`), each write
  /// transaction as a "write" event (per class, its insertions, deletions, and
  /// modifications with the old object and the new values of the properties that changed).
  /// - returns: A scope object used to commit or cancel the scope.
  public func beginScope(activity: String) -> Scope {
    Scope(context: context, id: context.beginScope(activity: activity))
  }

  /// Records a custom event, outside any scope.
  ///
  /// The event is stored by the sink on the background event thread; `completion` is
  /// called there once it has been stored (nil) or the sink failed (the error).
  /// - Parameters:
  ///   - activity: The activity name, stored as-is in the `activity` field.
  ///   - eventType: The type of event, stored as-is in the `event` field.
  ///   - data: The payload, stored as-is in the `data` field.
  ///   - completion: Called once the event was stored or failed to be.
  public func recordEvent(
    activity: String, eventType: String? = nil, data: String? = nil,
    completion: (@Sendable (Swift.Error?) -> Void)? = nil
  ) {
    context.record(
      [context.makeEvent(activity: activity, type: eventType, data: data, metadata: context.metadata)],
      completion: completion)
  }

  /// Replaces the metadata supplied in the event configuration with new values. A scope
  /// already active keeps the metadata it began with.
  public func updateMetadata(_ newMetadata: [String: String]) {
    context.metadata = newMetadata
  }

  /// Records custom events and waits until the sink stored them; throws the sink's error.
  public func recordEvent(activity: String, eventType: String? = nil, data: String? = nil) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Swift.Error>) in
      recordEvent(activity: activity, eventType: eventType, data: data) { error in
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
      }
    }
  }

  /// An active event scope, which can be committed or cancelled.
  public final class Scope {
    let context: EventContext
    let id: UInt64

    init(context: EventContext, id: UInt64) {
      self.context = context
      self.id = id
    }

    /// Ends the scope and hands its events to the sink, on the background event thread;
    /// `completion` is called there once they are stored (nil) or the sink failed.
    ///
    /// Committing a scope that was already committed or cancelled is a programming error.
    public func commit(completion: (@Sendable (Swift.Error?) -> Void)? = nil) {
      guard let events = context.endScope(id) else {
        fatalError("Cannot commit an event scope which is no longer active (it was committed or cancelled).")
      }
      context.record(events, completion: completion)
    }

    /// Ends the scope and waits until the sink stored its events; throws the sink's error.
    public func commit() async throws {
      guard let events = context.endScope(id) else {
        fatalError("Cannot commit an event scope which is no longer active (it was committed or cancelled).")
      }
      let context = context
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Swift.Error>) in
        context.record(events) { error in
          if let error { continuation.resume(throwing: error) } else { continuation.resume() }
        }
      }
    }

    /// Ends the scope and discards its events.
    ///
    /// Cancelling a scope that was already committed or cancelled is a programming error.
    public func cancel() {
      guard context.endScope(id) != nil else {
        fatalError("Cannot cancel an event scope which is no longer active (it was committed or cancelled).")
      }
    }

    /// True until the scope is committed or cancelled.
    public var isActive: Bool { context.isActive(id) }

    deinit {
      guard context.isActive(id) else { return }
      Log.write(.warn, .shoal, "Deallocating an active event scope. The scope's events will be discarded.")
      _ = context.endScope(id)
    }
  }
}

extension Realm {
  /// The event recorder of this Realm: nil unless `Configuration.eventConfiguration` was set
  /// when it was opened.
  public var events: Events? { core.events.map(Events.init(context:)) }
}
