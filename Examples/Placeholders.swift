import SecureTokenCache

// Stand-ins for what a sample's app provides: its sign-in flow and what it does with a token.

/// Uses a token (a sample's stand-in for calling an API with it).
func use(_ secret: String) {}

/// Sends an `Authorization` header value (a sample's stand-in for an HTTP request).
func send(authorization: String) {}

/// Runs the app's interactive sign-in (browser or device code) and returns the token endpoint's
/// answer as JSON bytes; outside this library's scope.
func signInInteractively(scopes: [String]) async throws -> [UInt8] { [] }

/// Sends the app's client-credentials request (its secret or certificate assertion) to the
/// authority's token endpoint and returns the answer as JSON bytes; outside this library's scope.
func redeemClientCredentials(scopes: Scopes, authority: Authority) async throws -> [UInt8] { [] }

/// Answers a web API's caller with a `WWW-Authenticate` challenge (a sample's stand-in).
func challenge(_ suberror: String?) {}
