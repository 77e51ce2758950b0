"""What a measurement family declares: its commands and their options, and how its results are
analysed, drawn and reported. Each family declares one Family in families/<name>.py; the
registry, families/__init__.py, lists them; docs/CONTRIBUTING.md says how to add one."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple

from .advice import Symptom
from .errors import MpilensError
from .results import Record, Run, merge
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
    # The text to pass on, or an MpilensError saying what is wrong with it; None for a flag.
    validator: Optional[Callable[[str], str]] = None

    @property
    def flag(self) -> bool:
        """An option without a value, passed on when given."""
        return self.validator is None

    @property
    def dest(self) -> str:
        # Prefixed so that no family option can collide with a launch option.
        return "family_" + self.name.lstrip("-").replace("-", "_")


@dataclass
class Outcome:
    """What a command measured or read, for the report the command line then writes and prints:
    report.html in outdir, the family's tables (when asked), the findings, then notes, then
    "results: PATH" (when given) and "report: PATH"."""

    runs: Sequence[Run]
    outdir: Path
    results: Optional[Path] = None
    tables: bool = True
    # Lines printed after the findings, such as the files a command wrote besides.
    notes: Sequence[str] = ()
    # A failure found in the results (piggyback: the layer changed an application's answer):
    # reported as the command's error once everything above was written and printed.
    failure: Optional[str] = None


@dataclass(frozen=True)
class Command:
    """A subcommand of `mpilens`: how its parser is built and how it runs, each given the family.
    run returns what to report, or None when the command printed all it had to say."""

    add_arguments: Callable[[argparse.ArgumentParser, Family], None]
    run: Callable[[argparse.Namespace, Family], Optional[Outcome]]
    # The command's name, its line in `mpilens --help` and its own --help text; by default the
    # family's name, its description, and "Run <program>: <description>."
    name: Optional[str] = None
    help: Optional[str] = None
    description: Optional[str] = None
    usage: Optional[str] = None

    def name_in(self, family: Family) -> str:
        return self.name or family.name

    def help_in(self, family: Family) -> str:
        return self.help or family.description

    def description_in(self, family: Family) -> str:
        return self.description or f"Run {family.program}: {family.description}."


@dataclass(frozen=True)
class Family:
    name: str
    # What writes the family's results file: its program, or for monitor the library.
    program: str
    description: str
    # The report's section of a run (plots/<name>.py), its findings and the differences of two
    # runs (analysis/<name>.py).
    render: Callable[[Run], ReportSection]
    diagnose: Callable[[Run], List[str]]
    compare: Callable[[Run, Run], List[str]]
    commands: Sequence[Command] = ()
    presets: Mapping[str, Sequence[str]] = field(default_factory=standard_presets)
    # The options of a command made by program_command, passed on to the program.
    options: Sequence[FamilyOption] = ()
    # Parts shown once for both runs of a comparison (run A, run B, their labels).
    compare_parts: Optional[Callable[[Run, Run, Tuple[str, str]], List[Part]]] = None
    # False for a family whose command is not one run of its program with the launch options
    # (monitor runs the user's program; piggyback and progress run theirs under several
    # settings; map reports the reordering examples the user runs): `mpilens suite` skips it.
    in_suite: bool = True
    # True for a family measured over several rank counts (coll): its command takes a list of
    # counts and writes one file per count, which the report reads as one run (results.merge).
    np_series: bool = False
    min_ranks: int = 1
    # Lines its command prints before the findings, such as a table of the results.
    text_table: Optional[Callable[[Run], List[str]]] = None
    # How several files of the family read as one run, other than a series over rank counts
    # (piggyback: one file per layer configuration; progress: one per progress setting; map: the
    # files of both examples, at any rank counts).
    combine: Optional[Callable[[Sequence[Run]], Run]] = None
    # Every point its analysis judges (of a run as the report reads it, combined), with why it
    # cannot be true, or None when it can: the points the report leaves out have a reason
    # (`mpilens export` writes them); None for a family whose points are all taken as they are.
    validity: Optional[Callable[[Run], List[Tuple[Record, Optional[str]]]]] = None
    # The report's first screen: the family's verdict on a run in one or two sentences (None:
    # the first sentence of its diagnosis stands for it), and what the run shows that costs
    # time, as symptoms of the remedy catalogue (advice.py, remedies.json).
    verdict: Optional[Callable[[Run], Optional[str]]] = None
    symptoms: Optional[Callable[[Run], List[Symptom]]] = None

    @property
    def combiner(self) -> Optional[Callable[[Sequence[Run]], Run]]:
        """How the report reads the family's files as one run; None: each file on its own."""
        return self.combine or (merge if self.np_series else None)

    def preset_args(self, preset: str) -> List[str]:
        if preset not in self.presets:
            raise MpilensError(
                f'invalid preset "{preset}" for {self.name}: choose from ' + ", ".join(self.presets)
            )
        return list(self.presets[preset])

    def output_name(self, ranks: int) -> str:
        """The results file of one run: named by its rank count in a series."""
        return f"{self.name}-np{ranks}.jsonl" if self.np_series else f"{self.name}.jsonl"


class StudyAnalysis(Protocol):
    """What analysis/<name>.py of a study family gives (see study_family)."""

    def diagnose(self, run: Run, /) -> List[str]: ...
    def compare(self, run_a: Run, run_b: Run, /) -> List[str]: ...
    def comparison_table(self, run: Run, /) -> List[str]: ...
    def combine(self, runs: Sequence[Run], /) -> Run: ...
    def validity(self, run: Run, /) -> List[Tuple[Record, Optional[str]]]: ...


class StudyPlots(Protocol):
    """What plots/<name>.py of a study family gives (see study_family)."""

    def render(self, run: Run, /) -> ReportSection: ...
    def compare_parts(self, run_a: Run, run_b: Run, labels: Tuple[str, str], /) -> List[Part]: ...


def study_family(
    name: str,
    program: str,
    description: str,
    analysis: StudyAnalysis,
    plots: StudyPlots,
    command: Command,
    presets: Mapping[str, Sequence[str]],
    verdict: Optional[Callable[[Run], Optional[str]]] = None,
    symptoms: Optional[Callable[[Run], List[Symptom]]] = None,
) -> Family:
    """A family whose command makes a study of several files at 2 ranks or more (piggyback and
    progress under each setting, map's examples), read as one run by its analysis's combine: its
    command is its own, not in `mpilens suite`; the report takes every part from its analysis and
    plots modules, the command prints its analysis's comparison_table; verdict and symptoms are
    the first screen's (Family)."""
    return Family(
        name,
        program,
        description,
        plots.render,
        analysis.diagnose,
        analysis.compare,
        commands=(command,),
        presets=presets,
        compare_parts=plots.compare_parts,
        in_suite=False,
        min_ranks=2,
        text_table=analysis.comparison_table,
        combine=analysis.combine,
        validity=analysis.validity,
        verdict=verdict,
        symptoms=symptoms,
    )
