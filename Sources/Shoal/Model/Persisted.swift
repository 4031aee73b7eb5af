import Atomics
import Foundation
import Synchronization

/// Declares a property of an `Object` or `EmbeddedObject` subclass that Shoal stores.
///
/// ```swift
/// class Dog: Object {
///   @Persisted(primaryKey: true) var _id: ObjectId
///   @Persisted(indexed: true) var name: String
///   @Persisted var age = 3
///   @Persisted var owner: Person?
///   @Persisted var toys: List<String>
///   @Persisted(originProperty: "dogs") var walkers: LinkingObjects<Person>
/// }
/// ```
///
/// A property declared without a default is `nil` for optionals, zero for numbers, false, an
/// empty string or data, and a new random value for `UUID` and `ObjectId`. Unmanaged objects
/// keep their values in the wrapper; managed objects read and write the Realm.
@propertyWrapper
public struct Persisted<Value: _Persistable> {
  // Inlinable, so that each model's wrappers are specialised in its own module: no generic
  // metadata lookups on every property access.
  @usableFromInline enum Storage {
    case unmanaged(Value)
    case unmanagedNoDefault
  }
  /// The value of an unmanaged property.
  @usableFromInline var storage: Storage
  @usableFromInline let options: PersistedOptions
  /// The property's index once its object is managed, -1 before. A plain field rather than a
  /// case of `storage`: an object is made managed through the type-erased wrapper type, where
  /// writing a generic enum costs metadata lookups, while this is one store at an offset
  /// computed once per class (`ClassInfo.Field.managedIndexOffset`).
  @usableFromInline var managedIndex = -1
  /// The object a managed wrapper is a field of, for `encode(to:)`, which is called on the
  /// wrapper alone. Not retained: the wrapper lives inside that object.
  @usableFromInline var owner: Unmanaged<ObjectBase>?

  /// Declares a property with the type's default value.
  @inlinable public init() {
    storage = .unmanagedNoDefault
    options = PersistedOptions()
  }

  /// Declares a property with a default value.
  @inlinable public init(wrappedValue value: Value) {
    storage = .unmanaged(value)
    options = PersistedOptions()
  }

  @usableFromInline init(storage: Storage, options: PersistedOptions) {
    self.storage = storage
    self.options = options
  }

  /// `@Persisted` can only be used on `Object` and `EmbeddedObject` subclasses.
  @available(*, unavailable, message: "@Persisted can only be used as a property on a Realm object")
  public var wrappedValue: Value {
    get { fatalError("@Persisted can only be used as a property on a Realm object") }
    // swift-format-ignore
    set { fatalError("@Persisted can only be used as a property on a Realm object") }
  }

  /// Routes reads and writes of managed objects to their Realm.
  @inlinable
  public static subscript<EnclosingSelf: ObjectBase>(
    _enclosingInstance observed: EnclosingSelf,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
    storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
  ) -> Value {
    get {
      let wrapper = _wrapper(observed, storageKeyPath)
      let index = wrapper?.pointee.managedIndex ?? observed[keyPath: storageKeyPath].managedIndex
      if index >= 0 {
        if let probe = observed._probe {
          probe.record(observed, index)
          return Value._rlmProbe(probe)
        }
        return Value._rlmGet(observed, index)
      }
      switch wrapper?.pointee.storage ?? observed[keyPath: storageKeyPath].storage {
      case .unmanaged(let value):
        return value
      case .unmanagedNoDefault:
        let value = Value._rlmDefaultValue()
        if let wrapper {
          wrapper.pointee.storage = .unmanaged(value)
        } else {
          observed[keyPath: storageKeyPath].storage = .unmanaged(value)
        }
        return value
      }
    }
    set {
      let wrapper = _wrapper(observed, storageKeyPath)
      let index = wrapper?.pointee.managedIndex ?? observed[keyPath: storageKeyPath].managedIndex
      if index >= 0 {
        Value._rlmSet(observed, index, newValue)
      } else if let wrapper {
        wrapper.pointee.storage = .unmanaged(newValue)
      } else {
        observed[keyPath: storageKeyPath].storage = .unmanaged(newValue)
      }
    }
  }

