import Foundation
import Shoal
import Testing

// The generic machinery RealmSwift code relies on: `PersistedType`, the aggregate constraints
// expressed through it, `_RealmSchemaDiscoverable`, and the type-safe query operations built on
// them (subqueries, ranges, maps, enums and mapped types).

final class GaugeSample: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted var value = 0
  @Persisted var label = ""
}

final class Gauge: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted(primaryKey: true) var id = 0
  @Persisted(indexed: true) var site: WebAddress?
  @Persisted(indexed: true) var level = Level.low
  @Persisted var mood = Mood.happy
  @Persisted var temperatures: List<Celsius>
  @Persisted var levels: List<Level>
  @Persisted var optionalLevels: List<Level?>
  @Persisted var levelMap: Map<String, Level>
  @Persisted var moodMap: Map<String, Mood>
  @Persisted var counts: List<Int>
  @Persisted var samples: List<GaugeSample>
  @Persisted var mixed: List<AnyRealmValue>
  @Persisted var mixedMap: Map<String, AnyRealmValue>
}

private func lowest<V: RealmCollectionValue>(_ list: List<V>) -> V? where V.PersistedType: MinMaxType { list.min() }
private func highest<V: RealmCollectionValue>(_ map: Map<String, V>) -> V? where V.PersistedType: MinMaxType {
  map.max()
}
private func total<V: RealmCollectionValue>(_ list: List<V>) -> V where V.PersistedType: AddableType { list.sum() }
private func mean<V: RealmCollectionValue>(_ list: List<V>) -> Double? where V.PersistedType: AddableType {
  list.average()
}
private func ordered<V: RealmCollectionValue>(_ list: List<V>) -> [V] where V.PersistedType: SortableType {
  Array(list.sorted(ascending: true))
}
private func storedType<V: _RealmSchemaDiscoverable>(_: V.Type) -> (PropertyType, Bool) { (V._rlmType, V._rlmOptional) }

@Suite struct GenericAPITests {
  private func realm() throws -> Realm {
    var configuration = memoryConfiguration()
    configuration.objectTypes = [Gauge.self, GaugeSample.self]
    return try Realm(configuration: configuration)
  }

  private func populated() throws -> Realm {
    let realm = try realm()
    try realm.write {
      for id in 0..<3 {
        let reading = Gauge()
        reading.id = id
        reading.level = [Level.low, .mid, .high][id]
        reading.mood = [Mood.happy, .grumpy, .sleepy][id]
        reading.site = WebAddress(persistedValue: "https://example.com/\(id)")
        reading.levels.append(objectsIn: [.mid, .low, .high].prefix(id + 1))
        reading.optionalLevels.append(objectsIn: [nil, .high, .mid])
        reading.levelMap["a"] = [Level.low, .mid, .high][id]
        reading.levelMap["b"] = .mid
        reading.moodMap["m"] = [Mood.happy, .grumpy, .sleepy][id]
        reading.temperatures.append(objectsIn: [Celsius(persistedValue: 10), Celsius(persistedValue: Double(20 + id))])
        reading.counts.append(objectsIn: Array(1...(id + 2)))
        for value in 0..<(id * 3) {
          reading.samples.append(GaugeSample(value: ["value": value, "label": "s\(value)"]))
        }
        realm.add(reading)
      }
    }
    return realm
  }

  @Test func aggregatesOfEnumsAndMappedTypesInGenericCode() throws {
    let realm = try populated()
    let reading = try #require(realm.object(ofType: Gauge.self, forPrimaryKey: 2))
    #expect(lowest(reading.levels) == .low)
    #expect(lowest(reading.counts) == 1)
    #expect(lowest(reading.temperatures) == Celsius(persistedValue: 10))
    #expect(highest(reading.levelMap) == .high)
    #expect(total(reading.temperatures) == Celsius(persistedValue: 32))
    #expect(total(reading.counts) == 10)
    #expect(mean(reading.counts) == 2.5)
    #expect(mean(reading.temperatures) == 16)
    #expect(ordered(reading.counts) == [1, 2, 3, 4])
    #expect(lowest(reading.optionalLevels) == .some(.mid))
    #expect(reading.levels.sorted().map(\.rawValue) == [1, 5, 10])
    // An empty collection: nil, and a zero sum.
    let empty = List<Celsius>()
    #expect(lowest(empty) == nil)
    #expect(total(empty) == Celsius(persistedValue: 0))
  }

