import Foundation

/// What every Realm collection offers: `Results`, `List`, `MutableSet`, `LinkingObjects` and
/// `AnyRealmCollection` (RealmSwift's `RealmCollection`).
public protocol RealmCollection<Element>: RandomAccessCollection, CustomStringConvertible, Equatable, ThreadConfined
where Index == Int, Element: RealmCollectionValue, Iterator == RLMIterator<Element> {
  /// Calls `block` with the collection's first state, then after each commit that changes it,
  /// on `queue` when given (see `Results.observe(keyPaths:on:_:)`).
  func observe(
    keyPaths: [String]?, on queue: DispatchQueue?, _ block: @escaping (RealmCollectionChange<Self>) -> Void
  ) -> NotificationToken
  /// The Realm of the collection, or nil when unmanaged.
  var realm: Realm? { get }
  /// Whether the collection can no longer be accessed.
  var isInvalidated: Bool { get }
  /// The position of `object`, or nil.
  func index(of object: Element) -> Int?
  /// The position of the first element matching a Realm Query Language predicate, or nil.
  func index(matching predicateFormat: String, _ args: Any...) -> Int?
  /// The position of the first element matching a predicate with its arguments; what
  /// `index(matching:)` calls. Not for direct use.
  func _index(matching predicateFormat: String, arguments: [Any]) -> Int?
  /// The elements at `indexes`; fails when one is out of bounds.
  func objects(at indexes: IndexSet) -> [Element]
  /// An array of the value of `key` of every element.
  func value(forKey key: String) -> Any?
  /// An array of the value at `keyPath` of every element, or a collection operator's result.
  func value(forKeyPath keyPath: String) -> Any?
  /// Sets `key` of every element.
  func setValue(_ value: Any?, forKey key: String)
  /// The elements matching a Realm Query Language predicate.
  func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element>
  /// The elements matching a type-safe query.
  func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element>
  /// The elements sorted by a key path.
  func sorted(byKeyPath keyPath: String, ascending: Bool) -> Results<Element>
  /// The elements sorted by several key paths.
  func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor
  /// The elements with distinct values of the key paths.
  func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String
  /// The smallest value of a property.
  func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType
  /// The largest value of a property.
  func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType
  /// The sum of a property.
  func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType
  /// The average of a property.
  func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType
  /// Calls `block` isolated to `actor` with the collection's first state and each change; the
  /// collection it receives belongs to a Realm confined to that actor.
  func observe<A: Actor>(
    keyPaths: [String]?, on actor: A, _isolation: isolated (any Actor)?,
    _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Self>) -> Void
  ) async -> NotificationToken
  /// Whether the collection belongs to a frozen Realm.
  var isFrozen: Bool { get }
  /// A frozen (immutable, thread-safe) snapshot of the collection.
  func freeze() -> Self
  /// The live collection for a frozen one (itself when live); nil when it no longer exists.
  func thaw() -> Self?
}

extension RealmCollection {
  /// `observe(keyPaths:on:_:)` with its defaults, for code generic over collections.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (RealmCollectionChange<Self>) -> Void
  ) -> NotificationToken {
    observe(keyPaths: keyPaths, on: queue, block)
  }

  /// `observe(keyPaths:on:_isolation:_:)` with its defaults, for code generic over collections.
  ///
  /// ```swift
  /// let token = await dogs.observe(on: MainActor.shared) { _, change in print(change) }
  /// ```
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Self>) -> Void
  ) async -> NotificationToken {
    await observe(keyPaths: keyPaths, on: actor, _isolation: _isolation, block)
  }
}

extension RealmCollection where Element: ObjectBase {
  /// `observe` with the key paths given as Swift key paths of the elements, for code generic
  /// over collections.
  public func observe(
    keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
    _ block: @escaping (RealmCollectionChange<Self>) -> Void
  ) -> NotificationToken {
    observe(keyPaths: keyPaths.map { _KeyPathProbe.name(ofPartial: $0) }, on: queue, block)
  }

