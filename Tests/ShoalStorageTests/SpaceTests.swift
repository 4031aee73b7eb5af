import Testing

@testable import ShoalStorage

/// Free space is reused only when no pinned version can reach it, so the file stays bounded
/// under churn, grows while a reader holds an old version, and stops growing once it lets go.
@Suite struct SpaceTests {
  static let keys = 300

  func update(_ store: Store, round: Int) throws {
    try store.write { txn in
      let i = round % SpaceTests.keys
      try txn.put(textValue(round, length: 100), forKey: bytes(String(format: "key%04d", i)), in: "k")
    }
  }

  func seed(_ store: Store) throws {
    try store.write { txn in
      try txn.createKeyspace("k")
      for i in 0..<SpaceTests.keys {
        try txn.put(textValue(i, length: 100), forKey: bytes(String(format: "key%04d", i)), in: "k")
      }
    }
  }

  @Test func tenThousandUpdateCommitsKeepTheFileBounded() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file(), options: StoreOptions(durability: .unsafe))
    try seed(store)
    var peak: UInt64 = 0
    for round in 0..<10_000 {
      // A short-lived reader around every commit.
      let reader = try store.beginRead()
      try update(store, round: round)
      _ = try reader.get(bytes("key0001"), in: "k")
      reader.close()
      if round % 500 == 0 { peak = max(peak, fileSize(dir.file())) }
    }
    peak = max(peak, fileSize(dir.file()))
    let info = store.info()
    // Stated bound: the data area never exceeds 4 times the live bytes (plus the fixed 12 KiB
    // of header and meta slots).
    let bound = FileLayout.dataStart + 4 * info.liveBytes
    #expect(peak <= bound, "peak file size \(peak) exceeds \(bound) (live \(info.liveBytes))")
    #expect(store.verify().isOK)
    #expect(store.latestVersion == 10_001)
  }

  @Test func aLongLivedReaderMakesTheFileGrowAndReleasingItLetsSpaceBeReused() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file(), options: StoreOptions(durability: .unsafe))
    try seed(store)
    for round in 0..<200 { try update(store, round: round) }
    let steady = fileSize(dir.file())

    let pinned = try store.beginRead()
    let pinnedValue = try pinned.get(bytes("key0007"), in: "k")
    for round in 200..<2200 { try update(store, round: round) }
    let grown = fileSize(dir.file())
    #expect(grown > steady * 3, "a pinned version must keep its blocks: \(steady) -> \(grown)")
    // The pinned snapshot still reads exactly its version.
    #expect(try pinned.get(bytes("key0007"), in: "k") == pinnedValue)
    #expect(store.activeVersionCount == 2)

    pinned.close()
    for round in 2200..<4200 { try update(store, round: round) }
    let after = fileSize(dir.file())
    #expect(after <= grown, "after the release the freed space is reused: \(grown) -> \(after)")
    // The allocated data area shrank back: the reader's old blocks were reused or returned.
    #expect(store.latestMeta.fileEnd < grown / 2, "data area \(store.latestMeta.fileEnd) of a \(grown)-byte file")
    #expect(store.verify().isOK)
  }
}
