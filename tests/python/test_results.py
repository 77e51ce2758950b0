"""The results reader: a good file, and each way a file can be broken."""

from __future__ import annotations

import json
import re

import pytest

from conftest import SANITY_FIXTURE, read_records, write_records
from mpilens import results
from mpilens.errors import MpilensError


def _error(path) -> str:
    with pytest.raises(MpilensError) as caught:
        results.load(path)
    return str(caught.value)


def test_fixture_loads_with_every_record_kind():
    run = results.load(SANITY_FIXTURE)
    records = read_records(SANITY_FIXTURE)
    points = [r for r in records if r["type"] == "point"]
    assert run.family == "sanity"
    assert run.meta["schema"] == results.SUPPORTED_SCHEMA
    assert run.path == SANITY_FIXTURE
    assert [p["key"] for p in run.points] == [p["key"] for p in points]
    assert len(run.notes) == sum(r["type"] == "note" for r in records) >= 1
    assert run.complete and run.points_total == len(points)
    assert {p["bench"] for p in run.points} == {"clock", "compute", "offset", "handshake",
                                                "start"}
    assert [p["params"]["rank"] for p in run.points_of("clock")] == list(range(run.meta["ranks"]))


def test_interrupted_run_is_incomplete(tmp_path, sanity_records):
    kept = sanity_records[:5]
    run = results.load(write_records(tmp_path / "partial.jsonl", kept))
    assert not run.complete
    assert len(run.points) == sum(r["type"] == "point" for r in kept)


def test_unknown_records_and_keys_are_ignored(tmp_path, sanity_records):
    sanity_records[0]["future_key"] = {"x": 1}
    sanity_records[1]["stats"]["future_stat"] = 3
    sanity_records.insert(2, {"type": "annotation", "text": "from a newer writer"})
    run = results.load(write_records(tmp_path / "newer.jsonl", sanity_records))
    assert len(run.points) == run.points_total
    assert run.points[0]["stats"]["future_stat"] == 3


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.jsonl"
    assert _error(missing) == f'results file "{missing}" does not exist'


def test_empty_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    assert _error(path) == f'"{path}" is empty: the run wrote nothing'


def test_truncated_last_line(tmp_path):
    text = SANITY_FIXTURE.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    path = tmp_path / "cut.jsonl"
    path.write_text("".join(lines[:-1]) + lines[-1][:40], encoding="utf-8")
    assert _error(path) == (
        f'"{path}" is truncated: line {len(lines)} is incomplete (the run was interrupted while '
        "writing); run the program again with --resume to complete it")


def test_last_line_without_newline_is_truncated_even_if_it_parses(tmp_path):
    text = SANITY_FIXTURE.read_text(encoding="utf-8")
    path = tmp_path / "no-newline.jsonl"
    path.write_text(text.rstrip("\n"), encoding="utf-8")
    assert re.search(rf"is truncated: line {len(text.splitlines())} is incomplete", _error(path))


def test_truncated_meta_line(tmp_path):
    path = tmp_path / "cut-meta.jsonl"
    path.write_text(SANITY_FIXTURE.read_text(encoding="utf-8")[:60], encoding="utf-8")
    assert "is truncated: line 1 is incomplete" in _error(path)


def test_newer_schema(tmp_path, sanity_records):
    sanity_records[0]["schema"] = 3
    path = write_records(tmp_path / "future.jsonl", sanity_records)
    assert _error(path) == (f'"{path}" was written with results schema 3; this mpilens reads '
                            "schemas up to 1 (upgrade mpilens)")


@pytest.mark.parametrize("schema", [None, "1", 1.0, True])
def test_schema_not_an_integer(tmp_path, sanity_records, schema):
    if schema is None:
        del sanity_records[0]["schema"]
    else:
        sanity_records[0]["schema"] = schema
    path = write_records(tmp_path / "bad-schema.jsonl", sanity_records)
    assert _error(path) == (f'"{path}" is not an mpilens results file: its meta record has no '
                            'integer "schema"')


@pytest.mark.parametrize("first_line", [
    '{"name": "x", "value": 1}', '[1, 2, 3]', "hello world", '{"type": "point"}'])
def test_foreign_file(tmp_path, first_line):
    path = tmp_path / "foreign.jsonl"
    path.write_text(first_line + "\n" + json.dumps({"name": "y"}) + "\n")
    assert _error(path) == f'"{path}" is not an mpilens results file'


def test_corrupt_middle_line(tmp_path):
    lines = SANITY_FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3] = lines[3][:50] + "\n"
    path = tmp_path / "corrupt.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    assert _error(path) == f'"{path}" is corrupt at line 4: not a JSON object'


def test_invalid_last_line_with_newline_counts_as_truncated(tmp_path):
    lines = SANITY_FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[-1] = lines[-1][:30] + "\n"
    path = tmp_path / "cut-newline.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    assert f"is truncated: line {len(lines)} is incomplete" in _error(path)


def test_duplicate_key(tmp_path, sanity_records):
    first = next(i for i, r in enumerate(sanity_records) if r["type"] == "point")
    sanity_records.append(dict(sanity_records[first]))
    path = write_records(tmp_path / "dup.jsonl", sanity_records)
    key = sanity_records[first]["key"]
    assert _error(path) == (f'"{path}" is corrupt at line {len(sanity_records)}: point key '
                            f'"{key}" already appeared at line {first + 1}')


@pytest.mark.parametrize("missing", ["key", "bench", "params", "stats"])
def test_point_missing_field(tmp_path, sanity_records, missing):
    del sanity_records[1][missing]
    path = write_records(tmp_path / "incomplete-point.jsonl", sanity_records)
    assert _error(path) == (f'"{path}" is corrupt at line 2: the point has no valid '
                            f'"{missing}"')


def test_load_dir_sorted_and_empty(tmp_path, sanity_records):
    write_records(tmp_path / "b.jsonl", sanity_records)
    write_records(tmp_path / "a.jsonl", sanity_records)
    (tmp_path / "notes.txt").write_text("not a results file")
    assert [run.path.name for run in results.load_dir(tmp_path)] == ["a.jsonl", "b.jsonl"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(MpilensError, match=r'^no results files \(\*\.jsonl\) in ".*empty"$'):
        results.load_dir(empty)
    with pytest.raises(MpilensError, match=r'^results directory ".*missing" does not exist$'):
        results.load_dir(tmp_path / "missing")
