/// A key path and direction to sort by (RealmSwift's `SortDescriptor`).
public struct SortDescriptor: Equatable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
  /// The key path sorted by, e.g. "age" or "owner.name".
  public let keyPath: String
  /// Whether smaller values come first.
  public let ascending: Bool

  /// Creates a sort descriptor.
  public init(keyPath: String, ascending: Bool = true) {
    self.keyPath = keyPath
    self.ascending = ascending
  }

  /// Creates a sort descriptor from a Swift key path of an object type.
  public init<Root: ObjectBase, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool = true) {
    self.init(keyPath: _KeyPathProbe.name(of: keyPath), ascending: ascending)
  }

  /// An ascending sort by the key path in the literal.
  public init(stringLiteral value: String) { self.init(keyPath: value) }

  /// The same key path in the other direction.
  public func reversed() -> SortDescriptor { SortDescriptor(keyPath: keyPath, ascending: !ascending) }

  /// `SortDescriptor(keyPath: <keyPath>, direction: ascending)`, or `descending`.
  public var description: String {
    "SortDescriptor(keyPath: \(keyPath), direction: \(ascending ? "ascending" : "descending"))"
  }
}
