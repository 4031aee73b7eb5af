// durable-commits-interleaved: the durable single-entry commits of every engine, in one
// process, interleaved in blocks of 100 commits whose engine order rotates each round. This
// machine's disk is shared and its sync time drifts over minutes (from under 200 µs to over
// 1 ms within one session); `durable-commits 1k / <engine>` measures the engines one after the
// other, minutes apart, so the drift lands on their ratio. Interleaved, every engine meets the
// same disk. Encrypted Shoal takes its turn too, for the encryption table's commit row (the
// same drift otherwise lands on encrypted / plain). Each iteration commits 1,000 new entries
// into each engine's copy of its 1M-entry fixture and appends one line to
// results/durable-interleaved.txt,
// "<engine>=<nanoseconds for its 1,000 commits> …", which bench-table summarises.

import BenchEngines
import Benchmark
import Foundation

func interleavedResultPath() -> String { benchRoot + "/results/durable-interleaved.txt" }

/// The engines the interleaved benchmark's setup opened.
final class InterleavedSession {
  var engines: [(kind: EngineKind, engine: Engine, directory: String)] = []
  var round = 0

  func close() throws {
    for (_, engine, directory) in engines {
      engine.close()
      try removeTree(directory)
    }
    engines = []
  }
}

func interleavedCommitBenchmark() {
  let session = InterleavedSession()
  let count = DatasetShape.commitCount
  let block = 100
  Benchmark(
    "durable-commits-interleaved 1k",
    configuration: .init(
      metrics: [.wallClock], warmupIterations: 1, maxDuration: .seconds(60), maxIterations: 7)
  ) { benchmark in
    do {
      // New keys each round, past the bulk-loaded ones; the same for every engine.
      let first = DatasetShape.entryCount + session.round * count
      session.round += 1
      let keys = (first..<first + count).map(benchKey)
      let values = (first..<first + count).map(benchValue)
      var nanoseconds = [UInt64](repeating: 0, count: session.engines.count)
      benchmark.startMeasurement()
      for round in 0..<(count / block) {
        for step in session.engines.indices {
          let e = (round + step) % session.engines.count
          let engine = session.engines[e].engine
          let start = DispatchTime.now().uptimeNanoseconds
          for j in round * block..<(round + 1) * block { try engine.commitOne(key: keys[j], value: values[j]) }
          nanoseconds[e] += DispatchTime.now().uptimeNanoseconds - start
        }
      }
      benchmark.stopMeasurement()
      // The first round is the warm-up iteration.
      guard session.round > 1 else { return }
      let line = zip(session.engines, nanoseconds).map { "\($0.kind.rawValue)=\($1)" }.joined(separator: " ")
      let path = interleavedResultPath()
      if !exists(path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
      try handle.seekToEnd()
      try handle.write(contentsOf: Data((line + "\n").utf8))
      try handle.close()
    } catch {
      benchmark.error("durable-commits-interleaved: \(error)")
    }
  } setup: {
    try removeTree(interleavedResultPath())
    try makeDirectory((interleavedResultPath() as NSString).deletingLastPathComponent)
    for kind in EngineKind.peers + [.shoalEncrypted] {
      // A copy of each 1M-entry fixture, so the commits go into full-size trees.
      let fixture = try ensureFixture(kind)
      let directory = workDirectory("commits-interleaved-\(kind.rawValue)")
      try removeTree(directory)
      try makeDirectory((directory as NSString).deletingLastPathComponent)
      try FileManager.default.copyItem(atPath: fixture, toPath: directory)
      session.engines.append((kind, try openEngine(kind, in: directory), directory))
    }
    settleDisk()
  } teardown: {
    try session.close()
  }
}
