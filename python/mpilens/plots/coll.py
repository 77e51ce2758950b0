"""The coll report section: every method's estimate against the number of ranks (seed 003
figure 11), each oli point's per-rank profile over its algorithm's tree, the error against the
truth under --hop-delay, tables of every number, and the comparison figure."""

from __future__ import annotations

import heapq
import math
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..analysis import coll
from ..markup import Markup, details, element, table
from ..results import Record, Run
from ..section import Part, ReportSection
from ..units import format_time
from . import invalid as inv
from .common import (
    SMALL_FONT,
    Comparison,
    diagnosis_list,
    diagnosis_part,
    headed_plot,
    legend_beside,
    literal,
    new_figure,
    rank_ticks,
    ratio_axis,
    styled_line,
    to_plot,
)

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

TITLE = "Collective latency"

# One look per method in every figure; oli, the seed's method, drawn boldest.
STYLES = {
    "oli": ("black", "o"),
    "rounds": ("tab:blue", "v"),
    "rounds-reverse": ("tab:cyan", "<"),
    "barrier": ("tab:red", "s"),
    "barrier-ring": ("tab:orange", "D"),
    "barrier-dissem": ("tab:brown", "P"),
    "ack": ("tab:purple", "^"),
    "sendlat": ("tab:gray", "x"),
    "osu": ("tab:green", "*"),
    "imb": ("tab:olive", "h"),
}
OTHER_STYLE = ("tab:pink", ".")
TRUTH_STYLE: Dict[str, Any] = {"color": "0.35", "linestyle": "--", "linewidth": 1.2}
# A panel whose values span more than this factor gets a logarithmic y axis.
LOG_RANGE = 10.0
PANEL_COLUMNS = 3
PANEL_WIDTH, PANEL_HEIGHT = 3.6, 3.0
# Above this many ranks, arrows of the tree would hide the bars.
MAX_EDGE_RANKS = 64
# Above this many ranks, a bar would be a pixel or less: each rank is a line from 0 to its OL_i
# (one artist for all), and the image shows the tallest of the ranks that share a pixel.
MAX_BAR_RANKS = 256
# The table of every rank's numbers lists at most this many: the largest OL_i first.
MAX_TABLE_RANKS = 256

BAR_COLOUR, MAX_COLOUR, REMEDY_HATCH = "tab:blue", "tab:red", "///"
EDGE_COLOUR = "0.3"
# Artist ids, so that what a figure shows can be checked without reading pixels.
GIDS = {
    "bar": "ol",
    "remedy": "remedy",
    "audit": "audited",
    "max": "argmax",
    "truth": "truth",
    "edge": "edge",
    "root": "root",
    "unmeasured": "unmeasured",
}

TREE_NAMES = {
    "linear": "chain",
    "backward": "backward chain",
    "binomial": "binomial tree",
    "flat": "flat tree",
}
TREE_TEXTS = {
    "linear": "the parent of rank i is i−1",
    "backward": "the parent of rank i is i+1, the root's child is the last rank",
    "binomial": "the parent of rank i is i less its lowest set bit",
    "flat": "the root is every rank's parent",
}
METHOD_TEXTS = {
    "oli": "max OL_i, the seed's method: per rank, operations each acknowledged by that rank, "
    "less half a round trip",
    "rounds": "one operation from each root in turn (a lower bound: pipelining)",
    "rounds-reverse": "the same in reverse root order",
    "barrier": "operation then MPI_Barrier (an upper bound)",
    "barrier-ring": "operation then the seed's linear ring barrier",
    "barrier-dissem": "operation then a dissemination barrier of mpilens",
    "ack": "operation then an acknowledgement of every rank to the root (an upper bound)",
    "sendlat": "back-to-back operations timed at the root: the root's gap",
    "osu": "what OSU reports: the mean over ranks of each rank's local time",
    "imb": "what IMB reports: the largest rank's mean local time",
}


# coll.invalid_ranks: rank count → why none of its estimates can be trusted.
Invalid = Mapping[int, str]
NO_INVALID: Invalid = {}
# The legend's short words for each kind of reason coll.invalid_ranks gives (the table has them
# whole): the start of the reason → its words.
SHORT_REASONS = {
    "not trustworthy": "ranks outnumber the cores",
    "oli outside": "oli outside [rounds, barrier/ack]",
}


def short_reason(reason: str) -> str:
    """A reason of coll.invalid_ranks in a few words, for a legend."""
    for start, words in SHORT_REASONS.items():
        if reason.startswith(start):
            return words
    return reason.split(":")[0]


