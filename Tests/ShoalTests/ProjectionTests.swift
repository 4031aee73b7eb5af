import Foundation
import Shoal
import Testing

final class PersonProjection: Projection<Person> {
  @Projected(\Person.name) var displayName
  @Projected(\Person.age) var years
  @Projected(\Person.dog?.name) var dogName
  @Projected(\Person.dogs.projectTo.name) var dogNames: ProjectedCollection<String>
}

@Suite("Projections")
struct ProjectionTests {
  @Test func projectionsReadWriteQueryAndObserve() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      let p = Person(id: 1, name: "Ada", age: 36)
      p.dog = Dog(value: ["name": "Rex"])
      p.dogs.append(objectsIn: [Dog(value: ["name": "a"]), Dog(value: ["name": "b"])])
      realm.add(p)
      realm.add(Person(id: 2, name: "Bo", age: 5))
    }
    let projections: Results<PersonProjection> = realm.objects(PersonProjection.self)
    #expect(projections.count == 2)
    let ada = try #require(projections.filter("age > 10").first)
    #expect(ada.displayName == "Ada" && ada.years == 36 && ada.dogName == "Rex")
    #expect(Array(ada.dogNames) == ["a", "b"])
    #expect(ada.rootObject.id == 1)
    var seen: [[String]] = []
    let token = ada.observe { change in
      if case .change(let projection, let properties) = change {
        #expect(projection.displayName == "Ada L.")
        seen.append(properties.map(\.name))
      }
    }
    try realm.write { ada.displayName = "Ada L." }
    #expect(ada.rootObject.name == "Ada L.")
    #expect(seen == [["displayName"]])
    // Properties that are not projected do not notify.
    try realm.write { ada.rootObject.nickname = "x" }
    #expect(seen.count == 1)
    #expect(ada.freeze().isFrozen)
    withExtendedLifetime(token) {}
  }

  /// A live projection is not equal to its frozen copy; freezing a frozen one gives itself.
  @Test func aProjectionIsNotEqualToItsFrozenCopy() throws {
    let realm = try Realm(configuration: fileConfiguration())
    try realm.write { realm.add(Person(id: 1, name: "Ada", age: 36)) }
    let projection = try #require(realm.objects(PersonProjection.self).first)
    let frozen = projection.freeze()
    #expect(projection != frozen)
    #expect(frozen == frozen.freeze())
    #expect(projection == realm.objects(PersonProjection.self).first)
  }

  /// Descriptions as RealmSwift prints them: each projected property with its key path.
  @Test func descriptionsNameEachPropertyWithItsKeyPath() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      let p = Person(id: 1, name: "Ada", age: 36)
      p.dog = Dog(value: ["name": "Rex"])
      p.dogs.append(objectsIn: [Dog(value: ["name": "a"]), Dog(value: ["name": "b"])])
      realm.add(p)
    }
    let ada = try #require(realm.objects(PersonProjection.self).first)
    let text = ada.description
    #expect(text.hasPrefix("PersonProjection<Person> <0x"))
    #expect(text.contains(" {\n\t\tdisplayName(\\.name) = Ada;\n\tyears(\\.age) = 36;\n"))
    #expect(text.contains("\tdogName(\\.dog.name) = Optional(\"Rex\");\n"))
    #expect(text.hasSuffix("\tdogNames(\\.dogs) = ProjectedCollection<String> {\n\t[0] a\n\t[1] b\n};\n}"))
    #expect(ada.dogNames.description == "ProjectedCollection<String> {\n\t[0] a\n\t[1] b\n}")
  }
}
