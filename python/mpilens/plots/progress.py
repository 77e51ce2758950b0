"""The progress report section: the overhead t_o against the message size under each strategy
and setting (seed 002 figures 7 to 10), t_o against the MPI_Test interval, the cost of a timer
interrupt (seed §V-B2), tables of every number and of the settings, and the comparison parts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence, Tuple

from ..analysis import progress as pg
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
    legend_beside,
    literal,
    new_figure,
    panel_figure,
    plot_part,
    positive_points,
    size_axis,
    styled_line,
    unmeasured_section,
)

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

TITLE = "Progression cost"

# The library alone drawn boldest, in black, as in the seed's figures; test-best in blue; the
# other settings take the palette in setting order, the same in every panel.
NONE_STYLE = ("black", "o")
TEST_BEST_STYLE = ("tab:blue", "s")
PALETTE = (
    ("tab:green", "^"),
    ("tab:orange", "v"),
    ("tab:purple", "D"),
    ("tab:red", "P"),
    ("tab:brown", "X"),
    ("tab:pink", "*"),
    ("tab:olive", "<"),
    ("tab:cyan", ">"),
)
REFERENCE_COLOUR = "0.45"
OPERATION_COLOURS = {
    pg.P2P: "black",
    "iallreduce": "tab:blue",
    "ibcast": "tab:orange",
    "ireduce": "tab:green",
    "ialltoall": "tab:red",
}
PANEL = (4.2, 3.0)
# A panel whose positive values span more than this factor gets a logarithmic y axis.
LOG_RANGE = 4.0
KIND_TEXTS = {"time": "time-based", "work": "work-based"}
GID_REFERENCE = "t_b"
# pg.impossible_measures: an overhead or blocking time below 0 beyond the noise of its repetitions.
INVALID_REASON = "time below 0 beyond noise"


def styles(names: Sequence[str]) -> Dict[str, Tuple[str, str]]:
    """Colour and marker of each curve name."""
    fixed = {pg.NONE: NONE_STYLE, pg.TEST_BEST: TEST_BEST_STYLE}
    others = [name for name in names if name not in fixed]
    found = {name: PALETTE[index % len(PALETTE)] for index, name in enumerate(others)}
    return {name: fixed.get(name) or found[name] for name in names}


def _kind_text(kind: str) -> str:
    return KIND_TEXTS.get(kind, kind)


def _time_axis(axes: Axes, values: Sequence[float], log: bool) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if log:
        axes.set_yscale("log")
        # Within two decades, powers of 10 alone leave a panel with one label or none.
        narrow = max(values) / min(values) < 100
        axes.yaxis.set_major_locator(
            LogLocator(base=10, subs=(1.0, 2.0, 5.0) if narrow else (1.0,))
        )
        axes.yaxis.set_minor_formatter(NullFormatter())
    elif values:
        low, high = min(min(values), 0.0), max(max(values), 0.0)
        margin = (high - low) * 0.1 or 1.0
        axes.set_ylim(low - (margin if low < 0 else 0), high + margin)
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: format_time(value)))


def _panels(found: pg.Found) -> Tuple[List[str], List[str]]:
    """(operations, kinds) that have overhead curves."""
    operations = [op for op in pg.operations_measured(found) if pg.kinds_measured(found, op)]
    kinds = [
        kind for kind in pg.KINDS if any(kind in pg.kinds_measured(found, op) for op in operations)
    ]
    return operations, kinds


def left_out(found: pg.Found) -> int:
    """Values of the overhead figure a log-log axis cannot show: t_o at or below 0 (work-based
    noise), or empty messages."""
    operations, kinds = _panels(found)
    return sum(
        size <= 0 or value <= 0
        for op in operations
        for kind in kinds
        for curve in pg.overhead_curves(found, op, kind).values()
        for size, value in curve.items()
    )


Invalid = Sequence[Tuple[pg.Key, int, pg.Measure]]


def _invalid_in_panel(invalid: Invalid, operation: str, kind: str) -> List[Tuple[float, float]]:
    """(size, t_o) of the invalid points that belong on a curve of the panel."""
    return [
        (size, measure.value)
        for key, size, measure in invalid
        if (key.operation, key.kind) == (operation, kind)
        and key.strategy in (pg.NONE, pg.TEST_BEST)
    ]


def _overhead_panel(
    axes: Axes,
    found: pg.Found,
    operation: str,
    kind: str,
    look: Mapping[str, Tuple[str, str]],
    handles: Dict[str, Artist],
    invalid: Invalid = (),
) -> None:
    values: List[float] = []
    for name, curve in pg.overhead_curves(found, operation, kind).items():
        points = positive_points(curve)
        if points:
            handles.setdefault(name, styled_line(axes, points, look[name], name, name == pg.NONE))
            values += [value for _, value in points]
    reference = positive_points(pg.reference(found, operation))
    if reference:
        handles.setdefault(
            "t_b (blocking)",
            styled_line(axes, reference, (REFERENCE_COLOUR, ""), GID_REFERENCE, linestyle="--"),
        )
        values += [value for _, value in reference]
    size_axis(axes)
    _time_axis(axes, values, log=bool(values))
    # Below 0, they stand on the bottom edge of a logarithmic panel.
    drawn = inv.markers(axes, _invalid_in_panel(invalid, operation, kind))
    if drawn is not None:
        handles.setdefault(inv.label(INVALID_REASON), drawn)
    decorate(axes, f"{pg.title(operation)}, {_kind_text(kind)}", "message size", "overhead t_o")


def overhead_figure(found: pg.Found, invalid: Invalid = ()) -> Optional[Figure]:
    """Seed figures 7 to 10: t_o against the message size, one row per operation, time-based and
    work-based side by side; one curve per strategy and setting, t_b dashed; the invalid points
    (pg.impossible_measures) grey and hollow."""
    operations, kinds = _panels(found)
    if not operations:
        return None
    look = styles(pg.curve_names(found))
    figure, grid = panel_figure(len(operations), len(kinds), PANEL)
    handles: Dict[str, Artist] = {}
    for row, operation in zip(grid, operations):
        for axes, kind in zip(row, kinds):
            if kind in pg.kinds_measured(found, operation):
                _overhead_panel(axes, found, operation, kind, look, handles, invalid)
            else:
                axes.set_axis_off()
    legend_beside(grid[0][-1], handles)
    return figure


def overhead_caption(found: pg.Found, invalid: Invalid = ()) -> str:
    caption = (
        "The overhead t_o, the CPU time the program loses to communication, against the "
        "message size (seed 002 figures 7 to 10). Time-based: the time inside MPI calls while "
        "computing for t_b (§V-A); work-based: a workload that takes t_b alone, t_o = t_ov − t_c "
        "(§V-B3), which also sees the CPU a thread or interrupts take. none (black): the library "
        "alone, without tests; test-best: MPI_Test at the best interval of each size; the other "
        "curves: each progress setting, without tests. Dashed: the blocking time t_b. Both axes "
        "logarithmic."
    )
    hidden = left_out(found)
    if hidden:
        caption += (
            f" {hidden} value{'s' if hidden > 1 else ''} at or below zero (work-based "
            "overheads within noise of zero) or at size 0 cannot be drawn on "
            "logarithmic axes and are left out; the tables give them."
        )
    if invalid:
        caption += (
            " Grey hollow circles on the bottom edge: invalid points, a time below 0 beyond the "
            "noise of its repetitions, which no progress can give (the table of invalid points "
            "gives them)."
        )
    return caption


def invalid_part(run: Run) -> List[Part]:
    """The table of the invalid points, when there are any."""
    return inv.table(
        ["operation", "kind", "setting", "strategy", "size", "figure", "its interval up to"],
        [
            [
                pg.title(key.operation),
                key.kind or pg.BLOCKING,
                key.setting,
                key.strategy,
                format_size(size),
                format_time(measure.value),
                format_time(measure.high),
                INVALID_REASON,
            ]
            for key, size, measure in pg.impossible_measures(run)
        ],
    )


# --- MPI_Test intervals --------------------------------------------------------------------------


def _interval_curves(found: pg.Found, kind: str) -> Dict[str, Tuple[int, Dict[int, float]]]:
    """operation → (its largest size, interval → t_o of the library alone there)."""
    curves = {}
    for operation in pg.operations_measured(found):
        sizes = [
            size
            for key, by_size in found.items()
            if key.operation == operation
            and key.kind == kind
            and key.setting == pg.NONE
            and key.strategy == pg.TEST
            for size in by_size
        ]
        if sizes:
            curves[operation] = (max(sizes), pg.interval_curve(found, operation, kind, max(sizes)))
    return curves


def _invalid_intervals(
    invalid: Invalid, operation: str, kind: str, size: int
) -> List[Tuple[float, float]]:
    """(interval, t_o) of the invalid test points of the library alone that belong on a curve
    of the intervals figure (one operation, kind and size)."""
    return [
        (key.interval, measure.value)
        for key, at, measure in invalid
        if (key.operation, key.kind, key.setting, key.strategy, at)
        == (operation, kind, pg.NONE, pg.TEST, size)
    ]


def intervals_figure(found: pg.Found, invalid: Invalid = ()) -> Optional[Figure]:
    """t_o of the library alone at the largest size against the bytes between two tests, one
    panel per kind, one curve per operation; dotted, the same operation without tests; the
    invalid points (pg.impossible_measures) grey and hollow, at their value (on the bottom edge
    where a logarithmic axis cannot show it)."""
    panels = [(kind, _interval_curves(found, kind)) for kind in pg.KINDS]
    panels = [(kind, curves) for kind, curves in panels if curves]
    if not panels:
        return None
    figure, (row,) = panel_figure(1, len(panels), PANEL)
    handles: Dict[str, Artist] = {}
    for axes, (kind, curves) in zip(row, panels):
        values: List[float] = []
        for operation, (size, curve) in curves.items():
            colour = OPERATION_COLOURS.get(operation, "tab:gray")
            label = f"{pg.title(operation)}, {format_size(size)}"
            handles.setdefault(
                label, styled_line(axes, sorted(curve.items()), (colour, "o"), operation)
            )
            values += list(curve.values())
            untested = pg.curve(found, operation, kind).get(size)
            if untested is not None:
                axes.axhline(
                    untested,
                    color=colour,
                    linestyle=":",
                    linewidth=1.0,
                    gid=f"{operation}:{pg.NONE}",
                )
                values.append(untested)
        positive = [value for value in values if value > 0]
        log = len(positive) == len(values) and max(positive) / min(positive) > LOG_RANGE
        if not log:
            axes.axhline(0, color="0.3", linewidth=0.8, zorder=1)
        size_axis(axes)
        _time_axis(axes, values, log)
        wrong = [
            point
            for operation, (size, _) in curves.items()
            for point in _invalid_intervals(invalid, operation, kind, size)
        ]
        drawn = inv.markers(axes, wrong)
        if drawn is not None:
            handles.setdefault(inv.label(INVALID_REASON), drawn)
        decorate(
            axes,
            f"MPI_Test intervals, {_kind_text(kind)}",
            "bytes between two tests",
            "overhead t_o",
        )
    legend_beside(row[-1], handles)
    return figure


INTERVALS_CAPTION = (
    "The library alone at the largest size: t_o against the interval between two "
    "MPI_Test calls (the test strategy; the seed tried every 2^10 to 2^18 bytes). "
    "Dotted, in the same colour: the same without tests (none). test-best takes the "
    "lowest point of each curve."
)
INVALID_INTERVALS_CAPTION = (
    " Grey hollow circles: invalid points, a time below 0 beyond the noise of its "
    "repetitions, left out of the curves (the table of invalid points gives them)."
)


def intervals_caption(found: pg.Found, invalid: Invalid = ()) -> str:
    caption = INTERVALS_CAPTION
    sizes_intervals = [
        (size, sorted(curve))
        for kind in pg.KINDS
        for size, curve in _interval_curves(found, kind).values()
        if curve
    ]
    if sizes_intervals:
        size, intervals = sizes_intervals[0]
        caption += (
            f" A message of size S tested every I bytes gets floor(S / I) + 1 tests: at "
            f"{format_size(size)}, {pg.tests_made(size, intervals[0])} tests every "
            f"{format_size(intervals[0])}, {pg.tests_made(size, intervals[-1])} every "
            f"{format_size(intervals[-1])}."
        )
    if any(
        _invalid_intervals(invalid, operation, kind, size)
        for kind in pg.KINDS
        for operation, (size, _) in _interval_curves(found, kind).items()
    ):
        caption += INVALID_INTERVALS_CAPTION
    return caption


# --- interrupts ----------------------------------------------------------------------------------


def interrupts_figure(run: Run) -> Optional[Figure]:
    """Seed §V-B2: the CPU a timer wake-up takes per core, one bar per rate, against the seed's
    3.4 µs."""
    found = pg.interrupts(run)
    if not found:
        return None
    figure = new_figure((max(4.5, 2.5 + 1.0 * len(found)), 3.2))
    axes = figure.add_subplot()
    shown = [(index, entry) for index, entry in enumerate(found) if entry.per_interrupt_ns > 0]
    if shown:
        axes.bar(
            [index for index, _ in shown],
            [entry.per_interrupt_ns for _, entry in shown],
            width=0.6,
            color="tab:red",
            gid="per-interrupt",
            zorder=2,
        )
    axes.axhline(
        pg.SEED_INTERRUPT_NS,
        color="black",
        linestyle="--",
        linewidth=1.0,
        gid="seed",
        label=f"the seed ({format_time(pg.SEED_INTERRUPT_NS)}, Odin)",
    )
    axes.set_xticks(range(len(found)))
    axes.set_xticklabels(
        [f"{entry.rate_hz} Hz\n({entry.achieved_hz:.0f} achieved)" for entry in found],
        fontsize=SMALL_FONT,
    )
    axes.set_xlim(-0.7, len(found) - 0.3)
    _time_axis(
        axes, [pg.SEED_INTERRUPT_NS] + [entry.per_interrupt_ns for _, entry in shown], log=False
    )
    decorate(axes, "CPU per timer wake-up, per core", "timer rate", "per interrupt")
    axes.grid(False, axis="x")
    axes.legend(fontsize=SMALL_FONT, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return figure


def interrupts_caption(run: Run) -> str:
    caption = (
        "One computing thread per processing unit of rank 0 times a fixed workload, "
        "without and with a timer waking a sleeping thread at the rate asked: the CPU "
        "taken per wake-up per core is (t2 − t1) × threads / wake-ups (seed §V-B2, which "
        "measured 3.38 µs at 8192 Hz). Dashed: the seed's figure."
    )
    hidden = sum(entry.per_interrupt_ns <= 0 for entry in pg.interrupts(run))
    if hidden:
        caption += (
            f" {hidden} rate{'s' if hidden > 1 else ''} with no measurable cost (at or "
            "below zero: noise) drawn without a bar."
        )
    return caption


def interrupts_table(run: Run) -> Optional[Markup]:
    found = pg.interrupts(run)
    if not found:
        return None
    return table(
        [
            "rate asked",
            "achieved",
            "threads",
            "t1 (quiet)",
            "t2 (with timer)",
            "wake-ups",
            "per wake-up per core",
            "spread of cores",
        ],
        [
            [
                f"{entry.rate_hz} Hz",
                f"{entry.achieved_hz:.0f} Hz",
                entry.threads,
                format_time(entry.t1_ns),
                format_time(entry.t2_ns),
                f"{entry.wakeups:.0f}",
                format_time(entry.per_interrupt_ns),
                "n/a" if entry.spread is None else f"{entry.spread * 100:.1f}%",
            ]
            for entry in found
        ],
    )


# --- tables --------------------------------------------------------------------------------------


def _cell(name: str, measure: Optional[pg.Measure]) -> str:
    text = pg.overhead_text(measure)
    if measure is not None and measure.interval and name.endswith(pg.TEST_BEST):
        text += f" (every {format_size(measure.interval)})"
    return text


def _rows(found: pg.Found, every_size: bool) -> Tuple[List[str], List[List[str]]]:
    names = pg.curve_names(found)
    rows = []
    for operation in pg.operations_measured(found):
        for kind in pg.kinds_measured(found, operation):
            curves = pg.named_series(found, operation, kind)
            largest = pg.table_size(curves)
            sizes = (
                sorted({size for series in curves.values() for size in series})
                if every_size
                else [largest]
                if largest is not None
                else []
            )
            reference = pg.reference(found, operation)
            rows += [
                [
                    pg.title(operation),
                    kind,
                    format_size(size),
                    format_time(reference.get(size)),
                    *(_cell(name, curves.get(name, {}).get(size)) for name in names),
                ]
                for size in sizes
            ]
    return ["operation", "kind", "size", "t_b", *names], rows


def overhead_table(found: pg.Found, every_size: bool = False) -> Optional[Markup]:
    """t_o of every curve, at the largest size of each operation and kind (or at every size);
    ~0 is within noise of zero."""
    header, rows = _rows(found, every_size)
    return table(header, rows) if rows else None


def intervals_table(found: pg.Found) -> Optional[Markup]:
    """Every test point of the library alone, with its number of tests; test-best's choice
    marked."""
    rows, classes = [], []
    for operation in pg.operations_measured(found):
        for kind in pg.kinds_measured(found, operation):
            best = pg.named_series(found, operation, kind).get(pg.TEST_BEST, {})
            tested = sorted(
                {
                    size
                    for key, by_size in found.items()
                    if (key.operation, key.kind, key.setting, key.strategy)
                    == (operation, kind, pg.NONE, pg.TEST)
                    for size in by_size
                }
            )
            for size in tested:
                chosen = best[size].interval if size in best else None
                for interval, value in pg.interval_curve(found, operation, kind, size).items():
                    rows.append(
                        [
                            pg.title(operation),
                            kind,
                            format_size(size),
                            format_size(interval),
                            pg.tests_made(size, interval),
                            format_time(value),
                            "yes" if interval == chosen else "",
                        ]
                    )
                    classes.append("best" if interval == chosen else None)
    if not rows:
        return None
    return table(
        ["operation", "kind", "size", "interval", "tests", "t_o", "test-best"], rows, classes
    )


def _listed(values: object) -> str:
    return ", ".join(str(value) for value in values) if isinstance(values, list) else "n/a"


def settings_table(run: Run) -> Markup:
    """Each setting as its file recorded it: libmpilens-progress's thread and the library's
    asynchronous progress variables."""
    rows = []
    for member in run.members or [run]:
        setting = record_object(member.meta, "progress_setting")
        library, env = record_object(setting, "library"), record_object(setting, "env")
        rows.append(
            [
                pg.label_of(member),
                member.path.name,
                library.get("mode", "n/a"),
                _listed(library.get("running_per_rank")),
                _listed(library.get("cpu_per_rank")),
                "yes" if library.get("realtime") is True else "no",
                library.get("reason") or "-",
                ", ".join(f"{name}={value}" for name, value in env.items()) or "-",
                setting.get("thread_level", "n/a"),
            ]
        )
    return table(
        [
            "setting",
            "file",
            "thread mode",
            "thread running (per rank)",
            "thread cpu (per rank, -1 unbound)",
            "real-time",
            "reason",
            "variables",
            "thread level provided",
        ],
        rows,
    )


# --- the section ---------------------------------------------------------------------------------

MEASUREMENT_TEXT = (
    "Each point is the median over its repetitions (for a collective, the largest of the ranks' "
    "medians). Every setting measures its own blocking time t_b and computes for it. A "
    "difference between two overheads inside the 95% confidence intervals of their medians is "
    "called noise; a work-based overhead is a difference of two times and can come out below "
    "zero, shown as ~0."
)


def _measured_parts(run: Run, found: pg.Found) -> List[Part]:
    """The overheads, the MPI_Test intervals and the interrupts, each under its heading: its
    figure, then its tables; each only when measured (when it has a table)."""
    parts: List[Part] = []
    largest = overhead_table(found)
    invalid = pg.impossible_measures(run)
    if largest is not None:
        parts += [
            element("h3", "Overhead against message size"),
            *plot_part(
                overhead_figure(found, invalid), "overhead", overhead_caption(found, invalid)
            ),
            element("h4", "Overhead at the largest size"),
            largest,
            details("every size", overhead_table(found, every_size=True)),
        ]
    intervals = intervals_table(found)
    if intervals is not None:
        parts += [
            element("h3", "MPI_Test intervals"),
            *plot_part(
                intervals_figure(found, invalid), "intervals", intervals_caption(found, invalid)
            ),
            details("every interval", intervals),
        ]
    interrupts = interrupts_table(run)
    if interrupts is not None:
        parts += [
            element("h3", "Interrupts"),
            *plot_part(interrupts_figure(run), "interrupts", interrupts_caption(run)),
            interrupts,
        ]
    return parts


def render(run: Run) -> ReportSection:
    found = pg.measurements(run)
    parts = diagnosis_part(pg.diagnose(run))
    if not found and not pg.interrupts(run):
        return unmeasured_section(TITLE, parts + invalid_part(run), "progress measurement")
    parts += _measured_parts(run, found)
    parts += invalid_part(run)
    parts += [
        element("h3", "Progress settings"),
        settings_table(run),
        element("h3", "Measurement"),
        element("p", MEASUREMENT_TEXT),
    ]
    return ReportSection(TITLE, parts)


# --- comparison ----------------------------------------------------------------------------------


def _common_panels(found_a: pg.Found, found_b: pg.Found) -> List[Tuple[str, str]]:
    """(operation, kind) with the library alone's curve in both studies."""
    return [
        (op, kind)
        for op in pg.operations_measured(found_a)
        for kind in pg.kinds_measured(found_a, op)
        if pg.curve(found_a, op, kind) and pg.curve(found_b, op, kind)
    ]


