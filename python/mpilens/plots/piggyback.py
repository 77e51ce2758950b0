"""The piggyback report section: latency and bandwidth against the message size under each
method (seed 001 figure 2) and as ratios to the library alone, against the pb size (figure 3),
the applications' overhead (figure 4), tables of every number, and the comparison parts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..analysis import piggyback as pb
from ..markup import Markup, details, element, table
from ..results import Run, record_object
from ..section import Part, ReportSection
from ..units import format_size, format_time
from . import invalid as inv
from .common import (
    SMALL_FONT,
    Comparison,
    decorate,
    diagnosis_part,
    headed_plot,
    legend_beside,
    literal,
    new_figure,
    panel_figure,
    plot_part,
    positive_points,
    ratio_axis,
    size_axis,
    styled_line,
    unmeasured_section,
)

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.typing import LineStyleType

TITLE = "Piggyback cost"

# One look per method in every figure; the library alone drawn boldest, in black.
STYLES = {
    pb.NONE: ("black", "o"),
    "pack-before": ("tab:blue", "s"),
    "pack-after": ("tab:cyan", "D"),
    "datatype-before": ("tab:red", "^"),
    "datatype-after": ("tab:orange", "v"),
    "separate": ("tab:green", "P"),
    "separate-after": ("tab:olive", "X"),
    "auto": ("tab:purple", "*"),
}
OTHER_STYLE = ("tab:gray", ".")
PANEL = (4.4, 3.2)
# A panel whose values span more than this factor gets a logarithmic y axis.
LOG_RANGE = 10.0
GOAL_COLOUR = "0.88"

METHOD_TEXTS = {
    pb.NONE: "the MPI library alone, without the layer",
    "pack-before": "pb and payload packed into one buffer, pb first",
    "pack-after": "pb and payload packed into one buffer, pb last",
    "datatype-before": "a struct datatype joining the pb and the user's buffer, pb first: no copy",
    "datatype-after": "a struct datatype on the send side, pb last; received through a buffer",
    "separate": "the payload unchanged, the pb in a message of its own on a shadow communicator",
    "separate-after": "as separate, the pb message sent after the payload rather than before",
    "auto": "pb first, packed below the threshold measured for this library, a struct datatype "
    "from there on",
}


def _style(method: str) -> Tuple[str, str]:
    return STYLES.get(method, OTHER_STYLE)


def _label(method: str) -> str:
    return "no layer" if method == pb.NONE else method


def _figure_axis(axes: Axes, bench: str, values: Sequence[float]) -> None:
    """Latency or bandwidth on y: logarithmic when they span more than LOG_RANGE (ticks at
    powers of 10 for times, of 8 for bandwidths, so that they read 1 MiB/s, 8 MiB/s, ...), else
    linear from 0."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    positive = [value for value in values if value > 0]
    if positive and max(positive) / min(positive) > LOG_RANGE:
        axes.set_yscale("log")
        axes.yaxis.set_major_locator(LogLocator(base=10 if bench == pb.LATENCY else 8))
        axes.yaxis.set_minor_formatter(NullFormatter())
    elif positive:
        axes.set_ylim(0, max(positive) * 1.15)
    formatter = format_time if bench == pb.LATENCY else pb.format_bandwidth
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: formatter(value)))


def _finish_figure_panel(
    axes: Axes, bench: str, values: Sequence[float], title: str, xlabel: str
) -> None:
    """A panel of latencies or bandwidths against a size (of the message or of the pb)."""
    size_axis(axes)
    _figure_axis(axes, bench, values)
    decorate(axes, title, xlabel, "latency" if bench == pb.LATENCY else "bandwidth")


def _line(axes: Axes, method: str, points: Sequence[Tuple[float, float]], **extra: Any) -> Line2D:
    return styled_line(
        axes, points, _style(method), method, method == pb.NONE, label=_label(method), **extra
    )


BENCH_TITLES = {pb.LATENCY: "latency (one way)", pb.BANDWIDTH: "bandwidth"}
# pb.below_floor: the layer faster than the library alone beyond the noise of both.
INVALID_REASON = "faster than no layer beyond noise"
Invalid = Sequence[Tuple[pb.Config, int, float]]


