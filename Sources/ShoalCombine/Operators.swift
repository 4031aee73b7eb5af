import Dispatch
import Foundation
import OpenCombine
import Shoal

// MARK: - freeze()

extension Publisher {
  /// Freezes each value the publisher emits, so it can be used on any thread.
  ///
  /// ```swift
  /// let cancellable = valuePublisher(dog)
  ///   .freeze()
  ///   .receive(on: DispatchQueue.global().ocombine)
  ///   .sink(receiveCompletion: { _ in }, receiveValue: { print($0.name) })
  /// ```
  public func freeze<T>() -> Publishers.Map<Self, T> where Output: ThreadConfined, T == Output {
    map { $0.freeze() }
  }

  /// Freezes the object of each `ObjectChange` the publisher emits.
  public func freeze<T: Object>() -> Publishers.Map<Self, ObjectChange<T>> where Output == ObjectChange<T> {
    map {
      if case .change(let object, let properties) = $0 { return .change(object.freeze(), properties) }
      return $0
    }
  }

  /// Freezes the collection of each `RealmCollectionChange` the publisher emits.
  public func freeze<T: RealmCollection>() -> Publishers.Map<Self, RealmCollectionChange<T>>
  where Output == RealmCollectionChange<T> {
    map {
      switch $0 {
      case .initial(let collection): return .initial(collection.freeze())
      case .update(let collection, let deletions, let insertions, let modifications):
        return .update(collection.freeze(), deletions: deletions, insertions: insertions, modifications: modifications)
      case .error(let error): return .error(error)
      }
    }
  }

  /// Freezes the sectioned results of each `SectionedResultsChange` the publisher emits.
  public func freeze<T: RealmSectionedResult>() -> Publishers.Map<Self, SectionedResultsChange<T>>
  where Output == SectionedResultsChange<T> {
    map {
      switch $0 {
      case .initial(let collection): return .initial(collection.freeze())
      case .update(
        let collection, let deletions, let insertions, let modifications, let sectionsToInsert, let sectionsToDelete):
        return .update(
          collection.freeze(), deletions: deletions, insertions: insertions, modifications: modifications,
          sectionsToInsert: sectionsToInsert, sectionsToDelete: sectionsToDelete)
      }
    }
  }

  /// Freezes the map of each `RealmMapChange` the publisher emits.
  public func freeze<T: RealmKeyedCollection>() -> Publishers.Map<Self, RealmMapChange<T>>
  where Output == RealmMapChange<T> {
    map {
      switch $0 {
      case .initial(let collection): return .initial(collection.freeze())
      case .update(let collection, let deletions, let insertions, let modifications):
        return .update(collection.freeze(), deletions: deletions, insertions: insertions, modifications: modifications)
      case .error(let error): return .error(error)
      }
    }
  }

  /// Freezes the projection of each `ObjectChange` the publisher emits.
  public func freeze<T: ProjectionObservable>() -> Publishers.Map<Self, ObjectChange<T>>
  where Output == ObjectChange<T>, T: ThreadConfined {
    map {
      if case .change(let projection, let properties) = $0 { return .change(projection.freeze(), properties) }
      return $0
    }
  }
}

// MARK: - threadSafeReference()

extension Publisher where Output: ThreadConfined {
  /// Lets a later `receive(on:)` hand the values over through `ThreadSafeReference`s. Needed
  /// when operators between the Realm publisher and `receive(on:)` hide the Realm publisher.
  ///
  /// ```swift
  /// let cancellable = valuePublisher(dog)
  ///   .filter { $0.age > 2 }
  ///   .threadSafeReference()
  ///   .receive(on: DispatchQueue(label: "worker").ocombine)
  ///   .sink(receiveCompletion: { _ in }, receiveValue: { print($0.name) })
  /// ```
  public func threadSafeReference() -> RealmPublishers.MakeThreadSafe<Self> {
    RealmPublishers.MakeThreadSafe(self)
  }
}

extension Publisher {
  /// Lets a later `receive(on:)` hand object changes over through `ThreadSafeReference`s.
  public func threadSafeReference<T: Object>() -> RealmPublishers.MakeThreadSafeObjectChangeset<Self, T>
  where Output == ObjectChange<T> {
    RealmPublishers.MakeThreadSafeObjectChangeset(self)
  }

