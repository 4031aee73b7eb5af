import Foundation

/// The common base of `Object` and `EmbeddedObject` (RealmSwift's `RLMObjectBase`).
///
/// Unmanaged instances are plain Swift objects; once added to a Realm (or read from one) their
/// `@Persisted` properties read and write the Realm's current transaction.
open class ObjectBase: CustomStringConvertible {
  /// The Realm of a managed object (a strong reference: the object keeps its Realm open). Set
  /// with `_makeManaged`.
  private(set) var _core: RealmCore?
  /// `_core` without reference counting, for property reads: the Realm is weakly referenced
  /// (its thread's cache of instances), so every retain and release of it takes the runtime's
  /// slow path, several times per read otherwise. Valid while `_core` holds the same Realm.
  /// (Read on every property access, and only ever read or written whole, never held across a
  /// call: unchecked for exclusivity, as are the other fields a property read goes through.)
  @exclusivity(unchecked) private(set) var _coreReference: Unmanaged<RealmCore>?
  /// The class as stored in the Realm, for managed objects. Set with `_makeManaged`.
  private(set) var _table: TableInfo?
  /// `_table` without reference counting (see `_coreReference`).
  @exclusivity(unchecked) private(set) var _tableReference: Unmanaged<TableInfo>?

  /// Makes this object the accessor of object `key` of `table` in `core`, as of the Realm's
  /// `invalidations` `epoch`.
  final func _makeManaged(core: RealmCore, table: TableInfo, key: ObjectKey, epoch: UInt64) {
    _core = core
    _coreReference = Unmanaged.passUnretained(core)
    _table = table
    _tableReference = Unmanaged.passUnretained(table)
    _key = key
    _epoch = epoch
  }
  /// The object's key within its class, for managed objects.
  var _key: ObjectKey = 0
  /// Decoded row of a managed object, valid while `_rowStamp` equals the Realm's stamp.
  @exclusivity(unchecked) var _row: [RowValue]?
  @exclusivity(unchecked) var _rowStamp: UInt64 = 0
  /// Set when the object was deleted or its transaction cancelled.
  var _invalidated = false
  /// The Realm's `invalidations` when this accessor was made: one made before the Realm's
  /// `invalidate()` is invalid, as in RealmSwift.
  var _epoch: UInt64 = 0
  /// Set on key-path tracing probes. Read on every property access (in the models' own
  /// modules), and only ever read or written whole: unchecked for exclusivity.
  @exclusivity(unchecked) @usableFromInline var _probe: _KeyPathProbe?
  /// Property access by name, for `DynamicObject`s.
  var _dynamic: (any DynamicAccess)?
  /// Set while `add` has made the object managed but not yet written its row.
  var _addPending = false
  /// The collection instances of a managed object's properties still in use, by property
  /// index, held weakly (a collection holds its object): reading a property again gives the
  /// same `List`, `MutableSet` or `Map`, as RealmSwift does.
  var _collections: [(index: Int, collection: WeakCollection)] = []

  /// The live collection instance of property `index`, if one is still in use.
  func _cachedCollection(_ index: Int) -> AnyObject? {
    for entry in _collections where entry.index == index {
      if let collection = entry.collection.value { return collection }
    }
    return nil
  }

  /// The collection instance of property `index` of this managed object: the one still in
  /// use, or a new one `make` gives (kept for next time; frozen objects, read from several
  /// threads at once, keep none).
  func _collection<C: AnyObject>(at index: Int, make: () -> C) -> C {
    if _core?.isFrozen == true { return make() }
    if let cached = _cachedCollection(index) as? C { return cached }
    let collection = make()
    _cacheCollection(collection, at: index)
    return collection
  }

  /// Remembers `collection` as the instance of property `index`.
  func _cacheCollection(_ collection: AnyObject, at index: Int) {
    _collections.removeAll { $0.index == index || $0.collection.value == nil }
    _collections.append((index, WeakCollection(collection)))
  }

  /// Creates an unmanaged object.
  public required init() {}

  /// The name of the class in the schema, when it should differ from the Swift class name
  /// (RealmSwift's hook; lets two Swift classes stand for one stored class, e.g. in migrations).
  open class func _realmObjectName() -> String? { nil }

