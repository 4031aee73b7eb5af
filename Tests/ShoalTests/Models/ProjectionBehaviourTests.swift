import Dispatch
import Foundation
import Shoal
import Synchronization
import Testing

// Conformance with RealmSwift's documented behaviour of projections, checked against
// realm-swift's and realm-core's sources. RealmSwift's exceptions (Shoal: fatal errors) are exit
// tests whose standard error must hold RealmSwift's message.

// MARK: - Projections

@Suite("Projections: RealmSwift behaviour")
struct ProjectionBehaviourTests {
  @Test func projectionsReadThroughTheirKeyPaths() throws {
    let realm = try contactsRealm()
    let people: Results<ContactProjection> = realm.objects(ContactProjection.self)
    #expect(people.count == 2)
    // Queries name the root object's properties.
    let ada = try #require(people.filter("lastName == 'Lovelace'").first)
    #expect(ada.name == "Ada")
    #expect(ada.lastNameCaps == "LOVELACE")
    #expect(ada.homeCity == "London")
    #expect(Array(ada.friendNames) == ["Charles"])
    #expect(ada.rootObject.id == 1)
    let charles = ContactProjection(
      projecting: try #require(realm.object(ofType: Contact.self, forPrimaryKey: 2)))
    #expect(charles.homeCity == nil)
    #expect(charles.friendNames.isEmpty)
    #expect(charles.realm != nil)
    #expect(!charles.isInvalidated)
  }

  @Test func writingThroughAProjectionChangesTheRootObject() throws {
    let realm = try contactsRealm()
    let ada = try #require(realm.objects(ContactProjection.self).filter("id == 1").first)
    try realm.write { ada.name = "Augusta" }
    #expect(ada.rootObject.firstName == "Augusta")
    #expect(realm.object(ofType: Contact.self, forPrimaryKey: 1)?.firstName == "Augusta")
    // A projected list reads through to the list.
    try realm.write {
      ada.rootObject.friends.append(realm.create(Contact.self, value: ["id": 3, "firstName": "Mary"]))
    }
    #expect(Array(ada.friendNames) == ["Charles", "Mary"])
    #expect(ada.friendNames.count == 2)
    #expect(ada.friendNames[1] == "Mary")
  }

  /// `Results` of projections are observed like any results: `.initial`, then `.update` with
  /// the indices of the projected objects.
  @Test func resultsOfProjectionsAreObservable() throws {
    let realm = try contactsRealm()
    let people = realm.objects(ContactProjection.self).sorted(byKeyPath: "id")
    let seen = RecordedLines()
    let token = people.observe { change in
      switch change {
      case .initial(let projections): seen.append("initial \(projections.map(\.name))")
      case .update(let projections, let deletions, let insertions, let modifications):
        seen.append("update \(projections.map(\.name)) -\(deletions) +\(insertions) ~\(modifications)")
      case .error(let error): seen.append("error \(error)")
      }
    }
    #expect(seen.wait(forAtLeast: 1, refreshing: realm))
    try realm.write {
      realm.create(Contact.self, value: ["id": 3, "firstName": "Mary"])
      realm.object(ofType: Contact.self, forPrimaryKey: 1)?.firstName = "Augusta"
    }
    #expect(seen.wait(forAtLeast: 2, refreshing: realm))
    #expect(
      seen.all == [
        "initial [\"Ada\", \"Charles\"]",
        "update [\"Augusta\", \"Charles\", \"Mary\"] -[] +[2] ~[0]",
      ])
    token.invalidate()
  }

  @Test func projectionsOfTheSameObjectAreEqual() throws {
    let realm = try contactsRealm()
    let ada = try #require(realm.object(ofType: Contact.self, forPrimaryKey: 1))
    let charles = try #require(realm.object(ofType: Contact.self, forPrimaryKey: 2))
    let fromResults = try #require(realm.objects(ContactProjection.self).filter("id == 1").first)
    #expect(ContactProjection(projecting: ada) == fromResults)
    #expect(ContactProjection(projecting: ada).hashValue == fromResults.hashValue)
    #expect(ContactProjection(projecting: charles) != fromResults)
  }

  /// Changes are reported under the projection's property names; changes to properties the
  /// projection does not include notify nothing.
  @Test func observeReportsChangesUnderTheProjectionsNames() throws {
    let realm = try contactsRealm()
    let ada = try #require(realm.objects(ContactProjection.self).filter("id == 1").first)
    let seen = RecordedLines()
    let token = ada.observe { change in seen.append(plainText(change)) }
    try realm.write { ada.rootObject.notes = "not projected" }
    try realm.write { ada.rootObject.firstName = "Augusta" }
    #expect(seen.wait(forAtLeast: 1, refreshing: realm))
    #expect(seen.all == ["name=Augusta"])
    token.invalidate()
  }

