import Foundation

/// A type-safe query expression (RealmSwift's `Query`), built in the closure given to
/// `where`:
///
/// ```swift
/// realm.objects(Person.self).where { $0.age > 21 && $0.name.starts(with: "A") }
/// realm.objects(Person.self).where { $0.dogs.name == "Rex" || $0.tags.contains("vip") }
/// realm.objects(Person.self).where { ($0.dogs.age >= 5).count > 2 }  // a subquery
/// ```
///
/// A query is a tree of key paths, values and operators; `_constructPredicate()` turns it into
/// the Realm Query Language predicate `filter(_:_:)` takes, with the values as arguments, so
/// both forms behave identically. The operations offered depend on the type of the expression,
/// as in RealmSwift: comparisons for numbers, dates and strings (`PersistedType` of
/// `_QueryNumeric` or `_QueryString`), `contains`, `count` and aggregates for collections,
/// subscripts for maps.
@dynamicMemberLookup
public struct Query<T> {
  let node: QueryExpressionNode

  init(node: QueryExpressionNode) { self.node = node }

  /// The start of a query over a collection's elements: the element itself (`self`) for
  /// values, nothing for objects (whose properties the closure names).
  init(isPrimitive: Bool = false) {
    node =
      isPrimitive
      ? .keyPath(["self"], QueryKeyPathOptions.isCollection, collectionEnd: nil) : .keyPath([], [], collectionEnd: nil)
  }

  /// The start of a query over objects, for ShoalSync's subscriptions.
  package static var objects: Query<T> { Query<T>() }

  fileprivate func appending(_ names: [String], collection: Bool) -> QueryExpressionNode {
    guard case .keyPath(let path, let options, let end) = node else {
      if case .mapSubscript = node { fatalError("Cannot apply key path to Map subscripts.") }
      fatalError("Cannot apply a keypath to \(QueryPredicateBuilder.build(node).0)")
    }
    let joined = path + names
    return .keyPath(
      joined, collection ? options.union([.isCollection, .requiresAny]) : options,
      collectionEnd: end ?? (collection ? joined.count : nil))
  }

  /// The key path without `ANY`, with `name` appended when given: counts, `IN` and aggregates
  /// of a whole collection.
  fileprivate func keyPathErasingAny(appending name: String? = nil) -> QueryExpressionNode {
    guard case .keyPath(let path, let options, let end) = node else {
      fatalError("Cannot apply a keypath to \(QueryPredicateBuilder.build(node).0)")
    }
    return .keyPath(path + (name.map { [$0] } ?? []), options.subtracting(.requiresAny), collectionEnd: end)
  }

  /// `collection.@name.property`: an aggregate of a property over the objects of the
  /// collection on the path (`$0.dogs.age.max`).
  fileprivate func collectionAggregate(_ name: String) -> QueryExpressionNode {
    guard case .keyPath(var path, let options, let end) = node else {
      fatalError("Cannot apply a keypath to \(QueryPredicateBuilder.build(node).0)")
    }
    path.insert(name, at: Swift.min(end ?? (path.count > 1 ? 1 : path.count), path.count))
    return .keyPath(path, options.subtracting(.requiresAny), collectionEnd: end)
  }

  fileprivate func compare(_ op: TypedQueryOperator, _ value: Any?, options: StringOptions = []) -> Query<Bool> {
    Query<Bool>(node: .comparison(op, node, .constant(value), options))
  }

  fileprivate func compare<U>(_ op: TypedQueryOperator, _ column: Query<U>, options: StringOptions = []) -> Query<Bool>
  {
    Query<Bool>(node: .comparison(op, node, column.node, options))
  }

  /// Between the range's bounds, both included.
  fileprivate func between(_ lower: Any, _ upper: Any) -> Query<Bool> {
    Query<Bool>(node: .between(node, .constant(lower), .constant(upper)))
  }

  /// At least `lower` and below `upper`.
  fileprivate func halfOpen(_ lower: Any, _ upper: Any) -> Query<Bool> {
    Query<Bool>(
      node: .comparison(
        .and, .comparison(.greaterThanOrEqual, node, .constant(lower), []),
        .comparison(.lessThan, node, .constant(upper), []), []))
  }

