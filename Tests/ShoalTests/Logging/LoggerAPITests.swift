import Dispatch
import Foundation
import Shoal
import Synchronization
import Testing

// Conformance with RealmSwift's documented behaviour of the logger, checked against
// realm-swift's and realm-core's sources. RealmSwift's exceptions (Shoal: fatal errors) are exit
// tests whose standard error must hold RealmSwift's message.

// MARK: - Logger

@Suite("Logger API", .serialized)
struct LoggerAPITests {
  /// `LogLevel` is `RLMLogLevel`: off, fatal, error, warn, info, detail, debug, trace, all = 0…8.
  @Test func levelRawValuesAndOrderFollowRLMLogLevel() {
    let levels: [Logger.Level] = [.off, .fatal, .error, .warn, .info, .detail, .debug, .trace, .all]
    #expect(levels.map { Int($0.rawValue) } == Array(0...8))
    #expect(Logger.Level.info.rawValue < Logger.Level.detail.rawValue)
    #expect(Logger.Level.trace.rawValue < Logger.Level.all.rawValue)
  }

  /// "By default default log threshold level is `.info`."
  @Test func theDefaultLoggerLogsAtInfo() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      checkInExitTest(Logger.shared.level == .info, "Logger.shared.level is \(Logger.shared.level), not info")
    }
    #expect(!stderrText(result).contains("Exit-test check failed"), "\(stderrText(result))")
  }

  /// `Logger.shared = logger` makes it the default logger, with its level; `Logger.shared.level`
  /// changes the threshold "at any point of the application's lifetime".
  @Test func settingTheSharedLoggerAndItsLevel() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      Logger.shared = Logger(level: .trace) { _, _ in }
      checkInExitTest(
        Logger.shared.level == .trace, "shared level \(Logger.shared.level) after installing a trace logger")
      Logger.shared.level = .warn
      checkInExitTest(Logger.shared.level == .warn, "shared level \(Logger.shared.level) after setting warn")
    }
    #expect(!stderrText(result).contains("Exit-test check failed"), "\(stderrText(result))")
  }

  /// A custom logger at `.all` receives Realm's own lines when a Realm is opened and written,
  /// including lines below `.info`.
  @Test func aCustomLoggerAtAllReceivesRealmsOwnLines() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      let received = ReceivedLogMessages()
      Logger.shared = Logger(level: .all) { level, message in received.append(level, message) }
      try openAndWriteARealm()
      let messages = received.all
      checkInExitTest(!messages.isEmpty, "no log message while opening and writing a Realm at .all")
      checkInExitTest(
        messages.contains { $0.level.rawValue > Logger.Level.info.rawValue },
        "no message more verbose than info: \(messages.map { "\($0.level): \($0.message)" })")
    }
    #expect(!stderrText(result).contains("Exit-test check failed"), "\(stderrText(result))")
  }

  /// The threshold filters Realm's lines: at `.info` nothing more verbose arrives; raising
  /// `Logger.shared.level` to `.trace` later lets them through to the same log function.
  @Test func theThresholdFiltersRealmsLines() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      let received = ReceivedLogMessages()
      Logger.shared = Logger(level: .info) { level, message in received.append(level, message) }
      try openAndWriteARealm()
      let atInfo = received.all
      checkInExitTest(
        atInfo.allSatisfy { $0.level.rawValue <= Logger.Level.info.rawValue && $0.level != .off },
        "messages above the .info threshold: \(atInfo.map { "\($0.level): \($0.message)" })")
      Logger.shared.level = .trace
      try openAndWriteARealm()
      let atTrace = received.all.dropFirst(atInfo.count)
      checkInExitTest(
        atTrace.contains { $0.level.rawValue > Logger.Level.info.rawValue },
        "no verbose message after raising the level to .trace")
      checkInExitTest(
        atTrace.allSatisfy { $0.level.rawValue <= Logger.Level.trace.rawValue },
        "messages above the .trace threshold: \(atTrace.map { "\($0.level): \($0.message)" })")
    }
    #expect(!stderrText(result).contains("Exit-test check failed"), "\(stderrText(result))")
  }

  /// "To disable use `Logger.shared.level = .off`."
  @Test func levelOffSilencesRealm() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      let received = ReceivedLogMessages()
      Logger.shared = Logger(level: .all) { level, message in received.append(level, message) }
      Logger.shared.level = .off
      try openAndWriteARealm()
      checkInExitTest(received.all.isEmpty, "messages at .off: \(received.all.map { "\($0.level): \($0.message)" })")
    }
    #expect(!stderrText(result).contains("Exit-test check failed"), "\(stderrText(result))")
  }

  /// `log(level:message:)` hands the level and the exact message to the log function, for
  /// messages at or above the logger's level only.
  @Test func logLevelMessageReachesTheLogFunction() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      let received = ReceivedLogMessages()
      let logger = Logger(level: .warn) { level, message in received.append(level, message) }
      Logger.shared = logger
      logger.log(level: .error, message: "logger-api error line")
      logger.log(level: .info, message: "logger-api info line")
      logger.log(level: .trace, message: "logger-api trace line")
      logger.log(level: .warn, message: "logger-api warn line")
      let ours = received.all.filter { $0.message.hasPrefix("logger-api") }
      checkInExitTest(
        ours.map(\.message) == ["logger-api error line", "logger-api warn line"], "received \(ours.map(\.message))")
      checkInExitTest(ours.map(\.level) == [.error, .warn], "levels \(ours.map(\.level))")
    }
    #expect(!stderrText(result).contains("Exit-test check failed"), "\(stderrText(result))")
  }

  /// `Logger(level:logFunction:)` gives the logger that threshold: a logger made at `.all` logs
  /// its own debug lines, one made at `.error` drops its warnings, whatever the shared logger's
  /// level (RLMLogger's `initWithLevel:logFunction:` sets the threshold; 10.50+ also makes it the
  /// level of the `Realm` category).
  @Test func aLoggersLevelGovernsItsOwnLogCalls() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      let received = ReceivedLogMessages()
      let verbose = Logger(level: .all) { level, message in received.append(level, message) }
      verbose.log(level: .debug, message: "logger-api debug line")
      checkInExitTest(
        received.all.map(\.message) == ["logger-api debug line"],
        "a logger at .all did not pass its debug line: \(received.all.map(\.message))")
      let quiet = Logger(level: .error) { level, message in received.append(level, message) }
      quiet.log(level: .warn, message: "logger-api warn line")
      checkInExitTest(
        received.all.map(\.message) == ["logger-api debug line"],
        "a logger at .error passed its warning: \(received.all.map(\.message))")
    }
    #expect(!stderrText(result).contains("Exit-test check failed"), "\(stderrText(result))")
  }
}
