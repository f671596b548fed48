#!/usr/bin/env python3
"""A fake OAuth 2.0 authority on 127.0.0.1 for SecureTokenCache's tests and demo.

Speaks just enough of the Microsoft identity platform's v2.0 token endpoint:

  POST /<tenant>/oauth2/v2.0/token   grant_type=refresh_token (RFC 6749 section 6);
                                     grant_type=client_credentials (section 4.4) with any
                                     client secret: an app-only token for the tenant, no
                                     refresh or id token, as Entra ID answers it (a
                                     common/organizations/consumers tenant gets 400);
                                     grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer
                                     with requested_token_use=on_behalf_of (OBO): a user's
                                     token response for the user the assertion names (its
                                     preferred_username or oid, and tid). Both answer the
                                     "500" and "invalid_grant" modes too;
                                     grant_type=authorization_code: a user's token response
                                     for <code>@contoso.com
  POST /<tenant>/oauth2/token         the v1 (ADAL) endpoint: grant_type=password (username,
                                     resource) signs a user in, grant_type=refresh_token
                                     with a resource redeems; answers carry "resource" and
                                     an id token with "upn", as ADAL for Python expects
  GET  /common/UserRealm/<user>      ADAL's user realm discovery: always "Managed"
  POST /signin                       JSON or form {"client_id", "username", "scope"?, "tenant"?,
                                     "expires_in"?, "refresh_in"?}:
                                     a full first token response, as an interactive
                                     authorization-code sign-in would end (id_token JWT,
                                     client_info, refresh token)
  POST /control                      JSON: change behaviour for the following requests
                                     {"mode": "ok" | "500" | "garbage" | "truncated" | "hang" |
                                      "missing_fields" | "invalid_grant" | "interaction_required",
                                      "times": n (then back to "ok"; default: until changed),
                                      "decline": ["Scope", ...], "expires_in": s,
                                      "refresh_in": s, "delay": s, "hang": s}
  GET  /api/whoami                   a downstream API: with "Authorization: Bearer <access token>"
                                     of a token this authority issued, {"kind": "user" | "app",
                                     "caller": username or client id, "tenant", "scope"}; 401
                                     for any other token
  GET  /stats                        {"requests": {"<client_id> <grant_type>": n}, "total": n}
  POST /reset                        forget the counters (tokens stay valid)
  POST /shutdown                     exit at once

With --exit-on-stdin-eof the server also exits when its stdin closes, so a test runner that
dies (or forgets to stop it) never leaves it behind.

Refresh tokens rotate: redeeming one issues a new one and revokes the old, so redeeming a
refresh token twice gets invalid_grant (what the single-refresh tests must never see).
Clients named with --family-client are FOCI family members: their refresh tokens are family
tokens ("foci": "1") usable by every family client; another client presenting one gets
invalid_grant with suberror client_mismatch, as Entra ID answers.

The first stdout line is the chosen port. Secrets are never printed.
"""

import argparse
import base64
import hashlib
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RESERVED = {"openid", "profile", "offline_access"}
OBO_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def jwt(claims: dict) -> str:
    header = b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    return header + "." + b64url(json.dumps(claims).encode()) + "."


