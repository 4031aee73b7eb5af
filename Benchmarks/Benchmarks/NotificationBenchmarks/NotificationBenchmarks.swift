// Shoal's object-layer notifications across processes, and the cost of freeze(), in the same run
// as the storage and object benchmarks. Every benchmark starts from a fresh Realm file holding
// 10,000 `Quote` objects (Sources/NotifyShared), written by this process with durable commits
// (a Realm's only durability: each commit ends with an fdatasync before it is published).
//
//   notify-objects-latency 10k / shoal
//       Three bench-peer processes (`observe … latency|latency-combine|latency-async`,
//       Sources/bench-peer/Observe.swift), each observing `realm.objects(Quote.self)` (10k
//       objects) of a file of its own: on a serial DispatchQueue (a callback), through
//       ShoalCombine (`changesetPublisher` subscribed on a serial queue, `sink`), and by
//       iterating the `changes()` async sequence. This process commits one modified object at
//       a time (its `seq`, `price` and `stamp`, the wall clock just before `commitWrite`) to
//       one of the files and waits until that file's peer reports the callback, then 1 ms
//       more, so the figures are wake-up-and-deliver latency, not queueing. The commits go to
//       the three files in turn, `latencyBlock` at a time, the order rotating each round: the
//       three paths are measured through the same minutes of load, so their ratio is what the
//       path costs, not what the disk did meanwhile. Per commit, on CLOCK_REALTIME in both
//       processes:
//         publish -> callback   from the engine's publish of the commit (its
//                               `lastPublishTimestamp`, taken in this process just before it
//                               wakes the waiters; read by the peer in its callback) to the
//                               callback starting in the peer: the notification's own latency,
//                               the issue's target (p50 <= 200 us); one metric per path, the
//                               publisher's and the sequence's goal within 1.2x the callback's
//       and for the callback path also:
//         return -> callback    from `commitWrite` returning here to the callback; 0 when the
//                               callback started first (counted, printed by bench-table)
//         stamp -> callback     from the `stamp` carried in the object (just before
//                               `commitWrite`) to the callback: includes the commit and its fsync
//       The peers check nothing; this process checks that each callback reports exactly the one
//       modified object of the commit it waited for.
//   notify-objects-throughput 3k at 1k/s / shoal
//       The peer (`observe … count`) counts the updates while this process inserts one object
//       per commit (so the results grow from 10k to 13k objects; the insertions are deleted
//       again, unmeasured, before the next iteration), paced at 1,000 commits a second (commit j starts j ms after the first, or at
//       once when late). Then it waits until the peer has seen every inserted object's `seq`
//       (5 s without progress ends the wait). Totals over all iterations go to
//       results/notify-throughput-shoal.txt for bench-table: callbacks per second of writing,
//       commits per callback, and whether any change was lost (the inserted objects reported
//       must hold exactly the `seq`s committed, and the insertions reported must sum to the
//       commits).
//   freeze-object 10k / shoal      `object.freeze()` of each of the 10k live objects, one after
//                                  the other (the frozen Realm of the version is cached, as in
//                                  RealmSwift, so this is the object's own cost)
//   freeze-realm 200 / shoal       `realm.freeze()` right after a commit, so each is the first
//                                  freeze of a new version; each freeze is timed on its own
//                                  (the commits are not), as a custom metric
//   freeze-realm-again 10k / shoal `realm.freeze()` at one version, again and again (cached)
//   freeze-results 100 / shoal     `realm.objects(Quote.self).freeze()` (10k objects), which
//                                  evaluates the results in the frozen Realm
//
// LMDB, SQLite and GRDB have no way to tell another process about a commit (nor frozen
// objects), so they have no such benchmarks. Databases live under $SHOAL_BENCH_DIR/work
// (default /tmp/shoal-bench) and are removed in teardown.

import BenchEngines
import Benchmark
import Foundation
import NotifyShared
import Shoal

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// MARK: - Places

let benchRoot: String = {
  let env = ProcessInfo.processInfo.environment["SHOAL_BENCH_DIR"] ?? ""
  return env.isEmpty ? "/tmp/shoal-bench" : env
}()