  /// Lets a later `receive(on:)` hand projection changes over through `ThreadSafeReference`s.
  public func threadSafeReference<T: ProjectionObservable>() -> RealmPublishers.MakeThreadSafeObjectChangeset<Self, T>
  where Output == ObjectChange<T>, T: ThreadConfined {
    RealmPublishers.MakeThreadSafeObjectChangeset(self)
  }

  /// Lets a later `receive(on:)` hand collection changes over through `ThreadSafeReference`s.
  public func threadSafeReference<T: RealmCollection>()
    -> RealmPublishers.MakeThreadSafeCollectionChangeset<Self, T> where Output == RealmCollectionChange<T>
  {
    RealmPublishers.MakeThreadSafeCollectionChangeset(self)
  }

  /// Lets a later `receive(on:)` hand map changes over through `ThreadSafeReference`s.
  public func threadSafeReference<T: RealmKeyedCollection>()
    -> RealmPublishers.MakeThreadSafeKeyedCollectionChangeset<Self, T> where Output == RealmMapChange<T>
  {
    RealmPublishers.MakeThreadSafeKeyedCollectionChangeset(self)
  }

  /// Lets a later `receive(on:)` hand sectioned results changes over through `ThreadSafeReference`s.
  public func threadSafeReference<T: RealmSectionedResult>()
    -> RealmPublishers.MakeThreadSafeSectionedResultsChangeset<Self, T> where Output == SectionedResultsChange<T>
  {
    RealmPublishers.MakeThreadSafeSectionedResultsChangeset(self)
  }
}

// MARK: - Publishers of collections

extension RealmCollection where Self: RealmSubscribable {
  /// A publisher that emits `Void` each time the collection changes.
  ///
  /// Despite the name, this actually emits *after* the collection has changed.
  public var objectWillChange: RealmPublishers.WillChange<Self> { RealmPublishers.WillChange(self) }

  /// A publisher that emits the collection each time it changes.
  @available(*, deprecated, renamed: "collectionPublisher")
  public var publisher: RealmPublishers.Value<Self> { RealmPublishers.Value(self) }

  /// A publisher that emits the collection at once and each time it changes.
  ///
  /// ```swift
  /// let cancellable = realm.objects(Dog.self).collectionPublisher
  ///   .sink(receiveCompletion: { _ in }, receiveValue: { print($0.count) })
  /// ```
  public var collectionPublisher: RealmPublishers.Value<Self> { RealmPublishers.Value(self) }

  /// A publisher that emits the collection each time a change touches one of `keyPaths`.
  public func collectionPublisher(keyPaths: [String]?) -> RealmPublishers.Value<Self> {
    RealmPublishers.Value(self, keyPaths: keyPaths)
  }

  /// A publisher that emits the collection's `RealmCollectionChange`s.
  public var changesetPublisher: RealmPublishers.CollectionChangeset<Self> { RealmPublishers.CollectionChangeset(self) }

  /// A publisher that emits the `RealmCollectionChange`s that touch `keyPaths`.
  public func changesetPublisher(keyPaths: [String]?) -> RealmPublishers.CollectionChangeset<Self> {
    RealmPublishers.CollectionChangeset(self, keyPaths: keyPaths)
  }
}

extension RealmKeyedCollection where Self: RealmSubscribable {
  /// A publisher that emits `Void` each time the map changes.
  ///
  /// Despite the name, this actually emits *after* the map has changed.
  public var objectWillChange: RealmPublishers.WillChange<Self> { RealmPublishers.WillChange(self) }

  /// A publisher that emits the map each time it changes.
  @available(*, deprecated, renamed: "collectionPublisher")
  public var publisher: RealmPublishers.Value<Self> { RealmPublishers.Value(self) }

  /// A publisher that emits the map at once and each time it changes.
  public var collectionPublisher: RealmPublishers.Value<Self> { RealmPublishers.Value(self) }

  /// A publisher that emits the map each time a change touches one of `keyPaths`.
  public func collectionPublisher(keyPaths: [String]?) -> RealmPublishers.Value<Self> {
    RealmPublishers.Value(self, keyPaths: keyPaths)
  }

