import Foundation

/// The fast path of `CompiledQuery.matches`: the comparisons of a predicate that test one column
/// of the object against constants (`price BETWEEN {1, 5}`, `name BEGINSWITH[c] 'a'`,
/// `category IN {'a', 'b'}`), compiled once into tests that read that one value and compare it
/// directly, without the evaluator's arrays of values. AND, OR and NOT of them are evaluated
/// here too; every other part of the predicate (links, collections, aggregates, subqueries,
/// `@type`, key path against key path) stays a `BoundPredicate` for `QueryEvaluator`.
///
/// A column test gives exactly the result `QueryEvaluator` gives for the same comparison: the
/// specialized comparisons (numbers, strings, null) apply only to values of the types they are
/// specialized for, and hand any other value to `QueryEvaluator.compare`.
enum FastPredicate: Sendable {
  case constant(Bool)
  case and([FastPredicate])
  case or([FastPredicate])
  indirect case not(FastPredicate)
  /// A test of one column of the object.
  case column(FastColumnTest)
  /// A part evaluated by `QueryEvaluator`.
  case general(BoundPredicate)

  /// `plan` compiled; nil when no part of it is a column test (so `QueryEvaluator` runs it all).
  init?(compiling plan: BoundPredicate) {
    let compiled = Self.compile(plan)
    guard compiled.hasColumnTest else { return nil }
    self = compiled
  }

  /// `plan` compiled; `.general(plan)` when it holds no column test.
  private static func compile(_ plan: BoundPredicate) -> FastPredicate {
    let compiled: FastPredicate
    switch plan {
    case .constant(let value):
      return .constant(value)
    case .and(let terms):
      compiled = .and(terms.map(compile))
    case .or(let terms):
      compiled = .or(terms.map(compile))
    case .not(let inner):
      compiled = .not(compile(inner))
    case .comparison(let comparison):
      guard let test = FastColumnTest(comparison) else { return .general(plan) }
      return .column(test)
    case .typeCheck, .geoWithin:
      return .general(plan)
    }
    return compiled.hasColumnTest ? compiled : .general(plan)
  }

  private var hasColumnTest: Bool {
    switch self {
    case .constant, .general: return false
    case .column: return true
    case .not(let inner): return inner.hasColumnTest
    case .and(let terms), .or(let terms): return terms.contains { $0.hasColumnTest }
    }
  }

  /// Whether the object `key` matches; reads the same values in the same order as
  /// `QueryEvaluator.evaluate(_:on:)` on the plan this was compiled from.
  func matches<Context: QueryContext>(_ key: ObjectKey, context: Context) throws -> Bool {
    switch self {
    case .constant(let result):
      return result
    case .and(let terms):
      for index in terms.indices where try !terms[index].matches(key, context: context) { return false }
      return true
    case .or(let terms):
      for index in terms.indices where try terms[index].matches(key, context: context) { return true }
      return false
    case .not(let inner):
      return try !inner.matches(key, context: context)
    case .column(let test):
      return test.matcher.matches(try context.queryValue(test.column, of: key))
    case .general(let plan):
      return try QueryEvaluator(context: context).evaluate(plan, on: .object(key))
    }
  }
}

/// A comparison of one column of the object (a property that is not a link followed, a
/// collection or an aggregate) with a constant or a list of constants.
final class FastColumnTest: Sendable {
  let column: QueryColumn
  let matcher: FastMatcher

  /// The test for `comparison`, or nil when it is not a single column against constants.
  init?(_ comparison: BoundComparison) {
    guard comparison.quantifier == .single, case .path(let path) = comparison.lhs, !path.isMulti,
      path.links.isEmpty, let last = path.last, case .value = path.terminal, last.property.collection == .none,
      case .constant(let constant) = comparison.rhs
    else { return nil }
    // The values on the right, as `QueryEvaluator` takes them.
    let right: [RowValue]
    if comparison.rhsIsList, case .list(let items) = constant {
      right = items
    } else {
      right = [constant]
    }
    let op = comparison.op
    if op == .between {
      matcher = right.count == 2 ? .range(right[0], right[1]) : .anyOf([])
    } else {
      let alternatives = right.map { FastMatcher(op, $0, options: comparison.options) }
      matcher = alternatives.count == 1 ? alternatives[0] : .anyOf(alternatives)
    }
    column = QueryColumn(last.property, of: last.className)
  }
}

