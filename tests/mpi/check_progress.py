"""Checks of one mpilens-progress results file (see test_progress_cli.sh).

usage: check_progress.py FILE --ranks N --sizes MIN:MAX --intervals MIN:MAX --reps R
                         --bench LIST [--ops LIST] --label TEXT --loaded yes|no [--mode MODE]
                         [--env VAR=VALUE ...]
The file must hold exactly the planned points, in the planned order, each with the documented
fields (docs/results-schema.md, "progress") and the known truths of its definition: the test
strategy made floor(size / interval) + 1 tests, time-based overheads are sums of durations and
so not negative, a time-based computation lasted at least t_b, every point of a size computed
for the t_b its blocking point measured, test-best is the lowest of the recorded intervals, a
collective's headline is the largest of its ranks. The progress setting (label, library loaded
or not, its mode, the environment variables given) must be the one the test ran under, in the
meta record and in every point. Prints every failed check; exits 1 if any failed.
"""
import argparse
import math
import os

from checklib import check, finish, number, powers, read

parser = argparse.ArgumentParser()
parser.add_argument("file")
parser.add_argument("--ranks", type=int, required=True)
parser.add_argument("--sizes", required=True)
parser.add_argument("--intervals", required=True)
parser.add_argument("--reps", type=int, required=True)
parser.add_argument("--bench", required=True)
parser.add_argument("--ops", default="iallreduce,ibcast,ireduce,ialltoall")
parser.add_argument("--label", required=True)
parser.add_argument("--loaded", choices=("yes", "no"), required=True)
parser.add_argument("--mode")
parser.add_argument("--test-placement", default="even", help="of the test strategy's tests")
parser.add_argument("--env", action="append", default=[])
args = parser.parse_args()

meta, points = read(args.file)


def power_range(text):
    return powers(*(int(v) for v in text.split(":")))


sizes, intervals = power_range(args.sizes), power_range(args.intervals)
benches = args.bench.split(",")


def plan():
    """(key, params) of every point, in the order the program measures them."""
    groups = []
    if "p2p" in benches:
        groups += [("p2p", None, size) for size in sizes]
    if "nbc" in benches:
        groups += [("nbc", op, size) for op in args.ops.split(",") for size in sizes]
    out = []
    for bench, op, size in groups:
        head = f"{bench}{'/op=' + op if op else ''}/size={size}"
        out.append((f"{head}/strategy=blocking", dict(bench=bench, op=op, size=size, strategy="blocking")))
        for compute in ("time", "work"):
            base = dict(bench=bench, op=op, size=size, compute=compute)
            out.append((f"{head}/compute={compute}/strategy=none", dict(base, strategy="none")))
            for i in intervals:
                out.append((f"{head}/compute={compute}/strategy=test/interval={i}",
                            dict(base, strategy="test", interval=i)))
            out.append((f"{head}/compute={compute}/strategy=test-best", dict(base, strategy="test-best")))
    if "interrupts" in benches:
        out.append(("interrupts/rate_hz=8192", dict(bench="interrupts")))
    return out


expected = plan()

# ---- the meta record: the progress setting -------------------------------------------------------
check(meta["type"] == "meta" and meta["family"] == "progress" and meta["program"] == "mpilens-progress",
      f"meta: {meta.get('family')}, {meta.get('program')}")
check(meta["points_total"] == len(expected), f"points_total {meta['points_total']}, planned {len(expected)}")
setting = meta.get("progress_setting", {})
library = setting.get("library", {})
check(setting.get("label") == args.label, f"meta progress label {setting.get('label')!r}, expected {args.label!r}")
check(library.get("loaded") is (args.loaded == "yes"), f"meta progress library loaded {library.get('loaded')}")
if args.mode:
    check(library.get("mode") == args.mode and library.get("running") is True,
          f"meta progress library mode {library.get('mode')}, running {library.get('running')}")
    check(library.get("running_per_rank") == [True] * args.ranks,
          f"running_per_rank {library.get('running_per_rank')}")
else:
    check(library.get("running") is False, f"a thread runs without the library: {library}")
check(len(library.get("cpu_per_rank", [])) == args.ranks, f"cpu_per_rank {library.get('cpu_per_rank')}")
given = dict(v.split("=", 1) for v in args.env)
check(setting.get("env") == given, f"meta progress env {setting.get('env')}, expected {given}")
check(setting.get("thread_level") == meta["mpi"]["thread_level"],
      f"progress thread_level {setting.get('thread_level')}, mpi {meta['mpi']['thread_level']}")
if args.mode:
    check(setting.get("thread_level") == "multiple", f"the library runs its thread at {setting.get('thread_level')}")

# ---- the points: all, once, in order ---------------------------------------------------------------
keys = [p["key"] for p in points]
check(len(keys) == len(set(keys)), "a point was written twice")
check(keys == [k for k, _ in expected],
      f"points missing {[k for k, _ in expected if k not in keys][:5]}, "
      f"unexpected {[k for k in keys if k not in dict(expected)][:5]}, or out of order")
