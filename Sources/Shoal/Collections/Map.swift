import Foundation

/// A key-value store of values or objects in a `@Persisted` property, keyed by `String`
/// (RealmSwift's `Map`). Keys may not contain `.` or start with `$`.
public final class Map<Key: _MapKey, Value: RealmCollectionValue>: CustomStringConvertible, RealmDescribedCollection {
  var unmanaged: [String: Value] = [:]
  /// For a key-path probe: the value of every key.
  var probeValue: Value?
  /// The owning object and property, for managed collections (set when an unmanaged one
  /// becomes managed with its object).
  private(set) var parent: ObjectBase?
  private(set) var propertyIndex: Int
  /// The target class of a dynamic collection (`Object.dynamicList(_:)` and the like), whose
  /// elements are `DynamicObject`s of it.
  let dynamicTable: TableInfo?

  /// Creates an empty, unmanaged map.
  public init() {
    parent = nil
    propertyIndex = 0
    dynamicTable = nil
  }

  init(parent: ObjectBase, index: Int, dynamicTable: TableInfo? = nil) {
    self.parent = parent
    self.propertyIndex = index
    self.dynamicTable = dynamicTable
  }

  private var stored: [RowValue.MapEntry] {
    guard let parent else { return [] }
    if case .map(let entries) = parent._storedValue(at: propertyIndex) { return entries }
    return []
  }

  private var context: _AccessContext { _AccessContext(parent?._core, dynamicTable: dynamicTable) }
  private func value(_ stored: RowValue) -> Value { Value._rlmFromStored(_StoredValue(stored), context) }

  private func update(_ body: (inout [RowValue.MapEntry]) -> Void) {
    guard let parent, let core = parent._core else { return }
    core.verifyCollectionWrite(owner: parent, objcName: "RLMDictionary")
    var entries = stored
    body(&entries)
    parent._setStoredValue(.map(entries), at: propertyIndex)
  }

  /// RealmSwift's rule on keys, checked wherever a key gets in: the subscript, `updateValue`,
  /// `init(value:)` and `create`, `Decodable`, and an unmanaged map assigned or added.
  static func check(_ key: String) {
    // Realm Core's texts.
    if key.hasPrefix("$") { fatalError("Dictionary::insert: key must not start with '$'") }
    if key.contains(".") { fatalError("Dictionary::insert: key must not contain '.'") }
  }

  /// The entries in key order, as Swift values.
  private var entries: [(key: Key, value: Value)] {
    if parent == nil {
      return unmanaged.sorted { $0.key < $1.key }.map { (Key._rlmFromKey($0.key), $0.value) }
    }
    return stored.map { (Key._rlmFromKey($0.key), value($0.value)) }
  }

  /// The Realm managing the map, or nil when unmanaged.
  public var realm: Realm? { parent?._core.map { Realm(core: $0) } }
  /// Whether the map can no longer be accessed.
  public var isInvalidated: Bool { parent?.isInvalidated ?? false }
  /// Every key, in key order.
  public var keys: [Key] { entries.map(\.key) }
  /// Every value, in key order.
  public var values: [Value] { entries.map(\.value) }
  /// The number of entries.
  public var count: Int { parent == nil ? unmanaged.count : stored.count }
  /// Whether the map has no entries.
  public var isEmpty: Bool { count == 0 }

  /// Sets the value for `key`, adding the entry if needed.
  public func updateValue(_ value: Value, forKey key: Key) {
    let name = key._rlmKey
    Self.check(name)
    if parent == nil {
      unmanaged[name] = value
      return
    }
    if let embedded = value as? EmbeddedObject, embedded._core != nil, embedded._table != nil {
      fatalError("Cannot add an existing managed embedded object to a Dictionary.")
    }
    let storedValue = value._rlmToStored(context).value
    update { entries in
      if let i = entries.firstIndex(where: { $0.key == name }) {
        entries[i].value = storedValue
      } else {
        let position = entries.firstIndex { $0.key > name } ?? entries.count
        entries.insert(RowValue.MapEntry(key: name, value: storedValue), at: position)
      }
    }
  }

