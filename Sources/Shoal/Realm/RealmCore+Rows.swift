import Foundation
import ShoalStorage
import Synchronization

// The row cache of a Realm and the scans over a class's rows: rows read once per version and
// kept while the version lasts, the parallel scan of large classes, stored values read and
// written through a row, and the allocation of object keys.
extension RealmCore {
  // MARK: Rows

  func row(_ table: TableInfo, _ key: ObjectKey) -> [RowValue]? {
    if isFrozen, let read { return row(table, key, in: read) }
    if rowCacheStamp == stamp {
      if let row = rowCache[ObjectIdentifier(table), key] { return row }
    } else {
      if !rowCache.isEmpty { rowCache.removeAll() }
      rowCacheStamp = stamp
    }
    guard let bytes = get(TableInfo.keyBytes(key), in: table.keyspace) else { return nil }
    let row: [RowValue]
    do { row = try RowCodec.decode(bytes) } catch { storageFailure(error, "decode an object of \(table.name)") }
    cacheRow(row, table: table, key: key)
    return row
  }

  /// Calls `body` with the decoded row of each of `keys` that exists, in the order of `keys`:
  /// the row cache's, or read through one handle on the class's keyspace (no lookup of the
  /// keyspace by name, no copy of the encoded row) and cached. For the candidates an index
  /// proposes.
  func rows(_ table: TableInfo, keys: [ObjectKey], _ body: (ObjectKey, [RowValue]) -> Void) {
    if isFrozen || write != nil {
      for key in keys { if let row = row(table, key) { body(key, row) } }
      return
    }
    verifyThread()
    if rowCacheStamp != stamp {
      if !rowCache.isEmpty { rowCache.removeAll() }
      rowCacheStamp = stamp
    }
    do {
      var keyspace: KeyspaceSnapshot?
      var keyBytes = [UInt8](repeating: 0, count: 8)
      let id = ObjectIdentifier(table)
      for key in keys {
        if let row = rowCache[id, key] {
          body(key, row)
          continue
        }
        if keyspace == nil {
          let read = snapshot()
          guard try read.hasKeyspace(table.keyspace) else { return }
          keyspace = try read.keyspace(table.keyspace)
        }
        keyBytes.withUnsafeMutableBytes { $0.storeBytes(of: key.bigEndian, as: UInt64.self) }
        guard let row = try keyspace?.withValue(forKey: keyBytes, { raw in try raw.map(RowCodec.decode(buffer:)) })
        else { continue }
        cacheRow(row, table: table, key: key)
        body(key, row)
      }
    } catch {
      storageFailure(error, "read \(table.name)")
    }
  }

  /// Keeps a decoded row for later reads at the current stamp.
  func cacheRow(_ row: [RowValue], table: TableInfo, key: ObjectKey) {
    if isFrozen { return }
    if rowCacheStamp != stamp {
      if !rowCache.isEmpty { rowCache.removeAll() }
      rowCacheStamp = stamp
    }
    if rowCache.count >= Self.rowCacheLimit { rowCache.removeAll() }
    rowCache.insert(row, table: ObjectIdentifier(table), key: key)
  }

  /// The rows of `table` that pass `test` (called with each encoded row), in key order,
  /// decoded. A snapshot of a large class is scanned in parts on several threads at once (two
  /// parts per core, up to eight, each at least `parallelScanMinimumRows` rows: a thread that
  /// finishes its part takes the next, so a core taken by other work delays less of the scan);
  /// the view of a write transaction, which only its own thread may read, in one pass.
  func scanMatching(_ table: TableInfo, _ test: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Bool) throws
    -> [(key: ObjectKey, row: [RowValue])]
  {
    verifyThread()
    let cores = ProcessInfo.processInfo.activeProcessorCount
    if write == nil, cores > 1, case let read = snapshot(), try read.hasKeyspace(table.keyspace) {
      let keyspace = try read.keyspace(table.keyspace)
      let parts = min(cores * 2, 8, Int(keyspace.count / Self.parallelScanMinimumRows))
      if parts > 1 { return try Self.scanInParts(keyspace, parts: parts, test) }
    }
    var matches: [(key: ObjectKey, row: [RowValue])] = []
    try scanRaw(table) { key, raw in
      if try test(raw) { matches.append((key, try RowCodec.decode(buffer: raw))) }
    }
    return matches
  }

