import Foundation
import ShoalStorage

/// A Realm: one database, opened on one thread (RealmSwift's `Realm`).
///
/// ```swift
/// let realm = try Realm(configuration: .init(fileURL: url))
/// try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
/// let puppies = realm.objects(Dog.self).filter("age < 2")
/// ```
///
/// Realm instances are cached per thread: opening the same file twice on one thread gives the
/// same instance. Each instance sees the version it last refreshed to (`refresh()`, or a write
/// transaction, moves it to the newest); commits of other threads and processes show up then.
public struct Realm {
  let core: RealmCore

  init(core: RealmCore) { self.core = core }

  /// Opens the Realm of `Realm.Configuration.defaultConfiguration`.
  public init() throws {
    try self.init(configuration: .defaultConfiguration)
  }

  /// Opens a Realm.
  public init(configuration: Configuration) throws {
    core = try RealmCache.core(for: configuration)
  }

  /// Opens a Realm confined to the serial `queue` (call it on that queue): its notifications
  /// are delivered on `queue`, where commits of any thread or process wake its observers and
  /// move it to the newest version. A nil queue is `init(configuration:)`.
  public init(configuration: Configuration = .defaultConfiguration, queue: DispatchQueue?) throws {
    guard let queue else {
      try self.init(configuration: configuration)
      return
    }
    self.init(core: try RealmCore.forQueue(configuration, queue))
  }

  /// Opens the Realm at `fileURL` with the default configuration's other settings.
  public init(fileURL: URL) throws {
    var configuration = Configuration.defaultConfiguration
    configuration.fileURL = fileURL
    try self.init(configuration: configuration)
  }

  /// The configuration this Realm was opened with.
  public var configuration: Configuration { core.configuration }

  /// The classes this Realm manages.
  public var schema: Schema { core.schema.publicSchema }

  /// Whether the Realm holds no objects.
  public var isEmpty: Bool {
    core.schema.tables.values.allSatisfy { core.count($0.keyspace) == 0 }
  }

  /// Whether a write transaction is open.
  public var isInWriteTransaction: Bool { core.isInWriteTransaction }

  /// Whether the Realm moves to the newest version by itself when another thread or process
  /// commits (true by default): on a thread that runs its run loop, on the main queue, a
  /// dispatch queue or an actor, as in RealmSwift. A plain thread without a run loop moves on
  /// at `refresh()` and `beginWrite()` (see <doc:LiveObjects>).
  public var autorefresh: Bool {
    get { core.autorefresh }
    nonmutating set { core.autorefresh = newValue }
  }

  // MARK: Transactions

  /// Runs `block` in a write transaction and commits it, returning the block's value. If the
  /// block throws, the transaction is cancelled and the error rethrown.
  @discardableResult
  public func write<Result>(_ block: () throws -> Result) throws -> Result {
    try core.beginWrite()
    return try finishWrite(block) { try commitWrite() }
  }

  /// Runs `block` in the write transaction begun for it and ends the transaction: cancelled
  /// if `block` throws (the error is rethrown), else committed by `commit` unless `block`
  /// ended it itself.
  func finishWrite<Result>(_ block: () throws -> Result, commit: () throws -> Void) throws -> Result {
    let result: Result
    do {
      result = try block()
    } catch {
      if isInWriteTransaction { cancelWrite() }
      throw error
    }
    if isInWriteTransaction { try commit() }
    return result
  }

  /// Begins a write transaction, first moving to the newest version. Only one write
  /// transaction is open at a time across threads and processes; this waits for others.
  public func beginWrite() {
    do { try core.beginWrite() } catch { fatalError(error.description) }
  }

  /// Commits the write transaction (durably: it survives power loss once this returns).
  public func commitWrite() throws { try core.commitWrite() }

  /// Discards every change of the write transaction; objects it added become invalid.
  public func cancelWrite() { core.cancelWrite() }

  /// Moves to the newest version; true when that changed what this Realm sees.
  @discardableResult
  public func refresh() -> Bool {
    core.verifyThread()
    return core.refresh()
  }

