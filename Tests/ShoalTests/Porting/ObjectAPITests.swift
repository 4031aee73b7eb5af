import Foundation
import Shoal
import Testing

// Parity with RealmSwift's object API: initialisers, KVC subscripts, `create(_:value:update:)`,
// schema introspection and error texts. Each test cites where RealmSwift documents (or its own
// test suite pins down) the behaviour. RealmSwift raises Objective-C exceptions where Shoal
// stops the process with a fatal error, so those cases are exit tests whose standard error must
// carry RealmSwift's message.

// MARK: - Models (nested in the suite; every Realm here lists them in `objectTypes`)

extension ObjectAPITests {
  enum IntEnum: Int, PersistableEnum {
    case value1 = 1, value2 = 3, value3 = 5
  }

  enum StringEnum: String, PersistableEnum {
    case value1 = "a", value2 = "c", value3 = "e"
  }

  /// A cut-down `ModernAllTypesObject` of RealmSwift's test suite.
  final class ModernAllTypesObject: Object {
    @Persisted(primaryKey: true) var pk: ObjectId
    var ignored: Int = 1
    @Persisted var boolCol: Bool
    @Persisted var intCol: Int
    @Persisted var int8Col: Int8 = 1
    @Persisted var int16Col: Int16 = 2
    @Persisted var int32Col: Int32 = 3
    @Persisted var int64Col: Int64 = 4
    @Persisted var floatCol: Float = 5
    @Persisted var doubleCol: Double = 6
    @Persisted var stringCol: String
    @Persisted var binaryCol: Data
    @Persisted var dateCol: Date
    @Persisted var decimalCol: Decimal128
    @Persisted var objectIdCol: ObjectId
    @Persisted var objectCol: ModernAllTypesObject?
    @Persisted var arrayCol: List<ModernAllTypesObject>
    @Persisted var setCol: MutableSet<ModernAllTypesObject>
    @Persisted var mapCol: Map<String, ModernAllTypesObject?>
    @Persisted var anyCol: AnyRealmValue
    @Persisted var uuidCol: UUID
    @Persisted var intEnumCol: IntEnum
    @Persisted var stringEnumCol: StringEnum
    @Persisted var optIntCol: Int?
    @Persisted var optInt8Col: Int8?
    @Persisted var optBoolCol: Bool?
    @Persisted var optStringCol: String?
    @Persisted var optDateCol: Date?
    @Persisted var optUuidCol: UUID?
    @Persisted var optIntEnumCol: IntEnum?
    @Persisted var arrayInt: List<Int>
    @Persisted var arrayInt8: List<Int8>
    @Persisted var arrayString: List<String>
    @Persisted var arrayOptInt: List<Int?>
    @Persisted var arrayAny: List<AnyRealmValue>
    @Persisted var setInt: MutableSet<Int>
    @Persisted var setOptString: MutableSet<String?>
    @Persisted var mapInt: Map<String, Int>
    @Persisted var mapOptInt: Map<String, Int?>
    @Persisted(originProperty: "objectCol") var linkingObjects: LinkingObjects<ModernAllTypesObject>
  }

  final class CompanyDog: Object {
    @Persisted var dogName = ""
    @Persisted var age = 0
  }

  /// Has every property `CompanyDog` has, and one more.
  final class PedigreeDog: Object {
    @Persisted var dogName = ""
    @Persisted var age = 0
    @Persisted var breed = ""
  }

  final class DogOwner: Object {
    @Persisted var name = ""
    @Persisted var dog: CompanyDog?
  }

  final class Company: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var employees: List<CompanyDog>
    @Persisted var tags: List<String>
    @Persisted var scores: Map<String, Int>
  }

  final class EmbeddedChild: EmbeddedObject {
    @Persisted var value = 0
  }

  final class EmbeddedParent: Object {
    @Persisted(primaryKey: true) var pk = 0
    @Persisted var object: EmbeddedChild?
    @Persisted var array: List<EmbeddedChild>
  }

  /// RealmSwift's `SwiftObject`-like model of ObjectTests.setAndTestAllTypes.
  final class SwiftObject: Object {
    @Persisted var boolCol = false
    @Persisted var intCol = 123
    @Persisted var floatCol: Float = 1.23
    @Persisted var doubleCol = 12.3
    @Persisted var stringCol = "a"
    @Persisted var binaryCol = Data("a".utf8)
    @Persisted var dateCol = Date(timeIntervalSince1970: 1)
    @Persisted var objectCol: BoolObject?
    @Persisted var arrayCol: List<BoolObject>
  }

  final class BoolObject: Object {
    @Persisted var boolCol = false
  }

  final class KennelDog: Object {
    @Persisted var dogName = ""
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<BoardingKennel>
  }

  /// Declares its linking objects before its persisted property.
  final class LinksFirstDog: Object {
    @Persisted(originProperty: "dog") var dogs: LinkingObjects<LinksFirstDogOwner>
    @Persisted var name = ""
  }

  final class LinksFirstDogOwner: Object {
    @Persisted var dog: LinksFirstDog?
  }

  /// A primary-keyed class whose linking objects come first in declaration order.
  final class KeyedAfterLinks: Object {
    @Persisted(originProperty: "target") var sources: LinkingObjects<LinkSource>
    @Persisted(primaryKey: true) var pk = 0
    @Persisted var value = ""
  }

  final class LinkSource: Object {
    @Persisted var target: KeyedAfterLinks?
  }

  /// Maps a property to a private column name (RealmSwift's `propertiesMapping()`).
  final class Mapped: Object {
    override class func propertiesMapping() -> [String: String] { ["firstName": "first_name"] }
    @Persisted var firstName = ""
    @Persisted var age = 0
  }

  final class BoardingKennel: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<KennelDog>
    @Persisted var dogSet: MutableSet<KennelDog>
    @Persisted var dogMap: Map<String, KennelDog?>
  }

  final class PrimaryIntEnum: Object {
    @Persisted(primaryKey: true) var pk: IntEnum
  }

  final class PrimaryOptionalIntEnum: Object {
    @Persisted(primaryKey: true) var pk: IntEnum?
  }

  final class IndexedEnums: Object {
    @Persisted(indexed: true) var value: IntEnum
    @Persisted(indexed: true) var optional: StringEnum?
  }

  final class PrimaryOptionalString: Object {
    @Persisted(primaryKey: true) var pk: String?
  }

  final class PrimaryUUID: Object {
    @Persisted(primaryKey: true) var pk: UUID
  }

  /// The classes every Realm of these tests lists in `objectTypes`.
  static let modelTypes: [ObjectBase.Type] = [
    ModernAllTypesObject.self, CompanyDog.self, PedigreeDog.self, DogOwner.self, Company.self, EmbeddedChild.self,
    EmbeddedParent.self, SwiftObject.self, BoolObject.self, KennelDog.self, BoardingKennel.self,
    LinksFirstDog.self, LinksFirstDogOwner.self, PrimaryIntEnum.self, PrimaryOptionalString.self,
    PrimaryUUID.self, PrimaryOptionalIntEnum.self, IndexedEnums.self,
    KeyedAfterLinks.self, LinkSource.self, Mapped.self,
  ]
}

private func objectAPIConfiguration() -> Realm.Configuration {
  Realm.Configuration(inMemoryIdentifier: "object-api-" + UUID().uuidString, objectTypes: ObjectAPITests.modelTypes)
}

private func objectAPIRealm() throws -> Realm { try Realm(configuration: objectAPIConfiguration()) }

