import Foundation

/// Key paths for sorting, `distinct` and aggregates: resolution against the schema, reading the
/// value at a key path, and the sort order of values.
enum KeyPathResolver {
  /// The properties along `path` (`"dog.owner.name"`) from `className`: every property but the
  /// last must be a to-one link; the last must be a single value (not a link or a collection).
  /// Errors use realm-core's sort messages; `operation` names what the key path is for
  /// ("sort", "distinct"…).
  static func resolveKeyPath(
    _ path: String, from className: String, context: any QueryContext, operation: String = "sort"
  ) throws -> [QueryProperty] {
    func failure(_ reason: String) -> QueryError {
      QueryError(.invalidKeyPath, "Cannot \(operation) on key path '\(path)': \(reason).")
    }
    if path.contains("@") { throw failure("KVC collection operators are not supported") }
    let names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    var properties: [QueryProperty] = []
    var currentClass = className
    for (index, name) in names.enumerated() {
      guard !name.isEmpty else { throw failure("missing property name") }
      guard let property = context.queryProperty(name, of: currentClass) else {
        throw failure("property '\(currentClass).\(name)' does not exist")
      }
      let isLast = index == names.count - 1
      switch property.collection {
      case .none: break
      case .list: throw failure("property '\(currentClass).\(name)' is of unsupported type 'array'")
      case .set: throw failure("property '\(currentClass).\(name)' is of unsupported type 'set'")
      case .map: throw failure("property '\(currentClass).\(name)' is of unsupported type 'dictionary'")
      case .linkingObjects:
        throw failure("property '\(currentClass).\(name)' is of unsupported type 'linking objects'")
      }
      if property.kind == .object {
        if isLast {
          throw failure(
            "property '\(currentClass).\(name)' of type 'object' cannot be the final property in the key path")
        }
        guard let target = property.targetClass else {
          throw failure("property '\(currentClass).\(name)' has no target class")
        }
        currentClass = target
      } else if !isLast {
        throw failure(
          "property '\(currentClass).\(name)' of type '\(QueryDescribe.typeName(property.kind))' may only be "
            + "the final property in the key path")
      }
      properties.append(property)
    }
    return properties
  }

  /// The value at `path` (from `resolveKeyPath`) of the object `key` of `className`, following
  /// links; `.null` when a link on the way is empty.
  static func value(
    atPath path: [QueryProperty], of key: ObjectKey, in className: String, context: any QueryContext
  ) throws -> RowValue {
    var currentKey = key
    var currentClass = className
    for (index, property) in path.enumerated() {
      let value = try context.queryValue(property, of: currentKey, in: currentClass)
      if index == path.count - 1 { return value }
      switch value {
      case .link(let next), .typedLink(_, let next):
        currentKey = next
      default:
        return .null
      }
      guard let target = property.targetClass else { return .null }
      currentClass = target
    }
    return .null
  }

  /// The ascending sort order: true when `a` sorts before `b`. Null first; then bool (false
  /// before true); numbers compared numerically across int, float, double and decimal (NaN
  /// first); strings by Unicode scalars (UTF-8 bytes); data bytewise; dates; object ids; UUIDs;
  /// links by key. Values of different types order by type in that sequence.
  static func compareForSort(_ a: RowValue, _ b: RowValue) -> Bool {
    QueryValues.sortOrder(a, b) < 0
  }
}