  /// Moves to the newest version (RealmSwift's `asyncRefresh`); true when that changed what
  /// this Realm sees. Shoal's refresh does not block on other writers, so it completes at once.
  /// It runs on its caller's executor, as RealmSwift's does, so a Realm confined to the calling
  /// thread stays on it.
  @discardableResult
  nonisolated(nonsending) public func asyncRefresh() async -> Bool {
    if case .queue = core.deliveryMode {
      fatalError("asyncRefresh() can only be called on main thread or actor-isolated Realms")
    }
    return refresh()
  }

  /// Releases the version this Realm pins; the next access reads the newest one.
  public func invalidate() { core.invalidate() }

  // MARK: Adding and deleting

  /// How `add(_:update:)` and `create(_:value:update:)` treat an existing object with the same
  /// primary key.
  public enum UpdatePolicy: Int, Sendable {
    /// Fail: two objects may not share a primary key.
    case error = 1
    /// Write only the properties whose values differ.
    case modified = 3
    /// Write every property.
    case all = 2
  }

  /// Adds an unmanaged object, and the unmanaged objects it links to.
  public func add(_ object: Object, update: UpdatePolicy = .error) {
    if update != .error, object._classInfo.primaryKeyIndex == nil {
      fatalError("'\(object._classInfo.className)' does not have a primary key and can not be updated")
    }
    core.add(object, update: update)
  }

  /// Adds every object of `objects`.
  public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Iterator.Element: Object {
    for object in objects { add(object, update: update) }
  }

