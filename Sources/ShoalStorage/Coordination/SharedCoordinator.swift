import Atomics
import CShoalSystem
import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Coordination of every process that opens one file, through `FILE.lock`: a small file
/// that each process maps, holding scratch state that never outlives the processes using it.
///
/// - Session start: byte `sessionByte` carries an OFD lock. An opener that gets it
///   exclusively is alone, so it zeroes and (re)initialises the whole area (nothing from a
///   previous boot, such as a stale pin, is trusted) and then downgrades to a shared lock,
///   as every other opener holds.
/// - Liveness: each opener claims a process slot `i` by taking an OFD write lock on byte
///   `livenessBase + i`. The kernel drops it when the process dies, so a dead process is
///   detected for certain; its reader slots are reclaimed at open and before each commit.
/// - Reader slots: `{owner, version, since, pid}` per pinned version per process; pinning
///   writes a slot and re-checks the published version (LMDB's protocol), no syscall.
/// - The newest meta record, published under a seqlock, and the notifier's futex word.
/// - The writer lock is an OFD write lock on byte `writerByte` of the lock file, which only
///   users who may write the data file can open (see `lockFileMode`): a user who can only read
///   the data file cannot hold it, or stall writers, with a read lock. The writer also takes a
///   write lock on the data file's first byte, so writers of two sessions (a lock file deleted
///   while processes use it) still exclude each other; a read lock there, which Shoal never
///   takes, is another user's and is ignored (see `lockDataFile`). The holder's pid is kept
///   in the lock file, for the warning and the error of a writer that waits too long.
/// - Group commit: the head (the newest commit written, perhaps not durable yet; two seqlocked
///   slots written by the writer lock's holder), the newest durable version (a word only
///   raised), and the publisher lock, an OFD write lock on byte `publisherByte` held while
///   syncing a batch of commits and publishing (see `Store.complete`).
final class SharedCoordinator: Coordinator, @unchecked Sendable {  // Mapped memory; all access atomic.
  // MARK: Layout of the lock file
  static let magic: UInt64 = 0x4B43_4F4C_4C41_4F48  // "HOALLOCK"
  static let layoutVersion: UInt64 = 5
  static let processSlots = 128
  static let readerSlots = 1024
  static let metaWords = 24  // 192 bytes >= Meta.encodedSize
  static let offsetMagic = 0
  static let offsetLayout = 8
  static let offsetInitialized = 16
  static let offsetSequence = 64  // u32 futex word
  static let offsetWaiters = 68  // u32
  /// Which of the two published-meta slots is current (0 or 1).
  static let offsetCurrentSlot = 24
  /// Two slots, each a u64 seqlock, a reserved u64, then the meta words: a publish writes the
  /// slot that is not current, then makes it current, so a publisher stopped (or killed)
  /// halfway never leaves readers without a whole published version.
  static let offsetSeqlock = 128
  static let slotSize = 16 + metaWords * 8
  static let offsetPublishedAt = offsetSeqlock + 2 * slotSize
  /// The pid of the writer lock's holder (0 when free) and when it took it.
  static let offsetWriterPid = 640
  static let offsetWriterSince = 648
  /// A u32 futex word bumped at each release of the writer lock, and its waiters (u32): what a
  /// writer with a timeout waits on.
  static let offsetWriterWake = 656
  static let offsetWriterWakeWaiters = 660
  /// Which of the two head slots is current (0 or 1).
  static let offsetHeadCurrent = 664
  /// The newest version known durable (u64, only raised).
  static let offsetDurable = 672
  /// A u32 futex word bumped each time the durable version rises, and its waiters (u32).
  static let offsetDurableWake = 680
  static let offsetDurableWakeWaiters = 684
  static let offsetProcesses = 1024  // processSlots x ProcessSlot.size
  /// Per process slot, a u64: 1 while that process writes with durability `full`.
  static let offsetProcessFull = 3072  // processSlots x 8
  static let offsetReaders = 4096  // readerSlots x ReaderSlot.size
  /// The head (the newest commit written, perhaps not yet durable): two slots laid out as the
  /// published ones, written by the holder of the writer lock.
  static let offsetHeadSlots = offsetReaders + readerSlots * ReaderSlot.size

  /// One reader slot (LMDB's `MDB_rxbody`): a version pinned by one process. `owner` is the
  /// process slot's index + 1 (0: free); `version` 0 while the slot is being claimed.
  enum ReaderSlot {
    static let owner = 0
    static let version = 8
    /// When the version was pinned (`EngineClock.now()`).
    static let since = 16
    static let pid = 24
    static let size = 32
  }

  /// One process slot: the pid of the process holding its liveness byte, and since when.
  enum ProcessSlot {
    static let pid = 0
    static let claimedAt = 8
    static let size = 16
  }

  /// Where process slot `i` starts in the mapping.
  static func processSlotOffset(_ i: Int) -> Int { offsetProcesses + i * ProcessSlot.size }
  static let mapSize = offsetHeadSlots + 2 * slotSize
  static let sessionByte: Int64 = 1 << 20
  static let livenessBase: Int64 = (1 << 20) + 1
  static let writerByte: Int64 = (1 << 20) + 4096
  /// The publisher lock's byte (see `withPublisherLock`): held while syncing a batch of
  /// commits and publishing.
  static let publisherByte: Int64 = writerByte + 1
  /// How long a writer waits before it logs a warning naming the process holding the lock.
  static let writerWaitWarning: Duration = .seconds(5)

  let lockPath: String
  private let lockFD: Int32
  private let dataFD: Int32
  private let dataFile: PosixFile
  /// The keys of an encrypted data file (its records, and their copies here, end in an HMAC);
  /// set by `Store` once it has read the header, before the session's meta is read.
  private let sealCell = Mutex<FileSeal?>(nil)
  var seal: FileSeal? {
    get { sealCell.withLock { $0 } }
    set { sealCell.withLock { $0 = newValue } }
  }
  private let base: UnsafeMutableRawPointer
  private let sequence: FutexWord
  private let writerWake: FutexWord
  /// The SIGBUS guard of the mapping (see `isBroken`); -1 when unguarded.
  private let guardSlot: Int32
  let initializedSession: Bool
  /// This process's slot (its liveness byte).
  private let processIndex: Int

  private struct LocalPins {
    /// The versions this process pins: a handful at most, so a list beats a dictionary.
    var pins = PinTable()
    /// The reader slot this process claimed last: tried first by the next claim.
    var lastSlot = 0
    /// Reader slots this process still owns with no version in them (version word 0), kept
    /// for its next pin as LMDB keeps a thread's slot: pinning one is two stores, no claim.
    /// At most two, inline; -1 for none.
    var idleSlots: (Int, Int) = (-1, -1)

    mutating func takeIdleSlot() -> Int? {
      if idleSlots.0 >= 0 {
        defer { idleSlots.0 = -1 }
        return idleSlots.0
      }
      if idleSlots.1 >= 0 {
        defer { idleSlots.1 = -1 }
        return idleSlots.1
      }
      return nil
    }

