import Foundation
import ShoalStorage

/// The tables of an open file: the stored schema reconciled with the program's classes.
final class RealmSchema: Sendable {
  let tables: [String: TableInfo]
  private let byType: [ObjectIdentifier: TableInfo]
  /// For each class, the (table, property index) pairs whose links point at it.
  let incomingLinks: [String: [(table: TableInfo, index: Int)]]
  let schemaVersion: UInt64
  /// Whether the file has the backlink index.
  let hasBacklinks: Bool
  /// Whether the file's secondary indexes are the ordered ones (`OrderedIndexKey`); a file
  /// written before them, opened read-only, is queried without its indexes.
  let hasOrderedIndexes: Bool

  init(tables: [TableInfo], schemaVersion: UInt64, hasBacklinks: Bool, hasOrderedIndexes: Bool = true) {
    self.hasBacklinks = hasBacklinks
    self.hasOrderedIndexes = hasOrderedIndexes
    self.tables = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    var byType: [ObjectIdentifier: TableInfo] = [:]
    var incoming: [String: [(table: TableInfo, index: Int)]] = [:]
    for table in tables {
      if let info = table.classInfo { byType[ObjectIdentifier(info.type)] = table }
      for (index, property) in table.properties.enumerated()
      where property.type == .object && property.collection != .linkingObjects {
        if let target = property.objectClassName { incoming[target, default: []].append((table, index)) }
      }
    }
    self.byType = byType
    self.incomingLinks = incoming
    self.schemaVersion = schemaVersion
  }

  func table(for type: ObjectBase.Type) -> TableInfo? { byType[ObjectIdentifier(type)] }

  /// The classes this Realm was opened with (as RealmSwift reports them; classes other
  /// programs added to the file stay in it but are not listed).
  /// The classes the program declares; a Realm opened without any (`objectTypes: []`, as the
  /// event tools do) shows every class of the file.
  var publicSchema: Schema {
    let declared = tables.values.filter { $0.classInfo != nil }
    return Schema((declared.isEmpty ? Array(tables.values) : declared).map(\.objectSchema))
  }

  static let schemaKeyspace = "_schema"
  static let metaKeyspace = "_meta"
  static let versionKey = Array("schemaVersion".utf8)
  /// The `_meta` entry saying the secondary indexes are ordered (`OrderedIndexKey`, in the
  /// `x/` keyspaces); files without it have unordered ones (`i/`), rebuilt when opened for
  /// writing.
  static let indexFormatKey = Array("indexFormat".utf8)
  static let indexFormat: [UInt8] = [1]

  /// The program's classes for `configuration`: `objectTypes`, or every subclass in the program,
  /// plus every class they link to.
  static func codeClasses(_ configuration: Realm.Configuration) throws(Realm.Error) -> [ClassInfo] {
    let explicit = configuration.objectTypes
    let roots: [ObjectBase.Type] = explicit ?? allObjectTypes()
    var seen: [ObjectIdentifier: ClassInfo] = [:]
    var order: [ClassInfo] = []
    var errors: [String] = []
    for type in roots where seen[ObjectIdentifier(type)] == nil {
      let info = ClassInfo.of(type)
      seen[ObjectIdentifier(type)] = info
      order.append(info)
    }
    var i = 0
    var missing: [String] = []
    while i < order.count {
      let info = order[i]
      errors += info.validationErrors()
      for field in info.fields {
        guard let target = field.typeInfo.objectType, seen[ObjectIdentifier(target)] == nil else { continue }
        let targetInfo = ClassInfo.of(target)
        if explicit != nil, field.typeInfo.collection != .linkingObjects {
          missing.append(
            "'\(info.className).\(field.name)' links to class '\(targetInfo.className)', which is missing from the list "
              + "of classes managed by the Realm")
        }
        seen[ObjectIdentifier(target)] = targetInfo
        order.append(targetInfo)
      }
      i += 1
    }
    // RealmSwift's text for an `objectTypes` list that leaves out a linked class (after the
    // classes' own problems, which RealmSwift finds first, building each class's schema).
    if !missing.isEmpty, errors.isEmpty {
      throw Realm.Error(.fail, "Invalid class subset list:\n" + missing.map { "- " + $0 }.joined(separator: "\n"))
    }
    var names: [String: ClassInfo] = [:]
    for info in order {
      if names[info.className] != nil {
        errors.append("Object type '\(info.className)' is declared more than once.")
      }
      names[info.className] = info
    }
    for info in order {
      for field in info.fields where field.typeInfo.collection == .linkingObjects {
        guard let origin = field.options.originProperty, let target = field.typeInfo.objectType else { continue }
        let source = ClassInfo.of(target)
        guard let property = source.field(named: origin) else {
          errors.append(
            "Property '\(source.className).\(origin)' declared as origin of linking objects property '\(info.className).\(field.name)' does not exist"
          )
          continue
        }
        // Realm Core's texts.
        let prefix =
          "Property '\(source.className).\(origin)' declared as origin of linking objects property "
          + "'\(info.className).\(field.name)'"
        if let linked = property.typeInfo.objectType.map({ ClassInfo.of($0).className }) {
          if linked != info.className { errors.append(prefix + " links to type '\(linked)'") }
        } else {
          errors.append(prefix + " is not a link")
        }
      }
    }
    if !errors.isEmpty {
      throw Realm.Error(
        .schemaMismatch,
        "Schema validation failed due to the following errors:\n" + errors.map { "- " + $0 }.joined(separator: "\n"))
    }
    return order
  }

