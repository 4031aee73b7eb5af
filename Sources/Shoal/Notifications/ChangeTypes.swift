import Foundation
import ShoalStorage
import Synchronization

/// Keeps an observation alive (RealmSwift's `NotificationToken`): notifications stop when it
/// is invalidated or released.
public final class NotificationToken: Sendable {
  private let cancelled = Atomic<Bool>(false)
  /// Commits made with `write(withoutNotifying:)` naming this token, not yet passed by the
  /// Realm that delivers its notifications (which may live on another thread, queue or actor).
  private let suppressed = Mutex<[SuppressedCommit]>([])
  /// The Realm that delivers the notifications: the token keeps it open until it is
  /// invalidated or released, as RealmSwift's does, and no longer.
  private let deliverer = Mutex<KeptAlive?>(nil)

  /// A token that observes nothing, valid until invalidated (RealmSwift's
  /// `NotificationToken()`): a placeholder to hold where a token is expected.
  public init() {}

  /// Keeps `objects` (the observation and the Realm delivering it) alive while the token is.
  func keepAlive(_ objects: [AnyObject]) {
    guard !isInvalidated else { return }
    let kept = KeptAlive(objects)
    deliverer.withLock { $0 = kept }
  }

  /// Stops the notifications; safe from any thread, and more than once. The Realm delivering
  /// them is no longer kept open by the token. Returns true when the token was valid until
  /// this call, false when it was already invalidated (as RealmSwift's).
  @discardableResult
  public func invalidate() -> Bool {
    let wasValid = !cancelled.exchange(true, ordering: .acquiringAndReleasing)
    let realm = deliverer.withLock { held -> KeptAlive? in
      defer { held = nil }
      return held
    }
    _ = realm  // released here, outside the lock
    for commit in suppressed.withLock({ pending -> [SuppressedCommit] in
      defer { pending = [] }
      return pending
    }) {
      commit.close()
    }
    return wasValid
  }

  var isInvalidated: Bool { cancelled.load(ordering: .acquiring) }

  /// Asks the observer not to hear of the commit from `commit.before` to `commit.after`.
  func suppress(_ commit: SuppressedCommit) {
    guard !isInvalidated else { return commit.close() }
    suppressed.withLock { $0.append(commit) }
  }

  /// The suppressed commits an observer moving from `old` to `new` passes, oldest first; those
  /// it passes, or passed before, are forgotten (their versions let go).
  func takeSuppressed(from old: UInt64, to new: UInt64) -> [SuppressedCommit] {
    let (taken, stale) = suppressed.withLock { pending -> ([SuppressedCommit], [SuppressedCommit]) in
      let taken = pending.filter { $0.after.version > old && $0.after.version <= new }
      let stale = pending.filter { $0.after.version <= old }
      pending.removeAll { $0.after.version <= new }
      return (taken, stale)
    }
    for commit in stale { commit.close() }
    return taken.sorted { $0.after.version < $1.after.version }
  }
}

/// A reference that only keeps an object alive.
final class KeptAlive: @unchecked Sendable {  // safe: never dereferenced, only held and released
  private let objects: [AnyObject]
  init(_ objects: [AnyObject]) { self.objects = objects }
}

/// A commit some observers are not to hear of: the versions just before and just after it,
/// both pinned until the observers' Realms have moved past it.
struct SuppressedCommit: Sendable {
  let before: ReadTransaction
  let after: ReadTransaction

  func close() {
    before.close()
    after.close()
  }
}

/// The changes to a collection since the last notification (RealmSwift's
/// `RealmCollectionChange`). Index arrays are sorted ascending: deletions and modifications
/// are positions in the previous version of the collection, insertions positions in the new.
public enum RealmCollectionChange<CollectionType> {
  /// The collection's first evaluation.
  case initial(CollectionType)
  /// A write changed the collection or objects in it.
  case update(CollectionType, deletions: [Int], insertions: [Int], modifications: [Int])
  /// The collection could not be observed.
  case error(Error)
}