  /// The wrapper's address from its cached offset (one lookup), so that an access does not
  /// project the key path twice; nil when the offset is not known (use the key path).
  @inlinable static func _wrapper<EnclosingSelf: ObjectBase>(
    _ observed: EnclosingSelf, _ storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
  ) -> UnsafeMutablePointer<Persisted<Value>>? {
    guard let offset = _persistedOffset(observed, storageKeyPath) else { return nil }
    // `observed` is alive (the caller holds it) and the offset is one of its fields.
    return (Unmanaged.passUnretained(observed).toOpaque() + offset).assumingMemoryBound(to: Persisted<Value>.self)
  }
}

/// Options given to `@Persisted`.
@usableFromInline struct PersistedOptions: Sendable {
  @usableFromInline var indexed = false
  @usableFromInline var primaryKey = false
  @usableFromInline var originProperty: String?

  @usableFromInline init(indexed: Bool = false, primaryKey: Bool = false, originProperty: String? = nil) {
    self.indexed = indexed
    self.primaryKey = primaryKey
    self.originProperty = originProperty
  }
}

// RealmSwift constrains these initialisers on the stored type, so an enum or a custom type
// stored as a type that can be indexed or a primary key can be one too.
extension Persisted where Value.PersistedType: _Indexable {
  /// Declares an indexed property: equality queries on it use the index.
  @inlinable public init(indexed: Bool) {
    self.init(storage: .unmanagedNoDefault, options: PersistedOptions(indexed: indexed))
  }
  /// Declares an indexed property with a default value.
  @inlinable public init(wrappedValue value: Value, indexed: Bool) {
    self.init(storage: .unmanaged(value), options: PersistedOptions(indexed: indexed))
  }
}

extension Persisted where Value.PersistedType: _PrimaryKey {
  /// Declares the class's primary key. Only one property may be the primary key.
  @inlinable public init(primaryKey: Bool) {
    self.init(storage: .unmanagedNoDefault, options: PersistedOptions(primaryKey: primaryKey))
  }
  /// Declares the primary key with a default value.
  @inlinable public init(wrappedValue value: Value, primaryKey: Bool) {
    self.init(storage: .unmanaged(value), options: PersistedOptions(primaryKey: primaryKey))
  }
}

extension Persisted where Value: LinkingObjectsProtocol {
  /// Declares the objects that link to this one through `originProperty` of `Value.Element`.
  @inlinable public init(originProperty: String) {
    self.init(
      storage: .unmanaged(Value(fromOriginProperty: originProperty)),
      options: PersistedOptions(originProperty: originProperty))
  }
}

extension Persisted: CustomStringConvertible {
  /// For a managed property, `Persisted<Value>(managed: index)` with its property index; for
  /// an unmanaged one, its value's description (the type's default when none was set).
  public var description: String {
    if managedIndex >= 0 { return "Persisted<\(Value.self)>(managed: \(managedIndex))" }
    switch storage {
    case .unmanaged(let value): return "\(value)"
    case .unmanagedNoDefault: return "\(Value._rlmDefaultValue())"
    }
  }
}

/// The type-erased face of `Persisted<Value>` the schema reader and accessors use: it reads and
/// writes a wrapper at a raw address inside an object.
protocol PersistedField: SendableMetatype {
  static var valueTypeInfo: _PersistedTypeInfo { get }
  static func options(at address: UnsafeRawPointer) -> PersistedOptions
  /// Where `managedIndex` and `owner` lie inside the wrapper, for `ClassInfo.Field.makeManaged`.
  static var managedIndexOffset: Int { get }
  static var ownerOffset: Int { get }
  /// The unmanaged value (its default when never set), stored in `context`'s Realm.
  static func storedValue(at address: UnsafeMutableRawPointer, context: _AccessContext) -> RowValue
  /// The unmanaged value as `Any`.
  static func anyValue(at address: UnsafeMutableRawPointer) -> Any
  /// Sets the unmanaged value from `Any`; false when the value has the wrong type.
  static func setAnyValue(_ value: Any?, at address: UnsafeMutableRawPointer) -> Bool
  /// Takes the unmanaged value out of the wrapper (nil when none was set), leaving it empty:
  /// what `add` does once the object is managed, so that it holds no unmanaged objects.
  static func takeUnmanagedValue(at address: UnsafeMutableRawPointer) -> Any?
  /// A stored value as the property's Swift value, as `Any`.
  static func anyValue(fromStored value: RowValue, context: _AccessContext) -> Any
  /// The value of a managed object's property, as `Any`.
  static func managedAnyValue(of object: ObjectBase, index: Int) -> Any
  /// Sets a managed object's property from `Any`; false when the value has the wrong type.
  static func setManagedAnyValue(_ value: Any?, of object: ObjectBase, index: Int) -> Bool
  /// The property's collection type, for a `List`, `MutableSet` or `Map` property.
  static var collectionType: (any _KVCCollection.Type)? { get }
  /// The property's declared type.
  static var valueType: Any.Type { get }
}

