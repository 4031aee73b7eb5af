import Dispatch
import Foundation
import ShoalStorage

extension Realm {
  /// Calls `block` after each commit that this Realm moves to (its own, another thread's, or
  /// another process's). Keep the token: notifications stop when it is released or invalidated.
  public func observe(_ block: @escaping NotificationBlock) -> NotificationToken {
    core.verifyCanObserve(queued: false, inWrite: false)
    let token = NotificationToken()
    core.addObserver(RealmNotificationObserver(token: token, block: block))
    return token
  }

  /// Runs `block` in a write transaction whose commit the given tokens' observers do not hear of.
  @discardableResult
  public func write<Result>(withoutNotifying tokens: [NotificationToken], _ block: () throws -> Result) throws
    -> Result
  {
    try core.beginWrite()
    return try finishWrite(block) { try commitWrite(withoutNotifying: tokens) }
  }

  /// Commits the write transaction; the given tokens' observers do not hear of it.
  public func commitWrite(withoutNotifying tokens: [NotificationToken]) throws {
    core.skippedTokens = tokens
    defer { core.skippedTokens = [] }
    try core.commitWrite(suppressing: tokens)
  }
}

/// How a collection is found again in another Realm instance (a queue's, a frozen one).
struct CollectionBlueprint: @unchecked Sendable {  // safe: immutable values, handed to one queue
  let tableName: String
  let owner: (table: String, key: ObjectKey, index: Int)?
  let filters: [CompiledQuery]
  let sorts: [SortDescriptor]
  let distinct: [String]

  init(_ state: ResultsState) {
    switch state.source {
    case .table(let table)?:
      tableName = table.name
      owner = nil
    case .list(let ownerObject, let table, let index)?:
      tableName = table.name
      owner = (table.name, ownerObject._key, index)
    case nil:
      fatalError("Only collections managed by a Realm can be observed or frozen")
    }
    filters = state.filters
    sorts = state.sorts
    distinct = state.distinct
  }

  /// The same collection in `core`; nil when its owner no longer exists there.
  func state(in core: RealmCore) -> ResultsState? {
    guard let table = core.table(named: tableName) else { return nil }
    let source: ResultsSource
    if let owner {
      guard core.exists(table: table, key: owner.key) else { return nil }
      source = .list(owner: core.object(table, owner.key), table: table, index: owner.index)
    } else {
      source = .table(table)
    }
    let state = ResultsState(core: core, source: source, unmanaged: nil)
    state.filters = filters
    state.sorts = sorts
    state.distinct = distinct
    return state
  }
}

extension RealmCore {
  /// Opens a Realm owned by `queue` and runs `setUp` there (registering an observer); errors go
  /// to `onError`, on the queue.
  ///
  /// The queue's Realm starts at `snapshot` (the observing Realm's version when `observe` was
  /// called) and then catches up, so commits made after the call are never missed.
  static func startOnQueue(
    _ queue: DispatchQueue, configuration: Realm.Configuration, snapshot: ReadTransaction?,
    setUp: @escaping (RealmCore) throws -> Void, onError: @escaping (any Error) -> Void
  ) {
    let work = Handover((setUp, onError))
    queue.async {
      guard let (setUp, onError) = work.take() else { return }
      do {
        let core = try RealmCore.forQueue(configuration, queue)
        if let snapshot { core.read = snapshot }
        try setUp(core)
        _ = core.refresh()
      } catch {
        onError(error)
      }
    }
  }

  /// A Realm instance owned by `queue`, for observations delivered there.
  static func forQueue(_ configuration: Realm.Configuration, _ queue: DispatchQueue) throws(Realm.Error) -> RealmCore {
    let core = try RealmCore(configuration: configuration)
    core.deliveryMode = .queue(queue)
    core.followCommits()
    return core
  }

  /// Registers a collection observer here, or on a Realm of `queue`; delivers `.initial` where
  /// the observer's notifications go.
  func observeCollection<C>(
    _ state: ResultsState, keyPaths: [String]?, queue: DispatchQueue?, rebuild: @escaping (ResultsState) -> C,
    collection: C, block: @escaping (RealmCollectionChange<C>) -> Void
  ) -> NotificationToken {
    verifyCanObserve(queued: queue != nil)
    let token = NotificationToken()
    guard let queue else {
      let observer = CollectionObserver(
        token: token, collection: collection, state: state, keyPaths: keyPaths, core: self, block: block)
      addObserver(observer)
      scheduleInitial { [weak observer] in
        if let observer, observer.token?.isInvalidated == false { observer.initial() }
      }
      return token
    }
    let blueprint = CollectionBlueprint(state)
    RealmCore.startOnQueue(
      queue, configuration: configuration, snapshot: read,
      setUp: { core in
        guard let state = blueprint.state(in: core) else { return }
        let observer = CollectionObserver(
          token: token, collection: rebuild(state), state: state, keyPaths: keyPaths, core: core, block: block)
        core.addObserver(observer)
        if !token.isInvalidated { observer.initial() }
      }, onError: { block(.error($0)) })
    return token
  }
}

