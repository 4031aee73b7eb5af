import Foundation
import Shoal
import Testing

@Suite("Sectioned results")
struct SectionedResultsTests {
  @Test func sectionsByKeyAndTheirChanges() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      for (i, name) in ["ant", "bee", "bat", "cat", "cow"].enumerated() {
        realm.add(Dog(value: ["name": name, "age": i]))
      }
    }
    let dogs = realm.objects(Dog.self)
    let sectioned = dogs.sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")]) { String($0.name.prefix(1)) }
    #expect(sectioned.allKeys == ["a", "b", "c"])
    #expect(sectioned.map(\.count) == [1, 2, 2])
    #expect(sectioned[1].map(\.name) == ["bat", "bee"])
    #expect(sectioned[IndexPath(indexes: [2, 1])].name == "cow")
    #expect(sectioned[0].id == "a")
    let byAge = dogs.sectioned(by: \Dog.age, ascending: false)
    #expect(byAge.allKeys == [4, 3, 2, 1, 0])

    var changes: [String] = []
    let token = sectioned.observe { change in
      switch change {
      case .initial(let s): changes.append("initial \(s.count)")
      case .update(let s, let deletions, let insertions, let modifications, let sectionsToInsert, let sectionsToDelete):
        changes.append(
          "\(s.count) del \(deletions.map { [$0[0], $0[1]] }) ins \(insertions.map { [$0[0], $0[1]] }) "
            + "mod \(modifications.map { [$0[0], $0[1]] }) +s \(Array(sectionsToInsert)) -s \(Array(sectionsToDelete))")
      }
    }
    try realm.write { realm.add(Dog(value: ["name": "dog", "age": 9])) }
    try realm.write { realm.delete(dogs.filter("name == 'ant'")) }
    try realm.write { dogs.filter("name == 'bee'").first?.age = 42 }
    #expect(
      changes == [
        "initial 3",
        // A removed section carries its rows; a new section's rows are also insertions (Realm Core).
        "4 del [] ins [[3, 0]] mod [] +s [3] -s []",
        "3 del [] ins [] mod [] +s [] -s [0]",
        "3 del [] ins [] mod [[0, 1]] +s [] -s []",
      ])
    withExtendedLifetime(token) {}
  }

  @Test func sectionsFreezeAndThaw() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      for (i, name) in ["ant", "bee", "bat", "cat", "cow"].enumerated() {
        realm.add(Dog(value: ["name": name, "age": i]))
      }
    }
    let sectioned = realm.objects(Dog.self).sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")]) {
      String($0.name.prefix(1))
    }
    let bees = sectioned[1]
    #expect(bees.realm != nil && !bees.isFrozen && !bees.isInvalidated)
    let frozen = bees.freeze()
    #expect(frozen.isFrozen)
    try realm.write { realm.add(Dog(value: ["name": "boa", "age": 9])) }
    // The frozen section keeps its elements; thawed, it is the live section of that key.
    #expect(frozen.map(\.name) == ["bat", "bee"])
    let thawed = try #require(frozen.thaw())
    #expect(!thawed.isFrozen)
    #expect(thawed.key == "b")
    #expect(thawed.map(\.name) == ["bat", "bee", "boa"])
    // A section whose key no longer has elements thaws to nil.
    let ants = sectioned[0].freeze()
    #expect(ants.key == "a")
    try realm.write { realm.delete(realm.objects(Dog.self).filter("name BEGINSWITH 'a'")) }
    #expect(sectioned[0].key == "b")
    #expect(ants.thaw() == nil)
    #expect(ants.map(\.name) == ["ant"])
  }

  @Test func observeWithSwiftKeyPaths() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      for (i, name) in ["ant", "bee", "cat"].enumerated() { realm.add(Dog(value: ["name": name, "age": i])) }
    }
    let dogs = realm.objects(Dog.self)
    let sectioned = dogs.sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")]) { String($0.name.prefix(1)) }
    var modified: [[Int]] = []
    let token = sectioned.observe(keyPaths: [\Dog.age]) { change in
      if case .update(_, _, _, let modifications, _, _) = change {
        modified.append(contentsOf: modifications.map { [$0[0], $0[1]] })
      }
    }
    // A property outside the key paths is not heard of; one inside is.
    try realm.write { dogs.filter("name == 'bee'").first?.name = "bee2" }
    try realm.write { dogs.filter("name == 'cat'").first?.age = 7 }
    #expect(modified == [[2, 0]])
    withExtendedLifetime(token) {}
  }

  /// One section observed alone: index paths within it; commits to other sections are not
  /// reported; a section that empties reports its elements deleted.
  @Test func aSectionObservedAlone() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      for name in ["ant", "bat", "bee", "cat"] { realm.add(Dog(value: ["name": name])) }
    }
    let sectioned = realm.objects(Dog.self).sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")]) {
      String($0.name.prefix(1))
    }
    var seen: [String] = []
    let token = sectioned[1].observe { change in
      switch change {
      case .initial(let section): seen.append("initial \(section.key) \(section.count)")
      case .update(let section, let deletions, let insertions, let modifications, let added, let removed):
        func paths(_ list: [IndexPath]) -> String { "\(list.map { [$0[0], $0[1]] })" }
        seen.append(
          "\(section.count) del \(paths(deletions)) ins \(paths(insertions)) mod \(paths(modifications)) "
            + "+s \(Array(added)) -s \(Array(removed))")
      }
    }
    // Index paths of the whole sectioned results ("b" is section 1), as Realm Core reports a
    // section's changes.
    #expect(seen == ["initial b 2"])
    try realm.write { realm.add(Dog(value: ["name": "bob"])) }
    #expect(seen.last == "3 del [] ins [[1, 2]] mod [] +s [] -s []")
    try realm.write { realm.add(Dog(value: ["name": "cow"])) }  // another section
    #expect(seen.count == 2)
    // The section goes: reported as a deleted section, its rows implied.
    try realm.write { realm.delete(realm.objects(Dog.self).filter("name BEGINSWITH 'b'")) }
    #expect(seen.last == "0 del [] ins [] mod [] +s [] -s [1]")
    // It comes back, now as section 1 again ("a", "b", "c").
    try realm.write { realm.add(Dog(value: ["name": "bee"])) }
    #expect(seen.last == "1 del [] ins [[1, 0]] mod [] +s [1] -s []")
    token.invalidate()
  }

  @Test func aSectionObservedBySwiftKeyPaths() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      for name in ["ant", "bat", "bee"] { realm.add(Dog(value: ["name": name])) }
    }
    let section = realm.objects(Dog.self).sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")]) {
      String($0.name.prefix(1))
    }[1]
    var updates = 0
    let token = section.observe(keyPaths: [\Dog.age]) { change in
      if case .update = change { updates += 1 }
    }
    let bat = try #require(realm.objects(Dog.self).filter("name == 'bat'").first)
    try realm.write { bat.age = 4 }
    #expect(updates == 1)
    try realm.write { bat.owner = Person(id: 9, name: "x", age: 1) }  // not observed
    #expect(updates == 1)
    token.invalidate()
  }
}

