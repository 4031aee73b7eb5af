import Dispatch
import Foundation
import Shoal
import ShoalStorage

/// A fish in the demo's shoal.
final class Fish: Object {
  @Persisted(primaryKey: true) var name = ""
  @Persisted(indexed: true) var habitat = ""
  @Persisted var length = 0.0
  @Persisted var schoolmates: List<Fish>
}

/// `make demo`: a custom logger attached, RealmSwift-style models, a write and queries inside
/// an event scope (events recorded beside the file), a reopen, the engine's view of the file,
/// then the live part (`LiveDemo`): processes sharing the file, cross-process notifications, a
/// frozen snapshot read while writes go on.
@main
struct Demo {
  static func main() throws {
    if CommandLine.arguments.count > 3, CommandLine.arguments[1] == "observe" {
      try LiveDemo.observe(path: CommandLine.arguments[2], name: CommandLine.arguments[3])
      return
    }
    let path = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "demo.realm"
    // A custom logger: Shoal's own messages, with their categories, at `detail` and above.
    Logger.shared = Logger(level: .detail) { level, category, message in
      print("  log \(category) \(level): \(message)")
    }
    var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Fish.self])
    // Event recording: reads and writes inside a scope go to `<file>.events.shoal`.
    configuration.eventConfiguration = EventConfiguration(metadata: ["user": "demo", "host": "pid-\(getpid())"])
    do {
      let realm = try Realm(configuration: configuration)
      let scope = realm.events?.beginScope(activity: "stock the aquarium")
      let catalogue: [(String, String, Double)] = [
        ("anchovy", "sea", 0.2), ("bream", "lake", 0.5), ("carp", "lake", 0.9), ("dab", "sea", 0.4),
        ("eel", "river", 1.2), ("flounder", "sea", 0.6), ("grouper", "reef", 1.5), ("herring", "sea", 0.3),
      ]
      try realm.write {
        for (name, habitat, length) in catalogue {
          realm.add(Fish(value: ["name": name, "habitat": habitat, "length": length]), update: .modified)
        }
        if let herring = realm.object(ofType: Fish.self, forPrimaryKey: "herring"),
          let anchovy = realm.object(ofType: Fish.self, forPrimaryKey: "anchovy")
        {
          herring.schoolmates.removeAll()
          herring.schoolmates.append(anchovy)
        }
      }
      print("wrote \(realm.objects(Fish.self).count) fish to \(path)")
      let sea = realm.objects(Fish.self).filter("habitat == %@", "sea").sorted(byKeyPath: "length", ascending: false)
      print("sea fish, longest first: \(sea.map(\.name).joined(separator: ", "))")
      let long = realm.objects(Fish.self).where { $0.length > 0.8 && $0.habitat != "sea" }
      print("long fish away from the sea: \(long.map(\.name).sorted().joined(separator: ", "))")
      let average: Double? = realm.objects(Fish.self).average(ofProperty: "length")
      print("average length: \(String(format: "%.2f", average ?? 0)) m")
      let stored = DispatchSemaphore(value: 0)
      scope?.commit { error in
        print("events of the scope stored \(error.map { "with an error: \($0)" } ?? "beside the file")")
        stored.signal()
      }
      stored.wait()
    }
    Logger.shared.level = .warn
    // Reopen from disk and read back.
    let realm = try Realm(configuration: configuration)
    let herring = realm.object(ofType: Fish.self, forPrimaryKey: "herring")
    print("reopened: herring swims with \(herring?.schoolmates.map(\.name) ?? [])")
    // The engine underneath: one keyspace per class, a change record per commit.
    let store = try Store.open(path: path)
    try store.read { txn in
      for name in try txn.keyspaceNames() where !name.hasPrefix("_") {
        print("  keyspace \(name): \(try txn.count(in: name)) entries")
      }
    }
    let report = store.verify()
    print("verify: \(report.isOK ? "ok" : report.problems.joined(separator: "; "))")
    try LiveDemo.run(configuration: configuration)
  }
}
