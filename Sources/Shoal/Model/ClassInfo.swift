@_spi(Reflection) import Swift
import Synchronization

/// The schema of one `Object` or `EmbeddedObject` subclass, read once from the class's own
/// type metadata: the stored `@Persisted` fields, their offsets and their options.
final class ClassInfo: Sendable {
  /// One `@Persisted` property.
  struct Field: Sendable {
    var name: String
    var index: Int
    /// Byte offset of the `Persisted` wrapper inside an instance.
    var offset: Int
    var wrapperType: any PersistedField.Type
    var typeInfo: _PersistedTypeInfo
    var options: PersistedOptions
    /// Offsets of the wrapper's `managedIndex` and `owner` (from the wrapper's start).
    var managedIndexOffset: Int
    var ownerOffset: Int

    /// Makes the wrapper of an instance at `base` (`object`'s address) managed: two plain stores.
    func makeManaged(base: UnsafeMutableRawPointer, object: ObjectBase) {
      // `base` is `object`'s address and the offsets lie inside this field's wrapper.
      (base + offset + managedIndexOffset).storeBytes(of: index, as: Int.self)
      (base + offset + ownerOffset).storeBytes(
        of: Optional(Unmanaged.passUnretained(object)), as: Unmanaged<ObjectBase>?.self)
    }

    var typeDescription: String {
      switch typeInfo.collection {
      case .list: return "array<\(typeInfo.type)>"
      case .set: return "set<\(typeInfo.type)>"
      case .map: return "dictionary<string, \(typeInfo.type)>"
      case .linkingObjects: return "linking objects"
      case .none: return typeInfo.type == .object ? "object" : "\(typeInfo.type)"
      }
    }
  }

  let type: ObjectBase.Type
  let className: String
  let isEmbedded: Bool
  let fields: [Field]
  /// Per field, the offsets (in an instance) of its wrapper's `managedIndex` and `owner`, and
  /// its index: what `makeManaged` writes, apart from the rest of `Field`, whose copies (names,
  /// existentials) cost reference counting on every object made.
  private let managedSlots: [(managedIndex: Int, owner: Int, index: Int)]
  let primaryKeyIndex: Int?
  private let byName: [String: Int]

  func field(named name: String) -> Field? { byName[name].map { fields[$0] } }