  /// The actor `observe` with the key paths given as Swift key paths of the elements.
  public func observe<A: Actor>(
    keyPaths: [PartialKeyPath<Element>], on actor: A, _isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Self>) -> Void
  ) async -> NotificationToken {
    await observe(
      keyPaths: keyPaths.map { _KeyPathProbe.name(ofPartial: $0) }, on: actor, _isolation: _isolation, block)
  }
}

extension Results: RealmCollection {}
extension List: RealmCollection {}
extension MutableSet: RealmCollection {}
extension LinkingObjects: RealmCollection {}

/// A type-erased Realm collection (RealmSwift's `AnyRealmCollection`): any `Results`, `List`,
/// `MutableSet`, `LinkingObjects`, behind one type.
public struct AnyRealmCollection<Element: RealmCollectionValue>: RealmCollection {
  let base: any RealmCollection<Element>

  /// Wraps `base`.
  public init<C: RealmCollection>(_ base: C) where C.Element == Element {
    if let any = base as? AnyRealmCollection<Element> {
      self.base = any.base
    } else {
      self.base = base
    }
  }

  /// The Realm managing the wrapped collection, or nil when it is unmanaged.
  public var realm: Realm? { base.realm }
  /// Whether the wrapped collection can no longer be accessed.
  public var isInvalidated: Bool { base.isInvalidated }
  /// The position of the first element.
  public var startIndex: Int { 0 }
  /// The collection's past-the-end position: one greater than the last valid subscript.
  public var endIndex: Int { base.count }
  /// The number of objects in the collection.
  public var count: Int { base.count }
  /// The position immediately after `i`.
  public func index(after i: Int) -> Int { i + 1 }
  /// The position immediately before `i`.
  public func index(before i: Int) -> Int { i - 1 }
  /// Iterates the elements the wrapped collection holds now (RealmSwift's snapshot enumeration).
  public func makeIterator() -> RLMIterator<Element> { base.makeIterator() }
  /// The element at `position`.
  public subscript(position: Int) -> Element {
    if position < 0 { fatalError("Cannot pass a negative value for 'index'.") }
    return base[base.startIndex + position]
  }
  /// RealmSwift's layout: `AnyRealmCollection<Type> <address> (`, then `\t[i] description` per
  /// element, `)`.
  public var description: String {
    describeCollection("AnyRealmCollection", realmTypeName(Element._rlmTypeInfo), base as AnyObject, map { $0 as Any? })
  }
  /// The position of `object`, or nil.
  public func index(of object: Element) -> Int? {
    if base is any UnorderedRealmCollection { fatalError("Collection does not support index(of:)") }
    return base.index(of: object)
  }
  /// The position of the first element matching a predicate; not available for a wrapped set.
  public func _index(matching predicateFormat: String, arguments: [Any]) -> Int? {
    if base is any UnorderedRealmCollection { fatalError("Collection does not support index(matching:)") }
    return base._index(matching: predicateFormat, arguments: arguments)
  }
  /// The elements at `indexes`; fails when one is out of bounds.
  public func objects(at indexes: IndexSet) -> [Element] { base.objects(at: indexes) }
  /// The value of `key` of every element, as the wrapped collection gives it (an array; a
  /// set for a `MutableSet`).
  public func value(forKey key: String) -> Any? { base.value(forKey: key) }
  /// The value at `keyPath` of every element, as the wrapped collection gives it, or the
  /// result of a collection operator such as `@count` or `@sum.age`.
  public func value(forKeyPath keyPath: String) -> Any? { base.value(forKeyPath: keyPath) }
  /// Sets `key` of every element to `value` (in a write transaction for a managed collection).
  public func setValue(_ value: Any?, forKey key: String) { base.setValue(value, forKey: key) }
  /// The elements matching a Realm Query Language predicate, as `Results`; fails for an
  /// unmanaged collection.
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
    results().filter(predicateFormat, argumentList: args)
  }
  /// The elements matching a type-safe query, as `Results`; fails for an unmanaged collection.
  public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
    results().where(isIncluded)
  }
  /// The elements sorted by a key path (or "self" for values), as `Results`; fails for an
  /// unmanaged list or set.
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
    base.sorted(byKeyPath: keyPath, ascending: ascending)
  }
  /// The elements sorted by several key paths, the first deciding first, as `Results`; fails
  /// for an unmanaged list or set.
  public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
    base.sorted(by: Array(sortDescriptors))
  }
  /// The first element for each distinct combination of the key paths' values, as `Results`;
  /// fails for an unmanaged list or set.
  public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
    base.distinct(by: Array(keyPaths))
  }
  /// The minimum (lowest) value of a property among the elements, or nil when there are none.
  public func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
    base.min(ofProperty: property)
  }
  /// The maximum (highest) value of a property among the elements, or nil when there are none.
  public func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
    base.max(ofProperty: property)
  }
  /// The sum of a property over the elements (zero when there are none).
  public func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType {
    base.sum(ofProperty: property)
  }
  /// The average of a property over the elements, or nil when there are none.
  public func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType {
    base.average(ofProperty: property)
  }

  /// True when both wrap equal collections of the same kind.
  public static func == (lhs: AnyRealmCollection, rhs: AnyRealmCollection) -> Bool {
    func same<C: RealmCollection>(_ a: C, _ b: Any) -> Bool { (b as? C).map { a == $0 } ?? false }
    return same(lhs.base, rhs.base)
  }

  private func results() -> Results<Element> {
    if let results = base as? Results<Element> { return results }
    return base.sorted(by: [SortDescriptor]())
  }
}

