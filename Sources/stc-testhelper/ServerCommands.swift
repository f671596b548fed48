#if DEBUG
    import Dispatch
    @testable import SecureTokenCache

    extension TestHelper {
        /// `tasks` tasks of this process ask at once for the app token of `scopes` in
        /// `authority`'s tenant, through the real HTTP client; prints "token <fingerprint>
        /// <cache|authority>" per task, or "error <code>".
        static func appTokenStampede(_ store: any CacheStore, group name: String, authority: String, client: String, tasks: Int)
            throws
        {
            let group = try CacheGroup(name: name, store: store)
            let confidential = ConfidentialClient(
                cache: try TokenCache(clientId: client, group: group), credentialKind: .secret)
            let authority = try Authority(authority)
            let done = DispatchSemaphore(value: 0)
            Task {
                await withTaskGroup(of: String.self) { waiters in
                    for _ in 0..<tasks {
                        waiters.addTask {
                            do {
                                let acquired = try await confidential.acquireAppToken(
                                    for: ["https://graph.microsoft.com/.default"], authority: authority,
                                    credential: .secret("helper-secret"))
                                return "token \(SecretFingerprint.of(acquired.token.secret)) "
                                    + (acquired.isFromCache ? "cache" : "authority")
                            } catch let error as TokenCacheError {
                                return "error \(error.code)"
                            } catch {
                                return "error \(type(of: error))"
                            }
                        }
                    }
                    for await line in waiters { say(line) }
                }
                done.signal()
            }
            done.wait()
        }
    }
#endif
