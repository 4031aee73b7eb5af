import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// An open Shoal file: named keyspaces of ordered byte keys and values in one LZ4-compressed,
/// copy-on-write, multi-version B+tree file.
///
/// Any number of `ReadTransaction`s, on any threads, each see the version they pinned; one
/// `WriteTransaction` at a time builds the next version. Commits are atomic and, with
/// `Durability.full`, survive power loss.
public final class Store: Sendable {
  /// The file's path (or the description of a file without one).
  public let path: String
  public let options: StoreOptions
  let file: StorageFile
  let blocks: BlockReader
  /// When open found the newest meta torn or its blocks incomplete and used the previous
  /// one, the version it could not use.
  public let recoveredFromVersion: UInt64?

  private struct State {
    var meta: Meta
    var slot: Int
    /// The free space as of `freeSpaceVersion` (the writer's working copy between commits).
    var freeSpace: FreeSpace?
    var freeSpaceVersion: UInt64 = .max
    var pins: [UInt64: Int] = [:]
    var closed = false
  }

  private let state: Mutex<State>
  private let writerGate = DispatchSemaphore(value: 1)
  private let writerThread = Mutex<pthread_t?>(nil)

  /// Opens (or creates) the store at `path`.
  public static func open(path: String, options: StoreOptions = StoreOptions()) throws -> Store {
    let file: StorageFile
    if options.durability == .memOnly {
      file = MemoryFile(path: path)
    } else {
      file = try PosixFile(path: path, create: options.create && !options.readOnly, readOnly: options.readOnly)
    }
    return try Store(file: file, options: options)
  }

  /// Opens a store over any `StorageFile` (a `MemoryFile` or a `FaultInjectingFile`).
  public init(file: StorageFile, options: StoreOptions = StoreOptions()) throws {
    self.file = file
    self.path = file.path
    self.options = options
    self.blocks = BlockReader(file: file, cache: NodeCache(capacity: options.cacheSize))
    var size = try file.size()
    if size == 0 {
      guard !options.readOnly else { throw StorageError.notAShoalFile(path: file.path) }
      try Store.initialize(file)
      size = try file.size()
    }
    let header = try file.read(count: Int(FileLayout.headerSize), at: 0)
    try FileLayout.checkHeader(header, path: file.path, fileSize: size)
    var candidates: [(Meta, Int)] = []
    for slot in 0..<2 {
      let bytes = try file.read(count: Meta.encodedSize, at: FileLayout.metaOffset(slot: slot))
      if let meta = Meta.decode(bytes) { candidates.append((meta, slot)) }
    }
    if candidates.isEmpty, size <= FileLayout.dataStart, !options.readOnly {
      // Creation was interrupted before any meta landed: the file holds nothing yet.
      try Store.initialize(file)
      candidates = [(Store.emptyMeta, 0)]
    }
    guard size >= FileLayout.dataStart else {
      throw StorageError.truncated(path: file.path, size: size, expected: FileLayout.dataStart)
    }
    candidates.sort { $0.0.version > $1.0.version }
    var chosen: (Meta, Int)?
    var failure: Error = StorageError.corrupt(
      path: file.path, offset: FileLayout.headerSize, reason: "neither meta record is valid")
    for (meta, slot) in candidates {
      if meta.fileEnd > size {
        failure = StorageError.truncated(path: file.path, size: size, expected: meta.fileEnd)
        continue
      }
      do {
        try Recovery.verifyNewestCommit(meta, blocks: blocks)
        chosen = (meta, slot)
        break
      } catch {
        failure = error
      }
    }
    guard let (meta, slot) = chosen else { throw failure }
    recoveredFromVersion = candidates.first.flatMap { $0.0.version != meta.version ? $0.0.version : nil }
    state = Mutex(State(meta: meta, slot: slot))
  }

  static let emptyMeta = Meta(
    version: 0, timestamp: 0, fileEnd: FileLayout.dataStart, catalog: .null, freeList: .null, history: .null)

  private static func initialize(_ file: StorageFile) throws {
    var image = FileLayout.encodeHeader()
    image += [UInt8](repeating: 0, count: Int(FileLayout.headerSize) - image.count)
    var meta = emptyMeta
    meta.timestamp = Store.now()
    let encoded = meta.encode()
    image += encoded + [UInt8](repeating: 0, count: Int(FileLayout.metaSlotSize) - encoded.count)
    image += [UInt8](repeating: 0, count: Int(FileLayout.metaSlotSize))
    try file.write(image, at: 0)
    try file.sync()
  }

