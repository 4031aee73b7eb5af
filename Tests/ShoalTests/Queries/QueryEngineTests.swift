import Foundation
import Testing

@testable import Shoal

// MARK: - In-memory context

/// A stand-in for an object passed as a query argument (the object layer passes `Object`s).
struct QETestObject {
  var className: String
  var key: ObjectKey
}

/// Errors of the in-memory context.
enum QETestContextError: Error {
  case missingObject(String, ObjectKey)
  case unsupportedArgument(String)
}

/// An in-memory `QueryContext`: a schema, the stored values of each object, and the origin of each
/// linking-objects property.
final class QETestContext: QueryContext {
  var schema: [String: [String: QueryProperty]] = [:]
  var objects: [String: [ObjectKey: [String: RowValue]]] = [:]
  /// For each class and linking-objects property: the origin class and its link property.
  var origins: [String: [String: (className: String, property: String)]] = [:]

  func addClass(_ name: String, _ properties: [QueryProperty]) {
    schema[name] = Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0) })
  }

  func add(_ className: String, _ key: ObjectKey, _ values: [String: RowValue]) {
    objects[className, default: [:]][key] = values
  }

  func keys(of className: String) -> [ObjectKey] { (objects[className] ?? [:]).keys.sorted() }

  func queryProperty(_ name: String, of className: String) -> QueryProperty? { schema[className]?[name] }

  func queryValue(_ property: QueryProperty, of key: ObjectKey, in className: String) throws -> RowValue {
    guard let object = objects[className]?[key] else { throw QETestContextError.missingObject(className, key) }
    if property.collection == .linkingObjects {
      guard let origin = origins[className]?[property.name] else { return .list([]) }
      var links: [RowValue] = []
      for originKey in keys(of: origin.className) {
        let value = objects[origin.className]?[originKey]?[origin.property] ?? .null
        let targets: [RowValue]
        switch value {
        case .list(let items): targets = items
        default: targets = [value]
        }
        if targets.contains(.link(key)) { links.append(.link(originKey)) }
      }
      return .list(links)
    }
    if let value = object[property.name] { return value }
    switch property.collection {
    case .list, .set, .linkingObjects: return .list([])
    case .map: return .map([])
    case .none: return .null
    }
  }

  func queryValue(_ column: QueryColumn, of key: ObjectKey) throws -> RowValue {
    try queryValue(column.property, of: key, in: column.className)
  }

  func queryArgument(_ argument: Any?) throws -> RowValue {
    guard let argument = unwrap(argument) else { return .null }
    switch argument {
    case let value as RowValue: return value
    case let value as Bool: return .bool(value)
    case let value as Int: return .int(Int64(value))
    case let value as Int64: return .int(value)
    case let value as Int32: return .int(Int64(value))
    case let value as Double: return .double(value)
    case let value as Float: return .float(value)
    case let value as String: return .string(value)
    case let value as Date: return .date(value)
    case let value as Data: return .data(value)
    case let value as UUID: return .uuid(value)
    case let value as ObjectId: return .objectId(value)
    case let value as Decimal128: return .decimal(value)
    case let value as QETestObject: return .typedLink(className: value.className, key: value.key)
    case let value as [Any?]: return .list(try value.map { try queryArgument($0) })
    case let value as [Any]: return .list(try value.map { try queryArgument($0) })
    case let value as Set<AnyHashable>: return .list(try value.map { try queryArgument($0.base) })
    default: throw QETestContextError.unsupportedArgument(String(describing: argument))
    }
  }

  /// `Any` holding an `Optional` → its wrapped value, or nil.
  private func unwrap(_ value: Any?) -> Any? {
    guard let value else { return nil }
    let mirror = Mirror(reflecting: value)
    guard mirror.displayStyle == .optional else { return value }
    guard let child = mirror.children.first else { return nil }
    return unwrap(child.value)
  }
}

// MARK: - Fixture

private func property(
  _ name: String, _ kind: QueryProperty.Kind, _ collection: QueryProperty.Collection = .none,
  optional: Bool = false, target: String? = nil, indexed: Bool = false
) -> QueryProperty {
  QueryProperty(
    name: name, kind: kind, collection: collection, isOptional: optional, targetClass: target, isIndexed: indexed)
}

private func oid(_ last: UInt8) -> ObjectId { ObjectId(bytes: Array(repeating: 0, count: 11) + [last]) }

private let uuid1 = UUID(uuidString: "11111111-2222-3333-4444-555555555555") ?? UUID()
private let uuid2 = UUID(uuidString: "AAAAAAAA-2222-3333-4444-555555555555") ?? UUID()

private func intMap(_ entries: [(String, Int64)]) -> RowValue {
  .map(entries.sorted { $0.0 < $1.0 }.map { RowValue.MapEntry(key: $0.0, value: .int($0.1)) })
}

private func strings(_ values: [String]) -> RowValue { .list(values.map { .string($0) }) }
private func ints(_ values: [Int64]) -> RowValue { .list(values.map { .int($0) }) }
private func links(_ keys: [ObjectKey]) -> RowValue { .list(keys.map { .link($0) }) }

/// Person{name, age, score: Double?, dog: Dog?, dogs: List<Dog>, tags: List<String>, nick: String?,
/// id: ObjectId (pk), attrs: Map<String, Int>, scores: List<Int>}; Dog{name, age, owner: Person?,
/// owners: LinkingObjects(Person.dogs)}; AllTypes with the remaining types.
private func makeContext() -> QETestContext {
  let context = QETestContext()
  context.addClass(
    "Person",
    [
      property("name", .string, indexed: true),
      property("age", .int),
      property("score", .double, optional: true),
      property("dog", .object, optional: true, target: "Dog"),
      property("dogs", .object, .list, target: "Dog"),
      property("tags", .string, .list),
      property("nick", .string, optional: true),
      property("id", .objectId, indexed: true),
      property("attrs", .int, .map),
      property("scores", .int, .list),
    ])
  context.addClass(
    "Dog",
    [
      property("name", .string),
      property("age", .int),
      property("owner", .object, optional: true, target: "Person"),
      property("owners", .object, .linkingObjects, target: "Person"),
    ])
  context.origins["Dog"] = ["owners": (className: "Person", property: "dogs")]
  context.addClass(
    "AllTypes",
    [
      property("label", .string),
      property("flag", .bool),
      property("f", .float),
      property("d", .double),
      property("dec", .decimal128, optional: true),
      property("date", .date, optional: true),
      property("data", .data, optional: true),
      property("uuid", .uuid, optional: true, indexed: true),
      property("oid", .objectId, optional: true),
      property("any", .any, optional: true),
      property("anyList", .any, .list),
      property("decs", .decimal128, .list),
      property("floats", .float, .list),
      property("dates", .date, .list),
      property("count", .int, indexed: true),
    ])

  context.add(
    "Person", 1,
    [
      "name": .string("Alice"), "age": .int(30), "score": .double(9.5), "dog": .link(101),
      "dogs": links([101, 102]), "tags": strings(["swift", "ios"]), "nick": .string("Al"), "id": .objectId(oid(1)),
      "attrs": intMap([("a", 1), ("b", 5)]), "scores": ints([1, 2, 3]),
    ])
  context.add(
    "Person", 2,
    [
      "name": .string("Bob"), "age": .int(25), "score": .null, "dog": .null, "dogs": links([]), "tags": strings([]),
      "nick": .null, "id": .objectId(oid(2)), "attrs": intMap([]), "scores": ints([]),
    ])
  context.add(
    "Person", 3,
    [
      "name": .string("Émile"), "age": .int(40), "score": .double(7), "dog": .link(103), "dogs": links([103]),
      "tags": strings(["Swift"]), "nick": .string("em"), "id": .objectId(oid(3)), "attrs": intMap([("a", 10)]),
      "scores": ints([10, 20]),
    ])
  context.add(
    "Person", 4,
    [
      "name": .string("carol"), "age": .int(17), "score": .double(3.25), "dog": .link(102),
      "dogs": links([102, 101, 103]), "tags": strings(["kotlin", "swift"]), "nick": .string(""),
      "id": .objectId(oid(4)), "attrs": intMap([("c", 3)]), "scores": ints([5]),
    ])
  context.add(
    "Person", 5,
    [
      "name": .string("Dave"), "age": .int(30), "score": .double(10), "dog": .null, "dogs": links([104]),
      "tags": strings(["x*y"]), "nick": .string("d?"), "id": .objectId(oid(5)), "attrs": intMap([("a", 2), ("b", 2)]),
      "scores": ints([-1, 1]),
    ])
  context.add("Dog", 101, ["name": .string("Rex"), "age": .int(5), "owner": .link(1)])
  context.add("Dog", 102, ["name": .string("Fido"), "age": .int(2), "owner": .link(4)])
  context.add("Dog", 103, ["name": .string("Max"), "age": .int(8), "owner": .link(3)])
  context.add("Dog", 104, ["name": .string("Bella"), "age": .int(1), "owner": .null])

  context.add(
    "AllTypes", 1,
    [
      "label": .string("one"), "flag": .bool(true), "f": .float(1.5), "d": .double(0.1), "dec": .decimal(Decimal128(1)),
      "date": .date(Date(timeIntervalSince1970: 1000)), "data": .data(Data("abc".utf8)), "uuid": .uuid(uuid1),
      "oid": .objectId(oid(1)), "any": .int(5), "anyList": .list([.string("x"), .int(1)]),
      "decs": .list([.decimal(Decimal128(1)), .decimal(Decimal128(2))]), "floats": .list([.float(1.5), .float(2.5)]),
      "dates": .list([.date(Date(timeIntervalSince1970: 10)), .date(Date(timeIntervalSince1970: 20))]),
      "count": .int(1),
    ])
  context.add(
    "AllTypes", 2,
    [
      "label": .string("two"), "flag": .bool(false), "f": .float(0.1), "d": .double(2.5),
      "dec": .decimal(Decimal128(2.5)), "date": .date(Date(timeIntervalSince1970: 2000)),
      "data": .data(Data("xyz".utf8)), "uuid": .uuid(uuid2), "oid": .objectId(oid(2)), "any": .string("hello"),
      "anyList": .list([]), "decs": .list([]), "floats": .list([]), "dates": .list([]), "count": .int(2),
    ])
  context.add(
    "AllTypes", 3,
    [
      "label": .string("three"), "flag": .bool(false), "f": .float(-3), "d": .double(.nan), "dec": .null,
      "date": .null, "data": .null, "uuid": .null, "oid": .null, "any": .null, "anyList": .list([.double(2.5)]),
      "decs": .list([.decimal(Decimal128(0.5))]), "floats": .list([.float(-1)]), "dates": .list([]), "count": .int(3),
    ])
  context.add(
    "AllTypes", 4,
    [
      "label": .string("four"), "flag": .bool(true), "f": .float(0), "d": .double(100), "dec": .decimal(Decimal128(-7)),
      "date": .date(Date(timeIntervalSince1970: -1.5)), "data": .data(Data()), "uuid": .null, "oid": .null,
      "any": .typedLink(className: "Dog", key: 101), "anyList": .list([.null, .bool(true)]), "decs": .list([]),
      "floats": .list([]), "dates": .list([]), "count": .int(4),
    ])
  return context
}

