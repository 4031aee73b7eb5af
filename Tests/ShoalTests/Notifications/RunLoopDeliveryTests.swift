import Dispatch
import Foundation
import Shoal
import Synchronization
import Testing

/// A thread that runs its run loop gets notifications as RealmSwift delivers them there:
/// asynchronously, through the run loop.
@Suite("Notifications through a thread's run loop")
struct RunLoopDeliveryTests {
  @Test func notificationsArriveThroughTheRunLoop() throws {
    let config = fileConfiguration()
    let log = EventLog()
    let note = log.note
    let otherCommitted = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let stop = Atomic<Bool>(false)
    Thread.detachNewThread {
      // Observe from inside the running run loop, as RealmSwift requires off the main thread.
      nonisolated(unsafe) var token: NotificationToken?
      nonisolated(unsafe) var realm: Realm?
      RunLoop.current.perform {
        realm = try? Realm(configuration: config)
        token = realm?.objects(Counter.self).observe { change in
          switch change {
          case .initial(let results): note("initial \(results.count)")
          case .update(let results, _, let insertions, _): note("update \(results.count) \(insertions)")
          case .error: note("error")
          }
        }
        note("observe returned")
        // A local commit is told of after the call that made it returns.
        try? realm?.write { realm?.add(Counter(value: ["local", 1])) }
        note("write returned")
        // Another thread's commit reaches this thread while its run loop runs.
        Thread.detachNewThread {
          let other = try? Realm(configuration: config)
          try? other?.write { other?.add(Counter(value: ["remote", 2])) }
          otherCommitted.signal()
        }
      }
      let deadline = Date(timeIntervalSinceNow: 30)
      while !stop.load(ordering: .acquiring), Date() < deadline {
        _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
      }
      token?.invalidate()
      withExtendedLifetime(realm) {}
      finished.signal()
    }
    #expect(otherCommitted.wait(timeout: .now() + 30) == .success)
    let deadline = Date(timeIntervalSinceNow: 30)
    while Date() < deadline, !log.events.contains("update 2 [1]") { _ = log.waitForNext(until: deadline) }
    stop.store(true, ordering: .releasing)
    #expect(finished.wait(timeout: .now() + 30) == .success)
    // As in RealmSwift: `observe` returns before the first notification; beginning the write
    // delivers it (at the version before the write); the local commit is told of after the
    // call that made it returns, through the run loop; the other thread's commit follows.
    #expect(log.events == ["observe returned", "initial 0", "write returned", "update 1 [0]", "update 2 [1]"])
  }
}

extension RunLoopDeliveryTests {
  /// A write begun while a local commit's notifications still wait for the run loop delivers
  /// them first (RealmSwift's `beginWrite` "generates notifications"), so two writes in a row
  /// are told of one by one.
  @Test func aWriteDeliversWhatThePreviousLocalCommitLeftPending() throws {
    let config = fileConfiguration()
    let log = EventLog()
    let note = log.note
    let finished = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      nonisolated(unsafe) var token: NotificationToken?
      nonisolated(unsafe) var realm: Realm?
      RunLoop.current.perform {
        realm = try? Realm(configuration: config)
        token = realm?.observe { notification, _ in note("\(notification)") }
        try? realm?.write { realm?.add(Counter(value: ["a", 1])) }
        note("first write returned")
        try? realm?.write { realm?.add(Counter(value: ["b", 2])) }
        note("second write returned")
      }
      let deadline = Date(timeIntervalSinceNow: 30)
      while log.events.count < 4, Date() < deadline {
        _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
      }
      token?.invalidate()
      withExtendedLifetime(realm) {}
      finished.signal()
    }
    #expect(finished.wait(timeout: .now() + 40) == .success)
    #expect(log.events == ["first write returned", "didChange", "second write returned", "didChange"])
  }
}

/// Events noted from several threads, in order.
final class EventLog: Sendable {
  private let storage = Mutex<[String]>([])
  private let noted = DispatchSemaphore(value: 0)
  var events: [String] { storage.withLock { $0 } }
  @Sendable func note(_ event: String) {
    storage.withLock { $0.append(event) }
    noted.signal()
  }
  /// Waits for the next event, or until `deadline`.
  func waitForNext(until deadline: Date) -> Bool {
    noted.wait(timeout: .now() + max(0, deadline.timeIntervalSinceNow)) == .success
  }
}
