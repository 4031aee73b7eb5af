import Dispatch
import Foundation
import Shoal
import Synchronization

/// The live part of `make demo`: one writer (this process) and two observer processes, each
/// printing the change sets it receives, and a frozen snapshot read on another thread while
/// writes go on.
enum LiveDemo {
  /// An observer process: prints every change to the fish, sorted by name, until "done" appears.
  static func observe(path: String, name: String) throws {
    let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Fish.self])
    let realm = try Realm(configuration: configuration)
    let finished = DispatchSemaphore(value: 0)
    let say: @Sendable (String) -> Void = { FileHandle.standardOutput.write(Data(("  [\(name)] " + $0 + "\n").utf8)) }
    let token = realm.objects(Fish.self).sorted(byKeyPath: "name").observe(on: DispatchQueue(label: name)) { change in
      switch change {
      case .initial(let fish):
        say("watching \(fish.count) fish (pid \(getpid()))")
      case .update(let fish, let deletions, let insertions, let modifications):
        let inserted = insertions.map { fish[$0].name }
        let modified = modifications.map { "\(fish[$0].name)→\(fish[$0].length)m" }
        say("deleted at \(deletions), inserted \(inserted), modified \(modified); now \(fish.count)")
        if inserted.contains("done") { finished.signal() }
      case .error(let error):
        say("error \(error)")
        finished.signal()
      }
    }
    finished.wait()
    token.invalidate()
  }

  static func run(configuration: Realm.Configuration) throws {
    guard let path = configuration.fileURL?.path else { return }
    print("— live objects across processes —")
    let realm = try Realm(configuration: configuration)
    var observers: [(Process, Pipe)] = []
    for name in ["observer-1", "observer-2"] {
      let process = Process()
      let pipe = Pipe()
      process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
      process.arguments = ["observe", path, name]
      process.standardOutput = pipe
      try process.run()
      observers.append((process, pipe))
    }
    // Forward the observers' lines, and wait until both are watching.
    let watching = DispatchSemaphore(value: 0)
    for (_, pipe) in observers {
      let handle = pipe.fileHandleForReading
      Thread.detachNewThread {
        var buffer = Data()
        var announced = false
        while true {
          let chunk = handle.availableData
          if chunk.isEmpty { break }
          buffer.append(chunk)
          while let newline = buffer.firstIndex(of: 10) {
            let line = String(decoding: buffer[..<newline], as: UTF8.self)
            buffer.removeSubrange(...newline)
            print(line)
            if !announced, line.contains("watching") {
              announced = true
              watching.signal()
            }
          }
        }
      }
    }
    watching.wait()
    watching.wait()
    print("writer (pid \(getpid())): adding a fish")
    try realm.write { realm.add(Fish(value: ["name": "ide", "habitat": "river", "length": 0.6])) }
    waitForDelivery()
    print("writer: a carp grows, the dab leaves")
    try realm.write {
      realm.object(ofType: Fish.self, forPrimaryKey: "carp")?.length = 1.1
      if let dab = realm.object(ofType: Fish.self, forPrimaryKey: "dab") { realm.delete(dab) }
    }
    waitForDelivery()

    // A frozen snapshot stays the same on another thread while this one writes.
    let frozen = realm.objects(Fish.self).freeze()
    let reader = DispatchSemaphore(value: 0)
    let counts = FrozenCounts()
    Thread.detachNewThread {
      for _ in 0..<200 { counts.record(frozen.count, frozen.sum(ofProperty: "length") as Double) }
      reader.signal()
    }
    for i in 0..<20 {
      try realm.write { realm.add(Fish(value: ["name": "fry-\(i)", "habitat": "lake", "length": 0.01])) }
    }
    reader.wait()
    print(
      "frozen snapshot read \(counts.reads) times on another thread during 20 commits: "
        + "always \(counts.distinct.count == 1 ? "the same" : "DIFFERENT") (\(frozen.count) fish); live: "
        + "\(realm.objects(Fish.self).count) fish")
    try realm.write {
      realm.delete(realm.objects(Fish.self).filter("name BEGINSWITH 'fry-'"))
      realm.add(Fish(value: ["name": "done", "habitat": "none", "length": 0]))
    }
    for (process, _) in observers { process.waitUntilExit() }
    print("both observers saw every change and exited")
  }

  /// Lets the observers print before the next commit (output order only; nothing depends on it).
  private static func waitForDelivery() {
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { done.signal() }
    done.wait()
  }
}

/// What the snapshot reader saw.
final class FrozenCounts: Sendable {
  private let seen = Mutex<(reads: Int, distinct: Set<String>)>((0, []))
  var reads: Int { seen.withLock { $0.reads } }
  var distinct: Set<String> { seen.withLock { $0.distinct } }
  func record(_ count: Int, _ length: Double) {
    seen.withLock {
      $0.reads += 1
      $0.distinct.insert("\(count)/\(length)")
    }
  }
}
