// Stand-ins for what a sample's app provides: its sign-in flow and what it does with a token.

/// Uses a token (a sample's stand-in for calling an API with it).
func use(_ secret: String) {}

/// Sends an `Authorization` header value (a sample's stand-in for an HTTP request).
func send(authorization: String) {}

/// Runs the app's interactive sign-in (browser or device code) and returns the token endpoint's
/// answer as JSON bytes; outside this library's scope.
func signInInteractively(scopes: [String]) async throws -> [UInt8] { [] }
