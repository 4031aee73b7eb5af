import Foundation
import Synchronization

/// One recorded event, as a sink receives it: the fields of RealmSwift's `AuditEvent`
/// collection, and the metadata in force when it was recorded.
public struct RecordedEvent: Sendable, Equatable {
  /// Unique per event.
  public var id: ObjectId
  /// When the event was recorded (a scope's events: when it was committed).
  public var timestamp: Date
  /// The scope's activity, or the custom event's.
  public var activity: String
  /// "read", "write", or a custom event's type.
  public var event: String?
  /// JSON for reads and writes; anything for custom events.
  public var data: String?
  /// `EventConfiguration.metadata` (or `Events.updateMetadata`) at the time.
  public var metadata: [String: String]

  public init(
    id: ObjectId = .generate(), timestamp: Date = Date(), activity: String, event: String?, data: String?,
    metadata: [String: String] = [:]
  ) {
    self.id = id
    self.timestamp = timestamp
    self.activity = activity
    self.event = event
    self.data = data
    self.metadata = metadata
  }

  /// The event as one JSON object: `_id`, `timestamp` (ISO 8601, UTC, milliseconds),
  /// `activity`, `event`, `data`, then one field per metadata key, sorted.
  public var json: String {
    var out = JSONText()
    out.beginObject()
    out.key("_id")
    out.string(id.stringValue)
    out.key("timestamp")
    out.string(JSONText.iso8601(timestamp))
    out.key("activity")
    out.string(activity)
    out.key("event")
    if let event { out.string(event) } else { out.null() }
    out.key("data")
    if let data { out.string(data) } else { out.null() }
    for key in metadata.keys.sorted() where !["_id", "timestamp", "activity", "event", "data"].contains(key) {
      out.key(key)
      out.string(metadata[key] ?? "")
    }
    out.endObject()
    return out.text
  }
}

/// Where recorded events go. Called on the recorder's background thread, one batch at a
/// time; throwing keeps the batch for the next attempt and reports the error to
/// `EventConfiguration.errorHandler`.
public protocol EventSink: Sendable {
  /// Stores `events` durably, or throws.
  func store(_ events: [RecordedEvent]) throws
}

/// An event as the default sink stores it: RealmSwift's `AuditEvent` fields. The metadata
/// keys are the keys of `metadata` (a RealmSwift server schema has one column per key).
public final class AuditEvent: Object {
  @Persisted(primaryKey: true) public var _id: ObjectId
  @Persisted public var timestamp: Date
  @Persisted public var activity: String
  @Persisted public var event: String?
  @Persisted public var data: String?
  @Persisted public var metadata: Map<String, String>

  /// Only event files hold it: never part of a Realm opened with `objectTypes: nil`.
  override public class func shouldIncludeInDefaultSchema() -> Bool { false }

  /// The stored event as a sink received it.
  public var recordedEvent: RecordedEvent {
    RecordedEvent(
      id: _id, timestamp: timestamp, activity: activity, event: event, data: data,
      metadata: Dictionary(uniqueKeysWithValues: metadata.map { ($0.key, $0.value) }))
  }
}

/// The default sink: a Shoal file of `AuditEvent` objects, written with durable commits (one
/// per batch). `shoal events FILE` prints it.
public struct ShoalEventSink: EventSink {
  /// The Realm the events go to.
  public let configuration: Realm.Configuration
  /// The file, kept open from the first batch on: later batches do not open it again.
  private let file = OpenFile()

  private final class OpenFile: Sendable {
    let file = Mutex<SharedFile?>(nil)
  }

  /// Events stored in the Shoal file at `fileURL`.
  public init(fileURL: URL) {
    configuration = Realm.Configuration(fileURL: fileURL, objectTypes: [AuditEvent.self])
  }

  /// Events stored in the Realm `configuration` opens (it must manage `AuditEvent`).
  public init(configuration: Realm.Configuration) {
    self.configuration = configuration
  }

  /// The default file for the events of the Realm at `fileURL`: beside it, with
  /// `.events.shoal` appended to its name.
  public static func defaultFileURL(for fileURL: URL) -> URL {
    fileURL.deletingLastPathComponent().appendingPathComponent(fileURL.lastPathComponent + ".events.shoal")
  }

  public func store(_ events: [RecordedEvent]) throws {
    let realm = try Realm(configuration: configuration)
    file.file.withLock { $0 = $0 ?? realm.core.file }
    try realm.write {
      for recorded in events {
        let event = AuditEvent()
        event._id = recorded.id
        event.timestamp = recorded.timestamp
        event.activity = recorded.activity
        event.event = recorded.event
        event.data = recorded.data
        for (key, value) in recorded.metadata { event.metadata[key] = value }
        realm.add(event, update: .modified)
      }
    }
  }
}

/// A sink appending one JSON object per line (`RecordedEvent.json`) to a file, fsynced per
/// batch.
public struct JSONLinesEventSink: EventSink {
  /// The file written.
  public let fileURL: URL

  public init(fileURL: URL) { self.fileURL = fileURL }

  public func store(_ events: [RecordedEvent]) throws {
    let text = events.map { $0.json + "\n" }.joined()
    let fd = open(fileURL.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      throw Realm.Error(
        .fileAccess, "Unable to open the event file '\(fileURL.path)': \(String(cString: strerror(errno))).")
    }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
      let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + written }, $0.count - written) }
      if n < 0, errno == EINTR { continue }
      guard n > 0 else {
        throw Realm.Error(
          .fileAccess, "Unable to write the event file '\(fileURL.path)': \(String(cString: strerror(errno))).")
      }
      written += n
    }
    guard fsync(fd) == 0 else {
      throw Realm.Error(
        .fileAccess, "Unable to sync the event file '\(fileURL.path)': \(String(cString: strerror(errno))).")
    }
  }
}
