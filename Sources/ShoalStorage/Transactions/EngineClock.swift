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
}
