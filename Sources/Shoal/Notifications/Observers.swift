import Dispatch
import Foundation
import ShoalStorage

/// Where a Realm delivers its notifications.
enum DeliveryMode {
  /// The thread that opened the Realm: the main queue for the main thread; on other threads,
  /// whenever the Realm refreshes (`refresh()`, `beginWrite()`, after `commitWrite()`).
  case currentThread
  /// A serial queue owning this Realm (`observe(on: queue)`).
  case queue(DispatchQueue)
  /// An actor owning this Realm (`Realm(configuration:actor:)`, `observe(on: actor)`).
  case actor(any Actor)
  /// A thread that was running its run loop when an observation began (as RealmSwift requires
  /// of threads other than the main one): notifications arrive through that run loop, the
  /// first one and those of local commits after the call that caused them returns, those of
  /// other threads' and processes' commits as soon as the run loop runs (autorefresh).
  case runLoop(RunLoopScheduler)
}

/// Runs work on a thread's run loop, from any thread: a timer due at once, which (unlike
/// `RunLoop.perform`) wakes a run loop waiting for input.
final class RunLoopScheduler: @unchecked Sendable {  // safe: off its thread, only the thread-safe add
  private let runLoop: RunLoop
  init(_ runLoop: RunLoop) { self.runLoop = runLoop }

  func schedule(_ work: @escaping @Sendable () -> Void) {
    runLoop.add(Timer(timeInterval: 0, repeats: false) { _ in work() }, forMode: .default)
  }
}

/// One registered observation on a Realm.
protocol RealmObserver: AnyObject {
  var token: NotificationToken? { get }
  /// While set, `update` brings the observer's state up to date without calling its block:
  /// the commit it steps over was made with `write(withoutNotifying:)` naming its token.
  var muted: Bool { get set }
  /// Called after the Realm moved from `old` to its current version; `summary` says what the
  /// commits in between did. Returns false when the observation is over (its object deleted).
  func update(core: RealmCore, old: ReadTransaction, summary: ChangeSummary, local: Bool) -> Bool
}

/// A key-path filter of an observation, resolved against a class: which of its properties'
/// writes count, and, through link properties, which writes to linked objects count, to any
/// depth a key path names (`"owner.address.city"`).
final class ObservationFilter {
  /// How many links deep an observation without key paths follows writes to linked objects.
  static let defaultLinkDepth = 4

  let table: TableInfo
  /// Properties of the class whose writes count; nil means all.
  private(set) var mask: [UInt8]?
  /// Link properties whose targets' writes count, with the filter for those targets. Without
  /// key paths: every link property, any property of the target, `defaultLinkDepth` deep.
  private(set) var nested: [(index: Int, filter: ObservationFilter)]

  private init(table: TableInfo, mask: [UInt8]?, nested: [(index: Int, filter: ObservationFilter)]) {
    self.table = table
    self.mask = mask
    self.nested = nested
  }

  /// Origin classes of linking-objects properties the key paths name at the top level: a
  /// change to who links to the object counts for an object observation.
  private(set) var backlinkClasses: Set<String> = []

