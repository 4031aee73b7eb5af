import ArgumentParser
import ShoalStorage
import ShoalTrials

@main
struct ShoalStress: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "shoal-stress",
    abstract: "Crash and corruption trials for Shoal files.",
    subcommands: [PowerLoss.self, Corrupt.self, Run.self, Churn.self, Worker.self])
}

/// Prints the closing line and fails the process when any trial failed.
func finish(passed: Int, failures: [String]) throws {
  for failure in failures.prefix(20) { print("FAIL \(failure)") }
  print("\(passed) passed, \(failures.count) failed")
  if !failures.isEmpty { throw ExitCode.failure }
}

struct PowerLoss: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "powerloss",
    abstract:
      "Cut the power at a random write or sync, tear unsynced writes, reopen and check every acknowledged commit.")

  @Option(help: "Number of trials.") var trials = 1000
  @Option(help: "Seed of the first trial; trial i uses seed + i.") var seed: UInt64 = 1
  @Option(help: "Commits attempted per trial.") var commits = 12
  @Flag(help: "Encrypt every trial's file (a key derived from its seed).") var encrypted = false

  func run() throws {
    var failures: [String] = []
    var crashed = 0
    var inCommit = 0
    var fellBack = 0
    var landed = 0
    var deltas = 0
    var concurrent = 0
    var batchesCut = 0
    for i in 0..<trials {
      let outcome = PowerLossTrial.run(seed: seed &+ UInt64(i), commits: commits, encrypted: encrypted)
      if let failure = outcome.failure { failures.append(failure) }
      crashed += outcome.crashed ? 1 : 0
      inCommit += outcome.cutInCommit ? 1 : 0
      fellBack += outcome.fellBack ? 1 : 0
      landed += outcome.inFlightLanded ? 1 : 0
      deltas += outcome.recoveredDeltaChain ? 1 : 0
      concurrent += outcome.concurrent ? 1 : 0
      batchesCut += outcome.unsyncedAtCut > 1 ? 1 : 0
    }
    print(
      "power cut in \(crashed) trials, \(inCommit) of them inside a commit; open fell back to the previous commit in \(fellBack); the commit in flight landed whole in \(landed); the recovered free-space list was a chain of deltas in \(deltas); \(concurrent) trials had 3 writer threads sharing syncs, \(batchesCut) of them cut with several commits written and not yet durable"
    )
    try finish(passed: trials - failures.count, failures: failures)
  }
}

struct Corrupt: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "corrupt",
    abstract: "Flip random bytes of a freshly written file; every read must be right or a typed error.")

  @Option(help: "Number of trials.") var trials = 1000
  @Option(help: "Seed of the reference file and of the first trial.") var seed: UInt64 = 1
  @Flag(help: "Encrypt the reference file (a key derived from the seed).") var encrypted = false

  func run() throws {
    let base = try CorruptionTrials(seed: seed, encrypted: encrypted)
    var failures: [String] = []
    for i in 0..<trials {
      if let failure = base.run(seed: seed &+ UInt64(i)) { failures.append(failure) }
    }
    try finish(passed: trials - failures.count, failures: failures)
  }
}
