import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The one write transaction of a store: builds version `version` on top of the newest one.
/// Nothing it does is visible to others until `commit()`; `abort()` (or releasing it without
/// committing) leaves nothing behind. Use it on the thread that began it.
public final class WriteTransaction {
  /// The store the transaction writes to.
  public let store: Store
  /// The version this transaction builds on.
  public let baseVersion: UInt64
  let base: Meta
  /// Extents freed at or before this version may be reused by this transaction.
  let horizon: UInt64
  /// The newest version known durable when the transaction began (at most the base): what
  /// the commit records as `Meta.durable`.
  private var durable: UInt64
  // The transaction's state skips Swift's run-time exclusivity checks (a thread-local access
  // set updated on every access, a tenth of a bulk load's time): a transaction is used by one
  // thread at a time, and no access to one of these properties is held while another to the
  // same property starts (the editor's callback while a tree is edited touches `freeSpace` and
  // `freedBlocks`, never `states`).
  @exclusivity(unchecked) var freeSpace: FreeSpace  // safe: see above
  @exclusivity(unchecked) private var catalogRoot: ChildSlot?  // safe: see above
  @exclusivity(unchecked) private var historyRoot: ChildSlot?  // safe: see above
  @exclusivity(unchecked) private var states: [KeyspaceState] = []  // safe: see above
  @exclusivity(unchecked) private var stateIndex: [String: Int] = [:]  // safe: see above
  /// The keyspace named last and its index in `states`: a run of puts to one keyspace looks
  /// its name up once, not once per put.
  @exclusivity(unchecked) private var lastNamed: (name: String, index: Int)?  // safe: see above
  @exclusivity(unchecked) private var closed = false  // safe: see above
  @exclusivity(unchecked) private var mutationCount = 0  // safe: see above
  /// Whether the commit stores a change record (compaction turns it off).
  var recordsHistory = true
  /// Blocks already written by `bulkLoad`; the commit continues with the same writer.
  private var bulkWriter: CommitWriter?
  private let reader: SnapshotReader
  private var editor: TreeEditor!  // Set at the end of init: it captures self.
  /// Cache keys of the committed blocks this transaction stopped referencing, dropped from
  /// the node cache once the commit is published (`NodeCache.remove`).
  @exclusivity(unchecked) private var freedBlocks: [NodeCache.Key] = []  // safe: see `freeSpace`

  struct KeyspaceState {
    let name: String
    var root: ChildSlot?
    var count: UInt64
    var tracksChanges: Bool
    let existed: Bool
    var exists: Bool
    var modified = false
    var created = false
    var cleared = false
    var dropped = false
    var changes = PendingChanges()
    /// The puts into the keyspace while its tree is empty, not yet built into `root`
    /// (`PutBuffer`, `settle`).
    var buffer: PutBuffer?

    /// Whether puts and deletes are recorded key by key. Not for a keyspace created in this
    /// transaction: every entry it holds at commit is an insertion, which its `created` flag
    /// says without listing (and a bulk load into a new keyspace pays nothing for it).
    var recordsKeys: Bool { tracksChanges && !created }
  }

  init(store: Store, base: Meta, freeSpace: FreeSpace, horizon: UInt64, durable: UInt64) {
    self.store = store
    self.base = base
    self.baseVersion = base.version
    self.freeSpace = freeSpace
    self.horizon = horizon
    self.durable = min(durable, base.version)
    catalogRoot = base.catalog.isNull ? nil : .clean(base.catalog, 0)
    historyRoot = base.history.isNull ? nil : .clean(base.history, 0)
    let blocks = store.blocks
    let limit = base.fileEnd
    reader = SnapshotReader(nav: TreeNavigator(blocks: blocks, limit: limit))
    let version = base.version + 1
    editor = TreeEditor(nav: reader.nav) { [unowned self] p in
      self.freeSpace.free(offset: p.offset, length: p.extentLength, version: version)
      self.freedBlocks.append(NodeCache.Key(offset: p.offset, checksum: p.checksum))
    }
  }

  deinit { if !closed { store.releaseWriter() } }

  /// The version `commit()` creates.
  public var version: UInt64 { baseVersion + 1 }

  private func checkOpen() throws { if closed { throw StorageError.transactionClosed } }

  // MARK: Keyspaces

  private func index(_ name: String) throws -> Int? {
    try checkOpen()
    if let last = lastNamed, last.name == name { return states[last.index].exists ? last.index : nil }
    if let i = stateIndex[name] {
      lastNamed = (name, i)
      return states[i].exists ? i : nil
    }
    guard let root = catalogRoot,
      let bytes = try reader.get(root, Array(name.utf8))
    else { return nil }
    guard let entry = bytes.withUnsafeBytes({ KeyspaceEntry.decode($0) }) else {
      throw StorageError.corrupt(
        path: store.path, offset: base.catalog.offset, reason: "catalog entry for '\(name)' is malformed")
    }
    states.append(
      KeyspaceState(
        name: name, root: entry.slot, count: entry.count, tracksChanges: entry.tracksChanges, existed: true,
        exists: true))
    stateIndex[name] = states.count - 1
    return states.count - 1
  }

