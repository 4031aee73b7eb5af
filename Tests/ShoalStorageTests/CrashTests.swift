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
