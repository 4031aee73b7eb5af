// The three engines behind one small interface. Each does the same work the same way: one
// transaction for the bulk load, one read transaction per pass of point reads or per scan,
// one durable transaction per single-entry commit. Shared by the benchmarks and bench-peer
// (the other processes of the cross-process benchmarks), so both open a database the same way.

import CLMDB
import CSQLite
import ShoalStorage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

public struct BenchError: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

public enum EngineKind: String, CaseIterable, Sendable {
  case shoal, lmdb, sqlite
  /// Shoal on an encrypted file (`benchEncryptionKey`): compared with plain Shoal only.
  case shoalEncrypted = "shoal-encrypted"

  /// The engines compared side by side in every storage workload.
  public static let peers: [EngineKind] = [.shoal, .lmdb, .sqlite]
}

/// The 64-byte key of the encrypted Shoal databases of the benchmarks.
public let benchEncryptionKey: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }

public protocol Engine: AnyObject {
  /// The files whose sizes add up to the database's size on disk.
  var dataFiles: [String] { get }
  /// Inserts `data`'s entries in its insertion order, in one transaction, and commits it durably.
  func bulkLoad(_ data: Dataset) throws
  /// Reads the value of `data.keys[i]` for each `i` of `data.readOrder` in one read
  /// transaction; returns the sum of each value's length and first byte.
  func pointReads(_ data: Dataset) throws -> Int
  /// Visits every entry in key order in one read transaction; returns the sum of the key's and
  /// the value's lengths and first bytes.
  func scan() throws -> Int
  /// Commits one entry in a transaction of its own, durably.
  func commitOne(key: [UInt8], value: [UInt8]) throws
  /// Makes a fresh database ready for `commitOne` (Shoal: creates the keyspace).
  func prepareForCommits() throws
  /// Takes and releases `count` snapshots, one after the other (SQLite cannot take one without
  /// reading: `BEGIN`, a one-row `SELECT` of `snapshotKey`, `COMMIT`); returns a checksum.
  func snapshots(_ count: Int) throws -> Int
  /// LMDB only: `count` snapshots by `mdb_txn_renew` + `mdb_txn_reset` of one read transaction;
  /// nil for the other engines.
  func renewedSnapshots(_ count: Int) throws -> Int?
  func close()
}

/// The key SQLite's snapshot benchmark reads (entry 0 of the dataset: in every fixture).
public let snapshotKey = benchKey(0)

/// Opens (creating if needed) the engine's database in `directory`.
public func openEngine(_ kind: EngineKind, in directory: String) throws -> Engine {
  switch kind {
  case .shoal: return try ShoalEngine(directory: directory)
  case .shoalEncrypted: return try ShoalEngine(directory: directory, encryptionKey: benchEncryptionKey)
  case .lmdb: return try LMDBEngine(directory: directory)
  case .sqlite: return try SQLiteEngine(directory: directory)
  }
}

/// Cache budget given to the engines that have one of their own (Shoal, SQLite); LMDB reads
/// through the OS page cache, which holds the whole file here.
public let engineCacheBytes = 256 << 20

// MARK: - Shoal

/// The keyspace of every Shoal database of the benchmarks.
public let shoalKeyspace = "kv"

final class ShoalEngine: Engine {
  static let keyspace = shoalKeyspace
  let path: String
  var store: Store?

  init(directory: String, encryptionKey: [UInt8]? = nil) throws {
    path = directory + "/db.shoal"
    store = try Store.open(
      path: path,
      options: StoreOptions(durability: .full, cacheSize: engineCacheBytes, encryptionKey: encryptionKey))
  }

  public var dataFiles: [String] { [path] }

  private func open() throws -> Store {
    guard let store else { throw BenchError("Shoal store is closed") }
    return store
  }

  public func bulkLoad(_ data: Dataset) throws {
    try open().write { txn in
      // tracksChanges stays at its default (true): that is how the object layer uses keyspaces.
      try txn.ensureKeyspace(Self.keyspace)
      for i in data.keys.indices {
        try txn.put(data.values[i], forKey: data.keys[i], in: Self.keyspace)
      }
    }
  }

