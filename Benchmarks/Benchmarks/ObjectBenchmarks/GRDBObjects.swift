// GRDB's side: a Codable record in a DatabasePool (WAL), as GRDB's documentation shows.

import Foundation
import GRDB
import ObjectShared

struct ItemRecord: Codable, FetchableRecord, PersistableRecord {
  static let databaseTableName = "item"
  var id: Int
  var category: String
  var price: Double
  var name: String
  /// Stored the way GRDB stores a `Date` by default: "YYYY-MM-DD HH:MM:SS.SSS" text.
  var createdAt: Date
}

/// SQLite's page cache for each GRDB connection: Shoal's default node cache (64 MiB), so both
/// have the same budget.
let grdbCacheKiB = 64 << 10

final class GRDBObjects: ObjectEngine {
  let path: String
  var pool: DatabasePool?
  var prepared: [ItemRecord] = []

  init(directory: String) throws {
    path = directory + "/items.sqlite"
    var configuration = Configuration()
    configuration.prepareDatabase { db in
      // As durable as Shoal: each commit syncs the WAL (SQLite's default, stated here).
      try db.execute(sql: "PRAGMA synchronous = FULL")
      try db.execute(sql: "PRAGMA cache_size = -\(grdbCacheKiB)")
    }
    let pool = try DatabasePool(path: path, configuration: configuration)
    try pool.write { db in
      try db.create(table: ItemRecord.databaseTableName, options: .ifNotExists) { t in
        t.primaryKey("id", .integer)
        t.column("category", .text).notNull().indexed()
        t.column("price", .double).notNull()
        t.column("name", .text).notNull()
        t.column("createdAt", .datetime).notNull().indexed()
      }
    }
    self.pool = pool
  }

  var dataFiles: [String] { [path, path + "-wal"] }

  private func open() throws -> DatabasePool {
    guard let pool else { throw BenchError("the GRDB pool is closed") }
    return pool
  }

  func prepareInsert(_ data: ObjectData) {
    prepared = data.ids.indices.map { i in
      ItemRecord(
        id: data.ids[i], category: data.categories[i], price: data.prices[i], name: data.names[i],
        createdAt: data.createdAt[i])
    }
  }

  func insertPrepared() throws {
    try open().write { db in
      for record in prepared { try record.insert(db) }
    }
  }

  func settle() throws {
    prepared = []
    // As bench.sh measures SQLite: the WAL checkpointed into the database file (TRUNCATE
    // leaves an empty -wal), then .sqlite + -wal.
    try open().writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
  }

  func lookups(_ ids: [Int]) throws -> Int {
    try open().read { db in
      var sum = 0
      for id in ids {
        guard let record = try ItemRecord.fetchOne(db, key: id) else {
          throw BenchError("grdb: no item with id \(id)")
        }
        sum &+= cents(record.price)
      }
      return sum
    }
  }

  func statementLookups(_ ids: [Int]) throws -> Int? {
    try open().read { db in
      let statement = try db.cachedStatement(sql: "SELECT * FROM item WHERE id = ?")
      var sum = 0
      for id in ids {
        guard let record = try ItemRecord.fetchOne(statement, arguments: [id]) else {
          throw BenchError("grdb: no item with id \(id)")
        }
        sum &+= cents(record.price)
      }
      return sum
    }
  }

  func categoryQueries(_ categories: [String]) throws -> [QueryTally] {
    try open().read { db in
      try categories.map { category in
        var tally = QueryTally()
        for record in try ItemRecord.filter(Column("category") == category).fetchAll(db) { tally.add(record.price) }
        return tally
      }
    }
  }

  func rangeQueries(_ ranges: [ClosedRange<Double>]) throws -> [QueryTally] {
    try open().read { db in
      try ranges.map { range in
        var tally = QueryTally()
        var previous = -Double.infinity
        // `range.contains(column)` is SQL's `price BETWEEN lo AND hi`.
        let request = ItemRecord.filter(range.contains(Column("price"))).order(Column("price"))
        for record in try request.fetchAll(db) { try addSorted(record.price, to: &tally, after: &previous) }
        return tally
      }
    }
  }

  func dateRangeQueries(_ ranges: [ClosedRange<Date>]) throws -> [QueryTally] {
    try open().read { db in
      try ranges.map { range in
        var tally = QueryTally()
        var previous = Date.distantPast
        let request = ItemRecord.filter(range.contains(Column("createdAt"))).order(Column("createdAt"))
        for record in try request.fetchAll(db) {
          try addInDateOrder(record.price, record.createdAt, to: &tally, after: &previous)
        }
        return tally
      }
    }
  }

  func close() throws {
    prepared = []
    try pool?.close()
    pool = nil
  }
}