  /// Every element of the collection is within the bounds: its minimum and maximum are.
  fileprivate func allWithin(_ lower: Any, _ upper: Any, closed: Bool) -> Query<Bool> {
    Query<Bool>(
      node: .comparison(
        .and, .comparison(.greaterThanOrEqual, keyPathErasingAny(appending: "@min"), .constant(lower), []),
        .comparison(closed ? .lessThanOrEqual : .lessThan, keyPathErasingAny(appending: "@max"), .constant(upper), []),
        []))
  }

  // MARK: Equality

  /// Equal to `rhs`.
  public static func == (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.equal, rhs) }
  /// Equal to another property.
  public static func == (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.equal, rhs) }
  /// Not equal to `rhs`.
  public static func != (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.notEqual, rhs) }
  /// Not equal to another property.
  public static func != (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.notEqual, rhs) }

  /// One of `collection`'s values.
  public func `in`<U: Sequence>(_ collection: U) -> Query<Bool> where U.Element == T {
    compare(.in, Array(collection))
  }

  // MARK: Building

  /// An empty query over `T`, for tests of the predicates queries build. Not for direct use.
  public static func _constructForTesting() -> Query<T> { Query<T>() }

  /// The Realm Query Language predicate and its arguments. Exposed for testing.
  public func _constructPredicate() -> (String, [Any]) { QueryPredicateBuilder.build(node) }
}

// MARK: Key paths

extension Query where T: ObjectBase {
  /// A property of the object.
  public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> {
    Query<V>(node: appending(_KeyPathProbe.names(of: keyPath), collection: false))
  }
  /// A map property of the object: comparisons match when any value matches.
  public subscript<V: RealmKeyedCollection>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> {
    Query<V>(node: appending(_KeyPathProbe.names(of: keyPath), collection: true))
  }
  /// A list, set or linking objects property: comparisons match when any element matches.
  public subscript<V: RealmCollection>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> {
    Query<V>(node: appending(_KeyPathProbe.names(of: keyPath), collection: true))
  }
}

extension Query where T: OptionalProtocol, T.Wrapped: ObjectBase {
  /// A property of the linked object.
  public subscript<V>(dynamicMember keyPath: KeyPath<T.Wrapped, V>) -> Query<V> {
    Query<V>(node: appending(_KeyPathProbe.names(of: keyPath), collection: false))
  }
  /// A map property of the linked object.
  public subscript<V: RealmKeyedCollection>(dynamicMember keyPath: KeyPath<T.Wrapped, V>) -> Query<V> {
    Query<V>(node: appending(_KeyPathProbe.names(of: keyPath), collection: true))
  }
  /// A collection property of the linked object.
  public subscript<V: RealmCollection>(dynamicMember keyPath: KeyPath<T.Wrapped, V>) -> Query<V> {
    Query<V>(node: appending(_KeyPathProbe.names(of: keyPath), collection: true))
  }
}

// MARK: Numbers and dates

extension Query where T: _HasPersistedType, T.PersistedType: _QueryNumeric {
  /// Greater than `rhs`.
  public static func > (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greaterThan, rhs) }
  /// Greater than another property.
  public static func > (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.greaterThan, rhs) }
  /// Greater than or equal to `rhs`.
  public static func >= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greaterThanOrEqual, rhs) }
  /// Greater than or equal to another property.
  public static func >= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.greaterThanOrEqual, rhs) }
  /// Less than `rhs`.
  public static func < (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.lessThan, rhs) }
  /// Less than another property.
  public static func < (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.lessThan, rhs) }
  /// Less than or equal to `rhs`.
  public static func <= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.lessThanOrEqual, rhs) }
  /// Less than or equal to another property.
  public static func <= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.lessThanOrEqual, rhs) }

  /// The smallest value of this property over the objects of the collection on the path
  /// (`$0.dogs.age.min > 2`).
  public var min: Query { Query(node: collectionAggregate("@min")) }
  /// The largest value of this property over the objects of the collection on the path.
  public var max: Query { Query(node: collectionAggregate("@max")) }
  /// The average of this property over the objects of the collection on the path.
  public var avg: Query { Query(node: collectionAggregate("@avg")) }
  /// The sum of this property over the objects of the collection on the path.
  public var sum: Query { Query(node: collectionAggregate("@sum")) }
}

