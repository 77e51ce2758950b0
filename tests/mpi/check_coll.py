"""Checks of one mpilens-coll results file against what must hold (see test_coll_cli.sh).

usage: check_coll.py FILE FLAVOUR CHECK...  with CHECK among truth, order, growth, remedy,
complete, fast, estimators. Prints every failed check; exits 1 if any failed.
"""
import math
import os
import sys

from checklib import check, errors, finish, read

path, flavour, checks = sys.argv[1], sys.argv[2], sys.argv[3:]
meta, points = read(path)
np_ = meta["ranks"]

# Within 10% of the truth, as the issue asks, where every rank has a core: oli's block values are
# medians of their operations, so the milliseconds a rank loses when it shares a core do not reach
# the estimate (docs/methods/coll.md, "Repetition"). Where ranks outnumber the cores, mpilens coll
# itself calls its estimates not trustworthy (analysis/coll.py), and CI put an allreduce 15% and a
# flat one 25% over their truths at 4 ranks on 2 cores, on a machine whose hop delays overslept
# less than BUSY: there 30%, which still tells a tree of another depth (a hop more at 4 ranks is
# 50% more).
TOLERANCE = 0.10 if np_ <= len(os.sched_getaffinity(0)) else 0.30


def find(method, op, algo):
    for p in points:
        if (p["method"], p["op"], p["algo"]) == (method, op, algo):
            return p
    return None


def ms(v):
    return "null" if v is None else f"{v / 1e6:.2f} ms"


olis = [p for p in points if p["method"] == "oli"]
check(olis or "complete" in checks, "no oli point")

if "truth" in checks:
    for p in olis:
        s, name = p["stats"], p["key"]
        d = p["params"]["hop_delay_ns"]
        actual = s["hop_delay_actual_ns"]
        check(d <= actual <= 1.5 * d, f"{name}: hop delays applied {ms(actual)} for {ms(d)} asked")
        truth = s["truth_actual_ns"]
        err = abs(s["latency_ns"] - truth) / truth
        check(err <= TOLERANCE, f"{name}: max OL {ms(s['latency_ns'])}, truth {ms(truth)} "
                                f"({ms(s['truth_ns'])} at the nominal delay): {err:.0%} off")
        per_rank, truths = s["per_rank_ns"], s["per_rank_truth_ns"]
        check(len(per_rank) == np_, f"{name}: {len(per_rank)} per-rank values for {np_} ranks")
        scale = actual / d
        for i, (ol, t) in enumerate(zip(per_rank, truths)):
            if ol is not None and t is not None:  # with --fast, ranks not measured have no OL
                # a tenth of a hop on top: the root's own OL of a reduction is near 0
                check(abs(ol - t * scale) <= TOLERANCE * t * scale + 0.1 * d,
                      f"{name}: OL_{i} {ms(ol)}, truth {ms(t * scale)}")
        check(0 <= s["argmax_rank"] < np_, f"{name}: argmax_rank {s['argmax_rank']}")
        if p["op"] == "bcast":
            check(per_rank[0] is None, f"{name}: the root has an OL")

if "order" in checks:
    # oli itself may be off by TOLERANCE, so the bounds are judged with the same slack
    for algo in {p["algo"] for p in olis}:
        oli = find("oli", "bcast", algo)["stats"]["latency_ns"]
        rounds = find("rounds", "bcast", algo)["stats"]["latency_ns"]
        check(rounds <= (1 + TOLERANCE) * oli, f"{algo}: rounds {ms(rounds)} is not below oli {ms(oli)}")
        for upper in ("ack", "barrier-dissem"):
            value = find(upper, "bcast", algo)["stats"]["latency_ns"]
            check(value >= (1 - TOLERANCE) * oli, f"{algo}: {upper} {ms(value)} is not above oli {ms(oli)}")

if "growth" in checks and np_ >= 3:
    p = find("oli", "bcast", "linear")
    ol, d = p["stats"]["per_rank_ns"], p["params"]["hop_delay_ns"]
    for i in range(1, np_ - 1):
        check(ol[i + 1] >= ol[i] - 0.2 * d, f"linear: OL_{i + 1} {ms(ol[i + 1])} below OL_{i} {ms(ol[i])}")
    check(ol[-1] - ol[1] >= 0.5 * (np_ - 2) * d,
          f"linear: OL grows from {ms(ol[1])} to only {ms(ol[-1])} over {np_ - 2} hops of {ms(d)}")

if "remedy" in checks:
    p = find("oli", "bcast", "flat")
    s, d = p["stats"], p["params"]["hop_delay_ns"]
    scale = s["hop_delay_actual_ns"] / d
    if np_ >= 3:
        # the root sends to 1..P-1 in turn, so only P-1's answer comes after the root's gap
        check(set(range(1, np_ - 1)) <= set(s["gap_bound_ranks"]),
              f"flat: gap-bound ranks {s['gap_bound_ranks']}, expected 1..{np_ - 2} at least")
        check(s["remedy"] == "clock", f"flat: remedy {s['remedy']}")
    for i in range(1, np_):
        truth = s["per_rank_truth_ns"][i] * scale
        check(abs(s["per_rank_ns"][i] - truth) <= 0.1 * truth + 0.2 * d,
              f"flat: OL_{i} {ms(s['per_rank_ns'][i])}, truth {ms(truth)}")

