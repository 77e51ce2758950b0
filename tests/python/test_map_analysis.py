"""The map analysis on synthetic runs whose answers are known: the grid of seed 004 figure 6 and
its break-even, the cost model against the measurement and why they differ, the CG before and
after reordering, several files read as one run, the printed table and the comparison of two
runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpilens import families
from mpilens.analysis import map as ma
from mpilens.errors import MpilensError
from mpilens.results import Run

from conftest import assert_warned_once

KIB, MIB = 1 << 10, 1 << 20
TOPOLOGY = "node:2 core:2"
ORDER = [0, 2, 1, 3]
# Seconds per iteration before and after reordering, and the reordering's time, per size: at
# 1 KiB the reordering costs 20 iterations' savings, at 1 MiB 2.
PER_BEFORE = {KIB: 1e-4, MIB: 1e-3}
PER_AFTER = {KIB: 0.5e-4, MIB: 0.5e-3}
REORDER = {KIB: 1e-3, MIB: 1e-3}
ITERATIONS = (10, 100)


def map_meta(total: int, program: str = "mpilens-example-reorder-allgather", ranks: int = 4,
             nodes: int = 1, cpus_online: int = 4, flavour: str = "openmpi") -> dict:
    return {"type": "meta", "schema": 1, "family": "map", "program": program,
            "mpilens_version": "0.1.0", "date": "2026-11-22T15:02:11Z", "command": [program],
            "mpi": {"library": "Open MPI v4.1.4" if flavour == "openmpi" else "MPICH 4.0",
                    "flavour": flavour, "thread_level": "single"},
            "ranks": ranks, "nodes": nodes,
            "hosts": [f"node{rank * nodes // ranks}" for rank in range(ranks)],
            "binding": [str(rank) for rank in range(ranks)], "cpus_online": cpus_online,
            "env": {}, "options": {}, "points_total": total}


def map_run(points: list, name: str = "map-allgather.jsonl", notes: list = (), **meta) -> Run:
    program = ("mpilens-example-cg-reorder" if points and points[0]["bench"] == ma.CG
               else "mpilens-example-reorder-allgather")
    return Run(path=Path("results") / name, meta=map_meta(len(points), program, **meta),
               points=list(points), notes=list(notes))


def allgather_point(iterations: int, size: int, per_before: float, per_after: float,
                    reorder: float, predicted: float = 50.0, group: int = 2,
                    algo: str = "treematch", topology: str = TOPOLOGY, all_bound: int = 1,
                    new_rank_of=ORDER) -> dict:
    """A point as the example program writes it: t1 and t3 from the per-iteration times."""
    t1, t3 = iterations * per_before, iterations * per_after
    weighted_before = 1000.0 * size
    return {"type": "point", "family": "map", "bench": ma.ALLGATHER,
            "key": f"{ma.ALLGATHER}/iterations={iterations}/size={size}",
            "params": {"iterations": iterations, "size_bytes": size, "group": group,
                       "algo": algo, "topology": topology},
            "stats": {"before_s": t1, "reorder_s": reorder, "after_s": t3,
                      "gain_pct": 100 * (t1 - (reorder + t3)) / t1,
                      "predicted_gain_pct": predicted, "weighted_before": weighted_before,
                      "weighted_after": weighted_before * (1 - predicted / 100),
                      "hop_bytes_before": 4.0 * size, "hop_bytes_after": 2.0 * size,
                      "all_bound": all_bound, "new_rank_of": list(new_rank_of)}}


def model_against(predicted: str, less: int) -> str:
    """The start of the sentence holding the cost model's prediction against the gain measured."""
    return (f"allgather_groups: the cost model predicted {predicted} in every cell; without the "
            f"reordering's own time, the 100 iterations after it took {less}% less than before at "
            "1 MiB; ")


def grid_points(per_after=PER_AFTER, reorder=REORDER, iterations=ITERATIONS, **extra) -> list:
    return [allgather_point(n, size, PER_BEFORE[size], per_after[size], reorder[size], **extra)
            for size in (KIB, MIB) for n in iterations]


