// Sync through PostgreSQL on loopback (bench.sh starts a private cluster and passes its URL in
// SHOAL_BENCH_PG_URL). Each benchmark uses a database of its own.
//
//   sync-latency / shoal        device A (a file of its own, its agent) commits one modified
//                               object; device B (another file, another agent, observing a Results
//                               on a queue) gets the callback: the "sync commit to callback (ns)"
//                               metric, per commit (p50, p99)
//   sync-upload 100k / shoal    100,000 new objects in one commit on a device, until the session's
//                               wait(for: .upload) returns (objects per second = 100k / time)
//   sync-bootstrap 100k / shoal a new device opening a file against a server holding 100,000 rows,
//                               until wait(for: .download) returns
//
// Devices here are files with agents of their own in this process: the path of a change is the
// same as between machines (outbox, upload transaction, trigger, NOTIFY, snapshot or change log,
// a local commit, the notification).

import Benchmark
import Dispatch
import Foundation
import Logging
import PostgresNIO
import Shoal
import ShoalSync
import Synchronization

final class SyncItem: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var title = ""
  @Persisted var value = 0
}

struct SyncBenchError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

enum SyncShape {
  static let latencyCommits = 200
  static let bulkObjects = 100_000
}

let commitToCallbackMetric = BenchmarkMetric.custom(
  "sync commit to callback (ns)", polarity: .prefersSmaller, useScalingFactor: false)

/// A new, empty database on the benchmark's server.
func freshServer() throws -> PostgresServer {
  guard let url = ProcessInfo.processInfo.environment["SHOAL_BENCH_PG_URL"] else {
    throw SyncBenchError("SHOAL_BENCH_PG_URL is not set: run the sync benchmarks through bench.sh")
  }
  let admin = try PostgresServer(url: url)
  let name = "bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
  try blocking {
    try await admin.withClient { client in
      try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: Logger(label: "bench"))
    }
  }
  var server = admin
  server.database = name
  return server
}

/// Runs `operation` to completion from this (non-cooperative) thread.
@discardableResult
func blocking<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
  let result = Mutex<Result<T, any Error>?>(nil)
  let done = DispatchSemaphore(value: 0)
  Task {
    let outcome: Result<T, any Error>
    do { outcome = .success(try await operation()) } catch { outcome = .failure(error) }
    result.withLock { $0 = outcome }
    done.signal()
  }
  done.wait()
  guard let outcome = result.withLock({ $0 }) else { throw SyncBenchError("no result") }
  return try outcome.get()
}

/// A device: a file of its own under the benchmark directory, synced with `server`.
func device(_ name: String, _ server: PostgresServer) throws -> Realm.Configuration {
  let base = ProcessInfo.processInfo.environment["SHOAL_BENCH_DIR"] ?? NSTemporaryDirectory()
  let directory = URL(fileURLWithPath: base).appendingPathComponent("work/sync-" + UUID().uuidString)
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  var configuration = Realm.Configuration(
    fileURL: directory.appendingPathComponent(name + ".realm"), objectTypes: [SyncItem.self])
  configuration.syncConfiguration = try SyncConfiguration(server: server, clientIdentifier: name)
  return configuration
}

func wait(_ configuration: Realm.Configuration, for direction: SyncSession.ProgressDirection) throws {
  let done = DispatchSemaphore(value: 0)
  let failure = Mutex<String?>(nil)
  guard let session = try Realm(configuration: configuration).syncSession else { throw SyncBenchError("not synced") }
  session.wait(for: direction) { error in
    failure.withLock { $0 = error.map { "\($0)" } }
    done.signal()
  }
  done.wait()
  if let message = failure.withLock({ $0 }) { throw SyncBenchError(message) }
}

func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

