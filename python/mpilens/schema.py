"""The types of the fields of results records (docs/results-schema.md), checked as a file is read.

A field the analyses read that holds another type (a number where a list of host names belongs,
text where a time belongs) would otherwise end the report with a traceback far from its cause.
Every field is checked once, by its name, in one pass over the record: the cost grows with the
file, never with its square. Fields not named here are left as they are (newer writers may add
them); fields named here may be absent unless REQUIRED lists them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Optional, Tuple

Record = Dict[str, Any]


def _found(value: Any) -> str:
    """What a value is, in the words of the schema."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a bool"
    if isinstance(value, int):
        return "a number" if _finite(value) else "a number too large"
    if isinstance(value, float):
        return "a number" if math.isfinite(value) else f"{value}"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:
        # An integer beyond the range of a float, which every analysis would turn into one.
        return False


@dataclass(frozen=True)
class Kind:
    """A type of the schema: its name in messages, and the test of a value."""

    name: str
    test: Callable[[Any], bool]
    nullable: bool = False

    def accepts(self, value: Any) -> bool:
        return (value is None and self.nullable) or self.test(value)

    def expected(self) -> str:
        return f"{self.name} or null" if self.nullable else self.name


def _is_number(value: Any) -> bool:
    return type(value) in _NUMBER_TYPES and _finite(value)


_NUMBER_TYPES = (int, float)
_NONE = type(None)


def _list_of(*types: type) -> Callable[[Any], bool]:
    """The test of a list whose elements are of `types` (numbers finite): map() over C functions,
    since per-rank lists hold one value per rank."""
    allowed = set(types)

    def test(value: Any) -> bool:
        if not isinstance(value, list) or not set(map(type, value)) <= allowed:
            return False
        if float not in allowed and int not in allowed:
            return True
        try:
            return all(map(math.isfinite, [item for item in value if item is not None]))
        except OverflowError:
            return False

    return test


NUMBER = Kind("a number", _is_number)
NUMBER_OR_NULL = Kind("a number", _is_number, nullable=True)
STRING = Kind("a string", lambda value: isinstance(value, str))
STRING_OR_NULL = Kind("a string", STRING.test, nullable=True)
BOOL = Kind("a bool", lambda value: isinstance(value, bool))
OBJECT = Kind("an object", lambda value: isinstance(value, dict))
OBJECT_OR_NULL = Kind("an object", OBJECT.test, nullable=True)
LIST = Kind("a list", lambda value: isinstance(value, list))
STRINGS = Kind("a list of strings", _list_of(str))
NUMBERS = Kind("a list of numbers", _list_of(int, float))
NUMBERS_OR_NULLS = Kind("a list of numbers or nulls", _list_of(int, float, _NONE))
BOOLS = Kind("a list of bools", _list_of(bool))
OBJECTS = Kind("a list of objects", _list_of(dict))

Fields = Dict[str, Kind]
# Fields holding an object whose own fields are checked too: name -> (kind, its fields).
Nested = Dict[str, Fields]

SAMPLE: Fields = {
    **dict.fromkeys(
        (
            "n",
            "min",
            "max",
            "mean",
            "median",
            "q1",
            "q3",
            "d1",
            "d9",
            "ci_level",
            "ci_lo",
            "ci_hi",
            "ci_coverage",
            "precision",
        ),
        NUMBER_OR_NULL,
    ),
    "unit": STRING,
    "stop": STRING,
    "values": NUMBERS_OR_NULLS,
}

META: Fields = {
    "program": STRING,
    "mpilens_version": STRING,
    "date": STRING,
    "command": STRINGS,
    "mpi": OBJECT,
    "ranks": NUMBER,
    "nodes": NUMBER,
    "hosts": STRINGS,
    "binding": STRINGS,
    "machines": STRINGS,
    "cpus_online": NUMBER,
    "topology": OBJECT,
    "env": OBJECT,
    "cvars": OBJECT_OR_NULL,
    "clock": OBJECT,
    "options": OBJECT,
    "progress_setting": OBJECT,
    "piggyback": OBJECT,
}
META_NESTED: Nested = {
    "mpi": {
        "library": STRING,
        "library_full": STRING,
        "flavour": STRING,
        "standard": STRING,
        "thread_level": STRING,
    },
    "clock": {
        "source": STRING,
        "resolution_ns": NUMBER_OR_NULL,
        "reported_resolution_ns": NUMBER_OR_NULL,
        "read_cost_ns": NUMBER_OR_NULL,
    },
    "topology": {"packages": NUMBER, "cores": NUMBER, "pus": NUMBER},
    "cvars": {"count": NUMBER, "vars": OBJECT},
    "piggyback": {"method": STRING, "pb_size": NUMBER},
    "progress_setting": {
        "label": STRING,
        "library": OBJECT,
        "env": OBJECT,
        "thread_level": STRING,
    },
}
# A control variable's value and default: a number, a string or a bool, or null where MPI_T
# cannot read it without an object (docs/results-schema.md, "cvars").
CVAR_VALUE = Kind(
    "a number, a string or a bool",
    lambda value: isinstance(value, (int, float, str, bool)),
    nullable=True,
)
CVAR: Fields = {"type": STRING, "scope": STRING, "value": CVAR_VALUE, "default": CVAR_VALUE}
PROGRESS_LIBRARY: Fields = {
    "loaded": BOOL,
    "running": BOOL,
    "mode": STRING,
    "interval_us": NUMBER,
    "cpu": NUMBER,
    "realtime": BOOL,
    "descriptors": NUMBER,
    "reason": STRING,
    "running_per_rank": BOOLS,
    "cpu_per_rank": NUMBERS,
}

