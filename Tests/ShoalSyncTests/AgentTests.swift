import Foundation
import Logging
import PostgresNIO
import Shoal
import ShoalSharedModels
import ShoalSync
import ShoalTestSupport
import Testing

/// A synced device (`shoal-sync-worker`) in a process of its own.
final class SyncDevice: WorkerProcess {
  let file: String

  init(file: String, url: String, client: String) throws {
    self.file = file
    try super.init("shoal-sync-worker", arguments: ["--file", file, "--url", url, "--client", client])
  }

  /// A new file in a directory of its own.
  static func newFile(_ name: String) throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shoal-agent-" + UUID().uuidString)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent(name + ".realm").path
  }

  /// Uploads everything, then downloads everything, as the worker's session waits.
  func settle() throws {
    #expect(try send("wait upload", timeout: 120) == "waited upload")
    #expect(try send("wait download", timeout: 120) == "waited download")
  }

  /// The number of notes in the digest line.
  static func count(_ digest: String) -> Int { Int(digest.split(separator: " ")[1]) ?? -1 }
}

@Suite("Sync: devices in processes of their own", .serialized)
struct AgentTests {
  let logger = Logger(label: "shoal.sync.tests")

  @Test(.enabled(if: TestServer.available), arguments: [2, 3])
  func devicesConvergeAfterRandomConcurrentEdits(devices: Int) async throws {
    let server = try await TestServer.freshDatabase()
    let url = TestServer.url(of: server)
    let workers = try (0..<devices).map {
      try SyncDevice(file: SyncDevice.newFile("d\($0)"), url: url, client: "d\($0)")
    }
    // Two rounds of concurrent random edits of the same twenty notes, each device syncing as
    // it goes; then every device uploads, and every device downloads.
    for round in 0..<2 {
      for (index, worker) in workers.enumerated() { worker.sendOnly("random \(round * 100 + index + devices) 40") }
      for worker in workers { #expect(try worker.line(timeout: 120).hasPrefix("randomized")) }
    }
    for worker in workers { #expect(try worker.send("wait upload", timeout: 120) == "waited upload") }
    for worker in workers { #expect(try worker.send("wait download", timeout: 120) == "waited download") }
    let digests = try workers.map { try $0.send("digest") }
    #expect(Set(digests).count == 1, "\(digests)")
    let rows = try await TestServer.scalar("SELECT count(*) FROM \"Note\"", server)
    #expect(Int64(SyncDevice.count(digests[0])) == rows)
    // A row another application inserts with plain SQL reaches every device.
    try await server.withClient { client in
      try await client.query(
        "INSERT INTO \"Note\" (id, author, text, priority, tags) VALUES ('sql-1', 'sql', 'hi', 1, '[]')",
        logger: Logger(label: "shoal.sync.tests"))
    }
    for worker in workers { #expect(try worker.send("wait download", timeout: 120) == "waited download") }
    let after = try workers.map { try $0.send("digest") }
    #expect(Set(after).count == 1 && SyncDevice.count(after[0]) == SyncDevice.count(digests[0]) + 1, "\(after)")
    // Settled: no device sends back what it downloaded. An echo would be in a device's outbox
    // from the download's own commit on, so waiting for every upload would log it.
    let logged = try await TestServer.scalar("SELECT max(seq) FROM shoal_changes", server)
    for worker in workers { #expect(try worker.send("wait upload", timeout: 120) == "waited upload") }
    #expect(try await TestServer.scalar("SELECT max(seq) FROM shoal_changes", server) == logged)
  }

  @Test(.enabled(if: TestServer.available))
  func oneProcessRunsTheAgentAndAnotherTakesOverWhenItIsKilled() async throws {
    let server = try await TestServer.freshDatabase()
    let url = TestServer.url(of: server)
    let file = try SyncDevice.newFile("shared")
    let first = try SyncDevice(file: file, url: url, client: "laptop")
    let second = try SyncDevice(file: file, url: url, client: "laptop")
    let observer = try SyncDevice(file: SyncDevice.newFile("other"), url: url, client: "phone")
    #expect(try observer.send("observe") == "observing")
    // Exactly one of the two processes sharing the file becomes the agent (most likely the
    // first, which started first; if not, it answers after waiting 10 s).
    let firstIsAgent = try first.send("awaitstate agent 10") == "state agent yes"
    let secondIsAgent = try second.send(firstIsAgent ? "agent" : "awaitstate agent 10")
    #expect(firstIsAgent != (secondIsAgent == "agent yes" || secondIsAgent == "state agent yes"))
    let (agent, other) = firstIsAgent ? (first, second) : (second, first)
    // The process that is not the agent writes; the agent uploads it, the other device hears it.
    #expect(try other.send("set n-1 hello") == "set n-1")
    #expect(try other.send("wait upload") == "waited upload")
    #expect(try observer.line(timeout: 60) == "observed 1")

    // The agent dies; the other process takes the role over and syncs what comes next.
    agent.kill()
    let killed = Date()
    #expect(try other.send("awaitstate agent 10") == "state agent yes")
    print("AgentTests: the role was taken over \(Int(Date().timeIntervalSince(killed) * 1000)) ms after the kill")
    #expect(try other.send("set n-2 again") == "set n-2")
    #expect(try other.send("wait upload") == "waited upload")
    #expect(try observer.line(timeout: 60) == "observed 2")
    #expect(try await TestServer.scalar("SELECT count(*) FROM \"Note\"", server) == 2)
  }

  @Test(.enabled(if: TestServer.available))
  func anAgentKilledDuringUploadsAndDownloadsLosesAndRepeatsNothing() async throws {
    let server = try await TestServer.freshDatabase()
    let url = TestServer.url(of: server)
    let file = try SyncDevice.newFile("device")
    var device: SyncDevice? = try SyncDevice(file: file, url: url, client: "tablet")
    // Killed in the middle of 400 commits, each uploaded as it lands.
    device?.sendOnly("addloop 400 k")
    var acknowledged = -1
    while acknowledged < 150, let line = try device?.line(timeout: 60), line.hasPrefix("committed ") {
      acknowledged = Int(line.dropFirst("committed ".count)) ?? acknowledged
    }
    device?.kill()
    device = try SyncDevice(file: file, url: url, client: "tablet")
    try device?.settle()
    let digest = try #require(try device?.send("digest"))
    let local = SyncDevice.count(digest)
    #expect(local > acknowledged)
    // Every committed note is on the server once: one logged change each (an upload applied
    // twice would log its notes twice), and at most one recorded upload per commit (the
    // commits before the agent first enabled the outbox upload as one).
    #expect(try await TestServer.scalar("SELECT count(*) FROM \"Note\"", server) == Int64(local))
    #expect(
      try await TestServer.scalar("SELECT count(*) FROM shoal_changes WHERE client_id LIKE 'tablet/%'", server)
        == Int64(local))
    let uploads = try await TestServer.scalar("SELECT count(*) FROM shoal_uploads", server)
    #expect(uploads > 0 && uploads <= Int64(local), "\(uploads) uploads of \(local) commits")

    // Another application inserts 3,000 notes in 300 transactions; the device is killed once
    // its first download of them reached its file, and started again.
    #expect(try device?.send("observe") == "observing")
    let logger = self.logger
    let writer = Task {
      try await server.withClient { client in
        for batch in 0..<300 {
          try await client.query(
            PostgresQuery(
              unsafeSQL: """
                INSERT INTO "Note" (id, author, text, priority, tags)
                SELECT 's-\(batch)-' || i, 'sql', 'from sql', i % 5, '[]' FROM generate_series(0, 9) i
                """), logger: logger)
        }
      }
    }
    var observed = local
    while observed <= local, let line = try device?.line(timeout: 60), line.hasPrefix("observed ") {
      observed = Int(line.dropFirst("observed ".count)) ?? observed
    }
    #expect(observed > local)
    device?.kill()
    try await writer.value
    device = try SyncDevice(file: file, url: url, client: "tablet")
    try device?.settle()
    let after = try #require(try device?.send("digest"))
    #expect(SyncDevice.count(after) == local + 3000)
    #expect(try await TestServer.scalar("SELECT count(*) FROM \"Note\"", server) == Int64(local + 3000))
  }

  @Test(.enabled(if: TestServer.available))
  func aNewDeviceBootstrapsOneHundredThousandRows() async throws {
    let server = try await TestServer.freshDatabase()
    let url = TestServer.url(of: server)
    // The first device creates the tables; another application fills them.
    let first = try SyncDevice(file: SyncDevice.newFile("first"), url: url, client: "first")
    try first.settle()
    try await server.withClient { client in
      try await client.query(
        """
        INSERT INTO "Note" (id, author, text, priority, tags)
        SELECT 'b-' || i, 'sql', 'row ' || i, i % 7, '["x"]' FROM generate_series(1, 100000) i
        """, logger: Logger(label: "shoal.sync.tests"))
    }
    let started = Date()
    let device = try SyncDevice(file: SyncDevice.newFile("new"), url: url, client: "new")
    try device.settle()
    let seconds = Date().timeIntervalSince(started)
    #expect(SyncDevice.count(try device.send("digest")) == 100_000)
    print("AgentTests: a new device bootstrapped 100,000 rows in \(String(format: "%.1f", seconds)) s (debug build)")
    // And the first device, which had synced before, catches up through the change log.
    try first.settle()
    #expect(try first.send("digest") == (try device.send("digest")))
  }

  @Test(.enabled(if: TestServer.available && TestServer.canRunClusters))
  func writesMadeWhilePostgreSQLIsDownUploadWhenItIsBack() async throws {
    let cluster = try TestServer.PrivateCluster()
    defer { cluster.stop() }
    let server = try PostgresServer(url: cluster.url)
    let device = try SyncDevice(file: SyncDevice.newFile("offline"), url: cluster.url, client: "field")
    #expect(try device.send("add 10 before") == "added 10")
    try device.settle()
    // PostgreSQL stops as if it crashed; writes go on locally, without waiting.
    try cluster.halt()
    device.sendOnly("addloop 20 during")
    for i in 0..<20 { #expect(try device.line(timeout: 30) == "committed \(i)") }
    // The agent found the server gone before it comes back.
    #expect(try device.send("awaitstate offline 30") == "state offline yes")
    try cluster.resume()
    // Another application writes too, once the server is back.
    try await server.withClient { client in
      try await client.query(
        "INSERT INTO \"Note\" (id, author, text, priority, tags) VALUES ('sql-1', 'sql', 'hi', 1, '[]')",
        logger: Logger(label: "shoal.sync.tests"))
    }
    try device.settle()
    #expect(SyncDevice.count(try device.send("digest")) == 31)
    #expect(try await TestServer.scalar("SELECT count(*) FROM \"Note\"", server) == 31)
  }

  @Test(.enabled(if: TestServer.available && TestServer.canRunClusters))
  func aDeviceSyncsOverTLS() async throws {
    let cluster = try TestServer.PrivateCluster()
    defer { cluster.stop() }
    try cluster.enableTLS()
    let plain = try PostgresServer(url: cluster.url)
    try await plain.withClient { client in
      let logger = Logger(label: "shoal.sync.tests")
      try await client.query("ALTER SYSTEM SET ssl = on", logger: logger)
    }
    // A restart, not a reload: `pg_reload_conf()` only signals the server, which takes the new
    // setting some time later, while `resume` (`pg_ctl start -w`) returns once the server accepts
    // connections with the setting it started with.
    try cluster.halt()
    try cluster.resume()
    // sslmode=require as libpq reads it: encrypted, the self-signed certificate not checked.
    let url = cluster.url + "?sslmode=require"
    let server = try PostgresServer(url: url)
    #expect(server.requireTLS && !server.verifiesCertificate)
    #expect(
      try await TestServer.scalar("SELECT count(*) FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND ssl", server)
        == 1)
    let device = try SyncDevice(file: SyncDevice.newFile("tls"), url: url, client: "tls")
    #expect(try device.send("add 5 secure") == "added 5")
    try device.settle()
    #expect(try await TestServer.scalar("SELECT count(*) FROM \"Note\"", server) == 5)
    // The device's agent is connected (listening), through TLS; no client is connected in the clear.
    let clients = "FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.backend_type = 'client backend'"
    #expect(
      try await TestServer.scalar("SELECT count(*) \(clients) AND s.ssl AND s.pid <> pg_backend_pid()", server) >= 1)
    #expect(try await TestServer.scalar("SELECT count(*) \(clients) AND NOT s.ssl", server) == 0)
  }

  /// A download progress block hears of new entries in the server's log through the server's
  /// notifications (nothing commits to the file while the session is suspended), and of the
  /// download through the file's commits; it checks nothing in between.
  @Test(.enabled(if: TestServer.available))
  func downloadProgressFollowsTheServersLogAndTheDownload() async throws {
    let server = try await TestServer.freshDatabase()
    let device = try SyncDevice(
      file: SyncDevice.newFile("download-progress"), url: TestServer.url(of: server), client: "d")
    try device.settle()
    // Another application's notes: one, downloaded before the session is suspended (so the
    // agent's first download is done and it has nothing left to commit), then three in one
    // transaction while it is.
    func insert(_ ids: [String]) async throws {
      let rows = ids.map { "('\($0)', 'sql', 'text', 1, '[]')" }.joined(separator: ", ")
      try await server.withClient { client in
        try await client.query(
          PostgresQuery(unsafeSQL: "INSERT INTO \"Note\" (id, author, text, priority, tags) VALUES \(rows)"),
          logger: Logger(label: "shoal.sync.tests"))
      }
    }
    try await insert(["sql-0"])
    #expect(try device.send("wait download", timeout: 120) == "waited download")
    #expect(try device.send("pause") == "paused")
    device.sendOnly("progress download indefinitely")
    #expect(try device.line(timeout: 30) == "progress 0/0")
    try await insert(["sql-1", "sql-2", "sql-3"])
    #expect(try device.line(timeout: 30) == "progress 0/3")
    #expect(try device.send("resume") == "resumed")
    var reports: [String] = []
    while reports.last != "progress 3/3" { reports.append(try device.line(timeout: 60)) }
    #expect(reports.allSatisfy { $0.hasSuffix("/3") }, "\(reports)")
    #expect(SyncDevice.count(try device.send("digest")) == 4)
  }

  @Test(.enabled(if: TestServer.available))
  func uploadProgressIsReportedUntilTheOutstandingCommitsAreUp() async throws {
    let server = try await TestServer.freshDatabase()
    let device = try SyncDevice(file: SyncDevice.newFile("progress"), url: TestServer.url(of: server), client: "p")
    try device.settle()
    // Three commits while the session is suspended: three uploads outstanding.
    #expect(try device.send("pause") == "paused")
    for id in ["a", "b", "c"] { #expect(try device.send("set \(id) text") == "set \(id)") }
    device.sendOnly("progress upload")
    #expect(try device.line(timeout: 30) == "progress 0/3")
    #expect(try device.send("resume") == "resumed")
    var reports: [String] = []
    while reports.last != "progress 3/3" { reports.append(try device.line(timeout: 60)) }
    let done = reports.map { Int($0.dropFirst("progress ".count).split(separator: "/")[0]) ?? -1 }
    #expect(done == done.sorted() && done.last == 3, "\(reports)")
    #expect(try await TestServer.scalar("SELECT count(*) FROM \"Note\"", server) == 3)
  }
}
