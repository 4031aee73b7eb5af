import Foundation

/// A 128-bit decimal floating point number.
///
/// RealmSwift's `Decimal128` is an IEEE 754-2008 decimal128 (34 significant digits, exponents -6143 to 6144). Shoal's
/// holds the values Foundation's `Decimal` can: up to 38 significant digits and exponents from -128 to 127, so
/// `decimalValue` is always exact. Results are rounded to 38 significant digits, ties to even. Values whose magnitude
/// is too large to represent (`max` is about 1e165), infinities and division by zero give NaN, where RealmSwift gives
/// an infinity; magnitudes below 1e-128 round to zero.
///
/// Unlike RealmSwift's NaN, which is unequal to itself, NaN here equals NaN and sorts before every other value (as
/// realm-core sorts it), so that `==`, `<` and hashing stay consistent for sets, dictionaries and sorting.
///
/// Unlike RealmSwift's `Decimal128`, which is a class, this is a value type; its public members are RealmSwift's.
public struct Decimal128: Sendable {
  // Arithmetic, parsing and comparison work on exact integers here (`LargeDecimalInteger`) and round once, rather than
  // going through Foundation's `Decimal` operators: with swift-foundation (Swift 6.3, Linux) `Decimal` multiplication
  // traps when the exponents sum below -128, division silently loses digits (some results are wrong from the second
  // digit) when the operands' exponents are far apart, and addition truncates instead of rounding. `Decimal` is still
  // the value space (38 digits, exponents -128...127) and the interchange type (`decimalValue`, `init(value:)`).
  //
  // The canonical form, one per value: a NaN has every other field zero; zero is positive with exponent 0; otherwise
  // the coefficient (`high` × 10^19 + `low`, below 10^38) has no trailing zero unless the exponent is `maxExponent`.
  /// Whether the value is NaN.
  private let nan: Bool
  /// Whether the value is below zero.
  private let negative: Bool
  /// The power of ten the coefficient is multiplied by, from `minExponent` to `maxExponent`.
  private let exponent: Int16
  /// The coefficient divided by 10^19.
  private let high: UInt64
  /// The coefficient modulo 10^19.
  private let low: UInt64

  /// The most significant digits a value holds.
  private static let maxDigits = 38
  /// The smallest exponent, as Foundation's `Decimal`.
  private static let minExponent = -128
  /// The largest exponent, as Foundation's `Decimal`.
  private static let maxExponent = 127
  /// 10^19, the base of `high`.
  private static let splitBase: UInt64 = 10_000_000_000_000_000_000
  /// The NaN value.
  private static let notANumber = Decimal128(nan: true, negative: false, exponent: 0, high: 0, low: 0)

  /// Stores fields that already form the canonical form.
  private init(nan: Bool, negative: Bool, exponent: Int16, high: UInt64, low: UInt64) {
    self.nan = nan
    self.negative = negative
    self.exponent = exponent
    self.high = high
    self.low = low
  }

  // MARK: Initializers

  /// Creates a new zero-initialized Decimal128.
  public init() {
    self.init(nan: false, negative: false, exponent: 0, high: 0, low: 0)
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
  /// `Bool`, `Decimal128`, `Substring` and `NSNull` (or `nil`, giving NaN) are accepted too. Passing a value with a
  /// type not in this list is a fatal error. A string which cannot be parsed as a Decimal128 gives NaN, as in
  /// RealmSwift. Binary floating point values are rounded to 15 significant digits, as RealmSwift rounds them.
  ///
  /// - parameter value: The value to convert to a Decimal128.
  public init(value: Any) {
    self = Decimal128.converting(value)
  }

  /// Converts the given number to a Decimal128.
  ///
  /// Integers convert exactly; floating point numbers are rounded to 15 significant digits, as RealmSwift rounds them,
  /// so that `0.1` gives exactly `0.1`.
  ///
  /// - parameter number: The number to convert to a Decimal128.
  public init(number: NSNumber) {
    self = Decimal128.converting(number: number)
  }

  /// Parse the given string as a Decimal128.
  ///
  /// This initializer never throws and is marked as `throws` only because RealmSwift's is. Strings which cannot be
  /// parsed as a Decimal128 return a value where `isNaN` is `true`. Accepted: an optional sign, digits with an
  /// optional decimal point, an optional exponent (`e` or `E`, optionally signed), surrounding whitespace, and `NaN`.
  /// More than 38 significant digits are rounded, ties to even.
  ///
  /// - parameter string: The string to parse.
  public init(string: String) throws {
    self = Decimal128.parsing(string)
  }

  /// The minimum value for Decimal128: -(10^38 - 1) × 10^127.
  public static var min: Decimal128 { Decimal128.max.negated }

  /// The maximum value for Decimal128: (10^38 - 1) × 10^127.
  public static var max: Decimal128 {
    Decimal128(
      nan: false, negative: false, exponent: Int16(maxExponent), high: splitBase - 1, low: splitBase - 1)
  }

  // MARK: Properties

  /// Convert this value to a string.
  ///
  /// `NaN`, or the shortest form of the value: plain notation (`"-12.5"`, `"0.001"`, `"1000"`) while the number has no
  /// more than 38 integer digits and no more than 6 zeros after the point before the first significant digit, else
  /// scientific notation with a capital `E` (`"1.5E-8"`, `"2E40"`). `init(string:)` reads it back exactly.
  public var stringValue: String {
    if nan { return "NaN" }
    var digits = coefficientDigits
    if digits.isEmpty { return "0" }
    var exponent = Int(self.exponent)
    // Only values at the largest exponent keep trailing zeros; they do not belong in the text.
    while digits.last == 0 {
      digits.removeLast()
      exponent += 1
    }
    var result = negative ? "-" : ""
    let count = digits.count
    let adjusted = count - 1 + exponent
    if exponent >= 0 && adjusted < Decimal128.maxDigits {
      result += Decimal128.text(digits[...]) + String(repeating: "0", count: exponent)
    } else if exponent < 0 && adjusted >= -7 {
      let point = count + exponent
      if point > 0 {
        result += Decimal128.text(digits[..<point]) + "." + Decimal128.text(digits[point...])
      } else {
        result += "0." + String(repeating: "0", count: -point) + Decimal128.text(digits[...])
      }
    } else {
      result += Decimal128.text(digits[..<1])
      if count > 1 { result += "." + Decimal128.text(digits[1...]) }
      result += "E" + String(adjusted)
    }
    return result
  }

  /// Gets if this Decimal128 represents a NaN value.
  public var isNaN: Bool { nan }

  /// `true` if `self` is a signaling NaN, `false` otherwise.
  ///
  /// As in RealmSwift, this is `isNaN`.
  public var isSignaling: Bool { isNaN }

  /// `true` if `self` is a signaling NaN, `false` otherwise.
  ///
  /// As in RealmSwift, this is `isNaN`.
  public var isSignalingNaN: Bool { isSignaling }

  /// Convert this value to a double. This is a lossy conversion.
  ///
  /// The result is the `Double` nearest the value; NaN gives `Double.nan`.
  public var doubleValue: Double { Double(stringValue) ?? .nan }

  /// Convert this value to a `Decimal`.
  ///
  /// The conversion is exact: every Decimal128 value is a `Decimal` value. NaN gives `Decimal.nan`.
  public var decimalValue: Decimal {
    if nan { return .nan }
    if isZero { return Decimal() }
    let digits = Decimal128.text(coefficientDigits[...])
    let text = (negative ? "-" : "") + digits + "E" + String(exponent)
    return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) ?? .nan
  }

