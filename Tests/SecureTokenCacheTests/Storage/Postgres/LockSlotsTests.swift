#if canImport(SecureTokenCachePostgres)
    import Synchronization
    import Testing

    @testable import SecureTokenCachePostgres

    /// The slots among the pool's connections that advisory locks may hold (``LockSlots``): never
    /// more holders than slots, handed over first come first served, and a wait that ends at its
    /// timeout takes none. No server needed.
    @Suite(.timeLimit(.minutes(1)))
    struct LockSlotsTests {
        /// What the tasks of a test share.
        final class Shared: Sendable {
            let holding = Atomic<Int>(0)
            let most = Atomic<Int>(0)
            let order = Mutex<[Int]>([])
        }

        /// Many tasks at once, each holding a slot a moment: never more holders than slots, and
        /// every task gets one.
        @Test func neverMoreHoldersThanSlots() async {
            let slots = LockSlots(3)
            let shared = Shared()
            let served = await withTaskGroup(of: Bool.self) { tasks in
                for _ in 0..<60 {
                    tasks.addTask {
                        guard await slots.take(within: .seconds(30)) else { return false }
                        let now = shared.holding.wrappingAdd(1, ordering: .relaxed).newValue
                        _ = shared.most.max(now, ordering: .relaxed)
                        try? await Task.sleep(for: .milliseconds(2))
                        shared.holding.wrappingSubtract(1, ordering: .relaxed)
                        slots.give()
                        return true
                    }
                }
                return await tasks.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(served == 60)
            #expect(shared.most.load(ordering: .relaxed) <= 3)
            #expect(shared.most.load(ordering: .relaxed) >= 1)
        }

        /// A wait that ends at its timeout takes no slot, and the slot given back later goes to
        /// the next waiter, in the order they came.
        @Test func aWaitPastItsTimeoutTakesNoSlotAndTheNextInLineGetsIt() async throws {
            let slots = LockSlots(1)
            #expect(await slots.take(within: .seconds(1)))
            #expect(!(await slots.take(within: .milliseconds(50))))
            let shared = Shared()
            let first = Task {
                guard await slots.take(within: .seconds(30)) else { return }
                shared.order.withLock { $0.append(1) }
                slots.give()
            }
            try await Task.sleep(for: .milliseconds(100))
            let second = Task {
                guard await slots.take(within: .seconds(30)) else { return }
                shared.order.withLock { $0.append(2) }
                slots.give()
            }
            try await Task.sleep(for: .milliseconds(100))
            slots.give()
            await first.value
            await second.value
            #expect(shared.order.withLock { $0 } == [1, 2])
            // Every slot is back: the one slot is free again.
            #expect(await slots.take(within: .milliseconds(50)))
        }
    }
#endif
