import SecureTokenCache

extension JSONValue {
    /// A string, or `null` for `nil`.
    static func optional(_ string: String?) -> JSONValue { string.map(JSONValue.string) ?? .null }

    /// A whole number.
    static func integer(_ value: some BinaryInteger) -> JSONValue { .number(String(value)) }

    /// A whole number, or `null` for `nil`.
    static func optional(_ value: Int64?) -> JSONValue { value.map { .number(String($0)) } ?? .null }
}