  /// Merges key-value pairs, resolving duplicate keys with `combine(current, new)`.
  public func merge<S: Sequence>(_ sequence: S, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows
  where S.Element == (key: Key, value: Value) {
    for (key, value) in sequence {
      if let current = self[key] {
        updateValue(try combine(current, value), forKey: key)
      } else {
        updateValue(value, forKey: key)
      }
    }
  }

  /// Merges another map, resolving duplicate keys with `combine(current, new)`.
  public func merge(_ other: Map<Key, Value>, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
    try merge(other.entries.map { (key: $0.key, value: $0.value) }, uniquingKeysWith: combine)
  }

  /// Removes the entry for `key`.
  public func removeObject(for key: Key) {
    let name = key._rlmKey
    if parent == nil {
      unmanaged[name] = nil
      return
    }
    update { $0.removeAll { $0.key == name } }
  }

  /// Removes every entry.
  public func removeAll() {
    if parent == nil { unmanaged.removeAll() } else { update { $0.removeAll() } }
  }

  /// The value for `key`, or nil; setting nil removes the entry.
  public subscript(key: Key) -> Value? {
    get {
      let name = key._rlmKey
      if let probeValue { return probeValue }
      if parent == nil { return unmanaged[name] }
      return stored.first { $0.key == name }.map { value($0.value) }
    }
    set {
      if let newValue { updateValue(newValue, forKey: key) } else { removeObject(for: key) }
    }
  }

  /// The value for a key given as `AnyObject` (a string), or nil.
  public func object(forKey key: AnyObject) -> AnyObject? {
    guard let name = key as? String else { return nil }
    return self[Key._rlmFromKey(name)].map { (($0 as? AnyRealmValue)?.kvcValue ?? $0) as AnyObject }
  }

  /// The value for `key` as `AnyObject`, or nil.
  public func value(forKey key: String) -> AnyObject? { object(forKey: key as AnyObject) }

  /// The value for a key path (a key), or nil.
  public func value(forKeyPath keyPath: String) -> AnyObject? { value(forKey: keyPath) }

  /// Sets the value for `key` from `Any`; nil removes the entry.
  public func setValue(_ value: Any?, forKey key: String) {
    guard let value, !(value is NSNull) else {
      removeObject(for: Key._rlmFromKey(key))
      return
    }
    guard let converted = Value._rlmFromAny(value) else {
      fatalError("Invalid value '\(value)' of type '\(type(of: value))' for Map<\(Key.self), \(Value.self)>")
    }
    updateValue(converted, forKey: Key._rlmFromKey(key))
  }

  /// Whether any entry satisfies `predicate`.
  public func contains(where predicate: @escaping (_ key: Key, _ value: Value) -> Bool) -> Bool {
    entries.contains { predicate($0.key, $0.value) }
  }

  /// The values, sorted (RealmSwift: `sorted(byKeyPath: "self")`).
  public func sorted(ascending: Bool = true) -> Results<Value> {
    sorted(byKeyPath: "self", ascending: ascending)
  }

  /// The values sorted by a property of theirs (or "self").
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Value> {
    queryableResults().sorted(byKeyPath: keyPath, ascending: ascending)
  }

  /// The values sorted by several properties.
  public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Value> where S.Iterator.Element == SortDescriptor {
    queryableResults().sorted(by: sortDescriptors)
  }

  /// The values matching a Realm Query Language predicate.
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Value> {
    queryableResults().filter(predicateFormat, argumentList: args)
  }

  /// The values matching a type-safe query.
  public func `where`(_ isIncluded: (Query<Value>) -> Query<Bool>) -> Results<Value> {
    queryableResults().where(isIncluded)
  }

  /// The values as `Results` for a query or a sort: RealmSwift's failure for an unmanaged map.
  private func queryableResults() -> Results<Value> {
    if parent == nil { unmanagedCollectionFailure("RLMDictionary") }
    return results()
  }

  /// The minimum of a property over the values.
  public func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
    results().min(ofProperty: property)
  }
  /// The maximum of a property over the values.
  public func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
    results().max(ofProperty: property)
  }
  /// The sum of a property over the values. An empty map of mixed values sums to the integer
  /// zero, as Realm Core's dictionaries do (lists and sets sum mixed values as `Decimal128`).
  public func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType {
    if T.self == AnyRealmValue.self, isEmpty, let zero = AnyRealmValue.int(0) as? T { return zero }
    return results().sum(ofProperty: property)
  }
  /// The average of a property over the values.
  public func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType {
    results().average(ofProperty: property)
  }

  func results() -> Results<Value> {
    if let parent, let core = parent._core, let table = parent._table {
      return Results(core: core, source: .list(owner: parent, table: table, index: propertyIndex))
    }
    return Results(unmanaged: values)
  }

  /// RealmSwift's layout: `Map<string, Type> <address> (`, then `[key]: value` per entry, `)`.
  public var description: String {
    "Map<string, \(realmTypeName(Value._rlmTypeInfo, dynamicTable: dynamicTable))> "
      + "<\(Unmanaged.passUnretained(self).toOpaque())> (\n"
      + entries.map { "[\($0.key)]: \(describeValue($0.value))" }.joined(separator: ",\n") + "\n)"
  }

  /// Iterates over the entries as `SingleMapEntry` values.
  public func makeIterator() -> RLMMapIterator<SingleMapEntry<Key, Value>> {
    RLMMapIterator(entries.map { SingleMapEntry(key: $0.key, value: $0.value) })
  }

  /// A sequence of `(key, value)` tuples.
  public struct KeyValueSequence: Sequence {
    let items: [(key: Key, value: Value)]
    /// Iterates over the pairs.
    public func makeIterator() -> IndexingIterator<[(key: Key, value: Value)]> { items.makeIterator() }
  }

  /// The entries as `(key, value)` tuples.
  public func asKeyValueSequence() -> KeyValueSequence { KeyValueSequence(items: entries) }
}

