"""The `mpilens` command: run measurement families, report and compare their results."""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Dict, List, Mapping, NoReturn, Optional, Sequence, Tuple

from . import __version__, families, launch, matrices, report, results
from .analysis import piggyback
from .errors import MpilensError
from .progress import Progress
from .units import format_size, parse_size

DEFAULT_RANKS = 2
DEFAULT_RANK_COUNTS = "2,4"
MONITOR_LIBRARY = "mpilens-monitor"
MONITOR_PREFIX = "monitor"
# Variables of the user's environment meant for the monitoring library; passed on to the ranks,
# since Open MPI's mpirun passes on only what it is told to.
MONITOR_SETTINGS = "MPILENS_MONITOR_"
KIND_CHOICES = (*matrices.KINDS, "all")
PIGGYBACK_LIBRARY = "mpilens-piggyback"
# Every run under the layer fills its pbs with the bytes driver: the cost of carrying them.
PIGGYBACK_DRIVER = "bytes"
# The layer's variables: the command sets these three for every run; the user's other settings
# of the layer (MPILENS_PB_AUTO_FILE, ...) are passed on, as Open MPI's mpirun would not.
PIGGYBACK_SETTINGS = "MPILENS_PB_"
PIGGYBACK_OWN = ("MPILENS_PB_METHOD", "MPILENS_PB_SIZE", "MPILENS_PB_DRIVER")
PIGGYBACK_PB_SIZES = ",".join(str(size) for size in piggyback.PB_SIZES)
PIGGYBACK_APPS_FILE = "piggyback-apps.jsonl"
APP_SCALE_MAX = 100.0


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, like every other mpilens error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f'mpilens: error: {message} (see "{self.prog} --help")\n')


@dataclass
class Job:
    family: families.Family
    command: List[str]
    output: Path
    ranks: int

    @property
    def label(self) -> str:
        """What the progress line names: the family, and the rank count in a series."""
        return f"{self.family.name} ({self.ranks} ranks)" if self.family.np_series \
            else self.family.name


def _rank_count(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f'invalid number of ranks "{text}": expected an integer of at least 1')
    return int(text)


def _rank_counts(family: families.Family) -> Callable[[str], List[int]]:
    """--np of a family measured over rank counts: a list such as 2,4,8."""
    def convert(text: str) -> List[int]:
        words = [word.strip() for word in text.split(",")]
        if not all(word.isdigit() for word in words):
            raise argparse.ArgumentTypeError(
                f'invalid rank counts "{text}": expected integers separated by commas, such as '
                "2,4,8")
        counts = [int(word) for word in words]
        for count in counts:
            if count < family.min_ranks:
                raise argparse.ArgumentTypeError(
                    f'invalid rank counts "{text}": {family.name} needs at least '
                    f"{family.min_ranks} ranks, not {count}")
            if counts.count(count) > 1:
                raise argparse.ArgumentTypeError(
                    f'invalid rank counts "{text}": {count} is given twice')
        return counts

    return convert


BIN_DIR_HELP = ("directory holding the mpilens programs (default: MPILENS_BIN_DIR, then "
                "build/<flavour>/bin of the checkout, then PATH)")


def _add_launch_options(parser: argparse.ArgumentParser, default_preset: Optional[str],
                        bin_dir_help: str = BIN_DIR_HELP,
                        series: Optional[families.Family] = None) -> None:
    """The options of a command that launches ranks; --preset and --resume only for commands
    that run an mpilens program (default_preset given); --np a list for a series family."""
    group = parser.add_argument_group("launch options")
    if series is None:
        group.add_argument("--np", type=_rank_count, default=DEFAULT_RANKS, metavar="N",
                           help=f"number of MPI ranks (default {DEFAULT_RANKS})")
    else:
        group.add_argument("--np", type=_rank_counts(series), default=DEFAULT_RANK_COUNTS,
                           metavar="LIST",
                           help="numbers of MPI ranks separated by commas, one run each, each at "
                                f"least {series.min_ranks} (default {DEFAULT_RANK_COUNTS})")
    group.add_argument("--mpi", choices=[f.value for f in launch.Flavour] + [launch.AUTO],
                       default=launch.AUTO,
                       help="MPI flavour the programs were built for (default auto: the only "
                            "one built, else Open MPI, else what mpiexec is)")
    group.add_argument("--launcher", metavar="CMD",
                       help='launcher command prefix, e.g. "srun --mpi=pmix -n {np}"; {np} '
                            "becomes the rank count, else -n N is appended")
    group.add_argument("--bin-dir", metavar="DIR", help=bin_dir_help)
    group.add_argument("--output", metavar="DIR",
                       help="results directory (default results/<YYYYmmdd-HHMMSS>-<flavour>/)")
    if default_preset is None:
        return
    group.add_argument("--preset", choices=families.PRESETS, default=default_preset,
                       help=f"how thorough the measurement is (default: {default_preset})")
    group.add_argument("--resume", action="store_true",
                       help="complete the interrupted run in --output DIR")


