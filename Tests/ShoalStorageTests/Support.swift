import Foundation
import ShoalStorage

/// A fresh temporary directory, removed when the value is released.
final class TemporaryDirectory {
  let path: String

  init() {
    path = NSTemporaryDirectory() + "shoal-tests-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  func file(_ name: String = "data.shoal") -> String { path + "/" + name }
}

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

func fileSize(_ path: String) -> UInt64 {
  ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.uint64Value ?? 0
}

/// Deterministic text-like values.
func textValue(_ seed: Int, length: Int) -> [UInt8] {
  let words = ["river", "shoal", "current", "tide", "reef", "salmon", "harbour", "kelp", "drift", "school"]
  var out: [UInt8] = []
  var i = UInt(bitPattern: seed)
  while out.count < length {
    out += Array(words[Int(i % UInt(words.count))].utf8) + [32]
    i = i &* 31 &+ 7
  }
  return Array(out.prefix(length))
}

/// A store at `path` whose keyspace "k" holds `count` text values of 200 bytes, keys "k0"…
/// (many leaves: reading them goes to the file).
@discardableResult
func makeTextStore(at path: String, count: Int = 2000) throws -> Store {
  let store = try Store.open(path: path)
  try store.write { txn in
    try txn.createKeyspace("k")
    for i in 0..<count { try txn.put(textValue(i, length: 200), forKey: bytes("k\(i)"), in: "k") }
  }
  return store
}

/// Reads every entry of a keyspace through a cursor.
func scan(_ cursor: Cursor) throws -> [([UInt8], [UInt8])] {
  var out: [([UInt8], [UInt8])] = []
  while let (k, v) = try cursor.next() { out.append((k, v)) }
  return out
}
