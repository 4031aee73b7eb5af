/// Little-endian appends and LEB128 varints (`Varint`) for the engine's encodings.
struct ByteWriter {
  var bytes: [UInt8] = []

  init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

  mutating func u8(_ v: UInt8) { bytes.append(v) }
  mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
  mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
  mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
  mutating func varint(_ value: UInt64) { Varint.append(value, to: &bytes) }
  mutating func append<C: Collection>(_ data: C) where C.Element == UInt8 { bytes.append(contentsOf: data) }
  /// A varint length followed by the bytes.
  mutating func lengthPrefixed<C: Collection>(_ data: C) where C.Element == UInt8 {
    varint(UInt64(data.count))
    bytes.append(contentsOf: data)
  }
}

/// A bounds-checked reader: every read past the end returns nil instead of trapping, so
/// corrupt input becomes an error, never a crash.
struct ByteReader {
  let bytes: [UInt8]
  var position: Int

  init(_ bytes: [UInt8], position: Int = 0) {
    self.bytes = bytes
    self.position = position
  }

  var remaining: Int { bytes.count - position }
  var atEnd: Bool { position >= bytes.count }

  mutating func u8() -> UInt8? {
    guard position < bytes.count else { return nil }
    defer { position += 1 }
    return bytes[position]
  }
  mutating func fixed<T: FixedWidthInteger>(_: T.Type) -> T? {
    let size = MemoryLayout<T>.size
    guard position >= 0, remaining >= size else { return nil }
    let value = bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: position, as: T.self)) }
    position += size
    return value
  }
  mutating func varint() -> UInt64? {
    guard position >= 0 else { return nil }
    return bytes.withUnsafeBytes { Varint.read($0, at: &position) }
  }
  mutating func take(_ count: Int) -> [UInt8]? {
    guard count >= 0, remaining >= count else { return nil }
    defer { position += count }
    return Array(bytes[position..<position + count])
  }
  mutating func lengthPrefixed(limit: Int = Int.max) -> [UInt8]? {
    guard let length = varint(), length <= UInt64(min(limit, remaining)) else { return nil }
    return take(Int(length))
  }
}

/// Lexicographic comparison of byte strings (memcmp order, shorter prefix first).
@inline(__always)
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
  let n = min(a.count, b.count)
  if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
    let c = memcmp(pa, pb, n)
    if c != 0 { return Int(c) }
  }
  return a.count - b.count
}

@inline(__always)
func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
  a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in compareBytes(pa, pb) } }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif
