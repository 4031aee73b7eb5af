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
