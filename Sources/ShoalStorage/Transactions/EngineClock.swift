#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The engine's clock: nanoseconds since 1970 (CLOCK_REALTIME), for commit and publish
/// timestamps, pin ages and waits. Shared by every process, so their timestamps compare.
enum EngineClock {
  static func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
  }

  /// `now()` to within a few milliseconds (CLOCK_REALTIME_COARSE), several times cheaper: for
  /// ages reported in seconds.
  static func coarseNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME_COARSE, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
  }

  /// `duration` in whole nanoseconds (0 for a negative one), at most `Int.max`.
  static func nanoseconds(_ duration: Duration) -> Int {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0 else { return 0 }
    let (product, overflow) = Int(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    return overflow ? Int.max : product.addingReportingOverflow(Int(attoseconds / 1_000_000_000)).partialValue
  }

  /// `duration` in seconds.
  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }
}