  /// Creates an object from a dictionary, array or object of values; with an update policy,
  /// updates the existing object with the same primary key instead (only the given properties).
  ///
  /// Objects `value` links to that belong to another Realm, and embedded objects that already
  /// have a parent, are copied; other objects of this Realm are linked as they are.
  @discardableResult
  public func create<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) -> T {
    core.requireWrite(RealmCore.objectsNeedWrite)
    let info = ClassInfo.of(type)
    let table = core.table(for: type)
    if update != .error {
      guard let pkIndex = info.primaryKeyIndex else {
        fatalError("'\(info.className)' does not have a primary key and can not be updated")
      }
      let pkName = info.fields[pkIndex].name
      if let pkValue = Self.value(named: pkName, in: value, info: info),
        let stored = info.fields[pkIndex].storedKeyValue(pkValue as Any),
        let key = core.key(forPrimaryKey: stored, in: table), let existing = core.object(table, key) as? T
      {
        applyUpdate(
          to: existing, info: info, pairs: Self.pairs(of: value, info: info), skipping: pkName, update: update)
        return existing
      }
    }
    // Nested dictionaries naming existing objects by primary key update those objects.
    var value = value
    if update != .error, let dictionary = value as? [String: Any] {
      var adjusted = dictionary
      for field in info.fields where field.typeInfo.collection == .none {
        guard let nested = dictionary[field.name] as? [String: Any],
          let (existing, targetInfo, pkName) = existingObject(for: field, nested)
        else { continue }
        applyUpdate(
          to: existing, info: targetInfo, pairs: nested.map { ($0.key, $0.value) }, skipping: pkName, update: update)
        adjusted[field.name] = existing
      }
      value = adjusted
    }
    let object = T()
    object._assign(value)
    var copies: [String: ObjectBase] = [:]
    detachLinks(of: object, copies: &copies)
    core.add(object, update: update)
    return object
  }

  /// The value `value` (a dictionary, an array in property order, or an object) gives for the
  /// property `name`; nil when it gives none (`.some(nil)` when it gives nil).
  private static func value(named name: String, in value: Any, info: ClassInfo) -> Any?? {
    pairs(of: value, info: info).first { $0.0 == name }.map { $0.1 }
  }

  /// The (property, value) pairs `value` gives, as key-value coding reads them: a dictionary's
  /// entries for properties of the class (other keys are ignored), an array's values in
  /// property order, or an object's values of the properties it has.
  private static func pairs(of value: Any, info: ClassInfo) -> [(String, Any?)] {
    let names = info.fields.filter { $0.options.originProperty == nil }.map(\.name)
    if let dictionary = value as? [String: Any?] {
      return names.compactMap { name in dictionary[name].map { (name, $0) } }
    }
    if let dictionary = value as? [String: Any] {
      return names.compactMap { name in dictionary[name].map { (name, $0) } }
    }
    if let array = value as? [Any?] { return zip(names, array).map { ($0, $1) } }
    if let object = value as? ObjectBase {
      let schema = object.objectSchema
      return names.filter { schema[$0] != nil }.map { ($0, object[$0]) }
    }
    return []
  }

  /// Replaces, in the unmanaged `object` being created and the unmanaged objects it links to,
  /// each linked object that cannot be linked as it is: objects of another Realm and embedded
  /// objects that already have a parent are copied (RealmSwift's create copies them).
  /// `copies` maps each copied object to its copy, so shared links stay shared.
  private func detachLinks(of object: ObjectBase, copies: inout [String: ObjectBase]) {
    guard object._core == nil else { return }
    for field in object._classInfo.fields where field.typeInfo.objectType != nil {
      let current = object._unmanagedValue(field)
      var replaced = false
      // The element itself, or the copy to link instead.
      func swapped(_ element: Any) -> Any {
        guard let linked = flattenedOptional(element) as? ObjectBase, let copy = detached(linked, copies: &copies)
        else { return element }
        replaced = true
        return copy
      }
      let contents = (current as? any _KVCCollection)?._kvcContents
      let value: Any
      switch field.typeInfo.collection {
      case .linkingObjects:
        continue
      case .none:
        value = swapped(current as Any)
      case .list, .set:
        guard let elements = contents as? [Any] else { continue }
        value = elements.map(swapped)
      case .map:
        guard let entries = contents as? [String: Any] else { continue }
        value = entries.mapValues(swapped)
      }
      if replaced { object[field.name] = value }
    }
  }

  /// The copy to link instead of `linked`, or nil to link `linked` itself (after detaching the
  /// links of an unmanaged one).
  private func detached(_ linked: ObjectBase, copies: inout [String: ObjectBase]) -> ObjectBase? {
    guard let linkedCore = linked._core, let table = linked._table else {
      // An unmanaged object given to `create` is copied into the Realm, not added: it stays
      // unmanaged, as in RealmSwift. One object reached twice is one copy.
      return copy(of: linked, id: "unmanaged/\(ObjectIdentifier(linked).hashValue)", copies: &copies)
    }
    guard linked is EmbeddedObject || !linkedCore.sharesFile(with: core), !(linked is DynamicObject) else { return nil }
    return copy(
      of: linked, id: "\(ObjectIdentifier(linkedCore.file).hashValue)/\(table.name)/\(linked._key)", copies: &copies)
  }

  /// The unmanaged copy of `linked` (made once per `id`), its own links detached in turn.
  private func copy(of linked: ObjectBase, id: String, copies: inout [String: ObjectBase]) -> ObjectBase {
    if let copy = copies[id] { return copy }
    let copy = type(of: linked).init()
    copies[id] = copy
    copy._assign(linked)
    detachLinks(of: copy, copies: &copies)
    return copy
  }

  /// The existing object a dictionary given for link `field` names by its primary key, with
  /// its class and primary-key name; nil when the class has no primary key or no such object.
  private func existingObject(for field: ClassInfo.Field, _ dictionary: [String: Any]) -> (
    ObjectBase, ClassInfo, String
  )? {
    guard let target = field.typeInfo.objectType else { return nil }
    let targetInfo = ClassInfo.of(target)
    guard let pk = targetInfo.primaryKeyIndex, let pkValue = dictionary[targetInfo.fields[pk].name],
      let stored = targetInfo.fields[pk].storedKeyValue(pkValue)
    else { return nil }
    let table = core.table(for: target)
    guard let key = core.key(forPrimaryKey: stored, in: table) else { return nil }
    return (core.object(table, key), targetInfo, targetInfo.fields[pk].name)
  }

  /// Writes `pairs` to the existing object of an update. A dictionary given for a link to a
  /// class with a primary key updates the object with that key when there is one, leaving the
  /// properties it does not name as they are (as Realm Core does). With `.modified`, values
  /// given for an embedded object the property already holds update that object in place.
  private func applyUpdate(
    to existing: ObjectBase, info: ClassInfo, pairs: [(String, Any?)], skipping pkName: String?, update: UpdatePolicy
  ) {
    var copies: [String: ObjectBase] = [:]
    for (name, item) in pairs where name != pkName {
      // Keys that are not properties are ignored, as when creating.
      guard let field = info.field(named: name), field.options.originProperty == nil else { continue }
      if field.typeInfo.collection == .none, let dictionary = item as? [String: Any],
        let (nested, targetInfo, pkName) = existingObject(for: field, dictionary)
      {
        applyUpdate(
          to: nested, info: targetInfo, pairs: dictionary.map { ($0.key, $0.value) }, skipping: pkName, update: update)
        if existing._storedValue(at: field.index) != .link(nested._key) {
          existing._setValue(nested, forKey: name, bySubscript: false)
        }
        continue
      }
      if update == .modified, field.typeInfo.collection == .none, let target = field.typeInfo.objectType,
        target is EmbeddedObject.Type, let item = flattenedOptional(item), !(item is NSNull),
        let current = existing[name] as? ObjectBase, !Self.isSameRow(item, current)
      {
        applyUpdate(
          to: current, info: ClassInfo.of(target), pairs: Self.pairs(of: item, info: ClassInfo.of(target)),
          skipping: nil, update: update)
        continue
      }
      if update == .modified, let new = field.storedKeyValue(item as Any), existing._storedValue(at: field.index) == new
      {
        continue
      }
      existing._setValue(detachedItem(item, copies: &copies), forKey: name, bySubscript: false)
    }
  }

  /// Whether `item` is `object` or another accessor of its row.
  private static func isSameRow(_ item: Any, _ object: ObjectBase) -> Bool {
    guard let other = item as? ObjectBase else { return false }
    return other === object
      || (other._core != nil && other._core === object._core && other._table === object._table
        && other._key == object._key)
  }

  /// A value given for an update, with the objects in it that cannot be linked as they are
  /// replaced by copies (see `detached`).
  private func detachedItem(_ item: Any?, copies: inout [String: ObjectBase]) -> Any? {
    guard let item = flattenedOptional(item) else { return nil }
    if let linked = item as? ObjectBase { return detached(linked, copies: &copies) ?? linked }
    let elements: [Any]? = ((item as? any _KVCCollection)?._kvcContents as? [Any]) ?? (item as? [Any])
    if let elements { return elements.map { detachedItem($0, copies: &copies) as Any } }
    return item
  }

  /// Deletes an object, with its embedded objects; links to it become nil.
  public func delete(_ object: ObjectBase) { core.delete([object]) }

  /// Deletes every object of `objects`.
  public func delete<S: Sequence>(_ objects: S) where S.Iterator.Element: ObjectBase {
    core.delete(Array(objects))
  }

  /// Deletes every object of the results.
  public func delete<Element: ObjectBase>(_ objects: Results<Element>) {
    core.delete(Array(objects))
  }

  /// Deletes every object in the Realm.
  public func deleteAll() {
    core.requireWrite(RealmCore.objectsNeedWrite)
    core.deleteAll()
  }

  // MARK: Reading

  /// Every object of `type`, lazily and live.
  public func objects<Element: Object>(_ type: Element.Type) -> Results<Element> {
    Results(core: core, source: .table(core.table(for: type)))
  }

  /// Every embedded object of `type`.
  public func objects<Element: EmbeddedObject>(_ type: Element.Type) -> Results<Element> {
    Results(core: core, source: .table(core.table(for: type)))
  }

  /// The object of `type` with primary key `key`, or nil.
  public func object<Element: Object, KeyType>(ofType type: Element.Type, forPrimaryKey key: KeyType) -> Element? {
    let info = ClassInfo.of(type)
    guard let pkIndex = info.primaryKeyIndex else {
      fatalError("'\(info.className)' does not have a primary key")
    }
    let table = core.table(for: type)
    guard let stored = info.fields[pkIndex].storedKeyValue(key as Any) else {
      fatalError(
        "Invalid value '\(key)' of type '\(KeyType.self)' for '\(info.fields[pkIndex].typeDescription)' property '\(info.className).\(info.fields[pkIndex].name)'."
      )
    }
    guard let objectKey = core.key(forPrimaryKey: stored, in: table) else { return nil }
    return core.object(table, objectKey) as? Element
  }

  /// Writes a compacted copy of the Realm (at the version it sees) to `fileURL`, encrypted with
  /// `encryptionKey` (64 bytes) when one is given, unencrypted when it is nil, whatever this
  /// Realm's own key: pass another key to change it, nil to remove it.
  ///
  /// ```swift
  /// try realm.writeCopy(toFile: backupURL, encryptionKey: newKey)
  /// ```
  public func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil) throws {
    let key = Realm.validatedEncryptionKey(encryptionKey)
    if FileManager.default.fileExists(atPath: fileURL.path) {
      throw Realm.Error(.fileExists, "File at path '\(fileURL.path)' already exists.", fileURL: fileURL)
    }
    do {
      try core.store.writeCopy(toPath: fileURL.path, encryptionKey: key)
    } catch {
      throw Realm.Error(storage: error, fileURL: fileURL)
    }
  }

  /// Writes a compacted copy of this Realm to `configuration.fileURL` (which must not exist),
  /// with no free space, encrypted with `configuration.encryptionKey` when it has one.
  public func writeCopy(configuration: Realm.Configuration) throws {
    guard configuration.inMemoryIdentifier == nil else {
      throw Realm.Error(.invalidInput, "Cannot write a copy to an in-memory Realm: give the configuration a fileURL.")
    }
    try writeCopy(
      toFile: configuration.fileURL ?? Configuration.defaultFileURL, encryptionKey: configuration.encryptionKey)
  }

  /// Whether the file of the Realm `config` describes exists (false for in-memory Realms).
  public static func fileExists(for config: Configuration) -> Bool {
    guard config.inMemoryIdentifier == nil else { return false }
    return FileManager.default.fileExists(atPath: (config.fileURL ?? Configuration.defaultFileURL).path)
  }

  /// Runs `configuration`'s migration, if its file's schema version is older, by opening it.
  /// Opening a Realm does this anyway; this is RealmSwift's way to do it ahead of time.
  public static func performMigration(for configuration: Realm.Configuration = .defaultConfiguration) throws {
    _ = try Realm(configuration: configuration)
  }

  /// Deletes the files of a Realm (the file and its lock file). Fails with `.alreadyOpen`
  /// while this process has it open. True when a file was deleted.
  @discardableResult
  public static func deleteFiles(for config: Configuration) throws -> Bool {
    guard config.inMemoryIdentifier == nil else { return false }
    if SharedFile.isOpen(config) {
      throw Realm.Error(
        .alreadyOpen, "Cannot delete files of an open Realm: close every instance first.", fileURL: config.fileURL)
    }
    let url = config.fileURL ?? Configuration.defaultFileURL
    var deleted = false
    for path in [url.path, url.path + ".lock"] where FileManager.default.fileExists(atPath: path) {
      do { try FileManager.default.removeItem(atPath: path) } catch {
        throw Realm.Error(.fileAccess, "Could not delete \(path): \(error)", fileURL: url)
      }
      deleted = deleted || path == url.path
    }
    return deleted
  }
}

