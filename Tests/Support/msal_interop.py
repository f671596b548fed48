"""Interop driver for the Swift tests, run with real msal-python 1.39.0.

    python msal_interop.py build OUTDIR
        Builds caches with msal's own API: `SerializableTokenCache.add` with crafted token
        responses, and `PublicClientApplication` / `ConfidentialClientApplication` flows against
        the fake token endpoint on 127.0.0.1 (msal_fake_endpoint.py). Writes OUTDIR/<name>.json
        (exactly what `serialize()` returned) and OUTDIR/expectations.json: for every cache, the
        lookups msal-python itself answers (asked of a fresh copy, with no network), what it
        answered, where our rules (cache-model.md) make the engine answer differently and why,
        and, for caches built with `add()` alone, the events fed to it (so the engine can ingest
        the same responses and be compared byte for byte).

    python msal_interop.py consume SPEC.json
        SPEC = {"caches": [{"name", "path", "lookups": [...]}]}. Deserializes each cache (an
        engine export) and runs the lookups with an http client that records every network
        call. Prints {"results": {name: {lookup id: {"secret", "network_calls"}}},
        "reserialized_identical": {name: whether msal's serialize() of it gives the same text}}.

Lookups: {"id", "kind": "silent"|"client"|"accounts"|"refresh", "client_id", "authority", "scopes",
"username" (silent), "data" (optional, e.g. ssh-cert key_id), "fmi_path" (client)}.
"""

import copy
import json
import math
import os
import sys
import time
import warnings

import msal

from msal_fake_endpoint import FakeSTS, OfflineHttpClient
from msal.oauth2cli.oidc import decode_part  # noqa: F401  (msal's own base64url, for reference)

warnings.simplefilter("ignore")

assert msal.__version__ == "1.39.0", "msal-python 1.39.0 is required, found " + msal.__version__

HOME = "72f988bf-86f1-41af-91ab-2d7cd011db47"
GUEST = "f645ad92-e38d-4d1a-b510-d1b09a74a8ca"
CONSUMERS = "9188040d-6c67-4c5b-b112-36a304b66dad"
APP_A = "11111111-aaaa-4bbb-8ccc-000000000001"  # public client, Microsoft family
APP_B = "22222222-aaaa-4bbb-8ccc-000000000002"  # public client, Microsoft family
APP_C = "44444444-aaaa-4bbb-8ccc-000000000004"  # public client, no family
DAEMON = "55555555-aaaa-4bbb-8ccc-000000000005"  # confidential client
ADFS_APP = "66666666-aaaa-4bbb-8ccc-000000000006"
MSL = "login.microsoftonline.com"


def b64url(raw):
    import base64
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def jwt(claims):
    return b64url(b'{"alg":"none","typ":"JWT"}') + "." + b64url(json.dumps(claims).encode()) + "."


def client_info(uid, utid):
    return b64url(json.dumps({"uid": uid, "utid": utid}).encode())


def user_response(uid, tenant, username, at, rt=None, scope="User.Read openid profile", client=APP_A,
                  host=MSL, expires_in=3600, with_client_info=True, oid=None, **extra):
    """A token response for a user, as Entra ID (or ADFS, without client_info) sends it."""
    claims = {"aud": client, "iss": "https://{}/{}/v2.0".format(host, tenant), "iat": 1700000000,
              "sub": "sub-" + uid, "name": username.split("@")[0].title()}
    if tenant != "adfs":
        claims.update(oid=oid or uid, tid=tenant, preferred_username=username)
    else:
        claims.update(upn=username)
    response = {"token_type": "Bearer", "scope": scope, "expires_in": expires_in, "ext_expires_in": expires_in,
                "access_token": at, "id_token": jwt(claims)}
    if with_client_info:
        response["client_info"] = client_info(uid, tenant if tenant != CONSUMERS else CONSUMERS)
    if rt:
        response["refresh_token"] = rt
    response.update(extra)
    return response