def without(
    by_method: Mapping[str, Mapping[int, Record]], invalid: Invalid
) -> Dict[str, Dict[int, Record]]:
    """The configuration's points but at the invalid rank counts."""
    return {
        method: {ranks: point for ranks, point in by_ranks.items() if ranks not in invalid}
        for method, by_ranks in by_method.items()
    }


def _draw_invalid(
    axes: Axes,
    invalid: Invalid,
    value_at: Callable[[str, int], Optional[float]],
    methods: Sequence[str],
    handles: Dict[str, Artist],
) -> None:
    """At each invalid rank count, every method's value there (value_at), grey and hollow; one
    legend entry per short reason. The panel's axes must be set."""
    by_reason: Dict[str, List[Tuple[float, Optional[float]]]] = {}
    for ranks, reason in sorted(invalid.items()):
        by_reason.setdefault(short_reason(reason), []).extend(
            (ranks, value) for method in methods if (value := value_at(method, ranks)) is not None
        )
    for reason, points in by_reason.items():
        drawn = inv.markers(axes, points)
        if drawn is not None:
            handles.setdefault(inv.label(reason), drawn)


def _style(method: str) -> Tuple[str, str]:
    return STYLES.get(method, OTHER_STYLE)


def _time_axis(axes: Axes, values: Sequence[float]) -> None:
    """Times on y from 0, or logarithmic when they span more than LOG_RANGE; labelled as times."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    positive = [value for value in values if value > 0]
    if positive and max(positive) / min(positive) > LOG_RANGE:
        axes.set_yscale("log")
        axes.yaxis.set_minor_formatter(NullFormatter())
    elif positive:
        axes.set_ylim(0, max(positive) * 1.15)
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: format_time(value)))


def _method_line(axes: Axes, method: str, points: Sequence[Tuple[int, float]]) -> Line2D:
    """One method's curve against the rank count, in its colour and marker; oli bold."""
    return styled_line(
        axes,
        points,
        _style(method),
        method,
        bold=method == coll.OLI,
        markersize=5,
        bold_width=2.2,
        label=method,
    )


def _latency_at(
    by_method: Mapping[str, Mapping[int, Record]],
) -> Callable[[str, int], Optional[float]]:
    return lambda method, ranks: coll.latency(by_method.get(method, {}).get(ranks))


def _value_at(
    values: Mapping[Tuple[str, int], float],
) -> Callable[[str, int], Optional[float]]:
    return lambda method, ranks: values.get((method, ranks))


def draw_methods(
    axes: Axes, by_method: Mapping[str, Mapping[int, Record]], invalid: Invalid = NO_INVALID
) -> Dict[str, Artist]:
    """One configuration: each method's estimate against the rank count, the truth dashed, the
    estimates at the invalid rank counts grey and hollow; returns the legend handles by label."""
    handles: Dict[str, Artist] = {}
    measured = _latency_at(by_method)
    methods = coll.methods_present(by_method)
    values: List[float] = [
        value for ranks in invalid for m in methods if (value := measured(m, ranks)) is not None
    ]
    counts: set = set(invalid)
    kept = without(by_method, invalid)
    for method in methods:
        points = coll.curve(kept[method])
        if not points:
            continue
        handles[method] = _method_line(axes, method, points)
        values += [value for _, value in points]
        counts |= {ranks for ranks, _ in points}
    truths = coll.truth_curve(by_method)
    if truths:
        xs, ys = zip(*truths)
        (line,) = axes.plot(xs, ys, label="analytic truth", gid="truth", **TRUTH_STYLE)
        handles["analytic truth"] = line
        values += ys
        counts |= set(xs)
    _time_axis(axes, values)
    rank_ticks(axes, sorted(counts))
    _draw_invalid(axes, invalid, measured, methods, handles)
    axes.set_xlabel("ranks", fontsize=8)
    axes.set_ylabel("latency estimate", fontsize=8)
    axes.tick_params(labelsize=SMALL_FONT)
    axes.grid(True, color="0.9", linewidth=0.6)
    return handles


def _panel_figure(count: int) -> Tuple[Figure, List[Axes]]:
    """A figure of count panels, PANEL_COLUMNS to a row, and its panels."""
    columns = min(PANEL_COLUMNS, count)
    rows = math.ceil(count / columns)
    figure = new_figure((1.6 + PANEL_WIDTH * columns, 0.6 + PANEL_HEIGHT * rows))
    grid = figure.subplots(rows, columns, squeeze=False)
    panels = [axes for row in grid for axes in row]
    for axes in panels[count:]:
        axes.set_visible(False)
    return figure, panels[:count]


