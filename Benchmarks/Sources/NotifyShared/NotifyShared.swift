// What NotificationBenchmarks and bench-peer's `observe` command (its other process) agree on:
// the model both open the file with, the shape of the workloads and the clock. The protocol
// between them is described in Sources/bench-peer/Observe.swift.

import Foundation
import Shoal

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The observed objects: `objectCount` of them are loaded before any benchmark starts; the
/// writer then modifies or inserts one per commit, saying which commit it was (`seq`) and when
/// it was about to commit (`stamp`).
public final class Quote: Object {
  @Persisted(primaryKey: true) public var id: Int
  /// The commit (numbered by the writer from 0) that last wrote this object; -1 for the load.
  @Persisted public var seq: Int
  /// `wallClockNanoseconds()` just before the writer called `commitWrite`; 0 for the load.
  @Persisted public var stamp: Int
  @Persisted public var price: Double
  @Persisted public var symbol: String
}

public enum NotifyShape {
  /// The objects the observed `Results` holds when the benchmarks start.
  public static let objectCount = 10_000
  /// Observed commits per iteration of the latency benchmark and per delivery path (one
  /// modified object each) ...
  public static let latencyCommits = 300
  /// ... made to one path's file at a time, in blocks of this many.
  public static let latencyBlock = 10
  /// Pause between two observed commits (after the callback was reported), in microseconds.
  public static let latencyPauseMicroseconds: UInt32 = 1_000
  /// Commits per iteration of the throughput benchmark (one inserted object each) ...
  public static let throughputCommits = 3_000
  /// ... paced at this rate (commit j is started at j / rate seconds, or at once when late).
  public static let commitsPerSecond = 1_000
  /// Objects frozen one after the other per iteration of the object-freeze benchmark.
  public static let frozenObjects = 10_000
  /// Realms frozen per iteration, each at a new version (after an unmeasured commit).
  public static let frozenRealms = 200
  /// Results of `objectCount` objects frozen per iteration.
  public static let frozenResults = 100
  /// Objects inserted by the throughput benchmark get ids from here (past the loaded ones).
  public static let insertedIDBase = 1_000_000
}

/// The Realm configuration of the benchmark file at `path`: only `Quote`, durable commits
/// (a Realm's only durability).
public func quoteConfiguration(_ path: String) -> Realm.Configuration {
  Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Quote.self])
}

/// The object of id `i` as loaded (unmanaged).
public func loadedQuote(_ i: Int) -> Quote {
  let quote = Quote()
  quote.id = i
  quote.seq = -1
  quote.stamp = 0
  quote.price = Double((i &* 7_919) % 100_000) / 100
  quote.symbol = "Q" + String(i)
  return quote
}

/// Nanoseconds since 1970 on CLOCK_REALTIME: the clock both processes read, and the engine's
/// commit and publish timestamps' clock (`Store.wallClock()`).
public func wallClockNanoseconds() -> Int {
  var ts = timespec()
  clock_gettime(CLOCK_REALTIME, &ts)
  return Int(ts.tv_sec) * 1_000_000_000 + Int(ts.tv_nsec)
}
