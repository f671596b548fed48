"""Turns one scripts/compare-peers table into one line of Benchmarks/results/history.md.

    python3 scripts/peer_history.py RESULT.md [--commit HASH] [--append HISTORY.md]

The line holds each issue-7 target's ratio (for a target measured at several sizes, the lowest)
and how many targets the run met, so a glance down the history shows a regression without
keeping every run's full table. Without --append the line is printed.
"""

import argparse
import re
import sys

# (column heading, test on a target row's operation and peer measurement), in table order.
COLUMNS = [
    ("silent hit", lambda op, key: key.startswith("py.ats_hit.")),
    ("miss 10k", lambda op, key: key == "py.search_miss.10000"),
    ("accounts 10k", lambda op, key: key == "py.get_accounts_solo.10000"),
    ("sign-out 10k", lambda op, key: key == "py.remove_account.10000"),
    ("open 10k", lambda op, key: "open FileStore" in op),
    ("file write", lambda op, key: key == "ext_file.write.1000" and "msal-file" not in op),
    ("keyring write", lambda op, key: key == "ext_keyring.write.1000"),
    ("file first read", lambda op, key: key == "ext_file.read_after_write.1000" and "msal-file" not in op),
    ("keyring first read", lambda op, key: key == "ext_keyring.read_after_write.1000"),
]

HEADER = (
    "| date (UTC) | commit | load | targets met | "
    + " | ".join(name for name, _ in COLUMNS)
    + " |\n|"
    + "---|" * (4 + len(COLUMNS))
    + "\n"
)


def ratio(cell):
    match = re.match(r"\s*([0-9.e+]+)×", cell)
    return float(match.group(1)) if match else None


def summary(text, commit):
    date = re.search(r"^- date: (\d{4}-\d\d-\d\d \d\d:\d\d)", text, re.M)
    load = re.search(r"^- load average \(1/5/15 min\) before: ([0-9.]+)", text, re.M)
    met, targets = 0, 0
    lowest = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) < 8 or not cells[6].startswith("≥"):
            continue
        targets += 1
        met += cells[6].endswith(": met")
        value = ratio(cells[5])
        for name, matches in COLUMNS:
            if matches(cells[1], cells[2]) and value is not None:
                lowest[name] = min(value, lowest.get(name, value))

    def shown(name):
        if name not in lowest:
            return "—"
        value = lowest[name]
        return ("%.0f×" % value) if value >= 10 else ("%.2g×" % value)

    return "| %s | %s | %s | %d/%d | %s |\n" % (
        date.group(1) if date else "?",
        commit or "—",
        load.group(1) if load else "?",
        met,
        targets,
        " | ".join(shown(name) for name, _ in COLUMNS),
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("result")
    parser.add_argument("--commit", default="")
    parser.add_argument("--append", help="history file to append the line to")
    args = parser.parse_args()
    with open(args.result) as f:
        line = summary(f.read(), args.commit)
    if args.append:
        with open(args.append, "a") as f:
            f.write(line)
    else:
        sys.stdout.write(line)


if __name__ == "__main__":
    main()
