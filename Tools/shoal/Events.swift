import ArgumentParser
import Foundation
import Shoal

struct EventsCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "events",
    abstract: "Print the events recorded in an event file (a Shoal file of the default sink, or JSON Lines).")
  @Argument(help: "The event file: `<database>.events.shoal`, or a JSON Lines file.") var file: String
  @Option(help: "Print only the last N events.") var last: Int?
  @OptionGroup var key: KeyOption
  @OptionGroup var output: Output

  func run() throws {
    var events: [RecordedEvent]
    do {
      events = try EventsCommand.read(file, key: key.key())
    } catch {
      try fail(error, json: output.json)
    }
    // Oldest first; events of one timestamp keep the file's order.
    events = events.enumerated().sorted { ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset) }
      .map(\.element)
    if let last { events = Array(events.suffix(max(0, last))) }
    if output.json {
      for event in events { print(event.json) }
      return
    }
    print("\(events.count) event(s) in \(file)")
    for event in events {
      let metadata = event.metadata.keys.sorted().map { "\($0)=\(event.metadata[$0] ?? "")" }.joined(separator: " ")
      print(
        "\(event.timestamp.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))  "
          + "\(event.activity)  \(event.event ?? "-")" + (metadata.isEmpty ? "" : "  [\(metadata)]"))
      if let data = event.data { print("    " + data) }
    }
  }

  /// The events of a Shoal event file, or of a JSON Lines file.
  static func read(_ path: String, key: [UInt8]? = nil) throws -> [RecordedEvent] {
    guard FileManager.default.fileExists(atPath: path) else {
      throw ValidationError("No event file at '\(path)'.")
    }
    let head = FileHandle(forReadingAtPath: path).flatMap { try? $0.read(upToCount: 1) } ?? Data()
    if head.first == UInt8(ascii: "{") {
      let text = try String(contentsOfFile: path, encoding: .utf8)
      return try text.split(separator: "\n").enumerated().map { index, line in
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
          let activity = object["activity"] as? String
        else {
          throw ValidationError("Line \(index + 1) of '\(path)' is not an event.")
        }
        var metadata: [String: String] = [:]
        for (key, value) in object where !["_id", "timestamp", "activity", "event", "data"].contains(key) {
          metadata[key] = value as? String
        }
        let timestamp = (object["timestamp"] as? String).flatMap {
          try? Date($0, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        return RecordedEvent(
          id: (object["_id"] as? String).flatMap { try? ObjectId(string: $0) } ?? .generate(),
          timestamp: timestamp ?? Date(timeIntervalSince1970: 0), activity: activity,
          event: object["event"] as? String, data: object["data"] as? String, metadata: metadata)
      }
    }
    return try ShoalEventSink.events(
      in: Realm.Configuration(fileURL: URL(fileURLWithPath: path), encryptionKey: key.map { Data($0) }, readOnly: true))
  }
}
