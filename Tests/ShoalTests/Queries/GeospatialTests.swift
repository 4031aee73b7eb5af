import Foundation
import Testing

@testable import Shoal

/// A GeoJSON point, as RealmSwift recommends storing locations.
final class GeoLocation: EmbeddedObject {
  @Persisted var coordinates: List<Double>
  @Persisted var type = "Point"

  convenience init(_ latitude: Double, _ longitude: Double) {
    self.init()
    coordinates.append(objectsIn: [longitude, latitude])
  }
}

final class GeoPerson: Object {
  @Persisted var name = ""
  @Persisted var location: GeoLocation?
  @Persisted var topLevel: GeoTopLevelPoint?
  @Persisted var wrongShape: GeoWrongShape?
}

/// A point class that is not embedded: geospatial queries refuse it.
final class GeoTopLevelPoint: Object {
  @Persisted var coordinates: List<Double>
  @Persisted var type = "Point"
}

/// An embedded class without GeoJSON's `coordinates` list.
final class GeoWrongShape: EmbeddedObject {
  @Persisted var type = "Point"
  @Persisted var latitude = 0.0
}

@Suite("Geospatial queries: GeoBox, GeoPolygon, GeoCircle, Distance")
struct GeospatialTests {
  private func configuration() -> Realm.Configuration {
    var configuration = memoryConfiguration()
    configuration.objectTypes = [GeoPerson.self, GeoLocation.self, GeoTopLevelPoint.self, GeoWrongShape.self]
    return configuration
  }

  /// Copenhagen, Prague, Sydney, a point near the antimeridian, and nobody's location.
  private func populated() throws -> Realm {
    let realm = try Realm(configuration: configuration())
    try realm.write {
      for (name, place) in [
        ("Maria", (55.6761, 12.5683)), ("Tomas", (50.0755, 14.4378)), ("Olivia", (-33.8688, 151.2093)),
        ("Fiji", (-17.7134, 178.065)),
      ] {
        let person = GeoPerson()
        person.name = name
        person.location = GeoLocation(place.0, place.1)
        realm.add(person)
      }
      let manuela = GeoPerson()
      manuela.name = "Manuela"
      realm.add(manuela)
    }
    return realm
  }

  private func names(_ results: Results<GeoPerson>) -> [String] { results.map(\.name).sorted() }

  /// All three ways of asking: the type-safe query, `IN` and `GEOWITHIN` in a predicate.
  private func within(_ realm: Realm, _ shape: some RLMGeospatial) -> [String] {
    let typeSafe = names(realm.objects(GeoPerson.self).where { $0.location.geoWithin(shape) })
    #expect(names(realm.objects(GeoPerson.self).filter("location IN %@", shape)) == typeSafe)
    #expect(names(realm.objects(GeoPerson.self).filter("location GEOWITHIN $0", shape)) == typeSafe)
    return typeSafe
  }

