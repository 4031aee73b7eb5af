import Foundation
import Testing

@testable import ShoalStorage

@Suite struct FileErrorTests {
  @Test func aFileThatIsNotShoalIsRejected() throws {
    let dir = TemporaryDirectory()
    try Data(String(repeating: "hello, this is a text file\n", count: 1000).utf8).write(
      to: URL(fileURLWithPath: dir.file()))
    #expect(throws: StorageError.notAShoalFile(path: dir.file())) { try Store.open(path: dir.file()) }
  }

  @Test func aNewerFormatVersionIsRejected() throws {
    let dir = TemporaryDirectory()
    _ = try Store.open(path: dir.file())
    var image = try Array(Data(contentsOf: URL(fileURLWithPath: dir.file())))
    // Version 2, with a valid header checksum: a file from a future Shoal.
    image[8] = 2
    let sum = Checksum.xxh64(Array(image[0..<32]))
    withUnsafeBytes(of: sum.littleEndian) { for (i, b) in $0.enumerated() { image[32 + i] = b } }
    try Data(image).write(to: URL(fileURLWithPath: dir.file()))
    #expect(throws: StorageError.unsupportedFormatVersion(path: dir.file(), found: 2, supported: 1)) {
      try Store.open(path: dir.file())
    }
  }

  @Test func aTruncatedFileIsRejected() throws {
    let dir = TemporaryDirectory()
    do {
      let store = try Store.open(path: dir.file())
      try store.write { txn in
        try txn.createKeyspace("k")
        for i in 0..<2000 { try txn.put(textValue(i, length: 200), forKey: bytes("k\(i)"), in: "k") }
      }
      try store.write { try $0.put([1], forKey: [1], in: "k") }
    }
    // Cut into the data of both meta records: no version is whole.
    let full = fileSize(dir.file())
    truncate(dir.file(), off_t(full / 2))
    do {
      _ = try Store.open(path: dir.file())
      Issue.record("a truncated file opened")
    } catch let error as StorageError {
      guard case .truncated(_, let size, _) = error, size == full / 2 else {
        Issue.record("expected .truncated, got \(error)")
        return
      }
    }
    truncate(dir.file(), 5000)
    #expect(throws: StorageError.truncated(path: dir.file(), size: 5000, expected: FileLayout.dataStart)) {
      try Store.open(path: dir.file())
    }
  }

  @Test func directoriesMissingFilesAndForbiddenPathsAreClearErrors() throws {
    let dir = TemporaryDirectory()
    #expect(throws: StorageError.isDirectory(path: dir.path)) { try Store.open(path: dir.path) }
    let missing = dir.file("nope/data.shoal")
    #expect(throws: StorageError.fileNotFound(path: missing)) { try Store.open(path: missing) }
    #expect(throws: StorageError.fileNotFound(path: dir.file("absent.shoal"))) {
      try Store.open(path: dir.file("absent.shoal"), options: StoreOptions(readOnly: true))
    }
    // sysfs refuses to create files, even for root.
    #expect(throws: StorageError.permissionDenied(path: "/sys/shoal-test.shoal", operation: "open for writing")) {
      try Store.open(path: "/sys/shoal-test.shoal")
    }
    let message = StorageError.permissionDenied(path: "/x", operation: "open").description
    #expect(message.contains("Permission denied") && message.contains("permissions"))
  }

  @Test func aReadOnlyStoreRefusesToWrite() throws {
    let dir = TemporaryDirectory()
    _ = try Store.open(path: dir.file())
    let store = try Store.open(path: dir.file(), options: StoreOptions(readOnly: true))
    #expect(throws: StorageError.readOnly(path: dir.file())) { try store.beginWrite() }
  }

  @Test func aTornNewestMetaFallsBackAndBothTornIsCorrupt() throws {
    let file = MemoryFile()
    do {
      let store = try Store(file: file)
      try store.write { txn in
        try txn.createKeyspace("k")
        try txn.put(bytes("one"), forKey: bytes("v"), in: "k")
      }
      try store.write { try $0.put(bytes("two"), forKey: bytes("v"), in: "k") }
    }
    var image = file.contents
    // Version 2 is in slot 0 (version 0 was there, 1 went to slot 1, 2 back to slot 0).
    image[Int(FileLayout.metaOffset(slot: 0)) + 20] ^= 0x40
    let fellBack = try Store(file: MemoryFile(contents: image))
    #expect(fellBack.latestVersion == 1)
    #expect(try fellBack.read { try $0.get(bytes("v"), in: "k") } == bytes("one"))
    #expect(fellBack.verify().isOK)
    image[Int(FileLayout.metaOffset(slot: 1)) + 20] ^= 0x40
    #expect(
      throws: StorageError.corrupt(
        path: "<memory>", offset: FileLayout.headerSize, reason: "neither meta record is valid")
    ) {
      try Store(file: MemoryFile(contents: image))
    }
  }

  /// The path to the first (or last) leaf of keyspace "k".
  func leaf(_ store: Store, last: Bool) throws -> BlockPointer {
    try store.read { txn throws -> BlockPointer in
      var pointer = try txn.keyspace("k").entry.root
      var node = try store.blocks.node(pointer, limit: txn.meta.fileEnd)
      while !node.isLeaf {
        pointer = node.child(at: last ? node.count - 1 : 0).0
        node = try store.blocks.node(pointer, limit: txn.meta.fileEnd)
      }
      return pointer
    }
  }

  @Test func aDamagedBlockOfTheNewestCommitIsTreatedAsAnIncompleteCommit() throws {
    let file = MemoryFile()
    let store = try Store(file: file)
    try store.write { txn in
      try txn.createKeyspace("k")
      for i in 0..<3000 { try txn.put(textValue(i, length: 100), forKey: bytes("key\(i)"), in: "k") }
    }
    try store.write { try $0.put([1], forKey: [1], in: "k") }  // lands in the first leaf
    let newest = try leaf(store, last: false)
    #expect(newest.birth == 2)
    var image = file.contents
    image[Int(newest.offset) + 5] ^= 0xFF
    // One fsync covers a commit's blocks and meta, so a newest-commit block that does not
    // check out is what a power loss leaves: open uses the previous version and says so.
    let reopened = try Store(file: MemoryFile(contents: image))
    #expect(reopened.latestVersion == 1)
    #expect(reopened.recoveredFromVersion == 2)
    #expect(try reopened.read { try $0.get([1], in: "k") } == nil)
    #expect(reopened.verify().isOK)
  }

  @Test func aDamagedBlockIsATypedErrorNamingItsOffset() throws {
    let file = MemoryFile()
    let store = try Store(file: file)
    try store.write { txn in
      try txn.createKeyspace("k")
      for i in 0..<3000 { try txn.put(textValue(i, length: 100), forKey: bytes("key\(i)"), in: "k") }
    }
    try store.write { try $0.put([1], forKey: [1], in: "k") }
    // Damage the last leaf, written by the first commit, in a copy of the file.
    let leaf = try leaf(store, last: true)
    #expect(leaf.birth == 1)
    var image = file.contents
    image[Int(leaf.offset) + 5] ^= 0xFF
    let damaged = try Store(file: MemoryFile(contents: image))
    #expect(throws: StorageError.corrupt(path: "<memory>", offset: leaf.offset, reason: "checksum mismatch")) {
      try damaged.read { txn in _ = try scan(txn.keyspace("k").cursor()) }
    }
    let report = damaged.verify()
    #expect(!report.isOK)
    #expect(report.problems.contains { $0.contains("offset \(leaf.offset)") })
  }
}
