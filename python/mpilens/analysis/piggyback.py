"""What the piggyback family's points say: the cost of each method of libmpilens-piggyback
against the MPI library alone (seed 001, section 4), the threshold `auto` should use on this
library, whether `auto` meets its goal, and the overhead on the example applications.

The contract is docs/piggyback.md ("Measuring the cost") and docs/results-schema.md
("piggyback"). `mpilens piggyback` writes one file per layer configuration: the baseline without
the layer (method "none"), one sweep over message sizes per method with a 4-byte pb, the pb-size
sweep (latency at 4 B and bandwidth at 512 KiB, one file per method, pb size and benchmark), and
the example applications (bench "app", one file). The report reads them as one run (combine);
every point names its method and pb size in params. Plain Python (no numpy): the CLI imports it
on every start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..errors import MpilensError
from ..results import Record, Run, join_files, record_integer, record_number
from ..text import columns as aligned_columns
from ..text import percent
from ..units import format_size, format_time, short_size
from .overlap import run_names

FAMILY = "piggyback"
NONE = "none"
# The layer's methods (MPILENS_PB_METHOD), in the order of docs/piggyback.md.
METHODS = (
    "pack-before",
    "pack-after",
    "datatype-before",
    "datatype-after",
    "separate",
    "separate-after",
    "auto",
)
RECVS = ("specific", "wildcard")
LATENCY, BANDWIDTH, APP = "latency", "bandwidth", "app"
PB_SIZE_MAX = 65536
# The seed's set-up: every method's sweep over message sizes carries a 4-byte pb (figure 2); the
# pb sizes are swept at 4-byte messages for latency and 512 KiB for bandwidth (figure 3); the
# applications run with 4 B and 4 KiB pbs (figure 4).
MAIN_PB_SIZE = 4
PB_SIZES = (4, 64, 512, 4096)
PB_LATENCY_SIZE = 4
PB_BANDWIDTH_SIZE = 512 * 1024
APP_PB_SIZES = (4, 4096)
APPS = ("sweep", "cg")
APP_NAMES = {
    "sweep": "sweep (compute-bound, Sweep3D-like)",
    "cg": "cg (communication-bound, SMG2000-like)",
}
# The comparison pits datatype-before (a struct type, no copy) against pack-before (a copy): auto
# sends the same bytes either way, pb first, and switches between them at the threshold.
AUTO_PACK, AUTO_DATATYPE = "pack-before", "datatype-before"
AUTO_ENV = "MPILENS_PB_AUTO_DATATYPE_FROM"
AUTO_FILE_ENV = "MPILENS_PB_AUTO_FILE"
# auto's goal (the issue of the layer): at most 10% more latency at 1 B, and at most 2% less
# bandwidth from 1 MiB on, against the library alone. Reported, never asserted.
LATENCY_GOAL = 0.10
BANDWIDTH_GOAL = 0.02
BANDWIDTH_GOAL_FROM = 1 << 20
# The key figures of the printed table: latency at 1 B, bandwidth at 1 MiB and 4 MiB.
KEY_LATENCY_SIZE = 1
KEY_BANDWIDTH_SIZES = (1 << 20, 4 << 20)


def _params(point: Record) -> Record:
    params = point.get("params")
    return params if isinstance(params, dict) else {}


def method_order(methods: Iterable[str]) -> List[str]:
    """Methods in report order: the layer's in its order, unknown names after, none excluded."""
    methods = set(methods) - {NONE}
    return [m for m in METHODS if m in methods] + sorted(m for m in methods if m not in METHODS)


# --- reading several files as one run ----------------------------------------------------------


def _identity(point: Record) -> Tuple:
    """What a point measured, whichever file holds it."""
    params = _params(point)
    if point.get("bench") == APP:
        return (
            APP,
            params.get("app"),
            params.get("recv"),
            params.get("method"),
            params.get("pb_size"),
        )
    return (
        point.get("bench"),
        params.get("recv"),
        params.get("method"),
        params.get("pb_size"),
        params.get("size_bytes"),
    )


def _describe(identity: Tuple) -> str:
    if identity[0] == APP:
        _, app, recv, method, pb = identity
        return f"{app} ({recv} receives) under {method} with a {pb}-byte pb"
    bench, recv, method, pb, size = identity
    return f"{bench} at {size} bytes ({recv} receives) under {method} with a {pb}-byte pb"


def _member_order(run: Run) -> Tuple[int, str]:
    """The baseline first, then the methods in report order, the applications last."""
    layer = run.meta.get("piggyback")
    method = layer.get("method") if isinstance(layer, dict) else None
    order = (NONE, *METHODS)
    rank = order.index(method) if method in order else len(order) + bool(run.points_of(APP))
    return rank, run.path.name


def combine(runs: Sequence[Run]) -> Run:
    """The files of one `mpilens piggyback` study, read as one run (results.join_files): the
    baseline's meta (the run without the layer, else the first file's); two files holding the
    same measurement (method, pb size, benchmark, receives, size) are refused."""
    return join_files(
        runs,
        _member_order,
        lambda member, point: _identity(point),
        _describe,
        "no piggyback results to read",
    )


