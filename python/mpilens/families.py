"""The registry of measurement families: what each runs, and how its results are reported.

Adding a family: write analysis/<name>.py (diagnose, compare) and plots/<name>.py (render), then
add one Family(...) line to FAMILIES below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Sequence

from .analysis import sanity as sanity_analysis
from .errors import MpilensError
from .plots import sanity as sanity_plots
from .results import Run
from .section import ReportSection

PRESETS = ("quick", "default", "full")


def standard_presets() -> Dict[str, List[str]]:
    """Most programs take a --preset option with the same names."""
    return {preset: ["--preset", preset] for preset in PRESETS}


@dataclass(frozen=True)
class Family:
    name: str
    program: str
    description: str
    render: Callable[[Run], ReportSection]
    diagnose: Callable[[Run], List[str]]
    compare: Callable[[Run, Run], List[str]]
    presets: Mapping[str, Sequence[str]] = field(default_factory=standard_presets)

    def preset_args(self, preset: str) -> List[str]:
        if preset not in self.presets:
            raise MpilensError(f'invalid preset "{preset}" for {self.name}: choose from '
                               + ", ".join(self.presets))
        return list(self.presets[preset])


FAMILIES: Dict[str, Family] = {family.name: family for family in (
    Family("sanity", "mpilens-sanity",
           "check that this machine and MPI can be measured: clock, compute kernels, clock "
           "offsets, ready-first handshake, synchronized start",
           sanity_plots.render, sanity_analysis.diagnose, sanity_analysis.compare),
)}


def get(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise MpilensError(f'unknown family "{name}"; this mpilens knows: '
                           + ", ".join(FAMILIES)) from None
