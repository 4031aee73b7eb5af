import Foundation

/// What `CustomPersistable` and `FailableCustomPersistable` share: a type stored as another
/// type Shoal supports, its `PersistedType` (RealmSwift's `_CustomPersistable`): a primitive
/// type or an `EmbeddedObject`.
public protocol _CustomPersistable: _RealmCollectionValueInsideOptional
where PersistedType: _RealmCollectionValueInsideOptional {
  /// The value to store.
  var persistableValue: PersistedType { get }
  /// The value a stored one maps to; nil when it maps to none.
  static func _rlmCustom(from persisted: PersistedType) -> Self?
}

/// A type stored as another type Shoal supports (RealmSwift's `CustomPersistable`), so that
/// models can declare properties of it: `@Persisted var url: URL` once `URL` is mapped to a
/// `String`.
///
/// ```swift
/// struct Celsius: CustomPersistable, Hashable {
///   typealias PersistedType = Double
///   var degrees: Double
///   init(persistedValue: Double) { degrees = persistedValue }
///   var persistableValue: Double { degrees }
/// }
/// class Reading: Object {
///   @Persisted var temperature: Celsius
///   @Persisted var history: List<Celsius>
/// }
/// ```
///
/// Queries test the persisted value; a query argument may be of either type
/// (`filter("temperature > %@", Celsius(persistedValue: 20))`).
public protocol CustomPersistable: _CustomPersistable {
  /// The value for a stored `persistedValue`.
  init(persistedValue: PersistedType)
}

/// A type stored as another type Shoal supports, where not every stored value maps back to one
/// (RealmSwift's `FailableCustomPersistable`): a stored value that does not reads as nil in an
/// optional property and stops the process in a non-optional one, as RealmSwift does.
///
/// ```swift
/// extension URL: FailableCustomPersistable {
///   public typealias PersistedType = String
///   public init?(persistedValue: String) { self.init(string: persistedValue) }
///   public var persistableValue: String { absoluteString }
/// }
/// ```
public protocol FailableCustomPersistable: _CustomPersistable {
  /// The value for a stored `persistedValue`, or nil when there is none.
  init?(persistedValue: PersistedType)
}

extension CustomPersistable {
  /// `Self(persistedValue:)`, which always gives a value.
  public static func _rlmCustom(from persisted: PersistedType) -> Self? { Self(persistedValue: persisted) }
}

extension FailableCustomPersistable {
  /// `Self(persistedValue:)`: nil when the persisted value maps to none.
  public static func _rlmCustom(from persisted: PersistedType) -> Self? { Self(persistedValue: persisted) }
}

extension _CustomPersistable {
  /// Stored as the persisted type (one mapped to an embedded object is a link that is absent
  /// until a value is set: it then reads as the persisted type's default).
  public static var _rlmTypeInfo: _PersistedTypeInfo {
    var info = PersistedType._rlmTypeInfo
    info.isMapped = true
    return info
  }

  /// The value for the persisted type's default; stops the process when that maps to none.
  public static func _rlmDefaultValue() -> Self { converted(PersistedType._rlmDefaultValue()) }

  /// Converts a stored persisted value; a missing embedded object reads as the persisted type's default.
  /// Stops the process when the value maps to none, as RealmSwift does in a non-optional context.
  public static func _rlmFromStored(_ value: _StoredValue, _ context: _AccessContext) -> Self {
    // No embedded object stored yet: the persisted type's default.
    if value.value.isNull, PersistedType._rlmTypeInfo.type == .object { return _rlmDefaultValue() }
    return converted(PersistedType._rlmFromStored(value, context))
  }

  /// Converts a stored persisted value, or nil when it maps to none or no embedded object is stored.
  public static func _rlmFromStoredIfValid(_ value: _StoredValue, _ context: _AccessContext) -> Self? {
    if value.value.isNull, PersistedType._rlmTypeInfo.type == .object { return nil }
    return PersistedType._rlmFromStoredIfValid(value, context).flatMap(_rlmCustom(from:))
  }

  /// Stores `persistableValue`.
  public func _rlmToStored(_ context: _AccessContext) -> _StoredValue { persistableValue._rlmToStored(context) }

  /// A key path ends at a mapped value, as in RealmSwift (`\.location.x` names "location"): the
  /// probe is the default value, whose properties record nothing.
  public static func _rlmProbe(_ probe: _KeyPathProbe) -> Self { _rlmDefaultValue() }

  /// Converts a value of this type or of the persisted type; nil or `NSNull` gives the default value when the
  /// persisted type is an object. Nil when the value maps to none or is of neither type.
  public static func _rlmFromAny(_ value: Any?) -> Self? {
    if let value = value as? Self { return value }
    // A type mapped to an embedded object has a value even when none is given, as in RealmSwift.
    if unwrapOptional(value) == nil || value is NSNull, PersistedType._rlmTypeInfo.objectType != nil {
      return _rlmDefaultValue()
    }
    return PersistedType._rlmFromAny(value).flatMap(_rlmCustom(from:))
  }

  /// Whether `value` is a valid persisted value that maps to no value of this type.
  static func _rlmIsUnmappable(_ value: Any) -> Bool {
    guard let persisted = PersistedType._rlmFromAny(value) else { return false }
    return _rlmCustom(from: persisted) == nil
  }

  /// The value for `persisted`; RealmSwift's failure when it maps to none.
  static func converted(_ persisted: PersistedType) -> Self {
    guard let value = _rlmCustom(from: persisted) else {
      fatalError(
        "Failed to convert persisted value '\(persisted)' to type '\(Self.self)' in a non-optional context.")
    }
    return value
  }

  /// The persisted value, as `Any`, for query arguments.
  var _rlmPersistedAny: Any { persistableValue }
}
