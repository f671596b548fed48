"""A tiny fake Microsoft identity platform on 127.0.0.1, and the HTTP clients msal talks through.

msal only accepts https authorities, so `LoopbackSession` (a `requests.Session`, which msal
accepts as `http_client=`) rewrites every `https://<host>/<path>` to
`http://127.0.0.1:<port>/<host>/<path>`: the requests really travel over loopback to
`FakeSTS`, which answers OIDC discovery, user-realm discovery, device-code and token requests.
What the token endpoint answers is decided by the test script through `FakeSTS.responder`.

`OfflineHttpClient` is the opposite: it answers OIDC discovery from memory (msal asks for it
while an app is constructed) and records every other request as a network call, answering
it with an error so msal cannot get a token from it.
"""

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests


def openid_configuration(host, tenant):
    base = "https://{}/{}".format(host, tenant)
    if tenant.lower() == "adfs":
        return {
            "issuer": base,
            "authorization_endpoint": base + "/oauth2/authorize",
            "token_endpoint": base + "/oauth2/token",
            "device_authorization_endpoint": base + "/oauth2/devicecode",
        }
    return {
        "issuer": base + "/v2.0",
        "authorization_endpoint": base + "/oauth2/v2.0/authorize",
        "token_endpoint": base + "/oauth2/v2.0/token",
        "device_authorization_endpoint": base + "/oauth2/v2.0/devicecode",
    }


class FakeSTS:
    """An HTTP server on 127.0.0.1 (port chosen by the OS) playing Entra ID / ADFS."""

    def __init__(self):
        self.calls = []  # (grant_type, client_id, refresh_token or None) per token request
        self.responder = None  # callable(host, tenant, form) -> (status, json dict)
        self.device_scopes = {}  # device_code -> scope of its device authorization request
        sts = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output clean
                pass

            def _answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _parts(self):
                path = urllib.parse.urlparse(self.path).path
                return [p for p in path.split("/") if p]  # host, tenant, ...

            def do_GET(self):
                parts = self._parts()
                if parts[-1] == "openid-configuration":
                    return self._answer(200, openid_configuration(parts[0], parts[1]))
                if len(parts) > 2 and parts[2] == "userrealm":
                    return self._answer(200, {"account_type": "Managed", "ver": "1.0"})
                return self._answer(404, {"error": "not_found"})

            def do_POST(self):
                parts = self._parts()
                length = int(self.headers.get("Content-Length", "0"))
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                if parts[-1] == "devicecode":
                    # The token request of a device flow carries no scope: remember the one asked for.
                    device_code = "dc-{}".format(len(sts.device_scopes))
                    sts.device_scopes[device_code] = form.get("scope", "")
                    return self._answer(200, {
                        "device_code": device_code, "user_code": "FAKE",
                        "verification_uri": "https://microsoft.com/devicelogin",
                        "expires_in": 900, "interval": 0, "message": "fake device flow",
                    })
                if "device_code" in form:
                    form.setdefault("scope", sts.device_scopes.get(form["device_code"], ""))
                sts.calls.append((form.get("grant_type"), form.get("client_id"), form.get("refresh_token")))
                status, body = sts.responder(parts[0], parts[1], form)
                return self._answer(status, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def session(self):
        return LoopbackSession(self.port)


class LoopbackSession(requests.Session):
    """A requests session that sends every https request to the fake STS on 127.0.0.1."""

    def __init__(self, port):
        super().__init__()
        self.port = port
        self.trust_env = False  # never a proxy: loopback only

    def request(self, method, url, *args, **kwargs):
        parsed = urllib.parse.urlparse(url)
        local = "http://127.0.0.1:{}/{}{}".format(self.port, parsed.netloc, parsed.path)
        if parsed.query:
            local += "?" + parsed.query
        kwargs.setdefault("timeout", 10)
        return super().request(method, local, *args, **kwargs)


class _Response:
    def __init__(self, status_code, body):
        self.status_code = status_code
        self.text = json.dumps(body)
        self.headers = {}

    def raise_for_status(self):
        if self.status_code >= 400:
            raise requests.HTTPError("HTTP {}".format(self.status_code))


class OfflineHttpClient:
    """Answers OIDC discovery from memory; every other request is recorded as a network call."""

    def __init__(self):
        self.network_calls = []

    def get(self, url, params=None, headers=None, **kwargs):
        parsed = urllib.parse.urlparse(url)
        parts = [p for p in parsed.path.split("/") if p]
        if parts and parts[-1] == "openid-configuration":
            return _Response(200, openid_configuration(parsed.netloc, parts[0]))
        self.network_calls.append(("GET", url))
        return _Response(500, {"error": "network_forbidden"})

    def post(self, url, params=None, data=None, headers=None, **kwargs):
        self.network_calls.append(("POST", url))
        return _Response(400, {"error": "invalid_grant", "error_description": "network forbidden in this test"})

    def close(self):
        pass