  // MARK: Methods

  /// Replaces this Decimal128 value with its additive inverse.
  ///
  /// RealmSwift's `negate()` mutates the object it is called on; this one is `mutating`.
  public mutating func negate() {
    self = negated
  }

  /// Comparison operator to check if the current value is greater than the right hand side.
  ///
  /// A `nil` right hand side counts as NaN.
  public func isGreaterThan(_ decimalNumber: Decimal128?) -> Bool {
    self > (decimalNumber ?? .notANumber)
  }

  /// Comparison operator to check if the current value is greater than or equal to the right hand side.
  ///
  /// A `nil` right hand side counts as NaN.
  public func isGreaterThanOrEqual(to decimalNumber: Decimal128?) -> Bool {
    self >= (decimalNumber ?? .notANumber)
  }

  /// Comparison operator to check if the current value is less than the right hand side.
  ///
  /// A `nil` right hand side counts as NaN.
  public func isLessThan(_ decimalNumber: Decimal128?) -> Bool {
    self < (decimalNumber ?? .notANumber)
  }

  /// Comparison operator to check if the current value is less than or equal to the right hand side.
  ///
  /// A `nil` right hand side counts as NaN.
  public func isLessThanOrEqual(to decimalNumber: Decimal128?) -> Bool {
    self <= (decimalNumber ?? .notANumber)
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

  // MARK: Internal

  /// Converts an integer exactly; for the object layer, not RealmSwift API.
  init(_ value: Int) {
    self = Decimal128.converting(integer: value)
  }

  /// Converts a double, rounded to 15 significant digits as RealmSwift does; for the object layer, not RealmSwift API.
  init(_ value: Double) {
    self = Decimal128.converting(double: value, precision: 15)
  }

  /// The number of bytes in `storageBytes`.
  static let storageByteCount = 19

  /// Reads a value from the 19 bytes `storageBytes` gave.
  ///
  /// Bytes that `storageBytes` cannot produce, including a count other than 19, are corrupt data and read as NaN
  /// rather than trapping, since they come from a file.
  init(storage bytes: [UInt8]) {
    self = bytes.count == Decimal128.storageByteCount ? Decimal128.decoding(storage: bytes) : .notANumber
  }

  /// A 19-byte encoding of the value that `init(storage:)` reads back exactly and that orders as the values do when
  /// compared bytewise (NaN first, then negative values, zero, positive values).
  ///
  /// Layout: a class byte (0 NaN, 1 negative, 2 zero, 3 positive; the rest zero for NaN and zero), then for nonzero
  /// values the adjusted exponent (the power of ten of the leading digit, -128 to 164) plus 128 as a big-endian
  /// `UInt16`, then the coefficient scaled to exactly 38 digits as a big-endian 128-bit integer. For negative values
  /// the 18 bytes after the class byte are inverted.
  var storageBytes: [UInt8] {
    var bytes = [UInt8](repeating: 0, count: Decimal128.storageByteCount)
    if nan { return bytes }
    if isZero {
      bytes[0] = 2
      return bytes
    }
    bytes[0] = negative ? 1 : 3
    // Scale the coefficient up to exactly 38 digits: `high` then holds the first 19 digits, `low` the next 19.
    let count = coefficientDigitCount
    var scaled = (high: high, low: low)
    for _ in count..<Decimal128.maxDigits { scaled = Decimal128.timesTen(scaled) }
    let biasedAdjusted = UInt16(count - 1 + Int(exponent) - Decimal128.minExponent)
    bytes[1] = UInt8(biasedAdjusted >> 8)
    bytes[2] = UInt8(biasedAdjusted & 0xff)
    let product = scaled.high.multipliedFullWidth(by: Decimal128.splitBase)
    let (binaryLow, carry) = product.low.addingReportingOverflow(scaled.low)
    let binaryHigh = product.high + (carry ? 1 : 0)
    for index in 0..<8 {
      bytes[3 + index] = UInt8(truncatingIfNeeded: binaryHigh >> (56 - 8 * index))
      bytes[11 + index] = UInt8(truncatingIfNeeded: binaryLow >> (56 - 8 * index))
    }
    if negative {
      for index in 1..<bytes.count { bytes[index] = ~bytes[index] }
    }
    return bytes
  }

  // MARK: Private helpers

  /// Whether the value is zero.
  private var isZero: Bool { !nan && high == 0 && low == 0 }

  /// The number of decimal digits in the coefficient; 0 for zero.
  private var coefficientDigitCount: Int {
    high != 0 ? 19 + Decimal128.digitCount(high) : Decimal128.digitCount(low)
  }

  /// The coefficient's decimal digits (values 0–9), most significant first; empty for zero.
  private var coefficientDigits: [UInt8] {
    if high != 0 { return Decimal128.digits(of: high, width: 0) + Decimal128.digits(of: low, width: 19) }
    return low != 0 ? Decimal128.digits(of: low, width: 0) : []
  }

  /// The coefficient as an exact integer.
  private var largeCoefficient: LargeDecimalInteger {
    LargeDecimalInteger(high).shifted(byDigits: 19) + LargeDecimalInteger(low)
  }

  /// The number of decimal digits in `value`; 0 for zero.
  private static func digitCount(_ value: UInt64) -> Int {
    var count = 0
    var rest = value
    while rest != 0 {
      count += 1
      rest /= 10
    }
    return count
  }

  /// The decimal digits of `value`, most significant first, padded with leading zeros to `width`.
  private static func digits(of value: UInt64, width: Int) -> [UInt8] {
    var result = [UInt8]()
    var rest = value
    while rest != 0 || result.count < width {
      result.append(UInt8(rest % 10))
      rest /= 10
    }
    return result.reversed()
  }

  /// Digit values as text.
  private static func text(_ digits: ArraySlice<UInt8>) -> String {
    String(decoding: digits.map { $0 + UInt8(ascii: "0") }, as: UTF8.self)
  }

  /// Multiplies a coefficient held as (high × 10^19 + low) by ten; the caller keeps it below 10^38.
  private static func timesTen(_ value: (high: UInt64, low: UInt64)) -> (high: UInt64, low: UInt64) {
    let tenth = splitBase / 10
    return (value.high * 10 + value.low / tenth, value.low % tenth * 10)
  }

  /// Divides a coefficient held as (high × 10^19 + low) by ten; the caller has checked that it is a multiple of ten.
  private static func dividedByTen(_ value: (high: UInt64, low: UInt64)) -> (high: UInt64, low: UInt64) {
    (value.high / 10, value.high % 10 * (splitBase / 10) + value.low / 10)
  }

  /// The canonical value nearest (ties to even) to (-1)^negative × `digits` × 10^`exponent`, keeping at most
  /// `precision` significant digits; `sticky` says nonzero digits below `digits` were already dropped.
  ///
  /// `digits` holds digit values 0–9, most significant first. Magnitudes too large for the exponent range give NaN;
  /// digits below 10^-128 are rounded away.
  private static func rounding(
    negative: Bool, digits input: [UInt8], exponent inputExponent: Int, sticky: Bool = false,
    precision: Int = maxDigits
  ) -> Decimal128 {
    guard let first = input.firstIndex(where: { $0 != 0 }) else { return Decimal128() }
    var digits = Array(input[first...])
    var exponent = inputExponent
    let drop = Swift.max(digits.count - precision, minExponent - exponent, 0)
    if drop > 0 {
      let keptCount = digits.count - drop
      // Everything is dropped below the first dropped position being a digit: the value rounds to zero.
      if keptCount < 0 { return Decimal128() }
      let firstDropped = digits[keptCount]
      let restNonzero = sticky || digits[(keptCount + 1)...].contains { $0 != 0 }
      var kept = Array(digits[..<keptCount])
      let lastKeptOdd = (kept.last ?? 0) % 2 == 1
      exponent += drop
      if firstDropped > 5 || (firstDropped == 5 && (restNonzero || lastKeptOdd)) {
        var index = kept.count - 1
        while index >= 0 && kept[index] == 9 {
          kept[index] = 0
          index -= 1
        }
        if index >= 0 { kept[index] += 1 } else { kept.insert(1, at: 0) }
        if kept.count > precision {
          // 99…9 rounded up to 100…0: one digit too many, and it is a zero.
          kept.removeLast()
          exponent += 1
        }
      }
      guard kept.contains(where: { $0 != 0 }) else { return Decimal128() }
      digits = kept
    }
    while digits.last == 0 && exponent < maxExponent {
      digits.removeLast()
      exponent += 1
    }
    while exponent > maxExponent && digits.count < maxDigits {
      digits.append(0)
      exponent -= 1
    }
    if exponent > maxExponent { return notANumber }
    var high: UInt64 = 0
    var low: UInt64 = 0
    let split = Swift.max(digits.count - 19, 0)
    for digit in digits[..<split] { high = high * 10 + UInt64(digit) }
    for digit in digits[split...] { low = low * 10 + UInt64(digit) }
    return Decimal128(nan: false, negative: negative, exponent: Int16(exponent), high: high, low: low)
  }

  /// The canonical value nearest an exact integer result.
  private static func rounding(
    negative: Bool, _ value: LargeDecimalInteger, exponent: Int, sticky: Bool = false
  ) -> Decimal128 {
    rounding(negative: negative, digits: value.digits, exponent: exponent, sticky: sticky)
  }

  /// Parses a decimal string; NaN for anything that is not one.
  private static func parsing(_ string: String) -> Decimal128 {
    var utf8 = Array(string.utf8)[...]
    let isSpace: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0d).contains($0) }
    while let first = utf8.first, isSpace(first) { utf8 = utf8.dropFirst() }
    while let last = utf8.last, isSpace(last) { utf8 = utf8.dropLast() }
    var negative = false
    if let sign = utf8.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
      negative = sign == UInt8(ascii: "-")
      utf8 = utf8.dropFirst()
    }
    let isDigit: (UInt8) -> Bool = { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    guard let lead = utf8.first, isDigit(lead) || lead == UInt8(ascii: ".") else {
      // Not a number. NaN (and infinities, which a Decimal128 here cannot hold) read as NaN too.
      return notANumber
    }
    // Keep two digits beyond the 38 that survive, so that rounding sees the digit after the last kept one; any
    // nonzero digit beyond those only makes the value larger than a tie (`sticky`).
    let keptLimit = maxDigits + 2
    var digits = [UInt8]()
    var exponent = 0
    var sticky = false
    var sawDigit = false
    var afterPoint = false
    while let character = utf8.first {
      if character == UInt8(ascii: ".") && !afterPoint {
        afterPoint = true
      } else if isDigit(character) {
        sawDigit = true
        let digit = character - UInt8(ascii: "0")
        if digits.isEmpty && digit == 0 {
          if afterPoint { exponent -= 1 }
        } else if digits.count < keptLimit {
          digits.append(digit)
          if afterPoint { exponent -= 1 }
        } else {
          if digit != 0 { sticky = true }
          if !afterPoint { exponent += 1 }
        }
      } else {
        break
      }
      utf8 = utf8.dropFirst()
    }
    guard sawDigit else { return notANumber }
    if let marker = utf8.first, marker == UInt8(ascii: "e") || marker == UInt8(ascii: "E") {
      utf8 = utf8.dropFirst()
      var exponentNegative = false
      if let sign = utf8.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
        exponentNegative = sign == UInt8(ascii: "-")
        utf8 = utf8.dropFirst()
      }
      var value = 0
      var sawExponentDigit = false
      while let character = utf8.first, isDigit(character) {
        sawExponentDigit = true
        // Past a billion the value is NaN or zero anyway; stop growing so that the arithmetic cannot overflow.
        if value < 1_000_000_000 { value = value * 10 + Int(character - UInt8(ascii: "0")) }
        utf8 = utf8.dropFirst()
      }
      guard sawExponentDigit else { return notANumber }
      exponent += exponentNegative ? -value : value
    }
    guard utf8.isEmpty else { return notANumber }
    return rounding(negative: negative, digits: digits, exponent: exponent, sticky: sticky)
  }

  /// Converts an integer of any width: exact up to 38 significant digits, rounded beyond.
  private static func converting<T: BinaryInteger>(integer value: T) -> Decimal128 {
    let digits = String(value.magnitude).utf8.map { $0 - UInt8(ascii: "0") }
    return rounding(negative: value < 0, digits: digits, exponent: 0)
  }

  /// Converts a double from its exact binary value, rounded to `precision` significant digits.
  private static func converting(double value: Double, precision: Int) -> Decimal128 {
    guard value.isFinite else { return notANumber }
    if value == 0 { return Decimal128() }
    // |value| = significand × 2^binaryExponent, exactly.
    let significand = value.significandBitPattern | (value.isNormal ? 1 << 52 : 0)
    var binaryExponent = value.isNormal ? Int(value.exponentBitPattern) - 1075 : -1074
    var coefficient = LargeDecimalInteger(significand)
    var exponent = 0
    if binaryExponent >= 0 {
      while binaryExponent > 0 {
        let step = Swift.min(binaryExponent, 29)
        coefficient.multiply(by: 1 << UInt32(step))
        binaryExponent -= step
      }
    } else {
      // 2^-k = 5^k × 10^-k.
      exponent = binaryExponent
      var power = -binaryExponent
      while power > 0 {
        let step = Swift.min(power, 13)
        var factor: UInt32 = 1
        for _ in 0..<step { factor *= 5 }
        coefficient.multiply(by: factor)
        power -= step
      }
    }
    return rounding(
      negative: value.sign == .minus, digits: coefficient.digits, exponent: exponent, precision: precision)
  }

  /// Converts a number by its stored type, as RealmSwift does: floating point rounded to 15 digits, integers exactly.
  private static func converting(number: NSNumber) -> Decimal128 {
    if let decimalNumber = number as? NSDecimalNumber { return converting(decimal: decimalNumber.decimalValue) }
    switch UInt8(bitPattern: number.objCType.pointee) {
    case UInt8(ascii: "d"), UInt8(ascii: "f"):
      return converting(double: number.doubleValue, precision: 15)
    case UInt8(ascii: "C"), UInt8(ascii: "S"), UInt8(ascii: "I"), UInt8(ascii: "L"), UInt8(ascii: "Q"):
      return converting(integer: number.uint64Value)
    default:
      return converting(integer: number.int64Value)
    }
  }

  /// Converts a Foundation decimal exactly (39-digit coefficients are rounded to 38).
  private static func converting(decimal: Decimal) -> Decimal128 {
    decimal.isNaN ? notANumber : parsing(decimal.description)
  }

  /// Converts a floating point value of any binary type through `Double`.
  private static func converting<T: BinaryFloatingPoint>(floatingPoint value: T) -> Decimal128 {
    converting(double: Double(value), precision: 15)
  }

  /// The conversion behind `init(value:)`.
  private static func converting(_ value: Any) -> Decimal128 {
    switch value {
    case let decimal128 as Decimal128: return decimal128
    case let decimal as Decimal: return converting(decimal: decimal)
    case let string as String: return parsing(string)
    case let substring as Substring: return parsing(String(substring))
    case let bool as Bool: return bool ? 1 : 0
    case let number as NSNumber: return converting(number: number)
    case let integer as any BinaryInteger: return converting(integer: integer)
    case let floatingPoint as any BinaryFloatingPoint: return converting(floatingPoint: floatingPoint)
    case is NSNull: return notANumber
    default:
      let mirror = Mirror(reflecting: value)
      if mirror.displayStyle == .optional {
        // A nil gives NaN, RealmSwift's null decimal; a wrapped value converts as itself.
        guard let wrapped = mirror.children.first else { return notANumber }
        return converting(wrapped.value)
      }
      fatalError("Cannot convert value '\(value)' of type '\(type(of: value))' to decimal128")
    }
  }

  /// Reads `storageBytes`.
  private static func decoding(storage bytes: [UInt8]) -> Decimal128 {
    switch bytes[0] {
    case 1, 3: break
    case 2: return Decimal128()
    // 0 is NaN; any other class byte is corrupt data, read as NaN too.
    default: return notANumber
    }
    let negative = bytes[0] == 1
    let field = negative ? bytes.map { ~$0 } : bytes
    let biasedAdjusted = Int(field[1]) << 8 | Int(field[2])
    var binaryHigh: UInt64 = 0
    var binaryLow: UInt64 = 0
    for index in 0..<8 {
      binaryHigh = binaryHigh << 8 | UInt64(field[3 + index])
      binaryLow = binaryLow << 8 | UInt64(field[11 + index])
    }
    // The scaled coefficient has exactly 38 digits: from 10^37 to 10^38 - 1. Anything else is corrupt.
    guard binaryHigh < splitBase else { return notANumber }
    let (quotient, remainder) = splitBase.dividingFullWidth((binaryHigh, binaryLow))
    guard quotient >= splitBase / 10 && quotient < splitBase else { return notANumber }
    var coefficient = (high: quotient, low: remainder)
    var exponent = biasedAdjusted + minExponent - (maxDigits - 1)
    while coefficient.low % 10 == 0 && exponent < maxExponent {
      coefficient = dividedByTen(coefficient)
      exponent += 1
    }
    guard exponent >= minExponent && exponent <= maxExponent else { return notANumber }
    return Decimal128(
      nan: false, negative: negative, exponent: Int16(exponent), high: coefficient.high, low: coefficient.low)
  }

  /// -1, 0 or 1 for the sign of a value that is not NaN.
  private var signum: Int { isZero ? 0 : (negative ? -1 : 1) }

  /// The order realm-core gives: NaN equals NaN and comes before every other value; -1, 0 or 1.
  private static func order(_ lhs: Decimal128, _ rhs: Decimal128) -> Int {
    if lhs.nan || rhs.nan { return lhs.nan == rhs.nan ? 0 : (lhs.nan ? -1 : 1) }
    let (lhsSign, rhsSign) = (lhs.signum, rhs.signum)
    if lhsSign != rhsSign { return lhsSign < rhsSign ? -1 : 1 }
    if lhsSign == 0 { return 0 }
    return lhsSign * orderOfMagnitudes(lhs, rhs)
  }

  /// Compares the absolute values of two nonzero values; -1, 0 or 1.
  private static func orderOfMagnitudes(_ lhs: Decimal128, _ rhs: Decimal128) -> Int {
    if lhs.exponent == rhs.exponent {
      if (lhs.high, lhs.low) == (rhs.high, rhs.low) { return 0 }
      return (lhs.high, lhs.low) < (rhs.high, rhs.low) ? -1 : 1
    }
    let lhsAdjusted = lhs.coefficientDigitCount + Int(lhs.exponent)
    let rhsAdjusted = rhs.coefficientDigitCount + Int(rhs.exponent)
    if lhsAdjusted != rhsAdjusted { return lhsAdjusted < rhsAdjusted ? -1 : 1 }
    // The leading digits line up: compare digit by digit, the shorter padded with zeros.
    let (lhsDigits, rhsDigits) = (lhs.coefficientDigits, rhs.coefficientDigits)
    for index in 0..<Swift.max(lhsDigits.count, rhsDigits.count) {
      let left = index < lhsDigits.count ? lhsDigits[index] : 0
      let right = index < rhsDigits.count ? rhsDigits[index] : 0
      if left != right { return left < right ? -1 : 1 }
    }
    return 0
  }

  /// The exact sum of two values, rounded.
  private static func adding(_ lhs: Decimal128, _ rhs: Decimal128) -> Decimal128 {
    if lhs.nan || rhs.nan { return notANumber }
    if rhs.isZero { return lhs }
    if lhs.isZero { return rhs }
    let exponent = Swift.min(Int(lhs.exponent), Int(rhs.exponent))
    let left = lhs.largeCoefficient.shifted(byDigits: Int(lhs.exponent) - exponent)
    let right = rhs.largeCoefficient.shifted(byDigits: Int(rhs.exponent) - exponent)
    if lhs.negative == rhs.negative { return rounding(negative: lhs.negative, left + right, exponent: exponent) }
    if left == right { return Decimal128() }
    return left > right
      ? rounding(negative: lhs.negative, left - right, exponent: exponent)
      : rounding(negative: rhs.negative, right - left, exponent: exponent)
  }

  /// The exact product of two values, rounded.
  private static func multiplying(_ lhs: Decimal128, _ rhs: Decimal128) -> Decimal128 {
    if lhs.nan || rhs.nan { return notANumber }
    if lhs.isZero || rhs.isZero { return Decimal128() }
    return rounding(
      negative: lhs.negative != rhs.negative, lhs.largeCoefficient * rhs.largeCoefficient,
      exponent: Int(lhs.exponent) + Int(rhs.exponent))
  }

  /// The quotient of two values, correctly rounded; NaN when dividing by zero.
  private static func dividing(_ lhs: Decimal128, _ rhs: Decimal128) -> Decimal128 {
    if lhs.nan || rhs.nan || rhs.isZero { return notANumber }
    if lhs.isZero { return Decimal128() }
    // Scale the dividend so that the integer quotient has at least 39 digits: one more than is kept, for rounding,
    // with the remainder telling whether anything below it is nonzero.
    let shift = Swift.max(0, maxDigits + 1 + rhs.coefficientDigitCount - lhs.coefficientDigitCount)
    let (quotient, remainder) = lhs.largeCoefficient.shifted(byDigits: shift)
      .quotientAndRemainder(dividingBy: rhs.largeCoefficient)
    return rounding(
      negative: lhs.negative != rhs.negative, quotient, exponent: Int(lhs.exponent) - Int(rhs.exponent) - shift,
      sticky: !remainder.isZero)
  }

  /// The value with the opposite sign; zero and NaN are unchanged.
  private var negated: Decimal128 {
    if nan || isZero { return self }
    return Decimal128(nan: false, negative: !negative, exponent: exponent, high: high, low: low)
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
    hasher.combine(nan)
    hasher.combine(negative)
    hasher.combine(exponent)
    hasher.combine(high)
    hasher.combine(low)
  }
}