func workDirectory(_ name: String) -> String { benchRoot + "/work/" + name }
func resultPath(_ name: String) -> String { benchRoot + "/results/" + name }

func removeTree(_ path: String) throws {
  if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
}

func makeDirectory(_ path: String) throws {
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
}

/// An empty directory at `path` (whatever was there is removed).
func freshDirectory(_ path: String) throws -> String {
  try removeTree(path)
  try makeDirectory(path)
  return path
}

func writeResult(_ name: String, _ text: String) throws {
  try makeDirectory(benchRoot + "/results")
  try (text + "\n").write(toFile: resultPath(name), atomically: true, encoding: .utf8)
}

/// Nanoseconds on the monotonic clock (for timing one operation).
func monotonicNanoseconds() -> Int {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Int(ts.tv_sec) * 1_000_000_000 + Int(ts.tv_nsec)
}

// MARK: - The Realm

/// A benchmark's Realm file and what its iterations share.
final class Session {
  var directory: String?
  var realm: Realm?
  var peer: Peer?
  /// The `seq` of the next commit.
  var next = 0

  func open() throws -> Realm {
    guard let realm else { throw BenchError("the Realm is not open") }
    return realm
  }

  func connected() throws -> Peer {
    guard let peer else { throw BenchError("the observing process is not running") }
    return peer
  }

  /// A fresh file in work/<name> holding the loaded objects, open in this process.
  func create(_ name: String) throws {
    let directory = try freshDirectory(workDirectory(name))
    self.directory = directory
    let realm = try Realm(configuration: quoteConfiguration(directory + "/quotes.realm"))
    let loaded = (0..<NotifyShape.objectCount).map(loadedQuote)
    try realm.write { realm.add(loaded) }
    guard realm.objects(Quote.self).count == NotifyShape.objectCount else {
      throw BenchError("loaded \(realm.objects(Quote.self).count) objects, expected \(NotifyShape.objectCount)")
    }
    self.realm = realm
  }

  var path: String { (directory ?? "") + "/quotes.realm" }

  /// Starts the observing process in `mode` and waits until it has its initial results.
  func startObserver(_ mode: String) throws {
    let peer = try Peer(["observe", path, mode])
    self.peer = peer
    let ready = try peer.expect("ready", timeout: 60)
    guard ready.count == 2, Int(ready[1]) == NotifyShape.objectCount else {
      throw BenchError("the observer started with \(ready), expected ready \(NotifyShape.objectCount)")
    }
  }

  func close() throws {
    peer?.stop()
    peer = nil
    // Like RealmSwift, no close: the file closes with the last Realm instance and object.
    realm = nil
    if let directory { try removeTree(directory) }
    directory = nil
  }
}

// MARK: - Latency

let publishToCallbackMetric = BenchmarkMetric.custom(
  "objects publish to callback (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let returnToCallbackMetric = BenchmarkMetric.custom(
  "objects commit return to callback (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let stampToCallbackMetric = BenchmarkMetric.custom(
  "objects commit call to callback (ns)", polarity: .prefersSmaller, useScalingFactor: false)
/// How long the writer's `commitWrite` (or `realm.write`) took, here.
let commitMetric = BenchmarkMetric.custom("commit (ns)", polarity: .prefersSmaller, useScalingFactor: false)

final class LatencySession {
  /// Callbacks that started before `commitWrite` had returned here, of `observed`.
  var early = 0
  var observed = 0
}

/// Modifies the object of commit `seq` in a commit of its own; returns when `commitWrite`
/// returned (wall clock) and how long it took.
func commitModification(_ realm: Realm, seq: Int) throws -> (returned: Int, took: Int) {
  let id = (seq &* 7_919) % NotifyShape.objectCount
  realm.beginWrite()
  guard let quote = realm.object(ofType: Quote.self, forPrimaryKey: id) else {
    realm.cancelWrite()
    throw BenchError("no Quote \(id)")
  }
  quote.seq = seq
  quote.price = Double(seq % 100_000) / 100
  let stamp = wallClockNanoseconds()
  quote.stamp = stamp
  try realm.commitWrite()
  let returned = wallClockNanoseconds()
  return (returned, returned - stamp)
}

