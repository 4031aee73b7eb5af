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

  /// An event with these fields; `id` defaults to a new `ObjectId`, `timestamp` to now.
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

/// The default sink: a Shoal file with one `AuditEvent` object per event, RealmSwift's
/// event schema: `_id` (primary key), `timestamp`, `activity`, `event`, `data`, and one
/// optional `String` column per metadata key (added by a schema migration the first time a
/// key appears). One durable commit per batch. `shoal events FILE` prints it;
/// `ShoalEventSink.events(in:)` reads it.
public struct ShoalEventSink: EventSink {
  /// The Realm the events go to (its `objectTypes` are ignored).
  public let configuration: Realm.Configuration
  private let state = State()

  /// The file kept open between batches, and the metadata columns and schema version last
  /// seen in it.
  private final class State: Sendable {
    let value = Mutex<(file: SharedFile?, columns: [String]?, version: UInt64)>((nil, nil, 0))
  }

  /// The class events are stored as.
  public static let className = "AuditEvent"
  /// The columns every event has; any other column is a metadata key.
  static let baseColumns = ["_id", "timestamp", "activity", "event", "data"]

  /// Events stored in the Shoal file at `fileURL`.
  public init(fileURL: URL) {
    self.init(configuration: Realm.Configuration(fileURL: fileURL))
  }

  /// Events stored in the Realm `configuration` opens (a file or an in-memory Realm).
  public init(configuration: Realm.Configuration) {
    var configuration = configuration
    configuration.objectTypes = []
    configuration.eventConfiguration = nil
    self.configuration = configuration
  }

  /// The default file for the events of the Realm at `fileURL`: beside it, with
  /// `.events.shoal` appended to its name.
  public static func defaultFileURL(for fileURL: URL) -> URL {
    fileURL.deletingLastPathComponent().appendingPathComponent(fileURL.lastPathComponent + ".events.shoal")
  }

  /// The `AuditEvent` schema with `metadataKeys` as columns, in that order.
  static func schema(metadataKeys: [String]) -> ObjectSchema {
    func column(_ name: String, _ type: PropertyType, optional: Bool = true, primary: Bool = false) -> Property {
      Property(
        name: name, type: type, isOptional: optional, collection: .none, objectClassName: nil,
        linkOriginPropertyName: nil, isIndexed: false, isPrimary: primary)
    }
    let base = [
      column("_id", .objectId, optional: false, primary: true), column("timestamp", .date, optional: false),
      column("activity", .string, optional: false), column("event", .string), column("data", .string),
    ]
    return ObjectSchema(
      className: className, isEmbedded: false, properties: base + metadataKeys.map { column($0, .string) })
  }

  /// The metadata columns of the file and its schema version (no columns and the version
  /// of an empty file when it has no events yet).
  private func stored() throws -> (columns: [String]?, version: UInt64) {
    var configuration = configuration
    configuration.schemaVersion = try ShoalEventSink.storedVersion(configuration)
    let realm = Realm(core: try RealmCore(configuration: configuration))
    let columns = realm.core.table(named: ShoalEventSink.className)?.properties.map(\.name)
      .filter { !ShoalEventSink.baseColumns.contains($0) }
    return (columns, realm.core.schema.schemaVersion)
  }

  /// Writes `events` as `AuditEvent` objects in one write transaction. A metadata key that is not yet a
  /// column first adds an optional `String` column by a schema migration (earlier events get null). The
  /// file stays open between batches. When a batch fails, the columns remembered are dropped, so the next
  /// batch reads them from the file again, and the error is rethrown.
  public func store(_ events: [RecordedEvent]) throws {
    var (columns, version) = state.value.withLock { ($0.columns, $0.version) }
    if columns == nil { (columns, version) = try stored() }
    let keys = Set(events.flatMap(\.metadata.keys)).subtracting(ShoalEventSink.baseColumns)
    var configuration = configuration
    let known = columns ?? []
    let added = keys.subtracting(known).sorted()
    if !added.isEmpty, columns != nil {
      // New optional columns: a migration that only adds them (existing events get null).
      version += 1
      configuration.migrationBlock = { _, _ in }
    }
    configuration.schemaVersion = version
    configuration.dynamicSchemas = [ShoalEventSink.schema(metadataKeys: known + added)]
    do {
      let realm = Realm(core: try RealmCore(configuration: configuration))
      state.value.withLock { $0 = ($0.file ?? realm.core.file, known + added, version) }
      guard let table = realm.core.table(named: ShoalEventSink.className) else {
        throw Realm.Error(.fail, "The event file has no \(ShoalEventSink.className) class.")
      }
      try realm.write {
        for event in events {
          let row = table.properties.map { property -> RowValue in
            switch property.name {
            case "_id": return .objectId(event.id)
            case "timestamp": return .date(event.timestamp)
            case "activity": return .string(event.activity)
            case "event": return event.event.map(RowValue.string) ?? .null
            case "data": return event.data.map(RowValue.string) ?? .null
            default: return event.metadata[property.name].map(RowValue.string) ?? .null
            }
          }
          realm.core.createDynamic(table, row: row)
        }
      }
    } catch {
      // Another process may have changed the file's schema: look again next time.
      state.value.withLock { $0.columns = nil }
      throw error
    }
  }

