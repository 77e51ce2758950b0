"""The README's "On a cluster" recipe, run as it is written: its lines, with a fresh $HOME, from
a copy of the checkout's committed sources, on the test cluster (srun across both nodes), then
`mpilens report` from the virtual environment it made. Only `module load` is left out: the
machine has no environment modules (the Debian packages are the site's MPI, hwloc and cmake)."""

from __future__ import annotations

import json
import re
import subprocess

from conftest import ROOT

TIMEOUT_S = 900


def recipe() -> list:
    """The shell lines of the README's code block under "## On a cluster", comments dropped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^## On a cluster\n\n```\n(.*?)^```$", text, re.S | re.M)
    assert block, "README.md has no code block under \"## On a cluster\""
    lines = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line]


def test_the_recipe_is_what_this_test_runs():
    lines = recipe()
    assert lines[0].startswith("module load")
    assert any(line.startswith("srun -N 2 -n 4") for line in lines)
    assert lines[-1] == "mpilens report ."


def test_readme_cluster_recipe(cluster, tmp_path):
    source, home = tmp_path / "mpilens", tmp_path / "home"
    source.mkdir()
    home.mkdir()
    # the committed sources, as a clone would have them (not the checkout's build/ or .venv/)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    script = "set -ex\n" + "\n".join(line for line in recipe() if not line.startswith("module load"))
    # the cluster's variables, without the checkout's Python (PYTHONPATH, a venv): mpilens must
    # come from the environment the recipe makes
    env = {key: value for key, value in cluster.env.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["HOME"] = str(home)
    done = subprocess.run(["bash", "-c", script], cwd=source, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    # the programs and the command came from the recipe's own prefix and environment
    assert (home / "mpilens" / "bin" / "mpilens-sanity").is_file()
    assert (home / "mpilens-venv" / "bin" / "mpilens").is_file()
    records = [json.loads(line) for line in (source / "sanity.jsonl").read_text().splitlines()]
    meta = records[0]
    assert meta["type"] == "meta" and meta["ranks"] == 4 and meta["nodes"] == 2, meta
    assert any(record["type"] == "point" for record in records)
    assert (source / "report.html").is_file(), done.stdout[-2000:]