  private func require(_ name: String) throws -> Int {
    guard let i = try index(name) else { throw StorageError.keyspaceNotFound(name) }
    return i
  }

  /// Whether the keyspace exists (including ones created in this transaction).
  public func hasKeyspace(_ name: String) throws -> Bool { try index(name) != nil }

  /// Creates a keyspace. `tracksChanges: false` keeps its changes out of the change records.
  public func createKeyspace(_ name: String, tracksChanges: Bool = true) throws {
    guard !name.isEmpty, name.utf8.count <= StorageLimits.maximumKeySize else {
      throw StorageError.invalidArgument("A keyspace name must have 1 to \(StorageLimits.maximumKeySize) bytes.")
    }
    if try index(name) != nil { throw StorageError.keyspaceExists(name) }
    if let i = stateIndex[name] {
      // Dropped earlier in this transaction: it comes back empty.
      states[i].exists = true
      states[i].created = true
      states[i].tracksChanges = tracksChanges
      states[i].changes = PendingChanges()
      states[i].modified = true
    } else {
      var state = KeyspaceState(
        name: name, root: nil, count: 0, tracksChanges: tracksChanges, existed: false, exists: true)
      state.created = true
      state.modified = true
      states.append(state)
      stateIndex[name] = states.count - 1
    }
    mutationCount += 1
  }

  /// Creates the keyspace if it does not exist yet.
  public func ensureKeyspace(_ name: String, tracksChanges: Bool = true) throws {
    if try !hasKeyspace(name) { try createKeyspace(name, tracksChanges: tracksChanges) }
  }

  /// Removes every entry of a keyspace (recorded as one "cleared" change).
  public func clear(_ name: String) throws {
    let i = try require(name)
    if let root = states[i].root { try editor.freeAll(root) }
    states[i].root = nil
    states[i].buffer = nil
    states[i].count = 0
    states[i].cleared = true
    states[i].changes = PendingChanges()
    states[i].modified = true
    mutationCount += 1
  }

  /// Deletes a keyspace and all its entries.
  public func dropKeyspace(_ name: String) throws {
    try clear(name)
    let i = try require(name)
    states[i].exists = false
    states[i].dropped = true
    states[i].created = false
  }

  /// The names of all keyspaces, sorted, as this transaction sees them.
  public func keyspaceNames() throws -> [String] {
    try checkOpen()
    var names = Set<String>()
    if let root = catalogRoot {
      let cursor = Cursor(reader: reader, range: .all, reverse: false, root: { root }, mutations: nil)
      while let name = try cursor.next({ key, _ in String(decoding: key, as: UTF8.self) }) { names.insert(name) }
    }
    for s in states { if s.exists { names.insert(s.name) } else { names.remove(s.name) } }
    return names.sorted()
  }

  // MARK: Reads (they see this transaction's changes)

  /// The value for `key`, or nil.
  public func get(_ key: [UInt8], in keyspace: String) throws -> [UInt8]? {
    let i = try require(keyspace)
    if let buffer = states[i].buffer {
      switch buffer.value(key) {
      case .inline(let v), .pending(let v): return v
      case nil: return nil
      case .blob: settle(i)
      }
    }
    return try reader.get(states[i].root, key)
  }

  /// Calls `body` with the value for `key` seen in place (nil if absent).
  public func withValue<R>(forKey key: [UInt8], in keyspace: String, _ body: (UnsafeRawBufferPointer?) throws -> R)
    throws -> R
  {
    let i = try require(keyspace)
    if let buffer = states[i].buffer {
      switch buffer.value(key) {
      case .inline(let v), .pending(let v): return try v.withUnsafeBytes { try body($0) }
      case nil: return try body(nil)
      case .blob: settle(i)
      }
    }
    return try reader.withValue(states[i].root, key, body)
  }

  /// The number of entries in `keyspace`.
  public func count(in keyspace: String) throws -> UInt64 { states[try require(keyspace)].count }

  /// The number of entries of `keyspace` in `range`.
  public func count(in keyspace: String, range: KeyRange) throws -> UInt64 {
    let i = try require(keyspace)
    settle(i)
    return try reader.count(states[i].root, range)
  }

  /// A cursor over `range`; it sees changes made while it iterates and continues after the
  /// last key it returned.
  public func cursor(in keyspace: String, range: KeyRange = .all, reverse: Bool = false) throws -> Cursor {
    let i = try require(keyspace)
    return Cursor(
      reader: reader, range: range, reverse: reverse,
      root: { [unowned self] in
        self.settle(i)
        return self.states[i].root
      },
      mutations: { [unowned self] in self.mutationCount })
  }

  // MARK: Writes

