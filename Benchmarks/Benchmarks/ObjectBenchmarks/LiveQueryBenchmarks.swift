// Live queries over the 100k objects: what one modified object per commit costs an observer of
// a query whose results must stay up to date, in one process on both sides.
//
//   objects-live 100k / shoal
//       Three queries, each observed on a serial DispatchQueue (`observe(on:)`) on a copy of
//       the fixture of its own, measured interleaved (commits go to the three copies in turn,
//       a few at a time, the order rotating): `realm.objects(Item.self)` (unsorted), the
//       reference the others are compared with (the goal: within 1.2x of it); the same
//       objects sorted by price (sorted; no index on either side), kept up to date from the
//       commit's change records; and `price >= 500` (about half the objects) sorted by price
//       (filtered-sorted). One metric per query.
//   objects-live 100k sorted / grdb, objects-live 100k filtered-sorted / grdb
//       GRDB's `ValueObservation` of `ItemRecord.order(price)` (and filtered), which fetches
//       the query again after each commit (as GRDB's documentation shows, scheduled on a
//       serial DispatchQueue)
//
// Each iteration commits `liveCommits` times, each durably setting the price of one object
// (another each time) to a value that keeps it in every query's results, and waits for the
// observer's callback before the next commit. The figure, per commit: from just before
// `commitWrite` (GRDB: `pool.write`) to the start of the callback that reports it. Shoal's
// callback checks that the object is among the change set's insertions or modifications;
// GRDB's, that the fetched records hold its new price (a value without it, which a pool's
// observation fetches once after starting, is not a callback for the commit). Each side works on a copy of its
// fixture in $SHOAL_BENCH_DIR/work, removed in teardown.

import Benchmark
import Dispatch
import Foundation
import GRDB
import ObjectShared
import Shoal
import Synchronization

enum LiveShape {
  /// Commits (one modified object each) per iteration, of each query ...
  static let liveCommits = 20
  /// ... made to one query's file at a time, in blocks of this many (Shoal's side).
  static let liveBlock = 5
  /// The filtered queries keep the objects priced at least this.
  static let minimumPrice = 500.0
}

/// The query kinds of the live-query benchmarks.
enum LiveQuery: String, CaseIterable {
  case unsorted, sorted, filteredSorted = "filtered-sorted"
}

let liveCommitToCallbackMetric = BenchmarkMetric.custom(
  "live commit to callback (ns)", polarity: .prefersSmaller, useScalingFactor: false)

/// The price commit `seq` sets: at least `LiveShape.minimumPrice`, another one each time.
func livePrice(_ seq: Int) -> Double { LiveShape.minimumPrice + Double(seq % 49_999) / 100 }

/// The id of the object commit `seq` modifies.
func liveID(_ seq: Int) -> Int { objectData.ids[(seq &* 7_919) % objectData.ids.count] }

/// What an observer's callback reports to the committing thread.
final class LiveReport: Sendable {
  private struct State {
    var calledAt = 0
    var problem: String?
  }
  private let state = Mutex(State())
  private let arrived = DispatchSemaphore(value: 0)
  /// The id and price the callback must find (set before each commit; -1 before the first).
  let expected = Mutex((id: -1, price: 0.0))

  /// Notes when the callback that reports the commit started.
  func called(at time: Int = monotonicNanoseconds()) {
    state.withLock { $0.calledAt = time }
  }

  func finish(problem: String? = nil) {
    if let problem { state.withLock { $0.problem = problem } }
    arrived.signal()
  }

  /// Waits for the callback; when it started.
  func wait() throws -> Int {
    guard arrived.wait(timeout: .now() + 30) == .success else { throw BenchError("no callback within 30 s") }
    let (calledAt, problem) = state.withLock { ($0.calledAt, $0.problem) }
    if let problem { throw BenchError(problem) }
    return calledAt
  }
}

func monotonicNanoseconds() -> Int {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Int(ts.tv_sec) * 1_000_000_000 + Int(ts.tv_nsec)
}