/// Values for `ModernAllTypesObject`, by property name (RealmSwift's `ModernObjectCreationTests.values`).
private func allTypesValues() -> [String: Any] {
  [
    "pk": ObjectId.generate(),
    "boolCol": true,
    "intCol": 10,
    "int8Col": 11 as Int8,
    "int16Col": 12 as Int16,
    "int32Col": 13 as Int32,
    "int64Col": 14 as Int64,
    "floatCol": 15 as Float,
    "doubleCol": 16 as Double,
    "stringCol": "a",
    "binaryCol": Data("b".utf8),
    "dateCol": Date(timeIntervalSince1970: 17),
    "decimalCol": Decimal128(18),
    "objectIdCol": ObjectId.generate(),
    "objectCol": ObjectAPITests.ModernAllTypesObject(value: ["intCol": 1]),
    "arrayCol": [
      ObjectAPITests.ModernAllTypesObject(value: ["intCol": 2]),
      ObjectAPITests.ModernAllTypesObject(value: ["intCol": 3]),
    ],
    "setCol": [ObjectAPITests.ModernAllTypesObject(value: ["intCol": 4])],
    "mapCol": ["x": ObjectAPITests.ModernAllTypesObject(value: ["intCol": 5])],
    "anyCol": AnyRealmValue.int(20),
    "uuidCol": UUID(),
    "intEnumCol": ObjectAPITests.IntEnum.value2,
    "stringEnumCol": ObjectAPITests.StringEnum.value3,
    "optIntCol": 30,
    "optInt8Col": 31 as Int8,
    "optBoolCol": false,
    "optStringCol": "c",
    "optDateCol": Date(timeIntervalSince1970: 37),
    "optUuidCol": UUID(),
    "optIntEnumCol": ObjectAPITests.IntEnum.value1,
    "arrayInt": [1, 1, 2, 3],
    "arrayInt8": [1, 2, 3, 1] as [Int8],
    "arrayString": ["a", "b", "c"],
    "arrayOptInt": [1, nil, 3] as [Int?],
    "arrayAny": [.none, .int(1), .string("a")] as [AnyRealmValue],
    "setInt": [1, 1, 2, 3],
    "setOptString": ["a", nil] as [String?],
    "mapInt": ["1": 1, "2": 2],
    "mapOptInt": ["1": 1, "2": nil] as [String: Int?],
  ]
}

/// Checks an object against `allTypesValues()`; `copies` says linked objects were copied into a Realm.
private func verify(_ object: ObjectAPITests.ModernAllTypesObject, _ values: [String: Any], copies: Bool) {
  #expect(object.pk == values["pk"] as? ObjectId)
  #expect(object.boolCol == true)
  #expect(object.intCol == 10)
  #expect(object.int8Col == 11 && object.int16Col == 12 && object.int32Col == 13 && object.int64Col == 14)
  #expect(object.floatCol == 15 && object.doubleCol == 16)
  #expect(object.stringCol == "a" && object.binaryCol == Data("b".utf8))
  #expect(object.dateCol == Date(timeIntervalSince1970: 17))
  #expect(object.decimalCol == Decimal128(18))
  #expect(object.objectIdCol == values["objectIdCol"] as? ObjectId)
  #expect(object.objectCol?.intCol == 1)
  #expect(object.arrayCol.map(\.intCol) == [2, 3])
  #expect(object.setCol.map(\.intCol) == [4])
  #expect(object.mapCol["x"]??.intCol == 5)
  if !copies, let original = values["objectCol"] as? ObjectAPITests.ModernAllTypesObject {
    #expect(object.objectCol === original)
  }
  #expect(object.anyCol == .int(20))
  #expect(object.uuidCol == values["uuidCol"] as? UUID)
  #expect(object.intEnumCol == .value2 && object.stringEnumCol == .value3)
  #expect(object.optIntCol == 30 && object.optInt8Col == 31 && object.optBoolCol == false)
  #expect(object.optStringCol == "c" && object.optDateCol == Date(timeIntervalSince1970: 37))
  #expect(object.optUuidCol == values["optUuidCol"] as? UUID)
  #expect(object.optIntEnumCol == .value1)
  #expect(Array(object.arrayInt) == [1, 1, 2, 3])
  #expect(Array(object.arrayInt8) == [1, 2, 3, 1])
  #expect(Array(object.arrayString) == ["a", "b", "c"])
  #expect(Array(object.arrayOptInt) == [1, nil, 3])
  #expect(Array(object.arrayAny) == [.none, .int(1), .string("a")])
  #expect(Set(object.setInt) == [1, 2, 3])
  #expect(Set(object.setOptString) == ["a", nil])
  #expect(object.mapInt["1"] == 1 && object.mapInt["2"] == 2 && object.mapInt.count == 2)
  #expect(object.mapOptInt["1"] == .some(1) && object.mapOptInt["2"] == .some(nil))
}

/// The values of `nullValues()` in RealmSwift's `ModernObjectCreationTests`: NSNull for every
/// optional property and for elements of optional collections.
private func allTypesNullValues() -> [String: Any] {
  allTypesValues().merging(
    [
      "objectCol": NSNull(), "anyCol": AnyRealmValue.none, "optIntCol": NSNull(), "optInt8Col": NSNull(),
      "optBoolCol": NSNull(), "optStringCol": NSNull(), "optDateCol": NSNull(), "optUuidCol": NSNull(),
      "optIntEnumCol": NSNull(), "arrayOptInt": [NSNull()], "setOptString": [NSNull()],
      "mapOptInt": ["1": NSNull()],
    ] as [String: Any]
  ) { _, null in null }
}

private func verifyNil(_ object: ObjectAPITests.ModernAllTypesObject) {
  #expect(object.objectCol == nil)
  #expect(object.anyCol == .none)
  #expect(object.optIntCol == nil && object.optInt8Col == nil && object.optBoolCol == nil)
  #expect(object.optStringCol == nil && object.optDateCol == nil && object.optUuidCol == nil)
  #expect(object.optIntEnumCol == nil)
  #expect(Array(object.arrayOptInt) == [nil])
  #expect(Array(object.setOptString) == [nil])
  #expect(object.mapOptInt["1"] == .some(nil))
}

@Suite("Object API")
struct ObjectAPITests {
  // MARK: init() and init(value:)

  /// `Object.init()`: every property holds its declared default, or the type's zero value;
  /// `ObjectId` and `UUID` without a default are fresh values (ModernObjectCreationTests.verifyDefault).
  @Test func initGivesDeclaredDefaults() {
    let object = ModernAllTypesObject()
    #expect(object.realm == nil)
    #expect(!object.boolCol && object.intCol == 0)
    #expect(object.int8Col == 1 && object.int16Col == 2 && object.int32Col == 3 && object.int64Col == 4)
    #expect(object.floatCol == 5 && object.doubleCol == 6)
    #expect(object.stringCol == "" && object.binaryCol == Data() && object.decimalCol == Decimal128(0))
    #expect(object.objectIdCol != ObjectId() && object.uuidCol != ModernAllTypesObject().uuidCol)
    #expect(object.objectCol == nil && object.arrayCol.isEmpty && object.setCol.isEmpty && object.mapCol.count == 0)
    #expect(object.anyCol == .none && object.intEnumCol == .value1 && object.stringEnumCol == .value1)
    #expect(object.optIntCol == nil && object.optStringCol == nil && object.optIntEnumCol == nil)
  }

  /// `init(value:)` with a dictionary sets the properties it names, by name (Object.init(value:)
  /// docs; ModernObjectCreationTests.testInitWithDictionary).
  @Test func initWithDictionaryOfEveryType() {
    let values = allTypesValues()
    verify(ModernAllTypesObject(value: values), values, copies: false)
  }

