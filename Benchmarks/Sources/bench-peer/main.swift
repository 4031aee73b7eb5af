// bench-peer: the other processes of the cross-process benchmarks
// (Benchmarks/StorageBenchmarks/CrossProcess.swift and Benchmarks/NotificationBenchmarks start
// them). Commands come one a line on stdin, answers go one a line on stdout; errors go to
// stderr and as `error <message>` on stdout, and the process exits 1.
//
//   bench-peer notify <file.shoal>
//       Opens the Shoal store (durability .unsafe) and prints `ready`. For each `c <i>`:
//       commits entry i in a transaction of its own, then prints
//       `t <i> <version> <ns before store.write> <ns after it returned>` (`Store.wallClock()`).
//   bench-peer commit <shoal|lmdb|sqlite> <directory> <writer> <count>
//       Opens the engine's database in <directory> (as durable as the other benchmarks) and
//       prints `ready`. For each `go <round>`: makes <count> single-entry durable commits
//       (keys of `contentionEntryIndex`), then prints `done <count> <elapsed ns>`.
//   bench-peer observe <file.realm> <latency|count>
//       Observes the Realm's `Results` of every `Quote` on a queue, for NotificationBenchmarks;
//       see Observe.swift.
//   bench-peer spin
//       A busy loop at nice 10 (the loaded contended-commits benchmark runs three beside its
//       writers): prints `spinning`, then spins until stdin closes or says `quit`.
//   bench-peer engine <shoal|lmdb|sqlite> <directory> <bulk-load|prepare|point-reads|scan>
//       Not used by the benchmarks: for profiling (`perf record`) one engine row. Loads the
//       1M-entry dataset into <directory> first unless it holds it, then runs the operation
//       once and prints `<ns per operation>`. `prepare` instead makes a fresh empty database
//       ready for `commit` peers (what the contention benchmark's setup does), printing
//       `prepared`.
//   bench-peer snapshots <file.shoal> <count>
//       Not used by the benchmarks: for profiling (`valgrind --tool=callgrind`) what the
//       snapshot row measures. Opens (creating, with one entry) the store, takes and releases
//       <count> snapshots one after the other, and prints `<ns per snapshot>`.
//
// A peer exits when its stdin closes (or on `quit`), and also when the process that started
// it dies (it checks its parent every 50 ms), so it never outlives a benchmark that failed.

import BenchEngines
import Foundation
import ShoalStorage
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

func say(_ line: String) {
  if !writeLine(line, to: STDOUT_FILENO) { exit(1) }  // the benchmark is gone
}

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("bench-peer \(getpid()): \(message)\n".utf8))
  say("error \(message)")
  exit(1)
}

/// Exits as soon as the parent process is gone (then this process is re-parented).
func watchParent() {
  let parent = getppid()
  let thread = Thread {
    while true {
      usleep(50_000)
      if getppid() != parent { _exit(2) }
    }
  }
  thread.name = "bench-peer-watchdog"
  thread.start()
}

/// The commands on stdin, until it closes or says `quit`.
func commands() -> AnyIterator<[Substring]> {
  var reader = LineReader(descriptor: STDIN_FILENO)
  return AnyIterator {
    do {
      let words = try reader.next(timeout: nil).split(separator: " ")
      return words.first == "quit" ? nil : words
    } catch LineReader.Failure.endOfFile {
      return nil
    } catch {
      fail("stdin: \(error)")
    }
  }
}

func notify(path: String) throws {
  let store = try Store.open(path: path, options: StoreOptions(durability: .unsafe, cacheSize: engineCacheBytes))
  defer { store.close() }
  say("ready")
  for words in commands() {
    guard words.count == 2, words[0] == "c", let i = Int(words[1]) else { fail("bad command \(words)") }
    let key = benchKey(i)
    let value = benchValue(i)
    let called = Store.wallClock()
    let version = try store.write { txn -> UInt64 in
      try txn.put(value, forKey: key, in: shoalKeyspace)
      return txn.version
    }
    let returned = Store.wallClock()
    say("t \(i) \(version) \(called) \(returned)")
  }
}

func commit(kind: EngineKind, directory: String, writer: Int, count: Int) throws {
  let engine = try openEngine(kind, in: directory)
  defer { engine.close() }
  say("ready")
  for words in commands() {
    guard words.count == 2, words[0] == "go", let round = Int(words[1]) else { fail("bad command \(words)") }
    // Built before the clock starts, like the single-process durable-commit benchmark.
    let indices = (0..<count).map { contentionEntryIndex(round: round, writer: writer, commit: $0) }
    let keys = indices.map(benchKey)
    let values = indices.map(benchValue)
    let start = monotonicSeconds()
    for j in 0..<count { try engine.commitOne(key: keys[j], value: values[j]) }
    let elapsed = monotonicSeconds() - start
    say("done \(count) \(Int(elapsed * 1e9))")
  }
}

