import Foundation

/// The shapes a geospatial query (`geoWithin`, `IN` in a predicate) tests locations against:
/// `GeoBox`, `GeoPolygon` and `GeoCircle` (RealmSwift's `RLMGeospatial`).
public protocol RLMGeospatial: Sendable {}

/// A point given by latitude and longitude in degrees (RealmSwift's `GeoPoint`).
///
/// Points are not stored as such: store a location as an embedded object with a `type`
/// String property holding "Point" and a `coordinates: List<Double>` holding longitude,
/// latitude (and optionally altitude), the GeoJSON shape; queries test those objects. A point
/// builds the shapes queries take. Altitude takes no part in any query.
public final class GeoPoint: Sendable, Hashable, CustomStringConvertible {
  /// Latitude in degrees, from -90 to 90.
  public let latitude: Double
  /// Longitude in degrees, from -180 to 180.
  public let longitude: Double
  /// Altitude, 0 or more.
  public let altitude: Double

  /// A point, or nil when latitude is outside -90…90 or longitude outside -180…180.
  public convenience init?(latitude: Double, longitude: Double) {
    self.init(latitude: latitude, longitude: longitude, altitude: 0)
  }

  /// A point, or nil when latitude is outside -90…90, longitude outside -180…180, or altitude
  /// is negative.
  public init?(latitude: Double, longitude: Double, altitude: Double) {
    guard (-90...90).contains(latitude), (-180...180).contains(longitude), altitude >= 0 else { return nil }
    self.latitude = latitude
    self.longitude = longitude
    self.altitude = altitude
  }

  /// Returns true when latitude, longitude and altitude are all equal.
  public static func == (lhs: GeoPoint, rhs: GeoPoint) -> Bool {
    lhs.latitude == rhs.latitude && lhs.longitude == rhs.longitude && lhs.altitude == rhs.altitude
  }

  /// Hashes latitude, longitude and altitude.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(latitude)
    hasher.combine(longitude)
    hasher.combine(altitude)
  }

  /// `[longitude, latitude, altitude]`, as queries print it.
  public var description: String { GeoCoordinate(self).description }
}

/// A rectangle given by its bottom-left and top-right corners, for `geoWithin` queries
/// (RealmSwift's `GeoBox`). Its edges are geodesics between the four corners, as in Realm.
public final class GeoBox: RLMGeospatial, Hashable, CustomStringConvertible {
  /// The bottom-left (south-west) corner.
  public let bottomLeft: GeoPoint
  /// The top-right (north-east) corner.
  public let topRight: GeoPoint

  /// A box from its corners.
  public init(bottomLeft: GeoPoint, topRight: GeoPoint) {
    self.bottomLeft = bottomLeft
    self.topRight = topRight
  }

  /// A box from its corners as (latitude, longitude) pairs; nil when a corner is not a valid
  /// point.
  public convenience init?(bottomLeft: (Double, Double), topRight: (Double, Double)) {
    guard let low = GeoPoint(latitude: bottomLeft.0, longitude: bottomLeft.1),
      let high = GeoPoint(latitude: topRight.0, longitude: topRight.1)
    else { return nil }
    self.init(bottomLeft: low, topRight: high)
  }

  /// Returns true when both corners are equal.
  public static func == (lhs: GeoBox, rhs: GeoBox) -> Bool {
    lhs.bottomLeft == rhs.bottomLeft && lhs.topRight == rhs.topRight
  }

  /// Hashes both corners.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(bottomLeft)
    hasher.combine(topRight)
  }

  var shape: GeoShape { .box(bottomLeft: GeoCoordinate(bottomLeft), topRight: GeoCoordinate(topRight)) }

  /// The box as the polygon queries test it as: `GeoPolygon({…})` with its four corners as a closed ring,
  /// each `[longitude, latitude, altitude]`.
  public var description: String { shape.description }
}

/// A polygon for `geoWithin` queries (RealmSwift's `GeoPolygon`): an outer ring and holes
/// inside it, each ring closed (its last point equal to its first) with at least three
/// different points. Edges are geodesics; each ring encloses the smaller of the two regions it
/// bounds. A query whose polygon crosses itself, or whose holes leave the outer ring, fails
/// with Realm's message.
public final class GeoPolygon: RLMGeospatial, Hashable, CustomStringConvertible {
  /// The outer ring.
  public let outerRing: [GeoPoint]
  /// The holes, if any.
  public let holes: [[GeoPoint]]?

  /// A polygon from its outer ring; nil when the ring has 3 points or fewer or is not closed.
  public convenience init?(outerRing: [GeoPoint]) {
    self.init(outerRing: outerRing, holes: nil)
  }

  /// A polygon from its outer ring and holes; nil when a ring has 3 points or fewer or is not
  /// closed (its last point must equal its first).
  public init?(outerRing: [GeoPoint], holes: [[GeoPoint]]?) {
    for ring in [outerRing] + (holes ?? []) {
      guard ring.count > 3, let first = ring.first, let last = ring.last, first == last else { return nil }
    }
    self.outerRing = outerRing
    self.holes = holes
  }

  /// A polygon from (latitude, longitude) pairs; nil when a point is not valid, a ring has 3
  /// points or fewer, or is not closed.
  public convenience init?(outerRing: [(Double, Double)], holes: [[(Double, Double)]] = []) {
    func points(_ pairs: [(Double, Double)]) -> [GeoPoint]? {
      var points: [GeoPoint] = []
      for pair in pairs {
        guard let point = GeoPoint(latitude: pair.0, longitude: pair.1) else { return nil }
        points.append(point)
      }
      return points
    }
    guard let outer = points(outerRing) else { return nil }
    var inner: [[GeoPoint]] = []
    for hole in holes {
      guard let ring = points(hole) else { return nil }
      inner.append(ring)
    }
    self.init(outerRing: outer, holes: inner)
  }

