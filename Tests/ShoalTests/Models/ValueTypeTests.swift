import Foundation
import ShoalStorage
import Testing

@testable import Shoal

/// Compiles only for `Sendable` types.
private func requireSendable<T: Sendable>(_: T.Type) {}

/// Compiles only for `Numeric` types.
private func requireNumeric<T: Numeric>(_: T.Type) {}

// MARK: - ObjectId

/// `generate()` and `init(timestamp:machineId:processId:)` share one counter, so these run one at a time.
@Suite(.serialized)
struct ObjectIdTests {
  @Test func zeroInitialized() {
    let id = ObjectId()
    #expect(id.stringValue == "000000000000000000000000")
    #expect(id.description == id.stringValue)
    #expect(id.bytes == [UInt8](repeating: 0, count: 12))
    #expect(id.timestamp == Date(timeIntervalSince1970: 0))
    #expect(id == ObjectId())
    requireSendable(ObjectId.self)
  }

  @Test func stringRoundTrip() throws {
    var generator = SplitMix64(seed: 1)
    for _ in 0..<500 {
      let bytes = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
      let hex = bytes.map { String(format: "%02x", $0) }.joined()
      let id = try ObjectId(string: hex)
      #expect(id.stringValue == hex)
      #expect(id.bytes == bytes)
      #expect(ObjectId(bytes: bytes) == id)
      #expect(try ObjectId(string: hex.uppercased()) == id)
      #expect(try ObjectId(string: id.stringValue) == id)
      #expect("\(id)" == hex)
    }
  }

  @Test func mixedCaseAndStaticString() throws {
    let id = try ObjectId(string: "5F1A2b3C4d5E6f7A8b9C0dEf")
    #expect(id.stringValue == "5f1a2b3c4d5e6f7a8b9c0def")
    #expect(ObjectId("5f1a2b3c4d5e6f7a8b9c0def") == id)
    #expect(ObjectId("ffffffffffffffffffffffff").bytes == [UInt8](repeating: 0xff, count: 12))
  }

  @Test(arguments: [
    "", "0", "5f1a2b3c4d5e6f7a8b9c0de", "5f1a2b3c4d5e6f7a8b9c0def0", "5f1a2b3c4d5e6f7a8b9c0deg",
    " 5f1a2b3c4d5e6f7a8b9c0def", "5f1a2b3c4d5e6f7a8b9c0def ", "0x1a2b3c4d5e6f7a8b9c0def", "5f1a2b3c-d5e6f7a8b9c0def",
    "ééééééééééééé", "zzzzzzzzzzzzzzzzzzzzzzzz", "5f1a2b3c4d5e6f7a8b9c0dé",
  ])
  func invalidStringsThrow(_ string: String) {
    // Checked through `any Error`, so that this holds whichever error type `ValueInputError.invalidInput` makes.
    let error = #expect(throws: (any Error).self) { try ObjectId(string: string) }
    #expect(error.map { "\($0)" } == "Invalid Object ID string '\(string)': must be 24 hex digits")
  }

  @Test func invalidObjectIdIsARealmError() {
    let error = #expect(throws: Realm.Error.self) { try ObjectId(string: "x") }
    #expect(error?.code == .invalidInput)
    #expect(error?.localizedDescription == "Invalid Object ID string 'x': must be 24 hex digits")
  }

  @Test func generateIsUniqueAndTimestamped() {
    let before = Date().timeIntervalSince1970.rounded(.down)
    let ids = (0..<20_000).map { _ in ObjectId.generate() }
    let after = Date().timeIntervalSince1970.rounded(.down)
    #expect(Set(ids).count == ids.count)
    for id in [ids[0], ids[ids.count - 1]] {
      #expect(id.timestamp.timeIntervalSince1970 >= before)
      #expect(id.timestamp.timeIntervalSince1970 <= after)
    }
    // Bytes 4–8 are the per-process random value; bytes 9–11 a counter, incremented by one per ObjectId.
    let first = ids[0].bytes
    for (previous, next) in zip(ids, ids.dropFirst()) {
      #expect(Array(next.bytes[4..<9]) == Array(first[4..<9]))
      let counter = { (bytes: [UInt8]) in Int(bytes[9]) << 16 | Int(bytes[10]) << 8 | Int(bytes[11]) }
      #expect(counter(next.bytes) == (counter(previous.bytes) + 1) & 0xff_ffff)
    }
  }

  @Test func generateIsUniqueAcrossTasks() async {
    let ids = await withTaskGroup(of: [ObjectId].self) { group in
      for _ in 0..<8 { group.addTask { (0..<2_000).map { _ in ObjectId.generate() } } }
      var all = [ObjectId]()
      for await batch in group { all += batch }
      return all
    }
    #expect(ids.count == 16_000)
    #expect(Set(ids).count == ids.count)
  }

