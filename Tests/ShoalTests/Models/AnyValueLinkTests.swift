import Foundation
import Shoal
import ShoalStorage
import Testing

final class Mixed: Object {
  @Persisted var one: AnyRealmValue
  @Persisted var many: List<AnyRealmValue>
  @Persisted var byName: Map<String, AnyRealmValue>
}

/// Links held in `AnyRealmValue`s are cleared when their object is deleted, as other links are:
/// the value becomes `.none` (in a list it keeps its position), through the backlink index.
@Suite struct AnyValueLinkTests {
  /// `AnyRealmValue` holds lists and dictionaries (nested too), as in RealmSwift: stored,
  /// read back, live when read from a managed object's property, compared by contents.
  @Test func anyRealmValueHoldsListsAndDictionaries() throws {
    var configuration = fileConfiguration()
    configuration.objectTypes = [Mixed.self, Dog.self, Person.self, Address.self]
    let realm = try Realm(configuration: configuration)
    let rex = Dog(value: ["name": "Rex"])
    let inner = List<AnyRealmValue>()
    inner.append(objectsIn: [.int(1), .string("two")])
    let dictionary = Map<String, AnyRealmValue>()
    dictionary["list"] = .list(inner)
    dictionary["n"] = .double(2.5)
    let first = Mixed()
    first.one = .dictionary(dictionary)
    let second = Mixed(value: ["one": [1, "a", ["k": true]]])
    let third = Mixed(value: ["one": 5])
    try realm.write {
      realm.add(rex)
      first.many.append(.list(inner))
      realm.add([first, second, third])
    }
    let mixed = realm.objects(Mixed.self)
    let stored = try #require(mixed[0].one.dictionaryValue)
    #expect(stored.count == 2 && stored["n"] == .double(2.5))
    #expect(stored["list"]?.listValue.map(Array.init) == [.int(1), .string("two")])
    #expect(mixed[0].one == .dictionary(dictionary))
    #expect(mixed[0].many.first?.listValue.map(Array.init) == [.int(1), .string("two")])
    let fromArray = try #require(mixed[1].one.listValue)
    #expect(fromArray.count == 3 && fromArray[0] == .int(1) && fromArray[1] == .string("a"))
    #expect(fromArray[2].dictionaryValue?["k"] == .bool(true))

    // Read from the property, the list is live: appending in a write stores it.
    try realm.write {
      fromArray.append(.object(rex))
      mixed[0].one.dictionaryValue?["n"] = .int(7)
    }
    #expect(mixed[1].one.listValue?.count == 4)
    #expect(mixed[1].one.listValue?.last?.object(Dog.self)?.name == "Rex")
    #expect(mixed[0].one.dictionaryValue?["n"] == .int(7))
    // Replacing the value replaces the collection; queries compare scalars only.
    try realm.write { mixed[1].one = .string("flat") }
    #expect(mixed[1].one == .string("flat"))
    #expect(mixed.filter("one == 5").count == 1)
    #expect(mixed.filter("one == 'flat'").count == 1)
  }

  @Test func deletingAnObjectClearsAnyRealmValueLinksToIt() throws {
    var configuration = fileConfiguration()
    configuration.objectTypes = [Mixed.self, Dog.self, Person.self, Address.self]
    let realm = try Realm(configuration: configuration)
    let rex = Dog(value: ["name": "Rex"])
    let fido = Dog(value: ["name": "Fido"])
    let mixed = Mixed()
    try realm.write {
      realm.add([rex, fido])
      mixed.one = .object(rex)
      mixed.many.append(objectsIn: [.object(rex), .int(1), .object(fido)])
      mixed.byName["rex"] = .object(rex)
      mixed.byName["n"] = .string("x")
      realm.add(mixed)
    }
    try realm.write { realm.delete(rex) }
    #expect(mixed.one == .none)
    #expect(mixed.many.count == 3)
    #expect(mixed.many[0] == .none && mixed.many[1] == .int(1))
    if case .object(let dog) = mixed.many[2] { #expect(dog["name"] as? String == "Fido") } else { Issue.record() }
    #expect(mixed.byName["rex"] == AnyRealmValue.none)
    #expect(mixed.byName["n"] == .string("x"))
    // Reassigned links leave the index too: deleting Fido after unlinking it changes nothing.
    try realm.write { mixed.many.remove(at: 2) }
    try realm.write { realm.delete(fido) }
    #expect(mixed.many.count == 2)
  }

  /// A file indexed before `AnyRealmValue` links were (format 1) is re-indexed when opened
  /// for writing.
  @Test func reopeningRebuildsTheIndex() throws {
    var configuration = fileConfiguration()
    configuration.objectTypes = [Mixed.self, Dog.self, Person.self, Address.self]
    do {
      let realm = try Realm(configuration: configuration)
      try realm.write {
        let dog = Dog(value: ["name": "Rex"])
        realm.add(dog)
        let mixed = Mixed()
        mixed.one = .object(dog)
        realm.add(mixed)
      }
    }
    // Make it look like a file of the previous format: no index of Dog, format 1.
    do {
      let store = try Store.open(path: try #require(configuration.fileURL).path)
      try store.write { txn in
        try txn.dropKeyspace("b/Dog")
        try txn.put([1], forKey: Array("backlinks".utf8), in: "_meta")
      }
      store.close()
    }
    let realm = try Realm(configuration: configuration)
    try realm.write { realm.delete(realm.objects(Dog.self)) }
    #expect(realm.objects(Mixed.self).first?.one == AnyRealmValue.none)
  }
}
