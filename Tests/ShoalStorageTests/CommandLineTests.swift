import Foundation
import Testing

@testable import ShoalStorage

/// The `shoal` command, run as a real process on real files.
@Suite struct CommandLineTests {
  static var shoal: URL { Child.executable.deletingLastPathComponent().appendingPathComponent("shoal") }

  /// Runs `shoal` with `arguments`, as the user and group `user` (through `setpriv`) when given;
  /// returns its exit status and standard output.
  func run(_ arguments: [String], as user: (uid: UInt32, gid: UInt32)? = nil) throws -> (Int32, String) {
    let process = Process()
    if let user {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
      process.arguments =
        ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", CommandLineTests.shoal.path] + arguments
    } else {
      process.executableURL = CommandLineTests.shoal
      process.arguments = arguments
    }
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
  }

  func makeFile(_ path: String) throws {
    let store = try Store.open(path: path)
    try store.write { txn in
      try txn.createKeyspace("fish")
      for i in 0..<500 { try txn.put(textValue(i, length: 200), forKey: bytes("fish-\(i)"), in: "fish") }
    }
  }

  @Test func watchPrintsEachCommitOfAnotherProcess() throws {
    let dir = TemporaryDirectory()
    try makeFile(dir.file())
    let store = try Store.open(path: dir.file())
    let process = Process()
    process.executableURL = CommandLineTests.shoal
    process.arguments = ["watch", dir.file(), "--count", "2", "--timeout", "60"]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    // Wait for its first line: from then on it sees every commit.
    var first = Data()
    while !first.contains(10) {
      let chunk = out.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      first.append(chunk)
    }
    #expect(String(decoding: first, as: UTF8.self).hasPrefix("watching"))
    try store.write { txn in
      try txn.put(bytes("new"), forKey: bytes("fish-new"), in: "fish")
      try txn.put(bytes("changed"), forKey: bytes("fish-1"), in: "fish")
    }
    try store.write { txn in _ = try txn.delete(bytes("fish-2"), in: "fish") }
    let rest = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    let text = String(decoding: first, as: UTF8.self) + rest
    #expect(text.contains(": fish: 1 inserted, 1 updated\n"))
    #expect(text.contains(": fish: 1 deleted\n"))
  }

  @Test func infoVerifyDumpAndCompact() throws {
    let dir = TemporaryDirectory()
    try makeFile(dir.file())
    let (infoStatus, infoText) = try run(["info", "--json", dir.file()])
    #expect(infoStatus == 0)
    let info = try JSONDecoder().decode(FileInfo.self, from: Data(infoText.utf8))
    #expect(info.version == 1)
    #expect(info.keyspaces.map(\.name) == ["fish"])
    #expect(info.keyspaces.map(\.entries) == [500])
    // The keyspace's bytes are the file's bytes less the catalog, the history and the free list.
    let fish = info.keyspaces[0]
    #expect(fish.storedBytes > 0 && fish.storedBytes + info.historyStoredBytes <= info.storedBytes)
    #expect(fish.uncompressedBytes > fish.storedBytes)
    #expect(info.compressionRatio > 1.5)
    #expect(info.formatVersion == 3)
    #expect(try run(["info", dir.file()]).1.contains("compression ratio:"))

    #expect(try run(["verify", dir.file()]) == (0, "ok\n"))
    let dump = try run(["dump", "--keyspace", "fish", dir.file()])
    #expect(dump.0 == 0)
    #expect(dump.1.contains("fish-42 = "))
    #expect(try run(["dump", "--json", dir.file()]).1.split(separator: "\n").count == 500)

    let out = dir.file("compact.shoal")
    #expect(try run(["compact", dir.file(), out]).0 == 0)
    #expect(try run(["verify", "--json", out]).1.contains("\"ok\":true"))
    #expect(try run(["compact", dir.file(), out]).0 == 1, "refuses to overwrite")
  }