extension Map: Sequence {}

/// An iterator over a `Map`'s entries.
public struct RLMMapIterator<Element>: IteratorProtocol {
  private var base: IndexingIterator<[Element]>
  init(_ elements: [Element]) { base = elements.makeIterator() }
  /// The next entry.
  public mutating func next() -> Element? { base.next() }
}

/// One entry of a `Map`.
public struct SingleMapEntry<Key: _MapKey, Value: RealmCollectionValue>: Hashable {
  /// The entry's key.
  public var key: Key
  /// The entry's value.
  public var value: Value
}

/// The position of an entry in a `Map`.
public struct MapIndex: Hashable, Sendable {
  /// The offset of the entry.
  public var offset: UInt
}

extension Map: _Persistable {
  /// A collection is stored as itself.
  public typealias PersistedType = Map
  /// How the property is stored: a map of `Value`'s type.
  public static var _rlmTypeInfo: _PersistedTypeInfo {
    let info = Value._rlmTypeInfo
    return _PersistedTypeInfo(info.type, optional: info.isOptional, collection: .map, objectType: info.objectType)
  }
  /// An empty, unmanaged map.
  public static func _rlmDefaultValue() -> Map { Map() }
  /// An unmanaged map of the stored entries, their values converted to `Value`s.
  public static func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> Map {
    let map = Map()
    if case .map(let entries) = value.value {
      for entry in entries { map.unmanaged[entry.key] = Value._rlmFromStored(_StoredValue(entry.value), context) }
    }
    return map
  }
  /// The entries as a stored map (objects as links: unmanaged ones are added to the context's
  /// Realm); an unmanaged map's keys are checked (no leading `$`, no `.`).
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue {
    _StoredValue(
      .map(
        entries.map {
          if parent == nil { Self.check($0.key._rlmKey) }
          return RowValue.MapEntry(key: $0.key._rlmKey, value: $0.value._rlmToStored(context).value)
        }))
  }
  /// The managed map of property `index` of `object`: the instance still in use if there is
  /// one, so reading the property again gives the same `Map` (a frozen object makes a new one
  /// each time).
  public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> Map {
    object._collection(at: index) { Map(parent: object, index: index) }
  }
  /// Sets property `index` of `object` to `value`'s entries, copied; assigning the map the
  /// property already holds does nothing.
  public static func _rlmSet(_ object: ObjectBase, _ index: Int, _ value: Map) {
    if value.parent === object, value.propertyIndex == index { return }
    object._setStoredValue(value._rlmToStored(_AccessContext(object._core)).value, at: index)
  }
  /// A map whose every key holds the probe value, so key paths through a value
  /// (`\.map[""]??.name`) trace on.
  public static func _rlmProbe(_ probe: _KeyPathProbe) -> Map {
    let map = Map()
    map.probeValue = Value._rlmProbe(probe)
    return map
  }
  /// `value` itself when it is a `Map`; an unmanaged map of a `[String: Any]` dictionary's
  /// entries (nil when a value cannot be converted; keys are checked); an empty map for nil;
  /// nil for anything else.
  public static func _rlmFromAny(_ value: Any?) -> Map? {
    if let map = value as? Map { return map }
    guard let dictionary = value as? [String: Any] else { return value == nil ? Map() : nil }
    let map = Map()
    for (key, item) in dictionary {
      guard let converted = Value._rlmFromAny(item) else { return nil }
      check(key)
      map.unmanaged[key] = converted
    }
    return map
  }
}

