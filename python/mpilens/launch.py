"""Find an mpilens program or library, build the MPI command line that starts a program, and run
it."""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import os
import re
import shlex
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import MpilensError
from .progress import Progress, ResultsTail

PathLike = Union[str, Path]

# Seconds to let an interrupted launcher shut its ranks down before forcing it.
STOP_GRACE_S = 3.0


class Flavour(str, enum.Enum):
    """An MPI installation mpilens is built for: its programs are in build/<value> of a checkout,
    and the Makefile installs the last four into virtual environments of their own."""

    OPENMPI = "openmpi"
    MPICH = "mpich"
    OPENMPI5 = "openmpi5"
    MPICH5 = "mpich5"
    MPICH5_ABI = "mpich5-abi"
    IMPI = "impi"

    @property
    def display_name(self) -> str:
        return _INSTALLATIONS[self].title

    @property
    def style(self) -> str:
        """How its launcher is told things: "openmpi" (mpirun, -x) or "hydra" (mpiexec, -genv)."""
        return _INSTALLATIONS[self].style

    @property
    def async_progress_env(self) -> Dict[str, str]:
        """The variables that switch the library's own progress thread on."""
        return dict(_INSTALLATIONS[self].async_env)


@dataclasses.dataclass(frozen=True)
class _Installation:
    title: str
    style: str
    # Its launcher: a command on PATH, or, with venv, the one in <checkout>/<venv>/bin.
    launcher: str
    venv: Optional[str]
    # The plugin srun must give its ranks: Open MPI wires up through PMIx, the MPICH family
    # (MPICH's built-in PMI client, Intel MPI's) through PMI-2.
    srun_pmi: str
    # Open MPI has a progress thread for its TCP transport only (between nodes; on one node
    # nothing changes); MPICH and Intel MPI have general ones.
    async_env: Tuple[Tuple[str, str], ...]


_OMPI_ASYNC = (("OMPI_MCA_btl_tcp_progress_thread", "1"),)
_MPICH_ASYNC = (("MPIR_CVAR_ASYNC_PROGRESS", "1"),)
_INSTALLATIONS = {
    Flavour.OPENMPI: _Installation(
        "Open MPI", "openmpi", "mpirun.openmpi", None, "pmix", _OMPI_ASYNC
    ),
    Flavour.MPICH: _Installation("MPICH", "hydra", "mpiexec.mpich", None, "pmi2", _MPICH_ASYNC),
    Flavour.OPENMPI5: _Installation(
        "Open MPI 5", "openmpi", "mpirun", ".venv-openmpi5", "pmix", _OMPI_ASYNC
    ),
    Flavour.MPICH5: _Installation(
        "MPICH 5", "hydra", "mpiexec", ".venv-mpich5", "pmi2", _MPICH_ASYNC
    ),
    Flavour.MPICH5_ABI: _Installation(
        "MPICH 5 (MPI-5 standard ABI)", "hydra", "mpiexec", ".venv-mpich5", "pmi2", _MPICH_ASYNC
    ),
    Flavour.IMPI: _Installation(
        "Intel MPI", "hydra", "mpiexec", ".venv-impi", "pmi2", (("I_MPI_ASYNC_PROGRESS", "1"),)
    ),
}
AUTO = "auto"


def flavour_of_library(flavour: object, library: object) -> Optional[Flavour]:
    """The --mpi flavour that runs the library a meta record names ("flavour" and "library" of
    its "mpi" object), if mpilens has one: the version picks Open MPI 5 and MPICH 5."""
    text = library if isinstance(library, str) else ""
    if flavour == "intelmpi":
        return Flavour.IMPI
    if flavour == "openmpi":
        return Flavour.OPENMPI5 if re.search(r"Open MPI v5\.", text) else Flavour.OPENMPI
    if flavour == "mpich":
        return Flavour.MPICH5 if re.search(r"MPICH Version:\s*5\.", text) else Flavour.MPICH
    return None