  @Test func timestampMachineAndProcessLayout() {
    let date = Date(timeIntervalSince1970: 0x5F1A_2B3C + 0.75)
    let id = ObjectId(timestamp: date, machineId: 0x0A0B_0C0D, processId: 0x0102_0304)
    let bytes = id.bytes
    #expect(Array(bytes[0..<4]) == [0x5F, 0x1A, 0x2B, 0x3C])
    // realm-core copies the low three bytes of the machine id and the low two of the process id, little-endian.
    #expect(Array(bytes[4..<7]) == [0x0D, 0x0C, 0x0B])
    #expect(Array(bytes[7..<9]) == [0x04, 0x03])
    #expect(id.timestamp == Date(timeIntervalSince1970: 0x5F1A_2B3C))
    let next = ObjectId(timestamp: date, machineId: 0x0A0B_0C0D, processId: 0x0102_0304)
    #expect(next != id)
    #expect(Array(next.bytes[0..<9]) == Array(bytes[0..<9]))
  }

  @Test func timestampEdgeCases() {
    let maxSeconds = Date(timeIntervalSince1970: 4_294_967_295)
    #expect(ObjectId(timestamp: maxSeconds, machineId: 0, processId: 0).timestamp == maxSeconds)
    // Seconds wrap to 32 bits, as realm-core's do, and nothing traps on dates far out of range.
    let wrapped = ObjectId(timestamp: Date(timeIntervalSince1970: 4_294_967_296 + 5), machineId: 0, processId: 0)
    #expect(wrapped.timestamp == Date(timeIntervalSince1970: 5))
    let beforeEpoch = ObjectId(timestamp: Date(timeIntervalSince1970: -1), machineId: 0, processId: 0)
    #expect(Array(beforeEpoch.bytes[0..<4]) == [0xff, 0xff, 0xff, 0xff])
    _ = ObjectId(timestamp: .distantFuture, machineId: .max, processId: .min)
    _ = ObjectId(timestamp: .distantPast, machineId: .min, processId: .max)
    _ = ObjectId(timestamp: Date(timeIntervalSince1970: .infinity), machineId: 0, processId: 0)
    _ = ObjectId(timestamp: Date(timeIntervalSince1970: .nan), machineId: 0, processId: 0)
  }

  @Test func orderingFollowsTime() {
    let base = Date(timeIntervalSince1970: 1_600_000_000)
    let ids = (0..<100).map { offset in
      ObjectId(timestamp: base + TimeInterval(offset), machineId: 0xff_ffff - offset, processId: offset)
    }
    #expect(ids.shuffled().sorted() == ids)
    #expect(ObjectId.generate() > ObjectId(timestamp: base, machineId: 0xff_ffff, processId: 0xffff))
  }

  @Test func comparisonIsBytewise() {
    var generator = SplitMix64(seed: 2)
    for _ in 0..<2_000 {
      var left = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
      var right = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
      // Share a random prefix, so that later bytes decide too.
      let shared = Int.random(in: 0...12, using: &generator)
      right.replaceSubrange(0..<shared, with: left[0..<shared])
      if Bool.random(using: &generator) { swap(&left, &right) }
      let (a, b) = (ObjectId(bytes: left), ObjectId(bytes: right))
      let less = left.lexicographicallyPrecedes(right)
      let greater = right.lexicographicallyPrecedes(left)
      #expect((a < b) == less)
      #expect((a > b) == greater)
      #expect((a <= b) == !greater)
      #expect((a >= b) == !less)
      #expect((a == b) == (left == right))
      #expect(a.isLessThan(b) == less)
      #expect(a.isGreaterThan(b) == greater)
      #expect(a.isLessThanOrEqual(to: b) == !greater)
      #expect(a.isGreaterThanOrEqual(to: b) == !less)
    }
    let id = ObjectId.generate()
    #expect(id.isGreaterThan(nil))
    #expect(id.isGreaterThanOrEqual(to: nil))
    #expect(!id.isLessThan(nil))
    #expect(!id.isLessThanOrEqual(to: nil))
  }

  @Test func hashable() throws {
    let hex = "5f1a2b3c4d5e6f7a8b9c0def"
    let a = try ObjectId(string: hex)
    let b = try ObjectId(string: hex.uppercased())
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
    #expect(Set([a, b, ObjectId(), ObjectId()]).count == 2)
    #expect([a: 1][b] == 1)
  }

