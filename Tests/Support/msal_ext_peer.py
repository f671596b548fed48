"""A peer of the shared-cache tests: msal-python 1.39.0 with msal-extensions 1.3.1, using one
plaintext cache file through `PersistedTokenCache(FilePersistence(path))`, as Azure CLI does; or,
with --keyring first, one Secret Service item through `PersistedTokenCache(LibsecretPersistence(
path, schema_name="msal.cache.nocae", attributes={"MsalClientID":
"Microsoft.Developer.IdentityService"}))`, as azure-identity does, PATH being its signal file.
Either way msal-extensions' lock is PATH.lockfile.

    python msal_ext_peer.py [--keyring] COMMAND ARGUMENTS...

    python msal_ext_peer.py lock-kind
        Prints which CrossPlatLock msal-extensions took: "portalocker" (flock, when portalocker
        imports) or "filelock" (its O_EXCL lock file).
    python msal_ext_peer.py account
        Prints the account every command signs in, as JSON: client_id, authority, username, and
        a token response template (the Swift side fills in access_token and scope).
    python msal_ext_peer.py silent PATH SCOPE
        acquire_token_silent(SCOPE) for the account, with no network: prints {"secret",
        "network_calls"} as JSON.
    python msal_ext_peer.py write PATH PREFIX COUNT PAUSE_MS
        Prints "ready", waits for a line on stdin, then stores COUNT access tokens, a random pause
        of up to PAUSE_MS between them, write i with
        scope PREFIX-i and secret "secret-PREFIX-i" (a write msal-extensions gave up on, raising
        LockError, is made again after printing "lock-error i"; "lock-fallback" says that
        msal-extensions went on without the lock file, see FallbackCounter). After each write and after each read (a
        search for the token just written), reads the file raw under the lock and parses it
        (every writer holds the lock while it writes, so the document there must be whole),
        checking that every write of this process so far is in it. With --keyring, the item's text
        as msal-extensions loads it, read without the lock: the Secret Service replaces an item
        whole, so a reader sees a whole document at any moment, and the reads leave the lock to
        the writers. Prints "ack i" after each.
    python msal_ext_peer.py serve PATH
        One long-lived PersistedTokenCache; per line read: "silent SCOPE" prints what `silent`
        prints; "add SCOPE SECRET" stores an access token and prints "ok".
    python msal_ext_peer.py hold-lock PATH
        Takes msal-extensions' lock for PATH (PATH.lockfile), prints "held PID", and holds it
        until stdin closes.

Any failure exits non-zero with the reason on stderr (and, for `write`, "invalid ..." on stdout).
"""

import base64
import contextlib
import json
import logging
import os
import random
import sys
import time
import warnings

import msal
import msal_extensions
from msal_extensions import token_cache

from msal_fake_endpoint import OfflineHttpClient

warnings.simplefilter("ignore")

assert msal.__version__ == "1.39.0", "msal-python 1.39.0 is required, found " + msal.__version__

CLIENT = "11111111-aaaa-4bbb-8ccc-000000000001"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
HOST = "login.microsoftonline.com"
AUTHORITY = "https://{}/{}".format(HOST, TENANT)
UID = "00000000-0000-0000-1111-000000000001"
USERNAME = "alice@contoso.com"


def b64url(data):
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def response(scope, secret):
    """A token response for the account: one access token, scope `scope`, and its refresh and id tokens."""
    claims = {"aud": CLIENT, "iss": "https://{}/{}/v2.0".format(HOST, TENANT), "oid": UID, "tid": TENANT,
              "sub": "sub-" + UID, "preferred_username": USERNAME, "name": "Alice"}
    return {"token_type": "Bearer", "scope": scope, "expires_in": 3600, "ext_expires_in": 3600,
            "access_token": secret, "refresh_token": "rt-alice",
            "id_token": "e30." + b64url(claims) + ".", "client_info": b64url({"uid": UID, "utid": TENANT})}


def add(cache, scope, secret):
    cache.add({"client_id": CLIENT, "scope": [scope], "token_endpoint": AUTHORITY + "/oauth2/v2.0/token",
               "environment": HOST, "grant_type": "authorization_code", "data": {},
               "response": response(scope, secret)})


# Set by --keyring: the azure-identity item, PATH its signal file.
KEYRING = False


def persistence(path):
    if not KEYRING:
        return msal_extensions.FilePersistence(path)
    return msal_extensions.LibsecretPersistence(
        path, schema_name="msal.cache.nocae", attributes={"MsalClientID": "Microsoft.Developer.IdentityService"},
        label="MSALCache")


def persisted(path):
    return msal_extensions.PersistedTokenCache(persistence(path))


