"""Shared helpers: the fixture files, synthetic runs, and running the CLI as a user would."""

from __future__ import annotations

import copy
import html
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np
import pytest

from mpilens import families, launch
from mpilens.launch import Flavour
from mpilens.matrices import Matrix, sparse, to_coo
from mpilens.results import Run

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "data" / "fixtures"
SANITY_FIXTURE = FIXTURES / "sanity-2ranks.jsonl"
OVERLAP_FIXTURE = FIXTURES / "overlap-synthetic.jsonl"
MONITOR_FIXTURE = FIXTURES / "monitor-ring-4ranks.jsonl"
ROOTFLUSH_FIXTURE = FIXTURES / "monitor-rootflush"
FAKE_PROGRAM = Path(__file__).resolve().parent / "fake_program.py"


@pytest.fixture
def on_path(monkeypatch):
    """Pretend exactly the named commands are on PATH (and no Slurm allocation)."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)

    def install(*names: str) -> None:
        monkeypatch.setattr(launch.shutil, "which",
                            lambda name: f"/usr/bin/{name}" if name in names else None)
    return install


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A fake source checkout with no build (launch.repo_root() is it), no MPILENS_LIB_DIR or
    MPILENS_BIN_DIR, and a PATH of one empty directory: nothing of mpilens is found but what a
    test puts there."""
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.setattr(launch, "repo_root", lambda: root)
    for name in ("MPILENS_LIB_DIR", "MPILENS_BIN_DIR"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "empty" / "bin").mkdir(parents=True)
    monkeypatch.setenv("PATH", str(tmp_path / "empty" / "bin"))
    return root


# The MPI launchers a test may run for real, each with its flavour (see need_launcher).
REAL_LAUNCHERS = [(Flavour.OPENMPI, "mpirun.openmpi"), (Flavour.MPICH, "mpiexec.mpich")]


def need_launcher(launcher: str, monkeypatch) -> None:
    """Skips the test unless `launcher` is installed; runs it outside any Slurm allocation."""
    if shutil.which(launcher) is None:
        pytest.skip(f"{launcher} is not installed")
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)


def load_script(path: Path, name: str):
    """A Python script without a .py suffix (tests/conformance/run, tests/compat/matrix), loaded
    as the module `name`."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    loader.exec_module(module)
    return module


def write_script(path: Path, text: str) -> Path:
    """An executable file holding `text`."""
    path.write_text(text)
    path.chmod(0o755)
    return path


def read_records(path: Path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_records(path: Path, records: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Compact, like the C writer, so a rewritten fixture is byte for byte the original.
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for r in records)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def sanity_records() -> list:
    """The records of the sanity fixture, free for a test to alter."""
    return read_records(SANITY_FIXTURE)


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    """A results directory holding a copy of the sanity fixture as sanity.jsonl."""
    directory = tmp_path / "run-a"
    write_records(directory / "sanity.jsonl", read_records(SANITY_FIXTURE))
    return directory


def make_run(points: list, **meta_changes) -> Run:
    """A synthetic sanity run: the fixture's meta (with changes) and the given points."""
    meta = copy.deepcopy(read_records(SANITY_FIXTURE)[0])
    meta.update(meta_changes)
    meta["points_total"] = len(points)
    return Run(path=Path("synthetic.jsonl"), meta=meta, points=points)


def point(bench: str, key: str, params: dict, stats: dict) -> dict:
    return {"type": "point", "family": "sanity", "bench": bench, "key": key, "params": params,
            "stats": stats}


def run_cli(*args: str, cwd: Path = ROOT, env: Optional[dict] = None,
            timeout: float = 60) -> subprocess.CompletedProcess:
    """`python -m mpilens ARGS` in a clean environment, output captured as text."""
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("MPILENS_", "SLURM_"))}
    environment["PYTHONPATH"] = str(ROOT / "python")
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "mpilens", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=timeout)


def make_overlap_run(points: list, notes: Sequence[dict] = (), **meta_changes) -> Run:
    """A synthetic overlap run: the overlap fixture's meta (with changes), points and notes."""
    meta = copy.deepcopy(read_records(OVERLAP_FIXTURE)[0])
    meta.update(meta_changes)
    meta["points_total"] = len(points)
    return Run(path=Path("overlap.jsonl"), meta=meta, points=points, notes=list(notes))


def overlap_point(bench: str, size: int, y: int, stats: dict, **params) -> dict:
    """An overlap point keyed as docs/overlap.md says; y is compute_ns, or threads for nload."""
    y_name = "threads" if bench == "nload" else "compute_ns"
    return {"type": "point", "family": "overlap", "bench": bench,
            "key": f"{bench}/size_bytes={size}/{y_name}={y}",
            "params": {"size_bytes": size, y_name: y, **params}, "stats": stats}


def sample_summary(median: float, ci_lo: float, ci_hi: float) -> dict:
    """The part of a sample summary the overlap analysis reads: the median and its interval."""
    return {"unit": "ns", "median": median, "ci_lo": ci_lo, "ci_hi": ci_hi}


