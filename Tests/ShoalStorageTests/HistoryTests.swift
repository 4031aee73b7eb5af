import Testing

@testable import ShoalStorage

@Suite struct HistoryTests {
  /// Pending changes behave as a dictionary whatever the order keys come in: ascending runs
  /// (kept as a sorted array), repeats, withdrawals and keys out of order (a dictionary after).
  @Test(arguments: [1, 2, 3, 4]) func pendingChangesMatchADictionary(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    var changes = PendingChanges()
    var model: [[UInt8]: PendingChange] = [:]
    var next: UInt64 = 0
    for step in 0..<3_000 {
      let key: [UInt8]
      // Seed 1: a long ascending run first (the sorted array), then anything.
      switch seed == 1 && step < 2_000 ? 0 : rng.next() % 10 {
      case 0..<6:  // mostly ascending new keys, as inserts of new objects make
        next += 1 + rng.next() % 3
        key = withUnsafeBytes(of: next.bigEndian, Array.init)
      default:  // an earlier key, or one never seen
        key = withUnsafeBytes(of: (rng.next() % (next + 5)).bigEndian, Array.init)
      }
      let value: PendingChange? =
        rng.next() % 5 != 0 ? PendingChange(kind: .update, payload: [UInt8(step % 256)]) : nil
      changes[key] = value
      model[key] = value
      #expect(changes[key]?.payload == model[key]?.payload)
    }
    #expect(changes.count == model.count)
    let sorted = changes.sorted()
    #expect(sorted.map(\.key) == model.keys.sorted { compareBytes($0, $1) < 0 })
    #expect(sorted.allSatisfy { model[$0.key]?.payload == $0.change.payload })
  }

  @Test func changeRecordsSayWhatEachCommitDid() throws {
    let store = try Store(file: MemoryFile())
    let reader = try store.beginRead()  // keeps every record from version 0 on
    defer { reader.close() }
    try store.write { txn in
      try txn.createKeyspace("people")
      try txn.createKeyspace("quiet", tracksChanges: false)
      try txn.put(bytes("a"), forKey: bytes("1"), in: "people", changeInfo: [0b0001])
      try txn.put(bytes("b"), forKey: bytes("2"), in: "people")
      try txn.put(bytes("x"), forKey: bytes("1"), in: "quiet")
    }
    try store.write { txn in
      try txn.put(bytes("c"), forKey: bytes("0"), in: "people", changeInfo: [0b1000])
    }
    try store.write { txn in
      try txn.put(bytes("a2"), forKey: bytes("1"), in: "people", changeInfo: [0b0010])
      try txn.put(bytes("a3"), forKey: bytes("1"), in: "people", changeInfo: [0b0100, 1])
      try txn.delete(bytes("2"), in: "people")
      try txn.put(bytes("c"), forKey: bytes("3"), in: "people")
      try txn.delete(bytes("3"), in: "people")  // inserted and deleted: no change at all
      try txn.put(bytes("y"), forKey: bytes("1"), in: "quiet")
    }
    try store.write { txn in
      try txn.delete(bytes("1"), in: "people")
      try txn.put(bytes("back"), forKey: bytes("1"), in: "people", changeInfo: [8])  // delete + put = update
    }
    try store.write { txn in try txn.clear("people") }
    try store.write { txn in try txn.dropKeyspace("people") }

    var records = try store.changes(from: 0)
    #expect(records.map(\.version) == [1, 2, 3, 4, 5, 6])
    let inserted = records.remove(at: 1)
    #expect(inserted.keyspaces.map(\.keyspace) == ["people"])
    #expect(inserted.keyspaces[0].changes == [KeyChange(kind: .insert, key: bytes("0"), payload: [0b1000])])
    #expect(records[0].keyspaces.map(\.keyspace) == ["people", "quiet"])
    // A keyspace created by the commit: its entries are all insertions, not listed.
    #expect(records[0].keyspaces[0].created)
    #expect(records[0].keyspaces[0].changes.isEmpty)
    #expect(records[0].keyspaces[1].changes.isEmpty, "an untracked keyspace records only its creation")
    #expect(records[1].keyspaces.map(\.keyspace) == ["people"])
    #expect(
      records[1].keyspaces[0].changes == [
        KeyChange(kind: .update, key: bytes("1"), payload: [0b0110, 1]), KeyChange(kind: .delete, key: bytes("2")),
      ])
    #expect(records[2].keyspaces[0].changes == [KeyChange(kind: .update, key: bytes("1"), payload: [8])])
    #expect(records[3].keyspaces[0].cleared && records[3].keyspaces[0].changes.isEmpty)
    #expect(records[4].keyspaces[0].dropped)
    // A range in the middle.
    #expect(try store.changes(from: 2, to: 3).map(\.version) == [3])
    #expect(throws: StorageError.versionNotFound(9, latest: 6)) { try store.changes(from: 2, to: 9) }
  }

  @Test func recordsAreTrimmedWhenNoPinNeedsThem() throws {
    let store = try Store(file: MemoryFile())
    try store.write { try $0.createKeyspace("k") }
    for i in 0..<5 { try store.write { try $0.put([UInt8(i)], forKey: [UInt8(i)], in: "k") } }
    // Nobody pinned anything: only the newest record is kept.
    #expect(throws: StorageError.historyUnavailable(from: 1, to: 6, oldestAvailable: 6)) { try store.changes(from: 1) }
    #expect(try store.changes(from: 5).count == 1)

    let pin = try store.beginRead()  // at version 6
    for i in 0..<5 { try store.write { try $0.put([UInt8(i)], forKey: [UInt8(i + 10)], in: "k") } }
    #expect(try store.changes(from: 6).map(\.version) == [7, 8, 9, 10, 11])
    pin.close()
    try store.write { try $0.put([1], forKey: [99], in: "k") }
    #expect(throws: StorageError.self) { try store.changes(from: 6) }
    #expect(store.info().historyRecords == 1)
  }
}