extension Persisted: PersistedField {
  static var valueTypeInfo: _PersistedTypeInfo { Value._rlmTypeInfo }
  static var collectionType: (any _KVCCollection.Type)? { Value.self as? any _KVCCollection.Type }
  static var valueType: Any.Type { Value.self }

  static func options(at address: UnsafeRawPointer) -> PersistedOptions {
    address.assumingMemoryBound(to: Persisted<Value>.self).pointee.options
  }

  static var managedIndexOffset: Int {
    MemoryLayout<Persisted<Value>>.offset(of: \Persisted<Value>.managedIndex)!  // safe: a stored property has an offset
  }
  static var ownerOffset: Int {
    MemoryLayout<Persisted<Value>>.offset(of: \Persisted<Value>.owner)!  // safe: a stored property has an offset
  }

  static func unmanagedValue(at address: UnsafeMutableRawPointer) -> Value {
    let field = address.assumingMemoryBound(to: Persisted<Value>.self)
    switch field.pointee.storage {
    case .unmanaged(let value): return value
    case .unmanagedNoDefault:
      let value = Value._rlmDefaultValue()
      field.pointee.storage = .unmanaged(value)
      return value
    }
  }

  static func storedValue(at address: UnsafeMutableRawPointer, context: _AccessContext) -> RowValue {
    unmanagedValue(at: address)._rlmToStored(context).value
  }

  static func anyValue(at address: UnsafeMutableRawPointer) -> Any { unmanagedValue(at: address) }

  static func setAnyValue(_ value: Any?, at address: UnsafeMutableRawPointer) -> Bool {
    guard let converted = Value._rlmFromAny(value) else { return false }
    address.assumingMemoryBound(to: Persisted<Value>.self).pointee.storage = .unmanaged(converted)
    return true
  }

  static func takeUnmanagedValue(at address: UnsafeMutableRawPointer) -> Any? {
    let field = address.assumingMemoryBound(to: Persisted<Value>.self)
    guard case .unmanaged(let value) = field.pointee.storage else { return nil }
    field.pointee.storage = .unmanagedNoDefault
    return value
  }
}

extension Persisted {
  static func managedAnyValue(of object: ObjectBase, index: Int) -> Any { Value._rlmGet(object, index) }

  static func anyValue(fromStored value: RowValue, context: _AccessContext) -> Any {
    Value._rlmFromStored(_StoredValue(value), context)
  }

  static func setManagedAnyValue(_ value: Any?, of object: ObjectBase, index: Int) -> Bool {
    guard let converted = Value._rlmFromAny(value) else { return false }
    Value._rlmSet(object, index, converted)
    return true
  }
}

/// Byte offsets of `@Persisted` wrappers inside their objects, by storage key path. Each key
/// path is retained for good when first seen, so no other can ever take its address: one per
/// property the program declares.
private let persistedOffsets = Mutex<[ObjectIdentifier: Int?]>([:])

/// The offsets every thread has found, in one lock-free table read on every property access:
/// a slot holds a key path's identity and its offset in one word, so a lookup is an atomic load,
/// a multiply and a compare or two. (Each thread kept a table of its own before, reached with
/// `pthread_getspecific`; a `Dictionary` before that hashed the identity with SipHash.)
/// Entries are never removed: one per property the program declares. When the table is full,
/// lookups go to `persistedOffsets` under its lock.
private enum OffsetTable {
  /// A slot: 0 when empty, else the key path's address shifted right by 4 (objects are 16-byte
  /// aligned and user addresses take 47 bits) in the high 44 bits, and the offset plus one in
  /// the low 20 (`unproven` for a key path with no offset).
  static let capacity = 4096
  static let unproven: UInt64 = 0xF_FFFF
  // Allocated once for the life of the process and never freed: the table is global. Only
  // ever read and written through `UnsafeAtomic`.
  nonisolated(unsafe) static let table = {  // safe: only accessed through atomics (above)
    let table = UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>.allocate(capacity: capacity)
    table.initialize(repeating: UnsafeAtomic<UInt64>.Storage(0), count: capacity)
    return table
  }()

  @inline(__always) static func atomic(_ i: Int) -> UnsafeAtomic<UInt64> { UnsafeAtomic(at: table + i) }

