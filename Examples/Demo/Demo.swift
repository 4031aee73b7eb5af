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

/// `make demo`: RealmSwift-style models, a write, queries, a reopen, and the engine's view of
/// the file (change records, verify).
@main
struct Demo {
  static func main() throws {
    if CommandLine.arguments.count > 3, CommandLine.arguments[1] == "observe" {
      try LiveDemo.observe(path: CommandLine.arguments[2], name: CommandLine.arguments[3])
      return
    }
    let path = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "demo.realm"
    let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Fish.self])
    do {
      let realm = try Realm(configuration: configuration)
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
    }
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
