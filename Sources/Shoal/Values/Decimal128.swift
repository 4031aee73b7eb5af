import Foundation
import Synchronization

/// A 128-bit decimal floating point number.
///
/// A class, as RealmSwift's is: `negate()` changes the value in place, also through a `let`, and every reference to
/// the same instance sees the change. Equality, ordering and hashing go by value.
///
/// ```swift
/// let price: Decimal128 = "19.99"
/// let total = price * 3            // 59.97, exact
/// let refund = Decimal128(value: total)
/// refund.negate()                  // -59.97; `total` is unchanged
/// ```
///
/// RealmSwift's `Decimal128` is an IEEE 754-2008 decimal128 (34 significant digits, exponents -6143 to 6144). Shoal's
/// holds the values Foundation's `Decimal` can: up to 38 significant digits and exponents from -128 to 127, so
/// `decimalValue` is always exact. Results are rounded to 38 significant digits, ties to even. Values whose magnitude
/// is too large to represent (`max` is about 1e165), infinities and division by zero give NaN, where RealmSwift gives
/// an infinity; magnitudes below 1e-128 round to zero.
///
/// Unlike RealmSwift's NaN, which is unequal to itself, NaN here equals NaN and sorts before every other value (as
/// realm-core sorts it), so that `==`, `<` and hashing stay consistent for sets, dictionaries and sorting.
public final class Decimal128: Sendable {
  /// The current value; behind a lock because `negate()` may change it while another thread reads it.
  private let state: Mutex<Decimal128Value>

  /// The current value.
  var value: Decimal128Value { state.withLock { $0 } }

  /// Wraps `value`.
  init(_ value: Decimal128Value) {
    state = Mutex(value)
  }

  // MARK: Initializers

  /// Creates a new zero-initialized Decimal128.
  public convenience init() {
    self.init(Decimal128Value())
  }

  /// Converts the given value to a Decimal128.
  ///
  /// The following types can be converted to Decimal128:
  /// - Int (of any size)
  /// - Float
  /// - Double
  /// - String
  /// - NSNumber
  /// - Decimal
  ///
  /// `Bool`, `Decimal128` (copied), `Substring` and `NSNull` (or `nil`, giving NaN) are accepted too. Passing a value
  /// with a type not in this list is a fatal error. A string which cannot be parsed as a Decimal128 gives NaN, as in
  /// RealmSwift. Binary floating point values are rounded to 15 significant digits, as RealmSwift rounds them.
  ///
  /// - parameter value: The value to convert to a Decimal128.
  public convenience init(value: Any) {
    self.init(Decimal128Value.converting(value))
  }

  /// Converts the given number to a Decimal128.
  ///
  /// Integers convert exactly; floating point numbers are rounded to 15 significant digits, as RealmSwift rounds them,
  /// so that `0.1` gives exactly `0.1`.
  ///
  /// - parameter number: The number to convert to a Decimal128.
  public convenience init(number: NSNumber) {
    self.init(Decimal128Value.converting(number: number))
  }

  /// Parse the given string as a Decimal128.
  ///
  /// This initializer never throws and is marked as `throws` only because RealmSwift's is. Strings which cannot be
  /// parsed as a Decimal128 return a value where `isNaN` is `true`. Accepted: an optional sign, digits with an
  /// optional decimal point, an optional exponent (`e` or `E`, optionally signed), surrounding whitespace, and `NaN`.
  /// More than 38 significant digits are rounded, ties to even.
  ///
  /// - parameter string: The string to parse.
  public convenience init(string: String) throws {
    self.init(Decimal128Value.parsing(string))
  }

  /// Converts an integer exactly; for the object layer, not RealmSwift API.
  convenience init(_ value: Int) {
    self.init(Decimal128Value.converting(integer: value))
  }

  /// Converts a double, rounded to 15 significant digits as RealmSwift does; for the object layer, not RealmSwift API.
  convenience init(_ value: Double) {
    self.init(Decimal128Value.converting(double: value, precision: 15))
  }

  /// Reads a value from the bytes `storageBytes` gave; anything else (corrupt data from a file) reads as NaN.
  convenience init(storage bytes: [UInt8]) {
    self.init(Decimal128Value(storage: bytes))
  }

  /// A 19-byte encoding that `init(storage:)` reads back exactly and that orders bytewise as the values do.
  var storageBytes: [UInt8] { value.storageBytes }