extension Query where T: RealmCollectionValue {
  /// The query a collection's `where` closure starts from: the element itself (`self`) for
  /// values, nothing for objects (whose properties the closure names).
  static var root: Query<T> { Query<T>(isPrimitive: T._rlmTypeInfo.objectType == nil) }
}

/// Collections whose elements have no position of their own (`MutableSet`).
protocol UnorderedRealmCollection {}

extension RealmCollection where Element.PersistedType: MinMaxType {
  /// The smallest element (collections of values).
  public func min() -> Element? { min(ofProperty: "self") }
  /// The largest element (collections of values).
  public func max() -> Element? { max(ofProperty: "self") }
}

extension RealmCollection where Element.PersistedType: AddableType {
  /// The sum of the elements (collections of values).
  public func sum() -> Element { sum(ofProperty: "self") }
  /// The average of the elements (collections of values).
  public func average<T: _HasPersistedType>() -> T? where T.PersistedType: AddableType { average(ofProperty: "self") }
}

extension RealmCollection where Element.PersistedType: SortableType {
  /// The values sorted (collections of values).
  public func sorted(ascending: Bool = true) -> Results<Element> { sorted(byKeyPath: "self", ascending: ascending) }
}

extension RealmCollection {
  /// The elements at `indexes`; fails with RealmSwift's "Indexes for collection are out of
  /// bounds." when one is not below `count`.
  public func objects(at indexes: IndexSet) -> [Element] {
    if let last = indexes.last, last >= count { fatalError("Indexes for collection are out of bounds.") }
    return indexes.map { self[$0] }
  }

