"""The monitor report section: heat maps, per-rank bars, busiest pairs, kinds without traffic."""

from __future__ import annotations

import io
import time

import numpy as np
import pytest

from conftest import MONITOR_FIXTURE, dense_matrix, make_monitor_run, monitor_point
from mpilens import report, results
from mpilens.analysis import monitor
from mpilens.markup import Markup
from mpilens.plots import monitor as plots
from mpilens.plots.common import new_figure
from mpilens.section import Plot

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def pixels(plot: Plot) -> np.ndarray:
    from matplotlib.image import imread

    assert plot.png.startswith(PNG_SIGNATURE)
    return imread(io.BytesIO(plot.png), format="png")


def plots_of(parts) -> list:
    return [part for part in parts if isinstance(part, Plot)]


def test_fixture_section():
    section = plots.render(results.load(MONITOR_FIXTURE))
    assert section.title == "Communication matrices"
    assert [plot.name for plot in plots_of(section.parts)] == [
        "map-p2p", "ranks-p2p", "map-coll", "ranks-coll"]
    for plot in plots_of(section.parts):
        rgb = (pixels(plot)[..., :3] * 255).astype(np.int64)
        # Not blank: many distinct colours (cells, colour bars, bars, text).
        assert len(np.unique(rgb @ [65536, 256, 1])) > 50
    html = "".join(part for part in section.parts if isinstance(part, Markup))
    assert "<h3>point-to-point</h3>" in html
    assert "<h3>collectives (logical pattern, Open MPI&#x27;s monitoring not used: no Open MPI " \
           "pml/monitoring component (not Open MPI, or built without it))</h3>" in html
    assert "<p>No traffic counted: one-sided.</p>" in html
    assert "map-osc" not in [plot.name for plot in plots_of(section.parts)]
    # The busiest pairs of the ring, bytes then messages, with their share and mean size.
    assert ("<tr><td>1</td><td>0</td><td>1</td><td>4 KiB</td><td>4</td><td>40%</td>"
            "<td>1 KiB</td></tr>") in html


def test_map_is_drawn_as_counted():
    values = np.array([[0, 5, 0], [40, 0, 0], [0, 0, 2]])
    figure = new_figure()
    axes = figure.add_subplot()
    image = plots.draw_map(axes, dense_matrix("p2p", "counts", values))
    drawn = image.get_array()
    assert drawn.mask.tolist() == (values == 0).tolist()  # zero cells left blank
    assert drawn.data.tolist() == values.tolist()  # row = sender, column = receiver
    assert (image.norm.vmin, image.norm.vmax) == (2, 40)
    assert type(image.norm).__name__ == "LogNorm"
    assert axes.get_ylim() == (2.5, -0.5)  # rank 0 at the top
    assert axes.get_xlim() == (-0.5, 2.5)
    assert (axes.get_xlabel(), axes.get_ylabel()) == ("receiving rank", "sending rank")


def test_single_value_gets_a_scale_around_it():
    figure = new_figure()
    image = plots.draw_map(figure.add_subplot(), dense_matrix("coll", "bytes", [[0, 8], [8, 0]]))
    assert (image.norm.vmin, image.norm.vmax) == (4, 16)


def test_blocks_of_ranks_sum_their_cells():
    values = np.arange(25).reshape(5, 5)
    same = plots.grouping(5, cells=5)
    assert same.labels == ["0", "1", "2", "3", "4"] and same.caption == ""
    assert plots.grouped(dense_matrix("p2p", "bytes", values), same).tolist() == values.tolist()
    blocks = plots.grouping(5, cells=2)
    assert blocks.labels == ["0–2", "3–4"] and blocks.axis == "ranks (blocks of 3)"
    assert plots.grouped(dense_matrix("p2p", "bytes", values), blocks).tolist() == [[54, 51],
                                                                                   [111, 84]]