  /// A publisher that emits the map's `RealmMapChange`s.
  public var changesetPublisher: RealmPublishers.MapChangeset<Self> { RealmPublishers.MapChangeset(self) }

  /// A publisher that emits the `RealmMapChange`s that touch `keyPaths`.
  public func changesetPublisher(keyPaths: [String]?) -> RealmPublishers.MapChangeset<Self> {
    RealmPublishers.MapChangeset(self, keyPaths: keyPaths)
  }
}

extension SectionedResults {
  /// A publisher that emits `Void` each time the sectioned results change.
  ///
  /// Despite the name, this actually emits *after* the change.
  public var objectWillChange: RealmPublishers.WillChange<SectionedResults> { RealmPublishers.WillChange(self) }

  /// A publisher that emits the sectioned results at once and each time they change.
  public var collectionPublisher: RealmPublishers.Value<Self> { RealmPublishers.Value(self) }

  /// A publisher that emits the sectioned results each time a change touches one of `keyPaths`.
  public func collectionPublisher(keyPaths: [String]?) -> RealmPublishers.Value<Self> {
    RealmPublishers.Value(self, keyPaths: keyPaths)
  }

  /// A publisher that emits the sectioned results' `SectionedResultsChange`s.
  public var changesetPublisher: RealmPublishers.SectionedResultsChangeset<Self> {
    RealmPublishers.SectionedResultsChangeset(self)
  }

  /// A publisher that emits the `SectionedResultsChange`s that touch `keyPaths`.
  public func changesetPublisher(keyPaths: [String]?) -> RealmPublishers.SectionedResultsChangeset<Self> {
    RealmPublishers.SectionedResultsChangeset(self, keyPaths: keyPaths)
  }
}

extension ResultsSection {
  /// A publisher that emits `Void` each time the section changes.
  ///
  /// Despite the name, this actually emits *after* the change.
  public var objectWillChange: RealmPublishers.WillChange<ResultsSection> { RealmPublishers.WillChange(self) }

  /// A publisher that emits the section at once and each time it changes.
  public var collectionPublisher: RealmPublishers.Value<Self> { RealmPublishers.Value(self) }

  /// A publisher that emits the section each time a change touches one of `keyPaths`.
  public func collectionPublisher(keyPaths: [String]?) -> RealmPublishers.Value<Self> {
    RealmPublishers.Value(self, keyPaths: keyPaths)
  }

  /// A publisher that emits the section's `SectionedResultsChange`s.
  public var changesetPublisher: RealmPublishers.SectionChangeset<Self> { RealmPublishers.SectionChangeset(self) }

  /// A publisher that emits the section's `SectionedResultsChange`s that touch `keyPaths`.
  public func changesetPublisher(keyPaths: [String]?) -> RealmPublishers.SectionChangeset<Self> {
    RealmPublishers.SectionChangeset(self, keyPaths: keyPaths)
  }
}

// MARK: - Objects, projections and Realm

extension Realm {
  /// A publisher that emits `Void` after each commit to the Realm (from this thread, another
  /// thread or another process).
  ///
  /// Despite the name, this actually emits *after* the Realm has changed.
  public var objectWillChange: RealmPublishers.RealmWillChange { RealmPublishers.RealmWillChange(self) }
}

extension Object {
  /// A publisher that emits `Void` each time the object changes.
  ///
  /// Despite the name, this actually emits *after* the object has changed.
  public var objectWillChange: RealmPublishers.WillChange<Object> { RealmPublishers.WillChange(self) }
}

extension EmbeddedObject {
  /// A publisher that emits `Void` each time the embedded object changes.
  ///
  /// Despite the name, this actually emits *after* the embedded object has changed.
  public var objectWillChange: RealmPublishers.WillChange<EmbeddedObject> { RealmPublishers.WillChange(self) }
}

extension Projection {
  /// A publisher that emits `Void` each time a projected property changes.
  ///
  /// Despite the name, this actually emits *after* the projection has changed.
  public var objectWillChange: RealmPublishers.WillChange<Projection> { RealmPublishers.WillChange(self) }
}

