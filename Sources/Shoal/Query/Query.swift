import Foundation

/// A type-safe query expression (RealmSwift's `Query`), built in the closure given to
/// `where`:
///
/// ```swift
/// realm.objects(Person.self).where { $0.age > 21 && $0.name.starts(with: "A") }
/// realm.objects(Person.self).where { $0.dogs.name == "Rex" || $0.tags.contains("vip") }
/// ```
///
/// It builds the same Realm Query Language predicate `filter(_:_:)` takes, with the values as
/// arguments, so both forms behave identically.
@dynamicMemberLookup
public struct Query<T> {
  /// The key path (for value expressions) or the predicate (for `Query<Bool>` conditions).
  let expression: String
  let arguments: [Any]
  /// Whether `expression` is a finished predicate rather than a key path.
  let isPredicate: Bool
  /// For a key path through a to-many property: the part up to and including it.
  let collectionPrefix: String?

  init(expression: String = "", arguments: [Any] = [], isPredicate: Bool = false, collectionPrefix: String? = nil) {
    self.expression = expression
    self.arguments = arguments
    self.isPredicate = isPredicate
    self.collectionPrefix = collectionPrefix
  }

  private func appending<V>(_ names: [String], collection: Bool = false) -> Query<V> {
    let joined = names.joined(separator: ".")
    let path = expression.isEmpty ? joined : expression + "." + joined
    return Query<V>(expression: path, collectionPrefix: collection ? path : collectionPrefix)
  }

  /// The predicate and arguments of a finished condition.
  var predicate: String { isPredicate ? expression : expression + " == true" }

  fileprivate func compare(_ op: String, _ value: Any?) -> Query<Bool> {
    Query<Bool>(expression: "\(expression) \(op) %@", arguments: arguments + [value as Any], isPredicate: true)
  }
}

// MARK: Key paths

extension Query where T: ObjectBase {
  /// A property of the object.
  public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> {
    appending(_KeyPathProbe.names(of: keyPath), collection: isToMany(V.self))
  }
}

extension Query where T: OptionalProtocol, T.Wrapped: ObjectBase {
  /// A property of the linked object.
  public subscript<V>(dynamicMember keyPath: KeyPath<T.Wrapped, V>) -> Query<V> {
    appending(_KeyPathProbe.names(of: keyPath), collection: isToMany(V.self))
  }
}

extension Query where T: _QueryCollection, T.Element: ObjectBase {
  /// A property of the collection's objects: comparisons match when any object matches.
  public subscript<V>(dynamicMember keyPath: KeyPath<T.Element, V>) -> Query<V> {
    appending(_KeyPathProbe.names(of: keyPath))
  }
}

extension Query where T: PersistableEnum {
  /// The enum's raw value: the stored value, to compare as such (`$0.mood.rawValue.starts(with: "s")`).
  public var rawValue: Query<T.RawValue> {
    Query<T.RawValue>(expression: expression, collectionPrefix: collectionPrefix)
  }
}

extension Query where T: OptionalProtocol, T.Wrapped: PersistableEnum {
  /// The optional enum's raw value: the stored value, nil when the enum is nil.
  public var rawValue: Query<T.Wrapped.RawValue?> {
    Query<T.Wrapped.RawValue?>(expression: expression, collectionPrefix: collectionPrefix)
  }
}

private func isToMany(_ type: Any.Type) -> Bool { type is any _QueryCollection.Type }

/// Optionals, for type-safe queries through optional links. Not for direct use.
public protocol OptionalProtocol {
  associatedtype Wrapped
}
extension Optional: OptionalProtocol {}

/// Collections queries can look into. Not for direct use.
public protocol _QueryCollection {
  associatedtype Element
}
extension List: _QueryCollection {}
extension MutableSet: _QueryCollection {}
extension LinkingObjects: _QueryCollection {}
extension Results: _QueryCollection {}

// MARK: Comparisons

extension Query where T: _Persistable {
  /// Equal to `rhs`.
  public static func == (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare("==", rhs) }
  /// Not equal to `rhs`.
  public static func != (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare("!=", rhs) }
  /// Equal to another property.
  public static func == (lhs: Query, rhs: Query) -> Query<Bool> {
    Query<Bool>(expression: "\(lhs.expression) == \(rhs.expression)", isPredicate: true)
  }
  /// Not equal to another property.
  public static func != (lhs: Query, rhs: Query) -> Query<Bool> {
    Query<Bool>(expression: "\(lhs.expression) != \(rhs.expression)", isPredicate: true)
  }
  /// One of `values`.
  public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
    compare("IN", Array(values))
  }
}

