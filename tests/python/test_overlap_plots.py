"""The overlap heat maps, mosaics, report section and comparison figure."""

from __future__ import annotations

import base64
import html
import io
import re

import pytest
from conftest import (
    OVERLAP_FIXTURE,
    SANITY_FIXTURE,
    make_overlap_run,
    map_point,
    overlap_point,
    read_records,
    write_records,
)

from mpilens import report, results
from mpilens.analysis import overlap
from mpilens.markup import Markup
from mpilens.plots import invalid as inv
from mpilens.plots import overlap as plots
from mpilens.plots.common import to_plot
from mpilens.section import Plot

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def fixture_run() -> results.Run:
    return results.load(OVERLAP_FIXTURE)


@pytest.fixture(scope="module")
def section(fixture_run):
    """The fixture's whole section, drawn once: every plot of the family is in it."""
    return plots.render(fixture_run)


def small_fixture(path, **meta_changes):
    """The fixture cut to two maps and the references: report tests need not draw them all."""
    records = [r for r in read_records(OVERLAP_FIXTURE)
               if r["type"] != "point" or r["bench"] in ("sender", "nload")
               or r["bench"].startswith("ref-")]
    records[0].update(meta_changes, points_total=sum(r["type"] == "point" for r in records))
    return results.load(write_records(path, records))


