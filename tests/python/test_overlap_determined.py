"""How well each ratio is known: its interval, determined points, and what the diagnosis makes of
them (docs/overlap.md, Reading the overlap report)."""

from __future__ import annotations

import math

import pytest

from conftest import (OVERLAP_FIXTURE, make_overlap_run, map_point, overlap_point,
                      sample_summary)
from mpilens import results
from mpilens.analysis import overlap

KIB = 1024
SIZES = [KIB << k for k in range(8)]       # 1 KiB - 128 KiB
COMPUTE = [1000 << k for k in range(8)]    # 1 µs - 128 µs
ADVICE = "rerun with more repetitions (--reps 200 or --preset full) or on a quieter machine"


def t_comm(size: int) -> float:
    return 1000 + size / 10


def noisy_map(ratio_of, noisy, bench: str = "sender", sizes=SIZES, computes=COMPUTE) -> list:
    """ratio_of(size, compute) at every point; where noisy(size, compute), the ratio is 1.6
    with an interval 1.5 wide instead, as timer noise makes of a small T_comm or T_comp."""
    return [map_point(bench, s, c, 1.6, t_comm(s), width=1.5) if noisy(s, c)
            else map_point(bench, s, c, ratio_of(s, c), t_comm(s))
            for s in sizes for c in computes]


def eager(size: int, compute: int) -> float:
    return 0.05 if size <= 8 * KIB else 1.0


def top_left(size: int, compute: int) -> bool:
    """Small messages under long computations, plus the whole 4 KiB column."""
    return (size <= 2 * KIB and compute >= 8000) or size == 4 * KIB


def reference(bench: str, size: int, median: float, ci_lo: float, ci_hi: float) -> dict:
    return {"type": "point", "family": "overlap", "bench": bench,
            "key": f"{bench}/size_bytes={size}", "params": {"size_bytes": size},
            "stats": {"sample": sample_summary(median, ci_lo, ci_hi)}}


# --- the interval of a ratio ---------------------------------------------------------------------

@pytest.mark.parametrize("measured,comm,comp,expected", [
    # T_comp longer: the ratio is (T − T_comp)/T_comm, growing with T
    ((10, 12), (4, 4), (10, 10), (0.0, 0.5)),
    # every quantity uncertain: low at (20 − 11)/5, high at (22 − 10)/4
    ((20, 22), (4, 5), (10, 11), (1.8, 3.0)),
    # T_comm from 8 (shorter than T_comp) to 12 (longer): the two swap roles inside the box,
    # (14 − 10)/8 = 0.5 and (14 − 12)/10 = 0.2
    ((14, 14), (8, 12), (10, 10), (0.2, 0.5)),
    # the same with T below both: the highest ratio is where they cross, (9 − 10)/10, which no
    # corner gives ((9 − 10)/8 = −0.125, (9 − 12)/10 = −0.3)
    ((9, 9), (8, 12), (10, 10), (-0.3, -0.1)),
    # exact quantities: the ratio itself
    ((14, 14), (4, 4), (10, 10), (1.0, 1.0))])
def test_ratio_bounds(measured, comm, comp, expected):
    assert overlap.ratio_bounds(measured, comm, comp) == pytest.approx(expected)


@pytest.mark.parametrize("comm,comp", [((0, 5), (10, 10)), ((4, 4), (-1, 10))])
def test_ratio_bounds_unbounded_when_a_part_can_be_0(comm, comp):
    assert overlap.ratio_bounds((14, 14), comm, comp) == (-math.inf, math.inf)


@pytest.mark.parametrize("value,summary,expected", [
    (1000, sample_summary(1000, 900, 1200), (900, 1200)),   # the median itself
    (500, sample_summary(1000, 900, 1200), (450, 600)),     # one way: half a round trip
    (1000, None, (1000, 1000)),                             # no sample: exact
    (1000, {"median": 1000}, (1000, 1000)),                 # no interval (older files)
    (1000, sample_summary(0, 0, 10), (1000, 1000)),         # nothing to scale by
    (1000, sample_summary(1000, 1100, 1200), (1000, 1000))])  # not an interval of the median
def test_carried_interval(value, summary, expected):
    assert overlap.carried_interval(value, summary) == pytest.approx(expected)


def hand_point(bench: str = "sender") -> dict:
    """T_measured 1000 in [990, 1030], T_comm 100, T_comp 900 in [895, 905]: ratio 1.0."""
    return overlap_point(bench, 64, 1000, {
        "t_measured_ns": 1000, "t_comm_ns": 100, "t_comp_ns": 900, "lat0_ns": 0, "ratio": 1.0,
        "sample": sample_summary(1000, 990, 1030), "comp": sample_summary(900, 895, 905)})


