import Foundation

/// A query predicate: the AST that both the RQL parser and the object layer's type-safe query
/// builder produce, and that `CompiledQuery` validates against the schema and evaluates.
///
/// Key paths are unresolved property names; constants are `RowValue`s (arguments are converted
/// when the string is parsed). Printing a predicate gives equivalent RQL text.
indirect enum QueryPredicate: Hashable, Sendable, CustomStringConvertible {
  /// Matches every object (`TRUEPREDICATE`).
  case truePredicate
  /// Matches no object (`FALSEPREDICATE`).
  case falsePredicate
  /// All subpredicates match; an empty list matches every object.
  case and([QueryPredicate])
  /// At least one subpredicate matches; an empty list matches no object.
  case or([QueryPredicate])
  /// The subpredicate does not match.
  case not(QueryPredicate)
  /// A comparison of two expressions.
  case comparison(QueryComparison)

  /// The comparison `lhs op rhs`.
  static func compare(
    _ lhs: QueryExpression, _ op: QueryOperator, _ rhs: QueryExpression,
    options: QueryStringOptions = [], quantifier: QueryQuantifier = .implicit
  ) -> QueryPredicate {
    .comparison(QueryComparison(lhs, op, rhs, options: options, quantifier: quantifier))
  }

  /// The conjunction of `predicates`, flattening nested ANDs and dropping `TRUEPREDICATE`s.
  static func conjunction(_ predicates: [QueryPredicate]) -> QueryPredicate {
    var terms: [QueryPredicate] = []
    for predicate in predicates {
      switch predicate {
      case .truePredicate: continue
      case .and(let inner): terms.append(contentsOf: inner)
      default: terms.append(predicate)
      }
    }
    if terms.isEmpty { return .truePredicate }
    if terms.count == 1 { return terms[0] }
    return .and(terms)
  }

  var description: String { text(parenthesized: false) }

  private func text(parenthesized: Bool) -> String {
    switch self {
    case .truePredicate: return "TRUEPREDICATE"
    case .falsePredicate: return "FALSEPREDICATE"
    case .comparison(let comparison): return comparison.description
    case .not(let inner): return "NOT " + inner.text(parenthesized: true)
    case .and(let terms):
      if terms.isEmpty { return "TRUEPREDICATE" }
      let joined = terms.map { $0.text(parenthesized: true) }.joined(separator: " AND ")
      return parenthesized && terms.count > 1 ? "(\(joined))" : joined
    case .or(let terms):
      if terms.isEmpty { return "FALSEPREDICATE" }
      let joined = terms.map { $0.text(parenthesized: true) }.joined(separator: " OR ")
      return parenthesized && terms.count > 1 ? "(\(joined))" : joined
    }
  }
}

/// A comparison `lhs op rhs`, optionally with string options (`[c]`, `[d]`) and a quantifier
/// (`ANY`, `ALL`, `NONE`) that applies to the key-path side.
struct QueryComparison: Hashable, Sendable, CustomStringConvertible {
  var lhs: QueryExpression
  var op: QueryOperator
  var rhs: QueryExpression
  var options: QueryStringOptions
  var quantifier: QueryQuantifier

  init(
    _ lhs: QueryExpression, _ op: QueryOperator, _ rhs: QueryExpression,
    options: QueryStringOptions = [], quantifier: QueryQuantifier = .implicit
  ) {
    self.lhs = lhs
    self.op = op
    self.rhs = rhs
    self.options = options
    self.quantifier = quantifier
  }

  var description: String {
    var text = ""
    switch quantifier {
    case .implicit: break
    case .any: text += "ANY "
    case .all: text += "ALL "
    case .none: text += "NONE "
    }
    text += "\(lhs) \(op.rawValue)"
    if options.contains(.caseInsensitive) || options.contains(.diacriticInsensitive) {
      text += "["
      if options.contains(.caseInsensitive) { text += "c" }
      if options.contains(.diacriticInsensitive) { text += "d" }
      text += "]"
    }
    return text + " \(rhs)"
  }
}

