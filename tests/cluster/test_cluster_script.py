"""tests/cluster/cluster.sh and the agent as a user meets them: up again is harmless and says how
to use the cluster, bad settings and a second size are refused in one line with status 2, the
nodes are distinct hosts. That down leaves the machine as it was is checked by the session
fixture (conftest.py) when it stops the cluster it started."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import conftest
from conftest import (AGENT, CLUSTER_SCRIPT, NODES, Cluster, OpenMPIInitRace,
                      open_mpi_init_race)


def _script(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLUSTER_SCRIPT), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def _one_line_error(done: subprocess.CompletedProcess, text: str) -> None:
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cluster: ") and text in lines[0], done.stderr


def test_up_again_is_harmless_and_says_how_to_use_it(cluster):
    done = _script("up", env={"NODES": "2", "RATE": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("test cluster up: 2 nodes (mlnode0..mlnode1")
    assert "srun -N2 -n4 --mpi=pmix" in done.stdout and "make cluster-down" in done.stdout
    assert _script("status").stdout.startswith("test cluster up: NODES=2")


def test_another_size_is_refused(cluster):
    _one_line_error(_script("up", env={"NODES": "3"}),
                    "already up with NODES=2 RATE=; run \"make cluster-down\" before starting it "
                    "with NODES=3")


@pytest.mark.parametrize("settings,text", [
    ({"NODES": "9"}, 'invalid NODES="9": expected an integer from 1 to 8'),
    ({"NODES": "two"}, 'invalid NODES="two"'),
    ({"RATE": "fast"}, 'invalid RATE="fast": expected a rate such as 100mbit or 1gbit'),
])
def test_bad_settings_are_refused(cluster, settings, text):
    _one_line_error(_script("up", env=settings), text)


def test_not_root_is_refused(cluster):
    """As user nobody, from a copy it can read (the checkout may be private to root)."""
    with tempfile.TemporaryDirectory() as directory:
        os.chmod(directory, 0o755)
        script = Path(directory) / "cluster.sh"
        shutil.copy(CLUSTER_SCRIPT, script)
        done = subprocess.run(["runuser", "-u", "nobody", "--", str(script), "up"],
                              capture_output=True, text=True)
    _one_line_error(done, "must run as root")


def test_nodes_are_distinct_hosts(cluster):
    for node in NODES:
        done = cluster.run([AGENT, "-x", node, "hostname; cat /proc/sys/kernel/random/boot_id"])
        name, boot_id = done.stdout.split()
        assert name == node
        assert boot_id != open("/proc/sys/kernel/random/boot_id").read().strip()


def test_agent_refuses_an_unknown_node(cluster):
    done = subprocess.run([str(AGENT), "mlnode9", "true"], capture_output=True, text=True)
    assert done.returncode == 255
    assert done.stderr.strip() == 'agent: no node "mlnode9" in the test cluster (make cluster-up starts it)'


def test_a_crash_under_srun_shows_its_stack(cluster, tmp_path):
    """A rank killed by SIGSEGV on a node leaves a core in the run's directory, and the failure
    message carries gdb's backtrace of it (how an unreproduced crash in CI says where it was)."""
    pattern = Path("/proc/sys/kernel/core_pattern").read_text().strip()
    if pattern.startswith("|") or "/" in pattern:
        pytest.skip(f"kernel.core_pattern is {pattern!r}: cores do not land in the run's directory")
    if shutil.which("gdb") is None:
        pytest.skip("no gdb (make deps-cluster installs it)")
    crash = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    with pytest.raises(pytest.fail.Exception) as failed:
        cluster.run(["srun", "-N1", "-n1", sys.executable, "-c", crash], cwd=tmp_path)
    message = str(failed.value)
    assert "stack in core" in message and "\n#0 " in message, message