def cg_point(comm_before: float = 2.0, comm_after: float = 1.0, reorder: float = 0.1,
             total_before: float = 10.0, total_after: float = 9.1, predicted: float = 50.0,
             residual_before: float = 1.0e-10, residual_after: float = 1.0e-10,
             shape=(32, 32, 32), iterations: int = 100, algo: str = "treematch",
             topology: str = TOPOLOGY) -> dict:
    nx, ny, nz = shape
    return {"type": "point", "family": "map", "bench": ma.CG,
            "key": f"{ma.CG}/nx={nx}/ny={ny}/nz={nz}/iterations={iterations}",
            "params": {"nx": nx, "ny": ny, "nz": nz, "iterations": iterations, "algo": algo,
                       "topology": topology},
            "stats": {"comm_before_s": comm_before, "comm_after_s": comm_after,
                      "reorder_s": reorder, "total_before_s": total_before,
                      "total_after_s": total_after,
                      "gain_pct": 100 * (comm_before - (reorder + comm_after)) / comm_before,
                      "predicted_gain_pct": predicted, "weighted_before": 2e6,
                      "weighted_after": 2e6 * (1 - predicted / 100), "hop_bytes_before": 8e6,
                      "hop_bytes_after": 4e6, "residual_before": residual_before,
                      "residual_after": residual_after, "new_rank_of": ORDER}}


def cg_run(*points, **meta) -> Run:
    return map_run(list(points) or [cg_point()], name="map-cg.jsonl", **meta)


@pytest.fixture(scope="module")
def grid_run() -> Run:
    return map_run(grid_points())


# --- the grid ------------------------------------------------------------------------------------

def test_grid_holds_every_cell_with_the_seed_gain(grid_run):
    (grid,) = ma.grids(grid_run)
    assert grid.setting == ma.Setting(4, 2, "treematch", TOPOLOGY)
    assert grid.iterations == [10, 100] and grid.sizes == [KIB, MIB]
    assert [pytest.approx(row) for row in grid.values("gain_pct")] == [[-50.0, 40.0],
                                                                        [40.0, 49.0]]
    assert [pytest.approx(row) for row in grid.values("steady_pct")] == [[50.0, 50.0],
                                                                          [50.0, 50.0]]
    assert grid.constant_prediction() == 50.0
    assert grid.cell(100, KIB).break_even == pytest.approx(20.0)
    assert grid.cell(100, MIB).break_even == pytest.approx(2.0)
    assert ma.paying_from(grid.column(KIB)).iterations == 100
    assert ma.paying_from(grid.column(MIB)).iterations == 10


def test_diagnosis_states_break_even_best_cell_cost_and_model(grid_run):
    assert ma.diagnose(grid_run) == [
        "allgather_groups at 1 KiB: reordering pays from 100 iterations on (+40%; -50% at 10); "
        "at the times of 100 iterations it breaks even at about 20 iterations: the reordering "
        "(1 ms) costs what that many iterations save (50 µs each)",
        "allgather_groups at 1 MiB: reordering pays from the fewest iterations measured, 10 "
        "(+40%); at the times of 100 iterations it breaks even at about 2 iterations: the "
        "reordering (1 ms) costs what that many iterations save (500 µs each)",
        "allgather_groups: the best cell is +49% at 1 MiB and 100 iterations",
        "allgather_groups: the reordering took 1 ms (median of 4 cells): as long as 10 "
        "iterations before it at 1 KiB (100 µs each), 1 at 1 MiB (1 ms each)",
        model_against("+50%", 50) + "measurement and model agree (within 10 points)",
        'the topology "node:2 core:2" models 2 nodes, but the run was on one machine: the '
        "node-to-node costs the model saves are not paid here, where every rank shares memory, "
        "so the predicted gain is what a cluster of such nodes would see, not what this machine "
        "can show"]


def test_never_paying_size_and_iterations_not_faster():
    points = grid_points(per_after={KIB: 1.2e-4, MIB: 0.5e-3})
    sentences = ma.diagnose(map_run(points, nodes=2))
    assert sentences[0] == (
        "allgather_groups at 1 KiB: reordering never pays up to 100 iterations (-30% there); "
        "the iterations after it were not faster (120 µs each against 100 µs before), so no "
        "number of iterations repays it")
    assert not any("models 2 nodes" in sentence for sentence in sentences)


def test_no_paying_cell_says_so():
    points = grid_points(per_after={KIB: 1.2e-4, MIB: 1.1e-3})
    assert "allgather_groups: reordering pays in no cell; the best is -11% at 1 MiB and 100 " \
           "iterations" in ma.diagnose(map_run(points))