    /// Keeps `slot` for a later pin; false when two are kept already.
    mutating func keepIdleSlot(_ slot: Int) -> Bool {
      if idleSlots.0 < 0 {
        idleSlots.0 = slot
      } else if idleSlots.1 < 0 {
        idleSlots.1 = slot
      } else {
        return false
      }
      return true
    }
    /// The meta the last pin found: while still the published one, the next pin needs no
    /// other lock.
    var lastSeen: DecodedMeta?
    /// `lastSeen`'s meta slot, copied out so that checking it is still the published one
    /// touches no reference count (two atomic operations a snapshot).
    var seenSlot = UInt64.max
    /// `lastSeen`'s sequence number, copied out as `seenSlot` is.
    var seenSequence = UInt64.max
    var reclaimed = 0
  }
  private let local = Mutex(LocalPins())
  /// The roles this process holds (`tryAcquireRole`).
  private let roles = Mutex<Set<Int>>([])
  private let dataPath: String

  private func word(_ offset: Int) -> UnsafeAtomic<UInt64> {
    UnsafeAtomic(at: (base + offset).assumingMemoryBound(to: UnsafeAtomic<UInt64>.Storage.self))
  }

  /// Opens (creating if needed) `dataPath + ".lock"`. `dataFD` is the data file's descriptor
  /// (for the writer lock and the lock file's permissions).
  init(dataFile: PosixFile) throws {
    let dataPath = dataFile.path
    let dataFD = dataFile.descriptor.rawValue
    self.dataFile = dataFile
    self.dataPath = dataPath
    self.dataFD = dataFD
    readOnly = fcntl(dataFD, F_GETFL) & O_ACCMODE == O_RDONLY
    // One session per file, whatever name it is opened by: the lock file sits beside the
    // file's real path (symbolic links resolved), and a file with several names (hard links),
    // which processes could open by different names without seeing each other, is refused.
    lockPath = SharedCoordinator.realPath(dataPath) + ".lock"
    var dataInfo = stat()
    let haveDataInfo = fstat(dataFD, &dataInfo) == 0
    if haveDataInfo, dataInfo.st_nlink > 1 {
      throw StorageError.lockFileUnavailable(
        path: lockPath,
        reason:
          "the data file has \(dataInfo.st_nlink) names (hard links), and processes opening it by different names "
          + "could not see each other's snapshots; remove the other names and open it by one")
    }
    let mode = SharedCoordinator.lockFileMode(dataMode: haveDataInfo ? mode_t(dataInfo.st_mode & 0o777) : 0o600)
    // A read-only open creates the lock file only for the data file's owner, or as root (who
    // hands it to the owner): one made by another user could leave the owner unable to open
    // the data file.
    let mayCreate = !readOnly || (haveDataInfo && (geteuid() == 0 || dataInfo.st_uid == geteuid()))
    let (fd, created) = try SharedCoordinator.openLockFile(lockPath, mode: mode, create: mayCreate)
    var ok = false
    defer { if !ok { close(fd) } }
    let lockInfo = try SharedCoordinator.checkLockFile(fd, path: lockPath)
    if created {
      // The lock file gets its permissions whatever the umask, and (made by root
      // for another user's file) its owner, so that owner can use it.
      _ = fchmod(fd, mode)
      if haveDataInfo, geteuid() == 0, dataInfo.st_uid != 0 || dataInfo.st_gid != 0 {
        _ = fchown(fd, dataInfo.st_uid, dataInfo.st_gid)
      }
    }
    // Only a lock file this process owns may be resized; another user's is used as it is.
    let mayResize = created || lockInfo.st_uid == geteuid()
    lockFD = fd

    var first = false
    var attempts = 0
    while true {
      attempts += 1
      if SharedCoordinator.ofdLock(fd, F_WRLCK, SharedCoordinator.sessionByte, wait: false) {
        first = true
        break
      }
      guard SharedCoordinator.ofdLock(fd, F_RDLCK, SharedCoordinator.sessionByte, wait: true) else {
        throw StorageError.lockFileUnavailable(path: lockPath, reason: "cannot lock the session byte")
      }
      // Ready once the initialiser has set the flag; pread, as nothing is mapped yet.
      var flag: UInt64 = 0
      if pread(fd, &flag, 8, off_t(SharedCoordinator.offsetInitialized)) == 8, flag == 1 { break }
      // The initialiser died before finishing: try again to become it. Cut short while other
      // processes keep the session, it can never be initialised again: say so.
      SharedCoordinator.ofdUnlock(fd, SharedCoordinator.sessionByte)
      if attempts > 3, lseek(fd, 0, SEEK_END) < off_t(SharedCoordinator.mapSize) {
        throw StorageError.incompatibleLockFile(
          path: lockPath,
          reason: "it was truncated while processes used it; close every process using the file, and the next "
            + "opener starts a new session")
      }
      if attempts > 100 {
        throw StorageError.lockFileUnavailable(path: lockPath, reason: "the session was never initialised")
      }
    }
    if first {
      // Alone: nothing in the file is trusted. Zero it and set its size; another user's lock
      // file is zeroed only when it is one (checked below), never truncated.
      if mayResize {
        guard ftruncate(fd, 0) == 0, ftruncate(fd, off_t(SharedCoordinator.mapSize)) == 0 else {
          throw StorageError.lockFileUnavailable(path: lockPath, reason: String(cString: strerror(errno)))
        }
      } else {
        try SharedCoordinator.checkForeignLockFile(fd, path: lockPath, owner: lockInfo.st_uid)
      }
    } else if lseek(fd, 0, SEEK_END) < off_t(SharedCoordinator.mapSize) {
      throw StorageError.incompatibleLockFile(
        path: lockPath,
        reason: mayResize
          ? "it was truncated while processes used it; close every process using the file, and the next "
            + "opener starts a new session"
          : "it is owned by user \(lockInfo.st_uid) and is not a Shoal lock file")
    }
    guard let mapped = mmap(nil, SharedCoordinator.mapSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
      mapped != MAP_FAILED
    else {
      throw StorageError.lockFileUnavailable(path: lockPath, reason: "mmap failed: \(String(cString: strerror(errno)))")
    }
    base = mapped
    // Someone may truncate the lock file while it is mapped: a SIGBUS then breaks this
    // mapping (see `isBroken`) instead of killing the process.
    guardSlot = shoal_guard_mapping(mapped, SharedCoordinator.mapSize)
    sequence = FutexWord(
      word: (mapped + SharedCoordinator.offsetSequence).assumingMemoryBound(to: UnsafeAtomic<UInt32>.Storage.self),
      waiters: (mapped + SharedCoordinator.offsetWaiters).assumingMemoryBound(to: UnsafeAtomic<UInt32>.Storage.self))
    writerWake = FutexWord(
      word: (mapped + SharedCoordinator.offsetWriterWake).assumingMemoryBound(to: UnsafeAtomic<UInt32>.Storage.self),
      waiters: (mapped + SharedCoordinator.offsetWriterWakeWaiters).assumingMemoryBound(
        to: UnsafeAtomic<UInt32>.Storage.self))
    initializedSession = first
    if first {
      if !mayResize { memset(mapped, 0, SharedCoordinator.mapSize) }
      UnsafeAtomic<UInt64>(
        at: (mapped + SharedCoordinator.offsetMagic).assumingMemoryBound(to: UnsafeAtomic<UInt64>.Storage.self)
      )
      .store(SharedCoordinator.magic, ordering: .relaxed)
      UnsafeAtomic<UInt64>(
        at: (mapped + SharedCoordinator.offsetLayout).assumingMemoryBound(to: UnsafeAtomic<UInt64>.Storage.self)
      )
      .store(SharedCoordinator.layoutVersion, ordering: .relaxed)
    } else {
      let magic = UnsafeAtomic<UInt64>(
        at: (mapped + SharedCoordinator.offsetMagic).assumingMemoryBound(to: UnsafeAtomic<UInt64>.Storage.self)
      ).load(ordering: .acquiring)
      let layout = UnsafeAtomic<UInt64>(
        at: (mapped + SharedCoordinator.offsetLayout).assumingMemoryBound(to: UnsafeAtomic<UInt64>.Storage.self)
      ).load(ordering: .acquiring)
      guard magic == SharedCoordinator.magic, layout == SharedCoordinator.layoutVersion else {
        shoal_unguard_mapping(guardSlot)
        munmap(mapped, SharedCoordinator.mapSize)
        throw StorageError.incompatibleLockFile(
          path: lockPath,
          reason: magic == SharedCoordinator.magic
            ? "lock file layout \(layout), this build uses \(SharedCoordinator.layoutVersion)"
            : "the lock file's magic bytes do not match")
      }
    }
    // Claim a process slot: the first liveness byte nobody holds.
    var claimed: Int?
    for i in 0..<SharedCoordinator.processSlots
    where SharedCoordinator.ofdLock(fd, F_WRLCK, SharedCoordinator.livenessBase + Int64(i), wait: false) {
      claimed = i
      break
    }
    guard let index = claimed else {
      var holders: [Int32: Int] = [:]
      for i in 0..<SharedCoordinator.processSlots {
        let pid = UnsafeAtomic<UInt64>(
          at: (mapped + SharedCoordinator.processSlotOffset(i)).assumingMemoryBound(
            to: UnsafeAtomic<UInt64>.Storage.self)
        ).load(ordering: .relaxed)
        if pid != 0 { holders[Int32(truncatingIfNeeded: pid), default: 0] += 1 }
      }
      shoal_unguard_mapping(guardSlot)
      munmap(mapped, SharedCoordinator.mapSize)
      throw StorageError.slotsExhausted(
        path: lockPath, kind: "process", limit: SharedCoordinator.processSlots, holders: holders)
    }
    processIndex = index
    ok = true
    // A previous holder of this slot died (its pid is still there): drop what it left.
    let previous = word(SharedCoordinator.processSlotOffset(index)).exchange(
      UInt64(getpid()), ordering: .sequentiallyConsistent)
    clearReaderSlots(owner: index)
    word(SharedCoordinator.offsetProcessFull + 8 * index).store(0, ordering: .relaxed)
    if previous != 0 { local.withLock { $0.reclaimed += 1 } }
    word(SharedCoordinator.processSlotOffset(index) + ProcessSlot.claimedAt).store(
      EngineClock.now(), ordering: .relaxed)
    if !first { _ = reclaimDeadProcesses() }
  }

  /// The lock file's mode for a data file of mode `dataMode`: read and write for the owner,
  /// and for the group and others only where they may write the data file. Whoever can open
  /// the lock file can lock its bytes, and a read lock needs only read access: a user who may
  /// only read the data file must not be able to open it, or that user could hold the writer
  /// lock, the session or a dead process's slot with read locks. Such a user reads the file
  /// alone (`Store.open` with `readOnly`), seeing the newest commit at each read.
  static func lockFileMode(dataMode: mode_t) -> mode_t {
    var mode: mode_t = 0o600
    if dataMode & 0o020 != 0 { mode |= 0o060 }
    if dataMode & 0o002 != 0 { mode |= 0o006 }
    return mode
  }

  /// `path` with every symbolic link resolved (`path` itself when it cannot be resolved).
  static func realPath(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// Opens the lock file for reading and writing without following a symbolic link; when it
  /// does not exist and `create` allows, creates it exclusively. Returns the descriptor and
  /// whether this call created the file.
  static func openLockFile(_ path: String, mode: mode_t, create: Bool) throws -> (Int32, Bool) {
    for _ in 0..<16 {
      let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
      if fd >= 0 { return (fd, false) }
      let code = errno
      if code == ELOOP {
        throw StorageError.lockFileUnavailable(
          path: path, reason: "it is a symbolic link, which Shoal never follows for its lock file; remove it")
      }
      guard code == ENOENT, create else {
        throw StorageError.lockFileUnavailable(path: path, reason: String(cString: strerror(code)))
      }
      let made = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
      if made >= 0 { return (made, true) }
      // Another process created it first: open theirs.
      if errno != EEXIST {
        throw StorageError.lockFileUnavailable(path: path, reason: String(cString: strerror(errno)))
      }
    }
    throw StorageError.lockFileUnavailable(path: path, reason: "it keeps appearing and disappearing")
  }

  /// The lock file's status, once it is known to be a regular file with no other name: a
  /// hard link planted at the lock path would make this process write into another file.
  static func checkLockFile(_ fd: Int32, path: String) throws -> stat {
    var info = stat()
    guard fstat(fd, &info) == 0 else {
      throw StorageError.lockFileUnavailable(path: path, reason: String(cString: strerror(errno)))
    }
    guard info.st_mode & S_IFMT == S_IFREG else {
      throw StorageError.lockFileUnavailable(path: path, reason: "it is not a regular file; remove it")
    }
    guard info.st_nlink == 1 else {
      throw StorageError.lockFileUnavailable(
        path: path, reason: "it has \(info.st_nlink) names (hard links); remove it so Shoal makes its own")
    }
    return info
  }

  /// Refuses another user's lock file unless it is a Shoal lock file of this layout (which
  /// this process may then zero, as its session's first opener).
  static func checkForeignLockFile(_ fd: Int32, path: String, owner: uid_t) throws {
    var header = [UInt64](repeating: 0, count: 2)
    let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 16, 0) }
    guard lseek(fd, 0, SEEK_END) >= off_t(mapSize), count == 16, header[0] == magic, header[1] == layoutVersion else {
      throw StorageError.incompatibleLockFile(
        path: path, reason: "it is owned by user \(owner) and is not a Shoal lock file")
    }
  }

