import Foundation
import ShoalStorage
import Synchronization

/// The state behind a `Realm` value: the shared file, the resolved schema, and this instance's
/// read snapshot or write transaction. Confined to one thread, like RealmSwift's Realms.
final class RealmCore {
  let configuration: Realm.Configuration
  let file: SharedFile
  let schema: RealmSchema
  /// The version this Realm sees (also kept pinned during a write: the state before it).
  var read: ReadTransaction?
  private(set) var write: WriteTransaction? {
    didSet {
      // A Realm in a write transaction stays its thread's cached instance until the
      // transaction ends, as in RealmSwift: `try Realm().beginWrite()` then
      // `try Realm().commitWrite()` is one transaction.
      if (write == nil) != (oldValue == nil) { RealmCache.keepAlive(self, write != nil) }
    }
  }
  /// Observers registered on this Realm (see `Notifications/`).
  /// The registered observations, held weakly: each is owned by its token (see
  /// `NotificationToken.keepAlive`), so an invalidated or released token ends it at once.
  var observerReferences: [WeakObserver] = []
  var observers: [any RealmObserver] { observerReferences.compactMap(\.observer) }
  /// Where notifications are delivered.
  var deliveryMode: DeliveryMode = .currentThread
  /// Wakes this Realm when another thread or process commits (main-thread, queue and actor
  /// Realms; see `updateWakeToken`).
  var wakeToken: ChangeListenerToken?
  /// Whether `wakeToken` holds this Realm strongly (observers wait) or weakly.
  var wakeTokenIsStrong = false
  /// Whether this Realm follows commits without observers (see `followCommits`).
  var followsCommits = false
  var isDelivering = false
  /// Tokens a `write(withoutNotifying:)` asked to skip for its commit.
  var skippedTokens: [NotificationToken] = []
  /// Whether this Realm is a frozen snapshot.
  let isFrozen: Bool
  /// Whether the file has the backlink index (every writable open builds it).
  var hasBacklinks: Bool { schema.hasBacklinks }
  /// The frozen Realm of the current version, while something holds it.
  weak var frozenCore: RealmCore?
  /// Queued `writeAsync`/`beginAsyncWrite` blocks.
  let asyncWrites = AsyncWrites()
  /// Changes whenever what this Realm sees may have changed; cached rows compare against it.
  private(set) var stamp: UInt64 = 1
  /// Next object key per class during a write, flushed at commit.
  private var nextKeys: [ObjectIdentifier: (table: TableInfo, next: ObjectKey)] = [:]
  /// The update policy of the `add` in progress, applied to linked objects it adds.
  private var addPolicy: Realm.UpdatePolicy = .error
  /// Decoded rows read at `rowCacheStamp` (cleared when the stamp moves).
  private var rowCache: [RowKey: [RowValue]] = [:]
  private var rowCacheStamp: UInt64 = 0
  private static let rowCacheLimit = 200_000

  struct RowKey: Hashable {
    let table: ObjectIdentifier
    let key: ObjectKey
  }
  var autorefresh = true
  /// The thread a thread-confined Realm was opened on (nil for frozen, queue- and
  /// actor-confined Realms, which RealmSwift does not tie to a thread).
  var ownerThread: pthread_t?

  /// Stops with RealmSwift's message when a thread-confined Realm, or an object or collection
  /// of it, is used from a plain thread or dispatch queue other than the one it was opened on.
  /// Code running in a Swift concurrency task is not held to the thread: a task moves between
  /// threads at its suspension points while staying one sequential flow.
  @inline(__always) func verifyThread() {
    guard let ownerThread, pthread_equal(ownerThread, pthread_self()) == 0 else { return }
    verifyThreadOutsideTasks()
  }

  @inline(never) private func verifyThreadOutsideTasks() {
    if withUnsafeCurrentTask(body: { $0 != nil }) { return }
    fatalError("Realm accessed from incorrect thread.")
  }

  /// Event recording, when the configuration asked for it (see `Events/`).
  var events: EventContext?

  init(configuration: Realm.Configuration) throws(Realm.Error) {
    Logger.installDefault()
    // RealmSwift's checks when a configuration is turned into an open Realm, in its order.
    if configuration.readOnly, configuration.deleteRealmIfMigrationNeeded {
      fatalError("Cannot set `deleteRealmIfMigrationNeeded` when `readOnly` is set.")
    }
    if configuration.readOnly, configuration.shouldCompactOnLaunch != nil {
      fatalError("Cannot set `shouldCompactOnLaunch` when `readOnly` is set.")
    }
    self.configuration = configuration
    isFrozen = false
    let classes = try RealmSchema.codeClasses(configuration)
    file = try SharedFile.open(configuration)
    schema = try SchemaResolver(file: file, configuration: configuration, classes: classes).resolve()
    do { read = try file.store.beginRead() } catch { throw Realm.Error(storage: error, fileURL: configuration.fileURL) }
    if let events = configuration.eventConfiguration {
      self.events = EventContext(configuration: events, realm: configuration)
    }
    // Realm Core's form: "DB: <number> …" for what concerns one database.
    Log.write(
      .detail, .shoal,
      "DB: \(file.logID) Open Realm \(configuration.fileKey) at version \(read?.version ?? 0): "
        + "\(schema.tables.count) classes, schema version \(schema.schemaVersion)")
    Log.write(
      .trace, .transaction,
      "DB: \(file.logID) Begin read transaction of \(configuration.fileKey) at version \(read?.version ?? 0)")
  }

  /// A frozen Realm at the version `snapshot` pins: immutable, shareable across threads.
  init(frozenFrom core: RealmCore, snapshot: ReadTransaction) {
    configuration = core.configuration
    file = core.file
    schema = core.schema
    read = snapshot
    isFrozen = true
    autorefresh = false
  }

  deinit {
    write?.abort()
    wakeToken?.invalidate()
  }