  @Test func codableAsSingleString() throws {
    let ids = [ObjectId(), try ObjectId(string: "5f1a2b3c4d5e6f7a8b9c0def"), ObjectId.generate()]
    let data = try JSONEncoder().encode(ids)
    let json = try #require(String(data: data, encoding: .utf8))
    #expect(json.hasPrefix("[\"000000000000000000000000\",\"5f1a2b3c4d5e6f7a8b9c0def\","))
    #expect(try JSONDecoder().decode([ObjectId].self, from: data) == ids)

    struct Wrapper: Codable, Equatable { var id: ObjectId }
    let wrapper = Wrapper(id: ids[1])
    let wrapperData = try JSONEncoder().encode(wrapper)
    #expect(String(data: wrapperData, encoding: .utf8) == #"{"id":"5f1a2b3c4d5e6f7a8b9c0def"}"#)
    #expect(try JSONDecoder().decode(Wrapper.self, from: wrapperData) == wrapper)
    #expect(try PropertyListDecoder().decode([ObjectId].self, from: PropertyListEncoder().encode(ids)) == ids)

    #expect(throws: (any Error).self) { try JSONDecoder().decode([ObjectId].self, from: Data(#"["xyz"]"#.utf8)) }
    #expect(throws: DecodingError.self) { try JSONDecoder().decode([ObjectId].self, from: Data("[12]".utf8)) }
  }
}

// MARK: - Decimal128

struct Decimal128Tests {
  /// Parses a string the tests know to be valid.
  private func d(_ string: String) -> Decimal128 {
    // `init(string:)` never throws; the literal form says the same without `try`.
    Decimal128(stringLiteral: string)
  }

  /// A random value: 1–38 significant digits, any exponent that keeps it in range, either sign.
  private func randomValue(_ generator: inout SplitMix64) -> Decimal128 {
    let count = Int.random(in: 1...38, using: &generator)
    var digits = String(Int.random(in: 1...9, using: &generator))
    for _ in 1..<count { digits += String(Int.random(in: 0...9, using: &generator)) }
    // The leading digit's power of ten may be at most 164.
    let exponent = Int.random(in: -128...(165 - count), using: &generator)
    let sign = Bool.random(using: &generator) ? "-" : ""
    return d("\(sign)\(digits)E\(exponent)")
  }

  /// `a / b` by schoolbook long division, rounded to 38 significant digits (ties to even); `a`, `b` > 0.
  private func referenceQuotient(_ a: Int64, _ b: Int64) -> Decimal128 {
    var digits = String(a / b).compactMap(\.wholeNumberValue).drop { $0 == 0 }.map { $0 }
    var remainder = a % b
    var exponent = 0
    while remainder != 0 && digits.count < 39 {
      remainder *= 10
      exponent -= 1
      let digit = Int(remainder / b)
      remainder %= b
      if !digits.isEmpty || digit != 0 { digits.append(digit) }
    }
    if digits.count == 39 {
      let dropped = digits.removeLast()
      exponent += 1
      let odd = (digits.last ?? 0) % 2 == 1
      if dropped > 5 || (dropped == 5 && (remainder != 0 || odd)) {
        var index = digits.count - 1
        while index >= 0 && digits[index] == 9 {
          digits[index] = 0
          index -= 1
        }
        if index >= 0 { digits[index] += 1 } else { digits.insert(1, at: 0) }
      }
    }
    return d(digits.map(String.init).joined() + "E\(exponent)")
  }

  @Test func zeroAndConformances() {
    #expect(Decimal128().stringValue == "0")
    #expect(Decimal128() == 0)
    #expect(Decimal128.zero == Decimal128())
    #expect(!Decimal128().isNaN)
    #expect(Decimal128().description == "0")
    requireSendable(Decimal128.self)
    requireNumeric(Decimal128.self)
  }

