import Foundation
import Synchronization

extension Store {
  /// Begins the write transaction from async code without blocking the caller's thread.
  ///
  /// When no other thread or process holds the writer lock, it is taken at once. Otherwise a
  /// helper thread waits for it (blocked in the kernel, as `beginWrite()` waits) while the
  /// calling task is suspended, so an actor's executor stays free. Cancelling the task ends the
  /// wait with `CancellationError`; should the helper get the lock after that, it lets it go at
  /// once.
  ///
  /// ```swift
  /// let transaction = try await store.beginWriteAsync()
  /// try transaction.put(value, forKey: key, in: "items")
  /// try transaction.commit()
  /// ```
  public func beginWriteAsync() async throws -> WriteTransaction {
    try Task.checkCancellation()
    if let transaction = try tryBeginWrite() {
      forgetWriterThread()
      return transaction
    }
    let wait = WriterLockWait()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<WriteTransaction, any Error>) in
        guard wait.start(continuation) else { return }
        Thread.detachNewThread { [self] in
          asyncWriteWaiters.wrappingAdd(1, ordering: .relaxed)
          let result = Result { try beginWrite() }
          asyncWriteWaiters.wrappingSubtract(1, ordering: .relaxed)
          if case .success = result { forgetWriterThread() }
          wait.finish(result)
        }
      }
    } onCancel: {
      wait.cancel()
    }
  }

  /// How many async writes of this process wait for the writer lock now (see
  /// `beginWriteAsync()`): a diagnostic, and what tests wait for instead of sleeping.
  public var asyncWritesWaiting: Int { asyncWriteWaiters.load(ordering: .relaxed) }

  /// Begins the write transaction if no other thread or process holds the writer lock; nil
  /// (at once, without waiting) when one does.
  public func tryBeginWrite() throws -> WriteTransaction? {
    if options.readOnly { throw StorageError.readOnly(path: path) }
    guard writerGateTryWait() else { return nil }
    guard coordinatorTryLockWriter() else {
      writerGateSignal()
      return nil
    }
    return try beginWriteHoldingLocks()
  }
}

/// The state of one asynchronous wait for the writer lock, shared by the waiting task's
/// cancellation handler and the helper thread.
private final class WriterLockWait: Sendable {
  private enum State {
    case idle
    case waiting(CheckedContinuation<WriteTransaction, any Error>)
    case cancelled
    case finished
  }
  private let state = Mutex<State>(.idle)

  /// Records the continuation; false (having resumed it with `CancellationError`) when the
  /// task was cancelled first.
  func start(_ continuation: CheckedContinuation<WriteTransaction, any Error>) -> Bool {
    let cancelled = state.withLock { state -> Bool in
      if case .cancelled = state { return true }
      state = .waiting(continuation)
      return false
    }
    if cancelled { continuation.resume(throwing: CancellationError()) }
    return !cancelled
  }

  /// The helper thread's outcome: handed to the task, or, when it was cancelled meanwhile, the
  /// transaction aborted (letting the lock go).
  func finish(_ result: sending Result<WriteTransaction, any Error>) {
    let continuation = state.withLock { state -> CheckedContinuation<WriteTransaction, any Error>? in
      defer { state = .finished }
      if case .waiting(let continuation) = state { return continuation }
      return nil
    }
    guard let continuation else {
      if case .success(let transaction) = result { transaction.abort() }
      return
    }
    continuation.resume(with: result)
  }

  /// The task was cancelled: it stops waiting now.
  func cancel() {
    let continuation = state.withLock { state -> CheckedContinuation<WriteTransaction, any Error>? in
      switch state {
      case .waiting(let continuation):
        state = .cancelled
        return continuation
      case .idle:
        state = .cancelled
        return nil
      case .cancelled, .finished:
        return nil
      }
    }
    continuation?.resume(throwing: CancellationError())
  }
}
