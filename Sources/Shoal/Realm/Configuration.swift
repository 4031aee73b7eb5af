import Foundation
import Synchronization

extension Realm {
  /// The block run when a Realm is opened with a higher `schemaVersion` than its file's.
  public typealias MigrationBlock = @Sendable (_ migration: Migration, _ oldSchemaVersion: UInt64) -> Void

  /// How to open a Realm (RealmSwift's `Realm.Configuration`).
  public struct Configuration: Sendable {
    private static let defaultStorage = Mutex(Configuration())

    /// The configuration `Realm()` uses. Set it to change the default for the whole process.
    public static var defaultConfiguration: Configuration {
      get { defaultStorage.withLock { $0 } }
      set { defaultStorage.withLock { $0 = newValue } }
    }

    /// The default file: `default.realm` in the current directory.
    @usableFromInline static var defaultFileURL: URL {
      URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("default.realm")
    }

    private var storedFileURL: URL?
    private var storedInMemoryIdentifier: String?

    /// The file of an on-disk Realm. Setting it clears `inMemoryIdentifier`.
    public var fileURL: URL? {
      get { storedFileURL }
      set {
        storedFileURL = newValue
        if newValue != nil { storedInMemoryIdentifier = nil }
      }
    }

    /// The name of an in-memory Realm, shared by every Realm opened with the same name in this
    /// process while any of them is alive. Setting it clears `fileURL`.
    public var inMemoryIdentifier: String? {
      get { storedInMemoryIdentifier }
      set {
        storedInMemoryIdentifier = newValue
        if newValue != nil { storedFileURL = nil }
      }
    }

    /// The 64-byte key the file is encrypted with (nil: not encrypted), as RealmSwift. A new
    /// file is created encrypted; an existing one opens only with the key it was written with
    /// (`.invalidDatabase`, "Realm file decryption failed", otherwise). Another length than
    /// 64 bytes is a programmer error. Every process sharing the file gives the same key;
    /// `writeCopy(toFile:encryptionKey:)` changes or removes it.
    ///
    /// ```swift
    /// var key = Data(count: 64)
    /// var generator = SystemRandomNumberGenerator()
    /// for i in key.indices { key[i] = .random(in: 0 ... 255, using: &generator) }
    /// let config = Realm.Configuration(encryptionKey: key)
    /// let realm = try Realm(configuration: config)
    /// ```
    public var encryptionKey: Data?
    /// Open the file read-only: no writes, no schema changes, the file must exist.
    public var readOnly: Bool
    /// The schema version of the classes in `objectTypes`.
    public var schemaVersion: UInt64
    /// Runs when the file's schema version is lower than `schemaVersion`.
    public var migrationBlock: MigrationBlock?
    /// Delete the file instead of failing when the schema changed without a version bump.
    public var deleteRealmIfMigrationNeeded: Bool
    /// Called with the file size and the bytes in use on first open; return true to compact.
    public var shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)?
    /// The classes the Realm manages; nil means every `Object` and `EmbeddedObject` subclass
    /// in the program.
    public var objectTypes: [ObjectBase.Type]?
    /// The most versions pinned at once (by this and other processes) before a transaction
    /// fails; nil means no limit.
    public var maximumNumberOfActiveVersions: UInt?
    /// A file copied to `fileURL` when no file exists there yet.
    public var seedFilePath: URL?
    /// Enables event recording (`Realm.events`) when non-nil.
    public var eventConfiguration: EventConfiguration?
    /// Syncs the file with a server when non-nil (see `SyncConfiguration`; made with
    /// `import ShoalSync`): one process among those with the file open runs the sync agent.
    public var syncConfiguration: SyncConfiguration?
    /// Classes without a Swift type, managed as if the program declared them (the event
    /// file's `AuditEvent`, whose columns follow the metadata keys in use).
    var dynamicSchemas: [ObjectSchema] = []

    /// Creates a configuration; every parameter has RealmSwift's default.
    public init(
      fileURL: URL? = Configuration.defaultFileURL, inMemoryIdentifier: String? = nil,
      syncConfiguration: SyncConfiguration? = nil, encryptionKey: Data? = nil, readOnly: Bool = false,
      schemaVersion: UInt64 = 0,
      migrationBlock: MigrationBlock? = nil, deleteRealmIfMigrationNeeded: Bool = false,
      shouldCompactOnLaunch: (@Sendable (Int, Int) -> Bool)? = nil, objectTypes: [ObjectBase.Type]? = nil,
      seedFilePath: URL? = nil
    ) {
      self.storedFileURL = fileURL
      self.syncConfiguration = syncConfiguration
      self.encryptionKey = encryptionKey
      self.readOnly = readOnly
      self.schemaVersion = schemaVersion
      self.migrationBlock = migrationBlock
      self.deleteRealmIfMigrationNeeded = deleteRealmIfMigrationNeeded
      self.shouldCompactOnLaunch = shouldCompactOnLaunch
      self.objectTypes = objectTypes
      self.seedFilePath = seedFilePath
      if let inMemoryIdentifier { self.inMemoryIdentifier = inMemoryIdentifier }
    }

    /// The key identifying the file (path or in-memory name) within the process.
    var fileKey: String {
      if let id = inMemoryIdentifier { return "memory:" + id }
      return "file:" + (fileURL ?? Configuration.defaultFileURL).standardizedFileURL.path
    }
  }
}
