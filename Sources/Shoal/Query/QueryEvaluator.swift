import Foundation

/// Evaluates bound predicates on stored objects, reading values through a `QueryContext`.
struct QueryEvaluator {
  let context: any QueryContext

  /// What a predicate is evaluated on: an object, or (inside a subquery over a collection of
  /// values) one element value.
  enum Row {
    case object(ObjectKey)
    case value(RowValue)
  }

  func evaluate(_ predicate: BoundPredicate, on row: Row) throws -> Bool {
    switch predicate {
    case .constant(let result):
      return result
    case .and(let terms):
      for term in terms {
        if try !evaluate(term, on: row) { return false }
      }
      return true
    case .or(let terms):
      for term in terms {
        if try evaluate(term, on: row) { return true }
      }
      return false
    case .not(let inner):
      return try !evaluate(inner, on: row)
    case .comparison(let comparison):
      return try evaluate(comparison, on: row)
    case .typeCheck(let check):
      if check.quantifier == .single && !check.path.isMulti {
        let value = try singleValue(of: check.path, on: row)
        return check.types.contains(QueryValueType(of: value)) != check.negated
      }
      let values = try values(of: check.path, on: row)
      return Self.quantify(check.quantifier, values) { check.types.contains(QueryValueType(of: $0)) != check.negated }
    case .geoWithin(let test):
      // A GeoJSON point: type "Point" (any case), coordinates [longitude, latitude, …].
      guard case .string(let type) = try singleValue(of: test.typePath, on: row), type.lowercased() == "point" else {
        return false
      }
      let coordinates = try values(of: test.coordinatesPath, on: row)
      guard coordinates.count >= 2, let longitude = QueryKeyPaths.double(coordinates[0]),
        let latitude = QueryKeyPaths.double(coordinates[1])
      else { return false }
      return test.region.region.contains(latitude: latitude, longitude: longitude)
    }
  }

  private static func quantify(
    _ quantifier: BoundQuantifier, _ values: [RowValue], _ test: (RowValue) -> Bool
  ) -> Bool {
    switch quantifier {
    case .single: return values.first.map(test) ?? false
    case .any: return values.contains(where: test)
    case .all: return values.allSatisfy(test)
    case .none: return !values.contains(where: test)
    }
  }

  /// The values of one side of a comparison: one value (no array), or any number.
  private enum Side {
    case one(RowValue)
    case many([RowValue])

    func contains(where test: (RowValue) throws -> Bool) rethrows -> Bool {
      switch self {
      case .one(let value): return try test(value)
      case .many(let values): return try values.contains(where: test)
      }
    }
  }

  /// The values of `operand`; `.one` for a constant, a subquery count or a key path that is not
  /// to-many (which yields exactly one value).
  private func side(_ operand: BoundOperand, on row: Row) throws -> Side {
    switch operand {
    case .constant(let value): return .one(value)
    case .path(let path):
      return path.isMulti ? .many(try values(of: path, on: row)) : .one(try singleValue(of: path, on: row))
    case .subqueryCount(let subquery): return .one(try count(subquery, on: row))
    }
  }

  private func evaluate(_ comparison: BoundComparison, on row: Row) throws -> Bool {
    let left =
      try comparison.quantifier == .single ? side(comparison.lhs, on: row) : .many(values(of: comparison.lhs, on: row))
    let right: Side
    if comparison.rhsIsList, case .constant(.list(let items)) = comparison.rhs {
      right = .many(items)
    } else {
      right = try side(comparison.rhs, on: row)
    }
    let op = comparison.op
    let options = comparison.options
    var bounds: (low: RowValue, high: RowValue)?
    if op == .between {
      guard case .many(let items) = right, items.count == 2 else { return false }
      bounds = (items[0], items[1])
    }
    func test(_ value: RowValue) -> Bool {
      if let bounds { return Self.between(value, bounds.low, bounds.high) }
      return right.contains { Self.compare(op, value, $0, options: options) }
    }
    switch left {
    case .one(let value): return test(value)
    case .many(let values): return Self.quantify(comparison.quantifier, values, test)
    }
  }

  /// `value BETWEEN {low, high}`: ordered with both, and low <= value <= high.
  static func between(_ value: RowValue, _ low: RowValue, _ high: RowValue) -> Bool {
    guard let lowOrder = QueryValues.order(value, low), let highOrder = QueryValues.order(value, high) else {
      return false
    }
    return lowOrder >= 0 && highOrder <= 0
  }