  /// Rows a part of a parallel scan covers at the least.
  static let parallelScanMinimumRows: UInt64 = 16_384

  /// `scanMatching` of a snapshot's keyspace split at evenly spaced entries into `parts` key
  /// ranges, one thread each; the parts' matches joined in key order.
  private static func scanInParts(
    _ keyspace: KeyspaceSnapshot, parts: Int, _ test: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Bool
  ) throws -> [(key: ObjectKey, row: [RowValue])] {
    var bounds: [[UInt8]?] = [nil]
    for part in 1..<parts {
      guard let entry = try keyspace.entry(at: keyspace.count * UInt64(part) / UInt64(parts)) else { break }
      bounds.append(entry.key)
    }
    bounds.append(nil)
    let ranges = (0..<(bounds.count - 1)).map { KeyRange(lower: bounds[$0], upper: bounds[$0 + 1]) }
    let results = Mutex<[[(key: ObjectKey, row: [RowValue])]]>(Array(repeating: [], count: ranges.count))
    let failure = Mutex<(any Error)?>(nil)
    DispatchQueue.concurrentPerform(iterations: ranges.count) { part in
      do {
        var matches: [(key: ObjectKey, row: [RowValue])] = []
        try keyspace.cursor(range: ranges[part]).forEach { key, raw in
          if try test(raw) { matches.append((TableInfo.key(from: key), try RowCodec.decode(buffer: raw))) }
          return true
        }
        results.withLock { $0[part] = matches }
      } catch {
        failure.withLock { $0 = error }
      }
    }
    if let error = failure.withLock({ $0 }) { throw error }
    return results.withLock { $0.flatMap { $0 } }
  }

  /// Every row of `table` in key order, as raw bytes valid during the call only.
  func scanRaw(_ table: TableInfo, _ body: (ObjectKey, UnsafeRawBufferPointer) throws -> Void) throws {
    verifyThread()
    guard let cursor = try cursor(table.keyspace) else { return }
    try cursor.forEach { key, value in
      try body(TableInfo.key(from: key), value)
      return true
    }
  }

  func exists(table: TableInfo, key: ObjectKey) -> Bool {
    get(TableInfo.keyBytes(key), in: table.keyspace) != nil
  }

  /// The current row of a managed object (cached in the object until the stamp moves); a
  /// deleted object fails with `deleted` (a collection property's reader passes its own text).
  func currentRow(
    of object: ObjectBase, table: TableInfo,
    deleted: @autoclosure () -> String = "Object has been deleted or invalidated."
  ) -> [RowValue] {
    if isFrozen {
      // Frozen objects may be read from several threads at once: no caches are written.
      guard let read, let row = row(table, object._key, in: read) else { fatalError(deleted()) }
      return row
    }
    verifyThread()
    if object._rowStamp == stamp, let row = object._row { return row }
    // An accessor made before `invalidate()` is invalid, even though its row still exists.
    guard object._epoch == invalidations, let row = row(table, object._key) else { fatalError(deleted()) }
    object._row = row
    object._rowStamp = stamp
    return row
  }

  func storedValue(
    of object: ObjectBase, table: TableInfo, at index: Int,
    deleted: @autoclosure () -> String = "Object has been deleted or invalidated."
  ) -> RowValue {
    if table.isLinkingObjects[index] {
      return .list(linkingKeys(to: object._key, of: table, property: table.properties[index]).map { .link($0) })
    }
    return currentRow(of: object, table: table, deleted: deleted())[index]
  }

