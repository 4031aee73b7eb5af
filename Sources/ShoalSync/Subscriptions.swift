import Foundation
import Shoal

/// The state of a subscription set (RealmSwift's `SyncSubscriptionState`).
public enum SyncSubscriptionState: Equatable, Sendable {
  /// The device holds every row the set's queries match (and none they do not).
  case complete
  /// The set cannot be synced: a query PostgreSQL cannot run (see `SyncError`).
  case error(any Error)
  /// The agent has not applied the set yet.
  case pending
  /// A newer set replaced this one before it was applied.
  case superseded

  /// Whether both are the same state (errors compare by description).
  public static func == (lhs: SyncSubscriptionState, rhs: SyncSubscriptionState) -> Bool {
    switch (lhs, rhs) {
    case (.complete, .complete), (.pending, .pending), (.superseded, .superseded): return true
    case (.error(let a), .error(let b)): return String(describing: a) == String(describing: b)
    default: return false
    }
  }
}

/// The subscriptions' document in the file (`_sync`, key `subscriptions`).
struct SubscriptionDocument: Codable, Equatable {
  struct Entry: Codable, Equatable {
    var id: String
    var name: String?
    var className: String
    var query: String
    /// The SQL condition; nil when the query cannot be translated (then `problem` says why).
    var sql: String?
    var problem: String?
    var createdAt: Date
    var updatedAt: Date
  }

  var version: Int
  var subscriptions: [Entry]
  /// Why this version cannot be synced, if it cannot.
  var error: String?

  static let key = "subscriptions"
  static let appliedKey = "subscriptions.applied"

  static func load(_ realm: Realm) -> SubscriptionDocument? {
    guard let bytes = realm.syncState(key) else { return nil }
    return try? JSONDecoder().decode(SubscriptionDocument.self, from: Data(bytes))
  }

  /// The version the agent last applied (0 before any).
  static func applied(_ realm: Realm) -> Int {
    guard let bytes = realm.syncState(appliedKey), bytes.count == 8 else { return 0 }
    return Int(bytes.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) })
  }

  static func setApplied(_ version: Int, in realm: Realm) {
    var value = Int64(version).littleEndian
    realm.setSyncState(appliedKey, withUnsafeBytes(of: &value) { Array($0) })
  }

  /// Per synced class, the SQL condition its rows must meet to be on the device: nil when the
  /// file never had subscriptions (every row of every class syncs); otherwise the OR of the
  /// class's subscriptions, `FALSE` for a class without any.
  func conditions(classes: [String]) -> [String: String] {
    var byClass: [String: [String]] = [:]
    for entry in subscriptions { if let sql = entry.sql { byClass[entry.className, default: []].append(sql) } }
    var result: [String: String] = [:]
    for name in classes {
      let terms = byClass[name] ?? []
      result[name] = terms.isEmpty ? "FALSE" : "(" + terms.joined(separator: " OR ") + ")"
    }
    return result
  }
}

/// A query subscription to add (RealmSwift's `QuerySubscription`): the objects of class `T`
/// matching a query are synced to the device.
///
/// ```swift
/// try await realm.subscriptions.update {
///   realm.subscriptions.append(QuerySubscription<Task>(name: "mine") { $0.owner == "ann" })
/// }
/// ```
public struct QuerySubscription<T: Object> {
  let name: String?
  let className: String
  let predicate: String
  let arguments: [Any]

  /// The closure form of a query.
  public typealias QueryFunction = (Query<T>) -> Query<Bool>

  /// Every object of `T`.
  public init(name: String? = nil) {
    self.init(name: name, where: "TRUEPREDICATE")
  }

  /// The objects of `T` matching `query`.
  public init(name: String? = nil, query: QueryFunction) {
    let (predicate, arguments) = query(Query<T>.objects)._constructPredicate()
    self.name = name
    self.className = T.className()
    self.predicate = predicate
    self.arguments = arguments
  }

