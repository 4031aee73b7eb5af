import Foundation
import Shoal
import ShoalSharedModels

// A process that opens a Realm and obeys commands read line by line from stdin, answering on
// stdout: the other side of the object layer's multi-process tests. With `--key HEX`, the file
// is opened with that 64-byte encryption key (128 hex characters).
//
//   add N PREFIX     adds N notes with ids PREFIX-0 … PREFIX-(N-1), by author PREFIX
//   addloop N PREFIX the same, one commit per note, printing "committed I" after each
//   count            refreshes, prints "count N" (all notes)
//   query PREDICATE  refreshes, prints "match N" for notes matching the predicate
//   quit             exits

/// Writes one answer line, unbuffered (the test waits on it).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
/// The 64-byte key given as 128 hex characters after `--key`, for an encrypted file.
func key(hex: String) -> Data? {
  let digits = Array(hex.utf8)
  guard digits.count == 128 else { return nil }
  var key = Data()
  for i in stride(from: 0, to: 128, by: 2) {
    guard let byte = UInt8(String(decoding: digits[i..<(i + 2)], as: UTF8.self), radix: 16) else { return nil }
    key.append(byte)
  }
  return key
}
guard arguments.count == 3 || arguments.count == 5, arguments[1] == "--file",
  arguments.count == 3 || (arguments[3] == "--key" && key(hex: arguments[4]) != nil)
else {
  FileHandle.standardError.write(Data("usage: shoal-realm-worker --file PATH [--key HEX128]\n".utf8))
  exit(2)
}
var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: arguments[2]))
if arguments.count == 5 { configuration.encryptionKey = key(hex: arguments[4]) }
configuration.objectTypes = [Note.self]
do {
  let realm = try Realm(configuration: configuration)
  say("ready")
  while let line = readLine() {
    let words = line.split(separator: " ", maxSplits: 2).map(String.init)
    switch words.first {
    case "add" where words.count == 3:
      let count = Int(words[1]) ?? 0
      try realm.write {
        for i in 0..<count {
          realm.add(
            Note(value: ["id": "\(words[2])-\(i)", "author": words[2], "text": "note \(i)", "priority": i % 5]))
        }
      }
      say("added \(realm.objects(Note.self).count)")
    case "addloop" where words.count == 3:
      // One note per commit, acknowledging each; a test kills this process mid-loop.
      let count = Int(words[1]) ?? 0
      for i in 0..<count {
        try realm.write {
          realm.add(
            Note(value: ["id": "\(words[2])-\(i)", "author": words[2], "text": "loop \(i)", "priority": i % 5]))
        }
        say("committed \(i)")
      }
      say("added \(realm.objects(Note.self).count)")
    case "count":
      realm.refresh()
      say("count \(realm.objects(Note.self).count)")
    case "query" where words.count >= 2:
      realm.refresh()
      let predicate = words.dropFirst().joined(separator: " ")
      say("match \(realm.objects(Note.self).filter(predicate).count)")
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
