/// What the query engine needs from the object layer: the schema, and the stored values of
/// objects identified by class name and object key.
///
/// The object layer implements this over a read or write transaction; the query engine
/// (parser, evaluator, key-path resolution) never sees the engine or `Object` instances.
protocol QueryContext {
  /// The property `name` of class `className`, or nil when the class has no such property.
  func queryProperty(_ name: String, of className: String) -> QueryProperty?
  /// The stored value of `property` of the object `key` of class `className`: a scalar, `.null`,
  /// `.link(key)` for a to-one link, `.list` for a list or set (of scalars or of `.link`s),
  /// `.map` for a map. For a `linkingObjects` property: `.list` of `.link`s of the origin class.
  func queryValue(_ property: QueryProperty, of key: ObjectKey, in className: String) throws -> RowValue
  /// `queryValue(column.property, of: key, in: column.className)`: what the fast path of
  /// `CompiledQuery.matches` reads, once for every object a scan tests, for a property of the
  /// object's own class that is not a collection. One reference to pass, so a context can make it
  /// cheaper than the general `queryValue` (and must give the same value).
  func queryValue(_ column: QueryColumn, of key: ObjectKey) throws -> RowValue
  /// Converts a query argument (`%@`, `$0`) to a stored value: numbers, strings, dates, `Data`,
  /// `UUID`, `ObjectId`, `Decimal128`, `Bool`, nil, `Object` (a `.link` or `.typedLink`), and
  /// arrays/sets of these (a `.list`) for `IN`.
  func queryArgument(_ argument: Any?) throws -> RowValue
  /// Whether `className` is an embedded class; nil when the context does not know (geospatial
  /// queries then skip that check).
  func isEmbeddedClass(_ className: String) -> Bool?
}

extension QueryContext {
  func isEmbeddedClass(_ className: String) -> Bool? { nil }
}

/// A property of a class, as the fast path of `CompiledQuery.matches` reads it from every object
/// it tests (`QueryContext.queryValue(_:of:)`).
final class QueryColumn: Sendable {
  let property: QueryProperty
  let className: String

  init(_ property: QueryProperty, of className: String) {
    self.property = property
    self.className = className
  }
}

/// A property as the query engine sees it.
struct QueryProperty: Hashable, Sendable {
  /// The value type of the property, or of its elements for collections.
  enum Kind: Hashable, Sendable {
    case bool, int, float, double, string, data, date, uuid, objectId, decimal128
    /// `AnyRealmValue`: any of the above, `.null` or a `.typedLink`.
    case any
    /// A link to objects of `targetClass`.
    case object
  }
  /// How many values the property holds.
  enum Collection: Hashable, Sendable {
    case none, list, set, map
    /// `LinkingObjects`: computed, a list of links to `targetClass` objects.
    case linkingObjects
  }
  var name: String
  var kind: Kind
  var collection: Collection
  var isOptional: Bool
  /// The class linked to, for `.object` kinds and `linkingObjects`.
  var targetClass: String?
  /// True when the property has an index usable for equality (primary key or `indexed: true`).
  var isIndexed: Bool
  /// Where the context keeps the property (the object layer: its column in the stored row), so
  /// that `queryValue` can find it without looking its name up; set by `queryProperty`, passed
  /// back unchanged by the query engine, nil when the context has none.
  var storageIndex: Int?
}
