import Foundation
import ShoalStorage
import Synchronization

/// One power-loss trial: random transactions on a `FaultInjectingFile` until the power is
/// cut at a random write or sync; the disk image is then torn per the fault model and
/// reopened. Passing means: open succeeds, the contents equal the last acknowledged commit
/// (or the one in flight when the power was cut), the file verifies, and it accepts and
/// verifies another commit.
public enum PowerLossTrial {
  /// What happened in one trial.
  public struct Outcome: Sendable {
    /// nil when the trial passed.
    public var failure: String?
    /// The power was cut before the workload finished.
    public var crashed = false
    /// The power was cut inside a commit.
    public var cutInCommit = false
    /// Open found the newest commit record unusable and fell back to the previous commit.
    public var fellBack = false
    /// The commit in flight at the cut survived whole.
    public var inFlightLanded = false
    /// The recovered file's free-space list was a chain of deltas (not one full list).
    public var recoveredDeltaChain = false
    /// Several writer threads committed at once (group commit), and some of their commits
    /// shared a sync: the power was cut with several commits written and not yet durable.
    public var concurrent = false
    /// Commits written but not yet durable when the power was cut (concurrent trials).
    public var unsyncedAtCut = 0
  }

  /// Runs one trial: up to `commits` random commits on a file that loses power at a point
  /// chosen by `seed`, then a reopen whose contents must be the last commit or the one before.
  /// One trial in two has three writer threads committing at once on a file whose syncs take
  /// a while, so that commits share syncs (group commit) and the power is cut inside batches.
  /// With `encrypted`, every store of the trial is encrypted with a key derived from the
  /// seed (`trialKey`): the same trials on sealed blocks and authenticated records.
  public static func run(seed: UInt64, commits: Int = 12, encrypted: Bool = false) -> Outcome {
    var outcome = Outcome()
    let options = StoreOptions(encryptionKey: encrypted ? trialKey(seed: seed) : nil)
    if seed % 2 == 1 {
      outcome.concurrent = true
      outcome.failure = runConcurrent(seed: seed, commits: commits, options: options, outcome: &outcome)
    } else {
      outcome.failure = run(seed: seed, commits: commits, options: options, outcome: &outcome)
    }
    return outcome
  }

  /// The 64-byte encryption key of the trial with `seed`: reproducible from the seed.
  public static func trialKey(seed: UInt64) -> [UInt8] {
    var rng = SplitMix64(seed: seed ^ 0x5EA1_ED00_0000_0000)
    return (0..<8).flatMap { _ in withUnsafeBytes(of: rng.next()) { Array($0) } }
  }

  /// The states after each version, as the writers made them, and the newest version whose
  /// commit returned (durable).
  private struct History {
    /// The states each version was built with. Usually one; after the cut, a writer that
    /// finds nothing to read may build on a version whose commit the cut interrupted (so never
    /// became the head), and try the same version again, failing at its first write.
    var models: [UInt64: [StoreModel]] = [:]
    var acknowledged: UInt64 = 0
    var written: UInt64 = 0
  }

  /// Three threads commit random transactions on one store until the power is cut; each
  /// commit's sync takes 300 µs, so the next writers prepare theirs meanwhile and one sync
  /// makes several durable. Passing means: the reopened store holds exactly the state after
  /// some version at least as new as every acknowledged commit (a cut inside a batch loses
  /// only commits not yet acknowledged, and never leaves one without those before it), the
  /// file verifies, and it accepts another commit.
  static func runConcurrent(seed: UInt64, commits: Int, options: StoreOptions, outcome: inout Outcome) -> String? {
    var work = Workload(seed: seed)
    do {
      let origin = MemoryFile(path: "trial-\(seed)")
      var start = StoreModel()
      let startVersion: UInt64
      do {
        let store = try Store(file: origin, options: options)
        for _ in 0..<work.int(0...4) {
          let txn = try store.beginWrite()
          try work.transaction(txn, &start)
          try txn.commit()
        }
        startVersion = store.latestVersion
      }
      let writers = 3
      let file = FaultInjectingFile(
        path: "trial-\(seed)", contents: origin.contents,
        crashAfterOperations: work.int(1...(commits * writers * 6)), syncDuration: .microseconds(300))
      let history = Mutex(History(models: [startVersion: [start]], acknowledged: startVersion, written: startVersion))
      let failures = Mutex<[String]>([])
      let cut = Atomic<Bool>(false)
      // Opening writes nothing to a whole file, but the cut may come at its first operation.
      let store: Store
      do {
        store = try Store(file: file, options: options)
      } catch StorageError.powerLoss {
        return nil
      }
      let done = DispatchGroup()
      for writer in 0..<writers {
        let seed = work.rng.next()
        done.enter()
        Thread {
          defer { done.leave() }
          var work = Workload(seed: seed)
          do {
            for _ in 0..<commits {
              let txn = try store.beginWrite()
              guard var model = history.withLock({ $0.models[txn.baseVersion]?.last }) else {
                failures.withLock { $0.append("writer \(writer): no model of version \(txn.baseVersion)") }
                txn.abort()
                return
              }
              try work.transaction(txn, &model)
              let version = txn.version
              history.withLock {
                $0.models[version, default: []].append(model)
                $0.written = max($0.written, version)
              }
              let made = try txn.commit()
              history.withLock { $0.acknowledged = max($0.acknowledged, made) }
            }
          } catch StorageError.powerLoss {
            // Expected: the power was cut.
            cut.store(true, ordering: .relaxed)
          } catch {
            failures.withLock { $0.append("writer \(writer): \(error)") }
          }
        }.start()
      }
      done.wait()
      if let failure = failures.withLock({ $0.first }) { return "seed \(seed): \(failure)" }
      let final = history.withLock { $0 }
      outcome.crashed = cut.load(ordering: .relaxed)
      outcome.unsyncedAtCut = Int(final.written - final.acknowledged)
      let image = file.crashImage(seed: work.rng.next())
      let reopened = try Store(file: MemoryFile(path: "trial-\(seed)-after", contents: image), options: options)
      let version = reopened.latestVersion
      let found = try StoreModel.read(reopened)
      outcome.fellBack = reopened.recoveredFromVersion != nil
      guard version >= final.acknowledged else {
        return "seed \(seed): the crash lost acknowledged version \(final.acknowledged) (opened \(version))"
      }
      guard let expected = final.models[version], let last = expected.last else {
        return "seed \(seed): opened version \(version), never written (newest written \(final.written))"
      }
      guard expected.contains(found) else {
        return
          "seed \(seed): after the crash version \(version) holds the wrong state (\(found.difference(from: last)))"
      }
      return try checkRecovered(reopened, holding: found, seed: seed, work: &work)
    } catch {
      return "seed \(seed): \(error)"
    }
  }

