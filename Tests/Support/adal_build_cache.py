#!/usr/bin/env python3
"""Builds an ADAL for Python token cache with the real adal package against the fake authority.

  adal_build_cache.py --port PORT --out FILE --token CLIENT,USERNAME,RESOURCE,TENANT [--token ...]

Each --token signs USERNAME in to CLIENT for RESOURCE with adal's
AuthenticationContext.acquire_token_with_username_password at
https://127.0.0.1:PORT/TENANT (TENANT may be "common"), into one adal.TokenCache; the cache's
serialize() output (what Azure CLI kept in ~/.azure/accessTokens.json) goes to FILE.

adal insists on https authorities: authority validation is off (validate_authority=False, an
instance-discovery call to login.microsoftonline.com otherwise) and every https request to
127.0.0.1 is sent as plain http to the fake authority (tests/fake_authority.py) by wrapping
requests.get/post, as msal_interop.py routes msal. Secrets are never printed.
"""

import argparse
import sys

import requests

_get, _post = requests.get, requests.post


def local(url):
    return url.replace("https://127.0.0.1", "http://127.0.0.1", 1)


requests.get = lambda url, *args, **kwargs: _get(local(url), *args, **kwargs)
requests.post = lambda url, *args, **kwargs: _post(local(url), *args, **kwargs)

import adal  # noqa: E402  (after the routing, which adal's modules pick up at call time)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--token", action="append", default=[], help="CLIENT,USERNAME,RESOURCE,TENANT")
    args = parser.parse_args()

    cache = adal.TokenCache()
    for spec in args.token:
        client, username, resource, tenant = spec.split(",")
        context = adal.AuthenticationContext(
            f"https://127.0.0.1:{args.port}/{tenant}", validate_authority=False, cache=cache)
        result = context.acquire_token_with_username_password(resource, username, "not-a-password", client)
        if "accessToken" not in result:
            print("adal returned no access token", file=sys.stderr)
            return 1
    with open(args.out, "w") as out:
        out.write(cache.serialize())
    print(len(cache.read_items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
