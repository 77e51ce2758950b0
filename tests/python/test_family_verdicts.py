"""The report's first screen for every family (issue 19): each family's verdict, and the costed
symptoms of progress (loss without help, a thread's hidden CPU) and map (what the launch order
costs), on the synthetic runs of each family's analysis tests, whose answers are known."""

from __future__ import annotations

import pytest

from mpilens import families, report_summary, results
from mpilens.analysis import coll, map_costs, piggyback, progress_costs, sanity
from mpilens.analysis import progress as pg

from conftest import FIXTURES
from test_coll_analysis import US, chain_points, coll_point, coll_run
from test_map_analysis import KIB, MIB, cg_point, cg_run, grid_points, map_run
from test_piggyback_analysis import study as piggyback_study
from test_progress_analysis import POLL, YIELD, progress_run, setting_points
from test_progress_analysis import study as progress_study


# --- progress ------------------------------------------------------------------------------------

def test_progress_symptoms_cost_what_the_study_loses():
    # Without help the program loses 80% of t_b at every size: t_o / (t_b + t_o) = 0.8 / 1.8,
    # the largest size named. The yield thread's work-based t_o is 0.9 of none's, its
    # time-based one 0.125: the difference is CPU no MPI call shows.
    found = progress_costs.symptoms(progress_study())
    losses = [s for s in found if s.key != "progress-thread-cost"]
    assert [s.key for s in losses] == ["no-overlap-recv", "no-overlap-collective"]
    p2p, iallreduce = losses
    assert p2p.cost_ns == pytest.approx(400_000.0) and p2p.share == pytest.approx(0.8 / 1.8)
    assert iallreduce.cost_ns == pytest.approx(800_000.0)
    assert p2p.values == {"size": str(8 * MIB)} and p2p.evidence == "overhead"
    assert "at 4 MiB" in p2p.text
    hidden = [s for s in found if s.key == "progress-thread-cost"]
    # yield at 4 MiB, p2p: felt 0.8 * 0.9 * 500 µs = 360 µs, seen 0.8 * 0.125 * 500 µs = 50 µs.
    assert len(hidden) == 2 and all(s.text.startswith(f"{YIELD}: ") for s in hidden)
    assert hidden[0].cost_ns == pytest.approx(310_000.0)
    assert hidden[0].share == pytest.approx(310_000.0 / (500_000.0 + 360_000.0))
    assert not any(POLL in s.text for s in hidden)


def test_progress_verdict_names_the_worst_loss_and_what_cuts_it():
    assert progress_costs.verdict(progress_study()) == (
        "Without help, point-to-point loses up to 44% of its time (400 µs at 4 MiB, "
        f"time-based); the progress thread ({POLL}) cuts it 10×. A progress thread takes CPU "
        f"its MPI calls do not show: {YIELD}.")


def test_progress_without_loss_says_the_library_progresses_alone():
    quiet = []
    for point in setting_points(pg.NONE, tests=False):
        if point["params"]["strategy"] == "none":
            point["stats"]["t_o_ns"] = 5.0
            point["stats"]["sample"].update(median=5.0, ci_lo=-20.0, ci_hi=30.0)
        quiet.append(point)
    run = pg.combine([progress_run(pg.NONE, quiet)])
    assert progress_costs.symptoms(run) == []
    assert progress_costs.verdict(run).startswith("The library progresses on its own")


def test_progress_family_gives_its_verdict_to_the_first_screen():
    run = progress_study()
    assert report_summary.verdicts([run]) == [("progress", progress_costs.verdict(run))]
    assert families.get("progress").symptoms is progress_costs.symptoms


# --- map -----------------------------------------------------------------------------------------

def with_samples(points: list, before: list, after: list) -> list:
    """Repetitions of the 100-iteration 1 MiB cell (the last point)."""
    points[-1]["stats"]["samples"] = {"before_s": before, "after_s": after,
                                      "reorder_s": [1e-3] * len(before)}
    return points


