import Dispatch
import Foundation
import Logging
import PostgresNIO
import Shoal
import ShoalStorage
import Synchronization

extension Realm {
  /// The sync session of this Realm's file (nil when the Realm is not synced), as RealmSwift's
  /// `Realm.syncSession`.
  ///
  /// ```swift
  /// try realm.write { realm.add(task) }
  /// try await realm.syncSession?.wait(for: .upload)   // on the server now
  /// ```
  public var syncSession: SyncSession? {
    guard let agent = SyncAgent.agent(for: configuration) else { return nil }
    return SyncSession(agent: agent)
  }
}

/// A synced file's session in this process (RealmSwift's `SyncSession`): its state, its
/// connection, waiting for uploads and downloads, suspending and resuming.
///
/// Of the processes that have the file open, one runs the sync agent (`isAgent`); a session
/// in another reports that process's work only through the file: `wait(for:)` works in every
/// process, `connectionState` is this process's agent's.
public final class SyncSession: Sendable {
  /// Whether the session is syncing (RealmSwift's `SyncSession.State`).
  public enum State: Sendable, Equatable {
    /// Syncing, or trying to (connected or not: see `connectionState`).
    case active
    /// Suspended (`suspend()`).
    case inactive
    /// Permanently failed; never reported by Shoal, whose agent always retries.
    case invalid
  }

  /// The agent's connection to the server (RealmSwift's `SyncSession.ConnectionState`).
  public enum ConnectionState: Sendable, Equatable {
    /// Not connected: another process runs the agent, the session is suspended, or the agent
    /// waits to retry after a failure.
    case disconnected
    /// Connecting.
    case connecting
    /// Connected.
    case connected
  }

  /// What `wait(for:)` waits for.
  public enum ProgressDirection: Sendable {
    /// Every commit made before the call is on the server.
    case upload
    /// Every change the server had at the time of the call is in the file.
    case download
  }

  let agent: SyncAgent

  init(agent: SyncAgent) { self.agent = agent }

  /// Active unless suspended.
  public var state: State { agent.status.withLock { $0.suspended ? .inactive : .active } }

  /// This process's connection to the server.
  public var connectionState: ConnectionState { agent.status.withLock { $0.connection } }

  /// Whether this process runs the file's agent now.
  public var isAgent: Bool { agent.status.withLock { $0.isAgent } }

  /// The last failure the agent retried after (nil once it succeeds again).
  public var lastError: String? { agent.status.withLock { $0.lastError } }

  /// The configuration of the session's Realm.
  public var configuration: Realm.Configuration { agent.configuration }

  /// Stops syncing in this process: the agent disconnects and gives up its role (another
  /// process with the file open may take it). Local writes go on; they upload after `resume()`.
  public func suspend() { agent.suspend() }

  /// Syncs again after `suspend()`.
  public func resume() { agent.start() }

  /// Waits until every commit made to the file before the call is on the server (`.upload`),
  /// or until the file holds every change the server had when it was called (`.download`).
  /// Throws `CancellationError` when the task is cancelled, and a `SyncError` when the server
  /// cannot be asked (`.download`).
  public func wait(for direction: ProgressDirection) async throws {
    switch direction {
    case .upload:
      // Until the agent enabled the outbox, the file's objects are not entered yet.
      try await poll { realm in realm.isSyncOutboxEnabled && ServerUpload.pendingCount(in: realm, limit: 1) == 0 }
    case .download:
      let target = try await newestServerChange()
      try await poll { realm in ServerDownload.cursor(of: realm) >= target }
    }
  }

  /// The sequence number of the server's newest change; 0 before its schema exists (the agent
  /// creates it on connecting, or an administrator runs `shoal sync-schema`).
  private func newestServerChange() async throws -> Int64 {
    do {
      return try await agent.host.server.withClient { client in
        let logger = Logging.Logger(label: "shoal.sync")
        var exists = false
        for try await found in try await client.query("SELECT to_regclass('shoal_changes') IS NOT NULL", logger: logger)
          .decode(Bool.self)
        {
          exists = found
        }
        guard exists else { return 0 }
        var newest: Int64 = 0
        let rows = try await client.query("SELECT coalesce(max(seq), 0)::bigint FROM shoal_changes", logger: logger)
        for try await value in rows.decode(Int64.self) { newest = value }
        return newest
      }
    } catch {
      throw SyncError.describing(error)
    }
  }