/// The `name` (or `label`) of the objects of `className` matching `format`, in key order.
private func matching(
  _ format: String, _ arguments: Any?..., in className: String = "Person", context: QETestContext? = nil
) throws -> [String] {
  let context = context ?? makeContext()
  let query = try CompiledQuery(className: className, predicate: format, arguments: arguments, context: context)
  return try matching(query, context: context)
}

private func matching(_ query: CompiledQuery, context: QETestContext) throws -> [String] {
  let nameProperty = query.className == "AllTypes" ? "label" : "name"
  var names: [String] = []
  for key in context.keys(of: query.className) where try query.matches(key, context: context) {
    if case .string(let name) = context.objects[query.className]?[key]?[nameProperty] ?? .null { names.append(name) }
  }
  return names
}

/// The error building the query throws (nil when none).
private func queryError(_ format: String, _ arguments: Any?..., in className: String = "Person") -> QueryError? {
  do {
    _ = try CompiledQuery(className: className, predicate: format, arguments: arguments, context: makeContext())
    return nil
  } catch let error as QueryError {
    return error
  } catch {
    return QueryError(.unsupported, "unexpected error \(error)")
  }
}

// MARK: - Comparisons

/// Comparison operators, constants on either side, numbers across kinds, logic and precedence.
@Suite struct QueryComparisonTests {
  @Test func integerOperators() throws {
    #expect(try matching("age == 30") == ["Alice", "Dave"])
    #expect(try matching("age = 30") == ["Alice", "Dave"])
    #expect(try matching("age != 30") == ["Bob", "Émile", "carol"])
    #expect(try matching("age <> 30") == ["Bob", "Émile", "carol"])
    #expect(try matching("age < 25") == ["carol"])
    #expect(try matching("age <= 25") == ["Bob", "carol"])
    #expect(try matching("age =< 25") == ["Bob", "carol"])
    #expect(try matching("age > 30") == ["Émile"])
    #expect(try matching("age >= 30") == ["Alice", "Émile", "Dave"])
    #expect(try matching("age => 30") == ["Alice", "Émile", "Dave"])
    #expect(try matching("age > -1") == ["Alice", "Bob", "Émile", "carol", "Dave"])
    #expect(try matching("age == 0x1E") == ["Alice", "Dave"])
  }

  @Test func constantOnTheLeft() throws {
    #expect(try matching("30 == age") == ["Alice", "Dave"])
    #expect(try matching("25 > age") == ["carol"])
    #expect(try matching("40 <= age") == ["Émile"])
    #expect(try matching("%@ < age", 30) == ["Émile"])
  }

  @Test func numericAcrossKinds() throws {
    #expect(try matching("age == 30.0") == ["Alice", "Dave"])
    #expect(try matching("age > 29.5 AND age < 30.5") == ["Alice", "Dave"])
    #expect(try matching("score == 10") == ["Dave"])
    #expect(try matching("score > %@", Float(9.25)) == ["Alice", "Dave"])
    #expect(try matching("dec > 1", in: "AllTypes") == ["two"])
    #expect(try matching("dec == 2.5", in: "AllTypes") == ["two"])
    #expect(try matching("dec < %@", Decimal128(0), in: "AllTypes") == ["four"])
    #expect(try matching("d >= dec", in: "AllTypes") == ["two", "four"])
    #expect(try matching("f == 0.1", in: "AllTypes") == ["two"])
    #expect(try matching("f == %@", 0.1, in: "AllTypes") == ["two"])
    #expect(try matching("d == 0.1", in: "AllTypes") == ["one"])
    #expect(try matching("d > 0", in: "AllTypes") == ["one", "two", "four"])
    #expect(try matching("d != 5", in: "AllTypes") == ["one", "two", "three", "four"])
    #expect(try matching("count > 1.5", in: "AllTypes") == ["two", "three", "four"])
  }

  @Test func booleans() throws {
    #expect(try matching("flag == true", in: "AllTypes") == ["one", "four"])
    #expect(try matching("flag == FALSE", in: "AllTypes") == ["two", "three"])
    #expect(try matching("flag = YES", in: "AllTypes") == ["one", "four"])
    #expect(try matching("flag != %@", true, in: "AllTypes") == ["two", "three"])
  }

  @Test func logicalOperatorsAndPrecedence() throws {
    #expect(try matching("age == 30 AND name == 'Dave'") == ["Dave"])
    #expect(try matching("age == 30 && name == 'Dave'") == ["Dave"])
    #expect(try matching("age == 25 OR name == 'Dave'") == ["Bob", "Dave"])
    #expect(try matching("age == 25 || name == 'Dave'") == ["Bob", "Dave"])
    #expect(try matching("NOT age == 30") == ["Bob", "Émile", "carol"])
    #expect(try matching("!(age == 30)") == ["Bob", "Émile", "carol"])
    #expect(try matching("not age == 30 and age > 20") == ["Bob", "Émile"])
    // AND binds tighter than OR.
    #expect(try matching("age == 25 OR age == 30 AND name == 'Dave'") == ["Bob", "Dave"])
    #expect(try matching("(age == 25 OR age == 30) AND name == 'Dave'") == ["Dave"])
    #expect(try matching("age == 30 AND name == 'Dave' OR age == 25") == ["Bob", "Dave"])
    #expect(try matching("NOT age == 30 OR name == 'Alice'") == ["Alice", "Bob", "Émile", "carol"])
    #expect(try matching("TRUEPREDICATE").count == 5)
    #expect(try matching("FALSEPREDICATE").isEmpty)
    #expect(try matching("truepredicate AND NOT falsepredicate").count == 5)
  }

  @Test func keyPathAgainstKeyPath() throws {
    #expect(try matching("age > dog.age") == ["Alice", "Émile", "carol"])
    #expect(try matching("name == dog.owner.name") == ["Alice", "Émile", "carol"])
    #expect(try matching("dogs.age > age") == [])
    #expect(try matching("scores.@sum > age") == [])
    #expect(try matching("scores.@count < dogs.@count") == ["carol"])
    #expect(try matching("d > f", in: "AllTypes") == ["two", "four"])
  }

  @Test func datesAndOtherTypes() throws {
    #expect(try matching("date > T1500:0", in: "AllTypes") == ["two"])
    #expect(try matching("date == T1000:0", in: "AllTypes") == ["one"])
    #expect(try matching("date < T-1:-400000000", in: "AllTypes") == ["four"])
    #expect(try matching("date == 1970-01-01@00:16:40", in: "AllTypes") == ["one"])
    #expect(try matching("date == 1970-01-01T00:33:20:0", in: "AllTypes") == ["two"])
    #expect(try matching("date BETWEEN {T0:0, T1000:0}", in: "AllTypes") == ["one"])
    #expect(try matching("date < %@", Date(timeIntervalSince1970: 1500), in: "AllTypes") == ["one", "four"])
    #expect(try matching("date == nil", in: "AllTypes") == ["three"])
    #expect(try matching("uuid == uuid(11111111-2222-3333-4444-555555555555)", in: "AllTypes") == ["one"])
    #expect(try matching("uuid == %@", uuid2, in: "AllTypes") == ["two"])
    #expect(try matching("uuid < %@", uuid2, in: "AllTypes") == ["one"])
    #expect(try matching("oid == oid(000000000000000000000002)", in: "AllTypes") == ["two"])
    #expect(try matching("oid > oid(000000000000000000000001)", in: "AllTypes") == ["two"])
    #expect(try matching("id == %@", oid(3)) == ["Émile"])
    #expect(try matching("data == B64\"YWJj\"", in: "AllTypes") == ["one"])
    #expect(try matching("data == 'xyz'", in: "AllTypes") == ["two"])
    #expect(try matching("data == %@", Data("abc".utf8), in: "AllTypes") == ["one"])
    #expect(try matching("data BEGINSWITH 'xy'", in: "AllTypes") == ["two"])
  }
}

// MARK: - Strings

/// String equality, substring operators, LIKE, `[c]`/`[d]` options and ordering.
@Suite struct QueryStringTests {
  @Test func equalityIsExactAndBytewise() throws {
    #expect(try matching("name == 'Alice'") == ["Alice"])
    #expect(try matching("name == \"Alice\"") == ["Alice"])
    #expect(try matching("name == 'alice'") == [])
    #expect(try matching("name != 'Alice'") == ["Bob", "Émile", "carol", "Dave"])
    // The precomposed É does not equal E + combining acute: bytewise, as realm-core.
    #expect(try matching("name == 'E\\u0301mile'") == [])
    #expect(try matching("name == 'Émile'") == ["Émile"])
  }

  @Test func caseAndDiacriticOptions() throws {
    #expect(try matching("name ==[c] 'ALICE'") == ["Alice"])
    #expect(try matching("name ==[d] 'Emile'") == ["Émile"])
    #expect(try matching("name ==[c] 'emile'") == [])
    #expect(try matching("name ==[cd] 'EMILE'") == ["Émile"])
    #expect(try matching("name !=[c] 'alice'") == ["Bob", "Émile", "carol", "Dave"])
    #expect(try matching("name BEGINSWITH[c] 'c'") == ["carol"])
    #expect(try matching("name CONTAINS[cd] 'MIL'") == ["Émile"])
    #expect(try matching("name ENDSWITH[c] 'E'") == ["Alice", "Émile", "Dave"])
    #expect(try matching("name LIKE[c] 'A*'") == ["Alice"])
    #expect(try matching("name LIKE[cd] 'e?ile'") == ["Émile"])
    #expect(try matching("name IN[c] {'alice', 'BOB'}") == ["Alice", "Bob"])
  }

