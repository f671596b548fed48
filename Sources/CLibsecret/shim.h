#ifndef CLIBSECRET_SHIM_H
#define CLIBSECRET_SHIM_H
#include <libsecret/secret.h>

/// GINT_TO_POINTER is a function-like macro, which Swift cannot import.
static inline gpointer CLibsecret_attribute_type(SecretSchemaAttributeType type) {
    return GINT_TO_POINTER(type);
}

/// A binary SecretValue built from untyped bytes, so Swift never rebinds memory to gchar.
static inline SecretValue *CLibsecret_value_new_binary(const void *bytes, gssize length) {
    return secret_value_new((const gchar *)bytes, length, "application/octet-stream");
}

/// The bytes of a SecretValue as untyped memory.
static inline const void *CLibsecret_value_bytes(SecretValue *value, gsize *length) {
    return (const void *)secret_value_get(value, length);
}
#endif
