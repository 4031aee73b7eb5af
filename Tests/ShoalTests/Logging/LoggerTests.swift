import Foundation
import Logging
import Shoal
import ShoalLogging
import ShoalStorage
import Synchronization
import Testing

/// Collects log messages that mention `marker` (other suites log concurrently).
final class CapturedLog: Sendable {
  let marker: String
  private let lines = Mutex<[(Shoal.Logger.Level, Shoal.Logger.Category, String)]>([])
  init(marker: String) { self.marker = marker }
  func add(_ level: Shoal.Logger.Level, _ category: Shoal.Logger.Category, _ message: String) {
    if message.contains(marker) { lines.withLock { $0.append((level, category, message)) } }
  }
  var messages: [(Shoal.Logger.Level, Shoal.Logger.Category, String)] { lines.withLock { $0 } }
}

@Suite("Logger", .serialized)
struct LoggerTests {
  /// Runs `body` with `logger` installed, then puts the default back.
  func with(_ logger: Shoal.Logger, _ body: () throws -> Void) rethrows {
    let previous = Shoal.Logger.shared
    Shoal.Logger.shared = logger
    Log.clearCategoryLevels()
    defer {
      Shoal.Logger.shared = previous
      Log.clearCategoryLevels()
    }
    try body()
  }

  @Test func levelsAreInheritedByDescendantCategories() {
    with(Shoal.Logger(level: .info) { _, _ in }) {
      #expect(Shoal.Logger.level(for: .transaction) == .info)
      Shoal.Logger.set(level: .debug, for: .storage)
      #expect(Shoal.Logger.level(for: .transaction) == .debug)
      #expect(Shoal.Logger.level(for: .query) == .debug)
      #expect(Shoal.Logger.level(for: .coordination) == .info)
      Shoal.Logger.set(level: .trace, for: .transaction)
      #expect(Shoal.Logger.level(for: .transaction) == .trace)
      #expect(Shoal.Logger.level(for: .query) == .debug)
      #expect(Shoal.Logger.Category(name: "Shoal.Storage.Transaction") == .transaction)
      #expect(Shoal.Logger.Category.transaction.parent == .storage)
    }
  }

  @Test func theEngineAndTheObjectLayerLogByCategory() throws {
    let config = fileConfiguration("logged")
    let captured = CapturedLog(marker: config.fileURL!.path)
    try with(Shoal.Logger(level: .detail) { level, category, message in captured.add(level, category, message) }) {
      Shoal.Logger.set(level: .debug, for: .transaction)
      let realm = try Realm(configuration: config)
      try realm.write { realm.add(Counter(value: ["a", 1])) }
      let messages = captured.messages
      #expect(messages.contains { $0.1 == .storage && $0.2.hasPrefix("Opened") && $0.0 == .detail })
      // Realm Core's form for a database's messages: "DB: <number> …".
      #expect(messages.contains { $0.1 == .shoal && $0.2.hasPrefix("DB: ") && $0.2.contains(" Open Realm ") })
      #expect(messages.contains { $0.1 == .transaction && $0.2.hasPrefix("Committed version") && $0.0 == .debug })
    }
  }

  @Test func openingARealmLogsItsDatabaseAtDetailAndTrace() throws {
    let config = fileConfiguration("db-logged")
    let captured = CapturedLog(marker: config.fileURL!.path)
    try with(Shoal.Logger(level: .trace) { level, category, message in captured.add(level, category, message) }) {
      _ = try Realm(configuration: config)
      let messages = captured.messages
      #expect(messages.contains { $0.0 == .detail && $0.2.hasPrefix("DB: ") })
      #expect(messages.contains { $0.0 == .trace && $0.2.hasPrefix("DB: ") })
    }
  }

  @Test func aDisabledLevelFormatsNothing() {
    let formatted = Mutex(0)
    func expensive() -> String {
      formatted.withLock { $0 += 1 }
      return "expensive"
    }
    with(Shoal.Logger(level: .info) { _, _ in }) {
      Shoal.Logger.shared.log(level: .trace, message: expensive())
      Shoal.Logger.shared.log(level: .debug, message: expensive(), category: .query)
      #expect(formatted.withLock { $0 } == 0)
      Shoal.Logger.shared.log(level: .warn, message: expensive())
      #expect(formatted.withLock { $0 } == 1)
    }
  }

  @Test func theSimpleLogFunctionAndLevelChanges() {
    let received = Mutex<[String]>([])
    let logger = Shoal.Logger(level: .warn) { level, message in
      if message.hasPrefix("probe") { received.withLock { $0.append("\(level) \(message)") } }
    }
    with(logger) {
      logger.log(level: .info, message: "probe 1")
      logger.log(level: .error, message: "probe 2")
      logger.level = .info
      logger.log(level: .info, message: "probe 3")
      #expect(received.withLock { $0 } == ["error probe 2", "info probe 3"])
    }
  }

  @Test func manyDeliveriesCostTheSame() {
    // Each message reaches the log function at the same stack depth, however many came before
    // (a closure kept in a Mutex used to be re-wrapped on every read).
    let depths = Mutex<[Int]>([])
    let previous = Shoal.Logger.shared
    Shoal.Logger.shared = Shoal.Logger(level: .info) { _, message in
      guard message == "depth probe" else { return }
      var marker = 0
      let depth = withUnsafeMutablePointer(to: &marker) { Int(bitPattern: $0) }
      depths.withLock { $0.append(depth) }
    }
    defer { Shoal.Logger.shared = previous }
    for _ in 0..<2_000 { Log.write(.warn, .shoal, "depth probe") }
    let seen = depths.withLock { $0 }
    #expect(seen.count == 2_000)
    #expect(Set(seen).count == 1)
  }

  @Test func swiftLogReceivesShoalsMessages() {
    let handler = CapturingHandler()
    var logger = Logging.Logger(label: "shoal-test", factory: { _ in handler })
    logger.logLevel = .debug
    let previous = Shoal.Logger.shared
    ShoalLogging.bootstrap(logger)
    defer { Shoal.Logger.shared = previous }
    #expect(Shoal.Logger.level(for: .shoal) == .debug)
    Shoal.Logger.shared.log(level: .warn, message: "bridge probe", category: .coordination)
    let entry = handler.entries.first { $0.message == "bridge probe" }
    #expect(entry?.level == .warning)
    #expect(entry?.category == "Shoal.Coordination")
  }
}

/// A swift-log handler that keeps what it receives.
final class CapturingHandler: LogHandler, @unchecked Sendable {  // safe: `stored` is guarded by a Mutex
  struct Entry: Sendable {
    let level: Logging.Logger.Level
    let message: String
    let category: String?
  }
  private let stored = Mutex<[Entry]>([])
  var entries: [Entry] { stored.withLock { $0 } }
  var metadata: Logging.Logger.Metadata = [:]
  var logLevel: Logging.Logger.Level = .trace
  subscript(metadataKey key: String) -> Logging.Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }
  func log(event: LogEvent) {
    var category: String?
    if case .string(let value)? = event.metadata?["category"] { category = value }
    stored.withLock { $0.append(Entry(level: event.level, message: "\(event.message)", category: category)) }
  }
}