let benchmarks: @Sendable () -> Void = {
  Benchmark(
    "sync-latency / shoal",
    configuration: .init(
      metrics: [.wallClock, commitToCallbackMetric], warmupIterations: 0, maxDuration: .seconds(60),
      maxIterations: 1)
  ) { benchmark in
    do {
      let server = try freshServer()
      let (a, b) = (try device("a", server), try device("b", server))
      let realmA = try Realm(configuration: a)
      try realmA.write { realmA.add(SyncItem(value: ["id": 1, "title": "shared"])) }
      try wait(a, for: .upload)
      _ = try Realm(configuration: b)
      try wait(b, for: .download)
      // B's callback reports the value it sees; the commit on A waits for its own value.
      let seen = Mutex<(value: Int, at: UInt64)>((0, 0))
      let arrived = DispatchSemaphore(value: 0)
      let token = try Realm(configuration: b).objects(SyncItem.self).observe(on: DispatchQueue(label: "b")) { change in
        guard case .update(let items, _, _, _) = change, let item = items.first else { return }
        let value = item.value
        seen.withLock { $0 = (value, nanoseconds()) }
        arrived.signal()
      }
      defer { token.invalidate() }
      for value in 1...SyncShape.latencyCommits {
        let started = nanoseconds()
        try realmA.write { realmA.object(ofType: SyncItem.self, forPrimaryKey: 1)?.value = value }
        while true {
          guard arrived.wait(timeout: .now() + 30) == .success else {
            throw SyncBenchError("device B did not hear commit \(value) within 30 s")
          }
          let (latest, at) = seen.withLock { $0 }
          if latest >= value {
            benchmark.measurement(commitToCallbackMetric, Int(at - started))
            break
          }
        }
        usleep(2_000)
      }
    } catch {
      benchmark.error("sync-latency: \(error)")
    }
  }

  Benchmark(
    "sync-upload 100k / shoal",
    configuration: .init(metrics: [.wallClock], warmupIterations: 0, maxDuration: .seconds(120), maxIterations: 3)
  ) { benchmark in
    do {
      let server = try freshServer()
      let configuration = try device("uploader", server)
      let realm = try Realm(configuration: configuration)
      try wait(configuration, for: .upload)
      var next = 0
      for _ in benchmark.scaledIterations {
        let first = next
        next += SyncShape.bulkObjects
        benchmark.startMeasurement()
        try realm.write {
          for id in first..<(first + SyncShape.bulkObjects) {
            realm.add(SyncItem(value: ["id": id, "title": "item \(id)", "value": id % 100]))
          }
        }
        try wait(configuration, for: .upload)
        benchmark.stopMeasurement()
      }
    } catch {
      benchmark.error("sync-upload: \(error)")
    }
  }

  Benchmark(
    "sync-bootstrap 100k / shoal",
    configuration: .init(metrics: [.wallClock], warmupIterations: 0, maxDuration: .seconds(120), maxIterations: 3)
  ) { benchmark in
    do {
      let server = try freshServer()
      // The first device creates the tables; plain SQL fills them.
      let first = try device("first", server)
      _ = try Realm(configuration: first)
      try wait(first, for: .upload)
      try blocking {
        try await server.withClient { client in
          try await client.query(
            """
            INSERT INTO "SyncItem" (id, title, value)
            SELECT i, 'item ' || i, i % 100 FROM generate_series(1, \(SyncShape.bulkObjects)) i
            """, logger: Logger(label: "bench"))
        }
      }
      for _ in benchmark.scaledIterations {
        let configuration = try device("new", server)
        benchmark.startMeasurement()
        _ = try Realm(configuration: configuration)
        try wait(configuration, for: .download)
        benchmark.stopMeasurement()
        let count = try Realm(configuration: configuration).objects(SyncItem.self).count
        guard count == SyncShape.bulkObjects else { throw SyncBenchError("bootstrapped \(count) rows") }
        try Realm(configuration: configuration).syncSession?.suspend()
      }
    } catch {
      benchmark.error("sync-bootstrap: \(error)")
    }
  }
}
