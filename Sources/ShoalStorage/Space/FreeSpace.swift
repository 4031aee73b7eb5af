/// The free extents of a file and the version that freed each.
///
/// Space freed by commit V was still reachable from version V-1, so it may be reused only
/// once no pinned version is older than V (LMDB's rule): `promote(horizon:)` moves extents
/// with `freedAt <= horizon` into the allocatable set, coalescing neighbours. A commit packs
/// the blocks the next commit will free again (branches, roots, the free list) into runs
/// (`allocateRun`: a page-aligned window when one is free) and gives the others (leaves,
/// large values) a good fit by power-of-two size classes each (`allocate`); with nothing
/// free, the file grows at `fileEnd`.
struct FreeSpace {
  struct Extent: Equatable {
    var offset: UInt64
    var length: UInt64
    var freedAt: UInt64
  }

  /// Reusable now: start -> length, coalesced.
  private(set) var available = OffsetMap()
  /// Reusable now: end -> start (for coalescing).
  private var availableEnds = OffsetMap()
  /// Size classes of `available`, each listing the starts of its extents in no particular
  /// order: one class per length up to `exactClasses` granules (every extent of such a class
  /// fits a request of its length: the first one is a tightest fit), then one per power of two.
  private var classes = [[UInt64]](repeating: [], count: FreeSpace.classCount)
  /// Where each available extent's start is in its class's list (for removal in O(1)).
  private var classPosition = OffsetMap()
  /// Bit k set when class k is not empty: the next class with an extent is a bit scan away.
  private var occupied = [UInt64](repeating: 0, count: (FreeSpace.classCount + 63) / 64)
  /// Not yet reusable.
  private(set) var pending: [Extent] = []
  /// Bytes the entries of `available` and of `pending` take in `encode()`, kept as they
  /// change: every commit writes the list and asks its size first.
  private var availableEncodedSize = 0
  private var pendingEncodedSize = 0
  /// End of the allocated region.
  private(set) var fileEnd: UInt64

  /// One change to the extents, as the stored log of changes (a delta block) records it.
  enum Change {
    case insertAvailable(UInt64, UInt64)
    case removeAvailable(UInt64, UInt64)
    case addPending(Extent)
    case removePending(Extent)
    /// The end of the allocated region moved (later changes may reach up to it).
    case setFileEnd(UInt64)
  }
  /// The changes since the list was last stored, in order: the next commit may store just
  /// these (see `encodeDelta`).
  private(set) var changes: [Change] = []
  /// Bytes `changes` take encoded.
  private(set) var changesEncodedSize = 0
  /// The blocks the stored list is made of: a full list, then the deltas on top of it,
  /// oldest first (empty before the first commit).
  private(set) var chain: [BlockPointer] = []
  /// Bytes of the delta blocks in `chain`.
  private(set) var chainDeltaBytes: UInt64 = 0

  init(fileEnd: UInt64) { self.fileEnd = fileEnd }

  var availableBytes: UInt64 {
    var total: UInt64 = 0
    available.forEach { _, length in total += length }
    return total
  }
  var pendingBytes: UInt64 { pending.reduce(0) { $0 + $1.length } }
  var totalFreeBytes: UInt64 { availableBytes + pendingBytes }
  var extentCount: Int { available.count + pending.count }

  /// Lengths up to this many granules (32 KiB) have a class each.
  private static let exactClasses = 256
  private static let classCount = exactClasses + 64

  /// The class of extents of `length` bytes (a multiple of the granule).
  private static func sizeClass(_ length: UInt64) -> Int {
    let units = length / FileLayout.granule
    if units <= UInt64(exactClasses) { return Int(units) }
    return exactClasses + (63 - length.leadingZeroBitCount)
  }

