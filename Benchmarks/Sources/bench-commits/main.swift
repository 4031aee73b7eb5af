// bench-commits: durable single-entry commits of Shoal and LMDB (and SQLite) into copies of the
// 1M-entry fixtures, interleaved in blocks as `durable-commits-interleaved` does, with the
// figures the benchmark tool does not give: each engine's median and 90th percentile commit,
// and the CPU time (user + system, of this thread) a commit costs. For A/B runs of a change to
// the commit path without the whole benchmark run:
//
//   swift build -c release --product bench-commits   (in Benchmarks/)
//   .build/release/bench-commits [--commits N] [--block B] [--rounds R] [--engines shoal,lmdb]
//                                [--shoal-unsafe]
//
// `--shoal-unsafe` commits to Shoal without syncing (durability `unsafe`): the commit's CPU
// alone, steadier than a durable run for comparing changes to the code.
//
// Fixtures are built once into $SHOAL_BENCH_DIR/probe-fixtures (default /tmp/shoal-bench) and
// kept; each round copies them and commits N new keys into every engine.

import BenchEngines
import Foundation
import ShoalStorage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

struct Options {
  var commits = 1000
  var block = 100
  var rounds = 3
  var engines: [EngineKind] = [.shoal, .lmdb]
  var shoalUnsafe = false

  init(_ arguments: [String]) throws {
    var i = 0
    func value() throws -> String {
      i += 1
      guard i < arguments.count else { throw BenchError("\(arguments[i - 1]) needs a value") }
      return arguments[i]
    }
    func count() throws -> Int {
      let text = try value()
      guard let n = Int(text), n > 0 else { throw BenchError("\(arguments[i - 1]) needs a count above 0") }
      return n
    }
    while i < arguments.count {
      switch arguments[i] {
      case "--commits": commits = try count()
      case "--block": block = try count()
      case "--rounds": rounds = try count()
      case "--shoal-unsafe": shoalUnsafe = true
      case "--engines":
        engines = try value().split(separator: ",").map {
          guard let kind = EngineKind(rawValue: String($0)) else { throw BenchError("unknown engine \($0)") }
          return kind
        }
      default: throw BenchError("unknown argument \(arguments[i])")
      }
      i += 1
    }
  }
}

/// This thread's user and system CPU time so far, in nanoseconds.
func threadCPU() -> (user: UInt64, system: UInt64) {
  var usage = rusage()
  getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD, which Glibc does not export to Swift
  func ns(_ t: timeval) -> UInt64 { UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_usec) * 1000 }
  return (ns(usage.ru_utime), ns(usage.ru_stime))
}

