import Dispatch
import Synchronization

/// One pinned version, as `Store.pins()` reports it.
public struct PinInfo: Sendable, Codable, Equatable {
  /// The process holding the pin.
  public var pid: Int32
  /// The pinned version.
  public var version: UInt64
  /// How long the version has been pinned, in seconds.
  public var ageSeconds: Double
}

/// What a store needs from the processes and threads sharing its file: the published
/// newest version, version pins, the writer lock and change notification.
protocol Coordinator: AnyObject, Sendable {
  /// Whether this coordinator initialised the session (and so must recover the file).
  var initializedSession: Bool { get }
  /// The newest published meta.
  func latest() -> Meta
  /// The newest published meta, for the holder of the writer lock: nobody else can be
  /// publishing, so an unfinished publish was cut short by a death and is repaired at once
  /// (errors, such as a failed sync, are thrown).
  func latestHoldingWriterLock() throws -> Meta
  /// Publishes a new newest version to every process and wakes those waiting for it. The
  /// caller holds the publisher lock (`withPublisherLock`), or is alone in the session.
  func publish(_ meta: Meta)
  /// The newest commit written to the file (its blocks and record), which may still wait for
  /// the sync that makes it durable (group commit); nil when none was recorded this session.
  /// Set by the holder of the writer lock, once the commit's writes are done.
  func head() -> Meta?
  func setHead(_ meta: Meta)
  /// The newest version known durable this session: a sync began after its writes ended.
  var durableVersion: UInt64 { get }
  /// Raises `durableVersion` to `version` (never lowers it), waking `durableSignal`'s waiters.
  func advanceDurable(to version: UInt64)
  /// A word bumped each time `durableVersion` rises: committers whose commit another one is
  /// syncing wait on it.
  var durableSignal: FutexWord { get }
  /// Records whether this process writes with durability `full`.
  func declareFullDurability(_ full: Bool)
  /// Whether a process with the file open writes with durability `full` (possibly one that
  /// died and whose slot is not reclaimed yet). Writers of durability `unsafe` then keep the
  /// rules that make its commits survive a power loss: no reuse of space freed by a commit not
  /// yet durable, a durable fallback anchor, a sync every few commits.
  var fullDurabilityPresent: Bool { get }
  /// Takes role `role` (0 ..< `StoreRoles.count`) if no process holds it (this one included);
  /// false at once otherwise. Released by `releaseRole`, or by the kernel when the process dies.
  func tryAcquireRole(_ role: Int) -> Bool
  /// Gives role `role` up, if this process holds it.
  func releaseRole(_ role: Int)
  /// Runs `body` holding the publisher lock if nobody holds it; nil at once when someone does.
  func tryWithPublisherLock<R>(_ body: () throws -> R) throws -> R?
  /// Runs `body` holding the publisher lock, which one thread of one process holds at a time:
  /// the sync that makes a batch of commits durable, and every publish, happen under it.
  /// Taken after the writer lock when both are held, never before it.
  func withPublisherLock<R>(_ body: () throws -> R) throws -> R
  /// Pins the newest version; returns it.
  func pinLatest() throws -> DecodedMeta
  /// Pins `meta`, a version this process is committing and has not published yet (the writer
  /// lock is held), so that it is pinned from the moment any reader can see it.
  func pinUnpublished(_ meta: Meta) throws
  func unpin(_ version: UInt64)
  /// Takes the writer lock across processes (threads are serialised by the store), waiting
  /// at most `timeout` when one is given (`StorageError.writeLockTimeout` then).
  func lockWriter(timeout: Duration?) throws
  /// Takes the writer lock if no other process holds it; false at once when one does.
  func tryLockWriterForWrite() throws -> Bool
  func unlockWriter()
  /// The oldest version any live reader pins, after reclaiming the pins of dead processes;
  /// `latest` when nothing older is pinned.
  func oldestPin(latest: UInt64) -> UInt64
  /// Every pin, file-wide.
  func pins() -> [PinInfo]
  /// Waits until the published version is no longer `version`, or `timeout` seconds pass.
  func waitForChange(after version: UInt64, timeout: Double?) -> UInt64?
  /// Wakes every waiter (used when closing).
  func wakeAll()
  /// How many dead processes' pins were reclaimed so far.
  var reclaimedProcesses: Int { get }
  /// When the newest version was published (nanoseconds since 1970).
  var lastPublishTimestamp: UInt64 { get }
  /// Runs `body` while no other process has the file open, keeping them out meanwhile; nil
  /// (without running it) when another process has it open. `body` returns true when it
  /// replaced the data file: the session then ends, and the next opener starts a new one.
  func withExclusiveSession(_ body: () throws -> Bool) throws -> Bool?
}

