import Dispatch

// AsyncSequences of changes: the Linux stand-in for RealmSwift's Combine publishers. Each
// element carries frozen values (readable on any thread or task); iterate with `for await`,
// and stop by leaving the loop (the observation ends with the stream).

extension Results {
  /// The results' changes as an `AsyncStream`: `.initial` then one `.update` per commit that
  /// changes them, with frozen results.
  public func changes(keyPaths: [String]? = nil) -> AsyncStream<RealmCollectionChange<Results<Element>>> {
    let queue = DispatchQueue(label: "io.shoal.changes")
    return AsyncStream { continuation in
      let token = observe(keyPaths: keyPaths, on: queue) { change in
        switch change {
        case .initial(let results): continuation.yield(.initial(results.freeze()))
        case .update(let results, let deletions, let insertions, let modifications):
          continuation.yield(
            .update(results.freeze(), deletions: deletions, insertions: insertions, modifications: modifications))
        case .error(let error): continuation.yield(.error(error))
        }
      }
      continuation.onTermination = { _ in token.invalidate() }
    }
  }
}

extension _ObservableObject {
  /// The object's changes as an `AsyncStream`, with frozen objects; the stream finishes when
  /// the object is deleted.
  public func changes(keyPaths: [String]? = nil) -> AsyncStream<ObjectChange<Self>> {
    let queue = DispatchQueue(label: "io.shoal.changes")
    return AsyncStream { continuation in
      let token = observe(keyPaths: keyPaths, on: queue) { change in
        switch change {
        case .change(let object, let properties):
          continuation.yield(.change(object.freeze(), properties.map { $0.frozen() }))
        case .deleted:
          continuation.yield(.deleted)
          continuation.finish()
        case .error(let error): continuation.yield(.error(error))
        }
      }
      continuation.onTermination = { _ in token.invalidate() }
    }
  }
}

extension Map {
  /// The map's changes as an `AsyncStream`, with frozen maps.
  public func changes(keyPaths: [String]? = nil) -> AsyncStream<RealmMapChange<Map<Key, Value>>> {
    let queue = DispatchQueue(label: "io.shoal.changes")
    return AsyncStream { continuation in
      let token = observe(keyPaths: keyPaths, on: queue) { change in
        switch change {
        case .initial(let map): continuation.yield(.initial(map.freeze()))
        case .update(let map, let deletions, let insertions, let modifications):
          continuation.yield(
            .update(map.freeze(), deletions: deletions, insertions: insertions, modifications: modifications))
        case .error(let error): continuation.yield(.error(error))
        }
      }
      continuation.onTermination = { _ in token.invalidate() }
    }
  }
}
