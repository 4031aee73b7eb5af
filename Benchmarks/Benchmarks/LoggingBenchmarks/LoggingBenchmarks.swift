// What one log call costs, in the same run as the other benchmarks: a message below the level
// in effect must cost one atomic load and no formatting (no allocation), which is what lets
// Shoal's engine and object layer log on hot paths. Each iteration makes 1M calls of the same
// message, the way the object layer logs a query evaluation:
//
//   "evaluated \(n) rows of \(className) in \(elapsed) µs"
//
// (an Int, a String and a Double interpolated; n and elapsed change every call). bench-table
// divides the median iteration by the 1M calls, and the median malloc count likewise (the
// MallocInterposer trait counts every malloc of the process between the start and the end of
// an iteration).
//
//   log-disabled 1M / shoal            Log.write(.debug, .query, message) with the query category
//                                      at .info: the level check alone (the message is never built)
//   log-enabled 1M / shoal             the same call with the query category at .debug, delivered
//                                      to a no-op log function (Log.setLogFunction { _, _, _ in }):
//                                      the formatting and the delivery that the disabled call avoids
//   log-format-only 1M / shoal         the message built and dropped (blackHole), no Log: the
//                                      formatting alone
//   logger-shared-disabled 1M / shoal  Logger.shared.log(level: .trace, message: message),
//                                      RealmSwift's API, with a Logger at .info installed as
//                                      Logger.shared: its getter (a lock, the logger retained) and
//                                      the level check
//
// Setup checks what each benchmark claims before it is measured: a disabled call never evaluates
// its message (a message that counts its evaluations), an enabled one delivers exactly the
// formatted text once, and delivering a message does not make the next delivery run deeper in
// the stack (see `expectFlatDelivery`). The disabled benchmarks keep a counting log function
// installed while they are measured, and their teardown fails if it was ever called.

import Benchmark
import Shoal
import ShoalStorage
import Synchronization

/// The shape of the logging benchmarks (bench-table divides by `calls`).
enum LogShape {
  /// Log calls per iteration.
  static let calls = 1_000_000
  /// Deliveries `expectFlatDelivery` makes.
  static let depthProbes = 1_000
}

struct LogBenchError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Every message a counting log function received.
let delivered = Mutex<[String]>([])

func deliveredCount() -> Int { delivered.withLock { $0.count } }

/// The engine-level log function that records each message.
let countingLogFunction: @Sendable (LogLevel, LogCategory, String) -> Void = { _, _, message in
  delivered.withLock { $0.append(message) }
}

/// What the messages interpolate, read from an object so the compiler cannot fold them.
final class MessageInputs {
  var className = "Quote"
  /// Message evaluations counted by `countedMessage` (setup's checks only).
  var evaluations = 0

  /// The benchmark's message, counting its evaluation.
  func countedMessage(_ n: Int) -> String {
    evaluations += 1
    return "evaluated \(n) rows of \(className) in \(Double(n) * 0.25) µs"
  }
}

/// One logging benchmark of `LogShape.calls` calls per iteration: `prepare` sets the levels and
/// the log function (and checks them) in setup, `calls` runs once per iteration, `check` after
/// the last one.
func loggingBenchmark(
  _ name: String, maxIterations: Int, prepare: @escaping (MessageInputs) throws -> Void = { _ in },
  check: @escaping () throws -> Void = {}, _ calls: @escaping (MessageInputs) -> Void
) {
  let inputs = MessageInputs()
  Benchmark(
    "\(name) 1M / shoal",
    configuration: .init(
      metrics: [.wallClock, .mallocCountTotal], warmupIterations: 3, maxDuration: .seconds(5),
      maxIterations: maxIterations)
  ) { _ in
    calls(inputs)
  } setup: {
    delivered.withLock { $0.removeAll() }
    try prepare(inputs)
  } teardown: {
    try check()
  }
}

/// Fails unless a disabled call leaves its message unevaluated and delivers nothing.
func expectDisabled(_ inputs: MessageInputs, _ call: () -> Void) throws {
  let (evaluations, count) = (inputs.evaluations, deliveredCount())
  call()
  guard inputs.evaluations == evaluations, deliveredCount() == count else {
    throw LogBenchError("a disabled log call evaluated its message or delivered it")
  }
}

/// Fails if any message reached the counting log function while a disabled benchmark ran.
func expectNothingDelivered() throws {
  let count = deliveredCount()
  guard count == 0 else { throw LogBenchError("\(count) disabled messages were delivered") }
}

