"""The progress family on the report's first screen: its verdict, and what its measurements cost
in the catalogue's symptoms (advice.Symptom): the CPU time an operation loses without help, and
the CPU a progress thread takes from the computation beyond what its MPI calls show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from ..advice import Symptom, size_value
from ..results import Run
from ..text import percent
from ..units import format_size, format_time
from .progress import (
    NONE,
    P2P,
    Found,
    Measure,
    ThreadCost,
    blocking,
    describe,
    diagnosed_sizes,
    factor,
    kinds_measured,
    measurements,
    named_series,
    operations_measured,
    ranking,
    series,
    thread_costs,
    title,
)

# The ping-pong's client waits on its receive of the reply; a collective on every rank.
SYMPTOM_OF = {P2P: "no-overlap-recv"}
COLLECTIVE_SYMPTOM = "no-overlap-collective"
EVIDENCE = "overhead"


@dataclass(frozen=True)
class Loss:
    """What one operation loses without help at one size: t_o against the blocking time t_b the
    computation lasted, so t_o / (t_b + t_o) is its share of the time the operation took."""

    operation: str
    kind: str
    size: int
    lost: Measure
    t_b: float

    @property
    def share(self) -> float:
        return self.lost.value / (self.t_b + self.lost.value)


def _losses(found: Found) -> List[Loss]:
    """Per operation, where the library alone (no tests) loses the largest share of its time
    beyond noise, at the sizes the diagnosis speaks of (1 MiB and the largest: where every
    library has taken its large-message protocol, and one preemption does not outweigh the
    transfer), over the kinds of computation measured (ties: the larger size)."""
    worst: List[Loss] = []
    for operation in operations_measured(found):
        t_b = blocking(found, operation)
        losses = [
            Loss(operation, kind, size, base[size], t_b[size])
            for kind in kinds_measured(found, operation)
            if (base := series(found, operation, kind, NONE, NONE))
            for size in diagnosed_sizes(base)
            if not base[size].nil and t_b.get(size, 0) > 0
        ]
        if losses:
            worst.append(max(losses, key=lambda loss: (round(loss.share, 6), loss.size)))
    return worst


def _loss_symptom(loss: Loss) -> Symptom:
    return Symptom(
        key=SYMPTOM_OF.get(loss.operation, COLLECTIVE_SYMPTOM),
        text=(
            f"{title(loss.operation)} ({loss.kind}-based computation): without help the "
            f"program loses {format_time(loss.lost.value)} at {format_size(loss.size)}, where "
            f"the communication alone takes {format_time(loss.t_b)}"
        ),
        cost_ns=loss.lost.value,
        share=loss.share,
        evidence=EVIDENCE,
        values={"size": size_value(loss.size)},
    )


def _thread_symptom(found: Found, cost: ThreadCost) -> Symptom:
    t_b = blocking(found, cost.operation, cost.setting).get(cost.size) or blocking(
        found, cost.operation
    ).get(cost.size)
    share = cost.hidden_ns / (t_b + cost.felt.value) if t_b else None
    return Symptom(
        key="progress-thread-cost",
        text=(
            f"{cost.setting}: the progress thread takes {format_time(cost.hidden_ns)} of CPU "
            f"from the computation per {title(cost.operation)} at {format_size(cost.size)} "
            f"beyond what its MPI calls show ({format_time(cost.felt.value)} work-based against "
            f"{format_time(max(cost.seen.value, 0.0))} time-based)"
        ),
        cost_ns=cost.hidden_ns,
        share=share,
        evidence=EVIDENCE,
    )


def symptoms(run: Run) -> List[Symptom]:
    """What costs time: each operation's loss without help where it is worst, and each thread
    that takes CPU its MPI calls do not show."""
    found = measurements(run)
    return [_loss_symptom(loss) for loss in _losses(found)] + [
        _thread_symptom(found, cost) for cost in thread_costs(found)
    ]


def _best_help(found: Found, loss: Loss) -> Optional[str]:
    """What the best strategy or setting does to the loss, beyond noise only."""
    ranked = ranking(named_series(found, loss.operation, loss.kind), loss.size)
    if not ranked:
        return None
    name, best = ranked[0]
    if best.nil:
        return f"{describe(name, best)} removes it"
    if best.same(loss.lost) or best.value >= loss.lost.value:
        return "nothing measured does better beyond noise"
    return f"{describe(name, best)} cuts it {factor(loss.lost.value / best.value)}"


def verdict(run: Run) -> Optional[str]:
    """The largest share of its time an operation loses without help, and what helps most;
    None when nothing was measured."""
    found = measurements(run)
    if not any(key.setting == NONE and key.strategy == NONE for key in found):
        return None
    losses = _losses(found)
    if not losses:
        return (
            "The library progresses on its own: no operation loses time beyond noise while "
            "the program computes."
        )
    worst = max(losses, key=lambda loss: (round(loss.share, 6), loss.size))
    sentence = (
        f"Without help, {title(worst.operation)} loses up to {percent(worst.share)} of its time "
        f"({format_time(worst.lost.value)} at {format_size(worst.size)}, {worst.kind}-based)"
    )
    help_text = _best_help(found, worst)
    sentence += f"; {help_text}." if help_text else "."
    hidden = thread_costs(found)
    if hidden:
        names = ", ".join(dict.fromkeys(cost.setting for cost in hidden))
        sentence += f" A progress thread takes CPU its MPI calls do not show: {names}."
    return sentence