def assert_drawn(png: bytes) -> None:
    """A PNG with something on it: several colours, not one flat fill."""
    from matplotlib.image import imread

    assert png.startswith(PNG_SIGNATURE)
    pixels = imread(io.BytesIO(png))[..., :3].reshape(-1, 3)
    assert pixels.std() > 0.05
    assert len({tuple(p) for p in pixels[:: max(1, len(pixels) // 20000)]}) > 20


def mesh_of(axes):
    from matplotlib.collections import QuadMesh

    (mesh,) = [c for c in axes.collections if isinstance(c, QuadMesh)]
    return mesh


def test_edges_are_midpoints():
    assert plots.geometric_edges([1, 4, 16]) == pytest.approx([0.5, 2, 8, 32])
    assert plots.geometric_edges([8]) == pytest.approx([8 / 2 ** 0.5, 8 * 2 ** 0.5])
    assert plots.linear_edges([0, 1, 2, 4]) == pytest.approx([-0.5, 0.5, 1.5, 3, 5])
    assert plots.linear_edges([3]) == [2.5, 3.5]


def test_ticks():
    assert plots.size_ticks(1, 16 << 20) == [1, 32, 1024, 32 << 10, 1 << 20]
    assert plots.size_ticks(700, 3000) == [1024, 2048]
    assert plots.time_ticks(700, 12_000) == [1000, 2000, 5000, 10_000]
    assert plots.time_ticks(700, 12_000_000) == [1e3, 1e4, 1e5, 1e6, 1e7]


def test_map_is_one_cell_per_point_cropped_to_0_2():
    sizes, computes = [64, 4096, 1 << 20], [1000, 8000, 64000, 512000]
    ratios = iter([-0.4, 0.0, 0.5, 1.0, 1.5, 2.0, 7.0, 0.3, 0.2, 0.1, 0.9, None])
    points = [map_point("sender", s, c, 0, 1000 + s / 10) for s in sizes for c in computes]
    for p in points:
        p["stats"]["ratio"] = next(ratios)
    del points[4]  # (4096, 1000) not measured
    figure = plots.map_figure(overlap.grid(make_overlap_run(points), "sender"))
    axes = figure.axes[0]
    mesh = mesh_of(axes)
    data = mesh.get_array()
    assert data.shape == (len(computes), len(sizes))  # as measured: no interpolation
    assert data.min() == 0 and data.max() == 2
    assert mesh.norm.vmin == 0 and mesh.norm.vmax == 2
    assert data.mask.sum() == 2   # the missing point and the undefined ratio
    assert data.mask[0][1] and data.mask[3][2]
    assert axes.get_xscale() == "log" and axes.get_yscale() == "log"
    assert [t.get_text() for t in axes.get_xticklabels()] == ["32 B", "1 KiB", "32 KiB", "1 MiB"]
    assert "10 µs" in [t.get_text() for t in axes.get_yticklabels()]
    (line,) = axes.get_lines()
    assert list(line.get_xdata()) == sizes
    assert list(line.get_ydata()) == pytest.approx([1000 + s / 10 for s in sizes])
    assert line.get_color() == "white"
    colours = mesh.cmap([0.0, 0.5, 1.0])
    assert colours[0][:3] == pytest.approx((0, 0, 0))            # 0: black
    assert colours[1][0] > 0.7 and colours[1][1] < 0.2           # 1: red
    assert colours[2][0] > 0.9 and colours[2][1] > 0.9           # 2: yellow


def test_nload_uses_threads_and_a_log_scale(fixture_run):
    from matplotlib.colors import LogNorm

    figure = plots.map_figure(overlap.grid(fixture_run, "nload"))
    axes = figure.axes[0]
    mesh = mesh_of(axes)
    assert isinstance(mesh.norm, LogNorm)
    assert (mesh.norm.vmin, mesh.norm.vmax) == (1, 1000)
    assert axes.get_yscale() == "linear" and axes.get_ylabel() == "computing threads"
    assert all(tick == int(tick) for tick in axes.get_yticks())
    assert not axes.get_lines()   # no T_comm line on a thread axis
    assert len(figure.axes) == 2  # the map and its own colour bar


def test_collective_colour_is_the_worst_rank_ratio(fixture_run):
    figure = plots.map_figure(overlap.grid(fixture_run, "ibcast"))
    assert figure.axes[1].get_ylabel() == ("worst rank's overhead ratio\n"
                                           "(hatched: not determined to ±0.2)")
    assert plots.colour_label("ibcast") == "worst rank's overhead ratio"


def undetermined_marks(axes) -> list:
    return [c for c in axes.collections if c.get_gid() == plots.UNDETERMINED_GID]


def test_undetermined_cells_are_faded_and_hatched():
    sizes, computes = [64, 4096, 1 << 20], [1000, 8000, 64000]
    # the top-left cells are noise: 64 B under 8 µs and 64 µs, 4 KiB under 64 µs
    noisy = {(64, 8000), (64, 64000), (4096, 64000)}
    points = [map_point("sender", s, c, 0.5, 1000 + s / 10, width=1.0 if (s, c) in noisy else 0)
              for s in sizes for c in computes]
    figure = plots.map_figure(overlap.grid(make_overlap_run(points), "sender"))
    axes = figure.axes[0]
    (marks,) = undetermined_marks(axes)
    assert marks.get_hatch() == plots.HATCH
    assert len(marks.get_paths()) == len(noisy)
    # each mark is its cell: lower-left corners on the map's edges
    x_edges = plots.geometric_edges(sizes)
    y_edges = plots.geometric_edges(computes)
    corners = sorted((round(x, 3), round(y, 3))
                     for x, y in (path.vertices.min(axis=0) for path in marks.get_paths()))
    assert corners == sorted((round(x_edges[j], 3), round(y_edges[i], 3))
                             for j, i in [(0, 1), (0, 2), (1, 2)])
    # faded, not hidden: the cell keeps its colour under a half-transparent white
    assert tuple(marks.get_facecolor()[0]) == pytest.approx(plots.FADE)
    assert mesh_of(axes).get_array().count() == len(points)
    assert figure.axes[1].get_ylabel() == "overhead ratio\n(hatched: not determined to ±0.2)"
    assert_drawn(to_plot(figure, "map", "").png)


def test_determined_map_has_no_hatch():
    points = [map_point("sender", s, 8000, 0.5, 1000.0, width=0.4) for s in (64, 4096)]
    figure = plots.map_figure(overlap.grid(make_overlap_run(points), "sender"))
    assert not undetermined_marks(figure.axes[0])
    assert figure.axes[1].get_ylabel() == "overhead ratio"


def test_fixture_maps_mark_their_undetermined_points(fixture_run):
    for bench in ("sender", "ibcast"):
        g = overlap.grid(fixture_run, bench)
        axes = plots.map_figure(g).axes[0]
        (marks,) = undetermined_marks(axes)
        assert len(marks.get_paths()) == len(g.undetermined) > 0


def test_mosaic_has_one_panel_per_benchmark(fixture_run):
    figure = plots.mosaic_figure([("", fixture_run)])
    titles = [axes.get_title() for axes in figure.axes if axes.get_title()]
    assert titles == overlap.benches_present(fixture_run)
    bars = [axes for axes in figure.axes if not axes.get_title()]
    assert sorted(axes.get_ylabel() for axes in bars) == [
        "overhead ratio\n(hatched: not determined to ±0.2)", "slowdown T / T_comm"]
    marked = sum(len(marks.get_paths()) for axes in figure.axes
                 for marks in undetermined_marks(axes))
    assert marked == sum(len(overlap.grid(fixture_run, bench).undetermined)
                         for bench in overlap.ratio_maps(fixture_run))


def test_mosaic_follows_the_seed_order():
    benches = ["ialltoall", "late", "sender", "nload"]
    points = [overlap_point(b, 64, 2 if b == "nload" else 1000, {"ratio": 0.5, "slowdown": 2.0})
              for b in benches]
    figure = plots.mosaic_figure([("", make_overlap_run(points))])
    assert [a.get_title() for a in figure.axes if a.get_title()] == [
        "sender", "nload", "late", "ialltoall"]


def test_mosaic_wraps_at_the_page_width():
    """Twelve maps in one row made a figure of 3000 px shrunk to the page; four per row keep it
    at the report's width, and A and B stay paired in every group of a comparison."""
    points = [overlap_point(b, 64, 2 if b == "nload" else 1000, {"ratio": 0.5, "slowdown": 2.0})
              for b in overlap.BENCHES]
    run = make_overlap_run(points)
    figure = plots.mosaic_figure([("A: x", run), ("B: y", run)])
    width, height = figure.get_size_inches() * figure.dpi
    assert width <= 1100 < 3 * height
    titles = [a.get_title() for a in figure.axes if a.get_title()]
    assert titles == list(overlap.BENCHES)
    rows = sorted({round(a.get_position().y0, 3) for a in figure.axes if a.get_title()})
    assert len(rows) == -(-len(overlap.BENCHES) // plots.MOSAIC_COLUMNS)
    labels = [a.get_ylabel() for a in figure.axes if a.get_ylabel().startswith(("A:", "B:"))]
    assert len(labels) == 2 * len(rows)


def test_comparison_mosaic_has_a_row_per_run(fixture_run):
    other = make_overlap_run([p for p in fixture_run.points if p["bench"] != "nload"])
    figure = plots.mosaic_figure([("A: laptop", fixture_run), ("B: cluster", other)])
    bars = {"overhead ratio\n(hatched: not determined to ±0.2)", "slowdown T / T_comm"}
    panels = [axes for axes in figure.axes if axes.get_ylabel() not in bars]
    assert len(panels) == 2 * len(overlap.benches_present(fixture_run))
    labels = [axes.get_ylabel() for axes in figure.axes]
    assert "A: laptop\ncomputation time" in labels and "B: cluster\ncomputation time" in labels
    texts = [t.get_text() for axes in figure.axes for t in axes.texts]
    assert texts == ["not measured"]   # B has no nload


def test_run_labels_are_not_formulas():
    run = make_overlap_run([map_point("sender", 64, 1000, 0.1, 900.0)])
    figure = plots.mosaic_figure([("A: $\\frac{$", run), ("B: $$", run)])
    assert_drawn(to_plot(figure, "mosaic", "").png)


def test_section(section, fixture_run):
    assert section.title == "Overlap of communication and computation"
    plot_parts = [part for part in section.parts if isinstance(part, Plot)]
    assert [p.name for p in plot_parts] == ["mosaic"] + [
        f"map-{bench}" for bench in overlap.benches_present(fixture_run)]
    for part in plot_parts:
        assert_drawn(part.png)
        assert part.caption
    assert plot_parts[1].caption.startswith("sender-side (sender): rank 0 posts MPI_Isend")
    text = "".join(part for part in section.parts if isinstance(part, Markup))
    for sentence in overlap.diagnose(fixture_run):
        assert html.escape(sentence) in text
    assert '<li class="skip">skipped: ' in text
    assert "<th>one-way time (ping-pong)</th><th>blocking MPI_Send</th>" in text
    assert "<th>median OSU overlap</th>" in text
    assert "<th>points</th><th>invalid</th><th>determined to ±0.2</th>" in text
    assert "faded and hatched: ratio not determined to ±0.2" in plot_parts[0].caption


def test_section_of_a_run_without_points():
    section = plots.render(make_overlap_run([]))
    assert section.parts == ["<p>This file holds no overlap measurement.</p>"]


def test_section_escapes_note_text():
    points = [map_point("sender", 64, 1000, 0.1, 900.0)]
    note = {"type": "note", "level": "skip", "text": 'late <b>"skipped"</b>', "date": ""}
    section = plots.render(make_overlap_run(points, notes=[note]))
    text = "".join(part for part in section.parts if isinstance(part, Markup))
    assert "skipped: late &lt;b&gt;&quot;skipped&quot;&lt;/b&gt;" in text and "<b>" not in text


def _images(page: str) -> list:
    return [base64.b64decode(data)
            for data in re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)]


def test_report_with_overlap_and_sanity(tmp_path):
    runs = [results.load(SANITY_FIXTURE), small_fixture(tmp_path / "res" / "overlap.jsonl")]
    page = report.write_report(runs, tmp_path).read_text(encoding="utf-8")
    assert "<h2>Overlap of communication and computation</h2>" in page
    assert "<h2>Measurement sanity</h2>" in page
    assert any(s.startswith("overlap: eager/rendezvous threshold ") for s in report.findings(runs))
    plotted = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert "overlap-mosaic.png" in plotted and "overlap-map-nload.png" in plotted
    assert len(_images(page)) == len(plotted)


def test_comparison_page_shows_both_runs_in_one_figure(tmp_path):
    run_a = small_fixture(tmp_path / "a" / "overlap.jsonl")
    mpich = {"library": "MPICH Version: 4.0.2", "flavour": "mpich"}
    run_b = small_fixture(tmp_path / "b" / "overlap.jsonl", mpi=mpich)
    path = report.write_comparison([run_a], [run_b], tmp_path / "out", ("laptop", "<cluster>"))
    page = path.read_text(encoding="utf-8")
    assert "<h3>Overlap maps, A above B</h3>" in page
    assert "Top row: A (laptop); bottom row: B (&lt;cluster&gt;)." in page
    assert "<li>overlap: where the sender-side map switches with size: Open MPI " in page
    mosaic = tmp_path / "out" / "plots" / "compare-overlap-mosaic.png"
    assert_drawn(mosaic.read_bytes())
    assert mosaic.read_bytes() in _images(page)
    # one page-wide figure, then each run's own section
    assert page.index("Overlap maps, A above B") < page.index(
        "<h2>Overlap of communication and computation (A: laptop)</h2>")


def invalid_marks(axes) -> list:
    return [c for c in axes.collections if c.get_gid() == inv.GID]


def legend_texts(figure) -> list:
    return [text.get_text() for legend in figure.legends for text in legend.get_texts()]


def broken_map() -> list:
    """A sender map whose cells at 64 B are impossible: T_measured below T_comp (ratio -2)."""
    return [map_point("sender", s, c, -2.0 if s == 64 else 0.5, 1000 + s / 10)
            for s in [64, 4096, 1 << 20] for c in [1000, 8000, 64000]]


def test_invalid_cells_are_grey_cross_hatched_and_named_in_a_legend():
    points = broken_map()
    figure = plots.map_figure(overlap.grid(make_overlap_run(points), "sender"))
    axes = figure.axes[0]
    (marks,) = invalid_marks(axes)
    assert marks.get_hatch() == inv.HATCH
    assert len(marks.get_paths()) == 3
    # no colour of the scale for an impossible ratio: those cells are masked in the mesh
    assert mesh_of(axes).get_array().count() == len(points) - 3
    assert legend_texts(figure) == [f"invalid: {overlap.INVALID_OSU}"]
    assert_drawn(to_plot(figure, "map", "").png)


def test_valid_map_has_no_invalid_mark_nor_legend():
    points = [map_point("sender", s, 8000, 0.5, 1000.0) for s in (64, 4096)]
    figure = plots.map_figure(overlap.grid(make_overlap_run(points), "sender"))
    assert not invalid_marks(figure.axes[0]) and not figure.legends


def test_mosaic_and_section_name_the_invalid_reasons():
    run = make_overlap_run(broken_map())
    figure = plots.mosaic_figure([("", run)])
    assert sum(len(m.get_paths()) for axes in figure.axes for m in invalid_marks(axes)) == 3
    assert f"invalid: {overlap.INVALID_OSU}" in legend_texts(figure)
    section = plots.render(run)
    text = "".join(part for part in section.parts if isinstance(part, Markup))
    assert "<h3>Invalid points</h3>" in text
    assert f"<td>sender</td><td>{html.escape(overlap.INVALID_OSU)}</td>" in text
    assert "warning: sender-side: 3 of its 9 points are invalid" in text