  func setStoredValue(_ value: RowValue, of object: ObjectBase, table: TableInfo, at index: Int) {
    verifyThread()
    if isFrozen { fatalError("Attempting to modify a frozen object - call thaw on the Object instance first.") }
    // RealmSwift's order: the object must exist, then the write transaction, then the primary
    // key, which no setter may write, not even with its own value.
    var row = currentRow(of: object, table: table)
    requireWrite()
    if index == table.primaryKeyIndex { fatalError("Primary key can't be changed after an object is inserted.") }
    let oldRow = row
    let old = row[index]
    row[index] = value
    writeRow(row, old: oldRow, table: table, key: object._key, changed: [index])
    if old != value { removeReplacedEmbedded(old: old, new: value, property: table.properties[index]) }
    object._row = row
    object._rowStamp = stamp
  }

  func setAny(_ value: Any?, of object: ObjectBase, table: TableInfo, field: ClassInfo.Field) {
    guard field.wrapperType.setManagedAnyValue(value, of: object, index: field.index) else {
      fatalError(invalidValueMessage(value, for: field, of: table.name))
    }
  }

  /// Writes a row, keeping the primary-key and secondary indexes in step, and records which
  /// properties changed in the engine's change record.
  func writeRow(_ row: [RowValue], old: [RowValue]?, table: TableInfo, key: ObjectKey, changed: [Int]) {
    perform { write in
      let keyBytes = TableInfo.keyBytes(key)
      for index in table.indexedProperties where old?[index] != row[index] {
        let space = table.indexKeyspace(index)
        if let old { _ = try write.delete(OrderedIndexKey.key(old[index]) + keyBytes, in: space) }
        try write.put([], forKey: OrderedIndexKey.key(row[index]) + keyBytes, in: space)
      }
      if let pk = table.primaryKeyIndex, old == nil, !table.keysFromPrimaryKey,
        try write.put(keyBytes, forKey: TableInfo.indexKey(row[pk]), in: table.primaryKeyspace)
      {
        // `add` with `.error` does not look the key up first: a clash shows here.
        fatalError(
          "Attempting to create an object of type '\(table.name)' with an existing primary key value '\(describe(row[pk]))'."
        )
      }
      var mask: [UInt8] = []
      if old != nil {
        mask = [UInt8](repeating: 0, count: (table.properties.count + 7) / 8)
        for index in changed { mask[index / 8] |= 1 << UInt8(index % 8) }
      }
      let replaced = try write.put(RowCodec.encode(row), forKey: keyBytes, in: table.keyspace, changeInfo: mask)
      if replaced, old == nil, let pk = table.primaryKeyIndex {
        // The key is the primary key: `add` with `.error` does not look it up first.
        fatalError(
          "Attempting to create an object of type '\(table.name)' with an existing primary key value '\(describe(row[pk]))'."
        )
      }
      if hasBacklinks {
        try Backlinks.update(write, table: table, key: key, old: old, new: row, properties: old == nil ? nil : changed)
      }
    }
    stamp &+= 1
  }

  /// Adds an object of a class without a Swift type (see `Configuration.dynamicSchemas`)
  /// from its stored values, in schema order: indexes, primary key and change record as for
  /// any object.
  @discardableResult
  func createDynamic(_ table: TableInfo, row: [RowValue]) -> ObjectKey {
    let key = newKey(table, row: row)
    writeRow(row, old: nil, table: table, key: key, changed: [])
    return key
  }

  /// The key of a new object: its primary key where the table keys objects by it, else the
  /// table's next sequential key.
  func newKey(_ table: TableInfo, row: [RowValue]) -> ObjectKey {
    if table.keysFromPrimaryKey, let pk = table.primaryKeyIndex, let key = TableInfo.derivedKey(row[pk]) {
      return key
    }
    let id = ObjectIdentifier(table)
    if let entry = nextKeys[id] {
      nextKeys[id] = (table, entry.next + 1)
      return entry.next
    }
    var next: ObjectKey = 1
    if let bytes = get(Array(("next/" + table.name).utf8), in: RealmSchema.metaKeyspace) {
      next = TableInfo.key(from: bytes)
    }
    nextKeys[id] = (table, next + 1)
    return next
  }
}
