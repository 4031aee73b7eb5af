import Foundation
import ShoalStorage
import Testing

@testable import Shoal

/// Objects with an index on every property a range can use, and their twins without one: a
/// query must find the same objects in both.
final class RangeIndexedReading: Object {
  @Persisted(primaryKey: true) var id: Int
  @Persisted(indexed: true) var value: Int
  @Persisted(indexed: true) var maybe: Int?
  @Persisted(indexed: true) var label: String
  @Persisted(indexed: true) var at: Date
  @Persisted(indexed: true) var oid: ObjectId
  @Persisted(indexed: true) var tag: UUID
  @Persisted(indexed: true) var flag: Bool
  @Persisted(indexed: true) var when: Date?
  @Persisted var weight: Double
}

final class RangePlainReading: Object {
  @Persisted(primaryKey: true) var id: Int
  @Persisted var value: Int
  @Persisted var maybe: Int?
  @Persisted var label: String
  @Persisted var at: Date
  @Persisted var oid: ObjectId
  @Persisted var tag: UUID
  @Persisted var flag: Bool
  @Persisted var when: Date?
  @Persisted var weight: Double
}

/// Secondary indexes whose keys follow the query order of values (`OrderedIndexKey`): ranges,
/// `BETWEEN` and `BEGINSWITH` read the index, and find what a scan finds.
@Suite("Ordered indexes") struct OrderedIndexTests {
  private static func configuration(_ base: Realm.Configuration) -> Realm.Configuration {
    var configuration = base
    configuration.objectTypes = [RangeIndexedReading.self, RangePlainReading.self]
    return configuration
  }

  /// Whether `key` lies in `range`.
  private static func contains(_ range: KeyRange, _ key: [UInt8]) -> Bool {
    if let lower = range.lower {
      if key.lexicographicallyPrecedes(lower) || (!range.lowerInclusive && key == lower) { return false }
    }
    if let upper = range.upper {
      if upper.lexicographicallyPrecedes(key) || (!range.upperInclusive && key == upper) { return false }
    }
    return true
  }

  /// Strings with shared starts, NUL bytes, non-ASCII text and values longer than an index key
  /// holds (`OrderedIndexKey.longValuePrefix`).
  private static func label(_ rng: inout SystemRandomNumberGenerator) -> String {
    let long = String(repeating: "x", count: OrderedIndexKey.longValuePrefix)
    let parts = [
      "", "a", "ab", "abc", "b", "ba", "\u{0}", "a\u{0}b", "é", "e\u{301}", "zz", long, long + "a", long + "b",
    ]
    return (0..<Int.random(in: 1...2, using: &rng)).map { _ in parts.randomElement(using: &rng) ?? "" }.joined()
  }

  private static func fill(_ realm: Realm, count: Int) throws {
    var rng = SystemRandomNumberGenerator()
    let base = Date(timeIntervalSinceReferenceDate: 700_000_000)
    let oids = (0..<20).map { _ in ObjectId.generate() }
    let tags = (0..<15).map { _ in UUID() }
    try realm.write {
      for id in 0..<count {
        let values: [String: Any] = [
          "id": id, "value": Int.random(in: -50...50, using: &rng) * (id % 7 == 0 ? 1 << 54 : 1),
          "maybe": Bool.random(using: &rng) ? Int.random(in: -5...5, using: &rng) as Any : NSNull(),
          "label": label(&rng), "at": base.addingTimeInterval(Double(Int.random(in: -100...100, using: &rng)) / 4),
          "oid": oids.randomElement(using: &rng) ?? ObjectId.generate(), "weight": Double(id % 13) - 6.5,
          "tag": tags.randomElement(using: &rng) ?? UUID(), "flag": Bool.random(using: &rng),
          "when": Bool.random(using: &rng) ? base.addingTimeInterval(Double(id % 37)) as Any : NSNull(),
        ]
        realm.create(RangeIndexedReading.self, value: values)
        realm.create(RangePlainReading.self, value: values)
      }
    }
  }

