import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A helper process of the test suites (`shoal-realm-worker`, `shoal-sync-worker`), driven over
/// its stdin and answering a line at a time on its stdout. It is SIGKILLed when released.
open class WorkerProcess {
  /// The process.
  public let process = Process()
  private let output = Pipe()
  private let input = Pipe()
  private lazy var lines = PipeLines(output.fileHandleForReading.fileDescriptor)

  /// What went wrong talking to the worker.
  public enum WorkerError: Error, Equatable {
    /// No line came in time.
    case timeout
    /// The worker closed its output (it exited).
    case ended
    /// The first line was not "ready".
    case notReady(String)
  }

  /// Starts executable `name` (built beside the test bundle) with `arguments` and waits for its
  /// "ready" line.
  public init(_ name: String, arguments: [String]) throws {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
      .deletingLastPathComponent().appendingPathComponent(name)
    process.executableURL = executable
    process.arguments = arguments
    process.standardOutput = output
    process.standardInput = input
    try process.run()
    let first = try line()
    guard first == "ready" else { throw WorkerError.notReady(first) }
  }

  deinit {
    if process.isRunning {
      Glibc.kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
  }

  /// Sends a command and returns the answer line.
  public func send(_ command: String, timeout: Double = 60) throws -> String {
    input.fileHandleForWriting.write(Data((command + "\n").utf8))
    return try line(timeout: timeout)
  }

  /// Sends a command without waiting for an answer.
  public func sendOnly(_ command: String) {
    input.fileHandleForWriting.write(Data((command + "\n").utf8))
  }

  /// SIGKILLs the process and reaps it.
  public func kill() {
    Glibc.kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }

  /// The next line of output, waiting at most `timeout` seconds.
  public func line(timeout: Double = 60) throws -> String {
    do {
      return try lines.next(timeout: timeout)
    } catch .timeout {
      throw WorkerError.timeout
    } catch .ended {
      throw WorkerError.ended
    }
  }
}

/// The lines a pipe delivers, read with `poll` (no sleeping) as they come.
public final class PipeLines {
  private let fd: Int32
  private var buffer: [UInt8] = []

  /// Why no line came.
  public enum Failure: Error {
    /// None within the time given.
    case timeout
    /// The writing end closed.
    case ended
  }

  /// The lines of the pipe whose reading end is `fd`.
  public init(_ fd: Int32) { self.fd = fd }

  /// The next line (without its newline), waiting at most `timeout` seconds.
  public func next(timeout: Double) throws(Failure) -> String {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      if let newline = buffer.firstIndex(of: 10) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return line
      }
      let left = deadline.timeIntervalSinceNow
      guard left > 0 else { throw .timeout }
      var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      if poll(&pfd, 1, Int32(min(left, 1) * 1000)) > 0 {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &chunk, chunk.count)
        guard n > 0 else { throw .ended }
        buffer += chunk[0..<n]
      }
    }
  }
}
