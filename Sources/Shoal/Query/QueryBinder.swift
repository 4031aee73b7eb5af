import Foundation

/// Resolves a `QueryPredicate` against the schema: checks every key path, operator and constant,
/// and produces the `BoundPredicate` that the evaluator runs.
struct QueryBinder {
  let context: any QueryContext

  /// Where key paths start: an object of a class, or (in a subquery over a collection of values)
  /// the element value, described by the collection property.
  enum Scope {
    case object(String)
    case value(QueryProperty)
  }

  func bind(_ predicate: QueryPredicate, scope: Scope) throws -> BoundPredicate {
    switch predicate {
    case .truePredicate: return .constant(true)
    case .falsePredicate: return .constant(false)
    case .and(let terms): return .and(try terms.map { try bind($0, scope: scope) })
    case .or(let terms): return .or(try terms.map { try bind($0, scope: scope) })
    case .not(let inner): return .not(try bind(inner, scope: scope))
    case .comparison(let comparison): return try bindComparison(comparison, scope: scope)
    }
  }

  // MARK: Key paths

  func bindPath(_ keyPath: QueryKeyPath, scope: Scope) throws -> BoundPath {
    let text = keyPath.description
    let elements = keyPath.elements
    switch scope {
    case .value(let collection):
      var path = BoundPath(
        text: text.isEmpty ? collection.name : text, links: [], last: nil, terminal: .value, isMulti: false,
        kind: collection.kind,
        targetClass: collection.targetClass)
      guard let element = elements.first else { return path }
      switch element {
      case .count where elements.count == 1, .size where elements.count == 1:
        guard collection.kind == .string || collection.kind == .data else {
          throw QueryError.keyPath(text, "collection operation '\(element.text)' must be applied to a collection")
        }
        path.terminal = .count
        path.kind = .int
      case .type where elements.count == 1:
        path.terminal = .type
      default:
        throw QueryError.keyPath(
          text,
          "\(QueryDescribe.typeName(collection.kind)) property \(collection.name) can only be followed by a "
            + "collection operation.")
      }
      return path
    case .object(let className):
      return try bindObjectPath(elements, text: text, className: className)
    }
  }