def _draw_invalid(
    axes: Axes, points: Sequence[Tuple[float, Optional[float]]], handles: Dict[str, Artist]
) -> None:
    """The panel's invalid points, once its axes are set, with their legend entry."""
    drawn = inv.markers(axes, points)
    if drawn is not None:
        handles.setdefault(inv.label(INVALID_REASON), drawn)


def _at_main_pb(invalid: Invalid, bench: str, recv: str) -> List[Tuple[int, float]]:
    """(message size, figure) of the invalid points of a panel of the 4-byte pb."""
    here = (bench, recv, pb.MAIN_PB_SIZE)
    return [(size, figure) for c, size, figure in invalid if (c.bench, c.recv, c.pb_size) == here]


def _invalid_ratios(
    found: pb.Found, invalid: Invalid, bench: str, recv: str
) -> List[Tuple[float, Optional[float]]]:
    """(size, ratio to the library alone) of a panel's invalid points of the 4-byte pb."""
    base = pb.baseline(found, bench, recv)
    return [
        (size, figure / base[size])
        for size, figure in _at_main_pb(invalid, bench, recv)
        if base.get(size, 0) > 0
    ]


def _method_grid(
    found: pb.Found,
    curves_of: Callable[[pb.Found, str, str], Dict],
    finish_panel: Callable[[Axes, str, str, List[float], Dict[str, Artist]], None],
    invalid_of: Callable[[str, str], List[Tuple[float, Optional[float]]]] = lambda b, r: [],
) -> Optional[Figure]:
    """One panel per benchmark (rows) and kind of receive (columns) that has curves, each
    method's curve drawn in it; finish_panel(axes, bench, recv, values drawn, legend handles)
    adds its axes and decorations; invalid_of(bench, recv), the panel's invalid points. None
    when there is nothing to draw."""
    recvs = pb.recvs_measured(found)
    benches = [
        bench
        for bench in (pb.LATENCY, pb.BANDWIDTH)
        if any(curves_of(found, bench, recv) for recv in recvs)
    ]
    if not benches:
        return None
    figure, grid = panel_figure(len(benches), len(recvs), PANEL)
    handles: Dict[str, Artist] = {}
    for row, bench in zip(grid, benches):
        for axes, recv in zip(row, recvs):
            values: List[float] = []
            for method, curve in curves_of(found, bench, recv).items():
                points = positive_points(curve)
                if points:
                    handles.setdefault(_label(method), _line(axes, method, points))
                    values += [y for _, y in points]
            finish_panel(axes, bench, recv, values, handles)
            _draw_invalid(axes, invalid_of(bench, recv), handles)
    legend_beside(grid[0][-1], handles)
    return figure


def sizes_figure(found: pb.Found, invalid: Invalid = ()) -> Optional[Figure]:
    """Seed figure 2: latency and bandwidth against the message size, one curve per method with
    the 4-byte pb and the library alone; one column per kind of receive; the invalid points
    (pb.below_floor_figures) grey and hollow."""

    def finish(
        axes: Axes, bench: str, recv: str, values: List[float], handles: Dict[str, Artist]
    ) -> None:
        _finish_figure_panel(
            axes, bench, values, f"{BENCH_TITLES[bench]}, {recv} receives", "message size"
        )

    def invalid_of(bench: str, recv: str) -> List[Tuple[float, Optional[float]]]:
        return list(_at_main_pb(invalid, bench, recv))

    return _method_grid(found, pb.size_curves, finish, invalid_of)


