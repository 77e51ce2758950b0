"""Fuzzing the results reader (issue 17, section 3): real-looking records of every family, one
value changed to another type (or deleted, nested deep, made huge or NaN), are either reported or
refused with one line by `mpilens report`; never a traceback. The seed is fixed, so a failure
names a case that can be replayed."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest
from matplotlib.figure import Figure

import test_piggyback_analysis as pb_tests
import test_progress_analysis as pg_tests
from conftest import (MONITOR_FIXTURE, OVERLAP_FIXTURE, SANITY_FIXTURE, read_records,
                      write_records)
from mpilens import cli
from mpilens.results import Run
from test_coll_analysis import chain_points, coll_meta
from test_map_analysis import cg_point, grid_points, map_run

Files = Dict[str, List[dict]]
Path_ = Tuple[Any, ...]

CASES_PER_FAMILY = 40
# Each list deeper than this stands for every element: the first, the last and one between.
LIST_ELEMENTS = 3
NESTING = 200
# One case in RENDERED has its figures rendered; the others are built but not turned into
# images, which takes most of a report's time.
RENDERED = 8


def run_files(runs: List[Run]) -> Files:
    """The records of each file of `runs` (members of a combined run each a file)."""
    return {member.path.name: [member.meta, *member.points, *member.notes]
            for run in runs for member in (run.members or [run])}


def coll_files() -> Files:
    files = {}
    for ranks in (2, 3):
        points = chain_points(ranks)
        files[f"coll-np{ranks}.jsonl"] = [coll_meta(ranks, len(points)), *points]
    return files


def piggyback_files() -> Files:
    return run_files([pb_tests.study(methods=("pack-before", "separate"), pb_sizes=(64,))])


# Every family, as the files a results directory of it holds.
BASES: Dict[str, Callable[[], Files]] = {
    "sanity": lambda: {"sanity.jsonl": read_records(SANITY_FIXTURE)},
    "overlap": lambda: {"overlap.jsonl": read_records(OVERLAP_FIXTURE)},
    "monitor": lambda: {"monitor.jsonl": read_records(MONITOR_FIXTURE)},
    "coll": coll_files,
    "piggyback": piggyback_files,
    "progress": lambda: run_files([pg_tests.study()]),
    "map": lambda: run_files([map_run(grid_points()),
                              map_run([cg_point()], name="map-cg.jsonl")]),
}


def value_paths(value: Any, path: Path_ = ()) -> Iterator[Path_]:
    """The paths of every value inside `value` (a few elements of each list)."""
    if path:
        yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from value_paths(item, path + (key,))
    elif isinstance(value, list):
        chosen = sorted({0, len(value) // 2, len(value) - 1}) if value else []
        for index in chosen[:LIST_ELEMENTS]:
            yield from value_paths(value[index], path + (index,))


def nested(value: Any) -> Any:
    for _ in range(NESTING):
        value = [value]
    return value


# Each change: (name, new value from the old one); None as the new value deletes the key.
DELETE = object()
CHANGES: List[Tuple[str, Callable[[Any], Any]]] = [
    ("to string", lambda old: json.dumps(old) if not isinstance(old, str) else 7),
    ("to number", lambda old: 5),
    ("to null", lambda old: None),
    ("to list", lambda old: list(old.values()) if isinstance(old, dict) else [old]),
    ("to object", lambda old: dict(enumerate(old)) if isinstance(old, list) else {"x": old}),
    ("to bool", lambda old: True),
    ("bool to int", lambda old: int(old) if isinstance(old, bool) else 1),
    ("delete", lambda old: DELETE),
    ("deep nesting", nested),
    ("huge", lambda old: 10**400),
    ("huge negative", lambda old: -(10**400)),
    ("NaN", lambda old: float("nan")),
    ("infinity", lambda old: float("inf")),
]


def changed(files: Files, rng: random.Random) -> Tuple[Files, str]:
    """A copy of `files` with one value of one record changed, and what was changed."""
    files = copy.deepcopy(files)
    name = rng.choice(sorted(files))
    records = files[name]
    # The meta record is a quarter of the cases: every analysis reads it.
    index = 0 if rng.random() < 0.25 else rng.randrange(len(records))
    paths = list(value_paths(records[index]))
    path = rng.choice(paths)
    change, make = rng.choice(CHANGES)
    parent = records[index]
    for step in path[:-1]:
        parent = parent[step]
    new = make(parent[path[-1]])
    if new is DELETE and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = None if new is DELETE else new
    where = "/".join(str(step) for step in path)
    return files, f"{name} line {index + 1} {where}: {change}"


def report(directory: Path, outdir: Path) -> Tuple[int, str]:
    """`mpilens report DIRECTORY --output OUTDIR` in this process: its status and its errors."""
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(["report", str(directory), "--output", str(outdir)])
    return status, errors.getvalue()


def failure(case: str, status: int, errors: str) -> str:
    return f"{case}: status {status}: {errors.strip()[-300:]}"


@pytest.mark.parametrize("family", sorted(BASES))
def test_type_changes_are_reported_or_refused_in_one_line(family, tmp_path, monkeypatch):
    base = BASES[family]()
    rng = random.Random(f"fuzz-{family}")
    failures = []
    for number in range(CASES_PER_FAMILY):
        files, case = changed(base, rng)
        directory = tmp_path / f"case{number}"
        for name, records in files.items():
            write_records(directory / name, records)
        try:
            with monkeypatch.context() as patch:
                if number % RENDERED:
                    patch.setattr(Figure, "savefig", lambda figure, *args, **kwargs: None)
                status, errors = report(directory, tmp_path / f"out{number}")
        except Exception:  # noqa: BLE001 - the fuzz test's finding is the exception itself
            failures.append(f"{case}: {traceback.format_exc(limit=-2).strip()}")
            continue
        lines = errors.splitlines()
        if not (status == 0 or (status == 2 and len(lines) == 1
                                and lines[0].startswith("mpilens: error: "))):
            failures.append(failure(case, status, errors))
    assert not failures, f"{len(failures)} of {CASES_PER_FAMILY} cases:\n" + "\n\n".join(failures)
