import Foundation
import ShoalTestSupport
import Testing

@testable import ShoalStorage

#if canImport(Glibc)
  import Glibc
#endif

/// A real child process running `shoal-stress worker …` (or any `shoal-stress` command),
/// followed line by line on its stdout.
final class Child {
  let process = Process()
  private let output = Pipe()
  private let input = Pipe()
  private lazy var lines = PipeLines(output.fileHandleForReading.fileDescriptor)

  static var executable: URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
      .appendingPathComponent("shoal-stress")
  }

  /// Runs `shoal-stress` with `arguments`; as user and group `user` (through `setpriv`)
  /// when given.
  init(_ arguments: [String], as user: UInt32? = nil, mergingErrors: Bool = false) throws {
    guard FileManager.default.isExecutableFile(atPath: Child.executable.path) else {
      throw ChildError.missing("\(Child.executable.path) is not built: run `swift build --build-tests` first")
    }
    if let user {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
      process.arguments =
        ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", Child.executable.path] + arguments
    } else {
      process.executableURL = Child.executable
      process.arguments = arguments
    }
    process.standardOutput = output
    if mergingErrors { process.standardError = output }
    process.standardInput = input
    try process.run()
  }

  static func worker(_ role: String, file: String, _ extra: [String] = [], as user: UInt32? = nil) throws -> Child {
    try Child(["worker", role, "--file", file] + extra, as: user)
  }

  /// The next line, waiting at most `timeout` seconds (poll on the pipe, no sleeping).
  func line(timeout: Double = 60) throws -> String {
    do {
      return try lines.next(timeout: timeout)
    } catch .timeout {
      throw ChildError.timeout("no line from \(process.arguments ?? []) within \(timeout)s")
    } catch .ended {
      throw ChildError.ended("\(process.arguments ?? []) closed its output")
    }
  }

  /// Reads lines until one starts with `prefix`.
  func line(startingWith prefix: String, timeout: Double = 60) throws -> String {
    while true {
      let l = try line(timeout: timeout)
      if l.hasPrefix(prefix) { return l }
    }
  }

  /// Every line still in the pipe, until the process's output ends.
  func remainingLines(timeout: Double = 60) -> [String] {
    var lines: [String] = []
    while let l = try? line(timeout: timeout) { lines.append(l) }
    return lines
  }

  func kill() {
    Glibc.kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }

  func closeInput() { try? input.fileHandleForWriting.close() }

  /// Writes `line` and a newline to the child's stdin.
  func send(_ line: String) { try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8)) }

  /// Waits for a normal exit; returns the status.
  func wait() -> Int32 {
    process.waitUntilExit()
    return process.terminationStatus
  }
}

enum ChildError: Error {
  case missing(String)
  case timeout(String)
  case ended(String)
}

/// Runs `body` on another thread and waits at most `timeout` seconds for it; false when it
/// did not finish in time (a hang), so a test can fail instead of blocking forever.
func finishes(within timeout: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
  let done = DispatchSemaphore(value: 0)
  Thread.detachNewThread {
    body()
    done.signal()
  }
  return done.wait(timeout: .now() + timeout) == .success
}

/// A store at `path` with keyspace "kv" holding "k" = "v".
func makeKeyValueStore(_ path: String) throws {
  let store = try Store.open(path: path)
  try store.write { txn in
    try txn.createKeyspace("kv")
    try txn.put(bytes("v"), forKey: bytes("k"), in: "kv")
  }
}

/// A store holding "k" = "v", and a process holding its writer lock (`write-hold`) until its
/// input closes; returns the path, the process and its pid.
func storeWithWriterLockHeld(in dir: TemporaryDirectory) throws -> (path: String, holder: Child, pid: Int32) {
  let path = dir.file()
  try makeKeyValueStore(path)
  let holder = try Child.worker("write-hold", file: path)
  _ = try holder.line(startingWith: "writing")
  return (path, holder, holder.process.processIdentifier)
}