  @Test func aggregatesOfPropertiesReadAsAnyPersistableType() throws {
    let realm = try populated()
    let readings = realm.objects(Gauge.self)
    #expect(readings.min(ofProperty: "level") as Level? == .low)
    #expect(readings.max(ofProperty: "level") as Level? == .high)
    #expect(readings.max(ofProperty: "level") as Int? == 10)
    #expect(readings.sum(ofProperty: "id") as NSNumber == 3)
    #expect(readings.max(of: \.level) == .high)
  }

  @Test func schemaDiscoveryOfTypes() {
    #expect(storedType(Int.self) == (.int, false))
    #expect(storedType(String?.self) == (.string, true))
    #expect(storedType(Level.self) == (.int, false))
    #expect(storedType(Mood?.self) == (.string, true))
    #expect(storedType(Celsius.self) == (.double, false))
    #expect(storedType(Gauge.self) == (.object, false))
    #expect(storedType(List<Date>.self).0 == .date)
  }

  @Test func enumsAndMappedTypesCanBeIndexedThroughTheirStoredType() throws {
    let realm = try populated()
    let schema = try #require(realm.schema["Gauge"])
    #expect(schema["site"]?.isIndexed == true)
    #expect(schema["level"]?.isIndexed == true)
    let site = WebAddress(persistedValue: "https://example.com/1")
    #expect(realm.objects(Gauge.self).where { $0.site == site }.map(\.id) == [1])
  }

