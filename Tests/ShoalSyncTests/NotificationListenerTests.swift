import Dispatch
import Testing

@testable import ShoalSync

/// The sync agent's wait for a server operation sleeps until the operation ends or the
/// notification connection does (`NotificationListener`), instead of checking the connection
/// every quarter of a second.
struct NotificationListenerTests {
  @Test func theEndOfTheConnectionWakesTheRegisteredWait() {
    let listener = NotificationListener()
    let done = DispatchSemaphore(value: 0)
    #expect(listener.isListening)
    #expect(listener.register(done))
    DispatchQueue.global().async { listener.end() }
    #expect(done.wait(timeout: .now() + 30) == .success)
    #expect(!listener.isListening)
    // Once it has ended, no wait registers: the agent gives the run up at once.
    #expect(!listener.register(DispatchSemaphore(value: 0)))
  }

  @Test func aWaitThatEndedIsNotWokenLater() {
    let listener = NotificationListener()
    let earlier = DispatchSemaphore(value: 0)
    #expect(listener.register(earlier))
    listener.register(nil)
    listener.end()
    #expect(earlier.wait(timeout: .now()) == .timedOut)
  }
}
