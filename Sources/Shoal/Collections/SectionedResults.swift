import Dispatch
import Foundation

/// Results divided into sections by a key (RealmSwift's `SectionedResults`): the results are
/// sorted, and the elements with the same key form a section, sections in the order their
/// keys first appear. Lazy and live: the sections are recomputed when the Realm's version
/// changes.
public struct SectionedResults<Key: _Persistable & Hashable, SectionElement: RealmCollectionValue>:
  RandomAccessCollection, CustomStringConvertible, Equatable
{
  let results: Results<SectionElement>
  let keyBlock: (SectionElement) -> Key
  private let cache: SectionCache<Key>

  init(results: Results<SectionElement>, keyBlock: @escaping (SectionElement) -> Key) {
    self.results = results
    self.keyBlock = keyBlock
    cache = SectionCache()
  }

  /// The sections' layout: for each section its key and the positions of its elements in `results`.
  var layout: [(key: Key, rows: [Int])] {
    let stamp = results.state.core?.stamp ?? 0
    if let cached = cache.layout, cache.stamp == stamp { return cached }
    // One section per distinct key, as Realm Core (a key block need not follow the sort).
    var sections: [(key: Key, rows: [Int])] = []
    var sectionOf: [Key: Int] = [:]
    for (index, element) in results.enumerated() {
      let key = keyBlock(element)
      if let section = sectionOf[key] {
        sections[section].rows.append(index)
      } else {
        sectionOf[key] = sections.count
        sections.append((key, [index]))
      }
    }
    if results.state.core?.isFrozen != true {
      cache.layout = sections
      cache.stamp = stamp
    }
    return sections
  }

  /// Every section key, in order.
  public var allKeys: [Key] { layout.map(\.key) }
  /// The position of the first section.
  public var startIndex: Int { 0 }
  /// The position past the last section: the number of sections.
  public var endIndex: Int { layout.count }
  /// The section at `position`.
  public subscript(position: Int) -> ResultsSection<Key, SectionElement> {
    let section = layout[position]
    return ResultsSection(key: section.key, results: results, rows: section.rows, keyBlock: keyBlock)
  }
  /// The element at an index path (section, item).
  public subscript(indexPath: IndexPath) -> SectionElement { self[indexPath[0]][indexPath[1]] }
  /// An iterator over the sections.
  public func makeIterator() -> SectionedResultsIterator<Key, SectionElement> { SectionedResultsIterator(self) }
  /// Whether both are the same sectioning of the same results.
  public static func == (lhs: SectionedResults, rhs: SectionedResults) -> Bool {
    lhs.results == rhs.results && lhs.allKeys == rhs.allKeys
  }
  /// The Realm of the results.
  public var realm: Realm? { results.realm }
  /// Whether the results can no longer be accessed.
  public var isInvalidated: Bool { results.isInvalidated }
  /// Whether the results are frozen.
  public var isFrozen: Bool { results.isFrozen }
  /// Frozen sectioned results.
  public func freeze() -> SectionedResults { SectionedResults(results: results.freeze(), keyBlock: keyBlock) }
  /// Live sectioned results for frozen ones.
  public func thaw() -> SectionedResults? { results.thaw().map { SectionedResults(results: $0, keyBlock: keyBlock) } }

  /// The key and element types, then each section's key and number of elements.
  public var description: String {
    "SectionedResults<\(Key.self), \(SectionElement.self)> (\n"
      + layout.map { "\t[\($0.key)]: \($0.rows.count) elements" }.joined(separator: ",\n") + "\n)"
  }

  /// Calls `block` with the initial sections, then after each commit that changes them, with
  /// index paths and section indexes (on `queue` when given).
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
    _ block: @escaping (SectionedResultsChange<SectionedResults<Key, SectionElement>>) -> Void
  ) -> NotificationToken {
    let keyBlock = self.keyBlock
    var last: SectionSnapshot<Key>?
    return results.observe(keyPaths: keyPaths, on: queue) { change in
      switch change {
      case .initial(let results):
        let sectioned = SectionedResults(results: results, keyBlock: keyBlock)
        last = sectioned.snapshot()
        block(.initial(sectioned))
      case .update(let results, let deletions, let insertions, let modifications):
        let sectioned = SectionedResults(results: results, keyBlock: keyBlock)
        let now = sectioned.snapshot()
        if let old = last {
          block(
            sectioned.changes(
              from: old, to: now, deletions: deletions, insertions: insertions, modifications: modifications))
        } else {
          block(.initial(sectioned))
        }
        last = now
      case .error(let error):
        // RealmSwift's sectioned results have no error case: the failure is logged.
        Logger.shared.log(level: .error, message: "Sectioned results could not be observed: \(error)")
      }
    }
  }

  /// `observe` with the key paths given as Swift key paths of the elements.
  public func observe(
    keyPaths: [PartialKeyPath<SectionElement>], on queue: DispatchQueue? = nil,
    _ block: @escaping (SectionedResultsChange<SectionedResults<Key, SectionElement>>) -> Void
  ) -> NotificationToken where SectionElement: ObjectBase {
    observe(keyPaths: keyPaths.map { _KeyPathProbe.name(ofPartial: $0) }, on: queue, block)
  }

  /// The section layout and each row's identity, to compare versions.
  func snapshot() -> SectionSnapshot<Key> {
    SectionSnapshot(layout: layout, items: results.state.items().map { CoreLinks.key($0) })
  }

  /// The sectioned change for a change of the results, as Realm Core computes it: the results'
  /// deletions, insertions and modifications placed in their sections, sections whose key
  /// appeared or vanished, the rows of a vanished section implied by it; a modified row that
  /// is no longer at the same place in its section (it moved, or changed section) is a
  /// deletion and an insertion.
  func changes(
    from old: SectionSnapshot<Key>, to new: SectionSnapshot<Key>, deletions: [Int], insertions: [Int],
    modifications: [Int]
  ) -> SectionedResultsChange<SectionedResults> {
    let change = SectionChange(
      from: old, to: new, deletions: deletions, insertions: insertions, modifications: modifications, only: nil)
    return .update(
      self, deletions: change?.deletions ?? [], insertions: change?.insertions ?? [],
      modifications: change?.modifications ?? [], sectionsToInsert: change?.sectionsToInsert ?? [],
      sectionsToDelete: change?.sectionsToDelete ?? [])
  }
}