  static func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
  }

  /// The newest committed version.
  public var latestVersion: UInt64 { state.withLock { $0.meta.version } }

  /// The newest committed meta record.
  public var latestMeta: Meta { state.withLock { $0.meta } }

  /// Closes the store: later transactions fail with `StorageError.closed`. Transactions
  /// already open keep working until they end; the file is closed when the last one ends.
  public func close() { state.withLock { $0.closed = true } }

  // MARK: Pins

  /// Pins the newest version for a reader.
  func pinLatest() throws -> Meta {
    try state.withLock { s in
      if s.closed { throw StorageError.closed(path: path) }
      s.pins[s.meta.version, default: 0] += 1
      return s.meta
    }
  }

  func unpin(_ version: UInt64) {
    state.withLock { s in
      guard let n = s.pins[version] else { return }
      s.pins[version] = n > 1 ? n - 1 : nil
    }
  }

  /// The oldest version some reader still pins (the newest version when none does).
  public var oldestPinnedVersion: UInt64 {
    state.withLock { s in s.pins.keys.min().map { min($0, s.meta.version) } ?? s.meta.version }
  }

  /// How many distinct versions are in use: the newest plus every older pinned one.
  public var activeVersionCount: Int {
    state.withLock { s in s.pins.keys.filter { $0 != s.meta.version }.count + 1 }
  }

  // MARK: Transactions

  /// Begins a read transaction at the newest version. It may be used from any thread.
  public func beginRead() throws -> ReadTransaction {
    ReadTransaction(store: self, meta: try pinLatest())
  }

  /// Runs `body` in a read transaction.
  public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
    let txn = try beginRead()
    defer { txn.close() }
    return try body(txn)
  }

  /// Begins the write transaction, waiting while another thread holds it.
  public func beginWrite() throws -> WriteTransaction {
    if options.readOnly { throw StorageError.readOnly(path: path) }
    let me = pthread_self()
    if writerThread.withLock({ $0 }).map({ pthread_equal($0, me) != 0 }) == true {
      throw StorageError.writeTransactionAlreadyOpen
    }
    writerGate.wait()
    writerThread.withLock { $0 = me }
    do {
      let (meta, cached, horizon, closed) = state.withLock { s in
        (
          s.meta, s.freeSpaceVersion == s.meta.version ? s.freeSpace : nil,
          min(s.pins.keys.min() ?? s.meta.version, s.meta.version), s.closed
        )
      }
      if closed { throw StorageError.closed(path: path) }
      var space = try cached ?? loadFreeSpace(meta)
      space.promote(horizon: horizon)
      return WriteTransaction(store: self, base: meta, freeSpace: space, horizon: horizon)
    } catch {
      releaseWriter()
      throw error
    }
  }

  /// Runs `body` in a write transaction and commits it; aborts if `body` throws.
  @discardableResult
  public func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
    let txn = try beginWrite()
    do {
      let result = try body(txn)
      try txn.commit()
      return result
    } catch {
      txn.abort()
      throw error
    }
  }

  func releaseWriter() {
    writerThread.withLock { $0 = nil }
    writerGate.signal()
  }

  func loadFreeSpace(_ meta: Meta) throws -> FreeSpace {
    guard !meta.freeList.isNull else { return FreeSpace(fileEnd: meta.fileEnd) }
    let bytes = try blocks.read(meta.freeList, limit: meta.fileEnd)
    guard let space = FreeSpace.decode(bytes), space.fileEnd == meta.fileEnd else {
      throw StorageError.corrupt(
        path: path, offset: meta.freeList.offset, reason: "the free-space list is inconsistent")
    }
    return space
  }

  /// Publishes a committed version.
  func publish(_ meta: Meta, freeSpace: FreeSpace) {
    state.withLock { s in
      s.meta = meta
      s.slot = 1 - s.slot
      s.freeSpace = freeSpace
      s.freeSpaceVersion = meta.version
    }
  }

  /// The meta slot the next commit writes (the one not holding the newest version).
  var nextMetaSlot: Int { state.withLock { 1 - $0.slot } }

  // MARK: History

  /// The change records of the commits after `from` up to and including `to` (default: the
  /// newest version), oldest first.
  public func changes(from: UInt64, to: UInt64? = nil) throws -> [ChangeRecord] {
    try read { txn in try txn.changes(from: from, to: to ?? txn.version) }
  }

  /// Cache statistics: bytes and entries held, hits and misses.
  public var cacheStatistics: (bytes: Int, entries: Int, hits: UInt64, misses: UInt64) {
    blocks.cache.statistics
  }
}
