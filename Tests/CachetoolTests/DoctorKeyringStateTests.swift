import Foundation
import SecureTokenCache
import TestSupport
import Testing

/// `doctor` on the two keyring states a test cannot leave to the session it runs in: a session
/// bus with no Secret Service on it, and a locked collection. Each runs `cachetool` in a private
/// D-Bus session of its own (locking the shared test keyring would fail the keyring tests that
/// run beside this one). The states without a bus and with a healthy keyring are in
/// ``SingleInvocationTests``.
@Suite(.tags(.keyring), .timeLimit(.minutes(2))) struct DoctorKeyringStateTests {
    /// Runs `program` with the signals the test runner blocks unblocked: `dbus-run-session` ends
    /// its bus with SIGTERM, and a bus that inherited the blocked SIGTERM would outlive it,
    /// holding the output pipe open.
    static func runSession(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws
        -> Cachetool.Run
    {
        try Cachetool.runProgram(
            URL(fileURLWithPath: "/usr/bin/env"), ["--default-signal", program] + arguments, input: nil,
            environment: environment)
    }

    /// The checks of a group that exists in no store, whatever the keyring says.
    static func expectNoGroup(_ checks: [String: [String: Any]], root: URL, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(checks["directory"]?["outcome"] as? String == "ok", sourceLocation: sourceLocation)
        #expect(checks["coordination (file)"]?["outcome"] as? String == "ok", sourceLocation: sourceLocation)
        #expect(checks["coordination (keyring)"]?["outcome"] as? String == "ok", sourceLocation: sourceLocation)
        #expect(checks["file integrity"]?["outcome"] as? String == "skipped", sourceLocation: sourceLocation)
        let created = FileManager.default.subpaths(atPath: root.path) ?? []
        #expect(created.isEmpty, "doctor created \(created)", sourceLocation: sourceLocation)
    }

    /// A file group whose key the keyring holds, in the test session's keyring: doctor reads
    /// the key without the keyring group's lock (which would record its pid in the lock file)
    /// and finds the group whole, leaving every file as it was.
    @Test func aFileGroupKeyedInTheKeyringIsCheckedWithoutItsLocks() throws {
        try #require(KeyringStore.available, "needs scripts/with-keyring")
        let root = try TestFiles.scratch()
        let group = "com.example.doctor-keyring-key-\(UUID().uuidString.prefix(8).lowercased())"
        let configuration = CacheConfiguration(store: .file, directory: root.path, keySource: .keyring)
        let imported = try CacheGroup.open(group, configuration: configuration).importMSAL(
            Array(Data(contentsOf: TestFiles.vector("v1_single_account"))))
        let before = try FileStoreTests.snapshot(root)
        try #require(before.keys.contains(".\(group).keyring/lock"), "\(before.keys)")

        let run = try Cachetool.run(["doctor", "--json", "--dir", root.path, "--group", group])
        #expect(run.status == 0, "\(run)")
        let integrity = try #require(try run.doctorChecks()["file integrity"])
        #expect(integrity["outcome"] as? String == "ok", "\(integrity)")
        #expect(integrity["detail"] as? String == "\(imported) entries, generation 1")
        #expect(try FileStoreTests.snapshot(root) == before, "doctor changed the group's files")
    }

    /// A plain bus (no service activation, so nothing can start gnome-keyring on demand): the
    /// bus is fine, the Secret Service fails with what to start, and the lock check is skipped.
    @Test func aBusWithoutASecretService() throws {
        let folder = try TestFiles.scratch()
        let config = folder.appendingPathComponent("bus.conf")
        try PlainBusConfiguration.text(listeningIn: folder.path).write(to: config, atomically: true, encoding: .utf8)
        let root = try TestFiles.scratch()
        func doctor(_ options: [String]) throws -> Cachetool.Run {
            try Self.runSession(
                "dbus-run-session",
                ["--config-file=\(config.path)", "--", Cachetool.binary.path, "doctor", "--dir", root.path] + options)
        }

        let run = try doctor(["--json"])
        #expect(run.status == 6, "\(run)")
        let checks = try run.doctorChecks()
        #expect(checks["session bus"]?["outcome"] as? String == "ok")
        #expect((checks["session bus"]?["detail"] as? String)?.hasPrefix("unix:") == true, "\(run)")
        let service = try #require(checks["Secret Service"])
        #expect(service["outcome"] as? String == "failed")
        #expect(service["code"] as? String == "secretServiceUnavailable")
        #expect(service["exitStatus"] as? Int == 6)
        #expect((service["detail"] as? String)?.contains("org.freedesktop.secrets has no owner") == true, "\(service)")
        #expect((service["advice"] as? String)?.hasPrefix("start a Secret Service") == true)
        #expect(checks["keyring unlocked"]?["outcome"] as? String == "skipped")
        #expect(checks["keyring unlocked"]?["detail"] as? String == "no Secret Service")
        Self.expectNoGroup(checks, root: root)

        let human = try doctor([])
        #expect(human.status == 6)
        #expect(human.stdout.contains("\nSecret Service: start a Secret Service (gnome-keyring-daemon"), "\(human)")
    }

    /// A Secret Service whose default collection is locked: the service answers, the lock check
    /// fails with how to unlock it, and doctor leaves it locked (it never prompts or unlocks).
    @Test func aLockedCollection() throws {
        let root = try TestFiles.scratch()
        let output = try TestFiles.scratch().appendingPathComponent("doctor.out")
        // In a private session of scripts/with-keyring: lock the collection, run doctor with
        // its output to a file, then say whether the collection is still locked.
        let call = "gdbus call --session --dest org.freedesktop.secrets"
        let script = """
            \(call) --object-path /org/freedesktop/secrets --method org.freedesktop.Secret.Service.Lock \
              '["/org/freedesktop/secrets/aliases/default"]' >/dev/null
            "$@" >"$DOCTOR_OUTPUT"
            status=$?
            \(call) --object-path /org/freedesktop/secrets/aliases/default \
              --method org.freedesktop.DBus.Properties.Get org.freedesktop.Secret.Collection Locked
            exit $status
            """
        func doctor(_ options: [String]) throws -> (run: Cachetool.Run, stdout: String) {
            let run = try Self.runSession(
                PackageRoot.url.appendingPathComponent("scripts/with-keyring").path,
                ["bash", "-c", script, "doctor", Cachetool.binary.path, "doctor", "--dir", root.path] + options,
                environment: ["DOCTOR_OUTPUT": output.path])
            return (run, try String(contentsOf: output, encoding: .utf8))
        }

        let (run, json) = try doctor(["--json"])
        #expect(run.status == 6, "\(run)")
        #expect(run.stdout.contains("(<true>,)"), "doctor unlocked the collection: \(run)")
        let checks = try Cachetool.Run(status: run.status, stdout: json, stderr: "", stdoutBytes: Data(json.utf8))
            .doctorChecks()
        #expect(checks["session bus"]?["outcome"] as? String == "ok")
        #expect(checks["Secret Service"]?["outcome"] as? String == "ok")
        #expect(checks["Secret Service"]?["detail"] as? String == "reachable")
        let unlocked = try #require(checks["keyring unlocked"])
        #expect(unlocked["outcome"] as? String == "failed")
        #expect(unlocked["code"] as? String == "collectionLocked")
        #expect(unlocked["exitStatus"] as? Int == 6)
        #expect((unlocked["detail"] as? String)?.hasPrefix("the keyring collection is locked") == true, "\(unlocked)")
        #expect((unlocked["advice"] as? String)?.hasPrefix("unlock the login keyring") == true)
        Self.expectNoGroup(checks, root: root)

        let (human, text) = try doctor([])
        #expect(human.status == 6)
        #expect(text.contains("\nkeyring unlocked: unlock the login keyring"), "\(text)")
    }
}
