"""The progress report section and comparison parts, drawn from a synthetic study: which figures
exist, what each draws (by artist id, not by pixels), the captions, the tables."""

from __future__ import annotations

import html

import pytest

from mpilens import families
from mpilens.analysis import progress as pg
from mpilens.plots import progress as plots
from conftest import report_page
from test_coll_plots import assert_drawn, by_gid, drawn_section_text, plots_of, text_of
from test_progress_analysis import (ASYNC, INTERVALS, KIB, MIB, POLL, SIZES, T_B, YIELD,
                                    interrupts_point, none_run, poll_run, progress_run, sample,
                                    setting_points, study)


@pytest.fixture(scope="module")
def whole():
    return study()


@pytest.fixture(scope="module")
def section(whole):
    return plots.render(whole)


def test_section_holds_the_figures_the_diagnosis_and_the_tables(section):
    text = drawn_section_text(section, "Progression cost", ["overhead", "intervals", "interrupts"])
    assert "<h3>Diagnosis</h3>" in text
    assert html.escape(f"the progress thread ({POLL}) cuts it 10×") in text
    # the overheads at the largest size, then every size
    assert ("<tr><td>point-to-point</td><td>work</td><td>4 MiB</td><td>500 µs</td>"
            "<td>400 µs</td><td>200 µs (every 256 KiB)</td><td>404 µs</td><td>40 µs</td>"
            "<td>360 µs</td></tr>") in text
    assert "<summary>every size</summary>" in text
    assert ("<tr><td>Iallreduce</td><td>time</td><td>256 KiB</td><td>80 µs</td>") in text
    # every interval, test-best's choice marked
    assert ('<tr class="best"><td>point-to-point</td><td>time</td><td>4 MiB</td><td>256 KiB</td>'
            "<td>17</td><td>200 µs</td><td>yes</td></tr>") in text
    # the interrupts and the settings
    assert ("<tr><td>8192 Hz</td><td>8100 Hz</td><td>4</td><td>1 s</td><td>1.01 s</td>"
            "<td>8222</td><td>6.8 µs</td><td>2.0%</td></tr>") in text
    assert (f"<tr><td>{POLL}</td><td>progress-thread-poll-cpu=2.jsonl</td><td>poll</td>"
            "<td>True, True</td><td>2, 3</td><td>no</td><td>-</td>"
            "<td>MPILENS_PROGRESS=poll,cpu=2</td><td>funneled</td></tr>") in text


def test_overhead_figure_draws_every_curve_of_the_seed_figures(whole):
    figure = plots.overhead_figure(pg.measurements(whole))
    panels = figure.axes
    assert [axes.get_title() for axes in panels] == [
        "point-to-point, time-based", "point-to-point, work-based", "Iallreduce, time-based",
        "Iallreduce, work-based"]
    for axes in panels:
        assert axes.get_xscale() == "log" and axes.get_yscale() == "log"
        for gid in ("none", "test-best", ASYNC, POLL, YIELD, "t_b"):
            (line,) = by_gid(axes.lines, gid)
            assert list(line.get_xdata()) == list(SIZES)
    (none,) = by_gid(panels[0].lines, "none")
    assert list(none.get_ydata()) == [32_000, 104_000, 400_000]
    assert none.get_color() == "black"
    (reference,) = by_gid(panels[0].lines, "t_b")
    assert list(reference.get_ydata()) == [T_B[size] for size in SIZES]
    assert reference.get_linestyle() == "--"
    (best,) = by_gid(panels[2].lines, "test-best")
    assert list(best.get_ydata()) == [32_000, 104_000, 400_000]
    (shared,) = by_gid(panels[3].lines, YIELD)
    assert list(shared.get_ydata()) == pytest.approx([57_600, 187_200, 720_000])
    assert "left out" not in plots.overhead_caption(pg.measurements(whole))


def test_non_positive_overheads_are_left_out_and_captioned():
    points = setting_points(pg.NONE, ops=("p2p",))
    for p in points:
        if p["key"] == "p2p/size=1048576/compute=work/strategy=none":
            p["stats"].update(t_o_ns=-400.0, sample=sample(-400.0, 2000.0))
    found = pg.measurements(progress_run(pg.NONE, points))
    _, work = plots.overhead_figure(found).axes
    (none,) = by_gid(work.lines, "none")
    assert list(none.get_xdata()) == [256 * KIB, 4 * MIB]
    assert plots.left_out(found) == 1
    assert ("1 value at or below zero (work-based overheads within noise of zero) or at size 0 "
            "cannot be drawn on logarithmic axes and are left out") in plots.overhead_caption(found)
    text = plots.overhead_table(found, every_size=True)
    assert "<td>point-to-point</td><td>work</td><td>1 MiB</td><td>130 µs</td><td>~0</td>" in text


