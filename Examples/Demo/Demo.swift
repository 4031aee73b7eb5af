import Shoal

/// `make demo`: writes a file, reopens it, reads it back, follows its change records.
@main
struct Demo {
  static func main() throws {
    let path = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "demo.shoal"
    do {
      let store = try Store.open(path: path)
      try store.write { txn in
        try txn.ensureKeyspace("fish")
        for (i, name) in ["anchovy", "bream", "carp", "dab", "eel", "flounder", "grouper", "herring"].enumerated() {
          let value =
            Array("\(name): a fish that swims in a shoal, number \(i), ".utf8)
            + Array(repeating: UInt8(ascii: "~"), count: 200)
          try txn.put(value, forKey: Array(name.utf8), in: "fish")
        }
      }
      let before = store.latestVersion
      try store.write { txn in
        try txn.delete(Array("eel".utf8), in: "fish")
        try txn.put(Array("bream: updated".utf8), forKey: Array("bream".utf8), in: "fish")
      }
      print("wrote version \(store.latestVersion) of \(path)")
      for record in try store.changes(from: before) {
        for ks in record.keyspaces {
          let summary = ks.changes.map { "\($0.kind) \(String(decoding: $0.key, as: UTF8.self))" }.joined(
            separator: ", ")
          print("version \(record.version) changed '\(ks.keyspace)': \(summary)")
        }
      }
    }
    // Reopen from disk and read everything back.
    let reopened = try Store.open(path: path)
    try reopened.read { txn in
      let fish = try txn.keyspace("fish")
      print("reopened at version \(txn.version): \(fish.count) entries in 'fish'")
      let cursor = fish.cursor()
      while let (key, value) = try cursor.next() {
        print("  \(String(decoding: key, as: UTF8.self)) -> \(String(decoding: value.prefix(40), as: UTF8.self))")
      }
    }
    let report = reopened.verify()
    print("verify: \(report.isOK ? "ok" : report.problems.joined(separator: "; "))")
  }
}