# --- point-to-point measurements ----------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """One curve: a benchmark with one kind of receive under one layer configuration."""

    bench: str
    recv: str
    method: str
    pb_size: int


Found = Dict[Config, Dict[int, float]]


def value(point: Record) -> Optional[float]:
    """A point's figure: latency in ns, or bandwidth in bytes per second."""
    stats = point.get("stats") or {}
    if point.get("bench") == LATENCY:
        return record_number(stats.get("latency_ns"))
    if point.get("bench") == BANDWIDTH:
        return record_number(stats.get("bandwidth_Bps"))
    return None


def _located(run: Run) -> List[Tuple[Config, int, Record]]:
    """(configuration, message size, point) of every point-to-point point with a figure."""
    every = []
    for point in run.points:
        if point.get("family", FAMILY) != FAMILY or point.get("bench") not in (LATENCY, BANDWIDTH):
            continue
        params = _params(point)
        recv, method = params.get("recv"), params.get("method")
        pb, size = record_integer(params.get("pb_size")), record_integer(params.get("size_bytes"))
        if (
            isinstance(recv, str)
            and isinstance(method, str)
            and pb is not None
            and size is not None
            and value(point) is not None
        ):
            every.append((Config(point["bench"], recv, method, pb), size, point))
    return every


def _time_interval(point: Record) -> Optional[Tuple[float, float]]:
    """The interval of the median time per repetition (one-way latency, or window time)."""
    sample = (point.get("stats") or {}).get("sample")
    if not isinstance(sample, dict):
        return None
    low, high = record_number(sample.get("ci_lo")), record_number(sample.get("ci_hi"))
    return None if low is None or high is None else (low, high)


def _against_floor(run: Run) -> List[Tuple[Config, int, Record, bool]]:
    """(configuration, message size, point, whether it is below the floor) of every point with
    the layer whose time and the library alone's at the same size both have an interval."""
    located = _located(run)
    floors = {
        (config.bench, config.recv, size): _time_interval(point)
        for config, size, point in located
        if config.method == NONE
    }
    found = []
    for config, size, point in located:
        mine, floor = _time_interval(point), floors.get((config.bench, config.recv, size))
        if config.method != NONE and mine is not None and floor is not None:
            found.append((config, size, point, mine[1] < floor[0]))
    return found


def below_floor(run: Run) -> List[Tuple[Config, int]]:
    """The points with the layer faster than the library alone beyond both intervals (their
    one-way or window times): the layer only adds work to a message, so such a ratio cannot be
    true; the machine or the library changed between the runs."""
    return [(config, size) for config, size, _, below in _against_floor(run) if below]


# Why below_floor leaves a point out, for `mpilens export`.
INVALID_BELOW_FLOOR = (
    "faster with the layer than without it, beyond the noise of both, which the layer cannot "
    "make (it only adds work)"
)


def validity(run: Run) -> List[Tuple[Record, Optional[str]]]:
    """Every point with the layer that has the library alone's to compare with, with why it
    cannot be true (None when it can)."""
    judged = [
        (point, INVALID_BELOW_FLOOR if below else None)
        for _, _, point, below in _against_floor(run)
    ]
    verdicts = _all_overheads(run)
    for point in run.points_of(APP):
        key = app_key(point)
        if key in verdicts:
            judged.append((point, INVALID_APP_FASTER if verdicts[key][1] else None))
    return judged


def below_floor_figures(run: Run) -> List[Tuple[Config, int, float]]:
    """below_floor's points with their figures, for the plots."""
    impossible = set(below_floor(run))
    return [
        (config, size, figure)
        for config, size, point in _located(run)
        if (config, size) in impossible and (figure := value(point)) is not None
    ]


def measurements(run: Run, keep_invalid: bool = False) -> Found:
    """configuration → message size → figure, for every point-to-point point with a figure, but
    those below the no-layer floor (below_floor) unless keep_invalid."""
    impossible = set() if keep_invalid else set(below_floor(run))
    found: Found = {}
    for config, size, point in _located(run):
        figure = value(point)
        if figure is not None and (config, size) not in impossible:
            found.setdefault(config, {})[size] = figure
    return found


def _floor_sentences(run: Run) -> List[str]:
    found = below_floor(run)
    if not found:
        return []
    shown = ", ".join(
        f"{config.method} pb {config.pb_size} B {config.bench} {config.recv} {format_size(size)}"
        for config, size in found[:3]
    )
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return [
        f"warning: {len(found)} point{'s' if len(found) > 1 else ''} INVALID and left out: "
        "faster with the layer than without it, beyond the noise of both, which the layer "
        f"cannot make (it only adds work): {shown}{more}; measure the methods and the "
        "baseline again together, on a quiet machine"
    ]


def methods_measured(found: Found) -> List[str]:
    return method_order(config.method for config in found)


def recvs_measured(found: Found) -> List[str]:
    recvs = {config.recv for config in found}
    return [recv for recv in RECVS if recv in recvs] + sorted(recvs - set(RECVS))


def baseline(found: Found, bench: str, recv: str) -> Dict[int, float]:
    """The library alone: message size → figure."""
    return found.get(Config(bench, recv, NONE, 0), {})


