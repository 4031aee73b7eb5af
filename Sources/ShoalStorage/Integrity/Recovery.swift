/// Open-time proof that the newest commit reached the disk whole.
///
/// A commit writes its blocks and its commit record and then syncs once; after a power loss
/// the record may have landed while some of its blocks did not. Every block carries the
/// version that wrote it, and a commit's new blocks are exactly those born in its version,
/// reachable through parents born in the same version. Walking only those verifies the whole
/// commit at the cost of the commit's own size. If any fails, open uses the previous commit,
/// whose blocks were synced before this commit began and which it never overwrote.
enum Recovery {
  static func verifyNewestCommit(_ meta: Meta, blocks: BlockReader) throws {
    let version = meta.version
    let limit = meta.fileEnd
    func walk(_ p: BlockPointer, leaf: (NodeImage) throws -> Void) throws {
      guard !p.isNull, p.birth == version else { return }
      let node = try blocks.node(p, limit: limit)
      if node.isLeaf {
        for blob in node.blobs() where blob.birth == version { _ = try blocks.read(blob, limit: limit) }
        try leaf(node)
      } else {
        for i in 0..<node.count { try walk(node.child(at: i).0, leaf: leaf) }
      }
    }
    try walk(meta.catalog) { leaf in
      try leaf.bytes.withUnsafeBytes { p in
        for i in 0..<leaf.count {
          guard case .inline(let v) = leaf.value(p, i), let entry = KeyspaceEntry.decode(v) else {
            throw StorageError.corrupt(
              path: blocks.path, offset: meta.catalog.offset, reason: "a catalog entry is malformed")
          }
          try walk(entry.root) { _ in }
        }
      }
    }
    try walk(meta.history) { _ in }
    if !meta.freeList.isNull, meta.freeList.birth == version {
      // The newest block is this commit's; any older ones of its chain were synced before.
      guard try FreeSpace.load(meta.freeList, fileEnd: limit, read: { try blocks.read($0, limit: limit) }) != nil
      else {
        throw StorageError.corrupt(
          path: blocks.path, offset: meta.freeList.offset, reason: "the free-space list is inconsistent")
      }
    }
  }
}
