import Foundation

/// The key of an object within its class: assigned once, never reused.
typealias ObjectKey = UInt64

/// One stored value, as the object layer keeps it in a row and as queries compare it.
///
/// Numbers keep their width-independent form (`Int8`…`Int64` are all `.int`); links hold the
/// target's object key, the class coming from the schema (`.link`) or from the value itself
/// (`.typedLink`, used by `AnyRealmValue`).
enum RowValue: Hashable, Sendable {
  case null
  case bool(Bool)
  case int(Int64)
  case float(Float)
  case double(Double)
  case string(String)
  case data(Data)
  case date(Date)
  case uuid(UUID)
  case objectId(ObjectId)
  case decimal(Decimal128)
  /// A link to an object of the property's target class.
  case link(ObjectKey)
  /// A link that names its class (an `AnyRealmValue` holding an object).
  case typedLink(className: String, key: ObjectKey)
  /// The elements of a `List` (in order) or a `MutableSet` (in insertion order, no duplicates).
  case list([RowValue])
  /// The entries of a `Map`, sorted by key.
  case map([MapEntry])

  /// One entry of a stored map.
  struct MapEntry: Hashable, Sendable {
    var key: String
    var value: RowValue
  }

  var isNull: Bool { if case .null = self { return true } else { return false } }
}
