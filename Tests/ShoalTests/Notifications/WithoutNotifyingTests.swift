import Dispatch
import Foundation
import Testing

@testable import Shoal

/// `write(withoutNotifying:)` skips exactly its own commit for the named tokens, wherever those
/// tokens deliver: the next commit is reported with only its own changes.
@Suite("Notifications: write(withoutNotifying:) on any thread or queue")
struct WithoutNotifyingTests {
  @Test func aQueueObserverHearsOnlyTheCommitAfterTheSkippedOne() throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    let inbox = Inbox<Seen>()
    let queue = DispatchQueue(label: "observer")
    let token = realm.objects(Counter.self).sorted(byKeyPath: "name").observe(on: queue) { inbox.put(Seen($0)) }
    #expect(inbox.next() == .initial(0))
    // Hold the queue so both commits land before its Realm refreshes: one delivery must then
    // step over the skipped commit and report only the second.
    let gate = DispatchSemaphore(value: 0)
    queue.async { gate.wait() }
    try realm.write(withoutNotifying: [token]) { realm.add(Counter(value: ["b", 1])) }
    try realm.write { realm.add(Counter(value: ["c", 2])) }
    gate.signal()
    #expect(inbox.next() == .update(count: 2, deletions: [], insertions: [1], modifications: []))
    // A skipped commit alone reaches nobody.
    try realm.write(withoutNotifying: [token]) { realm.add(Counter(value: ["a", 3])) }
    #expect(inbox.nextWithin(0.5) == nil)
    // The next one is reported against the state after the skipped one.
    try realm.write { realm.objects(Counter.self).filter("name == 'c'").first?.value = 9 }
    #expect(inbox.next() == .update(count: 3, deletions: [], insertions: [], modifications: [2]))
    token.invalidate()
  }

  @Test func aSkippedCommitInTheMiddleOfOthersIsLeftOutOfTheirChangeSet() throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    try realm.write { realm.add((0..<3).map { Counter(value: ["k\($0)", $0]) }) }
    let inbox = Inbox<Seen>()
    let queue = DispatchQueue(label: "observer")
    let token = realm.objects(Counter.self).sorted(byKeyPath: "name").observe(on: queue) { inbox.put(Seen($0)) }
    #expect(inbox.next() == .initial(3))
    let gate = DispatchSemaphore(value: 0)
    queue.async { gate.wait() }
    try realm.write { realm.objects(Counter.self).filter("name == 'k0'").first?.value = 10 }
    try realm.write(withoutNotifying: [token]) { realm.delete(realm.objects(Counter.self).filter("name == 'k1'")) }
    try realm.write { realm.add(Counter(value: ["k3", 3])) }
    gate.signal()
    // Before the skipped commit: k0 modified (at its position then).
    #expect(inbox.next() == .update(count: 3, deletions: [], insertions: [], modifications: [0]))
    // After it: only k3's insertion, at its position among k0, k2, k3.
    #expect(inbox.next() == .update(count: 3, deletions: [], insertions: [2], modifications: []))
    #expect(inbox.nextWithin(0.3) == nil)
    token.invalidate()
  }

  @Test func anotherThreadsCommitSkipsAnObjectObserverOnAQueue() throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    let counter = Counter(value: ["x", 0])
    try realm.write { realm.add(counter) }
    let inbox = Inbox<[String]>()
    let queue = DispatchQueue(label: "observer")
    let token = counter.observe(on: queue) { change in
      if case .change(_, let properties) = change { inbox.put(properties.map(\.name)) }
    }
    // Wait for the queue to register, then commit from another thread, skipping the token.
    queue.sync {}
    let holder = TokenBox(token)
    #expect(
      Thread.detachAndWait {
        let other = try Realm(configuration: config)
        let object = other.object(ofType: Counter.self, forPrimaryKey: "x")
        try other.write(withoutNotifying: [holder.token]) { object?.value = 1 }
      })
    #expect(inbox.nextWithin(0.5) == nil)
    try realm.write { counter.value = 2 }
    #expect(inbox.next() == ["value"])
    token.invalidate()
  }

  @Test func theSkippedVersionsAreLetGoOnceTheObserverPassesThem() throws {
    let config = fileConfiguration()
    let realm = try Realm(configuration: config)
    let inbox = Inbox<Seen>()
    let queue = DispatchQueue(label: "observer")
    let token = realm.objects(Counter.self).observe(on: queue) { inbox.put(Seen($0)) }
    #expect(inbox.next() == .initial(0))
    for i in 0..<20 {
      try realm.write(withoutNotifying: [token]) { realm.add(Counter(value: ["s\(i)", i])) }
    }
    try realm.write { realm.add(Counter(value: ["last", 0])) }
    #expect(inbox.next() == .update(count: 21, deletions: [], insertions: [20], modifications: []))
    token.invalidate()
    // Only this Realm's own version and the queue's are pinned now, not the skipped ones.
    queue.sync {}
    #expect(realm.core.store.activeVersionCount <= 2)
  }
}

/// Hands a token to another thread.
final class TokenBox: Sendable {
  let token: NotificationToken
  init(_ token: NotificationToken) { self.token = token }
}
