import Dispatch
import Foundation
import ShoalStorage

/// Runs `work` isolated to `actor`.
func runIsolated<A: Actor>(_ actor: isolated A, _ work: Handover<() -> Void>) {
  work.take()?()
}

extension RealmCore {
  /// A Realm confined to `actor`: its notifications are delivered isolated to the actor.
  static func forActor<A: Actor>(_ configuration: Realm.Configuration, _ actor: A) throws(Realm.Error) -> RealmCore {
    let core = try RealmCore(configuration: configuration)
    core.deliveryMode = .actor(actor)
    core.followCommits()
    return core
  }
}

extension Realm {
  /// Opens a Realm confined to `actor` (RealmSwift's actor-isolated Realms): use it, and the
  /// objects read from it, only from code isolated to that actor. Its notifications arrive
  /// isolated to the actor.
  ///
  /// ```swift
  /// actor Importer {
  ///   func run() async throws {
  ///     let realm = try await Realm(actor: self)
  ///     try await realm.asyncWrite { realm.add(Dog(value: ["name": "Rex"])) }
  ///   }
  /// }
  /// ```
  ///
  /// `downloadBeforeOpen` is for synchronized Realms; a local file opens at once.
  public init<A: Actor>(
    configuration: Realm.Configuration = .defaultConfiguration, actor: A, downloadBeforeOpen: OpenBehavior = .never
  ) async throws {
    try Task.checkCancellation()
    core = try RealmCore.forActor(configuration, actor)
  }

  /// Opens a Realm confined to the main actor (RealmSwift's `@MainActor` async initialiser).
  ///
  /// Unlike RealmSwift's, `downloadBeforeOpen` has no default: in an async function, Swift
  /// prefers an async initialiser, so with a default `try Realm(configuration:)` would pick this
  /// one and fail to compile off the main actor. `try await Realm()` opens the same Realm on the
  /// main thread.
  @MainActor
  public init(
    configuration: Realm.Configuration = .defaultConfiguration, downloadBeforeOpen: OpenBehavior
  ) async throws {
    try Task.checkCancellation()
    core = try RealmCore.forActor(configuration, MainActor.shared)
  }

  /// When to download a synchronized Realm's data before opening it (RealmSwift's
  /// `OpenBehavior`). Shoal opens local files only, so every behaviour opens at once.
  public enum OpenBehavior: Sendable {
    /// Open at once.
    case never
    /// Download everything first (RealmSwift, for synchronized Realms).
    case always
    /// Download first on the first open on this device (RealmSwift, for synchronized Realms).
    case once
  }

  /// Opens a Realm confined to the caller's actor (RealmSwift's `Realm.open`); a cancelled
  /// task throws `CancellationError`.
  ///
  /// ```swift
  /// @MainActor func load() async throws {
  ///   let realm = try await Realm.open(configuration: config)
  ///   print(realm.objects(Dog.self).count)
  /// }
  /// ```
  public static func open(
    configuration: Realm.Configuration = .defaultConfiguration, _isolation actor: isolated any Actor = #isolation,
    downloadBeforeOpen: OpenBehavior = .never
  ) async throws -> Realm {
    try Task.checkCancellation()
    return Realm(core: try RealmCore.forActor(configuration, actor))
  }
}

extension RealmCore {
  /// Opens a Realm of `configuration` confined to `actor`, at `snapshot` (the version the
  /// caller observed from, so no later commit is missed), runs `setUp` isolated to the actor
  /// to register an observer there, then catches up; `onError` hears of a failed open.
  static func startOnActor<A: Actor>(
    _ actor: A, configuration: Realm.Configuration, snapshot: ReadTransaction?,
    setUp: @escaping (RealmCore) -> Void, onError: @escaping (Swift.Error) -> Void
  ) async {
    let work = Handover<() -> Void>({
      do {
        let core = try RealmCore.forActor(configuration, actor)
        if let snapshot { core.read = snapshot }
        setUp(core)
        _ = core.refresh()
      } catch {
        onError(error)
      }
    })
    await runIsolated(actor, work)
  }

  /// Observes the collection `state` stands for from a Realm confined to `actor`: `block`
  /// runs isolated to it with the initial state and each change, the collection rebuilt in
  /// that Realm by `rebuild`.
  static func observeCollection<A: Actor, C>(
    _ state: ResultsState, keyPaths: [String]?, actor: A, rebuild: @escaping (ResultsState) -> C,
    block: @Sendable @escaping (isolated A, RealmCollectionChange<C>) -> Void
  ) async -> NotificationToken {
    guard let core = state.core else { fatalError("Only collections managed by a Realm can be observed") }
    core.verifyCanObserve(queued: true)
    let token = NotificationToken()
    // A cancelled task registers nothing: the token comes back invalidated, as in RealmSwift.
    if Task.isCancelled {
      token.invalidate()
      return token
    }
    let blueprint = CollectionBlueprint(state)
    await startOnActor(
      actor, configuration: core.configuration, snapshot: core.read,
      setUp: { actorCore in
        guard let state = blueprint.state(in: actorCore) else { return }
        let observer = CollectionObserver(
          token: token, collection: rebuild(state), state: state, keyPaths: keyPaths, core: actorCore,
          block: { change in actor.assumeIsolated { block($0, change) } })
        actorCore.addObserver(observer)
        observer.initial()
      }, onError: { error in actor.assumeIsolated { block($0, .error(error)) } })
    return token
  }
}

