import Dispatch
import Foundation
import Shoal
import Synchronization
import Testing

// Conformance with RealmSwift 10.x's documented behaviour: value types (ObjectId, Decimal128,
// UUID, Date, Data, AnyRealmValue, PersistableEnum, floating point specials), sort order, model
// rules (equality, hashing, description, embedded objects, deletion) and the change sets of
// notifications. Errors that RealmSwift raises as exceptions (Shoal: fatal errors) are checked
// with exit tests, whose standard error must contain RealmSwift's message.

// MARK: - Models (nested in the suite; every Realm here lists them in `objectTypes`)

extension ValueAndModelRuleTests {
  enum Color: String, PersistableEnum {
    case red, green, blue
  }

  enum Level: Int, PersistableEnum {
    case low = 1, mid = 5, high = 10
  }

  final class StreetAddress: EmbeddedObject {
    @Persisted var street = ""
    @Persisted var city = ""
  }

  final class Hound: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<HoundOwner>
  }

  final class HoundOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var dog: Hound?
    @Persisted var dogs: List<Hound>
    @Persisted var address: StreetAddress?
    @Persisted var addresses: List<StreetAddress>
    @Persisted var scores: Map<String, Int>
  }

  /// A class without a primary key.
  final class DogNote: Object {
    @Persisted var text = ""
    @Persisted var dog: Hound?
  }

  final class ValueHolder: Object {
    @Persisted var objectId: ObjectId
    @Persisted var decimal: Decimal128
    @Persisted var uuid: UUID
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var data = Data()
    @Persisted var any: AnyRealmValue
    @Persisted var color = Color.red
    @Persisted var level: Level?
    @Persisted var colors: List<Color>
    @Persisted var levels: List<Level?>
  }

  final class Sortable: Object {
    @Persisted var label = ""
    @Persisted var optInt: Int?
    @Persisted var optString: String?
    @Persisted var flag = false
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var double: Double = 0
    @Persisted var float: Float = 0
    @Persisted var optDouble: Double?
    @Persisted var dog: Hound?
  }

  final class Profile: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var active = false
    @Persisted var born = Date(timeIntervalSince1970: 0)
    @Persisted var nickname: String?
    @Persisted var pet: Hound?
    @Persisted var pets: List<Hound>
  }

  final class Described: Object {
    @Persisted var name = ""
    @Persisted var count = 0
    @Persisted var flag = false
    @Persisted var nickname: String?
    @Persisted var dog: Hound?
    @Persisted var dogs: List<Hound>
  }

  /// A `@Persisted` model overriding the legacy class methods. RealmSwift 10.x reads the primary
  /// key from `primaryKey()` for every class, but with `@Persisted` properties it never consults
  /// `indexedProperties()` or `ignoredProperties()`; a property without `@Persisted` is not stored.
  final class LegacyRules: Object {
    @Persisted var code = ""
    @Persisted var name = ""
    @Persisted var note = ""
    var transient = "not stored"

    override class func primaryKey() -> String? { "code" }
    override class func indexedProperties() -> [String] { ["name"] }
    override class func ignoredProperties() -> [String] { ["note"] }
  }

  /// The classes every Realm of these tests lists in `objectTypes`.
  static let modelTypes: [ObjectBase.Type] = [
    StreetAddress.self, Hound.self, HoundOwner.self, DogNote.self, ValueHolder.self, Sortable.self,
    Profile.self, Described.self, LegacyRules.self,
  ]
}

/// A fresh in-memory configuration holding only the classes above.
private func modelRuleConfiguration() -> Realm.Configuration {
  Realm.Configuration(
    inMemoryIdentifier: "value-conformance-" + UUID().uuidString, objectTypes: ValueAndModelRuleTests.modelTypes)
}

private func modelRuleRealm() throws -> Realm { try Realm(configuration: modelRuleConfiguration()) }

/// A description with the addresses RealmSwift prints (`<0x…>`) replaced by `<ADDR>`.
private func withoutAddresses(_ text: String) -> String {
  text.replacing(/<0x[0-9a-fA-F]+>/, with: "<ADDR>")
}

/// Collects values delivered on another queue; `next()` waits for the next one (30 s at most).
private final class TextInbox: Sendable {
  private let items = Mutex<[String]>([])
  private let signal = DispatchSemaphore(value: 0)

  func put(_ item: String) {
    items.withLock { $0.append(item) }
    signal.signal()
  }

  func next() -> String? {
    guard signal.wait(timeout: .now() + 30) == .success else { return nil }
    return items.withLock { $0.removeFirst() }
  }
}

/// A collection change reduced to plain values.
private enum PlainChange: Equatable {
  case initial(Int)
  case update(deletions: [Int], insertions: [Int], modifications: [Int])
  case error

  init<C: Collection>(_ change: RealmCollectionChange<C>) {
    switch change {
    case .initial(let collection): self = .initial(collection.count)
    case .update(_, let deletions, let insertions, let modifications):
      self = .update(deletions: deletions, insertions: insertions, modifications: modifications)
    case .error: self = .error
    }
  }
}

/// `PropertyChange` values as text: nil (or NSNull) is "nil", objects are named by `name`.
private func propertyValueText(_ value: Any?) -> String {
  guard let value, !(value is NSNull) else { return "nil" }
  if let date = value as? Date { return "@\(Int(date.timeIntervalSince1970))" }
  if let dog = value as? ValueAndModelRuleTests.Hound { return "dog(\(dog.name))" }
  if let string = value as? String { return string }
  return "\(value)"
}

@Suite("Values, model rules and change sets")
struct ValueAndModelRuleTests {
  // MARK: ObjectId

  @Test func objectIdZeroStringValueAndDescription() throws {
    let zero = ObjectId()
    #expect(zero.stringValue == "000000000000000000000000")
    #expect(zero.description == zero.stringValue)
    #expect(zero.timestamp == Date(timeIntervalSince1970: 0))
    let text = "000123450000ffbeef91906c"
    let id = try ObjectId(string: text)
    #expect(id.stringValue == text)
    #expect("\(id)" == text)
    #expect(try ObjectId(string: "5F1A2B3C4D5E6F7A8B9C0DEF").stringValue == "5f1a2b3c4d5e6f7a8b9c0def")
    #expect(try ObjectId(string: "5f1a2b3c4d5e6f7a8b9c0def").timestamp == Date(timeIntervalSince1970: 0x5F1A_2B3C))
  }

