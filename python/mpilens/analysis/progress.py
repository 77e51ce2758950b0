"""What the progress family's points say: the CPU time a program loses to communication (the
overhead t_o) without help, with MPI_Test calls, under a progress thread or under the MPI
library's own asynchronous progress, and the CPU a timer interrupt takes (seed 002, section V).

The contract is docs/programs/mpilens-progress.md and docs/results-schema.md ("progress").
`mpilens progress` writes one file per progress setting: progress-none.jsonl (the library alone:
strategies none and test, and the interrupts benchmark), then one file per other setting (a
progress thread mode and placement, the library's asynchronous progress) with strategy none
only. The report reads them as one run (combine); every point names its setting in
params.progress. Plain Python (no numpy): the CLI imports it on every start.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from .. import program_options
from ..results import Record, Run, join_files, record_integer, record_number, record_object
from ..text import columns, counted, percent, ranges
from ..units import format_size, format_time
from .conditions import cpu_set
from .overlap import run_names

FAMILY = "progress"
# The setting without help (params.progress), and the strategy without tests (params.strategy).
NONE = "none"
P2P, NBC, INTERRUPTS = "p2p", "nbc", "interrupts"
OPS = program_options.choices("mpilens-progress", "ops")
# What an overhead curve is of: the ping-pong, or one collective.
OPERATIONS = (P2P, *OPS)
OPERATION_TITLES = {
    P2P: "point-to-point",
    "iallreduce": "Iallreduce",
    "ibcast": "Ibcast",
    "ireduce": "Ireduce",
    "ialltoall": "Ialltoall",
}
KINDS = program_options.choices("mpilens-progress", "compute")
BLOCKING, TEST, TEST_BEST = "blocking", "test", "test-best"
# Seed §V-B2: a timer interrupt and its context switch took 3.38 µs per core on Odin.
SEED_INTERRUPT_NS = 3400.0
# The size the diagnosis names besides the largest: where large-message protocols have taken
# over on every library.
KEY_SIZE = 1 << 20
# A thread whose work-based overhead is this many times its time-based one costs CPU that its
# MPI calls do not show (seed §V-B3).
WORK_CONTRAST = 2.0
# A setting whose own blocking time differs from none's by more than this share computed for a
# different time, which the reader must know to compare its overheads.
BLOCKING_CHANGE = 0.25
# A timer that fired below this share of the rate asked loaded the cores less than asked.
RATE_SHORTFALL = 0.9
# A placement sentence names this many ranks' threads, and counts the others: at thousands of
# ranks, the whole list would bury the sentence.
NAMED_THREADS = 4


def setting_order(labels: Iterable[str]) -> List[str]:
    """The library alone first, then the other settings by label."""
    labels = set(labels)
    return ([NONE] if NONE in labels else []) + sorted(labels - {NONE})


def is_thread(label: str) -> bool:
    return label.startswith("thread:")


def is_async(label: str) -> bool:
    return "async:" in label


def label_of(run: Run) -> str:
    """A file's progress setting: its meta's label, else its points'."""
    label = record_object(run.meta, "progress_setting").get("label")
    if isinstance(label, str) and label:
        return label
    for point in run.points:
        label = record_object(point, "params").get("progress")
        if isinstance(label, str) and label:
            return label
    return NONE


# --- reading several files as one run ----------------------------------------------------------


def _member_order(run: Run) -> Tuple[bool, str, str]:
    label = label_of(run)
    return label != NONE, label, run.path.name


def combine(runs: Sequence[Run]) -> Run:
    """The files of one `mpilens progress` study, read as one run (results.join_files): the none
    setting first, then by label, with the first file's meta; two files holding the same point
    under the same setting are refused."""
    return join_files(
        runs,
        _member_order,
        lambda member, point: (record_object(point, "params").get("progress"), point["key"]),
        lambda found: f'point "{found[1]}" under progress setting "{found[0]}"',
        "no progress results to read",
    )


def members_by_setting(run: Run) -> Dict[str, Run]:
    """Each setting's file (a run read alone is its own), in setting order; of a setting
    measured in several files (their points apart), the last one's meta stands for it."""
    found = {label_of(member): member for member in (run.members or [run])}
    return {label: found[label] for label in setting_order(found)}


# --- the overheads -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    """One series of points: an operation, a kind of computation, a setting and a strategy."""

    operation: str  # p2p or a collective
    kind: str  # time or work; "" for blocking points
    setting: str  # params.progress
    strategy: str  # blocking, none, test or test-best
    interval: int = 0  # test: the bytes between two tests


@dataclass(frozen=True)
class Measure:
    """A point's figure in ns (t_b of a blocking point, else t_o), with the 95% interval of its
    repetitions (the figure itself when unknown): differences inside it are noise."""

    value: float
    low: float
    high: float
    interval: int = 0  # test-best: the interval it names

    @property
    def nil(self) -> bool:
        """Within noise of zero: a work-based t_o is a difference of two times and can come out
        slightly negative."""
        return self.low <= 0

    @property
    def impossible(self) -> bool:
        """Below 0 beyond noise: no time, overhead or blocking, can be."""
        return self.high < 0

    def same(self, other: Measure) -> bool:
        """Within noise of each other: their intervals meet."""
        return self.low <= other.high and other.low <= self.high


Found = Dict[Key, Dict[int, Measure]]


