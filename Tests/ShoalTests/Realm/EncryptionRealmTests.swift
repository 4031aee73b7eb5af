import Dispatch
import Foundation
import Shoal
import ShoalSharedModels
import Testing

/// 64 random bytes, as RealmSwift's examples make an encryption key.
func generateKey() -> Data {
  var generator = SystemRandomNumberGenerator()
  return Data((0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) })
}

/// `Realm.Configuration.encryptionKey`, as RealmSwift: reopening, the errors of a wrong or
/// missing key, copies that change or remove the key, migrations, compaction, frozen
/// snapshots, notifications and another process on an encrypted file.
@Suite("Realm: encryption", .serialized)
struct EncryptionRealmTests {
  func encryptedConfiguration(_ key: Data) -> Realm.Configuration {
    var config = fileConfiguration("encrypted")
    config.encryptionKey = key
    config.objectTypes = [Note.self]
    return config
  }

  func openError(_ config: Realm.Configuration) -> Realm.Error? {
    do {
      _ = try Realm(configuration: config)
      return nil
    } catch let error as Realm.Error {
      return error
    } catch {
      return nil
    }
  }

  @Test func reopeningWithTheSameKeyWorks() throws {
    let key = generateKey()
    let config = encryptedConfiguration(key)
    do {
      let realm = try Realm(configuration: config)
      try realm.write { realm.add(Note(value: ["id": "a", "author": "ann", "text": "private words"])) }
    }
    let realm = try Realm(configuration: config)
    #expect(realm.objects(Note.self).count == 1)
    #expect(realm.configuration.encryptionKey == key)
    let raw = try Data(contentsOf: config.fileURL!)
    #expect(raw.range(of: Data("private words".utf8)) == nil)
  }

  @Test func aMissingWrongOrUnneededKeyIsInvalidDatabaseWithRealmSwiftsMessage() throws {
    let config = encryptedConfiguration(generateKey())
    do { _ = try Realm(configuration: config) }
    let path = config.fileURL!.path

    var withoutKey = config
    withoutKey.encryptionKey = nil
    let missing = openError(withoutKey)
    #expect(missing?.code == .invalidDatabase)
    #expect(
      missing?.localizedDescription.contains(
        "Failed to open Realm file at path '\(path)': header has invalid mnemonic.")
        == true)
    #expect(missing?.localizedDescription.contains("encrypted") == true)

