import Dispatch
import Foundation
import Shoal
import Synchronization
import Testing

// Conformance with RealmSwift 10.x's documented behaviour of the logger, projections, sectioned
// results and the asynchronous APIs (actor-isolated Realms, asynchronous writes, thread-safe
// references and Shoal's async sequences, its stand-in for the Combine publishers), checked
// against realm-swift's and realm-core's sources. Tests that change the process-wide logger run in
// exit tests (a child process of their own), so they never disturb the suites running beside
// them; RealmSwift's exceptions (Shoal: fatal errors) are exit tests whose standard error must
// hold RealmSwift's message.

// MARK: - Models (names prefixed `AConf`; every Realm here lists them in `objectTypes`)

final class AConfAddress: EmbeddedObject {
  @Persisted var city = ""
  @Persisted var country = ""
}

final class AConfPerson: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var firstName = ""
  @Persisted var lastName = ""
  @Persisted var age = 0
  @Persisted var notes = ""
  @Persisted var address: AConfAddress?
  @Persisted var friends: List<AConfPerson>
  /// Not persisted: Realm ignores it.
  var scratch = 0
}

/// RealmSwift's documented example: a renamed property, a key path through a value, one through
/// an embedded object and a list projected to one property of its elements.
final class AConfPersonProjection: Projection<AConfPerson> {
  @Projected(\AConfPerson.firstName) var name
  @Projected(\AConfPerson.lastName.localizedUppercase) var lastNameCaps
  @Projected(\AConfPerson.address?.city) var homeCity
  @Projected(\AConfPerson.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
}

/// Two projected properties with the same root property.
final class AConfAgeTwiceProjection: Projection<AConfPerson> {
  @Projected(\AConfPerson.age) var years
  @Projected(\AConfPerson.age) var alsoYears
}

/// A projection of a property Realm does not manage.
final class AConfIgnoredProjection: Projection<AConfPerson> {
  @Projected(\AConfPerson.scratch) var scratch
}

final class AConfItem: Object {
  @Persisted var name = ""
  @Persisted var rank = 0
  /// The section key of RealmSwift's own examples (`sectioned(by: \.firstLetter)`).
  var firstLetter: String { String(name.prefix(1)) }
}

private let aconfObjectTypes: [ObjectBase.Type] = [AConfPerson.self, AConfAddress.self, AConfItem.self]

/// A fresh in-memory configuration holding only the `AConf` classes.
private func aconfConfiguration() -> Realm.Configuration {
  Realm.Configuration(inMemoryIdentifier: "aconf-" + UUID().uuidString, objectTypes: aconfObjectTypes)
}

/// Ada (living in London, with Charles as her friend) and Charles.
private func aconfPeopleRealm(_ configuration: Realm.Configuration = aconfConfiguration()) throws -> Realm {
  let realm = try Realm(configuration: configuration)
  try realm.write {
    let ada = realm.create(
      AConfPerson.self,
      value: [
        "id": 1, "firstName": "Ada", "lastName": "Lovelace", "age": 36,
        "address": ["city": "London", "country": "UK"],
      ])
    let charles = realm.create(
      AConfPerson.self, value: ["id": 2, "firstName": "Charles", "lastName": "Babbage", "age": 79])
    ada.friends.append(charles)
  }
  return realm
}

/// RealmSwift's sectioned-results fixture: "banana", "box", "apple", "chalk", added in that order.
private func aconfItemsRealm(_ configuration: Realm.Configuration = aconfConfiguration()) throws -> Realm {
  let realm = try Realm(configuration: configuration)
  try realm.write {
    for (name, rank) in [("banana", 2), ("box", 4), ("apple", 1), ("chalk", 3)] {
      realm.create(AConfItem.self, value: ["name": name, "rank": rank])
    }
  }
  return realm
}

// MARK: - Helpers

/// Lines recorded from callbacks on any thread.
private final class AConfLines: Sendable {
  private struct State {
    var lines: [String] = []
    var waiters: [Int: (atLeast: Int, continuation: CheckedContinuation<Bool, Never>)] = [:]
    var nextWaiter = 0
  }
  private let state = Mutex(State())
  /// Signalled by every line.
  private let appended = DispatchSemaphore(value: 0)

  func append(_ line: String) {
    let due = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
      s.lines.append(line)
      let due = s.waiters.filter { $0.value.atLeast <= s.lines.count }
      for id in due.keys { s.waiters[id] = nil }
      return due.values.map(\.continuation)
    }
    for continuation in due { continuation.resume(returning: true) }
    appended.signal()
  }
  var all: [String] { state.withLock { $0.lines } }
  var count: Int { state.withLock { $0.lines.count } }

  /// Waits for at least `n` lines; false after 30 s. With `realm`, refreshes it first and
  /// again whenever no line came for 10 ms: its notifications are delivered on this thread,
  /// inside `refresh()`.
  func wait(forAtLeast n: Int, refreshing realm: Realm? = nil) -> Bool {
    let deadline = DispatchTime.now() + 30
    while count < n {
      if let realm {
        _ = realm.refresh()
        if count >= n { return true }
      }
      let until = realm == nil ? deadline : min(deadline, .now() + .milliseconds(10))
      if appended.wait(timeout: until) == .timedOut, DispatchTime.now() >= deadline { return count >= n }
    }
    return true
  }

