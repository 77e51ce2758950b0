"""The progress family (seed 002): what does progression cost, and what helps?

Its command, `mpilens progress`: mpilens-progress under one progress setting after another (the
MPI library alone, libmpilens-progress's thread in each mode and placement, the MPI library's own
asynchronous progress), optionally mpilens-overlap without and with the thread, and one report of
them all."""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .. import launch, program_options, results
from ..analysis import progress as analysis
from ..analysis import progress_costs
from ..cli_common import (
    EnvLauncher,
    Names,
    add_lib_dir,
    add_preset_flag,
    add_study_options,
    check_new,
    check_resume,
    output_dir,
    preset_flag,
    program_tail,
)
from ..errors import MpilensError
from ..family import Command, Family, Outcome, study_family
from ..plots import progress as plots
from ..units import parse_message_size_range
from .overlap import FAMILY as OVERLAP

PROGRESS_LIBRARY = "mpilens-progress"
NONE = "none"
THREAD_MODE = re.compile(
    r"^(poll|yield|sleep:[1-9][0-9]{0,6}|rt(:[1-9][0-9]{0,6})?|event(:[0-9]{1,7})?)$"
)
# The longest pause or wait libmpilens-progress takes, in microseconds (event:0: no timer).
MAX_PAUSE_US = 1_000_000
PLACEMENTS = Names(("shared", "spare"), "placement", "shared,spare")
DEFAULT_THREADS = "poll,yield,sleep:50,event"
PROGRAM = "mpilens-progress"
BENCHES = Names(program_options.choices(PROGRAM, "bench"), "benchmark", "p2p,nbc")
OPS = Names(analysis.OPS, "collective", "iallreduce,ibcast")
# Seed 000's rendezvous benchmarks: where a transfer needs the receiver's progress to move on.
OVERLAP_BENCHES = "sender,receiver"


def _sizes(text: str) -> str:
    """--sizes as the program reads it, refused here rather than by the program: a range the
    program would refuse must not start a study of several runs."""
    try:
        parse_message_size_range(text)
    except MpilensError as error:
        raise argparse.ArgumentTypeError(f'invalid --sizes "{text}": {error}') from None
    return text.strip()


def _thread_modes(text: str) -> List[str]:
    """--threads: modes of libmpilens-progress's thread, as MPILENS_PROGRESS spells them."""
    modes = [word.strip() for word in text.split(",")]
    if modes == [NONE]:
        return []
    for mode in modes:
        if not THREAD_MODE.match(mode) or int(mode.partition(":")[2] or 0) > MAX_PAUSE_US:
            raise argparse.ArgumentTypeError(
                f'invalid thread mode "{mode}" in "{text}": expected poll, yield, sleep:US, rt, '
                "rt:US, event or event:US (US a pause in microseconds, 1 to 1000000; event's "
                "longest wait, 0 to 1000000) separated by commas, or none"
            )
    return list(dict.fromkeys(modes))


# Where mpilens-progress places the test strategy's tests (--test-placement): the default first.
TEST_PLACEMENTS = ("even", "seed")


def _add_arguments(sub: argparse.ArgumentParser, family: Family) -> None:
    group = add_study_options(sub, "progress")
    BENCHES.add_option(
        group,
        "--bench",
        f"benchmarks: {BENCHES.listing()} (default all); interrupts runs once, without any help",
    )
    OPS.add_option(group, "--ops", f"nbc collectives: {OPS.listing()} (default all)")
    group.add_argument(
        "--sizes",
        type=_sizes,
        metavar="MIN:MAX",
        help="message sizes, passed on to the program (default: its preset's)",
    )
    group.add_argument(
        "--threads",
        type=_thread_modes,
        default=_thread_modes(DEFAULT_THREADS),
        metavar="LIST",
        help=(
            "modes of the progress thread to measure, separated by commas: poll, "
            "yield, sleep:US, rt, rt:US, event, event:US; none for no thread (default "
            f"{DEFAULT_THREADS})"
        ),
    )
    PLACEMENTS.add_option(
        group,
        "--placement",
        "where the thread runs: shared (not bound: beside its rank's computation) and spare (a "
        "core no rank of the node is bound to; needs bound ranks and a free core), or all "
        "(default all)",
    )
    group.add_argument(
        "--test-placement",
        choices=TEST_PLACEMENTS,
        default=TEST_PLACEMENTS[0],
        help=(
            "where the test strategy's N MPI_Test calls go in the computation: even (inside it, "
            "at k/(N+1)) or seed (seed 002: at its start, evenly, and at its end) (default even)"
        ),
    )
    group.add_argument(
        "--async",
        dest="async_progress",
        action=argparse.BooleanOptionalAction,
        default=True,
        help=(
            "also measure the MPI library's own asynchronous progress (MPICH: "
            "MPIR_CVAR_ASYNC_PROGRESS=1; Intel MPI: I_MPI_ASYNC_PROGRESS=1; Open MPI: "
            "OMPI_MCA_btl_tcp_progress_thread=1, TCP only) (default on)"
        ),
    )
    add_preset_flag(
        group,
        "--overlap",
        "also run mpilens-overlap (sender, receiver) without and with the first thread setting, "
        "for the overlap maps with and without it",
    )
    add_lib_dir(group, PROGRESS_LIBRARY)