@Suite("Sectioned results of values, iterators and index paths")
struct SectionedValuesTests {
  @Test func collectionsOfValuesAreSectionedByAClosure() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "Ada", age: 36)
    try realm.write {
      person.tags.append(objectsIn: ["banana", "apple", "cherry", "avocado", "blueberry"])
      person.luckyNumbers.insert(objectsIn: [3, 14, 15, 92])
      realm.add(person)
    }
    let byInitial = person.tags.sectioned(by: { String($0.prefix(1)) })
    #expect(byInitial.allKeys == ["a", "b", "c"])
    #expect(Array(byInitial[0]) == ["apple", "avocado"])
    let descending = person.tags.sectioned(by: { String($0.prefix(1)) }, ascending: false)
    #expect(descending.allKeys == ["c", "b", "a"])
    #expect(descending[IndexPath(item: 1, section: 1)] == "banana")
    let byDecade = person.luckyNumbers.sectioned(by: { $0 / 10 })
    #expect(byDecade.allKeys == [0, 1, 9])
    #expect(byDecade.map(\.count) == [1, 2, 1])
    // Objects by a closure with sort descriptors.
    try realm.write {
      for name in ["Rex", "Ruby", "Bo"] { realm.add(Dog(value: ["name": name])) }
    }
    let dogs = realm.objects(Dog.self).sectioned(
      by: { String($0.name.prefix(1)) }, sortDescriptors: [SortDescriptor(keyPath: "name")])
    #expect(dogs.allKeys == ["B", "R"])
  }

  @Test func iteratorsWalkSectionsAndTheirElements() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "Ada", age: 36)
    try realm.write {
      person.tags.append(objectsIn: ["b1", "a1", "b2"])
      realm.add(person)
    }
    let sectioned = person.tags.sectioned(by: { String($0.prefix(1)) })
    var iterator = sectioned.makeIterator()
    var keys: [String] = []
    while let section = iterator.next() {
      keys.append(section.key)
      var elements = section.makeIterator()
      var seen: [String] = []
      while let element = elements.next() { seen.append(element) }
      #expect(seen == Array(section))
    }
    #expect(keys == ["a", "b"])
    let copy = sectioned
    #expect(copy == sectioned)
    #expect(sectioned != person.tags.sectioned(by: { String($0.prefix(2)) }))
    #expect(sectioned[0] != sectioned[1])
    let path = IndexPath(item: 2, section: 5)
    #expect(path.section == 5 && path.item == 2)
  }
}