  /// Suspends until at least `n` lines have arrived; false after 120 s. The consumer task
  /// runs on the cooperative pool, which synchronous tests running alongside can hold for
  /// tens of seconds on a 2-core machine; a passing run never waits that long.
  func arrival(ofAtLeast n: Int) async -> Bool {
    await withCheckedContinuation { continuation in
      let id = state.withLock { s -> Int? in
        guard s.lines.count < n else { return nil }
        s.nextWaiter += 1
        s.waiters[s.nextWaiter] = (n, continuation)
        return s.nextWaiter
      }
      guard let id else { return continuation.resume(returning: true) }
      DispatchQueue.global().asyncAfter(deadline: .now() + 120) { [self] in
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
      }
    }
  }
}

/// Log messages received by a log function, with their levels.
private final class AConfLogMessages: Sendable {
  private let messages = Mutex<[(level: Logger.Level, message: String)]>([])
  func append(_ level: Logger.Level, _ message: String) { messages.withLock { $0.append((level, message)) } }
  var all: [(level: Logger.Level, message: String)] { messages.withLock { $0 } }
}

/// A value as text, optionals unwrapped.
private func aconfDescribe(_ value: Any?) -> String {
  guard let value else { return "nil" }
  let mirror = Mirror(reflecting: value)
  if mirror.displayStyle == .optional { return mirror.children.first.map { aconfDescribe($0.value) } ?? "nil" }
  return "\(value)"
}

/// A projection change as text: each property change's name and new value (and old value when
/// `old`), or "deleted".
private func aconfDescribe<P>(_ change: ObjectChange<P>, old: Bool = false) -> String {
  switch change {
  case .change(_, let properties):
    return properties.map {
      "\($0.name)=" + (old ? aconfDescribe($0.oldValue) + "->" : "") + aconfDescribe($0.newValue)
    }.joined(separator: ",")
  case .deleted: return "deleted"
  case .error(let error): return "error \(error)"
  }
}

/// A sectioned-results change as text, index paths as [section, item].
private func aconfDescribe<C: Collection>(_ change: SectionedResultsChange<C>) -> String {
  func paths(_ indexPaths: [IndexPath]) -> String { "\(indexPaths.map { [$0[0], $0[1]] })" }
  switch change {
  case .initial(let sections): return "initial \(sections.count)"
  case .update(let sections, let deletions, let insertions, let modifications, let inserted, let deleted):
    return "update \(sections.count) del \(paths(deletions)) ins \(paths(insertions)) mod \(paths(modifications)) "
      + "+s \(Array(inserted)) -s \(Array(deleted))"
  }
}

/// In an exit test's child process: reports `message` on standard error unless `condition`
/// holds. The child still exits normally, so that the parent gets its standard error (a failed
/// exit test returns no result) and reports the message.
private func aconfCheck(_ condition: Bool, _ message: @autoclosure () -> String) {
  guard !condition else { return }
  FileHandle.standardError.write(Data("AConf check failed: \(message())\n".utf8))
}

/// Opens a Realm, writes to it and lets it go, so that the shared logger hears Realm's own lines.
private func aconfOpenAndWrite() throws {
  let realm = try Realm(configuration: aconfConfiguration())
  try realm.write { realm.create(AConfItem.self, value: ["name": "logged", "rank": 1]) }
  _ = realm.objects(AConfItem.self).filter("rank > 0").count
}

// MARK: - Logger

@Suite("AsyncLoggerConformance: Logger", .serialized)
struct AsyncLoggerConformanceLoggerTests {
  /// `LogLevel` is `RLMLogLevel`: off, fatal, error, warn, info, detail, debug, trace, all = 0…8.
  @Test func levelRawValuesAndOrderFollowRLMLogLevel() {
    let levels: [Logger.Level] = [.off, .fatal, .error, .warn, .info, .detail, .debug, .trace, .all]
    #expect(levels.map { Int($0.rawValue) } == Array(0...8))
    #expect(Logger.Level.info.rawValue < Logger.Level.detail.rawValue)
    #expect(Logger.Level.trace.rawValue < Logger.Level.all.rawValue)
  }

