"""The monitor report section: per kind of communication, heat maps of the message and byte
matrices, what each rank sent and received, the busiest pairs and the diagnosis."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, List, Optional, Sequence, Tuple, cast

from ..analysis import monitor
from ..lazy_numpy import np
from ..markup import Markup, element, join, table
from ..matrices import Matrix, Traffic, traffic_of
from ..results import Run
from ..section import Part, Plot, ReportSection
from ..units import format_size
from .common import new_figure, to_plot

# Generic tick choosers: powers of two for sizes, 1-2-5 decades for any count.
from .overlap import size_ticks, time_ticks

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure
    from matplotlib.image import AxesImage

TITLE = "Communication matrices"
COLOURS = "viridis"
# A map shows at most this many cells a side, about the pixels of a panel: with more ranks,
# drawing one cell per pair would let the image's scaling drop cells, so each cell sums the
# traffic of a node's ranks (when the run's hosts are known), or of a block of ranks.
MAX_CELLS = 256
# Beyond this many ranks, bars would be thinner than a pixel: lines are drawn instead.
MAX_BARS = 64
SMALL_FONT = 8
# Labelled rows (and columns) of a map, at most: a block's label is a range of ranks.
MAP_TICKS = 6
WHAT_NAMES = {"counts": "messages", "bytes": "bytes"}
BYTE_UNITS = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1))


@dataclass(frozen=True, eq=False)
class Grouping:
    """The rows and columns of a map: one per rank, or per group of ranks summed together."""

    of_rank: np.ndarray  # each rank's row (and column)
    labels: List[str]  # each row's tick label
    axis: str  # what a row is, after "sending" / "receiving"
    caption: str  # what a cell sums; "" for one cell per pair of ranks

    @property
    def size(self) -> int:
        return len(self.labels)


def _nodes(hosts: Sequence[str]) -> Grouping:
    names = list(dict.fromkeys(hosts))
    index = {name: number for number, name in enumerate(names)}
    return Grouping(
        np.array([index[host] for host in hosts]),
        names,
        "node",
        " Each cell sums what the ranks of one node sent to the ranks of another: "
        f"the run's {len(names)} hosts, in the order of their first rank.",
    )


def _blocks(ranks: int, cells: int) -> Grouping:
    block = math.ceil(ranks / cells)
    starts = range(0, ranks, block)
    return Grouping(
        np.arange(ranks) // block,
        [f"{start}–{min(start + block, ranks) - 1}" for start in starts],
        f"ranks (blocks of {block})",
        f" Each cell sums a block of {block}×{block} rank pairs.",
    )


def grouping(ranks: int, hosts: object = None, cells: int = MAX_CELLS) -> Grouping:
    """One row per rank up to `cells` ranks; beyond, one per node when hosts (the run's host of
    each rank) gives at most `cells` of them, else one per block of consecutive ranks."""
    if ranks <= cells:
        return Grouping(np.arange(ranks), [str(rank) for rank in range(ranks)], "rank", "")
    if (
        isinstance(hosts, list)
        and len(hosts) == ranks
        and all(isinstance(host, str) for host in hosts)
        and 1 < len(set(hosts)) <= cells
    ):
        return _nodes(hosts)
    return _blocks(ranks, cells)


def grouped(matrix: Matrix, groups: Grouping) -> np.ndarray:
    """The matrix summed by groups of ranks: groups.size × groups.size values, whatever the
    number of ranks."""
    values = np.zeros((groups.size, groups.size), dtype=np.int64)
    np.add.at(
        values, (groups.of_rank[matrix.senders], groups.of_rank[matrix.receivers]), matrix.values
    )
    return values


def _plain_count(value: float) -> str:
    return f"{value:,.0f}"


def _group_axis(axis: Axis, groups: Grouping) -> None:
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    def text(value: float, _: object) -> str:
        row = int(round(value))
        return groups.labels[row] if 0 <= row < groups.size and row == value else ""

    axis.set_major_locator(MaxNLocator(nbins=MAP_TICKS, integer=True))
    axis.set_major_formatter(FuncFormatter(text))


def draw_map(axes: Axes, matrix: Matrix, groups: Optional[Grouping] = None) -> AxesImage:
    """One matrix, rank 0 at the top left, summed by groups (default: grouping(matrix.ranks));
    zero cells left blank, others on a log scale."""
    from matplotlib import colormaps
    from matplotlib.colors import LogNorm

    groups = groups or grouping(matrix.ranks)
    values = grouped(matrix, groups)
    positive = values[values > 0]
    low, high = (int(positive.min()), int(positive.max())) if positive.size else (1, 1)
    # A single value still needs a range for the scale: one around it, to draw it mid-scale.
    norm = LogNorm(low, high) if high > low else LogNorm(low / 2, low * 2)
    image = axes.imshow(
        np.ma.masked_equal(values, 0), cmap=colormaps[COLOURS], norm=norm, interpolation="nearest"
    )
    axes.set_xlim(-0.5, groups.size - 0.5)
    axes.set_ylim(groups.size - 0.5, -0.5)
    for axis in (axes.xaxis, axes.yaxis):
        _group_axis(axis, groups)
    axes.set_xlabel(f"receiving {groups.axis}")
    axes.set_ylabel(f"sending {groups.axis}")
    axes.tick_params(labelsize=SMALL_FONT)
    if groups.caption:
        axes.tick_params(axis="x", labelrotation=30)
    return image


def _scale(image: AxesImage) -> Tuple[float, float]:
    """The ends of a drawn map's colour scale. matplotlib types them loosely (None before
    drawing, a tuple for some norms); the maps' norm, set when drawn, holds two numbers."""
    return cast(float, image.norm.vmin), cast(float, image.norm.vmax)


