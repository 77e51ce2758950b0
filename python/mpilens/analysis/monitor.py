"""What a monitor run's matrices say: how much each kind of communication carried, who sends and
who talks most, and the shape of the pattern, as numbers and sentences (docs/monitor.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from ..lazy_numpy import np
from ..matrices import FLUSHED, Matrix, Pairs, Traffic, traffic_of
from ..results import Run
from ..text import counted, percent
from ..units import format_size

KIND_LABELS = {
    "p2p": "point-to-point",
    "coll": "collectives",
    "osc": "one-sided",
    FLUSHED: "flushed matrices",
}
TOP_PAIRS = 10
# Tied ranks or pairs are named up to this many, and counted beyond.
NAMED_TIES = 3
BIGGEST_CHANGES = 3

BACKEND_TEXTS = {
    "p2p": "Counted at the MPI interface: every send by its destination; bytes are the payload "
    "(count × datatype size).",
    "osc": "Counted at the MPI interface: each one-sided operation as one message from origin to "
    "target; bytes are the data accessed at the target.",
    FLUSHED: "Read from flush files: the sum of the kinds of communication the program's flags "
    "selected, which the files do not record.",
}
LOGICAL_TEXT = (
    "The logical pattern of each collective call (a broadcast as root → every other "
    "rank, a reduction as every other rank → root, ...), not the messages the MPI "
    "library sent to carry it out."
)
DECOMPOSED_TEXT = (
    "The point-to-point messages Open MPI really sent to carry out the collectives "
    "(its pml/monitoring component, read through MPI_T), with any other traffic "
    "the library generates internally, such as for creating communicators."
)


def label(kind: str) -> str:
    return KIND_LABELS.get(kind, kind)


@dataclass(frozen=True)
class Pair:
    sender: int
    receiver: int
    messages: int
    bytes: int


@dataclass(frozen=True, eq=False)
class Summary:
    """One kind's traffic in numbers. Pairs are of distinct ranks; what ranks send to themselves
    counts in the totals and the per-rank sums, and on its own in self_*."""

    kind: str
    ranks: int
    messages: int
    bytes: int
    sent_bytes: np.ndarray  # per rank
    received_bytes: np.ndarray
    sent_messages: np.ndarray
    received_messages: np.ndarray
    active_pairs: int
    self_ranks: int  # ranks that sent to themselves
    self_messages: int
    self_bytes: int
    top: List[Pair]  # the busiest pairs, at most TOP_PAIRS: by bytes, ties by messages
    tied_top: int  # pairs as busy as the busiest
    # Of the bytes (messages when all are empty) between distinct ranks, the share that no
    # return matches; None without any.
    one_way: Optional[float]
    backend: Optional[str]
    backend_reason: Optional[str]

    @property
    def has_traffic(self) -> bool:
        return self.messages > 0 or self.bytes > 0

    @property
    def possible_pairs(self) -> int:
        return self.ranks * (self.ranks - 1)

    @property
    def density(self) -> Optional[float]:
        """The share of pairs of distinct ranks that exchanged anything."""
        return self.active_pairs / self.possible_pairs if self.possible_pairs else None

    @property
    def symmetric(self) -> bool:
        return self.one_way == 0

    @property
    def by_bytes(self) -> bool:
        """Amounts are told in bytes, or in messages when every message was empty (barriers)."""
        return self.bytes > 0


def _busiest(pairs: Pairs) -> Tuple[List[Pair], int]:
    """The TOP_PAIRS busiest pairs of distinct ranks, and how many tie with the first."""
    between = pairs.senders != pairs.receivers
    senders, receivers = pairs.senders[between], pairs.receivers[between]
    sizes, counts = pairs.bytes[between], pairs.messages[between]
    # lexsort sorts by its last key first: bytes, then messages, both descending.
    order = np.lexsort((receivers, senders, -counts, -sizes))
    top = [
        Pair(int(senders[i]), int(receivers[i]), int(counts[i]), int(sizes[i]))
        for i in order[:TOP_PAIRS]
    ]
    if not top:
        return top, 0
    first = order[0]
    return top, int(np.count_nonzero((sizes == sizes[first]) & (counts == counts[first])))


def _one_way(matrix: Matrix) -> Optional[float]:
    """Of what distinct ranks sent each other, the share not matched by the reverse direction:
    0 when every pair exchanges the same both ways, 1 when no pair answers at all."""
    between = matrix.senders != matrix.receivers
    values = matrix.values[between]
    total = int(values.sum())
    if not total:
        return None
    reverse = matrix.at(matrix.receivers[between] * matrix.ranks + matrix.senders[between])
    # Over every ordered pair, |a→b − b→a|: entries count their difference with their return,
    # and an entry without return once more for the pair b→a, which has no entry.
    unmatched = int(np.abs(values - reverse).sum()) + int(values[reverse == 0].sum())
    return float(unmatched) / 2 / total


def summarize(traffic: Traffic) -> Summary:
    counts, sizes, pairs = traffic.counts, traffic.bytes, traffic.pairs
    top, tied = _busiest(pairs)
    itself = pairs.senders == pairs.receivers
    by_bytes = sizes.total > 0
    return Summary(
        kind=traffic.kind,
        ranks=traffic.ranks,
        messages=counts.total,
        bytes=sizes.total,
        sent_bytes=sizes.sent(),
        received_bytes=sizes.received(),
        sent_messages=counts.sent(),
        received_messages=counts.received(),
        active_pairs=int(np.count_nonzero(~itself)),
        self_ranks=int(np.count_nonzero(itself)),
        self_messages=int(pairs.messages[itself].sum()),
        self_bytes=int(pairs.bytes[itself].sum()),
        top=top,
        tied_top=tied,
        one_way=_one_way(sizes if by_bytes else counts),
        backend=traffic.backend,
        backend_reason=traffic.backend_reason,
    )


# --- words ---------------------------------------------------------------------------------------


def _amount(summary: Summary, nbytes: int, messages: int) -> str:
    """An amount of traffic: bytes, or messages for a kind whose messages are all empty."""
    return format_size(nbytes) if summary.by_bytes else counted(messages, "message")


def _totals(summary: Summary) -> str:
    return f"{format_size(summary.bytes)} in {counted(summary.messages, 'message')}"


def heading(summary: Summary) -> str:
    """The kind's name, and for collectives what their matrices show."""
    if summary.kind != "coll" or summary.backend is None:
        return label(summary.kind)
    if summary.backend == "ompi-mpit":
        return "collectives (messages Open MPI really sent)"
    if summary.backend_reason:
        return (
            "collectives (logical pattern, Open MPI's monitoring not used: "
            f"{summary.backend_reason})"
        )
    return "collectives (logical pattern)"


