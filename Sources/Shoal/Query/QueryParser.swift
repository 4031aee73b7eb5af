import Foundation

/// A recursive-descent parser of Realm Query Language / `NSPredicate` format strings.
///
/// Grammar (keywords are case-insensitive):
///
///     predicate  := or
///     or         := and (("OR" | "||") and)*
///     and        := not (("AND" | "&&") not)*
///     not        := ("NOT" | "!") not | primary
///     primary    := "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
///     comparison := ["ANY" | "SOME" | "ALL" | "NONE"] expression operator ["[" c|d|cd "]"] expression
///     expression := keypath | literal | "%@" | "%K" | "$n" | "{" expression, … "}" | subquery
///     subquery   := "SUBQUERY" "(" keypath "," "$var" "," predicate ")" "." ("@count" | "@size")
///
/// Arguments (`%@` in order, `$n` by index) are converted with `QueryContext.queryArgument` as
/// they are parsed; `%K` takes a key path from a String argument.
struct QueryParser {
  private let format: String
  private let tokens: [QueryToken]
  private var index = 0
  private let arguments: [Any?]
  private var nextArgument = 0
  private let context: any QueryContext
  /// The variables of the SUBQUERYs being parsed, innermost last.
  private var variables: [String] = []

  private init(format: String, tokens: [QueryToken], arguments: [Any?], context: any QueryContext) {
    self.format = format
    self.tokens = tokens
    self.arguments = arguments
    self.context = context
  }

  /// Parses `format`, substituting `arguments`.
  static func parse(_ format: String, arguments: [Any?], context: any QueryContext) throws -> QueryPredicate {
    let tokens = try QueryTokenizer.tokenize(format)
    var parser = QueryParser(format: format, tokens: tokens, arguments: arguments, context: context)
    if parser.current.kind == .end { throw parser.error("empty predicate") }
    let predicate = try parser.parsePredicate()
    if let word = parser.keyword, ["SORT", "DISTINCT", "LIMIT"].contains(word) { throw unsupportedDescriptor(word) }
    guard parser.current.kind == .end else { throw parser.error("unexpected \(parser.currentText)") }
    return predicate
  }

  private static func unsupportedDescriptor(_ word: String) -> QueryError {
    QueryError(
      .unsupported, "\(word) is not supported in a filter predicate; use sorted(byKeyPath:) or distinct(by:)")
  }

  // MARK: Tokens

  private var current: QueryToken { tokens[min(index, tokens.count - 1)] }

  private var currentText: String {
    switch current.kind {
    case .identifier(let name, _): return "'\(name)'"
    case .collectionOperator(let name): return "'@\(name)'"
    case .number(let text): return "'\(text)'"
    case .literal(let value): return QueryDescribe.literal(value)
    case .formatArgument(let conversion): return "'%\(conversion)'"
    case .positionalArgument(let n): return "'$\(n)'"
    case .variable(let name): return "'$\(name)'"
    case .symbol(let symbol): return "'\(symbol)'"
    case .end: return "end of string"
    }
  }

  private func error(_ detail: String) -> QueryError {
    QueryError.syntax(format, "\(detail) at offset \(current.offset)")
  }

  private mutating func advance() { index += 1 }

  private func isSymbol(_ symbol: String) -> Bool { current.kind == .symbol(symbol) }

  /// The current token's keyword (upper-cased), or nil when it is not an unescaped identifier.
  private var keyword: String? {
    if case .identifier(let name, false) = current.kind { return name.uppercased() }
    return nil
  }

  private mutating func expectSymbol(_ symbol: String) throws {
    guard isSymbol(symbol) else { throw error("expected '\(symbol)' but found \(currentText)") }
    advance()
  }

  private func peekKind(_ ahead: Int) -> QueryToken.Kind { tokens[min(index + ahead, tokens.count - 1)].kind }

  // MARK: Predicates

  private mutating func parsePredicate() throws -> QueryPredicate { try parseOr() }

  private mutating func parseOr() throws -> QueryPredicate {
    var terms = [try parseAnd()]
    while keyword == "OR" || isSymbol("||") {
      advance()
      terms.append(try parseAnd())
    }
    return terms.count == 1 ? terms[0] : .or(terms)
  }