  var store: Store { file.store }

  func sharesFile(with other: RealmCore) -> Bool { file === other.file }

  // MARK: Transactions

  var isInWriteTransaction: Bool { write != nil }

  /// The snapshot reads go to (begun lazily after `invalidate`).
  /// Whether anything was read through this Realm since it was opened (see `Realm.resolve`).
  private(set) var hasRead = false

  private func snapshot() -> ReadTransaction {
    hasRead = true
    if let read { return read }
    do {
      let fresh = try store.beginRead()
      read = fresh
      stamp &+= 1
      return fresh
    } catch {
      fatalError("Could not begin a read transaction: \(error)")
    }
  }

  var version: UInt64 { write?.baseVersion ?? snapshot().version }

  func get(_ key: [UInt8], in keyspace: String) -> [UInt8]? {
    verifyThread()
    do {
      if let write { return try write.get(key, in: keyspace) }
      return try snapshot().get(key, in: keyspace)
    } catch StorageError.keyspaceNotFound(_) {
      return nil
    } catch {
      fatalError("Read failed: \(error)")
    }
  }

  /// Every (key, value) of `keyspace` in key order, optionally within `range`.
  func scan(_ keyspace: String, range: KeyRange = .all, _ body: ([UInt8], [UInt8]) -> Bool) {
    verifyThread()
    do {
      let cursor: Cursor
      if let write {
        guard try write.hasKeyspace(keyspace) else { return }
        cursor = try write.cursor(in: keyspace, range: range)
      } else {
        let read = snapshot()
        guard try read.hasKeyspace(keyspace) else { return }
        cursor = try read.keyspace(keyspace).cursor(range: range)
      }
      while let (key, value) = try cursor.next() {
        if !body(key, value) { return }
      }
    } catch {
      fatalError("Read failed: \(error)")
    }
  }

  func count(_ keyspace: String) -> Int {
    verifyThread()
    do {
      if let write { return try write.hasKeyspace(keyspace) ? Int(try write.count(in: keyspace)) : 0 }
      let read = snapshot()
      return try read.hasKeyspace(keyspace) ? Int(try read.count(in: keyspace)) : 0
    } catch {
      fatalError("Read failed: \(error)")
    }
  }

  func beginWrite() throws(Realm.Error) {
    try checkCanBeginWrite()
    // Catch up first, delivering what is pending and what other threads and processes
    // committed meanwhile; the snapshot stays pinned through the write as the state before it.
    deliverPending()
    _ = refresh()
    do {
      adopt(try store.beginWrite())
    } catch {
      throw Realm.Error(storage: error, fileURL: configuration.fileURL)
    }
  }

  /// Begins a write transaction from async code: while another thread or process holds the
  /// writer lock the calling task is suspended, not its thread (so the actor it runs on can
  /// go on), and cancelling the task ends the wait with `CancellationError`.
  nonisolated(nonsending) func beginWriteAsync() async throws {
    try checkCanBeginWrite()
    deliverPending()
    _ = refresh()
    let transaction: WriteTransaction
    do {
      transaction = try await store.beginWriteAsync()
    } catch let error as CancellationError {
      throw error
    } catch {
      throw Realm.Error(storage: error, fileURL: configuration.fileURL)
    }
    // A task may have begun a write here while this one waited.
    guard write == nil else {
      transaction.abort()
      fatalError("The Realm is already in a write transaction")
    }
    adopt(transaction)
  }

  private func checkCanBeginWrite() throws(Realm.Error) {
    verifyThread()
    if isFrozen { throw Realm.Error(.fail, "Can't perform transactions on a frozen Realm") }
    guard write == nil else {
      fatalError("The Realm is already in a write transaction")
    }
    guard !configuration.readOnly else {
      fatalError("Can't perform transactions on read-only Realms.")
    }
  }

  private func adopt(_ transaction: WriteTransaction) {
    hasRead = true
    write = transaction
    nextKeys = [:]
    stamp &+= 1
  }

  /// Commits the write transaction. The observers of `suppressing` (on this Realm or on any
  /// other instance, thread, queue or actor) do not hear of this commit: each token keeps the
  /// versions just before and after it, so its Realm can step over exactly this commit.
  func commitWrite(suppressing tokens: [NotificationToken] = []) throws(Realm.Error) {
    verifyThread()
    guard let transaction = write else {
      throw Realm.Error(.fail, "Can't commit a non-existing write transaction")
    }
    // The state before the write, for event recording only (holding it keeps its version pinned).
    let before = events?.isRecording == true ? read : nil
    var committed: UInt64 = 0
    do {
      for (_, (table, next)) in nextKeys {
        let name = table.name
        try transaction.put(
          TableInfo.keyBytes(next), forKey: Array(("next/" + name).utf8), in: RealmSchema.metaKeyspace)
      }
      if tokens.isEmpty {
        committed = try transaction.commit()
      } else {
        // The tokens learn of the commit before it is published: no Realm can deliver it first.
        let base = try transaction.pinBase()
        let after = try transaction.commitPinned { after in
          let commit = SuppressedCommit(before: base, after: after)
          for token in tokens { token.suppress(commit) }
        }
        committed = after.version
      }
    } catch {
      transaction.abort()
      write = nil
      stamp &+= 1
      throw Realm.Error(storage: error, fileURL: configuration.fileURL)
    }
    write = nil
    nextKeys = [:]
    stamp &+= 1
    // A write that changed nothing still tells the Realm's own observers, as in RealmSwift.
    if !moveTo(newest: true, local: true) { deliverEmptyCommit() }
    skippedTokens = []
    if let events, events.isRecording, let before, committed > before.version,
      let records = try? store.changes(from: before.version, to: committed)
    {
      events.recordWrite(ChangeSummary(records), old: before, core: self)
    }
  }