  /// A filter for `keyPaths` on `table`. A collection property named as a whole follows its
  /// objects' writes for a collection observation (`collectionsFollowElements`); for an object
  /// observation, as in RealmSwift, only changes to the collection itself count.
  convenience init(keyPaths: [String]?, table: TableInfo, core: RealmCore, collectionsFollowElements: Bool = true) {
    guard let keyPaths else {
      // Shared per class and remaining depth, so cycles of links stay small.
      var made: [String: ObservationFilter] = [:]
      func everything(_ table: TableInfo, _ depth: Int) -> ObservationFilter {
        let id = table.name + "/" + String(depth)
        if let filter = made[id] { return filter }
        let filter = ObservationFilter(table: table, mask: nil, nested: [])
        made[id] = filter
        if depth > 0 {
          filter.nested = table.properties.indices.compactMap { index in
            let property = table.properties[index]
            guard property.type == .object, property.collection != .linkingObjects,
              let target = property.objectClassName.flatMap(core.table(named:))
            else { return nil }
            return (index, everything(target, depth - 1))
          }
        }
        return filter
      }
      let top = everything(table, ObservationFilter.defaultLinkDepth)
      self.init(table: table, mask: nil, nested: top.nested)
      return
    }
    // A tree of the key paths' components: properties named at each level (nil: any).
    final class Level {
      let table: TableInfo
      var names: Set<Int>? = []
      var links: [Int: Level] = [:]
      init(_ table: TableInfo) { self.table = table }
      func filter() -> ObservationFilter {
        ObservationFilter(
          table: table, mask: names.map { ChangeSummary.mask($0, count: table.properties.count) },
          nested: links.sorted { $0.key < $1.key }.map { ($0.key, $0.value.filter()) })
      }
    }
    let root = Level(table)
    for path in keyPaths {
      var level = root
      let parts = path.split(separator: ".").map(String.init)
      for (depth, part) in parts.enumerated() {
        guard let index = level.table.propertyIndex[part] else {
          fatalError("Invalid property name: property '\(part)' not found in object of type '\(level.table.name)'")
        }
        level.names?.insert(index)
        let property = level.table.properties[index]
        // Through links, and (named in a key path) through linking objects to their origins.
        guard property.type == .object || property.collection == .linkingObjects,
          let target = property.objectClassName.flatMap(core.table(named:))
        else {
          break
        }
        let next = level.links[index] ?? Level(target)
        level.links[index] = next
        if depth == parts.count - 1, property.collection != .none, collectionsFollowElements {
          // A collection of objects observed as a whole: its objects' writes count too.
          next.names = nil
        }
        level = next
      }
    }
    // Links named only as a whole (not through them, not collections) add no nested filter.
    func prune(_ level: Level) {
      for (index, next) in level.links {
        if next.names?.isEmpty == true, next.links.isEmpty { level.links[index] = nil } else { prune(next) }
      }
    }
    prune(root)
    let built = root.filter()
    self.init(table: table, mask: built.mask, nested: built.nested)
    backlinkClasses = Set(
      (root.names ?? []).compactMap { index in
        let property = table.properties[index]
        return property.collection == .linkingObjects ? property.objectClassName : nil
      })
  }

  /// Whether writes to `key` (with `summary`'s masks), or to the objects it links to as far as
  /// this filter goes, count. `row` is the object's current row when the caller has it; it is
  /// read from `core` only when a linked class changed.
  func isModified(_ key: ObjectKey, row: [RowValue]?, table: TableInfo, summary: ChangeSummary, core: RealmCore)
    -> Bool
  {
    if let written = summary.changes(of: table.name)?.mask(key), ChangeSummary.intersects(written, mask) {
      return true
    }
    guard nestedMayBeAffected(summary), let row = row ?? core.row(table, key) else { return false }
    for link in nested where link.index < row.count && link.filter.mayBeAffected(summary) {
      for target in Self.targets(of: link.index, key: key, row: row, table: table, core: core)
      where link.filter.isModified(target, row: nil, table: link.filter.table, summary: summary, core: core) {
        return true
      }
    }
    return false
  }

  /// The objects property `index` of the object `key` reaches: its links, or for linking
  /// objects, the objects linking to it.
  private static func targets(of index: Int, key: ObjectKey, row: [RowValue], table: TableInfo, core: RealmCore)
    -> [ObjectKey]
  {
    let property = table.properties[index]
    if property.collection == .linkingObjects { return core.linkingKeys(to: key, of: table, property: property) }
    return RealmCore.linkedKeys(row[index])
  }

  /// Whether the linked objects reached through link property `index` of the object `key`
  /// have writes that count.
  func linkIsModified(_ index: Int, key: ObjectKey, row: [RowValue], summary: ChangeSummary, core: RealmCore) -> Bool {
    guard index < row.count, let link = nested.first(where: { $0.index == index }), link.filter.mayBeAffected(summary)
    else { return false }
    return Self.targets(of: index, key: key, row: row, table: table, core: core).contains {
      link.filter.isModified($0, row: nil, table: link.filter.table, summary: summary, core: core)
    }
  }

  /// Whether `summary` touches this filter's class or any class it follows links to.
  func mayBeAffected(_ summary: ChangeSummary) -> Bool {
    summary.changes(of: table.name) != nil || nestedMayBeAffected(summary)
      || backlinkClasses.contains { summary.changes(of: $0) != nil }
  }

  /// Whether the set of objects linking to `key` through linking-objects property `index`
  /// changed between `old` and now: an origin object inserted, deleted, or its link written so
  /// that it links to `key` a different number of times.
  func backlinksChanged(
    _ index: Int, key: ObjectKey, summary: ChangeSummary, core: RealmCore, old: ReadTransaction
  ) -> Bool {
    let property = table.properties[index]
    guard let originName = property.objectClassName, let changes = summary.changes(of: originName),
      let origin = core.table(named: originName), let originProperty = property.linkOriginPropertyName,
      let link = origin.propertyIndex[originProperty]
    else { return false }
    if changes.cleared { return true }
    func count(_ row: [RowValue]?) -> Int {
      guard let row, link < row.count else { return 0 }
      return RealmCore.linkCount(row[link], to: key)
    }
    if changes.deleted.contains(where: { count(core.row(origin, $0, in: old)) > 0 }) { return true }
    if changes.inserted.contains(where: { count(core.row(origin, $0)) > 0 }) { return true }
    return changes.modified.contains { source, mask in
      ChangeSummary.bit(mask, link) && count(core.row(origin, source)) != count(core.row(origin, source, in: old))
    }
  }