func spin() {
  _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
  let running = Atomic<Bool>(true)
  let watcher = Thread {
    for _ in commands() {}
    running.store(false, ordering: .relaxed)
  }
  watcher.start()
  say("spinning")
  var x: UInt64 = 1
  while running.load(ordering: .relaxed) {
    for _ in 0..<10_000 { x = x &* 6_364_136_223_846_793_005 &+ 1 }
  }
  if x == 0 { say("") }  // keeps the loop from being optimized away
}

func engineRow(kind: EngineKind, directory: String, operation: String) throws {
  let loaded = FileManager.default.fileExists(atPath: directory + "/loaded")
  if !loaded || operation == "bulk-load" {
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
  }
  let engine = try openEngine(kind, in: directory)
  defer { engine.close() }
  let start = monotonicSeconds()
  switch operation {
  case "bulk-load":
    try engine.bulkLoad(dataset)
  case "prepare":
    // A fresh, empty database ready for `commit` peers (as the contention benchmark's setup).
    try engine.prepareForCommits()
    say("prepared")
    return
  case "point-reads":
    if !loaded { try engine.bulkLoad(dataset) }
    // Warm, as the benchmark measures: the last of five rounds.
    var started = monotonicSeconds()
    for _ in 0..<5 {
      started = monotonicSeconds()
      guard try engine.pointReads(dataset) == dataset.expectedReadSum else { fail("point reads: wrong sum") }
    }
    say("\(Int((monotonicSeconds() - started) * 1e9) / dataset.readOrder.count)")
    return
  case "scan":
    if !loaded { try engine.bulkLoad(dataset) }
    let started = monotonicSeconds()
    guard try engine.scan() == dataset.expectedScanSum else { fail("scan: wrong sum") }
    say("\(Int((monotonicSeconds() - started) * 1e9) / dataset.keys.count)")
    return
  default:
    fail("engine: the operation is bulk-load, prepare, point-reads or scan, not \(operation)")
  }
  _ = FileManager.default.createFile(atPath: directory + "/loaded", contents: Data())
  say("\(Int((monotonicSeconds() - start) * 1e9) / dataset.keys.count)")
}

func snapshots(path: String, count: Int) throws {
  let store = try Store.open(path: path)
  defer { store.close() }
  if try store.read({ try !$0.hasKeyspace("kv") }) {
    try store.write { txn in
      try txn.createKeyspace("kv")
      try txn.put([1], forKey: [1], in: "kv")
    }
  }
  var sum: UInt64 = 0
  let start = monotonicSeconds()
  for _ in 0..<count {
    let txn = try store.beginRead()
    sum &+= txn.version
    txn.close()
  }
  let elapsed = monotonicSeconds() - start
  say("\(Int(elapsed * 1e9) / max(count, 1)) \(sum == 0 ? "" : "ns")")
}

watchParent()
let arguments = CommandLine.arguments
do {
  switch arguments.count > 1 ? arguments[1] : "" {
  case "notify" where arguments.count == 3:
    try notify(path: arguments[2])
  case "observe" where arguments.count == 4:
    try observe(path: arguments[2], mode: arguments[3])
  case "engine" where arguments.count == 5:
    guard let kind = EngineKind(rawValue: arguments[2]) else { fail("bad arguments \(arguments)") }
    try engineRow(kind: kind, directory: arguments[3], operation: arguments[4])
  case "spin" where arguments.count == 2:
    spin()
  case "snapshots" where arguments.count == 4:
    guard let count = Int(arguments[3]) else { fail("bad arguments \(arguments)") }
    try snapshots(path: arguments[2], count: count)
  case "commit" where arguments.count == 6:
    guard let kind = EngineKind(rawValue: arguments[2]), let writer = Int(arguments[4]),
      let count = Int(arguments[5])
    else { fail("bad arguments \(arguments)") }
    try commit(kind: kind, directory: arguments[3], writer: writer, count: count)
  default:
    fail(
      "usage: bench-peer notify <file.shoal> | bench-peer commit <engine> <directory> <writer> <count> | "
        + "bench-peer observe <file.realm> <latency|count> | bench-peer snapshots <file.shoal> <count> | bench-peer spin | bench-peer engine <engine> <directory> <operation>"
    )
  }
} catch {
  fail("\(error)")
}
exit(0)