def size_curves(
    found: Found, bench: str, recv: str, pb_size: int = MAIN_PB_SIZE
) -> Dict[str, Dict[int, float]]:
    """Figure 2: method → message size → figure at one pb size, the baseline as "none"."""
    curves = {NONE: baseline(found, bench, recv)} if baseline(found, bench, recv) else {}
    for method in methods_measured(found):
        curve = found.get(Config(bench, recv, method, pb_size))
        if curve:
            curves[method] = curve
    return curves


def ratio_curves(
    found: Found, bench: str, recv: str, pb_size: int = MAIN_PB_SIZE
) -> Dict[str, Dict[int, float]]:
    """method → message size → figure with the layer / figure without, where both exist."""
    base = baseline(found, bench, recv)
    curves = {}
    for method, curve in size_curves(found, bench, recv, pb_size).items():
        if method == NONE:
            continue
        ratios = {
            size: figure / base[size] for size, figure in curve.items() if base.get(size, 0) > 0
        }
        if ratios:
            curves[method] = ratios
    return curves


def ratio(
    found: Found, method: str, bench: str, recv: str, size: int, pb_size: int = MAIN_PB_SIZE
) -> Optional[float]:
    """One figure with the layer over the same without it."""
    return ratio_curves(found, bench, recv, pb_size).get(method, {}).get(size)


def pb_curves(found: Found, bench: str, recv: str, size: int) -> Dict[str, Dict[int, float]]:
    """Figure 3: method → pb size → figure at one message size."""
    curves: Dict[str, Dict[int, float]] = {}
    for config, by_size in found.items():
        if (
            config.bench == bench
            and config.recv == recv
            and config.method != NONE
            and size in by_size
        ):
            curves.setdefault(config.method, {})[config.pb_size] = by_size[size]
    return {method: dict(sorted(curves[method].items())) for method in method_order(curves)}


def cost(bench: str, ratio_value: float) -> float:
    """How much a method costs, whatever the benchmark: the latency added, the bandwidth lost."""
    return ratio_value - 1 if bench == LATENCY else 1 - ratio_value


def ranking(found: Found, bench: str, recv: str, size: int) -> List[Tuple[str, float]]:
    """(method, ratio to the baseline) at one size with the 4-byte pb, cheapest first."""
    entries = [
        (method, curve[size])
        for method, curve in ratio_curves(found, bench, recv).items()
        if size in curve
    ]
    return sorted(entries, key=lambda entry: (cost(bench, entry[1]), entry[0]))


def small_size(found: Found, recv: str) -> Optional[int]:
    """The message size standing for small messages: the smallest non-empty one measured."""
    sizes = [size for size in baseline(found, LATENCY, recv) if size > 0]
    return min(sizes) if sizes else None


def large_size(found: Found, recv: str) -> Optional[int]:
    """The message size standing for large messages: the largest one measured."""
    sizes = list(baseline(found, BANDWIDTH, recv))
    return max(sizes) if sizes else None


# --- auto's threshold and goal ------------------------------------------------------------------


@dataclass(frozen=True)
class Threshold:
    """Where auto should switch from packing to a struct type on this library."""

    size: int  # payload bytes from which a struct type is used
    never: bool  # datatype-before stayed slower up to the largest size measured
    largest: int  # the largest size compared


def auto_threshold(found: Found, recv: str = "specific") -> Optional[Threshold]:
    """The smallest size from which datatype-before's latency is not above pack-before's at that
    size and every larger one (4-byte pb); when the largest size already fails, twice it. None
    when either method's latency was not measured at a common size."""
    datatype = found.get(Config(LATENCY, recv, AUTO_DATATYPE, MAIN_PB_SIZE), {})
    pack = found.get(Config(LATENCY, recv, AUTO_PACK, MAIN_PB_SIZE), {})
    sizes = sorted(set(datatype) & set(pack))
    if not sizes:
        return None
    start = None
    for size in reversed(sizes):
        if datatype[size] > pack[size]:
            break
        start = size
    if start is None:
        return Threshold(max(2 * sizes[-1], 1), True, sizes[-1])
    return Threshold(start, False, sizes[-1])


def auto_threshold_missing(run: Run, recv: str = "specific") -> str:
    """Why auto_threshold finds no threshold in run's measurements: the two methods' latencies
    were not both measured, or there would be one but for points left out as INVALID
    (below_floor: the library alone was slower in its run than with a layer, so the runs cannot
    be compared; seen on a loaded machine)."""
    if auto_threshold(measurements(run, keep_invalid=True), recv) is None:
        return f"it needs the latency of {AUTO_PACK} and {AUTO_DATATYPE}: add them to --methods"
    return (
        f"at every size where {AUTO_PACK} and {AUTO_DATATYPE} were both measured, one of them is "
        "INVALID (faster with the layer than without it); measure again on a quiet machine"
    )


def auto_threshold_used(run: Run) -> Optional[int]:
    """The threshold the auto runs were measured with, when mpilens set it (their meta's env)."""
    for member in run.members or [run]:
        layer = member.meta.get("piggyback")
        env = member.meta.get("env")
        if isinstance(layer, dict) and layer.get("method") == "auto" and isinstance(env, dict):
            text = env.get(AUTO_ENV)
            if isinstance(text, str) and text.strip().isdigit():
                return int(text)
    return None