/// Fails if each delivery through `Log.write` runs the log function deeper in the stack than
/// the one before, i.e. if reading the installed log function wraps it in another layer each
/// time (as reading a closure out of a `Mutex` with `withLock { $0 }` does: the inout value is
/// reabstracted on the way in and again on the way back, two more thunks per read). Then a
/// delivery costs more with every message delivered before it and the stack overflows after
/// some 10^5 of them, so the enabled benchmark would measure that rather than the formatting.
/// The same call from the same place runs at the same stack depth; this compares the depth of
/// the first and the last of `LogShape.depthProbes` deliveries.
func expectFlatDelivery() throws {
  let depths = Mutex<[UInt]>([])
  Log.setLogFunction { _, _, _ in
    var local = 0
    let address = withUnsafeMutablePointer(to: &local) { UInt(bitPattern: $0) }
    depths.withLock { $0.append(address) }
  }
  for n in 0..<LogShape.depthProbes { Log.write(.debug, .query, "probe \(n)") }
  let addresses = depths.withLock { $0 }
  guard addresses.count == LogShape.depthProbes, let first = addresses.first, let last = addresses.last else {
    throw LogBenchError("\(addresses.count) of \(LogShape.depthProbes) enabled messages were delivered")
  }
  let deeper = first > last ? first - last : 0
  guard deeper < 16_384 else {
    throw LogBenchError(
      "delivery \(LogShape.depthProbes) ran the log function \(deeper) bytes deeper in the stack than the "
        + "first: each delivery wraps the installed log function in more thunks (Log.deliver reads it with "
        + "sink.withLock { $0 }), so each message costs more than the last and about 10^5 overflow the stack")
  }
}

let benchmarks: @Sendable () -> Void = {
  loggingBenchmark(
    "log-disabled", maxIterations: 300,
    prepare: { inputs in
      Log.clearCategoryLevels()
      Log.setLevel(.info, for: .query)
      Log.setLogFunction(countingLogFunction)
      guard !Log.isEnabled(.debug, .query), Log.isEnabled(.info, .query) else {
        throw LogBenchError("the query category is not at info")
      }
      try expectDisabled(inputs) { Log.write(.debug, .query, inputs.countedMessage(7)) }
    }, check: expectNothingDelivered
  ) { inputs in
    let className = inputs.className
    for n in 0..<LogShape.calls {
      Log.write(.debug, .query, "evaluated \(n) rows of \(className) in \(Double(n) * 0.25) µs")
    }
  }

  loggingBenchmark(
    "log-enabled", maxIterations: 50,
    prepare: { inputs in
      Log.clearCategoryLevels()
      Log.setLevel(.debug, for: .query)
      Log.setLogFunction(countingLogFunction)
      Log.write(.debug, .query, inputs.countedMessage(7))
      let messages = delivered.withLock { $0 }
      guard inputs.evaluations == 1, messages == ["evaluated 7 rows of Quote in 1.75 µs"] else {
        throw LogBenchError("an enabled log call delivered \(messages) after \(inputs.evaluations) evaluations")
      }
      try expectFlatDelivery()
      Log.setLogFunction { _, _, _ in }
    }
  ) { inputs in
    let className = inputs.className
    for n in 0..<LogShape.calls {
      Log.write(.debug, .query, "evaluated \(n) rows of \(className) in \(Double(n) * 0.25) µs")
    }
  }

  loggingBenchmark("log-format-only", maxIterations: 50) { inputs in
    let className = inputs.className
    for n in 0..<LogShape.calls {
      blackHole("evaluated \(n) rows of \(className) in \(Double(n) * 0.25) µs")
    }
  }

  loggingBenchmark(
    "logger-shared-disabled", maxIterations: 300,
    prepare: { inputs in
      Shoal.Logger.shared = Shoal.Logger(level: .info, logFunction: countingLogFunction)
      Log.clearCategoryLevels()
      guard Shoal.Logger.level(for: .shoal) == .info else { throw LogBenchError("Logger.shared is not at info") }
      try expectDisabled(inputs) { Shoal.Logger.shared.log(level: .trace, message: inputs.countedMessage(7)) }
    }, check: expectNothingDelivered
  ) { inputs in
    let className = inputs.className
    for n in 0..<LogShape.calls {
      Shoal.Logger.shared.log(level: .trace, message: "evaluated \(n) rows of \(className) in \(Double(n) * 0.25) µs")
    }
  }
}
