import Foundation
import Shoal

// Models shared by the object-layer tests. Every Realm opened with `objectTypes: nil` sees all of
// them (as RealmSwift does), so they must all be valid.

enum Mood: String, PersistableEnum {
  case happy, grumpy, sleepy
}

enum Level: Int, PersistableEnum {
  case low = 1, mid = 5, high = 10
}

final class Address: EmbeddedObject {
  @Persisted var street = ""
  @Persisted var city = ""
}

final class Dog: Object {
  @Persisted var name = ""
  @Persisted var age = 0
  @Persisted var owner: Person?
  @Persisted(originProperty: "dogs") var walkers: LinkingObjects<Person>
}

final class Person: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted(indexed: true) var name = ""
  @Persisted var age = 0
  @Persisted var score: Double?
  @Persisted var nickname: String?
  @Persisted var dog: Dog?
  @Persisted var dogs: List<Dog>
  @Persisted var tags: List<String>
  @Persisted var luckyNumbers: MutableSet<Int>
  @Persisted var attributes: Map<String, Int>
  @Persisted var address: Address?
  @Persisted var mood = Mood.happy
  @Persisted var level: Level?

  convenience init(id: Int, name: String, age: Int) {
    self.init()
    self.id = id
    self.name = name
    self.age = age
  }
}

final class AllTypes: Object {
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var bool = false
  @Persisted var int = 0
  @Persisted var int8: Int8 = 0
  @Persisted var int16: Int16 = 0
  @Persisted var int32: Int32 = 0
  @Persisted var int64: Int64 = 0
  @Persisted var float: Float = 0
  @Persisted var double: Double = 0
  @Persisted var string = ""
  @Persisted var data = Data()
  @Persisted var date = Date(timeIntervalSince1970: 0)
  @Persisted var uuid: UUID
  @Persisted var decimal: Decimal128
  @Persisted var any: AnyRealmValue
  @Persisted var optInt: Int?
  @Persisted var optString: String?
  @Persisted var optDate: Date?
  @Persisted var optUUID: UUID?
  @Persisted var optObjectId: ObjectId?
  @Persisted var optDecimal: Decimal128?
  @Persisted var doubles: List<Double>
  @Persisted var optStrings: List<String?>
  @Persisted var anyMap: Map<String, AnyRealmValue>
  @Persisted var dataSet: MutableSet<Data>
}

final class Counter: Object {
  @Persisted(primaryKey: true) var name = ""
  @Persisted var value = 0
}

/// A fresh in-memory configuration (unique per call).
func memoryConfiguration(_ name: String = #function) -> Realm.Configuration {
  Realm.Configuration(inMemoryIdentifier: name + "-" + UUID().uuidString)
}

/// A fresh on-disk configuration in a new temporary directory.
func fileConfiguration(_ name: String = "test") -> Realm.Configuration {
  let dir = FileManager.default.temporaryDirectory.appendingPathComponent("shoal-tests-" + UUID().uuidString)
  try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
  return Realm.Configuration(fileURL: dir.appendingPathComponent(name + ".realm"))
}