  @Test func objectIdFromAnInvalidStringThrowsRealmsError() {
    for bad in ["", "xyz", "000123450000ffbeef91906", "000123450000ffbeef91906cc", "000123450000ffbeef91906g"] {
      let error = #expect(throws: Realm.Error.self) { try ObjectId(string: bad) }
      #expect(error?.code == .invalidInput)
      #expect(error?.localizedDescription == "Invalid Object ID string '\(bad)': must be 24 hex digits")
    }
  }

  @Test func objectIdGenerateTimestampAndComparison() throws {
    let now = Date()
    let made = ObjectId(timestamp: now, machineId: 10, processId: 20)
    #expect(Int(made.timestamp.timeIntervalSince1970) == Int(now.timeIntervalSince1970))
    let generated = (0..<100).map { _ in ObjectId.generate() }
    #expect(Set(generated).count == 100)
    #expect(abs(generated[0].timestamp.timeIntervalSince(now)) < 5)

    let a = try ObjectId(string: "000123450000ffbeef91906c")
    let b = try ObjectId(string: "000123450000ffbeef91906d")
    let c = try ObjectId(string: "000123450000ffbeef91906c")
    #expect(a != b && a == c)
    #expect(b > a && !(a > c))
    #expect(b >= a && a >= c)
    #expect(a < b && !(a < c))
    #expect(a <= b && a <= c)
    #expect([b, c, a].sorted() == [a, a, b])
  }

  // MARK: Decimal128

  /// RealmSwift's Decimal128Tests: values keep the exponent of their operands.
  @Test(
    .disabled(
      "Known gap (README, What does not work yet): Shoal's Decimal128 holds Foundation Decimal's values in one canonical form, not IEEE decimal128 cohorts"
    )) func decimal128KeepsTheExponentOfItsOperands() throws
  {
    let d3: Decimal128 = "1.234567"
    let d4: Decimal128 = "9.876543"
    #expect((d3 + d4).description == "11.111110")
    #expect(d3.description == "1.234567")
    let a: Decimal128 = "2.5"
    let b: Decimal128 = "3.5"
    #expect((a - b).description == "-1.0")
    #expect(a.description == "2.5")
    #expect(Decimal128(123).description == "123")
  }

  /// realm-core's `Decimal128::to_string`: the coefficient's digits with one digit before the
  /// point and an `E` exponent whenever the stored exponent is not reduced to zero (RealmSwift's
  /// ObjectTests print `Decimal128("123e4")` as `1.23E6`).
  @Test(
    .disabled(
      "Known gap (README, What does not work yet): Shoal's Decimal128 holds Foundation Decimal's values in one canonical form, not IEEE decimal128 cohorts"
    )) func decimal128DescriptionUsesRealmCoresNotation() throws
  {
    #expect(Decimal128("123e4").description == "1.23E6")
    #expect(try Decimal128(string: "-0.001").stringValue == "-1E-3")
    #expect(Decimal128("0.21").description == "2.1E-1")
    #expect(Decimal128("1E6000").description == "1E6000")
    #expect(Decimal128("100").description == "100")
  }