extension Query where T: MinMaxType {
  public static func > (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(">", rhs) }
  public static func >= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(">=", rhs) }
  public static func < (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare("<", rhs) }
  public static func <= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare("<=", rhs) }
  public static func > (lhs: Query, rhs: Query) -> Query<Bool> {
    Query<Bool>(expression: "\(lhs.expression) > \(rhs.expression)", isPredicate: true)
  }
  public static func < (lhs: Query, rhs: Query) -> Query<Bool> {
    Query<Bool>(expression: "\(lhs.expression) < \(rhs.expression)", isPredicate: true)
  }
  public static func >= (lhs: Query, rhs: Query) -> Query<Bool> {
    Query<Bool>(expression: "\(lhs.expression) >= \(rhs.expression)", isPredicate: true)
  }
  public static func <= (lhs: Query, rhs: Query) -> Query<Bool> {
    Query<Bool>(expression: "\(lhs.expression) <= \(rhs.expression)", isPredicate: true)
  }
  /// Within a closed range (`BETWEEN`).
  public func contains(_ range: ClosedRange<T>) -> Query<Bool> where T: Comparable {
    Query<Bool>(
      expression: "\(expression) BETWEEN {%@, %@}", arguments: arguments + [range.lowerBound, range.upperBound],
      isPredicate: true)
  }
  /// Within a half-open range.
  public func contains(_ range: Range<T>) -> Query<Bool> where T: Comparable {
    Query<Bool>(
      expression: "(\(expression) >= %@ AND \(expression) < %@)",
      arguments: arguments + [range.lowerBound, range.upperBound], isPredicate: true)
  }
}

// MARK: Strings

/// Options of string comparisons in type-safe queries (RealmSwift's `StringOptions`).
public struct StringOptions: OptionSet, Sendable {
  public let rawValue: Int8
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

extension Query where T == String {
  private func stringOp(_ op: String, _ value: String, _ options: StringOptions) -> Query<Bool> {
    Query<Bool>(
      expression: "\(expression) \(op)\(options.modifier) %@", arguments: arguments + [value], isPredicate: true)
  }
  /// Contains `value`.
  public func contains(_ value: String, options: StringOptions = []) -> Query<Bool> {
    stringOp("CONTAINS", value, options)
  }
  /// Begins with `value`.
  public func starts(with value: String, options: StringOptions = []) -> Query<Bool> {
    stringOp("BEGINSWITH", value, options)
  }
  /// Ends with `value`.
  public func ends(with value: String, options: StringOptions = []) -> Query<Bool> {
    stringOp("ENDSWITH", value, options)
  }
  /// Equal to `value` with options.
  public func equals(_ value: String, options: StringOptions = []) -> Query<Bool> { stringOp("==", value, options) }
  /// Not equal to `value` with options.
  public func notEquals(_ value: String, options: StringOptions = []) -> Query<Bool> { stringOp("!=", value, options) }
  /// Matches a pattern with `*` and `?` wildcards.
  public func like(_ value: String, caseInsensitive: Bool = false) -> Query<Bool> {
    stringOp("LIKE", value, caseInsensitive ? .caseInsensitive : [])
  }
}

extension Query where T == String? {
  /// Contains `value`.
  public func contains(_ value: String, options: StringOptions = []) -> Query<Bool> {
    Query<Bool>(
      expression: "\(expression) CONTAINS\(options.modifier) %@", arguments: arguments + [value], isPredicate: true)
  }
  /// Begins with `value`.
  public func starts(with value: String, options: StringOptions = []) -> Query<Bool> {
    Query<Bool>(
      expression: "\(expression) BEGINSWITH\(options.modifier) %@", arguments: arguments + [value], isPredicate: true
    )
  }
  /// Ends with `value`.
  public func ends(with value: String, options: StringOptions = []) -> Query<Bool> {
    Query<Bool>(
      expression: "\(expression) ENDSWITH\(options.modifier) %@", arguments: arguments + [value], isPredicate: true)
  }
  /// Equal to `value` with options.
  public func equals(_ value: String, options: StringOptions = []) -> Query<Bool> {
    Query<Bool>(expression: "\(expression) ==\(options.modifier) %@", arguments: arguments + [value], isPredicate: true)
  }
  /// Not equal to `value` with options.
  public func notEquals(_ value: String, options: StringOptions = []) -> Query<Bool> {
    Query<Bool>(expression: "\(expression) !=\(options.modifier) %@", arguments: arguments + [value], isPredicate: true)
  }
  /// Matches a pattern with `*` and `?` wildcards.
  public func like(_ value: String, caseInsensitive: Bool = false) -> Query<Bool> {
    Query<Bool>(
      expression: "\(expression) LIKE\(caseInsensitive ? "[c]" : "") %@", arguments: arguments + [value],
      isPredicate: true)
  }
}

// MARK: Collections

extension Query where T: _QueryCollection {
  /// The number of elements.
  public var count: Query<Int> { Query<Int>(expression: expression + ".@count", arguments: arguments) }
}

extension Query where T: _QueryCollection, T.Element: _Persistable {
  /// The collection contains `value`.
  public func contains(_ value: T.Element) -> Query<Bool> {
    Query<Bool>(expression: "%@ IN \(expression)", arguments: arguments + [value as Any], isPredicate: true)
  }
  /// The collection contains any of `values`.
  public func containsAny<S: Sequence>(in values: S) -> Query<Bool> where S.Element == T.Element {
    Query<Bool>(expression: "ANY \(expression) IN %@", arguments: arguments + [Array(values)], isPredicate: true)
  }
}

extension Query where T: _QueryCollection, T.Element: _Persistable {
  /// Any element equals `value` (RealmSwift compares a collection of values element-wise).
  public static func == (lhs: Query, rhs: T.Element) -> Query<Bool> { lhs.anyElement("==", rhs) }
  /// Any element differs from `value`.
  public static func != (lhs: Query, rhs: T.Element) -> Query<Bool> { lhs.anyElement("!=", rhs) }