if "complete" in checks:
    check(len(points) == meta["points_total"], f"{len(points)} points, {meta['points_total']} planned")
    methods = {p["method"] for p in points}
    expected = {"sendlat", "rounds", "rounds-reverse", "barrier", "barrier-ring", "barrier-dissem", "ack",
                "oli", "osu", "imb"}
    check(methods == expected, f"methods {sorted(methods)}")
    for p in points:
        v = p["stats"]["latency_ns"]
        check(v is not None and math.isfinite(v) and v > 0, f"{p['key']}: latency {v}")
        check("truth_ns" not in p["stats"], f"{p['key']}: a truth for the library's algorithm")
    osu, imb = find("osu", "bcast", "library")["stats"], find("imb", "bcast", "library")["stats"]
    local = osu["per_rank_local_ns"]
    check(abs(osu["latency_ns"] - sum(local) / len(local)) <= 1e-6 * osu["latency_ns"], "osu is not the mean")
    check(imb["latency_ns"] == max(imb["per_rank_local_ns"]), "imb is not the maximum")

if "fast" in checks:
    for p in olis:
        s = p["stats"]
        check(p["params"]["fast"] is True, f"{p['key']}: not marked fast")
        check(s["argmax_rank"] in s["measured_ranks"], f"{p['key']}: argmax not measured in full")
        check(len(s["measured_ranks"]) + len(s["audited_ranks"]) < np_ - 1 or np_ <= 3,
              f"{p['key']}: --fast measured every rank")
        check(sum(v is not None for v in s["cheap_ns"]) == np_ - 1, f"{p['key']}: cheap pass incomplete")

# Checks that no timing can excuse: a busy machine does not make them fail.
exact_failures = []


def exact(cond, what):
    check(cond, what)
    if not cond:
        exact_failures.append(what)


if "estimators" in checks:
    # every point names its estimator, its latency_ns is that estimate, and both estimates are
    # the ones its numbers give: for a usual method the median and mean of its recorded blocks,
    # for oli the largest OL_i of the tasks measured in full under each
    asked = meta["options"].get("estimator", "median")

    def near(a, b):
        return a is not None and b is not None and abs(a - b) <= 1e-9 * abs(b) + 1e-6

    for p in points:
        s, name = p["stats"], p["key"]
        exact(p["params"].get("estimator") == asked, f"{name}: estimator {p['params'].get('estimator')}")
        if p["method"] in ("osu", "imb"):
            continue
        exact(near(s["latency_ns"], s[f"latency_{asked}_ns"]), f"{name}: latency_ns is not the {asked}")
        if p["method"] != "oli":
            for k in ("median", "mean"):
                exact(near(s[f"latency_{k}_ns"], s["sample"][k]), f"{name}: latency_{k}_ns is not the blocks' {k}")
            continue
        exact(s["per_rank_ns"] == s[f"per_rank_{asked}_ns"], f"{name}: per_rank_ns is not the {asked}")
        # under --fast, of the ranks measured in full (audited ones have values too, not counted)
        full = set(s["measured_ranks"]) if "measured_ranks" in s else None
        for k in ("median", "mean"):
            values = [v for i, v in enumerate(s[f"per_rank_{k}_ns"])
                      if v is not None and (full is None or i in full)]
            exact(values and near(s[f"latency_{k}_ns"], max(values)), f"{name}: latency_{k}_ns is not the max OL_i")
        exact(near(s["sample"][asked], s["latency_ns"]), f"{name}: the argmax rank's blocks do not give its OL")

# The machine was too busy to judge a truth when the ranks lost their cores (their timings then
# include waits for a core): the hop delays, which are sleeps or spins, overslept by more than
# BUSY (CI's quiet machine oversleeps about 2%: 15.35 ms for 15 ms at 8 ranks; with a load of 4 on
# its 2 cores, 20 to 60%, and oli 20 to 60% off), or spinning ranks were off their cores more than
# OFF_CORE of a point's time (stats.off_core_share: a quiet virtual machine here loses up to 7% to
# its host; CI once put oli 30 to 230% over the truth at 2 ranks under MPICH, with delays that
# overslept less than 10%, as one process spinning beside the ranks does: off their cores 33 to
# 48%), or the host of the virtual machine took more than OFF_CORE of the machine's CPU time
# (stats.steal_share: sleeping ranks have no off_core_share, and a kernel that counts the host's
# steal in a thread's CPU time would hide it there). A truth failed then is not judged: exit 3
# says so, with the reason (test_coll_cli.sh measures again, and skips the test if no attempt could
# be judged).
BUSY = 1.10
OFF_CORE = 0.10


def busy_reason():
    overslept = max(p["stats"]["hop_delay_actual_ns"] / p["params"]["hop_delay_ns"] for p in olis)
    if overslept > BUSY:
        return f"hop delays overslept by {overslept - 1:.0%}, above {BUSY - 1:.0%}"
    off = [(s, p["key"], p["stats"].get("steal_share")) for p in points
           if (s := p["stats"].get("off_core_share")) is not None]
    if off and max(off)[0] > OFF_CORE:
        share, key, steal = max(off)
        host = f"; its host took {steal:.0%} of the machine's CPU time" if steal else ""
        return f"a spinning rank was off its core {share:.0%} of {key}'s time, above {OFF_CORE:.0%}{host}"
    stolen = [(s, p["key"]) for p in points if (s := p["stats"].get("steal_share")) is not None]
    if stolen and max(stolen)[0] > OFF_CORE:
        share, key = max(stolen)
        return f"the virtual machine's host took {share:.0%} of its CPU time during {key}, above {OFF_CORE:.0%}"
    return None


if errors and olis and not exact_failures and (reason := busy_reason()):
    print(f"{path}: not judged: the machine was busy ({reason}); {len(errors)} check(s) would have failed",
          file=sys.stderr)
    sys.exit(3)
finish(f"{path}:")
