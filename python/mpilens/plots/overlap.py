"""The overlap report section: heat maps of the overhead ratio (seed 000, III-C) and mosaics."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ..analysis import overlap
from ..markup import element, table
from ..results import Run
from ..section import Part, Plot, ReportSection
from ..units import format_size, format_time
from . import invalid as inv
from .common import (
    SMALL_FONT,
    diagnosis_part,
    hatched_cells,
    headed_table,
    literal,
    new_figure,
    to_plot,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.collections import QuadMesh
    from matplotlib.colorbar import Colorbar
    from matplotlib.colors import Colormap
    from matplotlib.figure import Figure

TITLE = "Overlap of communication and computation"

RATIO_MAX = 2.0
SLOWDOWN_MIN, SLOWDOWN_MAX = 1.0, 1000.0
# The seed's convention: 0 black, near 0 purple, 1 red, above 1 towards yellow, 2 and up yellow.
RATIO_COLOURS = (
    (0.0, "#000000"),
    (0.15, "#5b0f7a"),
    (0.5, "#d41c1c"),
    (0.75, "#ff8c00"),
    (1.0, "#ffff33"),
)
MISSING = "0.8"  # cells with no measured point: grey, distinct from every colour of the scale
# Undetermined cells (overlap.DETERMINED_WIDTH): their colour washed out with white, under a
# sparse grey hatch that shows on every colour of the scale, so noise does not read as data while
# what was measured stays visible.
FADE = (1.0, 1.0, 1.0, 0.45)
HATCH, HATCH_COLOUR = "//", "0.35"
UNDETERMINED_GID = "undetermined"
# Invalid cells (overlap.Grid.invalid): their colour hidden under common's invalid look (dark
# grey, cross-hatched), so that no impossible ratio is read as overlap; each reason gets a legend
# entry.
MAX_TICKS = 6
PANEL_WIDTH, PANEL_HEIGHT = 2.2, 2.5
# Benchmarks per row of a mosaic: 4 panels and the colour bars fill the report's 1100 px width.
MOSAIC_COLUMNS = 4

RATIO_LABEL = "overhead ratio"
SLOWDOWN_LABEL = "slowdown T / T_comm"
UNDETERMINED_LABEL = f"hatched: not determined to {overlap.PRECISION}"
COLOUR_KEY = (
    "Colour: overhead ratio, black 0 (perfect overlap), purple near 0, red 1 "
    "(serialised), yellow 2 and above (slower than serialised); grey: not measured; "
    f"faded and hatched: ratio not determined to {overlap.PRECISION} (its confidence "
    f"interval is wider than {overlap.DETERMINED_WIDTH:g}); dark grey and cross-hatched: "
    "invalid, a ratio that cannot be true (the legend says why); white line: T_comm, "
    "computation longer than communication above it"
)
NLOAD_KEY = (
    "nload's colour: slowdown on a logarithmic scale from 1 to 1000, over the number "
    "of computing threads"
)


def ratio_colormap() -> Colormap:
    from matplotlib.colors import LinearSegmentedColormap

    return LinearSegmentedColormap.from_list("mpilens-ratio", RATIO_COLOURS).with_extremes(
        bad=MISSING
    )


def geometric_edges(values: Sequence[float]) -> List[float]:
    """Cell borders on a log axis: geometric midpoints; outer cells as wide as their neighbour."""
    if len(values) == 1:
        return [values[0] / math.sqrt(2), values[0] * math.sqrt(2)]
    inner = [math.sqrt(a * b) for a, b in zip(values, values[1:])]
    return [values[0] ** 2 / inner[0], *inner, values[-1] ** 2 / inner[-1]]


def linear_edges(values: Sequence[float]) -> List[float]:
    if len(values) == 1:
        return [values[0] - 0.5, values[0] + 0.5]
    inner = [(a + b) / 2 for a, b in zip(values, values[1:])]
    return [2 * values[0] - inner[0], *inner, 2 * values[-1] - inner[-1]]


def size_ticks(low: float, high: float) -> List[float]:
    """Powers of two within [low, high], every 1, 2, 5, 10 or 20 of them to keep few labels; no
    step of 3, so that maps of different ranges in one mosaic share the same ticks (1 B, 32 B,
    1 KiB, ...)."""
    exponents = range(math.ceil(math.log2(low)), math.floor(math.log2(high)) + 1)
    ticks: List[float] = []
    for step in (1, 2, 5, 10, 20):
        ticks = [2.0**e for e in exponents if e % step == 0]
        if len(ticks) <= MAX_TICKS:
            break
    return ticks


def time_ticks(low: float, high: float) -> List[float]:
    """1-2-5 values within [low, high], else whole decades, thinned to few labels."""
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    ticks: List[float] = []
    for mantissas, step in (((1, 2, 5), 1), ((1,), 1), ((1,), 2), ((1,), 3)):
        ticks = [
            m * 10.0**d
            for d in decades
            if d % step == 0
            for m in mantissas
            if low <= m * 10.0**d <= high
        ]
        if len(ticks) <= MAX_TICKS:
            break
    return ticks


def _log_axis(axis: Axis, ticks: Sequence[float], label: Callable[[float], str]) -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda value, _: label(value)))
    # Log axes add unlabelled minor ticks at 2..9 × 10^k, which mean nothing for sizes.
    axis.set_minor_locator(NullLocator())


def _blank(axes: Axes, text: str) -> None:
    axes.set_facecolor(MISSING)
    axes.set_xticks([])
    axes.set_yticks([])
    axes.text(
        0.5, 0.5, text, transform=axes.transAxes, ha="center", va="center", fontsize=SMALL_FONT
    )


@dataclass
class DrawnMap:
    mesh: QuadMesh
    undetermined: int  # cells drawn faded and hatched
    invalid: Dict[str, int]  # cells drawn dark and cross-hatched, by reason


def draw_map(axes: Axes, grid: overlap.Grid) -> Optional[DrawnMap]:
    """One benchmark's map, a rectangle per measured point, as measured (no interpolation)."""
    import numpy as np
    from matplotlib.colors import LogNorm, Normalize

    nload = grid.bench == overlap.NLOAD
    # Log axes cannot place 0 B or 0 ns; nload's thread axis is linear and keeps 0 threads.
    columns = [j for j, size in enumerate(grid.sizes) if size > 0]
    rows = [i for i, y in enumerate(grid.ys) if nload or y > 0]
    if not columns or not rows:
        _blank(axes, "nothing to draw")
        return None
    sizes = [grid.sizes[j] for j in columns]
    ys = [grid.ys[i] for i in rows]
    values = np.array(grid.values("slowdown" if nload else "ratio"), dtype=float)
    reasons = grid.invalid_cells()
    invalid = [[reasons[i][j] for j in columns] for i in rows]
    low, high = (SLOWDOWN_MIN, SLOWDOWN_MAX) if nload else (0.0, RATIO_MAX)
    shown = np.clip(values[np.ix_(rows, columns)], low, high)
    # An invalid ratio gets no colour of the scale: it is not a measurement of overlap.
    shown[np.array([[reason is not None for reason in row] for row in invalid], dtype=bool)] = (
        np.nan
    )
    data = np.ma.masked_invalid(shown)
    x_edges = geometric_edges(sizes)
    y_edges = linear_edges(ys) if nload else geometric_edges(ys)
    axes.set_facecolor(MISSING)
    mesh = axes.pcolormesh(
        x_edges,
        y_edges,
        data,
        cmap=ratio_colormap(),
        norm=LogNorm(low, high) if nload else Normalize(low, high),
    )
    marked = grid.undetermined_cells()
    undetermined = _mark_cells(
        axes, [[marked[i][j] for j in columns] for i in rows], x_edges, y_edges, UNDETERMINED
    )
    _mark_cells(
        axes, [[reason is not None for reason in row] for row in invalid], x_edges, y_edges, INVALID
    )
    axes.set_xscale("log")
    _log_axis(axes.xaxis, size_ticks(x_edges[0], x_edges[-1]) or sizes, format_size)
    if nload:
        from matplotlib.ticker import MaxNLocator

        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        axes.set_yscale("log")
        _log_axis(axes.yaxis, time_ticks(y_edges[0], y_edges[-1]) or ys, format_time)
        _draw_t_comm(axes, grid)
    axes.set_xlim(x_edges[0], x_edges[-1])
    axes.set_ylim(y_edges[0], y_edges[-1])
    counts = Counter(reason for row in invalid for reason in row if reason is not None)
    return DrawnMap(mesh, undetermined, dict(counts))


