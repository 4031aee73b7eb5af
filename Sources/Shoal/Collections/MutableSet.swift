import Foundation

/// An unordered collection of distinct values or objects stored in a `@Persisted` property
/// (RealmSwift's `MutableSet`). Elements keep their insertion order for indexing.
public final class MutableSet<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible,
  RealmDescribedCollection
{
  var unmanaged: [Element] = []
  /// The owning object and property, for managed collections (set when an unmanaged one
  /// becomes managed with its object).
  private(set) var parent: ObjectBase?
  private(set) var propertyIndex: Int
  /// The target class of a dynamic collection (`Object.dynamicList(_:)` and the like), whose
  /// elements are `DynamicObject`s of it.
  let dynamicTable: TableInfo?

  /// Creates an empty, unmanaged set.
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

  private var stored: [RowValue] {
    guard let parent else { return [] }
    let deleted = "RLMSet has been invalidated or the containing object has been deleted."
    if case .list(let items) = parent._storedValue(at: propertyIndex, deleted: deleted) { return items }
    return []
  }

  private var context: _AccessContext { _AccessContext(parent?._core, dynamicTable: dynamicTable) }
  private func element(_ value: RowValue) -> Element { Element._rlmFromStored(_StoredValue(value), context) }
  private func storedElement(_ element: Element) -> RowValue { element._rlmToStored(context).value }

  private func update(_ body: (inout [RowValue]) -> Void) {
    guard let parent, let core = parent._core else { return }
    core.verifyCollectionWrite(owner: parent, objcName: "RLMSet")
    var items = stored
    body(&items)
    parent._setStoredValue(.list(items), at: propertyIndex)
  }

  /// The Realm managing the set, or nil when unmanaged.
  public var realm: Realm? { parent?._core.map { Realm(core: $0) } }
  /// Whether the set can no longer be accessed.
  public var isInvalidated: Bool { parent?.isInvalidated ?? false }
  /// The number of elements.
  public var count: Int { parent == nil ? unmanaged.count : stored.count }
  /// The position of the first element.
  public var startIndex: Int { 0 }
  /// The collection's past-the-end position: one greater than the last valid subscript.
  public var endIndex: Int { count }
  /// The position immediately after `i`.
  public func index(after i: Int) -> Int { i + 1 }
  /// The position immediately before `i`.
  public func index(before i: Int) -> Int { i - 1 }

  /// Iterates the elements the set holds now: a loop visits each of them once, whatever it
  /// writes meanwhile (RealmSwift's snapshot enumeration).
  public func makeIterator() -> RLMIterator<Element> {
    if parent == nil { return RLMIterator(unmanaged) }
    let items = stored
    let context = self.context
    return RLMIterator(count: items.count) { Element._rlmFromStored(_StoredValue(items[$0]), context) }
  }

  /// The element at `position` (in insertion order).
  public subscript(position: Int) -> Element {
    if parent == nil {
      checkBounds(position, count: unmanaged.count)
      return unmanaged[position]
    }
    let items = stored
    checkBounds(position, count: items.count)
    return element(items[position])
  }

  /// Whether `object` is in the set.
  public func contains(_ object: Element) -> Bool {
    if parent == nil { return unmanaged.contains { isSame($0, object) } }
    return stored.contains(storedElement(object))
  }

  /// Adds `object` unless it is already there.
  public func insert(_ object: Element) {
    if parent == nil {
      if !contains(object) { unmanaged.append(object) }
      return
    }
    let value = storedElement(object)
    update { items in if !items.contains(value) { items.append(value) } }
  }

  /// Adds every element of `objects`.
  public func insert<S: Sequence>(objectsIn objects: S) where S.Element == Element {
    for object in objects { insert(object) }
  }

  /// Removes `object` if present.
  public func remove(_ object: Element) {
    if parent == nil {
      unmanaged.removeAll { isSame($0, object) }
      return
    }
    let value = storedElement(object)
    update { items in items.removeAll { $0 == value } }
  }

  /// Removes every element.
  public func removeAll() {
    if parent == nil { unmanaged.removeAll() } else { update { $0.removeAll() } }
  }

  /// Whether the sets share an element.
  public func intersects(_ other: MutableSet<Element>) -> Bool { contains { other.contains($0) } }
  /// Whether every element is in `other`.
  public func isSubset(of other: MutableSet<Element>) -> Bool { allSatisfy { other.contains($0) } }
  /// Keeps only the elements also in `other`.
  public func formIntersection(_ other: MutableSet<Element>) {
    for element in Array(self) where !other.contains(element) { remove(element) }
  }
  /// Adds the elements of `other`.
  public func formUnion(_ other: MutableSet<Element>) { insert(objectsIn: Array(other)) }
  /// Removes the elements of `other`.
  public func subtract(_ other: MutableSet<Element>) {
    for element in Array(other) { remove(element) }
  }

  /// The distinct values of `key` of the elements (`NSSet` semantics, as RealmSwift gives them).
  public func value(forKey key: String) -> [AnyObject] {
    distinctValues(kvcValues(self, keyPath: key)).map { $0 as AnyObject }
  }
  /// Sets `key` of every element (objects).
  public func setValue(_ value: Any?, forKey key: String) {
    for element in self { (element as? ObjectBase)?[key] = value }
  }

  /// Not available: a set has no positions ("index(of:) is not available on MutableSet").
  public func index(of object: Element) -> Int? {
    fatalError("index(of:) is not available on MutableSet")
  }

  /// Not available: a set has no positions ("index(matching:) is not available on MutableSet").
  public func _index(matching predicateFormat: String, arguments: [Any]) -> Int? {
    fatalError("index(matching:) is not available on MutableSet")
  }

  /// RealmSwift's layout: `MutableSet<Type> <address> (`, then `\t[i] description` per
  /// element (at most 100), `)`.
  public var description: String {
    describeCollection(
      "MutableSet", realmTypeName(Element._rlmTypeInfo, dynamicTable: dynamicTable), self, map { $0 as Any? })
  }

  /// The elements as `Results`: live results of the property for a managed set, unmanaged
  /// results of a copy of the elements otherwise.
  public var _results: Results<Element> { results() }

  func results() -> Results<Element> {
    if let parent, let core = parent._core, let table = parent._table {
      return Results(core: core, source: .list(owner: parent, table: table, index: propertyIndex))
    }
    return Results(unmanaged: Array(self))
  }
}

