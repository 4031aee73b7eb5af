/// The result of `Store.verify()`.
public struct VerifyReport: Sendable {
  /// Every problem found, each naming where; empty when the file is sound.
  public var problems: [String]
  /// Statistics gathered on the way.
  public var info: FileInfo

  /// Whether the walk found no problem (`problems` is empty).
  public var isOK: Bool { problems.isEmpty }
}

/// What `shoal info` prints.
public struct FileInfo: Sendable, Codable, Equatable {
  /// The statistics of one keyspace.
  public struct Keyspace: Sendable, Codable, Equatable {
    /// The keyspace's name.
    public var name: String
    /// How many entries the catalog says the keyspace holds.
    public var entries: UInt64
    /// Bytes of the keyspace's nodes and blobs as stored, and before compression.
    public var storedBytes: UInt64 = 0
    /// Bytes of the keyspace's nodes and blobs before compression.
    public var uncompressedBytes: UInt64 = 0
  }
  /// The store's path (or the description of a file without one).
  public var path: String
  /// The file format version: 3 for a plain file, 4 for an encrypted one.
  public var formatVersion: UInt32
  /// Whether the file is encrypted (`StoreOptions.encryptionKey`).
  public var encrypted: Bool
  /// The newest version, the one walked; 0 when it could not be read.
  public var version: UInt64
  /// The file's length in bytes; 0 when it cannot be read.
  public var fileSize: UInt64
  /// Bytes in blocks reachable from the newest version.
  public var liveBytes: UInt64
  /// Bytes free (reusable now or once older pins are released).
  public var freeBytes: UInt64
  /// Of `freeBytes`, those still reachable by some retained older version.
  public var pendingFreeBytes: UInt64
  /// Free extents in the free-space list (fragmentation).
  public var freeExtents: Int
  /// Blocks the stored free-space list is made of: a full list and the deltas on top of it.
  public var freeListBlocks: Int
  /// Live bytes before compression (nodes and blobs).
  public var uncompressedBytes: UInt64
  /// Live bytes as stored (nodes and blobs).
  public var storedBytes: UInt64
  /// `uncompressedBytes` divided by `storedBytes`; 1 when nothing is stored.
  public var compressionRatio: Double
  /// Leaf nodes reached, in the catalog, every keyspace and the change records.
  public var leafNodes: Int
  /// Branch nodes reached, in the catalog, every keyspace and the change records.
  public var branchNodes: Int
  /// Values stored in blocks of their own, in every tree.
  public var blobs: Int
  /// Change records kept, one per retained commit that stored one.
  public var historyRecords: Int
  /// Bytes of the change records' nodes and blobs as stored.
  public var historyStoredBytes: UInt64 = 0
  /// Every keyspace in the catalog, sorted by name (byte order).
  public var keyspaces: [Keyspace]
  /// Distinct versions in use file-wide (`Store.activeVersionCount`): the newest plus every older pinned
  /// one, this process's pins included; 0 when the newest version could not be read.
  public var activeVersions: Int
  /// Every pinned version, file-wide: which process, which version, for how long.
  public var pins: [PinInfo]
  /// The lock file coordinating processes (nil when this process alone sees the file).
  public var lockFile: String?
  /// The version whose incomplete commit open skipped, using the commit before it
  /// (`Store.recoveredFromVersion`); nil when the newest commit was complete.
  public var recoveredFromVersion: UInt64?
}

extension Store {
  /// Walks everything reachable from the newest version (catalog, keyspaces, blobs, change
  /// records, the free-space list), checks every checksum, the order of keys, the subtree
  /// counts and the tree depths, and proves that reachable blocks and free space do not
  /// overlap and together cover the file.
  public func verify() -> VerifyReport {
    var walker: Walker
    // The pins as they are before this walk pins the newest version itself (every process's,
    // this one's included).
    let pinned = pins()
    let txn: ReadTransaction
    do {
      txn = try beginRead()
    } catch {
      return VerifyReport(problems: ["cannot read the newest version: \(error)"], info: emptyInfo())
    }
    defer { txn.close() }
    walker = Walker(blocks: blocks, limit: txn.meta.fileEnd)
    walker.run(txn.meta)
    let size = (try? file.size()) ?? 0
    let info = FileInfo(
      path: path, formatVersion: seal == nil ? FileLayout.formatVersion : FileLayout.encryptedFormatVersion,
      encrypted: seal != nil, version: txn.version, fileSize: size,
      liveBytes: walker.extents.reduce(0) { $0 + $1.length }, freeBytes: walker.freeBytes,
      pendingFreeBytes: walker.pendingFreeBytes, freeExtents: walker.freeExtents,
      freeListBlocks: walker.freeListBlocks, uncompressedBytes: walker.rawBytes,
      storedBytes: walker.storedBytes,
      compressionRatio: walker.storedBytes == 0 ? 1 : Double(walker.rawBytes) / Double(walker.storedBytes),
      leafNodes: walker.leaves, branchNodes: walker.branches, blobs: walker.blobs,
      historyRecords: walker.historyRecords, historyStoredBytes: walker.historyStoredBytes,
      keyspaces: walker.keyspaces, activeVersions: activeVersionCount, pins: pinned,
      lockFile: lockFilePath, recoveredFromVersion: recoveredFromVersion)
    return VerifyReport(problems: walker.problems, info: info)
  }