/// The peer's report of the callback for commit `seq`: (publish->callback, stamp->callback,
/// callback time), after checking that it reports exactly that commit's one modified object.
func awaitCallback(_ peer: Peer, seq: Int) throws -> (publish: Int, stamp: Int, calledAt: Int) {
  let u = try peer.expect("u", timeout: 10)
  guard u.count == 8, let seen = Int(u[1]), let publish = Int(u[2]), let stamp = Int(u[3]),
    let calledAt = Int(u[4])
  else { throw BenchError("bad report \(u)") }
  guard seen == seq, u[5] == "0", u[6] == "0", u[7] == "1" else {
    throw BenchError("commit \(seq) (one modified object) was reported as \(u.joined(separator: " "))")
  }
  return (publish, stamp, calledAt)
}

/// The three ways an observer can be told, each measured on a file of its own by an observer
/// process of its own: a callback on a queue (`latency`), ShoalCombine's `changesetPublisher`
/// subscribed on a queue (`latency-combine`) and the `changes()` async sequence
/// (`latency-async`).
enum DeliveryPath: String, CaseIterable {
  case callback = "latency"
  case combine = "latency-combine"
  case async = "latency-async"

  /// The publish -> callback metric of the path (the callback's keeps its original name).
  var publishMetric: BenchmarkMetric {
    switch self {
    case .callback: return publishToCallbackMetric
    case .combine: return combinePublishToCallbackMetric
    case .async: return asyncPublishToCallbackMetric
    }
  }
}

let combinePublishToCallbackMetric = BenchmarkMetric.custom(
  "combine publish to callback (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let asyncPublishToCallbackMetric = BenchmarkMetric.custom(
  "async publish to callback (ns)", polarity: .prefersSmaller, useScalingFactor: false)

/// The latency benchmark: the three delivery paths side by side, interleaved. Each path has
/// its own file (the same 10k objects) and observer process; the commits go to the three
/// files in turn, `latencyBlock` at a time, the order rotating each round, so every path
/// is measured through the same minutes of disk and CPU load (this machine's syncs drift by
/// several times over minutes). Only the observer of the file committed to wakes.
func latencyBenchmark() {
  let state = LatencySession()
  let sessions = DeliveryPath.allCases.map { ($0, Session()) }
  Benchmark(
    "notify-objects-latency 10k / shoal",
    configuration: .init(
      metrics: [
        .wallClock, publishToCallbackMetric, combinePublishToCallbackMetric, asyncPublishToCallbackMetric,
        returnToCallbackMetric, stampToCallbackMetric, commitMetric,
      ],
      warmupIterations: 1, maxDuration: .seconds(30), maxIterations: 6)
  ) { benchmark in
    do {
      let block = NotifyShape.latencyBlock
      for round in 0..<(NotifyShape.latencyCommits / block) {
        for turn in 0..<sessions.count {
          let (path, session) = sessions[(round + turn) % sessions.count]
          let (realm, peer) = (try session.open(), try session.connected())
          for _ in 0..<block {
            let seq = session.next
            session.next += 1
            let (returned, took) = try commitModification(realm, seq: seq)
            let seen = try awaitCallback(peer, seq: seq)
            // CLOCK_REALTIME in both processes; a (rare) step backwards reads as 0.
            benchmark.measurement(path.publishMetric, max(0, seen.publish))
            if path == .callback {
              state.observed += 1
              if seen.calledAt < returned { state.early += 1 }
              benchmark.measurement(returnToCallbackMetric, max(0, seen.calledAt - returned))
              benchmark.measurement(stampToCallbackMetric, max(0, seen.stamp))
              benchmark.measurement(commitMetric, took)
            }
            usleep(NotifyShape.latencyPauseMicroseconds)
          }
        }
      }
    } catch {
      for (_, session) in sessions { try? session.close() }
      benchmark.error("notify-objects-latency: \(error)")
    }
  } setup: {
    do {
      for (path, session) in sessions {
        try session.create("notify-objects-latency-\(path.rawValue)")
        try session.startObserver(path.rawValue)
        // A few commits through the whole path (the peer's first refresh is its slowest).
        let realm = try session.open()
        for _ in 0..<3 {
          let seq = session.next
          session.next += 1
          _ = try commitModification(realm, seq: seq)
          _ = try awaitCallback(try session.connected(), seq: seq)
        }
      }
    } catch {
      for (_, session) in sessions { try? session.close() }
      throw error
    }
  } teardown: {
    for (_, session) in sessions { try session.close() }
    try writeResult("notify-objects-early-shoal.txt", "\(state.early) \(state.observed)")
  }
}