  /// One comparison of two values.
  static func compare(_ op: BoundOperator, _ a: RowValue, _ b: RowValue, options: QueryStringOptions) -> Bool {
    switch op {
    case .equal: return QueryValues.equal(a, b, options: options)
    case .notEqual: return !QueryValues.equal(a, b, options: options)
    case .less: return (QueryValues.order(a, b) ?? 1) < 0
    case .lessOrEqual: return (QueryValues.order(a, b) ?? 1) <= 0
    case .greater: return (QueryValues.order(a, b) ?? -1) > 0
    case .greaterOrEqual: return (QueryValues.order(a, b) ?? -1) >= 0
    case .beginsWith, .endsWith, .contains, .like: return QueryValues.stringOperation(op, a, b, options: options)
    case .between: return false
    }
  }

  // MARK: Operands

  /// The values of an operand: exactly one unless it is a to-many key path.
  func values(of operand: BoundOperand, on row: Row) throws -> [RowValue] {
    switch operand {
    case .constant(let value):
      return [value]
    case .path(let path):
      return try values(of: path, on: row)
    case .subqueryCount(let subquery):
      return [try count(subquery, on: row)]
    }
  }

  /// How many elements of a subquery's collection match its predicate.
  private func count(_ subquery: BoundSubquery, on row: Row) throws -> RowValue {
    var count: Int64 = 0
    for element in try values(of: subquery.collection, on: row) {
      let elementRow: Row
      if subquery.elementsAreObjects {
        guard let key = Self.linkKey(element) else { continue }
        elementRow = .object(key)
      } else {
        elementRow = .value(element)
      }
      if try evaluate(subquery.predicate, on: elementRow) { count += 1 }
    }
    return .int(count)
  }

  /// The values a key path yields from `row`: exactly one (null when a to-one link on the way
  /// is empty) unless the path is to-many.
  func values(of path: BoundPath, on row: Row) throws -> [RowValue] {
    var output: [RowValue] = []
    guard let last = path.last else {
      guard case .value(let value) = row else { return [.null] }
      try apply(path.terminal, to: value, collection: .none, into: &output)
      return output
    }
    guard case .object(let root) = row else { return path.isMulti ? [] : [.null] }
    var keys: [ObjectKey] = [root]
    for step in path.links {
      var next: [ObjectKey] = []
      for key in keys {
        Self.appendLinkKeys(try context.queryValue(step.property, of: key, in: step.className), to: &next)
      }
      keys = next
    }
    if keys.isEmpty && !path.isMulti { return [.null] }
    for key in keys {
      let value = try context.queryValue(last.property, of: key, in: last.className)
      try apply(path.terminal, to: value, collection: last.property.collection, into: &output)
    }
    return output
  }

  /// The one value a key path that is not to-many yields from `row` (what `values(of:on:)`
  /// returns in an array of one), without the arrays.
  func singleValue(of path: BoundPath, on row: Row) throws -> RowValue {
    guard let last = path.last else {
      guard case .value(let value) = row else { return .null }
      return try applySingle(path.terminal, to: value, collection: .none)
    }
    guard case .object(var key) = row else { return .null }
    for step in path.links {
      switch try context.queryValue(step.property, of: key, in: step.className) {
      case .link(let next), .typedLink(_, let next):
        key = next
      case .null:
        return .null
      default:
        // Not a to-one link value: take the general way.
        return try values(of: path, on: row).first ?? .null
      }
    }
    let value = try context.queryValue(last.property, of: key, in: last.className)
    return try applySingle(path.terminal, to: value, collection: last.property.collection)
  }

  /// `apply` for the terminals that yield one value per object.
  private func applySingle(_ terminal: BoundTerminal, to value: RowValue, collection: QueryProperty.Collection) throws
    -> RowValue
  {
    switch terminal {
    case .value, .type:
      if collection == .none { return value }
    case .count:
      switch value {
      case .list(let items): return .int(Int64(items.count))
      case .map(let entries): return .int(Int64(entries.count))
      case .string(let string): return .int(Int64(string.utf8.count))
      case .data(let data): return .int(Int64(data.count))
      case .null: return collection == .none ? .null : .int(0)
      default: return .null
      }
    case .subscript(let key):
      if case .map(let entries) = value, let entry = entries.first(where: { $0.key == key }) { return entry.value }
      return .null
    case .aggregate(let aggregate, let element):
      var items = Self.elements(value)
      if let element {
        items = try items.compactMap(Self.linkKey).map {
          try context.queryValue(element.property, of: $0, in: element.className)
        }
      }
      return Self.aggregate(aggregate, items)
    case .keys, .mixed:
      break
    }
    // Terminals that yield any number of values (not on a single-valued path).
    var output: [RowValue] = []
    try apply(terminal, to: value, collection: collection, into: &output)
    return output.first ?? .null
  }

