"""The conditions of a multi-host run that every family's findings start with
(analysis/conditions.py), on constructed meta records whose answer is known."""

from __future__ import annotations

from mpilens.analysis.conditions import conditions

A, B = "1111111111111111", "2222222222222222"


def meta(hosts, machines=None, cpus=2, running=None, label=None):
    record = {"type": "meta", "ranks": len(hosts), "nodes": len(set(hosts)), "hosts": hosts,
              "cpus_online": cpus}
    if machines is not None:
        record["machines"] = machines
    if running is not None or label is not None:
        record["progress_setting"] = {"label": label or "none",
                                      "library": {"running_per_rank": running or []}}
    return record


def test_one_host_has_no_condition_of_its_own():
    assert conditions(meta(["vm"] * 4, [A] * 4)) == []


def test_hosts_with_a_spare_core_each():
    assert conditions(meta(["n0", "n1"], [A, B], cpus=2)) == []


def test_emulated_nodes_are_one_crowded_machine():
    found = conditions(meta(["n0", "n0", "n1", "n1"], [A] * 4, cpus=2))
    assert len(found) == 2
    assert found[0].startswith("hosts n0 and n1 are one machine (they report the same machine id)")
    assert "share its 2 cores" in found[0]
    assert found[1].startswith("4 ranks on the machine of hosts n0 and n1 (ranks 0-3) outnumber "
                               "its 2 cores")


def test_ranks_that_fill_each_nodes_cores():
    found = conditions(meta(["n0", "n0", "n1", "n1"], [A, A, B, B], cpus=2))
    assert [sentence.split(";")[0] for sentence in found] == [
        "2 ranks on each of 2 hosts (n0 and n1) fill its 2 cores"]
    assert "(TCP) has no core of its own" in found[0]


def test_progress_threads_count():
    found = conditions(meta(["n0", "n0", "n1", "n1"], [A, A, B, B], cpus=4,
                            running=[1, 1, 1, 0], label="thread:yield"))
    assert [sentence.split(";")[0] for sentence in found] == [
        "2 ranks and 2 progress threads on host n0 fill its 4 cores"]


def test_asynchronous_progress_of_the_library_counts():
    found = conditions(meta(["n0", "n1"], [A, B], cpus=2, running=[0, 0],
                            label="none+async:MPIR_CVAR_ASYNC_PROGRESS=1"))
    assert [sentence.split(";")[0] for sentence in found] == [
        "1 rank and 1 progress thread on each of 2 hosts (n0 and n1) fill its 2 cores"]


def test_files_without_machine_identities_group_by_host():
    found = conditions(meta(["n0", "n0", "n0", "n1"], cpus=2))
    assert [sentence.split(";")[0] for sentence in found] == [
        "3 ranks on host n0 outnumber its 2 cores: ranks and threads wait for a core, and the "
        "timings include that waiting"]


def test_thousands_of_hosts_in_one_condition_make_one_sentence():
    hosts = [f"c{rank // 64}" for rank in range(65536)]
    machines = [f"{rank // 64:016x}" for rank in range(65536)]
    found = conditions(meta(hosts, machines, cpus=64))
    assert [sentence.split(";")[0] for sentence in found] == [
        "64 ranks on each of 1024 hosts (c0, c1, c2 and 1021 more) fill its 64 cores"]


def test_several_machines_with_several_hosts_each():
    hosts = ["a", "b", "c", "d"] * 2
    found = conditions(meta(sorted(hosts), ["1" * 16] * 4 + ["2" * 16] * 4, cpus=4))
    assert found[0].startswith("2 machines carry several host names each (the same machine id): "
                               "hosts a and b; hosts c and d: emulated nodes or containers")
    assert found[1].startswith("4 ranks on each of 2 machines (hosts a and b; hosts c and d) "
                               "fill its 4 cores; ")