  public func pointReads(_ data: Dataset) throws -> Int {
    let txn = try open().beginRead()
    defer { txn.close() }
    let ks = try txn.keyspace(Self.keyspace)
    var sum = 0
    for i in data.readOrder {
      sum &+= try ks.withValue(forKey: data.keys[i]) { value in
        guard let value else { throw BenchError("shoal: key \(i) not found") }
        return value.count &+ Int(value[0])
      }
    }
    return sum
  }

  public func scan() throws -> Int {
    let txn = try open().beginRead()
    defer { txn.close() }
    var sum = 0
    try txn.keyspace(Self.keyspace).forEach { key, value in
      sum &+= key.count &+ Int(key[0]) &+ value.count &+ Int(value[0])
      return true
    }
    return sum
  }

  public func commitOne(key: [UInt8], value: [UInt8]) throws {
    try open().write { txn in try txn.put(value, forKey: key, in: Self.keyspace) }
  }

  public func prepareForCommits() throws {
    try open().write { txn in try txn.ensureKeyspace(Self.keyspace) }
  }

  public func snapshots(_ count: Int) throws -> Int {
    let store = try open()
    var sum = 0
    for _ in 0..<count {
      let txn = try store.beginRead()
      sum &+= Int(truncatingIfNeeded: txn.version)
      txn.close()
    }
    return sum
  }

  public func renewedSnapshots(_ count: Int) throws -> Int? { nil }

  public func close() {
    store?.close()
    store = nil
  }
}

// MARK: - LMDB

final class LMDBEngine: Engine {
  let directory: String
  var env: OpaquePointer?
  var dbi: MDB_dbi = 0

  static func check(_ rc: Int32, _ what: String) throws {
    if rc != 0 { throw BenchError("lmdb: \(what): \(String(cString: mdb_strerror(rc)))") }
  }

  init(directory: String) throws {
    self.directory = directory
    try Self.check(mdb_env_create(&env), "mdb_env_create")
    // Default flags: every commit is synced (fdatasync of the data, then of the meta page).
    try Self.check(mdb_env_set_mapsize(env, 4 << 30), "mdb_env_set_mapsize")
    try Self.check(mdb_env_open(env, directory, 0, 0o644), "mdb_env_open")
    var txn: OpaquePointer?
    try Self.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
    try Self.check(mdb_dbi_open(txn, nil, 0, &dbi), "mdb_dbi_open")
    try Self.check(mdb_txn_commit(txn), "mdb_txn_commit")
  }

  public var dataFiles: [String] { [directory + "/data.mdb"] }

  public func bulkLoad(_ data: Dataset) throws {
    var txn: OpaquePointer?
    try Self.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
    do {
      for i in data.keys.indices {
        try put(txn, data.keys[i], data.values[i])
      }
    } catch {
      mdb_txn_abort(txn)
      throw error
    }
    try Self.check(mdb_txn_commit(txn), "mdb_txn_commit")
  }

  private func put(_ txn: OpaquePointer?, _ key: [UInt8], _ value: [UInt8]) throws {
    let rc = key.withUnsafeBytes { k in
      value.withUnsafeBytes { v in
        var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
        var vv = MDB_val(mv_size: v.count, mv_data: UnsafeMutableRawPointer(mutating: v.baseAddress))
        return mdb_put(txn, dbi, &kv, &vv, 0)
      }
    }
    try Self.check(rc, "mdb_put")
  }

  public func pointReads(_ data: Dataset) throws -> Int {
    var txn: OpaquePointer?
    try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
    defer { mdb_txn_abort(txn) }
    var sum = 0
    for i in data.readOrder {
      var vv = MDB_val()
      let rc = data.keys[i].withUnsafeBytes { k in
        var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
        return mdb_get(txn, dbi, &kv, &vv)
      }
      try Self.check(rc, "mdb_get key \(i)")
      sum &+= vv.mv_size &+ Int(vv.mv_data.load(as: UInt8.self))
    }
    return sum
  }