class RecordingCache(msal.SerializableTokenCache):
    """msal's cache, recording each `add()` event with the clock it used (for the engine replay)."""

    def __init__(self):
        super().__init__()
        self.events = []

    def add(self, event, now=None, **kwargs):
        now = int(time.time()) if now is None else now
        self.events.append({"event": copy.deepcopy(event), "now": now})
        return super().add(event, now=now, **kwargs)


def add(cache, client, host, tenant, response, scopes, grant_type="authorization_code", data=None, now=None,
        token_path="oauth2/v2.0/token", **event):
    cache.add(dict(event, **{
        "client_id": client,
        "scope": response["scope"].split() if "scope" in response else scopes,
        "token_endpoint": "https://{}/{}/{}".format(host, tenant, token_path),
        "environment": host,
        "response": response,
        "data": data or {},
        "grant_type": grant_type,
    }), now=now)


# ---------------------------------------------------------------------------------------------
# Caches built with TokenCache.add


def build_add_users(now):
    """Users, guests, an MSA account on login.windows.net, an ssh-cert token, an expiring token."""
    cache = RecordingCache()
    alice, bob, dave = "00000000-0000-0000-1111-000000000001", "00000000-0000-0000-2222-000000000002", \
        "00000000-0000-0000-4444-000000000004"
    # Alice in her home tenant, then as a guest in Fabrikam (same client, same scopes).
    add(cache, APP_A, MSL, HOME, user_response(alice, HOME, "Alice@Contoso.com", "at-alice-home", "rt-alice",
                                                scope="Mail.Read User.Read openid profile"), [], now=now)
    guest = user_response(alice, HOME, "Alice@Contoso.com", "at-alice-guest", "rt-alice",
                          scope="Mail.Read User.Read openid profile", oid="00000000-0000-0000-9999-0000000000aa")
    guest["id_token"] = jwt({"aud": APP_A, "oid": "00000000-0000-0000-9999-0000000000aa", "tid": GUEST, "sub": "s",
                             "preferred_username": "Alice@Contoso.com", "name": "Alice"})
    add(cache, APP_A, MSL, GUEST, guest, [], now=now)
    # Bob lives in Fabrikam; device code grant; a token with refresh_in.
    add(cache, APP_A, MSL, GUEST, user_response(bob, GUEST, "Bob@Fabrikam.onmicrosoft.com", "at-bob", "rt-bob",
                                                 scope="Files.ReadWrite.All User.Read openid profile",
                                                 refresh_in=1800),
        [], grant_type="urn:ietf:params:oauth:grant-type:device_code", now=now)
    # Dave: a personal Microsoft account, on login.windows.net, consumers tenant.
    add(cache, APP_C, "login.windows.net", CONSUMERS,
        user_response(dave, CONSUMERS, "dave@outlook.com", "at-dave-msa", "rt-dave", scope="User.Read openid profile", client=APP_C,
                      host="login.windows.net"), [], now=now)
    # Alice's SSH certificate: bound to a key, token_type ssh-cert.
    add(cache, APP_A, MSL, HOME, {"token_type": "ssh-cert", "scope": "https://pas.windows.net/CheckMyAccess/Linux/.default",
                                  "expires_in": 3600, "access_token": "ssh-cert-alice",
                                  "client_info": client_info(alice, HOME)},
        [], data={"key_id": "key-alice-1", "token_type": "ssh-cert", "req_cnf": "cnf"}, grant_type="refresh_token",
        now=now, skip_account_creation=True)  # as msal's own silent flow adds it
    # A token 299 s from expiry (expired for every MSAL, 300 s margin), AADv1-style string expires_in.
    add(cache, APP_A, MSL, HOME, user_response(alice, HOME, "Alice@Contoso.com", "at-alice-expiring",
                                                scope="Calendars.Read", expires_in="299"), [], now=now)
    lookups = [
        silent("alice-home", APP_A, HOME, ["User.Read"], "alice@contoso.com"),
        silent("alice-home-mail", APP_A, HOME, ["Mail.Read", "User.Read"], "Alice@Contoso.com"),
        silent("alice-guest", APP_A, GUEST, ["Mail.Read"], "alice@contoso.com"),
        silent("alice-home-lower", APP_A, HOME, ["user.read"], "alice@contoso.com",
               engine="at-alice-home", rule="rule 2: scopes match case-insensitively (msal-python: case-sensitive, S1)"),
        silent("alice-common", APP_A, "common", ["User.Read"], "alice@contoso.com",
               engine="at-alice-home", rule="rule 3: /common resolves to the home tenant (msal-python: realm 'common' misses, S2)"),
        silent("alice-expiring", APP_A, HOME, ["Calendars.Read"], "alice@contoso.com"),
        silent("alice-unknown-scope", APP_A, HOME, ["Sites.Read.All"], "alice@contoso.com"),
        silent("alice-ssh", APP_A, HOME, ["https://pas.windows.net/CheckMyAccess/Linux/.default"], "alice@contoso.com",
               data={"token_type": "ssh-cert", "key_id": "key-alice-1", "req_cnf": "cnf"}),
        silent("alice-ssh-as-bearer", APP_A, HOME, ["https://pas.windows.net/CheckMyAccess/Linux/.default"],
               "alice@contoso.com", engine=None,
               rule="tokens are filed by token type: a Bearer request never gets an ssh-cert (msal-python does not "
                    "filter by token_type)"),
        silent("bob-guest-home", APP_A, GUEST, ["Files.ReadWrite.All"], "bob@fabrikam.onmicrosoft.com"),
        silent("bob-wrong-client", APP_B, GUEST, ["Files.ReadWrite.All"], "bob@fabrikam.onmicrosoft.com"),
        silent("dave-msa", APP_C, CONSUMERS, ["User.Read"], "dave@outlook.com", host="login.windows.net"),
        silent("dave-msa-alias", APP_C, CONSUMERS, ["User.Read"], "dave@outlook.com", host=MSL,
               engine="at-dave-msa", rule="environment aliases: login.microsoftonline.com finds login.windows.net "
                                         "(msal-python needs instance discovery for that, off here)"),
        accounts("accounts-a", APP_A, HOME, ["Alice@Contoso.com", "Bob@Fabrikam.onmicrosoft.com"]),
        accounts("accounts-c-windows-net", APP_C, CONSUMERS, ["dave@outlook.com"], host="login.windows.net"),
        accounts("accounts-b", APP_B, HOME, ["Alice@Contoso.com", "Bob@Fabrikam.onmicrosoft.com"], engine=[]),
    ]
    return cache, lookups


