import Foundation

/// A property that can hold a value of any supported type, or an object
/// (RealmSwift's `AnyRealmValue`).
public enum AnyRealmValue: Hashable, RealmCollectionValue, _Indexable {
  /// No value.
  case none
  case int(Int)
  case bool(Bool)
  case float(Float)
  case double(Double)
  case string(String)
  case data(Data)
  case date(Date)
  /// A link to an object.
  case object(Object)
  case objectId(ObjectId)
  case decimal128(Decimal128)
  case uuid(UUID)
  /// A list of values, which may themselves be lists or dictionaries. Read from a managed
  /// object's property, it is live: changes in a write transaction go to the property.
  case list(List<AnyRealmValue>)
  /// A dictionary of values, which may themselves be lists or dictionaries. Read from a
  /// managed object's property, it is live like `list`.
  case dictionary(Map<String, AnyRealmValue>)

  /// The value as an `Int`, if it is one.
  public var intValue: Int? { if case .int(let v) = self { return v } else { return nil } }
  /// The value as a `Bool`, if it is one.
  public var boolValue: Bool? { if case .bool(let v) = self { return v } else { return nil } }
  /// The value as a `Float`, if it is one.
  public var floatValue: Float? { if case .float(let v) = self { return v } else { return nil } }
  /// The value as a `Double`, if it is one.
  public var doubleValue: Double? { if case .double(let v) = self { return v } else { return nil } }
  /// The value as a `String`, if it is one.
  public var stringValue: String? { if case .string(let v) = self { return v } else { return nil } }
  /// The value as `Data`, if it is one.
  public var dataValue: Data? { if case .data(let v) = self { return v } else { return nil } }
  /// The value as a `Date`, if it is one.
  public var dateValue: Date? { if case .date(let v) = self { return v } else { return nil } }
  /// The value as an `ObjectId`, if it is one.
  public var objectIdValue: ObjectId? { if case .objectId(let v) = self { return v } else { return nil } }
  /// The value as a `Decimal128`, if it is one.
  public var decimal128Value: Decimal128? { if case .decimal128(let v) = self { return v } else { return nil } }
  /// The value as a `UUID`, if it is one.
  public var uuidValue: UUID? { if case .uuid(let v) = self { return v } else { return nil } }
  /// The list, if the value is one.
  public var listValue: List<AnyRealmValue>? { if case .list(let v) = self { return v } else { return nil } }
  /// The dictionary, if the value is one.
  public var dictionaryValue: Map<String, AnyRealmValue>? {
    if case .dictionary(let v) = self { return v } else { return nil }
  }
  /// A mixed value holding a new, unmanaged dictionary of `dictionary`'s entries.
  ///
  /// ```swift
  /// object.any = .fromDictionary(["name": .string("Rex"), "age": .int(3)])
  /// ```
  public static func fromDictionary(_ dictionary: [String: AnyRealmValue]) -> AnyRealmValue {
    let map = Map<String, AnyRealmValue>()
    map.merge(dictionary.map { (key: $0.key, value: $0.value) }, uniquingKeysWith: { $1 })
    return .dictionary(map)
  }

  /// A mixed value holding a new, unmanaged list of `array`'s elements.
  public static func fromArray(_ array: [AnyRealmValue]) -> AnyRealmValue {
    let list = List<AnyRealmValue>()
    list.append(objectsIn: array)
    return .list(list)
  }

  /// The value held, as key-value coding gives it (RealmSwift bridges a mixed value to what it
  /// holds): `NSNull` for `.none`.
  var kvcValue: Any {
    switch self {
    case .none: return NSNull()
    case .int(let v): return v
    case .bool(let v): return v
    case .float(let v): return v
    case .double(let v): return v
    case .string(let v): return v
    case .data(let v): return v
    case .date(let v): return v
    case .object(let v): return v
    case .objectId(let v): return v
    case .decimal128(let v): return v
    case .uuid(let v): return v
    case .list(let v): return v
    case .dictionary(let v): return v
    }
  }

  /// The object, cast to `T`, if the value is an object of that type.
  public func object<T: Object>(_ objectType: T.Type) -> T? {
    if case .object(let v) = self { return v as? T } else { return nil }
  }

