import Dispatch
import Foundation
import Shoal
import Synchronization
import Testing

// Models and helpers shared by the suites of the logger, projections, sectioned results and the
// asynchronous APIs (LoggerAPITests, ProjectionBehaviourTests, SectionedResultsBehaviourTests,
// SectionObservationTests, AsyncAPITests).

// MARK: - Models (every Realm here lists them in `objectTypes`)

final class ContactAddress: EmbeddedObject {
  @Persisted var city = ""
  @Persisted var country = ""
}

final class Contact: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var firstName = ""
  @Persisted var lastName = ""
  @Persisted var age = 0
  @Persisted var notes = ""
  @Persisted var address: ContactAddress?
  @Persisted var friends: List<Contact>
  /// Not persisted: Realm ignores it.
  var scratch = 0
}

/// RealmSwift's documented example: a renamed property, a key path through a value, one through
/// an embedded object and a list projected to one property of its elements.
final class ContactProjection: Projection<Contact> {
  @Projected(\Contact.firstName) var name
  @Projected(\Contact.lastName.localizedUppercase) var lastNameCaps
  @Projected(\Contact.address?.city) var homeCity
  @Projected(\Contact.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
}

/// Two projected properties with the same root property.
final class AgeTwiceProjection: Projection<Contact> {
  @Projected(\Contact.age) var years
  @Projected(\Contact.age) var alsoYears
}

/// A projection of a property Realm does not manage.
final class IgnoredPropertyProjection: Projection<Contact> {
  @Projected(\Contact.scratch) var scratch
}

final class Item: Object {
  @Persisted var name = ""
  @Persisted var rank = 0
  /// The section key of RealmSwift's own examples (`sectioned(by: \.firstLetter)`).
  var firstLetter: String { String(name.prefix(1)) }
}

let sharedFixtureTypes: [ObjectBase.Type] = [Contact.self, ContactAddress.self, Item.self]

/// A fresh in-memory configuration holding only the contacts, their addresses and the items.
func sharedFixtureConfiguration() -> Realm.Configuration {
  Realm.Configuration(inMemoryIdentifier: "shared-fixtures-" + UUID().uuidString, objectTypes: sharedFixtureTypes)
}

/// Ada (living in London, with Charles as her friend) and Charles.
func contactsRealm(_ configuration: Realm.Configuration = sharedFixtureConfiguration()) throws -> Realm {
  let realm = try Realm(configuration: configuration)
  try realm.write {
    let ada = realm.create(
      Contact.self,
      value: [
        "id": 1, "firstName": "Ada", "lastName": "Lovelace", "age": 36,
        "address": ["city": "London", "country": "UK"],
      ])
    let charles = realm.create(
      Contact.self, value: ["id": 2, "firstName": "Charles", "lastName": "Babbage", "age": 79])
    ada.friends.append(charles)
  }
  return realm
}

/// RealmSwift's sectioned-results fixture: "banana", "box", "apple", "chalk", added in that order.
func itemsRealm(_ configuration: Realm.Configuration = sharedFixtureConfiguration()) throws -> Realm {
  let realm = try Realm(configuration: configuration)
  try realm.write {
    for (name, rank) in [("banana", 2), ("box", 4), ("apple", 1), ("chalk", 3)] {
      realm.create(Item.self, value: ["name": name, "rank": rank])
    }
  }
  return realm
}

// MARK: - Helpers

/// Lines recorded from callbacks on any thread.
final class RecordedLines: Sendable {
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

  /// Suspends until at least `n` lines have arrived; false after 15 minutes. The bound only
  /// keeps a lost change from hanging the run: swift-testing enqueues every test at once and a
  /// synchronous test holds a cooperative thread to its end, so a task a test starts can wait
  /// behind every test not yet run (about 160 s in a full debug run on 2 cores, and 120 s was
  /// once too short in CI).
  func arrival(ofAtLeast n: Int) async -> Bool {
    await withCheckedContinuation { continuation in
      let id = state.withLock { s -> Int? in
        guard s.lines.count < n else { return nil }
        s.nextWaiter += 1
        s.waiters[s.nextWaiter] = (n, continuation)
        return s.nextWaiter
      }
      guard let id else { return continuation.resume(returning: true) }
      DispatchQueue.global().asyncAfter(deadline: .now() + 900) { [self] in
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
      }
    }
  }
}

/// Log messages received by a log function, with their levels.
final class ReceivedLogMessages: Sendable {
  private let messages = Mutex<[(level: Logger.Level, message: String)]>([])
  func append(_ level: Logger.Level, _ message: String) { messages.withLock { $0.append((level, message)) } }
  var all: [(level: Logger.Level, message: String)] { messages.withLock { $0 } }
}

/// A value as text, optionals unwrapped.
func plainText(_ value: Any?) -> String {
  guard let value else { return "nil" }
  let mirror = Mirror(reflecting: value)
  if mirror.displayStyle == .optional { return mirror.children.first.map { plainText($0.value) } ?? "nil" }
  return "\(value)"
}

/// A projection change as text: each property change's name and new value (and old value when
/// `old`), or "deleted".
func plainText<P>(_ change: ObjectChange<P>, old: Bool = false) -> String {
  switch change {
  case .change(_, let properties):
    return properties.map {
      "\($0.name)=" + (old ? plainText($0.oldValue) + "->" : "") + plainText($0.newValue)
    }.joined(separator: ",")
  case .deleted: return "deleted"
  case .error(let error): return "error \(error)"
  }
}

/// A sectioned-results change as text, index paths as [section, item].
func plainText<C: Collection>(_ change: SectionedResultsChange<C>) -> String {
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
func checkInExitTest(_ condition: Bool, _ message: @autoclosure () -> String) {
  guard !condition else { return }
  FileHandle.standardError.write(Data("Exit-test check failed: \(message())\n".utf8))
}

/// Opens a Realm, writes to it and lets it go, so that the shared logger hears Realm's own lines.
func openAndWriteARealm() throws {
  let realm = try Realm(configuration: sharedFixtureConfiguration())
  try realm.write { realm.create(Item.self, value: ["name": "logged", "rank": 1]) }
  _ = realm.objects(Item.self).filter("rank > 0").count
}
