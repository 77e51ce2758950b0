"""What the overlap family's points say: the overhead ratio, its maps, and plain sentences.

The contract is docs/overlap.md. Everything here is plain Python (no numpy): the CLI imports it
on every start, and only the commands that draw should pay for the numeric libraries.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from itertools import product
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, TypeVar

from .. import program_options
from ..errors import MpilensError
from ..results import Record, Run, record_number
from ..text import counted, percent, ranges
from ..units import Number, format_size, format_time
from .conditions import crowding

# Every benchmark of docs/overlap.md, in the order reports draw them: the seed's figures first.
BENCHES = program_options.choices("mpilens-overlap", "bench")
COLLECTIVES = ("ibcast", "iallreduce", "ialltoall")
SENDER, CPU, NLOAD, CONTROL, THREADS = "sender", "cpu", "nload", "control", "threads"

LABELS = {
    "sender": "sender-side",
    "receiver": "receiver-side",
    "bidir": "both sides",
    "noncontig": "non-contiguous sender-side",
    "cpu": "sender CPU overhead",
    "nload": "N threads load",
    "control": "blocking control",
    "late": "late receiver",
    "multi": "several peers",
    "multi-same": "several requests to one peer",
    "threads": "several threads communicating",
    "ibcast": "MPI_Ibcast",
    "iallreduce": "MPI_Iallreduce",
    "ialltoall": "MPI_Ialltoall",
}
MEASURES = {
    "sender": "rank 0 posts MPI_Isend, computes, waits, then gets a 0-byte acknowledgement: "
    "whether a send progresses while its sender computes",
    "receiver": "rank 0 posts MPI_Irecv after a 0-byte clear-to-send, computes, then waits: "
    "whether a receive progresses while its receiver computes",
    "bidir": "both ranks send then receive, computing during each non-blocking operation; the "
    "time is per direction",
    "noncontig": "as sender-side, with a derived datatype (blocks of 32 bytes every 64 bytes): "
    "whether a message that must be packed progresses",
    "cpu": "MPI_Isend, compute, MPI_Wait with no acknowledgement, against the time of a blocking "
    "MPI_Send: the CPU time a send takes from its sender",
    "nload": "blocking ping-pong while N threads compute on both ranks: slowdown against the "
    "ping-pong without load (logarithmic colours)",
    "control": "computation, then a blocking MPI_Send: nothing can overlap, so the ratio must be "
    "about 1 everywhere; a check of the method",
    "late": "the message (or its rendezvous request) has already arrived when MPI_Irecv is "
    "posted: the unexpected-message path",
    "multi": "MPI_Isend to several peers at once, compute, MPI_Waitall: several requests in flight",
    "multi-same": "4 MPI_Isend to the same peer at once, compute, MPI_Waitall: several requests "
    "in flight on one connection",
    "threads": "under MPI_THREAD_MULTIPLE, each of --comm-threads threads of rank 0 posts its own "
    "MPI_Isend to rank 1, computes and waits, while rank 1's threads receive one message each: "
    "whether messages of several threads progress while those threads compute",
    "ibcast": "every rank starts MPI_Ibcast from rank 0 at the same time, computes, then waits; "
    "colour is the worst rank's ratio",
    "iallreduce": "every rank starts MPI_Iallreduce (bitwise or of bytes) at the same time, "
    "computes, then waits; colour is the worst rank's ratio",
    "ialltoall": "every rank starts MPI_Ialltoall at the same time, computes, then waits; colour "
    "is the worst rank's ratio",
}

# Column classes by median ratio: below 0.2 overlap, below 0.8 partial, up to 1.2 none.
OVERLAP_BELOW, PARTIAL_BELOW, NONE_UP_TO = 0.2, 0.8, 1.2
CLASSES = ("overlap", "partial", "none", "hurts")
CLASS_NAMES = {
    "overlap": "overlap",
    "partial": "partial overlap",
    "none": "no overlap",
    "hurts": "overlap hurts",
}
CLASS_REASONS = {
    "none": "communication and computation are serialised",
    "hurts": "slower than communicating, then computing",
}
# Sender-side columns scoring at least this are on the rendezvous side of the threshold.
SWITCH_SCORE = 0.5
# Sizes assumed to go eager when the sender-side map shows no threshold.
SMALL_SEND_BYTES = 4096
# A ratio is determined when its confidence interval is no wider than the narrowest class band
# (no overlap, 0.8-1.2): ±0.2 about its middle at most, so it can touch two neighbouring classes
# but never span one. Wider, the point's class is noise as much as data.
DETERMINED_WIDTH = 0.4
PRECISION = f"±{DETERMINED_WIDTH / 2:g}"
# Beyond this share of undetermined points a map calls for a better run.
UNDETERMINED_ADVICE_SHARE = 1 / 3
RERUN_ADVICE = "rerun with more repetitions (--reps 200 or --preset full) or on a quieter machine"
# Slowdowns beyond 10 are not contention but waiting for the scheduler (time slices are ms).
PATHOLOGY_SLOWDOWN = 10.0
CONTROL_LOW, CONTROL_HIGH = 0.8, 1.2
# Fewer determined control points than this make a median that checks nothing: over the whole
# control, and at one computation time (a row of its map; rows with fewer take the run's verdict)
# or one size (a column; columns with fewer are not judged).
CONTROL_MIN_POINTS = 5
CONTROL_ROW_MIN_POINTS = 3
# Shares of overlapping points closer than this are not called a difference between two runs.
NOTABLE_DIFFERENCE = 0.10
MOST_DIFFERENCES = 3

FLAVOUR_NAMES = {
    "openmpi": "Open MPI",
    "mpich": "MPICH",
    "intelmpi": "Intel MPI",
    "mvapich": "MVAPICH",
    "craympich": "Cray MPICH",
}


def _median(values: Iterable[Optional[float]]) -> Optional[float]:
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


# --- the metric ----------------------------------------------------------------------------------


def ratio(
    t_measured: Optional[Number], t_comm: Optional[Number], t_comp: Optional[Number]
) -> Optional[float]:
    """Seed eq. 1: (T − max(T_comm, T_comp)) / min(T_comm, T_comp).

    0 is perfect overlap, 1 serialised, above 1 slower than serialised; None when it is not
    defined (an input missing, or T_comm or T_comp not positive).
    """
    measured, comm, comp = (record_number(value) for value in (t_measured, t_comm, t_comp))
    if measured is None or comm is None or comp is None or min(comm, comp) <= 0:
        return None
    return (measured - max(comm, comp)) / min(comm, comp)


def osu_overlap_pct(
    t_measured: Optional[Number], t_comm: Optional[Number], t_comp: Optional[Number]
) -> Optional[float]:
    """OSU micro-benchmarks' overlap %: max(0, 100 − 100·(T − T_comp)/T_comm)."""
    measured, comm, comp = (record_number(value) for value in (t_measured, t_comm, t_comp))
    if measured is None or comm is None or comp is None or comm <= 0:
        return None
    return max(0.0, 100 - 100 * (measured - comp) / comm)