extension MutableSet: Equatable {
  /// RealmSwift's equality of sets: two managed sets are equal when they are the same property
  /// of the same object in the same Realm; two unmanaged sets when they hold the same elements
  /// (objects by identity); a managed set never equals an unmanaged one.
  /// Whether `object` is an equal MutableSet (`==`), as RealmSwift's `NSObject` method answers.
  public func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? MutableSet else { return false }
    return self == other
  }

  /// Whether both are the same set: for managed sets, the same property of the same object
  /// in the same Realm instance; for unmanaged sets, the same elements in any order (objects as
  /// the same object); a managed set never equals an unmanaged one.
  public static func == (lhs: MutableSet, rhs: MutableSet) -> Bool {
    if lhs === rhs { return true }
    switch (lhs.parent, rhs.parent) {
    case (nil, nil):
      return lhs.unmanaged.count == rhs.unmanaged.count
        && lhs.unmanaged.allSatisfy { element in rhs.unmanaged.contains { isSame($0, element) } }
    case (let a?, let b?):
      return lhs.propertyIndex == rhs.propertyIndex && isSameStoredObject(a, b)
    default:
      return false
    }
  }
}

extension MutableSet: UnmanagedQueryFails, UnorderedRealmCollection {
  static var objcName: String { "RLMSet" }
}

extension MutableSet: _Persistable {
  /// A collection is stored as itself.
  public typealias PersistedType = MutableSet
  /// How the property is stored: a set of `Element`'s type.
  public static var _rlmTypeInfo: _PersistedTypeInfo {
    let info = Element._rlmTypeInfo
    return _PersistedTypeInfo(info.type, optional: info.isOptional, collection: .set, objectType: info.objectType)
  }
  /// An empty, unmanaged set.
  public static func _rlmDefaultValue() -> MutableSet { MutableSet() }
  /// An unmanaged set of the stored elements, converted to `Element`s.
  public static func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> MutableSet {
    let set = MutableSet()
    if case .list(let items) = value.value {
      set.unmanaged = items.map { Element._rlmFromStored(_StoredValue($0), context) }
    }
    return set
  }
  /// The distinct elements as stored values (objects as links: unmanaged ones are added to
  /// the context's Realm).
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue {
    var items: [RowValue] = []
    for element in self {
      let value = element._rlmToStored(context).value
      if !items.contains(value) { items.append(value) }
    }
    return _StoredValue(.list(items))
  }
  /// The managed set of property `index` of `object`: the instance still in use if there is
  /// one, so reading the property again gives the same `MutableSet` (a frozen object makes a
  /// new one each time).
  public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> MutableSet {
    object._collection(at: index) { MutableSet(parent: object, index: index) }
  }
  /// Sets property `index` of `object` to `value`'s elements, copied; assigning the set the
  /// property already holds does nothing.
  public static func _rlmSet(_ object: ObjectBase, _ index: Int, _ value: MutableSet) {
    if value.parent === object, value.propertyIndex == index { return }
    object._setStoredValue(value._rlmToStored(_AccessContext(object._core)).value, at: index)
  }
  /// A set holding one probe element, so key paths through an element trace on.
  public static func _rlmProbe(_ probe: _KeyPathProbe) -> MutableSet {
    let set = MutableSet()
    set.unmanaged = [Element._rlmProbe(probe)]
    return set
  }
  /// `value` itself when it is a `MutableSet`; an unmanaged set of a sequence's distinct
  /// elements (nil when one cannot be converted); an empty set for nil; nil for anything else.
  public static func _rlmFromAny(_ value: Any?) -> MutableSet? {
    if let set = value as? MutableSet { return set }
    guard let sequence = value as? any Sequence else { return value == nil ? MutableSet() : nil }
    let set = MutableSet()
    for item in sequence {
      guard let element = Element._rlmFromAny(item) else { return nil }
      set.insert(element)
    }
    return set
  }
}

extension MutableSet: _ManagedPromotable {
  func _promote(to object: ObjectBase, index: Int) {
    parent = object
    propertyIndex = index
    unmanaged = []
    object._cacheCollection(self, at: index)
  }
}
