// bench-table: prints the tables of `make bench`.
//
//   bench-table <influx.csv> <results-dir>
//
// Reads the benchmark run's Influx export (`--format influx`: one line per benchmark, metric
// and percentile, values unscaled — nanoseconds for wall-clock time and for the latency
// metrics) and the side files the benchmarks wrote to <results-dir> (filesize-<engine>.txt from
// the bulk loads, filesize-objects-<side>.txt from the object inserts, durable-interleaved.txt
// from the interleaved durable commits, contended-interleaved[-loaded].txt from the writer
// processes of every engine in turn, notify-early-shoal.txt
// from the notification benchmark, notify-objects-early-shoal.txt and
// notify-throughput-shoal.txt from the object-notification benchmarks); prints five tables:
// Shoal's storage engine against LMDB and SQLite, Shoal's object layer against GRDB, encrypted
// Shoal against plain Shoal (engine and object workloads), the
// object layer's cross-process notifications and freeze(), which the others cannot do, and what
// one log call costs, its level disabled and enabled. The first two give every workload's
// figure per engine, Shoal's ratio to each other engine (< 1: Shoal is faster or smaller);
// every table says whether Shoal meets its target. Exits 1 when a figure is missing.

import Foundation

let engines = ["shoal", "lmdb", "sqlite"]
let objectSides = ["shoal", "grdb"]

// MARK: - Input

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("bench-table: \(message)\n".utf8))
  exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else { fail("usage: bench-table <influx.csv> <results-dir>") }
guard let csv = try? String(contentsOfFile: arguments[1], encoding: .utf8) else {
  fail("cannot read \(arguments[1])")
}
let resultsDirectory = arguments[2]

let wallClock = "Time(wallclock)"
/// The Influx names (spaces dropped) of the notification benchmark's custom metrics.
let publishToCallback = "publishtocallback(ns)"
let commitCallToCallback = "commitcalltocallback(ns)"
/// The Influx name of ordo-one/benchmark's `.mallocCountTotal` ("Malloc (total)").
let mallocs = "Malloc(total)"

struct Measured {
  /// metric -> percentile -> value
  var values: [String: [Double: Int]] = [:]
  /// The export's `iterations` field (the sample count of one of the benchmark's metrics).
  var iterations = 0
}

/// Benchmark name -> its figures.
let measured: [String: Measured] = {
  var measured: [String: Measured] = [:]
  for line in csv.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
    // measurement,hostName,processorType,processors,memory,kernelVersion,metric,unit,test,
    // percentile,value,test_average,iterations,warmup_iterations,time — read from the end, as
    // only the machine's fields could hold a comma.
    let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    guard fields.count >= 15, let percentile = Double(fields[fields.count - 6]),
      let value = Int(fields[fields.count - 5]), let iterations = Int(fields[fields.count - 3])
    else { continue }
    let metric = fields[fields.count - 9]
    let test = fields[fields.count - 7]
    measured[test, default: Measured()].values[metric, default: [:]][percentile] = value
    if metric == wallClock { measured[test, default: Measured()].iterations = iterations }
  }
  return measured
}()

/// A benchmark's figure: the median wall-clock time by default.
func figure(_ test: String, _ metric: String = wallClock, percentile: Double = 50) -> Double? {
  measured[test]?.values[metric]?[percentile].map(Double.init)
}

func iterations(_ test: String) -> Int { measured[test]?.iterations ?? 0 }

func fileSize(_ engine: String) -> Double? {
  let path = resultsDirectory + "/filesize-\(engine).txt"
  guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
  return Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
}

/// The lines of an interleaved benchmark's results file, one per iteration: "<name>=<value> …".
func interleavedIterations(_ file: String) -> [[String: Double]] {
  guard let text = try? String(contentsOfFile: resultsDirectory + "/" + file, encoding: .utf8) else { return [] }
  return text.split(separator: "\n").map { line in
    var values: [String: Double] = [:]
    for pair in line.split(separator: " ") {
      let parts = pair.split(separator: "=", maxSplits: 1)
      if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
    }
    return values
  }
}

/// The interleaved durable-commit benchmark's iterations (durable-interleaved.txt: a line per
/// iteration, "<engine>=<nanoseconds for its 1,000 commits> …"; encrypted Shoal among them).
let interleaved = interleavedIterations("durable-interleaved.txt")

/// The interleaved object reads on the encrypted and the plain file
/// (objects-encryption-interleaved.txt: "<workload>:<side>=<nanoseconds for one pass> …").
let encryptionInterleaved = interleavedIterations("objects-encryption-interleaved.txt")

func median(_ values: [Double]) -> Double? {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return nil }
  let middle = sorted.count / 2
  return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// An engine's median over the interleaved iterations (nil when there are none).
func interleavedFigure(_ engine: String) -> Double? { median(interleaved.compactMap { $0[engine] }) }

/// The contention benchmark's iterations, without and with the busy loops
/// (contended-interleaved[-loaded].txt: a line per iteration, "<engine>=<nanoseconds for the
/// round of all its writers> …").
let contendedIterations = interleavedIterations("contended-interleaved.txt")
let contendedLoadedIterations = interleavedIterations("contended-interleaved-loaded.txt")

