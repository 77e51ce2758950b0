"""Shared helpers: the fixture files, synthetic runs, and running the CLI as a user would."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from mpilens.results import Run

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "data" / "fixtures"
SANITY_FIXTURE = FIXTURES / "sanity-2ranks.jsonl"


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