@dataclass(frozen=True)
class Goal:
    """auto against its goal, with the 4-byte pb."""

    recv: str
    latency_size: Optional[int]
    latency_ratio: Optional[float]  # at latency_size
    bandwidth_size: Optional[int]  # where the bandwidth loss is worst, from 1 MiB on
    bandwidth_ratio: Optional[float]

    @property
    def latency_met(self) -> Optional[bool]:
        return None if self.latency_ratio is None else self.latency_ratio - 1 <= LATENCY_GOAL

    @property
    def bandwidth_met(self) -> Optional[bool]:
        return None if self.bandwidth_ratio is None else 1 - self.bandwidth_ratio <= BANDWIDTH_GOAL

    @property
    def met(self) -> Optional[bool]:
        verdicts = [self.latency_met, self.bandwidth_met]
        return None if None in verdicts else all(verdicts)


def auto_goal(found: Found, recv: str = "specific") -> Optional[Goal]:
    """auto's latency at 1 B (else the smallest size) and its worst bandwidth from 1 MiB on,
    as ratios to the library alone; None when auto was not measured."""
    latency = ratio_curves(found, LATENCY, recv).get("auto")
    bandwidth = ratio_curves(found, BANDWIDTH, recv).get("auto")
    if not latency and not bandwidth:
        return None
    latency_size = (
        KEY_LATENCY_SIZE
        if latency and KEY_LATENCY_SIZE in latency
        else min((s for s in latency or {} if s > 0), default=None)
    )
    large = {size: r for size, r in (bandwidth or {}).items() if size >= BANDWIDTH_GOAL_FROM}
    worst = min(large, key=lambda size: large[size]) if large else None
    return Goal(
        recv,
        latency_size,
        latency[latency_size] if latency and latency_size is not None else None,
        worst,
        large[worst] if worst is not None else None,
    )


# --- the auto threshold file the layer reads ----------------------------------------------------


def auto_file_path(environ: Optional[Mapping[str, str]] = None) -> Path:
    """Where the layer reads auto's thresholds: MPILENS_PB_AUTO_FILE, else
    $XDG_CONFIG_HOME/mpilens/piggyback-auto, else ~/.config/mpilens/piggyback-auto."""
    environ = os.environ if environ is None else environ
    if environ.get(AUTO_FILE_ENV):
        return Path(environ[AUTO_FILE_ENV])
    if environ.get("XDG_CONFIG_HOME"):
        return Path(environ["XDG_CONFIG_HOME"]) / "mpilens" / "piggyback-auto"
    home = environ.get("HOME") or "."
    return Path(home) / ".config" / "mpilens" / "piggyback-auto"


def library_line(run: Run) -> Optional[str]:
    """The MPI library as the layer names it: the first line of MPI_Get_library_version."""
    mpi = run.meta.get("mpi")
    if not isinstance(mpi, dict):
        return None
    text = mpi.get("library_full") or mpi.get("library")
    if not isinstance(text, str):
        return None
    line = text.split("\n", 1)[0]
    return line if line.strip() else None


def auto_file_text(old: str, library: str, threshold: int) -> str:
    """The file with this library's line replaced (or added at the end), the others kept as they
    were. A line's library is everything before its last tab: MPICH's own name holds one."""
    new = f"{library}\t{threshold}"
    lines, replaced = [], False
    for line in old.splitlines():
        if "\t" in line and line.rsplit("\t", 1)[0] == library:
            if not replaced:
                lines.append(new)
                replaced = True
            continue
        lines.append(line)
    if not replaced:
        lines.append(new)
    return "".join(line + "\n" for line in lines)


def write_auto_file(path: Path, library: str, threshold: int) -> None:
    """Write or update this library's line, atomically (the layer may read it at any moment)."""
    try:
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(auto_file_text(old, library, threshold), encoding="utf-8")
        os.replace(temporary, path)
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise MpilensError(
            f'cannot write the auto threshold file "{path}": {reason}; give '
            "--no-auto-file, or set MPILENS_PB_AUTO_FILE to a writable "
            "file"
        ) from None


# --- the applications ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AppKey:
    app: str
    recv: str
    method: str
    pb_size: int


@dataclass(frozen=True)
class AppResult:
    time_s: float  # the shortest of the run's solves
    checksum: str
    time_max_s: Optional[float] = None  # the longest, where the application printed it


def app_key(point: Record) -> Optional[AppKey]:
    """The application run an app point is of; None when its parameters are not all there."""
    params = _params(point)
    app, recv, method = params.get("app"), params.get("recv"), params.get("method")
    pb = record_integer(params.get("pb_size"))
    if (
        isinstance(app, str)
        and isinstance(recv, str)
        and isinstance(method, str)
        and pb is not None
    ):
        return AppKey(app, recv, method, pb)
    return None


