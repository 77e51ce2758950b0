"""Communication matrices: read from results points, rootflush and flush files; exported and read
back."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

from conftest import (MONITOR_FIXTURE, ROOTFLUSH_FIXTURE, dense, dense_matrix, read_records,
                      write_records)
from mpilens import matrices, results
from mpilens.errors import MpilensError
from mpilens.matrices import FLUSHED, Traffic

RING_COUNTS = [[0, 4, 0, 0], [0, 0, 3, 0], [0, 0, 0, 2], [1, 0, 0, 0]]
RING_BYTES = [[0, 4096, 0, 0], [0, 0, 3072, 0], [0, 0, 0, 2048], [1024, 0, 0, 0]]
# A small matrix with a 0-byte message (1→0), a message to oneself (2→2), a silent rank.
SMALL_COUNTS = [[0, 2, 0], [1, 0, 0], [0, 0, 3]]
SMALL_BYTES = [[0, 100, 0], [0, 0, 0], [0, 0, 30]]
SANITY_META = dict(read_records(MONITOR_FIXTURE)[0], family="sanity", points_total=0)


def small() -> Traffic:
    return Traffic("p2p", dense_matrix("p2p", "counts", SMALL_COUNTS),
                   dense_matrix("p2p", "bytes", SMALL_BYTES))


def text_of(write, what) -> str:
    """What an export writer writes."""
    out = io.StringIO()
    write(what, out)
    return out.getvalue()


def coo(entries: list, size: int = 3) -> dict:
    return {"format": "coo", "shape": [size, size], "entries": entries}


# --- results points ------------------------------------------------------------------------------

def test_fixture_matrices_are_the_ring():
    found = matrices.traffic_of(results.load(MONITOR_FIXTURE))
    assert list(found) == ["p2p", "coll", "osc"]
    p2p, coll, osc = found.values()
    assert dense(p2p.counts).tolist() == RING_COUNTS
    assert dense(p2p.bytes).tolist() == RING_BYTES
    assert (p2p.counts.total, p2p.bytes.total, p2p.ranks) == (10, 10240, 4)
    assert (p2p.backend, p2p.backend_reason) == ("pmpi", None)
    assert dense(coll.counts)[0].tolist() == [0, 2, 2, 2] and coll.counts.total == 6
    assert dense(coll.bytes)[0].tolist() == [0, 512, 512, 512] and coll.bytes.total == 1536
    assert coll.backend_reason.startswith("no Open MPI pml/monitoring component")
    assert not len(osc.pairs) and osc.ranks == 4


def test_coo_round_trip():
    matrix = dense_matrix("coll", "bytes", SMALL_BYTES)
    assert matrices.to_coo(matrix) == coo([[0, 1, 100], [2, 2, 30]])
    back = matrices.from_coo(matrices.to_coo(matrix), "coll", "bytes", "here")
    assert dense(back).tolist() == SMALL_BYTES and back.values.dtype == np.int64


@pytest.mark.parametrize("value,problem", [
    ([], '"counts" is not a sparse matrix of format "coo"'),
    ({"format": "csr", "shape": [3, 3], "entries": []}, 'is not a sparse matrix of format "coo"'),
    ({"format": "coo", "shape": [3, 2], "entries": []},
     "has shape [3, 2]: expected [P, P] with P at least 1"),
    ({"format": "coo", "shape": [3, 3]}, 'has no list "entries"'),
    (coo([[0, 1]]), "has entries that are not [sender, receiver, value] triples of integers"),
    (coo([[0, 1, 2], [1, 2]]), "triples of integers"),
    (coo([[0, 1, 2.5]]), "triples of integers"),
    (coo([[0, 1, "2"]]), "triples of integers"),
    (coo([[0, 1, 2 ** 64 - 1]]), "has a value above 2^63-1"),
    (coo([[0, 3, 1]]), "entry [0, 3, 1] lies outside the 3×3 matrix"),
    (coo([[-1, 0, 1]]), "entry [-1, 0, 1] lies outside the 3×3 matrix"),
    (coo([[0, 1, -5]]), "entry [0, 1, -5] has a negative value"),
    (coo([[0, 1, 5], [2, 0, 1], [0, 1, 6]]), "has two entries for sender 0 and receiver 1"),
])
def test_bad_coo_is_refused_naming_where(value, problem):
    with pytest.raises(MpilensError) as caught:
        matrices.from_coo(value, "p2p", "counts", '"m.jsonl", point "matrix/kind=p2p"')
    assert str(caught.value).startswith('"m.jsonl", point "matrix/kind=p2p": "counts" ')
    assert problem in str(caught.value)


def test_bad_point_in_a_file_names_file_and_point(tmp_path):
    records = read_records(MONITOR_FIXTURE)
    records[2]["stats"]["bytes"]["entries"][0] = [0, 9, 512]
    path = write_records(tmp_path / "monitor.jsonl", records)
    with pytest.raises(MpilensError) as caught:
        matrices.traffic_of(results.load(path))
    assert str(caught.value) == (f'"{path}", point "matrix/kind=coll": "bytes" entry [0, 9, 512] '
                                 "lies outside the 4×4 matrix")


def test_counts_and_bytes_of_different_sizes(tmp_path):
    records = read_records(MONITOR_FIXTURE)
    records[1]["stats"]["bytes"]["shape"] = [5, 5]
    path = write_records(tmp_path / "monitor.jsonl", records)
    with pytest.raises(MpilensError, match=r'point "matrix/kind=p2p": its counts are 4×4 but its '
                                           r"bytes 5×5$"):
        matrices.traffic_of(results.load(path))


# --- rootflush and flush files -------------------------------------------------------------------

def test_rootflush_fixture_is_the_fixture_p2p():
    traffic = matrices.read_rootflush(ROOTFLUSH_FIXTURE / "ring_counts.0.prof",
                                      ROOTFLUSH_FIXTURE / "ring_sizes.0.prof")
    assert traffic.kind == FLUSHED and traffic.backend is None
    p2p = matrices.traffic_of(results.load(MONITOR_FIXTURE))["p2p"]
    assert np.array_equal(dense(traffic.counts), dense(p2p.counts))
    assert np.array_equal(dense(traffic.bytes), dense(p2p.bytes))


@pytest.mark.parametrize("text,message", [
    ("1 2\n3 4 5\n", 'line 2: 3 values, where the first line has 2'),
    ("1 2\n3 x\n", 'line 2: "x" is not a non-negative integer'),
    ("1 -2\n3 4\n", 'line 1: "-2" is not a non-negative integer'),
    ("1 2.0\n3 4\n", 'line 1: "2.0" is not a non-negative integer'),
    ("1 ٣\n3 4\n", 'line 1: "٣" is not a non-negative integer'),
    (f"1 {2 ** 63}\n3 4\n", "line 1: a value is above 2^63-1"),
    ("1 2 3\n4 5 6\n", ": 2 lines of 3 values; expected a square matrix, one line per rank"),
    ("\n  \n", " is empty"),
])
def test_bad_dense_file_names_file_and_line(tmp_path, text, message):
    path = tmp_path / "m_counts.0.prof"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(MpilensError) as caught:
        matrices.read_dense(path, FLUSHED, "counts")
    assert str(caught.value).startswith(f'"{path}"')
    assert str(caught.value).endswith(message)


def test_dense_file_skips_blank_lines_and_counts_them(tmp_path):
    path = tmp_path / "m.mat"
    path.write_text("\n1 2\n\n3 4\n\n", encoding="utf-8")
    assert dense(matrices.read_dense(path, "p2p", "counts")).tolist() == [[1, 2], [3, 4]]
    path.write_text("\n1 2\n\n3 y\n", encoding="utf-8")
    with pytest.raises(MpilensError, match='line 4: "y"'):
        matrices.read_dense(path, "p2p", "counts")


def test_missing_dense_file(tmp_path):
    with pytest.raises(MpilensError, match=f'^file "{tmp_path / "x.prof"}" does not exist$'):
        matrices.read_dense(tmp_path / "x.prof", FLUSHED, "counts")


def test_rootflush_files_of_different_sizes(tmp_path):
    (tmp_path / "a_counts.0.prof").write_text("1 2\n3 4\n")
    (tmp_path / "a_sizes.0.prof").write_text("1\n")
    with pytest.raises(MpilensError, match="has 2 ranks but .* has 1: they are not from the same"):
        matrices.read_rootflush(tmp_path / "a_counts.0.prof", tmp_path / "a_sizes.0.prof")


def write_flush_set(prefix: Path, counts: list, sizes: list) -> None:
    """What MPI_M_flush writes: each rank's row, one line per destination."""
    for rank, (row_counts, row_sizes) in enumerate(zip(counts, sizes)):
        lines = [f"{dest} {c} {b}\n" for dest, (c, b) in enumerate(zip(row_counts, row_sizes))]
        Path(f"{prefix}.{rank}.prof").write_text("".join(lines))


