// Finding every Swift class in the process without the Objective-C runtime.
//
// RealmSwift uses the Objective-C runtime to find every `Object` subclass when a configuration
// lists no object types. Linux has no Objective-C runtime, so we read the Swift runtime's own
// records instead: every Swift image carries a `swift5_type_metadata` ELF section (`__swift5_types`
// on Mach-O) with a record for each nominal type it defines. Each image registers its sections
// with the runtime at load time (`swift_addNewDSOImage`, from swiftrt.o), and
// `swift_enumerateAllMetadataSections` walks that list; swift-testing finds tests the same way.
//
// The binary layouts read here are the Swift runtime's (no ABI stability is promised on Linux, so
// each step is checked and anything that does not match is skipped rather than trusted):
// - `MetadataSections` (swift/shims/MetadataSections.h): `version`, `baseAddress`, two unused
//   pointers, then `{start, length}` ranges; the third range is `swift5_type_metadata`. Versions
//   only ever append ranges (Swift 6.3 registers version 5), so that prefix is the same in all.
// - `TypeMetadataRecord` (swift/ABI/Metadata.h): one `Int32` relative pointer whose two low bits
//   are a `TypeReferenceKind` (0 direct descriptor, 1 indirect descriptor, 2/3 Objective-C only).
// - `TypeContextDescriptor`: `UInt32` flags, then relative pointers to the parent, the name, the
//   metadata access function and the field descriptor. Flags: bits 0-4 the kind (16 is class),
//   bit 7 generic, bits 16-17 the metadata initialization (2 is foreign, i.e. imported from C,
//   such as Foundation's CF types).
// - Class metadata without Objective-C interop: kind word (0 for a class), superclass, five 32-bit
//   and two 16-bit layout fields, then the pointer back to the class's type context descriptor.

/// Every non-generic Swift class defined in the images loaded when this was first called.
///
/// The images are the main executable and every shared library loaded so far (libswiftCore,
/// Foundation, XCTest, …, and libraries opened with `dlopen` before the first call). Private,
/// local and nested classes and actors are included. Generic classes are left out (they have no
/// metadata until their arguments are known; a class nested in a generic type or declared in a
/// generic function is generic too), and so are classes imported from C and anything whose
/// records do not check out. Filter the result with `as? SomeBase.Type` to find the subclasses of
/// `SomeBase`; the order is that of the images and of the types within each, with no duplicates.
///
/// The list is computed once, on the first call, and cached: an image loaded later is not seen.
/// Computing it completes the metadata of every class found, which is what the first use of each
/// class would do anyway (about half a millisecond for ~300 classes). Only ELF platforms (Linux,
/// Android, FreeBSD, OpenBSD) are supported; elsewhere the list is empty.
func loadedClassTypes() -> [AnyClass] {
  discoveredClassTypes
}

/// The cache behind ``loadedClassTypes()``; a global `let` is initialized once, thread-safely.
private let discoveredClassTypes: [AnyClass] = discoverClassTypes()

