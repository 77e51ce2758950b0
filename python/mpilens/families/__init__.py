"""The registry of measurement families: every family the command line offers and the reports
know, in the order of `mpilens --help`.

Each family declares itself in families/<name>.py (a Family, see family.py: its commands, their
options, its presets) and analyses, draws and reports its results in analysis/<name>.py and
plots/<name>.py. docs/CONTRIBUTING.md says how to add one.
"""

from __future__ import annotations

from typing import Dict, List

from ..errors import MpilensError
from ..family import Family
from . import coll, map, monitor, overlap, piggyback, progress, sanity

FAMILIES: Dict[str, Family] = {
    module.FAMILY.name: module.FAMILY
    for module in (sanity, overlap, coll, piggyback, progress, monitor, map)
}


def suite_families() -> List[Family]:
    """The families `mpilens suite` runs, each with a program of its own."""
    return [family for family in FAMILIES.values() if family.in_suite]


def get(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise MpilensError(
            f'unknown family "{name}"; this mpilens knows: ' + ", ".join(FAMILIES)
        ) from None