def silent(cache, scope):
    http = OfflineHttpClient()
    app = msal.PublicClientApplication(CLIENT, authority=AUTHORITY, token_cache=cache, http_client=http,
                                       instance_discovery=False)
    accounts = app.get_accounts(username=USERNAME)
    result = app.acquire_token_silent([scope], accounts[0]) if accounts else None
    return {"secret": (result or {}).get("access_token"), "network_calls": len(http.network_calls),
            "accounts": len(accounts)}


def under(lock, action):
    """What `action()` returns, holding `lock`; taken again each time msal-extensions gives up
    waiting for it."""
    while True:
        try:
            with lock:
                return action()
        except token_cache.LockError:
            print("lock-error read", flush=True)


def targets_in(store, lock):
    """The access tokens' scopes in the file or item, read raw under `lock` (msal-extensions' own
    lock, or for the item none)."""
    raw = under(lock, store.load)
    try:
        document = json.loads(raw)
    except ValueError as error:
        print("invalid JSON at %s (%d bytes): %s" % (store.get_location(), len(raw), error), flush=True)
        sys.exit(1)
    return {entry.get("target") for entry in document.get("AccessToken", {}).values()}


class FallbackCounter(logging.Handler):
    """Prints "lock-fallback" when msal-extensions with portalocker, having failed for 5 s to
    create the lock file, goes on to flock whatever file is at the path: from then on its lock
    excludes no O_EXCL locker, and it removes the lock file of whoever holds it on its way out."""

    def emit(self, record):
        if "failed to create lock file" in record.getMessage():
            print("lock-fallback", flush=True)


def write(path, prefix, count, pause_ms):
    logging.getLogger("msal_extensions.cache_lock").addHandler(FallbackCounter())
    store = persistence(path)
    cache = msal_extensions.PersistedTokenCache(store)
    lock = contextlib.nullcontext() if KEYRING else token_cache.CrossPlatLock(path + ".lockfile")
    print("ready", flush=True)
    sys.stdin.readline()
    mine = set()
    for i in range(count):
        scope = "%s-%d" % (prefix, i)
        while True:
            try:
                add(cache, scope, "secret-" + scope)
                break
            except token_cache.LockError:
                # msal-extensions gave up waiting (after about 5 s) and wrote nothing: as an
                # app would, write again, and say so.
                print("lock-error %d" % i, flush=True)
        mine.add(scope)
        lost = mine - targets_in(store, lock)
        if lost:
            print("invalid: written and gone %s" % sorted(lost), flush=True)
            sys.exit(1)
        found = list(cache.search(msal.TokenCache.CredentialType.ACCESS_TOKEN, target=[scope]))
        if not any(entry["secret"] == "secret-" + scope for entry in found):
            # msal-extensions reads without the lock, and its own writers rewrite the file in
            # place: a read between a truncation and the write sees an empty file, which msal
            # takes for an empty cache, and it does not read again until the file's time passes
            # that read's. Say so, and look again as a new process would, under the lock: without
            # it, that look too may land in another writer's rewrite.
            print("stale-empty-view %d" % i, flush=True)
            fresh = persisted(path)
            found = under(lock, lambda: list(fresh.search(msal.TokenCache.CredentialType.ACCESS_TOKEN, target=[scope])))
            if not any(entry["secret"] == "secret-" + scope for entry in found):
                print("invalid: search did not find %s" % scope, flush=True)
                sys.exit(1)
            cache = fresh
        targets_in(store, lock)
        print("ack %d" % i, flush=True)
        time.sleep(random.uniform(0, pause_ms / 1000))


def serve(path):
    cache = persisted(path)
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if words[0] == "silent":
            print(json.dumps(silent(cache, words[1])), flush=True)
        elif words[0] == "add":
            add(cache, words[1], words[2])
            print("ok", flush=True)
        else:
            sys.exit("serve: unknown command " + line)


def hold_lock(path):
    with token_cache.CrossPlatLock(path + ".lockfile"):
        print("held %d" % os.getpid(), flush=True)
        sys.stdin.read()


def main():
    global KEYRING
    arguments = sys.argv[1:]
    if arguments[:1] == ["--keyring"]:
        KEYRING = True
        arguments = arguments[1:]
    command, arguments = arguments[0], arguments[1:]
    if command == "lock-kind":
        print("portalocker" if token_cache.CrossPlatLock.__module__.endswith("cache_lock") else "filelock")
    elif command == "account":
        print(json.dumps({"client_id": CLIENT, "authority": AUTHORITY, "username": USERNAME,
                          "response": response("", "")}))
    elif command == "silent":
        print(json.dumps(silent(persisted(arguments[0]), arguments[1])))
    elif command == "write":
        write(arguments[0], arguments[1], int(arguments[2]), int(arguments[3]))
    elif command == "serve":
        serve(arguments[0])
    elif command == "hold-lock":
        hold_lock(arguments[0])
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