# gdb's backtrace of the core a rank left when Open MPI 4.1.4 crashed in MPI_Init across the nodes
# (2026-12-02, 1 launch in 131 of test_pb_calls under the piggyback layer), as core_stacks shows it.
INIT_RACE_STACK = """
stack in core (build/openmpi/tests/test_pb_calls):
#0  0x0000000000000000 in ?? ()
#1  0x00007fd15bbec996 in ?? () from /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_tcp.so
#2  0x00007fd161ba0d95 in ?? () from /lib/x86_64-linux-gnu/libevent_core-2.1.so.7
#3  0x00007fd161ba142f in event_base_loop () from /lib/x86_64-linux-gnu/libevent_core-2.1.so.7
#4  0x00007fd161d47d26 in ?? () from /lib/x86_64-linux-gnu/libopen-pal.so.40
#5  0x00007fd161d47e74 in opal_progress () from /lib/x86_64-linux-gnu/libopen-pal.so.40
#6  0x00007fd16215afb4 in ompi_mpi_init () from /lib/x86_64-linux-gnu/libmpi.so.40
#7  0x00007fd1620eeb7d in PMPI_Init () from /lib/x86_64-linux-gnu/libmpi.so.40
#8  0x00007fd1622140a9 in ml_lifecycle_init (layer=0x7fd16221ca80) at src/core/lifecycle.c:17
#9  0x00007fd1621c4577 in MPI_Init (argc=0x7fff1201d78c) at src/piggyback/piggyback_wrappers.c:19
#10 0x0000563e5bb6f440 in main (argc=<optimized out>) at tests/mpi/piggyback/test_pb_calls.c:626"""


def test_open_mpi_init_race_is_recognised_and_nothing_else():
    """Only a call to address 0 from Open MPI's TCP BTL inside ompi_mpi_init is that crash: the
    same call after MPI_Init returned, a call to 0 from elsewhere, or a crash at another address
    are failures to show."""
    assert open_mpi_init_race(INIT_RACE_STACK)
    assert open_mpi_init_race("\nstack in core.1 (p):\n#0  0x00000000004011d6 in main ()" +
                              INIT_RACE_STACK)
    after_init = INIT_RACE_STACK.replace("in ompi_mpi_init ()", "in ompi_request_default_wait ()")
    assert not open_mpi_init_race(after_init)
    from_a_layer = INIT_RACE_STACK.replace("openmpi3/mca_btl_tcp.so", "libmpilens-piggyback.so")
    assert not open_mpi_init_race(from_a_layer)
    elsewhere = INIT_RACE_STACK.replace("#0  0x0000000000000000 in ?? ()",
                                        "#0  0x00007fd15bbec100 in ?? ()")
    assert not open_mpi_init_race(elsewhere)
    assert not open_mpi_init_race("")


def _launches(monkeypatch, codes, stacks):
    """Cluster._launch returning the exit codes in turn and core_stacks returning stacks; the
    list of the launches made."""
    made = []

    def launch(words, cwd, environment, timeout):
        made.append(words)
        return subprocess.CompletedProcess(words, codes[len(made) - 1], "out", "err")

    monkeypatch.setattr(Cluster, "_launch", staticmethod(launch))
    monkeypatch.setattr(conftest, "core_stacks", lambda words, cwd: stacks)
    return made


def test_a_run_that_died_of_the_init_race_runs_again_and_says_so(monkeypatch, tmp_path):
    (tmp_path / "core").write_text("")
    made = _launches(monkeypatch, [139, 0], INIT_RACE_STACK)
    with pytest.warns(OpenMPIInitRace, match="died in Open MPI's MPI_Init"):
        done = Cluster(env={}).run(["srun", "program"], cwd=tmp_path)
    assert done.returncode == 0 and len(made) == 2
    assert not (tmp_path / "core").exists(), "the first core must not be read as the second's"


def test_the_init_race_runs_again_once_only(monkeypatch, tmp_path):
    made = _launches(monkeypatch, [139, 139], INIT_RACE_STACK)
    with pytest.warns(OpenMPIInitRace), pytest.raises(pytest.fail.Exception):
        Cluster(env={}).run(["srun", "program"], cwd=tmp_path)
    assert len(made) == 2


def test_any_other_failure_fails_at_once(monkeypatch, tmp_path):
    made = _launches(monkeypatch, [139], INIT_RACE_STACK.replace("mca_btl_tcp", "mca_btl_vader"))
    with pytest.raises(pytest.fail.Exception, match="exited with 139"):
        Cluster(env={}).run(["srun", "program"], cwd=tmp_path)
    assert len(made) == 1