  /// Inserts or replaces the value for `key`; returns whether `key` was there before.
  /// `changeInfo` is stored with the key's change record (OR-ed with earlier ones for the same
  /// key in this transaction).
  ///
  /// Puts into a keyspace whose tree is empty (filling a new keyspace) are held in a hash table
  /// and built into the tree at once, when the keyspace is first read in key order or at
  /// commit (see `PutBuffer`): every read sees them as usual.
  @discardableResult
  public func put(_ value: [UInt8], forKey key: [UInt8], in keyspace: String, changeInfo: [UInt8] = []) throws
    -> Bool
  {
    guard key.count <= StorageLimits.maximumKeySize else {
      throw StorageError.keyTooLarge(size: key.count, limit: StorageLimits.maximumKeySize)
    }
    guard value.count <= StorageLimits.maximumValueSize else {
      throw StorageError.valueTooLarge(size: value.count, limit: StorageLimits.maximumValueSize)
    }
    let i = try require(keyspace)
    let stored: LeafValue = value.count > StorageLimits.inlineValueLimit ? .pending(value) : .inline(value)
    let existed: Bool
    if let buffer = states[i].buffer {
      existed = buffer.put(key, stored)
    } else if states[i].root == nil {
      let buffer = PutBuffer()
      states[i].buffer = buffer
      existed = buffer.put(key, stored)
    } else {
      existed = try editor.put(&states[i].root, key, stored)
    }
    if !existed { states[i].count += 1 }
    states[i].modified = true
    mutationCount += 1
    if states[i].recordsKeys && recordsHistory { record(i, key, deleted: false, existed: existed, changeInfo) }
    return existed
  }

  /// Deletes `key`; returns whether it was there.
  @discardableResult
  public func delete(_ key: [UInt8], in keyspace: String) throws -> Bool {
    let i = try require(keyspace)
    if let buffer = states[i].buffer {
      guard buffer.remove(key) else { return false }
    } else {
      guard let root = states[i].root, try reader.nav.find(root, key).2 else { return false }
      if let removed = try editor.delete(&states[i].root, key) { editor.release(removed) }
    }
    states[i].count -= 1
    states[i].modified = true
    mutationCount += 1
    if states[i].recordsKeys && recordsHistory { record(i, key, deleted: true, existed: true, []) }
    return true
  }

  /// Creates keyspace `name` holding the entries `next()` yields in strictly ascending key
  /// order, written bottom-up into full nodes as they come (see `BulkBuilder`): memory stays
  /// bounded whatever the size. Nothing is visible before `commit()`.
  func bulkLoad(_ name: String, tracksChanges: Bool, from next: () throws -> ([UInt8], [UInt8])?) throws {
    try createKeyspace(name, tracksChanges: tracksChanges)
    let i = try require(name)
    var writer = bulkWriter ?? CommitWriter(store: store, base: base)
    var builder = BulkBuilder()
    while let (key, value) = try next() {
      guard key.count <= StorageLimits.maximumKeySize else {
        throw StorageError.keyTooLarge(size: key.count, limit: StorageLimits.maximumKeySize)
      }
      let stored: LeafValue =
        value.count > StorageLimits.inlineValueLimit
        ? .blob(try writer.writeBlock(value, space: &freeSpace)) : .inline(value)
      try builder.add(key, stored, writer: &writer, space: &freeSpace)
    }
    if let (root, count) = try builder.finish(writer: &writer, space: &freeSpace) {
      states[i].root = .clean(root, count)
      states[i].count = count
    }
    bulkWriter = writer
    mutationCount += 1
  }

  /// Builds the keyspace's buffered puts into its tree (see `PutBuffer`): before it is read in
  /// key order, and at commit.
  private func settle(_ i: Int) {
    guard let buffer = states[i].buffer else { return }
    states[i].buffer = nil
    states[i].root = buffer.buildTree()
  }

  private func record(_ i: Int, _ key: [UInt8], deleted: Bool, existed: Bool, _ info: [UInt8]) {
    guard let prior = states[i].changes[key] else {
      states[i].changes[key] = PendingChange(
        kind: deleted ? .delete : (existed ? .update : .insert), payload: deleted ? [] : info)
      return
    }
    switch (prior.kind, deleted) {
    case (.insert, true): states[i].changes[key] = nil
    case (.insert, false):
      states[i].changes[key] = PendingChange(kind: .insert, payload: PendingChange.merge(prior.payload, info))
    case (.update, true): states[i].changes[key] = PendingChange(kind: .delete, payload: [])
    case (.update, false):
      states[i].changes[key] = PendingChange(kind: .update, payload: PendingChange.merge(prior.payload, info))
    case (.delete, _): states[i].changes[key] = PendingChange(kind: .update, payload: info)
    }
  }

  // MARK: Commit

  /// Aborts: nothing of this transaction remains. Returns once the version it started from is
  /// durable and published (it may have been a commit still waiting for its sync), so that
  /// what the transaction read never goes back to an older state afterwards.
  public func abort() {
    guard !closed else { return }
    release()
    try? store.complete(base)
  }

  /// Lets the writer lock go.
  private func release() {
    guard !closed else { return }
    closed = true
    store.releaseWriter()
  }

