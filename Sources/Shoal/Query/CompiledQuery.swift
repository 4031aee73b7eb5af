import Foundation

/// A predicate on the objects of one class, validated against the schema and ready to test
/// objects: what `Results.filter(_:_:)` and `where { … }` compile to.
///
/// Build it from an RQL / `NSPredicate` format string with arguments, or from a `QueryPredicate`
/// AST. Key paths, operators and constants are checked when it is built, so `matches` only
/// fails when reading values fails.
struct CompiledQuery: Sendable {
  /// The class whose objects the query tests.
  var className: String { storage.className }
  /// The predicate, with arguments substituted.
  var predicate: QueryPredicate { storage.predicate }
  /// The predicate resolved against the schema.
  var plan: BoundPredicate { storage.plan }
  /// Everything in one reference, so that a copy of the query (one per object a scan tests, as
  /// callers iterate their filters) costs one retain.
  private let storage: Storage

  private final class Storage: Sendable {
    let className: String
    let predicate: QueryPredicate
    let plan: BoundPredicate
    let hint: IndexHint?
    let range: IndexRange?
    /// The plan compiled for `matches`: nil when no part of it tests a column against constants.
    let fast: FastPredicate?

    init(className: String, predicate: QueryPredicate, plan: BoundPredicate) {
      self.className = className
      self.predicate = predicate
      self.plan = plan
      hint = CompiledQuery.indexHint(plan).map { IndexHint(property: $0.property, values: $0.values) }
      range = hint == nil ? CompiledQuery.indexRange(plan) : nil
      fast = FastPredicate(compiling: plan)
    }
  }

  /// Values of one indexed property that every matching object has one of.
  private struct IndexHint: Sendable {
    var property: QueryProperty
    var values: [RowValue]
  }

  /// A range of values (or a string prefix) of one indexed property that every matching
  /// object's value lies in.
  struct IndexRange: Sendable, Equatable {
    var property: QueryProperty
    /// The lowest and highest value (inclusive; nil for unbounded).
    var lower: RowValue?
    var upper: RowValue?
    /// For `BEGINSWITH`: what every matching string starts with.
    var prefix: String?
    /// Whether the objects whose values lie in the range are exactly the ones matching the
    /// whole predicate, so a candidate needs no test: the predicate is only inclusive bounds
    /// (`<=`, `>=`, `BETWEEN`, joined by `AND`) on a date property, whose index keys are its
    /// exact values (see `OrderedIndexKey`).
    var exact = false
  }

  /// Parses `predicate` (RQL / `NSPredicate` syntax) with `arguments` for `%@`, `%K` and `$0`…
  /// and validates it against the schema of `className`.
  init(className: String, predicate: String, arguments: [Any?] = [], context: any QueryContext) throws {
    let ast = try QueryParser.parse(predicate, arguments: arguments, context: context)
    try self.init(className: className, predicate: ast, context: context)
  }

  /// Validates `predicate` against the schema of `className`.
  init(className: String, predicate: QueryPredicate, context: any QueryContext) throws {
    let plan = try QueryBinder(context: context).bind(predicate, scope: .object(className))
    self.init(className: className, predicate: predicate, plan: plan)
  }

  /// The query that matches every object of `className`.
  init(className: String) {
    self.init(className: className, predicate: .truePredicate, plan: .constant(true))
  }

  private init(className: String, predicate: QueryPredicate, plan: BoundPredicate) {
    storage = Storage(className: className, predicate: predicate, plan: plan)
  }

  /// Whether the object `key` of `className` matches the predicate. (Generic, so that a scan's
  /// calls specialize for its context.)
  func matches<Context: QueryContext>(_ key: ObjectKey, context: Context) throws -> Bool {
    if let fast = storage.fast { return try fast.matches(key, context: context) }
    return try QueryEvaluator(context: context).evaluate(storage.plan, on: .object(key))
  }

  /// `matches` without the fast path: the whole plan through `QueryEvaluator` (for tests that
  /// check both ways agree).
  func matchesWithoutFastPath(_ key: ObjectKey, context: any QueryContext) throws -> Bool {
    try QueryEvaluator(context: context).evaluate(plan, on: .object(key))
  }

  /// Whether `matches` tests some comparison on the fast path (a column against constants).
  var usesFastPath: Bool { storage.fast != nil }

  /// The plan compiled for the fast path; nil when no part of it tests a column against
  /// constants.
  var fastPredicate: FastPredicate? { storage.fast }

