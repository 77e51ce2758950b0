"""The overlap family's metric, maps, diagnosis and comparison, on runs built in code."""

from __future__ import annotations

import copy
import math

import pytest

from conftest import (OVERLAP_FIXTURE, make_overlap_run, make_run, map_point, overlap_note,
                      overlap_point, sample_summary)
from mpilens import results
from mpilens.analysis import overlap
from mpilens.errors import MpilensError

KIB = 1024
# Density 2 from 1 KiB to 16 MiB, as the default preset: 8192 is followed by 11585.
SIZES = [round(KIB * 2 ** (k / 2)) for k in range(29)]
COMPUTE = [1000 << k for k in range(11)]  # 1 µs - 1.024 ms


def t_comm(size: int) -> float:
    return 1000 + size / 10


def sender_map(ratio_of, bench: str = "sender", sizes=SIZES, computes=COMPUTE) -> list:
    """A map whose ratio at (size, compute) is ratio_of(size, compute)."""
    return [map_point(bench, size, compute, ratio_of(size, compute), t_comm(size))
            for size in sizes for compute in computes]


def eager_below(limit: int, low: float = 0.05, high: float = 1.0):
    return lambda size, compute: low if size <= limit else high


def ref_send(size: int, send_ns: float) -> dict:
    return {"type": "point", "family": "overlap", "bench": "ref-send",
            "key": f"ref-send/size_bytes={size}", "params": {"size_bytes": size},
            "stats": {"send_ns": send_ns}}


# --- the metric ----------------------------------------------------------------------------------

@pytest.mark.parametrize("measured,comm,comp,expected", [
    (10, 4, 10, 0.0),     # perfect overlap: as long as the longer part
    (14, 4, 10, 1.0),     # serialised
    (20, 4, 10, 2.5),     # slower than serialised
    (12, 10, 4, 0.5),     # communication-bound, half the computation hidden
    (10, 10, 10, 0.0)])
def test_ratio(measured, comm, comp, expected):
    assert overlap.ratio(measured, comm, comp) == pytest.approx(expected)


@pytest.mark.parametrize("measured,comm,comp", [
    (10, 0, 10), (10, 10, 0), (10, -3, 10), (10, 10, -1), (None, 4, 10), (10, None, 4),
    (10, 4, None), (10, math.nan, 4)])
def test_ratio_undefined(measured, comm, comp):
    assert overlap.ratio(measured, comm, comp) is None


@pytest.mark.parametrize("measured,comm,comp,osu,imb", [
    (10, 4, 10, 100.0, 100.0),   # perfect overlap
    (14, 4, 10, 0.0, 0.0),       # serialised
    (12, 4, 10, 50.0, 50.0),     # half the communication hidden
    (20, 4, 10, 0.0, 0.0),       # worse than serialised: both floor at 0
    (11, 10, 4, 30.0, 75.0),     # communication-bound: OSU counts the communication hidden,
    (13, 10, 5, 20.0, 40.0)])    # IMB the shorter part hidden
def test_other_suites_metrics(measured, comm, comp, osu, imb):
    assert overlap.osu_overlap_pct(measured, comm, comp) == pytest.approx(osu)
    assert overlap.imb_overlap_pct(measured, comm, comp) == pytest.approx(imb)


def test_other_suites_metrics_undefined():
    assert overlap.osu_overlap_pct(10, 0, 4) is None
    assert overlap.imb_overlap_pct(10, 4, 0) is None
    assert overlap.osu_overlap_pct(None, 4, 4) is None


def test_osu_above_100_when_faster_than_the_computation():
    # OSU floors at 0 but not at 100, unlike IMB (docs/overlap.md)
    assert overlap.osu_overlap_pct(9, 4, 10) == pytest.approx(125.0)
    assert overlap.imb_overlap_pct(9, 4, 10) == pytest.approx(100.0)


@pytest.mark.parametrize("value,kind", [(-0.1, "overlap"), (0.19, "overlap"), (0.2, "partial"),
                                        (0.79, "partial"), (0.8, "none"), (1.2, "none"),
                                        (1.21, "hurts")])
def test_classify(value, kind):
    assert overlap.classify(value) == kind


