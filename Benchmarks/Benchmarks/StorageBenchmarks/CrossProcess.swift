// The benchmarks about several processes and snapshots:
//
//   snapshots 100k / E         100,000 snapshots taken and released one after the other on the
//                              open 1M-entry database: Shoal beginRead() + close(), LMDB
//                              mdb_txn_begin(MDB_RDONLY) + mdb_txn_abort, SQLite (WAL) BEGIN, a
//                              one-row SELECT, COMMIT on prepared statements
//   snapshots-renew 100k / lmdb  the same with one LMDB read transaction, mdb_txn_renew +
//                              mdb_txn_reset
//   notify-latency / shoal     a bench-peer process commits one small entry at a time
//                              (durability .unsafe, so no fsync mixes in); this process is
//                              called back by a change listener. Per commit it records the
//                              time from the commit's publication (`lastPublishTimestamp`,
//                              taken in the peer) to the callback starting, and from just
//                              before the peer called `store.write` to the callback, as custom
//                              metrics whose percentiles bench-table prints. The next commit is
//                              asked for 1 ms after the callback, so the figure is wake-up
//                              latency, not queueing. (From the peer's commit *returning* is
//                              no measure: the woken listener often runs before the committer
//                              gets the CPU back, so it is mostly "before"; bench-table prints
//                              how often.) LMDB and SQLite cannot notify another process at
//                              all, so they have no such benchmark.
//   contended-commits-interleaved 4x250  per engine, 4 bench-peer processes, started on one
//                              `go` line, each make 250 durable single-entry commits to one
//                              fresh database at the same time (Shoal .full, LMDB default sync,
//                              SQLite WAL with synchronous=FULL and a busy timeout); time until
//                              the last is done. The engines take turns within each iteration
//                              (their order rotating), and each iteration appends
//                              "<engine>=<nanoseconds> …" to results/contended-interleaved.txt,
//                              which bench-table summarises.
//   contended-commits-interleaved-loaded 4x250  the same with 3 `bench-peer spin` processes
//                              (busy loops at nice 10, started in setup and stopped in teardown,
//                              running through every engine's turn) beside the writers: what
//                              other CPU load does to writers that wait for each other
//                              (results/contended-interleaved-loaded.txt).
//
// bench-peer is found next to this executable (bench.sh builds it) or at $SHOAL_BENCH_PEER
// (see `Peer` in Sources/BenchEngines/PeerProcess.swift). Peers are stopped in teardown, on any
// failure and at exit; a peer also exits by itself when its stdin closes or this process dies.

import BenchEngines
import Benchmark
import Dispatch
import Foundation
import ShoalStorage
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// MARK: - Snapshots

func snapshotBenchmark(_ kind: EngineKind) {
  let session = Session()
  let count = CrossProcessShape.snapshotCount
  Benchmark(
    "snapshots 100k / \(kind.rawValue)",
    configuration: .init(
      metrics: [.wallClock, .cpuTotal, .throughput],
      warmupIterations: 2, maxDuration: .seconds(3), maxIterations: 30)
  ) { benchmark in
    do {
      guard let engine = session.engine else { throw BenchError("no engine") }
      blackHole(try engine.snapshots(count))
    } catch {
      benchmark.error("snapshots \(kind.rawValue): \(error)")
    }
  } setup: {
    session.engine = try openEngine(kind, in: try ensureFixture(kind))
  } teardown: {
    session.close()
  }
}

func renewedSnapshotBenchmark() {
  let session = Session()
  let count = CrossProcessShape.snapshotCount
  Benchmark(
    "snapshots-renew 100k / lmdb",
    configuration: .init(
      metrics: [.wallClock, .cpuTotal, .throughput],
      warmupIterations: 2, maxDuration: .seconds(3), maxIterations: 30)
  ) { benchmark in
    do {
      guard let engine = session.engine, let sum = try engine.renewedSnapshots(count) else {
        throw BenchError("no LMDB engine")
      }
      blackHole(sum)
    } catch {
      benchmark.error("snapshots-renew lmdb: \(error)")
    }
  } setup: {
    session.engine = try openEngine(.lmdb, in: try ensureFixture(.lmdb))
  } teardown: {
    session.close()
  }
}

// MARK: - Notification latency

/// From the moment the peer's commit was published (`Store.lastPublishTimestamp`, taken in the
/// peer just before it wakes the waiters) to the callback starting in this process.
let publishToCallbackMetric = BenchmarkMetric.custom(
  "publish to callback (ns)", polarity: .prefersSmaller, useScalingFactor: false)
/// From just before the peer called `store.write` to the callback: the commit's own work
/// plus the notification, an upper bound.
let commitCallToCallbackMetric = BenchmarkMetric.custom(
  "commit call to callback (ns)", polarity: .prefersSmaller, useScalingFactor: false)

/// "<early> <observed>": of the observed commits, how many were called back before the
/// peer's `store.write` had returned (bench-table prints it).
func notifyEarlyResultPath() -> String { benchRoot + "/results/notify-early-shoal.txt" }

