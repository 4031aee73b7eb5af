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
  /// The options the store was opened with.
  public let options: StoreOptions
  let file: StorageFile
  let blocks: BlockReader
  /// The keys of an encrypted file; nil for a plain one.
  let seal: FileSeal?
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
    /// The most bytes of tree blocks (the free list aside) recent commits of this process
    /// packed, decaying by an eighth a commit: what a reservation for the next commit is sized
    /// after (see `CommitWriter.reserveNext`).
    var packedPeak: UInt64 = 0
    /// The data file's size as last seen or made by this process (0: not looked yet). A lower
    /// bound: the file only grows while it is in use (a compaction replaces it).
    var physicalSize: UInt64 = 0
    var closed = false
  }

  private let state = Mutex(State())
  /// `state.closed`, readable without the lock (a snapshot checks it).
  private let isClosed = Atomic<Bool>(false)
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
      try writeCopy(toPath: temporary, encryptionKey: options.encryptionKey)
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
    // A session that runs already has its file initialised: only its first process creates it.
    let seal = try CommitChain.openHeader(
      file, options: options, mayCreate: shared.map { $0.initializedSession } ?? true)
    self.seal = seal
    shared?.seal = seal
    self.blocks = BlockReader(file: file, cache: NodeCache(capacity: options.cacheSize), seal: seal)
    if let shared, !shared.initializedSession {
      // The session runs already: its published version is the truth, unless a writer died
      // between writing its commit record and publishing it (the file has a newer one then).
      // Only while holding the writer lock: a writer publishing meanwhile would otherwise be
      // overwritten by this older version. When a writer holds it, that writer publishes.
      if shared.tryLockWriter() {
        defer { shared.unlockWriter() }
        if let newest = try CommitChain.adoptCommits(
          after: Store.newestWritten(shared, published: shared.latestHoldingWriterLock()), in: file, blocks: blocks)
        {
          try Store.adopt(newest, coordinator: shared)
        }
      }
      recoveredFromVersion = nil
      coordinator = shared
    } else {
      let (meta, recovered) = try CommitChain.recover(file, blocks: blocks, options: options)
      recoveredFromVersion = recovered
      // Unless read-only, recovery synced the version it found (see `CommitChain.secure`).
      let durable = options.readOnly ? meta.durable : meta.version
      if let shared {
        shared.finishInitialisation(meta, durable: durable)
        coordinator = shared
      } else {
        var follow: (@Sendable (Meta) -> Meta)?
        if detached {
          let followed = file
          follow = { known in CommitChain.newestCommit(after: known, in: followed, seal: seal) }
        }
        coordinator = LocalCoordinator(meta: meta, durable: durable, follow: follow)
      }
    }
    listeners = ChangeListeners(coordinator: coordinator)
    coordinator.declareFullDurability(options.durability == .full && !options.readOnly)
  }

  deinit { listeners.stop() }

  /// Nanoseconds since 1970 (CLOCK_REALTIME), the clock of commit and publish timestamps.
  public static func wallClock() -> UInt64 { EngineClock.now() }

  /// When the newest version was published to readers, in `wallClock()` nanoseconds.
  public var lastPublishTimestamp: UInt64 { coordinator.lastPublishTimestamp }

  /// The newest committed version (file-wide).
  public var latestVersion: UInt64 { coordinator.latest().version }

  /// The newest committed meta record.
  package var latestMeta: Meta { coordinator.latest() }

  /// Closes the store: later transactions fail with `StorageError.closed`. Transactions
  /// already open keep working until they end; the file is closed when the last one ends.
  public func close() {
    let wasOpen = state.withLock { state -> Bool in
      defer { state.closed = true }
      isClosed.store(true, ordering: .releasing)
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
    if isClosed.load(ordering: .acquiring) { throw StorageError.closed(path: path) }
    return ReadTransaction(store: self, published: try coordinator.pinLatest())
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
      guard writerGate.wait(timeout: .now() + .nanoseconds(EngineClock.nanoseconds(timeout))) == .success else {
        throw StorageError.writeLockTimeout(path: path, waitedSeconds: EngineClock.seconds(timeout), holder: nil)
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
      // The newest commit written, which may still wait for its batch's sync (group commit).
      var meta = Store.newestWritten(coordinator, published: try coordinator.latestHoldingWriterLock())
      if lockFilePath != nil {
        // A writer killed after writing its commit record but before recording it as the head
        // (or one of another session, on a deleted lock file): the file is the truth.
        if let onDisk = try CommitChain.adoptCommits(after: meta, in: file, blocks: blocks) {
          meta = onDisk
          try Store.adopt(meta, coordinator: coordinator)
        }
      }
      try checkNotCutShort(meta)
      // Space freed by a commit that is not durable yet stays unused: its blocks are part of
      // the version before it, which a power loss may bring back. Unless no process writes
      // with durability `full`: then no commit is promised to survive a power loss.
      let durable = min(coordinator.durableVersion, meta.version)
      let horizon = coordinator.oldestPin(latest: powerLossRules ? durable : meta.version)
      try checkVersionLimit(latest: meta.version)
      // Taken, not copied: the transaction holds the only reference, so its edits copy
      // nothing. An abort drops it; the next writer reloads it from the file.
      var (cached, cachedVersion) = state.withLock { s -> (FreeSpace?, UInt64) in
        defer { s.freeSpace = nil }
        return (s.freeSpace, s.freeSpaceVersion)
      }
      var space: FreeSpace
      // Blocks of the list read while trying to extend the copy are not read again to load it.
      var read: [UInt64: [UInt8]] = [:]
      if var known = cached, cachedVersion <= meta.version {
        cached = nil  // `known` is now the only reference: extended in place, not copied.
        // Other processes committed since this one last did: only their changes are read.
        if try cachedVersion == meta.version || extendFreeSpace(&known, to: meta, memo: &read) {
          space = consume known
        } else {
          space = try loadFreeSpace(meta, memo: &read)
        }
      } else {
        space = try loadFreeSpace(meta)
      }
      space.promote(horizon: horizon)
      return WriteTransaction(store: self, base: meta, freeSpace: space, horizon: horizon, durable: durable)
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

  /// Brings `known`, the free space of an older version, up to `meta`'s by the deltas stored
  /// on top of it (see `FreeSpace.extend(to:fileEnd:read:)`); false when it must be loaded
  /// whole.
  func extendFreeSpace(_ known: inout FreeSpace, to meta: Meta) throws -> Bool {
    var memo: [UInt64: [UInt8]] = [:]
    return try extendFreeSpace(&known, to: meta, memo: &memo)
  }

  /// `extendFreeSpace`, keeping the blocks it reads in `memo` (by offset).
  func extendFreeSpace(_ known: inout FreeSpace, to meta: Meta, memo: inout [UInt64: [UInt8]]) throws -> Bool {
    let limit = meta.fileEnd
    return try known.extend(to: meta.freeList, fileEnd: limit) { pointer in
      if let bytes = memo[pointer.offset] { return bytes }
      let bytes = try blocks.read(pointer, limit: limit)
      memo[pointer.offset] = bytes
      return bytes
    }
  }

  func loadFreeSpace(_ meta: Meta) throws -> FreeSpace {
    var memo: [UInt64: [UInt8]] = [:]
    return try loadFreeSpace(meta, memo: &memo)
  }

  /// `loadFreeSpace`, taking the blocks `memo` holds (read at the same version) from it.
  func loadFreeSpace(_ meta: Meta, memo: inout [UInt64: [UInt8]]) throws -> FreeSpace {
    let limit = meta.fileEnd
    let read = { (pointer: BlockPointer) throws -> [UInt8] in
      if let bytes = memo[pointer.offset] { return bytes }
      return try self.blocks.read(pointer, limit: limit)
    }
    guard let space = try FreeSpace.load(meta.freeList, fileEnd: limit, read: read)
    else {
      throw StorageError.corrupt(
        path: path, offset: meta.freeList.offset, reason: "the free-space list is inconsistent")
    }
    return space
  }

  /// The newer of the head (the newest commit written) and the published version.
  static func newestWritten(_ coordinator: Coordinator, published: Meta) -> Meta {
    guard let head = coordinator.head(), head.version > published.version else { return published }
    return head
  }

  /// Takes over `meta`, a commit a dead writer left that `CommitChain.adoptCommits` secured
  /// (synced): the head, published, durable. The caller holds the writer lock.
  static func adopt(_ meta: Meta, coordinator: Coordinator) throws {
    coordinator.setHead(meta)
    try coordinator.withPublisherLock {
      coordinator.publish(meta)
      coordinator.advanceDurable(to: meta.version)
    }
  }

  /// Records a commit whose blocks and record are written as the head, the version the next
  /// writer builds on (the writer lock is held). It is neither durable nor published yet: see
  /// `complete(_:)`. `blockBytes` is what the commit packed into runs, `treeBytes` the part of
  /// it before its free list (0 when it reserved no run for its successor), which the next
  /// reservations are sized after (`packedHistory`).
  func recordWritten(_ meta: Meta, freeSpace: FreeSpace, blockBytes: UInt64, treeBytes: UInt64) {
    state.withLock { s in
      s.freeSpace = freeSpace
      s.freeSpaceVersion = meta.version
      s.lastCommitBytes = blockBytes
      s.packedPeak = max(treeBytes, s.packedPeak - s.packedPeak / 8)
    }
    coordinator.setHead(meta)
  }

  /// Makes the written commit `meta` durable (durability `full`) and publishes it, once the
  /// writer lock is released (group commit).
  ///
  /// If a sync that began after this commit was written has ended already (another
  /// committer's), the commit is durable and published, and nothing is left to do. Otherwise
  /// the committer that gets the publisher lock (one thread of one process at a time) leads a
  /// batch: it reads the head (every commit written so far, this one included, the writers
  /// behind it having prepared theirs while the previous sync ran), syncs once, publishes the
  /// head and records it durable, which wakes the committers waiting meanwhile on the durable
  /// version's futex word; those it covered find their commits durable without a sync, the
  /// others try to lead the next batch.
  func complete(_ meta: Meta) throws {
    let coordinator = self.coordinator
    let file = self.file
    switch options.durability {
    case .full:
      _ = try withPublisherLock(for: meta, unless: { coordinator.durableVersion >= meta.version }) {
        guard coordinator.durableVersion < meta.version else { return }
        let head = coordinator.head().flatMap { $0.version >= meta.version ? $0 : nil } ?? meta
        try file.sync()
        // Published before it is recorded durable: whoever finds it durable finds it published.
        coordinator.publish(head)
        coordinator.advanceDurable(to: head.version)
      }
    case .unsafe, .memOnly:
      // Published by `publishWritten` while the writer lock was held; a transaction that made
      // nothing may have started from another writer's commit not published yet.
      if coordinator.latest().version < meta.version { try publishWritten(meta) }
      if options.durability == .memOnly || file is MemoryFile {
        coordinator.advanceDurable(to: meta.version)
      } else if meta.version - min(coordinator.durableVersion, meta.version) >= Store.unsafeSyncInterval,
        coordinator.fullDurabilityPresent, !unsafeSyncRunning.exchange(true, ordering: .acquiring)
      {
        defer { unsafeSyncRunning.store(false, ordering: .releasing) }
        // Another process writes with durability `full`: space is reused only once durable, so
        // one sync per this many commits lets the horizon move. Outside
        // every lock, so that other commits do not wait: every write of `meta` ended before it
        // began, and `meta` is published already.
        try file.sync()
        coordinator.advanceDurable(to: meta.version)
      }
    }
  }

  /// Publishes the written commit `meta` (or a newer head) at once, without waiting for a
  /// sync: durability `unsafe` and `memOnly`, while the writer lock is held, so the commit is
  /// visible as soon as it is written, as it was before group commit.
  func publishWritten(_ meta: Meta) throws {
    let coordinator = self.coordinator
    _ = try withPublisherLock(for: meta, unless: { false }) {
      let head = coordinator.head().flatMap { $0.version >= meta.version ? $0 : nil } ?? meta
      coordinator.publish(head)
    }
  }

  /// Runs `body` holding the publisher lock, for the commit `meta`; returns nil without running
  /// it once `done()` holds. While another committer holds the lock (syncing a batch), it
  /// sleeps in the kernel until that committer records a durable version, which wakes all
  /// waiters at once, or 2 ms pass (the holder's process may have died, which releases the lock
  /// without waking anyone). After five seconds it says who it waits for.
  private func withPublisherLock<R>(for meta: Meta, unless done: () -> Bool, _ body: () throws -> R) throws -> R? {
    let signal = coordinator.durableSignal
    let started = EngineClock.now()
    var warned = false
    while true {
      let observed = signal.word.load(ordering: .sequentiallyConsistent)
      if done() { return nil }
      if let result = try coordinator.tryWithPublisherLock(body) { return result }
      let waited = EngineClock.now() &- started
      if !warned, waited >= UInt64(EngineClock.nanoseconds(SharedCoordinator.writerWaitWarning)) {
        warned = true
        Log.write(
          .warn, .coordination,
          "Waiting \(waited / 1_000_000_000) s for the publisher lock of \(lockFilePath ?? path), held by another "
            + "process syncing a batch of commits: it is stopped (SIGSTOP, a debugger) or its disk is slow; version "
            + "\(meta.version) is written, and its commit returns once that process lets the lock go")
      }
      signal.wait(whileHolding: observed, timeout: 0.002)
    }
  }

  /// Whether this process's commits keep the rules that make commits survive a power loss
  /// (see `Coordinator.fullDurabilityPresent`): its own durability is `full`, or another
  /// process's is.
  var powerLossRules: Bool { options.durability == .full || coordinator.fullDurabilityPresent }

  /// Whether a thread of this process runs the periodic sync of durability `unsafe`.
  private let unsafeSyncRunning = Atomic<Bool>(false)

  /// With durability `unsafe`, a sync once the newest durable version lags this many commits:
  /// the anchor interval, so that space is reused about as soon as it was before group commit
  /// and the older anchor is usually durable.
  static let unsafeSyncInterval: UInt64 = FileLayout.anchorInterval

  /// Makes every commit written so far durable while the writer lock is held (`base`, the
  /// head, is the newest) and publishes it; returns the new durable version. For an anchor
  /// about to replace the older meta slot: the one it leaves must hold a durable anchor.
  func syncHoldingWriterLock(_ base: Meta) throws -> UInt64 {
    let coordinator = self.coordinator
    let file = self.file
    return try coordinator.withPublisherLock {
      if coordinator.durableVersion < base.version {
        try file.sync()
        coordinator.publish(base)
        coordinator.advanceDurable(to: base.version)
      }
      return coordinator.durableVersion
    }
  }

  /// The writer's copy of the free space between commits (nil while a writer holds it).
  var cachedFreeSpace: FreeSpace? { state.withLock { $0.freeSpace } }

  /// What this process's commits packed into runs, read under one lock: the last commit's
  /// bytes, and the decaying peak of recent commits' tree blocks (see `recordWritten`).
  var packedHistory: (lastCommit: UInt64, peak: UInt64) { state.withLock { ($0.lastCommitBytes, $0.packedPeak) } }

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
    coordinator.waitForChange(after: version, timeout: timeout.map(EngineClock.seconds))
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

  // MARK: Roles

  /// Takes role `role` (0 ..< `StoreRoles.count`) among all the processes sharing the file, if
  /// none holds it (this store included): true when taken. A role is for work one process
  /// should do on behalf of all, such as ShoalSync's agent. It is an exclusive lock on a byte of
  /// the lock file, so only a process that may write the lock file can hold it, and the kernel
  /// releases it when the holding process dies; it is also released by `releaseRole` and when
  /// the store closes.
  ///
  /// ```swift
  /// if store.tryAcquireRole(StoreRoles.syncAgent) { runAgent(); store.releaseRole(StoreRoles.syncAgent) }
  /// ```
  public func tryAcquireRole(_ role: Int) -> Bool { coordinator.tryAcquireRole(role) }

  /// Gives up role `role` if this store holds it.
  public func releaseRole(_ role: Int) { coordinator.releaseRole(role) }

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

/// The roles a process can hold among those sharing a file (`Store.tryAcquireRole`).
public enum StoreRoles {
  /// How many roles there are.
  public static let count = 16
  /// The sync agent of ShoalSync.
  public static let syncAgent = 0
}