def imb_overlap_pct(
    t_measured: Optional[Number], t_comm: Optional[Number], t_comp: Optional[Number]
) -> Optional[float]:
    """Intel MPI Benchmarks' overlap % (as documented): 100·(1 − ratio) clipped to [0, 100]."""
    measured, comm, comp = (record_number(value) for value in (t_measured, t_comm, t_comp))
    if measured is None or comm is None or comp is None or min(comm, comp) <= 0:
        return None
    return 100 * max(0.0, min(1.0, (comm + comp - measured) / min(comm, comp)))


def _ingredients(point: Record) -> Tuple[Any, Any, Any]:
    """(T_measured, T_comm, T_comp) as stored, for the metric functions to check."""
    stats = point["stats"]
    return stats.get("t_measured_ns"), stats.get("t_comm_ns"), stats.get("t_comp_ns")


def point_ratio(point: Record) -> Optional[float]:
    """The ratio the program stored (for nload: the slowdown − 1)."""
    return record_number(point["stats"].get("ratio"))


# --- how well a ratio is known -------------------------------------------------------------------

Interval = Tuple[float, float]
UNBOUNDED: Interval = (-math.inf, math.inf)
# Where each benchmark's T_comm comes from (docs/overlap.md, base references); collectives use
# their own ref-<op>. nload is left out: its slowdown is not eq. 1.
T_COMM_REFERENCES = {
    "sender": "ref-pingpong",
    "receiver": "ref-pingpong",
    "bidir": "ref-pingpong",
    "control": "ref-pingpong",
    "late": "ref-pingpong",
    "noncontig": "ref-noncontig",
    "cpu": "ref-send",
    "multi": "ref-multi",
    "multi-same": "ref-multi-same",
    "threads": "ref-threads",
    **{bench: f"ref-{bench}" for bench in COLLECTIVES},
}


def carried_interval(value: float, summary: object) -> Interval:
    """The confidence interval of a sample's median, carried to a value taken from that sample.

    Scaling by the interval's bounds relative to the median is exact for a value that is the
    median (T_measured, T_comp, ref-send, ref-multi, ref-multi-same) or half of it (the one-way
    time of round trips), and keeps the relative spread for another rank's median (collectives: the
    sample is the slowest rank's). Without an interval (older files) the value is exact.
    """
    if not isinstance(summary, dict):
        return value, value
    median, low, high = (record_number(summary.get(name)) for name in ("median", "ci_lo", "ci_hi"))
    if median is None or low is None or high is None or median <= 0 or not low <= median <= high:
        return value, value
    return value * low / median, value * high / median


def ratio_bounds(measured: Interval, comm: Interval, comp: Interval) -> Interval:
    """The smallest and largest eq. 1 over every T_measured, T_comm, T_comp in their intervals.

    The ratio grows with T_measured, but not monotonically with T_comm and T_comp, which swap
    roles (max and min) where they cross: the extremes lie at the 8 corners or, when the two
    intervals overlap, at the ends of their crossing T_comm = T_comp, where eq. 1 is
    T_measured/t − 1 (a ratio below 0 can peak there). Unbounded if T_comm or T_comp can be 0.
    """
    if min(comm[0], comp[0]) <= 0:
        return UNBOUNDED
    pairs = list(product(comm, comp))
    crossing = (max(comm[0], comp[0]), min(comm[1], comp[1]))
    if crossing[0] <= crossing[1]:
        pairs += [(t, t) for t in crossing]
    values = [(m - max(c, p)) / min(c, p) for m in measured for c, p in pairs]
    return min(values), max(values)


def ratio_interval(point: Record, reference: Optional[Record]) -> Optional[Interval]:
    """The interval of a point's ratio, from its own samples and the sample its T_comm was taken
    from: the reference measured right before its size's points (stats.ref), else, in files
    older than that, its T_comm's reference point; None where the ratio is not defined. A
    quantity without an interval counts as exact."""
    stored = point_ratio(point)
    if stored is None:
        return None
    measured, comm, comp = (record_number(value) for value in _ingredients(point))
    if measured is None or comm is None or comp is None or ratio(measured, comm, comp) is None:
        return stored, stored  # the times are not in the file: only the ratio is known
    stats = point["stats"]
    reference_sample = stats.get("ref")
    if reference_sample is None and reference is not None:
        reference_sample = reference["stats"].get("sample")
    return ratio_bounds(
        carried_interval(measured, stats.get("sample")),
        carried_interval(comm, reference_sample),
        carried_interval(comp, stats.get("comp")),
    )


# The class bands a decided ratio's interval may lie within (CLASSES, in order): the overlap band
# starts at −0.2, since an interval that reaches further below 0 measures noise, not overlap.
CLASS_BANDS = (
    (-DETERMINED_WIDTH / 2, OVERLAP_BELOW),
    (OVERLAP_BELOW, PARTIAL_BELOW),
    (PARTIAL_BELOW, NONE_UP_TO),
    (NONE_UP_TO, math.inf),
)


def is_determined(interval: Optional[Interval]) -> bool:
    """Whether a ratio's interval is narrow enough for its class to mean something: no wider
    than DETERMINED_WIDTH, or within one class band (its class is decided whatever its value;
    mpilens-overlap stops repeating such a point, docs/overlap.md "Repetitions")."""
    if interval is None:
        return False
    low, high = interval
    return high - low <= DETERMINED_WIDTH or any(
        band_low <= low and high <= band_high for band_low, band_high in CLASS_BANDS
    )


