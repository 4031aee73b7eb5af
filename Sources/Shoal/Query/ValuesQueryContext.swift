/// Queries on collections of primitive values (`list.filter("self > 5")`, RealmSwift's
/// `self` key path): each element is an object of a one-property class, the property `self`,
/// and its object key is its position.
final class ValuesQueryContext: QueryContext {
  /// The class name the predicate is compiled against.
  static let className = "self"
  let property: QueryProperty
  let inner: any QueryContext
  var values: [RowValue] = []

  /// A context for elements of the type `element` describes (its kind and optionality).
  init(element: Property, inner: any QueryContext) {
    property = QueryProperty(
      name: "self", kind: element.type.queryKind, collection: .none, isOptional: element.isOptional,
      targetClass: nil, isIndexed: false)
    self.inner = inner
  }

  func queryProperty(_ name: String, of className: String) -> QueryProperty? {
    className == ValuesQueryContext.className && name == "self" ? property : nil
  }

  func queryValue(_ property: QueryProperty, of key: ObjectKey, in className: String) throws -> RowValue {
    Int(key) < values.count ? values[Int(key)] : .null
  }

  func queryValue(_ column: QueryColumn, of key: ObjectKey) throws -> RowValue {
    Int(key) < values.count ? values[Int(key)] : .null
  }

  func queryArgument(_ argument: Any?) throws -> RowValue { try inner.queryArgument(argument) }
}