  func cancelWrite() {
    verifyThread()
    guard let transaction = write else {
      fatalError("Can't cancel a non-existing write transaction")
    }
    transaction.abort()
    write = nil
    nextKeys = [:]
    stamp &+= 1
  }

  /// Moves to the newest version and delivers notifications; true when it changed what this
  /// Realm sees.
  func refresh() -> Bool {
    guard write == nil, !isFrozen, !isDelivering else { return false }
    return moveTo(newest: true, local: false)
  }

  /// Moves the snapshot to the newest version; observers hear of the changes in between.
  @discardableResult
  func moveTo(newest: Bool, local: Bool) -> Bool {
    hasRead = true
    let old = read
    let fresh: ReadTransaction
    do { fresh = try store.beginRead() } catch {
      read = nil
      stamp &+= 1
      return true
    }
    guard fresh.version != old?.version else { return false }
    read = fresh
    stamp &+= 1
    guard let old else { return true }
    if local, case .runLoop = deliveryMode {
      // RealmSwift tells of a local commit after the call that made it returns: once the
      // run loop turns, from the version before the first commit not yet told of.
      if pendingLocalDelivery == nil {
        pendingLocalDelivery = old
        schedule { [weak self] in self?.deliverPendingLocal() }
      }
      return true
    }
    if let pending = pendingLocalDelivery {
      pendingLocalDelivery = nil
      deliver(from: pending, to: fresh, local: local)
    } else {
      deliver(from: old, to: fresh, local: local)
    }
    return true
  }

  /// The version before local commits whose notifications wait for the run loop (see
  /// `DeliveryMode.runLoop`).
  private var pendingLocalDelivery: ReadTransaction?

  private func deliverPendingLocal() {
    guard let pending = pendingLocalDelivery, let now = read else { return }
    pendingLocalDelivery = nil
    if pending.version != now.version { deliver(from: pending, to: now, local: true) }
  }

  /// First notifications of observations registered here that wait for the run loop, queue or
  /// actor they are delivered on.
  private var pendingInitials: [Handover<() -> Void>] = []

  /// Delivers an observation's first notification where its notifications go. Until it is
  /// delivered, a write begun on this Realm delivers it first (see `deliverPending()`).
  func scheduleInitial(_ body: @escaping () -> Void) {
    if case .currentThread = deliveryMode, !Thread.isMainThread {
      body()
      return
    }
    let work = Handover(body)
    pendingInitials.append(work)
    schedule { [weak self] in
      self?.pendingInitials.removeAll { $0 === work }
      work.take()?()
    }
  }

  /// What RealmSwift's `beginWrite` does before the write begins ("generates notifications if
  /// applicable"): the first notifications of observations not yet told, then the changes of
  /// local commits whose notifications still wait for the run loop.
  func deliverPending() {
    let initials = pendingInitials
    pendingInitials = []
    for work in initials { work.take()?() }
    deliverPendingLocal()
  }

  /// Makes `snapshot` the version this Realm shows (delivery steps through the versions around
  /// a suppressed commit this way).
  func show(_ snapshot: ReadTransaction) {
    read = snapshot
    stamp &+= 1
  }

  func invalidate() {
    if write != nil { cancelWrite() }
    read = nil
    stamp &+= 1
    invalidations &+= 1
  }

  /// How many times `invalidate()` was called: collections made before then are invalid.
  private(set) var invalidations: UInt64 = 0

  /// RealmSwift's message for adding, creating or deleting objects outside a write transaction.
  static let objectsNeedWrite =
    "Can only add, remove, or create objects in a Realm in a write transaction - call beginWriteTransaction on an RLMRealm instance first."

  /// RealmSwift's checks before a managed collection of `owner` is modified, in its order: the
  /// thread, whether the collection is still valid, whether it is frozen, the write transaction.
  func verifyCollectionWrite(owner: ObjectBase, objcName: String) {
    verifyThread()
    if owner.isInvalidated {
      fatalError("\(objcName) has been invalidated or the containing object has been deleted.")
    }
    if isFrozen { fatalError("Attempting to modify a frozen collection - call thaw on the collection first.") }
    requireWrite("Cannot modify managed \(objcName) outside of a write transaction.")
  }

  func requireWrite(_ message: String = "") {
    guard write != nil else {
      fatalError(
        message.isEmpty
          ? "Attempting to modify object outside of a write transaction - call beginWriteTransaction on an RLMRealm instance first."
          : message)
    }
  }

  private func perform(_ body: (WriteTransaction) throws -> Void) {
    requireWrite()
    guard let write else { return }
    do { try body(write) } catch { fatalError("Write failed: \(error)") }
  }

  // MARK: Rows

  func row(_ table: TableInfo, _ key: ObjectKey) -> [RowValue]? {
    if isFrozen, let read { return row(table, key, in: read) }
    let cacheKey = RowKey(table: ObjectIdentifier(table), key: key)
    if rowCacheStamp == stamp {
      if let row = rowCache[cacheKey] { return row }
    } else {
      if !rowCache.isEmpty { rowCache.removeAll(keepingCapacity: true) }
      rowCacheStamp = stamp
    }
    guard let bytes = get(TableInfo.keyBytes(key), in: table.keyspace) else { return nil }
    let row: [RowValue]
    do { row = try RowCodec.decode(bytes) } catch { fatalError("\(error)") }
    cacheRow(row, table: table, key: key)
    return row
  }

  /// Keeps a decoded row for later reads at the current stamp.
  func cacheRow(_ row: [RowValue], table: TableInfo, key: ObjectKey) {
    if isFrozen { return }
    if rowCacheStamp != stamp {
      if !rowCache.isEmpty { rowCache.removeAll(keepingCapacity: true) }
      rowCacheStamp = stamp
    }
    if rowCache.count >= Self.rowCacheLimit { rowCache.removeAll(keepingCapacity: true) }
    rowCache[RowKey(table: ObjectIdentifier(table), key: key)] = row
  }