// MARK: - Throughput

let callbacksMetric = BenchmarkMetric.custom("callbacks (#)", polarity: .prefersLarger, useScalingFactor: false)
let lostMetric = BenchmarkMetric.custom("changes lost (#)", polarity: .prefersSmaller, useScalingFactor: false)

/// The throughput benchmark's totals over its iterations (written for bench-table).
struct ThroughputTotals {
  var iterations = 0
  var commits = 0
  /// Seconds from the first commit's start to the last commit's return, summed.
  var writingSeconds = 0.0
  var callbacks = 0
  var insertions = 0
  var deletions = 0
  var modifications = 0
  /// Distinct `seq`s of the committed ones that the reported insertions held.
  var delivered = 0
  var outOfRange = 0
  var repeated = 0

  var line: String {
    "iterations=\(iterations) commits=\(commits) writing_seconds=\(writingSeconds) callbacks=\(callbacks) "
      + "insertions=\(insertions) deletions=\(deletions) modifications=\(modifications) delivered=\(delivered) "
      + "out_of_range=\(outOfRange) repeated=\(repeated)"
  }
}

final class ThroughputSession {
  let session = Session()
  var totals = ThroughputTotals()
}

func throughputBenchmark() {
  let state = ThroughputSession()
  let commits = NotifyShape.throughputCommits
  let interval = 1.0 / Double(NotifyShape.commitsPerSecond)
  Benchmark(
    "notify-objects-throughput 3k at 1k/s / shoal",
    configuration: .init(
      metrics: [.wallClock, callbacksMetric, lostMetric, commitMetric],
      warmupIterations: 0, maxDuration: .seconds(20), maxIterations: 3)
  ) { benchmark in
    do {
      let session = state.session
      let (realm, peer) = (try session.open(), try session.connected())
      // Each iteration starts from the loaded objects: the previous one's insertions go, and
      // the observer has reported that before the tally starts.
      try realm.write { realm.delete(realm.objects(Quote.self).filter("id >= %@", NotifyShape.insertedIDBase)) }
      try peer.send("settle \(NotifyShape.objectCount)")
      let settled = try peer.expect("settled", timeout: 30)
      guard settled.count == 2, Int(settled[1]) == NotifyShape.objectCount else {
        throw BenchError("the observer did not come back to \(NotifyShape.objectCount) objects: \(settled)")
      }
      try peer.send("begin")
      try peer.expect("begun", timeout: 10)
      let first = session.next
      let start = monotonicSeconds()
      for j in 0..<commits {
        let due = start + Double(j) * interval
        let early = due - monotonicSeconds()
        if early > 0 { usleep(UInt32(early * 1e6)) }
        let seq = first + j
        let quote = Quote()
        quote.id = NotifyShape.insertedIDBase + seq
        quote.seq = seq
        quote.price = Double(seq % 100_000) / 100
        quote.symbol = "N" + String(seq)
        let stamp = wallClockNanoseconds()
        quote.stamp = stamp
        try realm.write { realm.add(quote) }
        benchmark.measurement(commitMetric, wallClockNanoseconds() - stamp)
      }
      let writing = monotonicSeconds() - start
      session.next = first + commits
      try peer.send("end \(first) \(commits)")
      let tally = try peer.expect("tally", timeout: 120)
      let numbers = tally.dropFirst().compactMap { Int($0) }
      guard numbers.count == 9 else { throw BenchError("bad tally \(tally)") }
      var totals = state.totals
      totals.iterations += 1
      totals.commits += commits
      totals.writingSeconds += writing
      totals.callbacks += numbers[0]
      totals.insertions += numbers[1]
      totals.deletions += numbers[2]
      totals.modifications += numbers[3]
      totals.delivered += numbers[4]
      totals.outOfRange += numbers[5]
      totals.repeated += numbers[6]
      state.totals = totals
      benchmark.measurement(callbacksMetric, numbers[0])
      benchmark.measurement(lostMetric, commits - numbers[4])
    } catch {
      try? state.session.close()
      benchmark.error("notify-objects-throughput: \(error)")
    }
  } setup: {
    do {
      try state.session.create("notify-objects-throughput")
      try state.session.startObserver("count")
    } catch {
      try? state.session.close()
      throw error
    }
  } teardown: {
    try state.session.close()
    try writeResult("notify-throughput-shoal.txt", state.totals.line)
  }
}