def operation_of(point: Record) -> Optional[str]:
    if point.get("bench") == P2P:
        return P2P
    op = record_object(point, "params").get("op")
    return op if point.get("bench") == NBC and isinstance(op, str) else None


def _key(point: Record) -> Optional[Key]:
    params = record_object(point, "params")
    operation, strategy = operation_of(point), params.get("strategy")
    setting, kind = params.get("progress", NONE), params.get("compute", "")
    if operation is None or not (
        isinstance(strategy, str) and isinstance(setting, str) and isinstance(kind, str)
    ):
        return None
    interval = record_integer(params.get("interval_bytes")) if strategy == TEST else 0
    return None if interval is None else Key(operation, kind, setting, strategy, interval)


def _measure(point: Record) -> Optional[Measure]:
    params, stats = record_object(point, "params"), record_object(point, "stats")
    value = record_number(stats.get("t_b_ns" if params.get("strategy") == BLOCKING else "t_o_ns"))
    if value is None:
        return None
    sample = record_object(stats, "sample")
    low, high = record_number(sample.get("ci_lo")), record_number(sample.get("ci_hi"))
    if low is None or high is None:
        low = high = value
    # nbc: t_o is the largest rank's median, the interval that of the per-repetition maxima.
    best = params.get("strategy") == TEST_BEST
    interval = record_integer(params.get("interval_bytes")) if best else 0
    return Measure(value, min(low, value), max(high, value), interval or 0)


def measurements(run: Run) -> Found:
    """series → message size → figure, for every p2p and nbc point with a figure. test-best
    points carry no repetitions: they take the interval of the test point they repeat."""
    found: Found = {}
    for point in run.points:
        key, measure = _key(point), _measure(point)
        size = record_integer(record_object(point, "params").get("size_bytes"))
        if key is not None and measure is not None and size is not None:
            found.setdefault(key, {})[size] = measure
    for key, by_size in found.items():
        if key.strategy == TEST_BEST:
            for size, best in by_size.items():
                tested = found.get(replace(key, strategy=TEST, interval=best.interval), {})
                if size in tested:
                    by_size[size] = replace(tested[size], value=best.value, interval=best.interval)
    return {
        key: kept
        for key, by_size in found.items()
        if (kept := {size: m for size, m in by_size.items() if not m.impossible})
    }


def _figures(run: Run) -> List[Tuple[Record, Key, int, Measure]]:
    """(point, series, message size, figure) of every p2p and nbc point with a figure."""
    every: List[Tuple[Record, Key, int, Measure]] = []
    for point in run.points:
        key, measure = _key(point), _measure(point)
        size = record_integer(record_object(point, "params").get("size_bytes"))
        if key is not None and measure is not None and size is not None:
            every.append((point, key, size, measure))
    return every


def impossible_measures(run: Run) -> List[Tuple[Key, int, Measure]]:
    """The figures measurements() leaves out: an overhead or a blocking time below 0 beyond the
    noise of its repetitions, which no progress can give."""
    return [(key, size, measure) for _, key, size, measure in _figures(run) if measure.impossible]


# Why impossible_measures leaves a point out, for `mpilens export`.
INVALID_BELOW_ZERO = (
    "a time below 0 beyond the noise of its repetitions, which no progress can give"
)


def validity(run: Run) -> List[Tuple[Record, Optional[str]]]:
    """Every p2p and nbc point with a figure, with why it cannot be true (None when it can)."""
    return [
        (point, INVALID_BELOW_ZERO if measure.impossible else None)
        for point, _, _, measure in _figures(run)
    ]


def _impossible_sentences(run: Run) -> List[str]:
    found = impossible_measures(run)
    if not found:
        return []
    key, size, worst = min(found, key=lambda entry: entry[2].value)
    what = "blocking time" if key.strategy == BLOCKING else "overhead"
    return [
        f"warning: {counted(len(found), 'point')} INVALID and left out: a time below 0 beyond "
        f"the noise of its repetitions, which no progress can give; worst the {what} of "
        f"{title(key.operation)}, {format_size(size)}, {key.setting}, "
        f"{key.kind or BLOCKING} {key.strategy}: {format_time(worst.value)} (its interval up to "
        f"{format_time(worst.high)}); a work-based overhead is t_ov − t_c, so the workload ran "
        "faster during the communication than alone: its calibration or the machine changed"
    ]


def settings(run: Run) -> List[str]:
    """The settings measured, the library alone first."""
    labels = {label_of(member) for member in (run.members or [run])}
    labels |= {key.setting for key in measurements(run)}
    return setting_order(labels)


def operations_measured(found: Found) -> List[str]:
    present = {key.operation for key in found}
    return [op for op in OPERATIONS if op in present] + sorted(present - set(OPERATIONS))


def kinds_measured(found: Found, operation: str) -> List[str]:
    present = {key.kind for key in found if key.operation == operation and key.kind}
    return [kind for kind in KINDS if kind in present] + sorted(present - set(KINDS))


def series(
    found: Found, operation: str, kind: str, setting: str, strategy: str, interval: int = 0
) -> Dict[int, Measure]:
    return dict(sorted(found.get(Key(operation, kind, setting, strategy, interval), {}).items()))


def _values(series: Dict[int, Measure]) -> Dict[int, float]:
    return {size: measure.value for size, measure in series.items()}


