"""`mpilens export`: the points of results files as CSV and JSON tables, read back with the csv
and json modules and checked cell by cell against the records they came from."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import test_piggyback_analysis as pb_tests
from conftest import (
    MONITOR_FIXTURE,
    OVERLAP_FIXTURE,
    SANITY_FIXTURE,
    one_line_error,
    read_records,
    run_cli,
    write_records,
)
from test_coll_analysis import chain_points, coll_files
from test_map_analysis import KIB, MIB, grid_points, map_run, with_samples
from test_progress_analysis import (
    SIZES,
    interrupts_point,
    overhead_point,
    progress_run,
    setting_points,
    t_b,
)

from mpilens import cli, export
from mpilens.analysis import map as ma
from mpilens.analysis import piggyback as pb
from mpilens.analysis import progress as pg
from mpilens.results import Run
from mpilens.safe_names import file_name_part, printable

IDENTITY = ["file", "point", "family", "program", "bench", "key"]
CONTEXT = [
    "meta.date",
    "meta.mpilens_version",
    "meta.mpi.library",
    "meta.mpi.flavour",
    "meta.ranks",
    "meta.nodes",
]


# --- building results files and reading the exports back ---------------------------------------


def write_run(directory: Path, run: Run, name: str = "") -> Path:
    """A results file holding run's meta, points and notes, named name or as the run's file."""
    return write_records(directory / (name or run.path.name), [run.meta, *run.points, *run.notes])


def copy_fixture(directory: Path, fixture: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(fixture, directory / fixture.name))


def export_main(capsys, *argv: str) -> Tuple[List[str], str]:
    """`mpilens export ARGV` in this process: (its lines on stdout, its stderr)."""
    assert cli.main(["export", *argv]) == 0
    captured = capsys.readouterr()
    return captured.out.splitlines(), captured.err


def read_csv(path: Path) -> Tuple[List[str], List[Dict[str, str]]]:
    """(the header cells, the rows keyed by column name without its unit)."""
    with open(path, newline="", encoding="utf-8") as file:
        header, *body = list(csv.reader(file))
    names = [cell.split(" [")[0] for cell in header]
    assert all(len(row) == len(names) for row in body)
    return header, [dict(zip(names, row)) for row in body]


def read_json(path: Path) -> Dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def leaves(prefix: str, mapping: Dict[str, Any]) -> Dict[str, Any]:
    """The values of mapping by dotted name, objects opened, lists kept whole."""
    found: Dict[str, Any] = {}
    for name, value in mapping.items():
        if isinstance(value, dict) and value:
            found.update(leaves(f"{prefix}.{name}", value))
        else:
            found[f"{prefix}.{name}"] = value
    return found


def as_csv(value: Any) -> str:
    """What a CSV cell holds for a value of a record."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def check_round_trip(source: List[Path], csv_file: Path, json_file: Path) -> List[Dict[str, str]]:
    """Every point of the source files is one row of both exports, in order, holding each of its
    parameters and statistics exactly; the JSON holds each file's meta once and the header's
    units. Returns the CSV rows."""
    header, rows = read_csv(csv_file)
    document = read_json(json_file)
    points = [
        (path, index, point)
        for path in source
        for index, point in enumerate(r for r in read_records(path) if r["type"] == "point")
    ]
    assert len(rows) == len(document["rows"]) == len(points)
    assert header == [export.header(c, document["units"].get(c)) for c in document["columns"]]
    assert document["columns"][:12] == IDENTITY + CONTEXT
    assert document["columns"][-2:] == ["valid", "invalid_reason"]
    assert [entry["file"] for entry in document["files"]] == [path.name for path in source]
    assert [entry["meta"] for entry in document["files"]] == [read_records(p)[0] for p in source]
    for row, record, (path, index, point) in zip(rows, document["rows"], points):
        meta = read_records(path)[0]
        expected = {
            "file": path.name,
            "point": index,
            "family": meta["family"],
            "program": meta["program"],
            "bench": point["bench"],
            "key": point["key"],
            "meta.mpi.library": meta["mpi"]["library"],
            "meta.ranks": meta["ranks"],
            **leaves("params", point["params"]),
            **leaves("stats", point["stats"]),
        }
        assert set(record) == set(document["columns"])
        for column, value in expected.items():
            assert record[column] == value, column
            assert row[column] == as_csv(value), column
        # the columns of the other points' fields are empty on this row
        assert all(
            record[c] is None and row[c] == ""
            for c in document["columns"]
            if c.startswith(("params.", "stats.")) and c not in expected
        )
        assert row["valid"] == as_csv(record["valid"])
    return rows


# --- one family at a time -------------------------------------------------------------------------


def progress_files(directory: Path) -> List[Path]:
    """A progress file with one overhead below 0 beyond noise, and the interrupts benchmark."""
    points = setting_points(pg.NONE, ops=("p2p",), tests=False)
    broken = overhead_point("p2p", "work", SIZES[-1], -5000.0, t_b("p2p", SIZES[-1]), noise=1000.0)
    points = [broken if p["key"] == broken["key"] else p for p in points]
    return [write_run(directory, progress_run(pg.NONE, [*points, interrupts_point()]))]


def piggyback_files(directory: Path) -> List[Path]:
    """The baseline at 1 µs and pack-before faster, at 700 ns, beyond the noise of both."""
    base = pb_tests.pb_run("none", [pb_tests.pb_point("latency", "specific", 1024, 1000.0)])
    layer = pb_tests.pb_run(
        "pack-before",
        [
            pb_tests.pb_point("latency", "specific", 1024, 700.0, "pack-before", 4),
            pb_tests.pb_point("bandwidth", "specific", 1 << 20, 4e9, "pack-before", 4),
        ],
    )
    return [write_run(directory, base), write_run(directory, layer)]


def map_files(directory: Path) -> List[Path]:
    """An allgather grid whose 1 MiB cells gain 80% where the model predicts 50%."""
    points = with_samples(grid_points(per_after={KIB: 0.5e-4, MIB: 0.2e-3}), 0.01)
    return [write_run(directory, map_run(points))]


def coll_results(directory: Path) -> List[Path]:
    """A linear broadcast at 2 and 4 ranks, on 2 cores: 4 ranks crowd them."""
    by_ranks = {ranks: chain_points(ranks) for ranks in (2, 4)}
    return coll_files(directory, by_ranks, cpus_online=2, binding=["0-1"] * 4)


FAMILY_FILES = {
    "sanity": lambda directory: [copy_fixture(directory, SANITY_FIXTURE)],
    "overlap": lambda directory: [copy_fixture(directory, OVERLAP_FIXTURE)],
    "monitor": lambda directory: [copy_fixture(directory, MONITOR_FIXTURE)],
    "coll": coll_results,
    "piggyback": piggyback_files,
    "progress": progress_files,
    "map": map_files,
}


@pytest.mark.parametrize("family", FAMILY_FILES)
def test_every_family_round_trips_in_both_formats(family, tmp_path, capsys):
    source = FAMILY_FILES[family](tmp_path / "results")
    lines, _ = export_main(capsys, str(tmp_path / "results"), "--output", str(tmp_path / "out"))
    count = sum(1 for path in source for r in read_records(path) if r["type"] == "point")
    rows = "row" if count == 1 else "rows"
    assert lines == [f"exported: {tmp_path / 'out' / family}.csv ({count} {rows})"]
    lines, _ = export_main(
        capsys, str(tmp_path / "results"), "--format", "json", "--output", str(tmp_path / "out")
    )
    assert lines == [f"exported: {tmp_path / 'out' / family}.json ({count} {rows})"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        f"{family}.csv",
        f"{family}.json",
    ]
    check_round_trip(
        source, tmp_path / "out" / f"{family}.csv", tmp_path / "out" / f"{family}.json"
    )


def test_known_cells_and_units_of_the_sanity_fixture(tmp_path, capsys):
    source = copy_fixture(tmp_path, SANITY_FIXTURE)
    lines, _ = export_main(capsys, str(source))
    assert lines == [f"exported: {tmp_path / 'export' / 'sanity.csv'} (17 rows)"]
    header, rows = read_csv(tmp_path / "export" / "sanity.csv")
    assert header[:12] == IDENTITY + CONTEXT
    assert "stats.read_cost_ns [ns]" in header and "params.target_ns [ns]" in header
    assert "stats.sample.median [ns]" in header and "stats.sample.values [ns]" in header
    # counts, ratios and texts have no unit
    for column in ("params.rank", "stats.rel_error", "stats.sample.n", "stats.sample.stop"):
        assert column in header
    clock = rows[1]
    assert (clock["file"], clock["point"], clock["bench"], clock["key"]) == (
        "sanity-2ranks.jsonl",
        "1",
        "clock",
        "clock/rank=1",
    )
    assert clock["stats.read_cost_ns"] == "22.1" and clock["params.rank"] == "1"
    assert clock["meta.mpi.flavour"] == "openmpi" and clock["meta.nodes"] == "1"
    assert clock["meta.mpilens_version"] == "0.1.0 (git 1a2b3c4)"
    compute = next(row for row in rows if row["key"] == "compute/kernel=time/target_ns=100")
    assert compute["stats.achieved_ns"] == "167.0" and compute["params.target_ns"] == "100"
    record = next(r for r in read_records(SANITY_FIXTURE) if r.get("key") == compute["key"])
    assert json.loads(compute["stats.sample.values"]) == record["stats"]["sample"]["values"]
    assert float(compute["stats.sample.median"]) == record["stats"]["sample"]["median"]
    # sanity's points are taken as they are: no validity
    assert {(row["valid"], row["invalid_reason"]) for row in rows} == {("", "")}


