// swift-tools-version: 6.1
import PackageDescription

let package = Package(
  name: "Shoal",
  products: [
    .library(name: "Shoal", targets: ["Shoal"]),
    .library(name: "ShoalStorage", targets: ["ShoalStorage"]),
    .library(name: "ShoalLogging", targets: ["ShoalLogging"]),
    .library(name: "ShoalCombine", targets: ["ShoalCombine"]),
    .library(name: "ShoalSync", targets: ["ShoalSync"]),
    .executable(name: "shoal", targets: ["shoal"]),
    .executable(name: "shoal-stress", targets: ["shoal-stress"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-atomics", from: "1.2.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
    .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
  ],
  targets: [
    .systemLibrary(
      name: "CLZ4",
      path: "Sources/CLZ4",
      pkgConfig: "liblz4",
      providers: [.apt(["liblz4-dev"])]
    ),
    .target(name: "CShoalSystem", path: "Sources/CShoalSystem"),
    .target(
      name: "ShoalStorage",
      dependencies: [
        "CLZ4", "CShoalSystem",
        .product(name: "SystemPackage", package: "swift-system"),
        .product(name: "Atomics", package: "swift-atomics"),
        // AES-256-GCM, HKDF and HMAC for encrypted files (BoringSSL on Linux).
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      path: "Sources/ShoalStorage"
    ),
    .target(
      name: "Shoal",
      dependencies: [
        "ShoalStorage",
        // The lock-free table of property offsets every property access reads.
        .product(name: "Atomics", package: "swift-atomics"),
      ],
      path: "Sources/Shoal"),
    // Shoal's log messages through swift-log, for servers with their own LogHandler.
    .target(
      name: "ShoalLogging", dependencies: ["Shoal", .product(name: "Logging", package: "swift-log")],
      path: "Sources/ShoalLogging"),
    // RealmSwift's Combine API through OpenCombine, in its own product so that `Shoal` users do
    // not resolve OpenCombine.
    .target(
      name: "ShoalCombine",
      dependencies: [
        "Shoal", .product(name: "OpenCombine", package: "OpenCombine"),
        .product(name: "OpenCombineDispatch", package: "OpenCombine"),
      ],
      path: "Sources/ShoalCombine"),
    // Sync with a PostgreSQL server through postgres-nio, in its own product so that `Shoal`
    // users do not resolve SwiftNIO.
    .target(
      name: "ShoalSync",
      dependencies: ["Shoal", "ShoalStorage", .product(name: "PostgresNIO", package: "postgres-nio")],
      path: "Sources/ShoalSync"),
    // Power-loss and corruption trials, shared by shoal-stress and the tests.
    .target(name: "ShoalTrials", dependencies: ["ShoalStorage"], path: "Sources/ShoalTrials"),
    .executableTarget(
      name: "shoal",
      dependencies: [
        "ShoalStorage",
        "Shoal",
        "ShoalSync",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      path: "Tools/shoal"
    ),
    .executableTarget(
      name: "shoal-stress",
      dependencies: [
        "ShoalStorage", "ShoalTrials",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      path: "Tools/shoal-stress"
    ),
    // libFuzzer target: `make fuzz` builds it with -sanitize=fuzzer; a plain build replays inputs.
    .executableTarget(name: "shoal-fuzz", dependencies: ["ShoalStorage", "ShoalTrials"], path: "Tools/shoal-fuzz"),
    .executableTarget(name: "shoal-demo", dependencies: ["Shoal", "ShoalStorage"], path: "Examples/Demo"),
    .executableTarget(
      name: "shoal-share-example", dependencies: ["Shoal", "ShoalStorage"], path: "Examples/Sharing"),
    // Two devices syncing through PostgreSQL (`make demo` starts a private cluster for it).
    .executableTarget(name: "shoal-sync-example", dependencies: ["Shoal", "ShoalSync"], path: "Examples/Sync"),
    .plugin(
      name: "ShoalStressPlugin",
      capability: .command(
        intent: .custom(verb: "shoal-stress", description: "Run shoal-stress (run, powerloss, corrupt, churn).")),
      dependencies: ["shoal-stress"],
      path: "Plugins/ShoalStressPlugin"
    ),
    .plugin(
      name: "ShoalPlugin",
      capability: .command(
        intent: .custom(verb: "shoal", description: "Run the shoal CLI (info, verify, dump, compact, watch, events).")),
      dependencies: ["shoal"],
      path: "Plugins/ShoalPlugin"
    ),
    // Models shared by shoal-realm-worker and the object-layer tests (one schema, two processes).
    .target(name: "ShoalSharedModels", dependencies: ["Shoal"], path: "Tools/SharedModels"),
    .executableTarget(
      name: "shoal-realm-worker", dependencies: ["Shoal", "ShoalSharedModels"], path: "Tools/shoal-realm-worker"),
    // A synced device in a process of its own, for the sync tests and the demo.
    .executableTarget(
      name: "shoal-sync-worker", dependencies: ["Shoal", "ShoalSync", "ShoalSharedModels"],
      path: "Tools/shoal-sync-worker"),
    // What the test suites share: driving helper processes.
    .target(name: "ShoalTestSupport", path: "Tests/Support"),
    .testTarget(
      name: "ShoalTests",
      dependencies: [
        "ShoalTestSupport", "Shoal", "ShoalStorage", "ShoalLogging", "ShoalCombine", "ShoalSharedModels",
        "shoal-realm-worker", "shoal",
        .product(name: "OpenCombine", package: "OpenCombine"),
        .product(name: "OpenCombineDispatch", package: "OpenCombine"),
      ],
      path: "Tests/ShoalTests"),
    // Against a private PostgreSQL cluster that `make test` starts (SHOAL_PG_URL).
    .testTarget(
      name: "ShoalSyncTests",
      dependencies: [
        "ShoalSync", "Shoal", "ShoalSharedModels", "ShoalTestSupport", "shoal", "shoal-sync-worker",
        .product(name: "PostgresNIO", package: "postgres-nio"),
      ],
      path: "Tests/ShoalSyncTests"),
    .testTarget(
      name: "ShoalStorageTests",
      dependencies: [
        "ShoalStorage", "ShoalTrials", "ShoalTestSupport",
        // The keys of encrypted files, derived independently of FileSeal (EncryptionTests).
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      path: "Tests/ShoalStorageTests"
    ),
  ],
  swiftLanguageModes: [.v6]
)

// `make docs` builds the DocC catalogs with swift-docc-plugin, which is added only when
// SHOAL_DOCS is set, so packages that depend on Shoal never resolve it.
if Context.environment["SHOAL_DOCS"] != nil {
  package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"))
}
