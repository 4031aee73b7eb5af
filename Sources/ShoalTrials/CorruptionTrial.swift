import ShoalStorage

/// Corruption trials: random bytes of a freshly written file are changed, then the file is
/// opened, read in full and verified. Every read must return the right bytes (of the newest
/// version, or of the previous one when open fell back to it) or throw a `StorageError`;
/// and when `verify` finds nothing wrong, every read must have been right.
public struct CorruptionTrials: Sendable {
  /// The healthy file every trial damages a copy of.
  public let image: [UInt8]
  let latest: StoreModel
  let previous: StoreModel
  let latestVersion: UInt64
  /// The options every trial opens its copy with: the reference file's key when it is encrypted.
  let options: StoreOptions

  /// Writes the reference file: several keyspaces, inline and blob values, history; encrypted
  /// with a key derived from `seed` when `encrypted`.
  public init(seed: UInt64, encrypted: Bool = false) throws {
    var work = Workload(seed: seed)
    let file = MemoryFile(path: "corruption-base")
    options = StoreOptions(encryptionKey: encrypted ? PowerLossTrial.trialKey(seed: seed) : nil)
    let store = try Store(file: file, options: options)
    var model = StoreModel()
    var before = model
    for _ in 0..<30 {
      before = model
      let txn = try store.beginWrite()
      try work.transaction(txn, &model)
      try txn.commit()
    }
    guard store.verify().isOK else { throw StorageError.invalidArgument("the reference file does not verify") }
    image = file.contents
    latest = model
    previous = before
    latestVersion = store.latestVersion
  }

  /// One trial; nil when it passed, else what went wrong.
  public func run(seed: UInt64) -> String? {
    var rng = SplitMix64(seed: seed)
    var bytes = image
    let flips = Int.random(in: 1...4, using: &rng)
    for _ in 0..<flips {
      // One trial in ten aims at the header and meta slots.
      let headerBias = Int.random(in: 0..<10, using: &rng) == 0
      let offset = headerBias ? Int.random(in: 0..<12288, using: &rng) : Int.random(in: 0..<bytes.count, using: &rng)
      bytes[offset] ^= UInt8.random(in: 1...255, using: &rng)
    }
    let store: Store
    do {
      store = try Store(file: MemoryFile(path: "corrupt-\(seed)", contents: bytes), options: options)
    } catch is StorageError {
      return nil
    } catch {
      return "seed \(seed): open threw a non-storage error \(error)"
    }
    let expected = store.latestVersion == latestVersion ? latest : previous
    var allRight = true
    do {
      let txn = try store.beginRead()
      defer { txn.close() }
      for (name, entries) in expected.keyspaces {
        do {
          let ks = try txn.keyspace(name)
          // Point reads.
          for (key, value) in entries {
            do {
              if try ks.get(key) != value { return "seed \(seed): wrong value for a key of '\(name)'" }
            } catch is StorageError {
              allRight = false
            }
          }
          // A full scan must never return an entry that is not in the model.
          do {
            let cursor = ks.cursor()
            var seen = 0
            while let (k, v) = try cursor.next() {
              guard entries[k] == v else { return "seed \(seed): a scan of '\(name)' returned a wrong entry" }
              seen += 1
            }
            if seen != entries.count {
              return "seed \(seed): a scan of '\(name)' returned \(seen) of \(entries.count) entries without an error"
            }
          } catch is StorageError {
            allRight = false
          }
        } catch is StorageError {
          allRight = false
        }
      }
    } catch is StorageError {
      allRight = false
    } catch {
      return "seed \(seed): a read threw a non-storage error \(error)"
    }
    let report = store.verify()
    if report.isOK && !allRight { return "seed \(seed): verify found nothing, but a read failed" }
    return nil
  }
}
