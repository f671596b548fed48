"""The scaling curves: this engine beside msal-python 1.39.0 from 10 to 1,000,000 access tokens.

Run through `scripts/compare-peers --plot`, which builds PeerCompare and cachetool and calls:

    python scale_peers.py --tool PeerCompare --cachetool cachetool --sizes 10,100,...,1000000 \
        --workdir DIR --out FILE.md --svg docs/scaling.svg

For each size, the workload (PeerCompare emit) is measured on each side in a process of its own,
so that the resident memory a side reports is the memory of that cache and nothing measured
before it: import (msal-python's deserialize), the silent hit, the miss, the accounts of a
client signed into one account, export (serialize), the open of a file group (beside
deserialize, which is msal-python's open), and the resident memory of the process once the
document is gone. Then whole processes: `cachetool status` on a file group of the cache beside
a Python process that deserializes the document, as a user at a shell sees them.

`--point PATH TOKENS` is msal-python's side of one point (run in a fresh interpreter by this
script); it prints its figures as JSON.
"""

import argparse
import gc
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def repeats_at(tokens):
    """Samples of a whole-cache operation: fewer as the cache grows (the largest imports are
    long). PeerCompare's scale-point takes the same number."""
    return 7 if tokens <= 10_000 else 3 if tokens <= 100_000 else 1


