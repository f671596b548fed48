// A second process for the keyring tests. Debug builds only: it reaches the library's internal
// KeyringStore through `@testable import`, which SwiftPM enables for debug builds.
//
//   stc-keyring-helper open GROUP                 opens the group's KeyringStore
//   stc-keyring-helper put GROUP NAME PAYLOAD...  one transaction putting (NAME, PAYLOAD) records
//   stc-keyring-helper get GROUP NAME             prints the payload of NAME, or "missing"
//   stc-keyring-helper count GROUP                prints the number of records
//   stc-keyring-helper churn GROUP PREFIX N       N transactions: put PREFIX-i, delete PREFIX-(i-2)
//
// Prints "ok …" on success and "error CODE" (exit 3) on a TokenCacheError, so a test can check
// the typed error another environment (no bus, another bus) produces.
// Options (before the command): --call-timeout-ms N, --probe-timeout-ms N.
import Foundation

// A test helper drives internal APIs through `@testable import`, which only debug builds allow;
// a release build gets a stub, so `swift build -c release` of the package works.
#if DEBUG
    @testable import SecureTokenCache

    @main
    struct KeyringHelper {
        static func main() {
            var arguments = Array(CommandLine.arguments.dropFirst())
            var options = KeyringOptions()
            while arguments.first?.hasPrefix("--") == true {
                let flag = arguments.removeFirst()
                guard let value = arguments.first.flatMap({ Int($0) }) else { usage() }
                arguments.removeFirst()
                switch flag {
                case "--call-timeout-ms": options.callTimeout = .milliseconds(value)
                case "--probe-timeout-ms": options.probeTimeout = .milliseconds(value)
                default: usage()
                }
            }
            guard arguments.count >= 2 else { usage() }
            let command = arguments[0]
            let group = arguments[1]
            do {
                let store = try KeyringStore(group: group, options: options)
                switch command {
                case "open":
                    print("ok generation \(store.currentGeneration())")
                case "put":
                    let pairs = Array(arguments.dropFirst(2))
                    guard !pairs.isEmpty, pairs.count % 2 == 0 else { usage() }
                    let changes = stride(from: 0, to: pairs.count, by: 2).map { i in
                        RecordChange.put(
                            Record(id: RecordID(kind: .accessToken, name: pairs[i]), payload: Array(pairs[i + 1].utf8))
                        )
                    }
                    let cursor = try store.transact(since: .start) { _ in changes }
                    print("ok generation \(cursor.generation)")
                case "get":
                    guard arguments.count == 3 else { usage() }
                    let (records, _) = try store.load()
                    if let record = records.first(where: { $0.id.name == arguments[2] }) {
                        print("ok \(String(decoding: record.payload, as: UTF8.self))")
                    } else {
                        print("ok missing")
                    }
                case "count":
                    print("ok \(try store.load().0.count)")
                case "churn":
                    guard arguments.count == 4, let count = Int(arguments[3]) else { usage() }
                    let prefix = arguments[2]
                    var cursor = try store.load().1
                    for i in 0..<count {
                        var changes = [
                            RecordChange.put(
                                Record(id: RecordID(kind: .accessToken, name: "\(prefix)-\(i)"), payload: Array("v\(i)".utf8)))
                        ]
                        if i >= 2 { changes.append(.delete(RecordID(kind: .accessToken, name: "\(prefix)-\(i - 2)"))) }
                        cursor = try store.transact(since: cursor) { _ in changes }
                    }
                    print("ok generation \(cursor.generation)")
                default:
                    usage()
                }
            } catch let error as TokenCacheError {
                print("error \(error.code)")
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                exit(3)
            } catch {
                print("error unexpected")
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                exit(4)
            }
        }

        static func usage() -> Never {
            FileHandle.standardError.write(
                Data(
                    "usage: stc-keyring-helper [--call-timeout-ms N] [--probe-timeout-ms N] open|put|get|count|churn GROUP ...\n"
                        .utf8)
            )
            exit(2)
        }
    }
#else
    @main
    struct KeyringHelper {
        static func main() {
            print("stc-keyring-helper drives internal APIs for the tests and exists in debug builds only")
            exit(2)
        }
    }
#endif
