import Dispatch
import Foundation
import Shoal
import Synchronization
import Testing

// Conformance with RealmSwift's documented behaviour of sectioned results, checked against
// realm-swift's and realm-core's sources. RealmSwift's exceptions (Shoal: fatal errors) are exit
// tests whose standard error must hold RealmSwift's message.

// MARK: - Sectioned results

@Suite("Sectioned results: RealmSwift behaviour")
struct SectionedResultsBehaviourTests {
  /// realm-swift's `SectionedResultsTests.testCreationFromResults`.
  @Test func sectionedByAKeyPathSortsAndGroups() throws {
    let realm = try itemsRealm()
    let results = realm.objects(Item.self)
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
    let realm = try itemsRealm()
    let results = realm.objects(Item.self)
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
    let realm = try itemsRealm()
    let sectioned = realm.objects(Item.self).sectioned(by: \.firstLetter, ascending: true)
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
    let realm = try itemsRealm()
    // By rank: apple (1), banana (2), chalk (3), box (4).
    let sectioned = realm.objects(Item.self).sectioned(sortDescriptors: [SortDescriptor(keyPath: "rank")]) {
      $0.firstLetter
    }
    #expect(sectioned.count == 3)
    #expect(sectioned.allKeys == ["a", "b", "c"])
    #expect(sectioned.map { $0.map(\.name) } == [["apple"], ["banana", "box"], ["chalk"]])
  }

  @Test func theSectionKeyPathMustMatchThePrimarySortDescriptor() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try itemsRealm()
      let sectioned = realm.objects(Item.self).sectioned(
        by: \.firstLetter, sortDescriptors: [SortDescriptor(keyPath: "rank")])
      FileHandle.standardError.write(Data("sectioned \(sectioned.count)\n".utf8))
    }
    #expect(stderrText(result).contains("The section key path must match the primary sort descriptor."))
  }

  @Test func sectioningWithNoSortDescriptorFails() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let realm = try itemsRealm()
      let sectioned = realm.objects(Item.self).sectioned(by: \.firstLetter, sortDescriptors: [])
      FileHandle.standardError.write(Data("sectioned \(sectioned.count)\n".utf8))
    }
    #expect(stderrText(result).contains("Can not section Results with empty sortDescriptor parameter."))
  }

  /// realm-swift's `SectionedResultsTests.testObserveOnQueue`: a section that disappears is
  /// reported by its index alone, a new section with its rows; an element that moves within its
  /// section is a deletion and an insertion; properties outside the key paths are ignored.
  @Test func observeReportsSectionAndRowChangesLikeRealmSwift() throws {
    let realm = try itemsRealm()
    let results = realm.objects(Item.self)
    let sectioned = results.sectioned(by: \.firstLetter, ascending: true)
    let seen = RecordedLines()
    let queue = DispatchQueue(label: "sectioned-results-behaviour")
    let token = sectioned.observe(keyPaths: ["name"], on: queue) { change in seen.append(plainText(change)) }
    #expect(seen.wait(forAtLeast: 1))
    try realm.write {
      realm.delete(results.filter("name IN %@", ["banana", "apple"]))
      results.filter("name == 'box'").first?.name = "bog"
      realm.create(Item.self, value: ["name": "zebra", "rank": 5])
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
    let realm = try itemsRealm()
    let sectioned = realm.objects(Item.self).sectioned(by: \.firstLetter, ascending: true)
    let seen = RecordedLines()
    let token = sectioned.observe { change in seen.append(plainText(change)) }
    #expect(seen.wait(forAtLeast: 1, refreshing: realm))
    try realm.write { realm.create(Item.self, value: ["name": "dog", "rank": 9]) }
    #expect(seen.wait(forAtLeast: 2, refreshing: realm))
    try realm.write { realm.delete(realm.objects(Item.self).filter("name == 'apple'")) }
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
    let realm = try itemsRealm()
    let results = realm.objects(Item.self)
    let live = results.sectioned(by: \.firstLetter, ascending: true)
    #expect(!live.isFrozen)
    let frozen = live.freeze()
    let fromFrozenResults = results.freeze().sectioned(by: \.firstLetter, ascending: false)
    try realm.write { realm.create(Item.self, value: ["name": "zebra", "rank": 5]) }
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
