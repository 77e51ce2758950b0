"""The registry of measurement families: what each runs, and how its results are reported.

Adding a family: write analysis/<name>.py (diagnose, compare) and plots/<name>.py (render), then
add one Family(...) line to FAMILIES below. A family may also declare options of its own command
(passed on to its program) and extra content for the comparison page. A family whose command is
not one run of its program with the generic options says in_suite=False: `mpilens suite` skips
it, and its command is written by hand (cli.py registers it) rather than made from the family.
Such are monitor (it runs the user's program), piggyback (it runs its program once per layer
configuration, with LD_PRELOAD and the layer's variables, then the example applications, and
writes the threshold of the layer's auto method) and progress (its program once per progress
setting, then mpilens-overlap without and with a progress thread); map's files come from the
reordering examples, run by the user (`mpilens map` itself maps, it measures nothing). A
family measured as a
series over rank counts (coll) says np_series=True: its command takes a list of counts, writes
one file per count, and the report reads those files as one run (results.merge). A family that
writes several files of another layout says how they read as one run with combine (piggyback:
one file per layer configuration, which hold the same keys; progress: one file per progress
setting; map: the files of both examples, at any rank counts).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .analysis import coll as coll_analysis
from .analysis import map as map_analysis
from .analysis import monitor as monitor_analysis
from .analysis import overlap as overlap_analysis
from .analysis import piggyback as piggyback_analysis
from .analysis import progress as progress_analysis
from .analysis import sanity as sanity_analysis
from .errors import MpilensError
from .plots import coll as coll_plots
from .plots import map as map_plots
from .plots import monitor as monitor_plots
from .plots import overlap as overlap_plots
from .plots import piggyback as piggyback_plots
from .plots import progress as progress_plots
from .plots import sanity as sanity_plots
from .results import Run, merge
from .section import Part, ReportSection
from .units import parse_size, parse_time

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
    # True for a family measured over several rank counts (see the module's docstring).
    np_series: bool = False
    min_ranks: int = 1
    # Lines its command prints before the findings, such as a table of the results.
    text_table: Optional[Callable[[Run], List[str]]] = None
    # How several files of the family read as one run, other than a series over rank counts
    # (see the module's docstring).
    combine: Optional[Callable[[Sequence[Run]], Run]] = None

    @property
    def combiner(self) -> Optional[Callable[[Sequence[Run]], Run]]:
        """How the report reads the family's files as one run; None: each file on its own."""
        return self.combine or (merge if self.np_series else None)

    def preset_args(self, preset: str) -> List[str]:
        if preset not in self.presets:
            raise MpilensError(f'invalid preset "{preset}" for {self.name}: choose from '
                               + ", ".join(self.presets))
        return list(self.presets[preset])

    def output_name(self, ranks: int) -> str:
        """The results file of one run: named by its rank count in a series."""
        return f"{self.name}-np{ranks}.jsonl" if self.np_series else f"{self.name}.jsonl"