def test_units_of_sizes_rates_percentages_and_seconds(tmp_path, capsys):
    piggyback_files(tmp_path / "pb")
    map_files(tmp_path / "map")
    progress_files(tmp_path / "progress")
    for name in ("pb", "map", "progress"):
        export_main(capsys, str(tmp_path / name))
    pb_header, _ = read_csv(tmp_path / "pb" / "export" / "piggyback.csv")
    for cell in (
        "params.size_bytes [B]",
        "params.pb_size [B]",
        "stats.bandwidth_Bps [B/s]",
        "stats.latency_ns [ns]",
        "params.iterations",
    ):
        assert cell in pb_header
    map_header, _ = read_csv(tmp_path / "map" / "export" / "map.csv")
    for cell in ("stats.before_s [s]", "stats.gain_pct [%]", "stats.samples.after_s [s]"):
        assert cell in map_header
    progress_header, _ = read_csv(tmp_path / "progress" / "export" / "progress.csv")
    for cell in ("params.rate_hz [Hz]", "stats.achieved_hz [Hz]", "stats.t_o_ns [ns]"):
        assert cell in progress_header
    units = read_json_export(tmp_path / "progress", capsys)["units"]
    assert units["params.rate_hz"] == "Hz" and "stats.tests" not in units


def read_json_export(directory: Path, capsys) -> Dict[str, Any]:
    export_main(capsys, str(directory), "--format", "json", "--output", str(directory / "json"))
    (path,) = (directory / "json").iterdir()
    return read_json(path)


# --- what the analyses leave out ------------------------------------------------------------------


def test_points_the_reports_leave_out_are_invalid_with_the_reason(tmp_path, capsys):
    for name, make in (("pb", piggyback_files), ("map", map_files), ("progress", progress_files)):
        make(tmp_path / name)
    coll_results(tmp_path / "coll")
    for name in ("pb", "map", "progress", "coll"):
        export_main(capsys, str(tmp_path / name))
    _, rows = read_csv(tmp_path / "pb" / "export" / "piggyback.csv")
    # the baseline is what the others are judged against; the bandwidth point has no baseline
    assert [(row["valid"], row["invalid_reason"]) for row in rows] == [
        ("", ""),
        ("false", pb.INVALID_BELOW_FLOOR),
        ("", ""),
    ]
    _, rows = read_csv(tmp_path / "map" / "export" / "map.csv")
    by_size = {(row["params.size_bytes"], row["valid"], row["invalid_reason"]) for row in rows}
    assert len(rows) == 4
    assert by_size == {(str(KIB), "true", ""), (str(MIB), "false", ma.INVALID_UNEXPLAINED)}
    _, rows = read_csv(tmp_path / "progress" / "export" / "progress.csv")
    judged = {row["key"]: (row["valid"], row["invalid_reason"]) for row in rows}
    broken = f"p2p/size={SIZES[-1]}/compute=work/strategy=none"
    assert judged.pop(broken) == ("false", pg.INVALID_BELOW_ZERO)
    assert judged.pop("interrupts/rate_hz=8192") == ("", "")
    assert set(judged.values()) == {("true", "")}
    _, rows = read_csv(tmp_path / "coll" / "export" / "coll.csv")
    by_ranks = {(row["params.np"], row["valid"], row["invalid_reason"]) for row in rows}
    assert by_ranks == {("2", "true", ""), ("4", "false", "not trustworthy: 4 ranks share 2 cores")}
    assert {row["file"] for row in rows} == {"coll-np2.jsonl", "coll-np4.jsonl"}


