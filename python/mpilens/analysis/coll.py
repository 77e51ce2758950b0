"""What the coll family's points say: each method's latency estimate against the per-rank
operation latency OL_i of seed 003, over rank counts, and against the truth under --hop-delay.

The contract is docs/coll.md. A run may hold several rank counts: `mpilens coll` writes one file
per count, and the report reads them as one run (results.merge); every point names its count in
params.np. Plain Python (no numpy), like the overlap analysis: the CLI imports it on every start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .. import program_options
from ..results import Record, Run, record_integer, record_number
from ..text import columns, percent, ranges
from ..units import format_size, format_time
from .conditions import crowding
from .overlap import run_names

PROGRAM = "mpilens-coll"
OPS = program_options.choices(PROGRAM, "op")
# The program's methods (--method), in the order of seed 003 figure 2, then the seed's own.
METHODS = program_options.choices(PROGRAM, "method")
# What OSU and IMB would report, computed from the barrier method's runs, not run on their own.
DERIVED = ("osu", "imb")
# Every estimate a report draws, the seed's first.
ESTIMATES = (
    "oli",
    "rounds",
    "rounds-reverse",
    "barrier",
    "barrier-ring",
    "barrier-dissem",
    "ack",
    "sendlat",
    "osu",
    "imb",
)
OLI = "oli"
# The library's own operation, then the reference algorithms: written with point-to-point by the
# program, so that their tree, and under --hop-delay their true latency, are known.
ALGOS = program_options.choices(PROGRAM, "algo")
WAITS = program_options.choices(PROGRAM, "wait")
# A point's estimate from its blocks: the median (mpilens's default) or the mean (the seed's); the
# program records both (latency_median_ns, latency_mean_ns) and names its choice in params.
ESTIMATORS = program_options.choices(PROGRAM, "estimator")
HOP_DELAY_MAX_NS = 10**9
BLOCK_RANGE = program_options.int_range(PROGRAM, "block")

OP_NAMES = {"bcast": "broadcast", "reduce": "reduction", "allreduce": "allreduce"}
SHAPE_NAMES = {"linear": "chain", "backward": "backward chain", "binomial": "binomial tree"}

# An estimate this close to oli (or oli to the truth) agrees with it: the precision the issue asks
# of the method (within 10% of the truth).
AGREEMENT = 0.10
# A factor from here on is told as "by 2.1x" rather than as a percentage.
FACTOR_FROM = 2.0
# A child's OL_i below its parent's by more than this share of the largest OL_i breaks the tree.
SHAPE_TOLERANCE = 0.05
# Two runs' oli estimates this close are the same.
SAME = 0.05
# The seed's stopping rule: blocks until their relative standard deviation is below 3%.
DEFAULT_RSD = 0.03
# Block results scattered beyond this make a point's estimate doubtful.
NOISY_RSD = 0.10
# Spinning ranks off their cores more than this share of a point's time (the machine's other
# processes, or its host: stats.off_core_share), or a virtual machine whose host took more than
# this share of its CPU time (stats.steal_share), were waiting for a core, not only for messages:
# a quiet virtual machine here loses up to 7% to its host; one process spinning beside 2 ranks
# takes 33% to 48% and puts oli 48% to 58% above the truth (docs/methods/coll.md, "Lost cores").
OFF_CORE_LIMIT = 0.10

# Why a method misses OL, when it misses it the way it is known to (seed 003, section 3).
BELOW_REASONS = {
    "rounds": "pipelining: a broadcast starts before the previous one has reached every rank",
    "rounds-reverse": "pipelining: an operation starts before the previous one is over",
    "sendlat": "it times only the root's gap between back-to-back operations",
    "osu": "averages of local times miss the last receiver",
}
ABOVE_REASONS = {
    "barrier": "the barrier's own time is counted",
    "barrier-ring": "the ring barrier's own time is counted",
    "barrier-dissem": "the dissemination barrier's own time is counted",
    "ack": "the acknowledgements to the root are counted",
}
# Seed 003 (figure 11): oli always falls between the rounds methods, which pipeline, and the
# methods that wait for every rank after each operation. An estimate on the wrong side of oli
# means one of the two was disturbed.
LOWER_BOUNDS = ("rounds", "rounds-reverse")
UPPER_BOUNDS = ("barrier", "barrier-ring", "barrier-dissem", "ack")


def _numbers(values: object) -> List[Optional[float]]:
    return [record_number(value) for value in values] if isinstance(values, list) else []


def _ranks_list(values: object) -> List[int]:
    found = [record_integer(value) for value in values] if isinstance(values, list) else []
    return [rank for rank in found if rank is not None]


# --- the points, by configuration, method and rank count ----------------------------------------


@dataclass(frozen=True)
class Config:
    """What one curve of a report is drawn for: an operation by one implementation."""

    op: str
    algo: str
    size_bytes: int
    hop_delay_ns: int

    @property
    def sort_key(self) -> Tuple[int, int, int, int]:
        return (
            OPS.index(self.op) if self.op in OPS else len(OPS),
            ALGOS.index(self.algo) if self.algo in ALGOS else len(ALGOS),
            self.size_bytes,
            self.hop_delay_ns,
        )


def _field(point: Record, name: str) -> object:
    params = point.get("params")
    value = params.get(name) if isinstance(params, dict) else None
    return point.get(name) if value is None else value


def method_of(point: Record) -> Optional[str]:
    method = _field(point, "method")
    return method if isinstance(method, str) else None


def ranks_of(point: Record) -> Optional[int]:
    return record_integer(_field(point, "np"))


def config_of(point: Record) -> Optional[Config]:
    op, algo = _field(point, "op"), _field(point, "algo")
    if not isinstance(op, str) or not isinstance(algo, str):
        return None
    return Config(
        op,
        algo,
        record_integer(_field(point, "size_bytes")) or 0,
        record_integer(_field(point, "hop_delay_ns")) or 0,
    )


Series = Dict[Config, Dict[str, Dict[int, Record]]]


def series(run: Run) -> Series:
    """config → method → rank count → point, configurations in report order."""
    found: Series = {}
    for point in run.points:
        config, method, ranks = config_of(point), method_of(point), ranks_of(point)
        if (
            point.get("family", "coll") != "coll"
            or config is None
            or method is None
            or ranks is None
        ):
            continue
        found.setdefault(config, {}).setdefault(method, {})[ranks] = point
    return {config: found[config] for config in sorted(found, key=lambda c: c.sort_key)}


def methods_present(by_method: Mapping[str, Mapping[int, Record]]) -> List[str]:
    """The estimates of one configuration, in report order (unknown names last)."""
    known = [method for method in ESTIMATES if method in by_method]
    return known + sorted(method for method in by_method if method not in ESTIMATES)


def latency(point: Optional[Record]) -> Optional[float]:
    return None if point is None else record_number(point["stats"].get("latency_ns"))


def estimator_of(point: Record) -> str:
    """The estimator behind latency_ns: files written before --estimator existed used medians."""
    name = _field(point, "estimator")
    return name if isinstance(name, str) else "median"


def estimate_under(point: Record, estimator: str) -> Optional[float]:
    return record_number(point["stats"].get(f"latency_{estimator}_ns"))


def truth(point: Optional[Record]) -> Optional[float]:
    return None if point is None else record_number(point["stats"].get("truth_ns"))


def curve(by_ranks: Mapping[int, Record]) -> List[Tuple[int, float]]:
    """(rank count, latency) of one method, by rank count, where it has a latency."""
    return [
        (ranks, value)
        for ranks in sorted(by_ranks)
        if (value := latency(by_ranks[ranks])) is not None
    ]


def truth_curve(by_method: Mapping[str, Mapping[int, Record]]) -> List[Tuple[int, float]]:
    """(rank count, analytic latency) from whichever points carry it."""
    found: Dict[int, float] = {}
    for by_ranks in by_method.values():
        for ranks, point in by_ranks.items():
            value = truth(point)
            if value is not None:
                found.setdefault(ranks, value)
    return sorted(found.items())


def _delay_text(hop_delay_ns: int) -> str:
    return f"hop delay {format_time(hop_delay_ns)}" if hop_delay_ns else "no hop delay"


def labels(configs: Iterable[Config]) -> Dict[Config, str]:
    """op/algo, with the size and hop delay when the run holds several of them."""
    configs = list(configs)
    varied = len({(c.size_bytes, c.hop_delay_ns) for c in configs}) > 1
    return {
        c: f"{c.op}/{c.algo}"
        + (f" ({format_size(c.size_bytes)}, {_delay_text(c.hop_delay_ns)})" if varied else "")
        for c in configs
    }


def slugs(configs: Iterable[Config]) -> Dict[Config, str]:
    """Names for files: op-algo, with the size and hop delay when the run holds several."""
    configs = list(configs)
    varied = len({(c.size_bytes, c.hop_delay_ns) for c in configs}) > 1
    return {
        c: f"{c.op}-{c.algo}" + (f"-{c.size_bytes}B-hop{c.hop_delay_ns}ns" if varied else "")
        for c in configs
    }


# --- the algorithms' trees -----------------------------------------------------------------------


def parent(algo: str, rank: int, ranks: int) -> Optional[int]:
    """Who sends the data to rank in a broadcast from rank 0 by a reference algorithm; None for
    the root and for an algorithm whose tree is not known."""
    if not 0 < rank < ranks:
        return None
    if algo == "linear":
        return rank - 1
    if algo == "backward":
        return (rank + 1) % ranks
    if algo == "binomial":
        return rank & (rank - 1)  # the rank less its lowest set bit
    if algo == "flat":
        return 0
    return None


def tree_edges(algo: str, ranks: int, op: str = "bcast") -> List[Tuple[int, int]]:
    """The reference algorithm's messages as (from, to) rank pairs, by receiving rank in the
    broadcast: parent → child for a broadcast, child → parent for a reduction (the data flows to
    the root). A reference allreduce reduces to the root, then broadcasts, on the same tree; its
    OL_j (the root entering last) is the broadcast part, so its edges are the broadcast's. Empty
    for the library, whose tree is not known."""
    pairs = [
        (up, rank) for rank in range(1, ranks) if (up := parent(algo, rank, ranks)) is not None
    ]
    return [(child, up) for up, child in pairs] if op == "reduce" else pairs


def depths(algo: str, ranks: int) -> List[Optional[int]]:
    """Hops from the root to each rank in the algorithm's tree; None but for the root when the
    tree is not known. Each rank's is its parent's plus one, found once: a chain of P ranks
    costs P steps, not P^2 / 2."""
    found: List[Optional[int]] = [0] + [None] * (ranks - 1)
    for rank in range(1, ranks):
        path: List[int] = []
        above: Optional[int] = rank
        while above is not None and found[above] is None:
            path.append(above)
            above = parent(algo, above, ranks)
        known = found[above] if above is not None else None
        if known is None:
            return [0] + [None] * (ranks - 1)
        for hops, member in enumerate(reversed(path), start=known + 1):
            found[member] = hops
    return found


# --- oli's per-rank profile ----------------------------------------------------------------------


@dataclass
class Profile:
    """The oli point of one configuration at one rank count, by rank."""

    config: Config
    ranks: int
    latency_ns: Optional[float]
    ol: List[Optional[float]]  # OL_i; None where not measured
    e: List[Optional[float]]
    rtl: List[Optional[float]]
    truth: List[Optional[float]]  # empty without an analytic truth
    argmax: Optional[int]
    gap_ns: Optional[float]
    gap_bound: List[int]
    remedy: Optional[str]
    fast: bool
    measured: List[int]  # --fast: the ranks measured in full
    audited: List[int]  # --fast: ranks drawn at random and measured with one block
    cheap: List[Optional[float]]  # --fast: the cheap pass's estimate per rank

    def value(self, rank: int) -> Optional[float]:
        return self.ol[rank] if 0 <= rank < len(self.ol) else None

    @property
    def unmeasured(self) -> List[int]:
        return [rank for rank in range(self.ranks) if self.value(rank) is None]


def _fit(values: List[Optional[float]], ranks: int) -> List[Optional[float]]:
    return (values + [None] * ranks)[:ranks] if values else []


def profile(point: Record) -> Profile:
    stats, params = point["stats"], point.get("params") or {}
    config = config_of(point) or Config("?", "?", 0, 0)
    ol = _numbers(stats.get("per_rank_ns"))
    ranks = ranks_of(point) or len(ol)
    argmax = record_integer(stats.get("argmax_rank"))
    if argmax is None and any(value is not None for value in ol):
        argmax = max((value, rank) for rank, value in enumerate(ol) if value is not None)[1]
    remedy = stats.get("remedy")
    return Profile(
        config=config,
        ranks=ranks,
        latency_ns=record_number(stats.get("latency_ns")),
        ol=_fit(ol, ranks),
        e=_fit(_numbers(stats.get("per_rank_e_ns")), ranks),
        rtl=_fit(_numbers(stats.get("per_rank_rtl_ns")), ranks),
        truth=_fit(_numbers(stats.get("per_rank_truth_ns")), ranks),
        argmax=argmax,
        gap_ns=record_number(stats.get("gap_ns")),
        gap_bound=_ranks_list(stats.get("gap_bound_ranks")),
        remedy=remedy if isinstance(remedy, str) else None,
        fast=params.get("fast") is True,
        measured=_ranks_list(stats.get("measured_ranks")),
        audited=_ranks_list(stats.get("audited_ranks")),
        cheap=_fit(_numbers(stats.get("cheap_ns")), ranks),
    )


@dataclass
class ShapeCheck:
    """Whether OL_i never falls from a rank to the ranks it sends to along a reference
    algorithm's tree, and how it grows."""

    # (parent, child) pairs, parent nearer the root, whose child has the smaller OL_i
    broken: List[Tuple[int, int]]
    by_depth: Dict[int, float]  # mean OL_i of the measured ranks at each depth
    slack: float  # differences smaller than this are noise

    @property
    def follows(self) -> bool:
        return not self.broken

    @property
    def grows(self) -> bool:
        """The deepest ranks' mean above the shallowest's by more than the noise (a forwarding
        rank returns after its last send, so a parent may end with its last child)."""
        means = list(self.by_depth.values())
        return len(means) > 1 and means[-1] > means[0] + self.slack


