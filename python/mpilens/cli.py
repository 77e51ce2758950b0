"""The `mpilens` command: run measurement families, report and compare their results."""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable, List, NoReturn, Optional, Sequence, Tuple

from . import __version__, families, launch, report, results
from .errors import MpilensError
from .progress import Progress

DEFAULT_RANKS = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, like every other mpilens error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f'mpilens: error: {message} (see "{self.prog} --help")\n')


@dataclass
class Job:
    family: families.Family
    command: List[str]
    output: Path


def _rank_count(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f'invalid number of ranks "{text}": expected an integer of at least 1')
    return int(text)


def _add_launch_options(parser: argparse.ArgumentParser, default_preset: str) -> None:
    group = parser.add_argument_group("launch options")
    group.add_argument("--np", type=_rank_count, default=DEFAULT_RANKS, metavar="N",
                       help=f"number of MPI ranks (default {DEFAULT_RANKS})")
    group.add_argument("--mpi", choices=[f.value for f in launch.Flavour] + [launch.AUTO],
                       default=launch.AUTO,
                       help="MPI flavour the programs were built for (default auto: the only "
                            "one built, else Open MPI, else what mpiexec is)")
    group.add_argument("--launcher", metavar="CMD",
                       help='launcher command prefix, e.g. "srun --mpi=pmix -n {np}"; {np} '
                            "becomes the rank count, else -n N is appended")
    group.add_argument("--bin-dir", metavar="DIR",
                       help="directory holding the mpilens programs (default: MPILENS_BIN_DIR, "
                            "then build/<flavour>/bin of the checkout, then PATH)")
    group.add_argument("--output", metavar="DIR",
                       help="results directory (default results/<YYYYmmdd-HHMMSS>-<flavour>/)")
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
        group.add_argument(option.name, dest=option.dest, metavar=option.metavar,
                           help=option.help, type=_checked(option))


def _family_option_args(family: families.Family, args: argparse.Namespace) -> List[str]:
    """The family options given on the command line; `suite` has none, so programs run with
    their defaults there."""
    given = [(option.name, getattr(args, option.dest, None)) for option in family.options]
    return [word for name, value in given if value is not None for word in (name, value)]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mpilens",
                     description="Measure what MPI does on this machine: run the mpilens "
                                 "programs, then report and compare their results.",
                     epilog="Reference: docs/cli.md. Run 'mpilens COMMAND --help' for the "
                            "options of a command.")
    parser.add_argument("--version", action="version", version=f"mpilens {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for family in families.FAMILIES.values():
        sub = commands.add_parser(family.name, help=family.description,
                                  description=f"Run {family.program}: {family.description}.")
        _add_launch_options(sub, "default")
        _add_family_options(sub, family)
        sub.set_defaults(handler=cmd_family, family=family.name)
    sub = commands.add_parser(
        "suite", help="run every family (" + ", ".join(families.FAMILIES) + ") into one "
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


def _prepare(args: argparse.Namespace,
             chosen: Sequence[families.Family]) -> Tuple[Path, List[Job]]:
    """Check every option, program and launcher, and create the output directory.

    Nothing is launched before all of this succeeded, so a typo never costs half a suite.
    """
    if args.resume and not args.output:
        raise MpilensError("--resume needs --output DIR: the directory of the run to complete")
    flavour = launch.resolve_flavour(args.mpi)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    outdir = Path(args.output) if args.output else Path("results") / f"{stamp}-{flavour.value}"
    jobs = []
    for family in chosen:
        program = launch.find_program(family.program, flavour, args.bin_dir)
        output = outdir / f"{family.name}.jsonl"
        if output.exists() and not args.resume:
            raise MpilensError(f'"{output}" already exists; add --resume to complete it, or '
                               "choose another --output")
        program_args = family.preset_args(args.preset) + _family_option_args(family, args) + [
            "--output", str(output), "--progress", "off"] + (["--resume"] if args.resume else [])
        command = launch.build_command(flavour, args.np, program, program_args,
                                       launcher=args.launcher)
        launch.check_launcher(command, None if args.launcher else flavour)
        jobs.append(Job(family, command, output))
    ensure_writable(outdir)
    return outdir, jobs


def _warn_if_oversubscribed(args: argparse.Namespace) -> None:
    """Ranks sharing cores change what is measured; say so before the run, not after it."""
    if args.launcher or launch.in_slurm_allocation():
        return  # a cluster launcher places ranks on their own nodes and cores
    cpus = launch.usable_cpus()
    if args.np > cpus:
        print(f"mpilens: warning: {args.np} ranks on {cpus} cores: ranks share cores, so computation "
              "competes with ranks waiting in MPI (and Open MPI runs in its oversubscribed mode); "
              "ratios then describe that contention, and benchmarks involving every rank run much "
              "slower", file=sys.stderr)


def _run_jobs(jobs: Sequence[Job]) -> List[results.Run]:
    for job in jobs:
        print(f"mpilens: running {shlex.join(job.command)}", file=sys.stderr, flush=True)
        launch.run(job.command, job.output, Progress(job.family.name))
    return [results.load(job.output) for job in jobs]


def _print_findings(runs: Sequence[results.Run]) -> None:
    for sentence in report.findings(runs):
        print(sentence)


def _measure_and_report(args: argparse.Namespace, chosen: Sequence[families.Family],
                        name_directory: bool) -> None:
    """Run the chosen families, write the report, print the findings, then where the results
    (the directory, or the one family's file) and the report are."""
    outdir, jobs = _prepare(args, chosen)
    _warn_if_oversubscribed(args)
    runs = _run_jobs(jobs)
    page = report.write_report(runs, outdir)
    _print_findings(runs)
    print(f"results: {outdir if name_directory else jobs[0].output}")
    print(f"report: {page}")


def cmd_family(args: argparse.Namespace) -> int:
    _measure_and_report(args, [families.get(args.family)], name_directory=False)
    return 0


def cmd_suite(args: argparse.Namespace) -> int:
    _measure_and_report(args, list(families.FAMILIES.values()), name_directory=True)
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
        return args.handler(args)
    except MpilensError as error:
        print(f"mpilens: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mpilens: interrupted", file=sys.stderr)
        return 130
