import Synchronization

/// How much Shoal logs: RealmSwift's levels and order (`off` logs nothing, `all` everything).
public enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
  case off = 0, fatal, error, warn, info, detail, debug, trace, all

  /// Orders levels from `off` (least) to `all` (most).
  public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

  /// The level's name in lower case, e.g. "warn".
  public var description: String {
    switch self {
    case .off: return "off"
    case .fatal: return "fatal"
    case .error: return "error"
    case .warn: return "warn"
    case .info: return "info"
    case .detail: return "detail"
    case .debug: return "debug"
    case .trace: return "trace"
    case .all: return "all"
    }
  }
}

/// Where a log message comes from. Categories form a tree by their dotted names; a level set
/// on a category applies to its descendants unless they have their own.
public struct LogCategory: Hashable, Sendable, CustomStringConvertible {
  let index: Int

  /// Everything Shoal logs.
  public static let shoal = LogCategory(index: 0)
  /// The storage engine.
  public static let storage = LogCategory(index: 1)
  /// Transactions: begin, commit (size and duration), abort.
  public static let transaction = LogCategory(index: 2)
  /// Queries.
  public static let query = LogCategory(index: 3)
  /// Object reads and writes.
  public static let object = LogCategory(index: 4)
  /// Change notifications.
  public static let notification = LogCategory(index: 5)
  /// Processes sharing a file: sessions, pins, dead processes.
  public static let coordination = LogCategory(index: 6)
  /// Sync with a server (ShoalSync): the agent's connection, uploads, downloads and errors.
  public static let sync = LogCategory(index: 7)

  static let names = [
    "Shoal", "Shoal.Storage", "Shoal.Storage.Transaction", "Shoal.Storage.Query", "Shoal.Storage.Object",
    "Shoal.Storage.Notification", "Shoal.Coordination", "Shoal.Sync",
  ]
  static let parents: [Int?] = [nil, 0, 1, 1, 1, 1, 0, 0]

  /// Every category, root first.
  public static let all = (0..<names.count).map { LogCategory(index: $0) }

  /// The dotted name, e.g. "Shoal.Storage.Transaction".
  public var name: String { LogCategory.names[index] }
  /// The dotted name (`name`).
  public var description: String { name }

  /// The category above this one, nil for `shoal`.
  public var parent: LogCategory? { LogCategory.parents[index].map { LogCategory(index: $0) } }

  /// The category named `name`, if it is one of Shoal's.
  public init?(name: String) {
    guard let index = LogCategory.names.firstIndex(of: name) else { return nil }
    self.index = index
  }

  init(index: Int) { self.index = index }
}

/// The process-wide destination of Shoal's log messages: a level per category (inherited by
/// descendants) and one log function. Checking whether a level is enabled is one atomic load,
/// and a message is only formatted when it will be written.
public enum Log {
  /// Levels set explicitly, per category; nil inherits the parent's.
  private static let explicit = Mutex<[LogLevel?]>([.info] + Array(repeating: nil, count: LogCategory.names.count - 1))
  /// The effective threshold of every category, four bits each (category i at bits 4i),
  /// recomputed when a level changes: checking a level is one atomic load.
  private static let thresholds = Atomic<UInt64>(packed(Array(repeating: .info, count: LogCategory.names.count)))

  private static func packed(_ levels: [LogLevel]) -> UInt64 {
    var word: UInt64 = 0
    for (index, level) in levels.enumerated() { word |= UInt64(level.rawValue) << UInt64(4 * index) }
    return word
  }

  @inline(__always)
  private static func threshold(_ index: Int) -> Int {
    Int((thresholds.load(ordering: .relaxed) >> UInt64(4 * index)) & 0xF)
  }
  /// The log function, in a class: a closure read out of a `Mutex` with `withLock { $0 }` comes
  /// back wrapped in two more reabstraction thunks each time (and is stored back so), so every
  /// delivery would cost more than the last and some 10^5 would overflow the stack.
  private final class Sink: Sendable {
    let function: @Sendable (LogLevel, LogCategory, String) -> Void
    init(_ function: @escaping @Sendable (LogLevel, LogCategory, String) -> Void) { self.function = function }
  }
  private static let sink = Mutex<Sink?>(nil)

  /// Sets the level of `category` and of its descendants that have none of their own.
  public static func setLevel(_ level: LogLevel, for category: LogCategory) {
    explicit.withLock { levels in
      levels[category.index] = level
      var effective: [LogLevel] = []
      for index in levels.indices {
        var current: Int? = index
        var found = LogLevel.info
        while let c = current {
          if let set = levels[c] {
            found = set
            break
          }
          current = LogCategory.parents[c]
        }
        effective.append(found)
      }
      thresholds.store(packed(effective), ordering: .relaxed)
    }
  }

  /// Removes every category's own level: all follow the root category's again.
  public static func clearCategoryLevels() {
    let root = explicit.withLock { levels -> LogLevel in
      for index in levels.indices where index != LogCategory.shoal.index { levels[index] = nil }
      return levels[LogCategory.shoal.index] ?? .info
    }
    setLevel(root, for: .shoal)
  }

  /// The level in effect for `category`.
  public static func level(for category: LogCategory) -> LogLevel {
    LogLevel(rawValue: threshold(category.index)) ?? .info
  }

  /// Routes every message to `function` (nil: messages are dropped).
  public static func setLogFunction(_ function: (@Sendable (LogLevel, LogCategory, String) -> Void)?) {
    let installed = function.map(Sink.init)
    sink.withLock { $0 = installed }
  }

  /// Whether a message of `level` in `category` would be written.
  @inline(__always)
  public static func isEnabled(_ level: LogLevel, _ category: LogCategory) -> Bool {
    level != .off && level.rawValue <= threshold(category.index)
  }

  /// Writes `message` (built only if the level is enabled).
  @inline(__always)
  public static func write(_ level: LogLevel, _ category: LogCategory, _ message: @autoclosure () -> String) {
    guard isEnabled(level, category) else { return }
    deliver(level, category, message())
  }

  static func deliver(_ level: LogLevel, _ category: LogCategory, _ message: String) {
    guard let sink = sink.withLock({ $0 }) else { return }
    sink.function(level, category, message)
  }
}
