"""The piggyback family (seed 001): what does attaching piggyback data to every message cost?

Its command, `mpilens piggyback`: its options, the runs of mpilens-piggyback it makes under each
layer configuration, the example applications timed with and without the layer, and the auto
threshold it measures and writes where the layer reads it."""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .. import __version__, launch, results
from ..analysis import piggyback
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
from ..plots import piggyback as plots
from ..progress import Progress
from ..text import short_library
from ..units import format_size, parse_size

PROGRAM = "mpilens-piggyback"
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
# What an example application may print beside checksum and time_s.
APP_OPTIONAL = ("time_max_s", "residual")

# The program's options for the repetitions of every point, by preset; the message sizes of the
# sweep of each method (seed 001 figure 2: 1 B to 4 MiB); and the example applications (seed 001
# figure 4), sized so that one solve takes a fraction of a second at 2 ranks on a laptop core: a
# run of --repeat solves then lasts about a second.
PRESETS = {"quick": ["--budget", "50ms"], "default": [], "full": ["--budget", "1s"]}
SIZES = {"quick": "1:1M", "default": "1:4M", "full": "1:4M"}
APP_REPEAT = {"quick": 3, "default": 3, "full": 5}
# (program, its size options, iterations by preset)
APPS = {
    "sweep": ("mpilens-example-sweep", ["--n", "32"], {"quick": 6, "default": 6, "full": 16}),
    "cg": ("mpilens-example-cg", ["--n", "32"], {"quick": 400, "default": 400, "full": 1200}),
}


# --methods: the layer's methods, or all, in the layer's order.
METHODS = Names(
    piggyback.METHODS,
    "method",
    "pack-before,separate",
    {piggyback.NONE: "the run without the layer is always made"},
)


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
                f"to {piggyback.PB_SIZE_MAX} separated by commas, such as {PIGGYBACK_PB_SIZES}"
            )
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
            f"{APP_SCALE_MAX:g}, such as 0.1 or 2"
        )
    return scale


def _add_arguments(sub: argparse.ArgumentParser, family: Family) -> None:
    group = add_study_options(sub, "piggyback")
    METHODS.add_option(
        group,
        "--methods",
        f"methods of the layer, separated by commas: {METHODS.listing()} (default all)",
    )
    group.add_argument(
        "--pb-sizes",
        type=_pb_sizes,
        default=list(piggyback.PB_SIZES),
        metavar="LIST",
        help=(
            "pb sizes in bytes (0 to 65536) at which latency at "
            f"{format_size(piggyback.PB_LATENCY_SIZE)} and bandwidth at "
            f"{format_size(piggyback.PB_BANDWIDTH_SIZE)} are measured "
            f"(default {PIGGYBACK_PB_SIZES})"
        ),
    )
    add_preset_flag(
        group,
        "--apps",
        "also time the example applications (sweep, cg) with and without the layer",
    )
    group.add_argument(
        "--app-scale",
        type=_app_scale,
        default=1.0,
        metavar="X",
        help=(
            "multiply the applications' iterations by X, such as 0.1 for a "
            "smoke test (default 1: a solve lasts a fraction of a second)"
        ),
    )
    group.add_argument(
        "--no-auto-file",
        dest="auto_file",
        action="store_false",
        help="do not write the measured auto threshold into the file the layer reads",
    )
    add_lib_dir(group, PIGGYBACK_LIBRARY)


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
        return f"app/app={self.app}/recv={self.recv}/method={self.method}/pb_size={self.pb_size}"


def _piggyback_runs(args: argparse.Namespace, family: Family, outdir: Path) -> List[PiggybackRun]:
    """The program's runs, in the order they are made: the library alone, then each method over
    message sizes (auto last, so that it can use the threshold measured before it), then the
    pb-size sweep. The pb size of the first sweep (4 B) needs no run of its own."""
    repetitions = family.preset_args(args.preset)

    def program_args(output: Path, *measure: str) -> List[str]:
        return [*repetitions, *measure, *program_tail(output, args.resume)]

    sizes = SIZES[args.preset]
    planned = []
    for method in (piggyback.NONE, *args.methods):
        output = outdir / f"piggyback-{method}.jsonl"
        pb_size = 0 if method == piggyback.NONE else piggyback.MAIN_PB_SIZE
        planned.append(
            PiggybackRun(method, pb_size, None, output, program_args(output, "--sizes", sizes))
        )
    for method in args.methods:
        for pb_size in args.pb_sizes:
            if pb_size == piggyback.MAIN_PB_SIZE:
                continue
            for bench, size in (
                (piggyback.LATENCY, piggyback.PB_LATENCY_SIZE),
                (piggyback.BANDWIDTH, piggyback.PB_BANDWIDTH_SIZE),
            ):
                output = outdir / f"piggyback-{method}-pb{pb_size}-{bench}.jsonl"
                planned.append(
                    PiggybackRun(
                        method,
                        pb_size,
                        bench,
                        output,
                        program_args(
                            output,
                            "--sizes",
                            f"{size}:{size}",
                            "--bench",
                            bench,
                            "--recv",
                            "specific",
                        ),
                    )
                )
    return planned


