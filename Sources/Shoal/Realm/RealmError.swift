import Foundation

extension Realm {
  /// An error thrown by Realm operations (RealmSwift's `Realm.Error`), with RealmSwift's codes.
  ///
  /// ```swift
  /// do { _ = try Realm(configuration: config) }
  /// catch let error as Realm.Error where error.code == .schemaMismatch { … }
  /// catch Realm.Error.fileNotFound { … }
  /// ```
  public struct Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
    /// RealmSwift's error codes (`RLMError`), with the same raw values.
    public enum Code: Int, Sendable {
      /// An error without a more specific code.
      case fail = 1
      /// The file could not be opened or accessed.
      case fileAccess = 2
      /// The user lacks permission to open or create the file.
      case filePermissionDenied = 3
      /// The file already exists (writing a copy over an existing file).
      case fileExists = 4
      /// The file does not exist (read-only open of a missing file).
      case fileNotFound = 5
      /// The file format needs an upgrade that was not allowed.
      case fileFormatUpgradeRequired = 6
      /// The lock file is in use by an incompatible process or is not a Shoal lock file.
      case incompatibleLockFile = 8
      /// Not enough address space to map the file.
      case addressSpaceExhausted = 9
      /// The schema does not match the file and no migration was given.
      case schemaMismatch = 10
      /// The operation cannot be performed while the file is open.
      case alreadyOpen = 12
      /// An input value was invalid.
      case invalidInput = 13
      /// A write failed for lack of disk space.
      case outOfDiskSpace = 14
      /// The file was opened with incompatible settings (e.g. in-memory vs on-disk).
      case incompatibleSession = 15
      /// The file was written by a newer, unsupported file format version.
      case unsupportedFileFormatVersion = 16
      /// A file operation failed in a way without a more specific code.
      case fileOperationFailed = 19
      /// The file is not a valid database file, or it is corrupt.
      case invalidDatabase = 20
    }

    /// The error's code.
    public let code: Code
    /// What happened and what to do about it.
    public let message: String
    /// The file involved, when there is one.
    public let fileURL: URL?

    /// An error with `code`, as RealmSwift's `Realm.Error(_:userInfo:)` makes one: the message
    /// is `userInfo[NSLocalizedDescriptionKey]` when it is a string, the file
    /// `userInfo[NSFilePathErrorKey]`.
    ///
    /// ```swift
    /// try await realm.asyncWrite {
    ///   guard valid else { throw Realm.Error(.fail) }
    /// }
    /// ```
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
      self.code = code
      self.message = userInfo[NSLocalizedDescriptionKey] as? String ?? ""
      self.fileURL = (userInfo[NSFilePathErrorKey] as? String).map { URL(fileURLWithPath: $0) }
    }

    init(_ code: Code, _ message: String, fileURL: URL? = nil) {
      self.code = code
      self.message = message
      self.fileURL = fileURL
    }

    /// The code's raw value.
    public var errorCode: Int { code.rawValue }
    /// The message, as `NSError.localizedDescription` would give it.
    public var localizedDescription: String { message }
    /// The error's message.
    public var description: String { message }

    /// `Code.fail`, named on the error type as in RealmSwift (`catch Realm.Error.fail`,
    /// `error.code == Realm.Error.fail`): a general error without a more specific code.
    public static let fail = Code.fail
    /// `Code.fileAccess`: the file could not be opened or accessed (an I/O error).
    public static let fileAccess = Code.fileAccess
    /// `Code.filePermissionDenied`: the process may not open or create the file in the requested mode.
    public static let filePermissionDenied = Code.filePermissionDenied
    /// `Code.fileExists`: a file was to be written where another file already exists.
    public static let fileExists = Code.fileExists
    /// `Code.fileNotFound`: the file, or a directory of its path, does not exist.
    public static let fileNotFound = Code.fileNotFound
    /// `Code.fileFormatUpgradeRequired`: the file needs a format upgrade that is not allowed. Shoal never
    /// throws it.
    public static let fileFormatUpgradeRequired = Code.fileFormatUpgradeRequired
    /// `Code.incompatibleLockFile`: the lock file is in use by an incompatible process or is not a Shoal lock file.
    public static let incompatibleLockFile = Code.incompatibleLockFile
    /// `Code.addressSpaceExhausted`: not enough address space to map the file. Shoal never throws it.
    public static let addressSpaceExhausted = Code.addressSpaceExhausted
    /// `Code.schemaMismatch`: the schema does not match the file's and a migration is required.
    public static let schemaMismatch = Code.schemaMismatch
    /// `Code.alreadyOpen`: the operation cannot be performed while the file is open.
    public static let alreadyOpen = Code.alreadyOpen
    /// `Code.invalidInput`: an input value was invalid.
    public static let invalidInput = Code.invalidInput
    /// `Code.outOfDiskSpace`: a write failed for lack of disk space.
    public static let outOfDiskSpace = Code.outOfDiskSpace
    /// `Code.incompatibleSession`: the file was opened with incompatible settings (e.g. in-memory vs on-disk).
    /// Shoal never throws it.
    public static let incompatibleSession = Code.incompatibleSession
    /// `Code.unsupportedFileFormatVersion`: the file's format version is not supported; typically a newer
    /// version wrote it.
    public static let unsupportedFileFormatVersion = Code.unsupportedFileFormatVersion
    /// `Code.fileOperationFailed`: a file operation failed without a more specific code.
    public static let fileOperationFailed = Code.fileOperationFailed
    /// `Code.invalidDatabase`: the file is not a valid database file, or it is corrupt.
    public static let invalidDatabase = Code.invalidDatabase

    static func invalidProperty(_ name: String, className: String) -> Realm.Error {
      Realm.Error(.invalidInput, "Invalid property name '\(name)' for class '\(className)'.")
    }
  }
}

/// Matches an error against a code: `catch Realm.Error.fileNotFound { … }`.
public func ~= (code: Realm.Error.Code, error: any Error) -> Bool {
  (error as? Realm.Error)?.code == code
}

extension Realm.Error: LocalizedError, CustomNSError {
  /// The message, which `localizedDescription` of the error as `any Error` gives too.
  public var errorDescription: String? { message }

  /// RealmSwift's error domain, "io.realm".
  public static var errorDomain: String { "io.realm" }

  /// The message (`NSLocalizedDescriptionKey`), the file's path (`NSFilePath`) when there is
  /// one, and the code (`"Error Code"`), as RealmSwift's errors carry them.
  public var errorUserInfo: [String: Any] {
    var info: [String: Any] = [NSLocalizedDescriptionKey: message, "Error Code": code.rawValue]
    if let fileURL { info[NSFilePathErrorKey] = fileURL.path }
    return info
  }

  /// `errorUserInfo` (RealmSwift's name).
  public var userInfo: [String: Any] { errorUserInfo }
}
