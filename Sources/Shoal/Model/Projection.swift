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
    guard let left = lhs.rootObject._core, let right = rhs.rootObject._core, left.isFrozen == right.isFrozen,
      !left.isFrozen || left.read?.version == right.read?.version
    else { return false }
    return lhs.rootObject._table?.name == rhs.rootObject._table?.name && lhs.rootObject._key == rhs.rootObject._key
  }
  public func hash(into hasher: inout Hasher) {
    if rootObject._core != nil { hasher.combine(rootObject._key) } else { hasher.combine(ObjectIdentifier(rootObject)) }
  }

  /// A projection is stored as its root object.
  public typealias PersistedType = Root
  public class var _rlmTypeInfo: _PersistedTypeInfo { Root._rlmTypeInfo }
  public class func _rlmDefaultValue() -> Self { Self(projecting: Root._rlmDefaultValue()) }
  public class func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> Self {
    Self(projecting: Root._rlmFromStored(value, context))
  }
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue { rootObject._rlmToStored(context) }
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
public protocol ProjectionObservable: AnyObject {
  associatedtype Root: ObjectBase & RealmCollectionValue
  /// The projected object.
  var rootObject: Root { get }
  /// Creates a projection of `object`.
  init(projecting object: Root)
}

extension ProjectionObservable {
  /// Calls `block` after each commit that changes a projected property of the object (or with
  /// `keyPaths`, those projected properties), naming the projection's properties.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<Self>) -> Void
  ) -> NotificationToken {
    guard let projection = self as? Projection<Root> else { fatalError("Only projections can be observed") }
    let properties = projection.projectedProperties.map { property in
      let keyPath = property.keyPath as! PartialKeyPath<Root>  // safe: @Projected key paths start at Root
      let rootPath = _KeyPathProbe.name(ofPartial: keyPath)
      return (
        name: property.name, rootPath: rootPath, root: String(rootPath.split(separator: ".").first ?? ""),
        keyPath: keyPath
      )
    }
    // A string key path names a projected property or, as RealmSwift's code matches them, a
    // property of the root object.
    let chosen = properties.filter { property in
      guard let keyPaths else { return true }
      return keyPaths.contains(property.name) || keyPaths.contains(property.rootPath)
        || keyPaths.contains(property.root)
    }
    let rootPaths = chosen.map { $0.rootPath.replacingOccurrences(of: ".projectTo", with: "") }
    // Every projected property of a changed root property is reported, with its projected value.
    let projectedNames = Dictionary(grouping: chosen, by: \.root)
    return rootObject.observeObject(keyPaths: rootPaths, on: queue) { (change: ObjectChange<Root>) in
      switch change {
      case .change(let object, let changes):
        let renamed = changes.flatMap { change in
          (projectedNames[change.name] ?? []).map {
            PropertyChange(name: $0.name, oldValue: change.oldValue, newValue: object[keyPath: $0.keyPath])
          }
        }
        if !renamed.isEmpty { block(.change(Self(projecting: object), renamed)) }
      case .deleted: block(.deleted)
      case .error(let error): block(.error(error))
      }
    }
  }
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
  let elements: () -> [Element]

  /// The collection of `member` of each element.
  public subscript<V>(dynamicMember member: KeyPath<Element, V>) -> ProjectedCollection<V> {
    ProjectedCollection(values: { elements().map { $0[keyPath: member] } })
  }
}

extension List where Element: ObjectBase {
  /// The list's elements mapped to one of their properties, for `@Projected`.
  public var projectTo: CollectionElementMapper<Element> { CollectionElementMapper(elements: { Array(self) }) }
}

extension MutableSet where Element: ObjectBase {
  /// The set's elements mapped to one of their properties, for `@Projected`.
  public var projectTo: CollectionElementMapper<Element> { CollectionElementMapper(elements: { Array(self) }) }
}

/// A collection of one property of each object of a list, in a projection (RealmSwift's
/// `ProjectedCollection`); it reads through to the list.
public struct ProjectedCollection<Element>: RandomAccessCollection, CustomStringConvertible {
  let values: () -> [Element]

  public var startIndex: Int { 0 }
  public var endIndex: Int { values().count }
  /// The value at `position`.
  public subscript(position: Int) -> Element { values()[position] }
  /// RealmSwift's layout: `ProjectedCollection<Type> {`, then `\t[i] value` per element, `}`.
  public var description: String {
    let lines = values().enumerated().map { "\t[\($0.offset)] \($0.element)" }
    return "ProjectedCollection<\(Element.self)> {\n" + lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n")
      + "}"
  }
}