def _legend(panels: Sequence[Axes], handles: Mapping[str, Artist]) -> None:
    """One legend for every panel, right of the first row."""
    legend_beside(panels[min(PANEL_COLUMNS, len(panels)) - 1], handles)


Rejected = Mapping[coll.Config, Invalid]


def methods_figure(found: coll.Series, rejected: Optional[Rejected] = None) -> Figure:
    """Seed figure 11: per configuration, every method's estimate against the rank count; the
    rank counts rejected (coll.valid_series) grey and hollow."""
    names = coll.labels(found)
    figure, panels = _panel_figure(len(found))
    handles: Dict[str, Artist] = {}
    for axes, (config, by_method) in zip(panels, found.items()):
        invalid = (rejected or {}).get(config, NO_INVALID)
        for label, handle in draw_methods(axes, by_method, invalid).items():
            handles.setdefault(label, handle)
        axes.set_title(names[config], fontsize=9)
    ordered = {
        label: handles[label] for label in (*coll.ESTIMATES, "analytic truth") if label in handles
    }
    _legend(panels, {**ordered, **handles})
    return figure


def error_series(
    by_method: Mapping[str, Mapping[int, Record]],
) -> Dict[str, List[Tuple[int, float]]]:
    """Per method, (rank count, estimate / truth) wherever the truth is known."""
    truths = dict(coll.truth_curve(by_method))
    found = {}
    for method in coll.methods_present(by_method):
        ratios = [
            (ranks, value / truths[ranks])
            for ranks, value in coll.curve(by_method[method])
            if truths.get(ranks, 0) > 0
        ]
        if ratios:
            found[method] = ratios
    return found


def error_figure(found: coll.Series, rejected: Optional[Rejected] = None) -> Optional[Figure]:
    """Per configuration with a truth: each method's estimate over the truth against the rank
    count, 1 drawn and ±10% shaded, the rank counts rejected grey and hollow; None when no
    configuration has a truth."""
    rejected = rejected or {}
    errors = {
        config: error_series(without(by_method, rejected.get(config, NO_INVALID)))
        for config, by_method in found.items()
    }
    errors = {config: by_method for config, by_method in errors.items() if by_method}
    if not errors:
        return None
    names = coll.labels(found)
    figure, panels = _panel_figure(len(errors))
    handles: Dict[str, Artist] = {}
    for axes, (config, by_method) in zip(panels, errors.items()):
        band = axes.axhspan(
            1 - coll.AGREEMENT, 1 + coll.AGREEMENT, color="0.88", zorder=0, gid="band"
        )
        handles.setdefault(f"±{coll.AGREEMENT:.0%} of the truth", band)
        axes.axhline(1, color="0.3", linewidth=0.9, zorder=1)
        ratios: List[float] = []
        counts: set = set()
        for method, points in by_method.items():
            handles.setdefault(method, _method_line(axes, method, points))
            ratios += [ratio for _, ratio in points]
            counts |= {ranks for ranks, _ in points}
        invalid = rejected.get(config, NO_INVALID)
        measured = {
            (method, ranks): ratio
            for method, points in error_series(found[config]).items()
            for ranks, ratio in points
        }
        ratios += [ratio for (_, ranks), ratio in measured.items() if ranks in invalid]
        ratio_axis(axes, ratios, keep_in_view=(1 - coll.AGREEMENT, 1 + coll.AGREEMENT))
        rank_ticks(axes, sorted(counts | set(invalid)))
        _draw_invalid(
            axes,
            invalid,
            _value_at(measured),
            coll.methods_present(found[config]),
            handles,
        )
        delay = f"hop delay {format_time(config.hop_delay_ns)}"
        axes.set_title(
            names[config] if delay in names[config] else f"{names[config]}, {delay}", fontsize=9
        )
        axes.set_xlabel("ranks", fontsize=8)
        axes.set_ylabel("estimate / truth", fontsize=8)
        axes.tick_params(labelsize=SMALL_FONT)
    band_label = f"±{coll.AGREEMENT:.0%} of the truth"
    _legend(
        panels,
        {
            **{m: handles[m] for m in coll.ESTIMATES if m in handles},
            **handles,
            band_label: handles[band_label],
        },
    )
    return figure


