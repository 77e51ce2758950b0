"""Matrices of many ranks stay sparse: the numbers of an 8192-rank stencil, from its results file to
the exports and the report section, without any P × P array; and the sparse analysis gives what
the dense formulas give on random matrices."""

from __future__ import annotations

import io
import json
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import dense, dense_matrix
from mpilens import matrices, results
from mpilens.analysis import monitor
from mpilens.errors import MpilensError
from mpilens.matrices import Traffic
from mpilens.plots import monitor as plots
from mpilens.plots.common import new_figure
from mpilens.section import Plot
from mpilens.units import format_size

# The most cubic grid of 8192 ranks, as MPI_Dims_create makes it.
DIMS = (32, 16, 16)
RANKS = 32 * 16 * 16
# Bytes of one message across each dimension, and messages per pair.
FACE_BYTES = (24576, 16384, 12288)
MESSAGES = 100


def coordinates(dims, ranks: np.ndarray) -> np.ndarray:
    """Each rank's place in the grid, row-major (the last dimension varies fastest, as
    MPI_Cart_create numbers them)."""
    return np.stack([ranks // (dims[1] * dims[2]), ranks // dims[2] % dims[1], ranks % dims[2]],
                    axis=1)


def stencil(dims=DIMS) -> np.ndarray:
    """[sender, receiver, messages, bytes] of a 3-D stencil, 6 neighbours, not periodic, in
    row-major order of the cells."""
    ranks = np.arange(int(np.prod(dims)))
    coords = coordinates(dims, ranks)
    rows = []
    for dim, stride in enumerate((dims[1] * dims[2], dims[2], 1)):
        for step in (-1, 1):
            inside = (coords[:, dim] + step >= 0) & (coords[:, dim] + step < dims[dim])
            senders = ranks[inside]
            rows.append(np.stack([senders, senders + step * stride,
                                  np.full(len(senders), MESSAGES),
                                  np.full(len(senders), MESSAGES * FACE_BYTES[dim])], axis=1))
    table = np.concatenate(rows)
    return table[np.lexsort((table[:, 1], table[:, 0]))]


def traffic_of_table(table: np.ndarray, ranks: int) -> Traffic:
    cells = table[:, 0] * ranks + table[:, 1]
    return Traffic("p2p", matrices.sparse("p2p", "counts", ranks, cells, table[:, 2]),
                   matrices.sparse("p2p", "bytes", ranks, cells, table[:, 3]))


@pytest.fixture(scope="module")
def stencil_file(tmp_path_factory):
    """The results file libmpilens-monitor writes for the stencil (p2p only), on nodes of 64
    ranks."""
    table = stencil()

    def coo(column: int) -> dict:
        return {"format": "coo", "shape": [RANKS, RANKS],
                "entries": table[:, [0, 1, column]].tolist()}

    meta = {"type": "meta", "schema": 1, "family": "monitor", "program": "libmpilens-monitor",
            "ranks": RANKS, "nodes": RANKS // 64,
            "hosts": [f"n{rank // 64}" for rank in range(RANKS)], "points_total": 1}
    point = {"type": "point", "family": "monitor", "bench": "matrix", "key": "matrix/kind=p2p",
             "params": {"kind": "p2p"},
             "stats": {"backend": "pmpi", "ranks": RANKS, "counts": coo(2), "bytes": coo(3)}}
    path = tmp_path_factory.mktemp("stencil") / "monitor.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in (meta, point)))
    return path, table


def expected_sent(rank: int) -> int:
    """What a rank of the stencil sends: a face's bytes to each neighbour it has."""
    coords = coordinates(DIMS, np.array([rank]))[0]
    return sum(MESSAGES * size * ((coord > 0) + (coord < side - 1))
               for coord, side, size in zip(coords.tolist(), DIMS, FACE_BYTES))


def test_stencil_of_8192_ranks_without_a_dense_matrix(stencil_file, tmp_path):
    path, table = stencil_file
    new_figure()  # matplotlib's own first-use allocations are not the matrices'
    tracemalloc.start()
    try:
        run = results.load(path)
        traffic = matrices.traffic_of(run)["p2p"]
        summary = monitor.summarize(traffic)
        sentences = monitor.diagnose(run)
        written = matrices.export(traffic, tmp_path, ["csv", "mtx"])
        section = plots.render(run)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # A dense matrix of booleans alone would take RANKS² bytes (int64: 8 times more).
    assert peak < RANKS * RANKS
    pairs = sum(2 * (side - 1) * RANKS // side for side in DIMS)
    assert (summary.active_pairs, summary.messages) == (pairs, pairs * MESSAGES)
    assert summary.bytes == int(table[:, 3].sum()) == \
        sum(expected_sent(rank) for rank in range(RANKS))
    assert summary.sent_bytes.tolist() == [expected_sent(rank) for rank in range(RANKS)]
    assert summary.received_bytes.tolist() == summary.sent_bytes.tolist()  # symmetric
    assert summary.one_way == 0 and summary.self_ranks == 0
    busiest = summary.top[0]
    assert (busiest.sender, busiest.receiver, busiest.bytes) == (0, 256, 100 * FACE_BYTES[0])
    assert summary.tied_top == 2 * (DIMS[0] - 1) * RANKS // DIMS[0]
    assert sentences[0].startswith(f"point-to-point: {format_size(summary.bytes)} in "
                                   f"{pairs * MESSAGES} messages between {pairs} of "
                                   f"{RANKS * (RANKS - 1)} pairs (0%)")
    assert [file.name for file in written] == ["p2p.csv", "p2p_counts.mtx", "p2p_bytes.mtx"]
    (heat_map,) = [part for part in section.parts
                   if isinstance(part, Plot) and part.name == "map-p2p"]
    assert heat_map.caption.endswith("Each cell sums what the ranks of one node sent to the ranks "
                                     "of another: the run's 128 hosts, in the order of their "
                                     "first rank.")


def test_sparse_exports_of_8192_ranks_read_back_exactly(stencil_file, tmp_path):
    path, table = stencil_file
    traffic = matrices.traffic_of(results.load(path))["p2p"]
    matrices.export(traffic, tmp_path, ["csv", "mtx"])
    csv = np.loadtxt(tmp_path / "p2p.csv", delimiter=",", skiprows=1, dtype=np.int64)
    assert csv.tolist() == table[:, [0, 1, 3, 2]].tolist()
    for what, column in (("counts", 2), ("bytes", 3)):
        market = (tmp_path / f"p2p_{what}.mtx").read_text().splitlines()
        assert market[2] == f"{RANKS} {RANKS} {len(table)}"
        entries = np.loadtxt(market[3:], dtype=np.int64)
        assert entries.tolist() == (table[:, [0, 1, column]] + [1, 1, 0]).tolist()


def test_dense_exports_read_back_exactly(tmp_path):
    dims = (8, 8, 4)
    table = stencil(dims)
    matrices.export(traffic_of_table(table, 256), tmp_path, ["mat"])
    for what, column in (("counts", 2), ("bytes", 3)):
        back = matrices.read_dense(tmp_path / f"p2p_{what}.mat", "p2p", what)
        assert back.ranks == 256
        assert np.stack([back.senders, back.receivers, back.values], axis=1).tolist() == \
            table[:, [0, 1, column]].tolist()


def test_dense_export_refused_where_it_cannot_fit(monkeypatch, tmp_path):
    traffic = Traffic("p2p", matrices.sparse("p2p", "counts", 65536, [1], [1]),
                      matrices.sparse("p2p", "bytes", 65536, [1], [8]))
    monkeypatch.setattr(matrices.shutil, "disk_usage", lambda _: SimpleNamespace(free=2 ** 30))
    with pytest.raises(MpilensError) as caught:
        matrices.export(traffic, tmp_path, ["mtx", "mat"])
    assert str(caught.value) == (
        "cannot write the dense p2p matrices (65536×65536): they take at least 16 GiB and "
        f'"{tmp_path}" has 1 GiB free; Matrix Market (--format mtx) holds their nonzero '
        "entries only")
    assert not list(tmp_path.iterdir())


# --- the sparse analysis against the dense formulas ----------------------------------------------

def random_traffic(seed: int, size: int = 12) -> Traffic:
    """Random counts and bytes, about a third of the cells set, some messages of 0 bytes, some
    to oneself."""
    generator = np.random.default_rng(seed)
    counts = generator.integers(0, 5, (size, size)) * (generator.random((size, size)) < 0.35)
    sizes = counts * generator.integers(0, 4, (size, size)) * 1000
    return Traffic("p2p", dense_matrix("p2p", "counts", counts),
                   dense_matrix("p2p", "bytes", sizes))


def dense_one_way(values: np.ndarray):
    between = values - np.diag(np.diag(values))
    total = int(between.sum())
    return float(np.abs(between - between.T).sum()) / 2 / total if total else None


@pytest.mark.parametrize("seed", range(8))
def test_sparse_summary_is_the_dense_one(seed):
    traffic = random_traffic(seed)
    counts, sizes = dense(traffic.counts), dense(traffic.bytes)
    summary = monitor.summarize(traffic)
    active = (counts != 0) | (sizes != 0)
    assert summary.sent_bytes.tolist() == sizes.sum(axis=1).tolist()
    assert summary.received_bytes.tolist() == sizes.sum(axis=0).tolist()
    assert summary.sent_messages.tolist() == counts.sum(axis=1).tolist()
    assert summary.received_messages.tolist() == counts.sum(axis=0).tolist()
    assert summary.active_pairs == int(active.sum() - np.diag(active).sum())
    assert (summary.self_ranks, summary.self_messages, summary.self_bytes) == (
        int(np.diag(active).sum()), int(np.trace(counts)), int(np.trace(sizes)))
    assert summary.one_way == dense_one_way(sizes if sizes.sum() else counts)
    pairs = sorted(((-int(sizes[s, r]), -int(counts[s, r]), s, r)
                    for s, r in zip(*np.nonzero(active)) if s != r))
    assert [(p.sender, p.receiver) for p in summary.top] == \
        [(s, r) for _, _, s, r in pairs[:monitor.TOP_PAIRS]]


def test_sparse_changes_are_the_dense_ones():
    a, b = random_traffic(1), random_traffic(2)
    change = dense(b.bytes) - dense(a.bytes)
    np.fill_diagonal(change, 0)
    moved = np.abs(change).ravel()
    cells = [cell for cell in np.argsort(-moved, kind="stable")[:monitor.BIGGEST_CHANGES]
             if moved[cell]]
    sentence = monitor._changes(a, b, by_bytes=True)[0]
    assert [text.split(" ")[0] for text in sentence.split(": ", 1)[1].split("; ")] == \
        [f"{cell // 12}→{cell % 12}" for cell in cells]


def test_dense_rows_are_written_as_they_are_read():
    matrix = dense_matrix("p2p", "bytes", [[0, 0, 7], [0, 0, 0], [5, 0, 0]])
    out = io.StringIO()
    matrices.write_dense(matrix, out)
    assert out.getvalue() == "0 0 7\n0 0 0\n5 0 0\n"
