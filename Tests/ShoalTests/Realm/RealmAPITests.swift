import Foundation
import Shoal
import Testing

// Conformance with RealmSwift 10.x's documented behaviour: object initialisers, KVC subscripts,
// schema introspection and the exact texts of its errors. Errors that RealmSwift raises as
// exceptions (Shoal: fatal errors) are checked with exit tests, whose standard error must
// contain RealmSwift's message.

// MARK: - Models (nested in the suite; every Realm here lists them in `objectTypes`)

extension RealmAPITests {
  enum Color: String, PersistableEnum {
    case red, green
  }

  enum Rank: Int, PersistableEnum {
    case low = 1, high = 2
  }

  final class PostalAddress: EmbeddedObject {
    @Persisted var street = ""
    @Persisted var city = ""
  }

  final class ClubDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<ClubMember>
  }

  final class ClubMember: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
    @Persisted var nickname: String?
    @Persisted var bestFriend: ClubDog?
    @Persisted var dogs: List<ClubDog>
    @Persisted var tags: List<String>
    @Persisted var optionalTags: List<String?>
    @Persisted var luckyNumbers: MutableSet<Int>
    @Persisted var scores: Map<String, Double>
    @Persisted var address: PostalAddress?
  }

  /// A class without a primary key.
  final class UnkeyedNote: Object {
    @Persisted var text = ""
  }

  final class StringKeyed: Object {
    @Persisted(primaryKey: true) var key = ""
    @Persisted var value = 0
  }

  final class AllPropertyTypes: Object {
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
    @Persisted var decimal: Decimal128
    @Persisted var uuid: UUID
    @Persisted var any: AnyRealmValue
    @Persisted var color = Color.red
    @Persisted var rank: Rank?
    @Persisted var optDouble: Double?
    @Persisted var optDate: Date?
    @Persisted var dogMap: Map<String, ClubDog?>
    @Persisted var dogSet: MutableSet<ClubDog>
  }

  /// The classes every Realm of these tests lists in `objectTypes`.
  static let modelTypes: [ObjectBase.Type] = [
    PostalAddress.self, ClubDog.self, ClubMember.self, UnkeyedNote.self, StringKeyed.self, AllPropertyTypes.self,
  ]
}

/// A fresh in-memory configuration holding only the classes above.
private func apiConfiguration() -> Realm.Configuration {
  Realm.Configuration(inMemoryIdentifier: "conformance-" + UUID().uuidString, objectTypes: RealmAPITests.modelTypes)
}

private func apiRealm() throws -> Realm { try Realm(configuration: apiConfiguration()) }

@Suite("Realm API")
struct RealmAPITests {
  // MARK: Object.init(value:)

  @Test func initFromDictionarySetsGivenPropertiesAndKeepsDefaults() {
    let person = ClubMember(value: ["id": 1, "name": "Ann"])
    #expect(person.realm == nil)
    #expect(person.id == 1)
    #expect(person.name == "Ann")
    #expect(person.age == 0)
    #expect(person.nickname == nil)
    #expect(person.tags.isEmpty)
  }

  @Test func initFromArrayUsesPropertyOrder() {
    let dog = ClubDog(value: ["Rex", 3])
    #expect(dog.name == "Rex")
    #expect(dog.age == 3)
  }

  @Test func initFromNestedValuesBuildsLinkedObjects() {
    let person = ClubMember(value: [
      "id": 2,
      "bestFriend": ["name": "Fido", "age": 2],
      "dogs": [["Rex", 1], ["name": "Spot"]],
      "tags": ["a", "b"],
      "address": ["street": "Main", "city": "Oslo"],
    ])
    #expect(person.bestFriend?.name == "Fido")
    #expect(person.bestFriend?.age == 2)
    #expect(person.dogs.map(\.name) == ["Rex", "Spot"])
    #expect(person.dogs[0].age == 1)
    #expect(Array(person.tags) == ["a", "b"])
    #expect(person.address?.city == "Oslo")
  }