def curve(
    found: Found, operation: str, kind: str, setting: str = NONE, strategy: str = NONE
) -> Dict[int, float]:
    """Message size → t_o in ns of one setting and strategy."""
    return _values(series(found, operation, kind, setting, strategy))


def blocking(found: Found, operation: str, setting: str = NONE) -> Dict[int, float]:
    """Message size → t_b in ns, the blocking time of one setting."""
    return _values(series(found, operation, "", setting, BLOCKING))


def reference(found: Found, operation: str) -> Dict[int, float]:
    """The blocking time drawn as a reference: the library alone's, else the first setting's."""
    for setting in setting_order(key.setting for key in found):
        times = blocking(found, operation, setting)
        if times:
            return times
    return {}


def curve_name(setting: str, strategy: str) -> str:
    """The name of an overhead curve: a setting (its none points), or test-best."""
    if strategy == NONE:
        return setting
    return TEST_BEST if setting == NONE else f"{setting} {TEST_BEST}"


def named_series(found: Found, operation: str, kind: str) -> Dict[str, Dict[int, Measure]]:
    """Seed figures 7 to 10: curve name → message size → t_o, in the order drawn: none (the
    library alone, no tests), test-best (the best MPI_Test interval), then each other setting's
    none points (and its test-best when it measured one)."""
    curves = {}
    for setting in setting_order(key.setting for key in found):
        for strategy in (NONE, TEST_BEST):
            measured = series(found, operation, kind, setting, strategy)
            if measured:
                curves[curve_name(setting, strategy)] = measured
    return curves


def overhead_curves(found: Found, operation: str, kind: str) -> Dict[str, Dict[int, float]]:
    """named_series with the figures alone."""
    return {name: _values(series) for name, series in named_series(found, operation, kind).items()}


def interval_curve(
    found: Found, operation: str, kind: str, size: int, setting: str = NONE
) -> Dict[int, float]:
    """Bytes between two tests → t_o at one message size: the candidates test-best chose from."""
    found_here = {
        key.interval: by_size[size]
        for key, by_size in found.items()
        if (key.operation, key.kind, key.setting, key.strategy) == (operation, kind, setting, TEST)
        and size in by_size
    }
    return {interval: found_here[interval].value for interval in sorted(found_here)}


def tests_made(size: int, interval: int) -> int:
    """MPI_Test calls in one repetition: floor(size / interval) + 1 (seed §III)."""
    return size // interval + 1


def largest_size(series: Dict[int, Measure]) -> Optional[int]:
    return max(series) if series else None


def diagnosed_sizes(series: Dict[int, Measure]) -> List[int]:
    """The sizes the diagnosis speaks of: 1 MiB when measured, and the largest."""
    largest = largest_size(series)
    if largest is None:
        return []
    return ([KEY_SIZE] if KEY_SIZE in series and largest != KEY_SIZE else []) + [largest]


def ranking(curves: Dict[str, Dict[int, Measure]], size: int) -> List[Tuple[str, Measure]]:
    """The curves other than none at one size, lowest overhead first."""
    entries = [
        (name, series[size]) for name, series in curves.items() if name != NONE and size in series
    ]
    return sorted(entries, key=lambda entry: (entry[1].value, entry[0]))


# --- words ---------------------------------------------------------------------------------------


def title(operation: str) -> str:
    return OPERATION_TITLES.get(operation, operation)


def factor(value: float) -> str:
    """A ratio above 1: 6.1×, 10×, 250×."""
    return f"{value:.1f}×" if value < 9.95 else f"{value:.0f}×"


def overhead_text(measure: Optional[Measure]) -> str:
    """A t_o as printed: within noise of zero shows as ~0, never as a negative time."""
    if measure is None:
        return "-"
    return "~0" if measure.nil and measure.value <= 0 else format_time(measure.value)


def describe(name: str, measure: Measure) -> str:
    """A curve in words, for a sentence."""
    if name == TEST_BEST:
        return (
            f"MPI_Test every {format_size(measure.interval)} (test-best)"
            if measure.interval
            else "the best MPI_Test interval (test-best)"
        )
    if name.endswith(f" {TEST_BEST}"):
        return f"MPI_Test every {format_size(measure.interval)} under {name[: -len(TEST_BEST) - 1]}"
    if is_thread(name):
        return f"the progress thread ({name})"
    if is_async(name):
        return f"the library's asynchronous progress ({name})"
    return name


def change(base: Measure, other: Measure) -> str:
    """How other's overhead stands to base's: 6.1× less, 2.0× more, or within noise."""
    if other.nil:
        return "within noise of zero"
    if other.same(base):
        return "no change beyond noise"
    if other.value < base.value:
        return f"{factor(base.value / other.value)} less"
    return f"{factor(other.value / base.value)} more" if base.value > 0 else "more"


# --- diagnosis -----------------------------------------------------------------------------------


def _loss(found: Found, operation: str, size: int, base: Measure) -> str:
    """What the program loses without help at one size, against the blocking time."""
    t_b = blocking(found, operation).get(size)
    if t_b is None or t_b <= 0:
        return f"the program loses {format_time(base.value)} without help"
    return (
        f"the program loses {format_time(base.value)} of {format_time(t_b)} blocking time "
        f"without help ({percent(base.value / t_b)})"
    )


