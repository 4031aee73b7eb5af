extension Store {
  /// Writes a compacted copy of the newest version to a new file at `path`: every keyspace
  /// rewritten in key order into densely packed nodes, no free space, no change records.
  /// The copy starts its own version history at 1.
  ///
  /// Throws `StorageError.fileExists` if `path` exists. The copy is built in one write
  /// transaction, so it needs memory for the whole data set.
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
        try txn.createKeyspace(name, tracksChanges: keyspace.tracksChanges)
        let cursor = keyspace.cursor()
        while let (key, value) = try cursor.next() { try txn.put(value, forKey: key, in: name) }
      }
      try txn.commit()
    }
  }
}
