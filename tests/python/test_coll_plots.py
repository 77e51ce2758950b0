"""The coll report section: the method comparison, the per-rank profiles over the algorithms'
trees, the error against the truth, the tables, one section for a series of files, and the
comparison page."""

from __future__ import annotations

import base64
import html
import io
import re

import numpy as np
import pytest
from test_coll_analysis import MS, US, chain_points, coll_files, coll_point, coll_run, oli_point

from mpilens import report, results
from mpilens.analysis import coll
from mpilens.markup import Markup
from mpilens.plots import coll as plots
from mpilens.plots import common
from mpilens.plots import invalid as inv
from mpilens.section import Plot

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_drawn(png: bytes) -> None:
    """A PNG with something on it: many colours, not one flat fill."""
    from matplotlib.image import imread

    assert png.startswith(PNG_SIGNATURE)
    pixels = imread(io.BytesIO(png))[..., :3].reshape(-1, 3)
    assert pixels.std() > 0.05
    assert len(np.unique((pixels * 255).astype(int) @ [65536, 256, 1])) > 20


def plots_of(parts) -> list:
    return [part for part in parts if isinstance(part, Plot)]


def text_of(parts) -> str:
    return "".join(part for part in parts if isinstance(part, Markup))


def drawn_section_text(section, title: str, names: list) -> str:
    """The section has `title` and exactly the figures `names`, in order, each drawn; returns
    its text."""
    assert section.title == title
    found = plots_of(section.parts)
    assert [plot.name for plot in found] == names
    for plot in found:
        assert_drawn(plot.png)
    return text_of(section.parts)


def by_gid(artists, gid: str) -> list:
    return [artist for artist in artists if artist.get_gid() == gid]


@pytest.fixture(scope="module")
def series_run():
    """Linear and binomial broadcasts under a hop delay at 2 and 4 ranks, and the library's."""
    points = []
    for ranks in (2, 4):
        points += chain_points(ranks) + chain_points(ranks, algo="binomial", error=0.02)
    points += [oli_point("bcast", "library", [None, 2 * US, 3 * US, 1 * US], hop=MS),
               coll_point("bcast", "library", "rounds", 4, 2 * US, hop=MS)]
    return coll_run(points)


@pytest.fixture(scope="module")
def section(series_run):
    return plots.render(series_run)


def test_section_parts(section, series_run):
    assert section.title == "Collective latency"
    names = [plot.name for plot in plots_of(section.parts)]
    assert names == ["methods", "error", "profile-bcast-library-np4", "profile-bcast-linear-np2",
                     "profile-bcast-linear-np4", "profile-bcast-binomial-np2",
                     "profile-bcast-binomial-np4"]
    for plot in plots_of(section.parts):
        assert_drawn(plot.png)
        assert plot.caption
    page = text_of(section.parts)
    for sentence in coll.diagnose(series_run):
        assert f"<li>{html.escape(sentence)}</li>" in page
    assert "<h3>Error against the analytic truth</h3>" in page
    assert "<h4>bcast/linear: latency estimates</h4>" in page
    # every number of the estimates table, in the report's units
    assert ("<tr><td>4</td><td>3 ms</td><td>1.5 ms</td><td>9 ms</td><td>3.15 ms</td>"
            "<td>1.8 ms</td><td>3</td><td>3 ms</td></tr>") in page


def test_no_truth_no_error_plot():
    section = plots.render(coll_run([coll_point("bcast", "library", "oli", 2, 3 * US),
                                     coll_point("bcast", "library", "ack", 2, 4 * US)]))
    assert [plot.name for plot in plots_of(section.parts)] == ["methods"]
    assert "analytic truth" not in text_of(section.parts)
    assert plots.error_figure(coll.series(coll_run(chain_points(3)))) is not None
    assert plots.error_figure(coll.series(coll_run([]))) is None


def test_empty_run():
    note = {"type": "note", "level": "skip", "text": "rounds: allreduce has no root to rotate; "
            "not measured", "key": "rounds/op=allreduce/algo=library"}
    section = plots.render(coll_run([], notes=[note]))
    assert plots_of(section.parts) == []
    page = text_of(section.parts)
    assert "This run holds no collective latency measurement." in page
    assert '<li class="skip">skipped: rounds: allreduce has no root to rotate; not measured</li>' \
        in page