  /// Waits until every commit made to the file before the call is on the server:
  /// `wait(for: .upload)`.
  public func waitForUpload() async throws { try await wait(for: .upload) }

  /// Waits until the file holds every change the server had when called: `wait(for: .download)`.
  public func waitForDownload() async throws { try await wait(for: .download) }

  /// How long a progress notification block is called (RealmSwift's `ProgressMode`).
  public enum ProgressMode: Sendable {
    /// Until its token is invalidated, with the work outstanding at each report.
    case reportIndefinitely
    /// Until the work outstanding at registration is done (the last report says complete).
    case forCurrentlyOutstandingWork
  }

  /// Where a transfer stands (RealmSwift's `SyncSession.Progress`). Shoal counts commits
  /// (uploads) and server change-log entries (downloads), not bytes: the two byte counts
  /// hold those numbers.
  public struct Progress: Sendable, Equatable {
    /// Commits uploaded, or log entries downloaded, since the block was registered.
    public let transferredBytes: Int
    /// Those plus the ones still to transfer.
    public let transferrableBytes: Int
    /// From 0 to 1: the part of the work done.
    public let progressEstimate: Double

    /// The same as `progressEstimate`.
    public var fractionTransferred: Double { progressEstimate }
    /// Whether nothing is left to transfer.
    public var isTransferComplete: Bool { progressEstimate == 1.0 }
  }

  /// Keeps a progress notification block registered; `invalidate()`, or releasing the token,
  /// stops it.
  public final class ProgressNotificationToken: Sendable {
    let task: Task<Void, Never>
    init(task: Task<Void, Never>) { self.task = task }
    deinit { task.cancel() }
    /// Stops the block's reports.
    public func invalidate() { task.cancel() }
  }

  /// Calls `block` (on a task of its own) with the progress of uploads or downloads, checked
  /// after each commit to the file (of any process) and, for downloads, each change the server
  /// announces (at most every 50 ms), and reported when it changes: for
  /// `.forCurrentlyOutstandingWork` until the work outstanding now is done, for
  /// `.reportIndefinitely` until the token is invalidated or released. Keep the token while
  /// reports are wanted. A download block holds a connection to the server meanwhile (`LISTEN`);
  /// while the server cannot be reached, it tries again every 200 ms.
  public func addProgressNotification(
    for direction: ProgressDirection, mode: ProgressMode, block: @Sendable @escaping (Progress) -> Void
  ) -> ProgressNotificationToken? {
    let configuration = agent.configuration
    let server = agent.host.server
    let task = Task {
      var start: Int64?
      var last: Progress?
      // The file cannot be opened (yet): again after a pause, as a failed check.
      var opened: FileWakeups?
      while !Task.isCancelled, opened == nil {
        opened = try? FileWakeups(configuration)
        if opened == nil { try? await Task.sleep(for: .milliseconds(200)) }
      }
      guard let wakeups = opened else { return }
      defer { wakeups.stop() }
      // New entries in the server's log raise the download total: its notifications wake the
      // check too, on a connection of its own, for as long as the block reports.
      let listener =
        direction == .download
        ? Task {
          while !Task.isCancelled {
            try? await server.withClient { client in
              try await client.withConnection { connection in
                try await connection.listen(on: SyncSchema.channel) { notifications in
                  // Listening now (again, after a reconnection): what the server logged
                  // before is counted by a check after this.
                  wakeups.wake()
                  for try await _ in notifications { wakeups.wake() }
                }
              }
            }
            // The connection failed or ended: a new one after a pause.
            try? await Task.sleep(for: .milliseconds(200))
          }
        } : nil
      defer { listener?.cancel() }
      var iterator = wakeups.stream.makeAsyncIterator()
      // The first check at once.
      var checked = ContinuousClock.now - .milliseconds(50)
      while !Task.isCancelled {
        // At most one check every 50 ms however often the file and the server change: a
        // download's check is a query to the server.
        try? await Task.sleep(until: checked + .milliseconds(50))
        checked = ContinuousClock.now
        // (done, outstanding): commits uploaded since the start and commits waiting; or the
        // download cursor's advance and the log entries after it.
        guard let (position, outstanding) = try? await SyncSession.progressPosition(direction, configuration, server)
        else {
          // The server cannot be asked (a download's count): again after a pause.
          try? await Task.sleep(for: .milliseconds(200))
          continue
        }
        let origin = start ?? position
        start = origin
        let done = Int(max(0, position - origin))
        let total = done + outstanding
        let progress = Progress(
          transferredBytes: done, transferrableBytes: total,
          progressEstimate: total == 0 ? 1 : Double(done) / Double(total))
        if progress != last { block(progress) }
        last = progress
        if mode == .forCurrentlyOutstandingWork, progress.isTransferComplete { return }
        _ = await iterator.next()
      }
    }
    return ProgressNotificationToken(task: task)
  }