  /// Called by the initialising opener once it has recovered the newest meta from the file
  /// (durable up to `durable`); marks the session ready and downgrades to a shared session lock.
  func finishInitialisation(_ meta: Meta, durable: UInt64) {
    guard initializedSession else { return }
    setHead(meta)
    advanceDurable(to: durable)
    publishLocked(meta)
    word(SharedCoordinator.offsetInitialized).store(1, ordering: .sequentiallyConsistent)
    _ = SharedCoordinator.ofdLock(lockFD, F_RDLCK, SharedCoordinator.sessionByte, wait: false)
  }

  func withExclusiveSession(_ body: () throws -> Bool) throws -> Bool? {
    // Only possible when no other process holds the session byte (shared while open).
    guard SharedCoordinator.ofdLock(lockFD, F_WRLCK, SharedCoordinator.sessionByte, wait: false) else { return nil }
    var replaced = false
    defer {
      if replaced {
        // The published meta describes the old file: the next opener must start a new session.
        word(SharedCoordinator.offsetInitialized).store(0, ordering: .sequentiallyConsistent)
        SharedCoordinator.ofdUnlock(lockFD, SharedCoordinator.sessionByte)
      } else {
        _ = SharedCoordinator.ofdLock(lockFD, F_RDLCK, SharedCoordinator.sessionByte, wait: false)
      }
    }
    replaced = try body()
    return replaced
  }