  /// "By default default log threshold level is `.info`."
  @Test func theDefaultLoggerLogsAtInfo() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      aconfCheck(Logger.shared.level == .info, "Logger.shared.level is \(Logger.shared.level), not info")
    }
    #expect(!stderrText(result).contains("AConf check failed"), "\(stderrText(result))")
  }

  /// `Logger.shared = logger` makes it the default logger, with its level; `Logger.shared.level`
  /// changes the threshold "at any point of the application's lifetime".
  @Test func settingTheSharedLoggerAndItsLevel() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      Logger.shared = Logger(level: .trace) { _, _ in }
      aconfCheck(Logger.shared.level == .trace, "shared level \(Logger.shared.level) after installing a trace logger")
      Logger.shared.level = .warn
      aconfCheck(Logger.shared.level == .warn, "shared level \(Logger.shared.level) after setting warn")
    }
    #expect(!stderrText(result).contains("AConf check failed"), "\(stderrText(result))")
  }

  /// A custom logger at `.all` receives Realm's own lines when a Realm is opened and written,
  /// including lines below `.info`.
  @Test func aCustomLoggerAtAllReceivesRealmsOwnLines() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      let received = AConfLogMessages()
      Logger.shared = Logger(level: .all) { level, message in received.append(level, message) }
      try aconfOpenAndWrite()
      let messages = received.all
      aconfCheck(!messages.isEmpty, "no log message while opening and writing a Realm at .all")
      aconfCheck(
        messages.contains { $0.level.rawValue > Logger.Level.info.rawValue },
        "no message more verbose than info: \(messages.map { "\($0.level): \($0.message)" })")
    }
    #expect(!stderrText(result).contains("AConf check failed"), "\(stderrText(result))")
  }

  /// The threshold filters Realm's lines: at `.info` nothing more verbose arrives; raising
  /// `Logger.shared.level` to `.trace` later lets them through to the same log function.
  @Test func theThresholdFiltersRealmsLines() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      let received = AConfLogMessages()
      Logger.shared = Logger(level: .info) { level, message in received.append(level, message) }
      try aconfOpenAndWrite()
      let atInfo = received.all
      aconfCheck(
        atInfo.allSatisfy { $0.level.rawValue <= Logger.Level.info.rawValue && $0.level != .off },
        "messages above the .info threshold: \(atInfo.map { "\($0.level): \($0.message)" })")
      Logger.shared.level = .trace
      try aconfOpenAndWrite()
      let atTrace = received.all.dropFirst(atInfo.count)
      aconfCheck(
        atTrace.contains { $0.level.rawValue > Logger.Level.info.rawValue },
        "no verbose message after raising the level to .trace")
      aconfCheck(
        atTrace.allSatisfy { $0.level.rawValue <= Logger.Level.trace.rawValue },
        "messages above the .trace threshold: \(atTrace.map { "\($0.level): \($0.message)" })")
    }
    #expect(!stderrText(result).contains("AConf check failed"), "\(stderrText(result))")
  }

  /// "To disable use `Logger.shared.level = .off`."
  @Test func levelOffSilencesRealm() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      let received = AConfLogMessages()
      Logger.shared = Logger(level: .all) { level, message in received.append(level, message) }
      Logger.shared.level = .off
      try aconfOpenAndWrite()
      aconfCheck(received.all.isEmpty, "messages at .off: \(received.all.map { "\($0.level): \($0.message)" })")
    }
    #expect(!stderrText(result).contains("AConf check failed"), "\(stderrText(result))")
  }

  /// `log(level:message:)` hands the level and the exact message to the log function, for
  /// messages at or above the logger's level only.
  @Test func logLevelMessageReachesTheLogFunction() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      let received = AConfLogMessages()
      let logger = Logger(level: .warn) { level, message in received.append(level, message) }
      Logger.shared = logger
      logger.log(level: .error, message: "aconf error line")
      logger.log(level: .info, message: "aconf info line")
      logger.log(level: .trace, message: "aconf trace line")
      logger.log(level: .warn, message: "aconf warn line")
      let ours = received.all.filter { $0.message.hasPrefix("aconf") }
      aconfCheck(
        ours.map(\.message) == ["aconf error line", "aconf warn line"], "received \(ours.map(\.message))")
      aconfCheck(ours.map(\.level) == [.error, .warn], "levels \(ours.map(\.level))")
    }
    #expect(!stderrText(result).contains("AConf check failed"), "\(stderrText(result))")
  }

  /// `Logger(level:logFunction:)` gives the logger that threshold: a logger made at `.all` logs
  /// its own debug lines, one made at `.error` drops its warnings, whatever the shared logger's
  /// level (RLMLogger's `initWithLevel:logFunction:` sets the threshold; 10.50+ also makes it the
  /// level of the `Realm` category).
  @Test func aLoggersLevelGovernsItsOwnLogCalls() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      let received = AConfLogMessages()
      let verbose = Logger(level: .all) { level, message in received.append(level, message) }
      verbose.log(level: .debug, message: "aconf debug line")
      aconfCheck(
        received.all.map(\.message) == ["aconf debug line"],
        "a logger at .all did not pass its debug line: \(received.all.map(\.message))")
      let quiet = Logger(level: .error) { level, message in received.append(level, message) }
      quiet.log(level: .warn, message: "aconf warn line")
      aconfCheck(
        received.all.map(\.message) == ["aconf debug line"],
        "a logger at .error passed its warning: \(received.all.map(\.message))")
    }
    #expect(!stderrText(result).contains("AConf check failed"), "\(stderrText(result))")
  }
}

// MARK: - Projections

