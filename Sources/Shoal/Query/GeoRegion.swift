import Foundation

/// A geospatial shape as a query constant (the right side of `location IN %@` or
/// `GEOWITHIN`): the coordinates as given, for hashing and descriptions; `region()` validates
/// and prepares it for containment tests.
enum GeoShape: Hashable, Sendable, CustomStringConvertible {
  /// Points are (latitude, longitude, altitude) in degrees.
  typealias Point = GeoCoordinate

  case box(bottomLeft: Point, topRight: Point)
  case polygon(outerRing: [Point], holes: [[Point]])
  case circle(center: Point, radians: Double)

  /// The shape of a query argument, or nil when it is not a `GeoBox`, `GeoPolygon` or
  /// `GeoCircle`.
  init?(argument: Any?) {
    switch argument {
    case let box as GeoBox: self = box.shape
    case let polygon as GeoPolygon: self = polygon.shape
    case let circle as GeoCircle: self = circle.shape
    default: return nil
    }
  }

  /// As Realm Core prints it in messages: points `[longitude, latitude, altitude]`, a box as the
  /// polygon it is tested as.
  var description: String {
    func ring(_ points: [Point]) -> String { "{" + points.map(\.description).joined(separator: ", ") + "}" }
    switch self {
    case .box(let low, let high):
      return "GeoPolygon(" + ring(GeoShape.boxRing(low, high)) + ")"
    case .polygon(let outer, let holes):
      return "GeoPolygon(" + ([ring(outer)] + holes.map(ring)).joined(separator: ", ") + ")"
    case .circle(let center, let radians):
      return "GeoCircle(\(center), \(GeoCoordinate.format(radians)))"
    }
  }

  /// A box's corners as a closed ring: its edges are geodesics, as in Realm Core.
  private static func boxRing(_ low: Point, _ high: Point) -> [Point] {
    [
      low, Point(latitude: high.latitude, longitude: low.longitude), high,
      Point(latitude: low.latitude, longitude: high.longitude), low,
    ]
  }

  /// The shape validated and prepared for `GeoRegion.contains`; throws Realm Core's message
  /// (without the query's prefix) when it is not a valid region.
  func region() throws(GeoRegionError) -> GeoRegion {
    switch self {
    case .box(let low, let high):
      return .polygon(try GeoRegion.Polygon(outer: GeoShape.boxRing(low, high), holes: []))
    case .polygon(let outer, let holes):
      return .polygon(try GeoRegion.Polygon(outer: outer, holes: holes))
    case .circle(let center, let radians):
      guard radians >= 0, !radians.isNaN else {
        throw GeoRegionError("The radius of a circle must be a non-negative number")
      }
      return .circle(center: GeoVector(center), radians: radians)
    }
  }
}

/// Why a shape is not a valid region: Realm Core's text.
struct GeoRegionError: Error {
  let message: String
  init(_ message: String) { self.message = message }
}

/// A point in degrees, as shapes and stored locations give it.
struct GeoCoordinate: Hashable, Sendable, CustomStringConvertible {
  var latitude: Double
  var longitude: Double
  var altitude: Double = 0

  init(latitude: Double, longitude: Double, altitude: Double = 0) {
    self.latitude = latitude
    self.longitude = longitude
    self.altitude = altitude
  }

  init(_ point: GeoPoint) { self.init(latitude: point.latitude, longitude: point.longitude, altitude: point.altitude) }

  var isValid: Bool { (-90...90).contains(latitude) && (-180...180).contains(longitude) }

  /// `[longitude, latitude, altitude]`, numbers as C++ streams print them (6 significant digits).
  var description: String { "[\(Self.format(longitude)), \(Self.format(latitude)), \(Self.format(altitude))]" }

  static func format(_ value: Double) -> String { String(format: "%g", value) }
}

/// A point on the unit sphere.
struct GeoVector: Hashable, Sendable {
  var x: Double
  var y: Double
  var z: Double

  init(x: Double, y: Double, z: Double) {
    self.x = x
    self.y = y
    self.z = z
  }

  init(_ point: GeoCoordinate) {
    let lat = point.latitude * .pi / 180
    let lon = point.longitude * .pi / 180
    self.init(x: cos(lat) * cos(lon), y: cos(lat) * sin(lon), z: sin(lat))
  }

