/// Copy-on-write edits of one tree inside a write transaction. A committed node is copied
/// the first time it changes, and its block is recorded as freed by this transaction.
struct TreeEditor {
  let nav: TreeNavigator
  /// Called with every committed block this edit stops referencing.
  let free: (BlockPointer) -> Void

  func makeDirty(_ slot: ChildSlot) throws -> DirtyNode {
    switch slot {
    case .dirty(let n): return n
    case .clean(let p, _):
      let node = DirtyNode(try nav.load(p))
      node.originBirth = p.birth
      free(p)
      return node
    }
  }

  func release(_ value: LeafValue) {
    if case .blob(let b) = value { free(b) }
  }

  /// Inserts or replaces; returns whether the key existed.
  func put(_ root: inout ChildSlot?, _ key: [UInt8], _ value: LeafValue) throws -> Bool {
    guard let current = root else {
      root = .dirty(DirtyNode(leafKeys: [key], values: [value]))
      return false
    }
    let node = try makeDirty(current)
    let (existed, split) = try insert(node, key, value)
    if let (separator, right) = split {
      root = .dirty(DirtyNode(branchKeys: [[], separator], children: [.dirty(node), .dirty(right)]))
    } else {
      root = .dirty(node)
    }
    return existed
  }

  private func insert(_ node: DirtyNode, _ key: [UInt8], _ value: LeafValue) throws -> (Bool, ([UInt8], DirtyNode)?) {
    if node.isLeaf {
      let (i, found) = node.lowerBound(key)
      if found {
        release(node.value(at: i))
        node.replaceValue(at: i, with: value)
      } else {
        node.insertLeaf(key, value, at: i)
      }
      let split = node.byteSize > DirtyNode.maximumSize ? node.split(appending: !found && i == node.count - 1) : nil
      return (found, split)
    }
    let ci = node.childIndex(key)
    let slot = node.child(at: ci)
    let child = try makeDirty(slot)
    let (existed, childSplit) = try insert(child, key, value)
    // A child already copied is in place: storing it again only retained and released it.
    if case .clean = slot { node.setChild(.dirty(child), at: ci) }
    if !existed { node.subtreeCount += 1 }
    if let (separator, right) = childSplit {
      node.insertChild(.dirty(right), separator: separator, at: ci + 1)
    }
    let split = node.byteSize > DirtyNode.maximumSize ? node.split(appending: ci + 1 >= node.count - 1) : nil
    return (existed, split)
  }

  /// Removes `key`; returns its value if it was there. The caller checks existence first,
  /// so that a missing key copies nothing.
  func delete(_ root: inout ChildSlot?, _ key: [UInt8]) throws -> LeafValue? {
    guard let current = root else { return nil }
    let node = try makeDirty(current)
    let removed = try remove(node, key)
    if node.isLeaf && node.count == 0 {
      root = nil
    } else if !node.isLeaf && node.count == 1 {
      root = node.child(at: 0)
    } else {
      root = .dirty(node)
    }
    return removed
  }

  private func remove(_ node: DirtyNode, _ key: [UInt8]) throws -> LeafValue? {
    if node.isLeaf {
      let (i, found) = node.lowerBound(key)
      return found ? node.removeLeaf(at: i) : nil
    }
    let ci = node.childIndex(key)
    let child = try makeDirty(node.child(at: ci))
    node.setChild(.dirty(child), at: ci)
    guard let removed = try remove(child, key) else { return nil }
    node.subtreeCount -= 1
    if child.byteSize < DirtyNode.minimumSize || child.count == 0 { try rebalance(node, ci) }
    return removed
  }

  /// Merges child `ci` with a neighbour, splitting again if the result is too large.
  private func rebalance(_ parent: DirtyNode, _ ci: Int) throws {
    guard parent.count > 1 else { return }
    let l = ci + 1 < parent.count ? ci : ci - 1
    let r = l + 1
    let left = try makeDirty(parent.child(at: l))
    let right = try makeDirty(parent.child(at: r))
    left.absorb(right, separator: parent.key(at: r))
    parent.removeChild(at: r)
    parent.setChild(.dirty(left), at: l)
    if left.byteSize > DirtyNode.maximumSize {
      let (separator, newRight) = left.split(appending: false)
      parent.insertChild(.dirty(newRight), separator: separator, at: r)
    }
  }

  /// Frees every block of a committed or dirty subtree (for clear and drop).
  func freeAll(_ slot: ChildSlot) throws {
    switch slot {
    case .clean(let p, _):
      let node = try nav.load(p)
      if node.isLeaf {
        for b in node.blobs() { free(b) }
      } else {
        for i in 0..<node.count { try freeAll(.clean(node.child(at: i).0, 0)) }
      }
      free(p)
    case .dirty(let n):
      if n.isLeaf {
        n.values.forEach(release)
      } else {
        for c in n.children { try freeAll(c) }
      }
    }
  }
}