extension Realm: Equatable {
  /// Two Realms are equal when they are the same instance (same file, same thread).
  public static func == (lhs: Realm, rhs: Realm) -> Bool { lhs.core === rhs.core }
}

extension ClassInfo.Field {
  /// The stored form of a primary-key or property value given as `Any`.
  func storedKeyValue(_ value: Any) -> RowValue? {
    guard let value = unwrapOptional(value), !(value is NSNull) else { return typeInfo.isOptional ? .null : nil }
    if let stored = RowValue(scalar: value) {
      switch (typeInfo.type, stored) {
      case (.int, .int), (.string, .string), (.UUID, .uuid), (.objectId, .objectId), (.bool, .bool), (.date, .date),
        (.double, .double), (.float, .float), (.data, .data), (.decimal128, .decimal):
        return stored
      case (.double, .int(let i)): return .double(Double(i))
      case (.float, .int(let i)): return .float(Float(i))
      case (.any, _): return stored
      default: return nil
      }
    }
    if let rawRepresentable = value as? any RawRepresentable { return storedKeyValue(rawRepresentable.rawValue) }
    return nil
  }
}

/// Realm instances per thread and file, so `Realm()` on one thread returns the same instance.
enum RealmCache {
  private final class Entries {
    struct Entry {
      weak var core: RealmCore?
      /// The same Realm, held while it is in a write transaction.
      var writing: RealmCore?
    }
    var entries: [String: Entry] = [:]
  }
  private static let threadKey = "io.shoal.realm-cache"

