import Crypto
import Foundation
import Testing

@testable import ShoalStorage

/// 64 random bytes: an encryption key.
func randomKey() -> [UInt8] {
  var generator = SystemRandomNumberGenerator()
  return (0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) }
}

/// An encrypted store at `path` whose keyspace "k" holds `count` text values of `length` bytes,
/// keys "k0"…
@discardableResult
func makeEncryptedStore(at path: String, key: [UInt8], count: Int, length: Int) throws -> Store {
  let store = try Store.open(path: path, options: StoreOptions(encryptionKey: key))
  try store.write { txn in
    try txn.createKeyspace("k")
    for i in 0..<count { try txn.put(textValue(i, length: length), forKey: bytes("k\(i)"), in: "k") }
  }
  return store
}

/// Encrypted files: blocks sealed with AES-256-GCM, records with an HMAC, the key checked
/// by the header, each mismatch of key and file its own error.
@Suite struct EncryptionTests {
  @Test func anEncryptedStoreReopensWithItsKeyAndHoldsNoPlaintext() throws {
    let dir = TemporaryDirectory()
    let path = dir.file()
    let key = randomKey()
    do {
      let store = try Store.open(path: path, options: StoreOptions(encryptionKey: key))
      try store.write { txn in
        try txn.createKeyspace("k")
        // Text LZ4 compresses well, and a blob of its own: both must be unreadable on disk.
        for i in 0..<2000 { try txn.put(Array("secret-\(i)-salmon-river".utf8), forKey: bytes("k\(i)"), in: "k") }
        try txn.put(Array(repeating: UInt8(ascii: "z"), count: 100_000), forKey: bytes("blob"), in: "k")
      }
      for i in 0..<20 { try store.write { try $0.put(bytes("update \(i)"), forKey: bytes("k\(i)"), in: "k") } }
      store.close()
    }
    let raw = try Data(contentsOf: URL(fileURLWithPath: path))
    #expect(raw.range(of: Data("salmon-river".utf8)) == nil)
    #expect(raw.range(of: Data("update 1".utf8)) == nil)
    #expect(raw.range(of: Data(repeating: UInt8(ascii: "z"), count: 64)) == nil)

    let store = try Store.open(path: path, options: StoreOptions(encryptionKey: key))
    let (k5, k1999, blob) = try store.read { txn in
      (try txn.get(bytes("k5"), in: "k"), try txn.get(bytes("k1999"), in: "k"), try txn.get(bytes("blob"), in: "k"))
    }
    #expect(k5 == bytes("update 5"))
    #expect(k1999 == Array("secret-1999-salmon-river".utf8))
    #expect(blob?.count == 100_000)
    #expect(store.verify().isOK)
  }