  @inline(__always) static func tag(_ id: ObjectIdentifier) -> UInt64 { UInt64(UInt(bitPattern: id)) >> 4 }

  @inline(__always) static func start(_ tag: UInt64) -> Int {
    Int(truncatingIfNeeded: (tag &* 0x9E37_79B9_7F4A_7C15) >> 52) & (capacity - 1)
  }

  /// The offset recorded for `id`: `.some(nil)` when it has none, nil when not recorded.
  @inline(__always) static func lookup(_ id: ObjectIdentifier) -> Int?? {
    let tag = tag(id)
    var i = start(tag)
    for _ in 0..<capacity {
      let word = atomic(i).load(ordering: .relaxed)
      if word == 0 { return nil }
      if word >> 20 == tag {
        let stored = word & unproven
        return .some(stored == unproven ? nil : Int(stored) - 1)
      }
      i = (i + 1) & (capacity - 1)
    }
    return nil
  }

  /// Records `offset` for `id` (no-op when the table is full or the offset does not fit).
  static func record(_ id: ObjectIdentifier, _ offset: Int?) {
    let stored: UInt64
    if let offset {
      guard offset >= 0, UInt64(offset) + 1 < unproven else { return }
      stored = UInt64(offset) + 1
    } else {
      stored = unproven
    }
    let tag = tag(id)
    guard tag < 1 << 44 else { return }
    let word = tag << 20 | stored
    var i = start(tag)
    for _ in 0..<capacity {
      let (exchanged, original) = atomic(i).compareExchange(expected: 0, desired: word, ordering: .relaxed)
      if exchanged || original >> 20 == tag { return }
      i = (i + 1) & (capacity - 1)
    }
  }
}

/// The offset of the wrapper `keyPath` names inside `object`, or nil when it cannot be proven
/// (the property is then reached through the key path). Found once per key path on a fresh
/// instance of the object's class (never the object itself, which other threads may be
/// reading): the address the key path's projection yields, accepted only if it is the offset
/// of one of the class's `@Persisted` fields as its type metadata describes them.
@usableFromInline func _persistedOffset<Root: ObjectBase, Wrapper>(
  _ object: Root, _ keyPath: ReferenceWritableKeyPath<Root, Wrapper>
) -> Int? {
  let id = ObjectIdentifier(keyPath)
  if let known = OffsetTable.lookup(id) { return known }
  let offset =
    persistedOffsets.withLock { $0[id] }
    ?? {
      let scratch = type(of: object).init()
      let base = UInt(bitPattern: Unmanaged.passUnretained(scratch).toOpaque())
      let address = withUnsafeMutablePointer(to: &scratch[keyPath: keyPath]) { UInt(bitPattern: $0) }
      var offset: Int?
      if address > base, address - base < 1 << 20 {
        let candidate = Int(address - base)
        if ClassInfo.of(type(of: scratch)).fields.contains(where: { $0.offset == candidate }) { offset = candidate }
      }
      withExtendedLifetime(scratch) {}
      _ = Unmanaged.passRetained(keyPath)  // kept alive for good: see `persistedOffsets`
      persistedOffsets.withLock { $0[id] = offset }
      return offset
    }()
  OffsetTable.record(id, offset)
  return offset
}

// MARK: - Codable

extension Persisted: Encodable where Value: Encodable {
  /// Encodes the property's value (read from the Realm for a managed object).
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    if managedIndex >= 0 {
      guard let owner else {
        throw EncodingError.invalidValue(
          Value.self,
          EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "A detached managed property"))
      }
      // The wrapper is a field of `owner`, which the encoder holds while encoding its fields.
      try container.encode(Value._rlmGet(owner.takeUnretainedValue(), managedIndex))
      return
    }
    switch storage {
    case .unmanaged(let value):
      try container.encode(value)
    case .unmanagedNoDefault:
      try container.encode(Value._rlmDefaultValue())
    }
  }
}

extension Persisted: Decodable where Value: Decodable {
  /// Decodes an unmanaged property holding the decoded value.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    self.init(wrappedValue: try container.decode(Value.self))
  }
}

extension KeyedDecodingContainer {
  /// A `@Persisted` property missing from the input keeps its default value, as in RealmSwift.
  public func decode<T: _Persistable & Decodable>(_ type: Persisted<T>.Type, forKey key: Key) throws -> Persisted<T> {
    try decodeIfPresent(type, forKey: key) ?? Persisted<T>()
  }
}
