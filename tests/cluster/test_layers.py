"""The interposition layers across nodes, where messages go over the network rather than shared
memory: libmpilens-piggyback carries and checks a pb on every message of its call and
conformance programs, and libmpilens-progress moves a rendezvous transfer between two nodes
while the receiver computes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict

import pytest

from conftest import ROOT

# One method of each mechanism and position: pack and datatype (in the message), before and
# after the payload, and the separate message.
PB_METHODS = ["pack-before", "datatype-after", "separate"]
PB_PROGRAMS = ["test_pb_calls", "pb_conformance"]


def layer(flavour: str, name: str) -> str:
    return str(ROOT / "build" / flavour / "lib" / f"libmpilens-{name}.so")


def under(settings: Dict[str, str]) -> list:
    """The ranks' command prefix that sets the layer's variables for them alone: a preload in
    srun itself would load the layer (and MPI) there."""
    return ["env", *[f"{key}={value}" for key, value in settings.items()]]


@pytest.mark.parametrize("program", PB_PROGRAMS)
@pytest.mark.parametrize("method", PB_METHODS)
def test_piggyback_verified_across_nodes(cluster, flavour, method, program, tmp_path):
    """Each program says how many messages it received that carry a pb; the check driver must
    have verified as many, with no error (sender, tag, size, sequence and pattern each)."""
    settings = {"LD_PRELOAD": layer(flavour, "piggyback"), "MPILENS_PB_METHOD": method,
                "MPILENS_PB_SIZE": "24", "MPILENS_PB_DRIVER": "check"}
    done = cluster.run([*cluster.srun(flavour), *under(settings),
                        ROOT / "build" / flavour / "tests" / program], cwd=tmp_path)
    expected = re.search(r"^expected (\d+) messages with piggyback$", done.stdout, re.M)
    assert expected and int(expected.group(1)) > 0, done.stdout
    report = re.search(r"check \(([a-z-]+), 24-byte pb\): (\d+) messages verified, (\d+) errors",
                       done.stderr)
    assert report, done.stderr
    assert report.groups() == (method, expected.group(1), "0"), done.stderr


@pytest.mark.parametrize("expect, settings", [
    ("off", {}),
    ("on", {"MPILENS_PROGRESS": "poll"}),
    ("on", {"MPILENS_PROGRESS": "yield"}),
    # no timer: only a descriptor of the library's can wake the thread during the computation
    ("on", {"MPILENS_PROGRESS": "event:0"}),
], ids=["no-layer", "poll", "yield", "event"])
def test_progress_moves_a_rendezvous_between_nodes(cluster, flavour, expect, settings,
                                                   tmp_path):
    """progress_rendezvous with its two ranks on two nodes: the 4 MiB send completes during the
    receiver's computation with the thread, and only after it without. The emulated nodes share
    one kernel, hence one monotonic clock, on which the program orders the two moments."""
    if settings:
        settings = {"LD_PRELOAD": layer(flavour, "progress"), **settings}
    done = cluster.run([*cluster.srun(flavour, ranks=2, nodes=2), *under(settings),
                        ROOT / "build" / flavour / "tests" / "progress_rendezvous", expect],
                       cwd=tmp_path)
    assert re.search(r"^passed", done.stdout + done.stderr, re.M), done.stdout + done.stderr


@pytest.mark.parametrize("ranks", [2, 4])
def test_progress_event_mode_is_woken_by_the_network(cluster, flavour, ranks, tmp_path):
    """event across nodes: the thread watches descriptors the library opened at MPI_Init and is
    woken by them when messages cross from the other node (test_progress_api checks both through
    mpilens_progress_info: events counts descriptor wake-ups only)."""
    done = cluster.run([*cluster.srun(flavour, ranks=ranks, nodes=2),
                        ROOT / "build" / flavour / "tests" / "test_progress_api", "event:0"],
                       cwd=tmp_path)
    assert re.search(r"^passed", done.stdout, re.M), done.stdout + done.stderr
    assert re.search(r"progress thread started: event, woken by \d+ descriptors only",
                     done.stderr), done.stderr