  /// `init(value:)` with an array takes the values in the order of `sharedSchema().properties`
  /// (ModernObjectCreationTests.testInitWithArray).
  @Test func initWithArrayInSharedSchemaOrder() throws {
    let values = allTypesValues()
    let schema = try #require(ModernAllTypesObject.sharedSchema())
    #expect(schema.className == "ModernAllTypesObject")
    let array = schema.properties.map { values[$0.name] }
    verify(ModernAllTypesObject(value: array as [Any]), values, copies: false)
  }

  /// `init(value:)` with another object copies its properties by name, a shallow copy: linked
  /// objects are shared, the collections are new ones (ModernObjectCreationTests.testInitWithObject;
  /// ObjectCreationTests.mm testInitWithObject).
  @Test func initWithObjectCopiesProperties() {
    let values = allTypesValues()
    let original = ModernAllTypesObject(value: values)
    let copy = ModernAllTypesObject(value: original)
    verify(copy, values, copies: false)
    #expect(copy.arrayCol[0] === original.arrayCol[0])
    copy.arrayString.append("d")
    copy.mapInt["3"] = 3
    #expect(Array(original.arrayString) == ["a", "b", "c"])
    #expect(original.mapInt["3"] == nil)
  }

  /// A copy of a managed object is unmanaged, collections included.
  @Test func initWithManagedObjectGivesAnUnmanagedCopy() throws {
    let realm = try objectAPIRealm()
    let company = try realm.write {
      realm.create(Company.self, value: ["name": "Acme", "employees": [["Rex", 1]], "tags": ["a"]])
    }
    let copy = Company(value: company)
    #expect(copy.realm == nil)
    #expect(copy.tags.realm == nil && copy.employees.realm == nil)
    copy.tags.append("b")  // outside a write transaction: only an unmanaged list allows this
    #expect(Array(copy.tags) == ["a", "b"])
    #expect(Array(company.tags) == ["a"])
    #expect(copy.employees.first?.isSameObject(as: company.employees.first) == true)
  }

  /// NSNull stands for nil, for optional properties and inside optional collections
  /// (ModernObjectCreationTests.testInitNil / testCreateNil / testAddNil).
  @Test func nsNullValuesAreNil() throws {
    verifyNil(ModernAllTypesObject(value: allTypesNullValues()))
    let realm = try objectAPIRealm()
    let created = try realm.write { realm.create(ModernAllTypesObject.self, value: allTypesNullValues()) }
    verifyNil(created)
    let added = ModernAllTypesObject(value: allTypesNullValues())
    try realm.write { realm.add(added) }
    verifyNil(added)
  }

  /// nil or NSNull for a collection property is an empty collection (RLMUtil.mm
  /// RLMValidateValueForProperty: "nil is considered equivalent to an empty array").
  @Test func nullForACollectionIsEmpty() {
    let company = Company(value: ["name": "A", "tags": NSNull(), "employees": NSNull(), "scores": NSNull()])
    #expect(company.tags.isEmpty && company.employees.isEmpty && company.scores.count == 0)
  }

  /// Nested dictionaries and arrays build linked, listed and embedded objects
  /// (ObjectCreationTests.mm testInitWithArray / testInitWithDictionary; testCreateEmbeddedWithDictionary).
  @Test func nestedValuesBuildLinkedObjects() throws {
    let company = Company(value: ["Acme", [["Rex", 2], ["dogName": "Fido", "age": 3]], ["x"]])
    #expect(company.employees.map(\.dogName) == ["Rex", "Fido"])
    #expect(company.employees.map(\.age) == [2, 3])
    let owner = DogOwner(value: ["Alex", PedigreeDog(value: ["Fido", 12, "Poodle"])])
    #expect(owner.dog?.dogName == "Fido" && owner.dog?.age == 12)
    let realm = try objectAPIRealm()
    let parent = try realm.write {
      realm.create(EmbeddedParent.self, value: ["pk": 1, "object": ["value": 5], "array": [[9], [10]]])
    }
    #expect(parent.object?.value == 5)
    #expect(parent.array.map(\.value) == [9, 10])
  }