  /// The objects of `T` matching a predicate format string with its arguments.
  public init(name: String? = nil, where predicateFormat: String, _ args: Any...) {
    self.name = name
    self.className = T.className()
    self.predicate = predicateFormat
    self.arguments = args
  }
}

/// One subscription of a set (RealmSwift's `SyncSubscription`).
public struct SyncSubscription {
  let entry: SubscriptionDocument.Entry
  let set: SubscriptionSetStorage

  /// The name given, if any.
  public var name: String? { entry.name }
  /// When it was added.
  public var createdAt: Date { entry.createdAt }
  /// When its query last changed.
  public var updatedAt: Date { entry.updatedAt }
  /// Its query, as text with the constants in it.
  public var queryString: String { entry.query }
  /// The class it subscribes to.
  public var objectClassName: String { entry.className }

  /// Replaces its query (inside `SyncSubscriptionSet.update` only).
  public func updateQuery<T: Object>(toType type: T.Type, where query: (Query<T>) -> Query<Bool>) {
    let (predicate, arguments) = query(Query<T>.objects)._constructPredicate()
    set.replace(entry.id, className: T.className(), predicate: predicate, arguments: arguments)
  }

  /// Replaces its query with a predicate format string (inside `SyncSubscriptionSet.update`).
  public func updateQuery(to predicateFormat: String, _ args: Any...) {
    set.replace(entry.id, className: entry.className, predicate: predicateFormat, arguments: args)
  }
}

/// The editing state shared by a set and the subscriptions it hands out.
final class SubscriptionSetStorage {
  let realm: Realm

  init(realm: Realm) { self.realm = realm }

  /// The document being edited inside `update`, nil outside: kept per thread and file, so that
  /// every `realm.subscriptions` of the file on this thread sees the same edit.
  var editing: SubscriptionDocument? {
    get { Thread.current.threadDictionary[editingKey] as? SubscriptionDocument }
    set { Thread.current.threadDictionary[editingKey] = newValue }
  }

  private var editingKey: String {
    "shoal.subscriptions.editing:" + (realm.configuration.fileURL?.standardizedFileURL.path ?? "")
  }

  var current: SubscriptionDocument {
    editing ?? SubscriptionDocument.load(realm) ?? SubscriptionDocument(version: 0, subscriptions: [])
  }

  func edit(_ change: (inout SubscriptionDocument) -> Void) {
    guard var document = editing else {
      fatalError("Can only add, remove, or update subscriptions within a write subscription block.")
    }
    change(&document)
    editing = document
  }

  func entry(name: String?, className: String, predicate: String, arguments: [Any], id: String? = nil)
    -> SubscriptionDocument.Entry
  {
    let now = Date()
    var entry = SubscriptionDocument.Entry(
      id: id ?? UUID().uuidString, name: name, className: className, query: predicate, sql: nil, createdAt: now,
      updatedAt: now)
    do {
      let query = try realm.syncQuery(className: className, predicate: predicate, arguments: arguments)
      entry.query = query.text
      entry.sql = query.sql
    } catch {
      entry.query = predicate
      entry.problem = "\(error)"
    }
    return entry
  }

  func replace(_ id: String, className: String, predicate: String, arguments: [Any]) {
    edit { document in
      guard let index = document.subscriptions.firstIndex(where: { $0.id == id }) else { return }
      let old = document.subscriptions[index]
      var updated = entry(name: old.name, className: className, predicate: predicate, arguments: arguments, id: id)
      updated.createdAt = old.createdAt
      document.subscriptions[index] = updated
    }
  }
}

