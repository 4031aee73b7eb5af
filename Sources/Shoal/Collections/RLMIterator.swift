/// The iterator of every Realm collection (RealmSwift's `RLMIterator`).
///
/// `for … in` over a `Results`, `List`, `MutableSet`, `LinkingObjects` or `AnyRealmCollection`
/// walks the elements the collection held when the loop started, as RealmSwift documents:
/// deleting or editing objects inside the loop changes neither which elements it visits nor
/// their order.
///
/// ```swift
/// try realm.write {
///   for dog in realm.objects(Dog.self).filter("age > 5") {
///     realm.delete(dog)  // every matching dog is deleted
///   }
/// }
/// ```
public struct RLMIterator<Element: RealmCollectionValue>: IteratorProtocol {
  private let count: Int
  private var position = 0
  private let make: (Int) -> Element

  /// Iterates `count` elements, making the element at each position with `make` (which reads
  /// a snapshot taken when the iteration began).
  init(count: Int, make: @escaping (Int) -> Element) {
    self.count = count
    self.make = make
  }

  /// Iterates the elements of an array.
  init(_ elements: [Element]) {
    self.init(count: elements.count) { elements[$0] }
  }

  /// The next element, or nil after the last.
  public mutating func next() -> Element? {
    guard position < count else { return nil }
    defer { position += 1 }
    return make(position)
  }
}
