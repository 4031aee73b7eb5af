import Foundation

/// A stored value handed between `@Persisted` and the object layer. Not for direct use.
public struct _StoredValue {
  let value: RowValue
  init(_ value: RowValue) { self.value = value }
}

/// The Realm an object or collection belongs to, as seen by value conversions. Not for direct use.
///
/// A context lives only for the conversion it is made for, and whoever makes it holds the
/// Realm (an object, a collection), so it refers to the Realm without retaining it: most
/// conversions (numbers, strings, dates) never look at it, and a retain of a Realm is slow.
public struct _AccessContext {
  private let reference: Unmanaged<RealmCore>?
  /// The class of `Results<DynamicObject>` elements (`Realm.dynamicObjects`).
  let dynamicTable: TableInfo?
  init(_ core: RealmCore?, dynamicTable: TableInfo? = nil) {
    reference = core.map { Unmanaged.passUnretained($0) }
    self.dynamicTable = dynamicTable
  }
  init(reference: Unmanaged<RealmCore>?) {
    self.reference = reference
    dynamicTable = nil
  }
  /// The Realm, or nil for unmanaged values.
  var core: RealmCore? { reference?.takeUnretainedValue() }
}

/// A type with the type it is stored as (RealmSwift's `_HasPersistedType`): `Self` for the types
/// Shoal stores directly, the raw value for a `PersistableEnum`, the mapped type for a
/// `CustomPersistable`. Generic code constrains on it, as RealmSwift's does:
///
/// ```swift
/// func lowest<V: RealmCollectionValue>(_ list: List<V>) -> V? where V.PersistedType: MinMaxType {
///   list.min()
/// }
/// ```
public protocol _HasPersistedType {
  /// The type the value is stored as.
  associatedtype PersistedType
}

/// A type whose schema property can be found from the type alone (RealmSwift's
/// `_RealmSchemaDiscoverable`): what generic code asks of a value type.
public protocol _RealmSchemaDiscoverable {
  /// The property type values of this type are stored as.
  static var _rlmType: PropertyType { get }
  /// Whether the property is optional.
  static var _rlmOptional: Bool { get }
  /// Whether a legacy declaration needs `@objc`: never on Linux.
  static var _rlmRequireObjc: Bool { get }
}

/// A type that can be stored in a `@Persisted` property: RealmSwift's `_Persistable`.
///
/// Conforming types are the ones RealmSwift supports: `Bool`, the integer types, `Float`,
/// `Double`, `String`, `Data`, `Date`, `UUID`, `ObjectId`, `Decimal128`, `AnyRealmValue`,
/// `PersistableEnum` enums, optionals of these, `Object` subclasses (as optionals), `List`,
/// `MutableSet`, `Map` and `LinkingObjects`. Do not conform your own types; use
/// `PersistableEnum` for enums.
public protocol _Persistable: _RealmSchemaDiscoverable, _HasPersistedType where PersistedType: _Persistable {
  /// How the type is stored.
  static var _rlmTypeInfo: _PersistedTypeInfo { get }
  /// The value of a property declared without a default.
  static func _rlmDefaultValue() -> Self
  /// Converts a stored value.
  static func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> Self
  /// Converts to a stored value; links add unmanaged objects to the context's Realm.
  func _rlmToStored(_ context: _AccessContext) -> _StoredValue
  /// Reads the property `index` of a managed object.
  static func _rlmGet(_ object: ObjectBase, _ index: Int) -> Self
  /// Writes the property `index` of a managed object.
  static func _rlmSet(_ object: ObjectBase, _ index: Int, _ value: Self)
  /// The value a key-path probe returns (a probe object for links).
  static func _rlmProbe(_ probe: _KeyPathProbe) -> Self
  /// Converts a value given to `init(value:)`, `create(_:value:update:)` or a subscript setter.
  static func _rlmFromAny(_ value: Any?) -> Self?
  /// Converts a stored value, or nil when it is not one of the type's values (an enum's raw
  /// value it has no case for): an optional property then reads nil.
  static func _rlmFromStoredIfValid(_ value: _StoredValue, _ context: _AccessContext) -> Self?
}

extension _Persistable {
  /// The property type, from how the type is stored.
  public static var _rlmType: PropertyType { _rlmTypeInfo.type }
  /// Whether the property is optional, from how the type is stored.
  public static var _rlmOptional: Bool { _rlmTypeInfo.isOptional }
  /// Never: Linux has no `@objc` declarations.
  public static var _rlmRequireObjc: Bool { false }

