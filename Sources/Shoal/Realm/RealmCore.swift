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
  /// The version a delivery started inside another one (a callback wrote, moving the Realm on)
  /// would have told of changes from: told once the outer delivery is over, so observers that
  /// keep their state up to date from change records miss no commit.
  var deferredDeliveryFrom: ReadTransaction?
  /// Whether a commit of this Realm's own is among those deferred (objects then report no old
  /// values for them, as for any local write).
  var deferredDeliveryIsLocal = false
  /// Tokens a `write(withoutNotifying:)` asked to skip for its commit.
  var skippedTokens: [NotificationToken] = []
  /// Whether this Realm is a frozen snapshot.
  let isFrozen: Bool
  /// Whether the file has the backlink index (every writable open builds it).
  var hasBacklinks: Bool { schema.hasBacklinks }
  /// The frozen Realm of the current version, while something holds it.
  weak var frozenCore: RealmCore?
  /// Queued `writeAsync`/`beginAsyncWrite` blocks.
  lazy var asyncWrites = AsyncWrites()
  /// Changes whenever what this Realm sees may have changed; cached rows compare against it.
  /// (Read on every property access, and only ever read or bumped in one statement, never
  /// held across a call: unchecked for exclusivity.)
  @exclusivity(unchecked) var stamp: UInt64 = 1
  /// Next object key per class during a write, flushed at commit.
  var nextKeys: [ObjectIdentifier: (table: TableInfo, next: ObjectKey)] = [:]
  /// Whether the open write transaction's file records writes for sync (nil: not looked up yet).
  var syncOutboxKnown: Bool?
  /// Primary keys of the objects the open write transaction deleted, per class (sync only).
  var syncDeleted: [String: [ObjectKey: RowValue]] = [:]
  /// Whether the open write transaction stays out of the sync outbox (a download's).
  var syncOutboxSuppressed = false
  /// The update policy of the `add` in progress, applied to linked objects it adds.
  var addPolicy: Realm.UpdatePolicy = .error
  /// Objects made managed by `add` whose rows are not written yet, in the order reached (see
  /// RealmCore+Writes.swift).
  var pendingAdds: [PendingAdd] = []
  var drainingAdds = false
  /// The primary keys of `pendingAdds` (by class, then index key), so that two objects of one
  /// `add` with the same primary key are one object, as when the first is written first.
  var pendingPrimaryKeys: [String: [[UInt8]: ObjectKey]] = [:]
  /// Decoded rows read at `rowCacheStamp` (cleared when the stamp moves). Used on every row
  /// lookup, only in single statements that call nothing back into this Realm: unchecked for
  /// exclusivity.
  @exclusivity(unchecked) var rowCache = RowCache()
  var rowCacheStamp: UInt64 = 0
  static let rowCacheLimit = 200_000
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
    if let sync = configuration.syncConfiguration, configuration.inMemoryIdentifier == nil, !configuration.readOnly {
      sync.agent.realmOpened(configuration)
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

  /// Whether objects of `other` and of this Realm can be the same object, as RealmSwift's
  /// `isSameObject` requires the same Realm: the same live Realm instance (one per thread,
  /// queue or actor, so an object is never the same as its copy on another thread), or frozen
  /// Realms of one file at one version (a frozen object is never the same as a live one).
  func sameView(as other: RealmCore) -> Bool {
    if self === other { return true }
    guard file === other.file, isFrozen, other.isFrozen else { return false }
    return read?.version == other.read?.version
  }

  // MARK: Transactions

  var isInWriteTransaction: Bool { write != nil }

  /// The snapshot reads go to (begun lazily after `invalidate`).
  /// Whether anything was read through this Realm since it was opened (see `Realm.resolve`).
  private(set) var hasRead = false

  func snapshot() -> ReadTransaction {
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
      storageFailure(error, "read \(keyspace)")
    }
  }

  /// Every (key, value) of `keyspace` in key order, optionally within `range`.
  func scan(_ keyspace: String, range: KeyRange = .all, _ body: ([UInt8], [UInt8]) -> Bool) {
    verifyThread()
    do {
      guard let cursor = try cursor(keyspace, range: range) else { return }
      while let (key, value) = try cursor.next() {
        if !body(key, value) { return }
      }
    } catch {
      storageFailure(error, "read \(keyspace)")
    }
  }

  /// Every (key, value) of `keyspace` in `range`, in key order, seen in place (valid only inside
  /// `body`): a snapshot's entries are visited a leaf at a time, nothing is copied.
  func scanInPlace(
    _ keyspace: String, range: KeyRange = .all, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
  ) {
    verifyThread()
    do {
      try cursor(keyspace, range: range)?.forEach(body)
    } catch {
      storageFailure(error, "read \(keyspace)")
    }
  }

  /// A cursor over `range` of `keyspace` in the write transaction or the snapshot; nil when the
  /// keyspace does not exist (yet).
  func cursor(_ keyspace: String, range: KeyRange = .all) throws -> Cursor? {
    if let write {
      guard try write.hasKeyspace(keyspace) else { return nil }
      return try write.cursor(in: keyspace, range: range)
    }
    let read = snapshot()
    guard try read.hasKeyspace(keyspace) else { return nil }
    return try read.keyspace(keyspace).cursor(range: range)
  }

  /// The number of entries of `keyspace` in `range` (from the tree's counts: no entry is read).
  func count(_ keyspace: String, in range: KeyRange) -> Int {
    verifyThread()
    do {
      if let write {
        return try write.hasKeyspace(keyspace) ? Int(try write.count(in: keyspace, range: range)) : 0
      }
      let read = snapshot()
      return try read.hasKeyspace(keyspace) ? Int(try read.keyspace(keyspace).count(in: range)) : 0
    } catch {
      storageFailure(error, "count \(keyspace)")
    }
  }

  func count(_ keyspace: String) -> Int {
    verifyThread()
    do {
      if let write { return try write.hasKeyspace(keyspace) ? Int(try write.count(in: keyspace)) : 0 }
      let read = snapshot()
      return try read.hasKeyspace(keyspace) ? Int(try read.count(in: keyspace)) : 0
    } catch {
      storageFailure(error, "count \(keyspace)")
    }
  }

  /// Stops on a failure of the storage engine where RealmSwift's API cannot throw (accessors,
  /// collections, queries), naming the Realm's file and what was being done: the one way such
  /// failures leave the object layer. A reader outside the file's session whose snapshot was
  /// overwritten gets the engine's advice to refresh.
  func storageFailure(_ error: any Error, _ action: String) -> Never {
    let realm =
      configuration.inMemoryIdentifier.map { "the in-memory Realm '\($0)'" }
      ?? "the Realm at '\(configuration.fileURL?.path ?? "?")'"
    fatalError("Could not \(action) in \(realm): \(error)")
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
    syncOutboxKnown = nil
    syncDeleted = [:]
    syncOutboxSuppressed = false
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
      try appendToSyncOutbox(transaction)
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
    syncDeleted = [:]
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
      // The newest version cannot be pinned (every reader slot of the file is taken): stay
      // on the version already pinned, which remains readable, and say why.
      Log.write(.error, .shoal, "DB: \(file.logID) Could not move to the newest version: \(error)")
      return false
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

  func perform(_ body: (WriteTransaction) throws -> Void) {
    requireWrite()
    guard let write else { return }
    do { try body(write) } catch { storageFailure(error, "write") }
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