def _references_by_size(run: Run, bench: str) -> Dict[Number, Record]:
    source = T_COMM_REFERENCES.get(bench)
    return {p["params"].get("size_bytes"): p for p in run.points_of(source)} if source else {}


# --- maps ----------------------------------------------------------------------------------------


def y_key(bench: str) -> str:
    """The parameter on a map's y axis: computation time, or computing threads for nload."""
    return "threads" if bench == NLOAD else "compute_ns"


def benches_present(run: Run) -> List[str]:
    return [bench for bench in BENCHES if run.points_of(bench)]


def ratio_maps(run: Run) -> List[str]:
    """Benchmarks whose colour is the overhead ratio (every map but nload)."""
    return [bench for bench in benches_present(run) if bench != NLOAD]


@dataclass
class Grid:
    """One benchmark's points pivoted: columns by message size, rows by y (see y_key)."""

    bench: str
    y_key: str
    sizes: List[Number]
    ys: List[Number]
    t_comm: List[Optional[float]]  # per size: the median T_comm of its points
    points: List[Record]
    # Per point, its ratio's interval; None without a ratio, and for nload (not eq. 1).
    intervals: List[Optional[Interval]]
    # Per point, why its ratio cannot be true (INVALID_*), None when it can.
    invalid: List[Optional[str]]

    def _place(self, point: Record) -> Tuple[Number, Number]:
        return point["params"]["size_bytes"], point["params"][self.y_key]

    def values(self, stat: str) -> List[List[float]]:
        """stats[stat] per cell, one list per y value; NaN where no point or no value."""
        cells = {self._place(p): p for p in self.points}
        return [
            [
                _nan_for_none(record_number(cells[(size, y)]["stats"].get(stat)))
                if (size, y) in cells
                else math.nan
                for size in self.sizes
            ]
            for y in self.ys
        ]

    @property
    def ratios(self) -> List[List[float]]:
        return self.values("ratio")

    @property
    def rated(self) -> int:
        """How many points have a defined ratio."""
        return sum(span is not None for span in self.intervals)

    @property
    def valid(self) -> int:
        """How many points have a defined ratio that can be true."""
        return self.rated - len(self.invalid_points)

    @property
    def determined(self) -> List[Record]:
        """The valid points whose ratio is determined (DETERMINED_WIDTH): the ones sentences
        use."""
        return [
            p
            for p, span, reason in zip(self.points, self.intervals, self.invalid)
            if reason is None and is_determined(span)
        ]

    @property
    def undetermined(self) -> List[Record]:
        """The valid points with a ratio that is not determined."""
        return [
            p
            for p, span, reason in zip(self.points, self.intervals, self.invalid)
            if reason is None and span is not None and not is_determined(span)
        ]

    @property
    def invalid_points(self) -> List[Tuple[Record, str]]:
        """The points whose ratio cannot be true, with the reason."""
        return [(p, reason) for p, reason in zip(self.points, self.invalid) if reason is not None]

    def invalid_reasons(self) -> Dict[str, int]:
        """How many points each reason makes invalid, in the order first met."""
        return dict(Counter(reason for _, reason in self.invalid_points))

    def undetermined_cells(self) -> List[List[bool]]:
        """Per cell, laid out as values(): whether it holds an undetermined ratio."""
        marked = {self._place(p) for p in self.undetermined}
        return [[(size, y) in marked for size in self.sizes] for y in self.ys]

    def invalid_cells(self) -> List[List[Optional[str]]]:
        """Per cell, laid out as values(): why its ratio is invalid, None if it is not."""
        marked = {self._place(p): reason for p, reason in self.invalid_points}
        return [[marked.get((size, y)) for size in self.sizes] for y in self.ys]

    def column(self, size: Number, points: Optional[Sequence[Record]] = None) -> List[Record]:
        """The points of one size, from all the map's points or from those given."""
        return [
            p
            for p in (self.points if points is None else points)
            if p["params"]["size_bytes"] == size
        ]


def _nan_for_none(value: Optional[float]) -> float:
    return math.nan if value is None else value


def _placed(point: Record, key: str) -> bool:
    params = point["params"]
    return (
        record_number(params.get("size_bytes")) is not None
        and record_number(params.get(key)) is not None
    )


def grid(run: Run, bench: str, checked_by_control: bool = True) -> Grid:
    """The map of one benchmark; reference benchmarks (ref-*) have none. Its points are checked
    against the rules of validity (docs/overlap.md), the blocking control's among them unless
    checked_by_control is False (the control's own map, when it is the one checking). Computed
    once per run."""
    return run.memo(
        ("overlap.grid", bench, checked_by_control), lambda: _grid(run, bench, checked_by_control)
    )


def _grid(run: Run, bench: str, checked_by_control: bool) -> Grid:
    if bench not in BENCHES:
        raise MpilensError(
            f'"{bench}" is not an overlap benchmark with a map; those are: ' + ", ".join(BENCHES)
        )
    key = y_key(bench)
    points = [p for p in run.points_of(bench) if _placed(p, key)]
    sizes = sorted({p["params"]["size_bytes"] for p in points})
    t_comm = [
        _median(
            record_number(p["stats"].get("t_comm_ns"))
            for p in points
            if p["params"]["size_bytes"] == size
        )
        for size in sizes
    ]
    references = _references_by_size(run, bench)
    intervals = [
        None if bench == NLOAD else ratio_interval(p, references.get(p["params"]["size_bytes"]))
        for p in points
    ]
    shared = [] if bench == NLOAD else run_invalidity(run, bench)
    control = control_verdict(run) if checked_by_control and bench not in (NLOAD, CONTROL) else None
    return Grid(
        bench=bench,
        y_key=key,
        sizes=sizes,
        ys=sorted({p["params"][key] for p in points}),
        t_comm=t_comm,
        points=points,
        intervals=intervals,
        invalid=[
            None if span is None else point_invalidity(p, span, shared, control)
            for p, span in zip(points, intervals)
        ],
    )


# --- numbers that cannot be true -----------------------------------------------------------------