  /// An IEEE 754-2008 decimal128: 34 significant digits, exponents up to 6144.
  @Test(
    .disabled(
      "Known gap (README, What does not work yet): Shoal's Decimal128 holds Foundation Decimal's values in one canonical form, not IEEE decimal128 cohorts"
    )) func decimal128HasThirtyFourDigitsAndAWideExponent() throws
  {
    #expect(!Decimal128("1E6000").isNaN)
    #expect(!Decimal128("-1E-6000").isNaN)
    #expect(Decimal128("1E6000") > Decimal128("9E5999"))
    // The 35th digit and beyond are rounded away (half to even).
    #expect(
      Decimal128("1234567890123456789012345678901234567") == Decimal128("1234567890123456789012345678901235000"))
    #expect(Decimal128("12345678901234567890123456789012345") == Decimal128("12345678901234567890123456789012340"))
  }

  @Test func decimal128ArithmeticAndComparisons() {
    let seven: Decimal128 = 7
    let threeAndAHalf: Decimal128 = 3.5
    let d3: Decimal128 = "0.21"
    let d4: Decimal128 = "0.7"
    #expect(seven / threeAndAHalf == 2)
    #expect(d3 / d4 == 0.3)
    #expect(seven * threeAndAHalf == 24.5)
    #expect(d3 * d4 == 0.147)
    #expect(Decimal128(exactly: 0b0000_0101) == 5)
    #expect(Decimal128(exactly: 2)! - Decimal128(exactly: 1)! == 1)
    let pi: Decimal128 = 3.14159
    #expect(pi == Decimal128(number: 3.14159))
    #expect((3.14160 as Decimal128) > Decimal128(number: 3.14159))
    #expect((123 as Decimal128) == "123")
    #expect((122 as Decimal128) < "123")
    #expect(!((2 as Decimal128) <= 1))
    #expect((-123.321 as Decimal128).magnitude == 123.321)
    let negated: Decimal128 = 456.321
    negated.negate()
    #expect(negated == -456.321)
    #expect((-123.321 as Decimal128).advanced(by: -123.321) == -246.642)
    #expect((10.0 as Decimal128).distance(to: 5.0) == -5.0)
  }

  @Test func decimal128NaNMinMaxAndUnparsableStrings() throws {
    let nan = Decimal128(value: NSNull())
    #expect(nan.isNaN)
    #expect(nan.isSignaling && nan.isSignalingNaN)
    #expect(!(1 as Decimal128).isNaN)
    #expect(Decimal128.max > Decimal128.min)
    #expect(Decimal128.min < Decimal128.max)
    // RLMDecimal128's initWithString never reports an error: an unparsable string is NaN.
    #expect(try Decimal128(string: "not a number").isNaN)
  }

  @Test func decimal128RoundTripsAndSortsInARealm() throws {
    let realm = try modelRuleRealm()
    let values: [Decimal128] = ["123456789012345678901234567890.1234", "-1.5", "0", "1E-20"]
    try realm.write {
      for value in values { realm.add(ValueHolder(value: ["decimal": value])) }
    }
    let stored = realm.objects(ValueHolder.self).sorted(byKeyPath: "decimal").map(\.decimal)
    #expect(stored == [values[1], values[2], values[3], values[0]])
    #expect(stored.last == Decimal128("123456789012345678901234567890.1234"))
    #expect(realm.objects(ValueHolder.self).filter("decimal > %@", Decimal128("1E20")).count == 1)
  }

  // MARK: UUID, Date, Data

  @Test func uuidIsStoredAndQueried() throws {
    let realm = try modelRuleRealm()
    let ids = [UUID(), UUID(), UUID()]
    try realm.write {
      for id in ids { realm.add(ValueHolder(value: ["uuid": id])) }
    }
    #expect(Set(realm.objects(ValueHolder.self).map(\.uuid)) == Set(ids))
    #expect(realm.objects(ValueHolder.self).filter("uuid == %@", ids[1]).count == 1)
    #expect(realm.objects(ValueHolder.self).where { $0.uuid == ids[2] }.first?.uuid == ids[2])
  }

  /// Dates are stored as seconds and nanoseconds: sub-second parts survive (to the microsecond at
  /// least), before 1970 too.
  @Test func datesKeepSubSecondPrecision() throws {
    let realm = try modelRuleRealm()
    let dates = [
      Date(timeIntervalSince1970: 1_700_000_000.123456), Date(timeIntervalSince1970: -1.5),
      Date(timeIntervalSince1970: 1_700_000_000.124), Date(timeIntervalSinceReferenceDate: 0.000_001),
    ]
    try realm.write {
      for date in dates { realm.add(ValueHolder(value: ["date": date])) }
    }
    let stored = Array(realm.objects(ValueHolder.self).map(\.date))
    #expect(stored.count == dates.count)
    for (read, written) in zip(stored, dates) {
      #expect(abs(read.timeIntervalSince(written)) < 1e-6, "\(written.timeIntervalSince1970)")
    }
    let sorted = realm.objects(ValueHolder.self).sorted(byKeyPath: "date").map(\.date.timeIntervalSince1970)
    #expect(sorted.map { ($0 * 1000).rounded() } == [-1500, 978_307_200_000, 1_700_000_000_123, 1_700_000_000_124])
    #expect(realm.objects(ValueHolder.self).filter("date > %@", dates[0]).count == 1)
  }

  @Test func dataOfSeveralMegabytesRoundTrips() throws {
    let realm = try modelRuleRealm()
    var generator = SystemRandomNumberGenerator()
    let big = Data((0..<4_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
    let object = ValueHolder(value: ["data": big])
    try realm.write {
      realm.add(object)
      realm.add(ValueHolder(value: ["data": Data()]))
    }
    let read = realm.objects(ValueHolder.self)
    #expect(read[0].data.count == 4_000_000)
    #expect(read[0].data == big)
    #expect(read[1].data.isEmpty)
  }

  // MARK: AnyRealmValue

  @Test func anyRealmValueStoresEveryCase() throws {
    let realm = try modelRuleRealm()
    let date = Date(timeIntervalSince1970: 1_600_000_000)
    let objectId = ObjectId.generate()
    let uuid = UUID()
    let dog = Hound(value: ["name": "Rex", "age": 3])
    let values: [AnyRealmValue] = [
      .none, .int(42), .bool(true), .float(1.5), .double(2.25), .string("hi"), .data(Data([1, 2, 3])), .date(date),
      .objectId(objectId), .decimal128("12.50"), .uuid(uuid), .object(dog),
    ]
    try realm.write {
      for value in values { realm.add(ValueHolder(value: ["any": value])) }
    }
    let read = realm.objects(ValueHolder.self).map(\.any)
    #expect(read.count == values.count)
    #expect(read[0] == .none)
    #expect(read[1] == .int(42))
    #expect(read[2] == .bool(true))
    #expect(read[3] == .float(1.5))
    #expect(read[4] == .double(2.25))
    #expect(read[5] == .string("hi"))
    #expect(read[6] == .data(Data([1, 2, 3])))
    #expect(read[7] == .date(date))
    #expect(read[8] == .objectId(objectId))
    #expect(read[9] == .decimal128("12.50"))
    #expect(read[10] == .uuid(uuid))
    // The object was added with its parent; the value reads back as a managed object.
    let linked = try #require(read[11].object(Hound.self))
    #expect(linked.realm != nil)
    #expect(linked.isSameObject(as: dog))
    #expect(linked.name == "Rex")
    #expect(read[11].dynamicObject?["age"] as? Int == 3)
    #expect(realm.objects(Hound.self).count == 1)
  }

  @Test func anyRealmValueAccessorsAndEquality() {
    let int = AnyRealmValue.int(7)
    #expect(int.intValue == 7)
    #expect(int.doubleValue == nil && int.floatValue == nil && int.boolValue == nil && int.stringValue == nil)
    #expect(AnyRealmValue.double(7).doubleValue == 7 && AnyRealmValue.double(7).intValue == nil)
    #expect(AnyRealmValue.float(1.5).floatValue == 1.5)
    #expect(AnyRealmValue.bool(false).boolValue == false)
    #expect(AnyRealmValue.string("s").stringValue == "s")
    #expect(AnyRealmValue.data(Data([9])).dataValue == Data([9]))
    #expect(AnyRealmValue.date(Date(timeIntervalSince1970: 5)).dateValue == Date(timeIntervalSince1970: 5))
    #expect(AnyRealmValue.objectId(ObjectId()).objectIdValue == ObjectId())
    #expect(AnyRealmValue.decimal128(5).decimal128Value == 5)
    let uuid = UUID()
    #expect(AnyRealmValue.uuid(uuid).uuidValue == uuid)
    #expect(AnyRealmValue.none.intValue == nil && AnyRealmValue.none.stringValue == nil)
    #expect(AnyRealmValue.string("x").object(Hound.self) == nil)
    // Values of different cases are never equal, even when they hold the same number.
    #expect(AnyRealmValue.int(1) != .double(1))
    #expect(AnyRealmValue.float(1) != .double(1))
    #expect(AnyRealmValue.int(1) != .bool(true))
    #expect(AnyRealmValue.string("1") != .int(1))
    #expect(AnyRealmValue.none == .none)
    #expect(AnyRealmValue.int(1) == .int(1))
    #expect(Set<AnyRealmValue>([.int(1), .int(1), .string("a"), .none]).count == 3)
  }

  // MARK: PersistableEnum

  @Test func persistableEnumsStoreTheirRawValues() throws {
    let realm = try modelRuleRealm()
    let object = ValueHolder()
    object.color = .green
    object.level = .high
    object.colors.append(objectsIn: [.blue, .red, .blue])
    object.levels.append(objectsIn: [.low, nil, .mid])
    try realm.write {
      realm.add(object)
      realm.add(ValueHolder())
    }
    let all = realm.objects(ValueHolder.self)
    #expect(all[0].color == .green && all[0].level == .high)
    #expect(all[1].color == .red && all[1].level == nil)
    #expect(Array(all[0].colors) == [.blue, .red, .blue])
    #expect(Array(all[0].levels) == [.low, nil, .mid])
    // Queries and the dynamic API see the raw values.
    #expect(all.filter("color == 'green'").count == 1)
    #expect(all.filter("level == 10").count == 1)
    #expect(all.filter("level == nil").count == 1)
    #expect(all.where { $0.color == .red }.count == 1)
    #expect(all.filter("ANY colors == 'blue'").count == 1)
    let dynamic = realm.dynamicObjects("ValueHolder")
    #expect(dynamic[0]["color"] as? String == "green")
    #expect(dynamic[0]["level"] as? Int == 10)
    #expect(dynamic[1]["level"] == nil)
    try realm.write { all[1].level = .mid }
    #expect(all[1].level == .mid)
    #expect(all.sorted(byKeyPath: "level").map(\.level) == [.mid, .high])
  }

  // MARK: Floating point specials

  /// realm-core orders NaN before every other number (and null before NaN).
  @Test func nanAndInfinitiesAreStoredAndSorted() throws {
    let realm = try modelRuleRealm()
    let doubles: [Double] = [1.5, -.infinity, .nan, .infinity, 0, -2]
    try realm.write {
      for (index, value) in doubles.enumerated() {
        realm.add(
          Sortable(value: [
            "label": "\(index)", "double": value, "float": Float(value), "optDouble": value,
          ]))
      }
      realm.add(Sortable(value: ["label": "nil"]))
    }
    let all = realm.objects(Sortable.self)
    #expect(all[2].double.isNaN && all[2].float.isNaN)
    #expect(all[1].double == -.infinity && all[3].float == .infinity)
    let ascending = all.filter("label != 'nil'").sorted(byKeyPath: "double").map(\.label)
    #expect(ascending == ["2", "1", "5", "4", "0", "3"])
    let descending = all.filter("label != 'nil'").sorted(byKeyPath: "double", ascending: false).map(\.label)
    #expect(descending == ["3", "0", "4", "5", "1", "2"])
    #expect(all.filter("label != 'nil'").sorted(byKeyPath: "float").map(\.label) == ["2", "1", "5", "4", "0", "3"])
    #expect(all.sorted(byKeyPath: "optDouble").map(\.label) == ["nil", "2", "1", "5", "4", "0", "3"])
    #expect(all.filter("double == %@", Double.infinity).map(\.label) == ["3"])
  }

  // MARK: Sorting

  @Test func nilSortsFirstAscendingAndLastDescending() throws {
    let realm = try modelRuleRealm()
    try realm.write {
      realm.add(Sortable(value: ["label": "a", "optInt": 3, "optString": "c"]))
      realm.add(Sortable(value: ["label": "b"]))
      realm.add(Sortable(value: ["label": "c", "optInt": -1, "optString": ""]))
      realm.add(Sortable(value: ["label": "d", "optInt": 0, "optString": "a"]))
    }
    let all = realm.objects(Sortable.self)
    #expect(all.sorted(byKeyPath: "optInt").map(\.label) == ["b", "c", "d", "a"])
    #expect(all.sorted(byKeyPath: "optInt", ascending: false).map(\.label) == ["a", "d", "c", "b"])
    // nil before the empty string.
    #expect(all.sorted(byKeyPath: "optString").map(\.label) == ["b", "c", "d", "a"])
    #expect(all.sorted(by: \.optString, ascending: false).map(\.label) == ["a", "d", "c", "b"])
  }

  /// Since realm-core 14 (RealmSwift 10.49+), strings sort by Unicode code point: upper case
  /// before lower case ("ABZabz", no longer "aAbBzZ"), anything past ASCII after it.
  @Test func stringsSortByUnicodeCodePoint() throws {
    let realm = try modelRuleRealm()
    let labels = ["b", "B", "a", "A", "_", "1", "é", "Z", "z", "ab", "Ab", " "]
    try realm.write {
      for label in labels { realm.add(Sortable(value: ["label": label])) }
    }
    let sorted = realm.objects(Sortable.self).sorted(byKeyPath: "label").map(\.label)
    #expect(sorted == [" ", "1", "A", "Ab", "B", "Z", "_", "a", "ab", "b", "z", "é"])
    #expect(
      Array(sorted)
        == labels.sorted {
          Array($0.unicodeScalars.map(\.value)).lexicographicallyPrecedes($1.unicodeScalars.map(\.value))
        })
  }

  @Test func boolAndDateSort() throws {
    let realm = try modelRuleRealm()
    try realm.write {
      realm.add(Sortable(value: ["label": "t1", "flag": true, "date": Date(timeIntervalSince1970: 300)]))
      realm.add(Sortable(value: ["label": "f1", "flag": false, "date": Date(timeIntervalSince1970: -5)]))
      realm.add(Sortable(value: ["label": "t2", "flag": true, "date": Date(timeIntervalSince1970: 10)]))
      realm.add(Sortable(value: ["label": "f2", "flag": false, "date": Date(timeIntervalSince1970: 10.5)]))
    }
    let all = realm.objects(Sortable.self)
    #expect(all.sorted(byKeyPath: "flag").map(\.label) == ["f1", "f2", "t1", "t2"])
    #expect(all.sorted(byKeyPath: "flag", ascending: false).map(\.label) == ["t1", "t2", "f1", "f2"])
    #expect(all.sorted(byKeyPath: "date").map(\.label) == ["f1", "t2", "f2", "t1"])
    #expect(all.sorted(byKeyPath: "date", ascending: false).map(\.label) == ["t1", "f2", "t2", "f1"])
    let byFlagThenDate = all.sorted(by: [
      SortDescriptor(keyPath: "flag", ascending: false), SortDescriptor(keyPath: "date", ascending: true),
    ])
    #expect(byFlagThenDate.map(\.label) == ["t2", "t1", "f1", "f2"])
  }

  /// Sorting through a link: an object without the link sorts after the others when ascending
  /// and before them when descending (Realm Core's `Sorter`: "Sort null links at the end if
  /// ascending"; RealmSwift's `CustomColumnResultsTest.testCustomColumnResultsSort` relies on it).
  @Test func sortByAPropertyOfALinkedObject() throws {
    let realm = try modelRuleRealm()
    try realm.write {
      realm.add(Sortable(value: ["label": "old", "dog": ["name": "Max", "age": 9]]))
      realm.add(Sortable(value: ["label": "none"]))
      realm.add(Sortable(value: ["label": "young", "dog": ["name": "Bo", "age": 1]]))
      realm.add(Sortable(value: ["label": "mid", "dog": ["name": "Zed", "age": 4]]))
    }
    let all = realm.objects(Sortable.self)
    #expect(all.sorted(byKeyPath: "dog.age").map(\.label) == ["young", "mid", "old", "none"])
    #expect(all.sorted(byKeyPath: "dog.age", ascending: false).map(\.label) == ["none", "old", "mid", "young"])
    #expect(all.sorted(byKeyPath: "dog.name").map(\.label) == ["young", "old", "mid", "none"])
    // A write to the linked object reorders the live results.
    try realm.write { all.filter("label == 'young'").first?.dog?.age = 20 }
    #expect(all.sorted(byKeyPath: "dog.age").map(\.label) == ["mid", "old", "young", "none"])
  }

  // MARK: Model rules

  @Test func classNameAndLegacyClassMethodsWithPersistedProperties() throws {
    #expect(Hound.className() == "Hound")
    #expect(HoundOwner.className() == "HoundOwner")
    #expect(StreetAddress.className() == "StreetAddress")
    // The defaults of the legacy class methods, even when @Persisted declares a primary key.
    #expect(Object.primaryKey() == nil)
    #expect(HoundOwner.primaryKey() == nil)
    #expect(HoundOwner.indexedProperties().isEmpty)
    #expect(HoundOwner.ignoredProperties().isEmpty)
    let schema = try modelRuleRealm().schema
    #expect(schema["HoundOwner"]?.primaryKeyProperty?.name == "id")
    // A property without @Persisted is not part of the schema; ignoredProperties() and
    // indexedProperties() are not consulted for @Persisted properties.
    let rules = try #require(schema["LegacyRules"])
    #expect(rules.properties.map(\.name) == ["code", "name", "note"])
    #expect(rules["transient"] == nil)
    #expect(rules["name"]?.isIndexed == false)
    // primaryKey() is still read by RLMObjectSchema for every class.
    #expect(rules.primaryKeyProperty?.name == "code")
  }

  @Test func nonPersistedPropertiesAreNotStored() throws {
    let realm = try modelRuleRealm()
    let object = LegacyRules(value: ["code": "a", "name": "n", "note": "kept"])
    object.transient = "changed"
    #expect(object.transient == "changed")
    try realm.write { realm.add(object) }
    let read = try #require(realm.objects(LegacyRules.self).first)
    #expect(read.note == "kept")
    #expect(read.transient == "not stored")
  }

  @Test func objectsWithAPrimaryKeyAreEqualAcrossAccessors() throws {
    let realm = try modelRuleRealm()
    try realm.write {
      realm.add(HoundOwner(value: ["id": 1, "name": "Ann"]))
      realm.add(HoundOwner(value: ["id": 2, "name": "Bob"]))
    }
    let a = try #require(realm.object(ofType: HoundOwner.self, forPrimaryKey: 1))
    let b = try #require(realm.objects(HoundOwner.self).filter("name == 'Ann'").first)
    let other = try #require(realm.object(ofType: HoundOwner.self, forPrimaryKey: 2))
    #expect(a !== b)
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
    #expect(Set([a, b, other]).count == 2)
    #expect(a != other)
    #expect(a.isSameObject(as: b) && !a.isSameObject(as: other) && !a.isSameObject(as: nil))
    // Unmanaged objects are equal only to themselves, whatever their primary key.
    let first = HoundOwner(value: ["id": 3])
    let second = HoundOwner(value: ["id": 3])
    #expect(first == first && first != second)
    #expect(first.isSameObject(as: first) && !first.isSameObject(as: second))
  }

  /// RealmSwift's `isSameObject` needs the same Realm instance: an object and its copy in
  /// another thread's Realm (here a dispatch queue's) are neither the same object nor equal,
  /// while two accessors in one Realm are.
  @Test func anObjectIsNotTheSameAsItsCopyInAnotherThreadsRealm() throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    try realm.write { realm.add(HoundOwner(value: ["id": 1, "name": "Ann"])) }
    let here = try #require(realm.object(ofType: HoundOwner.self, forPrimaryKey: 1))
    let reference = ThreadSafeReference(to: here)
    let queue = DispatchQueue(label: "another Realm")
    let seen = Mutex<[Bool]>([])
    queue.sync {
      guard let other = try? Realm(configuration: config, queue: queue), let there = other.resolve(reference),
        let again = other.object(ofType: HoundOwner.self, forPrimaryKey: 1)
      else { return }
      // Only identities and keys are compared, never values, so no Realm is read off its thread.
      seen.withLock {
        $0 = [there.isSameObject(as: here), there == here, there.isSameObject(as: again), there == again]
      }
    }
    #expect(seen.withLock { $0 } == [false, false, true, true])
  }

  @Test func objectsWithoutAPrimaryKeyAreEqualOnlyToThemselvesUnlessFrozen() throws {
    let realm = try modelRuleRealm()
    try realm.write { realm.add(DogNote(value: ["text": "x"])) }
    let a = try #require(realm.objects(DogNote.self).first)
    let b = try #require(realm.objects(DogNote.self).first)
    #expect(a !== b)
    #expect(a != b)
    #expect(a.isSameObject(as: b))
    // Frozen objects cannot change, so their key is their identity.
    let frozen = realm.freeze()
    let c = try #require(frozen.objects(DogNote.self).first)
    let d = try #require(frozen.objects(DogNote.self).first)
    #expect(c == d)
    #expect(c.hashValue == d.hashValue)
  }

  /// RLMObjectBase's description: `Class {\n\tproperty = value;\n}`, values as their Objective-C
  /// descriptions (strings unquoted, nil as "(null)", Bool as 0/1), nested objects and lists
  /// indented, lists as `List<Class> <0x…> (\n\t[0] …\n)`.
  @Test func descriptionOfAnObjectWithANestedObjectAndAList() throws {
    let object = Described(value: [
      "name": "Ann", "count": 2, "flag": true, "dog": ["name": "Rex", "age": 3], "dogs": [["name": "Spot", "age": 1]],
    ])
    let expected =
      "Described {\n\tname = Ann;\n\tcount = 2;\n\tflag = 1;\n\tnickname = (null);\n"
      + "\tdog = Hound {\n\t\tname = Rex;\n\t\tage = 3;\n\t};\n"
      + "\tdogs = List<Hound> <ADDR> (\n\t\t[0] Hound {\n\t\t\tname = Spot;\n\t\t\tage = 1;\n\t\t}\n\t);\n}"
    #expect(withoutAddresses(object.description) == expected)
    let realm = try modelRuleRealm()
    try realm.write { realm.add(object) }
    #expect(withoutAddresses(object.description) == expected)
    #expect(object.dog?.description == "Hound {\n\tname = Rex;\n\tage = 3;\n}")
  }

  @Test func descriptionOfEmptyListsAndInvalidatedObjects() throws {
    let realm = try modelRuleRealm()
    let object = Described(value: ["name": "Bo"])
    try realm.write { realm.add(object) }
    #expect(
      withoutAddresses(object.description)
        == "Described {\n\tname = Bo;\n\tcount = 0;\n\tflag = 0;\n\tnickname = (null);\n\tdog = (null);\n"
        + "\tdogs = List<Hound> <ADDR> (\n\t\n\t);\n}")
    try realm.write { realm.delete(object) }
    #expect(object.description == "[invalid object]")
  }

  @Test func linkingAnEmbeddedObjectThatAlreadyHasAParentFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try modelRuleRealm()
      try realm.write {
        let first = realm.create(HoundOwner.self, value: ["id": 1, "address": ["street": "Main", "city": "Oslo"]])
        let second = realm.create(HoundOwner.self, value: ["id": 2])
        second.address = first.address
      }
    }
    #expect(stderrText(result).contains("Can't set link to existing managed embedded object"))
  }

  @Test func appendingAManagedEmbeddedObjectToAListFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try modelRuleRealm()
      try realm.write {
        let owner = realm.create(HoundOwner.self, value: ["id": 1, "addresses": [["street": "Main"]]])
        owner.addresses.append(owner.addresses[0])
      }
    }
    #expect(stderrText(result).contains("Cannot add an existing managed embedded object to a List."))
  }

  /// Assigning the embedded object a property already holds is allowed.
  @Test func assigningTheSameEmbeddedObjectAgainIsAllowed() async {
    await #expect(processExitsWith: .success) {
      let realm = try modelRuleRealm()
      let owner = HoundOwner(value: ["id": 1, "address": ["street": "Main", "city": "Oslo"]])
      try realm.write { realm.add(owner) }
      try realm.write { owner.address = owner.address }
      guard owner.address?.city == "Oslo" else { exit(3) }
    }
  }

  /// Assigning another embedded object (or nil) deletes the old one; deleting the parent
  /// deletes its embedded objects.
  @Test func replacingAnEmbeddedObjectDeletesTheOldOne() throws {
    let realm = try modelRuleRealm()
    let owner = HoundOwner(value: ["id": 1, "address": ["street": "Main", "city": "Oslo"]])
    try realm.write { realm.add(owner) }
    let first = try #require(owner.address)
    let replacement = StreetAddress(value: ["street": "Side", "city": "Bergen"])
    try realm.write { owner.address = replacement }
    #expect(first.isInvalidated)
    #expect(replacement.realm != nil)
    #expect(owner.address?.isSameObject(as: replacement) == true)
    #expect(owner.address?.city == "Bergen")
    try realm.write { owner.address = nil }
    #expect(replacement.isInvalidated)
    try realm.write { owner.addresses.append(StreetAddress(value: ["street": "A"])) }
    let inList = owner.addresses[0]
    #expect(inList.realm != nil)
    try realm.write { realm.delete(owner) }
    #expect(inList.isInvalidated)
  }

  @Test func deletingAnObjectNullsLinksAndRemovesItFromLists() throws {
    let realm = try modelRuleRealm()
    let rex = Hound(value: ["name": "Rex"])
    let spot = Hound(value: ["name": "Spot"])
    let owner = HoundOwner(value: ["id": 1, "dog": rex, "dogs": [rex, spot, rex]])
    let note = DogNote(value: ["text": "n", "dog": rex])
    try realm.write {
      realm.add(owner)
      realm.add(note)
    }
    // Linked twice from the same list: there twice among the linking objects.
    #expect(rex.owners.count == 2)
    #expect(owner.dogs.count == 3)
    try realm.write { realm.delete(rex) }
    #expect(rex.isInvalidated)
    #expect(owner.dog == nil)
    #expect(note.dog == nil)
    #expect(owner.dogs.map(\.name) == ["Spot"])
    #expect(realm.objects(Hound.self).map(\.name) == ["Spot"])
    #expect(spot.owners.map(\.id) == [1])
  }

  @Test func linkingObjectsOfAnUnmanagedObjectAreEmpty() throws {
    let dog = Hound(value: ["name": "Rex"])
    let owner = HoundOwner(value: ["id": 1, "dog": dog])
    owner.dogs.append(dog)
    #expect(dog.owners.isEmpty)
    #expect(dog.owners.count == 0)
    #expect(dog.owners.first == nil)
    #expect(dog.owners.realm == nil)
    let realm = try modelRuleRealm()
    try realm.write { realm.add(owner) }
    #expect(dog.owners.map(\.id) == [1])
  }

  // MARK: Collection change sets

  /// Deletions are indices in the old results, insertions in the new; an object whose sort key
  /// changes moves (a deletion and an insertion), not a modification.
  @Test func sortedResultsReportExactIndices() throws {
    let realm = try modelRuleRealm()
    try realm.write {
      for (name, age) in [("a", 10), ("b", 20), ("c", 30), ("d", 40)] {
        realm.add(Hound(value: ["name": name, "age": age]))
      }
    }
    let dogs = realm.objects(Hound.self).sorted(byKeyPath: "age")
    var seen: [PlainChange] = []
    let token = dogs.observe { seen.append(PlainChange($0)) }
    defer { token.invalidate() }
    #expect(seen == [.initial(4)])
    // 10 20 30 40 -> 10 20 25 30 40
    try realm.write { realm.add(Hound(value: ["name": "e", "age": 25])) }
    #expect(seen.last == .update(deletions: [], insertions: [2], modifications: []))
    // -> 20 25 30 40
    try realm.write { realm.delete(dogs[0]) }
    #expect(seen.last == .update(deletions: [0], insertions: [], modifications: []))
    // A write that keeps the order: a modification.
    try realm.write { dogs.filter("age == 30").first?.name = "c2" }
    #expect(seen.last == .update(deletions: [], insertions: [], modifications: [2]))
    // 20 -> 35 moves b from index 0 to 2: 25 30 35 40.
    try realm.write { dogs.filter("name == 'b'").first?.age = 35 }
    #expect(seen.last == .update(deletions: [0], insertions: [2], modifications: []))
    // Several changes in one write: delete 30 (old 1), add 5 and 45 (new 0 and 4).
    try realm.write {
      realm.delete(dogs.filter("age == 30"))
      realm.add(Hound(value: ["name": "f", "age": 5]))
      realm.add(Hound(value: ["name": "g", "age": 45]))
    }
    #expect(seen.last == .update(deletions: [1], insertions: [0, 4], modifications: []))
    #expect(dogs.map(\.age) == [5, 25, 35, 40, 45])
    #expect(seen.count == 6)
  }

  /// RealmSwift reports modifications at their indices in the previous version of the results.
  @Test func sortedResultsReportModificationsAtOldIndices() throws {
    let realm = try modelRuleRealm()
    try realm.write {
      for (name, age) in [("a", 10), ("b", 20), ("c", 30)] { realm.add(Hound(value: ["name": name, "age": age])) }
    }
    let dogs = realm.objects(Hound.self).sorted(byKeyPath: "age")
    var seen: [PlainChange] = []
    let token = dogs.observe { seen.append(PlainChange($0)) }
    defer { token.invalidate() }
    // 10 20 30 -> 5 10 20 30, c (old index 2, new index 3) modified.
    try realm.write {
      realm.add(Hound(value: ["name": "z", "age": 5]))
      dogs.filter("name == 'c'").first?.name = "c2"
    }
    #expect(seen.last == .update(deletions: [], insertions: [0], modifications: [2]))
    // 5 10 20 30 -> 5 20 30, c2 (old 3, new 2) modified.
    try realm.write {
      realm.delete(dogs.filter("age == 10"))
      dogs.filter("name == 'c2'").first?.name = "c3"
    }
    #expect(seen.last == .update(deletions: [1], insertions: [], modifications: [3]))
  }

  @Test func listReportsInsertionsDeletionsMovesAndModifications() throws {
    let realm = try modelRuleRealm()
    let owner = HoundOwner(value: ["id": 1, "dogs": [["a"], ["b"], ["c"], ["d"]]])
    try realm.write { realm.add(owner) }
    var seen: [PlainChange] = []
    let token = owner.dogs.observe { seen.append(PlainChange($0)) }
    defer { token.invalidate() }
    #expect(seen == [.initial(4)])
    // a b c d -> a b e c d
    try realm.write { owner.dogs.insert(Hound(value: ["e"]), at: 2) }
    #expect(seen.last == .update(deletions: [], insertions: [2], modifications: []))
    // -> b e c d
    try realm.write { owner.dogs.remove(at: 0) }
    #expect(seen.last == .update(deletions: [0], insertions: [], modifications: []))
    // -> e c b d: a move is a deletion at its old index and an insertion at its new one.
    try realm.write { owner.dogs.move(from: 0, to: 2) }
    #expect(owner.dogs.map(\.name) == ["e", "c", "b", "d"])
    #expect(seen.last == .update(deletions: [0], insertions: [2], modifications: []))
    // A write to an object in the list.
    try realm.write { owner.dogs[1].age = 7 }
    #expect(seen.last == .update(deletions: [], insertions: [], modifications: [1]))
    // Several in one write: remove the last, append two.
    try realm.write {
      owner.dogs.remove(at: 3)
      owner.dogs.append(objectsIn: [Hound(value: ["f"]), Hound(value: ["g"])])
    }
    #expect(seen.last == .update(deletions: [3], insertions: [3, 4], modifications: []))
    // Deleting an object in the list removes it from the list.
    try realm.write { realm.delete(owner.dogs[0]) }
    #expect(seen.last == .update(deletions: [0], insertions: [], modifications: []))
    #expect(owner.dogs.map(\.name) == ["c", "b", "f", "g"])
  }

  @Test func mapReportsKeysDeletedInsertedAndModified() throws {
    let realm = try modelRuleRealm()
    let owner = HoundOwner(value: ["id": 1])
    owner.scores["a"] = 1
    owner.scores["b"] = 2
    try realm.write { realm.add(owner) }
    var seen: [String] = []
    let token = owner.scores.observe { change in
      switch change {
      case .initial(let map): seen.append("initial \(map.count)")
      case .update(let map, let deletions, let insertions, let modifications):
        seen.append("\(map.count) -\(deletions.sorted()) +\(insertions.sorted()) ~\(modifications.sorted())")
      case .error: seen.append("error")
      }
    }
    defer { token.invalidate() }
    try realm.write { owner.scores["c"] = 3 }
    try realm.write { owner.scores["a"] = 10 }
    try realm.write { owner.scores.removeObject(for: "b") }
    try realm.write {
      owner.scores["d"] = 4
      owner.scores["e"] = 5
      owner.scores["c"] = nil
      owner.scores["a"] = 11
    }
    #expect(
      seen == [
        "initial 2", "3 -[] +[\"c\"] ~[]", "3 -[] +[] ~[\"a\"]", "2 -[\"b\"] +[] ~[]",
        "3 -[\"c\"] +[\"d\", \"e\"] ~[\"a\"]",
      ])
  }

  // MARK: Object change notifications

  /// Observed on a queue, a write from another thread gives old and new values.
  @Test func objectChangesCarryOldAndNewValuesOfEachPropertyType() throws {
    let realm = try modelRuleRealm()
    let profile = Profile(value: ["name": "Ann", "age": 1, "born": Date(timeIntervalSince1970: 100)])
    try realm.write { realm.add(profile) }
    let inbox = TextInbox()
    let queue = DispatchQueue(label: "value-conformance-object")
    let token = profile.observe(on: queue) { change in
      switch change {
      case .change(_, let properties):
        inbox.put(
          properties.map { "\($0.name):\(propertyValueText($0.oldValue))->\(propertyValueText($0.newValue))" }.joined(
            separator: ","))
      case .deleted: inbox.put("deleted")
      case .error(let error): inbox.put("error \(error)")
      }
    }
    queue.sync {}
    try realm.write {
      profile.name = "Bea"
      profile.age = 2
    }
    #expect(inbox.next() == "name:Ann->Bea,age:1->2")
    try realm.write { profile.nickname = "B" }
    #expect(inbox.next() == "nickname:nil->B")
    try realm.write { profile.nickname = nil }
    #expect(inbox.next() == "nickname:B->nil")
    try realm.write { profile.born = Date(timeIntervalSince1970: 200) }
    #expect(inbox.next() == "born:@100->@200")
    try realm.write { profile.active = true }
    let active = inbox.next()
    #expect(active == "active:false->true" || active == "active:0->1")
    try realm.write { profile.pet = Hound(value: ["name": "Rex"]) }
    #expect(inbox.next() == "pet:nil->dog(Rex)")
    // List properties carry neither value.
    try realm.write { profile.pets.append(Hound(value: ["name": "Spot"])) }
    #expect(inbox.next() == "pets:nil->nil")
    try realm.write { realm.delete(profile) }
    #expect(inbox.next() == "deleted")
    token.invalidate()
  }

  /// Delivered on the writing thread, a change has no old values (RealmSwift's documented rule).
  @Test func objectChangesWrittenOnTheObservingThreadHaveNoOldValues() throws {
    let realm = try modelRuleRealm()
    let profile = Profile(value: ["name": "Ann", "age": 1])
    try realm.write { realm.add(profile) }
    var seen: [String] = []
    let token = profile.observe { change in
      switch change {
      case .change(let object, let properties):
        seen.append(
          "\(object.name) "
            + properties.map { "\($0.name):\(propertyValueText($0.oldValue))->\(propertyValueText($0.newValue))" }
            .joined())
      case .deleted: seen.append("deleted")
      case .error: seen.append("error")
      }
    }
    defer { token.invalidate() }
    try realm.write { profile.name = "Bea" }
    try realm.write { realm.delete(profile) }
    #expect(seen == ["Bea name:nil->Bea", "deleted"])
  }

  @Test func keyPathFilteredObservationIgnoresOtherProperties() throws {
    let realm = try modelRuleRealm()
    let profile = Profile(value: ["name": "Ann", "age": 1, "pet": ["name": "Rex"]])
    try realm.write { realm.add(profile) }
    var byName: [[String]] = []
    var byAge: [[String]] = []
    var byPetName: [[String]] = []
    var all: [[String]] = []
    let tokens = [
      profile.observe(keyPaths: ["name"]) { if case .change(_, let p) = $0 { byName.append(p.map(\.name)) } },
      profile.observe(keyPaths: [\Profile.age]) { if case .change(_, let p) = $0 { byAge.append(p.map(\.name)) } },
      profile.observe(keyPaths: ["pet.name"]) { if case .change(_, let p) = $0 { byPetName.append(p.map(\.name)) } },
      profile.observe { if case .change(_, let p) = $0 { all.append(p.map(\.name)) } },
    ]
    defer { tokens.forEach { $0.invalidate() } }
    try realm.write { profile.age = 2 }
    try realm.write { profile.nickname = "x" }
    try realm.write { profile.name = "Bea" }
    try realm.write { profile.pet?.age = 5 }
    try realm.write { profile.pet?.name = "Max" }
    #expect(byName == [["name"]])
    #expect(byAge == [["age"]])
    #expect(byPetName == [["pet"]])
    #expect(all == [["age"], ["nickname"], ["name"], ["pet"], ["pet"]])
  }

  @Test func resultsObservedWithKeyPathsIgnoreOtherProperties() throws {
    let realm = try modelRuleRealm()
    try realm.write {
      realm.add(Hound(value: ["name": "a", "age": 1]))
      realm.add(Hound(value: ["name": "b", "age": 2]))
    }
    let dogs = realm.objects(Hound.self).sorted(byKeyPath: "name")
    var byAge: [PlainChange] = []
    let token = dogs.observe(keyPaths: [\Hound.age]) { byAge.append(PlainChange($0)) }
    defer { token.invalidate() }
    try realm.write { dogs[1].name = "c" }
    try realm.write { dogs[1].age = 9 }
    // Insertions and deletions are always reported.
    try realm.write { realm.add(Hound(value: ["name": "0"])) }
    #expect(
      byAge == [
        .initial(2), .update(deletions: [], insertions: [], modifications: [1]),
        .update(deletions: [], insertions: [0], modifications: []),
      ])
  }
}
