import Foundation
import Shoal
import Testing

/// The errors of opening a file, with RealmSwift's codes, paths and messages.
@Suite("Opening: RealmSwift's errors")
struct OpeningErrorTests {
  private func expectOpenError(
    _ code: Realm.Error.Code, _ url: URL, _ message: String, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
  ) {
    do {
      try body()
      Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as Realm.Error {
      #expect(error.code == code, sourceLocation: sourceLocation)
      #expect(error.localizedDescription == message, sourceLocation: sourceLocation)
      #expect(error.fileURL == url, sourceLocation: sourceLocation)
    } catch {
      Issue.record("expected Realm.Error \(code), got \(error)", sourceLocation: sourceLocation)
    }
  }

  @Test func aFileThatIsNotARealm() throws {
    let url = try #require(fileConfiguration().fileURL)
    #expect(FileManager.default.createFile(atPath: url.path, contents: Data("a".utf8)))
    expectOpenError(
      .invalidDatabase, url,
      "Failed to open Realm file at path '\(url.path)': file is non-empty but too small (1 bytes) to be a valid Realm."
    ) { _ = try Realm(fileURL: url) }
    // The file is left as it was.
    #expect(try Data(contentsOf: url) == Data("a".utf8))
  }

  @Test func aPathWhoseParentIsNotADirectoryNamesTheLockFile() {
    let url = URL(fileURLWithPath: "/dev/null/foo")
    expectOpenError(
      .fileOperationFailed, url.appendingPathExtension("lock"),
      "Failed to open file at path '/dev/null/foo.lock': parent path is not a directory"
    ) { _ = try Realm(configuration: .init(fileURL: url)) }
  }

  @Test func aReadOnlyRealmMustExist() throws {
    let url = try #require(fileConfiguration().fileURL)
    expectOpenError(.fileNotFound, url, "Failed to open Realm file at path '\(url.path)': No such file or directory") {
      _ = try Realm(configuration: .init(fileURL: url, readOnly: true))
    }
  }

  @Test func schemaVersionOfAMissingFileOrADevice() throws {
    let url = try #require(fileConfiguration().fileURL)
    expectOpenError(.invalidDatabase, url, "Realm at path '\(url.path)' has not been initialized.") {
      _ = try schemaVersionAtURL(url)
    }
    do {
      _ = try schemaVersionAtURL(URL(fileURLWithPath: "/dev/null"))
      Issue.record("/dev/null has a schema version")
    } catch let error as Realm.Error {
      #expect(error.code == .fileAccess || error.code == .filePermissionDenied, "\(error)")
    }
  }

  @Test func openingReadOnlyWhereItIsOpenReadWriteIsRealmSwiftsError() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      var config = fileConfiguration()
      let realm = try Realm(configuration: config)
      config.readOnly = true
      _ = try Realm(configuration: config)
      _ = realm
    }
    #expect(stderrText(result).contains("already opened with different read permissions"))
  }
}
