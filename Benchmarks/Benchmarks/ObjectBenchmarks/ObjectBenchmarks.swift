// Shoal's object layer against GRDB on the same 100k objects, in the same run as the storage
// benchmarks (see ObjectEngines.swift for what each side does):
//
//   objects-insert 100k         100,000 objects (Int primary key, indexed String category,
//                               Double price, String name, indexed Date createdAt) added in ONE write
//                               transaction, committed durably; also records the file size
//   objects-pk-lookups 10k      10,000 lookups by primary key of random existing ids, reading
//                               each object's price
//   objects-pk-lookups-statement 10k / grdb  the same through one cached prepared statement
//                               instead of GRDB's `fetchOne(db, key:)`, which builds the request
//                               and prepares its SQL for each lookup
//   objects-indexed-equality 10q  10 queries `category == c` (about 1,000 objects each, of the
//                               100 categories), reading every result's price
//   objects-range-sorted 5q     5 queries `price BETWEEN {lo, lo + 10}` sorted by price (about
//                               1,000 objects each; price has no index on either side), reading
//                               every result's price in order
//   objects-indexed-range-sorted 5q  5 queries `createdAt BETWEEN {lo, hi}` sorted by createdAt
//                               (1,000 objects each; createdAt has the same index on both
//                               sides), reading every result's price in order
//   objects-encryption-interleaved 4w  the four read workloads above on the encrypted file and
//                               the plain one, interleaved, for the encryption table
//                               (EncryptionInterleaved.swift)
//   objects-live 100k <query>   one modified object per commit to the callback of an observer
//                               of the objects unsorted, sorted, or filtered and sorted
//                               (LiveQueryBenchmarks.swift)
//
// As in StorageBenchmarks: each benchmark runs in a process of its own; the databases live
// under $SHOAL_BENCH_DIR (default /tmp/shoal-bench); the first insert of each side is kept as
// its fixture for the read benchmarks (built on demand when those run alone), and each insert
// writes the file size it produced to results/filesize-objects-<side>.txt for bench-table.
// Every pass is checked against what the dataset says it must read.

import Benchmark
import Foundation
import ObjectShared

// MARK: - Places

let benchRoot: String = {
  let env = ProcessInfo.processInfo.environment["SHOAL_BENCH_DIR"] ?? ""
  return env.isEmpty ? "/tmp/shoal-bench" : env
}()

func fixtureDirectory(_ kind: ObjectEngineKind) -> String { benchRoot + "/fixtures/objects-" + kind.rawValue }
func workDirectory(_ name: String) -> String { benchRoot + "/work/" + name }
func fileSizeResultPath(_ kind: ObjectEngineKind) -> String {
  benchRoot + "/results/filesize-objects-\(kind.rawValue).txt"
}

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

/// The size in bytes of `path` (0 when it does not exist).
func fileSize(_ path: String) -> Int {
  ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
}

func recordFileSize(_ kind: ObjectEngineKind, _ bytes: Int) throws {
  let path = fileSizeResultPath(kind)
  try makeDirectory((path as NSString).deletingLastPathComponent)
  try "\(bytes)\n".write(toFile: path, atomically: true, encoding: .utf8)
}

let fixtureMarker = "complete"

