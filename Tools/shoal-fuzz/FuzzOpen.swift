import ShoalStorage
import ShoalTrials

#if canImport(Glibc)
  import Glibc
#endif

/// The fuzz body: open a file and walk all of it (verify, every keyspace, the change records).
/// An input that starts with Shoal's magic is a whole file; any other input is a list of
/// 5-byte patches (little-endian u32 offset, byte to XOR) applied to a valid reference file,
/// so that mutations reach past the header and checksums into the trees.
///
/// With `SHOAL_FUZZ_ENCRYPTED` set in the environment, the reference file is encrypted and every
/// input is opened with its key (`PowerLossTrial.trialKey(seed: 1)`): the mutations then hit
/// sealed blocks and authenticated records.
enum FuzzOpen {
  static let encrypted = getenv("SHOAL_FUZZ_ENCRYPTED") != nil
  static let reference: [UInt8] = (try? CorruptionTrials(seed: 1, encrypted: encrypted).image) ?? []
  static let key = encrypted ? PowerLossTrial.trialKey(seed: 1) : nil
  static let magic = Array("SHOAL\u{0}DB".utf8)

  static func run(_ input: [UInt8]) {
    var image: [UInt8]
    if input.starts(with: magic) {
      image = input
    } else {
      image = reference
      var i = 0
      while i + 5 <= input.count, !image.isEmpty {
        let offset = Int(input[i]) | Int(input[i + 1]) << 8 | Int(input[i + 2]) << 16 | Int(input[i + 3]) << 24
        image[offset % image.count] ^= input[i + 4]
        i += 5
      }
    }
    guard
      let store = try? Store(
        file: MemoryFile(contents: image), options: StoreOptions(readOnly: true, cacheSize: 1 << 20, encryptionKey: key)
      )
    else { return }
    _ = store.verify()
    try? store.read { txn in
      for name in try txn.keyspaceNames() {
        let keyspace = try txn.keyspace(name)
        let cursor = keyspace.cursor(reverse: true)
        while try cursor.next() != nil {}
        _ = try keyspace.count(in: KeyRange(lower: [0x6B], upper: [0x6C]))
      }
      _ = try txn.changes(from: 0, to: txn.version)
    }
  }
}

#if SHOAL_FUZZING
  /// libFuzzer's driver, linked by `-sanitize=fuzzer`. SwiftPM renames an executable's entry
  /// point, so libFuzzer's own `main` is not used: `@main` below hands control to it.
  @_silgen_name("LLVMFuzzerRunDriver")
  func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
  ) -> CInt
#endif

@main
struct FuzzMain {
  static func main() throws {
    #if SHOAL_FUZZING
      var argc = CommandLine.argc
      var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
      let status = LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        FuzzOpen.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
      }
      if status != 0 { throw FuzzFailure(status: status) }
    #else
      // Without the fuzzer: replay the inputs named on the command line (crash reproducers).
      var count = 0
      for path in CommandLine.arguments.dropFirst() {
        let file = try PosixFile(path: path, create: false, readOnly: true)
        let bytes = try file.read(count: Int(try file.size()), at: 0)
        FuzzOpen.run(bytes)
        count += 1
      }
      print("replayed \(count) inputs")
    #endif
  }
}

struct FuzzFailure: Error {
  var status: CInt
}