  @Test func substringOperators() throws {
    #expect(try matching("name BEGINSWITH 'A'") == ["Alice"])
    #expect(try matching("name beginswith 'a'") == [])
    #expect(try matching("name ENDSWITH 've'") == ["Dave"])
    #expect(try matching("name CONTAINS 'o'") == ["Bob", "carol"])
    #expect(try matching("name CONTAINS 'É'") == ["Émile"])
    // As in RealmSwift, an empty or null substring matches nothing.
    #expect(try matching("name CONTAINS ''") == [])
    #expect(try matching("name BEGINSWITH nil") == [])
    #expect(try matching("nick BEGINSWITH 'e'") == ["Émile"])
  }

  @Test func like() throws {
    #expect(try matching("name LIKE 'A*'") == ["Alice"])
    #expect(try matching("name LIKE '*e'") == ["Alice", "Émile", "Dave"])
    #expect(try matching("name LIKE '?ob'") == ["Bob"])
    #expect(try matching("name LIKE '?mile'") == ["Émile"])
    #expect(try matching("name LIKE '*a*o*'") == ["carol"])
    #expect(try matching("name LIKE '*'").count == 5)
    #expect(try matching("name LIKE 'Al'") == [])
    #expect(try matching("tags LIKE 'x\\\\*y'") == ["Dave"])
    #expect(try matching("nick LIKE 'd\\\\?'") == ["Dave"])
    #expect(try matching("nick LIKE nil") == ["Bob"])
  }

  @Test func lexicographicOrdering() throws {
    #expect(try matching("name < 'B'") == ["Alice"])
    // Bytewise: lowercase letters and É (0xC3…) sort after uppercase ASCII.
    #expect(try matching("name > 'Z'") == ["Émile", "carol"])
    #expect(try matching("name >= 'Bob' AND name <= 'Dave'") == ["Bob", "Dave"])
  }

  @Test func escapesInStrings() throws {
    let context = makeContext()
    context.add("Person", 6, ["name": .string("it's \"q\"\n"), "age": .int(1)])
    #expect(try matching("name == 'it\\'s \"q\"\\n'", context: context) == ["it's \"q\"\n"])
    #expect(try matching("name == \"it's \\\"q\\\"\\n\"", context: context) == ["it's \"q\"\n"])
    #expect(try matching("name == 'it\\u0027s \"q\"\\n'", context: context) == ["it's \"q\"\n"])
  }
}

// MARK: - Arguments

/// `%@`, `%K`, printf conversions, `$n` and object arguments.
@Suite struct QueryArgumentTests {
  @Test func formatArguments() throws {
    #expect(try matching("name == %@", "Bob") == ["Bob"])
    #expect(try matching("age > %@ AND name != %@", 20, "Alice") == ["Bob", "Émile", "Dave"])
    #expect(try matching("%K == %@", "name", "Bob") == ["Bob"])
    #expect(try matching("%K == %@", "dog.name", "Rex") == ["Alice"])
    #expect(try matching("%K.@count > 2", "dogs") == ["carol"])
    #expect(try matching("dog.%K == 'Max'", "name") == ["Émile"])
    #expect(try matching("age == %d", 17) == ["carol"])
    #expect(try matching("age > %ld AND score < %f", 20, 9.9) == ["Alice", "Émile"])
    #expect(try matching("nick == %@", nil) == ["Bob"])
    #expect(try matching("nick == %@", String?.none) == ["Bob"])
  }

  @Test func positionalArguments() throws {
    #expect(try matching("name == $0", "Bob") == ["Bob"])
    #expect(try matching("age > $1 AND age < $0", 35, 20) == ["Alice", "Bob", "Dave"])
    #expect(try matching("age == $0 OR age == $0", 30) == ["Alice", "Dave"])
    #expect(try matching("name IN $0", ["Bob", "Dave"]) == ["Bob", "Dave"])
  }

  @Test func argumentErrors() throws {
    #expect(
      queryError("name == %@ AND age == %@", "Bob")?.message
        == "Insufficient arguments for conversion characters specified in format string.")
    #expect(queryError("name == %@")?.kind == .invalidArgument)
    #expect(
      queryError("name == $2", "a", "b")?.message == "Request for argument at index 2 but only 2 arguments are provided"
    )
    #expect(queryError("name == $1", "a")?.message == "Request for argument at index 1 but only 1 argument is provided")
    #expect(queryError("%K == 1", 5)?.kind == .invalidArgument)
    #expect(
      queryError("age == %@", "abc")?.message
        == "Expected object of type int for property 'age' on object of type 'Person', but received: abc")
  }

  @Test func objectArguments() throws {
    let rex = QETestObject(className: "Dog", key: 101)
    #expect(try matching("dog == %@", rex) == ["Alice"])
    #expect(try matching("dog != %@", rex) == ["Bob", "Émile", "carol", "Dave"])
    #expect(try matching("dogs == %@", rex) == ["Alice", "carol"])
    #expect(try matching("%@ IN dogs", rex) == ["Alice", "carol"])
    #expect(try matching("NONE dogs == %@", rex) == ["Bob", "Émile", "Dave"])
    #expect(try matching("dog IN %@", [rex, QETestObject(className: "Dog", key: 103)]) == ["Alice", "Émile"])
    #expect(try matching("any == %@", rex, in: "AllTypes") == ["four"])
    #expect(try matching("owner == %@", QETestObject(className: "Person", key: 1), in: "Dog") == ["Rex"])
    let person = QETestObject(className: "Person", key: 1)
    #expect(
      queryError("dog == %@", person)?.message
        == "Cannot compare value 'Person object 1' of type 'Person' to property 'dog' of type 'Dog'")
  }
}

// MARK: - IN and BETWEEN

/// `IN` lists and arguments, `value IN collection`, `BETWEEN`.
@Suite struct QueryInBetweenTests {
  @Test func inLists() throws {
    #expect(try matching("age IN {17, 40}") == ["Émile", "carol"])
    #expect(try matching("name IN {'Bob', 'Dave', 'Zed'}") == ["Bob", "Dave"])
    #expect(try matching("name IN %@", ["Bob", "carol"]) == ["Bob", "carol"])
    #expect(try matching("age IN %@", Set([25, 40])) == ["Bob", "Émile"])
    #expect(try matching("age IN {}") == [])
    #expect(try matching("NOT age IN {30, 25}") == ["Émile", "carol"])
    #expect(try matching("nick IN {nil, 'em'}") == ["Bob", "Émile"])
    #expect(try matching("age IN {$1, %@}", 40, 17) == ["Émile", "carol"])
    // `%@` counts its own arguments, independently of `$n`.
    #expect(try matching("age IN {$0, %@}", 40, 17) == ["Émile"])
    #expect(try matching("tags IN {'ios', 'kotlin'}") == ["Alice", "carol"])
    #expect(try matching("ALL tags IN {'swift', 'ios'}") == ["Alice", "Bob"])
  }

  @Test func valueInCollection() throws {
    #expect(try matching("'swift' IN tags") == ["Alice", "carol"])
    #expect(try matching("%@ IN tags", "Swift") == ["Émile"])
    #expect(try matching("2 IN scores") == ["Alice"])
    #expect(try matching("name IN dogs.owner.name") == ["Alice", "Émile", "carol"])
    #expect(
      queryError("name IN dog.owner.name")?.message
        == "Predicate with IN operator must compare a KeyPath with an aggregate")
    #expect(try matching("'Rex' IN dogs.name") == ["Alice", "carol"])
  }

  @Test func between() throws {
    #expect(try matching("age BETWEEN {25, 30}") == ["Alice", "Bob", "Dave"])
    #expect(try matching("age BETWEEN %@", [18, 29]) == ["Bob"])
    #expect(try matching("score BETWEEN {3.25, 9.5}") == ["Alice", "Émile", "carol"])
    #expect(try matching("dogs.age BETWEEN {6, 9}") == ["Émile", "carol"])
    #expect(queryError("name BETWEEN {'a', 'z'}")?.message == "Operator 'BETWEEN' not supported for type 'string'")
    #expect(queryError("age BETWEEN {1}")?.kind == .invalidArgument)
    #expect(queryError("age BETWEEN %@", 5)?.kind == .invalidArgument)
    #expect(queryError("age IN %@", 5)?.message == "IN clause requires an array of items")
  }
}

// MARK: - Collections

/// To-many key paths: quantifiers, aggregates, linking objects, subqueries, maps, `AnyRealmValue`.
@Suite struct QueryCollectionTests {
  @Test func implicitAnyOnToMany() throws {
    #expect(try matching("dogs.age > 6") == ["Émile", "carol"])
    #expect(try matching("dogs.name == 'Fido'") == ["Alice", "carol"])
    #expect(try matching("tags == 'swift'") == ["Alice", "carol"])
    #expect(try matching("tags ==[c] 'swift'") == ["Alice", "Émile", "carol"])
    #expect(try matching("tags BEGINSWITH 'k'") == ["carol"])
    #expect(try matching("scores > 15") == ["Émile"])
    #expect(try matching("dogs.owner.name == 'carol'") == ["Alice", "carol"])
  }