/// One change of sectioned results, computed as Realm Core computes it from the change of the
/// results: their deletions, insertions and modifications placed in their sections (index
/// paths of the whole sectioned results), sections whose key appeared or vanished, the rows
/// of a vanished section implied by it; a modified row no longer at its place in its section
/// (it moved, or changed section) is a deletion and an insertion. With `only` a section key,
/// as Realm Core's section notifications: only that section's changes, nil when it has none.
struct SectionChange {
  var deletions: [IndexPath] = []
  var insertions: [IndexPath] = []
  var modifications: [IndexPath] = []
  var sectionsToInsert = IndexSet()
  var sectionsToDelete = IndexSet()

  init?<Key: Hashable>(
    from old: SectionSnapshot<Key>, to new: SectionSnapshot<Key>, deletions: [Int], insertions: [Int],
    modifications: [Int], only filter: Key?
  ) {
    let oldPaths = old.indexPaths
    let newPaths = new.indexPaths
    let oldSections = Dictionary(old.layout.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { first, _ in first })
    let newSections = Dictionary(new.layout.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { first, _ in first })
    // The sections looked at: every one, or the filter's in each version.
    let oldFilter = filter.flatMap { oldSections[$0] }
    let newFilter = filter.flatMap { newSections[$0] }
    if filter != nil, oldFilter == nil, newFilter == nil { return nil }
    func oldIncluded(_ section: Int) -> Bool { filter == nil || section == oldFilter }
    func newIncluded(_ section: Int) -> Bool { filter == nil || section == newFilter }
    sectionsToInsert = IndexSet(
      new.layout.indices.filter { oldSections[new.layout[$0].key] == nil && newIncluded($0) })
    sectionsToDelete = IndexSet(
      old.layout.indices.filter { newSections[old.layout[$0].key] == nil && oldIncluded($0) })
    // Where each modified row is now: found by its identity.
    var newPosition: [ObjectKey: Int] = [:]
    for (index, key) in new.items.enumerated() { if let key, newPosition[key] == nil { newPosition[key] = index } }
    let modifiedNew = modifications.compactMap { index in old.items[index].flatMap { newPosition[$0] } }

    var inserted: [Int: Set<Int>] = [:]
    var modified: [Int: Set<Int>] = [:]
    var modifiedNow: [Int: Set<Int>] = [:]
    var deleted: [Int: Set<Int>] = [:]
    for index in insertions {
      if let (section, row) = newPaths[index], newIncluded(section) { inserted[section, default: []].insert(row) }
    }
    for index in modifications {
      if let (section, row) = oldPaths[index], oldIncluded(section) { modified[section, default: []].insert(row) }
    }
    for index in modifiedNew {
      if let (section, row) = newPaths[index], newIncluded(section) { modifiedNow[section, default: []].insert(row) }
    }
    // A deleted section's rows are implied by it (with a filter: its rows are reported only
    // while the section still exists).
    if filter == nil || newFilter != nil {
      for index in deletions {
        if let (section, row) = oldPaths[index], oldIncluded(section), !sectionsToDelete.contains(section) {
          deleted[section, default: []].insert(row)
        }
      }
    }
    for (oldSection, rows) in modified {
      guard let newSection = newSections[old.layout[oldSection].key] else {
        modified[oldSection] = nil  // the section is gone: its rows are implied
        continue
      }
      let stillThere = rows.intersection(modifiedNow[newSection] ?? [])
      modifiedNow[newSection]?.subtract(stillThere)
      deleted[oldSection, default: []].formUnion(rows.subtracting(stillThere))
      modified[oldSection] = stillThere
    }
    for (section, rows) in modifiedNow { inserted[section, default: []].formUnion(rows) }
    func paths(_ grouped: [Int: Set<Int>]) -> [IndexPath] {
      grouped.flatMap { section, rows in rows.map { IndexPath(indexes: [section, $0]) } }.sorted()
    }
    self.deletions = paths(deleted)
    self.insertions = paths(inserted)
    self.modifications = paths(modified)
    if filter != nil, self.deletions.isEmpty, self.insertions.isEmpty, self.modifications.isEmpty,
      sectionsToInsert.isEmpty, sectionsToDelete.isEmpty
    {
      return nil
    }
  }
}

