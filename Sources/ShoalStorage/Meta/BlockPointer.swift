/// Where a block lives and how to check it: a ZFS-style self-verifying pointer.
///
/// `birth` is the version of the commit that wrote the block. Recovery walks exactly the
/// blocks born in the newest commit's version to prove that commit reached the disk whole.
package struct BlockPointer: Hashable, Sendable, CustomStringConvertible {
  /// Byte offset in the file (0 means "no block").
  package var offset: UInt64
  /// Bytes stored on disk (after compression).
  package var storedLength: UInt32
  /// Bytes after decompression.
  package var rawLength: UInt32
  /// How the stored bytes are encoded.
  package var codec: BlockCodecKind
  /// XXH64 of the stored bytes, seeded with the offset and birth version.
  package var checksum: UInt64
  /// Version of the commit that wrote this block.
  package var birth: UInt64

  static let encodedSize = 33
  static let null = BlockPointer(offset: 0, storedLength: 0, rawLength: 0, codec: .raw, checksum: 0, birth: 0)

  package var isNull: Bool { offset == 0 }

  /// Bytes the block occupies in the file (rounded to the allocation granule).
  var extentLength: UInt64 { FileLayout.roundUp(UInt64(storedLength)) }

  static func seed(offset: UInt64, birth: UInt64) -> UInt64 { offset &* 0x9E37_79B9_7F4A_7C15 ^ birth }

  package var description: String {
    "block@\(offset)[\(storedLength)/\(rawLength) \(codec) born \(birth)]"
  }

  func encode(into w: inout ByteWriter) {
    w.u64(offset)
    w.u32(storedLength)
    w.u32(rawLength)
    w.u8(codec.rawValue)
    w.u64(checksum)
    w.u64(birth)
  }

  /// Decodes a pointer; nil if the codec byte is unknown.
  static func decode(_ p: UnsafeRawBufferPointer, at i: Int) -> BlockPointer? {
    guard let codec = BlockCodecKind(rawValue: p[i + 16]) else { return nil }
    return BlockPointer(
      offset: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt64.self)),
      storedLength: UInt32(littleEndian: p.loadUnaligned(fromByteOffset: i + 8, as: UInt32.self)),
      rawLength: UInt32(littleEndian: p.loadUnaligned(fromByteOffset: i + 12, as: UInt32.self)),
      codec: codec,
      checksum: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: i + 17, as: UInt64.self)),
      birth: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: i + 25, as: UInt64.self)))
  }

  static func decode(_ r: inout ByteReader) -> BlockPointer? {
    guard r.remaining >= encodedSize else { return nil }
    let p = r.bytes.withUnsafeBytes { decode($0, at: r.position) }
    r.position += encodedSize
    return p
  }
}

/// Fixed positions in the file.
enum FileLayout {
  static let magic: [UInt8] = Array("SHOAL\u{0}DB".utf8)
  /// The magic of a commit record without `Meta.durable` (written by earlier builds, whose
  /// commits were each synced before the next began: their `durable` is the version before).
  static let metaMagic: [UInt8] = Array("SHOALMET".utf8)
  /// The magic of a commit record that carries `Meta.durable` (group commit).
  static let metaMagicDurable: [UInt8] = Array("SHOALME2".utf8)
  /// The format this build writes and reads (2: commit records chained through the runs;
  /// 3: branches stored compact, codec `branch`).
  static let formatVersion: UInt32 = 3
  static let headerSize: UInt64 = 4096
  /// Each meta slot has its own 4 KiB page so tearing one never touches the other.
  static let metaSlotSize: UInt64 = 4096
  static let dataStart: UInt64 = headerSize + 2 * metaSlotSize
  /// Allocation granule: every extent starts and ends on a multiple of this.
  static let granule: UInt64 = 128

