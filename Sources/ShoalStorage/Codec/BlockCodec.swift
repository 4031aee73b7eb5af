import CLZ4

/// How a block's bytes are stored on disk.
package enum BlockCodecKind: UInt8, Sendable, CustomStringConvertible {
  /// Stored as is: LZ4 would have saved less than an eighth.
  case raw = 0
  /// LZ4 block format.
  case lz4 = 1
  /// LZ4 of a B+tree node in its packed form (`BlockCodec.packNode`): the node's table of
  /// 4-byte entry offsets is stored as varint entry lengths, which LZ4 alone cannot shrink.
  case lz4Node = 2
  /// A branch node with its fixed-width fields as varints and no LZ4 (`BlockCodec.packBranch`):
  /// smaller than LZ4 makes it (its checksums and separator keys do not compress), at a
  /// fraction of the time.
  case branch = 3

  package var description: String {
    switch self {
    case .raw: return "raw"
    case .lz4: return "lz4"
    case .lz4Node: return "lz4-node"
    case .branch: return "branch"
    }
  }
}

/// LZ4 compression of blocks, falling back to raw storage when compression does not pay.
enum BlockCodec {
  /// Compresses `input`; returns the codec used, the stored bytes zero-padded to a multiple
  /// of `granule` (a block's extent, ready to write), and how many of them are stored bytes.
  /// A node (`isNode`) is compressed in its packed form (`packNode`).
  /// `unpacked`, for a tree's root branch (which every commit rewrites and every writer of
  /// another process reads back, `CommitWriter.flush`), stores a branch of short keys raw: it
  /// is then at most about twice its packed size, where one of long keys may be many times
  /// its LZ4 form.
  static func encode(_ input: [UInt8], granule: Int, isNode: Bool = false, unpacked: Bool = false) -> (
    codec: BlockCodecKind, block: [UInt8], storedCount: Int
  ) {
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
    if unpacked, isNode, input[0] == NodeImage.branchKind,
      input.withUnsafeBytes({ p in
        // Each entry: a child pointer, its subtree count and key length, then the key.
        OffsetTable(p).map { p.count - $0.end <= $0.count * (BlockPointer.encodedSize + 10 + unpackedKeyLength) }
      }) == true
    {
      return raw()
    }
    if isNode, input[0] == NodeImage.branchKind, let packed = packBranch(input),
      packed.count <= input.count - input.count / 8
    {
      var block = packed
      block += repeatElement(0, count: padded(packed.count) - packed.count)
      return (.branch, block, packed.count)
    }
    let packed = isNode ? packNode(input) : nil
    let source = packed ?? input
    let bound = Int(LZ4_compressBound(Int32(source.count)))
    var written: Int32 = 0
    let output = [UInt8](unsafeUninitializedCapacity: padded(bound)) { dst, count in
      written = source.withUnsafeBytes { src in
        LZ4_compress_fast(
          src.baseAddress?.assumingMemoryBound(to: CChar.self),
          UnsafeMutableRawPointer(dst.baseAddress)?.assumingMemoryBound(to: CChar.self),
          Int32(source.count), Int32(bound), 1)
      }
      let stored = max(0, Int(written))
      let end = padded(stored)
      if let base = dst.baseAddress, end > stored { (base + stored).initialize(repeating: 0, count: end - stored) }
      count = end
    }
    // Keep the compressed form only when it saves at least an eighth.
    guard written > 0, Int(written) <= input.count - input.count / 8 else { return raw() }
    return (packed == nil ? .lz4 : .lz4Node, output, Int(written))
  }

  /// The longest average key of a root branch `encode` stores raw when asked (`unpacked`).
  static let unpackedKeyLength = 32

  /// The packed form of an encoded node (`DirtyNode.encode`, `NodeImage`): its header, the
  /// length of each entry as a varint in place of the `count + 1` u32 offsets, then the
  /// entries unchanged. Nil when `node` does not have a node's offset table (stored as
  /// plain LZ4 then).
  static func packNode(_ node: [UInt8]) -> [UInt8]? {
    node.withUnsafeBytes { p -> [UInt8]? in
      guard let source = p.baseAddress, let entries = OffsetTable(p) else { return nil }
      let (n, count, table) = (p.count, entries.count, entries.end)
      // Each length takes at most 5 varint bytes (it is below 2^32); written straight into
      // memory sized for the worst case, as this runs for every node a commit writes.
      return filled(capacity: 8 + 5 * count + (n - table)) { base in
        UnsafeMutableRawPointer(base).copyMemory(from: source, byteCount: 8)
        var w = 8
        var start = table
        for i in 0..<count {
          let end = entries.offset(i + 1)
          guard end >= start else { return nil }
          Varint.write(UInt64(end - start), to: base, at: &w)
          start = end
        }
        UnsafeMutableRawPointer(base + w).copyMemory(from: source + table, byteCount: n - table)
        return w + n - table
      }
    }
  }