def test_noise_below_the_break_even_does_not_count():
    """A gain at few iterations that turns into a loss at more is not where reordering pays."""
    points = [allgather_point(10, KIB, 1e-4, 0.5e-4, 1e-4),
              allgather_point(100, KIB, 1e-4, 1.1e-4, 1e-4),
              allgather_point(1000, KIB, 1e-4, 0.5e-4, 1e-4)]
    (grid,) = ma.grids(map_run(points))
    assert [cell.gain_pct > 0 for cell in grid.column(KIB)] == [True, False, True]
    assert ma.paying_from(grid.column(KIB)).iterations == 1000
    assert ma.diagnose(map_run(points))[0].startswith(
        "allgather_groups at 1 KiB: reordering pays from 1000 iterations on (+50%; -11% at 100)")


def test_break_even_that_the_cells_do_not_bear_out():
    """Fixed costs in t1 at few iterations: 10 iterations lose although the rates of 100 say
    the reordering is repaid after 2."""
    points = [allgather_point(10, MIB, 1e-3, 0.5e-3, 1e-3),
              allgather_point(100, MIB, 1e-3, 0.5e-3, 1e-3)]
    points[0]["stats"]["after_s"] = 0.0095
    assert ma.diagnose(map_run(points))[0] == (
        "allgather_groups at 1 MiB: reordering pays from 100 iterations on (+49%; -5% at 10); "
        "at the times of 100 iterations it breaks even at about 2 iterations: the reordering "
        "(1 ms) costs what that many iterations save (500 µs each), which the cell at 10 "
        "iterations does not bear out (-5%): the times are not proportional to the iterations "
        "(fixed costs or noise)")


def test_repetitions_that_disagree_are_a_warning():
    points = grid_points()
    points[2]["stats"]["samples"] = {"before_s": [0.01, 0.011, 0.01],
                                     "reorder_s": [0.001, 0.0035, 0.001],
                                     "after_s": [0.005, 0.005, 0.006]}
    points[3]["stats"]["samples"] = {"before_s": [0.1, 0.15, 0.1]}
    run = map_run(points, cpus_online=2)
    (grid,) = ma.grids(run)
    assert grid.cell(10, MIB).spread == ma.Spread("t2", 0.001, 0.0035)
    assert grid.cell(10, MIB).noisy and not grid.cell(100, MIB).noisy
    assert ("warning: allgather_groups: the repetitions of 1 of 4 cells disagree (the slowest "
            "more than 2× the fastest), the most t2 at 1 MiB and 10 iterations (1 ms to 3.5 ms): "
            "their gains are not reliable; 4 ranks shared 2 processing units, whose scheduling "
            "weighs in times this short; more repetitions (--repeat) steady the medians"
            ) in ma.diagnose(run)


def test_a_difference_without_any_move_is_not_the_reorderings():
    points = grid_points(per_after={KIB: 0.5e-4, MIB: 0.6e-3}, predicted=0.0,
                         new_rank_of=[0, 1, 2, 3])
    assert (model_against("0%", 40)
            + "that is 40 points above the model, likely because the reordering kept "
            "every rank in place, so the difference is not the reordering's: it is noise, or "
            "the first run warming up what the second used") in ma.diagnose(map_run(points))


def test_disagreement_names_what_the_run_recorded():
    """Nearly no steady gain against 50% predicted: the modeled nodes, unbound ranks and
    oversubscription are the reasons the run can give."""
    points = grid_points(per_after={KIB: 0.98e-4, MIB: 0.98e-3}, all_bound=0)
    sentences = ma.diagnose(map_run(points, cpus_online=2))
    assert (model_against("+50%", 2)
            + "that is 48 points below the model, likely because the 2 nodes of the model "
            "do not exist on this one machine, the ranks were not all bound (their slots were "
            "guessed) and 4 ranks shared 2 processing units") in sentences
    assert sentences[-2].startswith("warning: allgather_groups: not every rank was bound to a "
                                    "single core")
    assert sentences[-1].startswith('the topology "node:2 core:2" models 2 nodes')


