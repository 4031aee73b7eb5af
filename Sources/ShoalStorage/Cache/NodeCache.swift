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

  private struct Slot {
    var key: Key
    var node: NodeImage?
    var referenced: Bool
  }

  private struct State {
    var index = NodeIndex()
    var slots: [Slot] = []
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

  func get(_ key: Key) -> NodeImage? {
    state.withLock { s in
      guard let i = s.index.slot(key.offset, key.checksum) else {
        s.misses += 1
        return nil
      }
      s.hits += 1
      s.slots[i].referenced = true
      return s.slots[i].node
    }
  }

  func insert(_ key: Key, _ node: NodeImage) {
    let size = node.bytes.count + 8 * node.count + 96
    guard size <= capacity else { return }
    state.withLock { s in
      guard s.index.slot(key.offset, key.checksum) == nil else { return }
      while s.bytes + size > capacity, s.index.count > 0 {
        if s.hand >= s.slots.count { s.hand = 0 }
        if let node = s.slots[s.hand].node {
          if s.slots[s.hand].referenced {
            s.slots[s.hand].referenced = false
          } else {
            s.bytes -= node.bytes.count + 8 * node.count + 96
            _ = s.index.remove(s.slots[s.hand].key.offset, s.slots[s.hand].key.checksum)
            s.slots[s.hand].node = nil
            s.freeSlots.append(s.hand)
          }
        }
        s.hand += 1
      }
      let slot = Slot(key: key, node: node, referenced: false)
      if let i = s.freeSlots.popLast() {
        s.slots[i] = slot
        s.index.insert(key.offset, key.checksum, slot: i)
      } else {
        s.slots.append(slot)
        s.index.insert(key.offset, key.checksum, slot: s.slots.count - 1)
      }
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
        guard let i = s.index.remove(key.offset, key.checksum), let node = s.slots[i].node else { continue }
        s.bytes -= node.bytes.count + 8 * node.count + 96
        s.slots[i].node = nil
        s.freeSlots.append(i)
      }
    }
  }

  /// Bytes held, entries, hits and misses.
  var statistics: (bytes: Int, entries: Int, hits: UInt64, misses: UInt64) {
    state.withLock { ($0.bytes, $0.index.count, $0.hits, $0.misses) }
  }
}