def test_intervals_figure_against_the_bytes_between_tests(whole):
    found = pg.measurements(whole)
    time_based, work_based = plots.intervals_figure(found).axes
    assert time_based.get_title() == "MPI_Test intervals, time-based"
    (p2p,) = by_gid(time_based.lines, "p2p")
    assert list(p2p.get_xdata()) == list(INTERVALS)
    assert list(p2p.get_ydata()) == pytest.approx([360_000, 200_000, 280_000])
    (untested,) = by_gid(time_based.lines, "p2p:none")
    assert list(untested.get_ydata()) == [400_000, 400_000]
    assert len(by_gid(work_based.lines, "iallreduce")) == 1
    assert time_based.get_xscale() == "log"
    assert "at 4 MiB, 65 tests every 64 KiB, 5 every 1 MiB" in plots.intervals_caption(found)


def test_interrupts_figure_against_the_seed(whole):
    (axes,) = plots.interrupts_figure(whole).axes
    (bar,) = by_gid(axes.patches, "per-interrupt")
    assert bar.get_height() == 6800
    (seed,) = by_gid(axes.lines, "seed")
    assert list(seed.get_ydata()) == [3400, 3400]
    assert [label.get_text() for label in axes.get_xticklabels()] == ["8192 Hz\n(8100 achieved)"]


def test_interrupts_without_cost_draw_no_bar_and_say_so():
    run = progress_run(pg.NONE, [interrupts_point(per=-50.0, t2=0.99e9)])
    (axes,) = plots.interrupts_figure(run).axes
    assert not by_gid(axes.patches, "per-interrupt")
    assert "1 rate with no measurable cost" in plots.interrupts_caption(run)
    section = plots.render(run)
    assert [plot.name for plot in plots_of(section.parts)] == ["interrupts"]


def test_figures_only_with_their_data():
    strategy_none = pg.combine([progress_run(pg.NONE, setting_points(pg.NONE, tests=False)),
                                poll_run()])
    assert [plot.name for plot in plots_of(plots.render(strategy_none).parts)] == ["overhead"]
    empty = progress_run(pg.NONE, [])
    assert "This run holds no progress measurement." in text_of(plots.render(empty).parts)


def test_styles_keep_none_black_and_give_each_setting_its_own():
    look = plots.styles(["none", "test-best", ASYNC, POLL, YIELD])
    assert look["none"] == ("black", "o") and look["test-best"][0] == "tab:blue"
    assert len({look[name] for name in look}) == 5


def test_compare_parts_overlay_none_and_the_best_of_each_study(whole):
    other = pg.combine([none_run(flavour="openmpi")])
    parts = plots.compare_parts(whole, other, ("laptop", "cluster"))
    (plot,) = plots_of(parts)
    assert_drawn(plot.png)
    figure = plots.compare_figure(whole, other, ("laptop", "cluster"))
    first = figure.axes[0]
    assert first.get_title() == "point-to-point, time-based"
    for gid in ("A:none", "A:best", "B:none", "B:best"):
        assert len(by_gid(first.lines, gid)) == 1
    (best_a,) = by_gid(first.lines, "A:best")
    assert list(best_a.get_ydata()) == pytest.approx([3_200, 10_400, 40_000])
    assert best_a.get_label() == f"A (laptop): {POLL}"
    (best_b,) = by_gid(first.lines, "B:best")
    assert best_b.get_label() == "B (cluster): test-best" and best_b.get_linestyle() == "--"
    text = text_of(parts)
    assert ("<tr><td>point-to-point</td><td>time</td><td>4 MiB</td><td>400 µs</td>"
            f"<td>{POLL}: 40 µs</td><td>4 MiB</td><td>400 µs</td><td>test-best: 200 µs</td>"
            "</tr>") in text
    assert "<th>size, A: laptop</th>" in text