  static func - (a: GeoVector, b: GeoVector) -> GeoVector { GeoVector(x: a.x - b.x, y: a.y - b.y, z: a.z - b.z) }
  static func + (a: GeoVector, b: GeoVector) -> GeoVector { GeoVector(x: a.x + b.x, y: a.y + b.y, z: a.z + b.z) }
  static func * (a: GeoVector, s: Double) -> GeoVector { GeoVector(x: a.x * s, y: a.y * s, z: a.z * s) }
  func dot(_ b: GeoVector) -> Double { x * b.x + y * b.y + z * b.z }
  func cross(_ b: GeoVector) -> GeoVector {
    GeoVector(x: y * b.z - z * b.y, y: z * b.x - x * b.z, z: x * b.y - y * b.x)
  }
  var norm: Double { dot(self).squareRoot() }
  /// The unit vector in the same direction.
  var normalized: GeoVector { self * (1 / norm) }

  /// The angle between two unit vectors, in radians (accurate for small and large angles).
  func angle(to b: GeoVector) -> Double { atan2(cross(b).norm, dot(b)) }
}

/// A validated region on the sphere: a cap (circle), or polygons with geodesic edges whose
/// rings each enclose the smaller of the two regions they bound (as Realm Core normalises
/// them). Points on a boundary count as inside.
enum GeoRegion: Sendable {
  case circle(center: GeoVector, radians: Double)
  case polygon(Polygon)

  /// Whether the stored location at (`latitude`, `longitude`) lies in the region; false for
  /// coordinates out of range.
  func contains(latitude: Double, longitude: Double) -> Bool {
    let coordinate = GeoCoordinate(latitude: latitude, longitude: longitude)
    guard coordinate.isValid else { return false }
    let point = GeoVector(coordinate)
    switch self {
    case .circle(let center, let radians):
      return center.angle(to: point) <= radians
    case .polygon(let polygon):
      return polygon.contains(point)
    }
  }

  /// A closed ring of vertices, interior on the left (`orientation` +1) or on the right (-1)
  /// of the walk as seen from outside the sphere: whichever is smaller.
  struct Ring: Sendable {
    let vertices: [GeoVector]
    let orientation: Int

    /// `points` (closed: the last equals the first) as a ring: adjacent duplicates and the
    /// closing point dropped; at least 3 different vertices, no crossing edges.
    init(_ points: [GeoCoordinate], index: Int) throws(GeoRegionError) {
      guard !points.isEmpty else { throw GeoRegionError("Ring has no vertices") }
      if let first = points.first, let last = points.last,
        first.latitude != last.latitude || first.longitude != last.longitude
      {
        throw GeoRegionError("Ring is not closed, first vertex '\(first)' does not equal last vertex '\(last)'")
      }
      for point in points where !point.isValid {
        throw GeoRegionError(
          "Longitude/latitude is out of bounds, lng: \(GeoCoordinate.format(point.longitude)) lat: \(GeoCoordinate.format(point.latitude))"
        )
      }
      var vertices: [GeoVector] = []
      var coordinates: [GeoCoordinate] = []
      for point in points.dropLast() {
        let vector = GeoVector(point)
        if let previous = vertices.last, previous == vector { continue }
        vertices.append(vector)
        coordinates.append(point)
      }
      while vertices.count > 1, vertices.first == vertices.last {
        vertices.removeLast()
        coordinates.removeLast()
      }
      let unique = Set(vertices).count
      guard unique >= 3 else {
        throw GeoRegionError(
          "Ring \(index) must have at least 3 different vertices, \(unique) unique vertices were provided")
      }
      let n = vertices.count
      for i in 0..<n {
        for j in (i + 1)..<n where j != i + 1 && !(i == 0 && j == n - 1) {
          if Ring.arcsCross(vertices[i], vertices[(i + 1) % n], vertices[j], vertices[(j + 1) % n]) {
            // Realm Core's text, with the edges as [latitude, longitude] pairs.
            func edge(_ k: Int) -> String {
              func degrees(_ c: GeoCoordinate) -> String {
                "[" + String(format: "%.7f", c.latitude) + ", " + String(format: "%.7f", c.longitude) + "]"
              }
              return degrees(coordinates[k]) + "-" + degrees(coordinates[(k + 1) % n])
            }
            throw GeoRegionError(
              "Ring \(index) is not valid: 'Edges \(i) and \(j) cross. Edge locations in degrees: \(edge(i)) and \(edge(j))'"
            )
          }
        }
      }
      self.vertices = vertices
      // Gauss–Bonnet: the region on the left has area 2π minus the sum of the left turns, so
      // it is the smaller one when they add up to 0 or more.
      var turning = 0.0
      for i in 0..<n {
        let a = vertices[(i + n - 1) % n]
        let b = vertices[i]
        let c = vertices[(i + 1) % n]
        // Travelling from a to b, the direction at b is (a × b) × b; the way on, towards c.
        let incoming = a.cross(b).cross(b)
        let outgoing = c - b * c.dot(b)
        turning += atan2(incoming.cross(outgoing).dot(b), incoming.dot(outgoing))
      }
      orientation = turning >= 0 ? 1 : -1
    }