@dataclass
class Setting:
    """One progress setting: its name in file names and messages, and the ranks' variables."""

    name: str
    env: Dict[str, str] = field(default_factory=dict)
    thread: Optional[str] = None  # MPILENS_PROGRESS when the setting is libmpilens-progress's

    @property
    def label(self) -> str:
        return f"progress, {self.name}"


def _settings(
    args: argparse.Namespace, flavour: launch.Flavour, library: Path, spare_possible: bool
) -> List[Setting]:
    """The library alone first, then each thread mode in each placement, then async."""
    chosen = [Setting(NONE)]
    placements = [p for p in args.placement if p != "spare" or spare_possible]
    for mode in args.threads:
        for placement in placements:
            value = mode + (",cpu=spare" if placement == "spare" else "")
            chosen.append(
                Setting(
                    f"thread-{mode.replace(':', '')}" + ("-spare" if placement == "spare" else ""),
                    {"LD_PRELOAD": str(library), "MPILENS_PROGRESS": value},
                    value,
                )
            )
    if args.async_progress:
        # The library's own progress thread (launch.Flavour.async_progress_env says which).
        chosen.append(Setting("async", flavour.async_progress_env))
    return chosen


def _spare_possible(args: argparse.Namespace) -> bool:
    """On one node without a launcher of the user's, a spare core needs more cores than ranks;
    elsewhere only the library can tell (it then says so, and the run is not kept)."""
    if args.launcher or launch.in_slurm_allocation():
        return True
    return launch.usable_cpus() > args.np


def _program_args(
    args: argparse.Namespace, family: Family, setting: Setting, output: Path
) -> List[str]:
    """The library alone runs every strategy and the interrupt cost; a setting that brings its own
    progress runs the strategy none only: MPI_Test on top of a thread is not the seed's question."""
    benches = args.bench if setting.name == NONE else [b for b in args.bench if b != "interrupts"]
    words = [
        *family.preset_args(args.preset),
        "--bench",
        ",".join(benches),
        "--ops",
        ",".join(args.ops),
    ]
    if setting.name != NONE:
        words += ["--strategy", "none"]
    if args.sizes:
        words += ["--sizes", args.sizes]
    if setting.name == NONE and args.test_placement != TEST_PLACEMENTS[0]:
        words += ["--test-placement", args.test_placement]
    return words + program_tail(output, args.resume)


def _check_setting(run: results.Run, setting: Setting) -> None:
    """A thread setting must have reached the ranks: a launcher that does not pass LD_PRELOAD on
    measures the library alone under a thread's name."""
    found = run.meta.get("progress_setting")
    library = found.get("library") if isinstance(found, dict) else None
    if setting.thread is not None and not (isinstance(library, dict) and library.get("loaded")):
        raise MpilensError(
            f'"{run.path}" was measured without libmpilens-progress, not under '
            f"MPILENS_PROGRESS={setting.thread}: the ranks did not get LD_PRELOAD (a --launcher "
            "must pass its environment on to them)"
        )


def _keep(run: results.Run, setting: Setting, kept: Dict[str, str]) -> bool:
    """A setting the library could not give (no spare core, no MPI_THREAD_MULTIPLE) measures one
    already measured, under the same label. Said, and its file removed: the study's files must
    hold each setting once (the report refuses two files of one measurement)."""
    label = run.progress_label or ""
    if label not in kept:
        kept[label] = setting.name
        return True
    library = run.meta["progress_setting"].get("library", {})
    reason = library.get("reason") or "the library gave no reason"
    print(
        f"mpilens: {setting.name} ran as {label} ({reason}), which {kept[label]} measured "
        f"already; {run.path.name} is removed",
        file=sys.stderr,
    )
    run.path.unlink()
    return False


