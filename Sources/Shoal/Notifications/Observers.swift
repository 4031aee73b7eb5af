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
}

/// One registered observation on a Realm.
protocol RealmObserver: AnyObject {
  var token: NotificationToken? { get }
  /// Called after the Realm moved from `old` to its current version; `summary` says what the
  /// commits in between did. Returns false when the observation is over (its object deleted).
  func update(core: RealmCore, old: ReadTransaction, summary: ChangeSummary, local: Bool) -> Bool
}

/// A key-path filter of an observation, resolved against a class.
struct ObservationFilter {
  /// Properties of the observed class whose writes count; nil means all.
  var mask: [UInt8]?
  /// Link properties whose targets' writes count, and which of the targets' properties (nil:
  /// any). Without key paths: every link property, any property of the target.
  var nested: [(index: Int, target: TableInfo, mask: [UInt8]?)]

  init(keyPaths: [String]?, table: TableInfo, core: RealmCore) {
    guard let keyPaths else {
      mask = nil
      nested = table.properties.indices.compactMap { index in
        let property = table.properties[index]
        guard property.type == .object, property.collection != .linkingObjects,
          let target = property.objectClassName.flatMap(core.table(named:))
        else { return nil }
        return (index, target, nil)
      }
      return
    }
    var top: Set<Int> = []
    var nestedByIndex: [Int: (TableInfo, Set<Int>?)] = [:]
    for path in keyPaths {
      let parts = path.split(separator: ".").map(String.init)
      guard let first = parts.first, let index = table.propertyIndex[first] else {
        fatalError("Property '\(path.split(separator: ".").first ?? "")' not found in object of type '\(table.name)'")
      }
      top.insert(index)
      let property = table.properties[index]
      guard property.type == .object, let target = property.objectClassName.flatMap(core.table(named:)) else {
        continue
      }
      if parts.count > 1 {
        guard let inner = target.propertyIndex[parts[1]] else {
          fatalError("Property '\(parts[1])' not found in object of type '\(target.name)'")
        }
        var existing = nestedByIndex[index] ?? (target, [])
        existing.1?.insert(inner)
        nestedByIndex[index] = existing
      } else if nestedByIndex[index] == nil, property.collection != .none {
        // A collection of objects observed as a whole: its objects' writes count too.
        nestedByIndex[index] = (target, nil)
      }
    }
    mask = ChangeSummary.mask(top, count: table.properties.count)
    nested = nestedByIndex.map { index, value in
      (index, value.0, value.1.map { ChangeSummary.mask($0, count: value.0.properties.count) })
    }
  }

  /// Whether writes to `key` (with `summary`'s masks), or to the objects it links to, count.
  func isModified(_ key: ObjectKey, row: [RowValue]?, table: TableInfo, summary: ChangeSummary) -> Bool {
    if let written = summary.changes(of: table.name)?.mask(key), ChangeSummary.intersects(written, mask) {
      return true
    }
    guard let row else { return false }
    for link in nested where link.index < row.count {
      guard let changes = summary.changes(of: link.target.name), !changes.modified.isEmpty else { continue }
      for target in RealmCore.linkedKeys(row[link.index]) {
        if let written = changes.mask(target), ChangeSummary.intersects(written, link.mask) { return true }
      }
    }
    return false
  }

  /// Whether `summary` touches anything this filter could care about.
  func mayBeAffected(table: TableInfo, summary: ChangeSummary) -> Bool {
    if summary.changes(of: table.name) != nil { return true }
    return nested.contains { summary.changes(of: $0.target.name) != nil }
  }
}

/// `Realm.observe`.
final class RealmNotificationObserver: RealmObserver {
  weak var token: NotificationToken?
  let block: Realm.NotificationBlock

  init(token: NotificationToken, block: @escaping Realm.NotificationBlock) {
    self.token = token
    self.block = block
  }

  func update(core: RealmCore, old: ReadTransaction, summary: ChangeSummary, local: Bool) -> Bool {
    block(.didChange, Realm(core: core))
    return true
  }
}

/// `observe` on `Results`, `List`, `MutableSet`, `LinkingObjects` and `AnyRealmCollection`.
final class CollectionObserver<Collection>: RealmObserver {
  weak var token: NotificationToken?
  let collection: Collection
  let state: ResultsState
  let filter: ObservationFilter?
  let block: (RealmCollectionChange<Collection>) -> Void
  private var last: [RowValue]
  private var lastKeys: [ObjectKey]?

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

