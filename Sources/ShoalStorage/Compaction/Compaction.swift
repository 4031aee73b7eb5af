extension Store {
  /// Writes a compacted copy of the newest version to a new file at `path`: every keyspace
  /// rewritten in key order into full nodes, no free space, no change records. The copy
  /// starts its own version history at 1. Nodes are built bottom-up and written as they
  /// fill, so memory stays bounded whatever the size of the store.
  ///
  /// Throws `StorageError.fileExists` if `path` exists.
  public func writeCopy(toPath path: String, durability: Durability = .full) throws {
    let target = try PosixFile(path: path, create: true, readOnly: false, exclusive: true)
    try writeCopy(to: target, durability: durability)
  }

  /// Writes a compacted copy into `file`, which must be empty.
  public func writeCopy(to file: StorageFile, durability: Durability = .full) throws {
    guard try file.size() == 0 else { throw StorageError.fileExists(path: file.path) }
    let copy = try Store(
      file: file, options: StoreOptions(durability: durability == .memOnly ? .unsafe : durability, cacheSize: 1 << 20))
    try read { source in
      let txn = try copy.beginWrite()
      txn.recordsHistory = false
      for name in try source.keyspaceNames() {
        let keyspace = try source.keyspace(name)
        let cursor = keyspace.cursor()
        try txn.bulkLoad(name, tracksChanges: keyspace.tracksChanges) { try cursor.next() }
      }
      try txn.commit()
    }
  }
}
