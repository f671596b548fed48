"""Times msal-python 1.39.0 and msal-extensions 1.3.1 on the benchmark workload and prints
them next to this engine's medians (from PeerCompare), as a Markdown table with ratios.

Run through scripts/compare-peers, which builds PeerCompare, writes the workload files and the
engine's JSON, and calls:

    python compare_peers.py --workdir DIR --engine DIR/engine.json --sizes 10,1000,10000 \
        --ext-sizes 10,1000 --out FILE.md [--keyring]

Every msal-python timing is a `time.perf_counter_ns` loop: the median of several repeats of a
loop long enough (about 20 ms, at least one call) to swamp the clock. Calls that need untimed
setup (remove_account after re-adding the account; the first read after another writer) are
timed one by one, and the median is taken.

The open target (a 10,000-token group, tens of milliseconds on each side) is measured in
alternating blocks: five opens by the engine (PeerCompare serve-open, in its own process), then
five deserializes by msal-python in a fresh interpreter, five rounds, so a busy moment of the
shared machine falls on both sides and msal-python's heap is not one that other measurements
fragmented.
"""

import argparse
import base64
import itertools
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "Support"))

import msal  # noqa: E402
import msal_extensions  # noqa: E402
from msal_fake_endpoint import OfflineHttpClient  # noqa: E402

# The workload's constants (Benchmarks/Sources/BenchmarkWorkload/Workload.swift).
CLIENT_A = "11111111-aaaa-4bbb-8ccc-000000000001"
SOLO_CLIENT = "33333333-aaaa-4bbb-8ccc-000000000003"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
HOST = "login.microsoftonline.com"
AUTHORITY = "https://{}/{}".format(HOST, TENANT)
TOKENS_PER_USER = 4
AT = msal.TokenCache.CredentialType.ACCESS_TOKEN
# msal-python files an access token under its sorted target; asking with exactly that target is
# its O(1) key lookup, asking with a subset (what apps usually do) falls back to a scan.
HIT_EXACT = ["Scope0.Read", "openid", "profile"]
HIT_SUBSET = ["Scope0.Read"]
MISS = ["Never.Granted"]


def b64url(text):
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def uid(user):
    return "00000000-0000-0000-0000-{:012d}".format(user)


def probe_user(tokens):
    return max(1, tokens // TOKENS_PER_USER) // 2


def response(user, serial=0):
    """Workload.response(user:serial:): refresh number `serial` for `user`: a new access token, a
    rotated family refresh token and a newly issued id token."""
    claims = {"oid": uid(user), "preferred_username": "user{}@contoso.com".format(user), "sub": "s{}".format(user),
              "tid": TENANT, "iat": 1700000000 + serial}
    info = {"uid": uid(user), "utid": TENANT}
    return {"token_type": "Bearer", "access_token": "at-{}-new-{}".format(user, serial),
            "refresh_token": "rt-{}-new-{}".format(user, serial), "expires_in": 3600, "ext_expires_in": 3600,
            "scope": "Scope0.Read openid profile", "foci": "1",
            "id_token": "e30.{}.".format(b64url(json.dumps(claims))), "client_info": b64url(json.dumps(info))}


def event(user, serial=0):
    # msal files the access token under the event's scope (msal's application code passes the
    # granted scope); with openid/profile it lands under the workload token's key and replaces it.
    return {"client_id": CLIENT_A, "scope": ["Scope0.Read", "openid", "profile"], "token_endpoint": AUTHORITY + "/oauth2/v2.0/token",
            "grant_type": "refresh_token", "response": response(user, serial)}


def query(user):
    return {"client_id": CLIENT_A, "environment": HOST, "realm": TENANT,
            "home_account_id": "{}.{}".format(uid(user), TENANT)}


def loop(fn, repeats):
    """Median ns per call of `fn` over `repeats` timed loops of about 20 ms each."""
    fn()
    start = time.perf_counter_ns()
    fn()
    once = max(1, time.perf_counter_ns() - start)
    iterations = max(1, int(20_000_000 / once))
    per_call = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        for _ in range(iterations):
            fn()
        per_call.append((time.perf_counter_ns() - start) / iterations)
    return statistics.median(per_call)


def call_times(setup, fn, count):
    """ns of each of `count` single calls of `fn`, each after an untimed `setup()`."""
    times = []
    for _ in range(count):
        setup()
        start = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - start)
    return times


def calls(setup, fn, count):
    """Median ns of `count` single calls of `fn`, each after an untimed `setup()`."""
    return statistics.median(call_times(setup, fn, count))


class Helper:
    """A helper process that prints "ready", then answers each line written to it with one line."""

    def __init__(self, argv):
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.ask(None) == "ready"

    def ask(self, line):
        """Writes `line` (None: nothing) and returns the answer, stripped."""
        if line is not None:
            self.process.stdin.write("%s\n" % line)
            self.process.stdin.flush()
        return self.process.stdout.readline().strip()

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def app_for(client_id, cache, http):
    return msal.PublicClientApplication(client_id, authority=AUTHORITY, token_cache=cache, http_client=http,
                                        instance_discovery=False)


DAEMON = "55555555-aaaa-4bbb-8ccc-000000000005"


def app_resource(number):
    return "api://resource-%06d/.default" % number


def write_app_cache(path, tokens):
    """A daemon's cache as msal-python writes it: `tokens` app tokens in one tenant, one per resource."""
    now = int(time.time())
    entries = {}
    for number in range(tokens):
        target = app_resource(number)
        key = "-{}-accesstoken-{}-{}-{}".format(HOST, DAEMON, TENANT, target).lower()
        entries[key] = {
            "credential_type": "AccessToken", "secret": "at-app-%d" % number, "home_account_id": None,
            "environment": HOST, "client_id": DAEMON, "target": target, "realm": TENANT, "token_type": "Bearer",
            "cached_at": str(now), "expires_on": str(now + 3599), "extended_expires_on": str(now + 3599)}
    document = {"AccessToken": entries,
                "AppMetadata": {"appmetadata-{}-{}".format(HOST, DAEMON): {"client_id": DAEMON, "environment": HOST}}}
    with open(path, "w") as f:
        json.dump(document, f, indent=4)