def test_methods_figure_draws_each_curve():
    points = [coll_point("bcast", "library", method, ranks, value * ranks)
              for ranks in (2, 4, 8)
              for method, value in (("oli", 10 * US), ("rounds", 5 * US), ("barrier", 200 * US))]
    points += [coll_point("reduce", "library", "oli", 4, 7 * US)]
    figure = plots.methods_figure(coll.series(coll_run(points)))
    first, second = [axes for axes in figure.axes if axes.get_visible()]
    assert first.get_title() == "bcast/library" and second.get_title() == "reduce/library"
    oli = by_gid(first.lines, "oli")[0]
    assert list(oli.get_xdata()) == [2, 4, 8]
    assert list(oli.get_ydata()) == [20 * US, 40 * US, 80 * US]
    assert oli.get_linewidth() > by_gid(first.lines, "rounds")[0].get_linewidth()
    # barrier 20 times oli: the range needs a logarithmic axis; one point does not
    assert first.get_yscale() == "log" and second.get_yscale() == "linear"
    legend = [text.get_text() for text in first.get_legend().get_texts()] if first.get_legend() \
        else [text.get_text() for text in second.get_legend().get_texts()]
    assert legend == ["oli", "rounds", "barrier"]


def test_profile_of_a_chain_with_truth_and_tree():
    point = chain_points(5, error=0.02)[0]
    found = coll.profile(point)
    figure = plots.profile_figure(found, "bcast/linear")
    axes = figure.axes[0]
    bars = by_gid(axes.patches, "ol")
    assert [round(bar.get_x() + bar.get_width() / 2) for bar in bars] == [1, 2, 3]
    assert [bar.get_height() for bar in bars] == pytest.approx([2.04 * MS, 3.06 * MS, 4.08 * MS])
    # the maximum, rank 4 (ties go to the highest rank in the builder), in red
    (top,) = by_gid(axes.patches, "argmax")
    assert round(top.get_x() + top.get_width() / 2) == 4 == found.argmax
    assert top.get_height() == pytest.approx(4.08 * MS)
    # the chain's messages, from the root's start at 0 to each rank's OL_i
    arrows = by_gid(axes.patches, "edge")
    assert len(arrows) == 4
    assert arrows[0]._posA_posB == [(0, 0.0), (1, pytest.approx(2.04 * MS))]
    (truth,) = by_gid(axes.collections, "truth")
    assert truth.get_offsets().tolist() == [[1, 2 * MS], [2, 3 * MS], [3, 4 * MS], [4, 4 * MS]]
    assert len(by_gid(axes.lines, "root")) == 1 and not by_gid(axes.lines, "unmeasured")
    texts = [text.get_text() for text in axes.get_legend().get_texts()]
    assert texts == ["root (sends first)", "analytic truth", "OL_i", "max OL_i (rank 4)",
                     "messages of the chain"]


def test_profile_of_a_reduction_points_to_the_root():
    point = oli_point("reduce", "binomial", [0, 1 * MS, 1 * MS, 2 * MS])
    axes = plots.profile_figure(coll.profile(point), "reduce/binomial").axes[0]
    arrows = by_gid(axes.patches, "edge")
    assert [tuple(round(x) for x, _ in arrow._posA_posB) for arrow in arrows] == [
        (1, 0), (2, 0), (3, 2)]
    assert not by_gid(axes.lines, "root")  # a reduction's root is measured
    assert "messages of the binomial tree, towards the root" in [
        text.get_text() for text in axes.get_legend().get_texts()]


def test_profile_marks_remedy_fast_and_unmeasured_ranks():
    point = oli_point("bcast", "flat", [None, 10 * US, 11 * US, None, 12 * US, 15 * US],
                      gap_bound=[1, 2, 4], remedy="clock", measured_ranks=[4, 5],
                      audited_ranks=[2], cheap_ns=[None, 9 * US, 9 * US, 8 * US, 10 * US, 14 * US])
    point["params"]["fast"] = True
    found = coll.profile(point)
    axes = plots.profile_figure(found, "bcast/flat").axes[0]
    hatched = by_gid(axes.patches, "remedy")
    assert [round(bar.get_x() + 0.35) for bar in hatched] == [1, 2, 4]
    assert all(bar.get_hatch() == plots.REMEDY_HATCH for bar in hatched)
    assert not by_gid(axes.patches, "audited")  # rank 2 is drawn as from the remedy
    (unmeasured,) = by_gid(axes.lines, "unmeasured")
    assert list(unmeasured.get_xdata()) == [3]
    texts = [text.get_text() for text in axes.get_legend().get_texts()]
    assert "OL_i from the remedy (gap-bound rank)" in texts
    assert "not measured (--fast)" in texts
    assert "max OL_i (rank 5)" in texts
    assert len(by_gid(axes.patches, "edge")) == 5
    caption = plots.profile_caption(found, "bcast/flat")
    assert "hatched: ranks whose E_i was not clearly above the root's gap" in caption
    assert "pale: ranks drawn at random by --fast" in caption
    table = plots.ranks_table(found)
    assert ("<tr><td>2</td><td>11 µs</td><td>12 µs</td><td>2 µs</td><td>9 µs</td>"
            "<td>random check, one block, gap-bound, from the clock remedy</td></tr>") in table
    assert ("<tr><td>3</td><td>n/a</td><td>n/a</td><td>n/a</td><td>8 µs</td>"
            "<td>not measured</td></tr>") in table