/// An engine's median round in `iterations` (nil when there are none).
func contendedFigure(_ iterations: [[String: Double]], _ engine: String) -> Double? {
  median(iterations.compactMap { $0[engine] })
}

/// An object read workload's median pass on one side, interleaved (nil when not measured).
func encryptionInterleavedFigure(_ workload: String, _ side: String) -> Double? {
  median(encryptionInterleaved.compactMap { $0["\(workload):\(side)"] })
}

/// A notification benchmark's "<early> <observed>" side file.
func notifyEarly(_ file: String = "notify-early-shoal.txt") -> (early: Int, observed: Int)? {
  guard let text = try? String(contentsOfFile: resultsDirectory + "/" + file, encoding: .utf8) else { return nil }
  let numbers = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
  return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
}

/// The object-notification throughput benchmark's totals (notify-throughput-shoal.txt: one
/// line of name=value pairs).
struct ThroughputTotals {
  let values: [String: Double]

  init?(_ file: String) {
    guard let text = try? String(contentsOfFile: resultsDirectory + "/" + file, encoding: .utf8) else { return nil }
    var values: [String: Double] = [:]
    for pair in text.split(whereSeparator: \.isWhitespace) {
      let parts = pair.split(separator: "=", maxSplits: 1)
      if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
    }
    guard values["commits", default: 0] > 0, values["writing_seconds", default: 0] > 0 else { return nil }
    self.values = values
  }

  subscript(_ name: String) -> Double { values[name, default: 0] }

  var commits: Double { self["commits"] }
  var callbacksPerSecond: Double { self["callbacks"] / self["writing_seconds"] }
  var commitsPerCallback: Double? { self["callbacks"] > 0 ? commits / self["callbacks"] : nil }
  /// Committed objects that no reported insertion held.
  var lost: Double { commits - self["delivered"] }
  /// No change lost, none reported twice or out of thin air, and the insertions reported sum to
  /// the commits (each commit inserted one object and did nothing else).
  var exact: Bool {
    lost == 0 && self["repeated"] == 0 && self["out_of_range"] == 0 && self["insertions"] == commits
      && self["deletions"] == 0 && self["modifications"] == 0
  }
}

// MARK: - Formatting

func threeDigits(_ value: Double) -> String {
  value >= 100
    ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
}

func time(_ nanoseconds: Double) -> String {
  switch nanoseconds {
  case ..<1e3: return threeDigits(nanoseconds) + " ns"
  case ..<1e6: return threeDigits(nanoseconds / 1e3) + " us"
  case ..<1e9: return threeDigits(nanoseconds / 1e6) + " ms"
  default: return threeDigits(nanoseconds / 1e9) + " s"
  }
}

func size(_ bytes: Double) -> String { threeDigits(bytes / 1_048_576) + " MiB" }

func rate(_ perSecond: Double) -> String {
  perSecond >= 1e4 ? threeDigits(perSecond / 1e3) + "k/s" : String(format: "%.0f/s", perSecond)
}

/// A ratio with two decimals, or two significant digits when smaller than 0.01.
func ratioText(_ value: Double?) -> String {
  value.map { String(format: $0 < 0.01 ? "%.2gx" : "%.2fx", $0) } ?? "n/a"
}

func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
  let gap = String(repeating: " ", count: max(0, width - text.count))
  return left ? text + gap : gap + text
}

// MARK: - Rows

/// One engine's cell: a figure where lower is better (a time or a size), a fixed text where
/// the engine cannot do the workload, or nothing (missing: a benchmark failed or was filtered).
enum Cell {
  case value(Double)
  case text(String)
  case missing

  init(_ value: Double?) { self = value.map(Cell.value) ?? .missing }

  var value: Double? {
    if case .value(let v) = self { return v }
    return nil
  }
}

struct Row {
  let label: String
  /// Shoal first, then each engine it is compared with.
  let cells: [Cell]
  /// How a figure is shown (ratios are always of the figures themselves).
  var show: (Double) -> String = time
  let target: String
  /// Whether Shoal meets the target, given its figure and its ratio to each other engine, in
  /// the order of `cells` (nil when a ratio cannot be computed); no closure: the row has no
  /// target.
  let meets: ((_ shoal: Double, _ ratios: [Double?]) -> Bool)?
}

// As in CrossProcessShape (Sources/BenchEngines/PeerProtocol.swift).
let snapshots = 100_000.0
let writers = 4
let commitsPerWriter = 250
let contendedCommits = Double(writers * commitsPerWriter)
/// As `busyLoops` in Benchmarks/StorageBenchmarks/CrossProcess.swift.
let busyLoops = 3
let notify = "notify-latency / shoal"
let cannotNotify = Cell.text("cannot notify")

