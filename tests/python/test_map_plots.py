"""The rank reordering report section and comparison parts, drawn from synthetic runs: which
figures exist, what each draws (cells, annotations and bars by artist id, not by pixels), the
captions and the tables."""

from __future__ import annotations

import html

import numpy as np
import pytest
from conftest import report_page
from test_coll_plots import assert_drawn, by_gid, drawn_section_text, plots_of, text_of
from test_map_analysis import (
    KIB,
    MIB,
    allgather_point,
    cg_point,
    cg_run,
    grid_points,
    map_run,
    other_library,
)

from mpilens import report
from mpilens.analysis import map as ma
from mpilens.plots import invalid as inv
from mpilens.plots import map as plots


@pytest.fixture(scope="module")
def whole():
    return ma.combine([map_run(grid_points()), cg_run()])


@pytest.fixture(scope="module")
def section(whole):
    return plots.render(whole)


def annotations(axes) -> list:
    return [text.get_text() for text in by_gid(axes.texts, plots.VALUE_GID)]


def test_section_holds_the_figures_the_diagnosis_and_the_tables(section, whole):
    text = drawn_section_text(section, "Rank reordering", ["gain", "times", "cg"])
    assert "<h3>Diagnosis</h3>" in text
    for sentence in ma.diagnose(whole):
        assert html.escape(sentence) in text
    assert ("<p>The cost model predicts +50% in every cell: 100 (1 − after / before) of its "
            "weighted cost") in text
    assert "<summary>every cell</summary>" in text
    assert ("<tr><td>100</td><td>1 KiB</td><td>10 ms</td><td>1 ms</td><td>5 ms</td>"
            "<td>+40%</td><td>+50%</td><td>+50%</td><td>1.024e+06</td><td>5.12e+05</td>"
            "<td>4096</td><td>2048</td><td>yes</td><td>0 2 1 3</td></tr>") in text
    assert ("<tr><td>32×32×32</td><td>4</td><td>100</td><td>treematch</td>"
            "<td>node:2 core:2</td><td>2 s</td><td>1 s</td><td>100 ms</td><td>+45%</td>"
            "<td>+50%</td><td>+50%</td><td>10 s</td><td>9.1 s</td><td>1e-10</td>"
            "<td>1e-10</td><td>0 2 1 3</td></tr>") in text


def test_gain_map_annotates_every_cell_on_a_scale_centred_on_zero():
    (grid,) = ma.grids(map_run(grid_points()))
    figure = plots.gain_figure(grid)
    maps = [axes for axes in figure.axes if axes.get_label() != "<colorbar>"]
    (axes,) = maps
    # rows from the fewest iterations up, columns by size
    assert annotations(axes) == ["-50%", "+40%", "+40%", "+49%"]
    assert [label.get_text() for label in axes.get_xticklabels()] == ["1K", "1M"]
    assert [label.get_text() for label in axes.get_yticklabels()] == ["10", "100"]
    (mesh,) = axes.collections
    assert mesh.norm.vmin == -50 and mesh.norm.vmax == 50
    assert list(mesh.get_array().ravel()) == pytest.approx([-50.0, 40.0, 40.0, 49.0])
    # the losing cell red, the best green
    low, high = mesh.cmap(mesh.norm(-50.0)), mesh.cmap(mesh.norm(49.0))
    assert low[0] > low[1] and high[1] > high[0]
    (bar,) = [axes for axes in figure.axes if axes.get_label() == "<colorbar>"]
    assert bar.get_ylabel() == "gain % (colours clipped at ±50)"


def test_a_varying_prediction_gets_its_own_map():
    points = grid_points()
    points[0]["stats"]["predicted_gain_pct"] = 30.0
    (grid,) = ma.grids(map_run(points))
    figure = plots.gain_figure(grid)
    measured, predicted = [axes for axes in figure.axes if axes.get_label() != "<colorbar>"]
    assert predicted.get_title() == "predicted by the cost model"
    assert annotations(predicted) == ["+30%", "+50%", "+50%", "+50%"]
    assert "Right: the gain the cost model predicts" in plots.gain_caption(grid)
    assert text_of([plots.prediction_paragraph(grid)]) == \
        "<p>Predicted by the cost model: +30% to +50%.</p>"


def test_missing_cells_are_grey_and_unannotated():
    points = grid_points()[:3] + [allgather_point(1000, KIB, 1e-4, 0.5e-4, 1e-3)]
    (grid,) = ma.grids(map_run(points))
    figure = plots.gain_figure(grid)
    axes = figure.axes[0]
    assert len(annotations(axes)) == 4
    (mesh,) = axes.collections
    assert int(np.ma.count_masked(mesh.get_array())) == 2  # 1 MiB at 100 and 1000 iterations
    assert [label.get_text() for label in axes.get_yticklabels()] == ["10", "100", "1000"]