@Suite("AsyncLoggerConformance: Projections")
struct AsyncLoggerConformanceProjectionTests {
  @Test func projectionsReadThroughTheirKeyPaths() throws {
    let realm = try aconfPeopleRealm()
    let people: Results<AConfPersonProjection> = realm.objects(AConfPersonProjection.self)
    #expect(people.count == 2)
    // Queries name the root object's properties.
    let ada = try #require(people.filter("lastName == 'Lovelace'").first)
    #expect(ada.name == "Ada")
    #expect(ada.lastNameCaps == "LOVELACE")
    #expect(ada.homeCity == "London")
    #expect(Array(ada.friendNames) == ["Charles"])
    #expect(ada.rootObject.id == 1)
    let charles = AConfPersonProjection(
      projecting: try #require(realm.object(ofType: AConfPerson.self, forPrimaryKey: 2)))
    #expect(charles.homeCity == nil)
    #expect(charles.friendNames.isEmpty)
    #expect(charles.realm != nil)
    #expect(!charles.isInvalidated)
  }

  @Test func writingThroughAProjectionChangesTheRootObject() throws {
    let realm = try aconfPeopleRealm()
    let ada = try #require(realm.objects(AConfPersonProjection.self).filter("id == 1").first)
    try realm.write { ada.name = "Augusta" }
    #expect(ada.rootObject.firstName == "Augusta")
    #expect(realm.object(ofType: AConfPerson.self, forPrimaryKey: 1)?.firstName == "Augusta")
    // A projected list reads through to the list.
    try realm.write {
      ada.rootObject.friends.append(realm.create(AConfPerson.self, value: ["id": 3, "firstName": "Mary"]))
    }
    #expect(Array(ada.friendNames) == ["Charles", "Mary"])
    #expect(ada.friendNames.count == 2)
    #expect(ada.friendNames[1] == "Mary")
  }

  /// `Results` of projections are observed like any results: `.initial`, then `.update` with
  /// the indices of the projected objects.
  @Test func resultsOfProjectionsAreObservable() throws {
    let realm = try aconfPeopleRealm()
    let people = realm.objects(AConfPersonProjection.self).sorted(byKeyPath: "id")
    let seen = AConfLines()
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
      realm.create(AConfPerson.self, value: ["id": 3, "firstName": "Mary"])
      realm.object(ofType: AConfPerson.self, forPrimaryKey: 1)?.firstName = "Augusta"
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
    let realm = try aconfPeopleRealm()
    let ada = try #require(realm.object(ofType: AConfPerson.self, forPrimaryKey: 1))
    let charles = try #require(realm.object(ofType: AConfPerson.self, forPrimaryKey: 2))
    let fromResults = try #require(realm.objects(AConfPersonProjection.self).filter("id == 1").first)
    #expect(AConfPersonProjection(projecting: ada) == fromResults)
    #expect(AConfPersonProjection(projecting: ada).hashValue == fromResults.hashValue)
    #expect(AConfPersonProjection(projecting: charles) != fromResults)
  }

  /// Changes are reported under the projection's property names; changes to properties the
  /// projection does not include notify nothing.
  @Test func observeReportsChangesUnderTheProjectionsNames() throws {
    let realm = try aconfPeopleRealm()
    let ada = try #require(realm.objects(AConfPersonProjection.self).filter("id == 1").first)
    let seen = AConfLines()
    let token = ada.observe { change in seen.append(aconfDescribe(change)) }
    try realm.write { ada.rootObject.notes = "not projected" }
    try realm.write { ada.rootObject.firstName = "Augusta" }
    #expect(seen.wait(forAtLeast: 1, refreshing: realm))
    #expect(seen.all == ["name=Augusta"])
    token.invalidate()
  }

  /// A change's `newValue` is the projected value (`object[keyPath: projectedKeyPath]`), not
  /// the root property's.
  @Test func aChangeCarriesTheProjectedValue() throws {
    let realm = try aconfPeopleRealm()
    let ada = try #require(realm.objects(AConfPersonProjection.self).filter("id == 1").first)
    let seen = AConfLines()
    let token = ada.observe { change in seen.append(aconfDescribe(change)) }
    try realm.write { ada.rootObject.lastName = "Byron" }
    #expect(seen.wait(forAtLeast: 1, refreshing: realm))
    #expect(seen.all == ["lastNameCaps=BYRON"])
    token.invalidate()
  }

  /// Seed 000's warning: "For projected properties where the original property has the same
  /// root property name, this will trigger a `PropertyChange` for each of the Projected
  /// properties".
  @Test func everyProjectedPropertyOfAChangedRootPropertyIsReported() throws {
    let realm = try aconfPeopleRealm()
    let ada = AConfAgeTwiceProjection(
      projecting: try #require(realm.object(ofType: AConfPerson.self, forPrimaryKey: 1)))
    let seen = AConfLines()
    let token = ada.observe { change in seen.append(aconfDescribe(change)) }
    try realm.write { ada.rootObject.age = 37 }
    #expect(seen.wait(forAtLeast: 1, refreshing: realm))
    #expect(seen.all == ["years=37,alsoYears=37"])
    token.invalidate()
  }

  /// String key paths name the root object's properties, as in realm-swift's
  /// `ProjectionTests.testObserveKeyPath` (`observe(keyPaths: ["lastName"])` on a projection
  /// whose property is `lastNameCaps`); other properties do not notify.
  @Test func stringKeyPathsNameTheRootObjectsProperties() throws {
    let realm = try aconfPeopleRealm()
    let ada = try #require(realm.objects(AConfPersonProjection.self).filter("id == 1").first)
    let seen = AConfLines()
    let token = ada.observe(keyPaths: ["lastName"]) { change in seen.append(aconfDescribe(change)) }
    // Registered after it, an observer of the whole object marks each delivery.
    let commits = AConfLines()
    let sentinel = ada.rootObject.observe { (_: ObjectChange<AConfPerson>) in commits.append("commit") }
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
    let realm = try aconfPeopleRealm()
    let ada = try #require(realm.objects(AConfPersonProjection.self).filter("id == 1").first)
    let seen = AConfLines()
    let queue = DispatchQueue(label: "aconf.projection")
    let token = ada.observe(keyPaths: nil, on: queue) { change in seen.append(aconfDescribe(change, old: true)) }
    try realm.write { ada.rootObject.firstName = "Augusta" }
    #expect(seen.wait(forAtLeast: 1))
    #expect(seen.all == ["name=Ada->Augusta"])
    token.invalidate()
  }

  @Test func deletingTheRootObjectReportsDeleted() throws {
    let realm = try aconfPeopleRealm()
    let ada = try #require(realm.objects(AConfPersonProjection.self).filter("id == 1").first)
    let seen = AConfLines()
    let token = ada.observe { change in seen.append(aconfDescribe(change)) }
    try realm.write { realm.delete(ada.rootObject) }
    #expect(seen.wait(forAtLeast: 1, refreshing: realm))
    #expect(seen.all == ["deleted"])
    #expect(ada.isInvalidated)
    token.invalidate()
  }

  /// Seed 000: a frozen projection keeps its values; `thaw()` gives the live one, nil once the
  /// object is deleted.
  @Test func frozenProjectionsKeepTheirValuesAndThaw() throws {
    let realm = try aconfPeopleRealm()
    let ada = try #require(realm.objects(AConfPersonProjection.self).filter("id == 1").first)
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
      let realm = try Realm(configuration: aconfConfiguration())
      let person = try realm.write { realm.create(AConfPerson.self, value: ["id": 1]) }
      let projection = AConfIgnoredProjection(projecting: person)
      FileHandle.standardError.write(Data("created \(projection.scratch)\n".utf8))
    }
    #expect(stderrText(result).contains("@Projected property 'scratch' must be a part of Realm object"))
  }
}

// MARK: - Sectioned results

@Suite("AsyncLoggerConformance: Sectioned results")
struct AsyncLoggerConformanceSectionedTests {
  /// realm-swift's `SectionedResultsTests.testCreationFromResults`.
  @Test func sectionedByAKeyPathSortsAndGroups() throws {
    let realm = try aconfItemsRealm()
    let results = realm.objects(AConfItem.self)
    let ascending = results.sectioned(by: \.firstLetter, ascending: true)
    #expect(ascending.count == 3)
    #expect(ascending.map(\.key) == ["a", "b", "c"])
    #expect(ascending.allKeys == ["a", "b", "c"])
    #expect(ascending.map(\.count) == [1, 2, 1])
    #expect(ascending[1].map(\.name) == ["banana", "box"])
    let descending = results.sectioned(by: \.firstLetter, ascending: false)
    #expect(descending.map(\.key) == ["c", "b", "a"])
    #expect(descending[1].map(\.name) == ["box", "banana"])
    let byRank = results.sectioned(by: \.rank, ascending: false)
    #expect(byRank.allKeys == [4, 3, 2, 1])
  }

