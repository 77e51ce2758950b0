"""Find an mpilens program or library, build the MPI command line that starts a program, and run
it."""

from __future__ import annotations

import contextlib
import enum
import os
import shlex
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Union

from .errors import MpilensError
from .progress import Progress, ResultsTail

PathLike = Union[str, Path]

# Seconds to let an interrupted launcher shut its ranks down before forcing it.
STOP_GRACE_S = 3.0


class Flavour(str, enum.Enum):
    OPENMPI = "openmpi"
    MPICH = "mpich"


FLAVOUR_NAMES = {Flavour.OPENMPI: "Open MPI", Flavour.MPICH: "MPICH"}
AUTO = "auto"


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
    """The flavour for --mpi openmpi|mpich|auto."""
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
        # Both built: a fixed preference, so "auto" means the same on every such machine.
        return built[0] if len(built) == 1 else Flavour.OPENMPI
    detected = flavour_from_version_text(_mpiexec_version_text())
    if detected is None:
        raise MpilensError(
            'cannot tell which MPI to use: no mpilens build found and "mpiexec '
            '--version" names neither Open MPI nor MPICH; choose with --mpi '
            "openmpi or --mpi mpich"
        )
    return detected


def in_slurm_allocation() -> bool:
    return bool(os.environ.get("SLURM_JOB_ID")) and shutil.which("srun") is not None


def default_launcher(flavour: Flavour) -> str:
    """srun inside a Slurm allocation, otherwise the flavour's own launcher."""
    if in_slurm_allocation():
        return "srun"
    specific, generic = (
        ("mpirun.openmpi", "mpirun") if flavour == Flavour.OPENMPI else ("mpiexec.mpich", "mpiexec")
    )
    return specific if shutil.which(specific) else generic


# The PMI plugin srun must give each flavour's ranks: Open MPI wires its ranks up through PMIx,
# MPICH (its built-in PMI client) through PMI-2.
_SRUN_PMI = {Flavour.OPENMPI: "pmix", Flavour.MPICH: "pmi2"}


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
    wanted = _SRUN_PMI[flavour]
    return [f"--mpi={wanted}"] if wanted in srun_mpi_plugins() else []


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _check_ranks(np: object) -> int:
    if isinstance(np, bool) or not isinstance(np, int) or np < 1:
        raise MpilensError(f'invalid number of ranks "{np}": expected an integer of at least 1')
    return np


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
        return "openmpi" if flavour == Flavour.OPENMPI else "hydra"
    if name in _OPENMPI_LAUNCHERS:
        return "openmpi"
    return "hydra" if name in _HYDRA_LAUNCHERS else None


def _env_options(style: str, env: Mapping[str, str]) -> List[str]:
    if style == "openmpi":
        return [word for name, value in env.items() for word in ("-x", f"{name}={value}")]
    if style == "hydra":
        return [word for name, value in env.items() for word in ("-genv", name, value)]
    # srun's --export separates its variables with commas, so no value may hold one.
    for name, value in env.items():
        if "," in value:
            raise MpilensError(
                f'cannot pass {name}="{value}" to the ranks through srun: its '
                "--export option cannot carry a comma; choose paths without one"
            )
    return ["--export=" + ",".join(["ALL", *(f"{name}={value}" for name, value in env.items())])]


def process_env(
    launcher: str, flavour: Flavour, env: Optional[Mapping[str, str]]
) -> Dict[str, str]:
    """The variables of env to set in the launcher's own environment: all of them for a launcher
    mpilens does not know (which must then pass its environment on to the ranks), none for one
    it knows (build_command puts them on its command line, so the launcher process itself is
    not affected, e.g. by LD_PRELOAD)."""
    return dict(env or {}) if _env_style(launcher, flavour) is None else {}


def _with_env(prefix: List[str], flavour: Flavour, env: Optional[Mapping[str, str]]) -> List[str]:
    """The launcher's options for env go right after its command, before any words of a user's
    launcher that may belong to a wrapper (srun -n 4 singularity exec ...)."""
    style = _env_style(prefix[0], flavour)
    if not env or style is None:
        return prefix
    return [prefix[0], *_env_options(style, env), *prefix[1:]]


def build_command(
    flavour: Flavour,
    np: int,
    program: PathLike,
    args: Sequence[str],
    *,
    launcher: Optional[str] = None,
    cpus: Optional[int] = None,
    euid: Optional[int] = None,
    env: Optional[Mapping[str, str]] = None,
) -> List[str]:
    """The full command line: launcher prefix, program, program arguments.

    launcher is the user's --launcher string; "{np}" in it becomes the rank count, and without
    it "-n <np>" is appended. Without one, the flavour's launcher gets the options it needs.
    env: variables every rank must see, given as options to a launcher mpilens knows (-x for
    Open MPI, -genv for MPICH's hydra, --export for srun); see process_env for the others.
    """
    np = _check_ranks(np)
    if launcher is not None:
        try:
            words = shlex.split(launcher)
        except ValueError as error:
            raise MpilensError(
                f'invalid --launcher "{launcher}": {str(error).lower()}; quote as a shell would'
            ) from None
        if not words:
            raise MpilensError('--launcher is empty: give a command such as "mpirun -n {np}"')
        if any("{np}" in word for word in words):
            prefix = [word.replace("{np}", str(np)) for word in words]
        else:
            prefix = words + ["-n", str(np)]
        return _with_env(prefix, flavour, env) + [str(program)] + list(args)
    name = default_launcher(flavour)
    prefix = [name, "-n", str(np)]
    if Path(name).name == "srun":
        prefix += srun_mpi_option(flavour)
    if flavour == Flavour.OPENMPI and Path(name).name != "srun":
        # Open MPI's mpirun refuses more ranks than cores, and refuses root, unless told
        # otherwise; hydra (MPICH) and srun need neither.
        if np > (usable_cpus() if cpus is None else cpus):
            prefix.append("--oversubscribe")
        if (os.geteuid() if euid is None else euid) == 0:
            prefix.append("--allow-run-as-root")
    return _with_env(prefix, flavour, env) + [str(program)] + list(args)


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
        f'launcher "{first}" not found; install {FLAVOUR_NAMES[flavour]}, choose '
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


def _stop(process: subprocess.Popen, signum: int) -> None:
    """After an interrupt: pass its signal on to the launched job (its own process group, which
    the terminal's Ctrl-C does not reach), give it a moment, then insist."""
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
        _stop(process, getattr(interrupt, "signum", signal.SIGINT))
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
        _stop(process, getattr(interrupt, "signum", signal.SIGINT))
        raise
    finally:
        _reap(process)
    if process.returncode != 0:
        raise MpilensError(_failure(cmd, process.returncode))
    return output