  @Test func quantifiers() throws {
    #expect(try matching("ANY dogs.age > 6") == ["Émile", "carol"])
    #expect(try matching("SOME dogs.age > 6") == ["Émile", "carol"])
    #expect(try matching("ALL dogs.age > 1") == ["Alice", "Bob", "Émile", "carol"])
    #expect(try matching("NONE dogs.age > 4") == ["Bob", "Dave"])
    #expect(try matching("ALL tags == 'swift'") == ["Bob"])
    #expect(try matching("ANY scores < 0") == ["Dave"])
    #expect(try matching("ALL scores > 0 AND scores.@count > 0") == ["Alice", "Émile", "carol"])
    #expect(try matching("NOT ANY tags == 'swift'") == ["Bob", "Émile", "Dave"])
    #expect(
      queryError("ANY age > 3")?.message
        == "Aggregate operations can only be used on key paths that include an collection property")
  }

  @Test func countAndSize() throws {
    #expect(try matching("dogs.@count > 1") == ["Alice", "carol"])
    #expect(try matching("dogs.@count == 0") == ["Bob"])
    #expect(try matching("dogs.@size == 1") == ["Émile", "Dave"])
    #expect(try matching("tags.@count == 2") == ["Alice", "carol"])
    #expect(try matching("attrs.@count == 2") == ["Alice", "Dave"])
    #expect(try matching("name.@size == 3") == ["Bob"])
    #expect(try matching("name.@count > 4") == ["Alice", "Émile", "carol"])
    #expect(try matching("nick.@size == 0") == ["carol"])
    #expect(try matching("dogs.@count == %@", 3) == ["carol"])
    #expect(try matching("owners.@count > 1", in: "Dog") == ["Rex", "Fido", "Max"])
    #expect(try matching("owners.@count == 1", in: "Dog") == ["Bella"])
  }

  @Test func numericAggregates() throws {
    #expect(try matching("scores.@sum > 10") == ["Émile"])
    #expect(try matching("scores.@sum == 0") == ["Bob", "Dave"])
    #expect(try matching("scores.@avg == 2") == ["Alice"])
    #expect(try matching("scores.@avg == nil") == ["Bob"])
    #expect(try matching("scores.@min < 1") == ["Dave"])
    #expect(try matching("scores.@max >= 5") == ["Émile", "carol"])
    #expect(try matching("dogs.@avg.age >= 3") == ["Alice", "Émile", "carol"])
    #expect(try matching("dogs.@sum.age == 15") == ["carol"])
    #expect(try matching("dogs.@max.age == 8") == ["Émile", "carol"])
    #expect(try matching("dogs.@min.age == nil") == ["Bob"])
    #expect(try matching("attrs.@sum == 6") == ["Alice"])
    #expect(try matching("attrs.@max > 5") == ["Émile"])
    #expect(try matching("decs.@sum == 3", in: "AllTypes") == ["one"])
    #expect(try matching("decs.@max < 1", in: "AllTypes") == ["three"])
    #expect(try matching("floats.@avg == 2", in: "AllTypes") == ["one"])
    #expect(try matching("floats.@min == 1.5", in: "AllTypes") == ["one"])
    #expect(try matching("floats == 2.5", in: "AllTypes") == ["one"])
    #expect(try matching("dates.@max > T15:0", in: "AllTypes") == ["one"])
    #expect(try matching("anyList.@sum > 2", in: "AllTypes") == ["three"])
  }

  @Test func linkingObjects() throws {
    #expect(try matching("owners.name == 'carol'", in: "Dog") == ["Rex", "Fido", "Max"])
    #expect(try matching("owners.@count == 2", in: "Dog") == ["Rex", "Fido", "Max"])
    #expect(try matching("owners.@count == 0", in: "Dog") == [])
    #expect(try matching("ALL owners.age > 20", in: "Dog") == ["Bella"])
    #expect(try matching("owners.dog.name == 'Max'", in: "Dog") == ["Max"])
  }

  @Test func subqueries() throws {
    #expect(try matching("SUBQUERY(dogs, $d, $d.age > 3).@count > 0") == ["Alice", "Émile", "carol"])
    #expect(
      try matching("SUBQUERY(dogs, $d, $d.age > 3 AND $d.name BEGINSWITH 'R').@count == 1") == ["Alice", "carol"])
    #expect(try matching("SUBQUERY(dogs, $dog, $dog.age > 3).@count == 2") == ["carol"])
    #expect(try matching("subquery(dogs, $d, $d.owner.name == 'carol').@size > 0") == ["Alice", "carol"])
    #expect(try matching("SUBQUERY(tags, $t, $t BEGINSWITH 's').@count == 1") == ["Alice", "carol"])
    #expect(try matching("SUBQUERY(scores, $s, $s > 1).@count >= 2") == ["Alice", "Émile"])
    #expect(try matching("SUBQUERY(dogs, $d, $d.age > %@).@count > 0", 6) == ["Émile", "carol"])
    #expect(
      try matching("SUBQUERY(dogs, $d, SUBQUERY($d.owners, $o, $o.age < 20).@count > 0).@count == 3") == ["carol"])
    #expect(try matching("SUBQUERY(tags, $t, $t.@size > 4).@count > 0") == ["Alice", "Émile", "carol"])
    #expect(
      queryError("SUBQUERY(tags, $t, $t == 3).@count > 0")?.message
        == "Cannot compare value '3' of type 'int' to property 'tags' of type 'string'")
    #expect(queryError("SUBQUERY(dogs, $d, age > 3).@count > 0")?.kind == .invalidKeyPath)
    #expect(queryError("SUBQUERY(dogs, $d, $e.age > 3).@count > 0")?.kind == .invalidKeyPath)
    #expect(queryError("SUBQUERY(name, $d, $d == 'a').@count > 0")?.kind == .invalidKeyPath)
    #expect(queryError("SUBQUERY(dogs, $d, $d.age > 3) > 0")?.kind == .unsupported)
  }

  @Test func maps() throws {
    #expect(try matching("attrs['a'] == 1") == ["Alice"])
    #expect(try matching("attrs[\"a\"] > 1") == ["Émile", "Dave"])
    #expect(try matching("attrs[%@] == 5", "b") == ["Alice"])
    #expect(try matching("attrs['missing'] == nil").count == 5)
    #expect(try matching("attrs['a'] == nil") == ["Bob", "carol"])
    #expect(try matching("attrs.@keys == 'b'") == ["Alice", "Dave"])
    #expect(try matching("attrs.@allKeys BEGINSWITH 'c'") == ["carol"])
    #expect(try matching("attrs.@values > 4") == ["Alice", "Émile"])
    #expect(try matching("attrs.@allValues == 2") == ["Dave"])
    #expect(try matching("attrs > 4") == ["Alice", "Émile"])
    #expect(try matching("ALL attrs.@values == 2") == ["Bob", "Dave"])
    #expect(try matching("'c' IN attrs.@keys") == ["carol"])
  }

  @Test func anyValues() throws {
    #expect(try matching("any == 5", in: "AllTypes") == ["one"])
    #expect(try matching("any == 5.0", in: "AllTypes") == ["one"])
    #expect(try matching("any == 'hello'", in: "AllTypes") == ["two"])
    #expect(try matching("any BEGINSWITH 'he'", in: "AllTypes") == ["two"])
    #expect(try matching("any > 1", in: "AllTypes") == ["one"])
    #expect(try matching("any == nil", in: "AllTypes") == ["three"])
    #expect(try matching("anyList == 1", in: "AllTypes") == ["one"])
    #expect(try matching("anyList == nil", in: "AllTypes") == ["four"])
    #expect(try matching("any.@type == 'int'", in: "AllTypes") == ["one"])
    #expect(try matching("any.@type == 'numeric'", in: "AllTypes") == ["one"])
    #expect(try matching("any.@type IN {'string', 'null'}", in: "AllTypes") == ["two", "three"])
    #expect(try matching("any.@type != 'string'", in: "AllTypes") == ["one", "three", "four"])
    #expect(try matching("any.@type == 'object'", in: "AllTypes") == ["four"])
    #expect(try matching("anyList.@type == 'double'", in: "AllTypes") == ["three"])
    #expect(try matching("ALL anyList.@type == 'numeric'", in: "AllTypes") == ["two", "three"])
    #expect(queryError("any.@type == 'widget'", in: "AllTypes")?.kind == .typeMismatch)
    #expect(queryError("label.@type == 'string'", in: "AllTypes")?.kind == .invalidKeyPath)
  }
}

// MARK: - Links and nulls

/// Link traversal, empty links and null semantics.
@Suite struct QueryLinkAndNullTests {
  @Test func links() throws {
    #expect(try matching("dog.name == 'Rex'") == ["Alice"])
    #expect(try matching("dog.age > 3") == ["Alice", "Émile"])
    #expect(try matching("dog.owner.name == 'carol'") == ["carol"])
    #expect(try matching("dog.owner.dog.owner.age == 40") == ["Émile"])
    #expect(try matching("dog == nil") == ["Bob", "Dave"])
    #expect(try matching("dog != nil") == ["Alice", "Émile", "carol"])
    #expect(try matching("dog.name == nil") == ["Bob", "Dave"])
    #expect(try matching("dog.age < 100") == ["Alice", "Émile", "carol"])
    #expect(try matching("dog.owner == nil") == ["Bob", "Dave"])
    #expect(try matching("owner == nil", in: "Dog") == ["Bella"])
    #expect(try matching("owner.dogs.name == 'Fido'", in: "Dog") == ["Rex", "Fido"])
  }

  @Test func nullSemantics() throws {
    #expect(try matching("nick == nil") == ["Bob"])
    #expect(try matching("nick == NULL") == ["Bob"])
    #expect(try matching("nick = null") == ["Bob"])
    #expect(try matching("nick != nil") == ["Alice", "Émile", "carol", "Dave"])
    #expect(try matching("nick == 'Al'") == ["Alice"])
    #expect(try matching("nick != 'Al'") == ["Bob", "Émile", "carol", "Dave"])
    #expect(try matching("score > 5") == ["Alice", "Émile", "Dave"])
    #expect(try matching("score <= 100") == ["Alice", "Émile", "carol", "Dave"])
    #expect(try matching("score < nil") == [])
    #expect(try matching("score >= nil") == [])
    #expect(try matching("score == nil") == ["Bob"])
    #expect(try matching("NOT score > 5") == ["Bob", "carol"])
    #expect(try matching("age == nil") == [])
    #expect(try matching("nick == ''") == ["carol"])
  }

  @Test func nanIsUnordered() throws {
    #expect(try matching("d > 0 OR d <= 0", in: "AllTypes") == ["one", "two", "four"])
    #expect(try matching("d != 0.1", in: "AllTypes") == ["two", "three", "four"])
  }
}

// MARK: - Errors