extension List: ObservableObject {
  /// A publisher that emits `Void` each time the list changes.
  ///
  /// Despite the name, this actually emits *after* the list has changed.
  public var objectWillChange: RealmPublishers.WillChange<List> { RealmPublishers.WillChange(self) }
}

extension MutableSet: ObservableObject {
  /// A publisher that emits `Void` each time the set changes.
  ///
  /// Despite the name, this actually emits *after* the set has changed.
  public var objectWillChange: RealmPublishers.WillChange<MutableSet> { RealmPublishers.WillChange(self) }
}

extension Map: ObservableObject {
  /// A publisher that emits `Void` each time the map changes.
  ///
  /// Despite the name, this actually emits *after* the map has changed.
  public var objectWillChange: RealmPublishers.WillChange<Map> { RealmPublishers.WillChange(self) }
}

extension LinkingObjects {
  /// A publisher that emits `Void` each time the linking objects change.
  ///
  /// Despite the name, this actually emits *after* the collection has changed.
  public var objectWillChange: RealmPublishers.WillChange<LinkingObjects> { RealmPublishers.WillChange(self) }
}

extension Results {
  /// A publisher that emits `Void` each time the results change.
  ///
  /// Despite the name, this actually emits *after* the results have changed.
  public var objectWillChange: RealmPublishers.WillChange<Results> { RealmPublishers.WillChange(self) }
}

extension Object: ObservableObject {}
extension EmbeddedObject: ObservableObject {}
extension Projection: ObservableObject {}

// MARK: - Free functions

/// A publisher that emits the object each time it changes, and finishes when it is deleted.
///
/// ```swift
/// let cancellable = valuePublisher(dog, keyPaths: ["name"])
///   .sink(receiveCompletion: { _ in print("deleted") }, receiveValue: { print($0.name) })
/// ```
public func valuePublisher<T: Object>(_ object: T, keyPaths: [String]? = nil) -> RealmPublishers.Value<T> {
  RealmPublishers.Value<T>(object, keyPaths: keyPaths)
}

/// A publisher that emits the collection at once and each time it changes.
public func valuePublisher<T: RealmCollection>(_ collection: T, keyPaths: [String]? = nil) -> RealmPublishers.Value<T>
where T: RealmSubscribable {
  RealmPublishers.Value<T>(collection, keyPaths: keyPaths)
}

/// A publisher that emits the projection each time a projected property changes.
public func valuePublisher<T: ProjectionObservable>(_ projection: T, keyPaths: [String]? = nil)
  -> RealmPublishers.Value<T> where T: RealmSubscribable & ThreadConfined
{
  RealmPublishers.Value<T>(projection, keyPaths: keyPaths)
}

/// A publisher that emits the object's `ObjectChange`s, and finishes when it is deleted.
///
/// ```swift
/// let cancellable = changesetPublisher(dog)
///   .sink { change in
///     if case .change(_, let properties) = change { print(properties.map(\.name)) }
///   }
/// ```
public func changesetPublisher<T: Object>(_ object: T, keyPaths: [String]? = nil) -> RealmPublishers.ObjectChangeset<T>
{
  precondition(object.realm != nil, "Only managed objects can be published")
  precondition(!object.isInvalidated, "Object is invalidated or deleted")
  return RealmPublishers.ObjectChangeset<T> { queue, block in
    object.observe(keyPaths: keyPaths, on: queue, block)
  }
}

/// A publisher that emits the projection's `ObjectChange`s, and finishes when its object is deleted.
public func changesetPublisher<T: ProjectionObservable>(_ projection: T, keyPaths: [String]? = nil)
  -> RealmPublishers.ObjectChangeset<T> where T: ThreadConfined
{
  precondition(projection.realm != nil, "Only managed objects can be published")
  precondition(!projection.isInvalidated, "Object is invalidated or deleted")
  return RealmPublishers.ObjectChangeset<T> { queue, block in
    projection.observe(keyPaths: keyPaths, on: queue, block)
  }
}

/// A publisher that emits the collection's `RealmCollectionChange`s.
public func changesetPublisher<T: RealmCollection>(_ collection: T, keyPaths: [String]? = nil)
  -> RealmPublishers.CollectionChangeset<T>
{
  RealmPublishers.CollectionChangeset<T>(collection, keyPaths: keyPaths)
}