extension Map: Encodable where Key: Encodable, Value: Encodable {
  /// Encodes the map as a keyed container.
  public func encode(to encoder: Encoder) throws {
    var container = encoder.container(keyedBy: MapCodingKey.self)
    for (key, value) in entries { try container.encode(value, forKey: MapCodingKey(stringValue: key._rlmKey)) }
  }
}

extension Map: Decodable where Key: Decodable, Value: Decodable {
  /// Decodes an unmanaged map from a keyed container.
  public convenience init(from decoder: Decoder) throws {
    self.init()
    let container = try decoder.container(keyedBy: MapCodingKey.self)
    for key in container.allKeys {
      Self.check(key.stringValue)
      unmanaged[key.stringValue] = try container.decode(Value.self, forKey: key)
    }
  }
}

struct MapCodingKey: CodingKey {
  var stringValue: String
  var intValue: Int? { nil }
  init(stringValue: String) { self.stringValue = stringValue }
  init?(intValue: Int) { nil }
}

extension Map: Equatable {
  /// RealmSwift's equality of maps: two managed maps are equal when they are the same property
  /// of the same object in the same Realm; two unmanaged maps when they hold equal entries
  /// (objects by identity); a managed map never equals an unmanaged one.
  /// Whether `object` is an equal Map (`==`), as RealmSwift's `NSObject` method answers.
  public func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? Map else { return false }
    return self == other
  }

  /// Whether both are the same map: for managed maps, the same property of the same object
  /// in the same Realm instance; for unmanaged maps, the same keys with equal values (objects
  /// as the same object); a managed map never equals an unmanaged one.
  public static func == (lhs: Map, rhs: Map) -> Bool {
    if lhs === rhs { return true }
    switch (lhs.parent, rhs.parent) {
    case (nil, nil):
      return lhs.unmanaged.count == rhs.unmanaged.count
        && lhs.unmanaged.allSatisfy { key, value in rhs.unmanaged[key].map { isSame($0, value) } ?? false }
    case (let a?, let b?):
      return lhs.propertyIndex == rhs.propertyIndex && isSameStoredObject(a, b)
    default:
      return false
    }
  }
}