  /// Whether the class is part of the schema when `Realm.Configuration.objectTypes` is nil.
  open class func shouldIncludeInDefaultSchema() -> Bool { true }

  /// Swift property names mapped to the names RealmSwift would persist them under (its hook for
  /// sharing a schema with other SDKs). Accepted so that models port unchanged; Shoal files
  /// keep the Swift names, which queries, key paths and the schema use as in RealmSwift.
  open class func propertiesMapping() -> [String: String] { [:] }

  /// Creates an unmanaged object from a dictionary of property names to values, an array of
  /// values in property order, or another object with the same properties.
  public convenience init(value: Any) {
    self.init()
    _assign(value)
  }

  /// The Realm managing this object, or nil when unmanaged.
  public var realm: Realm? { _core.map { Realm(core: $0) } }

  /// Whether the object can no longer be accessed: it was deleted, or its Realm invalidated.
  public var isInvalidated: Bool {
    if _invalidated { return true }
    guard let core = _core, let table = _table else { return false }
    if _epoch != core.invalidations { return true }
    return !core.exists(table: table, key: _key)
  }

  /// The schema of this object's class.
  public var objectSchema: ObjectSchema {
    if let table = _table { return table.objectSchema }
    return _classInfo.objectSchema
  }

  /// The name of the class in the schema.
  open class func className() -> String { ClassInfo.of(self).className }

  /// The schema of this class as its declaration gives it (RealmSwift's `sharedSchema()`, from
  /// `RLMObjectBase`): the persisted properties in declaration order, the primary key, whether it
  /// is embedded. Nil for the base classes and for `DynamicObject`, which declare no schema.
  open class func sharedSchema() -> ObjectSchema? {
    if self == Object.self || self == EmbeddedObject.self || self == ObjectBase.self || self is DynamicObject.Type {
      return nil
    }
    return ClassInfo.of(self).objectSchema
  }

  /// The schema of this object's class.
  var _classInfo: ClassInfo { ClassInfo.of(type(of: self)) }

  // MARK: Managed access

  /// The stored value of property `index` of a managed object.
  func _storedValue(
    at index: Int, deleted: @autoclosure () -> String = "Object has been deleted or invalidated."
  ) -> RowValue {
    guard let coreReference = _coreReference, let tableReference = _tableReference else {
      fatalError("Object is unmanaged")  // only managed wrappers call this
    }
    // `self` holds both strongly (`_core`, `_table`) for the whole call: borrowed, not retained.
    return coreReference._withUnsafeGuaranteedRef { core in
      tableReference._withUnsafeGuaranteedRef { table in
        // The row read at the Realm's current view, when this object has it: a live Realm on
        // its own thread, or a frozen one (whose rows never change; an object of it gets its
        // row before it is handed out, and it is never written again).
        if _rowStamp == core.stamp, let row = _row, !table.isLinkingObjects[index] {
          if !core.isFrozen { core.verifyThread() }
          return row[index]
        }
        return core.storedValue(of: self, table: table, at: index, deleted: deleted())
      }
    }
  }

  /// Writes property `index` of a managed object.
  func _setStoredValue(_ value: RowValue, at index: Int) {
    guard let core = _core, let table = _table else { fatalError("Object is unmanaged") }
    core.setStoredValue(value, of: self, table: table, at: index)
  }

  // MARK: Unmanaged access by name

  func _unmanagedValue(_ property: ClassInfo.Field) -> Any {
    property.wrapperType.anyValue(at: _fieldAddress(property))
  }

  func _fieldAddress(_ field: ClassInfo.Field) -> UnsafeMutableRawPointer {
    // The field offset comes from this class's own type metadata, so the address lies inside
    // this live instance; the caller holds `self`, keeping it alive.
    Unmanaged.passUnretained(self).toOpaque() + field.offset
  }

