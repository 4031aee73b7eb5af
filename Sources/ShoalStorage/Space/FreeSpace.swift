/// The free extents of a file and the version that freed each.
///
/// Space freed by commit V was still reachable from version V-1, so it may be reused only
/// once no pinned version is older than V (LMDB's rule): `promote(horizon:)` moves extents
/// with `freedAt <= horizon` into the allocatable set, coalescing neighbours. A commit
/// allocates runs (`allocateRun`) and packs its blocks into them: a page-aligned window when
/// one is free, else a good fit by power-of-two size classes; with nothing free, the file
/// grows at `fileEnd`.
struct FreeSpace {
  struct Extent: Equatable {
    var offset: UInt64
    var length: UInt64
    var freedAt: UInt64
  }

  /// Reusable now: start -> length, coalesced.
  private(set) var available: [UInt64: UInt64] = [:]
  /// Reusable now: end -> start (for coalescing).
  private var availableEnds: [UInt64: UInt64] = [:]
  /// Size classes of `available`: class k holds extents of length in [2^k, 2^(k+1)).
  private var classes = [Set<UInt64>](repeating: [], count: 64)
  /// Not yet reusable.
  private(set) var pending: [Extent] = []
  /// End of the allocated region.
  private(set) var fileEnd: UInt64

  init(fileEnd: UInt64) { self.fileEnd = fileEnd }

  var availableBytes: UInt64 { available.values.reduce(0, +) }
  var pendingBytes: UInt64 { pending.reduce(0) { $0 + $1.length } }
  var totalFreeBytes: UInt64 { availableBytes + pendingBytes }
  var extentCount: Int { available.count + pending.count }

  private static func sizeClass(_ length: UInt64) -> Int { 63 - length.leadingZeroBitCount }

  private mutating func addAvailable(_ start: UInt64, _ length: UInt64) {
    var start = start
    var length = length
    if let before = availableEnds[start] {
      let beforeLength = start - before
      removeAvailable(before, beforeLength)
      start = before
      length += beforeLength
    }
    if let afterLength = available[start + length] {
      removeAvailable(start + length, afterLength)
      length += afterLength
    }
    available[start] = length
    availableEnds[start + length] = start
    classes[FreeSpace.sizeClass(length)].insert(start)
  }

  private mutating func removeAvailable(_ start: UInt64, _ length: UInt64) {
    available[start] = nil
    availableEnds[start + length] = nil
    classes[FreeSpace.sizeClass(length)].remove(start)
  }

  /// Records that this commit (`version`) no longer reaches the extent.
  mutating func free(offset: UInt64, length: UInt64, version: UInt64) {
    guard length > 0 else { return }
    pending.append(Extent(offset: offset, length: length, freedAt: version))
  }

  /// Makes every extent freed at or before `horizon` allocatable.
  mutating func promote(horizon: UInt64) {
    guard pending.contains(where: { $0.freedAt <= horizon }) else { return }
    var keep: [Extent] = []
    for e in pending {
      if e.freedAt <= horizon { addAvailable(e.offset, e.length) } else { keep.append(e) }
    }
    pending = keep
    // Space at the very end is handed back to the end of the file.
    while let start = availableEnds[fileEnd] {
      removeAvailable(start, fileEnd - start)
      fileEnd = start
    }
  }

  /// The tightest fit for `length` bytes among up to 32 extents of the request's own size
  /// class, else an extent of the smallest larger class (which always fits); nil if none.
  private mutating func fit(_ length: UInt64) -> UInt64? {
    let wanted = FreeSpace.sizeClass(length)
    var best: (start: UInt64, have: UInt64)?
    var checked = 0
    for start in classes[wanted] {
      if let have = available[start], have >= length, have < (best?.have ?? .max) {
        best = (start, have)
        if have == length { break }
      }
      checked += 1
      if checked == 32 { break }
    }
    if let best { return take(best.start, best.have, length) }
    for k in (wanted + 1)..<64 {
      if let start = classes[k].first, let have = available[start] { return take(start, have, length) }
    }
    return nil
  }

