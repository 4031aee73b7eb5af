import Foundation
import Testing

@testable import Shoal

/// One file is one store in the process, whatever name it is opened by.
@Suite("Shared files")
struct SharedFileTests {
  @Test func aFileOpenedThroughASymbolicLinkIsOneStoreInTheProcess() throws {
    let configuration = fileConfiguration()
    let realm = try Realm(configuration: configuration)
    try realm.write { realm.add(Counter(value: ["a", 1])) }
    let url = try #require(configuration.fileURL)
    let link = url.deletingLastPathComponent().appendingPathComponent("link.realm")
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
    let other = try Realm(configuration: Realm.Configuration(fileURL: link))
    #expect(other.core.file === realm.core.file)
    #expect(other.objects(Counter.self).count == 1)
    #expect(!FileManager.default.fileExists(atPath: link.path + ".lock"))
  }
}

/// `@ThreadSafe`, the generic object `observe` and `isEqual`, as RealmSwift code uses them.
@Suite("Porting helpers")
struct PortingHelperTests {
  @Test func aThreadSafePropertyResolvesOnTheReadingThread() throws {
    let configuration = fileConfiguration()
    let realm = try Realm(configuration: configuration)
    let person = Person(id: 1, name: "Ada", age: 36)
    try realm.write { realm.add(person) }
    @ThreadSafe var local = person
    // The wrapper itself crosses threads (it is Sendable); each read resolves on the reader's thread.
    let shared = ThreadSafe(wrappedValue: person)
    let everyone = ThreadSafe(wrappedValue: realm.objects(Person.self))
    let (name, count) = try resultOnOtherThread { () -> (String?, Int?) in
      (shared.wrappedValue?.name, everyone.wrappedValue?.count)
    }
    #expect(name == "Ada" && count == 1)
    // Read again on this thread: each read makes a new reference.
    #expect(shared.wrappedValue?.name == "Ada" && local?.name == "Ada")
    try realm.write { realm.delete(person) }
    // This thread's Realm is past the deletion: the object is gone, and stays gone elsewhere.
    #expect(shared.wrappedValue == nil)
    #expect(try resultOnOtherThread { shared.wrappedValue == nil })
    @ThreadSafe var nothing: Person? = nil
    #expect(nothing == nil)
  }

  @Test func objectsAreObservedAsASuperclass() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let person = Person(id: 1, name: "Ada", age: 36)
    try realm.write { realm.add(person) }
    var names: [String] = []
    let token = person.observe(keyPaths: ["age"]) { (change: ObjectChange<ObjectBase>) in
      if case .change(let object, let properties) = change {
        names += properties.map(\.name)
        #expect(object is Person)
      }
    }
    try realm.write { person.age = 37 }
    #expect(names == ["age"])
    token.invalidate()
  }

  @Test func isEqualAnswersAsEquality() {
    let a = Person(id: 1, name: "Ada", age: 36)
    #expect(a.isEqual(a) && !a.isEqual(Person(id: 1, name: "Ada", age: 36)) && !a.isEqual("Ada"))
    let list1 = List<Int>()
    let list2 = List<Int>()
    list1.append(objectsIn: [1, 2])
    list2.append(objectsIn: [1, 2])
    #expect(list1.isEqual(list2))
    list2.append(3)
    #expect(!list1.isEqual(list2))
    let set = MutableSet<Int>()
    #expect(set.isEqual(MutableSet<Int>()) && !set.isEqual(list1))
    let map = Map<String, Int>()
    map["a"] = 1
    #expect(!map.isEqual(Map<String, Int>()))
  }
}

@Suite("List moves")
struct ListMoveTests {
  @Test func moveFromOffsetsMovesEachInTurnAsRealmSwift() throws {
    let list = List<String>()
    list.append(objectsIn: ["1", "2", "3"])
    list.move(fromOffsets: IndexSet([1]), toOffset: 0)
    #expect(Array(list) == ["2", "1", "3"])
    list.move(fromOffsets: IndexSet([0]), toOffset: 3)
    #expect(Array(list) == ["1", "3", "2"])
    list.move(fromOffsets: IndexSet([2]), toOffset: 1)
    #expect(Array(list) == ["1", "2", "3"])
    list.move(fromOffsets: IndexSet([]), toOffset: 1)
    list.move(fromOffsets: IndexSet([0, 2]), toOffset: 1)
    #expect(Array(list) == ["1", "3", "2"])
  }

  @Test func moveFromOffsetsPastTheEndFails() async {
    await #expect(processExitsWith: .failure) {
      let list = List<String>()
      list.append(objectsIn: ["1", "2", "3"])
      list.move(fromOffsets: IndexSet([0]), toOffset: 4)
    }
  }
}