def _verdict(ranked: List[Tuple[str, Measure]], base: Measure) -> str:
    """The best strategy or setting against none, then the others."""
    name, best = ranked[0]
    if best.nil:
        verdict = f"{describe(name, best)} removes it (t_o within noise of zero)"
    elif best.same(base):
        verdict = (
            f"nothing does better beyond noise: the lowest is {describe(name, best)} "
            f"at {format_time(best.value)}"
        )
    elif best.value > base.value:
        verdict = (
            f"every strategy and setting costs more: the least is {describe(name, best)} "
            f"at {format_time(best.value)}, {change(base, best)}"
        )
    else:
        verdict = (
            f"{describe(name, best)} cuts it {factor(base.value / best.value)} "
            f"(to {format_time(best.value)})"
        )
    rest = [
        f"{other} {overhead_text(measure)} ({change(base, measure)})"
        for other, measure in ranked[1:]
    ]
    return verdict + ("; then " + ", ".join(rest) if rest else "")


def _overhead_sentence(
    found: Found, operation: str, kind: str, size: int, curves: Dict[str, Dict[int, Measure]]
) -> str:
    base = curves[NONE][size]
    head = f"{title(operation)} at {format_size(size)}, {kind}-based: "
    if base.nil:
        return head + (
            "the program loses nothing measurable without help (t_o within noise of zero)"
        )
    sentence = head + _loss(found, operation, size, base)
    ranked = ranking(curves, size)
    if ranked:
        sentence += "; " + _verdict(ranked, base)
    missing = [name for name, series in curves.items() if name != NONE and size not in series]
    if missing:
        sentence += "; not measured at this size: " + ", ".join(missing)
    return sentence


def _overhead_sentences(found: Found) -> List[str]:
    sentences = []
    for operation in operations_measured(found):
        for kind in kinds_measured(found, operation):
            curves = named_series(found, operation, kind)
            for size in diagnosed_sizes(curves.get(NONE, {})):
                sentences.append(_overhead_sentence(found, operation, kind, size, curves))
    return sentences


def _missing_baseline_sentences(found: Found) -> List[str]:
    overheads = [key for key in found if key.strategy != BLOCKING]
    if not overheads or any(key.setting == NONE and key.strategy == NONE for key in overheads):
        return []
    return [
        "warning: no run with the none setting (the library alone, no tests): the other "
        "settings cannot be compared with it; run mpilens-progress without LD_PRELOAD and "
        "without asynchronous progress variables into the same directory"
    ]


@dataclass(frozen=True)
class ThreadCost:
    """A thread's work-based overhead beyond its time-based one at one size: CPU it takes from
    the computation that no MPI call shows (seed §V-B3)."""

    setting: str
    operation: str
    size: int
    seen: Measure  # time-based
    felt: Measure  # work-based

    @property
    def hidden_ns(self) -> float:
        return self.felt.value - max(self.seen.value, 0.0)


def thread_cost(found: Found, setting: str, operation: str) -> Optional[ThreadCost]:
    """A thread's work-based overhead far above its time-based one (beyond noise and
    WORK_CONTRAST times) at the largest size both measured; None when it is not."""
    time_based = series(found, operation, "time", setting, NONE)
    work_based = series(found, operation, "work", setting, NONE)
    sizes = set(time_based) & set(work_based)
    if not sizes:
        return None
    size = max(sizes)
    seen, felt = time_based[size], work_based[size]
    if felt.nil or felt.same(seen) or felt.value <= WORK_CONTRAST * max(seen.value, 0.0):
        return None
    return ThreadCost(setting, operation, size, seen, felt)


def thread_costs(found: Found) -> List[ThreadCost]:
    """thread_cost of every thread setting and operation that has one."""
    return [
        cost
        for setting in setting_order(key.setting for key in found)
        if is_thread(setting)
        for operation in operations_measured(found)
        if (cost := thread_cost(found, setting, operation)) is not None
    ]


def _contrast(cost: ThreadCost) -> str:
    seen, felt = cost.seen, cost.felt
    how = f" ({factor(felt.value / seen.value)})" if seen.value > 0 else ""
    return (
        f"{title(cost.operation)} at {format_size(cost.size)} {format_time(felt.value)} "
        f"work-based against {overhead_text(seen)} time-based{how}"
    )


def _contrast_sentences(found: Found) -> List[str]:
    """Seed §V-B3: a thread can look free in the time spent in MPI calls and still take CPU
    from the computation (its own polling, context switches, cache pollution)."""
    by_setting: Dict[str, List[ThreadCost]] = {}
    for cost in thread_costs(found):
        by_setting.setdefault(cost.setting, []).append(cost)
    return [
        f"{setting}: the thread costs more than its MPI calls show: "
        + ", ".join(_contrast(cost) for cost in costs)
        + "; the time-based overhead counts only the time inside "
        "MPI calls, the work-based one also the CPU the thread takes from the "
        "computation (seed §V-B3), which is what an application feels"
        for setting, costs in by_setting.items()
    ]


# --- context switches (seed §V-B1a) --------------------------------------------------------------


@dataclass(frozen=True)
class Switches:
    """Context switches per repetition of one point, the most of any rank: how often the
    progress thread blocked (each sleep or wait ends in one) and how often the rank's own thread,
    which computes, was preempted."""

    setting: str
    operation: str
    size: int
    thread_blocked: float
    rank_preempted: float