@pytest.mark.parametrize("bench,ref,ref_sample,comm", [
    # round trips of 200 in [180, 240]: T_comm 100 in [90, 120]
    ("sender", "ref-pingpong", (200, 180, 240), (90, 120)),
    ("noncontig", "ref-noncontig", (200, 180, 240), (90, 120)),
    # blocking sends and the sequence to several peers are T_comm itself
    ("cpu", "ref-send", (100, 90, 120), (90, 120)),
    ("multi", "ref-multi", (100, 90, 120), (90, 120)),
    # the slowest rank's 400 in [360, 480]: the worst rank's 100 keeps its relative spread
    ("ibcast", "ref-ibcast", (400, 360, 480), (90, 120))])
def test_ratio_interval_from_samples_and_reference(bench, ref, ref_sample, comm):
    run = make_overlap_run([hand_point(bench), reference(ref, 64, *ref_sample)])
    (interval,) = overlap.grid(run, bench).intervals
    # T_comp is the longer part: (T − T_comp)/T_comm, low at (990 − 905)/120, high at
    # (1030 − 895)/90
    assert interval == pytest.approx(((990 - 905) / comm[1], (1030 - 895) / comm[0]))
    assert interval == pytest.approx((85 / 120, 1.5))
    assert not overlap.is_determined(interval)


def test_ratio_interval_from_the_column_reference_the_point_carries():
    # the reference measured right before the point's size (stats.ref: round trips of 200 in
    # [180, 240]) rules over the run's reference point (exact here, which would give width 0.15)
    point = hand_point()
    point["stats"]["ref"] = sample_summary(200, 180, 240)
    run = make_overlap_run([point, reference("ref-pingpong", 64, 200, 200, 200)])
    (interval,) = overlap.grid(run, "sender").intervals
    assert interval == pytest.approx((85 / 120, 1.5))


def test_ratio_interval_without_reference_takes_t_comm_as_exact():
    run = make_overlap_run([hand_point(), reference("ref-pingpong", 128, 200, 100, 400)])
    (interval,) = overlap.grid(run, "sender").intervals
    assert interval == pytest.approx(((990 - 905) / 100, (1030 - 895) / 100))
    assert interval[1] - interval[0] == pytest.approx(0.5)


def test_ratio_interval_of_points_without_times_or_ratio():
    ratio_only = overlap_point("late", 64, 1000, {"ratio": 0.7})
    undefined = overlap_point("late", 64, 2000, {"ratio": None, "t_measured_ns": 5})
    g = overlap.grid(make_overlap_run([ratio_only, undefined]), "late")
    assert g.intervals == [(0.7, 0.7), None]
    assert g.rated == 1 and g.determined == [ratio_only] and g.undetermined == []


def test_nload_has_no_interval():
    point = overlap_point("nload", 64, 2, {"t_measured_ns": 3000, "t_comm_ns": 1000,
                                           "ratio": 2.0, "slowdown": 3.0,
                                           "sample": sample_summary(3000, 1000, 9000)})
    assert overlap.grid(make_overlap_run([point]), "nload").intervals == [None]


@pytest.mark.parametrize("width,determined", [(0.0, True), (0.4, True), (0.41, False),
                                              (math.inf, False)])
def test_determined_up_to_one_class_band(width, determined):
    assert overlap.DETERMINED_WIDTH == 0.4
    assert overlap.is_determined((1.0 - width / 2, 1.0 + width / 2)) is determined


@pytest.mark.parametrize("interval,determined", [
    ((1.3, 2.5), True),        # wide, but every value is "hurts": its class is decided
    ((1.21, math.inf), True),
    ((0.25, 0.79), True),      # partial
    ((-0.2, 0.19), True),      # overlap, down to -0.2
    ((-0.5, 0.1), False),      # reaches far below 0: noise, not a decided overlap
    ((0.7, 1.3), False),       # straddles none and hurts, wider than 0.4
    ((0.1, 0.7), False),
])
def test_an_interval_within_one_class_band_is_decided(interval, determined):
    """mpilens-overlap --decide on stops repeating such a point (decide.c uses the same bands)."""
    assert overlap.is_determined(interval) is determined


def test_undetermined_cells():
    points = noisy_map(eager, top_left, sizes=SIZES[:3], computes=[1000, 16000])
    g = overlap.grid(make_overlap_run(points), "sender")
    assert g.undetermined_cells() == [[False, False, True], [True, True, True]]
    assert len(g.undetermined) == 4 and len(g.determined) == 2