def test_nodes_sum_their_ranks_in_order_of_first_rank():
    hosts = ["b", "a", "b", "a", "c", "c"]
    values = np.zeros((6, 6), dtype=np.int64)
    values[0, 2], values[1, 0], values[5, 3], values[4, 4] = 7, 5, 3, 1
    nodes = plots.grouping(6, hosts, cells=4)
    assert nodes.labels == ["b", "a", "c"] and nodes.axis == "node"
    assert "the run's 3 hosts, in the order of their first rank" in nodes.caption
    assert plots.grouped(dense_matrix("p2p", "bytes", values), nodes).tolist() == [
        [7, 0, 0], [5, 0, 0], [0, 3, 1]]
    # One host only, more hosts than cells, or a host list of another run: blocks of ranks.
    for other in (["a"] * 6, list("abcdef"), hosts[:5], None):
        assert plots.grouping(6, other, cells=4).axis == "ranks (blocks of 2)"


def test_large_run_renders_quickly():
    size = 1024
    counts = np.zeros((size, size), dtype=np.int64)
    ranks = np.arange(size)
    counts[ranks, (ranks + 1) % size] = 10
    counts[5, 1000] = 1  # a lone message stays visible in its block
    run = make_monitor_run([monitor_point("p2p", counts, counts * 1000)], ranks=size)
    start = time.monotonic()
    section = plots.render(run)
    assert time.monotonic() - start < 15
    maps = [plot for plot in plots_of(section.parts) if plot.name == "map-p2p"]
    assert maps[0].caption.endswith(" Each cell sums a block of 4×4 rank pairs.")
    blocks = plots.grouping(size)
    shrunk = plots.grouped(dense_matrix("p2p", "counts", counts), blocks)
    assert shrunk.shape == (256, 256) and shrunk[1, 250] == 1 and shrunk[1, 1] == 30
    assert shrunk.sum() == counts.sum()
    assert plots_of(section.parts)[1].name == "ranks-p2p"


def test_pairs_table_lists_ten():
    size = 6
    counts = np.ones((size, size), dtype=np.int64) - np.eye(size, dtype=np.int64)
    sizes = counts * (np.arange(size * size).reshape(size, size) + 1)
    html = plots.pairs_table(monitor.summarize(
        monitor.Traffic("p2p", dense_matrix("p2p", "counts", counts),
                        dense_matrix("p2p", "bytes", sizes))))
    assert html.count("<tr>") == 1 + monitor.TOP_PAIRS
    assert "<td>1</td><td>5</td><td>4</td><td>35 B</td><td>1</td>" in html


def test_empty_messages_draw_messages_per_rank():
    counts = np.array([[0, 3], [3, 0]])
    run = make_monitor_run([monitor_point("coll", counts, np.zeros((2, 2)))])
    plot = plots_of(plots.render(run).parts)[1]
    assert plot.name == "ranks-coll"
    assert plot.caption == "collectives: messages each rank sent and received (what it sent " \
                           "itself included)."


def test_run_without_traffic_or_matrices():
    quiet = make_monitor_run([monitor_point(kind, np.zeros((2, 2)), np.zeros((2, 2)))
                              for kind in ("p2p", "coll", "osc")])
    section = plots.render(quiet)
    assert section.parts == ["<p>No traffic counted: point-to-point, collectives, one-sided.</p>"]
    assert plots.render(make_monitor_run([])).parts == [
        "<p>This run holds no communication matrix.</p>"]


def test_report_escapes_what_the_library_wrote(tmp_path):
    point = monitor_point("coll", [[0, 1], [0, 0]], [[0, 8], [0, 0]],
                          backend_reason="<b>odd</b> & more")
    path = tmp_path / "monitor.jsonl"
    run = make_monitor_run([point])
    run.path = path
    page = report.write_report([run], tmp_path).read_text(encoding="utf-8")
    assert "<b>odd</b>" not in page
    assert "&lt;b&gt;odd&lt;/b&gt; &amp; more" in page
    assert (tmp_path / "plots" / "monitor-map-coll.png").is_file()


@pytest.mark.parametrize("kind", ["p2p", "coll", "osc", "flushed"])
def test_every_kind_has_a_label(kind):
    assert monitor.label(kind) != kind