  /// Whether `summary` touches a class this filter follows links to.
  func nestedMayBeAffected(_ summary: ChangeSummary) -> Bool {
    var seen: Set<ObjectIdentifier> = []
    func visit(_ filter: ObservationFilter) -> Bool {
      for link in filter.nested where seen.insert(ObjectIdentifier(link.filter)).inserted {
        if summary.changes(of: link.filter.table.name) != nil || visit(link.filter) { return true }
      }
      return false
    }
    return visit(self)
  }

  /// Whether `summary` touches anything this filter could care about (`table` is its class).
  func mayBeAffected(table: TableInfo, summary: ChangeSummary) -> Bool { mayBeAffected(summary) }
}

/// `Realm.observe`.
final class RealmNotificationObserver: RealmObserver {
  weak var token: NotificationToken?
  var muted = false
  let block: Realm.NotificationBlock

  init(token: NotificationToken, block: @escaping Realm.NotificationBlock) {
    self.token = token
    self.block = block
  }

  func update(core: RealmCore, old: ReadTransaction, summary: ChangeSummary, local: Bool) -> Bool {
    if !muted { block(.didChange, Realm(core: core)) }
    return true
  }
}

/// `observe` on `Results`, `List`, `MutableSet`, `LinkingObjects` and `AnyRealmCollection`.
final class CollectionObserver<Collection>: RealmObserver {
  weak var token: NotificationToken?
  var muted = false
  let collection: Collection
  let state: ResultsState
  let filter: ObservationFilter?
  let block: (RealmCollectionChange<Collection>) -> Void
  /// The elements at the last notification (empty while `sorted` holds them).
  private var last: [RowValue]
  private var lastKeys: [ObjectKey]?
  /// The elements at the last notification with their sort values, for sorted results kept up
  /// to date from change records (see SortedResultsMaintenance.swift).
  private var sorted: SortedItems?

  init(
    token: NotificationToken, collection: Collection, state: ResultsState, keyPaths: [String]?, core: RealmCore,
    block: @escaping (RealmCollectionChange<Collection>) -> Void
  ) {
    self.token = token
    self.collection = collection
    self.state = state
    self.block = block
    filter = state.elementTable.map { ObservationFilter(keyPaths: keyPaths, table: $0, core: core) }
    last = state.items()
  }

  /// Delivers the first notification, the collection as it is now: where delivery waits for a
  /// run loop, a write begun meanwhile delivers it first (`RealmCore.deliverPending`), so a
  /// commit is never folded into it unseen.
  func initial() {
    last = state.items()
    lastKeys = nil
    sorted = nil
    keepSorted()
    block(.initial(collection))
  }

  /// The elements at the last notification.
  private var previous: [RowValue] { sorted?.items ?? last }

  /// Takes `last` into `sorted` with each element's sort values, when the results' order can
  /// be kept up to date from change records (else leaves `sorted` nil).
  private func keepSorted() {
    guard state.updatesIncrementally, let order = state.maintainableOrder, let table = state.elementTable,
      let core = state.core
    else { return }
    let items = last
    sorted = SortedItems(order: order, items: items) { i in
      state.cachedRow(at: i) ?? CoreLinks.key(items[i]).flatMap { core.row(table, $0) }
    }
    last = []
  }

  /// Brings sorted results up to date from the change records alone (see
  /// SortedResultsMaintenance.swift): only the inserted, deleted and modified objects are read,
  /// a few binary searches each. Nil when the change needs a full evaluation (a cleared class,
  /// linked objects, or so many objects touched that evaluating again costs less).
  private func sortedUpdate(
    table: TableInfo, filter: ObservationFilter, summary: ChangeSummary, core: RealmCore
  ) -> Bool? {
    guard sorted != nil else { return nil }
    guard let changes = summary.changes(of: table.name) else {
      if !filter.mayBeAffected(table: table, summary: summary) { return true }
      // Only linked objects changed: nothing moves, and the loop below finds the modified.
      return sortedUpdate(table: table, filter: filter, summary: summary, changes: .init(), core: core)
    }
    guard !changes.cleared else { return nil }
    return sortedUpdate(table: table, filter: filter, summary: summary, changes: changes, core: core)
  }