/// The coordinator of a store that only this process can see (`memOnly`, or a store over a
/// `StorageFile` given directly): pins and the newest version live in this process.
final class LocalCoordinator: Coordinator {
  func latestHoldingWriterLock() -> Meta { latest() }

  private let roles = Mutex<Set<Int>>([])

  func tryAcquireRole(_ role: Int) -> Bool { roles.withLock { $0.insert(role).inserted } }

  func releaseRole(_ role: Int) { _ = roles.withLock { $0.remove(role) } }

  private struct State {
    var meta: Meta {
      get { current.meta }
      set { current = DecodedMeta(newValue) }
    }
    /// The newest version, as snapshots share it.
    var current: DecodedMeta
    var pins: [UInt64: (count: Int, since: UInt64)] = [:]
    var publishedAt: UInt64 = 0
    var head: Meta?
    var durable: UInt64 = 0
  }

  private let state: Mutex<State>
  private let publisher = DispatchSemaphore(value: 1)
  private let sequence: FutexWord
  /// For a process that reads a shared file outside its session (see `Store.isDetached`):
  /// finds the newest commit in the file after the one given, as other processes commit.
  private let follow: (@Sendable (Meta) -> Meta)?

  /// Starts at `meta`, known durable up to `durable`.
  init(meta: Meta, durable: UInt64, follow: (@Sendable (Meta) -> Meta)? = nil) {
    self.follow = follow
    state = Mutex(State(current: DecodedMeta(meta), head: meta, durable: durable))
    sequence = FutexWord.processPrivate()
    sequence.store(UInt32(truncatingIfNeeded: meta.version))
  }

  deinit {
    sequence.deallocatePrivate()
    durableSignal.deallocatePrivate()
  }

  var initializedSession: Bool { true }
  var reclaimedProcesses: Int { 0 }
  var lastPublishTimestamp: UInt64 { state.withLock { $0.publishedAt } }

  func latest() -> Meta {
    state.withLock { s in
      followFile(&s)
      return s.meta
    }
  }

  /// Moves to the file's newest commit when following it.
  private func followFile(_ s: inout State) {
    guard let follow else { return }
    let newest = follow(s.meta)
    if newest.version > s.meta.version { s.meta = newest }
  }

  func publish(_ meta: Meta) {
    state.withLock {
      $0.meta = meta
      $0.publishedAt = EngineClock.now()
    }
    sequence.publish(UInt32(truncatingIfNeeded: meta.version))
  }

  func head() -> Meta? { state.withLock { $0.head } }
  func setHead(_ meta: Meta) { state.withLock { $0.head = meta } }
  var durableVersion: UInt64 { state.withLock { $0.durable } }
  func advanceDurable(to version: UInt64) {
    let raised = state.withLock { s -> Bool in
      guard version > s.durable else { return false }
      s.durable = version
      return true
    }
    if raised { durableSignal.publish(durableSignal.word.load(ordering: .relaxed) &+ 1) }
  }

  let durableSignal = FutexWord.processPrivate()
  private let full = Atomic<Bool>(false)

  func declareFullDurability(_ full: Bool) { self.full.store(full, ordering: .relaxed) }
  var fullDurabilityPresent: Bool { full.load(ordering: .relaxed) }