  /// The position of the first element matching a Realm Query Language predicate, or nil.
  public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
    _index(matching: predicateFormat, arguments: args)
  }

  /// The position of the first element matching a predicate with its arguments (what
  /// `index(matching:)` calls).
  public func _index(matching predicateFormat: String, arguments: [Any]) -> Int? {
    // An unmanaged collection is searched in memory, as RealmSwift's is.
    if realm == nil, !isInvalidated { return unmanagedIndex(matching: predicateFormat, arguments: arguments) }
    // In the collection's own order: a `Results` of it, unsorted, filtered; the first match's
    // position among all the elements.
    let all = sorted(by: [SortDescriptor]())
    guard let match = all.filter(predicateFormat, argumentList: arguments).first else { return nil }
    if match is ObjectBase { return all.index(of: match) }
    return all.firstIndex(of: match)
  }

  /// The position of the first element matching a type-safe query, or nil.
  public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
    let (predicate, arguments) = isIncluded(Query<Element>.root)._constructPredicate()
    return _index(matching: predicate, arguments: arguments)
  }

  /// An array of the value of `key` of every element (`NSNull` for nil).
  public func value(forKey key: String) -> Any? { value(forKeyPath: key) }
}

extension RealmCollection where Element: ObjectBase {

  /// The smallest value of the property at `keyPath`, or nil when there are no elements.
  public func min<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T? where T.PersistedType: MinMaxType {
    min(ofProperty: _KeyPathProbe.name(of: keyPath))
  }

  /// The largest value of the property at `keyPath`, or nil when there are no elements.
  public func max<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T? where T.PersistedType: MinMaxType {
    max(ofProperty: _KeyPathProbe.name(of: keyPath))
  }

  /// The sum of the property at `keyPath` (0 when there are no elements).
  public func sum<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T where T.PersistedType: AddableType {
    sum(ofProperty: _KeyPathProbe.name(of: keyPath))
  }

  /// The average of the property at `keyPath`, or nil when there are no elements.
  public func average<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T? where T.PersistedType: AddableType {
    average(ofProperty: _KeyPathProbe.name(of: keyPath))
  }

  /// The elements sorted by the property at `keyPath`.
  public func sorted<T>(by keyPath: KeyPath<Element, T>, ascending: Bool = true) -> Results<Element> {
    sorted(byKeyPath: _KeyPathProbe.name(of: keyPath), ascending: ascending)
  }

  /// The elements with distinct values of the properties at `keyPaths`.
  public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == PartialKeyPath<Element> {
    distinct(by: keyPaths.map { _KeyPathProbe.name(ofPartial: $0) })
  }
}

extension RealmCollection where Element.PersistedType: SortableType {
  /// The distinct values (collections of values).
  public func distinct() -> Results<Element> { distinct(by: ["self"]) }
}

/// Types a collection of values can be sorted by (`sorted(ascending:)`), as RealmSwift names
/// them.
public protocol SortableType {}
extension Bool: SortableType {}
extension Int: SortableType {}
extension Int8: SortableType {}
extension Int16: SortableType {}
extension Int32: SortableType {}
extension Int64: SortableType {}
extension Float: SortableType {}
extension Double: SortableType {}
extension String: SortableType {}
extension Date: SortableType {}
extension Data: SortableType {}
extension UUID: SortableType {}
extension ObjectId: SortableType {}
extension Decimal128: SortableType {}
extension AnyRealmValue: SortableType, MinMaxType, AddableType {}
extension Optional: SortableType where Wrapped: SortableType {}

/// Collections whose queries run on a `Results` of their elements (`List`, `MutableSet`,
/// `LinkingObjects`). Not for direct use.
public protocol _ResultsBacked {
  associatedtype Element: RealmCollectionValue
  /// The elements as `Results`.
  var _results: Results<Element> { get }
}

extension List: _ResultsBacked {}
extension MutableSet: _ResultsBacked {}
extension LinkingObjects: _ResultsBacked {}

/// Unmanaged collections that cannot be queried, sorted, made distinct, frozen or observed, with
/// the name of the Objective-C class RealmSwift's message gives (`RLMArray`, `RLMSet`).
protocol UnmanagedQueryFails {
  static var objcName: String { get }
}

/// RealmSwift's failure for an operation only a managed collection supports.
func unmanagedCollectionFailure(_ objcName: String) -> Never {
  fatalError("This method may only be called on \(objcName) instances retrieved from an RLMRealm")
}