  /// Commits and returns the new version (the base version when nothing changed).
  ///
  /// The commit's blocks and record are written while the writer lock is held; the lock is
  /// then released, so the next writer (of any thread or process) prepares its commit while
  /// this one waits for its sync, and one sync makes a batch of commits durable (group
  /// commit). It returns once the commit is durable (durability `full`) and published.
  @discardableResult
  public func commit() throws -> UInt64 {
    try checkOpen()
    let written = try writeReleasingLock()
    // Nothing changed: the base, perhaps a commit still waiting for its sync, is the result.
    try store.complete(written ?? base)
    return written?.version ?? baseVersion
  }

  /// Commits and returns the version it made, pinned before any reader can see it: the exact
  /// state after this commit. `beforePublish` runs with it once the commit is written and
  /// before it can be published (the writer lock is still held), so whatever it records is in
  /// place before any other thread or process hears of the commit. Returns once the commit is
  /// durable, as `commit()`. When nothing changed, the result is the base version (pinned) and
  /// `beforePublish` does not run.
  public func commitPinned(beforePublish: (ReadTransaction) -> Void) throws -> ReadTransaction {
    try checkOpen()
    var pinned: ReadTransaction?
    let store = self.store
    let written: Meta?
    do {
      written = try writeReleasingLock(
        pin: { meta in
          try store.coordinator.pinUnpublished(meta)
          let snapshot = ReadTransaction(store: store, meta: meta)
          pinned = snapshot
          return snapshot
        }, beforePublish: beforePublish)
    } catch {
      pinned?.close()
      throw error
    }
    guard let written, let pinned else {
      try store.complete(base)
      return try store.beginRead()
    }
    do {
      try store.complete(written)
    } catch {
      pinned.close()
      throw error
    }
    return pinned
  }

  /// Pins the version this transaction started from (while the writer lock is held, the
  /// newest): the exact state before its commit.
  public func pinBase() throws -> ReadTransaction {
    try checkOpen()
    let published = try store.beginRead()
    if published.version == baseVersion { return published }
    // The base is a commit still waiting for its sync (group commit): pinned as it is.
    published.close()
    try store.coordinator.pinUnpublished(base)
    return ReadTransaction(store: store, meta: base)
  }

  /// Writes the commit (`commitHoldingLock`), publishes it at once unless the durability is
  /// `full` (nothing waits for a sync then), and lets the writer lock go, also when it fails.
  private func writeReleasingLock(
    pin: ((Meta) throws -> ReadTransaction)? = nil, beforePublish: (ReadTransaction) -> Void = { _ in }
  ) throws -> Meta? {
    let written: Meta?
    do {
      written = try commitHoldingLock(pin: pin, beforePublish: beforePublish)
    } catch {
      abort()
      throw error
    }
    defer { release() }
    if let written, store.options.durability != .full { try store.publishWritten(written) }
    return written
  }

  /// Writes the commit while the writer lock is held and records it as the head; returns its
  /// record, or nil when nothing changed. `pin`, when given, pins the new version before its
  /// commit record is written (a failure to pin then leaves nothing behind), and
  /// `beforePublish` runs with that pin once the commit is written, before it is the head.
  private func commitHoldingLock(
    pin: ((Meta) throws -> ReadTransaction)? = nil, beforePublish: (ReadTransaction) -> Void = { _ in }
  ) throws -> Meta? {
    guard states.contains(where: { $0.modified }) else { return nil }
    let started = Log.isEnabled(.debug, .transaction) ? EngineClock.now() : 0
    try store.checkVersionLimit(latest: baseVersion)
    var writer = bulkWriter ?? CommitWriter(store: store, base: base)
    // Keyspaces, then their catalog entries.
    for i in states.indices where states[i].modified {
      let name = Array(states[i].name.utf8)
      if states[i].exists {
        settle(i)
        let root = try writer.flush(&states[i].root, space: &freeSpace)
        let entry = KeyspaceEntry(root: root, count: states[i].count, tracksChanges: states[i].tracksChanges)
        _ = try editor.put(&catalogRoot, name, .inline(entry.encode()))
      } else if states[i].existed {
        if let catalog = catalogRoot, try reader.nav.find(catalog, name).2 {
          _ = try editor.delete(&catalogRoot, name)
        }
      }
    }
    if recordsHistory {
      let record = changeRecord()
      let bytes = record.encode()
      _ = try editor.put(
        &historyRoot, ChangeRecord.key(for: version),
        bytes.count > StorageLimits.inlineValueLimit ? .pending(bytes) : .inline(bytes))
    }
    // Trim records no pin can need: a reader at version p reads records after p.
    while let root = historyRoot, root.count > 0, case let first = try reader.nav.key(reader.nav.entry(root, at: 0)),
      (ChangeRecord.version(fromKey: first) ?? 0) <= horizon
    {
      if let removed = try editor.delete(&historyRoot, first) { editor.release(removed) }
    }
    let catalog = try writer.flush(&catalogRoot, space: &freeSpace)
    let history = try writer.flush(&historyRoot, space: &freeSpace)
    // An anchor: every anchorInterval-th commit, and any whose base reserved no place for it.
    let anchor = base.next == 0 || version % FileLayout.anchorInterval == 0
    if base.next != 0 {
      // The record is freed as it is written, to be reused once no anchor in a meta slot is
      // older than it: recovery follows the chain through it from either anchor (the older
      // one when the newer slot is damaged). The slots hold the two newest anchors, so that is
      // once the second anchor after it is durable, when the horizon reaches its version.
      let interval = FileLayout.anchorInterval
      freeSpace.free(
        offset: base.next, length: FileLayout.recordSize,
        version: (version + interval - 1) / interval * interval + interval)
    }
    let next = writer.reserveNext(&freeSpace, bulk: bulkWriter != nil)
    let freeList = try writer.writeFreeList(&freeSpace)
    // Not when no process writes with durability `full`: no commit is promised to survive a
    // power loss then, and without syncs each anchor would sync holding the writer lock.
    if anchor, store.powerLossRules { durable = try anchorFallbackDurable() }
    let meta = Meta(
      version: version, timestamp: EngineClock.now(), fileEnd: freeSpace.fileEnd, catalog: catalog, freeList: freeList,
      history: history, next: next.offset, nextLength: next.length, previous: base.checksum(seal: store.seal),
      anchorSlot: anchor ? 1 - base.anchorSlot : base.anchorSlot, durable: durable)
    let pinned = try pin?(meta)
    do {
      try writer.finish(meta, record: base.next, anchor: anchor, baseEnd: base.fileEnd)
    } catch {
      pinned?.close()
      throw error
    }
    if let pinned { beforePublish(pinned) }
    store.recordWritten(
      meta, freeSpace: freeSpace, blockBytes: writer.packedBytes, treeBytes: writer.packedBeforeFreeList)
    store.blocks.cache.remove(freedBlocks)
    if started != 0 {
      let changed = states.filter(\.modified)
      Log.write(
        .debug, .transaction,
        "Committed version \(version) of \(store.path): \(changed.count) keyspaces, "
          + "\(changed.reduce(0) { $0 + $1.changes.count }) changed keys, file end \(meta.fileEnd) bytes, "
          + "\((EngineClock.now() - started) / 1000) µs to write (durability \(store.options.durability))")
    }
    return meta
  }

