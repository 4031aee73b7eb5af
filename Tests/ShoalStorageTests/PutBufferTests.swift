import Testing

@testable import ShoalStorage

/// Puts into an empty keyspace are held in a hash table (`PutBuffer`) and built into a tree when
/// the keyspace is read in key order or committed: every read in between, the values `put` and
/// `delete` return, the change records and the committed file must be what the tree alone gives.
@Suite("Put buffer")
struct PutBufferTests {
  /// Keys of 1 to 24 bytes, many sharing their first 8 bytes (prefix ties), from a small pool so
  /// that puts replace and deletes find; values from empty to past the inline limit (blobs).
  struct History {
    var rng: SplitMix64
    let keys: [[UInt8]]

    init(seed: UInt64) {
      rng = SplitMix64(seed: seed)
      var pool = Set<[UInt8]>()
      var r = SplitMix64(seed: seed &+ 1)
      while pool.count < 1500 {
        let length = Int(1 + r.next() % 24)
        let shared = Array("samepref".utf8.prefix(length))
        let key =
          r.next() % 3 == 0
          ? shared + (0..<(length / 3)).map { _ in UInt8(r.next() % 4) }
          : (0..<length).map { _ in UInt8(truncatingIfNeeded: r.next()) }
        pool.insert(key)
      }
      keys = pool.sorted { $0.lexicographicallyPrecedes($1) }
    }

    mutating func key() -> [UInt8] { keys[Int(rng.next() % UInt64(keys.count))] }

    mutating func value() -> [UInt8] {
      let length =
        rng.next() % 50 == 0 ? StorageLimits.inlineValueLimit + Int(rng.next() % 3000) : Int(rng.next() % 300)
      let byte = UInt8(truncatingIfNeeded: rng.next())
      return [UInt8](repeating: byte, count: length)
    }
  }

  /// Applies a random history of puts, deletes and point reads to keyspace "k" (empty when the
  /// transaction starts), checking each answer against a dictionary; `orderedReadAt` names the
  /// step where a cursor and a range count are checked (building the tree), if any.
  static func run(
    _ txn: WriteTransaction, _ history: inout History, steps: Int, orderedReadAt: Int?, model: inout [[UInt8]: [UInt8]]
  ) throws {
    for step in 0..<steps {
      let key = history.key()
      switch history.rng.next() % 10 {
      case 0..<6:
        let value = history.value()
        #expect(try txn.put(value, forKey: key, in: "k") == (model[key] != nil))
        model[key] = value
      case 6, 7:
        #expect(try txn.delete(key, in: "k") == (model[key] != nil))
        model[key] = nil
      case 8:
        #expect(try txn.get(key, in: "k") == model[key])
      default:
        let seen = try txn.withValue(forKey: key, in: "k") { $0.map { Array($0) } }
        #expect(seen == model[key])
      }
      if step == orderedReadAt { try checkOrdered(txn, model) }
    }
    #expect(try txn.count(in: "k") == UInt64(model.count))
  }

  static func checkOrdered(_ txn: WriteTransaction, _ model: [[UInt8]: [UInt8]]) throws {
    let sorted = model.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    let entries = try scan(txn.cursor(in: "k"))
    #expect(entries.map(\.0) == sorted.map(\.key))
    #expect(entries.map(\.1) == sorted.map(\.value))
    if sorted.count > 2 {
      let range = KeyRange(lower: sorted[sorted.count / 3].key, upper: sorted[2 * sorted.count / 3].key)
      #expect(try txn.count(in: "k", range: range) == UInt64(2 * sorted.count / 3 - sorted.count / 3))
    }
  }

  @Test(arguments: [(1, nil), (2, 700), (3, 0), (4, nil)] as [(UInt64, Int?)])
  func aRandomHistoryReadsAsADictionaryWouldAndCommitsASoundFile(_ seed: UInt64, _ orderedReadAt: Int?) throws {
    let dir = TemporaryDirectory()
    var history = History(seed: seed)
    var model: [[UInt8]: [UInt8]] = [:]
    do {
      let store = try Store.open(path: dir.file())
      try store.write { txn throws in
        try txn.createKeyspace("k")
        try Self.run(txn, &history, steps: 4000, orderedReadAt: orderedReadAt, model: &model)
        try Self.checkOrdered(txn, model)
      }
      let report = store.verify()
      #expect(report.isOK, "\(report.problems)")
      // A second transaction on the committed tree: the ordinary path, same answers.
      try store.write { txn in try Self.run(txn, &history, steps: 1000, orderedReadAt: nil, model: &model) }
      store.close()
    }
    let store = try Store.open(path: dir.file())
    defer { store.close() }
    #expect(store.verify().isOK)
    let txn = try store.beginRead()
    defer { txn.close() }
    var read: [[UInt8]: [UInt8]] = [:]
    try txn.keyspace("k").forEach { key, value in
      read[Array(key)] = Array(value)
      return true
    }
    #expect(read == model)
  }

