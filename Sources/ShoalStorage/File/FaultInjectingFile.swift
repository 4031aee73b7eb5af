import Foundation
import Synchronization

/// A file that simulates power loss, like SQLite's crash VFS.
///
/// Writes go to a volatile view (what a reader sees through the page cache); `sync()` makes
/// them durable. After `crashAfterOperations` writes and syncs the power is cut: that
/// operation and every later one throws `StorageError.powerLoss`. `crashImage(seed:)` then
/// builds what the disk could hold after the loss: every write not yet synced is, per
/// 512-byte sector, dropped, applied, or replaced with garbage. Bytes outside unsynced writes
/// are never damaged (the "powersafe overwrite" property of modern disks that SQLite also
/// assumes).
package final class FaultInjectingFile: StorageFile {
  package let path: String

  private struct State {
    var durable: [UInt8]
    var current: [UInt8]
    /// Writes not yet durable, in order, each with its number (`written` when it was made).
    var pending: [(offset: Int, bytes: [UInt8], number: Int)] = []
    var written = 0
    var operations = 0
    var crashAfter: Int?
    var crashed = false
  }

  private let state: Mutex<State>
  /// How long a sync takes (nil: no time). A sync makes durable the writes made before it
  /// began, as `fdatasync` does; writes made while it runs stay pending. Lets writers of
  /// several threads commit while a sync is in flight (group commit).
  private let syncDuration: Duration?

  /// Starts from `contents`, which are durable. `crashAfterOperations: nil` never crashes.
  package init(
    path: String = "<fault-injecting>", contents: [UInt8] = [], crashAfterOperations: Int?,
    syncDuration: Duration? = nil
  ) {
    self.path = path
    self.syncDuration = syncDuration
    state = Mutex(State(durable: contents, current: contents, crashAfter: crashAfterOperations))
  }

  /// Counts an operation; returns true if this one is where the power is cut.
  private static func tick(_ s: inout State) throws -> Bool {
    if s.crashed { throw StorageError.powerLoss }
    s.operations += 1
    if let limit = s.crashAfter, s.operations >= limit {
      s.crashed = true
      return true
    }
    return false
  }

  package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    try state.withLock { s in
      if s.crashed { throw StorageError.powerLoss }
      guard offset < UInt64(s.current.count) else { return 0 }
      let start = Int(offset)
      let n = min(buffer.count, s.current.count - start)
      s.current.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[start..<start + n])) }
      return n
    }
  }

  package func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
    try state.withLock { s in
      let cut = try FaultInjectingFile.tick(&s)
      // The write that the power cut interrupts may still partly reach the disk.
      s.written += 1
      s.pending.append((Int(offset), Array(bytes), s.written))
      MemoryFile.apply(bytes, at: Int(offset), to: &s.current)
      if cut { throw StorageError.powerLoss }
    }
  }

  package func sync() throws {
    let begun = try state.withLock { s in
      if try FaultInjectingFile.tick(&s) { throw StorageError.powerLoss }
      return s.written
    }
    if let duration = syncDuration?.components {
      Thread.sleep(forTimeInterval: Double(duration.seconds) + Double(duration.attoseconds) / 1e18)
    }
    try state.withLock { s in
      if s.crashed { throw StorageError.powerLoss }
      // The writes made before the sync began reach the disk, in order.
      let landed = s.pending.prefix { $0.number <= begun }
      for write in landed { write.bytes.withUnsafeBytes { MemoryFile.apply($0, at: write.offset, to: &s.durable) } }
      s.pending.removeFirst(landed.count)
      if s.pending.isEmpty { s.durable = s.current }
    }
  }

  package func size() throws -> UInt64 {
    try state.withLock { s in
      if s.crashed { throw StorageError.powerLoss }
      return UInt64(s.current.count)
    }
  }

  package func truncate(to size: UInt64) throws {
    try state.withLock { s in
      if try FaultInjectingFile.tick(&s) { throw StorageError.powerLoss }
      let n = Int(size)
      if s.current.count > n {
        s.current.removeSubrange(n...)
      } else {
        s.current.append(contentsOf: repeatElement(0, count: n - s.current.count))
      }
      // Treated as a metadata operation that is durable at once.
      s.durable = s.current
      s.pending.removeAll()
    }
  }

  /// What the disk may hold after the power loss, decided by `seed`. The seed also picks how
  /// hard the loss hits: every unsynced write lost, every one landed, or sectors torn
  /// lightly (5% lost, 1% garbage) or heavily (40% lost, 10% garbage).
  package func crashImage(seed: UInt64) -> [UInt8] {
    state.withLock { s in
      var rng = SplitMix64(seed: seed)
      let (lost, garbage): (UInt64, UInt64) = [(100, 0), (0, 0), (5, 1), (40, 10)][Int(rng.next() % 4)]
      var image = s.durable
      let sector = 512
      for write in s.pending {
        var position = write.offset
        let end = write.offset + write.bytes.count
        while position < end {
          let chunkEnd = min(end, (position / sector + 1) * sector)
          let roll = rng.next() % 100
          if roll < lost {
            // Dropped: the sector keeps its durable contents.
          } else {
            var chunk = Array(write.bytes[(position - write.offset)..<(chunkEnd - write.offset)])
            if roll >= 100 - garbage { for i in chunk.indices { chunk[i] = UInt8(truncatingIfNeeded: rng.next()) } }
            chunk.withUnsafeBytes { MemoryFile.apply($0, at: position, to: &image) }
          }
          position = chunkEnd
        }
      }
      return image
    }
  }
}

/// A small, fast, seedable generator for trials (SplitMix64).
package struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64
  package init(seed: UInt64) { state = seed }
  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