def timed(fn, repeats):
    """Median ns of `repeats` single calls of `fn`; the last call's result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter_ns()
        result = fn()
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times), result


def point(path, tokens):
    """msal-python's side of one point."""
    import compare_peers as peers
    import msal
    from msal_fake_endpoint import OfflineHttpClient

    baseline = resident_bytes()
    with open(path) as f:
        text = f.read()

    def deserialize():
        cache = msal.SerializableTokenCache()
        cache.deserialize(text)
        return cache

    results = {}
    results["import"], cache = timed(deserialize, repeats_at(tokens))
    del text
    gc.collect()
    results["resident"] = resident_bytes()
    results["residentGrowth"] = results["resident"] - baseline
    results["residentPeak"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    http = OfflineHttpClient()
    app = peers.app_for(peers.CLIENT_A, cache, http)
    user = peers.probe_user(tokens)
    account = app.get_accounts(username="user{}@contoso.com".format(user))[0]
    q = peers.query(user)

    def silent():
        result = app.acquire_token_silent(peers.HIT_EXACT, account)
        assert result and "access_token" in result, result

    def miss():
        assert next(cache.search(peers.AT, target=peers.MISS, query=q), None) is None

    solo = peers.app_for(peers.SOLO_CLIENT, cache, http)
    # A scan of the whole cache is long at the largest sizes: fewer loops there.
    scans = 7 if tokens <= 100_000 else 3
    results["silentHit"] = peers.loop(silent, 7)
    results["miss"] = peers.loop(miss, scans)
    results["accountsSolo"] = peers.loop(solo.get_accounts, scans)
    results["serialize"], _ = timed(cache.serialize, repeats_at(tokens))
    assert not http.network_calls, http.network_calls
    return results


DESERIALIZE_PROCESS = "import sys, msal\nmsal.SerializableTokenCache().deserialize(open(sys.argv[1]).read())\n"


def whole_process(argv, samples):
    """Median ns and the largest peak resident memory of `samples` runs of `argv`, each a process."""
    times, peak = [], 0
    for _ in range(samples):
        start = time.perf_counter_ns()
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        times.append(time.perf_counter_ns() - start)
        if status != 0:
            raise SystemExit("scale_peers: %s failed (%d)" % (" ".join(argv), status))
        peak = max(peak, usage.ru_maxrss * 1024)
    return statistics.median(times), peak


def measure(tool, cachetool, sizes, workdir):
    """Every point, both sides: {"engine": {op: {size: value}}, "python": {...}}."""
    figures = {"engine": {}, "python": {}}

    def put(side, op, tokens, value):
        figures[side].setdefault(op, {})[str(tokens)] = value

    for tokens in sizes:
        path = os.path.join(workdir, "cache-%d.json" % tokens)
        if not os.path.exists(path):
            subprocess.run([tool, "emit", str(tokens), path], check=True)
        print("== %d tokens (%.1f MB)" % (tokens, os.path.getsize(path) / 1e6), file=sys.stderr)
        engine = json.loads(subprocess.run([tool, "scale-point", path, str(tokens)], check=True, capture_output=True,
                                           text=True).stdout)
        for key, value in engine.items():
            put("engine", key.split(".")[1], tokens, value["ns"])
        python = json.loads(subprocess.run([sys.executable, __file__, "--point", path, str(tokens)], check=True,
                                           capture_output=True, text=True).stdout)
        for op, value in python.items():
            put("python", op, tokens, value)
        # Whole processes, as at a shell: cachetool status on a file group of the cache, beside a
        # Python process that deserializes the document.
        root = os.path.join(workdir, "group-%d" % tokens)
        os.makedirs(root, exist_ok=True)
        key = os.path.join(root, "group.key")
        with open(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
            f.write(os.urandom(32))
        group = ["--store", "file", "--dir", os.path.join(root, "groups"), "--key-file", key, "--group", "scale"]
        subprocess.run([cachetool, "import", path] + group, check=True, stdout=subprocess.DEVNULL)
        samples = 5 if tokens <= 100_000 else 3
        ns, peak = whole_process([cachetool, "status"] + group, samples)
        put("engine", "statusProcess", tokens, ns)
        put("engine", "statusProcessPeak", tokens, peak)
        ns, peak = whole_process([sys.executable, "-c", DESERIALIZE_PROCESS, path], samples)
        put("python", "statusProcess", tokens, ns)
        put("python", "statusProcessPeak", tokens, peak)
        subprocess.run(["rm", "-rf", root], check=True)
    return figures


# What each curve is, which msal-python figure it stands beside, and the target, if any: a
# minimum ratio (peer / engine) at the sizes named.
CURVES = [
    ("import", "importMSAL (memory) vs deserialize", "time", ("≥", 2, (1_000, 10_000, 100_000))),
    ("open", "open a file group vs deserialize", "time", None),
    ("serialize", "exportMSAL vs serialize", "time", ("≥", 5, (1_000, 10_000, 100_000))),
    ("silentHit", "acquireTokenSilently vs acquire_token_silent (exact target)", "time", None),
    ("miss", "accessToken miss vs search miss", "time", None),
    ("accountsSolo", "accounts() of a client signed into one account vs get_accounts", "time", None),
    ("residentGrowth", "resident memory holding the cache (process, less its baseline)", "bytes",
     ("≤", 0.5, (1_000, 10_000, 100_000))),
    ("statusProcess", "whole process: cachetool status on a file group vs python deserializing the file", "time",
     ("≥", 3, (100_000,))),
    ("statusProcessPeak", "whole process: peak resident memory of the same (cachetool status vs python)", "bytes", None),
]


def fmt(value, unit):
    if value is None:
        return "–"
    if unit == "bytes":
        return "%.1f MB" % (value / 2**20)
    for scale, suffix in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if value >= scale:
            return "%.3g %s" % (value / scale, suffix)
    return "%.3g ns" % value


def tick(value, unit):
    """An axis label for a power of ten: SI for bytes (1 MB = 10^6 bytes), else as `fmt`."""
    if unit != "bytes":
        return fmt(value, unit)
    for scale, suffix in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if value >= scale:
            return "%g %s" % (value / scale, suffix)
    return "%g B" % value


def table(figures, sizes):
    lines = ["| operation [cached access tokens] | msal-python | engine | ratio | target |", "|---|---|---|---|---|"]
    for op, what, unit, target in CURVES:
        for tokens in sizes:
            # msal-python's open of its cache is its deserialize.
            peer = figures["python"].get("import" if op == "open" else op, {}).get(str(tokens))
            ours = figures["engine"].get(op, {}).get(str(tokens))
            if peer is None or ours is None:
                continue
            if unit == "bytes":
                ratio = ours / peer
                shown = "%.2g×" % ratio
            else:
                ratio = peer / ours
                shown = "%.3g×" % ratio if ratio < 100 else "%d×" % round(ratio)
            verdict = ""
            if target and tokens in target[2]:
                sign, goal, _ = target
                met = ratio >= goal if sign == "≥" else ratio <= goal
                verdict = "%s%g×: %s" % (sign, goal, "met" if met else "MISSED")
            lines.append("| %s [%d] | %s | %s | %s | %s |" % (what, tokens, fmt(peer, unit), fmt(ours, unit), shown,
                                                              verdict))
    # Lookups that do not grow with the cache: the largest size's time beside the 1,000-token one.
    if "1000" in figures["engine"].get("silentHit", {}) and len(sizes) > 1 and sizes[-1] > 1_000:
        largest = sizes[-1]
        for op in ("silentHit", "miss", "accountsSolo"):
            small = figures["engine"][op].get("1000")
            large = figures["engine"][op].get(str(largest))
            if small and large:
                lines.append("| engine %s at %d vs at 1,000 (≤ 2× the time) | | %s vs %s | %.2f× | %s |" % (
                    op, largest, fmt(large, "time"), fmt(small, "time"), large / small,
                    "met" if large <= 2 * small else "MISSED"))
    return "\n".join(lines)


def svg(figures, sizes):
    """Small multiples, log-log: one panel per curve, the engine's line beside msal-python's."""
    width, height, columns = 300, 220, 3
    rows = math.ceil(len(CURVES) / columns)
    left, right, top, bottom = 56, 12, 34, 34
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">'
           % (width * columns, height * rows + 30),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="%d" fill="#1f77b4">━ SecureTokenCache</text>' % (height * rows + 20),
           '<text x="160" y="%d" fill="#d62728">━ msal-python 1.39.0</text>' % (height * rows + 20),
           '<text x="330" y="%d" fill="#555">x: cached access tokens; log-log; lower is better</text>'
           % (height * rows + 20)]
    x_low, x_high = math.log10(sizes[0]), math.log10(sizes[-1])
    for index, (op, what, unit, _) in enumerate(CURVES):
        ox, oy = (index % columns) * width, (index // columns) * height
        series = []
        for side, colour in (("engine", "#1f77b4"), ("python", "#d62728")):
            source = "import" if side == "python" and op == "open" else op
            points = [(tokens, figures[side].get(source, {}).get(str(tokens))) for tokens in sizes]
            series.append((colour, [(t, v) for t, v in points if v]))
        values = [v for _, points in series for _, v in points]
        if not values:
            continue
        y_low, y_high = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
        if y_high == y_low:
            y_high += 1
        plot_w, plot_h = width - left - right, height - top - bottom

        def x(tokens):
            return ox + left + (math.log10(tokens) - x_low) / max(x_high - x_low, 1e-9) * plot_w

        def y(value):
            return oy + top + plot_h - (math.log10(value) - y_low) / (y_high - y_low) * plot_h

        title = {"import": "import", "open": "open (file group)", "serialize": "export", "silentHit": "silent hit",
                 "miss": "miss", "accountsSolo": "accounts (one signed in)", "residentGrowth": "resident memory",
                 "statusProcess": "cachetool status (process)",
                 "statusProcessPeak": "peak memory of that process"}[op]
        out.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (ox + left, oy + 18, title))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>'
                   % (ox + left, oy + top, plot_w, plot_h))
        for decade in range(y_low, y_high + 1):
            value = 10 ** decade
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>'
                       % (ox + left, ox + left + plot_w, y(value), y(value)))
            out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (ox + left - 4, y(value) + 4, tick(value, unit)))
        for tokens in sizes:
            label = "%g" % tokens if tokens < 1000 else ("%gk" % (tokens / 1000) if tokens < 1e6 else "%gM" % (tokens / 1e6))
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x(tokens), oy + top + plot_h + 14, label))
        for colour, points in series:
            path = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", x(t), y(v)) for i, (t, v) in enumerate(points))
            out.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"/>' % (path, colour))
            for t, v in points:
                out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (x(t), y(v), colour))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--point":
        print(json.dumps(point(sys.argv[2], int(sys.argv[3]))))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--cachetool", required=True)
    parser.add_argument("--sizes", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--json", required=True)
    parser.add_argument("--svg", required=True)
    parser.add_argument("--machine", default="")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    load = os.getloadavg()
    figures = measure(args.tool, args.cachetool, sizes, args.workdir)
    with open(args.json, "w") as f:
        json.dump(figures, f, indent=1, sort_keys=True)
    with open(args.svg, "w") as f:
        f.write(svg(figures, sizes))
    text = "\n".join([
        "# Scaling: SecureTokenCache vs msal-python 1.39.0, %s to %s access tokens" % (sizes[0], sizes[-1]),
        "",
        "- date: %s; %s" % (started, args.machine),
        "- load average before: %.2f %.2f %.2f, after: %.2f %.2f %.2f" % (load + os.getloadavg()),
        "- each side of each size in a process of its own (resident memory: after the import, the document "
        "dropped, less the process's memory before reading it); medians; ratio = msal-python / engine "
        "(memory: engine / msal-python)",
        "- curves: %s" % args.svg,
        "",
        table(figures, sizes),
        ""])
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