def app_results(run: Run) -> Dict[AppKey, AppResult]:
    found = {}
    for point in run.points_of(APP):
        key, stats = app_key(point), point.get("stats") or {}
        time_s, checksum = record_number(stats.get("time_s")), stats.get("checksum")
        if key is not None and isinstance(checksum, str) and time_s is not None:
            longest = record_number(stats.get("time_max_s"))
            found[key] = AppResult(time_s, checksum, longest)
    return found


def app_baseline(results: Mapping[AppKey, AppResult], app: str, recv: str) -> Optional[AppResult]:
    return results.get(AppKey(app, recv, NONE, 0))


def _all_overheads(run: Run) -> Dict[AppKey, Tuple[float, bool]]:
    """Every run under the layer with a baseline: its overhead, and whether faster_everywhere
    holds it."""
    results = app_results(run)
    found = {}
    for key, result in results.items():
        base = app_baseline(results, key.app, key.recv)
        if key.method != NONE and base is not None and base.time_s > 0:
            faster = result.time_max_s is not None and result.time_max_s < base.time_s
            found[key] = (result.time_s / base.time_s, faster)
    return found


def overheads(run: Run) -> Dict[AppKey, float]:
    """Figure 4: time with the layer / time without it, same application and receives; but the
    runs faster than without the layer in every solve (faster_everywhere)."""
    return {key: ratio for key, (ratio, faster) in _all_overheads(run).items() if not faster}


def faster_everywhere(run: Run) -> Dict[AppKey, float]:
    """The runs under the layer whose every solve, the longest too, beat the shortest solve
    without it, with their overheads: the layer only adds work, so the difference is the
    machine's, and such an overhead cannot be true."""
    return {key: ratio for key, (ratio, faster) in _all_overheads(run).items() if faster}


# Why faster_everywhere leaves an application run out, for `mpilens export` and the findings.
INVALID_APP_FASTER = (
    "faster with the layer than without it in every solve, which the layer cannot make (it only "
    "adds work): the machine's noise"
)


@dataclass(frozen=True)
class Mismatch:
    key: AppKey
    checksum: str
    expected: str

    def __str__(self) -> str:
        return (
            f"{self.key.app} ({self.key.recv} receives) under {self.key.method} with a "
            f"{self.key.pb_size}-byte pb gave checksum {self.checksum}, without the layer "
            f"{self.expected}"
        )


def checksum_mismatches(run: Run) -> List[Mismatch]:
    """Runs under the layer whose checksum differs from the run without it: the layer changed
    the application's result."""
    results = app_results(run)
    found = []
    for key, result in results.items():
        base = app_baseline(results, key.app, key.recv)
        if key.method != NONE and base is not None and result.checksum != base.checksum:
            found.append(Mismatch(key, result.checksum, base.checksum))
    return found


def apps_measured(results: Iterable[AppKey]) -> List[Tuple[str, str]]:
    """(application, receives) pairs, in report order."""
    pairs = {(key.app, key.recv) for key in results}
    order = {name: i for i, name in enumerate(APPS)}
    recv_order = {name: i for i, name in enumerate(RECVS)}
    return sorted(
        pairs,
        key=lambda pair: (
            order.get(pair[0], len(order)),
            pair[0],
            recv_order.get(pair[1], len(recv_order)),
        ),
    )


# --- words ---------------------------------------------------------------------------------------


def format_bandwidth(bps: Optional[float]) -> str:
    return "n/a" if bps is None else f"{format_size(bps)}/s"


def format_figure(bench: str, figure: Optional[float]) -> str:
    return format_time(figure) if bench == LATENCY else format_bandwidth(figure)


def change(ratio_value: float) -> str:
    """A ratio as a signed percentage: 1.123 → +12%, 0.996 → -0.4%."""
    percent = (ratio_value - 1) * 100
    return f"{percent:+.1f}%" if abs(percent) < 9.95 else f"{percent:+.0f}%"


def _pb(pb_size: int) -> str:
    return f"{format_size(pb_size)} pb"


def _cheapest_sentences(found: Found) -> List[str]:
    sentences = []
    for recv in recvs_measured(found):
        for bench, size, what, verb in (
            (
                LATENCY,
                small_size(found, recv),
                "small messages (latency at {size})",
                "over no layer",
            ),
            (
                BANDWIDTH,
                large_size(found, recv),
                "large messages (bandwidth at {size})",
                "against no layer",
            ),
        ):
            ranked = ranking(found, bench, recv, size) if size is not None else []
            if not ranked:
                continue
            best, best_ratio = ranked[0]
            sentence = (
                f"{recv} receives, {what.format(size=format_size(size))}, "
                f"{_pb(MAIN_PB_SIZE)}: {best} is cheapest, {change(best_ratio)} {verb}"
            )
            if len(ranked) > 1:
                sentence += "; then " + ", ".join(
                    f"{method} {change(r)}" for method, r in ranked[1:]
                )
            sentences.append(sentence)
    return sentences


