"""The `mpilens` command: every command of the families in the registry (families/), then the
commands of the whole tool: run the suite, report and compare results, print the version."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Callable, NoReturn, Optional, Sequence, Tuple

from . import (
    __version__,
    export,
    families,
    launch,
    packaging_files,
    report,
    results,
    tune,
    tune_report,
)
from .cli_common import add_launch_options, ensure_writable
from .errors import MpilensError
from .family import Command, Family, Outcome
from .launch import Interrupted, stop_signals
from .program_command import measure
from .safe_names import printable

Handler = Callable[[argparse.Namespace], Optional[Outcome]]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, like every other mpilens error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f'mpilens: error: {message} (see "{self.prog} --help")\n')


def _bound(command: Command, family: Family) -> Handler:
    return lambda args: command.run(args, family)


def reference() -> str:
    """Where the command's reference (cli.md) is: the checkout's docs/, or where the package
    installed it (packaging_files.DOC_DIR under the environment's prefix)."""
    found = packaging_files.installed_docs("cli.md", (sys.prefix, sys.base_prefix))
    return str(found) if found else "docs/cli.md of the mpilens source"


def epilog(where: str) -> str:
    flavours = ", ".join(f.value for f in launch.Flavour)
    return (
        f"MPI flavours (--mpi of the commands that run programs): {flavours}, auto. "
        f"Reference: {where}. Run 'mpilens COMMAND --help' for the options of a command."
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mpilens",
        description=(
            "Measure what MPI does on this machine: run the mpilens "
            "programs, then report and compare their results."
        ),
        epilog=epilog(reference()),
    )
    parser.add_argument("--version", action="version", version=f"mpilens {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for family in families.FAMILIES.values():
        for command in family.commands:
            sub = commands.add_parser(
                command.name_in(family),
                help=command.help_in(family),
                description=command.description_in(family),
                usage=command.usage,
            )
            command.add_arguments(sub, family)
            sub.set_defaults(handler=_bound(command, family))
    suite = families.suite_families()
    sub = commands.add_parser(
        "suite",
        help=(
            "run every family (" + ", ".join(f.name for f in suite) + ") into one "
            "directory and write one report"
        ),
        description="Run every family in turn into one directory, then write one report.",
    )
    add_launch_options(sub, "quick")
    sub.set_defaults(handler=cmd_suite)
    sub = commands.add_parser(
        "report",
        help="write the HTML report of existing results",
        description="Write report.html for a results directory or file.",
    )
    sub.add_argument("results", metavar="DIR", help="results directory (or one .jsonl file)")
    sub.add_argument(
        "--output", metavar="DIR2", help="where to write report.html and plots/ (default: DIR)"
    )
    sub.set_defaults(handler=cmd_report)
    sub = commands.add_parser(
        "compare",
        help="compare two results directories side by side",
        description="Write an HTML page comparing two sets of results.",
    )
    sub.add_argument("results_a", metavar="DIR_A")
    sub.add_argument("results_b", metavar="DIR_B")
    sub.add_argument(
        "--labels", metavar="A,B", help="names for the two sides (default: the directory names)"
    )
    sub.add_argument(
        "--output",
        metavar="DIR",
        help="write DIR/compare.html (default: DIR_A/compare-<name of DIR_B>.html)",
    )
    sub.set_defaults(handler=cmd_compare)
    sub = commands.add_parser(
        "export",
        help="write the points of results as tables (CSV or JSON), one file per family",
        description=(
            "Write the points of the results in PATH as one table per family, for a spreadsheet "
            "or pandas: a row per point; columns for its file, place and run, its parameters "
            "and statistics (units in the CSV header), and whether the report takes it as "
            "valid. Prints each file written and its number of rows."
        ),
    )
    sub.add_argument(
        "results",
        metavar="PATH",
        help="a results directory (its *.jsonl files, as mpilens report reads them) or one file",
    )
    sub.add_argument(
        "--format",
        choices=export.FORMATS,
        default="csv",
        help=(
            "csv: <family>.csv, units in the header; json: <family>.json, the rows with the "
            "units and each file's metadata (default csv)"
        ),
    )
    sub.add_argument(
        "--output",
        metavar="DIR_OR_FILE",
        help=(
            f"the directory to write into (default: PATH's directory/{export.DIRECTORY}); or, "
            "when one family is exported, the file to write (a name ending in .csv or .json)"
        ),
    )
    sub.add_argument(
        "--family",
        metavar="F",
        help="export the points of family F only (default: every family in PATH)",
    )
    sub.set_defaults(handler=cmd_export)
    sub = commands.add_parser(
        "tune", help=tune.HELP, description=tune.DESCRIPTION, usage=tune.USAGE
    )
    tune.add_arguments(sub)
    sub.set_defaults(handler=tune.run)
    sub = commands.add_parser("version", help="print the mpilens version")
    sub.set_defaults(handler=cmd_version)
    return parser


def cmd_suite(args: argparse.Namespace) -> Outcome:
    return measure(args, families.suite_families(), name_directory=True, tables=False)


def _results_home(path: Path) -> Path:
    """The directory a results argument stands for: itself, or the directory of a file."""
    return path.parent if path.is_file() else path


def cmd_report(args: argparse.Namespace) -> None:
    source = Path(args.results)
    tunings = tune_report.find_tune_files(source)
    # A directory of `mpilens tune` holds its tune.json and no results file of its own.
    runs = [] if tunings and not list(source.glob("*.jsonl")) else results.load_any(source)
    outdir = Path(args.output) if args.output else _results_home(source)
    ensure_writable(outdir)
    sections = [tune_report.tune_section(path) for path in tunings]
    print(report.write_report(runs, outdir, sections))


def _labels(text: Optional[str], a: Path, b: Path) -> Tuple[str, str]:
    if text is None:
        name_a, name_b = a.resolve().name, b.resolve().name
        return (name_a, name_b) if name_a != name_b else (str(a), str(b))
    labels = [printable(label.strip()) for label in text.split(",")]
    if len(labels) != 2 or not all(labels):
        raise MpilensError(
            f'invalid --labels "{text}": expected two names separated by a '
            "comma, such as before,after"
        )
    return labels[0], labels[1]


def cmd_compare(args: argparse.Namespace) -> None:
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


def cmd_export(args: argparse.Namespace) -> None:
    lines, notes = export.export(Path(args.results), args.format, args.output, args.family)
    for note in notes:
        print(note, file=sys.stderr)
    for line in lines:
        print(line)


def cmd_version(args: argparse.Namespace) -> None:
    print(f"mpilens {__version__}")


def _print_tables(runs: Sequence[results.Run]) -> None:
    for run in report.grouped(runs):
        family = families.FAMILIES.get(run.family)
        if family is not None and family.text_table is not None:
            for line in family.text_table(run):
                print(line)


def _report(outcome: Outcome) -> None:
    """Write the report of what a command measured or read, and print its tables, findings, notes
    and where the results and the report are (the report last)."""
    page = report.write_report(outcome.runs, outcome.outdir)
    if outcome.tables:
        _print_tables(outcome.runs)
    for line in [*report.findings(outcome.runs), *outcome.notes]:
        print(line)
    if outcome.results is not None:
        print(f"results: {outcome.results}")
    print(f"report: {page}")
    if outcome.failure is not None:
        raise MpilensError(outcome.failure)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    try:
        with stop_signals():
            args = parser.parse_args(argv)
            args.argv = list(sys.argv[1:] if argv is None else argv)
            if getattr(args, "launcher", None):
                # What the user typed is checked before what the machine has (a build, a library).
                launch.launcher_words(args.launcher)
            outcome = args.handler(args)
            if outcome is not None:
                _report(outcome)
        return 0
    except MpilensError as error:
        print(f"mpilens: error: {error}", file=sys.stderr)
        return 2
    except Interrupted as interrupt:
        name = signal.Signals(interrupt.signum).name
        print(f"mpilens: interrupted by {name}", file=sys.stderr)
        return 128 + interrupt.signum
    except KeyboardInterrupt:
        print("mpilens: interrupted", file=sys.stderr)
        return 130
