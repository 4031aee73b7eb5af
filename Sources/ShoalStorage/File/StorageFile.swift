/// The byte-level file the engine stores into. Positional reads and writes only, so any
/// number of threads may read at once. Implementations: `PosixFile` (a real file),
/// `MemoryFile` (`memOnly`), and `FaultInjectingFile` (power-loss trials).
public protocol StorageFile: AnyObject, Sendable {
  /// A name for messages: the path, or a description for files that have none.
  var path: String { get }
  /// Reads up to `buffer.count` bytes at `offset`; returns fewer only at the end of the file.
  func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int
  /// Writes all of `bytes` at `offset`, extending the file if needed.
  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws
  /// Makes every earlier write durable (fdatasync).
  func sync() throws
  /// The current length of the file in bytes.
  func size() throws -> UInt64
  /// Sets the length of the file.
  func truncate(to size: UInt64) throws
}

extension StorageFile {
  /// Reads `count` bytes at `offset`; the result is shorter only if the file ends first.
  public func read(count: Int, at offset: UInt64) throws -> [UInt8] {
    var got = 0
    var bytes = try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
      initialized = 0
      got = try read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
      // Bytes past `got` are never exposed; zero them so the whole buffer is initialised.
      if got < count {
        UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[got...]).initializeMemory(
          as: UInt8.self, repeating: 0)
      }
      initialized = count
    }
    if got < count { bytes.removeSubrange(got...) }
    return bytes
  }

  /// Writes all of `bytes` at `offset`.
  public func write(_ bytes: [UInt8], at offset: UInt64) throws {
    try bytes.withUnsafeBytes { try write($0, at: offset) }
  }
}
