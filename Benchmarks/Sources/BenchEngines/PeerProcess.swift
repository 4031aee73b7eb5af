// The benchmark side of the cross-process benchmarks: starting bench-peer processes, talking to
// them line by line and stopping them (used by StorageBenchmarks' CrossProcess.swift and by
// NotificationBenchmarks). bench-peer is found next to the benchmark executable (bench.sh builds
// it; the benchmark plugin builds into the same folder) or at $SHOAL_BENCH_PEER.

import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The pids of the peers started and not yet reaped, killed at exit if any are left.
let livePeers = Mutex<Set<Int32>>([])

/// Ignores SIGPIPE (a dead peer must fail a write, not kill the benchmark) and kills any peer
/// still running when the process exits; once per process.
let preparePeers: Void = {
  signal(SIGPIPE, SIG_IGN)
  atexit {
    for pid in livePeers.withLock({ $0 }) { kill(pid, SIGKILL) }
  }
}()

func peerExecutable() throws -> String {
  let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
  var path = (me as NSString).deletingLastPathComponent + "/bench-peer"
  if let given = ProcessInfo.processInfo.environment["SHOAL_BENCH_PEER"], !given.isEmpty { path = given }
  guard FileManager.default.isExecutableFile(atPath: path) else {
    throw BenchError(
      "no bench-peer at \(path): build it first with `swift build --package-path Benchmarks -c release "
        + "--product bench-peer` (bench.sh does), or set SHOAL_BENCH_PEER")
  }
  return path
}

/// One bench-peer process: command lines to its stdin, answer lines from its stdout; its
/// stderr goes to ours (the run log).
public final class Peer {
  let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private var lines: LineReader
  private var inputClosed = false
  private var stopped = false
  public let name: String

  public init(_ arguments: [String]) throws {
    _ = preparePeers
    name = "bench-peer " + arguments.joined(separator: " ")
    process.executableURL = URL(fileURLWithPath: try peerExecutable())
    process.arguments = arguments
    process.standardInput = input
    process.standardOutput = output
    lines = LineReader(descriptor: output.fileHandleForReading.fileDescriptor)
    try process.run()
    let pid = process.processIdentifier
    livePeers.withLock { _ = $0.insert(pid) }
  }

  deinit { stop() }

  public func send(_ line: String) throws {
    guard !inputClosed, writeLine(line, to: input.fileHandleForWriting.fileDescriptor) else {
      throw BenchError("\(name): cannot send '\(line)': the peer is gone")
    }
  }

  /// The words of the next line, which must start with `word`.
  @discardableResult
  public func expect(_ word: String, timeout: Double) throws -> [Substring] {
    let line: String
    do {
      line = try lines.next(timeout: timeout)
    } catch {
      throw BenchError("\(name): waiting for '\(word)': \(error)")
    }
    let words = line.split(separator: " ")
    guard words.first.map(String.init) == word else { throw BenchError("\(name): expected '\(word)', got '\(line)'") }
    return words
  }

  /// Closes the peer's stdin without waiting: an idle peer exits at once.
  public func closeInput() {
    guard !inputClosed else { return }
    inputClosed = true
    try? input.fileHandleForWriting.close()
  }

  /// Closes the peer's stdin, waits up to 2 s for it to exit, then kills it.
  public func stop() {
    guard !stopped else { return }
    stopped = true
    closeInput()
    let pid = process.processIdentifier
    let deadline = monotonicSeconds() + 2
    while process.isRunning, monotonicSeconds() < deadline { usleep(2_000) }
    if pid > 0, process.isRunning {
      kill(pid, SIGKILL)
      let hard = monotonicSeconds() + 10
      while process.isRunning, monotonicSeconds() < hard { usleep(2_000) }
    }
    try? output.fileHandleForReading.close()
    livePeers.withLock { _ = $0.remove(pid) }
  }
}

/// Stops every peer of `peers`, closing all their stdins first so that they wind down together.
public func stopAll(_ peers: [Peer]) {
  for peer in peers { peer.closeInput() }
  for peer in peers { peer.stop() }
}