  /// Statistics of the newest version (a full walk; see `verify()`).
  public func info() -> FileInfo { verify().info }

  private func emptyInfo() -> FileInfo {
    FileInfo(
      path: path, formatVersion: seal == nil ? FileLayout.formatVersion : FileLayout.encryptedFormatVersion,
      encrypted: seal != nil, version: 0, fileSize: 0, liveBytes: 0, freeBytes: 0,
      pendingFreeBytes: 0, freeExtents: 0, freeListBlocks: 0, uncompressedBytes: 0, storedBytes: 0, compressionRatio: 1,
      leafNodes: 0,
      branchNodes: 0,
      blobs: 0, historyRecords: 0, keyspaces: [], activeVersions: 0, pins: [], lockFile: lockFilePath,
      recoveredFromVersion: recoveredFromVersion)
  }
}

private struct Walker {
  struct Extent {
    var offset: UInt64
    var length: UInt64
    var owner: String
  }

  let blocks: BlockReader
  let limit: UInt64
  var extents: [Extent] = []
  var problems: [String] = []
  var rawBytes: UInt64 = 0
  var storedBytes: UInt64 = 0
  var leaves = 0
  var branches = 0
  var blobs = 0
  var historyRecords = 0
  var historyStoredBytes: UInt64 = 0
  var freeBytes: UInt64 = 0
  var pendingFreeBytes: UInt64 = 0
  var freeExtents = 0
  var freeListBlocks = 0
  var keyspaces: [FileInfo.Keyspace] = []

  init(blocks: BlockReader, limit: UInt64) {
    self.blocks = blocks
    self.limit = limit
  }

  mutating func run(_ meta: Meta) {
    var entries: [(String, KeyspaceEntry)] = []
    walkTree(meta.catalog, owner: "catalog", expected: nil) { leaf, problems in
      leaf.withBytes { p in
        for i in 0..<leaf.count {
          let name = String(decoding: leaf.key(p, i), as: UTF8.self)
          if case .inline(let v) = leaf.value(p, i), let entry = KeyspaceEntry.decode(v) {
            entries.append((name, entry))
          } else {
            problems.append("catalog: the entry for keyspace '\(name)' is malformed")
          }
        }
      }
    }
    for (name, entry) in entries {
      let (stored, raw) = (storedBytes, rawBytes)
      walkTree(entry.root, owner: "keyspace '\(name)'", expected: entry.count) { _, _ in }
      keyspaces.append(
        FileInfo.Keyspace(
          name: name, entries: entry.count, storedBytes: storedBytes - stored, uncompressedBytes: rawBytes - raw))
    }
    var records = 0
    let stored = storedBytes
    walkTree(meta.history, owner: "history", expected: nil) { leaf, _ in records += leaf.count }
    historyRecords = records
    historyStoredBytes = storedBytes - stored
    // The free-space list and the coverage proof.
    var free: [FreeSpace.Extent] = []
    if !meta.freeList.isNull {
      do {
        if let space = try FreeSpace.load(meta.freeList, fileEnd: limit, read: { try blocks.read($0, limit: limit) }) {
          for block in space.chain {
            extents.append(Extent(offset: block.offset, length: block.extentLength, owner: "free-space list"))
          }
          free = space.allExtents
          freeBytes = space.totalFreeBytes
          pendingFreeBytes = space.pendingBytes
          freeExtents = space.extentCount
          freeListBlocks = space.chain.count
        } else {
          problems.append("free-space list at \(meta.freeList.offset) is inconsistent")
        }
      } catch {
        problems.append("free-space list: \(error)")
      }
    }
    checkLayout(meta, free: free)
  }