extension Decimal128: Decodable {
  /// Creates a new Decimal128 by decoding from the given decoder.
  ///
  /// This initializer throws an error if the decoder is invalid or does not decode to a value which can be converted
  /// to Decimal128. A string is parsed as `init(string:)` parses it; an integer or a double is converted.
  ///
  /// - Parameter decoder: The decoder to read data from.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let string = try? container.decode(String.self) {
      try self.init(string: string)
    } else if let integer = try? container.decode(Int64.self) {
      self = Decimal128.converting(integer: integer)
    } else if let double = try? container.decode(Double.self) {
      self = Decimal128.converting(double: double, precision: 15)
    } else {
      throw DecodingError.dataCorruptedError(in: container, debugDescription: "Cannot convert value to Decimal128")
    }
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
  public init(integerLiteral value: Int64) {
    self = Decimal128.converting(integer: value)
  }
}

extension Decimal128: ExpressibleByFloatLiteral {
  /// Creates a new Decimal128 from the given float literal.
  ///
  /// The literal is a `Double` first and is rounded to 15 significant digits, as RealmSwift does, so `0.1` is exactly
  /// `0.1`. Use a string literal for more digits.
  public init(floatLiteral value: Double) {
    self = Decimal128.converting(double: value, precision: 15)
  }
}