let rows: [Row] = [
  Row(
    label: "bulk load 1M, one txn", cells: engines.map { Cell(figure("bulk-load 1M / \($0)")) },
    target: "<=1x LMDB, <1x SQLite",
    meets: { _, r in r[0].map { $0 <= 1 } == true && r[1].map { $0 < 1 } == true }),
  Row(
    label: "100k point reads, warm", cells: engines.map { Cell(figure("point-reads 100k / \($0)")) },
    target: "<=1x LMDB", meets: { _, r in r[0].map { $0 <= 1 } == true }),
  Row(
    label: "full scan 1M, key order", cells: engines.map { Cell(figure("full-scan 1M / \($0)")) },
    target: "<=1.5x LMDB", meets: { _, r in r[0].map { $0 <= 1.5 } == true }),
  Row(
    label: "1k durable 1-entry commits", cells: engines.map { Cell(figure("durable-commits 1k / \($0)")) },
    target: "<=1x LMDB", meets: { _, r in r[0].map { $0 <= 1 } == true }),
  Row(
    label: "  the same, interleaved", cells: engines.map { Cell(interleavedFigure($0)) },
    target: "<=1x LMDB, <=1x SQLite", meets: { _, r in r[0].map { $0 <= 1 } == true && r[1].map { $0 <= 1 } == true }),
  Row(
    label: "\(writers) procs x \(commitsPerWriter) durable commits",
    cells: engines.map { Cell(contendedFigure(contendedIterations, $0)) },
    show: { rate(contendedCommits / ($0 / 1e9)) },
    target: "<=0.5x SQLite", meets: { _, r in r[1].map { $0 <= 0.5 } == true }),
  Row(
    label: "  the same, \(busyLoops) busy loops beside",
    cells: engines.map { Cell(contendedFigure(contendedLoadedIterations, $0)) },
    show: { rate(contendedCommits / ($0 / 1e9)) },
    target: "<=1x LMDB, <=0.5x SQLite",
    meets: { _, r in r[0].map { $0 <= 1 } == true && r[1].map { $0 <= 0.5 } == true }),
  Row(
    label: "snapshot: begin + end, per op",
    cells: engines.map { Cell(figure("snapshots 100k / \($0)").map { $0 / snapshots }) },
    target: "<=1.5x LMDB", meets: { _, r in r[0].map { $0 <= 1.5 } == true }),
  Row(
    label: "snapshot vs LMDB reset/renew",
    cells: [
      Cell(figure("snapshots 100k / shoal").map { $0 / snapshots }),
      Cell(figure("snapshots-renew 100k / lmdb").map { $0 / snapshots }), .text("-"),
    ],
    target: "(none set)", meets: nil),
  Row(
    label: "other process notified, p50",
    cells: [Cell(figure(notify, publishToCallback, percentile: 50)), cannotNotify, cannotNotify],
    target: "<=100 us", meets: { shoal, _ in shoal <= 100_000 }),
  Row(
    label: "other process notified, p99",
    cells: [Cell(figure(notify, publishToCallback, percentile: 99)), cannotNotify, cannotNotify],
    target: "<=1 ms", meets: { shoal, _ in shoal <= 1_000_000 }),
  Row(
    label: "file size after bulk load", cells: engines.map { Cell(fileSize($0)) }, show: size,
    target: "<=0.5x LMDB", meets: { _, r in r[0].map { $0 <= 0.5 } == true }),
]

// As in ObjectShape (Benchmarks/ObjectBenchmarks/ObjectData.swift).
let objectCount = 100_000.0
let lookups = 10_000.0
let categoryQueries = 10.0
let rangeQueries = 5.0
let dateRangeQueries = 5.0

/// As in LiveQueryBenchmarks.swift: the median time from a commit of one modified object to
/// the callback of an observer of `query` (unsorted, sorted, filtered-sorted) on `side`.
/// Shoal's three queries are one interleaved benchmark with a metric per query.
func live(_ query: String, _ side: String) -> Double? {
  side == "shoal"
    ? figure("objects-live 100k / shoal", "live\(query)committocallback(ns)", percentile: 50)
    : figure("objects-live 100k \(query) / \(side)", "livecommittocallback(ns)", percentile: 50)
}

/// Whether a live sorted query's callback comes within 1.2x of the unsorted one's, same run.
let withinUnsorted: (Double, [Double?]) -> Bool = { shoal, _ in
  guard let unsorted = live("unsorted", "shoal") else { return false }
  return shoal <= 1.2 * unsorted
}

/// The issue's targets for the object layer: Shoal at least twice as fast as GRDB (or its file
/// at most half of GRDB's).
let halfOfGRDB: (Double, [Double?]) -> Bool = { _, r in r[0].map { $0 <= 0.5 } == true }

