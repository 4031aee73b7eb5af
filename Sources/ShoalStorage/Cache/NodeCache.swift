import Synchronization

/// A bounded cache of decompressed, validated nodes shared by every transaction of a store.
///
/// Keyed by a block's offset and checksum: a block is never modified in place, and space
/// that is reused holds a block with another checksum, so an entry can never be stale.
/// Eviction is CLOCK (second chance) over a byte budget.
final class NodeCache: Sendable {
  struct Key {
    let offset: UInt64
    let checksum: UInt64
  }

  private struct State {
    /// The nodes, with their slots and second-chance bits.
    var index = NodeIndex<NodeImage>()
    /// The clock's ring: the key of the entry in each slot (offset 0: a free slot).
    var slots: [Key] = []
    var freeSlots: [Int] = []
    var hand = 0
    var bytes = 0
    var hits: UInt64 = 0
    var misses: UInt64 = 0
  }

  /// Budget in bytes of decompressed nodes.
  let capacity: Int
  private let state = Mutex(State())

  init(capacity: Int) {
    self.capacity = max(0, capacity)
    // Room for a full cache of nodes of the usual size (about 4–8 KiB), so that filling it
    // does not rehash the index over and over: the first commits of a process would pay.
    let expected = min(self.capacity / 8192, 1 << 17)
    state.withLock { s in
      s.index = NodeIndex(minimumCapacity: expected)
      s.slots.reserveCapacity(expected)
    }
  }

  /// The bytes a node is charged against the budget.
  private static func size(_ node: NodeImage) -> Int { node.byteCount + 8 * node.count + 96 }

  func get(_ key: Key) -> NodeImage? {
    state.withLock { s in
      guard let node = s.index.reference(key.offset, key.checksum) else {
        s.misses += 1
        return nil
      }
      s.hits += 1
      return node
    }
  }

  func insert(_ key: Key, _ node: NodeImage) {
    let size = NodeCache.size(node)
    guard size <= capacity, key.offset != 0 else { return }
    state.withLock { s in
      guard s.index.entry(key.offset, key.checksum) == nil else { return }
      while s.bytes + size > capacity, s.index.count > 0 {
        if s.hand >= s.slots.count { s.hand = 0 }
        let k = s.slots[s.hand]
        if k.offset != 0, s.index.takeReference(k.offset, k.checksum) != true {
          if let (old, _) = s.index.remove(k.offset, k.checksum) { s.bytes -= NodeCache.size(old) }
          s.slots[s.hand] = Key(offset: 0, checksum: 0)
          s.freeSlots.append(s.hand)
        }
        s.hand += 1
      }
      let slot: Int
      if let i = s.freeSlots.popLast() {
        s.slots[i] = key
        slot = i
      } else {
        s.slots.append(key)
        slot = s.slots.count - 1
      }
      s.index.insert(key.offset, key.checksum, value: node, slot: slot)
      s.bytes += size
    }
  }

  /// Drops the nodes of blocks a commit stopped referencing: the newest version can no longer
  /// reach them, so keeping them only grows the process (each new node then lands in fresh
  /// memory the kernel must zero) until the clock hand gets round to them. A snapshot still
  /// pinned at an older version reads such a block from the file again.
  func remove(_ keys: [Key]) {
    guard !keys.isEmpty else { return }
    state.withLock { s in
      for key in keys {
        guard let (node, slot) = s.index.remove(key.offset, key.checksum) else { continue }
        s.bytes -= NodeCache.size(node)
        s.slots[slot] = Key(offset: 0, checksum: 0)
        s.freeSlots.append(slot)
      }
    }
  }

  /// Bytes held, entries, hits and misses.
  var statistics: (bytes: Int, entries: Int, hits: UInt64, misses: UInt64) {
    state.withLock { ($0.bytes, $0.index.count, $0.hits, $0.misses) }
  }
}