  private mutating func parseAnd() throws -> QueryPredicate {
    var terms = [try parseNot()]
    while keyword == "AND" || isSymbol("&&") {
      advance()
      terms.append(try parseNot())
    }
    return terms.count == 1 ? terms[0] : .and(terms)
  }

  private mutating func parseNot() throws -> QueryPredicate {
    if keyword == "NOT" || isSymbol("!") {
      advance()
      return .not(try parseNot())
    }
    return try parsePrimary()
  }

  private mutating func parsePrimary() throws -> QueryPredicate {
    if isSymbol("(") {
      advance()
      let predicate = try parsePredicate()
      try expectSymbol(")")
      return predicate
    }
    switch keyword {
    case "TRUEPREDICATE":
      advance()
      return .truePredicate
    case "FALSEPREDICATE":
      advance()
      return .falsePredicate
    case .some(let word) where ["SORT", "DISTINCT", "LIMIT"].contains(word):
      throw Self.unsupportedDescriptor(word)
    default:
      return try parseComparison()
    }
  }

  private mutating func parseComparison() throws -> QueryPredicate {
    var quantifier = QueryQuantifier.implicit
    if let word = keyword, ["ANY", "SOME", "ALL", "NONE"].contains(word), !isPropertyContinuation(peekKind(1)) {
      switch word {
      case "ALL": quantifier = .all
      case "NONE": quantifier = .none
      default: quantifier = .any
      }
      advance()
    }
    let lhs = try parseExpression()
    let op = try parseOperator()
    let options = try parseOptions()
    let rhs = try parseExpression()
    return .comparison(QueryComparison(lhs, op, rhs, options: options, quantifier: quantifier))
  }

  /// Whether a token after `ANY`/`ALL`… shows that word to be a property name instead.
  private func isPropertyContinuation(_ kind: QueryToken.Kind) -> Bool {
    switch kind {
    case .symbol(let symbol): return symbol != "{" && symbol != "-"
    case .end: return true
    case .identifier(let name, false):
      let upper = name.uppercased()
      return ["AND", "OR", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "GEOWITHIN"].contains(upper)
    default: return false
    }
  }

  private mutating func parseOperator() throws -> QueryOperator {
    if case .symbol(let symbol) = current.kind {
      let op: QueryOperator? =
        switch symbol {
        case "==", "=": .equal
        case "!=", "<>": .notEqual
        case "<": .less
        case "<=", "=<": .lessOrEqual
        case ">": .greater
        case ">=", "=>": .greaterOrEqual
        default: nil
        }
      if let op {
        advance()
        return op
      }
    }
    let op: QueryOperator? =
      switch keyword {
      case "BEGINSWITH": .beginsWith
      case "ENDSWITH": .endsWith
      case "CONTAINS": .contains
      case "LIKE": .like
      case "IN": .in
      case "BETWEEN": .between
      case "GEOWITHIN": .geoWithin
      default: nil
      }
    if let op {
      advance()
      return op
    }
    if let word = keyword, word == "MATCHES" || word == "TEXT" {
      throw QueryError(.unsupported, "Operator '\(word)' is not supported")
    }
    throw error("expected a comparison operator but found \(currentText)")
  }

  private mutating func parseOptions() throws -> QueryStringOptions {
    guard isSymbol("[") else { return [] }
    advance()
    guard case .identifier(let letters, _) = current.kind else {
      throw error("expected string options such as [c] or [cd]")
    }
    var options: QueryStringOptions = []
    for letter in letters.lowercased() {
      switch letter {
      case "c": options.insert(.caseInsensitive)
      case "d": options.insert(.diacriticInsensitive)
      default: throw error("unknown string option '\(letter)'")
      }
    }
    advance()
    try expectSymbol("]")
    return options
  }

  // MARK: Expressions