def test_report_page_when_the_family_is_registered(whole, tmp_path):
    if "progress" not in families.FAMILIES:
        pytest.skip("the progress family is not registered yet")
    _, written = report_page(whole.members, tmp_path / "out", "Progression cost")
    assert written == ["progress-interrupts.png", "progress-intervals.png", "progress-overhead.png"]


# --- invalid points --------------------------------------------------------------------------------

def invalid_run():
    """The library alone at point-to-point, its work-based t_o at 4 MiB -5 µs, up to -4 µs."""
    from test_progress_analysis import overhead_point, t_b

    points = setting_points(pg.NONE, ops=("p2p",), tests=False)
    broken = overhead_point("p2p", "work", SIZES[-1], -5000.0, t_b("p2p", SIZES[-1]),
                            noise=1000.0)
    return progress_run(pg.NONE, [broken if p["key"] == broken["key"] else p for p in points])


def legend_texts(figure) -> list:
    return [text.get_text() for axes in figure.axes if axes.get_legend()
            for text in axes.get_legend().get_texts()]


def test_invalid_point_drawn_on_the_edge_with_its_reason():
    run = invalid_run()
    invalid = pg.impossible_measures(run)
    figure = plots.overhead_figure(pg.measurements(run), invalid)
    time_based, work_based = figure.axes
    assert not by_gid(time_based.lines, "invalid")
    (mark,) = by_gid(work_based.lines, "invalid")
    assert list(mark.get_xdata()) == [SIZES[-1]] and list(mark.get_ydata()) == [0.0]
    assert mark.get_markerfacecolor() == "none" and not mark.get_clip_on()
    assert f"invalid: {plots.INVALID_REASON}" in legend_texts(figure)
    assert "Grey hollow circles" in plots.overhead_caption(pg.measurements(run), invalid)
    text = text_of(plots.render(run).parts)
    assert "<h3>Invalid points</h3>" in text
    assert (f"<tr><td>point-to-point</td><td>work</td><td>none</td><td>none</td><td>4 MiB</td>"
            f"<td>-5 µs</td><td>-4 µs</td><td>{plots.INVALID_REASON}</td></tr>") in text


def test_invalid_test_interval_drawn_on_the_intervals_figure():
    """The library alone tested every 64 KiB at 4 MiB, time-based: t_o -5 µs, up to -4 µs."""
    from test_progress_analysis import overhead_point, t_b

    points = setting_points(pg.NONE, ops=("p2p",))
    broken = overhead_point("p2p", "time", SIZES[-1], -5000.0, t_b("p2p", SIZES[-1]),
                            interval=INTERVALS[0], noise=1000.0)
    assert any(p["key"] == broken["key"] for p in points)
    run = progress_run(pg.NONE, [broken if p["key"] == broken["key"] else p for p in points])
    invalid = pg.impossible_measures(run)
    found = pg.measurements(run)
    time_based, work_based = plots.intervals_figure(found, invalid).axes
    (p2p,) = by_gid(time_based.lines, "p2p")
    assert list(p2p.get_xdata()) == list(INTERVALS[1:])
    (mark,) = by_gid(time_based.lines, "invalid")
    assert list(mark.get_xdata()) == [INTERVALS[0]]
    assert not by_gid(work_based.lines, "invalid")
    assert "Grey hollow circles" in plots.intervals_caption(found, invalid)
    assert "Grey hollow circles" not in plots.intervals_caption(found)


def test_comparison_draws_either_study_s_invalid_points():
    run = invalid_run()
    figure = plots.compare_figure(run, progress_run(pg.NONE, setting_points(pg.NONE, ops=("p2p",),
                                                                             tests=False)),
                                  ("broken", "sound"))
    time_based, work_based = figure.axes[:2]
    assert not by_gid(time_based.lines, "invalid")
    (mark,) = by_gid(work_based.lines, "invalid")
    assert list(mark.get_xdata()) == [SIZES[-1]]
    assert f"invalid: {plots.INVALID_REASON}" in legend_texts(figure)
    (none_a,) = by_gid(work_based.lines, "A:none")
    assert SIZES[-1] not in list(none_a.get_xdata())


def test_valid_run_has_no_invalid_mark_legend_nor_table(whole, section):
    figure = plots.overhead_figure(pg.measurements(whole), pg.impossible_measures(whole))
    assert not any(by_gid(axes.lines, "invalid") for axes in figure.axes)
    assert not any(text.startswith("invalid:") for text in legend_texts(figure))
    assert "Invalid points" not in text_of(section.parts)
