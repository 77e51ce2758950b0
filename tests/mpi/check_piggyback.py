"""Checks of one mpilens-piggyback results file (see test_piggyback_cli.sh).

usage: check_piggyback.py FILE METHOD PB_SIZE MIN_SIZE MAX_SIZE WINDOW REPS
The file must hold exactly the points of both benchmarks, both kinds of receive and every power
of 2 from MIN_SIZE to MAX_SIZE, measured REPS times each, recorded with the layer's METHOD and
PB_SIZE ("none" and 0 without the layer). Prints every failed check; exits 1 if any failed.
"""
import math
import sys

from checklib import check, finish, positive, powers, read

path, method, pb_size = sys.argv[1], sys.argv[2], int(sys.argv[3])
min_size, max_size, window, reps = (int(v) for v in sys.argv[4:8])
meta, points = read(path)
sizes = powers(min_size, max_size)
expected = {f"{bench}/recv={recv}/size={size}": (bench, recv, size)
            for bench in ("latency", "bandwidth") for recv in ("specific", "wildcard") for size in sizes}

check(meta["type"] == "meta" and meta["family"] == "piggyback" and meta["program"] == "mpilens-piggyback",
      f"meta: {meta.get('family')}, {meta.get('program')}")
check(meta.get("piggyback") == {"method": method, "pb_size": pb_size}, f"meta piggyback {meta.get('piggyback')}")
check(meta["points_total"] == len(expected), f"points_total {meta['points_total']}, planned {len(expected)}")
keys = [p["key"] for p in points]
check(len(keys) == len(set(keys)), "a point was written twice")
check(set(keys) == set(expected), f"points missing {sorted(set(expected) - set(keys))}, "
                                  f"unexpected {sorted(set(keys) - set(expected))}")

for p in points:
    if p["key"] not in expected:
        continue
    bench, recv, size = expected[p["key"]]
    name, params, stats = p["key"], p["params"], p["stats"]
    check(p["family"] == "piggyback" and p["bench"] == bench, f"{name}: family {p['family']}, bench {p['bench']}")
    want = {"bench": bench, "recv": recv, "size_bytes": size, "method": method, "pb_size": pb_size}
    check({k: params.get(k) for k in want} == want, f"{name}: params {params}")
    check(isinstance(params.get("iterations"), int) and params["iterations"] >= 1,
          f"{name}: iterations {params.get('iterations')}")
    sample = stats["sample"]
    check(sample["n"] == reps and len(sample["values"]) == reps and sample["stop"] == "fixed",
          f"{name}: sample of {sample['n']} ({sample['stop']}), asked for {reps}")
    check(all(positive(v) for v in sample["values"]), f"{name}: sample values {sample['values']}")
    if bench == "latency":
        check("window" not in params, f"{name}: a window on a latency point")
        check(positive(stats.get("latency_ns")) and stats["latency_ns"] == sample["median"],
              f"{name}: latency_ns {stats.get('latency_ns')}, sample median {sample['median']}")
    else:
        check(params.get("window") == window, f"{name}: window {params.get('window')}, asked for {window}")
        bw, per_window = stats.get("bandwidth_Bps"), stats.get("window_ns")
        check(positive(bw) and positive(per_window) and per_window == sample["median"],
              f"{name}: bandwidth_Bps {bw}, window_ns {per_window}, sample median {sample['median']}")
        if positive(bw) and positive(per_window):
            check(math.isclose(bw, window * size * 1e9 / per_window, rel_tol=1e-9),
                  f"{name}: bandwidth_Bps {bw} is not {window} x {size} bytes in {per_window} ns")

finish()