  /// The minimum value for Decimal128: -(10^38 - 1) × 10^127.
  public static var min: Decimal128 { Decimal128(Decimal128Value.min) }

  /// The maximum value for Decimal128: (10^38 - 1) × 10^127.
  public static var max: Decimal128 { Decimal128(Decimal128Value.max) }

  // MARK: Properties

  /// Convert this value to a string.
  ///
  /// `NaN`, or the shortest form of the value: plain notation (`"-12.5"`, `"0.001"`, `"1000"`) while the number has no
  /// more than 38 integer digits and no more than 6 zeros after the point before the first significant digit, else
  /// scientific notation with a capital `E` (`"1.5E-8"`, `"2E40"`). `init(string:)` reads it back exactly.
  public var stringValue: String { value.stringValue }

  /// Gets if this Decimal128 represents a NaN value.
  public var isNaN: Bool { value.isNaN }

  /// `true` if `self` is a signaling NaN, `false` otherwise.
  ///
  /// As in RealmSwift, this is `isNaN`.
  public var isSignaling: Bool { isNaN }

  /// `true` if `self` is a signaling NaN, `false` otherwise.
  ///
  /// As in RealmSwift, this is `isNaN`.
  public var isSignalingNaN: Bool { isNaN }

  /// Convert this value to a double. This is a lossy conversion.
  ///
  /// The result is the `Double` nearest the value; NaN gives `Double.nan`.
  public var doubleValue: Double { value.doubleValue }

  /// Convert this value to a `Decimal`.
  ///
  /// The conversion is exact: every Decimal128 value is a `Decimal` value. NaN gives `Decimal.nan`.
  public var decimalValue: Decimal { value.decimalValue }

  // MARK: Methods

  /// Replaces this Decimal128 value with its additive inverse, in place: every reference to this instance sees the
  /// new value, as with RealmSwift's class.
  public func negate() {
    state.withLock { $0 = $0.negated }
  }

  /// Comparison operator to check if the current value is greater than the right hand side.
  ///
  /// A `nil` right hand side counts as NaN.
  public func isGreaterThan(_ decimalNumber: Decimal128?) -> Bool {
    Decimal128Value.compare(value, decimalNumber?.value ?? .notANumber) > 0
  }

  /// Comparison operator to check if the current value is greater than or equal to the right hand side.
  ///
  /// A `nil` right hand side counts as NaN.
  public func isGreaterThanOrEqual(to decimalNumber: Decimal128?) -> Bool {
    Decimal128Value.compare(value, decimalNumber?.value ?? .notANumber) >= 0
  }

  /// Comparison operator to check if the current value is less than the right hand side.
  ///
  /// A `nil` right hand side counts as NaN.
  public func isLessThan(_ decimalNumber: Decimal128?) -> Bool {
    Decimal128Value.compare(value, decimalNumber?.value ?? .notANumber) < 0
  }

  /// Comparison operator to check if the current value is less than or equal to the right hand side.
  ///
  /// A `nil` right hand side counts as NaN.
  public func isLessThanOrEqual(to decimalNumber: Decimal128?) -> Bool {
    Decimal128Value.compare(value, decimalNumber?.value ?? .notANumber) <= 0
  }

  /// Adds the right hand side to the current value and returns the result.
  public func decimalNumber(byAdding decimalNumber: Decimal128) -> Decimal128 {
    self + decimalNumber
  }

  /// Subtracts the right hand side from the current value and returns the result.
  public func decimalNumber(bySubtracting decimalNumber: Decimal128) -> Decimal128 {
    self - decimalNumber
  }

  /// Multiplies the current value by the right hand side and returns the result.
  public func decimalNumberByMultiplying(by decimalNumber: Decimal128) -> Decimal128 {
    self * decimalNumber
  }

  /// Divides the current value by the right hand side and returns the result.
  public func decimalNumberByDividing(by decimalNumber: Decimal128) -> Decimal128 {
    self / decimalNumber
  }
}

extension Decimal128: CustomStringConvertible {
  /// The value as a string, as `stringValue`.
  public var description: String { stringValue }
}

extension Decimal128: Hashable {
  /// Hashes the value; equal values (such as `1.0` and `1.00`) hash equally, as they share one canonical form.
  ///
  /// - Parameter hasher: The hasher to use when combining the components of this instance.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(value)
  }
}

extension Decimal128: Decodable {
  /// Creates a new Decimal128 by decoding from the given decoder.
  ///
  /// This initializer throws an error if the decoder is invalid or does not decode to a value which can be converted
  /// to Decimal128. A string is parsed as `init(string:)` parses it; an integer or a double is converted.
  ///
  /// - Parameter decoder: The decoder to read data from.
  public convenience init(from decoder: any Decoder) throws {
    self.init(try Decimal128Value(from: decoder))
  }
}

extension Decimal128: Encodable {
  /// Encodes this Decimal128 to the given encoder.
  ///
  /// The value is encoded as its `stringValue`. This function throws an error if the given encoder is unable to
  /// encode a string.
  ///
  /// - Parameter encoder: The encoder to write data to.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(stringValue)
  }
}

extension Decimal128: ExpressibleByIntegerLiteral {
  /// Creates a new Decimal128 from the given integer literal.
  public convenience init(integerLiteral value: Int64) {
    self.init(Decimal128Value.converting(integer: value))
  }
}

extension Decimal128: ExpressibleByFloatLiteral {
  /// Creates a new Decimal128 from the given float literal.
  ///
  /// The literal is a `Double` first and is rounded to 15 significant digits, as RealmSwift does, so `0.1` is exactly
  /// `0.1`. Use a string literal for more digits.
  public convenience init(floatLiteral value: Double) {
    self.init(Decimal128Value.converting(double: value, precision: 15))
  }
}

extension Decimal128: ExpressibleByStringLiteral {
  /// Creates a new Decimal128 from the given string literal.
  ///
  /// A string which cannot be parsed as a Decimal128 gives NaN, as `init(string:)` does.
  public convenience init(stringLiteral value: String) {
    self.init(Decimal128Value.parsing(value))
  }
}

extension Decimal128: Comparable {
  /// Returns a Boolean value indicating whether two decimal128 values are equal.
  ///
  /// Values compare by value: `1.0 == 1.00`. NaN equals NaN.
  ///
  /// - Parameters:
  ///   - lhs: A Decimal128 value to compare.
  ///   - rhs: Another Decimal128 value to compare.
  public static func == (lhs: Decimal128, rhs: Decimal128) -> Bool {
    lhs.value == rhs.value
  }

  /// Returns a Boolean value indicating whether the decimal128 value of the first
  /// argument is less than that of the second argument.
  ///
  /// NaN is less than every other value.
  ///
  /// - Parameters:
  ///   - lhs: A Decimal128 value to compare.
  ///   - rhs: Another Decimal128 value to compare.
  public static func < (lhs: Decimal128, rhs: Decimal128) -> Bool {
    Decimal128Value.compare(lhs.value, rhs.value) < 0
  }

  /// Returns a Boolean value indicating whether the decimal128 value of the first
  /// argument is less than or equal to that of the second argument.
  ///
  /// - Parameters:
  ///   - lhs: A Decimal128 value to compare.
  ///   - rhs: Another Decimal128 value to compare.
  public static func <= (lhs: Decimal128, rhs: Decimal128) -> Bool {
    Decimal128Value.compare(lhs.value, rhs.value) <= 0
  }

  /// Returns a Boolean value indicating whether the decimal128 value of the first
  /// argument is greater than or equal to that of the second argument.
  ///
  /// - Parameters:
  ///   - lhs: A Decimal128 value to compare.
  ///   - rhs: Another Decimal128 value to compare.
  public static func >= (lhs: Decimal128, rhs: Decimal128) -> Bool {
    Decimal128Value.compare(lhs.value, rhs.value) >= 0
  }

  /// Returns a Boolean value indicating whether the decimal128 value of the first
  /// argument is greater than that of the second argument.
  ///
  /// - Parameters:
  ///   - lhs: A Decimal128 value to compare.
  ///   - rhs: Another Decimal128 value to compare.
  public static func > (lhs: Decimal128, rhs: Decimal128) -> Bool {
    Decimal128Value.compare(lhs.value, rhs.value) > 0
  }
}

extension Decimal128: Numeric {
  /// Creates a new instance from the given integer, if it can be represented
  /// exactly.
  ///
  /// If the value passed as `source` is not representable exactly (more than 38 significant digits), the result
  /// is `nil`.
  ///
  /// - Parameter source: A value to convert to this type of integer.
  public convenience init?<T>(exactly source: T) where T: BinaryInteger {
    guard let value = Decimal128Value.exactly(source) else { return nil }
    self.init(value)
  }