  /// `_rlmFromStored(_:_:)`: every stored value is one of the type's values.
  public static func _rlmFromStoredIfValid(_ value: _StoredValue, _ context: _AccessContext) -> Self? {
    _rlmFromStored(value, context)
  }

  /// Reads property `index` of a managed object and converts it with `_rlmFromStored(_:_:)`.
  public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> Self {
    _rlmFromStored(_StoredValue(object._storedValue(at: index)), _AccessContext(reference: object._coreReference))
  }
  /// Converts `value` (adding unmanaged linked objects to the object's Realm) and writes it to property `index`
  /// of a managed object; assigning the embedded object the property already holds does nothing.
  public static func _rlmSet(_ object: ObjectBase, _ index: Int, _ value: Self) {
    // Assigning the embedded object the property already holds changes nothing, as in RealmSwift.
    if let linked = Self._rlmTypeInfo.objectType, linked is EmbeddedObject.Type, let embedded = value as? ObjectBase,
      embedded._core === object._core, embedded._table != nil, object._storedValue(at: index) == .link(embedded._key)
    {
      return
    }
    object._setStoredValue(value._rlmToStored(_AccessContext(object._core)).value, at: index)
  }
  /// The default value: a key path ends at a property of this type.
  public static func _rlmProbe(_ probe: _KeyPathProbe) -> Self { _rlmDefaultValue() }
  /// The value when it is of this type; nil otherwise.
  public static func _rlmFromAny(_ value: Any?) -> Self? { value as? Self }
}

/// A type that can be an element of `List`, `MutableSet`, `Results` or a value of `Map`.
public protocol RealmCollectionValue: _Persistable, Hashable, SendableMetatype
where PersistedType: RealmCollectionValue {}

/// A type that can be an element of a collection inside an `Optional` (RealmSwift's
/// `_RealmCollectionValueInsideOptional`): every collection value but `AnyRealmValue` and
/// optionals themselves.
public protocol _RealmCollectionValueInsideOptional: RealmCollectionValue
where PersistedType: _RealmCollectionValueInsideOptional {}

/// A type that can be a `Map` key. Only `String`, as in RealmSwift.
public protocol _MapKey: Hashable, Sendable {
  /// The key as a string.
  var _rlmKey: String { get }
  /// Converts from a stored key.
  static func _rlmFromKey(_ key: String) -> Self
}

extension String: _MapKey {
  /// The string itself.
  public var _rlmKey: String { self }
  /// The stored key itself.
  public static func _rlmFromKey(_ key: String) -> String { key }
}

/// Types that can be indexed with `@Persisted(indexed: true)`.
public protocol _Indexable {}
/// Types that can be a primary key with `@Persisted(primaryKey: true)`.
public protocol _PrimaryKey {}
/// Types usable with `min(ofProperty:)` and `max(ofProperty:)`; a collection's `min()` and
/// `max()` need their elements' `PersistedType` to be one.
public protocol MinMaxType {}
/// Types usable with `sum(ofProperty:)` and `average(ofProperty:)`; a collection's `sum()` and
/// `average()` need their elements' `PersistedType` to be one.
public protocol AddableType {}

// MARK: - Scalars

/// A scalar conversion shared by the simple types.
protocol _ScalarPersistable: RealmCollectionValue {
  static var _rlmScalarType: PropertyType { get }
  static func _rlmScalar(_ value: RowValue) -> Self?
  var _rlmScalarValue: RowValue { get }
  static var _rlmZero: Self { get }
}

extension _ScalarPersistable {
  /// Stored as the type's scalar property type, not optional.
  public static var _rlmTypeInfo: _PersistedTypeInfo { _PersistedTypeInfo(_rlmScalarType) }
  /// The type's zero value: 0, false, an empty string or data; a new date, `UUID` or `ObjectId` for those.
  public static func _rlmDefaultValue() -> Self { _rlmZero }
  /// Converts a stored scalar; numbers convert between numeric types where the type allows. Anything else,
  /// or null, reads as the zero value.
  public static func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> Self {
    _rlmScalar(value.value) ?? _rlmZero
  }
  /// The value as a stored scalar (integers of every width as 64-bit).
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue { _StoredValue(_rlmScalarValue) }
  /// Converts a value of this type, or a plain Swift scalar of a compatible type (a number of another width or
  /// kind; a floating-point number given for an integer is rounded toward zero); nil otherwise.
  public static func _rlmFromAny(_ value: Any?) -> Self? {
    if let same = value as? Self { return same }
    guard let value, let stored = RowValue(scalar: value) else { return nil }
    return _rlmScalar(stored)
  }
}