# --- maps ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("bench", overlap.BENCHES)
def test_grid_of_every_benchmark(bench):
    y = 2 if bench == "nload" else 4000
    points = [overlap_point(bench, size, yy, {"ratio": ratio, "t_comm_ns": 100.0 * size})
              for size, yy, ratio in [(64, y, 0.5), (8, y, None), (8, 2 * y, 1.5)]]
    g = overlap.grid(make_overlap_run(points), bench)
    assert g.y_key == ("threads" if bench == "nload" else "compute_ns")
    assert g.sizes == [8, 64] and g.ys == [y, 2 * y]
    ratios = g.ratios
    assert math.isnan(ratios[0][0]) and ratios[0][1] == 0.5
    assert ratios[1][0] == 1.5 and math.isnan(ratios[1][1])  # no point at (64, 2y)
    assert g.t_comm == [800.0, 6400.0]
    assert len(g.points) == 3


@pytest.mark.parametrize("bench", ["ref-pingpong", "ref-send", "ref-ibcast", "teleport"])
def test_references_are_not_maps(bench):
    with pytest.raises(MpilensError, match=f'"{bench}" is not an overlap benchmark with a map'):
        overlap.grid(make_overlap_run([]), bench)


def test_fixture_grids_cover_their_points():
    run = results.load(OVERLAP_FIXTURE)
    for bench in overlap.benches_present(run):
        g = overlap.grid(run, bench)
        assert len(g.points) == len(run.points_of(bench))
        assert g.sizes == sorted(g.sizes) and g.ys == sorted(g.ys)
        assert sum(not math.isnan(v) for row in g.ratios for v in row) <= len(g.points)


# --- classification of size columns ---------------------------------------------------------------

def test_sender_ranges_and_shares():
    found = overlap.diagnose(make_overlap_run(sender_map(eager_below(8192))))
    assert ("sender-side: overlap for 1 KiB–8 KiB; no overlap for 11.3 KiB–16 MiB "
            "(communication and computation are serialised)") in found
    eager = sum(size <= 8192 for size in SIZES)
    share = round(100 * eager / len(SIZES))
    assert (f"sender-side, over its {len(SIZES) * len(COMPUTE)} points: {share}% overlap, "
            f"{100 - share}% no overlap") in found


def test_every_class_is_named_and_explained_once():
    def ratio_of(size, compute):
        if size < 4096:
            return 0.1
        if size < 65536:
            return 0.5
        if size < 1 << 20:
            return 1.0 if size < 262144 else 1.6
        return 1.0

    found = overlap.diagnose(make_overlap_run(sender_map(ratio_of, "receiver")))
    assert ("receiver-side: overlap for 1 KiB–2.83 KiB; partial overlap for 4 KiB–45.3 KiB; "
            "no overlap for 64 KiB–181 KiB (communication and computation are serialised); "
            "overlap hurts for 256 KiB–724 KiB (slower than communicating, then computing); "
            "no overlap for 1 MiB–16 MiB") in found


def test_column_score_uses_the_region_where_computation_hides_communication():
    # Below the T_comm line (T_comp < T_comm) the column looks serialised, above it overlaps.
    size = 1 << 20                        # T_comm = 105.9 µs
    points = sender_map(lambda s, c: 0.05 if c >= t_comm(s) else 1.0, sizes=[size])
    assert overlap.column_score(points) == pytest.approx(0.05)
    # A column that never reaches the line is judged on all its points.
    low = sender_map(lambda s, c: 0.9 if c < 4000 else 0.3, sizes=[size], computes=COMPUTE[:4])
    assert overlap.column_score(low) == pytest.approx(0.6)


def test_map_without_defined_ratio():
    points = [overlap_point("late", 64, 1000, {"ratio": None})]
    assert overlap.diagnose(make_overlap_run(points)) == [
        "late receiver: no point has a defined ratio (T_comm or T_comp was not positive)"]


# --- eager/rendezvous threshold -------------------------------------------------------------------

def test_threshold_found():
    found = overlap.diagnose(make_overlap_run(sender_map(eager_below(8192))))
    assert ("eager/rendezvous threshold between 8 KiB and 11.3 KiB (sender-side map): smaller "
            "sends overlap, larger ones do not") in found
    assert overlap.threshold(make_overlap_run(sender_map(eager_below(8192)))).small_overlap


