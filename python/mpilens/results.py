"""Read and validate mpilens results files (JSON Lines, docs/results-schema.md)."""

from __future__ import annotations

import json
import math
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Hashable, List, Optional, Sequence, Union

from .errors import MpilensError
from .safe_names import file_name_part
from .schema import FieldError, check_meta, check_note, check_point
from .units import parse_size

SUPPORTED_SCHEMA = 1
# The largest results file read, against a file that is not one (a huge log named *.jsonl).
MAX_RESULTS_BYTES = 8 << 30
MAX_BYTES_VARIABLE = "MPILENS_MAX_RESULTS_BYTES"

PathLike = Union[str, Path]
Record = Dict[str, Any]

# How a meta record starts, to tell an interrupted first line from a file of another kind.
_META_START = re.compile(rb'\s*\{\s*"type"\s*:\s*"meta"')
_POINT_FIELDS = {"key": str, "bench": str, "params": dict, "stats": dict}


@dataclass
class Run:
    """One results file: its meta record, its points and its notes, in file order; or several
    files of one family read as one run (see merge), which are then its members."""

    path: Path
    meta: Record
    points: List[Record] = field(default_factory=list)
    notes: List[Record] = field(default_factory=list)
    members: List[Run] = field(default_factory=list)
    # What analyses derived from the records, by a key of their own (e.g. overlap's grids, which
    # a report asks for some 200 times): the records are not changed once loaded.
    derived: Dict[Hashable, Any] = field(default_factory=dict, compare=False, repr=False)

    def memo(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """compute()'s value, computed once per run and key."""
        if key not in self.derived:
            self.derived[key] = compute()
        return self.derived[key]

    @property
    def family(self) -> str:
        return self.meta["family"]

    @property
    def points_total(self) -> int:
        return self.meta["points_total"]

    @property
    def complete(self) -> bool:
        return len(self.points) == self.points_total

    def points_of(self, bench: str) -> List[Record]:
        return [point for point in self.points if point["bench"] == bench]

    def note_texts(self, level: str) -> List[str]:
        """The texts of the notes at `level`, each once, in file order (a merged run's members
        may each have written the same one)."""
        texts = [str(note.get("text", "")) for note in self.notes if note.get("level") == level]
        return list(dict.fromkeys(texts))

    def file_warnings(self, named: Optional[Callable[[Run], str]] = None) -> List[str]:
        """The warning notes of each file the run was read from (its members, or itself), as
        findings: "warning: <text>", or "warning: <named(file)>: <text>"; each once."""
        texts = [
            f"warning: {named(member)}: {text}" if named else f"warning: {text}"
            for member in (self.members or [self])
            for text in member.note_texts("warning")
        ]
        return list(dict.fromkeys(texts))

    @property
    def progress_label(self) -> Optional[str]:
        """The progress setting the run was measured under ("none", "thread:poll,cpu=1", ...),
        for the programs that record one (meta progress_setting); else None."""
        setting = self.meta.get("progress_setting")
        label = setting.get("label") if isinstance(setting, dict) else None
        return label if isinstance(label, str) else None


def record_number(value: object) -> Optional[float]:
    """A finite number from a record; None for null, text, NaN or infinity."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value) if math.isfinite(value) else None
    except OverflowError:
        # An integer beyond the range of a float.
        return None


def record_object(record: Record, key: str) -> Record:
    """The object at `key` of a record; {} when it is missing or not an object."""
    value = record.get(key)
    return value if isinstance(value, dict) else {}


def record_integer(value: object) -> Optional[int]:
    """A whole number from a record; None for anything else."""
    number = record_number(value)
    return int(number) if number is not None and number == int(number) else None


def _upgrade(record: Record, schema: int) -> Record:
    """Bring a record written with an older schema to SUPPORTED_SCHEMA.

    The single place to convert old files when schema 2 arrives; schema 1 is the first, so there
    is nothing to convert yet.
    """
    return record


def _decode(line: bytes) -> Optional[Any]:
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        # RecursionError: nesting deeper than any record, which the parser cannot follow.
        return None


def max_results_bytes() -> int:
    """The largest results file read: MPILENS_MAX_RESULTS_BYTES, else MAX_RESULTS_BYTES."""
    text = os.environ.get(MAX_BYTES_VARIABLE)
    if text is None:
        return MAX_RESULTS_BYTES
    try:
        return parse_size(text)
    except MpilensError:
        raise MpilensError(
            f'invalid {MAX_BYTES_VARIABLE} "{text}": expected a size such as 8G or 500M'
        ) from None


def _read(path: Path) -> bytes:
    """The bytes of a regular file of at most max_results_bytes(): a FIFO would block the
    reader, and a device (a link to /dev/zero) never end."""
    limit = max_results_bytes()
    try:
        # Without O_NONBLOCK, opening a FIFO waits for a writer.
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
            found = os.fstat(file.fileno())
            if not stat.S_ISREG(found.st_mode):
                raise MpilensError(
                    f'"{path}" is not a regular file: mpilens reads results from regular files only'
                )
            if found.st_size > limit:
                raise MpilensError(
                    f'"{path}" holds {found.st_size} bytes, more than the limit of {limit} bytes '
                    f"({MAX_BYTES_VARIABLE}; raise it to read this file)"
                )
            return file.read()
    except FileNotFoundError:
        raise MpilensError(f'results file "{path}" does not exist') from None
    except OSError as error:
        raise MpilensError(f'cannot read results file "{path}": {error.strerror}') from None


def _truncated(path: Path, number: int) -> MpilensError:
    return MpilensError(
        f'"{path}" is truncated: line {number} is incomplete (the run was interrupted while '
        "writing); run the program again with --resume to complete it"
    )


def _check_types(
    path: Path, number: int, what: str, check: Callable[[Record], None], record: Record
) -> None:
    """Check the types of the record of line `number` (schema.py), refusing the file with the
    field, the type expected and the one found."""
    try:
        check(record)
    except FieldError as error:
        raise MpilensError(f'"{path}" is corrupt at line {number}: {what} {error}') from None


def _check_meta(path: Path, meta: Any) -> Record:
    if not isinstance(meta, dict) or meta.get("type") != "meta":
        raise MpilensError(f'"{path}" is not an mpilens results file')
    schema = meta.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise MpilensError(
            f'"{path}" is not an mpilens results file: its meta record has no integer "schema"'
        )
    if schema > SUPPORTED_SCHEMA:
        raise MpilensError(
            f'"{path}" was written with results schema {schema}; this mpilens reads schemas up '
            f"to {SUPPORTED_SCHEMA} (upgrade mpilens)"
        )
    if schema < 1:
        raise MpilensError(f'"{path}" has results schema {schema}, which never existed')
    if not isinstance(meta.get("family"), str):
        raise MpilensError(f'"{path}" is corrupt at line 1: the meta record has no "family"')
    total = meta.get("points_total")
    if not isinstance(total, int) or isinstance(total, bool):
        raise MpilensError(
            f'"{path}" is corrupt at line 1: the meta record has no integer "points_total"'
        )
    _check_types(path, 1, "meta", check_meta, meta)
    return meta


def _check_point(path: Path, number: int, point: Record, family: str, seen: Dict[str, int]) -> None:
    for name, kind in _POINT_FIELDS.items():
        if not isinstance(point.get(name), kind):
            raise MpilensError(
                f'"{path}" is corrupt at line {number}: the point has no valid "{name}"'
            )
    _check_types(path, number, "point", lambda found: check_point(found, family), point)
    key = point["key"]
    if key in seen:
        raise MpilensError(
            f'"{path}" is corrupt at line {number}: point key "{key}" already '
            f"appeared at line {seen[key]}"
        )
    seen[key] = number


def load(path: PathLike) -> Run:
    """Read one results file, refusing with a message that names the file and the problem."""
    path = Path(path)
    data = _read(path)
    if not data.strip():
        raise MpilensError(f'"{path}" is empty: the run wrote nothing')

    lines = data.split(b"\n")
    # Every record ends with "\n"; a last line without it is a record the writer did not finish.
    unfinished = not data.endswith(b"\n")
    if not unfinished:
        lines.pop()
    last = len(lines)

    first = _decode(lines[0])
    if first is None and unfinished and last == 1 and _META_START.match(lines[0]):
        raise _truncated(path, 1)
    meta = _check_meta(path, first)
    schema = meta["schema"]
    run = Run(path=path, meta=_upgrade(meta, schema))
    seen: Dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if number == last and unfinished:
            raise _truncated(path, number)
        if number == 1 or not line.strip():
            continue
        record = _decode(line)
        if not isinstance(record, dict):
            if number == last:
                raise _truncated(path, number)
            raise MpilensError(f'"{path}" is corrupt at line {number}: not a JSON object')
        record = _upgrade(record, schema)
        kind = record.get("type")
        if kind == "point":
            _check_point(path, number, record, meta["family"], seen)
            run.points.append(record)
        elif kind == "note":
            _check_types(path, number, "note", check_note, record)
            run.notes.append(record)
        # Records of other types come from newer writers of the same schema: skip them.
    return run


def _ranks(run: Run) -> int:
    ranks = run.meta.get("ranks")
    return ranks if isinstance(ranks, int) and not isinstance(ranks, bool) else 0


def join_files(
    runs: Sequence[Run],
    order: Callable[[Run], Any],
    identity: Callable[[Run, Record], Hashable],
    describe: Callable[[Any], str],
    empty: str,
    base: Callable[[List[Run]], Run] = lambda members: members[0],
) -> Run:
    """The files of one study, each measured under one configuration, read as one run.

    Its members are the files in `order`; its points and notes are theirs, and its meta is that
    of `base` (of the ordered members) with the planned points of all. Joining a joined run
    again, or a file twice, changes nothing. Two files holding the same measurement (equal
    `identity(file, point)`, named by `describe`) are refused: the report could only pick one of
    them silently. `empty`: the error when there is no file.
    """
    # A file given twice (itself and inside a joined run) is read once.
    files = {member.path: member for run in runs for member in (run.members or [run])}
    members = sorted(files.values(), key=order)
    if not members:
        raise MpilensError(empty)
    families = {member.family for member in members}
    if len(families) > 1:
        raise MpilensError(
            "cannot read files of different families as one run: " + ", ".join(sorted(families))
        )
    seen: Dict[Hashable, Path] = {}
    for member in members:
        for point in member.points:
            found = identity(member, point)
            if found in seen:
                raise MpilensError(
                    f'"{seen[found]}" and "{member.path}" both hold '
                    f"{describe(found)}; move one of them to another directory"
                )
            seen[found] = member.path
    chosen = base(members)
    meta = dict(chosen.meta, points_total=sum(member.points_total for member in members))
    return Run(
        path=chosen.path.with_name(f"{file_name_part(chosen.family)}.jsonl"),
        meta=meta,
        points=[point for member in members for point in member.points],
        notes=[note for member in members for note in member.notes],
        members=members,
    )


def merge(runs: Sequence[Run]) -> Run:
    """The files of one family measured at several rank counts (one file per count, each point
    naming its count in params.np), read as one run (join_files): by rank count, with the meta of
    the largest run; two files at the same rank count holding the same point are refused."""
    return join_files(
        runs,
        _ranks,
        lambda member, point: (_ranks(member), point["key"]),
        lambda found: f'point "{found[1]}" at {found[0]} ranks',
        "no results files to read",
        base=lambda members: members[-1],
    )


def load_dir(directory: PathLike) -> List[Run]:
    """Every *.jsonl results file of a directory, in name order."""
    directory = Path(directory)
    if not directory.is_dir():
        raise MpilensError(f'results directory "{directory}" does not exist')
    files = sorted(directory.glob("*.jsonl"))
    if not files:
        raise MpilensError(f'no results files (*.jsonl) in "{directory}"')
    return [load(file) for file in files]


def load_any(path: PathLike) -> List[Run]:
    """The runs of a results directory, or the single run of a results file."""
    path = Path(path)
    return [load(path)] if path.exists() and not path.is_dir() else load_dir(path)
