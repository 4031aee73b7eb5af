import Dispatch
import Foundation

/// Runs `work` isolated to `actor`.
func runIsolated<A: Actor>(_ actor: isolated A, _ work: Handover<() -> Void>) {
  work.take()?()
}

extension RealmCore {
  /// A Realm confined to `actor`: its notifications are delivered isolated to the actor.
  static func forActor<A: Actor>(_ configuration: Realm.Configuration, _ actor: A) throws(Realm.Error) -> RealmCore {
    let core = try RealmCore(configuration: configuration)
    core.deliveryMode = .actor(actor)
    return core
  }
}

extension Realm {
  /// Opens a Realm confined to `actor` (RealmSwift's actor-isolated Realms): use it, and the
  /// objects read from it, only from code isolated to that actor. Its notifications arrive
  /// isolated to the actor.
  public init<A: Actor>(configuration: Realm.Configuration = .defaultConfiguration, actor: A) async throws {
    core = try RealmCore.forActor(configuration, actor)
  }
}

extension RealmCore {
  /// Observes the collection `state` stands for from a Realm confined to `actor`: `block`
  /// runs isolated to it with the initial state and each change, the collection rebuilt in
  /// that Realm by `rebuild`.
  static func observeCollection<A: Actor, C>(
    _ state: ResultsState, keyPaths: [String]?, actor: A, rebuild: @escaping (ResultsState) -> C,
    block: @Sendable @escaping (isolated A, RealmCollectionChange<C>) -> Void
  ) async -> NotificationToken {
    guard let core = state.core else { fatalError("Only collections managed by a Realm can be observed") }
    let token = NotificationToken()
    let blueprint = CollectionBlueprint(state)
    let configuration = core.configuration
    let snapshot = core.read
    let setUp = Handover<() -> Void>({
      do {
        let actorCore = try RealmCore.forActor(configuration, actor)
        if let snapshot { actorCore.read = snapshot }
        guard let state = blueprint.state(in: actorCore) else { return }
        let observer = CollectionObserver(
          token: token, collection: rebuild(state), state: state, keyPaths: keyPaths, core: actorCore,
          block: { change in actor.assumeIsolated { block($0, change) } })
        actorCore.addObserver(observer)
        observer.initial()
        _ = actorCore.refresh()
      } catch {
        actor.assumeIsolated { block($0, .error(error)) }
      }
    })
    await runIsolated(actor, setUp)
    return token
  }
}

extension Results {
  /// Calls `block` isolated to `actor` with the results' initial state and their changes; the
  /// results it receives belong to a Realm confined to that actor.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A,
    _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Results<Element>>) -> Void
  ) async -> NotificationToken {
    await RealmCore.observeCollection(
      state, keyPaths: keyPaths, actor: actor, rebuild: { Results(state: $0) }, block: block)
  }
}

extension List {
  /// Calls `block` isolated to `actor` with the list's initial state and its changes; the list
  /// it receives belongs to a Realm confined to that actor.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A,
    _ block: @Sendable @escaping (isolated A, RealmCollectionChange<List<Element>>) -> Void
  ) async -> NotificationToken {
    guard parent?._core != nil else { fatalError("Only collections managed by a Realm can be observed") }
    return await RealmCore.observeCollection(
      results().state, keyPaths: keyPaths, actor: actor, rebuild: List.rebuilt, block: block)
  }
}

extension MutableSet {
  /// Calls `block` isolated to `actor` with the set's initial state and its changes; the set
  /// it receives belongs to a Realm confined to that actor.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A,
    _ block: @Sendable @escaping (isolated A, RealmCollectionChange<MutableSet<Element>>) -> Void
  ) async -> NotificationToken {
    guard parent?._core != nil else { fatalError("Only collections managed by a Realm can be observed") }
    return await RealmCore.observeCollection(
      results().state, keyPaths: keyPaths, actor: actor, rebuild: MutableSet.rebuilt, block: block)
  }
}

extension AnyRealmCollection {
  /// Calls `block` isolated to `actor` with the collection's initial state and its changes;
  /// the collection it receives belongs to a Realm confined to that actor.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A,
    _ block: @Sendable @escaping (isolated A, RealmCollectionChange<AnyRealmCollection<Element>>) -> Void
  ) async -> NotificationToken {
    await RealmCore.observeCollection(
      observedState, keyPaths: keyPaths, actor: actor, rebuild: AnyRealmCollection.rebuilt, block: block)
  }
}

extension _ObservableObject {
  /// Calls `block` isolated to `actor` after each commit that changes the object; the object it
  /// receives belongs to a Realm confined to that actor.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void
  ) async -> NotificationToken {
    guard let core = _core, let table = _table else {
      fatalError("Only objects which are managed by a Realm support change notifications")
    }
    let token = NotificationToken()
    let (configuration, tableName, key, snapshot) = (core.configuration, table.name, _key, core.read)
    let setUp = Handover<() -> Void>({
      do {
        let actorCore = try RealmCore.forActor(configuration, actor)
        if let snapshot { actorCore.read = snapshot }
        guard let table = actorCore.table(named: tableName), actorCore.exists(table: table, key: key),
          let object = actorCore.object(table, key) as? Self
        else { return }
        actorCore.addObserver(
          ObjectObserver(
            token: token, object: object, table: table, keyPaths: keyPaths, core: actorCore,
            block: { change in actor.assumeIsolated { block($0, change) } }))
        _ = actorCore.refresh()
      } catch {
        actor.assumeIsolated { block($0, .error(NSError(domain: "io.realm", code: 1))) }
      }
    })
    await runIsolated(actor, setUp)
    return token
  }
}

extension Map {
  /// Calls `block` isolated to `actor` with the map's initial state and its changes; the map
  /// it receives belongs to a Realm confined to that actor.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A,
    _ block: @Sendable @escaping (isolated A, RealmMapChange<Map<Key, Value>>) -> Void
  ) async -> NotificationToken {
    guard let parent, let core = parent._core, let table = parent._table else {
      fatalError("Only collections managed by a Realm can be observed")
    }
    let token = NotificationToken()
    let (configuration, tableName, key, index, snapshot) = (
      core.configuration, table.name, parent._key, propertyIndex, core.read
    )
    let setUp = Handover<() -> Void>({
      do {
        let actorCore = try RealmCore.forActor(configuration, actor)
        if let snapshot { actorCore.read = snapshot }
        guard let table = actorCore.table(named: tableName), actorCore.exists(table: table, key: key) else { return }
        let owner = actorCore.object(table, key)
        let map = Map(parent: owner, index: index)
        actorCore.addObserver(
          MapObserver(
            token: token, map: map, owner: owner, table: table, index: index, keyPaths: keyPaths, core: actorCore,
            block: { change in actor.assumeIsolated { block($0, change) } }))
        actor.assumeIsolated { block($0, .initial(map)) }
        _ = actorCore.refresh()
      } catch {
        actor.assumeIsolated { block($0, .error(error)) }
      }
    })
    await runIsolated(actor, setUp)
    return token
  }
}
