import Foundation

/// An ordered collection of values or objects stored in a `@Persisted` property
/// (RealmSwift's `List`). Unmanaged lists are plain arrays; managed lists read and write the
/// Realm, and can be filtered and sorted like `Results`.
public final class List<Element: RealmCollectionValue>: RandomAccessCollection, MutableCollection,
  CustomStringConvertible, RealmDescribedCollection
{
  var unmanaged: [Element] = []
  /// The owning object and property, for managed lists (set when an unmanaged list becomes
  /// managed with its object).
  private(set) var parent: ObjectBase?
  private(set) var propertyIndex: Int
  /// The target class of a dynamic collection (`Object.dynamicList(_:)` and the like), whose
  /// elements are `DynamicObject`s of it.
  let dynamicTable: TableInfo?

  /// Creates an empty, unmanaged list.
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
    let deleted = "RLMArray has been invalidated or the containing object has been deleted."
    if case .list(let items) = parent._storedValue(at: propertyIndex, deleted: deleted) { return items }
    return []
  }

  private var context: _AccessContext { _AccessContext(parent?._core, dynamicTable: dynamicTable) }

  private func element(_ value: RowValue) -> Element { Element._rlmFromStored(_StoredValue(value), context) }

  private func store(_ items: [RowValue]) {
    guard let parent else { return }
    parent._setStoredValue(.list(items), at: propertyIndex)
  }

  private func storedElement(_ element: Element) -> RowValue {
    if let embedded = element as? EmbeddedObject, embedded._core != nil, embedded._table != nil {
      fatalError("Cannot add an existing managed embedded object to a List.")
    }
    return element._rlmToStored(context).value
  }

  private func checkWrite() {
    if let parent, let core = parent._core {
      core.verifyCollectionWrite(owner: parent, objcName: "RLMArray")
    }
  }

  // MARK: Properties

  /// The Realm managing the list, or nil when unmanaged.
  public var realm: Realm? { parent?._core.map { Realm(core: $0) } }
  /// Whether the list can no longer be accessed (its object was deleted).
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

  /// Iterates the elements the list holds now: a loop visits each of them once, whatever it
  /// writes meanwhile (RealmSwift's snapshot enumeration).
  public func makeIterator() -> RLMIterator<Element> {
    if parent == nil { return RLMIterator(unmanaged) }
    let items = stored
    let context = self.context
    return RLMIterator(count: items.count) { Element._rlmFromStored(_StoredValue(items[$0]), context) }
  }

  /// The element at `position`.
  public subscript(position: Int) -> Element {
    get {
      if parent == nil {
        checkBounds(position, count: unmanaged.count)
        return unmanaged[position]
      }
      let items = stored
      checkBounds(position, count: items.count)
      return element(items[position])
    }
    set { replace(index: position, object: newValue) }
  }

  /// The elements in `bounds` (get), or replaces them with another collection's elements (set,
  /// in a write transaction for a managed list), which may be of another length.
  public subscript(bounds: Range<Int>) -> Slice<List> {
    get { Slice(base: self, bounds: bounds) }
    set { replaceSubrange(bounds, with: newValue) }
  }

  /// The value of `key` of every element (objects' properties; `NSNull` for nil; `"self"` for
  /// the elements).
  public func value(forKey key: String) -> [AnyObject] { value(forKeyPath: key) }

  /// The value at `keyPath` of every element, through links and to-many properties.
  public func value(forKeyPath keyPath: String) -> [AnyObject] {
    guard keyPath.hasPrefix("@") else { return kvcValues(self, keyPath: keyPath).map { $0 as AnyObject } }
    // A collection operator gives one value, which RealmSwift's `List` cannot return as an array.
    let result = _results.value(forKeyPath: keyPath)
    guard let array = result as? [Any] else {
      fatalError(
        "'\(keyPath)' gives \(result.map { "a value of type '\(type(of: $0))'" } ?? "nil"), not an array: read it "
          + "through AnyRealmCollection or Results, whose value(forKeyPath:) returns Any?.")
    }
    return array.map { $0 as AnyObject }
  }

  /// Sets `key` of every element (objects).
  public func setValue(_ value: Any?, forKey key: String) {
    for element in self { (element as? ObjectBase)?[key] = value }
  }

  /// The position of the first element equal to `object`.
  public func index(of object: Element) -> Int? { firstIndex { isSame($0, object) } }

  // MARK: Mutation

  /// Appends an element.
  public func append(_ object: Element) {
    checkWrite()
    if parent == nil { unmanaged.append(object) } else { store(stored + [storedElement(object)]) }
  }

  /// Appends every element of `objects`.
  public func append<S: Sequence>(objectsIn objects: S) where S.Element == Element {
    checkWrite()
    if parent == nil { unmanaged.append(contentsOf: objects) } else { store(stored + objects.map(storedElement)) }
  }

  /// Inserts an element at `index`.
  public func insert(_ object: Element, at index: Int) {
    checkWrite()
    if parent == nil {
      checkBounds(index, count: unmanaged.count + 1)
      unmanaged.insert(object, at: index)
      return
    }
    var items = stored
    checkBounds(index, count: items.count + 1)
    items.insert(storedElement(object), at: index)
    store(items)
  }

  /// Removes the element at `index`.
  public func remove(at index: Int) {
    checkWrite()
    if parent == nil {
      checkBounds(index, count: unmanaged.count)
      unmanaged.remove(at: index)
      return
    }
    var items = stored
    checkBounds(index, count: items.count)
    items.remove(at: index)
    store(items)
  }

  /// Removes the last `number` elements (one by default); fails when the list has fewer.
  public func removeLast(_ number: Int = 1) {
    let count = countAllowingRemoval(of: number)
    replaceSubrange((count - number)..<count, with: [])
  }

  /// Removes the first `number` elements (one by default); fails when the list has fewer.
  public func removeFirst(_ number: Int = 1) {
    _ = countAllowingRemoval(of: number)
    replaceSubrange(0..<number, with: [])
  }

  /// The number of elements, when `number` of them can be removed; RealmSwift's failures
  /// otherwise (a negative number, or more than the list holds).
  private func countAllowingRemoval(of number: Int) -> Int {
    checkBounds(number, count: Int.max)
    let count = self.count
    guard number <= count else {
      fatalError(
        "It is not possible to remove more objects (\(number)) from a list than it already contains (\(count)).")
    }
    return count
  }

  /// Inserts `newElements` at `index`.
  public func insert<C: Collection>(contentsOf newElements: C, at index: Int) where C.Element == Element {
    replaceSubrange(index..<index, with: newElements)
  }

  /// Removes the elements in `bounds`.
  public func removeSubrange<R: RangeExpression>(_ bounds: R) where R.Bound == Int {
    replaceSubrange(bounds.relative(to: self), with: [])
  }

  /// Removes the elements at `offsets` (as SwiftUI's `onDelete` gives them).
  public func remove(atOffsets offsets: IndexSet) {
    checkWrite()
    if parent == nil {
      for offset in offsets.reversed() { unmanaged.remove(at: offset) }
      return
    }
    // Rearranged as stored values: elements already in the list are not added again.
    var items = stored
    for offset in offsets.reversed() { items.remove(at: offset) }
    store(items)
  }

  /// Moves the elements at `offsets` to before `destination` (as SwiftUI's `onMove` gives
  /// them), one at a time as RealmSwift does; an offset or destination out of bounds fails
  /// with `move(from:to:)`'s message.
  public func move(fromOffsets offsets: IndexSet, toOffset destination: Int) {
    // RealmSwift's way: each offset in turn, ascending, one `move(from:to:)` each (with its
    // bounds checks), the destination shifted down when it lies after the offset.
    for offset in offsets {
      move(from: offset, to: destination > offset ? destination - 1 : destination)
    }
  }

  /// Removes every element (linked objects stay in the Realm).
  public func removeAll() {
    checkWrite()
    if parent == nil { unmanaged.removeAll() } else { store([]) }
  }

  /// Replaces the element at `index`.
  public func replace(index: Int, object: Element) {
    checkWrite()
    if parent == nil {
      checkBounds(index, count: unmanaged.count)
      unmanaged[index] = object
      return
    }
    var items = stored
    checkBounds(index, count: items.count)
    items[index] = storedElement(object)
    store(items)
  }

  /// Moves the element at `from` to `to`.
  public func move(from: Int, to: Int) {
    checkWrite()
    if parent == nil {
      checkBounds(from, count: unmanaged.count)
      checkBounds(to, count: unmanaged.count)
      let item = unmanaged.remove(at: from)
      unmanaged.insert(item, at: to)
      return
    }
    var items = stored
    checkBounds(from, count: items.count)
    checkBounds(to, count: items.count)
    let item = items.remove(at: from)
    items.insert(item, at: to)
    store(items)
  }

  /// Exchanges two elements.
  public func swapAt(_ index1: Int, _ index2: Int) {
    checkWrite()
    let count = self.count
    checkBounds(index1, count: count, name: "index1")
    checkBounds(index2, count: count, name: "index2")
    if parent == nil {
      unmanaged.swapAt(index1, index2)
      return
    }
    var items = stored
    items.swapAt(index1, index2)
    store(items)
  }

  /// Replaces the elements in `subrange` with `newElements`. Like RealmSwift, which removes the
  /// range element by element and then inserts, a range past the end fails with the bounds
  /// text of the first removal or insertion that cannot be done.
  public func replaceSubrange<C: Collection, R: RangeExpression>(_ bounds: R, with newElements: C)
  where C.Element == Element, R.Bound == Int {
    let subrange = bounds.relative(to: self)
    checkWrite()
    let count = self.count
    if !subrange.isEmpty {
      checkBounds(subrange.lowerBound, count: count)
      if subrange.upperBound > count {
        fatalError("Index \(subrange.lowerBound) is out of bounds (must be less than \(subrange.lowerBound)).")
      }
    } else if !newElements.isEmpty {
      checkBounds(subrange.lowerBound, count: count + 1)
    }
    if parent == nil {
      unmanaged.replaceSubrange(subrange, with: newElements)
      return
    }
    var items = stored
    items.replaceSubrange(subrange, with: newElements.map(storedElement))
    store(items)
  }

  /// RealmSwift's layout: `List<Type> <address> (`, then `\t[i] description` per element
  /// (at most 100), `)`.
  public var description: String {
    describeCollection(
      "List", realmTypeName(Element._rlmTypeInfo, dynamicTable: dynamicTable), self, map { $0 as Any? })
  }

  /// The elements as `Results`: live results of the property for a managed list, unmanaged
  /// results of a copy of the elements otherwise.
  public var _results: Results<Element> { results() }

  func results() -> Results<Element> {
    if let parent, let core = parent._core, let table = parent._table {
      return Results(core: core, source: .list(owner: parent, table: table, index: propertyIndex))
    }
    return Results(unmanaged: Array(self))
  }
}