  /// The ids an indexed and a plain query find, for `predicate` with `arguments`.
  private static func both(_ realm: Realm, _ predicate: String, _ arguments: [Any]) -> (Set<Int>, Set<Int>) {
    let indexed = realm.objects(RangeIndexedReading.self).filter(predicate, arguments)
    let plain = realm.objects(RangePlainReading.self).filter(predicate, arguments)
    return (Set(indexed.map(\.id)), Set(plain.map(\.id)))
  }

  @Test func rangesFindWhatAScanFinds() throws {
    let realm = try Realm(configuration: Self.configuration(memoryConfiguration()))
    try Self.fill(realm, count: 600)
    var rng = SystemRandomNumberGenerator()
    let base = Date(timeIntervalSinceReferenceDate: 700_000_000)
    let oids = Array(Set(realm.objects(RangePlainReading.self).map(\.oid)))
    for _ in 0..<60 {
      let n = Int.random(in: -60...60, using: &rng)
      let m = n + Int.random(in: 0...30, using: &rng)
      let d = base.addingTimeInterval(Double(Int.random(in: -30...30, using: &rng)))
      var rngLabel = SystemRandomNumberGenerator()
      let text = Self.label(&rngLabel)
      let oid = oids.randomElement(using: &rng) ?? ObjectId.generate()
      let cases: [(String, [Any])] = [
        ("value > %@", [n]), ("value >= %@", [n]), ("value < %@", [n]), ("value <= %@", [n]),
        ("value BETWEEN {%@, %@}", [n, m]), ("value > %@ AND value <= %@", [n, m]),
        ("value >= %@ AND weight < 0", [n]), ("value > %@", [Double(n) + 0.5]),
        ("value < %@", [Double(1 << 60)]), ("value > %@", [-(1 << 58)]),
        ("maybe > %@", [n / 10]), ("maybe <= %@", [n / 10]),
        ("label > %@", [text]), ("label <= %@", [text]), ("label BEGINSWITH %@", [text]),
        ("label BEGINSWITH[c] %@", [text]),
        ("at > %@", [d]), ("at BETWEEN {%@, %@}", [d, d.addingTimeInterval(10)]), ("at < %@", [d]),
        ("oid > %@", [oid]), ("oid <= %@", [oid]),
      ]
      for (predicate, arguments) in cases {
        let (indexed, plain) = Self.both(realm, predicate, arguments)
        #expect(indexed == plain, "\(predicate) \(arguments)")
      }
    }
  }

  @Test func sortedRangesKeepTheirOrderAndUpdateLive() throws {
    let realm = try Realm(configuration: Self.configuration(memoryConfiguration()))
    try Self.fill(realm, count: 300)
    let indexed = realm.objects(RangeIndexedReading.self).filter("value BETWEEN {-10, 10}").sorted(byKeyPath: "label")
    let plain = realm.objects(RangePlainReading.self).filter("value BETWEEN {-10, 10}").sorted(byKeyPath: "label")
    #expect(indexed.map(\.id) == plain.map(\.id))
    try realm.write {
      for object in realm.objects(RangeIndexedReading.self).filter("value > 10") { object.value = 0 }
      for object in realm.objects(RangePlainReading.self).filter("value > 10") { object.value = 0 }
      realm.delete(realm.objects(RangeIndexedReading.self).filter("value < -40"))
      realm.delete(realm.objects(RangePlainReading.self).filter("value < -40"))
    }
    #expect(indexed.map(\.id) == plain.map(\.id))
    #expect(realm.objects(RangeIndexedReading.self).filter("value > 10").isEmpty)
  }

