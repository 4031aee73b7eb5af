import Foundation
import Shoal
import Testing

/// `for … in` over Realm collections walks the elements held when the loop began (RealmSwift's
/// snapshot enumeration), whatever the loop writes.
@Suite("Enumeration: loops see a snapshot")
struct EnumerationTests {
  private func realmWithPeople(_ count: Int) throws -> Realm {
    let realm = try Realm(configuration: memoryConfiguration())
    try realm.write {
      for i in 0..<count {
        let person = Person(id: i, name: "p\(i)", age: i)
        realm.add(person)
      }
    }
    return realm
  }

  @Test func deletingEveryObjectOfResultsInALoopDeletesThemAll() throws {
    let realm = try realmWithPeople(10)
    try realm.write {
      for person in realm.objects(Person.self) { realm.delete(person) }
    }
    #expect(realm.objects(Person.self).isEmpty)
  }

  @Test func editingObjectsOutOfAFilterVisitsEachOnce() throws {
    let realm = try realmWithPeople(10)
    let young = realm.objects(Person.self).filter("age < 100")
    var visited: [Int] = []
    try realm.write {
      for person in young {
        visited.append(person.id)
        person.age += 100  // leaves the filter
      }
    }
    #expect(visited == Array(0..<10))
    #expect(young.isEmpty)
  }

  @Test func aSortedLoopKeepsItsOrderWhileTheSortKeyChanges() throws {
    let realm = try realmWithPeople(5)
    let sorted = realm.objects(Person.self).sorted(byKeyPath: "age")
    var visited: [Int] = []
    try realm.write {
      for person in sorted {
        visited.append(person.id)
        person.age = -person.age  // reverses the order mid-loop
      }
    }
    #expect(visited == [0, 1, 2, 3, 4])
  }

  @Test func listsSetsAndLinkingObjectsLoopOverASnapshot() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let owner = Person(id: 1, name: "o", age: 1)
    try realm.write {
      realm.add(owner)
      for i in 0..<6 { owner.dogs.append(Dog(value: ["name": "d\(i)", "age": i])) }
      owner.tags.append(objectsIn: ["a", "b", "c"])
      owner.luckyNumbers.insert(objectsIn: [1, 2, 3, 4])
    }
    var dogs: [String] = []
    try realm.write {
      for dog in owner.dogs {
        dogs.append(dog.name)
        realm.delete(dog)
      }
    }
    #expect(dogs == ["d0", "d1", "d2", "d3", "d4", "d5"])
    #expect(owner.dogs.isEmpty)

    var tags: [String] = []
    try realm.write {
      for tag in owner.tags {
        tags.append(tag)
        owner.tags.remove(at: 0)
      }
    }
    #expect(tags == ["a", "b", "c"])

    var numbers: [Int] = []
    try realm.write {
      for number in owner.luckyNumbers {
        numbers.append(number)
        owner.luckyNumbers.remove(number)
      }
    }
    #expect(numbers.sorted() == [1, 2, 3, 4])
    #expect(owner.luckyNumbers.isEmpty)

    let dog = Dog(value: ["name": "shared"])
    try realm.write {
      realm.add(dog)
      for i in 0..<4 { realm.add(Person(value: ["id": 10 + i, "name": "w\(i)", "dogs": [dog]])) }
    }
    var walkers: [Int] = []
    try realm.write {
      for walker in dog.walkers {
        walkers.append(walker.id)
        walker.dogs.removeAll()  // takes the walker out of `dog.walkers`
      }
    }
    #expect(walkers.sorted() == [10, 11, 12, 13])
    #expect(dog.walkers.isEmpty)
  }

  @Test func anyRealmCollectionLoopsOverASnapshot() throws {
    let realm = try realmWithPeople(8)
    let any = AnyRealmCollection(realm.objects(Person.self))
    var count = 0
    try realm.write {
      for person in any {
        count += 1
        realm.delete(person)
      }
    }
    #expect(count == 8)
    #expect(realm.objects(Person.self).isEmpty)
  }

  @Test func unmanagedCollectionsIterateTheirElements() {
    let list = List<Int>()
    list.append(objectsIn: [1, 2, 3])
    #expect(Array(list) == [1, 2, 3])
    let set = MutableSet<String>()
    set.insert(objectsIn: ["x"])
    #expect(Array(set) == ["x"])
  }
}