extension List: Equatable {
  /// RealmSwift's equality of lists: two managed lists are equal when they are the same
  /// property of the same object in the same Realm; two unmanaged lists when they hold equal
  /// elements (objects by identity); a managed list never equals an unmanaged one.
  /// Whether `object` is an equal List (`==`), as RealmSwift's `NSObject` method answers.
  public func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? List else { return false }
    return self == other
  }

  /// Whether both are the same list: for managed lists, the same property of the same object
  /// in the same Realm instance; for unmanaged lists, equal elements in the same order (objects
  /// as the same object); a managed list never equals an unmanaged one.
  public static func == (lhs: List, rhs: List) -> Bool {
    if lhs === rhs { return true }
    switch (lhs.parent, rhs.parent) {
    case (nil, nil):
      return lhs.unmanaged.count == rhs.unmanaged.count && zip(lhs.unmanaged, rhs.unmanaged).allSatisfy(isSame)
    case (let a?, let b?):
      return lhs.propertyIndex == rhs.propertyIndex && isSameStoredObject(a, b)
    default:
      return false
    }
  }
}

extension List: UnmanagedQueryFails {
  static var objcName: String { "RLMArray" }
}

/// Whether `a` and `b` are the same object of the same Realm instance (or the same instance).
func isSameStoredObject(_ a: ObjectBase, _ b: ObjectBase) -> Bool {
  if a === b { return true }
  guard let core = a._core, core === b._core, let table = a._table, table.name == b._table?.name else { return false }
  return a._key == b._key
}