  /// The rows of `table` that pass `test` (called with each encoded row), in key order,
  /// decoded. A snapshot of a large class is scanned in parts on several threads at once (two
  /// parts per core, up to eight, each at least `parallelScanMinimumRows` rows: a thread that
  /// finishes its part takes the next, so a core taken by other work delays less of the scan);
  /// the view of a write transaction, which only its own thread may read, in one pass.
  func scanMatching(_ table: TableInfo, _ test: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Bool) throws
    -> [(key: ObjectKey, row: [RowValue])]
  {
    verifyThread()
    let cores = ProcessInfo.processInfo.activeProcessorCount
    if write == nil, cores > 1, case let read = snapshot(), try read.hasKeyspace(table.keyspace) {
      let keyspace = try read.keyspace(table.keyspace)
      let parts = min(cores * 2, 8, Int(keyspace.count / Self.parallelScanMinimumRows))
      if parts > 1 { return try Self.scanInParts(keyspace, parts: parts, test) }
    }
    var matches: [(key: ObjectKey, row: [RowValue])] = []
    try scanRaw(table) { key, raw in
      if try test(raw) { matches.append((key, try RowCodec.decode(buffer: raw))) }
    }
    return matches
  }

  /// Rows a part of a parallel scan covers at the least.
  static let parallelScanMinimumRows: UInt64 = 16_384

  /// `scanMatching` of a snapshot's keyspace split at evenly spaced entries into `parts` key
  /// ranges, one thread each; the parts' matches joined in key order.
  private static func scanInParts(
    _ keyspace: KeyspaceSnapshot, parts: Int, _ test: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Bool
  ) throws -> [(key: ObjectKey, row: [RowValue])] {
    var bounds: [[UInt8]?] = [nil]
    for part in 1..<parts {
      guard let entry = try keyspace.entry(at: keyspace.count * UInt64(part) / UInt64(parts)) else { break }
      bounds.append(entry.key)
    }
    bounds.append(nil)
    let ranges = (0..<(bounds.count - 1)).map { KeyRange(lower: bounds[$0], upper: bounds[$0 + 1]) }
    let results = Mutex<[[(key: ObjectKey, row: [RowValue])]]>(Array(repeating: [], count: ranges.count))
    let failure = Mutex<(any Error)?>(nil)
    DispatchQueue.concurrentPerform(iterations: ranges.count) { part in
      do {
        var matches: [(key: ObjectKey, row: [RowValue])] = []
        try keyspace.cursor(range: ranges[part]).forEach { key, raw in
          if try test(raw) { matches.append((TableInfo.key(from: key), try RowCodec.decode(buffer: raw))) }
          return true
        }
        results.withLock { $0[part] = matches }
      } catch {
        failure.withLock { $0 = error }
      }
    }
    if let error = failure.withLock({ $0 }) { throw error }
    return results.withLock { $0.flatMap { $0 } }
  }

  /// Every row of `table` in key order, as raw bytes valid during the call only.
  func scanRaw(_ table: TableInfo, _ body: (ObjectKey, UnsafeRawBufferPointer) throws -> Void) throws {
    verifyThread()
    let cursor: Cursor
    if let write {
      guard try write.hasKeyspace(table.keyspace) else { return }
      cursor = try write.cursor(in: table.keyspace)
    } else {
      let read = snapshot()
      guard try read.hasKeyspace(table.keyspace) else { return }
      cursor = try read.keyspace(table.keyspace).cursor()
    }
    try cursor.forEach { key, value in
      try body(TableInfo.key(from: key), value)
      return true
    }
  }

  func exists(table: TableInfo, key: ObjectKey) -> Bool {
    get(TableInfo.keyBytes(key), in: table.keyspace) != nil
  }

  /// The current row of a managed object (cached in the object until the stamp moves); a
  /// deleted object fails with `deleted` (a collection property's reader passes its own text).
  func currentRow(
    of object: ObjectBase, table: TableInfo,
    deleted: @autoclosure () -> String = "Object has been deleted or invalidated."
  ) -> [RowValue] {
    if isFrozen {
      // Frozen objects may be read from several threads at once: no caches are written.
      guard let read, let row = row(table, object._key, in: read) else { fatalError(deleted()) }
      return row
    }
    verifyThread()
    if object._rowStamp == stamp, let row = object._row { return row }
    // An accessor made before `invalidate()` is invalid, even though its row still exists.
    guard object._epoch == invalidations, let row = row(table, object._key) else { fatalError(deleted()) }
    object._row = row
    object._rowStamp = stamp
    return row
  }

  func storedValue(
    of object: ObjectBase, table: TableInfo, at index: Int,
    deleted: @autoclosure () -> String = "Object has been deleted or invalidated."
  ) -> RowValue {
    let property = table.properties[index]
    if property.collection == .linkingObjects {
      return .list(linkingKeys(to: object._key, of: table, property: property).map { .link($0) })
    }
    return currentRow(of: object, table: table, deleted: deleted())[index]
  }

  func setStoredValue(_ value: RowValue, of object: ObjectBase, table: TableInfo, at index: Int) {
    verifyThread()
    if isFrozen { fatalError("Attempting to modify a frozen object - call thaw on the Object instance first.") }
    // RealmSwift's order: the object must exist, then the write transaction, then the primary
    // key, which no setter may write, not even with its own value.
    var row = currentRow(of: object, table: table)
    requireWrite()
    if index == table.primaryKeyIndex { fatalError("Primary key can't be changed after an object is inserted.") }
    let oldRow = row
    let old = row[index]
    row[index] = value
    writeRow(row, old: oldRow, table: table, key: object._key, changed: [index])
    if old != value { removeReplacedEmbedded(old: old, new: value, property: table.properties[index]) }
    object._row = row
    object._rowStamp = stamp
  }