  @Test func sectionedWithSortDescriptorsOrAKeyBlock() throws {
    let realm = try aconfItemsRealm()
    let results = realm.objects(AConfItem.self)
    let byKeyPath = results.sectioned(by: \.firstLetter, sortDescriptors: [SortDescriptor(keyPath: "name")])
    #expect(byKeyPath.allKeys == ["a", "b", "c"])
    let byBlock = results.sectioned(sortDescriptors: [SortDescriptor(keyPath: "name", ascending: false)]) {
      $0.firstLetter
    }
    #expect(byBlock.allKeys == ["c", "b", "a"])
    #expect(byBlock[0].key == "c")
    #expect(byBlock[0].id == "c")
  }

  /// realm-swift's `testSubscript`: sections by index, elements by index and by IndexPath.
  @Test func subscriptsByIndexAndIndexPath() throws {
    let realm = try aconfItemsRealm()
    let sectioned = realm.objects(AConfItem.self).sectioned(by: \.firstLetter, ascending: true)
    let section = sectioned[0]
    #expect(section.key == "a")
    #expect(section.count == 1)
    #expect(section[0].name == "apple")
    #expect(sectioned[IndexPath(indexes: [0, 0])].name == "apple")
    #expect(sectioned[IndexPath(indexes: [1, 1])].name == "box")
    #expect(sectioned[IndexPath(indexes: [2, 0])].name == "chalk")
  }

  /// One section per key, whatever the sort order: elements with the same key join its section
  /// even when the sort does not keep them together (realm-core's `calculate_sections`).
  @Test func eachKeyHasOneSection() throws {
    let realm = try aconfItemsRealm()
    // By rank: apple (1), banana (2), chalk (3), box (4).
    let sectioned = realm.objects(AConfItem.self).sectioned(sortDescriptors: [SortDescriptor(keyPath: "rank")]) {
      $0.firstLetter
    }
    #expect(sectioned.count == 3)
    #expect(sectioned.allKeys == ["a", "b", "c"])
    #expect(sectioned.map { $0.map(\.name) } == [["apple"], ["banana", "box"], ["chalk"]])
  }

