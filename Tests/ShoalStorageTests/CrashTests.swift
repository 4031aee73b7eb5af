import ShoalTrials
import Testing

@testable import ShoalStorage

/// Power loss and corruption, through the same trials `shoal-stress` runs (make test runs
/// 1,000 of each in release mode; these run a few hundred in the debug test build).
@Suite struct CrashTests {
  @Test func powerLossNeverLosesAnAcknowledgedCommit() {
    var outcomes: [PowerLossTrial.Outcome] = []
    for seed in UInt64(5000)..<5200 { outcomes.append(PowerLossTrial.run(seed: seed)) }
    let failures = outcomes.compactMap(\.failure)
    #expect(failures.isEmpty, "\(failures.prefix(5))")
    // The trials must really exercise both recovery paths.
    #expect(outcomes.contains { $0.fellBack })
    #expect(outcomes.contains { $0.inFlightLanded })
  }

  /// Power cuts while the free space is stored as a chain of deltas: at every write or sync of
  /// the next ten commits, and with four ways of tearing what was not synced, the file
  /// reopens at the last acknowledged commit (or the one in flight), verifies, and takes
  /// another commit.
  @Test func powerLossWhileTheFreeSpaceIsStoredAsDeltas() throws {
    let origin = MemoryFile(path: "deltas")
    var model: [[UInt8]: [UInt8]] = [:]
    do {
      // Readers pinned across 40 commits at a time fragment the free space.
      let store = try Store(file: origin)
      try store.write { try $0.createKeyspace("k") }
      var reader: ReadTransaction?
      var round = 0
      while round < 400 || store.info().freeListBlocks < 3 {
        if round % 40 == 0 {
          reader?.close()
          reader = try store.beginRead()
        }
        let key = bytes(String(format: "key%04d", round % 300))
        let value = textValue(round, length: 100)
        try store.write { try $0.put(value, forKey: key, in: "k") }
        model[key] = value
        round += 1
        try #require(round < 2_000, "the free space never became a chain of deltas")
      }
      reader?.close()
    }
    func contents(_ store: Store) throws -> [[UInt8]: [UInt8]] {
      try store.read { txn in
        var out: [[UInt8]: [UInt8]] = [:]
        let cursor = try txn.keyspace("k").cursor()
        while let (key, value) = try cursor.next() { out[key] = value }
        return out
      }
    }
    var landed = 0
    for cut in 1...80 {
      let file = FaultInjectingFile(path: "deltas-\(cut)", contents: origin.contents, crashAfterOperations: cut)
      var acknowledged = model
      var inFlight: [[UInt8]: [UInt8]]?
      do {
        let store = try Store(file: file)
        for round in 0..<10 {
          let key = bytes(String(format: "key%04d", (round * 37 + cut) % 300))
          let value = textValue(10_000 + cut * 10 + round, length: 100)
          var next = acknowledged
          next[key] = value
          inFlight = next
          try store.write { try $0.put(value, forKey: key, in: "k") }
          acknowledged = next
          inFlight = nil
        }
      } catch StorageError.powerLoss {
        // Expected: the power was cut.
      }
      for tear in UInt64(0)..<4 {
        let reopened = try Store(file: MemoryFile(path: "deltas-\(cut)-\(tear)", contents: file.crashImage(seed: tear)))
        let found = try contents(reopened)
        #expect(found == acknowledged || found == inFlight, "cut \(cut), tear \(tear)")
        if found != acknowledged { landed += 1 }
        let report = reopened.verify()
        #expect(report.isOK, "cut \(cut), tear \(tear): \(report.problems.prefix(3))")
        try reopened.write { try $0.put([1], forKey: bytes("after"), in: "k") }
        #expect(reopened.verify().isOK)
      }
    }
    #expect(landed > 0, "some commit in flight landed whole")
  }

  @Test func corruptBytesGiveTypedErrorsOrCorrectReads() throws {
    let trials = try CorruptionTrials(seed: 77)
    var failures: [String] = []
    for seed in UInt64(0)..<200 { if let f = trials.run(seed: seed) { failures.append(f) } }
    #expect(failures.isEmpty, "\(failures.prefix(5))")
  }

  @Test func aCrashBetweenCommitsOnARealFileLosesNothing() throws {
    // Unsynced writes are what power loss takes; after a clean commit with full durability
    // there are none, so a copy of the file as it is on disk holds every commit.
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    try store.write { txn in
      try txn.createKeyspace("k")
      for i in 0..<100 { try txn.put(textValue(i, length: 300), forKey: bytes("\(i)"), in: "k") }
    }
    let copy = try Store(
      file: MemoryFile(
        contents: PosixFile(path: dir.file(), create: false, readOnly: true).read(
          count: Int(fileSize(dir.file())), at: 0)))
    #expect(try copy.read { try $0.count(in: "k") } == 100)
    #expect(copy.verify().isOK)
  }
}
