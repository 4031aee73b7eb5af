import Foundation
import ShoalStorage
import Synchronization

/// One open database file (or in-memory Realm) shared by every Realm instance of this process
/// that uses it. Realm instances come and go; the store stays open while any of them lives.
final class SharedFile: Sendable {
  let store: Store
  let key: String
  /// The resolved schema, once opened: tables by class name.
  let schema: Mutex<RealmSchema?>
  /// The number log messages about this file carry (`DB: 3 …`, as Realm Core numbers its
  /// databases), unique in the process.
  let logID: Int

  private static let nextLogID = Atomic<Int>(1)

  private init(store: Store, key: String) {
    self.store = store
    self.key = key
    self.schema = Mutex(nil)
    logID = SharedFile.nextLogID.wrappingAdd(1, ordering: .relaxed).oldValue
  }

  deinit { store.close() }

  private struct WeakFile {
    weak var file: SharedFile?
    init(_ file: SharedFile) { self.file = file }
  }
  private static let registry = Mutex<[String: WeakFile]>([:])

  /// The shared file for `configuration`, opening the store if no Realm of this process has it.
  static func open(_ configuration: Realm.Configuration) throws(Realm.Error) -> SharedFile {
    let before = registryKeys(configuration)
    if let existing = registry.withLock({ registry in before.compactMap { registry[$0]?.file }.first }) {
      Realm.requireEncryptionKey(of: configuration, toOpen: existing.store)
      return existing
    }
    let store = try openStore(configuration)
    // The file exists now: register it under its inode too.
    let keys = registryKeys(configuration)
    return registry.withLock { registry in
      if let existing = keys.compactMap({ registry[$0]?.file }).first {
        store.close()
        Realm.requireEncryptionKey(of: configuration, toOpen: existing.store)
        return existing
      }
      let file = SharedFile(store: store, key: configuration.fileKey)
      for key in keys { registry[key] = WeakFile(file) }
      return file
    }
  }

  /// Whether any Realm of this process has the file open.
  static func isOpen(_ configuration: Realm.Configuration) -> Bool {
    let keys = registryKeys(configuration)
    return registry.withLock { registry in keys.contains { registry[$0]?.file != nil } }
  }

  /// What identifies the file in this process: its device and inode once it exists (so the
  /// same file opened through a symbolic link is one store, not two), and its path.
  static func registryKeys(_ configuration: Realm.Configuration) -> [String] {
    guard configuration.inMemoryIdentifier == nil else { return [configuration.fileKey] }
    let path = (configuration.fileURL ?? Realm.Configuration.defaultFileURL).path
    var info = stat()
    guard stat(path, &info) == 0 else { return [configuration.fileKey] }
    return ["inode:\(info.st_dev):\(info.st_ino)", configuration.fileKey]
  }

  private static func openStore(_ configuration: Realm.Configuration) throws(Realm.Error) -> Store {
    var options = StoreOptions(
      durability: .full, readOnly: configuration.readOnly, create: !configuration.readOnly,
      maximumNumberOfActiveVersions: configuration.maximumNumberOfActiveVersions.map { Int($0) },
      encryptionKey: Realm.validatedEncryptionKey(configuration.encryptionKey))
    if let id = configuration.inMemoryIdentifier {
      options.durability = .memOnly
      options.readOnly = false
      do { return try Store.open(path: "memory:" + id, options: options) } catch {
        throw Realm.Error(storage: error, fileURL: nil)
      }
    }
    let url = configuration.fileURL ?? Realm.Configuration.defaultFileURL
    if let seed = configuration.seedFilePath, !FileManager.default.fileExists(atPath: url.path) {
      do { try FileManager.default.copyItem(at: seed, to: url) } catch {
        throw Realm.Error(
          .fileAccess, "Could not copy the seed file \(seed.path) to \(url.path): \(error)", fileURL: url)
      }
    }
    do {
      let store = try Store.open(path: url.path, options: options)
      // First open in this process: compact when asked and no other process has the file.
      if let shouldCompact = configuration.shouldCompactOnLaunch, !configuration.readOnly,
        try store.compactIfAlone({ shouldCompact(Int($0), Int($1)) })
      {
        return try Store.open(path: url.path, options: options)
      }
      return store
    } catch {
      throw Realm.Error(opening: error, fileURL: url)
    }
  }
}

