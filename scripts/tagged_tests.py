"""Prints a `swift test --skip` pattern for each suite and test carrying any of the given tags.

    python3 scripts/tagged_tests.py keyring multiProcess slow [-- SWIFT-BUILD-OPTIONS...]

The tags come from the built test bundle, through the event stream of `swift test list` (where
tags are an experimental field, hence SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED), so the tags
in the test sources stay the one place that says what `scripts/test --fast` leaves out. A suite's
pattern covers every test in it. The build options after `--` name the build to list (a sanitizer's,
in a scratch folder of its own), so that listing never waits on another build folder's lock. Exits 1 when no test carries a tag, so a toolchain that stops
reporting them fails `--fast` instead of quietly running everything. `swift test --skip tag:NAME`
(Swift Testing's ST-0025) replaces this script once the toolchain has it.
"""

import json
import os
import re
import subprocess
import sys
import tempfile


def main():
    arguments = sys.argv[1:]
    options = arguments[arguments.index("--") + 1:] if "--" in arguments else []
    tags = arguments[:arguments.index("--")] if "--" in arguments else arguments
    wanted = {"." + name for name in tags}
    with tempfile.TemporaryDirectory() as folder:
        stream = os.path.join(folder, "events.jsonl")
        environment = dict(os.environ, SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED="1")
        subprocess.run(
            ["swift", "test", "--skip-build", *options, "list", "--experimental-event-stream-output", stream],
            env=environment, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        patterns = []
        with open(stream) as f:
            for line in f:
                record = json.loads(line)
                test = record.get("payload", {})
                if record.get("kind") != "test" or not wanted & set(test.get("_tags", [])):
                    continue
                test_id = test["id"]
                if test.get("kind") == "function":
                    # A function's ID ends in its source location, which --skip does not see.
                    test_id = test_id.rsplit("/", 1)[0]
                patterns.append(re.escape(test_id) + "(/|$)")
    if not patterns:
        sys.exit("tagged_tests: no test is tagged %s (does swift test list still report tags?)" % " or ".join(sorted(wanted)))
    print("\n".join(sorted(patterns)))


if __name__ == "__main__":
    main()