/// A Realm's flexible-sync subscriptions (RealmSwift's `SyncSubscriptionSet`): which objects
/// the device syncs. A file that never had subscriptions syncs every row of every class; once
/// a set is written, only the rows its queries match (a class without a subscription syncs
/// nothing). Widening a set downloads the rows newly matched; narrowing removes from the device
/// the rows no longer matched, without deleting them on the server. Queries are translated to
/// SQL `WHERE` conditions: see `Realm.syncQuery` for the subset.
///
/// ```swift
/// let subscriptions = realm.subscriptions
/// try await subscriptions.update {
///   subscriptions.append(QuerySubscription<Task>(name: "open") { $0.done == false })
/// }
/// ```
public struct SyncSubscriptionSet: Sequence {
  let storage: SubscriptionSetStorage

  /// The number of subscriptions.
  public var count: Int { storage.current.subscriptions.count }

  /// Runs `block`, in which the set may be changed, and saves the result as a new version of
  /// the set; `onComplete` runs (on a global queue) once the agent has applied it, or with the
  /// error that stops it.
  public func update(_ block: () -> Void, onComplete: (@Sendable ((any Error)?) -> Void)? = nil) {
    let version = save(block)
    guard let onComplete else { return }
    let configuration = storage.realm.configuration
    Task {
      do {
        try await SyncSubscriptionSet.waitFor(version, configuration)
        onComplete(nil)
      } catch {
        onComplete(error)
      }
    }
  }

  /// Runs `block`, in which the set may be changed, saves the result, and returns once the agent
  /// has applied it (the device holds exactly the rows it matches); throws the error that stops it.
  public func update(_ block: () -> Void) async throws {
    let version = save(block)
    try await SyncSubscriptionSet.waitFor(version, storage.realm.configuration)
  }

  private func save(_ block: () -> Void) -> Int {
    let realm = storage.realm
    realm.refresh()
    var document = storage.current
    document.version += 1
    storage.editing = document
    block()
    guard var edited = storage.editing else { return document.version }
    storage.editing = nil
    let problems = edited.subscriptions.compactMap(\.problem)
    edited.error = problems.isEmpty ? nil : problems.joined(separator: "; ")
    do {
      let bytes = [UInt8](try JSONEncoder().encode(edited))
      try realm.write { realm.setSyncState(SubscriptionDocument.key, bytes) }
    } catch {
      fatalError("Could not save the subscription set: \(error)")
    }
    return edited.version
  }

  static func waitFor(_ version: Int, _ configuration: Realm.Configuration) async throws {
    try await SyncSession.poll(configuration) { realm in
      if let document = SubscriptionDocument.load(realm), document.version == version, let error = document.error {
        throw SyncError.server(error)
      }
      return SubscriptionDocument.applied(realm) >= version
    }
  }

  /// Where the set stands: `.error` when a query cannot be synced, `.complete` once the agent
  /// applied it, `.pending` before.
  public var state: SyncSubscriptionState {
    let realm = storage.realm
    realm.refresh()
    let document = storage.current
    if let error = document.error { return .error(SyncError.server(error)) }
    return SubscriptionDocument.applied(realm) >= document.version ? .complete : .pending
  }

  private func subscription(_ entry: SubscriptionDocument.Entry) -> SyncSubscription {
    SyncSubscription(entry: entry, set: storage)
  }

  /// The subscription named `named`, if any.
  public func first(named: String) -> SyncSubscription? {
    storage.current.subscriptions.first { $0.name == named }.map(subscription)
  }

  /// The first subscription to `T` with the query `query`, if any.
  public func first<T: Object>(ofType type: T.Type, where query: (Query<T>) -> Query<Bool>) -> SyncSubscription? {
    let (predicate, arguments) = query(Query<T>.objects)._constructPredicate()
    return first(T.className(), predicate, arguments)
  }

  /// The first subscription to `T` with the predicate format `predicateFormat`, if any.
  public func first<T: Object>(ofType type: T.Type, where predicateFormat: String, _ args: Any...) -> SyncSubscription?
  {
    first(T.className(), predicateFormat, args)
  }