def build_add_adfs(now):
    """An ADFS account: no client_info, home_account_id is the id token's sub, realm 'adfs'."""
    cache = RecordingCache()
    response = user_response("erin", "adfs", "erin@contoso.com", "at-erin-adfs", "rt-erin", scope="openid profile",
                             host="fs.contoso.com", client=ADFS_APP, with_client_info=False)
    add(cache, ADFS_APP, "fs.contoso.com", "adfs", response, ["https://api.contoso.com/user_impersonation"],
        token_path="oauth2/token", now=now)
    # The server granted no resource scope: msal-python keeps the granted "openid profile" as target.
    response = user_response("erin", "adfs", "erin@contoso.com", "at-erin-api", scope="https://api.contoso.com/Read",
                             host="fs.contoso.com", client=ADFS_APP, with_client_info=False)
    add(cache, ADFS_APP, "fs.contoso.com", "adfs", response, [], token_path="oauth2/token", now=now)
    lookups = [
        silent("erin-api", ADFS_APP, "adfs", ["https://api.contoso.com/Read"], "erin@contoso.com",
               host="fs.contoso.com"),
        accounts("accounts-adfs", ADFS_APP, "adfs", ["erin@contoso.com"], host="fs.contoso.com"),
    ]
    return cache, lookups


def build_add_app_only(now):
    """Client-credentials tokens: home_account_id null, no account, no refresh token."""
    cache = RecordingCache()
    for scope, secret in (("https://graph.microsoft.com/.default", "at-daemon-graph"),
                          ("https://vault.azure.net/.default", "at-daemon-vault")):
        add(cache, DAEMON, MSL, HOME, {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599,
                                       "access_token": secret}, [scope], grant_type="client_credentials", now=now)
    lookups = [
        client("daemon-graph", DAEMON, HOME, ["https://graph.microsoft.com/.default"]),
        client("daemon-vault", DAEMON, HOME, ["https://vault.azure.net/.default"]),
        client("daemon-other-tenant", DAEMON, GUEST, ["https://graph.microsoft.com/.default"]),
    ]
    return cache, lookups


