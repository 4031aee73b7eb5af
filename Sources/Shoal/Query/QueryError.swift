import Foundation

/// An error in a query: bad syntax, an unknown property, a type mismatch, an unsupported operator
/// or a bad argument.
///
/// `message` follows RealmSwift's wording (its `NSPredicate` path, `RLMQueryUtil`) or realm-core's
/// where RealmSwift has none, naming the key path, the property and the class concerned.
struct QueryError: Error, CustomStringConvertible, Hashable, Sendable {
  /// What kind of problem the query has.
  enum Kind: Hashable, Sendable {
    /// The format string could not be parsed.
    case syntax
    /// A key path names a property that does not exist, or uses one where it cannot appear.
    case invalidKeyPath
    /// A value or a property cannot be compared with the other side of a comparison.
    case typeMismatch
    /// The operator (or a string option) is not supported for the operand types.
    case unsupportedOperator
    /// Too few arguments, or an argument of the wrong kind.
    case invalidArgument
    /// A well-formed construct that the engine does not implement.
    case unsupported
  }

  /// What kind of problem the query has.
  var kind: Kind
  /// The message shown to users, in RealmSwift's wording.
  var message: String
  /// More information for syntax errors (the offending token and its offset); not in `message`.
  var detail: String?

  init(_ kind: Kind, _ message: String, detail: String? = nil) {
    self.kind = kind
    self.message = message
    self.detail = detail
  }

  var description: String {
    if let detail { return "\(message) (\(detail))" }
    return message
  }
}

extension QueryError {
  /// `NSPredicate`'s message for a format string it cannot parse.
  static func syntax(_ format: String, _ detail: String) -> QueryError {
    QueryError(.syntax, "Unable to parse the format string \"\(format)\"", detail: detail)
  }

  /// A property that the class does not have.
  static func propertyNotFound(keyPath: String, property: String, className: String) -> QueryError {
    QueryError(
      .invalidKeyPath,
      "Invalid keypath '\(keyPath)': Property '\(property)' not found in object of type '\(className)'")
  }

  /// A key path error with RealmSwift's `Invalid keypath '…': …` prefix.
  static func keyPath(_ keyPath: String, _ reason: String) -> QueryError {
    QueryError(.invalidKeyPath, "Invalid keypath '\(keyPath)': \(reason)")
  }

  /// A constant that cannot be compared with a property.
  static func cannotCompare(value: RowValue, property: String, propertyType: String) -> QueryError {
    QueryError(
      .typeMismatch,
      "Cannot compare value '\(QueryDescribe.value(value))' of type '\(QueryDescribe.typeName(of: value))' "
        + "to property '\(property)' of type '\(propertyType)'")
  }

  /// Two properties whose types cannot be compared.
  static func propertyTypeMismatch(_ lhs: String, _ rhs: String) -> QueryError {
    QueryError(.typeMismatch, "Property type mismatch between \(lhs) and \(rhs)")
  }

  /// An operator that the operand type does not support.
  static func unsupportedOperator(_ op: String, type: String) -> QueryError {
    QueryError(.unsupportedOperator, "Operator '\(op)' not supported for type '\(type)'")
  }

  /// More `%@` (or `%K`) conversions than arguments.
  static var insufficientArguments: QueryError {
    QueryError(.invalidArgument, "Insufficient arguments for conversion characters specified in format string.")
  }

  /// A `$n` argument beyond the arguments given.
  static func missingPositionalArgument(_ index: Int, count: Int) -> QueryError {
    let provided = count == 1 ? "1 argument is" : "\(count) arguments are"
    return QueryError(
      .invalidArgument, "Request for argument at index \(index) but only \(provided) provided")
  }
}

/// Descriptions of values and types for error messages and for printing predicates.
enum QueryDescribe {
  /// RealmSwift's name for a property type (`RLMTypeToString`).
  static func typeName(_ kind: QueryProperty.Kind) -> String {
    switch kind {
    case .bool: return "bool"
    case .int: return "int"
    case .float: return "float"
    case .double: return "double"
    case .string: return "string"
    case .data: return "data"
    case .date: return "date"
    case .uuid: return "uuid"
    case .objectId: return "object id"
    case .decimal128: return "decimal128"
    case .any: return "mixed"
    case .object: return "object"
    }
  }

  /// The type of a property as RealmSwift names it in messages: the linked class for links.
  static func typeName(of property: QueryProperty) -> String {
    if property.kind == .object, let target = property.targetClass { return target }
    return typeName(property.kind)
  }

  /// The type of a value as messages name it.
  static func typeName(of value: RowValue) -> String {
    switch value {
    case .null: return "null"
    case .bool: return "bool"
    case .int: return "int"
    case .float: return "float"
    case .double: return "double"
    case .string: return "string"
    case .data: return "data"
    case .date: return "date"
    case .uuid: return "uuid"
    case .objectId: return "object id"
    case .decimal: return "decimal128"
    case .link: return "object"
    case .typedLink(let className, _): return className
    case .list: return "array"
    case .map: return "dictionary"
    }
  }

  /// A value as messages show it: strings without quotes, null as `<null>`.
  static func value(_ value: RowValue) -> String {
    switch value {
    case .null: return "<null>"
    case .bool(let b): return b ? "true" : "false"
    case .int(let i): return String(i)
    case .float(let f): return String(f)
    case .double(let d): return String(d)
    case .string(let s): return s
    case .data(let d): return "<\(d.count) bytes>"
    case .date(let d): return ISO8601DateFormatter().string(from: d)
    case .uuid(let u): return u.uuidString
    case .objectId(let o): return String(describing: o)
    case .decimal(let d): return String(describing: d)
    case .link(let key): return "object \(key)"
    case .typedLink(let className, let key): return "\(className) object \(key)"
    case .list(let items): return "{" + items.map { Self.value($0) }.joined(separator: ", ") + "}"
    case .map(let entries):
      return "[" + entries.map { "\($0.key): \(Self.value($0.value))" }.joined(separator: ", ") + "]"
    }
  }
}
