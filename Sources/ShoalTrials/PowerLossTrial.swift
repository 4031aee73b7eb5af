import ShoalStorage

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
  }

  /// Runs one trial: up to `commits` random commits on a file that loses power at a point
  /// chosen by `seed`, then a reopen whose contents must be the last commit or the one before.
  public static func run(seed: UInt64, commits: Int = 12) -> Outcome {
    var outcome = Outcome()
    outcome.failure = run(seed: seed, commits: commits, outcome: &outcome)
    return outcome
  }

  static func run(seed: UInt64, commits: Int, outcome: inout Outcome) -> String? {
    var work = Workload(seed: seed)
    do {
      // A durable starting file with some history. One trial in four has a long one, with
      // readers pinned across 15 commits at a time: its free space is fragmented into many
      // extents, so the commits cut below store their free-space changes as deltas.
      let origin = MemoryFile(path: "trial-\(seed)")
      var acknowledged = StoreModel()
      do {
        let store = try Store(file: origin)
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
        let store = try Store(file: file)
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
      let reopened = try Store(file: MemoryFile(path: "trial-\(seed)-after", contents: image))
      let found = try StoreModel.read(reopened)
      outcome.fellBack = reopened.recoveredFromVersion != nil
      outcome.recoveredDeltaChain = reopened.info().freeListBlocks > 1
      outcome.inFlightLanded = inFlight != nil && found == inFlight && found != acknowledged
      if found != acknowledged && found != inFlight {
        return
          "seed \(seed): after the crash the store holds neither the acknowledged state nor the one in flight (\(found.difference(from: acknowledged)))"
      }
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
    } catch {
      return "seed \(seed): \(error)"
    }
  }
}