  static func run(seed: UInt64, commits: Int, options: StoreOptions, outcome: inout Outcome) -> String? {
    var work = Workload(seed: seed)
    do {
      // A durable starting file with some history. One trial in four has a long one, with
      // readers pinned across 15 commits at a time: its free space is fragmented into many
      // extents, so the commits cut below store their free-space changes as deltas.
      let origin = MemoryFile(path: "trial-\(seed)")
      var acknowledged = StoreModel()
      do {
        let store = try Store(file: origin, options: options)
        let long = work.int(0...3) == 0
        var pinned: ReadTransaction?
        for step in 0..<(long ? work.int(40...80) : work.int(0...4)) {
          if long, step % 15 == 0 {
            pinned?.close()
            pinned = try store.beginRead()
          }
          let txn = try store.beginWrite()
          try work.transaction(txn, &acknowledged)
          try txn.commit()
        }
        pinned?.close()
      }
      let file = FaultInjectingFile(
        path: "trial-\(seed)", contents: origin.contents, crashAfterOperations: work.int(1...(commits * 6)))
      var inFlight: StoreModel?
      do {
        let store = try Store(file: file, options: options)
        for _ in 0..<commits {
          // A reader pinned now and then keeps old versions (and their space) alive.
          let pinned = work.int(0...3) == 0 ? try store.beginRead() : nil
          let txn = try store.beginWrite()
          var next = acknowledged
          try work.transaction(txn, &next)
          inFlight = next
          try txn.commit()
          acknowledged = next
          inFlight = nil
          pinned?.close()
        }
      } catch StorageError.powerLoss {
        // Expected: the power was cut.
        outcome.crashed = true
        outcome.cutInCommit = inFlight != nil
      }
      let image = file.crashImage(seed: work.rng.next())
      let reopened = try Store(file: MemoryFile(path: "trial-\(seed)-after", contents: image), options: options)
      let found = try StoreModel.read(reopened)
      outcome.fellBack = reopened.recoveredFromVersion != nil
      outcome.recoveredDeltaChain = reopened.info().freeListBlocks > 1
      outcome.inFlightLanded = inFlight != nil && found == inFlight && found != acknowledged
      if found != acknowledged && found != inFlight {
        return
          "seed \(seed): after the crash the store holds neither the acknowledged state nor the one in flight (\(found.difference(from: acknowledged)))"
      }
      return try checkRecovered(reopened, holding: found, seed: seed, work: &work)
    } catch {
      return "seed \(seed): \(error)"
    }
  }

  /// The checks after the contents of a reopened store are found right: it verifies, and it
  /// accepts another commit, which reads back and verifies too. Nil when they pass.
  static func checkRecovered(_ reopened: Store, holding found: StoreModel, seed: UInt64, work: inout Workload) throws
    -> String?
  {
    let report = reopened.verify()
    guard report.isOK else {
      return "seed \(seed): verify after the crash: \(report.problems.prefix(3).joined(separator: "; "))"
    }
    var model = found
    let txn = try reopened.beginWrite()
    try work.transaction(txn, &model)
    try txn.commit()
    let again = reopened.verify()
    guard again.isOK else {
      return
        "seed \(seed): verify after a commit on the recovered file: \(again.problems.prefix(3).joined(separator: "; "))"
    }
    guard try StoreModel.read(reopened) == model else {
      return "seed \(seed): a commit on the recovered file reads back wrong"
    }
    return nil
  }
}
