// swift-tools-version: 6.1
// Benchmarks of Shoal's storage engine against LMDB and SQLite, of its object layer against GRDB,
// of the object layer's cross-process notifications and freeze(), and of a log call (see
// bench.sh; `make bench`). A package of its own so the benchmark dependencies stay out of the
// root package: build it here (`swift build -c release` in this folder), never in the root's
// .build.
import PackageDescription

// A path dependency's identity is its folder's name (lower-cased), whatever the clone is called.
let rootIdentity = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "main").lowercased()

let package = Package(
  name: "ShoalBenchmarks",
  dependencies: [
    .package(path: ".."),
    // Only this trait: the default RuntimeInterposer one needs swift-runtime-interposer.
    .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    // The object layer's counterpart: records over SQLite (WAL), for ObjectBenchmarks only.
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    // bench-peer's Combine observer (ShoalCombine's publishers run on OpenCombine).
    .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    // SyncBenchmarks' own queries (creating a database, filling a table).
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
  ],
  targets: [
    .systemLibrary(name: "CLMDB", path: "Sources/CLMDB", providers: [.apt(["liblmdb-dev"])]),
    .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
    // The three engines behind one interface, the dataset, and starting and talking to
    // bench-peer processes: shared by the benchmarks and bench-peer, so every process opens a
    // database the same way.
    .target(
      name: "BenchEngines",
      dependencies: ["CLMDB", "CSQLite", .product(name: "ShoalStorage", package: rootIdentity)],
      path: "Sources/BenchEngines"
    ),
    .executableTarget(
      name: "StorageBenchmarks",
      dependencies: [
        "BenchEngines",
        .product(name: "ShoalStorage", package: rootIdentity),
        .product(name: "Benchmark", package: "benchmark"),
      ],
      path: "Benchmarks/StorageBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
    // Shoal's object layer (`import Shoal`: Object, @Persisted, Realm, queries) against GRDB's
    // records on the same 100k objects. A target of its own, so GRDB's SQLite module and
    // BenchEngines' CSQLite never meet in one Swift module.
    // The object stores' interface, the dataset and Shoal's side (RealmSwift's API): shared by
    // ObjectBenchmarks and bench-objects (the profiling tool).
    .target(
      name: "ObjectShared", dependencies: [.product(name: "Shoal", package: rootIdentity)],
      path: "Sources/ObjectShared"),
    .executableTarget(
      name: "ObjectBenchmarks",
      dependencies: [
        "ObjectShared",
        .product(name: "Shoal", package: rootIdentity),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "Benchmark", package: "benchmark"),
      ],
      path: "Benchmarks/ObjectBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
    // Shoal's object-layer notifications across processes and freeze(): the model and shapes
    // that NotificationBenchmarks and bench-peer's `observe` (the observing process) share.
    .target(
      name: "NotifyShared", dependencies: [.product(name: "Shoal", package: rootIdentity)],
      path: "Sources/NotifyShared"),
    .executableTarget(
      name: "NotificationBenchmarks",
      dependencies: [
        "BenchEngines", "NotifyShared",
        .product(name: "Shoal", package: rootIdentity),
        .product(name: "Benchmark", package: "benchmark"),
      ],
      path: "Benchmarks/NotificationBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
    // Sync through a private PostgreSQL on loopback (bench.sh starts it): latency from a commit
    // on one device to the callback on another, upload and bootstrap throughput.
    .executableTarget(
      name: "SyncBenchmarks",
      dependencies: [
        .product(name: "Shoal", package: rootIdentity),
        .product(name: "ShoalSync", package: rootIdentity),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Benchmark", package: "benchmark"),
      ],
      path: "Benchmarks/SyncBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
    // What one log call costs (Log.write and RealmSwift's Logger.shared.log), its level disabled
    // and enabled, with the mallocs per call: a disabled message must never be formatted.
    .executableTarget(
      name: "LoggingBenchmarks",
      dependencies: [
        .product(name: "Shoal", package: rootIdentity),
        .product(name: "ShoalStorage", package: rootIdentity),
        .product(name: "Benchmark", package: "benchmark"),
      ],
      path: "Benchmarks/LoggingBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
    // Reads the run's Influx export and the side files (file sizes, notification); prints the table.
    // (Not the JMH export: it drops any benchmark whose iterations take over a second.)
    .executableTarget(name: "bench-table", path: "Sources/bench-table"),
    // Durable single-entry commits of the engines interleaved, with each engine's percentiles
    // and CPU time a commit: for A/B runs of a change to the commit path (see its main.swift).
    .executableTarget(
      name: "bench-commits",
      dependencies: ["BenchEngines", .product(name: "ShoalStorage", package: rootIdentity)],
      path: "Sources/bench-commits"),
    // Shoal's object workloads one at a time in a loop, for profiling (not run by the benchmarks).
    .executableTarget(
      name: "bench-objects",
      dependencies: ["ObjectShared", .product(name: "Shoal", package: rootIdentity)],
      path: "Sources/bench-objects"),
    // The other processes of the cross-process benchmarks (notification latency, contended
    // commits, object notifications). bench.sh builds it; the benchmarks run it from their own
    // folder.
    .executableTarget(
      name: "bench-peer",
      dependencies: [
        "BenchEngines", "NotifyShared",
        .product(name: "ShoalStorage", package: rootIdentity),
        .product(name: "Shoal", package: rootIdentity),
        .product(name: "ShoalCombine", package: rootIdentity),
        .product(name: "OpenCombine", package: "OpenCombine"),
        .product(name: "OpenCombineDispatch", package: "OpenCombine"),
      ],
      path: "Sources/bench-peer"
    ),
  ],
  swiftLanguageModes: [.v6]
)
