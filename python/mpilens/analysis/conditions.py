"""Conditions of a run across several hosts that make its timings doubtful, read from its meta
record: host names that are one machine (containers, the test cluster's emulated nodes), and
ranks plus progress threads that fill or outnumber the cores they share, leaving none to a
network stack that runs on the CPUs (TCP). Every family's findings start with these
(report.findings); docs/cluster.md explains them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Set, Tuple

from ..advice import Symptom
from ..results import Record, record_integer, record_object
from ..text import counted, listed, ranges


def _strings(meta: Record, key: str, ranks: int) -> Optional[List[str]]:
    values = meta.get(key)
    if not isinstance(values, list) or len(values) != ranks:
        return None
    return [value if isinstance(value, str) else "" for value in values]


def _threads_per_rank(meta: Record, ranks: int) -> List[int]:
    """Busy threads of each rank besides its own: libmpilens-progress's thread where it ran, and
    the MPI library's asynchronous progress thread where a variable switched it on."""
    setting = meta.get("progress_setting")
    if not isinstance(setting, dict):
        return [0] * ranks
    running = record_object(setting, "library").get("running_per_rank")
    threads = (
        [1 if value else 0 for value in running]
        if isinstance(running, list) and len(running) == ranks
        else [0] * ranks
    )
    label = setting.get("label")
    if (isinstance(label, str) and "+async:" in label) or (
        isinstance(label, str) and label.startswith("async:")
    ):
        threads = [count + 1 for count in threads]
    return threads


def cpu_set(text: object) -> Optional[Set[int]]:
    """The processing units of a binding such as "0-3,8"; None when it does not parse."""
    if not isinstance(text, str) or not text.strip():
        return None
    cpus: Set[int] = set()
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            return None
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


# Names a sentence lists before it counts the rest: a run of 65536 ranks may have thousands of
# hosts in the same condition, which one sentence says.
SHOWN = 3


def _host_groups(groups: Sequence[Sequence[str]]) -> str:
    """hosts a and b; hosts c and d; and 5 more: machines by their host names."""
    more = f"; and {len(groups) - SHOWN} more" if len(groups) > SHOWN else ""
    return "; ".join(f"hosts {listed(names, SHOWN)}" for names in groups[:SHOWN]) + more


def _machines(hosts: List[str], machines: Optional[List[str]]) -> List[List[int]]:
    """The ranks of each machine, in order of their lowest rank: by machine identity where every
    rank recorded one, else by host name (a host is then taken for a machine of its own)."""
    keys = machines if machines and all(machines) else hosts
    grouped: Dict[str, List[int]] = {}
    for rank, key in enumerate(keys):
        grouped.setdefault(key, []).append(rank)
    return list(grouped.values())


def _shared_machine_sentence(groups: List[List[str]], cores: Optional[int]) -> str:
    share = f"its {counted(cores, 'core')}" if cores else "its cores"
    if len(groups) == 1:
        which = (
            f"hosts {listed(groups[0], SHOWN)} are one machine (they report the same machine id)"
        )
    else:
        which = (
            f"{len(groups)} machines carry several host names each (the same machine id): "
            + _host_groups(groups)
        )
    return (
        f"{which}: emulated nodes or containers, or nodes installed from one image that kept "
        f"its machine id. Their ranks share {share}, and the traffic between them crosses "
        "that machine's own kernel rather than a network: figures between these hosts test "
        "function, not the performance of a network"
    )


Machine = Tuple[List[str], List[int]]  # a machine's host names and ranks


def _where(machines: List[Machine]) -> str:
    """The machines a sentence is about: one by its host (or hosts and ranks), several counted."""
    several_hosts = len(machines[0][0]) > 1
    if len(machines) == 1:
        names, members = machines[0]
        return (
            f"the machine of hosts {listed(names, SHOWN)} (ranks {ranges(members)})"
            if several_hosts
            else f"host {names[0]}"
        )
    if several_hosts:
        return f"each of {len(machines)} machines ({_host_groups([n for n, _ in machines])})"
    return f"each of {len(machines)} hosts ({listed([names[0] for names, _ in machines], SHOWN)})"


def _crowded_sentence(machines: List[Machine], ranks: int, threads: int, cores: int) -> str:
    """Ranks and threads that fill or outnumber the cores of every one of machines."""
    busy = counted(ranks, "rank") + (
        f" and {counted(threads, 'progress thread')}" if threads else ""
    )
    where = _where(machines)
    if ranks + threads > cores:
        state = (
            f"outnumber its {counted(cores, 'core')}: ranks and threads wait for a core, "
            "and the timings include that waiting"
        )
    else:
        state = f"{'fills' if ranks + threads == 1 else 'fill'} its {counted(cores, 'core')}"
    return (
        f"{busy} on {where} {state}; a network stack that runs on the CPUs (TCP) has no core "
        "of its own there, so transfers between hosts compete with the ranks: figures across "
        "the hosts test function rather than performance"
    )


def conditions(meta: Record) -> List[str]:
    """What in a multi-host run makes its timings doubtful; nothing for a run on one host (each
    family says what sharing one machine's cores does to its own figures). Machines in the same
    condition share one sentence, so that it stays one line at any number of hosts."""
    ranks = record_integer(meta.get("ranks"))
    nodes = record_integer(meta.get("nodes"))
    if ranks is None or nodes is None or nodes < 2:
        return []
    hosts = _strings(meta, "hosts", ranks)
    if hosts is None:
        return []
    cores = record_integer(meta.get("cpus_online"))
    threads = _threads_per_rank(meta, ranks)
    shared: List[List[str]] = []
    crowded: Dict[Tuple[int, int, bool], List[Machine]] = {}
    for members in _machines(hosts, _strings(meta, "machines", ranks)):
        names = list(dict.fromkeys(hosts[rank] for rank in members))
        if len(names) > 1:
            shared.append(names)
        busy_threads = sum(threads[rank] for rank in members)
        if cores and len(members) + busy_threads >= cores:
            key = (len(members), busy_threads, len(names) > 1)
            crowded.setdefault(key, []).append((names, members))
    found = [_shared_machine_sentence(shared, cores)] if shared else []
    if cores:
        found += [
            _crowded_sentence(machines, count, busy, cores)
            for (count, busy, _), machines in crowded.items()
        ]
    return found


