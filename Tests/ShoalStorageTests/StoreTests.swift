import Dispatch
import Foundation
import Synchronization
import Testing

@testable import ShoalStorage

@Suite struct StoreTests {
  /// A large commit compresses its new leaves on several cores before placing them in order
  /// (`CommitWriter.precode`); leaves holding values to store as blobs are left to the writer.
  /// Plain and encrypted, the file verifies and reads back every value, after a reopen too.
  @Test(arguments: [false, true])
  func aLargeCommitWritesWhatItWasGiven(encrypted: Bool) throws {
    let dir = TemporaryDirectory()
    let key: [UInt8]? = encrypted ? (0..<64).map { UInt8($0) } : nil
    var rng = SplitMix64(seed: encrypted ? 2 : 1)
    var expected: [[UInt8]: [UInt8]] = [:]
    for i in 0..<20_000 {
      let length = i % 997 == 0 ? 3_000 : 20 + Int(rng.next() % 200)
      expected[bytes(String(rng.next() % 1_000_000_000))] = textValue(i, length: length)
    }
    do {
      let store = try Store.open(path: dir.file(), options: StoreOptions(encryptionKey: key))
      try store.write { txn in
        try txn.createKeyspace("k")
        for (k, v) in expected { try txn.put(v, forKey: k, in: "k") }
      }
      #expect(store.verify().isOK)
      store.close()
    }
    let store = try Store.open(path: dir.file(), options: StoreOptions(encryptionKey: key))
    #expect(store.verify().isOK)
    let txn = try store.beginRead()
    defer { txn.close() }
    #expect(try txn.count(in: "k") == UInt64(expected.count))
    var wrong = 0
    for (k, v) in expected where try txn.get(k, in: "k") != v { wrong += 1 }
    #expect(wrong == 0)
  }

  @Test func putGetDeleteSurviveReopen() throws {
    let dir = TemporaryDirectory()
    do {
      let store = try Store.open(path: dir.file())
      try store.write { txn throws in
        try txn.createKeyspace("people")
        try txn.put(bytes("Ada"), forKey: bytes("p1"), in: "people")
        try txn.put(bytes("Grace"), forKey: bytes("p2"), in: "people")
        try txn.put(bytes("Linus"), forKey: bytes("p3"), in: "people")
      }
      try store.write { txn throws in
        try txn.put(bytes("Grace Hopper"), forKey: bytes("p2"), in: "people")
        #expect(try txn.delete(bytes("p3"), in: "people"))
        #expect(try !txn.delete(bytes("nope"), in: "people"))
      }
      #expect(store.latestVersion == 2)
    }
    let store = try Store.open(path: dir.file())
    try store.read { txn throws in
      #expect(txn.version == 2)
      #expect(try txn.get(bytes("p1"), in: "people") == bytes("Ada"))
      #expect(try txn.get(bytes("p2"), in: "people") == bytes("Grace Hopper"))
      #expect(try txn.get(bytes("p3"), in: "people") == nil)
      #expect(try txn.count(in: "people") == 2)
      #expect(try txn.keyspaceNames() == ["people"])
    }
    #expect(store.verify().isOK)
  }