/// The operator of a comparison.
enum QueryOperator: String, Hashable, Sendable, CaseIterable {
  case equal = "=="
  case notEqual = "!="
  case less = "<"
  case lessOrEqual = "<="
  case greater = ">"
  case greaterOrEqual = ">="
  case beginsWith = "BEGINSWITH"
  case endsWith = "ENDSWITH"
  case contains = "CONTAINS"
  /// `*` matches any run of characters, `?` one character, `\` escapes the next one.
  case like = "LIKE"
  /// The right side is a list constant (`{1, 2}`, an array argument) or a to-many key path.
  case `in` = "IN"
  /// The right side is a list constant of two values, low and high, both inclusive.
  case between = "BETWEEN"
  /// `location GEOWITHIN shape`: also written `location IN shape`.
  case geoWithin = "GEOWITHIN"

  /// The operator with its operands swapped (`3 < age` is `age > 3`), or nil if not symmetric.
  var flipped: QueryOperator? {
    switch self {
    case .equal, .notEqual: return self
    case .less: return .greater
    case .lessOrEqual: return .greaterOrEqual
    case .greater: return .less
    case .greaterOrEqual: return .lessOrEqual
    case .beginsWith, .endsWith, .contains, .like, .in, .between, .geoWithin: return nil
    }
  }
}

/// String comparison options: `[c]` case-insensitive, `[d]` diacritic-insensitive.
struct QueryStringOptions: OptionSet, Hashable, Sendable {
  let rawValue: UInt8
  init(rawValue: UInt8) { self.rawValue = rawValue }
  /// `[c]`.
  static let caseInsensitive = QueryStringOptions(rawValue: 1)
  /// `[d]`.
  static let diacriticInsensitive = QueryStringOptions(rawValue: 2)
}

/// How a comparison on a to-many key path combines the per-element results.
enum QueryQuantifier: Hashable, Sendable {
  /// No prefix: `ANY` for to-many key paths, a plain comparison otherwise.
  case implicit
  /// `ANY` / `SOME`: at least one element matches.
  case any
  /// `ALL`: every element matches (true for an empty collection).
  case all
  /// `NONE`: no element matches (true for an empty collection).
  case none
}

/// One side of a comparison.
indirect enum QueryExpression: Hashable, Sendable, CustomStringConvertible {
  /// A key path from the queried object (or, inside a subquery, from the collection element).
  case keyPath(QueryKeyPath)
  /// A constant; `.list` for the right side of `IN` and `BETWEEN`.
  case constant(RowValue)
  /// `SUBQUERY(collection, $x, predicate).@count`: how many elements of `collection` match
  /// `predicate`, whose key paths are relative to the element (the `$x.` prefix removed).
  case subqueryCount(collection: QueryKeyPath, predicate: QueryPredicate)
  /// A geospatial shape (a `GeoBox`, `GeoPolygon` or `GeoCircle` argument), the right side of
  /// `IN` or `GEOWITHIN`.
  case geometry(GeoShape)

  /// A key path expression of property names: `.path("dog", "name")`.
  static func path(_ names: String...) -> QueryExpression { .keyPath(QueryKeyPath(names)) }

  var description: String {
    switch self {
    case .keyPath(let path): return path.description
    case .constant(let value): return QueryDescribe.literal(value)
    case .subqueryCount(let collection, let predicate):
      return "SUBQUERY(\(collection), $x, \(predicate.prefixingKeyPaths(with: "$x"))).@count"
    case .geometry(let shape):
      return shape.description
    }
  }
}

/// A key path: property names, with at most one collection operation (`@count`, `@sum`, …),
/// map access (`@keys`, `@values`, `['key']`) or `@type`.
///
/// `dogs.@avg.age` is `[.property("dogs"), .avg, .property("age")]`; an empty key path is the
/// element itself inside a subquery over a collection of values.
struct QueryKeyPath: Hashable, Sendable, CustomStringConvertible {
  /// One component of a key path.
  enum Element: Hashable, Sendable {
    /// A property of the current class.
    case property(String)
    /// `@count`: the number of elements of a collection (or the length of a string or data).
    case count
    /// `@size`: the same as `@count`.
    case size
    /// `@sum` of a collection of numbers (or of a numeric property of a collection of objects).
    case sum
    /// `@avg`: the mean, or null for an empty collection.
    case avg
    /// `@min`: the smallest value, or null for an empty collection.
    case min
    /// `@max`: the largest value, or null for an empty collection.
    case max
    /// `@keys` / `@allKeys`: the keys of a map.
    case keys
    /// `@values` / `@allValues`: the values of a map.
    case values
    /// `['key']`: the value of a map for a key (null when absent).
    case `subscript`(String)
    /// `[0]`: the element of a mixed value's nested list at a position.
    case index(Int)
    /// `[*]` (`[%K]` with `#any`): every element or value of a mixed value's nested collection.
    case all
    /// `@type`: the type of an `AnyRealmValue`, compared with type names (`'int'`, `'numeric'`…).
    case type

