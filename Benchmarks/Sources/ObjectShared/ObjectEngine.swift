// What the object benchmarks (Benchmarks/ObjectBenchmarks) and bench-objects (the profiling
// tool) share: the interface both object stores implement, and the order-checking helpers.

import Foundation

public protocol ObjectEngine: AnyObject {
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

/// Adds the price of an object read in creation order to `tally`, checking the order.
@inline(__always) public func addInDateOrder(
  _ price: Double, _ date: Date, to tally: inout QueryTally, after previous: inout Date
)
  throws
{
  if date < previous { throw BenchError("date range query: \(date) came after \(previous)") }
  previous = date
  tally.add(price)
}

/// Adds a price read in sorted order to `tally`, checking the order.
@inline(__always) public func addSorted(_ price: Double, to tally: inout QueryTally, after previous: inout Double)
  throws
{
  if price < previous { throw BenchError("range query: price \(price) came after \(previous)") }
  previous = price
  tally.add(price)
}
