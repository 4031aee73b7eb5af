import ShoalStorage

/// The expected contents of a store: keyspace -> key -> value, compared against what a
/// reopened store really holds.
public struct StoreModel: Equatable, Sendable {
  /// Keyspace name -> key -> value.
  public var keyspaces: [String: [[UInt8]: [UInt8]]] = [:]

  /// An empty model (no keyspaces).
  public init() {}

  /// Reads everything the newest version of `store` holds.
  public static func read(_ store: Store) throws -> StoreModel {
    var model = StoreModel()
    try store.read { txn in
      for name in try txn.keyspaceNames() {
        var entries: [[UInt8]: [UInt8]] = [:]
        let cursor = try txn.keyspace(name).cursor()
        while let (key, value) = try cursor.next() { entries[key] = value }
        model.keyspaces[name] = entries
      }
    }
    return model
  }

  /// A short description of the first difference, for failure messages.
  public func difference(from other: StoreModel) -> String {
    for name in Set(keyspaces.keys).union(other.keyspaces.keys).sorted() {
      guard let a = keyspaces[name] else { return "keyspace '\(name)' missing on the left" }
      guard let b = other.keyspaces[name] else { return "keyspace '\(name)' missing on the right" }
      if a.count != b.count { return "keyspace '\(name)': \(a.count) vs \(b.count) entries" }
      for (k, v) in a where b[k] != v { return "keyspace '\(name)': key \(k.prefix(8)) differs" }
    }
    return "no difference"
  }
}

/// A random workload step generator shared by the trials.
struct Workload {
  var rng: SplitMix64
  let keyspaceNames = ["alpha", "beta", "gamma"]

  init(seed: UInt64) { rng = SplitMix64(seed: seed) }

  mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

  mutating func key() -> [UInt8] {
    // A small key space so updates and deletes hit existing keys.
    let n = UInt32(int(0...400))
    return Array("key-\(n)".utf8) + withUnsafeBytes(of: n.bigEndian) { Array($0) }
  }

  mutating func value() -> [UInt8] {
    let roll = int(0...99)
    let length = roll < 80 ? int(0...200) : (roll < 97 ? int(201...4000) : int(4001...70000))
    let word = Array("shoal-\(int(0...50))-".utf8)
    return (0..<length).map { i in i % 7 == 0 ? UInt8(truncatingIfNeeded: rng.next()) : word[i % word.count] }
  }

  /// Applies one random transaction to `txn` and to `model`.
  mutating func transaction(_ txn: WriteTransaction, _ model: inout StoreModel) throws {
    let operations = int(1...40)
    for _ in 0..<operations {
      let name = keyspaceNames[int(0...keyspaceNames.count - 1)]
      if model.keyspaces[name] == nil {
        try txn.createKeyspace(name)
        model.keyspaces[name] = [:]
      }
      let roll = int(0...999)
      if roll < 650 {
        let k = key()
        let v = value()
        try txn.put(v, forKey: k, in: name, changeInfo: [UInt8(truncatingIfNeeded: roll)])
        model.keyspaces[name]?[k] = v
      } else if roll < 990 {
        let k = key()
        try txn.delete(k, in: name)
        model.keyspaces[name]?[k] = nil
      } else if roll < 996 {
        try txn.clear(name)
        model.keyspaces[name] = [:]
      } else {
        try txn.dropKeyspace(name)
        model.keyspaces[name] = nil
      }
    }
  }
}