  /// The object as a `DynamicObject` (its properties read and written by name), if the value
  /// is a managed object (or already a dynamic one).
  public var dynamicObject: DynamicObject? {
    guard case .object(let object) = self else { return nil }
    if let dynamic = object as? DynamicObject { return dynamic }
    guard let core = object._core, let table = object._table else { return nil }
    return core.dynamicObject(table, object._key)
  }

  /// No value (`.none`).
  public init() { self = .none }

  /// Wraps a plain value (nil for `.none`).
  public static func fromAny(_ value: Any?) -> AnyRealmValue {
    _rlmFromAny(value) ?? .none
  }

  /// Stored as itself.
  public typealias PersistedType = AnyRealmValue
  /// Stored as a mixed property, which is optional: it holds nil as `.none`.
  public static var _rlmTypeInfo: _PersistedTypeInfo { _PersistedTypeInfo(.any, optional: true) }
  /// `.none`, the value of a property declared without one.
  public static func _rlmDefaultValue() -> AnyRealmValue { .none }

  /// A managed object's property: a stored list or dictionary comes back live, bound to it.
  public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> AnyRealmValue {
    switch object._storedValue(at: index) {
    case .list: return .list(List(parent: object, index: index))
    case .map: return .dictionary(Map(parent: object, index: index))
    case let stored: return _rlmFromStored(_StoredValue(stored), _AccessContext(object._core))
    }
  }

  /// Converts a stored value. A list or dictionary nested in a collection comes back as an unmanaged copy;
  /// a link to an object that no longer exists reads as `.none`.
  public static func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> AnyRealmValue {
    switch value.value {
    case .null, .link: return .none
    case .list(let items):
      // Nested in another collection: a copy of the values.
      let list = List<AnyRealmValue>()
      list.append(objectsIn: items.map { _rlmFromStored(_StoredValue($0), context) })
      return .list(list)
    case .map(let entries):
      let map = Map<String, AnyRealmValue>()
      for entry in entries { map[entry.key] = _rlmFromStored(_StoredValue(entry.value), context) }
      return .dictionary(map)
    case .bool(let v): return .bool(v)
    case .int(let v): return .int(Int(v))
    case .float(let v): return .float(v)
    case .double(let v): return .double(v)
    case .string(let v): return .string(v)
    case .data(let v): return .data(v)
    case .date(let v): return .date(v)
    case .uuid(let v): return .uuid(v)
    case .objectId(let v): return .objectId(v)
    case .decimal(let v): return .decimal128(v)
    case .typedLink(let name, let key):
      guard let core = context.core, let table = core.table(named: name),
        let object = core.object(table, key) as? Object
      else { return .none }
      return .object(object)
    }
  }

  /// Converts to a stored value. An object becomes a link to it, added to the context's Realm when it is
  /// unmanaged (and stored as null when the context has no Realm); lists and dictionaries store their values.
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue {
    switch self {
    case .none: return _StoredValue(.null)
    case .int(let v): return _StoredValue(.int(Int64(v)))
    case .bool(let v): return _StoredValue(.bool(v))
    case .float(let v): return _StoredValue(.float(v))
    case .double(let v): return _StoredValue(.double(v))
    case .string(let v): return _StoredValue(.string(v))
    case .data(let v): return _StoredValue(.data(v))
    case .date(let v): return _StoredValue(.date(v))
    case .objectId(let v): return _StoredValue(.objectId(v))
    case .decimal128(let v): return _StoredValue(.decimal(v))
    case .uuid(let v): return _StoredValue(.uuid(v))
    case .object(let object):
      guard let core = context.core, case .link(let key) = core.linkValue(to: object), let table = object._table else {
        return _StoredValue(.null)
      }
      return _StoredValue(.typedLink(className: table.name, key: key))
    case .list(let list):
      return _StoredValue(.list(list.map { $0._rlmToStored(context).value }))
    case .dictionary(let map):
      return _StoredValue(
        .map(
          map.asKeyValueSequence().map { RowValue.MapEntry(key: $0.key, value: $0.value._rlmToStored(context).value) }))
    }
  }