class _Study:
    """The runs of one `mpilens progress`, made in order into one directory."""

    def __init__(self, args: argparse.Namespace, launcher: EnvLauncher, outdir: Path) -> None:
        self.args, self.launcher, self.outdir = args, launcher, outdir

    def overlap(self, program: Path, setting: Setting) -> results.Run:
        output = _overlap_output(self.outdir, setting)
        words = [
            *OVERLAP.preset_args(self.args.preset),
            "--bench",
            OVERLAP_BENCHES,
            *program_tail(output, self.args.resume),
        ]
        run = self.launcher.run(program, words, setting.env, output, f"overlap, {setting.name}")
        _check_setting(run, setting)
        return run


def _overlap_setting(settings: Sequence[Setting]) -> Optional[Setting]:
    """The thread the overlap maps are measured with: the first mode, on a spare core if that
    placement is measured."""
    threads = [setting for setting in settings if setting.thread is not None]
    spare = [setting for setting in threads if setting.name.endswith("-spare")]
    return (spare or threads)[0] if threads else None


def _outputs(
    outdir: Path, settings: Sequence[Setting], overlap_with: Sequence[Setting]
) -> List[Path]:
    return [outdir / f"progress-{setting.name}.jsonl" for setting in settings] + [
        _overlap_output(outdir, setting) for setting in overlap_with
    ]


def _overlap_output(outdir: Path, setting: Setting) -> Path:
    return outdir / ("overlap.jsonl" if setting.name == NONE else f"overlap-{setting.name}.jsonl")


def _run(args: argparse.Namespace, family: Family) -> Outcome:
    check_resume(args)
    if args.np < family.min_ranks and set(args.bench) != {"interrupts"}:
        raise MpilensError(f"p2p and nbc need at least {family.min_ranks} ranks; --np is {args.np}")
    overlap = preset_flag(args.overlap, args.preset)
    if overlap and args.np < 2:
        raise MpilensError(
            f"--overlap needs at least 2 ranks (a sender and a receiver); --np is {args.np}"
        )
    flavour = launch.resolve_flavour(args.mpi)
    program = launch.find_program(family.program, flavour, args.bin_dir)
    library = launch.find_library(PROGRESS_LIBRARY, flavour, args.lib_dir, args.bin_dir)
    overlap_program = (
        launch.find_program(OVERLAP.program, flavour, args.bin_dir) if overlap else None
    )
    spare = _spare_possible(args)
    if "spare" in args.placement and args.threads and not spare:
        print(
            f"mpilens: no spare core: {args.np} ranks on {launch.usable_cpus()} cores, so the "
            "thread shares its rank's core (the seed's shared-core case); the spare placement "
            "is not measured",
            file=sys.stderr,
        )
    settings = _settings(args, flavour, library, spare)
    thread = _overlap_setting(settings)
    overlap_with = ([settings[0]] + ([thread] if thread else [])) if overlap_program else []
    outdir = output_dir(args.output, flavour)
    for output in _outputs(outdir, settings, overlap_with):
        check_new(output, args.resume)
    launcher = EnvLauncher(args, flavour)
    launcher.check(program, outdir)

    study = _Study(args, launcher, outdir)
    runs: List[results.Run] = []
    kept: Dict[str, str] = {}
    for setting in settings:
        if setting.name != NONE and set(args.bench) <= {"interrupts"}:
            break  # interrupts is measured once, without any help
        output = outdir / f"progress-{setting.name}.jsonl"
        run = launcher.run(
            program,
            _program_args(args, family, setting, output),
            setting.env,
            output,
            setting.label,
        )
        _check_setting(run, setting)
        if _keep(run, setting, kept):
            runs.append(run)
    if overlap_program is not None:
        runs += [study.overlap(overlap_program, setting) for setting in overlap_with]
    return Outcome(runs, outdir, results=outdir)


# The program's presets (it has no full one: full measures longer per point).
PRESETS = {
    "quick": ["--preset", "quick"],
    "default": ["--preset", "default"],
    "full": ["--preset", "default", "--budget", "2s"],
}

FAMILY = study_family(
    "progress",
    PROGRAM,
    "What does progression cost, and what helps? Overhead of non-blocking messages and "
    "collectives with the MPI library alone, with MPI_Test strategies, under "
    "libmpilens-progress's thread in each mode and placement and with the library's own "
    "asynchronous progress, and the cost of timer interrupts (seed 002)",
    analysis,
    plots,
    Command(
        _add_arguments,
        _run,
        description=(
            f"Run {PROGRAM} with the MPI library alone (no progress help, then MPI_Test "
            "strategies), under libmpilens-progress's thread in each --threads mode and "
            "--placement, and with the MPI library's own asynchronous progress; "
            "optionally mpilens-overlap without and with the thread; write a table, a "
            "diagnosis and DIR/report.html (seed 002)."
        ),
    ),
    presets=PRESETS,
    verdict=progress_costs.verdict,
    symptoms=progress_costs.symptoms,
)
