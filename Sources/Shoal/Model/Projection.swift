import Dispatch
import Foundation
@_spi(Reflection) import Swift
import Synchronization

/// Projection classes whose `@Projected` key paths were checked (a generic class cannot hold
/// a static stored property).
private let projectionClassesChecked = Mutex<Set<ObjectIdentifier>>([])

/// A lightweight view of an object's properties under other names or shapes (RealmSwift's
/// `Projection`):
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///   @Projected(\Person.firstName) var firstName
///   @Projected(\Person.address.city) var homeCity
///   @Projected(\Person.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
/// }
/// let people: Results<PersonProjection> = realm.objects(PersonProjection.self)
/// ```
open class Projection<Root: ObjectBase & RealmCollectionValue>: RealmCollectionValue, ProjectionObservable,
  CustomStringConvertible
{
  /// The projected object.
  public let rootObject: Root

  /// Creates a projection of `object`.
  public required init(projecting object: Root) {
    rootObject = object
    Projection.checkProjectedProperties(of: self)
  }

  /// Fails, as RealmSwift does, when a `@Projected` key path does not start at a persisted
  /// property of the root class (checked once per projection class).
  private static func checkProjectedProperties(of projection: Projection<Root>) {
    let id = ObjectIdentifier(type(of: projection))
    if projectionClassesChecked.withLock({ $0.contains(id) }) { return }
    for property in projection.projectedProperties {
      guard let keyPath = property.keyPath as? PartialKeyPath<Root> else { continue }
      if _KeyPathProbe.name(ofPartial: keyPath).isEmpty {
        fatalError("@Projected property '\(property.name)' must be a part of Realm object")
      }
    }
    projectionClassesChecked.withLock { _ = $0.insert(id) }
  }

  /// The Realm of the projected object.
  public var realm: Realm? { rootObject._core.map { Realm(core: $0) } }
  /// Whether the projected object was deleted.
  public var isInvalidated: Bool { rootObject.isInvalidated }
  /// Whether the projected object is frozen.
  public var isFrozen: Bool { rootObject._core?.isFrozen ?? false }
  /// A projection of the frozen object.
  public func freeze() -> Self { Self(projecting: rootObject.frozenCopy()) }
  /// A projection of the live object; nil when it was deleted.
  public func thaw() -> Self? { (rootObject.thawedCopy() as Root?).map { Self(projecting: $0) } }

  /// RealmSwift's layout: `Name<Root> <address> {`, then `name(\.keyPath) = value;` per
  /// projected property (the first indented twice, as RealmSwift prints it), `}`.
  open var description: String {
    let lines = projectedProperties.enumerated().map { offset, property -> String in
      let path = (property.keyPath as? PartialKeyPath<Root>).map { _KeyPathProbe.name(ofPartial: $0) } ?? ""
      // A collection projection (`\.friends.projectTo.name`) shows the collection's path.
      let shown = path.components(separatedBy: ".projectTo").first ?? path
      return (offset == 0 ? "\t\t" : "\t") + "\(property.name)(\\.\(shown)) = \(property.read(self));"
    }
    return "\(type(of: self))<\(Root.self)> <\(Unmanaged.passUnretained(self).toOpaque())> {\n"
      + lines.joined(separator: "\n") + "\n}"
  }

  /// The `@Projected` properties: name, root key path and a reader.
  var projectedProperties: [(name: String, keyPath: AnyKeyPath, read: (Projection<Root>) -> Any)] {
    var found: [(String, Int, any AnyProjected.Type)] = []
    _ = _forEachField(of: type(of: self), options: _EachFieldOptions(rawValue: 1)) { cName, offset, fieldType, _ in
      // Option 1 is `.classType`: the class's fields with their superclasses'.
      if let projected = fieldType as? any AnyProjected.Type {
        var name = String(cString: cName)
        if name.hasPrefix("_") { name.removeFirst() }
        found.append((name, offset, projected))
      }
      return true
    }
    let base = Unmanaged.passUnretained(self).toOpaque()
    return found.map { name, offset, type in
      // The offset comes from this instance's own class metadata.
      let keyPath = type.keyPath(at: UnsafeRawPointer(base + offset))
      // The subscript of an `AnyKeyPath` adds a level of `Optional`: take it off.
      return (name, keyPath, { projection in projection.rootObject[keyPath: keyPath] ?? (nil as Any?) as Any })
    }
  }

  // MARK: Hashable, _Persistable

  /// True for projections of the same object seen by the same kind of Realm: a live
  /// projection is not equal to its frozen copy, nor frozen copies of different versions to
  /// each other, as in RealmSwift.
  public static func == (lhs: Projection, rhs: Projection) -> Bool {
    if lhs.rootObject === rhs.rootObject { return true }
    guard let left = lhs.rootObject._core, let right = rhs.rootObject._core, left.sameView(as: right) else {
      return false
    }
    return lhs.rootObject._table?.name == rhs.rootObject._table?.name && lhs.rootObject._key == rhs.rootObject._key
  }
  /// Hashes the root object's key when it is managed, the root instance's identity otherwise.
  public func hash(into hasher: inout Hasher) {
    if rootObject._core != nil { hasher.combine(rootObject._key) } else { hasher.combine(ObjectIdentifier(rootObject)) }
  }

  /// A projection is stored as its root object.
  public typealias PersistedType = Root
  /// How a projection is stored: as its root object, a link to a `Root` object.
  public class var _rlmTypeInfo: _PersistedTypeInfo { Root._rlmTypeInfo }
  /// A projection of a new unmanaged root object.
  public class func _rlmDefaultValue() -> Self { Self(projecting: Root._rlmDefaultValue()) }
  /// A projection of the stored (linked) root object.
  public class func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> Self {
    Self(projecting: Root._rlmFromStored(value, context))
  }
  /// The root object's stored value: a link (an unmanaged root is added to the context's
  /// Realm).
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue { rootObject._rlmToStored(context) }
  /// `value` itself when it is this projection type; otherwise a projection of the root object
  /// `Root._rlmFromAny(_:)` makes of it, or nil when it makes none.
  public class func _rlmFromAny(_ value: Any?) -> Self? {
    if let projection = value as? Self { return projection }
    return Root._rlmFromAny(value).map { Self(projecting: $0) }
  }
}

