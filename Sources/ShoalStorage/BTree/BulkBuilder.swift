/// Builds a tree bottom-up from entries in ascending key order, writing each node as soon
/// as it is full: memory stays bounded whatever the size, and nodes are packed full (the
/// layout compaction wants). One open node per level; a full node is written and becomes a
/// child entry of the level above.
struct BulkBuilder {
  private var levels: [DirtyNode] = []
  /// The smallest key under each open node: its separator in the level above.
  private var firstKeys: [[UInt8]] = []
  private var lastKey: [UInt8]?

  /// Appends one entry; keys must strictly ascend.
  mutating func add(_ key: [UInt8], _ value: LeafValue, writer: inout CommitWriter, space: inout FreeSpace) throws {
    if let lastKey, compareBytes(lastKey, key) >= 0 {
      throw StorageError.invalidArgument("Bulk-loaded keys must be in strictly ascending order.")
    }
    lastKey = key
    try append(level: 0, key, value: value, child: nil, writer: &writer, space: &space)
  }

  private mutating func append(
    level: Int, _ key: [UInt8], value: LeafValue?, child: ChildSlot?, writer: inout CommitWriter,
    space: inout FreeSpace
  ) throws {
    func fresh() -> DirtyNode {
      if let value { return DirtyNode(leafKeys: [key], values: [value]) }
      // Key 0 of a branch is never read; the separator lives in the level above.
      return DirtyNode(branchKeys: [[]], children: [child ?? .clean(.null, 0)])
    }
    guard level < levels.count else {
      levels.append(fresh())
      firstKeys.append(key)
      return
    }
    let node = levels[level]
    let entry =
      value.map { DirtyNode.leafEntrySize(key: key.count, value: $0.encodedSize) }
      ?? DirtyNode.branchEntrySize(key: key.count)
    if node.byteSize + entry > DirtyNode.maximumSize {
      let pointer = try write(node, writer: &writer, space: &space)
      try append(
        level: level + 1, firstKeys[level], value: nil, child: .clean(pointer, node.subtreeCount), writer: &writer,
        space: &space)
      levels[level] = fresh()
      firstKeys[level] = key
    } else if let value {
      node.insertLeaf(key, value, at: node.count)
    } else if let child {
      node.insertChild(child, separator: key, at: node.count)
      node.subtreeCount += child.count
    }
  }

  /// Writes a completed node; `top` when it is the tree's root.
  private func write(
    _ node: DirtyNode, writer: inout CommitWriter, space: inout FreeSpace, top: Bool = false
  ) throws -> BlockPointer {
    var slot: ChildSlot? = .dirty(node)
    return try writer.flush(&slot, space: &space, isTreeRoot: top)
  }

  /// Writes the open nodes; returns the root and the entry count (nil for no entries).
  mutating func finish(writer: inout CommitWriter, space: inout FreeSpace) throws -> (BlockPointer, UInt64)? {
    var level = 0
    while level < levels.count {
      let node = levels[level]
      if level == levels.count - 1 {
        // The top: a branch with a single child is not needed above it.
        if !node.isLeaf, node.count == 1, case .clean(let pointer, let count) = node.children[0] {
          return (pointer, count)
        }
        return (try write(node, writer: &writer, space: &space, top: true), node.subtreeCount)
      }
      let pointer = try write(node, writer: &writer, space: &space)
      try append(
        level: level + 1, firstKeys[level], value: nil, child: .clean(pointer, node.subtreeCount), writer: &writer,
        space: &space)
      level += 1
    }
    return nil
  }
}