def _app_runs(args: argparse.Namespace) -> List[AppRun]:
    planned = []
    for app in piggyback.APPS:
        for recv in piggyback.RECVS:
            planned.append(AppRun(app, recv, piggyback.NONE, 0))
            planned += [
                AppRun(app, recv, method, pb_size)
                for method in args.methods
                for pb_size in piggyback.APP_PB_SIZES
            ]
    return planned


def _app_args(args: argparse.Namespace, app: str) -> List[str]:
    _, sizes, iterations = APPS[app]
    scaled = max(1, round(iterations[args.preset] * args.app_scale))
    return [*sizes, "--iterations", str(scaled), "--repeat", str(APP_REPEAT[args.preset])]


def _app_options(args: argparse.Namespace) -> Dict[str, str]:
    """What the applications' file was measured with; --resume must find the same."""
    return {
        "apps": ",".join(piggyback.APPS),
        "methods": ",".join(args.methods),
        "pb_sizes": ",".join(str(size) for size in piggyback.APP_PB_SIZES),
        "np": str(args.np),
        **{app: " ".join(_app_args(args, app)) for app in piggyback.APPS},
    }


def _layer_env(
    library: Path, method: str, pb_size: int, threshold: Optional[int]
) -> Dict[str, str]:
    """What every rank needs for one layer configuration; nothing without the layer."""
    if method == piggyback.NONE:
        return {}
    settings = {
        name: value
        for name, value in os.environ.items()
        if name.startswith(PIGGYBACK_SETTINGS) and name not in PIGGYBACK_OWN
    }
    env = {
        **settings,
        "LD_PRELOAD": str(library),
        "MPILENS_PB_METHOD": method,
        "MPILENS_PB_SIZE": str(pb_size),
        "MPILENS_PB_DRIVER": PIGGYBACK_DRIVER,
    }
    # auto is measured with the threshold just measured, unless the user set one.
    if method == "auto" and threshold is not None and piggyback.AUTO_ENV not in env:
        env[piggyback.AUTO_ENV] = str(threshold)
    return env


class _Launcher(EnvLauncher):
    """The commands of mpilens piggyback: one launcher and rank count, an environment for each
    layer configuration."""

    def __init__(self, args: argparse.Namespace, flavour: launch.Flavour, library: Path) -> None:
        super().__init__(args, flavour)
        self.library = library
        self.threshold: Optional[int] = None

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
            "to them)"
        )


def _run_piggyback(launcher: _Launcher, program: Path, planned: PiggybackRun) -> results.Run:
    env = launcher.env(planned.method, planned.pb_size)
    run = launcher.run(program, planned.args, env, planned.output, planned.label)
    _check_layer(run, planned)
    return run


def _app_measurement(text: str, command: Sequence[str]) -> Tuple[str, float, Dict[str, float]]:
    """checksum, time_s and the optional figures (time_max_s: the longest solve; residual: cg's)
    from what rank 0 of an application printed."""
    found = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] in ("checksum", "time_s", *APP_OPTIONAL):
            found[words[0]] = words[1]
    try:
        time_s = float(found["time_s"])
        checksum = found["checksum"]
    except (KeyError, ValueError):
        raise MpilensError(
            f'"{shlex.join(command)}" did not print its "checksum" and "time_s" '
            f"lines; it printed: {text.strip()[:300]!r}"
        ) from None
    optional = {name: _number(found.get(name)) for name in APP_OPTIONAL}
    return (
        checksum,
        time_s,
        {name: number for name, number in optional.items() if number is not None},
    )


def _number(text: Optional[str]) -> Optional[float]:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _apps_meta(args: argparse.Namespace, base: results.Run, total: int) -> Dict[str, object]:
    """The applications' meta record. They run with the programs' build, so under the MPI
    library the program without the layer found; they say nothing of the machine themselves."""
    return {
        "type": "meta",
        "schema": results.SUPPORTED_SCHEMA,
        "family": piggyback.FAMILY,
        "program": "mpilens piggyback (example applications)",
        "mpilens_version": __version__,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": ["mpilens", *getattr(args, "argv", [])],
        "mpi": base.meta.get("mpi"),
        "ranks": args.np,
        "nodes": base.meta.get("nodes"),
        "hosts": base.meta.get("hosts"),
        "options": _app_options(args),
        "points_total": total,
    }


def _record_line(record: Mapping[str, object]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _apps_done(path: Path, args: argparse.Namespace) -> set:
    """The applications' points already in the file being resumed."""
    if not path.exists():
        return set()
    run = results.load(path)
    if run.meta.get("options") != _app_options(args):
        raise MpilensError(
            f'cannot resume "{path}": it was measured with other options (methods, '
            "rank count or application sizes); run with those, or choose another "
            "--output"
        )
    return {point["key"] for point in run.points}


def _run_apps(
    args: argparse.Namespace,
    launcher: _Launcher,
    programs: Mapping[str, Path],
    base: results.Run,
    path: Path,
    done: set,
) -> None:
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
                ["--wildcard"] if app_run.recv == "wildcard" else []
            )
            command = launcher.command(programs[app_run.app], app_args, env)
            own_env = launcher.announce(command, env)
            checksum, time_s, optional = _app_measurement(
                launch.run_captured(command, env=own_env), command
            )
            stats: Dict[str, object] = {"time_s": time_s, "checksum": checksum, **optional}
            out.write(
                _record_line(
                    {
                        "type": "point",
                        "family": piggyback.FAMILY,
                        "bench": piggyback.APP,
                        "key": app_run.key,
                        "params": {
                            "app": app_run.app,
                            "recv": app_run.recv,
                            "method": app_run.method,
                            "pb_size": app_run.pb_size,
                            "args": app_args,
                        },
                        "stats": stats,
                    }
                )
            )
            out.flush()
            finished += 1
            progress.update(finished, len(planned))
    progress.finish()


