"""What the report's first screen says: the conditions that make results doubtful, a verdict per
family, and the findings that cost the user time, ranked by that cost, each with its evidence and
the remedies of the catalogue (remedies.py) that apply to the library measured, with the command
that verifies them (`mpilens tune`)."""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence

from . import launch, remedies
from .results import Run, record_integer, record_object
from .text import percent
from .units import format_time

# Remedies `mpilens tune` can try from outside the program: the others change its code or its
# rank order, which mpilens measures with its own commands.
TUNABLE_KINDS = ("progress", "env", "launcher")
# What verifies the remedies tune cannot set.
OTHER_VERIFICATION = {
    "code": "mpilens progress (it measures MPI_Test calls placed in the computation)",
    "rank-order": "mpilens map (it measures the rank order it proposes against the one run)",
}


@dataclass(frozen=True)
class Symptom:
    """One thing a run shows that costs time, in the catalogue's terms.

    cost_ns: the time it costs per operation (a message, a collective, an iteration) where it
    is worst; share: that cost as a share of the operation's measured time, the key findings are
    ranked by; evidence: the name of the plot that shows it in its family's section; values:
    what fills the catalogue's placeholders ({size}); bench: the FAMILY:BENCH `mpilens tune`
    measures it with, when one does."""

    key: str
    text: str
    cost_ns: Optional[float] = None
    share: Optional[float] = None
    evidence: Optional[str] = None
    values: Mapping[str, str] = field(default_factory=dict)
    bench: Optional[str] = None


@dataclass
class Finding:
    """A symptom of one run with the remedies that apply to its library."""

    family: str
    run: Run
    symptom: Symptom
    remedies: List[remedies.Remedy]
    # The library's control variables were not recorded (results written before mpilens 0.2
    # listed them in the meta record): remedies that need one are advised unchecked.
    unchecked: bool

    def cost_text(self) -> Optional[str]:
        """ "10.3 µs per operation, 56% of its time"; None for a condition with no cost."""
        parts = []
        if self.symptom.cost_ns is not None:
            parts.append(f"{format_time(self.symptom.cost_ns)} per operation")
        if self.symptom.share is not None:
            parts.append(f"{percent(self.symptom.share)} of its time")
        return ", ".join(parts) or None


def sort_key(finding: Finding) -> tuple:
    """Largest share first, then largest cost; findings without either last, in their order."""
    share, cost = finding.symptom.share, finding.symptom.cost_ns
    return (share is None, -(share or 0.0), cost is None, -(cost or 0.0))


def ranked(found: Sequence[Finding]) -> List[Finding]:
    return sorted(found, key=sort_key)


def findings_of(family: str, run: Run, symptoms: Sequence[Symptom]) -> List[Finding]:
    library = remedies.library_of(run.meta)
    return [
        Finding(family, run, s, remedies.for_symptom(s.key, library), library.cvars is None)
        for s in symptoms
    ]


def _launch_words(run: Run) -> List[str]:
    """--np and --mpi of the run measured, so that a verification measures the same job."""
    words = []
    ranks = record_integer(run.meta.get("ranks"))
    if ranks:
        words += ["--np", str(ranks)]
    mpi = record_object(run.meta, "mpi")
    flavour = launch.flavour_of_library(mpi.get("flavour"), mpi.get("library"))
    if flavour is not None:
        words += ["--mpi", flavour.value]
    return words


def verification(finding: Finding) -> Optional[str]:
    """The command that measures the remedies of a finding: `mpilens tune` for those it can set
    from outside, else the mpilens command that measures the others."""
    # tune fills {size} from its sweep; a remedy of other placeholders is applied by hand.
    tunable = [
        r for r in finding.remedies if r.kind in TUNABLE_KINDS and set(r.needs_values) <= {"size"}
    ]
    if tunable and finding.symptom.bench:
        words = ["mpilens", "tune", "--bench", finding.symptom.bench, *_launch_words(finding.run)]
        words += ["--settings", ",".join(r.name for r in tunable)]
        return shlex.join(words)
    others = sorted({r.kind for r in finding.remedies if r.kind in OTHER_VERIFICATION})
    return "; ".join(OTHER_VERIFICATION[kind] for kind in others) or None


def size_value(size: float) -> str:
    """A limit that covers messages of `size` bytes: the next power of two above it."""
    return str(2 ** math.ceil(math.log2(size + 1)))


def remedy_rows(finding: Finding, launcher: str = "mpirun") -> List[List[str]]:
    """(remedy, how to apply it, libraries, why) per remedy of a finding."""
    values: Dict[str, str] = dict(finding.symptom.values)
    return [
        [
            remedy.name,
            remedies.describe(remedy, values, launcher),
            remedies.libraries_text(remedy),
            remedy.reason,
        ]
        for remedy in finding.remedies
    ]
