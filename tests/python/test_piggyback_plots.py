"""The piggyback report section and comparison parts, drawn from a synthetic study: which
figures exist, what each draws (by artist id, not by pixels), the tables, the whole report."""

from __future__ import annotations

import pytest

from mpilens import report
from mpilens.analysis import piggyback as pb
from mpilens.plots import piggyback as plots
from conftest import report_page
from test_coll_plots import assert_drawn, by_gid, drawn_section_text, plots_of, text_of
from test_piggyback_analysis import SIZES, apps_run, pb_run, study, sweep_points


@pytest.fixture(scope="module")
def whole():
    return study(methods=("pack-before", "datatype-before", "separate", "auto"))


@pytest.fixture(scope="module")
def section(whole):
    return plots.render(whole)


def test_section_holds_the_three_figures_of_the_seed_and_the_ratios(section):
    text = drawn_section_text(section, "Piggyback cost", ["sizes", "ratios", "pb-sizes", "apps"])
    assert "<h3>Diagnosis</h3>" in text and "auto threshold: datatype-before" in text
    assert "<td>datatype-before</td><td>a struct datatype joining" in text
    # the applications' table: the baseline first, a checksum column
    assert ("<tr><td>cg</td><td>wildcard</td><td>none</td><td>-</td><td>2 s</td><td>-</td>"
            "<td>0x1.8p+3</td><td></td></tr>") in text
    assert ("<tr><td>cg</td><td>wildcard</td><td>separate</td><td>4 KiB</td><td>2.9 s</td>"
            "<td>1.450</td><td>0x1.8p+3</td><td>yes</td></tr>") in text


def test_sizes_figure_one_curve_per_method_and_kind_of_receive(whole):
    figure = plots.sizes_figure(pb.measurements(whole))
    panels = figure.axes
    assert [axes.get_title() for axes in panels] == [
        "latency (one way), specific receives", "latency (one way), wildcard receives",
        "bandwidth, specific receives", "bandwidth, wildcard receives"]
    for axes in panels:
        assert axes.get_xscale() == "log" and axes.get_yscale() == "log"
        for method in ("none", "pack-before", "datatype-before", "separate", "auto"):
            (line,) = by_gid(axes.lines, method)
            assert list(line.get_xdata()) == SIZES
    (none,) = by_gid(panels[0].lines, "none")
    assert none.get_ydata()[0] == pytest.approx(1000.25)


def test_ratios_figure_draws_auto_goal(whole):
    figure = plots.ratios_figure(pb.measurements(whole))
    latency, _, bandwidth, _ = figure.axes
    (separate,) = by_gid(latency.lines, "separate")
    assert separate.get_ydata()[0] == pytest.approx(1800.25 / 1000.25)
    assert len(by_gid(latency.patches, "goal")) == 1
    assert len(by_gid(bandwidth.collections, "goal")) == 1
    assert not by_gid(latency.lines, "none")


def test_pb_figure_against_pb_size_with_the_baseline(whole):
    figure = plots.pb_figure(pb.measurements(whole))
    latency, bandwidth = figure.axes
    (line,) = by_gid(latency.lines, "separate")
    assert list(line.get_xdata()) == [4, 64, 4096]
    assert line.get_ydata()[-1] - line.get_ydata()[0] == pytest.approx(4092)
    (base,) = by_gid(bandwidth.lines, "none")
    assert base.get_ydata()[0] == pytest.approx(512 * 1024 / (1000 + 0.25 * 512 * 1024) * 1e9)


def test_apps_figure_bars_per_method(whole):
    figure = plots.apps_figure(whole)
    (axes,) = figure.axes
    bars = by_gid(axes.patches, "separate")
    assert [patch.get_height() for patch in bars] == pytest.approx(
        [1.02, 1.04, 1.07, 1.09, 1.20, 1.40, 1.25, 1.45])
    assert [label.get_text() for label in axes.get_xticklabels()][:3] == [
        "sweep\n4 B pb", "sweep\n4 KiB pb", "sweep WC\n4 B pb"]


def test_no_figures_without_their_data():
    points_only = pb.combine([pb_run("none", sweep_points("none")),
                              pb_run("separate", sweep_points("separate"))])
    names = [plot.name for plot in plots_of(plots.render(points_only).parts)]
    assert names == ["sizes", "ratios"]
    apps_only = pb.combine([apps_run(("separate",))])
    assert [plot.name for plot in plots_of(plots.render(apps_only).parts)] == ["apps"]


