"""Figure creation and PNG rendering shared by the family plot modules."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
)

from ..markup import Markup, element, join, table
from ..results import Run
from ..section import Part, Plot, ReportSection
from ..units import short_size

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

DPI = 110
# Ticks, legends and panel labels of the families' multi-panel figures.
SMALL_FONT = 7
# An axis of ranks or rank counts labels each one up to this many, else round numbers: a tick per
# rank of thousands takes minutes to draw and cannot be read.
MAX_RANK_TICKS = 32


def new_figure(size: Tuple[float, float] = (6.4, 3.8)) -> Figure:
    """A figure bound to the Agg canvas: no display, no pyplot global state."""
    # matplotlib takes about half a second to import; only commands that draw should pay for it.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def to_plot(figure: Figure, name: str, caption: str) -> Plot:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return Plot(name=name, caption=caption, png=buffer.getvalue())


def plot_part(figure: Optional[Figure], name: str, caption: str) -> List[Part]:
    """The figure as a section's part; nothing when there was nothing to draw."""
    return [] if figure is None else [to_plot(figure, name, caption)]


def diagnosis_list(sentences: Iterable[str]) -> Markup:
    """Diagnosis sentences as a list, warnings and skipped measurements marked for the style."""
    items = [
        element(
            "li", s, "warn" if "warning:" in s else "skip" if s.startswith("skipped:") else None
        )
        for s in sentences
    ]
    return element("ul", join(items)) if items else element("p", "Nothing to report.")


def diagnosis_part(sentences: Iterable[str]) -> List[Part]:
    """A section's diagnosis under its heading, the first part of a family's section."""
    return [element("h3", "Diagnosis"), diagnosis_list(sentences)]


def unmeasured_section(title: str, parts: List[Part], what: str) -> ReportSection:
    """The section of a run that holds none of the family's measurements (what): its parts so
    far (its diagnosis), then a line that says so."""
    return ReportSection(title, [*parts, element("p", f"This run holds no {what}.")])


def headed_plot(heading: str, figure: Optional[Figure], name: str, caption: str) -> List[Part]:
    """The figure under its heading; nothing when there was nothing to draw."""
    return [] if figure is None else [element("h3", heading), to_plot(figure, name, caption)]


def headed_table(
    heading: str,
    header: Sequence[object],
    rows: Sequence[Sequence[object]],
    classes: Optional[Sequence[Optional[str]]] = None,
) -> List[Part]:
    """The table under its heading; nothing when it has no row."""
    return [element("h3", heading), table(header, rows, classes)] if rows else []


@dataclass(frozen=True)
class Comparison:
    """A family's parts of the comparison page (its Family.compare_parts): the figure of both
    runs under heading (name, its file; shown, what its caption says it shows), A solid and B
    dashed; then the table, under table_heading when given; each when there is one."""

    heading: str
    name: str
    shown: str
    figure: Callable[[Run, Run, Tuple[str, str]], Optional[Figure]]
    table: Callable[[Run, Run, Tuple[str, str]], Optional[Markup]]
    table_heading: Optional[str] = None

    def __call__(self, run_a: Run, run_b: Run, labels: Tuple[str, str]) -> List[Part]:
        caption = f"{self.shown}: A ({labels[0]}) solid, B ({labels[1]}) dashed."
        parts = headed_plot(self.heading, self.figure(run_a, run_b, labels), self.name, caption)
        rows = self.table(run_a, run_b, labels)
        if rows is not None:
            if self.table_heading is not None:
                parts.append(element("h4", self.table_heading))
            parts.append(rows)
        return parts


def panel_grid(figure: Figure, rows: int, columns: int) -> List[List[Axes]]:
    return [list(row) for row in figure.subplots(rows, columns, squeeze=False)]


def panel_figure(
    rows: int, columns: int, panel: Tuple[float, float], beside: float = 1.8
) -> Tuple[Figure, List[List[Axes]]]:
    """A figure of rows × columns panels of the size panel (inches), with beside inches on the
    right for the legend and 0.6 below; and its panels, by row."""
    figure = new_figure((beside + panel[0] * columns, 0.6 + panel[1] * rows))
    return figure, panel_grid(figure, rows, columns)


def rank_ticks(axes: Axes, ranks: Sequence[int]) -> None:
    """x ticks at each of the ranks (or rank counts) when they are few, else at round numbers."""
    from matplotlib.ticker import FixedLocator, MaxNLocator

    if 0 < len(ranks) <= MAX_RANK_TICKS:
        axes.xaxis.set_major_locator(FixedLocator(sorted(ranks)))
    else:
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))