  /// Thousands of random operations over several transactions, checked after each commit
  /// against a dictionary: point reads, scans both ways, counts, ranges, positions.
  @Test(arguments: [1, 2, 3])
  func randomOperationsMatchAModel(seed: UInt64) throws {
    let store = try Store(file: MemoryFile(), options: StoreOptions(cacheSize: 256 << 10))
    var model: [[UInt8]: [UInt8]] = [:]
    var rng = SplitMix64(seed: seed)
    try store.write { try $0.createKeyspace("k") }
    for round in 0..<25 {
      try store.write { txn throws in
        for _ in 0..<400 {
          let n = Int.random(in: 0..<3000, using: &rng)
          let key =
            Array(String(format: "%08d", n).utf8) + (n % 3 == 0 ? Array(repeating: UInt8(n % 251), count: n % 40) : [])
          if Int.random(in: 0..<10, using: &rng) < 7 {
            let length =
              Int.random(in: 0..<10, using: &rng) == 0
              ? Int.random(in: 1600..<9000, using: &rng) : Int.random(in: 0..<300, using: &rng)
            let value = textValue(n + round, length: length)
            try txn.put(value, forKey: key, in: "k")
            model[key] = value
          } else {
            let existed = model.removeValue(forKey: key) != nil
            #expect(try txn.delete(key, in: "k") == existed)
          }
        }
        // The transaction sees its own writes.
        #expect(try txn.count(in: "k") == UInt64(model.count))
      }
      let sorted = model.keys.sorted { compareBytes($0, $1) < 0 }
      try store.read { txn throws in
        let ks = try txn.keyspace("k")
        #expect(ks.count == UInt64(model.count))
        let forward = try scan(ks.cursor())
        #expect(forward.map(\.0) == sorted)
        #expect(forward.allSatisfy { model[$0.0] == $0.1 })
        #expect(try scan(ks.cursor(reverse: true)).map(\.0) == sorted.reversed())
        for _ in 0..<20 {
          let a = sorted.randomElement(using: &rng) ?? []
          let b = sorted.randomElement(using: &rng) ?? []
          let (lo, hi) = compareBytes(a, b) <= 0 ? (a, b) : (b, a)
          let range = KeyRange(
            lower: lo, lowerInclusive: Bool.random(using: &rng), upper: hi, upperInclusive: Bool.random(using: &rng))
          let expected = sorted.filter { k in
            let cl = compareBytes(k, lo)
            let ch = compareBytes(k, hi)
            return (range.lowerInclusive ? cl >= 0 : cl > 0) && (range.upperInclusive ? ch <= 0 : ch < 0)
          }
          #expect(try scan(ks.cursor(range: range)).map(\.0) == expected)
          #expect(try scan(ks.cursor(range: range, reverse: true)).map(\.0) == expected.reversed())
          #expect(try ks.count(in: range) == UInt64(expected.count))
          if !sorted.isEmpty {
            let i = Int.random(in: 0..<sorted.count, using: &rng)
            #expect(try ks.entry(at: UInt64(i))?.key == sorted[i])
          }
        }
      }
    }
    let report = store.verify()
    #expect(report.isOK, "\(report.problems)")
    #expect(report.info.branchNodes > 0)
  }

  /// Commits of one to three changes, as most commits are: nodes on the path stay in their
  /// lazy form (image plus edits), and reads inside the transaction go through them.
  @Test(arguments: [7, 8])
  func smallCommitsMatchAModel(seed: UInt64) throws {
    let directory = TemporaryDirectory()
    var store = try Store.open(path: directory.file(), options: StoreOptions(durability: .unsafe))
    var model: [[UInt8]: [UInt8]] = [:]
    var rng = SplitMix64(seed: seed)
    func key(_ n: Int) -> [UInt8] { Array(String(format: "%06d", n).utf8) }
    try store.write { txn in
      try txn.createKeyspace("k")
      for n in stride(from: 0, to: 6000, by: 2) {
        model[key(n)] = textValue(n, length: 90)
        try txn.put(textValue(n, length: 90), forKey: key(n), in: "k")
      }
    }
    for round in 0..<600 {
      if round == 300 {
        store.close()
        store = try Store.open(path: directory.file(), options: StoreOptions(durability: .unsafe))
      }
      try store.write { txn throws in
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
          let n = Int.random(in: 0..<6000, using: &rng)
          switch Int.random(in: 0..<10, using: &rng) {
          case 0..<6:
            let length = Int.random(in: 0..<12, using: &rng) == 0 ? 5000 : Int.random(in: 0..<200, using: &rng)
            let value = textValue(n &* 7 &+ round, length: length)
            try txn.put(value, forKey: key(n), in: "k")
            model[key(n)] = value
          default:
            #expect(try txn.delete(key(n), in: "k") == (model.removeValue(forKey: key(n)) != nil))
          }
          // Reads through the edited nodes: the key itself, its neighbours, positions, ranges.
          for m in [n - 1, n, n + 1] { #expect(try txn.get(key(m), in: "k") == model[key(m)]) }
          #expect(try txn.count(in: "k") == UInt64(model.count))
          let range = KeyRange(lower: key(n - 5), lowerInclusive: true, upper: key(n + 5), upperInclusive: true)
          let expected = (n - 5...n + 5).map(key).filter { model[$0] != nil }
          #expect(try scan(txn.cursor(in: "k", range: range)).map(\.0) == expected)
          #expect(try txn.count(in: "k", range: range) == UInt64(expected.count))
        }
      }
    }
    let sorted = model.keys.sorted { compareBytes($0, $1) < 0 }
    try store.read { txn in
      let ks = try txn.keyspace("k")
      let all = try scan(ks.cursor())
      #expect(all.map(\.0) == sorted)
      #expect(all.allSatisfy { model[$0.0] == $0.1 })
      for i in stride(from: 0, to: sorted.count, by: 97) { #expect(try ks.entry(at: UInt64(i))?.key == sorted[i]) }
    }
    let report = store.verify()
    #expect(report.isOK, "\(report.problems)")
    store.close()
  }

  @Test func prefixRangesAndZeroCopyReads() throws {
    let store = try Store(file: MemoryFile())
    try store.write { txn throws in
      try txn.createKeyspace("k")
      for name in ["ant", "ape", "apple", "apricot", "bat", "b\u{FF}"] {
        try txn.put(bytes(name.uppercased()), forKey: bytes(name), in: "k")
      }
      try txn.put([1], forKey: [0x61, 0x70, 0xFF], in: "k")
      try txn.put([2], forKey: [0x61, 0x71], in: "k")
    }
    try store.read { txn throws in
      let ks = try txn.keyspace("k")
      #expect(
        try scan(ks.cursor(range: .prefix(bytes("ap")))).map(\.0) == [
          bytes("ape"), bytes("apple"), bytes("apricot"), [0x61, 0x70, 0xFF],
        ])
      #expect(try ks.withValue(forKey: bytes("bat")) { $0.map { Array($0) } } == bytes("BAT"))
      var seen = 0
      try ks.forEach(range: .prefix(bytes("a"))) { _, _ in
        seen += 1
        return seen < 2
      }
      #expect(seen == 2)
    }
  }