private func anyDescription(_ value: Any) -> String {
  if let string = unwrapOptional(value) as? String { return "\"\(string)\"" }
  return unwrapOptional(value).map { "\($0)" } ?? "nil"
}

/// What `Projection.observe` needs. Not for direct use.
public protocol ProjectionObservable: AnyObject, SendableMetatype {
  associatedtype Root: ObjectBase & RealmCollectionValue
  /// The projected object.
  var rootObject: Root { get }
  /// Creates a projection of `object`.
  init(projecting object: Root)
}

/// A projected property as observation sees it: its name, the root key path it reads and the
/// root property that path starts with.
struct ObservedProjectedProperty<Root: ObjectBase> {
  let name: String
  let rootPath: String
  let root: String
  let keyPath: PartialKeyPath<Root>
}

extension ProjectionObservable {
  /// Calls `block` after each commit that changes a projected property of the object (or with
  /// `keyPaths`, those projected properties, named as the projection's properties or the root
  /// key paths they read), naming the projection's properties.
  ///
  /// ```swift
  /// let token = personProjection.observe(keyPaths: ["firstName"]) { change in
  ///   if case .change(_, let properties) = change { print(properties.map(\.name)) }
  /// }
  /// ```
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<Self>) -> Void
  ) -> NotificationToken {
    let observed = observedProperties(keyPaths)
    return rootObject.observeObject(keyPaths: Self.rootKeyPaths(observed), on: queue) {
      (change: ObjectChange<Root>) in
      if let projected = Self.projectedChange(change, observing: observed) { block(projected) }
    }
  }

  /// `observe` with the projection's Swift key paths (`[\PersonProjection.firstName]`).
  public func observe(
    keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<Self>) -> Void
  ) -> NotificationToken {
    observe(keyPaths: Self.rootPaths(of: keyPaths), on: queue, block)
  }

  /// Calls `block` isolated to `actor` after each commit that changes a projected property; the
  /// projection it receives is of the object in a Realm confined to that actor.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void
  ) async -> NotificationToken {
    let rootPaths = Self.rootKeyPaths(observedProperties(keyPaths))
    return await rootObject.observeObject(keyPaths: rootPaths, on: actor) {
      (actor: isolated A, change: ObjectChange<Root>) in
      let observed: [ObservedProjectedProperty<Root>]
      switch change {
      case .change(let object, _): observed = Self(projecting: object).observedProperties(keyPaths)
      case .deleted, .error: observed = []
      }
      if let projected = Self.projectedChange(change, observing: observed) { block(actor, projected) }
    }
  }

  /// The actor `observe` with the projection's Swift key paths.
  public func observe<A: Actor>(
    keyPaths: [PartialKeyPath<Self>], on actor: A, _isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void
  ) async -> NotificationToken {
    await observe(keyPaths: Self.rootPaths(of: keyPaths), on: actor, block)
  }

  /// The projected properties `keyPaths` choose (all of them for nil or none). A key path that
  /// names neither a projected property nor a root key path one reads fails, as in RealmSwift.
  func observedProperties(_ keyPaths: [String]?) -> [ObservedProjectedProperty<Root>] {
    guard let projection = self as? Projection<Root> else { fatalError("Only projections can be observed") }
    let all = projection.projectedProperties.map { property in
      let keyPath = property.keyPath as! PartialKeyPath<Root>  // safe: @Projected key paths start at Root
      let rootPath = _KeyPathProbe.name(ofPartial: keyPath)
      return ObservedProjectedProperty(
        name: property.name, rootPath: rootPath, root: String(rootPath.split(separator: ".").first ?? ""),
        keyPath: keyPath)
    }
    guard let keyPaths, !keyPaths.isEmpty else { return all }
    for keyPath in keyPaths
    where !all.contains(where: { $0.name == keyPath || $0.rootPath == keyPath || $0.root == keyPath }) {
      fatalError("Property '\(keyPath)' is not a projected property of '\(Self.self)'")
    }
    return all.filter { keyPaths.contains($0.name) || keyPaths.contains($0.rootPath) || keyPaths.contains($0.root) }
  }

  /// The root object's key paths to observe for `observed`.
  static func rootKeyPaths(_ observed: [ObservedProjectedProperty<Root>]) -> [String] {
    observed.map { $0.rootPath.replacingOccurrences(of: ".projectTo", with: "") }
  }

  /// The root key paths the projection's `keyPaths` read (nil for none: every property).
  static func rootPaths(of keyPaths: [PartialKeyPath<Self>]) -> [String]? {
    guard !keyPaths.isEmpty else { return nil }
    return keyPaths.map { keyPath in
      let probe = _KeyPathProbe()
      _ = Self(projecting: probe.probeObject(of: Root.self))[keyPath: keyPath]
      return probe.path.joined(separator: ".")
    }
  }

  /// The projection's change for a change of its root object: every observed projected
  /// property of a changed root property, with its projected value; nil when none changed.
  static func projectedChange(
    _ change: ObjectChange<Root>, observing observed: [ObservedProjectedProperty<Root>]
  ) -> ObjectChange<Self>? {
    switch change {
    case .change(let object, let changes):
      let byRoot = Dictionary(grouping: observed, by: \.root)
      let renamed = changes.flatMap { change in
        (byRoot[change.name] ?? []).map {
          PropertyChange(
            name: $0.name, oldValue: projectedOldValue(change, through: $0.keyPath),
            newValue: object[keyPath: $0.keyPath])
        }
      }
      return renamed.isEmpty ? nil : .change(Self(projecting: object), renamed)
    case .deleted: return .deleted
    case .error(let error): return .error(error)
    }
  }
}