# ---------------------------------------------------------------------------------------------
# Caches built by msal's application flows against the fake token endpoint


def build_flows(sts):
    """Public-client flows (username/password, silent refresh, FOCI, device code, RT migration,
    /consumers) and confidential-client flows (client credentials, fmi_path → ext_cache_key)."""
    carol, frank, grace, heidi = ("00000000-0000-0000-3333-000000000003", "00000000-0000-0000-6666-000000000006",
                                  "00000000-0000-0000-7777-000000000007", "00000000-0000-0000-8888-000000000008")
    counter = {"n": 0}

    def responder(host, tenant, form):
        counter["n"] += 1
        grant, client_id = form.get("grant_type"), form.get("client_id")
        scope = " ".join(s for s in form.get("scope", "").split() if s != "offline_access")
        tag = "{}-{}".format(client_id[:8], counter["n"])
        family = {"foci": "1"} if client_id in (APP_A, APP_B) else {}
        if grant == "client_credentials":
            return 200, {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599,
                         "access_token": "at-daemon-" + ("fmi-" if "fmi_path" in form else "") + tag}
        if grant == "password":
            return 200, user_response(carol, HOME, "carol@contoso.com", "at-carol-" + tag, "rt-carol-" + tag,
                                      scope=scope, client=client_id, **family)
        if grant == "refresh_token":
            rt = form["refresh_token"]
            if rt.startswith("adal-rt-grace"):
                return 200, user_response(grace, HOME, "grace@contoso.com", "at-grace-" + tag, "rt-grace-" + tag,
                                          scope=scope, client=client_id)
            return 200, user_response(carol, HOME, "carol@contoso.com", "at-carol-" + tag, "rt-carol-" + tag,
                                      scope=scope, client=client_id, refresh_in=1800, **family)
        if grant == "urn:ietf:params:oauth:grant-type:device_code":
            if tenant == "consumers":
                return 200, user_response(heidi, CONSUMERS, "heidi@outlook.com", "at-heidi-" + tag, "rt-heidi-" + tag,
                                          scope=scope, client=client_id)
            return 200, user_response(frank, GUEST, "frank@fabrikam.onmicrosoft.com", "at-frank-" + tag,
                                      "rt-frank-" + tag, scope=scope, client=client_id, **family)
        return 400, {"error": "unsupported_grant_type"}

    sts.responder = responder
    cache = RecordingCache()

    def pca(client_id, tenant):
        return msal.PublicClientApplication(client_id, authority="https://{}/{}".format(MSL, tenant),
                                            token_cache=cache, http_client=sts.session(), instance_discovery=False)

    a_common = pca(APP_A, "common")
    r = a_common.acquire_token_by_username_password("carol@contoso.com", "pw", scopes=["User.Read"])
    assert "access_token" in r, r
    carol_account = a_common.get_accounts(username="carol@contoso.com")[0]
    r = a_common.acquire_token_silent(["Mail.Read"], carol_account)  # no AT: redeems the RT
    assert r and r["access_token"].startswith("at-carol"), r
    b_home = pca(APP_B, HOME)
    r = b_home.acquire_token_silent(["Calendars.Read"], b_home.get_accounts(username="carol@contoso.com")[0])
    assert r and r["access_token"].startswith("at-carol-22222222"), r  # family RT of A, redeemed by B
    a_guest = pca(APP_A, GUEST)
    flow = a_guest.initiate_device_flow(scopes=["User.Read"])
    r = a_guest.acquire_token_by_device_flow(flow)
    assert "access_token" in r, r
    c_home = pca(APP_C, HOME)
    r = c_home.acquire_token_by_refresh_token("adal-rt-grace", scopes=["Files.Read"])
    assert "access_token" in r, r
    c_consumers = pca(APP_C, "consumers")
    flow = c_consumers.initiate_device_flow(scopes=["Notes.Read"])
    r = c_consumers.acquire_token_by_device_flow(flow)
    assert "access_token" in r, r
    daemon = msal.ConfidentialClientApplication(DAEMON, client_credential="secret",
                                                authority="https://{}/{}".format(MSL, HOME), token_cache=cache,
                                                http_client=sts.session(), instance_discovery=False)
    r = daemon.acquire_token_for_client(["https://graph.microsoft.com/.default"])
    assert "access_token" in r, r
    r = daemon.acquire_token_for_client(["api://resource/.default"], fmi_path="SomeFmiPath/FmiCredentialPath")
    assert "access_token" in r, r
    assert any("ext_cache_key" in at for at in cache._cache["AccessToken"].values()), "msal wrote no ext_cache_key"
    assert any(at["realm"] == "common" for at in cache._cache["AccessToken"].values()), "no /common realm AT"

    secrets = {(at["client_id"], at["realm"], at["target"]): at["secret"] for at in cache._cache["AccessToken"].values()}
    at_a_user = secrets[(APP_A, "common", "User.Read openid profile")]
    at_b_cal = secrets[(APP_B, HOME, "Calendars.Read openid profile")]
    lookups = [
        silent("carol-common", APP_A, "common", ["User.Read"], "carol@contoso.com"),
        silent("carol-common-mail", APP_A, "common", ["Mail.Read"], "carol@contoso.com"),
        silent("carol-common-lower", APP_A, "common", ["user.read"], "carol@contoso.com", engine=at_a_user,
               rule="rule 2: scopes match case-insensitively (msal-python: case-sensitive, S1)"),
        silent("carol-b-home", APP_B, HOME, ["Calendars.Read"], "carol@contoso.com"),
        silent("carol-b-common", APP_B, "common", ["Calendars.Read"], "carol@contoso.com", engine=at_b_cal,
               rule="rule 3: /common resolves to the home tenant (msal-python: realm 'common' misses, S2)"),
        silent("carol-b-organizations", APP_B, "organizations", ["Calendars.Read"], "carol@contoso.com",
               engine=at_b_cal, rule="rule 3: /organizations resolves to the home tenant"),
        silent("frank-guest-device", APP_A, GUEST, ["User.Read"], "frank@fabrikam.onmicrosoft.com"),
        silent("grace-migrated", APP_C, HOME, ["Files.Read"], "grace@contoso.com"),
        silent("heidi-consumers", APP_C, "consumers", ["Notes.Read"], "heidi@outlook.com"),
        client("daemon-flow", DAEMON, HOME, ["https://graph.microsoft.com/.default"]),
        client("daemon-fmi", DAEMON, HOME, ["api://resource/.default"], fmi_path="SomeFmiPath/FmiCredentialPath"),
        client("daemon-fmi-other-path", DAEMON, HOME, ["api://resource/.default"], fmi_path="Other/Path"),
        client("daemon-fmi-without-path", DAEMON, HOME, ["api://resource/.default"]),
        accounts("accounts-flows-a", APP_A, HOME,
                 ["carol@contoso.com", "frank@fabrikam.onmicrosoft.com", "grace@contoso.com", "heidi@outlook.com"],
                 engine=["carol@contoso.com", "frank@fabrikam.onmicrosoft.com"]),
        accounts("accounts-flows-c", APP_C, HOME,
                 ["carol@contoso.com", "frank@fabrikam.onmicrosoft.com", "grace@contoso.com", "heidi@outlook.com"],
                 engine=["grace@contoso.com", "heidi@outlook.com"]),
    ]
    return cache, lookups


