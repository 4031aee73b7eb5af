import Foundation
import PackagePlugin

/// `swift package shoal info FILE`, `verify`, `dump`, `compact`, `watch`, `events`: the `shoal` CLI from the
/// package.
@main
struct ShoalPlugin: CommandPlugin {
  func performCommand(context: PluginContext, arguments: [String]) async throws {
    let process = Process()
    process.executableURL = try context.tool(named: "shoal").url
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    if process.terminationStatus != 0 { throw ShoalFailed(status: process.terminationStatus) }
  }
}

struct ShoalFailed: Error, CustomStringConvertible {
  var status: Int32
  var description: String { "shoal exited with status \(status)" }
}