extension Results {
  /// Calls `block` with the results' initial state, then after each commit that changes them
  /// (insertions, deletions, modifications of their objects or of objects they link to), on
  /// `queue` when given.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
    _ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void
  ) -> NotificationToken {
    guard let core = state.core else { fatalError("Only collections managed by a Realm can be observed") }
    return core.observeCollection(
      state, keyPaths: keyPaths, queue: queue, rebuild: { Results(state: $0) }, collection: self, block: block)
  }

  /// Like `observe(keyPaths:on:_:)`, with the key paths as Swift key paths.
  public func observe(
    keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
    _ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void
  ) -> NotificationToken where Element: ObjectBase {
    observe(keyPaths: keyPaths.map { _KeyPathProbe.name(ofPartial: $0) }, on: queue, block)
  }
}

extension List {
  /// Calls `block` with the list's initial state, then after each commit that changes it or
  /// its objects, on `queue` when given.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
    _ block: @escaping (RealmCollectionChange<List<Element>>) -> Void
  ) -> NotificationToken {
    guard let core = parent?._core else { unmanagedCollectionFailure("RLMArray") }
    return core.observeCollection(
      results().state, keyPaths: keyPaths, queue: queue, rebuild: List.rebuilt, collection: self, block: block)
  }

  /// The list a collection state of a list property stands for.
  static func rebuilt(_ state: ResultsState) -> List {
    guard case .list(let owner, _, let index)? = state.source else { return List() }
    return List(parent: owner, index: index)
  }

  /// Like `observe(keyPaths:on:_:)`, with the key paths as Swift key paths.
  public func observe(
    keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
    _ block: @escaping (RealmCollectionChange<List<Element>>) -> Void
  ) -> NotificationToken where Element: ObjectBase {
    observe(keyPaths: keyPaths.map { _KeyPathProbe.name(ofPartial: $0) }, on: queue, block)
  }
}

extension MutableSet {
  /// Calls `block` with the set's initial state, then after each commit that changes it or
  /// its objects, on `queue` when given.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
    _ block: @escaping (RealmCollectionChange<MutableSet<Element>>) -> Void
  ) -> NotificationToken {
    guard let core = parent?._core else { unmanagedCollectionFailure("RLMSet") }
    return core.observeCollection(
      results().state, keyPaths: keyPaths, queue: queue, rebuild: MutableSet.rebuilt, collection: self, block: block)
  }

  /// The set a collection state of a set property stands for.
  static func rebuilt(_ state: ResultsState) -> MutableSet {
    guard case .list(let owner, _, let index)? = state.source else { return MutableSet() }
    return MutableSet(parent: owner, index: index)
  }
}

extension LinkingObjects {
  /// Calls `block` with the linking objects' initial state, then after each commit that
  /// changes them, on `queue` when given.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
    _ block: @escaping (RealmCollectionChange<LinkingObjects<Element>>) -> Void
  ) -> NotificationToken {
    guard let core = owner?._core else { fatalError("Only collections managed by a Realm can be observed") }
    let name = propertyName
    return core.observeCollection(
      results().state, keyPaths: keyPaths, queue: queue,
      rebuild: { state in
        guard case .list(let owner, _, let index)? = state.source else {
          return LinkingObjects(fromOriginProperty: name)
        }
        return LinkingObjects(owner: owner, index: index, propertyName: name)
      }, collection: self, block: block)
  }
}

extension AnyRealmCollection {
  /// Calls `block` with the collection's initial state, then after each commit that changes it.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
    _ block: @escaping (RealmCollectionChange<AnyRealmCollection<Element>>) -> Void
  ) -> NotificationToken {
    let state = observedState
    guard let core = state.core else { fatalError("Only collections managed by a Realm can be observed") }
    return core.observeCollection(
      state, keyPaths: keyPaths, queue: queue, rebuild: AnyRealmCollection.rebuilt, collection: self, block: block)
  }

  /// The collection state behind the erased collection.
  var observedState: ResultsState {
    switch base {
    case let results as Results<Element>: return results.state
    case let list as List<Element>: return list.results().state
    case let set as MutableSet<Element>: return set.results().state
    default: return base.sorted(by: [SortDescriptor]()).state
    }
  }

  static func rebuilt(_ state: ResultsState) -> AnyRealmCollection {
    AnyRealmCollection(Results<Element>(state: state))
  }
}

