"""msal-python 1.39.0 with msal-extensions 1.3.1 on a keyring item, for the Swift tests.

Every command takes a JSON spec as its one argument:
    {"signal": signal file, "schema": schema name, "attributes": {...}, "label": item label,
     "client_id", "authority", "username", "scopes": [...], ...}

    python msal_keyring_peer.py store SPEC
        msal-python stores a token response (access token SPEC["access_token"], refresh token
        SPEC["refresh_token"]) for SPEC["username"] through `PersistedTokenCache` over
        `LibsecretPersistence`, as azure-identity does. Prints {}.

    python msal_keyring_peer.py silent SPEC
        A fresh `PersistedTokenCache` over `LibsecretPersistence`, then `acquire_token_silent`
        with an http client that records (and fails) every network call. Prints
        {"secret", "network_calls", "usernames", "content_type"}: the last is the item's content
        type, as libsecret reads it.

    python msal_keyring_peer.py silent-dotnet SPEC
        Reads the item as the .NET extension does (libsecret password lookup with the schema
        not matched by name), decodes it from Base64 into msal-python's `SerializableTokenCache`,
        then the same silent call. Prints {"secret", "network_calls", "usernames", "content_type"}.
"""

import base64
import json
import sys
import warnings

import msal
import msal_extensions

from msal_interop import add, user_response, HOME, MSL
from msal_fake_endpoint import OfflineHttpClient

warnings.simplefilter("ignore")

assert msal.__version__ == "1.39.0", "msal-python 1.39.0 is required, found " + msal.__version__
assert msal_extensions.__version__ == "1.3.1", "msal-extensions 1.3.1 is required, found " + msal_extensions.__version__


def persisted_cache(spec):
    persistence = msal_extensions.LibsecretPersistence(
        spec["signal"], schema_name=spec["schema"], attributes=spec["attributes"], label=spec["label"])
    return msal_extensions.PersistedTokenCache(persistence)


def secret_module():
    import gi
    gi.require_version("Secret", "1")
    from gi.repository import Secret
    return Secret


def schema(spec, matches_name):
    Secret = secret_module()
    flags = Secret.SchemaFlags.NONE if matches_name else Secret.SchemaFlags.DONT_MATCH_NAME
    return Secret.Schema.new(spec["schema"], flags,
                             {name: Secret.SchemaAttributeType.STRING for name in spec["attributes"]})


def content_type(spec, matches_name):
    Secret = secret_module()
    service = Secret.Service.get_sync(Secret.ServiceFlags.OPEN_SESSION, None)
    items = service.search_sync(schema(spec, matches_name), spec["attributes"],
                                Secret.SearchFlags.LOAD_SECRETS | Secret.SearchFlags.UNLOCK, None)
    return items[0].get_secret().get_content_type() if items else None


def silent(cache, spec):
    http = OfflineHttpClient()
    app = msal.PublicClientApplication(spec["client_id"], authority=spec["authority"], token_cache=cache,
                                       http_client=http, instance_discovery=False)
    before = len(http.network_calls)
    usernames = sorted(a["username"] for a in app.get_accounts())
    found = app.get_accounts(username=spec["username"])
    result = app.acquire_token_silent(spec["scopes"], found[0]) if found else None
    return {"secret": result.get("access_token") if result else None,
            "network_calls": len(http.network_calls) - before, "usernames": usernames}


def store(spec):
    cache = persisted_cache(spec)
    response = user_response(spec["uid"], HOME, spec["username"], spec["access_token"], rt=spec["refresh_token"],
                             client=spec["client_id"])
    add(cache, spec["client_id"], MSL, HOME, response, spec["scopes"])
    return {}


def silent_dotnet(spec):
    stored = secret_module().password_lookup_sync(schema(spec, False), spec["attributes"], None)
    if stored is None:
        raise SystemExit("no item with the .NET attributes")
    cache = msal.SerializableTokenCache()
    cache.deserialize(base64.b64decode(stored, validate=True).decode("utf-8"))
    return dict(silent(cache, spec), content_type=content_type(spec, False))


def main():
    command, spec = sys.argv[1], json.loads(sys.argv[2])
    if command == "store":
        answer = store(spec)
    elif command == "silent":
        answer = dict(silent(persisted_cache(spec), spec), content_type=content_type(spec, True))
    elif command == "silent-dotnet":
        answer = silent_dotnet(spec)
    else:
        raise SystemExit("unknown command " + command)
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