  /// A change's `newValue` is the projected value (`object[keyPath: projectedKeyPath]`), not
  /// the root property's.
  @Test func aChangeCarriesTheProjectedValue() throws {
    let realm = try contactsRealm()
    let ada = try #require(realm.objects(ContactProjection.self).filter("id == 1").first)
    let seen = RecordedLines()
    let token = ada.observe { change in seen.append(plainText(change)) }
    try realm.write { ada.rootObject.lastName = "Byron" }
    #expect(seen.wait(forAtLeast: 1, refreshing: realm))
    #expect(seen.all == ["lastNameCaps=BYRON"])
    token.invalidate()
  }

  /// Seed 000's warning: "For projected properties where the original property has the same
  /// root property name, this will trigger a `PropertyChange` for each of the Projected
  /// properties".
  @Test func everyProjectedPropertyOfAChangedRootPropertyIsReported() throws {
    let realm = try contactsRealm()
    let ada = AgeTwiceProjection(
      projecting: try #require(realm.object(ofType: Contact.self, forPrimaryKey: 1)))
    let seen = RecordedLines()
    let token = ada.observe { change in seen.append(plainText(change)) }
    try realm.write { ada.rootObject.age = 37 }
    #expect(seen.wait(forAtLeast: 1, refreshing: realm))
    #expect(seen.all == ["years=37,alsoYears=37"])
    token.invalidate()
  }

  /// String key paths name the root object's properties, as in realm-swift's
  /// `ProjectionTests.testObserveKeyPath` (`observe(keyPaths: ["lastName"])` on a projection
  /// whose property is `lastNameCaps`); other properties do not notify.
  @Test func stringKeyPathsNameTheRootObjectsProperties() throws {
    let realm = try contactsRealm()
    let ada = try #require(realm.objects(ContactProjection.self).filter("id == 1").first)
    let seen = RecordedLines()
    let token = ada.observe(keyPaths: ["lastName"]) { change in seen.append(plainText(change)) }
    // Registered after it, an observer of the whole object marks each delivery.
    let commits = RecordedLines()
    let sentinel = ada.rootObject.observe { (_: ObjectChange<Contact>) in commits.append("commit") }
    try realm.write { ada.rootObject.lastName = "Byron" }
    #expect(commits.wait(forAtLeast: 1, refreshing: realm))
    try realm.write { ada.rootObject.firstName = "Augusta" }
    #expect(commits.wait(forAtLeast: 2, refreshing: realm))
    #expect(seen.all == ["lastNameCaps=BYRON"])
    token.invalidate()
    sentinel.invalidate()
  }

  /// Observed on a queue, a write made elsewhere comes with its old value, mapped through the
  /// projection.
  @Test func observedOnAQueueChangesCarryOldValues() throws {
    let realm = try contactsRealm()
    let ada = try #require(realm.objects(ContactProjection.self).filter("id == 1").first)
    let seen = RecordedLines()
    let queue = DispatchQueue(label: "projection-behaviour")
    let token = ada.observe(keyPaths: nil, on: queue) { change in seen.append(plainText(change, old: true)) }
    try realm.write { ada.rootObject.firstName = "Augusta" }
    #expect(seen.wait(forAtLeast: 1))
    #expect(seen.all == ["name=Ada->Augusta"])
    token.invalidate()
  }

  @Test func deletingTheRootObjectReportsDeleted() throws {
    let realm = try contactsRealm()
    let ada = try #require(realm.objects(ContactProjection.self).filter("id == 1").first)
    let seen = RecordedLines()
    let token = ada.observe { change in seen.append(plainText(change)) }
    try realm.write { realm.delete(ada.rootObject) }
    #expect(seen.wait(forAtLeast: 1, refreshing: realm))
    #expect(seen.all == ["deleted"])
    #expect(ada.isInvalidated)
    token.invalidate()
  }

  /// Seed 000: a frozen projection keeps its values; `thaw()` gives the live one, nil once the
  /// object is deleted.
  @Test func frozenProjectionsKeepTheirValuesAndThaw() throws {
    let realm = try contactsRealm()
    let ada = try #require(realm.objects(ContactProjection.self).filter("id == 1").first)
    let frozen = ada.freeze()
    #expect(frozen.isFrozen)
    #expect(!ada.isFrozen)
    #expect(frozen.realm?.isFrozen == true)
    try realm.write { ada.name = "Augusta" }
    #expect(frozen.name == "Ada")
    #expect(Array(frozen.friendNames) == ["Charles"])
    let thawed = try #require(frozen.thaw())
    #expect(!thawed.isFrozen)
    #expect(thawed.name == "Augusta")
    try realm.write { realm.delete(ada.rootObject) }
    #expect(frozen.thaw() == nil)
    #expect(frozen.name == "Ada")
  }

  /// `@Projected property 'scratch' must be a part of Realm object` (Projection's schema, built
  /// when a projection is created).
  @Test func projectingAPropertyRealmDoesNotManageFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try Realm(configuration: sharedFixtureConfiguration())
      let person = try realm.write { realm.create(Contact.self, value: ["id": 1]) }
      let projection = IgnoredPropertyProjection(projecting: person)
      FileHandle.standardError.write(Data("created \(projection.scratch)\n".utf8))
    }
    #expect(stderrText(result).contains("@Projected property 'scratch' must be a part of Realm object"))
  }
}
