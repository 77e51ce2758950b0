"""The monitor family (seed 004): who sends how much to whom, seen from inside the program.

Its commands: `mpilens monitor`, which runs the user's program under libmpilens-monitor, and
`mpilens matrix`, which renders and exports the matrices that monitoring wrote."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Dict, List, Sequence

from .. import launch, matrices, results
from ..analysis import monitor as analysis
from ..cli_common import (
    EnvLauncher,
    add_launch_options,
    add_lib_dir,
    ensure_writable,
    output_dir,
)
from ..errors import MpilensError
from ..family import Command, Family, Outcome
from ..plots import monitor as plots

MONITOR_LIBRARY = "mpilens-monitor"
MONITOR_PREFIX = "monitor"
# Variables of the user's environment meant for the monitoring library; passed on to the ranks,
# since Open MPI's mpirun passes on only what it is told to.
MONITOR_SETTINGS = "MPILENS_MONITOR_"


# --- mpilens monitor -----------------------------------------------------------------------------


def _add_monitor_arguments(sub: argparse.ArgumentParser, family: Family) -> None:
    add_launch_options(
        sub,
        None,
        "bin directory of an mpilens installation: the library is "
        "looked for in DIR/../lib and DIR/../lib64",
    )
    add_lib_dir(sub, MONITOR_LIBRARY)
    sub.add_argument(
        "program",
        nargs=argparse.REMAINDER,
        metavar="-- PROGRAM [ARGS...]",
        help="the program to monitor and its arguments, after --",
    )


def _program_words(words: Sequence[str]) -> List[str]:
    """PROGRAM and its arguments. argparse keeps the "--" before them in some Python versions and
    drops it in others."""
    words = list(words[1:] if words[:1] == ["--"] else words)
    if not words:
        raise MpilensError(
            'no program to monitor: give it after "--", as in "mpilens monitor '
            '--np 4 -- ./app ARGS"'
        )
    if not launch.is_command(words[0]):
        raise MpilensError(
            f'program "{words[0]}" not found: give the path of an executable, '
            "such as ./app, or a command on PATH"
        )
    return words


def _monitor_env(prefix: Path, library: Path) -> Dict[str, str]:
    """What every rank needs: the library preloaded, where to write; and the user's settings for
    the library, which Open MPI's mpirun would not pass on by itself."""
    settings = {
        name: value for name, value in os.environ.items() if name.startswith(MONITOR_SETTINGS)
    }
    return {**settings, "LD_PRELOAD": str(library), "MPILENS_MONITOR": str(prefix.absolute())}


def _monitor_results(output: Path, flavour: launch.Flavour) -> results.Run:
    """The run the library wrote, or why there is none."""
    if not output.exists():
        raise MpilensError(
            f'the program ended without writing "{output}": the monitoring library never '
            "started in its rank 0 (the program does not call MPI_Init, is linked statically, "
            f"or uses another MPI than {flavour.display_name}; a --launcher must pass "
            "LD_PRELOAD and MPILENS_MONITOR on to the ranks)"
        )
    if output.stat().st_size == 0:
        raise MpilensError(
            f'"{output}" is empty: monitoring started in MPI_Init, but the results '
            "were not written at MPI_Finalize (the program did not reach it, or "
            "rank 0 could not write; see the messages above)"
        )
    return results.load(output)


def _run_monitor(args: argparse.Namespace, family: Family) -> Outcome:
    words = _program_words(args.program)
    flavour = launch.resolve_flavour(args.mpi)
    library = launch.find_library(MONITOR_LIBRARY, flavour, args.lib_dir, args.bin_dir)
    outdir = output_dir(args.output, flavour)
    output = outdir / f"{MONITOR_PREFIX}.jsonl"
    if output.exists():
        raise MpilensError(f'"{output}" already exists; choose another --output')
    env = _monitor_env(outdir / MONITOR_PREFIX, library)
    launcher = EnvLauncher(args, flavour)
    command = launcher.command(words[0], words[1:], env)
    launch.check_launcher(command, None if args.launcher else flavour)
    ensure_writable(outdir)
    launch.run(command, output, env=launcher.announce(command, env))
    return Outcome([_monitor_results(output, flavour)], outdir, results=output)


MONITOR_COMMAND = Command(
    _add_monitor_arguments,
    _run_monitor,
    usage="mpilens monitor [options] -- PROGRAM [ARGS...]",
    description=(
        f"Run PROGRAM with lib{MONITOR_LIBRARY}.so preloaded in every rank and "
        f"MPILENS_MONITOR=DIR/{MONITOR_PREFIX}: who sends how many messages and bytes to "
        f"whom, in DIR/{MONITOR_PREFIX}.jsonl and DIR/report.html."
    ),
)


# --- mpilens matrix ------------------------------------------------------------------------------


def _format_list(text: str) -> List[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(name in matrices.FORMATS for name in names):
        raise argparse.ArgumentTypeError(
            f'invalid format list "{text}": expected names '
            "separated by commas among " + ", ".join(matrices.FORMATS)
        )
    return names


def _add_matrix_arguments(sub: argparse.ArgumentParser, family: Family) -> None:
    sub.add_argument(
        "path",
        metavar="PATH",
        help=(
            "a monitor results file or directory, or a PREFIX of PREFIX.jsonl, "
            "of rootflush files PREFIX_counts.<rank>.prof and "
            "PREFIX_sizes.<rank>.prof, or of flush files PREFIX.<rank>.prof"
        ),
    )
    sub.add_argument(
        "--kind",
        choices=matrices.KIND_CHOICES,
        default="all",
        help="which kind of communication (default all)",
    )
    sub.add_argument(
        "--export",
        metavar="DIR",
        help=(
            "write <kind>.csv, <kind>_counts.mat, <kind>_bytes.mat, "
            "<kind>_counts.mtx and <kind>_bytes.mtx into DIR"
        ),
    )
    sub.add_argument(
        "--format",
        type=_format_list,
        metavar="LIST",
        help=(
            "exports to write, separated by commas: "
            + ", ".join(matrices.FORMATS)
            + " (default all, without mat above "
            f"{matrices.DENSE_DEFAULT_RANKS} ranks; needs --export). csv and mtx "
            "(Matrix Market) hold the pairs that communicate; mat is dense, P x P "
            "values (at 65536 ranks, 8 GiB a file at least): at scale, use mtx"
        ),
    )
    sub.add_argument(
        "--output",
        metavar="DIR",
        help="where to write report.html and plots/ (default: PATH's directory)",
    )


def _run_matrix(args: argparse.Namespace, family: Family) -> Outcome:
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
            print(
                f"mpilens: note: no dense .mat export above {matrices.DENSE_DEFAULT_RANKS} "
                "ranks unless asked (--format mat): each file holds P x P values",
                file=sys.stderr,
            )
    return Outcome([run], outdir, tables=False, notes=[f"exported: {path}" for path in written])


MATRIX_COMMAND = Command(
    _add_matrix_arguments,
    _run_matrix,
    name="matrix",
    help=(
        "render and export communication matrices: monitor results, or the files of "
        "MPI_M_rootflush or MPI_M_flush"
    ),
    description=(
        "Render the communication matrices in PATH into report.html, print their "
        "summary, and export them."
    ),
)


FAMILY = Family(
    "monitor",
    "libmpilens-monitor",
    "run PROGRAM under the monitoring library: who sends how many messages and bytes to whom, "
    "per kind of communication (seed 004)",
    plots.render,
    analysis.diagnose,
    analysis.compare,
    commands=(MONITOR_COMMAND, MATRIX_COMMAND),
    presets={},
    in_suite=False,
)
