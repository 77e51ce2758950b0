"""What the overlap family's points say: the overhead ratio, its maps, and plain sentences.

The contract is docs/overlap.md. Everything here is plain Python (no numpy): the CLI imports it
on every start, and only the commands that draw should pay for the numeric libraries.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..errors import MpilensError
from ..results import Record, Run
from ..units import Number, format_size, format_time

# Every benchmark of docs/overlap.md, in the order reports draw them: the seed's figures first.
BENCHES = ("sender", "receiver", "bidir", "noncontig", "cpu", "nload", "control", "late", "multi",
           "ibcast", "iallreduce", "ialltoall")
COLLECTIVES = ("ibcast", "iallreduce", "ialltoall")
SENDER, CPU, NLOAD, CONTROL = "sender", "cpu", "nload", "control"

LABELS = {
    "sender": "sender-side", "receiver": "receiver-side", "bidir": "both sides",
    "noncontig": "non-contiguous sender-side", "cpu": "sender CPU overhead",
    "nload": "N threads load", "control": "blocking control", "late": "late receiver",
    "multi": "several peers", "ibcast": "MPI_Ibcast", "iallreduce": "MPI_Iallreduce",
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
    "multi": "MPI_Isend to several peers at once, compute, MPI_Waitall: several requests in "
             "flight",
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
CLASS_NAMES = {"overlap": "overlap", "partial": "partial overlap", "none": "no overlap",
               "hurts": "overlap hurts"}
CLASS_REASONS = {"none": "communication and computation are serialised",
                 "hurts": "slower than communicating, then computing"}
# Sender-side columns scoring at least this are on the rendezvous side of the threshold.
SWITCH_SCORE = 0.5
# Sizes assumed to go eager when the sender-side map shows no threshold.
SMALL_SEND_BYTES = 4096
# Slowdowns beyond 10 are not contention but waiting for the scheduler (time slices are ms).
PATHOLOGY_SLOWDOWN = 10.0
CONTROL_LOW, CONTROL_HIGH = 0.8, 1.2
# Shares of overlapping points closer than this are not called a difference between two runs.
NOTABLE_DIFFERENCE = 0.10
MOST_DIFFERENCES = 3

FLAVOUR_NAMES = {"openmpi": "Open MPI", "mpich": "MPICH", "intelmpi": "Intel MPI",
                 "mvapich": "MVAPICH", "craympich": "Cray MPICH"}


def _number(value: object) -> Optional[float]:
    """A finite number from a record; None for null, text, NaN or infinity."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _median(values: Iterable[Optional[float]]) -> Optional[float]:
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


# --- the metric ----------------------------------------------------------------------------------

def ratio(t_measured: Optional[Number], t_comm: Optional[Number],
          t_comp: Optional[Number]) -> Optional[float]:
    """Seed eq. 1: (T − max(T_comm, T_comp)) / min(T_comm, T_comp).

    0 is perfect overlap, 1 serialised, above 1 slower than serialised; None when it is not
    defined (an input missing, or T_comm or T_comp not positive).
    """
    measured, comm, comp = (_number(value) for value in (t_measured, t_comm, t_comp))
    if measured is None or comm is None or comp is None or min(comm, comp) <= 0:
        return None
    return (measured - max(comm, comp)) / min(comm, comp)


def osu_overlap_pct(t_measured: Optional[Number], t_comm: Optional[Number],
                    t_comp: Optional[Number]) -> Optional[float]:
    """OSU micro-benchmarks' overlap %: max(0, 100 − 100·(T − T_comp)/T_comm)."""
    measured, comm, comp = (_number(value) for value in (t_measured, t_comm, t_comp))
    if measured is None or comm is None or comp is None or comm <= 0:
        return None
    return max(0.0, 100 - 100 * (measured - comp) / comm)


def imb_overlap_pct(t_measured: Optional[Number], t_comm: Optional[Number],
                    t_comp: Optional[Number]) -> Optional[float]:
    """Intel MPI Benchmarks' overlap % (as documented): 100·(1 − ratio) clipped to [0, 100]."""
    measured, comm, comp = (_number(value) for value in (t_measured, t_comm, t_comp))
    if measured is None or comm is None or comp is None or min(comm, comp) <= 0:
        return None
    return 100 * max(0.0, min(1.0, (comm + comp - measured) / min(comm, comp)))