class Authority:
    def __init__(self, family_clients, default_tenant):
        self.lock = threading.Lock()
        self.family_clients = {c.lower() for c in family_clients}
        self.default_tenant = default_tenant
        self.refresh_tokens = {}  # secret -> {"client", "family", "user"}
        self.access_tokens = {}  # secret -> what /api/whoami answers for it
        self.counts = {}
        self.total = 0
        self.behaviour = {"mode": "ok"}
        self.serial = 0

    # -- behaviour -------------------------------------------------------------------------

    def take_mode(self):
        """The mode for this request; counts down a one-shot mode."""
        with self.lock:
            b = self.behaviour
            mode = b.get("mode", "ok")
            times = b.get("times")
            if times is not None and mode != "ok":
                if times <= 0:
                    mode = "ok"
                else:
                    b["times"] = times - 1
            return mode, dict(b)

    def count(self, client, grant):
        with self.lock:
            key = f"{client} {grant}"
            self.counts[key] = self.counts.get(key, 0) + 1
            self.total += 1

    # -- tokens ----------------------------------------------------------------------------

    def user(self, username, tenant):
        uid = "00000000-0000-0000-0000-" + hashlib.sha256(username.lower().encode()).hexdigest()[:12]
        return {"uid": uid, "tid": tenant, "username": username}

    def issue(self, client, user, scope, behaviour, resource=None):
        with self.lock:
            self.serial += 1
            serial = self.serial
            family = client.lower() in self.family_clients
            refresh = "rt-" + secrets.token_urlsafe(24)
            self.refresh_tokens[refresh] = {"client": client.lower(), "family": family, "user": user}
        requested = [s for s in scope.split() if s]
        declined = {d.lower() for d in behaviour.get("decline", [])}
        granted = [s for s in requested if s.lower() not in RESERVED and s.lower() not in declined]
        granted += ["openid", "profile", "offline_access"]
        expires_in = int(behaviour.get("expires_in", 3600))
        access_token = f"at-{serial}-" + secrets.token_urlsafe(16)
        with self.lock:
            self.access_tokens[access_token] = {"kind": "user", "caller": user["username"], "tenant": user["tid"],
                                                "scope": " ".join(granted)}
        body = {
            "token_type": "Bearer",
            "scope": " ".join(granted),
            "expires_in": expires_in,
            "ext_expires_in": expires_in,
            "access_token": access_token,
            "refresh_token": refresh,
            "id_token": jwt({
                "aud": client,
                "iss": f"https://login.microsoftonline.com/{user['tid']}/v2.0",
                "iat": int(time.time()),
                "oid": user["uid"],
                "sub": "sub-" + user["uid"],
                "tid": user["tid"],
                "preferred_username": user["username"],
                "name": user["username"].split("@")[0].title(),
            }),
            "client_info": b64url(json.dumps({"uid": user["uid"], "utid": user["tid"]}).encode()),
        }
        if resource is not None:
            # The v1 endpoint's answer: the resource, and the id-token claims ADAL reads.
            body["resource"] = resource
            body["id_token"] = jwt({
                "aud": client,
                "iss": f"https://sts.windows.net/{user['tid']}/",
                "iat": int(time.time()),
                "oid": user["uid"],
                "sub": "sub-" + user["uid"],
                "tid": user["tid"],
                "upn": user["username"],
                "unique_name": user["username"],
                "given_name": user["username"].split("@")[0].title(),
                "family_name": "Tester",
            })
        if "refresh_in" in behaviour:
            body["refresh_in"] = int(behaviour["refresh_in"])
        if family:
            body["foci"] = "1"
        return body

    def issue_app(self, tenant, behaviour, client="", scope=""):
        """(status, body) for a client_credentials grant: an app-only token for one tenant."""
        if tenant in ("common", "organizations", "consumers"):
            return 400, error("invalid_request", None,
                              "AADSTS700016: client credentials need a tenant-specific endpoint")
        with self.lock:
            self.serial += 1
            serial = self.serial
        expires_in = int(behaviour.get("expires_in", 3599))
        access_token = f"at-app-{serial}-" + secrets.token_urlsafe(16)
        with self.lock:
            self.access_tokens[access_token] = {"kind": "app", "caller": client, "tenant": tenant, "scope": scope}
        body = {"token_type": "Bearer", "expires_in": expires_in, "ext_expires_in": expires_in,
                "access_token": access_token}
        if "refresh_in" in behaviour:
            body["refresh_in"] = int(behaviour["refresh_in"])
        return 200, body

    def issue_obo(self, form, tenant, behaviour):
        """(status, body) for an on-behalf-of grant: the assertion's user's token response."""
        if form.get("requested_token_use") != "on_behalf_of":
            return 400, error("invalid_request", None, "AADSTS50027: requested_token_use must be on_behalf_of")
        try:
            payload = form.get("assertion", "").split(".")[1]
            claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except (IndexError, ValueError):
            return 400, error("invalid_grant", None, "AADSTS50027: the assertion is not a JWT")
        username = claims.get("preferred_username") or f"{claims.get('oid', 'someone')}@example.com"
        user = self.user(username, claims.get("tid") or tenant)
        return 200, self.issue(form.get("client_id", ""), user, form.get("scope", ""), behaviour)

    def redeem(self, form, behaviour, resource=None):
        """(status, body) for a refresh_token grant (a v1 one when `resource` is given)."""
        client = form.get("client_id", "").lower()
        presented = form.get("refresh_token", "")
        with self.lock:
            record = self.refresh_tokens.get(presented)
            if record is not None:
                if record["client"] != client and not (record["family"] and client in self.family_clients):
                    if record["family"]:
                        return 400, error("invalid_grant", "client_mismatch",
                                          "AADSTS70000: the provided grant is a family refresh token and the client is not in the family")
                    return 400, error("invalid_grant", None, "AADSTS70000: the refresh token was issued to another client")
                # Rotation: the presented refresh token is spent.
                del self.refresh_tokens[presented]
        if record is None:
            return 400, error("invalid_grant", "bad_token", "AADSTS700082: the refresh token is unknown, spent or revoked")
        scope = form.get("scope", "") if resource is None else resource + "/.default"
        return 200, self.issue(client, record["user"], scope, behaviour, resource)