  /// `Cursor.forEach` (a leaf at a time in a snapshot) visits what `next` visits, across many
  /// leaves, in ranges both ways, with blobs; stopping early leaves the cursor after the entry
  /// that stopped it, for `next` and `forEach` to go on from.
  @Test func cursorForEachMatchesNext() throws {
    let store = try Store(file: MemoryFile())
    let keys = (0..<3000).map { bytes(String(format: "key%05d", $0 * 7)) }
    try store.write { txn throws in
      try txn.createKeyspace("k")
      for (i, key) in keys.enumerated() {
        try txn.put(i % 500 == 3 ? textValue(i, length: 40_000) : textValue(i, length: 60), forKey: key, in: "k")
      }
    }
    let ranges: [KeyRange] = [
      .all, .prefix(bytes("key01")), KeyRange(lower: keys[100], lowerInclusive: false, upper: keys[2500]),
      KeyRange(lower: bytes("key00500"), upper: bytes("key00501"), upperInclusive: true), KeyRange(lower: bytes("zz")),
    ]
    try store.read { txn throws in
      let ks = try txn.keyspace("k")
      for range in ranges {
        for reverse in [false, true] {
          let expected = try scan(ks.cursor(range: range, reverse: reverse))
          var visited: [([UInt8], [UInt8])] = []
          try ks.cursor(range: range, reverse: reverse).forEach { k, v in
            visited.append((Array(k), Array(v)))
            return true
          }
          #expect(visited.map(\.0) == expected.map(\.0), "range \(range), reverse \(reverse)")
          #expect(visited.map(\.1) == expected.map(\.1), "range \(range), reverse \(reverse)")
          // Stop after 250 entries (mid-leaf), take one with next, then the rest with forEach.
          let cursor = ks.cursor(range: range, reverse: reverse)
          var pieces: [[UInt8]] = []
          try cursor.forEach { k, _ in
            pieces.append(Array(k))
            return pieces.count < 250
          }
          if let entry = try cursor.next() { pieces.append(entry.key) }
          try cursor.forEach { k, _ in
            pieces.append(Array(k))
            return true
          }
          #expect(pieces == expected.map(\.0), "range \(range), reverse \(reverse), stopped and resumed")
          #expect(try cursor.next() == nil)
        }
      }
    }
  }