# ---------------------------------------------------------------------------------------------
# Lookups, asked of msal-python with no network


def silent(id, client_id, tenant, scopes, username, host=MSL, data=None, **engine):
    lookup = {"id": id, "kind": "silent", "client_id": client_id, "authority": "https://{}/{}".format(host, tenant),
              "scopes": scopes, "username": username}
    if data:
        lookup["data"] = data
    if "rule" in engine:
        lookup["engine"] = {"secret": engine.get("engine"), "rule": engine["rule"]}
    return lookup


def client(id, client_id, tenant, scopes, fmi_path=None):
    lookup = {"id": id, "kind": "client", "client_id": client_id,
              "authority": "https://{}/{}".format(MSL, tenant), "scopes": scopes}
    if fmi_path:
        lookup["fmi_path"] = fmi_path
        # The key msal-python files the token under, computed by msal itself.
        lookup["ext_cache_key"] = msal.token_cache._compute_ext_cache_key({"fmi_path": fmi_path})
    return lookup


ACCOUNTS_RULE = ("accounts are per client (Apple SDK, rule 6): those with a refresh token of the client or its "
                 "family, in every cloud; msal-python lists every account of the app's cloud")


def accounts(id, client_id, tenant, usernames, host=MSL, engine=None):
    """`usernames`: what msal-python must list (checked at build); `engine`: what the engine lists
    when our rules make it differ."""
    lookup = {"id": id, "kind": "accounts", "client_id": client_id,
              "authority": "https://{}/{}".format(host, tenant), "expected_usernames": usernames}
    if engine is not None:
        lookup["engine"] = {"usernames": sorted(engine), "rule": ACCOUNTS_RULE}
    return lookup


