import Foundation

/// A token of the query language.
struct QueryToken: Equatable, Sendable {
  /// What a token is.
  enum Kind: Equatable, Sendable {
    /// A property name or a keyword; `escaped` when written `#name` (never a keyword).
    case identifier(String, escaped: Bool)
    /// `@count`, `@sum`…: the name after `@`.
    case collectionOperator(String)
    /// A number as written (the parser applies a leading `-`).
    case number(String)
    /// A string, `uuid(…)`, `oid(…)`, date or `B64"…"` literal.
    case literal(RowValue)
    /// `%@` (`"@"`), `%K` (`"K"`) or a printf-style conversion such as `%d` (`"d"`).
    case formatArgument(Character)
    /// `$0`, `$1`…
    case positionalArgument(Int)
    /// `$name`: a SUBQUERY variable.
    case variable(String)
    /// Punctuation and comparison operators: `(`, `==`, `&&`…
    case symbol(String)
    /// The end of the format string.
    case end
  }

  var kind: Kind
  /// Offset of the token's first character, in Unicode scalars.
  var offset: Int
}

/// Splits a query format string into tokens.
struct QueryTokenizer {
  private let format: String
  private let scalars: [Unicode.Scalar]
  private var position = 0

  init(_ format: String) {
    self.format = format
    self.scalars = Array(format.unicodeScalars)
  }

  /// All tokens of the format string, ending with `.end`.
  static func tokenize(_ format: String) throws -> [QueryToken] {
    var tokenizer = QueryTokenizer(format)
    var tokens: [QueryToken] = []
    while true {
      let token = try tokenizer.next()
      tokens.append(token)
      if token.kind == .end { return tokens }
    }
  }