extension Decimal128: ExpressibleByStringLiteral {
  /// Creates a new Decimal128 from the given string literal.
  ///
  /// A string which cannot be parsed as a Decimal128 gives NaN, as `init(string:)` does.
  public init(stringLiteral value: String) {
    self = Decimal128.parsing(value)
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
    // Each value has one canonical form, so equal values have equal fields.
    lhs.nan == rhs.nan && lhs.negative == rhs.negative && lhs.exponent == rhs.exponent && lhs.high == rhs.high
      && lhs.low == rhs.low
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
    order(lhs, rhs) < 0
  }

  /// Returns a Boolean value indicating whether the decimal128 value of the first
  /// argument is less than or equal to that of the second argument.
  ///
  /// - Parameters:
  ///   - lhs: A Decimal128 value to compare.
  ///   - rhs: Another Decimal128 value to compare.
  public static func <= (lhs: Decimal128, rhs: Decimal128) -> Bool {
    order(lhs, rhs) <= 0
  }

  /// Returns a Boolean value indicating whether the decimal128 value of the first
  /// argument is greater than or equal to that of the second argument.
  ///
  /// - Parameters:
  ///   - lhs: A Decimal128 value to compare.
  ///   - rhs: Another Decimal128 value to compare.
  public static func >= (lhs: Decimal128, rhs: Decimal128) -> Bool {
    order(lhs, rhs) >= 0
  }