  open var description: String {
    let info = _classInfo
    if isInvalidated { return "[invalid object]" }
    if let dynamic = _dynamic as? ManagedDynamicRow {
      // A dynamic object: the class's properties come from its schema.
      var lines = ["\(dynamic.table.name) {"]
      for property in dynamic.table.properties where property.collection != .linkingObjects {
        let isData = property.type == .data && property.collection == .none
        lines.append("\t\(property.name) = \(describePropertyValue(self[property.name], isData: isData));")
      }
      lines.append("}")
      return lines.joined(separator: "\n")
    }
    var lines = ["\(info.className) {"]
    for field in info.fields where field.options.originProperty == nil {
      let isData = field.typeInfo.type == .data && field.typeInfo.collection == .none
      lines.append("\t\(field.name) = \(describePropertyValue(self[field.name], isData: isData));")
    }
    lines.append("}")
    return lines.joined(separator: "\n")
  }

  /// Reads or writes a property by name (RealmSwift's KVC subscript).
  public subscript(key: String) -> Any? {
    get {
      if let dynamic = _dynamic, let object = self as? DynamicObject { return dynamic.value(of: object, key) }
      let info = _classInfo
      guard let field = info.field(named: key) else {
        fatalError(Realm.Error.invalidProperty(key, className: info.className).description)
      }
      let value: Any? = _core != nil && _table != nil ? dynamicGet(field) : _unmanagedValue(field)
      // A nil optional reads as nil, not as a wrapped `Optional.none`.
      return field.typeInfo.isOptional ? flattenedOptional(value) : value
    }
    set { _setValue(newValue, forKey: key, bySubscript: true) }
  }

  /// Writes a property by name. Through the subscript (`bySubscript`) a managed object is
  /// checked as RealmSwift's `RLMDynamicValidatedSet` checks it: it must not be deleted, its
  /// primary key cannot be set, and a link takes only an object of its class (or, for an
  /// embedded object, anything that makes one). `setValue(_:forKey:)` and Shoal's own updates
  /// set like the property's setter.
  func _setValue(_ newValue: Any?, forKey key: String, bySubscript: Bool) {
    if let dynamic = _dynamic, let object = self as? DynamicObject {
      dynamic.setValue(newValue, of: object, key)
      return
    }
    let info = _classInfo
    if bySubscript, _core != nil, isInvalidated { fatalError("Object has been deleted or invalidated.") }
    guard let field = info.field(named: key) else {
      fatalError(Realm.Error.invalidProperty(key, className: info.className).description)
    }
    if let core = _core, let table = _table {
      if bySubscript, field.options.primaryKey {
        fatalError("Primary key can't be changed to '\(describeValue(newValue))' after an object is inserted.")
      }
      let value = _kvcCoerced(newValue, for: field, className: table.name)
      if bySubscript { _kvcCheckLinkedObjects(value, for: field, className: table.name) }
      core.setAny(value, of: self, table: table, field: field)
      return
    }
    let value = _kvcCoerced(newValue, for: field, className: info.className)
    guard field.wrapperType.setAnyValue(value, at: _fieldAddress(field)) else {
      fatalError(invalidValueMessage(value, for: field, of: info.className))
    }
  }

  func dynamicGet(_ field: ClassInfo.Field) -> Any? {
    // Read through the typed accessor so collections and links come back as Swift values.
    field.wrapperType.managedAnyValue(of: self, index: field.index)
  }
}

/// One step of a key path: a property of an object, or of each element of a collection.
private func keyValueStep(_ value: Any?, _ key: String) -> Any? {
  guard let value = flattenedOptional(value) else { return nil }
  if let object = value as? ObjectBase { return object[key] }
  let elements = ((value as? any _KVCCollection)?._kvcContents as? [Any]) ?? (value as? [Any])
  return elements.map { $0.map { keyValueStep($0, key) as Any } }
}

/// `value` with every level of `Optional` taken off: nil when any level is nil.
func flattenedOptional(_ value: Any?) -> Any? {
  guard let value else { return nil }
  let mirror = Mirror(reflecting: value)
  guard mirror.displayStyle == .optional else { return value }
  guard let wrapped = mirror.children.first else { return nil }
  return flattenedOptional(wrapped.value)
}

