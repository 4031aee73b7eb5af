import Foundation
import ShoalStorage

/// The compact binary form of rows and values: a tag byte per value, integers as zigzag
/// varints, strings and data length-prefixed. The engine compresses the nodes holding them.
enum RowCodec {
  private enum Tag: UInt8 {
    /// `date` holds seconds since 1970 as a `Double`, which cannot hold every `Date` exactly:
    /// files written before `dateSinceReference` have it, and index keys keep it (an index
    /// only proposes candidates, which the query then tests exactly). `dateSinceReference`
    /// holds what `Date` itself holds (seconds since 2001), so a date reads back bit-identical.
    case null = 0, isFalse, isTrue, int, float, double, string, data, date, uuid, objectId, decimal, link,
      typedLink, list, map, dateSinceReference
  }

  static func encode(_ row: [RowValue]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(16 + row.count * 8)
    Varint.append(UInt64(row.count), to: &out)
    for value in row { encode(value, into: &out) }
    return out
  }

  static func encode(_ value: RowValue, into out: inout [UInt8]) {
    switch value {
    case .null: out.append(Tag.null.rawValue)
    case .bool(let b): out.append(b ? Tag.isTrue.rawValue : Tag.isFalse.rawValue)
    case .int(let i):
      out.append(Tag.int.rawValue)
      Varint.append(UInt64(bitPattern: (i << 1) ^ (i >> 63)), to: &out)
    case .float(let f):
      out.append(Tag.float.rawValue)
      withUnsafeBytes(of: f.bitPattern.littleEndian) { out.append(contentsOf: $0) }
    case .double(let d):
      out.append(Tag.double.rawValue)
      withUnsafeBytes(of: d.bitPattern.littleEndian) { out.append(contentsOf: $0) }
    case .string(let s):
      out.append(Tag.string.rawValue)
      writeBytes(Array(s.utf8), into: &out)
    case .data(let d):
      out.append(Tag.data.rawValue)
      writeBytes(Array(d), into: &out)
    case .date(let d):
      out.append(Tag.dateSinceReference.rawValue)
      withUnsafeBytes(of: d.timeIntervalSinceReferenceDate.bitPattern.littleEndian) { out.append(contentsOf: $0) }
    case .uuid(let u):
      out.append(Tag.uuid.rawValue)
      withUnsafeBytes(of: u.uuid) { out.append(contentsOf: $0) }
    case .objectId(let o):
      out.append(Tag.objectId.rawValue)
      out.append(contentsOf: o.bytes)
    case .decimal(let d):
      out.append(Tag.decimal.rawValue)
      writeBytes(d.storageBytes, into: &out)
    case .link(let key):
      out.append(Tag.link.rawValue)
      Varint.append(key, to: &out)
    case .typedLink(let className, let key):
      out.append(Tag.typedLink.rawValue)
      writeBytes(Array(className.utf8), into: &out)
      Varint.append(key, to: &out)
    case .list(let items):
      out.append(Tag.list.rawValue)
      Varint.append(UInt64(items.count), to: &out)
      for item in items { encode(item, into: &out) }
    case .map(let entries):
      out.append(Tag.map.rawValue)
      Varint.append(UInt64(entries.count), to: &out)
      for entry in entries {
        writeBytes(Array(entry.key.utf8), into: &out)
        encode(entry.value, into: &out)
      }
    }
  }

  static func decode(_ bytes: [UInt8]) throws -> [RowValue] {
    try bytes.withUnsafeBytes { buffer in
      var reader = Reader(buffer: buffer)
      let count = try reader.varint()
      guard count <= UInt64(buffer.count) else { throw reader.corrupt() }
      var row: [RowValue] = []
      row.reserveCapacity(Int(count))
      for _ in 0..<count { row.append(try reader.value()) }
      return row
    }
  }

  /// Decodes a row from raw bytes (a cursor's value, valid only during its callback).
  static func decode(buffer: UnsafeRawBufferPointer) throws -> [RowValue] {
    var reader = Reader(buffer: buffer)
    let count = try reader.varint()
    guard count <= UInt64(buffer.count) else { throw reader.corrupt() }
    var row: [RowValue] = []
    row.reserveCapacity(Int(count))
    for _ in 0..<count { row.append(try reader.value()) }
    return row
  }

  /// Column `index` of an encoded row, skipping the columns before it without decoding them
  /// (`.null` past the row's end).
  static func column(_ index: Int, of buffer: UnsafeRawBufferPointer) throws -> RowValue {
    var columns = try ColumnReader(buffer)
    return try columns.value(at: index)
  }

  /// Reads `Double` and integer columns of an encoded row in place, in ascending order, for the
  /// scans of queries: no `RowValue`, no error to build. Every read says nil when the row is not
  /// one it reads quickly (the column holds another kind of value, or is missing, or a column
  /// before it is malformed or of a kind it does not skip); the caller then reads the row with
  /// `ColumnReader`, which decodes the value or says what is wrong.
  struct QuickColumnReader {
    private let bytes: UnsafePointer<UInt8>
    private let end: Int
    private var position = 0
    private var count: UInt64 = 0
    /// The index of the column at `position`.
    private var next = 0
    /// The column read last (-1 for none) and where it starts, for a second test of it.
    private var lastIndex = -1
    private var lastStart = 0