extension _ResultsBacked {
  /// The elements as `Results` for a query, a sort or a distinct: RealmSwift's failure for an
  /// unmanaged list or set.
  var queryableResults: Results<Element> {
    let results = _results
    if results.state.core == nil, let unmanaged = self as? any UnmanagedQueryFails {
      unmanagedCollectionFailure(type(of: unmanaged).objcName)
    }
    return results
  }

  /// The elements matching a Realm Query Language predicate.
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
    queryableResults.filter(predicateFormat, argumentList: args)
  }
  /// The elements matching a type-safe query.
  public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
    queryableResults.where(isIncluded)
  }
  /// The elements sorted by a property (or the values themselves, with "self").
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
    queryableResults.sorted(byKeyPath: keyPath, ascending: ascending)
  }
  /// The elements sorted by several properties.
  public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
    queryableResults.sorted(by: sortDescriptors)
  }
  /// The elements with distinct values of the given key paths.
  public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
    queryableResults.distinct(by: keyPaths)
  }
  /// The minimum of a property over the elements.
  public func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
    _results.min(ofProperty: property)
  }
  /// The maximum of a property over the elements.
  public func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
    _results.max(ofProperty: property)
  }
  /// The sum of a property over the elements.
  public func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType {
    _results.sum(ofProperty: property)
  }
  /// The average of a property over the elements.
  public func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType {
    _results.average(ofProperty: property)
  }
}

extension _ResultsBacked where Self: RealmCollection {
  /// An array of the value at `keyPath` of every element (a set of them for `MutableSet`, as
  /// `NSSet` gives it), or a collection operator's result (`@count`, `@sum.age`…).
  public func value(forKeyPath keyPath: String) -> Any? {
    let value = _results.value(forKeyPath: keyPath)
    if self is any UnorderedRealmCollection, !keyPath.hasPrefix("@"), let array = value as? [Any] {
      return Set(array.compactMap { $0 as? AnyHashable })
    }
    return value
  }
}

// MARK: - Codable

/// Encodes the elements of a Realm collection as an array, the Codable form of all of them.
private func encodeArray<S: Sequence>(_ elements: S, to encoder: any Encoder) throws where S.Element: Encodable {
  var container = encoder.unkeyedContainer()
  for element in elements { try container.encode(element) }
}

/// The elements of an array a Realm collection is decoded from.
private func decodeArray<Element: Decodable>(_ type: Element.Type, from decoder: any Decoder) throws -> [Element] {
  var container = try decoder.unkeyedContainer()
  var elements: [Element] = []
  while !container.isAtEnd { elements.append(try container.decode(Element.self)) }
  return elements
}

extension List: Encodable where Element: Encodable {
  /// Encodes the elements as an array.
  public func encode(to encoder: any Encoder) throws { try encodeArray(self, to: encoder) }
}

extension List: Decodable where Element: Decodable {
  /// Decodes an unmanaged list from an array.
  public convenience init(from decoder: any Decoder) throws {
    self.init()
    append(objectsIn: try decodeArray(Element.self, from: decoder))
  }
}

extension MutableSet: Encodable where Element: Encodable {
  /// Encodes the elements as an array.
  public func encode(to encoder: any Encoder) throws { try encodeArray(self, to: encoder) }
}

extension MutableSet: Decodable where Element: Decodable {
  /// Decodes an unmanaged set from an array.
  public convenience init(from decoder: any Decoder) throws {
    self.init()
    insert(objectsIn: try decodeArray(Element.self, from: decoder))
  }
}

extension Results: Encodable where Element: Encodable {
  /// Encodes the elements as an array.
  public func encode(to encoder: any Encoder) throws { try encodeArray(self, to: encoder) }
}

extension AnyRealmCollection: Encodable where Element: Encodable {
  /// Encodes the elements as an array.
  public func encode(to encoder: any Encoder) throws { try encodeArray(self, to: encoder) }
}