    /// The ring's edges, from each vertex to the next.
    var edges: [(GeoVector, GeoVector)] {
      vertices.indices.map { (vertices[$0], vertices[($0 + 1) % vertices.count]) }
    }

    /// Whether the geodesic arcs ab and cd cross at a point inside both.
    static func arcsCross(_ a: GeoVector, _ b: GeoVector, _ c: GeoVector, _ d: GeoVector) -> Bool {
      let n1 = a.cross(b)
      let n2 = c.cross(d)
      let sc = n1.dot(c)
      let sd = n1.dot(d)
      let sa = n2.dot(a)
      let sb = n2.dot(b)
      guard sc * sd < 0, sa * sb < 0 else { return false }
      // Where each arc meets the other's great circle; they cross when that is one point.
      let x = a + (b - a) * (sa / (sa - sb))
      let y = c + (d - c) * (sc / (sc - sd))
      return x.dot(y) > 0
    }

    /// How many times the ring winds around `point` (counter-clockwise seen from outside is
    /// positive); nil when the point is on the ring.
    func winding(around point: GeoVector) -> Int? {
      var total = 0.0
      let tangents = vertices.map { $0 - point * $0.dot(point) }
      for i in tangents.indices {
        let a = tangents[i]
        let b = tangents[(i + 1) % tangents.count]
        if a.norm < 1e-12 { return nil }
        let angle = atan2(a.cross(b).dot(point), a.dot(b))
        if abs(abs(angle) - .pi) < 1e-12 { return nil }
        total += angle
      }
      return Int((total / (2 * .pi)).rounded())
    }

    /// Whether `point` lies in the ring's (smaller) region or on the ring.
    func contains(_ point: GeoVector) -> Bool {
      guard let winding = winding(around: point) else { return true }
      // Seen from a point whose antipode is inside, the ring winds the other way round.
      return winding == orientation
    }
  }

  /// An exterior ring and holes inside it.
  struct Polygon: Sendable {
    let outer: Ring
    let holes: [Ring]

    /// Validates as Realm Core (S2) does, in its order: each ring, then edges two rings share,
    /// then holes inside holes, then holes that are not inside the exterior ring.
    init(outer: [GeoCoordinate], holes: [[GeoCoordinate]]) throws(GeoRegionError) {
      let exterior = try Ring(outer, index: 0)
      var rings = [exterior]
      for (offset, points) in holes.enumerated() { rings.append(try Ring(points, index: offset + 1)) }
      // An edge of a later ring that is an edge of an earlier one, either way round.
      for later in rings.indices.dropFirst() {
        for earlier in 0..<later {
          for (i, edge) in rings[later].edges.enumerated() {
            if let j = rings[earlier].edges.firstIndex(where: {
              ($0.0 == edge.0 && $0.1 == edge.1) || ($0.0 == edge.1 && $0.1 == edge.0)
            }) {
              throw GeoRegionError(
                "Polygon isn't valid: 'Duplicate edge: ring \(later), edge \(i) and ring \(earlier), edge \(j)'")
            }
          }
        }
      }
      // A hole inside another hole.
      for later in rings.indices.dropFirst(2) {
        let nested = (1..<later).contains { earlier in
          rings[later].vertices.allSatisfy { rings[earlier].contains($0) }
        }
        if nested { throw GeoRegionError("Polygon interior rings cannot be nested: \(later)") }
      }
      var inner: [Ring] = []
      for (offset, hole) in rings.dropFirst().enumerated() {
        let n = exterior.vertices.count
        let m = hole.vertices.count
        let crosses = (0..<n).contains { i in
          (0..<m).contains { j in
            Ring.arcsCross(
              exterior.vertices[i], exterior.vertices[(i + 1) % n], hole.vertices[j], hole.vertices[(j + 1) % m])
          }
        }
        // A hole edge running along the exterior ring is not inside it either.
        let alongExterior = hole.edges.contains { edge in
          exterior.winding(around: edge.0) == nil && exterior.winding(around: edge.1) == nil
            && exterior.winding(around: (edge.0 + edge.1).normalized) == nil
        }
        if crosses || alongExterior || !hole.vertices.allSatisfy(exterior.contains) {
          throw GeoRegionError(
            "Secondary ring \(offset + 1) not contained by first exterior ring - secondary rings must be holes in the first ring"
          )
        }
        inner.append(hole)
      }
      self.outer = exterior
      self.holes = inner
    }

    func contains(_ point: GeoVector) -> Bool {
      guard outer.contains(point) else { return false }
      // A point on a hole's ring stays inside the polygon.
      return !holes.contains { hole in (hole.winding(around: point) ?? 0) == hole.orientation }
    }
  }
}