def test_reverse_switch_found():
    # Larger sends overlapping better (a receiver-driven copy): found and worded that way.
    clean = eager_below(4096)
    run = make_overlap_run(sender_map(lambda s, c: 1.0 - clean(s, c) + 0.05))
    found = overlap.threshold(run)
    assert (found.last_eager, found.first_rendezvous, found.small_overlap) == (4096, 5793, False)
    assert any(sentence.startswith("the sender-side map changes between 4 KiB and 5.66 KiB: from "
                                   "5.66 KiB on, sends overlap better") for sentence in overlap.diagnose(run))


@pytest.mark.parametrize("limit", [2048, 65536, 1 << 20])
def test_threshold_withstands_noisy_cells_and_columns(limit):
    noise = {(SIZES[1], 256000): 1.0, (SIZES[2], 512000): 1.4,   # eager cells that look serialised
             (SIZES[-2], 64000): 0.0, (SIZES[-1], 1024000): 0.1}
    clean = eager_below(limit)
    points = sender_map(lambda s, c: noise.get((s, c), clean(s, c)))
    # A whole column on the wrong side, as one bad size can be, must not move the threshold.
    odd = SIZES[-4]
    points = [map_point("sender", p["params"]["size_bytes"], p["params"]["compute_ns"], 0.05,
                        p["stats"]["t_comm_ns"]) if p["params"]["size_bytes"] == odd else p
              for p in points]
    found = overlap.threshold(make_overlap_run(points))
    above = [size for size in SIZES if size > limit][0]
    assert (found.last_eager, found.first_rendezvous) == (limit, above)


def test_split_index_reverse_direction():
    # larger sizes overlapping better: the reverse switch
    assert overlap.split_index([0.9, 0.9, 0.1, 0.1], small_overlap=False) == 2
    assert overlap.split_index([0.9, 0.1, 0.9, 0.1, 0.1], small_overlap=False) == 1  # ties: the first


def test_split_index():
    assert overlap.split_index([0.1, 0.1, 0.9, 0.9]) == 2
    assert overlap.split_index([0.1, 0.9, 0.1, 0.9, 0.9, 0.9]) == 1   # fewest on the wrong side
    assert overlap.split_index([0.1, 0.1]) == 2
    assert overlap.split_index([0.9, 0.1, 0.9]) == 0
    assert overlap.split_index([]) == 0


@pytest.mark.parametrize("ratio,where", [(0.05, "at every size measured"),
                                         (1.0, "at no size measured")])
def test_no_switch_seen(ratio, where):
    found = overlap.diagnose(make_overlap_run(sender_map(lambda s, c: ratio)))
    assert (f"no eager/rendezvous switch seen in the sender-side map: sends overlap "
            f"{where}") in found
    assert not any(s.startswith("eager/rendezvous threshold") for s in found)


# --- CPU overhead --------------------------------------------------------------------------------

def cpu_map(cost: float, sizes=SIZES[:10]) -> list:
    """T_measured = T_comp + cost at every point."""
    points = []
    for size in sizes:
        for compute in COMPUTE[:3]:
            measured = compute + cost
            points.append(overlap_point("cpu", size, compute, {
                "t_measured_ns": measured, "t_comm_ns": 300.0, "t_comp_ns": compute,
                "lat0_ns": 0, "ratio": overlap.ratio(measured, 300.0, compute)}))
    return points


def test_cpu_overhead_up_to_the_threshold():
    sends = [ref_send(size, 300.0 if size <= 8192 else 5000.0) for size in SIZES]
    points = sender_map(eager_below(8192)) + cpu_map(600) + sends
    found = overlap.diagnose(make_overlap_run(points))
    assert ("a non-blocking send of up to 8 KiB costs the sender 600 ns of CPU beyond its "
            "computation; a blocking MPI_Send costs 300 ns") in found


def test_cpu_overhead_without_threshold_or_references():
    found = overlap.diagnose(make_overlap_run(cpu_map(1500)))
    assert ("a non-blocking send of up to 4 KiB costs the sender 1.5 µs of CPU beyond its "
            "computation") in found


# --- N threads load ------------------------------------------------------------------------------

def nload(slowdown_of) -> list:
    points = []
    for size in [1, 64, 4096, 65536, 1 << 20]:
        for threads in range(5):
            slowdown = slowdown_of(size, threads)
            points.append(overlap_point("nload", size, threads, {
                "t_measured_ns": 1000 * slowdown, "t_comm_ns": 1000.0,
                "ratio": slowdown - 1, "slowdown": slowdown}))
    return points