def error(code, suberror, description):
    body = {
        "error": code,
        "error_description": description,
        "error_codes": [70000],
        "timestamp": time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime()),
        "trace_id": secrets.token_hex(16),
        "correlation_id": "c0ffee00-" + secrets.token_hex(2) + "-4000-8000-" + secrets.token_hex(6),
    }
    if suberror:
        body["suberror"] = suberror
    return body


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    authority: Authority = None  # set by main

    def log_message(self, fmt, *args):  # quiet: requests carry secrets in bodies, never logged
        pass

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/stats":
            a = self.authority
            with a.lock:
                self.send_json(200, {"requests": dict(a.counts), "total": a.total})
        elif "/userrealm/" in self.path.lower():
            self.send_json(200, {"ver": "1.0", "account_type": "Managed", "domain_name": "contoso.com",
                                 "cloud_instance_name": "microsoftonline.com",
                                 "cloud_audience_urn": "urn:federation:MicrosoftOnline"})
        elif self.path == "/health":
            self.send_json(200, {"ok": True})
        elif self.path == "/api/whoami":
            header = self.headers.get("Authorization") or ""
            token = header[len("Bearer "):] if header.startswith("Bearer ") else ""
            with self.authority.lock:
                known = self.authority.access_tokens.get(token)
            if known is None:
                self.send_json(401, {"error": "invalid_token"})
            else:
                self.send_json(200, known)
        else:
            self.send_json(404, {"error": "not_found"})

    def do_POST(self):
        a = self.authority
        raw = self.read_body()
        path = urllib.parse.urlsplit(self.path).path
        if path == "/control":
            with a.lock:
                a.behaviour = json.loads(raw or b"{}")
            return self.send_json(200, {"ok": True})
        if path == "/shutdown":
            self.send_json(200, {"ok": True})
            self.wfile.flush()
            os._exit(0)
        if path == "/reset":
            with a.lock:
                a.counts = {}
                a.total = 0
                a.behaviour = {"mode": "ok"}
            return self.send_json(200, {"ok": True})
        if path == "/signin":
            if "json" in (self.headers.get("Content-Type") or ""):
                request = json.loads(raw or b"{}")
            else:
                request = dict(urllib.parse.parse_qsl(raw.decode("utf-8", "replace")))
            client = request["client_id"]
            a.count(client.lower(), "authorization_code")
            user = a.user(request["username"], request.get("tenant", a.default_tenant))
            scope = request.get("scope", "User.Read openid profile offline_access")
            shape = {k: request[k] for k in ("refresh_in", "expires_in") if k in request}
            return self.send_json(200, a.issue(client, user, scope, shape))
        if path.endswith("/oauth2/v2.0/token") or path.endswith("/oauth2/token"):
            form = dict(urllib.parse.parse_qsl(raw.decode("utf-8", "replace")))
            grant = form.get("grant_type", "")
            a.count(form.get("client_id", "").lower(), grant)
            mode, behaviour = a.take_mode()
            if behaviour.get("delay"):
                time.sleep(float(behaviour["delay"]))
            v1 = path.endswith("/oauth2/token") and not path.endswith("/adfs/oauth2/token")
            if v1 and grant == "password":
                tenant = path.strip("/").split("/")[0]
                if tenant in ("common", "organizations"):
                    tenant = a.default_tenant
                user = a.user(form.get("username", ""), tenant)
                resource = form.get("resource", "")
                return self.send_json(200, a.issue(form.get("client_id", ""), user, resource + "/.default", behaviour, resource))
            if grant in ("client_credentials", OBO_GRANT) and not v1:
                if mode == "500":
                    return self.send_json(500, error("temporarily_unavailable", None, "AADSTS90033: a transient error"))
                if mode == "invalid_grant":
                    return self.send_json(400, error("invalid_grant", None, "AADSTS50013: the assertion is not valid"))
                tenant = path.strip("/").split("/")[-4].lower()
                if grant == "client_credentials":
                    return self.send_json(*a.issue_app(tenant, behaviour, form.get("client_id", ""), form.get("scope", "")))
                return self.send_json(*a.issue_obo(form, tenant, behaviour))
            if grant == "authorization_code" and not v1:
                # A web app's sign-in: the code names the user.
                tenant = path.strip("/").split("/")[-4].lower()
                user = a.user(form.get("code", "someone") + "@contoso.com", tenant)
                return self.send_json(200, a.issue(form.get("client_id", ""), user, form.get("scope", ""), behaviour))
            if grant != "refresh_token":
                return self.send_json(400, error("unsupported_grant_type", None, "only refresh_token grants here"))
            if mode == "500":
                return self.send_json(500, error("temporarily_unavailable", None, "AADSTS90033: a transient error"))
            if mode == "garbage":
                data = b"<html><body>502 Bad Gateway \x00\xff</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            if mode == "truncated":
                data = json.dumps({"token_type": "Bearer", "access_token": "at-truncated-" + secrets.token_hex(8),
                                   "expires_in": 3600}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            if mode == "hang":
                time.sleep(float(behaviour.get("hang", 30)))
                self.close_connection = True
                return
            if mode == "missing_fields":
                return self.send_json(200, {"token_type": "Bearer", "expires_in": 3600, "scope": form.get("scope", "")})
            if mode in ("invalid_grant", "interaction_required"):
                return self.send_json(400, error(mode, "basic_action", "AADSTS50076: the user must sign in again"))
            status, body = a.redeem(form, behaviour, form.get("resource") if v1 else None)
            return self.send_json(status, body)
        self.send_json(404, {"error": "not_found"})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port)")
    parser.add_argument("--family-client", action="append", default=[], help="a FOCI family client id (repeatable)")
    parser.add_argument("--tenant", default="72f988bf-86f1-41af-91ab-2d7cd011db47", help="the users' home tenant id")
    parser.add_argument("--exit-on-stdin-eof", action="store_true", help="exit when stdin closes (the parent is gone)")
    args = parser.parse_args()

    if args.exit_on_stdin_eof:
        def watch():
            while sys.stdin.buffer.read(4096):
                pass
            os._exit(0)

        threading.Thread(target=watch, daemon=True).start()

    Handler.authority = Authority(args.family_client, args.tenant)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
