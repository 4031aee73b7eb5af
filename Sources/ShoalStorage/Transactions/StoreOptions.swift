/// How hard a commit works to survive a crash.
public enum Durability: String, Sendable, CaseIterable {
  /// Every commit is fsynced (one `fdatasync` of blocks and meta together; recovery checks
  /// the newest commit's blocks and falls back to the previous commit if any did not land).
  /// Survives power loss.
  case full
  /// No fsync: survives the process crashing, not the machine losing power.
  case unsafe
  /// Nothing touches a file; the data lives as long as the `Store`.
  case memOnly
}

/// Options for `Store.open`.
public struct StoreOptions: Sendable {
  /// How hard each commit works to survive a crash; `full` by default.
  public var durability: Durability
  /// Open without writing; write transactions fail with `StorageError.readOnly`.
  public var readOnly: Bool
  /// Create the file when it does not exist.
  public var create: Bool
  /// Budget in bytes for decompressed nodes kept in memory.
  public var cacheSize: Int
  /// The most versions that may be in use at once (the newest plus older pinned ones)
  /// before beginning or committing a write fails with `tooManyActiveVersions`; nil for no
  /// limit. Like RealmSwift's `maximumNumberOfActiveVersions`.
  public var maximumNumberOfActiveVersions: Int?
  /// How long `beginWrite()` waits for the writer lock before failing with
  /// `StorageError.writeLockTimeout`, which names the process holding it; nil (the default)
  /// waits as long as it takes. Either way a warning naming that process is logged after
  /// five seconds of waiting.
  ///
  /// ```swift
  /// let store = try Store.open(path: path, options: StoreOptions(writeLockTimeout: .seconds(2)))
  /// ```
  public var writeLockTimeout: Duration?
  /// The 64-byte key of an encrypted file (nil: the file is not encrypted). A new file is
  /// created encrypted with it; an existing one must have been written with the same key
  /// (`StorageError.wrongEncryptionKey`), and a file written without one refuses a key
  /// (`StorageError.notEncrypted`) and the reverse (`StorageError.encryptionKeyRequired`).
  /// Every block is compressed, then sealed with AES-256-GCM under keys derived from this
  /// one; see *File format* in the ShoalStorage documentation.
  ///
  /// ```swift
  /// var key = [UInt8](repeating: 0, count: 64)
  /// var generator = SystemRandomNumberGenerator()
  /// for i in key.indices { key[i] = .random(in: 0 ... 255, using: &generator) }
  /// let store = try Store.open(path: path, options: StoreOptions(encryptionKey: key))
  /// ```
  public var encryptionKey: [UInt8]?

  /// Options with these settings. The defaults: full durability, read-write, creating the file, a 64 MiB
  /// cache, no limit on active versions, no writer-lock timeout and no encryption.
  public init(
    durability: Durability = .full, readOnly: Bool = false, create: Bool = true, cacheSize: Int = 64 << 20,
    maximumNumberOfActiveVersions: Int? = nil, writeLockTimeout: Duration? = nil, encryptionKey: [UInt8]? = nil
  ) {
    self.encryptionKey = encryptionKey
    self.writeLockTimeout = writeLockTimeout
    self.durability = durability
    self.readOnly = readOnly
    self.create = create
    self.cacheSize = cacheSize
    self.maximumNumberOfActiveVersions = maximumNumberOfActiveVersions
  }
}

/// A bound of a key range.
public struct KeyRange: Sendable, Equatable {
  /// The lower bound; nil for none.
  public var lower: [UInt8]?
  /// Whether a key equal to `lower` is in the range.
  public var lowerInclusive: Bool
  /// The upper bound; nil for none.
  public var upper: [UInt8]?
  /// Whether a key equal to `upper` is in the range.
  public var upperInclusive: Bool

  /// Keys from `lower` (inclusive by default) up to `upper` (exclusive by default); nil
  /// means unbounded.
  public init(lower: [UInt8]? = nil, lowerInclusive: Bool = true, upper: [UInt8]? = nil, upperInclusive: Bool = false) {
    self.lower = lower
    self.lowerInclusive = lowerInclusive
    self.upper = upper
    self.upperInclusive = upperInclusive
  }

  /// Every key.
  public static let all = KeyRange()

  /// Keys that start with `prefix`.
  public static func prefix(_ prefix: [UInt8]) -> KeyRange {
    var upper = prefix
    while let last = upper.last, last == 0xFF { upper.removeLast() }
    if upper.isEmpty { return KeyRange(lower: prefix) }
    upper[upper.count - 1] += 1
    return KeyRange(lower: prefix, upper: upper)
  }

  func beyondUpper(_ key: UnsafeRawBufferPointer) -> Bool {
    guard let upper else { return false }
    let c = upper.withUnsafeBytes { compareBytes(key, $0) }
    return upperInclusive ? c > 0 : c >= 0
  }

  func beyondLower(_ key: UnsafeRawBufferPointer) -> Bool {
    guard let lower else { return false }
    let c = lower.withUnsafeBytes { compareBytes(key, $0) }
    return lowerInclusive ? c < 0 : c <= 0
  }
}

/// A keyspace's record in the catalog.
struct KeyspaceEntry {
  var root: BlockPointer
  var count: UInt64
  var tracksChanges: Bool

  func encode() -> [UInt8] {
    var w = ByteWriter(capacity: 42)
    root.encode(into: &w)
    w.u64(count)
    w.u8(tracksChanges ? 1 : 0)
    return w.bytes
  }

  static func decode(_ bytes: UnsafeRawBufferPointer) -> KeyspaceEntry? {
    guard bytes.count == BlockPointer.encodedSize + 9, let root = BlockPointer.decode(bytes, at: 0) else { return nil }
    let count = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: BlockPointer.encodedSize, as: UInt64.self))
    return KeyspaceEntry(root: root, count: count, tracksChanges: bytes[BlockPointer.encodedSize + 8] & 1 != 0)
  }

  var slot: ChildSlot? { root.isNull ? nil : .clean(root, count) }
}