def test_disagreement_without_a_recorded_cause():
    points = grid_points(per_after={KIB: 0.5e-4, MIB: 0.2e-3})
    sentences = ma.diagnose(map_run(points, nodes=2))
    assert (model_against("+50%", 80)
            + "that is 30 points above the model: nothing recorded explains it; the model "
            "counts bytes per level of the machine, not latency, contention or the MPI "
            "library's own algorithm") in sentences


def test_disagreement_explained_by_the_runs_conditions():
    """Two emulated nodes on one machine of 2 cores: the ranks wait for cores, which the model
    does not count (analysis/conditions.py)."""
    points = grid_points(per_after={KIB: 0.5e-4, MIB: 0.2e-3})
    run = map_run(points, nodes=2, cpus_online=2)
    run.meta["machines"] = ["1111111111111111"] * 4
    sentences = ma.diagnose(run)
    assert (model_against("+50%", 80)
            + "that is 30 points above the model, likely because the ranks shared their "
            "cores with each other and with the network stack (the run's conditions, first "
            "among the findings), a wait the model does not count and the reordering does not "
            "remove") in sentences


def test_varying_prediction_is_given_at_the_reference_cell():
    points = grid_points()
    points[0]["stats"]["predicted_gain_pct"] = 30.0
    (grid,) = ma.grids(map_run(points))
    assert grid.constant_prediction() is None
    assert ma.prediction_text(grid) == "predicted by the cost model: +30% to +50%"
    assert any(sentence.startswith("allgather_groups: the cost model predicted +50% at 1 MiB; ")
               for sentence in ma.diagnose(map_run(points)))


def test_prediction_from_the_weighted_costs_when_not_written():
    points = grid_points(predicted=25.0)
    for p in points:
        del p["stats"]["predicted_gain_pct"]
    (grid,) = ma.grids(map_run(points))
    assert grid.constant_prediction() == pytest.approx(25.0)


def test_ranks_kept_in_place_are_named():
    sentences = ma.diagnose(map_run(grid_points(new_rank_of=[0, 1, 2, 3])))
    assert ("allgather_groups: the reordering kept every rank in place (new_rank_of is the "
            "identity in every cell): the iterations after it ran on the same placement, so "
            "their gain is noise less the reordering's cost") in sentences


def test_topology_levels_and_modeled_nodes():
    assert ma.levels("node:2 package:1 core:4 cost=100,10,1") == [
        ("node", 2), ("package", 1), ("core", 4)]
    assert ma.modeled_nodes("node:2 core:2", {"nodes": 1}) == 2
    assert ma.modeled_nodes("node:2 core:2", {"nodes": 2}) == 0
    assert ma.modeled_nodes("node:1 core:4", {"nodes": 1}) == 0
    assert ma.modeled_nodes("package:2 core:2", {"nodes": 1}) == 0


def test_incomplete_points_are_left_out():
    points = grid_points()
    del points[0]["stats"]["after_s"]
    points[1]["stats"]["before_s"] = 0
    (grid,) = ma.grids(map_run(points))
    assert len(grid.cells) == 2 and grid.cell(10, KIB) is None
    assert ma.diagnose(map_run([])) == [
        "warning: the run holds no complete allgather_groups, bcast_reorder, reduce_reorder or "
        "cg_reorder point"]


def collective_points(bench: str, backend: str) -> list:
    """grid_points as --collective bcast or reduce writes them: one group of every rank."""
    points = grid_points(group=4)
    for point in points:
        point["bench"] = bench
        point["key"] = point["key"].replace(ma.ALLGATHER, bench)
        point["stats"]["coll_backend"] = backend
    return points


def test_collectives_of_section_6_3_have_grids_of_their_own():
    run = map_run(grid_points() + collective_points("bcast_reorder", "ompi-mpit")
                  + collective_points("reduce_reorder", "pmpi"))
    found = ma.grids(run)
    assert [grid.setting.bench for grid in found] == [
        "allgather_groups", "bcast_reorder", "reduce_reorder"]
    assert [grid.setting.figure for grid in found] == ["figure 6", "figure 5", "figure 5"]
    assert ma.grid_heads(found) == [
        "allgather_groups (groups of 2)", "bcast_reorder (all ranks)", "reduce_reorder (all ranks)"]
    assert all(len(grid.cells) == 4 for grid in found)
    sentences = ma.diagnose(run)
    assert ("bcast_reorder: mapped from the messages the MPI library really sent to carry out the "
            "collective (Open MPI's monitoring), as seed 004 §6.3 does") in sentences
    assert any(sentence.startswith("reduce_reorder: the monitoring counted the collective by its "
                                   "logical pattern") for sentence in sentences)
    assert not any(s.startswith("allgather_groups: mapped") for s in sentences)
    # a lone grid pairs with the other run's lone grid only when both are of one benchmark
    alone = map_run(grid_points())
    assert ma.paired_grids(alone, map_run(collective_points("bcast_reorder", "pmpi"))) == []
    assert len(ma.paired_grids(alone, map_run(grid_points()))) == 1