  /// A type that can represent the absolute value of Decimal128
  public typealias Magnitude = Decimal128

  /// The magnitude of this Decimal128.
  ///
  /// Exact (RealmSwift's goes through `Double`); NaN gives NaN.
  public var magnitude: Magnitude { Decimal128(value.magnitude) }

  /// Adds two decimal128 values and produces their sum.
  ///
  /// The exact sum is rounded to 38 significant digits; NaN if either is NaN or the sum is too large.
  ///
  /// - Parameters:
  ///   - lhs: The first Decimal128 value to add.
  ///   - rhs: The second Decimal128 value to add.
  public static func + (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
    Decimal128(lhs.value + rhs.value)
  }

  /// Adds two values and stores the result in the left-hand-side variable.
  ///
  /// A new instance replaces `lhs`; other references to the old one keep its value.
  ///
  /// - Parameters:
  ///   - lhs: The first value to add.
  ///   - rhs: The second value to add.
  public static func += (lhs: inout Decimal128, rhs: Decimal128) {
    lhs = lhs + rhs
  }

  /// Subtracts one Decimal128 value from another and produces their difference.
  ///
  /// The exact difference is rounded to 38 significant digits; NaN if either is NaN or the result is too large.
  ///
  /// - Parameters:
  ///   - lhs: A Decimal128 value.
  ///   - rhs: The Decimal128 value to subtract from `lhs`.
  public static func - (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
    Decimal128(lhs.value - rhs.value)
  }

  /// Subtracts the second value from the first and stores the difference in the left-hand-side variable.
  ///
  /// - Parameters:
  ///   - lhs: A Decimal128 value.
  ///   - rhs: The value to subtract from `lhs`.
  public static func -= (lhs: inout Decimal128, rhs: Decimal128) {
    lhs = lhs - rhs
  }

  /// Multiplies two Decimal128 values and produces their product.
  ///
  /// The exact product is rounded to 38 significant digits; NaN if either is NaN or the product is too large.
  ///
  /// - Parameters:
  ///   - lhs: The first value to multiply.
  ///   - rhs: The second value to multiply.
  public static func * (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
    Decimal128(lhs.value * rhs.value)
  }

  /// Multiplies two values and stores the result in the left-hand-side
  /// variable.
  ///
  /// - Parameters:
  ///   - lhs: The first value to multiply.
  ///   - rhs: The second value to multiply.
  public static func *= (lhs: inout Decimal128, rhs: Decimal128) {
    lhs = lhs * rhs
  }

  /// Returns the quotient of dividing the first Decimal128 value by the second.
  ///
  /// The exact quotient is rounded to 38 significant digits. Dividing by zero gives NaN (RealmSwift gives an
  /// infinity), as do a NaN operand and a quotient too large to represent.
  ///
  /// - Parameters:
  ///   - lhs: The Decimal128 value to divide.
  ///   - rhs: The Decimal128 value to divide `lhs` by. `rhs` must not be zero.
  public static func / (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
    Decimal128(lhs.value / rhs.value)
  }

  /// Divides the first value by the second and stores the quotient in the left-hand-side variable.
  ///
  /// - Parameters:
  ///   - lhs: The Decimal128 value to divide.
  ///   - rhs: The Decimal128 value to divide `lhs` by. `rhs` must not be zero.
  public static func /= (lhs: inout Decimal128, rhs: Decimal128) {
    lhs = lhs / rhs
  }
}

extension Decimal128 {
  /// A type that represents the distance between two values.
  public typealias Stride = Decimal128

  /// Returns the distance from this Decimal128 to the given value, expressed as a
  /// stride.
  ///
  /// - Parameter other: The Decimal128 value to calculate the distance to.
  /// - Returns: The distance from this value to `other`.
  public func distance(to other: Decimal128) -> Decimal128 {
    other - self
  }

  /// Returns a Decimal128 that is offset the specified distance from this value.
  ///
  /// Use the `advanced(by:)` method in generic code to offset a value by a
  /// specified distance. If you're working directly with numeric values, use
  /// the addition operator (`+`) instead of this method.
  ///
  /// - Parameter n: The distance to advance this Decimal128.
  /// - Returns: A Decimal128 that is offset from this value by `n`.
  public func advanced(by n: Decimal128) -> Decimal128 {
    self + n
  }
}
