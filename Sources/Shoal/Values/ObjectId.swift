import Foundation
import Synchronization

/// A 12-byte (probably) unique object identifier.
///
/// ObjectIds are similar to a GUID or a UUID, and can be used to uniquely identify objects without a centralized ID
/// generator. An ObjectID consists of:
///
/// 1. A 4 byte timestamp measuring the creation time of the ObjectId in seconds since the Unix epoch.
/// 2. A 5 byte random value
/// 3. A 3 byte counter, initialized to a random value.
///
/// ObjectIds are intended to be fast to generate. Sorting by an ObjectId field will typically result in the objects
/// being sorted in creation order.
///
/// Unlike RealmSwift's `ObjectId`, which is a class, this is a value type; its public members are RealmSwift's.
public struct ObjectId: Sendable {
  /// Bytes 0–7, big-endian: the timestamp and the first four bytes of the random value.
  private let head: UInt64
  /// Bytes 8–11, big-endian: the last random byte and the counter.
  private let tail: UInt32

  // MARK: Initializers

  /// Creates a new zero-initialized ObjectId.
  public init() {
    head = 0
    tail = 0
  }

  /// Creates a new randomly-initialized ObjectId.
  public static func generate() -> ObjectId {
    ObjectId(
      seconds: secondsSince1970(Date()), machineId: ObjectIdGenerator.machineId,
      processId: ObjectIdGenerator.processId)
  }

  /// Creates a new ObjectId from the given 24-byte hexadecimal string.
  ///
  /// Throws if the string is not 24 characters or contains any characters other than 0-9a-fA-F.
  /// - Parameter string: The string to parse.
  public init(string: String) throws {
    guard let parsed = ObjectId(hexString: string) else {
      throw ValueInputError.invalidInput("Invalid Object ID string '\(string)': must be 24 hex digits")
    }
    self = parsed
  }

  /// Creates a new ObjectId using the given date, machine identifier, process identifier.
  ///
  /// As in RealmSwift, the timestamp is stored in whole seconds, the low three bytes of `machineId` and the low two
  /// bytes of `processId` make the five "random" bytes, and the counter is the process-wide one `generate()` uses.
  ///
  /// - Parameters:
  ///   - timestamp: A timestamp as NSDate.
  ///   - machineId: The machine identifier.
  ///   - processId: The process identifier.
  public init(timestamp: Date, machineId: Int, processId: Int) {
    self.init(
      seconds: ObjectId.secondsSince1970(timestamp), machineId: UInt32(truncatingIfNeeded: machineId),
      processId: UInt32(truncatingIfNeeded: processId))
  }

  /// Creates a new ObjectId from the given 24-byte hexadecimal static string.
  ///
  /// Aborts if the string is not 24 characters or contains any characters other than 0-9a-fA-F. Use the initializer
  /// which takes a String to handle invalid strings at runtime.
  public init(_ str: StaticString) {
    let string = str.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    guard let parsed = ObjectId(hexString: string) else {
      fatalError("Invalid Object ID string '\(string)': must be 24 hex digits")
    }
    self = parsed
  }

  /// Creates an ObjectId from its 12 stored bytes, in the order `bytes` gives them.
  ///
  /// The storage layer calls this with exactly the 12 bytes it wrote from `bytes`; any other count is a bug in the
  /// caller, never bad user input, so it is a precondition rather than a thrown error.
  init(bytes: [UInt8]) {
    precondition(bytes.count == 12, "an ObjectId is 12 bytes, not \(bytes.count)")
    var head: UInt64 = 0
    for byte in bytes[0..<8] { head = head << 8 | UInt64(byte) }
    var tail: UInt32 = 0
    for byte in bytes[8..<12] { tail = tail << 8 | UInt32(byte) }
    self.head = head
    self.tail = tail
  }

