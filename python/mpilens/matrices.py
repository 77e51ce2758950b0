"""Communication matrices of the monitor family (docs/monitor.md): read them from a results file or
from the files MPI_M_flush and MPI_M_rootflush write, and export them.

Every matrix is what each rank sent to each rank: row = sending rank, column = receiving rank.
Matrices stay sparse from the file to the exports, the findings and the plots: a matrix holds its
nonzero entries only, never P × P values (at 65536 ranks, 32 GiB of 64-bit integers). They are
numpy arrays in row-major order (a small COO, not scipy.sparse: the analyses need sums, sorts and
look-ups of cells, which numpy does exactly in 64-bit integers, without another dependency).
"""

from __future__ import annotations

import glob
import re
import shutil
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import (
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    TextIO,
    Tuple,
    Union,
)

from . import results
from .errors import MpilensError
from .lazy_numpy import np
from .results import Record, Run
from .safe_names import file_name_part
from .units import format_size

PathLike = Union[str, Path]

FAMILY = "monitor"
BENCH = "matrix"
KINDS = ("p2p", "coll", "osc")
# What a --kind option offers: one kind, or all of them.
KIND_CHOICES = (*KINDS, "all")
# The kind of matrices read from flush files: the sum of whichever kinds the program's flags
# selected, which the files do not record.
FLUSHED = "flushed"
FORMATS = ("csv", "mat", "mtx")
# The formats whose size grows with the entries, not with P × P.
SPARSE_FORMATS = ("csv", "mtx")
# Up to this many ranks, the exports include the dense format unless told otherwise: a dense file
# then takes 128 MiB at most (2 bytes a value at least).
DENSE_DEFAULT_RANKS = 8192

INT64_MAX = 2**63 - 1
_ROOTFLUSH_FILE = re.compile(r"(?P<name>.+)_(?:counts|sizes)\.(?P<rank>\d+)\.prof")
_FLUSH_FILE = re.compile(r"(?P<name>.+)\.\d+\.prof")
# Lines of non-negative integers below 10^18 separated by spaces or tabs, which numpy reads at
# once; anything else is read word by word, to name the word at fault.
_PLAIN_ROW = re.compile(r"[ \t]*[0-9]{1,18}(?:[ \t]+[0-9]{1,18})*[ \t]*\n?")
_PLAIN_FLUSH = re.compile(r"(?:[ \t]*[0-9]{1,18}[ \t]+[0-9]{1,18}[ \t]+[0-9]{1,18}[ \t]*\n)+")
# Entries formatted at a time by the exports, which write their files piece by piece.
CHUNK = 1 << 16


@dataclass(frozen=True, eq=False)
class Matrix:
    """A ranks × ranks matrix of integers: what ("counts": messages, or "bytes") each rank sent to
    each rank, for one kind of communication. It holds its nonzero entries in row-major order."""

    kind: str
    what: str
    ranks: int
    senders: np.ndarray  # int64
    receivers: np.ndarray  # int64
    values: np.ndarray  # int64, none of them 0

    @property
    def total(self) -> int:
        return int(self.values.sum())

    @cached_property
    def cells(self) -> np.ndarray:
        """Each entry's row-major position, sender × ranks + receiver, ascending."""
        return self.senders * self.ranks + self.receivers

    def at(self, cells: np.ndarray) -> np.ndarray:
        """The values at row-major positions, 0 where the matrix has no entry."""
        if not len(self.cells):
            return np.zeros(len(cells), dtype=np.int64)
        where = np.minimum(np.searchsorted(self.cells, cells), len(self.cells) - 1)
        return np.where(self.cells[where] == cells, self.values[where], 0)

    def sent(self) -> np.ndarray:
        """What each rank sent, in all."""
        return _per_rank(self.senders, self.values, self.ranks)

    def received(self) -> np.ndarray:
        return _per_rank(self.receivers, self.values, self.ranks)


def _per_rank(ranks: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    # np.add.at rather than np.bincount, whose weights are floats: sums stay exact.
    sums = np.zeros(size, dtype=np.int64)
    np.add.at(sums, ranks, values)
    return sums


def sparse(kind: str, what: str, ranks: int, cells: np.ndarray, values: np.ndarray) -> Matrix:
    """The matrix with values at distinct row-major positions, given in any order; zeros are left
    out."""
    cells, values = np.asarray(cells, dtype=np.int64), np.asarray(values, dtype=np.int64)
    kept = values != 0
    order = np.argsort(cells[kept], kind="stable")
    cells, values = cells[kept][order], values[kept][order]
    return Matrix(kind, what, ranks, cells // ranks, cells % ranks, values)


def summed(kind: str, what: str, parts: Sequence[Matrix]) -> Matrix:
    """The sum of matrices of one size."""
    cells, where = np.unique(np.concatenate([part.cells for part in parts]), return_inverse=True)
    values = np.zeros(len(cells), dtype=np.int64)
    np.add.at(values, where, np.concatenate([part.values for part in parts]))
    return sparse(kind, what, parts[0].ranks, cells, values)


@dataclass(frozen=True, eq=False)
class Pairs:
    """The cells that saw any message (a message may carry 0 bytes), row-major, with the messages
    and bytes of each."""

    senders: np.ndarray
    receivers: np.ndarray
    messages: np.ndarray
    bytes: np.ndarray

    def __len__(self) -> int:
        return len(self.senders)


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

    @cached_property
    def pairs(self) -> Pairs:
        cells = np.union1d(self.counts.cells, self.bytes.cells)
        return Pairs(
            cells // self.ranks, cells % self.ranks, self.counts.at(cells), self.bytes.at(cells)
        )


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
    if any(
        _is_int(value) and value > INT64_MAX
        for entry in entries
        if isinstance(entry, list)
        for value in entry
    ):
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
    if not (
        isinstance(shape, list)
        and len(shape) == 2
        and all(map(_is_int, shape))
        and shape[0] == shape[1]
        and shape[0] >= 1
    ):
        raise problem(f"has shape {shape}: expected [P, P] with P at least 1")
    entries = value.get("entries")
    if not isinstance(entries, list):
        raise problem('has no list "entries"')
    table = _entry_table(entries, problem)
    size = shape[0]
    outside = (table[:, :2] < 0).any(axis=1) | (table[:, :2] >= size).any(axis=1)
    for mask, text in (
        (outside, f"lies outside the {size}×{size} matrix"),
        (table[:, 2] < 0, "has a negative value"),
    ):
        if mask.any():
            raise problem(f"entry {table[np.argmax(mask)].tolist()} {text}")
    cells, first = np.unique(table[:, 0] * size + table[:, 1], return_index=True)
    if len(cells) < len(table):
        repeated = np.setdiff1d(np.arange(len(table)), first)[0]
        raise problem(
            f"has two entries for sender {table[repeated, 0]} and receiver {table[repeated, 1]}"
        )
    return sparse(kind, what, size, cells, table[first, 2])


def to_coo(matrix: Matrix) -> Record:
    """The sparse form a results point holds (the inverse of from_coo)."""
    entries = np.stack([matrix.senders, matrix.receivers, matrix.values], axis=1)
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
        raise MpilensError(
            f"{where}: its counts are {counts.ranks}×{counts.ranks} but its bytes "
            f"{sizes.ranks}×{sizes.ranks}"
        )
    return Traffic(
        kind,
        counts,
        sizes,
        _optional_text(stats.get("backend")),
        _optional_text(stats.get("backend_reason")),
    )


def traffic_of(run: Run) -> Dict[str, Traffic]:
    """Each kind's matrices in a monitor run, by kind, in file order (p2p, coll, osc)."""
    found = (_point_traffic(run, point) for point in run.points_of(BENCH))
    return {traffic.kind: traffic for traffic in found}


# --- plain matrix files --------------------------------------------------------------------------


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Reading a text file: its failures as one-line errors."""
    try:
        yield
    except FileNotFoundError:
        raise MpilensError(f'file "{path}" does not exist') from None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise MpilensError(f'cannot read "{path}": {reason}') from None


def _lines(path: Path) -> Iterator[Tuple[int, str]]:
    """(line number, line) of every line of a text file that is not blank, read as it goes: a
    dense file holds P × P values."""
    found = False
    with _reading(path), open(path, encoding="utf-8") as text:
        for number, line in enumerate(text, start=1):
            if line and not line.isspace():
                found = True
                yield number, line
    if not found:
        raise MpilensError(f'"{path}" is empty')


def _integers(line: str, path: Path, number: int) -> np.ndarray:
    """The values of a line of non-negative integers."""
    if _PLAIN_ROW.fullmatch(line):
        return np.fromstring(line, dtype=np.int64, sep=" ")
    words = line.split()
    # isascii: str.isdigit also accepts digits of other scripts, which int() then refuses.
    for word in words:
        if not (word.isascii() and word.isdigit()):
            raise MpilensError(f'"{path}" line {number}: "{word}" is not a non-negative integer')
    values = [int(word) for word in words]
    if max(values) > INT64_MAX:
        raise MpilensError(f'"{path}" line {number}: a value is above 2^63-1')
    return np.array(values, dtype=np.int64)


def read_dense(path: PathLike, kind: str, what: str) -> Matrix:
    """A plain integer matrix: one line per sending rank, values separated by spaces; the format
    MPI_M_rootflush writes and TreeMatch reads. Read line by line, keeping the nonzero values."""
    path = Path(path)
    cells: List[np.ndarray] = []
    values: List[np.ndarray] = []
    width = rows = 0
    for number, line in _lines(path):
        row = _integers(line, path, number)
        if rows and len(row) != width:
            raise MpilensError(
                f'"{path}" line {number}: {len(row)} values, where the first line has {width}'
            )
        width = len(row)
        nonzero = np.flatnonzero(row)
        cells.append(rows * width + nonzero)
        values.append(row[nonzero])
        rows += 1
    if rows != width:
        raise MpilensError(
            f'"{path}": {rows} lines of {width} values; expected a square matrix, one line per rank'
        )
    return sparse(kind, what, rows, np.concatenate(cells), np.concatenate(values))


def read_rootflush(counts_path: PathLike, sizes_path: PathLike) -> Traffic:
    """The two matrices MPI_M_rootflush writes: NAME_counts.<rank>.prof, NAME_sizes.<rank>.prof."""
    counts = read_dense(counts_path, FLUSHED, "counts")
    sizes = read_dense(sizes_path, FLUSHED, "bytes")
    if counts.ranks != sizes.ranks:
        raise MpilensError(
            f'"{counts_path}" has {counts.ranks} ranks but "{sizes_path}" has '
            f"{sizes.ranks}: they are not from the same call"
        )
    return Traffic(FLUSHED, counts, sizes)


def _flush_files(prefix: Path) -> Dict[int, Path]:
    """rank → file of a flush set, NAME.<rank>.prof."""
    pattern = glob.escape(prefix.name) + ".*.prof"
    found = {}
    for path in prefix.parent.glob(pattern):
        middle = path.name[len(prefix.name) + 1 : -len(".prof")]
        if middle.isascii() and middle.isdigit():
            found[int(middle)] = path
    return found


def _checked_flush_table(path: Path) -> np.ndarray:
    """One rank's flush file read line by line, naming the line at fault."""
    lines = list(_lines(path))
    rows: Dict[int, np.ndarray] = {}
    for number, line in lines:
        words = line.split()
        if len(words) != 3:
            raise MpilensError(
                f'"{path}" line {number}: {len(words)} values; expected '
                '"<destination> <messages> <bytes>"'
            )
        row = _integers(line, path, number)
        destination = int(row[0])
        if destination >= len(lines):
            raise MpilensError(
                f'"{path}" line {number}: destination {destination} is not one '
                f"of the {len(lines)} ranks the file lists"
            )
        if destination in rows:
            raise MpilensError(f'"{path}" line {number}: destination {destination} appears twice')
        rows[destination] = row
    return np.array(list(rows.values()), dtype=np.int64)


def _flush_table(path: Path) -> np.ndarray:
    """One rank's flush file as a table of lines × (destination, messages, bytes). The file has
    one line per rank: a flush set is P × P lines, which numpy reads a file at once."""
    with _reading(path), open(path, encoding="utf-8") as text:
        content = text.read()
    if _PLAIN_FLUSH.fullmatch(content):
        table = np.fromstring(content, dtype=np.int64, sep=" ").reshape(-1, 3)
        destinations = table[:, 0]
        if (destinations < len(table)).all() and np.bincount(
            destinations, minlength=len(table)
        ).max() == 1:
            return table
    return _checked_flush_table(path)


def read_flush(prefix: PathLike) -> Traffic:
    """The matrices of a flush set: each rank's NAME.<rank>.prof, one line per rank of the
    communicator, "<destination> <messages> <bytes>"."""
    prefix = Path(prefix)
    files = _flush_files(prefix)
    if not files:
        raise MpilensError(f'no flush files "{prefix}.<rank>.prof"')
    lines: Dict[int, int] = {}
    rows: List[Tuple[int, np.ndarray]] = []
    for rank, path in sorted(files.items()):
        table = _flush_table(path)
        lines[rank] = len(table)
        rows.append((rank, table[(table[:, 1] != 0) | (table[:, 2] != 0)]))
    first = min(lines)
    size = lines[first]
    for rank, count in lines.items():
        if count != size:
            raise MpilensError(
                f'"{files[rank]}" lists {count} ranks but "{files[first]}" '
                f"lists {size}: they are not from the same call"
            )
    missing = [rank for rank in range(size) if rank not in lines]
    if missing:
        raise MpilensError(
            f'the flush set "{prefix}" is incomplete: its files list {size} '
            f'ranks, but "{prefix}.{missing[0]}.prof" does not exist'
        )
    if max(lines) >= size:
        raise MpilensError(
            f'"{files[max(lines)]}" is beyond the {size} ranks the other files '
            "list: they are not from the same call"
        )
    cells = np.concatenate([rank * size + table[:, 0] for rank, table in rows])
    counts, sizes = (np.concatenate([table[:, column] for _, table in rows]) for column in (1, 2))
    return Traffic(
        FLUSHED,
        sparse(FLUSHED, "counts", size, cells, counts),
        sparse(FLUSHED, "bytes", size, cells, sizes),
    )


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
    meta = {
        "type": "meta",
        "schema": results.SUPPORTED_SCHEMA,
        "family": FAMILY,
        "program": call,
        "ranks": traffic.ranks,
        "points_total": 1,
    }
    point = {
        "type": "point",
        "family": FAMILY,
        "bench": BENCH,
        "key": f"{BENCH}/kind={FLUSHED}",
        "params": {"kind": FLUSHED},
        "stats": {
            "ranks": traffic.ranks,
            "counts": to_coo(traffic.counts),
            "bytes": to_coo(traffic.bytes),
            "total_messages": traffic.counts.total,
            "total_bytes": traffic.bytes.total,
        },
    }
    named = ", ".join(file.name for file in files)
    note = {
        "type": "note",
        "level": "info",
        "text": f"read from {named} ({call}): the sum of the kinds of communication the "
        "program's flags selected, which the files do not record, nor the run's "
        "context",
    }
    return Run(path=path, meta=meta, points=[point], notes=[note])


def _rootflush_run(name: Path, rank: int) -> Run:
    counts = Path(f"{name}_counts.{rank}.prof")
    sizes = Path(f"{name}_sizes.{rank}.prof")
    return _flushed_run(read_rootflush(counts, sizes), name, [counts, sizes], "MPI_M_rootflush")


def _rootflush_ranks(name: Path) -> List[int]:
    """The root ranks of the rootflush files NAME_counts.<rank>.prof."""
    prefix = f"{name.name}_counts."
    found = [
        path.name[len(prefix) : -len(".prof")]
        for path in name.parent.glob(glob.escape(prefix) + "*.prof")
    ]
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
        raise MpilensError(
            f'several rootflush files "{path}_counts.<rank>.prof" (ranks '
            f"{', '.join(map(str, roots))}): give one of them"
        )
    if roots:
        return _rootflush_run(path, roots[0])
    if _flush_files(path):
        return _flush_run(path)
    raise MpilensError(
        f'cannot tell what "{path}" is: expected a monitor results file or '
        "directory, or a PREFIX of PREFIX.jsonl, of rootflush files "
        "PREFIX_counts.<rank>.prof and PREFIX_sizes.<rank>.prof, or of flush files "
        "PREFIX.<rank>.prof"
    )


def only_kind(run: Run, kind: str) -> Run:
    """The run with the matrices of one kind only ("all": as it is); its meta counts the points
    kept, so that the selection does not read as an interrupted run."""
    if kind == "all":
        return run
    points = [point for point in run.points_of(BENCH) if point["params"].get("kind") == kind]
    if not points:
        held = ", ".join(traffic_of(run)) or "none"
        unknown = (
            ": flush files hold the sum of the kinds the program's flags selected, "
            "without saying which; use --kind all"
            if FLUSHED in traffic_of(run)
            else ""
        )
        raise MpilensError(f'"{run.path}" has no {kind} matrices (it holds: {held}){unknown}')
    return Run(
        path=run.path,
        meta={**run.meta, "points_total": len(points)},
        points=points,
        notes=run.notes,
    )


# --- exports -------------------------------------------------------------------------------------


def _write_rows(out: TextIO, columns: Sequence[np.ndarray], line: str) -> None:
    """One line per entry, `line` formatted with the entry's value in each column, a piece of
    CHUNK entries at a time."""
    for start in range(0, len(columns[0]), CHUNK):
        piece = [column[start : start + CHUNK].tolist() for column in columns]
        out.write("".join(line.format(*entry) for entry in zip(*piece)))


def write_csv(traffic: Traffic, out: TextIO) -> None:
    """sender,receiver,bytes,count for every pair that exchanged anything."""
    pairs = traffic.pairs
    out.write("sender,receiver,bytes,count\n")
    _write_rows(out, (pairs.senders, pairs.receivers, pairs.bytes, pairs.messages), "{},{},{},{}\n")


def _dense_row(columns: Sequence[int], values: Sequence[int], ranks: int) -> str:
    """One line of the dense format: the values at their columns, 0 elsewhere (runs of zeros
    made at once, a sparse row costs its entries, not its length, in Python)."""
    pieces, at = [], 0
    for column, value in zip(columns, values):
        pieces += ["0 " * (column - at), f"{value} "]
        at = column + 1
    pieces.append("0 " * (ranks - at))
    return "".join(pieces)[:-1] + "\n"


def write_dense(matrix: Matrix, out: TextIO) -> None:
    """The plain integer matrix format of read_dense, a row at a time."""
    starts = np.searchsorted(matrix.senders, np.arange(matrix.ranks + 1)).tolist()
    for rank in range(matrix.ranks):
        row = slice(starts[rank], starts[rank + 1])
        out.write(
            _dense_row(matrix.receivers[row].tolist(), matrix.values[row].tolist(), matrix.ranks)
        )


def write_matrix_market(matrix: Matrix, out: TextIO) -> None:
    """Matrix Market coordinate format, 1-based; the comment says what the matrix holds."""
    out.write(
        "%%MatrixMarket matrix coordinate integer general\n"
        f"% mpilens monitor: {matrix.kind} {matrix.what}; row = sending rank + 1, column = "
        "receiving rank + 1\n"
        f"{matrix.ranks} {matrix.ranks} {len(matrix.values)}\n"
    )
    _write_rows(out, (matrix.senders + 1, matrix.receivers + 1, matrix.values), "{} {} {}\n")


Writer = Callable[[TextIO], None]


def exports(traffic: Traffic, formats: Sequence[str]) -> Dict[str, Writer]:
    """File name → what writes it, for each export asked for: <kind>.csv, <kind>_counts.mat and
    <kind>_bytes.mat, <kind>_counts.mtx and <kind>_bytes.mtx (a Matrix Market file holds one
    matrix)."""
    files: Dict[str, Writer] = {}
    for form in formats:
        if form == "csv":
            files[f"{file_name_part(traffic.kind)}.csv"] = partial(write_csv, traffic)
        for matrix in (traffic.counts, traffic.bytes):
            if form == "mat":
                files[f"{file_name_part(traffic.kind)}_{matrix.what}.mat"] = partial(
                    write_dense, matrix
                )
            elif form == "mtx":
                files[f"{file_name_part(traffic.kind)}_{matrix.what}.mtx"] = partial(
                    write_matrix_market, matrix
                )
    return files


def default_formats(ranks: int) -> Tuple[str, ...]:
    """The exports written when none are named: every format, but the dense one only up to
    DENSE_DEFAULT_RANKS."""
    return FORMATS if ranks <= DENSE_DEFAULT_RANKS else SPARSE_FORMATS


def _check_room(traffic: Traffic, directory: Path) -> None:
    """The dense exports grow with P × P: refuse them, in one line, where they would fill the
    disk."""
    # Two files, each of P × P values of a digit and a separator at least.
    needed = 2 * 2 * traffic.ranks * traffic.ranks
    free = shutil.disk_usage(directory).free
    if needed > free:
        raise MpilensError(
            f"cannot write the dense {traffic.kind} matrices ({traffic.ranks}×{traffic.ranks}): "
            f'they take at least {format_size(needed)} and "{directory}" has '
            f"{format_size(free)} free; Matrix Market (--format mtx) holds their nonzero entries "
            "only"
        )


def export(traffic: Traffic, directory: PathLike, formats: Sequence[str]) -> List[Path]:
    """Write the exports of `exports` into directory; returns their paths."""
    directory = Path(directory)
    if "mat" in formats:
        _check_room(traffic, directory)
    written = []
    for name, write in exports(traffic, formats).items():
        path = directory / name
        try:
            with open(path, "w", encoding="utf-8") as out:
                write(out)
        except OSError as error:
            raise MpilensError(f'cannot write "{path}": {error.strerror or error}') from None
        written.append(path)
    return written