  func setAny(_ value: Any?, of object: ObjectBase, table: TableInfo, field: ClassInfo.Field) {
    guard field.wrapperType.setManagedAnyValue(value, of: object, index: field.index) else {
      fatalError(invalidValueMessage(value, for: field, of: table.name))
    }
  }

  /// Writes a row, keeping the primary-key and secondary indexes in step, and records which
  /// properties changed in the engine's change record.
  private func writeRow(_ row: [RowValue], old: [RowValue]?, table: TableInfo, key: ObjectKey, changed: [Int]) {
    perform { write in
      let keyBytes = TableInfo.keyBytes(key)
      for index in table.indexedProperties where old?[index] != row[index] {
        let space = table.indexKeyspace(index)
        if let old { _ = try write.delete(TableInfo.indexKey(old[index]) + keyBytes, in: space) }
        try write.put([], forKey: TableInfo.indexKey(row[index]) + keyBytes, in: space)
      }
      if let pk = table.primaryKeyIndex, old == nil, !table.keysFromPrimaryKey,
        try write.put(keyBytes, forKey: TableInfo.indexKey(row[pk]), in: table.primaryKeyspace)
      {
        // `add` with `.error` does not look the key up first: a clash shows here.
        fatalError(
          "Attempting to create an object of type '\(table.name)' with an existing primary key value '\(describe(row[pk]))'."
        )
      }
      var mask: [UInt8] = []
      if old != nil {
        mask = [UInt8](repeating: 0, count: (table.properties.count + 7) / 8)
        for index in changed { mask[index / 8] |= 1 << UInt8(index % 8) }
      }
      let replaced = try write.put(RowCodec.encode(row), forKey: keyBytes, in: table.keyspace, changeInfo: mask)
      if replaced, old == nil, let pk = table.primaryKeyIndex {
        // The key is the primary key: `add` with `.error` does not look it up first.
        fatalError(
          "Attempting to create an object of type '\(table.name)' with an existing primary key value '\(describe(row[pk]))'."
        )
      }
      if hasBacklinks {
        try Backlinks.update(write, table: table, key: key, old: old, new: row, properties: old == nil ? nil : changed)
      }
    }
    stamp &+= 1
  }

  /// Adds an object of a class without a Swift type (see `Configuration.dynamicSchemas`)
  /// from its stored values, in schema order: indexes, primary key and change record as for
  /// any object.
  @discardableResult
  func createDynamic(_ table: TableInfo, row: [RowValue]) -> ObjectKey {
    let key = newKey(table, row: row)
    writeRow(row, old: nil, table: table, key: key, changed: [])
    return key
  }

  /// The key of a new object: its primary key where the table keys objects by it, else the
  /// table's next sequential key.
  private func newKey(_ table: TableInfo, row: [RowValue]) -> ObjectKey {
    if table.keysFromPrimaryKey, let pk = table.primaryKeyIndex, let key = TableInfo.derivedKey(row[pk]) {
      return key
    }
    let id = ObjectIdentifier(table)
    if let entry = nextKeys[id] {
      nextKeys[id] = (table, entry.next + 1)
      return entry.next
    }
    var next: ObjectKey = 1
    if let bytes = get(Array(("next/" + table.name).utf8), in: RealmSchema.metaKeyspace) {
      next = TableInfo.key(from: bytes)
    }
    nextKeys[id] = (table, next + 1)
    return next
  }

  // MARK: Objects

  func table(for type: ObjectBase.Type) -> TableInfo {
    guard let table = schema.table(for: type) else {
      let name = ClassInfo.of(type).className
      fatalError(
        "Object type '\(name)' is not managed by the Realm. If using a custom `objectClasses` / `objectTypes` "
          + "array in your configuration, add `\(name)` to the list of `objectClasses` / `objectTypes`.")
    }
    return table
  }

  func table(named name: String) -> TableInfo? { schema.tables[name] }

  /// A managed instance for the object `key` of `table`.
  func object(_ table: TableInfo, _ key: ObjectKey) -> ObjectBase {
    let object: ObjectBase
    if let info = table.classInfo {
      object = info.makeManaged()
    } else {
      let dynamic = DynamicObject()
      dynamic._dynamic = ManagedDynamicRow(core: self, table: table, key: key)
      object = dynamic
    }
    object._core = self
    object._epoch = invalidations
    object._table = table
    object._key = key
    if let events, events.isRecording, write == nil, !isFrozen { events.recordRead(table, key, core: self) }
    return object
  }

  /// The object a stored link refers to, as an instance of `type` (or of the linked class).
  func object(for value: RowValue, type: ObjectBase.Type) -> ObjectBase? {
    switch value {
    case .link(let key): return object(table(for: type), key)
    case .typedLink(let name, let key): return table(named: name).map { object($0, key) }
    default: return nil
    }
  }

  /// The stored link to `target`, adding it first when it is unmanaged.
  func linkValue(to target: ObjectBase) -> RowValue {
    if let core = target._core, target._table != nil {
      guard core.file === file else {
        fatalError("Object is already managed by another Realm. Use create instead to copy it into this Realm.")
      }
      if target is EmbeddedObject, write != nil {
        fatalError("Can't set link to existing managed embedded object")
      }
      return .link(target._key)
    }
    add(target, update: addPolicy)
    return .link(target._key)
  }