def test_program_warnings_end_the_diagnosis():
    note = {"type": "note", "level": "warning", "text": "rank 3 is not bound",
            "date": "2026-11-22T15:02:12Z"}
    assert ma.diagnose(map_run(grid_points(), notes=[note]))[-1] == "warning: rank 3 is not bound"


# --- cg_reorder ----------------------------------------------------------------------------------

def test_cg_gain_counts_the_reordering():
    sentences = ma.diagnose(cg_run(nodes=2))
    assert sentences == [
        "cg_reorder: on a 32×32×32 grid over 100 iterations, communication took 2 s before "
        "reordering and 1 s after, the reordering 100 ms: gain 45% with the reordering "
        "counted; the cost model predicted +50%; without the reordering's own time the "
        "communication took 50% less; measurement and model agree (within 10 points)",
        "cg_reorder: the whole solve took 10 s before reordering and 9.1 s after, the "
        "reordering included: 9% faster",
        "cg_reorder: the reordering took as long as 1 iteration before it (100 ms each)",
        "cg_reorder: the residual is the same before and after reordering (1e-10 before, "
        "1e-10 after): the reordered run computes the same solution"]


def _initial(point: dict, initial: str, seed: Optional[int] = None) -> dict:
    point["params"]["initial"] = initial
    if seed is not None:
        point["params"]["seed"] = seed
    return point


def test_cg_initial_mappings_side_by_side():
    """Seed figure 7: one solve reordered from each initial mapping; each point is named by its
    mapping, and one sentence sets their gains side by side, in the seed's order."""
    run = cg_run(_initial(cg_point(), "rr"),
                 _initial(cg_point(comm_before=4.0, predicted=75.0), "random", 2),
                 _initial(cg_point(comm_before=2.2), "standard"))
    sentences = ma.diagnose(run)
    assert ("cg_reorder by initial mapping (seed figure 7; 4 ranks, 32×32×32 grid, treematch): "
            "the reordering's gain random (seed 2) +72% (predicted +75%), rr +45% (predicted "
            "+50%), standard +50% (predicted +50%)") in sentences
    assert any(s.startswith("cg_reorder (initial mapping random (seed 2)): on a 32×32×32 grid")
               for s in sentences)
    # a file from before --initial ran rr: it is compared with an rr point, not a random one
    assert ma.cg_points(cg_run(cg_point()))[0].initial == "rr"


def test_cg_loss_changed_residual_and_communication_only():
    point = cg_point(comm_after=1.9, reorder=0.4, residual_after=3e-2)
    for name in ("total_before_s", "total_after_s"):
        del point["stats"][name]
    sentences = ma.diagnose(cg_run(point))
    assert "gain" not in sentences[0] and "loss 15% with the reordering counted" in sentences[0]
    assert "; that is 45 points below the model, likely because the 2 nodes of the model do " \
           "not exist on this one machine" in sentences[0]
    assert ("cg_reorder: the reordering took as long as 20 iterations' communication before it "
            "(20 ms each)") in sentences
    assert ("warning: cg_reorder: the residual changed with the reordering (1e-10 before, "
            "0.03 after): the data did not follow the ranks to their new places, so the times "
            "after it are of another computation") in sentences
    assert any("models 2 nodes" in sentence for sentence in sentences)


def test_residuals_apart_by_rounding_carried_on_are_the_same_solution():
    sentences = ma.diagnose(cg_run(cg_point(residual_after=1.000000002e-10)))
    assert ("cg_reorder: the residuals differ by 2.0e-09 relative (1e-10 before, 1e-10 after): "
            "the same solution up to rounding (the program allows 1e-08): the MPI library "
            "probably ordered a reduction by placement, and CG carries rounding on from "
            "iteration to iteration") in sentences


