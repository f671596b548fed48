// PeerWriter: a writer of ours for the msal-extensions peer proofs (SharedPeerProofs), built for
// release as an app would be: a debug build rewrites a document of hundreds of tokens many times
// slower than an app does, and would hold the tools' lock file long enough to starve
// msal-extensions' writers. A product of its own, apart from PeerCompare, so that the tests build
// the library for release without SwiftNIO (which only PeerCompare's fleet rows need), and
// scripts/bench-check reuses that build.
//
//   PeerWriter [--keyring] PATH ACCOUNT PREFIX COUNT PAUSE-MS
//       COUNT writes to the msal-file cache at PATH, or with --keyring to the azure-identity
//       keyring item whose signal file is PATH, next to msal-extensions' writers (see sharedWrite)
//
// Build: swift build -c release --package-path Benchmarks --product PeerWriter
import Foundation
import Glibc
import SecureTokenCache

/// Prints "ready", waits for a line on stdin (so that every writer of a test starts at once),
/// then stores `count` access tokens with scope `<prefix>-<i>` and secret `secret-<prefix>-<i>`
/// for the account `msal_ext_peer.py account` prints, printing "ack <i>" once each write's commit
/// has returned and a lookup found it, with a random pause of up to `pauseMilliseconds` between
/// writes. The cache is the msal-file cache at `path`, or with `keyring` the azure-identity item
/// with its signal file at `path`, with its coordination folder beside `path`, where the tests
/// keep theirs.
func sharedWrite(keyring: Bool, path: String, account: String, prefix: String, count: Int, pauseMilliseconds: Int) throws {
    guard let object = try JSONSerialization.jsonObject(with: Data(account.utf8)) as? [String: Any],
        let clientId = object["client_id"] as? String, let authority = object["authority"] as? String,
        let username = object["username"] as? String, let template = object["response"] as? [String: Any]
    else { fatalError("not what msal_ext_peer.py account prints") }
    func json(_ value: Any) -> JSONValue {
        switch value {
        case let text as String: .string(text)
        case let number as NSNumber: .number(number.stringValue)
        case let object as [String: Any]: .object(JSONObject(object.map { (key: $0.key, value: json($0.value)) }))
        case let array as [Any]: .array(array.map(json))
        default: .null
        }
    }
    guard case .object(let fields) = json(template) else { fatalError("the response template is not an object") }
    var sharedCache = MSALSharedCache.file(path: path)
    if keyring, case .keyring(var item) = try MSALSharedCache.azureIdentity().location {
        item.signalFile = path
        sharedCache = .keyring(item)
    }
    var configuration = CacheConfiguration(sharedCache: sharedCache, lockTimeout: .seconds(30))
    let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
    configuration.directory = folder + "/stc"
    let cache = try TokenCache(clientId: clientId, group: CacheGroup.open("shared", configuration: configuration))
    let requestAuthority = try Authority(authority)
    print("ready")
    fflush(nil)
    _ = readLine()
    for index in 0..<count {
        let scope = "\(prefix)-\(index)"
        var response = fields
        response["scope"] = .string(scope)
        response["access_token"] = .string("secret-" + scope)
        try cache.store(
            try TokenResponse(fields: response),
            for: TokenRequest(clientId: clientId, authority: requestAuthority, scopes: [scope], grantType: "authorization_code"))
        guard let user = try cache.account(username: username),
            try cache.accessToken(for: [scope], account: user)?.token.secret == "secret-" + scope
        else {
            print("error: a lookup did not find \(scope) right after writing it")
            exit(1)
        }
        print("ack \(index)")
        fflush(nil)
        var interval = timespec(tv_sec: 0, tv_nsec: 0)
        let pause = Int.random(in: 0...pauseMilliseconds * 1000)
        interval.tv_sec = pause / 1_000_000
        interval.tv_nsec = (pause % 1_000_000) * 1000
        nanosleep(&interval, nil)
    }
}

var arguments = CommandLine.arguments
// msal_ext_peer.py's option, in the same place, so that a test passes both languages' writers the
// same arguments.
let keyring = arguments.count > 1 && arguments[1] == "--keyring"
if keyring { arguments.remove(at: 1) }
guard arguments.count == 6, let count = Int(arguments[4]), let pause = Int(arguments[5]) else {
    FileHandle.standardError.write(Data("usage: PeerWriter [--keyring] PATH ACCOUNT PREFIX COUNT PAUSE-MS\n".utf8))
    exit(2)
}
try sharedWrite(
    keyring: keyring, path: arguments[1], account: arguments[2], prefix: arguments[3], count: count,
    pauseMilliseconds: pause)