extension Query where T: Comparable {
  /// At least the range's lower bound and below its upper bound.
  public func contains(_ range: Range<T>) -> Query<Bool> { halfOpen(range.lowerBound, range.upperBound) }
  /// Within the range, bounds included (`BETWEEN`).
  public func contains(_ range: ClosedRange<T>) -> Query<Bool> { between(range.lowerBound, range.upperBound) }
}

extension Query where T: OptionalProtocol, T.Wrapped: Comparable {
  /// At least the range's lower bound and below its upper bound (never when nil).
  public func contains(_ range: Range<T.Wrapped>) -> Query<Bool> { halfOpen(range.lowerBound, range.upperBound) }
  /// Within the range, bounds included (never when nil).
  public func contains(_ range: ClosedRange<T.Wrapped>) -> Query<Bool> {
    between(range.lowerBound, range.upperBound)
  }
}

// MARK: Logic

extension Query where T == Bool {
  /// The condition does not hold.
  public static prefix func ! (query: Query) -> Query<Bool> { Query(node: .not(query.node)) }
  /// Both conditions hold.
  public static func && (lhs: Query, rhs: Query) -> Query<Bool> {
    Query(node: .comparison(.and, lhs.node, rhs.node, []))
  }
  /// Either condition holds.
  public static func || (lhs: Query, rhs: Query) -> Query<Bool> {
    Query(node: .comparison(.or, lhs.node, rhs.node, []))
  }
  /// The number of elements of the collection in the condition that match it: a subquery
  /// (`($0.dogs.age > 5 && $0.dogs.name == "Rex").count >= 1`).
  public var count: Query<Int> { Query<Int>(node: .subqueryCount(node)) }
}

// MARK: Strings and data

extension Query where T: _HasPersistedType, T.PersistedType: _QueryString {
  /// Matches a pattern where `?` stands for one character and `*` for any number.
  public func like(_ value: T, caseInsensitive: Bool = false) -> Query<Bool> {
    compare(.like, value, options: caseInsensitive ? .caseInsensitive : [])
  }
  /// Matches the pattern held by another property.
  public func like<U>(_ column: Query<U>, caseInsensitive: Bool = false) -> Query<Bool> {
    compare(.like, column, options: caseInsensitive ? .caseInsensitive : [])
  }
}

extension Query where T: _HasPersistedType, T.PersistedType: _QueryBinary {
  /// Contains `value`.
  public func contains(_ value: T, options: StringOptions = []) -> Query<Bool> {
    compare(.contains, value, options: options)
  }
  /// Contains the value of another property.
  public func contains<U>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool>
  where U: _Persistable, U.PersistedType: _QueryBinary {
    compare(.contains, column, options: options)
  }
  /// Begins with `value`.
  public func starts(with value: T, options: StringOptions = []) -> Query<Bool> {
    compare(.beginsWith, value, options: options)
  }
  /// Begins with the value of another property.
  public func starts<U>(with column: Query<U>, options: StringOptions = []) -> Query<Bool> {
    compare(.beginsWith, column, options: options)
  }
  /// Ends with `value`.
  public func ends(with value: T, options: StringOptions = []) -> Query<Bool> {
    compare(.endsWith, value, options: options)
  }
  /// Ends with the value of another property.
  public func ends<U>(with column: Query<U>, options: StringOptions = []) -> Query<Bool> {
    compare(.endsWith, column, options: options)
  }
  /// Equal to `value` with options.
  public func equals(_ value: T, options: StringOptions = []) -> Query<Bool> {
    compare(.equal, value, options: options)
  }
  /// Equal to another property with options.
  public func equals<U>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
    compare(.equal, column, options: options)
  }
  /// Not equal to `value` with options.
  public func notEquals(_ value: T, options: StringOptions = []) -> Query<Bool> {
    compare(.notEqual, value, options: options)
  }
  /// Not equal to another property with options.
  public func notEquals<U>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
    compare(.notEqual, column, options: options)
  }
  /// Sorts after `rhs`.
  public static func > (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greaterThan, rhs) }
  /// Sorts after another property.
  public static func > (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.greaterThan, rhs) }
  /// Sorts after or equals `rhs`.
  public static func >= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greaterThanOrEqual, rhs) }
  /// Sorts after or equals another property.
  public static func >= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.greaterThanOrEqual, rhs) }
  /// Sorts before `rhs`.
  public static func < (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.lessThan, rhs) }
  /// Sorts before another property.
  public static func < (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.lessThan, rhs) }
  /// Sorts before or equals `rhs`.
  public static func <= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.lessThanOrEqual, rhs) }
  /// Sorts before or equals another property.
  public static func <= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.lessThanOrEqual, rhs) }
}

