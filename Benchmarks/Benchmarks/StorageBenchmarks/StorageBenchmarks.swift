// Shoal against LMDB and SQLite on the same data, in the same run:
//
//   bulk-load 1M        1,000,000 entries (16-byte keys in random order, 100-byte text values)
//                       put in ONE transaction and committed durably; also records the file size
//   point-reads 100k    100,000 point reads of existing keys in random order, warm cache
//   full-scan 1M        every entry in key order, touching each key and value
//   durable-commits 1k  1,000 single-entry transactions, each committed durably, into the
//                       1M-entry database
//   durable-commits-interleaved 1k  the same for every engine at once, interleaved in blocks
//                       of 100 commits; see Interleaved.swift
//   snapshots 100k      100,000 snapshots taken and released on the open 1M-entry database
//                       (and LMDB's reset/renew variant); see CrossProcess.swift
//   notify-latency      another process commits, this one is called back (Shoal only: LMDB
//                       and SQLite cannot notify another process); see CrossProcess.swift
//   contended-commits-interleaved  4 processes making durable single-entry commits to one
//                       database at once, every engine in turn; see CrossProcess.swift
//
// The first four also run on an encrypted Shoal file ("shoal-encrypted", `benchEncryptionKey`),
// to compare it with the plain one.
//
// Each benchmark runs in a process of its own (that is how the benchmark tool works). The
// databases live under $SHOAL_BENCH_DIR (default /tmp/shoal-bench): the first bulk load of each
// engine is kept as that engine's fixture for the read and commit benchmarks (built on demand
// when those run alone), and each bulk load writes the file size it produced to
// results/filesize-<engine>.txt for bench-table.

import BenchEngines
import Benchmark
import Foundation

// MARK: - Places

let benchRoot: String = {
  let env = ProcessInfo.processInfo.environment["SHOAL_BENCH_DIR"] ?? ""
  return env.isEmpty ? "/tmp/shoal-bench" : env
}()

func fixtureDirectory(_ kind: EngineKind) -> String { benchRoot + "/fixtures/" + kind.rawValue }
func workDirectory(_ name: String) -> String { benchRoot + "/work/" + name }
func fileSizeResultPath(_ kind: EngineKind) -> String { benchRoot + "/results/filesize-\(kind.rawValue).txt" }

func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