/// Error kinds and messages for bad key paths, syntax, types and operators.
@Suite struct QueryErrorTests {
  @Test func unknownProperties() {
    #expect(
      queryError("agee > 3")?.message == "Invalid keypath 'agee': Property 'agee' not found in object of type 'Person'")
    #expect(queryError("agee > 3")?.kind == .invalidKeyPath)
    #expect(
      queryError("dog.nmae == 'x'")?.message
        == "Invalid keypath 'dog.nmae': Property 'nmae' not found in object of type 'Dog'")
    #expect(
      queryError("name.first == 'x'")?.message
        == "Invalid keypath 'name.first': Property 'Person.name' is not a link or collection and can only appear at "
        + "the end of a keypath.")
    #expect(
      queryError("tags.length == 1")?.message
        == "Invalid keypath 'tags.length': string property tags can only be followed by a collection operation.")
    #expect(
      queryError("dogs.@foo > 1")?.message == "Invalid keypath 'dogs.@foo': Unsupported collection operation '@foo'")
    #expect(
      queryError("age.@count > 1")?.message
        == "Invalid keypath 'age.@count': collection operation '@count' must be applied to a collection")
    #expect(
      queryError("dogs.@count.age > 1")?.message
        == "Invalid keypath 'dogs.@count.age': @count must appear at the end of a keypath.")
    #expect(queryError("name['a'] == 1")?.kind == .invalidKeyPath)
    #expect(
      queryError("tags.@keys == 'a'")?.message
        == "Invalid keypath 'tags.@keys': @keys must follow a dictionary property.")
  }

  @Test func aggregateErrors() {
    #expect(
      queryError("tags.@sum > 1")?.message
        == "Invalid keypath 'tags.@sum': @sum can only be applied to a collection of numeric values.")
    #expect(
      queryError("dogs.@sum.name > 1")?.message
        == "Invalid keypath 'dogs.@sum.name': @sum must be followed by a numeric property.")
    #expect(
      queryError("dogs.@avg > 1")?.message
        == "Invalid keypath 'dogs.@avg': @avg on a collection of objects cannot appear at the end of a keypath.")
    #expect(queryError("dogs.@count == 'abc'")?.message == "@count can only be compared with a numeric value.")
    #expect(
      queryError("scores.@sum == nil")?.message == "@sum on a property of type int cannot be compared with '<null>'")
    #expect(queryError("scores.@max == 'a'")?.message == "@max on a property of type int cannot be compared with 'a'")
    #expect(queryError("dates.@sum > 1", in: "AllTypes")?.message == "Cannot sum or average date properties")
    #expect(queryError("attrs.@keys == 3")?.message == "@keys can only be compared with a string value.")
  }

  @Test func syntaxErrors() {
    #expect(queryError("name == ")?.message == "Unable to parse the format string \"name == \"")
    #expect(queryError("name == ")?.kind == .syntax)
    #expect(queryError("age >> 3")?.kind == .syntax)
    #expect(queryError("(age > 3")?.kind == .syntax)
    #expect(queryError("age > 3)")?.kind == .syntax)
    #expect(queryError("name == 'abc")?.kind == .syntax)
    #expect(queryError("")?.kind == .syntax)
    #expect(queryError("age > 3 AND")?.kind == .syntax)
    #expect(queryError("age ==[x] 3")?.kind == .syntax)
    #expect(queryError("uuid == uuid(nope)", in: "AllTypes")?.kind == .syntax)
    #expect(queryError("name MATCHES 'a.*'")?.kind == .unsupported)
    #expect(queryError("age > 3 SORT(age ASC)")?.kind == .unsupported)
    #expect(queryError("LIMIT(3)")?.kind == .unsupported)
    #expect(queryError("name == 'a' ^ 2")?.detail?.contains("offset 12") == true)
  }

  @Test func typeMismatches() {
    // RealmSwift's text for a constant of the wrong type (its predicates check constants
    // against the property's type, naming the key path and the class queried).
    #expect(
      queryError("age == 'abc'")?.message
        == "Expected object of type int for property 'age' on object of type 'Person', but received: abc")
    #expect(queryError("age == 'abc'")?.kind == .typeMismatch)
    #expect(
      queryError("name == 3")?.message
        == "Expected object of type string for property 'name' on object of type 'Person', but received: 3")
    #expect(
      queryError("dog.name == true")?.message
        == "Expected object of type string for property 'dog.name' on object of type 'Person', but received: true")
    #expect(
      queryError("dog == 'Rex'")?.message
        == "Cannot compare value 'Rex' of type 'string' to property 'dog' of type 'Dog'")
    #expect(queryError("age == name")?.message == "Property type mismatch between int and string")
    #expect(queryError("dog == dogs.owner")?.message == "Property type mismatch between Dog and Person")
    #expect(queryError("age IN {1, 'a'}")?.kind == .typeMismatch)
  }

  @Test func unsupportedOperators() {
    #expect(queryError("age BEGINSWITH 'a'")?.message == "Operator 'BEGINSWITH' not supported for type 'int'")
    #expect(queryError("flag < true", in: "AllTypes")?.message == "Operator '<' not supported for type 'bool'")
    #expect(queryError("dog > nil")?.message == "Operator '>' not supported for type 'object'")
    #expect(queryError("name <[c] 'b'")?.message == "Lexicographical comparisons must be case-sensitive")
    #expect(
      queryError("'abc' BEGINSWITH name")?.message == "Operator 'BEGINSWITH' requires a keypath on the left side.")
    #expect(
      queryError("1 == 1")?.message
        == "Predicate expressions must compare a keypath and another keypath or a constant value")
    #expect(queryError("'x' IN name")?.kind == .unsupported)
  }
}

// MARK: - Compiled queries

/// `CompiledQuery`: index hints, chaining, AST construction and printing.
@Suite struct CompiledQueryTests {
  @Test func indexHints() throws {
    let context = makeContext()
    func hint(_ format: String, _ arguments: Any?..., in className: String = "Person") throws -> (String, [RowValue])? {
      let query = try CompiledQuery(className: className, predicate: format, arguments: arguments, context: context)
      return query.indexHint.map { ($0.property.name, $0.values) }
    }
    #expect(try hint("name == 'Bob'")?.0 == "name")
    #expect(try hint("name == 'Bob'")?.1 == [.string("Bob")])
    #expect(try hint("'Bob' == name")?.1 == [.string("Bob")])
    #expect(try hint("id == %@", oid(2))?.1 == [.objectId(oid(2))])
    #expect(try hint("name IN {'a', 'b', 'a'}")?.1 == [.string("a"), .string("b")])
    #expect(try hint("age > 3 AND name == 'x'")?.1 == [.string("x")])
    #expect(try hint("name IN {'a', 'b'} AND id == %@", oid(1))?.0 == "id")
    #expect(try hint("name == 'a' OR name == 'b'")?.1 == [.string("a"), .string("b")])
    #expect(try hint("name == 'a' OR age == 3") == nil)
    #expect(try hint("name ==[c] 'bob'") == nil)
    #expect(try hint("name != 'Bob'") == nil)
    #expect(try hint("NOT name == 'Bob'") == nil)
    #expect(try hint("age == 3") == nil)
    #expect(try hint("dog.name == 'Rex'") == nil)
    #expect(try hint("name == 'a' AND (age == 1 OR name == 'b')")?.1 == [.string("a")])
    #expect(try hint("count == 2", in: "AllTypes")?.1 == [.int(2)])
    #expect(try hint("count == 2.0", in: "AllTypes")?.1 == [.int(2)])
    #expect(try hint("count == 2.5", in: "AllTypes")?.1 == [])
    #expect(try hint("count IN {1, 2.5, 3}", in: "AllTypes")?.1 == [.int(1), .int(3)])
    #expect(try hint("uuid == nil", in: "AllTypes")?.1 == [.null])
    // The caller fetches candidates from the index and still calls matches on each.
    let query = try CompiledQuery(
      className: "Person", predicate: "name == 'Bob' AND age > 30", arguments: [], context: context)
    #expect(query.indexHint?.values == [.string("Bob")])
    #expect(try query.matches(2, context: context) == false)
  }

  @Test func chainedFilters() throws {
    let context = makeContext()
    let first = try CompiledQuery(className: "Person", predicate: "age >= 25", context: context)
    let second = try CompiledQuery(className: "Person", predicate: "name == %@", arguments: ["Dave"], context: context)
    let both = try first.and(second)
    #expect(try matching(both, context: context) == ["Dave"])
    #expect(both.indexHint?.values == [.string("Dave")])
    #expect(both.predicate.description == "age >= 25 AND name == 'Dave'")
    let all = CompiledQuery(className: "Person")
    #expect(all.matchesEverything)
    #expect(try matching(all.and(first), context: context) == ["Alice", "Bob", "Émile", "Dave"])
    let dogs = try CompiledQuery(className: "Dog", predicate: "age > 1", context: context)
    #expect(throws: QueryError.self) { try first.and(dogs) }
  }