  private init(type: ObjectBase.Type) {
    self.type = type
    className = type._realmObjectName() ?? String(describing: type)
    isEmbedded = type is EmbeddedObject.Type
    var found: [(name: String, offset: Int, wrapper: any PersistedField.Type)] = []
    _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1)) { cName, offset, fieldType, _ in
      // Option 1 is `.classType`: classes are walked with their superclasses' fields.
      if let wrapper = fieldType as? any PersistedField.Type {
        var fieldName = String(cString: cName)
        if fieldName.hasPrefix("_") { fieldName.removeFirst() }
        found.append((fieldName, offset, wrapper))
      }
      return true
    }
    found.sort { $0.offset < $1.offset }
    // A probe instance carries each wrapper's options (indexed, primaryKey, originProperty).
    let probe = type.init()
    let base = Unmanaged.passUnretained(probe).toOpaque()
    var fields: [Field] = []
    var primary: Int?
    // RealmSwift reads the legacy `primaryKey()` for every class, `@Persisted` ones too
    // (`indexedProperties()` and `ignoredProperties()` only apply to `@objc dynamic` ones).
    let legacyPrimaryKey = (type as? Object.Type)?.primaryKey()
    for (index, item) in found.enumerated() {
      var options = item.wrapper.options(at: UnsafeRawPointer(base + item.offset))
      if legacyPrimaryKey == item.name { options.primaryKey = true }
      if options.primaryKey { primary = primary ?? index }
      fields.append(
        Field(
          name: item.name, index: index, offset: item.offset, wrapperType: item.wrapper,
          typeInfo: item.wrapper.valueTypeInfo, options: options, managedIndexOffset: item.wrapper.managedIndexOffset,
          ownerOffset: item.wrapper.ownerOffset))
    }
    withExtendedLifetime(probe) {}
    self.fields = fields
    managedSlots = fields.map { ($0.offset + $0.managedIndexOffset, $0.offset + $0.ownerOffset, $0.index) }
    primaryKeyIndex = primary
    byName = Dictionary(fields.map { ($0.name, $0.index) }, uniquingKeysWith: { first, _ in first })
  }

  private static let cache = Mutex<[ObjectIdentifier: ClassInfo]>([:])

  /// The schema of `type`, read on first use.
  static func of(_ type: ObjectBase.Type) -> ClassInfo {
    let id = ObjectIdentifier(type)
    if let info = cache.withLock({ $0[id] }) { return info }
    let info = ClassInfo(type: type)
    return cache.withLock { cache in
      if let existing = cache[id] { return existing }
      cache[id] = info
      return info
    }
  }

  /// Problems RealmSwift reports for this class's declaration, in its wording.
  func validationErrors() -> [String] {
    var errors: [String] = []
    let primaries = fields.filter { $0.options.primaryKey }
    if primaries.count > 1 {
      errors.append(
        "Properties '\(primaries[1].name)' and '\(primaries[0].name)' are both marked as the primary key of '\(className)'"
      )
    }
    if isEmbedded, !primaries.isEmpty {
      errors.append("Embedded object type '\(className)' cannot have a primary key.")
    }
    for field in fields {
      let info = field.typeInfo
      if info.type == .object, info.collection == .none, !info.isOptional, !info.isMapped {
        errors.append("Object property '\(field.name)' must be marked as optional.")
      }
      if info.type == .object, info.collection == .list || info.collection == .set, info.isOptional {
        errors.append("Property '\(className).\(field.name)' of type '\(field.typeDescription)' cannot be nullable.")
      }
      if info.collection == .set, let target = info.objectType, target is EmbeddedObject.Type {
        errors.append("Set property '\(className).\(field.name)' cannot contain embedded objects.")
      }
    }
    if fields.isEmpty {
      errors.append("Class '\(className)' has no persisted properties; declare them with @Persisted.")
    }
    return errors
  }

  /// The classes this class links to (directly).
  var linkedTypes: [ObjectBase.Type] { fields.compactMap { $0.typeInfo.objectType } }

  /// A new managed instance of this class, its wrappers pointing at property indexes.
  func makeManaged() -> ObjectBase {
    let object = type.init()
    let base = Unmanaged.passUnretained(object).toOpaque()
    let owner = Optional(Unmanaged.passUnretained(object))
    for slot in managedSlots {
      // Offsets come from `type`'s metadata and `object` is an instance of `type`: the same
      // two stores as `Field.makeManaged`.
      (base + slot.managedIndex).storeBytes(of: slot.index, as: Int.self)
      (base + slot.owner).storeBytes(of: owner, as: Unmanaged<ObjectBase>?.self)
    }
    return object
  }

  /// The schema of the class as declared in code.
  var objectSchema: ObjectSchema {
    var schema = ObjectSchema(
      className: className, isEmbedded: isEmbedded,
      properties: fields.map { field in
        Property(
          name: field.name, type: field.typeInfo.type, isOptional: field.typeInfo.isOptional,
          collection: field.typeInfo.collection,
          objectClassName: field.typeInfo.objectType.map { ClassInfo.of($0).className },
          linkOriginPropertyName: field.options.originProperty,
          isIndexed: field.options.indexed || field.options.primaryKey,
          isPrimary: field.options.primaryKey)
      })
    schema.objectType = type
    return schema.mappingColumnNames(type.propertiesMapping())
  }
}

/// Records which properties a key path reads, by evaluating it on probe objects whose getters
/// record their property instead of reading storage. Not for direct use.
public final class _KeyPathProbe {
  private(set) var path: [String] = []
  private var probes: [ObjectIdentifier: ObjectBase] = [:]

  init() {}

  @usableFromInline func record(_ object: ObjectBase, _ index: Int) {
    path.append(object._classInfo.fields[index].name)
  }

  /// A probe instance of `type`, reused for the whole path.
  func probeObject<T: ObjectBase>(of type: T.Type) -> T {
    if let existing = probes[ObjectIdentifier(type)] as? T { return existing }
    let object = ClassInfo.of(type).makeManaged()
    object._probe = self
    probes[ObjectIdentifier(type)] = object
    // `makeManaged` builds an instance of exactly `type`.
    return object as! T  // safe: makeManaged() instantiates exactly `type`, which is T
  }

  /// The property names `keyPath` reads from `Root`, e.g. `["dog", "name"]` for `\Person.dog.name`.
  static func names<Root: ObjectBase, Value>(of keyPath: KeyPath<Root, Value>) -> [String] {
    let probe = _KeyPathProbe()
    let root = probe.probeObject(of: Root.self)
    _ = root[keyPath: keyPath]
    return probe.path
  }

  static func name<Root: ObjectBase, Value>(of keyPath: KeyPath<Root, Value>) -> String {
    names(of: keyPath).joined(separator: ".")
  }

  /// The dotted property path a partial key path reads, e.g. "dog.name".
  static func name<Root: ObjectBase>(ofPartial keyPath: PartialKeyPath<Root>) -> String {
    let probe = _KeyPathProbe()
    let root = probe.probeObject(of: Root.self)
    _ = root[keyPath: keyPath]
    return probe.path.joined(separator: ".")
  }
}