  deinit {
    // Leave no pin behind; give up the process slot and the session.
    clearReaderSlots(owner: processIndex)
    word(SharedCoordinator.offsetProcessFull + 8 * processIndex).store(0, ordering: .relaxed)
    word(SharedCoordinator.processSlotOffset(processIndex)).store(0, ordering: .sequentiallyConsistent)
    shoal_unguard_mapping(guardSlot)
    munmap(base, SharedCoordinator.mapSize)
    close(lockFD)
  }

  var reclaimedProcesses: Int { local.withLock { $0.reclaimed } }
  var lastPublishTimestamp: UInt64 { word(SharedCoordinator.offsetPublishedAt).load(ordering: .relaxed) }

  // MARK: OFD locks

  static func ofdLock(_ fd: Int32, _ type: Int32, _ offset: Int64, wait: Bool) -> Bool {
    var lock = flock()
    lock.l_type = Int16(type)
    lock.l_whence = Int16(SEEK_SET)
    lock.l_start = off_t(offset)
    lock.l_len = 1
    while true {
      if fcntl(fd, wait ? SHOAL_F_OFD_SETLKW : SHOAL_F_OFD_SETLK, &lock) == 0 { return true }
      if errno == EINTR { continue }
      return false
    }
  }

  /// The first role byte (see `tryAcquireRole`): roles are exclusive OFD locks, so only a
  /// process with write access to the lock file can hold one, and a dead holder holds none.
  static let roleBase: Int64 = publisherByte + 1

  func tryAcquireRole(_ role: Int) -> Bool {
    precondition((0..<StoreRoles.count).contains(role), "role out of range")
    return roles.withLock { held in
      guard !held.contains(role),
        SharedCoordinator.ofdLock(lockFD, F_WRLCK, SharedCoordinator.roleBase + Int64(role), wait: false)
      else { return false }
      held.insert(role)
      return true
    }
  }

  func releaseRole(_ role: Int) {
    roles.withLock { held in
      guard held.remove(role) != nil else { return }
      SharedCoordinator.ofdUnlock(lockFD, SharedCoordinator.roleBase + Int64(role))
    }
  }

  static func ofdUnlock(_ fd: Int32, _ offset: Int64) {
    _ = ofdLock(fd, F_UNLCK, offset, wait: false)
  }

  /// The type of a lock another open file description holds on `offset` (`F_WRLCK` or
  /// `F_RDLCK`), or `F_UNLCK` when none does. `F_WRLCK` when the kernel cannot say.
  static func ofdHolder(_ fd: Int32, _ offset: Int64) -> Int32 {
    var lock = flock()
    lock.l_type = Int16(F_WRLCK)
    lock.l_whence = Int16(SEEK_SET)
    lock.l_start = off_t(offset)
    lock.l_len = 1
    guard fcntl(fd, SHOAL_F_OFD_GETLK, &lock) == 0 else { return F_WRLCK }
    return Int32(lock.l_type)
  }

  /// Whether another open file description holds a write lock on `offset`: what Shoal's
  /// processes hold on their liveness byte and on the writer byte. A read lock there is not
  /// Shoal's and proves nothing.
  static func ofdWriteLocked(_ fd: Int32, _ offset: Int64) -> Bool { ofdHolder(fd, offset) == F_WRLCK }

  // MARK: The newest meta (seqlock)

  func publish(_ meta: Meta) { publishLocked(meta) }

  /// Publishes `meta`; the caller holds the publisher lock (so no other thread or process
  /// publishes meanwhile), or is the session's initialiser, alone.
  private func publishLocked(_ meta: Meta) {
    writeCell(meta, slots: SharedCoordinator.offsetSeqlock, current: SharedCoordinator.offsetCurrentSlot)
    word(SharedCoordinator.offsetPublishedAt).store(EngineClock.now(), ordering: .relaxed)
    sequence.publish(UInt32(truncatingIfNeeded: meta.version))
  }

