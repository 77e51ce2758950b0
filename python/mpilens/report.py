"""Self-contained HTML reports: one for a set of runs, one comparing two sets side by side."""

from __future__ import annotations

import json
import shlex
from importlib import resources
from pathlib import Path
from typing import Callable, Dict, List, Sequence, Tuple, Union

from . import families
from .analysis.conditions import conditions
from .markup import Markup, details, element, esc, join, page, png_image, table
from .plots.common import diagnosis_list
from .report_summary import first_screen
from .results import Run, record_object
from .safe_names import file_name_part, printable
from .section import Part, Plot, ReportSection
from .text import ranges, short_library
from .units import format_time

Row = Tuple[str, str]


def _css() -> str:
    return resources.files("mpilens").joinpath("report.css").read_text(encoding="utf-8")


def _hosts_text(hosts: Sequence[str]) -> str:
    if not hosts:
        return "n/a"
    ranks: Dict[str, List[int]] = {}
    for rank, host in enumerate(hosts):
        ranks.setdefault(host, []).append(rank)
    return "; ".join(
        f"{host} (ranks {ranges(r)})" if len(r) > 1 else f"{host} (rank {r[0]})"
        for host, r in ranks.items()
    )


def _value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _pairs(mapping: object) -> str:
    if not isinstance(mapping, dict) or not mapping:
        return "none"
    return "; ".join(f"{key}={_value(value)}" for key, value in sorted(mapping.items()))


def completeness(run: Run) -> str:
    done, total = len(run.points), run.points_total
    return f"{done} of {total} points" + (" (interrupted)" if done < total else "")


def metadata_rows(run: Run) -> List[Row]:
    """The run's context as (label, text) rows, the same rows in every report and comparison."""
    meta = run.meta
    mpi, clock = record_object(meta, "mpi"), record_object(meta, "clock")
    command = meta.get("command")
    binding = meta.get("binding") or []

    def text(value: object) -> str:
        return "n/a" if value is None else _value(value)

    return [
        ("family", run.family),
        ("mpilens version", text(meta.get("mpilens_version"))),
        ("date", text(meta.get("date"))),
        ("command line", shlex.join(command) if isinstance(command, list) else text(command)),
        ("MPI library", text(mpi.get("library"))),
        ("MPI flavour", text(mpi.get("flavour"))),
        ("MPI standard", text(mpi.get("standard"))),
        ("thread level", text(mpi.get("thread_level"))),
        (
            "ranks",
            ", ".join(text(member.meta.get("ranks")) for member in run.members)
            if run.members
            else text(meta.get("ranks")),
        ),
        ("nodes", text(meta.get("nodes"))),
        ("hosts", _hosts_text(meta.get("hosts") or [])),
        ("binding (rank: CPUs)", "; ".join(f"{r}: {cpus}" for r, cpus in enumerate(binding))),
        ("CPUs online", text(meta.get("cpus_online"))),
        ("clock source", text(clock.get("source"))),
        (
            "clock resolution",
            f"{format_time(clock.get('resolution_ns'))} (reported "
            f"{format_time(clock.get('reported_resolution_ns'))})",
        ),
        ("clock read cost", format_time(clock.get("read_cost_ns"))),
        ("environment", _pairs(meta.get("env"))),
        ("options", _pairs(meta.get("options"))),
        ("completeness", completeness(run)),
    ]


def _metadata_table(run: Run) -> Markup:
    mpi = record_object(run.meta, "mpi")
    full = mpi.get("library_full")
    shown = isinstance(full, str) and full.strip() and full.strip() != mpi.get("library")
    library_details = (
        details("full MPI library version", element("pre", full)) if shown else Markup("")
    )
    return join([table(["", "value"], metadata_rows(run), css_class="meta"), library_details])


