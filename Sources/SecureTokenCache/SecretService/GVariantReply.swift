internal import CLibsecret

/// Owns one reference to a `GVariant` (a D-Bus reply) and drops it on `deinit`.
struct GVariantReply: ~Copyable {
    /// The variant. Valid for the lifetime of this value only.
    let pointer: OpaquePointer

    /// Takes ownership of a full (non-floating) reference.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { g_variant_unref(pointer) }
}
