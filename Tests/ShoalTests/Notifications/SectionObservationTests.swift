import Foundation
import Testing

@testable import Shoal

/// A section observed with key paths reports a write to one of them, even one that stores the
/// value the property already had (RealmSwift reports self-assignments too).
@Suite("Section observation")
struct SectionObservationTests {
  @Test func aSelfAssignmentToAnObservedPropertyIsReported() throws {
    let realm = try Realm(
      configuration: Realm.Configuration(
        inMemoryIdentifier: "sections-" + UUID().uuidString, objectTypes: [Item.self]))
    try realm.write {
      for (name, rank) in [("apple", 1), ("avocado", 2), ("banana", 3)] {
        realm.add(Item(value: ["name": name, "rank": rank]))
      }
    }
    let results = realm.objects(Item.self)
    let section = results.sectioned(by: \.firstLetter, ascending: true)[0]
    var changes: [String] = []
    let token = section.observe(keyPaths: ["rank"]) { change in
      switch change {
      case .initial(let section): changes.append("initial \(section.count)")
      case .update(_, _, _, let modifications, _, _): changes.append("update \(modifications)")
      }
    }
    let apple = try #require(results.where { $0.name == "apple" }.first)
    try realm.write { apple.rank = 1 }
    try realm.write { apple.name = "apricot" }
    #expect(changes == ["initial 2", "update [[0, 0]]"])
    token.invalidate()
  }
}
