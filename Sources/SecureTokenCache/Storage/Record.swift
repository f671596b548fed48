/// One record in plaintext. Stores seal the payload before it leaves memory.
///
/// The payload is a slice: records opened from one sealed batch share the batch's plaintext
/// instead of each copying its bytes out, so opening a group allocates no buffer per record.
/// Index it from `startIndex`, never from 0.
struct Record: Sendable {
    var id: RecordID
    var payload: ArraySlice<UInt8>

    /// A record holding `payload`.
    init(id: RecordID, payload: ArraySlice<UInt8>) {
        self.id = id
        self.payload = payload
    }

    /// A record holding all of `payload`.
    init(id: RecordID, payload: [UInt8]) {
        self.init(id: id, payload: payload[...])
    }
}