@dataclass(frozen=True)
class CellMark:
    """How a kind of cell is drawn over the mesh."""

    face: object
    hatch_colour: str
    hatch: str
    gid: str


UNDETERMINED = CellMark(FADE, HATCH_COLOUR, HATCH, UNDETERMINED_GID)
INVALID = CellMark(inv.FACE, inv.EDGE, inv.HATCH, inv.GID)


def _mark_cells(
    axes: Axes,
    flags: Sequence[Sequence[bool]],
    x_edges: Sequence[float],
    y_edges: Sequence[float],
    mark: CellMark,
) -> int:
    """Draw the cells flagged (rows by y, as the mesh) as mark says; returns how many."""
    boxes = [
        (x_edges[j], x_edges[j + 1], y_edges[i], y_edges[i + 1])
        for i, row in enumerate(flags)
        for j, flagged in enumerate(row)
        if flagged
    ]
    hatched_cells(axes, boxes, mark.face, mark.hatch_colour, mark.hatch, mark.gid)
    return len(boxes)


def _draw_t_comm(axes: Axes, grid: overlap.Grid) -> None:
    """The seed's white line: where T_comp = T_comm, the border between the two regions."""
    line = [
        (size, t)
        for size, t in zip(grid.sizes, grid.t_comm)
        if size > 0 and t is not None and t > 0
    ]
    if line:
        axes.plot(
            *zip(*line),
            color="white",
            linewidth=1.5,
            marker="o" if len(line) == 1 else None,
            markersize=3,
        )


