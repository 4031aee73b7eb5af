import ArgumentParser
import Foundation
import ShoalStorage

/// One process of a multi-process run or test. Every role prints one line per event on
/// stdout (flushed at once), which is how the overlord and the tests follow it.
struct Worker: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "A worker process (used by `run` and by the multi-process tests).",
    shouldDisplay: false)

  enum Role: String, ExpressibleByArgument, CaseIterable {
    case writer, reader, observer, freezer
    case put, get, wait, hold, commitLoop = "commit-loop", openClose = "open-close"
    /// Holds the write lock until stdin closes.
    case writeHold = "write-hold"
    /// A hostile reader: takes read locks on the whole data file and, if it can open it, the
    /// whole lock file, without opening a store, and holds them until stdin closes.
    case readLock = "read-lock"
    /// Opens read-only (outside the session when the lock file is not open to this user),
    /// takes a snapshot after a line on stdin, and once stdin closes reads all of keyspace
    /// "kv" from it, then the newest version: prints what each gave.
    case detachedRead = "detached-read"
  }

  @Argument var role: Role
  @Option var file: String
  @Option(help: "Worker number (names its keys).") var id = 0
  @Option var seed: UInt64 = 1
  @Option(help: "put: key; wait: version to wait after.") var key = ""
  @Option var value = ""
  @Option var after: UInt64 = 0
  @Option var count = 1
  @Option(help: "Accounts in the bank.") var accounts = 100
  @Option(help: "Exit when this process (the overlord) is gone; 0: never.") var parent: Int32 = 0
  @Flag(help: "Write the store's log to stderr.") var log = false

  /// False once the overlord that started this worker has died: orphans must not run on.
  func overlordAlive() -> Bool { parent == 0 || getppid() == parent }

  func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }

  func run() throws {
    if role == .readLock { return holdReadLocks() }
    if role == .detachedRead { return try readDetached() }
    if log {
      Log.setLogFunction { level, category, message in
        FileHandle.standardError.write(Data("\(level) \(category): \(message)\n".utf8))
      }
    }
    let store = try Store.open(path: file, options: StoreOptions(durability: .unsafe))
    var rng = SplitMix64(seed: seed &+ UInt64(id) &* 7919)
    switch role {
    case .put:
      let version = try store.write { txn -> UInt64 in
        try txn.ensureKeyspace("kv")
        try txn.put(Array(value.utf8), forKey: Array(key.utf8), in: "kv")
        return txn.version
      }
      say("committed \(version)")
    case .get:
      let value = try store.read { try $0.get(Array(key.utf8), in: "kv") }
      say("value \(store.latestVersion) \(value.map { String(decoding: $0, as: UTF8.self) } ?? "<none>")")
    case .wait:
      say("waiting \(store.latestVersion)")
      guard let now = store.waitForChange(after: after, timeout: .seconds(60)) else { throw ExitCode(3) }
      let changes = try store.changes(from: after, to: now)
      let keys = changes.flatMap {
        $0.keyspaces.flatMap { $0.changes.map { "\($0.kind):\(String(decoding: $0.key, as: UTF8.self))" } }
      }
      say("woke \(now) \(keys.joined(separator: ","))")
    case .hold:
      let txn = try store.beginRead()
      say("pinned \(txn.version)")
      // Hold the pin until stdin closes or the process is killed.
      _ = FileHandle.standardInput.readDataToEndOfFile()
      txn.close()
    case .commitLoop:
      var n = 0
      while (count == 0 || n < count) && overlordAlive() {
        n += 1
        let version = try store.write { txn -> UInt64 in
          try txn.ensureKeyspace("loop")
          // Several entries per commit, so a kill lands inside writes as often as between.
          for j in 0..<20 {
            try txn.put(
              Array(repeating: UInt8(truncatingIfNeeded: n), count: 300), forKey: Array("e\(id)-\(j)".utf8), in: "loop")
          }
          try txn.put(Array("\(n)".utf8), forKey: Array("counter-\(id)".utf8), in: "loop")
          return txn.version
        }
        say("committed \(version) \(n)")
      }
    case .openClose:
      for i in 0..<count {
        let s = try Store.open(path: file, options: StoreOptions(durability: .unsafe))
        try s.write { txn in
          try txn.ensureKeyspace("oc")
          try txn.put(Array("\(i)".utf8), forKey: Array("p\(id)".utf8), in: "oc")
        }
        _ = try s.read { try $0.get(Array("p\(id)".utf8), in: "oc") }
      }
      say("done")
    case .writeHold:
      let txn = try store.beginWrite()
      say("writing \(txn.version)")
      _ = FileHandle.standardInput.readDataToEndOfFile()
      txn.abort()
    case .readLock, .detachedRead:
      break
    case .writer, .reader, .observer, .freezer:
      try Bank(store: store, accounts: accounts, id: id, alive: overlordAlive).run(role, rng: &rng, say: say)
    }
  }
}