def _auto_file_line(
    args: argparse.Namespace, measured: results.Run, threshold: Optional[piggyback.Threshold]
) -> str:
    """Write the threshold for this library where the layer reads it; say what was done."""
    path = piggyback.auto_file_path()
    if threshold is None:
        why = piggyback.auto_threshold_missing(measured)
        return f"auto threshold: not measured ({why}); {path} left as it was"
    what = f"auto threshold: {threshold.size} bytes"
    if not args.auto_file:
        return f"{what} (not written: --no-auto-file)"
    library = piggyback.library_line(measured)
    if library is None:
        return f"{what} (not written: the results do not name the MPI library)"
    piggyback.write_auto_file(path, library, threshold.size)
    return f'{what} for "{short_library(library)}", written to {path}'


def _check_auto_file() -> None:
    """The auto threshold file must be writable: found out before the runs, not after them."""
    path = piggyback.auto_file_path()
    existing = next(parent for parent in (path, *path.parents) if parent.exists())
    if (existing == path and not (path.is_file() and os.access(path, os.W_OK))) or (
        existing != path and not (existing.is_dir() and os.access(existing, os.W_OK))
    ):
        raise MpilensError(
            f'cannot write the auto threshold file "{path}"; give --no-auto-file, '
            "or set MPILENS_PB_AUTO_FILE to a writable file"
        )


def _run(args: argparse.Namespace, family: Family) -> Outcome:
    check_resume(args)
    if args.np < family.min_ranks:
        raise MpilensError(f"piggyback needs at least {family.min_ranks} ranks; --np is {args.np}")
    flavour = launch.resolve_flavour(args.mpi)
    program = launch.find_program(family.program, flavour, args.bin_dir)
    library = launch.find_library(PIGGYBACK_LIBRARY, flavour, args.lib_dir, args.bin_dir)
    apps = preset_flag(args.apps, args.preset)
    app_programs = (
        {
            app: launch.find_program(name, flavour, args.bin_dir)
            for app, (name, _, _) in APPS.items()
        }
        if apps
        else {}
    )
    outdir = output_dir(args.output, flavour)
    planned = _piggyback_runs(args, family, outdir)
    apps_path = outdir / PIGGYBACK_APPS_FILE
    for output in [run.output for run in planned] + ([apps_path] if apps else []):
        check_new(output, args.resume)
    apps_done = _apps_done(apps_path, args) if apps else set()
    if args.auto_file:
        _check_auto_file()
    launcher = _Launcher(args, flavour, library)
    launcher.check(program, outdir)

    # auto runs with the threshold measured by the runs before it (see _piggyback_runs).
    before = [one for one in planned if one.bench is None and one.method != "auto"]
    runs = [_run_piggyback(launcher, program, one) for one in before]
    measured = piggyback.combine(runs)
    threshold = piggyback.auto_threshold(piggyback.measurements(measured))
    launcher.threshold = threshold.size if threshold else None
    threshold_line = _auto_file_line(args, measured, threshold)
    runs += [_run_piggyback(launcher, program, one) for one in planned if one not in before]
    if apps:
        _run_apps(args, launcher, app_programs, runs[0], apps_path, apps_done)
        runs.append(results.load(apps_path))
    mismatches = piggyback.checksum_mismatches(piggyback.combine(runs))
    failure = (
        (
            "the layer changed the applications' results: "
            + "; ".join(str(mismatch) for mismatch in mismatches)
        )
        if mismatches
        else None
    )
    return Outcome(runs, outdir, results=outdir, notes=[threshold_line], failure=failure)


FAMILY = study_family(
    "piggyback",
    PROGRAM,
    "What does attaching piggyback data to every message cost? Latency and bandwidth under each "
    "method of libmpilens-piggyback against the library alone, over message and pb sizes, and "
    "the overhead on two applications (seed 001)",
    piggyback,
    plots,
    Command(
        _add_arguments,
        _run,
        description=(
            f"Run {PROGRAM} without libmpilens-piggyback, then under each method "
            f"with a {piggyback.MAIN_PB_SIZE}-byte pb over message sizes and at several "
            "pb sizes, and the example applications with and without the layer; write "
            "the threshold of the auto method for this MPI library, a table, a "
            "diagnosis and DIR/report.html (seed 001)."
        ),
    ),
    presets=PRESETS,
    verdict=piggyback.verdict,
)