  private mutating func parseExpression() throws -> QueryExpression {
    switch current.kind {
    case .number(let text):
      advance()
      return .constant(try number(text, negative: false))
    case .symbol("-"):
      advance()
      guard case .number(let text) = current.kind else { throw error("expected a number after '-'") }
      advance()
      return .constant(try number(text, negative: true))
    case .literal(let value):
      advance()
      return .constant(value)
    case .formatArgument("K"):
      advance()
      return .keyPath(try parseKeyPathTail(try keyPathArgument()))
    case .formatArgument:
      advance()
      return try argumentExpression(try takeSequentialArgument())
    case .positionalArgument(let n):
      advance()
      return try argumentExpression(try positionalArgument(n))
    case .variable(let name):
      guard let variable = variables.last else {
        throw QueryError.keyPath("$\(name)", "variable '$\(name)' used outside of a SUBQUERY")
      }
      guard name == variable else {
        throw QueryError.keyPath("$\(name)", "only the SUBQUERY variable '$\(variable)' may be used here")
      }
      advance()
      return .keyPath(try parseKeyPathTail([]))
    case .symbol("{"):
      return .constant(try parseList())
    case .identifier(let name, let escaped):
      if !escaped {
        switch name.uppercased() {
        case "TRUE", "YES":
          advance()
          return .constant(.bool(true))
        case "FALSE", "NO":
          advance()
          return .constant(.bool(false))
        case "NIL", "NULL":
          advance()
          return .constant(.null)
        case "SUBQUERY" where peekKind(1) == .symbol("("):
          return try parseSubquery()
        default: break
        }
      }
      if let variable = variables.last {
        throw QueryError.keyPath(name, "a key path inside a SUBQUERY must start with the variable '$\(variable)'")
      }
      advance()
      return .keyPath(try parseKeyPathTail([.property(name)]))
    default:
      throw error("expected a key path or a value but found \(currentText)")
    }
  }