def name_words(text: str, allowed: Sequence[str], what: str, example: str,
               hints: Optional[Mapping[str, str]] = None) -> List[str]:
    """The names of a comma-separated list, each among allowed or "all" (as given: "all" is not
    expanded); MpilensError naming the first wrong one. hints: a word on a name that is not
    allowed, said with it."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise MpilensError(f'invalid {what} list "{text}": expected names separated by commas, '
                           f"such as {example}")
    for name in names:
        if name not in (*allowed, "all"):
            hint = f" ({hints[name]})" if hints and name in hints else ""
            raise MpilensError(f'unknown {what} "{name}"{hint}: choose from '
                               + ", ".join((*allowed, "all")))
    return names


def chosen_names(text: str, allowed: Sequence[str], what: str, example: str,
                 hints: Optional[Mapping[str, str]] = None) -> List[str]:
    """name_words for an argparse option: the names chosen (all of them for "all"), in the order
    of allowed."""
    try:
        names = name_words(text, allowed, what, example, hints)
    except MpilensError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return [name for name in allowed if name in names or "all" in names]


def _name_list(text: str, allowed: Sequence[str], what: str, example: str,
               hints: Optional[Mapping[str, str]] = None) -> str:
    """A comma-separated list of names among allowed (or all), passed on without spaces."""
    return ",".join(name_words(text, allowed, what, example, hints))


def overlap_bench_list(text: str) -> str:
    """--bench of mpilens overlap: benchmark names of docs/overlap.md, or all."""
    return _name_list(text, overlap_analysis.BENCHES, "benchmark", "sender,receiver")


def coll_ops(text: str) -> str:
    return _name_list(text, coll_analysis.OPS, "operation", "bcast,reduce")


def coll_methods(text: str) -> str:
    derived = "computed from the barrier method's runs: add barrier to get it"
    return _name_list(text, coll_analysis.METHODS, "method", "oli,rounds",
                      {name: derived for name in coll_analysis.DERIVED})


def coll_algos(text: str) -> str:
    return _name_list(text, coll_analysis.ALGOS, "algorithm", "library,linear")


def coll_size(text: str) -> str:
    parse_size(text)
    return text.strip()


def coll_hop_delay(text: str) -> str:
    if parse_time(text) > coll_analysis.HOP_DELAY_MAX_NS:
        raise MpilensError(f'invalid hop delay "{text}": at most 1s')
    return text.strip()


def coll_block(text: str) -> str:
    low, high = coll_analysis.BLOCK_RANGE
    if not text.strip().isdigit() or not low <= int(text) <= high:
        raise MpilensError(f'invalid block "{text}": expected a number of operations from {low} '
                           f"to {high}")
    return text.strip()


def coll_wait(text: str) -> str:
    if text.strip() not in coll_analysis.WAITS:
        raise MpilensError(f'invalid wait "{text}": choose from ' + ", ".join(coll_analysis.WAITS))
    return text.strip()


# The seed's rule is full's: blocks of 100 operations, 8 to 30 blocks, until their RSD is below 3%.
COLL_PRESETS = {"quick": ["--block", "10", "--min-blocks", "3", "--max-blocks", "5"],
                "default": ["--block", "50", "--min-blocks", "5", "--max-blocks", "15"],
                "full": []}

COLL_OPTIONS = (
    FamilyOption("--op", "LIST", "operations, separated by commas: "
                 + ", ".join(coll_analysis.OPS) + ", or all (default bcast)", coll_ops),
    FamilyOption("--method", "LIST", "methods, separated by commas: "
                 + ", ".join(coll_analysis.METHODS) + ", or all (default all)", coll_methods),
    FamilyOption("--algo", "LIST", "implementations, separated by commas: "
                 + ", ".join(coll_analysis.ALGOS) + ", or all (default all)", coll_algos),
    FamilyOption("--size", "BYTES", "message size, such as 256 or 64K (default 256)", coll_size),
    FamilyOption("--hop-delay", "TIME", "busy wait before every forwarding send of the reference "
                 "algorithms, such as 100 (µs) or 2ms, at most 1s: the true latency is then "
                 "known (default 0)", coll_hop_delay),
    FamilyOption("--block", "M", "operations per block, 1 to 100000 (the preset's otherwise)",
                 coll_block),
    FamilyOption("--fast", "", "oli: measure in full only the candidates of a cheap pass, plus "
                 "random checks"),
    FamilyOption("--wait", "MODE", "how ranks wait: " + ", ".join(coll_analysis.WAITS)
                 + " (default auto)", coll_wait),
)


# mpilens piggyback: the program's options for the repetitions of every point, by preset; the
# message sizes of the sweep of each method (seed 001 figure 2: 1 B to 4 MiB); and the example
# applications (seed 001 figure 4), sized so that one solve takes a fraction of a second at 2
# ranks on a laptop core: a run of --repeat solves then lasts about a second.
PIGGYBACK_PRESETS = {"quick": ["--budget", "50ms"], "default": [], "full": ["--budget", "1s"]}
PIGGYBACK_SIZES = {"quick": "1:1M", "default": "1:4M", "full": "1:4M"}
PIGGYBACK_APPS_ON = {"quick": False, "default": True, "full": True}
PIGGYBACK_APP_REPEAT = {"quick": 3, "default": 3, "full": 5}
# (program, its size options, iterations by preset)
PIGGYBACK_APPS = {
    "sweep": ("mpilens-example-sweep", ["--n", "32"], {"quick": 6, "default": 6, "full": 16}),
    "cg": ("mpilens-example-cg", ["--n", "32"], {"quick": 400, "default": 400, "full": 1200}),
}


# mpilens progress: the program's presets (it has no full one: full measures longer per point).
PROGRESS_PRESETS = {"quick": ["--preset", "quick"], "default": ["--preset", "default"],
                    "full": ["--preset", "default", "--budget", "2s"]}


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
    Family("coll", "mpilens-coll",
           "How long does a collective really take to reach each rank? Every common method "
           "against the per-rank operation latency OL_i, over rank counts (seed 003)",
           coll_plots.render, coll_analysis.diagnose, coll_analysis.compare,
           presets=COLL_PRESETS, options=COLL_OPTIONS, compare_parts=coll_plots.compare_parts,
           np_series=True, min_ranks=2, text_table=coll_analysis.comparison_table),
    Family("piggyback", "mpilens-piggyback",
           "What does attaching piggyback data to every message cost? Latency and bandwidth "
           "under each method of libmpilens-piggyback against the library alone, over message "
           "and pb sizes, and the overhead on two applications (seed 001)",
           piggyback_plots.render, piggyback_analysis.diagnose, piggyback_analysis.compare,
           presets=PIGGYBACK_PRESETS, compare_parts=piggyback_plots.compare_parts,
           in_suite=False, min_ranks=2, text_table=piggyback_analysis.comparison_table,
           combine=piggyback_analysis.combine),
    Family("progress", "mpilens-progress",
           "What does progression cost, and what helps? Overhead of non-blocking messages and "
           "collectives with the MPI library alone, with MPI_Test strategies, under "
           "libmpilens-progress's thread in each mode and placement and with the library's own "
           "asynchronous progress, and the cost of timer interrupts (seed 002)",
           progress_plots.render, progress_analysis.diagnose, progress_analysis.compare,
           presets=PROGRESS_PRESETS, compare_parts=progress_plots.compare_parts,
           in_suite=False, min_ranks=2, text_table=progress_analysis.comparison_table,
           combine=progress_analysis.combine),
    Family("monitor", "libmpilens-monitor",
           "run PROGRAM under the monitoring library: who sends how many messages and bytes to "
           "whom, per kind of communication (seed 004)",
           monitor_plots.render, monitor_analysis.diagnose, monitor_analysis.compare,
           presets={}, in_suite=False),
    Family("map", "mpilens-example-reorder-allgather",
           "Which rank order fits the communication pattern to the machine, and does reordering "
           "pay? The gain of reordering over iterations and buffer sizes, its break-even, and "
           "the cost model's prediction (seed 004)",
           map_plots.render, map_analysis.diagnose, map_analysis.compare,
           presets={}, compare_parts=map_plots.compare_parts, in_suite=False, min_ranks=2,
           text_table=map_analysis.comparison_table, combine=map_analysis.combine),
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
