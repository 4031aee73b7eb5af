import ArgumentParser
import Foundation
import ShoalStorage
import Synchronization

/// `shoal-stress run`: P real processes of mixed roles on one file, a random one SIGKILLed
/// every K seconds and replaced; at the end the file is verified and the run summarised in
/// one JSON line. Zero violations and zero lost commits is the only passing result.
struct Run: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Writers, readers, observers and freezers in separate processes, with SIGKILLs.")

  @Option(help: "Worker processes.") var processes = 6
  @Option(help: "How long to run.") var seconds = 10.0
  @Option(help: "Kill a random worker every K seconds (0: never).") var killEvery = 1.0
  @Option(
    help:
      "Stop (SIGSTOP) a random worker every S seconds for 50 to 500 ms, then let it go on (SIGCONT); 0: never.")
  var stopEvery = 0.0
  @Option var seed: UInt64 = 1
  @Option(help: "The file (default: a new one in a temporary directory).") var file: String?
  @Option var accounts = 100
  @Option(help: ArgumentHelp("Seconds past --seconds before the watchdog fails the run.", visibility: .hidden))
  var watchdogGrace = 120.0
  @Flag(
    help: ArgumentHelp(
      "For tests of the watchdog: stall where the workers are stopped, as a hung run would.", visibility: .hidden))
  var stallWhenStopping = false

  /// What the workers told, gathered from their stdout.
  struct Tally {
    var acks: [Int: UInt64] = [:]
    var violations: [String] = []
    var latencies: [UInt64] = []
    var reads = 0
    var freezes = 0
  }

  final class Child {
    let role: Worker.Role
    let id: Int
    let process: Process
    init(role: Worker.Role, id: Int, process: Process) {
      self.role = role
      self.id = id
      self.process = process
    }
  }

  /// Waits (bounded) for a killed child to be reaped; never blocks the run for long.
  static func reap(_ child: Child) {
    let deadline = Date().addingTimeInterval(10)
    while child.process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
  }

  func run() throws {
    let path = file ?? (NSTemporaryDirectory() + "shoal-stress-\(getpid()).shoal")
    for suffix in ["", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    let expected = Bank.initialBalance * UInt64(accounts)
    let initialVersion: UInt64
    do {
      let store = try Store.open(path: path)
      initialVersion = try store.write { txn -> UInt64 in
        try txn.createKeyspace(Bank.keyspace)
        try txn.createKeyspace("acks")
        for i in 0..<accounts { try txn.put(Bank.encode(Bank.initialBalance), forKey: Bank.key(i), in: Bank.keyspace) }
        return txn.version
      }
    }
    let tally = Mutex(Tally())
    // A run that hangs must fail, not stall its caller: past the deadline the watchdog names
    // the phase it was in, kills every worker and exits.
    let watchdog = Mutex((phase: "running", pids: [Int32](), done: false))
    let deadline = seconds + watchdogGrace
    Thread.detachNewThread {
      Thread.sleep(forTimeInterval: deadline)
      let (phase, pids, done) = watchdog.withLock { ($0.phase, $0.pids, $0.done) }
      guard !done else { return }
      FileHandle.standardError.write(
        Data("shoal-stress run: not finished \(Int(deadline)) s after it began (\(phase)); failing\n".utf8))
      for pid in pids { kill(pid, SIGKILL) }
      Glibc.exit(2)
    }
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var nextID = 0
    func spawn(_ role: Worker.Role) throws -> Child {
      nextID += 1
      let id = nextID
      let process = Process()
      process.executableURL = executable
      process.arguments = [
        "worker", role.rawValue, "--file", path, "--id", "\(id)", "--seed", "\(seed)", "--accounts", "\(accounts)",
        "--parent", "\(getpid())",
      ]
      let out = Pipe()
      process.standardOutput = out
      process.standardInput = FileHandle.nullDevice
      let bufferLock = Mutex(Data())
      out.fileHandleForReading.readabilityHandler = { handle in
        let data = handle.availableData
        let lines = bufferLock.withLock { pending -> [String] in
          pending.append(data)
          var lines: [String] = []
          while let newline = pending.firstIndex(of: 10) {
            lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
            pending.removeSubrange(pending.startIndex...newline)
          }
          return lines
        }
        if data.isEmpty { handle.readabilityHandler = nil }
        tally.withLock { t in
          for line in lines {
            let parts = line.split(separator: " ")
            switch parts.first {
            case "ack":
              if parts.count >= 3, let w = Int(parts[1]), let s = UInt64(parts[2]) {
                t.acks[w] = max(t.acks[w] ?? 0, s)
              }
            case "violation": t.violations.append(line)
            case "latency": if parts.count >= 2, let us = UInt64(parts[1]) { t.latencies.append(us) }
            case "read": t.reads += parts.count >= 2 ? Int(parts[1]) ?? 1 : 1
            case "froze": t.freezes += 1
            default: break
            }
          }
        }
      }
      try process.run()
      watchdog.withLock { $0.pids.append(process.processIdentifier) }
      return Child(role: role, id: id, process: process)
    }
    let roles: [Worker.Role] = [.writer, .reader, .observer, .freezer]
    var children: [Child] = []
    for i in 0..<max(1, processes) { children.append(try spawn(roles[i % roles.count])) }
    var rng = SplitMix64(seed: seed)
    var kills = 0
    var restarts = 0
    var peak = 1
    let monitor = try Store.open(path: path, options: StoreOptions(durability: .unsafe))
    let start = Date()
    var nextKill = killEvery > 0 ? killEvery : .infinity
    var nextStop = stopEvery > 0 ? stopEvery : .infinity
    var stops = 0
    // Stopped workers and when they go on.
    var stopped: [(pid: pid_t, until: TimeInterval)] = []
    while Date().timeIntervalSince(start) < seconds {
      Thread.sleep(forTimeInterval: 0.05)
      peak = max(peak, monitor.activeVersionCount)
      let elapsed = Date().timeIntervalSince(start)
      for entry in stopped where entry.until <= elapsed { kill(entry.pid, SIGCONT) }
      stopped.removeAll { $0.until <= elapsed }
      if elapsed >= nextStop {
        nextStop += stopEvery
        let victim = children[Int.random(in: 0..<children.count, using: &rng)].process.processIdentifier
        if !stopped.contains(where: { $0.pid == victim }), kill(victim, SIGSTOP) == 0 {
          stopped.append((victim, elapsed + Double(Int.random(in: 50...500, using: &rng)) / 1000))
          stops += 1
        }
      }
      if elapsed >= nextKill {
        nextKill += killEvery
        let index = Int.random(in: 0..<children.count, using: &rng)
        let victim = children[index]
        stopped.removeAll { $0.pid == victim.process.processIdentifier }
        kill(victim.process.processIdentifier, SIGKILL)
        Run.reap(victim)
        watchdog.withLock { $0.pids.removeAll { $0 == victim.process.processIdentifier } }
        kills += 1
        children[index] = try spawn(victim.role)
        restarts += 1
      }
      // A worker that died on its own is a failure worth reporting.
      for (i, child) in children.enumerated() where !child.process.isRunning {
        tally.withLock {
          $0.violations.append(
            "worker \(child.id) (\(child.role.rawValue)) exited with status \(child.process.terminationStatus)")
        }
        watchdog.withLock { $0.pids.removeAll { $0 == child.process.processIdentifier } }
        children[i] = try spawn(child.role)
        restarts += 1
      }
    }
    watchdog.withLock { $0.phase = "stopping the workers" }
    while stallWhenStopping { Thread.sleep(forTimeInterval: 1) }
    for child in children {
      kill(child.process.processIdentifier, SIGKILL)
      Run.reap(child)
    }
    // Every worker is gone: check the file from a fresh open.
    watchdog.withLock { $0.phase = "verifying the file" }
    let store = try Store.open(path: path)
    let report = store.verify()
    let total = try store.read { try Bank.total($0) }
    var result = tally.withLock { $0 }
    if total != expected { result.violations.append("final total \(total), expected \(expected)") }
    var lost = 0
    try store.read { txn in
      for (writer, acknowledged) in result.acks {
        let stored = Bank.decode(try txn.get(Array("ack-\(writer)".utf8), in: "acks"))
        if stored == .max || stored < acknowledged { lost += 1 }
      }
    }
    let sorted = result.latencies.sorted()
    func percentile(_ p: Double) -> UInt64 {
      sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
    let summary: [String: String] = [
      "commits": "\(store.latestVersion - initialVersion)",
      "kills": "\(kills)",
      "stops": "\(stops)",
      "restarts": "\(restarts)",
      "violations": "\(result.violations.count)",
      "lost": "\(lost)",
      "active_versions_peak": "\(peak)",
      "notify_p50_us": "\(percentile(0.5))",
      "notify_p99_us": "\(percentile(0.99))",
      "reads": "\(result.reads)",
      "freezes": "\(result.freezes)",
      "verify": report.isOK
        ? "\"ok\""
        : "\"\(report.problems.prefix(3).joined(separator: "; ").replacingOccurrences(of: "\"", with: "'"))\"",
    ]
    watchdog.withLock { $0.done = true }
    for violation in result.violations.prefix(10) { FileHandle.standardError.write(Data((violation + "\n").utf8)) }
    print("{" + summary.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}")
    if file == nil { for suffix in ["", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    if !result.violations.isEmpty || lost > 0 || !report.isOK { throw ExitCode.failure }
  }
}