  private func first(_ className: String, _ predicate: String, _ arguments: [Any]) -> SyncSubscription? {
    let text = try? storage.realm.syncQuery(className: className, predicate: predicate, arguments: arguments).text
    return storage.current.subscriptions.first { $0.className == className && $0.query == (text ?? predicate) }
      .map(subscription)
  }

  /// Adds subscriptions (inside `update` only). One with the name of an existing subscription
  /// replaces its query; one equal to an existing unnamed subscription is not added twice.
  public func append<T: Object>(_ subscriptions: QuerySubscription<T>...) {
    for added in subscriptions {
      let entry = storage.entry(
        name: added.name, className: added.className, predicate: added.predicate, arguments: added.arguments)
      storage.edit { document in
        if let name = added.name, let index = document.subscriptions.firstIndex(where: { $0.name == name }) {
          var replaced = entry
          replaced.id = document.subscriptions[index].id
          replaced.createdAt = document.subscriptions[index].createdAt
          document.subscriptions[index] = replaced
        } else if !document.subscriptions.contains(where: {
          $0.name == nil && added.name == nil && $0.className == entry.className && $0.query == entry.query
        }) {
          document.subscriptions.append(entry)
        }
      }
    }
  }

  /// Removes the subscriptions to `T` with the query `query` (inside `update` only).
  public func remove<T: Object>(ofType type: T.Type, _ query: @escaping (Query<T>) -> Query<Bool>) {
    let (predicate, arguments) = query(Query<T>.objects)._constructPredicate()
    removeMatching(T.className(), predicate, arguments)
  }

  /// Removes the subscriptions to `T` with the predicate format `predicateFormat` (inside `update` only).
  public func remove<T: Object>(ofType type: T.Type, where predicateFormat: String, _ args: Any...) {
    removeMatching(T.className(), predicateFormat, args)
  }

  private func removeMatching(_ className: String, _ predicate: String, _ arguments: [Any]) {
    let text = (try? storage.realm.syncQuery(className: className, predicate: predicate, arguments: arguments).text)
    storage.edit { document in
      document.subscriptions.removeAll { $0.className == className && $0.query == (text ?? predicate) }
    }
  }

  /// Removes these subscriptions (inside `update` only).
  public func remove(_ subscriptions: SyncSubscription...) {
    let ids = Set(subscriptions.map(\.entry.id))
    storage.edit { $0.subscriptions.removeAll { ids.contains($0.id) } }
  }

  /// Removes the subscription named `named` (inside `update` only).
  public func remove(named: String) {
    storage.edit { $0.subscriptions.removeAll { $0.name == named } }
  }

  /// Removes every subscription, or only the unnamed ones (inside `update` only).
  public func removeAll(unnamedOnly: Bool = false) {
    storage.edit { $0.subscriptions.removeAll { !unnamedOnly || $0.name == nil } }
  }

  /// Removes every subscription to `T` (inside `update` only).
  public func removeAll<T: Object>(ofType type: T.Type) {
    storage.edit { $0.subscriptions.removeAll { $0.className == T.className() } }
  }

  /// The subscription at `position`, nil past the end.
  public subscript(position: Int) -> SyncSubscription? {
    let all = storage.current.subscriptions
    return all.indices.contains(position) ? subscription(all[position]) : nil
  }

  /// The first subscription, if any.
  public var first: SyncSubscription? { self[0] }

  /// The last subscription, if any.
  public var last: SyncSubscription? { self[count - 1] }

  /// The subscriptions, in the order they were added.
  public func makeIterator() -> IndexingIterator<[SyncSubscription]> {
    storage.current.subscriptions.map(subscription).makeIterator()
  }
}

extension Realm {
  /// The Realm's flexible-sync subscriptions (RealmSwift's `Realm.subscriptions`).
  public var subscriptions: SyncSubscriptionSet { SyncSubscriptionSet(storage: SubscriptionSetStorage(realm: self)) }
}