def test_losses_beyond_the_scale_are_clipped_but_annotated():
    points = grid_points(per_after={KIB: 1.2e-4, MIB: 0.5e-3}, reorder={KIB: 1e-2, MIB: 1e-3})
    (grid,) = ma.grids(map_run(points))
    axes = plots.gain_figure(grid).axes[0]
    assert annotations(axes)[0] == "-1020%"
    (mesh,) = axes.collections
    assert mesh.norm.vmin == -100 and min(mesh.get_array().ravel()) == -100


def test_noisy_cells_are_marked():
    points = grid_points()
    points[3]["stats"]["samples"] = {"before_s": [0.1, 0.25, 0.1]}
    (grid,) = ma.grids(map_run(points))
    assert annotations(plots.gain_figure(grid).axes[0]) == ["-50%", "+40%", "+40%", "+49%*"]
    assert "*: the repetitions of the cell disagree (the slowest more than 2× the fastest)" \
        in plots.gain_caption(grid)
    assert "*" not in plots.gain_caption(ma.grids(map_run(grid_points()))[0])


def test_times_figure_draws_t1_and_reordering_plus_t3_per_size():
    (grid,) = ma.grids(map_run(grid_points()))
    (axes, *_) = plots.times_figure(grid).axes
    (before,) = by_gid(axes.lines, f"before:{KIB}")
    (after,) = by_gid(axes.lines, f"after:{KIB}")
    assert list(before.get_xdata()) == [10, 100]
    assert list(before.get_ydata()) == pytest.approx([1e-3, 1e-2])
    assert list(after.get_ydata()) == pytest.approx([1.5e-3, 6e-3])
    assert after.get_linestyle() == "--" and before.get_color() == after.get_color()
    assert len(by_gid(axes.lines, f"before:{MIB}")) == 1
    assert axes.get_xscale() == "log" and axes.get_yscale() == "log"


def test_cg_bars_stack_the_reordering_and_write_both_gains():
    (point,) = ma.cg_points(cg_run())
    (axes,) = plots.cg_figure([point]).axes
    heights = {gid: [bar.get_height() for bar in by_gid(axes.patches, gid)]
               for gid in ("comm-before", "comm-after", "reorder", "total-before", "total-after")}
    assert {gid: len(bars) for gid, bars in heights.items()} == dict.fromkeys(heights, 1)
    assert {gid: bars[0] for gid, bars in heights.items()} == pytest.approx(
        {"comm-before": 2.0, "comm-after": 1.0, "reorder": 0.1, "total-before": 10.0,
         "total-after": 9.1})
    (reorder,) = by_gid(axes.patches, "reorder")
    assert reorder.get_y() == 1.0
    assert axes.get_title() == ("32×32×32, 100 iterations, treematch: gain 45%\npredicted by "
                                "the cost model: +50%")
    assert annotations(axes) == ["2 s", "1.1 s", "10 s", "9.1 s"]


def test_cg_without_totals_draws_the_communication_alone():
    point = cg_point()
    for name in ("total_before_s", "total_after_s"):
        del point["stats"][name]
    (axes,) = plots.cg_figure(ma.cg_points(cg_run(point))).axes
    assert not by_gid(axes.patches, "total-before")
    assert len(axes.get_xticks()) == 2


def test_figures_only_with_their_data():
    alone = plots.render(map_run(grid_points()))
    assert [plot.name for plot in plots_of(alone.parts)] == ["gain", "times"]
    assert [plot.name for plot in plots_of(plots.render(cg_run()).parts)] == ["cg"]
    empty = plots.render(map_run([]))
    assert "This run holds no reordering measurement." in text_of(empty.parts)
    assert not plots_of(empty.parts)


def test_several_grids_get_one_figure_each():
    run = ma.combine([map_run(grid_points()),
                      map_run(grid_points(), name="map-8.jsonl", ranks=8)])
    names = [plot.name for plot in plots_of(plots.render(run).parts)]
    assert names == ["gain-1", "times-1", "gain-2", "times-2"]


