import Foundation
import Logging
import Synchronization
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// Processes that open one keyring group from different data folders take different locks:
    /// the store notices an item written from another coordination folder and says so, in its
    /// description and in the log, instead of splitting silently.
    @Suite struct SplitFolder {
        typealias Support = KeyringTestSupport

        /// Keeps every message logged through it.
        final class CapturedLog: Sendable {
            let messages = Mutex<[(Logger.Level, String)]>([])

            var logger: Logger {
                Logger(label: "test") { _ in Handler(log: self) }
            }

            struct Handler: LogHandler {
                let log: CapturedLog
                var metadata: Logger.Metadata = [:]
                var logLevel: Logger.Level = .trace
                subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                    get { metadata[key] }
                    set { metadata[key] = newValue }
                }
                func log(event: LogEvent) {
                    log.messages.withLock { $0.append((event.level, "\(event.message)")) }
                }
            }
        }

        @Test func aWriterFromAnotherFolderIsReported() throws {
            let group = Support.uniqueGroup("split")
            let here = TemporaryDirectory()
            let elsewhere = TemporaryDirectory()
            let first = try KeyringStore(group: group, root: here.path)
            _ = try first.load()
            _ = try first.transact(since: .start) { _ in [.put(Support.record("at-1", "secret-one"))] }
            // Same folder: no warning, even through a second store.
            let log = CapturedLog()
            let sameFolder = try KeyringStore(group: group, root: here.path, logger: log.logger)
            #expect(sameFolder.storeDescription.warnings.isEmpty)
            #expect(log.messages.withLock { $0.isEmpty })

            let other = try KeyringStore(group: group, root: elsewhere.path, logger: log.logger)
            let warnings = other.storeDescription.warnings
            #expect(warnings.count == 1)
            #expect(warnings.first?.contains("another folder") == true)
            let logged = log.messages.withLock { $0 }
            #expect(logged.count == 1 && logged.first?.0 == .warning)
            #expect(logged.allSatisfy { !$0.1.contains("secret-one") && !$0.1.contains(elsewhere.path) })
            #expect(other.storeDescription.coordinationDirectory == elsewhere.path + "/.\(group).keyring")

            // Once this side writes, the first side's next read of the item reports it too (its
            // counter never moves: without a read of the item it would not even see the write).
            _ = try other.transact(since: try other.load().1) { _ in [.put(Support.record("at-2", "secret-two"))] }
            #expect(first.storeDescription.warnings.isEmpty)
            _ = try first.load()
            #expect(first.storeDescription.warnings.count == 1)
        }
    }
}