func removeTree(_ path: String) throws {
  if exists(path) { try FileManager.default.removeItem(atPath: path) }
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

func recordFileSize(_ kind: EngineKind, _ bytes: Int) throws {
  let path = fileSizeResultPath(kind)
  try makeDirectory((path as NSString).deletingLastPathComponent)
  try "\(bytes)\n".write(toFile: path, atomically: true, encoding: .utf8)
}

let fixtureMarker = "complete"

/// Keeps the database just bulk-loaded in `directory` as the engine's fixture when there is
/// none yet; removes it otherwise.
func keepAsFixture(_ kind: EngineKind, _ directory: String) throws {
  let fixture = fixtureDirectory(kind)
  if exists(fixture + "/" + fixtureMarker) {
    try removeTree(directory)
    return
  }
  try removeTree(fixture)
  try makeDirectory((fixture as NSString).deletingLastPathComponent)
  try FileManager.default.moveItem(atPath: directory, toPath: fixture)
  guard FileManager.default.createFile(atPath: fixture + "/" + fixtureMarker, contents: nil) else {
    throw BenchError("cannot create \(fixture)/\(fixtureMarker)")
  }
}

/// The directory of the engine's 1M-entry database, bulk-loading it first if needed.
func ensureFixture(_ kind: EngineKind) throws -> String {
  let fixture = fixtureDirectory(kind)
  if exists(fixture + "/" + fixtureMarker) { return fixture }
  let directory = try freshDirectory(workDirectory("fixture-\(kind.rawValue)"))
  let engine = try openEngine(kind, in: directory)
  try engine.bulkLoad(dataset)
  engine.close()
  if !exists(fileSizeResultPath(kind)) {
    try recordFileSize(kind, engine.dataFiles.map(fileSize).reduce(0, +))
  }
  try keepAsFixture(kind, directory)
  return fixture
}

/// Writes every dirty page of the machine back (`sync(2)`) before a benchmark measures syncs:
/// otherwise the fixture just copied (or the previous engine's, 180 MiB for LMDB) is written
/// back during the measurement, and its sync time lands on whichever engine runs next.
func settleDisk() {
  sync()
}

// MARK: - Benchmarks

/// The engine a benchmark's setup opened, for its iterations and teardown.
final class Session {
  var engine: Engine?
  var round = 0
  var directory: String?

  func close() {
    engine?.close()
    engine = nil
  }
}

let fileSizeMetric = BenchmarkMetric.custom("file size (bytes)", polarity: .prefersSmaller, useScalingFactor: false)

func bulkLoadBenchmark(_ kind: EngineKind) {
  Benchmark(
    "bulk-load 1M / \(kind.rawValue)",
    configuration: .init(
      metrics: [.wallClock, .cpuTotal, .throughput, fileSizeMetric],
      warmupIterations: 0, maxDuration: .seconds(60), maxIterations: 3)
  ) { benchmark in
    do {
      let directory = try freshDirectory(workDirectory("bulk-\(kind.rawValue)"))
      let engine = try openEngine(kind, in: directory)
      benchmark.startMeasurement()
      try engine.bulkLoad(dataset)
      benchmark.stopMeasurement()
      engine.close()
      let size = engine.dataFiles.map(fileSize).reduce(0, +)
      benchmark.measurement(fileSizeMetric, size)
      try recordFileSize(kind, size)
      try keepAsFixture(kind, directory)
    } catch {
      benchmark.error("bulk-load \(kind.rawValue): \(error)")
    }
  } setup: {
    _ = dataset  // generated before the first measured iteration
  }
}

func pointReadBenchmark(_ kind: EngineKind) {
  let session = Session()
  Benchmark(
    "point-reads 100k / \(kind.rawValue)",
    configuration: .init(
      metrics: [.wallClock, .cpuTotal, .throughput],
      warmupIterations: 2, maxDuration: .seconds(5), maxIterations: 30)
  ) { benchmark in
    do {
      guard let engine = session.engine else { throw BenchError("no engine") }
      let sum = try engine.pointReads(dataset)
      if sum != dataset.expectedReadSum { throw BenchError("point reads read the wrong values") }
    } catch {
      benchmark.error("point-reads \(kind.rawValue): \(error)")
    }
  } setup: {
    let engine = try openEngine(kind, in: try ensureFixture(kind))
    session.engine = engine
    // Warm-up pass (checked): one full scan and one pass of the point reads.
    guard try engine.scan() == dataset.expectedScanSum, try engine.pointReads(dataset) == dataset.expectedReadSum
    else { throw BenchError("\(kind.rawValue): the fixture does not hold the dataset") }
  } teardown: {
    session.close()
  }
}

func scanBenchmark(_ kind: EngineKind) {
  let session = Session()
  Benchmark(
    "full-scan 1M / \(kind.rawValue)",
    configuration: .init(
      metrics: [.wallClock, .cpuTotal, .throughput],
      warmupIterations: 1, maxDuration: .seconds(8), maxIterations: 15)
  ) { benchmark in
    do {
      guard let engine = session.engine else { throw BenchError("no engine") }
      if try engine.scan() != dataset.expectedScanSum { throw BenchError("the scan saw the wrong entries") }
    } catch {
      benchmark.error("full-scan \(kind.rawValue): \(error)")
    }
  } setup: {
    let engine = try openEngine(kind, in: try ensureFixture(kind))
    session.engine = engine
    guard try engine.scan() == dataset.expectedScanSum else {
      throw BenchError("\(kind.rawValue): the fixture does not hold the dataset")
    }
  } teardown: {
    session.close()
  }
}

func durableCommitBenchmark(_ kind: EngineKind) {
  let session = Session()
  let count = DatasetShape.commitCount
  Benchmark(
    "durable-commits 1k / \(kind.rawValue)",
    configuration: .init(
      metrics: [.wallClock, .cpuTotal, .throughput],
      warmupIterations: 1, maxDuration: .seconds(15), maxIterations: 5)
  ) { benchmark in
    do {
      guard let engine = session.engine else { throw BenchError("no engine") }
      // New keys each round, past the bulk-loaded ones; built before the measurement.
      let first = DatasetShape.entryCount + session.round * count
      session.round += 1
      let keys = (first..<first + count).map(benchKey)
      let values = (first..<first + count).map(benchValue)
      benchmark.startMeasurement()
      for j in 0..<count {
        try engine.commitOne(key: keys[j], value: values[j])
      }
      benchmark.stopMeasurement()
    } catch {
      benchmark.error("durable-commits \(kind.rawValue): \(error)")
    }
  } setup: {
    // A copy of the 1M-entry fixture, so the commits go into a full-size tree.
    let fixture = try ensureFixture(kind)
    let directory = workDirectory("commits-\(kind.rawValue)")
    try removeTree(directory)
    try makeDirectory((directory as NSString).deletingLastPathComponent)
    try FileManager.default.copyItem(atPath: fixture, toPath: directory)
    settleDisk()
    session.directory = directory
    session.engine = try openEngine(kind, in: directory)
  } teardown: {
    session.close()
    if let directory = session.directory { try removeTree(directory) }
  }
}

let benchmarks: @Sendable () -> Void = {
  for kind in EngineKind.allCases {
    bulkLoadBenchmark(kind)
    pointReadBenchmark(kind)
    scanBenchmark(kind)
    durableCommitBenchmark(kind)
  }
  // Encrypted Shoal is compared with plain Shoal on the four workloads above only.
  for kind in EngineKind.peers {
    snapshotBenchmark(kind)
  }
  contendedCommitBenchmark()
  contendedCommitBenchmark(loaded: true)
  interleavedCommitBenchmark()
  renewedSnapshotBenchmark()
  notifyLatencyBenchmark()
}