def backend_text(summary: Summary) -> str:
    """What the kind's numbers are, for the report."""
    if summary.kind == "coll" and summary.backend == "ompi-mpit":
        return DECOMPOSED_TEXT
    if summary.kind == "coll" and summary.backend == "pmpi":
        reason = (
            f" Open MPI's monitoring, which would give those messages, was not used: "
            f"{summary.backend_reason}."
            if summary.backend_reason
            else ""
        )
        return LOGICAL_TEXT + reason
    return BACKEND_TEXTS.get(summary.kind, "")


def _ranks_text(ranks: Sequence[int]) -> str:
    if len(ranks) > NAMED_TIES:
        return f"{len(ranks)} ranks"
    names = [str(rank) for rank in ranks]
    return "ranks " + (", ".join(names[:-1]) + " and " + names[-1])


def _senders_text(summary: Summary) -> str:
    keys = list(zip(summary.sent_bytes.tolist(), summary.sent_messages.tolist()))
    most = max(keys)
    leaders = [rank for rank, key in enumerate(keys) if key == most]
    sent = _amount(summary, *most)
    if len(leaders) == summary.ranks and summary.ranks > 1:
        return f"every rank sends {sent}"
    if len(leaders) == 1:
        return f"rank {leaders[0]} sends most ({sent})"
    return f"{_ranks_text(leaders)} send most ({sent} each)"


def _pair_name(pair: Pair) -> str:
    return f"{pair.sender}→{pair.receiver}"


def _busiest_text(summary: Summary) -> str:
    first = summary.top[0]
    each = _amount(summary, first.bytes, first.messages)
    if summary.tied_top == 1:
        return f"busiest pair {_pair_name(first)} ({each})"
    if summary.tied_top == summary.active_pairs:
        return f"every pair that talks carries {each}"
    if summary.tied_top <= NAMED_TIES:
        names = [_pair_name(pair) for pair in summary.top[: summary.tied_top]]
        return f"busiest pairs {', '.join(names[:-1])} and {names[-1]} ({each} each)"
    return f"{summary.tied_top} pairs tie as busiest ({each} each)"


