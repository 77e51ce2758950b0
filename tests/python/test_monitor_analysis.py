"""The monitor analysis on runs whose numbers are known: totals, senders, pairs, shape, backend."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import MONITOR_FIXTURE, dense, dense_matrix, make_monitor_run, monitor_point
from mpilens import results
from mpilens.analysis import monitor
from mpilens.matrices import Traffic

KIB, MIB = 1024, 1024 ** 2
EMPTY4 = np.zeros((4, 4), dtype=np.int64)
REASON = "no Open MPI pml/monitoring component (not Open MPI, or built without it)"


def traffic(counts, sizes, kind: str = "p2p", **backend) -> Traffic:
    return Traffic(kind, dense_matrix(kind, "counts", counts), dense_matrix(kind, "bytes", sizes),
                   **backend)


def chain() -> Traffic:
    """4 ranks in a line, 0↔1↔2↔3: 6 of 12 pairs; 480 messages, 12 MiB; rank 0 sends 4 MiB."""
    counts = [[0, 80, 0, 0], [80, 0, 80, 0], [0, 80, 0, 80], [0, 0, 80, 0]]
    sizes = [[0, 4 * MIB, 0, 0], [2 * MIB, 0, 1 * MIB, 0],
             [0, 1 * MIB, 0, 1 * MIB], [0, 0, 3 * MIB, 0]]
    return traffic(counts, sizes)


def test_chain_numbers():
    s = monitor.summarize(chain())
    assert (s.ranks, s.messages, s.bytes) == (4, 480, 12 * MIB)
    assert s.sent_bytes.tolist() == [4 * MIB, 3 * MIB, 2 * MIB, 3 * MIB]
    assert s.received_bytes.tolist() == [2 * MIB, 5 * MIB, 4 * MIB, 1 * MIB]
    assert s.sent_messages.tolist() == [80, 160, 160, 80]
    assert s.received_messages.tolist() == [80, 160, 160, 80]
    assert (s.active_pairs, s.possible_pairs, s.density) == (6, 12, 0.5)
    assert [(p.sender, p.receiver, p.bytes, p.messages) for p in s.top] == [
        (0, 1, 4 * MIB, 80), (3, 2, 3 * MIB, 80), (1, 0, 2 * MIB, 80), (1, 2, MIB, 80),
        (2, 1, MIB, 80), (2, 3, MIB, 80)]
    assert s.tied_top == 1 and not s.symmetric
    # |4-2| + |1-1| + |1-3| = 4 MiB unanswered of the 12 MiB.
    assert s.one_way == pytest.approx(4 / 12)
    assert monitor.kind_sentences(s) == [
        "point-to-point: 12 MiB in 480 messages between 6 of 12 pairs (50%); rank 0 sends most "
        "(4 MiB); busiest pair 0→1 (4 MiB)",
        "point-to-point: asymmetric, 33% of the bytes between ranks go one way with no "
        "matching return"]


def test_ties_on_bytes_are_broken_by_messages():
    s = monitor.summarize(traffic([[0, 3, 1], [0, 0, 0], [0, 9, 0]],
                                  [[0, 300, 300], [0, 0, 0], [0, 300, 0]]))
    assert [(p.sender, p.receiver) for p in s.top] == [(2, 1), (0, 1), (0, 2)]
    assert s.tied_top == 1
    # Rank 0 sent 600 B in 4 messages, rank 2 300 B in 9: bytes decide.
    assert "rank 0 sends most (600 B)" in monitor.kind_sentences(s)[0]


def test_symmetric_pattern_and_everyone_alike():
    counts = np.ones((3, 3), dtype=np.int64) - np.eye(3, dtype=np.int64)
    s = monitor.summarize(traffic(counts, counts * 64))
    assert s.symmetric and s.one_way == 0 and s.tied_top == 6
    assert monitor.kind_sentences(s) == [
        "point-to-point: 384 B in 6 messages between 6 of 6 pairs (100%); every rank sends "
        "128 B; every pair that talks carries 64 B",
        "point-to-point: symmetric, every pair exchanges the same both ways"]


def test_symmetry_is_of_the_bytes():
    """Two ranks exchanging the same bytes, one in more messages than the other."""
    s = monitor.summarize(traffic([[0, 4], [1, 0]], [[0, KIB], [KIB, 0]]))
    assert s.symmetric and s.one_way == 0
    lopsided = monitor.summarize(traffic([[0, 4], [1, 0]], [[0, 3 * KIB], [KIB, 0]]))
    assert not lopsided.symmetric and lopsided.one_way == pytest.approx(0.5)


def test_few_and_many_ties_among_senders_and_pairs():
    few = monitor.summarize(traffic([[0, 1, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]],
                                    [[0, 8, 0, 0], [0, 0, 0, 0], [8, 0, 0, 0], [0, 0, 0, 0]]))
    assert "ranks 0 and 2 send most (8 B each)" in monitor.kind_sentences(few)[0]
    counts = np.roll(np.eye(8, dtype=np.int64), 1, axis=1)  # a ring of 8
    sizes = counts * 16
    counts[0, 2], sizes[0, 2] = 1, 8  # one more pair, lighter: not every pair ties
    sentence = monitor.kind_sentences(monitor.summarize(traffic(counts, sizes)))[0]
    assert "rank 0 sends most (24 B)" in sentence
    assert "8 pairs tie as busiest (16 B each)" in sentence
    three = monitor.summarize(traffic([[0, 1, 1, 1, 0]] + [[0] * 5] * 3 + [[1, 0, 0, 0, 0]],
                                      [[0, 5, 5, 5, 0]] + [[0] * 5] * 3 + [[1, 0, 0, 0, 0]]))
    assert "busiest pairs 0→1, 0→2 and 0→3 (5 B each)" in monitor.kind_sentences(three)[0]


def test_messages_to_oneself_are_told_apart():
    s = monitor.summarize(traffic([[2, 1], [0, 0]], [[2 * KIB, KIB], [0, 0]]))
    assert (s.messages, s.bytes, s.active_pairs, s.self_ranks, s.self_bytes) == (
        3, 3 * KIB, 1, 1, 2 * KIB)
    assert s.sent_bytes.tolist() == [3 * KIB, 0]
    assert [(p.sender, p.receiver) for p in s.top] == [(0, 1)]
    assert monitor.kind_sentences(s)[0] == (
        "point-to-point: 3 KiB in 3 messages between 1 of 2 pairs (50%), of which 2 KiB sent by "
        "1 rank to itself; rank 0 sends most (3 KiB); busiest pair 0→1 (1 KiB)")


def test_empty_messages_are_told_in_messages():
    """Barriers only: every message carries 0 bytes."""
    counts = np.ones((2, 2), dtype=np.int64) * 3 - np.eye(2, dtype=np.int64) * 3
    s = monitor.summarize(traffic(counts, np.zeros((2, 2)), "coll", backend="pmpi"))
    assert not s.by_bytes and s.has_traffic
    assert monitor.kind_sentences(s) == [
        "collectives (logical pattern): 0 B in 6 messages between 2 of 2 pairs (100%); every "
        "rank sends 3 messages; every pair that talks carries 3 messages",
        "collectives: symmetric, every pair exchanges the same both ways"]


def test_single_rank():
    s = monitor.summarize(traffic([[4]], [[40]]))
    assert s.density is None and s.top == [] and s.one_way is None
    assert monitor.kind_sentences(s) == [
        "point-to-point: 40 B in 4 messages, of which 40 B sent by 1 rank to itself; rank 0 "
        "sends most (40 B)"]


def test_kind_without_traffic():
    s = monitor.summarize(traffic(EMPTY4, EMPTY4, "osc", backend="pmpi"))
    assert not s.has_traffic and s.top == [] and s.tied_top == 0
    assert monitor.kind_sentences(s) == ["one-sided: none"]


@pytest.mark.parametrize("backend,reason,heading,text", [
    ("pmpi", REASON, f"collectives (logical pattern, Open MPI's monitoring not used: {REASON})",
     f"{monitor.LOGICAL_TEXT} Open MPI's monitoring, which would give those messages, was not "
     f"used: {REASON}."),
    ("pmpi", None, "collectives (logical pattern)", monitor.LOGICAL_TEXT),
    ("ompi-mpit", None, "collectives (messages Open MPI really sent)", monitor.DECOMPOSED_TEXT),
])
def test_collectives_say_what_they_count(backend, reason, heading, text):
    s = monitor.summarize(traffic(dense(chain().counts), dense(chain().bytes), "coll",
                                  backend=backend, backend_reason=reason))
    assert monitor.heading(s) == heading
    assert monitor.backend_text(s) == text
    assert monitor.kind_sentences(s)[0].startswith(heading + ": 12 MiB in 480 messages")


def test_point_to_point_heading_ignores_backend():
    s = monitor.summarize(traffic(EMPTY4, EMPTY4, backend="pmpi"))
    assert monitor.heading(s) == "point-to-point"
    assert monitor.backend_text(s).startswith("Counted at the MPI interface: every send")


def test_diagnose_fixture():
    assert monitor.diagnose(results.load(MONITOR_FIXTURE)) == [
        "point-to-point: 10 KiB in 10 messages between 4 of 12 pairs (33%); rank 0 sends most "
        "(4 KiB); busiest pair 0→1 (4 KiB)",
        "point-to-point: asymmetric, 100% of the bytes between ranks go one way with no "
        "matching return",
        f"collectives (logical pattern, Open MPI's monitoring not used: {REASON}): 1.5 KiB in 6 "
        "messages between 3 of 12 pairs (25%); rank 0 sends most (1.5 KiB); every pair that "
        "talks carries 512 B",
        "collectives: asymmetric, 100% of the bytes between ranks go one way with no matching "
        "return",
        "one-sided: none"]


def test_diagnose_warns_when_nothing_was_counted():
    run = make_monitor_run([monitor_point(kind, EMPTY4, EMPTY4) for kind in ("p2p", "coll")])
    assert monitor.diagnose(run) == [
        "point-to-point: none", "collectives: none",
        "warning: no message of any kind was counted; if the program does communicate, it may "
        "use another MPI library than the one libmpilens-monitor was built for, or be linked "
        "statically"]
    assert monitor.diagnose(make_monitor_run([])) == []


def test_compare_totals_changes_and_backends():
    a = make_monitor_run([monitor_point("p2p", dense(chain().counts), dense(chain().bytes)),
                          monitor_point("coll", EMPTY4, EMPTY4),
                          monitor_point("osc", EMPTY4, EMPTY4)])
    sizes = dense(chain().bytes).copy()
    sizes[0, 1], sizes[3, 2], sizes[1, 2] = MIB, 6 * MIB, MIB
    counts = dense(chain().counts)
    b = make_monitor_run([monitor_point("p2p", counts, sizes),
                          monitor_point("coll", counts, sizes, backend="ompi-mpit"),
                          monitor_point("osc", EMPTY4, EMPTY4)])
    assert monitor.compare(a, b) == [
        "point-to-point: 12 MiB in 480 messages vs 12 MiB in 480 messages",
        "point-to-point, biggest changes from A to B: 0→1 4 MiB → 1 MiB; 3→2 3 MiB → 6 MiB",
        "collectives: 0 B in 0 messages vs 12 MiB in 480 messages",
        "collectives: counted by pmpi in A, by ompi-mpit in B, so they count different things",
        "collectives, biggest changes from A to B: 3→2 0 B → 6 MiB; 1→0 0 B → 2 MiB; "
        "0→1 0 B → 1 MiB",
        "one-sided: none in either"]


def test_compare_factor_ranks_and_missing_kinds():
    small = traffic([[0, 1], [0, 0]], [[0, KIB], [0, 0]])
    a = make_monitor_run([monitor_point("p2p", dense(small.counts), dense(small.bytes)),
                          monitor_point("osc", dense(small.counts), dense(small.bytes))])
    b = make_monitor_run([monitor_point("p2p", dense(chain().counts), dense(chain().bytes)),
                          monitor_point("coll", EMPTY4, EMPTY4)])
    assert monitor.compare(a, b) == [
        "point-to-point: 1 KiB in 1 message vs 12 MiB in 480 messages (12288.0× the bytes in B)",
        "point-to-point: 2 ranks in A, 4 in B, so pairs are not compared",
        "one-sided: only in A",
        "collectives: only in B"]
    same = make_monitor_run([monitor_point("p2p", dense(small.counts), dense(small.bytes) * 4)])
    assert monitor.compare(same, make_monitor_run(
        [monitor_point("p2p", dense(small.counts), dense(small.bytes) * 4)])) == [
        "point-to-point: 4 KiB in 1 message vs 4 KiB in 1 message",
        "point-to-point: every pair carries the same in A and B"]
    assert monitor.compare(same, a)[0] == ("point-to-point: 4 KiB in 1 message vs 1 KiB in 1 "
                                           "message (4.0× the bytes in A)")