by_key = {p["key"]: p for p in points}


def sample_ok(name, stats, nonnegative):
    s = stats.get("sample", {})
    check(s.get("n") == args.reps and len(s.get("values", [])) == args.reps and s.get("stop") == "fixed",
          f"{name}: sample of {s.get('n')} ({s.get('stop')}), asked for {args.reps}")
    check(all(number(v) and (v >= 0 or not nonnegative) for v in s.get("values", [])),
          f"{name}: sample values {s.get('values')}")


def blocking_of(params):
    head = f"{params['bench']}{'/op=' + params['op'] if params['op'] else ''}/size={params['size']}"
    return by_key.get(f"{head}/strategy=blocking")


def check_params(name, p, want):
    params = p["params"]
    check(p["family"] == "progress" and p["bench"] == want["bench"],
          f"{name}: family {p['family']}, bench {p['bench']}")
    check(params.get("progress") == args.label, f"{name}: progress {params.get('progress')!r}")
    check(params.get("size_bytes") == want["size"] and params.get("strategy") == want["strategy"],
          f"{name}: params {params}")
    check(params.get("compute") == want.get("compute"), f"{name}: compute {params.get('compute')}")
    tested = str(want["strategy"]).startswith("test")
    check(params.get("test_placement") == (args.test_placement if tested else None),
          f"{name}: test_placement {params.get('test_placement')}")
    check(params.get("op") == want["op"], f"{name}: op {params.get('op')}")
    check(params.get("ranks") == (args.ranks if want["bench"] == "nbc" else None),
          f"{name}: ranks {params.get('ranks')}")


def check_overheads(name, p, want, t_b):
    """none and test points: the definitions of t_o, t_mpi, t_ov and the tests made."""
    stats, work = p["stats"], want["compute"] == "work"
    tests = want["size"] // want["interval"] + 1 if want["strategy"] == "test" else 0
    check(stats.get("tests") == tests, f"{name}: {stats.get('tests')} tests, floor(size/interval)+1 = {tests}")
    check(p["params"].get("interval_bytes") == want.get("interval"),
          f"{name}: interval {p['params'].get('interval_bytes')}")
    check(stats.get("t_b_ns") == t_b, f"{name}: t_b_ns {stats.get('t_b_ns')}, its blocking point {t_b}")
    computed = round(t_b) if number(t_b) else 0
    if want["bench"] == "p2p":
        rows = [stats]
    else:
        per = stats.get("per_rank", {})
        names = ["t_o_ns", "t_mpi_ns", "t_ov_ns", "t_start_ns", "t_test_ns", "t_wait_ns"] + (
            ["t_c_ns", "workload_units"] if work else [])
        check(all(len(per.get(k, [])) == args.ranks for k in names), f"{name}: per_rank {sorted(per)}")
        rows = [{k: per[k][r] for k in names if len(per.get(k, [])) == args.ranks} for r in range(args.ranks)]
        t_os = per.get("t_o_ns", [])
        if t_os and all(number(v) for v in t_os):
            check(stats.get("t_o_ns") == max(t_os), f"{name}: t_o_ns {stats.get('t_o_ns')}, ranks' max {max(t_os)}")
            check(math.isclose(stats.get("t_o_mean_ns", math.nan), sum(t_os) / len(t_os), rel_tol=1e-9, abs_tol=1e-6),
                  f"{name}: t_o_mean_ns {stats.get('t_o_mean_ns')}")
        check(isinstance(stats.get("late_reps"), int) and stats["late_reps"] >= 0, f"{name}: late_reps")
    for r, row in enumerate(rows):
        where = f"{name} (rank {r})" if want["bench"] == "nbc" else name
        parts = ("t_mpi_ns", "t_ov_ns", "t_start_ns", "t_test_ns", "t_wait_ns")
        check(all(number(row.get(k)) and row[k] >= 0 for k in parts), f"{where}: {[row.get(k) for k in parts]}")
        if not work:
            check(number(row.get("t_o_ns")) and row["t_o_ns"] >= 0, f"{where}: time-based t_o {row.get('t_o_ns')} < 0")
            check(row.get("t_o_ns") == row.get("t_mpi_ns"), f"{where}: time-based t_o {row.get('t_o_ns')} is not t_mpi")
            # the computation lasted at least t_b: t_ov >= t_mpi + t_b, repetition by repetition
            if number(row.get("t_ov_ns")) and number(row.get("t_mpi_ns")):
                check(row["t_ov_ns"] >= row["t_mpi_ns"] + computed - 1,
                      f"{where}: t_ov {row['t_ov_ns']} < t_mpi {row['t_mpi_ns']} + t_b {computed}")
        else:
            check(number(row.get("t_o_ns")), f"{where}: t_o_ns {row.get('t_o_ns')}")
            check(number(row.get("t_c_ns")) and row["t_c_ns"] > 0, f"{where}: t_c_ns {row.get('t_c_ns')}")
        if not work and want["strategy"] == "none":
            check(row.get("t_test_ns") == 0, f"{where}: tests timed without tests")
    if work:
        check(number(stats.get("t_c_ns")) and stats["t_c_ns"] > 0, f"{name}: t_c_ns {stats.get('t_c_ns')}")
        if want["bench"] == "p2p":
            check(isinstance(stats.get("workload_units"), int) and stats["workload_units"] >= 1,
                  f"{name}: workload_units {stats.get('workload_units')}")
    else:
        check("t_c_ns" not in stats, f"{name}: t_c_ns on a time-based point")
    sample_ok(name, stats, nonnegative=not work)