  public func scan() throws -> Int {
    var txn: OpaquePointer?
    try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
    defer { mdb_txn_abort(txn) }
    var cursor: OpaquePointer?
    try Self.check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
    defer { mdb_cursor_close(cursor) }
    var kv = MDB_val()
    var vv = MDB_val()
    var sum = 0
    var rc = mdb_cursor_get(cursor, &kv, &vv, MDB_FIRST)
    while rc == 0 {
      sum &+= kv.mv_size &+ Int(kv.mv_data.load(as: UInt8.self)) &+ vv.mv_size &+ Int(vv.mv_data.load(as: UInt8.self))
      rc = mdb_cursor_get(cursor, &kv, &vv, MDB_NEXT)
    }
    if rc != MDB_NOTFOUND { try Self.check(rc, "mdb_cursor_get") }
    return sum
  }

  public func commitOne(key: [UInt8], value: [UInt8]) throws {
    var txn: OpaquePointer?
    try Self.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
    do {
      try put(txn, key, value)
    } catch {
      mdb_txn_abort(txn)
      throw error
    }
    try Self.check(mdb_txn_commit(txn), "mdb_txn_commit")
  }

  public func prepareForCommits() throws {}

  public func snapshots(_ count: Int) throws -> Int {
    var sum = 0
    for _ in 0..<count {
      var txn: OpaquePointer?
      try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
      sum &+= mdb_txn_id(txn)
      mdb_txn_abort(txn)
    }
    return sum
  }

  public func renewedSnapshots(_ count: Int) throws -> Int? {
    var txn: OpaquePointer?
    try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
    defer { mdb_txn_abort(txn) }
    mdb_txn_reset(txn)
    var sum = 0
    for _ in 0..<count {
      try Self.check(mdb_txn_renew(txn), "mdb_txn_renew")
      sum &+= mdb_txn_id(txn)
      mdb_txn_reset(txn)
    }
    return sum
  }

  public func close() {
    if let env {
      mdb_env_close(env)
      self.env = nil
    }
  }
}

// MARK: - SQLite

final class SQLiteEngine: Engine {
  let path: String
  var db: OpaquePointer?
  var insert: OpaquePointer?
  var select: OpaquePointer?
  var scanAll: OpaquePointer?
  var begin: OpaquePointer?
  var commit: OpaquePointer?

  init(directory: String) throws {
    path = directory + "/db.sqlite"
    let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
    guard sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK else {
      let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
      sqlite3_close(db)
      throw BenchError("sqlite: open \(path): \(message)")
    }
    // First, so that opening next to other processes (the contention benchmark) waits for
    // their locks instead of failing with SQLITE_BUSY.
    try exec("PRAGMA busy_timeout=60000")
    try exec("PRAGMA journal_mode=WAL")
    try exec("PRAGMA synchronous=FULL")
    try exec("PRAGMA cache_size=-\(engineCacheBytes / 1024)")
    try exec("CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
    insert = try prepare("INSERT INTO kv(k, v) VALUES(?1, ?2)")
    select = try prepare("SELECT v FROM kv WHERE k = ?1")
    scanAll = try prepare("SELECT k, v FROM kv ORDER BY k")
    begin = try prepare("BEGIN")
    commit = try prepare("COMMIT")
  }

  public var dataFiles: [String] { [path, path + "-wal"] }

  private func fail(_ what: String) -> BenchError {
    BenchError("sqlite: \(what): \(db.map { String(cString: sqlite3_errmsg($0)) } ?? "closed")")
  }

  private func exec(_ sql: String) throws {
    guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw fail(sql) }
  }