def test_report_and_comparison_pages(whole, tmp_path):
    page, written = report_page(whole.members, tmp_path / "out", "Piggyback cost")
    assert "<summary>piggyback-separate-pb4096-latency.jsonl: how it was run</summary>" in page
    assert written == ["piggyback-apps.png", "piggyback-pb-sizes.png", "piggyback-ratios.png",
                       "piggyback-sizes.png"]
    other = study(methods=("separate",), apps=False)
    page = report.write_comparison(whole.members, other.members, tmp_path / "cmp",
                                   ("laptop", "cluster")).read_text(encoding="utf-8")
    assert ("<li>piggyback: separate (4 B pb, specific receives, against no layer): latency at "
            "1 B +80% in A, +80% in B; bandwidth at 4 MiB -0.1% in A, -0.1% in B</li>") in page
    assert "<th>latency at 1 B, A: laptop</th>" in page
    parts = plots.compare_parts(whole, other, ("laptop", "cluster"))
    (plot,) = plots_of(parts)
    assert_drawn(plot.png)


# --- invalid points --------------------------------------------------------------------------------

def legend_texts(figure) -> list:
    return [text.get_text() for axes in figure.axes if axes.get_legend()
            for text in axes.get_legend().get_texts()]


def test_invalid_point_drawn_grey_with_its_reason_and_listed():
    from test_piggyback_analysis import floor_run

    run = floor_run(700.0, 0.01)  # pack-before 30% faster than no layer at 1 KiB, beyond noise
    invalid = pb.below_floor_figures(run)
    assert invalid == [(pb.Config("latency", "specific", "pack-before", 4), 1024, 700.0)]
    figure = plots.sizes_figure(pb.measurements(run), invalid)
    (axes,) = figure.axes
    (mark,) = by_gid(axes.lines, "invalid")
    assert list(mark.get_xdata()) == [1024] and list(mark.get_ydata()) == [700.0]
    assert mark.get_markerfacecolor() == "none"
    assert legend_texts(figure) == ["no layer", f"invalid: {plots.INVALID_REASON}"]
    section = plots.render(run)
    text = drawn_section_text(section, "Piggyback cost", ["sizes"])
    assert "<h3>Invalid points</h3>" in text
    assert ("<tr><td>latency</td><td>specific</td><td>pack-before</td><td>4 B</td>"
            f"<td>1 KiB</td><td>700 ns</td><td>{plots.INVALID_REASON}</td></tr>") in text


def test_comparison_draws_either_study_s_invalid_points():
    from test_piggyback_analysis import pb_point, pb_run

    def study(pack_before_at_4k: float):
        """The library alone at 1 µs and 2 µs at 1 and 4 KiB; pack-before 1.2 µs at 1 KiB and
        pack_before_at_4k at 4 KiB (±1%)."""
        base = pb_run("none", [pb_point("latency", "specific", 1024, 1000.0),
                               pb_point("latency", "specific", 4096, 2000.0)])
        layer = pb_run("pack-before", [
            pb_point("latency", "specific", 1024, 1200.0, "pack-before", 4, spread=0.01),
            pb_point("latency", "specific", 4096, pack_before_at_4k, "pack-before", 4,
                     spread=0.01)])
        return pb.combine([base, layer])

    figure = plots.compare_figure(study(1400.0), study(2400.0), ("broken", "sound"))
    (axes,) = figure.axes
    (mark,) = by_gid(axes.lines, "invalid")
    assert list(mark.get_xdata()) == [4096] and list(mark.get_ydata()) == [pytest.approx(0.7)]
    (a,) = by_gid(axes.lines, "A:pack-before")
    assert list(a.get_xdata()) == [1024]
    (b,) = by_gid(axes.lines, "B:pack-before")
    assert list(b.get_xdata()) == [1024, 4096]
    assert f"invalid: {plots.INVALID_REASON}" in legend_texts(figure)


def test_valid_run_has_no_invalid_mark_legend_nor_table(whole, section):
    invalid = pb.below_floor_figures(whole)
    assert invalid == []
    for draw in (plots.sizes_figure, plots.ratios_figure, plots.pb_figure):
        figure = draw(pb.measurements(whole), invalid)
        assert not any(by_gid(axes.lines, "invalid") for axes in figure.axes)
        assert not any(text.startswith("invalid:") for text in legend_texts(figure))
    assert "Invalid points" not in text_of(section.parts)