  /// A sort by the property the range reads keeps the index's order (ties by object key) and
  /// still sorts what the index keys only approximately (integers beyond 2^53); `distinct`
  /// still keeps the first object of each value in key order.
  @Test func sortingByTheRangesPropertyMatchesAScan() throws {
    let realm = try Realm(configuration: Self.configuration(memoryConfiguration()))
    try Self.fill(realm, count: 800)
    let predicates = ["value BETWEEN {-3, 3}", "value > 45", "value < -45", "value > 40 AND value < 48"]
    for predicate in predicates {
      for ascending in [true, false] {
        let indexed = realm.objects(RangeIndexedReading.self).filter(predicate)
        let plain = realm.objects(RangePlainReading.self).filter(predicate)
        #expect(
          indexed.sorted(byKeyPath: "value", ascending: ascending).map(\.id)
            == plain.sorted(byKeyPath: "value", ascending: ascending).map(\.id), "\(predicate) \(ascending)")
        #expect(
          indexed.sorted(by: [SortDescriptor(keyPath: "value"), SortDescriptor(keyPath: "label", ascending: false)])
            .map(\.id)
            == plain.sorted(by: [SortDescriptor(keyPath: "value"), SortDescriptor(keyPath: "label", ascending: false)])
            .map(\.id))
        #expect(
          indexed.distinct(by: ["value"]).sorted(byKeyPath: "value", ascending: ascending).map(\.id)
            == plain.distinct(by: ["value"]).sorted(byKeyPath: "value", ascending: ascending).map(\.id))
        #expect(indexed.map(\.id) == plain.map(\.id))
      }
    }
  }

  /// Inclusive bounds on a date decide the query from the index alone (no row is tested) and
  /// give the sort by that date without sorting: the same objects, in the same order (ties in
  /// key order), as a scan; with other filters, strict bounds or other sorts the rows are
  /// tested and sorted as before. Dates here repeat a lot, and an optional date has nils.
  @Test func inclusiveDateRangesAreDecidedByTheIndex() throws {
    let realm = try Realm(configuration: Self.configuration(memoryConfiguration()))
    try Self.fill(realm, count: 700)
    let base = Date(timeIntervalSinceReferenceDate: 700_000_000)
    for step in stride(from: -30, through: 30, by: 6) {
      let low = base.addingTimeInterval(Double(step))
      let high = low.addingTimeInterval(Double(abs(step) % 11))
      let cases: [(String, [Any])] = [
        ("at BETWEEN {%@, %@}", [low, high]), ("at >= %@", [low]), ("at <= %@", [high]),
        ("at >= %@ AND at <= %@", [low, high]), ("at > %@ AND at <= %@", [low, high]), ("at < %@", [high]),
        ("at BETWEEN {%@, %@} AND flag == true", [low, high]), ("at >= %@ AND weight < 0", [low]),
        ("when >= %@", [low]), ("when BETWEEN {%@, %@}", [low, high]), ("at BETWEEN {%@, %@}", [high, low]),
      ]
      for (predicate, arguments) in cases {
        let indexed = realm.objects(RangeIndexedReading.self).filter(predicate, arguments)
        let plain = realm.objects(RangePlainReading.self).filter(predicate, arguments)
        #expect(indexed.map(\.id) == plain.map(\.id), "\(predicate) \(arguments)")
        for property in ["at", "when"] {
          for ascending in [true, false] {
            #expect(
              indexed.sorted(byKeyPath: property, ascending: ascending).map(\.id)
                == plain.sorted(byKeyPath: property, ascending: ascending).map(\.id),
              "\(predicate) sorted by \(property) \(ascending)")
          }
        }
        #expect(
          indexed.filter("value > 0").sorted(byKeyPath: "at").map(\.id)
            == plain.filter("value > 0").sorted(byKeyPath: "at").map(\.id), "\(predicate) and value > 0")
        #expect(
          indexed.sorted(by: [SortDescriptor(keyPath: "at"), SortDescriptor(keyPath: "label")]).map(\.id)
            == plain.sorted(by: [SortDescriptor(keyPath: "at"), SortDescriptor(keyPath: "label")]).map(\.id))
        // Read twice: the second time the rows come from the row cache.
        #expect(indexed.sorted(byKeyPath: "at").map(\.weight) == plain.sorted(byKeyPath: "at").map(\.weight))
      }
    }
  }

  /// A sort of the whole class by one indexed property reads the index instead of the rows
  /// (integers only while every one is within 2^53: `value` has larger ones, `maybe` not) and
  /// gives the order a scan and sort give, ties included, before and after writes.
  @Test func sortingAWholeClassByAnIndexedPropertyMatchesAScan() throws {
    let realm = try Realm(configuration: Self.configuration(memoryConfiguration()))
    try Self.fill(realm, count: 500)
    func check() {
      for property in ["value", "maybe", "at", "oid", "tag", "flag", "when", "label"] {
        for ascending in [true, false] {
          #expect(
            realm.objects(RangeIndexedReading.self).sorted(byKeyPath: property, ascending: ascending).map(\.id)
              == realm.objects(RangePlainReading.self).sorted(byKeyPath: property, ascending: ascending).map(\.id),
            "\(property) \(ascending)")
        }
      }
    }
    check()
    try realm.write {
      for object in realm.objects(RangeIndexedReading.self).filter("id < 100") {
        object.when = nil
        object.flag.toggle()
      }
      for object in realm.objects(RangePlainReading.self).filter("id < 100") {
        object.when = nil
        object.flag.toggle()
      }
      realm.delete(realm.objects(RangeIndexedReading.self).filter("id >= 450"))
      realm.delete(realm.objects(RangePlainReading.self).filter("id >= 450"))
    }
    check()
  }

  /// Which queries the executor answers from a range of the index.
  @Test func theQueriesThatReadARangeOfTheIndex() throws {
    let realm = try Realm(configuration: Self.configuration(memoryConfiguration()))
    func range(_ predicate: String, _ arguments: [Any] = [], on className: String = "RangeIndexedReading")
      throws -> CompiledQuery.IndexRange?
    {
      try CompiledQuery(
        className: className, predicate: predicate, arguments: arguments, context: realm.core.queryContext
      ).indexRange
    }
    #expect(try range("value > 5")?.lower == .int(5))
    #expect(try range("value < 5")?.upper == .int(5))
    let narrowed = try range("value > 5 AND value <= 9 AND value >= 7")
    #expect(narrowed?.lower == .int(7) && narrowed?.upper == .int(9))
    #expect(try range("value BETWEEN {1, 3}")?.upper == .int(3))
    #expect(try range("label BEGINSWITH 'ab'")?.prefix == "ab")
    #expect(try range("label BEGINSWITH[c] 'ab'") == nil)
    #expect(try range("weight > 1") == nil)  // not indexed
    #expect(try range("value > 1", on: "RangePlainReading") == nil)
    #expect(try range("value != 1") == nil)
    #expect(try range("value > 1 OR value < -1") == nil)
    // Equality keeps using the index as before.
    #expect(try range("value == 1") == nil)
    // Inclusive bounds on a date are decided by the index alone; anything else is tested.
    let when = Date(timeIntervalSinceReferenceDate: 700_000_000)
    for exact in ["at BETWEEN {%@, %@}", "at >= %@ AND at <= %@"] {
      #expect(try range(exact, [when, when])?.exact == true, "\(exact)")
    }
    #expect(try range("at >= %@", [when])?.exact == true)
    #expect(try range("at <= %@", [when])?.exact == true)
    #expect(try range("at > %@", [when])?.exact == false)
    #expect(try range("at >= %@ AND at < %@", [when, when])?.exact == false)
    #expect(try range("at >= %@ AND weight < 0", [when])?.exact == false)
    #expect(try range("at >= %@ AND when >= %@", [when, when])?.exact == false)
    #expect(try range("value BETWEEN {1, 2}")?.exact == false)
  }

  /// A file whose secondary indexes were written unordered (before `indexFormat`): read
  /// without them when opened read-only; rebuilt ordered when opened for writing.
  @Test func indexesOfAnEarlierFormatAreRebuilt() throws {
    let configuration = Self.configuration(fileConfiguration())
    do {
      let realm = try Realm(configuration: configuration)
      try Self.fill(realm, count: 200)
    }
    let path = try #require(configuration.fileURL).path
    let expected: Set<Int>
    do {
      let realm = try Realm(configuration: configuration)
      expected = Set(realm.objects(RangePlainReading.self).filter("value > 3").map(\.id))
    }
    // Make it look like a file of the previous format: unordered index keyspaces, no format.
    do {
      let store = try Store.open(path: path)
      try store.write { txn in
        for property in ["value", "maybe", "label", "at", "oid"] {
          try txn.dropKeyspace("x/RangeIndexedReading/" + property)
          try txn.createKeyspace("i/RangeIndexedReading/" + property, tracksChanges: false)
          try txn.put([], forKey: [0xAB], in: "i/RangeIndexedReading/" + property)
        }
        _ = try txn.delete(RealmSchema.indexFormatKey, in: RealmSchema.metaKeyspace)
      }
      store.close()
    }
    var readOnly = configuration
    readOnly.readOnly = true
    do {
      let realm = try Realm(configuration: readOnly)
      #expect(!realm.core.schema.hasOrderedIndexes)
      #expect(Set(realm.objects(RangeIndexedReading.self).filter("value > 3").map(\.id)) == expected)
      #expect(
        realm.objects(RangeIndexedReading.self).filter("value == 3").count
          == realm.objects(RangePlainReading.self).filter("value == 3").count)
    }
    do {
      let realm = try Realm(configuration: configuration)
      #expect(realm.core.schema.hasOrderedIndexes)
      #expect(Set(realm.objects(RangeIndexedReading.self).filter("value > 3").map(\.id)) == expected)
    }
    let store = try Store.open(path: path, options: StoreOptions(readOnly: true))
    defer { store.close() }
    let snapshot = try store.beginRead()
    defer { snapshot.close() }
    #expect(try !snapshot.hasKeyspace("i/RangeIndexedReading/value"))
    #expect(try snapshot.count(in: "x/RangeIndexedReading/value") == 200)
    #expect(try snapshot.get(RealmSchema.indexFormatKey, in: RealmSchema.metaKeyspace) == RealmSchema.indexFormat)
  }

  /// The keys' order follows the query order within each kind of value.
  @Test func keysAreOrderedAsQueriesCompare() {
    let long = String(repeating: "a", count: OrderedIndexKey.longValuePrefix)
    let values: [[RowValue]] = [
      [
        .double(-.infinity), .int(-(1 << 60)), .int(-3), .double(-2.5), .float(-0.0), .int(0), .double(1e-300),
        .float(1.5), .int(2), .double(Double(1 << 53) + 2), .int(1 << 62), .double(.infinity),
      ],
      [
        .string(""), .string("\u{0}"), .string("\u{0}\u{0}"), .string("\u{1}"), .string("a"), .string("a\u{0}"),
        .string(long), .string(long + "a"), .string(long + "b"), .string("ab"), .string("b"), .string("é"),
      ],
      [
        .date(Date(timeIntervalSinceReferenceDate: -1e9)), .date(Date(timeIntervalSinceReferenceDate: 0)),
        .date(Date(timeIntervalSinceReferenceDate: 0.25)), .date(Date(timeIntervalSinceReferenceDate: 1e9)),
      ],
    ]
    for kind in values {
      for (i, a) in kind.enumerated() {
        for b in kind[i...] {
          let (ka, kb) = (OrderedIndexKey.key(a), OrderedIndexKey.key(b))
          #expect(ka.lexicographicallyPrecedes(kb) || ka == kb, "\(a) \(b)")
          // A value's key sits inside every range that contains it.
          if let range = OrderedIndexKey.range(from: a, to: b) {
            #expect(
              Self.contains(range, ka + [0, 0, 0, 0, 0, 0, 0, 1]) && Self.contains(range, kb + [0xFF]), "\(a) \(b)")
          } else {
            Issue.record("no range from \(a) to \(b)")
          }
        }
      }
    }
    #expect(OrderedIndexKey.key(.double(-0.0)) == OrderedIndexKey.key(.int(0)))
    #expect(OrderedIndexKey.key(.double(.nan)).lexicographicallyPrecedes(OrderedIndexKey.key(.double(-.infinity))))
    #expect(OrderedIndexKey.range(from: .int(1), to: .string("a")) == nil)
    #expect(Self.contains(OrderedIndexKey.range(beginningWith: "a"), OrderedIndexKey.key(.string("a\u{0}b")) + [1]))
    #expect(!Self.contains(OrderedIndexKey.range(beginningWith: "a"), OrderedIndexKey.key(.string("b")) + [1]))
  }
}
