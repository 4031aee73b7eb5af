import Foundation
import Synchronization

/// Keeps a change listener registered; `invalidate()` (or releasing it) removes it.
public final class ChangeListenerToken: Sendable {
  private let remove: @Sendable () -> Void
  private let done = Atomic<Bool>(false)

  init(remove: @escaping @Sendable () -> Void) { self.remove = remove }

  deinit { invalidate() }

  /// Stops the callbacks.
  public func invalidate() {
    if !done.exchange(true, ordering: .acquiringAndReleasing) { remove() }
  }
}

/// The per-store listener thread: waits on the notifier and calls every registered
/// callback with (from, to) for each move of the newest version, in order.
final class ChangeListeners: Sendable {
  typealias Callback = @Sendable (UInt64, UInt64) -> Void

  /// A registered callback and the newest version it has been told of. A class, so that the
  /// closure is stored once: writing a closure back into a dictionary of tuples re-wraps it
  /// in a reabstraction thunk each time, and the chain of thunks a call runs through then
  /// grows by two with every delivery (found by profiling a long-running observer).
  private final class Entry {
    let callback: Callback
    var last: UInt64
    init(_ callback: @escaping Callback, last: UInt64) {
      self.callback = callback
      self.last = last
    }
  }

  private struct State {
    /// In the order they were added (ids only grow), which is the order they are called in.
    var callbacks: [(id: Int, entry: Entry)] = []
    var nextID = 0
    var running = false
    var stopped = false
  }

  private let state = Mutex(State())
  private let coordinator: Coordinator

  init(coordinator: Coordinator) { self.coordinator = coordinator }

  func add(_ callback: @escaping Callback, startingAt version: UInt64) -> ChangeListenerToken {
    let (id, start) = state.withLock { s -> (Int, Bool) in
      s.nextID += 1
      s.callbacks.append((s.nextID, Entry(callback, last: version)))
      let start = !s.running && !s.stopped
      s.running = s.running || start
      return (s.nextID, start)
    }
    if start {
      let thread = Thread { [self] in run() }
      thread.name = "shoal-listener"
      thread.start()
    }
    return ChangeListenerToken { [weak self] in self?.state.withLock { $0.callbacks.removeAll { $0.id == id } } }
  }

  func stop() {
    state.withLock { $0.stopped = true }
    coordinator.wakeAll()
  }

  private func run() {
    while !state.withLock({ $0.stopped }) {
      // Deliver first, then wait: a commit that landed between a registration and this
      // thread's start (or during a delivery) is reported at once, not at the next commit.
      let now = coordinator.latest().version
      // In the order the listeners were added: one added later hears of a commit after
      // those added before it (a queue's callbacks then run in that order too).
      let due = state.withLock { s -> [(Entry, UInt64)] in
        var due: [(Entry, UInt64)] = []
        for (_, entry) in s.callbacks where entry.last < now {
          due.append((entry, entry.last))
          entry.last = now
        }
        return due
      }
      for (entry, from) in due { entry.callback(from, now) }
      // The timeout only bounds how long a stop can go unnoticed if a wake is missed.
      _ = coordinator.waitForChange(after: now, timeout: 1)
    }
  }
}