/// Runs `body` one level deeper into a description; past RealmSwift's five levels (links may
/// form cycles) it says so instead.
private func describingOneLevelDeeper(_ body: () -> String) -> String {
  let key = "io.shoal.describeDepth"
  let depth = Thread.current.threadDictionary[key] as? Int ?? 0
  guard depth < 5 else { return "<Maximum depth exceeded>" }
  Thread.current.threadDictionary[key] = depth + 1
  defer { Thread.current.threadDictionary[key] = depth }
  return body()
}

/// A value as RealmSwift's descriptions print it (Objective-C's `description`): strings bare,
/// nil as `(null)`, booleans as 1 and 0, objects and collections one level deeper, indented.
func describeValue(_ value: Any?) -> String {
  guard let value = flattenedOptional(value) else { return "(null)" }
  if let string = value as? String { return string }
  if let bool = value as? Bool { return bool ? "1" : "0" }
  if value is ObjectBase || value is any RealmDescribedCollection {
    return describingOneLevelDeeper { "\(value)" }.replacingOccurrences(of: "\n", with: "\n\t")
  }
  return "\(value)"
}

/// A property's value as an object's description prints it: `Data` as RealmSwift prints it
/// there, its first 24 bytes in hex (in groups of four) and its length, `<61626364 65 — 5 total
/// bytes>`; any other value as `describeValue` does.
func describePropertyValue(_ value: Any?, isData: Bool) -> String {
  guard isData, let data = flattenedOptional(value) as? Data else { return describeValue(value) }
  let shown = data.prefix(24)
  var hex = ""
  for (offset, byte) in shown.enumerated() {
    if offset > 0, offset % 4 == 0 { hex += " " }
    hex += String(format: "%02x", byte)
  }
  return "<\(hex) — \(data.count) total bytes>"
}

/// The collections whose descriptions nest inside an object's (indented, depth-limited).
protocol RealmDescribedCollection {}

/// RealmSwift's name for the element type of a collection: the class, or the value type.
func realmTypeName(_ info: _PersistedTypeInfo, dynamicTable: TableInfo? = nil) -> String {
  if let table = dynamicTable { return table.name }
  if let objectType = info.objectType { return ClassInfo.of(objectType).className }
  return info.type.description
}

/// RealmSwift's description of a list-like collection: `Name<Type> <address> (`, then each
/// element as `\t[i] description` (at most 100), then `)`.
func describeCollection(_ name: String, _ typeName: String, _ identity: AnyObject?, _ items: [Any?]) -> String {
  let address = identity.map { "\(Unmanaged.passUnretained($0).toOpaque())" } ?? "0x0"
  var text = "\(name)<\(typeName)> <\(address)> (\n"
  text += items.prefix(100).enumerated().map { "\t[\($0.offset)] \(describeValue($0.element))" }.joined(
    separator: ",\n")
  if items.count > 100 { text += "\n\t... \(items.count - 100) objects skipped." }
  return text + "\n)"
}

/// A model class whose instances Shoal stores (RealmSwift's `Object`).
///
/// Subclass it and declare `@Persisted` properties:
/// ```swift
/// class Person: Object {
///   @Persisted(primaryKey: true) var id = 0
///   @Persisted var name = ""
/// }
/// ```
open class Object: ObjectBase, _RealmCollectionValueInsideOptional {
  /// Creates an unmanaged object.
  public required init() { super.init() }

  /// The primary key's name (legacy API; prefer `@Persisted(primaryKey: true)`).
  open class func primaryKey() -> String? { nil }

  /// Properties not persisted (legacy API; with `@Persisted` every other property is ignored).
  open class func ignoredProperties() -> [String] { [] }

  /// Indexed properties (legacy API; prefer `@Persisted(indexed: true)`).
  open class func indexedProperties() -> [String] { [] }

  /// True when both refer to the same stored object (or are the same instance).
  public func isSameObject(as object: Object?) -> Bool {
    guard let object else { return false }
    if object === self { return true }
    guard let core = _core, let other = object._core, core.sameView(as: other) else { return false }
    return _table?.name == object._table?.name && _key == object._key
  }

  /// The list of objects in property `propertyName`, with its elements as `DynamicObject`s
  /// (RealmSwift's name; for code that does not know the elements' class).
  public func dynamicList(_ propertyName: String) -> List<DynamicObject> {
    let (index, target) = dynamicCollection(propertyName, .list, "a list")
    return List(parent: self, index: index, dynamicTable: target)
  }