    /// Whether the element is written in brackets after what it follows.
    var isSubscript: Bool {
      switch self {
      case .subscript, .index, .all: return true
      default: return false
      }
    }

    var text: String {
      switch self {
      case .property(let name): return name
      case .count: return "@count"
      case .size: return "@size"
      case .sum: return "@sum"
      case .avg: return "@avg"
      case .min: return "@min"
      case .max: return "@max"
      case .keys: return "@keys"
      case .values: return "@values"
      case .subscript(let key): return "[\(QueryDescribe.literal(.string(key)))]"
      case .index(let index): return "[\(index)]"
      case .all: return "[*]"
      case .type: return "@type"
      }
    }
  }

  var elements: [Element]

  init(_ elements: [Element]) { self.elements = elements }

  /// A key path of property names only: `QueryKeyPath(["dog", "owner", "name"])`.
  init(_ names: [String]) { self.elements = names.map { .property($0) } }

  /// This key path followed by `element`.
  func appending(_ element: Element) -> QueryKeyPath { QueryKeyPath(elements + [element]) }

  /// This key path followed by the property `name`.
  func appending(_ name: String) -> QueryKeyPath { appending(.property(name)) }

  var description: String {
    var text = ""
    for element in elements {
      if element.isSubscript {
        text += element.text
      } else {
        if !text.isEmpty { text += "." }
        text += element.text
      }
    }
    return text
  }
}

extension QueryPredicate {
  /// The predicate with `prefix.` before every key path (for printing subqueries).
  func prefixingKeyPaths(with prefix: String) -> String {
    switch self {
    case .truePredicate, .falsePredicate: return description
    case .not(let inner): return "NOT (\(inner.prefixingKeyPaths(with: prefix)))"
    case .and(let terms):
      return "(" + terms.map { $0.prefixingKeyPaths(with: prefix) }.joined(separator: " AND ") + ")"
    case .or(let terms):
      return "(" + terms.map { $0.prefixingKeyPaths(with: prefix) }.joined(separator: " OR ") + ")"
    case .comparison(var comparison):
      func prefixed(_ expression: QueryExpression) -> QueryExpression {
        guard case .keyPath(let path) = expression else { return expression }
        return .keyPath(QueryKeyPath([.property(prefix)] + path.elements))
      }
      comparison.lhs = prefixed(comparison.lhs)
      comparison.rhs = prefixed(comparison.rhs)
      return comparison.description
    }
  }
}

extension QueryDescribe {
  /// A constant as RQL text that parses back to the same value where RQL has a literal for it.
  static func literal(_ value: RowValue) -> String {
    switch value {
    case .null: return "nil"
    case .bool(let b): return b ? "true" : "false"
    case .int(let i): return String(i)
    case .float(let f): return String(f)
    case .double(let d): return String(d)
    case .string(let s):
      var escaped = "'"
      for scalar in s.unicodeScalars {
        switch scalar {
        case "'": escaped += "\\'"
        case "\\": escaped += "\\\\"
        case "\n": escaped += "\\n"
        case "\t": escaped += "\\t"
        case "\r": escaped += "\\r"
        default: escaped.unicodeScalars.append(scalar)
        }
      }
      return escaped + "'"
    case .data(let d): return "B64\"\(d.base64EncodedString())\""
    case .date(let date):
      let interval = date.timeIntervalSince1970
      let seconds = interval.rounded(.down)
      let nanos = Int64(((interval - seconds) * 1e9).rounded())
      return "T\(Int64(seconds)):\(nanos)"
    case .uuid(let u): return "uuid(\(u.uuidString.lowercased()))"
    case .objectId(let o): return "oid(\(o))"
    case .decimal(let d): return String(describing: d)
    case .link(let key): return "O\(key)"
    case .typedLink(let className, let key): return "O\(key)(\(className))"
    case .list(let items): return "{" + items.map { literal($0) }.joined(separator: ", ") + "}"
    case .map(let entries):
      return "[" + entries.map { "\(literal(.string($0.key))): \(literal($0.value))" }.joined(separator: ", ") + "]"
    }
  }
}