func isSame<T>(_ a: T, _ b: T) -> Bool {
  if let a = a as? Object, let b = b as? Object { return a === b || a.isSameObject(as: b) }
  if let a = a as? AnyHashable, let b = b as? AnyHashable { return a == b }
  return false
}

func value(of element: Any, _ key: String) -> Any {
  if let object = element as? ObjectBase { return object[key] as Any }
  if key == "self" { return element }
  return NSNull()
}

extension List: _Persistable {
  /// A collection is stored as itself.
  public typealias PersistedType = List
  /// How the property is stored: a list of `Element`'s type.
  public static var _rlmTypeInfo: _PersistedTypeInfo {
    let info = Element._rlmTypeInfo
    return _PersistedTypeInfo(info.type, optional: info.isOptional, collection: .list, objectType: info.objectType)
  }
  /// An empty, unmanaged list.
  public static func _rlmDefaultValue() -> List { List() }
  /// An unmanaged list of the stored elements, converted to `Element`s.
  public static func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> List {
    let list = List()
    if case .list(let items) = value.value {
      list.unmanaged = items.map { Element._rlmFromStored(_StoredValue($0), context) }
    }
    return list
  }
  /// The elements as a stored list (objects as links: unmanaged ones are added to the
  /// context's Realm).
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue {
    _StoredValue(.list(map { $0._rlmToStored(context).value }))
  }
  /// The managed list of property `index` of `object`: the instance still in use if there is
  /// one, so reading the property again gives the same `List` (a frozen object makes a new one
  /// each time).
  public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> List {
    object._collection(at: index) { List(parent: object, index: index) }
  }
  /// Sets property `index` of `object` to `value`'s elements, copied; assigning the list the
  /// property already holds does nothing.
  public static func _rlmSet(_ object: ObjectBase, _ index: Int, _ value: List) {
    if value.parent === object, value.propertyIndex == index { return }
    object._setStoredValue(value._rlmToStored(_AccessContext(object._core)).value, at: index)
  }
  /// A list holding one probe element, so key paths through an element (`\.dogs[0].name`)
  /// trace on.
  public static func _rlmProbe(_ probe: _KeyPathProbe) -> List {
    let list = List()
    list.unmanaged = [Element._rlmProbe(probe)]
    return list
  }
  /// `value` itself when it is a `List`; an unmanaged list of a sequence's elements (nil when
  /// one cannot be converted); an empty list for nil; nil for anything else.
  public static func _rlmFromAny(_ value: Any?) -> List? {
    if let list = value as? List { return list }
    guard let sequence = value as? any Sequence else { return value == nil ? List() : nil }
    let list = List()
    for item in sequence {
      guard let element = Element._rlmFromAny(item) else { return nil }
      list.unmanaged.append(element)
    }
    return list
  }
}

/// RealmSwift's checks of a collection index argument: not negative, then below `count`.
func checkBounds(_ index: Int, count: Int, name: String = "index") {
  if index < 0 { fatalError("Cannot pass a negative value for '\(name)'.") }
  if index >= count { fatalError("Index \(index) is out of bounds (must be less than \(count)).") }
}

extension List: _ManagedPromotable {
  func _promote(to object: ObjectBase, index: Int) {
    parent = object
    propertyIndex = index
    unmanaged = []
    object._cacheCollection(self, at: index)
  }
}
