"""The registry of measurement families: what each runs, and how its results are reported.

Adding a family: write analysis/<name>.py (diagnose, compare) and plots/<name>.py (render), then
add one Family(...) line to FAMILIES below. A family may also declare options of its own command
(passed on to its program) and extra content for the comparison page. A family that has no
program of its own to run (monitor watches the user's program) says in_suite=False: `mpilens
suite` skips it, and its command is written in cli.py rather than made from the family.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .analysis import monitor as monitor_analysis
from .analysis import overlap as overlap_analysis
from .analysis import sanity as sanity_analysis
from .errors import MpilensError
from .plots import monitor as monitor_plots
from .plots import overlap as overlap_plots
from .plots import sanity as sanity_plots
from .results import Run
from .section import Part, ReportSection

PRESETS = ("quick", "default", "full")


def standard_presets() -> Dict[str, List[str]]:
    """Most programs take a --preset option with the same names."""
    return {preset: ["--preset", preset] for preset in PRESETS}


@dataclass(frozen=True)
class FamilyOption:
    """An option of one family's command, checked by mpilens, then given as is to its program."""

    name: str
    metavar: str
    help: str
    # The text to pass on, or an MpilensError saying what is wrong with it.
    validator: Callable[[str], str]

    @property
    def dest(self) -> str:
        # Prefixed so that no family option can collide with a launch option.
        return "family_" + self.name.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Family:
    name: str
    # What writes the family's results file: its program, or for monitor the library.
    program: str
    description: str
    render: Callable[[Run], ReportSection]
    diagnose: Callable[[Run], List[str]]
    compare: Callable[[Run, Run], List[str]]
    presets: Mapping[str, Sequence[str]] = field(default_factory=standard_presets)
    options: Sequence[FamilyOption] = ()
    # Parts shown once for both runs of a comparison (run A, run B, their labels).
    compare_parts: Optional[Callable[[Run, Run, Tuple[str, str]], List[Part]]] = None
    # False for a family with no program of its own to run (see the module's docstring).
    in_suite: bool = True

    def preset_args(self, preset: str) -> List[str]:
        if preset not in self.presets:
            raise MpilensError(f'invalid preset "{preset}" for {self.name}: choose from '
                               + ", ".join(self.presets))
        return list(self.presets[preset])


def overlap_bench_list(text: str) -> str:
    """--bench of mpilens overlap: benchmark names of docs/overlap.md, or all."""
    names = [name.strip() for name in text.split(",")]
    allowed = (*overlap_analysis.BENCHES, "all")
    if not all(names):
        raise MpilensError(f'invalid benchmark list "{text}": expected names separated by '
                           "commas, such as sender,receiver")
    for name in names:
        if name not in allowed:
            raise MpilensError(f'unknown benchmark "{name}": choose from ' + ", ".join(allowed))
    return ",".join(names)


FAMILIES: Dict[str, Family] = {family.name: family for family in (
    Family("sanity", "mpilens-sanity",
           "check that this machine and MPI can be measured: clock, compute kernels, clock "
           "offsets, ready-first handshake, synchronized start",
           sanity_plots.render, sanity_analysis.diagnose, sanity_analysis.compare),
    Family("overlap", "mpilens-overlap",
           "Does non-blocking communication progress while the program computes? Heat maps "
           "over message size × computation time (seed 000)",
           overlap_plots.render, overlap_analysis.diagnose, overlap_analysis.compare,
           options=(FamilyOption("--bench", "LIST", "benchmarks to run, separated by commas: "
                                 + ", ".join(overlap_analysis.BENCHES) + ", or all",
                                 overlap_bench_list),),
           compare_parts=overlap_plots.compare_parts),
    Family("monitor", "libmpilens-monitor",
           "run PROGRAM under the monitoring library: who sends how many messages and bytes to "
           "whom, per kind of communication (seed 004)",
           monitor_plots.render, monitor_analysis.diagnose, monitor_analysis.compare,
           presets={}, in_suite=False),
)}


def suite_families() -> List[Family]:
    """The families `mpilens suite` runs, each with a program of its own."""
    return [family for family in FAMILIES.values() if family.in_suite]


def get(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise MpilensError(f'unknown family "{name}"; this mpilens knows: '
                           + ", ".join(FAMILIES)) from None