extension Results {
  /// Calls `block` isolated to `actor` with the results' initial state and their changes; the
  /// results it receives belong to a Realm confined to that actor.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
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
    keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, RealmCollectionChange<List<Element>>) -> Void
  ) async -> NotificationToken {
    guard parent?._core != nil else { unmanagedCollectionFailure("RLMArray") }
    return await RealmCore.observeCollection(
      results().state, keyPaths: keyPaths, actor: actor, rebuild: List.rebuilt, block: block)
  }
}

extension MutableSet {
  /// Calls `block` isolated to `actor` with the set's initial state and its changes; the set
  /// it receives belongs to a Realm confined to that actor.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, RealmCollectionChange<MutableSet<Element>>) -> Void
  ) async -> NotificationToken {
    guard parent?._core != nil else { unmanagedCollectionFailure("RLMSet") }
    return await RealmCore.observeCollection(
      results().state, keyPaths: keyPaths, actor: actor, rebuild: MutableSet.rebuilt, block: block)
  }
}

extension LinkingObjects {
  /// Calls `block` isolated to `actor` with the linking objects' initial state and their
  /// changes; the collection it receives belongs to a Realm confined to that actor.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, RealmCollectionChange<LinkingObjects<Element>>) -> Void
  ) async -> NotificationToken {
    guard owner?._core != nil else { fatalError("Only collections managed by a Realm can be observed") }
    let name = propertyName
    return await RealmCore.observeCollection(
      results().state, keyPaths: keyPaths, actor: actor,
      rebuild: { state in
        guard case .list(let owner, _, let index)? = state.source else {
          return LinkingObjects(fromOriginProperty: name)
        }
        return LinkingObjects(owner: owner, index: index, propertyName: name)
      }, block: block)
  }
}

extension AnyRealmCollection {
  /// Calls `block` isolated to `actor` with the collection's initial state and its changes;
  /// the collection it receives belongs to a Realm confined to that actor.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
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
    keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void
  ) async -> NotificationToken {
    await observeObject(keyPaths: keyPaths, on: actor, block)
  }

  /// Like `observe(keyPaths:on:_isolation:_:)`, with the key paths as Swift key paths.
  public func observe<A: Actor>(
    keyPaths: [PartialKeyPath<Self>], on actor: A, _isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void
  ) async -> NotificationToken {
    await observeObject(keyPaths: keyPaths.map { _KeyPathProbe.name(ofPartial: $0) }, on: actor, block)
  }
}

extension ObjectBase {
  /// Calls `block` isolated to `actor` after each commit that changes the object, with the
  /// object as `T` in a Realm confined to that actor.
  func observeObject<T: ObjectBase, A: Actor>(
    keyPaths: [String]?, on actor: A, _isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ObjectChange<T>) -> Void
  ) async -> NotificationToken {
    guard let core = _core, let table = _table else {
      fatalError("Only objects which are managed by a Realm support change notifications")
    }
    core.verifyCanObserve(queued: true)
    let token = NotificationToken()
    if Task.isCancelled {
      token.invalidate()
      return token
    }
    let (tableName, key) = (table.name, _key)
    await RealmCore.startOnActor(
      actor, configuration: core.configuration, snapshot: core.read,
      setUp: { actorCore in
        guard let table = actorCore.table(named: tableName), actorCore.exists(table: table, key: key),
          let object = actorCore.object(table, key) as? T
        else { return }
        actorCore.addObserver(
          ObjectObserver(
            token: token, object: object, table: table, keyPaths: keyPaths, core: actorCore,
            block: { change in actor.assumeIsolated { block($0, change) } }))
      }, onError: { error in actor.assumeIsolated { block($0, .error(error as NSError)) } })
    return token
  }
}

extension Map {
  /// Calls `block` isolated to `actor` with the map's initial state and its changes; the map
  /// it receives belongs to a Realm confined to that actor.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, RealmMapChange<Map<Key, Value>>) -> Void
  ) async -> NotificationToken {
    guard let parent, let core = parent._core, let table = parent._table else {
      unmanagedCollectionFailure("RLMDictionary")
    }
    core.verifyCanObserve(queued: true)
    let token = NotificationToken()
    if Task.isCancelled {
      token.invalidate()
      return token
    }
    let (tableName, key, index) = (table.name, parent._key, propertyIndex)
    await RealmCore.startOnActor(
      actor, configuration: core.configuration, snapshot: core.read,
      setUp: { actorCore in
        guard
          let map = Map.observed(
            in: actorCore, tableName: tableName, key: key, index: index, keyPaths: keyPaths, token: token,
            block: { change in actor.assumeIsolated { block($0, change) } })
        else { return }
        actor.assumeIsolated { block($0, .initial(map)) }
      }, onError: { error in actor.assumeIsolated { block($0, .error(error)) } })
    return token
  }

  /// Like `observe(keyPaths:on:_isolation:_:)`, with the key paths as Swift key paths of the
  /// map's object values.
  public func observe<A: Actor>(
    keyPaths: [PartialKeyPath<Value.Wrapped>], on actor: A, _isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, RealmMapChange<Map<Key, Value>>) -> Void
  ) async -> NotificationToken where Value: OptionalProtocol, Value.Wrapped: ObjectBase {
    await observe(keyPaths: keyPaths.map { _KeyPathProbe.name(ofPartial: $0) }, on: actor, block)
  }
}
