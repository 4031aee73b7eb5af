#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The chain of commit records in a data file, and recovery along it: finding the newest whole
/// commit at open (falling back past a commit torn by a power loss), securing a commit a dead
/// writer left unsynced, and following commits other processes made since a known one. Store
/// and the coordination layer call it; it depends on neither.
enum CommitChain {
  /// Finds the newest commit that is whole (see `Recovery`), initialising an empty file.
  ///
  /// From each anchor it follows the chain of commit records to its end; the newest record
  /// found on any chain is the last commit that may have been in flight. It names a version
  /// known durable when it began (`Meta.durable`): the commits after that one may have shared
  /// a sync that never ended (group commit), so their records may name blocks that never
  /// reached the disk. They are verified in order, and the last one before the first that
  /// fails is the newest whole commit; when the first fails, the durable commit before it.
  /// Nothing older is considered: if that fails too, the file is damaged, not torn. Unless the open is read-only, the commit found is synced and the
  /// anchors it needs are written (see `secure`) before anything is built on it.
  /// Checks the header of `file` and returns the seal its blocks and records need with the
  /// key in `options` (nil for a plain file); a new file (or one whose creation was cut short
  /// before its header landed) is initialised first when `mayCreate`, encrypted when `options`
  /// has a key. Throws when the key does not fit the file (`FileLayout.seal`).
  static func openHeader(_ file: StorageFile, options: StoreOptions, mayCreate: Bool) throws -> FileSeal? {
    var size = try file.size()
    // A new file, or one whose creation was interrupted before its header (written last, see
    // `initialize`) landed: it holds nothing yet. Any other file is never made empty again: a
    // file cut short is an error, not a new database.
    if mayCreate, try size == 0 || (size <= FileLayout.dataStart && CommitChain.headerNeverWritten(file, size: size)) {
      guard !options.readOnly else { throw StorageError.notAShoalFile(path: file.path) }
      let seal = try FileSeal.validated(options.encryptionKey).map { FileSeal(newFileKey: $0) }
      try CommitChain.initialize(file, seal: seal)
      size = try file.size()
    }
    let header = try file.read(count: Int(min(size, FileLayout.headerSize)), at: 0)
    return try FileLayout.seal(header: header, key: options.encryptionKey, path: file.path, fileSize: size)
  }

  static func recover(_ file: StorageFile, blocks: BlockReader, options: StoreOptions) throws -> (
    Meta, UInt64?
  ) {
    let size = try file.size()
    let seal = blocks.seal
    guard size >= FileLayout.dataStart else {
      throw StorageError.truncated(path: file.path, size: size, expected: FileLayout.dataStart)
    }
    let anchors = try CommitChain.anchors(in: file, seal: seal)
    var found: [Meta] = []
    var damage: [(tail: UInt64, error: StorageError)] = []
    for anchor in anchors {
      var current = anchor
      found.append(current)
      while let successor = CommitChain.successor(of: current, in: file, seal: seal) {
        found.append(successor)
        current = successor
      }
      if let error = CommitChain.damagedSuccessor(of: current, in: file, seal: seal) {
        damage.append((current.version, error))
      }
    }
    var failure: Error = StorageError.corrupt(
      path: file.path, offset: FileLayout.headerSize, reason: "neither meta record is valid")
    guard let newestVersion = found.map(\.version).max() else { throw failure }
    // A damaged record hides the commits after it, unless another chain reaches past it (the
    // older anchor's chain may legitimately run into reused places).
    if let (_, error) = damage.first(where: { $0.tail >= newestVersion }) { throw error }
    // Every record names a version durable when its commit began (`Meta.durable`); the newest
    // such claim is a version that was synced, and every record reached from the anchors past
    // it is a candidate: those commits may have shared a sync that never ended (group commit),
    // so their blocks may not all have landed, and a newer anchor's record may have landed
    // while the records before it did not. The newest candidate whose blocks born after the
    // durable version all check out is the newest whole commit (`Recovery.verifyCommits`):
    // blocks of a commit that later ones freed may have been reused by commits whose records
    // never landed, so each candidate is checked as a whole version, newest first; the newest
    // version that was durable always checks out. The durable version itself is checked as
    // the newest commit once was (its own blocks), when no candidate after it does.
    let durable = found.map(\.durable).max() ?? 0
    var candidates: [Meta] = []
    for record in found.sorted(by: { $0.version > $1.version })
    where record.version >= durable && !candidates.contains(record) {
      candidates.append(record)
    }
    for meta in candidates {
      if meta.fileEnd > size {
        failure = StorageError.truncated(path: file.path, size: size, expected: meta.fileEnd)
        continue
      }
      do {
        try Recovery.verifyCommits(
          meta, after: meta.version == durable ? meta.version &- 1 : durable, blocks: blocks)
      } catch {
        failure = error
        continue
      }
      if !options.readOnly { try secure(meta, chain: found, in: file, seal: seal) }
      return (meta, meta.version != newestVersion ? newestVersion : nil)
    }
    throw failure
  }