def _bars(
    axes: Axes, ranks: Sequence[int], heights: Sequence[float], kind: str, label: str, many: bool
) -> None:
    if not ranks:
        return
    colour = MAX_COLOUR if kind == "max" else BAR_COLOUR
    alpha = 0.85 if kind in ("bar", "max") else 0.4
    if many:
        axes.vlines(
            ranks,
            0,
            heights,
            colors=colour,
            alpha=alpha,
            linewidth=0.6,
            label=label,
            gid=GIDS[kind],
            zorder=2,
        )
        return
    remedy = kind == "remedy"
    axes.bar(
        ranks,
        heights,
        width=0.7,
        color=colour,
        alpha=alpha,
        hatch=REMEDY_HATCH if remedy else None,
        edgecolor="0.2" if remedy else colour,
        linewidth=0.6,
        label=label,
        gid=GIDS[kind],
        zorder=2,
    )


def _cover_invalid(axes: Axes, measured: Mapping[int, float], many: bool) -> None:
    """The OL_i of an invalid rank count in the invalid look, over the bars drawn for them."""
    if many:
        inv.markers(axes, list(measured.items()))
        return
    for rank, value in measured.items():
        bar = inv.bar(axes, rank, value, 0.7)
        bar.set_zorder(3)


def _edge_label(config: coll.Config) -> str:
    """The arrows' legend: whose messages they are."""
    tree = TREE_NAMES.get(config.algo, config.algo)
    if config.op == "reduce":
        return f"messages of the {tree}, towards the root"
    if config.op == "allreduce":
        return f"messages of the {tree}'s broadcast part"
    return f"messages of the {tree}"


