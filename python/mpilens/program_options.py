"""The choice lists and integer ranges of the measurement programs' options, as the programs
themselves print them.

Each program parses its options with one table (src/core/options.c) and prints it with
--options-json. What the mpilens command offers and checks (overlap's --bench, coll's --op,
--method, --algo, --wait and --block, progress's --bench and --ops) and the orders the analyses
follow come from that table, through program_options.json beside this module: the choices and
ranges of every program's table, written from a build by tools/update_program_options.py and
compared with the built programs by tests/python/test_program_options.py. The command reads this
copy rather than asking the program: `mpilens COMMAND --help`, the checks made before anything
is launched and the reports made on a laptop must work without a build, and every question would
start MPI in the program (MPI_Init), on a cluster outside its launcher.
"""

from __future__ import annotations

import json
import subprocess
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Dict, Tuple

from .errors import MpilensError

FILE = "program_options.json"
# The programs whose options mpilens passes on or whose results it orders by them.
PROGRAMS = (
    "mpilens-sanity",
    "mpilens-overlap",
    "mpilens-coll",
    "mpilens-piggyback",
    "mpilens-progress",
)
# What the copy keeps of an option: choices (CHOICE and LIST options), or its range (INT).
KEPT = ("choices", "min", "max")

Table = Dict[str, Dict[str, Any]]


@cache
def tables() -> Dict[str, Table]:
    """Every program's kept options, by program name, then option name (without "--")."""
    text = resources.files("mpilens").joinpath(FILE).read_text(encoding="utf-8")
    return json.loads(text)


def choices(program: str, option: str) -> Tuple[str, ...]:
    return tuple(tables()[program][option]["choices"])


def int_range(program: str, option: str) -> Tuple[int, int]:
    row = tables()[program][option]
    return row["min"], row["max"]


def kept(printed: Dict[str, Any]) -> Table:
    """What the copy keeps of a program's --options-json."""
    return {
        row["name"]: {key: row[key] for key in KEPT if key in row}
        for row in printed["options"]
        if any(key in row for key in KEPT)
    }


def read(program: Path) -> Table:
    """Ask a built program for its table, as the copy keeps it."""
    try:
        done = subprocess.run(
            [str(program), "--options-json"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        printed = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError) as error:
        raise MpilensError(f'cannot read the options of "{program}": {error}') from None
    if printed is None:
        raise MpilensError(
            f'"{program} --options-json" exited with status {done.returncode}: '
            f"{done.stderr.strip()}"
        )
    return kept(printed)


def dumps(found: Dict[str, Table]) -> str:
    """program_options.json's text: one line per option, so that a change reads as one."""
    lines = []
    for program, table in found.items():
        rows = [f"    {json.dumps(name)}: {json.dumps(row)}" for name, row in table.items()]
        lines.append(f"  {json.dumps(program)}: {{\n" + ",\n".join(rows) + "\n  }")
    return "{\n" + ",\n".join(lines) + "\n}\n"