  /// Every `Object` and `EmbeddedObject` subclass in the loaded images.
  static func allObjectTypes() -> [ObjectBase.Type] {
    loadedClassTypes().compactMap { type -> ObjectBase.Type? in
      guard let objectType = type as? ObjectBase.Type, objectType != Object.self, objectType != EmbeddedObject.self,
        objectType != ObjectBase.self, objectType != DynamicObject.self, objectType.shouldIncludeInDefaultSchema()
      else { return nil }
      return objectType
    }
  }

  /// Differences that need a migration, in RealmSwift's wording.
  static func migrationErrors(stored: ObjectSchema, code: ObjectSchema) -> [String] {
    var errors: [String] = []
    let name = code.className
    for old in stored.allProperties where code[old.name] == nil {
      errors.append("Property '\(name).\(old.name)' has been removed.")
    }
    for new in code.allProperties {
      guard let old = stored[new.name] else {
        errors.append("Property '\(name).\(new.name)' has been added.")
        continue
      }
      if old.type != new.type || old.collection != new.collection || old.objectClassName != new.objectClassName {
        errors.append(
          "Property '\(name).\(new.name)' has been changed from '\(typeName(old))' to '\(typeName(new))'.")
      } else if old.isOptional != new.isOptional {
        errors.append(
          new.isOptional
            ? "Property '\(name).\(new.name)' has been made optional."
            : "Property '\(name).\(new.name)' has been made required.")
      }
    }
    let storedKey = stored.allProperties.first(where: \.isPrimary)?.name
    let codeKey = code.allProperties.first(where: \.isPrimary)?.name
    switch (storedKey, codeKey) {
    case (nil, .some): errors.append("Primary Key for class '\(name)' has been added.")
    case (.some, nil): errors.append("Primary Key for class '\(name)' has been removed.")
    case (.some(let from), .some(let to)) where from != to:
      errors.append("Primary Key for class '\(name)' has changed from '\(from)' to '\(to)'.")
    default: break
    }
    if stored.isEmbedded != code.isEmbedded {
      errors.append(
        "Class '\(name)' has been changed from \(stored.isEmbedded ? "embedded" : "top-level") to \(code.isEmbedded ? "embedded" : "top-level")."
      )
    }
    return errors
  }

  static func typeName(_ property: Property) -> String {
    var base = property.type.description
    if let target = property.objectClassName, property.type == .object { base = "<\(target)>" }
    switch property.collection {
    case .list: return "array<\(base)>"
    case .set: return "set<\(base)>"
    case .map: return "dictionary<string, \(base)>"
    case .linkingObjects, .none: return property.type == .object ? base : base + (property.isOptional ? "?" : "")
    }
  }
}