def shape_check(found: Profile) -> Optional[ShapeCheck]:
    """For a chain or a binomial tree of 3 ranks or more: ranks further from the root must not
    have a smaller OL_i than the rank before them. None where nothing can be checked (the
    library, flat, fewer than 3 ranks)."""
    config = found.config
    if config.algo not in SHAPE_NAMES or found.ranks < 3:
        return None
    values = [found.value(rank) for rank in range(found.ranks)]
    present = [value for value in values if value is not None]
    if not present:
        return None
    slack = SHAPE_TOLERANCE * max(present)
    # An unmeasured root (a broadcast's) completes at 0 by definition.
    level = [0.0 if rank == 0 and value is None else value for rank, value in enumerate(values)]
    broken = []
    for rank in range(1, found.ranks):
        up = parent(config.algo, rank, found.ranks)
        mine, above = level[rank], level[up] if up is not None else None
        if up is not None and above is not None and mine is not None and mine < above - slack:
            broken.append((up, rank))
    by_depth: Dict[int, List[float]] = {}
    for rank, hops in enumerate(depths(config.algo, found.ranks)):
        value = values[rank]
        if rank and hops is not None and value is not None:
            by_depth.setdefault(hops, []).append(value)
    return ShapeCheck(
        broken, {hops: sum(v) / len(v) for hops, v in sorted(by_depth.items())}, slack
    )