  @Test func builtFromAST() throws {
    let context = makeContext()
    let olderThan21 = QueryPredicate.compare(.path("age"), .greater, .constant(.int(21)))
    #expect(
      try matching(CompiledQuery(className: "Person", predicate: olderThan21, context: context), context: context)
        == ["Alice", "Bob", "Émile", "Dave"])
    let predicate = QueryPredicate.and([
      .compare(.keyPath(QueryKeyPath(["dogs"]).appending(.avg).appending("age")), .greaterOrEqual, .constant(.int(3))),
      .not(
        .compare(
          .path("name"), .beginsWith, .constant(.string("é")), options: [.caseInsensitive, .diacriticInsensitive])),
      .compare(.path("tags"), .equal, .constant(.string("swift")), quantifier: .any),
    ])
    #expect(
      try matching(CompiledQuery(className: "Person", predicate: predicate, context: context), context: context)
        == ["Alice", "carol"])
    let subquery = QueryPredicate.compare(
      .subqueryCount(
        collection: QueryKeyPath(["dogs"]),
        predicate: .compare(.path("age"), .greater, .constant(.int(3)))),
      .greater, .constant(.int(1)))
    #expect(
      try matching(CompiledQuery(className: "Person", predicate: subquery, context: context), context: context)
        == ["carol"])
    let map = QueryPredicate.compare(
      .keyPath(QueryKeyPath([.property("attrs"), .subscript("a")])), .in, .constant(.list([.int(1), .int(2)])))
    #expect(
      try matching(CompiledQuery(className: "Person", predicate: map, context: context), context: context)
        == ["Alice", "Dave"])
    #expect(throws: QueryError.self) {
      try CompiledQuery(
        className: "Person", predicate: .compare(.path("nope"), .equal, .constant(.null)), context: context)
    }
  }

  @Test func descriptionRoundTrips() throws {
    let context = makeContext()
    let formats = [
      "age > 21 AND (name BEGINSWITH[c] 'a' OR NOT nick == nil)",
      "ANY dogs.age > 3 OR ALL tags IN {'swift', 'ios'}",
      "dogs.@avg.age >= 3 AND attrs['a'] == 1 AND attrs.@keys == 'b'",
      "SUBQUERY(dogs, $d, $d.age > 3 AND $d.name != 'x').@count > 0",
      "NONE scores BETWEEN {0, 2}",
      "name == 'it\\'s' OR score == 2.5 OR dog == nil",
    ]
    for format in formats {
      let query = try CompiledQuery(className: "Person", predicate: format, context: context)
      let reparsed = try CompiledQuery(className: "Person", predicate: query.predicate.description, context: context)
      #expect(reparsed.predicate == query.predicate, "\(format) → \(query.predicate)")
      #expect(try matching(reparsed, context: context) == matching(query, context: context))
    }
    let typed = [
      "date > T1500:0 OR date < T-1:-400000000", "uuid == uuid(11111111-2222-3333-4444-555555555555)",
      "data == B64\"YWJj\" OR flag == false", "f == 0.1 OR dec > 2", "date == nil",
    ]
    for format in typed {
      let query = try CompiledQuery(className: "AllTypes", predicate: format, context: context)
      let reparsed = try CompiledQuery(className: "AllTypes", predicate: query.predicate.description, context: context)
      #expect(try matching(reparsed, context: context) == matching(query, context: context), "\(query.predicate)")
      #expect(try !matching(query, context: context).isEmpty)
    }
    #expect(
      try CompiledQuery(
        className: "Person",
        predicate: "a == 1 OR b == 2 AND c == 3".replacingOccurrences(
          of: "a ", with: "age "
        ).replacingOccurrences(of: "b ", with: "age ").replacingOccurrences(
          of: "c ", with: "age "), context: context
      ).predicate.description
        == "age == 1 OR (age == 2 AND age == 3)")
  }

  @Test func parsedAST() throws {
    let context = makeContext()
    let query = try CompiledQuery(
      className: "Person", predicate: "ANY dogs.name ==[cd] %@ AND 3 < age", arguments: ["rex"], context: context)
    #expect(
      query.predicate
        == .and([
          .compare(
            .path("dogs", "name"), .equal, .constant(.string("rex")),
            options: [.caseInsensitive, .diacriticInsensitive],
            quantifier: .any),
          .compare(.constant(.int(3)), .less, .path("age")),
        ]))
    let keyPath = try CompiledQuery(
      className: "Person", predicate: "attrs['x'] > 1 OR dogs.@count > 1", context: context)
    #expect(
      keyPath.predicate
        == .or([
          .compare(.keyPath(QueryKeyPath([.property("attrs"), .subscript("x")])), .greater, .constant(.int(1))),
          .compare(.keyPath(QueryKeyPath([.property("dogs"), .count])), .greater, .constant(.int(1))),
        ]))
  }
}

// MARK: - Key paths and sorting

/// Sort key path resolution, values along key paths and the sort order.
@Suite struct KeyPathResolverTests {
  @Test func resolve() throws {
    let context = makeContext()
    let path = try KeyPathResolver.resolveKeyPath("dog.owner.name", from: "Person", context: context)
    #expect(path.map(\.name) == ["dog", "owner", "name"])
    #expect(try KeyPathResolver.resolveKeyPath("age", from: "Person", context: context).map(\.name) == ["age"])
    func message(_ path: String) -> String? {
      do {
        _ = try KeyPathResolver.resolveKeyPath(path, from: "Person", context: context)
        return nil
      } catch let error as QueryError {
        return error.message
      } catch {
        return "\(error)"
      }
    }
    #expect(message("nope") == "Cannot sort on key path 'nope': property 'Person.nope' does not exist.")
    #expect(message("dog.nope") == "Cannot sort on key path 'dog.nope': property 'Dog.nope' does not exist.")
    #expect(message("") == "Cannot sort on key path '': missing property name.")
    #expect(message("dog.") == "Cannot sort on key path 'dog.': missing property name.")
    #expect(
      message("dogs.name")
        == "Cannot sort on key path 'dogs.name': property 'Person.dogs' is of unsupported type 'array'.")
    #expect(
      message("attrs")
        == "Cannot sort on key path 'attrs': property 'Person.attrs' is of unsupported type 'dictionary'.")
    #expect(
      message("dog")
        == "Cannot sort on key path 'dog': property 'Person.dog' of type 'object' cannot be the final property "
        + "in the key path.")
    #expect(
      message("name.first")
        == "Cannot sort on key path 'name.first': property 'Person.name' of type 'string' may only be the final "
        + "property in the key path.")
    #expect(
      message("dogs.@count") == "Cannot sort on key path 'dogs.@count': KVC collection operators are not supported.")
    do {
      _ = try KeyPathResolver.resolveKeyPath("x", from: "Person", context: context, operation: "distinct")
    } catch let error as QueryError {
      #expect(error.message == "Cannot distinct on key path 'x': property 'Person.x' does not exist.")
    }
  }

  @Test func valueAtPath() throws {
    let context = makeContext()
    let path = try KeyPathResolver.resolveKeyPath("dog.owner.age", from: "Person", context: context)
    #expect(try KeyPathResolver.value(atPath: path, of: 4, in: "Person", context: context) == .int(17))
    #expect(try KeyPathResolver.value(atPath: path, of: 2, in: "Person", context: context) == .null)
    let name = try KeyPathResolver.resolveKeyPath("name", from: "Person", context: context)
    #expect(try KeyPathResolver.value(atPath: name, of: 1, in: "Person", context: context) == .string("Alice"))
  }

  @Test func sortOrder() {
    let values: [RowValue] = [
      .string("b"), .int(3), .null, .double(2.5), .bool(true), .string("B"), .float(-1), .bool(false),
      .decimal(Decimal128(3.5)), .date(Date(timeIntervalSince1970: 5)), .double(.nan), .string("é"),
      .data(Data([1])), .int(Int64.max), .double(3), .uuid(uuid1), .objectId(oid(1)),
    ]
    let sorted = values.sorted(by: KeyPathResolver.compareForSort)
    let expected: [RowValue] = [
      .null, .bool(false), .bool(true), .double(.nan), .float(-1), .double(2.5), .int(3), .double(3),
      .decimal(Decimal128(3.5)), .int(Int64.max), .string("B"), .string("b"), .string("é"), .data(Data([1])),
      .date(Date(timeIntervalSince1970: 5)), .objectId(oid(1)), .uuid(uuid1),
    ]
    #expect(sorted.count == expected.count)
    for (actual, wanted) in zip(sorted, expected) {
      // NaN != NaN: check that element by its kind.
      if case .double(let d) = wanted, d.isNaN {
        if case .double(let a) = actual { #expect(a.isNaN) } else { Issue.record("expected NaN, got \(actual)") }
      } else if case .int(3) = wanted {
        #expect(actual == .int(3) || actual == .double(3))
      } else if case .double(3) = wanted {
        #expect(actual == .int(3) || actual == .double(3))
      } else {
        #expect(actual == wanted)
      }
    }
    #expect(KeyPathResolver.compareForSort(.null, .int(0)))
    #expect(!KeyPathResolver.compareForSort(.int(0), .null))
    #expect(!KeyPathResolver.compareForSort(.int(3), .double(3)))
    #expect(!KeyPathResolver.compareForSort(.double(3), .int(3)))
    #expect(KeyPathResolver.compareForSort(.int(Int64.max - 1), .double(9_223_372_036_854_775_807.0)))
    #expect(KeyPathResolver.compareForSort(.string("Z"), .string("a")))
    #expect(KeyPathResolver.compareForSort(.link(1), .link(2)))
  }
}

/// The object layer's `QueryKeyPaths` facade and aggregates of decimals.
@Suite struct QueryKeyPathsFacadeTests {
  @Test func facade() throws {
    let context = makeContext()
    let path = try QueryKeyPaths.resolve("dog.name", from: "Person", context: context)
    #expect(try QueryKeyPaths.value(atPath: path, of: 1, in: "Person", context: context) == .string("Rex"))
    #expect(QueryKeyPaths.sortsBefore(.int(1), .double(1.5)))
    #expect(QueryKeyPaths.double(.decimal(Decimal128(2.5))) == 2.5)
    #expect(QueryKeyPaths.double(.int(3)) == 3)
    #expect(QueryKeyPaths.double(.string("3")) == nil)
    #expect(QueryKeyPaths.aggregate(.sum, of: [.int(1), .null, .int(2)]) == .int(3))
    #expect(QueryKeyPaths.aggregate(.sum, of: []) == .int(0))
    #expect(QueryKeyPaths.aggregate(.avg, of: []) == .null)
    #expect(QueryKeyPaths.aggregate(.avg, of: [.int(1), .int(2)]) == .double(1.5))
    #expect(QueryKeyPaths.aggregate(.sum, of: [.float(1.5), .int(1)]) == .double(2.5))
    #expect(QueryKeyPaths.aggregate(.max, of: [.int(1), .double(2.5), .null]) == .double(2.5))
    #expect(QueryKeyPaths.aggregate(.min, of: [.null]) == .null)
  }

  @Test func exactDecimalAggregates() {
    let tenths = Array(repeating: RowValue.decimal(Decimal128(0.1)), count: 10)
    #expect(QueryKeyPaths.aggregate(.sum, of: tenths) == .decimal(Decimal128(1)))
    #expect(QueryKeyPaths.aggregate(.avg, of: tenths) == .decimal(Decimal128(0.1)))
    #expect(QueryKeyPaths.aggregate(.sum, of: [.decimal(Decimal128(0.5)), .int(2)]) == .decimal(Decimal128(2.5)))
  }
}

// MARK: - Fast path