def _ingredients(point: Record) -> Tuple[Any, Any, Any]:
    """(T_measured, T_comm, T_comp) as stored, for the metric functions to check."""
    stats = point["stats"]
    return stats.get("t_measured_ns"), stats.get("t_comm_ns"), stats.get("t_comp_ns")


def point_ratio(point: Record) -> Optional[float]:
    """The ratio the program stored (for nload: the slowdown − 1)."""
    return _number(point["stats"].get("ratio"))


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

    def _cells(self) -> Dict[Tuple[Number, Number], Record]:
        return {(p["params"]["size_bytes"], p["params"][self.y_key]): p for p in self.points}

    def values(self, stat: str) -> List[List[float]]:
        """stats[stat] per cell, one list per y value; NaN where no point or no value."""
        cells = self._cells()
        return [[_nan_for_none(_number(cells[(size, y)]["stats"].get(stat)))
                 if (size, y) in cells else math.nan for size in self.sizes] for y in self.ys]

    @property
    def ratios(self) -> List[List[float]]:
        return self.values("ratio")

    def column(self, size: Number) -> List[Record]:
        return [p for p in self.points if p["params"]["size_bytes"] == size]


def _nan_for_none(value: Optional[float]) -> float:
    return math.nan if value is None else value


def _placed(point: Record, key: str) -> bool:
    params = point["params"]
    return _number(params.get("size_bytes")) is not None and _number(params.get(key)) is not None


def grid(run: Run, bench: str) -> Grid:
    """The map of one benchmark; reference benchmarks (ref-*) have none."""
    if bench not in BENCHES:
        raise MpilensError(f'"{bench}" is not an overlap benchmark with a map; those are: '
                           + ", ".join(BENCHES))
    key = y_key(bench)
    points = [p for p in run.points_of(bench) if _placed(p, key)]
    sizes = sorted({p["params"]["size_bytes"] for p in points})
    t_comm = [_median(_number(p["stats"].get("t_comm_ns")) for p in points
                      if p["params"]["size_bytes"] == size) for size in sizes]
    return Grid(bench=bench, y_key=key, sizes=sizes,
                ys=sorted({p["params"][key] for p in points}), t_comm=t_comm, points=points)


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
    rows = [(point_ratio(p), _number(p["stats"].get("t_comp_ns")),
             _number(p["stats"].get("t_comm_ns"))) for p in points]
    hiding = [r for r, comp, comm in rows
              if r is not None and comp is not None and comm is not None and comp >= comm]
    return _median(hiding or [r for r, _, _ in rows])


def column_scores(g: Grid) -> List[Optional[float]]:
    return [column_score(g.column(size)) for size in g.sizes]


def size_span(first: Number, last: Number) -> str:
    """"1 KiB–8 KiB", or "16 KiB" for a single size."""
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
    """Consecutive sizes of the same class; sizes with no defined ratio are left out."""
    ranges: List[SizeRange] = []
    for size, score in zip(g.sizes, column_scores(g)):
        if score is None:
            continue
        kind = classify(score)
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
    bench: str
    points: int  # with a defined ratio
    shares: Dict[str, float]
    median_ratio: Optional[float]
    osu_pct: Optional[float]  # medians of what OSU's and IMB's formulas give for the points
    imb_pct: Optional[float]


def map_summary(run: Run, bench: str) -> MapSummary:
    points = run.points_of(bench)
    ratios = [point_ratio(p) for p in points]
    return MapSummary(bench=bench, points=sum(r is not None for r in ratios),
                      shares=class_shares(points), median_ratio=_median(ratios),
                      osu_pct=_median(osu_overlap_pct(*_ingredients(p)) for p in points),
                      imb_pct=_median(imb_overlap_pct(*_ingredients(p)) for p in points))


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.0f}%"


def _ranges_sentence(label: str, ranges: List[SizeRange]) -> str:
    phrases, explained = [], set()
    for size_range in ranges:
        phrase = f"{CLASS_NAMES[size_range.kind]} for {size_range.text()}"
        if size_range.kind in CLASS_REASONS and size_range.kind not in explained:
            phrase += f" ({CLASS_REASONS[size_range.kind]})"
            explained.add(size_range.kind)
        phrases.append(phrase)
    return f"{label}: " + "; ".join(phrases)