let objectRows: [Row] = [
  Row(
    label: "insert 100k objects, one txn", cells: objectSides.map { Cell(figure("objects-insert 100k / \($0)")) },
    target: "<=0.5x GRDB", meets: halfOfGRDB),
  Row(
    label: "10k lookups by primary key", cells: objectSides.map { Cell(figure("objects-pk-lookups 10k / \($0)")) },
    target: "<=0.5x GRDB", meets: halfOfGRDB),
  Row(
    label: "  vs GRDB cached statement",
    cells: [
      Cell(figure("objects-pk-lookups 10k / shoal")), Cell(figure("objects-pk-lookups-statement 10k / grdb")),
    ],
    target: "(none set)", meets: nil),
  Row(
    label: "10 indexed == queries, ~1k each",
    cells: objectSides.map { Cell(figure("objects-indexed-equality 10q / \($0)")) },
    target: "<=0.5x GRDB", meets: halfOfGRDB),
  Row(
    label: "5 range queries + sort, ~1k each",
    cells: objectSides.map { Cell(figure("objects-range-sorted 5q / \($0)")) },
    target: "<=0.5x GRDB", meets: halfOfGRDB),
  Row(
    label: "5 indexed range queries + sort",
    cells: objectSides.map { Cell(figure("objects-indexed-range-sorted 5q / \($0)")) },
    target: "<=0.25x GRDB", meets: { _, r in r[0].map { $0 <= 0.25 } == true }),
  Row(
    label: "file size after insert", cells: objectSides.map { Cell(fileSize("objects-\($0)")) }, show: size,
    target: "<=0.5x GRDB", meets: halfOfGRDB),
  Row(
    label: "live Results of 100k, commit->callback",
    cells: [Cell(live("unsorted", "shoal")), .text("-")], target: "(reference)", meets: nil),
  Row(
    label: "  sorted, one object moves",
    cells: objectSides.map { Cell(live("sorted", $0)) }, target: "<=1.2x unsorted", meets: withinUnsorted),
  Row(
    label: "  filtered + sorted",
    cells: objectSides.map { Cell(live("filtered-sorted", $0)) }, target: "<=1.2x unsorted", meets: withinUnsorted),
]

/// Encrypted Shoal ("shoal-encrypted") against plain Shoal, same workloads, same run: at most
/// 1.3x the time, a file within 2% of the size.
let withinEncryptionCost: (Double, [Double?]) -> Bool = { _, r in r[0].map { $0 <= 1.3 } == true }
let withinTwoPercent: (Double, [Double?]) -> Bool = { _, r in r[0].map { $0 <= 1.02 } == true }
let encryptedSides = ["shoal-encrypted", "shoal"]

/// A row of the encryption table: `benchmark`'s median on the encrypted file and on the plain
/// one; `interleaved`'s medians instead when it measured both sides (the same disk and the same
/// machine state for both, which rows minutes apart do not get).
@MainActor func encryptionRow(_ label: String, _ benchmark: String, interleaved: (String) -> Double? = { _ in nil })
  -> Row
{
  let both = encryptedSides.map(interleaved)
  let figures = both.allSatisfy { $0 != nil } ? both : encryptedSides.map { figure("\(benchmark) / \($0)") }
  return Row(
    label: label, cells: figures.map { Cell($0) }, target: "<=1.3x plain", meets: withinEncryptionCost)
}

let encryptionRows: [Row] = [
  encryptionRow("bulk load 1M, one txn", "bulk-load 1M"),
  encryptionRow("100k point reads, warm", "point-reads 100k"),
  encryptionRow("full scan 1M, key order", "full-scan 1M"),
  encryptionRow("1k durable 1-entry commits", "durable-commits 1k", interleaved: interleavedFigure),
  Row(
    label: "file size after bulk load", cells: encryptedSides.map { Cell(fileSize($0)) }, show: size,
    target: "<=1.02x plain", meets: withinTwoPercent),
  encryptionRow("objects: insert 100k, one txn", "objects-insert 100k"),
  encryptionRow(
    "objects: 10k lookups by primary key", "objects-pk-lookups 10k",
    interleaved: { encryptionInterleavedFigure("pk-lookups", $0) }),
  encryptionRow(
    "objects: 10 indexed == queries", "objects-indexed-equality 10q",
    interleaved: { encryptionInterleavedFigure("indexed-equality", $0) }),
  encryptionRow(
    "objects: 5 range queries + sort", "objects-range-sorted 5q",
    interleaved: { encryptionInterleavedFigure("range-sorted", $0) }),
  encryptionRow(
    "objects: 5 indexed range queries + sort", "objects-indexed-range-sorted 5q",
    interleaved: { encryptionInterleavedFigure("indexed-range-sorted", $0) }),
  Row(
    label: "objects: file size after insert",
    cells: encryptedSides.map { Cell(fileSize("objects-\($0)")) }, show: size,
    target: "<=1.02x plain", meets: withinTwoPercent),
]

// As in NotifyShape (Sources/NotifyShared/NotifyShared.swift).
let frozenObjects = 10_000.0
let frozenRealmsAgain = 10_000.0
let frozenResults = 100.0
let objectsLatency = "notify-objects-latency 10k / shoal"
/// The Influx names (spaces dropped) of the object-notification benchmarks' custom metrics.
let objectsPublishToCallback = "objectspublishtocallback(ns)"
/// The same through a Combine publisher and through the async sequence, interleaved with it.
let combinePublishToCallback = "combinepublishtocallback(ns)"
let asyncPublishToCallback = "asyncpublishtocallback(ns)"
let objectsReturnToCallback = "objectscommitreturntocallback(ns)"
let objectsCallToCallback = "objectscommitcalltocallback(ns)"
let writerCommit = "commit(ns)"
let freezeMetric = "freeze(ns)"
let throughput = ThroughputTotals("notify-throughput-shoal.txt")
/// Cells of LMDB, SQLite and GRDB: none can tell another process about a commit, nor freeze.
let othersCannotNotify = Array(repeating: cannotNotify, count: 3)
let othersHaveNoFreeze = Array(repeating: Cell.text("-"), count: 3)