  /// For uploads: the next outbox sequence number minus the entries waiting (a count that only
  /// grows as commits upload) and the entries waiting; for downloads: the file's cursor and the
  /// server's log entries after it.
  private static func progressPosition(
    _ direction: ProgressDirection, _ configuration: Realm.Configuration, _ server: PostgresServer
  ) async throws -> (Int64, Int) {
    switch direction {
    case .upload:
      return try { () throws -> (Int64, Int) in
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        let waiting = ServerUpload.pendingCount(in: realm, limit: 100_000)
        return (Int64(ServerUpload.uploadedCount(in: realm)), waiting)
      }()
    case .download:
      let cursor = try { () throws -> Int64 in
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        return ServerDownload.cursor(of: realm)
      }()
      let after = try await server.withClient { client in
        var count: Int64 = 0
        let rows = try await client.query(
          "SELECT count(*) FROM shoal_changes WHERE seq > \(cursor)", logger: Logging.Logger(label: "shoal.sync"))
        for try await value in rows.decode(Int64.self) { count = value }
        return count
      }
      return (cursor, Int(after))
    }
  }

  /// RealmSwift's callback form of `wait(for:)`: `block` runs on `queue` (a global queue when
  /// nil) with nil, or the error.
  public func wait(
    for direction: ProgressDirection, queue: DispatchQueue? = nil, block: @Sendable @escaping ((any Error)?) -> Void
  ) {
    Task {
      var failure: (any Error)?
      do { try await wait(for: direction) } catch { failure = error }
      let error = failure
      (queue ?? .global()).async { block(error) }
    }
  }

  /// Checks `done` on a fresh view of the file, then after each commit to it (`SyncSession.poll`).
  private func poll(_ done: @escaping (Realm) throws -> Bool) async throws {
    try await SyncSession.poll(agent.configuration, done)
  }

  /// Checks `done` on a fresh view of `configuration`'s file, then again after each commit to
  /// the file (of any process), until it is true (or throws), or the task is cancelled.
  static func poll(_ configuration: Realm.Configuration, _ done: @escaping (Realm) throws -> Bool) async throws {
    let wakeups = try FileWakeups(configuration)
    defer { wakeups.stop() }
    var iterator = wakeups.stream.makeAsyncIterator()
    while true {
      try Task.checkCancellation()
      // Opened, refreshed and read without suspending: on one thread.
      let finished = try { () throws -> Bool in
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        return try done(realm)
      }()
      if finished { return }
      // The next commit; one made since the listener was added is kept, never missed. Nil only
      // once the task is cancelled.
      if await iterator.next() == nil { try Task.checkCancellation() }
    }
  }
}

/// Wake-ups for a wait on a synced file's contents: one after each commit to the file by any
/// process (the file stays open in this process meanwhile), and one at each `wake()`. Those
/// that come while nobody waits fold into one, so the next wait returns at once.
final class FileWakeups: Sendable {
  /// The wake-ups; it ends at `stop()`, or for a waiting task when it is cancelled.
  let stream: AsyncStream<Void>
  private let continuation: AsyncStream<Void>.Continuation
  private let token: ChangeListenerToken
  /// Keeps the file open in this process while the wait lasts, so its commits are heard.
  private let file: any AnyObject & Sendable

  init(_ configuration: Realm.Configuration) throws {
    let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    self.stream = stream
    self.continuation = continuation
    (token, file) = try { () throws -> (ChangeListenerToken, any AnyObject & Sendable) in
      let realm = try Realm(configuration: configuration)
      return (realm.addFileChangeListener { continuation.yield() }, realm.openFile)
    }()
  }

  /// Wakes the wait (or the next one).
  func wake() { continuation.yield() }

  /// Stops the commits' wake-ups and ends the stream.
  func stop() {
    token.invalidate()
    continuation.finish()
  }
}