def test_flush_set_assembles_every_rank(tmp_path):
    write_flush_set(tmp_path / "app", RING_COUNTS, RING_BYTES)
    traffic = matrices.read_flush(tmp_path / "app")
    assert dense(traffic.counts).tolist() == RING_COUNTS
    assert dense(traffic.bytes).tolist() == RING_BYTES
    assert traffic.kind == FLUSHED


def test_flush_set_missing_a_rank(tmp_path):
    write_flush_set(tmp_path / "app", RING_COUNTS, RING_BYTES)
    (tmp_path / "app.2.prof").unlink()
    with pytest.raises(MpilensError) as caught:
        matrices.read_flush(tmp_path / "app")
    assert str(caught.value) == (f'the flush set "{tmp_path / "app"}" is incomplete: its files '
                                 f'list 4 ranks, but "{tmp_path / "app"}.2.prof" does not exist')
    (tmp_path / "app.3.prof").unlink()  # the last rank: its absence shows in the others' lines
    with pytest.raises(MpilensError, match=r'list 4 ranks, but ".*app.2.prof" does not exist'):
        matrices.read_flush(tmp_path / "app")


@pytest.mark.parametrize("line,message", [
    ("1 2\n", 'line 2: 2 values; expected "<destination> <messages> <bytes>"'),
    ("7 1 1\n", "line 2: destination 7 is not one of the 2 ranks the file lists"),
    ("0 1 1\n", "line 2: destination 0 appears twice"),
    ("1 1 z\n", 'line 2: "z" is not a non-negative integer'),
])
def test_bad_flush_file_names_file_and_line(tmp_path, line, message):
    write_flush_set(tmp_path / "app", [[0, 1], [1, 0]], [[0, 8], [8, 0]])
    (tmp_path / "app.1.prof").write_text("0 1 8\n" + line)
    with pytest.raises(MpilensError) as caught:
        matrices.read_flush(tmp_path / "app")
    assert str(caught.value) == f'"{tmp_path / "app.1.prof"}" {message}'


