import Foundation

// How values given by name (`init(value:)`, `create(_:value:update:)`, `object[key] = value`,
// `setValue(_:forKey:)`) are checked and converted, as RealmSwift's key-value coding does it
// (`RLMUtil.mm`: `RLMValidateValueForProperty`, `RLMThrowTypeError`; `RLMObjectBase.mm`:
// `RLMInitializeWithValue`).

/// The collections a property can hold, seen through their contents: what `init(value:)` copies
/// from another object, and which element of a given value is not a valid element.
protocol _KVCCollection {
  /// The element type (a map's value type).
  static var _kvcElementType: Any.Type { get }
  /// The contents as plain Swift values: an array of the elements, or for a map a dictionary.
  var _kvcContents: Any { get }
  /// The first element (map value) of `value` that is not a valid element, if any.
  static func _kvcFirstInvalidElement(in value: Any) -> Any??
}

extension List: _KVCCollection {
  static var _kvcElementType: Any.Type { Element.self }
  var _kvcContents: Any { map { $0 as Any } }
  static func _kvcFirstInvalidElement(in value: Any) -> Any?? {
    kvcSequenceElements(of: value)?.first { Element._rlmFromAny($0) == nil }
  }
}

extension MutableSet: _KVCCollection {
  static var _kvcElementType: Any.Type { Element.self }
  var _kvcContents: Any { map { $0 as Any } }
  static func _kvcFirstInvalidElement(in value: Any) -> Any?? {
    kvcSequenceElements(of: value)?.first { Element._rlmFromAny($0) == nil }
  }
}

extension Map: _KVCCollection {
  static var _kvcElementType: Any.Type { Value.self }
  var _kvcContents: Any {
    var contents: [String: Any] = [:]
    for entry in self { contents[entry.key._rlmKey] = entry.value as Any }
    return contents
  }
  static func _kvcFirstInvalidElement(in value: Any) -> Any?? {
    guard let dictionary = value as? [String: Any] else { return nil }
    return dictionary.values.first { Value._rlmFromAny($0) == nil }
  }
}

/// The elements of an array, a set or another sequence given for a list or a set property; nil
/// for values that are not enumerable (a string is not, as an `NSString` is not in RealmSwift).
func kvcSequenceElements(of value: Any) -> [Any]? {
  if value is String || value is Substring { return nil }
  guard let sequence = value as? any Sequence else { return nil }
  return kvcArray(sequence)
}

private func kvcArray<S: Sequence>(_ sequence: S) -> [Any] { sequence.map { $0 as Any } }

extension ClassInfo.Field {
  /// The type as RealmSwift's messages name it: the linked class or the value type, with `?`
  /// when optional (`'int?'`, `'Dog?'`, `'string'`).
  var realmTypeName: String {
    let base = typeInfo.objectType.map { ClassInfo.of($0).className } ?? typeInfo.type.description
    return base + (typeInfo.isOptional ? "?" : "")
  }

  /// What follows the quoted type in RealmSwift's invalid-value message: ` array`, ` set`,
  /// ` dictionary` or nothing.
  var realmCollectionSuffix: String {
    switch typeInfo.collection {
    case .list: return " array"
    case .set: return " set"
    case .map: return " dictionary"
    case .none, .linkingObjects: return ""
    }
  }
}

extension ObjectBase {
  /// `value` as it should be handed to a property's converter, following RealmSwift: `NSNull`
  /// is nil, a collection's contents are copied rather than the collection shared, `0` and `1`
  /// are booleans, strings in their forms are UUIDs and decimals; a value that is not enumerable for a collection property, or a floating-point
  /// number for an integer property, stops with RealmSwift's message.
  func _kvcCoerced(_ value: Any?, for field: ClassInfo.Field, className: String) -> Any? {
    guard var value = flattenedOptional(value), !(value is NSNull) else { return nil }
    if type(of: value) is NSNumber.Type, let number = value as? NSNumber { value = swiftNumber(number) }
    let info = field.typeInfo
    switch info.collection {
    case .list, .set, .map:
      if let collection = value as? any _KVCCollection { return collection._kvcContents }
      let enumerable = info.collection == .map ? value is [String: Any] : kvcSequenceElements(of: value) != nil
      guard enumerable else {
        // RealmSwift says "set" for every property that is not a list, maps included.
        fatalError(
          "Invalid value (\(value)) for '\(field.realmTypeName)' \(info.collection == .list ? "array" : "set") "
            + "property '\(className).\(field.name)': value is not enumerable.")
      }
      return value
    case .none, .linkingObjects:
      switch info.type {
      case .bool:
        // An integer 0 or 1 is a boolean, as an NSNumber is.
        if let int = value as? Int, int == 0 || int == 1 { return int == 1 }
      case .int:
        // A boolean is an integer, as RLMUtil's `numberIsInteger` counts it.
        if let bool = value as? Bool { return bool ? 1 : 0 }
        // A floating-point number is not an integer, even a whole one (RLMUtil's
        // `numberIsInteger`); an enum's raw value converts as usual.
        if value is Double || value is Float {
          fatalError(invalidValueMessage(value, for: field, of: className))
        }
      case .UUID:
        // A string in UUID form is a UUID, as RLMUtil's `RLMValidateValue` accepts it.
        if let string = value as? String, let uuid = UUID(uuidString: string) { return uuid }
      case .decimal128:
        // So is a string holding a decimal number.
        if let string = value as? String {
          let decimal = Decimal128(stringLiteral: string)
          if !decimal.isNaN || string.lowercased().contains("nan") { return decimal }
        }
      default:
        break
      }
      return value
    }
  }
}