def test_nload_pathology():
    points = nload(lambda size, threads: (150.0 if size == 4096 else 20.0)
                   if threads >= 3 and size <= 65536 else 1.1)
    found = overlap.diagnose(make_overlap_run(points))
    assert ("N threads load: with 3–4 computing threads, messages of 1 B–64 KiB are up to 150× "
            "slower than without load: a thread-scheduling pathology (the communicating thread "
            "waits for the scheduler's millisecond time slices)") in found


def test_nload_single_thread_count():
    found = overlap.diagnose(make_overlap_run(nload(
        lambda size, threads: 40.0 if (threads, size) == (1, 64) else 1.0)))
    assert any(s.startswith("N threads load: with 1 computing thread, messages of 64 B are up "
                            "to 40×") for s in found)


def test_nload_undisturbed():
    found = overlap.diagnose(make_overlap_run(nload(lambda size, threads: 1 + threads / 10)))
    assert found == ["N threads load: the computing threads do not disturb communication "
                     "beyond ×1.4"]


# --- control, collectives, notes -----------------------------------------------------------------

def control(median: float) -> list:
    return sender_map(lambda s, c: median, "control", sizes=SIZES[:3], computes=COMPUTE[:3])


def test_control_near_one():
    assert overlap.diagnose(make_overlap_run(control(0.97))) == [
        "method check: the blocking control's median ratio is 0.97 over its 9 points (must be "
        "about 1)"]


@pytest.mark.parametrize("median", [0.42, 1.6])
def test_control_off_warns(median):
    found = overlap.diagnose(make_overlap_run(control(median)))
    assert found[0] == (f"method check: the blocking control's median ratio is {median:.2f} "
                        "over its 9 points (must be about 1)")
    assert found[1].startswith("warning: the blocking control cannot overlap, yet its median "
                               f"ratio is {median:.2f} instead of about 1: this run's ratios "
                               "are unreliable")
    assert "noisy or oversubscribed" in found[1]
    assert len(found) == 2


def collective(bench: str, worst: list, ratio: float = 0.9, per_rank: bool = False) -> list:
    points = []
    for index, rank in enumerate(worst):
        ratios = [0.1, 0.2, 0.3, 0.4]
        ratios[rank] = ratio
        comp = 1000 << index
        # T_measured fits the worst ratio: never shorter than the computation alone.
        measured = max(2000.0, comp) + ratio * min(2000.0, comp)
        stats = {"t_measured_ns": measured, "t_comm_ns": 2000.0, "t_comp_ns": comp,
                 "ratio": ratio,
                 "per_rank": {"t_measured_ns": [measured] * 4, "t_comm_ns": [2000.0] * 4,
                              "t_comp_ns": [1000 << index] * 4, "ratio": ratios}}
        if not per_rank:
            stats["worst_rank"] = rank
        points.append(overlap_point(bench, 4096, 1000 << index, stats, ranks=4))
    return points


@pytest.mark.parametrize("per_rank", [False, True])
def test_collective_classification_and_worst_rank(per_rank):
    found = overlap.diagnose(make_overlap_run(collective("iallreduce", [2, 2, 1, 2],
                                                         per_rank=per_rank), ranks=4))
    assert found == [
        "MPI_Iallreduce: no overlap for 4 KiB (communication and computation are serialised)",
        "MPI_Iallreduce, over its 4 points: 100% no overlap",
        "MPI_Iallreduce: rank 2 is most often the slowest to overlap (the worst rank at 75% of "
        "points)"]


def test_skip_notes_are_reported():
    run = make_overlap_run(control(1.0), notes=[
        overlap_note("multi needs at least 3 ranks"), overlap_note("resumed", "info")])
    assert overlap.diagnose(run)[-1] == "skipped: multi needs at least 3 ranks"
    assert not any("resumed" in s for s in overlap.diagnose(run))


def test_no_overlap_points_no_sentences():
    assert overlap.diagnose(make_overlap_run([], notes=[overlap_note("all skipped")])) == []
    assert overlap.diagnose(make_run([])) == []


def test_diagnosis_of_fixture_has_every_kind():
    found = overlap.diagnose(results.load(OVERLAP_FIXTURE))
    starts = ("method check: ", "eager/rendezvous threshold between ", "sender-side: ",
              "a non-blocking send of up to ", "N threads load: ", "MPI_Ibcast: rank ",
              "skipped: ")
    for start in starts:
        assert any(s.startswith(start) for s in found), start