def _plain_ticks(bar: Colorbar) -> None:
    """1, 10, 100 rather than 10^0, 10^1, 10^2 on the slowdown scale: a factor reads better."""
    from matplotlib.ticker import FuncFormatter

    bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))


def _y_label(bench: str) -> str:
    return "computing threads" if bench == overlap.NLOAD else "computation time"


def colour_label(bench: str, undetermined: int = 0) -> str:
    """The colour bar's label; it names the hatch when the map has undetermined cells."""
    if bench == overlap.NLOAD:
        return SLOWDOWN_LABEL
    return _noting_hatch(
        f"worst rank's {RATIO_LABEL}" if bench in overlap.COLLECTIVES else RATIO_LABEL, undetermined
    )


def _noting_hatch(label: str, undetermined: int) -> str:
    return f"{label}\n({UNDETERMINED_LABEL})" if undetermined else label


def map_figure(grid: overlap.Grid) -> Figure:
    figure = new_figure((6.4, 4.4))
    axes = figure.add_subplot()
    drawn = draw_map(axes, grid)
    axes.set_xlabel("message size")
    axes.set_ylabel(_y_label(grid.bench))
    axes.set_title(f"{grid.bench}: {overlap.LABELS[grid.bench]}")
    if drawn is not None:
        _plain_ticks(
            figure.colorbar(drawn.mesh, ax=axes, label=colour_label(grid.bench, drawn.undetermined))
        )
        _invalid_legend(figure, drawn.invalid)
    return figure