Side = Tuple[str, str, str, pg.Found, Invalid]


def _compare_panel(axes: Axes, sides: Sequence[Side], operation: str, kind: str) -> None:
    values: List[float] = []
    for side, label, style, found, _ in sides:
        curves = pg.overhead_curves(found, operation, kind)
        best = pg.best_curve(found, operation, kind)
        for gid, name, colour in (
            (f"{side}:none", pg.NONE, NONE_STYLE[0]),
            (f"{side}:best", best, TEST_BEST_STYLE[0]),
        ):
            points = positive_points(curves.get(name, {})) if name else []
            if points:
                styled_line(
                    axes,
                    points,
                    (colour, "o" if side == "A" else "s"),
                    gid,
                    linestyle=style,
                    label=f"{side} ({label}): {name}",
                )
                values += [value for _, value in points]
    size_axis(axes)
    _time_axis(axes, values, log=bool(values))
    wrong = [point for side in sides for point in _invalid_in_panel(side[4], operation, kind)]
    drawn = inv.markers(axes, wrong)
    if drawn is not None:
        drawn.set_label(inv.label(INVALID_REASON))
    decorate(axes, f"{pg.title(operation)}, {_kind_text(kind)}", "message size", "overhead t_o")
    # The best curve differs between panels: each panel names its own.
    axes.legend(fontsize=SMALL_FONT - 1, loc="best")