def profile_figure(found: coll.Profile, label: str, invalid: Optional[str] = None) -> Figure:
    """OL_i by rank: bars (the maximum in red, ranks from the remedy hatched), the truth per rank
    as black ticks, and for a reference algorithm the tree's messages as arrows between the bars'
    tops (a broadcast's root completing at 0). Beyond MAX_BAR_RANKS, lines for the bars and dots
    for the truth. At a rank count coll.invalid_ranks rejects (`invalid`: its reason), every
    value is drawn as invalid instead, never as a measurement."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.ticker import FuncFormatter

    figure = new_figure((max(5.5, min(12.0, 2.5 + 0.28 * found.ranks)), 4.2))
    axes = figure.add_subplot()
    many = found.ranks > MAX_BAR_RANKS
    measured = {
        rank: value for rank in range(found.ranks) if (value := found.value(rank)) is not None
    }
    remedied, audited = set(found.gap_bound), set(found.audited)
    kinds: Dict[str, List[int]] = {"bar": [], "remedy": [], "audit": [], "max": []}
    for rank in measured:
        kinds[
            "max"
            if rank == found.argmax
            else "remedy"
            if rank in remedied
            else "audit"
            if rank in audited
            else "bar"
        ].append(rank)
    for kind, text in (
        ("bar", "OL_i"),
        ("remedy", "OL_i from the remedy (gap-bound rank)"),
        ("audit", "random check, one block (--fast)"),
    ):
        _bars(axes, kinds[kind], [measured[r] for r in kinds[kind]], kind, text, many)
    if kinds["max"]:
        rank = kinds["max"][0]
        _bars(axes, [rank], [measured[rank]], "max", f"max OL_i (rank {rank})", many)
        if many:
            # A line among thousands is a pixel wide: a marker on top shows where it is.
            axes.plot(
                [rank],
                [measured[rank]],
                linestyle="none",
                marker="v",
                color=MAX_COLOUR,
                markersize=6,
                zorder=5,
            )
        elif rank in remedied:
            axes.bar(
                [rank],
                [measured[rank]],
                width=0.7,
                color="none",
                hatch=REMEDY_HATCH,
                edgecolor="0.2",
                linewidth=0.6,
                zorder=2,
            )
    root = [0] if found.config.op == "bcast" and found.value(0) is None else []
    others = [rank for rank in found.unmeasured if rank not in root]
    if root:
        axes.plot(
            root,
            [0],
            linestyle="none",
            marker="^",
            color="0.2",
            markersize=7,
            label="root (sends first)",
            gid=GIDS["root"],
            zorder=4,
            clip_on=False,
        )
    if others:
        axes.plot(
            others,
            [0] * len(others),
            linestyle="none",
            marker="x",
            color="0.45",
            markersize=6,
            zorder=4,
            clip_on=False,
            gid=GIDS["unmeasured"],
            label="not measured (--fast)" if found.fast else "not measured",
        )
    truths = [(rank, value) for rank, value in enumerate(found.truth) if value is not None]
    if truths and many:
        axes.plot(
            *zip(*truths),
            linestyle="none",
            marker=".",
            markersize=1.5,
            color="black",
            zorder=5,
            label="analytic truth",
            gid=GIDS["truth"],
        )
    elif truths:
        xs, ys = zip(*truths)
        axes.scatter(
            xs,
            ys,
            marker="_",
            s=260,
            linewidths=2,
            color="black",
            zorder=5,
            label="analytic truth",
            gid=GIDS["truth"],
        )
    edges = (
        coll.tree_edges(found.config.algo, found.ranks, found.config.op)
        if found.ranks <= MAX_EDGE_RANKS
        else []
    )
    for source, target in edges:
        arrow = FancyArrowPatch(
            (source, found.value(source) or 0.0),
            (target, found.value(target) or 0.0),
            arrowstyle="-|>",
            mutation_scale=8,
            color=EDGE_COLOUR,
            linewidth=0.8,
            connectionstyle="arc3,rad=-0.25",
            zorder=6,
        )
        arrow.set_gid(GIDS["edge"])
        axes.add_patch(arrow)
    if invalid is not None:
        _cover_invalid(axes, measured, many)
    handles, texts = axes.get_legend_handles_labels()
    if invalid is not None:
        handles.insert(0, inv.patch())
        texts.insert(0, inv.label(short_reason(invalid)))
    if edges:
        handles.append(Line2D([], [], color=EDGE_COLOUR, linewidth=0.8, marker=">", markersize=4))
        texts.append(_edge_label(found.config))
    tops = [value for value in [*found.ol, *found.truth] if value is not None]
    axes.set_ylim(0, (max(tops) if tops and max(tops) > 0 else 1.0) * 1.25)
    axes.set_xlim(-0.8, found.ranks - 0.2)
    rank_ticks(axes, list(range(found.ranks)))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: format_time(value)))
    axes.set_xlabel("rank", fontsize=8)
    axes.set_ylabel("OL_i", fontsize=8)
    axes.tick_params(labelsize=SMALL_FONT)
    axes.set_title(f"{label}, {found.ranks} ranks", fontsize=9)
    if handles:
        axes.legend(
            handles,
            texts,
            fontsize=SMALL_FONT,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.16),
            ncols=2,
            frameon=False,
        )
    return figure


# --- captions ------------------------------------------------------------------------------------

METHODS_CAPTION = (
    "Latency estimate of every method against the number of ranks, one panel per operation and "
    "implementation (seed 003 figure 11). oli (black, thick) is the largest per-rank operation "
    "latency OL_i; rounds is a lower bound (pipelining), barrier and ack upper bounds; osu and "
    "imb are what those suites would report from the barrier method's runs. Dashed: the "
    "analytic truth under --hop-delay. The y axis is logarithmic where values span more than a "
    f"factor {LOG_RANGE:g}."
)
ERROR_CAPTION = (
    "Each method's estimate divided by the analytic truth under --hop-delay, against the number "
    f"of ranks: 1 is exact, the grey band ±{coll.AGREEMENT:.0%}. oli should stay in the band; "
    "rounds below it, barrier and ack above it."
)


def profile_caption(found: coll.Profile, label: str, invalid: Optional[str] = None) -> str:
    parts = [] if invalid is None else [f"INVALID, shown for inspection only: {invalid}"]
    parts += [
        f"{label} at {found.ranks} ranks: OL_i, the operation latency of each rank (for "
        + {
            "bcast": "a broadcast, until that rank has the data",
            "reduce": "a reduction, when that rank enters last",
            "allreduce": "an allreduce, completion at that rank when the root enters last",
        }.get(found.config.op, found.config.op)
        + ")"
    ]
    many = found.ranks > MAX_BAR_RANKS
    if many:
        parts.append(
            "one line per rank, too many for bars: where ranks share a pixel, the tallest shows"
        )
    if found.argmax is not None:
        parts.append(f"red: the largest, rank {found.argmax}")
    if found.gap_bound:
        parts.append(
            f"{'pale' if many else 'hatched'}: ranks whose E_i was not clearly above "
            "the root's gap, their OL_i from the remedy"
        )
    if found.audited:
        parts.append("pale: ranks drawn at random by --fast and measured with one block")
    if found.ranks <= MAX_EDGE_RANKS and coll.tree_edges(
        found.config.algo, found.ranks, found.config.op
    ):
        parts.append(
            f"arrows: {_edge_label(found.config)} "
            f"({TREE_TEXTS.get(found.config.algo, found.config.algo)})"
        )
    if any(value is not None for value in found.truth):
        parts.append(f"black {'dots' if many else 'ticks'}: the analytic truth per rank")
    if found.unmeasured:
        parts.append("markers on the axis: ranks not measured")
    return "; ".join(parts) + "."


# --- tables --------------------------------------------------------------------------------------


def _cell(name: str, value: Optional[float]) -> str:
    if value is None:
        return "n/a"
    return str(value) if name in ("np", "argmax") else format_time(value)


def estimates_table(by_method: Mapping[str, Mapping[int, Record]]) -> Markup:
    header, rows = coll.config_rows(by_method)
    shown = {"np": "ranks", "argmax": "oli's argmax rank", "truth": "analytic truth"}
    return table(
        [shown.get(name, name) for name in header],
        [[_cell(name, value) for name, value in zip(header, row)] for row in rows],
    )


def _rank_role(found: coll.Profile, rank: int) -> str:
    roles = []
    if found.config.op == "bcast" and rank == 0:
        roles.append("root")
    if found.value(rank) is None and rank != 0:
        roles.append("not measured")
    if rank in found.audited:
        roles.append("random check, one block")
    if rank in found.gap_bound:
        roles.append(
            f"gap-bound, from the {found.remedy} remedy" if found.remedy else "gap-bound, no remedy"
        )
    if rank == found.argmax:
        roles.append("max")
    return ", ".join(roles)


def table_ranks(found: coll.Profile) -> List[int]:
    """The ranks the table lists: every one up to MAX_TABLE_RANKS; beyond, the MAX_TABLE_RANKS
    measured ranks of largest OL_i, largest first."""
    if found.ranks <= MAX_TABLE_RANKS:
        return list(range(found.ranks))
    measured = [rank for rank in range(found.ranks) if found.value(rank) is not None]
    return heapq.nlargest(MAX_TABLE_RANKS, measured, key=lambda rank: (found.value(rank), -rank))


def ranks_table(found: coll.Profile) -> Markup:
    columns = [
        ("rank", lambda r: r),
        ("OL_i", lambda r: format_time(found.value(r))),
        ("E_i", lambda r: format_time(found.e[r] if found.e else None)),
        ("RTL_i", lambda r: format_time(found.rtl[r] if found.rtl else None)),
    ]
    if any(value is not None for value in found.truth):
        columns.append(("analytic truth", lambda r: format_time(found.truth[r])))
    if found.fast and found.cheap:
        columns.append(("cheap pass", lambda r: format_time(found.cheap[r])))
    columns.append(("", lambda r: _rank_role(found, r)))
    ranks = table_ranks(found)
    gap_bound = set(found.gap_bound)
    return table(
        [name for name, _ in columns],
        [[cell(rank) for _, cell in columns] for rank in ranks],
        ["warn" if rank in gap_bound and found.remedy is None else None for rank in ranks],
    )


def _table_summary(found: coll.Profile, name: str) -> str:
    if found.ranks <= MAX_TABLE_RANKS:
        return f"{name} at {found.ranks} ranks: every rank's numbers"
    return (
        f"{name} at {found.ranks} ranks: the {MAX_TABLE_RANKS} ranks of largest OL_i (the "
        "results file holds every rank's numbers)"
    )


def _rsd(value: object) -> str:
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    return "n/a" if number is None else f"{number:.1%}"


def _estimate(point: Record, sample: Mapping[str, object], estimator: str) -> Optional[float]:
    """The point's estimate under one estimator; files written before both were recorded have
    their blocks' own."""
    found = coll.estimate_under(point, estimator)
    value = sample.get(estimator)
    return found if found is not None else value if isinstance(value, (int, float)) else None


