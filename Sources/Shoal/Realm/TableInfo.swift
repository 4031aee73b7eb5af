import Foundation
import ShoalStorage

/// One class as stored in a file: its properties in row order and its keyspaces.
final class TableInfo: Sendable {
  let name: String
  let isEmbedded: Bool
  let properties: [Property]
  /// The Swift class, when the program declares one for this table.
  let classInfo: ClassInfo?
  let primaryKeyIndex: Int?
  let indexedProperties: [Int]
  let objectSchema: ObjectSchema
  let propertyIndex: [String: Int]
  /// Properties holding links (not linking objects) and their target classes, for the
  /// backlink index.
  let linkProperties: [(index: Int, target: String)]
  /// `AnyRealmValue` properties (and collections of them): their links name their class.
  let anyProperties: [Int]
  /// Whether each property is a `LinkingObjects` (computed, not stored in the row): looked up
  /// on every property read, so kept apart from `properties`, whose elements are costly to copy.
  let isLinkingObjects: [Bool]
  /// Whether each object's key is its primary key itself (see `derivedKey`), so rows are
  /// found by primary key without an index and stored in primary-key order. Set for a table
  /// created with a non-optional integer primary key; cleared, and the index built, when a
  /// migration leaves any row whose key is not its primary key.
  let keysFromPrimaryKey: Bool

  /// Keyspace of rows, keyed by big-endian object key.
  var keyspace: String { "o/" + name }
  /// Keyspace mapping primary-key values to object keys.
  var primaryKeyspace: String { "k/" + name }
  /// Keyspace of `OrderedIndexKey.key(value) + object key` for indexed property `index`.
  func indexKeyspace(_ index: Int) -> String { "x/" + name + "/" + properties[index].name }
  /// Where files written before indexes were ordered (`RealmSchema.indexFormat`) keep the
  /// index of property `index`, keyed by `indexKey(value)`: dropped when such a file is opened
  /// for writing, and its indexes built again.
  func unorderedIndexKeyspace(_ index: Int) -> String { "i/" + name + "/" + properties[index].name }