/// Whether a publisher's or the async sequence's p50 is within 1.2x of the callback's, same run.
let withinCallback: (Double, [Double?]) -> Bool = { shoal, _ in
  guard let callback = figure(objectsLatency, objectsPublishToCallback, percentile: 50) else { return false }
  return shoal <= 1.2 * callback
}

let notificationRows: [Row] = [
  Row(
    label: "Results of 10k, other process, p50",
    cells: [Cell(figure(objectsLatency, objectsPublishToCallback, percentile: 50))] + othersCannotNotify,
    target: "<=200 us", meets: { shoal, _ in shoal <= 200_000 }),
  Row(
    label: "Results of 10k, other process, p99",
    cells: [Cell(figure(objectsLatency, objectsPublishToCallback, percentile: 99))] + othersCannotNotify,
    target: "(none set)", meets: nil),
  Row(
    label: "the same through a Combine publisher, p50",
    cells: [Cell(figure(objectsLatency, combinePublishToCallback, percentile: 50))] + othersCannotNotify,
    target: "<=1.2x callback", meets: withinCallback),
  Row(
    label: "the same through the async sequence, p50",
    cells: [Cell(figure(objectsLatency, asyncPublishToCallback, percentile: 50))] + othersCannotNotify,
    target: "<=1.2x callback", meets: withinCallback),
  Row(
    label: "1k commits/s: callbacks delivered",
    cells: [Cell(throughput?.callbacksPerSecond)] + othersCannotNotify,
    show: { String(format: "%.0f/s", $0) }, target: "(none set)", meets: nil),
  Row(
    label: "1k commits/s: commits per callback",
    cells: [Cell(throughput?.commitsPerCallback)] + othersCannotNotify,
    show: { String(format: "%.2f", $0) }, target: "(none set)", meets: nil),
  Row(
    label: "1k commits/s: changes lost",
    cells: [Cell(throughput?.lost)] + othersCannotNotify,
    show: { String(format: "%.0f", $0) }, target: "0; insertions == commits",
    meets: { _, _ in throughput?.exact == true }),
  Row(
    label: "freeze an object, per op",
    cells: [Cell(figure("freeze-object 10k / shoal").map { $0 / frozenObjects })] + othersHaveNoFreeze,
    target: "(none set)", meets: nil),
  Row(
    label: "freeze a Realm, new version, per op",
    cells: [Cell(figure("freeze-realm 200 / shoal", freezeMetric))] + othersHaveNoFreeze,
    target: "(none set)", meets: nil),
  Row(
    label: "freeze Results of 10k, per op",
    cells: [Cell(figure("freeze-results 100 / shoal").map { $0 / frozenResults })] + othersHaveNoFreeze,
    target: "(none set)", meets: nil),
]

// As in LogShape (Benchmarks/LoggingBenchmarks/LoggingBenchmarks.swift).
let logCalls = 1_000_000.0
let logDisabled = "log-disabled 1M / shoal"

/// A logging benchmark's median time per call.
func perCall(_ test: String) -> Double? { figure(test).map { $0 / logCalls } }

/// A logging benchmark's median malloc count per call, as text ("0" only when none at all).
func mallocsPerCall(_ test: String) -> Cell {
  guard let count = figure(test, mallocs) else { return .missing }
  return .text(count == 0 ? "0" : String(format: "%.2f", count / logCalls))
}

/// A logging benchmark's time per call over the disabled Log.write's.
func overDisabled(_ test: String) -> Cell {
  guard let time = perCall(test), let disabled = perCall(logDisabled) else { return .missing }
  guard disabled > 0 else { return .text("n/a") }
  let ratio = time / disabled
  return .text(String(format: ratio < 10 ? "%.1fx" : "%.0fx", ratio))
}

/// A disabled message costs no formatting: not one malloc in an iteration's 1M calls.
func noMallocs(_ test: String) -> (Double, [Double?]) -> Bool { { _, _ in figure(test, mallocs) == 0 } }

let loggingRows: [Row] = [
  Row(
    label: "Log.write, level disabled",
    cells: [Cell(perCall(logDisabled)), mallocsPerCall(logDisabled), .text("1.0x")],
    target: "0 mallocs", meets: noMallocs(logDisabled)),
  Row(
    label: "Log.write, enabled, no-op function",
    cells: [
      Cell(perCall("log-enabled 1M / shoal")), mallocsPerCall("log-enabled 1M / shoal"),
      overDisabled("log-enabled 1M / shoal"),
    ],
    target: "(none set)", meets: nil),
  Row(
    label: "  the message formatted alone",
    cells: [
      Cell(perCall("log-format-only 1M / shoal")), mallocsPerCall("log-format-only 1M / shoal"),
      overDisabled("log-format-only 1M / shoal"),
    ],
    target: "(none set)", meets: nil),
  Row(
    label: "Logger.shared.log(.trace), disabled",
    cells: [
      Cell(perCall("logger-shared-disabled 1M / shoal")), mallocsPerCall("logger-shared-disabled 1M / shoal"),
      overDisabled("logger-shared-disabled 1M / shoal"),
    ],
    target: "0 mallocs", meets: noMallocs("logger-shared-disabled 1M / shoal")),
]