  /// Bytes a commit record takes at the start of the run its predecessor reserved.
  static let recordSize: UInt64 = roundUp(UInt64(Meta.encodedSize))
  /// Every commit whose version is a multiple of this also writes its record into a meta
  /// slot (an anchor), so recovery follows at most this many records from the newest anchor.
  static let anchorInterval: UInt64 = 8

  static func roundUp(_ n: UInt64) -> UInt64 { (n + granule - 1) & ~(granule - 1) }
  static func metaOffset(slot: Int) -> UInt64 { headerSize + UInt64(slot) * metaSlotSize }

  /// The format of an encrypted file: format 3 with its blocks sealed (`FileSeal`) and the
  /// salt and key check in the header. Builds without encryption refuse it by its number.
  static let encryptedFormatVersion: UInt32 = 4
  /// The cipher byte of an encrypted header: AES-256-GCM, keys derived with HKDF-SHA256.
  static let cipherAES256GCM: UInt8 = 1

  /// The header of a file sealed with `seal` (nil: a plain file).
  static func encodeHeader(seal: FileSeal? = nil) -> [UInt8] {
    var w = ByteWriter(capacity: 128)
    w.append(magic)
    w.u32(seal == nil ? formatVersion : encryptedFormatVersion)
    w.u32(UInt32(headerSize))
    w.u64(dataStart)
    w.u64(granule)
    if let seal {
      w.u8(cipherAES256GCM)
      w.append(seal.salt)
      w.append(seal.keyCheck)
    }
    w.u64(Checksum.xxh64(w.bytes))
    return w.bytes
  }

  /// What an encrypted header holds.
  struct Encryption {
    var salt: [UInt8]
    var keyCheck: [UInt8]
  }

  /// Checks the header; throws the error that fits what is wrong with it. Returns the salt and
  /// key check of an encrypted file, nil for a plain one.
  @discardableResult
  static func checkHeader(_ bytes: [UInt8], path: String, fileSize: UInt64) throws -> Encryption? {
    guard bytes.count >= 8, Array(bytes[0..<8]) == magic else { throw StorageError.notAShoalFile(path: path) }
    var r = ByteReader(bytes, position: 8)
    guard let version = r.fixed(UInt32.self) else {
      throw StorageError.truncated(path: path, size: fileSize, expected: dataStart)
    }
    guard version == formatVersion || version == encryptedFormatVersion else {
      throw StorageError.unsupportedFormatVersion(path: path, found: version, supported: formatVersion)
    }
    guard let hs = r.fixed(UInt32.self), let ds = r.fixed(UInt64.self), let g = r.fixed(UInt64.self) else {
      throw StorageError.truncated(path: path, size: fileSize, expected: dataStart)
    }
    var encryption: Encryption?
    if version == encryptedFormatVersion {
      guard let cipher = r.fixed(UInt8.self), r.remaining >= FileSeal.saltSize + FileSeal.keyCheckSize else {
        throw StorageError.truncated(path: path, size: fileSize, expected: dataStart)
      }
      let salt = Array(bytes[r.position..<(r.position + FileSeal.saltSize)])
      r.position += FileSeal.saltSize
      let check = Array(bytes[r.position..<(r.position + FileSeal.keyCheckSize)])
      r.position += FileSeal.keyCheckSize
      guard cipher == cipherAES256GCM else {
        throw StorageError.corrupt(
          path: path, offset: 0, reason: "the file header names an unknown cipher (\(cipher))")
      }
      encryption = Encryption(salt: salt, keyCheck: check)
    }
    guard let sum = r.fixed(UInt64.self) else {
      throw StorageError.truncated(path: path, size: fileSize, expected: dataStart)
    }
    guard sum == Checksum.xxh64(Array(bytes[0..<(r.position - 8)])) else {
      throw StorageError.corrupt(path: path, offset: 0, reason: "the file header's checksum does not match")
    }
    guard UInt64(hs) == headerSize, ds == dataStart, g == granule else {
      throw StorageError.corrupt(path: path, offset: 0, reason: "the file header describes an unknown layout")
    }
    return encryption
  }