  /// Allocates `length` bytes (a multiple of `alignment`) for a commit's blocks to share:
  /// preferably a window starting on an `alignment` boundary inside an available extent, so a
  /// small commit dirties a single page and its sync writes back one page, not one per block;
  /// else any extent that fits (no growth); else the end of the file, rounded up to the
  /// boundary (the gap stays available).
  mutating func allocateRun(_ length: UInt64, alignment: UInt64) -> UInt64 {
    for k in FreeSpace.sizeClass(length)..<64 {
      var checked = 0
      for start in classes[k] {
        guard let have = available[start] else { continue }
        let aligned = (start + alignment - 1) / alignment * alignment
        if aligned + length <= start + have {
          removeAvailable(start, have)
          if aligned > start { addAvailable(start, aligned - start) }
          if start + have > aligned + length { addAvailable(aligned + length, start + have - aligned - length) }
          return aligned
        }
        checked += 1
        if checked == 32 { break }
      }
    }
    if let start = fit(length) { return start }
    // Growing: no alignment gap, so a file written by appending (a bulk load, a compacted
    // copy) stays dense; the caller hands back what it does not use.
    let start = fileEnd
    fileEnd += length
    return start
  }

  /// Returns an extent this transaction allocated and did not use.
  mutating func unallocate(_ offset: UInt64, _ length: UInt64) {
    if offset + length == fileEnd { fileEnd = offset } else { addAvailable(offset, length) }
  }

  private mutating func take(_ start: UInt64, _ have: UInt64, _ length: UInt64) -> UInt64 {
    removeAvailable(start, have)
    if have > length { addAvailable(start + length, have - length) }
    return start
  }

  /// Every free extent, sorted by offset (available ones with `freedAt` 0).
  var allExtents: [Extent] {
    var all = available.map { Extent(offset: $0.key, length: $0.value, freedAt: 0) } + pending
    all.sort { $0.offset < $1.offset }
    return all
  }

  private static func varintSize(_ v: UInt64) -> Int { v < 0x80 ? 1 : (64 - v.leadingZeroBitCount + 6) / 7 }

  /// The exact size of `encode()`, computed without encoding.
  var encodedSize: Int {
    var size = 8 + FreeSpace.varintSize(UInt64(extentCount))
    for (offset, length) in available { size += FreeSpace.varintSize(offset) + FreeSpace.varintSize(length) + 1 }
    for e in pending {
      size += FreeSpace.varintSize(e.offset) + FreeSpace.varintSize(e.length) + FreeSpace.varintSize(e.freedAt)
    }
    return size
  }

  /// The persistent form: `fileEnd`, a count, then (offset, length, freedAt) varints per
  /// extent, in no particular order (available extents have `freedAt` 0). O(n), no sorting:
  /// it is written by every commit.
  func encode() -> [UInt8] {
    var w = ByteWriter(capacity: encodedSize)
    w.u64(fileEnd)
    w.varint(UInt64(extentCount))
    for (offset, length) in available {
      w.varint(offset)
      w.varint(length)
      w.varint(0)
    }
    for e in pending {
      w.varint(e.offset)
      w.varint(e.length)
      w.varint(e.freedAt)
    }
    return w.bytes
  }

  /// Decodes the persistent form; nil if it is inconsistent (overlaps, out of range).
  static func decode(_ bytes: [UInt8]) -> FreeSpace? {
    var r = ByteReader(bytes)
    guard let fileEnd = r.fixed(UInt64.self), let count = r.varint(), count <= UInt64(bytes.count) else { return nil }
    var space = FreeSpace(fileEnd: fileEnd)
    for _ in 0..<count {
      guard let offset = r.varint(), let length = r.varint(), let freedAt = r.varint() else { return nil }
      let (end, overflow) = offset.addingReportingOverflow(length)
      guard !overflow, length > 0, offset >= FileLayout.dataStart, end <= fileEnd,
        offset % FileLayout.granule == 0, length % FileLayout.granule == 0
      else { return nil }
      if freedAt == 0 {
        // Available extents are stored coalesced: one touching another is damage.
        guard space.available[offset] == nil, space.available[end] == nil, space.availableEnds[end] == nil,
          space.availableEnds[offset] == nil
        else { return nil }
        space.addAvailable(offset, length)
      } else {
        space.pending.append(Extent(offset: offset, length: length, freedAt: freedAt))
      }
    }
    return space
  }
}
