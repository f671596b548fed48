import Synchronization

/// One fuzz target: what it feeds its bytes to, and the property it checks on the result.
///
/// A violated property stops the run through ``FuzzProperty/require(_:_:)``, which libFuzzer
/// reports as a crash and keeps the input for.
struct FuzzTarget: Sendable {
    /// The name `STC_FUZZ_TARGET` and `scripts/fuzz` use, and the corpus folder's.
    let name: String
    /// Builds what every input needs, once.
    let prepare: @Sendable () -> Void
    /// Checks one input.
    let check: @Sendable ([UInt8]) -> Void

    /// Every target, in the order `scripts/fuzz` runs them.
    static let all: [FuzzTarget] = [
        FuzzTarget(name: "msal-json", prepare: {}, check: MSALJSONTarget.check),
        FuzzTarget(name: "shared-document", prepare: {}, check: SharedDocumentTarget.check),
        FuzzTarget(name: "token-response", prepare: {}, check: TokenResponseTarget.check),
        FuzzTarget(name: "adal", prepare: {}, check: ADALTarget.check),
        FuzzTarget(name: "file-store", prepare: FileStoreTarget.prepare, check: FileStoreTarget.check),
        FuzzTarget(name: "keyring-snapshot", prepare: KeyringSnapshotTarget.prepare, check: KeyringSnapshotTarget.check),
        FuzzTarget(name: "keyring-journal", prepare: KeyringJournalTarget.prepare, check: KeyringJournalTarget.check),
    ]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    /// The target of this run.
    static let selected = Mutex<FuzzTarget?>(nil)
}