  /// True when the predicate matches every object (`TRUEPREDICATE`, no filter).
  var matchesEverything: Bool {
    if case .constant(true) = plan { return true }
    if case .and(let terms) = plan, terms.isEmpty { return true }
    return false
  }

  /// An indexed property and the values that a matching object must have in it: non-nil when the
  /// predicate is `indexed == constant`, `indexed IN {constants}`, an OR of those on the same
  /// property, or an AND containing one of those (the one with fewest values). The caller may take
  /// candidates from the index, but must still call `matches` on each. `values` may be empty
  /// (nothing can match, e.g. `intProperty == 1.5`).
  var indexHint: (property: QueryProperty, values: [RowValue])? {
    storage.hint.map { ($0.property, $0.values) }
  }

  /// When there is no `indexHint`: a range of one indexed property's values (from `<`, `<=`,
  /// `>`, `>=`, `BETWEEN`, case-sensitive `BEGINSWITH`, or several of them joined by `AND`)
  /// that every matching object's value lies in. The objects whose index keys lie in it are
  /// candidates, which must still be tested with `matches`.
  var indexRange: IndexRange? { storage.range }

  /// The query matching objects that match both `self` and `other` (chained `filter` calls).
  func and(_ other: CompiledQuery) throws -> CompiledQuery {
    guard other.className == className else {
      throw QueryError(
        .unsupported, "Cannot combine a query on '\(className)' with a query on '\(other.className)'")
    }
    if matchesEverything { return other }
    if other.matchesEverything { return self }
    var plans: [BoundPredicate] = []
    for plan in [plan, other.plan] {
      if case .and(let terms) = plan { plans.append(contentsOf: terms) } else { plans.append(plan) }
    }
    return CompiledQuery(
      className: className, predicate: .conjunction([predicate, other.predicate]), plan: .and(plans))
  }

  // MARK: Index hints

  private static func indexHint(_ plan: BoundPredicate) -> (property: QueryProperty, values: [RowValue])? {
    switch plan {
    case .comparison(let comparison):
      return indexHint(comparison)
    case .and(let terms):
      var best: (property: QueryProperty, values: [RowValue])?
      for term in terms {
        guard let hint = indexHint(term) else { continue }
        if best == nil || hint.values.count < best?.values.count ?? 0 { best = hint }
      }
      return best
    case .or(let terms):
      var property: QueryProperty?
      var values: [RowValue] = []
      for term in terms {
        guard let hint = indexHint(term), property == nil || property == hint.property else { return nil }
        property = hint.property
        for value in hint.values where !values.contains(value) { values.append(value) }
      }
      return property.map { ($0, values) }
    case .constant, .not, .typeCheck, .geoWithin:
      return nil
    }
  }

  private static func indexHint(_ comparison: BoundComparison) -> (property: QueryProperty, values: [RowValue])? {
    guard comparison.op == .equal, comparison.quantifier == .single, case .path(let path) = comparison.lhs,
      path.links.isEmpty, let last = path.last, case .value = path.terminal, last.property.collection == .none,
      last.property.isIndexed, case .constant(let constant) = comparison.rhs
    else { return nil }
    let property = last.property
    if !comparison.options.isEmpty && (property.kind == .string || property.kind == .any) { return nil }
    let candidates: [RowValue]
    if comparison.rhsIsList, case .list(let items) = constant {
      candidates = items
    } else {
      candidates = [constant]
    }
    var values: [RowValue] = []
    for candidate in candidates {
      guard let stored = storedForms(of: candidate, in: property) else { return nil }
      for value in stored where !values.contains(value) { values.append(value) }
    }
    return (property, values)
  }

  private static func indexRange(_ plan: BoundPredicate) -> IndexRange? {
    switch plan {
    case .comparison(let comparison):
      return indexRange(comparison)
    case .and(let terms):
      var best: IndexRange?
      for term in terms {
        guard let range = indexRange(term) else { continue }
        guard let current = best else {
          best = range
          continue
        }
        // Two ranges of one property narrow each other; of another, the first stays.
        guard current.property == range.property, current.prefix == nil, range.prefix == nil else {
          best?.exact = false
          continue
        }
        best = IndexRange(
          property: current.property, lower: bound(current.lower, range.lower, keepHigher: true),
          upper: bound(current.upper, range.upper, keepHigher: false), prefix: nil,
          exact: current.exact && range.exact)
      }
      // Exact only when every term is a range the result took in.
      if best?.exact == true, terms.contains(where: { indexRange($0)?.exact != true }) { best?.exact = false }
      return best
    default:
      return nil
    }
  }

