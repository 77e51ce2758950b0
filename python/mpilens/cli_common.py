"""What the `mpilens` commands share: the launch options, lists of names as option values, the
output directory, the warning about oversubscribed cores, and launching with variables set in
every rank."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol, Sequence

from . import launch, results
from .errors import MpilensError
from .family import PRESETS, Family
from .progress import Progress

DEFAULT_RANKS = 2
DEFAULT_RANK_COUNTS = "2,4"


def default_ranks() -> int:
    """--np's default: the tasks of the Slurm allocation mpilens runs in, else DEFAULT_RANKS."""
    tasks = os.environ.get("SLURM_NTASKS", "")
    if launch.in_slurm_allocation() and tasks.isdigit() and int(tasks) >= 1:
        return int(tasks)
    return DEFAULT_RANKS


def _count(text: str, what: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f'invalid number of {what} "{text}": expected an integer of at least 1'
        )
    return int(text)


def rank_count(text: str) -> int:
    return _count(text, "ranks")


def node_count(text: str) -> int:
    return _count(text, "nodes")


def rank_counts(family: Family) -> Callable[[str], List[int]]:
    """--np of a family measured over rank counts: a list such as 2,4,8."""

    def convert(text: str) -> List[int]:
        words = [word.strip() for word in text.split(",")]
        if not all(word.isdigit() for word in words):
            raise argparse.ArgumentTypeError(
                f'invalid rank counts "{text}": expected integers separated by commas, such as '
                "2,4,8"
            )
        counts = [int(word) for word in words]
        for count in counts:
            if count < family.min_ranks:
                raise argparse.ArgumentTypeError(
                    f'invalid rank counts "{text}": {family.name} needs at least '
                    f"{family.min_ranks} ranks, not {count}"
                )
            if counts.count(count) > 1:
                raise argparse.ArgumentTypeError(
                    f'invalid rank counts "{text}": {count} is given twice'
                )
        return counts

    return convert


class OptionGroup(Protocol):
    """What options are added to: an argparse parser, or one of its argument groups."""

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action: ...


@dataclass(frozen=True)
class Names:
    """An option whose value is a list of names among allowed, separated by commas, or all.
    what names one of them in messages, example is a list to show, hints a word on a name that
    is not allowed, said with it."""

    allowed: Sequence[str]
    what: str
    example: str
    hints: Mapping[str, str] = field(default_factory=dict)

    def words(self, text: str) -> List[str]:
        """The names as given ("all" is not expanded); MpilensError naming the first wrong one."""
        names = [name.strip() for name in text.split(",")]
        if not all(names):
            raise MpilensError(
                f'invalid {self.what} list "{text}": expected names separated by commas, such as '
                f"{self.example}"
            )
        for name in names:
            if name not in (*self.allowed, "all"):
                hint = f" ({self.hints[name]})" if name in self.hints else ""
                raise MpilensError(
                    f'unknown {self.what} "{name}"{hint}: choose from '
                    + ", ".join((*self.allowed, "all"))
                )
        return names

    def listing(self) -> str:
        """What a help text offers: "a, b, c, or all"."""
        return ", ".join(self.allowed) + ", or all"

    def passed_on(self, text: str) -> str:
        """The list for a program that reads it itself: the names as given, without spaces."""
        return ",".join(self.words(text))

    def chosen(self, text: str) -> List[str]:
        """As an argparse type: the names chosen (every one for "all"), in the order of
        allowed."""
        try:
            names = self.words(text)
        except MpilensError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        return [name for name in self.allowed if name in names or "all" in names]

    def add_option(self, group: OptionGroup, flag: str, help: str) -> None:
        """The option, every name by default."""
        group.add_argument(
            flag, type=self.chosen, default=list(self.allowed), metavar="LIST", help=help
        )


BIN_DIR_HELP = (
    "directory holding the mpilens programs (default: MPILENS_BIN_DIR, then "
    "build/<flavour>/bin of the checkout, then PATH)"
)
# --bin-dir of a command that also preloads one of mpilens' libraries
LAYER_BIN_DIR_HELP = BIN_DIR_HELP + "; the library is looked for in DIR/../lib and DIR/../lib64"


