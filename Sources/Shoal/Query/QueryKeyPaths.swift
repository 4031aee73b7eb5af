import Foundation

/// The key-path helpers under the names the object layer calls (`Results` sorting, `distinct`
/// and aggregates); they forward to `KeyPathResolver`.
enum QueryKeyPaths {
  /// The properties along a sort / distinct / aggregate key path; see
  /// `KeyPathResolver.resolveKeyPath`.
  static func resolve(_ path: String, from className: String, context: any QueryContext) throws -> [QueryProperty] {
    try KeyPathResolver.resolveKeyPath(path, from: className, context: context)
  }

  /// The value at a resolved key path, `.null` when a link on the way is empty.
  static func value(
    atPath path: [QueryProperty], of key: ObjectKey, in className: String, context: any QueryContext
  ) throws -> RowValue {
    try KeyPathResolver.value(atPath: path, of: key, in: className, context: context)
  }

  /// True when `a` sorts before `b` in ascending order; see `KeyPathResolver.compareForSort`.
  static func sortsBefore(_ a: RowValue, _ b: RowValue) -> Bool {
    KeyPathResolver.compareForSort(a, b)
  }

  /// A number as a `Double` (int, float, double, decimal); nil for anything else.
  static func double(_ value: RowValue) -> Double? {
    switch value {
    case .int(let i): return Double(i)
    case .float(let f): return Double(f)
    case .double(let d): return d
    case .decimal(let d): return d.doubleValue
    default: return nil
    }
  }

  /// `@min`, `@max`, `@sum` or `@avg` of values with the query engine's rules (nulls ignored;
  /// the sum of nothing is 0, the others nil-valued `.null`; exact decimal arithmetic).
  static func aggregate(_ aggregate: BoundAggregate, of values: [RowValue]) -> RowValue {
    QueryEvaluator.aggregate(aggregate, values)
  }
}