  /// Keys of the objects of `property.objectClassName` linking to `key` through the origin property.
  func linkingKeys(to key: ObjectKey, of table: TableInfo, property: Property) -> [ObjectKey] {
    guard let originName = property.objectClassName, let origin = self.table(named: originName),
      let originProperty = property.linkOriginPropertyName, let index = origin.propertyIndex[originProperty]
    else { return [] }
    var keys: [ObjectKey] = []
    if hasBacklinks {
      let prefix = Backlinks.prefix(target: key, source: origin.name, property: index)
      var sources: [ObjectKey] = []
      scan(Backlinks.keyspace(table.name), range: .prefix(prefix)) { entry, _ in
        sources.append(TableInfo.key(from: entry.suffix(8)))
        return true
      }
      // As in Realm, an object linked n times from one list or map is there n times; the
      // index records each source once, so those rows are read to count.
      let collection = origin.properties[index].collection
      guard collection == .list || collection == .map else { return sources }
      for source in sources {
        let times = row(origin, source).map { index < $0.count ? Self.linkCount($0[index], to: key) : 1 } ?? 1
        keys += repeatElement(source, count: max(times, 1))
      }
      return keys
    }
    // A read-only file written before the backlink index existed: scan the origin class.
    scan(origin.keyspace) { keyBytes, value in
      guard let row = try? RowCodec.decode(value), index < row.count else { return true }
      keys += repeatElement(TableInfo.key(from: keyBytes), count: Self.linkCount(row[index], to: key))
      return true
    }
    return keys
  }

  /// How many times `value` (a link, or a list or map of them) links to `key`.
  static func linkCount(_ value: RowValue, to key: ObjectKey) -> Int {
    switch value {
    case .link(let k): return k == key ? 1 : 0
    case .list(let items): return items.reduce(0) { $0 + linkCount($1, to: key) }
    case .map(let entries): return entries.reduce(0) { $0 + linkCount($1.value, to: key) }
    default: return 0
    }
  }

  // MARK: Add, create, delete

  /// An object `add` made managed whose row is still to be written.
  private struct PendingAdd {
    let object: ObjectBase
    let table: TableInfo
    let info: ClassInfo
    /// Whether the table stores the class's properties in declaration order.
    let direct: Bool
    let key: ObjectKey
    let existing: ObjectKey?
    let primaryKey: RowValue?
    let policy: Realm.UpdatePolicy
  }

  /// Adds an unmanaged object; with an update policy, an object of a class with a primary key
  /// updates the existing object with that key. `existingKey` names the embedded object that
  /// `object` updates in place (`.modified` updates of its parent).
  ///
  /// The objects it links to are added too, without recursion: each is made managed (keyed)
  /// when first reached and its row written in turn, so a chain of any length is added in
  /// constant stack. Once its row is written an object gives up its unmanaged values (it keeps
  /// no unmanaged object alive), and the `List`, `MutableSet` and `Map` instances it held
  /// become the managed collections of its properties.
  func add(_ object: ObjectBase, update: Realm.UpdatePolicy, existingKey: ObjectKey? = nil) {
    requireWrite(RealmCore.objectsNeedWrite)
    if object._addPending { return }
    if object.isInvalidated { fatalError("Adding a deleted or invalidated object to a Realm is not permitted") }
    if let core = object._core, object._table != nil {
      guard core.file === file else {
        fatalError("Object is already managed by another Realm. Use create instead to copy it into this Realm.")
      }
      return
    }
    pendingAdds.append(register(object, update: update, existingKey: existingKey))
    guard !drainingAdds else { return }
    drainingAdds = true
    defer {
      drainingAdds = false
      pendingAdds = []
      pendingPrimaryKeys = [:]
    }
    var next = 0
    while next < pendingAdds.count {
      fill(pendingAdds[next])
      next += 1
    }
  }

  /// Objects made managed by `add` whose rows are not written yet, in the order reached.
  private var pendingAdds: [PendingAdd] = []
  private var drainingAdds = false
  /// The primary keys of `pendingAdds` (by class, then index key), so that two objects of one
  /// `add` with the same primary key are one object, as when the first is written first.
  private var pendingPrimaryKeys: [String: [[UInt8]: ObjectKey]] = [:]

  /// Makes `object` managed: finds the object its primary key updates or gives it a new key.
  private func register(_ object: ObjectBase, update: Realm.UpdatePolicy, existingKey: ObjectKey?) -> PendingAdd {
    let table = self.table(for: type(of: object))
    let info = table.classInfo ?? object._classInfo
    let direct = table.classInfo === info
    var existing: ObjectKey? = existingKey
    var primaryKey: RowValue?
    if let pk = table.primaryKeyIndex,
      let field = direct ? info.fields[pk] : info.field(named: table.properties[pk].name)
    {
      let value = field.wrapperType.storedValue(at: object._fieldAddress(field), context: _AccessContext(self))
      primaryKey = value
      if update != .error {
        existing = pendingPrimaryKeys[table.name]?[TableInfo.indexKey(value)] ?? key(forPrimaryKey: value, in: table)
      }
    }
    var row = [RowValue](repeating: .null, count: table.properties.count)
    if let pk = table.primaryKeyIndex, let primaryKey { row[pk] = primaryKey }
    let key = existing ?? newKey(table, row: row)
    if let primaryKey, update != .error {
      pendingPrimaryKeys[table.name, default: [:]][TableInfo.indexKey(primaryKey)] = key
    }
    // Managed before its values are read, so cycles of unmanaged objects link back to it.
    object._core = self
    object._epoch = invalidations
    object._table = table
    object._key = key
    object._addPending = true
    return PendingAdd(
      object: object, table: table, info: info, direct: direct, key: key, existing: existing, primaryKey: primaryKey,
      policy: update)
  }