/// A number constant, in the forms a stored number is compared with directly. Holds no
/// references, so copying it is free.
struct FastNumber: Sendable {
  private enum Kind {
    case int, float, double
  }
  private let kind: Kind
  private let bits: UInt64
  /// The constant when it is exactly an integer.
  let int: Int64?
  /// The constant when it is exactly a double (float constants widened, as `QueryValues` does).
  let double: Double?

  init?(_ value: RowValue) {
    switch value {
    case .int(let i):
      kind = .int
      bits = UInt64(bitPattern: i)
      int = i
      double = Double(exactly: i)
    case .double(let d):
      kind = .double
      bits = d.bitPattern
      int = Int64(exactly: d)
      double = d
    case .float(let f):
      kind = .float
      bits = UInt64(f.bitPattern)
      int = Int64(exactly: f)
      double = Double(f)
    default:
      return nil
    }
  }

  /// The constant itself, for values that are not compared directly.
  var value: RowValue {
    switch kind {
    case .int: return .int(Int64(bitPattern: bits))
    case .double: return .double(Double(bitPattern: bits))
    case .float: return .float(Float(bitPattern: UInt32(truncatingIfNeeded: bits)))
    }
  }
}

/// A test of one value against constants, with the result of `QueryEvaluator.compare` (or of
/// BETWEEN, or of IN: any alternative matches).
///
/// Comparing an integer with an integer constant, or a double or float with a constant that is
/// exactly a double, gives the same order as `QueryValues.order` (NaN is unordered and unequal
/// in both), so those are compared natively.
enum FastMatcher: Sendable {
  /// `QueryEvaluator.compare(op, value, constant, options:)`.
  case compare(BoundOperator, RowValue, QueryStringOptions)
  /// `== nil` (or `!= nil` when negated).
  case null(negated: Bool)
  /// `==`, `!=`, `<`, `<=`, `>`, `>=` with a number.
  case number(BoundOperator, FastNumber, QueryStringOptions)
  /// BETWEEN: ordered with both bounds, and low <= value <= high.
  case between(RowValue, RowValue)
  /// BETWEEN two numbers.
  case numberRange(FastNumber, FastNumber)
  /// A string operator with a string.
  case string(FastStringTest)
  /// IN: at least one alternative matches.
  case anyOf([FastMatcher])

  /// The matcher of `value op constant`.
  init(_ op: BoundOperator, _ constant: RowValue, options: QueryStringOptions) {
    switch op {
    case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
      if (op == .equal || op == .notEqual) && constant.isNull {
        self = .null(negated: op == .notEqual)
      } else if let number = FastNumber(constant) {
        self = .number(op, number, options)
      } else if op == .equal || op == .notEqual, case .string(let string) = constant {
        self = .string(FastStringTest(op, string, options: options))
      } else {
        self = .compare(op, constant, options)
      }
    case .beginsWith, .endsWith, .contains, .like:
      if case .string(let string) = constant {
        self = .string(FastStringTest(op, string, options: options))
      } else {
        self = .compare(op, constant, options)
      }
    case .between:
      self = .compare(op, constant, options)
    }
  }

  /// The matcher of `value BETWEEN {low, high}`.
  static func range(_ low: RowValue, _ high: RowValue) -> FastMatcher {
    if let lowNumber = FastNumber(low), let highNumber = FastNumber(high) {
      return .numberRange(lowNumber, highNumber)
    }
    return .between(low, high)
  }