  func tryWithPublisherLock<R>(_ body: () throws -> R) throws -> R? {
    guard publisher.wait(timeout: .now()) == .success else { return nil }
    defer { publisher.signal() }
    return try body()
  }

  func withPublisherLock<R>(_ body: () throws -> R) throws -> R {
    publisher.wait()
    defer { publisher.signal() }
    return try body()
  }

  func pinLatest() throws -> DecodedMeta {
    state.withLock { s in
      followFile(&s)
      LocalCoordinator.pin(s.current.meta.version, in: &s)
      return s.current
    }
  }

  func pinUnpublished(_ meta: Meta) throws {
    state.withLock { LocalCoordinator.pin(meta.version, in: &$0) }
  }

  private static func pin(_ version: UInt64, in s: inout State) {
    if let pin = s.pins[version] {
      s.pins[version] = (pin.count + 1, pin.since)
    } else {
      s.pins[version] = (1, EngineClock.now())
    }
  }

  func unpin(_ version: UInt64) {
    state.withLock { s in
      guard let pin = s.pins[version] else { return }
      s.pins[version] = pin.count > 1 ? (pin.count - 1, pin.since) : nil
    }
  }

  func lockWriter(timeout: Duration?) throws {}
  func tryLockWriterForWrite() throws -> Bool { true }
  func unlockWriter() {}

  func oldestPin(latest: UInt64) -> UInt64 {
    state.withLock { s in min(s.pins.keys.min() ?? latest, latest) }
  }

  func withExclusiveSession(_ body: () throws -> Bool) throws -> Bool? { try body() }

  func pins() -> [PinInfo] {
    let now = EngineClock.now()
    let pid = getpid()
    return state.withLock { s in
      s.pins.map { PinInfo(pid: pid, version: $0.key, ageSeconds: Double(now &- $0.value.since) / 1e9) }
    }
  }

  func waitForChange(after version: UInt64, timeout: Double?) -> UInt64? {
    sequence.wait(after: version, timeout: timeout) { self.latest().version }
  }

  func wakeAll() { sequence.wakeAll() }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A meta record decoded from the lock file, shared by reference: taking a snapshot of an
/// unchanged version copies it once. `slot` and `sequence` are the seqlock values it was read
/// under (zero for one that was not read from a slot).
final class DecodedMeta: Sendable {
  let meta: Meta
  let slot: UInt64
  let sequence: UInt64

  init(_ meta: Meta, slot: UInt64 = .max, sequence: UInt64 = .max) {
    self.meta = meta
    self.slot = slot
    self.sequence = sequence
  }
}

/// The versions one process pins, each with its reader slot and how many of the process's
/// snapshots hold it. Almost always one version (the newest), kept inline; others in a list.
struct PinTable {
  private var first: (version: UInt64, slot: Int, count: Int) = (0, 0, 0)
  private var others: [(version: UInt64, slot: Int, count: Int)] = []

  /// Counts one more snapshot of `version` if it is pinned already; false if it is not.
  mutating func retain(_ version: UInt64) -> Bool {
    if first.count > 0, first.version == version {
      first.count += 1
      return true
    }
    guard let i = others.firstIndex(where: { $0.version == version }) else { return false }
    others[i].count += 1
    return true
  }

  /// Records the first snapshot of `version`, in reader slot `slot`.
  mutating func add(_ version: UInt64, slot: Int) {
    if first.count == 0 {
      first = (version, slot, 1)
    } else {
      others.append((version, slot, 1))
    }
  }

  /// Counts one snapshot of `version` less; returns its reader slot when that was the last.
  mutating func release(_ version: UInt64) -> Int? {
    if first.count > 0, first.version == version {
      first.count -= 1
      return first.count == 0 ? first.slot : nil
    }
    guard let i = others.firstIndex(where: { $0.version == version }) else { return nil }
    others[i].count -= 1
    guard others[i].count == 0 else { return nil }
    return others.remove(at: i).slot
  }
}
