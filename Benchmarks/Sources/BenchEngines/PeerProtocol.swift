// What the cross-process benchmarks and bench-peer (their other processes) agree on: the
// shape of the workloads, the keys the peers write and a line reader for the pipes between
// them. The protocol itself is described in Sources/bench-peer/main.swift.

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

public enum CrossProcessShape {
  /// Writer processes of the contention benchmark.
  public static let writerProcesses = 4
  /// Durable single-entry commits each of them makes per iteration.
  public static let commitsPerWriter = 250
  /// Observed commits per iteration of the notification-latency benchmark.
  public static let notifyCommits = 500
  /// Pause between two observed commits (after the observation), in microseconds.
  public static let notifyPauseMicroseconds: UInt32 = 1_000
  /// Snapshots taken per iteration of the snapshot benchmarks.
  public static let snapshotCount = 100_000
}

/// The entry index (for `benchKey`/`benchValue`) of commit `j` of writer `writer` in round
/// `round` of the contention benchmark: past the bulk-loaded entries and the durable-commit
/// benchmark's, and distinct for every writer and round.
public func contentionEntryIndex(round: Int, writer: Int, commit j: Int) -> Int {
  let perRound = CrossProcessShape.writerProcesses * CrossProcessShape.commitsPerWriter
  return 100_000_000 + round * perRound + writer * CrossProcessShape.commitsPerWriter + j
}

/// Reads `\n`-terminated lines from a file descriptor, waiting at most a given time for each.
public struct LineReader {
  public let descriptor: Int32
  private var buffer: [UInt8] = []

  public init(descriptor: Int32) { self.descriptor = descriptor }

  public enum Failure: Error, CustomStringConvertible {
    case timedOut(Double)
    case endOfFile
    case readFailed(Int32)

    public var description: String {
      switch self {
      case .timedOut(let seconds): return "no line within \(seconds) s"
      case .endOfFile: return "end of file (the other process exited)"
      case .readFailed(let error): return "read failed: \(String(cString: strerror(error)))"
      }
    }
  }

  /// The next line without its `\n`; waits `timeout` seconds at most (nil: for ever).
  public mutating func next(timeout: Double?) throws(Failure) -> String {
    let deadline = timeout.map { monotonicSeconds() + $0 }
    while true {
      if let newline = buffer.firstIndex(of: 0x0A) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return line
      }
      if let deadline, let timeout {
        let left = deadline - monotonicSeconds()
        if left <= 0 { throw .timedOut(timeout) }
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, Int32(min(left * 1000, 60_000).rounded(.up)))
        if ready < 0, errno != EINTR { throw .readFailed(errno) }
        if ready <= 0 { continue }
      }
      var chunk = [UInt8](repeating: 0, count: 4096)
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR || errno == EAGAIN { continue }
        throw .readFailed(errno)
      }
      if count == 0 { throw .endOfFile }
      buffer += chunk[..<count]
    }
  }
}

/// Writes all of `line` and a `\n` to a file descriptor; false when the other end is gone.
@discardableResult
public func writeLine(_ line: String, to descriptor: Int32) -> Bool {
  let bytes = Array((line + "\n").utf8)
  var done = 0
  while done < bytes.count {
    let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + done, $0.count - done) }
    if count < 0 {
      if errno == EINTR { continue }
      return false
    }
    done += count
  }
  return true
}

/// Seconds on the monotonic clock.
public func monotonicSeconds() -> Double {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