  /// The 12 bytes of the ObjectId, most significant first: comparing them bytewise orders ObjectIds as `<` does.
  var bytes: [UInt8] {
    var result = [UInt8]()
    result.reserveCapacity(12)
    for shift in stride(from: 56, through: 0, by: -8) { result.append(UInt8(truncatingIfNeeded: head >> shift)) }
    for shift in stride(from: 24, through: 0, by: -8) { result.append(UInt8(truncatingIfNeeded: tail >> shift)) }
    return result
  }

  // MARK: Properties

  /// Get the ObjectId as a 24-character hexadecimal string.
  public var stringValue: String {
    let digits = Array("0123456789abcdef".utf8)
    var utf8 = [UInt8]()
    utf8.reserveCapacity(24)
    for byte in bytes {
      utf8.append(digits[Int(byte >> 4)])
      utf8.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: utf8, as: UTF8.self)
  }

  /// Get the timestamp for the ObjectId, to the second.
  public var timestamp: Date {
    Date(timeIntervalSince1970: TimeInterval(UInt32(truncatingIfNeeded: head >> 32)))
  }

  // MARK: Comparison methods

  /// Comparison operator to check if the current value is greater than the right hand side.
  ///
  /// A `nil` right hand side counts as less than every ObjectId.
  public func isGreaterThan(_ objectId: ObjectId?) -> Bool {
    guard let objectId else { return true }
    return self > objectId
  }

  /// Comparison operator to check if the current value is greater than or equal to the right hand side.
  ///
  /// A `nil` right hand side counts as less than every ObjectId.
  public func isGreaterThanOrEqual(to objectId: ObjectId?) -> Bool {
    guard let objectId else { return true }
    return self >= objectId
  }

  /// Comparison operator to check if the current value is less than the right hand side.
  ///
  /// A `nil` right hand side counts as less than every ObjectId.
  public func isLessThan(_ objectId: ObjectId?) -> Bool {
    guard let objectId else { return false }
    return self < objectId
  }

  /// Comparison operator to check if the current value is less than or equal to the right hand side.
  ///
  /// A `nil` right hand side counts as less than every ObjectId.
  public func isLessThanOrEqual(to objectId: ObjectId?) -> Bool {
    guard let objectId else { return false }
    return self <= objectId
  }

  // MARK: Private

  /// Lays out an ObjectId as realm-core does: big-endian seconds, then the low three bytes of `machineId` and the low
  /// two bytes of `processId` (little-endian, as realm-core copies them), then the next counter value, big-endian.
  private init(seconds: UInt32, machineId: UInt32, processId: UInt32) {
    let counter = ObjectIdGenerator.counter.wrappingAdd(1, ordering: .relaxed).oldValue
    let machine =
      UInt64(machineId & 0xff) << 24 | UInt64(machineId >> 8 & 0xff) << 16
      | UInt64(machineId >> 16 & 0xff) << 8
    head = UInt64(seconds) << 32 | machine | UInt64(processId & 0xff)
    tail = (processId >> 8 & 0xff) << 24 | counter & 0x00ff_ffff
  }

  /// Parses exactly 24 hexadecimal digits, of either case; `nil` for anything else.
  private init?(hexString string: String) {
    let utf8 = Array(string.utf8)
    guard utf8.count == 24 else { return nil }
    var values = [UInt8]()
    values.reserveCapacity(12)
    var index = 0
    while index < 24 {
      guard let high = ObjectId.hexValue(utf8[index]), let low = ObjectId.hexValue(utf8[index + 1]) else {
        return nil
      }
      values.append(high << 4 | low)
      index += 2
    }
    self.init(bytes: values)
  }