NOTE: Fields = {"level": STRING, "text": STRING, "key": STRING, "date": STRING, "command": STRINGS}

# The point's own fields besides params and stats (coll repeats op, algo and method there).
POINT: Fields = {"family": STRING, "op": STRING, "algo": STRING, "method": STRING}

# params and stats: by name, for every family (a name means the same in every family).
_PARAM_NUMBERS = (
    "size_bytes",
    "compute_ns",
    "target_ns",
    "threads",
    "ranks",
    "rank",
    "np",
    "hop_delay_ns",
    "block",
    "root",
    "pb_size",
    "iterations",
    "window",
    "interval_bytes",
    "rate_hz",
    "work_ns",
    "rounds",
    "lead_ns",
    "leader",
    "follower",
    "group",
    "nx",
    "ny",
    "nz",
)
_PARAM_STRINGS = (
    "kernel",
    "phase",
    "op",
    "algo",
    "method",
    "wait",
    "recv",
    "bench",
    "from_method",
    "compute",
    "strategy",
    "progress",
    "kind",
    "app",
    "topology",
    "test_placement",
)
PARAMS: Fields = {
    **dict.fromkeys(_PARAM_NUMBERS, NUMBER),
    **dict.fromkeys(_PARAM_STRINGS, STRING),
    "fast": BOOL,
}
_STAT_NUMBERS = (
    "ratio",
    "rel_error",
    "rsd",
    "blocks",
    "tests",
    "threads",
    "rank_cpus",
    "wakeups",
    "spread",
    "late_reps",
    "workload_units",
    "all_bound",
    "weighted_before",
    "weighted_after",
    "hop_bytes_before",
    "hop_bytes_after",
    "residual_before",
    "residual_after",
    "argmax_rank",
    "total_messages",
    "ranks",
    "rounds",
    "units",
    "late_fraction",
    "slowdown",
    "worst_rank",
)
_STAT_LISTS = ("gap_bound_ranks", "measured_ranks", "audited_ranks", "new_rank_of")
STATS: Fields = {
    **dict.fromkeys(_STAT_NUMBERS, NUMBER_OR_NULL),
    **dict.fromkeys(_STAT_LISTS, NUMBERS),
    "remedy": STRING_OR_NULL,
    "from_key": STRING,
    "backend": STRING,
    "backend_reason": STRING,
    "checksum": STRING,
    "per_rank": OBJECT,
    "candidates": OBJECTS,
    "counts": OBJECT,
    "bytes": OBJECT,
    "comp": OBJECT,
    "ref": OBJECT,
    "sample": OBJECT,
    "context_switches": OBJECT,
}
# Times, sizes, durations, percentages and rates are named by their unit: suffix -> unit.
SUFFIX_UNITS = {
    "_ns": "ns",
    "_s": "s",
    "_pct": "%",
    "_Bps": "B/s",
    "_hz": "Hz",
    "_bytes": "B",
    "_us": "us",
}
_NUMBER_SUFFIXES = tuple(SUFFIX_UNITS)
# The fields of a sample summary in its own "unit"; the others (n, ci_level, ...) have none.
SAMPLE_MEASURES = frozenset(
    ("min", "max", "mean", "median", "q1", "q3", "d1", "d9", "ci_lo", "ci_hi", "values")
)
# Per-rank values are lists indexed by rank, null where not measured.
_PER_RANK_PREFIXES = ("per_rank_", "cheap_")

