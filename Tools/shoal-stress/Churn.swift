import ArgumentParser
import Foundation
import ShoalStorage
import ShoalTrials

/// `shoal-stress churn`: many small commits on a large store, reporting the cost per commit
/// and how the free space fragments over time.
struct Churn: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Small commits on a large store: time per commit, file size and free-space fragmentation.")

  @Option(help: "Entries loaded first.") var entries = 200_000
  @Option(help: "Commits after the load.") var commits = 5000
  @Option(help: "Entries each commit updates (random ones).") var entriesPerCommit = 1
  @Option(help: "full or unsafe.") var durability = "unsafe"
  @Option(help: "Report every N commits.") var every = 1000
  @Flag(help: "Encrypt the file (a fixed key): to compare with a plain run.") var encrypted = false
  @Option var file: String?

  func validate() throws {
    for (name, value) in [
      ("entries", entries), ("commits", commits), ("every", every), ("entries-per-commit", entriesPerCommit),
    ]
    where value < 1 {
      throw ValidationError("--\(name) must be at least 1 (got \(value)).")
    }
    guard durability == "full" || durability == "unsafe" else {
      throw ValidationError("--durability must be full or unsafe (got \(durability)).")
    }
  }

  func run() throws {
    let path = file ?? (NSTemporaryDirectory() + "shoal-churn-\(getpid()).shoal")
    for suffix in ["", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    defer {
      if file == nil { for suffix in ["", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    }
    let mode: Durability = durability == "full" ? .full : .unsafe
    let encryptionKey = encrypted ? PowerLossTrial.trialKey(seed: 1) : nil
    let store = try Store.open(path: path, options: StoreOptions(durability: mode, encryptionKey: encryptionKey))
    var rng = SplitMix64(seed: 1)
    func key(_ i: Int) -> [UInt8] {
      withUnsafeBytes(of: (UInt64(i) &* 0x9E37_79B9_7F4A_7C15).bigEndian) { Array($0) } + [0, 0, 0, 0, 0, 0, 0, 1]
    }
    func value() -> [UInt8] {
      Array("value \(rng.next() % 1000) of the churn workload, text that compresses".utf8)
        + Array(repeating: 32, count: 40)
    }
    var start = Date()
    try store.write { txn in
      try txn.ensureKeyspace("kv")
      for i in 0..<entries { try txn.put(value(), forKey: key(i), in: "kv") }
    }
    print("loaded \(entries) entries in \(Int(Date().timeIntervalSince(start) * 1000)) ms")
    start = Date()
    for c in 1...commits {
      let updates = (0..<entriesPerCommit).map { _ in (key(Int(rng.next() % UInt64(entries))), value()) }
      try store.write { txn in for (k, v) in updates { try txn.put(v, forKey: k, in: "kv") } }
      if c % every == 0 {
        let micros = Date().timeIntervalSince(start) * 1e6 / Double(every)
        let info = store.info()
        let perEntry = entriesPerCommit > 1 ? " (\(Int(micros) / entriesPerCommit) us/entry)" : ""
        print(
          "after \(c) commits: \(Int(micros)) us/commit\(perEntry), file \(info.fileSize / 1024) KiB, live \(info.liveBytes / 1024) KiB, free \(info.freeBytes / 1024) KiB in \(info.freeExtents) extents"
        )
        start = Date()
      }
    }
  }
}
