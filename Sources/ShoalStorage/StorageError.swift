/// Every failure the storage engine reports. Each case says what happened and, in its
/// `description`, what to do about it.
public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Stored bytes failed a check (checksum, bounds, structure). `offset` is the file offset
  /// of the damaged block or record.
  case corrupt(path: String, offset: UInt64, reason: String)
  /// The file exists but does not start with Shoal's magic bytes.
  case notAShoalFile(path: String)
  /// The file was written by a newer (or unknown) format version.
  case unsupportedFormatVersion(path: String, found: UInt32, supported: UInt32)
  /// The file is shorter than its own header or meta records say it must be.
  case truncated(path: String, size: UInt64, expected: UInt64)
  /// The path names a directory, not a file.
  case isDirectory(path: String)
  /// The process may not open or create the file.
  case permissionDenied(path: String, operation: String)
  /// The file does not exist and the options did not allow creating it.
  case fileNotFound(path: String)
  /// The file exists and the operation needs a new one.
  case fileExists(path: String)
  /// Any other operating-system error.
  case io(path: String, operation: String, errno: Int32, message: String)
  /// A keyspace with this name does not exist in the snapshot.
  case keyspaceNotFound(String)
  /// A keyspace with this name already exists.
  case keyspaceExists(String)
  /// A key longer than `StorageLimits.maximumKeySize`.
  case keyTooLarge(size: Int, limit: Int)
  /// A value longer than `StorageLimits.maximumValueSize`.
  case valueTooLarge(size: Int, limit: Int)
  /// The transaction was already committed or aborted.
  case transactionClosed
  /// This thread already holds the write transaction; a second one would deadlock.
  case writeTransactionAlreadyOpen
  /// The store was opened read-only, or in a mode that cannot write.
  case readOnly(path: String)
  /// The store was closed.
  case closed(path: String)
  /// The change records for a version were trimmed (no pin kept them).
  case historyUnavailable(from: UInt64, to: UInt64, oldestAvailable: UInt64)
  /// A version asked for is newer than the file's latest version.
  case versionNotFound(UInt64, latest: UInt64)
  /// The lock file beside the data file cannot be created, locked or mapped.
  case lockFileUnavailable(path: String, reason: String)
  /// The lock file was made by an incompatible build (or is not a Shoal lock file).
  case incompatibleLockFile(path: String, reason: String)
  /// The lock file was deleted, truncated or replaced while this store had it open: other
  /// processes can no longer see this one's pins, so it must not write.
  case lockFileReplaced(path: String)
  /// Every process slot or reader slot of the lock file is taken: `kind` is "process" or
  /// "reader", `holders` the processes holding them (pid and how many slots each).
  case slotsExhausted(path: String, kind: String, limit: Int, holders: [Int32: Int])
  /// A writer waited `StoreOptions.writeLockTimeout` for the writer lock; `holder` is the
  /// process that held it (nil when it was this process's own thread, or unknown).
  case writeLockTimeout(path: String, waitedSeconds: Double, holder: Int32?)
  /// A snapshot read by a process outside the file's session (one that cannot write the lock
  /// file, so its snapshots are not pinned) was overwritten by newer commits: read again, from
  /// the newest version (`newest`).
  case snapshotUnavailable(path: String, version: UInt64, newest: UInt64)
  /// Too many versions are pinned (`StoreOptions.maximumNumberOfActiveVersions`).
  case tooManyActiveVersions(count: Int, limit: Int, oldest: PinInfo?)
  /// Simulated power loss from `FaultInjectingFile`: every later operation fails.
  case powerLoss
  /// An argument outside what the engine accepts.
  case invalidArgument(String)
  /// The file is encrypted and was opened with a key it was not written with.
  case wrongEncryptionKey(path: String, fileSize: UInt64)
  /// The file is encrypted and was opened without a key.
  case encryptionKeyRequired(path: String)
  /// The file is not encrypted and was opened with a key.
  case notEncrypted(path: String, fileSize: UInt64)

  /// A message saying what happened, naming the file, and for most cases what to do about it.
  public var description: String {
    switch self {
    case .corrupt(let path, let offset, let reason):
      return
        "'\(path)' is corrupt at offset \(offset): \(reason). Run `shoal verify` on it; restore from a backup or `shoal compact` what is still readable."
    case .notAShoalFile(let path):
      return "'\(path)' is not a Shoal file (its magic bytes do not match). Check the path."
    case .unsupportedFormatVersion(let path, let found, let supported):
      return
        "'\(path)' has format version \(found), but this build reads version \(supported) only. Open it with a newer Shoal."
    case .truncated(let path, let size, let expected):
      return
        "'\(path)' is truncated: it is \(size) bytes long but needs at least \(expected). Restore it from a backup."
    case .isDirectory(let path):
      return "'\(path)' is a directory. Give the path of a file."
    case .permissionDenied(let path, let operation):
      return
        "Permission denied to \(operation) '\(path)'. Check the file's and its directory's permissions."
    case .fileNotFound(let path):
      return "'\(path)' does not exist. Create it by opening without `readOnly`."
    case .fileExists(let path):
      return "'\(path)' already exists. Choose another path or remove it first."
    case .io(let path, let operation, let errno, let message):
      return "\(operation) '\(path)' failed: \(message) (errno \(errno))."
    case .keyspaceNotFound(let name):
      return "Keyspace '\(name)' does not exist. Create it in a write transaction first."
    case .keyspaceExists(let name):
      return "Keyspace '\(name)' already exists."
    case .keyTooLarge(let size, let limit):
      return "A key of \(size) bytes is longer than the limit of \(limit) bytes. Use a shorter key."
    case .valueTooLarge(let size, let limit):
      return
        "A value of \(size) bytes is larger than the limit of \(limit) bytes. Split it into several values."
    case .transactionClosed:
      return "The transaction was already committed or aborted. Begin a new one."
    case .writeTransactionAlreadyOpen:
      return
        "This thread already has a write transaction open. Commit or abort it before beginning another."
    case .readOnly(let path):
      return "'\(path)' was opened read-only. Open it without `readOnly` to write."
    case .closed(let path):
      return "The store for '\(path)' was closed. Open it again."
    case .historyUnavailable(let from, let to, let oldest):
      return
        "The change records from version \(from) to \(to) are no longer kept (oldest kept: \(oldest)). Keep a snapshot pinned to follow changes."
    case .versionNotFound(let version, let latest):
      return "Version \(version) does not exist; the latest version is \(latest)."
    case .lockFileUnavailable(let path, let reason):
      // The directory advice only where the directory is the cause.
      let directoryCause = ["Permission denied", "Read-only file system", "No such file or directory"].contains(reason)
      return "The lock file '\(path)' cannot be used: \(reason)."
        + (directoryCause ? " Shoal needs a writable directory beside the data file to coordinate processes." : "")
        + " Open read-only to use the file from this process alone."
    case .incompatibleLockFile(let path, let reason):
      return
        "Realm file is currently open in another process which cannot share access with this process: '\(path)' is incompatible (\(reason)). Close the other processes (or this build is older than theirs)."
    case .lockFileReplaced(let path):
      return
        "The lock file '\(path)' was deleted, truncated or replaced while the file was open, so the processes sharing the file can no longer see each other's snapshots. Close and reopen the store to write."
    case .writeLockTimeout(let path, let waited, let holder):
      let who = holder.map { "process \($0) holds it" } ?? "another write transaction of this process holds it"
      return
        "Gave up waiting for the writer lock of '\(path)' after \(String(format: "%.1f", waited)) s: \(who). "
        + "A write transaction there is still open, or that process is stopped; end it, or raise "
        + "StoreOptions.writeLockTimeout."
    case .snapshotUnavailable(let path, let version, let newest):
      return
        "This snapshot (version \(version)) of '\(path)' is no longer available: this process reads the file "
        + "without taking part in its session (it cannot write the lock file), so newer commits (now version "
        + "\(newest)) reused its space. Refresh and read again; the file is not damaged."
    case .slotsExhausted(let path, let kind, let limit, let holders):
      let who = holders.sorted { $0.value > $1.value }.prefix(8).map { "pid \($0.key): \($0.value)" }
        .joined(separator: ", ")
      return "All \(limit) \(kind) slots of the lock file '\(path)' are in use (\(who)). "
        + (kind == "reader"
          ? "Release snapshots (read transactions, frozen objects) in the processes holding the most."
          : "Close some of the processes that have the file open.")
    case .tooManyActiveVersions(let count, let limit, let oldest):
      var message = "Number of active versions (\(count)) in the Realm exceeded the limit of \(limit)"
      if let oldest {
        message +=
          "; the oldest, version \(oldest.version), is pinned by process \(oldest.pid) for \(Double(Int(oldest.ageSeconds * 10)) / 10) s"
      }
      return message + ". Release old snapshots (read transactions, frozen objects) or raise the limit."
    case .powerLoss:
      return "Simulated power loss: the fault-injecting file accepts no more operations."
    case .invalidArgument(let message):
      return message
    case .wrongEncryptionKey(let path, _):
      return
        "'\(path)' is encrypted with another key: the key given does not match the file's key check. Open it with the key it was written with."
    case .encryptionKeyRequired(let path):
      return "'\(path)' is encrypted: open it with its 64-byte encryption key."
    case .notEncrypted(let path, _):
      return "'\(path)' is not encrypted, but an encryption key was given: open it without a key."
    }
  }
}

/// Fixed limits of the format.
public enum StorageLimits {
  /// The longest key, in bytes.
  public static let maximumKeySize = 1024
  /// The largest value, in bytes (values above `inlineValueLimit` are stored as their own blob).
  public static let maximumValueSize = 1 << 30
  /// Values up to this size are stored inside B+tree leaves; larger ones as separate blobs.
  public static let inlineValueLimit = 1536
}