extension Worker {
  /// Opens `path` read-only and read-locks all of it (a POSIX record lock, which conflicts with
  /// Shoal's OFD locks as any other process's lock does); whether that worked.
  private func readLockWholeFile(_ path: String) -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    var lock = flock()
    lock.l_type = Int16(F_RDLCK)
    lock.l_whence = Int16(SEEK_SET)
    lock.l_start = 0
    lock.l_len = 0
    return fcntl(fd, F_SETLK, &lock) == 0
  }

  func readDetached() throws {
    let store = try Store.open(path: file, options: StoreOptions(readOnly: true))
    say("opened \(store.latestVersion)")
    _ = readLine()
    let snapshot = try store.beginRead()
    say("snapshot \(snapshot.version) detached=\(store.isDetached)")
    _ = FileHandle.standardInput.readDataToEndOfFile()
    do {
      var count = 0
      try snapshot.keyspace("kv").forEach { _, _ in
        count += 1
        return true
      }
      say("read \(count)")
    } catch StorageError.snapshotUnavailable(_, let version, let newest) {
      say("unavailable \(version) \(newest)")
    } catch {
      say("failed \(error)")
    }
    snapshot.close()
    let (version, count) = try store.read { txn in (txn.version, try txn.count(in: "kv")) }
    say("newest \(version) \(count)")
  }

  func holdReadLocks() {
    let data = readLockWholeFile(file)
    let lock = readLockWholeFile(file + ".lock")
    say("locked data=\(data ? 1 : 0) lock=\(lock ? 1 : 0)")
    _ = FileHandle.standardInput.readDataToEndOfFile()
  }
}

/// The bank workload of `shoal-stress run`: accounts whose total never changes.
struct Bank {
  static let keyspace = "accounts"
  static let initialBalance: UInt64 = 1000
  let store: Store
  let accounts: Int
  let id: Int
  let alive: () -> Bool

  static func key(_ i: Int) -> [UInt8] { Array("acct-\(i)".utf8) }
  static func encode(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
  static func decode(_ b: [UInt8]?) -> UInt64 {
    guard let b, b.count == 8 else { return .max }
    return b.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
  }

  static func total(_ txn: ReadTransaction) throws -> UInt64 {
    var sum: UInt64 = 0
    try txn.keyspace(keyspace).forEach { _, v in
      sum &+= v.loadUnaligned(as: UInt64.self)
      return true
    }
    return sum
  }

  func run(_ role: Worker.Role, rng: inout SplitMix64, say: (String) -> Void) throws {
    let expected = Bank.initialBalance * UInt64(accounts)
    switch role {
    case .writer:
      var seq: UInt64 = 0
      while alive() {
        seq += 1
        let transfers = Int.random(in: 1...20, using: &rng)
        let version = try store.write { txn -> UInt64 in
          for _ in 0..<transfers {
            let a = Bank.key(Int.random(in: 0..<accounts, using: &rng))
            let b = Bank.key(Int.random(in: 0..<accounts, using: &rng))
            let va = Bank.decode(try txn.get(a, in: Bank.keyspace))
            let amount = min(va, UInt64.random(in: 0...100, using: &rng))
            try txn.put(Bank.encode(va - amount), forKey: a, in: Bank.keyspace)
            let vb = Bank.decode(try txn.get(b, in: Bank.keyspace))
            try txn.put(Bank.encode(vb + amount), forKey: b, in: Bank.keyspace)
          }
          // The writer's acknowledged sequence number commits with the transfers.
          try txn.put(Bank.encode(seq), forKey: Array("ack-\(id)".utf8), in: "acks")
          return txn.version
        }
        say("ack \(id) \(seq) \(version)")
      }
    case .reader:
      var reads = 0
      while alive() {
        let total = try store.read { try Bank.total($0) }
        if total != expected { say("violation reader total \(total) expected \(expected)") }
        reads += 1
        if reads % 50 == 0 { say("read 50") }
      }
    case .observer:
      // Hold a pin on the last version seen so its change records stay available.
      var pin = try store.beginRead()
      var last = pin.version
      say("observing \(last)")
      while alive() {
        guard let now = store.waitForChange(after: last, timeout: .seconds(5)) else { continue }
        guard now > last else {
          say("violation observer saw the version go back from \(last) to \(now)")
          continue
        }
        let woke = Store.wallClock()
        let published = store.lastPublishTimestamp
        // Pin the newest version first, then read the changes up to it: the old pin keeps
        // every record after `last` until then (a commit may have landed since the wake).
        let next = try store.beginRead()
        guard next.version > last else {
          say("violation observer pinned version \(next.version) after seeing \(last)")
          continue
        }
        let records = try store.changes(from: last, to: next.version)
        let versions = records.map(\.version)
        if versions != Array((last + 1)...next.version) {
          say(
            "violation observer saw \(versions.first ?? 0)...\(versions.last ?? 0) after \(last), expected \(last + 1)...\(next.version)"
          )
        }
        if published > 0, woke >= published, now == next.version { say("latency \((woke - published) / 1000)") }
        pin.close()
        pin = next
        last = next.version
      }
    case .freezer:
      while alive() {
        let txn = try store.beginRead()
        let before = try Bank.total(txn)
        Thread.sleep(forTimeInterval: Double.random(in: 0...0.3, using: &rng))
        let after = try Bank.total(txn)
        if before != expected || after != expected {
          say("violation freezer \(before) \(after) at version \(txn.version)")
        }
        txn.close()
        say("froze")
      }
    default:
      break
    }
  }
}
