#!/usr/bin/env bash
# The whole-run mode on a program that knows nothing of mpilens (docs/monitor.md): preloaded,
# with MPILENS_MONITOR=PREFIX, the library writes PREFIX.jsonl holding the run's exact matrices;
# an existing PREFIX.jsonl is never overwritten (said at the start, the run goes on unmonitored).
# usage: test_monitor_wholerun.sh LIBRARY PROGRAM NP COLL_BACKEND LAUNCHER [ARGS...]
# (COLL_BACKEND: pmpi or ompi-mpit, what this MPI's collectives must come from)
set -u
library=$1 program=$2 np=$3 coll_backend=$4
shift 4
. "$(dirname "$0")/../testlib.sh"

forward_vars "$1" LD_PRELOAD MPILENS_MONITOR
run() { LD_PRELOAD=$library MPILENS_MONITOR=$work/run "$@" "${forward[@]}" -n "$np" "$program"; }

run "$@" >"$work/out" 2>"$work/err" || fail "the program failed: $(tail -3 "$work/err")"
grep -q "communication matrices written to $work/run.jsonl" "$work/err" || fail "no message saying where the matrices are"
python3 - "$work/run.jsonl" "$np" "$coll_backend" <<'PY' || failures=$((failures + 1))
import json, sys
path, ranks, coll_backend = sys.argv[1], int(sys.argv[2]), sys.argv[3]
records = [json.loads(line) for line in open(path)]
meta, points = records[0], {r["key"]: r for r in records[1:] if r["type"] == "point"}
errors = []
def check(cond, what):
    if not cond:
        errors.append(what)
check(meta["family"] == "monitor" and meta["program"] == "libmpilens-monitor" and meta["ranks"] == ranks, "meta")
check(meta["command"] and meta["command"][-1].endswith("plain_ring"), f"command {meta['command']}")
check(set(points) == {"matrix/kind=p2p", "matrix/kind=coll", "matrix/kind=osc"}, f"points {sorted(points)}")
def entries(kind, what):
    return sorted(map(tuple, points[f"matrix/kind={kind}"]["stats"][what]["entries"]))
ring = sorted((i, (i + 1) % ranks, 2) for i in range(ranks))
check(entries("p2p", "counts") == ring, f"p2p counts {entries('p2p', 'counts')}")
check(entries("p2p", "bytes") == sorted((i, j, 128) for i, j, _ in ring), "p2p bytes")
coll = points["matrix/kind=coll"]["stats"]
check(coll["backend"] == coll_backend, f"coll backend {coll['backend']}: {coll.get('backend_reason')}")
if coll_backend == "pmpi":
    # the logical pattern: root to every other rank
    check(entries("coll", "bytes") == [(0, j, 128) for j in range(1, ranks)], f"coll bytes {entries('coll', 'bytes')}")
    check(coll["backend_reason"], "no reason given for the logical backend")
else:
    # the messages Open MPI sent; every rank gets the 128 bytes once, from somebody
    received = {j: sum(v for i, jj, v in entries("coll", "bytes") if jj == j) for j in range(ranks)}
    check(all(received[j] >= 128 for j in range(1, ranks)), f"coll bytes {entries('coll', 'bytes')}")
check(entries("osc", "counts") == [], "osc")
check(points["matrix/kind=p2p"]["stats"]["total_bytes"] == 128 * ranks, "p2p total")
for e in errors:
    print("FAIL:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY

# a second run must not overwrite the first one's file
cp "$work/run.jsonl" "$work/first.jsonl"
run "$@" >"$work/out2" 2>"$work/err2" || fail "a second run failed"
grep -q "cannot create $work/run.jsonl: File exists (remove it or choose another prefix); this run is not monitored" \
  "$work/err2" || fail "no warning about an existing file: $(head -3 "$work/err2")"
cmp -s "$work/run.jsonl" "$work/first.jsonl" || fail "the first run's file was changed"

finish "passed"
