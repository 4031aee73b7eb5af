import Dispatch
import Foundation
import Logging
import PostgresNIO
import Shoal
import ShoalStorage
import Synchronization

extension SyncConfiguration {
  /// Syncs with `server` as the device `clientIdentifier` (a stable name, unique among the
  /// devices: its uploads are recorded under it). With `createsServerSchema` the agent runs
  /// the idempotent bootstrap (`SyncSchema`) when it connects; without it, an administrator
  /// runs `shoal sync-schema FILE` first.
  ///
  /// ```swift
  /// var config = Realm.Configuration(objectTypes: [Task.self])
  /// config.syncConfiguration = try SyncConfiguration(
  ///   server: PostgresServer(host: "db.internal", username: "app", database: "tasks"), clientIdentifier: "laptop-7")
  /// ```
  public init(server: PostgresServer, clientIdentifier: String, createsServerSchema: Bool = true) throws(SyncError) {
    guard !clientIdentifier.isEmpty, clientIdentifier.count <= 200 else {
      throw SyncError.invalidClientIdentifier(clientIdentifier)
    }
    self.init(
      serverDescription: server.description, clientIdentifier: clientIdentifier,
      agent: PostgresSyncHost(
        server: server, clientIdentifier: clientIdentifier, createsServerSchema: createsServerSchema))
  }

  /// Syncs with the server of a `postgres://user[:password]@host[:port]/database` URL as the
  /// device `clientIdentifier` (see `init(server:clientIdentifier:createsServerSchema:)`).
  public init(url: String, clientIdentifier: String, createsServerSchema: Bool = true) throws(SyncError) {
    try self.init(
      server: PostgresServer(url: url), clientIdentifier: clientIdentifier, createsServerSchema: createsServerSchema)
  }
}

/// Starts a file's agent when a Realm of it opens.
struct PostgresSyncHost: SyncAgentHost {
  let server: PostgresServer
  let clientIdentifier: String
  let createsServerSchema: Bool

  func realmOpened(_ configuration: Realm.Configuration) { _ = SyncAgent.agent(for: configuration) }
}

/// The sync agent of one file in this process. Of all the processes with the file open, the
/// one holding the file's agent role (`Store.tryAcquireRole`, an OFD lock the kernel drops
/// with a dead process) uploads and downloads; the others try to take the role four times a
/// second, so one takes over within a second of the holder's death. The agent works on a
/// thread of its own with a Realm of its own: it uploads the outbox, downloads what the server
/// logged after its cursor, then sleeps until a commit to the file (any process), a
/// `NOTIFY` from the server, or a second passes. While the server is unreachable it retries
/// with exponential backoff (0.1 s doubling to 30 s); local writes never wait for it.
final class SyncAgent: Sendable {
  private static let agents = Mutex<[String: SyncAgent]>([:])

  /// The file's agent in this process, started at the first call.
  static func agent(for configuration: Realm.Configuration) -> SyncAgent? {
    guard let host = configuration.syncConfiguration?.agent as? PostgresSyncHost, let url = configuration.fileURL
    else { return nil }
    let key = url.standardizedFileURL.path
    return agents.withLock { agents in
      if let agent = agents[key] { return agent }
      let agent = SyncAgent(configuration: configuration, host: host)
      agents[key] = agent
      agent.start()
      return agent
    }
  }

  struct Status: Sendable {
    var running = false
    var suspended = false
    var isAgent = false
    var connection: SyncSession.ConnectionState = .disconnected
    var lastError: String?
    /// Bumped by `suspend`/`resume`, so a thread of an earlier run ends.
    var generation = 0
  }

  let configuration: Realm.Configuration
  let host: PostgresSyncHost
  let status = Mutex(Status())
  private let wake = DispatchSemaphore(value: 0)
  private let logger = Logging.Logger(label: "shoal.sync")

  private init(configuration: Realm.Configuration, host: PostgresSyncHost) {
    self.configuration = configuration
    self.host = host
  }

  /// Starts the agent's thread (again, after `suspend`: a thread of the suspended run still
  /// finishing sees its generation is over and ends, giving the role to the new one).
  func start() {
    let generation: Int? = status.withLock { status in
      guard !status.running || status.suspended else { return nil }
      status.running = true
      status.suspended = false
      status.generation += 1
      return status.generation
    }
    guard let generation else { return }
    let thread = Thread { [self] in self.run(generation) }
    thread.name = "shoal-sync"
    thread.start()
  }