def _shares_sentence(label: str, shares: Dict[str, float], count: int) -> str:
    parts = [f"{_percent(shares[kind])} {CLASS_NAMES[kind]}" for kind in CLASSES if shares[kind]]
    noun = "point" if count == 1 else "points"
    return f"{label}, over its {count} {noun}: " + ", ".join(parts)


# --- eager/rendezvous threshold ------------------------------------------------------------------

@dataclass
class Threshold:
    """Where the sender-side map stops overlapping; one side is None when no switch was seen."""

    last_eager: Optional[Number]
    first_rendezvous: Optional[Number]

    @property
    def seen(self) -> bool:
        return self.last_eager is not None and self.first_rendezvous is not None


def split_index(scores: Sequence[float]) -> int:
    """Columns before the index overlap (< SWITCH_SCORE), the others do not: the split leaving
    fewest columns on the wrong side, so a few noisy columns do not move it (first on ties)."""
    def wrong(k: int) -> int:
        return (sum(score >= SWITCH_SCORE for score in scores[:k])
                + sum(score < SWITCH_SCORE for score in scores[k:]))

    return min(range(len(scores) + 1), key=wrong)


def threshold(run: Run) -> Optional[Threshold]:
    """The eager/rendezvous threshold seen in the sender-side map; None without that map."""
    if not run.points_of(SENDER):
        return None
    g = grid(run, SENDER)
    scored = [(size, score) for size, score in zip(g.sizes, column_scores(g)) if score is not None]
    if not scored:
        return None
    k = split_index([score for _, score in scored])
    return Threshold(last_eager=scored[k - 1][0] if k > 0 else None,
                     first_rendezvous=scored[k][0] if k < len(scored) else None)


def threshold_text(found: Threshold) -> str:
    if found.seen:
        return (f"between {format_size(found.last_eager)} and "
                f"{format_size(found.first_rendezvous)}")
    return "none seen, every size overlaps" if found.first_rendezvous is None \
        else "none seen, no size overlaps"


def _threshold_sentences(run: Run) -> List[str]:
    found = threshold(run)
    if found is None:
        return []
    if found.seen:
        return [f"eager/rendezvous threshold {threshold_text(found)} ({LABELS[SENDER]} map)"]
    where = "at every size measured" if found.first_rendezvous is None else "at no size measured"
    return [f"no eager/rendezvous switch seen in the {LABELS[SENDER]} map: sends overlap {where}"]


# --- CPU overhead of small sends -----------------------------------------------------------------

@dataclass
class CpuOverhead:
    largest_size: Number
    cost_ns: float               # median of T_measured − T_comp over the small sizes
    blocking_send_ns: Optional[float]  # median blocking MPI_Send time at the same sizes


def cpu_overhead(run: Run) -> Optional[CpuOverhead]:
    """What a non-blocking send of an eager size costs its sender beyond the computation."""
    found = threshold(run)
    limit = found.last_eager if found is not None and found.seen else SMALL_SEND_BYTES
    costs: Dict[Number, List[float]] = {}
    for point in grid(run, CPU).points:
        measured, _, comp = (_number(v) for v in _ingredients(point))
        size = point["params"]["size_bytes"]
        if size <= limit and measured is not None and comp is not None:
            costs.setdefault(size, []).append(measured - comp)
    if not costs:
        return None
    sends = [_number(p["stats"].get("send_ns")) for p in run.points_of("ref-send")
             if p["params"].get("size_bytes") in costs]
    return CpuOverhead(largest_size=max(costs),
                       cost_ns=statistics.median([c for cs in costs.values() for c in cs]),
                       blocking_send_ns=_median(sends))


def _cpu_sentences(run: Run) -> List[str]:
    found = cpu_overhead(run)
    if found is None:
        return []
    sentence = (f"a non-blocking send of up to {format_size(found.largest_size)} costs the sender "
                f"{format_time(found.cost_ns)} of CPU beyond its computation")
    if found.blocking_send_ns is not None:
        sentence += f"; a blocking MPI_Send costs {format_time(found.blocking_send_ns)}"
    return [sentence]