def _threshold_sentences(run: Run, found: Found) -> List[str]:
    threshold = auto_threshold(found)
    methods = methods_measured(found)
    if threshold is None:
        if "auto" not in methods:
            return []
        return [f"auto threshold not measured: {auto_threshold_missing(run)}"]
    if threshold.never:
        sentence = (
            f"auto threshold: {AUTO_DATATYPE}'s latency stays above {AUTO_PACK}'s up to "
            f"{format_size(threshold.largest)} (specific receives), so auto should "
            f"always pack here; threshold set to {format_size(threshold.size)} "
            f"({threshold.size} bytes)"
        )
    else:
        sentence = (
            f"auto threshold: {AUTO_DATATYPE}'s latency is not above {AUTO_PACK}'s from "
            f"{format_size(threshold.size)} on (specific receives, up to "
            f"{format_size(threshold.largest)}), so auto should pack below "
            f"{format_size(threshold.size)} and use a struct type from there "
            f"({threshold.size} bytes)"
        )
    used = auto_threshold_used(run)
    if used is not None and "auto" in methods:
        sentence += f"; the auto runs used {format_size(used)} ({used} bytes)"
    return [sentence]


def _goal_sentences(found: Found) -> List[str]:
    goal = auto_goal(found)
    if goal is None:
        return []
    parts = []
    if goal.latency_ratio is not None:
        parts.append(
            f"latency at {format_size(goal.latency_size)} {change(goal.latency_ratio)} "
            f"over no layer (goal at most +{percent(LATENCY_GOAL)}: "
            f"{'met' if goal.latency_met else 'missed'})"
        )
    else:
        parts.append("latency not measured")
    if goal.bandwidth_ratio is not None:
        loss = 1 - goal.bandwidth_ratio
        told = (
            f"at most {loss * 100:.1f}% lower" if loss > 0 else "never lower than without the layer"
        )
        parts.append(
            f"bandwidth from {format_size(BANDWIDTH_GOAL_FROM)} on {told} (worst at "
            f"{format_size(goal.bandwidth_size)}; goal at most "
            f"{percent(BANDWIDTH_GOAL)} lower: "
            f"{'met' if goal.bandwidth_met else 'missed'})"
        )
    else:
        parts.append(f"bandwidth from {format_size(BANDWIDTH_GOAL_FROM)} on not measured")
    verdict = {True: "meets its goal", False: "misses its goal", None: "goal not fully judged"}
    return [
        f"auto {verdict[goal.met]} ({goal.recv} receives, {_pb(MAIN_PB_SIZE)}): " + "; ".join(parts)
    ]


def _pb_sentences(found: Found) -> List[str]:
    sentences = []
    for bench, size in ((LATENCY, PB_LATENCY_SIZE), (BANDWIDTH, PB_BANDWIDTH_SIZE)):
        curves = {
            method: curve
            for method, curve in pb_curves(found, bench, "specific", size).items()
            if len(curve) > 1
        }
        if not curves:
            continue
        spans = {(min(curve), max(curve)) for curve in curves.values()}
        low, high = min(s[0] for s in spans), max(s[1] for s in spans)
        parts = []
        for method, curve in curves.items():
            first, last = curve[min(curve)], curve[max(curve)]
            told = f"{format_figure(bench, first)} → {format_figure(bench, last)}"
            if first > 0:
                told += f" ({change(last / first)})"
            parts.append(f"{method} {told}")
        base = baseline(found, bench, "specific").get(size)
        sentence = (
            f"pb size {format_size(low)} to {format_size(high)}, {bench} at "
            f"{format_size(size)} (specific receives): " + ", ".join(parts)
        )
        if base is not None:
            sentence += f"; no layer {format_figure(bench, base)}"
        sentences.append(sentence)
    return sentences


def _app_sentences(run: Run) -> List[str]:
    results = app_results(run)
    found = overheads(run)
    sentences = []
    for app, recv in apps_measured(results):
        base = app_baseline(results, app, recv)
        mine = sorted(
            ((r, key) for key, r in found.items() if key.app == app and key.recv == recv),
            key=lambda entry: entry[0],
        )
        name = APP_NAMES.get(app, app)
        if base is None:
            sentences.append(
                f"warning: {name}, {recv} receives: no run without the layer, so no "
                "overhead can be given"
            )
            continue
        if not mine:
            continue
        (low, low_key), (high, high_key) = mine[0], mine[-1]
        sentences.append(
            f"{name}, {recv} receives: overhead (time with the layer / without) from "
            f"{low:.2f} ({low_key.method}, {_pb(low_key.pb_size)}) to {high:.2f} "
            f"({high_key.method}, {_pb(high_key.pb_size)}); {base.time_s:.3g} s without the "
            "layer"
        )
    sentences += [
        f"warning: {APP_NAMES.get(key.app, key.app)}, {key.recv} receives, {key.method} with "
        f"{_pb(key.pb_size)}: INVALID overhead {ratio:.2f}: {INVALID_APP_FASTER}"
        for key, ratio in sorted(faster_everywhere(run).items(), key=lambda entry: entry[1])
    ]
    mismatches = checksum_mismatches(run)
    layered = [
        key
        for key in results
        if key.method != NONE and app_baseline(results, key.app, key.recv) is not None
    ]
    if mismatches:
        sentences += [
            f"warning: wrong result under the layer: {mismatch}" for mismatch in mismatches
        ]
    elif layered:
        sentences.append(
            f"checksums: all {len(layered)} application runs under the layer gave "
            "the same checksum as without it"
        )
    return sentences