def repo_root() -> Optional[Path]:
    """The source checkout this package runs from, if any (recognised by its CMakeLists.txt)."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "CMakeLists.txt").is_file() else None


def dev_bin_dir(flavour: Flavour) -> Optional[Path]:
    root = repo_root()
    return root / "build" / flavour.value / "bin" if root else None


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_program(name: str, flavour: Flavour, bin_dir: Optional[PathLike] = None) -> Path:
    """The program to run: in bin_dir, else MPILENS_BIN_DIR, else the dev build, else PATH.

    An explicit directory (bin_dir or MPILENS_BIN_DIR) is the only place looked in: a user who
    names one wants that build, not whichever other one happens to be found.
    """
    for explicit, origin in (
        (bin_dir, "--bin-dir"),
        (os.environ.get("MPILENS_BIN_DIR"), "MPILENS_BIN_DIR"),
    ):
        if explicit:
            # Absolute, as a bare "mpilens-sanity" (from --bin-dir .) would be searched in PATH.
            candidate = Path(explicit).absolute() / name
            if _executable(candidate):
                return candidate
            raise MpilensError(f'program "{name}" not found in {origin} "{explicit}"')
    dev = dev_bin_dir(flavour)
    if dev is not None and _executable(dev / name):
        return dev / name
    on_path = shutil.which(name)
    if on_path:
        return Path(on_path)
    looked = f"{dev} and PATH" if dev is not None else "PATH"
    if dev is not None and dev.is_dir():
        problem = f'program "{name}" not found'
    else:
        problem = f'no mpilens programs built for MPI flavour "{flavour.value}"'
    raise MpilensError(f'{problem} (looked in {looked}); run "make build" or set MPILENS_BIN_DIR')


def _beside_programs(bin_dir: Path) -> List[Path]:
    """Where an installation whose programs are in <prefix>/bin keeps its libraries."""
    prefix = bin_dir.absolute().parent
    return [prefix / "lib", prefix / "lib64"]


def find_library(
    name: str,
    flavour: Flavour,
    lib_dir: Optional[PathLike] = None,
    bin_dir: Optional[PathLike] = None,
) -> Path:
    """lib<name>.so, as an absolute path: in lib_dir, else MPILENS_LIB_DIR, else beside the
    programs of bin_dir or MPILENS_BIN_DIR (<prefix>/lib or <prefix>/lib64), else in the dev
    build, else beside a <prefix>/bin on PATH.

    As with find_program, an explicit directory is the only place looked in: a library of
    another build than the one named may be built for another MPI.
    """
    filename = f"lib{name}.so"
    explicit = (
        (lib_dir, "--lib-dir", False),
        (os.environ.get("MPILENS_LIB_DIR"), "MPILENS_LIB_DIR", False),
        (bin_dir, "--bin-dir", True),
        (os.environ.get("MPILENS_BIN_DIR"), "MPILENS_BIN_DIR", True),
    )
    for directory, origin, beside in explicit:
        if directory:
            places = _beside_programs(Path(directory)) if beside else [Path(directory)]
            return _library_in(
                filename, places, " and ".join(map(str, places)) + f' (from {origin} "{directory}")'
            )
    dev = dev_bin_dir(flavour)
    installed = [
        lib
        for entry in os.environ.get("PATH", "").split(os.pathsep)
        if entry
        for lib in _beside_programs(Path(entry))
    ]
    if dev is None:
        return _library_in(filename, installed, "<prefix>/lib beside each <prefix>/bin on PATH")
    return _library_in(
        filename,
        [dev.parent / "lib", *installed],
        f"{dev.parent / 'lib'} and <prefix>/lib beside each <prefix>/bin on PATH",
    )


def _library_in(filename: str, places: Sequence[Path], looked: str) -> Path:
    for place in places:
        if (place / filename).is_file():
            return (place / filename).absolute()
    raise MpilensError(
        f'library "{filename}" not found (looked in {looked}); run "make build", '
        "or give --lib-dir DIR"
    )


def built_flavours() -> List[Flavour]:
    """Flavours with a development build (build/<flavour>/bin) in the checkout."""
    dirs = {flavour: dev_bin_dir(flavour) for flavour in Flavour}
    return [flavour for flavour, path in dirs.items() if path is not None and path.is_dir()]


def flavour_from_version_text(text: str) -> Optional[Flavour]:
    """Which MPI a `mpiexec --version` output belongs to, if recognisable."""
    # Intel MPI's hydra names MPICH's too, so it is tested first.
    if "Intel(R) MPI" in text:
        return Flavour.IMPI
    if "Open MPI" in text or "OpenRTE" in text:
        return Flavour.OPENMPI
    if "HYDRA" in text or "MPICH" in text:
        return Flavour.MPICH
    return None


def _mpiexec_version_text() -> str:
    mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        return ""
    try:
        done = subprocess.run(
            [mpiexec, "--version"], capture_output=True, text=True, timeout=20, errors="replace"
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


def resolve_flavour(requested: str) -> Flavour:
    """The flavour for --mpi FLAVOUR|auto."""
    if requested != AUTO:
        try:
            return Flavour(requested)
        except ValueError:
            allowed = ", ".join([f.value for f in Flavour] + [AUTO])
            raise MpilensError(
                f'invalid MPI flavour "{requested}": choose from {allowed}'
            ) from None
    built = built_flavours()
    if built:
        # Several built: the first in Flavour's order, so "auto" means the same on every such
        # machine (Open MPI, then MPICH, from the Linux distribution).
        return built[0]
    detected = flavour_from_version_text(_mpiexec_version_text())
    if detected is None:
        raise MpilensError(
            'cannot tell which MPI to use: no mpilens build found and "mpiexec '
            '--version" names neither Open MPI nor MPICH nor Intel MPI; choose with --mpi '
            f"({', '.join(f.value for f in Flavour)})"
        )
    return detected


def in_slurm_allocation() -> bool:
    return bool(os.environ.get("SLURM_JOB_ID")) and shutil.which("srun") is not None


def default_launcher(flavour: Flavour) -> str:
    """srun inside a Slurm allocation, otherwise the flavour's own launcher: the one of its
    virtual environment in the checkout, else its name on PATH, else plain mpirun (Open MPI)
    or mpiexec (the others), which a site's environment module puts there."""
    if in_slurm_allocation():
        return "srun"
    installation = _INSTALLATIONS[flavour]
    root = repo_root()
    if installation.venv and root is not None:
        in_venv = root / installation.venv / "bin" / installation.launcher
        if _executable(in_venv):
            return str(in_venv)
    if shutil.which(installation.launcher):
        return installation.launcher
    return "mpirun" if flavour.style == "openmpi" else "mpiexec"


