// Names RealmSwift code uses that Shoal declares in its engine module: visible with
// `import Shoal` alone, as they are with `import RealmSwift`.
@_exported import struct ShoalStorage.LogCategory
@_exported import enum ShoalStorage.LogLevel

/// Runs `body` and returns its result.
///
/// RealmSwift code wraps Realm work in `autoreleasepool` so that Objective-C objects are
/// released early; Linux has no autorelease pools (Swift releases objects as soon as they are
/// no longer used), so this only runs `body`. It lets such code port unchanged:
///
/// ```swift
/// autoreleasepool {
///   let realm = try! Realm()
///   try! realm.write { realm.add(Dog()) }
/// }
/// ```
public func autoreleasepool<Result>(invoking body: () throws -> Result) rethrows -> Result {
  try body()
}
