"""Diagnosis and comparison sentences of the sanity family, on synthetic runs."""

from __future__ import annotations

import pytest

from conftest import SANITY_FIXTURE, make_run, point
from mpilens import results
from mpilens.analysis import sanity
from mpilens.units import format_time


def compute(kernel: str, target: int, rel_error: float) -> dict:
    achieved = target * (1 + rel_error)
    return point("compute", f"compute/kernel={kernel}/target_ns={target}",
                 {"kernel": kernel, "target_ns": target},
                 {"achieved_ns": achieved, "rel_error": rel_error,
                  "per_rank_achieved_ns": [achieved, achieved],
                  "sample": {"unit": "ns", "n": 11, "median": achieved, "q1": achieved * 0.99,
                             "q3": achieved * 1.01}})


def offset(rank: int, phase: str, offset_ns: float, bound_ns: float) -> dict:
    return point("offset", f"offset/phase={phase}/rank={rank}", {"rank": rank, "phase": phase},
                 {"offset_ns": offset_ns, "rtt_ns": 2 * (bound_ns - 20), "rounds": 100,
                  "bound_ns": bound_ns})


def clock(rank: int, resolution: float, cost: float) -> dict:
    return point("clock", f"clock/rank={rank}", {"rank": rank},
                 {"resolution_ns": resolution, "reported_resolution_ns": 1,
                  "read_cost_ns": cost})


def start(lead: int, lateness: float, late: float) -> dict:
    return point("start", f"start/lead_ns={lead}", {"lead_ns": lead},
                 {"max_lateness_ns": lateness, "late_fraction": late})


TARGETS = [250, 500, 1000, 2000, 5000, 10000, 100000]


def test_time_kernel_off_by_30_percent_below_2us():
    points = [compute("time", t, 0.30 if t < 2000 else 0.01) for t in TARGETS]
    points += [compute("work", t, -0.2 if t < 500 else 0.0) for t in TARGETS]
    found = sanity.diagnose(make_run(points))
    assert ("time-based compute is accurate within 5% from 2 µs up; below that, measured "
            "computation times are overestimated") in found
    assert ("work-based compute is accurate within 5% from 500 ns up; below that, measured "
            "computation times are underestimated") in found


def test_accuracy_needs_every_larger_target_within_tolerance():
    errors = {250: 0.01, 500: -0.2, 1000: 0.04, 2000: 0.06, 5000: 0.02, 10000: 0.0, 100000: 0.0}
    curve = sanity.compute_curves(make_run([compute("time", t, e) for t, e in errors.items()]))
    assert sanity.accurate_from(curve["time"]) == 5000
    found = sanity.diagnose(make_run([compute("time", t, e) for t, e in errors.items()]))
    assert ("time-based compute is accurate within 5% from 5 µs up; below that, computation "
            "times are off by more than 5%") in found


def test_kernel_always_or_never_accurate():
    always = sanity.diagnose(make_run([compute("work", t, 0.01) for t in TARGETS]))
    assert ("work-based compute is accurate within 5% at every target tested (250 ns to "
            "100 µs)") in always
    never = sanity.diagnose(make_run([compute("time", t, 0.12) for t in TARGETS]))
    assert ("time-based compute is never accurate within 5%: the error is +12% even at the "
            "largest target, 100 µs") in never


def test_missing_rel_error_is_not_accurate():
    points = [compute("time", t, 0.0) for t in TARGETS]
    points[-1]["stats"]["rel_error"] = None
    assert sanity.accurate_from(sanity.compute_curves(make_run(points))["time"]) is None


def test_one_host_offsets_within_bound():
    points = [offset(0, p, 0, 20) for p in ("start", "end")]
    points += [offset(1, "start", -38, 226), offset(1, "end", 50, 219)]
    found = sanity.diagnose(make_run(points, nodes=1))
    assert found[1:] == ["all ranks share one clock: every offset is within its error bound "
                     "(bounds up to ±226 ns)"]


def test_offsets_beyond_bound_on_one_host_are_reported():
    points = [offset(1, "start", 1500, 220), offset(1, "end", 3200, 230),
              offset(2, "start", 100, 210), offset(2, "end", 90, 210)]
    found = sanity.diagnose(make_run(points, nodes=1))
    assert ("warning: all ranks run on one host, yet the offset of rank 1 (3.2 µs, end of run) "
            "is beyond its error bound (±230 ns): the offset estimates are unreliable") in found
    assert ("largest clock offset: 3.2 µs (rank 1, end of run; beyond its error bound "
            "±230 ns)") in found
    assert "clock drift between start and end of run: up to 1.7 µs (rank 1)" in found


