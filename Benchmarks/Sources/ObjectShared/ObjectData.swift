// The objects both sides store, and the lookups and queries both run: generated once per
// process, deterministically, so Shoal and GRDB hold, read and query exactly the same values.

import Foundation

public struct BenchError: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// SplitMix64 (as in BenchEngines; this target does not link BenchEngines, whose CSQLite
/// module would meet GRDB's own SQLite module here).
struct SplitMix64 {
  var state: UInt64

  init(seed: UInt64) { state = seed }

  static func mix(_ value: UInt64) -> UInt64 {
    var z = value
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    return SplitMix64.mix(state)
  }

  mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

public enum ObjectShape {
  /// Objects inserted in the one write transaction of the insert benchmark (and held by the
  /// fixture the other benchmarks read).
  public static let objectCount = 100_000
  /// Distinct `category` values: about objectCount / categoryCount objects each.
  public static let categoryCount = 100
  /// Primary-key lookups per iteration.
  public static let lookupCount = 10_000
  /// Equality queries on `category` per iteration, each of a different category.
  public static let categoryQueryCount = 10
  /// Range queries on `price` (sorted by price) per iteration, each of a different range.
  public static let rangeQueryCount = 5
  /// Prices are whole cents in [0, maxPrice); each range spans rangeWidth, about 1% of them.
  public static let maxPrice = 1_000.0
  public static let rangeWidth = 10.0
  /// Range queries on the indexed `createdAt` (sorted by it) per iteration, each spanning the
  /// creation times of `dateRangeObjects` consecutive objects (about 1% of them).
  public static let dateRangeQueryCount = 5
  public static let dateRangeObjects = 1_000
}

/// Words for the names (text-like, as real names are).
let nameWords = """
  red green blue black white small large old new quick slow bright dark round flat soft hard \
  warm cold light heavy long short thin thick clean plain fancy simple classic modern tiny giant \
  lamp chair table shelf mug plate bowl knife spoon fork glass bottle jar box bag coat hat shoe \
  sock shirt scarf glove ring watch pen pencil book card map clock bell key lock rope net kite
  """.split(separator: " ").map(String.init)

/// The sum of whole cents of the prices read: what both sides compute from the objects they read.
@inline(__always) public func cents(_ price: Double) -> Int { Int((price * 100).rounded()) }

/// What a pass of queries read: how many objects and the sum of their prices in cents.
public struct QueryTally: Equatable, Sendable, CustomStringConvertible {
  public var count = 0
  public var cents = 0

  public init() {}

  public mutating func add(_ price: Double) {
    count += 1
    cents &+= ObjectShared.cents(price)
  }

  public var description: String { "\(count) objects, \(cents) cents" }
}

/// The 100k objects in insertion order (ascending id), and the lookups and queries.
public final class ObjectData: Sendable {
  public let ids: [Int]
  public let categories: [String]
  public let prices: [Double]
  public let names: [String]
  public let createdAt: [Date]

  /// Random existing ids (with repeats) for the lookups, and the cents they sum to.
  public let lookupIDs: [Int]
  public let expectedLookupCents: Int
  /// The categories queried, and what each query reads.
  public let queriedCategories: [String]
  public let expectedCategoryTallies: [QueryTally]
  /// The price ranges queried (closed), and what each query reads.
  public let priceRanges: [ClosedRange<Double>]
  public let expectedRangeTallies: [QueryTally]
  /// The creation-time ranges queried (closed), and what each query reads.
  public let dateRanges: [ClosedRange<Date>]
  public let expectedDateRangeTallies: [QueryTally]

  public static func category(_ k: Int) -> String { "category-" + (k < 10 ? "0" : "") + String(k) }

  public init(count: Int = ObjectShape.objectCount) {
    var ids: [Int] = []
    var categories: [String] = []
    var prices: [Double] = []
    var names: [String] = []
    var createdAt: [Date] = []
    var rng = SplitMix64(seed: 0x0B1E_C75E_ED00_0001)
    for i in 0..<count {
      ids.append(i)
      categories.append(Self.category(rng.below(ObjectShape.categoryCount)))
      prices.append(Double(rng.below(Int(ObjectShape.maxPrice) * 100)) / 100)
      let words = (0..<3).map { _ in nameWords[rng.below(nameWords.count)] }
      names.append(words.joined(separator: " ") + " #" + String(i))
      // Whole milliseconds, which every store keeps exactly; a minute or so apart.
      createdAt.append(Date(timeIntervalSince1970: 1_700_000_000 + Double(i * 61_237) / 1_000))
    }
    self.ids = ids
    self.categories = categories
    self.prices = prices
    self.names = names
    self.createdAt = createdAt

    var lookups = SplitMix64(seed: 0x0000_1D5E_ED00_0002)
    lookupIDs = (0..<ObjectShape.lookupCount).map { _ in lookups.below(count) }
    expectedLookupCents = lookupIDs.reduce(0) { $0 &+ cents(prices[$1]) }

    let step = ObjectShape.categoryCount / ObjectShape.categoryQueryCount
    queriedCategories = (0..<ObjectShape.categoryQueryCount).map { Self.category($0 * step + 3) }
    expectedCategoryTallies = queriedCategories.map { category in
      var tally = QueryTally()
      for i in 0..<count where categories[i] == category { tally.add(prices[i]) }
      return tally
    }

    var ranges = SplitMix64(seed: 0x0000_5A6E_ED00_0003)
    priceRanges = (0..<ObjectShape.rangeQueryCount).map { _ in
      let low = Double(ranges.below(Int(ObjectShape.maxPrice - ObjectShape.rangeWidth) * 100)) / 100
      return low...(low + ObjectShape.rangeWidth)
    }
    expectedRangeTallies = priceRanges.map { range in
      var tally = QueryTally()
      for i in 0..<count where range.contains(prices[i]) { tally.add(prices[i]) }
      return tally
    }

    var dates = SplitMix64(seed: 0x0000_DA7E_ED00_0004)
    dateRanges = (0..<ObjectShape.dateRangeQueryCount).map { _ in
      let first = dates.below(max(count - ObjectShape.dateRangeObjects, 1))
      return createdAt[first]...createdAt[min(first + ObjectShape.dateRangeObjects, count) - 1]
    }
    expectedDateRangeTallies = dateRanges.map { range in
      var tally = QueryTally()
      for i in 0..<count where range.contains(createdAt[i]) { tally.add(prices[i]) }
      return tally
    }
  }
}

/// Generated on first use (each benchmark runs in a process of its own).
public let objectData = ObjectData()
