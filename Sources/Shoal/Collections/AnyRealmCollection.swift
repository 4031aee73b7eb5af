import Foundation

/// What every Realm collection offers: `Results`, `List`, `MutableSet`, `LinkingObjects` and
/// `AnyRealmCollection` (RealmSwift's `RealmCollection`).
public protocol RealmCollection<Element>: RandomAccessCollection, CustomStringConvertible
where Index == Int, Element: RealmCollectionValue {
  /// The Realm of the collection, or nil when unmanaged.
  var realm: Realm? { get }
  /// Whether the collection can no longer be accessed.
  var isInvalidated: Bool { get }
  /// The position of `object`, or nil.
  func index(of object: Element) -> Int?
  /// Values of `key` of every element.
  func value(forKey key: String) -> [Any]
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
  func min<T: MinMaxType>(ofProperty property: String) -> T?
  /// The largest value of a property.
  func max<T: MinMaxType>(ofProperty property: String) -> T?
  /// The sum of a property.
  func sum<T: AddableType>(ofProperty property: String) -> T
  /// The average of a property.
  func average<T: AddableType>(ofProperty property: String) -> T?
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

  public var realm: Realm? { base.realm }
  public var isInvalidated: Bool { base.isInvalidated }
  public var startIndex: Int { 0 }
  public var endIndex: Int { base.count }
  public var count: Int { base.count }
  public func index(after i: Int) -> Int { i + 1 }
  public func index(before i: Int) -> Int { i - 1 }
  /// The element at `position`.
  public subscript(position: Int) -> Element { base[base.startIndex + position] }
  public var description: String { "AnyRealmCollection(\(base.description))" }
  public func index(of object: Element) -> Int? { base.index(of: object) }
  public func value(forKey key: String) -> [Any] { base.value(forKey: key) }
  public func setValue(_ value: Any?, forKey key: String) { base.setValue(value, forKey: key) }
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
    results().filter(predicateFormat, argumentList: args)
  }
  public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
    results().where(isIncluded)
  }
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
    base.sorted(byKeyPath: keyPath, ascending: ascending)
  }
  public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
    base.sorted(by: Array(sortDescriptors))
  }
  public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
    base.distinct(by: Array(keyPaths))
  }
  public func min<T: MinMaxType>(ofProperty property: String) -> T? { base.min(ofProperty: property) }
  public func max<T: MinMaxType>(ofProperty property: String) -> T? { base.max(ofProperty: property) }
  public func sum<T: AddableType>(ofProperty property: String) -> T { base.sum(ofProperty: property) }
  public func average<T: AddableType>(ofProperty property: String) -> T? { base.average(ofProperty: property) }

  private func results() -> Results<Element> {
    if let results = base as? Results<Element> { return results }
    return base.sorted(by: [SortDescriptor]())
  }
}

extension RealmCollection where Element: MinMaxType {
  /// The smallest element (collections of values).
  public func min() -> Element? { min(ofProperty: "self") }
  /// The largest element (collections of values).
  public func max() -> Element? { max(ofProperty: "self") }
}

extension RealmCollection where Element: AddableType {
  /// The sum of the elements (collections of values).
  public func sum() -> Element { sum(ofProperty: "self") }
  /// The average of the elements (collections of values).
  public func average<T: AddableType>() -> T? { average(ofProperty: "self") }
}

extension RealmCollection where Element: SortableType {
  /// The values sorted (collections of values).
  public func sorted(ascending: Bool = true) -> Results<Element> { sorted(byKeyPath: "self", ascending: ascending) }
}

extension RealmCollection {
  /// The elements at `indexes`.
  public func objects(at indexes: IndexSet) -> [Element] { indexes.map { self[$0] } }

  /// The position of the first element matching a Realm Query Language predicate, or nil.
  public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
    // In the collection's own order: a `Results` of it, unsorted.
    guard let match = sorted(by: [SortDescriptor]()).filter(predicateFormat, argumentList: args).first else {
      return nil
    }
    return index(of: match)
  }
}

extension RealmCollection where Element: ObjectBase {
  /// The position of the first element matching a type-safe query, or nil.
  public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
    guard let match = `where`(isIncluded).first else { return nil }
    return index(of: match)
  }

  /// The smallest value of the property at `keyPath`, or nil when there are no elements.
  public func min<T: MinMaxType>(of keyPath: KeyPath<Element, T>) -> T? {
    min(ofProperty: _KeyPathProbe.name(of: keyPath))
  }

  /// The largest value of the property at `keyPath`, or nil when there are no elements.
  public func max<T: MinMaxType>(of keyPath: KeyPath<Element, T>) -> T? {
    max(ofProperty: _KeyPathProbe.name(of: keyPath))
  }

  /// The sum of the property at `keyPath` (0 when there are no elements).
  public func sum<T: AddableType>(of keyPath: KeyPath<Element, T>) -> T {
    sum(ofProperty: _KeyPathProbe.name(of: keyPath))
  }

  /// The average of the property at `keyPath`, or nil when there are no elements.
  public func average<T: AddableType>(of keyPath: KeyPath<Element, T>) -> T? {
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

extension RealmCollection where Element: SortableType {
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

extension _ResultsBacked {
  /// The elements matching a Realm Query Language predicate.
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
    _results.filter(predicateFormat, argumentList: args)
  }
  /// The elements matching a type-safe query.
  public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
    _results.where(isIncluded)
  }
  /// The elements sorted by a property (or the values themselves, with "self").
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
    _results.sorted(byKeyPath: keyPath, ascending: ascending)
  }
  /// The elements sorted by several properties.
  public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
    _results.sorted(by: sortDescriptors)
  }
  /// The elements with distinct values of the given key paths.
  public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
    _results.distinct(by: keyPaths)
  }
  /// The minimum of a property over the elements.
  public func min<T: MinMaxType>(ofProperty property: String) -> T? { _results.min(ofProperty: property) }
  /// The maximum of a property over the elements.
  public func max<T: MinMaxType>(ofProperty property: String) -> T? { _results.max(ofProperty: property) }
  /// The sum of a property over the elements.
  public func sum<T: AddableType>(ofProperty property: String) -> T { _results.sum(ofProperty: property) }
  /// The average of a property over the elements.
  public func average<T: AddableType>(ofProperty property: String) -> T? { _results.average(ofProperty: property) }
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