// MARK: Collections

extension Query where T: RealmCollection {
  /// A property of the collection's objects: comparisons match when any object matches.
  public subscript<V>(dynamicMember keyPath: KeyPath<T.Element, V>) -> Query<V> where T.Element: ObjectBase {
    Query<V>(node: appending(_KeyPathProbe.names(of: keyPath), collection: false))
  }
  /// The number of elements.
  public var count: Query<Int> { Query<Int>(node: keyPathErasingAny(appending: "@count")) }
  /// The collection contains `value`.
  public func contains(_ value: T.Element) -> Query<Bool> {
    Query<Bool>(node: .comparison(.in, .constant(value), keyPathErasingAny(), []))
  }
  /// The collection contains any of `collection`'s values.
  public func containsAny<U: Sequence>(in collection: U) -> Query<Bool> where U.Element == T.Element {
    compare(.in, Array(collection))
  }
  /// Any element equals `rhs`.
  public static func == (lhs: Query<T>, rhs: T.Element) -> Query<Bool> { lhs.compare(.equal, rhs) }
  /// Any element differs from `rhs`.
  public static func != (lhs: Query<T>, rhs: T.Element) -> Query<Bool> { lhs.compare(.notEqual, rhs) }
}

extension Query where T: RealmCollection, T.Element: Comparable {
  /// Every element is at least the range's lower bound and below its upper bound.
  public func contains(_ range: Range<T.Element>) -> Query<Bool> {
    allWithin(range.lowerBound, range.upperBound, closed: false)
  }
  /// Every element is within the range, bounds included.
  public func contains(_ range: ClosedRange<T.Element>) -> Query<Bool> {
    allWithin(range.lowerBound, range.upperBound, closed: true)
  }
}

extension Query where T: RealmCollection, T.Element: OptionalProtocol, T.Element.Wrapped: Comparable {
  /// Every element is at least the range's lower bound and below its upper bound.
  public func contains(_ range: Range<T.Element.Wrapped>) -> Query<Bool> {
    allWithin(range.lowerBound, range.upperBound, closed: false)
  }
  /// Every element is within the range, bounds included.
  public func contains(_ range: ClosedRange<T.Element.Wrapped>) -> Query<Bool> {
    allWithin(range.lowerBound, range.upperBound, closed: true)
  }
}

extension Query where T: RealmCollection, T.Element.PersistedType: _QueryNumeric {
  /// Any element is greater than `rhs`.
  public static func > (lhs: Query<T>, rhs: T.Element) -> Query<Bool> { lhs.compare(.greaterThan, rhs) }
  /// Any element is greater than or equal to `rhs`.
  public static func >= (lhs: Query<T>, rhs: T.Element) -> Query<Bool> { lhs.compare(.greaterThanOrEqual, rhs) }
  /// Any element is less than `rhs`.
  public static func < (lhs: Query<T>, rhs: T.Element) -> Query<Bool> { lhs.compare(.lessThan, rhs) }
  /// Any element is less than or equal to `rhs`.
  public static func <= (lhs: Query<T>, rhs: T.Element) -> Query<Bool> { lhs.compare(.lessThanOrEqual, rhs) }
  /// The smallest element.
  public var min: Query<T.Element> { Query<T.Element>(node: keyPathErasingAny(appending: "@min")) }
  /// The largest element.
  public var max: Query<T.Element> { Query<T.Element>(node: keyPathErasingAny(appending: "@max")) }
  /// The average of the elements.
  public var avg: Query<T.Element> { Query<T.Element>(node: keyPathErasingAny(appending: "@avg")) }
  /// The sum of the elements.
  public var sum: Query<T.Element> { Query<T.Element>(node: keyPathErasingAny(appending: "@sum")) }
}

