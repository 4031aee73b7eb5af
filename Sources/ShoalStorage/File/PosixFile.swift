import CShoalSystem
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A real file, through swift-system's `FileDescriptor` (pread/pwrite) and fdatasync.
public final class PosixFile: StorageFile {
  /// The path the file was opened at.
  public let path: String
  let descriptor: FileDescriptor

  /// Opens (and, when `create` is true, creates) the file at `path`.
  ///
  /// Directories, missing files and permission problems are reported as the matching
  /// `StorageError` case.
  public init(
    path: String, create: Bool, readOnly: Bool, exclusive: Bool = false,
    permissions: FilePermissions = [.ownerReadWrite, .groupRead, .otherRead]
  ) throws {
    self.path = path
    var options: FileDescriptor.OpenOptions = [.closeOnExec]
    if create && !readOnly { options.insert(.create) }
    if exclusive { options.insert(.exclusiveCreate) }
    // Without O_NOATIME, a read after a write updates the access time (relatime updates it
    // whenever it is older than the modification time), which dirties the inode; on ext4
    // without a journal, fdatasync then writes the inode's block and waits for it before the
    // cache flush, a whole extra round trip to the disk. The kernel allows the flag only to
    // the file's owner (or a process with CAP_FOWNER): anyone else opens without it.
    let mode: FileDescriptor.AccessMode = readOnly ? .readOnly : .readWrite
    func open(_ options: FileDescriptor.OpenOptions) throws -> FileDescriptor {
      try FileDescriptor.open(FilePath(path), mode, options: options, permissions: create ? permissions : nil)
    }
    do {
      do {
        descriptor = try open(options.union(FileDescriptor.OpenOptions(rawValue: SHOAL_O_NOATIME)))
      } catch Errno.notPermitted {
        descriptor = try open(options)
      }
    } catch let errno as Errno {
      throw PosixFile.map(errno, path: path, operation: readOnly ? "open" : "open for writing")
    }
    var info = stat()
    if fstat(descriptor.rawValue, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
      try? descriptor.close()
      throw StorageError.isDirectory(path: path)
    }
  }

  deinit { try? descriptor.close() }

  /// Whether `path` still names the file this descriptor has open (it was not replaced by a
  /// rename, e.g. a compaction by another process, since it was opened).
  var isStillAtPath: Bool {
    var opened = stat()
    var named = stat()
    guard fstat(descriptor.rawValue, &opened) == 0, stat(path, &named) == 0 else { return false }
    return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino
  }

  static func map(_ errno: Errno, path: String, operation: String) -> StorageError {
    switch errno {
    case .noSuchFileOrDirectory: return .fileNotFound(path: path)
    case .permissionDenied, .notPermitted, .readOnlyFileSystem:
      return .permissionDenied(path: path, operation: operation)
    case .isDirectory: return .isDirectory(path: path)
    case .fileExists: return .fileExists(path: path)
    default: return .io(path: path, operation: operation, errno: errno.rawValue, message: errno.description)
    }
  }

  /// Reads with `pread` until `buffer` is full or the file ends (retrying on `EINTR`); returns the
  /// bytes read. Errors are thrown as the matching `StorageError` case (`io` for the rest).
  public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    var total = 0
    while total < buffer.count {
      let n: Int
      do {
        n = try descriptor.read(
          fromAbsoluteOffset: Int64(offset) + Int64(total),
          into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]),
          retryOnInterrupt: true)
      } catch let errno as Errno {
        throw PosixFile.map(errno, path: path, operation: "read")
      }
      if n == 0 { break }
      total += n
    }
    return total
  }

  /// Writes all of `bytes` at `offset` with `pwrite`, extending the file if needed; errors are thrown
  /// as the matching `StorageError` case.
  public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
    do {
      _ = try descriptor.writeAll(toAbsoluteOffset: Int64(offset), bytes)
    } catch let errno as Errno {
      throw PosixFile.map(errno, path: path, operation: "write")
    }
  }

  /// Makes every earlier write durable with `fdatasync`; throws `StorageError.io` (or the matching
  /// case) if it fails.
  public func sync() throws {
    if fdatasync(descriptor.rawValue) != 0 {
      throw PosixFile.map(Errno(rawValue: errno), path: path, operation: "fdatasync")
    }
  }

  /// The file's length in bytes, from `fstat`.
  public func size() throws -> UInt64 {
    var info = stat()
    guard fstat(descriptor.rawValue, &info) == 0 else {
      throw PosixFile.map(Errno(rawValue: errno), path: path, operation: "stat")
    }
    return UInt64(info.st_size)
  }

  /// Sets the file's length with `ftruncate`: cuts it, or extends it with zeros.
  public func truncate(to size: UInt64) throws {
    if ftruncate(descriptor.rawValue, off_t(size)) != 0 {
      throw PosixFile.map(Errno(rawValue: errno), path: path, operation: "truncate")
    }
  }
}
