#if canImport(Glibc)
  import Glibc
#endif

extension Store {
  /// Writes a compacted copy of the newest version to a new file at `path`: every keyspace
  /// rewritten in key order into full nodes, no free space, no change records. The copy
  /// starts its own version history at 1. Nodes are built bottom-up and written as they
  /// fill, so memory stays bounded whatever the size of the store.
  ///
  /// The copy is encrypted with `encryptionKey` (64 bytes) when one is given, whether or not
  /// this file is: pass this store's own key (`options.encryptionKey`) to keep it, another to
  /// change it, nil to write the copy unencrypted.
  ///
  /// Throws `StorageError.fileExists` if `path` exists.
  public func writeCopy(toPath path: String, durability: Durability = .full, encryptionKey: [UInt8]? = nil) throws {
    _ = try FileSeal.validated(encryptionKey)
    let target = try PosixFile(path: path, create: true, readOnly: false, exclusive: true)
    try writeCopy(to: target, durability: durability, encryptionKey: encryptionKey)
  }

  /// Writes a compacted copy into `file`, which must be empty, encrypted with `encryptionKey`
  /// when one is given.
  public func writeCopy(to file: StorageFile, durability: Durability = .full, encryptionKey: [UInt8]? = nil) throws {
    guard try file.size() == 0 else { throw StorageError.fileExists(path: file.path) }
    let copy = try Store(
      file: file,
      options: StoreOptions(
        durability: durability == .memOnly ? .unsafe : durability, cacheSize: 1 << 20, encryptionKey: encryptionKey))
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

  /// Gives `target` the owner, group and mode of `source`, so a compacted copy renamed over a
  /// file (or written beside it) keeps its permissions. Returns false when the owner could not
  /// be kept (only root may give a file away): the caller should not replace `source` then.
  public static func copyOwnership(of source: String, to target: String) -> Bool {
    var info = stat()
    guard stat(source, &info) == 0 else { return false }
    _ = chmod(target, info.st_mode & 0o7777)
    var made = stat()
    guard stat(target, &made) == 0 else { return false }
    if made.st_uid == info.st_uid, made.st_gid == info.st_gid { return true }
    return chown(target, info.st_uid, info.st_gid) == 0
  }
}
