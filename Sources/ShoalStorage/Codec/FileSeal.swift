import Crypto
import Synchronization

/// The keys of an encrypted file, derived from the user's 64-byte key and the file's random
/// salt, and the sealing and opening of its blocks and records with them.
///
/// - Blocks (nodes, blobs, change records, the catalog, the free-space list) are compressed
///   first, then sealed with AES-256-GCM. Each write transaction draws 16 random bytes (its
///   *transaction salt*) and derives its own block key from the file's block key with HKDF;
///   its blocks are numbered from 0, and a block's nonce is its number. A nonce is therefore
///   never used twice under one key: within a transaction the numbers only grow, and two
///   transactions share a key only if they drew the same 128-bit salt. Neither offsets nor
///   versions enter the nonce, so a version written again after a crash or an abort (which
///   reuses its number and its places) still seals under a key of its own.
/// - A sealed block is `salt ‖ number ‖ ciphertext ‖ tag` (16 + 4 + n + 16 bytes); its offset
///   and birth version are the associated data, so a block copied elsewhere or replayed from
///   another version does not open. The pointer's `checksum` holds the tag's first 8 bytes,
///   so a parent still names the exact block it expects.
/// - Commit records and meta slots stay readable (they hold only offsets, lengths and
///   versions) but end in an HMAC-SHA256 (truncated to 8 bytes) in place of their XXH64.
/// - The header holds the salt and a key check (an HMAC of a fixed text under a key derived
///   for it), so a wrong key is told apart from a damaged file before anything else is read.
package final class FileSeal: Sendable {
  /// Bytes of the user's key (`StoreOptions.encryptionKey`), as RealmSwift.
  package static let keySize = 64
  /// Bytes of the file's random salt, kept in the header.
  static let saltSize = 32
  /// Bytes of the key check kept in the header.
  static let keyCheckSize = 32
  /// Bytes a sealed block adds to its stored bytes: transaction salt, number, tag.
  static let blockOverhead = transactionSaltSize + 4 + tagSize
  static let transactionSaltSize = 16
  static let tagSize = 16
  /// How many transactions' block keys a reader keeps derived.
  private static let subkeyCacheLimit = 4096

  /// The file's salt, as in its header.
  let salt: [UInt8]
  /// What the header must hold for this key (`FileLayout.encodeHeader`).
  let keyCheck: [UInt8]
  /// HMAC-SHA256 keyed with the file's block key, and with its record key: copied for each
  /// code, so the key's pads are hashed once per open file, not once per code (that keying was
  /// most of what a commit spent on HMACs).
  private let blockKeyMAC: HMAC<SHA256>
  private let recordMAC: HMAC<SHA256>
  private let subkeys = Mutex<[TransactionSalt: SymmetricKey]>([:])
  /// Record bodies whose HMAC was computed lately, by their XXH64, with the HMAC: a record is
  /// encoded and decoded many times (each write transaction reads the anchors and the chain
  /// after the published commit), and an HMAC costs a microsecond or two. A hit compares the
  /// whole body, so a forged body never borrows another's code.
  private let recordSums = Mutex<[UInt64: (body: [UInt8], sum: UInt64)]>([:])
  private static let recordSumCacheLimit = 256

  struct TransactionSalt: Hashable {
    var high: UInt64
    var low: UInt64
  }

  /// The keys of a file with `salt`, from the user's `key` (exactly `keySize` bytes).
  init(key: [UInt8], salt: [UInt8]) {
    let master = SymmetricKey(data: key)
    func derive(_ info: String) -> SymmetricKey {
      HKDF<SHA256>.deriveKey(inputKeyMaterial: master, salt: salt, info: Array(info.utf8), outputByteCount: 32)
    }
    self.salt = salt
    self.blockKeyMAC = HMAC<SHA256>(key: derive("shoal block key v1"))
    self.recordMAC = HMAC<SHA256>(key: derive("shoal record key v1"))
    self.keyCheck = Array(
      HMAC<SHA256>.authenticationCode(for: Array("shoal key check v1".utf8), using: derive("shoal key check v1")))
  }

  /// The keys of a new file: a fresh random salt.
  convenience init(newFileKey key: [UInt8]) {
    var generator = SystemRandomNumberGenerator()
    self.init(key: key, salt: (0..<FileSeal.saltSize).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
  }

  /// Checks the user's key: nil unless it is exactly `keySize` bytes.
  static func validated(_ key: [UInt8]?) throws -> [UInt8]? {
    guard let key else { return nil }
    guard key.count == keySize else {
      throw StorageError.invalidArgument(
        "An encryption key must be exactly \(keySize) bytes long (got \(key.count)). Generate one with 64 random bytes."
      )
    }
    return key
  }

  // MARK: Records

  /// The 8 bytes ending a commit record or meta slot: XXH64 for a plain file, a truncated
  /// HMAC-SHA256 under the record key for an encrypted one.
  static func recordSum(_ bytes: [UInt8], seal: FileSeal?) -> UInt64 {
    let hash = Checksum.xxh64(bytes)
    guard let seal else { return hash }
    if let cached = seal.recordSums.withLock({ $0[hash] }), cached.body == bytes { return cached.sum }
    var mac = seal.recordMAC
    mac.update(data: bytes)
    let code = mac.finalize()
    let sum = code.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    seal.recordSums.withLock { cache in
      if cache.count >= FileSeal.recordSumCacheLimit { cache.removeAll(keepingCapacity: true) }
      cache[hash] = (bytes, sum)
    }
    return sum
  }

  // MARK: Blocks

  /// Seals the blocks of one write transaction: its own key and numbering.
  struct BlockSealer {
    let seal: FileSeal
    private var salt: TransactionSalt
    private var key: SymmetricKey
    private var number: UInt32 = 0

    init(_ seal: FileSeal) {
      self.seal = seal
      (salt, key) = seal.newTransactionKey()
    }

    /// `stored` sealed for the block at `offset` born in `birth`, zero-padded to `granule`;
    /// returns the block, its stored byte count and the tag's first 8 bytes (its checksum).
    mutating func seal(_ stored: UnsafeRawBufferPointer, offset: UInt64, birth: UInt64, granule: Int) throws -> (
      block: [UInt8], storedCount: Int, checksum: UInt64
    ) {
      if number == .max {
        (salt, key) = seal.newTransactionKey()
        number = 0
      }
      let nonceBytes = FileSeal.nonce(number)
      let box: AES.GCM.SealedBox
      do {
        box = try AES.GCM.seal(
          stored, using: key, nonce: try AES.GCM.Nonce(data: nonceBytes),
          authenticating: FileSeal.associatedData(offset: offset, birth: birth))
      } catch {
        throw StorageError.invalidArgument("Sealing a block failed: \(error)")
      }
      let count = FileSeal.blockOverhead + stored.count
      var block = [UInt8]()
      block.reserveCapacity((count + granule - 1) / granule * granule)
      withUnsafeBytes(of: salt.high.littleEndian) { block += $0 }
      withUnsafeBytes(of: salt.low.littleEndian) { block += $0 }
      withUnsafeBytes(of: number.littleEndian) { block += $0 }
      block += box.ciphertext
      let tag = box.tag
      block += tag
      block += repeatElement(0, count: (count + granule - 1) / granule * granule - count)
      number += 1
      let checksum = tag.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
      return (block, count, checksum)
    }
  }

  private func newTransactionKey() -> (TransactionSalt, SymmetricKey) {
    var generator = SystemRandomNumberGenerator()
    let salt = TransactionSalt(high: generator.next(), low: generator.next())
    return (salt, subkey(salt))
  }

  /// A transaction's block key: HKDF-Expand of the file's block key (already a uniformly random
  /// key, HKDF's output, so the extract step is not needed; RFC 5869, section 3.3) with the
  /// transaction salt in its info. For 32 bytes, one hash long, HKDF-Expand is its first block
  /// T(1) = HMAC(key, info | 0x01): computed here from the HMAC keyed once (`blockKeyMAC`),
  /// the same bytes as `HKDF<SHA256>.expand` (`FileSealTests` checks both agree).
  func subkey(_ salt: TransactionSalt) -> SymmetricKey {
    var info = FileSeal.transactionKeyInfo
    withUnsafeBytes(of: salt.high.littleEndian) { info += $0 }
    withUnsafeBytes(of: salt.low.littleEndian) { info += $0 }
    info.append(0x01)
    var mac = blockKeyMAC
    mac.update(data: info)
    return SymmetricKey(data: mac.finalize())
  }

  /// The start of the info of a transaction's block key (`subkey`).
  static let transactionKeyInfo = Array("shoal transaction key v1".utf8)

  private static func nonce(_ number: UInt32) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 12)
    withUnsafeBytes(of: number.littleEndian) { for i in 0..<4 { bytes[i] = $0[i] } }
    return bytes
  }

  private static func associatedData(offset: UInt64, birth: UInt64) -> [UInt8] {
    var bytes = [UInt8]()
    bytes.reserveCapacity(16)
    withUnsafeBytes(of: offset.littleEndian) { bytes += $0 }
    withUnsafeBytes(of: birth.littleEndian) { bytes += $0 }
    return bytes
  }

  /// The stored bytes of the sealed block `sealed` (its stored bytes as read) at `offset` born
  /// in `birth`, whose pointer names `checksum`; nil if it does not open: wrong place or
  /// version, altered, or not sealed under this file's key.
  func open(_ sealed: [UInt8], offset: UInt64, birth: UInt64, checksum: UInt64) -> [UInt8]? {
    let n = sealed.count
    guard n >= FileSeal.blockOverhead else { return nil }
    return sealed.withUnsafeBytes { p -> [UInt8]? in
      let tagStart = n - FileSeal.tagSize
      guard UInt64(littleEndian: p.loadUnaligned(fromByteOffset: tagStart, as: UInt64.self)) == checksum else {
        return nil
      }
      let salt = TransactionSalt(
        high: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
        low: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
      let number = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
      let key = cachedSubkey(salt)
      let ciphertext = UnsafeRawBufferPointer(rebasing: p[(FileSeal.transactionSaltSize + 4)..<tagStart])
      let tag = UnsafeRawBufferPointer(rebasing: p[tagStart..<n])
      guard let nonce = try? AES.GCM.Nonce(data: FileSeal.nonce(number)),
        let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag),
        let plain = try? AES.GCM.open(
          box, using: key, authenticating: FileSeal.associatedData(offset: offset, birth: birth))
      else { return nil }
      return [UInt8](plain)
    }
  }

  private func cachedSubkey(_ salt: TransactionSalt) -> SymmetricKey {
    if let key = subkeys.withLock({ $0[salt] }) { return key }
    let key = subkey(salt)
    subkeys.withLock { cache in
      if cache.count >= FileSeal.subkeyCacheLimit { cache.removeAll(keepingCapacity: true) }
      cache[salt] = key
    }
    return key
  }
}
