#if DEBUG
    import Glibc
    @testable import SecureTokenCache

    /// The command that writes to a shared cache next to msal-extensions' processes until it is
    /// killed (`SharedPeerProofs`): an msal-file cache at `<path>`, or with `--store keyring` the
    /// azure-identity keyring item with its signal file at `<path>`. `<account>` is what
    /// `msal_ext_peer.py account` prints: the account both languages sign in, so that either
    /// side's tokens are the other's hits.
    extension TestHelper {
        /// Prints "ready", waits for a line on stdin, then stores access tokens with scope
        /// `<prefix>-<i>` and secret `secret-<prefix>-<i>` without end (until killed), printing
        /// "ack <i>" once each write's commit has returned. After each write a lookup must find
        /// it; a lookup that throws ends the process with "error". The writers that run to the end
        /// next to msal-extensions' are release builds (`PeerCompare shared-write`); this one is
        /// killed mid-write, where a debug build's slower write is a wider target.
        static func sharedChurn(keyring: Bool, path: String, account: String, prefix: String) throws {
            let peer = try SharedPeerAccount(json: account)
            let cache = try TokenCache(clientId: peer.clientId, group: openShared(path, keyring: keyring))
            let user = try cache.accounts()
            say("ready")
            _ = readLine()
            for index in 0... {
                guard !parentIsGone else { return }
                let scope = "\(prefix)-\(index)"
                try cache.store(try peer.response(scope: scope, secret: "secret-" + scope), for: peer.request(scope: scope))
                say("ack \(index)")
                let account = try user.first ?? cache.account(username: peer.username)
                guard let account, try cache.accessToken(for: [scope], account: account)?.token.secret == "secret-" + scope else {
                    fail("a lookup did not find \(scope) right after writing it")
                }
            }
        }

        /// The msal-file cache at `path`, or the azure-identity item whose signal file is `path`,
        /// as a group, with its coordination folder beside `path`, so that every process of a
        /// test shares it.
        static func openShared(_ path: String, keyring: Bool) throws -> CacheGroup {
            var cache = MSALSharedCache.file(path: path)
            if keyring, case .keyring(var item) = try MSALSharedCache.azureIdentity().location {
                item.signalFile = path
                cache = .keyring(item)
            }
            var configuration = CacheConfiguration(sharedCache: cache, lockTimeout: .seconds(30))
            configuration.directory = SystemCall.parentDirectory(of: path) + "/stc"
            return try CacheGroup.open("shared", configuration: configuration)
        }
    }
#endif