  /// `sortedUpdate` for the class's `changes`.
  private func sortedUpdate(
    table: TableInfo, filter: ObservationFilter, summary: ChangeSummary, changes: ChangeSummary.ClassChanges,
    core: RealmCore
  ) -> Bool? {
    guard let count = sorted?.count else { return nil }
    guard changes.inserted.count + changes.deleted.count + changes.modified.count <= max(64, count / 16) else {
      return nil
    }
    // No copy of `sorted` outlives this call: the elements must stay uniquely referenced for
    // `apply` to move them in place.
    let state = self.state
    guard
      let plan = sorted.flatMap({ items in
        items.plan(touched: changes.touched) { key in
          guard let row = core.row(table, key), state.matches(key, row: row) else { return nil }
          return items.order.sortKey(of: row)
        }
      })
    else { return nil }
    var modifications: [Int] = []
    if filter.nestedMayBeAffected(summary) {
      // A linked class changed: any element may be modified through its links (which moves
      // none of them, as the filters and sorts read only the element's own row).
      let gone = Set(plan.deletions)
      for (position, item) in previous.enumerated() where !gone.contains(position) {
        guard let key = CoreLinks.key(item),
          filter.isModified(key, row: nil, table: table, summary: summary, core: core)
        else { continue }
        modifications.append(position)
      }
    } else {
      for (position, _) in plan.stayed {
        guard let key = CoreLinks.key(previous[position]), let mask = changes.modified[key],
          ChangeSummary.intersects(mask, filter.mask)
        else { continue }
        modifications.append(position)
      }
      modifications.sort()
    }
    // The elements move in memory after the callback (or when it reads the collection); the
    // results take them only while the Realm is still at this version (a callback may refresh
    // it), but the observer's own copy always moves, as the next update starts from it.
    var applied = plan.removed.isEmpty && plan.inserted.isEmpty
    func layOut() {
      guard !applied else { return }
      applied = true
      sorted?.apply(plan)
    }
    if applied {
      state.adopt(previous)
    } else {
      state.adopt(pending: { [self] in
        layOut()
        state.adopt(previous)
      })
    }
    defer {
      state.settle()
      layOut()
    }
    guard !muted, !plan.deletions.isEmpty || !plan.insertions.isEmpty || !modifications.isEmpty else { return true }
    block(.update(collection, deletions: plan.deletions, insertions: plan.insertions, modifications: modifications))
    return true
  }

  /// Brings a class's results (key order, no sort) up to date from the change records alone:
  /// only inserted, deleted and modified objects are looked at, whatever the size of the
  /// results. Nil when the change needs a full evaluation (a cleared class, linked objects).
  private func incrementalUpdate(table: TableInfo, filter: ObservationFilter, summary: ChangeSummary, core: RealmCore)
    -> Bool?
  {
    guard let changes = summary.changes(of: table.name), !changes.cleared else {
      return summary.changes(of: table.name) == nil && !filter.mayBeAffected(table: table, summary: summary)
        ? true : nil
    }
    if filter.nestedMayBeAffected(summary) { return nil }
    // The keys of `last`, kept between updates so a small change costs no pass over them.
    let oldKeys: [ObjectKey]
    if let lastKeys {
      oldKeys = lastKeys
    } else {
      oldKeys = last.compactMap { CoreLinks.key($0) }
      guard oldKeys.count == last.count else { return nil }
    }
    func position(_ key: ObjectKey, in keys: [ObjectKey]) -> (Int, Bool) {
      var low = 0
      var high = keys.count
      while low < high {
        let mid = (low + high) / 2
        if keys[mid] < key { low = mid + 1 } else { high = mid }
      }
      return (low, low < keys.count && keys[low] == key)
    }
    var removed = Set<ObjectKey>()
    var added: [ObjectKey] = []
    for key in changes.deleted where position(key, in: oldKeys).1 { removed.insert(key) }
    for key in changes.modified.keys {
      let was = position(key, in: oldKeys).1
      // Without filters, an updated object is in the results unless it was also deleted: no
      // need to read its row (in another process's commit, a node this one never cached).
      let now = state.filters.isEmpty ? !changes.deleted.contains(key) : state.matches(key)
      if was && !now { removed.insert(key) }
      if !was && now { added.append(key) }
    }
    for key in changes.inserted where !position(key, in: oldKeys).1 && state.matches(key) { added.append(key) }
    added.sort()
    var newKeys = oldKeys
    if !removed.isEmpty || !added.isEmpty {
      newKeys = []
      newKeys.reserveCapacity(oldKeys.count + added.count)
      var i = 0
      for key in oldKeys where !removed.contains(key) {
        while i < added.count && added[i] < key {
          newKeys.append(added[i])
          i += 1
        }
        newKeys.append(key)
      }
      newKeys.append(contentsOf: added[i...])
    }
    let deletions = removed.map { position($0, in: oldKeys).0 }.sorted()
    let insertions = added.map { position($0, in: newKeys).0 }.sorted()
    var modifications: [Int] = []
    let addedSet = Set(added)
    // Modifications are positions in the previous version, as in RealmSwift.
    for (key, mask) in changes.modified where !removed.contains(key) && !addedSet.contains(key) {
      let (index, found) = position(key, in: oldKeys)
      if found, ChangeSummary.intersects(mask, filter.mask) { modifications.append(index) }
    }
    modifications.sort()
    if !removed.isEmpty || !added.isEmpty {
      last = newKeys.map { .link($0) }
      lastKeys = newKeys
    } else {
      lastKeys = oldKeys
    }
    state.adopt(last)
    guard !muted, !deletions.isEmpty || !insertions.isEmpty || !modifications.isEmpty else { return true }
    block(.update(collection, deletions: deletions, insertions: insertions, modifications: modifications))
    return true
  }

