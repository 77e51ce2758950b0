"""What the sanity family's points say about this machine and MPI, as sentences and tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ..results import Record, Run
from ..text import percent
from ..units import format_time

# Beyond this resolution, timing a microsecond-scale interval to 1% needs too many repetitions.
COARSE_CLOCK_NS = 100
ACCURACY = 0.05
# More than this fraction of late starts means the lead time is too short to rely on.
LATE_FRACTION_LIMIT = 0.1

KERNEL_NAMES = {"time": "time-based compute", "work": "work-based compute"}
PHASE_NAMES = {"start": "start of run", "end": "end of run"}


@dataclass
class ComputePoint:
    target_ns: int
    achieved_ns: Optional[float]
    rel_error: Optional[float]
    q1_ns: Optional[float]
    q3_ns: Optional[float]
    units: Optional[int]


@dataclass
class Offset:
    rank: int
    phase: str
    offset_ns: float
    bound_ns: float
    rtt_ns: float
    rounds: int

    @property
    def within_bound(self) -> bool:
        return abs(self.offset_ns) <= self.bound_ns


def kernel_name(kernel: str) -> str:
    return KERNEL_NAMES.get(kernel, f'"{kernel}" compute')


def _sample(point: Record) -> Record:
    sample = point["stats"].get("sample")
    return sample if isinstance(sample, dict) else {}


def clock_rows(run: Run) -> List[Record]:
    """Per-rank clock stats, in rank order."""
    rows = [
        dict(point["stats"], rank=point["params"].get("rank")) for point in run.points_of("clock")
    ]
    return sorted(rows, key=lambda row: row["rank"] if row["rank"] is not None else -1)


def clock_summary(run: Run) -> Tuple[Optional[float], Optional[float]]:
    """(resolution, read cost) of the worst rank, or of rank 0's meta when no clock point exists."""
    rows = clock_rows(run) or [run.meta.get("clock", {})]
    resolutions = [row["resolution_ns"] for row in rows if row.get("resolution_ns") is not None]
    costs = [row["read_cost_ns"] for row in rows if row.get("read_cost_ns") is not None]
    return (max(resolutions) if resolutions else None, max(costs) if costs else None)


def compute_curves(run: Run) -> Dict[str, List[ComputePoint]]:
    """Per kernel, the compute points in increasing target order."""
    curves: Dict[str, List[ComputePoint]] = {}
    for point in run.points_of("compute"):
        stats, sample = point["stats"], _sample(point)
        curves.setdefault(point["params"].get("kernel", "?"), []).append(
            ComputePoint(
                target_ns=point["params"]["target_ns"],
                achieved_ns=stats.get("achieved_ns"),
                rel_error=stats.get("rel_error"),
                q1_ns=sample.get("q1"),
                q3_ns=sample.get("q3"),
                units=stats.get("units"),
            )
        )
    return {kernel: sorted(curve, key=lambda p: p.target_ns) for kernel, curve in curves.items()}


def is_accurate(point: ComputePoint) -> bool:
    return point.rel_error is not None and abs(point.rel_error) <= ACCURACY


def accurate_from(curve: List[ComputePoint]) -> Optional[int]:
    """The smallest target from which every larger target is within ACCURACY; None if none is."""
    limit = None
    for point in reversed(curve):
        if not is_accurate(point):
            break
        limit = point.target_ns
    return limit


def offsets(run: Run) -> List[Offset]:
    rows = [
        Offset(
            rank=point["params"]["rank"],
            phase=point["params"]["phase"],
            offset_ns=point["stats"]["offset_ns"],
            bound_ns=point["stats"]["bound_ns"],
            rtt_ns=point["stats"].get("rtt_ns"),
            rounds=point["stats"].get("rounds"),
        )
        for point in run.points_of("offset")
        if point["stats"].get("offset_ns") is not None
        and point["stats"].get("bound_ns") is not None
    ]
    return sorted(rows, key=lambda row: (row.rank, row.phase != "start"))


def drifts(rows: List[Offset]) -> Dict[int, float]:
    """Per rank measured at both phases: offset at the end minus offset at the start."""
    by_phase = {(row.rank, row.phase): row.offset_ns for row in rows}
    return {
        rank: by_phase[(rank, "end")] - by_phase[(rank, "start")]
        for rank, phase in by_phase
        if phase == "start" and (rank, "end") in by_phase
    }


def handshakes(run: Run) -> List[Record]:
    return sorted(
        run.points_of("handshake"),
        key=lambda p: (p["params"].get("leader", 0), p["params"].get("follower", 0)),
    )


def pair_name(point: Record) -> str:
    return f"{point['params'].get('leader', '?')}-{point['params'].get('follower', '?')}"


def starts(run: Run) -> List[Record]:
    return sorted(run.points_of("start"), key=lambda p: p["params"].get("lead_ns", 0))


