import Foundation
import Shoal

/// A note, shared by `shoal-realm-worker` and the object-layer tests so two processes open one
/// file with the same schema.
public final class Note: Object {
  @Persisted(primaryKey: true) public var id: String = ""
  @Persisted(indexed: true) public var author = ""
  @Persisted public var text = ""
  @Persisted public var priority = 0
  @Persisted public var tags: List<String>
}