    @inline(__always)
    init?(_ buffer: UnsafeRawBufferPointer) {
      guard let base = buffer.baseAddress else { return nil }
      bytes = base.assumingMemoryBound(to: UInt8.self)
      end = buffer.count
      guard let count = varint() else { return nil }
      self.count = count
    }

    /// The varint at `position`.
    @inline(__always)
    private mutating func varint() -> UInt64? {
      Varint.read(UnsafeRawBufferPointer(start: bytes, count: end), at: &position)
    }

    /// Moves past the varint at `position` without computing it; false when it is malformed.
    @inline(__always)
    private mutating func skipVarint() -> Bool {
      let last = Swift.min(end, position + Varint.maximumSize)
      while position < last {
        let byte = bytes[position]
        position += 1
        if byte < 0x80 { return true }
      }
      return false
    }

    /// Moves to the start of column `index` (not below the previous read's); false when it
    /// cannot.
    @inline(__always)
    private mutating func seek(_ index: Int) -> Bool {
      if index == lastIndex {
        position = lastStart
        next = index
        return true
      }
      guard UInt64(index) < count else { return false }
      while next < index {
        guard position < end else { return false }
        let tag = bytes[position]
        position += 1
        switch tag {
        case Tag.null.rawValue, Tag.isFalse.rawValue, Tag.isTrue.rawValue: break
        case Tag.int.rawValue, Tag.link.rawValue: guard skipVarint() else { return false }
        case Tag.float.rawValue: position += 4
        case Tag.double.rawValue, Tag.date.rawValue, Tag.dateSinceReference.rawValue: position += 8
        case Tag.objectId.rawValue: position += 12
        case Tag.uuid.rawValue: position += 16
        case Tag.string.rawValue, Tag.data.rawValue, Tag.decimal.rawValue:
          guard let length = varint(), length <= UInt64(end - position) else { return false }
          position += Int(length)
        default: return false
        }
        next += 1
      }
      lastIndex = index
      lastStart = position
      return true
    }

    /// Column `index` when it holds a `Double`.
    @inline(__always)
    mutating func double(at index: Int) -> Double? {
      guard seek(index), position < end - 8, bytes[position] == Tag.double.rawValue else { return nil }
      let raw = UnsafeRawPointer(bytes + position + 1).loadUnaligned(as: UInt64.self)
      position += 9
      next += 1
      return Double(bitPattern: UInt64(littleEndian: raw))
    }

    /// Column `index` when it holds an integer.
    @inline(__always)
    mutating func int(at index: Int) -> Int64? {
      guard seek(index), position < end, bytes[position] == Tag.int.rawValue else { return nil }
      position += 1
      guard let z = varint() else { return nil }
      next += 1
      return RowCodec.zigzagDecoded(z)
    }
  }