# --- words ---------------------------------------------------------------------------------------


def _ranks_phrase(ranks: Sequence[int]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {ranges(ranks)}"


def _factor(value: float) -> str:
    return f"{value:.1f}x"


def _counts(ranks: Sequence[int]) -> str:
    return f"{ranks[0]} ranks" if len(ranks) == 1 else f"{ranks[0]}–{ranks[-1]} ranks"


# --- diagnosis -----------------------------------------------------------------------------------


def _oli_sentences(label: str, by_ranks: Mapping[int, Record]) -> List[str]:
    points: List[Tuple[int, Profile, float]] = []
    for ranks in sorted(by_ranks):
        found = profile(by_ranks[ranks])
        if found.latency_ns is not None:
            points.append((ranks, found, found.latency_ns))
    if not points:
        return []
    ranks, last, latency = points[-1]
    held = f", held by rank {last.argmax}" if last.argmax is not None else ""
    sentence = f"{label}: oli (max OL_i) is {format_time(latency)} at {ranks} ranks{held}"
    first_ranks, _, first_latency = points[0]
    if len(points) > 1 and first_latency > 0:
        sentence += (
            f"; {format_time(first_latency)} at {first_ranks} ranks, so "
            f"{latency / first_latency:.1f}x for {ranks / first_ranks:.3g}x the ranks"
        )
    return [sentence]


def truth_errors(by_method: Mapping[str, Mapping[int, Record]]) -> List[Tuple[int, float, float]]:
    """(rank count, oli estimate, truth) wherever both are known."""
    oli = by_method.get(OLI, {})
    return [
        (ranks, value, true)
        for ranks in sorted(oli)
        if (value := latency(oli[ranks])) is not None
        and (true := truth(oli[ranks])) is not None
        and true > 0
    ]


def _truth_sentences(
    label: str, config: Config, by_method: Mapping[str, Mapping[int, Record]]
) -> List[str]:
    errors = truth_errors(by_method)
    if not errors:
        return []
    ranks, value, true = max(errors, key=lambda e: abs(e[1] / e[2] - 1))
    error = value / true - 1
    delay = f"under --hop-delay {format_time(config.hop_delay_ns)}"
    numbers = f"{format_time(value)} vs {format_time(true)}"
    if abs(error) > AGREEMENT:
        side = "above" if error > 0 else "below"
        return [
            f"warning: {label}: {delay} the oli estimate is {percent(abs(error))} {side} "
            f"the analytic truth at {ranks} ranks ({numbers}), beyond the "
            f"{percent(AGREEMENT)} the method should reach: ranks sharing cores, a noisy "
            "machine or a broken assumption of the method (see the per-rank profile)"
        ]
    within = percent(max(abs(error), 0.01))
    if len(errors) == 1:
        return [
            f"{label}: {delay} the oli estimate is within {within} of the analytic truth at "
            f"{ranks} ranks ({numbers})"
        ]
    counts = [e[0] for e in errors]
    return [
        f"{label}: {delay} the oli estimate is within {within} of the analytic truth at "
        f"every rank count ({_counts(counts)}; worst at {ranks} ranks: {numbers})"
    ]


def _shape_sentences(label: str, config: Config, by_ranks: Mapping[int, Record]) -> List[str]:
    checked = []
    for ranks in sorted(by_ranks):
        found = profile(by_ranks[ranks])
        check = shape_check(found)
        if check is not None:
            checked.append((found, check))
    if not checked:
        return []
    shape = SHAPE_NAMES[config.algo]
    sentences = []
    for found, check in checked:
        if check.follows:
            continue
        up, child = check.broken[0]
        more = len(check.broken) - 1
        sentences.append(
            f"warning: {label} at {found.ranks} ranks: OL_i does not follow the {shape}: rank "
            f"{child} ({format_time(found.value(child))}) is below rank {up} "
            f"({format_time(found.value(up) or 0.0)}), which is nearer the root"
            + (f", and {more} more such {'pair' if more == 1 else 'pairs'}" if more else "")
            + "; those ranks' measurements are off (noise, or the method's assumption that each "
            "E_i exceeds the gaps on its path)"
        )
    if sentences:
        return sentences
    found, check = checked[-1]
    last = found.ranks - 1
    if config.algo == "linear" and check.grows:
        return [
            f"{label}: OL_i grows with rank as a chain should "
            f"({format_time(found.value(1))} at rank 1 to {format_time(found.value(last))} "
            f"at rank {last}, {found.ranks} ranks)"
        ]
    if config.algo == "backward" and check.grows:
        return [
            f"{label}: OL_i grows as the rank falls, as a backward chain should "
            f"({format_time(found.value(last))} at rank {last} to "
            f"{format_time(found.value(1))} at rank 1, {found.ranks} ranks)"
        ]
    levels = ", ".join(
        f"depth {hops}: {format_time(value)}" for hops, value in check.by_depth.items()
    )
    if check.grows:
        return [
            f"{label}: OL_i grows with the depth in the {shape} as it should ({levels}, "
            f"{found.ranks} ranks)"
        ]
    # A rank that forwards returns only after its own sends, so with a hop delay a tree can
    # complete everywhere at once; only a fall from a rank to its children is wrong.
    return [
        f"{label}: OL_i never falls from a rank to the ranks it sends to, as in a {shape} "
        f"({levels}, {found.ranks} ranks)"
    ]


def _gap_sentences(label: str, by_ranks: Mapping[int, Record]) -> List[str]:
    bound = [found for ranks in sorted(by_ranks) if (found := profile(by_ranks[ranks])).gap_bound]
    if not bound:
        return []
    sentences = [
        f"warning: {label} at {found.ranks} ranks: {_ranks_phrase(found.gap_bound)} "
        f"{'was' if len(found.gap_bound) == 1 else 'were'} bounded by the root's gap "
        f"({format_time(found.gap_ns)}) and no remedy was applied: "
        f"{'its' if len(found.gap_bound) == 1 else 'their'} OL_i cannot be trusted"
        for found in bound
        if found.remedy is None
    ]
    remedied = [found for found in bound if found.remedy is not None]
    if not remedied:
        return sentences
    many = len(remedied) > 1 or len(remedied[0].gap_bound) > 1
    if len(remedied) == 1:
        found = remedied[0]
        where = f"{_ranks_phrase(found.gap_bound)} ({found.ranks} ranks)"
        gap = f" ({format_time(found.gap_ns)})"
    else:
        where = "ranks " + " and ".join(
            f"{ranges(found.gap_bound)} at {found.ranks} ranks" for found in remedied
        )
        gap = ""
    remedies = sorted({found.remedy for found in remedied if found.remedy is not None})
    how = "the clock remedy" if remedies == ["clock"] else "the remedy " + ", ".join(remedies)
    return sentences + [
        f"{label}: {where} {'were' if many else 'was'} bounded by the root's gap{gap}; "
        f"{'their' if many else 'its'} OL_i come{'' if many else 's'} from {how}"
    ]


def _fast_sentences(label: str, by_ranks: Mapping[int, Record]) -> List[str]:
    sentences = []
    for ranks in sorted(by_ranks):
        found = profile(by_ranks[ranks])
        if not found.fast or not found.measured:
            continue
        others = found.ranks - (1 if found.config.op == "bcast" else 0)
        sentence = (
            f"{label} at {ranks} ranks: --fast measured {len(found.measured)} of "
            f"{others} ranks in full ({_ranks_phrase(found.measured)})"
        )
        if found.audited:
            sentence += (
                f" and checked {_ranks_phrase(found.audited)} with one block, drawn at random"
            )
        cheap = {rank: value for rank, value in enumerate(found.cheap) if value is not None}
        order = sorted(cheap, key=lambda rank: -cheap[rank])
        if found.argmax is not None and found.argmax in order:
            sentence += (
                f"; the largest OL_i, rank {found.argmax}, was the cheap pass's "
                f"candidate number {order.index(found.argmax) + 1}"
            )
        sentences.append(sentence)
    return sentences


@dataclass
class Deviation:
    """One method's estimate against oli's."""

    method: str
    ratios: Dict[int, float]  # rank count → estimate / oli

    @property
    def ranks(self) -> int:
        """The largest rank count both were measured at: the one sentences tell."""
        return max(self.ratios)

    @property
    def ratio(self) -> float:
        return self.ratios[self.ranks]


def _interval(point: Optional[Record]) -> Optional[Tuple[float, float]]:
    sample = point["stats"].get("sample") if point is not None else None
    if not isinstance(sample, dict):
        return None
    low, high = record_number(sample.get("ci_lo")), record_number(sample.get("ci_hi"))
    return (low, high) if low is not None and high is not None else None


def deviations(by_method: Mapping[str, Mapping[int, Record]]) -> List[Deviation]:
    """Every other method's estimate over oli's, at each rank count both have."""
    oli_points = by_method.get(OLI, {})
    oli = dict(curve(oli_points))
    found = []
    for method in methods_present(by_method):
        if method == OLI:
            continue
        ratios = {
            ranks: value / oli[ranks]
            for ranks, value in curve(by_method[method])
            if oli.get(ranks, 0) > 0
        }
        if ratios:
            found.append(Deviation(method, ratios))
    return found


def _deviation_sentence(label: str, config: Config, found: Deviation) -> str:
    ratio, ranks = found.ratio, found.ranks
    what = f"the {OP_NAMES.get(config.op, config.op)} latency"
    if ratio > 1:
        reason = ABOVE_REASONS.get(found.method)
        told = (
            f"overestimates {what} by {_factor(ratio)}"
            if ratio >= FACTOR_FROM
            else f"reports {percent(ratio - 1)} above oli"
        )
    else:
        reason = BELOW_REASONS.get(found.method)
        told = (
            f"underestimates {what} by {_factor(1 / ratio)}"
            if 1 / ratio >= FACTOR_FROM
            else f"reports {percent(1 - ratio)} below oli"
        )
    sentence = f"{label}: {found.method} {told} at {ranks} ranks"
    if reason:
        sentence += f" ({reason})"
    if len(found.ratios) > 1:
        low, high = f"{min(found.ratios.values()):.2f}", f"{max(found.ratios.values()):.2f}"
        over = _counts(sorted(found.ratios))
        sentence += (
            f"; {low} times oli at every rank count ({over})"
            if low == high
            else f"; from {low} to {high} times oli over {over}"
        )
    return sentence


def _method_sentences(
    label: str, config: Config, by_method: Mapping[str, Mapping[int, Record]]
) -> List[str]:
    found = deviations(by_method)
    agreeing = [d for d in found if abs(d.ratio - 1) <= AGREEMENT]
    sentences = [_deviation_sentence(label, config, d) for d in found if d not in agreeing]
    if agreeing:
        names = ", ".join(f"{d.method} ({d.ranks} ranks)" for d in agreeing)
        sentences.append(
            f"{label}: within {percent(AGREEMENT)} of oli at the largest rank "
            f"count measured: {names}"
        )
    return sentences


# (operation, size) → rank count → (oli, implementation)
OliGroups = Dict[Tuple[str, int], Dict[int, List[Tuple[float, Config]]]]


def _oli_by_operation(found: Series) -> OliGroups:
    """(operation, size) → rank count → (oli, implementation) of each implementation measured,
    without a hop delay (which slows the reference algorithms on purpose)."""
    groups: OliGroups = {}
    for config, by_method in found.items():
        if config.hop_delay_ns:
            continue
        for ranks, value in curve(by_method.get(OLI, {})):
            groups.setdefault((config.op, config.size_bytes), {}).setdefault(ranks, []).append(
                (value, config)
            )
    return groups


def _fastest_sentences(found: Series, names: Mapping[Config, str]) -> List[str]:
    """Per operation, size and rank count: the implementations by oli, fastest first. Only
    without a hop delay, which slows the reference algorithms on purpose."""
    groups = _oli_by_operation(found)
    sentences = []
    for (op, _), by_ranks in groups.items():
        compared = [ranks for ranks, entries in by_ranks.items() if len(entries) > 1]
        if not compared:
            continue
        ranks = max(compared)
        entries = sorted(by_ranks[ranks], key=lambda entry: entry[0])
        best = entries[0][0]
        listed = ", ".join(
            f"{config.algo} {format_time(value)}"
            + (f" ({_factor(value / best)})" if best > 0 and value > best else "")
            for value, config in entries
        )
        sentences.append(f"{OP_NAMES.get(op, op)} at {ranks} ranks, fastest first by oli: {listed}")
    return sentences


def rsd_limit(run: Run) -> float:
    """The RSD the run's stopping rule aimed at (its --rsd option), else the seed's 3%."""
    options = run.meta.get("options")
    text = options.get("rsd") if isinstance(options, dict) else None
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    if isinstance(text, str):
        try:
            return float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            pass
    return DEFAULT_RSD


def _quality_sentences(run: Run) -> List[str]:
    limit = rsd_limit(run)
    measured = [
        (point, rsd)
        for point in run.points
        if (rsd := record_number(point["stats"].get("rsd"))) is not None
    ]
    noisy = sorted(
        ((rsd, point) for point, rsd in measured if rsd > limit), key=lambda entry: -entry[0]
    )
    if not noisy:
        return []
    worst_rsd, worst = noisy[0]
    config = config_of(worst)
    name = f"{method_of(worst)} on {config.op}/{config.algo}" if config else worst["key"]
    sentence = (
        f"{len(noisy)} of {len(measured)} points stopped with the relative standard "
        f"deviation of their block results above the {percent(limit)} aimed at: their "
        f"estimates are less certain; worst {name} at {ranks_of(worst)} ranks "
        f"({percent(worst_rsd)})"
    )
    if worst_rsd > NOISY_RSD:
        sentence = (
            "warning: " + sentence + "; rerun on a quieter machine, with fewer ranks per "
            "core, or with --preset full"
        )
    return [sentence]


def _lost_core(point: Record) -> Tuple[Optional[float], Optional[float]]:
    """A point's off_core_share and steal_share (None where not recorded)."""
    stats = point["stats"]
    return record_number(stats.get("off_core_share")), record_number(stats.get("steal_share"))


def _off_core_sentences(run: Run) -> List[str]:
    recorded = [
        (p, off, steal)
        for p in run.points
        for off, steal in [_lost_core(p)]
        if off is not None or steal is not None
    ]
    busy = sorted(
        (
            (max(v for v in (off, steal) if v is not None), p, off, steal)
            for p, off, steal in recorded
            if any(v is not None and v > OFF_CORE_LIMIT for v in (off, steal))
        ),
        key=lambda entry: -entry[0],
    )
    if not busy:
        return []
    _, worst, off, steal = busy[0]
    config = config_of(worst)
    name = f"{method_of(worst)} on {config.op}/{config.algo}" if config else worst["key"]
    found = []
    if off is not None:
        found.append(f"a spinning rank off its core {percent(off)} of the time")
    if steal is not None and steal >= 0.01:
        found.append(f"the host of the virtual machine took {percent(steal)} of its CPU time")
    return [
        f"warning: {len(busy)} of {len(recorded)} points {'was' if len(busy) == 1 else 'were'} "
        f"measured while ranks lost their cores more than {percent(OFF_CORE_LIMIT)} of the time "
        f"(worst {name} at {ranks_of(worst)} ranks: {'; '.join(found)}): their latencies include "
        "waits for a core; rerun on a quieter machine"
    ]


# The mean of a point's blocks this far above their median: a few operations much longer than
# the rest (a rank that lost its core) decide the mean.
ESTIMATORS_APART = 0.10


def _estimator_sentences(found: Series, names: Mapping[Config, str]) -> List[str]:
    """Which estimator the estimates are, and how far the other one, recorded beside each oli
    estimate, lies from it: where they part, a few long operations weigh in the mean."""
    apart: List[Tuple[float, str, Record]] = []
    used = set()
    for config, by_method in found.items():
        for ranks, point in sorted(by_method.get(OLI, {}).items()):
            used.add(estimator_of(point))
            median, mean = estimate_under(point, "median"), estimate_under(point, "mean")
            if median and mean is not None:
                apart.append((mean / median - 1, f"{names[config]} at {ranks} ranks", point))
    if not apart:
        return []
    chosen = " and ".join(sorted(used))
    what = {
        "median": "the median of the blocks (each oli block the median of its operations)",
        "mean": "the mean of the blocks (each block the mean of its operations), seed 003's",
    }
    sentence = "estimates: " + (what.get(chosen) or chosen + " of the blocks")
    gap, where, point = max(apart, key=lambda entry: abs(entry[0]))
    median, mean = estimate_under(point, "median"), estimate_under(point, "mean")
    detail = f"{where}, mean {format_time(mean)} against median {format_time(median)}"
    if abs(gap) <= ESTIMATORS_APART:
        return [
            f"{sentence}; mean and median of oli agree within {percent(abs(gap))} "
            f"everywhere (widest: {detail})"
        ]
    return [
        f"warning: {sentence}; the mean of oli departs from its median by up to "
        f"{percent(abs(gap))} ({detail}): a few operations far longer than the rest (a rank "
        "that lost its core, a late wake-up) weigh in the mean; trust the median on this "
        "machine, or rerun where each rank has a core"
    ]


def _skip_sentences(run: Run) -> List[str]:
    return [f"skipped: {text}" for text in run.note_texts("skip")]


# --- numbers that cannot be true -----------------------------------------------------------------


def _outside_bracket(
    by_method: Mapping[str, Mapping[int, Record]], ranks: int
) -> Optional[Tuple[str, str]]:
    """(method, "above"/"below") for the first bound on the wrong side of oli at a rank count
    beyond both confidence intervals (a value without one counts as exact); None when oli is
    inside the [rounds, barrier/ack] bracket or cannot be checked."""
    oli_point = by_method.get(OLI, {}).get(ranks)
    oli = latency(oli_point)
    if oli is None:
        return None
    theirs = _interval(oli_point) or (oli, oli)
    for methods, side in ((LOWER_BOUNDS, "above"), (UPPER_BOUNDS, "below")):
        for method in methods:
            point = by_method.get(method, {}).get(ranks)
            value = latency(point)
            if value is None:
                continue
            mine = _interval(point) or (value, value)
            if (mine[0] > theirs[1]) if side == "above" else (mine[1] < theirs[0]):
                return method, side
    return None


def _negative_ol(point: Optional[Record]) -> Optional[Tuple[int, float]]:
    """(rank, OL_i) for the most negative OL_i of an oli point, None when none is below 0. OL_i =
    E_i − RTL_i/2 cannot be negative: E_i holds a message from i to the root, at least half a
    round trip; below 0, the round trip subtracted was measured in other conditions than E_i."""
    if point is None:
        return None
    values = _numbers(point["stats"].get("per_rank_ns"))
    found = [(value, rank) for rank, value in enumerate(values) if value is not None and value < 0]
    if not found:
        return None
    value, rank = min(found)
    return rank, value


def invalid_ranks(meta: Record, by_method: Mapping[str, Mapping[int, Record]]) -> Dict[int, str]:
    """Per rank count of one configuration, why none of its estimates can be trusted: more busy
    ranks (and progress threads) than cores, a negative OL_i, or oli outside the bracket of seed
    003 (a lower bound above it, or an upper bound below it, beyond noise)."""
    counts = sorted({ranks for by_ranks in by_method.values() for ranks in by_ranks})
    found: Dict[int, str] = {}
    for ranks in counts:
        crowded = crowding(meta, ranks=ranks)
        outside = _outside_bracket(by_method, ranks)
        negative = _negative_ol(by_method.get(OLI, {}).get(ranks))
        if crowded is not None:
            found[ranks] = f"not trustworthy: {crowded.text()}"
        elif negative is not None:
            rank, value = negative
            found[ranks] = (
                f"OL_{rank} is {format_time(value)}, below 0: the round trip subtracted from "
                f"E_{rank} was measured in other conditions than E_{rank} itself"
            )
        elif outside is not None:
            method, side = outside
            bound = "a lower" if side == "above" else "an upper"
            found[ranks] = (
                f"oli outside the [rounds, barrier/ack] bracket: {method}, {bound} bound of the "
                f"latency, reads {side} it beyond noise"
            )
    return found


def _invalid_sentences(label: str, invalid: Mapping[int, str]) -> List[str]:
    by_reason: Dict[str, List[int]] = {}
    for ranks, reason in invalid.items():
        by_reason.setdefault(reason, []).append(ranks)
    return [
        f"warning: {label}: INVALID at {_counts(counts)}, no conclusion drawn from "
        f"{'it' if len(counts) == 1 else 'them'}: {reason}"
        for reason, counts in by_reason.items()
    ]


def valid_series(run: Run, found: Series) -> Tuple[Series, Dict[Config, Dict[int, str]]]:
    """The series without the rank counts invalid_ranks rejects, and those rejected."""
    kept: Series = {}
    rejected: Dict[Config, Dict[int, str]] = {}
    for config, by_method in found.items():
        invalid = invalid_ranks(run.meta, by_method)
        rejected[config] = invalid
        kept[config] = {
            method: {r: p for r, p in by_ranks.items() if r not in invalid}
            for method, by_ranks in by_method.items()
        }
    return kept, rejected


def validity(run: Run) -> List[Tuple[Record, Optional[str]]]:
    """Every point of a series, with why no estimate at its rank count can be trusted
    (invalid_ranks; None when they can)."""
    found = series(run)
    _, rejected = valid_series(run, found)
    return [
        (point, rejected[config].get(ranks))
        for config, by_method in found.items()
        for by_ranks in by_method.values()
        for ranks, point in by_ranks.items()
    ]


def diagnose(run: Run) -> List[str]:
    """Sentences for the report's findings, warnings starting with "warning:"."""
    found = series(run)
    if not found:
        return _skip_sentences(run)
    names = labels(found)
    found, rejected = valid_series(run, found)
    sentences: List[str] = []
    for config, by_method in found.items():
        label, oli = names[config], by_method.get(OLI, {})
        sentences += (
            _invalid_sentences(label, rejected[config])
            + _oli_sentences(label, oli)
            + _truth_sentences(label, config, by_method)
            + _shape_sentences(label, config, oli)
            + _gap_sentences(label, oli)
            + _fast_sentences(label, oli)
            + _method_sentences(label, config, by_method)
        )
    return (
        sentences
        + _fastest_sentences(found, names)
        + _estimator_sentences(found, names)
        + _quality_sentences(run)
        + _off_core_sentences(run)
        + _skip_sentences(run)
    )


# --- the table `mpilens coll` prints -------------------------------------------------------------


def _us(ns: Optional[float]) -> str:
    if ns is None:
        return "-"
    value = ns / 1000
    return (
        f"{value:.0f}"
        if abs(value) >= 100
        else f"{value:.1f}"
        if abs(value) >= 10
        else f"{value:.2f}"
    )


def config_rows(by_method: Mapping[str, Mapping[int, Record]]) -> Tuple[List[str], List[list]]:
    """The header and rows of one configuration's table: per rank count, each method's latency
    (ns), oli's argmax rank, and the truth when known."""
    methods = methods_present(by_method)
    counts = sorted({ranks for by_ranks in by_method.values() for ranks in by_ranks})
    truths = dict(truth_curve(by_method))
    header = ["np", *methods]
    if OLI in by_method:
        header.append("argmax")
    if truths:
        header.append("truth")
    rows = []
    for ranks in counts:
        row: list = [ranks, *(latency(by_method[m].get(ranks)) for m in methods)]
        if OLI in by_method:
            point = by_method[OLI].get(ranks)
            row.append(profile(point).argmax if point is not None else None)
        if truths:
            row.append(truths.get(ranks))
        rows.append(row)
    return header, rows


def comparison_table(run: Run) -> List[str]:
    """Per configuration, a plain text table: rows are rank counts, columns the methods'
    latency estimates in µs, then oli's argmax rank and the truth when known."""
    lines: List[str] = []
    for config, by_method in series(run).items():
        header, rows = config_rows(by_method)
        delay = f", hop delay {format_time(config.hop_delay_ns)}" if config.hop_delay_ns else ""
        text_rows = [
            [str(row[0])]
            + [
                ("-" if value is None else str(value)) if name == "argmax" else _us(value)
                for name, value in zip(header[1:], row[1:])
            ]
            for row in rows
        ]
        lines += (
            ([""] if lines else [])
            + [f"{config.op}/{config.algo}, {format_size(config.size_bytes)}{delay}: latency in µs"]
            + columns([header, *text_rows])
        )
    return lines


# --- comparison ----------------------------------------------------------------------------------


def _winner(names: Tuple[str, str], a: float, b: float) -> Optional[str]:
    """Which run is faster by more than SAME, or None."""
    if a <= 0 or b <= 0 or max(a, b) / min(a, b) <= 1 + SAME:
        return None
    return names[0] if a < b else names[1]


def _ranks_text(counts: Sequence[int]) -> str:
    return ", ".join(str(count) for count in counts) + " ranks"


def _estimators_used(found: Series) -> List[str]:
    return sorted(
        {
            estimator_of(point)
            for by_method in found.values()
            for by_ranks in by_method.values()
            for point in by_ranks.values()
        }
    )


def _estimator_difference(names: Tuple[str, str], found_a: Series, found_b: Series) -> List[str]:
    """A caveat when the two runs did not estimate alike: a mean is above a median wherever a few
    operations ran long, so part of any difference is the estimators'."""
    used_a, used_b = _estimators_used(found_a), _estimators_used(found_b)
    if not used_a or not used_b or used_a == used_b:
        return []
    return [
        f"warning: {names[0]} estimates with the {' and '.join(used_a)} of its blocks, "
        f"{names[1]} with the {' and '.join(used_b)}: part of every difference below is the "
        "estimators' (each record holds both: latency_median_ns, latency_mean_ns)"
    ]


def compare(run_a: Run, run_b: Run) -> List[str]:
    """Per configuration in both runs, oli's latency of A against B: which is faster where."""
    names = run_names(run_a, run_b)
    found_a, found_b = series(run_a), series(run_b)
    shared = [c for c in found_a if c in found_b]
    texts = labels([*found_a, *found_b])
    sentences = _estimator_difference(names, found_a, found_b)
    for config in shared:
        a, b = (dict(curve(found.get(config, {}).get(OLI, {}))) for found in (found_a, found_b))
        counts = sorted(set(a) & set(b))
        if not counts:
            continue
        ranks = counts[-1]
        winners = {count: _winner(names, a[count], b[count]) for count in counts}
        at = (
            f"{texts[config]}, oli at {ranks} ranks: {names[0]} {format_time(a[ranks])}, "
            f"{names[1]} {format_time(b[ranks])}"
        )
        winner = winners[ranks]
        if winner is None:
            at += f" (within {percent(SAME)})"
        else:
            slow, fast = (b[ranks], a[ranks]) if winner == names[0] else (a[ranks], b[ranks])
            at += f" ({winner} {slow / fast:.2f}x faster)"
        if len(counts) > 1:
            sides = {
                side: [count for count in counts if winners[count] == side]
                for side in (names[0], names[1], None)
            }
            if sides[names[0]] == counts or sides[names[1]] == counts:
                at += f"; {winner} is faster at every rank count ({_ranks_text(counts)})"
            elif sides[None] == counts:
                at += f"; within {percent(SAME)} at every rank count"
            else:
                parts = [
                    f"{side} faster at {_ranks_text(sides[side])}" for side in names if sides[side]
                ]
                if sides[None]:
                    parts.append(f"within {percent(SAME)} at {_ranks_text(sides[None])}")
                at += "; " + ", ".join(parts)
        sentences.append(at)
    only = [f"only in {names[0]}: {texts[c]}" for c in found_a if c not in found_b] + [
        f"only in {names[1]}: {texts[c]}" for c in found_b if c not in found_a
    ]
    return sentences + only


def verdict(run: Run) -> Optional[str]:
    """Per operation and size (without a hop delay): its latency (oli) at the largest rank count
    measured validly, fastest implementation first; None when no valid estimate was made."""
    found, _ = valid_series(run, series(run))
    groups = _oli_by_operation(found)
    sentences = []
    for (op, size), by_ranks in groups.items():
        ranks = max(by_ranks)
        entries = sorted(by_ranks[ranks], key=lambda entry: entry[0])
        best, config = entries[0]
        what = f"{OP_NAMES.get(op, op).capitalize()} of {format_size(size)} at {ranks} ranks"
        if len(entries) == 1:
            sentences.append(f"{what}: {format_time(best)} ({config.algo}).")
            continue
        slowest = entries[-1]
        sentences.append(
            f"{what}: fastest {config.algo} at {format_time(best)}, slowest "
            f"{slowest[1].algo} at {format_time(slowest[0])}."
        )
    return " ".join(sentences) or None