  /// Writes the row of an object `register` made managed, from its unmanaged values.
  private func fill(_ pending: PendingAdd) {
    let (object, table, info, update) = (pending.object, pending.table, pending.info, pending.policy)
    let savedPolicy = addPolicy
    addPolicy = update
    defer { addPolicy = savedPolicy }
    let context = _AccessContext(self)
    // Every stored property is filled from the object below; linking objects stay null.
    var row = [RowValue](repeating: .null, count: table.properties.count)
    if let pk = table.primaryKeyIndex, let primaryKey = pending.primaryKey { row[pk] = primaryKey }
    var changed: [Int] = []
    let oldRow = pending.existing.flatMap { self.row(table, $0) }
    for field in info.fields {
      guard let index = pending.direct ? field.index : table.propertyIndex[field.name],
        table.properties[index].collection != .linkingObjects
      else {
        continue
      }
      if index == table.primaryKeyIndex { continue }
      let value =
        oldRow.flatMap {
          update == .modified ? embeddedUpdatedInPlace(object, field, old: $0[index], table.properties[index]) : nil
        }
        ?? field.wrapperType.storedValue(at: object._fieldAddress(field), context: context)
      row[index] = value
      if let oldRow, update == .all || oldRow[index] != value { changed.append(index) }
    }
    if let oldRow, let pk = table.primaryKeyIndex { row[pk] = oldRow[pk] }
    if !(oldRow != nil && update == .modified && changed.isEmpty) {
      writeRow(row, old: oldRow, table: table, key: pending.key, changed: changed)
    }
    if let oldRow {
      for index in changed {
        removeReplacedEmbedded(old: oldRow[index], new: row[index], property: table.properties[index])
      }
    }
    let base = Unmanaged.passUnretained(object).toOpaque()
    for field in info.fields {
      // The offsets come from the object's own class metadata.
      field.makeManaged(base: base, object: object)
      let holdsObjects =
        field.typeInfo.collection != .none || field.typeInfo.objectType != nil || field.typeInfo.type == .any
      guard holdsObjects, field.options.originProperty == nil,
        let index = pending.direct ? field.index : table.propertyIndex[field.name]
      else { continue }
      let taken = field.wrapperType.takeUnmanagedValue(at: object._fieldAddress(field))
      (taken as? any _ManagedPromotable)?._promote(to: object, index: index)
    }
    object._addPending = false
    object._row = row
    object._rowStamp = stamp
  }

  /// For a `.modified` update, the stored value of `field` when its new embedded objects update
  /// the ones the existing object holds in place, as Realm Core's update of only the modified
  /// values does: a single embedded object, or the elements of a list at the same positions
  /// (further elements are added, missing ones deleted). Nil when that does not apply.
  private func embeddedUpdatedInPlace(
    _ object: ObjectBase, _ field: ClassInfo.Field, old: RowValue, _ property: Property
  ) -> RowValue? {
    guard let target = field.typeInfo.objectType, target is EmbeddedObject.Type else { return nil }
    let current = object._unmanagedValue(field)
    switch (field.typeInfo.collection, old) {
    case (.none, .link(let oldKey)):
      guard let child = flattenedOptional(current) as? EmbeddedObject, child._core == nil else { return nil }
      add(child, update: .modified, existingKey: oldKey)
      return .link(oldKey)
    case (.list, .list(let items)):
      let oldKeys = items.compactMap { item -> ObjectKey? in if case .link(let key) = item { key } else { nil } }
      guard oldKeys.count == items.count,
        let elements = (current as? any _KVCCollection)?._kvcContents as? [Any],
        let children = elements.map({ $0 as? EmbeddedObject }) as? [EmbeddedObject],
        children.allSatisfy({ $0._core == nil })
      else { return nil }
      return .list(
        children.enumerated().map { offset, child in
          guard offset < oldKeys.count else { return linkValue(to: child) }
          add(child, update: .modified, existingKey: oldKeys[offset])
          return .link(oldKeys[offset])
        })
    default:
      return nil
    }
  }

  /// Deletes objects with their embedded objects, and clears links pointing at them.
  func delete(_ objects: [ObjectBase]) {
    requireWrite(RealmCore.objectsNeedWrite)
    var byTable: [String: (TableInfo, Set<ObjectKey>)] = [:]
    for object in objects {
      guard let core = object._core, let table = object._table else {
        fatalError("Can only delete an object from the Realm it belongs to.")
      }
      guard core.file === file else { fatalError("Can only delete an object from the Realm it belongs to.") }
      byTable[table.name, default: (table, [])].1.insert(object._key)
      object._invalidated = true
    }
    for (_, (table, keys)) in byTable { deleteKeys(keys, of: table) }
  }

  func deleteKeys(_ keys: Set<ObjectKey>, of table: TableInfo) {
    guard !keys.isEmpty else { return }
    var embedded: [String: (TableInfo, Set<ObjectKey>)] = [:]
    perform { write in
      for key in keys {
        let keyBytes = TableInfo.keyBytes(key)
        guard let row = row(table, key) else { continue }
        for index in table.indexedProperties {
          _ = try write.delete(TableInfo.indexKey(row[index]) + keyBytes, in: table.indexKeyspace(index))
        }
        if let pk = table.primaryKeyIndex, !table.keysFromPrimaryKey {
          _ = try write.delete(TableInfo.indexKey(row[pk]), in: table.primaryKeyspace)
        }
        _ = try write.delete(keyBytes, in: table.keyspace)
        if hasBacklinks { try Backlinks.update(write, table: table, key: key, old: row, new: nil, properties: nil) }
        for (index, property) in table.properties.enumerated() {
          guard let target = property.objectClassName.flatMap({ self.table(named: $0) }), target.isEmbedded,
            property.collection != .linkingObjects
          else { continue }
          embedded[target.name, default: (target, [])].1.formUnion(Self.linkedKeys(row[index]))
        }
      }
    }
    stamp &+= 1
    nullifyLinks(to: keys, of: table)
    for (_, (target, keys)) in embedded { deleteKeys(keys, of: target) }
  }

  static func linkedKeys(_ value: RowValue) -> [ObjectKey] {
    switch value {
    case .link(let key): return [key]
    case .list(let items): return items.flatMap { linkedKeys($0) }
    case .map(let entries): return entries.flatMap { linkedKeys($0.value) }
    default: return []
    }
  }