# --- comparison ----------------------------------------------------------------------------------

def comparison_runs():
    mpi_a = {"library": "Open MPI v4.1.4", "flavour": "openmpi"}
    mpi_b = {"library": "MPICH Version: 4.0.2", "flavour": "mpich"}
    a = make_overlap_run(sender_map(eager_below(8192)) + sender_map(eager_below(2048), "receiver")
                         + control(0.97) + nload(lambda s, t: 1.2), mpi=mpi_a)
    b = make_overlap_run(sender_map(eager_below(65536)) + sender_map(eager_below(-1), "receiver")
                         + control(1.05) + nload(lambda s, t: 80.0 if t == 4 else 1.0),
                         mpi=mpi_b)
    return a, b


def test_compare_sentences():
    a, b = comparison_runs()
    found = overlap.compare(a, b)
    share = lambda limit: round(100 * sum(s <= limit for s in SIZES) / len(SIZES))  # noqa: E731
    assert found[0] == (f"biggest differences: sender-side: MPICH overlaps at {share(65536)}% "
                        f"of determined points, Open MPI at {share(8192)}%; receiver-side: "
                        f"Open MPI overlaps at {share(2048)}% of determined points, MPICH at 0%")
    # the biggest differences are not repeated
    assert not any(s.startswith(("sender-side:", "receiver-side:")) for s in found)
    assert ("where the sender-side map switches with size: Open MPI between 8 KiB and 11.3 KiB "
            "(smaller sends overlap); MPICH between 64 KiB and 90.5 KiB (smaller sends overlap)") in found
    assert ("method check, median ratio of the blocking control (about 1 when the measurement "
            "is sound): Open MPI 0.97, MPICH 1.05") in found
    assert "N threads load, worst slowdown: Open MPI ×1.2, MPICH ×80" in found


def test_compare_same_library_names_a_and_b():
    a, _ = comparison_runs()
    found = overlap.compare(a, a)
    assert found[:3] == ["no benchmark's share of overlapping points differs by 10% or more",
                         "sender-side: A overlaps at 24% of determined points, B at 24%",
                         "receiver-side: A overlaps at 10% of determined points, B at 10%"]
    assert "where the sender-side map switches with size: A between 8 KiB and 11.3 KiB (smaller " \
           "sends overlap); B between 8 KiB and 11.3 KiB (smaller sends overlap)" in found


def test_compare_without_common_benchmarks():
    assert overlap.compare(make_overlap_run(control(1.0)), make_overlap_run([])) == []


# --- numbers that cannot be true ------------------------------------------------------------------

BIG_COMPUTE = [256000 << k for k in range(3)]  # 256 µs - 1 ms: T_comp above T_comm up to 2 MiB


def ref_pingpong(size: int, one_way: float, spread: float = 0.02) -> dict:
    """A ping-pong reference whose round trips' median interval is ± spread about 2·one_way."""
    rtt = 2 * one_way
    return {"type": "point", "family": "overlap", "bench": "ref-pingpong",
            "key": f"ref-pingpong/size_bytes={size}", "params": {"size_bytes": size},
            "stats": {"one_way_ns": one_way,
                      "sample": sample_summary(rtt, rtt * (1 - spread), rtt * (1 + spread))}}


def test_issue_run_of_impossible_ratios_is_invalid_and_never_overlap():
    # Issue 17: ratios of -1 to -166 at every point; the report said "sends overlap at every
    # size". T_comp exceeds T_comm everywhere here, so T_measured lies below T_comp: the OSU
    # overlap is far above 100%.
    points = sender_map(lambda size, compute: -1 - size / 100000, sizes=SIZES[:6],
                        computes=BIG_COMPUTE)
    run = make_overlap_run(points)
    assert overlap.osu_overlap_pct(*overlap._ingredients(points[0])) > 100
    found = overlap.diagnose(run)
    assert found == [f"warning: sender-side: INVALID, every point: {overlap.INVALID_OSU} "
                     "at 18 points"]
    assert not any("overlap for" in s or "sends overlap" in s for s in found)
    assert overlap.threshold(run) is None
    summary = overlap.map_summary(run, "sender")
    assert summary.determined == 0 and summary.shares == {}
    assert summary.invalid == {overlap.INVALID_OSU: 18}