def _missing_baseline_sentences(run: Run, found: Found) -> List[str]:
    if not found or any(config.method == NONE for config in found):
        return []
    return [
        "warning: no run without the layer (method none): the methods' costs cannot be "
        "given; run mpilens-piggyback without LD_PRELOAD into the same directory"
    ]


def _spread(point: Record) -> Optional[float]:
    """Half the width of the median's confidence interval, relative to the median."""
    sample = (point.get("stats") or {}).get("sample")
    if not isinstance(sample, dict):
        return None
    low, high, median = (record_number(sample.get(name)) for name in ("ci_lo", "ci_hi", "median"))
    if low is None or high is None or median is None or median <= 0:
        return None
    return (high - low) / 2 / median


def _quality_sentences(run: Run) -> List[str]:
    """How far the points are from the precision asked: a method's cost smaller than the
    points' uncertainty is noise."""
    points = [point for point in run.points if point.get("bench") in (LATENCY, BANDWIDTH)]
    stopped = [
        point
        for point in points
        if ((point.get("stats") or {}).get("sample") or {}).get("stop") == "time_budget"
    ]
    if not stopped:
        return []
    spreads = sorted(spread for point in stopped if (spread := _spread(point)) is not None)
    sentence = (
        f"{len(stopped)} of {len(points)} points stopped at their time budget before "
        "their median was known within the precision asked"
    )
    if spreads:
        sentence += (
            f" (their 95% intervals reach ±{spreads[len(spreads) // 2] * 100:.0f}% of "
            f"the median, typically, and ±{spreads[-1] * 100:.0f}% at worst): "
            "differences between methods smaller than that are noise"
        )
    if len(stopped) > len(points) / 4:
        sentence = "warning: " + sentence + "; rerun on a quieter machine, or with --preset full"
    return [sentence]


def _warning_notes(run: Run) -> List[str]:
    return [f"warning: {text}" for text in run.note_texts("warning")]


def diagnose(run: Run) -> List[str]:
    """Sentences for the report's findings, warnings starting with "warning:"."""
    found = measurements(run)
    return (
        _floor_sentences(run)
        + _missing_baseline_sentences(run, found)
        + _cheapest_sentences(found)
        + _threshold_sentences(run, found)
        + _goal_sentences(found)
        + _pb_sentences(found)
        + _app_sentences(run)
        + _quality_sentences(run)
        + _warning_notes(run)
    )


# --- the tables `mpilens piggyback` prints --------------------------------------------------------


def key_columns(found: Found) -> List[Tuple[str, str, str, int]]:
    """(header, bench, recv, size) of the key figures present: latency at 1 B, bandwidth at 1 MiB
    and 4 MiB, each with specific and wildcard receives."""
    columns = []
    recvs = recvs_measured(found)
    for bench, sizes in ((LATENCY, (KEY_LATENCY_SIZE,)), (BANDWIDTH, KEY_BANDWIDTH_SIZES)):
        for size in sizes:
            for recv in recvs:
                suffix = "" if recv == "specific" else " wc" if recv == "wildcard" else f" {recv}"
                header = f"{'lat' if bench == LATENCY else 'bw'} {short_size(size)}{suffix}"
                columns.append((header, bench, recv, size))
    return columns


def key_rows(found: Found) -> Tuple[List[str], List[List[Optional[float]]], List[str]]:
    """The key figures: the header, the baseline's figures (latency ns, bandwidth B/s), and per
    method its ratios to the baseline, with the method names."""
    columns = key_columns(found)
    base = [baseline(found, bench, recv).get(size) for _, bench, recv, size in columns]
    methods = methods_measured(found)
    rows = [
        [ratio(found, method, bench, recv, size) for _, bench, recv, size in columns]
        for method in methods
    ]
    return [header for header, *_ in columns], [base, *rows], [NONE, *methods]


def app_columns(run: Run) -> List[Tuple[str, str, str, int]]:
    """(header, application, receives, pb size) of the overheads present."""
    keys = set(overheads(run))
    columns = []
    for app, recv in apps_measured(app_results(run)):
        pbs = sorted({key.pb_size for key in keys if key.app == app and key.recv == recv})
        for pb in pbs:
            suffix = "" if recv == "specific" else " wc" if recv == "wildcard" else f" {recv}"
            columns.append((f"{app}{suffix} pb{short_size(pb)}", app, recv, pb))
    return columns


def _ratio_text(value_: Optional[float]) -> str:
    return "-" if value_ is None else f"{value_:.2f}"


