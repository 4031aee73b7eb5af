import Foundation
import Testing

@testable import Shoal

/// One file is one store in the process, whatever name it is opened by.
@Suite("Shared files")
struct SharedFileTests {
  @Test func aFileOpenedThroughASymbolicLinkIsOneStoreInTheProcess() throws {
    let configuration = fileConfiguration()
    let realm = try Realm(configuration: configuration)
    try realm.write { realm.add(Counter(value: ["a", 1])) }
    let url = try #require(configuration.fileURL)
    let link = url.deletingLastPathComponent().appendingPathComponent("link.realm")
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
    let other = try Realm(configuration: Realm.Configuration(fileURL: link))
    #expect(other.core.file === realm.core.file)
    #expect(other.objects(Counter.self).count == 1)
    #expect(!FileManager.default.fileExists(atPath: link.path + ".lock"))
  }
}