  private func bindObjectPath(_ elements: [QueryKeyPath.Element], text: String, className: String) throws -> BoundPath {
    guard !elements.isEmpty else { throw QueryError.keyPath(text, "empty key path") }
    var currentClass = className
    var links: [BoundStep] = []
    var last: BoundStep?
    var terminal = BoundTerminal.value
    var crossesToMany = false
    var index = 0
    while index < elements.count {
      let element = elements[index]
      let isFinal = index == elements.count - 1
      if case .property(let name) = element {
        if let previous = last {
          if case .value = terminal {
          } else {
            throw QueryError.keyPath(text, "\(terminalName(terminal)) must appear at the end of a keypath.")
          }
          guard previous.property.kind == .object, let target = previous.property.targetClass else {
            if previous.property.collection != .none {
              throw QueryError.keyPath(
                text,
                "\(QueryDescribe.typeName(previous.property.kind)) property \(previous.property.name) can only be "
                  + "followed by a collection operation.")
            }
            throw QueryError.keyPath(
              text,
              "Property '\(previous.className).\(previous.property.name)' is not a link or collection and can "
                + "only appear at the end of a keypath.")
          }
          links.append(previous)
          if previous.property.collection != .none { crossesToMany = true }
          currentClass = target
        }
        guard let property = context.queryProperty(name, of: currentClass) else {
          throw QueryError.propertyNotFound(keyPath: text, property: name, className: currentClass)
        }
        last = BoundStep(property: property, className: currentClass)
        index += 1
        continue
      }
      guard let previous = last else {
        throw QueryError.keyPath(text, "a key path must start with a property name")
      }
      if case .value = terminal {
      } else {
        throw QueryError.keyPath(text, "at most one collection operation per keypath is supported.")
      }
      let property = previous.property
      switch element {
      case .property:
        break
      case .count, .size:
        guard isFinal else { throw QueryError.keyPath(text, "\(element.text) must appear at the end of a keypath.") }
        guard property.collection != .none || property.kind == .string || property.kind == .data else {
          throw QueryError.keyPath(text, "collection operation '\(element.text)' must be applied to a collection")
        }
        terminal = .count
      case .keys:
        guard property.collection == .map else {
          throw QueryError.keyPath(text, "@keys must follow a dictionary property.")
        }
        guard isFinal else { throw QueryError.keyPath(text, "@keys must appear at the end of a keypath.") }
        terminal = .keys
      case .values:
        guard property.collection == .map else {
          throw QueryError.keyPath(text, "@values must follow a dictionary property.")
        }
      case .subscript, .index, .all:
        var rest = elements[index...]
        var mapKey: String?
        if property.collection == .map {
          guard case .subscript(let key) = element else {
            throw QueryError.keyPath(text, "only string keys are allowed as subscripts in dictionary queries")
          }
          rest = rest.dropFirst()
          if rest.isEmpty {
            terminal = .subscript(key)
            break
          }
          guard property.kind == .any else {
            throw QueryError.keyPath(text, "only dictionaries and realm `Any` support subscript predicates.")
          }
          mapKey = key
        } else if property.kind != .any || property.collection != .none {
          throw QueryError.keyPath(text, "only dictionaries and realm `Any` support subscript predicates.")
        }
        var steps: [MixedStep] = []
        for step in rest {
          switch step {
          case .subscript(let key): steps.append(.key(key))
          case .index(let position): steps.append(.index(position))
          case .all: steps.append(.all)
          default:
            throw QueryError.keyPath(text, "a subscript of a mixed value can only be followed by more subscripts")
          }
        }
        terminal = .mixed(mapKey: mapKey, steps: steps)
        index = elements.count
        continue
      case .type:
        guard property.kind == .any else {
          throw QueryError.keyPath(text, "@type can only be applied to a property of type 'mixed'.")
        }
        guard isFinal else { throw QueryError.keyPath(text, "@type must appear at the end of a keypath.") }
        terminal = .type
      case .sum, .avg, .min, .max:
        let aggregate: BoundAggregate =
          switch element {
          case .sum: .sum
          case .avg: .avg
          case .min: .min
          default: .max
          }
        guard property.collection != .none else {
          throw QueryError.keyPath(text, "collection operation '\(element.text)' must be applied to a collection")
        }
        if property.kind == .object {
          guard index + 1 < elements.count, case .property(let name) = elements[index + 1],
            let target = property.targetClass
          else {
            throw QueryError.keyPath(
              text, "\(element.text) on a collection of objects cannot appear at the end of a keypath.")
          }
          guard let elementProperty = context.queryProperty(name, of: target) else {
            throw QueryError.propertyNotFound(keyPath: text, property: name, className: target)
          }
          guard elementProperty.collection == .none, isAggregatable(elementProperty.kind, aggregate) else {
            throw QueryError.keyPath(text, "\(element.text) must be followed by a numeric property.")
          }
          guard index + 2 == elements.count else {
            throw QueryError.keyPath(
              text,
              "Property '\(target).\(name)' is not a link or collection and can only appear at the end of a keypath.")
          }
          if elementProperty.kind == .date && (aggregate == .sum || aggregate == .avg) {
            throw QueryError(.unsupportedOperator, "Cannot sum or average date properties")
          }
          terminal = .aggregate(aggregate, element: BoundStep(property: elementProperty, className: target))
          index += 2
          continue
        }
        guard isFinal else {
          throw QueryError.keyPath(
            text, "\(element.text) on a collection of values must appear at the end of a keypath.")
        }
        guard isAggregatable(property.kind, aggregate) else {
          throw QueryError.keyPath(text, "\(element.text) can only be applied to a collection of numeric values.")
        }
        if property.kind == .date && (aggregate == .sum || aggregate == .avg) {
          throw QueryError(.unsupportedOperator, "Cannot sum or average date properties")
        }
        terminal = .aggregate(aggregate, element: nil)
      }
      index += 1
    }
    guard let last else { throw QueryError.keyPath(text, "empty key path") }
    let property = last.property
    var kind = property.kind
    var targetClass = property.kind == .object ? property.targetClass : nil
    var isMulti = crossesToMany
    switch terminal {
    case .value, .type:
      if property.collection != .none { isMulti = true }
    case .keys:
      kind = .string
      targetClass = nil
      isMulti = true
    case .count:
      kind = .int
      targetClass = nil
    case .subscript:
      break
    case .mixed:
      kind = .any
      targetClass = nil
      isMulti = true
    case .aggregate(let aggregate, let element):
      targetClass = nil
      let valueKind = element?.property.kind ?? property.kind
      switch aggregate {
      case .min, .max: kind = valueKind
      case .sum: kind = valueKind == .float ? .double : valueKind
      case .avg: kind = valueKind == .decimal128 || valueKind == .any ? valueKind : .double
      }
    }
    return BoundPath(
      text: text, links: links, last: last, terminal: terminal, isMulti: isMulti, kind: kind, targetClass: targetClass)
  }