def test_flush_files_of_different_calls(tmp_path):
    write_flush_set(tmp_path / "app", [[0, 1], [1, 0]], [[0, 8], [8, 0]])
    (tmp_path / "app.1.prof").write_text("0 1 8\n1 0 0\n2 0 0\n")
    with pytest.raises(MpilensError, match="lists 3 ranks but .* lists 2: they are not from"):
        matrices.read_flush(tmp_path / "app")
    write_flush_set(tmp_path / "app", [[0, 1], [1, 0]], [[0, 8], [8, 0]])
    (tmp_path / "app.5.prof").write_text("0 1 8\n1 0 0\n")
    with pytest.raises(MpilensError, match=r'app.5.prof" is beyond the 2 ranks the other files'):
        matrices.read_flush(tmp_path / "app")


# --- what mpilens matrix reads -------------------------------------------------------------------

@pytest.fixture
def sources(tmp_path) -> Path:
    """A results file, a rootflush pair and a flush set side by side, and an unrelated file."""
    write_records(tmp_path / "run.jsonl", read_records(MONITOR_FIXTURE))
    for name in ("ring_counts.0.prof", "ring_sizes.0.prof"):
        (tmp_path / name).write_bytes((ROOTFLUSH_FIXTURE / name).read_bytes())
    write_flush_set(tmp_path / "app", RING_COUNTS, RING_BYTES)
    return tmp_path


@pytest.mark.parametrize("given,kinds", [
    ("run.jsonl", ["p2p", "coll", "osc"]), ("run", ["p2p", "coll", "osc"]),
    ("ring", [FLUSHED]), ("ring_counts.0.prof", [FLUSHED]), ("ring_sizes.0.prof", [FLUSHED]),
    ("app", [FLUSHED]), ("app.2.prof", [FLUSHED])])
def test_load_recognises_each_source(sources, given, kinds):
    run = matrices.load(sources / given)
    assert run.family == "monitor" and run.complete
    found = matrices.traffic_of(run)
    assert list(found) == kinds
    assert dense(found[kinds[0]].counts).tolist() == RING_COUNTS


def test_flushed_run_says_what_it_is(sources):
    run = matrices.load(sources / "ring")
    assert run.path == sources / "ring" and run.meta["ranks"] == 4
    (note,) = run.notes
    assert note["text"].startswith("read from ring_counts.0.prof, ring_sizes.0.prof "
                                   "(MPI_M_rootflush): the sum of the kinds")
    flushed = matrices.load(sources / "app")
    assert "app.0.prof, app.1.prof, app.2.prof, app.3.prof (MPI_M_flush)" in \
        flushed.notes[0]["text"]


def test_load_directory_picks_its_monitor_run(tmp_path):
    directory = tmp_path / "dir"
    write_records(directory / "monitor.jsonl", read_records(MONITOR_FIXTURE))
    write_records(directory / "sanity.jsonl", [SANITY_META])
    assert matrices.load(directory).path == directory / "monitor.jsonl"
    write_records(directory / "again.jsonl", read_records(MONITOR_FIXTURE))
    with pytest.raises(MpilensError, match=r'several monitor results files in ".*dir" '
                                           r"\(again.jsonl, monitor.jsonl\): give one"):
        matrices.load(directory)


