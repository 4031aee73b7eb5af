// bench-table: prints the one table of `make bench`.
//
//   bench-table <influx.csv> <results-dir>
//
// Reads the benchmark run's Influx export (`--format influx`: one line per benchmark, metric
// and percentile, values unscaled — nanoseconds for wall-clock time) and the file sizes the
// bulk-load benchmarks wrote to <results-dir>/filesize-<engine>.txt; prints each workload's
// median for Shoal, LMDB and SQLite, Shoal's ratio to each (< 1: Shoal is faster or smaller)
// and whether Shoal meets its target. Exits 1 when a figure is missing.

import Foundation

let engines = ["shoal", "lmdb", "sqlite"]

struct Workload {
  /// The benchmark name before " / <engine>".
  let benchmark: String
  let label: String
  /// Operations per iteration, for the per-operation line under the table.
  let operations: Int
  let operationName: String
  let target: String
  /// Whether Shoal meets the target, given Shoal/LMDB and Shoal/SQLite.
  let meets: (Double, Double) -> Bool
}

let workloads = [
  Workload(
    benchmark: "bulk-load 1M", label: "bulk load 1M, one txn", operations: 1_000_000, operationName: "put",
    target: "<=2x LMDB, <1x SQLite", meets: { lmdb, sqlite in lmdb <= 2 && sqlite < 1 }),
  Workload(
    benchmark: "point-reads 100k", label: "100k point reads, warm", operations: 100_000, operationName: "read",
    target: "<=1.5x LMDB", meets: { lmdb, _ in lmdb <= 1.5 }),
  Workload(
    benchmark: "full-scan 1M", label: "full scan 1M, key order", operations: 1_000_000, operationName: "entry",
    target: "<=1.5x LMDB", meets: { lmdb, _ in lmdb <= 1.5 }),
  Workload(
    benchmark: "durable-commits 1k", label: "1k durable 1-entry commits", operations: 1_000, operationName: "commit",
    target: "<=1x LMDB", meets: { lmdb, _ in lmdb <= 1 }),
]

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

struct Measured {
  var medianWallClockNanoseconds: Int?
  var iterations = 0
}

/// Benchmark name -> its median wall-clock time and iteration count.
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
  guard metric == "Time(wallclock)" else { continue }
  measured[test, default: Measured()].iterations = iterations
  if percentile == 50 { measured[test, default: Measured()].medianWallClockNanoseconds = value }
}

func fileSize(_ engine: String) -> Int? {
  let path = resultsDirectory + "/filesize-\(engine).txt"
  guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
  return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
}

// MARK: - Formatting

func threeDigits(_ value: Double) -> String {
  value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
}

func time(_ nanoseconds: Double) -> String {
  switch nanoseconds {
  case ..<1e3: return threeDigits(nanoseconds) + " ns"
  case ..<1e6: return threeDigits(nanoseconds / 1e3) + " us"
  case ..<1e9: return threeDigits(nanoseconds / 1e6) + " ms"
  default: return threeDigits(nanoseconds / 1e9) + " s"
  }
}

func size(_ bytes: Int) -> String { threeDigits(Double(bytes) / 1_048_576) + " MiB" }

func ratio(_ shoal: Int?, _ other: Int?) -> Double? {
  guard let shoal, let other, other > 0 else { return nil }
  return Double(shoal) / Double(other)
}

func ratioText(_ value: Double?) -> String { value.map { String(format: "%.2fx", $0) } ?? "n/a" }

func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
  let gap = String(repeating: " ", count: max(0, width - text.count))
  return left ? text + gap : gap + text
}

// MARK: - The table

var rows: [[String]] = []
var perOperation: [String] = []
var missing = false
var missed: [String] = []
var unchecked = 0

for workload in workloads {
  let figures = engines.map { measured["\(workload.benchmark) / \($0)"]?.medianWallClockNanoseconds }
  if figures.contains(where: { $0 == nil }) { missing = true }
  let toLMDB = ratio(figures[0], figures[1])
  let toSQLite = ratio(figures[0], figures[2])
  let met = toLMDB.flatMap { l in toSQLite.map { s in workload.meets(l, s) } }
  if met == false { missed.append(workload.label) }
  if met == nil { unchecked += 1 }
  rows.append(
    [workload.label] + figures.map { $0.map { time(Double($0)) } ?? "n/a" }
      + [ratioText(toLMDB), ratioText(toSQLite), workload.target, met.map { $0 ? "yes" : "NO" } ?? "?"])
  let counts = engines.map { String(measured["\(workload.benchmark) / \($0)"]?.iterations ?? 0) }.joined(separator: "/")
  let rates = figures.map { $0.map { time(Double($0) / Double(workload.operations)) } ?? "n/a" }.joined(separator: " / ")
  perOperation.append("  \(workload.label): \(rates) per \(workload.operationName) (median of \(counts) iterations)")
}

let sizes = engines.map(fileSize)
if sizes.contains(where: { $0 == nil }) { missing = true }
let sizeToLMDB = ratio(sizes[0], sizes[1])
let sizeToSQLite = ratio(sizes[0], sizes[2])
let sizeMet = sizeToLMDB.map { $0 <= 0.5 }
if sizeMet == false { missed.append("file size after bulk load") }
if sizeMet == nil { unchecked += 1 }
rows.append(
  ["file size after bulk load"] + sizes.map { $0.map(size) ?? "n/a" }
    + [ratioText(sizeToLMDB), ratioText(sizeToSQLite), "<=0.5x LMDB", sizeMet.map { $0 ? "yes" : "NO" } ?? "?"])

let header = ["workload", "Shoal", "LMDB", "SQLite", "Shoal/LMDB", "Shoal/SQLite", "target", "met"]
let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
func render(_ row: [String]) -> String {
  row.indices.map { pad(row[$0], widths[$0], left: $0 == 0 || $0 >= 6) }.joined(separator: "  ")
}

print("")
print("Shoal vs LMDB vs SQLite: median wall-clock time per iteration (lower is better).")
print("Ratios are Shoal / other: below 1 means Shoal is faster (or its file smaller).")
print("")
print(render(header))
print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
for row in rows { print(render(row)) }
print("")
print("Per operation, Shoal / LMDB / SQLite:")
for line in perOperation { print(line) }
print("")
if missing { print("Some figures are missing: a benchmark failed or was filtered out (see above).") }
if !missed.isEmpty {
  print("Shoal misses its target on: " + missed.joined(separator: "; ") + ".")
} else if unchecked == 0 {
  print("Shoal meets every target.")
}
if unchecked > 0 { print("\(unchecked) target(s) could not be checked.") }
exit(missing ? 1 : 0)
