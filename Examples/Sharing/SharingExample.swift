import Foundation
import ShoalStorage

/// Two processes, one file: this program starts a copy of itself that writes, while it
/// listens for the other process's commits and prints what each one changed. With
/// `--key-file`, the file is encrypted with the 64 bytes that file holds, and both processes
/// open it with them.
///
///     swift run shoal-share-example shared.shoal
///     head -c 64 /dev/urandom > shared.key
///     swift run shoal-share-example encrypted.shoal --key-file shared.key
@main
struct SharingExample {
  static func main() throws {
    var arguments = CommandLine.arguments
    let isWriter = arguments.last == "--writer"
    if isWriter { arguments.removeLast() }
    var options = StoreOptions()
    var keyArguments: [String] = []
    if let at = arguments.firstIndex(of: "--key-file"), at + 1 < arguments.count {
      let keyFile = arguments[at + 1]
      guard let key = FileManager.default.contents(atPath: keyFile), key.count == 64 else {
        FileHandle.standardError.write(Data("shoal-share-example: \(keyFile) must hold exactly 64 bytes\n".utf8))
        exit(2)
      }
      options.encryptionKey = [UInt8](key)
      keyArguments = ["--key-file", keyFile]
      arguments.removeSubrange(at...(at + 1))
    }
    let path = arguments.count > 1 ? arguments[1] : "shared.shoal"
    if isWriter { return try writer(path, options: options) }

    let store = try Store.open(path: path, options: options)
    if options.encryptionKey != nil { print("observer (pid \(getpid())): \(path) is encrypted (AES-256-GCM)") }
    try store.write { try $0.ensureKeyspace("orders") }
    let done = DispatchSemaphore(value: 0)
    // Called on the store's listener thread for every commit of any process.
    let token = store.addChangeListener { from, to in
      guard let records = try? store.changes(from: from, to: to) else { return }
      for record in records {
        for keyspace in record.keyspaces {
          let what = keyspace.changes.map { "\($0.kind) \(String(decoding: $0.key, as: UTF8.self))" }
          print(
            "observer (pid \(getpid())): version \(record.version) in '\(keyspace.keyspace)': \(what.joined(separator: ", "))"
          )
        }
      }
      if (try? store.read { try $0.get(Array("done".utf8), in: "orders") }) != nil { done.signal() }
    }
    // Keep a snapshot pinned so that every change record stays readable until we saw it.
    let snapshot = try store.beginRead()
    let child = Process()
    child.executableURL = URL(fileURLWithPath: arguments[0])
    child.arguments = [path] + keyArguments + ["--writer"]
    try child.run()
    _ = done.wait(timeout: .now() + 30)
    child.waitUntilExit()
    snapshot.close()
    token.invalidate()
    print("observer: pins now \(store.pins().count), newest version \(store.latestVersion)")
  }

  static func writer(_ path: String, options: StoreOptions) throws {
    let store = try Store.open(path: path, options: options)
    for i in 1...3 {
      try store.write { txn in
        try txn.put(Array("order \(i)".utf8), forKey: Array("order-\(i)".utf8), in: "orders")
      }
      print("writer (pid \(getpid())): committed version \(store.latestVersion)")
    }
    try store.write { txn in
      try txn.delete(Array("order-1".utf8), in: "orders")
      try txn.put([1], forKey: Array("done".utf8), in: "orders")
    }
  }
}