def _traffic_sentence(summary: Summary) -> str:
    text = f"{heading(summary)}: {_totals(summary)}"
    if summary.density is not None:
        text += (
            f" between {summary.active_pairs} of {summary.possible_pairs} pairs "
            f"({percent(summary.density)})"
        )
    if summary.self_ranks:
        itself = "itself" if summary.self_ranks == 1 else "themselves"
        own = _amount(summary, summary.self_bytes, summary.self_messages)
        text += f", of which {own} sent by {counted(summary.self_ranks, 'rank')} to {itself}"
    text += f"; {_senders_text(summary)}"
    return text + (f"; {_busiest_text(summary)}" if summary.top else "")


def _shape_sentence(summary: Summary) -> List[str]:
    if summary.one_way is None:
        return []
    name = label(summary.kind)
    if summary.symmetric:
        return [f"{name}: symmetric, every pair exchanges the same both ways"]
    unit = "bytes" if summary.by_bytes else "messages"
    return [
        f"{name}: asymmetric, {percent(summary.one_way)} of the {unit} between ranks go "
        "one way with no matching return"
    ]


def kind_sentences(summary: Summary) -> List[str]:
    if not summary.has_traffic:
        return [f"{label(summary.kind)}: none"]
    return [_traffic_sentence(summary), *_shape_sentence(summary)]


def diagnose(run: Run) -> List[str]:
    """Sentences for the report's findings, warnings starting with "warning:"."""
    found = [summarize(traffic) for traffic in traffic_of(run).values()]
    sentences = [sentence for summary in found for sentence in kind_sentences(summary)]
    if found and not any(summary.has_traffic for summary in found):
        sentences.append(
            "warning: no message of any kind was counted; if the program does "
            "communicate, it may use another MPI library than the one "
            "libmpilens-monitor was built for, or be linked statically"
        )
    return sentences


# --- comparison ----------------------------------------------------------------------------------


def _factor(a: int, b: int) -> str:
    if a == b or not a or not b:
        return ""
    return f" ({b / a:.1f}× the bytes in B)" if b > a else f" ({a / b:.1f}× the bytes in A)"


def _changes(traffic_a: Traffic, traffic_b: Traffic, by_bytes: bool) -> List[str]:
    """The pairs whose traffic (bytes, or messages when by_bytes is False) changed most from A
    to B."""
    name = label(traffic_a.kind)
    if traffic_a.ranks != traffic_b.ranks:
        return [
            f"{name}: {traffic_a.ranks} ranks in A, {traffic_b.ranks} in B, so pairs are "
            "not compared"
        ]
    a, b = (traffic_a.bytes, traffic_b.bytes) if by_bytes else (traffic_a.counts, traffic_b.counts)
    ranks = a.ranks
    cells = np.union1d(a.cells, b.cells)
    cells = cells[cells // ranks != cells % ranks]
    before, after = a.at(cells), b.at(cells)
    moved = np.abs(after - before)
    order = [int(i) for i in np.argsort(-moved, kind="stable")[:BIGGEST_CHANGES] if moved[i]]
    if not order:
        return [f"{name}: every pair carries the same in A and B"]
    shown = format_size if by_bytes else (lambda n: counted(n, "message"))
    texts = [
        f"{cells[i] // ranks}→{cells[i] % ranks} {shown(int(before[i]))} → {shown(int(after[i]))}"
        for i in order
    ]
    return [f"{name}, biggest changes from A to B: " + "; ".join(texts)]


def _kind_comparison(
    kind: str, traffic_a: Optional[Traffic], traffic_b: Optional[Traffic]
) -> List[str]:
    name = label(kind)
    if traffic_a is None or traffic_b is None:
        return [f"{name}: only in {'B' if traffic_a is None else 'A'}"]
    a, b = summarize(traffic_a), summarize(traffic_b)
    if not a.has_traffic and not b.has_traffic:
        return [f"{name}: none in either"]
    sentences = [f"{name}: {_totals(a)} vs {_totals(b)}{_factor(a.bytes, b.bytes)}"]
    if a.backend != b.backend:
        sentences.append(
            f"{name}: counted by {a.backend or 'an unknown backend'} in A, by "
            f"{b.backend or 'an unknown backend'} in B, so they count different "
            "things"
        )
    return sentences + _changes(traffic_a, traffic_b, a.by_bytes or b.by_bytes)


def compare(run_a: Run, run_b: Run) -> List[str]:
    """Sentences setting run A's traffic against run B's, kind by kind."""
    kinds_a: Dict[str, Traffic] = traffic_of(run_a)
    kinds_b: Dict[str, Traffic] = traffic_of(run_b)
    kinds = [*kinds_a, *(kind for kind in kinds_b if kind not in kinds_a)]
    return [
        sentence
        for kind in kinds
        for sentence in _kind_comparison(kind, kinds_a.get(kind), kinds_b.get(kind))
    ]
