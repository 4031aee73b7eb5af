import Foundation
import Shoal
import Testing

// Conformance with RealmSwift 10.x's documented behaviour of type-safe queries (`where { }`),
// NSPredicate-style format strings on the same data, `maximumNumberOfActiveVersions`, and event
// recording (`Realm.Configuration.eventConfiguration`). Errors RealmSwift raises as exceptions
// (Shoal: fatal errors) are checked with exit tests.
//
// Left out because Shoal does not compile them (RealmSwift's `Query` has them):
// `(…).count` subqueries on `Query<Bool>`, `.contains(range)` on collections, `contains`,
// `containsAny(in:)`, `min`/`max`/`sum`/`avg` on `Map`s, `persistableValue`, `.contains(range)`
// on optional values, `Data` searches and string searches against another property. (Added
// since the first pass: `>=`/`<=` between properties, value collections compared with an
// element, `.min`/`.max` through a to-many key path, `rawValue` on enums and optional enums,
// `like`/`equals`/`notEquals` on `String?`.)

// MARK: - Models (nested in the suite; every Realm here lists them in `objectTypes`)

extension QueryAndEventTests {
  enum Mood: String, PersistableEnum {
    case happy, grumpy, sleepy
  }

  enum Rank: Int, PersistableEnum {
    case low = 1, mid = 2, high = 3
  }

  final class ResidentDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<Resident>
  }

  final class Resident: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var nickname: String?
    @Persisted var age = 0
    @Persisted var minAge = 0
    @Persisted var height: Double?
    @Persisted var born = Date(timeIntervalSince1970: 0)
    @Persisted var mood = Mood.happy
    @Persisted var rank: Rank?
    @Persisted var anyValue: AnyRealmValue
    @Persisted var bestFriend: ResidentDog?
    @Persisted var dogs: List<ResidentDog>
    @Persisted var tags: List<String>
    @Persisted var ints: List<Int>
    @Persisted var moods: List<Mood>
    @Persisted var scores: Map<String, Int>
  }

  final class EventPerson: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
  }

  final class EventLink: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var person: EventPerson?
    @Persisted var people: List<EventPerson>
    @Persisted var peopleByName: Map<String, EventPerson?>
  }
}

private let queryTypes: [ObjectBase.Type] = [QueryAndEventTests.ResidentDog.self, QueryAndEventTests.Resident.self]
private let eventTypes: [ObjectBase.Type] = [QueryAndEventTests.EventPerson.self, QueryAndEventTests.EventLink.self]

/// A fresh, empty in-memory configuration holding only the query classes.
private func queryConfiguration() -> Realm.Configuration {
  Realm.Configuration(inMemoryIdentifier: "queries-" + UUID().uuidString, objectTypes: queryTypes)
}

/// Midnight UTC of a day.
private func utcDate(_ year: Int, _ month: Int, _ day: Int) -> Date {
  var calendar = Calendar(identifier: .gregorian)
  calendar.timeZone = TimeZone(identifier: "UTC")!
  return calendar.date(from: DateComponents(year: year, month: month, day: day))!
}

/// Four people and seven dogs:
///
/// - 1 Ann, "Annie", 30 (minAge 18), 1.70 m, born 2000-01-01, happy, rank high, any int 5,
///   best friend Rex (3), dogs Rex 3 and Bo 1, tags vip and new, ints 1 2 3, moods happy and
///   sleepy, scores a:5 b:1.
/// - 2 bob, no nickname, 17 (minAge 18), no height, born 2010-06-15, grumpy, no rank, any
///   string "five", no best friend, no dogs, no tags, ints 10, no moods, scores b:7.
/// - 3 René, "Rene", 45 (minAge 21), 1.80 m, born 1980-03-03, sleepy, rank low, any double
///   2.5, best friend Zed (9), dogs Zed 9, Rex 2 and Max 4, tags vip, no ints, moods grumpy,
///   no scores.
/// - 4 Cleo, no nickname, 30 (minAge 30), 1.60 m, born 1995-12-31, happy, rank mid, any none,
///   no best friend, dogs Fido 5, tags old, ints 4 5, no moods, scores a:0.
///
/// Kit (7) belongs to nobody.
private func peopleRealm() throws -> Realm {
  let realm = try Realm(configuration: queryConfiguration())
  try realm.write {
    func dog(_ name: String, _ age: Int) -> QueryAndEventTests.ResidentDog {
      realm.create(QueryAndEventTests.ResidentDog.self, value: ["name": name, "age": age])
    }
    let rex = dog("Rex", 3)
    let bo = dog("Bo", 1)
    let zed = dog("Zed", 9)
    let rex2 = dog("Rex", 2)
    let max = dog("Max", 4)
    let fido = dog("Fido", 5)
    _ = dog("Kit", 7)

    let ann = QueryAndEventTests.Resident()
    ann.id = 1
    ann.name = "Ann"
    ann.nickname = "Annie"
    ann.age = 30
    ann.minAge = 18
    ann.height = 1.70
    ann.born = utcDate(2000, 1, 1)
    ann.mood = .happy
    ann.rank = .high
    ann.anyValue = .int(5)
    ann.bestFriend = rex
    ann.dogs.append(objectsIn: [rex, bo])
    ann.tags.append(objectsIn: ["vip", "new"])
    ann.ints.append(objectsIn: [1, 2, 3])
    ann.moods.append(objectsIn: [.happy, .sleepy])
    ann.scores["a"] = 5
    ann.scores["b"] = 1
    realm.add(ann)

    let bob = QueryAndEventTests.Resident()
    bob.id = 2
    bob.name = "bob"
    bob.age = 17
    bob.minAge = 18
    bob.born = utcDate(2010, 6, 15)
    bob.mood = .grumpy
    bob.anyValue = .string("five")
    bob.ints.append(10)
    bob.scores["b"] = 7
    realm.add(bob)

    let rene = QueryAndEventTests.Resident()
    rene.id = 3
    rene.name = "René"
    rene.nickname = "Rene"
    rene.age = 45
    rene.minAge = 21
    rene.height = 1.80
    rene.born = utcDate(1980, 3, 3)
    rene.mood = .sleepy
    rene.rank = .low
    rene.anyValue = .double(2.5)
    rene.bestFriend = zed
    rene.dogs.append(objectsIn: [zed, rex2, max])
    rene.tags.append("vip")
    rene.moods.append(.grumpy)
    realm.add(rene)

    let cleo = QueryAndEventTests.Resident()
    cleo.id = 4
    cleo.name = "Cleo"
    cleo.age = 30
    cleo.minAge = 30
    cleo.height = 1.60
    cleo.born = utcDate(1995, 12, 31)
    cleo.mood = .happy
    cleo.rank = .mid
    cleo.dogs.append(fido)
    cleo.tags.append("old")
    cleo.ints.append(objectsIn: [4, 5])
    cleo.scores["a"] = 0
    realm.add(cleo)
  }
  return realm
}

