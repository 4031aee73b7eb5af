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

/// The dotted property path a key path reads (RealmSwift's `_name(for:)`, used by generic code
/// that turns key paths into the names queries and observations take).
///
/// ```swift
/// _name(for: \Person.dog.name)  // "dog.name"
/// ```
public func _name<T: ObjectBase>(for keyPath: PartialKeyPath<T>) -> String {
  _KeyPathProbe.name(ofPartial: keyPath)
}

/// The dotted property path of the root object a key path of a projection reads.
public func _name<O: ObjectBase, T>(for keyPath: PartialKeyPath<T>) -> String where T: Projection<O> {
  let probe = _KeyPathProbe()
  let projection = T(projecting: probe.probeObject(of: O.self))
  _ = projection[keyPath: keyPath]
  return probe.path.joined(separator: ".")
}