  /// Removes links to deleted objects: to-one links become nil, list and set entries go,
  /// map values become nil (RealmSwift's behaviour).
  private func nullifyLinks(to keys: Set<ObjectKey>, of target: TableInfo) {
    if hasBacklinks {
      // The backlink index names exactly the objects linking here.
      var sources: [String: [ObjectKey: Set<Int>]] = [:]
      for key in keys {
        scan(Backlinks.keyspace(target.name), range: .prefix(TableInfo.keyBytes(key))) { entry, _ in
          if let (source, property, sourceKey) = Backlinks.decode(entry) {
            sources[source, default: [:]][sourceKey, default: []].insert(property)
          }
          return true
        }
      }
      for (name, objects) in sources {
        guard let source = table(named: name) else { continue }
        for (sourceKey, properties) in objects {
          guard let old = self.row(source, sourceKey) else { continue }
          var row = old
          for index in properties where index < row.count {
            row[index] = Self.removingLinks(
              row[index], to: keys, of: target.name, in: source.properties[index].collection)
          }
          writeRow(row, old: old, table: source, key: sourceKey, changed: Array(properties))
        }
      }
      return
    }
    for (source, index) in schema.incomingLinks[target.name] ?? [] {
      var updates: [(ObjectKey, [RowValue])] = []
      scan(source.keyspace) { keyBytes, value in
        guard var row = try? RowCodec.decode(value), index < row.count else { return true }
        let cleared = Self.removingLinks(row[index], to: keys)
        if cleared != row[index] {
          row[index] = cleared
          updates.append((TableInfo.key(from: keyBytes), row))
        }
        return true
      }
      for (key, row) in updates {
        writeRow(row, old: self.row(source, key), table: source, key: key, changed: [index])
      }
    }
  }

  /// `value` without its links to `keys` of class `target`: a to-one link becomes nil, list
  /// and set entries go, map values become nil. An `AnyRealmValue` link becomes nil too, in a
  /// list as well (RealmSwift keeps the position).
  static func removingLinks(
    _ value: RowValue, to keys: Set<ObjectKey>, of target: String? = nil, in collection: PropertyCollection = .none
  ) -> RowValue {
    func gone(_ item: RowValue) -> Bool {
      switch item {
      case .link(let key): return keys.contains(key)
      case .typedLink(let name, let key): return name == target && keys.contains(key)
      default: return false
      }
    }
    func isTyped(_ item: RowValue) -> Bool { if case .typedLink = item { return true } else { return false } }
    switch value {
    case .link, .typedLink: return gone(value) ? .null : value
    case .list(let items):
      return .list(
        items.compactMap { item in
          guard gone(item) else { return item }
          return isTyped(item) && collection == .list ? .null : nil
        })
    case .map(let entries):
      return .map(entries.map { gone($0.value) ? RowValue.MapEntry(key: $0.key, value: .null) : $0 })
    default: return value
    }
  }

  /// Deletes embedded objects a write replaced (their parent owned them alone).
  private func removeReplacedEmbedded(old: RowValue, new: RowValue, property: Property) {
    guard property.collection != .linkingObjects, let target = property.objectClassName.flatMap({ table(named: $0) }),
      target.isEmbedded
    else { return }
    let removed = Set(Self.linkedKeys(old)).subtracting(Self.linkedKeys(new))
    deleteKeys(removed, of: target)
  }

  func deleteAll() {
    perform { write in
      for table in schema.tables.values {
        if try write.hasKeyspace(table.keyspace) { try write.clear(table.keyspace) }
        if table.primaryKeyIndex != nil, try write.hasKeyspace(table.primaryKeyspace) {
          try write.clear(table.primaryKeyspace)
        }
        for index in table.indexedProperties where try write.hasKeyspace(table.indexKeyspace(index)) {
          try write.clear(table.indexKeyspace(index))
        }
        if try write.hasKeyspace(Backlinks.keyspace(table.name)) { try write.clear(Backlinks.keyspace(table.name)) }
      }
    }
    stamp &+= 1
  }

  // MARK: Lookups

  func key(forPrimaryKey value: RowValue, in table: TableInfo) -> ObjectKey? {
    if table.keysFromPrimaryKey {
      guard let key = TableInfo.derivedKey(value), get(TableInfo.keyBytes(key), in: table.keyspace) != nil else {
        return nil
      }
      return key
    }
    guard let key = get(TableInfo.indexKey(value), in: table.primaryKeyspace).map({ TableInfo.key(from: $0) })
    else { return nil }
    // A long value's key is a prefix and a hash of it: the object found must hold the value.
    if TableInfo.hasHashedIndexKey(value), let pk = table.primaryKeyIndex, let row = row(table, key),
      TableInfo.normalizedForIndex(row[pk]) != TableInfo.normalizedForIndex(value)
    {
      return nil
    }
    return key
  }

  /// Keys of objects whose indexed property `index` equals `value`.
  func keys(whereIndexed index: Int, equals value: RowValue, in table: TableInfo) -> [ObjectKey] {
    if index == table.primaryKeyIndex { return key(forPrimaryKey: value, in: table).map { [$0] } ?? [] }
    var keys: [ObjectKey] = []
    scan(table.indexKeyspace(index), range: .prefix(TableInfo.indexKey(value))) { key, _ in
      keys.append(TableInfo.key(from: Array(key.suffix(8))))
      return true
    }
    return keys
  }

  /// Every key of `table`, in key (insertion) order.
  func allKeys(_ table: TableInfo) -> [ObjectKey] {
    var keys: [ObjectKey] = []
    keys.reserveCapacity(count(table.keyspace))
    scan(table.keyspace) { key, _ in
      keys.append(TableInfo.key(from: key))
      return true
    }
    return keys
  }
}

func describe(_ value: RowValue) -> String {
  switch value {
  case .string(let s): return s
  case .int(let i): return "\(i)"
  case .objectId(let o): return o.stringValue
  case .uuid(let u): return u.uuidString
  default: return "\(value)"
  }
}