# Why a ratio cannot be true (docs/overlap.md, "Invalid points"): short, for sentences and legends.
INVALID_OSU = "faster than its computation alone (OSU overlap above 100%)"
INVALID_NEGATIVE = "ratio below 0 beyond its interval (faster than its longer part alone)"
INVALID_COMP = "computation slowed beyond its noise (a competing thread or process)"
INVALID_LAT0 = "0-byte reference slower than larger messages (lat0 subtracted is wrong)"
INVALID_CONTROL = (
    "blocking control off 1 beyond noise after this computation (references do not hold)"
)
INVALID_CONTROL_SIZE = (
    "blocking control off 1 beyond noise at this size (a lone transfer does not take the "
    "reference's time)"
)
# A computation measured this much longer than asked, beyond its interval, was slowed by a
# competitor: the busy loop is time-based, so it overruns only when its core is taken from it.
# Half the determination width, so that the slowdown alone could move a class.
COMP_DRIFT = DETERMINED_WIDTH / 2
# The benchmarks in which every rank computes or polls; in the others only ranks 0 and 1 do (the
# other ranks sleep).
ALL_RANKS_BUSY = ("multi", *COLLECTIVES)


def crowded_reason(run: Run, bench: str) -> Optional[str]:
    """ "not trustworthy: 2 ranks and 2 progress threads share 2 cores" when the ranks busy in
    bench, the threads it runs beside them and the helper threads outnumber the cores of a
    machine."""
    teams = [record_number(p["params"].get("comm_threads")) for p in run.points_of(bench)]
    extra = int(max((team for team in teams if team), default=1)) - 1 if bench == THREADS else 0
    found = crowding(
        run.meta,
        busy=None if bench in ALL_RANKS_BUSY else (0, 1),
        bench_threads=(extra, "communicating thread"),
    )
    return None if found is None else f"not trustworthy: {found.text()}"


def _reference_interval(point: Record, name: str) -> Optional[Interval]:
    value = record_number(point["stats"].get(name))
    if value is None:
        return None
    return carried_interval(value, point["stats"].get("sample"))


def lat0_wrong(run: Run) -> bool:
    """Whether the 0-byte ping-pong (lat0, subtracted from the sequences of most benchmarks) is
    slower, beyond both intervals, than the one-way times of most larger sizes: it then is not
    what a 0-byte acknowledgement costs, and every time it was subtracted from is wrong."""
    references = {
        p["params"].get("size_bytes"): _reference_interval(p, "one_way_ns")
        for p in run.points_of("ref-pingpong")
    }
    zero = references.get(0)
    larger = [
        span
        for size, span in references.items()
        if span is not None and isinstance(size, (int, float)) and size > 0
    ]
    if zero is None or not larger:
        return False
    return sum(zero[0] > span[1] for span in larger) > len(larger) / 2


def _off_one(spans: Sequence[Interval], fewest: int) -> Optional[bool]:
    """Whether determined control intervals read off 1 beyond their noise: the median of their
    lower bounds above CONTROL_HIGH, or of their upper bounds below CONTROL_LOW; None when fewer
    than `fewest` make a median that checks nothing."""
    if len(spans) < fewest:
        return None
    low, high = (statistics.median(span[i] for span in spans) for i in (0, 1))
    return low > CONTROL_HIGH or high < CONTROL_LOW


@dataclass(frozen=True)
class ControlVerdict:
    """What the blocking control, which cannot overlap, says of the references: `run` whether it
    reads off 1 over all its points (None: too few to tell), `rows` the same per computation
    time it was measured at, `columns` per message size (those with enough points). Off 1 in a
    row, T_comm or T_comp do not hold after that computation: they moved between the references
    and the measurement, or communication after such a computation costs more than the
    reference measured in a loop (a core taken from the other rank while it waits). Off 1 in a
    column, the reference of that size (half a ping-pong's round trip) is not what a lone
    transfer of it takes: a library whose protocol or copy path differs between the two (Intel
    MPI's and MPICH 5's shared memory at 32 KiB to 4 MiB read 0.3 at one size and 2 at the next
    on this project's machine)."""

    run: Optional[bool]
    rows: Dict[Number, bool]
    columns: Dict[Number, bool] = field(default_factory=dict)

    def off_at(self, compute_ns: Optional[Number]) -> bool:
        """Whether the control is off after a computation of compute_ns: its row's verdict,
        else the run's."""
        row = self.rows.get(compute_ns) if compute_ns is not None else None
        return bool(self.run) if row is None else row

    def reason_at(self, compute_ns: Optional[Number], size: Optional[Number]) -> Optional[str]:
        """Why the control makes a point of this computation time and size invalid, if it does:
        its computation time's row first, then its size's column."""
        if self.off_at(compute_ns):
            return INVALID_CONTROL
        return INVALID_CONTROL_SIZE if size is not None and self.columns.get(size) else None


def control_verdict(run: Run) -> ControlVerdict:
    return run.memo("overlap.control_verdict", lambda: _control_verdict(run))


def _control_verdict(run: Run) -> ControlVerdict:
    if not run.points_of(CONTROL):
        return ControlVerdict(None, {})
    g = grid(run, CONTROL, checked_by_control=False)
    by_row: Dict[Number, List[Interval]] = {}
    by_column: Dict[Number, List[Interval]] = {}
    for point, span, reason in zip(g.points, g.intervals, g.invalid):
        if reason is None and span is not None and is_determined(span):
            by_row.setdefault(point["params"]["compute_ns"], []).append(span)
            by_column.setdefault(point["params"]["size_bytes"], []).append(span)
    every = [span for spans in by_row.values() for span in spans]
    return ControlVerdict(_off_one(every, CONTROL_MIN_POINTS), _judged(by_row), _judged(by_column))


def _judged(spans_by: Dict[Number, List[Interval]]) -> Dict[Number, bool]:
    """The control's verdict per row (or column) with enough determined points to tell."""
    verdicts = {key: _off_one(spans, CONTROL_ROW_MIN_POINTS) for key, spans in spans_by.items()}
    return {key: off for key, off in verdicts.items() if off is not None}


def control_off(run: Run) -> bool:
    """Whether the blocking control reads off 1 beyond its noise over all its points."""
    return bool(control_verdict(run).run)


