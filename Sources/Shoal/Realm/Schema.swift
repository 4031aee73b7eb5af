/// The classes a Realm manages (RealmSwift's `Schema`).
public struct Schema: CustomStringConvertible, Equatable, Sendable {
  /// The schema of each class, sorted by class name.
  public let objectSchema: [ObjectSchema]

  init(_ objectSchema: [ObjectSchema]) {
    self.objectSchema = objectSchema.sorted { $0.className < $1.className }
  }

  /// The schema of the class named `className`, or nil.
  public subscript(className: String) -> ObjectSchema? {
    objectSchema.first { $0.className == className }
  }

  /// Each class's schema, indented, inside `Schema { … }`.
  public var description: String {
    let body = objectSchema.map { "\t" + $0.description.replacingOccurrences(of: "\n", with: "\n\t") + "\n" }
    return "Schema {\n" + body.joined() + "}"
  }
}

/// The schema of one class (RealmSwift's `ObjectSchema`).
public struct ObjectSchema: CustomStringConvertible, Equatable, Sendable {
  /// The class name.
  public let className: String
  /// The persisted properties, in declaration order. Linking objects are computed, not
  /// persisted, so they are not listed here (as in RealmSwift); the subscript finds them.
  public var properties: [Property] { allProperties.filter { $0.type != .linkingObjects } }
  /// Every property including linking objects, in declaration order (the stored row layout).
  let allProperties: [Property]
  /// Whether the class is an `EmbeddedObject`.
  public let isEmbedded: Bool
  /// Asymmetric objects need Atlas Device Sync, which Shoal does not have: always false.
  public var isAsymmetric: Bool { false }
  /// The program's class for this schema, when there is one.
  var objectType: ObjectBase.Type?
  /// The class of the objects: the program's `Object` or `EmbeddedObject` subclass, or
  /// `DynamicObject` for a class only the file knows.
  public var objectClass: AnyClass { objectType ?? DynamicObject.self }

  /// Returns true when both describe the same class: the same name, embeddedness and properties (linking
  /// objects included).
  public static func == (lhs: ObjectSchema, rhs: ObjectSchema) -> Bool {
    lhs.className == rhs.className && lhs.isEmbedded == rhs.isEmbedded && lhs.allProperties == rhs.allProperties
  }

  init(className: String, isEmbedded: Bool, properties: [Property]) {
    self.className = className
    self.isEmbedded = isEmbedded
    self.allProperties = properties
  }

  /// This schema with the column names of `mapping` (a class's `propertiesMapping()`).
  func mappingColumnNames(_ mapping: [String: String]) -> ObjectSchema {
    guard !mapping.isEmpty else { return self }
    var schema = ObjectSchema(
      className: className, isEmbedded: isEmbedded,
      properties: allProperties.map { property in
        var property = property
        property.mappedName = mapping[property.name]
        return property
      })
    schema.objectType = objectType
    return schema
  }

  /// The primary key property, if the class has one.
  public var primaryKeyProperty: Property? { allProperties.first { $0.isPrimary } }

  /// The property named `propertyName` (linking objects included), or nil.
  public subscript(propertyName: String) -> Property? { allProperties.first { $0.name == propertyName } }

  /// The class name, `(embedded)` for an embedded class, and each property's description in braces: the
  /// persisted properties, then the linking objects, in RealmSwift's layout.
  public var description: String {
    let kind = isEmbedded ? "(embedded) " : ""
    // RLMObjectSchema's layout: the persisted properties, then the computed (linking objects) ones.
    let ordered = properties + allProperties.filter { $0.type == .linkingObjects }
    let body = ordered.map { "\t" + $0.description.replacingOccurrences(of: "\n", with: "\n\t") + "\n" }
    return "\(className) \(kind){\n" + body.joined() + "}"
  }
}

/// One persisted property (RealmSwift's `Property`).
public struct Property: CustomStringConvertible, Equatable, Sendable {
  /// The property name.
  public let name: String
  /// The value type (of the elements, for collections).
  public let type: PropertyType
  /// Whether the value (or each element) may be nil.
  public let isOptional: Bool
  /// Whether the property has an index (primary keys always do).
  public let isIndexed: Bool
  /// Whether the property is the primary key.
  public let isPrimary: Bool
  /// The linked class, for links, collections of objects and linking objects.
  public let objectClassName: String?
  /// The origin property, for linking objects.
  public let linkOriginPropertyName: String?
  let collection: PropertyCollection

  init(
    name: String, type: PropertyType, isOptional: Bool, collection: PropertyCollection, objectClassName: String?,
    linkOriginPropertyName: String?, isIndexed: Bool, isPrimary: Bool
  ) {
    self.name = name
    self.type = collection == .linkingObjects ? .linkingObjects : type
    self.isOptional = isOptional
    self.collection = collection
    self.objectClassName = objectClassName
    self.linkOriginPropertyName = linkOriginPropertyName
    self.isIndexed = isIndexed
    self.isPrimary = isPrimary
  }

  /// The name the property is persisted under: the one `propertiesMapping()` gives it, or
  /// its name. (Shoal stores every property under its Swift name; this reports the mapping as
  /// RealmSwift does.)
  public var columnName: String { mappedName ?? name }
  /// The private name from the class's `propertiesMapping()`, if any.
  var mappedName: String?

  /// Properties are equal when they describe the same persisted property (their column name,
  /// a presentation of the mapping, is left out, as RLMProperty's equality leaves it out).
  public static func == (lhs: Property, rhs: Property) -> Bool {
    lhs.name == rhs.name && lhs.type == rhs.type && lhs.isOptional == rhs.isOptional
      && lhs.isIndexed == rhs.isIndexed && lhs.isPrimary == rhs.isPrimary && lhs.objectClassName == rhs.objectClassName
      && lhs.linkOriginPropertyName == rhs.linkOriginPropertyName && lhs.collection == rhs.collection
  }
  /// Whether the property is a `List`, or `LinkingObjects` (which RealmSwift also reports as
  /// an array).
  public var isArray: Bool { collection == .list || collection == .linkingObjects }
  /// Whether the property is a `MutableSet`.
  public var isSet: Bool { collection == .set }
  /// Whether the property is a `Map`.
  public var isMap: Bool { collection == .map }

  /// The property's name and, one per line in braces, its type, linked class (for links), column name and
  /// flags (indexed, primary, array, set, dictionary, optional), in RealmSwift's layout.
  public var description: String {
    func yesNo(_ flag: Bool) -> String { flag ? "YES" : "NO" }
    // RealmSwift's (RLMProperty's) layout.
    var lines = ["\(name) {", "\ttype = \(type);"]
    if type == .object || type == .linkingObjects {
      lines.append("\tobjectClassName = \(objectClassName ?? "(null)");")
      lines.append("\tlinkOriginPropertyName = \(linkOriginPropertyName ?? "(null)");")
    }
    lines += [
      "\tcolumnName = \(columnName);", "\tindexed = \(yesNo(isIndexed));", "\tisPrimary = \(yesNo(isPrimary));",
      "\tarray = \(yesNo(isArray));", "\tset = \(yesNo(isSet));", "\tdictionary = \(yesNo(isMap));",
      // A mixed value holds nil without being optional, as RealmSwift reports it.
      "\toptional = \(yesNo(isOptional && type != .any));", "}",
    ]
    return lines.joined(separator: "\n")
  }
}
