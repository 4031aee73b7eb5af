import Foundation
import Synchronization
import Testing

// Helpers the conformance suites share.

/// What an exit test's child process wrote to standard error.
func stderrText(_ result: ExitTest.Result?) -> String {
  guard let result else { return "" }
  return String(decoding: result.standardErrorContent, as: UTF8.self)
}

/// Runs `body` on a new thread and returns its result.
func resultOnOtherThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
  let result = Mutex<Result<T, any Error>?>(nil)
  let done = DispatchSemaphore(value: 0)
  Thread.detachNewThread {
    let outcome = Result { try body() }
    result.withLock { $0 = outcome }
    done.signal()
  }
  done.wait()
  return try result.withLock { $0! }.get()  // set before `done` was signalled
}