// MARK: Maps

extension Query where T: RealmKeyedCollection {
  /// The map contains any of `collection`'s values.
  public func containsAny<U: Sequence>(in collection: U) -> Query<Bool> where U.Element == T.Value {
    compare(.in, Array(collection))
  }
  /// The map contains `value`.
  public func contains(_ value: T.Value) -> Query<Bool> {
    Query<Bool>(node: .comparison(.in, .constant(value), keyPathErasingAny(), []))
  }
  /// The map's values: comparisons match when any value matches.
  public var values: Query<T.Value> { Query<T.Value>(node: appending(["@allValues"], collection: false)) }
  /// The value for `member`.
  public subscript(member: T.Key) -> Query<T.Value> {
    Query<T.Value>(node: .mapSubscript(keyPathErasingAny(), key: member._rlmKey))
  }
  /// The number of entries.
  public var count: Query<Int> { Query<Int>(node: keyPathErasingAny(appending: "@count")) }
}

extension Query where T: RealmKeyedCollection, T.Key == String {
  /// The map's keys: comparisons match when any key matches.
  public var keys: Query<String> { Query<String>(node: appending(["@allKeys"], collection: false)) }
}

extension Query where T: RealmKeyedCollection, T.Value: Comparable {
  /// Every value is at least the range's lower bound and below its upper bound.
  public func contains(_ range: Range<T.Value>) -> Query<Bool> {
    allWithin(range.lowerBound, range.upperBound, closed: false)
  }
  /// Every value is within the range, bounds included.
  public func contains(_ range: ClosedRange<T.Value>) -> Query<Bool> {
    allWithin(range.lowerBound, range.upperBound, closed: true)
  }
}

extension Query where T: RealmKeyedCollection, T.Value: OptionalProtocol, T.Value.Wrapped: Comparable {
  /// Every value is at least the range's lower bound and below its upper bound.
  public func contains(_ range: Range<T.Value.Wrapped>) -> Query<Bool> {
    allWithin(range.lowerBound, range.upperBound, closed: false)
  }
  /// Every value is within the range, bounds included.
  public func contains(_ range: ClosedRange<T.Value.Wrapped>) -> Query<Bool> {
    allWithin(range.lowerBound, range.upperBound, closed: true)
  }
}

extension Query where T: RealmKeyedCollection, T.Value.PersistedType: _QueryNumeric {
  /// The smallest value.
  public var min: Query<T.Value> { Query<T.Value>(node: keyPathErasingAny(appending: "@min")) }
  /// The largest value.
  public var max: Query<T.Value> { Query<T.Value>(node: keyPathErasingAny(appending: "@max")) }
  /// The average of the values.
  public var avg: Query<T.Value> { Query<T.Value>(node: keyPathErasingAny(appending: "@avg")) }
  /// The sum of the values.
  public var sum: Query<T.Value> { Query<T.Value>(node: keyPathErasingAny(appending: "@sum")) }
}

// MARK: Mixed

extension Query where T == AnyRealmValue {
  /// The element at `position` when the mixed value is a list (nested lists as deep as
  /// needed: `$0.anyCol[0][1] == .int(99)`); no object matches where there is none.
  public subscript(position: Int) -> Query<AnyRealmValue> {
    Query<AnyRealmValue>(node: mixedSubscript(appending: .index(position)))
  }
  /// The value for `key` when the mixed value is a dictionary.
  public subscript(key: String) -> Query<AnyRealmValue> {
    Query<AnyRealmValue>(node: mixedSubscript(appending: .key(key)))
  }
  /// Every element of a mixed list, or every value of a mixed dictionary: a comparison
  /// matches when any of them does (`$0.anyCol.any == .string("john")`).
  public var any: Query<AnyRealmValue> {
    Query<AnyRealmValue>(node: mixedSubscript(appending: .all))
  }