  /// Makes a commit this process is about to build on as safe as one it made itself: writes
  /// into its meta slot every anchor among `chain` (records leading to `meta`) that the slot
  /// does not hold yet (a writer killed between its record and its slot, or a damaged slot),
  /// then syncs (a writer killed before its sync left its commit in the page cache only).
  static func secure(_ meta: Meta, chain: [Meta], in file: StorageFile, seal: FileSeal?) throws {
    var byVersion: [UInt64: Meta] = [:]
    for record in chain { byVersion[record.version] = record }
    byVersion[meta.version] = meta
    // The newest anchor of each slot at or before `meta`: where the chain switched to it.
    var current = meta
    for _ in 0..<2 {
      var anchor = current
      while anchor.version > 0, let before = byVersion[anchor.version - 1], before.isFollowed(by: anchor, seal: seal),
        before.anchorSlot == anchor.anchorSlot
      {
        anchor = before
      }
      // Only an anchor whose predecessor is known is certainly one (the chain switched there).
      guard anchor.version > 0, let before = byVersion[anchor.version - 1], before.isFollowed(by: anchor, seal: seal)
      else { break }
      let slot = FileLayout.metaOffset(slot: Int(anchor.anchorSlot))
      let there = Meta.decode(try file.read(count: Meta.encodedSize, at: slot), seal: seal)
      // Missing (older), damaged, or newer than the version recovery chose: a commit of a
      // batch the power cut short, whose anchor landed. Left there, it could be taken after
      // the next crash for a commit of this history.
      if there != anchor {
        Log.write(
          .warn, .storage,
          "\(file.path): meta slot \(anchor.anchorSlot) lacked anchor \(anchor.version); wrote it")
        try file.write(anchor.encode(seal: seal), at: slot)
      }
      current = before
    }
    // A slot still holding a newer anchor than `meta`, one the loop could not place (its
    // chain ends before any switch of slots is known): `meta` itself goes there.
    for slot in 0..<2 {
      let offset = FileLayout.metaOffset(slot: slot)
      if let there = Meta.decode(try file.read(count: Meta.encodedSize, at: offset), seal: seal),
        there.version > meta.version
      {
        Log.write(
          .warn, .storage,
          "\(file.path): meta slot \(slot) held version \(there.version), newer than the \(meta.version) recovered; "
            + "replaced it")
        try file.write(meta.encode(seal: seal), at: offset)
      }
    }
    try file.sync()
  }

  /// The decodable meta slots (anchors) of `file`, newest first.
  static func anchors(in file: StorageFile, seal: FileSeal?) throws -> [Meta] {
    var found: [Meta] = []
    for slot in 0..<2 {
      let bytes = try file.read(count: Meta.encodedSize, at: FileLayout.metaOffset(slot: slot))
      if let meta = Meta.decode(bytes, seal: seal) { found.append(meta) }
    }
    return found.sorted { $0.version > $1.version }
  }

  /// The record of the commit made on top of `meta`, if one was written: at the place `meta`
  /// reserved for it, or in a meta slot when it reserved none.
  static func successor(of meta: Meta, in file: StorageFile, seal: FileSeal?) -> Meta? {
    if meta.next == 0 { return (try? anchors(in: file, seal: seal))?.first { meta.isFollowed(by: $0, seal: seal) } }
    guard let bytes = try? file.read(count: Meta.encodedSize, at: meta.next),
      let record = Meta.decode(bytes, seal: seal),
      meta.isFollowed(by: record, seal: seal)
    else { return nil }
    return record
  }

  /// The error to report when the place `meta` reserved holds its successor's record
  /// damaged: its magic and version, or its link to `meta`, are there, but its checksum fails.
  /// A power loss cannot do that (a record never straddles a sector, and sectors are written
  /// whole), so bytes changed after the record was written, and the commits after it would be
  /// lost silently. Nil otherwise.
  static func damagedSuccessor(of meta: Meta, in file: StorageFile, seal: FileSeal?) -> StorageError? {
    // A whole record there that does not follow `meta` belongs to another history (one a
    // recovery rolled back): not damage.
    guard meta.next != 0, let bytes = try? file.read(count: Meta.encodedSize, at: meta.next),
      bytes.count == Meta.encodedSize, Meta.decode(bytes, seal: seal) == nil
    else { return nil }
    let expected = meta.version + 1
    func word(at offset: Int) -> UInt64 {
      bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    }
    let magic = Array(bytes[0..<8])
    let headed =
      (magic == FileLayout.metaMagic || magic == FileLayout.metaMagicDurable) && word(at: 8) == expected
    let linked = word(at: Meta.previousOffset) == meta.checksum(seal: seal)
    guard headed || linked else { return nil }
    return StorageError.corrupt(
      path: file.path, offset: meta.next, reason: "the commit record of version \(expected) is damaged")
  }