def lib_dir_help(library: str) -> str:
    """--lib-dir of a command that preloads lib<library>.so (launch.find_library's search)."""
    return (
        f"directory holding lib{library}.so (default: MPILENS_LIB_DIR, then beside --bin-dir "
        "or MPILENS_BIN_DIR, then build/<flavour>/lib of the checkout, then <prefix>/lib "
        "beside a <prefix>/bin on PATH)"
    )


def add_lib_dir(group: OptionGroup, library: str) -> None:
    """--lib-dir of a command that preloads lib<library>.so."""
    group.add_argument("--lib-dir", metavar="DIR", help=lib_dir_help(library))


# A layer study's optional measurement (piggyback's applications, progress's overlap maps) is
# made by default, but not with --preset quick.
PRESET_FLAG_ON = {"quick": False, "default": True, "full": True}


def add_preset_flag(group: OptionGroup, flag: str, help: str) -> None:
    """--FLAG and --no-FLAG; given neither, preset_flag decides by the preset."""
    group.add_argument(
        flag,
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"{help} (default: on, off with --preset quick)",
    )


def preset_flag(value: Optional[bool], preset: str) -> bool:
    """An add_preset_flag option's value: as given, else PRESET_FLAG_ON by the preset."""
    return PRESET_FLAG_ON[preset] if value is None else value


def add_study_options(parser: argparse.ArgumentParser, name: str) -> OptionGroup:
    """The launch options of a command that runs its program under a preloaded layer (default
    preset "default"), and the group for its own, "<name> options"."""
    add_launch_options(parser, "default", LAYER_BIN_DIR_HELP)
    return parser.add_argument_group(f"{name} options")


def add_launch_options(
    parser: argparse.ArgumentParser,
    default_preset: Optional[str],
    bin_dir_help: str = BIN_DIR_HELP,
    series: Optional[Family] = None,
    presets: Sequence[str] = PRESETS,
) -> None:
    """The options of a command that launches ranks; --preset (one of presets) and --resume only
    for commands that run an mpilens program (default_preset given); --np a list for a series
    family."""
    group = parser.add_argument_group("launch options")
    if series is None:
        group.add_argument(
            "--np",
            type=rank_count,
            default=default_ranks(),
            metavar="N",
            help=(
                f"number of MPI ranks (default {DEFAULT_RANKS}; inside a Slurm "
                "allocation, its number of tasks)"
            ),
        )
    else:
        group.add_argument(
            "--np",
            type=rank_counts(series),
            default=DEFAULT_RANK_COUNTS,
            metavar="LIST",
            help=(
                "numbers of MPI ranks separated by commas, one run each, each at "
                f"least {series.min_ranks} (default {DEFAULT_RANK_COUNTS})"
            ),
        )
    group.add_argument(
        "--mpi",
        choices=[f.value for f in launch.Flavour] + [launch.AUTO],
        default=launch.AUTO,
        help=(
            "MPI the programs were built for: openmpi and mpich (the Linux distribution's), "
            "openmpi5, mpich5, mpich5-abi (MPICH 5 through the MPI-5 standard ABI) and impi "
            "(Intel MPI) (default auto: the first of these built, else what mpiexec is)"
        ),
    )
    group.add_argument(
        "--launcher",
        metavar="CMD",
        help='launcher command template, e.g. "srun --mpi=pmix -n {np}": {np} becomes the '
        "rank count (without it, -n N follows the launcher's options), {nodes} the node count, "
        "{program} the program and its arguments (without it, they go last)",
    )
    group.add_argument(
        "--nodes",
        type=node_count,
        metavar="N",
        help="number of nodes, only for {nodes} in --launcher (default inside a Slurm "
        "allocation: its number of nodes)",
    )
    group.add_argument("--bin-dir", metavar="DIR", help=bin_dir_help)
    group.add_argument(
        "--output",
        metavar="DIR",
        help="results directory (default results/<YYYYmmdd-HHMMSS>-<flavour>/)",
    )
    if default_preset is None:
        return
    group.add_argument(
        "--preset",
        choices=presets,
        default=default_preset,
        help=f"how thorough the measurement is (default: {default_preset})",
    )
    group.add_argument(
        "--resume", action="store_true", help="complete the interrupted run in --output DIR"
    )


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