def run_lookup(cache, lookup):
    """What msal-python answers, with an http client that records (and fails) every network call."""
    http = OfflineHttpClient()
    authority = lookup["authority"]
    if lookup["kind"] == "client":
        app = msal.ConfidentialClientApplication(lookup["client_id"], client_credential="secret", authority=authority,
                                                 token_cache=cache, http_client=http, instance_discovery=False)
        before = len(http.network_calls)
        result = app.acquire_token_for_client(lookup["scopes"], fmi_path=lookup.get("fmi_path"))
        secret = result.get("access_token") if result and "error" not in result else None
        return {"secret": secret, "network_calls": len(http.network_calls) - before}
    app = msal.PublicClientApplication(lookup["client_id"], authority=authority, token_cache=cache, http_client=http,
                                       instance_discovery=False)
    before = len(http.network_calls)
    if lookup["kind"] == "accounts":
        names = sorted(a["username"] for a in app.get_accounts())
        return {"usernames": names, "network_calls": len(http.network_calls) - before}
    found = app.get_accounts(username=lookup["username"])
    if not found:
        return {"secret": None, "network_calls": 0, "no_account": True}
    if lookup["kind"] == "refresh":
        return run_refresh(cache, lookup, found[0])
    result = app.acquire_token_silent(lookup["scopes"], found[0], data=dict(lookup.get("data", {})))
    return {"secret": result.get("access_token") if result else None,
            "network_calls": len(http.network_calls) - before}


