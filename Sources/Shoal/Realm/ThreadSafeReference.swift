import ShoalStorage
import Synchronization

/// Values confined to the thread (or queue, or actor) of their Realm: objects and
/// collections (RealmSwift's `ThreadConfined`).
public protocol ThreadConfined {
  /// The Realm the value belongs to, or nil when unmanaged.
  var realm: Realm? { get }
  /// Whether the value can no longer be accessed.
  var isInvalidated: Bool { get }
  /// Whether the value belongs to a frozen Realm.
  var isFrozen: Bool { get }
  /// A frozen copy, readable from any thread.
  func freeze() -> Self
  /// The live value for a frozen one.
  func thaw() -> Self?
}

/// How a thread-confined value is found again in another Realm instance.
enum ConfinedLocation: @unchecked Sendable {  // safe: immutable plain values and a section key block, resolved once
  case object(table: String, key: ObjectKey)
  case collection(CollectionBlueprint)
  /// Sectioned results: the results, the block giving an element's section key (it reads only
  /// the element it is given, so any thread may call it), and for one section its key.
  case sectioned(CollectionBlueprint, keyBlock: Any, section: AnyHashable?)
}

/// Values a `ThreadSafeReference` can carry.
protocol ThreadSafeResolvable {
  var confinedLocation: ConfinedLocation { get }
  static func resolve(_ location: ConfinedLocation, in core: RealmCore) -> Any?
}

/// Carries a thread-confined value to another thread, where `Realm.resolve(_:)` gives the same
/// object or collection in that thread's Realm (RealmSwift's `ThreadSafeReference`). Resolve it
/// once: until then it pins the version it was made at.
public struct ThreadSafeReference<Confined: ThreadConfined>: Sendable {
  let location: ConfinedLocation
  let pin: ReadTransactionPin
  let fileKey: String
  /// Whether the reference was made inside a write transaction: its value may exist only in
  /// the commit that ends it, so it resolves in the newest version (as Realm Core's does).
  let createdInWriteTransaction: Bool
  private let state: ResolutionState

  final class ResolutionState: Sendable {
    let resolved = Atomic<Bool>(false)
  }

  /// Creates a reference to a managed object or collection.
  public init(to threadConfined: Confined) {
    guard let resolvable = threadConfined as? any ThreadSafeResolvable else {
      fatalError("A ThreadSafeReference cannot carry \(Confined.self): pass the Results it was made from instead")
    }
    guard let realm = threadConfined.realm else {
      fatalError("Cannot construct reference to unmanaged object, which can be passed across threads directly")
    }
    if threadConfined.isInvalidated {
      fatalError("Cannot construct reference to invalidated object")
    }
    location = resolvable.confinedLocation
    pin = ReadTransactionPin(realm.core.read)
    fileKey = realm.core.configuration.fileKey
    createdInWriteTransaction = realm.core.isInWriteTransaction
    state = ResolutionState()
  }

  /// Whether the reference was resolved already.
  public var isInvalidated: Bool { state.resolved.load(ordering: .acquiring) }

  func markResolved() -> Bool { !state.resolved.exchange(true, ordering: .acquiringAndReleasing) }
}

/// Keeps the version a reference was made at pinned until it is resolved or released.
final class ReadTransactionPin: Sendable {
  private let held: Mutex<ReadTransaction?>
  init(_ transaction: ReadTransaction?) { held = Mutex(transaction) }
  /// The pinned version, until `release()`.
  var transaction: ReadTransaction? { held.withLock { $0 } }
  /// Lets the version go (once the reference is resolved: the Realm it resolved in holds
  /// what it needs).
  func release() { held.withLock { $0 = nil } }
}

