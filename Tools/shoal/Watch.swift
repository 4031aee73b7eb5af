import ArgumentParser
import Foundation
import ShoalStorage

/// `shoal watch FILE`: prints each commit any process makes to the file, as it happens.
struct Watch: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Print each commit made by any process (version, classes or keyspaces touched, counts) as it happens.")
  @Argument(help: "The Shoal file.") var file: String
  @Option(help: "Exit after this many commits (default: run until interrupted).") var count: Int?
  @Option(help: "Exit after this many seconds without a commit.") var timeout: Double?
  @OptionGroup var key: KeyOption
  @OptionGroup var output: Output

  /// One commit, as printed.
  struct Commit: Encodable {
    struct Touched: Encodable {
      var name: String
      var inserted = 0
      var updated = 0
      var deleted = 0
      var cleared = false
    }
    var version: UInt64
    var touched: [Touched]
  }

  func run() throws {
    let store: Store
    do {
      store = try Store.open(path: file, options: StoreOptions(create: false, encryptionKey: key.key()))
    } catch {
      try fail(error, json: output.json)
    }
    // A pinned version keeps the change records after it until they are printed.
    var pin: ReadTransaction
    do { pin = try store.beginRead() } catch { try fail(error, json: output.json) }
    var seen = pin.version
    var printed = 0
    // Written unbuffered: whoever reads a pipe sees each line as it happens.
    func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    if !output.json { say("watching \(file) from version \(seen)") }
    while count.map({ printed < $0 }) ?? true {
      guard store.waitForChange(after: seen, timeout: timeout.map { .milliseconds(Int64($0 * 1000)) }) != nil else {
        return
      }
      // Pin the newest version before reading the changes up to it: until then the old pin
      // keeps every record after `seen` (commits may have landed since the wake).
      let next: ReadTransaction
      do { next = try store.beginRead() } catch { try fail(error, json: output.json) }
      let records: [ChangeRecord]
      do {
        records = try store.changes(from: seen, to: next.version)
      } catch {
        FileHandle.standardError.write(Data("shoal watch: \(error)\n".utf8))
        records = []
      }
      for record in records {
        let commit = Commit(version: record.version, touched: record.keyspaces.compactMap(Watch.describe))
        if output.json {
          let encoder = JSONEncoder()
          encoder.outputFormatting = [.sortedKeys]
          say(String(decoding: try encoder.encode(commit), as: UTF8.self))
        } else {
          let parts = commit.touched.map { t -> String in
            if t.cleared { return "\(t.name): cleared" }
            let counts = [("inserted", t.inserted), ("updated", t.updated), ("deleted", t.deleted)]
              .filter { $0.1 > 0 }.map { "\($0.1) \($0.0)" }
            return "\(t.name): " + (counts.isEmpty ? "changed" : counts.joined(separator: ", "))
          }
          say("version \(commit.version): " + (parts.isEmpty ? "no tracked changes" : parts.joined(separator: "; ")))
        }
        printed += 1
        if let count, printed >= count { return }
      }
      pin = next
      seen = next.version
    }
  }

  /// A keyspace's changes under the name a user knows: the class for `o/Class`, otherwise the
  /// keyspace; indexes and Shoal's own bookkeeping are left out.
  static func describe(_ space: KeyspaceChanges) -> Commit.Touched? {
    let name: String
    if space.keyspace.hasPrefix("o/") {
      name = String(space.keyspace.dropFirst(2))
    } else if space.keyspace.hasPrefix("_") || space.keyspace.hasPrefix("i/") || space.keyspace.hasPrefix("x/")
      || space.keyspace.hasPrefix("k/")
      || space.keyspace.hasPrefix("b/")
    {
      return nil
    } else {
      name = space.keyspace
    }
    var touched = Commit.Touched(name: name, cleared: space.cleared || space.dropped)
    for change in space.changes {
      switch change.kind {
      case .insert: touched.inserted += 1
      case .update: touched.updated += 1
      case .delete: touched.deleted += 1
      }
    }
    return touched
  }
}
