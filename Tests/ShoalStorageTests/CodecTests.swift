import Testing

@testable import ShoalStorage

@Suite struct CodecTests {
  @Test func xxh64MatchesPublishedVectors() {
    #expect(Checksum.xxh64([]) == 0xEF46_DB37_51D8_E999)
    #expect(Checksum.xxh64(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
    // Inputs past the 32-byte stripe loop must differ from each other and be stable.
    let long = Array(0..<200).map { UInt8($0) }
    #expect(Checksum.xxh64(long) == Checksum.xxh64(long))
    #expect(Checksum.xxh64(long) != Checksum.xxh64(Array(long.dropLast())))
  }

  @Test func lz4RoundTripsAndFallsBackToRaw() throws {
    let text = Array(String(repeating: "a shoal of fish swims by; ", count: 200).utf8)
    let (codec, block, count) = BlockCodec.encode(text, granule: 128)
    #expect(codec == .lz4)
    #expect(block.count % 128 == 0 && block.count >= count && block.count < count + 128)
    #expect(block[count...].allSatisfy { $0 == 0 })
    let stored = Array(block[..<count])
    #expect(stored.count < text.count / 4)
    let back = stored.withUnsafeBytes { BlockCodec.decode($0, codec: .lz4, rawLength: text.count) }
    #expect(back == text)

    var rng = SplitMix64(seed: 42)
    let noise = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &rng) }
    let (noiseCodec, noiseBlock, noiseCount) = BlockCodec.encode(noise, granule: 128)
    #expect(noiseCodec == .raw && noiseCount == noise.count && Array(noiseBlock[..<noiseCount]) == noise)
    #expect(noiseBlock.count % 128 == 0 && noiseBlock[noiseCount...].allSatisfy { $0 == 0 })
  }

  @Test func damagedLZ4IsRejectedNotTrusted() {
    let text = Array(String(repeating: "compressible ", count: 300).utf8)
    let (_, block, count) = BlockCodec.encode(text, granule: 128)
    var stored = Array(block[..<count])
    stored[stored.count / 2] ^= 0xFF
    stored.removeLast(3)
    let back = stored.withUnsafeBytes { BlockCodec.decode($0, codec: .lz4, rawLength: text.count) }
    #expect(back == nil || back != text)
    // A wrong claimed length never decodes.
    let good = Array(block[..<count])
    #expect(good.withUnsafeBytes { BlockCodec.decode($0, codec: .lz4, rawLength: text.count + 1) } == nil)
  }

  @Test func changeRecordRoundTrips() {
    let record = ChangeRecord(
      version: 77,
      keyspaces: [
        KeyspaceChanges(
          keyspace: "people", created: true, cleared: false, dropped: false,
          changes: [
            KeyChange(kind: .insert, key: [1, 2, 3], payload: [0xFF]),
            KeyChange(kind: .update, key: [1, 2, 4], payload: []),
            KeyChange(kind: .delete, key: [9], payload: [1, 2]),
          ])
      ])
    #expect(ChangeRecord.decode(record.encode()) == record)
    #expect(ChangeRecord.decode(Array(record.encode().dropLast())) == nil)
  }

  @Test func freeSpaceCoalescesAndRoundTrips() {
    let start = FileLayout.dataStart
    let g = FileLayout.granule
    var space = FreeSpace(fileEnd: start + 1000 * g)
    space.free(offset: start, length: 2 * g, version: 5)
    space.free(offset: start + 2 * g, length: 4 * g, version: 6)
    space.free(offset: start + 10 * g, length: g, version: 9)
    space.promote(horizon: 6)
    #expect(space.available == [start: 6 * g])
    #expect(space.pending.count == 1)
    let a = space.allocateRun(3 * g, alignment: g)
    #expect(a == start)
    #expect(space.available == [start + 3 * g: 3 * g])
    let decoded = FreeSpace.decode(space.encode())
    #expect(decoded?.allExtents == space.allExtents)
    #expect(decoded?.fileEnd == space.fileEnd)
    // Space at the end is handed back.
    var tail = FreeSpace(fileEnd: start + 4 * g)
    tail.free(offset: start + 2 * g, length: 2 * g, version: 1)
    tail.promote(horizon: 1)
    #expect(tail.fileEnd == start + 2 * g)
  }

  /// A commit's run starts on a page boundary inside free space when one fits, else in any
  /// extent that fits, else at the end of the file (unaligned: appended files stay dense).
  @Test func runsPreferPageAlignedWindows() {
    let page: UInt64 = 4096
    let g = FileLayout.granule
    let base = 16 * page
    var space = FreeSpace(fileEnd: base + 8 * page + g)
    // One extent that straddles a page boundary, and one that holds a whole aligned page.
    space.free(offset: base + page - 2 * g, length: 4 * g, version: 1)
    space.free(offset: base + 3 * page + g, length: 2 * page, version: 1)
    space.promote(horizon: 1)
    let aligned = space.allocateRun(page, alignment: page)
    #expect(aligned == base + 4 * page)
    #expect(space.available[base + 3 * page + g] == page - g)
    #expect(space.available[base + 5 * page] == g)
    // No aligned window of two granules is left except in the straddling extent's second half.
    let small = space.allocateRun(2 * g, alignment: page)
    #expect(small == base + page)
    // Nothing fits a page now: the file grows.
    let end = space.allocateRun(page, alignment: page)
    #expect(end == base + 8 * page + g)
    #expect(space.fileEnd == base + 9 * page + g)
    #expect(FreeSpace.decode(space.encode())?.allExtents == space.allExtents)
  }
}