extension Realm {
  /// The object or collection `reference` carries, in this Realm; nil when it was deleted.
  /// This Realm moves to the reference's version first if it is older (to the newest version
  /// when the reference was made inside a write transaction). A reference resolves once.
  public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
    guard reference.markResolved() else { fatalError("Can only resolve a thread safe reference once.") }
    defer { reference.pin.release() }
    // Another file does not hold the value, as in RealmSwift (nil, not a failure).
    guard reference.fileKey == core.configuration.fileKey else { return nil }
    if let pinned = reference.pin.transaction, let now = core.read?.version, !core.isInWriteTransaction,
      !core.isFrozen
    {
      if now < pinned.version || (reference.createdInWriteTransaction && (now == pinned.version || !core.hasRead)) {
        // A reference made in a write transaction resolves in the version after it, so it
        // moves the Realm to the newest version (Realm Core's rule).
        _ = core.refresh()
      } else if now > pinned.version, !core.hasRead {
        // A Realm that has read nothing yet starts at the reference's version, as RealmSwift's
        // (which begins its read transaction on first use) does; `refresh()` moves it on.
        core.show(pinned)
      }
    }
    guard let type = Confined.self as? any ThreadSafeResolvable.Type else { return nil }
    return type.resolve(reference.location, in: core) as? Confined
  }
}

extension ObjectBase {
  var objectLocation: ConfinedLocation {
    guard let table = _table else { fatalError("Unmanaged objects have no location") }
    return .object(table: table.name, key: _key)
  }

  static func resolveObject(_ location: ConfinedLocation, in core: RealmCore) -> ObjectBase? {
    guard case .object(let name, let key) = location, let table = core.table(named: name),
      core.exists(table: table, key: key)
    else { return nil }
    return core.object(table, key)
  }
}

extension Object: ThreadConfined, ThreadSafeResolvable {
  var confinedLocation: ConfinedLocation { objectLocation }
  static func resolve(_ location: ConfinedLocation, in core: RealmCore) -> Any? { resolveObject(location, in: core) }
}

extension EmbeddedObject: ThreadConfined, ThreadSafeResolvable {
  var confinedLocation: ConfinedLocation { objectLocation }
  static func resolve(_ location: ConfinedLocation, in core: RealmCore) -> Any? { resolveObject(location, in: core) }
}

extension Results: ThreadConfined, ThreadSafeResolvable {
  var confinedLocation: ConfinedLocation { .collection(CollectionBlueprint(state)) }
  static func resolve(_ location: ConfinedLocation, in core: RealmCore) -> Any? {
    guard case .collection(let blueprint) = location, let state = blueprint.state(in: core) else { return nil }
    return Results(state: state)
  }
}

extension List: ThreadConfined, ThreadSafeResolvable {
  var confinedLocation: ConfinedLocation { .collection(CollectionBlueprint(results().state)) }
  static func resolve(_ location: ConfinedLocation, in core: RealmCore) -> Any? {
    guard case .collection(let blueprint) = location,
      case .list(let owner, _, let index)? = blueprint.state(in: core)?.source
    else { return nil }
    return List(parent: owner, index: index)
  }
}

extension MutableSet: ThreadConfined, ThreadSafeResolvable {
  var confinedLocation: ConfinedLocation { .collection(CollectionBlueprint(results().state)) }
  static func resolve(_ location: ConfinedLocation, in core: RealmCore) -> Any? {
    guard case .collection(let blueprint) = location,
      case .list(let owner, _, let index)? = blueprint.state(in: core)?.source
    else { return nil }
    return MutableSet(parent: owner, index: index)
  }
}

extension Map: ThreadConfined, ThreadSafeResolvable {
  var confinedLocation: ConfinedLocation { .collection(CollectionBlueprint(results().state)) }
  static func resolve(_ location: ConfinedLocation, in core: RealmCore) -> Any? {
    guard case .collection(let blueprint) = location,
      case .list(let owner, _, let index)? = blueprint.state(in: core)?.source
    else { return nil }
    return Map(parent: owner, index: index)
  }
}

extension LinkingObjects: ThreadConfined, ThreadSafeResolvable {
  var confinedLocation: ConfinedLocation { .collection(CollectionBlueprint(results().state)) }
  static func resolve(_ location: ConfinedLocation, in core: RealmCore) -> Any? {
    guard case .collection(let blueprint) = location,
      case .list(let owner, let table, let index)? = blueprint.state(in: core)?.source
    else { return nil }
    return LinkingObjects(
      owner: owner, index: index, propertyName: table.properties[index].linkOriginPropertyName ?? "")
  }
}