def test_negative_ratio_beyond_its_interval_is_invalid():
    # Communication-bound (T_comm 1.6 ms against 1 µs of computation): T_measured lies between
    # T_comp and T_comm, so OSU stays under 100% but the ratio is below 0.
    point = map_point("sender", 16 << 20, 1000, -0.5, t_comm(16 << 20))
    g = overlap.grid(make_overlap_run([point]), "sender")
    assert g.invalid == [overlap.INVALID_NEGATIVE]
    assert g.determined == [] and g.undetermined == [] and g.valid == 0
    assert g.invalid_cells() == [[overlap.INVALID_NEGATIVE]]


def test_negative_ratio_within_its_noise_is_valid_overlap():
    # -0.1 ± 0.19: its interval reaches above 0, so it is noise about perfect overlap.
    points = [map_point("sender", size, compute, -0.1, t_comm(size), width=0.38)
              for size in SIZES[:3] for compute in BIG_COMPUTE]
    run = make_overlap_run(points)
    g = overlap.grid(run, "sender")
    assert g.invalid == [None] * 9 and len(g.determined) == 9
    assert overlap.diagnose(run)[1] == "sender-side: overlap for 1 KiB–2 KiB"


def test_invalid_points_are_left_out_and_named():
    valid = sender_map(eager_below(8192), sizes=SIZES[:12], computes=BIG_COMPUTE)
    broken = map_point("sender", SIZES[12], BIG_COMPUTE[0], -3.0, t_comm(SIZES[12]))
    run = make_overlap_run(valid + [broken])
    found = overlap.diagnose(run)
    assert found[1] == ("sender-side: overlap for 1 KiB–8 KiB; no overlap for 11.3 KiB–45.3 KiB "
                        "(communication and computation are serialised)")
    assert found[2] == "sender-side, over 36 of its 37 points, those determined to ±0.2: " \
                       "58% overlap, 42% no overlap"
    assert found[3] == (f"warning: sender-side: 1 of its 37 points are invalid and left out: "
                        f"{overlap.INVALID_OSU} at 1 point")
    # the valid points alone give what they gave before
    assert overlap.diagnose(make_overlap_run(valid))[1] == found[1]


def comp_point(size: int, compute: int, took: float, spread: float) -> dict:
    """A sender point whose computation took `took` (interval ± spread·took) for compute asked."""
    point = map_point("sender", size, compute, 1.0, t_comm(size))
    stats = point["stats"]
    stats["t_comp_ns"] = took
    stats["t_measured_ns"] = took + t_comm(size)
    stats["comp"] = sample_summary(took, took * (1 - spread), took * (1 + spread))
    return point


@pytest.mark.parametrize("took,spread,reason", [
    (2.0, 0.01, overlap.INVALID_COMP),   # twice as long as asked, beyond its interval
    (1.1, 0.01, None),                   # 10% over: within the drift allowed
    (2.0, 0.5, None),                    # twice, but its interval reaches down to what was asked
])
def test_computation_slowed_by_a_competitor(took, spread, reason):
    compute = BIG_COMPUTE[0]
    g = overlap.grid(make_overlap_run([comp_point(KIB, compute, took * compute, spread)]),
                     "sender")
    assert g.invalid == [reason]


def lat0_run(lat0: float, lat0_spread: float = 0.02) -> list:
    return ([ref_pingpong(0, lat0, lat0_spread)]
            + [ref_pingpong(size, t_comm(size)) for size in SIZES[:6]])


def test_wrong_lat0_invalidates_the_points_that_subtract_it():
    # Issue 17: a 0-byte ping-pong of 1.1 ms next to 5.8 µs at 11 KiB.
    points = sender_map(lambda s, c: 0.05, sizes=SIZES[:6], computes=BIG_COMPUTE)
    for point in points:
        point["stats"]["lat0_ns"] = 1.1e6
    cpu = sender_map(lambda s, c: 1.0, "cpu", sizes=SIZES[:6], computes=BIG_COMPUTE)
    run = make_overlap_run(points + cpu + lat0_run(1.1e6))
    assert overlap.lat0_wrong(run)
    assert set(overlap.grid(run, "sender").invalid) == {overlap.INVALID_LAT0}
    # cpu subtracts nothing (lat0_ns 0): unaffected
    assert set(overlap.grid(run, "cpu").invalid) == {None}
    assert overlap.diagnose(run)[0].startswith("warning: sender-side: INVALID, every point: "
                                               "0-byte reference slower")