  /// A polygon from (latitude, longitude) pairs, holes given one after another.
  public convenience init?(outerRing: [(Double, Double)], holes: [(Double, Double)]...) {
    self.init(outerRing: outerRing, holes: holes)
  }

  /// Returns true when the outer rings and the holes are equal (no holes equals an empty list of holes).
  public static func == (lhs: GeoPolygon, rhs: GeoPolygon) -> Bool {
    lhs.outerRing == rhs.outerRing && (lhs.holes ?? []) == (rhs.holes ?? [])
  }

  /// Hashes the outer ring and the holes.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(outerRing)
    hasher.combine(holes ?? [])
  }

  var shape: GeoShape {
    .polygon(outerRing: outerRing.map(GeoCoordinate.init), holes: (holes ?? []).map { $0.map(GeoCoordinate.init) })
  }

  /// `GeoPolygon({outer ring}, {hole}, …)`, each point `[longitude, latitude, altitude]`, as queries print it.
  public var description: String { shape.description }
}

/// A circle (a spherical cap) for `geoWithin` queries (RealmSwift's `GeoCircle`): the points
/// whose great-circle distance from `center` is at most the radius.
public final class GeoCircle: RLMGeospatial, Hashable, CustomStringConvertible {
  /// The center.
  public let center: GeoPoint
  /// The radius in radians (of the unit sphere: a distance divided by the Earth's radius).
  public let radians: Double

  /// A circle from its center and radius in radians; nil when the radius is negative or NaN.
  public init?(center: GeoPoint, radiusInRadians radians: Double) {
    guard radians >= 0 else { return nil }
    self.center = center
    self.radians = radians
  }

  /// A circle from its center and radius.
  public init(center: GeoPoint, radius: Distance) {
    self.center = center
    self.radians = radius.radians
  }

  /// A circle from its center as (latitude, longitude) and radius in radians; nil when the
  /// center is not a valid point or the radius is negative.
  public convenience init?(center: (Double, Double), radiusInRadians: Double) {
    guard let point = GeoPoint(latitude: center.0, longitude: center.1) else { return nil }
    self.init(center: point, radiusInRadians: radiusInRadians)
  }

  /// A circle from its center as (latitude, longitude) and radius; nil when the center is not a
  /// valid point.
  public convenience init?(center: (Double, Double), radius: Distance) {
    guard let point = GeoPoint(latitude: center.0, longitude: center.1) else { return nil }
    self.init(center: point, radius: radius)
  }

  /// Returns true when the centers and the radii are equal.
  public static func == (lhs: GeoCircle, rhs: GeoCircle) -> Bool {
    lhs.center == rhs.center && lhs.radians == rhs.radians
  }

  /// Hashes the center and the radius.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(center)
    hasher.combine(radians)
  }

  var shape: GeoShape { .circle(center: GeoCoordinate(center), radians: radians) }

  /// `GeoCircle([longitude, latitude, altitude], radians)`, as queries print it.
  public var description: String { shape.description }
}

/// A distance on the Earth's surface, kept in radians (RealmSwift's `Distance`), for the radius
/// of a `GeoCircle`. Kilometres and miles convert with Realm's Earth radius, 6,378.1 km.
public final class Distance: Sendable, Hashable {
  /// The distance in radians.
  public let radians: Double

  /// The Earth's radius Realm converts with, in meters.
  static let earthRadiusMeters = 6_378_100.0

  private init?(checked radians: Double) {
    guard radians >= 0 else { return nil }
    self.radians = radians
  }

  /// A distance in kilometres; nil when negative.
  public static func kilometers(_ kilometers: Double) -> Distance? {
    Distance(checked: kilometers * 1000 / earthRadiusMeters)
  }

  /// A distance in miles; nil when negative.
  public static func miles(_ miles: Double) -> Distance? { Distance(checked: miles * 1609.344 / earthRadiusMeters) }

  /// A distance in degrees of arc; nil when negative.
  public static func degrees(_ degrees: Double) -> Distance? { Distance(checked: degrees * .pi / 180) }

  /// A distance in radians; nil when negative.
  public static func radians(_ radians: Double) -> Distance? { Distance(checked: radians) }

  /// The distance in kilometres.
  public func asKilometers() -> Double { radians * Distance.earthRadiusMeters / 1000 }

  /// The distance in miles.
  public func asMiles() -> Double { radians * Distance.earthRadiusMeters / 1609.344 }

  /// The distance in degrees of arc.
  public func asDegrees() -> Double { radians * 180 / .pi }

  /// Returns true when both are the same number of radians.
  public static func == (lhs: Distance, rhs: Distance) -> Bool { lhs.radians == rhs.radians }

  /// Hashes the radians.
  public func hash(into hasher: inout Hasher) { hasher.combine(radians) }
}

extension Query where T: OptionalProtocol, T.Wrapped: EmbeddedObject {
  /// Whether the location (an embedded object with `type` "Point" and `coordinates`
  /// [longitude, latitude]) lies within `value`: a `GeoBox`, `GeoPolygon` or `GeoCircle`.
  /// Objects without a location, or with one not in that shape, never match.
  public func geoWithin<U: RLMGeospatial>(_ value: U) -> Query<Bool> {
    Query<Bool>(node: .comparison(.in, node, .constant(value), []))
  }
}