def test_overlap_points_of_a_crowded_machine_are_invalid(tmp_path, capsys):
    # the fixture's sender map on 1 processing unit: ranks 0 and 1 share it
    records = read_records(OVERLAP_FIXTURE)
    records[0].update(cpus_online=1, binding=["0", "0"])
    write_records(tmp_path / "overlap.jsonl", records)
    export_main(capsys, str(tmp_path / "overlap.jsonl"), "--format", "json")
    rows = read_json(tmp_path / "export" / "overlap.json")["rows"]
    sender = [row for row in rows if row["bench"] == "sender"]
    assert len(sender) == 48
    assert {row["valid"] for row in sender} == {False}
    assert sender[0]["invalid_reason"].startswith("not trustworthy: ")
    # the references and nload have no ratio to judge
    assert {row["valid"] for row in rows if row["bench"].startswith("ref-")} == {None}


def test_files_of_two_studies_are_judged_one_by_one(tmp_path, capsys):
    paths = piggyback_files(tmp_path)
    shutil.copy(paths[0], tmp_path / "piggyback-none-again.jsonl")
    lines, err = export_main(capsys, str(tmp_path))
    assert lines == [f"exported: {tmp_path / 'export' / 'piggyback.csv'} (4 rows)"]
    (note,) = err.splitlines()
    assert note.startswith(
        "mpilens: note: the piggyback files are not one study, so their points were judged file "
        "by file: "
    )
    assert "both hold" in note
    _, rows = read_csv(tmp_path / "export" / "piggyback.csv")
    assert {row["valid"] for row in rows} == {""}


# --- directories, files, options -----------------------------------------------------------------


def test_a_directory_of_several_families(tmp_path, capsys):
    results = tmp_path / "run"
    for fixture in (SANITY_FIXTURE, OVERLAP_FIXTURE, MONITOR_FIXTURE):
        copy_fixture(results, fixture)
    coll_results(results)
    lines, err = export_main(capsys, str(results))
    out = results / "export"
    # files in name order, each family where its first file comes
    assert lines == [
        f"exported: {out / 'coll.csv'} (10 rows)",
        f"exported: {out / 'monitor.csv'} (3 rows)",
        f"exported: {out / 'overlap.csv'} (361 rows)",
        f"exported: {out / 'sanity.csv'} (17 rows)",
    ]
    assert err == ""
    _, monitor = read_csv(out / "monitor.csv")
    assert json.loads(monitor[0]["stats.bytes.entries"]) == [
        [0, 1, 4096],
        [1, 2, 3072],
        [2, 3, 2048],
        [3, 0, 1024],
    ]
    assert monitor[0]["stats.total_bytes"] == "10240" and monitor[0]["params.kind"] == "p2p"
    _, overlap = read_csv(out / "overlap.csv")
    assert overlap[0]["key"] == "ref-pingpong/size_bytes=0"
    assert overlap[0]["stats.one_way_ns"] == "797.0"
    assert overlap[0]["stats.sample.values"] == "[1637,1594,1567,1566,1644]"
    # a second export replaces the files and says so
    lines, _ = export_main(capsys, str(results), "--family", "monitor")
    assert lines == [f"exported: {out / 'monitor.csv'} (3 rows, replaced)"]
    assert sorted(p.name for p in out.iterdir()) == [
        "coll.csv",
        "monitor.csv",
        "overlap.csv",
        "sanity.csv",
    ]


def test_json_layout(tmp_path, capsys):
    source = copy_fixture(tmp_path, MONITOR_FIXTURE)
    export_main(capsys, str(source), "--format", "json", "--output", str(tmp_path / "m.json"))
    document = read_json(tmp_path / "m.json")
    assert list(document) == ["mpilens_export", "family", "columns", "units", "files", "rows"]
    assert document["mpilens_export"] == 1 and document["family"] == "monitor"
    (entry,) = document["files"]
    assert entry["meta"]["hosts"] == ["vm"] * 4 and entry["notes"] == []
    row = document["rows"][0]
    assert row["stats.counts.entries"] == [[0, 1, 4], [1, 2, 3], [2, 3, 2], [3, 0, 1]]
    assert row["stats.total_messages"] == 10 and row["valid"] is None
    assert document["units"] == {"stats.total_bytes": "B"}


