"""The synthetic target of tests/python/test_tune.py: a program whose cost a setting chooses.

It sleeps TUNE_SLEEP_MS milliseconds (default 40) and prints "slept: T", T the milliseconds it
measured the sleep to take; prints "metric: N" with N = TUNE_METRIC when that is set; exits with
status 3 when TUNE_FAIL is set; hangs (sleeps an hour) when TUNE_HANG is set. With TUNE_MARK=FILE
it appends its process id to FILE, so that a test can tell whether (and which) it ran."""

import os
import sys
import time


def main() -> int:
    mark = os.environ.get("TUNE_MARK")
    if mark:
        with open(mark, "a", encoding="utf-8") as file:
            file.write(f"{os.getpid()}\n")
    if os.environ.get("TUNE_FAIL"):
        print("tune_target: failing as asked (TUNE_FAIL)", file=sys.stderr)
        return 3
    if os.environ.get("TUNE_HANG"):
        time.sleep(3600)
    started = time.monotonic()
    time.sleep(float(os.environ.get("TUNE_SLEEP_MS", "40")) / 1000)
    print(f"slept: {(time.monotonic() - started) * 1000:.3f}")
    if "TUNE_METRIC" in os.environ:
        print(f"metric: {os.environ['TUNE_METRIC']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