  func update(core: RealmCore, old: ReadTransaction, summary: ChangeSummary, local: Bool) -> Bool {
    if let table = state.elementTable, let filter, !filter.mayBeAffected(table: table, summary: summary),
      !state.sourceMayChange(summary)
    {
      return true
    }
    if let table = state.elementTable, let filter, state.isIncremental,
      let incremental = incrementalUpdate(table: table, filter: filter, summary: summary, core: core)
    {
      return incremental
    }
    if let table = state.elementTable, let filter, sorted != nil,
      let incremental = sortedUpdate(table: table, filter: filter, summary: summary, core: core)
    {
      return incremental
    }
    let before = previous
    let now = state.items()
    var deletions: [Int] = []
    var insertions: [Int] = []
    // Positions in the previous version that may be reported as modified.
    var stayed: [Int]?
    if state.maintainableOrder != nil, let table = state.elementTable, let changes = summary.changes(of: table.name) {
      // Only touched objects can have moved: report what the incremental update would.
      let keys = { (items: [RowValue]) in items.compactMap { CoreLinks.key($0) } }
      let ranked = RankedDiff.changes(old: keys(before), new: keys(now), touched: changes.touched)
      (deletions, insertions, stayed) = (ranked.deletions, ranked.insertions, ranked.stayed)
    } else {
      for change in now.difference(from: before) {
        switch change {
        case .remove(let offset, _, _): deletions.append(offset)
        case .insert(let offset, _, _): insertions.append(offset)
        }
      }
    }
    // Modifications are positions in the previous version, as in RealmSwift.
    var modifications: [Int] = []
    if let table = state.elementTable, let filter {
      let deleted = Set(deletions)
      for index in stayed ?? Array(before.indices) where !deleted.contains(index) {
        guard let key = CoreLinks.key(before[index]) else { continue }
        if filter.isModified(key, row: nil, table: table, summary: summary, core: core) { modifications.append(index) }
      }
    }
    last = now
    lastKeys = nil
    sorted = nil
    keepSorted()
    guard !muted, !deletions.isEmpty || !insertions.isEmpty || !modifications.isEmpty else { return true }
    block(
      .update(collection, deletions: deletions.sorted(), insertions: insertions.sorted(), modifications: modifications))
    return true
  }
}

/// `Object.observe`.
final class ObjectObserver<T: ObjectBase>: RealmObserver {
  weak var token: NotificationToken?
  var muted = false
  let object: T
  let table: TableInfo
  let filter: ObservationFilter
  let block: (ObjectChange<T>) -> Void

  init(
    token: NotificationToken, object: T, table: TableInfo, keyPaths: [String]?, core: RealmCore,
    block: @escaping (ObjectChange<T>) -> Void
  ) {
    self.token = token
    self.object = object
    self.table = table
    self.block = block
    filter = ObservationFilter(keyPaths: keyPaths, table: table, core: core, collectionsFollowElements: false)
  }