  /// `init(value:)` with an object that lacks one of the properties fails with RealmSwift's
  /// "missing key" text (ObjectCreationTests.mm testInitWithInvalidObject).
  @Test func initWithObjectMissingAPropertyFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = PedigreeDog(value: CompanyDog(value: ["Fido", 10]))
    }
    let text = stderrText(result)
    #expect(text.contains("to initialize object of type 'PedigreeDog': missing key 'breed'"), "\(text)")
  }

  /// A nil value fails with "Must provide a non-nil value." (ObjectCreationTests.mm
  /// testInitWithInvalidThings).
  @Test func initWithNSNullFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = CompanyDog(value: NSNull())
    }
    #expect(stderrText(result).contains("Must provide a non-nil value."))
  }

  /// A wrong type names the property's type as RLMThrowTypeError does: `'int?'` for an optional,
  /// `'string' array` for a list element (RLMUtil.mm RLMThrowTypeError).
  @Test func wrongTypeMessagesNameOptionalAndCollectionTypes() async {
    let optional = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = ModernAllTypesObject(value: ["optIntCol": "x"])
    }
    let optionalText = stderrText(optional)
    #expect(optionalText.contains("Invalid value 'x' of type '"), "\(optionalText)")
    #expect(optionalText.contains("' for 'int?' property 'ModernAllTypesObject.optIntCol'."), "\(optionalText)")
    let element = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Company(value: ["name": "A", "tags": ["a", 1]])
    }
    let elementText = stderrText(element)
    #expect(elementText.contains("Invalid value '1' of type '"), "\(elementText)")
    #expect(elementText.contains("' for 'string' array property 'Company.tags'."), "\(elementText)")
    let notEnumerable = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Company(value: ["name": "A", "tags": 5])
    }
    let notEnumerableText = stderrText(notEnumerable)
    #expect(
      notEnumerableText.contains(
        "Invalid value (5) for 'string' array property 'Company.tags': value is not enumerable."),
      "\(notEnumerableText)")
  }

  /// A fractional number is not an integer: RealmSwift refuses 1.5 for an `Int` property
  /// (ObjectCreationTests.mm testInitValidatesNumberTypes: "Invalid value '1.1' for property 'intObj'").
  @Test func fractionalNumberForAnIntFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = CompanyDog(value: ["dogName": "Rex", "age": 1.5])
    }
    #expect(stderrText(result).contains("Invalid value '1.5' of type '"))
  }

  // MARK: Subscripts, value(forKey:), setValue(_:forKey:)

  /// The subscript reads and writes every kind of property on unmanaged objects, lists included
  /// (Object.subscript docs; ModernObjectTests.testCannotUpdatePrimaryKey sets `object["pk"]`).
  @Test func unmanagedSubscriptCoversLinksAndCollections() {
    let company = Company()
    company["name"] = "Acme"
    company["employees"] = [CompanyDog(value: ["Rex", 1]), ["Fido", 2]]
    company["tags"] = ["a", "b"]
    company["scores"] = ["x": 1]
    #expect(company.name == "Acme")
    #expect(company.employees.map(\.dogName) == ["Rex", "Fido"])
    #expect((company["tags"] as? List<String>).map(Array.init) == ["a", "b"])
    #expect((company["scores"] as? Map<String, Int>)?["x"] == 1)
    let owner = DogOwner()
    owner["dog"] = ["dogName": "Rex"]
    #expect((owner["dog"] as? CompanyDog)?.dogName == "Rex")
    owner["dog"] = nil
    #expect(owner["dog"] == nil && owner.dog == nil)
    let all = ModernAllTypesObject()
    all["intEnumCol"] = IntEnum.value3
    all["optIntEnumCol"] = 3
    all.setValue(Int8(7), forKey: "int8Col")
    #expect(all.intEnumCol == .value3 && all.optIntEnumCol == .value2 && all.int8Col == 7)
    #expect(all.value(forKey: "int8Col") as? Int8 == 7)
  }

  /// On a managed object the subscript sets links and lists from objects of their class,
  /// adding unmanaged ones; `setValue(_:forKey:)` also makes them from dictionaries and arrays
  /// (ObjectTests.setAndTestAllTypes; RLMAccessor.mm RLMDynamicValidatedSet).
  @Test func managedSubscriptSetsLinksAndLists() throws {
    let realm = try objectAPIRealm()
    let owner = try realm.write { realm.create(DogOwner.self, value: ["name": "Ann"]) }
    let company = try realm.write { realm.create(Company.self, value: ["name": "Acme"]) }
    try realm.write {
      owner["dog"] = CompanyDog(value: ["dogName": "Rex", "age": 3])
      company["employees"] = [CompanyDog(value: ["Fido", 2]), CompanyDog(value: ["Spot", 1])]
      company["scores"] = ["a": 1]
    }
    #expect(owner.dog?.dogName == "Rex" && owner.dog?.realm != nil)
    #expect(company.employees.map(\.dogName) == ["Fido", "Spot"])
    #expect(company.scores["a"] == 1)
    try realm.write {
      company.setValue([["Max", 4]], forKey: "employees")
      owner.setValue(["dogName": "Bo"], forKey: "dog")
    }
    #expect(company.employees.map(\.dogName) == ["Max"] && owner.dog?.dogName == "Bo")
    #expect(realm.objects(CompanyDog.self).count == 5)
    try realm.write { owner["dog"] = nil }
    #expect(owner.dog == nil)
  }

  /// The subscript of a managed object takes for a link only an object of the linked class
  /// (RLMDynamicValidatedSet validates objects), except for embedded objects, which cannot be
  /// created directly, so anything that makes one is taken.
  @Test func managedSubscriptChecksLinkedObjects() async throws {
    let realm = try objectAPIRealm()
    let parent = try realm.write { realm.create(EmbeddedParent.self, value: ["pk": 1]) }
    try realm.write {
      parent["object"] = ["value": 7]
      parent["array"] = [[8], ["value": 9]]
    }
    #expect(parent.object?.value == 7 && parent.array.map(\.value) == [8, 9])
    let wrongClass = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try objectAPIRealm()
      try realm.write {
        let owner = realm.create(DogOwner.self, value: ["name": "Ann"])
        owner["dog"] = BoolObject()
      }
    }
    #expect(stderrText(wrongClass).contains("' of type 'BoolObject' for 'CompanyDog?' property 'DogOwner.dog'."))
    let dictionary = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try objectAPIRealm()
      try realm.write {
        let company = realm.create(Company.self, value: ["name": "Acme"])
        company["employees"] = [["Rex", 1]]
      }
    }
    #expect(stderrText(dictionary).contains("' for 'CompanyDog' array property 'Company.employees'."))
  }

  /// Setting the primary key of a managed object through the subscript fails with
  /// "Primary key can't be changed to '…' after an object is inserted.", even to its own value
  /// (RLMDynamicValidatedSet).
  @Test func managedSubscriptCannotSetThePrimaryKey() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try objectAPIRealm()
      try realm.write {
        let company = realm.create(Company.self, value: ["name": "Acme"])
        company["name"] = "Acme"
      }
    }
    #expect(stderrText(result).contains("Primary key can't be changed to 'Acme' after an object is inserted."))
  }

  // MARK: create(_:value:update:)

  /// `create` with `.modified` or `.all` updates the object with the same primary key, only the
  /// properties given (Realm.create docs: "If the object is being updated, all properties
  /// defined in its schema will be set by copying from value using key-value coding. If the value
  /// object does not have a value for a particular property ... the existing value is kept").
  @Test func createWithUpdateKeepsPropertiesNotGiven() throws {
    let realm = try objectAPIRealm()
    try realm.write {
      realm.create(Company.self, value: ["name": "Acme", "tags": ["a"], "scores": ["x": 1]])
      realm.create(Company.self, value: ["name": "Acme", "tags": ["b", "c"]], update: .modified)
    }
    let company = try #require(realm.object(ofType: Company.self, forPrimaryKey: "Acme"))
    #expect(Array(company.tags) == ["b", "c"])
    #expect(company.scores["x"] == 1)
    try realm.write { realm.create(Company.self, value: ["name": "Acme", "scores": ["y": 2]], update: .all) }
    #expect(Array(company.tags) == ["b", "c"])
    #expect(company.scores["y"] == 2 && company.scores["x"] == nil)
    #expect(realm.objects(Company.self).count == 1)
  }

  /// `create` with an update policy and no existing object creates it.
  @Test func createWithUpdateCreatesWhenMissing() throws {
    let realm = try objectAPIRealm()
    let company = try realm.write { realm.create(Company.self, value: ["Beta", [], ["t"]], update: .all) }
    #expect(company.name == "Beta" && Array(company.tags) == ["t"])
    #expect(realm.objects(Company.self).count == 1)
  }

  /// `create` with a managed object of the same Realm copies it shallowly: links point at the
  /// same objects (ObjectCreationTests.mm testCreateOnManagedObjectInSameRealmShallowCopies).
  @Test func createFromAManagedObjectLinksTheSameObjects() throws {
    let realm = try objectAPIRealm()
    try realm.write {
      let owner = realm.create(DogOwner.self, value: ["Ann", ["Rex", 3]])
      let copy = realm.create(DogOwner.self, value: owner)
      #expect(copy.dog?.isSameObject(as: owner.dog) == true)
    }
    #expect(realm.objects(DogOwner.self).count == 2)
    #expect(realm.objects(CompanyDog.self).count == 1)
  }

  /// `create` from a deleted object fails with "Object has been deleted or invalidated."
  /// (ObjectCreationTests.mm testCreateWithInvalidatedObject).
  @Test func createFromADeletedObjectFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try objectAPIRealm()
      try realm.write {
        let dog = realm.create(CompanyDog.self, value: ["Rex", 1])
        realm.delete(dog)
        realm.create(CompanyDog.self, value: dog)
      }
    }
    #expect(stderrText(result).contains("Object has been deleted or invalidated."))
  }

  // MARK: Schema introspection

  /// `Object.sharedSchema()` is the class's schema, with the class name and persisted properties
  /// (RLMObjectBase +sharedSchema; ModernObjectCreationTests uses `sharedSchema()!.properties`).
  @Test func sharedSchemaDescribesTheClass() throws {
    let schema = try #require(Company.sharedSchema())
    #expect(schema.className == "Company")
    #expect(schema.properties.map(\.name) == ["name", "employees", "tags", "scores"])
    #expect(schema.primaryKeyProperty?.name == "name")
    #expect(EmbeddedChild.sharedSchema()?.isEmbedded == true)
    #expect(schema == Company().objectSchema)
  }

  /// `objectSchema.properties` omits ignored (non-`@Persisted`) and linking-objects properties,
  /// in declaration order (ModernObjectTests.testObjectSchema).
  @Test func objectSchemaListsPersistedPropertiesInOrder() {
    let names = ModernAllTypesObject().objectSchema.properties.map(\.name)
    #expect(names.first == "pk" && names.dropFirst().first == "boolCol")
    #expect(!names.contains("ignored") && !names.contains("linkingObjects"))
    #expect(names.count == 38)
  }

  // MARK: Subscripts and KVC on every kind of property

  /// ObjectTests.setAndTestAllTypes: the subscript and `setValue(_:forKey:)` set, and the
  /// subscript and `value(forKey:)` read, every property type on unmanaged and managed objects;
  /// a list is set from a `List` (copied), an array, nil or NSNull (empty).
  private func setAndTestAllTypes(
    _ set: (SwiftObject, Any?, String) -> Void, _ get: (SwiftObject, String) -> Any?, _ object: SwiftObject
  ) {
    set(object, true, "boolCol")
    #expect(get(object, "boolCol") as? Bool == true)
    set(object, 321, "intCol")
    #expect(get(object, "intCol") as? Int == 321)
    set(object, NSNumber(value: 32.1 as Float), "floatCol")
    #expect(get(object, "floatCol") as? Float == 32.1)
    set(object, 3.21, "doubleCol")
    #expect(get(object, "doubleCol") as? Double == 3.21)
    set(object, "z", "stringCol")
    #expect(get(object, "stringCol") as? String == "z")
    set(object, Data("z".utf8), "binaryCol")
    #expect(get(object, "binaryCol") as? Data == Data("z".utf8))
    set(object, Date(timeIntervalSince1970: 333), "dateCol")
    #expect(get(object, "dateCol") as? Date == Date(timeIntervalSince1970: 333))
    let boolObject = BoolObject(value: [true])
    set(object, boolObject, "objectCol")
    #expect((get(object, "objectCol") as? BoolObject)?.isSameObject(as: boolObject) == true)
    #expect((get(object, "objectCol") as? BoolObject)?.boolCol == true)
    let list = List<BoolObject>()
    list.append(boolObject)
    set(object, list, "arrayCol")
    #expect((get(object, "arrayCol") as? List<BoolObject>)?.count == 1)
    #expect((get(object, "arrayCol") as? List<BoolObject>)?.first?.isSameObject(as: boolObject) == true)
    list.removeAll()
    set(object, list, "arrayCol")
    #expect((get(object, "arrayCol") as? List<BoolObject>)?.count == 0)
    set(object, [boolObject], "arrayCol")
    #expect((get(object, "arrayCol") as? List<BoolObject>)?.count == 1)
    set(object, nil, "arrayCol")
    #expect((get(object, "arrayCol") as? List<BoolObject>)?.count == 0)
    set(object, [boolObject], "arrayCol")
    set(object, NSNull(), "arrayCol")
    #expect((get(object, "arrayCol") as? List<BoolObject>)?.count == 0)
  }

  /// ObjectTests.testSubscript and testSetValueForKey, on an unmanaged and a managed object.
  @Test func subscriptAndKVCSetAndGetEveryType() throws {
    let subscriptSet: (SwiftObject, Any?, String) -> Void = { object, value, key in object[key] = value }
    let subscriptGet: (SwiftObject, String) -> Any? = { object, key in object[key] }
    let kvcSet: (SwiftObject, Any?, String) -> Void = { object, value, key in object.setValue(value, forKey: key) }
    let kvcGet: (SwiftObject, String) -> Any? = { object, key in object.value(forKey: key) }
    setAndTestAllTypes(subscriptSet, subscriptGet, SwiftObject())
    setAndTestAllTypes(kvcSet, kvcGet, SwiftObject())
    let realm = try objectAPIRealm()
    try realm.write {
      setAndTestAllTypes(subscriptSet, subscriptGet, realm.create(SwiftObject.self, value: [:] as [String: Any]))
      setAndTestAllTypes(kvcSet, kvcGet, realm.create(SwiftObject.self))
    }
  }

  /// ObjectTests.testValueForKey: the defaults read by name, unmanaged, created and added.
  @Test func valueForKeyReadsDefaults() throws {
    func check(_ object: SwiftObject) {
      #expect(object.value(forKey: "boolCol") as? Bool == false)
      #expect(object.value(forKey: "intCol") as? Int == 123)
      #expect(object.value(forKey: "floatCol") as? Float == 1.23)
      #expect(object.value(forKey: "doubleCol") as? Double == 12.3)
      #expect(object.value(forKey: "stringCol") as? String == "a")
      #expect(object.value(forKey: "binaryCol") as? Data == Data("a".utf8))
      #expect(object.value(forKey: "dateCol") as? Date == Date(timeIntervalSince1970: 1))
      #expect(object.value(forKey: "objectCol") == nil)
      #expect(object.value(forKey: "arrayCol") is List<BoolObject>)
    }
    check(SwiftObject())
    let realm = try objectAPIRealm()
    try realm.write {
      check(realm.create(SwiftObject.self, value: [:] as [String: Any]))
      let added = SwiftObject()
      realm.add(added)
      check(added)
    }
  }

  /// ObjectTests.testValueForKeyLinkingObjects: a linking-objects property reads by name as
  /// `LinkingObjects`, live once managed.
  @Test func valueForKeyOfLinkingObjects() throws {
    let dog = KennelDog(value: ["Rex"])
    #expect((dog.value(forKey: "owners") as? LinkingObjects<BoardingKennel>)?.count == 0)
    let realm = try objectAPIRealm()
    try realm.write { realm.add(BoardingKennel(value: ["name": "K", "dogs": [dog]])) }
    let owners = try #require(dog.value(forKey: "owners") as? LinkingObjects<BoardingKennel>)
    #expect(owners.first?.name == "K")
  }

  /// ObjectTests.testSettingUnmanagedObjectValuesWithSwiftDictionary: `setValue(_:forKey:)` with
  /// the values of a JSON-like dictionary builds linked objects from nested dictionaries.
  @Test func setValueFromJSONLikeDictionary() {
    let json: [String: Any] = ["name": "foo", "dogs": [["dogName": "bar"]]]
    let kennel = BoardingKennel()
    for (key, value) in json { kennel.setValue(value, forKey: key) }
    #expect(kennel.name == "foo")
    #expect(kennel.dogs.first?.dogName == "bar")
  }

  /// testSettingUnmanagedObjectValuesWithBadSwiftDictionary: a nested value of the wrong type fails.
  @Test func setValueWithABadNestedValueFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let kennel = BoardingKennel()
      kennel.setValue([["dogName": 5]], forKey: "dogs")
    }
    #expect(stderrText(result).contains("for 'string' property 'KennelDog.dogName'."))
  }

  /// Object.dynamicList / dynamicMutableSet / dynamicMap, and `DynamicObject`'s subscript, give
  /// collections of objects as `List<DynamicObject>`, `MutableSet<DynamicObject>` and
  /// `Map<String, DynamicObject?>` (Object.swift, DynamicObject.subscript); setting such a
  /// collection back by name keeps its contents (ObjectTests.dynamicSetAndTestAllTypes).
  @Test func dynamicCollectionsOfObjects() throws {
    let realm = try objectAPIRealm()
    let kennel = BoardingKennel(value: ["name": "K", "dogs": [["Rex"], ["Fido"]]])
    try realm.write {
      realm.add(kennel)
      kennel.dogSet.insert(kennel.dogs[0])
      kennel.dogMap["best"] = kennel.dogs[1]
    }
    #expect(kennel.dynamicList("dogs").map { $0["dogName"] as? String } == ["Rex", "Fido"])
    #expect(kennel.dynamicMutableSet("dogSet").map { $0["dogName"] as? String } == ["Rex"])
    let map: Map<String, DynamicObject?> = kennel.dynamicMap("dogMap")
    #expect(map["best"]??["dogName"] as? String == "Fido")
    let dynamic = try #require(realm.dynamicObjects("BoardingKennel").first)
    let dogs = try #require(dynamic["dogs"] as? List<DynamicObject>)
    #expect(dogs.map { $0["dogName"] as? String } == ["Rex", "Fido"])
    #expect((dynamic["dogSet"] as? MutableSet<DynamicObject>)?.count == 1)
    #expect((dynamic["dogMap"] as? Map<String, DynamicObject?>)?["best"]??["dogName"] as? String == "Fido")
    try realm.write {
      dogs.removeAll()
      dynamic["dogs"] = dogs
    }
    #expect(kennel.dogs.isEmpty)
    try realm.write { dynamic["dogs"] = [realm.dynamicObjects("KennelDog").first] }
    #expect(kennel.dogs.map(\.dogName) == ["Rex"])
  }

  // MARK: Schema introspection and descriptions

  /// ObjectTests.testSharedSchemaUnmanaged: `type(of: object).sharedSchema()` equals the class's.
  @Test func sharedSchemaOfTheDynamicTypeEqualsTheClasss() throws {
    let object: Object = SwiftObject()
    #expect(type(of: object).sharedSchema() == SwiftObject.sharedSchema())
    #expect(SwiftObject.sharedSchema() != BoolObject.sharedSchema())
    #expect(DynamicObject.sharedSchema() == nil)
    let realm = try objectAPIRealm()
    #expect(realm.schema["SwiftObject"] == SwiftObject.sharedSchema())
  }

  /// ObjectSchemaTests.testDescription: the object schema lists each property's description,
  /// indented, persisted properties first and linking objects after them (RLMObjectSchema
  /// description).
  @Test func objectSchemaDescriptionListsComputedPropertiesLast() throws {
    let schema = try #require(try objectAPIRealm().schema["KennelDog"])
    let expected = """
      KennelDog {
      \tdogName {
      \t\ttype = string;
      \t\tcolumnName = dogName;
      \t\tindexed = NO;
      \t\tisPrimary = NO;
      \t\tarray = NO;
      \t\tset = NO;
      \t\tdictionary = NO;
      \t\toptional = NO;
      \t}
      \towners {
      \t\ttype = linking objects;
      \t\tobjectClassName = BoardingKennel;
      \t\tlinkOriginPropertyName = dogs;
      \t\tcolumnName = owners;
      \t\tindexed = NO;
      \t\tisPrimary = NO;
      \t\tarray = YES;
      \t\tset = NO;
      \t\tdictionary = NO;
      \t\toptional = NO;
      \t}
      }
      """
    #expect(schema.description == expected)
    let child = try #require(try objectAPIRealm().schema["EmbeddedChild"])
    #expect(child.description.hasPrefix("EmbeddedChild (embedded) {\n\tvalue {\n"))
  }

  /// A class whose linking objects are declared before its persisted properties still lists
  /// them last in its description, and not at all in `properties`.
  @Test func objectSchemaDescriptionOrderDoesNotFollowDeclarationForLinkingObjects() throws {
    let description = LinksFirstDog().objectSchema.description
    let linking = try #require(description.range(of: "\tdogs {"))
    let persisted = try #require(description.range(of: "\tname {"))
    #expect(persisted.lowerBound < linking.lowerBound)
  }

  // MARK: Primary keys and update policies

  /// ModernObjectTests.testCannotUpdatePrimaryKey: an unmanaged object's primary key changes
  /// through the property, the subscript and `setValue(_:forKey:)`, enums and nil included.
  @Test func unmanagedPrimaryKeysChangeByNameToo() {
    let byEnum = PrimaryIntEnum()
    byEnum.pk = .value2
    byEnum["pk"] = IntEnum.value3
    #expect(byEnum.pk == .value3)
    byEnum.setValue(IntEnum.value1, forKey: "pk")
    #expect(byEnum.pk == .value1)
    let byString = PrimaryOptionalString()
    byString["pk"] = "a"
    #expect(byString.pk == "a")
    byString.setValue(nil, forKey: "pk")
    #expect(byString.pk == nil)
    let uuid = UUID()
    let byUUID = PrimaryUUID()
    byUUID["pk"] = uuid
    #expect(byUUID.pk == uuid)
  }

  /// Enums whose raw type can be a primary key or indexed can be too, optional or not
  /// (ModernTestObjects: ModernPrimaryIntEnumObject, ModernIndexedOptionalIntEnumObject).
  @Test func enumPrimaryKeysAndIndexes() throws {
    let realm = try objectAPIRealm()
    try realm.write {
      realm.create(PrimaryIntEnum.self, value: [IntEnum.value2])
      realm.create(PrimaryOptionalIntEnum.self, value: [NSNull()])
      realm.create(PrimaryOptionalIntEnum.self, value: [IntEnum.value3])
      realm.create(IndexedEnums.self, value: [IntEnum.value3, StringEnum.value2])
    }
    #expect(realm.object(ofType: PrimaryIntEnum.self, forPrimaryKey: IntEnum.value2)?.pk == .value2)
    #expect(realm.object(ofType: PrimaryIntEnum.self, forPrimaryKey: IntEnum.value1) == nil)
    #expect(realm.object(ofType: PrimaryOptionalIntEnum.self, forPrimaryKey: IntEnum?.none) != nil)
    #expect(realm.object(ofType: PrimaryOptionalIntEnum.self, forPrimaryKey: IntEnum.value3)?.pk == .value3)
    let schema = realm.schema
    #expect(schema["PrimaryIntEnum"]?.primaryKeyProperty?.type == .int)
    #expect(schema["PrimaryOptionalIntEnum"]?.primaryKeyProperty?.isOptional == true)
    #expect(schema["IndexedEnums"]?["value"]?.isIndexed == true)
    #expect(schema["IndexedEnums"]?["optional"]?.isIndexed == true)
    #expect(realm.objects(IndexedEnums.self).filter("value == 5").count == 1)
  }

  /// ...and a managed object's cannot: "Primary key can't be changed after an object is inserted."
  @Test func managedPrimaryKeysCannotChangeByName() async {
    let bySubscript = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try objectAPIRealm()
      try realm.write {
        let object = realm.create(PrimaryIntEnum.self, value: [IntEnum.value1])
        object["pk"] = IntEnum.value2
      }
    }
    #expect(stderrText(bySubscript).contains("Primary key can't be changed"))
    #expect(stderrText(bySubscript).contains("after an object is inserted."))
    let byKVC = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try objectAPIRealm()
      try realm.write {
        let object = realm.create(PrimaryOptionalString.self, value: ["a"])
        object.setValue(nil, forKey: "pk")
      }
    }
    #expect(stderrText(byKVC).contains("after an object is inserted."))
  }

  /// `add(_:update: .modified)` updates the embedded objects of the existing object in place;
  /// `.all` replaces them, so the old ones are invalidated (ModernObjectCreationTests
  /// testAddAndUpdateChangedEmbedded / testAddAndUpdateEmbedded).
  @Test func updatePoliciesAndEmbeddedObjects() throws {
    let realm = try objectAPIRealm()
    let first = EmbeddedParent(value: ["pk": 1, "object": [1], "array": [[2], [3]]])
    try realm.write { realm.add(first) }
    let oldChild = try #require(first.object)
    let oldElement = first.array[0]
    try realm.write {
      realm.add(EmbeddedParent(value: ["pk": 1, "object": [11], "array": [[12], [13]]]), update: .modified)
    }
    #expect(!oldChild.isInvalidated && oldChild.value == 11)
    #expect(!oldElement.isInvalidated && oldElement.value == 12)
    #expect(first.array.map(\.value) == [12, 13])
    #expect(realm.objects(EmbeddedChild.self).count == 3)
    try realm.write {
      realm.add(EmbeddedParent(value: ["pk": 1, "object": [21], "array": [[22]]]), update: .all)
    }
    #expect(oldChild.isInvalidated && oldElement.isInvalidated)
    #expect(first.object?.value == 21 && first.array.map(\.value) == [22])
    #expect(realm.objects(EmbeddedChild.self).count == 2)
  }

  /// Updating by `create` sets a nullable property to nil when given NSNull, and leaves the
  /// properties it is not given (Realm.create docs).
  @Test func createWithUpdateAndNSNullClearsOptionals() throws {
    let realm = try objectAPIRealm()
    let pk = ObjectId.generate()
    try realm.write {
      realm.create(ModernAllTypesObject.self, value: ["pk": pk, "optStringCol": "x", "optIntCol": 5, "intCol": 7])
      realm.create(ModernAllTypesObject.self, value: ["pk": pk, "optStringCol": NSNull()], update: .modified)
    }
    let object = try #require(realm.object(ofType: ModernAllTypesObject.self, forPrimaryKey: pk))
    #expect(object.optStringCol == nil)
    #expect(object.optIntCol == 5 && object.intCol == 7)
  }

  /// `create` with an update policy on a class without a primary key fails (ObjectCreationTests.mm
  /// testCreateOrUpdateWithoutPKThrows: "'DogObject' does not have a primary key").
  @Test func createWithUpdateWithoutAPrimaryKeyFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try objectAPIRealm()
      try realm.write { realm.create(CompanyDog.self, value: ["Rex", 1], update: .all) }
    }
    #expect(stderrText(result).contains("'CompanyDog' does not have a primary key and can not be updated"))
  }

  /// `create` from a managed object of another Realm copies it, embedded objects included
  /// (ModernObjectCreationTests.testCreateEmbeddedFromManagedObjectInDifferentRealm).
  @Test func createFromAnotherRealmsObjectCopiesIt() throws {
    let realmA = try objectAPIRealm()
    let realmB = try objectAPIRealm()
    let parent = try realmA.write {
      realmA.create(EmbeddedParent.self, value: ["pk": 1, "object": [5], "array": [[9], [10]]])
    }
    let copy = try realmB.write { realmB.create(EmbeddedParent.self, value: parent) }
    #expect(copy.realm == realmB && parent.realm == realmA)
    #expect(copy.object?.value == 5 && copy.array.map(\.value) == [9, 10])
    #expect(realmB.objects(EmbeddedChild.self).count == 3)
  }

  /// Writing a property of a deleted object fails with "Object has been deleted or invalidated."
  @Test func writingADeletedObjectFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try objectAPIRealm()
      try realm.write {
        let dog = realm.create(CompanyDog.self, value: ["Rex", 1])
        realm.delete(dog)
        dog.age = 2
      }
    }
    #expect(stderrText(result).contains("Object has been deleted or invalidated."))
  }

  /// Setting a managed object's property by name outside a write transaction fails with
  /// RealmSwift's text.
  @Test func subscriptSetOutsideAWriteFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try objectAPIRealm()
      let dog = try realm.write { realm.create(CompanyDog.self, value: ["Rex", 1]) }
      dog["age"] = 2
    }
    #expect(
      stderrText(result).contains(
        "Attempting to modify object outside of a write transaction - call beginWriteTransaction on an RLMRealm "
          + "instance first."))
  }

  /// `create(_:value:update: .modified)` with a dictionary for an embedded object the existing
  /// object holds updates that embedded object in place; `.all` replaces it.
  @Test func createModifiedUpdatesEmbeddedObjectsInPlace() throws {
    let realm = try objectAPIRealm()
    let parent = try realm.write { realm.create(EmbeddedParent.self, value: ["pk": 1, "object": [1]]) }
    let child = try #require(parent.object)
    try realm.write {
      realm.create(EmbeddedParent.self, value: ["pk": 1, "object": ["value": 2]], update: .modified)
    }
    #expect(!child.isInvalidated && child.value == 2)
    try realm.write { realm.create(EmbeddedParent.self, value: ["pk": 1, "object": ["value": 3]], update: .all) }
    #expect(child.isInvalidated)
    #expect(parent.object?.value == 3)
    #expect(realm.objects(EmbeddedChild.self).count == 1)
  }

  /// `create` from a managed object of the same Realm copies its embedded objects, which can
  /// have only one parent (ModernObjectCreationTests.testCreateEmbeddedFromManagedObjectInSameRealm).
  @Test func createFromAManagedObjectCopiesItsEmbeddedObjects() throws {
    let realm = try objectAPIRealm()
    try realm.write {
      let parent = realm.create(EmbeddedParent.self, value: ["pk": 1, "object": [5], "array": [[9], [10]]])
      let copy = realm.create(
        EmbeddedParent.self, value: ["pk": 2, "object": parent.object as Any, "array": parent.array])
      #expect(copy.object?.value == 5 && copy.array.map(\.value) == [9, 10])
      #expect(copy.object?.isSameObject(as: parent.object) == false)
      #expect(parent.object?.value == 5 && parent.array.count == 2)
    }
    #expect(realm.objects(EmbeddedChild.self).count == 6)
  }

  /// When updating, keys of a dictionary that are not properties are ignored, as when creating
  /// (ObjectCreationTests.mm testCreateWithDictionary: "extra fields are okay").
  @Test func createWithUpdateIgnoresUnknownKeys() throws {
    let realm = try objectAPIRealm()
    try realm.write {
      realm.create(Company.self, value: ["name": "A", "tags": ["x"]])
      realm.create(Company.self, value: ["name": "A", "tags": ["y"], "extra": 1], update: .modified)
    }
    #expect(realm.objects(Company.self).first.map { Array($0.tags) } == ["y"])
  }

  /// An array is in the order of the persisted properties, linking objects left out, for the
  /// primary key of an update too.
  @Test func arrayValuesSkipLinkingObjectsForThePrimaryKey() throws {
    let realm = try objectAPIRealm()
    try realm.write {
      realm.create(KeyedAfterLinks.self, value: [1, "a"])
      realm.create(KeyedAfterLinks.self, value: [1, "b"], update: .modified)
    }
    #expect(realm.objects(KeyedAfterLinks.self).count == 1)
    #expect(realm.object(ofType: KeyedAfterLinks.self, forPrimaryKey: 1)?.value == "b")
  }

  /// `.modified` on a list of embedded objects updates the elements at the same positions in
  /// place, adds the extra ones and deletes the ones no longer there.
  @Test func modifiedUpdateOfAnEmbeddedListKeepsPositions() throws {
    let realm = try objectAPIRealm()
    let parent = EmbeddedParent(value: ["pk": 1, "array": [[1], [2], [3]]])
    try realm.write { realm.add(parent) }
    let first = parent.array[0]
    let third = parent.array[2]
    try realm.write { realm.add(EmbeddedParent(value: ["pk": 1, "array": [[10], [20]]]), update: .modified) }
    #expect(!first.isInvalidated && first.value == 10)
    #expect(third.isInvalidated)
    #expect(parent.array.map(\.value) == [10, 20])
    try realm.write { realm.add(EmbeddedParent(value: ["pk": 1, "array": [[1], [2], [3]]]), update: .modified) }
    #expect(parent.array.map(\.value) == [1, 2, 3] && first.value == 1)
    #expect(realm.objects(EmbeddedChild.self).count == 3)
  }

  // MARK: Thread confinement

  /// A Realm and its objects belong to the thread that opened it: using them from another
  /// plain thread (or dispatch queue) fails with "Realm accessed from incorrect thread." (Shoal
  /// does not hold Swift concurrency tasks, which change threads, to it) (RLMRealm verifyThread; the
  /// `Realm` docs: "Realm instances ... cannot be shared across threads or dispatch queues.
  /// Trying to do so will cause an exception to be thrown.")
  @Test func usingAnObjectOnAnotherThreadFails() async {
    let read = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try objectAPIRealm()
      let dog = try realm.write { realm.create(CompanyDog.self, value: ["Rex", 1]) }
      let box = UncheckedBox(dog)
      _ = try resultOnOtherThread { box.value.age }
    }
    #expect(stderrText(read).contains("Realm accessed from incorrect thread."))
    let write = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try objectAPIRealm()
      let box = UncheckedBox(realm)
      try resultOnOtherThread { try box.value.write { _ = box.value.create(CompanyDog.self) } }
    }
    #expect(stderrText(write).contains("Realm accessed from incorrect thread."))
  }

  /// Frozen objects, and Realms opened on each thread, are not confined.
  @Test func frozenObjectsAndPerThreadRealmsWorkAcrossThreads() throws {
    let configuration = objectAPIConfiguration()
    let realm = try Realm(configuration: configuration)
    let dog = try realm.write { realm.create(CompanyDog.self, value: ["Rex", 1]) }
    let frozen = UncheckedBox(dog.freeze())
    #expect(try resultOnOtherThread { frozen.value.age } == 1)
    let count = try resultOnOtherThread { try Realm(configuration: configuration).objects(CompanyDog.self).count }
    #expect(count == 1)
  }

  // MARK: Values from JSON and strings; descriptions

  /// `init(value:)` takes "an array or dictionary returned from the methods in
  /// NSJSONSerialization" (Object.init(value:) docs): numbers, booleans and nested objects.
  @Test func initFromJSONSerializationOutput() throws {
    let json = Data(
      #"{"name": "Acme", "employees": [{"dogName": "Rex", "age": 3}], "tags": ["a"], "scores": {"x": 2}}"#.utf8)
    let value = try JSONSerialization.jsonObject(with: json)
    let company = Company(value: value)
    #expect(company.name == "Acme")
    #expect(company.employees.first?.dogName == "Rex" && company.employees.first?.age == 3)
    #expect(Array(company.tags) == ["a"] && company.scores["x"] == 2)
    let flags = try JSONSerialization.jsonObject(with: Data(#"{"boolCol": true, "doubleCol": 1.5, "intCol": 7}"#.utf8))
    let object = SwiftObject(value: flags)
    #expect(object.boolCol && object.doubleCol == 1.5 && object.intCol == 7)
  }

  /// A string in UUID form is accepted for a UUID property, and a decimal string or a number for a
  /// Decimal128 (RLMUtil.mm RLMValidateValue, cases UUID and Decimal128).
  @Test func uuidAndDecimalFromStringsAndNumbers() {
    let uuid = UUID()
    let object = ModernAllTypesObject(value: ["uuidCol": uuid.uuidString, "decimalCol": "12.5"])
    #expect(object.uuidCol == uuid)
    #expect(object.decimalCol == Decimal128(12.5))
    object["decimalCol"] = 3
    #expect(object.decimalCol == Decimal128(3))
  }

  /// Integers 0 and 1 are booleans, and booleans are integers (RLMUtil's numberIsBool and
  /// numberIsInteger); other integers are not booleans.
  @Test func booleansAndIntegersConvert() async {
    let object = SwiftObject(value: ["boolCol": 1, "intCol": true])
    #expect(object.boolCol && object.intCol == 1)
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = SwiftObject(value: ["boolCol": 2])
    }
    #expect(stderrText(result).contains("' for 'bool' property 'SwiftObject.boolCol'."))
  }

  /// An object's description prints a `Data` property as its first bytes in hex and its length
  /// (RLMObjectBase descriptionWithMaxDepth; ObjectTests.testDescription: `binaryCol = <.*61.*>;`).
  @Test func descriptionOfDataProperties() {
    let description = SwiftObject(value: ["binaryCol": Data("abcde".utf8)]).description
    #expect(description.contains("\tbinaryCol = <61626364 65 — 5 total bytes>;\n"), "\(description)")
    #expect(description.hasPrefix("SwiftObject {\n\tboolCol = 0;\n\tintCol = 123;\n\tfloatCol = 1.23;\n"))
  }

  /// Every accessor of a deleted object describes itself as "[invalid object]" (RLMObjectBase
  /// description), not only the one it was deleted through.
  @Test func descriptionOfAnotherAccessorOfADeletedObject() throws {
    let realm = try objectAPIRealm()
    let dog = try realm.write { realm.create(CompanyDog.self, value: ["Rex", 1]) }
    let other = try #require(realm.objects(CompanyDog.self).first)
    try realm.write { realm.delete(dog) }
    #expect(other.isInvalidated)
    #expect(other.description == "[invalid object]")
  }

  /// `value(forKeyPath:)` and `setValue(_:forKeyPath:)` (NSObject key-value coding, which
  /// RealmSwift objects inherit) follow links, and through a list read each element.
  @Test func keyPathsFollowLinks() throws {
    let owner = DogOwner(value: ["Ann", ["Rex", 3]])
    #expect(owner.value(forKeyPath: "dog.dogName") as? String == "Rex")
    owner.setValue(4, forKeyPath: "dog.age")
    #expect(owner.dog?.age == 4)
    let company = Company(value: ["Acme", [["Rex", 1], ["Fido", 2]]])
    #expect(
      (company.value(forKeyPath: "employees.dogName") as? [Any])?.compactMap { $0 as? String } == ["Rex", "Fido"])
    let realm = try objectAPIRealm()
    try realm.write { realm.add(owner) }
    #expect(owner.value(forKeyPath: "dog.age") as? Int == 4)
    try realm.write { owner.setValue("Max", forKeyPath: "dog.dogName") }
    #expect(owner.dog?.dogName == "Max")
  }

  /// `asyncRefresh()` and `asyncWrite(_:)` run on their caller's executor (RealmSwift's inherit
  /// it), so a Realm opened on the main actor's thread can use them there.
  @MainActor
  @Test func asyncRefreshAndAsyncWriteStayOnTheCallersThread() async throws {
    let realm = try Realm(configuration: objectAPIConfiguration())
    _ = await realm.asyncRefresh()
    let count = try await realm.asyncWrite {
      realm.create(CompanyDog.self, value: ["Rex", 1])
      return realm.objects(CompanyDog.self).count
    }
    #expect(count == 1)
    #expect(realm.objects(CompanyDog.self).first?.dogName == "Rex")
  }

  /// `Property.columnName` is the name `propertiesMapping()` gives, the property's name
  /// otherwise; queries and key-value coding keep using the public name (Property.columnName
  /// docs; Object.propertiesMapping docs).
  @Test func columnNameFollowsPropertiesMapping() throws {
    let realm = try objectAPIRealm()
    let schema = try #require(realm.schema["Mapped"])
    #expect(schema["firstName"]?.columnName == "first_name")
    #expect(schema["firstName"]?.name == "firstName")
    #expect(schema["age"]?.columnName == "age")
    #expect(schema.description.contains("\tfirstName {\n\t\ttype = string;\n\t\tcolumnName = first_name;\n"))
    #expect(Mapped().objectSchema["firstName"]?.columnName == "first_name")
    #expect(schema == Mapped.sharedSchema())
    try realm.write { realm.create(Mapped.self, value: ["firstName": "Ann", "age": 3]) }
    #expect(realm.objects(Mapped.self).filter("firstName == 'Ann'").count == 1)
    #expect(realm.objects(Mapped.self).first?["firstName"] as? String == "Ann")
  }
}

/// Hands a value to another thread in a test that checks what happens there.
private final class UncheckedBox<Value>: @unchecked Sendable {  // safe: tests hand it over once
  let value: Value
  init(_ value: Value) { self.value = value }
}
