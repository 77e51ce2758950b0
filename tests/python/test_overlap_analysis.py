"""The overlap family's metric, maps, diagnosis and comparison, on runs built in code."""

from __future__ import annotations

import math

import pytest

from conftest import (OVERLAP_FIXTURE, make_overlap_run, make_run, map_point, overlap_note,
                      overlap_point)
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
        stats = {"t_measured_ns": 3000.0, "t_comm_ns": 2000.0, "t_comp_ns": 1000 << index,
                 "ratio": ratio,
                 "per_rank": {"t_measured_ns": [3000.0] * 4, "t_comm_ns": [2000.0] * 4,
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