  /// The set of objects in property `propertyName`, with its elements as `DynamicObject`s.
  public func dynamicMutableSet(_ propertyName: String) -> MutableSet<DynamicObject> {
    let (index, target) = dynamicCollection(propertyName, .set, "a set")
    return MutableSet(parent: self, index: index, dynamicTable: target)
  }

  /// The map of objects in property `propertyName`, with its values as `DynamicObject`s.
  public func dynamicMap<Key: _MapKey>(_ propertyName: String) -> Map<Key, DynamicObject?> {
    let (index, target) = dynamicCollection(propertyName, .map, "a map")
    return Map(parent: self, index: index, dynamicTable: target)
  }

  private func dynamicCollection(_ name: String, _ collection: PropertyCollection, _ kind: String) -> (Int, TableInfo) {
    guard let core = _core, let table = _table else {
      fatalError(
        "Dynamic collections are only available on managed objects: add '\(_classInfo.className)' to a Realm first.")
    }
    guard let index = table.propertyIndex[name] else {
      fatalError(Realm.Error.invalidProperty(name, className: table.name).description)
    }
    let property = table.properties[index]
    guard property.collection == collection, property.type == .object,
      let target = property.objectClassName.flatMap({ core.table(named: $0) })
    else {
      fatalError("Property '\(table.name).\(name)' is not \(kind) of objects.")
    }
    return (index, target)
  }

  /// Same as `self[key]`.
  open func value(forKey key: String) -> Any? {
    let value = self[key]
    // Key-value coding gives what a mixed value holds, nil for none (RealmSwift bridges it).
    if let mixed = value as? AnyRealmValue { return mixed == .none ? nil : mixed.kvcValue }
    return value
  }
  /// Sets a property by name, as its setter does (key-value coding); unlike the subscript on a
  /// managed object, it converts dictionaries and arrays given for links into objects.
  open func setValue(_ value: Any?, forKey key: String) { _setValue(value, forKey: key, bySubscript: false) }

  /// The value at a dotted key path, as key-value coding reads it (`"dog.name"`): each
  /// component is read from the object before it; through a collection, from each element.
  open func value(forKeyPath keyPath: String) -> Any? {
    var current: Any? = self
    for key in keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
      current = keyValueStep(current, key)
    }
    return current
  }

  /// Sets the value at a dotted key path: `setValue(_:forKey:)` on the object the path leads to.
  open func setValue(_ value: Any?, forKeyPath keyPath: String) {
    var components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    let last = components.removeLast()
    var target: ObjectBase = self
    for key in components {
      guard let next = flattenedOptional(target[key]) as? ObjectBase else {
        fatalError("Cannot set a value through '\(key)' of key path '\(keyPath)': it is not an object.")
      }
      target = next
    }
    target[last] = value
  }

  // MARK: _Persistable (links)

  /// Links are stored as objects (RealmSwift's `PersistedType` of every `Object` subclass).
  public typealias PersistedType = Object
  /// How a link to this class is stored: an object property whose target is this class.
  public class var _rlmTypeInfo: _PersistedTypeInfo { _PersistedTypeInfo(.object, objectType: self) }
  /// A new unmanaged object.
  public class func _rlmDefaultValue() -> Self { Self() }
  /// The object a stored link points to (a `DynamicObject` of the context's dynamic class,
  /// when it has one); fails when the context has no Realm or the object is missing.
  public class func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> Self {
    if let core = context.core, let table = context.dynamicTable, case .link(let key) = value.value,
      let object = core.dynamicObject(table, key) as? Self
    {
      return object
    }
    guard let core = context.core, let object = core.object(for: value.value, type: self) as? Self else {
      fatalError("Link to a missing \(className()) object")  // links are nullified on delete
    }
    return object
  }
  /// A link to this object in the context's Realm, adding the object when unmanaged (null
  /// without a Realm); fails when another Realm file manages it.
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue {
    guard let core = context.core else { return _StoredValue(.null) }
    return _StoredValue(core.linkValue(to: self))
  }
  /// A probe object of this class, for tracing key paths.
  public class func _rlmProbe(_ probe: _KeyPathProbe) -> Self { probe.probeObject(of: self) }
  /// `value` itself when it is an object of this class; nil for nil or `NSNull`; otherwise a
  /// new unmanaged object filled from `value` as `init(value:)` fills it (a dictionary, an
  /// array or another object), failing when it cannot be.
  public class func _rlmFromAny(_ value: Any?) -> Self? {
    if let object = value as? Self { return object }
    guard let value, !(value is NSNull) else { return nil }
    let object = Self()
    object._assign(value)
    return object
  }

  // MARK: Equality

  /// Managed objects of a class with a primary key, or frozen ones, are equal when they are the
  /// same stored object; otherwise equality is identity, as in RealmSwift.
  public static func == (lhs: Object, rhs: Object) -> Bool {
    if lhs === rhs { return true }
    guard lhs._classInfo.primaryKeyIndex != nil || lhs._core?.isFrozen == true else { return false }
    return lhs.isSameObject(as: rhs)
  }

  /// Whether `object` is an equal `Object` (`==`), as RealmSwift's `NSObject` method answers.
  open func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? Object else { return false }
    return self == other
  }

  /// The object's hash value, as RealmSwift's `NSObject.hash` gives it: equal objects (`==`)
  /// have equal hashes.
  open var hash: Int { hashValue }

  /// Hashes the class name and object key of a managed object of a class with a primary key,
  /// or of a frozen object; the instance's identity otherwise.
  public func hash(into hasher: inout Hasher) {
    if _classInfo.primaryKeyIndex != nil || _core?.isFrozen == true, let table = _table {
      hasher.combine(table.name)
      hasher.combine(_key)
    } else {
      hasher.combine(ObjectIdentifier(self))
    }
  }
}