/// One changed property of an observed object (RealmSwift's `PropertyChange`).
public struct PropertyChange {
  /// The property's name.
  public let name: String
  /// The value before the change: nil when the write happened on the observing thread, and for
  /// collection properties.
  public let oldValue: Any?
  /// The value after the change (nil for collection properties).
  public let newValue: Any?
}

/// What happened to an observed object (RealmSwift's `ObjectChange`).
public enum ObjectChange<T> {
  /// The object could not be observed.
  case error(_ error: NSError)
  /// One or more properties changed.
  case change(_ object: T, _ properties: [PropertyChange])
  /// The object was deleted.
  case deleted
}

/// The changes to a `Map` since the last notification (RealmSwift's `RealmMapChange`).
public enum RealmMapChange<Collection: _MapChangeCollection> {
  /// The map's first evaluation.
  case initial(Collection)
  /// Keys removed, added and whose values changed.
  case update(Collection, deletions: [Collection.Key], insertions: [Collection.Key], modifications: [Collection.Key])
  /// The map could not be observed.
  case error(Error)
}

/// A keyed collection `RealmMapChange` can describe. Not for direct use.
public protocol _MapChangeCollection {
  /// The type of the keys.
  associatedtype Key
}
extension Map: _MapChangeCollection {}

extension Realm {
  /// What `Realm.observe` reports.
  public enum Notification: String, Sendable {
    /// The Realm moved to a newer version (a local or another thread's or process's commit).
    case didChange = "RLMRealmDidChangeNotification"
    /// A newer version exists but the Realm has `autorefresh` off.
    case refreshRequired = "RLMRealmRefreshRequiredNotification"
  }

  /// The block `Realm.observe` calls.
  public typealias NotificationBlock = (_ notification: Notification, _ realm: Realm) -> Void
}

/// Moves a value to another thread or queue exactly once.
final class Handover<T>: @unchecked Sendable {  // safe: set before the hop, read once after it, never concurrently
  private var value: T?
  init(_ value: T) { self.value = value }
  func take() -> T? {
    defer { value = nil }
    return value
  }
}

// Sendability. Frozen collections and objects are immutable and safe to read from any thread;
// the async change streams carry only frozen values. Live (unfrozen) values stay confined to
// their Realm's thread or queue, as in RealmSwift: sending one elsewhere is a programming error
// the type system cannot see, which is why these conformances are unchecked.
extension RealmCollectionChange: @unchecked Sendable {}  // safe: streams yield frozen collections only
extension ObjectChange: @unchecked Sendable {}  // safe: streams yield frozen objects only
extension RealmMapChange: @unchecked Sendable {}  // safe: streams yield frozen maps only
extension PropertyChange: @unchecked Sendable {}  // safe: streams carry plain values and frozen objects only
extension Results: @unchecked Sendable {}  // safe when frozen (immutable, cache-free); live ones stay confined
extension List: @unchecked Sendable {}  // safe when frozen (immutable, cache-free); live ones stay confined
extension MutableSet: @unchecked Sendable {}  // safe when frozen (immutable, cache-free); live ones stay confined
extension Map: @unchecked Sendable {}  // safe when frozen (immutable, cache-free); live ones stay confined
extension LinkingObjects: @unchecked Sendable {}  // safe when frozen (immutable, cache-free); live ones stay confined
extension AnyRealmCollection: @unchecked Sendable {}  // safe when frozen (immutable); live ones stay confined
extension Realm: @unchecked Sendable {}  // safe when frozen (immutable, cache-free); live ones stay confined

extension PropertyChange {
  /// The same change with any objects in it frozen, for sending to another task.
  func frozen() -> PropertyChange {
    func freeze(_ value: Any?) -> Any? {
      guard let object = value as? ObjectBase, object._core != nil else { return value }
      return object.frozenCopy() as ObjectBase
    }
    return PropertyChange(name: name, oldValue: freeze(oldValue), newValue: freeze(newValue))
  }
}
