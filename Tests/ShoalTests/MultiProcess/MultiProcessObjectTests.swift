import Dispatch
import Foundation
import Shoal
import ShoalSharedModels
import ShoalTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A `shoal-realm-worker` process driven over its stdin, answering on its stdout.
final class RealmWorker: WorkerProcess {
  /// Starts a worker on `file`, opened with `encryptionKey` when one is given.
  init(file: String, encryptionKey: Data? = nil) throws {
    try super.init(
      "shoal-realm-worker",
      arguments: ["--file", file]
        + (encryptionKey.map { ["--key", $0.map { String(format: "%02x", $0) }.joined()] } ?? []))
  }
}

@Suite("Objects shared by several processes", .serialized)
struct MultiProcessObjectTests {
  @Test func twoProcessesAddAndQueryOneFile() throws {
    var config = fileConfiguration("shared")
    config.objectTypes = [Note.self]
    let realm = try Realm(configuration: config)
    let worker = try RealmWorker(file: config.fileURL!.path)

    // The other process writes; this one sees it after refresh().
    #expect(try worker.send("add 50 w") == "added 50")
    #expect(realm.objects(Note.self).count == 0)
    realm.refresh()
    #expect(realm.objects(Note.self).count == 50)
    #expect(realm.object(ofType: Note.self, forPrimaryKey: "w-7")?.text == "note 7")

    // This process writes; the other sees it and queries it through the index.
    try realm.write {
      for i in 0..<20 { realm.add(Note(value: ["id": "t-\(i)", "author": "t", "text": "mine", "priority": 9])) }
    }
    #expect(try worker.send("count") == "count 70")
    #expect(try worker.send("query author == 't'") == "match 20")
    #expect(try worker.send("query priority >= 4") == "match 30")

    // Interleaved writers keep every object.
    #expect(try worker.send("add 10 x") == "added 80")
    try realm.write { realm.add(Note(value: ["id": "last", "author": "t"])) }
    realm.refresh()
    #expect(realm.objects(Note.self).count == 81)
    #expect(try worker.send("count") == "count 81")
    _ = try? worker.send("quit")
  }

  @Test func anotherProcessesCommitReachesAnObserverHere() throws {
    var config = fileConfiguration("observed")
    config.objectTypes = [Note.self]
    let realm = try Realm(configuration: config)
    try realm.write { realm.add(Note(value: ["id": "mine", "author": "me", "priority": 1])) }
    let worker = try RealmWorker(file: config.fileURL!.path)
    let inbox = Inbox<Seen>()
    let queue = DispatchQueue(label: "cross-process observer")
    let notes = realm.objects(Note.self).sorted(byKeyPath: "id")
    let token = notes.observe(on: queue) { inbox.put(Seen($0)) }
    #expect(inbox.next() == .initial(1))
    // Inserted by the other process: "w-0", "w-1", "w-2" sort after "mine".
    #expect(try worker.send("add 3 w") == "added 4")
    #expect(inbox.next() == .update(count: 4, deletions: [], insertions: [1, 2, 3], modifications: []))
    // A local write gives the same shape of change set.
    try realm.write { realm.object(ofType: Note.self, forPrimaryKey: "mine")?.priority = 2 }
    #expect(inbox.next() == .update(count: 4, deletions: [], insertions: [], modifications: [0]))
    token.invalidate()
    _ = try? worker.send("quit")
  }

  @Test func aWriterKilledMidLoopLosesNoAcknowledgedObject() throws {
    var config = fileConfiguration("killed")
    config.objectTypes = [Note.self]
    let path = config.fileURL!.path
    for round in 0..<3 {
      let worker = try RealmWorker(file: path)
      worker.sendOnly("addloop 100000 r\(round)")
      var acknowledged = -1
      let target = 5 + round * 17
      while acknowledged < target {
        let line = try worker.line()
        if line.hasPrefix("committed ") { acknowledged = Int(line.dropFirst(10)) ?? acknowledged }
      }
      worker.kill()
      // Lines written before the kill are still in the pipe: the last one counts.
      while let line = try? worker.line(timeout: 5) {
        if line.hasPrefix("committed ") { acknowledged = Int(line.dropFirst(10)) ?? acknowledged }
      }
      // Every acknowledged commit is there, at most the one in flight beyond it.
      let realm = try Realm(configuration: config)
      realm.refresh()
      let stored = realm.objects(Note.self).filter("author == %@", "r\(round)")
      #expect(stored.count >= acknowledged + 1 && stored.count <= acknowledged + 2)
      for i in 0...acknowledged {
        #expect(realm.object(ofType: Note.self, forPrimaryKey: "r\(round)-\(i)")?.text == "loop \(i)")
      }
      // The file takes writes at once (the dead writer's lock is gone) and keys stay unique.
      try realm.write { realm.add(Note(value: ["id": "after-\(round)", "author": "t"])) }
    }
    let realm = try Realm(configuration: config)
    #expect(realm.objects(Note.self).filter("author == 't'").count == 3)
  }

  @Test func aDuplicatePrimaryKeyStopsTheWriterAndCommitsNothing() throws {
    var config = fileConfiguration("duplicate")
    config.objectTypes = [Note.self]
    let worker = try RealmWorker(file: config.fileURL!.path)
    #expect(try worker.send("add 2 dup") == "added 2")
    // RealmSwift raises an exception here; Shoal stops the process with its message.
    #expect(throws: RealmWorker.WorkerError.self) { _ = try worker.send("add 3 dup") }
    worker.kill()
    let realm = try Realm(configuration: config)
    #expect(realm.objects(Note.self).count == 2)
  }
}
