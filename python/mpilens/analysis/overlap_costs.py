"""What the lack of overlap costs, in the catalogue's symptoms (advice.Symptom): per map, the
time an operation takes beyond perfect overlap where it does not overlap, over its determined
valid points only (an invalid or undetermined point is no evidence of anything)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

from ..advice import Symptom, size_value
from ..results import Record, Run, record_number
from ..text import counted, percent
from ..units import format_size, format_time
from .overlap import (
    COLLECTIVES,
    LABELS,
    Grid,
    class_ranges,
    classify,
    grid,
    point_ratio,
    ratio_maps,
    size_span,
)

SYMPTOM_OF = {
    "sender": "no-overlap-send",
    "noncontig": "no-overlap-send",
    "multi": "no-overlap-send",
    "multi-same": "no-overlap-send",
    "threads": "no-overlap-send",
    "receiver": "no-overlap-recv",
    "late": "no-overlap-recv",
    "bidir": "no-overlap-recv",
    **dict.fromkeys(COLLECTIVES, "no-overlap-collective"),
}


@dataclass(frozen=True)
class Loss:
    point: Record
    lost_ns: float  # beyond the longer of T_comm and T_comp (perfect overlap)
    beyond_serial_ns: float  # beyond T_comm + T_comp (no overlap at all)
    measured_ns: float

    @property
    def share(self) -> float:
        return self.lost_ns / self.measured_ns


def _loss(point: Record) -> Optional[Loss]:
    stats = point["stats"]
    measured, comm, comp = (
        record_number(stats.get(key)) for key in ("t_measured_ns", "t_comm_ns", "t_comp_ns")
    )
    if measured is None or comm is None or comp is None or measured <= 0:
        return None
    return Loss(point, measured - max(comm, comp), measured - comm - comp, measured)


def _where(loss: Loss) -> str:
    params = loss.point["params"]
    size = format_size(params.get("size_bytes"))
    comp = record_number(params.get("compute_ns"))
    return f"{size}" + (f" with {format_time(comp)} of computation" if comp else "")


def _losses(g: Grid, kinds: Sequence[str]) -> List[Loss]:
    """The determined valid points of those classes, with what they lost."""
    found = []
    for point in g.determined:
        ratio = point_ratio(point)
        loss = _loss(point) if ratio is not None and classify(ratio) in kinds else None
        if loss is not None and loss.lost_ns > 0:
            found.append(loss)
    return found


def _no_overlap(bench: str, g: Grid) -> Optional[Symptom]:
    # Partial overlap costs time too: the ratio's share of the shorter part is not hidden.
    losses = _losses(g, ("partial", "none", "hurts"))
    if not losses:
        return None
    worst = max(losses, key=lambda loss: loss.share)
    sizes = [loss.point["params"]["size_bytes"] for loss in losses]
    span = size_span(min(sizes), max(sizes))
    return Symptom(
        key=SYMPTOM_OF[bench],
        text=(
            f"{LABELS[bench]} ({bench}): no full overlap at {len(losses)} of its "
            f"{counted(len(g.determined), 'determined point')} ({span}); "
            f"at {_where(worst)} an operation takes {format_time(worst.lost_ns)} longer than with "
            f"full overlap, {percent(worst.share)} of its time"
        ),
        cost_ns=worst.lost_ns,
        share=worst.share,
        evidence=f"map-{bench}",
        values={"size": size_value(max(sizes))},
        bench=f"overlap:{bench}",
    )


def _hurts(bench: str, g: Grid) -> Optional[Symptom]:
    losses = [loss for loss in _losses(g, ("hurts",)) if loss.beyond_serial_ns > 0]
    if not losses:
        return None
    worst = max(losses, key=lambda loss: loss.beyond_serial_ns / loss.measured_ns)
    share = worst.beyond_serial_ns / worst.measured_ns
    return Symptom(
        key="overlap-hurts",
        text=(
            f"{LABELS[bench]} ({bench}): communicating during the computation is slower than "
            f"communicating, then computing, at {counted(len(losses), 'point')}; at "
            f"{_where(worst)} by {format_time(worst.beyond_serial_ns)}, {percent(share)} of "
            "its time (ranks or threads competing for a core, or a transfer that slows the "
            "computation)"
        ),
        cost_ns=worst.beyond_serial_ns,
        share=share,
        evidence=f"map-{bench}",
        bench=f"overlap:{bench}",
    )


def symptoms(run: Run) -> List[Symptom]:
    """Per map that measures the overlap of an operation: where it does not overlap, and where
    overlapping costs more than not overlapping."""
    found: List[Symptom] = []
    for bench in ratio_maps(run):
        if bench not in SYMPTOM_OF:
            continue
        g = grid(run, bench)
        found += [s for s in (_no_overlap(bench, g), _hurts(bench, g)) if s is not None]
    return found


def _map_state(g: Grid) -> Optional[str]:
    """ "overlaps", where it stops overlapping ("from 64 KiB", "at no size", "at 4 KiB,
    64 KiB–1 MiB"), "undetermined" or "invalid"."""
    if g.rated and not g.valid:
        return "invalid"
    ranges = class_ranges(g)
    if not ranges:
        return "undetermined"
    failing = [r for r in ranges if r.kind in ("none", "hurts")]
    if not failing:
        return "overlaps"
    if len(failing) == len(ranges):
        return "at no size"
    if ranges[-len(failing) :] == failing:
        return f"from {format_size(failing[0].first)}"
    return "at " + ", ".join(r.text() for r in failing)


def verdict(run: Run) -> Optional[str]:
    """The family's verdict in one or two sentences: which operations overlap at every size,
    which stop overlapping (and from which size), which could not be decided."""
    states = {
        bench: _map_state(grid(run, bench)) for bench in ratio_maps(run) if bench in SYMPTOM_OF
    }
    if not states:
        return None
    overlapping = [b for b, state in states.items() if state == "overlaps"]
    failing = [
        f"{b} ({state})"
        for b, state in states.items()
        if state not in ("overlaps", "undetermined", "invalid")
    ]
    sentences = []
    if failing:
        sentences.append("Does not overlap: " + ", ".join(failing) + ".")
    if overlapping:
        sentences.append("Overlaps at every size decided: " + ", ".join(overlapping) + ".")
    unknown = [b for b, state in states.items() if state in ("undetermined", "invalid")]
    if unknown:
        sentences.append("Not decided (undetermined or invalid): " + ", ".join(unknown) + ".")
    return " ".join(sentences)
