import CLZ4

/// How a block's bytes are stored on disk.
public enum BlockCodecKind: UInt8, Sendable, CustomStringConvertible {
  /// Stored as is: LZ4 would have saved less than an eighth.
  case raw = 0
  /// LZ4 block format.
  case lz4 = 1

  public var description: String { self == .raw ? "raw" : "lz4" }
}

/// LZ4 compression of blocks, falling back to raw storage when compression does not pay.
enum BlockCodec {
  /// Compresses `input`; returns the codec used, the stored bytes zero-padded to a multiple
  /// of `granule` (a block's extent, ready to write), and how many of them are stored bytes.
  static func encode(_ input: [UInt8], granule: Int) -> (codec: BlockCodecKind, block: [UInt8], storedCount: Int) {
    func padded(_ n: Int) -> Int { (n + granule - 1) / granule * granule }
    func raw() -> (BlockCodecKind, [UInt8], Int) {
      var block = [UInt8]()
      block.reserveCapacity(padded(input.count))
      block += input
      block += repeatElement(0, count: padded(input.count) - input.count)
      return (.raw, block, input.count)
    }
    // Tiny blocks are not worth the call.
    guard input.count >= 64 else { return raw() }
    let bound = Int(LZ4_compressBound(Int32(input.count)))
    var written: Int32 = 0
    let output = [UInt8](unsafeUninitializedCapacity: padded(bound)) { dst, count in
      written = input.withUnsafeBytes { src in
        LZ4_compress_default(
          src.baseAddress?.assumingMemoryBound(to: CChar.self),
          UnsafeMutableRawPointer(dst.baseAddress)?.assumingMemoryBound(to: CChar.self),
          Int32(input.count), Int32(bound))
      }
      let stored = max(0, Int(written))
      let end = padded(stored)
      if let base = dst.baseAddress, end > stored { (base + stored).initialize(repeating: 0, count: end - stored) }
      count = end
    }
    // Keep the compressed form only when it saves at least an eighth.
    guard written > 0, Int(written) <= input.count - input.count / 8 else { return raw() }
    return (.lz4, output, Int(written))
  }

  /// Decompresses `stored` into exactly `rawLength` bytes, or returns nil if the bytes are not
  /// a valid LZ4 block of that length.
  static func decode(_ stored: UnsafeRawBufferPointer, codec: BlockCodecKind, rawLength: Int)
    -> [UInt8]?
  {
    switch codec {
    case .raw:
      return stored.count == rawLength ? Array(stored) : nil
    case .lz4:
      guard rawLength > 0, rawLength <= Int(Int32.max), stored.count <= Int(Int32.max) else {
        return nil
      }
      var ok = false
      let out = [UInt8](unsafeUninitializedCapacity: rawLength) { buffer, count in
        let produced = LZ4_decompress_safe(
          stored.baseAddress?.assumingMemoryBound(to: CChar.self),
          UnsafeMutableRawPointer(buffer.baseAddress)?.assumingMemoryBound(to: CChar.self),
          Int32(stored.count), Int32(rawLength))
        ok = produced == Int32(rawLength)
        count = ok ? rawLength : 0
      }
      return ok ? out : nil
    }
  }
}