  /// The tighter of two bounds (the higher of two lower bounds, the lower of two upper ones).
  private static func bound(_ a: RowValue?, _ b: RowValue?, keepHigher: Bool) -> RowValue? {
    guard let a else { return b }
    guard let b else { return a }
    guard let order = QueryValues.order(a, b) else { return a }
    return (order < 0) == keepHigher ? b : a
  }

  private static func indexRange(_ comparison: BoundComparison) -> IndexRange? {
    guard comparison.quantifier == .single, case .path(let path) = comparison.lhs, path.links.isEmpty,
      let last = path.last, case .value = path.terminal, last.property.collection == .none, last.property.isIndexed,
      case .constant(let constant) = comparison.rhs
    else { return nil }
    let property = last.property
    // Kinds whose index keys follow the query order of their values (see `OrderedIndexKey`);
    // not `AnyRealmValue`, whose Decimal128s compare with numbers but are keyed apart.
    switch property.kind {
    case .int, .float, .double, .date, .string, .data, .objectId, .uuid: break
    default: return nil
    }
    func ordered(_ value: RowValue) -> Bool {
      switch (property.kind, value) {
      case (.int, .int), (.int, .float), (.int, .double), (.float, .int), (.float, .float), (.float, .double),
        (.double, .int), (.double, .float), (.double, .double), (.date, .date), (.string, .string), (.data, .data),
        (.objectId, .objectId), (.uuid, .uuid):
        if case .double(let d) = value { return !d.isNaN }
        if case .float(let f) = value { return !f.isNaN }
        return true
      default: return false
      }
    }
    if property.kind == .string || property.kind == .data, !comparison.options.isEmpty { return nil }
    // A date's key is its exact value: inclusive bounds select exactly the matching objects.
    let inclusiveDate = property.kind == .date
    switch comparison.op {
    case .less, .lessOrEqual:
      return ordered(constant)
        ? IndexRange(
          property: property, lower: nil, upper: constant, prefix: nil,
          exact: inclusiveDate && comparison.op == .lessOrEqual) : nil
    case .greater, .greaterOrEqual:
      return ordered(constant)
        ? IndexRange(
          property: property, lower: constant, upper: nil, prefix: nil,
          exact: inclusiveDate && comparison.op == .greaterOrEqual) : nil
    case .between:
      guard case .list(let bounds) = constant, bounds.count == 2, ordered(bounds[0]), ordered(bounds[1]) else {
        return nil
      }
      return IndexRange(property: property, lower: bounds[0], upper: bounds[1], prefix: nil, exact: inclusiveDate)
    case .beginsWith:
      guard property.kind == .string, case .string(let prefix) = constant, !prefix.isEmpty else { return nil }
      return IndexRange(property: property, lower: nil, upper: nil, prefix: prefix)
    default:
      return nil
    }
  }

  /// The stored values that equal `value` in `property`: empty when none can, nil when they
  /// cannot be listed (so no hint is given).
  private static func storedForms(of value: RowValue, in property: QueryProperty) -> [RowValue]? {
    if value.isNull { return property.isOptional || property.kind == .object ? [.null] : [] }
    switch (property.kind, value) {
    case (.int, .int):
      return [value]
    case (.int, .double(let d)):
      return Int64(exactly: d).map { [.int($0)] } ?? []
    case (.int, .float(let f)):
      return Int64(exactly: f).map { [.int($0)] } ?? []
    case (.double, .double):
      return [value]
    case (.double, .float(let f)):
      return [.double(Double(f))]
    case (.double, .int(let i)):
      guard let d = Double(exactly: i) else { return nil }
      return [.double(d)]
    case (.float, .float):
      return [value]
    case (.float, .int(let i)):
      guard let f = Float(exactly: i) else { return nil }
      return [.float(f)]
    case (.float, .double(let d)):
      return Float(exactly: d).map { [.float($0)] } ?? []
    case (.decimal128, .decimal):
      return [value]
    case (_, .int), (_, .float), (_, .double), (_, .decimal):
      return nil
    case (.object, .link):
      return [value]
    case (.object, .typedLink(let className, _)) where className.isEmpty:
      return []  // an unmanaged object (`RealmQueryContext.unmanagedObject`) equals no link
    case (.object, .typedLink(_, let key)):
      return [.link(key)]
    case (.any, .link):
      return nil
    default:
      return [value]
    }
  }
}