/// A live query open on a copy of a side's fixture.
protocol LiveSession: AnyObject {
  /// Sets the price of `id` in a durable commit; returns the time just before the commit.
  func commit(id: Int, price: Double) throws -> Int
  func close() throws
}

/// A copy of `kind`'s fixture in work/<name>: its data files only.
func copyFixture(_ kind: ObjectEngineKind, _ name: String, files: [String]) throws -> String {
  let fixture = try ensureFixture(kind)
  let directory = try freshDirectory(workDirectory(name))
  for file in files where exists(fixture + "/" + file) {
    try FileManager.default.copyItem(atPath: fixture + "/" + file, toPath: directory + "/" + file)
  }
  return directory
}

final class ShoalLiveSession: LiveSession {
  let directory: String
  var realm: Realm?
  var token: NotificationToken?
  let queue = DispatchQueue(label: "objects-live observer")

  init(_ query: LiveQuery, report: LiveReport) throws {
    directory = try copyFixture(.shoal, "objects-live-\(query.rawValue)-shoal", files: ["items.realm"])
    let realm = try Realm(
      configuration: Realm.Configuration(
        fileURL: URL(fileURLWithPath: directory + "/items.realm"), objectTypes: [Item.self]))
    var results = realm.objects(Item.self)
    if query == .filteredSorted { results = results.filter("price >= %@", LiveShape.minimumPrice) }
    if query != .unsorted { results = results.sorted(byKeyPath: "price") }
    token = results.observe(on: queue) { change in
      switch change {
      case .initial:
        report.finish()
      case .update(let results, _, let insertions, let modifications):
        report.called()
        let expected = report.expected.withLock { $0 }
        let found = (insertions + modifications).contains { results[$0].id == expected.id }
        report.finish(problem: found ? nil : "the callback did not report object \(expected.id)")
      case .error(let error):
        report.finish(problem: "\(error)")
      }
    }
    self.realm = realm
  }

  func commit(id: Int, price: Double) throws -> Int {
    guard let realm else { throw BenchError("the Realm is closed") }
    realm.beginWrite()
    guard let item = realm.object(ofType: Item.self, forPrimaryKey: id) else {
      realm.cancelWrite()
      throw BenchError("no item \(id)")
    }
    item.price = price
    let before = monotonicNanoseconds()
    try realm.commitWrite()
    return before
  }

  func close() throws {
    token?.invalidate()
    token = nil
    realm = nil
    try removeTree(directory)
  }
}

final class GRDBLiveSession: LiveSession {
  let directory: String
  var pool: DatabasePool?
  var cancellable: AnyDatabaseCancellable?

  init(_ query: LiveQuery, report: LiveReport) throws {
    directory = try copyFixture(.grdb, "objects-live-\(query.rawValue)-grdb", files: ["items.sqlite"])
    var configuration = Configuration()
    configuration.prepareDatabase { db in
      try db.execute(sql: "PRAGMA synchronous = FULL")
      try db.execute(sql: "PRAGMA cache_size = -\(grdbCacheKiB)")
    }
    let pool = try DatabasePool(path: directory + "/items.sqlite", configuration: configuration)
    let price = Column("price")
    let request =
      query == .filteredSorted
      ? ItemRecord.filter(price >= LiveShape.minimumPrice).order(price) : ItemRecord.order(price)
    cancellable = ValueObservation.tracking { db in try request.fetchAll(db) }
      .start(
        in: pool, scheduling: .async(onQueue: DispatchQueue(label: "objects-live observer")),
        onError: { error in report.finish(problem: "\(error)") },
        onChange: { records in
          let calledAt = monotonicNanoseconds()
          let expected = report.expected.withLock { $0 }
          if expected.id < 0 {
            report.finish()  // the initial value
            return
          }
          // A DatabasePool observation may fetch again once after it starts, finding nothing
          // new: only the value holding the commit's price reports the commit.
          guard records.contains(where: { $0.id == expected.id && $0.price == expected.price }) else { return }
          report.called(at: calledAt)
          report.finish()
        })
    self.pool = pool
  }