  private func prepare(_ sql: String) throws -> OpaquePointer? {
    var stmt: OpaquePointer?
    guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil) == SQLITE_OK else {
      throw fail("prepare \(sql)")
    }
    return stmt
  }

  /// Runs a statement that returns no rows.
  private func run(_ stmt: OpaquePointer?, _ what: String) throws {
    defer { sqlite3_reset(stmt) }
    guard sqlite3_step(stmt) == SQLITE_DONE else { throw fail(what) }
  }

  private func put(_ key: [UInt8], _ value: [UInt8]) throws {
    // The buffers outlive the step, so SQLite may use them in place (SQLITE_STATIC = nil).
    try key.withUnsafeBytes { k in
      try value.withUnsafeBytes { v in
        sqlite3_bind_blob(insert, 1, k.baseAddress, Int32(k.count), nil)
        sqlite3_bind_blob(insert, 2, v.baseAddress, Int32(v.count), nil)
        try run(insert, "insert")
      }
    }
  }

  public func bulkLoad(_ data: Dataset) throws {
    try run(begin, "BEGIN")
    for i in data.keys.indices {
      try put(data.keys[i], data.values[i])
    }
    try run(commit, "COMMIT")
  }

  public func pointReads(_ data: Dataset) throws -> Int {
    try run(begin, "BEGIN")
    var sum = 0
    for i in data.readOrder {
      try data.keys[i].withUnsafeBytes { k in
        defer { sqlite3_reset(select) }
        sqlite3_bind_blob(select, 1, k.baseAddress, Int32(k.count), nil)
        guard sqlite3_step(select) == SQLITE_ROW, let v = sqlite3_column_blob(select, 0) else {
          throw BenchError("sqlite: key \(i) not found")
        }
        sum &+= Int(sqlite3_column_bytes(select, 0)) &+ Int(v.load(as: UInt8.self))
      }
    }
    try run(commit, "COMMIT")
    return sum
  }

  public func scan() throws -> Int {
    try run(begin, "BEGIN")
    defer { sqlite3_reset(scanAll) }
    var sum = 0
    var rc = sqlite3_step(scanAll)
    while rc == SQLITE_ROW {
      guard let k = sqlite3_column_blob(scanAll, 0), let v = sqlite3_column_blob(scanAll, 1) else {
        throw BenchError("sqlite: empty key or value")
      }
      sum &+= Int(sqlite3_column_bytes(scanAll, 0)) &+ Int(k.load(as: UInt8.self))
      sum &+= Int(sqlite3_column_bytes(scanAll, 1)) &+ Int(v.load(as: UInt8.self))
      rc = sqlite3_step(scanAll)
    }
    guard rc == SQLITE_DONE else { throw fail("scan") }
    sqlite3_reset(scanAll)
    try run(commit, "COMMIT")
    return sum
  }

  public func commitOne(key: [UInt8], value: [UInt8]) throws {
    // Autocommit: the insert is its own transaction (WAL append + fsync with synchronous=FULL).
    try put(key, value)
  }

  public func prepareForCommits() throws {}

  public func snapshots(_ count: Int) throws -> Int {
    var sum = 0
    try snapshotKey.withUnsafeBytes { k in
      for _ in 0..<count {
        try run(begin, "BEGIN")
        sqlite3_bind_blob(select, 1, k.baseAddress, Int32(k.count), nil)
        guard sqlite3_step(select) == SQLITE_ROW else {
          sqlite3_reset(select)
          throw BenchError("sqlite: the snapshot key is not in the database")
        }
        sum &+= Int(sqlite3_column_bytes(select, 0))
        sqlite3_reset(select)
        try run(commit, "COMMIT")
      }
    }
    return sum
  }

  public func renewedSnapshots(_ count: Int) throws -> Int? { nil }

  public func close() {
    for stmt in [insert, select, scanAll, begin, commit] { sqlite3_finalize(stmt) }
    insert = nil
    select = nil
    scanAll = nil
    begin = nil
    commit = nil
    if let db {
      sqlite3_close_v2(db)  // checkpoints the WAL into the database file and removes it
      self.db = nil
    }
  }
}

// MARK: - Files

/// The size in bytes of `path` (0 when it does not exist).
public func fileSize(_ path: String) -> Int {
  var st = stat()
  return stat(path, &st) == 0 ? Int(st.st_size) : 0
}