  fileprivate func anyElement(_ op: String, _ value: T.Element) -> Query<Bool> {
    Query<Bool>(expression: "ANY \(expression) \(op) %@", arguments: arguments + [value as Any], isPredicate: true)
  }
}

extension Query where T: _QueryCollection, T.Element: _Persistable & MinMaxType {
  /// Any element is greater than `value`.
  public static func > (lhs: Query, rhs: T.Element) -> Query<Bool> { lhs.anyElement(">", rhs) }
  /// Any element is greater than or equal to `value`.
  public static func >= (lhs: Query, rhs: T.Element) -> Query<Bool> { lhs.anyElement(">=", rhs) }
  /// Any element is less than `value`.
  public static func < (lhs: Query, rhs: T.Element) -> Query<Bool> { lhs.anyElement("<", rhs) }
  /// Any element is less than or equal to `value`.
  public static func <= (lhs: Query, rhs: T.Element) -> Query<Bool> { lhs.anyElement("<=", rhs) }
}

extension Query where T: _QueryCollection, T.Element: AddableType {
  /// The average of the elements.
  public var avg: Query<T.Element> { Query<T.Element>(expression: expression + ".@avg", arguments: arguments) }
  /// The sum of the elements.
  public var sum: Query<T.Element> { Query<T.Element>(expression: expression + ".@sum", arguments: arguments) }
}

extension Query where T: _QueryCollection, T.Element: MinMaxType {
  /// The smallest element.
  public var min: Query<T.Element> { Query<T.Element>(expression: expression + ".@min", arguments: arguments) }
  /// The largest element.
  public var max: Query<T.Element> { Query<T.Element>(expression: expression + ".@max", arguments: arguments) }
}

extension Query where T: MinMaxType {
  /// The smallest value of this property over the objects of the collection on the path.
  public var min: Query<T> { aggregateOverPath("min") }
  /// The largest value of this property over the objects of the collection on the path.
  public var max: Query<T> { aggregateOverPath("max") }
}

extension Query {
  /// `collection.@name.property` for a property reached through a to-many relationship.
  fileprivate func aggregateOverPath(_ name: String) -> Query<T> {
    guard let prefix = collectionPrefix, expression.hasPrefix(prefix + ".") else {
      return Query<T>(expression: expression + ".@" + name, arguments: arguments)
    }
    let tail = expression.dropFirst(prefix.count + 1)
    return Query<T>(expression: "\(prefix).@\(name).\(tail)", arguments: arguments)
  }
}

extension Query where T: AddableType {
  /// The average of this property over the objects of the collection on the path.
  public var avg: Query<T> { aggregateOverPath("avg") }
  /// The sum of this property over the objects of the collection on the path.
  public var sum: Query<T> { aggregateOverPath("sum") }
}

extension Query where T: _MapQueryable {
  /// The map's keys.
  public var keys: Query<String> { Query<String>(expression: expression + ".@keys", arguments: arguments) }
  /// The map's values.
  public var values: Query<T.Value> { Query<T.Value>(expression: expression + ".@values", arguments: arguments) }
  /// The value for `key`.
  public subscript(_ key: String) -> Query<T.Value> {
    let escaped = key.replacingOccurrences(of: "'", with: "\\'")
    return Query<T.Value>(expression: "\(expression)['\(escaped)']", arguments: arguments)
  }
  /// The number of entries.
  public var count: Query<Int> { Query<Int>(expression: expression + ".@count", arguments: arguments) }
}

/// Maps, for type-safe queries. Not for direct use.
public protocol _MapQueryable {
  associatedtype Value
}
extension Map: _MapQueryable {}

// MARK: Logic

extension Query where T == Bool {
  /// Both conditions hold.
  public static func && (lhs: Query, rhs: Query) -> Query {
    Query(
      expression: "(\(lhs.predicate) AND \(rhs.predicate))", arguments: lhs.arguments + rhs.arguments, isPredicate: true
    )
  }
  /// Either condition holds.
  public static func || (lhs: Query, rhs: Query) -> Query {
    Query(
      expression: "(\(lhs.predicate) OR \(rhs.predicate))", arguments: lhs.arguments + rhs.arguments, isPredicate: true)
  }
  /// The condition does not hold.
  public static prefix func ! (query: Query) -> Query {
    Query(expression: "NOT (\(query.predicate))", arguments: query.arguments, isPredicate: true)
  }
}