def _most_per_repetition(group: object, kind: str, repetitions: int) -> Optional[float]:
    counts = group.get(kind) if isinstance(group, dict) else None
    if not isinstance(counts, list) or not counts:
        return None
    values = [record_number(value) for value in counts]
    if any(value is None or value < 0 for value in values):
        return None
    return max(value for value in values if value is not None) / repetitions


def switches_of(point: Record) -> Optional[Switches]:
    """A time-based none point's switches, None without a progress thread's counts."""
    params, stats = record_object(point, "params"), record_object(point, "stats")
    found = stats.get("context_switches")
    size = record_integer(params.get("size_bytes"))
    operation = operation_of(point)
    n = record_integer(record_object(stats, "sample").get("n"))
    if not isinstance(found, dict) or size is None or operation is None or not n:
        return None
    repetitions = n + 1  # the warm-up repetition is counted too
    blocked = _most_per_repetition(found.get("progress_thread"), "voluntary", repetitions)
    preempted = _most_per_repetition(found.get("rank"), "involuntary", repetitions)
    if blocked is None or preempted is None:
        return None
    setting = params.get("progress", NONE)
    return Switches(str(setting), operation, size, blocked, preempted)


def _switch_sentences(run: Run) -> List[str]:
    """Per thread setting, at its largest point-to-point size (else a collective's): how often
    its thread woke and how often that took the computation's core (seed §V-B1a: each costs
    microseconds of CPU that no MPI call shows)."""
    chosen: Dict[str, Switches] = {}
    for point in run.points:
        params = record_object(point, "params")
        if params.get("strategy") != NONE or params.get("compute") != "time":
            continue
        found = switches_of(point)
        if found is None or not is_thread(found.setting):
            continue
        best = chosen.get(found.setting)
        rank = (found.operation == P2P, found.size)
        if best is None or rank > (best.operation == P2P, best.size):
            chosen[found.setting] = found
    return [
        f"{setting}: per repetition of {title(found.operation)} at {format_size(found.size)}, the "
        f"progress thread blocked {found.thread_blocked:.0f} times (one wake-up each) and the "
        f"computing thread was preempted {found.rank_preempted:.0f} times (the most of any rank; "
        "stats.context_switches, seed §V-B1a)"
        for setting, found in chosen.items()
    ]


# Where the N tests of the test strategies went in the computation (--test-placement), in words.
TEST_PLACEMENT_TEXT = {
    "even": "evenly inside the computation, test k of N at k/(N+1) of it (--test-placement even)",
    "seed": "as seed 002 places them, at the computation's start, evenly, and at its end, test k "
    "of N at k/(N-1) of it (--test-placement seed)",
}


def _test_placement_sentences(run: Run) -> List[str]:
    """Where the MPI_Test calls of the test strategies went: the run's test_placement, `even` in
    results written before it was recorded."""
    placements = sorted(
        {
            str(record_object(point, "params").get("test_placement", "even"))
            for point in run.points
            if record_object(point, "params").get("strategy") in (TEST, TEST_BEST)
        }
    )
    if not placements:
        return []
    return [
        "MPI_Test calls of the test strategies: "
        + "; in other points, ".join(TEST_PLACEMENT_TEXT.get(p, f"placed {p}") for p in placements)
    ]


# --- where the progress threads ran --------------------------------------------------------------


@dataclass
class Placement:
    """Where one setting's progress threads ran, against the cores its ranks compute on."""

    # (rank, cpu) on a core no rank of its node may use
    spare: List[Tuple[int, int]] = field(default_factory=list)
    # (rank, cpu, the ranks of its node that may use that core)
    shared: List[Tuple[int, int, List[int]]] = field(default_factory=list)
    unbound: List[int] = field(default_factory=list)  # ranks whose thread was not bound
    # (rank, cpu) where the bindings of the node's ranks are not recorded
    unknown: List[Tuple[int, int]] = field(default_factory=list)
    stopped: List[int] = field(default_factory=list)  # ranks where no thread ran

    @property
    def on_spare_cores(self) -> bool:
        return bool(self.spare) and not (self.shared or self.unbound or self.unknown)


def _per_rank(library: Record, name: str, first: object, ranks: int) -> list:
    """Every rank's entry; without the list, rank 0's alone is known."""
    values = library.get(name)
    return (
        list(values)
        if isinstance(values, list) and len(values) == ranks
        else [first] + [None] * (ranks - 1)
    )