#if os(Linux) || os(Android) || os(FreeBSD) || os(OpenBSD)

  /// The Swift runtime's enumeration of the metadata sections of every loaded image (ELF only).
  ///
  /// Exported by the ELF builds of libswiftCore and of the static runtime; the C declaration is in
  /// the runtime's ImageInspectionCommon.h. It is a C function, but a function that takes two
  /// pointers and returns nothing is called the same way under the Swift and C conventions (first
  /// two integer registers, no result, no `self`/error registers), which is why a `@_silgen_name`
  /// declaration can call it (the Swift runtime's own tests declare it like this). `body` gets
  /// each image's `MetadataSections` and `context`, and returns false to stop.
  @_silgen_name("swift_enumerateAllMetadataSections")
  private func swiftEnumerateAllMetadataSections(
    _ body: @convention(c) (_ sections: UnsafeRawPointer, _ context: UnsafeMutableRawPointer?) -> Bool,
    _ context: UnsafeMutableRawPointer?
  )

  /// What a Swift metadata access function returns (the runtime's `MetadataResponse`): the type
  /// metadata, and the state it has reached (0 is complete). A struct of two words is returned in
  /// two registers under the Swift convention, as the runtime's `{ ptr, i64 }` is.
  private struct MetadataResponse {
    var metadata: UnsafeRawPointer?
    var state: Int
  }

  /// A metadata access function of a non-generic type: Swift calling convention, one argument (the
  /// `MetadataRequest`, 0 for complete metadata and blocking until it is), two registers back.
  private typealias MetadataAccessFunction = @convention(thin) (_ request: Int) -> MetadataResponse

  /// The byte offset of the `swift5_type_metadata` range in `MetadataSections`: the `version`,
  /// `baseAddress`, `unused0` and `unused1` words, then the `swift5_protocols` and
  /// `swift5_protocol_conformances` ranges of two words each.
  private let typeMetadataRangeOffset = 8 * MemoryLayout<UInt>.size

  /// The byte offset of the class descriptor pointer in Swift class metadata without Objective-C
  /// interop: the kind and superclass words, then flags, instance address point, instance size
  /// (32 bits each), instance alignment mask and a reserved field (16 bits each), class size and
  /// class address point (32 bits each).
  private let classDescriptionOffset = 2 * MemoryLayout<UInt>.size + 5 * 4 + 2 * 2

  /// `ContextDescriptorKind.Class`.
  private let classDescriptorKind: UInt32 = 16

  /// `MetadataInitializationKind.ForeignMetadataInitialization`: a class imported from C, whose
  /// metadata is not Swift class metadata.
  private let foreignMetadataInitialization: UInt32 = 2

  private func discoverClassTypes() -> [AnyClass] {
    var seen = Set<ObjectIdentifier>()
    var classes: [AnyClass] = []
    // Collect the descriptors first and run metadata accessors only once the enumeration is over:
    // the runtime walks a snapshot of its image list, but nothing promises that calling back into
    // the runtime from inside the enumeration is allowed.
    for descriptor in classDescriptors() {
      guard let type = classType(describedBy: descriptor) else { continue }
      if seen.insert(ObjectIdentifier(type)).inserted {
        classes.append(type)
      }
    }
    return classes
  }

  /// The type context descriptors of the non-generic Swift classes of every loaded image.
  private func classDescriptors() -> [UnsafeRawPointer] {
    var descriptors: [UnsafeRawPointer] = []
    withUnsafeMutablePointer(to: &descriptors) { descriptors in
      swiftEnumerateAllMetadataSections(
        { sections, context in
          // `context` is the `descriptors` pointer passed below, valid for the whole enumeration.
          guard let descriptors = context?.assumingMemoryBound(to: [UnsafeRawPointer].self) else {
            return false
          }
          // The runtime registers images from version 1 on; every version starts with the same
          // fields up to and including `swift5_type_metadata` (see the top of this file).
          guard sections.load(as: UInt.self) >= 1 else { return true }
          let start = sections.load(fromByteOffset: typeMetadataRangeOffset, as: UInt.self)
          let length = sections.load(fromByteOffset: typeMetadataRangeOffset + MemoryLayout<UInt>.size, as: UInt.self)
          guard let base = UnsafeRawPointer(bitPattern: start), let count = Int(exactly: length) else {
            return true
          }
          appendClassDescriptors(inSection: UnsafeRawBufferPointer(start: base, count: count), to: descriptors)
          return true
        }, descriptors)
    }
    return descriptors
  }

  /// Append the descriptor of each non-generic Swift class listed in a `swift5_type_metadata`
  /// section, an array of 32-bit `TypeMetadataRecord`s.
  private func appendClassDescriptors(
    inSection section: UnsafeRawBufferPointer, to descriptors: UnsafeMutablePointer<[UnsafeRawPointer]>
  ) {
    let recordSize = MemoryLayout<Int32>.size
    // The linker concatenates 4-byte aligned arrays of 4-byte records; anything else is not a
    // section we understand.
    guard let base = section.baseAddress, Int(bitPattern: base) % recordSize == 0,
      section.count % recordSize == 0
    else { return }
    for recordOffset in stride(from: 0, to: section.count, by: recordSize) {
      let record = base + recordOffset
      // A relative pointer: the target's address minus the record's own address, with the
      // reference kind in its two low bits (targets are at least 4-byte aligned).
      let raw = record.load(as: Int32.self)
      let offset = Int(raw & ~3)
      guard offset != 0 else { continue }
      let descriptor: UnsafeRawPointer?
      switch raw & 3 {
      case 0:  // Direct: the descriptor itself, in this image.
        descriptor = record + offset
      case 1:  // Indirect: a pointer (a GOT-like slot the dynamic linker filled) to the descriptor.
        // The slot is pointer-aligned in practice; an unaligned load costs nothing and cannot trap.
        descriptor = (record + offset).loadUnaligned(as: UnsafeRawPointer?.self)
      default:  // Objective-C class name or class reference: never on ELF.
        continue
      }
      guard let descriptor else { continue }
      let flags = descriptor.load(as: UInt32.self)
      let isGeneric = flags & 0x80 != 0
      let metadataInitialization = (flags >> 16) & 0x3
      guard flags & 0x1F == classDescriptorKind, !isGeneric, metadataInitialization != foreignMetadataInitialization
      else { continue }
      descriptors.pointee.append(descriptor)
    }
  }

  /// The class described by a non-generic class descriptor, or nil if its metadata does not check out.
  private func classType(describedBy descriptor: UnsafeRawPointer) -> AnyClass? {
    // The fourth field of a type context descriptor: a relative pointer to the metadata access
    // function (never null for a non-generic class, but checked).
    let accessorField = descriptor + 3 * MemoryLayout<Int32>.size
    let accessorOffset = Int(accessorField.load(as: Int32.self))
    guard accessorOffset != 0 else { return nil }
    // The accessor of a non-generic type takes a `MetadataRequest` and returns a `MetadataResponse`
    // with the Swift calling convention and no context, which is what a thin function is; both are
    // one code pointer, so the bit cast only gives the address its type.
    let accessor = unsafeBitCast(accessorField + accessorOffset, to: MetadataAccessFunction.self)
    let response = accessor(0)
    guard response.state == 0, let metadata = response.metadata else { return nil }
    // Check that this is class metadata (kind 0) that points back at our descriptor before
    // treating it as a class: a Swift class's metadata is exactly what a class metatype holds.
    guard metadata.load(as: UInt.self) == 0,
      metadata.load(fromByteOffset: classDescriptionOffset, as: UnsafeRawPointer?.self) == descriptor
    else { return nil }
    // `AnyClass` (`AnyObject.Type`) is a single metadata pointer, and this one was checked above to
    // be complete Swift class metadata.
    return unsafeBitCast(metadata, to: AnyClass.self)
  }

#else

  private func discoverClassTypes() -> [AnyClass] {
    []
  }

#endif