  static func core(for configuration: Realm.Configuration) throws(Realm.Error) -> RealmCore {
    let dictionary = Thread.current.threadDictionary
    let cache: Entries
    if let existing = dictionary[threadKey] as? Entries {
      cache = existing
    } else {
      cache = Entries()
      dictionary[threadKey] = cache
    }
    // One instance per file and set of classes on a thread.
    let types = configuration.objectTypes.map { $0.map { "\(ObjectIdentifier($0).hashValue)" }.joined(separator: ",") }
    let dynamic = configuration.dynamicSchemas.map { $0.description }.joined(separator: "|")
    let key = configuration.fileKey + "|" + (types ?? "*") + "|" + dynamic
    if let core = cache.entries[key]?.core, core.configuration.readOnly != configuration.readOnly {
      fatalError(
        "Realm at path '\((configuration.fileURL ?? Realm.Configuration.defaultFileURL).path)' already opened with "
          + "different read permissions")
    }
    if let core = cache.entries[key]?.core { Realm.requireEncryptionKey(of: configuration, toOpen: core.store) }
    if let core = cache.entries[key]?.core, core.configuration.schemaVersion == configuration.schemaVersion {
      if core.events == nil, let events = configuration.eventConfiguration {
        core.events = EventContext(configuration: events, realm: configuration)
      }
      return core
    }
    let core = try RealmCore(configuration: configuration)
    core.ownerThread = pthread_self()
    cache.entries = cache.entries.filter { $0.value.core != nil }
    cache.entries[key] = Entries.Entry(core: core)
    return core
  }