def placement(member: Run) -> Optional[Placement]:
    """Where a setting's threads ran; None when no thread ran on any rank."""
    meta = member.meta
    library = record_object(record_object(meta, "progress_setting"), "library")
    ranks = record_integer(meta.get("ranks")) or 1
    running = _per_rank(library, "running_per_rank", library.get("running"), ranks)
    cpus = _per_rank(library, "cpu_per_rank", library.get("cpu"), ranks)
    if not any(flag is True for flag in running):
        return None
    recorded_hosts, recorded_bindings = meta.get("hosts"), meta.get("binding")
    hosts: List[object] = (
        recorded_hosts
        if isinstance(recorded_hosts, list) and len(recorded_hosts) == ranks
        else [None] * ranks
    )
    bindings: List[Optional[Set[int]]] = (
        [cpu_set(text) for text in recorded_bindings]
        if isinstance(recorded_bindings, list) and len(recorded_bindings) == ranks
        else [None] * ranks
    )
    nodes: Dict[object, List[int]] = {}
    for rank, host in enumerate(hosts):
        nodes.setdefault(host, []).append(rank)
    # Each node's once, not each rank's: a rank's node is thousands of ranks at scale.
    users_of = {host: _core_users(members, bindings) for host, members in nodes.items()}
    found = Placement()
    for rank in range(ranks):
        cpu = record_integer(cpus[rank])
        users = users_of[hosts[rank]]
        if running[rank] is not True:
            if running[rank] is False:
                found.stopped.append(rank)
        elif cpu is None or cpu < 0:
            found.unbound.append(rank)
        elif users is None:
            found.unknown.append((rank, cpu))
        elif cpu in users:
            found.shared.append((rank, cpu, users[cpu]))
        else:
            found.spare.append((rank, cpu))
    return found


def _core_users(
    members: Sequence[int], bindings: Sequence[Optional[Set[int]]]
) -> Optional[Dict[int, List[int]]]:
    """cpu → the ranks of a node that may use it; None when a rank's binding is not recorded."""
    users: Dict[int, List[int]] = {}
    for rank in members:
        binding = bindings[rank]
        if binding is None:
            return None
        for cpu in binding:
            users.setdefault(cpu, []).append(rank)
    return users


def _named(entries: Sequence[tuple], text: Callable[..., str], separator: str) -> str:
    """The text of the first NAMED_THREADS entries, and how many more there are."""
    more = len(entries) - NAMED_THREADS
    shown = separator.join(text(*entry) for entry in entries[:NAMED_THREADS])
    return shown + (f"{separator}{more} more" if more > 0 else "")


def _pairs(entries: Sequence[Tuple[int, int]]) -> str:
    return _named(entries, lambda rank, cpu: f"rank {rank} on cpu {cpu}", ", ")


def _ranks_on_first_node(meta: Record) -> int:
    hosts = meta.get("hosts")
    if not isinstance(hosts, list) or not hosts:
        return record_integer(meta.get("ranks")) or 1
    return sum(host == hosts[0] for host in hosts)


def _shared_details(found: Placement) -> str:
    details = (
        [
            _named(
                found.shared,
                lambda rank, cpu, users: (
                    f"rank {rank}'s thread on cpu {cpu}, where rank{'s' if len(users) > 1 else ''} "
                    f"{ranges(users)} may compute"
                ),
                "; ",
            )
        ]
        if found.shared
        else []
    )
    if found.unbound:
        details.append(
            f"unbound on rank{'s' if len(found.unbound) > 1 else ''} {ranges(found.unbound)}"
        )
    return "; ".join(details)


def _idle_cores(member: Run, found: Placement) -> str:
    """An unbound thread on a node with more processing units than ranks may have found an idle
    one: say so, the result may then lie between the two cases."""
    online = record_integer(member.meta.get("cpus_online"))
    ranks = _ranks_on_first_node(member.meta)
    if not found.unbound or online is None or online <= ranks:
        return ""
    return (
        f"; the node has {online} processing units for {ranks} ranks, so the scheduler may "
        "have run an unbound thread on an idle one, which would put the result between the "
        "two cases"
    )


def _placement_sentence(label: str, member: Run, found: Placement) -> str:
    if found.on_spare_cores:
        sentence = (
            f"{label}: every progress thread ran on a core no rank computes on "
            f"({_pairs(found.spare)}): the spare-core case of the seed (figures 7 and 8), "
            "in which a thread takes the communication off the computation"
        )
    elif found.shared or found.unbound:
        sentence = (
            f"{label}: the progress thread was not on a spare core "
            f"({_shared_details(found)}): these are the shared-core results, the "
            "seed's fully subscribed case (figures 9 and 10), in which the thread "
            "competes with the computation for its core" + _idle_cores(member, found)
        )
    else:
        sentence = (
            f"{label}: the progress threads ran on known cores "
            f"({_pairs(found.spare + found.unknown)}), but the ranks' bindings are not "
            "recorded: whether they shared a core with the computation cannot be told"
        )
    if found.stopped:
        sentence += f"; no thread ran on ranks {ranges(found.stopped)}"
    reason = record_object(record_object(member.meta, "progress_setting"), "library").get("reason")
    if isinstance(reason, str) and reason.strip():
        sentence += f"; libmpilens-progress said: {reason.strip()}"
    return sentence


def _placement_sentences(run: Run) -> List[str]:
    sentences = []
    for label, member in members_by_setting(run).items():
        found = placement(member)
        if found is not None:
            sentences.append(_placement_sentence(label, member, found))
    return sentences


# --- asynchronous progress and blocking times ----------------------------------------------------


def _against_none(
    found: Found, setting: str, strategy: str = NONE
) -> List[Tuple[str, str, int, Measure, Measure]]:
    """(operation, kind, size, none's, the setting's) at the largest size both measured."""
    pairs = []
    for operation in operations_measured(found):
        for kind in kinds_measured(found, operation) if strategy == NONE else [""]:
            base = series(found, operation, kind, NONE, strategy)
            mine = series(found, operation, kind, setting, strategy)
            sizes = set(base) & set(mine)
            if sizes:
                size = max(sizes)
                pairs.append((operation, kind, size, base[size], mine[size]))
    return pairs