def run_refresh(cache, lookup, account):
    """A silent call with no usable access token, against the fake token endpoint: which
    refresh tokens msal-python finds in the cache and sends (own, family) tells whether the
    refresh tokens another writer stored are usable by msal-python."""
    sts = FakeSTS()
    try:
        sts.responder = lambda host, tenant, form: (200, {
            "token_type": "Bearer", "expires_in": 3600, "scope": form.get("scope", ""),
            "access_token": "at-refreshed-with-" + form.get("refresh_token", "")})
        app = msal.PublicClientApplication(lookup["client_id"], authority=lookup["authority"], token_cache=cache,
                                           http_client=sts.session(), instance_discovery=False)
        result = app.acquire_token_silent(lookup["scopes"], account)
        return {"secret": result.get("access_token") if result else None, "network_calls": len(sts.calls),
                "sent_refresh_tokens": [call[2] for call in sts.calls]}
    finally:
        sts.close()


RESERVED = {"openid", "profile", "offline_access"}  # msal-python refuses them in a request


def entry_lookups(serialized):
    """For every access token of a cache, the lookup msal-python would answer with it: its
    client, https://<environment>/<realm>, its non-reserved scopes, its account's username (or
    an app-only request), and for a key-bound token its token_type and key_id."""
    document = json.loads(serialized)
    accounts = list(document.get("Account", {}).values())
    lookups = []
    for key, at in document.get("AccessToken", {}).items():
        scopes = [scope for scope in at.get("target", "").split() if scope.lower() not in RESERVED]
        if not scopes or at.get("ext_cache_key"):
            continue  # an ext_cache_key is a hash of request data: reached by the explicit fmi_path lookups
        lookup = {"id": "entry:" + key, "client_id": at["client_id"], "scopes": scopes,
                  "authority": "https://{}/{}".format(at["environment"], at["realm"])}
        if at.get("home_account_id") is None:
            lookup["kind"] = "client"
        else:
            names = [a["username"] for a in accounts if a.get("home_account_id") == at["home_account_id"]
                     and a.get("environment") == at["environment"] and a.get("username")]
            if not names:
                continue
            lookup.update(kind="silent", username=names[0])
            if at.get("key_id"):
                lookup["data"] = {"token_type": at.get("token_type", "Bearer"), "key_id": at["key_id"], "req_cnf": "cnf"}
        lookups.append(lookup)
    return lookups


def answer(serialized, lookups, frozen_now=None):
    """msal-python's answers; `frozen_now` pins msal's clock (for the shared vectors of 2023)."""
    from unittest import mock
    results = {}
    for lookup in lookups:
        cache = msal.SerializableTokenCache()
        cache.deserialize(serialized)  # a fresh copy: msal's search() deletes expired tokens
        if frozen_now is None:
            results[lookup["id"]] = run_lookup(cache, lookup)
        else:
            with mock.patch("time.time", return_value=float(frozen_now)):
                results[lookup["id"]] = run_lookup(cache, lookup)
    return results


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "SecureTokenCacheTests", "Fixtures")
VECTORS = ["v1_single_account", "v2_two_accounts_two_tenants", "v3_foci_two_clients"]
VECTOR_NOW = 1700000100


# Unknown fields other SDKs write travel through the engine as JSON values; msal-python writes
# them back with json.dumps(json.loads(...), indent=4), and so does the engine but for a number too
# large for a float (written_back). Each input stands for such a field.
JSON_INPUTS = [
    r'{"ints": [0, -0, 7, -12, 123456789012345678901234567890, 9007199254740993]}',
    r'{"floats": [1.0, 2.50, 0.1, 1e16, 1e15, 1.5e-5, 0.0001, 1E+2, -0.0, 5e-324, 1.7976931348623157e308, 1e400,'
    r' 3.14159265358979323846, 123456789.123456789, 1e-7, 100000000000000000.0, -1.5E+999, 1e-400]}',
    r'{"strings": ["plain", "\u00e9t\u00e9", "\ud83d\ude00", "\u0000\u001f\u007f", "\u2028\u2029", "tab\there",'
    r' "q\"b\\s\/", "\b\f\n\r"]}',
    r'{"nesting": {"empty_object": {}, "empty_array": [], "deep": [[[{"a": [true, false, null]}]]]}}',
    r'{"order": {"z": 1, "a": 2, "m": 3}, "duplicate": {"k": 1, "j": 2, "k": 3}}',
    '{"raw_utf8": "\u00e9\U0001f600\u4e2d"}',
]