  private func terminalName(_ terminal: BoundTerminal) -> String {
    switch terminal {
    case .value: return "a property"
    case .count: return "@count"
    case .keys: return "@keys"
    case .subscript, .mixed: return "a subscript"
    case .aggregate(let aggregate, _): return aggregate.rawValue
    case .type: return "@type"
    }
  }

  private func isAggregatable(_ kind: QueryProperty.Kind, _ aggregate: BoundAggregate) -> Bool {
    switch kind {
    case .int, .float, .double, .decimal128, .any, .date: return true
    case .bool, .string, .data, .uuid, .objectId, .object: return false
    }
  }

  // MARK: Operands

  /// Facts about an operand used to check a comparison.
  private struct OperandInfo {
    var kind: QueryProperty.Kind
    var targetClass: String?
    /// The property named in messages (the last property of the key path).
    var propertyName: String
    /// `@count`, `@sum`… when the operand is an aggregate.
    var aggregate: String?
    /// For aggregates: the type of the values aggregated, named in messages.
    var aggregatedType: String
    var isKeys: Bool
    /// The key path as written and the class it starts from, for RealmSwift's message about a
    /// constant of the wrong type (nil: that message does not apply, as for a collection).
    var plainProperty: (keyPath: String, rootClass: String)? = nil

    var typeName: String { targetClass ?? QueryDescribe.typeName(kind) }
  }

  private func info(_ path: BoundPath) -> OperandInfo {
    let name = path.last?.property.name ?? path.text
    var info = OperandInfo(
      kind: path.kind, targetClass: path.targetClass, propertyName: name, aggregate: nil,
      aggregatedType: QueryDescribe.typeName(path.kind), isKeys: false)
    if !path.isMulti, path.kind != .object, let root = (path.links.first ?? path.last)?.className {
      info.plainProperty = (path.text, root)
    }
    switch path.terminal {
    case .count:
      info.aggregate = "@count"
    case .aggregate(let aggregate, let element):
      info.aggregate = aggregate.rawValue
      info.aggregatedType = QueryDescribe.typeName(element?.property.kind ?? path.last?.property.kind ?? path.kind)
    case .keys:
      info.isKeys = true
    case .value, .subscript, .type, .mixed:
      break
    }
    return info
  }

  private func bindOperand(_ expression: QueryExpression, scope: Scope) throws -> (BoundOperand, OperandInfo?) {
    switch expression {
    case .constant(let value):
      return (.constant(value), nil)
    case .geometry(let shape):
      throw QueryError(
        .unsupported, "The geospatial shape \(shape) can only be on the right side of IN or GEOWITHIN after a key path")
    case .keyPath(let keyPath):
      let path = try bindPath(keyPath, scope: scope)
      return (.path(path), info(path))
    case .subqueryCount(let collectionPath, let predicate):
      let collection = try bindPath(collectionPath, scope: scope)
      guard let last = collection.last, case .value = collection.terminal, last.property.collection != .none else {
        let type = collection.last.map { QueryDescribe.typeName(of: $0.property) } ?? "value"
        throw QueryError(
          .invalidKeyPath,
          "A subquery must operate on a list property, but '\(collection.text)' is type '\(type)'")
      }
      let elementScope: Scope
      let elementsAreObjects: Bool
      if last.property.kind == .object, let target = last.property.targetClass {
        elementScope = .object(target)
        elementsAreObjects = true
      } else {
        elementScope = .value(last.property)
        elementsAreObjects = false
      }
      let inner = try bind(predicate, scope: elementScope)
      let subquery = BoundSubquery(collection: collection, predicate: inner, elementsAreObjects: elementsAreObjects)
      let info = OperandInfo(
        kind: .int, targetClass: nil, propertyName: collection.text, aggregate: "@count", aggregatedType: "int",
        isKeys: false)
      return (.subqueryCount(subquery), info)
    }
  }

  // MARK: Comparisons

  private func isConstant(_ expression: QueryExpression) -> Bool {
    if case .constant = expression { return true }
    return false
  }