  @Test(arguments: [
    ("0", "0"), ("-0", "0"), ("0.000", "0"), ("+0e10", "0"), ("1", "1"), ("1.50", "1.5"), ("1.0", "1"),
    ("-12.5", "-12.5"), ("1000", "1000"), ("1e3", "1000"), ("1E+3", "1000"), ("12.5e-1", "1.25"), (".5", "0.5"),
    ("5.", "5"), ("  42  ", "42"), ("\t+7\n", "7"), ("0.001", "0.001"), ("0.0000001", "0.0000001"),
    ("0.00000001", "1E-8"), ("0.000000015", "1.5E-8"), ("-1.5E-7", "-0.00000015"),
    ("1e37", "10000000000000000000000000000000000000"),
    ("1e38", "1E38"), ("2.5e40", "2.5E40"), ("1e127", "1E127"), ("1e128", "1E128"), ("1e-128", "1E-128"),
    ("12345678901234567890123456789012345678", "12345678901234567890123456789012345678"),
    ("123456789012345678901234567890123456789", "1.2345678901234567890123456789012345679E38"),
    ("1.00000000000000000000000000000000000005", "1"),
    ("1.00000000000000000000000000000000000015", "1.0000000000000000000000000000000000002"),
    ("1.000000000000000000000000000000000000050001", "1.0000000000000000000000000000000000001"),
    ("99999999999999999999999999999999999999.5", "1E38"), ("0.000123", "0.000123"),
    ("00000000000000000000000000000000000000000000000001.5", "1.5"),
    ("9.9999999999999999999999999999999999999e164", "9.9999999999999999999999999999999999999E164"),
    ("6e-129", "1E-128"), ("5e-129", "0"), ("1.5e-128", "2E-128"), ("2.5e-128", "2E-128"), ("1e-500", "0"),
  ])
  func parsesAndFormats(_ input: String, _ expected: String) throws {
    let value = try Decimal128(string: input)
    #expect(value.stringValue == expected)
    #expect(value.description == expected)
    #expect(try Decimal128(string: expected) == value)
  }

  @Test(arguments: [
    "", " ", "abc", "1_000", "1,5", "1e", "1e+", "e5", ".", "-", "+", "--1", "1.2.3", "0x10", "1e5.5", "1 2", "NaN",
    "nan", "-NaN", "sNaN", "inf", "-Infinity", "Infinity", "1e200", "-1e166", "1d5", "١٢", "12abc",
  ])
  func invalidOrUnrepresentableStringsAreNaN(_ input: String) throws {
    let value = try Decimal128(string: input)
    #expect(value.isNaN)
    #expect(value.isSignaling)
    #expect(value.isSignalingNaN)
    #expect(value.stringValue == "NaN")
    #expect(Decimal128(stringLiteral: input).isNaN)
    #expect(Decimal128(value: input).isNaN)
  }

  @Test func randomStringRoundTrips() throws {
    var generator = SplitMix64(seed: 3)
    for _ in 0..<3_000 {
      let value = randomValue(&generator)
      #expect(!value.isNaN)
      #expect(try Decimal128(string: value.stringValue) == value)
      #expect(Decimal128(value: value.decimalValue) == value)
    }
  }

  @Test func equalValuesAreEqualAndHashEqually() {
    let ones: [Decimal128] = [
      1, 1.0, "1", "1.0", "1.00", "0.1e1", "100e-2", Decimal128(value: 1.0), Decimal128(number: 1),
    ]
    for one in ones {
      #expect(one == ones[0])
      #expect(one.hashValue == ones[0].hashValue)
      #expect(one.storageBytes == ones[0].storageBytes)
    }
    #expect(Set(ones).count == 1)
    let thousands: [Decimal128] = ["1000", "1e3", "1000.000", "0.001e6", 1000]
    #expect(Set(thousands).count == 1)
    #expect(Set([d("1e128"), d("10e127"), d("100e126")]).count == 1)
    #expect(d("1.1") != d("1.1000000000000000000000000000000000001"))
    #expect(d("-0") == d("0"))
  }

  @Test func comparisons() {
    let ascending: [Decimal128] = [
      Decimal128.min, "-1e100", "-2", "-1.5", "-1", "-1e-128", 0, "1e-128", "0.5", "1",
      "1.0000000000000000000000000000000000001",
      "1.5", "2", "10", "1e100", Decimal128.max,
    ]
    for (i, a) in ascending.enumerated() {
      for (j, b) in ascending.enumerated() {
        #expect((a < b) == (i < j))
        #expect((a <= b) == (i <= j))
        #expect((a > b) == (i > j))
        #expect((a >= b) == (i >= j))
        #expect((a == b) == (i == j))
        #expect(a.isLessThan(b) == (i < j))
        #expect(a.isLessThanOrEqual(to: b) == (i <= j))
        #expect(a.isGreaterThan(b) == (i > j))
        #expect(a.isGreaterThanOrEqual(to: b) == (i >= j))
      }
    }
    #expect(ascending.reversed().sorted() == ascending)
  }

  @Test func randomComparisonsMatchFoundation() {
    var generator = SplitMix64(seed: 4)
    for _ in 0..<3_000 {
      let a = randomValue(&generator)
      // Half the time a nearby value with the same leading digits at another exponent, so that ties get tested.
      let b = Bool.random(using: &generator) ? randomValue(&generator) : a * d("1.0000000000000000001")
      let (x, y) = (a.decimalValue, b.decimalValue)
      #expect((a < b) == (x < y))
      #expect((a == b) == (x == y))
      #expect((a > b) == (y < x))
    }
  }

