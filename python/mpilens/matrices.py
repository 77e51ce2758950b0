"""Communication matrices of the monitor family (docs/monitor.md): read them from a results file or
from the files MPI_M_flush and MPI_M_rootflush write, and export them.

Every matrix is what each rank sent to each rank: row = sending rank, column = receiving rank.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import results
from .errors import MpilensError
from .results import Record, Run

PathLike = Union[str, Path]

FAMILY = "monitor"
BENCH = "matrix"
KINDS = ("p2p", "coll", "osc")
# The kind of matrices read from flush files: the sum of whichever kinds the program's flags
# selected, which the files do not record.
FLUSHED = "flushed"
FORMATS = ("csv", "mat", "mtx")

INT64_MAX = int(np.iinfo(np.int64).max)
_ROOTFLUSH_FILE = re.compile(r"(?P<name>.+)_(?:counts|sizes)\.(?P<rank>\d+)\.prof")
_FLUSH_FILE = re.compile(r"(?P<name>.+)\.\d+\.prof")


@dataclass(frozen=True, eq=False)
class Matrix:
    """A ranks × ranks matrix of integers: what ("counts": messages, or "bytes") each rank sent to
    each rank, for one kind of communication."""

    kind: str
    what: str
    values: np.ndarray  # int64, values[sender, receiver]

    @property
    def ranks(self) -> int:
        return int(self.values.shape[0])

    @property
    def total(self) -> int:
        return int(self.values.sum())


@dataclass(frozen=True, eq=False)
class Traffic:
    """One kind of communication: its message and byte matrices, and what counted them."""

    kind: str
    counts: Matrix
    bytes: Matrix
    backend: Optional[str] = None  # "pmpi" or "ompi-mpit"; None when the source does not say
    backend_reason: Optional[str] = None  # why Open MPI's own counts were not used

    @property
    def ranks(self) -> int:
        return self.counts.ranks

    @property
    def active(self) -> np.ndarray:
        """Which cells saw any message (a message may carry 0 bytes)."""
        return (self.counts.values != 0) | (self.bytes.values != 0)


# --- results files -------------------------------------------------------------------------------

def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _entry_table(entries: list, problem: Callable[[str], MpilensError]) -> np.ndarray:
    """The entries as an n × 3 int64 array, refused unless they are triples of integers."""
    if not entries:
        return np.zeros((0, 3), dtype=np.int64)
    try:
        table = np.array(entries)
    except (ValueError, OverflowError):
        table = None
    if table is not None and table.ndim == 2 and table.shape[1] == 3 and table.dtype.kind == "i":
        return table.astype(np.int64)
    # numpy makes integers beyond int64 uint64, or floats when mixed with smaller ones.
    if any(_is_int(value) and value > INT64_MAX
           for entry in entries if isinstance(entry, list) for value in entry):
        raise problem("has a value above 2^63-1")
    raise problem("has entries that are not [sender, receiver, value] triples of integers")


def from_coo(value: object, kind: str, what: str, where: str) -> Matrix:
    """A matrix from its sparse form in a results point:
    {"format": "coo", "shape": [P, P], "entries": [[sender, receiver, value], ...]}.
    where names the file and the point, for errors."""
    def problem(text: str) -> MpilensError:
        return MpilensError(f'{where}: "{what}" {text}')

    if not isinstance(value, dict) or value.get("format") != "coo":
        raise problem('is not a sparse matrix of format "coo"')
    shape = value.get("shape")
    if not (isinstance(shape, list) and len(shape) == 2 and all(map(_is_int, shape))
            and shape[0] == shape[1] and shape[0] >= 1):
        raise problem(f"has shape {shape}: expected [P, P] with P at least 1")
    entries = value.get("entries")
    if not isinstance(entries, list):
        raise problem('has no list "entries"')
    table = _entry_table(entries, problem)
    size = shape[0]
    outside = (table[:, :2] < 0).any(axis=1) | (table[:, :2] >= size).any(axis=1)
    for mask, text in ((outside, f"lies outside the {size}×{size} matrix"),
                       (table[:, 2] < 0, "has a negative value")):
        if mask.any():
            raise problem(f"entry {table[np.argmax(mask)].tolist()} {text}")
    cells = table[:, 0] * size + table[:, 1]
    unique, first = np.unique(cells, return_index=True)
    if len(unique) < len(cells):
        repeated = np.setdiff1d(np.arange(len(cells)), first)[0]
        raise problem(f"has two entries for sender {table[repeated, 0]} and receiver "
                      f"{table[repeated, 1]}")
    values = np.zeros((size, size), dtype=np.int64)
    values[table[:, 0], table[:, 1]] = table[:, 2]
    return Matrix(kind, what, values)


def to_coo(matrix: Matrix) -> Record:
    """The sparse form a results point holds (the inverse of from_coo)."""
    senders, receivers = np.nonzero(matrix.values)
    entries = np.stack([senders, receivers, matrix.values[senders, receivers]], axis=1)
    return {"format": "coo", "shape": [matrix.ranks, matrix.ranks], "entries": entries.tolist()}


def _optional_text(value: object) -> Optional[str]:
    return value if isinstance(value, str) and value else None


def _point_traffic(run: Run, point: Record) -> Traffic:
    where = f'"{run.path}", point "{point["key"]}"'
    kind = point["params"].get("kind")
    if not isinstance(kind, str) or not kind:
        raise MpilensError(f'{where}: the point has no "kind" parameter')
    stats = point["stats"]
    counts = from_coo(stats.get("counts"), kind, "counts", where)
    sizes = from_coo(stats.get("bytes"), kind, "bytes", where)
    if counts.ranks != sizes.ranks:
        raise MpilensError(f"{where}: its counts are {counts.ranks}×{counts.ranks} but its bytes "
                           f"{sizes.ranks}×{sizes.ranks}")
    return Traffic(kind, counts, sizes, _optional_text(stats.get("backend")),
                   _optional_text(stats.get("backend_reason")))


def traffic_of(run: Run) -> Dict[str, Traffic]:
    """Each kind's matrices in a monitor run, by kind, in file order (p2p, coll, osc)."""
    found = (_point_traffic(run, point) for point in run.points_of(BENCH))
    return {traffic.kind: traffic for traffic in found}