def output_dir(output: Optional[str], flavour: launch.Flavour) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(output) if output else Path("results") / f"{stamp}-{flavour.value}"


def rank_list(args: argparse.Namespace) -> List[int]:
    """The rank counts to run: a series family's list, or the one --np."""
    return list(args.np) if isinstance(args.np, list) else [args.np]


def warn_if_oversubscribed(args: argparse.Namespace) -> None:
    """Ranks sharing cores change what is measured; say so before the run, not after it."""
    if args.launcher or launch.in_slurm_allocation():
        return  # a cluster launcher places ranks on their own nodes and cores
    cpus = launch.usable_cpus()
    ranks = max(rank_list(args))
    if ranks > cpus:
        print(
            f"mpilens: warning: {ranks} ranks on {cpus} cores: ranks share cores, so computation "
            "competes with ranks waiting in MPI (and Open MPI runs in its oversubscribed mode); "
            "ratios then describe that contention, and benchmarks involving every rank run much "
            "slower",
            file=sys.stderr,
        )


class EnvLauncher:
    """Commands that run a program at --np ranks with variables set in every rank (a preloaded
    layer and its settings), through the --launcher or the flavour's own."""

    def __init__(self, args: argparse.Namespace, flavour: launch.Flavour) -> None:
        self.args, self.flavour = args, flavour

    def command(
        self, program: launch.PathLike, program_args: Sequence[str], env: Mapping[str, str]
    ) -> List[str]:
        return launch.build_command(
            self.flavour,
            self.args.np,
            program,
            program_args,
            launcher=self.args.launcher,
            nodes=self.args.nodes,
            env=env,
        )

    def check(self, program: launch.PathLike, outdir: Path) -> None:
        """The last checks before the runs: the launcher exists, files can be written in outdir;
        then the warning about ranks that share cores."""
        launch.check_launcher(
            self.command(program, [], {}), None if self.args.launcher else self.flavour
        )
        ensure_writable(outdir)
        warn_if_oversubscribed(self.args)

    def announce(self, command: Sequence[str], env: Mapping[str, str]) -> Dict[str, str]:
        """Print the command as one could paste it; return what the launcher's own environment
        must hold (for a launcher that passes its environment on)."""
        own_env = launch.process_env(command[0], self.flavour, env)
        shown = [f"{name}={value}" for name, value in own_env.items()] + list(command)
        print(f"mpilens: running {shlex.join(shown)}", file=sys.stderr, flush=True)
        return own_env

    def run(
        self,
        program: launch.PathLike,
        program_args: Sequence[str],
        env: Mapping[str, str],
        output: Path,
        label: str,
    ) -> results.Run:
        """Run an mpilens program that writes output, announced, its progress shown under
        label; what it wrote."""
        command = self.command(program, program_args, env)
        own_env = self.announce(command, env)
        launch.run(command, output, Progress(label), env=own_env)
        return results.load(output)


def check_resume(args: argparse.Namespace) -> None:
    if args.resume and not args.output:
        raise MpilensError("--resume needs --output DIR: the directory of the run to complete")


def check_new(output: Path, resume: bool) -> None:
    """A finished run is never overwritten by accident: only --resume continues a file."""
    if output.exists() and not resume:
        raise MpilensError(
            f'"{output}" already exists; add --resume to complete it, or choose another --output'
        )


def program_tail(output: Path, resume: bool) -> List[str]:
    """The options every run of an mpilens program ends with: where to write, no progress lines
    of its own (mpilens shows them), and --resume when asked."""
    return ["--output", str(output), "--progress", "off"] + (["--resume"] if resume else [])