  @Test func aWrongOrMissingKeyOrAKeyForAPlainFileIsItsOwnError() throws {
    let dir = TemporaryDirectory()
    let encrypted = dir.file("e.shoal")
    let plain = dir.file("p.shoal")
    let key = randomKey()
    try Store.open(path: encrypted, options: StoreOptions(encryptionKey: key)).write { try $0.createKeyspace("k") }
    try Store.open(path: plain).write { try $0.createKeyspace("k") }

    let size = fileSize(encrypted)
    #expect(throws: StorageError.wrongEncryptionKey(path: encrypted, fileSize: size)) {
      try Store.open(path: encrypted, options: StoreOptions(encryptionKey: randomKey()))
    }
    #expect(throws: StorageError.encryptionKeyRequired(path: encrypted)) { try Store.open(path: encrypted) }
    #expect(throws: StorageError.notEncrypted(path: plain, fileSize: fileSize(plain))) {
      try Store.open(path: plain, options: StoreOptions(encryptionKey: key))
    }
    // A key of another length is refused before anything is read or created.
    let fresh = dir.file("new.shoal")
    #expect(throws: StorageError.self) { try Store.open(path: fresh, options: StoreOptions(encryptionKey: [1, 2, 3])) }
    // Nothing of either file changed.
    #expect(try Store.open(path: encrypted, options: StoreOptions(encryptionKey: key)).verify().isOK)
    #expect(try Store.open(path: plain).verify().isOK)
  }

  @Test func aFlippedByteAnywhereIsATypedErrorNeverWrongData() throws {
    let dir = TemporaryDirectory()
    let path = dir.file()
    let key = randomKey()
    try makeEncryptedStore(at: path, key: key, count: 500, length: 300).close()
    let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    var generator = SystemRandomNumberGenerator()
    // Every data-area block is sealed: a flipped bit in one fails its tag.
    for _ in 0..<60 {
      var damaged = original
      let at = Int.random(in: Int(FileLayout.dataStart)..<damaged.count, using: &generator)
      damaged[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
      let copy = dir.file("copy-\(at).shoal")
      try Data(damaged).write(to: URL(fileURLWithPath: copy))
      do {
        let store = try Store.open(path: copy, options: StoreOptions(readOnly: true, encryptionKey: key))
        // Either every value is exactly the one written, or reading fails with a typed error.
        let values = try store.read { txn in try (0..<500).map { try txn.get(bytes("k\($0)"), in: "k") } }
        #expect(values == (0..<500).map { textValue($0, length: 300) })
      } catch let error as StorageError {
        #expect(!"\(error)".isEmpty)
      }
      try? FileManager.default.removeItem(atPath: copy)
    }
  }

  @Test func aTruncatedEncryptedFileIsATypedErrorAndAnAlteredHeaderIsRefused() throws {
    let dir = TemporaryDirectory()
    let path = dir.file()
    let key = randomKey()
    try makeEncryptedStore(at: path, key: key, count: 400, length: 200).close()
    let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    for cut in [0, 100, 4096, 8192, 12_288, 12_300, original.count / 2, original.count - 1] {
      let copy = dir.file("cut-\(cut).shoal")
      try Data(original[..<cut]).write(to: URL(fileURLWithPath: copy))
      do {
        let store = try Store.open(path: copy, options: StoreOptions(readOnly: true, encryptionKey: key))
        // Opened (an earlier version was whole): every read is right or a typed error.
        let values = try store.read { txn in try (0..<400).map { try txn.get(bytes("k\($0)"), in: "k") } }
        #expect(values == (0..<400).map { textValue($0, length: 200) })
      } catch let error as StorageError {
        #expect(!"\(error)".isEmpty)
      }
    }
    // A salt changed with the header's checksum made to match: the keys derived from it fail the
    // key check, so the file is refused (as a wrong key: nothing tells the two apart).
    var tampered = original
    tampered[8 + 4 + 4 + 8 + 8 + 1] ^= 1  // the salt's first byte
    let sum = Checksum.xxh64(Array(tampered[0..<(8 + 4 + 4 + 8 + 8 + 1 + 64)]))
    withUnsafeBytes(of: sum.littleEndian) {
      for (i, b) in $0.enumerated() { tampered[8 + 4 + 4 + 8 + 8 + 1 + 64 + i] = b }
    }
    let copy = dir.file("tampered.shoal")
    try Data(tampered).write(to: URL(fileURLWithPath: copy))
    #expect(throws: StorageError.wrongEncryptionKey(path: copy, fileSize: UInt64(tampered.count))) {
      try Store.open(path: copy, options: StoreOptions(readOnly: true, encryptionKey: key))
    }
    // A header byte changed without fixing the checksum: a damaged header, not a key problem.
    var flipped = original
    flipped[30] ^= 1
    let other = dir.file("flipped.shoal")
    try Data(flipped).write(to: URL(fileURLWithPath: other))
    #expect(throws: StorageError.self) {
      try Store.open(path: other, options: StoreOptions(readOnly: true, encryptionKey: key))
    }
  }

  @Test func aSealedBlockMovedToAnotherPlaceOrVersionDoesNotOpen() throws {
    let seal = FileSeal(newFileKey: randomKey())
    var sealer = FileSeal.BlockSealer(seal)
    let content: [UInt8] = Array("a block's stored bytes".utf8)
    let sealed = try content.withUnsafeBytes { try sealer.seal($0, offset: 4096 * 3, birth: 7, granule: 128) }
    let stored = Array(sealed.block[..<sealed.storedCount])
    #expect(seal.open(stored, offset: 4096 * 3, birth: 7, checksum: sealed.checksum) == content)
    #expect(seal.open(stored, offset: 4096 * 3 + 128, birth: 7, checksum: sealed.checksum) == nil)
    #expect(seal.open(stored, offset: 4096 * 3, birth: 8, checksum: sealed.checksum) == nil)
    #expect(seal.open(stored, offset: 4096 * 3, birth: 7, checksum: sealed.checksum ^ 1) == nil)
    // Another file's key (another salt) does not open it either.
    #expect(
      FileSeal(key: randomKey(), salt: seal.salt).open(stored, offset: 4096 * 3, birth: 7, checksum: sealed.checksum)
        == nil)
    // Two blocks of one transaction never share a nonce; two transactions never share a key.
    let second = try content.withUnsafeBytes { try sealer.seal($0, offset: 4096 * 3, birth: 7, granule: 128) }
    #expect(Array(second.block[16..<20]) != Array(sealed.block[16..<20]))
    var other = FileSeal.BlockSealer(seal)
    let third = try content.withUnsafeBytes { try other.seal($0, offset: 4096 * 3, birth: 7, granule: 128) }
    #expect(Array(third.block[0..<16]) != Array(sealed.block[0..<16]))
    #expect(third.block[20..<(20 + content.count)] != sealed.block[20..<(20 + content.count)])
  }

  @Test func compactionKeepsChangesOrRemovesTheKey() throws {
    let dir = TemporaryDirectory()
    let path = dir.file()
    let key = randomKey()
    let store = try makeEncryptedStore(at: path, key: key, count: 300, length: 100)
    let newKey = randomKey()
    try store.writeCopy(toPath: dir.file("same.shoal"), encryptionKey: key)
    try store.writeCopy(toPath: dir.file("other.shoal"), encryptionKey: newKey)
    try store.writeCopy(toPath: dir.file("plain.shoal"))
    for (name, copyKey) in [("same.shoal", key), ("other.shoal", newKey), ("plain.shoal", nil)] {
      let copy = try Store.open(path: dir.file(name), options: StoreOptions(encryptionKey: copyKey))
      #expect(try copy.read { try $0.get(bytes("k299"), in: "k") } == textValue(299, length: 100))
      #expect(copy.verify().isOK)
    }
    #expect(throws: StorageError.self) {
      try Store.open(path: dir.file("other.shoal"), options: StoreOptions(encryptionKey: key))
    }
    // In place, the compacted file keeps its key.
    #expect(try store.compactIfAlone { _, _ in true })
    let reopened = try Store.open(path: path, options: StoreOptions(encryptionKey: key))
    #expect(try reopened.read { try $0.get(bytes("k0"), in: "k") } == textValue(0, length: 100))
    #expect(throws: StorageError.encryptionKeyRequired(path: path)) { try Store.open(path: path) }
  }

  /// FileSeal computes a transaction's block key and a record's code from HMACs keyed once;
  /// they must be the bytes HKDF-Expand and HMAC give, derived here from the user's key as the
  /// file format says, or files written before could no longer be opened.
  @Test func transactionKeysAndRecordCodesAreTheFormatsHKDFAndHMAC() throws {
    let key = randomKey()
    let salt = Array(randomKey().prefix(FileSeal.saltSize))
    let seal = FileSeal(key: key, salt: salt)
    func derive(_ info: String) -> SymmetricKey {
      HKDF<SHA256>.deriveKey(
        inputKeyMaterial: SymmetricKey(data: key), salt: salt, info: Array(info.utf8), outputByteCount: 32)
    }
    let blockKey = derive("shoal block key v1")
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<20 {
      let transaction = FileSeal.TransactionSalt(high: generator.next(), low: generator.next())
      var info = Array("shoal transaction key v1".utf8)
      withUnsafeBytes(of: transaction.high.littleEndian) { info += $0 }
      withUnsafeBytes(of: transaction.low.littleEndian) { info += $0 }
      let expected = blockKey.withUnsafeBytes {
        HKDF<SHA256>.expand(pseudoRandomKey: $0, info: info, outputByteCount: 32)
      }
      #expect(seal.subkey(transaction) == expected)
    }
    for length in [0, 1, 63, 64, 65, 168, 1000] {
      let record = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
      let code = HMAC<SHA256>.authenticationCode(for: record, using: derive("shoal record key v1"))
      let expected = code.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
      #expect(FileSeal.recordSum(record, seal: seal) == expected)
      // A second time, from the cache of recent codes.
      #expect(FileSeal.recordSum(record, seal: seal) == expected)
    }
  }

  @Test func twoProcessesShareAnEncryptedFile() throws {
    let dir = TemporaryDirectory()
    let path = dir.file()
    let key = randomKey()
    let store = try Store.open(path: path, options: StoreOptions(encryptionKey: key))
    try store.write { try $0.createKeyspace("k") }
    // A second store of this process joins the session as another process would: it reads
    // the header, checks the key and decodes the meta in the lock file with it.
    let second = try Store.open(path: path, options: StoreOptions(encryptionKey: key))
    try second.write { try $0.put(bytes("from second"), forKey: bytes("a"), in: "k") }
    #expect(try store.read { try $0.get(bytes("a"), in: "k") } == bytes("from second"))
    #expect(throws: StorageError.self) { try Store.open(path: path, options: StoreOptions(encryptionKey: randomKey())) }
  }
}