# Fields the analyses cannot do without: (family, test of the bench) -> part -> fields.
REQUIRED: Tuple[Tuple[str, Callable[[str], bool], str, Tuple[str, ...]], ...] = (
    ("sanity", lambda bench: bench == "compute", "params", ("target_ns",)),
    ("sanity", lambda bench: bench == "offset", "params", ("rank", "phase")),
    ("sanity", lambda bench: bench == "offset", "stats", ("offset_ns", "bound_ns")),
    ("overlap", lambda bench: True, "params", ("size_bytes",)),
    ("overlap", lambda bench: bench == "nload", "params", ("threads",)),
    (
        "overlap",
        lambda bench: bench != "nload" and not bench.startswith("ref-"),
        "params",
        ("compute_ns",),
    ),
)


def _stat_kind(name: str) -> Optional[Kind]:
    known = STATS.get(name)
    if known is not None:
        return known
    if name.startswith(_PER_RANK_PREFIXES):
        return NUMBERS_OR_NULLS
    if name.endswith(_NUMBER_SUFFIXES):
        return NUMBER_OR_NULL
    return None


def _param_kind(name: str) -> Optional[Kind]:
    known = PARAMS.get(name)
    if known is not None or not name.endswith(_NUMBER_SUFFIXES):
        return known
    return NUMBER


class FieldError(Exception):
    """A field of a record holds the wrong type: its path, what was expected, what was found."""

    def __init__(self, path: str, expected: str, found: str) -> None:
        super().__init__(f'field "{path}": expected {expected}, found {found}')


def _check(prefix: str, name: str, kind: Kind, value: Any) -> None:
    if not kind.accepts(value):
        found = _found(value)
        if isinstance(value, list) and kind.name.startswith("a list of"):
            # A list of the wrong elements: name the first wrong one.
            found = next(
                (f"{_found(item)} in it" for item in value if not kind.accepts([item])), found
            )
        raise FieldError(f"{prefix}{name}", kind.expected(), found)


def _check_fields(
    record: Record, fields: Fields, prefix: str = "", names: Optional[Iterable[str]] = None
) -> None:
    for name in fields if names is None else names:
        if name in record:
            _check(prefix, name, fields[name], record[name])


def _check_by_name(record: Record, kind_of: Callable[[str], Optional[Kind]], prefix: str) -> None:
    for name, value in record.items():
        kind = kind_of(name)
        if kind is not None:
            _check(prefix, name, kind, value)


def _require(record: Record, part: str, names: Tuple[str, ...]) -> None:
    for name in names:
        if record.get(name) is None:
            found = "nothing" if name not in record else "null"
            raise FieldError(f"{part}.{name}", "a value", found)


def check_meta(meta: Record) -> None:
    """Raise FieldError for the first field of a meta record that holds the wrong type."""
    _check_fields(meta, META)
    for name, fields in META_NESTED.items():
        inner = meta.get(name)
        if isinstance(inner, dict):
            _check_fields(inner, fields, f"{name}.")
    cvars = meta.get("cvars")
    variables = cvars.get("vars") if isinstance(cvars, dict) else None
    for name, entry in (variables or {}).items():
        _check("cvars.vars.", name, OBJECT, entry)
        _check_fields(entry, CVAR, f"cvars.vars.{name}.")
    setting = meta.get("progress_setting")
    library = setting.get("library") if isinstance(setting, dict) else None
    if isinstance(library, dict):
        _check_fields(library, PROGRESS_LIBRARY, "progress_setting.library.")


def check_point(point: Record, family: str) -> None:
    """Raise FieldError for the first field of a point (whose params and stats are objects) of
    a file of `family`."""
    _check_fields(point, POINT)
    params, stats = point["params"], point["stats"]
    _check_by_name(params, _param_kind, "params.")
    _check_by_name(stats, _stat_kind, "stats.")
    for name, inner in stats.items():
        if isinstance(inner, dict) and name in ("sample", "comp", "ref"):
            _check_fields(inner, SAMPLE, f"stats.{name}.")
    per_rank = stats.get("per_rank")
    if isinstance(per_rank, dict):
        for name, value in per_rank.items():
            _check("stats.per_rank.", name, NUMBERS_OR_NULLS, value)
    for index, candidate in enumerate(stats.get("candidates") or []):
        _check_by_name(candidate, _stat_kind, f"stats.candidates.{index}.")
    bench = point["bench"]
    for owner, applies, part, names in REQUIRED:
        if owner == family and applies(bench):
            _require(point[part], part, names)


def check_note(note: Record) -> None:
    """Raise FieldError for the first field of a note record that holds the wrong type."""
    _check_fields(note, NOTE)