  @Test func nan() throws {
    let nan = try Decimal128(string: "NaN")
    #expect(nan.isNaN)
    #expect(nan == nan)
    #expect(nan == Decimal128(value: "garbage"))
    #expect(nan.hashValue == Decimal128(value: "garbage").hashValue)
    #expect(nan < Decimal128.min)
    #expect(!(nan < nan))
    #expect(nan <= nan)
    #expect(Decimal128.min > nan)
    #expect([d("1"), nan, d("-1")].sorted() == [nan, d("-1"), d("1")])
    #expect((nan + 1).isNaN)
    #expect((1 - nan).isNaN)
    #expect((nan * 0).isNaN)
    #expect((0 / nan).isNaN)
    #expect(nan.magnitude.isNaN)
    let negated = nan
    negated.negate()
    #expect(negated.isNaN)
    #expect(nan.doubleValue.isNaN)
    #expect(nan.decimalValue.isNaN)
    #expect(Decimal128(value: Decimal.nan).isNaN)
    #expect(Decimal128(value: Double.nan).isNaN)
    #expect(Decimal128(value: Double.infinity).isNaN)
    #expect(!Decimal128(1).isSignaling)
    #expect(Decimal128(1).isLessThan(nil) == false)
    #expect(Decimal128(1).isGreaterThan(nil))
  }

  @Test func exactArithmetic() {
    #expect((0.1 as Decimal128) + 0.2 == 0.3)
    #expect(d("0.1") + d("0.2") == d("0.3"))
    #expect(d("1.10") + d("2.205") == d("3.305"))
    #expect(d("5") - d("7.5") == d("-2.5"))
    #expect(d("-5") - d("-5") == 0)
    #expect(d("1.5") * d("-4") == -6)
    #expect(d("0.001") * d("0.001") == d("0.000001"))
    #expect(d("10") / d("4") == d("2.5"))
    #expect(d("-7") / d("2") == d("-3.5"))
    #expect(d("1e100") / d("1e-20") == d("1e120"))
    #expect(d("1e127") * 10 == d("1e128"))
    #expect(d("1e-127") / 10 == d("1e-128"))
    #expect(d("12345678901234567890123456789012345678") - d("12345678901234567890123456789012345677") == 1)
    #expect(d("1e127") + d("1e-128") == d("1e127"))
    #expect(d("1e-128") - d("1e127") == d("-1e127"))
  }

  @Test func roundedArithmetic() {
    #expect((d("1") / d("3")).stringValue == "0.33333333333333333333333333333333333333")
    #expect((d("2") / d("3")).stringValue == "0.66666666666666666666666666666666666667")
    #expect((d("1") / d("7")).stringValue == "0.14285714285714285714285714285714285714")
    #expect((d("-22") / d("7")).stringValue == "-3.1428571428571428571428571428571428571")
    #expect((d("1e-80") / d("3")).stringValue == "3.3333333333333333333333333333333333333E-81")
    // Below 10^-128 digits are lost: 1e-100 / 3 keeps only the 28 digits down to 10^-128.
    #expect((d("1e-100") / d("3")).stringValue == "3.333333333333333333333333333E-101")
    // Ties round to even.
    #expect(d("12345678901234567890123456789012345678") + d("0.5") == d("12345678901234567890123456789012345678"))
    #expect(d("12345678901234567890123456789012345677") + d("0.5") == d("12345678901234567890123456789012345678"))
    #expect(d("12345678901234567890123456789012345677") + d("0.5000001") == d("12345678901234567890123456789012345678"))
    #expect(d("99999999999999999999999999999999999999") + 1 == d("1e38"))
    #expect(d("1e-128") / 2 == 0)
    #expect(d("3e-128") / 2 == d("2e-128"))
    #expect(d("1e-128") * d("0.6") == d("1e-128"))
    #expect(d("1e-64") * d("1e-65") == 0)
  }

  @Test func overflowAndDivisionByZeroGiveNaN() {
    #expect((Decimal128.max + Decimal128.max).isNaN)
    #expect((Decimal128.max * 10).isNaN)
    #expect((Decimal128.min - Decimal128.max).isNaN)
    #expect((d("1e100") * d("1e100")).isNaN)
    #expect((Decimal128(1) / 0).isNaN)
    #expect((Decimal128(0) / 0).isNaN)
    #expect(!(Decimal128.max + 1).isNaN)
    #expect(Decimal128.max.stringValue == "9.9999999999999999999999999999999999999E164")
    #expect(Decimal128.min.stringValue == "-9.9999999999999999999999999999999999999E164")
    #expect(Decimal128.min == -1 * Decimal128.max)
  }