/// The ids of the people a query matched, in ascending order.
private func personIDs(_ results: Results<QueryAndEventTests.Resident>) -> [Int] {
  results.map(\.id).sorted()
}

/// The names of the dogs a query matched, in ascending order.
private func dogNames(_ results: Results<QueryAndEventTests.ResidentDog>) -> [String] {
  results.map(\.name).sorted()
}

/// The text of a JSON value with its keys sorted, to compare JSON documents.
private func sortedJSON(_ value: Any) -> String {
  guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) else { return "" }
  return String(decoding: data, as: UTF8.self)
}

/// Waits for the completion handlers of event recording, which run on the event thread.
private final class EventCompletions: @unchecked Sendable {  // safe: `errors` is guarded by `lock`
  private let semaphore = DispatchSemaphore(value: 0)
  private let lock = NSLock()
  private var errors: [String] = []

  var handler: @Sendable (Swift.Error?) -> Void {
    { [self] error in
      if let error {
        lock.lock()
        errors.append("\(error)")
        lock.unlock()
      }
      semaphore.signal()
    }
  }

  /// Waits for one completion; the errors reported so far.
  func wait() -> [String] {
    semaphore.wait()
    lock.lock()
    defer { lock.unlock() }
    return errors
  }
}

/// An in-memory Realm recording events to a JSON Lines file in a fresh temporary directory.
private struct EventHarness {
  let directory: URL
  let sink: URL
  let realm: Realm

  init(metadata: [String: String]? = nil) throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("query-events-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    sink = directory.appendingPathComponent("events.jsonl")
    var configuration = Realm.Configuration(
      inMemoryIdentifier: "query-events-" + UUID().uuidString, objectTypes: eventTypes)
    configuration.eventConfiguration = EventConfiguration(metadata: metadata, sink: JSONLinesEventSink(fileURL: sink))
    realm = try Realm(configuration: configuration)
  }

  /// Commits `scope` and waits until its events were stored.
  func commit(_ scope: Events.Scope) {
    let completions = EventCompletions()
    scope.commit(completion: completions.handler)
    #expect(completions.wait().isEmpty)
  }

  /// Every event stored so far, oldest first.
  func events() throws -> [[String: Any]] {
    let text = (try? String(contentsOf: sink, encoding: .utf8)) ?? ""
    return try text.split(separator: "\n").map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
  }

  /// The events of one activity, oldest first.
  func events(of activity: String) throws -> [[String: Any]] {
    try events().filter { $0["activity"] as? String == activity }
  }

  /// The parsed `data` of an event.
  func data(_ event: [String: Any]?) throws -> [String: Any] {
    let text = try #require(event?["data"] as? String)
    return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  }

  func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// How RealmSwift's event serializer writes an `EventPerson`: every property by name.
private func allProperties(_ person: QueryAndEventTests.EventPerson) -> [String: Any] {
  ["_id": person._id.stringValue, "firstName": person.firstName, "lastName": person.lastName, "age": person.age]
}

private func makeEventPerson(_ first: String, _ last: String, _ age: Int) -> QueryAndEventTests.EventPerson {
  QueryAndEventTests.EventPerson(value: ["_id": ObjectId.generate(), "firstName": first, "lastName": last, "age": age])
}

/// A Realm with a limit of 3 active versions whose frozen copies pin 3 versions besides the
/// newest one: 4 active versions, one more than the limit. The frozen Realms are returned to
/// keep them alive.
private func realmBeyondTheVersionLimit() throws -> (Realm, [Realm]) {
  var configuration = queryConfiguration()
  configuration.maximumNumberOfActiveVersions = 3
  let realm = try Realm(configuration: configuration)
  var frozen: [Realm] = []
  for i in 0..<3 {
    frozen.append(realm.freeze())
    try realm.write { realm.create(QueryAndEventTests.ResidentDog.self, value: ["name": "Dog \(i)", "age": i]) }
  }
  return (realm, frozen)
}

@Suite("Type-safe queries, format strings, version limit and events")
struct QueryAndEventTests {
  // MARK: Type-safe queries