def grouped(runs: Sequence[Run]) -> List[Run]:
    """The runs as reports show them: the files of a family written as several files (coll: one
    per rank count; piggyback: one per layer configuration) read as one run (the family's
    combiner), in the place of the first of them; others as they are."""
    series: Dict[str, List[Run]] = {}
    combiners: Dict[str, Callable[[Sequence[Run]], Run]] = {}
    order: List[Union[Run, str]] = []
    for run in runs:
        family = families.FAMILIES.get(run.family)
        combiner = family.combiner if family is not None else None
        if combiner is None:
            order.append(run)
            continue
        if run.family not in series:
            order.append(run.family)
            combiners[run.family] = combiner
        series.setdefault(run.family, []).append(run)
    return [combiners[entry](series[entry]) if isinstance(entry, str) else entry for entry in order]


def _run_findings(run: Run) -> List[str]:
    family = families.FAMILIES.get(run.family)
    found = [] if run.complete else [f"warning: the run is incomplete: {completeness(run)}"]
    return found + conditions(run.meta) + (family.diagnose(run) if family else [])


def findings(runs: Sequence[Run]) -> List[str]:
    """Every run's diagnosis sentences; prefixed by the family when there are several runs."""
    runs = grouped(runs)
    if len(runs) == 1:
        return _run_findings(runs[0])
    return [f"{run.family}: {sentence}" for run in runs for sentence in _run_findings(run)]


def _notes(run: Run) -> Markup:
    if not run.notes:
        return Markup("")
    items = []
    for note in run.notes:
        level = str(note.get("level", "info"))
        about = f" (point {note['key']})" if note.get("key") else ""
        text = f"{level}: {note.get('text', '')}{about}"
        items.append(element("li", text, "warn" if level == "warning" else level))
    return join([element("h3", "Notes"), element("ul", join(items))])


def plot_anchor(name: str) -> str:
    """The id of a plot's figure in the page (its file name under plots/ without .png)."""
    return f"plot-{name}"


def _embed(parts: Sequence[Part], outdir: Path, plot_prefix: str) -> List[Markup]:
    """HTML for a family's parts; each plot is embedded and also saved under outdir/plots/."""
    blocks = []
    for part in parts:
        if isinstance(part, Plot):
            plot_dir = outdir / "plots"
            plot_dir.mkdir(parents=True, exist_ok=True)
            name = file_name_part(plot_prefix + part.name)
            (plot_dir / f"{name}.png").write_bytes(part.png)
            figure = join([png_image(part.png, part.caption), element("figcaption", part.caption)])
            blocks.append(Markup(f'<figure id="{esc(plot_anchor(name))}">{figure}</figure>'))
        else:
            blocks.append(part)
    return blocks


def _section(run: Run, outdir: Path, plot_prefix: str, heading_suffix: str = "") -> Markup:
    """The family's section for a run, its plots also saved under outdir/plots/."""
    family = families.FAMILIES.get(run.family)
    if family is None:
        section = ReportSection(
            run.family,
            [
                element(
                    "p",
                    f'This mpilens has no report section for the "{run.family}" family; '
                    "upgrade mpilens to see it.",
                )
            ],
        )
    else:
        section = family.render(run)
    return element(
        "section",
        join(
            [
                element("h2", section.title + heading_suffix),
                *_embed(section.parts, outdir, plot_prefix),
                _notes(run),
            ]
        ),
    )


def _subtitle(runs: Sequence[Run]) -> str:
    dates = sorted({str(run.meta.get("date", ""))[:10] for run in runs} - {""})
    libraries = sorted(
        {short_library(str(record_object(run.meta, "mpi").get("library", ""))) for run in runs}
        - {""}
    )
    return " · ".join([", ".join(dates) or "undated", ", ".join(libraries) or "unknown MPI"])


def _run_name(run: Run) -> str:
    """How a section names its run among others of its family: the file, and the progress setting
    it was measured under (overlap without and with a progress thread)."""
    label = run.progress_label
    return run.path.name + (f", progress: {label}" if label else "")


def _several(runs: Sequence[Run], run: Run) -> bool:
    return sum(other.family == run.family for other in runs) > 1


def _plot_prefix(run: Run) -> str:
    return f"{run.path.stem}-"


def _anchor(run: Run, plot: str) -> str:
    """The id of a plot of a run's section in its report."""
    return plot_anchor(file_name_part(_plot_prefix(run) + plot))


