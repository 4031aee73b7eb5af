import Shoal

/// The SQL that prepares a PostgreSQL database for sync with files of a Realm schema: one table
/// per synced class, a change log filled by triggers, and a table of clients.
///
/// PostgreSQL is the source of truth, and other applications may read and write the class
/// tables with plain SQL: the triggers log every row they insert, update or delete, so those
/// changes reach devices too. Every statement is idempotent (`IF NOT EXISTS`, `OR REPLACE`), so
/// running the bootstrap again after a schema gained classes or properties adds them.
///
/// Columns, by property type:
///
/// | Realm | PostgreSQL |
/// |---|---|
/// | `Int` | `bigint` |
/// | `Bool` | `boolean` |
/// | `Float` | `real` |
/// | `Double` | `double precision` |
/// | `String` | `text` |
/// | `Data` | `bytea` |
/// | `Date` | `timestamptz` |
/// | `ObjectId` | `text` (24 hex digits) |
/// | `Decimal128` | `numeric` |
/// | `UUID` | `uuid` |
/// | `AnyRealmValue` | `jsonb` |
/// | a link | the target's primary key column type |
/// | an embedded object, `List`, `MutableSet`, `Map` | `jsonb` |
///
/// `LinkingObjects` are computed, not stored. Only the primary key is `NOT NULL`: a row another
/// application writes without a column reads as the property's default on devices.
///
/// ```swift
/// let schema = try SyncSchema(realm.schema)
/// print(schema.bootstrapSQL)   // or run it: try await schema.bootstrap(on: client)
/// ```
public struct SyncSchema: Sendable, Equatable {
  /// What makes a schema unsyncable.
  public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong and what to do.
    public let description: String
  }

  /// One synced class: its table and its columns.
  public struct Table: Sendable, Equatable {
    /// The class name, which is the table's name.
    public let className: String
    /// The primary key's property name (its column).
    public let primaryKey: String
    /// Each stored property's column name and SQL type, the primary key first.
    public let columns: [(name: String, type: String)]

    /// Whether both describe the same table: name, primary key, and columns in order.
    public static func == (lhs: Table, rhs: Table) -> Bool {
      lhs.className == rhs.className && lhs.primaryKey == rhs.primaryKey
        && lhs.columns.map(\.name) == rhs.columns.map(\.name) && lhs.columns.map(\.type) == rhs.columns.map(\.type)
    }
  }

  /// The change log table: one row per row inserted, updated or deleted in a class table.
  public static let changeLog = "shoal_changes"
  /// The clients table: one row per device (its identifier and what it last uploaded).
  public static let clients = "shoal_clients"
  /// The uploads table: (client, local version) of every commit applied, so an upload repeated
  /// after a crash is recognised and skipped.
  public static let uploads = "shoal_uploads"
  /// The channel the triggers notify (`LISTEN shoal_changes`) with the change's sequence number.
  public static let channel = "shoal_changes"

  /// The advisory lock (`pg_advisory_xact_lock`) every transaction that logs a change holds
  /// until it commits, so that the change log's sequence numbers follow commit order.
  public static let logLock: Int64 = 0x5348_4F41_4C00_0001

  /// The synced classes' tables, in the schema's order.
  public let tables: [Table]

  /// The tables of `schema`'s classes. Embedded classes are stored inside their parents'
  /// rows; every other class needs a primary key, as in Atlas Device Sync: throws a `Problem`
  /// naming the classes without one.
  public init(_ schema: Schema) throws(Problem) {
    let byName = Dictionary(schema.objectSchema.map { ($0.className, $0) }, uniquingKeysWith: { first, _ in first })
    var tables: [Table] = []
    var missing: [String] = []
    for object in schema.objectSchema where !object.isEmbedded {
      guard let key = object.primaryKeyProperty else {
        missing.append(object.className)
        continue
      }
      var columns = [(name: key.name, type: SyncSchema.columnType(key, byName))]
      for property in object.properties where !property.isPrimary {
        columns.append((property.name, SyncSchema.columnType(property, byName)))
      }
      tables.append(Table(className: object.className, primaryKey: key.name, columns: columns))
    }
    if !missing.isEmpty {
      throw Problem(
        description: "Synced classes need a primary key, as in Atlas Device Sync: give "
          + missing.sorted().joined(separator: ", ") + " a @Persisted(primaryKey: true) property.")
    }
    self.tables = tables
  }

  /// The SQL type of `property`'s column.
  static func columnType(_ property: Property, _ classes: [String: ObjectSchema]) -> String {
    if property.isArray || property.isSet || property.isMap { return "jsonb" }
    switch property.type {
    case .int: return "bigint"
    case .bool: return "boolean"
    case .float: return "real"
    case .double: return "double precision"
    case .string, .objectId: return "text"
    case .data: return "bytea"
    case .date: return "timestamptz"
    case .decimal128: return "numeric"
    case .UUID: return "uuid"
    case .any, .linkingObjects: return "jsonb"
    case .object:
      guard let target = property.objectClassName.flatMap({ classes[$0] }), !target.isEmbedded,
        let key = target.primaryKeyProperty
      else { return "jsonb" }
      return columnType(key, classes)
    }
  }

  /// `name` as a quoted SQL identifier.
  public static func quoted(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }

  /// `text` as a quoted SQL string literal.
  public static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

  /// The bootstrap, statement by statement: the shared tables, the trigger function, then per
  /// class its table, any column it lacks, and its trigger.
  public var statements: [String] {
    var sql = [
      """
      CREATE TABLE IF NOT EXISTS \(SyncSchema.clients) (
        client_id text PRIMARY KEY,
        first_seen timestamptz NOT NULL DEFAULT now(),
        last_seen timestamptz NOT NULL DEFAULT now(),
        uploaded_version bigint NOT NULL DEFAULT 0
      )
      """,
      """
      CREATE TABLE IF NOT EXISTS \(SyncSchema.changeLog) (
        seq bigserial PRIMARY KEY,
        class_name text NOT NULL,
        primary_key jsonb NOT NULL,
        operation char(1) NOT NULL CHECK (operation IN ('U', 'D')),
        client_id text,
        local_version bigint,
        changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )
      """,
      """
      CREATE TABLE IF NOT EXISTS \(SyncSchema.uploads) (
        client_id text NOT NULL,
        local_version bigint NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (client_id, local_version)
      )
      """,
      // The row's primary key as JSON (of any type), the uploading client and its version when
      // a device's upload made the change (set per transaction with set_config), null for
      // another application's. The transaction-wide lock first makes sequence numbers follow
      // commit order: without it a transaction could take number 100 and commit after another
      // took 101, and a device that read 101 in between would move its cursor past 100 for good.
      """
      CREATE OR REPLACE FUNCTION shoal_log_change() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        changed jsonb;
        logged bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock(\(SyncSchema.logLock));
        IF TG_OP = 'DELETE' THEN changed := to_jsonb(OLD); ELSE changed := to_jsonb(NEW); END IF;
        INSERT INTO \(SyncSchema.changeLog) (class_name, primary_key, operation, client_id, local_version)
        VALUES (
          TG_ARGV[0], changed -> TG_ARGV[1], CASE WHEN TG_OP = 'DELETE' THEN 'D' ELSE 'U' END,
          nullif(current_setting('shoal.client_id', true), ''),
          nullif(current_setting('shoal.local_version', true), '')::bigint)
        RETURNING seq INTO logged;
        PERFORM pg_notify(\(SyncSchema.literal(SyncSchema.channel)), logged::text);
        RETURN NULL;
      END
      $$
      """,
    ]
    for table in tables {
      let name = SyncSchema.quoted(table.className)
      let columns = table.columns.enumerated().map { index, column in
        "  \(SyncSchema.quoted(column.name)) \(column.type)" + (index == 0 ? " PRIMARY KEY" : "")
      }
      sql.append("CREATE TABLE IF NOT EXISTS \(name) (\n" + columns.joined(separator: ",\n") + "\n)")
      for column in table.columns.dropFirst() {
        sql.append("ALTER TABLE \(name) ADD COLUMN IF NOT EXISTS \(SyncSchema.quoted(column.name)) \(column.type)")
      }
      let trigger = SyncSchema.quoted("shoal_log_" + table.className)
      sql.append(
        """
        CREATE OR REPLACE TRIGGER \(trigger) AFTER INSERT OR UPDATE OR DELETE ON \(name)
        FOR EACH ROW EXECUTE FUNCTION shoal_log_change(\(SyncSchema.literal(table.className)), \
        \(SyncSchema.literal(table.primaryKey)))
        """)
    }
    return sql
  }

  /// The whole bootstrap as one script, for an administrator to run (`psql -f`).
  public var bootstrapSQL: String {
    "-- Shoal sync: the tables, change log and triggers of \(tables.count) synced class(es).\n"
      + "-- Idempotent: run it again after adding classes or properties.\n"
      + "BEGIN;\n" + statements.map { $0 + ";\n" }.joined() + "COMMIT;\n"
  }
}