  /// The durable version to record in an anchor, after making sure the meta slot it leaves
  /// alone holds a durable anchor: this anchor replaces the older one, and after a power loss
  /// the other is all recovery may have. Almost always durable already (it was written
  /// `FileLayout.anchorInterval` commits ago); otherwise every commit written so far is synced
  /// first.
  private func anchorFallbackDurable() throws -> UInt64 {
    let known = min(store.coordinator.durableVersion, baseVersion)
    let slot = FileLayout.metaOffset(slot: Int(base.anchorSlot))
    let fallback =
      Meta.decode(try store.file.read(count: Meta.encodedSize, at: slot), seal: store.seal)?.version ?? baseVersion
    guard min(fallback, baseVersion) > known else { return max(durable, known) }
    return min(try store.syncHoldingWriterLock(base), baseVersion)
  }

  /// The change record this transaction would store if it committed now: what it inserted,
  /// updated and deleted so far, per keyspace that tracks changes. A keyspace created in the
  /// transaction is marked `created` and lists no keys; one cleared is marked `cleared`.
  public func pendingChangeRecord() throws -> ChangeRecord {
    try checkOpen()
    return changeRecord()
  }

  private func changeRecord() -> ChangeRecord {
    var keyspaces: [KeyspaceChanges] = []
    for s in states where s.modified && (s.tracksChanges || s.dropped || s.created) {
      let changes = s.changes.sorted().map { KeyChange(kind: $0.change.kind, key: $0.key, payload: $0.change.payload) }
      if changes.isEmpty && !s.cleared && !s.created && !s.dropped { continue }
      keyspaces.append(
        KeyspaceChanges(keyspace: s.name, created: s.created, cleared: s.cleared, dropped: s.dropped, changes: changes))
    }
    keyspaces.sort { $0.keyspace < $1.keyspace }
    return ChangeRecord(version: version, keyspaces: keyspaces)
  }
}

/// Writes a commit's blocks: compresses, allocates, checksums and batches them, then the
/// commit record (and, for an anchor, a meta slot). The sync follows in `Store.complete`.
struct CommitWriter {
  let store: Store
  let version: UInt64
  var batch = WriteBatch()
  /// The unused part of the run this commit's blocks are being packed into.
  private var run: (offset: UInt64, end: UInt64)?
  /// Size of the next run: first what the previous commit packed (a run of small commits
  /// then each fit one), then doubling up to 1 MiB.
  private var nextRunSize: UInt64
  /// Bytes of blocks packed into runs so far.
  private(set) var packedBytes: UInt64 = 0
  /// `packedBytes` when the successor's run was reserved: the tree blocks, the free list aside
  /// (0 when none was).
  private(set) var packedBeforeFreeList: UInt64 = 0
  /// The most tree blocks recent commits of this process packed (`Store.packedHistory`).
  private let packedPeak: UInt64
  /// This commit's block key and numbering, for an encrypted file (made at its first block).
  private var sealer: FileSeal.BlockSealer?
  /// Leaves encoded and compressed ahead of being placed, on several cores (see `precode`).
  private var precoded: [ObjectIdentifier: PrecodedBlock] = [:]