@pytest.mark.parametrize("lat0,spread", [
    (1000.0, 0.02),    # as fast as the smallest sizes
    (1500.0, 0.5),     # slower than a few sizes, but not beyond its noise
])
def test_plausible_lat0_is_valid(lat0, spread):
    points = sender_map(lambda s, c: 0.05, sizes=SIZES[:6], computes=BIG_COMPUTE)
    for point in points:
        point["stats"]["lat0_ns"] = lat0
    run = make_overlap_run(points + lat0_run(lat0, spread))
    assert not overlap.lat0_wrong(run)
    assert set(overlap.grid(run, "sender").invalid) == {None}


@pytest.mark.parametrize("median,invalid", [(1.5, True), (0.5, True), (1.1, False), (0.9, False)])
def test_control_off_beyond_noise_invalidates_the_maps(median, invalid):
    sender = sender_map(eager_below(4096), sizes=SIZES[:6], computes=BIG_COMPUTE)
    run = make_overlap_run(control(median) + sender)
    assert overlap.control_off(run) is invalid
    g = overlap.grid(run, "sender")
    assert set(g.invalid) == ({overlap.INVALID_CONTROL} if invalid else {None})
    # the control itself is not judged by itself: its sentences stay the method check's
    assert set(overlap.grid(run, "control").invalid) == {None}
    found = overlap.diagnose(run)
    assert any(s.startswith("method check:") for s in found)
    assert (overlap.threshold(run) is None) is invalid


def test_control_off_within_its_noise_is_not_invalid():
    # median 1.3, but every interval reaches down to 1.1: not beyond noise
    points = sender_map(lambda s, c: 1.3, "control", sizes=SIZES[:3], computes=COMPUTE[:3])
    for point in points:
        point["stats"]["sample"] = sample_summary(
            point["stats"]["t_measured_ns"],
            point["stats"]["t_measured_ns"] - 0.2 * point["stats"]["t_comp_ns"],
            point["stats"]["t_measured_ns"] + 0.1 * point["stats"]["t_comp_ns"])
    assert not overlap.control_off(make_overlap_run(points))


def progress_threads(running: list) -> dict:
    return {"progress_setting": {"label": "thread:yield",
                                 "library": {"running_per_rank": running}}}


def test_ranks_and_progress_threads_beyond_the_cores_invalidate_the_maps():
    sender = sender_map(eager_below(4096), sizes=SIZES[:6], computes=BIG_COMPUTE)
    crowded = make_overlap_run(sender, cpus_online=2, binding=["0-1", "0-1"],
                               **progress_threads([True, True]))
    reason = "not trustworthy: 2 ranks and 2 progress threads share 2 cores"
    assert set(overlap.grid(crowded, "sender").invalid) == {reason}
    assert overlap.diagnose(crowded) == [
        f"warning: sender-side: INVALID, every point: {reason} at 18 points"]
    # two ranks on two cores without a thread: valid
    quiet = make_overlap_run(sender, cpus_online=2, binding=["0", "1"])
    assert set(overlap.grid(quiet, "sender").invalid) == {None}
    # two ranks bound to one core share it, whatever the machine has
    bound = make_overlap_run(sender, cpus_online=4, binding=["0", "0"])
    assert set(overlap.grid(bound, "sender").invalid) == {
        "not trustworthy: 2 ranks share 1 core"}


def test_communicating_threads_beyond_the_cores_invalidate_the_threads_map():
    # 2 ranks bound to a core each: the sender map fits; the threads map runs 3 threads in each
    # busy rank (2 more than the rank's own), 6 on 2 cores, and is refused with their count
    meta = {"cpus_online": 2, "binding": ["0", "1"]}
    sender = sender_map(eager_below(4096), sizes=SIZES[:3], computes=BIG_COMPUTE)
    threads = sender_map(lambda s, c: 0.5, "threads", sizes=SIZES[:3], computes=BIG_COMPUTE)
    for point in threads:
        point["params"]["comm_threads"] = 3
    run = make_overlap_run(sender + threads, **meta)
    assert set(overlap.grid(run, "sender").invalid) == {None}
    assert set(overlap.grid(run, "threads").invalid) == {
        "not trustworthy: 2 ranks and 4 communicating threads share 2 cores"}
    # on 8 cores the same 6 threads fit
    roomy = make_overlap_run(sender + threads, cpus_online=8, binding=["0-3", "4-7"])
    assert set(overlap.grid(roomy, "threads").invalid) == {None}