  func update(core: RealmCore, old: ReadTransaction, summary: ChangeSummary, local: Bool) -> Bool {
    guard filter.mayBeAffected(table: table, summary: summary) else { return true }
    let key = object._key
    if summary.changes(of: table.name)?.wasDeleted(key) == true || !core.exists(table: table, key: key) {
      if !muted { block(.deleted) }
      return false
    }
    let written = summary.changes(of: table.name)?.mask(key) ?? []
    let row = core.row(table, key)
    let oldRow = local ? nil : core.row(table, key, in: old)
    var changes: [PropertyChange] = []
    for (index, property) in table.properties.enumerated() {
      let named = filter.mask.map { ChangeSummary.bit($0, index) }
      let direct: Bool
      if property.collection == .linkingObjects {
        // Only a key path names linking objects (RealmSwift: "owners", "owners.name").
        guard named == true else { continue }
        direct = filter.backlinksChanged(index, key: key, summary: summary, core: core, old: old)
      } else {
        direct = ChangeSummary.bit(written, index) && (named ?? true)
      }
      var linked = false
      if !direct, let row { linked = filter.linkIsModified(index, key: key, row: row, summary: summary, core: core) }
      guard direct || linked else { continue }
      let isCollection = property.collection != .none
      let field = object._classInfo.field(named: property.name)
      let newValue: Any? = isCollection ? nil : unwrapOptional(object[property.name])
      var oldValue: Any?
      if !isCollection, let oldRow, index < oldRow.count, let field {
        oldValue = unwrapOptional(field.wrapperType.anyValue(fromStored: oldRow[index], context: _AccessContext(core)))
      }
      changes.append(PropertyChange(name: property.name, oldValue: oldValue, newValue: newValue))
    }
    if !changes.isEmpty, !muted { block(.change(object, changes)) }
    return true
  }
}

/// `Map.observe`.
final class MapObserver<Key: _MapKey, Value: RealmCollectionValue>: RealmObserver {
  weak var token: NotificationToken?
  var muted = false
  let map: Map<Key, Value>
  let owner: ObjectBase
  let table: TableInfo
  let index: Int
  let filter: ObservationFilter?
  let block: (RealmMapChange<Map<Key, Value>>) -> Void
  private var last: [RowValue.MapEntry]

  init(
    token: NotificationToken, map: Map<Key, Value>, owner: ObjectBase, table: TableInfo, index: Int,
    keyPaths: [String]?, core: RealmCore, block: @escaping (RealmMapChange<Map<Key, Value>>) -> Void
  ) {
    self.token = token
    self.map = map
    self.owner = owner
    self.table = table
    self.index = index
    self.block = block
    let target = table.properties[index].objectClassName.flatMap(core.table(named:))
    filter = target.map { ObservationFilter(keyPaths: keyPaths, table: $0, core: core) }
    last = Self.entries(owner, index)
  }

  static func entries(_ owner: ObjectBase, _ index: Int) -> [RowValue.MapEntry] {
    if case .map(let entries) = owner._storedValue(at: index) { return entries }
    return []
  }