  @Test func randomExactArithmeticMatchesIntegers() {
    var generator = SplitMix64(seed: 5)
    for _ in 0..<3_000 {
      // Up to 15 digits and exponents within ±10: sums and products are exact, and fit Int128 at exponent -10.
      let (x, y) = (
        Int64.random(in: -999_999_999_999_999...999_999_999_999_999, using: &generator),
        Int64.random(in: -999_999_999_999_999...999_999_999_999_999, using: &generator)
      )
      let (ex, ey) = (Int.random(in: -10...10, using: &generator), Int.random(in: -10...10, using: &generator))
      let (a, b) = (d("\(x)E\(ex)"), d("\(y)E\(ey)"))
      var scale = Int128(1)
      for _ in 0..<(ex + 10) { scale *= 10 }
      let left = Int128(x) * scale
      scale = 1
      for _ in 0..<(ey + 10) { scale *= 10 }
      let right = Int128(y) * scale
      #expect(a + b == d("\(left + right)E-10"))
      #expect(a - b == d("\(left - right)E-10"))
      #expect(a * b == d("\(Int128(x) * Int128(y))E\(ex + ey)"))
      if y != 0 {
        // a × b / b is exactly a.
        #expect(a * b / b == a)
      }
      var sum = a
      sum += b
      #expect(sum == a + b)
      var difference = a
      difference -= b
      #expect(difference == a - b)
      var product = a
      product *= b
      #expect(product == a * b)
      var quotient = a
      quotient /= b
      #expect(quotient == a / b)
      #expect(a.distance(to: b) == b - a)
      #expect(a.advanced(by: b) == a + b)
      #expect(a.decimalNumber(byAdding: b) == a + b)
      #expect(a.decimalNumber(bySubtracting: b) == a - b)
      #expect(a.decimalNumberByMultiplying(by: b) == a * b)
      #expect(a.decimalNumberByDividing(by: b) == a / b)
    }
  }

  @Test func randomDivisionIsCorrectlyRounded() {
    var generator = SplitMix64(seed: 6)
    for _ in 0..<2_000 {
      let a = Int64.random(in: 1...999_999_999_999_999_999, using: &generator)
      let b = Int64.random(in: 1...(Bool.random(using: &generator) ? 999 : 999_999_999_999), using: &generator)
      let expected = referenceQuotient(a, b)
      #expect(d(String(a)) / d(String(b)) == expected)
      #expect(d(String(-a)) / d(String(b)) == -1 * expected)
      #expect(d("\(a)E-50") / d("\(b)E20") == expected * d("1E-70"))
    }
  }

  @Test func literals() {
    let integer: Decimal128 = 42
    let negative: Decimal128 = -42
    let float: Decimal128 = 2.5
    let tenth: Decimal128 = 0.1
    let string: Decimal128 = "123.4500"
    let bogus: Decimal128 = "bogus"
    #expect(integer.stringValue == "42")
    #expect(negative.stringValue == "-42")
    #expect(float.stringValue == "2.5")
    #expect(tenth.stringValue == "0.1")
    #expect(string.stringValue == "123.45")
    #expect(bogus.isNaN)
    let big: Decimal128 = 9_223_372_036_854_775_807
    #expect(big.stringValue == "9223372036854775807")
    let sum: Decimal128 = 1 + 2.5 + "3.5"
    #expect(sum == 7)
  }

  @Test func conversionsFromValues() throws {
    #expect(Decimal128(value: 5).stringValue == "5")
    #expect(Decimal128(value: Int8(-5)).stringValue == "-5")
    #expect(Decimal128(value: UInt64.max).stringValue == "18446744073709551615")
    #expect(Decimal128(value: Int64.min).stringValue == "-9223372036854775808")
    #expect(Decimal128(value: Int128.max).stringValue == "1.7014118346046923173168730371588410573E38")
    #expect(Decimal128(value: 0.1).stringValue == "0.1")
    #expect(Decimal128(value: 1.0 / 3.0).stringValue == "0.333333333333333")
    #expect(Decimal128(value: Float(0.1)).stringValue == "0.100000001490116")
    #expect(Decimal128(value: 1e100).stringValue == "1E100")
    #expect(Decimal128(value: 123_456_789.123_456_789).stringValue == "123456789.123457")
    #expect(Decimal128(value: -0.0) == 0)
    #expect(Decimal128(value: Double.leastNonzeroMagnitude) == 0)
    #expect(Decimal128(value: 1e300).isNaN)
    #expect(Decimal128(value: "1.25").stringValue == "1.25")
    #expect(Decimal128(value: "1.25"[...]).stringValue == "1.25")
    #expect(Decimal128(value: try #require(Decimal(string: "1.23"))).stringValue == "1.23")
    #expect(Decimal128(value: NSNumber(value: 7)).stringValue == "7")
    #expect(Decimal128(value: NSNumber(value: 1.5)).stringValue == "1.5")
    #expect(Decimal128(value: NSDecimalNumber(string: "123.456")).stringValue == "123.456")
    #expect(Decimal128(value: true) == 1)
    #expect(Decimal128(value: false) == 0)
    #expect(Decimal128(value: d("2.5")) == d("2.5"))
    #expect(Decimal128(value: NSNull()).isNaN)
    let none: Int? = nil
    let some: Int? = 3
    #expect(Decimal128(value: none as Any).isNaN)
    #expect(Decimal128(value: some as Any) == 3)
  }