  /// What the header of the file at `path` says, read without a key and without joining the
  /// file's session: its format version and whether it is encrypted. Throws as opening would
  /// for a file that is missing, not a Shoal file or damaged.
  static func publicHeader(path: String) throws -> PublicHeader {
    let file = try PosixFile(path: path, create: false, readOnly: true)
    let size = try file.size()
    let header = try file.read(count: Int(min(size, headerSize)), at: 0)
    let encryption = try checkHeader(header, path: path, fileSize: size)
    return PublicHeader(
      formatVersion: encryption == nil ? formatVersion : encryptedFormatVersion, encrypted: encryption != nil,
      fileSize: size)
  }

  /// The seal for a file whose header is `header`, opened with `key`: nil for a plain file
  /// opened without a key. Throws `encryptionKeyRequired`, `notEncrypted` or
  /// `wrongEncryptionKey` when the key does not fit the file.
  static func seal(header: [UInt8], key: [UInt8]?, path: String, fileSize: UInt64) throws -> FileSeal? {
    let encryption = try checkHeader(header, path: path, fileSize: fileSize)
    switch (encryption, try FileSeal.validated(key)) {
    case (nil, nil): return nil
    case (nil, _?): throw StorageError.notEncrypted(path: path, fileSize: fileSize)
    case (_?, nil): throw StorageError.encryptionKeyRequired(path: path)
    case (let encryption?, let key?):
      let seal = FileSeal(key: key, salt: encryption.salt)
      guard seal.keyCheck == encryption.keyCheck else {
        throw StorageError.wrongEncryptionKey(path: path, fileSize: fileSize)
      }
      return seal
    }
  }
}

