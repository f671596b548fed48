/// How this package talks to the Secret Service: time limits and whether a person may be asked.
public struct KeyringOptions: Sendable, Hashable {
    /// The time limit of one Secret Service call (a store, a lookup, a lock check).
    public var callTimeout: Duration
    /// The time limit of the bus probes made before any libsecret call (connect, `NameHasOwner`).
    ///
    /// A bus that is not there fails at once (no socket, connection refused) whatever this says;
    /// the limit is for a bus that is there and slow to answer, which is no more broken than a
    /// Secret Service slow to answer a call, so the default is the same as ``callTimeout``'s.
    public var probeTimeout: Duration
    /// Whether an unlock prompt may be shown when the keyring collection is locked.
    /// When `false` (the default), a locked collection is reported as
    /// ``TokenCacheError/Code/collectionLocked`` and nothing is shown.
    public var allowInteraction: Bool
    /// How long to wait for a person to answer an unlock prompt.
    public var interactionTimeout: Duration

    /// Options with the given limits; the defaults never prompt and never wait more than 10 s.
    public init(
        callTimeout: Duration = .seconds(10),
        probeTimeout: Duration = .seconds(10),
        allowInteraction: Bool = false,
        interactionTimeout: Duration = .seconds(120)
    ) {
        self.callTimeout = callTimeout
        self.probeTimeout = probeTimeout
        self.allowInteraction = allowInteraction
        self.interactionTimeout = interactionTimeout
    }
}
