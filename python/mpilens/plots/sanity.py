"""The "Measurement sanity" report section: clock, compute accuracy, offsets, handshake, start."""

from __future__ import annotations

from typing import Dict, List, Optional

from ..analysis import sanity
from ..markup import element, table
from ..results import Run
from ..section import Part, Plot, ReportSection
from ..units import format_time
from .common import headed_table, new_figure, rank_ticks, to_plot

TITLE = "Measurement sanity"


def compute_plot(curves: Dict[str, List[sanity.ComputePoint]]) -> Plot:
    figure = new_figure()
    axes = figure.add_subplot()
    axes.axhspan(
        1 - sanity.ACCURACY,
        1 + sanity.ACCURACY,
        color="0.92",
        zorder=0,
        label=f"±{sanity.ACCURACY:.0%}",
    )
    axes.axhline(1, color="0.4", linewidth=0.8)
    for kernel, curve in curves.items():
        ratios = [
            (p.target_ns, p.achieved_ns / p.target_ns) for p in curve if p.achieved_ns is not None
        ]
        (line,) = axes.plot(*zip(*ratios), marker="o", label=sanity.kernel_name(kernel))
        band = [
            (p.target_ns, p.q1_ns / p.target_ns, p.q3_ns / p.target_ns)
            for p in curve
            if p.q1_ns is not None and p.q3_ns is not None
        ]
        if band:
            targets, q1, q3 = zip(*band)
            axes.fill_between(targets, q1, q3, color=line.get_color(), alpha=0.25, linewidth=0)
    axes.set_xscale("log")
    axes.set_xlabel("requested computation time (ns)")
    axes.set_ylabel("achieved / requested")
    axes.legend()
    return to_plot(
        figure,
        "compute",
        "Compute accuracy: median achieved time over requested "
        "time on rank 0, with the q1–q3 band of the sample; 1 is exact.",
    )


def offset_plot(rows: List[sanity.Offset]) -> Plot:
    figure = new_figure()
    axes = figure.add_subplot()
    axes.axhline(0, color="0.4", linewidth=0.8)
    for phase, shift in (("start", -0.08), ("end", 0.08)):
        phase_rows = [row for row in rows if row.phase == phase]
        if phase_rows:
            axes.errorbar(
                [row.rank + shift for row in phase_rows],
                [row.offset_ns for row in phase_rows],
                yerr=[row.bound_ns for row in phase_rows],
                fmt="o",
                capsize=4,
                label=sanity.PHASE_NAMES[phase],
            )
    rank_ticks(axes, sorted({row.rank for row in rows}))
    axes.set_xlabel("rank")
    axes.set_ylabel("clock offset to rank 0 (ns)")
    axes.legend()
    return to_plot(
        figure,
        "offsets",
        "Clock offset of each rank to rank 0, with the error "
        "bound of each estimate (half the round trip plus the clock resolution).",
    )


def _clock_part(run: Run) -> List[Part]:
    rows = sanity.clock_rows(run)
    if not rows:
        return []
    hosts = run.meta.get("hosts") or []

    def host(rank: object) -> str:
        return hosts[rank] if isinstance(rank, int) and 0 <= rank < len(hosts) else ""

    source = run.meta.get("clock", {}).get("source", "")
    return [
        element("h3", f"Clock {source}".strip()),
        table(
            ["rank", "host", "resolution", "reported resolution", "read cost"],
            [
                [
                    row["rank"],
                    host(row["rank"]),
                    format_time(row.get("resolution_ns")),
                    format_time(row.get("reported_resolution_ns")),
                    format_time(row.get("read_cost_ns")),
                ]
                for row in rows
            ],
        ),
    ]


def _error(rel_error: Optional[float]) -> str:
    return "n/a" if rel_error is None else f"{rel_error * 100:+.1f}%"


def _compute_part(run: Run) -> List[Part]:
    curves = sanity.compute_curves(run)
    if not curves:
        return []
    rows, classes = [], []
    for kernel, curve in curves.items():
        for p in curve:
            # Relative to the target: at 10 µs, "10.1 µs – 10.1 µs" would hide the spread.
            band = (
                "n/a"
                if p.q1_ns is None or p.q3_ns is None
                else f"{_error(p.q1_ns / p.target_ns - 1)} – {_error(p.q3_ns / p.target_ns - 1)}"
            )
            rows.append(
                [
                    kernel,
                    format_time(p.target_ns),
                    format_time(p.achieved_ns),
                    _error(p.rel_error),
                    band,
                    "" if p.units is None else p.units,
                ]
            )
            classes.append(None if sanity.is_accurate(p) else "warn")
    return [
        element("h3", "Compute accuracy"),
        compute_plot(curves),
        table(
            ["kernel", "requested", "achieved (median)", "error", "error q1 – q3", "work units"],
            rows,
            classes,
        ),
    ]


def _offset_part(run: Run) -> List[Part]:
    rows = sanity.offsets(run)
    if not rows:
        return []
    drift = sanity.drifts(rows)
    cells = [
        [
            row.rank,
            sanity.PHASE_NAMES.get(row.phase, row.phase),
            format_time(row.offset_ns),
            f"±{format_time(row.bound_ns)}",
            format_time(row.rtt_ns),
            "" if row.rounds is None else row.rounds,
            "yes" if row.within_bound else "no",
            format_time(drift[row.rank]) if row.phase == "end" and row.rank in drift else "",
        ]
        for row in rows
    ]
    classes = [None if row.within_bound else "warn" for row in rows]
    return [
        element("h3", "Clock offsets"),
        offset_plot(rows),
        table(
            [
                "rank",
                "phase",
                "offset",
                "error bound",
                "round trip",
                "rounds",
                "within bound",
                "drift",
            ],
            cells,
            classes,
        ),
    ]


def _sample_cells(point: dict) -> List[object]:
    sample = point["stats"].get("sample") or {}
    return [
        format_time(sample.get("q1")),
        format_time(sample.get("q3")),
        sample.get("n", ""),
        sample.get("stop", ""),
    ]


def _handshake_part(run: Run) -> List[Part]:
    return headed_table(
        "Ready-first handshake",
        [
            "pair (leader-follower)",
            "round trip (median)",
            "q1",
            "q3",
            "repetitions",
            "stopped by",
        ],
        [
            [sanity.pair_name(p), format_time(p["stats"].get("round_trip_ns"))] + _sample_cells(p)
            for p in sanity.handshakes(run)
        ],
    )


def _start_part(run: Run) -> List[Part]:
    rows, classes = [], []
    for p in sanity.starts(run):
        late = p["stats"].get("late_fraction")
        rows.append(
            [
                format_time(p["params"].get("lead_ns")),
                format_time(p["stats"].get("max_lateness_ns")),
                "n/a" if late is None else f"{late:.0%}",
            ]
            + _sample_cells(p)
        )
        classes.append("warn" if late is not None and late > sanity.LATE_FRACTION_LIMIT else None)
    return headed_table(
        "Synchronized start",
        [
            "lead",
            "worst lateness (median)",
            "late starts",
            "q1",
            "q3",
            "repetitions",
            "stopped by",
        ],
        rows,
        classes,
    )


def render(run: Run) -> ReportSection:
    return ReportSection(
        TITLE,
        _clock_part(run)
        + _compute_part(run)
        + _offset_part(run)
        + _handshake_part(run)
        + _start_part(run),
    )