  /// Converts a value given to `init(value:)` or a setter: nil and `NSNull` give `.none`; a supported value,
  /// object, `List` or `Map` is wrapped; an array or a string-keyed dictionary becomes a new list or dictionary.
  /// Nil when the value, or an element, is not supported.
  public static func _rlmFromAny(_ value: Any?) -> AnyRealmValue? {
    guard let value, !(value is NSNull) else { return AnyRealmValue.none }
    if let same = value as? AnyRealmValue { return same }
    if let object = value as? Object { return .object(object) }
    switch value {
    case let v as Int: return .int(v)
    case let v as Bool: return .bool(v)
    case let v as Float: return .float(v)
    case let v as Double: return .double(v)
    case let v as String: return .string(v)
    case let v as Data: return .data(v)
    case let v as Date: return .date(v)
    case let v as ObjectId: return .objectId(v)
    case let v as Decimal128: return .decimal128(v)
    case let v as UUID: return .uuid(v)
    case let v as List<AnyRealmValue>: return .list(v)
    case let v as Map<String, AnyRealmValue>: return .dictionary(v)
    case let items as [Any?]:
      var values: [AnyRealmValue] = []
      for item in items {
        guard let value = _rlmFromAny(item) else { return nil }
        values.append(value)
      }
      let list = List<AnyRealmValue>()
      list.append(objectsIn: values)
      return .list(list)
    case let entries as [String: Any?]:
      let map = Map<String, AnyRealmValue>()
      for (key, item) in entries {
        guard let value = _rlmFromAny(item) else { return nil }
        map[key] = value
      }
      return .dictionary(map)
    default:
      if let stored = RowValue(scalar: value), case .int(let i) = stored { return .int(Int(i)) }
      return nil
    }
  }

  /// Returns true when both hold the same kind of value and the values are equal. Objects are equal when they
  /// are the same instance or the same stored object; lists and dictionaries when their contents are equal.
  public static func == (lhs: AnyRealmValue, rhs: AnyRealmValue) -> Bool {
    switch (lhs, rhs) {
    case (.none, .none): return true
    case (.int(let a), .int(let b)): return a == b
    case (.bool(let a), .bool(let b)): return a == b
    case (.float(let a), .float(let b)): return a == b
    case (.double(let a), .double(let b)): return a == b
    case (.string(let a), .string(let b)): return a == b
    case (.data(let a), .data(let b)): return a == b
    case (.date(let a), .date(let b)): return a == b
    case (.object(let a), .object(let b)): return a == b || a.isSameObject(as: b)
    case (.objectId(let a), .objectId(let b)): return a == b
    case (.decimal128(let a), .decimal128(let b)): return a == b
    case (.uuid(let a), .uuid(let b)): return a == b
    case (.list(let a), .list(let b)): return a === b || Array(a) == Array(b)
    case (.dictionary(let a), .dictionary(let b)):
      return a === b
        || Dictionary(uniqueKeysWithValues: a.asKeyValueSequence().map { ($0.key, $0.value) })
          == Dictionary(uniqueKeysWithValues: b.asKeyValueSequence().map { ($0.key, $0.value) })
    default: return false
    }
  }

  /// Hashes the value held (a dictionary by its count and keys).
  public func hash(into hasher: inout Hasher) {
    switch self {
    case .none: hasher.combine(0)
    case .int(let v): hasher.combine(v)
    case .bool(let v): hasher.combine(v)
    case .float(let v): hasher.combine(v)
    case .double(let v): hasher.combine(v)
    case .string(let v): hasher.combine(v)
    case .data(let v): hasher.combine(v)
    case .date(let v): hasher.combine(v)
    case .object(let v):
      // As `==` compares them: a managed object by its stored identity, whatever the instance.
      if v._core != nil, let table = v._table {
        hasher.combine(table.name)
        hasher.combine(v._key)
      } else {
        hasher.combine(ObjectIdentifier(v))
      }
    case .objectId(let v): hasher.combine(v)
    case .decimal128(let v): hasher.combine(v)
    case .uuid(let v): hasher.combine(v)
    case .list(let v): hasher.combine(Array(v))
    case .dictionary(let v):
      hasher.combine(v.count)
      for key in v.keys.sorted() { hasher.combine(key) }
    }
  }
}
