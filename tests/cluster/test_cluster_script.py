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

from conftest import AGENT, CLUSTER_SCRIPT, NODES


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