def test_output_file_family_and_format_choices(tmp_path, capsys):
    results = tmp_path / "run"
    copy_fixture(results, SANITY_FIXTURE)
    copy_fixture(results, MONITOR_FIXTURE)
    lines, _ = export_main(
        capsys, str(results), "--family", "sanity", "--output", str(tmp_path / "s.csv")
    )
    assert lines == [f"exported: {tmp_path / 's.csv'} (17 rows)"]
    assert not (results / "export").exists()
    for argv, message in (
        (["--output", str(tmp_path / "x.csv")], '--output "'),
        (["--family", "sanity", "--output", str(tmp_path / "x.json")], '--output "'),
        (["--family", "coll"], 'no results of family "coll" in "'),
        (["--format", "xml"], "argument --format: invalid choice: 'xml'"),
    ):
        line = one_line_error(run_cli("export", str(results), *argv))
        assert line.startswith(f"mpilens: error: {message}"), line
    assert "2 families are exported (monitor, sanity)" in one_line_error(
        run_cli("export", str(results), "--output", str(tmp_path / "x.csv"))
    )
    assert "it holds: monitor, sanity" in one_line_error(
        run_cli("export", str(results), "--family", "coll")
    )
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "x.json").exists()


def test_bad_results_file_is_refused_in_one_line(tmp_path):
    records = read_records(SANITY_FIXTURE)
    records[2]["stats"]["read_cost_ns"] = "fast"
    write_records(tmp_path / "sanity.jsonl", records)
    copy_fixture(tmp_path, MONITOR_FIXTURE)
    line = one_line_error(run_cli("export", str(tmp_path)))
    assert line == (
        f'mpilens: error: "{tmp_path / "sanity.jsonl"}" is corrupt at line 3: point field '
        '"stats.read_cost_ns": expected a number or null, found a string'
    )
    truncated = tmp_path / "cut" / "run.jsonl"
    truncated.parent.mkdir()
    truncated.write_bytes(SANITY_FIXTURE.read_bytes()[:-10])
    line = one_line_error(run_cli("export", str(truncated), "--format", "json"))
    last = len(SANITY_FIXTURE.read_text(encoding="utf-8").splitlines())
    assert line.startswith(f'mpilens: error: "{truncated}" is truncated: line {last} is incomplete')
    assert one_line_error(run_cli("export", str(tmp_path / "none"))) == (
        f'mpilens: error: results directory "{tmp_path / "none"}" does not exist'
    )
    # nothing written for a refused input
    assert not (tmp_path / "export").exists() and not (tmp_path / "cut" / "export").exists()


def test_the_results_are_never_overwritten(tmp_path):
    source = copy_fixture(tmp_path, SANITY_FIXTURE)
    renamed = source.rename(tmp_path / "sanity.csv")
    before = renamed.read_bytes()
    line = one_line_error(run_cli("export", str(renamed), "--output", str(tmp_path)))
    assert line == (
        f'mpilens: error: "{renamed}" is a results file being exported; choose another --output'
    )
    assert renamed.read_bytes() == before


# --- hostile input --------------------------------------------------------------------------------


@pytest.mark.parametrize("form", export.FORMATS)
def test_hostile_names_stay_inside_the_output_directory(tmp_path, capsys, form):
    records = read_records(MONITOR_FIXTURE)
    records[0]["family"] = "../../x"
    for record in records[1:]:
        record["family"] = "../../x"
        record["params"]["kind"] = "../../y/\ud800"
        record["stats"]["../z"] = {"/etc/passwd": 1}
    results = tmp_path / "a" / "b" / "run"
    results.mkdir(parents=True)
    path = results / "hostile.jsonl"
    # ASCII, so that the lone surrogate is written as the escape a JSON file can hold
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="ascii")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    lines, _ = export_main(capsys, str(path), "--format", form)
    name = f"{file_name_part('../../x')}.{form}"
    # the lone surrogate, which no UTF-8 file can hold, as every report writes it
    kind = printable("../../y/\ud800")
    assert kind.isprintable()
    assert name.startswith("__") and "/" not in name
    assert lines == [f"exported: {results / 'export' / name} (3 rows)"]
    after = sorted(str(p) for p in tmp_path.rglob("*"))
    assert sorted(set(after) - set(before)) == [
        str(results / "export"),
        str(results / "export" / name),
    ]
    if form == "csv":
        header, rows = read_csv(results / "export" / name)
        assert "stats.../z./etc/passwd" in header
        assert rows[0]["params.kind"] == kind and rows[0]["family"] == "../../x"
    else:
        document = read_json(results / "export" / name)
        assert document["rows"][0]["params.kind"] == kind
        assert document["family"] == "../../x"
