/// What `@Persisted(originProperty:)` needs from `LinkingObjects`. Not for direct use.
public protocol LinkingObjectsProtocol {
  /// Creates unmanaged linking objects for the origin property `name`.
  init(fromOriginProperty name: String)
}

/// The objects that link to an object through a property (RealmSwift's `LinkingObjects`):
/// computed, live, and queryable like `Results`.
///
/// ```swift
/// class Dog: Object {
///   @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
/// }
/// ```
public struct LinkingObjects<Element: ObjectBase & RealmCollectionValue>: RandomAccessCollection,
  CustomStringConvertible, LinkingObjectsProtocol, RealmDescribedCollection
{
  /// The name of the property of `Element` that links here.
  public let propertyName: String
  let owner: ObjectBase?
  let index: Int
  let identity = LinkingObjectsIdentity()
  /// For a key-path probe: the one element, a probe object.
  var probeElement: Element?

  /// Creates linking objects for the objects of `fromType` linking through `property`.
  public init(fromType: Element.Type, property: String) {
    propertyName = property
    owner = nil
    index = 0
  }

  /// Creates empty, unmanaged linking objects for the origin property `name`, as
  /// `@Persisted(originProperty:)` declares them.
  public init(fromOriginProperty name: String) {
    propertyName = name
    owner = nil
    index = 0
  }

  init(owner: ObjectBase, index: Int, propertyName: String) {
    self.owner = owner
    self.index = index
    self.propertyName = propertyName
  }

  private var keys: [ObjectKey] {
    guard let owner, owner._core != nil else { return [] }
    if case .list(let items) = owner._storedValue(at: index) { return items.compactMap { CoreLinks.key($0) } }
    return []
  }

  /// The Realm of the owning object, or nil when unmanaged.
  public var realm: Realm? { owner?._core.map { Realm(core: $0) } }
  /// Whether the owning object was deleted.
  public var isInvalidated: Bool { owner?.isInvalidated ?? false }
  /// The position of the first element.
  public var startIndex: Int { 0 }
  /// The collection's past-the-end position: one greater than the last valid subscript.
  public var endIndex: Int { keys.count }
  /// The number of objects that link here now (zero while the owning object is unmanaged).
  public var count: Int { keys.count }

  /// The linking object at `position`.
  public subscript(position: Int) -> Element {
    if let probeElement { return probeElement }
    let keys = self.keys
    checkBounds(position, count: keys.count)
    return element(keys[position])
  }

  /// Iterates the objects that link here now: a loop visits each of them once, whatever it
  /// writes meanwhile (RealmSwift's snapshot enumeration).
  public func makeIterator() -> RLMIterator<Element> {
    let keys = self.keys
    return RLMIterator(count: keys.count) { element(keys[$0]) }
  }

  private func element(_ key: ObjectKey) -> Element {
    guard let core = owner?._core, let element = core.object(core.table(for: Element.self), key) as? Element else {
      fatalError("Linking objects of an unmanaged object cannot be read.")
    }
    return element
  }

  /// The position of `object` among the linking objects.
  public func index(of object: Element) -> Int? {
    // An unmanaged object links to nothing.
    guard object._core != nil else { return nil }
    return keys.firstIndex(of: object._key)
  }

  /// Sets `key` of every linking object (in a write transaction).
  public func setValue(_ value: Any?, forKey key: String) {
    for object in Array(self) { object[key] = value }
  }

  /// RealmSwift's layout: `LinkingObjects<Type> <address> (`, then `\t[i] description` per
  /// element (at most 100), `)`; the address is the owning object's.
  public var description: String {
    describeCollection("LinkingObjects", realmTypeName(Element._rlmTypeInfo), owner, map { $0 as Any? })
  }

  func results() -> Results<Element> {
    guard let owner, let core = owner._core, let table = owner._table else { return Results(unmanaged: []) }
    return Results(core: core, source: .list(owner: owner, table: table, index: index))
  }

  /// The linking objects as live `Results` (empty unmanaged results while the owning object is
  /// unmanaged).
  public var _results: Results<Element> { results() }

}

enum CoreLinks {
  static func key(_ value: RowValue) -> ObjectKey? {
    switch value {
    case .link(let key): return key
    case .typedLink(_, let key): return key
    default: return nil
    }
  }
}

extension LinkingObjects: _Persistable {
  /// A collection is stored as itself.
  public typealias PersistedType = LinkingObjects
  /// How the property is declared: linking objects of `Element`'s class, computed rather than
  /// stored.
  public static var _rlmTypeInfo: _PersistedTypeInfo {
    _PersistedTypeInfo(.linkingObjects, collection: .linkingObjects, objectType: Element.self)
  }
  /// Empty, unmanaged linking objects.
  public static func _rlmDefaultValue() -> LinkingObjects { LinkingObjects(fromOriginProperty: "") }
  /// Empty, unmanaged linking objects: the stored value is ignored, as linking objects are
  /// computed from the origin property.
  public static func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> LinkingObjects {
    LinkingObjects(fromOriginProperty: "")
  }
  /// Null: linking objects are computed from the origin property, never stored.
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue { _StoredValue(.null) }
  /// Linking objects with one probe element, so key paths through an element trace on.
  public static func _rlmProbe(_ probe: _KeyPathProbe) -> LinkingObjects {
    var probed = LinkingObjects(fromOriginProperty: "")
    probed.probeElement = probe.probeObject(of: Element.self)
    return probed
  }
  /// The live linking objects of property `index` of `object`, named after the origin property
  /// its schema declares.
  public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> LinkingObjects {
    let name = object._table?.properties[index].linkOriginPropertyName ?? ""
    return LinkingObjects(owner: object, index: index, propertyName: name)
  }
  /// Fails: linking objects are computed from the origin property and cannot be assigned.
  public static func _rlmSet(_ object: ObjectBase, _ index: Int, _ value: LinkingObjects) {
    fatalError("Cannot set linking objects: they are computed from the origin property.")
  }
  /// `value` when it is linking objects of this type; nil otherwise.
  public static func _rlmFromAny(_ value: Any?) -> LinkingObjects? { value as? LinkingObjects }
}

extension LinkingObjects: Hashable {
  /// True for copies of one value: as in RealmSwift, each read of a linking-objects property is
  /// a collection of its own, unequal to another read of the same property.
  public static func == (lhs: LinkingObjects, rhs: LinkingObjects) -> Bool { lhs.identity === rhs.identity }
  /// Hashes this value's identity, which its copies share (see `==`).
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(identity)) }
}

/// What makes each `LinkingObjects` value a collection of its own (see `==`).
final class LinkingObjectsIdentity: Sendable {}
