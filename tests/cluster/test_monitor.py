"""The monitoring library across nodes: its own tests of exact matrices, and `mpilens monitor --
./app` on a program whose matrices are known, run through the agent and mpirun/mpiexec."""

from __future__ import annotations

import json
import shlex

import pytest

from conftest import ROOT, hosts_by_rank, meta_of, points_of


@pytest.mark.parametrize("program", ["test_monitor_ring", "test_monitor_halo",
                                     "test_monitor_alltoall", "test_monitor_coll"])
def test_monitor_matrices_exact_across_nodes(cluster, flavour, program, tmp_path):
    """tests/mpi/monitor's programs check every matrix entry against the messages they send and
    fail otherwise."""
    cluster.run([*cluster.srun(flavour), ROOT / "build" / flavour / "tests" / program],
                cwd=tmp_path)


def _entries(point: dict, what: str) -> dict:
    return {(row, column): value for row, column, value in point["stats"][what]["entries"]}


def test_mpilens_monitor_across_nodes(cluster, flavour, tmp_path):
    """plain_ring at 4 ranks: 2 messages of 64 B from each rank to the next (the ring crosses the
    link twice), then a broadcast of 128 B from rank 0, counted by its logical pattern."""
    launcher = shlex.join(cluster.agent_launcher(flavour, count="{np}"))
    out = tmp_path / "monitor"
    cluster.run(cluster.mpilens("monitor", "--mpi", flavour, "--np", "4", "--launcher", launcher,
                                "--output", out, "--",
                                ROOT / "build" / flavour / "tests" / "plain_ring"), cwd=tmp_path)
    results = out / "monitor.jsonl"
    assert meta_of(results)["hosts"] == hosts_by_rank(4)
    by_kind = {point["params"]["kind"]: point for point in points_of(results)}
    ring = {(rank, (rank + 1) % 4) for rank in range(4)}
    assert _entries(by_kind["p2p"], "counts") == {pair: 2 for pair in ring}
    assert _entries(by_kind["p2p"], "bytes") == {pair: 128 for pair in ring}
    broadcast = {(0, rank) for rank in (1, 2, 3)}
    assert _entries(by_kind["coll"], "counts") == {pair: 1 for pair in broadcast}
    assert _entries(by_kind["coll"], "bytes") == {pair: 128 for pair in broadcast}
    assert by_kind["osc"]["stats"]["total_messages"] == 0
    page = (out / "report.html").read_text()
    assert "mlnode0 (ranks 0-1); mlnode1 (ranks 2-3)" in page, json.dumps(by_kind)[:500]