def _colour_bar(
    figure: Figure,
    image: AxesImage,
    axes: Axes,
    ticks: Sequence[float],
    text: Callable[[float], str],
    title: str,
) -> None:
    from matplotlib.ticker import FuncFormatter

    bar = figure.colorbar(image, ax=axes, shrink=0.85, label=title)
    bar.set_ticks(list(ticks) or list(_scale(image)))
    bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: text(value)))
    # Log scales add unlabelled minor ticks at 2..9 × 10^k, which mean nothing here.
    bar.minorticks_off()
    bar.ax.tick_params(labelsize=SMALL_FONT)


def map_plot(traffic: Traffic, hosts: object = None) -> Plot:
    """The kind's message and byte matrices side by side; hosts: the run's host of each rank."""
    figure = new_figure((10.5, 4.6))
    panels = figure.subplots(1, 2)
    groups = grouping(traffic.ranks, hosts)
    for axes, matrix in zip(panels, (traffic.counts, traffic.bytes)):
        image = draw_map(axes, matrix, groups)
        low, high = _scale(image)
        if matrix.what == "bytes":
            _colour_bar(figure, image, axes, size_ticks(low, high), format_size, "bytes sent")
        else:
            _colour_bar(figure, image, axes, time_ticks(low, high), _plain_count, "messages sent")
        axes.set_title(f"{monitor.label(traffic.kind)}: {WHAT_NAMES[matrix.what]}", fontsize=10)
    return to_plot(
        figure,
        f"map-{traffic.kind}",
        f"{monitor.label(traffic.kind)}: messages (left) and bytes (right) each rank "
        "(row) sent to each rank (column), rank 0 at the top left, on logarithmic "
        f"colour scales; white: nothing sent.{groups.caption}",
    )


def rank_plot(summary: monitor.Summary) -> Plot:
    """What each rank sent and received: bytes, or messages when every message was empty."""
    from matplotlib.ticker import MaxNLocator

    figure = new_figure((6.4, 3.2))
    axes = figure.add_subplot()
    if summary.by_bytes:
        # In the unit of the largest bar, so that ticks fall on round numbers of it.
        unit, scale = next(
            (name, scale)
            for name, scale in BYTE_UNITS
            if max(summary.sent_bytes.max(), summary.received_bytes.max()) >= scale
        )
        sent, received = summary.sent_bytes / scale, summary.received_bytes / scale
    else:
        unit, sent, received = "messages", summary.sent_messages, summary.received_messages
    ranks = np.arange(summary.ranks)
    if summary.ranks <= MAX_BARS:
        axes.bar(ranks - 0.2, sent, width=0.4, label="sent")
        axes.bar(ranks + 0.2, received, width=0.4, label="received")
    else:
        axes.step(ranks, sent, where="mid", label="sent")
        axes.step(ranks, received, where="mid", label="received")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("rank")
    axes.set_ylabel(unit)
    axes.legend(fontsize=SMALL_FONT)
    name = monitor.label(summary.kind)
    what = "bytes" if summary.by_bytes else "messages"
    return to_plot(
        figure,
        f"ranks-{summary.kind}",
        f"{name}: {what} each rank sent and received (what it sent itself included).",
    )


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "n/a"


def pairs_table(summary: monitor.Summary) -> Markup:
    rows = [
        [
            index,
            pair.sender,
            pair.receiver,
            format_size(pair.bytes),
            pair.messages,
            _share(
                pair.bytes if summary.by_bytes else pair.messages,
                summary.bytes if summary.by_bytes else summary.messages,
            ),
            format_size(pair.bytes / pair.messages) if pair.messages else "n/a",
        ]
        for index, pair in enumerate(summary.top, start=1)
    ]
    share = "share of bytes" if summary.by_bytes else "share of messages"
    return table(["", "sender", "receiver", "bytes", "messages", share, "mean message size"], rows)


def _diagnosis(sentences: Sequence[str]) -> Markup:
    return element(
        "ul", join(element("li", s, "warn" if "warning:" in s else None) for s in sentences)
    )


def kind_parts(traffic: Traffic, hosts: object = None) -> List[Part]:
    """A kind with traffic: what its numbers are, the diagnosis, maps, ranks, busiest pairs."""
    summary = monitor.summarize(traffic)
    parts: List[Part] = [element("h3", monitor.heading(summary))]
    explained = monitor.backend_text(summary)
    if explained:
        parts.append(element("p", explained))
    parts += [
        _diagnosis(monitor.kind_sentences(summary)),
        map_plot(traffic, hosts),
        rank_plot(summary),
    ]
    if summary.top:
        parts += [
            element("h4", f"Busiest pairs (at most {monitor.TOP_PAIRS})"),
            pairs_table(summary),
        ]
    return parts


def render(run: Run) -> ReportSection:
    kinds = traffic_of(run)
    quiet = [monitor.label(kind) for kind, traffic in kinds.items() if not len(traffic.pairs)]
    parts: List[Part] = []
    if not kinds:
        parts.append(element("p", "This run holds no communication matrix."))
    for traffic in kinds.values():
        if len(traffic.pairs):
            parts += kind_parts(traffic, run.meta.get("hosts"))
    if quiet:
        parts.append(element("p", "No traffic counted: " + ", ".join(quiet) + "."))
    return ReportSection(TITLE, parts)
