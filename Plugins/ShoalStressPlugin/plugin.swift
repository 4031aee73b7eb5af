import Foundation
import PackagePlugin

/// `swift package shoal-stress run --processes 6 --seconds 30 --kill-every 1` and the
/// other `shoal-stress` commands, built and run from the package.
@main
struct ShoalStressPlugin: CommandPlugin {
  func performCommand(context: PluginContext, arguments: [String]) async throws {
    try runTool(try context.tool(named: "shoal-stress").url, arguments)
  }
}

func runTool(_ url: URL, _ arguments: [String]) throws {
  let process = Process()
  process.executableURL = url
  process.arguments = arguments
  try process.run()
  process.waitUntilExit()
  if process.terminationStatus != 0 {
    throw ToolFailed(name: url.lastPathComponent, status: process.terminationStatus)
  }
}

struct ToolFailed: Error, CustomStringConvertible {
  var name: String
  var status: Int32
  var description: String { "\(name) exited with status \(status)" }
}