extension Bool: _ScalarPersistable, _RealmCollectionValueInsideOptional, _Indexable {
  /// Stored as itself.
  public typealias PersistedType = Bool
  static var _rlmScalarType: PropertyType { .bool }
  static func _rlmScalar(_ value: RowValue) -> Bool? { if case .bool(let b) = value { return b } else { return nil } }
  var _rlmScalarValue: RowValue { .bool(self) }
  static var _rlmZero: Bool { false }
}

/// Integers of every width store as `Int64`.
protocol _IntPersistable: _ScalarPersistable, FixedWidthInteger {}
extension _IntPersistable {
  static var _rlmScalarType: PropertyType { .int }
  static func _rlmScalar(_ value: RowValue) -> Self? {
    switch value {
    case .int(let i): return Self(truncatingIfNeeded: i)
    case .double(let d): return Self(exactly: d.rounded(.towardZero))
    case .float(let f): return Self(exactly: f.rounded(.towardZero))
    default: return nil
    }
  }
  var _rlmScalarValue: RowValue { .int(Int64(truncatingIfNeeded: self)) }
  static var _rlmZero: Self { 0 }
}
extension Int: _IntPersistable, _Indexable, _PrimaryKey, MinMaxType, AddableType, _RealmCollectionValueInsideOptional {
  /// Stored as itself.
  public typealias PersistedType = Int
}
extension Int8: _IntPersistable, _Indexable, _PrimaryKey, MinMaxType, AddableType, _RealmCollectionValueInsideOptional {
  /// Stored as itself.
  public typealias PersistedType = Int8
}
extension Int16: _IntPersistable, _Indexable, _PrimaryKey, MinMaxType, AddableType, _RealmCollectionValueInsideOptional
{
  /// Stored as itself.
  public typealias PersistedType = Int16
}
extension Int32: _IntPersistable, _Indexable, _PrimaryKey, MinMaxType, AddableType, _RealmCollectionValueInsideOptional
{
  /// Stored as itself.
  public typealias PersistedType = Int32
}
extension Int64: _IntPersistable, _Indexable, _PrimaryKey, MinMaxType, AddableType, _RealmCollectionValueInsideOptional
{
  /// Stored as itself.
  public typealias PersistedType = Int64
}

extension Float: _ScalarPersistable, _RealmCollectionValueInsideOptional, MinMaxType, AddableType {
  /// Stored as itself.
  public typealias PersistedType = Float
  static var _rlmScalarType: PropertyType { .float }
  static func _rlmScalar(_ value: RowValue) -> Float? {
    switch value {
    case .float(let f): return f
    case .double(let d): return Float(d)
    case .int(let i): return Float(i)
    default: return nil
    }
  }
  var _rlmScalarValue: RowValue { .float(self) }
  static var _rlmZero: Float { 0 }
}

extension Double: _ScalarPersistable, _RealmCollectionValueInsideOptional, MinMaxType, AddableType {
  /// Stored as itself.
  public typealias PersistedType = Double
  static var _rlmScalarType: PropertyType { .double }
  static func _rlmScalar(_ value: RowValue) -> Double? {
    switch value {
    case .double(let d): return d
    case .float(let f): return Double(f)
    case .int(let i): return Double(i)
    default: return nil
    }
  }
  var _rlmScalarValue: RowValue { .double(self) }
  static var _rlmZero: Double { 0 }
}

extension String: _ScalarPersistable, _RealmCollectionValueInsideOptional, _Indexable, _PrimaryKey {
  /// Stored as itself.
  public typealias PersistedType = String
  static var _rlmScalarType: PropertyType { .string }
  static func _rlmScalar(_ value: RowValue) -> String? {
    if case .string(let s) = value { return s } else { return nil }
  }
  var _rlmScalarValue: RowValue { .string(self) }
  static var _rlmZero: String { "" }
}