  /// The first class at or after `k` that holds an extent, or nil.
  private func nextOccupied(from k: Int) -> Int? {
    guard k < FreeSpace.classCount else { return nil }
    var word = k / 64
    var bits = occupied[word] & (~0 << UInt64(k % 64))
    while true {
      if bits != 0 { return word * 64 + bits.trailingZeroBitCount }
      word += 1
      guard word < occupied.count else { return nil }
      bits = occupied[word]
    }
  }

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
    insertAvailable(start, length)
  }

  private mutating func insertAvailable(_ start: UInt64, _ length: UInt64, logged: Bool = true) {
    available[start] = length
    availableEnds[start + length] = start
    let k = FreeSpace.sizeClass(length)
    classPosition[start] = UInt64(classes[k].count)
    classes[k].append(start)
    occupied[k / 64] |= 1 << UInt64(k % 64)
    availableEncodedSize += FreeSpace.encodedSize(of: Extent(offset: start, length: length, freedAt: 0))
    if logged { log(.insertAvailable(start, length)) }
  }

  private mutating func removeAvailable(_ start: UInt64, _ length: UInt64, logged: Bool = true) {
    available[start] = nil
    availableEnds[start + length] = nil
    let k = FreeSpace.sizeClass(length)
    if let position = classPosition[start].map(Int.init) {
      // Swap-remove: the last start of the class takes this one's place.
      let last = classes[k].removeLast()
      if position < classes[k].count {
        classes[k][position] = last
        classPosition[last] = UInt64(position)
      }
      classPosition[start] = nil
      if classes[k].isEmpty { occupied[k / 64] &= ~(1 << UInt64(k % 64)) }
    }
    availableEncodedSize -= FreeSpace.encodedSize(of: Extent(offset: start, length: length, freedAt: 0))
    if logged { log(.removeAvailable(start, length)) }
  }

  private mutating func setFileEnd(_ end: UInt64) {
    fileEnd = end
    log(.setFileEnd(end))
  }

  private mutating func log(_ change: Change) {
    changes.append(change)
    changesEncodedSize += FreeSpace.encodedSize(of: change)
  }

  /// Records that this commit (`version`) no longer reaches the extent.
  mutating func free(offset: UInt64, length: UInt64, version: UInt64) {
    guard length > 0 else { return }
    addPending(Extent(offset: offset, length: length, freedAt: version))
  }

  private mutating func addPending(_ e: Extent, logged: Bool = true) {
    pending.append(e)
    pendingEncodedSize += FreeSpace.encodedSize(of: e)
    if logged { log(.addPending(e)) }
  }

  /// Makes every extent freed at or before `horizon` allocatable.
  mutating func promote(horizon: UInt64) {
    guard pending.contains(where: { $0.freedAt <= horizon }) else { return }
    // In place, in order: the extents kept slide down over those promoted. Every writer runs
    // this at each commit, over a list that holds the freed commit records until their anchor
    // interval passes (a hundred extents or more).
    var kept = 0
    for i in pending.indices {
      let e = pending[i]
      if e.freedAt <= horizon {
        log(.removePending(e))
        pendingEncodedSize -= FreeSpace.encodedSize(of: e)
        addAvailable(e.offset, e.length)
      } else {
        pending[kept] = e
        kept += 1
      }
    }
    pending.removeLast(pending.count - kept)
    // Space at the very end is handed back to the end of the file.
    while let start = availableEnds[fileEnd] {
      removeAvailable(start, fileEnd - start)
      setFileEnd(start)
    }
  }

  /// The tightest fit for `length` bytes: the first extent of the smallest class at or above
  /// its own that has one, when that class has one length; in a class of a range of lengths
  /// (beyond `exactClasses` granules), the tightest of up to 32 that fit, else the first of
  /// the next class up (which always fits); nil if none.
  private mutating func fit(_ length: UInt64) -> UInt64? {
    var k = FreeSpace.sizeClass(length)
    while let found = nextOccupied(from: k) {
      if found <= FreeSpace.exactClasses || found > FreeSpace.sizeClass(length) {
        // Every extent of the class fits.
        guard let start = classes[found].first, let have = available[start] else { return nil }
        return take(start, have, length)
      }
      var best: (start: UInt64, have: UInt64)?
      for start in classes[found].prefix(32) {
        if let have = available[start], have >= length, have < (best?.have ?? .max) {
          best = (start, have)
          if have == length { break }
        }
      }
      if let best { return take(best.start, best.have, length) }
      k = found + 1
    }
    return nil
  }

  /// Allocates `length` bytes (a multiple of the granule) for one block: the tightest fit,
  /// else the end of the file.
  mutating func allocate(_ length: UInt64) -> UInt64 {
    if let start = fit(length) { return start }
    let start = fileEnd
    setFileEnd(fileEnd + length)
    return start
  }

  /// Allocates `length` bytes (a multiple of `alignment`) for a commit's blocks to share:
  /// preferably a window starting on an `alignment` boundary inside an available extent, so a
  /// small commit dirties a single page and its sync writes back one page, not one per block;
  /// else any extent that fits (no growth); else the end of the file, rounded up to the
  /// boundary (the gap stays available).
  mutating func allocateRun(_ length: UInt64, alignment: UInt64) -> UInt64 {
    // Found first and taken after the loop: changing a size class while iterating it would
    // copy the whole set.
    var found: (start: UInt64, have: UInt64, aligned: UInt64)?
    var k = FreeSpace.sizeClass(length)
    search: while let next = nextOccupied(from: k) {
      for start in classes[next].prefix(32) {
        guard let have = available[start] else { continue }
        let aligned = (start + alignment - 1) / alignment * alignment
        if aligned + length <= start + have {
          found = (start, have, aligned)
          break search
        }
      }
      k = next + 1
    }
    if let (start, have, aligned) = found {
      removeAvailable(start, have)
      if aligned > start { addAvailable(start, aligned - start) }
      if start + have > aligned + length { addAvailable(aligned + length, start + have - aligned - length) }
      return aligned
    }
    // Growing: no alignment gap, so a file written by appending (a bulk load, a compacted
    // copy) stays dense; the caller hands back what it does not use.
    return allocate(length)
  }

  /// Returns an extent this transaction allocated and did not use.
  mutating func unallocate(_ offset: UInt64, _ length: UInt64) {
    if offset + length == fileEnd { setFileEnd(offset) } else { addAvailable(offset, length) }
  }

  private mutating func take(_ start: UInt64, _ have: UInt64, _ length: UInt64) -> UInt64 {
    removeAvailable(start, have)
    if have > length { addAvailable(start + length, have - length) }
    return start
  }

  /// Every free extent, sorted by offset (available ones with `freedAt` 0).
  var allExtents: [Extent] {
    var all = pending
    available.forEach { offset, length in all.append(Extent(offset: offset, length: length, freedAt: 0)) }
    all.sort { $0.offset < $1.offset }
    return all
  }

  private static func encodedSize(of e: Extent) -> Int {
    Varint.size(of: e.offset) + Varint.size(of: e.length) + Varint.size(of: e.freedAt)
  }

  /// The exact size of `encode()`, without encoding (kept up to date as extents change).
  var encodedSize: Int {
    8 + Varint.size(of: UInt64(extentCount)) + availableEncodedSize + pendingEncodedSize
  }

  /// The persistent form: `fileEnd`, a count, then (offset, length, freedAt) varints per
  /// extent, in no particular order (available extents have `freedAt` 0). O(n), no sorting:
  /// it is written by every commit.
  func encode() -> [UInt8] {
    var w = ByteWriter(capacity: encodedSize)
    w.u64(fileEnd)
    w.varint(UInt64(extentCount))
    available.forEach { offset, length in
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
    // Sized once: a writer of another process loads the list at each of its commits.
    space.available.reserveCapacity(Int(count))
    space.availableEnds.reserveCapacity(Int(count))
    space.classPosition.reserveCapacity(Int(count))
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
        space.insertAvailable(offset, length, logged: false)
      } else {
        space.addPending(Extent(offset: offset, length: length, freedAt: freedAt), logged: false)
      }
    }
    return space
  }

  // MARK: The stored chain

  /// The first bytes of a delta block (a full list starts with its `fileEnd`, which can never
  /// take this value: it reads as about 3.5 EB).
  static let deltaMagic = Array("SHOALFD1".utf8)
  /// The most deltas a chain holds before the next commit stores the full list again.
  static let maximumChainLength = 64

  private static func encodedSize(of change: Change) -> Int {
    switch change {
    case .insertAvailable(let o, let l), .removeAvailable(let o, let l):
      return 1 + Varint.size(of: o) + Varint.size(of: l)
    case .addPending(let e), .removePending(let e): return 1 + encodedSize(of: e)
    case .setFileEnd(let end): return 1 + Varint.size(of: end)
    }
  }

  /// Whether the next commit should store only `changes` on top of the stored list (like a
  /// ZFS space map's log): when the chain is short and all its deltas together stay within
  /// the budget (`deltaBudgetFactor`). A commit that changes a few extents of a list of thousands then
  /// writes tens of bytes, not the whole list, and a writer of another process brings its copy
  /// up to date by reading the deltas stored since its own commit, not the whole list.
  var shouldStoreDelta: Bool {
    !chain.isEmpty && chain.count <= FreeSpace.maximumChainLength
      && chainDeltaBytes + UInt64(deltaEncodedSize) <= deltaBudget
  }

  /// About the bytes the next commit's free list will take, for the run reserved for it when
  /// this commit (`version`) stores its own: a delta the size of this commit's, plus, when
  /// this commit stores the whole list and frees the chain, each chain block coming back (a
  /// pending extent leaves, an available one arrives, perhaps merged with a neighbour); or the
  /// whole list, when this commit's delta leaves the chain no room for another.
  /// `overhead` is what sealing adds to a block (0 for a plain file).
  func nextFreeListEstimate(version: UInt64, overhead: Int) -> Int {
    let delta = deltaEncodedSize
    guard shouldStoreDelta else {
      return chain.reduce(delta) { sum, block in
        let extent = Extent(offset: block.offset, length: block.extentLength, freedAt: version)
        let available = Change.insertAvailable(block.offset, block.extentLength)
        return sum + FreeSpace.encodedSize(of: .removePending(extent)) + 2 * FreeSpace.encodedSize(of: available)
      }
    }
    // This commit's delta takes the block `writeFreeList` reserves for it: counted at its bare
    // size, the estimate found room for another delta where the successor had to store the
    // whole list.
    let stored = chainDeltaBytes + FreeSpace.blockLength(delta + overhead)
    let room = chain.count + 1 <= FreeSpace.maximumChainLength && stored + UInt64(delta) <= deltaBudget
    return room ? delta : encodedSize
  }

  /// The bytes reserved for a stored list of `bytes` (sealed, if the file is): 64 to spare, in
  /// whole granules (`CommitWriter.writeFreeList`).
  static func blockLength(_ bytes: Int) -> UInt64 { FileLayout.roundUp(UInt64(bytes) + 64) }

  /// The bytes of deltas a chain on top of this list may hold: `deltaBudgetFactor` times the
  /// full list, and at least `deltaBudgetFloor`.
  var deltaBudget: UInt64 { max(FreeSpace.deltaBudgetFactor * UInt64(encodedSize), FreeSpace.deltaBudgetFloor) }

  /// How many bytes of deltas a chain may hold, as a multiple of the full list's size. Every writer of another process extends its copy by the deltas
  /// stored since its own commit; a full list stored since makes it decode the whole list
  /// again. A delta takes a few hundred bytes on disk (a granule at least), a full list of a
  /// hundred extents about 1.4 KiB: with half the list's size as the budget, as before, every
  /// second commit stored the full list and every writer decoded it, a third of the time it
  /// held the writer lock with four processes writing.
  static let deltaBudgetFactor: UInt64 = 4
  /// The least a chain's deltas may take, whatever the list's size (8 KiB): a delta fills a
  /// granule or more, so four times a list of a few extents allowed only three or four of
  /// them. With four processes writing, a full list had then been stored since a writer's
  /// last commit at more than half of its commits, and decoding it took 52 µs of the writer
  /// lock where extending by the deltas took 30 µs (thread CPU time, `bench-peer commit`).
  static let deltaBudgetFloor: UInt64 = 64 * FileLayout.granule

  /// The exact size of `encodeDelta`.
  var deltaEncodedSize: Int {
    FreeSpace.deltaMagic.count + BlockPointer.encodedSize + 8 + Varint.size(of: UInt64(changes.count))
      + changesEncodedSize
  }

  /// A delta block: the magic, the block below it in the chain, `fileEnd`, then `changes`.
  func encodeDelta() -> [UInt8] {
    var w = ByteWriter(capacity: deltaEncodedSize)
    w.bytes.append(contentsOf: FreeSpace.deltaMagic)
    (chain.last ?? .null).encode(into: &w)
    w.u64(fileEnd)
    w.varint(UInt64(changes.count))
    for change in changes {
      switch change {
      case .insertAvailable(let o, let l), .removeAvailable(let o, let l):
        if case .insertAvailable = change { w.u8(0) } else { w.u8(1) }
        w.varint(o)
        w.varint(l)
      case .addPending(let e), .removePending(let e):
        if case .addPending = change { w.u8(2) } else { w.u8(3) }
        w.varint(e.offset)
        w.varint(e.length)
        w.varint(e.freedAt)
      case .setFileEnd(let end):
        w.u8(4)
        w.varint(end)
      }
    }
    return w.bytes
  }

  /// Records that the list was stored in `block`: a full list starts a new chain, a delta
  /// extends it. Either way the changes are now on disk.
  mutating func stored(in block: BlockPointer, delta: Bool) {
    if delta {
      chain.append(block)
      chainDeltaBytes += block.extentLength
    } else {
      chain = [block]
      chainDeltaBytes = 0
    }
    changes = []
    changesEncodedSize = 0
  }

  /// Applies one decoded delta; false if it does not fit the list (damage).
  private mutating func apply(_ bytes: [UInt8]) -> Bool {
    var r = ByteReader(bytes, position: FreeSpace.deltaMagic.count + BlockPointer.encodedSize)
    guard let end = r.fixed(UInt64.self), let count = r.varint(), count <= UInt64(bytes.count) else { return false }
    func valid(_ o: UInt64, _ l: UInt64) -> Bool {
      let (e, overflow) = o.addingReportingOverflow(l)
      return !overflow && l > 0 && o >= FileLayout.dataStart && e <= fileEnd && o % FileLayout.granule == 0
        && l % FileLayout.granule == 0
    }
    for _ in 0..<count {
      guard let tag = r.u8() else { return false }
      if tag == 4 {
        guard let moved = r.varint(), moved >= FileLayout.dataStart, moved % FileLayout.granule == 0 else {
          return false
        }
        fileEnd = moved
        continue
      }
      guard let o = r.varint(), let l = r.varint(), valid(o, l) else { return false }
      switch tag {
      case 0:
        guard available[o] == nil, availableEnds[o + l] == nil else { return false }
        insertAvailable(o, l, logged: false)
      case 1:
        guard available[o] == l else { return false }
        removeAvailable(o, l, logged: false)
      case 2, 3:
        guard let freedAt = r.varint(), freedAt > 0 else { return false }
        let e = Extent(offset: o, length: l, freedAt: freedAt)
        if tag == 2 {
          addPending(e, logged: false)
        } else {
          // Promotions remove the oldest extents, at the front.
          guard let i = pending.firstIndex(of: e) else { return false }
          pending.remove(at: i)
          pendingEncodedSize -= FreeSpace.encodedSize(of: e)
        }
      default: return false
      }
    }
    return fileEnd == end
  }

  /// Reads the stored list whose newest block is `head` (`read` returns a block's verified
  /// bytes): a full list, or deltas back to one, applied oldest first. Nil if the blocks do
  /// not make a consistent list ending at `fileEnd`.
  /// Brings this list, that of an older version of the same file which this process holds,
  /// up to the list `head` names: when `head` is a chain of deltas stored on top of the block
  /// this list was stored in (other processes' commits since), only those deltas are read and
  /// applied, in place. False when it is not (a full list was stored since: load it whole),
  /// or when a delta does not fit; the list is then left in an unspecified state.
  mutating func extend(to head: BlockPointer, fileEnd: UInt64, read: (BlockPointer) throws -> [UInt8]) throws -> Bool {
    guard let top = chain.last, changes.isEmpty, !head.isNull else { return false }
    var deltas: [(BlockPointer, [UInt8])] = []
    var block = head
    while block != top {
      guard deltas.count <= FreeSpace.maximumChainLength else { return false }
      let bytes = try read(block)
      guard bytes.count >= FreeSpace.deltaMagic.count,
        Array(bytes[0..<FreeSpace.deltaMagic.count]) == FreeSpace.deltaMagic
      else { return false }
      var r = ByteReader(bytes, position: FreeSpace.deltaMagic.count)
      guard let below = BlockPointer.decode(&r), !below.isNull else { return false }
      deltas.append((block, bytes))
      block = below
    }
    for (pointer, delta) in deltas.reversed() {
      guard apply(delta) else { return false }
      chain.append(pointer)
      chainDeltaBytes += pointer.extentLength
    }
    return self.fileEnd == fileEnd
  }

  static func load(_ head: BlockPointer, fileEnd: UInt64, read: (BlockPointer) throws -> [UInt8]) throws -> FreeSpace? {
    guard !head.isNull else { return FreeSpace(fileEnd: fileEnd) }
    var deltas: [(BlockPointer, [UInt8])] = []
    var block = head
    while true {
      let bytes = try read(block)
      guard bytes.count >= deltaMagic.count, Array(bytes[0..<deltaMagic.count]) == deltaMagic else {
        guard var space = decode(bytes) else { return nil }
        space.chain = [block]
        for (pointer, delta) in deltas.reversed() {
          guard space.apply(delta) else { return nil }
          space.chain.append(pointer)
          space.chainDeltaBytes += pointer.extentLength
        }
        return space.fileEnd == fileEnd ? space : nil
      }
      var r = ByteReader(bytes, position: deltaMagic.count)
      guard deltas.count < maximumChainLength + 1, let below = BlockPointer.decode(&r), !below.isNull else {
        return nil
      }
      deltas.append((block, bytes))
      block = below
    }
  }
}
