import Dispatch
import Foundation
import ShoalStorage
import Synchronization

/// The event recording of one Realm instance (confined to its thread, like the Realm): the
/// active scopes and what they collected. Storing happens on the `EventRecorder`'s queue.
final class EventContext {
  let recorder: EventRecorder
  var metadata: [String: String]
  private var scopes: [UInt64: ScopeState] = [:]
  private var nextScope: UInt64 = 1

  struct ScopeState {
    var activity: String
    var metadata: [String: String]
    var events: [Pending] = []
  }

  /// A read of objects of one class, or one write transaction, and when it happened.
  enum Pending {
    case read(type: String, keys: [ObjectKey], objects: [String], at: Date)
    case write(String, at: Date)
  }

  init(configuration: EventConfiguration, realm: Realm.Configuration) {
    metadata = configuration.metadata ?? [:]
    recorder = EventRecorder.shared(for: configuration, realm: realm)
  }

  var isRecording: Bool { !scopes.isEmpty }

  func beginScope(activity: String) -> UInt64 {
    let id = nextScope
    nextScope += 1
    scopes[id] = ScopeState(activity: activity, metadata: metadata)
    return id
  }

  func isActive(_ id: UInt64) -> Bool { scopes[id] != nil }

  /// Ends scope `id`; its events, nil if it was not active.
  func endScope(_ id: UInt64) -> [RecordedEvent]? {
    guard let scope = scopes.removeValue(forKey: id) else { return nil }
    return scope.events.map { pending in
      switch pending {
      case .read(let type, _, let objects, let now):
        var out = JSONText()
        out.beginObject()
        out.key("type")
        out.string(type)
        out.key("value")
        out.raw("[" + objects.joined(separator: ",") + "]")
        out.endObject()
        return makeEvent(activity: scope.activity, type: "read", data: out.text, metadata: scope.metadata, at: now)
      case .write(let data, let now):
        return makeEvent(activity: scope.activity, type: "write", data: data, metadata: scope.metadata, at: now)
      }
    }
  }

  func makeEvent(
    activity: String, type: String?, data: String?, metadata: [String: String], at date: Date = Date()
  ) -> RecordedEvent {
    RecordedEvent(id: .generate(), timestamp: date, activity: activity, event: type, data: data, metadata: metadata)
  }

  func record(_ events: [RecordedEvent], completion: (@Sendable (Swift.Error?) -> Void)?) {
    recorder.submit(events, completion: completion)
  }

  /// An object of `table` was read: added to every active scope (consecutive reads of one
  /// class make one "read" event, each object once).
  func recordRead(_ table: TableInfo, _ key: ObjectKey, core: RealmCore) {
    guard let row = core.row(table, key) else { return }
    let json = EventJSON.object(row, table: table, core: core)
    for id in Array(scopes.keys) {
      guard var scope = scopes[id] else { continue }
      if case .read(let type, var keys, var objects, let date)? = scope.events.last, type == table.name {
        guard !keys.contains(key) else { continue }
        keys.append(key)
        objects.append(json)
        scope.events[scope.events.count - 1] = .read(type: type, keys: keys, objects: objects, at: date)
      } else {
        scope.events.append(.read(type: table.name, keys: [key], objects: [json], at: Date()))
      }
      scopes[id] = scope
    }
  }