# --- plain matrix files --------------------------------------------------------------------------

def _lines(path: Path) -> List[Tuple[int, List[str]]]:
    """(line number, words) of every line of a text file that is not blank."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MpilensError(f'file "{path}" does not exist') from None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise MpilensError(f'cannot read "{path}": {reason}') from None
    numbered = [(number, line.split()) for number, line in enumerate(text.splitlines(), start=1)]
    numbered = [(number, words) for number, words in numbered if words]
    if not numbered:
        raise MpilensError(f'"{path}" is empty')
    return numbered


def _integers(words: Sequence[str], path: Path, number: int) -> List[int]:
    # isascii: str.isdigit also accepts digits of other scripts, which int() then refuses.
    for word in words:
        if not (word.isascii() and word.isdigit()):
            raise MpilensError(f'"{path}" line {number}: "{word}" is not a non-negative integer')
    values = [int(word) for word in words]
    if max(values) > INT64_MAX:
        raise MpilensError(f'"{path}" line {number}: a value is above 2^63-1')
    return values


def read_dense(path: PathLike, kind: str, what: str) -> Matrix:
    """A plain integer matrix: one line per sending rank, values separated by spaces; the format
    MPI_M_rootflush writes and TreeMatch reads."""
    path = Path(path)
    rows: List[List[int]] = []
    for number, words in _lines(path):
        row = _integers(words, path, number)
        if rows and len(row) != len(rows[0]):
            raise MpilensError(f'"{path}" line {number}: {len(row)} values, where the first '
                               f"line has {len(rows[0])}")
        rows.append(row)
    if len(rows) != len(rows[0]):
        raise MpilensError(f'"{path}": {len(rows)} lines of {len(rows[0])} values; expected a '
                           "square matrix, one line per rank")
    return Matrix(kind, what, np.array(rows, dtype=np.int64))


def read_rootflush(counts_path: PathLike, sizes_path: PathLike) -> Traffic:
    """The two matrices MPI_M_rootflush writes: NAME_counts.<rank>.prof, NAME_sizes.<rank>.prof."""
    counts = read_dense(counts_path, FLUSHED, "counts")
    sizes = read_dense(sizes_path, FLUSHED, "bytes")
    if counts.ranks != sizes.ranks:
        raise MpilensError(f'"{counts_path}" has {counts.ranks} ranks but "{sizes_path}" has '
                           f"{sizes.ranks}: they are not from the same call")
    return Traffic(FLUSHED, counts, sizes)


def _flush_files(prefix: Path) -> Dict[int, Path]:
    """rank → file of a flush set, NAME.<rank>.prof."""
    pattern = glob.escape(prefix.name) + ".*.prof"
    found = {}
    for path in prefix.parent.glob(pattern):
        middle = path.name[len(prefix.name) + 1:-len(".prof")]
        if middle.isascii() and middle.isdigit():
            found[int(middle)] = path
    return found


def _flush_row(path: Path) -> Tuple[int, Dict[int, Tuple[int, int]]]:
    """(lines, destination → (messages, bytes)) of one rank's flush file."""
    row: Dict[int, Tuple[int, int]] = {}
    lines = _lines(path)
    for number, words in lines:
        if len(words) != 3:
            raise MpilensError(f'"{path}" line {number}: {len(words)} values; expected '
                               '"<destination> <messages> <bytes>"')
        destination, messages, size = _integers(words, path, number)
        if destination >= len(lines):
            raise MpilensError(f'"{path}" line {number}: destination {destination} is not one '
                               f"of the {len(lines)} ranks the file lists")
        if destination in row:
            raise MpilensError(f'"{path}" line {number}: destination {destination} appears '
                               "twice")
        row[destination] = (messages, size)
    return len(lines), row


