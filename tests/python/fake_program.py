"""Stands in for a C mpilens program in CLI tests: replays a results file into --output.

Environment: FAKE_SOURCE (file to replay), FAKE_LOG (append argv as JSON), FAKE_FAIL_AT (exit 1
before writing that line index), FAKE_DELAY (seconds between lines), FAKE_PIDFILE (write the
program's process id there).
"""

import json
import os
import sys
import time

args = sys.argv[1:]
if "FAKE_PIDFILE" in os.environ:
    with open(os.environ["FAKE_PIDFILE"], "w", encoding="utf-8") as pidfile:
        pidfile.write(str(os.getpid()))
with open(os.environ["FAKE_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(args) + "\n")
output = args[args.index("--output") + 1]
lines = open(os.environ["FAKE_SOURCE"], encoding="utf-8").read().splitlines(keepends=True)
fail_at = int(os.environ.get("FAKE_FAIL_AT", "-1"))
delay = float(os.environ.get("FAKE_DELAY", "0"))
resuming = "--resume" in args and os.path.exists(output)
done = len(open(output, encoding="utf-8").readlines()) if resuming else 0
try:
    with open(output, "a" if resuming else "w", encoding="utf-8") as out:
        for index in range(done, len(lines)):
            if index == fail_at:
                print("fake program: simulated failure", file=sys.stderr)
                sys.exit(1)
            out.write(lines[index])
            out.flush()
            time.sleep(delay)
except KeyboardInterrupt:
    sys.exit(130)
