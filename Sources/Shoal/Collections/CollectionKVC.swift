import Foundation

// Key-value coding and aggregate checks shared by the collections, with RealmSwift's rules
// (its collections forward to `NSArray`'s key-value coding and to `RLMResults`' aggregates).

/// `min`, `max`, `sum` or `average` of a property of a collection's elements.
enum CollectionAggregate {
  case min, max, sum, average

  /// RealmSwift's name for the operation in its messages.
  var methodName: String {
    switch self {
    case .min: return "minOfProperty"
    case .max: return "maxOfProperty"
    case .sum: return "sumOfProperty"
    case .average: return "averageOfProperty"
    }
  }

  /// Whether the operation applies to values of `type`: numbers (and mixed values) for all, dates
  /// for `min` and `max` too.
  func supports(_ type: PropertyType) -> Bool {
    switch type {
    case .int, .float, .double, .decimal128, .any: return true
    case .date: return self == .min || self == .max
    default: return false
    }
  }
}

extension ResultsState {
  /// RealmSwift's checks of an aggregate's property: it must be a property of the elements
  /// ("Property 'x' not found in object of type 'Y'", `RLMValidatedProperty`) or `self` for
  /// values, of a type the operation supports (`RLMResults`' "sumOfProperty is not supported
  /// for string property 'name'."). Key paths through links are left to the key-path resolver.
  func checkAggregate(_ property: String, _ aggregate: CollectionAggregate, elementType: _PersistedTypeInfo) {
    var target: (type: PropertyType, isOptional: Bool, isCollection: Bool)?
    if let table = elementTable {
      if let index = table.propertyIndex[property] {
        let found = table.properties[index]
        target = (found.type, found.isOptional, found.collection != .none)
      } else if !property.contains(".") {
        fatalError("Property '\(property)' not found in object of type '\(table.name)'")
      }
    } else if let objectType = elementType.objectType, core == nil {
      let info = ClassInfo.of(objectType)
      if let field = info.field(named: property) {
        target = (field.typeInfo.type, field.typeInfo.isOptional, field.typeInfo.collection != .none)
      } else if !property.contains(".") {
        fatalError("Property '\(property)' not found in object of type '\(info.className)'")
      }
    } else if property == "self" {
      target = (elementType.type, elementType.isOptional, false)
    }
    guard let target, target.isCollection || !aggregate.supports(target.type) else { return }
    let typeName = "\(target.type)\(target.isOptional ? "?" : "")"
    let method = aggregate.methodName
    if case .list(_, let table, let index)? = source, filters.isEmpty, sorts.isEmpty, distinct.isEmpty {
      let owner = table.properties[index]
      let kind: String
      switch owner.collection {
      case .list: kind = "array"
      case .set: kind = "set"
      case .map: kind = "dictionary"
      default: kind = ""
      }
      if !kind.isEmpty {
        if elementTable != nil {
          fatalError("\(method): is not supported for \(typeName) property '\(property)'.")
        }
        fatalError("\(method): is not supported for \(typeName) \(kind) '\(table.name).\(owner.name)'.")
      }
    }
    if core == nil {
      if let objectType = elementType.objectType {
        fatalError(
          "\(method):: is not supported for \(typeName) property '\(ClassInfo.of(objectType).className).\(property)'")
      }
      fatalError("\(method): is not supported for \(typeName) array")
    }
    fatalError("\(method) is not supported for \(typeName) property '\(property)'.")
  }
}

/// The value at `keyPath` of every element, as `NSArray.value(forKeyPath:)` gives it: `NSNull`
/// for nil, `self` for the element itself, an array for each to-many step.
func kvcValues<S: Sequence>(_ elements: S, keyPath: String) -> [Any] {
  let path = keyPath.split(separator: ".").map(String.init)
  return elements.map { kvcValue(of: $0, path: path[...]) }
}

/// The value at `path` of one element (see `kvcValues`).
func kvcValue(of element: Any, path: ArraySlice<String>) -> Any {
  guard let key = path.first else { return (element as? AnyRealmValue)?.kvcValue ?? element }
  let rest = path.dropFirst()
  if key == "self" { return kvcValue(of: element, path: rest) }
  if let object = element as? ObjectBase {
    guard let value = flattenedOptional(object[key]) else { return NSNull() }
    return kvcValue(of: value, path: rest)
  }
  if let collection = element as? any RealmCollection {
    return kvcElements(of: collection).map { kvcValue(of: $0, path: path) }
  }
  if element is NSNull { return NSNull() }
  // A value has no properties: Foundation's NSUnknownKeyException, as RealmSwift raises it.
  let held = (element as? AnyRealmValue)?.kvcValue ?? element
  if let object = held as? ObjectBase { return kvcValue(of: object, path: path) }
  fatalError(
    "NSUnknownKeyException: [<\(type(of: held))> valueForUndefinedKey:]: this class is not key value coding-compliant "
      + "for the key \(key).")
}

/// The elements of a collection, as `Any`.
private func kvcElements<C: RealmCollection>(of collection: C) -> [Any] { collection.map { $0 as Any } }

/// `values` without repeats (`NSSet` semantics, first occurrence kept).
func distinctValues(_ values: [Any]) -> [Any] {
  var seen = Set<AnyHashable>()
  return values.filter { value in
    guard let hashable = value as? AnyHashable else { return true }
    return seen.insert(hashable).inserted
  }
}

/// A stored value as RealmSwift's key-value coding bridges it: numbers as `NSNumber`, dates as
/// `Date`, decimals as `Decimal128`, strings and data as themselves; nil for null.
func foundationValue(_ value: RowValue) -> Any? {
  switch value {
  case .null: return nil
  case .int(let i): return NSNumber(value: i)
  case .double(let d): return NSNumber(value: d)
  case .float(let f): return NSNumber(value: f)
  case .bool(let b): return NSNumber(value: b)
  default: return value.anyValue
  }
}