def run_invalidity(run: Run, bench: str) -> List[str]:
    """The reasons that make every point of a ratio map invalid; INVALID_LAT0 only applies to
    the points that subtracted lat0 (point_invalidity)."""
    reasons = [reason for reason in [crowded_reason(run, bench)] if reason is not None]
    if lat0_wrong(run):
        reasons.append(INVALID_LAT0)
    return reasons


def point_invalidity(
    point: Record, span: Interval, shared: Sequence[str], control: Optional[ControlVerdict] = None
) -> Optional[str]:
    """Why a rated point's ratio cannot be true, None when it can: the run's reasons first (they
    are the cause of the others), then the blocking control's at the point's computation time
    (control None: not checked), then the point's own."""
    stats = point["stats"]
    for reason in shared:
        if reason != INVALID_LAT0 or (record_number(stats.get("lat0_ns")) or 0) > 0:
            return reason
    off = (
        control.reason_at(point["params"].get("compute_ns"), point["params"].get("size_bytes"))
        if control is not None
        else None
    )
    if off is not None:
        return off
    measured, _, comp = (record_number(value) for value in _ingredients(point))
    if measured is not None and comp is not None and comp > 0:
        measured_span = carried_interval(measured, stats.get("sample"))
        comp_span = carried_interval(comp, stats.get("comp"))
        if measured_span[1] < comp_span[0]:
            return INVALID_OSU
    if span[1] < 0:
        return INVALID_NEGATIVE
    asked = record_number(point["params"].get("compute_ns"))
    slowed = (
        comp is not None
        and asked is not None
        and asked > 0
        and carried_interval(comp, stats.get("comp"))[0] > asked * (1 + COMP_DRIFT)
    )
    return INVALID_COMP if slowed else None


def validity(run: Run) -> List[Tuple[Record, Optional[str]]]:
    """Every point of a map that has a ratio, with why the ratio cannot be true (None when it
    can): the points the maps and sentences leave out are those with a reason."""
    judged: List[Tuple[Record, Optional[str]]] = []
    for bench in BENCHES:
        if run.points_of(bench):
            g = grid(run, bench)
            judged += [
                (p, reason)
                for p, span, reason in zip(g.points, g.intervals, g.invalid)
                if span is not None
            ]
    return judged


# --- classification ------------------------------------------------------------------------------


def classify(value: float) -> str:
    if value < OVERLAP_BELOW:
        return "overlap"
    if value < PARTIAL_BELOW:
        return "partial"
    return "none" if value <= NONE_UP_TO else "hurts"


def column_score(points: Sequence[Record]) -> Optional[float]:
    """Median ratio where the computation could hide all the communication (T_comp ≥ T_comm).

    Below that line the ratio measures how much computation was hidden behind communication,
    which says less about progress; a column that never reaches it uses all its points.
    """
    rows = [
        (
            point_ratio(p),
            record_number(p["stats"].get("t_comp_ns")),
            record_number(p["stats"].get("t_comm_ns")),
        )
        for p in points
    ]
    hiding = [
        r
        for r, comp, comm in rows
        if r is not None and comp is not None and comm is not None and comp >= comm
    ]
    return _median(hiding or [r for r, _, _ in rows])


def column_scores(g: Grid) -> List[Optional[float]]:
    """Per size, the score of its determined points; None where it has none."""
    determined = g.determined
    return [column_score(g.column(size, determined)) for size in g.sizes]


def undetermined_sizes(g: Grid) -> int:
    """How many sizes have ratios but none determined: they are left out of the ranges."""
    scored = {p["params"]["size_bytes"] for p in g.determined}
    return len({p["params"]["size_bytes"] for p in g.undetermined} - scored)


def smoothed(kinds: Sequence[str]) -> List[str]:
    """A 3-column majority: a column whose two neighbours agree takes their class, so one noisy
    column does not split a range; the ends keep theirs. Every column is judged on the classes
    before smoothing, so a change of class that lasts two columns or more stays where it is."""
    return [
        kinds[i - 1] if 0 < i < len(kinds) - 1 and kinds[i - 1] == kinds[i + 1] else kind
        for i, kind in enumerate(kinds)
    ]


def size_span(first: Number, last: Number) -> str:
    """ "1 KiB–8 KiB", or "16 KiB" for a single size."""
    if first == last:
        return format_size(first)
    return f"{format_size(first)}–{format_size(last)}"


@dataclass
class SizeRange:
    kind: str
    first: Number
    last: Number

    def text(self) -> str:
        return size_span(self.first, self.last)


def class_ranges(g: Grid) -> List[SizeRange]:
    """Consecutive sizes of the same class once smoothed; sizes with no determined ratio are
    left out, so their neighbours are the sizes scored on either side of them."""
    scored = [(size, score) for size, score in zip(g.sizes, column_scores(g)) if score is not None]
    kinds = smoothed([classify(score) for _, score in scored])
    ranges: List[SizeRange] = []
    for (size, _), kind in zip(scored, kinds):
        if ranges and ranges[-1].kind == kind:
            ranges[-1].last = size
        else:
            ranges.append(SizeRange(kind, size, size))
    return ranges


def class_shares(points: Sequence[Record]) -> Dict[str, float]:
    """Share of the points with a defined ratio in each class; {} if none has one."""
    kinds = [classify(r) for r in (point_ratio(p) for p in points) if r is not None]
    counts = Counter(kinds)
    return {kind: counts[kind] / len(kinds) for kind in CLASSES} if kinds else {}


@dataclass
class MapSummary:
    """Figures of one ratio map, all over its determined points, as the diagnosis's."""

    bench: str
    points: int  # with a defined ratio
    determined: int
    invalid: Dict[str, int]  # how many points each reason makes invalid
    shares: Dict[str, float]
    median_ratio: Optional[float]
    osu_pct: Optional[float]  # medians of what OSU's and IMB's formulas give for the points
    imb_pct: Optional[float]


def map_summary(run: Run, bench: str) -> MapSummary:
    g = grid(run, bench)
    points = g.determined
    return MapSummary(
        bench=bench,
        points=g.rated,
        determined=len(points),
        invalid=g.invalid_reasons(),
        shares=class_shares(points),
        median_ratio=_median(point_ratio(p) for p in points),
        osu_pct=_median(osu_overlap_pct(*_ingredients(p)) for p in points),
        imb_pct=_median(imb_overlap_pct(*_ingredients(p)) for p in points),
    )