def measure_app_tokens(tool, workdir, tokens, repeats, results):
    """An app token served from the cache of a tenant with `tokens` of them: msal-python's
    `acquire_token_for_client` beside the engine's lookup and acquisition (PeerCompare app-hit)."""
    path = os.path.join(workdir, "app-%d.json" % tokens)
    write_app_cache(path, tokens)
    scope = app_resource(tokens // 2)
    cache = msal.SerializableTokenCache()
    with open(path) as f:
        cache.deserialize(f.read())
    http = OfflineHttpClient()
    app = msal.ConfidentialClientApplication(DAEMON, client_credential="unused", authority=AUTHORITY,
                                             token_cache=cache, http_client=http, instance_discovery=False)
    result = app.acquire_token_for_client([scope])
    assert result.get("token_source") == "cache", result
    results["py.app_hit.%d" % tokens] = loop(lambda: app.acquire_token_for_client([scope]), repeats)
    assert not http.network_calls, http.network_calls
    output = subprocess.run([tool, "app-hit", path, str(tokens), DAEMON, TENANT, scope, str(repeats)],
                            check=True, capture_output=True, text=True).stdout
    for key, value in json.loads(output).items():
        results["engine:" + key] = value["ns"]


def engine_only(tool, arguments):
    """Runs PeerCompare with `arguments`; its figures by key."""
    output = subprocess.run([tool] + arguments, check=True, capture_output=True, text=True).stdout
    return json.loads(output)


def measure_msal(path, tokens, repeats, results):
    with open(path) as f:
        text = f.read()
    user = probe_user(tokens)
    q = query(user)
    slow = 3 if tokens >= 10_000 else repeats

    def fresh():
        cache = msal.SerializableTokenCache()
        cache.deserialize(text)
        return cache

    # In a fresh interpreter (see DESERIALIZE_BLOCK): this one's heap is not the heap of a process
    # that just deserialized a cache.
    results["py.deserialize.%d" % tokens] = statistics.median(deserialize_block(path, 15 if tokens >= 10_000 else repeats))
    cache = fresh()
    results["py.serialize.%d" % tokens] = loop(cache.serialize, slow)

    http = OfflineHttpClient()
    app = app_for(CLIENT_A, cache, http)
    account = app.get_accounts(username="user{}@contoso.com".format(user))[0]

    def search(target):
        return lambda: next(cache.search(AT, target=target, query=q), None)

    assert search(HIT_EXACT)() is not None and search(MISS)() is None
    results["py.search_hit.%d" % tokens] = loop(search(HIT_EXACT), repeats)
    results["py.search_hit_subset.%d" % tokens] = loop(search(HIT_SUBSET), slow)
    results["py.search_miss.%d" % tokens] = loop(search(MISS), slow)

    for name, scopes in (("ats_hit", HIT_EXACT), ("ats_hit_subset", HIT_SUBSET)):
        def silent(scopes=scopes):
            result = app.acquire_token_silent(scopes, account)
            assert result and "access_token" in result, result
        try:
            silent()
        except (ValueError, AssertionError) as error:  # msal refuses reserved scopes here
            print("compare-peers: acquire_token_silent(%s) not measured: %s" % (scopes, error), file=sys.stderr)
            continue
        results["py.%s.%d" % (name, tokens)] = loop(silent, slow if name.endswith("subset") else repeats)
    assert not http.network_calls, http.network_calls

    # msal-python lists every account of the app's cloud for any client (the engine lists those
    # the client has a refresh token for, or signed into: rule 6), so the solo client gets all.
    solo = app_for(SOLO_CLIENT, cache, http)
    results["py.get_accounts_solo_count.%d" % tokens] = len(solo.get_accounts())
    results["py.get_accounts_solo.%d" % tokens] = loop(solo.get_accounts, slow)
    results["py.get_accounts_all.%d" % tokens] = loop(app.get_accounts, slow)

    # remove_account, then (untimed) the sign-in response that brings the account back.
    results["py.remove_account.%d" % tokens] = calls(
        lambda: cache.add(event(user)), lambda: app.remove_account(account), 5 if tokens >= 10_000 else 20)
    # Each write a new refresh (serials from 1), as the engine's are: a write of what is cached
    # already would be no change for the engine.
    serials = itertools.count(1)
    results["py.add.%d" % tokens] = calls(lambda: None, lambda: cache.add(event(user, next(serials))), 5 if tokens >= 10_000 else 50)
    assert not http.network_calls, http.network_calls


# One block of msal-python deserialize timings, in an interpreter of its own: a long-lived one
# that has built and dropped other caches deserializes more slowly, which would flatter the
# engine.
DESERIALIZE_BLOCK = r"""
import json, sys, time
import msal
with open(sys.argv[1]) as f:
    text = f.read()
def once():
    cache = msal.SerializableTokenCache()
    cache.deserialize(text)
once()
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter_ns()
    once()
    times.append(time.perf_counter_ns() - start)
print(json.dumps(times))
"""


def deserialize_block(path, samples):
    """`samples` timings of msal-python deserializing the cache at `path`, in a fresh interpreter."""
    block = subprocess.run([sys.executable, "-c", DESERIALIZE_BLOCK, path, str(samples)], check=True,
                           capture_output=True, text=True)
    return json.loads(block.stdout)


def measure_open_alternating(tool, path, tokens, rounds, per_block, results):
    """The engine's open + free of a file group of `tokens` (PeerCompare serve-open) and msal-python's
    deserialize of the same cache (and the free of what it made), in alternating blocks, so both
    sides see the same moments of the shared machine; each side warm within its block."""
    engine = Helper([tool, "serve-open", str(tokens)])
    try:
        ours, theirs = [], []
        for _ in range(rounds):
            engine.ask("open")  # warm-up
            ours += [int(engine.ask("open")) for _ in range(per_block)]
            theirs += deserialize_block(path, per_block)
    finally:
        engine.close()
    results["py.deserialize.alternating.%d" % tokens] = statistics.median(theirs)
    results["engine:file.open.alternating.%d" % tokens] = statistics.median(ours)


def make_persistence(label, location):
    """msal-extensions' persistence for `label` (ext_file or ext_keyring) at `location`."""
    if label == "ext_file":
        return msal_extensions.FilePersistence(location)
    try:
        import gi  # noqa: F401
    except ImportError:
        # PyGObject (LibsecretPersistence's binding) does not build with pip here; Debian's
        # python3-gi is for the same CPython minor version. Appended, so the venv's own packages
        # still come first.
        sys.path.append("/usr/lib/python3/dist-packages")
    from msal_extensions.persistence import LibsecretPersistence
    return LibsecretPersistence(location, schema_name="stc.compare", attributes={"bench": os.path.basename(location)})


# Another process writing through msal-extensions: for each line read (a serial number), adds the
# workload's refresh event for the probe user, then answers "done".
EXTENSIONS_WRITER = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(sys.argv[1], "..", "Tests", "Support"))
import compare_peers
import msal_extensions
writer = msal_extensions.PersistedTokenCache(compare_peers.make_persistence(sys.argv[2], sys.argv[3]))
user = compare_peers.probe_user(int(sys.argv[4]))
print("ready", flush=True)
for line in sys.stdin:
    writer.add(compare_peers.event(user, int(line)))
    print("done", flush=True)
