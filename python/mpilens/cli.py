"""The `mpilens` command: run measurement families, report and compare their results.

The piggyback and progress commands live in piggyback_command.py and progress_command.py, the
helpers they share with the other commands in cli_common.py."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, NoReturn, Optional, Sequence, Tuple

from . import __version__, families, launch, matrices, report, results
from .cli_common import (_add_launch_options, _output_dir, _print_findings, _print_tables,
                         _rank_list, _warn_if_oversubscribed, ensure_writable, lib_dir_help)
from .errors import MpilensError
from .map_command import _add_map_command
from .piggyback_command import _add_piggyback_command
from .progress_command import _add_progress_command
from .progress import Progress

MONITOR_LIBRARY = "mpilens-monitor"
MONITOR_PREFIX = "monitor"
# Variables of the user's environment meant for the monitoring library; passed on to the ranks,
# since Open MPI's mpirun passes on only what it is told to.
MONITOR_SETTINGS = "MPILENS_MONITOR_"
KIND_CHOICES = (*matrices.KINDS, "all")


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
    _add_progress_command(commands)
    _add_monitor_command(commands)
    _add_matrix_command(commands)
    _add_map_command(commands)
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
                     help=lib_dir_help(MONITOR_LIBRARY))
    sub.add_argument("program", nargs=argparse.REMAINDER, metavar="-- PROGRAM [ARGS...]",
                     help="the program to monitor and its arguments, after --")
    sub.set_defaults(handler=cmd_monitor)


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
                          + " (default all, without mat above "
                          f"{matrices.DENSE_DEFAULT_RANKS} ranks; needs --export). csv and mtx "
                          "(Matrix Market) hold the pairs that communicate; mat is dense, P x P "
                          "values (at 65536 ranks, 8 GiB a file at least): at scale, use mtx")
    sub.add_argument("--output", metavar="DIR",
                     help="where to write report.html and plots/ (default: PATH's directory)")
    sub.set_defaults(handler=cmd_matrix)


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


def _run_jobs(jobs: Sequence[Job]) -> List[results.Run]:
    for job in jobs:
        print(f"mpilens: running {shlex.join(job.command)}", file=sys.stderr, flush=True)
        launch.run(job.command, job.output, Progress(job.label))
    return [results.load(job.output) for job in jobs]


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
        dense_left_out = False
        for traffic in matrices.traffic_of(run).values():
            formats = args.format or matrices.default_formats(traffic.ranks)
            dense_left_out |= "mat" not in formats
            written += matrices.export(traffic, args.export, formats)
        if dense_left_out and args.format is None:
            print(f"mpilens: note: no dense .mat export above {matrices.DENSE_DEFAULT_RANKS} "
                  "ranks unless asked (--format mat): each file holds P x P values",
                  file=sys.stderr)
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
