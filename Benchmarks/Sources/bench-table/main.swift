// bench-table: prints the one table of `make bench`.
//
//   bench-table <influx.csv> <results-dir>
//
// Reads the benchmark run's Influx export (`--format influx`: one line per benchmark, metric
// and percentile, values unscaled — nanoseconds for wall-clock time and for the latency
// metrics) and the side files the benchmarks wrote to <results-dir> (filesize-<engine>.txt from
// the bulk loads, notify-early-shoal.txt from the notification benchmark); prints each
// workload's figure for Shoal, LMDB and SQLite, Shoal's ratio to each (< 1: Shoal is faster or
// smaller) and whether Shoal meets its target. Exits 1 when a figure is missing.

import Foundation

let engines = ["shoal", "lmdb", "sqlite"]

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

/// The notification benchmark's "<early> <observed>" side file.
func notifyEarly() -> (early: Int, observed: Int)? {
  guard let text = try? String(contentsOfFile: resultsDirectory + "/notify-early-shoal.txt", encoding: .utf8)
  else { return nil }
  let numbers = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
  return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
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

func ratioText(_ value: Double?) -> String { value.map { String(format: "%.2fx", $0) } ?? "n/a" }

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
  /// Shoal, LMDB, SQLite.
  let cells: [Cell]
  /// How a figure is shown (ratios are always of the figures themselves).
  var show: (Double) -> String = time
  let target: String
  /// Whether Shoal meets the target, given its figure and its ratios to LMDB and SQLite (nil
  /// when they cannot be computed); no closure: the row has no target.
  let meets: ((_ shoal: Double, _ toLMDB: Double?, _ toSQLite: Double?) -> Bool)?
}

// As in CrossProcessShape (Sources/BenchEngines/PeerProtocol.swift).
let snapshots = 100_000.0
let writers = 4
let commitsPerWriter = 250
let contendedCommits = Double(writers * commitsPerWriter)
let contended = "contended-commits \(writers)x\(commitsPerWriter)"
let notify = "notify-latency / shoal"
let cannotNotify = Cell.text("cannot notify")

let rows: [Row] = [
  Row(
    label: "bulk load 1M, one txn", cells: engines.map { Cell(figure("bulk-load 1M / \($0)")) },
    target: "<=2x LMDB, <1x SQLite",
    meets: { _, lmdb, sqlite in lmdb.map { $0 <= 2 } == true && sqlite.map { $0 < 1 } == true }),
  Row(
    label: "100k point reads, warm", cells: engines.map { Cell(figure("point-reads 100k / \($0)")) },
    target: "<=1.5x LMDB", meets: { _, lmdb, _ in lmdb.map { $0 <= 1.5 } == true }),
  Row(
    label: "full scan 1M, key order", cells: engines.map { Cell(figure("full-scan 1M / \($0)")) },
    target: "<=1.5x LMDB", meets: { _, lmdb, _ in lmdb.map { $0 <= 1.5 } == true }),
  Row(
    label: "1k durable 1-entry commits", cells: engines.map { Cell(figure("durable-commits 1k / \($0)")) },
    target: "<=1x LMDB", meets: { _, lmdb, _ in lmdb.map { $0 <= 1 } == true }),
  Row(
    label: "\(writers) procs x \(commitsPerWriter) durable commits",
    cells: engines.map { Cell(figure("\(contended) / \($0)")) },
    show: { rate(contendedCommits / ($0 / 1e9)) },
    target: "(commits/s; none set)", meets: nil),
  Row(
    label: "snapshot: begin + end, per op",
    cells: engines.map { Cell(figure("snapshots 100k / \($0)").map { $0 / snapshots }) },
    target: "<=1 us", meets: { shoal, _, _ in shoal <= 1_000 }),
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
    target: "<=100 us", meets: { shoal, _, _ in shoal <= 100_000 }),
  Row(
    label: "other process notified, p99",
    cells: [Cell(figure(notify, publishToCallback, percentile: 99)), cannotNotify, cannotNotify],
    target: "<=1 ms", meets: { shoal, _, _ in shoal <= 1_000_000 }),
  Row(
    label: "file size after bulk load", cells: engines.map { Cell(fileSize($0)) }, show: size,
    target: "<=0.5x LMDB", meets: { _, lmdb, _ in lmdb.map { $0 <= 0.5 } == true }),
]

