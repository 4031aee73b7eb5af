import ArgumentParser
import Foundation
import ShoalStorage

@main
struct ShoalCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "shoal",
    abstract:
      "Inspect, verify, dump and compact Shoal files; watch commits; print recorded events; print a file's sync schema.",
    subcommands: [
      Info.self, Verify.self, Dump.self, Compact.self, Watch.self, EventsCommand.self, SyncSchemaCommand.self,
    ])
}

struct Output: ParsableArguments {
  @Flag(help: "Print JSON instead of text.") var json = false
}

func printJSON<T: Encodable>(_ value: T) throws {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys]
  print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// The key of an encrypted file, read from a file.
struct KeyOption: ParsableArguments {
  @Option(
    name: .customLong("key-file"),
    help: "The encryption key of an encrypted file: a file of 64 raw bytes or 128 hex characters.")
  var keyFile: String?

  /// The key, nil without `--key-file`; throws for a file that holds no key of either form.
  func key() throws -> [UInt8]? {
    guard let keyFile else { return nil }
    return try readKey(keyFile)
  }
}

/// A key from `path`: exactly 64 bytes, or 128 hex digits (surrounding white space ignored).
func readKey(_ path: String) throws -> [UInt8] {
  guard let data = FileManager.default.contents(atPath: path) else {
    throw ValidationError("Cannot read the key file '\(path)'.")
  }
  if data.count == 64 { return [UInt8](data) }
  let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  let digits = Array(text.utf8)
  var key: [UInt8] = []
  if digits.count == 128 {
    for i in stride(from: 0, to: 128, by: 2) {
      guard let byte = UInt8(String(decoding: digits[i..<(i + 2)], as: UTF8.self), radix: 16) else { break }
      key.append(byte)
    }
  }
  guard key.count == 64 else {
    throw ValidationError(
      "The key file '\(path)' holds \(data.count) bytes: give 64 raw bytes or 128 hex characters.")
  }
  return key
}

/// Opens a file for inspection: read-only, never creating it, with its key when it is encrypted.
func openForReading(_ path: String, key: [UInt8]? = nil) throws -> Store {
  try Store.open(path: path, options: StoreOptions(readOnly: true, create: false, encryptionKey: key))
}

/// Prints an error the way every command does and exits with status 1.
func fail(_ error: Error, json: Bool) throws -> Never {
  var message = (error as? StorageError)?.description ?? "\(error)"
  switch error as? StorageError {
  case .encryptionKeyRequired?: message += " Give it with --key-file PATH (64 raw bytes or 128 hex characters)."
  case .wrongEncryptionKey?: message += " Check the file given with --key-file."
  case .notEncrypted?: message += " Leave out --key-file."
  default: break
  }
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
  @OptionGroup var key: KeyOption
  @OptionGroup var output: Output

  func run() throws {
    let info: FileInfo
    func mib(_ n: UInt64) -> String { String(format: "%.2f MiB", Double(n) / 1_048_576) }
    do {
      info = try openForReading(file, key: key.key()).info()
    } catch StorageError.encryptionKeyRequired {
      // Without the key, only what the header says is known.
      let header: PublicHeader
      do { header = try Store.publicHeader(path: file) } catch { try fail(error, json: output.json) }
      if output.json { return try printJSON(header) }
      print("file:              \(file)")
      print("format version:    \(header.formatVersion)")
      print("encrypted:         yes (AES-256-GCM); give --key-file to see the rest")
      print("file size:         \(header.fileSize) bytes (\(mib(header.fileSize)))")
      return
    } catch { try fail(error, json: output.json) }
    if output.json { return try printJSON(info) }
    print("file:              \(info.path)")
    print("format version:    \(info.formatVersion)")
    print("encrypted:         \(info.encrypted ? "yes (AES-256-GCM)" : "no")")
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
  @OptionGroup var key: KeyOption
  @OptionGroup var output: Output

  func run() throws {
    let report: VerifyReport
    let store: Store
    do {
      store = try openForReading(file, key: key.key())
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
  @OptionGroup var key: KeyOption
  @OptionGroup var output: Output

  struct Entry: Encodable {
    var keyspace: String
    var key: String
    var value: String
  }

  func run() throws {
    do {
      let store = try openForReading(file, key: key.key())
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
    abstract:
      "Write a compacted copy of FILE to OUT (which must not exist), encrypted with the same key, another (--out-key-file) or none (--decrypt)."
  )
  @Argument(help: "The Shoal file.") var file: String
  @Argument(help: "The new file.") var out: String
  @OptionGroup var key: KeyOption
  @Option(
    name: .customLong("out-key-file"),
    help: "Encrypt the copy with this key (64 raw bytes or 128 hex characters) instead of FILE's.")
  var outKeyFile: String?
  @Flag(help: "Write the copy unencrypted.") var decrypt = false
  @OptionGroup var output: Output

  func run() throws {
    do {
      if decrypt, outKeyFile != nil { throw ValidationError("Give --out-key-file or --decrypt, not both.") }
      let sourceKey = try key.key()
      let store = try openForReading(file, key: sourceKey)
      let outKey = decrypt ? nil : try outKeyFile.map(readKey) ?? sourceKey
      let before = try FileManager.default.attributesOfItem(atPath: file)[.size] as? UInt64 ?? 0
      do {
        try store.writeCopy(toPath: out, encryptionKey: outKey)
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
