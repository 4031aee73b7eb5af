// The data every engine gets: generated once per process, deterministically, so all three
// engines store, read and scan exactly the same bytes.

/// SplitMix64: a tiny, fast, deterministic generator (and its finalizer is a bijection on
/// 64-bit integers, which makes it a good key permutation).
public struct SplitMix64: Sendable {
  public var state: UInt64

  public init(seed: UInt64) { state = seed }

  public static func mix(_ value: UInt64) -> UInt64 {
    var z = value
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    return SplitMix64.mix(state)
  }
}

/// 200 short English words; values are drawn from them so they look like text and LZ4 can
/// compress them the way it compresses real text (random bytes would not compress at all).
let vocabulary: [[UInt8]] = """
  the of and to in is you that it he was for on are as with his they at be this have from or one \
  had by word but not what all were we when your can said there use an each which she do how their \
  if will up other about out many then them these so some her would make like him into time has look \
  two more write go see number no way could people my than first water been call who oil its now find \
  long down day did get come made may part over new sound take only little work know place year live \
  me back give most very after thing our just name good sentence man think say great where help through \
  much before line right too mean old any same tell boy follow came want show also around form three \
  small set put end does another well large must big even such because turn here why ask went men read \
  need land different home us move try kind hand picture again change off play spell air away animal \
  house point page letter mother answer found study still learn should america world high every near \
  add food between own below country plant last school father keep tree never start city earth eye \
  light thought head under story saw left few while along might close something seem next hard open \
  example begin life always those both paper together got group often run
  """.split(separator: " ").map { Array($0.utf8) }

public enum DatasetShape {
  public static let entryCount = 1_000_000
  public static let keySize = 16
  public static let valueSize = 100
  /// Point reads per iteration of the point-read benchmark.
  public static let readCount = 100_000
  /// Single-entry commits per iteration of the durable-commit benchmark.
  public static let commitCount = 1_000
}

/// Key `i`: 8 bytes of a bijective hash of `i` (big-endian, so the insertion order 0, 1, 2, …
/// is a random key order) followed by `i` itself (big-endian).
public func benchKey(_ i: Int) -> [UInt8] {
  let hashed = SplitMix64.mix(UInt64(i) &+ 0x5EED_0F5A_0A1B_2C3D)
  var key = [UInt8](repeating: 0, count: DatasetShape.keySize)
  for b in 0..<8 {
    key[b] = UInt8(truncatingIfNeeded: hashed >> (56 - 8 * UInt64(b)))
    key[8 + b] = UInt8(truncatingIfNeeded: UInt64(i) >> (56 - 8 * UInt64(b)))
  }
  return key
}

/// Value `i`: words drawn from `vocabulary` by a generator seeded with `i`, separated by
/// spaces, cut to exactly `valueSize` bytes.
public func benchValue(_ i: Int) -> [UInt8] {
  var rng = SplitMix64(seed: UInt64(i) ^ 0xA5A5_5A5A_C3C3_3C3C)
  var value: [UInt8] = []
  value.reserveCapacity(DatasetShape.valueSize + 16)
  while value.count < DatasetShape.valueSize {
    if !value.isEmpty { value.append(0x20) }
    value.append(contentsOf: vocabulary[Int(rng.next() % UInt64(vocabulary.count))])
  }
  value.removeLast(value.count - DatasetShape.valueSize)
  return value
}

/// The 1M entries (in insertion order, which is random key order) and the point-read order.
public final class Dataset: Sendable {
  public let keys: [[UInt8]]
  public let values: [[UInt8]]
  /// Indices into `keys` for the point reads: existing keys in random order.
  public let readOrder: [Int]
  /// Sum over the read order of each value's length and first byte: what a correct pass of
  /// point reads computes.
  public let expectedReadSum: Int
  /// Sum over all entries of the key's and the value's lengths and first bytes: what a correct
  /// full scan computes.
  public let expectedScanSum: Int

  public init(count: Int = DatasetShape.entryCount) {
    keys = (0..<count).map(benchKey)
    values = (0..<count).map(benchValue)
    var rng = SplitMix64(seed: 0x00C0_FFEE)
    readOrder = (0..<DatasetShape.readCount).map { _ in Int(rng.next() % UInt64(count)) }
    var reads = 0
    for i in readOrder { reads &+= values[i].count &+ Int(values[i][0]) }
    expectedReadSum = reads
    var scan = 0
    for i in 0..<count { scan &+= keys[i].count &+ Int(keys[i][0]) &+ values[i].count &+ Int(values[i][0]) }
    expectedScanSum = scan
  }
}

/// Generated on first use (each benchmark runs in a process of its own).
public let dataset = Dataset()