"""


class ExtensionsWriter(Helper):
    """EXTENSIONS_WRITER in a process of its own."""

    def __init__(self, label, location, tokens):
        super().__init__([sys.executable, "-c", EXTENSIONS_WRITER, HERE, label, location, str(tokens)])

    def write(self, serial):
        assert self.ask(serial) == "done"


class EngineReadAfterWrite(Helper):
    """PeerCompare serve-read-after-write: the engine's first lookup after another process
    (PeerCompare serve-writer) wrote, in blocks, so they can alternate with msal-extensions' own."""

    def __init__(self, tool, store, tokens):
        super().__init__([tool, "serve-read-after-write", store, str(tokens)])

    def block(self, count):
        return [int(value) for value in self.ask(count).split()]


def measure_extensions(label, path, tokens, workdir, results, writes, reads, engines=None, rounds=5):
    """PersistedTokenCache over a persistence: a hit (with its freshness check), one write, and the
    first read after another process (EXTENSIONS_WRITER) wrote.

    The read follows the other process's write at once, as the engine's does (serve-read-after-
    write): an idle pause before the write would measure this shared machine's caches going cold
    on both sides, not the read. msal-extensions notices a write by comparing the
    file's mtime with the time of its last read; on kernels with fine-grained timestamps (6.13
    and later, as here) it notices every write, and each miss is counted and reported.

    With `engines` ({result label: EngineReadAfterWrite}), the reads alternate in `rounds` blocks
    with each engine store's, so that every side sees the same moments of the shared machine (one
    side measured in a quiet minute and the other in a busy one moved the ratio by half)."""
    with open(path) as f:
        text = f.read()
    user = probe_user(tokens)
    q = query(user)
    location = os.path.join(workdir, "%s-%d.bin" % (label, tokens))
    persistence = make_persistence(label, location)
    persistence.save(text)
    reader = msal_extensions.PersistedTokenCache(persistence)
    writer = msal_extensions.PersistedTokenCache(persistence)
    hit = lambda: next(reader.search(AT, target=HIT_EXACT, query=q), None)  # noqa: E731
    assert hit() is not None
    results["%s.hit.%d" % (label, tokens)] = loop(hit, 5)
    serials = itertools.count(1)
    results["%s.write.%d" % (label, tokens)] = calls(lambda: None, lambda: writer.add(event(user, next(serials))), writes)
    # The floor the store sets: one save and one load of the whole group, nothing else (for
    # gnome-keyring, a save rewrites its keyring file; msal-extensions saves five times per add).
    results["%s.save.%d" % (label, tokens)] = calls(lambda: None, lambda: persistence.save(text), writes)
    results["%s.load.%d" % (label, tokens)] = calls(lambda: None, persistence.load, writes)

    serial = [0]
    seen = []

    other_process = ExtensionsWriter(label, location, tokens)

    def other_write():
        serial[0] += 1
        other_process.write(serial[0])

    def first_read():
        before = reader._last_sync  # only to tell whether this read reloaded (after the clock stops)
        found = hit()
        seen.append(reader._last_sync != before and found["secret"] == "at-{}-new-{}".format(user, serial[0]))

    try:
        if not engines:
            results["%s.read_after_write.%d" % (label, tokens)] = calls(other_write, first_read, reads)
        else:
            ours, theirs = {name: [] for name in engines}, []
            for engine in engines.values():
                engine.block(2)  # warm-up
            for _ in range(rounds):
                for name, engine in engines.items():
                    ours[name] += engine.block(max(10, 200 // rounds if label == "ext_file" else 50 // rounds))
                theirs += call_times(other_write, first_read, max(1, reads // rounds))
            results["%s.read_after_write.%d" % (label, tokens)] = statistics.median(theirs)
            for name, times in ours.items():
                results["engine:%s.readAfterOtherWrite.alternating.%d" % (name, tokens)] = statistics.median(times)
    finally:
        other_process.close()
    missed = seen.count(False)
    if missed:
        results["%s.read_after_write_missed.%d" % (label, tokens)] = missed
        print("compare-peers: %s missed %d of %d other-process writes at %d tokens" % (label, missed, len(seen), tokens),
              file=sys.stderr)


# The fleet's web app and its users (Benchmarks/Sources/PeerCompare/FleetCache.swift): each user
# signed in once with an authorization code, at the sizes Entra ID issues tokens.
WEB_APP = "77777777-aaaa-4bbb-8ccc-000000000007"
# msal-python files the access token under the request's scopes, which it decorates with the
# reserved ones; a lookup with exactly that target is its O(1) key lookup.
FLEET_SCOPES = ["Mail.Read", "User.Read", "offline_access", "openid", "profile"]
JWT_HEADER = b64url('{"alg":"RS256","typ":"JWT","kid":"key-1"}')


def noise(count):
    """`count` random base64url characters: real tokens are random, and PostgreSQL would compress
    repeated characters (the engine's rows are sealed, so they never compress)."""
    return base64.urlsafe_b64encode(os.urandom(count)).decode()[:count]


def jwt(claims):
    return JWT_HEADER + "." + b64url(claims) + "." + noise(342)


def fleet_home(number):
    return "00000000-0000-0000-4444-%012d.%s" % (number, TENANT)


def fleet_response(number, serial=0):
    """FleetWorkload.response(_:serial:): user `number`'s sign-in (serial 0) or refresh `serial`, the
    same sizes (the random characters differ)."""
    user = "00000000-0000-0000-4444-%012d" % number
    id_token = jwt(
        '{"aud":"%s","iss":"https://login.microsoftonline.com/%s/v2.0","iat":%d,"oid":"%s","sub":"s%d","tid":"%s",'
        '"preferred_username":"user%d@contoso.com","name":"User %d","aio":"%s"}'
        % (WEB_APP, TENANT, 1700000000 + serial, user, number, TENANT, number, number, noise(300)))
    return {"token_type": "Bearer", "scope": "User.Read Mail.Read openid profile", "expires_in": 86399,
            "ext_expires_in": 86399,
            "access_token": jwt('{"aud":"https://graph.microsoft.com","oid":"%s","n":%d,"s":%d,"x":"%s"}'
                                % (user, number, serial, noise(700))),
            "refresh_token": "rt-%d-%d-%s" % (number, serial, noise(1100)), "id_token": id_token,
            "client_info": b64url('{"uid":"%s","utid":"%s"}' % (user, TENANT))}


def fleet_event(number, serial=0):
    return {"client_id": WEB_APP, "scope": FLEET_SCOPES, "token_endpoint": AUTHORITY + "/oauth2/v2.0/token",
            "grant_type": "authorization_code", "response": fleet_response(number, serial)}


def settle(url, admin, tables):
    """Vacuums and analyses `tables`, then, with `admin` (a superuser's URL), has the server
    checkpoint: each side is measured on tables as autovacuum would leave them, and not while the
    server writes out what a fill before it left in memory."""
    import psycopg
    with psycopg.connect(url, autocommit=True) as setup:
        for table in tables:
            setup.execute("VACUUM ANALYZE %s" % table)
    if admin:
        with psycopg.connect(admin, autocommit=True) as superuser:
            superuser.execute("CHECKPOINT")


def measure_fleet_python(url, admin, users, repeats, results):
    """The msal-python pattern of a Python web app: a SerializableTokenCache per user, kept as a
    bytea row keyed by its home account id, through psycopg (which prepares a statement after
    its fifth run). A lookup SELECTs the user's row, deserializes it and searches the access
    token; a write SELECTs it FOR UPDATE (so that two instances' writes do not lose each other,
    as the engine's never do), deserializes, adds the token response, serializes, UPDATEs and
    commits."""
    import psycopg
    table = "msal_blobs_%d" % users
    with psycopg.connect(url, autocommit=True) as setup:
        setup.execute("CREATE TABLE IF NOT EXISTS %s (home_account_id text PRIMARY KEY, cache bytea NOT NULL)" % table)
        if setup.execute("SELECT count(*) FROM %s" % table).fetchone()[0] != users:
            start = time.perf_counter_ns()
            setup.execute("TRUNCATE %s" % table)
            with setup.cursor().copy("COPY %s (home_account_id, cache) FROM STDIN" % table) as copy:
                for number in range(users):
                    cache = msal.SerializableTokenCache()
                    cache.add(fleet_event(number))
                    copy.write_row((fleet_home(number), cache.serialize().encode()))
            results["py.fleet_fill.%d" % users] = time.perf_counter_ns() - start
    settle(url, admin, [table])

    def users_at_random(count):
        return itertools.cycle([random.randrange(users) for _ in range(count)])

    with psycopg.connect(url, autocommit=True) as reader:
        select = "SELECT cache FROM %s WHERE home_account_id = %%s" % table
        picks = users_at_random(10_000)

        def lookup():
            home = fleet_home(next(picks))
            cache = msal.SerializableTokenCache()
            cache.deserialize(reader.execute(select, (home,)).fetchone()[0])
            query = {"client_id": WEB_APP, "environment": HOST, "realm": TENANT, "home_account_id": home}
            assert next(cache.search(AT, target=FLEET_SCOPES, query=query), None) is not None

        results["py.fleet_lookup.%d" % users] = loop(lookup, repeats)

    with psycopg.connect(url) as writer:
        lock = "SELECT cache FROM %s WHERE home_account_id = %%s FOR UPDATE" % table
        update = "UPDATE %s SET cache = %%s WHERE home_account_id = %%s" % table
        picks = users_at_random(1_000)
        serials = itertools.count(1)
        pending = []

        def next_write():
            pending[:] = [next(picks), next(serials)]
            pending.append(fleet_event(pending[0], pending[1]))

        def write():
            home = fleet_home(pending[0])
            with writer.cursor() as cursor:
                cache = msal.SerializableTokenCache()
                cache.deserialize(cursor.execute(lock, (home,)).fetchone()[0])
                cache.add(pending[2])
                cursor.execute(update, (cache.serialize().encode(), home))
            writer.commit()

        results["py.fleet_write.%d" % users] = calls(next_write, write, 200)

    # What any durable write costs on this server and disk, whoever makes it: a one-row UPDATE,
    # committed (its WAL flushed) before it returns. A write's ratio cannot pass the peer's write
    # over this.
    with psycopg.connect(url, autocommit=True) as floor:
        floor.execute("CREATE TABLE IF NOT EXISTS stc_compare_commit (id int PRIMARY KEY, n bigint NOT NULL)")
        floor.execute("INSERT INTO stc_compare_commit VALUES (1, 0) ON CONFLICT DO NOTHING")
        update = "UPDATE stc_compare_commit SET n = n + 1 WHERE id = 1"
        results["py.fleet_commit.%d" % users] = calls(lambda: None, lambda: floor.execute(update), 200)


def measure_fleet(tool, url, admin, key, users, repeats, results):
    """One size of the fleet rows: msal-python's per-user blobs, then the engine's group in the
    same database (PeerCompare fleet-fill and fleet), one right after the other, each side's
    tables settled (`settle`) after its fill."""
    measure_fleet_python(url, admin, users, repeats, results)
    fleet = engine_only(tool, ["fleet-fill", key, str(users)])
    settle(url, admin, ["stc_groups", "stc_parts", "stc_rows"])
    fleet.update(engine_only(tool, ["fleet", key, str(users), str(repeats)]))
    return fleet


def fleet_table(fleet, results, sizes, bounded):
    """The "Fleet cache in PostgreSQL" table's lines."""
    def ns(key):
        return fleet.get(key, {}).get("ns") if fleet.get(key, {}).get("samples") else None

    def verdict(ratio, target, at_least=True):
        if ratio is None:
            return "not measured"
        met = ratio >= target if at_least else ratio <= target
        return "met" if met else "MISSED (%s)" % times(ratio)

    lines = ["", "## Fleet cache in PostgreSQL (msal-python: a SerializableTokenCache per user in a bytea row, "
             "through psycopg; engine: a group opened with a 64 MB first level)", "",
             "| measurement [users in the database] | peer or floor | peer median | engine median | ratio | target |",
             "|---|---|---|---|---|---|"]
    for n in sizes:
        def row(what, peer_key, peer, engine_key, target=None, within=False):
            ours = ns(engine_key)
            if within:  # ours / the floor, at most the target
                ratio = ours / peer if peer and ours else None
                shown = "%.2g× the floor" % ratio if ratio else "n/a"
                goal = "≤%g×: %s" % (target, verdict(ratio, target, at_least=False))
            else:
                ratio = peer / ours if peer and ours else None
                shown = times(ratio) if ratio else "n/a"
                goal = "≥%g×: %s" % (target, verdict(ratio, target)) if target else ""
            lines.append("| %s [%d] | %s | %s | %s | %s | %s |" % (what, n, peer_key, fmt_ns(peer), fmt_ns(ours), shown, goal))

        lookup, write = results.get("py.fleet_lookup.%d" % n), results.get("py.fleet_write.%d" % n)
        row("L1 hit: lookup (SELECT the row, deserialize, search) vs accessToken for a user in memory",
            "py.fleet_lookup.%d" % n, lookup, "postgres.l1Hit.%d" % n, 1000)
        row("L2 cold read: accessToken for a user not in memory (its partition loaded) vs a bare prepared "
            "SELECT by primary key (postgres-nio, same table), alternating call by call",
            "postgres.primaryKeySelect.%d" % n, ns("postgres.primaryKeySelect.%d" % n), "postgres.coldRead.%d" % n, 1.5,
            within=True)
        awake = ns("postgres.primaryKeySelectBackToBack.%d" % n)
        lines.append("| the same SELECT run back to back [%d]: not the floor, as the database's process and the "
                     "client's event loop never go idle between calls, which no cold read can do | "
                     "postgres.primaryKeySelectBackToBack.%d | %s | | %s | |" % (
                         n, n, fmt_ns(awake) if awake else "n/a",
                         "%.2g× this" % (ns("postgres.coldRead.%d" % n) / awake)
                         if awake and ns("postgres.coldRead.%d" % n) else ""))
        row("L2 cold read vs msal-python's lookup", "py.fleet_lookup.%d" % n, lookup, "postgres.coldRead.%d" % n)
        row("L1 hit, the same user again (the cache's last answer) vs msal-python's lookup", "py.fleet_lookup.%d" % n,
            lookup, "postgres.l1HitSameUser.%d" % n)
        row("write: SELECT FOR UPDATE, deserialize, add, serialize, UPDATE, commit vs store (a user in memory)",
            "py.fleet_write.%d" % n, write, "postgres.write.%d" % n, 5)
        commit = results.get("py.fleet_commit.%d" % n)
        lines.append("| the floor of any durable write here: a one-row UPDATE committed (psycopg, autocommit) [%d]; "
                     "no write's ratio can pass %s | py.fleet_commit.%d | %s | | | |" % (
                         n, "%.2g×" % (write / commit) if write and commit else "n/a", n, fmt_ns(commit)))
        rate = fleet.get("postgres.lookupRate.%d" % n, {})
        lines.append("| lookups per second on this machine [%d]: %s | | | %s | | |" % (
            n, rate.get("note", "n/a"), "%.0f/s" % rate["ns"] if rate.get("samples") else "n/a"))
        fill, py_fill = fleet.get("postgres.fill.%d" % n, {}), results.get("py.fleet_fill.%d" % n)
        lines.append("| filling the database [%d] (psycopg COPY; engine: %s) | py.fleet_fill.%d | %s | %s | | |" % (
            n, fill.get("note", "n/a"), n, fmt_ns(py_fill) if py_fill else "already there", fmt_ns(ns("postgres.fill.%d" % n))))
    if bounded:
        n, limit = bounded
        growth = ns("postgres.bounded.rssPeakGrowth.%d" % n)
        met = "met" if growth is not None and growth <= limit * 2**20 else "MISSED"
        fill = fleet.get("postgres.fill.%d" % n, {})
        lines.append("| resident memory above the baseline, at most, after looking up each of %d users once, limit %d MB "
                     "[%d] | | | %.1f MB | | ≤ limit: %s |" % (n, limit, n, (growth or 0) / 2**20, met))
        lines.append("| what the group counted, at most [%d] | | | %.1f MB | | |" % (
            n, (ns("postgres.bounded.peakUse.%d" % n) or 0) / 2**20))
        lines.append("| one lookup of a user not in memory, drops included (mean) [%d] | | | %s | | |" % (
            n, fmt_ns(ns("postgres.bounded.lookup.%d" % n))))
        tail = [(label, ns("postgres.bounded.lookup.%s.%d" % (key, n)))
                for key, label in (("p50", "p50"), ("p99", "p99"), ("p999", "p99.9"), ("max", "slowest"))]
        if all(value is not None for _, value in tail):
            lines.append("| the same lookups once the first level is full (the second half): %s [%d] | | | %s | | |" % (
                ", ".join(label for label, _ in tail), n, " / ".join(fmt_ns(value) for _, value in tail)))
        lines.append("| filling the database [%d] (%s) | | | %s | | |" % (
            n, fill.get("note", "n/a"), fmt_ns(ns("postgres.fill.%d" % n))))
    return lines + [""]


def times(ratio):
    """A ratio as the tables show it: whole above 10 (1062×, not 1.1e+03×), two digits below."""
    return "%.0f×" % ratio if ratio >= 10 else "%.2g×" % ratio


def fmt_ns(ns):
    if ns is None:
        return "n/a"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return "%.3g %s" % (ns / scale, unit)
    return "%.3g ns" % ns


def machine():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%d CPUs (nproc), %s, %s, Python %s" % (os.cpu_count(), model, platform.platform(), platform.python_version())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--engine", required=True, help="PeerCompare run's JSON")
    parser.add_argument("--sizes", default="10,1000,10000")
    parser.add_argument("--ext-sizes", default="10,1000")
    parser.add_argument("--app-sizes", default="10,10000,200000", help="app tokens in one tenant")
    parser.add_argument("--obo-users", default="10,100000", help="callers with an OBO token in a web API's cache")
    parser.add_argument("--sign-in-users", default="10,100000",
                        help="users signed into a web app's memory group before its sign-ins are timed")
    parser.add_argument("--bounded", default="", help="ASSERTIONS:LIMIT_MB: PeerCompare bounded-obo (slow; off when empty)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--keyring", action="store_true", help="also LibsecretPersistence (needs a session bus)")
    parser.add_argument("--tool", required=True, help="the PeerCompare binary (for the alternating open)")
    parser.add_argument("--open-rounds", type=int, default=5, help="rounds of the alternating open (5 samples a side each)")
    parser.add_argument("--postgres", default="", help="a PostgreSQL URL: the fleet rows (off when empty)")
    parser.add_argument("--postgres-admin", default="", help="a superuser's URL to the same server, for checkpoints")
    parser.add_argument("--fleet-users", default="10000,100000", help="users in the database for the fleet rows")
    parser.add_argument("--fleet-bounded", default="1000000:64",
                        help="USERS:LIMIT_MB: PeerCompare fleet-bounded (slow; off when empty)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    ext_sizes = [int(s) for s in args.ext_sizes.split(",") if s]
    app_sizes = [int(s) for s in args.app_sizes.split(",") if s]
    load_before = os.getloadavg()

    results = {}
    obo_users = [int(s) for s in args.obo_users.split(",") if s]
    server = {}
    for users in obo_users:
        server.update(engine_only(args.tool, ["obo-hit", str(users), str(args.repeats)]))
    sign_in_users = [int(s) for s in args.sign_in_users.split(",") if s]
    for users in sign_in_users:
        server.update(engine_only(args.tool, ["sign-in", str(users), str(args.repeats)]))
    bounded = [int(s) for s in args.bounded.split(":")] if args.bounded else None
    if bounded:
        server.update(engine_only(args.tool, ["bounded-obo", str(bounded[0]), str(bounded[1])]))
    for tokens in app_sizes:
        measure_app_tokens(args.tool, args.workdir, tokens, args.repeats, results)
    for tokens in sizes:
        measure_msal(os.path.join(args.workdir, "cache-%d.json" % tokens), tokens, args.repeats, results)
    for tokens in sizes:
        if tokens >= 10_000:
            measure_open_alternating(args.tool, os.path.join(args.workdir, "cache-%d.json" % tokens), tokens,
                                     args.open_rounds, 5, results)
    for tokens in ext_sizes:
        path = os.path.join(args.workdir, "cache-%d.json" % tokens)
        # The read-after-write targets (at 1,000 tokens) alternate with the engine's: the sealed
        # file store, and the msal-file store (the same plaintext file msal-extensions shares).
        engines = {"ext_file": EngineReadAfterWrite(args.tool, "File", tokens),
                   "msalfile": EngineReadAfterWrite(args.tool, "MSALFile", tokens)} if tokens == 1000 else {}
        try:
            measure_extensions("ext_file", path, tokens, args.workdir, results, writes=10 if tokens >= 1000 else 20,
                               reads=40, engines=engines)
        finally:
            for engine in engines.values():
                engine.close()
        if args.keyring:
            engines = {"ext_keyring": EngineReadAfterWrite(args.tool, "Keyring", tokens),
                       "msalkeyring": EngineReadAfterWrite(args.tool, "MSALKeyring", tokens)} if tokens == 1000 else {}
            try:
                measure_extensions("ext_keyring", path, tokens, args.workdir, results,
                                   writes=5 if tokens >= 1000 else 10, reads=20, engines=engines)
            finally:
                for engine in engines.values():
                    engine.close()

    fleet = {}
    fleet_users = [int(s) for s in args.fleet_users.split(",") if s] if args.postgres else []
    fleet_bounded = [int(s) for s in args.fleet_bounded.split(":")] if args.postgres and args.fleet_bounded else None
    # Every process of the engine opens the fleet's groups with this key.
    fleet_key = os.path.join(args.workdir, "fleet.key")
    for users in fleet_users:
        fleet.update(measure_fleet(args.tool, args.postgres, args.postgres_admin, fleet_key, users, args.repeats, results))
    if fleet_bounded:
        users = fleet_bounded[0]
        # A size the fleet table measured is filled already, and its fill timed: filling it again
        # would only record that it was there.
        if users not in fleet_users:
            fleet.update(engine_only(args.tool, ["fleet-fill", fleet_key, str(users)]))
        fleet.update(engine_only(args.tool, ["fleet-bounded", fleet_key, str(users), str(fleet_bounded[1])]))

    with open(args.engine) as f:
        engine = {k: v["ns"] for k, v in json.load(f).items() if v.get("samples")}
    engine.update({k[len("engine:"):]: v for k, v in results.items() if k.startswith("engine:")})
    with open(args.engine) as f:
        unavailable = {k.split(".")[0]: v.get("note") for k, v in json.load(f).items() if k.endswith(".unavailable")}

    rows = []

    def row(what, peer_key, engine_key, target=None):
        peer, ours = results.get(peer_key), engine.get(engine_key)
        ratio = times(peer / ours) if peer and ours else "n/a"
        if ours is None and engine_key.split(".")[0] in unavailable:
            ratio = "n/a (%s store: %s)" % (engine_key.split(".")[0], unavailable[engine_key.split(".")[0]])
        verdict = ""
        if target and peer and ours:
            verdict = "met" if peer / ours >= target else "MISSED (%s of %g×)" % (times(peer / ours), target)
        elif target:
            verdict = "not measured"
        rows.append("| %s | %s | %s | %s | %s | %s |" % (what, peer_key, fmt_ns(peer), fmt_ns(ours), ratio,
                                                         ("≥%g×: %s" % (target, verdict)) if target else ""))

    for n in sizes:
        big = n >= 10_000
        row("AT hit: acquire_token_silent (exact target) vs acquireTokenSilently [%d]" % n,
            "py.ats_hit.%d" % n, "memory.silentHit.%d" % n, 20)
        row("AT hit: acquire_token_silent (exact target) vs accessToken(for:account:authority:) [%d]" % n,
            "py.ats_hit.%d" % n, "memory.hit.%d" % n)
        row("AT hit: acquire_token_silent (scope subset) vs accessToken [%d]" % n, "py.ats_hit_subset.%d" % n,
            "memory.hit.%d" % n)
        row("AT hit: TokenCache.search (exact target) vs accessToken [%d]" % n, "py.search_hit.%d" % n,
            "memory.hit.%d" % n)
        row("AT hit: TokenCache.search (scope subset) vs accessToken [%d]" % n, "py.search_hit_subset.%d" % n,
            "memory.hit.%d" % n)
        row("AT miss: search vs accessToken [%d]" % n, "py.search_miss.%d" % n, "memory.miss.%d" % n,
            1000 if big else None)
        row("accounts, client signed into 1 account: get_accounts (returns all %s) vs accounts() (returns 1) [%d]" % (
            results.get("py.get_accounts_solo_count.%d" % n), n), "py.get_accounts_solo.%d" % n,
            "memory.accountsSolo.%d" % n, 1000 if big else None)
        row("accounts, client A (both return every user) [%d]" % n, "py.get_accounts_all.%d" % n,
            "memory.accountsAll.%d" % n)
        row("sign-out: remove_account vs signOut [%d]" % n, "py.remove_account.%d" % n, "memory.signOut.%d" % n,
            1000 if big else None)
        row("ingest one response: TokenCache.add vs store (memory) [%d]" % n, "py.add.%d" % n, "memory.write.%d" % n)
        row("serialize vs exportMSAL [%d]" % n, "py.serialize.%d" % n, "memory.serialize.%d" % n)
        # No target: issue 7's is opening a group (decrypting everything, the next row). An import
        # parses MSAL JSON text, which msal-python hands to CPython's C json module.
        row("deserialize (fresh interpreter) vs importMSAL (memory) [%d]" % n, "py.deserialize.%d" % n,
            "memory.deserialize.%d" % n)
        if big:
            row("deserialize (plaintext, fresh interpreter) vs open FileStore group, alternating blocks (%d a side) [%d]"
                % (args.open_rounds * 5, n), "py.deserialize.alternating.%d" % n, "file.open.alternating.%d" % n, 1)
        row("deserialize (plaintext, fresh interpreter) vs open FileStore group, each in its own run [%d]" % n,
            "py.deserialize.%d" % n, "file.open.%d" % n)
    for n in app_sizes:
        row("app token hit: acquire_token_for_client (from the cache) vs ConfidentialClient.acquireAppToken "
            "[%d in the tenant]" % n, "py.app_hit.%d" % n, "memory.appAcquireHit.%d" % n, 100)
        row("app token hit: acquire_token_for_client (from the cache) vs appToken(for:authority:) "
            "[%d in the tenant]" % n, "py.app_hit.%d" % n, "memory.appHit.%d" % n)
    for n in ext_sizes:
        at1k = n == 1000
        for label, store, write_target in (("ext_file", "file", 50), ("ext_keyring", "keyring", 5)):
            if label == "ext_keyring" and not args.keyring:
                continue
            row("%s hit (with freshness check) [%d]" % (label, n), "%s.hit.%d" % (label, n), "%s.freshHit.%d" % (store, n))
            row("%s one durable write [%d]" % (label, n), "%s.write.%d" % (label, n), "%s.write.%d" % (store, n),
                write_target if at1k else None)
            if at1k:
                row("%s first read right after another process's write, alternating blocks [%d]" % (label, n),
                    "%s.read_after_write.%d" % (label, n), "%s.readAfterOtherWrite.alternating.%d" % (label, n), 100)
            else:
                # The engine's figure here is PeerCompare run's: the other writer is a second view
                # of the group in the same process.
                row("%s first read right after another writer's write (engine: a view in-process) [%d]" % (label, n),
                    "%s.read_after_write.%d" % (label, n), "%s.readAfterOtherWrite.%d" % (store, n))
            row("%s floor: one save of the whole group (persistence.save) vs one durable write [%d]" % (label, n),
                "%s.save.%d" % (label, n), "%s.write.%d" % (store, n))
            row("%s floor: one load of the whole group (persistence.load) vs first read after another write [%d]" % (
                label, n), "%s.load.%d" % (label, n), "%s.readAfterOtherWrite.%d" % (store, n))
        # The msal-file store keeps the very file PersistedTokenCache(FilePersistence) shares, so
        # its figures sit beside ext_file's (issue 19's targets, at 1,000 tokens).
        row("msal-file hit (with freshness check) vs ext_file hit [%d]" % n, "ext_file.hit.%d" % n,
            "msalfile.freshHit.%d" % n, 100 if at1k else None)
        row("msal-file one durable write vs ext_file write [%d]" % n, "ext_file.write.%d" % n, "msalfile.write.%d" % n,
            1 if at1k else None)
        if at1k:
            row("msal-file first read right after another process's write vs ext_file's, alternating blocks [%d]" % n,
                "ext_file.read_after_write.%d" % n, "msalfile.readAfterOtherWrite.alternating.%d" % n, 10)
        # The msal-keyring store keeps the item PersistedTokenCache(LibsecretPersistence) shares
        # (azure-identity's), beside ext_keyring's figures, with the file kind's targets.
        if args.keyring:
            row("msal-keyring hit (with freshness check) vs ext_keyring hit [%d]" % n, "ext_keyring.hit.%d" % n,
                "msalkeyring.freshHit.%d" % n, 100 if at1k else None)
            row("msal-keyring one durable write vs ext_keyring write [%d]" % n, "ext_keyring.write.%d" % n,
                "msalkeyring.write.%d" % n, 1 if at1k else None)
            if at1k:
                # No target: after another process's write, both sides fetch the whole item from
                # the Secret Service (the ext_keyring load row), which takes most of either figure.
                row("msal-keyring first read right after another process's write vs ext_keyring's, alternating blocks [%d]"
                    % n, "ext_keyring.read_after_write.%d" % n, "msalkeyring.readAfterOtherWrite.alternating.%d" % n)

    load_after = os.getloadavg()
    header = [
        "# Peer comparison: SecureTokenCache vs msal-python %s / msal-extensions %s" % (
            msal.__version__, getattr(msal_extensions, "__version__", "?")),
        "",
        "- date: %s" % time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "- machine: %s" % machine(),
        "- load average (1/5/15 min) before: %.2f %.2f %.2f, after: %.2f %.2f %.2f (shared machine; "
        "other builds ran in parallel)" % (load_before + load_after),
        "- medians; engine timed by Benchmarks/Sources/PeerCompare (release build), peers by "
        "time.perf_counter_ns loops; ratio = peer / engine",
        "",
        "| operation [cached access tokens] | peer measurement | peer median | engine median | ratio | target (issue 7, msal-file: issue 19, app tokens: issue 21) |",
        "|---|---|---|---|---|---|",
    ]
    missed = {k: v for k, v in results.items() if "_missed." in k}
    footer = [""]
    if server:
        # msal-python's acquire_token_on_behalf_of never reads its cache (every call is a
        # request), so these have no peer figure: they show that our time is flat in the number
        # of callers, and that a bounded cache stays within its limit.
        footer += ["", "## Server cache (engine only: msal-python's on-behalf-of never reads its cache)", "",
                   "| measurement | key | value |", "|---|---|---|"]
        for users in obo_users:
            for label, key in (("OBO hit: onBehalfOfToken (assertion parsed once per request)", "memory.oboHit"),
                               ("OBO hit: ConfidentialClient.acquireOnBehalfOfToken", "memory.oboAcquireHit"),
                               ("OBO hit: acquireOnBehalfOfToken, parsing and hashing the bearer token in each call",
                                "memory.oboAcquireHitParsing")):
                value = server.get("%s.%d" % (key, users))
                footer.append("| %s [%d callers] | %s.%d | %s |" % (label, users, key, users, fmt_ns(value["ns"]) if value else "n/a"))
        # msal-python keeps no sign-in state: a sign-in's cost, flat in the number of users who
        # signed in before, is the engine's own figure.
        for users in sign_in_users:
            for label, key in (("sign-in of a user new to the web app: store(_:for:signIn: true)", "memory.signInNew"),
                               ("sign-in again of a user signed in before", "memory.signInAgain")):
                value = server.get("%s.%d" % (key, users))
                footer.append("| %s [%d users signed in] | %s.%d | %s |" % (label, users, key, users,
                                                                          fmt_ns(value["ns"]) if value else "n/a"))
        if bounded:
            n, limit = bounded
            growth = server.get("bounded.rssPeakGrowth.%d" % n, {}).get("ns")
            use = server.get("bounded.peakUse.%d" % n, {}).get("ns")
            kept = server.get("bounded.keptPartitions.%d" % n, {}).get("ns")
            store = server.get("bounded.store.%d" % n, {}).get("ns")
            verdict = "met" if growth is not None and growth <= limit * 2**20 else "MISSED"
            footer.append("| resident memory above the baseline, at most, after %d distinct OBO assertions, limit %d MB "
                          "(≤ limit: %s) | bounded.rssPeakGrowth.%d | %.1f MB |" % (n, limit, verdict, n, (growth or 0) / 2**20))
            footer.append("| what the group counted, at most | bounded.peakUse.%d | %.1f MB |" % (n, (use or 0) / 2**20))
            footer.append("| OBO partitions left at the end | bounded.keptPartitions.%d | %d |" % (n, kept or 0))
            footer.append("| one store, evictions included | bounded.store.%d | %s |" % (n, fmt_ns(store)))
        footer.append("")
    if args.postgres:
        footer += fleet_table(fleet, results, fleet_users, fleet_bounded)
    for key, count in sorted(missed.items()):
        footer.append("- %s: msal-extensions did not see the other writer's data on %d first reads" % (key, count))
    for store, note in sorted(unavailable.items()):
        footer.append("- engine %s store: %s" % (store, note))
    text = "\n".join(header + rows + footer) + "\n"
    print(text)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