  @Test func theSectionKeyPathMustMatchThePrimarySortDescriptor() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try aconfItemsRealm()
      let sectioned = realm.objects(AConfItem.self).sectioned(
        by: \.firstLetter, sortDescriptors: [SortDescriptor(keyPath: "rank")])
      FileHandle.standardError.write(Data("sectioned \(sectioned.count)\n".utf8))
    }
    #expect(stderrText(result).contains("The section key path must match the primary sort descriptor."))
  }

  @Test func sectioningWithNoSortDescriptorFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try aconfItemsRealm()
      let sectioned = realm.objects(AConfItem.self).sectioned(by: \.firstLetter, sortDescriptors: [])
      FileHandle.standardError.write(Data("sectioned \(sectioned.count)\n".utf8))
    }
    #expect(stderrText(result).contains("Can not section Results with empty sortDescriptor parameter."))
  }

  /// realm-swift's `SectionedResultsTests.testObserveOnQueue`: a section that disappears is
  /// reported by its index alone, a new section with its rows; an element that moves within its
  /// section is a deletion and an insertion; properties outside the key paths are ignored.
  @Test func observeReportsSectionAndRowChangesLikeRealmSwift() throws {
    let realm = try aconfItemsRealm()
    let results = realm.objects(AConfItem.self)
    let sectioned = results.sectioned(by: \.firstLetter, ascending: true)
    let seen = AConfLines()
    let queue = DispatchQueue(label: "aconf.sectioned")
    let token = sectioned.observe(keyPaths: ["name"], on: queue) { change in seen.append(aconfDescribe(change)) }
    #expect(seen.wait(forAtLeast: 1))
    try realm.write {
      realm.delete(results.filter("name IN %@", ["banana", "apple"]))
      results.filter("name == 'box'").first?.name = "bog"
      realm.create(AConfItem.self, value: ["name": "zebra", "rank": 5])
    }
    #expect(seen.wait(forAtLeast: 2))
    try realm.write {
      results.filter("name == 'bog'").first?.name = "bogg"
      results.filter("name == 'chalk'").first?.rank = 10
    }
    #expect(seen.wait(forAtLeast: 3))
    #expect(
      seen.all == [
        "initial 3",
        "update 3 del [[1, 0], [1, 1]] ins [[0, 0], [2, 0]] mod [] +s [2] -s [0]",
        "update 3 del [] ins [] mod [[0, 0]] +s [] -s []",
      ])
    token.invalidate()
  }

  /// The rows of a new section are listed as insertions (realm-core erases only the deletions of
  /// deleted sections: "Cocoa only requires the index of the deleted sections").
  @Test func aNewSectionsRowsAreInsertions() throws {
    let realm = try aconfItemsRealm()
    let sectioned = realm.objects(AConfItem.self).sectioned(by: \.firstLetter, ascending: true)
    let seen = AConfLines()
    let token = sectioned.observe { change in seen.append(aconfDescribe(change)) }
    #expect(seen.wait(forAtLeast: 1, refreshing: realm))
    try realm.write { realm.create(AConfItem.self, value: ["name": "dog", "rank": 9]) }
    #expect(seen.wait(forAtLeast: 2, refreshing: realm))
    try realm.write { realm.delete(realm.objects(AConfItem.self).filter("name == 'apple'")) }
    #expect(seen.wait(forAtLeast: 3, refreshing: realm))
    #expect(
      seen.all == [
        "initial 3",
        "update 4 del [] ins [[3, 0]] mod [] +s [3] -s []",
        "update 3 del [] ins [] mod [] +s [] -s [0]",
      ])
    token.invalidate()
  }

  /// realm-swift's `testFrozen` and `testFrozenResults`.
  @Test func frozenSectionedResultsKeepTheirSectionsAndThaw() throws {
    let realm = try aconfItemsRealm()
    let results = realm.objects(AConfItem.self)
    let live = results.sectioned(by: \.firstLetter, ascending: true)
    #expect(!live.isFrozen)
    let frozen = live.freeze()
    let fromFrozenResults = results.freeze().sectioned(by: \.firstLetter, ascending: false)
    try realm.write { realm.create(AConfItem.self, value: ["name": "zebra", "rank": 5]) }
    #expect(frozen.isFrozen)
    #expect(frozen.count == 3)
    #expect(frozen.map(\.key) == ["a", "b", "c"])
    #expect(fromFrozenResults.isFrozen)
    #expect(fromFrozenResults.map(\.key) == ["c", "b", "a"])
    let thawed = try #require(frozen.thaw())
    #expect(!thawed.isFrozen)
    #expect(thawed.count == 4)
    #expect(thawed.map(\.key) == ["a", "b", "c", "z"])
    #expect(live.count == 4)
  }
}

// MARK: - Asynchronous APIs

private struct AConfError: Error {}