  private func mixedSubscript(appending step: MixedSubscript) -> QueryExpressionNode {
    if case .mixedSubscripts(let keyPath, let steps) = node { return .mixedSubscripts(keyPath, steps + [step]) }
    if case .mapSubscript(let keyPath, let key) = node { return .mixedSubscripts(keyPath, [.key(key), step]) }
    return .mixedSubscripts(keyPathErasingAny(), [step])
  }
}

/// One subscript into a mixed value holding a collection.
enum MixedSubscript {
  case index(Int)
  case key(String)
  /// Every element or value.
  case all
}

// MARK: Enums and mapped types

extension Query where T: PersistableEnum, T.RawValue: _RealmSchemaDiscoverable {
  /// The enum's raw value: the stored value, to compare as such (`$0.mood.rawValue.starts(with: "s")`).
  public var rawValue: Query<T.RawValue> { Query<T.RawValue>(node: node) }
}

extension Query where T: OptionalProtocol, T.Wrapped: PersistableEnum, T.Wrapped.RawValue: _RealmSchemaDiscoverable {
  /// The optional enum's raw value: the stored value, nil when the enum is nil.
  public var rawValue: Query<T.Wrapped.RawValue?> { Query<T.Wrapped.RawValue?>(node: node) }
}

extension Query where T: RealmCollection, T.Element: PersistableEnum, T.Element.RawValue: RealmCollectionValue {
  /// The raw values of a collection of enums.
  public var rawValue: Query<AnyRealmCollection<T.Element.RawValue>> {
    Query<AnyRealmCollection<T.Element.RawValue>>(node: node)
  }
}

extension Query where T: RealmKeyedCollection, T.Value: PersistableEnum, T.Value.RawValue: RealmCollectionValue {
  /// The raw values of a map of enums.
  public var rawValue: Query<Map<T.Key, T.Value.RawValue>> { Query<Map<T.Key, T.Value.RawValue>>(node: node) }
}

extension Query
where
  T: RealmCollection, T.Element: OptionalProtocol, T.Element.Wrapped: PersistableEnum,
  T.Element.Wrapped.RawValue: _RealmCollectionValueInsideOptional
{
  /// The raw values of a collection of optional enums.
  public var rawValue: Query<AnyRealmCollection<T.Element.Wrapped.RawValue?>> {
    Query<AnyRealmCollection<T.Element.Wrapped.RawValue?>>(node: node)
  }
}

extension Query
where
  T: RealmKeyedCollection, T.Value: OptionalProtocol, T.Value.Wrapped: PersistableEnum,
  T.Value.Wrapped.RawValue: _RealmCollectionValueInsideOptional
{
  /// The raw values of a map of optional enums.
  public var rawValue: Query<Map<T.Key, T.Value.Wrapped.RawValue?>> {
    Query<Map<T.Key, T.Value.Wrapped.RawValue?>>(node: node)
  }
}

extension Query where T: _HasPersistedType {
  /// The value as stored (a `CustomPersistable`'s persisted value), to query with the stored
  /// type's operations.
  public var persistableValue: Query<T.PersistedType> { Query<T.PersistedType>(node: node) }
}

extension Query where T: RealmCollection {
  /// The stored values of a collection of mapped types.
  public var persistableValue: Query<AnyRealmCollection<T.Element.PersistedType>> {
    Query<AnyRealmCollection<T.Element.PersistedType>>(node: node)
  }
}

extension Query where T: RealmKeyedCollection {
  /// The stored values of a map of mapped types.
  public var persistableValue: Query<Map<T.Key, T.Value.PersistedType>> {
    Query<Map<T.Key, T.Value.PersistedType>>(node: node)
  }
}

// MARK: Type tags

