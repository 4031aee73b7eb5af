import Foundation
import Shoal

/// A note, shared by `shoal-realm-worker` and the object-layer tests so two processes open one
/// file with the same schema.
public final class Note: Object {
  /// The primary key.
  @Persisted(primaryKey: true) public var id: String = ""
  /// Who wrote it (indexed).
  @Persisted(indexed: true) public var author = ""
  /// What it says.
  @Persisted public var text = ""
  /// Higher is more urgent.
  @Persisted public var priority = 0
  /// Labels, in order.
  @Persisted public var tags: List<String>
}
