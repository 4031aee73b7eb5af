/// LEB128 varints: little-endian groups of 7 bits, the high bit set on every byte but the
/// last; at most 10 bytes for a 64-bit value. The one varint codec of the engine's formats
/// (blocks, change records, the free-space list) and of the object layer's rows and keys.
///
/// Its members are for Shoal's own modules only. The type itself is public because Swift 6.3
/// inlines no member of a `package` type into another module, `@inlinable` or not (a
/// two-module test shows the call), and the object layer's row scans read several varints a
/// row: declared `package`, each was a call.
public enum Varint {
  /// The most bytes a value takes.
  @inlinable package static var maximumSize: Int { 10 }

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
  /// the end of `buffer` or is longer than `limit` bytes (a 32-bit field's is 5). A one-byte
  /// varint (counts, short lengths, small integers: most of those a row holds) is read here,
  /// small enough to inline into every caller, row scans included; longer ones by
  /// `readLong`, a call.
  @inlinable @inline(__always) package static func read(
    _ buffer: UnsafeRawBufferPointer, at position: inout Int, limit: Int = 10  // maximumSize
  ) -> UInt64? {
    if let base = buffer.baseAddress, position >= 0, position < buffer.count, limit > 0 {
      let byte = base.load(fromByteOffset: position, as: UInt8.self)
      if byte < 0x80 {
        position &+= 1
        return UInt64(byte)
      }
    }
    return readLong(buffer, at: &position, limit: limit)
  }

  /// `read` for any varint, the long ones being what it leaves to this.
  ///
  /// One of up to 8 bytes with 8 bytes to read at `position` (a block pointer's fields, the
  /// free-space list's offsets and lengths: most of what comes here) is read as one word:
  /// the first byte without its high bit ends it, and its 7-bit groups are gathered in
  /// three shift-and-mask steps. Anything else takes the byte loop (`readBytewise`).
  @usableFromInline package static func readLong(
    _ buffer: UnsafeRawBufferPointer, at position: inout Int, limit: Int
  ) -> UInt64? {
    if let base = buffer.baseAddress, position >= 0, buffer.count - position >= 8 {
      let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
      // A bit at 7 mod 8 for each byte that ends a varint (its high bit clear).
      let ends = ~word & 0x8080_8080_8080_8080
      if ends != 0 {
        let length = (ends.trailingZeroBitCount + 1) / 8
        if length <= limit {
          // The varint's bytes without their high bits, then their 7-bit groups side by side.
          var x = word & (UInt64.max >> UInt64(64 - 8 * length)) & 0x7F7F_7F7F_7F7F_7F7F
          x = ((x & 0x7F00_7F00_7F00_7F00) >> 1) | (x & 0x007F_007F_007F_007F)
          x = ((x & 0x3FFF_0000_3FFF_0000) >> 2) | (x & 0x0000_3FFF_0000_3FFF)
          x = ((x & 0x0FFF_FFFF_0000_0000) >> 4) | (x & 0x0000_0000_0FFF_FFFF)
          position &+= length
          return x
        }
      }
    }
    return readBytewise(buffer, at: &position, limit: limit)
  }

  /// `read`, a byte at a time: varints near the end of the buffer, of 9 or 10 bytes, or
  /// longer than `limit` (nil then).
  static func readBytewise(
    _ buffer: UnsafeRawBufferPointer, at position: inout Int, limit: Int
  ) -> UInt64? {
    guard let base = buffer.baseAddress, position >= 0, position < buffer.count, limit > 0 else { return nil }
    // `position` is within the buffer and the limit at most `maximumSize`: the sum cannot overflow.
    let end = Swift.min(buffer.count, position + Swift.min(limit, maximumSize))
    var at = position
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while at < end {
      let byte = base.load(fromByteOffset: at, as: UInt8.self)
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
