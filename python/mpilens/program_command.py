"""The command of a family that is one run of its program per rank count, with the launch
options and the family's own options passed on (sanity, overlap, coll); `mpilens suite` runs
every such family the same way, one after the other."""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Sequence, Tuple

from . import launch, results
from .cli_common import (
    add_launch_options,
    check_new,
    check_resume,
    ensure_writable,
    output_dir,
    program_tail,
    rank_list,
    warn_if_oversubscribed,
)
from .errors import MpilensError
from .family import Command, Family, Outcome
from .progress import Progress


@dataclass
class Job:
    family: Family
    command: List[str]
    output: Path
    ranks: int

    @property
    def label(self) -> str:
        """What the progress line names: the family, and the rank count in a series."""
        return (
            f"{self.family.name} ({self.ranks} ranks)"
            if self.family.np_series
            else self.family.name
        )


def _checked(validator: Callable[[str], str]) -> Callable[[str], str]:
    """An option's validator as an argparse type, so its errors read like any usage error."""

    def convert(text: str) -> str:
        try:
            return validator(text)
        except MpilensError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return convert


def add_family_options(parser: argparse.ArgumentParser, family: Family) -> None:
    if not family.options:
        return
    group = parser.add_argument_group(f"{family.name} options (passed on to {family.program})")
    for option in family.options:
        if option.validator is None:
            group.add_argument(option.name, dest=option.dest, help=option.help, action="store_true")
        else:
            group.add_argument(
                option.name,
                dest=option.dest,
                metavar=option.metavar,
                help=option.help,
                type=_checked(option.validator),
            )


def family_option_args(family: Family, args: argparse.Namespace) -> List[str]:
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


def _prepare(args: argparse.Namespace, chosen: Sequence[Family]) -> Tuple[Path, List[Job]]:
    """Check every option, program and launcher, and create the output directory.

    Nothing is launched before all of this succeeded, so a typo never costs half a suite.
    """
    check_resume(args)
    fewest = min(rank_list(args))
    for family in chosen:
        if fewest < family.min_ranks:
            raise MpilensError(
                f"{family.name} needs at least {family.min_ranks} ranks; --np is {fewest}"
            )
    flavour = launch.resolve_flavour(args.mpi)
    outdir = output_dir(args.output, flavour)
    jobs = []
    for family in chosen:
        program = launch.find_program(family.program, flavour, args.bin_dir)
        for ranks in rank_list(args):
            output = outdir / family.output_name(ranks)
            check_new(output, args.resume)
            program_args = (
                family.preset_args(args.preset)
                + family_option_args(family, args)
                + program_tail(output, args.resume)
            )
            command = launch.build_command(
                flavour, ranks, program, program_args, launcher=args.launcher, nodes=args.nodes
            )
            launch.check_launcher(command, None if args.launcher else flavour)
            jobs.append(Job(family, command, output, ranks))
    ensure_writable(outdir)
    return outdir, jobs


def measure(
    args: argparse.Namespace, chosen: Sequence[Family], name_directory: bool, tables: bool
) -> Outcome:
    """Run the chosen families; their report names the directory, or the one file written when
    name_directory is False."""
    outdir, jobs = _prepare(args, chosen)
    warn_if_oversubscribed(args)
    for job in jobs:
        print(f"mpilens: running {shlex.join(job.command)}", file=sys.stderr, flush=True)
        launch.run(job.command, job.output, Progress(job.label))
    runs = [results.load(job.output) for job in jobs]
    named = outdir if name_directory or len(jobs) > 1 else jobs[0].output
    return Outcome(runs, outdir, results=named, tables=tables)


def _add_arguments(parser: argparse.ArgumentParser, family: Family) -> None:
    add_launch_options(
        parser,
        "default",
        series=family if family.np_series else None,
        presets=list(family.presets),
    )
    add_family_options(parser, family)


def _run(args: argparse.Namespace, family: Family) -> Outcome:
    return measure(args, [family], name_directory=False, tables=True)


COMMAND = Command(_add_arguments, _run)
