"""The families across nodes: mpilens inside a Slurm allocation (srun by default, the report
naming both hosts and saying the cores were the limit), coll against its known latencies under a
hop delay, and the overlap maps over TCP without and with libmpilens-progress."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import NODES, ROOT, bin_dir, hosts_by_rank, meta_of, points_of

CHECK_COLL = ROOT / "tests" / "mpi" / "check_coll.py"
PROGRESS_LIBRARY = "libmpilens-progress.so"
ATTEMPTS = 3
SHARED_MACHINE = "hosts mlnode0 and mlnode1 are one machine (they report the same machine id)"


def test_family_in_an_allocation_uses_srun(cluster, flavour, tmp_path):
    """mpilens progress inside salloc: srun with the flavour's PMI plugin on the allocation's 4
    tasks, without and with libmpilens-progress's thread; the report names both hosts and says
    that ranks and threads outnumber the cores the emulated nodes share."""
    out = tmp_path / "progress"
    done = cluster.run(["salloc", "-N2", "-n4", *cluster.mpilens(
        "progress", "--mpi", flavour, "--bench", "p2p", "--sizes", "1K:4K", "--threads", "yield",
        "--placement", "shared", "--no-async", "--no-overlap", "--preset", "quick",
        "--output", out)], cwd=tmp_path)
    plugin = {"openmpi": "pmix", "mpich": "pmi2"}[flavour]
    assert f"mpilens: running srun -n 4 --mpi={plugin} " in done.stderr, done.stderr
    runs = sorted(out.glob("progress-*.jsonl"))
    assert [run.name for run in runs] == ["progress-none.jsonl", "progress-thread-yield.jsonl"]
    for run in runs:
        assert meta_of(run)["hosts"] == hosts_by_rank(4)
    threaded = meta_of(out / "progress-thread-yield.jsonl")["progress_setting"]["library"]
    assert threaded["running_per_rank"] == [1, 1, 1, 1]
    page = (out / "report.html").read_text()
    assert "mlnode0 (ranks 0-1); mlnode1 (ranks 2-3)" in page
    assert SHARED_MACHINE in page
    assert "4 ranks on the machine of hosts mlnode0 and mlnode1 (ranks 0-3) outnumber its" in page


def test_coll_under_a_hop_delay_finds_the_truth(cluster, flavour, tmp_path):
    """The binomial reference broadcast under 5 ms per hop: oli within 10% of the analytic
    latency across the nodes (--wait auto sleeps: the 4 ranks share one machine's 2 cores).
    The truth is a timing on a shared machine: like test_coll_cli.sh, a failed judgement is
    measured again, up to ATTEMPTS times, and the first that passes decides (CI once put one
    broadcast 14% over its truth under Open MPI with the hop delays only 2% late); a wrong
    formula fails every attempt."""
    output = tmp_path / "coll.jsonl"
    verdicts = []
    for _ in range(ATTEMPTS):
        output.unlink(missing_ok=True)  # else the program would resume from the judged file
        cluster.run([*cluster.srun(flavour), bin_dir(flavour) / "mpilens-coll", "--algo",
                     "binomial", "--method", "oli", "--hop-delay", "5ms", "--block", "10",
                     "--reps", "3", "--output", output], cwd=tmp_path)
        assert meta_of(output)["options"]["wait"] == "auto"
        assert all(point["params"]["wait"] == "sleep" for point in points_of(output))
        # sleeping ranks record no off-core share; the hosts' steal is a share or unknown
        for point in points_of(output):
            stats = point["stats"]
            assert stats["off_core_share"] is None, stats
            assert stats["steal_share"] is None or 0 <= stats["steal_share"] <= 1, stats
        checked = subprocess.run([sys.executable, CHECK_COLL, output, flavour, "truth"],
                                 capture_output=True, text=True)
        if checked.returncode == 0:
            return
        assert checked.returncode in (1, 3), checked.stdout + checked.stderr
        verdicts.append((checked.returncode, checked.stdout + checked.stderr))
    if all(code == 3 for code, _ in verdicts):  # too busy to judge every time
        pytest.skip(verdicts[-1][1].strip())
    pytest.fail("no attempt found the truth:\n" + "\n".join(text for _, text in verdicts))


def test_coll_without_a_delay(cluster, flavour, tmp_path):
    """The library's broadcast through every method across the nodes: every point measured."""
    output = tmp_path / "coll.jsonl"
    cluster.run([*cluster.agent_launcher(flavour), bin_dir(flavour) / "mpilens-coll",
                 "--algo", "library", "--block", "10", "--reps", "3", "--min-blocks", "2",
                 "--max-blocks", "2", "--output", output], cwd=tmp_path)
    points = points_of(output)
    methods = {point["params"]["method"] for point in points}
    assert {"oli", "rounds", "ack"} <= methods, methods
    assert len(points) == meta_of(output)["points_total"]
    assert all(point["stats"]["latency_ns"] > 0 for point in points
               if point["params"]["method"] == "oli"), json.dumps(points)[:2000]


def test_coll_fast_and_the_seeds_estimator_across_the_nodes(cluster, flavour, tmp_path):
    """--fast and --estimator mean across the nodes: the candidates' cheap pass covers every rank
    and fewer are measured in full, and every point's two estimates are those of its own numbers
    (checks no busy machine excuses; the hop-delay truth of --fast is test_coll_cli.sh's)."""
    output = tmp_path / "coll-fast.jsonl"
    cluster.run([*cluster.srun(flavour), bin_dir(flavour) / "mpilens-coll", "--algo",
                 "library,binomial", "--method", "oli", "--fast", "--estimator", "mean",
                 "--block", "10", "--reps", "3", "--output", output], cwd=tmp_path)
    assert meta_of(output)["options"]["estimator"] == "mean"
    checked = subprocess.run([sys.executable, CHECK_COLL, output, flavour, "fast", "estimators"],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_overlap_maps_over_tcp_without_and_with_the_thread(cluster, flavour, tmp_path):
    """mpilens-overlap across the nodes alone and under libmpilens-progress (yield); the report
    of both counts the threads in what shares the cores."""
    library = ROOT / "build" / flavour / "lib" / PROGRESS_LIBRARY
    quick = ["--preset", "quick", "--bench", "sender,receiver", "--sizes", "1K:4K",
             "--compute", "10us:100us", "--reps", "3"]
    alone, threaded = tmp_path / "overlap-none.jsonl", tmp_path / "overlap-thread.jsonl"
    program = bin_dir(flavour) / "mpilens-overlap"
    cluster.run([*cluster.srun(flavour), program, *quick, "--output", alone], cwd=tmp_path)
    cluster.run([*cluster.srun(flavour), program, *quick, "--output", threaded], cwd=tmp_path,
                env={"LD_PRELOAD": str(library), "MPILENS_PROGRESS": "yield"})
    assert meta_of(alone)["progress_setting"]["label"] == "none"
    assert meta_of(threaded)["progress_setting"]["label"] == "thread:yield"
    for path in (alone, threaded):
        assert {point["bench"] for point in points_of(path)} == {"ref-pingpong", "sender",
                                                                 "receiver"}
    cluster.run(cluster.mpilens("report", tmp_path), cwd=tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert "4 ranks on the machine of hosts mlnode0 and mlnode1 (ranks 0-3) outnumber" in page
    assert ("4 ranks and 4 progress threads on the machine of hosts mlnode0 and mlnode1 "
            "(ranks 0-3) outnumber") in page


def test_threads_communicate_across_the_nodes(cluster, flavour, tmp_path):
    """mpilens-overlap's threads benchmark with one rank per node: the program asks for
    MPI_THREAD_MULTIPLE itself, every thread's message reaches its own thread over TCP (the
    program aborts otherwise), and the report counts the communicating threads in what shares
    the machine's cores."""
    output = tmp_path / "overlap-threads.jsonl"
    cluster.run([*cluster.srun(flavour, ranks=2), bin_dir(flavour) / "mpilens-overlap",
                 "--bench", "threads", "--sizes", "1K:64K", "--compute", "10us:80us",
                 "--density", "1", "--reps", "3", "--output", output], cwd=tmp_path)
    meta = meta_of(output)
    assert meta["options"]["thread-level"] == "multiple" and meta["hosts"] == list(NODES)
    points = points_of(output)
    assert len(points) == meta["points_total"]
    assert {p["params"].get("comm_threads") for p in points if p["bench"] != "ref-pingpong"} == {2}
    cluster.run(cluster.mpilens("report", tmp_path), cwd=tmp_path)
    if 2 <= meta["cpus_online"] < 4:  # 2 ranks and 2 more threads outnumber the cores
        page = (tmp_path / "report.html").read_text()
        crowded = f"2 ranks and 2 communicating threads share {meta['cpus_online']} cores"
        assert f"not trustworthy: {crowded}" in page