  /// Stops the agent: it gives the role up (another process may take it) and disconnects.
  func suspend() {
    status.withLock {
      $0.suspended = true
      $0.generation += 1
      $0.isAgent = false
      $0.connection = .disconnected
    }
    wake.signal()
  }

  /// Wakes the agent now (a commit, a notification).
  func poke() { wake.signal() }

  private func current(_ generation: Int) -> Bool { status.withLock { $0.generation == generation } }

  private func note(_ change: (inout Status) -> Void) { status.withLock { change(&$0) } }

  /// `change`, if `generation` is still the agent's current run.
  private func note(_ generation: Int, _ change: (inout Status) -> Void) {
    status.withLock { if $0.generation == generation { change(&$0) } }
  }

  private func run(_ generation: Int) {
    defer {
      note {
        // Only the current run's thread speaks for the agent.
        guard $0.generation == generation else { return }
        $0.running = false
        $0.isAgent = false
        $0.connection = .disconnected
      }
    }
    let fileName = configuration.fileURL?.lastPathComponent ?? "?"
    while current(generation) {
      let realm: Realm
      do {
        realm = try Realm(configuration: configuration)
      } catch {
        failed("open \(fileName): \(error)")
        _ = wake.wait(timeout: .now() + 1)
        continue
      }
      guard realm.tryAcquireSyncAgentRole() else {
        _ = wake.wait(timeout: .now() + 0.25)
        continue
      }
      note(generation) { $0.isAgent = true }
      Log.write(.info, .sync, "Sync agent for \(fileName) started in process \(getpid()) as \(host.clientIdentifier)")
      let listener = realm.addFileChangeListener { [weak self] in self?.poke() }
      var backoff = 0.1
      while current(generation) {
        do {
          try lead(realm, generation)
        } catch {
          failed("\(error)")
          note(generation) { $0.connection = .disconnected }
          pause(backoff, generation)
          backoff = min(backoff * 2, 30)
          continue
        }
        backoff = 0.1
      }
      listener.invalidate()
      note(generation) { $0.isAgent = false }
      realm.releaseSyncAgentRole()
      Log.write(.info, .sync, "Sync agent for \(fileName) stopped in process \(getpid())")
    }
  }

  /// Waits `seconds` before retrying, or less if the agent is suspended meanwhile (commits
  /// and notifications do not cut it short: a server that is down is not asked again sooner).
  private func pause(_ seconds: Double, _ generation: Int) {
    let deadline = DispatchTime.now() + seconds
    // `suspend` signals `wake`, and so do commits and notifications: after those the wait goes
    // on until the deadline (the next `lead` catches up on whatever they announced). At most a
    // second at a time: the thread of a run that a suspend and a resume replaced meanwhile may
    // have taken the suspend's signal.
    while current(generation), DispatchTime.now() < deadline {
      _ = wake.wait(timeout: min(deadline, .now() + 1))
    }
  }

  private func failed(_ message: String) {
    note { $0.lastError = message }
    Log.write(.warn, .sync, "Sync of \(configuration.fileURL?.lastPathComponent ?? "?") failed, retrying: \(message)")
  }

