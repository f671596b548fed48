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
            let authority = try Authority(authority)
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var failure: (any Error)?  // set before `done` is signalled
            // The group lives and dies inside the task, before the signal: a closure's captures
            // are let go of after it returns, on the task's thread, and a process that exits
            // while that thread frees the group shows LeakSanitizer the entries it has not freed
            // yet as leaks (an entry's kind is kept in the spare bits of the reference to it,
            // which it does not recognize as a pointer).
            Task {
                do {
                    try await appTokenStampede(store, group: name, authority: authority, client: client, tasks: tasks)
                } catch {
                    failure = error
                }
                done.signal()
            }
            done.wait()
            if let failure { throw failure }
        }

        private static func appTokenStampede(
            _ store: any CacheStore, group name: String, authority: Authority, client: String, tasks: Int
        ) async throws {
            let confidential = ConfidentialClient(
                cache: try TokenCache(clientId: client, group: try CacheGroup(name: name, store: store)), credentialKind: .secret)
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
        }
    }
#endif
