"""The rank reordering report section: the gain of reordering over iterations × buffer size
(seed 004 figure 6) beside the cost model's prediction, the times that make the break-even, the
CG before and after reordering (seed §6.5), tables of every number, and the comparison parts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple, Union

from ..analysis import map as ma
from ..markup import Markup, details, element, table
from ..results import Run
from ..section import Part, ReportSection
from ..units import format_size, format_time, short_size
from . import invalid as inv
from .common import (
    SMALL_FONT,
    decorate,
    diagnosis_part,
    literal,
    new_figure,
    plot_part,
    to_plot,
    unmeasured_section,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.collections import QuadMesh
    from matplotlib.colors import Colormap
    from matplotlib.figure import Figure

TITLE = "Rank reordering"

# Green where reordering pays, red where it does not, pale near 0 (seed figure 6).
GAIN_COLOURS = "RdYlGn"
# B − A on the comparison page: another scale, so that it is not read as a gain.
DIFFERENCE_COLOURS = "PuOr"
MISSING = "0.8"
# The colour scale's half-width: the smallest of these that holds every value, else the last
# (a loss can be many times t1; the annotation still gives it).
LIMITS = (5.0, 10.0, 20.0, 50.0, 100.0)
# Beyond this share of the half-width a cell is dark: its annotation is written in white.
DARK_SHARE = 0.6
VALUE_GID = "value"
# After the value of a cell whose repetitions disagree (analysis.map.NOISY_SPREAD).
NOISY_MARK = "*"
# ma.Cell.unexplained: a gain above the model's prediction beyond the repetitions' noise.
INVALID_REASON = "gain the cost model cannot explain"
INVALID_VALUE_GID = "invalid-value"
CELL_WIDTH, CELL_HEIGHT = 0.75, 0.42
BEFORE_COLOUR, AFTER_COLOUR, REORDER_COLOUR = "0.55", "tab:green", "tab:orange"


def colour_limit(values: Sequence[Optional[float]]) -> float:
    present = [abs(value) for value in values if value is not None]
    largest = max(present, default=0.0)
    return next((limit for limit in LIMITS if largest <= limit), LIMITS[-1])


def _colormap(name: str) -> Colormap:
    from matplotlib import colormaps

    return colormaps[name].with_extremes(bad=MISSING)


def draw_cells(
    axes: Axes,
    rows: Sequence[int],
    columns: Sequence[int],
    values: Sequence[Sequence[Optional[float]]],
    limit: float,
    colours: str = GAIN_COLOURS,
    unit: str = "%",
    marked: Optional[Sequence[Sequence[bool]]] = None,
) -> QuadMesh:
    """A heat map of one value per cell, rows by iteration count from the bottom, columns by
    buffer size, as measured (no interpolation); every measured cell annotated with its value
    (and NOISY_MARK where marked), colours clipped at ±limit and centred on 0; grey where nothing
    was measured."""
    import numpy as np
    from matplotlib.colors import Normalize

    data = np.array(
        [[np.nan if value is None else value for value in row] for row in values], dtype=float
    )
    shown = np.ma.masked_invalid(np.clip(data, -limit, limit))
    axes.set_facecolor(MISSING)
    mesh = axes.pcolormesh(
        np.arange(len(columns) + 1),
        np.arange(len(rows) + 1),
        shown,
        cmap=_colormap(colours),
        norm=Normalize(-limit, limit),
        edgecolors="white",
        linewidth=0.5,
    )
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            if value is None:
                continue
            text = ma.signed(value).replace("%", unit)
            if marked is not None and marked[i][j]:
                text += NOISY_MARK
            dark = abs(value) > DARK_SHARE * limit
            axes.text(
                j + 0.5,
                i + 0.5,
                text,
                ha="center",
                va="center",
                fontsize=SMALL_FONT,
                color="white" if dark else "black",
                gid=VALUE_GID,
            )
    axes.set_xticks([j + 0.5 for j in range(len(columns))])
    axes.set_xticklabels([short_size(size) for size in columns], fontsize=SMALL_FONT)
    axes.set_yticks([i + 0.5 for i in range(len(rows))])
    axes.set_yticklabels([str(n) for n in rows], fontsize=SMALL_FONT)
    axes.set_xlabel("buffer size", fontsize=8)
    axes.set_ylabel("iterations", fontsize=8)
    return mesh


def _map_size(grid: ma.Grid, panels: int) -> Tuple[float, float]:
    rows, columns = _shape(grid)
    width = 1.6 + panels * (1.0 + CELL_WIDTH * max(len(columns), 3))
    return width, 1.4 + CELL_HEIGHT * max(len(rows), 3) + (0.3 if grid.invalid else 0.0)


def _cells(grid: ma.Grid) -> List[List[Optional[ma.Cell]]]:
    return [[grid.cell(n, size) for size in grid.sizes] for n in grid.iterations]


def _shape(grid: ma.Grid) -> Tuple[List[int], List[int]]:
    """The gain map's rows (iterations) and columns (sizes): the valid cells' and the invalid."""
    rows = sorted(set(grid.iterations) | {n for n, _ in grid.invalid})
    return rows, sorted(set(grid.sizes) | {size for _, size in grid.invalid})


def _draw_invalid(axes: Axes, grid: ma.Grid, rows: Sequence[int], columns: Sequence[int]) -> None:
    """The invalid cells over the map, dark grey and cross-hatched, each with its measured gain
    (gid INVALID_VALUE_GID)."""
    boxes = []
    for (n, size), cell in sorted(grid.invalid.items()):
        i, j = rows.index(n), columns.index(size)
        boxes.append((j, j + 1, i, i + 1))
        axes.text(
            j + 0.5,
            i + 0.5,
            ma.signed(cell.gain_pct),
            ha="center",
            va="center",
            fontsize=SMALL_FONT,
            color="white",
            gid=INVALID_VALUE_GID,
            zorder=5,
        )
    inv.cells(axes, boxes)


def gain_figure(grid: ma.Grid) -> Figure:
    """Seed figure 6: the gain 100 (t1 − (t2 + t3)) / t1 of every cell; beside it the cost
    model's prediction when it varies over the cells (when constant, the text says it once);
    the invalid cells (ma.Grid.invalid) dark grey, cross-hatched, with their measured gain."""
    predicted = grid.constant_prediction() is None and bool(grid.predicted)
    panels = [("gain_pct", "measured gain, reordering counted")]
    if predicted:
        panels.append(("predicted_pct", "predicted by the cost model"))
    rows, columns = _shape(grid)
    figure = new_figure(_map_size(grid, len(panels)))
    axes_list = figure.subplots(1, len(panels), squeeze=False)[0]
    cells = [[grid.cell(n, size) for size in columns] for n in rows]
    values = {
        name: [[None if c is None else getattr(c, name) for c in row] for row in cells]
        for name, _ in panels
    }
    limit = colour_limit([value for by_row in values.values() for row in by_row for value in row])
    noisy = [[cell is not None and cell.noisy for cell in row] for row in cells]
    meshes = []
    for axes, (name, title) in zip(axes_list, panels):
        meshes.append(draw_cells(axes, rows, columns, values[name], limit, marked=noisy))
        _draw_invalid(axes, grid, rows, columns)
        axes.set_title(title, fontsize=9)
    if grid.invalid:
        handles = inv.handles([INVALID_REASON])
        figure.legend(
            list(handles.values()), list(handles), loc="outside lower center", fontsize=SMALL_FONT
        )
    bar = figure.colorbar(
        meshes[-1],
        ax=list(axes_list),
        shrink=0.9,
        label=f"gain % (colours clipped at ±{limit:.0f})",
    )
    bar.ax.tick_params(labelsize=SMALL_FONT)
    return figure


def gain_caption(grid: ma.Grid) -> str:
    caption = (
        f"{grid.setting.bench}, {ma.setting_text(grid.setting)}: the gain of reordering, "
        "100 (t1 − (t2 + t3)) / t1, where t1 is the communication time of n iterations "
        "before reordering, t2 the reordering and t3 n iterations after it (seed 004 "
        f"{grid.setting.figure}). Green: reordering pays; red: its cost is not repaid; grey: not "
        "measured. Rows: iterations; columns: buffer size."
    )
    if grid.constant_prediction() is None and grid.predicted:
        caption += (
            " Right: the gain the cost model predicts, 100 (1 − after / before) of its "
            "weighted cost, on the same scale."
        )
    if grid.invalid:
        caption += (
            " Dark grey, cross-hatched: invalid cells, a gain the cost model cannot explain "
            "(above its prediction by more than the repetitions' noise), with their measured "
            "gain."
        )
    noisy = sum(cell.noisy for cell in grid.cells.values())
    if noisy:
        caption += (
            f" {NOISY_MARK}: the repetitions of the cell disagree (the slowest more than "
            f"{ma.NOISY_SPREAD:g}× the fastest); its gain is not reliable."
        )
    return caption


def prediction_paragraph(grid: ma.Grid) -> Markup:
    constant = grid.constant_prediction()
    if constant is None:
        return element("p", ma.prediction_text(grid).capitalize() + ".")
    return element(
        "p",
        f"The cost model predicts {ma.signed(constant)} in every cell: 100 "
        "(1 − after / before) of its weighted cost, which depends on the "
        "pattern and the topology alone; it leaves out the reordering's own "
        "time, so it compares with 100 (t1 − t3) / t1, the gain once the "
        "reordering is paid.",
    )


def _seconds_axis(axes: Axes) -> None:
    from matplotlib.ticker import FuncFormatter

    axes.yaxis.set_major_formatter(
        FuncFormatter(lambda value, _: "0" if value == 0 else format_time(value * 1e9))
    )


def times_figure(grid: ma.Grid) -> Figure:
    """t1 and t2 + t3 against the iterations, one colour per buffer size: reordering pays
    where the dashed line falls below the solid one."""
    from matplotlib import colormaps
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    figure = new_figure((6.4, 3.8))
    axes = figure.add_subplot()
    palette = colormaps["viridis"]
    sizes = grid.sizes
    for index, size in enumerate(sizes):
        colour = palette(index / max(len(sizes) - 1, 1) * 0.9)
        column = grid.column(size)
        xs = [cell.iterations for cell in column]
        axes.plot(
            xs,
            [cell.before_s for cell in column],
            color=colour,
            marker="o",
            markersize=3,
            gid=f"before:{size}",
            label=format_size(size),
        )
        axes.plot(
            xs,
            [cell.reorder_s + cell.after_s for cell in column],
            color=colour,
            marker="s",
            markersize=3,
            linestyle="--",
            gid=f"after:{size}",
        )
    if len(grid.iterations) > 1:
        axes.set_xscale("log")
        # 1, 10, 100 rather than 10^0, 10^1, 10^2: counts read better plain.
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.set_yscale("log")
    _seconds_axis(axes)
    decorate(axes, "communication time", "iterations", "time")
    invalid = inv.markers(
        axes,
        [
            (cell.iterations, time)
            for cell in grid.invalid.values()
            for time in (cell.before_s, cell.reorder_s + cell.after_s)
        ],
    )
    sizes_legend = axes.legend(
        title="buffer size",
        fontsize=SMALL_FONT,
        title_fontsize=8,
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
    )
    axes.add_artist(sizes_legend)
    styles = [
        Line2D([], [], color="black", marker="o", markersize=3),
        Line2D([], [], color="black", marker="s", markersize=3, linestyle="--"),
    ]
    texts = ["t1: without reordering", "t2 + t3: reordering, then the same\niterations"]
    if invalid is not None:
        styles.append(invalid)
        texts.append(inv.label(INVALID_REASON))
    axes.legend(
        styles,
        texts,
        fontsize=SMALL_FONT,
        loc="lower left",
        bbox_to_anchor=(1.02, 0.0),
    )
    return figure


TIMES_CAPTION = (
    "Solid: t1, the communication time of n iterations without reordering; dashed: "
    "t2 + t3, the reordering and the same n iterations after it. Reordering pays "
    "where the dashed line is below the solid one of the same colour; the two "
    "cross at the break-even."
)


def _number(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.4g}"


def _order(order: Optional[Tuple[int, ...]]) -> str:
    return "-" if order is None else " ".join(str(rank) for rank in order)


def _bound(value: Optional[bool]) -> str:
    return "-" if value is None else "yes" if value else "no"


def _gain_cells(entry: Union[ma.Cell, ma.CgPoint]) -> List[str]:
    """A reordering's gain (its own time counted), its gain without it, and the cost model's
    prediction, as the tables show them."""
    predicted = entry.predicted_pct
    return [
        ma.signed(entry.gain_pct),
        ma.signed(entry.steady_pct),
        "-" if predicted is None else ma.signed(predicted),
    ]


def cell_table(grid: ma.Grid) -> Markup:
    rows = []
    for size in grid.sizes:
        for cell in grid.column(size):
            rows.append(
                [
                    cell.iterations,
                    format_size(size),
                    format_time(cell.before_s * 1e9),
                    format_time(cell.reorder_s * 1e9),
                    format_time(cell.after_s * 1e9),
                    *_gain_cells(cell),
                    _number(cell.weighted_before),
                    _number(cell.weighted_after),
                    _number(cell.hop_bytes_before),
                    _number(cell.hop_bytes_after),
                    _bound(cell.all_bound),
                    _order(cell.new_rank_of),
                ]
            )
    return table(
        [
            "iterations",
            "buffer size",
            "t1 before",
            "t2 reorder",
            "t3 after",
            "gain",
            "gain without t2",
            "predicted",
            "weighted cost before",
            "after",
            "hop-bytes before",
            "after",
            "all bound",
            "new rank of rank 0, 1, ...",
        ],
        rows,
    )


# --- cg_reorder ----------------------------------------------------------------------------------


def _bar(
    axes: Axes, x: float, height: float, bottom: float, colour: str, gid: str, **extra: Any
) -> None:
    axes.bar([x], [height], bottom=[bottom], width=0.8, color=colour, gid=gid, zorder=2, **extra)


def _label(axes: Axes, x: float, top: float, seconds: float) -> None:
    axes.text(
        x,
        top,
        format_time(seconds * 1e9),
        ha="center",
        va="bottom",
        fontsize=SMALL_FONT,
        gid=VALUE_GID,
    )


def _cg_outcome(entry: ma.CgPoint) -> str:
    """The panel's verdict: the gain beside the prediction, or for a run that did not reorder,
    that its two solves are the noise."""
    if entry.algo == ma.NO_REORDERING:
        return "no reordering:\ntwo identical solves (the noise)"
    predicted = (
        ""
        if entry.predicted_pct is None
        else f"\npredicted by the cost model: {ma.signed(entry.predicted_pct)}"
    )
    return f"{entry.algo}: {ma.gain_text(entry.gain_pct)}{predicted}"


def _cg_panel(axes: Axes, entry: ma.CgPoint) -> None:
    _bar(axes, 0, entry.comm_before_s, 0, BEFORE_COLOUR, "comm-before")
    _label(axes, 0, entry.comm_before_s, entry.comm_before_s)
    _bar(axes, 1, entry.comm_after_s, 0, AFTER_COLOUR, "comm-after")
    _bar(axes, 1, entry.reorder_s, entry.comm_after_s, REORDER_COLOUR, "reorder", hatch="//")
    _label(axes, 1, entry.comm_after_s + entry.reorder_s, entry.comm_after_s + entry.reorder_s)
    labels = ["communication\nbefore", "communication\nafter + reorder"]
    if entry.total_before_s is not None and entry.total_after_s is not None:
        _bar(axes, 2.5, entry.total_before_s, 0, BEFORE_COLOUR, "total-before")
        _label(axes, 2.5, entry.total_before_s, entry.total_before_s)
        _bar(axes, 3.5, entry.total_after_s, 0, AFTER_COLOUR, "total-after")
        _label(axes, 3.5, entry.total_after_s, entry.total_after_s)
        labels += ["whole solve\nbefore", "whole solve\nafter"]
    axes.set_xticks([0, 1, 2.5, 3.5][: len(labels)])
    axes.set_xticklabels(labels, fontsize=SMALL_FONT)
    _seconds_axis(axes)
    decorate(
        axes,
        f"{entry.shape_text}, {ma.iterations_text(entry.iterations)}, {_cg_outcome(entry)}",
        "",
        "time",
    )
    axes.grid(False, axis="x")
    axes.set_ylim(
        0,
        1.15
        * max(
            entry.comm_before_s,
            entry.comm_after_s + entry.reorder_s,
            entry.total_before_s or 0.0,
            entry.total_after_s or 0.0,
        ),
    )


def cg_figure(points: Sequence[ma.CgPoint]) -> Optional[Figure]:
    """Per CG point: communication before, after with the reordering stacked on it, and the
    whole solve before and after."""
    if not points:
        return None
    figure = new_figure((0.6 + 4.2 * len(points), 3.6))
    for axes, entry in zip(figure.subplots(1, len(points), squeeze=False)[0], points):
        _cg_panel(axes, entry)
    return figure


CG_CAPTION = (
    "cg_reorder (seed 004 §6.5): grey, before reordering; green, after; orange and "
    "hatched, the reordering itself, stacked on the communication after it. The whole "
    "solve after includes the reordering. The gain is the communication's, with the "
    "reordering counted: 100 (before − (reorder + after)) / before; the cost model's "
    "prediction leaves the reordering out."
)


def cg_table(points: Sequence[ma.CgPoint]) -> Markup:
    def time(seconds: Optional[float]) -> str:
        return "-" if seconds is None else format_time(seconds * 1e9)

    rows = [
        [
            entry.shape_text,
            entry.ranks,
            entry.iterations,
            entry.algo or "-",
            entry.topology or "-",
            time(entry.comm_before_s),
            time(entry.comm_after_s),
            time(entry.reorder_s),
            *_gain_cells(entry),
            time(entry.total_before_s),
            time(entry.total_after_s),
            _number(entry.residual_before),
            _number(entry.residual_after),
            _order(entry.new_rank_of),
        ]
        for entry in points
    ]
    return table(
        [
            "grid",
            "ranks",
            "iterations",
            "algorithm",
            "topology",
            "communication before",
            "after",
            "reorder",
            "gain",
            "gain without reorder",
            "predicted",
            "whole before",
            "whole after",
            "residual before",
            "after",
            "new rank of rank 0, 1, ...",
        ],
        rows,
    )


INVALID_TIMES_CAPTION = (
    " Grey hollow circles: t1 and t2 + t3 of the invalid cells, a gain the cost model cannot "
    "explain, left out of the lines."
)

# --- the section ---------------------------------------------------------------------------------

MEASUREMENT_TEXT = (
    "Times are the communication time of the largest rank, as the programs write them. The "
    "cost model is libmpilens-map's: the bytes each rank sent to each other, as monitored, "
    "weighted by the cost of the topology level their two slots meet at, for the placement "
    "before and after reordering. It counts bytes, not messages: latency, contention and the "
    "MPI library's own algorithms are not in it."
)


def invalid_part(found: Sequence[ma.Grid]) -> List[Part]:
    """The table of the invalid cells of every setting, when there are any."""
    return inv.table(
        ["setting", "iterations", "buffer size", "gain", "lowest gain without t2", "model"],
        [
            [
                ma.setting_text(grid.setting),
                n,
                format_size(size),
                ma.signed(cell.gain_pct),
                ma.signed(cell.lowest_steady_pct or 0.0),
                ma.signed(cell.model_pct or 0.0),
                INVALID_REASON,
            ]
            for grid in found
            for (n, size), cell in sorted(grid.invalid.items())
        ],
    )


def _grid_parts(grid: ma.Grid, suffix: str) -> List[Part]:
    times = TIMES_CAPTION + (INVALID_TIMES_CAPTION if grid.invalid else "")
    return [
        element("h3", f"{grid.setting.bench}: {ma.setting_text(grid.setting)}"),
        to_plot(gain_figure(grid), f"gain{suffix}", gain_caption(grid)),
        prediction_paragraph(grid),
        to_plot(times_figure(grid), f"times{suffix}", times),
        details("every cell", cell_table(grid)),
    ]


def render(run: Run) -> ReportSection:
    found, points = ma.grids(run), ma.cg_points(run)
    parts = diagnosis_part(ma.diagnose(run))
    if not found and not points:
        return unmeasured_section(TITLE, parts, "reordering measurement")
    for index, grid in enumerate(found):
        parts += _grid_parts(grid, "" if len(found) == 1 else f"-{index + 1}")
    parts += invalid_part(found)
    if points:
        parts += [
            element("h3", ma.CG),
            *plot_part(cg_figure(points), "cg", CG_CAPTION),
            cg_table(points),
        ]
    parts += [element("h3", "Measurement"), element("p", MEASUREMENT_TEXT)]
    return ReportSection(TITLE, parts)


# --- comparison ----------------------------------------------------------------------------------


def compare_figure(grid_a: ma.Grid, grid_b: ma.Grid, labels: Tuple[str, str]) -> Figure:
    """A's gains, B's, and B − A on the cells both measured validly, each cell annotated; the
    invalid cells of either dark grey, cross-hatched, with their measured gain."""
    shape_a, shape_b = _shape(grid_a), _shape(grid_b)
    rows = sorted(set(shape_a[0]) | set(shape_b[0]))
    columns = sorted(set(shape_a[1]) | set(shape_b[1]))

    def values(grid: ma.Grid) -> List[List[Optional[float]]]:
        return [
            [None if (cell := grid.cell(n, size)) is None else cell.gain_pct for size in columns]
            for n in rows
        ]

    gains_a, gains_b = values(grid_a), values(grid_b)
    difference = [
        [None if a is None or b is None else b - a for a, b in zip(row_a, row_b)]
        for row_a, row_b in zip(gains_a, gains_b)
    ]
    figure = new_figure(
        (1.6 + 3 * (1.2 + CELL_WIDTH * max(len(columns), 3)), 1.5 + CELL_HEIGHT * max(len(rows), 3))
    )
    axes_a, axes_b, axes_d = figure.subplots(1, 3, squeeze=False)[0]
    limit = colour_limit([value for grid in (gains_a, gains_b) for row in grid for value in row])
    meshes = []
    for axes, grid, gains, side, label in (
        (axes_a, grid_a, gains_a, "A", labels[0]),
        (axes_b, grid_b, gains_b, "B", labels[1]),
    ):
        meshes.append(draw_cells(axes, rows, columns, gains, limit))
        _draw_invalid(axes, grid, rows, columns)
        axes.set_title(f"{side}: {literal(label)}", fontsize=9)
    if grid_a.invalid or grid_b.invalid:
        handles = inv.handles([INVALID_REASON])
        figure.legend(
            list(handles.values()), list(handles), loc="outside lower center", fontsize=SMALL_FONT
        )
    figure.colorbar(meshes[-1], ax=[axes_a, axes_b], shrink=0.9, label="gain %").ax.tick_params(
        labelsize=SMALL_FONT
    )
    spread = colour_limit([value for row in difference for value in row])
    drawn = draw_cells(axes_d, rows, columns, difference, spread, DIFFERENCE_COLOURS, unit="")
    axes_d.set_title("B − A", fontsize=9)
    figure.colorbar(drawn, ax=axes_d, shrink=0.9, label="percentage points").ax.tick_params(
        labelsize=SMALL_FONT
    )
    return figure


def _cg_compare_table(
    pairs: Sequence[Tuple[ma.CgPoint, ma.CgPoint]], labels: Tuple[str, str]
) -> Markup:
    rows = []
    for entry_a, entry_b in pairs:
        row = [entry_a.shape_text]
        for entry in (entry_a, entry_b):
            row += [
                format_time(entry.comm_before_s * 1e9),
                format_time(entry.comm_after_s * 1e9),
                format_time(entry.reorder_s * 1e9),
                ma.signed(entry.gain_pct),
                "-" if entry.predicted_pct is None else ma.signed(entry.predicted_pct),
            ]
        rows.append(row)
    header = ["grid"]
    for side, label in (("A", labels[0]), ("B", labels[1])):
        header += [
            f"communication before, {side}: {label}",
            f"after, {side}",
            f"reorder, {side}",
            f"gain, {side}",
            f"predicted, {side}",
        ]
    return table(header, rows)


def compare_parts(run_a: Run, run_b: Run, labels: Tuple[str, str]) -> List[Part]:
    parts: List[Part] = []
    pairs = ma.paired_grids(run_a, run_b)
    for index, (grid_a, grid_b) in enumerate(pairs):
        suffix = "" if len(pairs) == 1 else f"-{index + 1}"
        parts += [
            element("h3", f"{grid_a.setting.bench}: gain, A against B"),
            to_plot(
                compare_figure(grid_a, grid_b, labels),
                f"gain{suffix}",
                f"A ({labels[0]}: {ma.setting_text(grid_a.setting)}), B ({labels[1]}: "
                f"{ma.setting_text(grid_b.setting)}) and B − A in percentage points "
                "(purple: B gains more, orange: A gains more); grey: not measured "
                "in both.",
            ),
        ]
    cg_pairs = ma.paired_cg(run_a, run_b)
    if cg_pairs:
        parts += [element("h3", f"{ma.CG}, A against B"), _cg_compare_table(cg_pairs, labels)]
    return parts
