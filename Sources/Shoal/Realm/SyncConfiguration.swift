import Foundation

/// How a Realm syncs with a server (RealmSwift's `SyncConfiguration`), set as
/// `Realm.Configuration.syncConfiguration`. Shoal syncs with a PostgreSQL database you run:
/// make one with `import ShoalSync`, which provides its initializers and runs the sync agent.
///
/// ```swift
/// import ShoalSync
///
/// var config = Realm.Configuration(objectTypes: [Task.self])
/// config.syncConfiguration = try SyncConfiguration(
///   url: "postgres://app@db.example.com/tasks", clientIdentifier: "laptop-7")
/// let realm = try Realm(configuration: config)   // the agent starts with the first Realm
/// ```
public struct SyncConfiguration: Sendable {
  /// The server, as a `postgres://` URL without its password.
  public let serverDescription: String
  /// The device's stable name on the server: what its uploads are recorded under.
  public let clientIdentifier: String
  /// Runs the agent for a file; provided by ShoalSync.
  package let agent: any SyncAgentHost

  /// A configuration whose agent `agent` starts (ShoalSync's initializers call this).
  package init(serverDescription: String, clientIdentifier: String, agent: any SyncAgentHost) {
    self.serverDescription = serverDescription
    self.clientIdentifier = clientIdentifier
    self.agent = agent
  }
}

/// What starts sync for a file when a Realm of it opens: ShoalSync's agent.
package protocol SyncAgentHost: Sendable {
  /// Called after each Realm with this sync configuration opened (cheap when it runs already).
  func realmOpened(_ configuration: Realm.Configuration)
}