  func update(core: RealmCore, old: ReadTransaction, summary: ChangeSummary, local: Bool) -> Bool {
    guard core.exists(table: table, key: owner._key) else { return false }
    let now = Self.entries(owner, index)
    let before = Dictionary(last.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
    let after = Dictionary(now.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
    let deletions = last.map(\.key).filter { after[$0] == nil }
    let insertions = now.map(\.key).filter { before[$0] == nil }
    var modifications = now.filter { before[$0.key] != nil && before[$0.key] != $0.value }.map(\.key)
    if let filter, let target = table.properties[index].objectClassName.flatMap(core.table(named:)) {
      for entry in now where before[entry.key] == entry.value {
        if let key = CoreLinks.key(entry.value),
          filter.isModified(key, row: nil, table: target, summary: summary, core: core)
        {
          modifications.append(entry.key)
        }
      }
    }
    last = now
    guard !muted, !deletions.isEmpty || !insertions.isEmpty || !modifications.isEmpty else { return true }
    block(
      .update(
        map, deletions: deletions.map(Key._rlmFromKey), insertions: insertions.map(Key._rlmFromKey),
        modifications: modifications.map(Key._rlmFromKey)))
    return true
  }
}

/// A registered observation, held weakly by its Realm.
final class WeakObserver {
  weak var observer: (any RealmObserver)?
  init(_ observer: any RealmObserver) { self.observer = observer }
}

/// Keeps a Realm alive for the listener thread to schedule work on its own queue.
final class CoreBox: @unchecked Sendable {  // safe: `core` is only dereferenced on its own queue or actor
  let core: RealmCore
  init(_ core: RealmCore) { self.core = core }
}

/// A weak reference to a Realm, for the listener thread to schedule work on the Realm's own
/// queue or actor (or the main queue) without keeping it alive.
final class WeakCoreBox: @unchecked Sendable {  // safe: `core` is only dereferenced on its own queue or actor
  weak var core: RealmCore?
  init(_ core: RealmCore) { self.core = core }
}

extension RealmCore {
  /// Registers an observer, arranging for commits elsewhere to reach it.
  /// RealmSwift's checks before a notification block is registered, in its order and words.
  /// Delivered here (`queued` false): the thread, a read-only or frozen Realm, and (for object
  /// and collection blocks) a write transaction in progress. Delivered on a queue or actor:
  /// whether the value is frozen.
  func verifyCanObserve(queued: Bool, inWrite isObjectOrCollection: Bool = true) {
    if queued {
      if isFrozen { fatalError("Frozen Realms do not change and do not have change notifications.") }
      return
    }
    verifyThread()
    if configuration.readOnly, !isFrozen {
      fatalError("Read-only Realms do not change and do not have change notifications.")
    }
    if isFrozen { fatalError("Frozen Realms do not change and do not have change notifications.") }
    if isObjectOrCollection, write != nil {
      fatalError("Cannot create asynchronous query while in a write transaction")
    }
  }

  func addObserver(_ observer: any RealmObserver) {
    if isFrozen { fatalError("Frozen Realms do not change and do not have change notifications.") }
    // The token owns the observation and keeps this Realm alive while it observes.
    observer.token?.keepAlive([observer, self])
    // Observed from inside a running run loop on a thread other than the main one: deliver
    // through that run loop from now on, as RealmSwift does.
    if case .currentThread = deliveryMode, !Thread.isMainThread, RunLoop.current.currentMode != nil {
      deliveryMode = .runLoop(RunLoopScheduler(RunLoop.current))
      wakeToken?.invalidate()
      wakeToken = nil
    }
    observerReferences.append(WeakObserver(observer))
    updateWakeToken()
  }

  /// Makes this Realm, confined to a queue or an actor, move to each new version on its queue
  /// or actor as other threads and processes commit, with or without observers, as
  /// RealmSwift's queue-confined Realms do (when `autorefresh` is on).
  func followCommits() {
    followsCommits = true
    updateWakeToken()
  }

  /// Keeps the listener that wakes this Realm where it lives in step with what needs it:
  /// none; one holding the Realm weakly (it only follows commits, so it may go away); or, while
  /// observers wait, one holding it strongly (an observer's token alone may keep it alive).
  func updateWakeToken() {
    let strong = !observers.isEmpty
    guard strong || followsCommits else {
      wakeToken?.invalidate()
      wakeToken = nil
      return
    }
    if wakeToken != nil, wakeTokenIsStrong == strong { return }
    wakeToken?.invalidate()
    wakeToken = nil
    wakeTokenIsStrong = strong
    let weak = WeakCoreBox(self)
    // Observers' tokens keep the Realm alive (see `NotificationToken.keepAlive`).
    let held: CoreBox? = nil
    switch deliveryMode {
    case .queue(let queue):
      if let gate = queue.getSpecific(key: CommitGate.key) {
        // A change stream's queue: its consumer runs the refresh (see AsyncChanges.swift).
        wakeToken = store.addChangeListener { _, _ in gate.arrived { (held?.core ?? weak.core)?.wake() } }
      } else {
        wakeToken = store.addChangeListener { _, _ in queue.async { (held?.core ?? weak.core)?.wake() } }
      }
    case .currentThread where Thread.isMainThread:
      wakeToken = store.addChangeListener { _, _ in DispatchQueue.main.async { weak.core?.wake() } }
    case .runLoop(let scheduler):
      wakeToken = store.addChangeListener { _, _ in scheduler.schedule { (held?.core ?? weak.core)?.wake() } }
    case .actor(let actor):
      wakeToken = store.addChangeListener { _, _ in
        Task { await runIsolated(actor, Handover<() -> Void>({ (held?.core ?? weak.core)?.wake() })) }
      }
    case .currentThread:
      break
    }
  }

  /// A commit happened somewhere: refresh (delivering) if this Realm refreshes automatically.
  func wake() {
    pruneObservers()
    guard !observers.isEmpty || followsCommits, write == nil else { return }
    if autorefresh {
      _ = refresh()
    } else if store.latestVersion != read?.version {
      for case let observer as RealmNotificationObserver in observers where observer.token?.isInvalidated == false {
        observer.block(.refreshRequired, Realm(core: self))
      }
    }
  }

  func pruneObservers() {
    observerReferences.removeAll { reference in
      guard let observer = reference.observer, let token = observer.token else { return true }
      return token.isInvalidated
    }
    if observerReferences.isEmpty { updateWakeToken() }
  }

  /// Tells every observer what changed between `old` and `new`.
  /// Tells `Realm.observe` observers of a local write that changed nothing (RealmSwift sends
  /// `.didChange` for every commit); collection and object observers have nothing to hear.
  func deliverEmptyCommit() {
    pruneObservers()
    guard !isDelivering else { return }
    isDelivering = true
    defer { isDelivering = false }
    let skipped = skippedTokens
    for case let observer as RealmNotificationObserver in observers {
      guard let token = observer.token, !token.isInvalidated, !skipped.contains(where: { $0 === token }) else {
        continue
      }
      observer.block(.didChange, Realm(core: self))
    }
  }

  func deliver(from old: ReadTransaction, to new: ReadTransaction, local: Bool) {
    Log.write(
      .debug, .notification,
      "Delivering the changes of versions \(old.version + 1)...\(new.version) to \(observers.count) observer(s)")
    pruneObservers()
    guard !observers.isEmpty else { return }
    guard !isDelivering else {
      if deferredDeliveryFrom == nil { deferredDeliveryFrom = old }
      deferredDeliveryIsLocal = deferredDeliveryIsLocal || local
      return
    }
    let summary: ChangeSummary
    do {
      summary = ChangeSummary(try store.changes(from: old.version, to: new.version))
    } catch {
      return
    }
    isDelivering = true
    defer {
      isDelivering = false
      // A callback moved the Realm on: tell of those commits now, from where they started.
      if let from = deferredDeliveryFrom {
        let deferredLocal = deferredDeliveryIsLocal
        deferredDeliveryFrom = nil
        deferredDeliveryIsLocal = false
        if let now = read, now.version != from.version { deliver(from: from, to: now, local: deferredLocal) }
      }
    }
    for observer in observers {
      guard let token = observer.token, !token.isInvalidated else { continue }
      let suppressed = token.takeSuppressed(from: old.version, to: new.version)
      if suppressed.isEmpty {
        if !observer.update(core: self, old: old, summary: summary, local: local) { token.invalidate() }
      } else if !deliver(to: observer, from: old, to: new, around: suppressed, local: local) {
        token.invalidate()
      }
    }
  }

  /// Delivers `old`...`new` to one observer, stepping over the commits it was told not to hear
  /// of: the commits before each are delivered as usual (seen at the version just before it),
  /// the commit itself only updates the observer's state, and the commits after it are
  /// delivered with only their own changes. Returns false when the observation is over.
  private func deliver(
    to observer: any RealmObserver, from old: ReadTransaction, to new: ReadTransaction,
    around suppressed: [SuppressedCommit], local: Bool
  ) -> Bool {
    defer {
      show(new)
      for commit in suppressed { commit.close() }
    }
    func step(from: ReadTransaction, to: ReadTransaction, muted: Bool) -> Bool {
      guard to.version > from.version,
        let records = try? store.changes(from: from.version, to: to.version)
      else { return true }
      show(to)
      observer.muted = muted
      defer { observer.muted = false }
      return observer.update(core: self, old: from, summary: ChangeSummary(records), local: local)
    }
    var from = old
    for commit in suppressed {
      guard step(from: from, to: commit.before, muted: false), step(from: commit.before, to: commit.after, muted: true)
      else { return false }
      from = commit.after
    }
    return step(from: from, to: new, muted: false)
  }

  /// A row as it was in `snapshot`.
  func row(_ table: TableInfo, _ key: ObjectKey, in snapshot: ReadTransaction) -> [RowValue]? {
    do {
      guard let bytes = try snapshot.get(TableInfo.keyBytes(key), in: table.keyspace) else { return nil }
      return try RowCodec.decode(bytes)
    } catch {
      return nil
    }
  }

  /// Runs `body` where this Realm's notifications are delivered: on its queue, on the main
  /// queue for main-thread Realms, or right away on other threads.
  func schedule(_ body: @escaping () -> Void) {
    switch deliveryMode {
    case .queue(let queue):
      let work = Handover(body)
      queue.async { work.take()?() }
    case .currentThread where Thread.isMainThread:
      let work = Handover(body)
      DispatchQueue.main.async { work.take()?() }
    case .actor(let actor):
      let work = Handover(body)
      Task { await runIsolated(actor, work) }
    case .runLoop(let scheduler):
      let work = Handover(body)
      scheduler.schedule { work.take()?() }
    case .currentThread:
      body()
    }
  }
}
