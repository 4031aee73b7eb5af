// Shoal's side: RealmSwift's API as an app uses it.

import Foundation
import Shoal

public final class Item: Object {
  @Persisted(primaryKey: true) public var id: Int
  @Persisted(indexed: true) public var category: String
  @Persisted public var price: Double
  @Persisted public var name: String
  @Persisted(indexed: true) public var createdAt: Date
}

public final class ShoalObjects: ObjectEngine {
  public let path: String
  public var realm: Realm?
  var prepared: [Item] = []

  public init(directory: String, encryptionKey: Data? = nil) throws {
    path = directory + "/items.realm"
    // Durability is Shoal's default for a Realm: full (one fdatasync per commit).
    let configuration = Realm.Configuration(
      fileURL: URL(fileURLWithPath: path), encryptionKey: encryptionKey, objectTypes: [Item.self])
    realm = try Realm(configuration: configuration)
  }

  public var dataFiles: [String] { [path] }

  private func open() throws -> Realm {
    guard let realm else { throw BenchError("the Realm is closed") }
    return realm
  }

  public func prepareInsert(_ data: ObjectData) {
    prepared = data.ids.indices.map { i in
      let item = Item()
      item.id = data.ids[i]
      item.category = data.categories[i]
      item.price = data.prices[i]
      item.name = data.names[i]
      item.createdAt = data.createdAt[i]
      return item
    }
  }

  public func insertPrepared() throws {
    let realm = try open()
    try realm.write {
      realm.add(prepared)
    }
  }

  public func settle() throws {
    // The added objects are managed now and keep the Realm open; let them go.
    prepared = []
  }

  public func lookups(_ ids: [Int]) throws -> Int {
    let realm = try open()
    var sum = 0
    for id in ids {
      guard let item = realm.object(ofType: Item.self, forPrimaryKey: id) else {
        throw BenchError("shoal: no Item with id \(id)")
      }
      sum &+= cents(item.price)
    }
    return sum
  }

  public func statementLookups(_ ids: [Int]) throws -> Int? { nil }

  public func categoryQueries(_ categories: [String]) throws -> [QueryTally] {
    let items = try open().objects(Item.self)
    return categories.map { category in
      var tally = QueryTally()
      for item in items.filter("category == %@", category) { tally.add(item.price) }
      return tally
    }
  }

  public func rangeQueries(_ ranges: [ClosedRange<Double>]) throws -> [QueryTally] {
    let items = try open().objects(Item.self)
    return try ranges.map { range in
      var tally = QueryTally()
      var previous = -Double.infinity
      let results = items.filter("price BETWEEN {%@, %@}", range.lowerBound, range.upperBound)
        .sorted(byKeyPath: "price")
      for item in results { try addSorted(item.price, to: &tally, after: &previous) }
      return tally
    }
  }

  public func dateRangeQueries(_ ranges: [ClosedRange<Date>]) throws -> [QueryTally] {
    let items = try open().objects(Item.self)
    return try ranges.map { range in
      var tally = QueryTally()
      var previous = Date.distantPast
      let results = items.filter("createdAt BETWEEN {%@, %@}", range.lowerBound, range.upperBound)
        .sorted(byKeyPath: "createdAt")
      for item in results { try addInDateOrder(item.price, item.createdAt, to: &tally, after: &previous) }
      return tally
    }
  }

  public func close() throws {
    prepared = []
    // Shoal, like RealmSwift, has no close: the file closes when the last Realm instance and
    // the last object read from it are gone.
    realm = nil
  }
}
