import Foundation
import ShoalStorage

extension RealmCore {
  /// The frozen Realm at this Realm's current version (one per version, shared).
  ///
  /// Inside a write transaction this is the version the transaction started from, as in
  /// RealmSwift: what the transaction wrote so far is not committed, so it cannot be frozen.
  func frozen() -> RealmCore {
    if isFrozen { return self }
    verifyThread()
    let snapshot: ReadTransaction
    do {
      snapshot = try read ?? store.beginRead()
    } catch {
      // `freeze()` cannot throw (RealmSwift's signature): the engine's reason, with its advice.
      fatalError("Could not pin a version to freeze: \(error)")
    }
    if read == nil { read = snapshot }
    if let cached = frozenCore, cached.read?.version == snapshot.version { return cached }
    let core = RealmCore(frozenFrom: self, snapshot: snapshot)
    frozenCore = core
    return core
  }

  /// This thread's live Realm for the same file.
  func thawed() -> RealmCore {
    guard isFrozen else { return self }
    do {
      return try RealmCache.core(for: configuration)
    } catch {
      fatalError("Could not open the Realm to thaw into: \(error)")
    }
  }
}

extension Realm {
  /// Whether this Realm is a frozen snapshot: immutable, readable from any thread.
  public var isFrozen: Bool { core.isFrozen }

  /// A frozen snapshot of this Realm at its current version. It pins that version (counting
  /// toward `maximumNumberOfActiveVersions`) until the last frozen value from it is released.
  public func freeze() -> Realm { Realm(core: core.frozen()) }

  /// The live Realm (of the current thread) for this frozen one.
  public func thaw() -> Realm { Realm(core: core.thawed()) }

  /// A frozen copy of `obj` (`obj.freeze()`).
  public func freeze<T: ObjectBase>(_ obj: T) -> T { obj.frozenCopy() }

  /// The live object for the frozen `obj`, or nil when it has been deleted (`obj.thaw()`).
  public func thaw<T: ObjectBase>(_ obj: T) -> T? { obj.thawedCopy() }
}

extension ObjectBase {
  func frozenCopy<T: ObjectBase>() -> T {
    guard let core = _core, let table = _table else { fatalError("Unmanaged objects cannot be frozen.") }
    if core.isFrozen, let same = self as? T { return same }
    // RealmSwift's order: the thread, then whether the object still exists.
    core.verifyThread()
    if isInvalidated { fatalError("Object has been deleted or invalidated.") }
    let frozen = core.frozen()
    guard frozen.exists(table: table, key: _key) else {
      fatalError("Cannot freeze an object in the same write transaction as it was created in.")
    }
    // A dynamic object freezes into a dynamic object of the frozen Realm.
    let made: ObjectBase = self is DynamicObject ? frozen.dynamicObject(table, _key) : frozen.object(table, _key)
    guard let copy = made as? T else { fatalError("Object type changed while freezing") }
    return copy
  }

  func thawedCopy<T: ObjectBase>() -> T? {
    guard let core = _core, let table = _table else { fatalError("Unmanaged objects cannot be thawed.") }
    guard core.isFrozen else { return self as? T }
    let live = core.thawed()
    guard let liveTable = live.table(named: table.name), live.exists(table: liveTable, key: _key) else { return nil }
    if self is DynamicObject { return live.dynamicObject(liveTable, _key) as? T }
    return live.object(liveTable, _key) as? T
  }
}

extension _ObservableObject {
  /// Whether the object belongs to a frozen Realm.
  public var isFrozen: Bool { _core?.isFrozen ?? false }

  /// A frozen copy of this managed object: immutable, readable from any thread.
  public func freeze() -> Self { frozenCopy() }

  /// The live object (in the current thread's Realm) for this frozen one; nil when it has been
  /// deleted since.
  public func thaw() -> Self? { thawedCopy() }
}

extension ResultsState {
  /// This collection in the frozen Realm of its Realm's current version, evaluated now.
  func frozen() -> ResultsState {
    guard let core else { return self }
    if core.isFrozen { return self }
    core.verifyThread()
    if isInvalidated {
      if case .list? = source { fatalError("Object has been deleted or invalidated.") }
      fatalError("Access to invalidated Results objects")
    }
    let frozenCore = core.frozen()
    let state: ResultsState
    if case .table(let table)? = source {
      // A frozen Realm shares its live Realm's schema, so the class is the same table: no
      // lookup by name (this runs for every change an async sequence hands over).
      state = ResultsState(core: frozenCore, source: .table(table), unmanaged: nil)
      state.filters = filters
      state.sorts = sorts
      state.distinct = distinct
    } else {
      guard let made = CollectionBlueprint(self).state(in: frozenCore) else {
        fatalError("Cannot freeze a deleted collection")
      }
      state = made
    }
    state.freezeItems(from: self)
    return state
  }