let loggingNotes = [
  ("Log.write disabled", logDisabled), ("Log.write enabled", "log-enabled 1M / shoal"),
  ("message formatted alone", "log-format-only 1M / shoal"),
  ("Logger.shared.log disabled", "logger-shared-disabled 1M / shoal"),
].map { label, test in
  "  \(label): \(figure(test).map(time) ?? "n/a") and "
    + "\(figure(test, mallocs).map { String(format: "%.0f", $0) } ?? "n/a") mallocs per 1M calls "
    + "(medians of \(iterations(test)) iterations)"
}

// As in SyncShape (Benchmarks/SyncBenchmarks/SyncBenchmarks.swift).
let syncCommitToCallback = "synccommittocallback(ns)"
let syncObjects = 100_000.0
func syncRate(_ test: String) -> Double? { figure(test).map { syncObjects / ($0 / 1e9) } }

let syncRows: [Row] = [
  Row(
    label: "commit on A -> callback on B, p50", cells: [Cell(figure("sync-latency / shoal", syncCommitToCallback))],
    target: "<= 20 ms", meets: { shoal, _ in shoal <= 20e6 }),
  Row(
    label: "commit on A -> callback on B, p99",
    cells: [Cell(figure("sync-latency / shoal", syncCommitToCallback, percentile: 99))], target: "(none set)",
    meets: nil),
  Row(
    label: "upload of 100k new objects (objects/s)", cells: [Cell(syncRate("sync-upload 100k / shoal"))],
    show: { String(format: "%.0f/s", $0) }, target: "(none set)", meets: nil),
  Row(
    label: "bootstrap of 100k rows (objects/s)", cells: [Cell(syncRate("sync-bootstrap 100k / shoal"))],
    show: { String(format: "%.0f/s", $0) }, target: "(none set)", meets: nil),
]

// MARK: - The tables

var missing = false
var missed: [String] = []
var unchecked = 0