def _ranges_sentence(label: str, ranges: List[SizeRange], undetermined: int) -> str:
    phrases, explained = [], set()
    for size_range in ranges:
        phrase = f"{CLASS_NAMES[size_range.kind]} for {size_range.text()}"
        if size_range.kind in CLASS_REASONS and size_range.kind not in explained:
            phrase += f" ({CLASS_REASONS[size_range.kind]})"
            explained.add(size_range.kind)
        phrases.append(phrase)
    if undetermined:
        phrases.append(
            f"{counted(undetermined, 'size')} undetermined (no point determined to {PRECISION})"
        )
    return f"{label}: " + "; ".join(phrases)


def _over(determined: int, rated: int) -> str:
    """ "over its 12 points", or "over 9 of its 12 points, those determined to ±0.2"."""
    if determined == rated:
        return f"over its {counted(rated, 'point')}"
    return f"over {determined} of its {counted(rated, 'point')}, those determined to {PRECISION}"


def _shares_sentence(label: str, g: Grid) -> List[str]:
    determined = g.determined
    if not determined:
        return []
    shares = class_shares(determined)
    parts = [f"{percent(shares[kind])} {CLASS_NAMES[kind]}" for kind in CLASSES if shares[kind]]
    return [f"{label}, {_over(len(determined), g.rated)}: " + ", ".join(parts)]


def _undetermined_sentences(label: str, g: Grid) -> List[str]:
    """Advice to measure again when too much of a map is noise."""
    if not g.valid or len(g.undetermined) / g.valid <= UNDETERMINED_ADVICE_SHARE:
        return []
    return [
        f"{label}: {percent(len(g.undetermined) / g.valid)} of points are not determined "
        f"to {PRECISION}; {RERUN_ADVICE}"
    ]


# --- eager/rendezvous threshold ------------------------------------------------------------------


@dataclass
class Threshold:
    """Where the sender-side map changes behaviour with size; one side is None when it does not.

    small_overlap says which way: True is the classic eager/rendezvous switch (small sends
    overlap, larger ones do not); False is the reverse, where larger sends overlap better (a
    protocol driven by the receiver, such as a single-copy transfer on shared memory).
    """

    last_eager: Optional[Number]
    first_rendezvous: Optional[Number]
    small_overlap: bool = True

    @property
    def seen(self) -> bool:
        return self.last_eager is not None and self.first_rendezvous is not None


def _misplaced(scores: Sequence[float], k: int, small_overlap: bool) -> int:
    """Columns on the wrong side of a split before index k. With small_overlap, columns before
    it should overlap (< SWITCH_SCORE) and the others not; without, the reverse."""
    return sum((score >= SWITCH_SCORE) == small_overlap for score in scores[:k]) + sum(
        (score < SWITCH_SCORE) == small_overlap for score in scores[k:]
    )


def split_index(scores: Sequence[float], small_overlap: bool = True) -> int:
    """The split leaving fewest columns on the wrong side (first on ties), so a few noisy columns
    do not move it."""
    return min(range(len(scores) + 1), key=lambda k: _misplaced(scores, k, small_overlap))


def threshold(run: Run) -> Optional[Threshold]:
    """The size at which the sender-side map switches behaviour, in whichever direction fits the
    map best; None without that map."""
    if not run.points_of(SENDER):
        return None
    g = grid(run, SENDER)
    scored = [(size, score) for size, score in zip(g.sizes, column_scores(g)) if score is not None]
    if not scored:
        return None
    scores = [score for _, score in scored]
    # The classic direction wins ties: a map with no switch is then "every size overlaps" or
    # "no size overlaps", as before.
    fits = [
        (_misplaced(scores, split_index(scores, way), way), not way, way) for way in (True, False)
    ]
    _, _, way = min(fits)
    k = split_index(scores, way)
    return Threshold(
        last_eager=scored[k - 1][0] if k > 0 else None,
        first_rendezvous=scored[k][0] if k < len(scored) else None,
        small_overlap=way,
    )


def threshold_text(found: Threshold) -> str:
    if found.seen:
        return f"between {format_size(found.last_eager)} and {format_size(found.first_rendezvous)}"
    return (
        "none seen, every size overlaps"
        if found.first_rendezvous is None
        else "none seen, no size overlaps"
    )


def _switch_text(found: Threshold) -> str:
    """The switch and its direction, for comparisons."""
    if not found.seen:
        return threshold_text(found)
    way = "smaller sends overlap" if found.small_overlap else "larger sends overlap better"
    return f"{threshold_text(found)} ({way})"


def _threshold_sentences(run: Run) -> List[str]:
    found = threshold(run)
    if found is None:
        return []
    if found.seen and found.small_overlap:
        return [
            f"eager/rendezvous threshold {threshold_text(found)} ({LABELS[SENDER]} map): "
            "smaller sends overlap, larger ones do not"
        ]
    if found.seen:
        return [
            f"the {LABELS[SENDER]} map changes {threshold_text(found)}: from "
            f"{format_size(found.first_rendezvous)} on, sends overlap better than smaller ones "
            "(the library changes protocol there, to one that progresses without the sender, "
            "such as a copy driven by the receiver)"
        ]
    where = "at every size measured" if found.first_rendezvous is None else "at no size measured"
    return [f"no eager/rendezvous switch seen in the {LABELS[SENDER]} map: sends overlap {where}"]


# --- CPU overhead of small sends -----------------------------------------------------------------


@dataclass
class CpuOverhead:
    largest_size: Number
    cost_ns: float  # median of T_measured − T_comp over the small sizes
    blocking_send_ns: Optional[float]  # median blocking MPI_Send time at the same sizes


def cpu_overhead(run: Run) -> Optional[CpuOverhead]:
    """What a non-blocking send of an eager size costs its sender beyond the computation."""
    found = threshold(run)
    limit = found.last_eager if found is not None and found.seen else SMALL_SEND_BYTES
    costs: Dict[Number, List[float]] = {}
    g = grid(run, CPU)
    for point, reason in zip(g.points, g.invalid):
        if reason is not None:
            continue
        measured, _, comp = (record_number(v) for v in _ingredients(point))
        size = point["params"]["size_bytes"]
        if size <= limit and measured is not None and comp is not None:
            costs.setdefault(size, []).append(measured - comp)
    if not costs:
        return None
    sends = [
        record_number(p["stats"].get("send_ns"))
        for p in run.points_of("ref-send")
        if p["params"].get("size_bytes") in costs
    ]
    return CpuOverhead(
        largest_size=max(costs),
        cost_ns=statistics.median([c for cs in costs.values() for c in cs]),
        blocking_send_ns=_median(sends),
    )