def map_point(bench: str, size: int, compute: int, ratio: float, t_comm: float,
              width: float = 0.0) -> dict:
    """A point of a ratio map whose measured computation is as requested and whose ratio is
    exactly `ratio` (T_measured made to fit). With a width, T_measured's sample gets the
    interval that makes the ratio's interval ratio ± width/2 (T_comm and T_comp are exact)."""
    t_measured = max(t_comm, compute) + ratio * min(t_comm, compute)
    stats = {"t_measured_ns": t_measured, "t_comm_ns": t_comm, "t_comp_ns": compute,
             "lat0_ns": 0, "ratio": ratio}
    if width:
        half = width / 2 * min(t_comm, compute)
        stats["sample"] = sample_summary(t_measured, t_measured - half, t_measured + half)
    return overlap_point(bench, size, compute, stats)


def overlap_note(text: str, level: str = "skip") -> dict:
    return {"type": "note", "level": level, "text": text, "date": "2026-11-22T11:02:00Z"}


def fake_bin(directory: Path, source: Path, log: Path) -> dict:
    """A bin dir whose every mpilens program replays `source` (see fake_program.py), and the
    environment that program reads."""
    directory.mkdir(parents=True, exist_ok=True)
    for family in families.suite_families():
        program = directory / family.program
        program.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE_PROGRAM} \"$@\"\n")
        program.chmod(0o755)
    return {"FAKE_SOURCE": str(source), "FAKE_LOG": str(log)}


def dense_matrix(kind: str, what: str, values) -> Matrix:
    """The sparse matrix of a dense one (lists of rows or an array)."""
    values = np.array(values, dtype=np.int64)
    return sparse(kind, what, len(values), np.arange(values.size), values.ravel())


def dense(matrix: Matrix) -> np.ndarray:
    """A small sparse matrix as a dense array, to compare with what a test expects."""
    values = np.zeros((matrix.ranks, matrix.ranks), dtype=np.int64)
    values[matrix.senders, matrix.receivers] = matrix.values
    return values


def monitor_point(kind: str, counts, sizes, **stats) -> dict:
    """A point of a monitor run, as libmpilens-monitor writes it, from dense matrices (lists of
    rows or arrays); stats adds or replaces keys, such as backend_reason."""
    counts, sizes = np.array(counts, dtype=np.int64), np.array(sizes, dtype=np.int64)
    return {"type": "point", "family": "monitor", "bench": "matrix", "key": f"matrix/kind={kind}",
            "params": {"kind": kind},
            "stats": {"backend": "pmpi", "ranks": len(counts),
                      "counts": to_coo(dense_matrix(kind, "counts", counts)),
                      "bytes": to_coo(dense_matrix(kind, "bytes", sizes)),
                      "total_messages": int(counts.sum()), "total_bytes": int(sizes.sum()),
                      **stats}}


def make_monitor_run(points: list, **meta_changes) -> Run:
    """A synthetic monitor run: the monitor fixture's meta (with changes) and the given points."""
    meta = copy.deepcopy(read_records(MONITOR_FIXTURE)[0])
    meta.update(meta_changes)
    meta["points_total"] = len(points)
    return Run(path=Path("monitor.jsonl"), meta=meta, points=points)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    """The one line a refused command prints (exit status 2, no traceback)."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    return line


def logged_calls(fake: dict) -> list:
    """What a fake launcher or program appended to fake["log"], one JSON record per call."""
    return [json.loads(line) for line in fake["log"].read_text().splitlines()] \
        if fake["log"].exists() else []


def check_refused_before_launch(command: Callable[..., subprocess.CompletedProcess], fake: dict,
                                out: Path, argv: Sequence[str], message: str) -> None:
    """A command given bad input (argv, plus --output out unless it resumes) says `message` in its
    one line, and launches nothing and writes nothing."""
    output = [] if "--resume" in argv else ["--output", str(out)]
    line = one_line_error(command(fake, *argv, *output))
    assert line.startswith(f"mpilens: error: {message}")
    assert logged_calls(fake) == [] and not out.exists()


# The start of a fake Open MPI mpirun (a Python script) for commands tested without MPI: it takes
# the -x NAME=VALUE options mpilens gives it into `env`, and leaves in `args` "-n", the rank
# count, the program and its arguments.
FAKE_MPIRUN_PROLOGUE = r'''import json, os, sys
args, env = sys.argv[1:], {}
while args[0] == "-x":
    name, _, value = args[1].partition("=")
    env[name] = value
    args = args[2:]
assert args[0] == "-n", args
'''


def report_page(members: list, out: Path, heading: str) -> tuple:
    """The report of members written in out, which must hold one section under `heading` and every
    finding: (the page, the names of the plots written, sorted)."""
    from mpilens import report  # here: it loads matplotlib, which most tests do not need

    page = report.write_report(members, out).read_text(encoding="utf-8")
    assert page.count(f"<h2>{heading}") == 1
    for sentence in report.findings(members):
        assert html.escape(sentence) in page
    return page, sorted(p.name for p in (out / "plots").iterdir())


def assert_warned_once(sentences, start, detail):
    """A diagnosis that opens with the warning `start...`, which says `detail`, and says it in no
    later sentence: an invalid point is named once, and never counted as a finding."""
    assert sentences[0].startswith(start), sentences[0]
    assert detail in sentences[0]
    assert not any(detail in sentence for sentence in sentences[1:])