  @inline(__always)
  private static func zigzagDecoded(_ z: UInt64) -> Int64 { Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1))) }

  /// Reads chosen columns of an encoded row, in ascending order, skipping the others undecoded
  /// (a missing column reads as null, as `decode` pads it).
  struct ColumnReader {
    private var reader: Reader
    private let count: UInt64
    /// The index of the column the reader is at.
    private var next = 0
    /// The column read last (-1 for none) and where it starts, for a second test of the same
    /// column. (Only plain integers: copying the reader costs nothing.)
    private var lastIndex = -1
    private var lastStart = 0

    init(_ buffer: UnsafeRawBufferPointer) throws(Realm.Error) {
      reader = Reader(buffer: buffer)
      count = try reader.varint()
    }

    /// Column `index`, which must not be below the previous call's.
    mutating func value(at index: Int) throws(Realm.Error) -> RowValue {
      if index == lastIndex {
        var again = reader
        again.position = lastStart
        return try again.value()
      }
      guard UInt64(index) < count else { return .null }
      while next < index {
        try reader.skip()
        next += 1
      }
      lastIndex = index
      lastStart = reader.position
      next += 1
      return try reader.value()
    }
  }

  static func encodeValue(_ value: RowValue) -> [UInt8] {
    var out: [UInt8] = []
    encode(value, into: &out)
    return out
  }

  /// The form of a value in an index key: a date keeps the seconds-since-1970 form every
  /// index was built with (see `Tag`); everything else as `encodeValue`.
  static func encodeIndexValue(_ value: RowValue) -> [UInt8] {
    guard case .date(let d) = value else { return encodeValue(value) }
    var out: [UInt8] = [Tag.date.rawValue]
    withUnsafeBytes(of: d.timeIntervalSince1970.bitPattern.littleEndian) { out.append(contentsOf: $0) }
    return out
  }

  private static func writeBytes(_ bytes: [UInt8], into out: inout [UInt8]) {
    Varint.append(UInt64(bytes.count), to: &out)
    out.append(contentsOf: bytes)
  }

  private struct Reader {
    let buffer: UnsafeRawBufferPointer
    var position = 0

    func corrupt() -> Realm.Error {
      Realm.Error(.fail, "Stored object data is corrupt (byte \(position) of a \(buffer.count)-byte row)")
    }

    @inline(__always)
    mutating func byte() throws(Realm.Error) -> UInt8 {
      guard position < buffer.count else { throw corrupt() }
      defer { position += 1 }
      return buffer[position]
    }

    @inline(__always)
    mutating func varint() throws(Realm.Error) -> UInt64 {
      guard let value = Varint.read(buffer, at: &position) else { throw corrupt() }
      return value
    }

    @inline(__always)
    mutating func bytes(_ count: Int) throws(Realm.Error) -> UnsafeRawBufferPointer {
      guard count >= 0, count <= buffer.count - position else { throw corrupt() }
      defer { position += count }
      return UnsafeRawBufferPointer(rebasing: buffer[position..<position + count])
    }

    @inline(__always)
    mutating func lengthPrefixed() throws(Realm.Error) -> UnsafeRawBufferPointer {
      let length = try varint()
      guard length <= UInt64(buffer.count) else { throw corrupt() }
      return try bytes(Int(length))
    }

    @inline(__always)
    mutating func fixed64() throws(Realm.Error) -> UInt64 {
      UInt64(littleEndian: try bytes(8).loadUnaligned(as: UInt64.self))
    }

    mutating func string() throws(Realm.Error) -> String {
      let raw = try lengthPrefixed()
      return String(decoding: raw, as: UTF8.self)
    }

    /// Moves past `count` bytes.
    @inline(__always)
    mutating func advance(_ count: UInt64) throws(Realm.Error) {
      guard count <= UInt64(buffer.count - position) else { throw corrupt() }
      position += Int(count)
    }

    /// Moves past one value without decoding it: the common kinds inline, the rest in
    /// `skip(tag:)`.
    @inline(__always)
    mutating func skip() throws(Realm.Error) {
      let byte = try byte()
      switch byte {
      case Tag.null.rawValue, Tag.isFalse.rawValue, Tag.isTrue.rawValue: return
      case Tag.int.rawValue, Tag.link.rawValue: _ = try varint()
      case Tag.double.rawValue, Tag.date.rawValue, Tag.dateSinceReference.rawValue: try advance(8)
      case Tag.string.rawValue, Tag.data.rawValue: try advance(try varint())
      default:
        guard let tag = Tag(rawValue: byte) else { throw corrupt() }
        try skip(tag: tag)
      }
    }

    /// Moves past the rest of a value whose tag was read.
    mutating func skip(tag: Tag) throws(Realm.Error) {
      switch tag {
      case .null, .isFalse, .isTrue: return
      case .int, .link: _ = try varint()
      case .float: _ = try bytes(4)
      case .double, .date, .dateSinceReference: _ = try bytes(8)
      case .string, .data, .decimal: _ = try lengthPrefixed()
      case .uuid: _ = try bytes(16)
      case .objectId: _ = try bytes(12)
      case .typedLink:
        _ = try lengthPrefixed()
        _ = try varint()
      case .list:
        let count = try varint()
        for _ in 0..<count { try skip() }
      case .map:
        let count = try varint()
        for _ in 0..<count {
          _ = try lengthPrefixed()
          try skip()
        }
      }
    }

    mutating func value() throws(Realm.Error) -> RowValue {
      guard let tag = Tag(rawValue: try byte()) else { throw corrupt() }
      switch tag {
      case .null: return .null
      case .isFalse: return .bool(false)
      case .isTrue: return .bool(true)
      case .int:
        return .int(RowCodec.zigzagDecoded(try varint()))
      case .float:
        let raw = try bytes(4)
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(raw[i]) << (8 * UInt32(i)) }
        return .float(Float(bitPattern: v))
      case .double: return .double(Double(bitPattern: try fixed64()))
      case .string: return .string(try string())
      case .data: return .data(Data(try lengthPrefixed()))
      case .date: return .date(Date(timeIntervalSince1970: Double(bitPattern: try fixed64())))
      case .dateSinceReference: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed64())))
      case .uuid:
        let raw = try bytes(16)
        var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: raw) }
        return .uuid(UUID(uuid: u))
      case .objectId: return .objectId(ObjectId(bytes: Array(try bytes(12))))
      case .decimal: return .decimal(Decimal128(storage: Array(try lengthPrefixed())))
      case .link: return .link(try varint())
      case .typedLink:
        let name = try string()
        return .typedLink(className: name, key: try varint())
      case .list:
        let count = try varint()
        guard count <= UInt64(buffer.count - position) else { throw corrupt() }
        var items: [RowValue] = []
        items.reserveCapacity(Int(count))
        for _ in 0..<count { items.append(try value()) }
        return .list(items)
      case .map:
        let count = try varint()
        guard count <= UInt64(buffer.count - position) else { throw corrupt() }
        var entries: [RowValue.MapEntry] = []
        entries.reserveCapacity(Int(count))
        for _ in 0..<count {
          let key = try string()
          entries.append(RowValue.MapEntry(key: key, value: try value()))
        }
        return .map(entries)
      }
    }
  }
}