/// The projected value a changed root property had before the change: the projection's key
/// path read on a scratch object holding the old value (`\.lastName.localizedUppercase` of an
/// old "Snow" is "SNOW"); nil when the old value is unknown.
private func projectedOldValue<Root: ObjectBase>(_ change: PropertyChange, through keyPath: PartialKeyPath<Root>)
  -> Any?
{
  guard let old = change.oldValue else { return nil }
  let scratch = Root()
  scratch._setValue(old, forKey: change.name, bySubscript: false)
  return unwrapOptional(scratch[keyPath: keyPath])
}

/// The type-erased face of `@Projected`. Not for direct use.
public protocol AnyProjected {
  /// The root key path.
  static func keyPath(at address: UnsafeRawPointer) -> AnyKeyPath
}

/// Declares a property of a `Projection` as a key path of its root object (RealmSwift's
/// `Projected`). Writable when the key path is.
@propertyWrapper
public struct Projected<T: ObjectBase, Value>: AnyProjected {
  /// The root key path.
  public let projectedKeyPath: KeyPath<T, Value>

  /// Projects `projectedKeyPath` of the root object.
  public init(_ projectedKeyPath: KeyPath<T, Value>) {
    self.projectedKeyPath = projectedKeyPath
  }

  /// `@Projected` can only be used on `Projection` subclasses.
  @available(*, unavailable, message: "@Projected can only be used on a Projection")
  public var wrappedValue: Value {
    get { fatalError("@Projected can only be used on a Projection") }
    // swift-format-ignore
    set { fatalError("@Projected can only be used on a Projection") }
  }