def test_load_refuses_other_families_and_unknown_paths(sources, tmp_path):
    write_records(tmp_path / "s.jsonl", [SANITY_META])
    with pytest.raises(MpilensError, match=r'^no monitor results in ".*s.jsonl"$'):
        matrices.load(tmp_path / "s.jsonl")
    with pytest.raises(MpilensError, match=r'^cannot tell what ".*nothing" is: expected a monitor'):
        matrices.load(tmp_path / "nothing")


def test_several_rootflush_roots_ask_for_one(sources):
    for name in ("ring_counts.2.prof", "ring_sizes.2.prof"):
        (sources / name).write_text("0\n")
    with pytest.raises(MpilensError, match=r'several rootflush files ".*ring_counts.<rank>.prof" '
                                           r"\(ranks 0, 2\): give one of them"):
        matrices.load(sources / "ring")
    assert matrices.traffic_of(matrices.load(sources / "ring_sizes.2.prof"))[FLUSHED].ranks == 1


def test_only_kind():
    run = results.load(MONITOR_FIXTURE)
    coll = matrices.only_kind(run, "coll")
    assert list(matrices.traffic_of(coll)) == ["coll"] and coll.complete
    assert matrices.only_kind(run, "all") is run
    flushed = matrices.load(ROOTFLUSH_FIXTURE / "ring")
    with pytest.raises(MpilensError) as caught:
        matrices.only_kind(flushed, "p2p")
    assert str(caught.value) == (f'"{ROOTFLUSH_FIXTURE / "ring"}" has no p2p matrices (it holds: '
                                 "flushed): flush files hold the sum of the kinds the program's "
                                 "flags selected, without saying which; use --kind all")


# --- exports -------------------------------------------------------------------------------------

def test_csv_lists_pairs_that_exchanged_anything():
    assert text_of(matrices.write_csv, small()) == ("sender,receiver,bytes,count\n"
                                          "0,1,100,2\n"
                                          "1,0,0,1\n"
                                          "2,2,30,3\n")


def test_dense_export():
    assert text_of(matrices.write_dense, small().bytes) == "0 100 0\n0 0 0\n0 0 30\n"


def test_matrix_market_export():
    assert text_of(matrices.write_matrix_market, small().counts) == (
        "%%MatrixMarket matrix coordinate integer general\n"
        "% mpilens monitor: p2p counts; row = sending rank + 1, column = receiving rank + 1\n"
        "3 3 3\n"
        "1 2 2\n"
        "2 1 1\n"
        "3 3 3\n")


def test_export_names_and_formats(tmp_path):
    assert sorted(matrices.exports(small(), ["mat"])) == ["p2p_bytes.mat", "p2p_counts.mat"]
    written = matrices.export(small(), tmp_path, matrices.FORMATS)
    assert [path.name for path in written] == ["p2p.csv", "p2p_counts.mat", "p2p_bytes.mat",
                                               "p2p_counts.mtx", "p2p_bytes.mtx"]
    assert (tmp_path / "p2p.csv").read_text() == text_of(matrices.write_csv, small())


def _read_matrix_market(path: Path) -> np.ndarray:
    """An independent reader of the coordinate format, as another tool would read it."""
    lines = [line for line in path.read_text().splitlines() if not line.startswith("%")]
    rows, columns, entries = map(int, lines[0].split())
    values = np.zeros((rows, columns), dtype=np.int64)
    for line in lines[1:]:
        i, j, v = map(int, line.split())
        values[i - 1, j - 1] = v
    assert len(lines) - 1 == entries
    return values


def test_exports_read_back(tmp_path):
    traffic = matrices.traffic_of(results.load(MONITOR_FIXTURE))["p2p"]
    matrices.export(traffic, tmp_path, matrices.FORMATS)
    for what, expected in (("counts", RING_COUNTS), ("bytes", RING_BYTES)):
        assert dense(matrices.read_dense(tmp_path / f"p2p_{what}.mat", "p2p", what)).tolist() \
            == expected
        assert _read_matrix_market(tmp_path / f"p2p_{what}.mtx").tolist() == expected
    rows = list(csv.DictReader(io.StringIO((tmp_path / "p2p.csv").read_text())))
    counts, sizes = np.zeros((4, 4), dtype=int), np.zeros((4, 4), dtype=int)
    for row in rows:
        counts[int(row["sender"]), int(row["receiver"])] = int(row["count"])
        sizes[int(row["sender"]), int(row["receiver"])] = int(row["bytes"])
    assert counts.tolist() == RING_COUNTS and sizes.tolist() == RING_BYTES


def test_export_to_unwritable_place(tmp_path):
    (tmp_path / "p2p.csv").mkdir()
    with pytest.raises(MpilensError, match=r'^cannot write ".*p2p.csv": Is a directory$'):
        matrices.export(small(), tmp_path, ["csv"])
