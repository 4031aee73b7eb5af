import Foundation

/// The value of a ``Decimal128``: a canonical decimal with up to 38 significant digits and exponents from -128 to
/// 127, and the exact arithmetic, parsing and encoding behind it. ``Decimal128`` is a class, as RealmSwift's is;
/// this value type does the work so that the class stays a thin, thread-safe box.
struct Decimal128Value: Sendable {
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
  static let notANumber = Decimal128Value(nan: true, negative: false, exponent: 0, high: 0, low: 0)

  /// Stores fields that already form the canonical form.
  private init(nan: Bool, negative: Bool, exponent: Int16, high: UInt64, low: UInt64) {
    self.nan = nan
    self.negative = negative
    self.exponent = exponent
    self.high = high
    self.low = low
  }

  // MARK: Initializers

  /// Zero.
  init() {
    self.init(nan: false, negative: false, exponent: 0, high: 0, low: 0)
  }

  /// The minimum value: -(10^38 - 1) × 10^127.
  static var min: Decimal128Value { Decimal128Value.max.negated }

  /// The maximum value: (10^38 - 1) × 10^127.
  static var max: Decimal128Value {
    Decimal128Value(
      nan: false, negative: false, exponent: Int16(maxExponent), high: splitBase - 1, low: splitBase - 1)
  }

  // MARK: Properties

  /// Convert this value to a string.
  ///
  /// `NaN`, or the shortest form of the value: plain notation (`"-12.5"`, `"0.001"`, `"1000"`) while the number has no
  /// more than 38 integer digits and no more than 6 zeros after the point before the first significant digit, else
  /// scientific notation with a capital `E` (`"1.5E-8"`, `"2E40"`). `init(string:)` reads it back exactly.
  var stringValue: String {
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
    if exponent >= 0 && adjusted < Decimal128Value.maxDigits {
      result += Decimal128Value.text(digits[...]) + String(repeating: "0", count: exponent)
    } else if exponent < 0 && adjusted >= -7 {
      let point = count + exponent
      if point > 0 {
        result += Decimal128Value.text(digits[..<point]) + "." + Decimal128Value.text(digits[point...])
      } else {
        result += "0." + String(repeating: "0", count: -point) + Decimal128Value.text(digits[...])
      }
    } else {
      result += Decimal128Value.text(digits[..<1])
      if count > 1 { result += "." + Decimal128Value.text(digits[1...]) }
      result += "E" + String(adjusted)
    }
    return result
  }

  /// Whether this is NaN.
  var isNaN: Bool { nan }

  /// Convert this value to a double. This is a lossy conversion.
  ///
  /// The result is the `Double` nearest the value; NaN gives `Double.nan`.
  var doubleValue: Double { Double(stringValue) ?? .nan }

