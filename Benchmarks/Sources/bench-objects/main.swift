// bench-objects: Shoal's object workloads of ObjectBenchmarks, one at a time in a loop, for
// profiling (`perf record`, `valgrind --tool=callgrind`). Not run by the benchmarks.
//
//   bench-objects <directory> <operation> [rounds]
//
// Inserts the benchmark's 100k objects into <directory>/items.realm first unless it holds them
// (ShoalObjects, as ObjectBenchmarks does), then runs <operation> <rounds> times (default 100)
// and prints the median nanoseconds per round:
//   lookups      the 10k primary-key lookups
//   category     the 10 indexed == queries
//   range        the 5 range queries on the unindexed price, sorted
//   date-range   the 5 range queries on the indexed createdAt, sorted
//   live-sorted, live-unsorted, live-filtered
//                one object's price changed per durable commit, observed sorted by price (or
//                unsorted, or `price >= 500` sorted) on a queue: the median from just before
//                `commitWrite` to the callback, over <rounds> commits, on a copy of the
//                objects (<directory>-live)
//   live-async   as live-unsorted, through the `changes()` async sequence
// Every round is checked against what the dataset says it must read. With
// SHOAL_BENCH_ENCRYPTED=1 the file is encrypted with the object benchmarks' key (use another
// <directory>: a plain fixture does not open with a key).

import Dispatch
import Foundation
import ObjectShared
import Shoal
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("bench-objects: \(message)\n".utf8))
  exit(1)
}

func nanoseconds() -> Int {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Int(ts.tv_sec) * 1_000_000_000 + Int(ts.tv_nsec)
}

func median(_ values: [Int]) -> Int { values.sorted()[values.count / 2] }

/// The key of ObjectBenchmarks' encrypted rows (`objectsEncryptionKey`) when
/// SHOAL_BENCH_ENCRYPTED=1, else nil.
let encryptionKey: Data? =
  ProcessInfo.processInfo.environment["SHOAL_BENCH_ENCRYPTED"] == "1"
  ? Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }) : nil

/// Opens the objects in `directory`, inserting them first when the directory lacks them.
func openFixture(_ directory: String) throws -> ShoalObjects {
  let marker = directory + "/loaded"
  if !FileManager.default.fileExists(atPath: marker) {
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let engine = try ShoalObjects(directory: directory, encryptionKey: encryptionKey)
    engine.prepareInsert(objectData)
    try engine.insertPrepared()
    try engine.settle()
    try engine.close()
    _ = FileManager.default.createFile(atPath: marker, contents: nil)
  }
  return try ShoalObjects(directory: directory, encryptionKey: encryptionKey)
}

/// Runs `body` `rounds` times; the median time of a round.
func rounds(_ count: Int, _ body: () throws -> Void) rethrows -> Int {
  var times: [Int] = []
  for _ in 0..<count {
    let start = nanoseconds()
    try body()
    times.append(nanoseconds() - start)
  }
  return median(times)
}

/// The live-query workload: commit -> callback per commit, `count` commits.
func live(_ engine: ShoalObjects, query: String, count: Int, async: Bool = false) throws -> Int {
  guard let realm = engine.realm else { fail("the Realm is closed") }
  var results = realm.objects(Item.self)
  if query == "live-filtered" { results = results.filter("price >= %@", 500.0) }
  if query != "live-unsorted" && query != "live-async" { results = results.sorted(byKeyPath: "price") }
  let called = Mutex(0)
  let arrived = DispatchSemaphore(value: 0)
  let queue = DispatchQueue(label: "bench-objects observer")
  var token: NotificationToken?
  var consumer: Task<Void, Never>?
  if async {
    let changes = results.changes()
    consumer = Task.detached {
      for await change in changes {
        if case .update = change { called.withLock { $0 = nanoseconds() } }
        arrived.signal()
      }
    }
  } else {
    token = results.observe(on: queue) { change in
      if case .update = change { called.withLock { $0 = nanoseconds() } }
      arrived.signal()
    }
  }
  defer {
    token?.invalidate()
    consumer?.cancel()
  }
  arrived.wait()  // .initial
  var times: [Int] = []
  for seq in 0..<count {
    let id = objectData.ids[(seq &* 7_919) % objectData.ids.count]
    realm.beginWrite()
    guard let item = realm.object(ofType: Item.self, forPrimaryKey: id) else { fail("no item \(id)") }
    item.price = 500 + Double(seq % 49_999) / 100
    let before = nanoseconds()
    try realm.commitWrite()
    arrived.wait()
    times.append(called.withLock { $0 } - before)
  }
  return median(times)
}

let arguments = CommandLine.arguments
guard arguments.count == 3 || arguments.count == 4 else {
  fail(
    "usage: bench-objects <directory> <lookups|category|range|date-range|live-sorted|live-unsorted|live-filtered> [rounds]"
  )
}
let operation = arguments[2]
let count = arguments.count == 4 ? (Int(arguments[3]) ?? 100) : 100
do {
  var engine = try openFixture(arguments[1])
  if operation.hasPrefix("live") {
    // The live workloads change prices: they work on a copy, so the fixture stays as the
    // dataset says.
    try engine.close()
    let copy = arguments[1] + "-live"
    try? FileManager.default.removeItem(atPath: copy)
    try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: arguments[1] + "/items.realm", toPath: copy + "/items.realm")
    engine = try ShoalObjects(directory: copy, encryptionKey: encryptionKey)
  }
  let data = objectData
  let perRound: Int
  switch operation {
  case "lookups":
    perRound = try rounds(count) {
      guard try engine.lookups(data.lookupIDs) == data.expectedLookupCents else { fail("lookups: wrong sum") }
    }
  case "category":
    perRound = try rounds(count) {
      guard try engine.categoryQueries(data.queriedCategories) == data.expectedCategoryTallies else {
        fail("category: wrong tallies")
      }
    }
  case "range":
    perRound = try rounds(count) {
      guard try engine.rangeQueries(data.priceRanges) == data.expectedRangeTallies else { fail("range: wrong tallies") }
    }
  case "date-range":
    perRound = try rounds(count) {
      guard try engine.dateRangeQueries(data.dateRanges) == data.expectedDateRangeTallies else {
        fail("date-range: wrong tallies")
      }
    }
  case "live-sorted", "live-unsorted", "live-filtered":
    perRound = try live(engine, query: operation, count: count)
  case "live-async":
    perRound = try live(engine, query: operation, count: count, async: true)
  default:
    fail("unknown operation \(operation)")
  }
  try engine.close()
  print(perRound)
} catch {
  fail("\(error)")
}