  /// This collection in the current thread's live Realm; nil when its owner was deleted.
  func thawed() -> ResultsState? {
    guard let core, core.isFrozen else { return self }
    return CollectionBlueprint(self).state(in: core.thawed())
  }
}

extension Results {
  /// Whether the results belong to a frozen Realm.
  public var isFrozen: Bool { state.core?.isFrozen ?? false }
  /// The results as they are now, frozen: immutable, readable from any thread.
  public func freeze() -> Results { Results(state: state.frozen()) }
  /// The live results (in the current thread's Realm) for frozen ones.
  public func thaw() -> Results? { state.thawed().map { Results(state: $0) } }
}

extension List {
  /// Whether the list belongs to a frozen Realm.
  public var isFrozen: Bool { parent?._core?.isFrozen ?? false }
  /// A frozen copy of the list.
  public func freeze() -> List {
    guard let parent else { unmanagedCollectionFailure("RLMArray") }
    return List(parent: parent.frozenCopy() as ObjectBase, index: propertyIndex)
  }
  /// The live list for a frozen one; nil when its object was deleted.
  public func thaw() -> List? {
    guard let parent else { unmanagedCollectionFailure("RLMArray") }
    return (parent.thawedCopy() as ObjectBase?).map { List(parent: $0, index: propertyIndex) }
  }
}

extension MutableSet {
  /// Whether the set belongs to a frozen Realm.
  public var isFrozen: Bool { parent?._core?.isFrozen ?? false }
  /// A frozen copy of the set.
  public func freeze() -> MutableSet {
    guard let parent else { unmanagedCollectionFailure("RLMSet") }
    return MutableSet(parent: parent.frozenCopy() as ObjectBase, index: propertyIndex)
  }
  /// The live set for a frozen one; nil when its object was deleted.
  public func thaw() -> MutableSet? {
    guard let parent else { unmanagedCollectionFailure("RLMSet") }
    return (parent.thawedCopy() as ObjectBase?).map { MutableSet(parent: $0, index: propertyIndex) }
  }
}

extension Map {
  /// Whether the map belongs to a frozen Realm.
  public var isFrozen: Bool { parent?._core?.isFrozen ?? false }
  /// A frozen copy of the map.
  public func freeze() -> Map {
    guard let parent else { unmanagedCollectionFailure("RLMDictionary") }
    return Map(parent: parent.frozenCopy() as ObjectBase, index: propertyIndex)
  }
  /// The live map for a frozen one; nil when its object was deleted.
  public func thaw() -> Map? {
    guard let parent else { unmanagedCollectionFailure("RLMDictionary") }
    return (parent.thawedCopy() as ObjectBase?).map { Map(parent: $0, index: propertyIndex) }
  }
}

extension LinkingObjects {
  /// Whether the linking objects belong to a frozen Realm.
  public var isFrozen: Bool { owner?._core?.isFrozen ?? false }
  /// A frozen copy.
  public func freeze() -> LinkingObjects {
    guard let owner else { fatalError("Unmanaged collections cannot be frozen.") }
    return LinkingObjects(owner: owner.frozenCopy() as ObjectBase, index: index, propertyName: propertyName)
  }
  /// The live linking objects for frozen ones; nil when the object was deleted.
  public func thaw() -> LinkingObjects? {
    guard let owner else { fatalError("Unmanaged collections cannot be thawed.") }
    return (owner.thawedCopy() as ObjectBase?).map {
      LinkingObjects(owner: $0, index: index, propertyName: propertyName)
    }
  }
}

extension AnyRealmCollection {
  /// Whether the collection belongs to a frozen Realm.
  public var isFrozen: Bool { base.realm?.isFrozen ?? false }
  /// A frozen copy.
  public func freeze() -> AnyRealmCollection {
    AnyRealmCollection(Results<Element>(state: base.sorted(by: [SortDescriptor]()).state.frozen()))
  }
  /// The live collection for a frozen one.
  public func thaw() -> AnyRealmCollection? {
    base.sorted(by: [SortDescriptor]()).state.thawed().map { AnyRealmCollection(Results<Element>(state: $0)) }
  }
}
