import ShoalStorage

extension Realm {
  /// The keyspace where ShoalSync keeps its cursors, beside the objects of the file.
  static let syncStateKeyspace = "_sync"

  /// A value ShoalSync stored under `key` (nil when none), as of this Realm's version.
  package func syncState(_ key: String) -> [UInt8]? {
    let bytes = Array(key.utf8)
    do {
      if let write = core.write {
        guard try write.hasKeyspace(Realm.syncStateKeyspace) else { return nil }
        return try write.get(bytes, in: Realm.syncStateKeyspace)
      }
      let snapshot = core.snapshot()
      guard try snapshot.hasKeyspace(Realm.syncStateKeyspace) else { return nil }
      return try snapshot.get(bytes, in: Realm.syncStateKeyspace)
    } catch {
      return nil
    }
  }

  /// Stores `value` under `key` in the current write transaction: it commits (or is cancelled)
  /// with the objects written beside it, so a cursor never runs ahead of what it counts.
  package func setSyncState(_ key: String, _ value: [UInt8]) {
    core.perform { write in
      try write.ensureKeyspace(Realm.syncStateKeyspace, tracksChanges: false)
      try write.put(value, forKey: Array(key.utf8), in: Realm.syncStateKeyspace)
    }
  }
}

extension Realm {
  /// Takes the sync agent's role among the processes sharing the file (see
  /// `Store.tryAcquireRole`): true when this process now runs the agent.
  package func tryAcquireSyncAgentRole() -> Bool { core.file.store.tryAcquireRole(StoreRoles.syncAgent) }

  /// Gives the sync agent's role up.
  package func releaseSyncAgentRole() { core.file.store.releaseRole(StoreRoles.syncAgent) }

  /// The file this Realm has open, as a reference that keeps it open in this process while it
  /// is held (as a Realm instance of it does): for a wait that holds no Realm across threads.
  package var openFile: any AnyObject & Sendable { core.file }

  /// Calls `callback` after each commit to the file by any process (on a thread of the store's).
  package func addFileChangeListener(_ callback: @escaping @Sendable () -> Void) -> ChangeListenerToken {
    core.file.store.addChangeListener { _, _ in callback() }
  }
}