def comparison_table(run: Run) -> List[str]:
    """Plain text tables: per method, the key point-to-point figures as ratios to the library
    alone (its own figures in the first row), then the applications' overheads."""
    found = measurements(run)
    lines: List[str] = []
    headers, rows, names = key_rows(found)
    if any(value_ is not None for row in rows for value_ in row):
        columns = key_columns(found)
        base_row = [NONE] + [
            format_figure(bench, figure) if figure is not None else "-"
            for (_, bench, _, _), figure in zip(columns, rows[0])
        ]
        text_rows = [
            [name] + [_ratio_text(r) for r in row] for name, row in zip(names[1:], rows[1:])
        ]
        lines += [
            f"point-to-point, {_pb(MAIN_PB_SIZE)}: the library alone (none), then each "
            "method as a ratio to it (wc: wildcard receives)"
        ]
        lines += aligned_columns([["method", *headers], base_row, *text_rows], left=1)
    columns = app_columns(run)
    if columns:
        found_overheads = overheads(run)
        results = app_results(run)
        base_row = [NONE] + [
            f"{base.time_s:.3g}s" if (base := app_baseline(results, app, recv)) else "-"
            for _, app, recv, _ in columns
        ]
        methods = method_order(key.method for key in found_overheads)
        text_rows = [
            [method]
            + [
                _ratio_text(found_overheads.get(AppKey(app, recv, method, pb)))
                for _, app, recv, pb in columns
            ]
            for method in methods
        ]
        lines += ([""] if lines else []) + [
            "applications: time without the layer (none), then time with it / without"
        ]
        lines += aligned_columns(
            [["method", *(header for header, *_ in columns)], base_row, *text_rows], left=1
        )
    return lines


# --- comparison ----------------------------------------------------------------------------------


def _both(names: Tuple[str, str], a: Optional[str], b: Optional[str]) -> str:
    return f"{a or 'n/a'} in {names[0]}, {b or 'n/a'} in {names[1]}"


def compare(run_a: Run, run_b: Run) -> List[str]:
    """The key figures of A against B: the library alone, each method's cost, auto's threshold
    and the applications' largest overhead."""
    names = run_names(run_a, run_b)
    found_a, found_b = measurements(run_a), measurements(run_b)
    sentences = []
    for bench, size in ((LATENCY, KEY_LATENCY_SIZE), (BANDWIDTH, max(KEY_BANDWIDTH_SIZES))):
        base_a = baseline(found_a, bench, "specific").get(size)
        base_b = baseline(found_b, bench, "specific").get(size)
        if base_a is None and base_b is None:
            continue
        sentence = f"no layer, {bench} at {format_size(size)} (specific receives): " + _both(
            names,
            format_figure(bench, base_a) if base_a else None,
            format_figure(bench, base_b) if base_b else None,
        )
        sentences.append(sentence)
    methods = method_order(set(methods_measured(found_a)) | set(methods_measured(found_b)))
    for method in methods:
        parts = []
        for bench, size in ((LATENCY, KEY_LATENCY_SIZE), (BANDWIDTH, max(KEY_BANDWIDTH_SIZES))):
            a = ratio(found_a, method, bench, "specific", size)
            b = ratio(found_b, method, bench, "specific", size)
            if a is None and b is None:
                continue
            parts.append(
                f"{bench} at {format_size(size)} "
                + _both(
                    names,
                    change(a) if a is not None else None,
                    change(b) if b is not None else None,
                )
            )
        if parts:
            sentences.append(
                f"{method} ({_pb(MAIN_PB_SIZE)}, specific receives, against no "
                "layer): " + "; ".join(parts)
            )
    thresholds = [auto_threshold(found) for found in (found_a, found_b)]
    if any(thresholds):
        sentences.append(
            "auto threshold: "
            + _both(
                names,
                *(
                    f"{format_size(t.size)}" + (" (always pack)" if t.never else "") if t else None
                    for t in thresholds
                ),
            )
        )
    for app in APPS:
        worst = [_largest_overhead(run, app) for run in (run_a, run_b)]
        if any(worst):
            sentences.append(f"{app}, largest overhead: " + _both(names, *worst))
    return sentences


def _largest_overhead(run: Run, app: str) -> Optional[str]:
    mine = [(r, key) for key, r in overheads(run).items() if key.app == app]
    if not mine:
        return None
    r, key = max(mine, key=lambda entry: entry[0])
    return f"{r:.2f} ({key.method}, {key.recv} receives, {_pb(key.pb_size)})"


def verdict(run: Run) -> Optional[str]:
    """What the cheapest method costs on small and on large messages, and whether auto meets
    its goal; None when no method was measured against the library alone."""
    found = measurements(run)
    recvs = recvs_measured(found)
    if not recvs:
        return None
    recv = "specific" if "specific" in recvs else recvs[0]
    parts = []
    for bench, size, what in (
        (LATENCY, small_size(found, recv), "latency"),
        (BANDWIDTH, large_size(found, recv), "bandwidth"),
    ):
        ranked = ranking(found, bench, recv, size) if size is not None else []
        if ranked and size is not None:
            method, ratio_ = ranked[0]
            # Better than the library alone, yet valid (not beyond its interval): noise.
            better = ratio_ < 1 if bench == LATENCY else ratio_ > 1
            noise = ", better than the library alone: noise" if better else ""
            parts.append(f"{what} at {format_size(size)} {change(ratio_)} ({method}{noise})")
    if not parts:
        return None
    sentence = (
        f"The cheapest method against the library alone ({recv} receives, "
        f"{_pb(MAIN_PB_SIZE)}): " + "; ".join(parts) + "."
    )
    goal = auto_goal(found)
    if goal is not None and goal.met is not None:
        sentence += f" auto {'meets' if goal.met else 'misses'} its goal."
    return sentence