/// Optionals, for type-safe queries through optional links (RealmSwift's `OptionalProtocol`).
public protocol OptionalProtocol {
  /// The wrapped type.
  associatedtype Wrapped
}
extension Optional: OptionalProtocol {}

/// Types compared as numbers in type-safe queries: integers, floating point, `Decimal128`,
/// `Date` and `AnyRealmValue` (RealmSwift's `_QueryNumeric`).
public protocol _QueryNumeric: _RealmSchemaDiscoverable {}
extension Int: _QueryNumeric {}
extension Int8: _QueryNumeric {}
extension Int16: _QueryNumeric {}
extension Int32: _QueryNumeric {}
extension Int64: _QueryNumeric {}
extension Float: _QueryNumeric {}
extension Double: _QueryNumeric {}
extension Decimal128: _QueryNumeric {}
extension Date: _QueryNumeric {}
extension AnyRealmValue: _QueryNumeric {}
extension Optional: _QueryNumeric where Wrapped: _Persistable, Wrapped.PersistedType: _QueryNumeric {}

/// Types with string operations in type-safe queries (RealmSwift's `_QueryString`).
public protocol _QueryString: _QueryBinary {}
extension String: _QueryString {}
extension Optional: _QueryString where Wrapped: _Persistable, Wrapped.PersistedType: _QueryString {}

/// Types with binary operations (`contains`, `starts(with:)`, …) in type-safe queries
/// (RealmSwift's `_QueryBinary`).
public protocol _QueryBinary {}
extension Data: _QueryBinary {}
extension Optional: _QueryBinary where Wrapped: _Persistable, Wrapped.PersistedType: _QueryBinary {}

// MARK: Strings options

/// Options of string comparisons in type-safe queries (RealmSwift's `StringOptions`).
public struct StringOptions: OptionSet, Sendable {
  /// The option bits: 1 for `caseInsensitive`, 2 for `diacriticInsensitive`.
  public let rawValue: Int8
  /// The options whose bits are set in `rawValue`.
  public init(rawValue: Int8) { self.rawValue = rawValue }
  /// Ignore case ("[c]").
  public static let caseInsensitive = StringOptions(rawValue: 1)
  /// Ignore diacritics ("[d]").
  public static let diacriticInsensitive = StringOptions(rawValue: 2)

  var modifier: String {
    switch (contains(.caseInsensitive), contains(.diacriticInsensitive)) {
    case (true, true): return "[cd]"
    case (true, false): return "[c]"
    case (false, true): return "[d]"
    case (false, false): return ""
    }
  }
}

// MARK: The tree

/// What a key path of a query is.
struct QueryKeyPathOptions: OptionSet {
  let rawValue: UInt8
  /// The path goes through a collection.
  static let isCollection = QueryKeyPathOptions(rawValue: 1)
  /// Comparisons on it match when any element matches (`ANY`).
  static let requiresAny = QueryKeyPathOptions(rawValue: 2)
}

/// The operators of a query.
enum TypedQueryOperator: String {
  case and = "&&", or = "||"
  case equal = "==", notEqual = "!="
  case lessThan = "<", lessThanOrEqual = "<=", greaterThan = ">", greaterThanOrEqual = ">="
  case `in` = "IN", contains = "CONTAINS", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", like = "LIKE"
}

/// A node of a type-safe query.
indirect enum QueryExpressionNode {
  /// A key path; `collectionEnd` is the number of elements up to and including the first
  /// collection, where aggregates over its objects go.
  case keyPath([String], QueryKeyPathOptions, collectionEnd: Int?)
  case constant(Any?)
  case not(QueryExpressionNode)
  case comparison(TypedQueryOperator, QueryExpressionNode, QueryExpressionNode, StringOptions)
  case between(QueryExpressionNode, QueryExpressionNode, QueryExpressionNode)
  case subqueryCount(QueryExpressionNode)
  case mapSubscript(QueryExpressionNode, key: String)
  /// Subscripts into a mixed value's nested collections.
  case mixedSubscripts(QueryExpressionNode, [MixedSubscript])
}