  private func bindComparison(_ comparison: QueryComparison, scope: Scope) throws -> BoundPredicate {
    if case .geometry(let shape) = comparison.rhs { return try bindGeoWithin(comparison, shape: shape, scope: scope) }
    if comparison.op == .geoWithin {
      if case .constant(.null) = comparison.rhs {
        throw QueryError(.invalidArgument, "NULL cannot be used on the right hand side of a GEOWITHIN query")
      }
      throw QueryError(
        .invalidArgument, "GEOWITHIN needs a GeoBox, GeoPolygon or GeoCircle on its right side, not '\(comparison.rhs)'"
      )
    }
    var lhs = comparison.lhs
    var rhs = comparison.rhs
    var op = comparison.op
    var quantifier = comparison.quantifier
    var reversedIn = false
    if isConstant(lhs) && isConstant(rhs) {
      throw QueryError(
        .unsupported, "Predicate expressions must compare a keypath and another keypath or a constant value")
    }
    if isConstant(lhs) {
      if op == .in {
        // "value IN list" is "ANY list == value".
        swap(&lhs, &rhs)
        op = .equal
        reversedIn = true
        if quantifier == .implicit { quantifier = .any }
      } else if let flipped = op.flipped {
        swap(&lhs, &rhs)
        op = flipped
      } else {
        throw QueryError(.unsupported, "Operator '\(op.rawValue)' requires a keypath on the left side.")
      }
    }
    let (left, leftInfoOrNil) = try bindOperand(lhs, scope: scope)
    let (right, rightInfo) = try bindOperand(rhs, scope: scope)
    guard let leftInfo = leftInfoOrNil else {
      throw QueryError(
        .unsupported, "Predicate expressions must compare a keypath and another keypath or a constant value")
    }
    let leftIsMulti = isMulti(left)

    let boundQuantifier: BoundQuantifier
    switch quantifier {
    case .implicit:
      boundQuantifier = leftIsMulti ? .any : .single
    case .any, .all, .none:
      if !leftIsMulti {
        if leftInfo.kind == .any {
          boundQuantifier = .single
          break
        }
        if reversedIn, case .path(let path) = left {
          throw QueryError(
            .unsupported,
            "Key path '\(path.text)' on the right of IN must be a collection; use a comparison such as '=='")
        }
        throw QueryError(
          .unsupported, "Aggregate operations can only be used on key paths that include an collection property")
      }
      boundQuantifier =
        switch quantifier {
        case .all: .all
        case .none: .none
        default: .any
        }
    }

    if case .path(let path) = left, case .type = path.terminal {
      return try bindTypeCheck(path, op: op, rhs: right, quantifier: boundQuantifier)
    }

    var boundOp: BoundOperator
    var rhsIsList = false
    switch op {
    case .equal: boundOp = .equal
    case .notEqual: boundOp = .notEqual
    case .less: boundOp = .less
    case .lessOrEqual: boundOp = .lessOrEqual
    case .greater: boundOp = .greater
    case .greaterOrEqual: boundOp = .greaterOrEqual
    case .beginsWith: boundOp = .beginsWith
    case .endsWith: boundOp = .endsWith
    case .contains: boundOp = .contains
    case .like: boundOp = .like
    case .in:
      boundOp = .equal
      if case .constant = right {
        rhsIsList = true
      } else if !isMulti(right) {
        throw QueryError(.unsupported, "Predicate with IN operator must compare a KeyPath with an aggregate")
      }
    case .between:
      boundOp = .between
      rhsIsList = true
    case .geoWithin:
      // A shape on the right was bound by `bindGeoWithin`; anything else was rejected first.
      throw QueryError(.invalidArgument, "GEOWITHIN needs a GeoBox, GeoPolygon or GeoCircle on its right side")
    }
    let options = comparison.options
    try checkOperator(boundOp, options: options, info: leftInfo)

    var boundRight = right
    if let rightInfo {
      if boundOp == .between {
        throw QueryError(
          .unsupported, "Predicate with BETWEEN operator must compare a KeyPath with an aggregate with two values")
      }
      try checkOperator(boundOp, options: options, info: rightInfo)
      try checkComparable(leftInfo, rightInfo)
    } else if case .constant(let value) = right {
      boundRight = .constant(try checkConstant(value, op: boundOp, isList: rhsIsList, info: leftInfo))
    }
    return .comparison(
      BoundComparison(
        lhs: left, op: boundOp, rhs: boundRight, options: options, quantifier: boundQuantifier, rhsIsList: rhsIsList))
  }

