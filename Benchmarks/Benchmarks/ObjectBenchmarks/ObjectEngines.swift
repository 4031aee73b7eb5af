// The two object stores behind one small interface; each does the same work the way its own
// documentation shows (ShoalObjects.swift: Realm's API; GRDBObjects.swift: GRDB's records).
//
//   insert     the objects (built beforehand, not measured) added in ONE write transaction,
//              committed durably
//   lookups    one object per id by its primary key, reading its price (GRDB also through a
//              cached prepared statement, as a second figure)
//   category   `category == c` on the indexed property, reading every result's price
//   range      `price BETWEEN {lo, hi}` (no index on price on either side) sorted by price,
//              reading every result's price in order and checking the order
//   date range `createdAt BETWEEN {lo, hi}` on the indexed `createdAt` (the same index on both
//              sides), sorted by createdAt, reading every result's price and checking the order
//
// Each read pass runs in one snapshot: the Realm's (it stays pinned at the version it last
// refreshed to) and one `DatabasePool.read` for GRDB.

import Foundation

enum ObjectEngineKind: String, CaseIterable, Sendable {
  case shoal, grdb
  /// Shoal on an encrypted file (`benchEncryptionKey`): compared with plain Shoal.
  case shoalEncrypted = "shoal-encrypted"
}

protocol ObjectEngine: AnyObject {
  /// The files whose sizes add up to the database's size on disk.
  var dataFiles: [String] { get }
  /// Builds the unmanaged objects (Shoal) or records (GRDB) of `data`, for `insertPrepared`.
  func prepareInsert(_ data: ObjectData)
  /// Inserts the prepared objects in one write transaction and commits it durably.
  func insertPrepared() throws
  /// Brings the files to their final size for measuring it (GRDB: checkpoints the WAL).
  func settle() throws
  /// Looks up each id by primary key; returns the sum of the prices read, in cents.
  func lookups(_ ids: [Int]) throws -> Int
  /// GRDB only: the same lookups through one cached prepared statement (`SELECT * FROM item
  /// WHERE id = ?`), which skips building the request and preparing its SQL per lookup; nil
  /// for Shoal, which has no such thing.
  func statementLookups(_ ids: [Int]) throws -> Int?
  /// Runs `category == c` for each category; what each read.
  func categoryQueries(_ categories: [String]) throws -> [QueryTally]
  /// Runs `price BETWEEN {lo, hi}` sorted by price for each range; what each read. Throws if
  /// the prices do not come in ascending order.
  func rangeQueries(_ ranges: [ClosedRange<Double>]) throws -> [QueryTally]
  /// Runs `createdAt BETWEEN {lo, hi}` sorted by createdAt for each range; what each read.
  /// Throws if the creation times do not come in ascending order.
  func dateRangeQueries(_ ranges: [ClosedRange<Date>]) throws -> [QueryTally]
  /// Releases the database (and every object read from it).
  func close() throws
}

/// The 64-byte key of the encrypted object databases (as `benchEncryptionKey` in BenchEngines,
/// which this target does not link: its SQLite module would meet GRDB's).
let objectsEncryptionKey = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })

/// Opens (creating if needed) the kind's database in `directory`.
func openObjectEngine(_ kind: ObjectEngineKind, in directory: String) throws -> ObjectEngine {
  switch kind {
  case .shoal: return try ShoalObjects(directory: directory)
  case .shoalEncrypted: return try ShoalObjects(directory: directory, encryptionKey: objectsEncryptionKey)
  case .grdb: return try GRDBObjects(directory: directory)
  }
}

/// Adds the price of an object read in creation order to `tally`, checking the order.
@inline(__always) func addInDateOrder(
  _ price: Double, _ date: Date, to tally: inout QueryTally, after previous: inout Date
)
  throws
{
  if date < previous { throw BenchError("date range query: \(date) came after \(previous)") }
  previous = date
  tally.add(price)
}

/// Adds a price read in sorted order to `tally`, checking the order.
@inline(__always) func addSorted(_ price: Double, to tally: inout QueryTally, after previous: inout Double) throws {
  if price < previous { throw BenchError("range query: price \(price) came after \(previous)") }
  previous = price
  tally.add(price)
}