  func commit(id: Int, price: Double) throws -> Int {
    guard let pool else { throw BenchError("the pool is closed") }
    let before = monotonicNanoseconds()
    try pool.write { db in try db.execute(sql: "UPDATE item SET price = ? WHERE id = ?", arguments: [price, id]) }
    return before
  }

  func close() throws {
    cancellable?.cancel()
    cancellable = nil
    pool = nil
    try removeTree(directory)
  }
}

/// A live-query benchmark's session and the number of its next commit.
final class LiveState {
  let report = LiveReport()
  var session: LiveSession?
  var seq = 0

  /// Commits the next modification and waits for its callback; the commit-to-callback time.
  func commitAndWait() throws -> Int {
    guard let session else { throw BenchError("no session") }
    let (id, price) = (liveID(seq), livePrice(seq))
    seq += 1
    report.expected.withLock { $0 = (id, price) }
    let before = try session.commit(id: id, price: price)
    return try report.wait() - before
  }
}

/// GRDB's live-query benchmark: `query` observed through a `ValueObservation`.
func grdbLiveQueryBenchmark(_ query: LiveQuery) {
  let state = LiveState()
  Benchmark(
    "objects-live 100k \(query.rawValue) / grdb",
    configuration: .init(
      metrics: [.wallClock, liveCommitToCallbackMetric], warmupIterations: 1, maxDuration: .seconds(20),
      maxIterations: 10)
  ) { benchmark in
    do {
      for _ in 0..<LiveShape.liveCommits {
        benchmark.measurement(liveCommitToCallbackMetric, try state.commitAndWait())
      }
    } catch {
      benchmark.error("objects-live \(query.rawValue) grdb: \(error)")
    }
  } setup: {
    state.session = try GRDBLiveSession(query, report: state.report)
    _ = try state.report.wait()  // the initial results
    _ = try state.commitAndWait()  // a first commit through the whole path
  } teardown: {
    try state.session?.close()
    state.session = nil
  }
}

extension LiveQuery {
  /// Shoal's commit -> callback metric for this query.
  var shoalMetric: BenchmarkMetric {
    .custom("live \(rawValue) commit to callback (ns)", polarity: .prefersSmaller, useScalingFactor: false)
  }
}

/// Shoal's live-query benchmark: the three queries side by side, interleaved. Each query is
/// observed on a copy of the fixture of its own; the commits go to the three copies in turn,
/// `liveBlock` at a time, the order rotating each round, so the sorted queries and their
/// unsorted reference are measured through the same minutes of disk load (a durable commit's
/// sync, most of the figure, drifts by several times over minutes here). Only the observer
/// of the file committed to is woken.
func shoalLiveQueryBenchmark() {
  let states = LiveQuery.allCases.map { ($0, LiveState()) }
  Benchmark(
    "objects-live 100k / shoal",
    configuration: .init(
      metrics: [.wallClock] + LiveQuery.allCases.map(\.shoalMetric), warmupIterations: 1,
      maxDuration: .seconds(30), maxIterations: 10)
  ) { benchmark in
    do {
      let block = LiveShape.liveBlock
      for round in 0..<(LiveShape.liveCommits / block) {
        for turn in 0..<states.count {
          let (query, state) = states[(round + turn) % states.count]
          for _ in 0..<block { benchmark.measurement(query.shoalMetric, try state.commitAndWait()) }
        }
      }
    } catch {
      benchmark.error("objects-live shoal: \(error)")
    }
  } setup: {
    for (query, state) in states {
      state.session = try ShoalLiveSession(query, report: state.report)
      _ = try state.report.wait()  // the initial results
      _ = try state.commitAndWait()  // a first commit through the whole path
    }
  } teardown: {
    for (_, state) in states {
      try state.session?.close()
      state.session = nil
    }
  }
}

/// The live-query benchmarks: Shoal's three queries interleaved, GRDB's two sorted ones.
func liveQueryBenchmarks() {
  shoalLiveQueryBenchmark()
  for query in LiveQuery.allCases where query != .unsorted { grdbLiveQueryBenchmark(query) }
}