def _diagnose_clock(run: Run) -> List[str]:
    resolution, cost = clock_summary(run)
    if resolution is None:
        return []
    source = run.meta.get("clock", {}).get("source", "clock")
    sentences = [
        f"clock {source}: resolution {format_time(resolution)}, one read costs {format_time(cost)}"
    ]
    if resolution > COARSE_CLOCK_NS:
        sentences.append(
            f"warning: the clock resolution ({format_time(resolution)}) is coarser than "
            f"{format_time(COARSE_CLOCK_NS)}: intervals shorter than "
            f"{format_time(resolution * 100)} cannot be timed to 1%"
        )
    return sentences


def _compute_sentence(kernel: str, curve: List[ComputePoint]) -> str:
    name = kernel_name(kernel)
    limit = accurate_from(curve)
    if limit is None:
        largest = curve[-1]
        error = "unknown" if largest.rel_error is None else f"{largest.rel_error * 100:+.0f}%"
        return (
            f"{name} is never accurate within {percent(ACCURACY)}: the error is {error} "
            f"even at the largest target, {format_time(largest.target_ns)}"
        )
    if limit == curve[0].target_ns:
        return (
            f"{name} is accurate within {percent(ACCURACY)} at every target tested "
            f"({format_time(curve[0].target_ns)} to {format_time(curve[-1].target_ns)})"
        )
    errors = [
        p.rel_error
        for p in curve
        if p.target_ns < limit and not is_accurate(p) and p.rel_error is not None
    ]
    if errors and all(error > 0 for error in errors):
        below = "measured computation times are overestimated"
    elif errors and all(error < 0 for error in errors):
        below = "measured computation times are underestimated"
    else:
        below = f"computation times are off by more than {percent(ACCURACY)}"
    return (
        f"{name} is accurate within {percent(ACCURACY)} from {format_time(limit)} up; "
        f"below that, {below}"
    )


def _diagnose_offsets(run: Run) -> List[str]:
    rows = offsets(run)
    if not rows:
        return []
    beyond = [row for row in rows if not row.within_bound]
    if run.meta.get("nodes") == 1 and not beyond:
        widest = max(row.bound_ns for row in rows)
        return [
            "all ranks share one clock: every offset is within its error bound "
            f"(bounds up to ±{format_time(widest)})"
        ]
    sentences = []
    if run.meta.get("nodes") == 1:
        worst = max(beyond, key=lambda row: abs(row.offset_ns) - row.bound_ns)
        sentences.append(
            f"warning: all ranks run on one host, yet the offset of rank {worst.rank} "
            f"({format_time(worst.offset_ns)}, {PHASE_NAMES.get(worst.phase, worst.phase)}) is "
            f"beyond its error bound (±{format_time(worst.bound_ns)}): the offset estimates "
            "are unreliable"
        )
    largest = max(rows, key=lambda row: abs(row.offset_ns))
    bound_note = "within" if largest.within_bound else "beyond"
    sentences.append(
        f"largest clock offset: {format_time(largest.offset_ns)} (rank {largest.rank}, "
        f"{PHASE_NAMES.get(largest.phase, largest.phase)}; {bound_note} its error bound "
        f"±{format_time(largest.bound_ns)})"
    )
    drift = drifts(rows)
    if drift:
        rank = max(drift, key=lambda r: abs(drift[r]))
        sentences.append(
            f"clock drift between start and end of run: up to "
            f"{format_time(drift[rank])} (rank {rank})"
        )
    return sentences


def _diagnose_handshakes(run: Run) -> List[str]:
    times = [(point["stats"].get("round_trip_ns"), pair_name(point)) for point in handshakes(run)]
    times = [(ns, pair) for ns, pair in times if ns is not None]
    if not times:
        return []
    if len(times) == 1:
        return [
            f"ready-first handshake round trip: {format_time(times[0][0])} median "
            f"(pair {times[0][1]})"
        ]
    low, high = min(times), max(times)
    return [
        f"ready-first handshake round trip: from {format_time(low[0])} (pair {low[1]}) to "
        f"{format_time(high[0])} (pair {high[1]}) median"
    ]


def _diagnose_starts(run: Run) -> List[str]:
    sentences = []
    for point in starts(run):
        lead = format_time(point["params"].get("lead_ns"))
        lateness = point["stats"].get("max_lateness_ns")
        late = point["stats"].get("late_fraction")
        sentence = (
            f"synchronized start (lead {lead}): the last rank starts a median "
            f"{format_time(lateness)} after the common start time"
        )
        if late == 0:
            sentence += "; no rank ever arrived after it"
        elif late is not None:
            sentence += f"; in {percent(late)} of repetitions a rank arrived after it"
        sentences.append(sentence)
        if late is not None and late > LATE_FRACTION_LIMIT:
            sentences.append(
                f"warning: with a {lead} lead, {percent(late)} of synchronized "
                "starts had a late rank; use a longer lead"
            )
    return sentences