  /// The node `packNode` packed, exactly `rawLength` bytes; nil for anything that is not a
  /// consistent packed node of that length.
  static func unpackNode(_ packed: UnsafeRawBufferPointer, rawLength: Int) -> [UInt8]? {
    let n = packed.count
    guard n >= 8 else { return nil }
    let count = Int(UInt32(littleEndian: packed.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
    guard count < rawLength else { return nil }
    let table = 8 + 4 * (count + 1)
    guard table <= rawLength else { return nil }
    return filled(capacity: rawLength) { out in
      guard let source = packed.baseAddress else { return nil }
      let base = UnsafeMutableRawPointer(out)
      base.copyMemory(from: source, byteCount: 8)
      var position = 8
      var offset = table
      base.storeBytes(of: UInt32(offset).littleEndian, toByteOffset: 8, as: UInt32.self)
      for i in 0..<count {
        // A length is below 2^32: at most 5 varint bytes.
        guard let length = Varint.read(packed, at: &position, limit: 5) else { return nil }
        offset += Int(length)
        guard offset <= rawLength else { return nil }
        base.storeBytes(of: UInt32(offset).littleEndian, toByteOffset: 8 + 4 * (i + 1), as: UInt32.self)
      }
      guard offset == rawLength, n - position == rawLength - table else { return nil }
      if rawLength > table {
        (base + table).copyMemory(from: source + position, byteCount: rawLength - table)
      }
      return rawLength
    }
  }

  /// The compact form of an encoded branch node (`NodeImage`): its 8-byte header, then per
  /// entry its child pointer's offset in granules, stored and raw lengths as varints, codec
  /// byte and checksum as they are, birth, subtree count and key length as varints, and the
  /// key. The offset table is implied by the entries. Nil when `node` is not a well-formed
  /// branch whose child offsets are granule multiples.
  static func packBranch(_ node: [UInt8]) -> [UInt8]? {
    node.withUnsafeBytes { p -> [UInt8]? in
      guard let source = p.baseAddress, let entries = OffsetTable(p), entries.count >= 1,
        p[0] == NodeImage.branchKind
      else { return nil }
      let (n, count, table) = (p.count, entries.count, entries.end)
      let fixed = BlockPointer.encodedSize + 10
      let granule = UInt64(FileLayout.granule)
      // Varints of at most 10 bytes for five fields, 9 fixed bytes: never longer than that.
      return filled(capacity: 8 + count * 60 + (n - table)) { base in
        UnsafeMutableRawPointer(base).copyMemory(from: source, byteCount: 8)
        var w = 8
        func varint(_ value: UInt64) { Varint.write(value, to: base, at: &w) }
        func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: p.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: p.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
        for i in 0..<count {
          let start = entries.offset(i)
          let end = entries.offset(i + 1)
          guard end >= start + fixed, end <= n else { return nil }
          let keyLength = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: start + fixed - 2, as: UInt16.self)))
          let childOffset = u64(start)
          guard end - start == fixed + keyLength, childOffset % granule == 0 else { return nil }
          varint(childOffset / granule)
          varint(UInt64(u32(start + 8)))
          varint(UInt64(u32(start + 12)))
          // Codec byte and checksum, 9 bytes, as they are.
          UnsafeMutableRawPointer(base + w).copyMemory(from: source + start + 16, byteCount: 9)
          w += 9
          varint(u64(start + 25))
          varint(u64(start + BlockPointer.encodedSize))
          varint(UInt64(keyLength))
          if keyLength > 0 {
            UnsafeMutableRawPointer(base + w).copyMemory(from: source + end - keyLength, byteCount: keyLength)
            w += keyLength
          }
        }
        return w
      }
    }
  }

  /// The branch `packBranch` packed, exactly `rawLength` bytes; nil for anything that is not
  /// a consistent packed branch of that length.
  static func unpackBranch(_ packed: UnsafeRawBufferPointer, rawLength: Int) -> [UInt8]? {
    let n = packed.count
    guard n >= 8, packed[0] == NodeImage.branchKind else { return nil }
    let count = Int(UInt32(littleEndian: packed.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
    let table = 8 + 4 * (count + 1)
    let fixed = BlockPointer.encodedSize + 10
    guard count >= 1, count <= rawLength / fixed, table <= rawLength else { return nil }
    return filled(capacity: rawLength) { out in
      guard let source = packed.baseAddress else { return nil }
      let base = UnsafeMutableRawPointer(out)
      base.copyMemory(from: source, byteCount: 8)
      var r = 8
      var w = table
      func varint() -> UInt64? { Varint.read(packed, at: &r) }
      for i in 0..<count {
        base.storeBytes(of: UInt32(w).littleEndian, toByteOffset: 8 + 4 * i, as: UInt32.self)
        guard let granules = varint(), granules <= UInt64.max / UInt64(FileLayout.granule),
          let stored = varint(), stored <= UInt64(UInt32.max), let raw = varint(), raw <= UInt64(UInt32.max),
          r + 9 <= n
        else { return nil }
        let codecAndChecksum = r
        r += 9
        guard let birth = varint(), let subtree = varint(), let keyLength = varint(), keyLength <= UInt64(UInt16.max),
          r + Int(keyLength) <= n, w + fixed + Int(keyLength) <= rawLength
        else { return nil }
        base.storeBytes(of: (granules * UInt64(FileLayout.granule)).littleEndian, toByteOffset: w, as: UInt64.self)
        base.storeBytes(of: UInt32(stored).littleEndian, toByteOffset: w + 8, as: UInt32.self)
        base.storeBytes(of: UInt32(raw).littleEndian, toByteOffset: w + 12, as: UInt32.self)
        (base + w + 16).copyMemory(from: source + codecAndChecksum, byteCount: 9)
        base.storeBytes(of: birth.littleEndian, toByteOffset: w + 25, as: UInt64.self)
        base.storeBytes(of: subtree.littleEndian, toByteOffset: w + BlockPointer.encodedSize, as: UInt64.self)
        base.storeBytes(of: UInt16(keyLength).littleEndian, toByteOffset: w + fixed - 2, as: UInt16.self)
        if keyLength > 0 { (base + w + fixed).copyMemory(from: source + r, byteCount: Int(keyLength)) }
        r += Int(keyLength)
        w += fixed + Int(keyLength)
      }
      base.storeBytes(of: UInt32(w).littleEndian, toByteOffset: 8 + 4 * count, as: UInt32.self)
      guard w == rawLength, r == n else { return nil }
      return rawLength
    }
  }

  /// Decompresses `stored` into exactly `rawLength` bytes, or returns nil if the bytes are not
  /// a valid LZ4 block of that length.
  /// With `exact` false, LZ4 may produce fewer bytes (at most `rawLength`): a packed node.
  static func decode(_ stored: UnsafeRawBufferPointer, codec: BlockCodecKind, rawLength: Int, exact: Bool = true)
    -> [UInt8]?
  {
    switch codec {
    case .raw:
      return stored.count == rawLength ? Array(stored) : nil
    case .branch:
      return unpackBranch(stored, rawLength: rawLength)
    case .lz4Node:
      // The packed form is never longer than the node.
      guard let packed = decode(stored, codec: .lz4, rawLength: rawLength, exact: false) else { return nil }
      return packed.withUnsafeBytes { unpackNode($0, rawLength: rawLength) }
    case .lz4:
      guard rawLength > 0, rawLength <= Int(Int32.max), stored.count <= Int(Int32.max) else {
        return nil
      }
      return filled(capacity: rawLength) { out in
        let produced = LZ4_decompress_safe(
          stored.baseAddress?.assumingMemoryBound(to: CChar.self),
          UnsafeMutableRawPointer(out).assumingMemoryBound(to: CChar.self), Int32(stored.count), Int32(rawLength))
        return (exact ? produced == Int32(rawLength) : produced > 0) ? Int(produced) : nil
      }
    }
  }

  /// The table of an encoded node (`NodeImage`): after its 8-byte header, `count + 1` u32
  /// offsets of its entries and of its end, checked to start right after the table and to
  /// end with the node; nil when the bytes do not hold such a table.
  private struct OffsetTable {
    let bytes: UnsafeRawBufferPointer
    let count: Int
    /// Where the table ends and the first entry starts.
    var end: Int { 8 + 4 * (count + 1) }

    init?(_ bytes: UnsafeRawBufferPointer) {
      guard bytes.count >= 12 else { return nil }
      self.bytes = bytes
      count = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
      guard end <= bytes.count, offset(0) == end, offset(count) == bytes.count else { return nil }
    }

    /// Where entry `i` starts (`i == count`: the node's end).
    func offset(_ i: Int) -> Int {
      Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8 + 4 * i, as: UInt32.self)))
    }
  }

  /// An array of at most `capacity` bytes that `fill` writes from the start: it returns how
  /// many bytes it wrote, or nil for input it rejects (the result is nil then).
  private static func filled(capacity: Int, _ fill: (UnsafeMutablePointer<UInt8>) -> Int?) -> [UInt8]? {
    var ok = false
    let out = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
      initialized = 0
      guard let base = buffer.baseAddress, let count = fill(base) else { return }
      initialized = count
      ok = true
    }
    return ok ? out : nil
  }
}