extension AnyRealmCollection: ThreadConfined, ThreadSafeResolvable {
  var confinedLocation: ConfinedLocation { .collection(CollectionBlueprint(base.sorted(by: [SortDescriptor]()).state)) }
  static func resolve(_ location: ConfinedLocation, in core: RealmCore) -> Any? {
    guard case .collection(let blueprint) = location, let state = blueprint.state(in: core) else { return nil }
    return AnyRealmCollection(Results<Element>(state: state))
  }
}

extension Projection: ThreadConfined, ThreadSafeResolvable {
  var confinedLocation: ConfinedLocation { rootObject.objectLocation }
  static func resolve(_ location: ConfinedLocation, in core: RealmCore) -> Any? {
    (ObjectBase.resolveObject(location, in: core) as? Root).map { Self(projecting: $0) }
  }
}

// Sectioned results are thread-confined like the results they section; a reference carries
// the results and the key block, and sections them again where it is resolved.
extension SectionedResults: ThreadConfined, ThreadSafeResolvable {
  var confinedLocation: ConfinedLocation {
    .sectioned(CollectionBlueprint(results.state), keyBlock: keyBlock, section: nil)
  }
  static func resolve(_ location: ConfinedLocation, in core: RealmCore) -> Any? {
    guard case .sectioned(let blueprint, let block, _) = location, let state = blueprint.state(in: core),
      let keyBlock = block as? (SectionElement) -> Key
    else { return nil }
    return SectionedResults(results: Results(state: state), keyBlock: keyBlock)
  }
}

extension ResultsSection: ThreadConfined, ThreadSafeResolvable {
  var confinedLocation: ConfinedLocation {
    .sectioned(CollectionBlueprint(results.state), keyBlock: keyBlock, section: AnyHashable(key))
  }
  /// The section with the same key, empty when the resolving version has none.
  static func resolve(_ location: ConfinedLocation, in core: RealmCore) -> Any? {
    guard case .sectioned(let blueprint, let block, let section?) = location, let state = blueprint.state(in: core),
      let keyBlock = block as? (T) -> Key, let key = section.base as? Key
    else { return nil }
    let sectioned = SectionedResults(results: Results(state: state), keyBlock: keyBlock)
    return sectioned.first { $0.key == key }
      ?? ResultsSection(key: key, results: sectioned.results, rows: [], keyBlock: keyBlock)
  }
}

/// A property that may be passed between threads (RealmSwift's `@ThreadSafe`): it holds a
/// thread-safe reference to a managed object or collection, resolved in the reading thread's
/// Realm each time it is read (nil once the value was deleted).
///
/// ```swift
/// @ThreadSafe var person = realm.objects(Person.self).first
/// DispatchQueue.global().async {
///   print(person?.name ?? "deleted")   // resolved on this thread
/// }
/// ```
///
/// The reference pins the version it was made at until the next read replaces it, so this
/// suits local variables and arguments captured by a dispatched block better than
/// long-lived properties.
@propertyWrapper
public final class ThreadSafe<T: ThreadConfined>: Sendable {
  private struct State: Sendable {
    var reference: ThreadSafeReference<T>?
    var configuration: Realm.Configuration?
  }
  private let state = Mutex(State())

  /// The value, resolved in this thread's Realm; nil when none was set or it was deleted.
  public var wrappedValue: T? {
    get {
      state.withLock { state -> sending T? in
        guard let reference = state.reference, let configuration = state.configuration else { return nil }
        let realm: Realm
        do {
          realm = try Realm(configuration: configuration)
        } catch {
          fatalError("\(error)")
        }
        guard let value = realm.resolve(reference) else {
          state.reference = nil
          return nil
        }
        state.reference = ThreadSafeReference(to: value)
        return value
      }
    }
    set {
      guard let newValue else {
        state.withLock { $0 = State() }
        return
      }
      guard let realm = newValue.realm else { fatalError("Only managed objects may be wrapped as thread safe.") }
      let reference = ThreadSafeReference(to: newValue)
      let configuration = realm.configuration
      state.withLock { $0 = State(reference: reference, configuration: configuration) }
    }
  }

  /// Wraps `wrappedValue`, which must be managed (or nil).
  public init(wrappedValue: T?) {
    self.wrappedValue = wrappedValue
  }
}
