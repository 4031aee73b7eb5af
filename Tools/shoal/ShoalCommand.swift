import ArgumentParser
import Foundation
import ShoalStorage

@main
struct ShoalCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "shoal",
    abstract: "Inspect, verify, dump and compact Shoal files; watch commits; print recorded events.",
    subcommands: [Info.self, Verify.self, Dump.self, Compact.self, Watch.self, EventsCommand.self])
}

struct Output: ParsableArguments {
  @Flag(help: "Print JSON instead of text.") var json = false
}

func printJSON<T: Encodable>(_ value: T) throws {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys]
  print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// Opens a file for inspection: read-only, never creating it.
func openForReading(_ path: String) throws -> Store {
  try Store.open(path: path, options: StoreOptions(readOnly: true, create: false))
}

/// Prints an error the way every command does and exits with status 1.
func fail(_ error: Error, json: Bool) throws -> Never {
  let message = (error as? StorageError)?.description ?? "\(error)"
  if json {
    try printJSON(["error": message])
  } else {
    FileHandle.standardError.write(Data("shoal: \(message)\n".utf8))
  }
  throw ExitCode.failure
}

struct Info: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Format, versions, sizes, compression and keyspaces of a file.")
  @Argument(help: "The Shoal file.") var file: String
  @OptionGroup var output: Output

  func run() throws {
    let info: FileInfo
    do { info = try openForReading(file).info() } catch { try fail(error, json: output.json) }
    if output.json { return try printJSON(info) }
    func mib(_ n: UInt64) -> String { String(format: "%.2f MiB", Double(n) / 1_048_576) }
    print("file:              \(info.path)")
    print("format version:    \(info.formatVersion)")
    print("latest version:    \(info.version)")
    print("file size:         \(info.fileSize) bytes (\(mib(info.fileSize)))")
    print("live bytes:        \(info.liveBytes)")
    print(
      "free bytes:        \(info.freeBytes) (\(info.pendingFreeBytes) freed by recent commits, reusable once no older snapshot needs them)"
    )
    print("free extents:      \(info.freeExtents)")
    print(
      "free-space list:   \(info.freeListBlocks) block(s): a full list and \(max(0, info.freeListBlocks - 1)) delta(s)")
    print("uncompressed:      \(info.uncompressedBytes) bytes")
    print("stored:            \(info.storedBytes) bytes")
    print("compression ratio: \(String(format: "%.2f", info.compressionRatio))x")
    print("nodes:             \(info.leafNodes) leaves, \(info.branchNodes) branches, \(info.blobs) blobs")
    print("change records:    \(info.historyRecords) (\(info.historyStoredBytes) bytes stored)")
    print("active versions:   \(info.activeVersions) (file-wide)")
    for pin in info.pins {
      print("  version \(pin.version) pinned by pid \(pin.pid) for \((pin.ageSeconds * 10).rounded() / 10) s")
    }
    if let lock = info.lockFile { print("lock file:         \(lock)") }
    if let v = info.recoveredFromVersion {
      print("recovered:         version \(v) was incomplete; opened the previous one")
    }
    print("keyspaces:         \(info.keyspaces.count)")
    for ks in info.keyspaces {
      print(
        "  \(ks.name): \(ks.entries) entries, \(ks.storedBytes) bytes stored (\(ks.uncompressedBytes) uncompressed)")
    }
  }
}

struct Verify: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract:
      "Check every reachable block and the free space; prints ok, or each problem and exits 1 (also when the newest commit was lost and the previous version opened)."
  )
  @Argument(help: "The Shoal file.") var file: String
  @OptionGroup var output: Output

  func run() throws {
    let report: VerifyReport
    let store: Store
    do {
      store = try openForReading(file)
      report = store.verify()
    } catch { try fail(error, json: output.json) }
    var problems = report.problems
    // A file whose newest commit could not be read is not a healthy file, even though the
    // version it fell back to verifies.
    if let lost = store.recoveredFromVersion {
      problems.insert(
        "the newest commit (version \(lost)) is damaged or cut short; the file opens at version \(store.latestVersion)",
        at: 0)
    }
    struct Result: Encodable {
      var ok: Bool
      var problems: [String]
    }
    if output.json {
      try printJSON(Result(ok: problems.isEmpty, problems: problems))
    } else if problems.isEmpty {
      print("ok")
    } else {
      for problem in problems { print(problem) }
    }
    if !problems.isEmpty { throw ExitCode.failure }
  }
}

/// Text with printable ASCII kept and every other byte as \xNN.
func escaped(_ bytes: [UInt8]) -> String {
  var s = ""
  for b in bytes {
    if b >= 0x20 && b < 0x7F && b != UInt8(ascii: "\\") {
      s.unicodeScalars.append(UnicodeScalar(b))
    } else {
      s += String(format: "\\x%02x", b)
    }
  }
  return s
}

struct Dump: ParsableCommand {
  static let configuration = CommandConfiguration(abstract: "Print the entries of every keyspace, or of one.")
  @Argument(help: "The Shoal file.") var file: String
  @Option(help: "Only this keyspace.") var keyspace: String?
  @OptionGroup var output: Output

  struct Entry: Encodable {
    var keyspace: String
    var key: String
    var value: String
  }

  func run() throws {
    do {
      let store = try openForReading(file)
      try store.read { txn in
        let names = try keyspace.map { [$0] } ?? txn.keyspaceNames()
        for name in names {
          let cursor = try txn.keyspace(name).cursor()
          if !output.json { print("[\(name)]") }
          while let (key, value) = try cursor.next() {
            if output.json {
              try printJSON(Entry(keyspace: name, key: escaped(key), value: escaped(value)))
            } else {
              print("\(escaped(key)) = \(escaped(value))")
            }
          }
        }
      }
    } catch let error as ExitCode {
      throw error
    } catch {
      try fail(error, json: output.json)
    }
  }
}

struct Compact: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Write a compacted copy of FILE to OUT (which must not exist).")
  @Argument(help: "The Shoal file.") var file: String
  @Argument(help: "The new file.") var out: String
  @OptionGroup var output: Output

  func run() throws {
    do {
      let store = try openForReading(file)
      let before = try FileManager.default.attributesOfItem(atPath: file)[.size] as? UInt64 ?? 0
      do {
        try store.writeCopy(toPath: out)
      } catch {
        // No partial copy is left behind (writeCopy created `out`: it refuses an existing file).
        if (error as? StorageError) != .fileExists(path: out) { _ = unlink(out) }
        throw error
      }
      _ = Store.copyOwnership(of: file, to: out)
      let after = try FileManager.default.attributesOfItem(atPath: out)[.size] as? UInt64 ?? 0
      if output.json {
        try printJSON(["file": file, "out": out, "bytesBefore": "\(before)", "bytesAfter": "\(after)"])
      } else {
        print("compacted \(file) (\(before) bytes) into \(out) (\(after) bytes)")
      }
    } catch {
      try fail(error, json: output.json)
    }
  }
}