  @Test func conversionsFromNumbers() {
    #expect(Decimal128(number: NSNumber(value: UInt64.max)).stringValue == "18446744073709551615")
    #expect(Decimal128(number: NSNumber(value: Int64.min)).stringValue == "-9223372036854775808")
    #expect(Decimal128(number: NSNumber(value: 0.1)).stringValue == "0.1")
    #expect(Decimal128(number: NSNumber(value: Float(0.5))).stringValue == "0.5")
    #expect(Decimal128(number: NSNumber(value: true)) == 1)
    #expect(Decimal128(number: NSNumber(value: UInt8(200))) == 200)
    #expect(Decimal128(number: NSDecimalNumber(string: "-0.000123")).stringValue == "-0.000123")
    #expect(Decimal128(5).stringValue == "5")
    #expect(Decimal128(0.25).stringValue == "0.25")
  }

  @Test func exactlyFromIntegers() throws {
    #expect(Decimal128(exactly: 5) == 5)
    #expect(Decimal128(exactly: UInt64.max) == d("18446744073709551615"))
    #expect(Decimal128(exactly: Int128(0)) == 0)
    var power = Int128(1)
    for _ in 0..<38 { power *= 10 }
    #expect(try #require(Decimal128(exactly: power)) == d("1e38"))
    #expect(Decimal128(exactly: power - 1) != nil)
    #expect(Decimal128(exactly: Int128.max) == nil)
    #expect(Decimal128(exactly: UInt128.max) == nil)
    #expect(Decimal128(exactly: Int128.min + 1) == nil)
  }

  @Test func doubleAndDecimalValues() {
    #expect(d("0.1").doubleValue == 0.1)
    #expect(d("-1.5E-7").doubleValue == -1.5e-7)
    #expect(d("1e100").doubleValue == 1e100)
    #expect(Decimal128.max.doubleValue == 9.9999999999999999999999999999999999999e164)
    #expect(d("0.1").decimalValue == Decimal(string: "0.1"))
    let extremes = [
      Decimal128.max, Decimal128.min, d("1e-128"), d("-1e-128"), d("12345678901234567890123456789012345678e-128"),
      d("1e128"), d("5e164"), 0,
    ]
    for value in extremes {
      #expect(Decimal128(value: value.decimalValue) == value)
      #expect(!value.decimalValue.isNaN)
    }
  }

  @Test func magnitudeAndNegate() {
    #expect(d("-2.5").magnitude == d("2.5"))
    #expect(d("2.5").magnitude == d("2.5"))
    #expect(Decimal128.min.magnitude == Decimal128.max)
    let value = d("12345678901234567890123456789012345678")
    value.negate()
    #expect(value.stringValue == "-12345678901234567890123456789012345678")
    value.negate()
    #expect(value == d("12345678901234567890123456789012345678"))
    let zero = Decimal128()
    zero.negate()
    #expect(zero == 0)
    #expect(zero.stringValue == "0")
  }

  @Test func negateChangesTheInstanceEveryReferenceSeesAsRealmSwiftsClassDoes() {
    let original: Decimal128 = 7
    let sameInstance = original
    let copy = Decimal128(value: original)
    var sum = original
    sum += 1
    sameInstance.negate()
    #expect(original == -7)
    #expect(copy == 7)
    #expect(sum == 8)
    #expect(Set([original, copy, Decimal128(-7)]).count == 2)
  }

