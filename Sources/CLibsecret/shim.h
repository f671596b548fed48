#ifndef CLIBSECRET_SHIM_H
#define CLIBSECRET_SHIM_H
#include <libsecret/secret.h>

// Swift cannot import function-like macros (GINT_TO_POINTER, G_VARIANT_TYPE) or call variadic
// functions (g_variant_new, g_variant_get). The static inline wrappers below are compiled by the
// Clang importer; a systemLibrary target cannot hold a .c file.

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

/// G_VARIANT_TYPE(text): a cast macro. `text` must be a valid, static type string.
static inline const GVariantType *CLibsecret_variant_type(const gchar *text) {
    return G_VARIANT_TYPE(text);
}

/// g_variant_new("(s)", text): a floating tuple holding one string.
static inline GVariant *CLibsecret_variant_new_string_tuple(const gchar *text) {
    return g_variant_new("(s)", text);
}

/// g_variant_new("(ss)", first, second): a floating tuple of two strings.
static inline GVariant *CLibsecret_variant_new_string_pair(const gchar *first, const gchar *second) {
    return g_variant_new("(ss)", first, second);
}

/// g_variant_new("(ao)", paths): a floating tuple holding an array of object paths.
/// Returns NULL if any element is not a valid object path.
static inline GVariant *CLibsecret_variant_new_object_path_array_tuple(const gchar *const *paths, gssize count) {
    for (gssize i = 0; i < count; i++) {
        if (!g_variant_is_object_path(paths[i])) return NULL;
    }
    return g_variant_new("(@ao)", g_variant_new_objv(paths, count));
}

/// Reads the boolean of a "(b)" reply.
static inline gboolean CLibsecret_variant_get_boolean_tuple(GVariant *reply) {
    gboolean value = FALSE;
    g_variant_get(reply, "(b)", &value);
    return value;
}

/// Reads a "(v)" reply (org.freedesktop.DBus.Properties.Get) holding a boolean.
/// Returns FALSE and leaves *value alone if the variant does not hold a boolean.
static inline gboolean CLibsecret_variant_get_boxed_boolean(GVariant *reply, gboolean *value) {
    GVariant *inner = NULL;
    g_variant_get(reply, "(v)", &inner);
    gboolean ok = g_variant_is_of_type(inner, G_VARIANT_TYPE_BOOLEAN);
    if (ok) *value = g_variant_get_boolean(inner);
    g_variant_unref(inner);
    return ok;
}

/// Reads an "(aoo)" reply (org.freedesktop.Secret.Service.Unlock / Lock): the number of objects
/// handled, and a newly allocated copy of the prompt path ("/" when no prompt is needed).
static inline gchar *CLibsecret_variant_get_objects_and_prompt(GVariant *reply, gsize *count) {
    GVariant *objects = NULL;
    const gchar *prompt = NULL;
    g_variant_get(reply, "(@ao&o)", &objects, &prompt);
    *count = g_variant_n_children(objects);
    gchar *copy = g_strdup(prompt);
    g_variant_unref(objects);
    return copy;
}

/// Reads an "(as)" reply (org.freedesktop.DBus.ListActivatableNames): TRUE if `name` is listed.
static inline gboolean CLibsecret_variant_string_array_tuple_contains(GVariant *reply, const gchar *name) {
    GVariant *names = g_variant_get_child_value(reply, 0);
    gboolean found = FALSE;
    gsize n = g_variant_n_children(names);
    for (gsize i = 0; i < n && !found; i++) {
        const gchar *element = NULL;
        g_variant_get_child(names, i, "&s", &element);
        found = g_strcmp0(element, name) == 0;
    }
    g_variant_unref(names);
    return found;
}

/// g_object_unref for any GObject subtype, whatever pointer type Swift imported it as.
static inline void CLibsecret_object_unref(void *object) {
    g_object_unref(object);
}

/// The D-Bus object path of a collection proxy (owned by the proxy).
static inline const gchar *CLibsecret_collection_object_path(SecretCollection *collection) {
    return g_dbus_proxy_get_object_path(G_DBUS_PROXY(collection));
}

/// `object` as a SecretItem (a D-Bus item proxy), or NULL if it is another kind of
/// SecretRetrievable. SECRET_IS_ITEM is a type-check macro.
static inline SecretItem *CLibsecret_as_item(gpointer object) {
    return SECRET_IS_ITEM(object) ? (SecretItem *)object : NULL;
}
#endif