def quality_table(run: Run) -> Markup:
    """Every point: its estimate, the estimator it came from, both estimates (for oli, the largest
    OL_i under each), the confidence interval of the blocks' median, the RSD, the blocks and the
    time it took."""
    limit = coll.rsd_limit(run)
    rows, classes = [], []
    for config, by_method in coll.series(run).items():
        for method in coll.methods_present(by_method):
            for ranks in sorted(by_method[method]):
                point = by_method[method][ranks]
                stats = point["stats"]
                sample = stats.get("sample") if isinstance(stats.get("sample"), dict) else {}
                rsd = stats.get("rsd")
                rows.append(
                    [
                        f"{config.op}/{config.algo}",
                        method,
                        ranks,
                        format_time(coll.latency(point)),
                        coll.estimator_of(point),
                        format_time(_estimate(point, sample, "median")),
                        format_time(_estimate(point, sample, "mean")),
                        f"{format_time(sample.get('ci_lo'))} – {format_time(sample.get('ci_hi'))}",
                        _rsd(rsd),
                        stats.get("blocks", "n/a"),
                        sample.get("stop", "n/a"),
                        format_time(stats.get("elapsed_ns")),
                    ]
                )
                noisy = isinstance(rsd, (int, float)) and rsd > limit
                classes.append("warn" if noisy else None)
    return table(
        [
            "operation",
            "method",
            "ranks",
            "estimate",
            "estimator",
            "median",
            "mean",
            "95% interval of the median",
            "RSD of blocks",
            "blocks",
            "stopped by",
            "time",
        ],
        rows,
        classes,
    )