  @Test func comparisonOperatorsOnNumbersAndDates() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.age > 20 }) == [1, 3, 4])
    #expect(personIDs(people.where { $0.age >= 30 }) == [1, 3, 4])
    #expect(personIDs(people.where { $0.age < 30 }) == [2])
    #expect(personIDs(people.where { $0.age <= 17 }) == [2])
    #expect(personIDs(people.where { $0.age == 30 }) == [1, 4])
    #expect(personIDs(people.where { $0.age != 30 }) == [2, 3])
    #expect(personIDs(people.where { $0.born < utcDate(1990, 1, 1) }) == [3])
    #expect(personIDs(people.where { $0.born >= utcDate(2000, 1, 1) }) == [1, 2])
    #expect(personIDs(people.where { $0.born == utcDate(1995, 12, 31) }) == [4])
    // Two properties of the same object.
    #expect(personIDs(people.where { $0.age > $0.minAge }) == [1, 3])
    #expect(personIDs(people.where { $0.age < $0.minAge }) == [2])
    #expect(personIDs(people.where { $0.age == $0.minAge }) == [4])
    #expect(personIDs(people.where { $0.age != $0.minAge }) == [1, 2, 3])
    #expect(personIDs(people.where { $0.age >= $0.minAge }) == [1, 3, 4])
    #expect(personIDs(people.where { $0.age <= $0.minAge }) == [2, 4])
  }

  /// A collection of values compared with one value matches when any element does; string
  /// options on optional strings; `min`/`max` of a property through a to-many link.
  @Test func valueCollectionsOptionalStringsAndAggregatesThroughLinks() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.ints > 5 }) == [2])
    #expect(personIDs(people.where { $0.ints == 4 }) == [4])
    #expect(personIDs(people.where { $0.ints <= 1 }) == [1])
    #expect(personIDs(people.where { $0.ints >= 5 }) == [2, 4])
    #expect(personIDs(people.where { $0.ints < 2 }) == [1])
    #expect(personIDs(people.where { $0.ints != 10 }) == [1, 4])
    #expect(personIDs(people.where { $0.tags == "vip" }) == [1, 3])
    #expect(personIDs(people.where { $0.nickname.equals("annie", options: [.caseInsensitive]) }) == [1])
    #expect(personIDs(people.where { $0.nickname.like("Ren?") }) == [3])
    #expect(personIDs(people.where { $0.nickname.like("ren*", caseInsensitive: true) }) == [3])
    #expect(personIDs(people.where { $0.dogs.age.max > 4 }) == [3, 4])
    #expect(personIDs(people.where { $0.dogs.age.min < 2 }) == [1])
  }

  @Test func logicalOperatorsFollowSwiftPrecedence() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.age >= 30 && !$0.name.starts(with: "A") }) == [3, 4])
    #expect(personIDs(people.where { $0.name == "bob" || $0.age > 40 }) == [2, 3])
    #expect(personIDs(people.where { !($0.age == 30) }) == [2, 3])
    // `&&` binds tighter than `||`, as in Swift.
    #expect(personIDs(people.where { $0.name == "bob" || $0.age > 40 && $0.mood == .happy }) == [2])
    #expect(personIDs(people.where { ($0.name == "bob" || $0.age > 40) && $0.mood == .sleepy }) == [3])
    #expect(personIDs(people.where { !($0.age > 20 && $0.mood == .happy) }) == [2, 3])
  }

  @Test func stringSearchesWithCaseAndDiacriticOptions() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.name.contains("n") }) == [1, 3])
    #expect(personIDs(people.where { $0.name.contains("N") }) == [])
    #expect(personIDs(people.where { $0.name.contains("N", options: .caseInsensitive) }) == [1, 3])
    #expect(personIDs(people.where { $0.name.contains("rene", options: .caseInsensitive) }) == [])
    #expect(personIDs(people.where { $0.name.contains("Rene", options: .diacriticInsensitive) }) == [3])
    #expect(
      personIDs(people.where { $0.name.contains("rene", options: [.caseInsensitive, .diacriticInsensitive]) }) == [3])
    #expect(personIDs(people.where { $0.name.starts(with: "B") }) == [])
    #expect(personIDs(people.where { $0.name.starts(with: "B", options: .caseInsensitive) }) == [2])
    #expect(personIDs(people.where { $0.name.ends(with: "né") }) == [3])
    #expect(
      personIDs(people.where { $0.name.ends(with: "NE", options: [.caseInsensitive, .diacriticInsensitive]) }) == [3])
    #expect(personIDs(people.where { $0.name.equals("BOB", options: .caseInsensitive) }) == [2])
    #expect(
      personIDs(people.where { $0.name.equals("rene", options: [.caseInsensitive, .diacriticInsensitive]) }) == [3])
    #expect(personIDs(people.where { $0.name.notEquals("ann", options: .caseInsensitive) }) == [2, 3, 4])
    // Optional strings: a nil value contains nothing.
    #expect(personIDs(people.where { $0.nickname.contains("nn") }) == [1])
    #expect(personIDs(people.where { $0.nickname.starts(with: "r", options: .caseInsensitive) }) == [3])
    #expect(personIDs(people.where { $0.nickname.ends(with: "E", options: .caseInsensitive) }) == [1, 3])
  }

  /// `?` matches one character and `*` zero or more.
  @Test func likeMatchesWildcards() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.name.like("?o*") }) == [2])
    #expect(personIDs(people.where { $0.name.like("A*") }) == [1])
    #expect(personIDs(people.where { $0.name.like("a*") }) == [])
    #expect(personIDs(people.where { $0.name.like("a*", caseInsensitive: true) }) == [1])
    #expect(personIDs(people.where { $0.name.like("C??o") }) == [4])
    #expect(personIDs(people.where { $0.name.like("A?") }) == [])
    #expect(personIDs(people.where { $0.name.like("*e*") }) == [3, 4])
  }

  @Test func inMatchesAnyOfTheValues() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.age.in([17, 45]) }) == [2, 3])
    #expect(personIDs(people.where { $0.name.in(["Ann", "Zed"]) }) == [1])
    #expect(personIDs(people.where { !$0.age.in([30]) }) == [2, 3])
    #expect(personIDs(people.where { $0.mood.in([.sleepy, .grumpy]) }) == [2, 3])
  }

  /// An empty `in` matches nothing (RealmSwift adds a false expression to the empty group). An
  /// exit test: in Shoal this query crashes the process.
  @Test func inWithNoValuesMatchesNothing() async {
    await #expect(processExitsWith: .success) {
      let people = try peopleRealm().objects(Resident.self)
      let typeSafe = personIDs(people.where { $0.age.in([Int]()) })
      precondition(typeSafe == [], "age.in([]) matched \(typeSafe)")
      let format = personIDs(people.filter("age IN %@", [Int]()))
      precondition(format == [], "age IN {} matched \(format)")
    }
  }

  /// A closed range is `BETWEEN` (both bounds included), a half-open one excludes its upper bound.
  @Test func rangesAreInclusiveOrHalfOpen() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.age.contains(17...30) }) == [1, 2, 4])
    #expect(personIDs(people.where { $0.age.contains(17..<30) }) == [2])
    #expect(personIDs(people.where { $0.born.contains(utcDate(1990, 1, 1)...utcDate(2000, 1, 1)) }) == [1, 4])
    #expect(personIDs(people.where { $0.born.contains(utcDate(1990, 1, 1)..<utcDate(2000, 1, 1)) }) == [4])
  }

  @Test func optionalPropertiesComparedWithNil() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.nickname == nil }) == [2, 4])
    #expect(personIDs(people.where { $0.nickname != nil }) == [1, 3])
    #expect(personIDs(people.where { $0.bestFriend == nil }) == [2, 4])
    #expect(personIDs(people.where { $0.bestFriend != nil }) == [1, 3])
    #expect(personIDs(people.where { $0.rank == nil }) == [2])
    #expect(personIDs(people.where { $0.height == nil }) == [2])
    // A nil value is never greater than a number, and is "not equal" to any string.
    #expect(personIDs(people.where { $0.height > 1.65 }) == [1, 3])
    #expect(personIDs(people.where { $0.nickname != "Annie" }) == [2, 3, 4])
  }

  /// A comparison through a to-many relationship matches when any object matches.
  @Test func toManyKeyPathsMatchWhenAnyObjectMatches() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.dogs.name == "Rex" }) == [1, 3])
    #expect(personIDs(people.where { $0.dogs.name != "Rex" }) == [1, 3, 4])
    #expect(personIDs(people.where { !($0.dogs.name == "Rex") }) == [2, 4])
    #expect(personIDs(people.where { $0.dogs.age > 8 }) == [3])
    #expect(personIDs(people.where { $0.dogs.name.starts(with: "F") }) == [4])
    // Each comparison is its own ANY: Ann has a Rex, and another dog younger than 3.
    #expect(personIDs(people.where { $0.dogs.name == "Rex" && $0.dogs.age < 3 }) == [1, 3])
    #expect(personIDs(people.where { $0.bestFriend.name == "Zed" }) == [3])
    #expect(personIDs(people.where { $0.bestFriend.age < 5 }) == [1])
  }

  /// `$0.dogs.age.sum` is `dogs.@sum.age`: the sum of an empty collection is 0.
  @Test func aggregatesOverAPropertyOfObjectCollections() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.dogs.age.sum > 10 }) == [3])
    #expect(personIDs(people.where { $0.dogs.age.sum == 0 }) == [2])
    #expect(personIDs(people.where { $0.dogs.age.avg >= 5 }) == [3, 4])
    #expect(personIDs(people.where { $0.dogs.age.avg < 5 }) == [1])
  }

  @Test func countsAndAggregatesOfCollections() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.dogs.count == 0 }) == [2])
    #expect(personIDs(people.where { $0.dogs.count >= 2 }) == [1, 3])
    #expect(personIDs(people.where { $0.tags.count == 1 }) == [3, 4])
    #expect(personIDs(people.where { $0.ints.count > 1 }) == [1, 4])
    #expect(personIDs(people.where { $0.scores.count == 0 }) == [3])
    #expect(personIDs(people.where { $0.scores.count == 2 }) == [1])
    #expect(personIDs(people.where { $0.ints.sum == 6 }) == [1])
    #expect(personIDs(people.where { $0.ints.sum == 0 }) == [3])
    #expect(personIDs(people.where { $0.ints.avg > 4 }) == [2, 4])
    #expect(personIDs(people.where { $0.ints.min == 1 }) == [1])
    #expect(personIDs(people.where { $0.ints.max >= 5 }) == [2, 4])
  }

  @Test func valueCollectionsContainsAndContainsAny() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.tags.contains("vip") }) == [1, 3])
    #expect(personIDs(people.where { !$0.tags.contains("vip") }) == [2, 4])
    #expect(personIDs(people.where { $0.tags.containsAny(in: ["old", "new"]) }) == [1, 4])
    #expect(personIDs(people.where { $0.ints.contains(10) }) == [2])
    #expect(personIDs(people.where { $0.moods.contains(.sleepy) }) == [1])
    #expect(personIDs(people.where { $0.moods.containsAny(in: [.grumpy, .sleepy]) }) == [1, 3])
  }

  @Test func mapSubscriptKeysAndValues() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.scores["a"] > 1 }) == [1])
    #expect(personIDs(people.where { $0.scores["a"] == 0 }) == [4])
    #expect(personIDs(people.where { $0.scores["b"] >= 1 }) == [1, 2])
    #expect(personIDs(people.where { $0.scores.keys == "b" }) == [1, 2])
    #expect(personIDs(people.where { $0.scores.keys.starts(with: "a") }) == [1, 4])
    #expect(personIDs(people.where { $0.scores.values > 6 }) == [2])
    #expect(personIDs(people.where { $0.scores.values == 1 }) == [1])
  }

  /// Numbers of different types compare by value; strings never compare with numbers.
  @Test func anyRealmValueComparisons() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.anyValue == .int(5) }) == [1])
    #expect(personIDs(people.where { $0.anyValue == .double(5) }) == [1])
    #expect(personIDs(people.where { $0.anyValue == .string("five") }) == [2])
    #expect(personIDs(people.where { $0.anyValue > AnyRealmValue.int(2) }) == [1, 3])
    #expect(personIDs(people.where { $0.anyValue == .none }) == [4])
    #expect(personIDs(people.where { $0.anyValue != .none }) == [1, 2, 3])
    #expect(personIDs(people.where { $0.anyValue.in([AnyRealmValue.int(5), .double(2.5)]) }) == [1, 3])
  }

  @Test func persistableEnumComparisons() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.where { $0.mood == .grumpy }) == [2])
    #expect(personIDs(people.where { $0.mood != .happy }) == [2, 3])
    #expect(personIDs(people.where { $0.rank == .high }) == [1])
    #expect(personIDs(people.where { $0.rank != .high }) == [2, 3, 4])
  }

  /// `rawValue` queries the raw value, for what the enum cannot express. (An exit test: in
  /// Shoal this query crashes the process.)
  @Test func persistableEnumRawValueQueries() async {
    await #expect(processExitsWith: .success) {
      let people = try peopleRealm().objects(Resident.self)
      let ids = personIDs(people.where { $0.mood.rawValue.starts(with: "s") })
      precondition(ids == [3], "mood.rawValue BEGINSWITH 's' matched \(ids)")
    }
  }

  @Test func linkingObjectsQueries() throws {
    let dogs = try peopleRealm().objects(ResidentDog.self)
    #expect(dogNames(dogs.where { $0.owners.name == "Ann" }) == ["Bo", "Rex"])
    #expect(dogNames(dogs.where { $0.owners.age > 40 }) == ["Max", "Rex", "Zed"])
    #expect(dogNames(dogs.where { $0.owners.count == 0 }) == ["Kit"])
    #expect(dogNames(dogs.filter("ANY owners.name == 'Ann'")) == ["Bo", "Rex"])
    #expect(dogNames(dogs.filter("owners.@count == 0")) == ["Kit"])
  }

  @Test func typeSafeQueriesAndFormatStringsAgree() throws {
    let people = try peopleRealm().objects(Resident.self)
    let pairs: [((Query<Resident>) -> Query<Bool>, String, [Int])] = [
      ({ $0.age > 20 && $0.name.contains("e") }, "age > 20 AND name CONTAINS 'e'", [3, 4]),
      ({ $0.dogs.name == "Rex" }, "ANY dogs.name == 'Rex'", [1, 3]),
      ({ $0.tags.contains("vip") }, "'vip' IN tags", [1, 3]),
      ({ $0.scores.keys == "b" }, "ANY scores.@allKeys == 'b'", [1, 2]),
      ({ !($0.nickname == nil) || $0.age < 18 }, "NOT nickname == nil OR age < 18", [1, 2, 3]),
      ({ $0.dogs.age.avg >= 5 }, "dogs.@avg.age >= 5", [3, 4]),
      ({ $0.name.like("?o*") }, "name LIKE '?o*'", [2]),
      ({ $0.age.contains(17...30) }, "age BETWEEN {17, 30}", [1, 2, 4]),
      ({ $0.mood == .sleepy }, "mood == 'sleepy'", [3]),
    ]
    for (query, format, expected) in pairs {
      #expect(personIDs(people.where(query)) == expected, "where: \(format)")
      #expect(personIDs(people.filter(format)) == expected, "filter: \(format)")
    }
  }

  @Test func whereOnListsLinkingObjectsAndChainedResults() throws {
    let realm = try peopleRealm()
    let people = realm.objects(Resident.self)
    let rene = try #require(realm.object(ofType: Resident.self, forPrimaryKey: 3))
    // A list keeps its order.
    #expect(rene.dogs.where { $0.age > 2 }.map(\.name) == ["Zed", "Max"])
    let zed = try #require(rene.bestFriend)
    #expect(zed.owners.where { $0.age > 40 }.map(\.id) == [3])
    #expect(personIDs(people.where { $0.age > 20 }.where { $0.mood == .happy }) == [1, 4])
    #expect(personIDs(people.filter("age > 20").where { $0.nickname != nil }) == [1, 3])
    // Results stay live.
    let old = people.where { $0.age > 40 }
    #expect(old.count == 1)
    try realm.write { realm.create(Resident.self, value: ["id": 5, "name": "Eve", "age": 50]) }
    #expect(personIDs(old) == [3, 5])
  }

  // MARK: Format strings

  @Test func keyPathSubstitutionWithPercentK() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.filter("%K > %@", "age", 20)) == [1, 3, 4])
    #expect(personIDs(people.filter("%K == %@", "name", "bob")) == [2])
    #expect(personIDs(people.filter("%K == %@", "bestFriend.name", "Zed")) == [3])
  }

  @Test func subqueryCountsTheMatchingElements() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.filter("SUBQUERY(dogs, $d, $d.age > 1).@count > 1")) == [3])
    #expect(personIDs(people.filter("SUBQUERY(dogs, $d, $d.age > 1 AND $d.name BEGINSWITH 'R').@count > 0")) == [1, 3])
    #expect(personIDs(people.filter("SUBQUERY(dogs, $dog, $dog.name == 'Rex' AND $dog.age < 3).@count == 1")) == [3])
    #expect(personIDs(people.filter("SUBQUERY(dogs, $d, $d.age > 100).@count == 0")) == [1, 2, 3, 4])
  }

  @Test func truePredicateAndFalsePredicate() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(people.filter("TRUEPREDICATE").count == 4)
    #expect(people.filter("FALSEPREDICATE").count == 0)
    #expect(personIDs(people.filter("TRUEPREDICATE AND age > 40")) == [3])
    #expect(personIDs(people.filter("FALSEPREDICATE OR name == 'bob'")) == [2])
  }

  @Test func stringOperatorsModifiersAndLikeWildcards() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.filter("name BEGINSWITH 'B'")) == [])
    #expect(personIDs(people.filter("name BEGINSWITH[c] 'B'")) == [2])
    #expect(personIDs(people.filter("name ENDSWITH[cd] 'NE'")) == [3])
    #expect(personIDs(people.filter("name CONTAINS 'ene'")) == [])
    #expect(personIDs(people.filter("name CONTAINS[d] 'ene'")) == [3])
    #expect(personIDs(people.filter("name ==[c] 'ANN'")) == [1])
    #expect(personIDs(people.filter("name !=[c] 'ANN'")) == [2, 3, 4])
    #expect(personIDs(people.filter("name ==[cd] 'rene'")) == [3])
    #expect(personIDs(people.filter("name LIKE 'b?b'")) == [2])
    #expect(personIDs(people.filter("name LIKE '*e*'")) == [3, 4])
    #expect(personIDs(people.filter("name LIKE[c] 'a*'")) == [1])
    #expect(personIDs(people.filter("name LIKE 'A?'")) == [])
    #expect(personIDs(people.filter("name LIKE 'A??'")) == [1])
    #expect(personIDs(people.filter("nickname LIKE 'R*'")) == [3])
  }

  @Test func inWithAnArrayArgumentAndItsNegation() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.filter("age IN %@", [17, 45])) == [2, 3])
    #expect(personIDs(people.filter("NOT age IN %@", [30])) == [2, 3])
    #expect(personIDs(people.filter("NOT (name IN %@)", ["Ann", "bob"])) == [3, 4])
    #expect(personIDs(people.filter("name IN {'Ann', 'bob'}")) == [1, 2])
    #expect(personIDs(people.filter("ANY tags IN %@", ["old", "new"])) == [1, 4])
    #expect(personIDs(people.filter("'vip' IN tags")) == [1, 3])
    #expect(personIDs(people.filter("NOT 'vip' IN tags")) == [2, 4])
    #expect(personIDs(people.filter("mood IN %@", ["grumpy", "sleepy"])) == [2, 3])
  }

  @Test func collectionOperatorsInFormatStrings() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.filter("dogs.@count == 0")) == [2])
    #expect(personIDs(people.filter("tags.@count > 1")) == [1])
    #expect(personIDs(people.filter("ints.@sum == 6")) == [1])
    #expect(personIDs(people.filter("ints.@avg > 4")) == [2, 4])
    #expect(personIDs(people.filter("ints.@min == 1")) == [1])
    #expect(personIDs(people.filter("ints.@max >= 5")) == [2, 4])
    #expect(personIDs(people.filter("dogs.@sum.age > 10")) == [3])
    #expect(personIDs(people.filter("dogs.@avg.age >= 5")) == [3, 4])
    #expect(personIDs(people.filter("dogs.@min.age == 1")) == [1])
    #expect(personIDs(people.filter("dogs.@max.age == 9")) == [3])
  }

  @Test func dateComparisonsInFormatStrings() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.filter("born > %@", utcDate(2000, 1, 1))) == [2])
    #expect(personIDs(people.filter("born >= %@", utcDate(2000, 1, 1))) == [1, 2])
    #expect(personIDs(people.filter("born < %@", utcDate(1990, 1, 1))) == [3])
    #expect(personIDs(people.filter("born == %@", utcDate(1995, 12, 31))) == [4])
    #expect(personIDs(people.filter("born BETWEEN {%@, %@}", utcDate(1990, 1, 1), utcDate(2005, 1, 1))) == [1, 4])
  }

  @Test func mapsAnyValuesEnumsAndNilInFormatStrings() throws {
    let people = try peopleRealm().objects(Resident.self)
    #expect(personIDs(people.filter("scores['a'] > 1")) == [1])
    #expect(personIDs(people.filter("scores['a'] == 0")) == [4])
    #expect(personIDs(people.filter("ANY scores.@allKeys == 'b'")) == [1, 2])
    #expect(personIDs(people.filter("ANY scores.@allKeys BEGINSWITH 'a'")) == [1, 4])
    #expect(personIDs(people.filter("ANY scores.@allValues > 6")) == [2])
    #expect(personIDs(people.filter("scores.@count == 0")) == [3])
    #expect(personIDs(people.filter("anyValue == 5")) == [1])
    #expect(personIDs(people.filter("anyValue == 'five'")) == [2])
    #expect(personIDs(people.filter("anyValue > 2")) == [1, 3])
    #expect(personIDs(people.filter("anyValue == nil")) == [4])
    #expect(personIDs(people.filter("nickname == nil")) == [2, 4])
    #expect(personIDs(people.filter("bestFriend == nil")) == [2, 4])
    #expect(personIDs(people.filter("height != nil")) == [1, 3, 4])
    #expect(personIDs(people.filter("mood == %@", Mood.grumpy.rawValue)) == [2])
    #expect(personIDs(people.filter("rank > 1")) == [1, 4])
    #expect(personIDs(people.filter("rank == nil")) == [2])
  }

  // MARK: maximumNumberOfActiveVersions

  /// Each frozen Realm pins its version; the newest version counts too.
  @Test func writesWithinTheActiveVersionLimitSucceed() throws {
    var configuration = queryConfiguration()
    configuration.maximumNumberOfActiveVersions = 3
    let realm = try Realm(configuration: configuration)
    let first = realm.freeze()
    try realm.write { realm.create(ResidentDog.self, value: ["name": "A", "age": 1]) }
    let second = realm.freeze()
    // Two pinned versions and the newest: 3 active versions, within the limit.
    try realm.write { realm.create(ResidentDog.self, value: ["name": "B", "age": 2]) }
    #expect(realm.objects(ResidentDog.self).count == 2)
    #expect(first.objects(ResidentDog.self).count == 0)
    #expect(second.objects(ResidentDog.self).count == 1)
    #expect(first.isFrozen && second.isFrozen)
  }

  /// RealmSwift's `beginWrite()` raises Core's exception once more versions are active than
  /// the limit allows.
  @Test func beginWriteBeyondTheActiveVersionLimitFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, frozen) = try realmBeyondTheVersionLimit()
      withExtendedLifetime(frozen) { realm.beginWrite() }
    }
    #expect(stderrText(result).contains("Number of active versions (4) in the Realm exceeded the limit of 3"))
  }

  /// RealmSwift's `write` begins with `beginWrite()`, so it raises the same exception: it is
  /// not an error `write` throws (the child exits successfully if it can catch one).
  @Test(
    .disabled(
      "Shoal throws from write (a throwing API) where RealmSwift raises from beginWrite; beginWrite() itself stops the process as RealmSwift does"
    )) func writeBeyondTheActiveVersionLimitFails() async
  {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (realm, frozen) = try realmBeyondTheVersionLimit()
      do {
        try withExtendedLifetime(frozen) { try realm.write {} }
      } catch {
        exit(EXIT_SUCCESS)
      }
    }
    #expect(stderrText(result).contains("Number of active versions (4) in the Realm exceeded the limit of 3"))
  }

  /// Once the frozen Realms are gone and the file is opened afresh, writes succeed again.
  @Test func releasingPinnedVersionsAllowsWritesAgain() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("version-limit-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    var configuration = Realm.Configuration(
      fileURL: directory.appendingPathComponent("versions.realm"), objectTypes: queryTypes)
    configuration.maximumNumberOfActiveVersions = 2
    do {
      let realm = try Realm(configuration: configuration)
      var frozen = [realm.freeze()]
      try realm.write { realm.create(ResidentDog.self, value: ["name": "A", "age": 1]) }
      frozen.append(realm.freeze())
      try realm.write { realm.create(ResidentDog.self, value: ["name": "B", "age": 2]) }
      #expect(frozen.map { $0.objects(ResidentDog.self).count } == [0, 1])
      frozen.removeAll()
    }
    let realm = try Realm(configuration: configuration)
    try realm.write { realm.create(ResidentDog.self, value: ["name": "C", "age": 3]) }
    try realm.write { realm.create(ResidentDog.self, value: ["name": "D", "age": 4]) }
    #expect(realm.objects(ResidentDog.self).count == 4)
  }

  // MARK: Events

  @Test func eventConfigurationDefaultsAndMetadataUpdates() throws {
    let defaults = EventConfiguration()
    #expect(defaults.metadata == nil)
    #expect(defaults.partitionPrefix == "events")
    #expect(defaults.logger == nil)
    #expect(defaults.errorHandler == nil)
    // No event configuration, no events.
    #expect(try Realm(configuration: queryConfiguration()).events == nil)

    let harness = try EventHarness(metadata: ["userId": "a"])
    defer { harness.remove() }
    let realm = harness.realm
    let events = try #require(realm.events)
    // New metadata is not used until the next scope begins.
    let first = events.beginScope(activity: "first")
    events.updateMetadata(["userId": "b"])
    try realm.write { realm.add(makeEventPerson("A", "B", 1)) }
    harness.commit(first)
    let second = events.beginScope(activity: "second")
    try realm.write { realm.add(makeEventPerson("C", "D", 2)) }
    harness.commit(second)
    events.updateMetadata([:])
    let third = events.beginScope(activity: "third")
    try realm.write { realm.add(makeEventPerson("E", "F", 3)) }
    harness.commit(third)
    #expect(try harness.events(of: "first").map { $0["userId"] as? String } == ["a"])
    #expect(try harness.events(of: "second").map { $0["userId"] as? String } == ["b"])
    #expect(try harness.events(of: "third").map { $0["userId"] as? String } == [nil])
  }

  /// A write transaction inside a scope is one "write" event: the inserted and deleted objects
  /// whole, and for modified ones the old object and the new values of what changed.
  @Test func writeEventsCarryInsertedModifiedAndDeletedObjects() throws {
    let harness = try EventHarness()
    defer { harness.remove() }
    let realm = harness.realm
    let events = try #require(realm.events)
    let person = makeEventPerson("Fred", "Q", 30)
    let scope = events.beginScope(activity: "create object")
    #expect(scope.isActive)
    try realm.write { realm.add(person) }
    let created = allProperties(person)
    harness.commit(scope)
    #expect(!scope.isActive)
    let mutate = events.beginScope(activity: "mutate object")
    try realm.write { person.age = 31 }
    harness.commit(mutate)
    let mutated = allProperties(person)
    let delete = events.beginScope(activity: "delete object")
    try realm.write { realm.delete(person) }
    harness.commit(delete)

    let create = try harness.events(of: "create object")
    #expect(create.map { $0["event"] as? String } == ["write"])
    let inserted = try harness.data(create.first)["EventPerson"] as? [String: Any]
    #expect(sortedJSON(inserted?["insertions"] ?? []) == sortedJSON([created]))
    let modify = try harness.events(of: "mutate object")
    #expect(modify.map { $0["event"] as? String } == ["write"])
    let modified = try harness.data(modify.first)["EventPerson"] as? [String: Any]
    #expect(
      sortedJSON(modified?["modifications"] ?? []) == sortedJSON([["oldValue": created, "newValue": ["age": 31]]]))
    let remove = try harness.events(of: "delete object")
    #expect(remove.map { $0["event"] as? String } == ["write"])
    let deleted = try harness.data(remove.first)["EventPerson"] as? [String: Any]
    #expect(sortedJSON(deleted?["deletions"] ?? []) == sortedJSON([mutated]))
  }

  /// RealmSwift's event tests compare the whole `data` document: a kind of change that did not
  /// happen has no key.
  @Test func writeEventDataListsOnlyTheKindsOfChangeThatHappened() throws {
    let harness = try EventHarness()
    defer { harness.remove() }
    let realm = harness.realm
    let events = try #require(realm.events)
    let person = makeEventPerson("Fred", "Q", 30)
    let create = events.beginScope(activity: "create")
    try realm.write { realm.add(person) }
    let created = allProperties(person)
    harness.commit(create)
    let mutate = events.beginScope(activity: "mutate")
    try realm.write { person.age = 31 }
    harness.commit(mutate)
    let mutated = allProperties(person)
    let delete = events.beginScope(activity: "delete")
    try realm.write { realm.delete(person) }
    harness.commit(delete)

    let expected: [(String, [String: Any])] = [
      ("create", ["EventPerson": ["insertions": [created]]]),
      ("mutate", ["EventPerson": ["modifications": [["oldValue": created, "newValue": ["age": 31]]]]]),
      ("delete", ["EventPerson": ["deletions": [mutated]]]),
    ]
    for (activity, data) in expected {
      let recorded = try harness.events(of: activity)
      #expect(recorded.count == 1, "\(activity)")
      let actual = sortedJSON(try harness.data(recorded.first))
      #expect(actual == sortedJSON(data), "\(activity)")
    }
  }

  /// Objects read in a scope become "read" events `{"type": class, "value": [objects]}`;
  /// reads outside scopes and inside write transactions are not recorded.
  @Test func readEventsReportTheObjectsRead() throws {
    let harness = try EventHarness()
    defer { harness.remove() }
    let realm = harness.realm
    let events = try #require(realm.events)
    let a = makeEventPerson("A", "B", 1)
    let b = makeEventPerson("B", "C", 2)
    let c = makeEventPerson("C", "D", 3)
    try realm.write {
      realm.add([a, b, c])
      realm.create(EventLink.self, value: ["_id": ObjectId.generate(), "people": [b, c]] as [String: Any])
    }
    let aBeforeWrite = allProperties(a)
    _ = realm.objects(EventPerson.self).first  // outside any scope

    let results = events.beginScope(activity: "results")
    _ = realm.objects(EventPerson.self).first
    harness.commit(results)
    let lookup = events.beginScope(activity: "lookup by primary key")
    _ = realm.object(ofType: EventPerson.self, forPrimaryKey: a._id)
    harness.commit(lookup)
    let list = events.beginScope(activity: "list")
    _ = realm.objects(EventLink.self).first?.people.first
    harness.commit(list)
    let write = events.beginScope(activity: "write")
    try realm.write { a.age = 10 }
    harness.commit(write)

    for activity in ["results", "lookup by primary key"] {
      let recorded = try harness.events(of: activity)
      #expect(recorded.map { $0["event"] as? String } == ["read"], "\(activity)")
      let data = try harness.data(recorded.first)
      #expect(data["type"] as? String == "EventPerson", "\(activity)")
      #expect(sortedJSON(data["value"] ?? []) == sortedJSON([aBeforeWrite]), "\(activity)")
    }
    let listReads = try harness.events(of: "list").map { try harness.data($0) }
    let personReads = listReads.filter { $0["type"] as? String == "EventPerson" }
    #expect(personReads.count == 1)
    #expect(sortedJSON(personReads.first?["value"] ?? []) == sortedJSON([allProperties(b)]))
    #expect(try harness.events(of: "write").map { $0["event"] as? String } == ["write"])
    #expect(try harness.events().count == 5)
  }

  /// "All queries run … within an event scope will be automatically reported as 'read'
  /// events": a query reports every object it matched, even if only the first is used.
  @Test(
    .disabled("Known gap (README, Events): reads are recorded per object instantiated, not per object a query matched"))
  func readEventsOfAQueryReportEveryMatchingObject() throws {
    let harness = try EventHarness()
    defer { harness.remove() }
    let realm = harness.realm
    let events = try #require(realm.events)
    let a = makeEventPerson("A", "B", 1)
    let b = makeEventPerson("B", "C", 2)
    let c = makeEventPerson("C", "D", 3)
    try realm.write { realm.add([a, b, c]) }
    let scope = events.beginScope(activity: "query")
    _ = realm.objects(EventPerson.self).filter("firstName != 'B'").first
    harness.commit(scope)
    let recorded = try harness.events(of: "query")
    #expect(recorded.map { $0["event"] as? String } == ["read"])
    let value = try harness.data(recorded.first)["value"] as? [[String: Any]]
    #expect(value?.compactMap { $0["firstName"] as? String }.sorted() == ["A", "C"])
  }

  /// A link is reported as the target's primary key, unless the link was followed inside the
  /// scope: then the target is embedded whole (and has its own read event).
  @Test(
    .disabled(
      "Known gap (README, Events): a read event gives linked objects by primary key even when the link was followed"))
  func readEventsEmbedLinkedObjectsOnlyWhenFollowed() throws {
    let harness = try EventHarness()
    defer { harness.remove() }
    let realm = harness.realm
    let events = try #require(realm.events)
    let a = makeEventPerson("A", "B", 1)
    let b = makeEventPerson("B", "C", 2)
    let c = makeEventPerson("C", "D", 3)
    let id = ObjectId.generate()
    try realm.write {
      realm.add([a, b, c])
      realm.create(
        EventLink.self,
        value: ["_id": id, "person": a, "people": [b, c], "peopleByName": ["B": b, "C": c]] as [String: Any])
    }
    let links = realm.objects(EventLink.self)
    let unfollowed = events.beginScope(activity: "object read without link accesses")
    _ = links.first
    harness.commit(unfollowed)
    let followed = events.beginScope(activity: "link property")
    _ = links.first?.person
    harness.commit(followed)

    func reads(_ activity: String, _ type: String) throws -> [[String: Any]] {
      try harness.events(of: activity).map { try harness.data($0) }.filter { $0["type"] as? String == type }
    }
    let ids: [String: Any] = [
      "_id": id.stringValue, "person": a._id.stringValue, "people": [b._id.stringValue, c._id.stringValue],
      "peopleByName": ["B": b._id.stringValue, "C": c._id.stringValue],
    ]
    #expect(try reads("object read without link accesses", "EventPerson").isEmpty)
    let plain = try reads("object read without link accesses", "EventLink")
    #expect(sortedJSON(plain.first?["value"] ?? []) == sortedJSON([ids]))
    #expect(try reads("link property", "EventPerson").count == 1)
    var withPerson = ids
    withPerson["person"] = allProperties(a)
    let link = try reads("link property", "EventLink")
    #expect(sortedJSON(link.first?["value"] ?? []) == sortedJSON([withPerson]))
  }

  /// Custom events are stored with the activity, event type and data given (nil stays nil,
  /// data need not be JSON); the completion handler reports success with nil.
  @Test func customEventsAreStoredAsGiven() throws {
    let harness = try EventHarness()
    defer { harness.remove() }
    let events = try #require(harness.realm.events)
    let completions = EventCompletions()
    events.recordEvent(activity: "no event or data", completion: completions.handler)
    events.recordEvent(activity: "event", eventType: "custom event", completion: completions.handler)
    events.recordEvent(activity: "non-json data", data: "not valid json", completion: completions.handler)
    events.recordEvent(
      activity: "event and data", eventType: "custom json event", data: "{\"bar\": \"foo\"}",
      completion: completions.handler)
    for _ in 0..<4 { #expect(completions.wait().isEmpty) }
    let recorded = try harness.events()
    #expect(recorded.count == 4)
    func field(_ activity: String, _ key: String) -> String? {
      recorded.first { $0["activity"] as? String == activity }?[key] as? String
    }
    #expect(field("no event or data", "event") == nil && field("no event or data", "data") == nil)
    #expect(field("event", "event") == "custom event" && field("event", "data") == nil)
    #expect(field("non-json data", "event") == nil && field("non-json data", "data") == "not valid json")
    #expect(field("event and data", "event") == "custom json event")
    #expect(field("event and data", "data") == "{\"bar\": \"foo\"}")
    #expect(Set(recorded.compactMap { $0["_id"] as? String }).count == 4)
  }

  /// Several scopes can be active at once; a cancelled scope and one deallocated while active
  /// record nothing.
  @Test func scopesCommitCancelAndAreDiscardedWhenDeallocated() throws {
    let harness = try EventHarness()
    defer { harness.remove() }
    let realm = harness.realm
    let events = try #require(realm.events)
    let scope1 = events.beginScope(activity: "scope 1")
    let scope3 = events.beginScope(activity: "scope 3")
    do {
      let scope2 = events.beginScope(activity: "scope 2")
      try realm.write { realm.add(makeEventPerson("A", "B", 1)) }
      scope1.cancel()
      #expect(!scope1.isActive)
      #expect(scope2.isActive)
      #expect(scope3.isActive)
    }
    harness.commit(scope3)
    #expect(!scope3.isActive)
    let completions = EventCompletions()
    events.recordEvent(activity: "sentinel", completion: completions.handler)
    #expect(completions.wait().isEmpty)
    #expect(try harness.events().map { $0["activity"] as? String } == ["scope 3", "sentinel"])
  }

  /// "An exception will be thrown if this scope has already been committed or cancelled."
  @Test func committingOrCancellingAnEndedScopeFails() async {
    await #expect(processExitsWith: .failure) {
      var configuration = queryConfiguration()
      configuration.eventConfiguration = EventConfiguration()
      let realm = try Realm(configuration: configuration)
      let scope = try #require(realm.events).beginScope(activity: "twice")
      scope.cancel()
      scope.commit(completion: nil)
    }
    await #expect(processExitsWith: .failure) {
      var configuration = queryConfiguration()
      configuration.eventConfiguration = EventConfiguration()
      let realm = try Realm(configuration: configuration)
      let scope = try #require(realm.events).beginScope(activity: "twice")
      scope.cancel()
      scope.cancel()
    }
  }
}