def _invalid_legend(figure: Figure, reasons: Iterable[str]) -> None:
    """The legend of the invalid cells, below the maps, when there are any."""
    handles = inv.handles(reasons)
    if handles:
        figure.legend(
            list(handles.values()), list(handles), loc="outside lower center", fontsize=SMALL_FONT
        )


def map_caption(bench: str) -> str:
    return f"{overlap.LABELS[bench]} ({bench}): {overlap.MEASURES[bench]}."


def _draw_panel(axes: Axes, run: Run, bench: str) -> Optional[DrawnMap]:
    axes.tick_params(labelsize=SMALL_FONT)
    if not run.points_of(bench):
        _blank(axes, "not measured")
        return None
    return draw_map(axes, overlap.grid(run, bench))


def mosaic_figure(rows: Sequence[Tuple[str, Run]]) -> Figure:
    """Every benchmark of the runs, one row of panels per run labelled on the left (seed figures
    2-4), wrapped every MOSAIC_COLUMNS benchmarks so that the figure stays legible at the page's
    width (the runs' rows repeat under each other for every group of benchmarks), with one
    colour bar for all ratio maps and one for nload."""
    benches = [b for b in overlap.BENCHES if any(run.points_of(b) for _, run in rows)]
    groups = [benches[i : i + MOSAIC_COLUMNS] for i in range(0, len(benches), MOSAIC_COLUMNS)]
    columns = min(max(len(benches), 1), MOSAIC_COLUMNS)
    figure = new_figure(
        (1.2 + PANEL_WIDTH * columns, 0.8 + PANEL_HEIGHT * len(rows) * max(len(groups), 1))
    )
    if not benches:
        _blank(figure.add_subplot(), "no overlap benchmark measured")
        return figure
    panels = figure.subplots(len(rows) * len(groups), columns, squeeze=False)
    # Per colour scale (nload or ratio): every map drawn with it, and the panels they are in.
    maps: Dict[bool, List[Tuple[DrawnMap, Axes]]] = {}
    for g, group in enumerate(groups):
        for r, (label, run) in enumerate(rows):
            line = panels[g * len(rows) + r]
            for c, bench in enumerate(group):
                drawn = _draw_panel(line[c], run, bench)
                if drawn is not None:
                    maps.setdefault(bench == overlap.NLOAD, []).append((drawn, line[c]))
                _label_panel(line[c], bench, c, first=r == 0, last=r == len(rows) - 1)
            for axes in line[len(group) :]:
                axes.remove()
            if label:
                line[0].set_ylabel(f"{literal(label)}\n{_y_label(group[0])}", fontsize=9)
    _invalid_legend(
        figure,
        [reason for drawn_maps in maps.values() for d, _ in drawn_maps for reason in d.invalid],
    )
    for is_nload, drawn_maps in maps.items():
        undetermined = sum(drawn.undetermined for drawn, _ in drawn_maps)
        bar = figure.colorbar(
            drawn_maps[0][0].mesh,
            ax=[axes for _, axes in drawn_maps],
            shrink=0.9,
            label=SLOWDOWN_LABEL if is_nload else _noting_hatch(RATIO_LABEL, undetermined),
        )
        _plain_ticks(bar)
        bar.ax.tick_params(labelsize=SMALL_FONT)
    return figure


def _label_panel(axes: Axes, bench: str, column: int, first: bool, last: bool) -> None:
    """A mosaic panel's title (over the first run's row of its group) and axis labels."""
    if first:
        axes.set_title(bench, fontsize=9)
    if last:
        axes.set_xlabel("message size", fontsize=SMALL_FONT)
    # nload's y axis is not time, so it is labelled wherever it stands.
    if column == 0 or bench == overlap.NLOAD:
        axes.set_ylabel(_y_label(bench), fontsize=SMALL_FONT)


def _percent(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.0f}%"


