"""The map family on the report's first screen: its verdict (does reordering pay?) and what the
launch order costs, in the catalogue's symptom pattern-crosses-nodes: the time per iteration the
order `mpilens map` proposes saved, where that saving is beyond noise."""

from __future__ import annotations

from typing import List, Optional, Sequence

from ..advice import Symptom
from ..results import Run
from ..text import percent
from ..units import format_size, format_time
from .map import (
    AGREEMENT_POINTS,
    NO_REORDERING,
    CgPoint,
    Grid,
    cg_heads,
    cg_points,
    grid_heads,
    grids,
    iterations_text,
    signed,
)

SYMPTOM = "pattern-crosses-nodes"


def _grid_symptom(head: str, grid: Grid, evidence: str) -> Optional[Symptom]:
    """The cell whose launch order costs the largest share of an iteration, counted only where
    even the fastest repetition before reordering is slower than the slowest after it."""
    costly = [
        cell
        for cell in grid.cells.values()
        if cell.lowest_steady_pct is not None and cell.lowest_steady_pct > 0
    ]
    if grid.kept_in_place or not costly:
        return None
    worst = max(costly, key=lambda cell: cell.steady_pct)
    lowest = worst.lowest_steady_pct or 0.0
    saving_ns = 1e9 * (worst.before_s - worst.after_s) / worst.iterations
    return Symptom(
        key=SYMPTOM,
        text=(
            f"{head}: the launch order costs {format_time(saving_ns)} per iteration at "
            f"{format_size(worst.size)}, {percent(worst.steady_pct / 100)} of it (at least "
            f"{percent(lowest / 100)} from the fastest repetition before "
            "reordering to the slowest after): the reordered ranks exchanged more within nodes"
        ),
        cost_ns=saving_ns,
        share=worst.steady_pct / 100,
        evidence=evidence,
    )


def _noise_pct(entry: CgPoint, points: Sequence[CgPoint]) -> float:
    """How far two identical solves of the same problem differ (a point of algorithm none), in
    points of gain; AGREEMENT_POINTS, the analysis's margin, without one."""
    same = [
        abs(other.comm_after_s - other.comm_before_s) / other.comm_before_s * 100.0
        for other in points
        if other.algo == NO_REORDERING and (other.ranks, other.shape) == (entry.ranks, entry.shape)
    ]
    return max(same) if same else AGREEMENT_POINTS


def _cg_symptom(head: str, entry: CgPoint, points: Sequence[CgPoint]) -> Optional[Symptom]:
    if entry.algo == NO_REORDERING or entry.kept_in_place:
        return None
    noise = _noise_pct(entry, points)
    if entry.steady_pct <= noise:
        return None
    saving_ns = 1e9 * (entry.comm_before_s - entry.comm_after_s) / entry.iterations
    return Symptom(
        key=SYMPTOM,
        text=(
            f"{head}: the launch order costs {format_time(saving_ns)} of communication per "
            f"iteration, {percent(entry.steady_pct / 100)} of it, beyond the {noise:.0f} points "
            "two identical solves differ by: the reordered ranks exchanged more within nodes"
        ),
        cost_ns=saving_ns,
        share=entry.steady_pct / 100,
        evidence="cg",
    )


def symptoms(run: Run) -> List[Symptom]:
    """Each setting whose launch order costs time that the proposed order saved."""
    found: List[Optional[Symptom]] = []
    every = grids(run)
    for index, (head, grid) in enumerate(zip(grid_heads(every), every)):
        evidence = "gain" if len(every) == 1 else f"gain-{index + 1}"
        found.append(_grid_symptom(head, grid, evidence))
    points = cg_points(run)
    found += [_cg_symptom(head, entry, points) for head, entry in zip(cg_heads(points), points)]
    return [symptom for symptom in found if symptom is not None]


def _grid_verdict(head: str, grid: Grid) -> str:
    if not grid.cells:
        return f"{head}: every cell is invalid (a gain the cost model cannot explain)."
    paying = [cell for cell in grid.cells.values() if cell.gain_pct > 0]
    best = grid.best()
    where = f"{format_size(best.size)} and {iterations_text(best.iterations)}"
    if not paying:
        return (
            f"{head}: reordering pays in none of its {len(grid.cells)} cells, its own time "
            f"counted (best {signed(best.gain_pct)} at {where})."
        )
    return (
        f"{head}: reordering pays in {len(paying)} of {len(grid.cells)} cells, its own time "
        f"counted, up to {signed(best.gain_pct)} at {where}."
    )


def _cg_verdict(head: str, entry: CgPoint) -> str:
    steady = entry.steady_pct
    change = f"{percent(steady / 100)} less" if steady >= 0 else f"{percent(-steady / 100)} more"
    return (
        f"{head}: after reordering, communication takes {change} time; "
        f"{signed(entry.gain_pct)} with the reordering's own time."
    )


def verdict(run: Run) -> Optional[str]:
    """Whether reordering pays, per setting measured (at most two named)."""
    every = grids(run)
    sentences = [_grid_verdict(head, grid) for head, grid in zip(grid_heads(every), every)]
    points = cg_points(run)
    sentences += [
        _cg_verdict(head, entry)
        for head, entry in zip(cg_heads(points), points)
        if entry.algo != NO_REORDERING
    ]
    if not sentences:
        return None
    more = len(sentences) - 2
    return " ".join(sentences[:2]) + (f" ({more} more below.)" if more > 0 else "")