def decorate(axes: Axes, title: str, xlabel: str, ylabel: str) -> None:
    """A panel's title, axis labels and grid in the families' small figure style."""
    axes.set_title(title, fontsize=9)
    axes.set_xlabel(xlabel, fontsize=8)
    axes.set_ylabel(ylabel, fontsize=8)
    axes.tick_params(labelsize=SMALL_FONT)
    axes.grid(True, color="0.9", linewidth=0.6, which="major")


def literal(text: str) -> str:
    """User text for matplotlib: a pair of $ would otherwise start a formula, which may not
    parse."""
    return text.replace("$", r"\$")


def styled_line(
    axes: Axes,
    points: Sequence[Tuple[float, float]],
    style: Tuple[str, str],
    gid: str,
    bold: bool = False,
    markersize: float = 4,
    bold_width: float = 2.0,
    **extra: Any,
) -> Line2D:
    """One curve of a figure in its colour and marker (style); bold, the one the others are read
    against (the library alone, seed 003's method), wider and on top."""
    xs, ys = zip(*points)
    colour, marker = style
    (line,) = axes.plot(
        xs,
        ys,
        color=colour,
        marker=marker,
        markersize=markersize,
        linewidth=bold_width if bold else 1.1,
        zorder=3 if bold else 2,
        gid=gid,
        **extra,
    )
    return line


def legend_beside(axes: Axes, handles: Mapping[str, Artist]) -> None:
    """One legend for a figure's panels, right of `axes` (its first row's last panel)."""
    axes.legend(
        list(handles.values()),
        list(handles),
        fontsize=SMALL_FONT,
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
    )


def positive_points(curve: Mapping[int, float]) -> List[Tuple[int, float]]:
    """The points a log-log plot can show: sizes and figures above 0."""
    return [(size, figure) for size, figure in sorted(curve.items()) if size > 0 and figure > 0]


def size_axis(axes: Axes) -> None:
    """A logarithmic message-size axis, ticks every 4x, labelled 1K, 64K, 1M."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axes.set_xscale("log", base=2)
    axes.xaxis.set_major_locator(LogLocator(base=4))
    axes.xaxis.set_major_formatter(
        FuncFormatter(lambda value, _: short_size(int(round(value))) if value >= 1 else "")
    )
    axes.xaxis.set_minor_formatter(NullFormatter())


def ratio_ticks(low: float, high: float) -> List[float]:
    """1-2-5 values from low to high, for an axis of ratios."""
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    return [m * 10.0**d for d in decades for m in (1, 2, 5) if low <= m * 10.0**d <= high]


def ratio_axis(axes: Axes, values: Sequence[float], keep_in_view: Sequence[float] = ()) -> None:
    """Ratios on y, logarithmic with 1-2-5 ticks when they span more than a factor 4.
    keep_in_view: values the axis always shows (a band around 1), which then also sets the
    limits of a linear axis."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    positive = [value for value in values if value > 0] + list(keep_in_view)
    if positive:
        low, high = min(positive) / 1.15, max(positive) * 1.15
        if high / low > 4:
            axes.set_yscale("log")
            axes.yaxis.set_major_locator(FixedLocator(ratio_ticks(low, high)))
            axes.yaxis.set_minor_locator(NullLocator())
            axes.yaxis.set_minor_formatter(NullFormatter())
            axes.set_ylim(low, high)
        elif keep_in_view:
            axes.set_ylim(low, high)
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))


Box = Tuple[float, float, float, float]  # a cell of a heat map: x0, x1, y0, y1


def hatched_cells(
    axes: Axes, boxes: Sequence[Box], face: object, edge: str, hatch: str, gid: str
) -> Optional[Artist]:
    """Cells drawn over a heat map in face, hatched in edge's colour; None when there is none."""
    from matplotlib.collections import PolyCollection

    if not boxes:
        return None
    # Edges of width 0 leave the cells' borders undrawn; the hatch takes the edge colour.
    cells = PolyCollection(
        [[(x0, y0), (x1, y0), (x1, y1), (x0, y1)] for x0, x1, y0, y1 in boxes],
        facecolors=[face],
        edgecolors=edge,
        linewidths=0,
        hatch=hatch,
        gid=gid,
    )
    axes.add_collection(cells)
    return cells