  /// `location IN shape` / `location GEOWITHIN shape`: `location` must be a to-one link to an
  /// embedded class with a `type` String and `coordinates` list of doubles (GeoJSON's point).
  private func bindGeoWithin(_ comparison: QueryComparison, shape: GeoShape, scope: Scope) throws -> BoundPredicate {
    guard comparison.op == .in || comparison.op == .geoWithin, comparison.quantifier == .implicit,
      comparison.options.isEmpty, case .keyPath(let keyPath) = comparison.lhs
    else {
      throw QueryError(
        .unsupported, "A geospatial shape can only be compared with 'key.path IN shape' or 'key.path GEOWITHIN shape'")
    }
    let text = "\(keyPath) GEOWITHIN \(shape)"
    let path = try bindPath(keyPath, scope: scope)
    guard path.kind == .object, !path.isMulti, let target = path.targetClass else {
      throw QueryError(.typeMismatch, "Query '\(text)' links to data in the wrong format for a geoWithin query")
    }
    if context.isEmbeddedClass(target) == false {
      throw QueryError(
        .unsupported,
        "A GEOWITHIN query can only operate on a link to an embedded class but '\(target)' is at the top level")
    }
    guard let type = context.queryProperty("type", of: target), type.kind == .string, type.collection == .none,
      let coordinates = context.queryProperty("coordinates", of: target), coordinates.kind == .double,
      coordinates.collection == .list
    else {
      throw QueryError(.typeMismatch, "Query '\(text)' links to data in the wrong format for a geoWithin query")
    }
    let region: PreparedGeoRegion
    do {
      region = try PreparedGeoRegion(shape)
    } catch {
      throw QueryError(
        .invalidArgument, "Invalid region in GEOWITHIN query for parameter '\(shape)': '\(error.message)'")
    }
    return .geoWithin(
      BoundGeoWithin(
        typePath: try bindPath(keyPath.appending("type"), scope: scope),
        coordinatesPath: try bindPath(keyPath.appending("coordinates"), scope: scope), region: region))
  }

  private func isMulti(_ operand: BoundOperand) -> Bool {
    switch operand {
    case .constant: return false
    case .path(let path): return path.isMulti
    case .subqueryCount: return false
    }
  }

  private func bindTypeCheck(
    _ path: BoundPath, op: QueryOperator, rhs: BoundOperand, quantifier: BoundQuantifier
  ) throws -> BoundPredicate {
    guard case .constant(let value) = rhs else {
      throw QueryError(.unsupported, "@type can only be compared with a type name string")
    }
    let names: [RowValue]
    switch (op, value) {
    case (.equal, _), (.notEqual, _): names = [value]
    case (.in, .list(let items)): names = items
    default: throw QueryError.unsupportedOperator(op.rawValue, type: "@type")
    }
    var types: Set<QueryValueType> = []
    for name in names {
      guard case .string(let string) = name, let named = QueryValueType.types(named: string) else {
        throw QueryError(
          .typeMismatch, "Unable to parse the type attribute string '\(QueryDescribe.value(name))'")
      }
      types.formUnion(named)
    }
    return .typeCheck(BoundTypeCheck(path: path, types: types, negated: op == .notEqual, quantifier: quantifier))
  }

  /// Throws when `op` is not supported for the operand's type.
  private func checkOperator(_ op: BoundOperator, options: QueryStringOptions, info: OperandInfo) throws {
    let name = operatorName(op)
    switch op {
    case .equal, .notEqual:
      return
    case .less, .lessOrEqual, .greater, .greaterOrEqual, .between:
      switch info.kind {
      case .bool, .object:
        throw QueryError.unsupportedOperator(name, type: QueryDescribe.typeName(info.kind))
      case .string, .data, .uuid, .objectId:
        if op == .between { throw QueryError.unsupportedOperator(name, type: QueryDescribe.typeName(info.kind)) }
        if options.contains(.caseInsensitive) || options.contains(.diacriticInsensitive) {
          throw QueryError(.unsupportedOperator, "Lexicographical comparisons must be case-sensitive")
        }
      case .int, .float, .double, .decimal128, .date, .any:
        return
      }
    case .beginsWith, .endsWith, .contains, .like:
      switch info.kind {
      case .string, .data, .any: return
      default: throw QueryError.unsupportedOperator(name, type: QueryDescribe.typeName(info.kind))
      }
    }
  }

  private func operatorName(_ op: BoundOperator) -> String {
    switch op {
    case .equal: return "=="
    case .notEqual: return "!="
    case .less: return "<"
    case .lessOrEqual: return "<="
    case .greater: return ">"
    case .greaterOrEqual: return ">="
    case .beginsWith: return "BEGINSWITH"
    case .endsWith: return "ENDSWITH"
    case .contains: return "CONTAINS"
    case .like: return "LIKE"
    case .between: return "BETWEEN"
    }
  }