@dataclass(frozen=True)
class Crowding:
    """Busy ranks and helper threads of one machine that outnumber the cores they may run on."""

    ranks: int
    threads: int
    cores: int
    # threads the measurement itself runs in its busy ranks beside their own (seed 000's
    # communicating threads), and what to call them
    bench_threads: int = 0
    bench_thread_label: str = "thread"

    @property
    def excess(self) -> int:
        return self.ranks + self.threads + self.bench_threads - self.cores

    def text(self) -> str:
        """ "3 ranks share 2 cores", "2 ranks and 2 progress threads share 2 cores",
        "2 ranks, 2 communicating threads and 1 progress thread share 2 cores"."""
        parts = [counted(self.ranks, "rank")]
        if self.bench_threads:
            parts.append(counted(self.bench_threads, self.bench_thread_label))
        if self.threads:
            parts.append(counted(self.threads, "progress thread"))
        listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
        verb = "shares" if self.ranks + self.threads + self.bench_threads == 1 else "share"
        return f"{listed} {verb} {counted(self.cores, 'core')}"


def _even_machines(ranks: int, nodes: int) -> List[List[int]]:
    """Ranks spread over nodes in blocks, for a rank count the meta record does not describe."""
    per = -(-ranks // max(nodes, 1))
    return [list(range(first, min(first + per, ranks))) for first in range(0, ranks, per)]


def crowding(
    meta: Record,
    ranks: Optional[int] = None,
    busy: Optional[Sequence[int]] = None,
    bench_threads: Tuple[int, str] = (0, "thread"),
) -> Optional[Crowding]:
    """The most crowded machine of a run where busy ranks plus progress threads outnumber the
    cores they may run on; None when none does or the meta record cannot tell.

    ranks: the rank count of the measurement when it is not the meta record's (coll's series of
    files; its ranks are then taken as spread evenly over the nodes); busy: the ranks that
    compute or poll during the measurement (the others sleep), all by default; bench_threads:
    the threads each busy rank runs for the measurement beside its own, and their name. A
    machine's cores are its ranks' bound CPUs together when every binding is known, else
    cpus_online."""
    recorded = record_integer(meta.get("ranks"))
    ranks = ranks if ranks is not None else recorded
    cpus = record_integer(meta.get("cpus_online"))
    if not ranks or not cpus:
        return None
    own = recorded == ranks
    hosts = _strings(meta, "hosts", ranks) if own else None
    groups = (
        _machines(hosts, _strings(meta, "machines", ranks))
        if hosts is not None
        else _even_machines(ranks, record_integer(meta.get("nodes")) or 1)
    )
    per_rank = _threads_per_rank(meta, recorded) if recorded else []
    threads = per_rank if own else [max(per_rank, default=0)] * ranks
    bindings = _strings(meta, "binding", ranks) if own else None
    sets = [cpu_set(text) for text in bindings] if bindings is not None else []
    working = set(range(ranks) if busy is None else busy)
    worst: Optional[Crowding] = None
    for members in groups:
        bound = [sets[rank] for rank in members] if sets else []
        cores = cpus
        if bound and all(cpu is not None for cpu in bound):
            cores = min(cpus, len(set().union(*(cpu for cpu in bound if cpu is not None))))
        busy_here = sum(rank in working for rank in members)
        found = Crowding(
            busy_here,
            sum(threads[r] for r in members),
            cores,
            busy_here * bench_threads[0],
            bench_threads[1],
        )
        if found.excess > 0 and (worst is None or found.excess > worst.excess):
            worst = found
    return worst


def unbound_ranks(meta: Record) -> List[int]:
    """The ranks that may run on every CPU of their machine (no binding), when the meta record
    says so for every rank; [] when it cannot tell or every rank is bound."""
    ranks = record_integer(meta.get("ranks"))
    cpus = record_integer(meta.get("cpus_online"))
    bindings = _strings(meta, "binding", ranks) if ranks else None
    if not bindings or not cpus or cpus < 2:
        return []
    sets = [cpu_set(text) for text in bindings]
    return [rank for rank, cpu in enumerate(sets) if cpu is not None and len(cpu) >= cpus]


def _ranks_fitting(crowded: Crowding) -> int:
    """How many ranks, each with as many helper threads as now, fit the machine's cores."""
    per_rank = 1 + -(-crowded.threads // max(crowded.ranks, 1))
    return max(1, crowded.cores // per_rank)


def condition_symptoms(meta: Record) -> List[Symptom]:
    """The conditions of a run that the remedy catalogue addresses: busy ranks and threads
    outnumbering cores, and ranks bound to no core."""
    found = []
    crowded = crowding(meta)
    if crowded is not None:
        found.append(
            Symptom(
                "oversubscribed",
                f"{crowded.text()}: ranks and threads wait for a core, and every timing "
                "includes that waiting",
                values={"ranks_per_node": str(_ranks_fitting(crowded))},
            )
        )
    unbound = unbound_ranks(meta)
    if unbound:
        found.append(
            Symptom(
                "unbound-ranks",
                f"{counted(len(unbound), 'rank')} ({ranges(unbound)}) may run on any CPU: the "
                "scheduler can move them, or put two on one core, in the middle of a measurement",
            )
        )
    return found