/// What the change listener saw, handed to the benchmark's thread.
final class Observations: Sendable {
  struct Seen {
    var version: UInt64
    var calledAt: UInt64
    var publishedAt: UInt64
  }
  private let seen = Mutex<[Seen]>([])
  private let arrived = DispatchSemaphore(value: 0)

  func add(_ observation: Seen) {
    seen.withLock { $0.append(observation) }
    arrived.signal()
  }

  /// The next observation, waiting `timeout` seconds at most.
  func next(timeout: Double) -> Seen? {
    guard arrived.wait(timeout: .now() + timeout) == .success else { return nil }
    return seen.withLock { $0.isEmpty ? nil : $0.removeFirst() }
  }

  /// Drops whatever arrived, waiting `settle` seconds for stragglers.
  func drain(settle: Double) {
    while next(timeout: settle) != nil {}
  }
}

final class NotifySession {
  var store: Store?
  var peer: Peer?
  var token: ChangeListenerToken?
  var directory: String?
  let observations = Observations()
  var next = 0
  /// Callbacks that started before the peer's `store.write` returned, of `observed`.
  var early = 0
  var observed = 0

  func close() {
    token?.invalidate()
    token = nil
    peer?.stop()
    peer = nil
    store?.close()
    store = nil
  }
}

func notifyLatencyBenchmark() {
  let session = NotifySession()
  Benchmark(
    "notify-latency / shoal",
    configuration: .init(
      metrics: [.wallClock, publishToCallbackMetric, commitCallToCallbackMetric],
      warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 6)
  ) { benchmark in
    do {
      guard let peer = session.peer else { throw BenchError("no peer") }
      for _ in 0..<CrossProcessShape.notifyCommits {
        let i = session.next
        session.next += 1
        try peer.send("c \(i)")
        let answer = try peer.expect("t", timeout: 10)
        guard answer.count == 5, Int(answer[1]) == i, let version = UInt64(answer[2]),
          let called = UInt64(answer[3]), let returned = UInt64(answer[4])
        else { throw BenchError("bad answer \(answer) to commit \(i)") }
        guard let seen = session.observations.next(timeout: 10) else {
          throw BenchError("no callback within 10 s for version \(version)")
        }
        guard seen.version == version else {
          throw BenchError("called back for version \(seen.version), expected \(version)")
        }
        session.observed += 1
        if seen.calledAt < returned { session.early += 1 }
        // The clock is CLOCK_REALTIME in both processes; a (rare) step backwards reads as 0.
        benchmark.measurement(publishToCallbackMetric, Int(seen.calledAt &- min(seen.publishedAt, seen.calledAt)))
        benchmark.measurement(commitCallToCallbackMetric, Int(seen.calledAt &- min(called, seen.calledAt)))
        usleep(CrossProcessShape.notifyPauseMicroseconds)
      }
    } catch {
      session.close()
      benchmark.error("notify-latency shoal: \(error)")
    }
  } setup: {
    do {
      let directory = try freshDirectory(workDirectory("notify"))
      session.directory = directory
      let path = directory + "/db.shoal"
      let store = try Store.open(path: path, options: StoreOptions(durability: .unsafe, cacheSize: engineCacheBytes))
      session.store = store
      try store.write { txn in try txn.ensureKeyspace(shoalKeyspace) }
      let peer = try Peer(["notify", path])
      session.peer = peer
      try peer.expect("ready", timeout: 60)
      let observations = session.observations
      session.token = store.addChangeListener { _, to in
        let calledAt = Store.wallClock()
        observations.add(.init(version: to, calledAt: calledAt, publishedAt: store.lastPublishTimestamp))
      }
      // The listener thread starts with the first listener and only reports commits after
      // the version it sees when it is running (a commit in between waits for the next one):
      // commit here until a callback shows that it runs.
      var primed = false
      for attempt in 0..<20 where !primed {
        try store.write { txn in try txn.put([0], forKey: [0xFF, UInt8(attempt)], in: shoalKeyspace) }
        primed = observations.next(timeout: 1) != nil
      }
      guard primed else { throw BenchError("the change listener never called back") }
      observations.drain(settle: 0.05)
    } catch {
      session.close()
      throw error
    }
  } teardown: {
    session.close()
    try makeDirectory(benchRoot + "/results")
    try "\(session.early) \(session.observed)\n".write(
      toFile: notifyEarlyResultPath(), atomically: true, encoding: .utf8)
    if let directory = session.directory { try removeTree(directory) }
  }
}

// MARK: - Contended commits

/// One engine's side of the contention benchmark: its database and its writer processes.
final class ContendedEngine {
  let kind: EngineKind
  let directory: String
  var peers: [Peer] = []
  /// What `Engine.scan()` must return once every round so far is committed.
  var expectedScan = 0

  init(kind: EngineKind, directory: String) {
    self.kind = kind
    self.directory = directory
  }
}