def test_sleeping_ranks_do_not_crowd_point_to_point_maps():
    # 4 ranks on 2 cores: ranks 2 and 3 sleep in sender, but compute in the collectives
    meta = {"ranks": 4, "cpus_online": 2, "hosts": ["vm"] * 4, "binding": ["0-1"] * 4}
    sender = sender_map(eager_below(4096), sizes=SIZES[:3], computes=BIG_COMPUTE)
    bcast = sender_map(lambda s, c: 0.5, "ibcast", sizes=SIZES[:3], computes=BIG_COMPUTE)
    run = make_overlap_run(sender + bcast, **meta)
    assert set(overlap.grid(run, "sender").invalid) == {None}
    assert set(overlap.grid(run, "ibcast").invalid) == {"not trustworthy: 4 ranks share 2 cores"}


def test_cpu_overhead_ignores_invalid_points():
    good = cpu_map(1500)
    bad = copy.deepcopy(good[0])
    bad["key"] += "-x"
    bad["params"]["compute_ns"] = 3 << 20
    bad["stats"].update(t_comp_ns=3 << 20, t_measured_ns=(3 << 20) - 10**6, ratio=-5.0)
    run = make_overlap_run(good + [bad])
    assert overlap.grid(run, "cpu").invalid[-1] == overlap.INVALID_OSU
    assert overlap.cpu_overhead(run) == overlap.cpu_overhead(make_overlap_run(good))


@pytest.mark.parametrize(
    "param, off, line, reason",
    [
        ("compute_ns", COMPUTE[2], "rows", overlap.INVALID_CONTROL),
        ("size_bytes", SIZES[1], "columns", overlap.INVALID_CONTROL_SIZE),
    ],
)
def test_control_off_along_one_line_invalidates_that_line(param, off, line, reason):
    # The blocking control reads 2 after a 4 µs computation (communication then costs twice its
    # reference), or at one size at every computation time (a lone transfer taking twice the
    # half round trip; Intel MPI's shared memory read 0.3 and 2 at neighbouring sizes), and 1
    # elsewhere: only that row or column of every map is invalid, with its own reason, and the
    # run stays valid. The sender map has a row and a column more than the control: a row the
    # control did not measure takes its verdict over all its points (1), a column none (valid).
    control_map = sender_map(lambda s, c: 2.0 if {"size_bytes": s, "compute_ns": c}[param] == off else 1.0,
                             "control", sizes=SIZES[:4], computes=COMPUTE[:3])
    sender = sender_map(eager_below(4096), sizes=SIZES[:5], computes=COMPUTE[:4])
    run = make_overlap_run(control_map + sender)
    verdict = overlap.control_verdict(run)
    assert verdict.rows == {c: line == "rows" and c == off for c in COMPUTE[:3]}
    assert verdict.columns == {s: line == "columns" and s == off for s in SIZES[:4]}
    assert verdict.run is False and not overlap.control_off(run)
    g = overlap.grid(run, "sender")
    for p, got in zip(g.points, g.invalid):
        assert got == (reason if p["params"][param] == off else None), p["key"]
    assert set(overlap.grid(run, "control").invalid) == {None}


def test_the_openmp_kernel_is_named_and_the_time_kernel_is_not():
    points = sender_map(lambda size, compute: 0.1)
    fixture = make_overlap_run(points)
    openmp = make_overlap_run(points, options={**fixture.meta["options"], "kernel": "openmp",
                                               "omp-threads": "4"})
    timed = make_overlap_run(points, options={**fixture.meta["options"], "kernel": "time"})
    named = [s for s in overlap.diagnose(openmp) if s.startswith("computation:")]
    assert named == [overlap._kernel_sentences(openmp)[0]]
    assert "OpenMP parallel region of 4 threads" in named[0] and "--kernel openmp" in named[0]
    # the rank's own busy loop, and files written before --kernel existed, say nothing
    assert not [s for s in overlap.diagnose(timed) + overlap.diagnose(fixture)
                if s.startswith("computation:")]
