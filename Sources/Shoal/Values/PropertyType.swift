/// The type of a persisted property, as `Property.type` reports it (RealmSwift's
/// `PropertyType`). Integers of every width are `.int`; enums report their raw value's type.
public enum PropertyType: Int, Sendable, CustomStringConvertible {
  case int = 0
  case bool = 1
  case float = 5
  case double = 6
  case UUID = 12
  case string = 2
  case data = 3
  case any = 9
  case date = 4
  case object = 7
  case objectId = 10
  case decimal128 = 11
  case linkingObjects = 8

  /// The type's name as RealmSwift prints it: "int", "string", "mixed", "object id", "linking objects", …
  public var description: String {
    switch self {
    case .int: return "int"
    case .bool: return "bool"
    case .float: return "float"
    case .double: return "double"
    case .UUID: return "uuid"
    case .string: return "string"
    case .data: return "data"
    case .any: return "mixed"
    case .date: return "date"
    case .object: return "object"
    case .objectId: return "object id"
    case .decimal128: return "decimal128"
    case .linkingObjects: return "linking objects"
    }
  }

  var queryKind: QueryProperty.Kind {
    switch self {
    case .int: return .int
    case .bool: return .bool
    case .float: return .float
    case .double: return .double
    case .UUID: return .uuid
    case .string: return .string
    case .data: return .data
    case .any: return .any
    case .date: return .date
    case .object, .linkingObjects: return .object
    case .objectId: return .objectId
    case .decimal128: return .decimal128
    }
  }
}

/// How many values a property holds.
enum PropertyCollection: UInt8, Sendable {
  case none = 0, list = 1, set = 2, map = 3, linkingObjects = 4

  var queryCollection: QueryProperty.Collection {
    switch self {
    case .none: return .none
    case .list: return .list
    case .set: return .set
    case .map: return .map
    case .linkingObjects: return .linkingObjects
    }
  }
}

/// What a Swift type stores as: used by `@Persisted` to build the schema. Not for direct use.
public struct _PersistedTypeInfo: Sendable {
  let type: PropertyType
  let isOptional: Bool
  let collection: PropertyCollection
  /// The linked class, for links, collections of objects and linking objects.
  let objectType: ObjectBase.Type?
  /// Whether the type is a `CustomPersistable` stored as this: one stored as an embedded
  /// object is a property of its own type, not an optional link.
  var isMapped = false

  init(
    _ type: PropertyType, optional: Bool = false, collection: PropertyCollection = .none,
    objectType: ObjectBase.Type? = nil
  ) {
    self.type = type
    self.isOptional = optional
    self.collection = collection
    self.objectType = objectType
  }

  func optional() -> _PersistedTypeInfo {
    _PersistedTypeInfo(type, optional: true, collection: collection, objectType: objectType)
  }
}