  @Test func subqueryCounts() throws {
    let realm = try populated()
    let query = Query<Gauge>._constructForTesting()
    let (predicate, arguments) = ((query.samples.value >= 2).count > 1)._constructPredicate()
    #expect(predicate == "(SUBQUERY(samples, $col1, ($col1.value >= %@)).@count > %@)")
    #expect(arguments.count == 2)
    // Gauge 1 has samples 0...2 (one ≥ 2), reading 2 has 0...5 (four ≥ 2).
    #expect(realm.objects(Gauge.self).where { ($0.samples.value >= 2).count > 1 }.map(\.id) == [2])
    #expect(
      realm.objects(Gauge.self).where { ($0.samples.value >= 2 && $0.samples.label != "s5").count == 3 }.map(\.id)
        == [2])
  }

  @Test func collectionRangesAndComparisons() throws {
    let realm = try populated()
    let readings = realm.objects(Gauge.self)
    // counts: [1,2], [1,2,3], [1,2,3,4]
    #expect(readings.where { $0.counts.contains(1...3) }.map(\.id) == [0, 1])
    #expect(readings.where { $0.counts.contains(1..<3) }.map(\.id) == [0])
    #expect(readings.where { $0.counts != 1 }.count == 3)
    #expect(readings.where { $0.counts > 3 }.map(\.id) == [2])
    #expect(readings.where { $0.counts.max >= 4 }.map(\.id) == [2])
    #expect(readings.where { $0.samples.value.max > 4 }.map(\.id) == [2])
    #expect(readings.where { $0.samples.count == 3 }.map(\.id) == [1])
    let (predicate, _) = Query<Gauge>._constructForTesting().counts.contains(1...3)._constructPredicate()
    #expect(predicate == "((counts.@min >= %@) && (counts.@max <= %@))")
  }

  @Test func mapOperations() throws {
    let realm = try populated()
    let readings = realm.objects(Gauge.self)
    #expect(readings.where { $0.levelMap.contains(.high) }.map(\.id) == [2])
    #expect(readings.where { $0.levelMap.containsAny(in: [.low, .high]) }.map(\.id) == [0, 2])
    #expect(readings.where { $0.levelMap.keys == "b" }.count == 3)
    #expect(readings.where { $0.levelMap.values == .low }.map(\.id) == [0])
    #expect(readings.where { $0.levelMap["a"] == .mid }.map(\.id) == [1])
    #expect(readings.where { $0.levelMap.count == 2 }.count == 3)
    #expect(readings.where { $0.moodMap["m"].rawValue.like("s*") }.map(\.id) == [2])
    let (predicate, arguments) = Query<Gauge>._constructForTesting().levelMap["a"].rawValue
      .contains(1...5)._constructPredicate()
    #expect(predicate == "(levelMap[%@] BETWEEN {%@, %@})")
    #expect(arguments.first as? String == "a")
  }

  @Test func enumsCompareByTheirStoredValues() throws {
    let realm = try populated()
    let readings = realm.objects(Gauge.self)
    // Moods are strings: "grumpy" < "happy" < "sleepy".
    #expect(readings.where { $0.mood > .grumpy }.map(\.id) == [0, 2])
    #expect(readings.where { $0.level >= .mid }.map(\.id) == [1, 2])
    #expect(readings.where { $0.mood.starts(with: .sleepy) }.map(\.id) == [2])
    #expect(readings.where { $0.temperatures.persistableValue.max > 20.5 }.map(\.id) == [1, 2])
    #expect(Mood.grumpy < Mood.happy)
  }

  @Test func predicatesTakeRealmSwiftsForm() {
    let query = Query<Gauge>._constructForTesting()
    #expect((query.id == 5)._constructPredicate().0 == "(id == %@)")
    #expect((query.counts == 5)._constructPredicate().0 == "(ANY counts == %@)")
    #expect(query.counts.contains(5)._constructPredicate().0 == "(%@ IN counts)")
    #expect((query.id > 1 && !(query.id == 2))._constructPredicate().0 == "((id > %@) && NOT (id == %@))")
    #expect(query.mood.in([.happy, .sleepy])._constructPredicate().0 == "(mood IN %@)")
  }

  @Test func bridgeCastsConvertKeyValueCodingValues() throws {
    let realm = try populated()
    let gauge = try #require(realm.object(ofType: Gauge.self, forPrimaryKey: 1))
    let raw: [Any] = gauge.levels.value(forKey: "self")
    let levels: [Level] = raw.map { dynamicBridgeCast(fromObjectiveC: $0) }
    #expect(levels == Array(gauge.levels))
    let optionals: [Any] = gauge.optionalLevels.value(forKey: "self")
    let typed: [Level?] = optionals.map { dynamicBridgeCast(fromObjectiveC: $0) }
    #expect(typed == [nil, .high, .mid])
    #expect(dynamicBridgeCast(fromSwift: Int?.none) is NSNull)
    #expect(dynamicBridgeCast(fromSwift: 5) as? Int == 5)
  }

  @Test func bridgingProtocolsConvertAsKeyValueCodingDoes() {
    func bridged<T: _ObjcBridgeable>(_ value: Any, as type: T.Type) -> T? {
      T._rlmFromObjc(value, insideOptional: false)
    }
    func optionalValue<T: RealmOptionalType>(_ value: T) -> Any { value._rlmObjcValue }
    #expect(bridged(NSNumber(value: 7), as: Int.self) == 7)
    #expect(bridged(Int64(3), as: Int8.self) == 3)
    #expect(bridged("x", as: Int.self) == nil)
    #expect(bridged("name", as: String.self) == "name")
    #expect(bridged(Decimal128(2), as: Decimal128.self) == 2)
    #expect(optionalValue(true) as? Bool == true)
    #expect(optionalValue(2.5) as? Double == 2.5)
  }

  @MainActor @Test func aRealmOpensOnTheMainActor() async throws {
    var configuration = memoryConfiguration()
    configuration.objectTypes = [Gauge.self, GaugeSample.self]
    let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
    try realm.write { realm.add(GaugeSample(value: ["value": 1])) }
    #expect(realm.objects(GaugeSample.self).count == 1)
  }

  @Test func mixedSumsAreDecimal() throws {
    let realm = try realm()
    let gauge = Gauge()
    try realm.write { realm.add(gauge) }
    // Realm Core: a managed list's mixed sum is a Decimal128, an empty dictionary's the integer 0.
    #expect(gauge.mixed.sum() == .decimal128(Decimal128(0)))
    #expect(gauge.mixedMap.sum() == .int(0))
    try realm.write {
      gauge.mixed.append(objectsIn: [.int(3), .string("x")])
      gauge.mixedMap["a"] = .int(3)
    }
    #expect(gauge.mixed.sum() == .decimal128(Decimal128(3)))
    #expect(gauge.mixedMap.sum() == .decimal128(Decimal128(3)))
    let values: [AnyRealmValue] = [.int(2), .double(1.5), .string("x"), .decimal128(Decimal128(1))]
    let unmanaged = List<AnyRealmValue>()
    #expect(unmanaged.sum() == .int(0))
    unmanaged.append(objectsIn: values)
    #expect(unmanaged.sum() == .decimal128(Decimal128(4.5)))
  }

  @Test func defaultsOfDatesAndMappedEmbeddedObjects() {
    let before = Date()
    let sample = DatedSample()
    #expect(sample.when >= before && sample.when <= Date())
    let reading = Reading(value: ["location": NSNull()])
    #expect(reading.location == Point(x: 0, y: 0))
  }
}

final class DatedSample: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted var when: Date

}