def diagnose(run: Run) -> List[str]:
    """Sentences for the report's findings, warnings starting with "warning:"."""
    return (
        _diagnose_clock(run)
        + [_compute_sentence(kernel, curve) for kernel, curve in compute_curves(run).items()]
        + _diagnose_offsets(run)
        + _diagnose_handshakes(run)
        + _diagnose_starts(run)
    )


def _versus(a: Optional[float], b: Optional[float], more: str, less: str) -> str:
    """'21 ns vs 48 ns (2.3× slower in B)'."""
    text = f"{format_time(a)} vs {format_time(b)}"
    if not a or not b or a <= 0 or b <= 0:
        return text
    ratio = b / a
    if 1 / 1.05 <= ratio <= 1.05:
        return f"{text} (about the same)"
    factor, word = (ratio, more) if ratio > 1 else (1 / ratio, less)
    digits = 0 if factor >= 10 else 1
    return f"{text} ({factor:.{digits}f}× {word} in B)"


def _limit_text(limit: Optional[int]) -> str:
    return "never" if limit is None else f"from {format_time(limit)}"


def compare(run_a: Run, run_b: Run) -> List[str]:
    """Sentences setting run A's key sanity numbers against run B's."""
    (res_a, cost_a), (res_b, cost_b) = clock_summary(run_a), clock_summary(run_b)
    sentences = [
        f"clock read cost: {_versus(cost_a, cost_b, 'slower', 'faster')}",
        f"clock resolution: {_versus(res_a, res_b, 'coarser', 'finer')}",
    ]
    curves_a, curves_b = compute_curves(run_a), compute_curves(run_b)
    for kernel in [k for k in curves_a if k in curves_b]:
        sentences.append(
            f"{kernel_name(kernel)} accurate within {percent(ACCURACY)}: "
            f"{_limit_text(accurate_from(curves_a[kernel]))} vs "
            f"{_limit_text(accurate_from(curves_b[kernel]))}"
        )
    offsets_a, offsets_b = offsets(run_a), offsets(run_b)
    if offsets_a and offsets_b:
        largest_a = max(abs(row.offset_ns) for row in offsets_a)
        largest_b = max(abs(row.offset_ns) for row in offsets_b)
        sentences.append(
            "largest clock offset: " + _versus(largest_a, largest_b, "larger", "smaller")
        )
    pairs_b = {pair_name(point): point for point in handshakes(run_b)}
    for point in handshakes(run_a):
        other = pairs_b.get(pair_name(point))
        if other is not None:
            a, b = point["stats"].get("round_trip_ns"), other["stats"].get("round_trip_ns")
            sentences.append(
                f"handshake round trip (pair {pair_name(point)}): "
                + _versus(a, b, "slower", "faster")
            )
    leads_b = {point["params"].get("lead_ns"): point for point in starts(run_b)}
    for point in starts(run_a):
        lead = point["params"].get("lead_ns")
        other = leads_b.get(lead)
        if other is not None:
            a, b = point["stats"].get("max_lateness_ns"), other["stats"].get("max_lateness_ns")
            sentences.append(
                f"start lateness (lead {format_time(lead)}): " + _versus(a, b, "later", "earlier")
            )
    return sentences


def verdict(run: Run) -> Optional[str]:
    """From which duration this machine's timings can be trusted (every compute kernel accurate
    from there up), and whether the ranks' clocks agree; None when the run measured neither."""
    curves = compute_curves(run)
    limits = [accurate_from(curve) for curve in curves.values()]
    sentences = []
    if curves and None in limits:
        never = [kernel_name(k) for k, limit in zip(curves, limits) if limit is None]
        sentences.append(
            f"Do not trust computation times here: {', '.join(never)} is never accurate within "
            f"{percent(ACCURACY)}."
        )
    elif curves:
        limit = max(limit for limit in limits if limit is not None)
        sentences.append(
            f"Computation can be timed within {percent(ACCURACY)} from {format_time(limit)} up "
            "with every kernel measured."
        )
    rows = offsets(run)
    beyond = [row for row in rows if not row.within_bound]
    if rows and run.meta.get("nodes") == 1:
        sentences.append(
            "The ranks share one clock."
            if not beyond
            else "The clock offsets of ranks on one host are beyond their error bounds: "
            "offset estimates are unreliable."
        )
    elif rows:
        largest = max(rows, key=lambda row: abs(row.offset_ns))
        within = "within" if largest.within_bound else "beyond"
        sentences.append(
            f"The ranks' clocks differ by up to {format_time(abs(largest.offset_ns))} (rank "
            f"{largest.rank}, {within} its error bound ±{format_time(largest.bound_ns)})."
        )
    return " ".join(sentences) or None