  private func apply(
    _ terminal: BoundTerminal, to value: RowValue, collection: QueryProperty.Collection,
    into output: inout [RowValue]
  ) throws {
    switch terminal {
    case .value, .type:
      if collection == .none {
        output.append(value)
      } else {
        output.append(contentsOf: Self.elements(value))
      }
    case .keys:
      if case .map(let entries) = value { output.append(contentsOf: entries.map { .string($0.key) }) }
    case .mixed(let mapKey, let steps):
      var found: [RowValue] = [value]
      if let mapKey {
        guard case .map(let entries) = value, let entry = entries.first(where: { $0.key == mapKey }) else { return }
        found = [entry.value]
      }
      for step in steps { found = found.flatMap { Self.mixedStep(step, into: $0) } }
      output.append(contentsOf: found)
    case .count, .subscript, .aggregate:
      output.append(try applySingle(terminal, to: value, collection: collection))
    }
  }

  /// What one subscript finds in a mixed value: nothing where it is not a collection, or has
  /// no such position or key.
  private static func mixedStep(_ step: MixedStep, into value: RowValue) -> [RowValue] {
    switch (step, value) {
    case (.index(let position), .list(let items)):
      return items.indices.contains(position) ? [items[position]] : []
    case (.key(let key), .map(let entries)):
      return entries.first { $0.key == key }.map { [$0.value] } ?? []
    case (.all, .list(let items)):
      return items
    case (.all, .map(let entries)):
      return entries.map(\.value)
    default:
      return []
    }
  }

  private static func elements(_ value: RowValue) -> [RowValue] {
    switch value {
    case .list(let items): return items
    case .map(let entries): return entries.map(\.value)
    case .null: return []
    default: return [value]
    }
  }

  private static func linkKey(_ value: RowValue) -> ObjectKey? {
    switch value {
    case .link(let key), .typedLink(_, let key): return key
    default: return nil
    }
  }

  private static func appendLinkKeys(_ value: RowValue, to keys: inout [ObjectKey]) {
    switch value {
    case .link(let key), .typedLink(_, let key): keys.append(key)
    case .list(let items): keys.append(contentsOf: items.compactMap(linkKey))
    case .map(let entries): keys.append(contentsOf: entries.compactMap { linkKey($0.value) })
    default: break
    }
  }

  /// `@min`, `@max`, `@sum` or `@avg` of values, ignoring nulls (and non-numbers, for sums and
  /// averages): min, max and avg of nothing are null, the sum of nothing is 0. Sums of integers
  /// stay integers (wrapping on overflow); with decimals the result is an exact decimal; otherwise
  /// sums and averages are doubles.
  static func aggregate(_ aggregate: BoundAggregate, _ values: [RowValue]) -> RowValue {
    let present = values.filter { !$0.isNull }
    switch aggregate {
    case .min: return present.min { QueryValues.sortOrder($0, $1) < 0 } ?? .null
    case .max: return present.max { QueryValues.sortOrder($0, $1) < 0 } ?? .null
    case .sum, .avg: break
    }
    var intSum: Int64 = 0
    var doubleSum = 0.0
    var hasDouble = false
    var decimalSum: Decimal128?
    var count = 0
    for value in present {
      switch value {
      case .int(let i): intSum &+= i
      case .float(let f):
        doubleSum += Double(f)
        hasDouble = true
      case .double(let d):
        doubleSum += d
        hasDouble = true
      case .decimal(let d):
        decimalSum = decimalSum.map { QueryDecimal.add($0, d) } ?? d
      default: continue
      }
      count += 1
    }
    if var decimal = decimalSum {
      if intSum != 0 { decimal = QueryDecimal.add(decimal, QueryDecimal.make(intSum)) }
      if hasDouble { decimal = QueryDecimal.add(decimal, QueryDecimal.make(doubleSum)) }
      return .decimal(aggregate == .sum ? decimal : QueryDecimal.divide(decimal, by: count))
    }
    if aggregate == .sum { return hasDouble ? .double(Double(intSum) + doubleSum) : .int(intSum) }
    guard count > 0 else { return .null }
    return .double((Double(intSum) + doubleSum) / Double(count))
  }
}
