/// Open-time proof that a commit reached the disk whole.
///
/// A commit writes its blocks and its commit record; a sync then makes it durable, together
/// with the commits written while the previous sync ran (group commit). After a power loss a
/// record may have landed while some blocks of its commit, or of the not yet durable commits
/// before it, did not. Every block carries the version that wrote it, and the blocks a version
/// has that an older one lacks are exactly those born after it, reachable through parents born
/// after it. Walking only those verifies the commits since then at the cost of their own size.
enum Recovery {
  /// Verifies the blocks `meta`'s version has that `meta.version - 1` lacks: its own commit.
  static func verifyNewestCommit(_ meta: Meta, blocks: BlockReader) throws {
    try verifyCommits(meta, after: meta.version &- 1, blocks: blocks)
  }

  /// Verifies every block reachable from `meta` that was born after version `since` (one
  /// known durable): that is, the commits `since + 1 ... meta.version` as `meta` sees them.
  static func verifyCommits(_ meta: Meta, after since: UInt64, blocks: BlockReader) throws {
    let limit = meta.fileEnd
    func walk(_ p: BlockPointer, leaf: (NodeImage) throws -> Void) throws {
      guard !p.isNull, p.birth > since else { return }
      let node = try blocks.node(p, limit: limit)
      if node.isLeaf {
        for blob in node.blobs() where blob.birth > since { _ = try blocks.read(blob, limit: limit) }
        try leaf(node)
      } else {
        for i in 0..<node.count { try walk(node.child(at: i).0, leaf: leaf) }
      }
    }
    try walk(meta.catalog) { leaf in
      try leaf.withBytes { p in
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
    if !meta.freeList.isNull, meta.freeList.birth > since {
      // The newest block is one of these commits'; the older ones of its chain are read too.
      guard try FreeSpace.load(meta.freeList, fileEnd: limit, read: { try blocks.read($0, limit: limit) }) != nil
      else {
        throw StorageError.corrupt(
          path: blocks.path, offset: meta.freeList.offset, reason: "the free-space list is inconsistent")
      }
    }
  }
}