  func matches(_ value: RowValue) -> Bool {
    switch self {
    case .compare(let op, let constant, let options):
      return QueryEvaluator.compare(op, value, constant, options: options)
    case .null(let negated):
      return value.isNull != negated
    case .number(let op, let number, let options):
      switch value {
      case .int(let x):
        if let c = number.int { return Self.holds(op, x, c) }
      case .double(let x):
        if let c = number.double { return Self.holds(op, x, c) }
      case .float(let x):
        if let c = number.double { return Self.holds(op, Double(x), c) }
      default:
        break
      }
      return QueryEvaluator.compare(op, value, number.value, options: options)
    case .between(let low, let high):
      return QueryEvaluator.between(value, low, high)
    case .numberRange(let low, let high):
      switch value {
      case .int(let x):
        if let l = low.int, let h = high.int { return x >= l && x <= h }
      case .double(let x):
        if let l = low.double, let h = high.double { return x >= l && x <= h }
      case .float(let x):
        if let l = low.double, let h = high.double { return Double(x) >= l && Double(x) <= h }
      default:
        break
      }
      return QueryEvaluator.between(value, low.value, high.value)
    case .string(let test):
      return test.matches(value)
    case .anyOf(let alternatives):
      for index in alternatives.indices where alternatives[index].matches(value) { return true }
      return false
    }
  }

  /// `x op c` for the comparison operators (`QueryEvaluator.compare` on two ordered values).
  @inline(__always)
  static func holds<T: Comparable>(_ op: BoundOperator, _ x: T, _ c: T) -> Bool {
    switch op {
    case .equal: return x == c
    case .notEqual: return !(x == c)
    case .less: return x < c
    case .lessOrEqual: return x <= c
    case .greater: return x > c
    case .greaterOrEqual: return x >= c
    case .beginsWith, .endsWith, .contains, .like, .between: return false  // not built for these
    }
  }
}

/// `==`, `!=`, BEGINSWITH, ENDSWITH, CONTAINS or LIKE with a string constant, folded for the
/// options once: a string value is folded and compared by UTF-8 bytes (Unicode scalars for LIKE)
/// as `QueryValues` does, without copying it into arrays; other values go to
/// `QueryEvaluator.compare`.
final class FastStringTest: Sendable {
  let op: BoundOperator
  let constant: RowValue
  let options: QueryStringOptions
  /// The constant folded for the options, as UTF-8.
  let pattern: [UInt8]
  /// For LIKE: the folded constant's pattern.
  let likeTokens: [LikeToken<Unicode.Scalar>]

  init(_ op: BoundOperator, _ string: String, options: QueryStringOptions) {
    self.op = op
    self.constant = .string(string)
    self.options = options
    let folded = QueryValues.fold(string, options)
    pattern = Array(folded.utf8)
    likeTokens =
      op == .like ? QueryValues.likeTokens(Array(folded.unicodeScalars), star: "*", question: "?", escape: "\\") : []
  }

  func matches(_ value: RowValue) -> Bool {
    guard case .string(let string) = value else {
      return QueryEvaluator.compare(op, value, constant, options: options)
    }
    let text = options.isEmpty ? string : QueryValues.fold(string, options)
    if op == .like { return QueryValues.like(text.unicodeScalars, likeTokens) }
    if let result = text.utf8.withContiguousStorageIfAvailable({ test($0) }) { return result }
    return Array(text.utf8).withUnsafeBufferPointer { test($0) }
  }

  private func test(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
    let count = pattern.count
    switch op {
    case .equal: return text.count == count && text.elementsEqual(pattern)
    case .notEqual: return !(text.count == count && text.elementsEqual(pattern))
    case .beginsWith: return count > 0 && text.count >= count && text[0..<count].elementsEqual(pattern)
    case .endsWith: return count > 0 && text.count >= count && text[(text.count - count)...].elementsEqual(pattern)
    case .contains:
      guard count > 0, count <= text.count else { return false }
      let first = pattern[0]
      for start in 0...(text.count - count) where text[start] == first {
        if text[start..<(start + count)].elementsEqual(pattern) { return true }
      }
      return false
    case .less, .lessOrEqual, .greater, .greaterOrEqual, .like, .between:
      return false  // not built for these
    }
  }
}