def test_residuals_apart_beyond_what_the_program_allows():
    sentences = ma.diagnose(cg_run(cg_point(residual_after=1.000001e-10)))
    assert ("warning: cg_reorder: the residual changed with the reordering (1e-10 before, 1e-10 "
            "after): the data did not follow the ranks to their new places, so the times after "
            "it are of another computation") in sentences


def test_cg_without_reordering_shows_the_noise():
    point = cg_point(comm_after=2.1, reorder=0.0, predicted=0.0, algo="none")
    point["stats"]["new_rank_of"] = [0, 1, 2, 3]
    assert ma.diagnose(cg_run(point, nodes=2)) == [
        "cg_reorder: without reordering (algorithm none), the communication took 2 s in the "
        "first solve and 2.1 s in the second, 5% apart: the noise of two identical solves, "
        "against which to read the gains of a reordering",
        "cg_reorder: the residual is the same before and after reordering (1e-10 before, 1e-10 "
        "after): the reordered run computes the same solution"]


def test_several_cg_points_are_told_apart():
    run = cg_run(cg_point(), cg_point(shape=(64, 64, 64), comm_before=4.0, comm_after=2.0))
    assert [entry.shape for entry in ma.cg_points(run)] == [(32, 32, 32), (64, 64, 64)]
    assert ma.cg_heads(ma.cg_points(run)) == ["cg_reorder (32×32×32 grid)",
                                              "cg_reorder (64×64×64 grid)"]


# --- several files as one run ---------------------------------------------------------------

def test_family_is_registered_with_its_combiner():
    family = families.get("map")
    assert family.combiner is ma.combine and not family.in_suite and family.presets == {}
    assert family.program == "mpilens-example-reorder-allgather"
    assert family.text_table is ma.comparison_table


def test_combine_reads_both_programs_and_rank_counts_as_one_run():
    at_eight = map_run(grid_points(), name="map-allgather-8.jsonl", ranks=8, cpus_online=8)
    run = ma.combine([at_eight, cg_run(), map_run(grid_points())])
    assert [member.path.name for member in run.members] == [
        "map-allgather.jsonl", "map-cg.jsonl", "map-allgather-8.jsonl"]
    assert run.path == Path("results/map.jsonl") and run.complete
    found = ma.grids(run)
    assert [grid.setting.ranks for grid in found] == [4, 8]
    assert ma.grid_heads(found) == ["allgather_groups (4 ranks)", "allgather_groups (8 ranks)"]
    # the 8-rank file ran on a machine of 8 units: no oversubscription, its own meta
    assert found[1].meta["cpus_online"] == 8
    assert len(ma.cg_points(run)) == 1
    sentences = ma.diagnose(run)
    assert sentences[0].startswith("allgather_groups (4 ranks) at 1 KiB: ")
    assert any(sentence.startswith("cg_reorder: on a 32×32×32 grid") for sentence in sentences)


def test_combine_refuses_the_same_point_at_the_same_rank_count():
    with pytest.raises(MpilensError, match=r'both hold point "allgather_groups/iterations=10/'
                                           r'size=1024" at 4 ranks'):
        ma.combine([map_run(grid_points()), map_run(grid_points(), name="again.jsonl")])


# --- the printed table ---------------------------------------------------------------------------

def test_comparison_table_prints_the_grid_and_the_cg(grid_run):
    lines = ma.comparison_table(ma.combine([grid_run, cg_run()]))
    assert lines[:5] == [
        'allgather_groups, 4 ranks, groups of 2, treematch, topology "node:2 core:2": gain '
        "100 (t1 - (t2 + t3)) / t1",
        "iterations    1K    1M",
        "        10  -50%  +40%",
        "       100  +40%  +49%",
        "predicted by the cost model: +50% in every cell"]
    assert lines[5] == "cg_reorder: communication time, gain with the reordering counted"
    assert lines[6].split() == ["cg", "ranks", "iterations", "algo", "comm", "before", "after",
                                "reorder", "gain", "predicted"]
    assert lines[7].split() == ["32×32×32", "4", "100", "treematch", "2", "s", "1", "s", "100",
                                "ms", "+45%", "+50%"]
    assert ma.comparison_table(map_run([])) == []


