import Foundation
import Testing

@testable import Shoal

/// Queries into the lists and dictionaries a mixed (`AnyRealmValue`) property holds, nested as
/// deep as they go: by position, by key, and over every element (`.any`, `[%K]` with `#any`).
@Suite("Mixed subscripts in queries")
struct MixedSubscriptQueryTests {
  /// Three objects: one holding nested lists, one nested dictionaries, one a plain number.
  private func realm() throws -> Realm {
    let realm = try Realm(configuration: memoryConfiguration())
    let innermost = AnyRealmValue.fromArray([.string("ann"), .bool(true)])
    let middle = AnyRealmValue.fromArray([innermost, .double(1.5)])
    let lists = AnyRealmValue.fromArray([AnyRealmValue.fromArray([middle, .int(7)]), .float(2.5)])
    let inner = AnyRealmValue.fromDictionary(["name": .string("bo"), "ok": .bool(false)])
    let dictionaries = AnyRealmValue.fromDictionary([
      "outer": .fromDictionary(["inner": inner, "n": .int(7)]), "f": .float(2.5),
    ])
    try realm.write {
      for value in [lists, dictionaries, .int(7)] {
        let object = AllTypes()
        object._id = ObjectId.generate()
        object.any = value
        realm.add(object)
      }
    }
    return realm
  }

  @Test func typedQueriesSubscriptNestedCollections() throws {
    let objects = try realm().objects(AllTypes.self)
    #expect(objects.where { $0.any[1] == .float(2.5) }.count == 1)
    #expect(objects.where { $0.any[0][1] == .int(7) }.count == 1)
    #expect(objects.where { $0.any[0][0][1] == .double(1.5) }.count == 1)
    #expect(objects.where { $0.any[0][0][0][0] == .string("ann") }.count == 1)
    #expect(objects.where { $0.any[0][0][0].any == .bool(true) }.count == 1)
    #expect(objects.where { $0.any.any == .float(2.5) }.count == 2)
    #expect(objects.where { $0.any["outer"]["inner"]["name"] == .string("bo") }.count == 1)
    #expect(objects.where { $0.any["outer"].any == .int(7) }.count == 1)
    // A position or key that is not there matches nothing, whatever the operator.
    #expect(objects.where { $0.any[0][1] != .int(7) }.count == 0)
    #expect(objects.where { $0.any[5] == .int(7) }.count == 0)
    #expect(objects.where { $0.any["#any"] == .float(2.5) }.count == 0)
    #expect(objects.where { $0.any[0][1] >= .int(7) }.count == 1)
  }

  @Test func aMapOfMixedValuesIsSubscriptedThroughItsValues() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      for value: AnyRealmValue in [.fromArray([.int(1), .string("x")]), .int(1)] {
        let object = AllTypes()
        object._id = ObjectId.generate()
        object.anyMap["k"] = value
        realm.add(object)
      }
    }
    let objects = realm.objects(AllTypes.self)
    #expect(objects.where { $0.anyMap["k"][1] == .string("x") }.count == 1)
    #expect(objects.where { $0.anyMap["k"].any == .int(1) }.count == 1)
    #expect(objects.filter("anyMap['k'][0] == 1").count == 1)
    #expect(objects.filter("anyMap['k'] == 1").count == 1)
    #expect(objects.filter("anyMap['missing'][0] == 1").count == 0)
  }

  @Test func typedQueriesBuildRealmSwiftsPredicates() {
    let predicate: (Query<AllTypes>) -> Query<Bool> = { $0.any[0].any == .int(1) }
    let (format, arguments) = predicate(Query<AllTypes>())._constructPredicate()
    #expect(format == "(any[%@][%K] == %@)")
    #expect(arguments.count == 3 && arguments[0] as? Int == 0 && arguments[1] as? String == "#any")
  }

  @Test func theQueryLanguageSubscriptsNestedCollections() throws {
    let objects = try realm().objects(AllTypes.self)
    #expect(objects.filter("any[0][1] == 7").count == 1)
    #expect(objects.filter("any[%@][%@] == %@", 0, 1, 7).count == 1)
    #expect(objects.filter("any[*] == 2.5").count == 2)
    #expect(objects.filter("any[%K] == %@", "#any", 2.5).count == 2)
    #expect(objects.filter("any['outer']['n'] == 7").count == 1)
    #expect(objects.filter("any[0][0][0][0] BEGINSWITH 'a'").count == 1)
  }
}