  /// Returns a Boolean value indicating whether the decimal128 value of the first
  /// argument is greater than that of the second argument.
  ///
  /// - Parameters:
  ///   - lhs: A Decimal128 value to compare.
  ///   - rhs: Another Decimal128 value to compare.
  public static func > (lhs: Decimal128, rhs: Decimal128) -> Bool {
    order(lhs, rhs) > 0
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
  public init?<T>(exactly source: T) where T: BinaryInteger {
    let result = Decimal128.converting(integer: source)
    // Exact unless digits were rounded away (more than 38 significant ones) or the value is out of range (NaN).
    let digits = String(source.magnitude).utf8
    let significant = digits.count - digits.reversed().prefix { $0 == UInt8(ascii: "0") }.count
    guard !result.isNaN && significant <= Decimal128.maxDigits else { return nil }
    self = result
  }

  /// A type that can represent the absolute value of Decimal128
  public typealias Magnitude = Decimal128

  /// The magnitude of this Decimal128.
  ///
  /// Exact (RealmSwift's goes through `Double`); NaN gives NaN.
  public var magnitude: Magnitude {
    Decimal128(nan: nan, negative: false, exponent: exponent, high: high, low: low)
  }

  /// Adds two decimal128 values and produces their sum.
  ///
  /// The exact sum is rounded to 38 significant digits; NaN if either is NaN or the sum is too large.
  ///
  /// - Parameters:
  ///   - lhs: The first Decimal128 value to add.
  ///   - rhs: The second Decimal128 value to add.
  public static func + (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
    adding(lhs, rhs)
  }

  /// Adds two values and stores the result in the left-hand-side variable.
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
    adding(lhs, rhs.negated)
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
    multiplying(lhs, rhs)
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
    dividing(lhs, rhs)
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

// MARK: - Exact integers

/// A non-negative integer of any size, for exact intermediate results: base-10^9 limbs, least significant first, with
/// no zero limb at the top (zero has no limbs).
private struct LargeDecimalInteger: Comparable {
  /// The limb base.
  static let base: UInt64 = 1_000_000_000
  /// The limbs, least significant first.
  private(set) var limbs: [UInt32]

  /// Zero.
  init() { limbs = [] }

  /// The value of `value`.
  init(_ value: UInt64) {
    limbs = []
    var rest = value
    while rest != 0 {
      limbs.append(UInt32(rest % LargeDecimalInteger.base))
      rest /= LargeDecimalInteger.base
    }
  }

  /// Whether the value is zero.
  var isZero: Bool { limbs.isEmpty }

  /// The decimal digits (values 0–9), most significant first; empty for zero.
  var digits: [UInt8] {
    guard let top = limbs.last else { return [] }
    var result = [UInt8]()
    result.reserveCapacity(limbs.count * 9)
    var topDigits = [UInt8]()
    var rest = top
    while rest != 0 {
      topDigits.append(UInt8(rest % 10))
      rest /= 10
    }
    result.append(contentsOf: topDigits.reversed())
    for limb in limbs.dropLast().reversed() {
      var divisor: UInt32 = 100_000_000
      while divisor != 0 {
        result.append(UInt8(limb / divisor % 10))
        divisor /= 10
      }
    }
    return result
  }

  /// Multiplies in place by `factor` (below 2^32).
  mutating func multiply(by factor: UInt32) {
    if factor == 0 {
      limbs = []
      return
    }
    var carry: UInt64 = 0
    for index in limbs.indices {
      let product = UInt64(limbs[index]) * UInt64(factor) + carry
      limbs[index] = UInt32(product % LargeDecimalInteger.base)
      carry = product / LargeDecimalInteger.base
    }
    while carry != 0 {
      limbs.append(UInt32(carry % LargeDecimalInteger.base))
      carry /= LargeDecimalInteger.base
    }
  }

  /// The value times 10^`count` (`count` ≥ 0).
  func shifted(byDigits count: Int) -> LargeDecimalInteger {
    if isZero || count == 0 { return self }
    var result = self
    result.limbs.insert(contentsOf: repeatElement(0, count: count / 9), at: 0)
    var factor: UInt32 = 1
    for _ in 0..<(count % 9) { factor *= 10 }
    result.multiply(by: factor)
    return result
  }

  /// Removes zero limbs from the top.
  private mutating func trim() {
    while limbs.last == 0 { limbs.removeLast() }
  }

  /// Compares by value.
  static func < (lhs: LargeDecimalInteger, rhs: LargeDecimalInteger) -> Bool {
    if lhs.limbs.count != rhs.limbs.count { return lhs.limbs.count < rhs.limbs.count }
    for index in lhs.limbs.indices.reversed() where lhs.limbs[index] != rhs.limbs[index] {
      return lhs.limbs[index] < rhs.limbs[index]
    }
    return false
  }

  /// The sum.
  static func + (lhs: LargeDecimalInteger, rhs: LargeDecimalInteger) -> LargeDecimalInteger {
    var result = LargeDecimalInteger()
    var carry: UInt32 = 0
    for index in 0..<Swift.max(lhs.limbs.count, rhs.limbs.count) {
      var sum = carry
      if index < lhs.limbs.count { sum += lhs.limbs[index] }
      if index < rhs.limbs.count { sum += rhs.limbs[index] }
      carry = sum >= UInt32(base) ? 1 : 0
      result.limbs.append(sum - carry * UInt32(base))
    }
    if carry != 0 { result.limbs.append(carry) }
    return result
  }

  /// The difference; `lhs` must not be less than `rhs`.
  static func - (lhs: LargeDecimalInteger, rhs: LargeDecimalInteger) -> LargeDecimalInteger {
    precondition(!(lhs < rhs), "LargeDecimalInteger subtraction below zero")
    var result = lhs
    var borrow: UInt32 = 0
    for index in result.limbs.indices {
      let subtrahend = (index < rhs.limbs.count ? rhs.limbs[index] : 0) + borrow
      if result.limbs[index] >= subtrahend {
        result.limbs[index] -= subtrahend
        borrow = 0
      } else {
        result.limbs[index] = result.limbs[index] + UInt32(base) - subtrahend
        borrow = 1
      }
    }
    result.trim()
    return result
  }

  /// The product, by schoolbook multiplication.
  static func * (lhs: LargeDecimalInteger, rhs: LargeDecimalInteger) -> LargeDecimalInteger {
    if lhs.isZero || rhs.isZero { return LargeDecimalInteger() }
    var wide = [UInt64](repeating: 0, count: lhs.limbs.count + rhs.limbs.count + 1)
    for (i, left) in lhs.limbs.enumerated() {
      var carry: UInt64 = 0
      for (j, right) in rhs.limbs.enumerated() {
        let total = wide[i + j] + UInt64(left) * UInt64(right) + carry
        wide[i + j] = total % base
        carry = total / base
      }
      var index = i + rhs.limbs.count
      while carry != 0 {
        let total = wide[index] + carry
        wide[index] = total % base
        carry = total / base
        index += 1
      }
    }
    var result = LargeDecimalInteger()
    result.limbs = wide.map { UInt32($0) }
    result.trim()
    return result
  }

  /// The value divided by base^`exponent`, approximately (from the top three limbs), for quotient estimates.
  private func approximation(scaledBy exponent: Int) -> Double {
    var result = 0.0
    for index in Swift.max(0, limbs.count - 3)..<limbs.count {
      result += Double(limbs[index]) * pow(Double(LargeDecimalInteger.base), Double(index - exponent))
    }
    return result
  }

  /// Schoolbook long division, one base-10^9 limb of the quotient at a time.
  ///
  /// Each quotient limb is estimated in floating point (off by at most one or two) and then settled by a binary
  /// search around the estimate; should the estimate ever miss, the search covers every possible limb instead.
  func quotientAndRemainder(dividingBy divisor: LargeDecimalInteger) -> (
    quotient: LargeDecimalInteger, remainder: LargeDecimalInteger
  ) {
    precondition(!divisor.isZero, "LargeDecimalInteger division by zero")
    var quotient = LargeDecimalInteger()
    quotient.limbs = [UInt32](repeating: 0, count: limbs.count)
    var remainder = LargeDecimalInteger()
    let scale = divisor.limbs.count - 1
    let divisorApproximation = divisor.approximation(scaledBy: scale)
    let largestLimb = UInt32(LargeDecimalInteger.base - 1)
    for index in limbs.indices.reversed() {
      remainder.limbs.insert(limbs[index], at: 0)
      remainder.trim()
      if remainder < divisor { continue }
      let estimate = (remainder.approximation(scaledBy: scale) / divisorApproximation).rounded(.down)
      let guess = UInt32(Swift.min(Swift.max(estimate, 1), Double(largestLimb)))
      var (digit, product) = divisor.largestMultiple(
        notExceeding: remainder, from: guess - Swift.min(guess - 1, 2),
        to: Swift.min(guess + 2, largestLimb))
      if !((remainder - product) < divisor) {
        (digit, product) = divisor.largestMultiple(notExceeding: remainder, from: 1, to: largestLimb)
      }
      remainder = remainder - product
      quotient.limbs[index] = digit
    }
    quotient.trim()
    return (quotient, remainder)
  }

  /// The largest `digit` in `low...high` with `self × digit` not exceeding `limit`, found by binary search, and that
  /// product; `low` itself when even it exceeds `limit` (the caller checks the result).
  private func largestMultiple(notExceeding limit: LargeDecimalInteger, from low: UInt32, to high: UInt32) -> (
    digit: UInt32, product: LargeDecimalInteger
  ) {
    var low = low
    var high = high
    while low < high {
      let middle = low + (high - low + 1) / 2
      var product = self
      product.multiply(by: middle)
      if product < limit || product == limit { low = middle } else { high = middle - 1 }
    }
    var product = self
    product.multiply(by: low)
    if limit < product {
      // Even `low` is too large: report the smaller product so that the caller's check fails safely.
      return (low, LargeDecimalInteger())
    }
    return (low, product)
  }
}