/// Turns a query tree into a predicate and its arguments.
struct QueryPredicateBuilder {
  private var text = ""
  private var arguments: [Any] = []
  private var subqueries: Int

  private init(subqueries: Int) { self.subqueries = subqueries }

  static func build(_ node: QueryExpressionNode) -> (String, [Any]) {
    var builder = QueryPredicateBuilder(subqueries: 0)
    builder.condition(node)
    return (builder.text, builder.arguments)
  }

  /// A node where a condition is expected: a bare key path is a Boolean property.
  private mutating func condition(_ node: QueryExpressionNode) {
    switch node {
    case .keyPath(let path, _, _):
      text += path.joined(separator: ".") + " == true"
    case .not(.keyPath(let path, _, _)):
      text += path.joined(separator: ".") + " == false"
    default:
      expression(node)
    }
  }

  private mutating func expression(_ node: QueryExpressionNode) {
    switch node {
    case .keyPath(let path, let options, _):
      if options.contains(.requiresAny) { text += "ANY " }
      text += path.joined(separator: ".")
    case .constant(let value):
      text += "%@"
      arguments.append(value ?? NSNull())
    case .not(let child):
      text += "NOT "
      expression(child)
    case .comparison(let op, let lhs, let rhs, let options):
      if op == .and || op == .or {
        text += "("
        condition(lhs)
        text += " \(op.rawValue) "
        condition(rhs)
        text += ")"
        return
      }
      if case .keyPath(_, let l, _) = lhs, case .keyPath(_, let r, _) = rhs, l.contains(.isCollection),
        r.contains(.isCollection)
      {
        fatalError("Comparing two collection columns is not permitted.")
      }
      text += "("
      expression(lhs)
      text += " \(op.rawValue)\(options.modifier) "
      expression(rhs)
      text += ")"
    case .between(let value, let lower, let upper):
      text += "("
      expression(value)
      text += " BETWEEN {"
      expression(lower)
      text += ", "
      expression(upper)
      text += "})"
    case .subqueryCount(let inner):
      subqueries += 1
      let variable = "$col\(subqueries)"
      var collection: String?
      let rewritten = Self.subquery(inner, variable: variable, collection: &collection)
      guard let collection else { fatalError("Subqueries must contain a keypath starting with a collection.") }
      text += "SUBQUERY(\(collection), \(variable), "
      expression(rewritten)
      text += ").@count"
    case .mapSubscript(let keyPath, let key):
      expression(keyPath)
      text += "[%@]"
      arguments.append(key)
    case .mixedSubscripts(let keyPath, let steps):
      expression(keyPath)
      for step in steps {
        switch step {
        case .index(let index):
          text += "[%@]"
          arguments.append(index)
        case .key(let key):
          text += "[%@]"
          arguments.append(key)
        case .all:
          text += "[%K]"
          arguments.append("#any")
        }
      }
    }
  }

  /// The condition of a subquery, its key paths through the collection starting from the
  /// subquery's variable instead.
  private static func subquery(
    _ node: QueryExpressionNode, variable: String, collection: inout String?
  ) -> QueryExpressionNode {
    switch node {
    case .keyPath(let path, let options, let end):
      guard options.contains(.isCollection), let end, end > 0 else { return node }
      collection = path[..<end].joined(separator: ".")
      return .keyPath([variable] + path[end...], [.isCollection], collectionEnd: 1)
    case .not(let child):
      return .not(subquery(child, variable: variable, collection: &collection))
    case .comparison(let op, let lhs, let rhs, let options):
      return .comparison(
        op, subquery(lhs, variable: variable, collection: &collection),
        subquery(rhs, variable: variable, collection: &collection), options)
    case .between(let value, let lower, let upper):
      return .between(
        subquery(value, variable: variable, collection: &collection),
        subquery(lower, variable: variable, collection: &collection),
        subquery(upper, variable: variable, collection: &collection))
    case .constant, .subqueryCount:
      return node
    case .mapSubscript:
      fatalError("Subqueries do not support map subscripts.")
    case .mixedSubscripts:
      fatalError("Subqueries do not support AnyRealmValue subscripts.")
    }
  }
}