def _cpu_sentences(run: Run) -> List[str]:
    found = cpu_overhead(run)
    if found is None:
        return []
    sentence = (
        f"a non-blocking send of up to {format_size(found.largest_size)} costs the sender "
        f"{format_time(found.cost_ns)} of CPU beyond its computation"
    )
    if found.blocking_send_ns is not None:
        sentence += f"; a blocking MPI_Send costs {format_time(found.blocking_send_ns)}"
    return [sentence]


# --- N threads load ------------------------------------------------------------------------------


def _factor(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def slowdowns(run: Run) -> List[Tuple[Record, float]]:
    return [
        (p, s)
        for p in grid(run, NLOAD).points
        if (s := record_number(p["stats"].get("slowdown"))) is not None
    ]


def worst_slowdown(run: Run) -> Optional[float]:
    return max((s for _, s in slowdowns(run)), default=None)


def _nload_sentences(run: Run) -> List[str]:
    measured = slowdowns(run)
    if not measured:
        return []
    label = LABELS[NLOAD]
    slow = [(p, s) for p, s in measured if s > PATHOLOGY_SLOWDOWN]
    if not slow:
        return [
            f"{label}: the computing threads do not disturb communication beyond "
            f"×{_factor(max(s for _, s in measured))}"
        ]
    threads = {p["params"]["threads"] for p, _ in slow}
    sizes = [p["params"]["size_bytes"] for p, _ in slow]
    noun = "thread" if threads == {1} else "threads"
    worst = max(s for _, s in slow)
    return [
        f"{label}: with {ranges(threads, '–')} computing {noun}, messages of "
        f"{size_span(min(sizes), max(sizes))} are up to {_factor(worst)}× slower than "
        "without load: a thread-scheduling pathology (the communicating thread waits for the "
        "scheduler's millisecond time slices)"
    ]


# --- control and collectives ---------------------------------------------------------------------


@dataclass
class ControlCheck:
    points: int  # with a defined ratio
    determined: int
    median: Optional[float]  # over the determined points; None with too few to check anything


def control_check(run: Run) -> Optional[ControlCheck]:
    """The blocking control's median ratio over its determined points; None without control."""
    g = grid(run, CONTROL)
    if not g.rated:
        return None
    ratios = [point_ratio(p) for p in g.determined]
    return ControlCheck(
        points=g.rated,
        determined=len(ratios),
        median=_median(ratios) if len(ratios) >= CONTROL_MIN_POINTS else None,
    )


def _control_sentences(run: Run) -> List[str]:
    check = control_check(run)
    if check is None:
        return []
    advice = _undetermined_sentences(LABELS[CONTROL], grid(run, CONTROL))
    median = check.median
    if median is None:
        points = (
            counted(check.points, "point")
            if check.determined == check.points
            else f"{check.determined} of its {counted(check.points, 'point')}"
        )
        return [
            f"method check: not made, the blocking control has only {points} determined "
            f"to {PRECISION} and its median needs at least {CONTROL_MIN_POINTS}"
        ] + advice
    sentences = [
        f"method check: the blocking control's median ratio is {median:.2f} "
        f"{_over(check.determined, check.points)} (must be about 1)"
    ]
    if not CONTROL_LOW <= median <= CONTROL_HIGH:
        sentences.append(
            f"warning: the blocking control cannot overlap, yet its median ratio is "
            f"{median:.2f} instead of about 1: this run's ratios are unreliable; the machine "
            "may be noisy or oversubscribed (more busy ranks or threads than cores), or the "
            "computation time inaccurate (see the sanity report)"
        )
    return sentences + advice


def worst_rank(point: Record) -> Optional[int]:
    """The rank a collective point reports, else the rank with the largest per-rank ratio."""
    stats = point["stats"]
    rank = stats.get("worst_rank")
    if isinstance(rank, int) and not isinstance(rank, bool):
        return rank
    per_rank = stats.get("per_rank")
    ratios = per_rank.get("ratio") if isinstance(per_rank, dict) else None
    finite = [(r, i) for i, r in enumerate(ratios or []) if record_number(r) is not None]
    return max(finite)[1] if finite else None


def _worst_rank_sentence(label: str, points: Sequence[Record]) -> List[str]:
    ranks = Counter(r for r in (worst_rank(p) for p in points) if r is not None)
    if not ranks:
        return []
    rank, count = ranks.most_common(1)[0]
    return [
        f"{label}: rank {rank} is most often the slowest to overlap (the worst rank at "
        f"{percent(count / len(points))} of points)"
    ]


# --- diagnosis -----------------------------------------------------------------------------------


def _map_sentences(run: Run, bench: str) -> List[str]:
    label, g = LABELS[bench], grid(run, bench)
    if not g.rated:
        return [f"{label}: no point has a defined ratio (T_comm or T_comp was not positive)"]
    if not g.valid:
        return _invalid_sentences(label, g)
    sentences = [
        _ranges_sentence(label, class_ranges(g), undetermined_sizes(g)),
        *_shares_sentence(label, g),
        *_undetermined_sentences(label, g),
        *_invalid_sentences(label, g),
    ]
    if bench in COLLECTIVES:
        sentences += _worst_rank_sentence(label, g.points)
    if bench == CPU:
        sentences += _cpu_sentences(run)
    return sentences


def invalid_text(reasons: Dict[str, int]) -> str:
    """ "reason A at 3 points; reason B at 1 point"."""
    return "; ".join(f"{reason} at {counted(count, 'point')}" for reason, count in reasons.items())


def _invalid_sentences(label: str, g: Grid) -> List[str]:
    """The points whose ratio cannot be true, by reason; they count nowhere else."""
    reasons = g.invalid_reasons()
    if not reasons:
        return []
    if not g.valid:
        return [f"warning: {label}: INVALID, every point: {invalid_text(reasons)}"]
    return [
        f"warning: {label}: {len(g.invalid_points)} of its {counted(g.rated, 'point')} are "
        f"invalid and left out: {invalid_text(reasons)}"
    ]


def _skip_sentences(run: Run) -> List[str]:
    return [f"skipped: {note.get('text', '')}" for note in run.notes if note.get("level") == "skip"]


def _kernel_sentences(run: Run) -> List[str]:
    """The computation, when it is not the rank's own busy loop: seed 000's multi-threaded one."""
    options = run.meta.get("options")
    options = options if isinstance(options, dict) else {}
    if options.get("kernel") != "openmp":
        return []
    threads = options.get("omp-threads")
    return [
        f"computation: an OpenMP parallel region of {threads} threads on each computing rank "
        "(--kernel openmp, seed 000's multi-threaded computation): threads that fill the cores "
        "may keep the library's own progress, or a progress thread, from running"
    ]


def diagnose(run: Run) -> List[str]:
    """Sentences for the report's findings, warnings starting with "warning:"."""
    if not any(p["bench"] in BENCHES or p["bench"].startswith("ref-") for p in run.points):
        return []
    sentences = _kernel_sentences(run) + _control_sentences(run) + _threshold_sentences(run)
    for bench in benches_present(run):
        if bench == NLOAD:
            sentences += _nload_sentences(run)
        elif bench != CONTROL:
            sentences += _map_sentences(run, bench)
    return sentences + _skip_sentences(run)


# --- comparison ----------------------------------------------------------------------------------


def run_names(run_a: Run, run_b: Run) -> Tuple[str, str]:
    """The MPI library of each run when they differ, else A and B."""
    mpis = [run.meta.get("mpi") for run in (run_a, run_b)]
    names = [
        FLAVOUR_NAMES.get(str(mpi.get("flavour")), "") if isinstance(mpi, dict) else ""
        for mpi in mpis
    ]
    return (names[0], names[1]) if all(names) and names[0] != names[1] else ("A", "B")


def overlap_share(run: Run, bench: str) -> Optional[float]:
    """The share of overlapping points among the determined ones; None if none is."""
    return class_shares(grid(run, bench).determined).get("overlap")


def _share_phrase(names: Tuple[str, str], shares: Tuple[float, float]) -> str:
    return (
        f"{names[0]} overlaps at {percent(shares[0])} of determined points, {names[1]} "
        f"at {percent(shares[1])}"
    )


def _difference_sentence(label: str, names: Tuple[str, str], shares: Tuple[float, float]) -> str:
    """The run that overlaps more is named first."""
    if shares[1] > shares[0]:
        names, shares = (names[1], names[0]), (shares[1], shares[0])
    return f"{label}: {_share_phrase(names, shares)}"


def _control_text(check: ControlCheck) -> str:
    if check.median is None:
        return f"not made (too few points determined to {PRECISION})"
    return f"{check.median:.2f}"


# A figure measured of each run (a threshold, a check), for _both_sentence.
Measured = TypeVar("Measured")


def _both_sentence(
    what: str,
    runs: Tuple[Run, Run],
    names: Tuple[str, str],
    measure: Callable[[Run], Optional[Measured]],
    text: Callable[[Measured], str],
    separator: str = ", ",
) -> Optional[str]:
    """ "what: A's name and text, B's name and text", when both runs have the measure."""
    found = [measure(run) for run in runs]
    if found[0] is None or found[1] is None:
        return None
    return f"{what}: {names[0]} {text(found[0])}{separator}{names[1]} {text(found[1])}"


def compare(run_a: Run, run_b: Run) -> List[str]:
    """Sentences setting run A's overlap against run B's, the biggest differences first."""
    names = run_names(run_a, run_b)
    shared = [b for b in ratio_maps(run_a) if b in ratio_maps(run_b) and b != CONTROL]
    shares: Dict[str, Tuple[float, float]] = {}
    for bench in shared:
        share_a, share_b = overlap_share(run_a, bench), overlap_share(run_b, bench)
        if share_a is not None and share_b is not None:
            shares[bench] = share_a, share_b
    notable = sorted(
        (bench for bench, (a, b) in shares.items() if abs(a - b) >= NOTABLE_DIFFERENCE),
        key=lambda bench: -abs(shares[bench][0] - shares[bench][1]),
    )
    biggest = notable[:MOST_DIFFERENCES]
    sentences = []
    if biggest:
        sentences.append(
            "biggest differences: "
            + "; ".join(_difference_sentence(LABELS[b], names, shares[b]) for b in biggest)
        )
    elif shares:
        sentences.append(
            "no benchmark's share of overlapping points differs by "
            f"{percent(NOTABLE_DIFFERENCE)} or more"
        )
    sentences += [
        f"{LABELS[b]}: {_share_phrase(names, shares[b])}" for b in shares if b not in biggest
    ]
    runs = (run_a, run_b)
    both = [
        _both_sentence(
            f"where the {LABELS[SENDER]} map switches with size",
            runs,
            names,
            threshold,
            _switch_text,
            separator="; ",
        ),
        _both_sentence(
            "method check, median ratio of the blocking control (about 1 when the measurement "
            "is sound)",
            runs,
            names,
            control_check,
            _control_text,
        ),
        _both_sentence(
            f"{LABELS[NLOAD]}, worst slowdown",
            runs,
            names,
            worst_slowdown,
            lambda worst: f"×{_factor(worst)}",
        ),
    ]
    sentences += [sentence for sentence in both if sentence is not None]
    return sentences


# --- references ----------------------------------------------------------------------------------


def reference_rows(run: Run) -> List[Tuple[Number, Optional[float], Optional[float]]]:
    """(size, one-way ping-pong time, blocking MPI_Send time) for every reference size."""
    one_way = {
        p["params"].get("size_bytes"): record_number(p["stats"].get("one_way_ns"))
        for p in run.points_of("ref-pingpong")
    }
    send = {
        p["params"].get("size_bytes"): record_number(p["stats"].get("send_ns"))
        for p in run.points_of("ref-send")
    }
    sizes = sorted(size for size in {*one_way, *send} if record_number(size) is not None)
    return [(size, one_way.get(size), send.get(size)) for size in sizes]