def ratios_figure(found: pb.Found, invalid: Invalid = ()) -> Optional[Figure]:
    """Each method's figure over the library's at the same size: latency ratios above 1 and
    bandwidth ratios below 1 are the cost; auto's goal shaded (at most 10% more latency at small
    sizes, at most 2% less bandwidth from 1 MiB on)."""

    def finish(
        axes: Axes, bench: str, recv: str, values: List[float], handles: Dict[str, Artist]
    ) -> None:
        axes.axhline(1, color="0.3", linewidth=0.9, zorder=1)
        sizes = [
            size
            for curve in pb.ratio_curves(found, bench, recv).values()
            for size in curve
            if size > 0
        ]
        band: Optional[Artist]
        if bench == pb.LATENCY:
            band = axes.axhspan(1, 1 + pb.LATENCY_GOAL, color=GOAL_COLOUR, zorder=0, gid="goal")
        elif sizes and max(sizes) >= pb.BANDWIDTH_GOAL_FROM:
            band = axes.fill_between(
                [pb.BANDWIDTH_GOAL_FROM, max(sizes)],
                1 - pb.BANDWIDTH_GOAL,
                1,
                color=GOAL_COLOUR,
                zorder=0,
                gid="goal",
            )
        else:
            band = None
        if band is not None:
            handles.setdefault("auto's goal", band)
        size_axis(axes)
        ratio_axis(axes, values + [1.0])
        decorate(
            axes, f"{BENCH_TITLES[bench]}, {recv} receives", "message size", "with layer / without"
        )

    def invalid_of(bench: str, recv: str) -> List[Tuple[float, Optional[float]]]:
        return _invalid_ratios(found, invalid, bench, recv)

    return _method_grid(found, pb.ratio_curves, finish, invalid_of)


def pb_figure(found: pb.Found, invalid: Invalid = ()) -> Optional[Figure]:
    """Seed figure 3: latency at 4 B and bandwidth at 512 KiB against the pb size, specific
    receives; the library alone dashed."""
    panels = [
        (bench, size, pb.pb_curves(found, bench, "specific", size))
        for bench, size in ((pb.LATENCY, pb.PB_LATENCY_SIZE), (pb.BANDWIDTH, pb.PB_BANDWIDTH_SIZE))
    ]
    panels = [
        (bench, size, curves)
        for bench, size, curves in panels
        if any(len(curve) > 1 for curve in curves.values())
    ]
    if not panels:
        return None

    figure, (row,) = panel_figure(1, len(panels), PANEL)
    handles: Dict[str, Artist] = {}
    for axes, (bench, size, curves) in zip(row, panels):
        for method, curve in curves.items():
            points = positive_points(curve)
            if points:
                handles.setdefault(_label(method), _line(axes, method, points))
        base = pb.baseline(found, bench, "specific").get(size)
        values = [figure for curve in curves.values() for figure in curve.values()]
        if base:
            colour, _ = _style(pb.NONE)
            handles.setdefault(
                _label(pb.NONE),
                axes.axhline(base, color=colour, linestyle="--", linewidth=1.4, gid=pb.NONE),
            )
            values.append(base)
        _finish_figure_panel(
            axes, bench, values, f"{BENCH_TITLES[bench]} at {format_size(size)}", "pb size"
        )
        here = (bench, "specific", size)
        _draw_invalid(
            axes,
            [(c.pb_size, figure) for c, at, figure in invalid if (c.bench, c.recv, at) == here],
            handles,
        )
    legend_beside(row[-1], handles)
    return figure


