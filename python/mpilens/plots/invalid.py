"""How the plots show numbers that cannot be true (the analyses say why): never as measurements.
Points are grey hollow markers at their measured value, or on the bottom or top edge of the panel
when the axis cannot show it (at or below 0 on a log axis, outside fixed limits); bars and cells
dark grey, cross-hatched. Every such artist has the gid GID, each reason one legend entry,
"invalid: why", and a section lists them in a table. Imported as `inv`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..section import Part
from .common import Box, hatched_cells, headed_table

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

GID = "invalid"
FACE, HATCH, EDGE = "0.45", "xx", "0.15"
MARKER = "o"
HEADING = "Invalid points"


def label(reason: str) -> str:
    """The legend entry of one reason."""
    return f"invalid: {reason}"


def patch() -> Patch:
    """The legend key of invalid bars and cells."""
    from matplotlib.patches import Patch

    return Patch(facecolor=FACE, edgecolor=EDGE, hatch=HATCH)


def handles(reasons: Iterable[str]) -> Dict[str, Patch]:
    """One legend entry per distinct reason, in the invalid bars' and cells' look."""
    return {label(reason): patch() for reason in dict.fromkeys(reasons)}


def _line(axes: Axes, xs: Sequence[float], ys: Sequence[float], **extra: Any) -> Line2D:
    (line,) = axes.plot(
        xs,
        ys,
        linestyle="",
        marker=MARKER,
        markersize=6,
        markerfacecolor="none",
        markeredgecolor=FACE,
        markeredgewidth=1.4,
        zorder=4,
        gid=GID,
        **extra,
    )
    return line


def _edge_of(axes: Axes, y: Optional[float]) -> Optional[float]:
    """Where a value stands on the panel: None inside it, else 0 (bottom edge: no value, at or
    below 0 on a log axis, below fixed limits) or 1 (top edge: above them)."""
    if y is None or not math.isfinite(y) or (axes.get_yscale() == "log" and y <= 0):
        return 0.0
    if not axes.get_autoscaley_on():
        low, high = sorted(axes.get_ylim())
        return 0.0 if y < low else 1.0 if y > high else None
    return None


def markers(axes: Axes, points: Sequence[Tuple[float, Optional[float]]]) -> Optional[Line2D]:
    """The invalid points (x, measured value) of a panel whose axes' scales and limits are set:
    at their value when the panel can show it, else on its bottom or top edge (None: no value,
    on the bottom). Returns an artist for the legend, None when there is no point."""
    from matplotlib.transforms import blended_transform_factory

    log_x = axes.get_xscale() == "log"
    shown = [(x, y, _edge_of(axes, y)) for x, y in points if not (log_x and x <= 0)]
    inside = [(x, y) for x, y, edge in shown if edge is None]
    edges = [(x, edge) for x, _, edge in shown if edge is not None]
    drawn: Optional[Line2D] = None
    if inside:
        drawn = _line(axes, *zip(*inside))
    if edges:
        line = _line(
            axes,
            *zip(*edges),
            transform=blended_transform_factory(axes.transData, axes.transAxes),
            clip_on=False,
        )
        drawn = drawn or line
    return drawn


def bar(axes: Axes, x: float, height: float, width: float) -> Artist:
    """An invalid bar at its measured height (0 when it has none), dark grey, cross-hatched."""
    bars = axes.bar(
        [x],
        [height],
        width=width,
        color=FACE,
        edgecolor=EDGE,
        linewidth=0,
        hatch=HATCH,
        gid=GID,
        zorder=2,
    )
    return bars.patches[0]


def cells(axes: Axes, boxes: Sequence[Box]) -> Optional[Artist]:
    """Invalid cells of a heat map, dark grey, cross-hatched."""
    return hatched_cells(axes, boxes, FACE, EDGE, HATCH, GID)


def table(header: Sequence[object], rows: Sequence[Sequence[object]]) -> List[Part]:
    """A section's table of its invalid points, each row ending with its reason; nothing when
    there is none."""
    return headed_table(HEADING, [*header, "reason"], rows)
