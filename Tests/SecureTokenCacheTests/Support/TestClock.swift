import Foundation
import Synchronization
import Testing

@testable import SecureTokenCache

/// A clock tests move by hand (msal-python event replays set it; expiry tests advance it).
final class TestClock: Sendable {
    private let seconds: Atomic<Int64>

    init(_ start: Int64 = 1_700_000_000) { seconds = Atomic(start) }

    var now: Int64 {
        get { seconds.load(ordering: .relaxed) }
        set { seconds.store(newValue, ordering: .relaxed) }
    }

    func advance(by delta: Int64) { seconds.add(delta, ordering: .relaxed) }

    /// The clock as a `CacheGroup` clock.
    var closure: @Sendable () -> Int64 { { [self] in self.now } }
}