  private func number(_ text: String, negative: Bool) throws -> RowValue {
    let signed = negative ? "-" + text : text
    if text.hasPrefix("0x") || text.hasPrefix("0X") {
      guard let magnitude = UInt64(text.dropFirst(2), radix: 16) else { throw error("invalid number \(text)") }
      if negative {
        guard magnitude <= UInt64(Int64.max) + 1 else { throw error("number out of range \(signed)") }
        return .int(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
      }
      guard magnitude <= UInt64(Int64.max) else { throw error("number out of range \(text)") }
      return .int(Int64(magnitude))
    }
    if let int = Int64(signed) { return .int(int) }
    if let double = Double(signed) { return .double(double) }
    throw error("invalid number \(signed)")
  }

  /// `{a, b, …}`: a list of constants.
  private mutating func parseList() throws -> RowValue {
    try expectSymbol("{")
    var items: [RowValue] = []
    if isSymbol("}") {
      advance()
      return .list(items)
    }
    while true {
      guard case .constant(let value) = try parseExpression() else {
        throw error("a list may contain only constant values")
      }
      items.append(value)
      if isSymbol("}") {
        advance()
        return .list(items)
      }
      try expectSymbol(",")
    }
  }

  /// The rest of a key path after its first elements: `.name`, `.@op`, `['key']`.
  private mutating func parseKeyPathTail(_ start: [QueryKeyPath.Element]) throws -> QueryKeyPath {
    var elements = start
    while true {
      if isSymbol(".") {
        advance()
        switch current.kind {
        case .identifier(let name, _):
          elements.append(.property(name))
        case .collectionOperator(let name):
          elements.append(try collectionOperator(name, keyPath: elements))
        case .formatArgument("K"):
          advance()
          elements.append(contentsOf: try keyPathArgument())
          continue
        default:
          throw error("expected a property name after '.' but found \(currentText)")
        }
        advance()
      } else if isSymbol("[") {
        advance()
        let key: RowValue
        switch current.kind {
        case .literal(let value):
          advance()
          key = value
        case .number(let digits):
          guard let position = Int64(digits) else {
            throw error("expected a position or a string key in '[…]' but found \(currentText)")
          }
          advance()
          key = .int(position)
        case .formatArgument("K"):
          // `[%K]` with `#any`: every element (RealmSwift's `.any` on a mixed value).
          advance()
          let argument = try takeSequentialArgument()
          guard argument as? String == "#any" else {
            throw error("'[%K]' takes \"#any\", not '\(argument ?? "nil")'")
          }
          try expectSymbol("]")
          elements.append(.all)
          continue
        case .formatArgument:
          advance()
          key = try argumentValue(try takeSequentialArgument())
        case .positionalArgument(let n):
          advance()
          key = try argumentValue(try positionalArgument(n))
        default:
          if isSymbol("*") {
            advance()
            try expectSymbol("]")
            elements.append(.all)
            continue
          }
          throw error("expected a string key in '[…]' but found \(currentText)")
        }
        switch key {
        case .string(let string):
          elements.append(.subscript(string))
        case .int(let index):
          elements.append(.index(Int(index)))
        default:
          throw QueryError.keyPath(
            QueryKeyPath(elements).description, "only string keys are allowed as subscripts in dictionary queries")
        }
        try expectSymbol("]")
      } else {
        return QueryKeyPath(elements)
      }
    }
  }

  private func collectionOperator(_ name: String, keyPath: [QueryKeyPath.Element]) throws -> QueryKeyPath.Element {
    switch name.lowercased() {
    case "count": return .count
    case "size": return .size
    case "sum": return .sum
    case "avg", "average": return .avg
    case "min": return .min
    case "max": return .max
    case "keys", "allkeys": return .keys
    case "values", "allvalues": return .values
    case "type": return .type
    default:
      let path = QueryKeyPath(keyPath).description + ".@" + name
      throw QueryError.keyPath(path, "Unsupported collection operation '@\(name)'")
    }
  }

  /// `SUBQUERY(collection, $x, predicate).@count`.
  private mutating func parseSubquery() throws -> QueryExpression {
    advance()
    try expectSymbol("(")
    guard case .keyPath(let collection) = try parseExpression() else {
      throw error("SUBQUERY needs a key path to a collection")
    }
    try expectSymbol(",")
    guard case .variable(let variable) = current.kind else {
      throw error("expected a variable such as $x but found \(currentText)")
    }
    advance()
    try expectSymbol(",")
    variables.append(variable)
    let predicate = try parsePredicate()
    variables.removeLast()
    try expectSymbol(")")
    guard isSymbol("."), case .collectionOperator(let name) = peekKind(1),
      ["count", "size"].contains(name.lowercased())
    else {
      throw QueryError(.unsupported, "SUBQUERY is only supported when immediately followed by .@count.")
    }
    advance()
    advance()
    return .subqueryCount(collection: collection, predicate: predicate)
  }

  // MARK: Arguments

  private mutating func takeSequentialArgument() throws -> Any? {
    guard nextArgument < arguments.count else { throw QueryError.insufficientArguments }
    defer { nextArgument += 1 }
    return arguments[nextArgument]
  }

  private func positionalArgument(_ n: Int) throws -> Any? {
    guard n < arguments.count else { throw QueryError.missingPositionalArgument(n, count: arguments.count) }
    return arguments[n]
  }

  private func argumentValue(_ argument: Any?) throws -> RowValue {
    try context.queryArgument(argument)
  }

  /// An argument as an expression: a geospatial shape, or a constant.
  private func argumentExpression(_ argument: Any?) throws -> QueryExpression {
    if let shape = GeoShape(argument: argument) { return .geometry(shape) }
    return .constant(try argumentValue(argument))
  }

  /// The elements of the key path given as a String argument to `%K`.
  private mutating func keyPathArgument() throws -> [QueryKeyPath.Element] {
    let argument = try takeSequentialArgument()
    guard let text = argument as? String else {
      throw QueryError(.invalidArgument, "%K requires a String key path argument, not '\(argument ?? "nil")'")
    }
    var elements: [QueryKeyPath.Element] = []
    for component in text.split(separator: ".", omittingEmptySubsequences: false) {
      guard !component.isEmpty else { throw QueryError.keyPath(text, "empty property name") }
      if component.hasPrefix("@") {
        elements.append(try collectionOperator(String(component.dropFirst()), keyPath: elements))
      } else {
        elements.append(.property(String(component)))
      }
    }
    return elements
  }
}
