#if canImport(Glibc)
  import Glibc
#endif

/// Reads and verifies blocks: bounds, checksum, decompression; nodes go through the cache.
/// A class, so that a snapshot holding one costs one reference count, not one per field.
final class BlockReader: Sendable {
  let file: StorageFile
  let cache: NodeCache
  /// The keys of an encrypted file (nil: a plain one, whose blocks carry XXH64 checksums).
  let seal: FileSeal?
  /// For a snapshot of a reader outside the file's session (see `Store.isDetached`): its
  /// version, and how to find the file's newest commit.
  let detachedSnapshot: (version: UInt64, newest: @Sendable () -> UInt64)?

  init(
    file: StorageFile, cache: NodeCache, seal: FileSeal?,
    detachedSnapshot: (version: UInt64, newest: @Sendable () -> UInt64)? = nil
  ) {
    self.file = file
    self.cache = cache
    self.seal = seal
    self.detachedSnapshot = detachedSnapshot
  }

  /// This reader, for a snapshot `meta` read outside the file's session: a block that fails
  /// its check while the file has newer commits was reused by them, which is reported as
  /// `snapshotUnavailable`, not as corruption.
  func following(snapshot meta: Meta, in file: StorageFile) -> BlockReader {
    let seal = self.seal
    return BlockReader(
      file: self.file, cache: cache, seal: seal,
      detachedSnapshot: (meta.version, { CommitChain.newestCommit(after: meta, in: file, seal: seal).version }))
  }

  /// The error for a block that fails its check: `corrupt`, unless a detached snapshot's
  /// space was reused by newer commits.
  private func failure(_ offset: UInt64, _ reason: String) -> StorageError {
    if let (version, newest) = detachedSnapshot {
      let now = newest()
      if now > version { return .snapshotUnavailable(path: path, version: version, newest: now) }
    }
    // A detached reader's `read` looks again before it reports (and logs) corruption.
    if detachedSnapshot == nil { Log.write(.error, .storage, "Corruption in \(path) at offset \(offset): \(reason)") }
    return .corrupt(path: path, offset: offset, reason: reason)
  }

  var path: String { file.path }

  /// The verified, decompressed bytes of the block at `pointer`, which must lie below
  /// `limit` (the snapshot's end of allocated space).
  func read(_ pointer: BlockPointer, limit: UInt64) throws -> [UInt8] {
    guard detachedSnapshot != nil else { return try readVerified(pointer, limit: limit) }
    do {
      return try readVerified(pointer, limit: limit)
    } catch StorageError.corrupt {
      // Outside the session, a reader may find a commit record before the writer's copy of
      // the blocks after it has landed (one write, not atomic to readers): look again.
      usleep(2000)
      do {
        return try readVerified(pointer, limit: limit)
      } catch StorageError.corrupt(let path, let offset, let reason) {
        Log.write(.error, .storage, "Corruption in \(path) at offset \(offset): \(reason)")
        throw StorageError.corrupt(path: path, offset: offset, reason: reason)
      }
    }
  }

  private func readVerified(_ pointer: BlockPointer, limit: UInt64) throws -> [UInt8] {
    let offset = pointer.offset
    func corrupt(_ reason: String) -> StorageError { failure(offset, reason) }
    guard offset >= FileLayout.dataStart, offset % FileLayout.granule == 0 else {
      throw corrupt("a block pointer names offset \(offset), outside the data area")
    }
    let stored = UInt64(pointer.storedLength)
    guard stored > 0, offset + stored <= limit else {
      throw corrupt("a block of \(stored) bytes at \(offset) runs past the allocated end \(limit)")
    }
    guard Int(pointer.rawLength) <= StorageLimits.maximumValueSize + 65536 else {
      throw corrupt("a block claims an impossible length of \(pointer.rawLength) bytes")
    }
    let overhead = seal == nil ? 0 : UInt32(FileSeal.blockOverhead)
    if pointer.codec == .raw, pointer.storedLength != pointer.rawLength + overhead {
      throw corrupt("a raw block's stored and raw lengths differ")
    }
    let read = try file.read(count: Int(stored), at: offset)
    guard read.count == Int(stored) else {
      throw corrupt("the file ends inside a block (needs \(stored) bytes, has \(read.count))")
    }
    let bytes: [UInt8]
    if let seal {
      // The tag checks the block, its place and its version: it replaces the checksum.
      guard let opened = seal.open(read, offset: offset, birth: pointer.birth, checksum: pointer.checksum) else {
        throw corrupt("the block does not decrypt: its authentication tag does not match")
      }
      bytes = opened
    } else {
      let sum = read.withUnsafeBytes {
        Checksum.xxh64($0, seed: BlockPointer.seed(offset: offset, birth: pointer.birth))
      }
      guard sum == pointer.checksum else { throw corrupt("checksum mismatch") }
      bytes = read
    }
    if pointer.codec == .raw { return bytes }
    guard
      let raw = bytes.withUnsafeBytes({ BlockCodec.decode($0, codec: pointer.codec, rawLength: Int(pointer.rawLength)) }
      )
    else {
      throw corrupt("the block does not decompress to \(pointer.rawLength) bytes")
    }
    return raw
  }

  /// The node at `pointer`, from the cache or read, verified and validated.
  func node(_ pointer: BlockPointer, limit: UInt64) throws -> NodeImage {
    let key = NodeCache.Key(offset: pointer.offset, checksum: pointer.checksum)
    if let node = cache.get(key) { return node }
    let bytes = try read(pointer, limit: limit)
    var reason = ""
    guard let node = NodeImage(bytes: bytes, reason: &reason) else { throw failure(pointer.offset, reason) }
    cache.insert(key, node)
    return node
  }
}

/// Collects a commit's block writes and issues them as few, large, positional writes.
struct WriteBatch {
  private var pending: [(offset: UInt64, bytes: [UInt8])] = []
  private var bytes = 0
  static let flushThreshold = 4 << 20

  mutating func add(_ data: [UInt8], at offset: UInt64, to file: StorageFile) throws {
    pending.append((offset, data))
    bytes += data.count
    if bytes >= WriteBatch.flushThreshold { try flush(to: file) }
  }

  mutating func flush(to file: StorageFile) throws {
    guard !pending.isEmpty else { return }
    pending.sort { $0.offset < $1.offset }
    var run: [UInt8] = []
    var runStart: UInt64 = 0
    for (offset, data) in pending {
      if !run.isEmpty, runStart + UInt64(run.count) == offset {
        run += data
      } else {
        if !run.isEmpty { try file.write(run, at: runStart) }
        run = data
        runStart = offset
      }
    }
    if !run.isEmpty { try file.write(run, at: runStart) }
    pending.removeAll(keepingCapacity: true)
    bytes = 0
  }
}