def compare_figure(run_a: Run, run_b: Run, labels: Tuple[str, str]) -> Optional[Figure]:
    """Per operation and kind: none and the best curve of each study, A solid, B dashed; the
    invalid points of either, grey and hollow (left out of the curves)."""
    found_a, found_b = pg.measurements(run_a), pg.measurements(run_b)
    panels = _common_panels(found_a, found_b)
    if not panels:
        return None
    columns = min(2, len(panels))
    rows = (len(panels) + columns - 1) // columns
    figure, by_row = panel_figure(rows, columns, PANEL, beside=0.6)
    grid = [axes for row in by_row for axes in row]
    sides = (
        ("A", literal(labels[0]), "-", found_a, pg.impossible_measures(run_a)),
        ("B", literal(labels[1]), "--", found_b, pg.impossible_measures(run_b)),
    )
    for axes, (operation, kind) in zip(grid, panels):
        _compare_panel(axes, sides, operation, kind)
    for axes in grid[len(panels) :]:
        axes.set_axis_off()
    return figure


def compare_table(run_a: Run, run_b: Run, labels: Tuple[str, str]) -> Optional[Markup]:
    found_a, found_b = pg.measurements(run_a), pg.measurements(run_b)
    rows = []
    for operation, kind in _common_panels(found_a, found_b):
        row = [pg.title(operation), kind]
        for found in (found_a, found_b):
            curves = pg.named_series(found, operation, kind)
            size = pg.table_size(curves)
            best = pg.best_curve(found, operation, kind)
            none_at = curves[pg.NONE].get(size) if size is not None else None
            best_at = curves[best].get(size) if best is not None and size is not None else None
            row += [
                format_size(size),
                pg.overhead_text(none_at),
                "-" if best is None else f"{best}: {pg.overhead_text(best_at)}",
            ]
        rows.append(row)
    if not rows:
        return None
    header = ["operation", "kind"]
    for side, label in (("A", labels[0]), ("B", labels[1])):
        header += [f"size, {side}: {label}", f"none, {side}", f"lowest other, {side}"]
    return table(header, rows)


compare_parts = Comparison(
    "Overheads, A against B",
    "overhead",
    "The library alone without tests (none, black) and each study's lowest other curve at its "
    "largest size (blue)",
    compare_figure,
    compare_table,
    "Overhead at the largest size",
)
