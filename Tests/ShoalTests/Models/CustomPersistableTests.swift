import Foundation
import Shoal
import Testing

struct Celsius: CustomPersistable, Hashable {
  typealias PersistedType = Double
  var degrees: Double
  init(persistedValue: Double) { degrees = persistedValue }
  var persistableValue: Double { degrees }
}

/// Only http(s) addresses map back; anything else reads as nil.
struct WebAddress: FailableCustomPersistable, Hashable {
  typealias PersistedType = String
  var text: String
  init?(persistedValue: String) {
    guard persistedValue.hasPrefix("http") else { return nil }
    text = persistedValue
  }
  var persistableValue: String { text }
}

final class PointObject: EmbeddedObject {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted var x = 0.0
  @Persisted var y = 0.0
}

struct Point: CustomPersistable, Hashable {
  typealias PersistedType = PointObject
  var x: Double
  var y: Double
  init(x: Double, y: Double) {
    self.x = x
    self.y = y
  }
  init(persistedValue: PointObject) { self.init(x: persistedValue.x, y: persistedValue.y) }
  var persistableValue: PointObject { PointObject(value: ["x": x, "y": y]) }
}

final class Reading: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted var temperature: Celsius
  @Persisted var history: List<Celsius>
  @Persisted var byCity: Map<String, Celsius>
  @Persisted var site: WebAddress?
  @Persisted var links: List<WebAddress>
  @Persisted var mirrors: List<WebAddress?>
  @Persisted var location: Point
  @Persisted var path: List<Point>
}

/// Types stored as another supported type (RealmSwift's `CustomPersistable`).
@Suite("Custom persistable types")
struct CustomPersistableTests {
  private func realm() throws -> Realm {
    var config = memoryConfiguration()
    config.objectTypes = [Reading.self, PointObject.self]
    return try Realm(configuration: config)
  }

  @Test func propertiesAndCollectionsOfMappedTypes() throws {
    let realm = try realm()
    let reading = Reading()
    reading.temperature = Celsius(persistedValue: 21.5)
    reading.history.append(objectsIn: [Celsius(persistedValue: 19), Celsius(persistedValue: 20)])
    reading.byCity["Oslo"] = Celsius(persistedValue: -3)
    reading.site = WebAddress(persistedValue: "https://example.org")
    reading.location = Point(x: 1, y: 2)
    reading.path.append(objectsIn: [Point(x: 0, y: 0), Point(x: 3, y: 4)])
    try realm.write { realm.add(reading) }
    let stored = try #require(realm.objects(Reading.self).first)
    #expect(stored.temperature.degrees == 21.5)
    #expect(stored.history.map(\.degrees) == [19, 20])
    #expect(stored.byCity["Oslo"]?.degrees == -3)
    #expect(stored.site?.text == "https://example.org")
    #expect(stored.location == Point(x: 1, y: 2))
    #expect(Array(stored.path) == [Point(x: 0, y: 0), Point(x: 3, y: 4)])
    // An object that never set the property reads the persisted type's default.
    try realm.write { realm.add(Reading()) }
    #expect(realm.objects(Reading.self).last?.location == Point(x: 0, y: 0))
    // The schema holds the persisted type.
    #expect(realm.schema["Reading"]?["temperature"]?.type == .double)
    #expect(realm.schema["Reading"]?["location"]?.objectClassName == "PointObject")
  }

  @Test func queriesTestThePersistedValue() throws {
    let realm = try realm()
    try realm.write {
      for degrees in [10.0, 20.0, 30.0] {
        let reading = Reading()
        reading.temperature = Celsius(persistedValue: degrees)
        realm.add(reading)
      }
    }
    let warm = realm.objects(Reading.self).filter("temperature > %@", Celsius(persistedValue: 15))
    #expect(warm.count == 2)
    #expect(realm.objects(Reading.self).filter("temperature == %@", 30.0).count == 1)
    #expect(realm.objects(Reading.self).where { $0.temperature == Celsius(persistedValue: 10) }.count == 1)
  }

  @Test func aStoredValueThatMapsToNothingReadsAsNil() throws {
    let realm = try realm()
    let reading = Reading()
    try realm.write {
      realm.add(reading)
      // Written as the stored type, by name, as another program of the file could.
      realm.dynamicObjects("Reading").first?["site"] = "ftp://old"
    }
    #expect(reading.site == nil)
  }

  /// RealmSwift's rule for a stored-type value that maps to nothing: nil where the property or
  /// element is optional, "Could not convert value …" where it is not.
  @Test func aGivenValueThatMapsToNothingIsNilWhereOptional() throws {
    let values: [String: Any] = ["site": "ftp://old", "mirrors": ["ftp://a", "https://b"]]
    let unmanaged = Reading(value: values)
    #expect(unmanaged.site == nil)
    #expect(Array(unmanaged.mirrors) == [nil, WebAddress(persistedValue: "https://b")])
    let realm = try realm()
    try realm.write {
      let created = realm.create(Reading.self, value: values)
      #expect(created.site == nil)
      #expect(Array(created.mirrors) == [nil, WebAddress(persistedValue: "https://b")])
    }
  }

  @Test func aGivenValueThatMapsToNothingIsRefusedWhereNotOptional() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Reading(value: ["links": ["https://a", "ftp://b"]])
    }
    #expect(stderrText(result).contains("Could not convert value 'ftp://b' to type 'WebAddress'."))
  }
}