  func initial() { block(.initial(collection)) }

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
    if filter.nested.contains(where: { summary.changes(of: $0.target.name) != nil }) { return nil }
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
      let now = state.matches(key)
      if was && !now { removed.insert(key) }
      if !was && now { added.append(key) }
    }
    for key in changes.inserted where state.matches(key) { added.append(key) }
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
    for (key, mask) in changes.modified where !removed.contains(key) && !addedSet.contains(key) {
      let (index, found) = position(key, in: newKeys)
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
    guard !deletions.isEmpty || !insertions.isEmpty || !modifications.isEmpty else { return true }
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
    let now = state.items()
    let difference = now.difference(from: last)
    var deletions: [Int] = []
    var insertions: [Int] = []
    for change in difference {
      switch change {
      case .remove(let offset, _, _): deletions.append(offset)
      case .insert(let offset, _, _): insertions.append(offset)
      }
    }
    var modifications: [Int] = []
    if let table = state.elementTable, let filter {
      let inserted = Set(insertions)
      for (index, item) in now.enumerated() where !inserted.contains(index) {
        guard let key = CoreLinks.key(item) else { continue }
        let row = filter.nested.isEmpty ? nil : core.row(table, key)
        if filter.isModified(key, row: row, table: table, summary: summary) { modifications.append(index) }
      }
    }
    last = now
    lastKeys = nil
    guard !deletions.isEmpty || !insertions.isEmpty || !modifications.isEmpty else { return true }
    block(
      .update(collection, deletions: deletions.sorted(), insertions: insertions.sorted(), modifications: modifications))
    return true
  }
}

/// `Object.observe`.
final class ObjectObserver<T: ObjectBase>: RealmObserver {
  weak var token: NotificationToken?
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
    filter = ObservationFilter(keyPaths: keyPaths, table: table, core: core)
  }

  func update(core: RealmCore, old: ReadTransaction, summary: ChangeSummary, local: Bool) -> Bool {
    guard filter.mayBeAffected(table: table, summary: summary) else { return true }
    let key = object._key
    if summary.changes(of: table.name)?.wasDeleted(key) == true || !core.exists(table: table, key: key) {
      block(.deleted)
      return false
    }
    let written = summary.changes(of: table.name)?.mask(key) ?? []
    let row = core.row(table, key)
    let oldRow = local ? nil : core.row(table, key, in: old)
    var changes: [PropertyChange] = []
    for (index, property) in table.properties.enumerated() where property.collection != .linkingObjects {
      let direct = ChangeSummary.bit(written, index) && (filter.mask.map { ChangeSummary.bit($0, index) } ?? true)
      var linked = false
      if !direct, let row, let link = filter.nested.first(where: { $0.index == index }),
        let targetChanges = summary.changes(of: link.target.name)
      {
        linked = RealmCore.linkedKeys(row[index]).contains { target in
          targetChanges.mask(target).map { ChangeSummary.intersects($0, link.mask) } ?? false
        }
      }
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
    if !changes.isEmpty { block(.change(object, changes)) }
    return true
  }
}

/// `Map.observe`.
final class MapObserver<Key: _MapKey, Value: RealmCollectionValue>: RealmObserver {
  weak var token: NotificationToken?
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
        if let key = CoreLinks.key(entry.value), filter.isModified(key, row: nil, table: target, summary: summary) {
          modifications.append(entry.key)
        }
      }
    }
    last = now
    guard !deletions.isEmpty || !insertions.isEmpty || !modifications.isEmpty else { return true }
    block(
      .update(
        map, deletions: deletions.map(Key._rlmFromKey), insertions: insertions.map(Key._rlmFromKey),
        modifications: modifications.map(Key._rlmFromKey)))
    return true
  }
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
  func addObserver(_ observer: any RealmObserver) {
    if isFrozen { fatalError("Frozen Realms do not change and do not have change notifications.") }
    observers.append(observer)
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
    let held = strong ? CoreBox(self) : nil
    switch deliveryMode {
    case .queue(let queue):
      wakeToken = store.addChangeListener { _, _ in queue.async { (held?.core ?? weak.core)?.wake() } }
    case .currentThread where Thread.isMainThread:
      wakeToken = store.addChangeListener { _, _ in DispatchQueue.main.async { weak.core?.wake() } }
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
    observers.removeAll { $0.token == nil || $0.token?.isInvalidated == true }
    if observers.isEmpty { updateWakeToken() }
  }

  /// Tells every observer what changed between `old` and `new`.
  func deliver(from old: ReadTransaction, to new: ReadTransaction, local: Bool) {
    Log.write(
      .debug, .notification,
      "Delivering the changes of versions \(old.version + 1)...\(new.version) to \(observers.count) observer(s)")
    pruneObservers()
    guard !observers.isEmpty, !isDelivering else { return }
    let summary: ChangeSummary
    do {
      summary = ChangeSummary(try store.changes(from: old.version, to: new.version))
    } catch {
      return
    }
    isDelivering = true
    defer { isDelivering = false }
    let skipped = skippedTokens
    for observer in observers {
      guard let token = observer.token, !token.isInvalidated else { continue }
      if skipped.contains(where: { $0 === token }) { continue }
      if !observer.update(core: self, old: old, summary: summary, local: local) { token.invalidate() }
    }
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
    case .currentThread:
      body()
    }
  }
}