def test_offsets_across_nodes_report_largest_and_drift():
    points = [offset(1, "start", -40_000, 3_000), offset(1, "end", -52_000, 3_100),
              offset(2, "start", 900, 2_000), offset(2, "end", 950, 2_000)]
    found = sanity.diagnose(make_run(points, nodes=2))
    assert not any(s.startswith("warning") for s in found)
    assert ("largest clock offset: -52 µs (rank 1, end of run; beyond its error bound "
            "±3.1 µs)") in found
    assert "clock drift between start and end of run: up to -12 µs (rank 1)" in found


def test_clock_resolution_and_warning():
    fine = sanity.diagnose(make_run([clock(0, 20, 21.4), clock(1, 20, 48)]))
    assert fine == ["clock CLOCK_MONOTONIC: resolution 20 ns, one read costs 48 ns"]
    coarse = sanity.diagnose(make_run([clock(0, 1000, 30), clock(1, 40, 30)]))
    assert coarse[0] == "clock CLOCK_MONOTONIC: resolution 1 µs, one read costs 30 ns"
    assert coarse[1] == ("warning: the clock resolution (1 µs) is coarser than 100 ns: intervals "
                         "shorter than 100 µs cannot be timed to 1%")


def test_clock_falls_back_to_meta():
    run = make_run([])
    clock_meta = run.meta["clock"]
    assert sanity.clock_summary(run) == (clock_meta["resolution_ns"], clock_meta["read_cost_ns"])
    assert sanity.diagnose(run) == [
        f"clock CLOCK_MONOTONIC: resolution {format_time(clock_meta['resolution_ns'])}, one read "
        f"costs {format_time(clock_meta['read_cost_ns'])}"]


def test_start_lateness_and_late_fraction_warning():
    found = sanity.diagnose(make_run([start(1000, 2500, 0.35), start(100000, 300, 0.0)]))
    assert found[1:] == [
        "synchronized start (lead 1 µs): the last rank starts a median 2.5 µs after the common "
        "start time; in 35% of repetitions a rank arrived after it",
        "warning: with a 1 µs lead, 35% of synchronized starts had a late rank; use a longer "
        "lead",
        "synchronized start (lead 100 µs): the last rank starts a median 300 ns after the "
        "common start time; no rank ever arrived after it"]


def test_fixture_diagnosis_covers_every_bench():
    found = sanity.diagnose(results.load(SANITY_FIXTURE))
    assert found[0].startswith("clock CLOCK_MONOTONIC: resolution ")
    assert sum(s.startswith(("time-based compute", "work-based compute")) for s in found) == 2
    assert any(s.startswith("all ranks share one clock") for s in found)
    assert any(s.startswith("ready-first handshake round trip: ") for s in found)
    assert sum(s.startswith("synchronized start (lead ") for s in found) == 2


def test_compare_sentences():
    a = make_run([clock(0, 20, 21), compute("time", 1000, 0.3), compute("time", 2000, 0.0),
                  start(10000, 900, 0.0), offset(1, "start", 30, 200)])
    b = make_run([clock(0, 20, 48), compute("time", 1000, 0.0), compute("time", 2000, 0.0),
                  start(10000, 300, 0.0), offset(1, "start", 60, 200)])
    assert sanity.compare(a, b) == [
        "clock read cost: 21 ns vs 48 ns (2.3× slower in B)",
        "clock resolution: 20 ns vs 20 ns (about the same)",
        "time-based compute accurate within 5%: from 2 µs vs from 1 µs",
        "largest clock offset: 30 ns vs 60 ns (2.0× larger in B)",
        "start lateness (lead 10 µs): 900 ns vs 300 ns (3.0× earlier in B)"]


@pytest.mark.parametrize("a,b,text", [
    (100, 1500, "100 ns vs 1.5 µs (15× slower in B)"),
    (100, 104, "100 ns vs 104 ns (about the same)"),
    (None, 5, "n/a vs 5 ns"),
    (0, 5, "0 ns vs 5 ns")])
def test_versus(a, b, text):
    assert sanity._versus(a, b, "slower", "faster") == text