/// An object stored only inside its parent: deleted with it, never queried on its own
/// (RealmSwift's `EmbeddedObject`).
open class EmbeddedObject: ObjectBase, _RealmCollectionValueInsideOptional {
  /// Creates an unmanaged embedded object.
  public required init() { super.init() }

  /// True when both refer to the same stored object.
  public func isSameObject(as object: EmbeddedObject?) -> Bool {
    guard let object else { return false }
    if object === self { return true }
    guard let core = _core, let other = object._core, core.sameView(as: other) else { return false }
    return _table?.name == object._table?.name && _key == object._key
  }

  /// Stored as an embedded object.
  public typealias PersistedType = EmbeddedObject
  /// How a link to this class is stored: an object property whose target is this embedded
  /// class.
  public class var _rlmTypeInfo: _PersistedTypeInfo { _PersistedTypeInfo(.object, objectType: self) }
  /// A new unmanaged embedded object.
  public class func _rlmDefaultValue() -> Self { Self() }
  /// The embedded object a stored link points to; fails when the context has no Realm or
  /// the object is missing.
  public class func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> Self {
    guard let core = context.core, let object = core.object(for: value.value, type: self) as? Self else {
      fatalError("Link to a missing \(className()) object")  // embedded objects die with the link
    }
    return object
  }
  /// A link to this object in the context's Realm, adding the object when unmanaged (null
  /// without a Realm); fails when it is managed by another Realm file, or when a write links
  /// an embedded object that is already managed.
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue {
    guard let core = context.core else { return _StoredValue(.null) }
    return _StoredValue(core.linkValue(to: self))
  }
  /// A probe object of this class, for tracing key paths.
  public class func _rlmProbe(_ probe: _KeyPathProbe) -> Self { probe.probeObject(of: self) }
  /// `value` itself when it is an object of this class; nil for nil or `NSNull`; otherwise a
  /// new unmanaged object filled from `value` as `init(value:)` fills it (a dictionary, an
  /// array or another object), failing when it cannot be.
  public class func _rlmFromAny(_ value: Any?) -> Self? {
    if let object = value as? Self { return object }
    guard let value, !(value is NSNull) else { return nil }
    let object = Self()
    object._assign(value)
    return object
  }

