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
    // The next format version (after 4, encrypted files), with a valid header checksum: a file
    // from a future Shoal.
    image[8] = UInt8(FileLayout.encryptedFormatVersion + 1)
    let sum = Checksum.xxh64(Array(image[0..<32]))
    withUnsafeBytes(of: sum.littleEndian) { for (i, b) in $0.enumerated() { image[32 + i] = b } }
    try Data(image).write(to: URL(fileURLWithPath: dir.file()))
    #expect(
      throws: StorageError.unsupportedFormatVersion(
        path: dir.file(), found: FileLayout.encryptedFormatVersion + 1, supported: FileLayout.formatVersion)
    ) {
      try Store.open(path: dir.file())
    }
  }

  @Test func aTruncatedFileIsRejected() throws {
    let dir = TemporaryDirectory()
    do {
      let store = try makeTextStore(at: dir.file())
      // Past an anchor: version 0's meta slot is overwritten.
      for i in 0..<10 { try store.write { try $0.put([UInt8(i)], forKey: [1], in: "k") } }
    }
    // Cut into the data of the newest commit and of the one before it: neither is whole.
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

  @Test func aTornNewestCommitFallsBackAndBothAnchorsTornIsCorrupt() throws {
    let file = MemoryFile()
    let (first, second): (Meta, Meta)
    let leaf: BlockPointer
    do {
      let store = try Store(file: file)
      try store.write { txn in
        try txn.createKeyspace("k")
        try txn.put(bytes("one"), forKey: bytes("v"), in: "k")
      }
      first = store.latestMeta
      try store.write { try $0.put(bytes("two"), forKey: bytes("v"), in: "k") }
      second = store.latestMeta
      leaf = try store.read { try $0.keyspace("k").entry.root }
    }
    // Version 0 is in meta slot 0; version 1, whose predecessor reserved nothing, is an anchor
    // in slot 1; version 2 is a record at the place version 1 reserved for it.
    #expect(first.anchorSlot == 1 && first.next != 0 && second.anchorSlot == 1 && leaf.birth == 2)
    let image = file.contents
    func reopened(_ damage: (inout [UInt8]) -> Void) throws -> Store {
      var copy = image
      damage(&copy)
      return try Store(file: MemoryFile(contents: copy))
    }
    // The record of version 2 lost (its sector never written): the chain ends at version 1.
    let noRecord = try reopened { for i in 0..<Meta.encodedSize { $0[Int(first.next) + i] = 0 } }
    #expect(noRecord.latestVersion == 1)
    #expect(try noRecord.read { try $0.get(bytes("v"), in: "k") } == bytes("one"))
    #expect(noRecord.verify().isOK)
    // Its bytes changed after it was written (no power loss does that): a typed error naming
    // it, not a silent return to version 1.
    #expect(
      throws: StorageError.corrupt(
        path: "<memory>", offset: first.next, reason: "the commit record of version 2 is damaged")
    ) {
      try reopened { $0[Int(first.next) + 20] ^= 0x40 }
    }
    // Its record whole but a block of it torn: version 1, and the open says what it skipped.
    let tornBlock = try reopened { $0[Int(leaf.offset) + 3] ^= 0x40 }
    #expect(tornBlock.latestVersion == 1 && tornBlock.recoveredFromVersion == 2)
    #expect(try tornBlock.read { try $0.get(bytes("v"), in: "k") } == bytes("one"))
    #expect(tornBlock.verify().isOK)
    // A commit on top overwrites the torn record; the file opens at it.
    try tornBlock.write { try $0.put(bytes("three"), forKey: bytes("v"), in: "k") }
    #expect(tornBlock.verify().isOK)
    // Both anchors torn: nothing to start from.
    #expect(
      throws: StorageError.corrupt(
        path: "<memory>", offset: FileLayout.headerSize, reason: "neither meta record is valid")
    ) {
      try reopened {
        $0[Int(FileLayout.metaOffset(slot: 0)) + 20] ^= 0x40
        $0[Int(FileLayout.metaOffset(slot: 1)) + 20] ^= 0x40
      }
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