  @Test func aKeyspaceEmptiedEarlierBuffersAgainAndRecordsItsChanges() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    defer { store.close() }
    try store.write { txn throws in
      try txn.createKeyspace("k")
      try txn.put([1], forKey: bytes("gone"), in: "k")
    }
    try store.write { txn throws in
      // The tree empties, so the next puts are buffered; the change record is the tree's.
      #expect(try txn.delete(bytes("gone"), in: "k"))
      #expect(try !txn.put([2], forKey: bytes("b"), in: "k"))
      #expect(try !txn.put([3], forKey: bytes("a"), in: "k"))
      #expect(try txn.put([4], forKey: bytes("a"), in: "k"))
      #expect(try !txn.put([5], forKey: bytes("c"), in: "k"))
      #expect(try txn.delete(bytes("c"), in: "k"))
      #expect(try !txn.delete(bytes("c"), in: "k"))
      #expect(try txn.count(in: "k") == 2)
    }
    let version = try store.read { $0.version }
    let records = try store.changes(from: version - 1, to: version)
    let changes = try #require(records.last?.keyspaces.first { $0.keyspace == "k" }).changes
    #expect(changes.map(\.key) == [bytes("a"), bytes("b"), bytes("gone")])
    #expect(changes.map(\.kind) == [.insert, .insert, .delete])
    #expect(store.verify().isOK)
  }

  @Test func aCursorOpenedFirstSeesTheBufferedPutsAndLaterPutsGoToTheTree() throws {
    let dir = TemporaryDirectory()
    let store = try Store.open(path: dir.file())
    defer { store.close() }
    try store.write { txn throws in
      try txn.createKeyspace("k")
      let cursor = try txn.cursor(in: "k")
      for i in stride(from: 0, to: 100, by: 2) { try txn.put([UInt8(i)], forKey: [UInt8(i)], in: "k") }
      #expect(try cursor.next()?.0 == [0])
      // The tree is built: these go into it, and the cursor goes on past the last key it gave.
      for i in stride(from: 1, to: 100, by: 2) { try txn.put([UInt8(i)], forKey: [UInt8(i)], in: "k") }
      #expect(try scan(cursor).map(\.0) == (1..<100).map { [UInt8($0)] })
      try txn.clear("k")
      #expect(try txn.get([4], in: "k") == nil)
      try txn.put([9], forKey: [4], in: "k")
      try txn.dropKeyspace("k")
      try txn.createKeyspace("k")
      #expect(try txn.get([4], in: "k") == nil && txn.count(in: "k") == 0)
      try txn.put([7], forKey: [5], in: "k")
    }
    let txn = try store.beginRead()
    defer { txn.close() }
    #expect(try txn.keyspace("k").get([5]) == [7] && txn.keyspace("k").count == 1)
  }

  /// A transaction that puts and deletes keys in turn holds its live entries, not every key it
  /// put: deleted entries are dropped once they outnumber the live ones, and the table still
  /// finds every live key and none of the others.
  @Test func deletedEntriesAreDroppedOnceTheyOutnumberTheLiveOnes() throws {
    let buffer = PutBuffer()
    var live: [[UInt8]: UInt8] = [:]
    for i in 0..<20_000 {
      let key = bytes("key-\(i)")
      #expect(!buffer.put(key, .inline([UInt8(i % 251)])))
      live[key] = UInt8(i % 251)
      if i % 10 != 0 {
        #expect(buffer.remove(key))
        live[key] = nil
      }
      #expect(buffer.entriesHeld <= 2 * buffer.count + 65)
    }
    #expect(buffer.count == live.count && buffer.entriesHeld < 3 * live.count)
    for (key, byte) in live {
      guard case .inline(let value) = buffer.value(key) else {
        Issue.record("a live key is not found")
        continue
      }
      #expect(value == [byte])
    }
    #expect(buffer.value(bytes("key-1")) == nil && !buffer.remove(bytes("key-1")))
    #expect(!buffer.put(bytes("key-1"), .inline([1])))
    live[bytes("key-1")] = 1
    let root = try #require(buffer.buildTree())
    var keys: [[UInt8]] = []
    func walk(_ slot: ChildSlot) {
      guard case .dirty(let node) = slot else { return }
      if node.isLeaf {
        keys += (0..<node.count).map { node.key(at: $0) }
      } else {
        node.children.forEach(walk)
      }
    }
    walk(root)
    #expect(keys == live.keys.sorted { $0.lexicographicallyPrecedes($1) })
  }

  /// The built tree: every node within the maximum size (whatever the entries' sizes), its size
  /// as encoded, leaves filled evenly, and every leaf at the same depth.
  @Test(arguments: [(0, 0), (16, 100), (1024, 1536), (300, 1)] as [(Int, Int)])
  func theBuiltTreeHasEvenlyFilledNodesWithinTheMaximum(_ keyLength: Int, _ valueLength: Int) throws {
    var rng = SplitMix64(seed: UInt64(keyLength + valueLength))
    let buffer = PutBuffer()
    var count = 0
    for i in 0..<20_000 {
      // Mixed sizes when both are 0: from a byte to the largest entry a leaf may hold.
      let k = keyLength > 0 ? keyLength : 1 + Int(rng.next() % UInt64(StorageLimits.maximumKeySize))
      let v = keyLength > 0 ? valueLength : Int(rng.next() % UInt64(StorageLimits.inlineValueLimit + 1))
      var key = (0..<k).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
      key.replaceSubrange(0..<min(4, k), with: withUnsafeBytes(of: UInt32(i).bigEndian, Array.init).prefix(k))
      if !buffer.put(key, .inline([UInt8](repeating: 1, count: v))) { count += 1 }
    }
    #expect(buffer.count == count)
    let root = try #require(buffer.buildTree())
    guard case .dirty(let top) = root else { Issue.record("the built root is not a new node"); return }
    var leafDepths = Set<Int>()
    var leafSizes: [Int] = []
    var entries = 0
    func walk(_ node: DirtyNode, depth: Int, isRoot _: Bool) {
      #expect(node.byteSize <= DirtyNode.maximumSize)
      if node.isLeaf {
        #expect(node.encode().count == node.byteSize)
        leafDepths.insert(depth)
        leafSizes.append(node.byteSize)
        entries += node.count
        return
      }
      for child in node.children {
        guard case .dirty(let n) = child else {
          Issue.record("a built branch has a child that is not a new node")
          return
        }
        walk(n, depth: depth + 1, isRoot: false)
      }
    }
    walk(top, depth: 0, isRoot: true)
    #expect(entries == count && leafDepths.count == 1 && top.subtreeCount == UInt64(count))
    // Evenly filled: all but the last leaf within one entry of each other.
    let entry = DirtyNode.leafEntrySize(key: max(keyLength, 1), value: valueLength)
    if keyLength > 0, leafSizes.count > 2 {
      let body = leafSizes.dropLast()
      #expect(body.max()! - body.min()! <= entry)
      #expect(body.max()! <= PutBuffer.fill + entry)
    }
    #expect(buffer.count == 0 && buffer.buildTree() == nil)
  }
}