  /// A node's encoded bytes, what `BlockCodec.encode` made of them, and its image for the
  /// node cache.
  struct PrecodedBlock: Sendable {
    var raw: [UInt8]
    var codec: BlockCodecKind
    var block: [UInt8]
    var storedCount: Int
    var image: NodeImage
  }

  /// Leaves handed to the threads of `precode`, which only read them (`encode` and
  /// `imagePrefixes` change nothing) while the transaction's thread waits for them.
  private struct ReadOnlyNodes: @unchecked Sendable {  // safe: only read, by concurrentPerform
    let nodes: [DirtyNode]
    init(_ nodes: [DirtyNode]) { self.nodes = nodes }
  }

  /// A branch with at least this many new leaves under it has them compressed in parallel.
  static let parallelEncodingMinimum = 16

  /// The unit the kernel writes back: a commit touching fewer of them syncs faster.
  static let page: UInt64 = 4096

  /// The most a commit reserves for its successor: small commits, the ones a separate meta
  /// write would slow down the most, fit; a larger successor continues in runs of its own.
  static let maximumReservation: UInt64 = 64 << 10

  /// Starts the blocks of the commit on top of `base`, packed first into the run `base`
  /// reserved for it, after the place of its record.
  init(store: Store, base: Meta) {
    self.store = store
    self.version = base.version + 1
    // An eighth more than last time, for the tree and the free list growing a little.
    let (lastCommit, peak) = store.packedHistory
    nextRunSize = CommitWriter.pages(min(lastCommit + lastCommit / 8, 1 << 20))
    packedPeak = peak
    if base.next != 0 {
      run = (base.next + FileLayout.recordSize, base.next + UInt64(base.nextLength))
    }
  }

  /// Reserves the place of the next commit's record and first run, sized after the most
  /// that this and recent commits packed (`packedPeak`: commits that change keys in
  /// different parts of a tree pack branches of different sizes, and a run sized after the
  /// smaller misses the larger, whose record is then a stretch of the file of its own);
  /// nothing after a bulk load or a large commit (the next commit then writes an anchor
  /// instead).
  mutating func reserveNext(_ space: inout FreeSpace, bulk: Bool) -> (offset: UInt64, length: UInt32) {
    guard !bulk, packedBytes <= CommitWriter.maximumReservation else { return (0, 0) }
    packedBeforeFreeList = packedBytes
    let freeList =
      UInt64(
        space.nextFreeListEstimate(
          version: version, overhead: store.seal == nil ? 0 : FileSeal.blockOverhead)) + 256
    // At most four times this commit's and four pages: one large commit among small ones
    // does not make the next ones reserve (and perhaps grow the file by) much more than they
    // use.
    let tree = max(packedBytes, min(packedPeak, 4 * packedBytes + 4 * CommitWriter.page))
    let wanted = FileLayout.recordSize + tree + tree / 8 + freeList
    // Granules, not pages: a window of whole free pages is rarer than one of the bytes needed,
    // and the run is one stretch of the file either way.
    let length = FileLayout.roundUp(min(wanted, CommitWriter.maximumReservation))
    // The record must not straddle a 512-byte sector, so that a power loss leaves it whole,
    // gone or garbage, never part of it (see `Store.recover`): the run starts on 256 bytes.
    let start = space.allocateRun(length + FileLayout.granule, alignment: CommitWriter.page)
    if start % (2 * FileLayout.granule) == 0 {
      space.unallocate(start + length, FileLayout.granule)
      return (start, UInt32(length))
    }
    space.unallocate(start, FileLayout.granule)
    return (start + FileLayout.granule, UInt32(length))
  }

  /// `bytes` rounded up to whole pages (at least one).
  private static func pages(_ bytes: UInt64) -> UInt64 { max(1, (bytes + page - 1) / page) * page }

  /// Space for one block, packed right after the commit's previous packed block, so that the
  /// blocks every commit rewrites (the path from each changed leaf to its root, the catalog,
  /// the history, the free list) share as few pages as possible (each page a sync writes back
  /// costs tens of µs), and the next commit frees whole runs, page-aligned windows for the
  /// commit after it. Blocks likely to outlive many commits are placed one by one instead
  /// (`FreeSpace.allocate`), so that they fill the holes others left and do not strand
  /// pieces of runs.
  mutating func allocate(_ length: UInt64, space: inout FreeSpace) -> UInt64 {
    packedBytes += length
    if let current = run, current.end - current.offset >= length {
      run = (current.offset + length, current.end)
      return current.offset
    }
    releaseRun(&space)
    let size = max(CommitWriter.pages(length), nextRunSize)
    nextRunSize = min(nextRunSize * 2, 1 << 20)
    let start = space.allocateRun(size, alignment: CommitWriter.page)
    run = (start + length, start + size)
    return start
  }