def read_flush(prefix: PathLike) -> Traffic:
    """The matrices of a flush set: each rank's NAME.<rank>.prof, one line per rank of the
    communicator, "<destination> <messages> <bytes>"."""
    prefix = Path(prefix)
    files = _flush_files(prefix)
    if not files:
        raise MpilensError(f'no flush files "{prefix}.<rank>.prof"')
    rows = {rank: _flush_row(path) for rank, path in sorted(files.items())}
    size = rows[min(rows)][0]
    for rank, (lines, _) in rows.items():
        if lines != size:
            raise MpilensError(f'"{files[rank]}" lists {lines} ranks but "{files[min(rows)]}" '
                               f"lists {size}: they are not from the same call")
    missing = [rank for rank in range(size) if rank not in rows]
    if missing:
        raise MpilensError(f'the flush set "{prefix}" is incomplete: its files list {size} '
                           f'ranks, but "{prefix}.{missing[0]}.prof" does not exist')
    if max(rows) >= size:
        raise MpilensError(f'"{files[max(rows)]}" is beyond the {size} ranks the other files '
                           "list: they are not from the same call")
    counts = np.zeros((size, size), dtype=np.int64)
    sizes = np.zeros((size, size), dtype=np.int64)
    for rank, (_, row) in rows.items():
        for destination, (messages, nbytes) in row.items():
            counts[rank, destination], sizes[rank, destination] = messages, nbytes
    return Traffic(FLUSHED, Matrix(FLUSHED, "counts", counts), Matrix(FLUSHED, "bytes", sizes))


# --- what `mpilens matrix` reads -----------------------------------------------------------------

def _monitor_runs(runs: Iterable[Run], source: Path) -> Run:
    chosen = [run for run in runs if run.family == FAMILY]
    if not chosen:
        raise MpilensError(f'no monitor results in "{source}"')
    if len(chosen) > 1:
        names = ", ".join(run.path.name for run in chosen)
        raise MpilensError(f'several monitor results files in "{source}" ({names}): give one')
    return chosen[0]


def _flushed_run(traffic: Traffic, path: Path, files: Sequence[Path], call: str) -> Run:
    """A run holding matrices read from flush files, so that they are reported like a monitor
    run's; its meta says only what the files tell (ranks), and a note says where they come
    from."""
    meta = {"type": "meta", "schema": results.SUPPORTED_SCHEMA, "family": FAMILY,
            "program": call, "ranks": traffic.ranks, "points_total": 1}
    point = {"type": "point", "family": FAMILY, "bench": BENCH, "key": f"{BENCH}/kind={FLUSHED}",
             "params": {"kind": FLUSHED},
             "stats": {"ranks": traffic.ranks, "counts": to_coo(traffic.counts),
                       "bytes": to_coo(traffic.bytes), "total_messages": traffic.counts.total,
                       "total_bytes": traffic.bytes.total}}
    named = ", ".join(file.name for file in files)
    note = {"type": "note", "level": "info",
            "text": f"read from {named} ({call}): the sum of the kinds of communication the "
                    "program's flags selected, which the files do not record, nor the run's "
                    "context"}
    return Run(path=path, meta=meta, points=[point], notes=[note])


def _rootflush_run(name: Path, rank: int) -> Run:
    counts = Path(f"{name}_counts.{rank}.prof")
    sizes = Path(f"{name}_sizes.{rank}.prof")
    return _flushed_run(read_rootflush(counts, sizes), name, [counts, sizes], "MPI_M_rootflush")


def _rootflush_ranks(name: Path) -> List[int]:
    """The root ranks of the rootflush files NAME_counts.<rank>.prof."""
    prefix = f"{name.name}_counts."
    found = [path.name[len(prefix):-len(".prof")]
             for path in name.parent.glob(glob.escape(prefix) + "*.prof")]
    return sorted(int(rank) for rank in found if rank.isascii() and rank.isdigit())


def _flush_run(prefix: Path) -> Run:
    files = [file for _, file in sorted(_flush_files(prefix).items())]
    return _flushed_run(read_flush(prefix), prefix, files, "MPI_M_flush")


