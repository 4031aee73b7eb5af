/// What a change did to one key.
public enum ChangeKind: UInt8, Sendable, CustomStringConvertible {
  case insert = 1
  case update = 2
  case delete = 3

  /// The kind's name: "insert", "update" or "delete".
  public var description: String {
    switch self {
    case .insert: return "insert"
    case .update: return "update"
    case .delete: return "delete"
    }
  }
}

/// One key's change in a commit. `payload` is the caller's opaque bytes (the object layer
/// stores changed-property masks); several changes of one key in a transaction OR their
/// payloads together.
public struct KeyChange: Sendable, Equatable {
  /// Whether the key was inserted, updated or deleted (net, over the whole transaction).
  public var kind: ChangeKind
  /// The key.
  public var key: [UInt8]
  /// The caller's bytes for the change; empty for a deletion.
  public var payload: [UInt8]

  /// A change of `key`; `payload` is empty unless given.
  public init(kind: ChangeKind, key: [UInt8], payload: [UInt8] = []) {
    self.kind = kind
    self.key = key
    self.payload = payload
  }
}

/// The changes of one commit to one keyspace, sorted by key.
public struct KeyspaceChanges: Sendable, Equatable {
  /// The keyspace's name.
  public var keyspace: String
  /// The keyspace was created in this commit (after being dropped, if `dropped` is set
  /// too). Every entry it holds at this version is then an insertion, and `changes` does
  /// not list them.
  public var created: Bool
  /// Every entry that existed before the commit was removed (`clear`), before `changes`.
  public var cleared: Bool
  /// The keyspace was dropped.
  public var dropped: Bool
  /// One change per key, sorted by key (byte order).
  public var changes: [KeyChange]
}

/// The change record of one commit: which keys of which keyspaces it inserted, updated or
/// deleted. Read with `Store.changes(from:to:)`; kept while some pin may still need it.
public struct ChangeRecord: Sendable, Equatable {
  /// The version the commit created.
  public var version: UInt64
  /// The keyspaces the commit changed that track changes (or were created or dropped), sorted by name.
  public var keyspaces: [KeyspaceChanges]

  func encode() -> [UInt8] {
    var w = ByteWriter(capacity: 64)
    w.varint(version)
    w.varint(UInt64(keyspaces.count))
    for ks in keyspaces {
      w.lengthPrefixed(Array(ks.keyspace.utf8))
      w.u8((ks.created ? 1 : 0) | (ks.cleared ? 2 : 0) | (ks.dropped ? 4 : 0))
      w.varint(UInt64(ks.changes.count))
      var previous: [UInt8] = []
      for c in ks.changes {
        // Keys are sorted: store the length shared with the previous key, then the rest.
        var shared = 0
        let limit = min(previous.count, c.key.count)
        while shared < limit, previous[shared] == c.key[shared] { shared += 1 }
        w.u8(c.kind.rawValue)
        w.varint(UInt64(shared))
        w.lengthPrefixed(c.key[shared...])
        w.lengthPrefixed(c.payload)
        previous = c.key
      }
    }
    return w.bytes
  }

  static func decode(_ bytes: [UInt8]) -> ChangeRecord? {
    var r = ByteReader(bytes)
    guard let version = r.varint(), let n = r.varint(), n <= UInt64(bytes.count) else { return nil }
    var keyspaces: [KeyspaceChanges] = []
    for _ in 0..<n {
      guard let nameBytes = r.lengthPrefixed(), let flags = r.u8(), let count = r.varint(),
        count <= UInt64(r.remaining)
      else { return nil }
      var changes: [KeyChange] = []
      changes.reserveCapacity(Int(count))
      var previous: [UInt8] = []
      for _ in 0..<count {
        guard let kindByte = r.u8(), let kind = ChangeKind(rawValue: kindByte), let shared = r.varint(),
          shared <= UInt64(previous.count), let rest = r.lengthPrefixed(), let payload = r.lengthPrefixed()
        else { return nil }
        let key = Array(previous[0..<Int(shared)]) + rest
        changes.append(KeyChange(kind: kind, key: key, payload: payload))
        previous = key
      }
      keyspaces.append(
        KeyspaceChanges(
          keyspace: String(decoding: nameBytes, as: UTF8.self), created: flags & 1 != 0,
          cleared: flags & 2 != 0, dropped: flags & 4 != 0, changes: changes))
    }
    return r.atEnd ? ChangeRecord(version: version, keyspaces: keyspaces) : nil
  }

  static func key(for version: UInt64) -> [UInt8] { withUnsafeBytes(of: version.bigEndian) { Array($0) } }

  /// The version a history key names; nil for a key that is not 8 bytes (damage).
  static func version(fromKey key: [UInt8]) -> UInt64? {
    key.count == 8 ? key.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) } : nil
  }
}

/// A change of one key pending in a write transaction.
struct PendingChange {
  var kind: ChangeKind
  var payload: [UInt8]

  static func merge(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
    if a.isEmpty { return b }
    if b.isEmpty { return a }
    var out = a.count >= b.count ? a : b
    let other = a.count >= b.count ? b : a
    for i in other.indices { out[i] |= other[i] }
    return out
  }
}

/// A write transaction's changes to one keyspace, by key, for its change record.
///
/// Keys that arrive in ascending order (new objects get ever larger keys, so a batch of
/// inserts does) are appended to an array that is already sorted: no hashing per change and
/// no sort at commit. The first key out of order moves the changes into a dictionary, sorted
/// once at commit.
struct PendingChanges {
  private var ordered: [(key: [UInt8], change: PendingChange)] = []
  private var table: [[UInt8]: PendingChange]?

  var count: Int { table?.count ?? ordered.count }
  var isEmpty: Bool { count == 0 }

  private func position(of key: [UInt8]) -> (index: Int, found: Bool) {
    var low = 0
    var high = ordered.count
    while low < high {
      let mid = (low + high) / 2
      let order = compareBytes(ordered[mid].key, key)
      if order == 0 { return (mid, true) }
      if order < 0 { low = mid + 1 } else { high = mid }
    }
    return (low, false)
  }

  private mutating func spill() -> [[UInt8]: PendingChange] {
    if let table { return table }
    var out = [[UInt8]: PendingChange](minimumCapacity: ordered.count * 2)
    for (key, change) in ordered { out[key] = change }
    ordered = []
    return out
  }

  subscript(key: [UInt8]) -> PendingChange? {
    get {
      if let table { return table[key] }
      if let last = ordered.last {
        // Keys arriving in ascending order (the common case) are at or past the end.
        let order = compareBytes(last.key, key)
        if order == 0 { return last.change }
        if order < 0 { return nil }
      }
      let (index, found) = position(of: key)
      return found ? ordered[index].change : nil
    }
    set {
      if table != nil {
        table?[key] = newValue
        return
      }
      if ordered.isEmpty || compareBytes(ordered[ordered.count - 1].key, key) < 0 {
        if let newValue { ordered.append((key, newValue)) }
        return
      }
      let (index, found) = position(of: key)
      if found, let newValue {
        ordered[index].change = newValue
        return
      }
      // Out of order, or a change withdrawn from the middle: a dictionary from now on.
      var spilled = spill()
      spilled[key] = newValue
      table = spilled
    }
  }

  /// Every change, in key order.
  func sorted() -> [(key: [UInt8], change: PendingChange)] {
    guard let table else { return ordered }
    return table.map { (key: $0.key, change: $0.value) }.sorted { compareBytes($0.key, $1.key) < 0 }
  }
}