def test_map_symptom_is_the_launch_orders_cost_beyond_the_repetitions():
    # 1 MiB, 100 iterations: 1 ms per iteration before, 0.5 ms after: 500 µs per iteration.
    run = map_run(with_samples(grid_points(), [0.1, 0.1, 0.11], [0.05, 0.05, 0.06]))
    (symptom,) = map_costs.symptoms(run)
    assert symptom.key == "pattern-crosses-nodes" and symptom.evidence == "gain"
    assert symptom.cost_ns == pytest.approx(500_000.0) and symptom.share == pytest.approx(0.5)
    assert "at least 40%" in symptom.text  # fastest before 0.1 s, slowest after 0.06 s


def test_map_without_a_gain_beyond_the_repetitions_costs_nothing():
    overlapping = with_samples(grid_points(), [0.1, 0.05, 0.1], [0.05, 0.06, 0.05])
    assert map_costs.symptoms(map_run(overlapping)) == []
    assert map_costs.symptoms(map_run(grid_points())) == []  # no repetitions: no evidence


def test_map_cg_symptom_beyond_the_noise_of_two_identical_solves():
    # 2 s of communication over 100 iterations before, 1 s after: 10 ms per iteration.
    (symptom,) = map_costs.symptoms(cg_run(cg_point()))
    assert symptom.cost_ns == pytest.approx(1e7) and symptom.evidence == "cg"
    noise = cg_point(comm_after=1.0, reorder=0.0, predicted=0.0, algo="none")
    noise["stats"]["new_rank_of"] = [0, 1, 2, 3]
    assert map_costs.symptoms(cg_run(cg_point(), noise)) == []  # the none solves: 50% apart


def test_map_verdicts():
    assert map_costs.verdict(map_run(grid_points())) == (
        "allgather_groups: reordering pays in 3 of 4 cells, its own time counted, up to +49% at "
        "1 MiB and 100 iterations.")
    assert map_costs.verdict(cg_run(cg_point())) == (
        "cg_reorder: after reordering, communication takes 50% less time; +45% with the "
        "reordering's own time.")
    losing = grid_points(per_after={KIB: 1e-4, MIB: 1e-3})
    assert map_costs.verdict(map_run(losing)).startswith(
        "allgather_groups: reordering pays in none of its 4 cells")


# --- sanity, piggyback, coll ---------------------------------------------------------------------

def test_sanity_verdict_from_the_kernels_and_the_clocks():
    run = results.load(FIXTURES / "sanity-2ranks.jsonl")
    assert sanity.verdict(run) == (
        "Computation can be timed within 5% from 10 µs up with every kernel measured. The "
        "ranks share one clock.")


def test_piggyback_verdict_names_the_cheapest_methods_and_the_goal():
    assert piggyback.verdict(piggyback_study()) == (
        "The cheapest method against the library alone (specific receives, 4 B pb): latency "
        "at 1 B +5.0% (auto); bandwidth at 4 MiB -0.1% (separate). auto misses its goal.")


def test_coll_verdict_fastest_and_slowest_at_the_largest_rank_count():
    points = [coll_point("bcast", algo, "oli", ranks, value * ranks)
              for algo, value in (("library", 1 * US), ("binomial", 1.2 * US),
                                  ("linear", 4 * US)) for ranks in (2, 8)]
    assert coll.verdict(coll_run(points)) == (
        "Broadcast of 256 B at 8 ranks: fastest library at 8 µs, slowest linear at 32 µs.")
    # Under a hop delay the reference algorithms are slowed on purpose: no verdict from them.
    assert coll.verdict(coll_run(chain_points(4))) is None


def test_a_family_without_conclusion_points_to_its_warnings():
    run = results.load(FIXTURES / "monitor-ring-4ranks.jsonl")  # monitor: no verdict of its own
    assert report_summary.verdicts([run], lambda run: ["warning: invalid"]) == [
        ("monitor", "No conclusion: its results are doubtful (Read with care, above).")]
    assert report_summary.verdicts([run], lambda run: []) == [("monitor", "Nothing to report.")]
    assert report_summary.verdicts([run])[0][1].startswith("Point-to-point: 10 KiB in 10 messages")