  /// The commits newer than `meta` that the chain leads to, oldest first, ending at the newest
  /// whole one. A newer anchor than `meta` starts the walk when there is one (a chain far
  /// behind the newest commit may have had its records reused). Only the last record can
  /// belong to a torn commit: within a session a record is written after its blocks, but a
  /// commit torn by a power loss before the session began keeps its record until the next
  /// commit overwrites it. So the last is verified and, if it fails, dropped for its
  /// predecessor, which was whole when the last began (the blocks of older commits may have
  /// been reused since, so they are not checked). Throws when both fail: the file is damaged.
  static func commits(after meta: Meta, in file: StorageFile, blocks: BlockReader) throws -> [Meta] {
    // `meta` is the newest commit published or the head: any commit after it has its record in
    // the place `meta` reserved, so the meta slots need no reading (two reads fewer at every
    // write transaction's start), unless it reserved none (its successor is an anchor only).
    var chain = chain(after: meta, in: file, seal: blocks.seal, readingAnchors: meta.next == 0)
    guard let newest = chain.last else { return [] }
    if (try? Recovery.verifyNewestCommit(newest, blocks: blocks)) != nil { return chain }
    chain.removeLast()
    guard let before = chain.last else { return [] }
    try Recovery.verifyNewestCommit(before, blocks: blocks)
    return chain
  }

  /// The records after `meta` (from a newer anchor when there is one), unverified; at most
  /// `limit` of them.
  private static func chain(
    after meta: Meta, in file: StorageFile, seal: FileSeal?, limit: Int = .max, readingAnchors: Bool = true
  ) -> [Meta] {
    var chain: [Meta] = []
    var current = meta
    if readingAnchors, let anchor = (try? anchors(in: file, seal: seal))?.first, anchor.version > current.version {
      current = anchor
      chain.append(anchor)
    }
    while chain.count < limit, let successor = successor(of: current, in: file, seal: seal) {
      chain.append(successor)
      current = successor
    }
    return chain
  }

  /// Takes over the commits newer than `published` found on disk (see `commits(after:)`):
  /// secures the newest (its anchors written, synced) and returns it; nil when there are none.
  /// Call while holding the writer lock.
  static func adoptCommits(after published: Meta, in file: StorageFile, blocks: BlockReader) throws -> Meta? {
    let taken = try commits(after: published, in: file, blocks: blocks)
    guard let newest = taken.last else { return nil }
    try secure(newest, chain: [published] + taken, in: file, seal: blocks.seal)
    return newest
  }

  /// Takes over the newest whole commit of a file in use, found from its newest anchor (see
  /// `adoptCommits`). Call while holding the writer lock; nil when neither slot is valid.
  static func adoptNewestCommit(in file: StorageFile, seal: FileSeal?) throws -> Meta? {
    guard let anchor = try anchors(in: file, seal: seal).first else { return nil }
    let blocks = BlockReader(file: file, cache: NodeCache(capacity: 1 << 20), seal: seal)
    return try adoptCommits(after: anchor, in: file, blocks: blocks) ?? anchor
  }

  /// The newest commit record of a file in use, found from its newest anchor without the
  /// writer lock (so unverified, and the walk stops after `limit` records: commits may land
  /// meanwhile); nil when neither meta slot is valid.
  static func newestCommit(in file: StorageFile, seal: FileSeal?, limit: Int = 64) -> Meta? {
    guard let anchor = (try? anchors(in: file, seal: seal))?.first else { return nil }
    return chain(after: anchor, in: file, seal: seal, limit: limit).last ?? anchor
  }

  /// The newest commit record of a file in use after `known` (a commit of it), unverified;
  /// `known` when there is none. For a reader outside the file's session.
  static func newestCommit(after known: Meta, in file: StorageFile, seal: FileSeal?) -> Meta {
    chain(after: known, in: file, seal: seal, limit: 1 << 16).last ?? known
  }

  static let emptyMeta = Meta(
    version: 0, timestamp: 0, fileEnd: FileLayout.dataStart, catalog: .null, freeList: .null, history: .null)

  /// Writes an empty store: the meta slots first, then (once they are durable) the header.
  /// A file whose header is all zeros is thus one whose creation never finished, and one with
  /// a header but no meta record was cut short (an error, never re-created).
  private static func initialize(_ file: StorageFile, seal: FileSeal?) throws {
    var meta = emptyMeta
    meta.timestamp = EngineClock.now()
    let encoded = meta.encode(seal: seal)
    var slots = encoded + [UInt8](repeating: 0, count: Int(FileLayout.metaSlotSize) - encoded.count)
    slots += [UInt8](repeating: 0, count: Int(FileLayout.metaSlotSize))
    try file.write(slots, at: FileLayout.headerSize)
    try file.sync()
    var header = FileLayout.encodeHeader(seal: seal)
    header += [UInt8](repeating: 0, count: Int(FileLayout.headerSize) - header.count)
    try file.write(header, at: 0)
    try file.sync()
  }

  /// Whether the file's header region holds only zeros: its creation stopped before the header
  /// was written.
  private static func headerNeverWritten(_ file: StorageFile, size: UInt64) throws -> Bool {
    let bytes = try file.read(count: Int(min(size, FileLayout.headerSize)), at: 0)
    return bytes.allSatisfy { $0 == 0 }
  }
}
