"""What the map family's points say: whether reordering the ranks after their communication
pattern pays off (seed 004, sections 6.4 and 6.5), and whether the cost model of
libmpilens-map saw it coming.

Two example programs write points of family "map". allgather_groups (seed §6.4, figure 6):
groups of ranks run MPI_Allgather for n iterations (t1), reorder (t2), then run n iterations on
the new communicator (t3); the gain is 100 (t1 − (t2 + t3)) / t1, over a grid of iteration
counts × buffer sizes. cg_reorder (seed §6.5): a conjugate gradient solve before and after
reordering, its communication and whole times. Both write the cost model's weighted cost of the
placement before and after, and its predicted gain 100 (1 − after / before).

The report reads every file of the family in a directory as one run (combine): one heat map per
rank count, group size, algorithm and topology, as the seed draws one per rank count. Plain
Python (no numpy): the CLI imports it on every start.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ..results import Record, Run, join_files, record_integer, record_number, record_object
from ..text import columns, listed
from ..units import format_size, format_time, short_size
from .conditions import conditions
from .overlap import run_names

ALLGATHER, CG = "allgather_groups", "cg_reorder"
# mpilens-example-reorder-allgather --collective bcast|reduce (seed §6.3, figure 5): the same
# phases and grid as allgather_groups, for one collective of all ranks.
COLLECTIVE_BENCHES = (ALLGATHER, "bcast_reorder", "reduce_reorder")
# A measured gain within this many percentage points of the model's prediction agrees with it:
# the model counts bytes per level of the machine, not latency or contention.
AGREEMENT_POINTS = 10.0
# Predicted gains closer than this are one value: the model depends on the pattern alone, which
# is the same in every cell of a grid.
CONSTANT_POINTS = 0.05
# Residuals of the CG before and after reordering: within ROUNDING of each other (relative) they
# are the same; within ALLOWED, the bound the program accepts (examples/cg.c, SAME_SOLUTION_REL),
# the library arranged a reduction by placement and CG carried the rounding on; beyond it they
# are of another computation, and the program exited with status 1.
RESIDUAL_ROUNDING = 1e-12
RESIDUAL_ALLOWED = 1e-8
# The algorithm of a CG run that did not reorder: its two solves show the noise.
NO_REORDERING = "none"
# Two runs' gains at a cell closer than this are the same.
SAME_POINTS = 5.0
# A cell whose slowest repetition of a phase took more than this many times its fastest is too
# noisy for its gain to be read: the medians of three repetitions then hang on one of them.
NOISY_SPREAD = 2.0
# The phases of an allgather_groups point: stats key and name.
PHASES = (("before_s", "t1"), ("reorder_s", "t2"), ("after_s", "t3"))
NODE_LEVEL = "node"


def _seconds(stats: Record, name: str) -> Optional[float]:
    return record_number(stats.get(name))


def _permutation(value: object) -> Optional[Tuple[int, ...]]:
    if not isinstance(value, list):
        return None
    ranks = []
    for entry in value:
        rank = record_integer(entry)
        if rank is None:
            return None
        ranks.append(rank)
    return tuple(ranks)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def percent(value: float) -> str:
    """A percentage without sign: 45%."""
    text = f"{value:.0f}%"
    return "0%" if text == "-0%" else text


def signed(value: float) -> str:
    """A gain with its sign: +40%, -50%, 0%."""
    text = f"{value:+.0f}%"
    return "0%" if text in ("+0%", "-0%") else text


def count_text(value: float) -> str:
    """A number of iterations that need not be whole: 20, 2.5, 1200."""
    if value >= 10:
        return f"{value:.0f}"
    return f"{value:.1f}".rstrip("0").rstrip(".")


def iterations_text(value: float) -> str:
    return f"{count_text(value)} iteration{'' if count_text(value) == '1' else 's'}"


def _ns(seconds: float) -> str:
    return format_time(seconds * 1e9)


def predicted_from(stats: Record) -> Optional[float]:
    """The cost model's gain: the program's, else from the weighted costs it wrote."""
    given = record_number(stats.get("predicted_gain_pct"))
    if given is not None:
        return given
    before, after = (
        record_number(stats.get(name)) for name in ("weighted_before", "weighted_after")
    )
    if before is None or after is None or before <= 0:
        return None
    return 100.0 * (1.0 - after / before)


# --- reading several files as one run ----------------------------------------------------------


def _ranks(run: Run) -> int:
    return record_integer(run.meta.get("ranks")) or 0


def combine(runs: Sequence[Run]) -> Run:
    """The map files of one directory (both example programs, several rank counts) read as one
    run (results.join_files), by rank count then file name, with the first file's meta; two files
    holding the same point at the same rank count are refused."""
    return join_files(
        runs,
        lambda member: (_ranks(member), member.path.name),
        lambda member, point: (_ranks(member), point["key"]),
        lambda found: f'point "{found[1]}" at {found[0]} ranks',
        "no map results to read",
    )


def located(run: Run, bench: str) -> List[Tuple[Record, Record]]:
    """(point, the meta of its file) of every point of a benchmark."""
    return [
        (point, member.meta)
        for member in (run.members or [run])
        for point in member.points_of(bench)
    ]


# --- the topology and the machine ----------------------------------------------------------------


def levels(topology: str) -> List[Tuple[str, int]]:
    """(name, arity) of each level of a synthetic description ("node:2 core:4 cost=10,1");
    words that are not NAME:ARITY are left out."""
    found = []
    for word in topology.split():
        name, _, arity = word.partition(":")
        if name and not name.startswith("cost=") and arity.isdigit():
            found.append((name, int(arity)))
    return found


def modeled_nodes(topology: str, meta: Record) -> int:
    """The nodes a topology models on a run that had one machine; 0 when it models none or the
    run had several nodes (then the model's node level is real)."""
    nodes = record_integer(meta.get("nodes"))
    arity = {name.lower(): count for name, count in levels(topology)}.get(NODE_LEVEL, 1)
    return arity if nodes == 1 and arity > 1 else 0


def _oversubscribed(meta: Record) -> Optional[Tuple[int, int]]:
    """(ranks, processing units) when a single machine ran more ranks than it has units."""
    ranks, cpus = record_integer(meta.get("ranks")), record_integer(meta.get("cpus_online"))
    nodes = record_integer(meta.get("nodes"))
    if ranks is None or cpus is None or nodes != 1 or ranks <= cpus:
        return None
    return ranks, cpus


def _modeled_nodes_sentence(topology: str, meta: Record) -> Optional[str]:
    nodes = modeled_nodes(topology, meta)
    if not nodes:
        return None
    return (
        f'the topology "{topology}" models {nodes} nodes, but the run was on one '
        "machine: the node-to-node costs the model saves are not paid here, where every rank "
        "shares memory, so the predicted gain is what a cluster of such nodes would see, not "
        "what this machine can show"
    )


def _reasons(topology: str, meta: Record, unbound: bool, in_place: bool) -> List[str]:
    """What the run recorded that can make a measured gain differ from the predicted one."""
    if in_place:
        # Then nothing the model counts changed: the difference is not the reordering's.
        return [
            "the reordering kept every rank in place, so the difference is not the "
            "reordering's: it is noise, or the first run warming up what the second used"
        ]
    reasons = []
    nodes = modeled_nodes(topology, meta)
    if nodes:
        reasons.append(f"the {nodes} nodes of the model do not exist on this one machine")
    if unbound:
        reasons.append("the ranks were not all bound (their slots were guessed)")
    crowded = _oversubscribed(meta)
    if crowded:
        reasons.append(f"{crowded[0]} ranks shared {crowded[1]} processing units")
    if conditions(meta):
        reasons.append(
            "the ranks shared their cores with each other and with the network stack "
            "(the run's conditions, first among the findings), a wait the model does "
            "not count and the reordering does not remove"
        )
    return reasons


def _agreement(steady: float, predicted: float, reasons: List[str]) -> str:
    """Whether the gain without the reordering's cost matches the model, and why not."""
    gap = abs(steady - predicted)
    if gap <= AGREEMENT_POINTS:
        return f"; measurement and model agree (within {AGREEMENT_POINTS:.0f} points)"
    side = "below" if steady < predicted else "above"
    text = f"; that is {gap:.0f} points {side} the model"
    if reasons:
        return text + ", likely because " + listed(reasons)
    return text + (
        ": nothing recorded explains it; the model counts bytes per level of the "
        "machine, not latency, contention or the MPI library's own algorithm"
    )


def _less_text(steady: float) -> str:
    return f"{percent(steady)} less" if steady >= 0 else f"{percent(-steady)} more"


# --- allgather_groups: the grid of seed figure 6 -------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """What one heat map is of."""

    ranks: int
    group: int
    algo: str
    topology: str
    bench: str = ALLGATHER

    @property
    def figure(self) -> str:
        """The seed's figure of the benchmark."""
        return "figure 6" if self.bench == ALLGATHER else "figure 5"


@dataclass(frozen=True)
class Spread:
    """The fastest and slowest repetitions of one phase of a point, in seconds."""

    phase: str  # t1, t2 or t3
    low: float
    high: float

    @property
    def ratio(self) -> float:
        return self.high / self.low


def widest_spread(stats: Record) -> Optional[Spread]:
    """The phase whose repetitions (stats.samples) differ most; None without repetitions."""
    samples = record_object(stats, "samples")
    found = []
    for name, phase in PHASES:
        values = samples.get(name)
        numbers = [record_number(value) for value in values] if isinstance(values, list) else []
        positive = [number for number in numbers if number is not None and number > 0]
        if len(positive) > 1:
            found.append(Spread(phase, min(positive), max(positive)))
    return max(found, key=lambda spread: spread.ratio, default=None)


@dataclass(frozen=True)
class Cell:
    """One allgather_groups point: times in seconds."""

    iterations: int
    size: int
    before_s: float
    reorder_s: float
    after_s: float
    predicted_pct: Optional[float]
    weighted_before: Optional[float]
    weighted_after: Optional[float]
    hop_bytes_before: Optional[float]
    hop_bytes_after: Optional[float]
    all_bound: Optional[bool]
    new_rank_of: Optional[Tuple[int, ...]]
    spread: Optional[Spread] = None
    # The fastest repetition before and the slowest after (stats.samples), when recorded.
    fastest_before_s: Optional[float] = None
    slowest_after_s: Optional[float] = None

    @property
    def noisy(self) -> bool:
        return self.spread is not None and self.spread.ratio > NOISY_SPREAD

    @property
    def gain_pct(self) -> float:
        """The seed's gain, the reordering's own time included: 100 (t1 − (t2 + t3)) / t1."""
        return 100.0 * (self.before_s - (self.reorder_s + self.after_s)) / self.before_s

    @property
    def steady_pct(self) -> float:
        """The gain without the reordering's time, what the cost model predicts: 100 (t1 − t3)
        / t1."""
        return 100.0 * (self.before_s - self.after_s) / self.before_s

    @property
    def lowest_steady_pct(self) -> Optional[float]:
        """The smallest steady gain the repetitions allow: the fastest before against the
        slowest after; None without repetitions."""
        before, after = self.fastest_before_s, self.slowest_after_s
        return None if before is None or after is None else 100.0 * (before - after) / before

    @property
    def model_pct(self) -> Optional[float]:
        """The gain the model stands for: its prediction, 0 when no rank moved."""
        in_place = self.new_rank_of is not None and self.new_rank_of == tuple(
            range(len(self.new_rank_of))
        )
        return 0.0 if in_place else self.predicted_pct

    @property
    def unexplained(self) -> bool:
        """A gain above what the model predicts (or where it predicts none, no rank moving) by
        more than AGREEMENT_POINTS, even from the fastest repetition before to the slowest after:
        the reordering cannot save what the placement does not cost, so the times moved for
        another reason and the cell is invalid. Without repetitions, noise cannot be told from
        a cause, and the cell is judged as measured."""
        model, lowest = self.model_pct, self.lowest_steady_pct
        return model is not None and lowest is not None and lowest > model + AGREEMENT_POINTS

    @property
    def iteration_s(self) -> float:
        """One iteration before reordering."""
        return self.before_s / self.iterations

    @property
    def saving_s(self) -> float:
        """What one iteration saves after reordering."""
        return (self.before_s - self.after_s) / self.iterations

    @property
    def break_even(self) -> Optional[float]:
        """The iterations whose savings repay the reordering; None when they save nothing."""
        return self.reorder_s / self.saving_s if self.saving_s > 0 else None


def _cell(point: Record) -> Optional[Cell]:
    params, stats = record_object(point, "params"), record_object(point, "stats")
    iterations, size = (
        record_integer(params.get("iterations")),
        record_integer(params.get("size_bytes")),
    )
    before, reorder, after = (
        _seconds(stats, name) for name in ("before_s", "reorder_s", "after_s")
    )
    if (
        iterations is None
        or iterations <= 0
        or size is None
        or before is None
        or before <= 0
        or reorder is None
        or after is None
    ):
        return None
    bound = record_integer(stats.get("all_bound"))
    return Cell(
        iterations,
        size,
        before,
        reorder,
        after,
        predicted_from(stats),
        record_number(stats.get("weighted_before")),
        record_number(stats.get("weighted_after")),
        record_number(stats.get("hop_bytes_before")),
        record_number(stats.get("hop_bytes_after")),
        None if bound is None else bound != 0,
        _permutation(stats.get("new_rank_of")),
        widest_spread(stats),
        _extreme(stats, "before_s", min),
        _extreme(stats, "after_s", max),
    )


def _extreme(stats: Record, name: str, pick: Callable[[List[float]], float]) -> Optional[float]:
    values = record_object(stats, "samples").get(name)
    numbers = [record_number(value) for value in values] if isinstance(values, list) else []
    positive = [number for number in numbers if number is not None and number > 0]
    return pick(positive) if positive else None


@dataclass
class Grid:
    """Every cell of one setting: iteration counts (rows) × buffer sizes (columns)."""

    setting: Setting
    meta: Record  # the file's, for the machine it ran on
    cells: Dict[Tuple[int, int], Cell]
    # Cells whose gain the model cannot explain (Cell.unexplained): left out of every figure.
    invalid: Dict[Tuple[int, int], Cell] = field(default_factory=dict)

    @property
    def iterations(self) -> List[int]:
        return sorted({iterations for iterations, _ in self.cells})

    @property
    def sizes(self) -> List[int]:
        return sorted({size for _, size in self.cells})

    def cell(self, iterations: int, size: int) -> Optional[Cell]:
        return self.cells.get((iterations, size))

    def column(self, size: int) -> List[Cell]:
        """The cells of one size, fewest iterations first."""
        return [self.cells[(n, size)] for n in self.iterations if (n, size) in self.cells]

    def values(self, name: str) -> List[List[Optional[float]]]:
        """A property of every cell (gain_pct, predicted_pct, ...), rows by iterations."""
        return [
            [
                None if self.cell(n, size) is None else getattr(self.cell(n, size), name)
                for size in self.sizes
            ]
            for n in self.iterations
        ]

    def reference(self) -> Cell:
        """The cell the model is checked at: the largest size at its most iterations, where the
        bytes the model counts weigh most and one iteration's noise least."""
        return self.column(self.sizes[-1])[-1]

    def best(self) -> Cell:
        return max(
            self.cells.values(), key=lambda cell: (cell.gain_pct, cell.size, cell.iterations)
        )

    @property
    def predicted(self) -> List[float]:
        return [
            cell.predicted_pct for cell in self.cells.values() if cell.predicted_pct is not None
        ]

    def constant_prediction(self) -> Optional[float]:
        """The predicted gain when it is the same in every cell that has one (it depends on the
        pattern alone); None when it varies or is missing."""
        found = self.predicted
        if not found or max(found) - min(found) > CONSTANT_POINTS:
            return None
        return statistics.mean(found)

    @property
    def unbound(self) -> bool:
        return any(cell.all_bound is False for cell in self.cells.values())

    @property
    def kept_in_place(self) -> bool:
        """Every cell's reordering left each rank where it was."""
        orders = [cell.new_rank_of for cell in self.cells.values()]
        return all(order is not None and order == tuple(range(len(order))) for order in orders)


def _setting(point: Record, meta: Record) -> Setting:
    params = record_object(point, "params")
    return Setting(
        record_integer(meta.get("ranks")) or 0,
        record_integer(params.get("group")) or 0,
        _text(params.get("algo")),
        _text(params.get("topology")),
        _text(point.get("bench")),
    )


def located_collectives(run: Run) -> List[Tuple[Record, Record]]:
    """located() of every benchmark of COLLECTIVE_BENCHES."""
    return [found for bench in COLLECTIVE_BENCHES for found in located(run, bench)]


def grids(run: Run) -> List[Grid]:
    """One grid per setting, by benchmark, rank count, group size, algorithm and topology."""
    found: Dict[Setting, Grid] = {}
    for point, meta in located_collectives(run):
        cell = _cell(point)
        if cell is not None:
            setting = _setting(point, meta)
            grid = found.setdefault(setting, Grid(setting, meta, {}))
            kept = grid.invalid if cell.unexplained else grid.cells
            kept[(cell.iterations, cell.size)] = cell
    return [
        found[setting]
        for setting in sorted(found, key=lambda s: (s.bench, s.ranks, s.group, s.algo, s.topology))
    ]


# Why grids() leaves a cell out (Cell.unexplained), for `mpilens export`.
INVALID_UNEXPLAINED = (
    "a gain the cost model cannot explain, even from the fastest repetition before to the "
    "slowest after: the placement cannot save what it does not cost"
)


def validity(run: Run) -> List[Tuple[Record, Optional[str]]]:
    """Every point of a grid's cell, with why its gain cannot be the reordering's (None when it
    can be)."""
    judged: List[Tuple[Record, Optional[str]]] = []
    for point, _ in located_collectives(run):
        cell = _cell(point)
        if cell is not None:
            judged.append((point, INVALID_UNEXPLAINED if cell.unexplained else None))
    return judged


def _differing(settings: Sequence[Setting]) -> List[str]:
    """The fields that tell the settings apart."""
    return [
        name
        for name in ("ranks", "group", "algo", "topology")
        if len({getattr(setting, name) for setting in settings}) > 1
    ]


def setting_text(
    setting: Setting, fields: Iterable[str] = ("ranks", "group", "algo", "topology")
) -> str:
    words = {
        "ranks": f"{setting.ranks} ranks",
        "group": f"groups of {setting.group}" if setting.bench == ALLGATHER else "all ranks",
        "algo": setting.algo or "unknown algorithm",
        "topology": f'topology "{setting.topology}"',
    }
    return ", ".join(words[name] for name in fields)


def grid_heads(found: Sequence[Grid]) -> List[str]:
    """How sentences name each grid: the benchmark, and what tells it from the others."""
    fields = _differing([grid.setting for grid in found])
    return [
        grid.setting.bench + (f" ({setting_text(grid.setting, fields)})" if fields else "")
        for grid in found
    ]


def paying_from(column: Sequence[Cell]) -> Optional[Cell]:
    """The first cell from which every cell with more iterations gains: the break-even measured
    (noise below it does not count); None when the most iterations still lose."""
    start = None
    for cell in reversed(column):
        if cell.gain_pct <= 0:
            break
        start = cell
    return start


def contradicting(column: Sequence[Cell], estimate: float) -> Optional[Cell]:
    """The first cell on the wrong side of a break-even estimate: one that loses with more
    iterations than the estimate, or gains with fewer."""
    for cell in column:
        if (cell.iterations > estimate and cell.gain_pct <= 0) or (
            cell.iterations < estimate and cell.gain_pct > 0
        ):
            return cell
    return None


def _break_even_text(column: Sequence[Cell]) -> str:
    """The break-even at the per-iteration times of the most iterations, where one iteration's
    noise and the fixed costs of a phase weigh least."""
    cell = column[-1]
    if cell.break_even is None:
        after = cell.after_s / cell.iterations
        return (
            f"; the iterations after it were not faster ({_ns(after)} each against "
            f"{_ns(cell.iteration_s)} before), so no number of iterations repays it"
        )
    text = (
        f"; at the times of {iterations_text(cell.iterations)} it breaks even at about "
        f"{iterations_text(cell.break_even)}: the reordering ({_ns(cell.reorder_s)}) costs "
        f"what that many iterations save ({_ns(cell.saving_s)} each)"
    )
    odd = contradicting(column, cell.break_even)
    if odd is not None:
        text += (
            f", which the cell at {iterations_text(odd.iterations)} does not bear out "
            f"({signed(odd.gain_pct)}): the times are not proportional to the iterations "
            "(fixed costs or noise)"
        )
    return text


def _size_sentence(head: str, grid: Grid, size: int) -> str:
    column = grid.column(size)
    first = paying_from(column)
    if first is None:
        last = column[-1]
        verdict = (
            f"reordering never pays up to {iterations_text(last.iterations)} "
            f"({signed(last.gain_pct)} there)"
        )
    elif first is column[0]:
        verdict = (
            f"reordering pays from the fewest iterations measured, {first.iterations} "
            f"({signed(first.gain_pct)})"
        )
    else:
        below = column[column.index(first) - 1]
        verdict = (
            f"reordering pays from {iterations_text(first.iterations)} on "
            f"({signed(first.gain_pct)}; {signed(below.gain_pct)} at {below.iterations})"
        )
    return f"{head} at {format_size(size)}: {verdict}{_break_even_text(column)}"


def _best_sentence(head: str, grid: Grid) -> str:
    best = grid.best()
    where = (
        f"{signed(best.gain_pct)} at {format_size(best.size)} and "
        f"{iterations_text(best.iterations)}"
    )
    if best.gain_pct <= 0:
        return f"{head}: reordering pays in no cell; the best is {where}"
    return f"{head}: the best cell is {where}"


def _cost_sentence(head: str, grid: Grid) -> str:
    times = [cell.reorder_s for cell in grid.cells.values()]
    median = statistics.median(times)
    spread = f", {_ns(min(times))} to {_ns(max(times))}" if max(times) > min(times) else ""
    sizes = grid.sizes if len(grid.sizes) < 3 else [grid.sizes[0], grid.sizes[-1]]
    clauses: List[str] = []
    for size in sizes:
        cell = grid.column(size)[-1]
        count = median / cell.iteration_s
        what = iterations_text(count) + " before it" if not clauses else count_text(count)
        clauses.append(f"{what} at {format_size(size)} ({_ns(cell.iteration_s)} each)")
    return (
        f"{head}: the reordering took {_ns(median)} (median of {len(times)} cells{spread}): "
        "as long as " + ", ".join(clauses)
    )


def _model_sentence(head: str, grid: Grid) -> Optional[str]:
    cell = grid.reference()
    if cell.predicted_pct is None:
        return None
    constant = grid.constant_prediction()
    prediction = (
        f"the cost model predicted {signed(cell.predicted_pct)} in every cell"
        if constant is not None
        else f"the cost model predicted {signed(cell.predicted_pct)} at {format_size(cell.size)}"
    )
    measured = (
        f"; without the reordering's own time, the {iterations_text(cell.iterations)} "
        f"after it took {_less_text(cell.steady_pct)} than before at "
        f"{format_size(cell.size)}"
    )
    reasons = _reasons(grid.setting.topology, grid.meta, grid.unbound, grid.kept_in_place)
    return f"{head}: {prediction}{measured}" + _agreement(
        cell.steady_pct, cell.predicted_pct, reasons
    )


def _unbound_sentence(head: str) -> str:
    return (
        f"warning: {head}: not every rank was bound to a single core: libmpilens-map placed "
        "the unbound ones on their node's slots in order of local rank, a guess, so the "
        "mapping and the cost model's figures may describe places the ranks do not run on; "
        "bind the ranks (Open MPI: --bind-to core; MPICH: -bind-to core)"
    )


def _noise_sentence(head: str, grid: Grid) -> Optional[str]:
    noisy = [
        (cell, cell.spread)
        for cell in grid.cells.values()
        if cell.spread is not None and cell.noisy
    ]
    if not noisy:
        return None
    worst, spread = max(noisy, key=lambda pair: pair[1].ratio)
    sentence = (
        f"warning: {head}: the repetitions of {len(noisy)} of {len(grid.cells)} cells "
        f"disagree (the slowest more than {NOISY_SPREAD:g}× the fastest), the most "
        f"{spread.phase} at {format_size(worst.size)} and "
        f"{iterations_text(worst.iterations)} ({_ns(spread.low)} to "
        f"{_ns(spread.high)}): their gains are not reliable"
    )
    crowded = _oversubscribed(grid.meta)
    if crowded:
        sentence += (
            f"; {crowded[0]} ranks shared {crowded[1]} processing units, whose "
            "scheduling weighs in times this short"
        )
    return sentence + "; more repetitions (--repeat) steady the medians"


def _in_place_sentence(head: str) -> str:
    return (
        f"{head}: the reordering kept every rank in place (new_rank_of is the identity in "
        "every cell): the iterations after it ran on the same placement, so their gain is "
        "noise less the reordering's cost"
    )


def _invalid_sentence(head: str, grid: Grid) -> List[str]:
    if not grid.invalid:
        return []
    cell = max(grid.invalid.values(), key=lambda c: (c.lowest_steady_pct or 0) - (c.model_pct or 0))
    every = "every cell" if not grid.cells else f"{len(grid.invalid)} cells"
    return [
        f"warning: {head}: INVALID, {every}, left out: a gain the cost model cannot explain, "
        f"at least {percent(cell.lowest_steady_pct or 0)} less time without the reordering's own "
        f"(fastest repetition before, slowest after) where the model predicts "
        f"{signed(cell.model_pct or 0)}, at {format_size(cell.size)} and "
        f"{iterations_text(cell.iterations)}: the placement cannot save what it does not "
        "cost, so the times changed for another reason (the first run warming up, other load)"
    ]


def _grid_sentences(head: str, grid: Grid) -> List[str]:
    if not grid.cells:
        return _invalid_sentence(head, grid)
    sentences = _invalid_sentence(head, grid)
    sentences += [_size_sentence(head, grid, size) for size in grid.sizes]
    sentences += [_best_sentence(head, grid), _cost_sentence(head, grid)]
    model = _model_sentence(head, grid)
    if model is not None:
        sentences.append(model)
    if grid.kept_in_place:
        sentences.append(_in_place_sentence(head))
    noise = _noise_sentence(head, grid)
    if noise is not None:
        sentences.append(noise)
    if grid.unbound:
        sentences.append(_unbound_sentence(head))
    return sentences


# --- cg_reorder: seed §6.5 ----------------------------------------------------------------------


@dataclass(frozen=True)
class CgPoint:
    """One cg_reorder point: times in seconds."""

    shape: Tuple[int, int, int]
    iterations: int
    algo: str
    topology: str
    ranks: int
    comm_before_s: float
    comm_after_s: float
    reorder_s: float
    total_before_s: Optional[float]
    total_after_s: Optional[float]  # the reordering included (seed §6.5)
    predicted_pct: Optional[float]
    weighted_before: Optional[float]
    weighted_after: Optional[float]
    hop_bytes_before: Optional[float]
    hop_bytes_after: Optional[float]
    residual_before: Optional[float]
    residual_after: Optional[float]
    new_rank_of: Optional[Tuple[int, ...]]
    meta: Record
    # the initial mapping (seed §6.5, figure 7): rr, random (with its seed), standard (unbound)
    initial: str = "rr"

    @property
    def gain_pct(self) -> float:
        """The communication's gain, the reordering's time included:
        100 (before − (reorder + after)) / before."""
        return (
            100.0 * (self.comm_before_s - (self.reorder_s + self.comm_after_s)) / self.comm_before_s
        )

    @property
    def steady_pct(self) -> float:
        """The communication's gain without the reordering's time, what the model predicts."""
        return 100.0 * (self.comm_before_s - self.comm_after_s) / self.comm_before_s

    @property
    def total_gain_pct(self) -> Optional[float]:
        if self.total_before_s is None or self.total_after_s is None or self.total_before_s <= 0:
            return None
        return 100.0 * (self.total_before_s - self.total_after_s) / self.total_before_s

    @property
    def kept_in_place(self) -> bool:
        order = self.new_rank_of
        return order is not None and order == tuple(range(len(order)))

    @property
    def shape_text(self) -> str:
        return "×".join(str(n) for n in self.shape)

    @property
    def identity(self) -> Tuple[Tuple[int, int, int], int, str, str, int, str]:
        """What two runs' points must share to be compared."""
        return self.shape, self.iterations, self.algo, self.topology, self.ranks, self.initial


def _cg_point(point: Record, meta: Record) -> Optional[CgPoint]:
    params, stats = record_object(point, "params"), record_object(point, "stats")
    nx, ny, nz = (record_integer(params.get(name)) for name in ("nx", "ny", "nz"))
    iterations = record_integer(params.get("iterations"))
    before, after, reorder = (
        _seconds(stats, name) for name in ("comm_before_s", "comm_after_s", "reorder_s")
    )
    if (
        nx is None
        or ny is None
        or nz is None
        or iterations is None
        or iterations <= 0
        or before is None
        or before <= 0
        or after is None
        or reorder is None
    ):
        return None

    def number(name: str) -> Optional[float]:
        return record_number(stats.get(name))

    return CgPoint(
        shape=(nx, ny, nz),
        iterations=iterations,
        algo=_text(params.get("algo")),
        topology=_text(params.get("topology")),
        ranks=record_integer(meta.get("ranks")) or 0,
        comm_before_s=before,
        comm_after_s=after,
        reorder_s=reorder,
        total_before_s=number("total_before_s"),
        total_after_s=number("total_after_s"),
        predicted_pct=predicted_from(stats),
        weighted_before=number("weighted_before"),
        weighted_after=number("weighted_after"),
        hop_bytes_before=number("hop_bytes_before"),
        hop_bytes_after=number("hop_bytes_after"),
        residual_before=number("residual_before"),
        residual_after=number("residual_after"),
        new_rank_of=_permutation(stats.get("new_rank_of")),
        meta=meta,
        initial=_initial_text(params),
    )


def _initial_text(params: Record) -> str:
    """Files written before --initial existed ran rr."""
    name = _text(params.get("initial")) or "rr"
    seed = record_integer(params.get("seed"))
    return f"{name} (seed {seed})" if name == "random" and seed is not None else name


def cg_points(run: Run) -> List[CgPoint]:
    found = [
        entry
        for entry in (_cg_point(point, meta) for point, meta in located(run, CG))
        if entry is not None
    ]
    return sorted(
        found,
        key=lambda entry: (
            entry.ranks,
            entry.shape,
            entry.iterations,
            entry.algo,
            entry.topology,
            entry.initial,
        ),
    )


def cg_heads(found: Sequence[CgPoint]) -> List[str]:
    """How sentences name each point: the benchmark, and what tells it from the others."""
    names = {
        "ranks": lambda entry: f"{entry.ranks} ranks",
        "shape": lambda entry: f"{entry.shape_text} grid",
        "iterations": lambda entry: iterations_text(entry.iterations),
        "algo": lambda entry: entry.algo or "unknown algorithm",
        "topology": lambda entry: f'topology "{entry.topology}"',
        "initial": lambda entry: f"initial mapping {entry.initial}",
    }
    fields = [name for name in names if len({getattr(entry, name) for entry in found}) > 1]
    return [
        CG + (" (" + ", ".join(names[name](entry) for name in fields) + ")" if fields else "")
        for entry in found
    ]


def gain_text(value: float) -> str:
    return f"gain {percent(value)}" if value >= 0 else f"loss {percent(-value)}"


def _cg_noise_sentence(head: str, entry: CgPoint) -> str:
    """--reorder none: two identical solves, whose difference is the noise of the gains."""
    apart = abs(entry.comm_after_s - entry.comm_before_s) / entry.comm_before_s * 100.0
    return (
        f"{head}: without reordering (algorithm none), the communication took "
        f"{_ns(entry.comm_before_s)} in the first solve and {_ns(entry.comm_after_s)} in the "
        f"second, {percent(apart)} apart: the noise of two identical solves, against which "
        "to read the gains of a reordering"
    )


def _cg_main_sentence(head: str, entry: CgPoint) -> str:
    sentence = (
        f"{head}: on a {entry.shape_text} grid over {iterations_text(entry.iterations)}, "
        f"communication took {_ns(entry.comm_before_s)} before reordering and "
        f"{_ns(entry.comm_after_s)} after, the reordering {_ns(entry.reorder_s)}: "
        f"{gain_text(entry.gain_pct)} with the reordering counted"
    )
    if entry.predicted_pct is None:
        return sentence
    sentence += (
        f"; the cost model predicted {signed(entry.predicted_pct)}; without the "
        f"reordering's own time the communication took {_less_text(entry.steady_pct)}"
    )
    return sentence + _agreement(
        entry.steady_pct,
        entry.predicted_pct,
        _reasons(entry.topology, entry.meta, False, entry.kept_in_place),
    )


def _cg_total_sentence(head: str, entry: CgPoint) -> Optional[str]:
    gain, before, after = entry.total_gain_pct, entry.total_before_s, entry.total_after_s
    if gain is None or before is None or after is None:
        return None
    how = f"{percent(gain)} faster" if gain >= 0 else f"{percent(-gain)} slower"
    return (
        f"{head}: the whole solve took {_ns(before)} before reordering and {_ns(after)} "
        f"after, the reordering included: {how}"
    )


def _cg_cost_sentence(head: str, entry: CgPoint) -> str:
    """The reordering against an iteration before it: the whole iteration when the solve's
    time is known, else its communication."""
    total = entry.total_before_s
    whole = total is not None and total > 0
    per = (total if total is not None and whole else entry.comm_before_s) / entry.iterations
    count = iterations_text(entry.reorder_s / per)
    what = "" if whole else ("'" if count.endswith("s") else "'s") + " communication"
    return f"{head}: the reordering took as long as {count}{what} before it ({_ns(per)} each)"


def residual_change(before: float, after: float) -> float:
    """How far apart two residuals are, relative to the larger."""
    larger = max(abs(before), abs(after))
    return abs(before - after) / larger if larger > 0 else 0.0


def _cg_residual_sentence(head: str, entry: CgPoint) -> Optional[str]:
    before, after = entry.residual_before, entry.residual_after
    if before is None or after is None:
        return None
    change = residual_change(before, after)
    values = f"{before:.3g} before, {after:.3g} after"
    if change <= RESIDUAL_ROUNDING:
        return (
            f"{head}: the residual is the same before and after reordering ({values}): the "
            "reordered run computes the same solution"
        )
    if change <= RESIDUAL_ALLOWED:
        return (
            f"{head}: the residuals differ by {change:.1e} relative ({values}): the same "
            f"solution up to rounding (the program allows {RESIDUAL_ALLOWED:g}): the MPI "
            "library probably ordered a reduction by placement, and CG carries rounding on "
            "from iteration to iteration"
        )
    return (
        f"warning: {head}: the residual changed with the reordering ({values}): the data "
        "did not follow the ranks to their new places, so the times after it are of another "
        "computation"
    )


def _cg_sentences(head: str, entry: CgPoint) -> List[str]:
    if entry.algo == NO_REORDERING:
        found = [_cg_noise_sentence(head, entry), _cg_residual_sentence(head, entry)]
        return [sentence for sentence in found if sentence is not None]
    found = [
        _cg_main_sentence(head, entry),
        _cg_total_sentence(head, entry),
        _cg_cost_sentence(head, entry),
        _cg_residual_sentence(head, entry),
    ]
    if entry.kept_in_place:
        found.append(
            f"{head}: the reordering kept every rank in place (new_rank_of is the "
            "identity): the solve after it ran on the same placement"
        )
    return [sentence for sentence in found if sentence is not None]


def _initial_sentences(points: Sequence[CgPoint]) -> List[str]:
    """Seed figure 7: the same solve reordered from several initial mappings, their gains side by
    side (the reordering's time counted, and the model's prediction)."""
    groups: Dict[Tuple[object, ...], List[CgPoint]] = {}
    for entry in points:
        if entry.algo != NO_REORDERING:
            groups.setdefault(entry.identity[:-1], []).append(entry)
    sentences = []
    for group in groups.values():
        if len({entry.initial for entry in group}) < 2:
            continue
        first = group[0]
        parts = [
            f"{entry.initial} {signed(entry.gain_pct)}"
            + (
                f" (predicted {signed(entry.predicted_pct)})"
                if entry.predicted_pct is not None
                else ""
            )
            for entry in group
        ]
        sentences.append(
            f"{CG} by initial mapping (seed figure 7; {first.ranks} ranks, "
            f"{first.shape_text} grid, {first.algo}): the reordering's gain " + ", ".join(parts)
        )
    return sentences


# --- diagnosis -----------------------------------------------------------------------------------


# What a bcast_reorder or reduce_reorder point's mapping saw of its collective (stats.coll_backend).
BACKEND_SENTENCES = {
    "ompi-mpit": "{bench}: mapped from the messages the MPI library really sent to carry out the "
    "collective (Open MPI's monitoring), as seed 004 §6.3 does",
    "pmpi": "{bench}: the monitoring counted the collective by its logical pattern (the root and "
    "every other rank), not the messages the library sent: no placement improves that pattern, "
    "so the reordering has nothing to gain. Under Open MPI 5, OMPI_MCA_pml_monitoring_enable=1 "
    "counts the messages of its algorithm (seed 004 §6.3)",
}


def _backend_sentences(run: Run) -> List[str]:
    """What the mapping of each collective of seed §6.3 saw, once per benchmark and backend."""
    seen = {
        (point["bench"], _text(record_object(point, "stats").get("coll_backend")))
        for bench in COLLECTIVE_BENCHES[1:]
        for point, _ in located(run, bench)
    }
    return [
        BACKEND_SENTENCES[backend].format(bench=bench)
        for bench, backend in sorted(seen)
        if backend in BACKEND_SENTENCES
    ]


def diagnose(run: Run) -> List[str]:
    """Sentences for the report's findings, warnings starting with "warning:"."""
    sentences: List[str] = []
    found = grids(run)
    for head, grid in zip(grid_heads(found), found):
        sentences += _grid_sentences(head, grid)
    points = cg_points(run)
    for head, entry in zip(cg_heads(points), points):
        sentences += _cg_sentences(head, entry)
    sentences += _initial_sentences(points) + _backend_sentences(run)
    if not found and not points:
        names = ", ".join(COLLECTIVE_BENCHES)
        sentences.append(f"warning: the run holds no complete {names} or cg_reorder point")
    machines = [(grid.setting.topology, grid.meta) for grid in found] + [
        (entry.topology, entry.meta) for entry in points
    ]
    sentences += [
        sentence
        for sentence in (_modeled_nodes_sentence(*machine) for machine in machines)
        if sentence is not None
    ]
    return list(dict.fromkeys(sentences)) + run.file_warnings()


# --- the table `mpilens map` prints --------------------------------------------------------------


def prediction_text(grid: Grid) -> str:
    constant = grid.constant_prediction()
    if constant is not None:
        return f"predicted by the cost model: {signed(constant)} in every cell"
    if not grid.predicted:
        return "predicted by the cost model: not recorded"
    return (
        f"predicted by the cost model: {signed(min(grid.predicted))} to "
        f"{signed(max(grid.predicted))}"
    )


def grid_table(grid: Grid) -> List[str]:
    """The gain of every cell, rows by iterations, columns by buffer size."""
    rows = [["iterations", *(short_size(size) for size in grid.sizes)]]
    for n, values in zip(grid.iterations, grid.values("gain_pct")):
        rows.append([str(n), *("-" if value is None else signed(value) for value in values)])
    return columns(rows)


def comparison_table(run: Run) -> List[str]:
    """Plain text: the gain grid of every setting, then a line per CG point."""
    lines: List[str] = []
    for grid in grids(run):
        lines += [
            f"{grid.setting.bench}, {setting_text(grid.setting)}: gain 100 (t1 - (t2 + t3)) / t1",
            *grid_table(grid),
            prediction_text(grid),
        ]
    points = cg_points(run)
    if points:
        rows = [
            [
                "cg",
                "ranks",
                "iterations",
                "algo",
                "comm before",
                "after",
                "reorder",
                "gain",
                "predicted",
            ]
        ]
        rows += [
            [
                entry.shape_text,
                str(entry.ranks),
                str(entry.iterations),
                entry.algo or "-",
                _ns(entry.comm_before_s),
                _ns(entry.comm_after_s),
                _ns(entry.reorder_s),
                signed(entry.gain_pct),
                "-" if entry.predicted_pct is None else signed(entry.predicted_pct),
            ]
            for entry in points
        ]
        lines += [f"{CG}: communication time, gain with the reordering counted", *columns(rows)]
    return lines


# --- comparison ----------------------------------------------------------------------------------


def paired_grids(run_a: Run, run_b: Run) -> List[Tuple[Grid, Grid]]:
    """The grids of the same setting in both runs; a lone grid on each side pairs with the other
    whatever its setting (two libraries seldom give the same topology text)."""
    grids_a, grids_b = grids(run_a), grids(run_b)
    by_setting = {grid.setting: grid for grid in grids_b}
    pairs = [(grid, by_setting[grid.setting]) for grid in grids_a if grid.setting in by_setting]
    lone = len(grids_a) == 1 and len(grids_b) == 1
    if not pairs and lone and grids_a[0].setting.bench == grids_b[0].setting.bench:
        pairs = [(grids_a[0], grids_b[0])]
    return pairs


def common_cells(grid_a: Grid, grid_b: Grid) -> List[Tuple[int, int]]:
    return sorted(set(grid_a.cells) & set(grid_b.cells), key=lambda cell: (cell[1], cell[0]))


def _from_text(grid: Grid, size: int) -> str:
    first = paying_from(grid.column(size))
    return "never" if first is None else f"from {iterations_text(first.iterations)}"


def _prediction_pair(grid_a: Grid, grid_b: Grid, names: Tuple[str, str]) -> str:
    value_a, value_b = grid_a.constant_prediction(), grid_b.constant_prediction()
    if value_a is None or value_b is None:
        return "the cost model's predictions vary over the cells or were not recorded"
    if abs(value_a - value_b) <= CONSTANT_POINTS:
        return f"the cost model predicted {signed(value_a)} in both"
    return (
        f"the cost model predicted {signed(value_a)} in {names[0]} and {signed(value_b)} "
        f"in {names[1]} (another mapping or topology)"
    )


def _grid_comparison(head: str, grid_a: Grid, grid_b: Grid, names: Tuple[str, str]) -> str:
    cells = common_cells(grid_a, grid_b)
    if not cells:
        return f"{head}: no cell measured in both"
    differences = [
        (grid_b.cells[cell].gain_pct - grid_a.cells[cell].gain_pct, cell) for cell in cells
    ]
    mean = statistics.mean(difference for difference, _ in differences)
    widest, (iterations, size) = max(differences, key=lambda entry: abs(entry[0]))
    sentence = f"{head}: over the {len(cells)} cells measured in both, "
    if abs(mean) <= SAME_POINTS and abs(widest) <= SAME_POINTS:
        sentence += (
            f"the gains are the same within {SAME_POINTS:.0f} points "
            f"({names[1]} - {names[0]}: {mean:+.1f} on average)"
        )
    else:
        higher = names[1] if mean > 0 else names[0]
        sentence += (
            f"the gain is {abs(mean):.0f} points higher in {higher} on average; the "
            f"widest difference is at {format_size(size)} and "
            f"{iterations_text(iterations)} "
            f"({signed(grid_a.cells[(iterations, size)].gain_pct)} in {names[0]}, "
            f"{signed(grid_b.cells[(iterations, size)].gain_pct)} in {names[1]})"
        )
    sizes = sorted({size for _, size in cells})
    paying = [
        f"{format_size(size)} {_from_text(grid_a, size)} in {names[0]}, "
        f"{_from_text(grid_b, size)} in {names[1]}"
        for size in sizes
        if _from_text(grid_a, size) != _from_text(grid_b, size)
    ]
    if paying:
        sentence += "; reordering pays at " + "; at ".join(paying)
    else:
        sentence += "; reordering pays from the same iteration counts in both"
    return sentence + "; " + _prediction_pair(grid_a, grid_b, names)


def _cg_comparison(head: str, entry_a: CgPoint, entry_b: CgPoint, names: Tuple[str, str]) -> str:
    def model(entry: CgPoint) -> str:
        return "" if entry.predicted_pct is None else f", predicted {signed(entry.predicted_pct)}"

    return (
        f"{head}: communication {_ns(entry_a.comm_before_s)} -> {_ns(entry_a.comm_after_s)}, "
        f"{gain_text(entry_a.gain_pct)}{model(entry_a)} in {names[0]}; "
        f"{_ns(entry_b.comm_before_s)} -> {_ns(entry_b.comm_after_s)}, "
        f"{gain_text(entry_b.gain_pct)}{model(entry_b)} in {names[1]}"
    )


def paired_cg(run_a: Run, run_b: Run) -> List[Tuple[CgPoint, CgPoint]]:
    """CG points of the same grid, iterations, algorithm, topology and ranks; a lone point on
    each side pairs with the other."""
    points_a, points_b = cg_points(run_a), cg_points(run_b)
    by_identity = {entry.identity: entry for entry in points_b}
    pairs = [
        (entry, by_identity[entry.identity]) for entry in points_a if entry.identity in by_identity
    ]
    if not pairs and len(points_a) == 1 and len(points_b) == 1:
        pairs = [(points_a[0], points_b[0])]
    return pairs


def compare(run_a: Run, run_b: Run) -> List[str]:
    """Per setting measured in both: the gain per cell of B against A, where reordering starts
    to pay in each, and the predictions; per CG point, both gains."""
    names = run_names(run_a, run_b)
    pairs = paired_grids(run_a, run_b)
    heads = grid_heads([grid_a for grid_a, _ in pairs])
    sentences = [
        _grid_comparison(head, grid_a, grid_b, names)
        for head, (grid_a, grid_b) in zip(heads, pairs)
    ]
    cg_pairs = paired_cg(run_a, run_b)
    heads = cg_heads([entry_a for entry_a, _ in cg_pairs])
    sentences += [
        _cg_comparison(head, entry_a, entry_b, names)
        for head, (entry_a, entry_b) in zip(heads, cg_pairs)
    ]
    return sentences
