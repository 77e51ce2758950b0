#!/usr/bin/env bash
# Two mpilens layers preloaded together (src/core/next.h: each forwards to the next one): the
# monitoring library and the piggyback layer, in both orders, on a program that knows nothing of
# either. Each layer sees what the layer above it sends:
# - monitor above: the matrix counts the user's payloads (2 x 64 bytes per ring pair);
# - piggyback above, in-band method: the monitor sees the messages on the wire, pb included
#   (2 x (64 + 24) bytes); separate method: the pb messages are the layer's own, sent with PMPI_,
#   which no layer sees, so the monitor counts the payloads;
# and in every case the check driver finds each message's own pb (0 errors).
# usage: test_layers_stacked.sh MONITOR_LIBRARY PIGGYBACK_LIBRARY PROGRAM NP LAUNCHER [ARGS...]
set -u
monitor=$1 piggyback=$2 program=$3 np=$4
shift 4
launch=("$@")
. "$(dirname "$0")/testlib.sh"

vars=(LD_PRELOAD MPILENS_MONITOR MPILENS_PB_METHOD MPILENS_PB_SIZE MPILENS_PB_DRIVER)
forward_vars "${launch[0]}" "${vars[@]}"

stacked() { # stacked NAME "LIBRARIES" METHOD EXPECTED_BYTES_PER_PAIR
  local name=$1 libraries=$2 method=$3 expected=$4
  LD_PRELOAD=$libraries MPILENS_MONITOR=$work/$name MPILENS_PB_METHOD=$method MPILENS_PB_SIZE=24 \
    MPILENS_PB_DRIVER=check "${launch[@]}" "${forward[@]}" -n "$np" "$program" >"$work/$name.out" 2>"$work/$name.err" ||
    { fail "$name: the program failed: $(tail -3 "$work/$name.err")"; return; }
  grep -q "check ($method, 24-byte pb): $((2 * np)) messages verified, 0 errors" "$work/$name.err" ||
    fail "$name: $(grep -m1 'check (' "$work/$name.err" || tail -2 "$work/$name.err")"
  python3 - "$work/$name.jsonl" "$np" "$expected" <<'PY' || fail "$name: the monitor's matrix"
import json, sys
path, ranks, expected = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
points = {r["key"]: r for r in map(json.loads, open(path)) if r["type"] == "point"}
stats = points["matrix/kind=p2p"]["stats"]
got = sorted(map(tuple, stats["bytes"]["entries"]))
want = sorted((i, (i + 1) % ranks, expected) for i in range(ranks))
if got != want:
    sys.exit(f"FAIL: p2p bytes {got}, expected {want}")
PY
}

for method in pack-before datatype-before separate; do
  stacked "monitor_above_$method" "$monitor $piggyback" "$method" 128
  above=176
  [ "$method" = separate ] && above=128
  stacked "piggyback_above_$method" "$piggyback $monitor" "$method" "$above"
done

finish "the two layers stack in both orders at $np ranks"