# --- N threads load ------------------------------------------------------------------------------

def _int_ranges(values: Iterable[Number]) -> str:
    """3, 5-7 style text of whole numbers."""
    spans: List[List[int]] = []
    for value in sorted({int(v) for v in values}):
        if spans and value == spans[-1][1] + 1:
            spans[-1][1] = value
        else:
            spans.append([value, value])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)


def _factor(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def slowdowns(run: Run) -> List[Tuple[Record, float]]:
    return [(p, s) for p in grid(run, NLOAD).points
            if (s := _number(p["stats"].get("slowdown"))) is not None]


def worst_slowdown(run: Run) -> Optional[float]:
    return max((s for _, s in slowdowns(run)), default=None)


def _nload_sentences(run: Run) -> List[str]:
    measured = slowdowns(run)
    if not measured:
        return []
    label = LABELS[NLOAD]
    slow = [(p, s) for p, s in measured if s > PATHOLOGY_SLOWDOWN]
    if not slow:
        return [f"{label}: the computing threads do not disturb communication beyond "
                f"×{_factor(max(s for _, s in measured))}"]
    threads = {p["params"]["threads"] for p, _ in slow}
    sizes = [p["params"]["size_bytes"] for p, _ in slow]
    noun = "thread" if threads == {1} else "threads"
    worst = max(s for _, s in slow)
    return [f"{label}: with {_int_ranges(threads)} computing {noun}, messages of "
            f"{size_span(min(sizes), max(sizes))} are up to {_factor(worst)}× slower than "
            "without load: a thread-scheduling pathology (the communicating thread waits for the "
            "scheduler's millisecond time slices)"]


# --- control and collectives ---------------------------------------------------------------------

def control_median(run: Run) -> Optional[float]:
    return _median(point_ratio(p) for p in run.points_of(CONTROL))


def _control_sentences(run: Run) -> List[str]:
    median = control_median(run)
    if median is None:
        return []
    sentences = [f"method check: the blocking control's median ratio is {median:.2f} "
                 "(must be about 1)"]
    if not CONTROL_LOW <= median <= CONTROL_HIGH:
        sentences.append(
            f"warning: the blocking control cannot overlap, yet its median ratio is "
            f"{median:.2f} instead of about 1: this run's ratios are unreliable; the machine "
            "may be noisy or oversubscribed (more busy ranks or threads than cores), or the "
            "computation time inaccurate (see the sanity report)")
    return sentences


def worst_rank(point: Record) -> Optional[int]:
    """The rank a collective point reports, else the rank with the largest per-rank ratio."""
    stats = point["stats"]
    rank = stats.get("worst_rank")
    if isinstance(rank, int) and not isinstance(rank, bool):
        return rank
    per_rank = stats.get("per_rank")
    ratios = per_rank.get("ratio") if isinstance(per_rank, dict) else None
    finite = [(r, i) for i, r in enumerate(ratios or []) if _number(r) is not None]
    return max(finite)[1] if finite else None


def _worst_rank_sentence(label: str, points: Sequence[Record]) -> List[str]:
    ranks = Counter(r for r in (worst_rank(p) for p in points) if r is not None)
    if not ranks:
        return []
    rank, count = ranks.most_common(1)[0]
    return [f"{label}: rank {rank} is most often the slowest to overlap (the worst rank at "
            f"{_percent(count / len(points))} of points)"]


# --- diagnosis -----------------------------------------------------------------------------------

def _map_sentences(run: Run, bench: str) -> List[str]:
    label, g = LABELS[bench], grid(run, bench)
    ranges, shares = class_ranges(g), class_shares(g.points)
    if not ranges:
        return [f"{label}: no point has a defined ratio (T_comm or T_comp was not positive)"]
    counted = sum(point_ratio(p) is not None for p in g.points)
    sentences = [_ranges_sentence(label, ranges), _shares_sentence(label, shares, counted)]
    if bench in COLLECTIVES:
        sentences += _worst_rank_sentence(label, g.points)
    if bench == CPU:
        sentences += _cpu_sentences(run)
    return sentences


def _skip_sentences(run: Run) -> List[str]:
    return [f"skipped: {note.get('text', '')}" for note in run.notes if note.get("level") == "skip"]


def diagnose(run: Run) -> List[str]:
    """Sentences for the report's findings, warnings starting with "warning:"."""
    if not any(p["bench"] in BENCHES or p["bench"].startswith("ref-") for p in run.points):
        return []
    sentences = _control_sentences(run) + _threshold_sentences(run)
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
    names = [FLAVOUR_NAMES.get(str(mpi.get("flavour")), "") if isinstance(mpi, dict) else ""
             for mpi in mpis]
    return (names[0], names[1]) if all(names) and names[0] != names[1] else ("A", "B")


def overlap_share(run: Run, bench: str) -> Optional[float]:
    return class_shares(run.points_of(bench)).get("overlap")


def _share_phrase(names: Tuple[str, str], shares: Tuple[float, float]) -> str:
    return (f"{names[0]} overlaps at {_percent(shares[0])} of points, {names[1]} at "
            f"{_percent(shares[1])}")


def _difference_sentence(label: str, names: Tuple[str, str],
                         shares: Tuple[float, float]) -> str:
    """The run that overlaps more is named first."""
    if shares[1] > shares[0]:
        names, shares = (names[1], names[0]), (shares[1], shares[0])
    return f"{label}: {_share_phrase(names, shares)}"


def compare(run_a: Run, run_b: Run) -> List[str]:
    """Sentences setting run A's overlap against run B's, the biggest differences first."""
    names = run_names(run_a, run_b)
    shared = [b for b in ratio_maps(run_a) if b in ratio_maps(run_b) and b != CONTROL]
    shares = {bench: (overlap_share(run_a, bench), overlap_share(run_b, bench))
              for bench in shared}
    shares = {bench: pair for bench, pair in shares.items() if None not in pair}
    notable = sorted((bench for bench, (a, b) in shares.items()
                      if abs(a - b) >= NOTABLE_DIFFERENCE),
                     key=lambda bench: -abs(shares[bench][0] - shares[bench][1]))
    biggest = notable[:MOST_DIFFERENCES]
    sentences = []
    if biggest:
        sentences.append("biggest differences: " + "; ".join(
            _difference_sentence(LABELS[b], names, shares[b]) for b in biggest))
    elif shares:
        sentences.append("no benchmark's share of overlapping points differs by "
                         f"{_percent(NOTABLE_DIFFERENCE)} or more")
    sentences += [f"{LABELS[b]}: {_share_phrase(names, shares[b])}" for b in shares
                  if b not in biggest]
    thresholds = threshold(run_a), threshold(run_b)
    if None not in thresholds:
        sentences.append(f"eager/rendezvous threshold ({LABELS[SENDER]} map): {names[0]} "
                         f"{threshold_text(thresholds[0])}; {names[1]} "
                         f"{threshold_text(thresholds[1])}")
    controls = control_median(run_a), control_median(run_b)
    if None not in controls:
        sentences.append(f"method check, median ratio of the blocking control (about 1 when the "
                         f"measurement is sound): {names[0]} {controls[0]:.2f}, {names[1]} "
                         f"{controls[1]:.2f}")
    worst = worst_slowdown(run_a), worst_slowdown(run_b)
    if None not in worst:
        sentences.append(f"{LABELS[NLOAD]}, worst slowdown: {names[0]} ×{_factor(worst[0])}, "
                         f"{names[1]} ×{_factor(worst[1])}")
    return sentences


# --- references ----------------------------------------------------------------------------------

def reference_rows(run: Run) -> List[Tuple[Number, Optional[float], Optional[float]]]:
    """(size, one-way ping-pong time, blocking MPI_Send time) for every reference size."""
    one_way = {p["params"].get("size_bytes"): _number(p["stats"].get("one_way_ns"))
               for p in run.points_of("ref-pingpong")}
    send = {p["params"].get("size_bytes"): _number(p["stats"].get("send_ns"))
            for p in run.points_of("ref-send")}
    sizes = sorted(size for size in {*one_way, *send} if _number(size) is not None)
    return [(size, one_way.get(size), send.get(size)) for size in sizes]