  /// Whether both are the same instance.
  public static func == (lhs: EmbeddedObject, rhs: EmbeddedObject) -> Bool { lhs === rhs }
  /// Whether `object` is this embedded object, as RealmSwift's `NSObject` method answers.
  open func isEqual(_ object: Any?) -> Bool { (object as? EmbeddedObject) === self }
  /// Hashes the instance's identity.
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension ObjectBase {
  /// Assigns `value` to an unmanaged object, as RealmSwift's `init(value:)`: a dictionary sets
  /// the properties it names (other keys are ignored), an array sets the first properties in
  /// declaration order (the rest keep their defaults), an object copies the properties of
  /// the same names (it must have them all; collections are copied, linked objects shared).
  func _assign(_ value: Any) {
    let info = _classInfo
    let fields = info.fields.filter { $0.options.originProperty == nil }
    guard let value = flattenedOptional(value), !(value is NSNull) else {
      fatalError("Must provide a non-nil value.")
    }
    if let dictionary = value as? [String: Any?] {
      for field in fields { if let item = dictionary[field.name] { self[field.name] = item } }
    } else if let dictionary = value as? [String: Any] {
      for field in fields { if let item = dictionary[field.name] { self[field.name] = item } }
    } else if let array = value as? [Any?] {
      guard array.count <= fields.count else {
        fatalError("Invalid array input: more values (\(array.count)) than properties (\(fields.count)).")
      }
      for (field, item) in zip(fields, array) { self[field.name] = item }
    } else if let other = value as? ObjectBase {
      // Read by name as key-value coding reads it: every property must be there.
      let otherSchema = other.objectSchema
      for field in fields {
        guard otherSchema[field.name] != nil else {
          fatalError(
            "Invalid value '\(other)' to initialize object of type '\(info.className)': missing key '\(field.name)'")
        }
        self[field.name] = other[field.name]
      }
    } else {
      let missing = fields.first.map { ": missing key '\($0.name)'" } ?? ""
      fatalError("Invalid value '\(value)' to initialize object of type '\(info.className)'\(missing)")
    }
  }
}

/// Objects and projections with a stable identity (RealmSwift's protocol, used by SwiftUI
/// lists elsewhere): `id` is the same for every accessor of one stored object, in any thread
/// or process, and for an unmanaged object it is that instance's identity. A projection's `id`
/// is its object's.
///
/// ```swift
/// final class Dog: Object, ObjectKeyIdentifiable {
///   @Persisted var name = ""
/// }
/// let ids = realm.objects(Dog.self).map(\.id)  // stable across threads and processes
/// ```
public protocol ObjectKeyIdentifiable: Identifiable {
  /// The stable identity of the object.
  var id: UInt64 { get }
}

/// The former, misspelled name of `ObjectKeyIdentifiable`.
@available(*, deprecated, renamed: "ObjectKeyIdentifiable")
public typealias ObjectKeyIdentifable = ObjectKeyIdentifiable

extension ObjectKeyIdentifiable where Self: ObjectBase {
  /// For a managed object, a hash of its class name and object key, the same for every
  /// accessor of it; for an unmanaged object, the instance's address.
  public var id: UInt64 { _stableIdentity }
}

extension ObjectKeyIdentifiable where Self: ProjectionObservable {
  /// The identity of the projected object.
  public var id: UInt64 { rootObject._stableIdentity }
}

extension ObjectBase {
  /// See `ObjectKeyIdentifiable.id`.
  var _stableIdentity: UInt64 {
    guard _core != nil, let table = _table else {
      return UInt64(UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()))
    }
    // FNV-1a of the class name, mixed with the object key.
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in table.name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
    return hash ^ (_key &* 0x9E37_79B9_7F4A_7C15)
  }
}

/// A weak reference to a collection instance (see `ObjectBase._collections`).
final class WeakCollection {
  weak var value: AnyObject?
  init(_ value: AnyObject) { self.value = value }
}

/// A `List`, `MutableSet` or `Map` that becomes managed with the object holding it.
protocol _ManagedPromotable: AnyObject {
  /// Makes this unmanaged collection the managed collection of property `index` of `object`
  /// (whose row already holds its elements).
  func _promote(to object: ObjectBase, index: Int)
}
