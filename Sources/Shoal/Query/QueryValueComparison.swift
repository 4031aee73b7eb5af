import Foundation

/// Everything the query engine needs from `Decimal128` beyond `==`, `<` and `Hashable`, in one
/// place: exact conversion from integers and doubles (to compare decimals with other numbers),
/// and RealmSwift's `decimalNumber(byAdding:)` / `decimalNumberByDividing(by:)` for `@sum`/`@avg`.
enum QueryDecimal {
  static func make(_ value: Int64) -> Decimal128 { Decimal128(Int(value)) }
  static func make(_ value: Double) -> Decimal128 { Decimal128(value) }
  static func add(_ a: Decimal128, _ b: Decimal128) -> Decimal128 { a.decimalNumber(byAdding: b) }
  static func divide(_ a: Decimal128, by count: Int) -> Decimal128 {
    a.decimalNumberByDividing(by: make(Int64(count)))
  }
}

/// Comparison of stored values with the semantics of Realm queries and sorting.
///
/// Numbers of different kinds (int, float, double, decimal) compare numerically; strings compare
/// by UTF-8 bytes (Unicode scalar order, as realm-core); null equals only null and is not ordered
/// against anything in a query.
enum QueryValues {
  /// A number of any stored kind.
  enum Number {
    case int(Int64)
    case double(Double)
    case decimal(Decimal128)
  }

  static func number(_ value: RowValue) -> Number? {
    switch value {
    case .int(let i): return .int(i)
    case .float(let f): return .double(Double(f))
    case .double(let d): return .double(d)
    case .decimal(let d): return .decimal(d)
    default: return nil
    }
  }

  /// -1, 0 or 1; nil when the numbers are unordered (NaN).
  static func compare(_ a: Number, _ b: Number) -> Int? {
    switch (a, b) {
    case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
    case (.double(let x), .double(let y)):
      if x.isNaN || y.isNaN { return nil }
      return x < y ? -1 : (x == y ? 0 : 1)
    case (.int(let x), .double(let y)): return compare(x, y)
    case (.double(let x), .int(let y)): return compare(y, x).map { -$0 }
    case (.decimal(let x), .decimal(let y)): return compare(x, y)
    case (.decimal(let x), .int(let y)): return compare(x, QueryDecimal.make(y))
    case (.int(let x), .decimal(let y)): return compare(QueryDecimal.make(x), y)
    case (.decimal(let x), .double(let y)): return compare(x, y)
    case (.double(let x), .decimal(let y)): return compare(y, x).map { -$0 }
    }
  }

  private static func compare(_ x: Decimal128, _ y: Decimal128) -> Int? {
    if x < y { return -1 }
    if y < x { return 1 }
    return x == y ? 0 : nil
  }

  private static func compare(_ x: Decimal128, _ y: Double) -> Int? {
    if y.isNaN { return nil }
    if y == .infinity { return -1 }
    if y == -.infinity { return 1 }
    return compare(x, QueryDecimal.make(y))
  }

  /// Exact comparison of an integer with a double.
  private static func compare(_ x: Int64, _ y: Double) -> Int? {
    if y.isNaN { return nil }
    if y >= 9_223_372_036_854_775_808.0 { return -1 }
    if y < -9_223_372_036_854_775_808.0 { return 1 }
    let floor = y.rounded(.down)
    let whole = Int64(floor)
    if x < whole { return -1 }
    if x > whole { return 1 }
    return y > floor ? -1 : 0
  }

  /// Folds a string for `[c]`/`[d]` comparisons.
  static func fold(_ string: String, _ options: QueryStringOptions) -> String {
    if options.isEmpty { return string }
    if let folded = foldASCII(string, options) { return folded }
    var compareOptions: String.CompareOptions = []
    if options.contains(.caseInsensitive) { compareOptions.insert(.caseInsensitive) }
    if options.contains(.diacriticInsensitive) { compareOptions.insert(.diacriticInsensitive) }
    if compareOptions.isEmpty { return string }
    return string.folding(options: compareOptions, locale: nil)
  }

  /// `fold` of an ASCII string, without Foundation: ASCII has no diacritics, and its case
  /// folding is lowercasing A-Z (what `String.folding(options:locale:)` gives). Nil when the
  /// string is not ASCII.
  private static func foldASCII(_ string: String, _ options: QueryStringOptions) -> String? {
    let utf8 = string.utf8
    var hasUppercase = false
    for byte in utf8 {
      if byte >= 0x80 { return nil }
      if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { hasUppercase = true }
    }
    guard hasUppercase && options.contains(.caseInsensitive) else { return string }
    return String(unsafeUninitializedCapacity: utf8.count) { buffer in
      var count = 0
      for byte in utf8 {
        buffer[count] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
        count += 1
      }
      return count
    }
  }