  private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
    let index = position + ahead
    return index < scalars.count ? scalars[index] : nil
  }

  private func error(_ detail: String, at offset: Int) -> QueryError {
    QueryError.syntax(format, "\(detail) at offset \(offset)")
  }

  private static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "_" || scalar.properties.isAlphabetic
  }

  private static func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "_" || scalar.properties.isAlphabetic || scalar.properties.numericType != nil
  }

  private static func isDigit(_ scalar: Unicode.Scalar?) -> Bool {
    guard let scalar else { return false }
    return scalar >= "0" && scalar <= "9"
  }

  private mutating func next() throws -> QueryToken {
    while let scalar = peek(), scalar.properties.isWhitespace { position += 1 }
    let start = position
    guard let scalar = peek() else { return QueryToken(kind: .end, offset: start) }

    if scalar == "T", let date = scanTimestampDate() {
      return QueryToken(kind: .literal(.date(date)), offset: start)
    }
    if Self.isDigit(scalar), let date = try scanCalendarDate() {
      return QueryToken(kind: .literal(.date(date)), offset: start)
    }
    if scalar == "#", let following = peek(1), Self.isIdentifierStart(following) {
      position += 1
      return QueryToken(kind: .identifier(scanIdentifier(), escaped: true), offset: start)
    }
    if Self.isIdentifierStart(scalar) {
      let name = scanIdentifier()
      let lower = name.lowercased()
      if (lower == "uuid" || lower == "oid") && peek() == "(" {
        return QueryToken(kind: .literal(try scanFunctionLiteral(lower, start: start)), offset: start)
      }
      if name == "B64" && (peek() == "\"" || peek() == "'") {
        let text = try scanString()
        guard let data = Data(base64Encoded: text) else { throw error("invalid base64 literal", at: start) }
        return QueryToken(kind: .literal(.data(data)), offset: start)
      }
      return QueryToken(kind: .identifier(name, escaped: false), offset: start)
    }
    if Self.isDigit(scalar) {
      return QueryToken(kind: .number(try scanNumber()), offset: start)
    }
    switch scalar {
    case "'", "\"":
      return QueryToken(kind: .literal(.string(try scanString())), offset: start)
    case "%":
      return QueryToken(kind: .formatArgument(try scanFormatArgument()), offset: start)
    case "$":
      position += 1
      if Self.isDigit(peek()) {
        var digits = ""
        while let digit = peek(), Self.isDigit(digit) {
          digits.unicodeScalars.append(digit)
          position += 1
        }
        guard let index = Int(digits) else { throw error("invalid argument index $\(digits)", at: start) }
        return QueryToken(kind: .positionalArgument(index), offset: start)
      }
      guard let following = peek(), Self.isIdentifierStart(following) else {
        throw error("expected a variable name or argument index after '$'", at: start)
      }
      return QueryToken(kind: .variable(scanIdentifier()), offset: start)
    case "@":
      position += 1
      guard let following = peek(), Self.isIdentifierStart(following) else {
        throw error("expected a collection operator after '@'", at: start)
      }
      return QueryToken(kind: .collectionOperator(scanIdentifier()), offset: start)
    default:
      break
    }
    for symbol in ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"] where matches(symbol) {
      position += 2
      return QueryToken(kind: .symbol(symbol), offset: start)
    }
    if "=<>!(){}[],.-*".unicodeScalars.contains(scalar) {
      position += 1
      return QueryToken(kind: .symbol(String(scalar)), offset: start)
    }
    throw error("unexpected character '\(scalar)'", at: start)
  }

  private func matches(_ symbol: String) -> Bool {
    for (offset, scalar) in symbol.unicodeScalars.enumerated() where peek(offset) != scalar { return false }
    return true
  }

  private mutating func scanIdentifier() -> String {
    var name = ""
    while let scalar = peek(), Self.isIdentifierPart(scalar) {
      name.unicodeScalars.append(scalar)
      position += 1
    }
    return name
  }

  private mutating func scanNumber() throws -> String {
    let start = position
    var text = ""
    func take() {
      if let scalar = peek() { text.unicodeScalars.append(scalar) }
      position += 1
    }
    if peek() == "0", peek(1) == "x" || peek(1) == "X" {
      take()
      take()
      while let scalar = peek(), scalar.properties.isASCIIHexDigit { take() }
      return text
    }
    while Self.isDigit(peek()) { take() }
    if peek() == ".", Self.isDigit(peek(1)) {
      take()
      while Self.isDigit(peek()) { take() }
    }
    if peek() == "e" || peek() == "E" {
      let signed = peek(1) == "+" || peek(1) == "-"
      if Self.isDigit(peek(signed ? 2 : 1)) {
        take()
        if signed { take() }
        while Self.isDigit(peek()) { take() }
      }
    }
    if let scalar = peek(), Self.isIdentifierPart(scalar) {
      throw error("invalid number", at: start)
    }
    return text
  }

  private mutating func scanString() throws -> String {
    let start = position
    guard let quote = peek() else { throw error("expected a string", at: start) }
    position += 1
    var text = ""
    while true {
      guard let scalar = peek() else { throw error("unterminated string", at: start) }
      position += 1
      if scalar == quote { return text }
      guard scalar == "\\" else {
        text.unicodeScalars.append(scalar)
        continue
      }
      guard let escaped = peek() else { throw error("unterminated string", at: start) }
      position += 1
      switch escaped {
      case "n": text += "\n"
      case "t": text += "\t"
      case "r": text += "\r"
      case "0": text += "\0"
      case "u":
        var hex = ""
        while hex.count < 4, let digit = peek(), digit.properties.isASCIIHexDigit {
          hex.unicodeScalars.append(digit)
          position += 1
        }
        guard hex.count == 4, let code = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(code) else {
          throw error("invalid \\u escape", at: position)
        }
        text.unicodeScalars.append(decoded)
      default: text.unicodeScalars.append(escaped)
      }
    }
  }

  private mutating func scanFormatArgument() throws -> Character {
    let start = position
    position += 1
    // Length modifiers of printf conversions (`%ld`, `%lld`, `%hd`, `%lf`) are accepted and ignored.
    while let scalar = peek(), scalar == "l" || scalar == "h" || scalar == "q" { position += 1 }
    guard let conversion = peek(), "@Kdiufsc".unicodeScalars.contains(conversion) else {
      throw error("unsupported conversion after '%'", at: start)
    }
    position += 1
    return Character(conversion)
  }

  /// `uuid(…)` and `oid(…)`: the text up to the closing parenthesis.
  private mutating func scanFunctionLiteral(_ name: String, start: Int) throws -> RowValue {
    position += 1
    var text = ""
    while let scalar = peek(), scalar != ")" {
      text.unicodeScalars.append(scalar)
      position += 1
    }
    guard peek() == ")" else { throw error("unterminated \(name)(", at: start) }
    position += 1
    text = text.trimmingCharacters(in: .whitespaces)
    if name == "uuid" {
      guard let uuid = UUID(uuidString: text) else { throw error("invalid uuid '\(text)'", at: start) }
      return .uuid(uuid)
    }
    var bytes: [UInt8] = []
    var digits = Array(text.unicodeScalars)
    guard digits.count == 24 else { throw error("invalid object id '\(text)'", at: start) }
    while !digits.isEmpty {
      let pair = String(String.UnicodeScalarView(digits.prefix(2)))
      guard let byte = UInt8(pair, radix: 16) else { throw error("invalid object id '\(text)'", at: start) }
      bytes.append(byte)
      digits.removeFirst(2)
    }
    return .objectId(ObjectId(bytes: bytes))
  }

  /// `T<seconds>:<nanoseconds>`, either part possibly negative; nil (nothing consumed) otherwise.
  private mutating func scanTimestampDate() -> Date? {
    var index = position + 1
    func integer() -> Int64? {
      var text = ""
      if index < scalars.count, scalars[index] == "-" {
        text = "-"
        index += 1
      }
      while index < scalars.count, Self.isDigit(scalars[index]) {
        text.unicodeScalars.append(scalars[index])
        index += 1
      }
      return Int64(text)
    }
    guard let seconds = integer(), index < scalars.count, scalars[index] == ":" else { return nil }
    index += 1
    guard let nanos = integer() else { return nil }
    if index < scalars.count, Self.isIdentifierPart(scalars[index]) { return nil }
    position = index
    return Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9)
  }

  /// `YYYY-MM-DD@HH:MM:SS[:nanoseconds]` (or `T` instead of `@`), in UTC; nil (nothing consumed)
  /// when the text does not start like a date.
  private mutating func scanCalendarDate() throws -> Date? {
    var index = position
    func integer(maxDigits: Int) -> Int? {
      var text = ""
      while index < scalars.count, text.count < maxDigits, Self.isDigit(scalars[index]) {
        text.unicodeScalars.append(scalars[index])
        index += 1
      }
      return Int(text)
    }
    func expect(_ scalar: Unicode.Scalar) -> Bool {
      guard index < scalars.count, scalars[index] == scalar else { return false }
      index += 1
      return true
    }
    guard let year = integer(maxDigits: 4), index - position == 4, expect("-"),
      let month = integer(maxDigits: 2), expect("-"), let day = integer(maxDigits: 2)
    else { return nil }
    guard expect("@") || expect("T") else { return nil }
    let start = position
    guard let hour = integer(maxDigits: 2), expect(":"), let minute = integer(maxDigits: 2), expect(":"),
      let second = integer(maxDigits: 2)
    else { throw error("invalid date", at: start) }
    var nanos = 0
    if expect(":") {
      guard let value = integer(maxDigits: 9) else { throw error("invalid date", at: start) }
      nanos = value
    }
    guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60 else {
      throw error("invalid date", at: start)
    }
    position = index
    let days = Self.daysFromCivil(year: year, month: month, day: day)
    let seconds = Double(days * 86_400 + hour * 3_600 + minute * 60 + second)
    return Date(timeIntervalSince1970: seconds + Double(nanos) / 1e9)
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
  private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}