# --- the section ---------------------------------------------------------------------------------


INVALID_CAPTION = (
    " Grey hollow circles: every estimate at a rank count that is invalid (the legend and the "
    "table of invalid points say why), left out of the curves."
)


def _with_invalid(caption: str, rejected: Rejected) -> str:
    return caption + INVALID_CAPTION if any(rejected.values()) else caption


def invalid_part(found: coll.Series, rejected: Rejected) -> List[Part]:
    """The table of the invalid rank counts, when there are any."""
    names = coll.labels(found)
    return inv.table(
        ["configuration", "ranks"],
        [
            [names[config], ranks, reason]
            for config, invalid in rejected.items()
            if config in names
            for ranks, reason in sorted(invalid.items())
        ],
    )


def _methods_part(found: coll.Series, rejected: Rejected) -> List[Part]:
    names = coll.labels(found)
    parts: List[Part] = [
        element("h3", "Methods compared"),
        to_plot(
            methods_figure(found, rejected), "methods", _with_invalid(METHODS_CAPTION, rejected)
        ),
    ]
    for config, by_method in found.items():
        parts += [element("h4", f"{names[config]}: latency estimates"), estimates_table(by_method)]
    present = {method for by_method in found.values() for method in by_method}
    parts.append(
        details(
            "what each method measures",
            table(
                ["method", "what it measures"],
                [[method, METHOD_TEXTS[method]] for method in coll.ESTIMATES if method in present],
            ),
        )
    )
    return parts


def _error_part(found: coll.Series, rejected: Rejected) -> List[Part]:
    return headed_plot(
        "Error against the analytic truth",
        error_figure(found, rejected),
        "error",
        _with_invalid(ERROR_CAPTION, rejected),
    )


def _profile_part(found: coll.Series, rejected: Rejected) -> List[Part]:
    names, slugs = coll.labels(found), coll.slugs(found)
    parts: List[Part] = []
    for config, by_method in found.items():
        for ranks in sorted(by_method.get(coll.OLI, {})):
            one = coll.profile(by_method[coll.OLI][ranks])
            if all(value is None for value in one.ol):
                continue
            invalid = rejected.get(config, NO_INVALID).get(ranks)
            parts += [
                to_plot(
                    profile_figure(one, names[config], invalid),
                    f"profile-{slugs[config]}-np{ranks}",
                    profile_caption(one, names[config], invalid),
                ),
                details(_table_summary(one, names[config]), ranks_table(one)),
            ]
    if not parts:
        return []
    return [
        element("h3", "Per-rank operation latency OL_i (oli)"),
        element(
            "p",
            "OL_i = E_i − RTL_i/2: E_i is the time per operation when rank i "
            "acknowledges each one to the root, RTL_i the round trip between the "
            "root and rank i. oli's estimate is the largest OL_i.",
        ),
    ] + parts


def render(run: Run) -> ReportSection:
    found = coll.series(run)
    if not found:
        parts: List[Part] = [element("p", "This run holds no collective latency measurement.")]
        sentences = coll.diagnose(run)
        return ReportSection(TITLE, parts + ([diagnosis_list(sentences)] if sentences else []))
    parts = diagnosis_part(coll.diagnose(run))
    _, rejected = coll.valid_series(run, found)
    parts += _methods_part(found, rejected) + invalid_part(found, rejected)
    parts += _error_part(found, rejected) + _profile_part(found, rejected)
    parts += [
        element("h3", "Measurement"),
        element(
            "p",
            "Each point repeats blocks of operations until the relative standard "
            "deviation (RSD) of the block results is below "
            f"{coll.rsd_limit(run):.0%}, within the preset's limits on the "
            "number of blocks (seed 003: blocks of 100, 8 to 30 blocks, 3%). "
            "Rows past the RSD are marked.",
        ),
        details("every point's repetitions", quality_table(run)),
    ]
    return ReportSection(TITLE, parts)


