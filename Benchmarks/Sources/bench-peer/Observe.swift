// bench-peer's `observe` command: the other process of NotificationBenchmarks, observing with
// Shoal's object layer the Realm file that the benchmark process writes to.
//
//   bench-peer observe <file.realm> latency
//       Opens the Realm (`quoteConfiguration`), and the same file as a read-only `Store` (only
//       to read the engine's publish timestamp), observes `realm.objects(Quote.self)` on a
//       serial queue and prints `ready <count>` once `.initial` arrived. For each `.update`
//       it prints, as soon as the callback starts,
//         `u <seq> <publish->callback ns> <stamp->callback ns> <callback ns> <ins> <del> <mod>`
//       where <seq> and <stamp> are those of the highest-`seq` object among the inserted and
//       modified ones, <callback ns> is `wallClockNanoseconds()` when the callback started,
//       and the publish timestamp is `Store.lastPublishTimestamp` read right then (the commit
//       being reported is the newest one: the writer waits for this line before its next).
//   bench-peer observe <file.realm> latency-combine
//   bench-peer observe <file.realm> latency-async
//       The same as latency, through ShoalCombine (`changesetPublisher.subscribe(on:)` on a
//       serial queue, `sink`) or through the async sequence (`changes()`, iterated by a task):
//       what those paths add to the callback's latency.
//   bench-peer observe <file.realm> count
//       The same, but the updates are counted instead of printed. `settle <count>` waits
//       until a callback has reported results of <count> objects (10 s at most) and answers
//       `settled <count seen>`; `begin` resets the tally and answers `begun`; `end <first> <count>` waits until the inserted objects reported
//       hold every `seq` of first..<first+count (or until no callback came for 5 s), then
//       answers `tally <callbacks> <insertions> <deletions> <modifications> <in range>
//       <out of range> <repeated> <first callback ns> <last callback ns>`: how many callbacks,
//       the sums of the indexes they reported, how many distinct `seq` of the range the
//       inserted objects held, how many inserted objects had a `seq` outside it, and how many
//       had a `seq` reported before.

import BenchEngines
import Dispatch
import Foundation
import NotifyShared
import OpenCombine
import OpenCombineDispatch
import Shoal
import ShoalCombine
import ShoalStorage
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What the count mode's callbacks saw since the last `begin`.
struct Tally {
  var callbacks = 0
  var insertions = 0
  var deletions = 0
  var modifications = 0
  var seqs = Set<Int>()
  var repeated = 0
  var firstCallback = 0
  var lastCallback = 0
}

/// Keeps what the observation needs alive for the life of the process.
final class Observation: Sendable {
  let tally = Mutex(Tally())
  /// Set on `.initial`, with the count it reported.
  let initial = Mutex<Int?>(nil)
  /// The count of the results the latest callback reported.
  let latestCount = Mutex(0)
}

func observe(path: String, mode: String) throws {
  let modes = ["latency", "latency-combine", "latency-async", "count"]
  guard modes.contains(mode) else { fail("observe: mode must be one of \(modes), not \(mode)") }
  let counting = mode == "count"
  let realm = try Realm(configuration: quoteConfiguration(path))
  let store = try Store.open(path: path, options: StoreOptions(readOnly: true, create: false, cacheSize: 1 << 20))
  defer { store.close() }
  let observation = Observation()
  let queue = DispatchQueue(label: "bench-peer observer")
  let handle: @Sendable (RealmCollectionChange<Results<Quote>>) -> Void = { change in
    switch change {
    case .initial(let results):
      let count = results.count
      observation.initial.withLock { $0 = count }
      observation.latestCount.withLock { $0 = count }
    case .update(let results, let deletions, let insertions, let modifications):
      let calledAt = wallClockNanoseconds()
      if counting {
        let inserted = insertions.map { results[$0].seq }
        let count = results.count
        observation.tally.withLock { tally in
          tally.callbacks += 1
          tally.insertions += insertions.count
          tally.deletions += deletions.count
          tally.modifications += modifications.count
          for seq in inserted where !tally.seqs.insert(seq).inserted { tally.repeated += 1 }
          if tally.firstCallback == 0 { tally.firstCallback = calledAt }
          tally.lastCallback = calledAt
        }
        observation.latestCount.withLock { $0 = count }
        return
      }
      let published = Int(store.lastPublishTimestamp)
      var seq = Int.min
      var stamp = 0
      for index in insertions + modifications {
        let quote = results[index]
        if quote.seq > seq { (seq, stamp) = (quote.seq, quote.stamp) }
      }
      say(
        "u \(seq) \(calledAt - published) \(calledAt - stamp) \(calledAt) \(insertions.count) \(deletions.count) "
          + "\(modifications.count)")
    case .error(let error):
      fail("observe: \(error)")
    }
  }
  // Keeps the observation alive: a token, a Combine subscription or the iterating task.
  let token: NotificationToken
  var subscription: AnyCancellable?
  var iteration: Task<Void, Never>?
  switch mode {
  case "latency-combine":
    token = NotificationToken()
    subscription = realm.objects(Quote.self).changesetPublisher.subscribe(on: queue.ocombine).sink(receiveValue: handle)
  case "latency-async":
    token = NotificationToken()
    let changes = realm.objects(Quote.self).changes()
    iteration = Task.detached {
      for await change in changes { handle(change) }
    }
  default:
    token = realm.objects(Quote.self).observe(on: queue, handle)
  }
  defer {
    subscription?.cancel()
    iteration?.cancel()
  }
  defer { token.invalidate() }
  let deadline = monotonicSeconds() + 60
  while observation.initial.withLock({ $0 }) == nil {
    if monotonicSeconds() > deadline { fail("observe: no .initial within 60 s") }
    usleep(1_000)
  }
  // Only the queue's Realm observes; this thread's would otherwise keep its version pinned.
  realm.invalidate()
  say("ready \(observation.initial.withLock { $0 } ?? 0)")
  for words in commands() {
    switch (words.first, words.count) {
    case ("settle", 2) where counting:
      guard let count = Int(words[1]) else { fail("bad command \(words)") }
      let deadline = monotonicSeconds() + 10
      while observation.latestCount.withLock({ $0 }) != count, monotonicSeconds() < deadline { usleep(1_000) }
      say("settled \(observation.latestCount.withLock { $0 })")
    case ("begin", 1) where counting:
      observation.tally.withLock { $0 = Tally() }
      say("begun")
    case ("end", 3) where counting:
      guard let first = Int(words[1]), let count = Int(words[2]) else { fail("bad command \(words)") }
      let range = first..<(first + count)
      var tally = Tally()
      var seen = -1
      var lastProgress = monotonicSeconds()
      while true {
        tally = observation.tally.withLock { $0 }
        let inRange = tally.seqs.count(where: range.contains)
        if inRange >= count { break }
        if inRange != seen {
          (seen, lastProgress) = (inRange, monotonicSeconds())
        } else if monotonicSeconds() - lastProgress > 5 {
          break
        }
        usleep(1_000)
      }
      let inRange = tally.seqs.count(where: range.contains)
      say(
        "tally \(tally.callbacks) \(tally.insertions) \(tally.deletions) \(tally.modifications) \(inRange) "
          + "\(tally.seqs.count - inRange) \(tally.repeated) \(tally.firstCallback) \(tally.lastCallback)")
    default:
      fail("bad command \(words) for mode \(mode)")
    }
  }
}