def written_back(text):
    """json.dumps(json.loads(text), indent=4), but a number too large for a float keeps its
    literal: Python would print `Infinity`, which is not JSON, and the engine does not."""
    literals = []

    def parse_float(literal):
        value = float(literal)
        if math.isfinite(value):
            return value
        literals.append(literal)
        return "\0overflow%d\0" % (len(literals) - 1)

    written = json.dumps(json.loads(text, parse_float=parse_float), indent=4)
    for number, literal in enumerate(literals):
        written = written.replace(json.dumps("\0overflow%d\0" % number), literal)
    # Python reads it back as the very value msal-python's own output holds.
    assert json.loads(written) == json.loads(json.dumps(json.loads(text))), text
    return written


def json_round_trips():
    return [{"input": text, "output": written_back(text)} for text in JSON_INPUTS]


def build(outdir):
    os.makedirs(outdir, exist_ok=True)
    now = int(time.time())
    built = [("add_users",) + build_add_users(now), ("add_adfs",) + build_add_adfs(now),
             ("add_app_only",) + build_add_app_only(now)]
    sts = FakeSTS()
    try:
        built.append(("flows",) + build_flows(sts))
    finally:
        sts.close()
    # The shared vectors (written by msal-python 1.39.0 at 1700000000), asked at a pinned clock.
    frozen = {}
    for name in VECTORS:
        cache = msal.SerializableTokenCache()
        with open(os.path.join(FIXTURES, name + ".json"), encoding="utf-8") as f:
            cache.deserialize(f.read())
        built.append((name, cache, []))
        frozen[name] = VECTOR_NOW
    expectations = {"msal_version": msal.__version__, "now": int(time.time()), "caches": []}
    for name, cache, lookups in built:
        serialized = cache.serialize()
        path = os.path.join(outdir, name + ".json")
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(serialized)
        lookups = lookups + entry_lookups(serialized)
        msal_answers = answer(serialized, lookups, frozen.get(name))
        for lookup in lookups:
            lookup["msal"] = msal_answers[lookup["id"]]
            if lookup["kind"] == "accounts":
                assert lookup["msal"]["usernames"] == sorted(lookup["expected_usernames"]), (lookup, lookup["msal"])
        entry = {"name": name, "path": path, "lookups": lookups}
        if name in frozen:
            entry["frozen_now"] = frozen[name]
        if name.startswith("add_"):
            entry["events"] = cache.events
        expectations["caches"].append(entry)
    expectations["json_round_trips"] = json_round_trips()
    with open(os.path.join(outdir, "expectations.json"), "w") as f:
        json.dump(expectations, f, indent=1)
    print(json.dumps({"outdir": outdir, "caches": [c["name"] for c in expectations["caches"]]}))


def consume(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    results, reserialized = {}, {}
    for entry in spec["caches"]:
        with open(entry["path"], encoding="utf-8") as f:
            serialized = f.read()
        results[entry["name"]] = answer(serialized, entry["lookups"], entry.get("frozen_now"))
        # Rule 8: what msal-python itself writes back for the engine's export is the same text.
        cache = msal.SerializableTokenCache()
        cache.deserialize(serialized)
        reserialized[entry["name"]] = cache.serialize() == serialized
    print(json.dumps({"results": results, "reserialized_identical": reserialized}))


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "build":
        build(sys.argv[2])
    elif command == "consume":
        consume(sys.argv[2])
    else:
        sys.exit("usage: msal_interop.py build OUTDIR | consume SPEC.json")