def check_best(name, p, want):
    stats, head = p["stats"], name[: -len("/strategy=test-best")]
    tested = [(i, by_key.get(f"{head}/strategy=test/interval={i}")) for i in intervals]
    recorded = [(i, t["stats"]["t_o_ns"]) for i, t in tested if t]
    candidates = [(c.get("interval_bytes"), c.get("t_o_ns")) for c in stats.get("candidates", [])]
    check(candidates == recorded, f"{name}: candidates {candidates}, recorded {recorded}")
    finite = [(v, i) for i, v in recorded if number(v)]
    if finite:
        lowest, interval = min(finite)
        check(stats.get("t_o_ns") == lowest and p["params"].get("interval_bytes") == interval,
              f"{name}: best {p['params'].get('interval_bytes')} at {stats.get('t_o_ns')}, "
              f"lowest {interval} at {lowest}")
        check(stats.get("from_key") == f"{head}/strategy=test/interval={interval}",
              f"{name}: from_key {stats.get('from_key')}")
        check(stats.get("tests") == want["size"] // interval + 1, f"{name}: tests {stats.get('tests')}")


def check_interrupts(name, p):
    params, stats = p["params"], p["stats"]
    check(params.get("rate_hz") == 8192 and params.get("progress") == args.label, f"{name}: params {params}")
    # one computing thread per processing unit of the machine, whatever rank 0 is bound to
    # (Open MPI binds it to one core at 2 ranks); this unbound process may use them all
    machine = len(os.sched_getaffinity(0))
    check(stats.get("threads") == machine, f"{name}: threads {stats.get('threads')}, the machine has {machine}")
    check(isinstance(stats.get("rank_cpus"), int) and 1 <= stats["rank_cpus"] <= machine,
          f"{name}: rank_cpus {stats.get('rank_cpus')}")
    check(all(number(stats.get(k)) and stats[k] > 0 for k in ("t1_ns", "t2_ns")), f"{name}: t1, t2 {stats}")
    check(all(number(stats.get(k)) and stats[k] >= 0 for k in ("wakeups", "achieved_hz", "spread")),
          f"{name}: wakeups, achieved_hz, spread {stats}")
    check(number(stats.get("per_interrupt_ns")), f"{name}: per_interrupt_ns {stats.get('per_interrupt_ns')}")


def check_switches(name, p, want):
    """Measured points: every rank's context switches by group (the client and the server for
    p2p); libmpilens-progress's thread exactly when the layer is loaded."""
    found = p["stats"].get("context_switches")
    ranks = args.ranks if want["bench"] == "nbc" else 2
    check(isinstance(found, dict), f"{name}: context_switches {found}")
    if not isinstance(found, dict):
        return
    for group in ("rank", "progress_thread", "other_threads"):
        counts = found.get(group)
        if group == "progress_thread" and args.loaded == "no":
            check(counts is None, f"{name}: a progress thread's switches without the layer: {counts}")
            continue
        check(isinstance(counts, dict) and all(
            isinstance(counts.get(kind), list) and len(counts[kind]) == ranks
            and all(isinstance(v, int) and v >= 0 for v in counts[kind])
            for kind in ("voluntary", "involuntary")), f"{name}: context_switches.{group} {counts}")


for key, want in expected:
    p = by_key.get(key)
    if not p:
        continue
    if want["bench"] == "interrupts":
        check_interrupts(key, p)
        continue
    check_params(key, p, want)
    if want["strategy"] != "test-best":
        check_switches(key, p, want)
    blocking = blocking_of(want)
    t_b = blocking["stats"].get("t_b_ns") if blocking else None
    if want["strategy"] == "blocking":
        check(number(t_b) and t_b > 0, f"{key}: t_b_ns {t_b}")
        if want["bench"] == "nbc":
            per = p["stats"].get("per_rank", {}).get("t_b_ns", [])
            check(len(per) == args.ranks and t_b == max(per), f"{key}: t_b_ns {t_b}, per rank {per}")
        sample_ok(key, p["stats"], nonnegative=True)
    elif want["strategy"] == "test-best":
        check_best(key, p, want)
    else:
        check_overheads(key, p, want, t_b)

finish()