extension Data: _ScalarPersistable, _RealmCollectionValueInsideOptional {
  /// Stored as itself.
  public typealias PersistedType = Data
  static var _rlmScalarType: PropertyType { .data }
  static func _rlmScalar(_ value: RowValue) -> Data? { if case .data(let d) = value { return d } else { return nil } }
  var _rlmScalarValue: RowValue { .data(self) }
  static var _rlmZero: Data { Data() }
}

extension Date: _ScalarPersistable, _RealmCollectionValueInsideOptional, _Indexable, MinMaxType {
  /// Stored as itself.
  public typealias PersistedType = Date
  static var _rlmScalarType: PropertyType { .date }
  static func _rlmScalar(_ value: RowValue) -> Date? { if case .date(let d) = value { return d } else { return nil } }
  var _rlmScalarValue: RowValue { .date(self) }
  /// RealmSwift gives a non-optional Date property without a default the current date.
  static var _rlmZero: Date { Date() }
}

extension UUID: _ScalarPersistable, _RealmCollectionValueInsideOptional, _Indexable, _PrimaryKey {
  /// Stored as itself.
  public typealias PersistedType = UUID
  static var _rlmScalarType: PropertyType { .UUID }
  static func _rlmScalar(_ value: RowValue) -> UUID? { if case .uuid(let u) = value { return u } else { return nil } }
  var _rlmScalarValue: RowValue { .uuid(self) }
  /// RealmSwift gives a non-optional UUID property without a default a new random value.
  static var _rlmZero: UUID { UUID() }
}

extension ObjectId: _ScalarPersistable, _RealmCollectionValueInsideOptional, _Indexable, _PrimaryKey, MinMaxType {
  /// Stored as itself.
  public typealias PersistedType = ObjectId
  static var _rlmScalarType: PropertyType { .objectId }
  static func _rlmScalar(_ value: RowValue) -> ObjectId? {
    if case .objectId(let o) = value { return o } else { return nil }
  }
  var _rlmScalarValue: RowValue { .objectId(self) }
  /// RealmSwift gives a non-optional ObjectId property without a default a newly generated value.
  static var _rlmZero: ObjectId { ObjectId.generate() }
}

extension Decimal128: _ScalarPersistable, _RealmCollectionValueInsideOptional, MinMaxType, AddableType {
  /// Stored as itself.
  public typealias PersistedType = Decimal128
  static var _rlmScalarType: PropertyType { .decimal128 }
  static func _rlmScalar(_ value: RowValue) -> Decimal128? {
    switch value {
    case .decimal(let d): return d
    case .int(let i): return Decimal128(Int(i))
    case .double(let d): return Decimal128(d)
    default: return nil
    }
  }
  var _rlmScalarValue: RowValue { .decimal(self) }
  static var _rlmZero: Decimal128 { Decimal128() }
}

// MARK: - Optionals

extension Optional: _HasPersistedType where Wrapped: _HasPersistedType {
  /// The wrapped type's persisted type, optional.
  public typealias PersistedType = Wrapped.PersistedType?
}

extension Optional: _RealmSchemaDiscoverable where Wrapped: _RealmSchemaDiscoverable {
  /// The wrapped type's property type.
  public static var _rlmType: PropertyType { Wrapped._rlmType }
  /// Always: an optional is optional.
  public static var _rlmOptional: Bool { true }
  /// Never: Linux has no `@objc` declarations.
  public static var _rlmRequireObjc: Bool { false }
}

