import SecureTokenCache

extension DoctorCommand {
    /// The checks of a group in PostgreSQL (`--store postgres`): none of the keyring's or the file
    /// store's, which such a group does not use; the database, then the group in it. The open
    /// only reads, as every command that only reads opens it: no table, group or lock is made.
    func postgres(_ configuration: CacheConfiguration) -> [DoctorCheck] {
        let database = "database"
        let group = "group"
        do {
            let opened = try global.openExisting(configuration)
            let statistics = try opened.statistics()
            let entries = statistics.countByKind.values.reduce(0, +)
            return [
                DoctorCheck(name: database, outcome: .ok, detail: opened.storeDescription.location),
                DoctorCheck(
                    name: group, outcome: .ok,
                    detail: "\(opened.name) opens with the given key: \(entries) entries, \(statistics.accounts) accounts"),
            ]
        } catch let error as TokenCacheError {
            // The library's messages say what to do; the advice adds where a command needs it.
            let advice =
                switch error.code {
                case .wrongKey: "pass the passphrase (--passphrase-env) or key file (--key-file) the fleet uses"
                case .notFound:
                    "check --group and --url; a group is made by the first instance that opens it, or by cachetool import"
                default: "see the message"
                }
            let failed = DoctorCheck(
                name: "", outcome: .failed, detail: error.message, advice: advice, status: ExitStatus(error.code),
                code: error.code.name)
            switch error.code {
            case .notFound, .wrongKey, .storeCorrupted:
                // The database answered with its tables: what failed is the group.
                var check = failed
                check.name = group
                return [DoctorCheck(name: database, outcome: .ok, detail: "reached; its token cache tables are usable"), check]
            default:
                var check = failed
                check.name = database
                return [check, DoctorCheck(name: group, outcome: .skipped, detail: "not checked: the database check failed")]
            }
        } catch {
            return [DoctorCheck(name: database, outcome: .failed, detail: "\(error)", status: .failure)]
        }
    }
}