  private static func isNumericKind(_ kind: QueryProperty.Kind) -> Bool {
    switch kind {
    case .int, .float, .double, .decimal128: return true
    default: return false
    }
  }

  /// Throws when two key paths cannot be compared.
  private func checkComparable(_ left: OperandInfo, _ right: OperandInfo) throws {
    if left.kind == .any || right.kind == .any { return }
    if Self.isNumericKind(left.kind) && Self.isNumericKind(right.kind) { return }
    if left.aggregate == "@count" || right.aggregate == "@count" {
      throw QueryError(.typeMismatch, "@count can only be compared with a numeric value.")
    }
    if left.kind == right.kind && left.targetClass == right.targetClass { return }
    throw QueryError.propertyTypeMismatch(left.typeName, right.typeName)
  }

  /// Checks a constant against the operand it is compared with; returns it converted to the
  /// operand's representation where they differ (a string for a data property, a double for a
  /// float property, a typed link for a link property).
  private func checkConstant(_ value: RowValue, op: BoundOperator, isList: Bool, info: OperandInfo) throws -> RowValue {
    if isList {
      guard case .list(let items) = value else {
        if op == .between {
          throw QueryError(.invalidArgument, "BETWEEN requires a list of exactly two values, such as {1, 5}")
        }
        throw QueryError(.invalidArgument, "IN clause requires an array of items")
      }
      if op == .between {
        guard items.count == 2 else {
          throw QueryError(.invalidArgument, "BETWEEN requires a list of exactly two values, such as {1, 5}")
        }
      }
      return .list(try items.map { try checkConstant($0, op: op, isList: false, info: info) })
    }
    if case .list = value, info.kind != .any || op != .equal {
      throw QueryError.cannotCompare(value: value, property: info.propertyName, propertyType: info.typeName)
    }
    if let aggregate = info.aggregate {
      let isNumber: Bool
      switch value {
      case .int, .float, .double, .decimal: isNumber = true
      default: isNumber = false
      }
      if aggregate == "@count" {
        guard isNumber else { throw QueryError(.typeMismatch, "@count can only be compared with a numeric value.") }
        return value
      }
      if (aggregate == "@sum" && value.isNull) || (!value.isNull && !isCompatible(value, info)) {
        throw QueryError(
          .typeMismatch,
          "\(aggregate) on a property of type \(info.aggregatedType) cannot be compared with "
            + "'\(QueryDescribe.value(value))'")
      }
      return converted(value, for: info)
    }
    if info.isKeys {
      switch value {
      case .string, .null: return value
      default: throw QueryError(.typeMismatch, "@keys can only be compared with a string value.")
      }
    }
    if value.isNull { return value }
    guard isCompatible(value, info) else {
      if let (keyPath, rootClass) = info.plainProperty {
        // RealmSwift's text (its predicates check constants against the property's type).
        throw QueryError(
          .typeMismatch,
          "Expected object of type \(info.typeName) for property '\(keyPath)' on object of type '\(rootClass)', "
            + "but received: \(QueryDescribe.value(value))")
      }
      throw QueryError.cannotCompare(value: value, property: info.propertyName, propertyType: info.typeName)
    }
    return converted(value, for: info)
  }

  /// A compatible constant in the representation of the operand's values.
  private func converted(_ value: RowValue, for info: OperandInfo) -> RowValue {
    switch (info.kind, value) {
    case (.data, .string(let string)):
      return .data(Data(string.utf8))
    case (.float, .double(let double)):
      return .float(Float(double))
    case (.object, .typedLink(_, let key)):
      return .link(key)
    default:
      return value
    }
  }

  private func isCompatible(_ value: RowValue, _ info: OperandInfo) -> Bool {
    switch info.kind {
    case .any:
      return true
    case .int, .float, .double, .decimal128:
      switch value {
      case .int, .float, .double, .decimal: return true
      default: return false
      }
    case .bool:
      if case .bool = value { return true }
    case .string:
      if case .string = value { return true }
    case .data:
      switch value {
      case .data, .string: return true
      default: return false
      }
    case .date:
      if case .date = value { return true }
    case .uuid:
      if case .uuid = value { return true }
    case .objectId:
      if case .objectId = value { return true }
    case .object:
      switch value {
      case .link: return true
      // An empty class name is an unmanaged object given as an argument, which equals nothing.
      case .typedLink(let className, _): return className == info.targetClass || className.isEmpty
      default: return false
      }
    }
    return false
  }
}
