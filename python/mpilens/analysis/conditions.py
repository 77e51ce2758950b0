"""Conditions of a run across several hosts that make its timings doubtful, read from its meta
record: host names that are one machine (containers, the test cluster's emulated nodes), and
ranks plus progress threads that fill or outnumber the cores they share, leaving none to a
network stack that runs on the CPUs (TCP). Every family's findings start with these
(report.findings); docs/cluster.md explains them."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from ..results import Record, record_integer
from ..units import counted, rank_ranges


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
    library = setting.get("library") if isinstance(setting.get("library"), dict) else {}
    running = library.get("running_per_rank")
    threads = ([1 if value else 0 for value in running]
               if isinstance(running, list) and len(running) == ranks else [0] * ranks)
    label = setting.get("label")
    if isinstance(label, str) and "+async:" in label or (isinstance(label, str)
                                                          and label.startswith("async:")):
        threads = [count + 1 for count in threads]
    return threads


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def _machines(hosts: List[str], machines: Optional[List[str]]) -> Dict[str, List[int]]:
    """The ranks of each machine: by machine identity where every rank recorded one, else by
    host name (a host is then taken for a machine of its own)."""
    keys = machines if machines and all(machines) else hosts
    grouped: Dict[str, List[int]] = {}
    for rank, key in enumerate(keys):
        grouped.setdefault(key, []).append(rank)
    return grouped


def _shared_machine_sentence(names: List[str], cores: Optional[int]) -> str:
    share = f"its {counted(cores, 'core')}" if cores else "its cores"
    return (f"hosts {_listed(names)} are one machine (they report the same machine id): "
            "emulated nodes or containers, or nodes installed from one image that kept its "
            f"machine id. Their ranks share {share}, and the traffic between them crosses that "
            "machine's own kernel rather than a network: figures between these hosts test "
            "function, not the performance of a network")


def _crowded_sentence(where: str, ranks: int, threads: int, cores: int) -> str:
    busy = counted(ranks, "rank") + (f" and {counted(threads, 'progress thread')}" if threads
                                      else "")
    if ranks + threads > cores:
        state = (f"outnumber its {counted(cores, 'core')}: ranks and threads wait for a core, "
                 "and the timings include that waiting")
    else:
        state = f"{'fills' if ranks + threads == 1 else 'fill'} its {counted(cores, 'core')}"
    return (f"{busy} on {where} {state}; a network stack that runs on the CPUs (TCP) has no core "
            "of its own there, so transfers between hosts compete with the ranks: figures across "
            "the hosts test function rather than performance")


def conditions(meta: Record) -> List[str]:
    """What in a multi-host run makes its timings doubtful; nothing for a run on one host (each
    family says what sharing one machine's cores does to its own figures)."""
    ranks = record_integer(meta.get("ranks"))
    nodes = record_integer(meta.get("nodes"))
    if ranks is None or nodes is None or nodes < 2:
        return []
    hosts = _strings(meta, "hosts", ranks)
    if hosts is None:
        return []
    cores = record_integer(meta.get("cpus_online"))
    threads = _threads_per_rank(meta, ranks)
    found = []
    for members in _machines(hosts, _strings(meta, "machines", ranks)).values():
        names = sorted({hosts[rank] for rank in members})
        if len(names) > 1:
            found.append(_shared_machine_sentence(names, cores))
        busy_threads = sum(threads[rank] for rank in members)
        if cores and len(members) + busy_threads >= cores:
            where = (f"host {names[0]}" if len(names) == 1
                     else f"the machine of hosts {_listed(names)} (ranks {rank_ranges(members)})")
            found.append(_crowded_sentence(where, len(members), busy_threads, cores))
    return found
