/// A node reached while reading: a committed image, or a write transaction's dirty copy.
enum NodeRef {
  case image(NodeImage)
  case dirty(DirtyNode)

  var isLeaf: Bool {
    switch self {
    case .image(let n): return n.isLeaf
    case .dirty(let n): return n.isLeaf
    }
  }

  var count: Int {
    switch self {
    case .image(let n): return n.count
    case .dirty(let n): return n.count
    }
  }
}

/// A value seen in place: bytes valid only inside the closure that receives them.
enum ValueView {
  case bytes(UnsafeRawBufferPointer)
  case blob(BlockPointer)
}

/// Read-only walks of a tree whose nodes may be committed images or dirty copies.
struct TreeNavigator: Sendable {
  /// Where the nodes are read from, and the end of the snapshot's allocated space.
  let blocks: BlockReader
  let limit: UInt64

  /// The node at `p`, verified and cached.
  @inline(__always) func load(_ p: BlockPointer) throws -> NodeImage { try blocks.node(p, limit: limit) }

  func resolve(_ slot: ChildSlot) throws -> NodeRef {
    switch slot {
    case .clean(let p, _): return .image(try load(p))
    case .dirty(let n): return .dirty(n)
    }
  }

  func child(_ node: NodeRef, _ i: Int) throws -> NodeRef {
    switch node {
    case .image(let n): return .image(try load(n.child(at: i).0))
    case .dirty(let n): return try resolve(n.child(at: i))
    }
  }

  func childCount(_ node: NodeRef, _ i: Int) -> UInt64 {
    switch node {
    case .image(let n): return n.child(at: i).1
    case .dirty(let n): return n.child(at: i).count
    }
  }

  func lowerBound(_ node: NodeRef, _ key: [UInt8]) -> (Int, Bool) {
    switch node {
    case .image(let n): return key.withUnsafeBytes { n.lowerBound($0) }
    case .dirty(let n): return n.lowerBound(key)
    }
  }

  func childIndex(_ node: NodeRef, _ key: [UInt8]) -> Int {
    switch node {
    case .image(let n): return key.withUnsafeBytes { n.childIndex($0) }
    case .dirty(let n): return n.childIndex(key)
    }
  }

  /// Calls `body` with entry `i` of a leaf, its key and value seen in place.
  func withEntry<R>(_ node: NodeRef, _ i: Int, _ body: (UnsafeRawBufferPointer, ValueView) throws -> R) rethrows -> R {
    switch node {
    case .image(let n):
      return try n.withBytes { p in
        switch n.value(p, i) {
        case .inline(let v): return try body(n.key(p, i), .bytes(v))
        case .blob(let b): return try body(n.key(p, i), .blob(b))
        }
      }
    case .dirty(let n): return try n.withEntry(i, body)
    }
  }

  func key(_ position: (NodeRef, Int)) -> [UInt8] { key(position.0, position.1) }

  func key(_ node: NodeRef, _ i: Int) -> [UInt8] {
    switch node {
    case .image(let n): return n.key(at: i)
    case .dirty(let n): return n.key(at: i)
    }
  }

  /// The leaf holding `key` (or where it would go), the index and whether it is there.
  func find(_ root: ChildSlot, _ key: [UInt8]) throws -> (NodeRef, Int, Bool) {
    var node = try resolve(root)
    while !node.isLeaf { node = try child(node, childIndex(node, key)) }
    let (i, found) = lowerBound(node, key)
    return (node, i, found)
  }

  /// The number of keys smaller than `key`.
  func rank(_ root: ChildSlot, _ key: [UInt8]) throws -> UInt64 {
    var node = try resolve(root)
    var rank: UInt64 = 0
    while !node.isLeaf {
      let ci = childIndex(node, key)
      for j in 0..<ci { rank += childCount(node, j) }
      node = try child(node, ci)
    }
    return rank + UInt64(lowerBound(node, key).0)
  }

  /// The leaf and index of the entry at position `index` (0-based, in key order).
  func entry(_ root: ChildSlot, at index: UInt64) throws -> (NodeRef, Int) {
    var node = try resolve(root)
    var remaining = index
    while !node.isLeaf {
      var ci = 0
      while ci < node.count - 1, remaining >= childCount(node, ci) {
        remaining -= childCount(node, ci)
        ci += 1
      }
      node = try child(node, ci)
    }
    return (node, Int(remaining))
  }
}

/// A position in a tree: the path from the root to a leaf entry.
struct TreePosition {
  var path: [(node: NodeRef, index: Int)] = []
  var valid = false

  var leaf: NodeRef { path[path.count - 1].node }
  var index: Int { path[path.count - 1].index }

  /// Positions at the first key >= `key` (> when not inclusive) going forward, or at the last
  /// key <= `key` (< when not inclusive) going backward; a nil key means the first or last.
  mutating func seek(_ nav: TreeNavigator, root: ChildSlot?, key: [UInt8]?, inclusive: Bool, forward: Bool) throws {
    path.removeAll(keepingCapacity: true)
    valid = false
    guard let root else { return }
    var node = try nav.resolve(root)
    while !node.isLeaf {
      let ci = key.map { nav.childIndex(node, $0) } ?? (forward ? 0 : node.count - 1)
      path.append((node, ci))
      node = try nav.child(node, ci)
    }
    var i: Int
    if let key {
      let (lb, found) = nav.lowerBound(node, key)
      if forward {
        i = found && !inclusive ? lb + 1 : lb
      } else {
        i = found && inclusive ? lb : lb - 1
      }
    } else {
      i = forward ? 0 : node.count - 1
    }
    path.append((node, i))
    valid = true
    try settle(nav, forward: forward)
  }

  /// Points at entry `index` of the current leaf (which must hold it).
  mutating func moveInLeaf(to index: Int) { path[path.count - 1].index = index }

  mutating func step(_ nav: TreeNavigator, forward: Bool) throws {
    guard valid else { return }
    path[path.count - 1].index += forward ? 1 : -1
    try settle(nav, forward: forward)
  }

  /// Moves off an index past the leaf's end (or before its start) to the neighbouring leaf.
  private mutating func settle(_ nav: TreeNavigator, forward: Bool) throws {
    while let top = path.last, top.index < 0 || top.index >= top.node.count {
      path.removeLast()
      guard !path.isEmpty else {
        valid = false
        return
      }
      path[path.count - 1].index += forward ? 1 : -1
      let parent = path[path.count - 1]
      guard parent.index >= 0, parent.index < parent.node.count else { continue }
      var node = try nav.child(parent.node, parent.index)
      while true {
        let i = forward ? 0 : node.count - 1
        path.append((node, i))
        if node.isLeaf { break }
        node = try nav.child(node, i)
      }
    }
  }
}
