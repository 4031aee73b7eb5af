/// LEB128 varints: little-endian groups of 7 bits, the high bit set on every byte but the
/// last; at most 10 bytes for a 64-bit value. The one varint codec of the engine's formats
/// (blocks, change records, the free-space list) and of the object layer's rows and keys.
package enum Varint {
  /// The most bytes a value takes.
  package static let maximumSize = 10

  /// How many bytes `value` takes.
  @inlinable package static func size(of value: UInt64) -> Int {
    value < 0x80 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
  }

  /// Appends `value` to `out`.
  @inlinable package static func append(_ value: UInt64, to out: inout [UInt8]) {
    var v = value
    while v >= 0x80 {
      out.append(UInt8(truncatingIfNeeded: v) | 0x80)
      v >>= 7
    }
    out.append(UInt8(v))
  }

  /// Writes `value` at `base + position` (room for `maximumSize` bytes is the caller's) and
  /// advances `position`.
  @inlinable package static func write(_ value: UInt64, to base: UnsafeMutablePointer<UInt8>, at position: inout Int) {
    var v = value
    while v >= 0x80 {
      base[position] = UInt8(truncatingIfNeeded: v) | 0x80
      position += 1
      v >>= 7
    }
    base[position] = UInt8(v)
    position += 1
  }

  /// The varint at `position` of `buffer`, moving `position` past it; nil when it runs past
  /// the end of `buffer` or is longer than `limit` bytes (a 32-bit field's is 5). Marked for
  /// inlining, as row scans read several a row; where the optimiser still makes it a call, a hot
  /// caller takes one-byte varints itself (`RowCodec.QuickColumnReader`).
  @inlinable @inline(__always) package static func read(
    _ buffer: UnsafeRawBufferPointer, at position: inout Int, limit: Int = maximumSize
  ) -> UInt64? {
    guard let base = buffer.baseAddress, position >= 0, position < buffer.count, limit > 0 else { return nil }
    // `position` is within the buffer and the limit at most `maximumSize`: the sum cannot overflow.
    let end = Swift.min(buffer.count, position + Swift.min(limit, maximumSize))
    var at = position
    var byte = base.load(fromByteOffset: at, as: UInt8.self)
    at &+= 1
    if byte < 0x80 {
      position = at
      return UInt64(byte)
    }
    var result = UInt64(byte & 0x7F)
    var shift: UInt64 = 7
    while at < end {
      byte = base.load(fromByteOffset: at, as: UInt8.self)
      at &+= 1
      result |= UInt64(byte & 0x7F) << shift
      if byte < 0x80 {
        position = at
        return result
      }
      shift &+= 7
    }
    position = at
    return nil
  }
}