def test_profile_of_the_library_has_no_tree():
    point = oli_point("bcast", "library", [None, 3 * US, 2 * US, 5 * US], audited_ranks=[2])
    found = coll.profile(point)
    axes = plots.profile_figure(found, "bcast/library").axes[0]
    assert not by_gid(axes.patches, "edge")
    assert len(by_gid(axes.patches, "audited")) == 1
    assert "arrows" not in plots.profile_caption(found, "bcast/library")


def test_thousands_of_ranks_draw_lines_and_list_the_largest():
    ranks = 4096
    truths = [None] + [float(rank % 64) * US for rank in range(1, ranks)]
    measured = [None] + [value * 1.01 for value in truths[1:]]
    measured[1000] = 80 * US  # the maximum, far from the others
    found = coll.profile(oli_point("bcast", "binomial", measured, per_rank_truth=truths,
                                   gap_bound=[5, 7]))
    axes = plots.profile_figure(found, "bcast/binomial").axes[0]
    assert not axes.patches  # no bar, no arrow: thousands of patches take minutes to draw
    (lines,) = by_gid(axes.collections, "ol")
    assert len(lines.get_segments()) == ranks - 1 - 3  # every measured rank but these three
    assert len(by_gid(axes.collections, "remedy")[0].get_segments()) == 2
    (top,) = by_gid(axes.collections, "argmax")
    assert top.get_segments()[0].tolist() == [[1000, 0], [1000, 80 * US]]
    (truth,) = by_gid(axes.lines, "truth")
    assert len(truth.get_xdata()) == ranks - 1
    caption = plots.profile_caption(found, "bcast/binomial")
    assert "one line per rank, too many for bars" in caption
    assert "pale: ranks whose E_i was not clearly above the root's gap" in caption
    rows = re.findall(r"<tr><td>(\d+)</td><td>([^<]*)</td>", str(plots.ranks_table(found)))
    assert len(rows) == plots.MAX_TABLE_RANKS
    # the largest OL_i first: rank 1000, then the ranks of 63 × 1.01 µs, lowest rank first
    assert [int(rank) for rank, _ in rows[:3]] == [1000, 63, 127]
    section = text_of(plots.render(coll_run([oli_point("bcast", "binomial", measured)])).parts)
    assert f"at {ranks} ranks: the {plots.MAX_TABLE_RANKS} ranks of largest OL_i" in section


def test_many_ranks_draw_no_arrows():
    point = oli_point("bcast", "binomial", [None] + [float(r) for r in range(1, 80)])
    axes = plots.profile_figure(coll.profile(point), "bcast/binomial").axes[0]
    assert not by_gid(axes.patches, "edge")


def test_error_figure():
    found = coll.series(coll_run(chain_points(2) + chain_points(4, error=0.3)))
    assert plots.error_series(found[coll.Config("bcast", "linear", 256, MS)]) == {
        "oli": [(2, 1.0), (4, pytest.approx(1.3))],
        "rounds": [(2, 0.5), (4, pytest.approx(0.65))],
        "barrier": [(2, 3.0), (4, pytest.approx(3.9))],
        "ack": [(2, 1.05), (4, pytest.approx(1.365))],
        "osu": [(2, pytest.approx(0.6)), (4, pytest.approx(0.78))]}
    axes = plots.error_figure(found).axes[0]
    assert axes.get_title() == "bcast/linear, hop delay 1 ms"
    assert list(by_gid(axes.lines, "oli")[0].get_ydata()) == pytest.approx([1.0, 1.3])
    (band,) = by_gid(axes.patches, "band")
    assert band.get_y() == pytest.approx(0.9) and band.get_height() == pytest.approx(0.2)
    assert axes.get_yscale() == "log"  # 0.5 to 3.9
    assert common.ratio_ticks(0.4, 4.5) == [0.5, 1, 2]
    assert common.ratio_ticks(0.08, 12) == pytest.approx([0.1, 0.2, 0.5, 1, 2, 5, 10])