def test_compare_parts_draw_both_maps_and_their_difference(whole):
    parts = plots.compare_parts(whole, other_library(), ("laptop", "cluster"))
    (plot,) = plots_of(parts)
    assert plot.name == "gain"
    assert_drawn(plot.png)
    pairs = ma.paired_grids(whole, other_library())
    figure = plots.compare_figure(*pairs[0], ("laptop", "cluster"))
    side_a, side_b, difference = [axes for axes in figure.axes
                                  if axes.get_label() != "<colorbar>"]
    assert side_a.get_title() == "A: laptop" and side_b.get_title() == "B: cluster"
    assert annotations(side_a) == ["-50%", "+40%", "+40%", "+49%"]
    assert annotations(side_b) == ["-197%", "+40%", "-17%", "+49%"]
    assert annotations(difference) == ["-147", "0", "-57", "0"]
    text = text_of(parts)
    assert "<th>communication before, A: laptop</th>" in text
    assert ("<tr><td>32×32×32</td><td>2 s</td><td>1 s</td><td>100 ms</td><td>+45%</td>"
            "<td>+50%</td><td>2 s</td><td>1.5 s</td><td>100 ms</td><td>+20%</td><td>+50%</td>"
            "</tr>") in text


def test_report_page_of_the_two_files(whole, tmp_path):
    _, written = report_page(whole.members, tmp_path / "out", "Rank reordering")
    assert written == ["map-cg.png", "map-gain.png", "map-times.png"]


def test_comparison_page(whole, tmp_path):
    other = other_library()
    page = report.write_comparison(whole.members, other.members, tmp_path / "cmp",
                                   ("laptop", "cluster")).read_text(encoding="utf-8")
    for sentence in ma.compare(whole, other):
        assert html.escape(f"map: {sentence}") in page
    assert "<h2>map: runs</h2>" in page


# --- invalid cells ---------------------------------------------------------------------------------

def invalid_grid():
    """80% less time after reordering at 1 MiB where the model predicts 50%, beyond noise."""
    from test_map_analysis import with_samples

    points = with_samples(grid_points(per_after={KIB: 0.5e-4, MIB: 0.2e-3}), 0.01)
    return map_run(points)


def figure_legend_texts(figure) -> list:
    return [text.get_text() for legend in figure.legends for text in legend.get_texts()]


def test_invalid_cells_hatched_with_their_gain_and_reason_and_listed():
    run = invalid_grid()
    (grid,) = ma.grids(run)
    figure = plots.gain_figure(grid)
    axes = figure.axes[0]
    (marks,) = by_gid(axes.collections, inv.GID)
    assert marks.get_hatch() == inv.HATCH and len(marks.get_paths()) == 2
    # both sizes stay columns; the invalid ones carry no colour of the scale, but their gain
    assert [label.get_text() for label in axes.get_xticklabels()] == ["1K", "1M"]
    assert len(by_gid(axes.texts, plots.INVALID_VALUE_GID)) == 2
    assert figure_legend_texts(figure) == [f"invalid: {plots.INVALID_REASON}"]
    (times,) = plots.times_figure(grid).axes
    (mark,) = by_gid(times.lines, inv.GID)
    assert sorted(set(mark.get_xdata())) == [10, 100]
    assert f"invalid: {plots.INVALID_REASON}" in [t.get_text() for t in times.get_legend().get_texts()]
    text = drawn_section_text(plots.render(run), "Rank reordering", ["gain", "times"])
    assert "<h3>Invalid points</h3>" in text
    assert ("<td>100</td><td>1 MiB</td>") in text
    assert f"<td>+50%</td><td>{plots.INVALID_REASON}</td></tr>" in text


def test_comparison_hatches_either_study_s_invalid_cells():
    (broken,) = ma.grids(invalid_grid())
    (sound,) = ma.grids(map_run(grid_points()))
    figure = plots.compare_figure(broken, sound, ("broken", "sound"))
    side_a, side_b, difference = [axes for axes in figure.axes
                                  if axes.get_label() != "<colorbar>"]
    (marks,) = by_gid(side_a.collections, inv.GID)
    assert len(marks.get_paths()) == 2
    assert len(by_gid(side_a.texts, plots.INVALID_VALUE_GID)) == 2
    assert not by_gid(side_b.collections, inv.GID)
    # no difference where A's gain is invalid
    assert len(annotations(difference)) == len(annotations(side_b)) - 2
    assert figure_legend_texts(figure) == [f"invalid: {plots.INVALID_REASON}"]


def test_valid_grid_has_no_invalid_mark_legend_nor_table(section, whole):
    grid = ma.grids(whole)[0]
    figure = plots.gain_figure(grid)
    assert not any(by_gid(axes.collections, inv.GID) for axes in figure.axes)
    assert not figure.legends
    (times,) = plots.times_figure(grid).axes
    assert not by_gid(times.lines, inv.GID)
    assert "Invalid points" not in text_of(section.parts)
