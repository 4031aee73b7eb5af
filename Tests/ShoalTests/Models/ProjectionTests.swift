import Foundation
import Shoal
import Testing

final class PersonProjection: Projection<Person> {
  @Projected(\Person.name) var displayName
  @Projected(\Person.age) var years
  @Projected(\Person.dog?.name) var dogName
  @Projected(\Person.dogs.projectTo.name) var dogNames: ProjectedCollection<String>
  var initial: String { String(displayName.prefix(1)) }
}

final class IdentifiedPersonProjection: Projection<Person>, ObjectKeyIdentifiable {
  @Projected(\Person.name) var displayName
}

@Suite("Projections")
struct ProjectionTests {
  @Test func aProjectionsIdentityIsItsObjects() throws {
    var config = memoryConfiguration()
    config.objectTypes = [Person.self, Dog.self, Address.self]
    let realm = try Realm(configuration: config)
    try realm.write {
      realm.add(Person(id: 1, name: "a", age: 1))
      realm.add(Person(id: 2, name: "b", age: 1))
    }
    let projections = realm.objects(IdentifiedPersonProjection.self)
    #expect(projections[0].id == projections[0].id)
    #expect(projections[0].id != projections[1].id)
    let object = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
    #expect(IdentifiedPersonProjection(projecting: object).id == projections.first { $0.displayName == "a" }?.id)
  }

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

@Suite("Projections: collections, key paths, actors and references")
struct ProjectionCollectionTests {
  private func realmWithAda() throws -> (Realm, PersonProjection) {
    let realm = try Realm(configuration: fileConfiguration())
    try realm.write {
      let p = Person(id: 1, name: "Ada", age: 36)
      p.dogs.append(objectsIn: [Dog(value: ["name": "a"]), Dog(value: ["name": "b"])])
      realm.add(p)
    }
    return (realm, try #require(realm.objects(PersonProjection.self).first))
  }

  @Test func aProjectedCollectionWritesThroughFreezesAndThaws() throws {
    let (realm, ada) = try realmWithAda()
    let names = ada.dogNames
    #expect(names.realm != nil && !names.isInvalidated && !names.isFrozen)
    #expect(names.index(of: "b") == 1)
    try realm.write { names[0] = "Ace" }
    #expect(ada.rootObject.dogs[0].name == "Ace")
    let frozen = names.freeze()
    #expect(frozen.isFrozen && Array(frozen) == ["Ace", "b"])
    try realm.write { ada.rootObject.dogs.append(Dog(value: ["name": "c"])) }
    #expect(Array(frozen) == ["Ace", "b"])
    #expect(frozen.thaw().map(Array.init) == ["Ace", "b", "c"])
    // Readable from another thread when frozen.
    nonisolated(unsafe) let shared = frozen
    #expect(try resultOnOtherThread { Array(shared) } == ["Ace", "b"])
    try realm.write { realm.delete(ada.rootObject) }
    #expect(names.isInvalidated)
  }

  @Test func aProjectedCollectionIsObservedLikeItsList() throws {
    let (realm, ada) = try realmWithAda()
    var changes: [String] = []
    let token = ada.dogNames.observe { change in
      switch change {
      case .initial(let names): changes.append("initial \(Array(names))")
      case .update(let names, let deletions, let insertions, let modifications):
        changes.append("\(Array(names)) -\(deletions) +\(insertions) ~\(modifications)")
      case .error(let error): changes.append("error \(error)")
      }
    }
    try realm.write { ada.rootObject.dogs[1].name = "B" }
    try realm.write { ada.rootObject.dogs.remove(at: 0) }
    #expect(changes == ["initial [\"a\", \"b\"]", "[\"a\", \"B\"] -[] +[] ~[1]", "[\"B\"] -[0] +[] ~[]"])
    token.invalidate()
  }

  @Test func projectionsAreObservedBySwiftKeyPaths() throws {
    let (realm, ada) = try realmWithAda()
    var seen: [[String]] = []
    let token = ada.observe(keyPaths: [\PersonProjection.years]) { change in
      if case .change(_, let properties) = change { seen.append(properties.map(\.name)) }
    }
    try realm.write { ada.rootObject.name = "Ada L." }
    try realm.write { ada.rootObject.age = 37 }
    #expect(seen == [["years"]])
    token.invalidate()
  }

  @Test func projectionsAreSectionedByWhatTheirKeyPathsRead() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      for (id, name) in ["Bo", "Ada", "Al", "Cy"].enumerated() { realm.add(Person(id: id, name: name, age: id)) }
    }
    let sectioned = realm.objects(PersonProjection.self).sectioned(by: \.initial, ascending: false)
    #expect(sectioned.allKeys == ["C", "B", "A"])
    #expect(sectioned[2].map(\.displayName) == ["Al", "Ada"])
    let byName = realm.objects(PersonProjection.self).sectioned(
      by: \.initial, sortDescriptors: [SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "age")])
    #expect(byName.allKeys == ["A", "B", "C"])
  }

  @Test func projectionsCrossThreadsByReference() throws {
    let (realm, ada) = try realmWithAda()
    let reference = ThreadSafeReference(to: ada)
    let configuration = realm.configuration
    let name = try resultOnOtherThread { () -> String? in
      try Realm(configuration: configuration).resolve(reference)?.displayName
    }
    #expect(name == "Ada")
  }

  @Test(.timeLimit(.minutes(1))) func projectionsAndCollectionsAreObservedOnActors() async throws {
    let (realm, ada) = try realmWithAda()
    let events = EventRecorder()
    let token = await ada.observe(keyPaths: ["years"], on: EventActor.shared) { _, change in
      if case .change(let projection, let properties) = change {
        events.record("\(properties.map(\.name)) \(projection.years)")
      }
    }
    let collectionToken = await realm.objects(Person.self).observe(on: EventActor.shared) { _, change in
      if case .update(let people, _, _, let modifications) = change {
        events.record("people \(people.count) ~\(modifications)")
      }
    }
    try realm.write { ada.rootObject.age = 40 }
    #expect(await events.wait(for: 2).sorted() == ["[\"years\"] 40", "people 1 ~[0]"])
    token.invalidate()
    collectionToken.invalidate()
  }
}

@Suite("Notification tokens")
struct NotificationTokenTests {
  @Test func invalidateSaysWhetherTheTokenWasValid() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let token = realm.objects(Person.self).observe { _ in }
    #expect(token.invalidate())
    #expect(!token.invalidate())
  }

  @Test(.timeLimit(.minutes(1))) func aCancelledTaskRegistersNoObservation() async throws {
    let realm = try Realm(configuration: fileConfiguration())
    let people = realm.objects(Person.self)
    let task = Task { () -> Bool in
      withUnsafeCurrentTask { $0?.cancel() }
      let token = await people.observe(on: EventActor.shared) { _, _ in Issue.record("registered") }
      return token.invalidate()
    }
    #expect(await task.value == false)
  }
}

@globalActor actor EventActor {
  static let shared = EventActor()
}

/// Collects events from other isolation domains; `wait(for:)` returns once `count` arrived.
final class EventRecorder: Sendable {
  private let stream: AsyncStream<String>
  private let continuation: AsyncStream<String>.Continuation
  init() { (stream, continuation) = AsyncStream.makeStream() }
  func record(_ event: String) { continuation.yield(event) }
  func wait(for count: Int) async -> [String] {
    var events: [String] = []
    for await event in stream {
      events.append(event)
      if events.count == count { break }
    }
    return events
  }
}
