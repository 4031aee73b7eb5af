import Synchronization

/// A snapshot of one version. Immutable, `Sendable`, usable from any thread; its version
/// stays pinned (its blocks are not reused) until `close()` or until it is released.
public final class ReadTransaction: Sendable {
  /// The store the snapshot belongs to.
  public let store: Store
  /// The meta record of the pinned version, shared with the other snapshots of it.
  private let published: DecodedMeta
  private let released = Atomic<Bool>(false)
  let reader: SnapshotReader

  /// The meta record of the pinned version.
  package var meta: Meta { published.meta }

  convenience init(store: Store, meta: Meta) { self.init(store: store, published: DecodedMeta(meta)) }

  init(store: Store, published: DecodedMeta) {
    self.store = store
    self.published = published
    let blocks =
      store.isDetached ? store.blocks.following(snapshot: published.meta, in: store.file) : store.blocks
    let limit = published.meta.fileEnd
    reader = SnapshotReader(nav: TreeNavigator(blocks: blocks, limit: limit))
  }

  // No other thread can reach the transaction any more: a plain load says whether `close()`
  // ran (an atomic exchange is a locked instruction, a tenth of a snapshot's cost).
  deinit { if !released.load(ordering: .acquiring) { store.unpin(published.meta.version) } }

  /// The pinned version.
  public var version: UInt64 { published.meta.version }

  /// Releases the pin. Reading after `close()` is not allowed.
  public func close() {
    if !released.exchange(true, ordering: .acquiringAndReleasing) { store.unpin(published.meta.version) }
  }

  private func checkOpen() throws {
    if released.load(ordering: .acquiring) { throw StorageError.transactionClosed }
  }

  func entry(_ name: String) throws -> KeyspaceEntry? {
    try checkOpen()
    guard !meta.catalog.isNull else { return nil }
    return try reader.withValue(.clean(meta.catalog, 0), Array(name.utf8)) { bytes in
      guard let bytes else { return nil }
      guard let entry = KeyspaceEntry.decode(bytes) else {
        throw StorageError.corrupt(
          path: store.path, offset: meta.catalog.offset, reason: "catalog entry for '\(name)' is malformed")
      }
      return entry
    }
  }

  /// A handle on a keyspace of this snapshot (faster than naming it in every call).
  public func keyspace(_ name: String) throws -> KeyspaceSnapshot {
    guard let entry = try entry(name) else { throw StorageError.keyspaceNotFound(name) }
    return KeyspaceSnapshot(transaction: self, name: name, entry: entry)
  }

  /// Whether a keyspace of this name exists in the snapshot.
  public func hasKeyspace(_ name: String) throws -> Bool { try entry(name) != nil }

  /// The names of all keyspaces, sorted.
  public func keyspaceNames() throws -> [String] {
    try checkOpen()
    guard !meta.catalog.isNull else { return [] }
    let cursor = Cursor(
      reader: reader, range: .all, reverse: false, root: { [meta] in .clean(meta.catalog, 0) }, mutations: nil)
    var names: [String] = []
    while let name = try cursor.next({ key, _ in String(decoding: key, as: UTF8.self) }) { names.append(name) }
    return names
  }

  /// The value for `key` in `keyspace`, or nil.
  public func get(_ key: [UInt8], in keyspace: String) throws -> [UInt8]? {
    try self.keyspace(keyspace).get(key)
  }

  /// The number of entries in `keyspace`.
  public func count(in keyspace: String) throws -> UInt64 { try self.keyspace(keyspace).count }

  /// The change records after version `from` up to `to` (at most this snapshot's version).
  public func changes(from: UInt64, to: UInt64) throws -> [ChangeRecord] {
    try checkOpen()
    guard to <= version else { throw StorageError.versionNotFound(to, latest: version) }
    guard from < to else { return [] }
    let root: ChildSlot? = meta.history.isNull ? nil : .clean(meta.history, 0)
    var records: [ChangeRecord] = []
    for v in (from + 1)...to {
      guard let bytes = try reader.get(root, ChangeRecord.key(for: v)) else {
        let oldest =
          try root.flatMap {
            $0.count > 0 ? ChangeRecord.version(fromKey: try reader.nav.key(reader.nav.entry($0, at: 0))) : nil
          }
          ?? version
        throw StorageError.historyUnavailable(from: from, to: to, oldestAvailable: oldest)
      }
      guard let record = ChangeRecord.decode(bytes), record.version == v else {
        throw StorageError.corrupt(
          path: store.path, offset: meta.history.offset, reason: "change record of version \(v) is malformed")
      }
      records.append(record)
    }
    return records
  }
}

/// One keyspace of a read snapshot.
public struct KeyspaceSnapshot: Sendable {
  /// The snapshot the keyspace belongs to; holding it keeps the transaction alive.
  public let transaction: ReadTransaction
  /// The keyspace's name.
  public let name: String
  let entry: KeyspaceEntry

  /// Entries in the keyspace.
  public var count: UInt64 { entry.count }

  /// Whether the keyspace's changes go into the change records.
  public var tracksChanges: Bool { entry.tracksChanges }

  private var root: ChildSlot? { entry.slot }

  /// The value for `key`, or nil.
  public func get(_ key: [UInt8]) throws -> [UInt8]? { try transaction.reader.get(root, key) }

  /// Calls `body` with the value for `key` seen in place (nil if absent), without copying.
  public func withValue<R>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
    try transaction.reader.withValue(root, key, body)
  }

  /// Whether `key` is present.
  public func contains(_ key: [UInt8]) throws -> Bool { try withValue(forKey: key) { $0 != nil } }

  /// A cursor over `range`, forward or in reverse.
  public func cursor(range: KeyRange = .all, reverse: Bool = false) -> Cursor {
    let root = self.root
    return Cursor(reader: transaction.reader, range: range, reverse: reverse, root: { root }, mutations: nil)
  }

  /// Calls `body` for each entry in `range` with key and value seen in place; stops when
  /// `body` returns false.
  public func forEach(
    range: KeyRange = .all, reverse: Bool = false,
    _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    try self.cursor(range: range, reverse: reverse).forEach(body)
  }

  /// The number of entries in `range` (O(log n), from the subtree counts in branches).
  public func count(in range: KeyRange) throws -> UInt64 { try transaction.reader.count(root, range) }

  /// The entry at `index` in key order.
  public func entry(at index: UInt64) throws -> (key: [UInt8], value: [UInt8])? {
    try transaction.reader.entry(root, at: index)
  }
}