// Only what RealmSwift lets inside an `Optional` (`AnyRealmValue` holds its own nil, and
// collections cannot be optional), so `@Persisted var x: AnyRealmValue?` does not compile, as in
// RealmSwift.
extension Optional: _Persistable where Wrapped: _RealmCollectionValueInsideOptional {
  /// Stored as the wrapped type, optional.
  public static var _rlmTypeInfo: _PersistedTypeInfo { Wrapped._rlmTypeInfo.optional() }
  /// nil.
  public static func _rlmDefaultValue() -> Wrapped? { nil }
  /// nil for a stored null or for a value the wrapped type has none for (an enum's unknown raw value);
  /// otherwise the wrapped value.
  public static func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> Wrapped? {
    if value.value.isNull { return nil }
    return Wrapped._rlmFromStoredIfValid(value, context)
  }
  /// Null for nil; otherwise the wrapped value's stored value.
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue {
    switch self {
    case .none: return _StoredValue(.null)
    case .some(let wrapped): return wrapped._rlmToStored(context)
    }
  }
  /// A link's probe object (key paths go on through it); nil for a value, which a key path
  /// ends at (a failable mapped type may have no value to probe with).
  public static func _rlmProbe(_ probe: _KeyPathProbe) -> Wrapped? {
    let info = Wrapped._rlmTypeInfo
    return info.objectType != nil && !info.isMapped ? Wrapped._rlmProbe(probe) : nil
  }
  /// `.some(nil)` for nil or `NSNull`, `.some(value)` for a value the wrapped type accepts, nil when it accepts
  /// none.
  public static func _rlmFromAny(_ value: Any?) -> Wrapped?? {
    guard let value, !(value is NSNull) else { return .some(nil) }
    if let optional = value as? Wrapped? { return .some(optional) }
    if let converted = Wrapped._rlmFromAny(value) { return .some(converted) }
    // A persisted value a failable mapped type has no value for is nil here, as in RealmSwift.
    if let mapped = Wrapped.self as? any _CustomPersistable.Type, mapped._rlmIsUnmappable(value) { return .some(nil) }
    return nil
  }
}
extension Optional: RealmCollectionValue where Wrapped: _RealmCollectionValueInsideOptional {}
extension Optional: _Indexable where Wrapped: _Indexable {}
extension Optional: _PrimaryKey where Wrapped: _PrimaryKey {}
extension NSNumber: MinMaxType, AddableType, _HasPersistedType {
  /// Aggregates can be read as `NSNumber`, as in RealmSwift.
  public typealias PersistedType = NSNumber
}
extension NSDate: MinMaxType, _HasPersistedType {
  /// `min`/`max` of dates can be read as `NSDate`, as in RealmSwift.
  public typealias PersistedType = NSDate
}
extension Optional: MinMaxType where Wrapped: MinMaxType {}
extension Optional: AddableType where Wrapped: AddableType {}

// MARK: - Enums

/// An enum that can be stored in a `@Persisted` property or a collection, by its raw value.
///
/// ```swift
/// enum TaskStatus: String, PersistableEnum { case open, done }
/// class Task: Object { @Persisted var status = TaskStatus.open }
/// ```
public protocol PersistableEnum: _RealmCollectionValueInsideOptional, CaseIterable, RawRepresentable, MinMaxType,
  Comparable
where RawValue: _RealmCollectionValueInsideOptional & Comparable, PersistedType == RawValue {}

extension PersistableEnum {
  /// Enums order by their raw values, as RealmSwift's do.
  public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

  /// Stored as the raw value's type.
  public static var _rlmTypeInfo: _PersistedTypeInfo { RawValue._rlmTypeInfo }
  /// The first case; stops the process when the enum has no cases.
  public static func _rlmDefaultValue() -> Self {
    // A CaseIterable enum conforming to PersistableEnum has at least one case to be useful;
    // RealmSwift likewise uses the first case as the default.
    guard let first = allCases.first else { fatalError("PersistableEnum \(Self.self) has no cases") }
    return first
  }
  /// The case for the stored raw value; stops the process when there is none, as RealmSwift does.
  public static func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> Self {
    let raw = RawValue._rlmFromStored(value, context)
    guard let result = Self(rawValue: raw) else {
      fatalError("Invalid value '\(raw)' stored for enum \(Self.self)")
    }
    return result
  }
  /// The case for the stored raw value, or nil when there is none.
  public static func _rlmFromStoredIfValid(_ value: _StoredValue, _ context: _AccessContext) -> Self? {
    Self(rawValue: RawValue._rlmFromStored(value, context))
  }
  /// Stores the raw value.
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue { rawValue._rlmToStored(context) }
  /// Converts a case, or a raw value that has one; nil otherwise.
  public static func _rlmFromAny(_ value: Any?) -> Self? {
    if let same = value as? Self { return same }
    return RawValue._rlmFromAny(value).flatMap { Self(rawValue: $0) }
  }

  /// The first case, as RealmSwift gives a `PersistableEnum` property declared without a value.
  public init() { self = Self._rlmDefaultValue() }
}

/// The value inside any depth of optionals boxed as `Any`, or nil when one of them is nil.
func unwrapOptional(_ value: Any?) -> Any? {
  guard let value else { return nil }
  let mirror = Mirror(reflecting: value)
  guard mirror.displayStyle == .optional else { return value }
  return mirror.children.first.flatMap { unwrapOptional($0.value) }
}

