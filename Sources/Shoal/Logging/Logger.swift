import Foundation
import ShoalStorage
import Synchronization

/// Where Shoal's log messages go (RealmSwift's `Logger`), with levels per category.
///
/// ```swift
/// Logger.shared = Logger(level: .debug) { level, category, message in
///   print("[\(level)] \(category): \(message)")
/// }
/// Logger.set(level: .trace, for: .transaction)   // descendants inherit it
/// ```
///
/// The default logger writes to standard error at `.info`. A message below the level in
/// effect for its category is never formatted.
public final class Logger: Sendable {
  /// RealmSwift's levels: `.off`, `.fatal`, `.error`, `.warn`, `.info`, `.detail`, `.debug`,
  /// `.trace`, `.all`.
  public typealias Level = LogLevel
  /// Shoal's categories: `.shoal`, `.storage`, `.transaction`, `.query`, `.object`,
  /// `.notification`, `.coordination` ("Shoal", "Shoal.Storage", "Shoal.Storage.Transaction", …).
  public typealias Category = LogCategory

  let function: @Sendable (Level, Category, String) -> Void
  private let storedLevel: Mutex<Level>

  /// A logger calling `logFunction` with each message at or above `level`.
  public init(level: Level, logFunction: @escaping @Sendable (Level, String) -> Void) {
    storedLevel = Mutex(level)
    function = { level, _, message in logFunction(level, message) }
  }

  /// A logger calling `logFunction` with each message and its category.
  public init(level: Level, logFunction: @escaping @Sendable (Level, Category, String) -> Void) {
    storedLevel = Mutex(level)
    function = logFunction
  }

  /// The level of the root category when this is the shared logger (descendants without a
  /// level of their own follow it).
  public var level: Level {
    get { storedLevel.withLock { $0 } }
    set {
      storedLevel.withLock { $0 = newValue }
      if Logger.state.withLock({ $0 === self }) { Log.setLevel(newValue, for: .shoal) }
    }
  }

  /// Logs `message` through this logger, if `level` is enabled for `category`.
  public func log(level: Level, message: @autoclosure () -> String, category: Category = .shoal) {
    // The shared logger follows the levels per category; another logger its own level.
    if Logger.state.withLock({ $0 !== self }) {
      guard level != .off, level.rawValue <= self.level.rawValue else { return }
      function(level, category, message())
      return
    }
    guard Log.isEnabled(level, category) else { return }
    function(level, category, message())
  }

  private static let state = Mutex<Logger?>(nil)

  /// The logger Shoal writes to. Setting it applies its level to the root category.
  public static var shared: Logger {
    get {
      if let logger = state.withLock({ $0 }) { return logger }
      let logger = Logger.standardError
      install(logger, ifNone: true)
      return state.withLock { $0 } ?? logger
    }
    set { install(newValue, ifNone: false) }
  }

  private static func install(_ logger: Logger, ifNone: Bool) {
    let installed = state.withLock { current -> Bool in
      if ifNone, current != nil { return false }
      current = logger
      return true
    }
    guard installed else { return }
    Log.setLevel(logger.level, for: .shoal)
    Log.setLogFunction(logger.function)
  }

  /// Installs the default logger unless one was set: Shoal calls this when a Realm opens.
  static func installDefault() { _ = shared }

  /// Sets the level of `category` and of its descendants without their own.
  public static func set(level: Level, for category: Category) {
    installDefault()
    Log.setLevel(level, for: category)
  }

  /// The level in effect for `category`.
  public static func level(for category: Category) -> Level { Log.level(for: category) }

  /// Writes each message to standard error, at `.info`.
  static var standardError: Logger {
    Logger(level: .info) { level, category, message in
      let stamp = ISO8601DateFormatter().string(from: Date())
      FileHandle.standardError.write(Data("\(stamp) \(category) \(level): \(message)\n".utf8))
    }
  }
}