  @Test func initFromObjectCopiesItsValues() throws {
    let original = ClubDog(value: ["name": "Rex", "age": 4])
    let copy = ClubDog(value: original)
    #expect(copy !== original)
    #expect(copy.name == "Rex" && copy.age == 4)

    // A copy of a managed object is a new, unmanaged object.
    let realm = try apiRealm()
    try realm.write { realm.add(original) }
    let unmanaged = ClubDog(value: original)
    #expect(unmanaged.realm == nil)
    #expect(unmanaged.name == "Rex")
  }

  /// RealmSwift accepts fewer array values than properties; the rest keep their defaults.
  @Test func initFromShorterArrayLeavesRemainingDefaults() async {
    await #expect(processExitsWith: .success) {
      let person = ClubMember(value: [7, "Bo"])
      #expect(person.id == 7)
      #expect(person.name == "Bo")
      #expect(person.age == 0)
      let realm = try apiRealm()
      let created = try realm.write { realm.create(ClubMember.self, value: [3, "Cy", 40]) }
      #expect(created.id == 3 && created.name == "Cy" && created.age == 40)
    }
  }

  @Test func initFromLongerArrayFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = ClubDog(value: ["Rex", 3, "extra"])
    }
    #expect(stderrText(result).contains("Invalid array input: more values (3) than properties (2)."))
  }

  /// A dictionary is read by property name: keys that are not properties are ignored.
  @Test func initFromDictionaryIgnoresUnknownKeys() async {
    await #expect(processExitsWith: .success) {
      let dog = ClubDog(value: ["name": "Rex", "colour": "brown"])
      #expect(dog.name == "Rex")
    }
  }

  @Test func initWithValueOfWrongTypeFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = ClubDog(value: ["name": "Rex", "age": "old"])
    }
    let text = stderrText(result)
    #expect(text.contains("Invalid value 'old' of type '"))
    #expect(text.contains("' for 'int' property 'ClubDog.age'."))
  }

  @Test func initFromNonCollectionValueFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = ClubDog(value: 42)
    }
    #expect(
      stderrText(result).contains("Invalid value '42' to initialize object of type 'ClubDog': missing key 'name'"))
  }

  @Test func createCopiesValuesIntoTheRealm() throws {
    let realm = try apiRealm()
    let source = ClubDog(value: ["Rex", 5])
    let created = try realm.write { realm.create(ClubDog.self, value: source) }
    #expect(created.realm != nil)
    #expect(source.realm == nil)
    #expect(created.name == "Rex" && created.age == 5)
    let fromDictionary = try realm.write { realm.create(ClubMember.self, value: ["id": 3, "name": "Cy", "age": 40]) }
    #expect(fromDictionary.id == 3 && fromDictionary.name == "Cy" && fromDictionary.age == 40)
    #expect(fromDictionary.tags.isEmpty)
    #expect(realm.objects(ClubDog.self).count == 1)
  }

  // MARK: Subscripts and dynamic access

  @Test func unmanagedSubscriptGetsAndSets() {
    let person = ClubMember()
    #expect(person["nickname"] == nil)
    person["name"] = "Ann"
    person["age"] = 31
    person["nickname"] = "A"
    #expect(person.name == "Ann")
    #expect(person.age == 31)
    #expect(person["name"] as? String == "Ann")
    #expect(person["age"] as? Int == 31)
    #expect(person["nickname"] as? String == "A")
  }

  @Test func managedSubscriptGetsAndSetsInsideWrite() throws {
    let realm = try apiRealm()
    let person = ClubMember(value: ["id": 1, "name": "Ann", "bestFriend": ["name": "Rex"], "tags": ["a"]])
    try realm.write { realm.add(person) }
    #expect(person["name"] as? String == "Ann")
    #expect(person["nickname"] == nil)
    #expect((person["bestFriend"] as? ClubDog)?.name == "Rex")
    #expect((person["tags"] as? List<String>).map(Array.init) == ["a"])
    try realm.write {
      person["name"] = "Bea"
      person["nickname"] = "B"
      person["tags"] = ["x", "y"]
    }
    #expect(person.name == "Bea")
    #expect(person.nickname == "B")
    #expect(Array(person.tags) == ["x", "y"])
    // value(forKey:) and setValue(_:forKey:) are the same as the subscript.
    #expect(person.value(forKey: "name") as? String == "Bea")
    try realm.write { person.setValue(9, forKey: "age") }
    #expect(person.age == 9)
    #expect(person["age"] as? Int == 9)
  }

  @Test func managedSubscriptOfUnknownPropertyFails() async {
    let getResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      let person = ClubMember(value: ["id": 1])
      try realm.write { realm.add(person) }
      _ = person["bogus"]
    }
    #expect(stderrText(getResult).contains("Invalid property name 'bogus' for class 'ClubMember'."))
    let setResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      let person = ClubMember(value: ["id": 1])
      try realm.write {
        realm.add(person)
        person["bogus"] = 1
      }
    }
    #expect(stderrText(setResult).contains("Invalid property name 'bogus' for class 'ClubMember'."))
  }

  @Test func managedSubscriptSetOfWrongTypeFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      let person = ClubMember(value: ["id": 1])
      try realm.write {
        realm.add(person)
        person["age"] = "old"
      }
    }
    let text = stderrText(result)
    #expect(text.contains("Invalid value 'old' of type '"))
    #expect(text.contains("' for 'int' property 'ClubMember.age'."))
  }

  @Test func dynamicListGivesDynamicObjects() async throws {
    let realm = try apiRealm()
    let person = ClubMember(value: ["id": 1, "dogs": [["Rex", 1], ["Spot", 2]]])
    try realm.write { realm.add(person) }
    let list = person.dynamicList("dogs")
    #expect(list.count == 2)
    #expect(list[0]["name"] as? String == "Rex")
    #expect(list[1]["age"] as? Int == 2)
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      let person = ClubMember(value: ["id": 1])
      try realm.write { realm.add(person) }
      _ = person.dynamicList("noSuchList")
    }
    #expect(stderrText(result).contains("Invalid property name 'noSuchList' for class 'ClubMember'."))
  }

  @Test func primaryKeyCannotChangeAfterInsertion() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      let person = ClubMember(value: ["id": 1])
      try realm.write {
        realm.add(person)
        person.id = 2
      }
    }
    let text = stderrText(result)
    #expect(text.contains("Primary key can't be changed") && text.contains("after an object is inserted."))
  }

  // MARK: Schema introspection

  @Test func schemaListsConfiguredClasses() throws {
    let realm = try apiRealm()
    let schema = realm.schema
    #expect(
      Set(schema.objectSchema.map(\.className))
        == ["PostalAddress", "ClubDog", "ClubMember", "UnkeyedNote", "StringKeyed", "AllPropertyTypes"])
    #expect(schema["ClubMember"]?.className == "ClubMember")
    #expect(schema["NoSuchClass"] == nil)
    #expect(schema["Person"] == nil)
    #expect(schema == realm.schema)
  }

  @Test func objectSchemaPropertiesAreInDeclarationOrderWithoutLinkingObjects() throws {
    let schema = try apiRealm().schema
    #expect(schema["ClubDog"]?.properties.map(\.name) == ["name", "age"])
    #expect(
      schema["ClubMember"]?.properties.map(\.name) == [
        "id", "name", "age", "nickname", "bestFriend", "dogs", "tags", "optionalTags", "luckyNumbers", "scores",
        "address",
      ])
    let dog = try #require(schema["ClubDog"])
    #expect(dog["name"]?.name == "name")
    #expect(dog["owners"]?.type == .linkingObjects)
    #expect(dog["noSuchProperty"] == nil)
  }

  @Test func primaryKeyProperty() throws {
    let schema = try apiRealm().schema
    let personKey = try #require(schema["ClubMember"]?.primaryKeyProperty)
    #expect(personKey.name == "id")
    #expect(personKey.isPrimary)
    #expect(personKey.type == .int)
    #expect(schema["StringKeyed"]?.primaryKeyProperty?.name == "key")
    #expect(schema["StringKeyed"]?.primaryKeyProperty?.type == .string)
    #expect(schema["UnkeyedNote"]?.primaryKeyProperty == nil)
    #expect(schema["ClubMember"]?["name"]?.isPrimary == false)
  }

  @Test func propertyTypeOfEachPersistedType() throws {
    let all = try #require(try apiRealm().schema["AllPropertyTypes"])
    let expected: [(String, PropertyType)] = [
      ("_id", .objectId), ("bool", .bool), ("int", .int), ("float", .float), ("double", .double),
      ("string", .string), ("data", .data), ("date", .date), ("decimal", .decimal128), ("uuid", .UUID),
      ("any", .any), ("dogMap", .object), ("dogSet", .object),
    ]
    for (name, type) in expected {
      #expect(all[name]?.type == type, "\(name)")
    }
    let person = try #require(try apiRealm().schema["ClubMember"])
    #expect(person["bestFriend"]?.type == .object)
    #expect(person["dogs"]?.type == .object)
    #expect(person["address"]?.type == .object)
    #expect(person["tags"]?.type == .string)
    #expect(person["luckyNumbers"]?.type == .int)
    #expect(person["scores"]?.type == .double)
    // Integers of every width are `.int`; enums report their raw value's type.
    for name in ["int8", "int16", "int32", "int64"] {
      #expect(all[name]?.type == .int, "\(name)")
    }
    #expect(all["color"]?.type == .string)
    #expect(all["color"]?.isOptional == false)
    #expect(all["rank"]?.type == .int)
    #expect(all["rank"]?.isOptional == true)
  }

  @Test func propertyOptionality() throws {
    let schema = try apiRealm().schema
    let person = try #require(schema["ClubMember"])
    #expect(person["name"]?.isOptional == false)
    #expect(person["nickname"]?.isOptional == true)
    #expect(person["bestFriend"]?.isOptional == true)
    #expect(person["address"]?.isOptional == true)
    #expect(person["dogs"]?.isOptional == false)
    #expect(person["tags"]?.isOptional == false)
    #expect(person["optionalTags"]?.isOptional == true)
    #expect(schema["AllPropertyTypes"]?["optDouble"]?.isOptional == true)
    #expect(schema["AllPropertyTypes"]?["optDate"]?.isOptional == true)
    #expect(schema["AllPropertyTypes"]?["dogMap"]?.isOptional == true)
    #expect(schema["ClubDog"]?["owners"]?.isOptional == false)
  }

  @Test func propertyIndexing() throws {
    let schema = try apiRealm().schema
    let person = try #require(schema["ClubMember"])
    #expect(person["id"]?.isIndexed == true)  // primary keys are indexed
    #expect(person["name"]?.isIndexed == true)
    #expect(person["age"]?.isIndexed == false)
    #expect(person["bestFriend"]?.isIndexed == false)
    #expect(schema["AllPropertyTypes"]?["float"]?.isIndexed == false)
  }

  @Test func propertyObjectClassName() throws {
    let schema = try apiRealm().schema
    let person = try #require(schema["ClubMember"])
    #expect(person["bestFriend"]?.objectClassName == "ClubDog")
    #expect(person["dogs"]?.objectClassName == "ClubDog")
    #expect(person["address"]?.objectClassName == "PostalAddress")
    #expect(person["name"]?.objectClassName == nil)
    #expect(person["tags"]?.objectClassName == nil)
    #expect(schema["ClubDog"]?["owners"]?.objectClassName == "ClubMember")
    #expect(schema["AllPropertyTypes"]?["dogMap"]?.objectClassName == "ClubDog")
    #expect(schema["AllPropertyTypes"]?["dogSet"]?.objectClassName == "ClubDog")
  }

  @Test func propertyCollectionFlags() throws {
    let schema = try apiRealm().schema
    let person = try #require(schema["ClubMember"])
    for (name, array, set, map) in [
      ("name", false, false, false), ("bestFriend", false, false, false), ("dogs", true, false, false),
      ("tags", true, false, false), ("luckyNumbers", false, true, false), ("scores", false, false, true),
    ] {
      #expect(person[name]?.isArray == array, "\(name).isArray")
      #expect(person[name]?.isSet == set, "\(name).isSet")
      #expect(person[name]?.isMap == map, "\(name).isMap")
    }
    #expect(schema["AllPropertyTypes"]?["dogSet"]?.isSet == true)
    #expect(schema["AllPropertyTypes"]?["dogMap"]?.isMap == true)
  }

  /// RealmSwift describes a `LinkingObjects` property as an array of the origin class.
  @Test func linkingObjectsPropertyIsAnArrayOfTheOriginClass() throws {
    let owners = try #require(try apiRealm().schema["ClubDog"]?["owners"])
    #expect(owners.type == .linkingObjects)
    #expect(owners.objectClassName == "ClubMember")
    #expect(owners.isArray)
    #expect(!owners.isSet && !owners.isMap)
  }

  /// `Property.description` is RLMProperty's: the linked class right after the type.
  @Test func propertyDescriptionMatchesRLMProperty() throws {
    let person = try #require(try apiRealm().schema["ClubMember"])
    #expect(
      person["age"]?.description
        == "age {\n\ttype = int;\n\tcolumnName = age;\n\tindexed = NO;\n\tisPrimary = NO;\n\tarray = NO;\n"
        + "\tset = NO;\n\tdictionary = NO;\n\toptional = NO;\n}")
    #expect(
      person["bestFriend"]?.description
        == "bestFriend {\n\ttype = object;\n\tobjectClassName = ClubDog;\n\tlinkOriginPropertyName = (null);\n"
        + "\tcolumnName = bestFriend;\n\tindexed = NO;\n\tisPrimary = NO;\n\tarray = NO;\n\tset = NO;\n"
        + "\tdictionary = NO;\n\toptional = YES;\n}")
    // A mixed property holds nil without being optional, as RealmSwift prints it.
    let allTypes = try #require(try Realm(configuration: memoryConfiguration()).schema["AllTypes"])
    #expect(allTypes["any"]?.description.contains("type = mixed;") == true)
    #expect(allTypes["any"]?.description.contains("optional = NO;") == true)
  }

  @Test func propertyTypeRawValuesMatchRLMPropertyType() {
    #expect(PropertyType.int.rawValue == 0)
    #expect(PropertyType.bool.rawValue == 1)
    #expect(PropertyType.string.rawValue == 2)
    #expect(PropertyType.data.rawValue == 3)
    #expect(PropertyType.date.rawValue == 4)
    #expect(PropertyType.float.rawValue == 5)
    #expect(PropertyType.double.rawValue == 6)
    #expect(PropertyType.object.rawValue == 7)
    #expect(PropertyType.linkingObjects.rawValue == 8)
    #expect(PropertyType.any.rawValue == 9)
    #expect(PropertyType.objectId.rawValue == 10)
    #expect(PropertyType.decimal128.rawValue == 11)
    #expect(PropertyType.UUID.rawValue == 12)
  }

  @Test func objectSchemaOfInstancesAndClassName() throws {
    #expect(ClubMember.className() == "ClubMember")
    #expect(ClubMember().objectSchema.className == "ClubMember")
    let realm = try apiRealm()
    let person = ClubMember(value: ["id": 1])
    try realm.write { realm.add(person) }
    #expect(person.objectSchema == realm.schema["ClubMember"])
    #expect(person.objectSchema != realm.schema["ClubDog"])
    let objectClass: AnyClass = try #require(realm.schema["ClubMember"]?.objectClass)
    #expect(ObjectIdentifier(objectClass) == ObjectIdentifier(ClubMember.self))
    #expect(realm.schema["PostalAddress"]?.isEmbedded == true)
    #expect(realm.schema["ClubMember"]?.isEmbedded == false)
  }

  // MARK: Errors of adding and writing

  @Test func duplicatePrimaryKeyFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      try realm.write {
        realm.add(ClubMember(value: ["id": 1, "name": "Ann"]))
        realm.add(ClubMember(value: ["id": 1, "name": "Bea"]))
      }
    }
    #expect(
      stderrText(result).contains(
        "Attempting to create an object of type 'ClubMember' with an existing primary key value '1'."))
    let stringResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      try realm.write {
        realm.create(StringKeyed.self, value: ["a", 1])
        realm.create(StringKeyed.self, value: ["key": "a", "value": 2])
      }
    }
    #expect(
      stderrText(stringResult).contains(
        "Attempting to create an object of type 'StringKeyed' with an existing primary key value 'a'."))
  }

  @Test func updatingAClassWithoutPrimaryKeyFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      try realm.write { realm.add(UnkeyedNote(value: ["x"]), update: .modified) }
    }
    #expect(stderrText(result).contains("'UnkeyedNote' does not have a primary key and can not be updated"))
  }

  @Test func settingAPropertyOutsideAWriteTransactionFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      let dog = ClubDog(value: ["Rex", 1])
      try realm.write { realm.add(dog) }
      dog.age = 2
    }
    #expect(
      stderrText(result).contains(
        "Attempting to modify object outside of a write transaction - call beginWriteTransaction on an RLMRealm instance first."
      ))
  }

  @Test func addingOrDeletingOutsideAWriteTransactionFails() async {
    let addResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      realm.add(ClubDog(value: ["Rex", 1]))
    }
    #expect(
      stderrText(addResult).contains(
        "Can only add, remove, or create objects in a Realm in a write transaction - call beginWriteTransaction on an RLMRealm instance first."
      ))
    let deleteResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      let dog = ClubDog(value: ["Rex", 1])
      try realm.write { realm.add(dog) }
      realm.delete(dog)
    }
    #expect(
      stderrText(deleteResult).contains(
        "Can only add, remove, or create objects in a Realm in a write transaction - call beginWriteTransaction on an RLMRealm instance first."
      ))
  }

  @Test func deletedObjectIsInvalidatedAndCannotBeRead() async throws {
    let realm = try apiRealm()
    let dog = ClubDog(value: ["Rex", 1])
    try realm.write { realm.add(dog) }
    #expect(!dog.isInvalidated)
    try realm.write { realm.delete(dog) }
    #expect(dog.isInvalidated)
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      let dog = ClubDog(value: ["Rex", 1])
      try realm.write { realm.add(dog) }
      try realm.write { realm.delete(dog) }
      _ = dog.name
    }
    #expect(stderrText(result).contains("Object has been deleted or invalidated."))
  }

  @Test func addingADeletedObjectFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      let dog = ClubDog(value: ["Rex", 1])
      try realm.write { realm.add(dog) }
      try realm.write {
        realm.delete(dog)
        realm.add(dog)
      }
    }
    #expect(stderrText(result).contains("Adding a deleted or invalidated object to a Realm is not permitted"))
  }

  @Test func objectsOfOtherRealmsCannotBeAddedOrDeleted() async {
    let addResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let first = try apiRealm()
      let second = try apiRealm()
      let dog = ClubDog(value: ["Rex", 1])
      try first.write { first.add(dog) }
      try second.write { second.add(dog) }
    }
    #expect(
      stderrText(addResult).contains(
        "Object is already managed by another Realm. Use create instead to copy it into this Realm."))
    let deleteResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      try realm.write { realm.delete(ClubDog()) }
    }
    #expect(stderrText(deleteResult).contains("Can only delete an object from the Realm it belongs to."))
  }

  // MARK: Query errors

  @Test func queryOrSortOnAnUnknownPropertyFails() async {
    let queryResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      _ = realm.objects(ClubMember.self).filter("bogus == 1").count
    }
    #expect(stderrText(queryResult).contains("Property 'bogus' not found in object of type 'ClubMember'"))
    let sortResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      _ = realm.objects(ClubMember.self).sorted(byKeyPath: "bogus").count
    }
    #expect(
      stderrText(sortResult).contains("Cannot sort on key path 'bogus': property 'ClubMember.bogus' does not exist."))
  }

  // MARK: Frozen objects

  @Test func frozenObjectsAreFrozenAndThawBack() throws {
    let realm = try apiRealm()
    let dog = ClubDog(value: ["Rex", 1])
    try realm.write { realm.add(dog) }
    let frozen = dog.freeze()
    #expect(frozen.isFrozen)
    #expect(frozen.realm?.isFrozen == true)
    #expect(!dog.isFrozen)
    try realm.write { dog.age = 5 }
    #expect(frozen.age == 1)
    let thawed = try #require(frozen.thaw())
    #expect(!thawed.isFrozen)
    #expect(thawed.age == 5)
  }

  @Test func frozenObjectsCannotBeModifiedOrObserved() async {
    let modifyResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      let dog = ClubDog(value: ["Rex", 1])
      try realm.write { realm.add(dog) }
      let frozen = dog.freeze()
      frozen.age = 2
    }
    #expect(
      stderrText(modifyResult).contains(
        "Attempting to modify a frozen object - call thaw on the Object instance first."))

    let observeResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try apiRealm()
      let dog = ClubDog(value: ["Rex", 1])
      try realm.write { realm.add(dog) }
      let token = dog.freeze().observe { _ in }
      token.invalidate()
    }
    #expect(
      stderrText(observeResult).contains("Frozen Realms do not change and do not have change notifications."))
  }

  @Test func unmanagedObjectsCannotBeFrozenOrObserved() async {
    let freezeResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = ClubDog().freeze()
    }
    #expect(stderrText(freezeResult).contains("Unmanaged objects cannot be frozen."))
    let observeResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let token = ClubDog().observe { _ in }
      token.invalidate()
    }
    #expect(
      stderrText(observeResult).contains("Only objects which are managed by a Realm support change notifications"))
  }

  // MARK: Realm.Error

  @Test func realmErrorCodesMatchRLMErrorAndWriteCopyReportsFileExists() throws {
    #expect(Realm.Error.Code.fail.rawValue == 1)
    #expect(Realm.Error.Code.fileAccess.rawValue == 2)
    #expect(Realm.Error.Code.filePermissionDenied.rawValue == 3)
    #expect(Realm.Error.Code.fileExists.rawValue == 4)
    #expect(Realm.Error.Code.fileNotFound.rawValue == 5)
    #expect(Realm.Error.Code.fileFormatUpgradeRequired.rawValue == 6)
    #expect(Realm.Error.Code.incompatibleLockFile.rawValue == 8)
    #expect(Realm.Error.Code.addressSpaceExhausted.rawValue == 9)
    #expect(Realm.Error.Code.schemaMismatch.rawValue == 10)
    #expect(Realm.Error.Code.alreadyOpen.rawValue == 12)
    #expect(Realm.Error.Code.invalidInput.rawValue == 13)
    #expect(Realm.Error.Code.outOfDiskSpace.rawValue == 14)
    #expect(Realm.Error.Code.incompatibleSession.rawValue == 15)
    #expect(Realm.Error.Code.unsupportedFileFormatVersion.rawValue == 16)
    #expect(Realm.Error.Code.fileOperationFailed.rawValue == 19)
    #expect(Realm.Error.Code.invalidDatabase.rawValue == 20)
    #expect(Realm.Error.errorDomain == "io.realm")

    // Writing a copy over an existing file throws `.fileExists` with realm-core's message.
    let realm = try apiRealm()
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("conformance-\(UUID().uuidString).realm")
    try Data("occupied".utf8).write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    let error = #expect(throws: Realm.Error.self) { try realm.writeCopy(toFile: url) }
    #expect(error?.code == .fileExists)
    #expect(error?.localizedDescription == "File at path '\(url.path)' already exists.")
    var matchedByCode = false
    do {
      try realm.writeCopy(toFile: url)
    } catch Realm.Error.fileExists {
      matchedByCode = true
    } catch {
      Issue.record("unexpected error \(error)")
    }
    #expect(matchedByCode)
  }
}