  /// Connects, then uploads and downloads until suspended; throws on any failure (the caller
  /// backs off and calls again).
  private func lead(_ realm: Realm, _ generation: Int) throws {
    note(generation) { $0.connection = .connecting }
    let client = PostgresClient(configuration: host.server.clientConfiguration)
    let runner = Task { await client.run() }
    defer { runner.cancel() }
    let schema = try SyncSchema(realm.schema)
    let logger = self.logger
    if host.createsServerSchema {
      try blocking("bootstrap") { try await schema.bootstrap(on: client, logger: logger) }
    }
    realm.refresh()
    try ServerUpload.enable(on: realm)
    let uploader = ServerUpload.uploader(of: realm, client: host.clientIdentifier)
    // Server notifications wake the agent; a listener that ends (connection lost) ends this run,
    // at once: it wakes the agent's wait for a server operation and for the next change.
    let listener = NotificationListener()
    let listen = Task { [weak self] in
      defer {
        listener.end()
        self?.poke()
      }
      try await client.withConnection { connection in
        try await connection.listen(on: SyncSchema.channel) { notifications in
          for try await _ in notifications { self?.poke() }
        }
      }
    }
    defer { listen.cancel() }
    note(generation) {
      $0.connection = .connected
      $0.lastError = nil
    }
    Log.write(.detail, .sync, "Sync agent connected to \(host.server)")
    while current(generation) {
      // A lost notification connection means a lost server: say so now, not after a query's timeout.
      guard listener.isListening else { throw SyncError.server("the notification connection ended") }
      realm.refresh()
      var uploaded = 0
      while case let uploads = try ServerUpload.pending(in: realm), !uploads.isEmpty {
        for upload in uploads {
          try blocking("upload", until: listener) {
            try await ServerUpload.send(upload, as: uploader, to: client, logger: logger)
          }
          try ServerUpload.confirm(upload, in: realm)
          uploaded += upload.objectCount
        }
      }
      var downloaded = 0
      let classes = schema.tables.map(\.className)
      let subscriptions = SubscriptionDocument.load(realm)
      let conditions = subscriptions?.conditions(classes: classes)
      let newSet = subscriptions.map { $0.error == nil && $0.version > SubscriptionDocument.applied(realm) } ?? false
      if !ServerDownload.isBootstrapped(realm) || newSet {
        // A new device, or a changed subscription set: every row in view at one snapshot (what
        // left the view is removed locally), then the change log after it.
        let version = newSet ? subscriptions?.version : nil
        let batch = try blocking("download", until: listener) {
          try await ServerDownload.snapshot(
            of: classes, from: client, conditions: conditions, subscriptionVersion: version, logger: logger)
        }
        try ServerDownload.apply(batch, to: realm)
        downloaded += batch.changes.count
      }
      while true {
        let cursor = ServerDownload.cursor(of: realm)
        let batch = try blocking("download", until: listener) {
          try await ServerDownload.fetch(
            after: cursor, from: client, excluding: uploader, conditions: conditions, logger: logger)
        }
        guard batch.cursor > cursor else { break }
        try ServerDownload.apply(batch, to: realm)
        downloaded += batch.changes.count
      }
      if uploaded + downloaded > 0 {
        Log.write(.debug, .sync, "Sync: uploaded \(uploaded) and downloaded \(downloaded) object changes")
      }
      _ = wake.wait(timeout: .now() + 1)
    }
  }

  /// Runs `operation` and waits for it on this (the agent's own) thread, at most 60 s, and
  /// only until `listener`'s notification connection ends: a server that stops answering
  /// closes that connection, and a query may then wait for a pooled connection until its
  /// timeout, so the agent would say it is offline only a minute later.
  @discardableResult
  private func blocking<T: Sendable>(
    _ what: String, until listener: NotificationListener? = nil,
    _ operation: @escaping @Sendable () async throws -> T
  ) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    // Signalled when the operation ends, or when the notification connection does.
    let done = DispatchSemaphore(value: 0)
    if let listener, !listener.register(done) { throw SyncError.server("the notification connection ended") }
    defer { listener?.register(nil) }
    let task = Task {
      let outcome: Result<T, any Error>
      do { outcome = .success(try await operation()) } catch { outcome = .failure(error) }
      result.withLock { $0 = outcome }
      done.signal()
    }
    if done.wait(timeout: .now() + 60) == .timedOut {
      task.cancel()
      throw SyncError.timedOut(what)
    }
    guard let outcome = result.withLock({ $0 }) else {
      // Woken by the end of the notification connection, the operation still running.
      task.cancel()
      throw SyncError.server("the notification connection ended")
    }
    return try outcome.get()
  }
}

/// Whether the sync agent's notification connection (`LISTEN`) is still up, and the wait to
/// wake when it ends: the agent's wait for a server operation (`SyncAgent.blocking`) sleeps
/// until the operation ends or this connection does, without polling.
final class NotificationListener: Sendable {
  private let state = Mutex<(ended: Bool, waiter: DispatchSemaphore?)>((false, nil))

  /// Whether the connection is still up.
  var isListening: Bool { state.withLock { !$0.ended } }

  /// Records that the connection ended, and wakes the wait registered with `register(_:)`.
  func end() {
    state.withLock { state in
      state.ended = true
      state.waiter?.signal()
    }
  }

  /// Registers `semaphore` (nil: none) to be signalled when the connection ends; false, and
  /// nothing registered, when it has ended already.
  @discardableResult
  func register(_ semaphore: DispatchSemaphore?) -> Bool {
    state.withLock { state in
      guard !state.ended else { return false }
      state.waiter = semaphore
      return true
    }
  }
}
