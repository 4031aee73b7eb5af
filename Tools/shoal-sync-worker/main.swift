import Dispatch
import Foundation
import Shoal
import ShoalSharedModels
import ShoalSync

// A device for the sync tests and the demo: opens a synced Realm of notes and obeys commands
// read line by line from stdin, answering on stdout.
//
//   shoal-sync-worker --file PATH --url POSTGRES_URL --client NAME
//
//   add N PREFIX       adds notes PREFIX-0 … PREFIX-(N-1) in one commit
//   addloop N PREFIX   the same, one commit per note, printing "committed I" after each
//   random SEED N      N commits of random edits (insert, update a field, append a tag, delete)
//                      of notes r-0 … r-19
//   set ID TEXT        sets a note's text (creating the note if missing)
//   delete ID          deletes a note
//   wait upload|download  waits for the session (prints "waited upload|download")
//   digest             refreshes, prints "digest COUNT HASH" of every note's fields
//   agent              prints "agent yes|no": whether this process runs the file's agent
//   awaitstate agent|offline SECONDS  waits until this process runs the agent, or its agent
//                      failed to reach the server, at most SECONDS: "state agent|offline yes|no"
//   observe            prints "observed N" (the number of notes) after each change delivered
//   subscribe NAME PREDICATE  adds (or replaces) a named subscription to notes and waits until
//                      it is applied: prints "subscribed NAME" or "error …"
//   unsubscribe NAME|all  removes one subscription or all, waits: prints "unsubscribed NAME"
//   pause | resume     suspends or resumes this process's sync session (prints "paused"/"resumed")
//   progress upload|download [indefinitely]  registers a progress block for the outstanding
//                      work (or, with `indefinitely`, reporting until the process ends), which
//                      prints "progress DONE/TOTAL" at each report (asynchronously)
//   quit               exits

/// Writes one answer line, unbuffered (the test waits on it).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
  guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
  return arguments[index + 1]
}
guard let file = option("--file"), let url = option("--url"), let client = option("--client") else {
  FileHandle.standardError.write(Data("usage: shoal-sync-worker --file PATH --url URL --client NAME\n".utf8))
  exit(2)
}

/// A line per note, sorted, for comparing devices (the server side builds the same lines).
func digest(_ realm: Realm) -> String {
  let lines = realm.objects(Note.self).map { "\($0.id)|\($0.author)|\($0.text)|\($0.priority)|\(Array($0.tags))" }
    .sorted()
  var hash: UInt64 = 0xcbf2_9ce4_8422_2325
  for byte in lines.joined(separator: "\n").utf8 {
    hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
  }
  return "digest \(lines.count) \(String(hash, radix: 16))"
}

/// A small deterministic generator (SplitMix64), so a seed repeats its edits.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9e37_79b9_7f4a_7c15
    var z = state
    z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
    z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
    return z ^ (z >> 31)
  }
}

