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
import ObjectShared

enum ObjectEngineKind: String, CaseIterable, Sendable {
  case shoal, grdb
  /// Shoal on an encrypted file (`benchEncryptionKey`): compared with plain Shoal.
  case shoalEncrypted = "shoal-encrypted"
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