/// A class with one property of every kind and objects holding edge values (nulls, NaN, -0.0,
/// infinities, integers beyond 2^53, case and diacritic variants), for checking that the fast
/// path of `CompiledQuery.matches` agrees with the general evaluator.
private func makeEdgeContext() -> QETestContext {
  let context = QETestContext()
  context.addClass(
    "Edge",
    [
      property("i", .int), property("oi", .int, optional: true), property("d", .double),
      property("od", .double, optional: true), property("f", .float), property("s", .string),
      property("os", .string, optional: true), property("b", .bool), property("dt", .date, optional: true),
      property("dec", .decimal128, optional: true), property("data", .data, optional: true),
      property("u", .uuid, optional: true), property("o", .objectId, optional: true),
      property("a", .any, optional: true), property("link", .object, optional: true, target: "Edge"),
      property("ints", .int, .list),
    ])
  let integers: [Int64] = [0, 1, -1, .max, .min, 9_007_199_254_740_993, 5, 30, 2, -7, 100, 3]
  let doubles: [Double] = [0, -0.0, 1.5, .nan, .infinity, -.infinity, 9_007_199_254_740_992, 5, 30, 1e300, -2.5, 0.1]
  let floats: [Float] = [0, 1.5, .nan, 0.1, -3, 5, .infinity, 2.5, 0, 1, -0.0, 30]
  let strings = [
    "", "a", "Alice", "alice", "Émile", "emile", "ÉMILE", "x*y", "d?", "naïve café", "abcabc", "日本語",
  ]
  let anys: [RowValue] = [
    .int(5), .string("hello"), .double(.nan), .null, .typedLink(className: "Edge", key: 1), .bool(true),
    .data(Data("abc".utf8)), .float(1.5), .decimal(Decimal128(5)), .string("Émile"), .double(30), .int(-1),
  ]
  for index in 0..<12 {
    let key = ObjectKey(index + 1)
    context.add(
      "Edge", key,
      [
        "i": .int(integers[index]), "oi": index % 3 == 0 ? .null : .int(integers[(index + 5) % 12]),
        "d": .double(doubles[index]), "od": index % 4 == 1 ? .null : .double(doubles[(index + 3) % 12]),
        "f": .float(floats[index]), "s": .string(strings[index]),
        "os": index % 5 == 2 ? .null : .string(strings[(index + 4) % 12]), "b": .bool(index % 2 == 0),
        "dt": index % 3 == 1 ? .null : .date(Date(timeIntervalSince1970: Double(index * 1000 - 3000))),
        "dec": index % 4 == 3 ? .null : .decimal(Decimal128(Double(index) - 4.5)),
        "data": index % 3 == 2 ? .null : .data(Data(strings[index].utf8)),
        "u": index % 2 == 1 ? .null : .uuid(index % 4 == 0 ? uuid1 : uuid2),
        "o": index % 3 == 0 ? .null : .objectId(oid(UInt8(index))), "a": anys[index],
        "link": index % 2 == 0 ? .link(ObjectKey((index + 3) % 12 + 1)) : .null,
        "ints": ints(Array(integers.prefix(index % 4))),
      ])
  }
  return context
}

/// Constants compared with the `Edge` properties: every kind, with the edge values.
private let edgeConstants: [RowValue] = [
  .null, .int(0), .int(1), .int(5), .int(-1), .int(.max), .int(.min), .int(9_007_199_254_740_993), .int(30),
  .double(0), .double(-0.0), .double(1.5), .double(.nan), .double(.infinity), .double(-.infinity),
  .double(9_007_199_254_740_992), .double(5), .double(0.1), .float(1.5), .float(0.1), .float(.nan),
  .decimal(Decimal128(5)), .decimal(Decimal128(-0.5)), .bool(true), .bool(false), .string(""), .string("a"),
  .string("A"), .string("alice"), .string("ALICE"), .string("e"), .string("É"), .string("emile"), .string("x*y"),
  .string("*li*"), .string("?lice"), .string("a*"), .string("\\*"), .string("abc"), .string("c"), .string("日本"),
  .string("hello"), .string("*"), .date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: -3000)),
  .data(Data("abc".utf8)), .data(Data()), .uuid(uuid1), .objectId(oid(4)), .link(2),
  .typedLink(className: "Edge", key: 1),
]

/// Checks that `query` gives the same result through the fast path and the general evaluator for
/// every `Edge` object; returns how many objects matched.
@discardableResult
private func expectBothPathsAgree(
  _ query: CompiledQuery, context: QETestContext, sourceLocation: SourceLocation = #_sourceLocation
) throws -> Int {
  var matched = 0
  for key in context.keys(of: query.className) {
    let fast = try query.matches(key, context: context)
    let general = try query.matchesWithoutFastPath(key, context: context)
    if fast != general {
      Issue.record(
        "\(query.predicate) on object \(key): fast path \(fast), general \(general)", sourceLocation: sourceLocation)
    }
    if general { matched += 1 }
  }
  return matched
}

/// The fast path of `CompiledQuery.matches` (a column against constants, and AND/OR/NOT of
/// those) against the general evaluator: every operator, option and kind of value.
@Suite struct QueryFastPathTests {
  private static let properties = [
    "i", "oi", "d", "od", "f", "s", "os", "b", "dt", "dec", "data", "u", "o", "a", "link",
  ]

  @Test func everyOperatorAgreesWithTheGeneralPath() throws {
    let context = makeEdgeContext()
    let optionSets: [QueryStringOptions] = [
      [], [.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive],
    ]
    var checked = 0
    var matchedSome = 0
    let operators = QueryOperator.allCases.filter { $0 != .in && $0 != .between }
    for name in Self.properties {
      for op in operators {
        for constant in edgeConstants {
          let isString: Bool
          if case .string = constant { isString = true } else { isString = false }
          for options in isString ? optionSets : [[]] {
            let predicate = QueryPredicate.compare(.path(name), op, .constant(constant), options: options)
            guard let query = try? CompiledQuery(className: "Edge", predicate: predicate, context: context) else {
              continue
            }
            #expect(query.usesFastPath, "\(predicate)")
            if try expectBothPathsAgree(query, context: context) > 0 { matchedSome += 1 }
            checked += 1
          }
        }
      }
    }
    // Most combinations are valid queries, and many match something.
    #expect(checked > 1500)
    #expect(matchedSome > 500)
  }

  @Test func inAndBetweenAgreeWithTheGeneralPath() throws {
    let context = makeEdgeContext()
    var checked = 0
    for name in Self.properties {
      for (index, first) in edgeConstants.enumerated() {
        let second = edgeConstants[(index * 7 + 3) % edgeConstants.count]
        let third = edgeConstants[(index * 11 + 5) % edgeConstants.count]
        let lists: [[RowValue]] = [[], [first], [first, second], [first, second, third]]
        for list in lists {
          for options in [[], [.caseInsensitive, .diacriticInsensitive]] as [QueryStringOptions] {
            let predicate = QueryPredicate.compare(.path(name), .in, .constant(.list(list)), options: options)
            guard let query = try? CompiledQuery(className: "Edge", predicate: predicate, context: context) else {
              continue
            }
            #expect(query.usesFastPath, "\(predicate)")
            try expectBothPathsAgree(query, context: context)
            checked += 1
          }
        }
        for high in [second, third, first] {
          let predicate = QueryPredicate.compare(.path(name), .between, .constant(.list([first, high])))
          guard let query = try? CompiledQuery(className: "Edge", predicate: predicate, context: context) else {
            continue
          }
          #expect(query.usesFastPath, "\(predicate)")
          try expectBothPathsAgree(query, context: context)
          checked += 1
        }
      }
    }
    #expect(checked > 800)
  }

  @Test func formatStringsAgreeWithTheGeneralPath() throws {
    let context = makeEdgeContext()
    let formats: [(String, [Any?])] = [
      ("d BETWEEN {%@, %@}", [0.0, 100.0]), ("d BETWEEN {%@, %@}", [-1, 5]), ("f BETWEEN {0, 2}", []),
      ("i BETWEEN {-1, 5}", []), ("i BETWEEN {-1.5, 5.5}", []), ("od BETWEEN {0, 10}", []),
      ("dec BETWEEN {-1, 1}", []), ("dt BETWEEN {%@, %@}", [Date(timeIntervalSince1970: -3000), Date()]),
      ("a BETWEEN {1, 10}", []), ("i IN {1, 5, 30}", []), ("s IN[c] {'ALICE', 'x*y'}", []),
      ("d > %@ AND s BEGINSWITH %@", [0.5, "a"]), ("d > 0 OR s ENDSWITH[c] 'E'", []),
      ("NOT (i < 3 AND d >= 0)", []), ("s CONTAINS[cd] 'E' AND NOT os == nil", []), ("s LIKE[c] '*LI*'", []),
      ("os != nil AND os != ''", []), ("oi == nil OR oi > 2", []), ("a == 'hello' OR a > 4", []),
      ("s ==[d] 'emile' OR s ==[cd] 'EMILE'", []), ("TRUEPREDICATE AND d < 10", []),
      ("FALSEPREDICATE OR b == true", []),
    ]
    for (format, arguments) in formats {
      let query = try CompiledQuery(className: "Edge", predicate: format, arguments: arguments, context: context)
      #expect(query.usesFastPath, "\(format)")
      try expectBothPathsAgree(query, context: context)
    }
  }

  @Test func mixedPredicatesKeepTheGeneralPathForTheRest() throws {
    let context = makeEdgeContext()
    // Parts that are not a column against constants go to the evaluator, inside AND/OR/NOT.
    let mixed = [
      "d > 0 AND link.i > 0", "link.s BEGINSWITH 'a' OR i == 5", "NOT (ints.@count > 1) AND s != ''",
      "ANY ints > 2 OR d < 0", "i == oi OR s == 'a'", "a.@type == 'int' AND i > -5",
      "SUBQUERY(ints, $x, $x > 0).@count > 1 OR b == false", "link == nil AND d == d",
    ]
    for format in mixed {
      let query = try CompiledQuery(className: "Edge", predicate: format, context: context)
      #expect(query.usesFastPath, "\(format)")
      try expectBothPathsAgree(query, context: context)
    }
    // Nothing to do on the fast path: the whole predicate is evaluated as before.
    let general = [
      "link.i > 0", "ints > 1", "i == oi", "a.@type == 'int'", "ints.@sum > 1", "ANY ints == 5",
      "SUBQUERY(ints, $x, $x > 0).@count > 1", "s.@count > 3", "NOT link.d > 0 OR ints.@count == 0",
    ]
    for format in general {
      let query = try CompiledQuery(className: "Edge", predicate: format, context: context)
      #expect(!query.usesFastPath, "\(format)")
      try expectBothPathsAgree(query, context: context)
    }
    #expect(!CompiledQuery(className: "Edge").usesFastPath)
  }

  @Test func chainedFiltersAgree() throws {
    let context = makeEdgeContext()
    let first = try CompiledQuery(className: "Edge", predicate: "d >= 0", context: context)
    let second = try CompiledQuery(className: "Edge", predicate: "link.i != 1 OR s CONTAINS 'a'", context: context)
    let both = try first.and(second)
    #expect(both.usesFastPath)
    let matched = try expectBothPathsAgree(both, context: context)
    #expect(matched > 0)
  }