def apps_figure(run: Run) -> Optional[Figure]:
    """Seed figure 4: grouped bars of the applications' overhead, one group per application,
    kind of receive and pb size, one bar per method; 1 is no overhead."""
    found = pb.overheads(run)
    if not found:
        return None
    groups = [(app, recv, size) for _, app, recv, size in pb.app_columns(run)]
    methods = pb.method_order(key.method for key in found)
    figure = new_figure((max(6.0, 1.8 + 0.55 * len(groups) * max(1, len(methods)) / 2), 4.0))
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(methods))
    tops = [1.0]
    for index, method in enumerate(methods):
        xs, heights = [], []
        for position, (app, recv, size) in enumerate(groups):
            overhead = found.get(pb.AppKey(app, recv, method, size))
            if overhead is not None:
                xs.append(position - 0.4 + width * (index + 0.5))
                heights.append(overhead)
        if xs:
            colour, _ = _style(method)
            axes.bar(
                xs, heights, width=width * 0.92, color=colour, label=method, gid=method, zorder=2
            )
            tops += heights
    axes.axhline(1, color="0.2", linewidth=0.9, zorder=3)
    low, high = min(tops), max(tops)
    margin = max(0.02, (high - low) * 0.15)
    axes.set_ylim(max(0.0, low - margin), high + margin)
    axes.set_xticks(range(len(groups)))
    axes.set_xticklabels(
        [
            f"{app}{' WC' if recv == 'wildcard' else ''}\n{format_size(size)} pb"
            for app, recv, size in groups
        ],
        fontsize=SMALL_FONT,
    )
    decorate(axes, "application overhead", "", "time with layer / without")
    axes.grid(True, axis="y", color="0.9", linewidth=0.6)
    axes.grid(False, axis="x")
    axes.legend(fontsize=SMALL_FONT, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return figure


# --- captions ------------------------------------------------------------------------------------

SIZES_CAPTION = (
    "Latency (half a round trip) and bandwidth (windows of back-to-back sends) between ranks 0 "
    f"and 1 against the message size, with a {pb.MAIN_PB_SIZE}-byte pb under each method, and "
    "without the layer (black); specific receives name source and tag, wildcard receives use "
    "MPI_ANY_SOURCE and MPI_ANY_TAG (seed 001 figure 2). Both axes logarithmic."
)
RATIOS_CAPTION = (
    "The same figures divided by the library's own at each size: above 1 the layer adds latency, "
    "below 1 it loses bandwidth. Shaded: auto's goal, at most "
    f"{pb.LATENCY_GOAL:.0%} more latency (for small messages) and at most "
    f"{pb.BANDWIDTH_GOAL:.0%} less bandwidth (dotted) from {format_size(pb.BANDWIDTH_GOAL_FROM)} "
    "on."
)
PB_CAPTION = (
    f"Latency at {format_size(pb.PB_LATENCY_SIZE)} and bandwidth at "
    f"{format_size(pb.PB_BANDWIDTH_SIZE)} against the pb size, specific receives (seed 001 "
    "figure 3); dashed: the library alone."
)
APPS_CAPTION = (
    "Run time of the example applications with the layer over the time without it, at 4 B and "
    "4 KiB pb, with specific and wildcard (WC) receives: the shortest of the repeated solves "
    "each (seed 001 figure 4). sweep is compute-bound (Sweep3D-like), cg communication-bound "
    "(SMG2000-like)."
)


# --- tables --------------------------------------------------------------------------------------


def _ratio_cell(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.3f} ({pb.change(value)})"


def key_table(found: pb.Found) -> Optional[Markup]:
    headers, rows, names = pb.key_rows(found)
    if not headers:
        return None
    columns = pb.key_columns(found)
    base = [pb.format_figure(bench, figure) for (_, bench, _, _), figure in zip(columns, rows[0])]
    shown = [
        f"{'latency' if bench == pb.LATENCY else 'bandwidth'} at {format_size(size)}, {recv}"
        for _, bench, recv, size in columns
    ]
    return table(
        ["method", *shown],
        [[pb.NONE, *base]]
        + [
            [name, *(_ratio_cell(value) for value in row)] for name, row in zip(names[1:], rows[1:])
        ],
    )


def _method_rank(method: str) -> int:
    """The library alone first, then the methods in report order, unknown ones last."""
    order = (pb.NONE, *pb.METHODS)
    return order.index(method) if method in order else len(order)


def apps_table(run: Run) -> Optional[Markup]:
    results = pb.app_results(run)
    if not results:
        return None
    found = pb.overheads(run)
    wrong = {mismatch.key for mismatch in pb.checksum_mismatches(run)}
    rows, classes = [], []
    for app, recv in pb.apps_measured(results):
        keys = [key for key in results if key.app == app and key.recv == recv]
        for key in sorted(keys, key=lambda k: (_method_rank(k.method), k.pb_size)):
            result = results[key]
            overhead = found.get(key)
            same = "" if key.method == pb.NONE else ("no" if key in wrong else "yes")
            rows.append(
                [
                    app,
                    recv,
                    key.method,
                    format_size(key.pb_size) if key.pb_size else "-",
                    f"{result.time_s:.4g} s",
                    "-" if overhead is None else f"{overhead:.3f}",
                    result.checksum,
                    same,
                ]
            )
            classes.append("warn" if key in wrong else None)
    return table(
        [
            "application",
            "receives",
            "method",
            "pb",
            "time (min of repeats)",
            "overhead",
            "checksum",
            "same checksum",
        ],
        rows,
        classes,
    )


def points_table(run: Run) -> Markup:
    """Every point-to-point point: its figure, its ratio to the library alone, its repetitions."""
    found = pb.measurements(run)
    rows = []
    for point in run.points:
        if point.get("bench") not in (pb.LATENCY, pb.BANDWIDTH):
            continue
        params, stats = point.get("params") or {}, point.get("stats") or {}
        sample = record_object(stats, "sample")
        bench, recv, method = point["bench"], params.get("recv"), params.get("method")
        size, pb_size = params.get("size_bytes"), params.get("pb_size")
        base = pb.baseline(found, bench, str(recv)).get(size) if isinstance(size, int) else None
        figure = pb.value(point)
        relative = figure / base if figure is not None and base and method != pb.NONE else None
        rows.append(
            [
                bench,
                recv,
                method,
                pb_size,
                format_size(size),
                pb.format_figure(bench, figure),
                "-" if relative is None else f"{relative:.3f}",
                sample.get("n", "n/a"),
                sample.get("stop", "n/a"),
            ]
        )
    return table(
        [
            "benchmark",
            "receives",
            "method",
            "pb bytes",
            "message size",
            "median",
            "ratio to no layer",
            "repetitions",
            "stopped by",
        ],
        rows,
    )


# --- the section ---------------------------------------------------------------------------------

MEASUREMENT_TEXT = (
    "Each point is the median over repetitions of about 2 ms each; the stopping rule ends a point "
    "once the median's 95% confidence interval is within the precision asked, or when its time "
    "budget is spent. The cost of a method is the ratio of its median to the library's at the "
    "same point, measured on the same machine in the same session."
)


INVALID_CAPTION = (
    " Grey hollow circles: invalid points, faster with the layer than without it beyond the "
    "noise of both, which the layer cannot make (on the panel's edge when outside it)."
)


def _with_invalid(caption: str, invalid: Invalid) -> str:
    return caption + INVALID_CAPTION if invalid else caption


def invalid_part(invalid: Invalid) -> List[Part]:
    """The table of the invalid points, when there are any."""
    return inv.table(
        ["benchmark", "receives", "method", "pb size", "message size", "figure"],
        [
            [
                config.bench,
                config.recv,
                config.method,
                format_size(config.pb_size),
                format_size(size),
                (format_time if config.bench == pb.LATENCY else pb.format_bandwidth)(figure),
                INVALID_REASON,
            ]
            for config, size, figure in invalid
        ],
    )


def render(run: Run) -> ReportSection:
    found = pb.measurements(run)
    invalid = pb.below_floor_figures(run)
    parts = diagnosis_part(pb.diagnose(run))
    if not found and not pb.app_results(run):
        return unmeasured_section(TITLE, parts + invalid_part(invalid), "piggyback measurement")
    sizes = plot_part(
        sizes_figure(found, invalid), "sizes", _with_invalid(SIZES_CAPTION, invalid)
    ) + plot_part(ratios_figure(found, invalid), "ratios", _with_invalid(RATIOS_CAPTION, invalid))
    if sizes:
        parts += [element("h3", f"Message sizes, {format_size(pb.MAIN_PB_SIZE)} pb"), *sizes]
    key = key_table(found)
    if key is not None:
        parts += [
            element("h4", "Key figures: the library alone, then each method as a ratio to it"),
            key,
        ]
    present = pb.methods_measured(found)
    if present:
        parts.append(
            details(
                "what each method does",
                table(
                    ["method", "how the pb travels"],
                    [[name, METHOD_TEXTS.get(name, "")] for name in [pb.NONE, *present]],
                ),
            )
        )
    parts += invalid_part(invalid)
    parts += headed_plot(
        "pb sizes", pb_figure(found, invalid), "pb-sizes", _with_invalid(PB_CAPTION, invalid)
    )
    apps = plot_part(apps_figure(run), "apps", APPS_CAPTION)
    rows = apps_table(run)
    if apps or rows is not None:
        parts += [element("h3", "Applications"), *apps]
        if rows is not None:
            parts.append(rows)
    if found:
        parts += [
            element("h3", "Measurement"),
            element("p", MEASUREMENT_TEXT),
            details("every point", points_table(run)),
        ]
    return ReportSection(TITLE, parts)


# --- comparison ----------------------------------------------------------------------------------


def compare_figure(run_a: Run, run_b: Run, labels: Tuple[str, str]) -> Optional[Figure]:
    """Each method's ratio to its own library alone against the message size, specific
    receives: A solid, B dashed; either study's invalid points grey and hollow."""
    found_a, found_b = pb.measurements(run_a), pb.measurements(run_b)
    invalid_a, invalid_b = pb.below_floor_figures(run_a), pb.below_floor_figures(run_b)
    benches = [
        bench
        for bench in (pb.LATENCY, pb.BANDWIDTH)
        if pb.ratio_curves(found_a, bench, "specific")
        and pb.ratio_curves(found_b, bench, "specific")
    ]
    if not benches:
        return None
    from matplotlib.lines import Line2D

    figure, (row,) = panel_figure(1, len(benches), PANEL)
    handles: Dict[str, Artist] = {}
    for axes, bench in zip(row, benches):
        values: List[float] = [1.0]
        for found, style, side in ((found_a, "-", "A"), (found_b, "--", "B")):
            for method, curve in pb.ratio_curves(found, bench, "specific").items():
                points = positive_points(curve)
                if points:
                    line = _line(axes, method, points, linestyle=style)
                    line.set_gid(f"{side}:{method}")
                    colour, marker = _style(method)
                    handles.setdefault(
                        method, Line2D([], [], color=colour, marker=marker, markersize=4)
                    )
                    values += [r for _, r in points]
        axes.axhline(1, color="0.3", linewidth=0.9, zorder=1)
        size_axis(axes)
        ratio_axis(axes, values)
        wrong = _invalid_ratios(found_a, invalid_a, bench, "specific")
        _draw_invalid(axes, wrong + _invalid_ratios(found_b, invalid_b, bench, "specific"), handles)
        decorate(
            axes,
            f"{BENCH_TITLES[bench]}, specific receives",
            "message size",
            "with layer / without",
        )
    styles: Tuple[Tuple[LineStyleType, str, str], ...] = (
        ("-", "A", labels[0]),
        ("--", "B", labels[1]),
    )
    for dash, side, label in styles:
        handles[literal(f"{side}: {label}")] = Line2D([], [], color="0.3", linestyle=dash)
    legend_beside(row[-1], handles)
    return figure


def compare_table(run_a: Run, run_b: Run, labels: Tuple[str, str]) -> Optional[Markup]:
    found_a, found_b = pb.measurements(run_a), pb.measurements(run_b)
    methods = pb.method_order(set(pb.methods_measured(found_a)) | set(pb.methods_measured(found_b)))
    columns = [(pb.LATENCY, pb.KEY_LATENCY_SIZE)] + [
        (pb.BANDWIDTH, size) for size in pb.KEY_BANDWIDTH_SIZES
    ]
    rows = []
    for method in methods:
        row = [method]
        for bench, size in columns:
            for found in (found_a, found_b):
                value = pb.ratio(found, method, bench, "specific", size)
                row.append("n/a" if value is None else f"{value:.3f}")
        rows.append(row)
    if not rows:
        return None
    header = ["method"]
    for bench, size in columns:
        what = f"{'latency' if bench == pb.LATENCY else 'bandwidth'} at {format_size(size)}"
        header += [f"{what}, A: {labels[0]}", f"{what}, B: {labels[1]}"]
    return table(header, rows)


compare_parts = Comparison(
    "Methods' cost, A against B",
    "ratios",
    "Each method's figure over its own library's, specific receives",
    compare_figure,
    compare_table,
    "Ratios to the library alone, specific receives",
)