/// Keeps the database just filled in `directory` as the side's fixture when there is none
/// yet; removes it otherwise.
func keepAsFixture(_ kind: ObjectEngineKind, _ directory: String) throws {
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

/// Inserts the dataset into a fresh database in `directory` (unmeasured unless `measure`
/// brackets the insert); returns its file size once settled. The engine is closed on return.
func insertDataset(_ kind: ObjectEngineKind, in directory: String, measure: (() -> Void, () -> Void)? = nil)
  throws -> Int
{
  let engine = try openObjectEngine(kind, in: directory)
  engine.prepareInsert(objectData)
  measure?.0()
  try engine.insertPrepared()
  measure?.1()
  try engine.settle()
  let size = engine.dataFiles.map(fileSize).reduce(0, +)
  try engine.close()
  // The fixture is moved and reopened by other processes: nothing may hold it open any more.
  let stillOpen = openFiles().filter { $0.hasPrefix(directory + "/") }
  if !stillOpen.isEmpty { throw BenchError("\(kind.rawValue): still open after close: \(stillOpen)") }
  return size
}

/// The paths this process has open (from /proc/self/fd).
func openFiles() -> [String] {
  let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
  return entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
}

/// The directory of the side's 100k-object database, filling it first if needed.
func ensureFixture(_ kind: ObjectEngineKind) throws -> String {
  let fixture = fixtureDirectory(kind)
  if exists(fixture + "/" + fixtureMarker) { return fixture }
  let directory = try freshDirectory(workDirectory("objects-fixture-\(kind.rawValue)"))
  let size = try insertDataset(kind, in: directory)
  if !exists(fileSizeResultPath(kind)) { try recordFileSize(kind, size) }
  try keepAsFixture(kind, directory)
  return fixture
}

// MARK: - Benchmarks

/// The engine a benchmark's setup opened, for its iterations and teardown.
final class Session {
  var engine: ObjectEngine?

  func close() throws {
    try engine?.close()
    engine = nil
  }

  func open() throws -> ObjectEngine {
    guard let engine else { throw BenchError("no engine") }
    return engine
  }
}

let fileSizeMetric = BenchmarkMetric.custom("file size (bytes)", polarity: .prefersSmaller, useScalingFactor: false)

func insertBenchmark(_ kind: ObjectEngineKind) {
  Benchmark(
    "objects-insert 100k / \(kind.rawValue)",
    configuration: .init(
      metrics: [.wallClock, .cpuTotal, .throughput, fileSizeMetric],
      warmupIterations: 0, maxDuration: .seconds(60), maxIterations: 3)
  ) { benchmark in
    do {
      let directory = try freshDirectory(workDirectory("objects-insert-\(kind.rawValue)"))
      let size = try insertDataset(
        kind, in: directory, measure: ({ benchmark.startMeasurement() }, { benchmark.stopMeasurement() }))
      benchmark.measurement(fileSizeMetric, size)
      try recordFileSize(kind, size)
      try keepAsFixture(kind, directory)
    } catch {
      benchmark.error("objects-insert \(kind.rawValue): \(error)")
    }
  } setup: {
    _ = objectData  // generated before the first measured iteration
  }
}

/// A read benchmark on the side's fixture: `pass` runs once per iteration and must return
/// `expected` (evaluated when the benchmark runs, not when it is registered); setup checks one
/// pass first, which also warms the caches.
func readBenchmark<T: Equatable>(
  _ name: String, _ kind: ObjectEngineKind, maxDuration: Int, maxIterations: Int,
  expected: @autoclosure @escaping () -> T, _ pass: @escaping (ObjectEngine) throws -> T
) {
  let session = Session()
  Benchmark(
    "\(name) / \(kind.rawValue)",
    configuration: .init(
      metrics: [.wallClock, .cpuTotal, .throughput],
      warmupIterations: 1, maxDuration: .seconds(maxDuration), maxIterations: maxIterations)
  ) { benchmark in
    do {
      let result = try pass(try session.open())
      if result != expected() { throw BenchError("read \(result), expected \(expected())") }
    } catch {
      benchmark.error("\(name) \(kind.rawValue): \(error)")
    }
  } setup: {
    let engine = try openObjectEngine(kind, in: try ensureFixture(kind))
    session.engine = engine
    let result = try pass(engine)
    guard result == expected() else {
      throw BenchError("\(name) \(kind.rawValue): read \(result), expected \(expected())")
    }
  } teardown: {
    try session.close()
  }
}

let benchmarks: @Sendable () -> Void = {
  for kind in ObjectEngineKind.allCases {
    insertBenchmark(kind)
    readBenchmark(
      "objects-pk-lookups 10k", kind, maxDuration: 5, maxIterations: 30, expected: objectData.expectedLookupCents
    ) { try $0.lookups(objectData.lookupIDs) }
    if kind == .grdb {
      readBenchmark(
        "objects-pk-lookups-statement 10k", kind, maxDuration: 5, maxIterations: 30,
        expected: objectData.expectedLookupCents
      ) { try $0.statementLookups(objectData.lookupIDs) ?? 0 }
    }
    readBenchmark(
      "objects-indexed-equality 10q", kind, maxDuration: 5, maxIterations: 30,
      expected: objectData.expectedCategoryTallies
    ) { try $0.categoryQueries(objectData.queriedCategories) }
    readBenchmark(
      "objects-range-sorted 5q", kind, maxDuration: 8, maxIterations: 20, expected: objectData.expectedRangeTallies
    ) { try $0.rangeQueries(objectData.priceRanges) }
    readBenchmark(
      "objects-indexed-range-sorted 5q", kind, maxDuration: 8, maxIterations: 20,
      expected: objectData.expectedDateRangeTallies
    ) { try $0.dateRangeQueries(objectData.dateRanges) }
  }
  encryptionInterleavedBenchmark()
  liveQueryBenchmarks()
}