  /// Reads and writes the root object's key path.
  public static subscript<EnclosingSelf: Projection<T>>(
    _enclosingInstance observed: EnclosingSelf,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
    storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Projected<T, Value>>
  ) -> Value {
    get { observed.rootObject[keyPath: observed[keyPath: storageKeyPath].projectedKeyPath] }
    set {
      guard let writable = observed[keyPath: storageKeyPath].projectedKeyPath as? ReferenceWritableKeyPath<T, Value>
      else { fatalError("Projected property is read-only: its key path \(Value.self) is not writable") }
      observed.rootObject[keyPath: writable] = newValue
    }
  }

  /// The root key path of the `Projected` wrapper stored at `address` (a field of a
  /// projection instance).
  public static func keyPath(at address: UnsafeRawPointer) -> AnyKeyPath {
    address.assumingMemoryBound(to: Projected<T, Value>.self).pointee.projectedKeyPath
  }
}

extension Realm {
  /// Every object of the projection's root class, as projections.
  public func objects<Element: Projection<Root>, Root>(_ type: Element.Type) -> Results<Element> {
    Results(core: core, source: .table(core.table(for: Root.self)))
  }
}

/// Maps a list of objects to a collection of one property of each, for `@Projected` key paths
/// such as `\Person.friends.projectTo.firstName` (RealmSwift's `CollectionElementMapper`).
@dynamicMemberLookup
public struct CollectionElementMapper<Element: ObjectBase & RealmCollectionValue> {
  let collection: AnyRealmCollection<Element>

  /// The collection of `member` of each element.
  public subscript<V: RealmCollectionValue>(dynamicMember member: KeyPath<Element, V>) -> ProjectedCollection<V> {
    let writable = member as? ReferenceWritableKeyPath<Element, V>
    return ProjectedCollection(
      source: collection,
      accessor: ProjectedAccessor(
        read: { object in
          // The source holds only `Element`s.
          (object as! Element)[keyPath: member]  // safe: the source is an AnyRealmCollection<Element>
        },
        write: writable.map { keyPath in
          { object, value in (object as! Element)[keyPath: keyPath] = value }  // safe: as above
        }))
  }
}

extension List where Element: ObjectBase {
  /// The list's elements mapped to one of their properties, for `@Projected`.
  public var projectTo: CollectionElementMapper<Element> {
    CollectionElementMapper(collection: AnyRealmCollection(self))
  }
}

extension MutableSet where Element: ObjectBase {
  /// The set's elements mapped to one of their properties, for `@Projected`.
  public var projectTo: CollectionElementMapper<Element> {
    CollectionElementMapper(collection: AnyRealmCollection(self))
  }
}

/// How a `ProjectedCollection` reads (and, when the key path is writable, writes) the property
/// of each object.
struct ProjectedAccessor<Value> {
  let read: (ObjectBase) -> Value
  let write: ((ObjectBase, Value) -> Void)?
}

/// The objects behind a `ProjectedCollection`, whatever their class.
protocol ProjectedSource {
  var count: Int { get }
  func object(at index: Int) -> ObjectBase
  var realm: Realm? { get }
  var isInvalidated: Bool { get }
  var isFrozen: Bool { get }
  func frozenSource() -> any ProjectedSource
  func thawedSource() -> (any ProjectedSource)?
  func observeSource(
    keyPaths: [String]?, on queue: DispatchQueue?,
    _ block: @escaping (RealmCollectionChange<any ProjectedSource>) -> Void
  ) -> NotificationToken
}