/// A version of sectioned results as change computation needs it: the sections' keys and rows,
/// and the identity of each row of the results (nil for values).
struct SectionSnapshot<Key: Hashable> {
  let layout: [(key: Key, rows: [Int])]
  let items: [ObjectKey?]

  /// The (section, row) of each row of the results.
  var indexPaths: [Int: (Int, Int)] {
    var paths: [Int: (Int, Int)] = [:]
    for (section, entry) in layout.enumerated() {
      for (row, index) in entry.rows.enumerated() { paths[index] = (section, row) }
    }
    return paths
  }
}

/// Remembers the last computed section layout.
final class SectionCache<Key> {
  var layout: [(key: Key, rows: [Int])]?
  var stamp: UInt64 = 0
}

/// One section of `SectionedResults` (RealmSwift's `ResultsSection`).
public struct ResultsSection<Key: _Persistable & Hashable, T: RealmCollectionValue>: RandomAccessCollection,
  Identifiable, CustomStringConvertible, Equatable
{
  /// The section's key.
  public let key: Key
  let results: Results<T>
  let rows: [Int]
  let keyBlock: (T) -> Key

  /// The section's identity: its key.
  public var id: Key { key }
  /// The position of the section's first element.
  public var startIndex: Int { 0 }
  /// The position past the section's last element: the number of elements in the section.
  public var endIndex: Int { rows.count }
  /// The element at `position` within the section.
  public subscript(position: Int) -> T { results[rows[position]] }
  /// An iterator over the section's elements.
  public func makeIterator() -> SectionIterator<T> { SectionIterator(indices.map { self[$0] }) }
  /// Whether both are the section with the same key of the same results.
  public static func == (lhs: ResultsSection, rhs: ResultsSection) -> Bool {
    lhs.key == rhs.key && lhs.results == rhs.results && lhs.rows == rhs.rows
  }
  /// The Realm of the section's results.
  public var realm: Realm? { results.realm }
  /// Whether the results can no longer be accessed.
  public var isInvalidated: Bool { results.isInvalidated }
  /// Whether the section is frozen.
  public var isFrozen: Bool { results.isFrozen }
  /// The section, frozen at the current version (its elements as they are now).
  public func freeze() -> ResultsSection {
    ResultsSection(key: key, results: results.freeze(), rows: rows, keyBlock: keyBlock)
  }
  /// The live section with this key, its elements as they are now; nil when the results cannot
  /// be thawed or no element has this key any more.
  public func thaw() -> ResultsSection? {
    guard let live = results.thaw() else { return nil }
    let sectioned = SectionedResults(results: live, keyBlock: keyBlock)
    return sectioned.first { $0.key == key }
  }
  /// The key and element types, the section's key and its number of elements.
  public var description: String { "ResultsSection<\(Key.self), \(T.self)>(key: \(key), count: \(rows.count))" }

  /// Calls `block` with the section as it is now, then after each commit that changes it, as
  /// Realm Core reports a section's changes: index paths and section indexes of the whole
  /// sectioned results, only this section's (its deletion, or its return after one, is a
  /// deleted or inserted section); commits that touch other sections only are not reported.
  /// On `queue` when given.
  ///
  /// ```swift
  /// let token = realm.objects(Dog.self).sectioned(by: \.firstLetter)[0].observe { change in
  ///   if case .update(_, let deletions, let insertions, _, _, _) = change { print(deletions, insertions) }
  /// }
  /// ```
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
    _ block: @escaping (SectionedResultsChange<ResultsSection<Key, T>>) -> Void
  ) -> NotificationToken {
    let key = self.key
    let keyBlock = self.keyBlock
    var last: SectionSnapshot<Key>?
    func section(of sectioned: SectionedResults<Key, T>) -> ResultsSection<Key, T> {
      sectioned.first { $0.key == key }
        ?? ResultsSection(key: key, results: sectioned.results, rows: [], keyBlock: keyBlock)
    }
    return results.observe(keyPaths: keyPaths, on: queue) { change in
      switch change {
      case .initial(let results):
        let sectioned = SectionedResults(results: results, keyBlock: keyBlock)
        last = sectioned.snapshot()
        block(.initial(section(of: sectioned)))
      case .update(let results, let deletions, let insertions, let modifications):
        let sectioned = SectionedResults(results: results, keyBlock: keyBlock)
        let now = sectioned.snapshot()
        defer { last = now }
        guard let old = last,
          let change = SectionChange(
            from: old, to: now, deletions: deletions, insertions: insertions, modifications: modifications, only: key)
        else { return }
        block(
          .update(
            section(of: sectioned), deletions: change.deletions, insertions: change.insertions,
            modifications: change.modifications, sectionsToInsert: change.sectionsToInsert,
            sectionsToDelete: change.sectionsToDelete))
      case .error(let error):
        Logger.shared.log(level: .error, message: "A section could not be observed: \(error)")
      }
    }
  }
}