def test_quality_table_marks_points_past_the_rsd():
    run = coll_run([coll_point("bcast", "library", "oli", 4, 3 * US, rsd=0.01),
                    coll_point("bcast", "library", "rounds", 4, 2 * US, rsd=0.08)])
    table = plots.quality_table(run)
    # files without both estimates: the blocks' own median and mean
    assert ('<tr><td>bcast/library</td><td>oli</td><td>4</td><td>3 µs</td><td>median</td>'
            '<td>3 µs</td><td>3 µs</td>') in table
    assert ('<tr class="warn"><td>bcast/library</td><td>rounds</td><td>4</td><td>2 µs</td>'
            '<td>median</td><td>2 µs</td><td>2 µs</td><td>1.98 µs – 2.02 µs</td><td>8.0%</td><td>8</td><td>precision</td>'
            '<td>2 ms</td></tr>') in table


def test_quality_table_shows_both_estimates():
    point = coll_point("bcast", "library", "oli", 2, 7 * US)
    point["params"]["estimator"] = "mean"
    point["stats"].update(latency_median_ns=5 * US, latency_mean_ns=7 * US)
    assert ('<td>7 µs</td><td>mean</td><td>5 µs</td><td>7 µs</td>'
            in plots.quality_table(coll_run([point])))


# --- the report of a series of files, and the comparison page ----------------------------------

def _images(page: str) -> list:
    return [base64.b64decode(data)
            for data in re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)]


def test_report_of_a_series_is_one_section(tmp_path):
    coll_files(tmp_path / "run", {2: chain_points(2), 4: chain_points(4)})
    runs = results.load_dir(tmp_path / "run")
    page = report.write_report(runs, tmp_path / "out").read_text(encoding="utf-8")
    assert page.count("<h2>Collective latency") == 1
    assert "<h2>Collective latency</h2>" in page  # no file name: it is one run
    assert all(f"<summary>{name}.jsonl: how it was run</summary>" in page
               for name in ("coll-np2", "coll-np4"))
    written = sorted(path.name for path in (tmp_path / "out" / "plots").iterdir())
    assert written == ["coll-error.png", "coll-methods.png",
                       "coll-profile-bcast-linear-np2.png", "coll-profile-bcast-linear-np4.png"]
    assert len(_images(page)) == 4
    for sentence in report.findings(runs):
        assert html.escape(sentence) in page
    assert not any(sentence.startswith("coll: ") for sentence in report.findings(runs))


def test_comparison_of_two_series(tmp_path):
    coll_files(tmp_path / "a", {2: chain_points(2), 4: chain_points(4)})
    coll_files(tmp_path / "b", {2: chain_points(2, error=0.2), 4: chain_points(4, error=0.2)})
    runs_a, runs_b = results.load_dir(tmp_path / "a"), results.load_dir(tmp_path / "b")
    path = report.write_comparison(runs_a, runs_b, tmp_path / "out", ("before", "after"))
    page = path.read_text(encoding="utf-8")
    assert ("<li>coll: bcast/linear, oli at 4 ranks: A 3 ms, B 3.6 ms (A 1.20x faster); A is "
            "faster at every rank count (2, 4 ranks)</li>") in page
    assert "<h3>oli, A against B</h3>" in page
    assert ("<tr><td>bcast/linear</td><td>4</td><td>3 ms</td><td>3.6 ms</td><td>1.20</td></tr>"
            in page)
    assert "<tr><td>ranks</td><td>2, 4</td><td>2, 4</td></tr>" in page
    assert (tmp_path / "out" / "plots" / "compare-coll-oli.png").is_file()
    axes = plots.compare_figure(results.merge(runs_a), results.merge(runs_b),
                                ("before", "after")).axes[0]
    assert [list(line.get_ydata()) for line in axes.lines] == [[1 * MS, 3 * MS],
                                                               [pytest.approx(1.2 * MS),
                                                                pytest.approx(3.6 * MS)]]


# --- invalid points --------------------------------------------------------------------------------

def legend_texts(figure) -> list:
    return [text.get_text() for axes in figure.axes if axes.get_legend()
            for text in axes.get_legend().get_texts()]