  private mutating func walkTree(
    _ root: BlockPointer, owner: String, expected: UInt64?, leaf: (NodeImage, inout [String]) -> Void
  ) {
    guard !root.isNull else {
      if let expected, expected != 0 { problems.append("\(owner): empty but the catalog says \(expected) entries") }
      return
    }
    var leafDepth: Int?
    let count = walk(root, owner: owner, lower: nil, upper: nil, depth: 0, leafDepth: &leafDepth, leaf: leaf)
    if let expected, let count, count != expected {
      problems.append("\(owner): holds \(count) entries but the catalog says \(expected)")
    }
  }

  /// Returns the subtree's entry count, or nil if it could not be read.
  private mutating func walk(
    _ p: BlockPointer, owner: String, lower: [UInt8]?, upper: [UInt8]?, depth: Int, leafDepth: inout Int?,
    leaf: (NodeImage, inout [String]) -> Void
  ) -> UInt64? {
    let node: NodeImage
    do {
      node = try blocks.node(p, limit: limit)
    } catch {
      problems.append("\(owner): \(error)")
      return nil
    }
    extents.append(Extent(offset: p.offset, length: p.extentLength, owner: owner))
    rawBytes += UInt64(p.rawLength)
    storedBytes += UInt64(p.storedLength)
    let keys = (0..<node.count).map { node.key(at: $0) }
    let firstChecked = node.isLeaf ? 0 : 1
    for i in firstChecked..<node.count {
      if i > firstChecked, compareBytes(keys[i - 1], keys[i]) >= 0 {
        problems.append("\(owner): keys out of order in node at \(p.offset)")
      }
      if let lower, compareBytes(keys[i], lower) < 0 {
        problems.append("\(owner): a key below its range in node at \(p.offset)")
      }
      if let upper, compareBytes(keys[i], upper) >= 0 {
        problems.append("\(owner): a key above its range in node at \(p.offset)")
      }
    }
    if node.isLeaf {
      leaves += 1
      if let d = leafDepth, d != depth { problems.append("\(owner): leaves at different depths (\(d) and \(depth))") }
      leafDepth = depth
      for b in node.blobs() {
        do {
          _ = try blocks.read(b, limit: limit)
          extents.append(Extent(offset: b.offset, length: b.extentLength, owner: "\(owner) blob"))
          rawBytes += UInt64(b.rawLength)
          storedBytes += UInt64(b.storedLength)
          blobs += 1
        } catch {
          problems.append("\(owner) blob: \(error)")
        }
      }
      leaf(node, &problems)
      return UInt64(node.count)
    }
    branches += 1
    var total: UInt64 = 0
    var complete = true
    for i in 0..<node.count {
      let (child, stored) = node.child(at: i)
      let childLower = i == 0 ? lower : keys[i]
      let childUpper = i + 1 < node.count ? keys[i + 1] : upper
      if let got = walk(
        child, owner: owner, lower: childLower, upper: childUpper, depth: depth + 1, leafDepth: &leafDepth, leaf: leaf)
      {
        if got != stored {
          problems.append("\(owner): node at \(child.offset) holds \(got) entries, its parent says \(stored)")
        }
        total += got
      } else {
        complete = false
      }
    }
    return complete ? total : nil
  }

  private mutating func checkLayout(_ meta: Meta, free: [FreeSpace.Extent]) {
    var all = extents.map { ($0.offset, $0.length, $0.owner) } + free.map { ($0.offset, $0.length, "free space") }
    if meta.next != 0 { all.append((meta.next, UInt64(meta.nextLength), "the run reserved for the next commit")) }
    all.sort { $0.0 < $1.0 }
    var covered: UInt64 = 0
    var previous: (UInt64, UInt64, String)?
    for e in all {
      if e.0 < FileLayout.dataStart || e.0 + e.1 > meta.fileEnd {
        problems.append(
          "\(e.2) at \(e.0) (+\(e.1)) lies outside the data area [\(FileLayout.dataStart), \(meta.fileEnd))")
      }
      if let prev = previous, prev.0 + prev.1 > e.0 {
        problems.append("\(prev.2) at \(prev.0) (+\(prev.1)) overlaps \(e.2) at \(e.0) (+\(e.1))")
      }
      covered += e.1
      previous = e
    }
    let area = meta.fileEnd - FileLayout.dataStart
    if problems.isEmpty, covered != area {
      problems.append(
        "\(area > covered ? area - covered : 0) bytes of the data area are neither reachable nor free (leaked)")
    }
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif
