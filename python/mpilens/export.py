"""`mpilens export`: the points of results files as tables, for a spreadsheet or pandas.

One table per family (families have different parameters and statistics): a row per point,
the same columns in CSV (one file per family, units in the header) and in JSON (one file per
family, with the units and every file's metadata). docs/cli.md ("mpilens export") is the
contract: the columns, their units and both layouts.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import tempfile
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, TextIO, Tuple

from . import families
from .cli_common import ensure_writable
from .errors import MpilensError
from .results import Record, Run, load_any
from .safe_names import file_name_part, printable
from .schema import SAMPLE_MEASURES, SUFFIX_UNITS
from .text import counted

FORMATS = ("csv", "json")
# Where the files go by default: this directory next to the results.
DIRECTORY = "export"
# The version of the JSON layout, its "mpilens_export" field.
LAYOUT_VERSION = 1

# The columns that say which point a row is: its file, its place among the file's points
# (0 for the first), and what the point and its file say they are.
IDENTITY = ("file", "point", "family", "program", "bench", "key")
# The run's context in every row (the JSON files hold the whole meta record besides): column ->
# path in the meta record.
CONTEXT: Dict[str, Tuple[str, ...]] = {
    "meta.date": ("date",),
    "meta.mpilens_version": ("mpilens_version",),
    "meta.mpi.library": ("mpi", "library"),
    "meta.mpi.flavour": ("mpi", "flavour"),
    "meta.ranks": ("ranks",),
    "meta.nodes": ("nodes",),
}
# Whether the point's analysis takes it as true, and if not why (the family's Family.validity).
VALIDITY = ("valid", "invalid_reason")
# Fields with a unit their name does not carry (docs/results-schema.md): pb_size is in bytes.
_NAMED_UNITS = {"pb_size": "B"}


@dataclass
class Table:
    """The rows of one family, with their columns in order and the unit of each that has one."""

    family: str
    runs: List[Run]
    rows: List[Dict[str, Any]] = field(default_factory=list)
    columns: List[str] = field(default_factory=list)
    units: Dict[str, str] = field(default_factory=dict)


def unit_of(name: str, sample_unit: Optional[str] = None) -> Optional[str]:
    """The unit of a field named `name`: by its suffix (_ns, _bytes, ...), by name (pb_size),
    or, for the measures of a sample summary (median, ci_lo, values, ...), its own unit; None
    for a field without a unit (a count, a ratio, a text)."""
    for suffix, unit in SUFFIX_UNITS.items():
        if name.endswith(suffix):
            return unit
    if name in _NAMED_UNITS:
        return _NAMED_UNITS[name]
    return sample_unit if name in SAMPLE_MEASURES else None


def header(column: str, unit: Optional[str]) -> str:
    """A CSV header cell: the column, then its unit in brackets when it has one."""
    return f"{column} [{unit}]" if unit else column


def _clean(value: Any) -> Any:
    """A value of a results file as valid Unicode throughout (a JSON string may hold a lone
    surrogate, which no UTF-8 file can)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, dict):
        return {printable(name): _clean(item) for name, item in value.items()}
    return value


def _flatten(
    prefix: str, mapping: Record, into: Dict[str, Any], units: Dict[str, Set[str]]
) -> None:
    """The fields of mapping as columns prefix.name, an object's own fields as prefix.name.inner
    (a non-empty object is never a value); the unit of each column in units."""
    own = mapping.get("unit")
    sample_unit = printable(own) if isinstance(own, str) and own else None
    for name, value in mapping.items():
        column = f"{prefix}.{printable(name)}"
        if isinstance(value, dict) and value:
            _flatten(column, value, into, units)
            continue
        into[column] = _clean(value)
        unit = unit_of(name, sample_unit)
        if unit is not None:
            units.setdefault(column, set()).add(unit)


def _context(meta: Record) -> Dict[str, Any]:
    found: Dict[str, Any] = {}
    for column, path in CONTEXT.items():
        value: Any = meta
        for name in path:
            value = value.get(name) if isinstance(value, dict) else None
        found[column] = _clean(value)
    return found


def judged_points(
    family_name: str, runs: Sequence[Run]
) -> Tuple[Dict[int, Optional[str]], List[str]]:
    """id(point) -> why it cannot be true (None when it can), for every point the family's
    analysis judges, of the runs read as the report reads them (the family's combiner); and the
    notes to print. Files the combiner refuses (two holding the same measurement) are judged one
    by one."""
    family = families.FAMILIES.get(family_name)
    if family is None or family.validity is None:
        return {}, []
    groups, notes = list(runs), []
    if family.combiner is not None:
        try:
            groups = [family.combiner(runs)]
        except MpilensError as error:
            notes.append(
                f"mpilens: note: the {printable(family_name)} files are not one study, so their "
                f"points were judged file by file: {error}"
            )
    judged: Dict[int, Optional[str]] = {}
    for run in groups:
        for point, reason in family.validity(run):
            judged[id(point)] = reason
    return judged, notes


def table(family_name: str, runs: Sequence[Run]) -> Tuple[Table, List[str]]:
    """The table of one family's runs, and the notes to print."""
    judged, notes = judged_points(family_name, runs)
    found = Table(family_name, list(runs))
    params_columns: Dict[str, None] = {}
    stats_columns: Dict[str, None] = {}
    units: Dict[str, Set[str]] = {}
    for run in runs:
        context = _context(run.meta)
        for index, point in enumerate(run.points):
            params: Dict[str, Any] = {}
            stats: Dict[str, Any] = {}
            _flatten("params", point["params"], params, units)
            _flatten("stats", point["stats"], stats, units)
            params_columns.update(dict.fromkeys(params))
            stats_columns.update(dict.fromkeys(stats))
            judged_here = id(point) in judged
            reason = judged.get(id(point))
            found.rows.append(
                {
                    "file": printable(run.path.name),
                    "point": index,
                    "family": printable(run.family),
                    "program": _clean(run.meta.get("program")),
                    "bench": printable(point["bench"]),
                    "key": printable(point["key"]),
                    **context,
                    **params,
                    **stats,
                    "valid": (reason is None) if judged_here else None,
                    "invalid_reason": reason,
                }
            )
    found.columns = [*IDENTITY, *CONTEXT, *params_columns, *stats_columns, *VALIDITY]
    # A column whose rows give two units (samples in different units) is shown without one.
    found.units = {
        column: next(iter(units[column]))
        for column in found.columns
        if len(units.get(column, ())) == 1
    }
    return found, notes


def _csv_cell(value: Any) -> str:
    """A value as CSV text: empty for none, true/false, numbers as Python writes them (exactly,
    round trip), lists and objects as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def write_csv(found: Table, out: TextIO) -> None:
    writer = csv.writer(out)
    writer.writerow([header(column, found.units.get(column)) for column in found.columns])
    for row in found.rows:
        writer.writerow([_csv_cell(row.get(column)) for column in found.columns])


def json_document(found: Table) -> Record:
    """The JSON layout: the family, its columns and their units, each file's meta record and
    notes once, then the rows, each with every column (null where the point has no value)."""
    return {
        "mpilens_export": LAYOUT_VERSION,
        "family": printable(found.family),
        "columns": found.columns,
        "units": found.units,
        "files": [
            {"file": printable(run.path.name), "meta": _clean(run.meta), "notes": _clean(run.notes)}
            for run in found.runs
        ],
        "rows": [{column: row.get(column) for column in found.columns} for row in found.rows],
    }


def write_json(found: Table, out: TextIO) -> None:
    json.dump(json_document(found), out, ensure_ascii=False, indent=1)
    out.write("\n")


WRITERS: Dict[str, Callable[[Table, TextIO], None]] = {"csv": write_csv, "json": write_json}


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_file(path: Path, write: Callable[[TextIO], None]) -> None:
    """Write path whole or not at all: into a temporary file beside it, then renamed over it (a
    link in its place is replaced, never followed)."""
    try:
        descriptor, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise MpilensError(f'cannot write "{path}": {error.strerror or error}') from None
    done = False
    try:
        with open(descriptor, "w", encoding="utf-8", newline="") as out:
            write(out)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
        done = True
    except OSError as error:
        raise MpilensError(f'cannot write "{path}": {error.strerror or error}') from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _home(source: Path) -> Path:
    """The directory a results argument stands for: itself, or the directory of a file."""
    return source if source.is_dir() else source.parent


def destinations(
    source: Path, output: Optional[str], form: str, names: Sequence[str]
) -> Dict[str, Path]:
    """family -> the file to write: DIRECTORY/<family>.<form>, DIRECTORY being --output or
    PATH's directory/export; or --output itself when it names a file (a name ending in .csv or
    .json that is not a directory), which holds one family only. Every directory is created and
    checked to be writable."""
    chosen = Path(output) if output is not None else _home(source) / DIRECTORY
    suffix = chosen.suffix.lower()
    if output is not None and suffix in (".csv", ".json") and not chosen.is_dir():
        if suffix != f".{form}":
            raise MpilensError(
                f'--output "{printable(output)}" names a {suffix[1:]} file, but the format is '
                f"{form}: name a .{form} file, or a directory"
            )
        if len(names) != 1:
            raise MpilensError(
                f'--output "{printable(output)}" names one file, but {len(names)} families are '
                f"exported ({', '.join(printable(name) for name in names)}): name a directory, "
                "or choose one family with --family"
            )
        ensure_writable(chosen.parent)
        return {names[0]: chosen}
    ensure_writable(chosen)
    return {name: chosen / f"{file_name_part(name)}.{form}" for name in names}


def _by_family(runs: Sequence[Run], source: Path, only: Optional[str]) -> Dict[str, List[Run]]:
    found: Dict[str, List[Run]] = {}
    for run in runs:
        found.setdefault(run.family, []).append(run)
    if only is None:
        return found
    if only not in found:
        raise MpilensError(
            f'no results of family "{printable(only)}" in "{source}"; it holds: '
            + ", ".join(printable(name) for name in found)
        )
    return {only: found[only]}


def export(
    source: Path, form: str, output: Optional[str] = None, only: Optional[str] = None
) -> Tuple[List[str], List[str]]:
    """Export the results at source (a directory of *.jsonl files or one file, read and checked
    as `mpilens report` reads them): (a line per file written, naming its rows; notes)."""
    runs = load_any(source)
    by_family = _by_family(runs, source, only)
    paths = destinations(source, output, form, list(by_family))
    read = {run.path.resolve() for run in runs}
    for path in paths.values():
        if path.resolve() in read:
            raise MpilensError(
                f'"{path}" is a results file being exported; choose another --output'
            )
    lines: List[str] = []
    notes: List[str] = []
    for name, members in by_family.items():
        path = paths[name]
        found, found_notes = table(name, members)
        notes += found_notes
        replaced = path.exists()
        write_file(path, partial(WRITERS[form], found))
        rows = counted(len(found.rows), "row")
        lines.append(f"exported: {printable(str(path))} ({rows}{', replaced' if replaced else ''})")
    return lines, notes