// MARK: - The table

var lines: [[String]] = []
var missing = false
var missed: [String] = []
var unchecked = 0

for row in rows {
  if row.cells.contains(where: { if case .missing = $0 { return true } else { return false } }) { missing = true }
  let shoal = row.cells[0].value
  func ratio(_ other: Cell) -> String {
    switch other {
    case .text: return "-"
    case .missing: return "n/a"
    case .value(let v): return ratioText(shoal.flatMap { v > 0 ? $0 / v : nil })
    }
  }
  let toLMDB = row.cells[1].value.flatMap { v in shoal.flatMap { v > 0 ? $0 / v : nil } }
  let toSQLite = row.cells[2].value.flatMap { v in shoal.flatMap { v > 0 ? $0 / v : nil } }
  var met = "-"
  if let meets = row.meets {
    if let shoal {
      let ok = meets(shoal, toLMDB, toSQLite)
      met = ok ? "yes" : "NO"
      if !ok { missed.append(row.label) }
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
  lines.append([row.label] + cells + [ratio(row.cells[1]), ratio(row.cells[2]), row.target, met])
}

// Per-operation figures and sample counts, under the table.
func perOperation(_ label: String, _ benchmark: String, _ operations: Double, _ name: String) -> String {
  let figures = engines.map { figure("\(benchmark) / \($0)").map { time($0 / operations) } ?? "n/a" }
  let counts = engines.map { String(iterations("\(benchmark) / \($0)")) }.joined(separator: "/")
  return "  \(label): \(figures.joined(separator: " / ")) per \(name) (median of \(counts) iterations)"
}
var notes = [
  perOperation("bulk load 1M, one txn", "bulk-load 1M", 1_000_000, "put"),
  perOperation("100k point reads, warm", "point-reads 100k", 100_000, "read"),
  perOperation("full scan 1M, key order", "full-scan 1M", 1_000_000, "entry"),
  perOperation("1k durable 1-entry commits", "durable-commits 1k", 1_000, "commit"),
  perOperation(
    "\(writers) procs x \(commitsPerWriter) durable commits", contended, contendedCommits,
    "commit, all writers together"),
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

let header = ["workload", "Shoal", "LMDB", "SQLite", "Shoal/LMDB", "Shoal/SQLite", "target", "met"]
let widths = header.indices.map { column in ([header] + lines).map { $0[column].count }.max() ?? 0 }
func render(_ row: [String]) -> String {
  row.indices.map { pad(row[$0], widths[$0], left: $0 == 0 || $0 >= 6) }.joined(separator: "  ")
}

print("")
print("Shoal vs LMDB vs SQLite: median wall-clock time per iteration (lower is better), unless the")
print("row says otherwise (per op, commits/s, latency percentile, file size).")
print("Ratios are Shoal / other in time (or size): below 1 means Shoal is faster (or its file")
print("smaller), also on the commits/s row.")
print("")
print(render(header))
print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
for line in lines { print(render(line)) }
print("")
print("Per operation, Shoal / LMDB / SQLite:")
for note in notes { print(note) }
print("")
if missing { print("Some figures are missing: a benchmark failed or was filtered out (see above).") }
if !missed.isEmpty {
  print("Shoal misses its target on: " + missed.joined(separator: "; ") + ".")
} else if unchecked == 0 {
  print("Shoal meets every target.")
}
if unchecked > 0 { print("\(unchecked) target(s) could not be checked.") }
exit(missing ? 1 : 0)
