// objects-encryption-interleaved: the object layer's read workloads on the encrypted file and
// on the plain one, in one process, interleaved. The separate rows (`objects-indexed-equality
// 10q / shoal-encrypted` and `/ shoal`) run minutes apart, and this shared machine changes
// between them by more than encryption costs a warm read (both files execute the same
// instructions once their nodes are cached): their ratio moved between 1.19x and 1.65x from
// run to run. Here each iteration runs every workload on both files one after the other, in an
// order that alternates, and appends one line to results/objects-encryption-interleaved.txt,
// "<workload>:<side>=<nanoseconds> …", which bench-table summarises for the encryption table.

import Benchmark
import Foundation
import ObjectShared

func encryptionInterleavedResultPath() -> String { benchRoot + "/results/objects-encryption-interleaved.txt" }

/// A read workload of the object benchmarks, by the name its interleaved results use.
struct InterleavedReadWorkload: Sendable {
  let name: String
  /// One pass; false when it read something other than what the dataset says.
  let pass: @Sendable (ObjectEngine) throws -> Bool
}

let interleavedReadWorkloads: [InterleavedReadWorkload] = [
  InterleavedReadWorkload(name: "pk-lookups") {
    try $0.lookups(objectData.lookupIDs) == objectData.expectedLookupCents
  },
  InterleavedReadWorkload(name: "indexed-equality") {
    try $0.categoryQueries(objectData.queriedCategories) == objectData.expectedCategoryTallies
  },
  InterleavedReadWorkload(name: "range-sorted") {
    try $0.rangeQueries(objectData.priceRanges) == objectData.expectedRangeTallies
  },
  InterleavedReadWorkload(name: "indexed-range-sorted") {
    try $0.dateRangeQueries(objectData.dateRanges) == objectData.expectedDateRangeTallies
  },
]

/// The two sides the setup opened, plain first.
final class EncryptionInterleavedSession {
  var engines: [(kind: ObjectEngineKind, engine: ObjectEngine)] = []
  var iteration = 0

  func close() throws {
    for (_, engine) in engines { try engine.close() }
    engines = []
  }
}

func encryptionInterleavedBenchmark() {
  let session = EncryptionInterleavedSession()
  Benchmark(
    "objects-encryption-interleaved 4w",
    configuration: .init(metrics: [.wallClock], warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 20)
  ) { benchmark in
    do {
      let order = session.iteration % 2 == 0 ? [0, 1] : [1, 0]
      session.iteration += 1
      var fields: [String] = []
      benchmark.startMeasurement()
      for workload in interleavedReadWorkloads {
        for e in order {
          let (kind, engine) = session.engines[e]
          let start = DispatchTime.now().uptimeNanoseconds
          let right = try workload.pass(engine)
          let elapsed = DispatchTime.now().uptimeNanoseconds - start
          guard right else { throw BenchError("\(workload.name) on \(kind.rawValue) read the wrong objects") }
          fields.append("\(workload.name):\(kind.rawValue)=\(elapsed)")
        }
      }
      benchmark.stopMeasurement()
      // The first iteration is the warm-up.
      guard session.iteration > 1 else { return }
      let path = encryptionInterleavedResultPath()
      if !exists(path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
      try handle.seekToEnd()
      try handle.write(contentsOf: Data((fields.joined(separator: " ") + "\n").utf8))
      try handle.close()
    } catch {
      benchmark.error("objects-encryption-interleaved: \(error)")
    }
  } setup: {
    try removeTree(encryptionInterleavedResultPath())
    try makeDirectory((encryptionInterleavedResultPath() as NSString).deletingLastPathComponent)
    for kind in [ObjectEngineKind.shoal, .shoalEncrypted] {
      let engine = try openObjectEngine(kind, in: try ensureFixture(kind))
      session.engines.append((kind, engine))
      // A first pass of each workload warms the side's caches, as the separate rows' setup does.
      for workload in interleavedReadWorkloads where try !workload.pass(engine) {
        throw BenchError("\(workload.name) on \(kind.rawValue) read the wrong objects")
      }
    }
  } teardown: {
    try session.close()
  }
}