  /// Writes `meta` into a pair of seqlocked slots at `slots` whose current one `current`
  /// names. Into the slot readers are not reading: a writer stopped (or killed) halfway
  /// leaves the current slot, the last whole write, for them. One writer at a time.
  private func writeCell(_ meta: Meta, slots: Int, current: Int) {
    let now = word(current).load(ordering: .relaxed) & 1
    let slot = slots + Int(1 - now) * SharedCoordinator.slotSize
    let seq = word(slot)
    let start = seq.load(ordering: .relaxed)
    // An odd value means a writer died mid-write: go on from the next even value.
    let odd = start | 1
    seq.store(odd, ordering: .relaxed)
    Atomics.atomicMemoryFence(ordering: AtomicUpdateOrdering.releasing)
    var bytes = meta.encode(seal: seal)
    bytes += [UInt8](repeating: 0, count: SharedCoordinator.metaWords * 8 - bytes.count)
    bytes.withUnsafeBytes { p in
      for i in 0..<SharedCoordinator.metaWords {
        word(slot + 16 + i * 8).store(p.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self), ordering: .relaxed)
      }
    }
    seq.store(odd &+ 1, ordering: .releasing)
    word(current).store(1 - now, ordering: .releasing)
  }

  /// Reads the current slot of a pair written by `writeCell`: the meta, the slot and its
  /// sequence value; nil while a write of that slot is in progress (or was cut short).
  private func readCell(slots: Int, current: Int) -> (meta: Meta, slot: UInt64, sequence: UInt64)? {
    let now = word(current).load(ordering: .acquiring) & 1
    let slot = slots + Int(now) * SharedCoordinator.slotSize
    let seq = word(slot)
    let s1 = seq.load(ordering: .acquiring)
    guard s1 & 1 == 0 else { return nil }
    var bytes = [UInt8](repeating: 0, count: SharedCoordinator.metaWords * 8)
    bytes.withUnsafeMutableBytes { p in
      for i in 0..<SharedCoordinator.metaWords {
        p.storeBytes(of: word(slot + 16 + i * 8).load(ordering: .relaxed), toByteOffset: i * 8, as: UInt64.self)
      }
    }
    Atomics.atomicMemoryFence(ordering: AtomicUpdateOrdering.acquiring)
    guard seq.load(ordering: .relaxed) == s1, let meta = Meta.decode(bytes, seal: seal) else { return nil }
    return (meta, now, s1)
  }

  // MARK: Group commit

  func head() -> Meta? {
    // Written under the writer lock: a reader without it may meet a write in progress.
    for _ in 0..<64 {
      if let cell = readCell(slots: SharedCoordinator.offsetHeadSlots, current: SharedCoordinator.offsetHeadCurrent) {
        return cell.meta
      }
      // Never written this session (zeros decode as nothing), or a writer is mid-write.
      if word(SharedCoordinator.offsetHeadSlots).load(ordering: .acquiring) == 0,
        word(SharedCoordinator.offsetHeadSlots + SharedCoordinator.slotSize).load(ordering: .acquiring) == 0
      {
        return nil
      }
    }
    return nil
  }

  func setHead(_ meta: Meta) {
    writeCell(meta, slots: SharedCoordinator.offsetHeadSlots, current: SharedCoordinator.offsetHeadCurrent)
  }

  var durableVersion: UInt64 { word(SharedCoordinator.offsetDurable).load(ordering: .acquiring) }

  func advanceDurable(to version: UInt64) {
    let durable = word(SharedCoordinator.offsetDurable)
    var seen = durable.load(ordering: .relaxed)
    while seen < version {
      let (done, original) = durable.compareExchange(expected: seen, desired: version, ordering: .acquiringAndReleasing)
      if done {
        durableSignal.publish(durableSignal.word.load(ordering: .relaxed) &+ 1)
        return
      }
      seen = original
    }
  }

  func declareFullDurability(_ full: Bool) {
    word(SharedCoordinator.offsetProcessFull + 8 * processIndex).store(full ? 1 : 0, ordering: .sequentiallyConsistent)
  }

  var fullDurabilityPresent: Bool {
    (0..<SharedCoordinator.processSlots).contains {
      word(SharedCoordinator.offsetProcessFull + 8 * $0).load(ordering: .sequentiallyConsistent) != 0
    }
  }

  var durableSignal: FutexWord {
    FutexWord(
      word: (base + SharedCoordinator.offsetDurableWake).assumingMemoryBound(to: UnsafeAtomic<UInt32>.Storage.self),
      waiters: (base + SharedCoordinator.offsetDurableWakeWaiters).assumingMemoryBound(
        to: UnsafeAtomic<UInt32>.Storage.self))
  }

  func tryWithPublisherLock<R>(_ body: () throws -> R) throws -> R? {
    guard publisher.wait(timeout: .now()) == .success else { return nil }
    defer { publisher.signal() }
    guard SharedCoordinator.ofdLock(lockFD, F_WRLCK, SharedCoordinator.publisherByte, wait: false) else {
      if errno == EAGAIN || errno == EACCES { return nil }
      let code = errno
      throw StorageError.io(
        path: lockPath, operation: "lock for publishing", errno: code, message: String(cString: strerror(code)))
    }
    defer { SharedCoordinator.ofdUnlock(lockFD, SharedCoordinator.publisherByte) }
    return try body()
  }

  /// Serialises this process's threads before the publisher byte: OFD locks belong to the
  /// open file description, which every thread shares.
  private let publisher = DispatchSemaphore(value: 1)

  func withPublisherLock<R>(_ body: () throws -> R) throws -> R {
    publisher.wait()
    defer { publisher.signal() }
    // Blocked in the kernel while another process syncs; its death releases the byte.
    guard SharedCoordinator.ofdLock(lockFD, F_WRLCK, SharedCoordinator.publisherByte, wait: true) else {
      let code = errno
      throw StorageError.io(
        path: lockPath, operation: "lock for publishing", errno: code, message: String(cString: strerror(code)))
    }
    defer { SharedCoordinator.ofdUnlock(lockFD, SharedCoordinator.publisherByte) }
    return try body()
  }

  /// The last meta decoded, by seqlock value: taking a snapshot of an unchanged version
  /// decodes nothing.
  private let decoded = Mutex<DecodedMeta?>(nil)

  /// This process's id, for the reader slots it claims (`getpid` is a system call).
  private let pid = UInt64(getpid())

  /// Whether this coordinator's `dataFD` holds the writer lock. Its mutex also serialises
  /// this process's publishes, and a repair of an unfinished publish against them and against
  /// releasing the lock.
  private let writer = Mutex<Bool>(false)
  /// Whether the data file is open read-only (it cannot take the writer lock then).
  private let readOnly: Bool

  /// Whether the lock file was cut short while mapped: the access past its end raised SIGBUS,
  /// and the mapping was replaced by private zeroed memory (see `shoal_guard_mapping`). The
  /// session's shared state is gone for this process: it reads the newest commit from the
  /// file and refuses to write (`lockFileReplaced`) until it is reopened.
  var isBroken: Bool { shoal_mapping_broken(guardSlot) != 0 }

  /// Whether the mapped lock file still holds a session: not cut short (touching its first
  /// and last page finds out), its magic and layout not zeroed by a cut and regrowth.
  private func sessionIntact() -> Bool {
    let magic = word(SharedCoordinator.offsetMagic).load(ordering: .acquiring)
    let layout = word(SharedCoordinator.offsetLayout).load(ordering: .acquiring)
    _ = word(SharedCoordinator.mapSize - 8).load(ordering: .relaxed)
    return !isBroken && magic == SharedCoordinator.magic && layout == SharedCoordinator.layoutVersion
  }

  func latest() -> Meta { latestDecoded().meta }

  /// The published meta, held by reference (a snapshot copies it once, not at every step).
  private func latestDecoded() -> DecodedMeta {
    var attempts = 0
    while true {
      if let decoded = readPublished() { return decoded }
      // A lock file cut short reads as zeros here, never as a whole publish.
      if isBroken, let meta = lastResort() { return DecodedMeta(meta) }
      // A publish is in progress: its writer may have been preempted mid-write (wait for it,
      // yielding the core it may need) or killed (then the writer lock is free: repair).
      attempts += 1
      if attempts % 64 == 0, let repaired = recoverFromUnfinishedPublish() { return DecodedMeta(repaired) }
      if attempts < 64 {
        continue
      } else if attempts < 256 {
        sched_yield()
      } else {
        usleep(50)
      }
    }
  }

  /// Whether `decoded` is still the published meta: the current slot and its sequence are
  /// those it was read under.
  private func isPublished(_ decoded: DecodedMeta) -> Bool {
    isPublished(slot: decoded.slot, sequence: decoded.sequence)
  }

  /// Whether the meta that was published in meta slot `slot` with sequence number `sequence`
  /// is still the published one.
  /// Sequentially consistent (a plain load on x86): after claiming a reader slot, this is the
  /// second look at the newest version, which must not move before the slot's store.
  @inline(__always)
  private func isPublished(slot decodedSlot: UInt64, sequence: UInt64) -> Bool {
    let current = word(SharedCoordinator.offsetCurrentSlot).load(ordering: .sequentiallyConsistent) & 1
    let slot = SharedCoordinator.offsetSeqlock + Int(current) * SharedCoordinator.slotSize
    return current == decodedSlot && word(slot).load(ordering: .sequentiallyConsistent) == sequence
  }

  /// The published meta, or nil while a publish is in progress (or was cut short).
  private func readPublished() -> DecodedMeta? {
    let current = word(SharedCoordinator.offsetCurrentSlot).load(ordering: .acquiring) & 1
    let slot = SharedCoordinator.offsetSeqlock + Int(current) * SharedCoordinator.slotSize
    let s1 = word(slot).load(ordering: .acquiring)
    if let hit = decoded.withLock({ $0 }), hit.slot == current, hit.sequence == s1 { return hit }
    // Odd: a publisher is writing this slot, which happens only after two publishes since
    // this reader looked at the current slot (the caller reads again).
    guard let cell = readCell(slots: SharedCoordinator.offsetSeqlock, current: SharedCoordinator.offsetCurrentSlot)
    else { return nil }
    let fresh = DecodedMeta(cell.meta, slot: cell.slot, sequence: cell.sequence)
    decoded.withLock { $0 = fresh }
    return fresh
  }

  func latestHoldingWriterLock() throws -> Meta {
    try writer.withLock { _ throws(StorageError) -> Meta in
      // Unreadable, the published meta was cut short: publishing needs the writer lock, which
      // this process holds, so the publisher died.
      guard let newest = try republishNewestLocked() else {
        throw StorageError.corrupt(
          path: dataPath, offset: FileLayout.headerSize, reason: "neither meta record is valid")
      }
      return newest
    }
  }

  /// Called while the published meta stays unreadable. Publishing happens only under the
  /// writer lock, so a publish that stays unfinished while the writer lock is free was cut
  /// short by the death of its process: the newest whole commit on disk is then published
  /// again, under the writer lock, so no commit lands meanwhile and the walk to it ends
  /// (without the lock, a walk can chase busy writers for ever). Nil while a live writer of
  /// another process holds the lock: it finishes its publish, or, if it took the lock after
  /// the death, its `beginWrite` repairs.
  private func recoverFromUnfinishedPublish() -> Meta? {
    // A data file replaced by a compaction (this store is closed): its last version stands.
    guard dataFile.isStillAtPath else {
      return decoded.withLock { $0?.meta } ?? CommitChain.newestCommit(in: dataFile, seal: seal)
    }
    // This process holds the lock (on another thread: `writer` keeps it from being released
    // or used to publish meanwhile).
    let here = writer.withLock { held -> (held: Bool, meta: Meta?) in
      guard held else { return (false, nil) }
      return (true, try? republishNewestLocked())
    }
    if here.held { return here.meta ?? lastResort() }
    // A description of its own, so that its lock conflicts with every other holder, this
    // process's `lockFD` included (another thread may be about to lock through it).
    let fd = readOnly ? -1 : open("/proc/self/fd/\(lockFD)", O_RDWR | O_CLOEXEC)
    guard fd >= 0 else {
      // Cannot publish (read-only): when nobody holds the writer lock nobody commits, so a
      // walk of the file finds the newest commit; nothing is published.
      return SharedCoordinator.ofdWriteLocked(lockFD, SharedCoordinator.writerByte) ? nil : lastResort()
    }
    defer { close(fd) }  // Closing the description releases its lock.
    guard SharedCoordinator.ofdLock(fd, F_WRLCK, SharedCoordinator.writerByte, wait: false) else { return nil }
    do {
      return try writer.withLock { _ throws(StorageError) in try republishNewestLocked() } ?? lastResort()
    } catch {
      // Not published (the next writer repairs, and reports the error if it persists).
      Log.write(.error, .coordination, "Cannot publish the newest commit of \(dataPath) again: \(error)")
      return lastResort()
    }
  }

  /// The newest commit record of the file, unverified and unpublished, or else the last
  /// version this process saw: a reader never waits for ever.
  private func lastResort() -> Meta? {
    CommitChain.newestCommit(in: dataFile, seal: seal) ?? decoded.withLock { $0?.meta }
  }

  /// The published meta when it reads whole, else publishes the newest whole commit of the
  /// file again (the caller holds the writer lock and `writer`'s mutex); nil when neither
  /// meta slot is valid.
  private func republishNewestLocked() throws(StorageError) -> Meta? {
    if let decoded = readPublished() { return decoded.meta }
    let newest: Meta?
    do {
      newest = try CommitChain.adoptNewestCommit(in: dataFile, seal: seal)
    } catch let error as StorageError {
      throw error
    } catch {
      throw StorageError.io(path: dataPath, operation: "recover the published version", errno: 0, message: "\(error)")
    }
    guard let newest else { return nil }
    Log.write(
      .warn, .coordination,
      "A process died while publishing a version to \(lockPath); published version \(newest.version) again")
    // Secured (synced) by the adoption: durable, and the head for the next writer.
    do {
      try withPublisherLock {
        setHead(newest)
        publishLocked(newest)
        advanceDurable(to: newest.version)
      }
    } catch let error as StorageError {
      throw error
    } catch {
      throw StorageError.io(path: dataPath, operation: "publish the newest version", errno: 0, message: "\(error)")
    }
    return newest
  }

  func waitForChange(after version: UInt64, timeout: Double?) -> UInt64? {
    sequence.wait(after: version, timeout: timeout) { self.latest().version }
  }

  func wakeAll() { sequence.wakeAll() }

  // MARK: Pins

  private func readerOffset(_ i: Int) -> Int { SharedCoordinator.offsetReaders + i * ReaderSlot.size }

  func pinLatest() throws -> DecodedMeta {
    try local.withLock { l in
      while true {
        if l.lastSeen == nil || !isPublished(slot: l.seenSlot, sequence: l.seenSequence) {
          let fresh = latestDecoded()
          (l.lastSeen, l.seenSlot, l.seenSequence) = (fresh, fresh.slot, fresh.sequence)
        }
        guard let newest = l.lastSeen else { continue }  // Set just above when it was nil.
        let v = newest.meta.version
        if l.pins.retain(v) { return newest }
        // A free reader slot: claim it, publish the version, then check it is still the
        // newest (a writer that began before the slot was visible may free older versions).
        let index: Int
        if let idle = l.takeIdleSlot() {
          index = idle
          fill(readerSlot: idle, version: v)
        } else {
          guard let claimed = claimReaderSlot(version: v, hint: l.lastSlot) else { throw readerSlotsExhausted() }
          index = claimed
          l.lastSlot = claimed
        }
        if isPublished(newest) || latestDecoded().meta.version == v {
          l.pins.add(v, slot: index)
          return newest
        }
        empty(readerSlot: index, into: &l)
      }
    }
  }

  func pinUnpublished(_ meta: Meta) throws {
    try local.withLock { l in
      let v = meta.version
      if l.pins.retain(v) { return }
      // Newer than anything published, and the writer lock is held: nothing can free it.
      if let idle = l.takeIdleSlot() {
        fill(readerSlot: idle, version: v)
        l.pins.add(v, slot: idle)
        return
      }
      guard let index = claimReaderSlot(version: v, hint: l.lastSlot) else { throw readerSlotsExhausted() }
      l.lastSlot = index
      l.pins.add(v, slot: index)
    }
  }

  /// The error for a full reader-slot table, naming who holds the slots.
  private func readerSlotsExhausted() -> StorageError {
    var holders: [Int32: Int] = [:]
    for i in 0..<SharedCoordinator.readerSlots where word(readerOffset(i)).load(ordering: .acquiring) != 0 {
      holders[Int32(truncatingIfNeeded: word(readerOffset(i) + ReaderSlot.pid).load(ordering: .relaxed)), default: 0] +=
        1
    }
    return .slotsExhausted(path: lockPath, kind: "reader", limit: SharedCoordinator.readerSlots, holders: holders)
  }

  /// Claims a free reader slot for `version`, trying `hint` (the one this process used last,
  /// likely free again and in its cache) first, and only slots that look free.
  private func claimReaderSlot(version: UInt64, hint: Int) -> Int? {
    let owner = UInt64(processIndex + 1)
    let count = SharedCoordinator.readerSlots
    for step in 0..<count {
      let i = (hint + step) % count
      let o = readerOffset(i)
      guard word(o).load(ordering: .relaxed) == 0,
        word(o).compareExchange(expected: 0, desired: owner, ordering: .sequentiallyConsistent).exchanged
      else { continue }
      word(o + ReaderSlot.pid).store(pid, ordering: .relaxed)
      fill(readerSlot: i, version: version)
      return i
    }
    return nil
  }

  /// Puts `version` into a reader slot this process owns.
  private func fill(readerSlot i: Int, version: UInt64) {
    let o = readerOffset(i)
    // Pin ages are reported in seconds: the coarse clock (a few ms) is precise enough.
    word(o + ReaderSlot.since).store(EngineClock.coarseNow(), ordering: .relaxed)
    // Sequentially consistent: ordered before the caller's second look at the newest version.
    word(o + ReaderSlot.version).store(version, ordering: .sequentiallyConsistent)
  }

  /// Takes the version out of a reader slot this process owns, keeping the slot for the next
  /// pin (or freeing it when two are kept already, so that one process never holds many of
  /// the table's slots unused). Releasing is enough: the reads made under the
  /// pin happen before a writer that sees the version gone reuses what it protected; a writer
  /// that still sees the old value keeps more than needed, never less.
  private func empty(readerSlot i: Int, into l: inout LocalPins) {
    guard l.keepIdleSlot(i) else { return releaseReaderSlot(i) }
    word(readerOffset(i) + ReaderSlot.version).store(0, ordering: .releasing)
  }

  /// Frees a reader slot. Releasing is enough: the reads made under the pin happen before a
  /// writer that sees the slot free reuses what it protected; a writer that still sees the
  /// old value keeps more than needed, never less.
  private func releaseReaderSlot(_ i: Int) {
    let o = readerOffset(i)
    word(o + ReaderSlot.version).store(0, ordering: .releasing)
    word(o).store(0, ordering: .releasing)
  }

  func unpin(_ version: UInt64) {
    local.withLock { l in
      if let slot = l.pins.release(version) { empty(readerSlot: slot, into: &l) }
    }
  }

  private func clearReaderSlots(owner index: Int) {
    let owner = UInt64(index + 1)
    for i in 0..<SharedCoordinator.readerSlots where word(readerOffset(i)).load(ordering: .relaxed) == owner {
      releaseReaderSlot(i)
    }
  }

  /// Frees the slots of every process whose liveness lock is gone (of those `only` names,
  /// when given); returns how many.
  func reclaimDeadProcesses(only: Set<Int>? = nil) -> Int {
    var count = 0
    for i in 0..<SharedCoordinator.processSlots where i != processIndex && only?.contains(i) != false {
      // Readers of slot i exist only while its pid word is set: both the closing process
      // and a reclaimer clear the reader slots before the pid word.
      let pidWord = word(SharedCoordinator.processSlotOffset(i))
      guard pidWord.load(ordering: .relaxed) != 0 else { continue }
      let byte = SharedCoordinator.livenessBase + Int64(i)
      // Alive only while it holds a write lock on its byte: a read lock (which another
      // user's process could take) keeps no dead process's pins alive.
      let holder = SharedCoordinator.ofdHolder(lockFD, byte)
      if holder == F_WRLCK { continue }
      // Hold the byte while clearing, so that a process claiming the slot now waits for us.
      // Under a foreign read lock nobody can claim the slot, so it is cleared without.
      let held = SharedCoordinator.ofdLock(lockFD, F_WRLCK, byte, wait: false)
      guard held || holder == F_RDLCK else { continue }
      clearReaderSlots(owner: i)
      word(SharedCoordinator.offsetProcessFull + 8 * i).store(0, ordering: .relaxed)
      pidWord.store(0, ordering: .sequentiallyConsistent)
      if held { SharedCoordinator.ofdUnlock(lockFD, byte) }
      count += 1
    }
    if count > 0 {
      local.withLock { $0.reclaimed += count }
      Log.write(.warn, .coordination, "Reclaimed the version pins of \(count) dead process(es) sharing \(lockPath)")
    }
    return count
  }

  /// When this process last looked at every process slot for dead processes (coarse clock).
  private let lastSweep = Atomic<UInt64>(0)
  /// How often `oldestPin` looks at every process slot, not only at the owners of old pins.
  static let sweepInterval: UInt64 = 1_000_000_000

  func oldestPin(latest: UInt64) -> UInt64 {
    // A dead process's pins must not hold space back: the owners of pins older than `latest`
    // (the only ones that would) are checked, each with one lock probe, before their pins
    // count. Every other process slot is looked at once a second: probing every process at
    // every commit cost a system call per process sharing the file, inside the writer lock.
    let now = EngineClock.coarseNow()
    if now &- lastSweep.load(ordering: .relaxed) >= SharedCoordinator.sweepInterval {
      lastSweep.store(now, ordering: .relaxed)
      _ = reclaimDeadProcesses()
      return oldestPinned(latest: latest).oldest
    }
    // One pass over the reader slots finds the oldest pin and the other processes whose pins
    // hold space back; only when one of those turns out dead (its pins are cleared) is a second
    // pass needed.
    let (oldest, owners) = oldestPinned(latest: latest)
    guard !owners.isEmpty, reclaimDeadProcesses(only: owners) > 0 else { return oldest }
    return oldestPinned(latest: latest).oldest
  }

  /// The oldest version pinned (at most `latest`), and the process slots of other processes
  /// pinning versions older than `latest`.
  private func oldestPinned(latest: UInt64) -> (oldest: UInt64, owners: Set<Int>) {
    var oldest = latest
    var owners = Set<Int>()
    for i in 0..<SharedCoordinator.readerSlots {
      let o = readerOffset(i)
      let owner = word(o).load(ordering: .sequentiallyConsistent)
      guard owner != 0 else { continue }
      // 0: a slot being claimed; its reader re-checks the newest version after publishing.
      let v = word(o + ReaderSlot.version).load(ordering: .sequentiallyConsistent)
      guard v != 0 else { continue }
      oldest = min(oldest, v)
      if v < latest, Int(owner) - 1 != processIndex { owners.insert(Int(owner) - 1) }
    }
    return (oldest, owners)
  }

  func pins() -> [PinInfo] {
    let now = EngineClock.now()
    var result: [PinInfo] = []
    for i in 0..<SharedCoordinator.readerSlots {
      let o = readerOffset(i)
      guard word(o).load(ordering: .acquiring) != 0 else { continue }
      // 0: a slot its process keeps for its next pin, or one being claimed: no pin.
      let version = word(o + ReaderSlot.version).load(ordering: .relaxed)
      guard version != 0 else { continue }
      let since = word(o + ReaderSlot.since).load(ordering: .relaxed)
      result.append(
        PinInfo(
          pid: Int32(truncatingIfNeeded: word(o + ReaderSlot.pid).load(ordering: .relaxed)), version: version,
          ageSeconds: since == 0 ? 0 : Double(now &- since) / 1e9))
    }
    return result.sorted { $0.version < $1.version }
  }

  // MARK: Writer lock

  func lockWriter(timeout: Duration?) throws {
    if !SharedCoordinator.ofdLock(lockFD, F_WRLCK, SharedCoordinator.writerByte, wait: false) {
      try waitForWriterByte(timeout: timeout)
    }
    try lockedWriter()
  }

  /// Waits for the writer byte, at most `timeout` when given: asleep on the futex word every
  /// release bumps, woken by the release, and at least every 50 ms to notice a holder that died
  /// (the kernel frees its lock, but nobody bumps the word). Not a blocking `F_OFD_SETLKW`:
  /// its five-second warning would need a timer on another thread for every wait, and with
  /// four writer processes on two cores those wake-ups cost about a tenth of the throughput.
  private func waitForWriterByte(timeout: Duration?) throws {
    let start = EngineClock.now()
    let limit = timeout.map { UInt64(EngineClock.nanoseconds($0)) } ?? UInt64.max
    let warnAfter = UInt64(EngineClock.nanoseconds(SharedCoordinator.writerWaitWarning))
    var warned = false
    while true {
      let observed = writerWake.word.load(ordering: .sequentiallyConsistent)
      if SharedCoordinator.ofdLock(lockFD, F_WRLCK, SharedCoordinator.writerByte, wait: false) { return }
      let code = errno
      guard code == EAGAIN || code == EACCES else {
        throw StorageError.io(
          path: lockPath, operation: "lock for writing", errno: code, message: String(cString: strerror(code)))
      }
      let waited = EngineClock.now() &- start
      if waited >= limit {
        throw StorageError.writeLockTimeout(path: dataPath, waitedSeconds: Double(waited) / 1e9, holder: writerPid())
      }
      if !warned, waited >= warnAfter {
        warned = true
        warnOfLongWait(after: .nanoseconds(Int64(waited)))
      }
      let slice = min(limit - waited, 50_000_000)
      var remaining = timespec(tv_sec: Int(slice / 1_000_000_000), tv_nsec: Int(slice % 1_000_000_000))
      writerWake.waiters.wrappingIncrement(ordering: .sequentiallyConsistent)
      _ = shoal_futex_wait(writerWake.address, observed, &remaining)
      writerWake.waiters.wrappingDecrement(ordering: .sequentiallyConsistent)
    }
  }

  /// The pid of the process holding the writer lock, when one does.
  private func writerPid() -> Int32? {
    guard SharedCoordinator.ofdWriteLocked(lockFD, SharedCoordinator.writerByte) else { return nil }
    let pid = Int32(truncatingIfNeeded: word(SharedCoordinator.offsetWriterPid).load(ordering: .acquiring))
    return pid == 0 ? nil : pid
  }

  private func warnOfLongWait(after waited: Duration) {
    let holder = writerPid().map { "process \($0)" } ?? "another process"
    Log.write(
      .warn, .coordination,
      "Waiting \(waited) for the writer lock of \(dataPath), held by \(holder): a write transaction there is "
        + "still open, or that process is stopped (SIGSTOP, a debugger)")
  }

  func tryLockWriterForWrite() throws -> Bool {
    guard SharedCoordinator.ofdLock(lockFD, F_WRLCK, SharedCoordinator.writerByte, wait: false) else {
      if errno == EAGAIN || errno == EACCES { return false }
      throw StorageError.io(
        path: lockPath, operation: "lock for writing", errno: errno, message: String(cString: strerror(errno)))
    }
    try lockedWriter()
    return true
  }

  /// Completes taking the writer lock once the writer byte is held.
  private func lockedWriter() throws {
    writer.withLock { $0 = true }
    // Still the lock file other openers find, whole? If it was deleted or replaced, processes
    // that opened since coordinate through another one and cannot see our pins; if it was cut
    // short, every process lost the pins it held.
    guard lockFileIsCurrent(), sessionIntact() else {
      unlockWriter()
      throw StorageError.lockFileReplaced(path: lockPath)
    }
    do {
      try lockDataFile()
    } catch {
      unlockWriter()
      throw error
    }
    word(SharedCoordinator.offsetWriterPid).store(UInt64(getpid()), ordering: .releasing)
    word(SharedCoordinator.offsetWriterSince).store(EngineClock.now(), ordering: .relaxed)
  }

  /// Whether the lock file at `lockPath` is the one this process mapped.
  private func lockFileIsCurrent() -> Bool {
    var mapped = stat()
    var named = stat()
    return fstat(lockFD, &mapped) == 0 && stat(lockPath, &named) == 0 && mapped.st_ino == named.st_ino
      && mapped.st_dev == named.st_dev
  }

  /// Whether this process holds the data file's write lock (see `lockDataFile`).
  private let dataFileLocked = Atomic<Bool>(false)
  /// Whether a foreign read lock on the data file was reported already.
  private let reportedForeignReadLock = Atomic<Bool>(false)

  /// Takes the write lock on the data file's first byte, the second layer of the writer lock
  /// (the writer byte is held). Only a writer of another session holds it with a write lock:
  /// wait for it, as this session's lock file may be the one that was replaced. A read lock
  /// there is never Shoal's (its processes take none on the data file) but that of a process
  /// that can only read the file: it must not stall writers, so the writer goes on without
  /// this layer, and says so once.
  private func lockDataFile() throws {
    var pause: UInt32 = 100
    while true {
      if SharedCoordinator.ofdLock(dataFD, F_WRLCK, 0, wait: false) {
        dataFileLocked.store(true, ordering: .relaxed)
        return
      }
      switch SharedCoordinator.ofdHolder(dataFD, 0) {
      case F_RDLCK:
        if !reportedForeignReadLock.exchange(true, ordering: .relaxed) {
          Log.write(
            .warn, .coordination,
            "A process that can only read \(dataPath) holds a read lock on it; Shoal takes none, and writers go on "
              + "without waiting for it")
        }
        return
      case F_UNLCK:
        continue
      default:
        // A writer of another session: rare (its lock file was deleted), so a sleep between
        // tries is enough, and a blocking wait could be held up by a read lock taken meanwhile.
        guard lockFileIsCurrent() else { throw StorageError.lockFileReplaced(path: lockPath) }
        usleep(pause)
        pause = min(pause * 2, 10_000)
      }
    }
  }

  func unlockWriter() {
    writer.withLock { held in
      guard held else { return }
      held = false
      word(SharedCoordinator.offsetWriterPid).store(0, ordering: .releasing)
      if dataFileLocked.exchange(false, ordering: .relaxed) { SharedCoordinator.ofdUnlock(dataFD, 0) }
      SharedCoordinator.ofdUnlock(lockFD, SharedCoordinator.writerByte)
      writerWake.publish(writerWake.word.load(ordering: .relaxed) &+ 1)
    }
  }

  /// Takes the writer lock if no writer holds it; false when one does (or the data file is
  /// open read-only). For publishing outside a write transaction without racing a writer's
  /// own publish.
  func tryLockWriter() -> Bool {
    guard !readOnly else { return false }
    return writer.withLock { held in
      guard SharedCoordinator.ofdLock(lockFD, F_WRLCK, SharedCoordinator.writerByte, wait: false) else { return false }
      held = true
      return true
    }
  }
}