  /// A write transaction committed the changes `summary` describes, from the state in
  /// `old`: one "write" event in every active scope.
  func recordWrite(_ summary: ChangeSummary, old: ReadTransaction, core: RealmCore) {
    var out = JSONText()
    out.beginObject()
    for name in summary.classes.keys.sorted() {
      guard let changes = summary.classes[name], !changes.isEmpty, let table = core.table(named: name) else {
        continue
      }
      let insertions = changes.inserted.sorted().compactMap { key in
        core.row(table, key).map { EventJSON.object($0, table: table, core: core) }
      }
      let deletions = changes.deleted.sorted().compactMap { key in
        core.row(table, key, in: old).map { EventJSON.object($0, table: table, core: core, snapshot: old) }
      }
      var modifications: [String] = []
      for (key, mask) in changes.modified.sorted(by: { $0.key < $1.key }) {
        guard let before = core.row(table, key, in: old), let after = core.row(table, key) else { continue }
        let changed = table.properties.indices.filter {
          ChangeSummary.bit(mask, $0) && $0 < before.count && $0 < after.count && before[$0] != after[$0]
        }
        guard !changed.isEmpty else { continue }
        var entry = JSONText()
        entry.beginObject()
        entry.key("oldValue")
        entry.raw(EventJSON.object(before, table: table, core: core, snapshot: old))
        entry.key("newValue")
        entry.raw(EventJSON.object(after, table: table, core: core, only: Set(changed)))
        entry.endObject()
        modifications.append(entry.text)
      }
      // As RealmSwift's event library: only the kinds of change that happened are listed.
      let kinds = [("insertions", insertions), ("deletions", deletions), ("modifications", modifications)]
        .filter { !$0.1.isEmpty }
      guard !kinds.isEmpty else { continue }
      out.key(name)
      out.beginObject()
      for (kind, items) in kinds {
        out.key(kind)
        out.raw("[" + items.joined(separator: ",") + "]")
      }
      out.endObject()
    }
    out.endObject()
    let data = out.text
    guard data != "{}" else { return }
    let now = Date()
    for id in scopes.keys { scopes[id]?.events.append(.write(data, at: now)) }
  }
}

/// Stores events through a sink on a serial background queue, one recorder per sink (for
/// the default sink, per database file), so callers never wait for storage. A batch the
/// sink fails to store is reported and kept, then offered again before the next one.
final class EventRecorder: Sendable {
  let sink: any EventSink
  let errorHandler: (@Sendable (Swift.Error) -> Void)?
  let logger: EventConfiguration.LoggerFunction?
  private let queue = DispatchQueue(label: "io.shoal.events")
  private let retained = Mutex<[RecordedEvent]>([])

  init(sink: any EventSink, configuration: EventConfiguration) {
    self.sink = sink
    errorHandler = configuration.errorHandler
    logger = configuration.logger
  }

  private static let registry = Mutex<[String: EventRecorder]>([:])

  /// The recorder for a Realm's configuration: the configured sink, or the default one for
  /// its file (shared by every Realm instance of the file in this process).
  static func shared(for configuration: EventConfiguration, realm: Realm.Configuration) -> EventRecorder {
    if let sink = configuration.sink { return EventRecorder(sink: sink, configuration: configuration) }
    let key = realm.fileKey
    return registry.withLock { recorders in
      if let existing = recorders[key] { return existing }
      let sink: ShoalEventSink
      // The events of an encrypted Realm are encrypted with its key.
      if let url = realm.fileURL {
        sink = ShoalEventSink(
          configuration: Realm.Configuration(
            fileURL: ShoalEventSink.defaultFileURL(for: url), encryptionKey: realm.encryptionKey))
      } else {
        sink = ShoalEventSink(
          configuration: Realm.Configuration(
            inMemoryIdentifier: (realm.inMemoryIdentifier ?? "") + ".events", encryptionKey: realm.encryptionKey))
      }
      let recorder = EventRecorder(sink: sink, configuration: configuration)
      recorders[key] = recorder
      return recorder
    }
  }

  private func log(_ level: LogLevel, _ message: String) {
    if let logger { logger(level, message) } else { Log.write(level, .shoal, message) }
  }

  func submit(_ events: [RecordedEvent], completion: (@Sendable (Swift.Error?) -> Void)?) {
    queue.async { [self] in
      let batch = retained.withLock { held -> [RecordedEvent] in
        defer { held = [] }
        return held + events
      }
      guard !batch.isEmpty else {
        completion?(nil)
        return
      }
      do {
        try sink.store(batch)
        log(.debug, "Stored \(batch.count) event(s)")
        completion?(nil)
      } catch {
        var dropped = 0
        retained.withLock { held in
          held = batch + held
          dropped = max(0, held.count - EventConfiguration.retainedEventLimit)
          if dropped > 0 { held.removeFirst(dropped) }
        }
        log(
          .error,
          "The event sink failed to store \(batch.count) event(s); they are kept for the next batch"
            + (dropped > 0 ? " (\(dropped) of the oldest dropped: over the limit)" : "") + ": \(error)")
        if let errorHandler { errorHandler(error) }
        completion?(error)
      }
    }
  }

  /// Waits until every batch submitted so far was handled.
  func drain() { queue.sync {} }
}