  /// Gives the unused rest of the current run back to the free space.
  mutating func releaseRun(_ space: inout FreeSpace) {
    if let current = run, current.end > current.offset {
      space.unallocate(current.offset, current.end - current.offset)
    }
    run = nil
  }

  /// Compresses, places (packed into the current run, or alone when `packed` is false),
  /// checksums and batches one block.
  mutating func writeBlock(
    _ raw: [UInt8], space: inout FreeSpace, packed: Bool = true, isNode: Bool = false, unpacked: Bool = false,
    precoded: PrecodedBlock? = nil
  ) throws -> BlockPointer {
    var (codec, block, storedCount) =
      precoded.map { ($0.codec, $0.block, $0.storedCount) }
      ?? BlockCodec.encode(raw, granule: Int(FileLayout.granule), isNode: isNode, unpacked: unpacked)
    guard storedCount <= Int(UInt32.max) - FileSeal.blockOverhead else {
      throw StorageError.invalidArgument("A block of \(storedCount) bytes is too large to store.")
    }
    let granule = Int(FileLayout.granule)
    // Sealed, a block grows by `FileSeal.blockOverhead`: its place is allocated for that size.
    let sealedCount = storedCount + (store.seal == nil ? 0 : FileSeal.blockOverhead)
    let length = UInt64((sealedCount + granule - 1) / granule * granule)
    let offset = packed ? allocate(length, space: &space) : space.allocate(length)
    let checksum: UInt64
    if let seal = store.seal {
      var commitSealer = sealer ?? FileSeal.BlockSealer(seal)
      let sealed = try block.withUnsafeBytes {
        try commitSealer.seal(
          UnsafeRawBufferPointer(rebasing: $0[..<storedCount]), offset: offset, birth: version, granule: granule)
      }
      sealer = commitSealer
      (block, storedCount, checksum) = (sealed.block, sealed.storedCount, sealed.checksum)
    } else {
      checksum = block.withUnsafeBytes {
        Checksum.xxh64(
          UnsafeRawBufferPointer(rebasing: $0[..<storedCount]), seed: BlockPointer.seed(offset: offset, birth: version))
      }
    }
    try batch.add(block, at: offset, to: store.file)
    return BlockPointer(
      offset: offset, storedLength: UInt32(storedCount), rawLength: UInt32(raw.count), codec: codec,
      checksum: checksum, birth: version)
  }

  /// Writes a dirty subtree bottom-up; returns its root pointer (null for an empty tree).
  /// Packed into the commit's run: roots; branches above the lowest level (a few nodes in
  /// all, each rewritten every few commits, so a run they hold on to is soon free again);
  /// and nodes copied from blocks the previous commit wrote (a path every commit rewrites,
  /// such as the rightmost one under appends). Leaves, the lowest branches and large values
  /// are placed alone: there are many of them and each is likely to outlive many commits,
  /// so packed they would keep whole runs from being reused.
  ///
  /// `isTreeRoot` false keeps a root branch packed: a bulk load flushes each node it
  /// completes as the root of its subtree, and only the top one is the tree's root.
  mutating func flush(
    _ slot: inout ChildSlot?, space: inout FreeSpace, isRoot: Bool = true, isTreeRoot: Bool = true
  ) throws -> BlockPointer {
    guard let current = slot else { return .null }
    switch current {
    case .clean(let p, _): return p
    case .dirty(let node):
      var aboveBranches = false
      if node.isLeaf {
        try node.storePendingValues { try writeBlock($0, space: &space, packed: false) }
      } else {
        precode(childrenOf: node)
        try node.flushChildren { child in
          if !child.isLeaf { aboveBranches = true }
          var childSlot: ChildSlot? = .dirty(child)
          return .clean(try flush(&childSlot, space: &space, isRoot: false), child.subtreeCount)
        }
      }
      let ready = precoded.removeValue(forKey: ObjectIdentifier(node))
      let raw = ready?.raw ?? node.encode()
      let packed = isRoot || aboveBranches || node.originBirth + 1 == version
      // A root branch of short keys is stored as it is encoded, not packed
      // (`BlockCodec.packBranch`): every commit to the tree rewrites it, and every writer of
      // another process then reads it back. With four writer processes (roots of up to about a
      // hundred children), unpacking one took 22,000 instructions on average, more than
      // decompressing a leaf (14,000); packing it, 9,000. The tree holds one root, so the file
      // hardly grows.
      let p = try writeBlock(
        raw, space: &space, packed: packed, isNode: true, unpacked: isRoot && isTreeRoot && !node.isLeaf,
        precoded: ready)
      let image = ready?.image ?? NodeImage(encoded: raw, of: node)
      store.blocks.cache.insert(NodeCache.Key(offset: p.offset, checksum: p.checksum), image)
      slot = .clean(p, node.subtreeCount)
      return p
    }
  }