def _checked(option: families.FamilyOption) -> Callable[[str], str]:
    """The option's validator as an argparse type, so its errors read like any usage error."""
    def convert(text: str) -> str:
        try:
            return option.validator(text)
        except MpilensError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return convert


def _add_family_options(parser: argparse.ArgumentParser, family: families.Family) -> None:
    if not family.options:
        return
    group = parser.add_argument_group(f"{family.name} options (passed on to {family.program})")
    for option in family.options:
        if option.flag:
            group.add_argument(option.name, dest=option.dest, help=option.help,
                               action="store_true")
        else:
            group.add_argument(option.name, dest=option.dest, metavar=option.metavar,
                               help=option.help, type=_checked(option))


def _family_option_args(family: families.Family, args: argparse.Namespace) -> List[str]:
    """The family options given on the command line; `suite` has none, so programs run with
    their defaults there."""
    words: List[str] = []
    for option in family.options:
        value = getattr(args, option.dest, None)
        if option.flag and value:
            words.append(option.name)
        elif not option.flag and value is not None:
            words += [option.name, value]
    return words


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mpilens",
                     description="Measure what MPI does on this machine: run the mpilens "
                                 "programs, then report and compare their results.",
                     epilog="Reference: docs/cli.md. Run 'mpilens COMMAND --help' for the "
                            "options of a command.")
    parser.add_argument("--version", action="version", version=f"mpilens {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    suite = families.suite_families()
    for family in suite:
        sub = commands.add_parser(family.name, help=family.description,
                                  description=f"Run {family.program}: {family.description}.")
        _add_launch_options(sub, "default", series=family if family.np_series else None)
        _add_family_options(sub, family)
        sub.set_defaults(handler=cmd_family, family=family.name)
    _add_piggyback_command(commands)
    _add_monitor_command(commands)
    _add_matrix_command(commands)
    sub = commands.add_parser(
        "suite", help="run every family (" + ", ".join(f.name for f in suite) + ") into one "
                      "directory and write one report",
        description="Run every family in turn into one directory, then write one report.")
    _add_launch_options(sub, "quick")
    sub.set_defaults(handler=cmd_suite)
    sub = commands.add_parser("report", help="write the HTML report of existing results",
                              description="Write report.html for a results directory or file.")
    sub.add_argument("results", metavar="DIR", help="results directory (or one .jsonl file)")
    sub.add_argument("--output", metavar="DIR2",
                     help="where to write report.html and plots/ (default: DIR)")
    sub.set_defaults(handler=cmd_report)
    sub = commands.add_parser("compare", help="compare two results directories side by side",
                              description="Write an HTML page comparing two sets of results.")
    sub.add_argument("results_a", metavar="DIR_A")
    sub.add_argument("results_b", metavar="DIR_B")
    sub.add_argument("--labels", metavar="A,B",
                     help="names for the two sides (default: the directory names)")
    sub.add_argument("--output", metavar="DIR",
                     help="write DIR/compare.html (default: DIR_A/compare-<name of DIR_B>.html)")
    sub.set_defaults(handler=cmd_compare)
    sub = commands.add_parser("version", help="print the mpilens version")
    sub.set_defaults(handler=cmd_version)
    return parser


def _add_monitor_command(commands: argparse._SubParsersAction) -> None:
    family = families.get("monitor")
    sub = commands.add_parser(
        "monitor", help=family.description,
        usage="mpilens monitor [options] -- PROGRAM [ARGS...]",
        description=f"Run PROGRAM with lib{MONITOR_LIBRARY}.so preloaded in every rank and "
                    f"MPILENS_MONITOR=DIR/{MONITOR_PREFIX}: who sends how many messages and "
                    f"bytes to whom, in DIR/{MONITOR_PREFIX}.jsonl and DIR/report.html.")
    _add_launch_options(sub, None, "bin directory of an mpilens installation: the library is "
                                   "looked for in DIR/../lib and DIR/../lib64")
    sub.add_argument("--lib-dir", metavar="DIR",
                     help=f"directory holding lib{MONITOR_LIBRARY}.so (default: "
                          "MPILENS_LIB_DIR, then beside --bin-dir or MPILENS_BIN_DIR, then "
                          "build/<flavour>/lib of the checkout, then <prefix>/lib beside a "
                          "<prefix>/bin on PATH)")
    sub.add_argument("program", nargs=argparse.REMAINDER, metavar="-- PROGRAM [ARGS...]",
                     help="the program to monitor and its arguments, after --")
    sub.set_defaults(handler=cmd_monitor)


def _pb_methods(text: str) -> List[str]:
    """--methods of mpilens piggyback: the layer's methods, or all, in the layer's order."""
    names = [name.strip() for name in text.split(",")]
    allowed = (*piggyback.METHODS, "all")
    if not all(names):
        raise argparse.ArgumentTypeError(f'invalid method list "{text}": expected names separated '
                                         "by commas, such as pack-before,separate")
    for name in names:
        if name not in allowed:
            hint = (" (the run without the layer is always made)" if name == piggyback.NONE
                    else "")
            raise argparse.ArgumentTypeError(f'unknown method "{name}"{hint}: choose from '
                                             + ", ".join(allowed))
    chosen = set(piggyback.METHODS) if "all" in names else set(names)
    return [method for method in piggyback.METHODS if method in chosen]


def _pb_sizes(text: str) -> List[int]:
    """--pb-sizes of mpilens piggyback: bytes per message, 0 to 65536, as the layer allows."""
    sizes: List[int] = []
    for word in text.split(","):
        try:
            size: Optional[int] = parse_size(word) if word.strip() else None
        except MpilensError:
            size = None
        if size is None or size > piggyback.PB_SIZE_MAX:
            raise argparse.ArgumentTypeError(
                f'invalid pb size "{word.strip()}" in "{text}": expected numbers of bytes from 0 '
                f"to {piggyback.PB_SIZE_MAX} separated by commas, such as {PIGGYBACK_PB_SIZES}")
        if size not in sizes:
            sizes.append(size)
    return sorted(sizes)


def _app_scale(text: str) -> float:
    try:
        scale = float(text)
    except ValueError:
        scale = math.nan
    if not math.isfinite(scale) or not 0 < scale <= APP_SCALE_MAX:
        raise argparse.ArgumentTypeError(
            f'invalid app scale "{text}": expected a number above 0 and at most '
            f"{APP_SCALE_MAX:g}, such as 0.1 or 2")
    return scale


def _add_piggyback_command(commands: argparse._SubParsersAction) -> None:
    family = families.get("piggyback")
    sub = commands.add_parser(
        "piggyback", help=family.description,
        description=f"Run {family.program} without libmpilens-piggyback, then under each method "
                    f"with a {piggyback.MAIN_PB_SIZE}-byte pb over message sizes and at several pb "
                    "sizes, and the example applications with and without the layer; write the "
                    "threshold of the auto method for this MPI library, a table, a diagnosis and "
                    "DIR/report.html (seed 001).")
    _add_launch_options(sub, "default", "directory holding the mpilens programs (default: "
                                        "MPILENS_BIN_DIR, then build/<flavour>/bin of the "
                                        "checkout, then PATH); the library is looked for in "
                                        "DIR/../lib and DIR/../lib64")
    group = sub.add_argument_group("piggyback options")
    group.add_argument("--methods", type=_pb_methods, default=list(piggyback.METHODS),
                       metavar="LIST", help="methods of the layer, separated by commas: "
                       + ", ".join(piggyback.METHODS) + ", or all (default all)")
    group.add_argument("--pb-sizes", type=_pb_sizes, default=list(piggyback.PB_SIZES),
                       metavar="LIST",
                       help="pb sizes in bytes (0 to 65536) at which latency at "
                            f"{format_size(piggyback.PB_LATENCY_SIZE)} and bandwidth at "
                            f"{format_size(piggyback.PB_BANDWIDTH_SIZE)} are measured "
                            f"(default {PIGGYBACK_PB_SIZES})")
    group.add_argument("--apps", action=argparse.BooleanOptionalAction, default=None,
                       help="also time the example applications (sweep, cg) with and without "
                            "the layer (default: on, off with --preset quick)")
    group.add_argument("--app-scale", type=_app_scale, default=1.0, metavar="X",
                       help="multiply the applications' iterations by X, such as 0.1 for a "
                            "smoke test (default 1: a solve lasts a fraction of a second)")
    group.add_argument("--no-auto-file", dest="auto_file", action="store_false",
                       help="do not write the measured auto threshold into the file the layer "
                            "reads")
    group.add_argument("--lib-dir", metavar="DIR",
                       help=f"directory holding lib{PIGGYBACK_LIBRARY}.so (default: "
                            "MPILENS_LIB_DIR, then beside --bin-dir or MPILENS_BIN_DIR, then "
                            "build/<flavour>/lib of the checkout, then <prefix>/lib beside a "
                            "<prefix>/bin on PATH)")
    sub.set_defaults(handler=cmd_piggyback)


def _format_list(text: str) -> List[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(name in matrices.FORMATS for name in names):
        raise argparse.ArgumentTypeError(f'invalid format list "{text}": expected names '
                                         "separated by commas among " + ", ".join(matrices.FORMATS))
    return names


def _add_matrix_command(commands: argparse._SubParsersAction) -> None:
    sub = commands.add_parser(
        "matrix", help="render and export communication matrices: monitor results, or the "
                       "files of MPI_M_rootflush or MPI_M_flush",
        description="Render the communication matrices in PATH into report.html, print their "
                    "summary, and export them.")
    sub.add_argument("path", metavar="PATH",
                     help="a monitor results file or directory, or a PREFIX of PREFIX.jsonl, "
                          "of rootflush files PREFIX_counts.<rank>.prof and "
                          "PREFIX_sizes.<rank>.prof, or of flush files PREFIX.<rank>.prof")
    sub.add_argument("--kind", choices=KIND_CHOICES, default="all",
                     help="which kind of communication (default all)")
    sub.add_argument("--export", metavar="DIR",
                     help="write <kind>.csv, <kind>_counts.mat, <kind>_bytes.mat, "
                          "<kind>_counts.mtx and <kind>_bytes.mtx into DIR")
    sub.add_argument("--format", type=_format_list, metavar="LIST",
                     help="exports to write, separated by commas: " + ", ".join(matrices.FORMATS)
                          + " (default all; needs --export)")
    sub.add_argument("--output", metavar="DIR",
                     help="where to write report.html and plots/ (default: PATH's directory)")
    sub.set_defaults(handler=cmd_matrix)


def ensure_writable(directory: Path) -> None:
    """Create directory if needed and prove a file can be written there."""
    failure = f'cannot write to output directory "{directory}"'
    if directory.exists() and not directory.is_dir():
        raise MpilensError(f"{failure}: it is not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory, prefix=".mpilens-write-test-"):
            pass
    except OSError as error:
        raise MpilensError(f"{failure}: {error.strerror or error}") from None


def _output_dir(output: Optional[str], flavour: launch.Flavour) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(output) if output else Path("results") / f"{stamp}-{flavour.value}"


def _rank_list(args: argparse.Namespace) -> List[int]:
    """The rank counts to run: a series family's list, or the one --np."""
    return list(args.np) if isinstance(args.np, list) else [args.np]


def _prepare(args: argparse.Namespace,
             chosen: Sequence[families.Family]) -> Tuple[Path, List[Job]]:
    """Check every option, program and launcher, and create the output directory.

    Nothing is launched before all of this succeeded, so a typo never costs half a suite.
    """
    if args.resume and not args.output:
        raise MpilensError("--resume needs --output DIR: the directory of the run to complete")
    fewest = min(_rank_list(args))
    for family in chosen:
        if fewest < family.min_ranks:
            raise MpilensError(f"{family.name} needs at least {family.min_ranks} ranks; --np is "
                               f"{fewest}")
    flavour = launch.resolve_flavour(args.mpi)
    outdir = _output_dir(args.output, flavour)
    jobs = []
    for family in chosen:
        program = launch.find_program(family.program, flavour, args.bin_dir)
        for ranks in _rank_list(args):
            output = outdir / family.output_name(ranks)
            if output.exists() and not args.resume:
                raise MpilensError(f'"{output}" already exists; add --resume to complete it, or '
                                   "choose another --output")
            program_args = family.preset_args(args.preset) + _family_option_args(family, args) + [
                "--output", str(output), "--progress", "off"] + (
                ["--resume"] if args.resume else [])
            command = launch.build_command(flavour, ranks, program, program_args,
                                           launcher=args.launcher)
            launch.check_launcher(command, None if args.launcher else flavour)
            jobs.append(Job(family, command, output, ranks))
    ensure_writable(outdir)
    return outdir, jobs


def _warn_if_oversubscribed(args: argparse.Namespace) -> None:
    """Ranks sharing cores change what is measured; say so before the run, not after it."""
    if args.launcher or launch.in_slurm_allocation():
        return  # a cluster launcher places ranks on their own nodes and cores
    cpus = launch.usable_cpus()
    ranks = max(_rank_list(args))
    if ranks > cpus:
        print(f"mpilens: warning: {ranks} ranks on {cpus} cores: ranks share cores, so computation "
              "competes with ranks waiting in MPI (and Open MPI runs in its oversubscribed mode); "
              "ratios then describe that contention, and benchmarks involving every rank run much "
              "slower", file=sys.stderr)


def _run_jobs(jobs: Sequence[Job]) -> List[results.Run]:
    for job in jobs:
        print(f"mpilens: running {shlex.join(job.command)}", file=sys.stderr, flush=True)
        launch.run(job.command, job.output, Progress(job.label))
    return [results.load(job.output) for job in jobs]


def _print_findings(runs: Sequence[results.Run]) -> None:
    for sentence in report.findings(runs):
        print(sentence)


def _print_tables(runs: Sequence[results.Run]) -> None:
    for run in report.grouped(runs):
        family = families.FAMILIES.get(run.family)
        if family is not None and family.text_table is not None:
            for line in family.text_table(run):
                print(line)


def _measure_and_report(args: argparse.Namespace, chosen: Sequence[families.Family],
                        name_directory: bool, tables: bool = False) -> None:
    """Run the chosen families, write the report, print the findings (after the families' tables
    when asked), then where the results (the directory, or the one file) and the report are."""
    outdir, jobs = _prepare(args, chosen)
    _warn_if_oversubscribed(args)
    runs = _run_jobs(jobs)
    page = report.write_report(runs, outdir)
    if tables:
        _print_tables(runs)
    _print_findings(runs)
    print(f"results: {outdir if name_directory or len(jobs) > 1 else jobs[0].output}")
    print(f"report: {page}")


def cmd_family(args: argparse.Namespace) -> int:
    _measure_and_report(args, [families.get(args.family)], name_directory=False, tables=True)
    return 0


def cmd_suite(args: argparse.Namespace) -> int:
    _measure_and_report(args, families.suite_families(), name_directory=True)
    return 0


def _program_words(words: Sequence[str]) -> List[str]:
    """PROGRAM and its arguments. argparse keeps the "--" before them in some Python versions and
    drops it in others."""
    words = list(words[1:] if words[:1] == ["--"] else words)
    if not words:
        raise MpilensError('no program to monitor: give it after "--", as in "mpilens monitor '
                           '--np 4 -- ./app ARGS"')
    if not launch.is_command(words[0]):
        raise MpilensError(f'program "{words[0]}" not found: give the path of an executable, '
                           "such as ./app, or a command on PATH")
    return words


def _monitor_env(prefix: Path, library: Path) -> Dict[str, str]:
    """What every rank needs: the library preloaded, where to write; and the user's settings for
    the library, which Open MPI's mpirun would not pass on by itself."""
    settings = {name: value for name, value in os.environ.items()
                if name.startswith(MONITOR_SETTINGS)}
    return {**settings, "LD_PRELOAD": str(library), "MPILENS_MONITOR": str(prefix.absolute())}


def _monitor_results(output: Path, flavour: launch.Flavour) -> results.Run:
    """The run the library wrote, or why there is none."""
    if not output.exists():
        raise MpilensError(
            f'the program ended without writing "{output}": the monitoring library never '
            "started in its rank 0 (the program does not call MPI_Init, is linked statically, "
            f"or uses another MPI than {launch.FLAVOUR_NAMES[flavour]}; a --launcher must pass "
            "LD_PRELOAD and MPILENS_MONITOR on to the ranks)")
    if output.stat().st_size == 0:
        raise MpilensError(f'"{output}" is empty: monitoring started in MPI_Init, but the results '
                           "were not written at MPI_Finalize (the program did not reach it, or "
                           "rank 0 could not write; see the messages above)")
    return results.load(output)


def cmd_monitor(args: argparse.Namespace) -> int:
    words = _program_words(args.program)
    flavour = launch.resolve_flavour(args.mpi)
    library = launch.find_library(MONITOR_LIBRARY, flavour, args.lib_dir, args.bin_dir)
    outdir = _output_dir(args.output, flavour)
    output = outdir / f"{MONITOR_PREFIX}.jsonl"
    if output.exists():
        raise MpilensError(f'"{output}" already exists; choose another --output')
    env = _monitor_env(outdir / MONITOR_PREFIX, library)
    command = launch.build_command(flavour, args.np, words[0], words[1:],
                                   launcher=args.launcher, env=env)
    launch.check_launcher(command, None if args.launcher else flavour)
    ensure_writable(outdir)
    own_env = launch.process_env(command[0], flavour, env)
    shown = [f"{name}={value}" for name, value in own_env.items()] + command
    print(f"mpilens: running {shlex.join(shown)}", file=sys.stderr, flush=True)
    launch.run(command, output, env=own_env)
    run = _monitor_results(output, flavour)
    page = report.write_report([run], outdir)
    _print_findings([run])
    print(f"results: {output}")
    print(f"report: {page}")
    return 0


@dataclass
class PiggybackRun:
    """One run of mpilens-piggyback under one layer configuration: the sweep over message sizes
    (bench None), or one benchmark of the pb-size sweep."""

    method: str
    pb_size: int
    bench: Optional[str]
    output: Path
    args: List[str]

    @property
    def label(self) -> str:
        if self.method == piggyback.NONE:
            return "piggyback, no layer"
        if self.bench is None:
            return f"piggyback, {self.method}"
        return f"piggyback, {self.method}, {self.pb_size}-byte pb, {self.bench}"


@dataclass(frozen=True)
class AppRun:
    """One run of an example application: without the layer, or under one method and pb size."""

    app: str
    recv: str
    method: str
    pb_size: int

    @property
    def key(self) -> str:
        return (f"app/app={self.app}/recv={self.recv}/method={self.method}/"
                f"pb_size={self.pb_size}")


def _piggyback_runs(args: argparse.Namespace, outdir: Path) -> List[PiggybackRun]:
    """The program's runs, in the order they are made: the library alone, then each method over
    message sizes (auto last, so that it can use the threshold measured before it), then the
    pb-size sweep. The pb size of the first sweep (4 B) needs no run of its own."""
    repetitions = families.get("piggyback").preset_args(args.preset)

    def program_args(output: Path, *measure: str) -> List[str]:
        return [*repetitions, *measure, "--output", str(output), "--progress", "off"] + (
            ["--resume"] if args.resume else [])

    sizes = families.PIGGYBACK_SIZES[args.preset]
    planned = []
    for method in (piggyback.NONE, *args.methods):
        output = outdir / f"piggyback-{method}.jsonl"
        pb_size = 0 if method == piggyback.NONE else piggyback.MAIN_PB_SIZE
        planned.append(PiggybackRun(method, pb_size, None, output,
                                    program_args(output, "--sizes", sizes)))
    for method in args.methods:
        for pb_size in args.pb_sizes:
            if pb_size == piggyback.MAIN_PB_SIZE:
                continue
            for bench, size in ((piggyback.LATENCY, piggyback.PB_LATENCY_SIZE),
                                (piggyback.BANDWIDTH, piggyback.PB_BANDWIDTH_SIZE)):
                output = outdir / f"piggyback-{method}-pb{pb_size}-{bench}.jsonl"
                planned.append(PiggybackRun(method, pb_size, bench, output, program_args(
                    output, "--sizes", f"{size}:{size}", "--bench", bench, "--recv", "specific")))
    return planned


def _app_runs(args: argparse.Namespace) -> List[AppRun]:
    planned = []
    for app in piggyback.APPS:
        for recv in piggyback.RECVS:
            planned.append(AppRun(app, recv, piggyback.NONE, 0))
            planned += [AppRun(app, recv, method, pb_size) for method in args.methods
                        for pb_size in piggyback.APP_PB_SIZES]
    return planned


def _app_args(args: argparse.Namespace, app: str) -> List[str]:
    _, sizes, iterations = families.PIGGYBACK_APPS[app]
    scaled = max(1, round(iterations[args.preset] * args.app_scale))
    return [*sizes, "--iterations", str(scaled), "--repeat",
            str(families.PIGGYBACK_APP_REPEAT[args.preset])]


def _app_options(args: argparse.Namespace) -> Dict[str, str]:
    """What the applications' file was measured with; --resume must find the same."""
    return {"apps": ",".join(piggyback.APPS), "methods": ",".join(args.methods),
            "pb_sizes": ",".join(str(size) for size in piggyback.APP_PB_SIZES),
            "np": str(args.np),
            **{app: " ".join(_app_args(args, app)) for app in piggyback.APPS}}


def _layer_env(library: Path, method: str, pb_size: int,
               threshold: Optional[int]) -> Dict[str, str]:
    """What every rank needs for one layer configuration; nothing without the layer."""
    if method == piggyback.NONE:
        return {}
    settings = {name: value for name, value in os.environ.items()
                if name.startswith(PIGGYBACK_SETTINGS) and name not in PIGGYBACK_OWN}
    env = {**settings, "LD_PRELOAD": str(library), "MPILENS_PB_METHOD": method,
           "MPILENS_PB_SIZE": str(pb_size), "MPILENS_PB_DRIVER": PIGGYBACK_DRIVER}
    # auto is measured with the threshold just measured, unless the user set one.
    if method == "auto" and threshold is not None and piggyback.AUTO_ENV not in env:
        env[piggyback.AUTO_ENV] = str(threshold)
    return env


class _Launcher:
    """The commands of mpilens piggyback: one launcher and rank count, an environment for each
    layer configuration."""

    def __init__(self, args: argparse.Namespace, flavour: launch.Flavour, library: Path) -> None:
        self.args, self.flavour, self.library = args, flavour, library
        self.threshold: Optional[int] = None

    def command(self, program: Path, program_args: Sequence[str],
                env: Mapping[str, str]) -> List[str]:
        return launch.build_command(self.flavour, self.args.np, program, program_args,
                                    launcher=self.args.launcher, env=env)

    def announce(self, command: Sequence[str], env: Mapping[str, str]) -> Dict[str, str]:
        own_env = launch.process_env(command[0], self.flavour, env)
        shown = [f"{name}={value}" for name, value in own_env.items()] + list(command)
        print(f"mpilens: running {shlex.join(shown)}", file=sys.stderr, flush=True)
        return own_env

    def env(self, method: str, pb_size: int) -> Dict[str, str]:
        return _layer_env(self.library, method, pb_size, self.threshold)


def _check_layer(run: results.Run, planned: PiggybackRun) -> None:
    """The layer the program found must be the one asked for: a launcher that does not pass
    LD_PRELOAD on measures the library alone under a method's name."""
    layer = run.meta.get("piggyback")
    layer = layer if isinstance(layer, dict) else {}
    method, pb_size = layer.get("method"), layer.get("pb_size")
    if (method, pb_size) != (planned.method, planned.pb_size):
        raise MpilensError(
            f'"{planned.output}" was measured with the layer "{method}" and a {pb_size}-byte pb, '
            f'not "{planned.method}" with {planned.pb_size} bytes: the ranks did not get '
            "LD_PRELOAD and the MPILENS_PB_ variables (a --launcher must pass its environment on "
            "to them)")


def _run_piggyback(launcher: _Launcher, program: Path, planned: PiggybackRun) -> results.Run:
    env = launcher.env(planned.method, planned.pb_size)
    command = launcher.command(program, planned.args, env)
    own_env = launcher.announce(command, env)
    launch.run(command, planned.output, Progress(planned.label), env=own_env)
    run = results.load(planned.output)
    _check_layer(run, planned)
    return run


def _app_measurement(text: str, command: Sequence[str]) -> Tuple[str, float, Optional[float]]:
    """checksum, time_s and residual (cg) from what rank 0 of an application printed."""
    found = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] in ("checksum", "time_s", "residual"):
            found[words[0]] = words[1]
    try:
        time_s = float(found["time_s"])
        checksum = found["checksum"]
    except (KeyError, ValueError):
        raise MpilensError(f'"{shlex.join(command)}" did not print its "checksum" and "time_s" '
                           f"lines; it printed: {text.strip()[:300]!r}") from None
    try:
        residual = float(found["residual"]) if "residual" in found else None
    except ValueError:
        residual = None
    return checksum, time_s, residual


def _apps_meta(args: argparse.Namespace, base: results.Run, total: int) -> Dict[str, object]:
    """The applications' meta record. They run with the programs' build, so under the MPI
    library the program without the layer found; they say nothing of the machine themselves."""
    return {"type": "meta", "schema": results.SUPPORTED_SCHEMA, "family": piggyback.FAMILY,
            "program": "mpilens piggyback (example applications)",
            "mpilens_version": __version__,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": ["mpilens", *getattr(args, "argv", [])],
            "mpi": base.meta.get("mpi"), "ranks": args.np, "nodes": base.meta.get("nodes"),
            "hosts": base.meta.get("hosts"), "options": _app_options(args),
            "points_total": total}


def _record_line(record: Mapping[str, object]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _apps_done(path: Path, args: argparse.Namespace) -> set:
    """The applications' points already in the file being resumed."""
    if not path.exists():
        return set()
    run = results.load(path)
    if run.meta.get("options") != _app_options(args):
        raise MpilensError(f'cannot resume "{path}": it was measured with other options (methods, '
                           "rank count or application sizes); run with those, or choose another "
                           "--output")
    return {point["key"] for point in run.points}


def _run_apps(args: argparse.Namespace, launcher: _Launcher, programs: Mapping[str, Path],
              base: results.Run, path: Path, done: set) -> None:
    planned = _app_runs(args)
    progress = Progress("piggyback, applications")
    progress.start(len(done))
    with path.open("a", encoding="utf-8") as out:
        if not done and path.stat().st_size == 0:
            out.write(_record_line(_apps_meta(args, base, len(planned))))
            out.flush()
        finished = len(done)
        for app_run in planned:
            if app_run.key in done:
                continue
            env = launcher.env(app_run.method, app_run.pb_size)
            app_args = _app_args(args, app_run.app) + (
                ["--wildcard"] if app_run.recv == "wildcard" else [])
            command = launcher.command(programs[app_run.app], app_args, env)
            own_env = launcher.announce(command, env)
            checksum, time_s, residual = _app_measurement(
                launch.run_captured(command, env=own_env), command)
            stats: Dict[str, object] = {"time_s": time_s, "checksum": checksum}
            if residual is not None:
                stats["residual"] = residual
            out.write(_record_line({
                "type": "point", "family": piggyback.FAMILY, "bench": piggyback.APP,
                "key": app_run.key,
                "params": {"app": app_run.app, "recv": app_run.recv, "method": app_run.method,
                           "pb_size": app_run.pb_size, "args": app_args},
                "stats": stats}))
            out.flush()
            finished += 1
            progress.update(finished, len(planned))
    progress.finish()


def _auto_threshold(runs: Sequence[results.Run]) -> Optional[piggyback.Threshold]:
    return piggyback.auto_threshold(piggyback.measurements(piggyback.combine(runs)))


def _auto_file_line(args: argparse.Namespace, base: results.Run,
                    threshold: Optional[piggyback.Threshold]) -> str:
    """Write the threshold for this library where the layer reads it; say what was done."""
    path = piggyback.auto_file_path()
    if threshold is None:
        return (f"auto threshold: not measured (it needs {piggyback.AUTO_PACK} and "
                f"{piggyback.AUTO_DATATYPE} in --methods); {path} left as it was")
    what = f"auto threshold: {threshold.size} bytes"
    if not args.auto_file:
        return f"{what} (not written: --no-auto-file)"
    library = piggyback.library_line(base)
    if library is None:
        return f"{what} (not written: the results do not name the MPI library)"
    piggyback.write_auto_file(path, library, threshold.size)
    return f'{what} for "{report.short_library(library)}", written to {path}'


def _check_auto_file() -> None:
    """The auto threshold file must be writable: found out before the runs, not after them."""
    path = piggyback.auto_file_path()
    existing = next(parent for parent in (path, *path.parents) if parent.exists())
    if existing == path and not (path.is_file() and os.access(path, os.W_OK)) or \
            existing != path and not (existing.is_dir() and os.access(existing, os.W_OK)):
        raise MpilensError(f'cannot write the auto threshold file "{path}"; give --no-auto-file, '
                           "or set MPILENS_PB_AUTO_FILE to a writable file")


def cmd_piggyback(args: argparse.Namespace) -> int:
    family = families.get("piggyback")
    if args.resume and not args.output:
        raise MpilensError("--resume needs --output DIR: the directory of the run to complete")
    if args.np < family.min_ranks:
        raise MpilensError(f"piggyback needs at least {family.min_ranks} ranks; --np is "
                           f"{args.np}")
    flavour = launch.resolve_flavour(args.mpi)
    program = launch.find_program(family.program, flavour, args.bin_dir)
    library = launch.find_library(PIGGYBACK_LIBRARY, flavour, args.lib_dir, args.bin_dir)
    apps = families.PIGGYBACK_APPS_ON[args.preset] if args.apps is None else args.apps
    app_programs = {app: launch.find_program(name, flavour, args.bin_dir)
                    for app, (name, _, _) in families.PIGGYBACK_APPS.items()} if apps else {}
    outdir = _output_dir(args.output, flavour)
    planned = _piggyback_runs(args, outdir)
    apps_path = outdir / PIGGYBACK_APPS_FILE
    for output in [run.output for run in planned] + ([apps_path] if apps else []):
        if output.exists() and not args.resume:
            raise MpilensError(f'"{output}" already exists; add --resume to complete it, or '
                               "choose another --output")
    apps_done = _apps_done(apps_path, args) if apps else set()
    if args.auto_file:
        _check_auto_file()
    launcher = _Launcher(args, flavour, library)
    launch.check_launcher(launcher.command(program, [], {}), None if args.launcher else flavour)
    ensure_writable(outdir)
    _warn_if_oversubscribed(args)

    # auto runs with the threshold measured by the runs before it (see _piggyback_runs).
    before = [one for one in planned if one.bench is None and one.method != "auto"]
    runs = [_run_piggyback(launcher, program, one) for one in before]
    threshold = _auto_threshold(runs)
    launcher.threshold = threshold.size if threshold else None
    threshold_line = _auto_file_line(args, runs[0], threshold)
    runs += [_run_piggyback(launcher, program, one) for one in planned if one not in before]
    if apps:
        _run_apps(args, launcher, app_programs, runs[0], apps_path, apps_done)
        runs.append(results.load(apps_path))
    page = report.write_report(runs, outdir)
    _print_tables(runs)
    _print_findings(runs)
    print(threshold_line)
    print(f"results: {outdir}")
    print(f"report: {page}")
    mismatches = piggyback.checksum_mismatches(piggyback.combine(runs))
    if mismatches:
        raise MpilensError("the layer changed the applications' results: "
                           + "; ".join(str(mismatch) for mismatch in mismatches))
    return 0


def cmd_matrix(args: argparse.Namespace) -> int:
    if args.format is not None and args.export is None:
        raise MpilensError("--format needs --export DIR: the directory to write the files to")
    source = Path(args.path)
    run = matrices.only_kind(matrices.load(source), args.kind)
    outdir = Path(args.output) if args.output else (source if source.is_dir() else source.parent)
    ensure_writable(outdir)
    written: List[Path] = []
    if args.export is not None:
        ensure_writable(Path(args.export))
        for traffic in matrices.traffic_of(run).values():
            written += matrices.export(traffic, args.export, args.format or matrices.FORMATS)
    page = report.write_report([run], outdir)
    _print_findings([run])
    for path in written:
        print(f"exported: {path}")
    print(f"report: {page}")
    return 0


def _results_home(path: Path) -> Path:
    """The directory a results argument stands for: itself, or the directory of a file."""
    return path.parent if path.is_file() else path


def cmd_report(args: argparse.Namespace) -> int:
    source = Path(args.results)
    runs = results.load_any(source)
    outdir = Path(args.output) if args.output else _results_home(source)
    ensure_writable(outdir)
    print(report.write_report(runs, outdir))
    return 0


def _labels(text: Optional[str], a: Path, b: Path) -> Tuple[str, str]:
    if text is None:
        name_a, name_b = a.resolve().name, b.resolve().name
        return (name_a, name_b) if name_a != name_b else (str(a), str(b))
    labels = [label.strip() for label in text.split(",")]
    if len(labels) != 2 or not all(labels):
        raise MpilensError(f'invalid --labels "{text}": expected two names separated by a '
                           "comma, such as before,after")
    return labels[0], labels[1]


def cmd_compare(args: argparse.Namespace) -> int:
    source_a, source_b = Path(args.results_a), Path(args.results_b)
    labels = _labels(args.labels, source_a, source_b)
    runs_a, runs_b = results.load_any(source_a), results.load_any(source_b)
    if args.output:
        outdir, filename = Path(args.output), "compare.html"
    else:
        resolved_b = source_b.resolve()
        name_b = resolved_b.stem if resolved_b.is_file() else resolved_b.name
        outdir, filename = _results_home(source_a), f"compare-{name_b}.html"
    ensure_writable(outdir)
    print(report.write_comparison(runs_a, runs_b, outdir, labels, filename))
    return 0


def cmd_version(args: argparse.Namespace) -> int:
    print(f"mpilens {__version__}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        args.argv = list(sys.argv[1:] if argv is None else argv)
        return args.handler(args)
    except MpilensError as error:
        print(f"mpilens: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mpilens: interrupted", file=sys.stderr)
        return 130