  /// Convert this value to a `Decimal`.
  ///
  /// The conversion is exact: every value is a `Decimal` value. NaN gives `Decimal.nan`.
  var decimalValue: Decimal {
    if nan { return .nan }
    if isZero { return Decimal() }
    let digits = Decimal128Value.text(coefficientDigits[...])
    let text = (negative ? "-" : "") + digits + "E" + String(exponent)
    return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) ?? .nan
  }

  /// The number of bytes in `storageBytes`.
  static let storageByteCount = 19

  /// Reads a value from the 19 bytes `storageBytes` gave.
  ///
  /// Bytes that `storageBytes` cannot produce, including a count other than 19, are corrupt data and read as NaN
  /// rather than trapping, since they come from a file.
  init(storage bytes: [UInt8]) {
    self = bytes.count == Decimal128Value.storageByteCount ? Decimal128Value.decoding(storage: bytes) : .notANumber
  }

  /// A 19-byte encoding of the value that `init(storage:)` reads back exactly and that orders as the values do when
  /// compared bytewise (NaN first, then negative values, zero, positive values).
  ///
  /// Layout: a class byte (0 NaN, 1 negative, 2 zero, 3 positive; the rest zero for NaN and zero), then for nonzero
  /// values the adjusted exponent (the power of ten of the leading digit, -128 to 164) plus 128 as a big-endian
  /// `UInt16`, then the coefficient scaled to exactly 38 digits as a big-endian 128-bit integer. For negative values
  /// the 18 bytes after the class byte are inverted.
  var storageBytes: [UInt8] {
    var bytes = [UInt8](repeating: 0, count: Decimal128Value.storageByteCount)
    if nan { return bytes }
    if isZero {
      bytes[0] = 2
      return bytes
    }
    bytes[0] = negative ? 1 : 3
    // Scale the coefficient up to exactly 38 digits: `high` then holds the first 19 digits, `low` the next 19.
    let count = coefficientDigitCount
    var scaled = (high: high, low: low)
    for _ in count..<Decimal128Value.maxDigits { scaled = Decimal128Value.timesTen(scaled) }
    let biasedAdjusted = UInt16(count - 1 + Int(exponent) - Decimal128Value.minExponent)
    bytes[1] = UInt8(biasedAdjusted >> 8)
    bytes[2] = UInt8(biasedAdjusted & 0xff)
    let product = scaled.high.multipliedFullWidth(by: Decimal128Value.splitBase)
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
    high != 0 ? 19 + Decimal128Value.digitCount(high) : Decimal128Value.digitCount(low)
  }

  /// The coefficient's decimal digits (values 0–9), most significant first; empty for zero.
  private var coefficientDigits: [UInt8] {
    if high != 0 { return Decimal128Value.digits(of: high, width: 0) + Decimal128Value.digits(of: low, width: 19) }
    return low != 0 ? Decimal128Value.digits(of: low, width: 0) : []
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
  ) -> Decimal128Value {
    guard let first = input.firstIndex(where: { $0 != 0 }) else { return Decimal128Value() }
    var digits = Array(input[first...])
    var exponent = inputExponent
    let drop = Swift.max(digits.count - precision, minExponent - exponent, 0)
    if drop > 0 {
      let keptCount = digits.count - drop
      // Everything is dropped below the first dropped position being a digit: the value rounds to zero.
      if keptCount < 0 { return Decimal128Value() }
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
      guard kept.contains(where: { $0 != 0 }) else { return Decimal128Value() }
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
    return Decimal128Value(nan: false, negative: negative, exponent: Int16(exponent), high: high, low: low)
  }

  /// The canonical value nearest an exact integer result.
  private static func rounding(
    negative: Bool, _ value: LargeDecimalInteger, exponent: Int, sticky: Bool = false
  ) -> Decimal128Value {
    rounding(negative: negative, digits: value.digits, exponent: exponent, sticky: sticky)
  }

  /// Parses a decimal string; NaN for anything that is not one.
  static func parsing(_ string: String) -> Decimal128Value {
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
      // Not a number. NaN (and infinities, which a Decimal128Value here cannot hold) read as NaN too.
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
  static func converting<T: BinaryInteger>(integer value: T) -> Decimal128Value {
    let digits = String(value.magnitude).utf8.map { $0 - UInt8(ascii: "0") }
    return rounding(negative: value < 0, digits: digits, exponent: 0)
  }

  /// Converts a double from its exact binary value, rounded to `precision` significant digits.
  static func converting(double value: Double, precision: Int) -> Decimal128Value {
    guard value.isFinite else { return notANumber }
    if value == 0 { return Decimal128Value() }
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
  static func converting(number: NSNumber) -> Decimal128Value {
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
  private static func converting(decimal: Decimal) -> Decimal128Value {
    decimal.isNaN ? notANumber : parsing(decimal.description)
  }

  /// Converts a floating point value of any binary type through `Double`.
  static func converting<T: BinaryFloatingPoint>(floatingPoint value: T) -> Decimal128Value {
    converting(double: Double(value), precision: 15)
  }

  /// The conversion behind `init(value:)`.
  static func converting(_ value: Any) -> Decimal128Value {
    switch value {
    case let decimal128 as Decimal128Value: return decimal128
    case let decimal128 as Decimal128: return decimal128.value
    case let decimal as Decimal: return converting(decimal: decimal)
    case let string as String: return parsing(string)
    case let substring as Substring: return parsing(String(substring))
    case let bool as Bool: return converting(integer: bool ? 1 : 0)
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
  private static func decoding(storage bytes: [UInt8]) -> Decimal128Value {
    switch bytes[0] {
    case 1, 3: break
    case 2: return Decimal128Value()
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
    return Decimal128Value(
      nan: false, negative: negative, exponent: Int16(exponent), high: coefficient.high, low: coefficient.low)
  }

  /// -1, 0 or 1 for the sign of a value that is not NaN.
  private var signum: Int { isZero ? 0 : (negative ? -1 : 1) }

  /// The order realm-core gives: NaN equals NaN and comes before every other value; -1, 0 or 1.
  private static func order(_ lhs: Decimal128Value, _ rhs: Decimal128Value) -> Int {
    if lhs.nan || rhs.nan { return lhs.nan == rhs.nan ? 0 : (lhs.nan ? -1 : 1) }
    let (lhsSign, rhsSign) = (lhs.signum, rhs.signum)
    if lhsSign != rhsSign { return lhsSign < rhsSign ? -1 : 1 }
    if lhsSign == 0 { return 0 }
    return lhsSign * orderOfMagnitudes(lhs, rhs)
  }

  /// Compares the absolute values of two nonzero values; -1, 0 or 1.
  private static func orderOfMagnitudes(_ lhs: Decimal128Value, _ rhs: Decimal128Value) -> Int {
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
  private static func adding(_ lhs: Decimal128Value, _ rhs: Decimal128Value) -> Decimal128Value {
    if lhs.nan || rhs.nan { return notANumber }
    if rhs.isZero { return lhs }
    if lhs.isZero { return rhs }
    let exponent = Swift.min(Int(lhs.exponent), Int(rhs.exponent))
    let left = lhs.largeCoefficient.shifted(byDigits: Int(lhs.exponent) - exponent)
    let right = rhs.largeCoefficient.shifted(byDigits: Int(rhs.exponent) - exponent)
    if lhs.negative == rhs.negative { return rounding(negative: lhs.negative, left + right, exponent: exponent) }
    if left == right { return Decimal128Value() }
    return left > right
      ? rounding(negative: lhs.negative, left - right, exponent: exponent)
      : rounding(negative: rhs.negative, right - left, exponent: exponent)
  }

  /// The exact product of two values, rounded.
  private static func multiplying(_ lhs: Decimal128Value, _ rhs: Decimal128Value) -> Decimal128Value {
    if lhs.nan || rhs.nan { return notANumber }
    if lhs.isZero || rhs.isZero { return Decimal128Value() }
    return rounding(
      negative: lhs.negative != rhs.negative, lhs.largeCoefficient * rhs.largeCoefficient,
      exponent: Int(lhs.exponent) + Int(rhs.exponent))
  }

  /// The quotient of two values, correctly rounded; NaN when dividing by zero.
  private static func dividing(_ lhs: Decimal128Value, _ rhs: Decimal128Value) -> Decimal128Value {
    if lhs.nan || rhs.nan || rhs.isZero { return notANumber }
    if lhs.isZero { return Decimal128Value() }
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
  var negated: Decimal128Value {
    if nan || isZero { return self }
    return Decimal128Value(nan: false, negative: !negative, exponent: exponent, high: high, low: low)
  }
}

extension Decimal128Value: Hashable {
  /// Hashes the value; equal values (such as `1.0` and `1.00`) hash equally, as they share one canonical form.
  ///
  /// - Parameter hasher: The hasher to use when combining the components of this instance.
  func hash(into hasher: inout Hasher) {
    hasher.combine(nan)
    hasher.combine(negative)
    hasher.combine(exponent)
    hasher.combine(high)
    hasher.combine(low)
  }
}

extension Decimal128Value {
  /// Whether two values are equal; each value has one canonical form, so equal values have equal fields.
  static func == (lhs: Decimal128Value, rhs: Decimal128Value) -> Bool {
    lhs.nan == rhs.nan && lhs.negative == rhs.negative && lhs.exponent == rhs.exponent && lhs.high == rhs.high
      && lhs.low == rhs.low
  }

  /// -1, 0 or 1 as `lhs` is below, equal to or above `rhs`; NaN is below every other value.
  static func compare(_ lhs: Decimal128Value, _ rhs: Decimal128Value) -> Int { order(lhs, rhs) }

  /// The exact sum rounded to 38 significant digits; NaN if either is NaN or the sum is too large.
  static func + (lhs: Decimal128Value, rhs: Decimal128Value) -> Decimal128Value { adding(lhs, rhs) }

  /// The exact difference rounded to 38 significant digits; NaN if either is NaN or it is too large.
  static func - (lhs: Decimal128Value, rhs: Decimal128Value) -> Decimal128Value { adding(lhs, rhs.negated) }

  /// The exact product rounded to 38 significant digits; NaN if either is NaN or it is too large.
  static func * (lhs: Decimal128Value, rhs: Decimal128Value) -> Decimal128Value { multiplying(lhs, rhs) }

  /// The exact quotient rounded to 38 significant digits; NaN for a NaN operand, a zero divisor or a quotient too
  /// large.
  static func / (lhs: Decimal128Value, rhs: Decimal128Value) -> Decimal128Value { dividing(lhs, rhs) }

  /// The absolute value; exact, and NaN for NaN.
  var magnitude: Decimal128Value {
    Decimal128Value(nan: nan, negative: false, exponent: exponent, high: high, low: low)
  }

  /// `source` as a value, or nil when it is out of range or has more than 38 significant digits.
  static func exactly<T: BinaryInteger>(_ source: T) -> Decimal128Value? {
    let result = converting(integer: source)
    // Exact unless digits were rounded away (more than 38 significant ones) or the value is out of range (NaN).
    let digits = String(source.magnitude).utf8
    let significant = digits.count - digits.reversed().prefix { $0 == UInt8(ascii: "0") }.count
    guard !result.isNaN && significant <= maxDigits else { return nil }
    return result
  }

  /// A value from a decoder: a string as `init(string:)` parses it, or an integer or a double converted.
  init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let string = try? container.decode(String.self) {
      self = Decimal128Value.parsing(string)
    } else if let integer = try? container.decode(Int64.self) {
      self = Decimal128Value.converting(integer: integer)
    } else if let double = try? container.decode(Double.self) {
      self = Decimal128Value.converting(double: double, precision: 15)
    } else {
      throw DecodingError.dataCorruptedError(in: container, debugDescription: "Cannot convert value to Decimal128")
    }
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
