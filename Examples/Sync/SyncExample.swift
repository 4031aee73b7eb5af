import Foundation
import Shoal
import ShoalSync

/// A task, synced through PostgreSQL (a synced class needs a primary key).
final class SyncedTask: Object {
  @Persisted(primaryKey: true) var id = ""
  @Persisted var title = ""
  @Persisted var done = false
}

/// Two devices, two files, one PostgreSQL: this program starts a copy of itself that plays the
/// second device and writes tasks, while it observes its own file and prints each task as sync
/// brings it in, with the fine-grained change set.
///
///     swift run shoal-sync-example postgres://user@127.0.0.1:5432/db
@main
struct SyncExample {
  static func configuration(file: String, url: String, client: String) throws -> Realm.Configuration {
    var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: file), objectTypes: [SyncedTask.self])
    // The agent creates the tables on first connect (or run `shoal sync-schema FILE` yourself).
    configuration.syncConfiguration = try SyncConfiguration(url: url, clientIdentifier: client)
    return configuration
  }

  static func main() async throws {
    let arguments = CommandLine.arguments
    guard arguments.count >= 2 else {
      FileHandle.standardError.write(Data("usage: shoal-sync-example POSTGRES_URL\n".utf8))
      exit(2)
    }
    let url = arguments[1]
    if arguments.count == 3, arguments[2] == "--writer" { return try await writer(url: url) }

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shoal-sync-example")
    try? FileManager.default.removeItem(at: directory)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let file = directory.appendingPathComponent("laptop.realm").path
    let configuration = try configuration(file: file, url: url, client: "laptop")
    let seen = AsyncStream<Int>.makeStream()
    // Observed on a queue: each callback gets the results and what changed in them.
    let token = try Realm(configuration: configuration).objects(SyncedTask.self).sorted(byKeyPath: "id")
      .observe(on: DispatchQueue(label: "observer")) { change in
        guard case .update(let tasks, let deletions, let insertions, let modifications) = change else { return }
        for index in insertions {
          print("laptop (pid \(getpid())): new task '\(tasks[index].title)', done: \(tasks[index].done)")
        }
        for index in modifications {
          print("laptop (pid \(getpid())): task '\(tasks[index].title)' changed, done: \(tasks[index].done)")
        }
        if !deletions.isEmpty { print("laptop (pid \(getpid())): \(deletions.count) task(s) deleted") }
        seen.continuation.yield(tasks.filter("done == true").count)
      }
    let child = Process()
    child.executableURL = URL(fileURLWithPath: arguments[0])
    child.arguments = [url, "--writer"]
    try child.run()
    // Until the phone's last change (all three tasks done) reached this device.
    let deadline = Task {
      try await Task.sleep(for: .seconds(60))
      seen.continuation.finish()
    }
    for await done in seen.stream where done == 3 { break }
    deadline.cancel()
    token.invalidate()
    child.waitUntilExit()
    print("laptop: \(try Realm(configuration: configuration).objects(SyncedTask.self).count) tasks, all synced")
  }

  /// The second device: writes three tasks, then marks them done, and waits until the server has them.
  static func writer(url: String) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shoal-sync-example")
    let configuration = try configuration(
      file: directory.appendingPathComponent("phone.realm").path, url: url, client: "phone")
    let titles = ["buy milk", "write the report", "call Ann"]
    for (index, title) in titles.enumerated() {
      let realm = try Realm(configuration: configuration)
      try realm.write { realm.add(SyncedTask(value: ["id": "task-\(index)", "title": title])) }
      print("phone (pid \(getpid())): added '\(title)'")
      try await Task.sleep(for: .milliseconds(200))
    }
    let realm = try Realm(configuration: configuration)
    try realm.write { for task in realm.objects(SyncedTask.self) { task.done = true } }
    print("phone (pid \(getpid())): marked every task done")
    try await realm.syncSession?.wait(for: .upload)
    print("phone: everything uploaded")
  }
}