/// A filter whose every part tests a column of the scanned class against constants, compiled
/// against that class's row layout: a scan tests each encoded row in place, decoding only the
/// columns tested, with no query context in between. Gives the results `FastPredicate` gives.
indirect enum RowFilter: Sendable {
  case constant(Bool)
  case and([RowFilter])
  case or([RowFilter])
  case not(RowFilter)
  /// The column at this storage index, tested by the matcher.
  case column(Int, FastMatcher)

  /// `query` for the rows of `table`; nil when some part of it needs the query context (a
  /// link, a collection, a subquery) or names a column `table` does not have.
  init?(_ query: CompiledQuery, table: TableInfo) {
    guard let fast = query.fastPredicate else { return nil }
    self.init(fast, table: table)
  }

  private init?(_ predicate: FastPredicate, table: TableInfo) {
    switch predicate {
    case .constant(let value):
      self = .constant(value)
    case .and(let terms):
      guard let compiled = RowFilter.all(terms, table: table) else { return nil }
      self = .and(compiled)
    case .or(let terms):
      guard let compiled = RowFilter.all(terms, table: table) else { return nil }
      self = .or(compiled)
    case .not(let inner):
      guard let filter = RowFilter(inner, table: table) else { return nil }
      self = .not(filter)
    case .column(let test):
      let property = test.column.property
      guard test.column.className == table.name, property.collection == .none else { return nil }
      // The column as `RealmQueryContext.queryValue` resolves it.
      guard let index = table.column(of: property) else { return nil }
      self = .column(index, test.matcher)
    case .general:
      return nil
    }
  }

  /// The tests of `columnTests`, by ascending column, in parallel arrays: the column, the
  /// matcher's native form (no references: reading it copies nothing) and the matcher itself,
  /// read only for values the native form does not cover.
  /// (A class: a scan's closure then holds one reference, not three arrays to retain per row.)
  final class ColumnTests: Sendable {
    let columns: [Int]
    let natives: [NativeTest]
    let matchers: [FastMatcher]

    init(_ tests: [(column: Int, matcher: FastMatcher)], table: TableInfo) {
      columns = tests.map(\.column)
      natives = tests.map { NativeTest($0.matcher, storedAs: table.properties[$0.column].type) }
      matchers = tests.map(\.matcher)
      allNative = natives.allSatisfy {
        if case .none = $0 { false } else { true }
      }
    }

    /// Whether every test is native (numbers only), so `quickMatches` can decide rows.
    let allNative: Bool

    /// Whether the encoded row `raw` passes every test, when every test is native and each
    /// tested column holds a number of its test's form, read in place; nil for `matches`.
    @inline(__always)
    func quickMatches(_ raw: UnsafeRawBufferPointer) -> Bool? {
      guard allNative, var reader = RowCodec.QuickColumnReader(raw) else { return nil }
      for i in columns.indices {
        let column = columns[i]
        switch natives[i] {
        case .doubleRange(let low, let high):
          guard let x = reader.double(at: column) else { return nil }
          if !(x >= low && x <= high) { return false }
        case .double(let op, let constant):
          guard let x = reader.double(at: column) else { return nil }
          if !FastMatcher.holds(op, x, constant) { return false }
        case .intRange(let low, let high):
          guard let x = reader.int(at: column) else { return nil }
          if !(x >= low && x <= high) { return false }
        case .int(let op, let constant):
          guard let x = reader.int(at: column) else { return nil }
          if !FastMatcher.holds(op, x, constant) { return false }
        case .none:
          return nil
        }
      }
      return true
    }

    /// Whether the encoded row `raw` passes every test.
    func matches(_ raw: UnsafeRawBufferPointer) throws -> Bool {
      var reader = try RowCodec.ColumnReader(raw)
      for i in columns.indices {
        let value = try reader.value(at: columns[i])
        guard natives[i].matches(value) ?? matchers[i].matches(value) else { return false }
      }
      return true
    }
  }

  /// A matcher's test of a `Double` or an `Int` value, when it has one.
  enum NativeTest: Sendable {
    case none
    case doubleRange(Double, Double)
    case intRange(Int64, Int64)
    case double(BoundOperator, Double)
    case int(BoundOperator, Int64)

    /// `matcher`'s native test, in the form of the values a column of `type` holds where the
    /// constants have it: an `int` column's values are integers, so integer constants are kept
    /// as integers for it; any other column's constants are taken as doubles first.
    init(_ matcher: FastMatcher, storedAs type: PropertyType) {
      let integers = type == .int
      switch matcher {
      case .numberRange(let low, let high):
        let doubles = low.double.flatMap { l in high.double.map { (l, $0) } }
        let ints = low.int.flatMap { l in high.int.map { (l, $0) } }
        if integers, let ints {
          self = .intRange(ints.0, ints.1)
        } else if let doubles {
          self = .doubleRange(doubles.0, doubles.1)
        } else if let ints {
          self = .intRange(ints.0, ints.1)
        } else {
          self = .none
        }
      case .number(let op, let number, _):
        if integers, let i = number.int {
          self = .int(op, i)
        } else if let d = number.double {
          self = .double(op, d)
        } else if let i = number.int {
          self = .int(op, i)
        } else {
          self = .none
        }
      default:
        self = .none
      }
    }

    /// The matcher's result for `value`, or nil when the value is not the kind this covers.
    @inline(__always)
    func matches(_ value: RowValue) -> Bool? {
      switch (self, value) {
      case (.doubleRange(let l, let h), .double(let x)): return x >= l && x <= h
      case (.intRange(let l, let h), .int(let x)): return x >= l && x <= h
      case (.double(let op, let c), .double(let x)): return FastMatcher.holds(op, x, c)
      case (.int(let op, let c), .int(let x)): return FastMatcher.holds(op, x, c)
      default: return nil
      }
    }
  }

  /// When `filters` (all to hold) are column tests and conjunctions of them only: the tests
  /// by ascending column; `ColumnTests.matches` reads each row once, front to back.
  static func columnTests(_ filters: [RowFilter], table: TableInfo) -> ColumnTests? {
    var tests: [(column: Int, matcher: FastMatcher)] = []
    func add(_ filter: RowFilter) -> Bool {
      switch filter {
      case .column(let index, let matcher):
        tests.append((index, matcher))
        return true
      case .and(let terms):
        return terms.allSatisfy(add)
      case .constant(true):
        return true
      case .constant(false), .or, .not:
        return false
      }
    }
    guard filters.allSatisfy(add) else { return nil }
    // Stable: tests of one column keep their order (each reads the column's value once).
    return ColumnTests(
      tests.enumerated().sorted { ($0.element.column, $0.offset) < ($1.element.column, $1.offset) }.map(\.element),
      table: table)
  }

  /// Every term compiled, or nil when one cannot be.
  private static func all(_ terms: [FastPredicate], table: TableInfo) -> [RowFilter]? {
    var compiled: [RowFilter] = []
    for term in terms {
      guard let filter = RowFilter(term, table: table) else { return nil }
      compiled.append(filter)
    }
    return compiled
  }

  /// Whether the encoded row `raw` matches.
  func matches(_ raw: UnsafeRawBufferPointer) throws -> Bool {
    switch self {
    case .constant(let result):
      return result
    case .and(let terms):
      for index in terms.indices where try !terms[index].matches(raw) { return false }
      return true
    case .or(let terms):
      for index in terms.indices where try terms[index].matches(raw) { return true }
      return false
    case .not(let inner):
      return try !inner.matches(raw)
    case .column(let index, let matcher):
      return matcher.matches(try RowCodec.column(index, of: raw))
    }
  }
}