  /// Encodes and compresses the new leaves under `node` on every core at once, when there are
  /// many (a bulk load: LZ4 was a third of its time, on one core); `flush` then places and
  /// writes them in order as before. Leaves with values still to store as blobs are left to
  /// `flush`, which must store those first.
  private mutating func precode(childrenOf node: DirtyNode) {
    let leaves = node.dirtyChildren().filter { $0.isLeaf && !$0.hasPendingValues }
    guard leaves.count >= CommitWriter.parallelEncodingMinimum, sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1 else {
      return
    }
    let granule = Int(FileLayout.granule)
    let nodes = ReadOnlyNodes(leaves)
    let results = Mutex([PrecodedBlock?](repeating: nil, count: leaves.count))
    DispatchQueue.concurrentPerform(iterations: leaves.count) { i in
      let leaf = nodes.nodes[i]
      let raw = leaf.encode()
      let (codec, block, storedCount) = BlockCodec.encode(raw, granule: granule, isNode: true)
      let made = PrecodedBlock(
        raw: raw, codec: codec, block: block, storedCount: storedCount, image: NodeImage(encoded: raw, of: leaf))
      results.withLock { $0[i] = made }
    }
    let made = results.withLock { $0 }
    for (i, leaf) in leaves.enumerated() { if let block = made[i] { precoded[ObjectIdentifier(leaf)] = block } }
  }

  /// Stores the free-space list: only this commit's changes on top of the stored chain when
  /// that is small (`FreeSpace.shouldStoreDelta`), else the whole list, which frees the old
  /// chain. Either goes into space it allocates from itself: the stored list already
  /// accounts for its own block. Stored raw and zero-padded to its extent. The size is
  /// computed exactly before encoding, so the list is encoded once.
  mutating func writeFreeList(_ space: inout FreeSpace) throws -> BlockPointer {
    let delta = space.shouldStoreDelta
    if !delta {
      for block in space.chain { space.free(offset: block.offset, length: block.extentLength, version: version) }
    }
    // Sealed, the list's block also holds the seal's salt, number and tag.
    let overhead = store.seal == nil ? 0 : FileSeal.blockOverhead
    func size() -> Int { (delta ? space.deltaEncodedSize : space.encodedSize) + overhead }
    var reserve = FreeSpace.blockLength(size())
    while true {
      let offset = allocate(reserve, space: &space)
      releaseRun(&space)
      guard UInt64(size()) <= reserve else {
        space.unallocate(offset, reserve)
        packedBytes -= reserve
        reserve = FileLayout.roundUp(UInt64(size()) + 256)
        continue
      }
      var bytes = delta ? space.encodeDelta() : space.encode()
      // Zero-padded so that the block, sealed or not, fills the whole reserve.
      bytes.append(contentsOf: repeatElement(0, count: Int(reserve) - overhead - bytes.count))
      let checksum: UInt64
      if let seal = store.seal {
        var commitSealer = sealer ?? FileSeal.BlockSealer(seal)
        let sealed = try bytes.withUnsafeBytes {
          try commitSealer.seal($0, offset: offset, birth: version, granule: Int(FileLayout.granule))
        }
        sealer = commitSealer
        (bytes, checksum) = (sealed.block, sealed.checksum)
      } else {
        checksum = bytes.withUnsafeBytes {
          Checksum.xxh64($0, seed: BlockPointer.seed(offset: offset, birth: version))
        }
      }
      try batch.add(bytes, at: offset, to: store.file)
      let block = BlockPointer(
        offset: offset, storedLength: UInt32(reserve), rawLength: UInt32(reserve - UInt64(overhead)), codec: .raw,
        checksum: checksum, birth: version)
      space.stored(in: block, delta: delta)
      return block
    }
  }

  /// Writes the remaining blocks, then the commit record at `record` (the place the base
  /// reserved; 0 for none) and, for an anchor, into meta slot `meta.anchorSlot`; the sync follows
  /// once the writer lock is released (`Store.complete`). The record is written after the blocks, so a process killed
  /// midway never leaves a record whose blocks are missing from the page cache.
  mutating func finish(_ meta: Meta, record: UInt64, anchor: Bool, baseEnd: UInt64) throws {
    try batch.flush(to: store.file)
    // Only small commits to a file with data: a large one writes much more than the growth
    // costs, and a bulk load or a compacted copy (the first commit of its file) stays dense.
    if baseEnd > FileLayout.dataStart, meta.fileEnd > baseEnd, meta.fileEnd - baseEnd <= 64 << 10 {
      try store.extendAhead(of: meta.fileEnd)
    }
    // The file reaches at least the data area's end, even where this commit wrote nothing
    // (the run reserved for the next commit, a gap before it): a shorter file is truncated.
    if meta.fileEnd > baseEnd { try store.ensureFileReaches(meta.fileEnd) }
    let encoded = meta.encode(seal: store.seal)
    if record != 0 { try store.file.write(encoded, at: record) }
    if anchor { try store.file.write(encoded, at: FileLayout.metaOffset(slot: Int(meta.anchorSlot))) }
    // The sync comes after the writer lock is released (`Store.complete`): group commit.
  }
}