def load(path: PathLike) -> Run:
    """The monitor run in PATH: a results file or directory; PREFIX for PREFIX.jsonl, for the
    rootflush files PREFIX_counts.<rank>.prof and PREFIX_sizes.<rank>.prof, or for the flush
    set PREFIX.<rank>.prof (in that order); or one file of a rootflush or of a flush set."""
    path = Path(path)
    if path.is_dir():
        return _monitor_runs(results.load_dir(path), path)
    rootflush, flush = _ROOTFLUSH_FILE.fullmatch(path.name), _FLUSH_FILE.fullmatch(path.name)
    if path.is_file() and rootflush:
        return _rootflush_run(path.parent / rootflush["name"], int(rootflush["rank"]))
    if path.is_file() and flush:
        return _flush_run(path.parent / flush["name"])
    if path.is_file():
        return _monitor_runs([results.load(path)], path)
    if Path(f"{path}.jsonl").is_file():
        return _monitor_runs([results.load(f"{path}.jsonl")], path)
    roots = _rootflush_ranks(path)
    if len(roots) > 1:
        raise MpilensError(f'several rootflush files "{path}_counts.<rank>.prof" (ranks '
                           f"{', '.join(map(str, roots))}): give one of them")
    if roots:
        return _rootflush_run(path, roots[0])
    if _flush_files(path):
        return _flush_run(path)
    raise MpilensError(f'cannot tell what "{path}" is: expected a monitor results file or '
                       "directory, or a PREFIX of PREFIX.jsonl, of rootflush files "
                       "PREFIX_counts.<rank>.prof and PREFIX_sizes.<rank>.prof, or of flush files "
                       "PREFIX.<rank>.prof")


def only_kind(run: Run, kind: str) -> Run:
    """The run with the matrices of one kind only ("all": as it is); its meta counts the points
    kept, so that the selection does not read as an interrupted run."""
    if kind == "all":
        return run
    points = [point for point in run.points_of(BENCH) if point["params"].get("kind") == kind]
    if not points:
        held = ", ".join(traffic_of(run)) or "none"
        unknown = (": flush files hold the sum of the kinds the program's flags selected, "
                   "without saying which; use --kind all" if FLUSHED in traffic_of(run) else "")
        raise MpilensError(f'"{run.path}" has no {kind} matrices (it holds: {held}){unknown}')
    return Run(path=run.path, meta={**run.meta, "points_total": len(points)}, points=points,
               notes=run.notes)


# --- exports -------------------------------------------------------------------------------------

def csv_text(traffic: Traffic) -> str:
    """sender,receiver,bytes,count for every pair that exchanged anything."""
    senders, receivers = np.nonzero(traffic.active)
    sizes = traffic.bytes.values[senders, receivers].tolist()
    counts = traffic.counts.values[senders, receivers].tolist()
    rows = [f"{s},{r},{b},{c}" for s, r, b, c in zip(senders.tolist(), receivers.tolist(),
                                                      sizes, counts)]
    return "\n".join(["sender,receiver,bytes,count", *rows]) + "\n"


def dense_text(matrix: Matrix) -> str:
    """The plain integer matrix format of read_dense."""
    return "".join(" ".join(map(str, row)) + "\n" for row in matrix.values.tolist())


def matrix_market_text(matrix: Matrix) -> str:
    """Matrix Market coordinate format, 1-based; the comment says what the matrix holds."""
    senders, receivers = np.nonzero(matrix.values)
    values = matrix.values[senders, receivers].tolist()
    entries = [f"{s + 1} {r + 1} {v}\n" for s, r, v in zip(senders.tolist(), receivers.tolist(),
                                                            values)]
    return ("%%MatrixMarket matrix coordinate integer general\n"
            f"% mpilens monitor: {matrix.kind} {matrix.what}; row = sending rank + 1, column = "
            "receiving rank + 1\n"
            f"{matrix.ranks} {matrix.ranks} {len(entries)}\n" + "".join(entries))


def export_files(traffic: Traffic, formats: Sequence[str]) -> Dict[str, str]:
    """File name → text of each export asked for: <kind>.csv, <kind>_counts.mat and
    <kind>_bytes.mat, <kind>_counts.mtx and <kind>_bytes.mtx (a Matrix Market file holds one
    matrix)."""
    files: Dict[str, str] = {}
    for form in formats:
        if form == "csv":
            files[f"{traffic.kind}.csv"] = csv_text(traffic)
        for matrix in (traffic.counts, traffic.bytes):
            if form == "mat":
                files[f"{traffic.kind}_{matrix.what}.mat"] = dense_text(matrix)
            elif form == "mtx":
                files[f"{traffic.kind}_{matrix.what}.mtx"] = matrix_market_text(matrix)
    return files


def export(traffic: Traffic, directory: PathLike, formats: Sequence[str]) -> List[Path]:
    """Write the exports of export_files into directory; returns their paths."""
    written = []
    for name, text in export_files(traffic, formats).items():
        path = Path(directory) / name
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as error:
            raise MpilensError(f'cannot write "{path}": {error.strerror or error}') from None
        written.append(path)
    return written
