"""What the checkers of a results file (check_*.py, run by the CLI test scripts) share: reading
the file, collecting the failed checks, and reporting them at the end with the exit status."""
import json
import math
import sys

errors = []


def read(path):
    """The file's records: (meta, points), meta being the first record."""
    records = [json.loads(line) for line in open(path)]
    return records[0], [r for r in records if r["type"] == "point"]


def check(cond, what):
    if not cond:
        errors.append(what)


def number(v):
    """A finite number (a bool is none)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def positive(v):
    return number(v) and v > 0


def powers(lo, hi):
    """The powers of 2 times lo up to hi: lo, 2 lo, 4 lo, ..."""
    out = []
    while lo <= hi:
        out.append(lo)
        lo *= 2
    return out


def finish(prefix="FAIL:"):
    """Prints every failed check after prefix; exits 1 if any failed, else 0."""
    for e in errors:
        print(prefix, e, file=sys.stderr)
    sys.exit(1 if errors else 0)