extension AnyRealmCollection: ProjectedSource where Element: ObjectBase {
  func object(at index: Int) -> ObjectBase { self[index] }
  func frozenSource() -> any ProjectedSource { freeze() }
  func thawedSource() -> (any ProjectedSource)? { thaw() }
  func observeSource(
    keyPaths: [String]?, on queue: DispatchQueue?,
    _ block: @escaping (RealmCollectionChange<any ProjectedSource>) -> Void
  ) -> NotificationToken {
    observe(keyPaths: keyPaths, on: queue) { change in
      switch change {
      case .initial(let collection): block(.initial(collection))
      case .update(let collection, let deletions, let insertions, let modifications):
        block(.update(collection, deletions: deletions, insertions: insertions, modifications: modifications))
      case .error(let error): block(.error(error))
      }
    }
  }
}

/// A collection of one property of each object of a list or set, in a projection (RealmSwift's
/// `ProjectedCollection`): it reads through to the objects, and writes to them when the key path
/// is writable; it can be observed, frozen and thawed like the list.
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///   @Projected(\Person.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
/// }
/// try realm.write { projection.friendNames[0] = "Ann" }  // renames the first friend
/// ```
public struct ProjectedCollection<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible,
  ThreadConfined
{
  /// Positions are integers, from zero.
  public typealias Index = Int
  let source: any ProjectedSource
  let accessor: ProjectedAccessor<Element>

  /// The first position: 0.
  public var startIndex: Int { 0 }
  /// One past the last position: the number of objects.
  public var endIndex: Int { source.count }

  /// The value at `position`; setting it sets the property of the object there (in a write
  /// transaction).
  public subscript(position: Int) -> Element {
    get {
      if position < 0 { fatalError("Cannot pass a negative value to retrieve an element: \(position)") }
      return accessor.read(source.object(at: position))
    }
    nonmutating set {
      guard let write = accessor.write else {
        fatalError("Cannot set a value in a ProjectedCollection whose key path is read-only")
      }
      write(source.object(at: position), newValue)
    }
  }

  /// The position of the first element equal to `object`, or nil.
  public func index(of object: Element) -> Int? { firstIndex(of: object) }

  /// The Realm of the objects, or nil when unmanaged.
  public var realm: Realm? { source.realm }
  /// Whether the objects' list can no longer be accessed.
  public var isInvalidated: Bool { source.isInvalidated }
  /// Whether the collection belongs to a frozen Realm.
  public var isFrozen: Bool { source.isFrozen }
  /// A frozen snapshot of the collection, readable from any thread.
  public func freeze() -> ProjectedCollection { ProjectedCollection(source: source.frozenSource(), accessor: accessor) }
  /// The live collection for a frozen one; nil when its list no longer exists.
  public func thaw() -> ProjectedCollection? {
    source.thawedSource().map { ProjectedCollection(source: $0, accessor: accessor) }
  }

  /// Calls `block` with the collection's first state and after each commit that changes the
  /// objects or which objects are in it (on `queue` when given), as `List.observe`.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
    _ block: @escaping (RealmCollectionChange<ProjectedCollection<Element>>) -> Void
  ) -> NotificationToken {
    let accessor = self.accessor
    return source.observeSource(keyPaths: keyPaths, on: queue) { change in
      switch change {
      case .initial(let source): block(.initial(ProjectedCollection(source: source, accessor: accessor)))
      case .update(let source, let deletions, let insertions, let modifications):
        block(
          .update(
            ProjectedCollection(source: source, accessor: accessor), deletions: deletions, insertions: insertions,
            modifications: modifications))
      case .error(let error): block(.error(error))
      }
    }
  }

  /// `observe(keyPaths:on:_:)` for every change.
  public func observe(
    on queue: DispatchQueue?, _ block: @escaping (RealmCollectionChange<ProjectedCollection<Element>>) -> Void
  ) -> NotificationToken {
    observe(keyPaths: nil, on: queue, block)
  }

  /// RealmSwift's layout: `ProjectedCollection<Type> {`, then `\t[i] value` per element, `}`.
  public var description: String {
    let lines = enumerated().map { "\t[\($0.offset)] \($0.element)" }
    return "ProjectedCollection<\(Element.self)> {\n" + lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n")
      + "}"
  }
}