/// The radix sort of the entries' prefixes, with the keys deciding ties, orders as comparing keys
/// does: for prefixes spread over every byte, sharing their high bytes, or all equal.
@Suite("Put buffer sort")
struct PutBufferSortTests {
  @Test(arguments: [0, 1, 2, 3])
  func theRadixSortOrdersAsComparingKeysDoes(_ shape: Int) {
    var rng = SplitMix64(seed: UInt64(shape))
    let keys: [[UInt8]] = (0..<5000).map { i in
      let length = 1 + Int(rng.next() % 14)
      var key = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
      switch shape {
      case 1:
        // Shared high bytes.
        key.replaceSubrange(0..<min(5, length), with: [7, 7, 7, 7, 7].prefix(min(5, length)))
      case 2: key = Array("samepref".utf8) + key  // every prefix equal: the keys decide
      case 3: key = [UInt8(i % 3)] + key  // few distinct first bytes, short keys padded with zeros
      default: break
      }
      return key
    }
    let unique = Array(Set(keys))
    var order = unique.indices.map { (prefix: keyPrefix(unique[$0]), index: UInt32($0)) }
    unique.withUnsafeBufferPointer { PutBuffer.sort(&order, keys: $0) }
    #expect(order.map { unique[Int($0.index)] } == unique.sorted { $0.lexicographicallyPrecedes($1) })
  }
}