extension ResultsSection where T: ObjectBase {
  /// `observe` with the key paths given as Swift key paths of the elements.
  public func observe(
    keyPaths: [PartialKeyPath<T>], on queue: DispatchQueue? = nil,
    _ block: @escaping (SectionedResultsChange<ResultsSection<Key, T>>) -> Void
  ) -> NotificationToken {
    observe(keyPaths: keyPaths.map { _KeyPathProbe.name(ofPartial: $0) }, on: queue, block)
  }
}

/// What `SectionedResults` and `ResultsSection` share (RealmSwift's `RealmSectionedResult`), so
/// generic code, such as ShoalCombine's publishers, can observe, freeze and hand over either.
///
/// ```swift
/// func watch<S: RealmSectionedResult>(_ sections: S) -> NotificationToken {
///   sections.observe(keyPaths: nil, on: nil) { change in
///     if case .update(let now, _, _, _, _, _) = change { print(now.count) }
///   }
/// }
/// ```
public protocol RealmSectionedResult: RandomAccessCollection, Equatable, ThreadConfined {
  /// The Realm the collection belongs to.
  var realm: Realm? { get }
  /// Whether the collection can no longer be accessed.
  var isInvalidated: Bool { get }
  /// The number of elements (sections of `SectionedResults`, rows of a `ResultsSection`).
  var count: Int { get }
  /// Whether the collection is frozen.
  var isFrozen: Bool { get }
  /// A frozen snapshot of the collection, readable from any thread.
  func freeze() -> Self
  /// The live collection for a frozen one; itself when live.
  func thaw() -> Self?
  /// Calls `block` with the collection now and after each commit that changes it; see
  /// `SectionedResults.observe(keyPaths:on:_:)`.
  func observe(
    keyPaths: [String]?, on queue: DispatchQueue?, _ block: @escaping (SectionedResultsChange<Self>) -> Void
  ) -> NotificationToken
}