extension ObjectBase {
  /// RealmSwift's check of a value set by name on a managed object's link, list, set or map of
  /// objects (`RLMValidateValueForProperty` with `validateObjects`): each object must be of the
  /// property's class; embedded objects' properties accept anything that makes one.
  func _kvcCheckLinkedObjects(_ value: Any?, for field: ClassInfo.Field, className: String) {
    guard let target = field.typeInfo.objectType, !(target is EmbeddedObject.Type),
      field.typeInfo.collection != .linkingObjects, let value = flattenedOptional(value)
    else { return }
    let targetName = ClassInfo.of(target).className
    func check(_ item: Any?) {
      guard let item = flattenedOptional(item), !(item is NSNull) else { return }
      if let object = item as? ObjectBase, object.objectSchema.className == targetName { return }
      fatalError(typeErrorMessage(item, for: field, of: className))
    }
    switch field.typeInfo.collection {
    case .none, .linkingObjects: check(value)
    case .list, .set: kvcSequenceElements(of: value)?.forEach(check)
    case .map: (value as? [String: Any])?.values.forEach(check)
    }
  }
}

/// An `NSNumber` as the Swift number it holds, by its Objective-C type: `Float`, `Double`, `Bool`
/// (a `char` or `BOOL` of 0 or 1) or `Int`.
func swiftNumber(_ number: NSNumber) -> Any {
  switch UInt8(bitPattern: number.objCType.pointee) {
  case UInt8(ascii: "f"): return number.floatValue
  case UInt8(ascii: "d"): return number.doubleValue
  case UInt8(ascii: "c"), UInt8(ascii: "B"):
    return number.int64Value == 0 || number.int64Value == 1 ? number.boolValue : Int(number.int64Value)
  default: return Int(truncatingIfNeeded: number.int64Value)
  }
}

/// RealmSwift's message for a value of the wrong type given for a property (`RLMThrowTypeError`):
/// for a collection, the first element that is not valid.
///
/// A valid persisted value that a failable mapped type has no value for gets RealmSwift's
/// conversion message instead ("Could not convert value '1' to type 'Wrapper'.").
func invalidValueMessage(_ value: Any?, for field: ClassInfo.Field, of className: String) -> String {
  var shown = flattenedOptional(value)
  var type = field.wrapperType.valueType
  if let value = shown, let collection = field.wrapperType.collectionType,
    let element = collection._kvcFirstInvalidElement(in: value)
  {
    shown = flattenedOptional(element)
    type = collection._kvcElementType
  }
  if let shown, let mapped = type as? any _CustomPersistable.Type, mapped._rlmIsUnmappable(shown) {
    return "Could not convert value '\(shown)' to type '\(type)'."
  }
  return typeErrorMessage(shown, for: field, of: className)
}

/// RealmSwift's invalid-value message for exactly `value` (an element, for a collection).
func typeErrorMessage(_ value: Any?, for field: ClassInfo.Field, of className: String) -> String {
  let shown = flattenedOptional(value)
  let text = shown.map { "\($0)" } ?? "(null)"
  let typeName = shown.map { "\(type(of: $0))" } ?? "(null)"
  return "Invalid value '\(text)' of type '\(typeName)' for '\(field.realmTypeName)'\(field.realmCollectionSuffix) "
    + "property '\(className).\(field.name)'."
}
