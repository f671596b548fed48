import Foundation
import Synchronization
import Testing

@testable import SecureTokenCache

/// A deterministic random number generator (a linear congruential step, its high bits folded
/// in), so a randomised test that fails replays.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state ^ (state >> 29)
    }
}