    var wrongKey = config
    wrongKey.encryptionKey = generateKey()
    let wrong = openError(wrongKey)
    #expect(wrong?.code == .invalidDatabase)
    #expect(
      wrong?.localizedDescription.contains(
        "Failed to open Realm file at path '\(path)': Realm file decryption failed (Decryption failed: page 0 in file of size"
      ) == true)

    var plain = fileConfiguration("plain")
    plain.objectTypes = [Note.self]
    do { _ = try Realm(configuration: plain) }
    plain.encryptionKey = generateKey()
    let unneeded = openError(plain)
    #expect(unneeded?.code == .invalidDatabase)
    #expect(unneeded?.localizedDescription.contains("Realm file decryption failed (Decryption failed: page 0") == true)
    #expect(unneeded?.localizedDescription.contains("not encrypted") == true)
    // None of the failures touched the file.
    #expect(try Realm(configuration: config).objects(Note.self).isEmpty)
  }

  @Test func writeCopyChangesOrRemovesTheKey() throws {
    let key = generateKey()
    let config = encryptedConfiguration(key)
    let directory = config.fileURL!.deletingLastPathComponent()
    let realm = try Realm(configuration: config)
    try realm.write { realm.add(Note(value: ["id": "1", "author": "x"])) }

    let plainURL = directory.appendingPathComponent("decrypted.realm")
    try realm.writeCopy(toFile: plainURL, encryptionKey: nil)
    var plain = Realm.Configuration(fileURL: plainURL)
    plain.objectTypes = [Note.self]
    #expect(try Realm(configuration: plain).objects(Note.self).count == 1)

    let newKey = generateKey()
    let rekeyedURL = directory.appendingPathComponent("rekeyed.realm")
    try realm.writeCopy(toFile: rekeyedURL, encryptionKey: newKey)
    var rekeyed = Realm.Configuration(fileURL: rekeyedURL, encryptionKey: newKey)
    rekeyed.objectTypes = [Note.self]
    #expect(try Realm(configuration: rekeyed).objects(Note.self).count == 1)
    rekeyed.encryptionKey = key
    #expect(openError(rekeyed)?.code == .invalidDatabase)

    var destination = Realm.Configuration(
      fileURL: directory.appendingPathComponent("for-configuration.realm"), encryptionKey: newKey)
    destination.objectTypes = [Note.self]
    try realm.writeCopy(configuration: destination)
    #expect(try Realm(configuration: destination).objects(Note.self).count == 1)
    #expect(try schemaVersionAtURL(destination.fileURL!, encryptionKey: newKey) == 0)
  }

  @Test func migrationsRunOnAnEncryptedFile() throws {
    let key = generateKey()
    var config = fileConfiguration("migrating")
    config.encryptionKey = key
    config.objectTypes = [MigratingV1.self]
    do {
      let realm = try Realm(configuration: config)
      try realm.write {
        realm.add(MigratingV1(value: ["id": 1, "firstName": "Ada", "lastName": "Lovelace", "age": 36]))
      }
    }
    config.objectTypes = [MigratingV2.self]
    config.schemaVersion = 1
    nonisolated(unsafe) var ran = false
    config.migrationBlock = { migration, _ in
      ran = true
      migration.enumerateObjects(ofType: "Migrating") { old, new in
        new?["fullName"] = "\(old?["firstName"] as? String ?? "") \(old?["lastName"] as? String ?? "")"
      }
    }
    var withoutKey = config
    withoutKey.encryptionKey = nil
    #expect(openError(withoutKey)?.code == .invalidDatabase)
    #expect(!ran)
    let realm = try Realm(configuration: config)
    #expect(ran)
    #expect(realm.objects(MigratingV2.self).first?.fullName == "Ada Lovelace")
    #expect(try schemaVersionAtURL(config.fileURL!, encryptionKey: key) == 1)
  }

  @Test func compactingOnLaunchKeepsTheKey() throws {
    let key = generateKey()
    var config = encryptedConfiguration(key)
    do {
      let realm = try Realm(configuration: config)
      for round in 0..<20 {
        try realm.write {
          realm.delete(realm.objects(Note.self))
          for i in 0..<200 {
            realm.add(Note(value: ["id": "\(round)-\(i)", "text": String(repeating: "n", count: 200)]))
          }
        }
      }
    }
    let before = try FileManager.default.attributesOfItem(atPath: config.fileURL!.path)[.size] as? Int ?? 0
    nonisolated(unsafe) var asked = false
    config.shouldCompactOnLaunch = { _, _ in
      asked = true
      return true
    }
    do {
      let realm = try Realm(configuration: config)
      #expect(asked)
      #expect(realm.objects(Note.self).count == 200)
    }
    let after = try FileManager.default.attributesOfItem(atPath: config.fileURL!.path)[.size] as? Int ?? 0
    #expect(after < before)
    config.encryptionKey = nil
    config.shouldCompactOnLaunch = nil
    #expect(openError(config)?.code == .invalidDatabase)
  }

  @Test func frozenSnapshotsAndNotificationsWorkOnAnEncryptedFile() throws {
    let config = encryptedConfiguration(generateKey())
    let realm = try Realm(configuration: config)
    try realm.write { realm.add(Note(value: ["id": "a", "author": "ann"])) }
    let frozen = realm.objects(Note.self).freeze()
    let read = DispatchQueue(label: "frozen reader")
    let count = read.sync { frozen.where { $0.author == "ann" }.count }
    #expect(count == 1)

    let inbox = Inbox<Seen>()
    let token = realm.objects(Note.self).sorted(byKeyPath: "id").observe(on: DispatchQueue(label: "observer")) {
      inbox.put(Seen($0))
    }
    #expect(inbox.next() == .initial(1))
    let worker = try RealmWorker(file: config.fileURL!.path, encryptionKey: config.encryptionKey)
    #expect(try worker.send("add 2 w") == "added 3")
    #expect(inbox.next() == .update(count: 3, deletions: [], insertions: [1, 2], modifications: []))
    realm.refresh()
    #expect(realm.objects(Note.self).count == 3)
    #expect(try worker.send("query author == 'ann'") == "match 1")
    token.invalidate()
    _ = try? worker.send("quit")
  }
}
