"""App-only tokens with real msal-python 1.39.0, against the counting fake authority.

    python msal_app_tokens.py PORT SPEC.json

SPEC = {"client_id", "cache_in": path or null, "cache_out": path,
        "requests": [{"tenant", "scopes", "kind"?, "assertion"?, "fmi_path"?, "code"?}]}.
For each request a `ConfidentialClientApplication` for https://login.microsoftonline.com/<tenant>
calls, on one token cache (read from `cache_in` when given), by "kind":
`acquire_token_for_client(scopes)` ("client", the default; with `fmi_path` when given),
`acquire_token_on_behalf_of(assertion, scopes)` ("obo") or
`acquire_token_by_authorization_code(code, scopes)` ("code").
OIDC discovery is answered in memory; every token request goes to fake_authority.py on
127.0.0.1:PORT, which counts it. Writes the cache's `serialize()` to `cache_out` and prints
{"results": [{"tenant", "scopes", "secret", "token_source"}]}.
"""

import json
import sys
import urllib.parse
import warnings

import msal
import requests

from msal_fake_endpoint import _Response, openid_configuration

warnings.simplefilter("ignore")

assert msal.__version__ == "1.39.0", "msal-python 1.39.0 is required, found " + msal.__version__

HOST = "login.microsoftonline.com"


class FakeAuthorityClient:
    """msal's http client: discovery from memory, token requests to the fake authority."""

    def __init__(self, port):
        self.base = "http://127.0.0.1:{}".format(port)
        self.session = requests.Session()
        self.session.trust_env = False  # never a proxy: loopback only

    def get(self, url, params=None, headers=None, **kwargs):
        parts = [p for p in urllib.parse.urlparse(url).path.split("/") if p]
        if parts and parts[-1] == "openid-configuration":
            return _Response(200, openid_configuration(HOST, parts[0]))
        raise AssertionError("unexpected GET " + url)

    def post(self, url, params=None, data=None, headers=None, **kwargs):
        path = urllib.parse.urlparse(url).path
        return self.session.post(self.base + path, params=params, data=data, headers=headers, timeout=10)

    def close(self):
        self.session.close()


def main(port, spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    cache = msal.SerializableTokenCache()
    if spec.get("cache_in"):
        with open(spec["cache_in"], encoding="utf-8") as f:
            cache.deserialize(f.read())
    http = FakeAuthorityClient(port)
    results = []
    for request in spec["requests"]:
        app = msal.ConfidentialClientApplication(
            spec["client_id"], client_credential="secret", authority="https://{}/{}".format(HOST, request["tenant"]),
            token_cache=cache, http_client=http, instance_discovery=False)
        kind = request.get("kind", "client")
        if kind == "obo":
            result = app.acquire_token_on_behalf_of(request["assertion"], request["scopes"])
        elif kind == "code":
            result = app.acquire_token_by_authorization_code(request["code"], request["scopes"])
        elif request.get("fmi_path"):
            result = app.acquire_token_for_client(request["scopes"], fmi_path=request["fmi_path"])
        else:
            result = app.acquire_token_for_client(request["scopes"])
        assert "access_token" in result, result
        results.append({"tenant": request["tenant"], "scopes": request["scopes"], "secret": result["access_token"],
                        "token_source": result.get("token_source")})
    with open(spec["cache_out"], "w", encoding="utf-8", newline="") as f:
        f.write(cache.serialize())
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