  @Test func codable() throws {
    let values: [Decimal128] = ["1.5", "-0.000123", "1E40", 0, Decimal128.max, d("NaN")]
    let data = try JSONEncoder().encode(values)
    #expect(
      String(data: data, encoding: .utf8)
        == #"["1.5","-0.000123","1E40","0","9.9999999999999999999999999999999999999E164","NaN"]"#)
    #expect(try JSONDecoder().decode([Decimal128].self, from: data) == values)
    let mixed = try JSONDecoder().decode(
      [Decimal128].self, from: Data(#"["2.50", 3, -9223372036854775808, 0.1, "x"]"#.utf8))
    #expect(Array(mixed[0..<4]) == [d("2.5"), 3, d("-9223372036854775808"), d("0.1")])
    #expect(mixed[4].isNaN)
    #expect(throws: DecodingError.self) { try JSONDecoder().decode([Decimal128].self, from: Data("[true]".utf8)) }
    #expect(throws: DecodingError.self) { try JSONDecoder().decode([Decimal128].self, from: Data("[{}]".utf8)) }
    #expect(try PropertyListDecoder().decode([Decimal128].self, from: PropertyListEncoder().encode(values)) == values)
  }

  @Test func storageRoundTripsEdgeCases() throws {
    let nan = d("NaN")
    let edges: [Decimal128] = [
      0, nan, 1, -1, Decimal128.max, Decimal128.min, d("1e-128"), d("-1e-128"), d("1e127"), d("1e128"), d("10e127"),
      d("5e164"), d("-5e164"), d("99999999999999999999999999999999999999"), d("0.1"), d("-0.1"), d("1e-91"),
      d("12345678901234567890123456789012345678e-128"), d("-12345678901234567890123456789012345678e-128"),
      d("1.2345678901234567890123456789012345678"), d("100"), d("-100"),
    ]
    for value in edges {
      let bytes = value.storageBytes
      #expect(bytes.count == Decimal128Value.storageByteCount)
      let read = Decimal128(storage: bytes)
      #expect(read == value)
      #expect(read.isNaN == value.isNaN)
      #expect(read.storageBytes == bytes)
      #expect(read.stringValue == value.stringValue)
    }
    #expect(nan.storageBytes == [UInt8](repeating: 0, count: 19))
    #expect(Decimal128(storage: [UInt8](repeating: 0, count: 19)).isNaN)
  }

  @Test func storageRoundTripsRandomValuesAndOrders() {
    var generator = SplitMix64(seed: 7)
    var values = [d("NaN"), 0]
    for _ in 0..<5_000 { values.append(randomValue(&generator)) }
    for value in values {
      let bytes = value.storageBytes
      #expect(Decimal128(storage: bytes) == value)
      #expect(Decimal128(storage: bytes).storageBytes == bytes)
    }
    // Bytewise order is value order.
    let byValue = values.sorted()
    let byBytes = values.sorted { $0.storageBytes.lexicographicallyPrecedes($1.storageBytes) }
    #expect(byValue == byBytes)
  }

  @Test func corruptStorageReadsAsNaN() {
    var bytes = d("1.5").storageBytes
    bytes[0] = 9
    #expect(Decimal128(storage: bytes).isNaN)
    var tooLarge = [UInt8](repeating: 0xff, count: 19)
    tooLarge[0] = 3
    #expect(Decimal128(storage: tooLarge).isNaN)
    var tooSmall = [UInt8](repeating: 0, count: 19)
    tooSmall[0] = 3
    tooSmall[18] = 1
    #expect(Decimal128(storage: tooSmall).isNaN)
    #expect(Decimal128(storage: []).isNaN)
    #expect(Decimal128(storage: Array(d("1.5").storageBytes.dropLast())).isNaN)
    #expect(Decimal128(storage: d("1.5").storageBytes + [0]).isNaN)
  }
}

@Suite("Dates read back exactly")
struct DatePrecisionTests {
  @Test func aDateReadsBackBitIdentical() throws {
    let config = fileConfiguration()
    let now = Date()
    let odd = Date(timeIntervalSinceReferenceDate: 0.1 + 1e-7)
    let dates = [now, odd, Date.distantPast, Date.distantFuture, Date(timeIntervalSinceReferenceDate: -123.456789)]
    do {
      let realm = try Realm(configuration: config)
      try realm.write {
        for (i, date) in dates.enumerated() {
          let object = AllTypes()
          object.int = i
          object.date = date
          object.optDate = date
          object.any = .date(date)
          object.anyMap["d"] = .date(date)
          realm.add(object)
        }
      }
    }
    let realm = try Realm(configuration: config)
    for (i, date) in dates.enumerated() {
      let object = try #require(realm.objects(AllTypes.self).filter("int == %@", i).first)
      #expect(object.date.timeIntervalSinceReferenceDate.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern)
      #expect(object.date == date)
      #expect(object.optDate == date)
      #expect(object.any == .date(date))
      #expect(object.anyMap["d"] == .date(date))
      // Queries compare the exact value.
      #expect(realm.objects(AllTypes.self).filter("date == %@", date).count == 1)
    }
  }
}