  @Test func toolsTakeAKeyFileAndWithoutItPrintOnlyTheHeader() throws {
    let dir = TemporaryDirectory()
    let key = randomKey()
    let store = try Store.open(path: dir.file(), options: StoreOptions(encryptionKey: key))
    try store.write { txn in
      try txn.createKeyspace("fish")
      for i in 0..<200 { try txn.put(textValue(i, length: 200), forKey: bytes("fish-\(i)"), in: "fish") }
    }
    store.close()
    // The key as 64 raw bytes, or as 128 hex characters with a newline.
    let raw = dir.file("raw.key")
    let hex = dir.file("hex.key")
    try Data(key).write(to: URL(fileURLWithPath: raw))
    try Data((key.map { String(format: "%02x", $0) }.joined() + "\n").utf8).write(to: URL(fileURLWithPath: hex))

    let (status, text) = try run(["info", dir.file()])
    #expect(status == 0)
    #expect(text.contains("format version:    4"))
    #expect(text.contains("encrypted:         yes"))
    #expect(!text.contains("keyspaces"))
    let header = try JSONDecoder().decode(
      PublicHeader.self, from: Data(try run(["info", "--json", dir.file()]).1.utf8))
    #expect(header.encrypted && header.formatVersion == 4)

    let info = try JSONDecoder().decode(
      FileInfo.self, from: Data(try run(["info", "--json", "--key-file", raw, dir.file()]).1.utf8))
    #expect(info.encrypted && info.keyspaces.map(\.entries) == [200])
    #expect(try run(["verify", "--key-file", hex, dir.file()]) == (0, "ok\n"))
    #expect(try run(["verify", dir.file()]).0 == 1)
    #expect(try run(["verify", "--key-file", dir.file("raw.key"), dir.file()]).0 == 0)
    #expect(try run(["dump", "--key-file", raw, dir.file()]).1.contains("fish-42 = "))
    let wrong = dir.file("wrong.key")
    try Data(randomKey()).write(to: URL(fileURLWithPath: wrong))
    #expect(try run(["dump", "--key-file", wrong, dir.file()]).0 == 1)
    let short = dir.file("short.key")
    try Data([1, 2, 3]).write(to: URL(fileURLWithPath: short))
    #expect(try run(["verify", "--key-file", short, dir.file()]).0 != 0)

    // Compaction keeps the key, takes another, or writes the copy in the clear.
    #expect(try run(["compact", "--key-file", raw, dir.file(), dir.file("same.shoal")]).0 == 0)
    #expect(try run(["verify", "--key-file", raw, dir.file("same.shoal")]) == (0, "ok\n"))
    #expect(
      try run(["compact", "--key-file", raw, "--out-key-file", wrong, dir.file(), dir.file("other.shoal")]).0 == 0)
    #expect(try run(["verify", "--key-file", wrong, dir.file("other.shoal")]) == (0, "ok\n"))
    #expect(try run(["compact", "--key-file", raw, "--decrypt", dir.file(), dir.file("plain.shoal")]).0 == 0)
    #expect(try run(["verify", dir.file("plain.shoal")]) == (0, "ok\n"))
  }

  @Test func verifyFailsWhenTheNewestCommitWasLost() throws {
    let dir = TemporaryDirectory()
    do {
      let store = try Store.open(path: dir.file())
      try store.write { try $0.createKeyspace("fish") }
    }
    // Cut to the meta records: the newest commit's blocks are gone, the version before opens.
    #expect(truncate(dir.file(), off_t(FileLayout.dataStart)) == 0)
    let (status, text) = try run(["verify", dir.file()])
    #expect(status == 1)
    #expect(text.contains("the newest commit (version"))
  }

  @Test func verifyNamesEachProblemAndFails() throws {
    let dir = TemporaryDirectory()
    try makeFile(dir.file())
    let store = try Store.open(path: dir.file())
    let root = try store.read { try $0.keyspace("fish").entry.root }
    var node = try store.blocks.node(root, limit: store.latestMeta.fileEnd)
    var leaf = root
    while !node.isLeaf {
      leaf = node.child(at: 0).0
      node = try store.blocks.node(leaf, limit: store.latestMeta.fileEnd)
    }
    // A second commit that writes only the last leaf: the first leaf then belongs to an
    // older commit, so damaging it is corruption (not an incomplete newest commit).
    try store.write { try $0.put([1], forKey: bytes("zzz"), in: "fish") }
    let file = try PosixFile(path: dir.file(), create: false, readOnly: false)
    var byte = try file.read(count: 1, at: leaf.offset + 10)
    byte[0] ^= 0xFF
    try file.write(byte, at: leaf.offset + 10)
    let (status, text) = try run(["verify", dir.file()])
    #expect(status == 1)
    #expect(text.contains("corrupt at offset \(leaf.offset)"))
    let (notShoal, _) = try run(["info", "/etc/hostname"])
    #expect(notShoal == 1)
  }
}