extension Map {
  /// Calls `block` with the map's initial state, then after each commit that changes its
  /// entries or the objects it holds, on `queue` when given.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
    _ block: @escaping (RealmMapChange<Map<Key, Value>>) -> Void
  ) -> NotificationToken {
    guard let parent, let core = parent._core, let table = parent._table else {
      unmanagedCollectionFailure("RLMDictionary")
    }
    core.verifyCanObserve(queued: queue != nil)
    let token = NotificationToken()
    let index = propertyIndex
    guard let queue else {
      let observer = MapObserver(
        token: token, map: self, owner: parent, table: table, index: index, keyPaths: keyPaths, core: core,
        block: block)
      core.addObserver(observer)
      core.scheduleInitial { [self] in if !token.isInvalidated { block(.initial(self)) } }
      return token
    }
    let (tableName, key) = (table.name, parent._key)
    RealmCore.startOnQueue(
      queue, configuration: core.configuration, snapshot: core.read,
      setUp: { core in
        guard
          let map = Map.observed(
            in: core, tableName: tableName, key: key, index: index, keyPaths: keyPaths, token: token, block: block)
        else { return }
        if !token.isInvalidated { block(.initial(map)) }
      }, onError: { block(.error($0)) })
    return token
  }

  /// The same map in `core` (another Realm of the file), observed there; nil when its owner
  /// no longer exists.
  static func observed(
    in core: RealmCore, tableName: String, key: ObjectKey, index: Int, keyPaths: [String]?, token: NotificationToken,
    block: @escaping (RealmMapChange<Map<Key, Value>>) -> Void
  ) -> Map? {
    guard let table = core.table(named: tableName), core.exists(table: table, key: key) else { return nil }
    let owner = core.object(table, key)
    let map = Map(parent: owner, index: index)
    core.addObserver(
      MapObserver(
        token: token, map: map, owner: owner, table: table, index: index, keyPaths: keyPaths, core: core, block: block))
    return map
  }
}

/// Objects that can be observed with `ObjectChange` of their own type. Not for direct use.
public protocol _ObservableObject: ObjectBase {}
extension Object: _ObservableObject {}
extension EmbeddedObject: _ObservableObject {}

extension _ObservableObject {
  /// Calls `block` after each commit that changes the object's properties (or, without key
  /// paths, objects it links to), with the changed properties; `.deleted` when it is deleted.
  /// On `queue` when given.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<Self>) -> Void
  ) -> NotificationToken {
    observeObject(keyPaths: keyPaths, on: queue, block)
  }

  /// Like `observe(keyPaths:on:_:)`, with the key paths as Swift key paths.
  public func observe(
    keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<Self>) -> Void
  ) -> NotificationToken {
    observeObject(keyPaths: keyPaths.map { _KeyPathProbe.name(ofPartial: $0) }, on: queue, block)
  }

  /// `observe(keyPaths:on:_:)` delivering the object as `T` (one of its superclasses, such as
  /// `ObjectBase`), as RealmSwift's generic `observe` does for code shared between classes.
  public func observe<T: ObjectBase>(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<T>) -> Void
  ) -> NotificationToken {
    observeObject(keyPaths: keyPaths, on: queue, block)
  }
}

extension ObjectBase {
  /// Observes this object with changes typed as `T` (this object's class or a superclass), for
  /// generic code such as ShoalCombine's publishers; use `observe(keyPaths:on:_:)`.
  public func _observe<T: ObjectBase>(
    keyPaths: [String]?, on queue: DispatchQueue?, _ block: @escaping (ObjectChange<T>) -> Void
  ) -> NotificationToken {
    observeObject(keyPaths: keyPaths, on: queue, block)
  }

  func observeObject<T: ObjectBase>(
    keyPaths: [String]?, on queue: DispatchQueue?, _ block: @escaping (ObjectChange<T>) -> Void
  ) -> NotificationToken {
    guard let core = _core, let table = _table, let object = self as? T else {
      fatalError("Only objects which are managed by a Realm support change notifications")
    }
    core.verifyCanObserve(queued: queue != nil)
    let token = NotificationToken()
    guard let queue else {
      core.addObserver(
        ObjectObserver(token: token, object: object, table: table, keyPaths: keyPaths, core: core, block: block))
      return token
    }
    let (tableName, key) = (table.name, _key)
    RealmCore.startOnQueue(
      queue, configuration: core.configuration, snapshot: core.read,
      setUp: { core in
        guard let table = core.table(named: tableName), core.exists(table: table, key: key),
          let object = core.object(table, key) as? T
        else { return }
        core.addObserver(
          ObjectObserver(token: token, object: object, table: table, keyPaths: keyPaths, core: core, block: block))
      },
      onError: { error in
        block(.error(NSError(domain: "io.realm", code: 1, userInfo: [NSLocalizedDescriptionKey: "\(error)"])))
      })
    return token
  }
}
