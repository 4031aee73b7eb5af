import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

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
  /// Whether this process reads the file outside its session: opened read-only by a user who
  /// cannot use its lock file (`lockFilePath` is nil). Its snapshots are not pinned, so
  /// writers may reuse their space: each read starts from the newest commit in the file, and
  /// a snapshot overwritten meanwhile fails with `StorageError.snapshotUnavailable`, never as
  /// a corrupt file.
  public let isDetached: Bool
  let coordinator: Coordinator
  /// When open found the newest commit's blocks incomplete and used the commit before it,
  /// the version it could not use.
  public let recoveredFromVersion: UInt64?
  /// The lock file coordinating processes, or nil for a store only this process sees.
  public let lockFilePath: String?

  private struct State {
    /// The free space as of `freeSpaceVersion` (the writer's working copy between commits).
    var freeSpace: FreeSpace?
    var freeSpaceVersion: UInt64 = .max
    /// Bytes of blocks the last commit of this process packed into runs: the size of the next commit's
    /// first run (see `CommitWriter.allocate`).
    var lastCommitBytes: UInt64 = 0
    /// The data file's size as last seen or made by this process (0: not looked yet). A lower
    /// bound: the file only grows while it is in use (a compaction replaces it).
    var physicalSize: UInt64 = 0
    var closed = false
  }

  private let state = Mutex(State())
  private let writerGate = DispatchSemaphore(value: 1)
  /// Async writes of this process whose helper thread waits for the writer lock.
  let asyncWriteWaiters = Atomic<Int>(0)
  private let writerThread = Mutex<pthread_t?>(nil)
  private let listeners: ChangeListeners

  /// Opens (or creates) the store at `path`, shared with every other process that opens
  /// it through the lock file `path + ".lock"`.
  ///
  /// If the lock file cannot be created or mapped (a read-only directory), a `readOnly`
  /// open falls back to a single-process view; any other open fails with
  /// `StorageError.lockFileUnavailable`.
  public static func open(path: String, options: StoreOptions = StoreOptions()) throws -> Store {
    if options.durability == .memOnly { return try Store(file: MemoryFile(path: path), options: options) }
    var attempts = 0
    while true {
      attempts += 1
      let file = try PosixFile(path: path, create: options.create && !options.readOnly, readOnly: options.readOnly)
      let shared: SharedCoordinator?
      do {
        shared = try SharedCoordinator(dataFile: file)
      } catch StorageError.lockFileUnavailable(_, _) where options.readOnly {
        shared = nil
      }
      // A compaction may have replaced the file between our open and our joining the session.
      if shared != nil, !file.isStillAtPath, attempts < 10 { continue }
      let store = try Store(file: file, options: options, shared: shared, detached: shared == nil)
      Log.write(
        .detail, .storage,
        "Opened \(path) at version \(store.latestVersion)"
          + (shared?.initializedSession == true ? ", starting the session of \(shared?.lockPath ?? "")" : ""))
      if let torn = store.recoveredFromVersion {
        Log.write(.warn, .storage, "\(path): the commit of version \(torn) was torn; opened the previous version")
      }
      return store
    }
  }

  /// Compacts the file in place (a `writeCopy` renamed over it) when no other process has it
  /// open and `shouldCompact(fileSize, bytesInUse)` agrees. Returns true when the file was
  /// replaced: this store is closed then, and the caller opens the path again.
  public func compactIfAlone(_ shouldCompact: (_ fileSize: UInt64, _ bytesInUse: UInt64) -> Bool) throws -> Bool {
    guard file is PosixFile, !options.readOnly else { return false }
    let replaced = try coordinator.withExclusiveSession { () throws -> Bool in
      let meta = coordinator.latest()
      let free = try loadFreeSpace(meta).totalFreeBytes
      let size = try file.size()
      guard shouldCompact(size, size - min(size, free)) else { return false }
      let temporary = path + ".compacting"
      _ = unlink(temporary)
      Log.write(.info, .storage, "Compacting \(path): \(size) bytes, \(size - min(size, free)) in use")
      try writeCopy(toPath: temporary)
      // The compacted file replaces this one with its owner, group and mode, or not at all.
      guard Store.copyOwnership(of: path, to: temporary) else {
        _ = unlink(temporary)
        Log.write(.warn, .storage, "Not compacting \(path): this process cannot give the copy the file's owner")
        return false
      }
      guard rename(temporary, path) == 0 else {
        let code = errno
        _ = unlink(temporary)
        throw StorageError.io(path: path, operation: "rename", errno: code, message: String(cString: strerror(code)))
      }
      // Make the rename durable: sync the directory holding the file.
      let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
      let fd = Glibc.open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
      if fd >= 0 {
        _ = fsync(fd)
        _ = Glibc.close(fd)
      }
      close()
      return true
    }
    return replaced ?? false
  }

  /// Opens a store over any `StorageFile` (a `MemoryFile` or a `FaultInjectingFile`), seen
  /// by this process only.
  public convenience init(file: StorageFile, options: StoreOptions = StoreOptions()) throws {
    try self.init(file: file, options: options, shared: nil)
  }

  init(file: StorageFile, options: StoreOptions, shared: SharedCoordinator?, detached: Bool = false) throws {
    self.file = file
    self.path = file.path
    self.options = options
    self.lockFilePath = shared?.lockPath
    self.isDetached = detached
    self.blocks = BlockReader(file: file, cache: NodeCache(capacity: options.cacheSize))
    if let shared, !shared.initializedSession {
      // The session runs already: its published version is the truth, unless a writer died
      // between writing its commit record and publishing it (the file has a newer one then).
      let size = try file.size()
      try FileLayout.checkHeader(
        try file.read(count: Int(FileLayout.headerSize), at: 0), path: file.path, fileSize: size)
      // Only while holding the writer lock: a writer publishing meanwhile would otherwise be
      // overwritten by this older version. When a writer holds it, that writer publishes.
      if shared.tryLockWriter() {
        defer { shared.unlockWriter() }
        if let newest = try Store.adoptCommits(after: shared.latestHoldingWriterLock(), in: file, blocks: blocks) {
          shared.publish(newest)
        }
      }
      recoveredFromVersion = nil
      coordinator = shared
    } else {
      let (meta, recovered) = try Store.recover(file, blocks: blocks, options: options)
      recoveredFromVersion = recovered
      if let shared {
        shared.finishInitialisation(meta)
        coordinator = shared
      } else {
        var follow: (@Sendable (Meta) -> Meta)?
        if detached {
          let followed = file
          follow = { known in Store.newestCommit(after: known, in: followed) }
        }
        coordinator = LocalCoordinator(meta: meta, follow: follow)
      }
    }
    listeners = ChangeListeners(coordinator: coordinator)
  }

  deinit { listeners.stop() }

  /// Finds the newest commit that is whole (see `Recovery`), initialising an empty file.
  ///
  /// From each anchor it follows the chain of commit records to its end; the newest record
  /// found on any chain is the last commit that may have been in flight. A sync makes a
  /// commit durable only as a whole, so that record may name blocks that never reached the
  /// disk: if they fail verification, its predecessor is the newest whole commit (it was
  /// synced before the last one began). Nothing older is considered: if both fail, the file
  /// is damaged, not torn. Unless the open is read-only, the commit found is synced and the
  /// anchors it needs are written (see `secure`) before anything is built on it.
  private static func recover(_ file: StorageFile, blocks: BlockReader, options: StoreOptions) throws -> (
    Meta, UInt64?
  ) {
    var size = try file.size()
    // A new file, or one whose creation was interrupted before its header (written last, see
    // `initialize`) landed: it holds nothing yet. Any other file is never made empty again: a
    // file cut short is an error, not a new database.
    if try size == 0 || (size <= FileLayout.dataStart && Store.headerNeverWritten(file, size: size)) {
      guard !options.readOnly else { throw StorageError.notAShoalFile(path: file.path) }
      try Store.initialize(file)
      size = try file.size()
    }
    let header = try file.read(count: Int(min(size, FileLayout.headerSize)), at: 0)
    try FileLayout.checkHeader(header, path: file.path, fileSize: size)
    guard size >= FileLayout.dataStart else {
      throw StorageError.truncated(path: file.path, size: size, expected: FileLayout.dataStart)
    }
    let anchors = try Store.anchors(in: file)
    var found: [Meta] = []
    var damage: [(tail: UInt64, error: StorageError)] = []
    for anchor in anchors {
      var current = anchor
      found.append(current)
      while let successor = Store.successor(of: current, in: file) {
        found.append(successor)
        current = successor
      }
      if let error = Store.damagedSuccessor(of: current, in: file) { damage.append((current.version, error)) }
    }
    var failure: Error = StorageError.corrupt(
      path: file.path, offset: FileLayout.headerSize, reason: "neither meta record is valid")
    guard let newestVersion = found.map(\.version).max() else { throw failure }
    // A damaged record hides the commits after it, unless another chain reaches past it (the
    // older anchor's chain may legitimately run into reused places).
    if let (_, error) = damage.first(where: { $0.tail >= newestVersion }) { throw error }
    // The newest version's records (a stale anchor slot and a record may both claim it), then
    // their predecessors.
    var newest: [Meta] = []
    for record in found where record.version == newestVersion && !newest.contains(record) { newest.append(record) }
    var candidates = newest
    for top in newest {
      if let before = found.first(where: { $0.isFollowed(by: top) }), !candidates.contains(before) {
        candidates.append(before)
      }
    }
    for meta in candidates {
      if meta.fileEnd > size {
        failure = StorageError.truncated(path: file.path, size: size, expected: meta.fileEnd)
        continue
      }
      do {
        try Recovery.verifyNewestCommit(meta, blocks: blocks)
        if !options.readOnly { try secure(meta, chain: found, in: file) }
        return (meta, meta.version != newestVersion ? newestVersion : nil)
      } catch {
        failure = error
      }
    }
    throw failure
  }

  /// Makes a commit this process is about to build on as safe as one it made itself: writes
  /// into its meta slot every anchor among `chain` (records leading to `meta`) that the slot
  /// does not hold yet (a writer killed between its record and its slot, or a damaged slot),
  /// then syncs (a writer killed before its sync left its commit in the page cache only).
  static func secure(_ meta: Meta, chain: [Meta], in file: StorageFile) throws {
    var byVersion: [UInt64: Meta] = [:]
    for record in chain { byVersion[record.version] = record }
    byVersion[meta.version] = meta
    // The newest anchor of each slot at or before `meta`: where the chain switched to it.
    var current = meta
    for _ in 0..<2 {
      var anchor = current
      while anchor.version > 0, let before = byVersion[anchor.version - 1], before.isFollowed(by: anchor),
        before.anchorSlot == anchor.anchorSlot
      {
        anchor = before
      }
      // Only an anchor whose predecessor is known is certainly one (the chain switched there).
      guard anchor.version > 0, let before = byVersion[anchor.version - 1], before.isFollowed(by: anchor) else { break }
      let slot = FileLayout.metaOffset(slot: Int(anchor.anchorSlot))
      let there = Meta.decode(try file.read(count: Meta.encodedSize, at: slot))
      if there.map({ $0.version < anchor.version }) ?? true {
        Log.write(
          .warn, .storage,
          "\(file.path): meta slot \(anchor.anchorSlot) lacked anchor \(anchor.version); wrote it")
        try file.write(anchor.encode(), at: slot)
      }
      current = before
    }
    try file.sync()
  }

  /// The decodable meta slots (anchors) of `file`, newest first.
  static func anchors(in file: StorageFile) throws -> [Meta] {
    var found: [Meta] = []
    for slot in 0..<2 {
      let bytes = try file.read(count: Meta.encodedSize, at: FileLayout.metaOffset(slot: slot))
      if let meta = Meta.decode(bytes) { found.append(meta) }
    }
    return found.sorted { $0.version > $1.version }
  }

  /// The record of the commit made on top of `meta`, if one was written: at the place `meta`
  /// reserved for it, or in a meta slot when it reserved none.
  static func successor(of meta: Meta, in file: StorageFile) -> Meta? {
    if meta.next == 0 { return (try? anchors(in: file))?.first { meta.isFollowed(by: $0) } }
    guard let bytes = try? file.read(count: Meta.encodedSize, at: meta.next), let record = Meta.decode(bytes),
      meta.isFollowed(by: record)
    else { return nil }
    return record
  }

  /// The error to report when the place `meta` reserved holds its successor's record
  /// damaged: its magic and version, or its link to `meta`, are there, but its checksum fails.
  /// A power loss cannot do that (a record never straddles a sector, and sectors are written
  /// whole), so bytes changed after the record was written, and the commits after it would be
  /// lost silently. Nil otherwise.
  static func damagedSuccessor(of meta: Meta, in file: StorageFile) -> StorageError? {
    // A whole record there that does not follow `meta` belongs to another history (one a
    // recovery rolled back): not damage.
    guard meta.next != 0, let bytes = try? file.read(count: Meta.encodedSize, at: meta.next),
      bytes.count == Meta.encodedSize, Meta.decode(bytes) == nil
    else { return nil }
    let expected = meta.version + 1
    func word(at offset: Int) -> UInt64 {
      bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    }
    let headed = Array(bytes[0..<8]) == FileLayout.metaMagic && word(at: 8) == expected
    let linked = word(at: Meta.previousOffset) == meta.checksum
    guard headed || linked else { return nil }
    return StorageError.corrupt(
      path: file.path, offset: meta.next, reason: "the commit record of version \(expected) is damaged")
  }

  /// The commits newer than `meta` that the chain leads to, oldest first, ending at the newest
  /// whole one. A newer anchor than `meta` starts the walk when there is one (a chain far
  /// behind the newest commit may have had its records reused). Only the last record can
  /// belong to a torn commit: within a session a record is written after its blocks, but a
  /// commit torn by a power loss before the session began keeps its record until the next
  /// commit overwrites it. So the last is verified and, if it fails, dropped for its
  /// predecessor, which was whole when the last began (the blocks of older commits may have
  /// been reused since, so they are not checked). Throws when both fail: the file is damaged.
  static func commits(after meta: Meta, in file: StorageFile, blocks: BlockReader) throws -> [Meta] {
    var chain = chain(after: meta, in: file)
    guard let newest = chain.last else { return [] }
    if (try? Recovery.verifyNewestCommit(newest, blocks: blocks)) != nil { return chain }
    chain.removeLast()
    guard let before = chain.last else { return [] }
    try Recovery.verifyNewestCommit(before, blocks: blocks)
    return chain
  }

  /// The records after `meta` (from a newer anchor when there is one), unverified; at most
  /// `limit` of them.
  private static func chain(after meta: Meta, in file: StorageFile, limit: Int = .max) -> [Meta] {
    var chain: [Meta] = []
    var current = meta
    if let anchor = (try? anchors(in: file))?.first, anchor.version > current.version {
      current = anchor
      chain.append(anchor)
    }
    while chain.count < limit, let successor = successor(of: current, in: file) {
      chain.append(successor)
      current = successor
    }
    return chain
  }

  /// Takes over the commits newer than `published` found on disk (see `commits(after:)`):
  /// secures the newest (its anchors written, synced) and returns it; nil when there are none.
  /// Call while holding the writer lock.
  static func adoptCommits(after published: Meta, in file: StorageFile, blocks: BlockReader) throws -> Meta? {
    let taken = try commits(after: published, in: file, blocks: blocks)
    guard let newest = taken.last else { return nil }
    try secure(newest, chain: [published] + taken, in: file)
    return newest
  }

  /// Takes over the newest whole commit of a file in use, found from its newest anchor (see
  /// `adoptCommits`). Call while holding the writer lock; nil when neither slot is valid.
  static func adoptNewestCommit(in file: StorageFile) throws -> Meta? {
    guard let anchor = try anchors(in: file).first else { return nil }
    let blocks = BlockReader(file: file, cache: NodeCache(capacity: 1 << 20))
    return try adoptCommits(after: anchor, in: file, blocks: blocks) ?? anchor
  }

  /// The newest commit record of a file in use, found from its newest anchor without the
  /// writer lock (so unverified, and the walk stops after `limit` records: commits may land
  /// meanwhile); nil when neither meta slot is valid.
  static func newestCommit(in file: StorageFile, limit: Int = 64) -> Meta? {
    guard let anchor = (try? anchors(in: file))?.first else { return nil }
    return chain(after: anchor, in: file, limit: limit).last ?? anchor
  }

  /// The newest commit record of a file in use after `known` (a commit of it), unverified;
  /// `known` when there is none. For a reader outside the file's session.
  static func newestCommit(after known: Meta, in file: StorageFile) -> Meta {
    chain(after: known, in: file, limit: 1 << 16).last ?? known
  }

  static let emptyMeta = Meta(
    version: 0, timestamp: 0, fileEnd: FileLayout.dataStart, catalog: .null, freeList: .null, history: .null)

  /// Writes an empty store: the meta slots first, then (once they are durable) the header.
  /// A file whose header is all zeros is thus one whose creation never finished, and one with
  /// a header but no meta record was cut short (an error, never re-created).
  private static func initialize(_ file: StorageFile) throws {
    var meta = emptyMeta
    meta.timestamp = Store.now()
    let encoded = meta.encode()
    var slots = encoded + [UInt8](repeating: 0, count: Int(FileLayout.metaSlotSize) - encoded.count)
    slots += [UInt8](repeating: 0, count: Int(FileLayout.metaSlotSize))
    try file.write(slots, at: FileLayout.headerSize)
    try file.sync()
    var header = FileLayout.encodeHeader()
    header += [UInt8](repeating: 0, count: Int(FileLayout.headerSize) - header.count)
    try file.write(header, at: 0)
    try file.sync()
  }

  /// Whether the file's header region holds only zeros: its creation stopped before the header
  /// was written.
  private static func headerNeverWritten(_ file: StorageFile, size: UInt64) throws -> Bool {
    let bytes = try file.read(count: Int(min(size, FileLayout.headerSize)), at: 0)
    return bytes.allSatisfy { $0 == 0 }
  }

  /// Nanoseconds since 1970 (CLOCK_REALTIME), the clock of commit and publish timestamps.
  public static func wallClock() -> UInt64 { now() }

  /// When the newest version was published to readers, in `wallClock()` nanoseconds.
  public var lastPublishTimestamp: UInt64 { coordinator.lastPublishTimestamp }

  static func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
  }

  /// The newest committed version (file-wide).
  public var latestVersion: UInt64 { coordinator.latest().version }

  /// The newest committed meta record.
  package var latestMeta: Meta { coordinator.latest() }

  /// Closes the store: later transactions fail with `StorageError.closed`. Transactions
  /// already open keep working until they end; the file is closed when the last one ends.
  public func close() {
    let wasOpen = state.withLock { state -> Bool in
      defer { state.closed = true }
      return !state.closed
    }
    if wasOpen { Log.write(.detail, .storage, "Closed \(path)") }
  }

  // MARK: Pins

  func unpin(_ version: UInt64) { coordinator.unpin(version) }

  /// The oldest version some reader pins, in any process (the newest when none does).
  /// Pins of processes that died are reclaimed first.
  public var oldestPinnedVersion: UInt64 { coordinator.oldestPin(latest: latestVersion) }

  /// How many distinct versions are in use, file-wide: the newest plus every older pinned one.
  public var activeVersionCount: Int {
    let latest = latestVersion
    return Set(coordinator.pins().map(\.version).filter { $0 != latest && $0 != 0 }).count + 1
  }

  /// Every pin in every process: who pins which version, for how long.
  public func pins() -> [PinInfo] { coordinator.pins() }

  /// How many dead processes' pins this store has reclaimed.
  public var reclaimedProcessCount: Int { coordinator.reclaimedProcesses }

  // MARK: Transactions

  /// Begins a read transaction at the newest version. Pinning costs no system call. It may
  /// be used from any thread.
  public func beginRead() throws -> ReadTransaction {
    if state.withLock({ $0.closed }) { throw StorageError.closed(path: path) }
    return ReadTransaction(store: self, meta: try coordinator.pinLatest())
  }

  /// Runs `body` in a read transaction.
  public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
    let txn = try beginRead()
    defer { txn.close() }
    return try body(txn)
  }

  /// Throws `tooManyActiveVersions` when more versions than the configured limit are pinned.
  func checkVersionLimit(latest: UInt64) throws {
    guard let limit = options.maximumNumberOfActiveVersions else { return }
    let pins = coordinator.pins().filter { $0.version != latest && $0.version != 0 }
    let count = Set(pins.map(\.version)).count + 1
    if count > limit {
      let error = StorageError.tooManyActiveVersions(
        count: count, limit: limit, oldest: pins.min { $0.version < $1.version })
      Log.write(.error, .coordination, error.description)
      throw error
    }
  }

  /// Begins the write transaction, waiting while another thread or process holds it.
  public func beginWrite() throws -> WriteTransaction {
    if options.readOnly { throw StorageError.readOnly(path: path) }
    let me = pthread_self()
    if writerThread.withLock({ $0 }).map({ pthread_equal($0, me) != 0 }) == true {
      throw StorageError.writeTransactionAlreadyOpen
    }
    let started = ContinuousClock.now
    if let timeout = options.writeLockTimeout {
      // Another thread of this process writes: it holds the writer lock too.
      guard writerGate.wait(timeout: .now() + .nanoseconds(Store.nanoseconds(timeout))) == .success else {
        throw StorageError.writeLockTimeout(path: path, waitedSeconds: Store.seconds(timeout), holder: nil)
      }
    } else {
      writerGate.wait()
    }
    do {
      if state.withLock({ $0.closed }) { throw StorageError.closed(path: path) }
      try coordinator.lockWriter(
        timeout: options.writeLockTimeout.map { max(.zero, $0 - (ContinuousClock.now - started)) })
    } catch {
      writerGate.signal()
      throw error
    }
    return try beginWriteHoldingLocks()
  }

  /// `duration` in whole nanoseconds (0 for a negative one), at most `Int.max`.
  static func nanoseconds(_ duration: Duration) -> Int {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0 else { return 0 }
    let (product, overflow) = Int(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    return overflow ? Int.max : product.addingReportingOverflow(Int(attoseconds / 1_000_000_000)).partialValue
  }

  /// `duration` in seconds.
  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }

  /// Forgets which thread began the write transaction: one begun for async code moves between
  /// threads, and the thread that began it (a helper) may end and its id be reused.
  func forgetWriterThread() { writerThread.withLock { $0 = nil } }

  /// Takes this process's writer gate if no other thread holds it.
  func writerGateTryWait() -> Bool { writerGate.wait(timeout: .now()) == .success }
  func writerGateSignal() { writerGate.signal() }

  /// Takes the writer lock across processes if no other process holds it (the gate is held).
  func coordinatorTryLockWriter() -> Bool {
    if state.withLock({ $0.closed }) { return false }
    return (try? coordinator.tryLockWriterForWrite()) ?? false
  }

  /// Begins the write transaction once this thread holds the writer gate and the writer lock;
  /// lets both go if it fails.
  func beginWriteHoldingLocks() throws -> WriteTransaction {
    writerThread.withLock { $0 = pthread_self() }
    do {
      var meta = try coordinator.latestHoldingWriterLock()
      if lockFilePath != nil {
        // A writer killed after writing its commit record but before publishing it (or one
        // of another session, on a deleted lock file): the file is the truth.
        if let onDisk = try Store.adoptCommits(after: meta, in: file, blocks: blocks) {
          meta = onDisk
          coordinator.publish(meta)
        }
      }
      try checkNotCutShort(meta)
      let horizon = coordinator.oldestPin(latest: meta.version)
      try checkVersionLimit(latest: meta.version)
      // Taken, not copied: the transaction holds the only reference, so its edits copy
      // nothing. An abort drops it; the next writer reloads it from the file.
      let cached = state.withLock { s -> FreeSpace? in
        defer { s.freeSpace = nil }
        return s.freeSpaceVersion == meta.version ? s.freeSpace : nil
      }
      var space = try cached ?? loadFreeSpace(meta)
      space.promote(horizon: horizon)
      return WriteTransaction(store: self, base: meta, freeSpace: space, horizon: horizon)
    } catch {
      coordinator.unlockWriter()
      writerThread.withLock { $0 = nil }
      writerGate.signal()
      throw error
    }
  }

  /// Fails with `truncated` when the file no longer reaches the end of `meta`'s data (someone
  /// cut it while it was open): committing on would write over a hole and lose what the cut
  /// took. One byte read, not a `stat`: a `stat` would dirty the inode on file systems with
  /// fine-grained timestamps and slow the commit's sync.
  private func checkNotCutShort(_ meta: Meta) throws {
    guard file is PosixFile, meta.fileEnd > FileLayout.dataStart else { return }
    var byte: UInt8 = 0
    let read = try withUnsafeMutableBytes(of: &byte) { try file.read(into: $0, at: meta.fileEnd - 1) }
    if read == 0 {
      throw StorageError.truncated(path: path, size: try file.size(), expected: meta.fileEnd)
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
    coordinator.unlockWriter()
    writerThread.withLock { $0 = nil }
    writerGate.signal()
  }

  func loadFreeSpace(_ meta: Meta) throws -> FreeSpace {
    let limit = meta.fileEnd
    guard let space = try FreeSpace.load(meta.freeList, fileEnd: limit, read: { try blocks.read($0, limit: limit) })
    else {
      throw StorageError.corrupt(
        path: path, offset: meta.freeList.offset, reason: "the free-space list is inconsistent")
    }
    return space
  }

  /// Publishes a committed version to readers and observers in every process.
  func publish(_ meta: Meta, freeSpace: FreeSpace, blockBytes: UInt64) {
    state.withLock { s in
      s.freeSpace = freeSpace
      s.freeSpaceVersion = meta.version
      s.lastCommitBytes = blockBytes
    }
    coordinator.publish(meta)
  }

  /// The writer's copy of the free space between commits (nil while a writer holds it).
  var cachedFreeSpace: FreeSpace? { state.withLock { $0.freeSpace } }

  /// Bytes of blocks the last commit of this process packed into runs.
  var lastCommitBytes: UInt64 { state.withLock { $0.lastCommitBytes } }

  /// Zero-fills a stretch of the file past `end` (1/16 of it, 16 KiB to 4 MiB) when a commit
  /// with durability `full` has written past the file's end. Growing a file makes its sync
  /// write the inode as well as the data; small commits that grow the data area then
  /// overwrite blocks the file system already holds, and only one in many commits pays for
  /// the growth. The stretch is not part of the data area (`Meta.fileEnd` stays where the data
  /// ends): nothing refers to it, and a crash leaves harmless zeros. The zeros start where the
  /// file ends, not at `end`: the run reserved for the next commit may lie past the last byte
  /// written, and the next commit must not write into a hole either.
  func extendAhead(of end: UInt64) throws {
    guard options.durability == .full, end > state.withLock({ $0.physicalSize }) else { return }
    var size = try file.size()
    let target = (end + min(max(end / 16, 16 << 10), 4 << 20) + 4095) / 4096 * 4096
    if size < end + (16 << 10) {
      let zeros = [UInt8](repeating: 0, count: 1 << 20)
      while size < target {
        let count = Int(min(UInt64(zeros.count), target - size))
        try zeros.withUnsafeBytes { try file.write(UnsafeRawBufferPointer(rebasing: $0[..<count]), at: size) }
        size += UInt64(count)
      }
    }
    state.withLock { $0.physicalSize = max($0.physicalSize, size) }
  }

  /// Makes the file at least `end` bytes long (a commit's data area may end past the last
  /// byte it wrote: the run reserved for the next commit, a gap before it). Asks the file's
  /// size only when the last size seen is shorter: on a file system with fine-grained
  /// timestamps (ext4 on Linux 6.13 and later), a `stat` makes the next write take a new
  /// modification time, which dirties the inode, and the commit's sync then writes the inode's
  /// block as well, and waits for it.
  func ensureFileReaches(_ end: UInt64) throws {
    guard end > state.withLock({ $0.physicalSize }) else { return }
    var size = try file.size()
    if size < end {
      try file.truncate(to: end)
      size = end
    }
    state.withLock { $0.physicalSize = max($0.physicalSize, size) }
  }

  // MARK: Notification

  /// Waits until a commit (from any process) moves the newest version past `version`;
  /// returns the new newest version, or nil when `timeout` passes first (nil: no limit).
  /// Blocks in the kernel (a futex) meanwhile.
  ///
  /// ```swift
  /// var seen = store.latestVersion
  /// while let newest = store.waitForChange(after: seen, timeout: .seconds(30)) {
  ///   print(try store.changes(from: seen, to: newest))
  ///   seen = newest
  /// }
  /// ```
  public func waitForChange(after version: UInt64, timeout: Duration? = nil) -> UInt64? {
    coordinator.waitForChange(after: version, timeout: timeout.map(Store.seconds))
  }

  /// Calls `callback(from, to)` on this store's listener thread after each commit by any
  /// process; `Store.changes(from:to:)` then tells what changed. Commits that come in
  /// quick succession may arrive as one call spanning several versions, never out of order.
  /// Listeners hear of each commit one after the other, in the order they were added.
  public func addChangeListener(_ callback: @escaping @Sendable (_ from: UInt64, _ to: UInt64) -> Void)
    -> ChangeListenerToken
  {
    listeners.add(callback, startingAt: latestVersion)
  }

  // MARK: History

  /// The change records of the commits after `from` up to and including `to` (default: the
  /// newest version), oldest first.
  public func changes(from: UInt64, to: UInt64? = nil) throws -> [ChangeRecord] {
    try read { txn in try txn.changes(from: from, to: to ?? txn.version) }
  }

  /// What the node cache holds and how well it serves reads.
  public var cacheStatistics: CacheStatistics {
    let (bytes, entries, hits, misses) = blocks.cache.statistics
    return CacheStatistics(bytes: bytes, entries: entries, hits: hits, misses: misses)
  }
}

/// The node cache's state (`Store.cacheStatistics`): decompressed nodes kept in memory, within
/// `StoreOptions.cacheSize`.
public struct CacheStatistics: Sendable, Equatable {
  /// Bytes of decompressed nodes held.
  public var bytes: Int
  /// Nodes held.
  public var entries: Int
  /// Reads served from the cache since the store opened.
  public var hits: UInt64
  /// Reads that had to read and decompress a block.
  public var misses: UInt64
}