/// Write requests and cache flushes the machine's disks completed so far (/proc/diskstats,
/// whole disks only: vd*, sd*, nvme*n*), or zeros where it cannot be read.
func diskCounters() -> (writes: UInt64, flushes: UInt64) {
  guard let text = try? String(contentsOfFile: "/proc/diskstats", encoding: .utf8) else { return (0, 0) }
  var writes: UInt64 = 0
  var flushes: UInt64 = 0
  for line in text.split(separator: "\n") {
    let fields = line.split(separator: " ")
    guard fields.count >= 20 else { continue }
    let name = fields[2]
    let whole =
      (name.hasPrefix("vd") || name.hasPrefix("sd")) && !(name.last?.isNumber ?? true)
      || (name.hasPrefix("nvme") && !name.contains("p"))
    guard whole else { continue }
    writes += UInt64(fields[7]) ?? 0
    flushes += UInt64(fields[19]) ?? 0
  }
  return (writes, flushes)
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func percentile(_ sorted: [UInt64], _ p: Double) -> UInt64 {
  sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

let root: String = {
  let env = ProcessInfo.processInfo.environment["SHOAL_BENCH_DIR"] ?? ""
  return (env.isEmpty ? "/tmp/shoal-bench" : env) + "/probe"
}()

func fixture(_ kind: EngineKind) throws -> String {
  let directory = root + "/fixtures/" + kind.rawValue
  if FileManager.default.fileExists(atPath: directory + "/complete") { return directory }
  try? FileManager.default.removeItem(atPath: directory)
  try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
  print("building the \(kind.rawValue) fixture")
  let engine = try openEngine(kind, in: directory)
  try engine.bulkLoad(dataset)
  engine.close()
  _ = FileManager.default.createFile(atPath: directory + "/complete", contents: nil)
  return directory
}

/// Shoal's store opened with durability `unsafe`, committing as `ShoalEngine.commitOne` does.
final class UnsafeShoal: Engine {
  let store: Store
  init(directory: String) throws {
    store = try Store.open(
      path: directory + "/db.shoal", options: StoreOptions(durability: .unsafe, cacheSize: engineCacheBytes))
  }
  var dataFiles: [String] { [store.path] }
  func bulkLoad(_ data: Dataset) throws { throw BenchError("not used") }
  func pointReads(_ data: Dataset) throws -> Int { throw BenchError("not used") }
  func scan() throws -> Int { throw BenchError("not used") }
  func commitOne(key: [UInt8], value: [UInt8]) throws {
    try store.write { txn in try txn.put(value, forKey: key, in: shoalKeyspace) }
  }
  func prepareForCommits() throws {}
  func snapshots(_ count: Int) throws -> Int { throw BenchError("not used") }
  func renewedSnapshots(_ count: Int) throws -> Int? { nil }
  func close() { store.close() }
}

do {
  let options = try Options(Array(CommandLine.arguments.dropFirst()))
  let fixtures = try options.engines.map(fixture)
  var next = DatasetShape.entryCount
  for round in 0..<options.rounds {
    var engines: [Engine] = []
    for (kind, source) in zip(options.engines, fixtures) {
      let directory = root + "/work/" + kind.rawValue
      try? FileManager.default.removeItem(atPath: directory)
      try FileManager.default.createDirectory(
        atPath: (directory as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try FileManager.default.copyItem(atPath: source, toPath: directory)
      engines.append(
        kind == .shoal && options.shoalUnsafe
          ? try UnsafeShoal(directory: directory) : try openEngine(kind, in: directory))
    }
    sync()
    var latencies = [[UInt64]](repeating: [], count: engines.count)
    var user = [UInt64](repeating: 0, count: engines.count)
    var system = [UInt64](repeating: 0, count: engines.count)
    var writes = [UInt64](repeating: 0, count: engines.count)
    var flushes = [UInt64](repeating: 0, count: engines.count)
    let first = next
    next += options.commits
    for b in 0..<(options.commits + options.block - 1) / options.block {
      let range = (first + b * options.block)..<min(first + (b + 1) * options.block, first + options.commits)
      for step in engines.indices {
        let e = (b + step) % engines.count
        let cpuStart = threadCPU()
        let diskStart = diskCounters()
        for i in range {
          let key = benchKey(i)
          let value = benchValue(i)
          let start = now()
          try engines[e].commitOne(key: key, value: value)
          latencies[e].append(now() - start)
        }
        let diskEnd = diskCounters()
        writes[e] += diskEnd.writes - diskStart.writes
        flushes[e] += diskEnd.flushes - diskStart.flushes
        let cpuEnd = threadCPU()
        user[e] += cpuEnd.user - cpuStart.user
        system[e] += cpuEnd.system - cpuStart.system
      }
    }
    var line = "round \(round):"
    var medians: [UInt64] = []
    for (e, kind) in options.engines.enumerated() {
      let sorted = latencies[e].sorted()
      let total = latencies[e].reduce(0, +)
      medians.append(percentile(sorted, 0.5))
      line +=
        "  \(kind.rawValue) mean \(total / UInt64(sorted.count) / 1000) p50 \(percentile(sorted, 0.5) / 1000)"
        + " p90 \(percentile(sorted, 0.9) / 1000) user \(user[e] / UInt64(sorted.count) / 1000)"
        + " sys \(system[e] / UInt64(sorted.count) / 1000) us"
        + String(
          format: " writes %.2f flushes %.2f", Double(writes[e]) / Double(sorted.count),
          Double(flushes[e]) / Double(sorted.count))
    }
    // Each engine's file after the round: what the commits' placement did to its size.
    line += "  file MiB"
    for engine in engines {
      let bytes = engine.dataFiles.reduce(UInt64(0)) { total, path in
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.uint64Value
        return total + (size ?? 0)
      }
      line += String(format: " %.1f", Double(bytes) / 1_048_576)
    }
    if medians.count > 1 {
      line += String(format: "  p50 ratio %.2fx", Double(medians[0]) / Double(medians[1]))
    }
    print(line)
    for engine in engines { engine.close() }
  }
} catch {
  FileHandle.standardError.write(Data("bench-commits: \(error)\n".utf8))
  exit(1)
}