def _summary_part(run: Run) -> List[Part]:
    summaries = [overlap.map_summary(run, bench) for bench in overlap.ratio_maps(run)]
    if not summaries:
        return []
    rows = [
        [s.bench, s.points, sum(s.invalid.values()), s.determined]
        + [_percent(100 * s.shares[kind]) if s.shares else "n/a" for kind in overlap.CLASSES]
        + [
            "n/a" if s.median_ratio is None else f"{s.median_ratio:.2f}",
            _percent(s.osu_pct),
            _percent(s.imb_pct),
        ]
        for s in summaries
    ]
    bounds = (
        f"< {overlap.OVERLAP_BELOW}",
        f"{overlap.OVERLAP_BELOW}–{overlap.PARTIAL_BELOW}",
        f"{overlap.PARTIAL_BELOW}–{overlap.NONE_UP_TO}",
        f"> {overlap.NONE_UP_TO}",
    )
    header = (
        ["benchmark", "points", "invalid", f"determined to {overlap.PRECISION}"]
        + [f"{overlap.CLASS_NAMES[kind]} ({text})" for kind, text in zip(overlap.CLASSES, bounds)]
        + ["median ratio", "median OSU overlap", "median IMB overlap"]
    )
    return [
        element("h3", "Summary"),
        table(header, rows),
        element(
            "p",
            "Classes, medians and percentages are over the points whose ratio is "
            f"determined to {overlap.PRECISION}, invalid points left out. OSU and IMB overlap: the "
            "percentages those benchmark suites would report, recomputed from the "
            "same times (100% = perfect overlap).",
        ),
    ]


def _invalid_part(run: Run) -> List[Part]:
    """Every reason that made points invalid, per map, with the sizes it struck."""
    rows = []
    for bench in overlap.ratio_maps(run):
        g = overlap.grid(run, bench)
        for reason, count in g.invalid_reasons().items():
            sizes = [p["params"]["size_bytes"] for p, why in g.invalid_points if why == reason]
            rows.append([bench, reason, count, overlap.size_span(min(sizes), max(sizes))])
    return headed_table("Invalid points", ["benchmark", "reason", "points", "sizes"], rows)


def _maps_part(run: Run) -> List[Part]:
    parts: List[Part] = []
    for bench in overlap.benches_present(run):
        parts += [
            element("h3", f"{bench}: {overlap.LABELS[bench]}"),
            to_plot(map_figure(overlap.grid(run, bench)), f"map-{bench}", map_caption(bench)),
        ]
    return parts


def _reference_part(run: Run) -> List[Part]:
    return headed_table(
        "References",
        ["size", "one-way time (ping-pong)", "blocking MPI_Send"],
        [
            [format_size(size), format_time(one_way), format_time(send)]
            for size, one_way, send in overlap.reference_rows(run)
        ],
    )


def mosaic_plot(rows: Sequence[Tuple[str, Run]], name: str, caption: str) -> Plot:
    return to_plot(mosaic_figure(rows), name, f"{caption} {COLOUR_KEY}. {NLOAD_KEY}.")


def render(run: Run) -> ReportSection:
    if not overlap.benches_present(run) and not overlap.reference_rows(run):
        return ReportSection(TITLE, [element("p", "This file holds no overlap measurement.")])
    parts = diagnosis_part(overlap.diagnose(run))
    if overlap.benches_present(run):
        parts += [
            mosaic_plot(
                [("", run)],
                "mosaic",
                "Every map of this run (x: message size, y: computation time).",
            )
        ]
    return ReportSection(
        TITLE,
        parts + _summary_part(run) + _invalid_part(run) + _maps_part(run) + _reference_part(run),
    )


def compare_parts(run_a: Run, run_b: Run, labels: Tuple[str, str]) -> List[Part]:
    """Both runs' maps in one figure, A above B, for the comparison page."""
    return [
        element("h3", "Overlap maps, A above B"),
        mosaic_plot(
            [(f"A: {labels[0]}", run_a), (f"B: {labels[1]}", run_b)],
            "mosaic",
            f"Top row: A ({labels[0]}); bottom row: B ({labels[1]}).",
        ),
    ]
