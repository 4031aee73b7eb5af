import Foundation

// A query resolved against the schema: the bound predicate the evaluator runs, its key paths
// (steps, terminal), operands, comparisons and the value types they compare. `QueryBinder`
// makes it from the parsed `QueryPredicate`.

/// One step of a resolved key path: a property and the class that declares it.
struct BoundStep: Hashable, Sendable {
  var property: QueryProperty
  var className: String
}

/// An aggregate collection operation.
enum BoundAggregate: String, Hashable, Sendable {
  case sum = "@sum"
  case avg = "@avg"
  case min = "@min"
  case max = "@max"
}

/// What a resolved key path yields from its last property.
enum BoundTerminal: Hashable, Sendable {
  /// The value (the elements of a collection, the values of a map).
  case value
  /// The number of elements, or the length of a string or data (`@count`, `@size`).
  case count
  /// The keys of a map.
  case keys
  /// The value of a map for a key.
  case `subscript`(String)
  /// An aggregate of the elements, or of the property `element` of each linked object.
  case aggregate(BoundAggregate, element: BoundStep?)
  /// The values, compared by type (`@type`).
  case type
  /// Values inside a mixed value's nested collections (after the map's value for `mapKey`,
  /// for a map of mixed values): none where a step finds nothing.
  case mixed(mapKey: String?, steps: [MixedStep])
}

/// One subscript into a mixed value's nested collection.
enum MixedStep: Hashable, Sendable {
  case index(Int)
  case key(String)
  /// Every element of a list, every value of a dictionary.
  case all
}

/// A key path resolved against the schema.
struct BoundPath: Hashable, Sendable {
  /// The key path as written, for messages.
  var text: String
  /// Links followed before the last property.
  var links: [BoundStep]
  /// The last property; nil for the element itself in a subquery over a collection of values.
  var last: BoundStep?
  var terminal: BoundTerminal
  /// True when the path yields any number of values (it crosses a to-many relationship or ends
  /// in a collection's elements); false when it yields exactly one.
  var isMulti: Bool
  /// The kind of the values the path yields.
  var kind: QueryProperty.Kind
  /// The class of linked objects the path yields, when `kind` is `.object`.
  var targetClass: String?
}

/// A subquery resolved against the schema.
struct BoundSubquery: Hashable, Sendable {
  /// The collection; yields links (or values, for a collection of values).
  var collection: BoundPath
  /// Evaluated on each element (an object, or a value for a collection of values).
  var predicate: BoundPredicate
  var elementsAreObjects: Bool
}

/// One side of a resolved comparison.
indirect enum BoundOperand: Hashable, Sendable {
  case constant(RowValue)
  case path(BoundPath)
  case subqueryCount(BoundSubquery)
}

/// A resolved comparison operator (`IN` is `equal` with a set on the right).
enum BoundOperator: Hashable, Sendable {
  case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
  case beginsWith, endsWith, contains, like, between
}

/// How the per-value results on the left side combine.
enum BoundQuantifier: Hashable, Sendable {
  case single, any, all, none
}

/// A resolved comparison: for each value on the left, whether it compares true with some value
/// on the right; the quantifier combines the per-value results.
struct BoundComparison: Hashable, Sendable {
  var lhs: BoundOperand
  var op: BoundOperator
  var rhs: BoundOperand
  var options: QueryStringOptions
  var quantifier: BoundQuantifier
  /// True when a `.constant(.list)` on the right is a set of alternatives (`IN {…}`, `BETWEEN`).
  var rhsIsList: Bool
}

/// A resolved `@type` comparison.
struct BoundTypeCheck: Hashable, Sendable {
  var path: BoundPath
  var types: Set<QueryValueType>
  var negated: Bool
  var quantifier: BoundQuantifier
}

/// A predicate resolved against the schema, ready to evaluate.
indirect enum BoundPredicate: Hashable, Sendable {
  case constant(Bool)
  case and([BoundPredicate])
  case or([BoundPredicate])
  case not(BoundPredicate)
  case comparison(BoundComparison)
  case typeCheck(BoundTypeCheck)
  case geoWithin(BoundGeoWithin)
}

/// A resolved geospatial test: the location object's `type` and `coordinates`, and the region.
struct BoundGeoWithin: Hashable, Sendable {
  /// `location.type` and `location.coordinates`.
  var typePath: BoundPath
  var coordinatesPath: BoundPath
  var region: PreparedGeoRegion
}

/// A shape validated and prepared for containment tests; equal when the shapes are.
final class PreparedGeoRegion: Hashable, Sendable {
  let shape: GeoShape
  let region: GeoRegion

  init(_ shape: GeoShape) throws(GeoRegionError) {
    self.shape = shape
    region = try shape.region()
  }

  static func == (lhs: PreparedGeoRegion, rhs: PreparedGeoRegion) -> Bool { lhs.shape == rhs.shape }
  func hash(into hasher: inout Hasher) { hasher.combine(shape) }
}

/// The type of a stored value, as `@type` compares it.
enum QueryValueType: Hashable, Sendable, CaseIterable {
  case null, bool, int, float, double, string, data, date, uuid, objectId, decimal, link, list, map

  /// The types a `@type` name stands for (realm-core's names, case-insensitive).
  static func types(named name: String) -> Set<QueryValueType>? {
    switch name.lowercased() {
    case "null": return [.null]
    case "bool", "boolean": return [.bool]
    case "int", "integer", "long": return [.int]
    case "float": return [.float]
    case "double": return [.double]
    case "string": return [.string]
    case "data", "binary", "bindata": return [.data]
    case "date", "timestamp": return [.date]
    case "uuid": return [.uuid]
    case "objectid": return [.objectId]
    case "decimal", "decimal128": return [.decimal]
    case "object", "link", "objectlink": return [.link]
    case "numeric": return [.int, .float, .double, .decimal]
    case "array", "list": return [.list]
    case "dictionary", "map": return [.map]
    case "collection": return [.list, .map]
    default: return nil
    }
  }

  init(of value: RowValue) {
    switch value {
    case .null: self = .null
    case .bool: self = .bool
    case .int: self = .int
    case .float: self = .float
    case .double: self = .double
    case .string: self = .string
    case .data: self = .data
    case .date: self = .date
    case .uuid: self = .uuid
    case .objectId: self = .objectId
    case .decimal: self = .decimal
    case .link, .typedLink: self = .link
    case .list: self = .list
    case .map: self = .map
    }
  }
}