final class ContentionSession {
  var engines: [ContendedEngine] = []
  /// The busy loops of the loaded variant.
  var spinners: [Peer] = []
  var round = 0

  func stopPeers() {
    stopAll(engines.flatMap(\.peers) + spinners)
    for engine in engines { engine.peers = [] }
    spinners = []
  }
}

/// How many busy loops the loaded variant runs beside the writers.
let busyLoops = 3

/// Where the contention benchmark appends one line per iteration,
/// "<engine>=<nanoseconds for the round of all its writers> …".
func contendedResultPath(loaded: Bool) -> String {
  benchRoot + "/results/contended-interleaved\(loaded ? "-loaded" : "").txt"
}

/// Every engine's writers, in turn: an iteration runs one round of `writerProcesses` ×
/// `commitsPerWriter` durable commits on each engine's database, the engines' order rotating
/// each iteration. Measured one engine after the other, minutes apart, the machine's drift
/// (twice the throughput from one quarter of an hour to the next, for every engine alike)
/// landed on their ratio; interleaved, every engine meets the same machine.
func contendedCommitBenchmark(loaded: Bool = false) {
  let session = ContentionSession()
  let writers = CrossProcessShape.writerProcesses
  let count = CrossProcessShape.commitsPerWriter
  let name = "contended-commits-interleaved\(loaded ? "-loaded" : "") \(writers)x\(count)"
  Benchmark(
    name,
    configuration: .init(
      metrics: [.wallClock], warmupIterations: 1, maxDuration: .seconds(60), maxIterations: 9)
  ) { benchmark in
    do {
      let round = session.round
      session.round += 1
      var nanoseconds = [UInt64](repeating: 0, count: session.engines.count)
      // The tool's own wall clock includes the syncs between turns; bench-table uses the
      // engines' times. Nine iterations after the warm-up: each engine goes first three times.
      benchmark.startMeasurement()
      for step in session.engines.indices {
        let e = (round + step) % session.engines.count
        let side = session.engines[e]
        guard side.peers.count == writers else { throw BenchError("the \(side.kind.rawValue) writers are not running") }
        // What the previous engine left for the disk to write back is not this one's cost.
        settleDisk()
        let start = DispatchTime.now().uptimeNanoseconds
        for peer in side.peers { try peer.send("go \(round)") }
        for peer in side.peers {
          let done = try peer.expect("done", timeout: 300)
          guard done.count == 3, Int(done[1]) == count else { throw BenchError("\(peer.name): bad answer \(done)") }
        }
        nanoseconds[e] = DispatchTime.now().uptimeNanoseconds - start
      }
      benchmark.stopMeasurement()
      // Every commit of every round landed, and nothing else: each database holds exactly them.
      // (Checked here, not in teardown: a failing teardown stops the whole run.)
      for side in session.engines {
        for writer in 0..<writers {
          for j in 0..<count {
            let i = contentionEntryIndex(round: round, writer: writer, commit: j)
            let (key, value) = (benchKey(i), benchValue(i))
            side.expectedScan &+= key.count &+ Int(key[0]) &+ value.count &+ Int(value[0])
          }
        }
        let engine = try openEngine(side.kind, in: side.directory)
        defer { engine.close() }
        guard try engine.scan() == side.expectedScan else {
          throw BenchError(
            "after round \(round), the \(side.kind.rawValue) database does not hold exactly the commits made")
        }
      }
      // The first round is the warm-up iteration.
      guard round > 0 else { return }
      let line = zip(session.engines, nanoseconds).map { "\($0.kind.rawValue)=\($1)" }.joined(separator: " ")
      let path = contendedResultPath(loaded: loaded)
      if !exists(path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
      try handle.seekToEnd()
      try handle.write(contentsOf: Data((line + "\n").utf8))
      try handle.close()
    } catch {
      session.stopPeers()
      benchmark.error("\(name): \(error)")
    }
  } setup: {
    do {
      try removeTree(contendedResultPath(loaded: loaded))
      try makeDirectory((contendedResultPath(loaded: loaded) as NSString).deletingLastPathComponent)
      for kind in EngineKind.peers {
        let directory = try freshDirectory(workDirectory("contention-\(kind.rawValue)"))
        let engine = try openEngine(kind, in: directory)
        try engine.prepareForCommits()
        engine.close()
        let side = ContendedEngine(kind: kind, directory: directory)
        session.engines.append(side)
        for writer in 0..<writers {
          side.peers.append(try Peer(["commit", kind.rawValue, directory, "\(writer)", "\(count)"]))
        }
      }
      for peer in session.engines.flatMap(\.peers) { try peer.expect("ready", timeout: 60) }
      settleDisk()
      if loaded {
        session.spinners = try (0..<busyLoops).map { _ in try Peer(["spin"]) }
        for spinner in session.spinners { try spinner.expect("spinning", timeout: 60) }
      }
    } catch {
      session.stopPeers()
      throw error
    }
  } teardown: {
    session.stopPeers()
    for side in session.engines { try removeTree(side.directory) }
    session.engines = []
  }
}
