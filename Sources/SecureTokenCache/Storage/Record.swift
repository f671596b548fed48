/// One record in plaintext. Stores seal the payload before it leaves memory.
///
/// The payload is a run of an array: records opened from one sealed batch share the batch's
/// plaintext instead of each copying its bytes out, so opening a group allocates no buffer per
/// record. Index ``payload`` from `startIndex`, never from 0.
struct Record: Sendable {
    var id: RecordID
    /// The payload as held.
    private(set) var bytes: PayloadBytes

    /// A record holding `bytes`.
    init(id: RecordID, bytes: PayloadBytes) {
        self.id = id
        self.bytes = bytes
    }

    /// A record holding all of `payload`.
    init(id: RecordID, payload: [UInt8]) {
        self.init(id: id, bytes: PayloadBytes(payload))
    }

    /// A record holding `payload`: shared when it is all of its array, else copied.
    init(id: RecordID, payload: ArraySlice<UInt8>) {
        self.init(id: id, bytes: PayloadBytes(payload))
    }

    /// The payload.
    var payload: ArraySlice<UInt8> {
        get { bytes.slice }
        set { bytes = PayloadBytes(newValue) }
    }
}