def _pair_text(operation: str, kind: str, size: int, base: Measure, mine: Measure) -> str:
    what = f"{title(operation)}{f' {kind}-based' if kind else ''} at {format_size(size)}"
    return f"{what} ({overhead_text(mine)} against {overhead_text(base)})"


def _thread_level_hint(member: Run) -> str:
    """MPICH raises the thread level to MPI_THREAD_MULTIPLE when it starts its asynchronous
    progress thread: a level above the one asked, without libmpilens-progress (which raises it
    too), is a sign the library obeyed the variable."""
    setting = record_object(member.meta, "progress_setting")
    provided = setting.get("thread_level")
    asked = record_object(member.meta, "options").get("thread-level")
    if (
        record_object(setting, "library").get("loaded") is True
        or provided != "multiple"
        or not isinstance(asked, str)
        or asked == "multiple"
    ):
        return ""
    return (
        f"; the library provided MPI_THREAD_MULTIPLE where the program asked for {asked}, a "
        "sign that it started a thread of its own"
    )


def _async_sentence(found: Found, label: str, member: Run) -> str:
    sentence = f"{label}: the program cannot ask the library whether it obeyed the variable"
    sentence += _thread_level_hint(member)
    pairs = _against_none(found, label)
    if not pairs:
        return sentence
    lower = [
        _pair_text(*pair)
        for pair in pairs
        if not pair[4].same(pair[3]) and pair[4].value < pair[3].value
    ]
    higher = [
        _pair_text(*pair)
        for pair in pairs
        if not pair[4].same(pair[3]) and pair[4].value > pair[3].value
    ]
    if not lower and not higher:
        return sentence + (
            "; its overheads are within noise of none's everywhere, at the "
            "largest sizes: nothing shows that it changed anything"
        )
    if lower:
        sentence += "; lower than none's beyond noise: " + ", ".join(lower)
    if higher:
        sentence += "; higher than none's beyond noise: " + ", ".join(higher)
    return sentence


def _async_sentences(run: Run, found: Found) -> List[str]:
    return [
        _async_sentence(found, label, member)
        for label, member in members_by_setting(run).items()
        if is_async(label)
    ]


def _blocking_sentences(found: Found) -> List[str]:
    """A setting that changes the blocking time changes what its points compute for."""
    sentences = []
    for setting in setting_order(key.setting for key in found):
        if setting == NONE:
            continue
        changed = [
            _pair_text(operation, kind, size, base, mine)
            for operation, kind, size, base, mine in _against_none(found, setting, BLOCKING)
            if not mine.same(base) and abs(mine.value - base.value) > BLOCKING_CHANGE * base.value
        ]
        if changed:
            sentences.append(
                f"{setting} changed the blocking time t_b itself: "
                + ", ".join(changed)
                + "; its points computed for their own t_b"
            )
    return sentences


# --- interrupts ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interrupts:
    """One interrupts point (seed §V-B2)."""

    rate_hz: int
    threads: int
    t1_ns: float
    t2_ns: float
    wakeups: float
    achieved_hz: float
    per_interrupt_ns: float
    spread: Optional[float]


def interrupts(run: Run) -> List[Interrupts]:
    found = []
    for point in run.points_of(INTERRUPTS):
        params, stats = record_object(point, "params"), record_object(point, "stats")
        rate, threads = record_integer(params.get("rate_hz")), record_integer(stats.get("threads"))
        t1, t2, wakeups, achieved, per_interrupt = (
            record_number(stats.get(name))
            for name in ("t1_ns", "t2_ns", "wakeups", "achieved_hz", "per_interrupt_ns")
        )
        if (
            rate is None
            or threads is None
            or t1 is None
            or t2 is None
            or wakeups is None
            or achieved is None
            or per_interrupt is None
        ):
            continue
        found.append(
            Interrupts(
                rate,
                threads,
                t1,
                t2,
                wakeups,
                achieved,
                per_interrupt,
                record_number(stats.get("spread")),
            )
        )
    return sorted(found, key=lambda entry: entry.rate_hz)


def _interrupt_sentences(run: Run) -> List[str]:
    sentences = []
    for found in interrupts(run):
        head = (
            f"interrupts at {found.rate_hz} Hz ({found.achieved_hz:.0f} Hz achieved), "
            f"{found.threads} computing threads"
        )
        if found.per_interrupt_ns <= 0 or found.t2_ns <= found.t1_ns or found.t1_ns <= 0:
            sentences.append(
                head + ": no measurable cost, the work took as long with the timer "
                "as without (within noise)"
            )
        else:
            sentences.append(
                head + f": each wake-up took {format_time(found.per_interrupt_ns)} of CPU per "
                f"core, {factor(found.per_interrupt_ns / SEED_INTERRUPT_NS)} the seed's "
                f"{format_time(SEED_INTERRUPT_NS)}; the work took "
                f"{percent((found.t2_ns - found.t1_ns) / found.t1_ns)} longer with the timer "
                "(what a progress thread woken as often by interrupts would take, seed §V-B2)"
            )
        if found.achieved_hz < RATE_SHORTFALL * found.rate_hz:
            sentences.append(
                f"warning: interrupts: the timer fired {found.achieved_hz:.0f} times "
                f"a second of the {found.rate_hz} asked: the cost per wake-up holds, "
                "but the cores were loaded less than asked"
            )
    return sentences