def srun_mpi_plugins() -> List[str]:
    """The plugins `srun --mpi=list` names (none if srun cannot tell)."""
    try:
        done = subprocess.run(
            ["srun", "--mpi=list"], capture_output=True, text=True, timeout=20, errors="replace"
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    lines = (done.stdout + done.stderr).splitlines()
    return [line.strip() for line in lines if line.startswith(("\t", " ")) and line.strip()]


def srun_mpi_option(flavour: Flavour) -> List[str]:
    """--mpi=PLUGIN for the flavour when srun has that plugin; nothing when SLURM_MPI_TYPE says
    which to use (the user's or the site's choice) or srun lacks it (the site's MpiDefault
    then decides, and a failure names the launcher)."""
    if os.environ.get("SLURM_MPI_TYPE"):
        return []
    wanted = _INSTALLATIONS[flavour].srun_pmi
    return [f"--mpi={wanted}"] if wanted in srun_mpi_plugins() else []


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _check_count(count: object, what: str) -> int:
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise MpilensError(f'invalid number of {what} "{count}": expected an integer of at least 1')
    return count


def allocation_nodes() -> Optional[int]:
    """The number of nodes of the Slurm allocation mpilens runs in, if any."""
    if not in_slurm_allocation():
        return None
    for name in ("SLURM_JOB_NUM_NODES", "SLURM_NNODES"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) >= 1:
            return int(value)
    return None


# Launchers mpilens knows how to tell to set environment variables in every rank, by the name
# of their command; plain mpirun and mpiexec belong to the flavour's MPI.
_OPENMPI_LAUNCHERS = {"mpirun.openmpi", "mpiexec.openmpi", "orterun", "prterun"}
_HYDRA_LAUNCHERS = {"mpiexec.mpich", "mpirun.mpich", "mpiexec.hydra"}
_GENERIC_LAUNCHERS = {"mpirun", "mpiexec"}


def _env_style(launcher: str, flavour: Flavour) -> Optional[str]:
    """How the launcher command `launcher` passes variables on: "openmpi", "hydra", "srun", or
    None for a launcher mpilens does not know."""
    name = Path(launcher).name
    if name == "srun":
        return "srun"
    if name in _GENERIC_LAUNCHERS:
        return flavour.style
    if name in _OPENMPI_LAUNCHERS:
        return "openmpi"
    return "hydra" if name in _HYDRA_LAUNCHERS else None


# srun's --export separates its variables with commas and has no escape for one in a value.
# A variable whose value holds one is set in srun's own environment instead, which --export=ALL
# passes on to the ranks; but not a preload, which would load into srun itself.
_SRUN_ONLY_THROUGH_EXPORT = ("LD_PRELOAD",)


def _srun_env_split(env: Mapping[str, str]) -> Tuple[Dict[str, str], Dict[str, str]]:
    """(the variables for --export, those for srun's own environment)."""
    exported, inherited = {}, {}
    for name, value in env.items():
        if "," not in value:
            exported[name] = value
        elif name in _SRUN_ONLY_THROUGH_EXPORT:
            raise MpilensError(
                f'cannot pass {name}="{value}" to the ranks through srun: its --export option '
                "cannot carry a comma, and srun would load it itself; choose paths without one"
            )
        else:
            inherited[name] = value
    return exported, inherited


def _env_options(style: str, env: Mapping[str, str]) -> List[str]:
    if style == "openmpi":
        return [word for name, value in env.items() for word in ("-x", f"{name}={value}")]
    if style == "hydra":
        return [word for name, value in env.items() for word in ("-genv", name, value)]
    exported, _ = _srun_env_split(env)
    return [
        "--export=" + ",".join(["ALL", *(f"{name}={value}" for name, value in exported.items())])
    ]


def process_env(
    launcher: str, flavour: Flavour, env: Optional[Mapping[str, str]]
) -> Dict[str, str]:
    """The variables of env to set in the launcher's own environment: all of them for a launcher
    mpilens does not know (which must then pass its environment on to the ranks); for srun those
    whose values hold a comma, which its --export cannot carry; none for the others (build_command
    puts them on its command line, so the launcher process itself is not affected, e.g. by
    LD_PRELOAD)."""
    style = _env_style(launcher, flavour)
    if style is None:
        return dict(env or {})
    return _srun_env_split(env or {})[1] if style == "srun" else {}


def _with_env(prefix: List[str], flavour: Flavour, env: Optional[Mapping[str, str]]) -> List[str]:
    """The launcher's options for env go right after its command, before any words of a user's
    launcher that may belong to a wrapper (srun -n 4 singularity exec ...)."""
    style = _env_style(prefix[0], flavour)
    if not env or style is None:
        return prefix
    return [prefix[0], *_env_options(style, env), *prefix[1:]]


# A --launcher is a template: {np} is the rank count, {nodes} the node count, {program} the word
# the program and its arguments replace (else they follow the template); {{ and }} are braces.
PLACEHOLDERS = ("np", "nodes", "program")
_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
# Near misses of a placeholder, by what a user wrote between the braces.
_MEANT = {
    **dict.fromkeys(["n", "ranks", "nranks", "tasks", "ntasks", "procs", "nprocs"], "np"),
    **dict.fromkeys(["node", "nnodes"], "nodes"),
    **dict.fromkeys(["prog", "cmd", "command"], "program"),
}

# The options of each known launcher that set the rank count, without their leading dashes
# (Open MPI and hydra take one or two); "c" is Open MPI's synonym of "np". srun's "N" is its
# node count.
_RANK_OPTIONS = {"openmpi": {"n", "np", "c"}, "hydra": {"n", "np"}, "srun": {"n", "ntasks"}}
# Options of each known launcher that take no value: a word after one is not its value, so it
# starts a wrapper (mpirun --oversubscribe valgrind); and those that take two (--mca NAME
# VALUE). Any other option is taken to have the word after it, when that is no option, as its
# value.
_PAIRS = {"openmpi": {"mca", "gmca", "prtemca", "pmixmca"}, "hydra": {"genv", "env"}}
_FLAGS = {
    "openmpi": {
        "oversubscribe",
        "allow-run-as-root",
        "report-bindings",
        "tag-output",
        "timestamp-output",
        "display-map",
        "use-hwthread-cpus",
        "nolocal",
        "v",
        "verbose",
        "q",
        "quiet",
    },
    "hydra": {"l", "prepend-rank", "v", "verbose", "print-all-exitcodes"},
    "srun": {
        "l",
        "label",
        "u",
        "unbuffered",
        "v",
        "verbose",
        "Q",
        "quiet",
        "exclusive",
        "overlap",
        "O",
        "overcommit",
        "X",
        "disable-status",
    },
}


def _shown(words: Sequence[str]) -> str:
    """words as one would type them, placeholders unquoted; on one line whatever they hold."""
    shown = [
        word if re.fullmatch(r"[\w@%+=:,./{}-]+", word) else shlex.quote(word) for word in words
    ]
    return " ".join(shown).replace("\n", "\\n").replace("\r", "\\r")


def _placeholders(word: str, words: Sequence[str]) -> List[str]:
    """The placeholders in word, one of words; refuses an unknown one and a lone brace."""
    names = []
    for match in _FIELD.finditer(word):
        name = match.group(1)
        if match.group(0) in ("{{", "}}"):
            continue
        if name is None:
            brace = match.group(0)
            raise MpilensError(
                f'--launcher "{_shown(words)}" has a lone "{brace}": write "{brace * 2}" for a '
                "literal brace; the placeholders are {np}, {nodes} and {program}"
            )
        if name not in PLACEHOLDERS:
            meant = _MEANT.get(name.strip(), name.strip().lower())
            fixed = [
                w.replace(match.group(0), "{" + meant + "}") if w == word else w for w in words
            ]
            hint = f', as in "{_shown(fixed)}"' if meant in PLACEHOLDERS else ""
            raise MpilensError(
                f'--launcher "{_shown(words)}" has an unknown placeholder {match.group(0)}: the '
                "known ones are {np} (the rank count), {nodes} (the node count) and {program} "
                f'(where the program goes){hint}; write "{{{{" and "}}}}" for literal braces'
            )
        names.append(name)
    return names


def _fill(word: str, values: Mapping[str, str]) -> str:
    return _FIELD.sub(
        lambda match: match.group(0)[0] if match.group(1) is None else values[match.group(1)], word
    )


def _launcher_index(words: Sequence[str], flavour: Flavour) -> int:
    """Where the launcher is: the first word naming one mpilens knows (after a prefix such as
    `env NAME=VALUE` or `nice -n 5`), else the first word."""
    for index, word in enumerate(words):
        if _env_style(word, flavour) is not None:
            return index
    return 0


def _options_end(words: Sequence[str], start: int, style: Optional[str]) -> int:
    """Where the options of the launcher at words[start] end: at its first word that is neither
    an option nor an option's value (a wrapper: singularity exec img.sif), or at "--"."""
    flags, pairs = _FLAGS.get(style or "", set()), _PAIRS.get(style or "", set())
    values = 0  # the values the last option may still take
    for index in range(start + 1, len(words)):
        word = words[index]
        if word == "--":
            return index
        if word.startswith("-") and word != "-":
            name = word.lstrip("-")
            values = 0 if "=" in word or name in flags else 2 if name in pairs else 1
        elif values:
            values -= 1
        else:
            return index
    return len(words)


def _check_no_rank_count(
    words: Sequence[str], start: int, end: int, style: Optional[str], np: int
) -> None:
    """Refuses a rank count written in the launcher's own options (words[start + 1:end]) other
    than {np}: it would contradict --np, or add to the -n N mpilens appends."""
    if style is None:
        return  # a launcher mpilens does not know: what its options mean is its own business
    for index in range(start + 1, end):
        word = words[index]
        option, equals, value = word.partition("=")
        attached = re.fullmatch(r"-n(\d+)", word) if style == "srun" else None
        if attached:
            value, replaced, fixed = attached.group(1), 1, ["-n{np}"]
        elif word.startswith("-") and option.lstrip("-") in _RANK_OPTIONS[style]:
            if equals:
                replaced, fixed = 1, [option + "={np}"]
            else:
                has_value = index + 1 < end and not words[index + 1].startswith("-")
                value = words[index + 1] if has_value else ""
                replaced, fixed = 1 + has_value, [word, "{np}"]
        else:
            continue
        if "{np}" in value:
            continue
        named = _shown(words[index : index + replaced])
        corrected = [*words[:index], *fixed, *words[index + replaced :]]
        raise MpilensError(
            f"--launcher names a rank count ({named}) and --np asks for {np}: write {{np}} where "
            f'the count goes, as in "{_shown(corrected)}"'
        )


def _nodes_unused(nodes: int) -> MpilensError:
    return MpilensError(
        f'--nodes {nodes} is only for a --launcher with {{nodes}}, as in "srun -N {{nodes}} '
        '-n {np}"'
    )


def launcher_words(launcher: str) -> List[str]:
    """The words of a --launcher template, split as a shell would; one line if it cannot be."""
    try:
        words = shlex.split(launcher)
    except ValueError as error:
        raise MpilensError(
            f'invalid --launcher "{launcher}": {str(error).lower()}; quote as a shell would'
        ) from None
    if not words:
        raise MpilensError('--launcher is empty: give a command such as "mpirun -n {np}"')
    return words


def _from_template(
    launcher: str,
    flavour: Flavour,
    np: int,
    nodes: Optional[int],
    program_words: List[str],
) -> List[str]:
    """The command of a --launcher template; see build_command."""
    words = launcher_words(launcher)
    used = [_placeholders(word, words) for word in words]
    program_at = [index for index, names in enumerate(used) if "program" in names]
    if any(words[index] != "{program}" for index in program_at) or len(program_at) > 1:
        raise MpilensError(
            f'--launcher "{_shown(words)}" must have {{program}} once, as a word of its own, '
            'as in "srun -n {np} {program}"'
        )
    cut = program_at[0] if program_at else len(words)
    if cut == 0:
        raise MpilensError(
            f'--launcher "{_shown(words)}" must start with the launcher, not {{program}}, as in '
            '"srun -n {np} {program}"'
        )
    head, tail = words[:cut], words[cut:]
    start = _launcher_index(head, flavour)
    style = _env_style(head[start], flavour)
    end = _options_end(head, start, style)
    _check_no_rank_count(head, start, end, style, np)
    found = {name for names in used for name in names}
    if nodes is not None and "nodes" not in found:
        raise _nodes_unused(nodes)
    if "np" not in found:
        wrapper = head[end + 1 :] if head[end : end + 1] == ["--"] else head[end:]
        if wrapper:
            fixed = [*head[:end], "-n", "{np}", *head[end:], *tail]
            wrapped = f"{_shown(wrapper[:1])} after {_shown(head[start : start + 1])}"
            raise MpilensError(
                f'--launcher "{_shown(words)}" runs {wrapped} and has no {{np}}: mpilens cannot '
                f"tell where -n {np} goes; write {{np}} where the count goes, as in "
                f'"{_shown(fixed)}" (and {{program}} where the program goes, if not last)'
            )
        head = [*head[:end], "-n", "{np}", *head[end:]]
    if "nodes" in found and nodes is None:
        nodes = allocation_nodes()
        if nodes is None:
            raise MpilensError(
                f'--launcher "{_shown(words)}" uses {{nodes}} but the node count is not known: '
                "give it with --nodes N"
            )
    values = {"np": str(np), "nodes": str(nodes)}
    filled = [_fill(word, values) for word in head]
    return filled + program_words + [_fill(word, values) for word in tail[1:]]


def build_command(
    flavour: Flavour,
    np: int,
    program: PathLike,
    args: Sequence[str],
    *,
    launcher: Optional[str] = None,
    nodes: Optional[int] = None,
    cpus: Optional[int] = None,
    euid: Optional[int] = None,
    env: Optional[Mapping[str, str]] = None,
) -> List[str]:
    """The full command line: launcher prefix, program, program arguments.

    launcher is the user's --launcher template (docs/cli.md, "Launch command"): {np} becomes
    the rank count, {nodes} the node count (nodes, else the Slurm allocation's), {program} the
    program and its arguments (else they go last); without {np}, "-n <np>" goes after the
    launcher's own options. Refused: a rank count other than {np} in those options, a wrapper
    after them without {np}, an unknown placeholder. Without a launcher, the flavour's launcher
    gets the options it needs. nodes is only for {nodes}: given without it, it is refused.
    env: variables every rank must see, given as options to a launcher mpilens knows (-x for
    Open MPI, -genv for MPICH's hydra, --export for srun); see process_env for the others.
    """
    np = _check_count(np, "ranks")
    if nodes is not None:
        nodes = _check_count(nodes, "nodes")
    program_words = [str(program), *args]
    if launcher is not None:
        command = _from_template(launcher, flavour, np, nodes, program_words)
        return _with_env(command, flavour, env)
    if nodes is not None:
        raise _nodes_unused(nodes)
    name = default_launcher(flavour)
    prefix = [name, "-n", str(np)]
    if Path(name).name == "srun":
        prefix += srun_mpi_option(flavour)
    if flavour.style == "openmpi" and Path(name).name != "srun":
        # Open MPI's mpirun refuses more ranks than cores, and refuses root, unless told
        # otherwise; hydra (MPICH) and srun need neither.
        if np > (usable_cpus() if cpus is None else cpus):
            prefix.append("--oversubscribe")
        if (os.geteuid() if euid is None else euid) == 0:
            prefix.append("--allow-run-as-root")
    return _with_env(prefix, flavour, env) + program_words


def with_binding(command: Sequence[str], flavour: Flavour, policy: str) -> List[str]:
    """command with its ranks bound as policy says ("core", "none"): the option goes right after
    the launcher, where Open MPI's mpirun (--bind-to) and hydra's mpiexec (-bind-to) take it."""
    option = "--bind-to" if flavour.style == "openmpi" else "-bind-to"
    return [command[0], option, policy, *command[1:]]


def is_command(word: str) -> bool:
    """Whether word names something that can be run: an executable file, or a command on PATH."""
    return _executable(Path(word)) if os.sep in word else shutil.which(word) is not None


def check_launcher(cmd: Sequence[str], flavour: Optional[Flavour] = None) -> None:
    """Refuse a command whose launcher is missing; flavour None means the user chose it."""
    first = cmd[0]
    if is_command(first):
        return
    if flavour is None:
        raise MpilensError(f'launcher "{first}" not found; check the command given with --launcher')
    raise MpilensError(
        f'launcher "{first}" not found; install {flavour.display_name}, choose '
        'another flavour with --mpi, or give --launcher "CMD"'
    )


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP (what Slurm, `timeout` and a closed terminal send), handled as Ctrl-C:
    the launched job is stopped and the points it finished are kept."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _interrupted(signum: int, frame: object) -> None:
    raise Interrupted(signum)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """Within it, SIGTERM and SIGHUP raise Interrupted instead of ending the process at once
    (which would leave the launcher and its ranks running, and writing)."""
    previous = {signum: signal.signal(signum, _interrupted) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _start(
    cmd: Sequence[str], env: Optional[Mapping[str, str]], stdout: Optional[int] = None
) -> subprocess.Popen:
    """Start cmd in a session of its own, as the leader of its process group, so that stopping
    it stops every process it started (mpirun's local ranks, a wrapper's children). Outside the
    terminal's job control, it is neither stopped for reading the terminal nor reached by its
    signals: _stop passes them on."""
    try:
        return subprocess.Popen(
            list(cmd),
            env={**os.environ, **env} if env else None,
            start_new_session=True,
            stdout=stdout,
            text=True,
            errors="replace",
        )
    except OSError as error:
        raise MpilensError(f'cannot start "{cmd[0]}": {error.strerror}') from None


def _signal_job(process: subprocess.Popen, signum: int) -> None:
    # The group is gone once the job has ended.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


def stop_job(process: subprocess.Popen, signum: int) -> None:
    """Stop a job started in a session of its own, every process of it (the launcher, its local
    ranks, a wrapper's children): signum (after an interrupt, its signal, which the terminal's
    Ctrl-C does not pass to another session), a moment to end cleanly, then insist."""
    for action in (signum, signal.SIGTERM, signal.SIGKILL):
        _signal_job(process, action)
        try:
            process.wait(timeout=STOP_GRACE_S)
            break
        except subprocess.TimeoutExpired:
            continue
    # Ranks that outlived their launcher.
    _signal_job(process, signal.SIGKILL)


def _reap(process: subprocess.Popen) -> None:
    """Kills the job if it still runs: an exception (an interrupt, a bad line) left early."""
    if process.poll() is None:
        _signal_job(process, signal.SIGKILL)
        process.wait()


def _failure(cmd: Sequence[str], returncode: int) -> str:
    if returncode < 0:
        try:
            how = f"was killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            how = f"was killed by signal {-returncode}"
    else:
        how = f"exited with status {returncode}"
    return f'"{shlex.join(cmd)}" {how}'


def run(
    cmd: Sequence[str],
    output_file: PathLike,
    progress: Optional[Progress] = None,
    poll_interval: float = 0.5,
    env: Optional[Mapping[str, str]] = None,
) -> None:
    """Run cmd with the terminal as its stdout/stderr, showing progress from output_file; env
    holds variables to set for it, over this process's environment.

    On failure the results file is left as it is: every point already written stays usable.
    """
    tail = ResultsTail(output_file)
    tail.poll()
    if progress is not None:
        progress.start(tail.points)
    process = _start(cmd, env)
    try:
        while True:
            try:
                returncode = process.wait(timeout=poll_interval)
                break
            except subprocess.TimeoutExpired:
                tail.poll()
                if progress is not None:
                    progress.update(tail.points, tail.points_total)
        tail.poll()
        if progress is not None and tail.points_total is not None:
            progress.update(tail.points, tail.points_total)
    except KeyboardInterrupt as interrupt:
        stop_job(process, getattr(interrupt, "signum", signal.SIGINT))
        raise
    finally:
        _reap(process)
        if progress is not None:
            progress.finish()
    if returncode != 0:
        kept = (
            f'; the {tail.points} points measured so far are kept in "{output_file}" '
            "(complete them with --resume)"
            if tail.points
            else ""
        )
        raise MpilensError(_failure(cmd, returncode) + kept)


def run_captured(cmd: Sequence[str], env: Optional[Mapping[str, str]] = None) -> str:
    """Run cmd to its end and return what it printed on stdout (its stderr goes to the terminal);
    env holds variables to set for it, over this process's environment. For programs that answer
    on stdout rather than in a results file, such as the example applications."""
    process = _start(cmd, env, stdout=subprocess.PIPE)
    try:
        output, _ = process.communicate()
    except KeyboardInterrupt as interrupt:
        stop_job(process, getattr(interrupt, "signum", signal.SIGINT))
        raise
    finally:
        _reap(process)
    if process.returncode != 0:
        raise MpilensError(_failure(cmd, process.returncode))
    return output