extension RowValue {
  /// The stored form of a plain Swift value (numbers of any width, strings, dates, …), or nil.
  init?(scalar value: Any) {
    switch value {
    case let v as Bool: self = .bool(v)
    case let v as Int: self = .int(Int64(v))
    case let v as Int8: self = .int(Int64(v))
    case let v as Int16: self = .int(Int64(v))
    case let v as Int32: self = .int(Int64(v))
    case let v as Int64: self = .int(v)
    case let v as UInt8: self = .int(Int64(v))
    case let v as UInt16: self = .int(Int64(v))
    case let v as UInt32: self = .int(Int64(v))
    case let v as Float: self = .float(v)
    case let v as Double: self = .double(v)
    case let v as String: self = .string(v)
    case let v as Substring: self = .string(String(v))
    case let v as Data: self = .data(v)
    // Only a real [UInt8]: any empty array casts to [UInt8] (an empty list argument is a list).
    case let v as [UInt8] where type(of: value) == [UInt8].self: self = .data(Data(v))
    case let v as Date: self = .date(v)
    case let v as UUID: self = .uuid(v)
    case let v as ObjectId: self = .objectId(v)
    case let v as Decimal128: self = .decimal(v)
    case let v as Decimal: self = .decimal(Decimal128(value: v))
    default: return nil
    }
  }
}

// MARK: - Bridging

/// A value as key-value coding and `value(forKey:)` return it, converted to `T` (RealmSwift's
/// `dynamicBridgeCast(fromObjectiveC:)`; on Linux the values are Swift values, with `NSNull`
/// for nil). Stops the process when the value is not one of `T`'s.
///
/// ```swift
/// let names: [Any] = list.value(forKey: "self")
/// let typed: [String] = names.map { dynamicBridgeCast(fromObjectiveC: $0) }
/// ```
public func dynamicBridgeCast<T>(fromObjectiveC x: Any) -> T {
  if let value = x as? T { return value }
  if let persistable = T.self as? any _Persistable.Type, let value = persistable._rlmFromAny(x) as? T { return value }
  if x is NSNull, let none = (nil as Any?) as? T { return none }
  fatalError("Could not convert value '\(x)' to type '\(T.self)'")
}

/// A type that converts to and from the values key-value coding uses (RealmSwift's bridging
/// protocol for Objective-C; on Linux those are Swift values). Generic RealmSwift code names it
/// as a constraint; do not call its members directly.
public protocol _ObjcBridgeable {
  /// `value` as this type, or nil when it is not one; `insideOptional` says whether the value
  /// came from an optional.
  static func _rlmFromObjc(_ value: Any, insideOptional: Bool) -> Self?
  /// This value as key-value coding represents it.
  var _rlmObjcValue: Any { get }
}

extension _ObjcBridgeable where Self: _Persistable {
  /// `value` converted as a stored value of this type is (numbers across widths, `NSNull` as nil).
  public static func _rlmFromObjc(_ value: Any, insideOptional: Bool) -> Self? { _rlmFromAny(value) }
  /// The value itself.
  public var _rlmObjcValue: Any { self }
}

/// The types RealmSwift's deprecated `RealmOptional` holds; kept so code that names the
/// protocol compiles. Use `@Persisted var value: Int?` for optional numbers.
public protocol RealmOptionalType: _ObjcBridgeable {}

extension Int: RealmOptionalType {}
extension Int8: RealmOptionalType {}
extension Int16: RealmOptionalType {}
extension Int32: RealmOptionalType {}
extension Int64: RealmOptionalType {}
extension Float: RealmOptionalType {}
extension Double: RealmOptionalType {}
extension Bool: RealmOptionalType {}
extension String: _ObjcBridgeable {}
extension Data: _ObjcBridgeable {}
extension Date: _ObjcBridgeable {}
extension UUID: _ObjcBridgeable {}
extension ObjectId: _ObjcBridgeable {}
extension Decimal128: _ObjcBridgeable {}

/// A Swift value as key-value coding represents it (RealmSwift's
/// `dynamicBridgeCast(fromSwift:)`): the value itself, `NSNull` for nil.
public func dynamicBridgeCast<T>(fromSwift x: T) -> Any {
  unwrapOptional(x) ?? NSNull()
}