def write_report(runs: Sequence[Run], outdir: Path, proofs: Sequence[Markup] = ()) -> Path:
    """Write outdir/report.html (and outdir/plots/*.png) for runs; return the page's path.
    proofs: sections of `mpilens tune` (tune_report.tune_section), after the first screen."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    subtitle = _subtitle(runs)
    shown = grouped(runs)
    every = findings(runs)
    body = [
        element("h1", "mpilens report"),
        element("p", subtitle, "subtitle"),
        first_screen(shown, _anchor, completeness),
        details(
            f"Every finding, family by family ({len(every)})",
            diagnosis_list(every),
        ),
        *proofs,
    ]
    for run in shown:
        suffix = f" ({_run_name(run)})" if _several(shown, run) else ""
        body.append(_section(run, outdir, _plot_prefix(run), suffix))
    body.append(element("h2", "Runs"))
    body += [details(f"{run.path.name}: how it was run", _metadata_table(run)) for run in runs]
    path = outdir / "report.html"
    # File names and labels may hold bytes that are not UTF-8 (kept as lone surrogates).
    path.write_text(
        printable(page(f"mpilens report · {subtitle}", join(body), _css())), encoding="utf-8"
    )
    return path


def _first_of_each_family(runs: Sequence[Run]) -> Dict[str, Run]:
    chosen: Dict[str, Run] = {}
    for run in runs:
        chosen.setdefault(run.family, run)
    return chosen


def _metadata_comparison(run_a: Run, run_b: Run, labels: Tuple[str, str]) -> Markup:
    rows_a, rows_b = dict(metadata_rows(run_a)), dict(metadata_rows(run_b))
    rows = [[label, rows_a[label], rows_b[label]] for label in rows_a]
    classes = ["diff" if a != b else None for _, a, b in rows]
    return table(["", f"A: {labels[0]}", f"B: {labels[1]}"], rows, classes, css_class="meta")


def write_comparison(
    runs_a: Sequence[Run],
    runs_b: Sequence[Run],
    outdir: Path,
    labels: Tuple[str, str] = ("A", "B"),
    filename: str = "compare.html",
) -> Path:
    """Write outdir/<filename>: metadata and family sections of A and B side by side."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    by_family_a = _first_of_each_family(grouped(runs_a))
    by_family_b = _first_of_each_family(grouped(runs_b))
    common = [name for name in by_family_a if name in by_family_b]
    stem = Path(filename).stem
    body: List[Markup] = [
        element("h1", f"mpilens comparison: {labels[0]} vs {labels[1]}"),
        element(
            "p", f"A = {labels[0]}, B = {labels[1]} · {_subtitle([*runs_a, *runs_b])}", "subtitle"
        ),
    ]
    only = [f"only in A: {name}" for name in by_family_a if name not in by_family_b] + [
        f"only in B: {name}" for name in by_family_b if name not in by_family_a
    ]
    differences: List[str] = []
    for name in common:
        family = families.FAMILIES.get(name)
        if family:
            differences += [
                f"{name}: {s}" for s in family.compare(by_family_a[name], by_family_b[name])
            ]
    body += [element("h2", "Differences"), diagnosis_list(differences + only)]
    for name in common:
        run_a, run_b = by_family_a[name], by_family_b[name]
        family = families.FAMILIES.get(name)
        both = (
            family.compare_parts(run_a, run_b, labels)
            if family is not None and family.compare_parts is not None
            else []
        )
        body += [
            element("h2", f"{name}: runs"),
            _metadata_comparison(run_a, run_b, labels),
            *_embed(both, outdir, f"{stem}-{name}-"),
            element(
                "div",
                join(
                    [
                        element(
                            "div",
                            _section(run_a, outdir, f"{stem}-a-{name}-", f" (A: {labels[0]})"),
                        ),
                        element(
                            "div",
                            _section(run_b, outdir, f"{stem}-b-{name}-", f" (B: {labels[1]})"),
                        ),
                    ]
                ),
                "pair",
            ),
        ]
    path = outdir / filename
    title = f"mpilens comparison: {labels[0]} vs {labels[1]}"
    path.write_text(printable(page(title, join(body), _css())), encoding="utf-8")
    return path