// MARK: - freeze()

/// The first freeze of a new version, timed on its own.
let freezeMetric = BenchmarkMetric.custom("freeze (ns)", polarity: .prefersSmaller, useScalingFactor: false)

/// A freeze benchmark on a fresh 10k-object file: `prepare` runs in setup (once, after the
/// file is filled), `body` once per iteration.
func freezeBenchmark(
  _ name: String, metrics: [BenchmarkMetric] = [.wallClock, .cpuTotal, .throughput], maxIterations: Int,
  prepare: @escaping (Realm) throws -> Void = { _ in },
  _ body: @escaping (Benchmark, Realm) throws -> Void
) {
  let session = Session()
  Benchmark(
    "\(name) / shoal",
    configuration: .init(metrics: metrics, warmupIterations: 1, maxDuration: .seconds(5), maxIterations: maxIterations)
  ) { benchmark in
    do {
      try body(benchmark, try session.open())
    } catch {
      benchmark.error("\(name): \(error)")
    }
  } setup: {
    try session.create(name.split(separator: " ").first.map(String.init) ?? name)
    try prepare(try session.open())
  } teardown: {
    try session.close()
  }
}

/// The live objects the object-freeze benchmark freezes (read once in its setup).
final class LiveObjects {
  var quotes: [Quote] = []
}

func freezeBenchmarks() {
  let live = LiveObjects()
  freezeBenchmark(
    "freeze-object 10k", maxIterations: 50,
    prepare: { realm in
      live.quotes = Array(realm.objects(Quote.self))
      guard live.quotes.count == NotifyShape.frozenObjects else { throw BenchError("\(live.quotes.count) objects") }
      // Each frozen copy is the same object in the version's frozen Realm.
      for quote in live.quotes.prefix(100) {
        let frozen = quote.freeze()
        guard frozen.isFrozen, frozen.id == quote.id, frozen.price == quote.price else {
          throw BenchError("the frozen copy of Quote \(quote.id) differs")
        }
      }
    }
  ) { _, _ in
    for quote in live.quotes { blackHole(quote.freeze()) }
  }

  freezeBenchmark("freeze-realm 200", metrics: [.wallClock, freezeMetric], maxIterations: 20) { benchmark, realm in
    let base = 2 * NotifyShape.insertedIDBase
    for j in 0..<NotifyShape.frozenRealms {
      try realm.write { realm.object(ofType: Quote.self, forPrimaryKey: j)?.seq = base + j }
      let start = monotonicNanoseconds()
      let frozen = realm.freeze()
      let elapsed = monotonicNanoseconds() - start
      benchmark.measurement(freezeMetric, elapsed)
      // The frozen Realm is at the version just committed.
      guard frozen.isFrozen, frozen.object(ofType: Quote.self, forPrimaryKey: j)?.seq == base + j else {
        throw BenchError("the frozen Realm does not show commit \(j)")
      }
    }
  }

  freezeBenchmark("freeze-realm-again 10k", maxIterations: 50) { _, realm in
    for _ in 0..<10_000 { blackHole(realm.freeze()) }
  }

  freezeBenchmark(
    "freeze-results 100", maxIterations: 30,
    prepare: { realm in
      let frozen = realm.objects(Quote.self).freeze()
      guard frozen.isFrozen, frozen.count == NotifyShape.objectCount else {
        throw BenchError("the frozen results hold \(frozen.count) objects")
      }
    }
  ) { _, realm in
    let results = realm.objects(Quote.self)
    for _ in 0..<NotifyShape.frozenResults { blackHole(results.freeze()) }
  }
}

let benchmarks: @Sendable () -> Void = {
  latencyBenchmark()
  throughputBenchmark()
  freezeBenchmarks()
}
