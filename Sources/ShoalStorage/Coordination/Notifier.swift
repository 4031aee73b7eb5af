import Atomics
import CShoalSystem

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A 32-bit commit sequence word with a waiters count, waited on with FUTEX_WAIT. A commit
/// stores the new value and calls FUTEX_WAKE only when someone waits. Shared words (in the
/// mapped lock file) use no FUTEX_PRIVATE_FLAG, so waiters in every process are woken.
struct FutexWord: @unchecked Sendable {  // Shared memory by design: every access is atomic or a futex call.
  let word: UnsafeAtomic<UInt32>
  let waiters: UnsafeAtomic<UInt32>
  let address: UnsafeMutablePointer<UInt32>

  /// Words inside the mapped lock file.
  init(
    word: UnsafeMutablePointer<UnsafeAtomic<UInt32>.Storage>,
    waiters: UnsafeMutablePointer<UnsafeAtomic<UInt32>.Storage>
  ) {
    self.word = UnsafeAtomic(at: word)
    self.waiters = UnsafeAtomic(at: waiters)
    address = UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self)
  }

  /// Words of this process only, allocated here (`deallocatePrivate()` frees them).
  static func processPrivate() -> FutexWord {
    let storage = UnsafeMutablePointer<UnsafeAtomic<UInt32>.Storage>.allocate(capacity: 2)
    storage.initialize(repeating: UnsafeAtomic<UInt32>.Storage(0), count: 2)
    return FutexWord(word: storage, waiters: storage + 1)
  }

  /// Frees the words of a private instance.
  func deallocatePrivate() {
    UnsafeMutableRawPointer(address).assumingMemoryBound(to: UnsafeAtomic<UInt32>.Storage.self).deallocate()
  }

  func store(_ value: UInt32) { word.store(value, ordering: .sequentiallyConsistent) }

  /// Stores `value` and wakes waiters, if any.
  func publish(_ value: UInt32) {
    word.store(value, ordering: .sequentiallyConsistent)
    if waiters.load(ordering: .sequentiallyConsistent) > 0 { wakeAll() }
  }

  func wakeAll() {
    _ = shoal_futex_wake(address, Int32.max)
  }

  /// Waits until the word no longer holds `observed`, or `timeout` seconds pass (blocked in
  /// the kernel meanwhile); returns at once when it holds another value already.
  func wait(whileHolding observed: UInt32, timeout: Double) {
    guard word.load(ordering: .sequentiallyConsistent) == observed else { return }
    let nanoseconds = UInt64(max(0, timeout) * 1e9)
    var remaining = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    waiters.wrappingIncrement(ordering: .sequentiallyConsistent)
    _ = shoal_futex_wait(address, observed, &remaining)
    waiters.wrappingDecrement(ordering: .sequentiallyConsistent)
  }

  /// Waits until `current()` (the published version) differs from `version`; returns it,
  /// or nil when `timeout` seconds pass first. The word is stored after the version is
  /// published, so it may lag: the wait is on whatever value the word holds, and every
  /// store to it wakes the waiters.
  func wait(after version: UInt64, timeout: Double?, current: () -> UInt64) -> UInt64? {
    let deadline = timeout.map { EngineClock.now() + UInt64(max(0, $0) * 1e9) }
    while true {
      let observed = word.load(ordering: .sequentiallyConsistent)
      let now = current()
      if now != version { return now }
      var remaining: timespec?
      if let deadline {
        let clock = EngineClock.now()
        if clock >= deadline { return nil }
        let left = deadline - clock
        remaining = timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
      }
      waiters.wrappingIncrement(ordering: .sequentiallyConsistent)
      if var r = remaining {
        _ = shoal_futex_wait(address, observed, &r)
      } else {
        _ = shoal_futex_wait(address, observed, nil)
      }
      waiters.wrappingDecrement(ordering: .sequentiallyConsistent)
    }
  }
}