  @Test func largeValuesUpTo16MiB() throws {
    let dir = TemporaryDirectory()
    let big = textValue(3, length: 16 << 20)
    do {
      let store = try Store.open(path: dir.file())
      try store.write { txn throws in
        try txn.createKeyspace("blobs")
        try txn.put(big, forKey: bytes("big"), in: "blobs")
        try txn.put(textValue(4, length: 100_000), forKey: bytes("medium"), in: "blobs")
      }
      // Replacing a blob frees the old one.
      try store.write { txn in try txn.put(bytes("small now"), forKey: bytes("medium"), in: "blobs") }
      #expect(store.verify().isOK)
    }
    let store = try Store.open(path: dir.file())
    #expect(try store.read { try $0.get(bytes("big"), in: "blobs") } == big)
    #expect(try store.read { try $0.get(bytes("medium"), in: "blobs") } == bytes("small now"))
    let info = store.info()
    #expect(info.blobs == 1)
    // Text compresses: the file is much smaller than the value.
    #expect(fileSize(dir.file()) < UInt64(big.count) / 2)
  }

  @Test func abortedWritesLeaveNothing() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    try store.write { try $0.createKeyspace("k") }
    let sizeBefore = fileSize(dir.file())
    let txn = try store.beginWrite()
    for i in 0..<5000 { try txn.put(textValue(i, length: 500), forKey: bytes("key\(i)"), in: "k") }
    try txn.createKeyspace("other")
    txn.abort()
    #expect(throws: StorageError.transactionClosed) { try txn.put([1], forKey: [1], in: "k") }
    // A transaction released without commit aborts too.
    do {
      let forgotten = try store.beginWrite()
      try forgotten.put([1], forKey: [1], in: "k")
    }
    struct Boom: Error {}
    #expect(throws: Boom.self) {
      try store.write { txn throws in
        try txn.put([2], forKey: [2], in: "k")
        throw Boom()
      }
    }
    try store.read { txn throws in
      #expect(try txn.count(in: "k") == 0)
      #expect(try !txn.hasKeyspace("other"))
    }
    #expect(store.latestVersion == 1)
    #expect(fileSize(dir.file()) == sizeBefore)
    #expect(store.verify().isOK)
  }

  @Test func snapshotsAreIsolatedAndUsableFromAnyThread() throws {
    let store = try Store(file: MemoryFile(), options: StoreOptions(cacheSize: 128 << 10))
    try store.write { txn throws in
      try txn.createKeyspace("accounts")
      for i in 0..<200 {
        try txn.put(withUnsafeBytes(of: UInt64(100)) { Array($0) }, forKey: bytes("acct\(i)"), in: "accounts")
      }
    }
    let old = try store.beginRead()
    // A writer thread moves money around (the total stays 20,000) while reader threads check
    // that every snapshot they take sums to 20,000.
    let writerDone = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      var rng = SplitMix64(seed: 9)
      for _ in 0..<300 {
        try? store.write { txn throws in
          let a = bytes("acct\(Int.random(in: 0..<200, using: &rng))")
          let b = bytes("acct\(Int.random(in: 0..<200, using: &rng))")
          guard a != b, let va = try txn.get(a, in: "accounts"), let vb = try txn.get(b, in: "accounts") else { return }
          let x = va.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
          let y = vb.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
          let amount = min(x, UInt64.random(in: 0...50, using: &rng))
          try txn.put(withUnsafeBytes(of: x - amount) { Array($0) }, forKey: a, in: "accounts")
          try txn.put(withUnsafeBytes(of: y + amount) { Array($0) }, forKey: b, in: "accounts")
        }
      }
      writerDone.signal()
    }
    let failures = Mutex(0)
    DispatchQueue.concurrentPerform(iterations: 4) { _ in
      for _ in 0..<60 {
        do {
          let total = try store.read { txn throws -> UInt64 in
            var sum: UInt64 = 0
            try txn.keyspace("accounts").forEach { _, v in
              sum += v.loadUnaligned(as: UInt64.self)
              return true
            }
            return sum
          }
          if total != 20_000 { failures.withLock { $0 += 1 } }
        } catch {
          failures.withLock { $0 += 1 }
        }
      }
    }
    writerDone.wait()
    #expect(failures.withLock { $0 } == 0)
    // The old snapshot still reads its own version, from another thread.
    let oldTotal = DispatchQueue.global().sync {
      (try? old.keyspace("accounts").cursor()).map { c in
        var n = 0
        while (try? c.next()) != nil { n += 1 }
        return n
      }
    }
    #expect(oldTotal == 200)
    #expect(try old.get(bytes("acct0"), in: "accounts") == withUnsafeBytes(of: UInt64(100)) { Array($0) })
    #expect(store.activeVersionCount == 2)
    old.close()
    #expect(store.activeVersionCount == 1)
    #expect(store.verify().isOK)
  }

  @Test func keyspaceAndArgumentErrors() throws {
    let store = try Store(file: MemoryFile())
    try store.write { txn throws in
      try txn.createKeyspace("a")
      #expect(throws: StorageError.keyspaceExists("a")) { try txn.createKeyspace("a") }
      #expect(throws: StorageError.keyspaceNotFound("b")) { try txn.put([1], forKey: [1], in: "b") }
      #expect(throws: StorageError.keyTooLarge(size: 2000, limit: StorageLimits.maximumKeySize)) {
        try txn.put([1], forKey: Array(repeating: 1, count: 2000), in: "a")
      }
      #expect(throws: StorageError.writeTransactionAlreadyOpen) { _ = try store.beginWrite() }
      try txn.put([1], forKey: [1], in: "a")
    }
    #expect(throws: StorageError.keyspaceNotFound("zzz")) { try store.read { try $0.keyspace("zzz") } }
    try store.write { txn throws in
      try txn.dropKeyspace("a")
      #expect(try !txn.hasKeyspace("a"))
      try txn.createKeyspace("a")
      #expect(try txn.count(in: "a") == 0)
      try txn.put([2], forKey: [2], in: "a")
    }
    try store.read { txn throws in
      #expect(try txn.get([1], in: "a") == nil)
      #expect(try txn.get([2], in: "a") == [2])
    }
    #expect(store.verify().isOK)
    let message = StorageError.keyspaceNotFound("x").description
    #expect(message.contains("Create it"))
  }

  @Test func cursorInAWriteTransactionSurvivesChanges() throws {
    let store = try Store(file: MemoryFile())
    try store.write { txn throws in
      try txn.createKeyspace("k")
      for i in 0..<3000 { try txn.put(textValue(i, length: 40), forKey: bytes(String(format: "%05d", i)), in: "k") }
    }
    try store.write { txn throws in
      // Delete every entry while iterating: the cursor continues after the last key seen.
      let cursor = try txn.cursor(in: "k")
      var visited = 0
      while let (key, _) = try cursor.next() {
        try txn.delete(key, in: "k")
        visited += 1
      }
      #expect(visited == 3000)
      #expect(try txn.count(in: "k") == 0)
    }
    #expect(store.verify().isOK)
  }

  @Test func compactionWritesADenseCopy() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file(), options: StoreOptions(durability: .unsafe))
    try store.write { txn throws in
      try txn.createKeyspace("k")
      try txn.createKeyspace("quiet", tracksChanges: false)
      try txn.createKeyspace("empty")
      for i in 0..<20_000 { try txn.put(textValue(i, length: 120), forKey: bytes("key\(i)"), in: "k") }
      try txn.put(textValue(1, length: 50_000), forKey: bytes("blob"), in: "quiet")
    }
    for round in 0..<20 {
      try store.write { txn throws in
        for i in stride(from: round, to: 20_000, by: 7) {
          try txn.put(textValue(i + round, length: 120), forKey: bytes("key\(i)"), in: "k")
        }
      }
    }
    let copyPath = dir.file("copy.shoal")
    try store.writeCopy(toPath: copyPath)
    #expect(throws: StorageError.fileExists(path: copyPath)) { try store.writeCopy(toPath: copyPath) }
    let copy = try Store.open(path: copyPath)
    let report = copy.verify()
    #expect(report.isOK, "\(report.problems)")
    #expect(report.info.freeBytes == 0)
    #expect(fileSize(copyPath) < fileSize(dir.file()))
    let original = try store.read { txn in
      try txn.keyspaceNames().map { try scan(txn.keyspace($0).cursor()).map { $0.0 + [0] + $0.1 } }
    }
    let copied = try copy.read { txn in
      try txn.keyspaceNames().map { try scan(txn.keyspace($0).cursor()).map { $0.0 + [0] + $0.1 } }
    }
    #expect(original == copied)
    #expect(try copy.read { try $0.keyspace("quiet").tracksChanges } == false)
    #expect(try copy.read { try $0.count(in: "empty") } == 0)
    // Built bottom-up from full nodes: fewer leaves than the churned original.
    #expect(report.info.leafNodes < store.info().leafNodes)
    // The copy takes ordinary writes afterwards.
    try copy.write { try $0.put(bytes("new"), forKey: bytes("key5000x"), in: "k") }
    #expect(copy.verify().isOK)
  }

  @Test func bulkLoadingRejectsKeysOutOfOrderAndBuildsDeepTrees() throws {
    let store = try Store(file: MemoryFile())
    let txn = try store.beginWrite()
    var i = 0
    try txn.bulkLoad("big", tracksChanges: true) {
      i += 1
      return i <= 100_000 ? (bytes(String(format: "%08d", i)), textValue(i, length: 60)) : nil
    }
    var keys = [bytes("b"), bytes("a")].makeIterator()
    #expect(throws: StorageError.invalidArgument("Bulk-loaded keys must be in strictly ascending order.")) {
      try txn.bulkLoad("bad", tracksChanges: true) { keys.next().map { ($0, [1]) } }
    }
    txn.abort()
    let copyTarget = MemoryFile()
    let source = try Store(file: MemoryFile())
    try source.write { txn in
      try txn.createKeyspace("big")
      for n in stride(from: 0, to: 100_000, by: 1) {
        try txn.put(textValue(n, length: 60), forKey: bytes(String(format: "%08d", n)), in: "big")
      }
    }
    try source.writeCopy(to: copyTarget)
    let copy = try Store(file: copyTarget)
    let report = copy.verify()
    #expect(report.isOK, "\(report.problems)")
    #expect(report.info.branchNodes > 1, "three levels at least")
    #expect(try copy.read { try $0.count(in: "big") } == 100_000)
    #expect(try copy.read { try $0.get(bytes("00054321"), in: "big") } == textValue(54321, length: 60))
    #expect(
      try copy.read { txn in try scan(txn.keyspace("big").cursor()).map(\.0) }
        == (0..<100_000).map { bytes(String(format: "%08d", $0)) })
  }

  @Test func cacheStaysWithinItsBudget() throws {
    let store = try Store(file: MemoryFile(), options: StoreOptions(cacheSize: 64 << 10))
    try store.write { txn throws in
      try txn.createKeyspace("k")
      for i in 0..<20_000 { try txn.put(textValue(i, length: 100), forKey: bytes("key\(i)"), in: "k") }
    }
    DispatchQueue.concurrentPerform(iterations: 2) { t in
      for i in stride(from: t, to: 20_000, by: 13) {
        #expect((try? store.read { try $0.get(bytes("key\(i)"), in: "k") }) == textValue(i, length: 100))
      }
    }
    let stats = store.cacheStatistics
    #expect(stats.bytes <= 64 << 10)
    #expect(stats.misses > 0)
  }

  /// The nodes a commit replaces leave the cache with it: a long run of small commits keeps
  /// the cache at the size of what the newest version reaches, not of every version written.
  @Test func replacedNodesLeaveTheCache() throws {
    let store = try Store(file: MemoryFile(), options: StoreOptions(cacheSize: 256 << 20))
    try store.write { txn throws in
      try txn.createKeyspace("k")
      for i in 0..<20_000 { try txn.put(textValue(i, length: 100), forKey: bytes("key\(i)"), in: "k") }
    }
    func update(_ i: Int, round: Int) throws {
      try store.write { try $0.put(textValue(i + round, length: 100), forKey: bytes("key\(i)"), in: "k") }
    }
    for i in stride(from: 0, to: 20_000, by: 50) { try update(i, round: 0) }
    let settled = store.cacheStatistics.entries
    for round in 1...3 {
      for i in stride(from: 0, to: 20_000, by: 50) { try update(i, round: round) }
    }
    // 1,200 more commits, each writing a leaf, its branches and the catalog and history
    // nodes; the count moves only by the few nodes splits add.
    #expect(store.cacheStatistics.entries <= settled + 20)
    #expect(try store.read { try $0.get(bytes("key100"), in: "k") } == textValue(103, length: 100))
  }
}