var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: file), objectTypes: [Note.self])
var observation: NotificationToken?
var progressToken: SyncSession.ProgressNotificationToken?
do {
  configuration.syncConfiguration = try SyncConfiguration(url: url, clientIdentifier: client)
  let realm = try Realm(configuration: configuration)
  say("ready")
  while let line = readLine() {
    let words = line.split(separator: " ", maxSplits: 2).map(String.init)
    switch words.first {
    case "add" where words.count == 3:
      try realm.write {
        for i in 0..<(Int(words[1]) ?? 0) {
          realm.create(
            Note.self, value: ["id": "\(words[2])-\(i)", "author": words[2], "text": "note \(i)", "priority": i % 5],
            update: .modified)
        }
      }
      say("added \(realm.objects(Note.self).count)")
    case "addloop" where words.count == 3:
      for i in 0..<(Int(words[1]) ?? 0) {
        try realm.write {
          realm.create(
            Note.self, value: ["id": "\(words[2])-\(i)", "author": words[2], "text": "loop \(i)", "priority": i % 5],
            update: .modified)
        }
        say("committed \(i)")
      }
    case "random" where words.count == 3:
      var generator = SeededGenerator(state: UInt64(words[1]) ?? 0)
      for _ in 0..<(Int(words[2]) ?? 0) {
        let id = "r-\(Int.random(in: 0..<20, using: &generator))"
        try realm.write {
          let existing = realm.object(ofType: Note.self, forPrimaryKey: id)
          switch (Int.random(in: 0..<10, using: &generator), existing) {
          case (0, let note?): realm.delete(note)
          case (1...3, let note?): note.text = "\(client) \(Int.random(in: 0..<1000, using: &generator))"
          case (4...5, let note?): note.priority = Int.random(in: 0..<100, using: &generator)
          case (6, let note?): note.tags.append(client)
          default:
            realm.create(Note.self, value: ["id": id, "author": client, "text": "new"], update: .modified)
          }
        }
      }
      say("randomized \(realm.objects(Note.self).count)")
    case "set" where words.count == 3:
      try realm.write {
        realm.create(Note.self, value: ["id": words[1], "author": client, "text": words[2]], update: .modified)
      }
      say("set \(words[1])")
    case "delete" where words.count == 2:
      try realm.write {
        if let note = realm.object(ofType: Note.self, forPrimaryKey: words[1]) { realm.delete(note) }
      }
      say("deleted \(words[1])")
    case "wait" where words.count == 2:
      let direction: SyncSession.ProgressDirection = words[1] == "upload" ? .upload : .download
      let done = DispatchSemaphore(value: 0)
      realm.syncSession?.wait(for: direction) { error in
        if let error { say("error \(error)") }
        done.signal()
      }
      done.wait()
      say("waited \(words[1])")
    case "digest":
      realm.refresh()
      say(digest(realm))
    case "agent":
      say("agent \(realm.syncSession?.isAgent == true ? "yes" : "no")")
    case "awaitstate" where words.count == 3:
      // Until this process runs the agent ("agent"), or its agent has failed to reach the
      // server ("offline"), for at most SECONDS.
      let deadline = Date().addingTimeInterval(Double(words[2]) ?? 10)
      func reached() -> Bool {
        guard let session = realm.syncSession else { return false }
        return words[1] == "agent" ? session.isAgent : session.lastError != nil && session.connectionState != .connected
      }
      while !reached(), Date() < deadline { usleep(2_000) }
      say("state \(words[1]) \(reached() ? "yes" : "no")")
    case "observe":
      let queue = DispatchQueue(label: "observer")
      observation = realm.objects(Note.self).observe(on: queue) { change in
        if case .update(let notes, _, _, _) = change { say("observed \(notes.count)") }
      }
      say("observing")
    case "subscribe" where words.count == 3, "unsubscribe" where words.count == 2:
      let subscriptions = realm.subscriptions
      let done = DispatchSemaphore(value: 0)
      let name = words[1]
      subscriptions.update(
        {
          if words[0] == "subscribe" {
            subscriptions.append(QuerySubscription<Note>(name: name, where: words[2]))
          } else if name == "all" {
            subscriptions.removeAll()
          } else {
            subscriptions.remove(named: name)
          }
        },
        onComplete: { error in
          say(error.map { "error \($0)" } ?? "\(words[0])d \(name)")
          done.signal()
        })
      done.wait()
    case "pause":
      realm.syncSession?.suspend()
      say("paused")
    case "resume":
      realm.syncSession?.resume()
      say("resumed")
    case "progress" where words.count == 2 || (words.count == 3 && words[2] == "indefinitely"):
      progressToken = realm.syncSession?.addProgressNotification(
        for: words[1] == "upload" ? .upload : .download,
        mode: words.count == 3 ? .reportIndefinitely : .forCurrentlyOutstandingWork
      ) { progress in say("progress \(progress.transferredBytes)/\(progress.transferrableBytes)") }
    case "quit":
      exit(0)
    default:
      say("error unknown command: \(line)")
    }
  }
} catch {
  say("error \(error)")
  exit(1)
}