  /// The events stored in the event file at `fileURL`, oldest first.
  public static func events(in fileURL: URL) throws -> [RecordedEvent] {
    try events(in: Realm.Configuration(fileURL: fileURL, readOnly: true))
  }

  /// The schema version a file has now (each new metadata key raised it by one).
  static func storedVersion(_ configuration: Realm.Configuration) throws -> UInt64 {
    if let url = configuration.fileURL, !FileManager.default.fileExists(atPath: url.path) { return 0 }
    let file = try SharedFile.open(configuration)
    do {
      return try file.store.read { snapshot in
        guard try snapshot.hasKeyspace(RealmSchema.metaKeyspace),
          let bytes = try snapshot.get(RealmSchema.versionKey, in: RealmSchema.metaKeyspace)
        else { return 0 }
        return TableInfo.key(from: bytes)
      }
    } catch {
      throw Realm.Error(storage: error, fileURL: configuration.fileURL)
    }
  }

  /// The events stored in the Realm `configuration` opens, oldest first.
  public static func events(in configuration: Realm.Configuration) throws -> [RecordedEvent] {
    var configuration = configuration
    configuration.objectTypes = []
    configuration.eventConfiguration = nil
    if let url = configuration.fileURL, !FileManager.default.fileExists(atPath: url.path) {
      throw Realm.Error(.fileNotFound, "No event file at '\(url.path)'.")
    }
    configuration.schemaVersion = try storedVersion(configuration)
    let realm = Realm(core: try RealmCore(configuration: configuration))
    guard let table = realm.core.table(named: className) else {
      let path = configuration.fileURL?.path ?? ""
      throw Realm.Error(
        .invalidDatabase,
        "'\(path)' is not an event file: it has no '\(className)' class. Pass the file the event recorder "
          + "writes (`<database>.events.shoal` by default) or a JSON Lines file.")
    }
    let properties = table.properties
    // Oldest first; events stored in one batch keep their order.
    let stored = realm.core.allKeys(table).compactMap { key -> RecordedEvent? in
      guard let row = realm.core.row(table, key) else { return nil }
      var event = RecordedEvent(id: ObjectId(), timestamp: Date(), activity: "", event: nil, data: nil)
      for (property, value) in zip(properties, row) {
        switch (property.name, value) {
        case ("_id", .objectId(let id)): event.id = id
        case ("timestamp", .date(let date)): event.timestamp = date
        case ("activity", .string(let text)): event.activity = text
        case ("event", .string(let text)): event.event = text
        case ("data", .string(let text)): event.data = text
        case (let name, .string(let text)) where !baseColumns.contains(name): event.metadata[name] = text
        default: break
        }
      }
      return event
    }
    return stored.enumerated().sorted { ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset) }
      .map(\.element)
  }
}

/// A sink appending one JSON object per line (`RecordedEvent.json`) to a file, fsynced per
/// batch.
public struct JSONLinesEventSink: EventSink {
  /// The file written.
  public let fileURL: URL

  /// A sink appending to the file at `fileURL` (created by the first batch).
  public init(fileURL: URL) { self.fileURL = fileURL }

  /// Appends each event's `json` and a newline to `fileURL` (created with mode 0644 if missing), then
  /// fsyncs it. Throws `Realm.Error` with code `.fileAccess` when the file cannot be opened, written or
  /// synced; lines already appended by a failed batch stay in the file.
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