extension Realm.Error {
  /// An engine error met while opening the file at `fileURL`, with RealmSwift's code and, where
  /// RealmSwift has one for the same situation, its message ("Failed to open Realm file at path
  /// …"); otherwise the engine's explanation.
  init(opening error: any Error, fileURL url: URL) {
    let path = url.path
    let prefix = "Failed to open Realm file at path '\(path)': "
    switch error as? StorageError {
    case .fileNotFound?:
      self.init(.fileNotFound, prefix + "No such file or directory", fileURL: url)
    case .permissionDenied?:
      self.init(
        .filePermissionDenied,
        prefix + "Permission denied. Please use a path where your app has read-write permissions.", fileURL: url)
    case .notAShoalFile?:
      let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
      var isRegular = true
      if let type = try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType {
        isRegular = type == .typeRegular
      }
      if !isRegular {
        self.init(.fileAccess, prefix + "not a regular file. Give the path of a Realm file.", fileURL: url)
      } else if size > 0, size < 4096 {
        self.init(
          .invalidDatabase, prefix + "file is non-empty but too small (\(size) bytes) to be a valid Realm.",
          fileURL: url)
      } else {
        self.init(
          .invalidDatabase, prefix + "Invalid mnemonic: it is not a Realm file of this format. Check the path.",
          fileURL: url)
      }
    case .wrongEncryptionKey(_, let size)?, .notEncrypted(_, let size)?:
      // RealmSwift's words for both: the page it could not decrypt. Then which of the two it is.
      var which = "The encryption key does not match the one the file was written with."
      if case .notEncrypted? = error as? StorageError {
        which = "The file is not encrypted: open it with encryptionKey nil."
      }
      self.init(
        .invalidDatabase,
        prefix + "Realm file decryption failed (Decryption failed: page 0 in file of size \(size)). " + which,
        fileURL: url)
    case .encryptionKeyRequired?:
      self.init(
        .invalidDatabase,
        prefix + "header has invalid mnemonic. The file is encrypted: open it with its encryptionKey.", fileURL: url)
    case .io(_, _, ENOTDIR, _)?:
      // Realm Core opens the lock file first, so it is the lock file's path RealmSwift names.
      let lock = url.appendingPathExtension("lock")
      self.init(
        .fileOperationFailed, "Failed to open file at path '\(lock.path)': parent path is not a directory",
        fileURL: lock)
    default:
      self.init(storage: error, fileURL: url)
    }
  }

  /// Maps an engine error to RealmSwift's codes, keeping the engine's explanation.
  init(storage error: any Error, fileURL: URL?) {
    guard let storage = error as? StorageError else {
      self.init(.fail, "\(error)", fileURL: fileURL)
      return
    }
    let code: Code
    switch storage {
    case .fileNotFound: code = .fileNotFound
    case .fileExists: code = .fileExists
    case .permissionDenied: code = .filePermissionDenied
    // Realm Core reports an operating-system failure without a more specific code (ENOTDIR for
    // "/dev/null/foo", EISDIR, EIO, ...) as FileOperationFailed; full disks are their own code.
    case .io(_, _, let errno, _): code = errno == ENOSPC ? .outOfDiskSpace : .fileOperationFailed
    case .isDirectory: code = .fileOperationFailed
    case .truncated: code = .fileAccess
    case .notAShoalFile, .corrupt: code = .invalidDatabase
    case .unsupportedFormatVersion: code = .unsupportedFileFormatVersion
    case .incompatibleLockFile, .lockFileReplaced: code = .incompatibleLockFile
    case .lockFileUnavailable: code = .fileAccess
    case .slotsExhausted: code = .fail
    case .invalidArgument, .keyTooLarge, .valueTooLarge: code = .invalidInput
    default: code = .fail
    }
    self.init(code, storage.description, fileURL: fileURL)
  }
}
