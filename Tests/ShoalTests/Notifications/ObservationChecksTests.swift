import Dispatch
import Foundation
import Shoal
import Testing

/// RealmSwift's checks before a notification block is registered, in its words.
@Suite("Notifications: what cannot be observed")
struct ObservationChecksTests {
  @Test func frozenValuesCannotBeObservedAnywhere() async {
    let message = "Frozen Realms do not change and do not have change notifications."
    let here = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: fileConfiguration())
      _ = realm.objects(Counter.self).freeze().observe { _ in }
    }
    #expect(stderrText(here).contains(message))
    let onQueue = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: fileConfiguration())
      let counter = Counter(value: ["a", 1])
      try realm.write { realm.add(counter) }
      _ = counter.freeze().observe(on: DispatchQueue(label: "q")) { _ in }
    }
    #expect(stderrText(onQueue).contains(message))
    let onActor = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: fileConfiguration())
      _ = await realm.objects(Counter.self).freeze().observe(on: MainActor.shared) { _, _ in }
    }
    #expect(stderrText(onActor).contains(message))
  }

  @Test func anInvalidKeyPathIsRealmSwiftsError() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: fileConfiguration())
      let counter = Counter(value: ["a", 1])
      try realm.write { realm.add(counter) }
      _ = counter.observe(keyPaths: ["notAProperty"]) { _ in }
    }
    #expect(
      stderrText(result).contains(
        "Invalid property name: property 'notAProperty' not found in object of type 'Counter'"))
  }

  @Test func collectionsAndObjectsCannotBeObservedInsideAWrite() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: fileConfiguration())
      try realm.write { _ = realm.objects(Counter.self).observe { _ in } }
    }
    #expect(stderrText(result).contains("Cannot create asynchronous query while in a write transaction"))
  }

  /// The Realm itself can be observed inside a write (RealmSwift allows it).
  @Test func theRealmCanBeObservedInsideAWrite() throws {
    let realm = try Realm(configuration: fileConfiguration())
    var changes = 0
    var token: NotificationToken?
    try realm.write { token = realm.observe { _, _ in changes += 1 } }
    try realm.write { realm.add(Counter(value: ["a", 1])) }
    #expect(changes >= 1)
    token?.invalidate()
  }

  @Test func readOnlyRealmsHaveNoNotifications() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      var config = fileConfiguration()
      try Realm(configuration: config).write { try Realm(configuration: config).add(Counter(value: ["a", 1])) }
      config.readOnly = true
      _ = try Realm(configuration: config).objects(Counter.self).observe { _ in }
    }
    #expect(stderrText(result).contains("Read-only Realms do not change and do not have change notifications."))
  }
}

@Suite("Notifications: key paths through linking objects")
struct BacklinkKeyPathTests {
  @Test func aKeyPathThroughLinkingObjectsReportsTheirChanges() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let dog = Dog(value: ["name": "Rex"])
    try realm.write {
      realm.add(Person(value: ["id": 1, "name": "Moe", "dogs": [dog]]))
      realm.add(Person(value: ["id": 2, "name": "Other"]))
    }
    var seen: [Seen] = []
    let token = realm.objects(Dog.self).observe(keyPaths: ["walkers.name"]) { seen.append(Seen($0)) }
    try realm.write { realm.object(ofType: Person.self, forPrimaryKey: 1)?.name = "Curley" }
    #expect(seen.last == .update(count: 1, deletions: [], insertions: [], modifications: [0]))
    // A person who does not walk the dog, or a property not in the key path, reports nothing.
    let before = seen.count
    try realm.write {
      realm.object(ofType: Person.self, forPrimaryKey: 2)?.name = "Larry"
      realm.object(ofType: Person.self, forPrimaryKey: 1)?.age = 9
    }
    #expect(seen.count == before)
    token.invalidate()
  }
}

@Suite("Notifications: what keeps a Realm open")
struct TokenLifetimeTests {
  /// The token keeps the observed Realm open until it is invalidated or released, and no
  /// longer: the file can then be deleted (a file later created at that path is a new one).
  @Test func anInvalidatedTokenLetsTheRealmClose() throws {
    let config = fileConfiguration()
    #expect(
      Thread.detachAndWait {
        let realm = try Realm(configuration: config)
        let token = realm.objects(Counter.self).observe { _ in }
        try realm.write { realm.add(Counter(value: ["a", 1])) }
        token.invalidate()
      })
    #expect(try Realm.deleteFiles(for: config))
  }

  @Test func aLiveTokenKeepsTheRealmOpen() throws {
    let config = fileConfiguration()
    let kept = Inbox<TokenBox>()
    #expect(
      Thread.detachAndWait {
        let realm = try Realm(configuration: config)
        kept.put(TokenBox(realm.objects(Counter.self).observe { _ in }))
      })
    let token = try #require(kept.next())
    #expect(throws: Realm.Error.self) { try Realm.deleteFiles(for: config) }
    token.token.invalidate()
    #expect(try Realm.deleteFiles(for: config))
  }
}