/// An actor with a Realm isolated to it.
private actor AConfRealmActor {
  private var realm: Realm?

  func open(_ configuration: Realm.Configuration) async throws {
    realm = try await Realm(configuration: configuration, actor: self)
  }

  /// `asyncWrite` returns the block's value.
  func addItems(_ names: [String]) async throws -> Int {
    guard let realm else { return -1 }
    return try await realm.asyncWrite {
      for name in names { realm.create(AConfItem.self, value: ["name": name, "rank": 1]) }
      return realm.objects(AConfItem.self).count
    }
  }

  /// A throwing `asyncWrite` block cancels the transaction: (caught, count, in a write).
  func failingWrite() async -> (caught: Bool, count: Int, inWrite: Bool) {
    guard let realm else { return (false, -1, false) }
    var caught = false
    do {
      try await realm.asyncWrite {
        realm.create(AConfItem.self, value: ["name": "rolled back", "rank": 1])
        throw AConfError()
      }
    } catch is AConfError {
      caught = true
    } catch {
      caught = false
    }
    return (caught, realm.objects(AConfItem.self).count, realm.isInWriteTransaction)
  }

  /// `writeAsync` queues the write: (id, pending right after the call, completion error, count,
  /// pending after completion).
  func writeAsyncAndWait() async -> (
    id: AsyncTransactionId, pendingBefore: Bool, error: String?, count: Int, pendingAfter: Bool
  ) {
    guard let realm else { return (0, false, "no realm", -1, false) }
    var id: AsyncTransactionId = 0
    var pendingBefore = false
    let error: String? = await withCheckedContinuation { continuation in
      id = realm.writeAsync(
        { realm.create(AConfItem.self, value: ["name": "queued", "rank": 1]) },
        onComplete: { error in continuation.resume(returning: error.map { "\($0)" }) })
      pendingBefore = realm.isPerformingAsynchronousWriteOperations
    }
    return (
      id, pendingBefore, error, realm.objects(AConfItem.self).count, realm.isPerformingAsynchronousWriteOperations
    )
  }

  /// `beginAsyncWrite` + `commitAsyncWrite`: (in a write inside the block, commit succeeded,
  /// count).
  func beginAndCommit() async -> (inWrite: Bool, committed: Bool, count: Int) {
    guard let realm else { return (false, false, -1) }
    let outcome: (Bool, Bool) = await withCheckedContinuation { continuation in
      realm.beginAsyncWrite {
        let inWrite = realm.isInWriteTransaction
        realm.create(AConfItem.self, value: ["name": "begun", "rank": 1])
        realm.commitAsyncWrite { error in continuation.resume(returning: (inWrite, error == nil)) }
      }
    }
    return (outcome.0, outcome.1, realm.objects(AConfItem.self).count)
  }

  /// `cancelAsyncWrite` of a queued write: (its block ran, count after a later write).
  func cancelQueuedWrite() async throws -> (ran: Bool, count: Int) {
    guard let realm else { return (true, -1) }
    let ran = AConfLines()
    let id = realm.beginAsyncWrite {
      ran.append("ran")
      realm.create(AConfItem.self, value: ["name": "cancelled", "rank": 1])
      realm.commitAsyncWrite()
    }
    try realm.cancelAsyncWrite(id)
    // A later write completes only after the cancelled one would have run.
    await withCheckedContinuation { continuation in
      realm.writeAsync(
        { realm.create(AConfItem.self, value: ["name": "later", "rank": 1]) },
        onComplete: { _ in continuation.resume() })
    }
    return (ran.count > 0, realm.objects(AConfItem.self).count)
  }
}

@Suite("AsyncLoggerConformance: Asynchronous APIs")
struct AsyncLoggerConformanceAsyncTests {
  @Test func anActorIsolatedRealmWritesWithAsyncWrite() async throws {
    let configuration = aconfConfiguration()
    let actor = AConfRealmActor()
    try await actor.open(configuration)
    #expect(try await actor.addItems(["a", "b"]) == 2)
    let realm = try Realm(configuration: configuration)
    #expect(realm.objects(AConfItem.self).map(\.name).sorted() == ["a", "b"])
  }

  @MainActor
  @Test func aMainActorRealmWritesWithAsyncWrite() async throws {
    let realm = try await Realm(configuration: aconfConfiguration(), actor: MainActor.shared)
    // `@Sendable`: Shoal's `asyncWrite` is not isolated to its caller (RealmSwift's takes
    // `_isolation: isolated (any Actor)? = #isolation`), so a plain closure formed on the main
    // actor cannot be passed to it in Swift 6.
    let count = try await realm.asyncWrite { @Sendable in
      realm.create(AConfItem.self, value: ["name": "main", "rank": 1])
      return realm.objects(AConfItem.self).count
    }
    #expect(count == 1)
    #expect(!realm.isInWriteTransaction)
  }

  /// "If the block throws an error, the transaction will be canceled and any changes made
  /// before the error will be rolled back."
  @Test func asyncWriteRollsBackWhenItsBlockThrows() async throws {
    let actor = AConfRealmActor()
    try await actor.open(aconfConfiguration())
    let outcome = await actor.failingWrite()
    #expect(outcome.caught)
    #expect(outcome.count == 0)
    #expect(!outcome.inWrite)
  }