  private static func compareBytes<A: Sequence<UInt8>, B: Sequence<UInt8>>(_ a: A, _ b: B) -> Int {
    var left = a.makeIterator()
    var right = b.makeIterator()
    while true {
      switch (left.next(), right.next()) {
      case (nil, nil): return 0
      case (nil, _): return -1
      case (_, nil): return 1
      case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
      }
    }
  }

  private static func uuidBytes(_ uuid: UUID) -> [UInt8] { withUnsafeBytes(of: uuid.uuid) { Array($0) } }

  /// Query equality (`==`, `IN`).
  static func equal(_ a: RowValue, _ b: RowValue, options: QueryStringOptions = []) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.null, _), (_, .null): return false
    case (.string(let x), .string(let y)):
      return fold(x, options).utf8.elementsEqual(fold(y, options).utf8)
    case (.link(let x), .link(let y)): return x == y
    // A typed link to no class is an unmanaged object given as an argument: it equals nothing.
    case (.typedLink("", _), _), (_, .typedLink("", _)): return false
    case (.link(let x), .typedLink(_, let y)), (.typedLink(_, let x), .link(let y)): return x == y
    default:
      if let x = number(a), let y = number(b) { return compare(x, y) == 0 }
      return a == b
    }
  }

  /// Query ordering (`<`, `<=`, `>`, `>=`, `BETWEEN`): -1, 0 or 1, or nil when the values are not
  /// ordered (a null, values of different types, NaN).
  static func order(_ a: RowValue, _ b: RowValue) -> Int? {
    switch (a, b) {
    case (.string(let x), .string(let y)): return compareBytes(x.utf8, y.utf8)
    case (.data(let x), .data(let y)): return compareBytes(x, y)
    case (.date(let x), .date(let y)): return x < y ? -1 : (x == y ? 0 : 1)
    case (.bool(let x), .bool(let y)): return x == y ? 0 : (x ? 1 : -1)
    case (.uuid(let x), .uuid(let y)): return compareBytes(uuidBytes(x), uuidBytes(y))
    case (.objectId(let x), .objectId(let y)): return x < y ? -1 : (x == y ? 0 : 1)
    default:
      guard let x = number(a), let y = number(b) else { return nil }
      return compare(x, y)
    }
  }

  /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS` and `LIKE` on strings (or data). As in RealmSwift,
  /// the substring operators are false for a null or empty right side.
  static func stringOperation(
    _ op: BoundOperator, _ a: RowValue, _ b: RowValue, options: QueryStringOptions
  ) -> Bool {
    let text: [UInt8]
    let pattern: [UInt8]
    switch (a, b) {
    case (.null, .null): return op == .like
    case (.string(let x), .string(let y)):
      text = Array(fold(x, options).utf8)
      pattern = Array(fold(y, options).utf8)
    case (.data(let x), .data(let y)):
      text = Array(x)
      pattern = Array(y)
    case (.data(let x), .string(let y)):
      text = Array(x)
      pattern = Array(y.utf8)
    default: return false
    }
    switch op {
    case .beginsWith: return !pattern.isEmpty && text.starts(with: pattern)
    case .endsWith: return !pattern.isEmpty && text.reversed().starts(with: pattern.reversed())
    case .contains: return !pattern.isEmpty && containsBytes(text, pattern)
    case .like:
      if case .string = a {
        return like(
          Array(String(decoding: text, as: UTF8.self).unicodeScalars),
          Array(String(decoding: pattern, as: UTF8.self).unicodeScalars), star: "*", question: "?", escape: "\\")
      }
      return like(text, pattern, star: UInt8(ascii: "*"), question: UInt8(ascii: "?"), escape: UInt8(ascii: "\\"))
    default: return false
    }
  }

  private static func containsBytes(_ text: [UInt8], _ pattern: [UInt8]) -> Bool {
    guard pattern.count <= text.count else { return false }
    for start in 0...(text.count - pattern.count) where text[start] == pattern[0] {
      if text[start..<(start + pattern.count)].elementsEqual(pattern) { return true }
    }
    return false
  }

  /// Wildcard matching: `star` matches any run, `question` one element, `escape` makes the next
  /// pattern element literal.
  static func like<T: Equatable>(_ text: [T], _ pattern: [T], star: T, question: T, escape: T) -> Bool {
    like(text, likeTokens(pattern, star: star, question: question, escape: escape))
  }

  /// A LIKE pattern compiled for `like(_:_:)`.
  static func likeTokens<T: Equatable>(_ pattern: [T], star: T, question: T, escape: T) -> [LikeToken<T>] {
    var tokens: [LikeToken<T>] = []
    var index = 0
    while index < pattern.count {
      let element = pattern[index]
      if element == escape, index + 1 < pattern.count {
        tokens.append(.literal(pattern[index + 1]))
        index += 2
        continue
      }
      tokens.append(element == star ? .run : (element == question ? .one : .literal(element)))
      index += 1
    }
    return tokens
  }

  /// Whether `text` matches a compiled LIKE pattern.
  static func like<C: Collection>(_ text: C, _ tokens: [LikeToken<C.Element>]) -> Bool where C.Element: Equatable {
    var t = text.startIndex
    var p = 0
    var backtrackPattern: Int?
    var backtrackText = text.startIndex
    while t != text.endIndex {
      if p < tokens.count {
        switch tokens[p] {
        case .run:
          backtrackPattern = p
          backtrackText = t
          p += 1
          continue
        case .one:
          text.formIndex(after: &t)
          p += 1
          continue
        case .literal(let element) where element == text[t]:
          text.formIndex(after: &t)
          p += 1
          continue
        case .literal:
          break
        }
      }
      guard let star = backtrackPattern else { return false }
      p = star + 1
      text.formIndex(after: &backtrackText)
      t = backtrackText
    }
    while p < tokens.count, case .run = tokens[p] { p += 1 }
    return p == tokens.count
  }

  /// The rank of a value's type in the sort order of mixed values.
  private static func sortRank(_ value: RowValue) -> Int {
    switch value {
    case .null: return 0
    case .bool: return 1
    case .int, .float, .double, .decimal: return 2
    case .string: return 3
    case .data: return 4
    case .date: return 5
    case .objectId: return 6
    case .uuid: return 7
    case .link, .typedLink: return 8
    case .list: return 9
    case .map: return 10
    }
  }

  private static func isNaN(_ value: RowValue) -> Bool {
    switch value {
    case .double(let d): return d.isNaN
    case .float(let f): return f.isNaN
    default: return false
    }
  }

  /// A total order for sorting: null first, then bool, numbers (numerically across kinds, NaN
  /// first), string, data, date, object id, uuid, links, lists, maps.
  static func sortOrder(_ a: RowValue, _ b: RowValue) -> Int {
    let rankA = sortRank(a)
    let rankB = sortRank(b)
    if rankA != rankB { return rankA < rankB ? -1 : 1 }
    switch (a, b) {
    case (.null, .null): return 0
    case (.link(let x), .link(let y)): return x < y ? -1 : (x == y ? 0 : 1)
    case (.typedLink(let c1, let k1), .typedLink(let c2, let k2)):
      if c1 != c2 { return compareBytes(c1.utf8, c2.utf8) }
      return k1 < k2 ? -1 : (k1 == k2 ? 0 : 1)
    case (.link(let x), .typedLink(_, let y)): return x < y ? -1 : (x == y ? -1 : 1)
    case (.typedLink(_, let x), .link(let y)): return x < y ? -1 : 1
    case (.list(let x), .list(let y)): return sortOrder(sequence: x, y)
    case (.map(let x), .map(let y)):
      return sortOrder(
        sequence: x.flatMap { [RowValue.string($0.key), $0.value] }, y.flatMap { [RowValue.string($0.key), $0.value] })
    default:
      let nanA = isNaN(a)
      let nanB = isNaN(b)
      if nanA || nanB { return nanA == nanB ? 0 : (nanA ? -1 : 1) }
      return order(a, b) ?? 0
    }
  }

  private static func sortOrder(sequence x: [RowValue], _ y: [RowValue]) -> Int {
    for (left, right) in zip(x, y) {
      let result = sortOrder(left, right)
      if result != 0 { return result }
    }
    return x.count < y.count ? -1 : (x.count == y.count ? 0 : 1)
  }
}

/// One element of a compiled LIKE pattern.
enum LikeToken<T> {
  /// Matches this element.
  case literal(T)
  /// `?`: matches any one element.
  case one
  /// `*`: matches any run of elements.
  case run
}

extension LikeToken: Sendable where T: Sendable {}
