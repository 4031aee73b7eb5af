import Foundation
import Shoal
import Testing

/// RealmSwift code that ports by changing the import: names it uses are visible with
/// `import Shoal` alone.
@Suite("Porting: RealmSwift code compiles unchanged")
struct PortingTests {
  @Test func autoreleasepoolRunsItsBody() throws {
    let config = memoryConfiguration()
    let count = try autoreleasepool { () throws -> Int in
      let realm = try Realm(configuration: config)
      try realm.write { realm.add(Counter(value: ["a", 1])) }
      return realm.objects(Counter.self).count
    }
    #expect(count == 1)
  }

  @Test func logLevelsAreNamedAsInRealmSwift() {
    let levels: [LogLevel] = [.off, .fatal, .error, .warn, .info, .detail, .debug, .trace, .all]
    #expect(levels.count == 9)
    let logger = Logger(level: .off) { (_: LogLevel, _: String) in }
    #expect(logger.level == .off)
  }

  @Test func mixedValuesFromArraysAndDictionaries() throws {
    let object = AllTypes()
    object.any = .fromArray([.int(1), .string("two")])
    #expect(object.any.listValue.map { Array($0) } == [.int(1), .string("two")])
    object.any = .fromDictionary(["k": .bool(true)])
    #expect(object.any.dictionaryValue?["k"] == .bool(true))
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write { realm.add(object) }
    #expect(object.any.dictionaryValue?["k"] == .bool(true))
  }

  @MainActor
  @Test func realmOpenIsolatedToTheCaller() async throws {
    let realm = try await Realm.open(configuration: memoryConfiguration(), downloadBeforeOpen: .never)
    try await realm.asyncWrite { realm.add(Counter(value: ["a", 1])) }
    #expect(realm.objects(Counter.self).count == 1)
  }
}

@Suite("Porting: generic code over collections and key paths")
struct GenericPortingTests {
  /// Generic code observes any Realm collection through the protocol, as with RealmSwift's.
  func observeAny<C: RealmCollection>(_ collection: C, _ seen: @escaping (Int) -> Void) -> NotificationToken {
    collection.observe(keyPaths: nil, on: nil) { change in
      if case .update(let c, _, _, _) = change { seen(c.count) }
      if case .initial(let c) = change { seen(c.count) }
    }
  }

  func frozenCount<C: RealmCollection>(_ collection: C) -> Int { collection.freeze().count }

  /// Generic code with the defaults, and with Swift key paths.
  func observeWithDefaults<C: RealmCollection>(_ collection: C, _ seen: @escaping (Int) -> Void) -> [NotificationToken]
  where C.Element == Dog {
    [
      collection.observe { if case .initial(let c) = $0 { seen(c.count) } },
      collection.observe(keyPaths: [\Dog.name]) { if case .initial(let c) = $0 { seen(c.count) } },
    ]
  }

  @Test func collectionsAreObservableAndThreadConfinedInGenericCode() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let owner = Person(id: 1, name: "o", age: 1)
    try realm.write { realm.add(owner) }
    var counts: [Int] = []
    let token = observeAny(owner.dogs) { counts.append($0) }
    try realm.write { owner.dogs.append(Dog(value: ["name": "Rex"])) }
    #expect(counts == [0, 1])
    #expect(frozenCount(realm.objects(Person.self)) == 1)
    var defaults: [Int] = []
    let tokens = observeWithDefaults(owner.dogs) { defaults.append($0) }
    #expect(defaults == [1, 1])
    tokens.forEach { $0.invalidate() }
    token.invalidate()
  }

  @Test func keyPathNames() {
    #expect(_name(for: \Person.dog?.name) == "dog.name")
    #expect(_name(for: \Person.age) == "age")
    #expect(_name(for: \PersonProjection.years) == "age")
    // Through elements of collections, as RealmSwift traces them.
    #expect(_name(for: \Person.dogs[0].name) == "dogs.name")
    #expect(_name(for: \Dog.walkers[0].dogs[0].owner?.name) == "walkers.dogs.owner.name")
    #expect(_name(for: \Person.tags[0]) == "tags")
    #expect(_name(for: \Person.attributes["x"]) == "attributes")
    // A key path ends at a mapped type.
    #expect(_name(for: \Reading.location.x) == "location")
  }
}
