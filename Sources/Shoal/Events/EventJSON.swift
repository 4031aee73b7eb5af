import Foundation
import ShoalStorage

/// A JSON writer: objects in the order written, strings escaped per RFC 8259.
struct JSONText {
  private(set) var text = ""
  private var needsComma = [false]

  private mutating func separate() {
    if needsComma[needsComma.count - 1] { text += "," }
    needsComma[needsComma.count - 1] = true
  }

  mutating func beginObject() {
    separate()
    text += "{"
    needsComma.append(false)
  }

  mutating func endObject() {
    needsComma.removeLast()
    text += "}"
  }

  /// An object key: the value written next belongs to it.
  mutating func key(_ name: String) {
    separate()
    text += JSONText.quoted(name) + ":"
    needsComma[needsComma.count - 1] = false
  }

  mutating func string(_ value: String) {
    separate()
    text += JSONText.quoted(value)
  }

  mutating func null() {
    separate()
    text += "null"
  }

  /// Already-encoded JSON.
  mutating func raw(_ json: String) {
    separate()
    text += json
  }

  static func quoted(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }

  /// `2026-11-21T13:15:01.123Z`.
  static func iso8601(_ date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
  }
}

/// Objects as event JSON: each property by name, in schema order. Links to objects with a
/// primary key are that key; embedded objects are inline; other links are the object's key
/// in its class (`{"$class": …, "$key": …}`); collections are arrays, maps objects.
enum EventJSON {
  static func object(
    _ row: [RowValue], table: TableInfo, core: RealmCore, snapshot: ReadTransaction? = nil, only: Set<Int>? = nil
  ) -> String {
    var out = JSONText()
    out.beginObject()
    for (index, property) in table.properties.enumerated()
    where property.collection != .linkingObjects && index < row.count && (only?.contains(index) ?? true) {
      out.key(property.name)
      out.raw(value(row[index], property: property, core: core, snapshot: snapshot, depth: 0))
    }
    out.endObject()
    return out.text
  }

  static func value(_ v: RowValue, property: Property, core: RealmCore, snapshot: ReadTransaction?, depth: Int)
    -> String
  {
    switch v {
    case .null: return "null"
    case .bool(let b): return b ? "true" : "false"
    case .int(let i): return String(i)
    case .float(let f): return f.isFinite ? "\(f)" : "null"
    case .double(let d): return d.isFinite ? "\(d)" : "null"
    case .string(let s): return JSONText.quoted(s)
    case .data(let d): return JSONText.quoted(d.base64EncodedString())
    case .date(let d): return JSONText.quoted(JSONText.iso8601(d))
    case .uuid(let u): return JSONText.quoted(u.uuidString)
    case .objectId(let o): return JSONText.quoted(o.stringValue)
    case .decimal(let d): return JSONText.quoted(d.stringValue)
    case .link(let key):
      guard let name = property.objectClassName, let target = core.table(named: name) else { return "null" }
      return link(target, key, core: core, snapshot: snapshot, depth: depth)
    case .typedLink(let name, let key):
      guard let target = core.table(named: name) else { return "null" }
      return link(target, key, core: core, snapshot: snapshot, depth: depth)
    case .list(let items):
      return "["
        + items.map { value($0, property: property, core: core, snapshot: snapshot, depth: depth) }
        .joined(separator: ",") + "]"
    case .map(let entries):
      var out = JSONText()
      out.beginObject()
      for entry in entries {
        out.key(entry.key)
        out.raw(value(entry.value, property: property, core: core, snapshot: snapshot, depth: depth))
      }
      out.endObject()
      return out.text
    }
  }

  private static func link(
    _ target: TableInfo, _ key: ObjectKey, core: RealmCore, snapshot: ReadTransaction?, depth: Int
  )
    -> String
  {
    let row = snapshot.map { core.row(target, key, in: $0) } ?? core.row(target, key)
    guard let row else { return "null" }
    if target.isEmbedded, depth < 8 {
      var out = JSONText()
      out.beginObject()
      for (index, property) in target.properties.enumerated()
      where property.collection != .linkingObjects && index < row.count {
        out.key(property.name)
        out.raw(value(row[index], property: property, core: core, snapshot: snapshot, depth: depth + 1))
      }
      out.endObject()
      return out.text
    }
    if let pk = target.primaryKeyIndex, pk < row.count, let property = target.properties.first(where: \.isPrimary) {
      return value(row[pk], property: property, core: core, snapshot: snapshot, depth: depth + 1)
    }
    return "{\"$class\":\(JSONText.quoted(target.name)),\"$key\":\(key)}"
  }
}
