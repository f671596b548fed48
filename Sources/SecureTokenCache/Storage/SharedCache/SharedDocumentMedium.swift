/// Where a shared cache's document is kept: a file, or a keyring item with its signal file.
/// The ``SharedCacheStore`` does the rest (lock, merge, change detection) the same for both.
protocol SharedDocumentMedium: Sendable {
    /// Where the document is, for people.
    var location: String { get }
    /// What protects the document at rest, in a sentence for ``StoreDescription/warnings``.
    var exposure: String { get }
    /// The file whose changes announce a new document (the document itself, or the signal file).
    var watchedFile: String { get }

    /// The watched file's version now, or `nil` when it does not exist. One `lstat`.
    func version() throws -> DocumentVersion?

    /// The document and the version it was read at; empty bytes when there is no document yet.
    /// May return a document a writer in another tool is still writing in place: the caller
    /// parses it and asks again.
    func read() throws -> (bytes: [UInt8], version: DocumentVersion?)

    /// Replaces the document with `bytes`, whole or not at all (a reader never sees part of it),
    /// durably, and announces it. Returns the watched file's version after the write.
    func write(_ bytes: [UInt8]) throws -> DocumentVersion

    /// Whether there is a document to open (read only: creates nothing).
    func exists() throws -> Bool

    /// Removes what a writer of ours killed mid-write left behind. Called under the lock, when
    /// no live writer of ours has anything in progress.
    func removeLeftovers()

    /// What is wrong with who may read the document now (for example a file other users can
    /// read), with what to do; `nil` when nothing is.
    func accessWarning() -> String?
}

extension SharedDocumentMedium {
    /// Nothing to say by default.
    func accessWarning() -> String? { nil }
}