extension SectionedResults: RealmSectionedResult {}
extension ResultsSection: RealmSectionedResult {}

/// The changes to sectioned results (RealmSwift's `SectionedResultsChange`).
public enum SectionedResultsChange<Collection> {
  /// The first evaluation.
  case initial(Collection)
  /// Elements deleted (old index paths), inserted and modified (new index paths), and whole
  /// sections inserted and deleted; the rows of a deleted section are implied by it and not
  /// listed again, those of an inserted section are listed as insertions (as Realm Core does).
  case update(
    Collection, deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath],
    sectionsToInsert: IndexSet, sectionsToDelete: IndexSet)
}

extension Results {
  /// The results sorted by `keyPath` and divided into sections of equal values of it.
  public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
    -> SectionedResults<Key, Element> where Element: ObjectBase
  {
    let name = _KeyPathProbe.name(of: keyPath)
    return SectionedResults(results: sorted(byKeyPath: name, ascending: ascending), keyBlock: { $0[keyPath: keyPath] })
  }

  /// The results sorted by `sortDescriptors` and divided into sections of equal values of `keyPath`.
  public func sectioned<Key: _Persistable & Hashable>(
    by keyPath: KeyPath<Element, Key>, sortDescriptors: [SortDescriptor]
  ) -> SectionedResults<Key, Element> where Element: ObjectBase {
    guard let first = sortDescriptors.first else {
      fatalError("Can not section Results with empty sortDescriptor parameter.")
    }
    guard first.keyPath == _KeyPathProbe.name(of: keyPath) else {
      fatalError("The section key path must match the primary sort descriptor.")
    }
    return SectionedResults(results: sorted(by: sortDescriptors), keyBlock: { $0[keyPath: keyPath] })
  }

  /// The results sorted by `sortDescriptors` and divided into sections by `keyBlock`'s value
  /// (sort so that equal keys are adjacent).
  public func sectioned<Key: _Persistable & Hashable>(
    sortDescriptors: [SortDescriptor], _ keyBlock: @escaping ((Element) -> Key)
  ) -> SectionedResults<Key, Element> {
    if sortDescriptors.isEmpty { fatalError("Can not section Results with empty sortDescriptor parameter.") }
    return SectionedResults(results: sorted(by: sortDescriptors), keyBlock: keyBlock)
  }
}

extension RealmCollection where Element: ObjectBase {
  /// The elements sorted by `keyPath` and divided into sections of equal values of it (on
  /// `List`, `MutableSet`, `LinkingObjects` and `AnyRealmCollection`, as on `Results`).
  public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
    -> SectionedResults<Key, Element>
  {
    sorted(by: [SortDescriptor]()).sectioned(by: keyPath, ascending: ascending)
  }

  /// The elements sorted by `sortDescriptors` and divided into sections of equal values of
  /// `keyPath`.
  public func sectioned<Key: _Persistable & Hashable>(
    by keyPath: KeyPath<Element, Key>, sortDescriptors: [SortDescriptor]
  ) -> SectionedResults<Key, Element> {
    sorted(by: sortDescriptors).sectioned(by: keyPath, sortDescriptors: sortDescriptors)
  }
}

extension RealmCollection {
  /// The elements sorted by `sortDescriptors` and divided into sections by `keyBlock`'s value.
  public func sectioned<Key: _Persistable & Hashable>(
    sortDescriptors: [SortDescriptor], _ keyBlock: @escaping ((Element) -> Key)
  ) -> SectionedResults<Key, Element> {
    sorted(by: sortDescriptors).sectioned(sortDescriptors: sortDescriptors, keyBlock)
  }
}

/// An iterator over the sections of `SectionedResults` (RealmSwift's
/// `SectionedResultsIterator`); the sections are those of the version it starts at.
public struct SectionedResultsIterator<Key: _Persistable & Hashable, Element: RealmCollectionValue>: IteratorProtocol {
  private let sections: [ResultsSection<Key, Element>]
  private var position = 0

  init(_ sectioned: SectionedResults<Key, Element>) {
    sections = sectioned.indices.map { sectioned[$0] }
  }