# --- comparison ----------------------------------------------------------------------------------

def other_library() -> Run:
    """MPICH: at 1 KiB the reordering costs twice as much and saves little; 1 MiB alike."""
    points = grid_points(per_after={KIB: 0.97e-4, MIB: 0.5e-3}, reorder={KIB: 2e-3, MIB: 1e-3})
    return ma.combine([map_run(points, flavour="mpich"),
                       cg_run(cg_point(comm_after=1.5), flavour="mpich")])


def test_compare_states_the_difference_per_cell_the_break_even_and_the_model(grid_run):
    mine = ma.combine([grid_run, cg_run()])
    assert ma.compare(mine, other_library()) == [
        "allgather_groups: over the 4 cells measured in both, the gain is 51 points higher in "
        "Open MPI on average; the widest difference is at 1 KiB and 10 iterations (-50% in "
        "Open MPI, -197% in MPICH); reordering pays at 1 KiB from 100 iterations in Open MPI, "
        "never in MPICH; the cost model predicted +50% in both",
        "cg_reorder: communication 2 s -> 1 s, gain 45%, predicted +50% in Open MPI; 2 s -> "
        "1.5 s, gain 20%, predicted +50% in MPICH"]


def test_compare_of_alike_runs_and_other_predictions(grid_run):
    same = ma.compare(grid_run, map_run(grid_points(), flavour="mpich"))
    assert same == [
        "allgather_groups: over the 4 cells measured in both, the gains are the same within 5 "
        "points (MPICH - Open MPI: +0.0 on average); reordering pays from the same iteration "
        "counts in both; the cost model predicted +50% in both"]
    other = map_run(grid_points(predicted=30.0, topology="node:1 core:4"))
    assert ma.compare(grid_run, other)[0].endswith(
        "the cost model predicted +50% in A and +30% in B (another mapping or topology)")


# --- numbers that cannot be true ------------------------------------------------------------------

def with_samples(points: list, spread: float) -> list:
    """Each point with repetitions: t1 and t3 at their medians ± spread (relative)."""
    for point in points:
        stats = point["stats"]
        stats["samples"] = {name: [stats[name] * (1 - spread), stats[name],
                                   stats[name] * (1 + spread)]
                            for name in ("before_s", "reorder_s", "after_s")}
    return points


def test_gain_far_above_the_model_beyond_noise_is_invalid():
    # 80% less time after reordering where the model predicts 50%, even from the fastest
    # repetition before to the slowest after
    points = with_samples(grid_points(per_after={KIB: 0.5e-4, MIB: 0.2e-3}), 0.01)
    run = map_run(points)
    (grid,) = ma.grids(run)
    assert sorted(grid.invalid) == [(10, MIB), (100, MIB)]
    assert all(size == KIB for _, size in grid.cells)
    sentences = ma.diagnose(run)
    assert_warned_once(sentences, "warning: allgather_groups: INVALID, 2 cells, left out: a gain the "
                       "cost model cannot explain, at least 80% less", "80% less")
    assert "where the model predicts +50%, at 1 MiB" in sentences[0]


def test_gain_where_no_rank_moved_is_invalid():
    points = with_samples(grid_points(per_after={KIB: 0.5e-4, MIB: 0.6e-3}, predicted=0.0,
                                      new_rank_of=[0, 1, 2, 3]), 0.01)
    sentences = ma.diagnose(map_run(points))
    assert sentences[0].startswith("warning: allgather_groups: INVALID, every cell, left out")
    assert "where the model predicts 0%" in sentences[0]
    assert len([s for s in sentences if "INVALID" in s]) == 1


def test_gain_above_the_model_within_noise_is_valid():
    # 80% measured against 50% predicted, but the repetitions spread ±40%: the slowest after
    # against the fastest before leaves a gain the model can explain
    points = with_samples(grid_points(per_after={KIB: 0.5e-4, MIB: 0.2e-3}), 0.4)
    (grid,) = ma.grids(map_run(points))
    assert not grid.invalid and len(grid.cells) == 4
    assert not any("INVALID" in s for s in ma.diagnose(map_run(points)))


def test_gain_the_model_predicts_is_valid():
    points = with_samples(grid_points(), 0.01)
    (grid,) = ma.grids(map_run(points))
    assert not grid.invalid