/// The table's lines: a header, a rule, one line per row. Records missing figures and missed
/// or unchecked targets.
@MainActor func table(_ names: [String], _ rows: [Row], missedPrefix: String, ratios: Bool = true) -> [String] {
  var lines: [[String]] = []
  for row in rows {
    if row.cells.contains(where: { if case .missing = $0 { return true } else { return false } }) { missing = true }
    let shoal = row.cells[0].value
    let others = row.cells.dropFirst()
    let ratioValues = others.map { $0.value.flatMap { v in shoal.flatMap { v > 0 ? $0 / v : nil } } }
    var met = "-"
    if let meets = row.meets {
      if let shoal {
        let ok = meets(shoal, ratioValues)
        met = ok ? "yes" : "NO"
        if !ok { missed.append(missedPrefix + row.label) }
      } else {
        met = "?"
        unchecked += 1
      }
    }
    let cells = row.cells.map { cell -> String in
      switch cell {
      case .value(let v): return row.show(v)
      case .text(let t): return t
      case .missing: return "n/a"
      }
    }
    let ratioCells = zip(others, ratioValues).map { other, ratio -> String in
      switch other {
      case .text: return "-"
      case .missing: return "n/a"
      case .value: return ratioText(ratio)
      }
    }
    lines.append([row.label] + cells + (ratios ? ratioCells : []) + [row.target, met])
  }
  let ratioHeader = ratios ? names.dropFirst().map { "\(names[0])/\($0)" } : []
  let header = ["workload"] + names + ratioHeader + ["target", "met"]
  let widths = header.indices.map { column in ([header] + lines).map { $0[column].count }.max() ?? 0 }
  let firstLeftAligned = header.count - 2
  func render(_ row: [String]) -> String {
    row.indices.map { pad(row[$0], widths[$0], left: $0 == 0 || $0 >= firstLeftAligned) }.joined(separator: "  ")
  }
  return [render(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")] + lines.map(render)
}

// Per-operation figures and sample counts, under each table.
func perOperation(
  _ label: String, _ benchmark: String, _ operations: Double, _ name: String, sides: [String] = engines
) -> String {
  let figures = sides.map { figure("\(benchmark) / \($0)").map { time($0 / operations) } ?? "n/a" }
  let counts = sides.map { String(iterations("\(benchmark) / \($0)")) }.joined(separator: "/")
  return "  \(label): \(figures.joined(separator: " / ")) per \(name) (median of \(counts) iterations)"
}
/// The per-commit figures of a contention variant and Shoal/SQLite in each iteration (the
/// engines take turns within an iteration).
func contendedNote(_ label: String, _ iterations: [[String: Double]]) -> String {
  "  \(label): "
    + engines.map { contendedFigure(iterations, $0).map { time($0 / contendedCommits) } ?? "n/a" }
    .joined(separator: " / ")
    + " per commit, all writers together (median of \(iterations.count) iterations, the engines in turn); "
    + "Shoal/SQLite by iteration: "
    + (iterations.compactMap { i in i["shoal"].flatMap { s in i["sqlite"].map { String(format: "%.2fx", s / $0) } } }
      .joined(separator: ", "))
}
var notes = [
  perOperation("bulk load 1M, one txn", "bulk-load 1M", 1_000_000, "put"),
  perOperation("100k point reads, warm", "point-reads 100k", 100_000, "read"),
  perOperation("full scan 1M, key order", "full-scan 1M", 1_000_000, "entry"),
  perOperation("1k durable 1-entry commits", "durable-commits 1k", 1_000, "commit"),
  "  the same, interleaved in blocks of 100 commits: "
    + engines.map { interleavedFigure($0).map { time($0 / 1_000) } ?? "n/a" }.joined(separator: " / ")
    + " per commit (median of \(interleaved.count) iterations); Shoal/LMDB by iteration: "
    + (interleaved.compactMap { i in i["shoal"].flatMap { s in i["lmdb"].map { String(format: "%.2fx", s / $0) } } }
      .joined(separator: ", ")),
  contendedNote("\(writers) procs x \(commitsPerWriter) durable commits", contendedIterations),
  contendedNote("the same with \(busyLoops) busy loops at nice 10 beside", contendedLoadedIterations),
  perOperation("snapshots", "snapshots 100k", snapshots, "snapshot"),
]
notes.append(
  "  LMDB snapshot by mdb_txn_renew + mdb_txn_reset: "
    + (figure("snapshots-renew 100k / lmdb").map { time($0 / snapshots) } ?? "n/a")
    + " (median of \(iterations("snapshots-renew 100k / lmdb")) iterations); SQLite's snapshot is BEGIN, a one-row SELECT, COMMIT"
)
let percentiles = [50.0, 90.0, 99.0, 100.0]
func latencies(_ metric: String) -> String {
  percentiles.map { p in "p\(Int(p)) " + (figure(notify, metric, percentile: p).map(time) ?? "n/a") }
    .joined(separator: ", ")
}
notes.append("  other process notified (Shoal; commit in one process, change listener in another):")
notes.append("    publish -> callback:      \(latencies(publishToCallback))")
notes.append("    commit call -> callback:  \(latencies(commitCallToCallback))  (includes the commit itself)")
if let (early, observed) = notifyEarly() {
  notes.append(
    "    the callback started before the committer's store.write returned for \(early) of \(observed) commits")
}

let objectNotes = [
  perOperation("insert 100k objects, one txn", "objects-insert 100k", objectCount, "object", sides: objectSides),
  perOperation("10k lookups by primary key", "objects-pk-lookups 10k", lookups, "lookup", sides: objectSides),
  "  GRDB lookup through a cached prepared statement instead of fetchOne(db, key:): "
    + (figure("objects-pk-lookups-statement 10k / grdb").map { time($0 / lookups) } ?? "n/a")
    + " per lookup (median of \(iterations("objects-pk-lookups-statement 10k / grdb")) iterations)",
  perOperation(
    "10 indexed == queries", "objects-indexed-equality 10q", categoryQueries, "query", sides: objectSides),
  perOperation("5 range queries + sort", "objects-range-sorted 5q", rangeQueries, "query", sides: objectSides),
  perOperation(
    "5 indexed range queries + sort", "objects-indexed-range-sorted 5q", dateRangeQueries, "query",
    sides: objectSides),
]

func objectLatencies(_ metric: String) -> String {
  percentiles.map { p in "p\(Int(p)) " + (figure(objectsLatency, metric, percentile: p).map(time) ?? "n/a") }
    .joined(separator: ", ")
}
var notificationNotes = [
  "  Results of 10k observed in another process, one modified object per commit:",
  "    publish -> callback:        \(objectLatencies(objectsPublishToCallback))",
  "      through a Combine publisher: \(objectLatencies(combinePublishToCallback))",
  "      through the async sequence:  \(objectLatencies(asyncPublishToCallback))",
  "      (the three paths measured interleaved: files of their own, committed to in turn)",
  "    commit returned -> callback: \(objectLatencies(objectsReturnToCallback))",
  "    commit called -> callback:  \(objectLatencies(objectsCallToCallback))  (includes the commit and its fsync)",
  "    the writer's commitWrite:   \(objectLatencies(writerCommit))",
]
if let (early, observed) = notifyEarly("notify-objects-early-shoal.txt") {
  notificationNotes.append(
    "    the callback started before the writer's commitWrite returned for \(early) of \(observed) commits")
}
if let throughput {
  let seconds = throughput["writing_seconds"]
  notificationNotes.append(
    "  1k commits/s: \(Int(throughput.commits)) commits of one inserted object each, in "
      + String(format: "%.2f s of writing (%.0f commits/s achieved); ", seconds, throughput.commits / seconds)
      + "\(Int(throughput["callbacks"])) callbacks reported \(Int(throughput["insertions"])) insertions, "
      + "\(Int(throughput["delivered"])) distinct committed objects, \(Int(throughput["repeated"])) twice, "
      + "\(Int(throughput["out_of_range"])) unknown")
}
notificationNotes.append(
  "  freeze a Realm at a new version: "
    + [50.0, 99.0].map { p in
      "p\(Int(p)) " + (figure("freeze-realm 200 / shoal", freezeMetric, percentile: p).map(time) ?? "n/a")
    }.joined(separator: ", ") + "; again at the same version (cached): "
    + (figure("freeze-realm-again 10k / shoal").map { time($0 / frozenRealmsAgain) } ?? "n/a") + " per op")

/// Whether any figure of the table was measured: a table none of whose benchmarks ran (the
/// run was narrowed with --target or --filter) is left out rather than printed as n/a.
func hasFigures(_ rows: [Row]) -> Bool { rows.contains { $0.cells.contains { $0.value != nil } } }

var printed = 0
if hasFigures(rows) {
  printed += 1
  print("")
  print("Shoal vs LMDB vs SQLite: median wall-clock time per iteration (lower is better), unless the")
  print("row says otherwise (per op, commits/s, latency percentile, file size).")
  print("Ratios are Shoal / other in time (or size): below 1 means Shoal is faster (or its file")
  print("smaller), also on the commits/s row.")
  print("")
  for line in table(["Shoal", "LMDB", "SQLite"], rows, missedPrefix: "") { print(line) }
  print("")
  print("Per operation, Shoal / LMDB / SQLite:")
  for note in notes { print(note) }
}
if hasFigures(objectRows) {
  printed += 1
  print("")
  print("Objects: Shoal's object layer (Realm API) vs GRDB (Codable records, DatabasePool in WAL mode), on")
  print("the same 100k objects (Int primary key, indexed String, Double, String, Date); median wall-clock")
  print("time per iteration; both durable (Shoal full, SQLite synchronous=FULL), 64 MiB cache each.")
  print("Ratios are Shoal / GRDB: below 1 means Shoal is faster (or its file smaller). The live rows:")
  print("median per commit of one modified object, from just before the commit to the observer's")
  print("callback in the same process (Shoal: Results observed on a queue; GRDB: ValueObservation,")
  print("which fetches the query again).")
  print("")
  for line in table(["Shoal", "GRDB"], objectRows, missedPrefix: "objects: ") { print(line) }
  print("")
  print("Per operation, Shoal / GRDB:")
  for note in objectNotes { print(note) }
}
if hasFigures(encryptionRows) {
  printed += 1
  print("")
  print("Encryption: Shoal on an encrypted file (AES-256-GCM on every block, a 64-byte key) against the")
  print("same workloads on a plain file, in the same run; median wall-clock time per iteration (or file")
  print("size). The ratio is encrypted / plain: 1.10x means encryption costs 10% more. The durable")
  print("commits and the object reads are measured interleaved (both files in one process, in turn),")
  print("when those benchmarks ran; the other rows are separate benchmarks, minutes apart.")
  print("")
  for line in table(["encrypted", "plain"], encryptionRows, missedPrefix: "encryption: ") { print(line) }
}
if hasFigures(notificationRows) {
  printed += 1
  print("")
  print("Notifications and freeze(): Shoal's object layer (Realm API). A Results of 10k objects observed on")
  print("a queue in another process while this one commits durably; publish -> callback latency over")
  print("every commit observed. LMDB, SQLite and GRDB cannot tell another process about a commit, and")
  print("have no frozen objects.")
  print("")
  for line in table(
    ["Shoal", "LMDB", "SQLite", "GRDB"], notificationRows, missedPrefix: "notifications: ", ratios: false)
  {
    print(line)
  }
  print("")
  print("Details, Shoal:")
  for note in notificationNotes { print(note) }
}
if hasFigures(loggingRows) {
  printed += 1
  print("")
  print("Logging: one call of Log.write(.debug, .query, \"evaluated \\(n) rows of \\(className) in \\(elapsed) µs\")")
  print("(an Int, a String, a Double), per call: the median of iterations of 1M calls, divided by 1M, and the")
  print("mallocs of those iterations likewise. Disabled: the query category at info. Enabled: at debug, to a")
  print("no-op log function. Logger.shared.log(level: .trace, message:) with a Logger at info as the shared one.")
  print("")
  for line in table(
    ["per call", "mallocs/call", "/disabled"], loggingRows, missedPrefix: "logging: ", ratios: false)
  {
    print(line)
  }
  print("")
  print("Per iteration of 1M calls:")
  for note in loggingNotes { print(note) }
}
if hasFigures(syncRows) {
  printed += 1
  print("")
  print("Sync through PostgreSQL on loopback (a private cluster, fsync off): two devices (files with agents of")
  print("their own); latency from a commit on A to the callback of a Results observed on B, over 200 commits;")
  print("100k objects committed at once until uploaded; a new device until it holds 100k server rows.")
  print("LMDB, SQLite and GRDB have no sync.")
  print("")
  for line in table(["Shoal"], syncRows, missedPrefix: "sync: ", ratios: false) { print(line) }
}
print("")
if printed == 0 {
  print("No figures at all: every benchmark failed or was filtered out (see above).")
  missing = true
}
if missing { print("Some figures are missing: a benchmark failed or was filtered out (see above).") }
if !missed.isEmpty {
  print("Shoal misses its target on: " + missed.joined(separator: "; ") + ".")
} else if unchecked == 0 {
  print("Shoal meets every target.")
}
if unchecked > 0 { print("\(unchecked) target(s) could not be checked.") }
exit(missing ? 1 : 0)
