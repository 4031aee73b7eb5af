import Foundation
import ShoalStorage

// The keys of secondary indexes (`@Persisted(indexed: true)`), one entry per object:
// `OrderedIndexKey.key(value) + object key`. Within each kind of value, the byte order of
// the keys follows the order queries compare values in (`QueryValueComparison.order`), so
// that equality is a prefix of keys, and a range (`>`, `>=`, `<`, `<=`, `BETWEEN`) or a
// case-sensitive `BEGINSWITH` is a range of keys: the executor reads the index between two
// keys instead of scanning the class.
//
// The order only needs to be monotone (a <= b implies key(a) <= key(b)), not strict: an index
// proposes candidates, and the query then tests each exactly. So integers beyond 2^53 may
// share a key with their neighbours (numbers of every type are keyed as the nearest `Double`,
// which orders them together as queries do), and long strings are keyed by their first
// `longValuePrefix` bytes.
//
// Layout, after a kind byte:
// - null: nothing; bool: 0 or 1.
// - number (int, float, double): the `Double`'s bits made order-preserving (sign bit flipped,
//   all bits flipped for negatives), big-endian; -0 is 0 and NaN sorts below every number.
// - string and data: the bytes with each 0x00 escaped as 0x00 0xFF, then 0x00 0x00; a value
//   longer than `longValuePrefix` bytes is cut there and ends with 0x00 0x01 instead (after
//   every whole value with the same start, before every value that continues with a higher
//   byte).
// - date: seconds since 2001 (what `Date` holds), as a number.
// - object id and UUID: their bytes.
// - anything else (Decimal128, links): `TableInfo.indexKey`, for equality only.
enum OrderedIndexKey {
  /// The first byte of a key: the kind of the value (numbers of every type share one).
  enum Kind: UInt8 {
    case null = 1, bool, number, string, data, date, objectId, uuid
    /// Values indexed for equality only.
    case other = 0x20
  }

  /// How much of a long string or data value its key holds.
  static let longValuePrefix = 480

  /// The key of `value` (the index entry is this followed by the object key).
  static func key(_ value: RowValue) -> [UInt8] {
    switch value {
    case .null: return [Kind.null.rawValue]
    case .bool(let b): return [Kind.bool.rawValue, b ? 1 : 0]
    case .int(let i): return number(Double(i))
    case .float(let f): return number(Double(f))
    case .double(let d): return number(d)
    case .string(let s): return bytes(Array(s.utf8), kind: .string, terminated: true)
    case .data(let d): return bytes(Array(d), kind: .data, terminated: true)
    case .date(let d): return number(d.timeIntervalSinceReferenceDate, kind: .date)
    case .objectId(let id): return [Kind.objectId.rawValue] + id.bytes
    case .uuid(let u): return withUnsafeBytes(of: u.uuid) { [Kind.uuid.rawValue] + $0 }
    case .decimal, .link, .typedLink, .list, .map: return [Kind.other.rawValue] + TableInfo.indexKey(value)
    }
  }

  /// The keys of the values `v` with `lower <= v <= upper` (a side nil is unbounded), as a
  /// key range of the index: every such value's entries lie in it (with others, which the
  /// query's own test removes). `lower` and `upper` must be of one kind (numbers of any type
  /// together); nil when they are not, or not of an ordered kind.
  static func range(from lower: RowValue?, to upper: RowValue?) -> KeyRange? {
    guard let kind = orderedKind(lower ?? upper) else { return nil }
    for bound in [lower, upper] where bound != nil && orderedKind(bound) != kind { return nil }
    let from = lower.map(key) ?? [kind.rawValue]
    let to = upper.map(key) ?? [kind.rawValue]
    // Every entry whose key starts with `to` (the value and the object key after it) is in.
    return KeyRange(lower: from, lowerInclusive: true, upper: KeyRange.prefix(to).upper, upperInclusive: false)
  }

  /// The keys of the strings starting with `prefix` (case-sensitive `BEGINSWITH`).
  static func range(beginningWith prefix: String) -> KeyRange {
    let bytes = Array(prefix.utf8.prefix(longValuePrefix))
    return .prefix(self.bytes(bytes, kind: .string, terminated: false))
  }

  /// Whether a number's key (kind byte and 8 bytes) stands for a value within 2^53 of zero,
  /// where every integer has a `Double` of its own.
  static func isExactInteger(_ key: ArraySlice<UInt8>) -> Bool {
    guard key.count == 9 else { return false }
    var ordered: UInt64 = 0
    for byte in key.dropFirst() { ordered = ordered << 8 | UInt64(byte) }
    let bits = ordered & (1 << 63) != 0 ? ordered & ~(1 << 63) : ~ordered
    let value = Double(bitPattern: bits)
    return value.magnitude <= 9_007_199_254_740_992
  }

  /// The kind of a value whose keys are ordered, or nil.
  private static func orderedKind(_ value: RowValue?) -> Kind? {
    switch value {
    case .int, .float, .double: return .number
    case .string: return .string
    case .data: return .data
    case .date: return .date
    case .objectId: return .objectId
    case .uuid: return .uuid
    case .bool: return .bool
    default: return nil
    }
  }

  private static func number(_ value: Double, kind: Kind = .number) -> [UInt8] {
    var out: [UInt8] = [kind.rawValue]
    let ordered: UInt64
    if value.isNaN {
      ordered = 0
    } else {
      let bits = (value == 0 ? 0.0 : value).bitPattern
      ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }
    withUnsafeBytes(of: ordered.bigEndian) { out.append(contentsOf: $0) }
    return out
  }

  private static func bytes(_ value: [UInt8], kind: Kind, terminated: Bool) -> [UInt8] {
    var out: [UInt8] = [kind.rawValue]
    out.reserveCapacity(min(value.count, longValuePrefix) + 3)
    for byte in value.prefix(longValuePrefix) {
      out.append(byte)
      if byte == 0 { out.append(0xFF) }
    }
    if terminated { out += [0, value.count > longValuePrefix ? 1 : 0] }
    return out
  }
}
