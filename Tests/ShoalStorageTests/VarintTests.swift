import Testing

@testable import ShoalStorage

/// The one varint codec every format of the engine and the object layer uses.
@Suite struct VarintTests {
  static let samples: [UInt64] = [0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, 300, 1 << 32, UInt64(Int64.max), .max]

  @Test(arguments: samples) func appendReadAndWriteAgree(_ value: UInt64) {
    var appended: [UInt8] = []
    Varint.append(value, to: &appended)
    #expect(appended.count == Varint.size(of: value))
    #expect(appended.count <= Varint.maximumSize)
    // Every byte but the last has its high bit set.
    #expect(appended.dropLast().allSatisfy { $0 >= 0x80 } && appended.last.map { $0 < 0x80 } == true)
    var written = [UInt8](repeating: 0xEE, count: Varint.maximumSize)
    var end = 0
    written.withUnsafeMutableBufferPointer { buffer in
      if let base = buffer.baseAddress { Varint.write(value, to: base, at: &end) }
    }
    #expect(Array(written[..<end]) == appended)
    var position = 0
    let read = appended.withUnsafeBytes { Varint.read($0, at: &position) }
    #expect(read == value && position == appended.count)
  }

  @Test func knownEncodings() {
    var out: [UInt8] = []
    Varint.append(300, to: &out)
    #expect(out == [0xAC, 0x02])
    out = []
    Varint.append(.max, to: &out)
    #expect(out == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
  }

  @Test func truncatedAndOverlongInputIsNil() {
    var position = 0
    #expect(([0x80, 0x80] as [UInt8]).withUnsafeBytes { Varint.read($0, at: &position) } == nil)
    position = 0
    #expect([UInt8]().withUnsafeBytes { Varint.read($0, at: &position) } == nil)
    // Eleven continuation bytes: longer than any 64-bit value.
    let overlong = [UInt8](repeating: 0x80, count: 11) + [0x01]
    position = 0
    #expect(overlong.withUnsafeBytes { Varint.read($0, at: &position) } == nil)
    // A field limited to 5 bytes rejects a sixth.
    var six: [UInt8] = []
    Varint.append(1 << 35, to: &six)
    #expect(six.count == 6)
    position = 0
    #expect(six.withUnsafeBytes { Varint.read($0, at: &position, limit: 5) } == nil)
    position = 0
    #expect(six.withUnsafeBytes { Varint.read($0, at: &position, limit: 6) } == 1 << 35)
  }

  @Test func consecutiveVarintsAreReadFromWhereTheLastEnded() {
    var bytes: [UInt8] = []
    for value in Self.samples { Varint.append(value, to: &bytes) }
    var position = 0
    bytes.withUnsafeBytes { buffer in
      for value in Self.samples { #expect(Varint.read(buffer, at: &position) == value) }
      #expect(position == buffer.count)
      // At the end there is nothing to read, and the position stays.
      #expect(Varint.read(buffer, at: &position) == nil && position == buffer.count)
    }
  }

  @Test func theByteReaderReadsWhatTheByteWriterWrote() {
    var writer = ByteWriter()
    for value in Self.samples { writer.varint(value) }
    var reader = ByteReader(writer.bytes)
    for value in Self.samples { #expect(reader.varint() == value) }
    #expect(reader.atEnd && reader.varint() == nil)
  }

  /// The word-at-a-time read agrees with the byte loop on every varint length, at every
  /// distance from the buffer's end, under every limit: the value, the position after it,
  /// and nil for what the loop rejects.
  @Test func theWordReadAgreesWithTheByteLoop() {
    var rng = SplitMix64(seed: 11)
    var values: [UInt64] = [0, 0x7F, 0x80, 0x3FFF, 0x4000, (1 << 56) - 1, 1 << 56, (1 << 63) - 1, .max]
    for bits in 1...64 { values.append(UInt64.random(in: 0...(UInt64.max >> UInt64(64 - bits)), using: &rng)) }
    for value in values {
      var encoded: [UInt8] = []
      Varint.append(value, to: &encoded)
      for padding in 0...9 {
        // Bytes after the varint: some with their high bit set, which must not be read.
        let tail = (0..<padding).map { _ in UInt8.random(in: 0...255, using: &rng) }
        for lead in [0, 3] {
          let bytes = [UInt8](repeating: 0x05, count: lead) + encoded + tail
          for limit in 1...11 {
            bytes.withUnsafeBytes { buffer in
              var wordPosition = lead
              var bytePosition = lead
              let word = Varint.readLong(buffer, at: &wordPosition, limit: limit)
              let byte = Varint.readBytewise(buffer, at: &bytePosition, limit: limit)
              #expect(
                word == byte && wordPosition == bytePosition, "bytes \(bytes) from \(lead), limit \(limit)")
              if limit >= encoded.count { #expect(word == value && wordPosition == lead + encoded.count) }
            }
          }
        }
      }
    }
    // Eight continuation bytes and more: the byte loop's answer.
    let unterminated = [UInt8](repeating: 0xFF, count: 12)
    unterminated.withUnsafeBytes { buffer in
      var position = 0
      #expect(Varint.readLong(buffer, at: &position, limit: 10) == nil)
    }
  }
}