def crowded_run(crowded: bool):
    """A linear broadcast at 2, 3 and 4 ranks, 15% off the truth at 3 and 4, on 2 cores when
    crowded, else on a core per rank."""
    points = [p for ranks in (2, 3, 4) for p in chain_points(ranks, error=0.15 if ranks > 2 else 0)]
    if crowded:
        return coll_run(points, cpus_online=2, binding=["0-1"] * 4)
    return coll_run(points, cpus_online=4)


def test_invalid_rank_counts_drawn_grey_with_their_reason_and_listed():
    run = crowded_run(True)
    found = coll.series(run)
    _, rejected = coll.valid_series(run, found)
    for figure in (plots.methods_figure(found, rejected), plots.error_figure(found, rejected)):
        (axes,) = [axes for axes in figure.axes if axes.get_visible()]
        marks = by_gid(axes.lines, inv.GID)
        assert marks and {x for mark in marks for x in mark.get_xdata()} == {3, 4}
        # the curves keep only the valid rank count
        (oli,) = by_gid(axes.lines, coll.OLI)
        assert list(oli.get_xdata()) == [2]
        assert legend_texts(figure).count("invalid: ranks outnumber the cores") == 1
    section = plots.render(run)
    text = drawn_section_text(section, "Collective latency", [p.name for p in plots_of(section.parts)])
    assert "<h3>Invalid points</h3>" in text
    assert ("<tr><td>bcast/linear</td><td>3</td><td>not trustworthy: 3 ranks share 2 cores</td>"
            "</tr>") in text
    assert "<td>4</td><td>not trustworthy: 4 ranks share 2 cores</td>" in text


def test_profile_at_an_invalid_rank_count_is_drawn_invalid_and_said_so():
    run = crowded_run(True)
    found = coll.series(run)
    _, rejected = coll.valid_series(run, found)
    ((config, invalid),) = rejected.items()
    reason = invalid[4]
    point = found[config][coll.OLI][4]
    axes = plots.profile_figure(coll.profile(point), "bcast/linear", reason).axes[0]
    covers = by_gid(axes.patches, inv.GID)
    assert [round(bar.get_x() + bar.get_width() / 2) for bar in covers] == [1, 2, 3]
    assert all(cover.zorder > bar.zorder for cover in covers for bar in by_gid(axes.patches, "ol"))
    texts = [text.get_text() for text in axes.get_legend().get_texts()]
    assert texts[0] == "invalid: ranks outnumber the cores"
    caption = plots.profile_caption(coll.profile(point), "bcast/linear", reason)
    assert caption.startswith("INVALID, shown for inspection only: not trustworthy: 4 ranks share "
                              "2 cores; bcast/linear at 4 ranks")
    # the valid rank count: no cover, no word of it
    valid = coll.profile(found[config][coll.OLI][2])
    assert not by_gid(plots.profile_figure(valid, "bcast/linear").axes[0].patches, inv.GID)
    assert "INVALID" not in plots.profile_caption(valid, "bcast/linear")
    captions = [plot.caption for plot in plots_of(plots.render(run).parts)]
    assert sum(c.startswith("INVALID, shown for inspection only") for c in captions) == 2  # 3, 4


def test_valid_run_has_no_invalid_mark_legend_nor_table():
    run = crowded_run(False)
    found = coll.series(run)
    _, rejected = coll.valid_series(run, found)
    assert not any(rejected.values())
    figure = plots.methods_figure(found, rejected)
    assert not any(by_gid(axes.lines, inv.GID) for axes in figure.axes)
    assert not any(text.startswith("invalid:") for text in legend_texts(figure))
    assert "Invalid points" not in text_of(plots.render(run).parts)


def test_comparison_leaves_invalid_rank_counts_out_of_curves_and_ratios():
    crowded, spacious = crowded_run(True), crowded_run(False)
    figure = plots.compare_figure(crowded, spacious, ("crowded", "spacious"))
    (axes,) = [axes for axes in figure.axes if axes.get_visible()]
    (a,) = by_gid(axes.lines, "A")
    (b,) = by_gid(axes.lines, "B")
    assert list(a.get_xdata()) == [2] and list(b.get_xdata()) == [2, 3, 4]
    marks = by_gid(axes.lines, inv.GID)
    assert {x for mark in marks for x in mark.get_xdata()} == {3, 4}
    assert legend_texts(figure).count("invalid: ranks outnumber the cores") == 1
    rows = str(plots.compare_table(crowded, spacious, ("crowded", "spacious")))
    assert "<td>1.00</td>" in rows  # 2 ranks: valid in both, the same truth
    assert rows.count("(invalid)</td>") == 2 and rows.count("<td>n/a: invalid</td>") == 2