  /// `asyncWrite` on a Realm confined to a thread: "asyncWrite() can only be called on main
  /// thread or actor-isolated Realms".
  @Test(
    .disabled(
      "Shoal allows asyncWrite on a Realm confined to a plain thread (README); one confined to a dispatch queue refuses it as RealmSwift does (AsyncWriteCancellationTests)"
    )) func asyncWriteNeedsAnActorIsolatedRealm() async
  {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
          guard let realm = try? Realm(configuration: aconfConfiguration()) else { return continuation.resume() }
          Task {
            _ = try? await realm.asyncWrite { realm.create(AConfItem.self, value: ["name": "x", "rank": 1]) }
            continuation.resume()
          }
        }
      }
    }
    #expect(stderrText(result).contains("asyncWrite() can only be called on main thread or actor-isolated Realms"))
  }

  /// `writeAsync` needs a Realm that can be called back (a run loop, a queue or an actor);
  /// realm-core: "Cannot schedule async transaction. Make sure you are running from inside a
  /// run loop."
  @Test(
    .disabled(
      "Linux has no run loops: writeAsync runs on the Realm's queue, actor or thread instead of failing (README)"))
  func writeAsyncOnAThreadWithoutARunLoopFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
          if let realm = try? Realm(configuration: aconfConfiguration()) {
            realm.writeAsync { realm.create(AConfItem.self, value: ["name": "x", "rank": 1]) }
          }
          continuation.resume()
        }
      }
    }
    #expect(
      stderrText(result).contains(
        "Cannot schedule async transaction. Make sure you are running from inside a run loop."))
  }

  /// `writeAsync` returns an id at once, the write is pending until it runs on the actor, and
  /// `onComplete` hears of the commit.
  @Test func writeAsyncQueuesTheWriteAndCompletes() async throws {
    let actor = AConfRealmActor()
    try await actor.open(aconfConfiguration())
    let outcome = await actor.writeAsyncAndWait()
    #expect(outcome.id != 0)
    #expect(outcome.pendingBefore)
    #expect(outcome.error == nil)
    #expect(outcome.count == 1)
    #expect(!outcome.pendingAfter)
  }

  @Test func beginAsyncWriteRunsInAWriteTransactionAndCommits() async throws {
    let actor = AConfRealmActor()
    try await actor.open(aconfConfiguration())
    let outcome = await actor.beginAndCommit()
    #expect(outcome.inWrite)
    #expect(outcome.committed)
    #expect(outcome.count == 1)
  }

  @Test func cancelAsyncWriteSkipsAQueuedWrite() async throws {
    let actor = AConfRealmActor()
    try await actor.open(aconfConfiguration())
    let outcome = try await actor.cancelQueuedWrite()
    #expect(!outcome.ran)
    #expect(outcome.count == 1)
  }

  /// Shoal's stand-in for `changesetPublisher`: `.initial`, then one `.update` per commit, with
  /// frozen results.
  @Test func resultsChangesArriveAsAnAsyncSequence() async throws {
    let configuration = aconfConfiguration()
    let realm = try Realm(configuration: configuration)
    let stream = realm.objects(AConfItem.self).sorted(byKeyPath: "name").changes()
    let seen = AConfLines()
    let consumer = Task {
      for await change in stream {
        switch change {
        case .initial(let results): seen.append("initial \(results.count) frozen \(results.isFrozen)")
        case .update(let results, let deletions, let insertions, let modifications):
          seen.append(
            "update \(results.map(\.name)) -\(deletions) +\(insertions) ~\(modifications) frozen \(results.isFrozen)")
        case .error(let error): seen.append("error \(error)")
        }
      }
    }
    #expect(await seen.arrival(ofAtLeast: 1))
    try resultOnOtherThread {
      let other = try Realm(configuration: configuration)
      try other.write {
        other.create(AConfItem.self, value: ["name": "b", "rank": 1])
        other.create(AConfItem.self, value: ["name": "a", "rank": 2])
      }
    }
    #expect(await seen.arrival(ofAtLeast: 2))
    consumer.cancel()
    #expect(seen.all == ["initial 0 frozen true", "update [\"a\", \"b\"] -[] +[0, 1] ~[] frozen true"])
  }

  /// Shoal's stand-in for `objectChangeset`: each change with its properties, then `.deleted`,
  /// after which the sequence ends.
  @Test func objectChangesArriveAsAnAsyncSequenceThatEndsOnDeletion() async throws {
    let configuration = aconfConfiguration()
    let realm = try aconfPeopleRealm(configuration)
    let ada = try #require(realm.object(ofType: AConfPerson.self, forPrimaryKey: 1))
    let stream = ada.changes(keyPaths: ["firstName"])
    let seen = AConfLines()
    let consumer = Task {
      for await change in stream { seen.append(aconfDescribe(change)) }
      seen.append("end")
    }
    try resultOnOtherThread {
      let other = try Realm(configuration: configuration)
      try other.write { other.object(ofType: AConfPerson.self, forPrimaryKey: 1)?.age = 40 }
      try other.write { other.object(ofType: AConfPerson.self, forPrimaryKey: 1)?.firstName = "Augusta" }
    }
    #expect(await seen.arrival(ofAtLeast: 1))
    try resultOnOtherThread {
      let other = try Realm(configuration: configuration)
      try other.write { other.delete(other.objects(AConfPerson.self).filter("id == 1")) }
    }
    #expect(await seen.arrival(ofAtLeast: 3))
    consumer.cancel()
    #expect(seen.all == ["firstName=Augusta", "deleted", "end"])
  }

  /// A `ThreadSafeReference` to `Results` resolves, once, to the same query in another thread's
  /// Realm, live there.
  @Test func threadSafeReferenceCarriesResultsToAnotherThread() throws {
    let configuration = aconfConfiguration()
    let realm = try aconfItemsRealm(configuration)
    let results = realm.objects(AConfItem.self).filter("rank > 1").sorted(byKeyPath: "name")
    let reference = ThreadSafeReference(to: results)
    #expect(!reference.isInvalidated)
    let names = try resultOnOtherThread { () -> [[String]] in
      let other = try Realm(configuration: configuration)
      guard let resolved = other.resolve(reference) else { return [] }
      let before = resolved.map(\.name)
      try other.write { other.create(AConfItem.self, value: ["name": "avocado", "rank": 7]) }
      return [before, resolved.map(\.name)]
    }
    #expect(names == [["banana", "box", "chalk"], ["avocado", "banana", "box", "chalk"]])
    #expect(reference.isInvalidated)
  }
}