  init(schema: ObjectSchema, classInfo: ClassInfo?, keysFromPrimaryKey: Bool = false) {
    name = schema.className
    self.keysFromPrimaryKey = keysFromPrimaryKey && TableInfo.canDeriveKeys(schema)
    isEmbedded = schema.isEmbedded
    properties = schema.allProperties
    self.classInfo = classInfo
    var described = schema
    described.objectType = classInfo?.type
    objectSchema = described.mappingColumnNames(classInfo?.type.propertiesMapping() ?? [:])
    primaryKeyIndex = schema.allProperties.firstIndex { $0.isPrimary }
    indexedProperties = schema.allProperties.indices.filter {
      schema.allProperties[$0].isIndexed && !schema.allProperties[$0].isPrimary
    }
    linkProperties = schema.allProperties.enumerated().compactMap { index, property in
      guard property.type == .object, property.collection != .linkingObjects, let target = property.objectClassName
      else { return nil }
      return (index, target)
    }
    anyProperties = schema.allProperties.indices.filter {
      schema.allProperties[$0].type == .any && schema.allProperties[$0].collection != .linkingObjects
    }
    isLinkingObjects = schema.allProperties.map { $0.collection == .linkingObjects }
    propertyIndex = Dictionary(schema.allProperties.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
  }

  func queryProperty(_ index: Int) -> QueryProperty {
    let property = properties[index]
    return QueryProperty(
      name: property.name, kind: property.type.queryKind, collection: property.collection.queryCollection,
      isOptional: property.isOptional, targetClass: property.objectClassName,
      isIndexed: property.isIndexed || property.isPrimary)
  }

  /// The row of a new object whose properties are all defaults.
  var defaultRow: [RowValue] {
    properties.map { property in
      switch property.collection {
      case .list, .set: return .list([])
      case .map: return .map([])
      case .linkingObjects: return .null
      case .none: break
      }
      if property.isOptional || property.type == .object { return .null }
      switch property.type {
      case .int: return .int(0)
      case .bool: return .bool(false)
      case .float: return .float(0)
      case .double: return .double(0)
      case .string: return .string("")
      case .data: return .data(Data())
      case .date: return .date(Date(timeIntervalSince1970: 0))
      case .UUID: return .uuid(UUID())
      case .objectId: return .objectId(ObjectId.generate())
      case .decimal128: return .decimal(Decimal128())
      case .any, .object, .linkingObjects: return .null
      }
    }
  }

  /// Whether a table of `schema` can key its objects by primary key: the key is a
  /// non-optional integer of any width.
  static func canDeriveKeys(_ schema: ObjectSchema) -> Bool {
    guard let pk = schema.allProperties.first(where: \.isPrimary) else { return false }
    return pk.type == .int && !pk.isOptional && pk.collection == .none
  }

  /// The object key of integer primary key `value`: its bits with the sign bit flipped, so
  /// keys sort as the integers do. Nil for a value that is not an integer.
  static func derivedKey(_ value: RowValue) -> ObjectKey? {
    guard case .int(let n) = normalizedForIndex(value) else { return nil }
    return ObjectKey(bitPattern: n) ^ (1 << 63)
  }

  static func keyBytes(_ key: ObjectKey) -> [UInt8] {
    withUnsafeBytes(of: key.bigEndian) { Array($0) }
  }

  static func key<Bytes: Collection>(from bytes: Bytes) -> ObjectKey where Bytes.Element == UInt8 {
    var key: ObjectKey = 0
    for byte in bytes.prefix(8) { key = key << 8 | ObjectKey(byte) }
    return key
  }

  /// The index key of a value: unambiguous bytes (tag, length, payload) so a prefix scan over
  /// `indexKey(value)` finds exactly the objects holding `value`.
  ///
  /// A value too long for a key of the engine (with the 8 bytes of an object key after it) is
  /// keyed by the first `longValuePrefix` bytes of its form and the XXH64 of the whole: such
  /// keys never collide with a whole value's key (the value's own length, at the start of its
  /// form, differs), and two long values share a key only when they share that prefix and
  /// their hash, so whoever reads a long value's key checks the object it finds.
  static func indexKey(_ value: RowValue) -> [UInt8] {
    var out = RowCodec.encodeIndexValue(normalizedForIndex(value))
    let length = UInt64(out.count)
    if out.count + 10 + 8 > StorageLimits.maximumKeySize {
      let hash = XXHash64.hash(out)
      out.removeSubrange(longValuePrefix...)
      withUnsafeBytes(of: hash.bigEndian) { out.append(contentsOf: $0) }
    }
    Varint.append(length, to: &out)
    return out
  }

  /// How much of a long value's form its index key holds (see `indexKey`).
  static let longValuePrefix = 960

  /// Whether `value`'s index key is not the whole value (see `indexKey`).
  static func hasHashedIndexKey(_ value: RowValue) -> Bool {
    RowCodec.encodeIndexValue(normalizedForIndex(value)).count + 10 + 8 > StorageLimits.maximumKeySize
  }

  /// Integers of every width and equal numbers index alike.
  static func normalizedForIndex(_ value: RowValue) -> RowValue {
    switch value {
    case .float(let f) where f.rounded() == f && abs(f) < 1e15: return .int(Int64(f))
    case .double(let d) where d.rounded() == d && abs(d) < 1e15: return .int(Int64(d))
    default: return value
    }
  }
}

/// The stored form of a class's schema, kept in the `_schema` keyspace.
enum SchemaCodec {
  /// The stored form; `keysFromPrimaryKey` is kept with it (see `TableInfo`).
  static func encode(_ schema: ObjectSchema, keysFromPrimaryKey: Bool = false) -> [UInt8] {
    let properties: [RowValue] = schema.allProperties.map { p in
      .list([
        .string(p.name), .int(Int64(p.type.rawValue)), .int(Int64(p.collection.rawValue)), .bool(p.isOptional),
        .bool(p.isIndexed), .bool(p.isPrimary), p.objectClassName.map { .string($0) } ?? .null,
        p.linkOriginPropertyName.map { .string($0) } ?? .null,
      ])
    }
    return RowCodec.encode([
      .string(schema.className), .bool(schema.isEmbedded), .list(properties), .bool(keysFromPrimaryKey),
    ])
  }

  static func decode(_ bytes: [UInt8]) throws -> ObjectSchema { try decodeWithKeyMode(bytes).schema }

  /// The schema and whether its table's object keys are its primary keys (files written
  /// before that existed store three fields: no).
  static func decodeWithKeyMode(_ bytes: [UInt8]) throws -> (schema: ObjectSchema, keysFromPrimaryKey: Bool) {
    let bad = Realm.Error(.invalidDatabase, "The stored schema is corrupt; the file cannot be opened.")
    let row = try RowCodec.decode(bytes)
    guard row.count == 3 || row.count == 4, case .string(let name) = row[0], case .bool(let embedded) = row[1],
      case .list(let items) = row[2]
    else { throw bad }
    var keyed = false
    if row.count == 4 {
      guard case .bool(let flag) = row[3] else { throw bad }
      keyed = flag
    }
    var properties: [Property] = []
    for item in items {
      guard case .list(let f) = item, f.count == 8, case .string(let pname) = f[0], case .int(let type) = f[1],
        case .int(let collection) = f[2], case .bool(let optional) = f[3], case .bool(let indexed) = f[4],
        case .bool(let primary) = f[5], let ptype = PropertyType(rawValue: Int(type)),
        let pcollection = PropertyCollection(rawValue: UInt8(truncatingIfNeeded: collection))
      else { throw bad }
      var target: String?
      if case .string(let t) = f[6] { target = t }
      var origin: String?
      if case .string(let o) = f[7] { origin = o }
      properties.append(
        Property(
          name: pname, type: ptype, isOptional: optional, collection: pcollection, objectClassName: target,
          linkOriginPropertyName: origin, isIndexed: indexed, isPrimary: primary))
    }
    return (ObjectSchema(className: name, isEmbedded: embedded, properties: properties), keyed)
  }
}
