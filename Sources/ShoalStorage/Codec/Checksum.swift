/// XXH64, the 64-bit xxHash (from its published specification): the checksum of every stored
/// block and meta record. Fast enough (several GB/s optimised) to verify every read.
enum Checksum {
  private static let p1: UInt64 = 11_400_714_785_074_694_791
  private static let p2: UInt64 = 14_029_467_366_897_019_727
  private static let p3: UInt64 = 1_609_587_929_392_839_161
  private static let p4: UInt64 = 9_650_029_242_287_828_579
  private static let p5: UInt64 = 2_870_177_450_012_600_261

  @inline(__always) private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 {
    (x << r) | (x >> (64 - r))
  }
  @inline(__always) private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
    rotl(acc &+ input &* p2, 31) &* p1
  }
  @inline(__always) private static func merge(_ acc: UInt64, _ value: UInt64) -> UInt64 {
    (acc ^ round(0, value)) &* p1 &+ p4
  }

  static func xxh64(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
    let count = bytes.count
    var index = 0
    var h: UInt64
    @inline(__always) func load64(_ i: Int) -> UInt64 {
      UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
    }
    if count >= 32 {
      var v1 = seed &+ p1 &+ p2
      var v2 = seed &+ p2
      var v3 = seed
      var v4 = seed &- p1
      while index + 32 <= count {
        v1 = round(v1, load64(index))
        v2 = round(v2, load64(index + 8))
        v3 = round(v3, load64(index + 16))
        v4 = round(v4, load64(index + 24))
        index += 32
      }
      h = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
      h = merge(h, v1)
      h = merge(h, v2)
      h = merge(h, v3)
      h = merge(h, v4)
    } else {
      h = seed &+ p5
    }
    h = h &+ UInt64(count)
    while index + 8 <= count {
      h ^= round(0, load64(index))
      h = rotl(h, 27) &* p1 &+ p4
      index += 8
    }
    if index + 4 <= count {
      let word = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self))
      h ^= UInt64(word) &* p1
      h = rotl(h, 23) &* p2 &+ p3
      index += 4
    }
    while index < count {
      h ^= UInt64(bytes[index]) &* p5
      h = rotl(h, 11) &* p1
      index += 1
    }
    h ^= h >> 33
    h = h &* p2
    h ^= h >> 29
    h = h &* p3
    h ^= h >> 32
    return h
  }

  static func xxh64(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
    bytes.withUnsafeBytes { xxh64($0, seed: seed) }
  }
}

/// XXH64 for the layers above the engine (the object layer's keys for long indexed values).
public enum XXHash64 {
  /// The 64-bit xxHash of `bytes`.
  public static func hash(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 { Checksum.xxh64(bytes, seed: seed) }
}
