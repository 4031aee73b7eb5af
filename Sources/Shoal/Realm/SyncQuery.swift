import Foundation

/// A query ShoalSync cannot send to PostgreSQL, saying which part and what is supported.
package struct SyncQueryError: Error, CustomStringConvertible, Sendable {
  /// What is wrong and what to do.
  package let description: String
}

/// A subscription's query, checked against the schema and translated to an SQL condition on
/// the class's table (the columns of `SyncSchema`).
package struct SyncQuery: Sendable, Equatable {
  /// The query as text, constants included (RealmSwift's `SyncSubscription.query`).
  package let text: String
  /// The SQL condition, constants inlined as quoted literals.
  package let sql: String
}

extension Realm {
  /// Translates `predicate` (a predicate format with `arguments`, as `Results.filter` takes)
  /// on class `className` into SQL. The subset: `TRUEPREDICATE`, `FALSEPREDICATE`, `AND`, `OR`,
  /// `NOT`, and comparisons of a property of the class (not through a link, not a collection)
  /// with a constant: `==`, `!=`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN` a list of constants,
  /// and for strings `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, with `[c]`; `== nil` and
  /// `!= nil`. Anything else throws a `SyncQueryError` naming it.
  package func syncQuery(className: String, predicate: String, arguments: [Any]) throws -> SyncQuery {
    guard let table = core.table(named: className) else {
      throw SyncQueryError(description: "Cannot subscribe to '\(className)': it is not in the Realm's schema.")
    }
    let compiled: CompiledQuery
    do {
      compiled = try CompiledQuery(
        className: className, predicate: predicate, arguments: arguments.map { $0 as Any? },
        context: core.queryContext)
    } catch {
      throw SyncQueryError(description: "The subscription's query is not valid: \(error)")
    }
    let translator = SyncSQLTranslator(table: table)
    return SyncQuery(text: compiled.predicate.description, sql: try translator.sql(compiled.predicate))
  }
}

private struct SyncSQLTranslator {
  let table: TableInfo

  func sql(_ predicate: QueryPredicate) throws -> String {
    switch predicate {
    case .truePredicate: return "TRUE"
    case .falsePredicate: return "FALSE"
    case .and(let terms): return terms.isEmpty ? "TRUE" : "(" + (try terms.map(sql).joined(separator: " AND ")) + ")"
    case .or(let terms): return terms.isEmpty ? "FALSE" : "(" + (try terms.map(sql).joined(separator: " OR ")) + ")"
    case .not(let inner): return "NOT (" + (try sql(inner)) + ")"
    case .comparison(let comparison): return try self.comparison(comparison)
    }
  }

  private func unsupported(_ what: String) -> SyncQueryError {
    SyncQueryError(
      description: "A subscription's query cannot be sent to PostgreSQL: \(what). Subscriptions compare properties "
        + "of the class itself (not through links or collections) with constants: ==, !=, <, <=, >, >=, BETWEEN, IN, "
        + "and BEGINSWITH, ENDSWITH, CONTAINS, LIKE (with [c]) for strings, combined with AND, OR and NOT.")
  }

  private func comparison(_ comparison: QueryComparison) throws -> String {
    guard comparison.quantifier == .implicit else { throw unsupported("\(comparison) uses ANY, ALL or NONE") }
    var op = comparison.op
    let path: QueryKeyPath
    let constant: RowValue
    switch (comparison.lhs, comparison.rhs) {
    case (.keyPath(let p), .constant(let c)):
      (path, constant) = (p, c)
    case (.constant(let c), .keyPath(let p)):
      (path, constant) = (p, c)
      switch op {
      case .less: op = .greater
      case .lessOrEqual: op = .greaterOrEqual
      case .greater: op = .less
      case .greaterOrEqual: op = .lessOrEqual
      case .equal, .notEqual: break
      default: throw unsupported("\(comparison) has the constant on the left")
      }
    default:
      throw unsupported("\(comparison) does not compare a property with a constant")
    }
    guard path.elements.count == 1, case .property(let name) = path.elements[0],
      let index = table.propertyIndex[name]
    else { throw unsupported("'\(path)' is not a property of \(table.name)") }
    let property = table.properties[index]
    guard property.collection == .none, property.type != .object, property.type != .any,
      property.type != .linkingObjects
    else { throw unsupported("'\(name)' is a link, a collection or an AnyRealmValue") }
    let column = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    let caseInsensitive = comparison.options.contains(.caseInsensitive)
    switch op {
    case .equal, .notEqual:
      if constant.isNull { return column + (op == .equal ? " IS NULL" : " IS NOT NULL") }
      let value = try literal(constant)
      if caseInsensitive, property.type == .string {
        return "lower(\(column)) " + (op == .equal ? "=" : "IS DISTINCT FROM") + " lower(\(value))"
      }
      return op == .equal ? "\(column) = \(value)" : "\(column) IS DISTINCT FROM \(value)"
    case .less, .lessOrEqual, .greater, .greaterOrEqual:
      return "\(column) \(op.rawValue) \(try literal(constant))"
    case .between:
      guard case .list(let bounds) = constant, bounds.count == 2 else { throw unsupported("\(comparison)") }
      return "\(column) BETWEEN \(try literal(bounds[0])) AND \(try literal(bounds[1]))"
    case .in:
      guard case .list(let items) = constant else { throw unsupported("\(comparison)") }
      let values = try items.filter { !$0.isNull }.map(literal)
      var terms: [String] = values.isEmpty ? [] : ["\(column) IN (\(values.joined(separator: ", ")))"]
      if items.contains(where: \.isNull) { terms.append("\(column) IS NULL") }
      return terms.isEmpty ? "FALSE" : "(" + terms.joined(separator: " OR ") + ")"
    case .beginsWith, .endsWith, .contains, .like:
      guard property.type == .string, case .string(let text) = constant else {
        throw unsupported("\(comparison) applies a string operator to something else than a string")
      }
      let pattern: String
      switch op {
      case .beginsWith: pattern = escaped(text) + "%"
      case .endsWith: pattern = "%" + escaped(text)
      case .contains: pattern = "%" + escaped(text) + "%"
      default:
        // Realm's wildcards: * any run, ? one character.
        pattern = escaped(text).replacingOccurrences(of: "*", with: "%").replacingOccurrences(of: "?", with: "_")
      }
      return "\(column) \(caseInsensitive ? "ILIKE" : "LIKE") \(quoted(pattern)) ESCAPE '\\'"
    default:
      throw unsupported("\(comparison)")
    }
  }

  private func escaped(_ text: String) -> String {
    text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
      .replacingOccurrences(of: "_", with: "\\_")
  }

  private func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

  private func literal(_ value: RowValue) throws -> String {
    switch value {
    case .null: return "NULL"
    case .bool(let v): return v ? "TRUE" : "FALSE"
    case .int(let v): return String(v)
    case .float(let v):
      guard v.isFinite else { throw unsupported("a constant that is not a finite number") }
      return "\(Double(v))::double precision"
    case .double(let v):
      guard v.isFinite else { throw unsupported("a constant that is not a finite number") }
      return "\(v)::double precision"
    case .string(let v): return quoted(v)
    case .date(let v):
      return quoted(v.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))) + "::timestamptz"
    case .uuid(let v): return quoted(v.uuidString.lowercased()) + "::uuid"
    case .objectId(let v): return quoted(v.stringValue)
    case .decimal(let v): return quoted(v.stringValue) + "::numeric"
    case .data, .link, .typedLink, .list, .map: throw unsupported("a constant of a kind PostgreSQL cannot compare here")
    }
  }
}
