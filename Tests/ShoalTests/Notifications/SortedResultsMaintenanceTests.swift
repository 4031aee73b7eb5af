import Foundation
import ShoalStorage
import Testing

@testable import Shoal

/// Sorted and filtered results kept up to date from the change records (the notifier reads only
/// the objects a commit touched) report exactly what a full evaluation reports.
@Suite("Sorted results kept up to date from change records")
struct SortedResultsMaintenanceTests {
  /// One notification of results of `Person`s: the change set and the ids in order after it.
  struct Delivery: Equatable {
    var change: Seen
    var ids: [Int]
  }

  /// Watches `results` (evaluated in full after each commit when `full`), recording each change
  /// with the ids it leaves, and checks that the change set turns the previous ids into these.
  final class Watcher<Model: RankedModel> {
    var deliveries: [Delivery] = []
    var token: NotificationToken?
    let results: Results<Model>
    /// Called at the end of each update's callback.
    var afterUpdate: () -> Void = {}

    init(_ results: Results<Model>, full: Bool) {
      self.results = results
      results.state.updatesIncrementally = !full
      token = results.observe { [unowned self] change in
        // Read inside the callback: elements planned but not yet moved are laid out now.
        let ids = results.map(\.id)
        let seen = Seen(change)
        if case .update(_, let deletions, let insertions, let modifications) = seen, let before = deliveries.last?.ids {
          var rebuilt = before
          for index in deletions.reversed() { rebuilt.remove(at: index) }
          for index in insertions { rebuilt.insert(ids[index], at: index) }
          #expect(rebuilt == ids, "the change set does not turn \(before) into \(ids)")
          #expect(modifications.allSatisfy { before.indices.contains($0) })
        }
        deliveries.append(Delivery(change: seen, ids: ids))
        if case .update = seen { afterUpdate() }
      }
    }
  }

  /// nil, a small number or NaN (which sorts before every number).
  func randomScore(_ rng: inout SplitMix64) -> Double? {
    switch Int.random(in: 0..<6, using: &rng) {
    case 0, 1: return nil
    case 2: return .nan
    default: return Double(Int.random(in: 0..<4, using: &rng))
    }
  }

  /// Random commits of 1–6 writes each to `realm`'s people: insertions, deletions, and changes
  /// to the sorted and filtered properties from small ranges (so sort keys tie often).
  func randomCommits<Model: RankedModel>(_: Model.Type, _ realm: Realm, count: Int, seed: UInt64) throws {
    var rng = SplitMix64(seed: seed)
    var nextID = 1_000
    for _ in 0..<count {
      try realm.write {
        for _ in 0..<Int.random(in: 1...6, using: &rng) {
          let people = realm.objects(Model.self)
          let someone = people.isEmpty ? nil : people[Int.random(in: 0..<people.count, using: &rng)]
          switch Int.random(in: 0..<6, using: &rng) {
          case 0:
            let person = Model.make(
              id: nextID, name: "n\(Int.random(in: 0..<5, using: &rng))", age: .random(in: 0..<10, using: &rng))
            person.score = randomScore(&rng)
            realm.add(person)
            nextID += 1
          case 1:
            if let someone { realm.delete(someone) }
          case 2:
            someone?.age = Int.random(in: 0..<10, using: &rng)
          case 3:
            someone?.name = "n\(Int.random(in: 0..<5, using: &rng))"
          case 4:
            someone?.score = randomScore(&rng)
          default:
            someone?.nickname = "nick"  // a property no sort or filter reads
          }
        }
      }
    }
  }

  static let queries = [
    "age", "age desc", "age desc, name | age >= 4", "name, age | score != nil", "score, name desc",
    "age, name, score | name BEGINSWITH 'n' AND age < 8",
  ]

