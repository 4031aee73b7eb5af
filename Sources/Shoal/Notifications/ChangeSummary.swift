import ShoalStorage

/// What the commits between two versions did to each class, read from the engine's change
/// records: the same records whichever thread or process wrote.
struct ChangeSummary {
  /// The changes to one class.
  struct ClassChanges {
    var inserted: Set<ObjectKey> = []
    var deleted: Set<ObjectKey> = []
    /// Updated objects and the properties written (bit i = property i).
    var modified: [ObjectKey: [UInt8]] = [:]
    /// Every object that existed before was deleted (`deleteAll`, a migration).
    var cleared = false

    var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && modified.isEmpty && !cleared }

    /// Every object the changes name: inserted, deleted or modified.
    var touched: Set<ObjectKey> { inserted.union(deleted).union(modified.keys) }

    func wasDeleted(_ key: ObjectKey) -> Bool { deleted.contains(key) || (cleared && !inserted.contains(key)) }

    /// The properties written in `key`, when it was updated (not inserted).
    func mask(_ key: ObjectKey) -> [UInt8]? { modified[key] }
  }

  var classes: [String: ClassChanges] = [:]

  init(_ records: [ChangeRecord]) {
    for record in records {
      for space in record.keyspaces where space.keyspace.hasPrefix("o/") {
        let name = String(space.keyspace.dropFirst(2))
        var changes = classes[name] ?? ClassChanges()
        if space.cleared || space.dropped {
          changes.cleared = true
          changes.deleted.formUnion(changes.inserted)
          changes.inserted = []
          changes.modified = [:]
        }
        for change in space.changes {
          let key = TableInfo.key(from: change.key)
          switch change.kind {
          case .insert:
            changes.inserted.insert(key)
          case .delete:
            if changes.inserted.remove(key) == nil { changes.deleted.insert(key) }
            changes.modified[key] = nil
          case .update:
            if changes.inserted.contains(key) { continue }
            changes.modified[key] = ChangeSummary.merge(changes.modified[key] ?? [], change.payload)
          }
        }
        classes[name] = changes
      }
    }
  }

  func changes(of table: String) -> ClassChanges? { classes[table] }

  static func merge(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
    var out = a.count >= b.count ? a : b
    for (i, byte) in (a.count >= b.count ? b : a).enumerated() { out[i] |= byte }
    return out
  }

  static func intersects(_ mask: [UInt8], _ filter: [UInt8]?) -> Bool {
    guard let filter else { return mask.contains { $0 != 0 } || mask.isEmpty }
    for (a, b) in zip(mask, filter) where a & b != 0 { return true }
    return false
  }

  static func bit(_ mask: [UInt8], _ index: Int) -> Bool {
    index / 8 < mask.count && mask[index / 8] & (1 << UInt8(index % 8)) != 0
  }

  static func mask(_ indexes: some Sequence<Int>, count: Int) -> [UInt8] {
    var mask = [UInt8](repeating: 0, count: (count + 7) / 8)
    for index in indexes where index < count { mask[index / 8] |= 1 << UInt8(index % 8) }
    return mask
  }
}
