"""`mpilens tune` across the nodes: inside an allocation of two nodes, one rank each, the real
overlap benchmark against libmpilens-progress's polling thread (srun by default, the setting's
variables reaching the ranks on both nodes), and a variable the library lacks refused before
anything is launched, the library read by mpilens-cvars across the nodes."""

from __future__ import annotations

import json

from conftest import hosts_by_rank

PLUGIN = {"openmpi": "pmix", "mpich": "pmi2"}
BAD_VARIABLE = {"mpich": "MPIR_CVAR_NO_SUCH_THING", "openmpi": "OMPI_MCA_no_such_param"}
LIBRARY = {"mpich": "MPICH", "openmpi": "Open MPI"}
# A tuning of two settings: its budget, and time beyond it for the launches in flight.
BUDGET = "2m"
TIMEOUT_S = 420


def _own_lines(stderr: str) -> list:
    """What mpilens printed on stderr, without salloc's and srun's own lines."""
    return [line for line in stderr.splitlines() if not line.startswith(("salloc:", "srun:"))]


def _meta(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def test_tune_a_progress_thread_across_nodes(cluster, flavour, tmp_path):
    out = tmp_path / "tune"
    done = cluster.run(["salloc", "-N2", "-n2", *cluster.mpilens(
        "tune", "--bench", "overlap:receiver", "--mpi", flavour, "--settings", "progress-poll",
        "--budget", BUDGET, "--rounds-max", "3", "--output", out)], cwd=tmp_path,
        timeout=TIMEOUT_S)
    assert f"mpilens: running srun -n 2 --mpi={PLUGIN[flavour]} " in done.stderr, done.stderr
    document = json.loads((out / "tune.json").read_text())
    assert document["target"]["np"] == 2 and document["target"]["launcher"] == "srun"
    assert document["library"]["flavour"] == flavour
    assert document["library"]["nodes"] == 2
    assert document["baseline"]["median"] > 0
    (setting,) = document["settings"]
    assert setting["name"] == "progress-poll"
    assert setting["verdict"] in ("better", "worse", "noise"), setting["reason"]
    # every run spanned both nodes, and only the setting's runs had the thread
    baseline_run = out / document["baseline"]["runs"][1]["results"]
    setting_run = out / setting["runs"][0]["results"]
    for path, label in ((baseline_run, "none"), (setting_run, "thread:poll")):
        meta = _meta(path)
        assert meta["hosts"] == hosts_by_rank(2), meta["hosts"]
        assert meta["progress_setting"]["label"] == label
    assert done.stdout.splitlines()[-1].startswith("best: ")


def test_a_variable_the_library_lacks_is_refused_across_nodes(cluster, flavour, tmp_path):
    out = tmp_path / "tune"
    variable = BAD_VARIABLE[flavour]
    done = cluster.run(["salloc", "-N2", "-n2", *cluster.mpilens(
        "tune", "--bench", "overlap:receiver", "--mpi", flavour, "--try", f"bad:{variable}=1",
        "--output", out)], cwd=tmp_path, check=False)
    assert done.returncode == 2, done.stderr
    (line,) = _own_lines(done.stderr)
    assert line.startswith(f'mpilens: error: setting "bad": {variable} is not a control variable '
                           f"of {LIBRARY[flavour]} "), line
    assert not out.exists()