  /// Runs random commits on `Model`s with `query` ("sorts | filter") observed twice, kept up to
  /// date incrementally and evaluated in full, and compares every notification.
  func compareOnRandomHistory<Model: RankedModel>(_: Model.Type, _ query: String) throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      for id in 0..<60 {
        let object = Model.make(id: id, name: "n\(id % 5)", age: id % 10)
        object.score = id % 3 == 0 ? nil : Double(id % 4)
        realm.add(object)
      }
    }
    let parts = query.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
    func results() -> Results<Model> {
      var results = realm.objects(Model.self)
      if parts.count > 1 { results = results.filter(parts[1]) }
      let descriptors = parts[0].split(separator: ",").map { term in
        let words = term.split(separator: " ")
        return SortDescriptor(keyPath: String(words[0]), ascending: words.count == 1)
      }
      return results.sorted(by: descriptors)
    }
    let incremental = Watcher(results(), full: false)
    let full = Watcher(results(), full: true)
    #expect(incremental.results.state.maintainableOrder != nil)
    let seed = UInt64(query.utf8.reduce(0) { $0 &* 31 &+ Int($1) } & 0xffff)
    try randomCommits(Model.self, realm, count: 150, seed: seed)
    // A cleared class, then commits again.
    try realm.write { realm.delete(realm.objects(Model.self)) }
    try randomCommits(Model.self, realm, count: 30, seed: 7)
    #expect(incremental.deliveries.count > 20)
    #expect(incremental.deliveries == full.deliveries)
    #expect(incremental.deliveries.last?.ids == Array(results().map(\.id)))
  }

  /// A class without links: modifications come from the written properties alone.
  @Test(arguments: queries) func incrementalAndFullEvaluationAgree(_ query: String) throws {
    try compareOnRandomHistory(RankedEntry.self, query)
  }

  /// `Person` links to `Dog`, which links back: every commit to people may modify any of them
  /// through a link, so each element is checked, but still nothing is evaluated again.
  @Test(arguments: queries) func incrementalAndFullEvaluationAgreeThroughLinks(_ query: String) throws {
    try compareOnRandomHistory(Person.self, query)
  }

  /// A callback that writes (after another thread's commit) moves its Realm past commits no one
  /// has been told of yet, its own included: they are delivered once the callback returns, so
  /// results kept up to date from change records miss none: sorted ones, and unsorted filtered
  /// ones (whose incremental update misses them the same way).
  @Test(arguments: [true, false], [false, true])
  func aCallbackThatWritesMissesNoCommit(sorted: Bool, full: Bool) throws {
    let config = memoryConfiguration()
    let realm = try Realm(configuration: config)
    try realm.write { for id in 0..<40 { realm.add(RankedEntry.make(id: id, name: "n", age: id)) } }
    func results() -> Results<RankedEntry> {
      sorted
        ? realm.objects(RankedEntry.self).sorted(byKeyPath: "age") : realm.objects(RankedEntry.self).filter("age < 40")
    }
    let watcher = Watcher(results(), full: full)
    var refreshes = 0
    watcher.afterUpdate = {
      guard refreshes < 10 else { return }
      refreshes += 1
      let id = refreshes
      let moved = Thread.detachAndWait {
        let other = try Realm(configuration: config)
        try other.write { other.object(ofType: RankedEntry.self, forPrimaryKey: id)?.age = 100 - id }
      }
      #expect(moved)
      #expect(throws: Never.self) {
        try realm.write { realm.object(ofType: RankedEntry.self, forPrimaryKey: 10 + id)?.age = 50 + id }
      }
    }
    for i in 0..<10 { try realm.write { realm.object(ofType: RankedEntry.self, forPrimaryKey: 20 + i)?.age = -i } }
    #expect(refreshes == 10)
    // Commits that land before a delivery is told of are told of together: at least the local
    // ones each, and every change set turned the previous order into the next.
    #expect(watcher.deliveries.last?.ids == Array(results().map(\.id)))
  }

  @Test func aModifiedObjectMovesWithoutEvaluatingTheResultsAgain() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write { realm.add((0..<1_000).map { Person(id: $0, name: "p", age: $0) }) }
    let results = realm.objects(Person.self).filter("age >= 10").sorted(byKeyPath: "age", ascending: false)
    var seen: [Seen] = []
    let token = results.observe { seen.append(Seen($0)) }
    let evaluations = results.state.evaluations
    // Ages 999…10, descending. 500 moves from position 499 to the front; 20 (at 979) leaves;
    // 30 (at 969) is renamed, which neither the filter nor the sort reads, so it stays; a
    // new person of age 1,500 comes second.
    try realm.write {
      realm.object(ofType: Person.self, forPrimaryKey: 500)?.age = 5_000
      realm.object(ofType: Person.self, forPrimaryKey: 20)?.age = 5
      realm.object(ofType: Person.self, forPrimaryKey: 30)?.name = "renamed"
      realm.add(Person(id: 2_000, name: "new", age: 1_500))
    }
    #expect(seen.last == .update(count: 990, deletions: [499, 979], insertions: [0, 1], modifications: [969]))
    #expect(results.state.evaluations == evaluations)
    #expect(Array(results.prefix(3).map(\.id)) == [500, 2_000, 999])
    #expect(results.count == 990 && results[970].name == "renamed")
    withExtendedLifetime(token) {}
  }
}

/// What the random histories write: `Person` (which has links) and `RankedEntry` (which has none).
protocol RankedModel: Object {
  var id: Int { get }
  var name: String { get set }
  var age: Int { get set }
  var score: Double? { get set }
  var nickname: String? { get set }
  static func make(id: Int, name: String, age: Int) -> Self
}

extension Person: RankedModel {
  static func make(id: Int, name: String, age: Int) -> Self {
    let person = self.init()
    person.id = id
    person.name = name
    person.age = age
    return person
  }
}

/// A sortable class without links.
final class RankedEntry: Object, RankedModel {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""
  @Persisted var age = 0
  @Persisted var score: Double?
  @Persisted var nickname: String?

  static func make(id: Int, name: String, age: Int) -> RankedEntry {
    let entry = RankedEntry()
    entry.id = id
    entry.name = name
    entry.age = age
    return entry
  }
}