  @Test func singleValuedPathsReadOneValue() throws {
    // The general evaluator reads a key path that is not to-many without arrays; the value is the
    // one the array-building read gives.
    let context = makeContext()
    let binder = QueryBinder(context: context)
    let evaluator = QueryEvaluator(context: context)
    let paths = [
      "name", "score", "dog", "dog.name", "dog.owner.name", "dog.owner.dog.age", "attrs['a']", "name.@count",
      "nick.@size", "dogs.@count", "dogs.@avg.age", "dogs.@max.age", "scores.@sum", "scores.@min", "tags.@count",
      "dog.owner.dogs.@count", "dog.owners.@count",
    ]
    for text in paths {
      let elements = text.replacingOccurrences(of: "['a']", with: "").split(separator: ".").map { element in
        switch element {
        case "@count": return QueryKeyPath.Element.count
        case "@size": return .size
        case "@avg": return .avg
        case "@max": return .max
        case "@min": return .min
        case "@sum": return .sum
        default: return .property(String(element))
        }
      }
      let keyPath = QueryKeyPath(text.hasSuffix("['a']") ? elements + [.subscript("a")] : elements)
      let path = try binder.bindPath(keyPath, scope: .object("Person"))
      #expect(!path.isMulti, "\(text)")
      for key in context.keys(of: "Person") {
        let values = try evaluator.values(of: path, on: .object(key))
        #expect(values.count == 1, "\(text)")
        #expect(try [evaluator.singleValue(of: path, on: .object(key))] == values, "\(text) of \(key)")
      }
    }
  }

  @Test func foldingMatchesFoundation() {
    // ASCII strings are folded without Foundation; the result must be Foundation's.
    var samples = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
    samples += [
      "", "Hello World", "ABC xyz 0123 ^`~'\\", "x*Y?", "Émile", "naïve CAFÉ", "ß", "İstanbul", "ﬁ", "日本語",
      "MiXeD ascii É", String(repeating: "LongASCIIString ", count: 4),
    ]
    let optionSets: [(QueryStringOptions, String.CompareOptions)] = [
      ([.caseInsensitive], [.caseInsensitive]), ([.diacriticInsensitive], [.diacriticInsensitive]),
      ([.caseInsensitive, .diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive]),
    ]
    for (options, foundationOptions) in optionSets {
      for sample in samples {
        let expected = sample.folding(options: foundationOptions, locale: nil)
        #expect(Array(QueryValues.fold(sample, options).utf8) == Array(expected.utf8), "\(sample) \(options)")
      }
    }
    #expect(QueryValues.fold("AbC", []) == "AbC")
  }

  @Test func likeMatchesCompiledPatterns() {
    func like(_ text: String, _ pattern: String) -> Bool {
      let tokens = QueryValues.likeTokens(Array(pattern.unicodeScalars), star: "*", question: "?", escape: "\\")
      let fast = QueryValues.like(text.unicodeScalars, tokens)
      let general = QueryValues.like(
        Array(text.unicodeScalars), Array(pattern.unicodeScalars), star: "*", question: "?", escape: "\\")
      #expect(fast == general, "'\(text)' LIKE '\(pattern)'")
      return fast
    }
    #expect(like("alice", "a*e"))
    #expect(like("alice", "?lice"))
    #expect(!like("alice", "?ice"))
    #expect(like("x*y", "x\\*y"))
    #expect(!like("xzy", "x\\*y"))
    #expect(like("", "*"))
    #expect(!like("", "?"))
    #expect(like("日本語", "日*"))
    #expect(like("abcabc", "*b*b?"))
    #expect(!like("abcabc", "*b*b"))
  }
}

/// The fast path through the object layer's context, which reads a tested row's columns by their
/// storage index: the same results as the general evaluator, and as `Results`.
@Suite struct RealmQueryContextFastPathTests {
  @Test func scanAgreesWithTheGeneralPath() throws {
    let realm = try Realm(configuration: memoryConfiguration())
    let words = ["", "alpha", "Beta", "émile", "EMILE", "x*y", "gamma ray", "Alpha"]
    try realm.write {
      for index in 0..<40 {
        let object = AllTypes()
        object.int = index * 7 % 23 - 5
        // Integers of several bytes before `double`, which the in-place reads skip.
        object.int32 = Int32(index * 40_000)
        object.int64 = Int64(index) * 1_000_003 - 20_000_000
        object.double = index % 9 == 4 ? .nan : Double(index) * 1.25 - 10
        object.float = Float(index % 6) - 2.5
        object.string = words[index % words.count]
        object.optString = index % 3 == 0 ? nil : words[(index + 3) % words.count]
        object.optInt = index % 4 == 0 ? nil : index
        object.bool = index % 2 == 0
        object.date = Date(timeIntervalSince1970: Double(index * 100))
        object.any = index % 5 == 0 ? .string("five") : (index % 5 == 1 ? .none : .int(index))
        realm.add(object)
      }
    }
    let core = realm.core
    guard let table = core.table(named: "AllTypes") else {
      Issue.record("no AllTypes table")
      return
    }
    let formats: [(String, [Any])] = [
      ("double BETWEEN {%@, %@}", [0.0, 20.0]), ("int > %@ AND string BEGINSWITH %@", [0, "a"]),
      ("string BEGINSWITH[c] 'a' OR float < 0", []), ("optString == nil", []), ("optString !=[cd] 'emile'", []),
      ("optInt IN {1, 2, 3, 10, 11}", []), ("NOT (double >= 0)", []), ("string LIKE '*a*'", []),
      ("date < %@", [Date(timeIntervalSince1970: 1500)]), ("any == 'five' OR any > 30", []),
      ("bool == true AND int BETWEEN {-2, 5}", []), ("string CONTAINS[cd] 'MIL' AND optInt != nil", []),
      // Numbers read in place (no RowValue) where the column holds the constant's kind; other
      // values of the column (nil, a string in `any`) decode and go the matcher's way.
      ("int < 3 AND double > -5 AND double <= 12.5", []), ("int BETWEEN {-5, 0} AND double != 0", []),
      ("optInt >= 2 AND optInt < 30", []), ("any BETWEEN {3, 20}", []), ("any < 30 AND int > 0", []),
      ("double > 2", []), ("int < 2.5", []), ("int BETWEEN {-1.5, 4.5}", []), ("double BETWEEN {-3, 7}", []),
      ("optInt == 5 OR double == 2.5", []),
    ]
    for (format, arguments) in formats {
      let query = try CompiledQuery(
        className: "AllTypes", predicate: format, arguments: arguments, context: core.queryContext)
      #expect(query.usesFastPath, "\(format)")
      let context = RealmQueryContext(core: core)
      var fastCount = 0
      var generalCount = 0
      var quickCount = 0
      // The row filter (tests on the encoded row, no context) where the query is columns only.
      let rowFilter = RowFilter(query, table: table)
      let columnTests = rowFilter.flatMap { RowFilter.columnTests([$0], table: table) }
      if format.hasPrefix("double BETWEEN") || format.hasPrefix("bool == true AND") {
        #expect(columnTests != nil, "\(format) is tested column by column")
      }
      try core.scanRaw(table) { key, raw in
        context.setCurrent(table, key, raw: raw)
        if try query.matches(key, context: context) { fastCount += 1 }
        let general = try query.matchesWithoutFastPath(key, context: context)
        if general { generalCount += 1 }
        if let rowFilter { #expect(try rowFilter.matches(raw) == general, "\(format), object \(key)") }
        if let columnTests {
          #expect(try columnTests.matches(raw) == general, "\(format), object \(key)")
          if let quick = columnTests.quickMatches(raw) {
            quickCount += 1
            #expect(quick == general, "\(format), object \(key), read in place")
          }
        }
      }
      context.clearCurrent()
      // Tests of numbers only read every row in place where the columns hold numbers of a form
      // the constants have; an integer column against 2.5 goes the matcher's way.
      let readInPlace = [
        "double BETWEEN {%@, %@}", "int < 3 AND double > -5 AND double <= 12.5", "int BETWEEN {-5, 0} AND double != 0",
        "double > 2", "double BETWEEN {-3, 7}",
      ]
      if readInPlace.contains(format) { #expect(quickCount == 40, "\(format) read every row in place") }
      if format == "int < 2.5" || format == "int BETWEEN {-1.5, 4.5}" { #expect(quickCount == 0, "\(format)") }
      if format.hasPrefix("optInt >=") {
        #expect(quickCount == 30, "\(format): the rows whose optInt is nil are decoded")
      }
      #expect(fastCount == generalCount, "\(format)")
      #expect(realm.objects(AllTypes.self).filter(format, argumentList: arguments).count == generalCount, "\(format)")
    }
  }
}

/// Sorting by one `Double` or `Int` property compares natively: the same order as the general
/// comparison of `RowValue`s (NaN first, ties in their original order), both directions.
@Suite struct NativeSortTests {
  private func generalOrder(_ keys: [RowValue], ascending: Bool) -> [Int] {
    keys.indices.sorted { i, j in
      if QueryKeyPaths.sortsBefore(keys[i], keys[j]) { return ascending }
      if QueryKeyPaths.sortsBefore(keys[j], keys[i]) { return !ascending }
      return i < j
    }
  }

  @Test func doublesAndIntsSortAsTheGeneralComparison() {
    let doubles: [Double] = [3, .nan, -0.0, 0, 1.5, .infinity, -.infinity, 3, .nan, -2, 1.5, .greatestFiniteMagnitude]
    var random = SystemRandomNumberGenerator()
    let ints: [Int64] = (0..<200).map { _ in Int64.random(in: -5...5, using: &random) } + [.max, .min, 0]
    for ascending in [true, false] {
      let doubleKeys = doubles.map { RowValue.double($0) }
      #expect(
        ResultsState.nativeOrder(doubleKeys, ascending: ascending) == generalOrder(doubleKeys, ascending: ascending))
      let intKeys = ints.map { RowValue.int($0) }
      #expect(ResultsState.nativeOrder(intKeys, ascending: ascending) == generalOrder(intKeys, ascending: ascending))
    }
    // Mixed or other kinds go the general way.
    #expect(ResultsState.nativeOrder([.double(1), .int(2)], ascending: true) == nil)
    #expect(ResultsState.nativeOrder([.double(1), .null], ascending: true) == nil)
    #expect(ResultsState.nativeOrder([.string("a")], ascending: true) == nil)
  }
}
