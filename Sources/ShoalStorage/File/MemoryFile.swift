import Synchronization

/// A file that lives in memory only: the store of `Durability.memOnly`, and the place where
/// crash images from `FaultInjectingFile` are reopened.
public final class MemoryFile: StorageFile {
  /// A name for messages: `"<memory>"` unless one was given.
  public let path: String
  private let storage: Mutex<[UInt8]>

  /// A memory file holding `contents`.
  public init(path: String = "<memory>", contents: [UInt8] = []) {
    self.path = path
    storage = Mutex(contents)
  }

  /// A copy of the whole contents.
  public var contents: [UInt8] { storage.withLock { $0 } }

  /// Copies up to `buffer.count` bytes at `offset`; returns fewer at the end of the contents, 0 past it.
  public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    storage.withLock { bytes in
      guard offset < UInt64(bytes.count) else { return 0 }
      let start = Int(offset)
      let n = min(buffer.count, bytes.count - start)
      bytes.withUnsafeBytes { src in
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[start..<start + n]))
      }
      return n
    }
  }

  /// Writes `data` at `offset`, growing the contents and zero-filling any gap before it.
  public func write(_ data: UnsafeRawBufferPointer, at offset: UInt64) throws {
    storage.withLock { bytes in MemoryFile.apply(data, at: Int(offset), to: &bytes) }
  }

  static func apply(_ data: UnsafeRawBufferPointer, at start: Int, to bytes: inout [UInt8]) {
    let end = start + data.count
    if bytes.count < end { bytes.append(contentsOf: repeatElement(0, count: end - bytes.count)) }
    bytes.withUnsafeMutableBytes { dst in
      UnsafeMutableRawBufferPointer(rebasing: dst[start..<end]).copyMemory(from: data)
    }
  }

  /// Does nothing: the contents live in memory only.
  public func sync() throws {}

  /// The length of the contents in bytes.
  public func size() throws -> UInt64 { storage.withLock { UInt64($0.count) } }

  /// Cuts the contents to `size` bytes, or appends zeros up to it.
  public func truncate(to size: UInt64) throws {
    storage.withLock { bytes in
      let n = Int(size)
      if bytes.count > n {
        bytes.removeSubrange(n...)
      } else {
        bytes.append(contentsOf: repeatElement(0, count: n - bytes.count))
      }
    }
  }
}