def diagnose(run: Run) -> List[str]:
    """Sentences for the report's findings, warnings starting with "warning:"."""
    found = measurements(run)
    return (
        _impossible_sentences(run)
        + _missing_baseline_sentences(found)
        + _overhead_sentences(found)
        + _contrast_sentences(found)
        + _switch_sentences(run)
        + _test_placement_sentences(run)
        + _placement_sentences(run)
        + _async_sentences(run, found)
        + _blocking_sentences(found)
        + _interrupt_sentences(run)
        # The programs' warnings (MPILENS_PROGRESS set without the library loaded, ...), each
        # naming its setting.
        + run.file_warnings(label_of)
    )


# --- the table `mpilens progress` prints ---------------------------------------------------------


def curve_names(found: Found) -> List[str]:
    """Every overhead curve's name, in the order of named_series."""
    present = {(key.setting, key.strategy) for key in found}
    return [
        curve_name(setting, strategy)
        for setting in setting_order(key.setting for key in found)
        for strategy in (NONE, TEST_BEST)
        if (setting, strategy) in present
    ]


def table_size(curves: Dict[str, Dict[int, Measure]]) -> Optional[int]:
    """The size a row of the tables shows: none's largest, else the largest of any curve."""
    if NONE in curves:
        return largest_size(curves[NONE])
    return max((size for series in curves.values() for size in series), default=None)


def comparison_table(run: Run) -> List[str]:
    """A plain text table: per operation and kind of computation, the blocking time and every
    curve's overhead at the largest size."""
    found = measurements(run)
    names = curve_names(found)
    if not names:
        return []
    rows = [["operation", "kind", "size", "t_b", *names]]
    for operation in operations_measured(found):
        for kind in kinds_measured(found, operation):
            curves = named_series(found, operation, kind)
            size = table_size(curves)
            if size is None:
                continue
            t_b = reference(found, operation).get(size)
            rows.append(
                [
                    title(operation),
                    kind,
                    format_size(size),
                    format_time(t_b) if t_b is not None else "-",
                    *(overhead_text(curves.get(name, {}).get(size)) for name in names),
                ]
            )
    return [
        "overhead t_o at the largest size: none is the library alone without tests, "
        "test-best its best MPI_Test interval, the other columns each setting without tests; "
        "~0: within noise of zero"
    ] + columns(rows, left=2)


def best_curve(found: Found, operation: str, kind: str) -> Optional[str]:
    """The curve other than none with the lowest overhead at the size of the tables."""
    curves = named_series(found, operation, kind)
    size = table_size(curves)
    ranked = ranking(curves, size) if size is not None else []
    return ranked[0][0] if ranked else None


# --- comparison ----------------------------------------------------------------------------------


def _best_text(ranked: List[Tuple[str, Measure]], base: Measure) -> str:
    if not ranked or (
        not ranked[0][1].nil and (ranked[0][1].same(base) or ranked[0][1].value > base.value)
    ):
        return "nothing better than none"
    name, best = ranked[0]
    return f"{name} {overhead_text(best)} ({change(base, best)})"


def _side(found: Found, operation: str, kind: str, size: int) -> Tuple[str, str]:
    """(none's overhead against t_b, the best curve) of one study at one size."""
    curves = named_series(found, operation, kind)
    base = curves[NONE][size]
    t_b = blocking(found, operation).get(size)
    loss = overhead_text(base) + (f" ({percent(max(base.value, 0.0) / t_b)} of t_b)" if t_b else "")
    return loss, _best_text(ranking(curves, size), base)


def _interrupt_comparison(run_a: Run, run_b: Run, names: Tuple[str, str]) -> List[str]:
    found_a = {entry.rate_hz: entry for entry in interrupts(run_a)}
    found_b = {entry.rate_hz: entry for entry in interrupts(run_b)}
    return [
        f"interrupts at {rate} Hz: {format_time(found_a[rate].per_interrupt_ns)} per wake-up "
        f"per core in {names[0]}, {format_time(found_b[rate].per_interrupt_ns)} in "
        f"{names[1]} (the seed: {format_time(SEED_INTERRUPT_NS)})"
        for rate in sorted(set(found_a) & set(found_b))
    ]


def compare(run_a: Run, run_b: Run) -> List[str]:
    """Per operation and kind: none's overhead at the largest size both measured, and the best
    strategy or setting of each study there; then the cost of an interrupt."""
    names = run_names(run_a, run_b)
    found_a, found_b = measurements(run_a), measurements(run_b)
    sentences = []
    for operation in operations_measured(found_a):
        for kind in kinds_measured(found_a, operation):
            sizes = set(series(found_a, operation, kind, NONE, NONE)) & set(
                series(found_b, operation, kind, NONE, NONE)
            )
            if not sizes:
                continue
            size = max(sizes)
            (loss_a, best_a), (loss_b, best_b) = (
                _side(found, operation, kind, size) for found in (found_a, found_b)
            )
            sentences.append(
                f"{title(operation)} at {format_size(size)}, {kind}-based: without help "
                f"{loss_a} in {names[0]}, {loss_b} in {names[1]}; best: {best_a} in "
                f"{names[0]}, {best_b} in {names[1]}"
            )
    return sentences + _interrupt_comparison(run_a, run_b, names)