  @Test func pointsDistancesAndShapesValidateLikeRealmSwift() throws {
    #expect(GeoPoint(latitude: 90, longitude: 180) != nil)
    #expect(GeoPoint(latitude: 90.000000001, longitude: 0) == nil)
    #expect(GeoPoint(latitude: 0, longitude: -180.1) == nil)
    #expect(GeoPoint(latitude: .nan, longitude: 0) == nil)
    #expect(GeoPoint(latitude: 1, longitude: 2, altitude: -1) == nil)
    let point = try #require(GeoPoint(latitude: 55.5, longitude: 12.25, altitude: 3))
    #expect(point.latitude == 55.5 && point.longitude == 12.25 && point.altitude == 3)
    #expect(point == GeoPoint(latitude: 55.5, longitude: 12.25, altitude: 3))
    #expect(point != GeoPoint(latitude: 55.5, longitude: 12.25))
    #expect(point.description == "[12.25, 55.5, 3]")

    #expect(try #require(Distance.kilometers(6378.1)).radians == 1)
    #expect(abs(try #require(Distance.miles(1)).radians - 1609.344 / 6_378_100) < 1e-15)
    #expect(try #require(Distance.degrees(180)).radians == .pi)
    #expect(try #require(Distance.radians(0.5)).asDegrees() == 0.5 * 180 / .pi)
    #expect(abs(try #require(Distance.kilometers(100)).asKilometers() - 100) < 1e-9)
    #expect(abs(try #require(Distance.miles(100)).asMiles() - 100) < 1e-9)
    #expect(Distance.kilometers(-1) == nil && Distance.miles(.nan) == nil && Distance.radians(-0.1) == nil)

    let box = try #require(GeoBox(bottomLeft: (55, 12), topRight: (56, 13)))
    #expect(box.bottomLeft == GeoPoint(latitude: 55, longitude: 12) && box.topRight.longitude == 13)
    #expect(GeoBox(bottomLeft: (95, 0), topRight: (0, 0)) == nil)

    #expect(GeoPolygon(outerRing: [(0, 0), (1, 1), (0, 0)]) == nil, "3 points or fewer")
    #expect(GeoPolygon(outerRing: [(0, 0), (1, 1), (1, 0), (0, 1)]) == nil, "not closed")
    let polygon = try #require(
      GeoPolygon(outerRing: [(0, 0), (0, 10), (10, 10), (0, 0)], holes: [(1, 2), (2, 3), (1, 3), (1, 2)]))
    #expect(polygon.outerRing.count == 4 && polygon.holes?.count == 1)
    #expect(polygon.outerRing[1] == GeoPoint(latitude: 0, longitude: 10))
    #expect(GeoPolygon(outerRing: [(0, 0), (0, 10), (10, 10), (0, 0)], holes: [[(1, 2), (2, 3), (1, 2)]]) == nil)

    #expect(GeoCircle(center: (0, 0), radiusInRadians: -1) == nil)
    #expect(GeoCircle(center: (0, 0), radiusInRadians: .nan) == nil)
    let circle = GeoCircle(center: point, radius: try #require(Distance.kilometers(10)))
    #expect(circle.radians == 10_000 / 6_378_100.0 && circle.center == point)
    #expect(try #require(GeoCircle(center: (1, 2), radiusInRadians: 0.25)).description == "GeoCircle([2, 1, 0], 0.25)")
  }

