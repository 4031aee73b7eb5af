/// The free extents of a file and the version that freed each.
///
/// Space freed by commit V was still reachable from version V-1, so it may be reused only
/// once no pinned version is older than V (LMDB's rule): `promote(horizon:)` moves extents
/// with `freedAt <= horizon` into the allocatable set, coalescing neighbours. Allocation is
/// a good fit by power-of-two size classes; with nothing free, the file grows at `fileEnd`.
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

  /// Allocates `length` bytes (a multiple of the granule).
  mutating func allocate(_ length: UInt64) -> UInt64 {
    let wanted = FreeSpace.sizeClass(length)
    // The request's own class may hold a fit; look at a few of its members.
    var checked = 0
    for start in classes[wanted] {
      if let have = available[start], have >= length { return take(start, have, length) }
      checked += 1
      if checked == 8 { break }
    }
    for k in (wanted + 1)..<64 {
      if let start = classes[k].first, let have = available[start] { return take(start, have, length) }
    }
    let offset = fileEnd
    fileEnd += length
    return offset
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

  /// The persistent form: a count and (offset delta, length, freedAt) varints. Adjacent
  /// pending extents freed by the same version are merged.
  func encode() -> [UInt8] {
    var merged: [Extent] = []
    for e in allExtents {
      if var last = merged.last, last.freedAt == e.freedAt, last.offset + last.length == e.offset {
        last.length += e.length
        merged[merged.count - 1] = last
      } else {
        merged.append(e)
      }
    }
    var w = ByteWriter(capacity: 16 + merged.count * 8)
    w.u64(fileEnd)
    w.varint(UInt64(merged.count))
    var previousEnd: UInt64 = 0
    for e in merged {
      w.varint(e.offset - previousEnd)
      w.varint(e.length)
      w.varint(e.freedAt)
      previousEnd = e.offset + e.length
    }
    return w.bytes
  }

  /// Decodes the persistent form; nil if it is inconsistent (overlaps, out of range).
  static func decode(_ bytes: [UInt8]) -> FreeSpace? {
    var r = ByteReader(bytes)
    guard let fileEnd = r.fixed(UInt64.self), let count = r.varint(), count <= UInt64(bytes.count) else { return nil }
    var space = FreeSpace(fileEnd: fileEnd)
    var previousEnd: UInt64 = 0
    for _ in 0..<count {
      guard let delta = r.varint(), let length = r.varint(), let freedAt = r.varint() else { return nil }
      let (offset, o1) = previousEnd.addingReportingOverflow(delta)
      let (end, o2) = offset.addingReportingOverflow(length)
      guard !o1, !o2, length > 0, offset >= FileLayout.dataStart, end <= fileEnd,
        offset % FileLayout.granule == 0, length % FileLayout.granule == 0
      else { return nil }
      if freedAt == 0 {
        space.addAvailable(offset, length)
      } else {
        space.pending.append(Extent(offset: offset, length: length, freedAt: freedAt))
      }
      previousEnd = end
    }
    return space
  }
}