# --- the diagnosis uses determined points ---------------------------------------------------------

def test_undetermined_points_are_left_out_of_the_sentences():
    found = overlap.diagnose(make_overlap_run(noisy_map(eager, top_left)))
    assert found == [
        "eager/rendezvous threshold between 8 KiB and 16 KiB (sender-side map): smaller sends "
        "overlap, larger ones do not",
        "sender-side: overlap for 1 KiB–8 KiB; no overlap for 16 KiB–128 KiB (communication "
        "and computation are serialised); 1 size undetermined (no point determined to ±0.2)",
        "sender-side, over 46 of its 64 points, those determined to ±0.2: 30% overlap, 70% no "
        "overlap"]


def test_undetermined_points_would_have_changed_the_diagnosis():
    # The same ratios taken at face value: the noise is called a class and moves the threshold.
    found = overlap.diagnose(make_overlap_run(
        [map_point("sender", p["params"]["size_bytes"], p["params"]["compute_ns"],
                   p["stats"]["ratio"], p["stats"]["t_comm_ns"])
         for p in noisy_map(eager, top_left)]))
    assert found[0] == ("no eager/rendezvous switch seen in the sender-side map: sends overlap "
                        "at no size measured")
    assert found[1].startswith("sender-side: overlap hurts for 1 KiB–4 KiB")


def test_advice_when_more_than_a_third_is_undetermined():
    noisy = lambda s, c: top_left(s, c) or s == 16 * KIB  # noqa: E731
    found = overlap.diagnose(make_overlap_run(noisy_map(eager, noisy, "receiver")))
    assert found[0] == ("receiver-side: overlap for 1 KiB–8 KiB; no overlap for 32 KiB–128 KiB "
                        "(communication and computation are serialised); 2 sizes undetermined "
                        "(no point determined to ±0.2)")
    # 26 of 64 points
    assert found[2] == f"receiver-side: 41% of points are not determined to ±0.2; {ADVICE}"


def test_no_advice_up_to_a_third():
    found = overlap.diagnose(make_overlap_run(noisy_map(eager, top_left, "receiver")))
    assert not any(ADVICE in s for s in found)


def test_map_with_no_determined_point():
    found = overlap.diagnose(make_overlap_run(noisy_map(eager, lambda s, c: True, "late",
                                                        sizes=SIZES[:2])))
    assert found == ["late receiver: 2 sizes undetermined (no point determined to ±0.2)",
                     f"late receiver: 100% of points are not determined to ±0.2; {ADVICE}"]


def test_map_summary_counts_determined_points():
    summary = overlap.map_summary(make_overlap_run(noisy_map(eager, top_left)), "sender")
    assert (summary.points, summary.determined) == (64, 46)
    assert summary.shares["overlap"] == pytest.approx(14 / 46)
    assert summary.shares["hurts"] == 0
    assert summary.median_ratio == pytest.approx(1.0)


# --- smoothing of column classes ------------------------------------------------------------------

@pytest.mark.parametrize("kinds,expected", [
    ("aba", "aaa"),         # one odd column takes its agreeing neighbours' class
    ("ab", "ab"),           # the ends keep theirs
    ("baa", "baa"),
    ("abba", "abba"),       # a change lasting two columns stays
    ("aabcc", "aabcc"),     # neighbours that disagree leave a column alone
    ("ababa", "aabaa"),     # judged on the classes before smoothing, not as they change
    ("", "")])
def test_smoothed(kinds, expected):
    assert "".join(overlap.smoothed(list(kinds))) == expected


def columns(*ratios: float):
    """A ratio per column of SIZES, the same at every computation time."""
    return lambda size, compute: ratios[SIZES.index(size)]


def test_one_noisy_column_does_not_split_a_range():
    points = noisy_map(columns(0.05, 0.05, 0.5, 0.05, 0.05, 1.0, 1.0, 1.0), lambda s, c: False)
    found = overlap.diagnose(make_overlap_run(points))
    assert ("sender-side: overlap for 1 KiB–16 KiB; no overlap for 32 KiB–128 KiB "
            "(communication and computation are serialised)") in found
    # the shares count points as they are
    assert "sender-side, over its 64 points: 50% overlap, 12% partial overlap, 38% no overlap" \
        in found


def test_two_columns_make_a_range():
    points = noisy_map(columns(0.05, 0.05, 0.5, 0.5, 0.05, 1.0, 1.0, 1.0), lambda s, c: False)
    assert ("sender-side: overlap for 1 KiB–2 KiB; partial overlap for 4 KiB–8 KiB; overlap "
            "for 16 KiB; no overlap for 32 KiB–128 KiB (communication and computation are "
            "serialised)") in overlap.diagnose(make_overlap_run(points))