  /// The next section, or nil after the last.
  public mutating func next() -> ResultsSection<Key, Element>? {
    guard position < sections.count else { return nil }
    defer { position += 1 }
    return sections[position]
  }
}

/// An iterator over the elements of a `ResultsSection` (RealmSwift's `SectionIterator`): a
/// snapshot taken when iteration starts.
public struct SectionIterator<Element: RealmCollectionValue>: IteratorProtocol {
  private var elements: IndexingIterator<[Element]>

  init(_ elements: [Element]) { self.elements = elements.makeIterator() }

  /// The next element, or nil after the last.
  public mutating func next() -> Element? { elements.next() }
}

/// RealmSwift's name for `SectionedResultsIterator`.
public typealias RLMSectionedResultsIterator = SectionedResultsIterator
/// RealmSwift's name for `SectionIterator`.
public typealias RLMSectionIterator = SectionIterator
/// RealmSwift's other name for `SectionedResultsChange`.
public typealias RealmSectionedResultsChange = SectionedResultsChange

extension RealmCollection {
  /// The values sorted (ascending or descending) and divided into sections by `block`'s
  /// value: for collections of values, as RealmSwift's.
  ///
  /// ```swift
  /// let byInitial = person.tags.sectioned(by: { String($0.prefix(1)) })
  /// ```
  public func sectioned<Key: _Persistable & Hashable>(by block: @escaping ((Element) -> Key), ascending: Bool = true)
    -> SectionedResults<Key, Element>
  {
    sectioned(sortDescriptors: [SortDescriptor(keyPath: "self", ascending: ascending)], block)
  }
}

extension RealmCollection where Element: ObjectBase {
  /// The objects sorted by `sortDescriptors` and divided into sections by `block`'s value (the
  /// primary sort descriptor should decide the section).
  public func sectioned<Key: _Persistable & Hashable>(
    by block: @escaping ((Element) -> Key), sortDescriptors: [SortDescriptor]
  ) -> SectionedResults<Key, Element> {
    sectioned(sortDescriptors: sortDescriptors, block)
  }
}

#if !canImport(UIKit)
  extension IndexPath {
    /// An index path of an item in a section, as UIKit and AppKit declare it (Linux's
    /// Foundation does not), for `SectionedResults` subscripts and changes.
    public init(item: Int, section: Int) { self.init(indexes: [section, item]) }
    /// The section (the first index).
    public var section: Int {
      get { self[0] }
      set { self[0] = newValue }
    }
    /// The item within the section (the second index).
    public var item: Int {
      get { self[1] }
      set { self[1] = newValue }
    }
  }
#endif

extension RealmCollection {
  /// Projections sorted by the root property `keyPath` reads and divided into sections of
  /// equal values of it (a computed property of the projection sorts by what it reads).
  public func sectioned<Key: _Persistable & Hashable, O: ObjectBase>(
    by keyPath: KeyPath<Element, Key>, ascending: Bool = true
  ) -> SectionedResults<Key, Element> where Element: Projection<O> {
    sectioned(sortDescriptors: [SortDescriptor(keyPath: _name(for: keyPath), ascending: ascending)]) {
      $0[keyPath: keyPath]
    }
  }

  /// Projections sorted by `sortDescriptors` and divided into sections of equal values of
  /// `keyPath`, which must read the primary sort descriptor's property.
  public func sectioned<Key: _Persistable & Hashable, O: ObjectBase>(
    by keyPath: KeyPath<Element, Key>, sortDescriptors: [SortDescriptor]
  ) -> SectionedResults<Key, Element> where Element: Projection<O> {
    guard let first = sortDescriptors.first else {
      fatalError("Can not section Results with empty sortDescriptor parameter.")
    }
    guard first.keyPath == _name(for: keyPath) else {
      fatalError("The section key path must match the primary sort descriptor.")
    }
    return sectioned(sortDescriptors: sortDescriptors) { $0[keyPath: keyPath] }
  }

  /// Projections sorted by `sortDescriptors` and divided into sections by `block`'s value.
  public func sectioned<Key: _Persistable & Hashable, O: ObjectBase>(
    by block: @escaping ((Element) -> Key), sortDescriptors: [SortDescriptor]
  ) -> SectionedResults<Key, Element> where Element: Projection<O> {
    sectioned(sortDescriptors: sortDescriptors, block)
  }
}