  @Test func boxesCirclesAndPolygonsSelectTheLocationsInside() throws {
    let realm = try populated()
    // Around Copenhagen only; around both; the objects without a location never match.
    #expect(within(realm, try #require(GeoBox(bottomLeft: (55, 12), topRight: (56, 13)))) == ["Maria"])
    #expect(within(realm, try #require(GeoBox(bottomLeft: (49, 10), topRight: (57, 15)))) == ["Maria", "Tomas"])
    // Copenhagen to Prague is about 633 km along the great circle.
    let copenhagen = try #require(GeoPoint(latitude: 55.6761, longitude: 12.5683))
    #expect(within(realm, GeoCircle(center: copenhagen, radius: try #require(Distance.kilometers(600)))) == ["Maria"])
    #expect(
      within(realm, GeoCircle(center: copenhagen, radius: try #require(Distance.kilometers(660)))) == [
        "Maria", "Tomas",
      ])
    #expect(within(realm, GeoCircle(center: copenhagen, radius: try #require(Distance.kilometers(0)))) == ["Maria"])
    // Europe with a hole around Copenhagen.
    let europe: [(Double, Double)] = [(35, -10), (35, 30), (70, 30), (70, -10), (35, -10)]
    let hole: [(Double, Double)] = [(55, 12), (55, 13), (56, 13), (56, 12), (55, 12)]
    #expect(within(realm, try #require(GeoPolygon(outerRing: europe))) == ["Maria", "Tomas"])
    #expect(within(realm, try #require(GeoPolygon(outerRing: europe, holes: [hole]))) == ["Tomas"])
    // Either direction round a ring means its smaller region, as Realm normalises rings.
    #expect(
      within(realm, try #require(GeoPolygon(outerRing: europe.reversed(), holes: [hole.reversed()]))) == ["Tomas"])
    // A box across the antimeridian holds the point near it, not the rest of the world.
    #expect(within(realm, try #require(GeoBox(bottomLeft: (-20, 170), topRight: (-10, -170)))) == ["Fiji"])
    // A small box seen from its antipode: Sydney's antipode region does not count.
    let antipodes = try #require(GeoBox(bottomLeft: (33, -29.5), topRight: (35, -28)))
    #expect(within(realm, antipodes) == [])
  }

  /// A circle contains exactly the points within its great-circle distance (haversine, computed
  /// here independently) for random centers, radii and points.
  @Test func circlesAgreeWithTheHaversineDistance() throws {
    var random = SystemRandomNumberGenerator()
    for _ in 0..<40 {
      let center = GeoCoordinate(
        latitude: .random(in: -89...89, using: &random), longitude: .random(in: -180...180, using: &random))
      let radians = Double.random(in: 0...2, using: &random)
      let region = try GeoShape.circle(center: center, radians: radians).region()
      for _ in 0..<200 {
        let lat = Double.random(in: -90...90, using: &random)
        let lon = Double.random(in: -180...180, using: &random)
        let φ1 = center.latitude * .pi / 180
        let φ2 = lat * .pi / 180
        let Δφ = φ2 - φ1
        let Δλ = (lon - center.longitude) * .pi / 180
        let h = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        let distance = 2 * atan2(h.squareRoot(), (1 - h).squareRoot())
        guard abs(distance - radians) > 1e-9 else { continue }
        #expect(region.contains(latitude: lat, longitude: lon) == (distance < radians))
      }
    }
  }

  /// Polygons away from poles and the antimeridian: a point well inside a convex ring is in
  /// it, and well outside is not, whichever way round the ring runs and wherever it lies.
  @Test func polygonsContainTheirInteriorInBothDirections() throws {
    var random = SystemRandomNumberGenerator()
    for _ in 0..<50 {
      let lat = Double.random(in: -60...60, using: &random)
      let lon = Double.random(in: -150...150, using: &random)
      let size = Double.random(in: 0.01...10, using: &random)
      var ring = (0..<7).map { k in
        let angle = Double(k) * 2 * .pi / 7
        return GeoCoordinate(latitude: lat + size * sin(angle), longitude: lon + size * cos(angle))
      }
      ring.append(ring[0])
      for points in [ring, ring.reversed()] {
        let region = try GeoShape.polygon(outerRing: points, holes: []).region()
        #expect(region.contains(latitude: lat, longitude: lon))
        #expect(region.contains(latitude: lat + size * 0.3, longitude: lon - size * 0.3))
        #expect(!region.contains(latitude: lat + size * 1.5, longitude: lon))
        #expect(!region.contains(latitude: lat, longitude: lon - size * 1.5))
        // The antipode of the center is far outside.
        #expect(!region.contains(latitude: -lat, longitude: lon > 0 ? lon - 180 : lon + 180))
      }
    }
  }

  @Test func locationsNotShapedAsPointsNeverMatch() throws {
    let realm = try populated()
    let everywhere = try #require(GeoCircle(center: (0, 0), radiusInRadians: .pi))
    #expect(within(realm, everywhere) == ["Fiji", "Maria", "Olivia", "Tomas"])
    try realm.write {
      let people = realm.objects(GeoPerson.self)
      people.first { $0.name == "Maria" }?.location?.type = "Polygon"
      people.first { $0.name == "Tomas" }?.location?.coordinates.removeLast()
      people.first { $0.name == "Olivia" }?.location?.type = "point"
    }
    #expect(within(realm, everywhere) == ["Fiji", "Olivia"], "any case of 'point'; two coordinates at least")
  }

  @Test func invalidShapesAndPropertiesAreClearErrors() throws {
    let realm = try populated()
    func error(_ format: String, _ arguments: Any...) -> String? {
      do {
        _ = try CompiledQuery(
          className: "GeoPerson", predicate: format, arguments: arguments, context: realm.core.queryContext)
        return nil
      } catch {
        return "\(error)"
      }
    }
    // Realm Core's texts: crossing edges with their locations, a duplicate edge, nested holes,
    // a hole along the exterior ring.
    let crossing = try #require(
      GeoPolygon(outerRing: [
        GeoPoint(latitude: 50, longitude: -50)!, GeoPoint(latitude: 55, longitude: 55)!,
        GeoPoint(latitude: -50, longitude: 50)!, GeoPoint(latitude: 70, longitude: -25)!,
        GeoPoint(latitude: 50, longitude: -50)!,
      ]))
    #expect(
      try #require(error("location IN %@", crossing)).contains(
        "'Ring 0 is not valid: 'Edges 0 and 2 cross. Edge locations in degrees: [50.0000000, -50.0000000]-[55.0000000, "
          + "55.0000000] and [-50.0000000, 50.0000000]-[70.0000000, -25.0000000]''"))
    let sharedEdge = try #require(
      GeoPolygon(
        outerRing: [(50, -80), (60, 20), (20, 20), (-80, -80), (50, -80)],
        holes: [[(40.0096192, -75.5175781), (60, 20), (20, 20), (-75.5175781, -75.5175781), (40.0096192, -75.5175781)]])
    )
    #expect(
      try #require(error("location IN %@", sharedEdge)).contains(
        "'Polygon isn't valid: 'Duplicate edge: ring 1, edge 1 and ring 0, edge 1''"))
    let nested = try #require(
      GeoPolygon(
        outerRing: [(50, -80), (62, 22), (22, 22), (-80, -80), (50, -80)],
        holes: [
          [(45, -77), (61, 21), (21, 21), (-77, -77), (45, -77)],
          [(40.0096192, -75.5175780), (60, 20), (20, 20), (-75.5175781, -75.5175781), (40.0096192, -75.5175780)],
        ]))
    #expect(try #require(error("location IN %@", nested)).contains("'Polygon interior rings cannot be nested: 2"))
    let alongTheEdge = try #require(
      GeoPolygon(
        outerRing: [(0, 0), (0, 1), (1, 1), (1, 0), (0, 0)],
        holes: [[(0, 0.1), (0.5, 0.1), (0.5, 0.5), (0, 0.5), (0, 0.1)]]))
    #expect(try #require(error("location IN %@", alongTheEdge)).contains("Secondary ring 1 not contained"))
    let bowtie = try #require(GeoPolygon(outerRing: [(0, 0), (10, 10), (10, 0), (0, 10), (0, 0)]))
    let bowtieError = try #require(error("location IN %@", bowtie))
    #expect(bowtieError.contains("Invalid region in GEOWITHIN query for parameter 'GeoPolygon({[0, 0, 0], [10, 10, 0]"))
    #expect(bowtieError.contains("Ring 0 is not valid: 'Edges"))
    let outside = try #require(
      GeoPolygon(
        outerRing: [(0, 0), (0, 10), (10, 10), (10, 0), (0, 0)], holes: [(20, 20), (20, 21), (21, 21), (20, 20)]))
    #expect(
      try #require(error("location IN %@", outside)).contains(
        "Secondary ring 1 not contained by first exterior ring - secondary rings must be holes in the first ring"))
    let duplicate = try #require(GeoPolygon(outerRing: [(0, 0), (1, 1), (1, 1), (0, 0)]))
    #expect(
      try #require(error("location IN %@", duplicate)).contains(
        "Ring 0 must have at least 3 different vertices, 2 unique vertices were provided"))
    let circle = try #require(GeoCircle(center: (0, 0), radiusInRadians: 0.5))
    #expect(
      try #require(error("topLevel IN %@", circle)).contains(
        "A GEOWITHIN query can only operate on a link to an embedded class but 'GeoTopLevelPoint' is at the top level"))
    #expect(
      try #require(error("wrongShape IN %@", circle)).contains(
        "Query 'wrongShape GEOWITHIN GeoCircle([0, 0, 0], 0.5)' links to data in the wrong format for a geoWithin query"
      ))
    #expect(
      try #require(error("name IN %@", circle)).contains("links to data in the wrong format for a geoWithin query"))
    #expect(
      try #require(error("location GEOWITHIN nil")).contains(
        "NULL cannot be used on the right hand side of a GEOWITHIN query"))
    #expect(error("location GEOWITHIN %@", circle) == nil)
  }
}