/// A key-value Realm collection (RealmSwift's `RealmKeyedCollection`): `Map`.
public protocol RealmKeyedCollection: Sequence, ThreadConfined, CustomStringConvertible, _MapChangeCollection
where Key: _MapKey {
  /// The type of the values.
  associatedtype Value: RealmCollectionValue
  /// The Realm of the collection, or nil when unmanaged.
  var realm: Realm? { get }
  /// Whether the collection can no longer be accessed.
  var isInvalidated: Bool { get }
  /// The number of entries.
  var count: Int { get }
  /// Sets the value for `key`, adding the entry if needed.
  func updateValue(_ value: Value, forKey key: Key)
  /// Removes the entry for `key` if there is one.
  func removeObject(for key: Key)
  /// Removes every entry.
  func removeAll()
  /// The value for `key`, or nil; setting nil removes the entry.
  subscript(key: Key) -> Value? { get set }
  /// The value for `key`, or nil.
  func value(forKey key: String) -> AnyObject?
  /// The value for a key given as a key path, or nil.
  func value(forKeyPath keyPath: String) -> AnyObject?
  /// Sets the value for `key`; nil removes the entry.
  func setValue(_ value: Any?, forKey key: String)
  /// Whether an entry satisfies `predicate`.
  func contains(where predicate: @escaping (_ key: Key, _ value: Value) -> Bool) -> Bool
  /// The values, sorted.
  func sorted(ascending: Bool) -> Results<Value>
  /// The values sorted by a property of theirs (or "self").
  func sorted(byKeyPath keyPath: String, ascending: Bool) -> Results<Value>
  /// The values sorted by several properties.
  func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Value> where S.Iterator.Element == SortDescriptor
  /// Every key.
  var keys: [Key] { get }
  /// Every value.
  var values: [Value] { get }
  /// The smallest value of a property of the values.
  func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType
  /// The largest value of a property of the values.
  func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType
  /// The sum of a property of the values.
  func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType
  /// The average of a property of the values.
  func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType
  /// Whether the collection belongs to a frozen Realm.
  var isFrozen: Bool { get }
  /// A frozen snapshot of the collection.
  func freeze() -> Self
  /// The live collection for a frozen one; nil when it no longer exists.
  func thaw() -> Self?
  /// Calls `block` with the collection now and after each commit that changes it (see
  /// `Map.observe(keyPaths:on:_:)`).
  func observe(
    keyPaths: [String]?, on queue: DispatchQueue?, _ block: @escaping (RealmMapChange<Self>) -> Void
  ) -> NotificationToken
}

extension Map: RealmKeyedCollection {}

extension RealmKeyedCollection where Value.PersistedType: MinMaxType {
  /// The smallest value, or nil when there are none.
  public func min() -> Value? { min(ofProperty: "self") }
  /// The largest value, or nil when there are none.
  public func max() -> Value? { max(ofProperty: "self") }
}

extension RealmKeyedCollection where Value.PersistedType: AddableType {
  /// The sum of the values (zero when there are none).
  public func sum() -> Value { sum(ofProperty: "self") }
  /// The average of the values, or nil when there are none.
  public func average<T: _HasPersistedType>() -> T? where T.PersistedType: AddableType { average(ofProperty: "self") }
}

extension RealmKeyedCollection where Value: OptionalProtocol, Value.Wrapped: ObjectBase {
  /// The smallest value of the objects' property at `keyPath`, or nil when there are none.
  public func min<T: _HasPersistedType>(of keyPath: KeyPath<Value.Wrapped, T>) -> T? where T.PersistedType: MinMaxType {
    min(ofProperty: _KeyPathProbe.name(of: keyPath))
  }
  /// The largest value of the objects' property at `keyPath`, or nil when there are none.
  public func max<T: _HasPersistedType>(of keyPath: KeyPath<Value.Wrapped, T>) -> T? where T.PersistedType: MinMaxType {
    max(ofProperty: _KeyPathProbe.name(of: keyPath))
  }
  /// The sum of the objects' property at `keyPath` (zero when there are none).
  public func sum<T: _HasPersistedType>(of keyPath: KeyPath<Value.Wrapped, T>) -> T where T.PersistedType: AddableType {
    sum(ofProperty: _KeyPathProbe.name(of: keyPath))
  }
  /// The average of the objects' property at `keyPath`, or nil when there are none.
  public func average<T: _HasPersistedType>(of keyPath: KeyPath<Value.Wrapped, T>) -> T?
  where T.PersistedType: AddableType {
    average(ofProperty: _KeyPathProbe.name(of: keyPath))
  }
  /// The objects sorted by their property at `keyPath`.
  public func sorted<T: _HasPersistedType>(by keyPath: KeyPath<Value.Wrapped, T>, ascending: Bool) -> Results<Value>
  where T.PersistedType: SortableType {
    sorted(byKeyPath: _KeyPathProbe.name(of: keyPath), ascending: ascending)
  }
}

extension Map: _ManagedPromotable {
  func _promote(to object: ObjectBase, index: Int) {
    parent = object
    propertyIndex = index
    unmanaged = [:]
    object._cacheCollection(self, at: index)
  }
}