  /// The value of one ASCII hexadecimal digit.
  private static func hexValue(_ character: UInt8) -> UInt8? {
    switch character {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// Whole seconds since 1970, truncated toward zero and wrapped to 32 bits, as realm-core stores them.
  private static func secondsSince1970(_ date: Date) -> UInt32 {
    let seconds = date.timeIntervalSince1970.rounded(.towardZero)
    guard seconds.isFinite else { return 0 }
    // Clamp into Int64's range (conversion would trap outside it); the result is wrapped to 32 bits anyway.
    let clamped = Swift.min(Swift.max(seconds, -9.0e18), 9.0e18)
    return UInt32(truncatingIfNeeded: Int64(clamped))
  }
}

/// The per-process state behind `ObjectId.generate()`: five random bytes and a counter starting at a random value.
private enum ObjectIdGenerator {
  /// Supplies the first three of the five random bytes.
  static let machineId = UInt32.random(in: .min ... .max)
  /// Supplies the last two of the five random bytes.
  static let processId = UInt32.random(in: .min ... .max)
  /// The counter; only its low three bytes are used.
  static let counter = Atomic<UInt32>(UInt32.random(in: .min ... .max))
}

extension ObjectId: CustomStringConvertible {
  /// The ObjectId as a 24-character hexadecimal string, as `stringValue`.
  public var description: String { stringValue }
}

extension ObjectId: Hashable {
  /// Returns a Boolean value indicating whether two ObjectId values are equal.
  ///
  /// - Parameters:
  ///   - lhs: An ObjectId value to compare.
  ///   - rhs: Another ObjectId value to compare.
  public static func == (lhs: ObjectId, rhs: ObjectId) -> Bool {
    lhs.head == rhs.head && lhs.tail == rhs.tail
  }

  /// Hashes the 12 bytes of the ObjectId.
  ///
  /// - Parameter hasher: The hasher to use when combining the components of this instance.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(head)
    hasher.combine(tail)
  }
}

extension ObjectId: Decodable {
  /// Creates a new ObjectId by decoding from the given decoder.
  ///
  /// This initializer throws an error if reading from the decoder fails, or
  /// if the data read is corrupted or otherwise invalid.
  ///
  /// - Parameter decoder: The decoder to read data from.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    try self.init(string: container.decode(String.self))
  }
}

extension ObjectId: Encodable {
  /// Encodes this ObjectId into the given encoder.
  ///
  /// This function throws an error if the given encoder is unable to encode a string.
  ///
  /// - Parameter encoder: The encoder to write data to.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(stringValue)
  }
}

extension ObjectId: Comparable {
  /// Returns a Boolean value indicating whether the value of the first
  /// argument is less than that of the second argument.
  ///
  /// ObjectIds compare bytewise, so those generated in earlier seconds sort first.
  ///
  /// - Parameters:
  ///   - lhs: An ObjectId value to compare.
  ///   - rhs: Another ObjectId value to compare.
  public static func < (lhs: ObjectId, rhs: ObjectId) -> Bool {
    (lhs.head, lhs.tail) < (rhs.head, rhs.tail)
  }

  /// Returns a Boolean value indicating whether the ObjectId of the first
  /// argument is less than or equal to that of the second argument.
  ///
  /// - Parameters:
  ///   - lhs: An ObjectId value to compare.
  ///   - rhs: Another ObjectId value to compare.
  public static func <= (lhs: ObjectId, rhs: ObjectId) -> Bool {
    !(rhs < lhs)
  }

  /// Returns a Boolean value indicating whether the ObjectId of the first
  /// argument is greater than or equal to that of the second argument.
  ///
  /// - Parameters:
  ///   - lhs: An ObjectId value to compare.
  ///   - rhs: Another ObjectId value to compare.
  public static func >= (lhs: ObjectId, rhs: ObjectId) -> Bool {
    !(lhs < rhs)
  }

  /// Returns a Boolean value indicating whether the ObjectId of the first
  /// argument is greater than that of the second argument.
  ///
  /// - Parameters:
  ///   - lhs: An ObjectId value to compare.
  ///   - rhs: Another ObjectId value to compare.
  public static func > (lhs: ObjectId, rhs: ObjectId) -> Bool {
    rhs < lhs
  }
}

// MARK: - Errors

/// The error the value types throw for malformed input: `Realm.Error` with code `.invalidInput`,
/// as RealmSwift throws.
enum ValueInputError {
  /// The error to throw for malformed input described by `message`.
  static func invalidInput(_ message: String) -> any Error {
    Realm.Error(.invalidInput, message)
  }
}
