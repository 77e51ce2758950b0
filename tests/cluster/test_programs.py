"""Every benchmark program across 2 nodes x 2 ranks, under srun, under mpirun/mpiexec with the
cluster's agent, and in the batch script docs/cluster.md shows users; the meta record must name
2 nodes and each rank's real host, and every point must be written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List

import pytest

from conftest import ROOT, bin_dir, hosts_by_rank, meta_of, points_of
from mpilens import launch

JOB_SCRIPT = ROOT / "examples" / "slurm" / "mpilens-job.sh"

# Each program's smallest run that still exercises its communication across the nodes.
QUICK: Dict[str, List[str]] = {
    "sanity": ["--preset", "quick", "--checks", "clock,offset", "--reps", "3"],
    "overlap": ["--preset", "quick", "--bench", "sender", "--sizes", "1K:64K",
                "--compute", "10us:100us", "--reps", "3", "--decide", "on"],
    "progress": ["--preset", "quick", "--bench", "p2p", "--sizes", "1K:4K", "--intervals",
                 "1K:2K", "--reps", "3", "--strategy", "none", "--compute", "time"],
    "coll": ["--op", "bcast", "--method", "oli", "--algo", "library", "--reps", "3",
             "--block", "10", "--min-blocks", "2", "--max-blocks", "2"],
    "piggyback": ["--sizes", "1:1K", "--reps", "3", "--bench", "latency", "--recv", "specific"],
}


# How a map point of mpilens-overlap --decide on may stop (docs/overlap.md, "Repetitions").
DECIDED_STOPS = ("decided", "undecidable", "time_budget", "max_reps")


def check_results(path: Path, ranks: int = 4) -> None:
    meta = meta_of(path)
    assert meta["nodes"] == 2, f"{path.name}: {meta['nodes']} nodes"
    assert meta["hosts"] == hosts_by_rank(ranks), f"{path.name}: hosts {meta['hosts']}"
    # the library's control variables, read on the nodes (remedies are checked against them)
    assert meta["cvars"]["count"] > 0 and meta["cvars"]["vars"], f"{path.name}: no cvars"
    points = points_of(path)
    assert points and len(points) == meta["points_total"], \
        f"{path.name}: {len(points)} of {meta['points_total']} points"
    for point in points:
        if meta["program"] == "mpilens-overlap" and not point["bench"].startswith("ref-"):
            sample = point["stats"]["sample"]  # --decide on, --reps 3: from 6 to 12
            assert 6 <= sample["n"] <= 12 and sample["stop"] in DECIDED_STOPS, point["key"]


@pytest.mark.parametrize("launcher", ["srun", "agent"])
@pytest.mark.parametrize("program", sorted(QUICK))
def test_program_across_nodes(cluster, flavour, launcher, program, tmp_path):
    prefix = (cluster.srun(flavour) if launcher == "srun"
              else cluster.agent_launcher(flavour))
    output = tmp_path / f"{program}.jsonl"
    cluster.run([*prefix, bin_dir(flavour) / f"mpilens-{program}", *QUICK[program],
                 "--output", output], cwd=tmp_path)
    check_results(output)


@pytest.mark.parametrize("ranks", [2, 3, 4])
def test_warm_up_pairs_every_rank_across_nodes(cluster, flavour, ranks, tmp_path):
    """ml_warm_up (src/core/warmup.c), which mpilens-overlap and mpilens-progress run before they
    measure: test_warm_up counts each pair's exchanges per size, here with the pairs split over
    the nodes (3 ranks: one sits out each round of the tournament)."""
    done = cluster.run([*cluster.srun(flavour, ranks=ranks, nodes=2),
                        ROOT / "build" / flavour / "tests" / "test_warm_up_mpi"], cwd=tmp_path)
    assert re.search(r"^passed", done.stdout + done.stderr, re.M), done.stdout + done.stderr


def test_batch_job_script(cluster, flavour, tmp_path):
    """The job script of docs/cluster.md, submitted with sbatch as users do; then mpilens report
    on its results names both hosts."""
    out = tmp_path / "results"
    settings = {"MPILENS_BIN": str(bin_dir(flavour)), "MPILENS_PMI": {"openmpi": "pmix",
                                                                       "mpich": "pmi2"}[flavour],
                "MPILENS_OUT": str(out),
                **{f"{program.upper()}_OPTIONS": " ".join(options)
                   for program, options in QUICK.items()}}
    cluster.run(["sbatch", "--wait", "--export=ALL", JOB_SCRIPT], cwd=tmp_path, env=settings)
    log = next(tmp_path.glob("mpilens-*.out")).read_text()
    assert "on 2 nodes (mlnode[0-1]), 4 tasks" in log, log
    for program in QUICK:
        check_results(out / f"{program}.jsonl")
    cluster.run(cluster.mpilens("report", out), cwd=tmp_path)
    page = (out / "report.html").read_text()
    assert "mlnode0 (ranks 0-1); mlnode1 (ranks 2-3)" in page


def test_srun_passes_a_comma_to_every_rank(cluster, tmp_path):
    """A value srun's --export cannot carry (libmpilens-progress's "yield,cpu=spare") reaches the
    ranks on both nodes through srun's own environment, beside one --export carries."""
    env = {"MPILENS_PROGRESS": "yield,cpu=spare", "MPILENS_PLAIN": "x"}
    flavour = launch.Flavour.OPENMPI
    command = launch.build_command(flavour, 2, "/usr/bin/env", [],
                                   launcher="srun -N2 -n {np} --mpi=none", env=env)
    done = cluster.run(command, cwd=tmp_path, env=launch.process_env(command[0], flavour, env))
    lines = done.stdout.splitlines()
    for line in ("MPILENS_PROGRESS=yield,cpu=spare", "MPILENS_PLAIN=x"):
        assert lines.count(line) == 2, done.stdout
