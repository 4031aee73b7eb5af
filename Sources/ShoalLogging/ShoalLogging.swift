import Logging
import Shoal

/// Routes Shoal's log messages through swift-log, so a server's own `LogHandler` receives them.
///
/// ```swift
/// import ShoalLogging
/// ShoalLogging.bootstrap(Logging.Logger(label: "shoal"))
/// ```
///
/// Each message keeps its Shoal category as the `category` metadata value. Shoal's level for
/// the root category follows the swift-log logger's `logLevel` (`trace` maps to `.trace`, and
/// so on; `.detail` is logged as swift-log's `info`).
public enum ShoalLogging {
  /// Makes `logger` the destination of every Shoal log message.
  public static func bootstrap(_ logger: Logging.Logger) {
    Shoal.Logger.shared = Shoal.Logger(level: shoalLevel(logger.logLevel)) { level, category, message in
      logger.log(
        level: swiftLogLevel(level), "\(message)", metadata: ["category": .string(category.name)],
        source: "Shoal")
    }
  }

  /// Shoal's level for a swift-log level.
  public static func shoalLevel(_ level: Logging.Logger.Level) -> Shoal.Logger.Level {
    switch level {
    case .trace: return .trace
    case .debug: return .debug
    case .info: return .info
    case .notice: return .info
    case .warning: return .warn
    case .error: return .error
    case .critical: return .fatal
    }
  }

  /// swift-log's level for a Shoal level.
  public static func swiftLogLevel(_ level: Shoal.Logger.Level) -> Logging.Logger.Level {
    switch level {
    case .all, .trace: return .trace
    case .debug: return .debug
    case .detail, .info: return .info
    case .warn: return .warning
    case .error: return .error
    case .fatal, .off: return .critical
    }
  }
}