def test_smoothing_skips_undetermined_columns():
    # 4 KiB is undetermined: 2 KiB's neighbours are 1 KiB and 8 KiB
    points = noisy_map(columns(0.05, 0.5, 1.0, 0.05, 1.0, 1.0, 1.0, 1.0),
                       lambda s, c: s == 4 * KIB)
    assert ("sender-side: overlap for 1 KiB–8 KiB; no overlap for 16 KiB–128 KiB "
            "(communication and computation are serialised); 1 size undetermined (no point "
            "determined to ±0.2)") in overlap.diagnose(make_overlap_run(points))


# --- the method check ----------------------------------------------------------------------------

def control_map(noisy) -> list:
    """A blocking control of ratio 1.0 wherever it is determined."""
    return noisy_map(lambda s, c: 1.0, noisy, "control", sizes=SIZES[:3])


def test_control_median_over_determined_points_only():
    # 18 of the 24 points are noise at 1.6: over all points the median would warn
    found = overlap.diagnose(make_overlap_run(control_map(lambda s, c: c >= 4000)))
    assert found == [
        "method check: the blocking control's median ratio is 1.00 over 6 of its 24 points, "
        "those determined to ±0.2 (must be about 1)",
        f"blocking control: 75% of points are not determined to ±0.2; {ADVICE}"]
    check = overlap.control_check(make_overlap_run(control_map(lambda s, c: c >= 4000)))
    assert (check.points, check.determined, check.median) == (24, 6, 1.0)


def test_control_check_not_made_with_too_few_determined_points():
    noisy = lambda s, c: c >= 2000 and (s, c) != (KIB, 2000)  # noqa: E731
    found = overlap.diagnose(make_overlap_run(control_map(noisy)))
    assert found == [
        "method check: not made, the blocking control has only 4 of its 24 points determined "
        "to ±0.2 and its median needs at least 5",
        f"blocking control: 83% of points are not determined to ±0.2; {ADVICE}"]
    assert not any(s.startswith("warning:") for s in found)


def test_control_check_not_made_with_few_points():
    points = [map_point("control", KIB, c, 1.0, t_comm(KIB)) for c in COMPUTE[:3]]
    assert overlap.diagnose(make_overlap_run(points)) == [
        "method check: not made, the blocking control has only 3 points determined to ±0.2 and "
        "its median needs at least 5"]


def test_control_warning_kept_over_determined_points():
    points = noisy_map(lambda s, c: 1.5, lambda s, c: c >= 64000, "control", sizes=SIZES[:3])
    found = overlap.diagnose(make_overlap_run(points))
    assert found[0] == ("method check: the blocking control's median ratio is 1.50 over 18 of "
                        "its 24 points, those determined to ±0.2 (must be about 1)")
    assert found[1].startswith("warning: the blocking control cannot overlap, yet its median "
                               "ratio is 1.50 instead of about 1")


# --- comparison ----------------------------------------------------------------------------------

def test_compare_shares_use_determined_points():
    mpich = {"library": "MPICH Version: 4.0.2", "flavour": "mpich"}
    # A's rendezvous sizes are all noise: only its eager points are determined
    run_a = make_overlap_run(noisy_map(eager, lambda s, c: s > 8 * KIB))
    run_b = make_overlap_run(noisy_map(eager, lambda s, c: False), mpi=mpich)
    assert overlap.overlap_share(run_a, "sender") == 1.0
    assert overlap.overlap_share(run_b, "sender") == pytest.approx(4 / 8)
    assert overlap.compare(run_a, run_b)[0] == (
        "biggest differences: sender-side: Open MPI overlaps at 100% of determined points, "
        "MPICH at 50%")


def test_compare_control_not_made():
    noisy = lambda s, c: c >= 2000  # noqa: E731
    found = overlap.compare(make_overlap_run(control_map(noisy)),
                            make_overlap_run(control_map(lambda s, c: False)))
    assert found == ["method check, median ratio of the blocking control (about 1 when the "
                     "measurement is sound): A not made (too few points determined to ±0.2), "
                     "B 1.00"]


# --- the fixture ---------------------------------------------------------------------------------

def test_fixture_has_determined_and_undetermined_points():
    run = results.load(OVERLAP_FIXTURE)
    for bench in ("sender", "control"):
        g = overlap.grid(run, bench)
        cells = g.undetermined_cells()
        assert g.determined and g.undetermined
        # the top-left corner (1 KiB under 32 µs of computation) is noise, the middle is not
        assert cells[-1][0] and not cells[2][3], bench