# --- comparison ----------------------------------------------------------------------------------


def _compared(run: Run) -> Tuple[coll.Series, Rejected]:
    """A compared run's series and the rank counts coll.invalid_ranks rejects in it."""
    found = coll.series(run)
    return found, coll.valid_series(run, found)[1]


def compare_figure(run_a: Run, run_b: Run, labels: Tuple[str, str]) -> Optional[Figure]:
    """oli against the rank count for both runs, one panel per configuration in both; a rank
    count invalid in a run is left out of its curve and drawn as invalid."""
    (found_a, rejected_a), (found_b, rejected_b) = _compared(run_a), _compared(run_b)
    shared = [config for config in found_a if config in found_b]
    if not shared:
        return None
    names = coll.labels(shared)
    figure, panels = _panel_figure(len(shared))
    handles: Dict[str, Artist] = {}
    for axes, config in zip(panels, shared):
        values: List[float] = []
        counts: set = set()
        both = ((found_a, rejected_a), (found_b, rejected_b))
        for (found, rejected), style, label in zip(
            both, ("-", "--"), (f"A: {labels[0]}", f"B: {labels[1]}")
        ):
            invalid = rejected.get(config, NO_INVALID)
            counts |= {ranks for ranks in found[config].get(coll.OLI, {}) if ranks in invalid}
            points = coll.curve(without(found[config], invalid).get(coll.OLI, {}))
            if points:
                xs, ys = zip(*points)
                (line,) = axes.plot(
                    xs,
                    ys,
                    linestyle=style,
                    marker="o",
                    color="black" if style == "-" else "tab:red",
                    label=label,
                    gid=label[0],
                )
                handles.setdefault(label, line)
                values += ys
                counts |= set(xs)
        _time_axis(axes, values)
        rank_ticks(axes, sorted(counts))
        for found, rejected in both:
            invalid = rejected.get(config, NO_INVALID)
            _draw_invalid(axes, invalid, _latency_at(found[config]), [coll.OLI], handles)
        axes.set_title(names[config], fontsize=9)
        axes.set_xlabel("ranks", fontsize=8)
        axes.set_ylabel("oli (max OL_i)", fontsize=8)
        axes.tick_params(labelsize=SMALL_FONT)
    _legend(panels, {literal(label): h for label, h in handles.items()})
    return figure


def _compared_value(value: Optional[float], invalid: bool) -> str:
    return f"{format_time(value)} (invalid)" if invalid else format_time(value)


def compare_table(run_a: Run, run_b: Run, labels: Tuple[str, str]) -> Optional[Markup]:
    """oli of both runs per configuration and rank count, and B / A where both are valid."""
    (found_a, rejected_a), (found_b, rejected_b) = _compared(run_a), _compared(run_b)
    shared = [config for config in found_a if config in found_b]
    names = coll.labels(shared)
    rows = []
    for config in shared:
        a = dict(coll.curve(found_a[config].get(coll.OLI, {})))
        b = dict(coll.curve(found_b[config].get(coll.OLI, {})))
        bad_a, bad_b = rejected_a.get(config, NO_INVALID), rejected_b.get(config, NO_INVALID)
        for ranks in sorted(set(a) | set(b)):
            invalid = ranks in bad_a or ranks in bad_b
            both = ranks in a and ranks in b and a[ranks] > 0
            ratio = b[ranks] / a[ranks] if both and not invalid else None
            rows.append(
                [
                    names[config],
                    ranks,
                    _compared_value(a.get(ranks), ranks in bad_a),
                    _compared_value(b.get(ranks), ranks in bad_b),
                    ("n/a: invalid" if invalid else "n/a") if ratio is None else f"{ratio:.2f}",
                ]
            )
    if not rows:
        return None
    return table(["operation", "ranks", f"A: {labels[0]}", f"B: {labels[1]}", "B / A"], rows)


# compare_table has rows only where compare_figure has a panel: the table comes with the figure.
compare_parts = Comparison(
    "oli, A against B",
    "oli",
    "oli (max OL_i) against the number of ranks",
    compare_figure,
    compare_table,
)