  /// Holds `core` in its thread's cache while it is in a write transaction (`keep`), or lets
  /// it go again. The cache goes with its thread, so a transaction left open by a thread that
  /// ends is still cancelled.
  static func keepAlive(_ core: RealmCore, _ keep: Bool) {
    guard let owner = core.ownerThread, pthread_equal(owner, pthread_self()) != 0,
      let cache = Thread.current.threadDictionary[threadKey] as? Entries
    else { return }
    for (key, entry) in cache.entries where entry.core === core {
      cache.entries[key]?.writing = keep ? core : nil
    }
  }
}

/// The block `Realm.observe(_:)` calls (RealmSwift's global name; also `Realm.NotificationBlock`).
public typealias NotificationBlock = Realm.NotificationBlock

/// The schema version of the Realm file at `fileURL`, read without opening it as a Realm (0 for
/// a file that has no schema yet); an encrypted file needs its `encryptionKey`. Throws
/// `.invalidDatabase` when there is no file ("Realm at path … has not been initialized.", as
/// RealmSwift), it is not a Realm file or the key does not fit it, `.fileAccess` for a path
/// that is not a regular file (`/dev/null`).
public func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
  let key = Realm.validatedEncryptionKey(encryptionKey)
  // RealmSwift's answer for a file that does not exist yet.
  if !FileManager.default.fileExists(atPath: fileURL.path) {
    throw Realm.Error(.invalidDatabase, "Realm at path '\(fileURL.path)' has not been initialized.", fileURL: fileURL)
  }
  do {
    let store = try Store.open(
      path: fileURL.path, options: StoreOptions(readOnly: true, create: false, encryptionKey: key))
    let snapshot = try store.beginRead()
    defer { snapshot.close() }
    guard try snapshot.hasKeyspace(RealmSchema.metaKeyspace),
      let bytes = try snapshot.get(RealmSchema.versionKey, in: RealmSchema.metaKeyspace)
    else { return 0 }
    return TableInfo.key(from: bytes)
  } catch {
    throw Realm.Error(opening: error, fileURL: fileURL)
  }
}

extension Realm {
  /// The bytes of an encryption key, which must be exactly 64 bytes long: another length is a
  /// programmer error, RealmSwift's exception ("Encryption key must be exactly 64 bytes long").
  static func validatedEncryptionKey(_ key: Data?) -> [UInt8]? {
    guard let key else { return nil }
    guard key.count == 64 else { fatalError("Encryption key must be exactly 64 bytes long") }
    return [UInt8](key)
  }

  /// RealmSwift's exception when `configuration` gives another key than the one `store`, open
  /// in this process already, was opened with.
  static func requireEncryptionKey(of configuration: Realm.Configuration, toOpen store: Store) {
    guard validatedEncryptionKey(configuration.encryptionKey) != store.options.encryptionKey else { return }
    let path = configuration.inMemoryIdentifier ?? (configuration.fileURL ?? Configuration.defaultFileURL).path
    fatalError("Realm at path '\(path)' already opened with different encryption key")
  }
}