/// One committed version's root record.
///
/// A commit writes it at the start of the run its predecessor reserved (`next`), in the same
/// stretch of the file as the commit's own packed blocks, so that a small commit's sync
/// writes back one stretch fewer than with a separate meta page. The records form a chain:
/// each names its predecessor by checksum (`previous`) and reserves its successor's place.
/// Every `FileLayout.anchorInterval`-th commit, and every commit whose predecessor reserved
/// nothing, also writes its record into one of the two fixed meta slots (alternately), the
/// anchors recovery starts from.
package struct Meta: Sendable, Equatable {
  /// The commit version (0 for a new, empty file).
  package var version: UInt64
  /// When the commit was made, nanoseconds since 1970.
  package var timestamp: UInt64
  /// End of the allocated region: every block lies below it.
  package var fileEnd: UInt64
  var catalog: BlockPointer
  var freeList: BlockPointer
  var history: BlockPointer
  /// Where the next commit writes its record and packs its blocks (0: nowhere reserved; the
  /// next commit writes an anchor only).
  var next: UInt64 = 0
  /// Bytes reserved at `next`.
  var nextLength: UInt32 = 0
  /// The checksum of the predecessor's record (0 for version 0).
  var previous: UInt64 = 0
  /// The meta slot holding the newest anchor at or before this version.
  var anchorSlot: UInt8 = 0
  /// A version known durable when this commit began (group commit: commits after it may still
  /// have been waiting for their shared sync). Every version up to it was synced, and no block
  /// of a later version was reused before this commit, so recovery verifies only the commits
  /// after it. Never decreases along the chain.
  var durable: UInt64 = 0
  /// Decoded from a record without `durable` (an earlier build's): re-encoded the same way,
  /// so its checksum, which its successor names, stays the same.
  var legacy = false

  /// Bytes of an encoded record: the fields, `durable`, then an XXH64 of them.
  static let encodedSize = legacyEncodedSize + 8
  /// Bytes of a record without `durable`.
  static let legacyEncodedSize = 8 + 8 * 3 + 3 * BlockPointer.encodedSize + 8 + 4 + 8 + 1 + 8
  /// Where `previous` lies in the encoded record.
  static let previousOffset = 8 + 8 * 3 + 3 * BlockPointer.encodedSize + 8 + 4

  /// The encoded record, ending in its checksum: XXH64, or for an encrypted file (`seal`) a
  /// truncated HMAC (`FileSeal.recordSum`).
  func encode(seal: FileSeal?) -> [UInt8] {
    var w = ByteWriter(capacity: Meta.encodedSize)
    w.append(legacy ? FileLayout.metaMagic : FileLayout.metaMagicDurable)
    w.u64(version)
    w.u64(timestamp)
    w.u64(fileEnd)
    catalog.encode(into: &w)
    freeList.encode(into: &w)
    history.encode(into: &w)
    w.u64(next)
    w.u32(nextLength)
    w.u64(previous)
    w.u8(anchorSlot)
    if !legacy { w.u64(durable) }
    w.u64(FileSeal.recordSum(w.bytes, seal: seal))
    return w.bytes
  }

  /// The checksum ending the encoded record: what the successor's `previous` holds.
  func checksum(seal: FileSeal?) -> UInt64 {
    let bytes = encode(seal: seal)
    return bytes.withUnsafeBytes {
      UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
    }
  }

  /// Whether `record` is this version's successor: the next version, naming this record.
  func isFollowed(by record: Meta, seal: FileSeal?) -> Bool {
    record.version == version + 1 && record.previous == checksum(seal: seal)
  }

  /// Decodes a meta slot or commit record; nil if it is torn, blank or fails its checksum (for
  /// an encrypted file, `seal`: its HMAC).
  static func decode(_ bytes: [UInt8], seal: FileSeal?) -> Meta? {
    guard bytes.count >= 8 else { return nil }
    let magic = bytes[0..<8]
    let legacy = magic.elementsEqual(FileLayout.metaMagic)
    guard legacy || magic.elementsEqual(FileLayout.metaMagicDurable) else { return nil }
    let size = legacy ? legacyEncodedSize : encodedSize
    guard bytes.count >= size else { return nil }
    let body = Array(bytes[0..<(size - 8)])
    var r = ByteReader(bytes, position: 8)
    guard let version = r.fixed(UInt64.self), let timestamp = r.fixed(UInt64.self),
      let fileEnd = r.fixed(UInt64.self), let catalog = BlockPointer.decode(&r),
      let freeList = BlockPointer.decode(&r), let history = BlockPointer.decode(&r),
      let next = r.fixed(UInt64.self), let nextLength = r.fixed(UInt32.self), let previous = r.fixed(UInt64.self),
      let anchorSlot = r.fixed(UInt8.self), anchorSlot < 2,
      let durable = legacy ? version &- 1 : r.fixed(UInt64.self), legacy || durable < version || version == 0,
      let sum = r.fixed(UInt64.self), sum == FileSeal.recordSum(body, seal: seal)
    else { return nil }
    return Meta(
      version: version, timestamp: timestamp, fileEnd: fileEnd, catalog: catalog, freeList: freeList,
      history: history, next: next, nextLength: nextLength, previous: previous, anchorSlot: anchorSlot,
      durable: version == 0 ? 0 : durable, legacy: legacy)
  }
}

/// What anyone who can read a file learns from its header, key or not (`Store.publicHeader`).
public struct PublicHeader: Sendable, Codable, Equatable {
  /// 3 for a plain file, 4 for an encrypted one.
  public var formatVersion: UInt32
  /// Whether the file's blocks are encrypted (AES-256-GCM).
  public var encrypted: Bool
  /// The file's length in bytes.
  public var fileSize: UInt64
}

extension Store {
  /// The header of the file at `path`, read without a key and without opening the file as a
  /// store: for tools that report what they can about an encrypted file they have no key for.
  ///
  /// ```swift
  /// if try Store.publicHeader(path: path).encrypted { print("encrypted: give the key") }
  /// ```
  public static func publicHeader(path: String) throws -> PublicHeader { try FileLayout.publicHeader(path: path) }
}
