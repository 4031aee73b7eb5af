import Testing

@testable import Shoal

// Test-only classes, rooted at a base class of their own so that nothing else matches. They are
// declared in this test module while `loadedClassTypes()` lives in Shoal, so finding them also
// checks discovery across modules.

class DiscoveryBase {}
class DiscoveryChild: DiscoveryBase {}
final class DiscoveryGrandchild: DiscoveryChild {}

/// Generic: it has no metadata of its own until specialised, so discovery skips it.
class DiscoveryGeneric<Element>: DiscoveryBase {}
/// Not generic although its superclass is: discovery finds it.
final class DiscoveryGenericLeaf: DiscoveryGeneric<Int> {}

/// A namespace and a generic container for nested classes.
enum DiscoveryNamespace {
  final class Nested: DiscoveryBase {}
}
struct DiscoveryBox<Element> {
  /// Nested in a generic type, so generic itself: skipped.
  final class Inner: DiscoveryBase {}
}
extension DiscoveryChild {
  final class InExtension: DiscoveryBase {}
}

private final class DiscoveryPrivate: DiscoveryBase {}

private func localClass() -> DiscoveryBase.Type {
  final class DiscoveryLocal: DiscoveryBase {}
  return DiscoveryLocal.self
}

actor DiscoveryActor {}

/// Sorted names, for readable comparisons (private and local types have a per-process context
/// address in their names, but it is the same on both sides).
private func names(_ types: [Any.Type]) -> [String] {
  types.map { String(reflecting: $0) }.sorted()
}

@Suite struct TypeDiscoveryTests {
  @Test func findsExactlyTheNonGenericSubclasses() {
    let found = loadedClassTypes().compactMap { $0 as? DiscoveryBase.Type }
    let expected: [DiscoveryBase.Type] = [
      DiscoveryBase.self, DiscoveryChild.self, DiscoveryGrandchild.self, DiscoveryGenericLeaf.self,
      DiscoveryNamespace.Nested.self, DiscoveryChild.InExtension.self, DiscoveryPrivate.self, localClass(),
    ]
    #expect(names(found) == names(expected))
    #expect(Set(found.map(ObjectIdentifier.init)) == Set(expected.map(ObjectIdentifier.init)))
    #expect(found.count == expected.count)
  }

  @Test func skipsGenericClasses() {
    let found = Set(loadedClassTypes().map(ObjectIdentifier.init))
    // Both specialisations exist by now (the second as the superclass of DiscoveryGenericLeaf).
    #expect(!found.contains(ObjectIdentifier(DiscoveryGeneric<String>.self)))
    #expect(!found.contains(ObjectIdentifier(DiscoveryGeneric<Int>.self)))
    #expect(!found.contains(ObjectIdentifier(DiscoveryBox<Int>.Inner.self)))
  }

  @Test func findsClassesOfSharedLibraries() {
    // AnyKeyPath lives in libswiftCore.so, a shared library of the test process.
    #expect(loadedClassTypes().contains { $0 == AnyKeyPath.self })
  }

  @Test func includesActors() {
    // Actors are classes to the runtime.
    #expect(loadedClassTypes().contains { $0 == DiscoveryActor.self })
  }

  @Test func isStable() {
    let first = loadedClassTypes().map(ObjectIdentifier.init)
    let second = loadedClassTypes().map(ObjectIdentifier.init)
    #expect(first == second)
    #expect(Set(first).count == first.count)
  }
}
