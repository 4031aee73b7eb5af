import Foundation
import Shoal
import Testing

final class ChainLink: Object {
  override class func shouldIncludeInDefaultSchema() -> Bool { false }
  @Persisted var n = 0
  @Persisted var next: ChainLink?
  @Persisted var others: List<ChainLink>
}

/// What `add` does to the objects and collections it is given, beyond storing their values.
@Suite("Adding objects: managed collections, no cycles, long chains")
struct AddTests {
  private func chainRealm() throws -> Realm {
    var config = memoryConfiguration()
    config.objectTypes = [ChainLink.self]
    return try Realm(configuration: config)
  }

  @Test func collectionsHeldBeforeAddBecomeTheManagedOnes() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "a", age: 1)
    let tags = person.tags
    let numbers = person.luckyNumbers
    let attributes = person.attributes
    tags.append("x")
    numbers.insert(7)
    attributes["k"] = 1
    #expect(tags.realm == nil && tags === person.tags)
    try realm.write { realm.add(person) }
    #expect(tags.realm != nil && numbers.realm != nil && attributes.realm != nil)
    #expect(tags === person.tags && numbers === person.luckyNumbers && attributes === person.attributes)
    #expect(Array(tags) == ["x"] && Array(numbers) == [7] && attributes["k"] == 1)
    // Writes through the held instances reach the Realm.
    try realm.write {
      tags.append("y")
      numbers.insert(8)
      attributes["j"] = 2
    }
    let stored = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
    #expect(Array(stored.tags) == ["x", "y"] && stored.luckyNumbers.count == 2 && stored.attributes.count == 2)
  }

  @Test func unmanagedObjectsThatReferenceEachOtherAreFreedAfterAdd() throws {
    let realm = try chainRealm()
    weak var weakFirst: ChainLink?
    weak var weakSecond: ChainLink?
    do {
      let first = ChainLink()
      let second = ChainLink(value: ["n": 2, "next": first, "others": [first]])
      first.next = second
      first.others.append(second)
      weakFirst = first
      weakSecond = second
      try realm.write { realm.add(first) }
      #expect(first.realm != nil && second.realm != nil)
      #expect(first.next?.n == 2 && second.next?.next?.n == 2)
    }
    #expect(weakFirst == nil)
    #expect(weakSecond == nil)
    #expect(realm.objects(ChainLink.self).count == 2)
  }

  @Test func aManagedObjectDoesNotKeepItsFormerlyUnmanagedTargetsAlive() throws {
    let realm = try chainRealm()
    let head = ChainLink()
    weak var weakTarget: ChainLink?
    do {
      let target = ChainLink(value: ["n": 1])
      head.next = target
      weakTarget = target
      try realm.write { realm.add(head) }
    }
    #expect(weakTarget == nil)
    #expect(head.next?.n == 1)
  }

  /// A chain of 100,000 unmanaged objects is added in one write without deep recursion, and
  /// releasing it afterwards releases one object at a time.
  @Test func aLongChainIsAddedAndReleasedWithoutOverflowingTheStack() throws {
    let realm = try chainRealm()
    let count = 100_000
    var head: ChainLink? = ChainLink(value: ["n": 0])
    var tail = head
    for n in 1..<count {
      let link = ChainLink(value: ["n": n])
      tail?.next = link
      tail = link
    }
    tail = nil
    try realm.write { realm.add(head!) }
    #expect(realm.objects(ChainLink.self).count == count)
    var walked = 0
    var cursor = head
    while let link = cursor, walked < 10 {
      #expect(link.n == walked)
      cursor = link.next
      walked += 1
    }
    cursor = nil
    head = nil
    #expect(realm.objects(ChainLink.self).filter("next == nil").count == 1)
  }

  @Test func twoObjectsWithOnePrimaryKeyInOneAddAreOneObject() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let owner = Person(id: 1, name: "o", age: 1)
    owner.dogs.append(Dog(value: ["name": "a", "owner": Person(id: 2, name: "friend", age: 2)]))
    owner.dogs.append(Dog(value: ["name": "b", "owner": Person(id: 2, name: "twin", age: 3)]))
    try realm.write { realm.add(owner, update: .modified) }
    #expect(realm.objects(Person.self).count == 2)
    #expect(realm.object(ofType: Person.self, forPrimaryKey: 2)?.name == "twin")
    #expect(Set(realm.objects(Dog.self).compactMap { $0.owner?.id }) == [2])
  }

  /// `create` copies the unmanaged objects its value holds into the Realm: they stay
  /// unmanaged (`add` is what makes an object managed).
  @Test func createCopiesUnmanagedObjectsOfItsValue() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let standalone = Dog(value: ["name": "Rex"])
    let person = try realm.write { realm.create(Person.self, value: ["id": 1, "dogs": [standalone, standalone]]) }
    #expect(standalone.realm == nil)
    #expect(person.dogs.count == 2 && person.dogs[0].name == "Rex")
    #expect(realm.objects(Dog.self).count == 1)
  }
}
