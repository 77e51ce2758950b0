"""`mpilens map` and the program it runs, mpilens-map, both real: matrices with a known best
mapping and the exact files that apply it, monitor data, every error of the command, and the
matrices mpilens-map generates. They need a build of mpilens-map: under `make test`
(MPILENS_REQUIRE_BUILD lists the flavours) a missing one fails; elsewhere the tests skip."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import (MONITOR_FIXTURE, ROOTFLUSH_FIXTURE, monitor_point, one_line_error,
                      read_records, run_cli, write_records)
from mpilens import launch

REQUIRED = os.environ.get("MPILENS_REQUIRE_BUILD", "").split()
TWO_NODES = "node:2 core:2"
HEAVY, LIGHT = 1000, 1
# Ranks 0 and 2, and 1 and 3, exchange much; their neighbours in rank order little. The best
# mapping on two nodes of two cores puts each heavy pair on one node; identity splits both.
HEAVY_PAIRS = [(0, 2, HEAVY), (2, 0, HEAVY), (1, 3, HEAVY), (3, 1, HEAVY), (0, 1, LIGHT),
               (1, 0, LIGHT), (2, 3, LIGHT), (3, 2, LIGHT)]


@pytest.fixture(scope="module")
def built() -> tuple:
    """(flavour, path) of a build of mpilens-map."""
    for flavour in launch.built_flavours():
        program = launch.dev_bin_dir(flavour) / "mpilens-map"
        if program.exists():
            return flavour.value, program
    if REQUIRED:
        pytest.fail(f"make test requires a build of mpilens-map (flavours {REQUIRED}), and "
                    "there is none")
    pytest.skip("no build of mpilens-map")


def write_csv(path: Path, entries) -> Path:
    path.write_text("sender,receiver,bytes\n"
                    + "".join(f"{s},{r},{b}\n" for s, r, b in entries), encoding="utf-8")
    return path


def run_map(built, tmp_path: Path, matrix, *options: str) -> subprocess.CompletedProcess:
    """`mpilens map MATRIX --out tmp_path/m` with this build."""
    return run_cli("map", str(matrix), "--mpi", built[0], "--out", str(tmp_path / "m"), *options,
                   cwd=tmp_path)


def output(tmp_path: Path, extension: str) -> list:
    return (tmp_path / f"m.{extension}").read_text(encoding="utf-8").splitlines()


def answer(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))


def run_program(built, *args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(built[1]), *args], capture_output=True, text=True, timeout=60,
                          cwd=cwd)


def hosts_of(perm: list) -> dict:
    """rank -> host of a .perm file."""
    rows = [line.split() for line in perm if not line.startswith("#")]
    return {int(rank): host for rank, _, host, _, _ in rows}


# --- the files of a mapping ----------------------------------------------------------------------

def test_heavy_pairs_share_a_node_in_every_file(built, tmp_path):
    matrix = write_csv(tmp_path / "pairs.csv", HEAVY_PAIRS)
    done = run_map(built, tmp_path, matrix, "--topology", TWO_NODES)
    assert done.returncode == 0, done.stderr
    perm = output(tmp_path, "perm")
    assert perm[0].startswith("# mpilens map: treematch on ") and perm[0].endswith(
        "rank slot host core pu")
    hosts = hosts_of(perm)
    assert hosts[0] == hosts[2] != hosts[1] == hosts[3]
    assert perm[1:] == ["0 0 node0 0 0", "1 2 node1 0 0", "2 1 node0 1 1", "3 3 node1 1 1"]
    assert output(tmp_path, "rankfile") == ["rank 0=node0 slot=0", "rank 1=node1 slot=0",
                                            "rank 2=node0 slot=1", "rank 3=node1 slot=1"]
    # Two hosts: no -bind-to list, which hydra applies to each host's processes alike.
    assert output(tmp_path, "hydra") == ["node0:1", "node1:1", "node0:1", "node1:1"]
    assert output(tmp_path, "slurm") == ["node0", "node1", "node0", "node1"]
    lines = done.stdout.splitlines()
    assert f"results: {tmp_path / 'm.json'}" in lines
    for extension in ("perm", "rankfile", "hydra", "slurm"):
        assert f"written: {tmp_path / ('m.' + extension)}" in lines
    assert f"Open MPI: mpirun -n 4 --rankfile {tmp_path / 'm.rankfile'} PROGRAM" in lines


def test_one_host_hydra_binds_to_the_pus(built, tmp_path):
    matrix = write_csv(tmp_path / "pairs.csv", HEAVY_PAIRS)
    done = run_map(built, tmp_path, matrix, "--topology", "package:2 core:2")
    assert done.returncode == 0, done.stderr
    assert output(tmp_path, "hydra") == ["# -bind-to user:0,2,1,3"] + ["localhost:1"] * 4
    assert output(tmp_path, "rankfile") == [
        "rank 0=localhost slot=0", "rank 1=localhost slot=2", "rank 2=localhost slot=1",
        "rank 3=localhost slot=3"]
    assert output(tmp_path, "slurm") == ["localhost"] * 4
    assert (f"MPICH:    mpiexec -n 4 -f {tmp_path / 'm.hydra'} -bind-to user:0,2,1,3 PROGRAM"
            in done.stdout.splitlines())


def test_hosts_name_the_nodes_of_every_file(built, tmp_path):
    """--hosts joins one copy of the topology per host: the files name real hosts."""
    matrix = write_csv(tmp_path / "pairs.csv", HEAVY_PAIRS)
    done = run_map(built, tmp_path, matrix, "--topology", "core:2", "--hosts", "n-a,n-b")
    assert done.returncode == 0, done.stderr
    assert answer(tmp_path)["topology"]["text"].startswith("node:2 core:2")
    assert output(tmp_path, "rankfile") == ["rank 0=n-a slot=0", "rank 1=n-b slot=0",
                                            "rank 2=n-a slot=1", "rank 3=n-b slot=1"]
    assert output(tmp_path, "slurm") == ["n-a", "n-b", "n-a", "n-b"]
    assert output(tmp_path, "hydra") == ["n-a:1", "n-b:1", "n-a:1", "n-b:1"]


def test_hosts_of_the_slurm_allocation(built, tmp_path):
    """--hosts slurm expands SLURM_JOB_NODELIST with scontrol (a stand-in here)."""
    scontrol = tmp_path / "bin" / "scontrol"
    scontrol.parent.mkdir()
    scontrol.write_text('#!/bin/sh\n[ "$1 $2 $3" = "show hostnames c[1-2]" ] && printf "c1\\nc2\\n"\n')
    scontrol.chmod(0o755)
    matrix = write_csv(tmp_path / "pairs.csv", HEAVY_PAIRS)
    environment = {"SLURM_JOB_NODELIST": "c[1-2]",
                   "PATH": f"{scontrol.parent}{os.pathsep}{os.environ['PATH']}"}
    done = run_cli("map", str(matrix), "--mpi", built[0], "--out", str(tmp_path / "m"),
                   "--topology", "core:2", "--hosts", "slurm", cwd=tmp_path, env=environment)
    assert done.returncode == 0, done.stderr
    assert output(tmp_path, "slurm") == ["c1", "c2", "c1", "c2"]


@pytest.mark.parametrize("hosts,env,message", [
    ("slurm", {}, "--hosts slurm: not inside a Slurm allocation (SLURM_JOB_NODELIST is not set)"),
    ("a,a", {}, 'invalid value "a,a" for --hosts: "a" is named twice'),
])
def test_bad_hosts(built, tmp_path, hosts, env, message):
    matrix = write_csv(tmp_path / "pairs.csv", HEAVY_PAIRS)
    done = run_cli("map", str(matrix), "--mpi", built[0], "--out", str(tmp_path / "m"),
                   "--topology", "core:2", "--hosts", hosts, cwd=tmp_path, env=env)
    assert message in one_line_error(done)


def table_rows(stdout: str) -> dict:
    """algorithm -> cells of the printed table."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("algorithm"))
    rows = {}
    for line in lines[start + 1:]:
        cells = line.split()
        if not cells or cells[0].endswith(":"):
            break
        rows[cells[0]] = cells
    return rows


def test_table_compares_with_the_baselines(built, tmp_path):
    matrix = write_csv(tmp_path / "pairs.csv", HEAVY_PAIRS)
    done = run_map(built, tmp_path, matrix, "--topology", TWO_NODES)
    assert done.returncode == 0, done.stderr
    rows = table_rows(done.stdout)
    assert list(rows) == ["treematch", "identity", "packed", "rr", "random"]
    hop_bytes = {name: float(cells[1].replace(",", "")) for name, cells in rows.items()}
    assert hop_bytes["treematch"] <= hop_bytes["identity"]
    # Exact: the heavy pairs inside nodes (2 hops), the light ones between them (4 hops).
    assert hop_bytes["treematch"] == 4 * HEAVY * 2 + 4 * LIGHT * 4
    assert hop_bytes["identity"] == 4 * HEAVY * 4 + 4 * LIGHT * 2
    result = answer(tmp_path)
    costs = {r["algo"]: r["cost"] for r in result["results"]}
    gain = 1 - costs["treematch"]["weighted_bytes"] / costs["identity"]["weighted_bytes"]
    assert rows["treematch"][-3] == f"{100 * gain:.1f}%"   # gain vs identity
    assert rows["identity"][-3] == "0.0%"
    assert rows["treematch"][-4] == "0.1%"                  # between nodes: 4 of 4004 bytes
    assert f"treematch: predicted gain over identity {100 * gain:.1f}%" in done.stdout


def test_json_answer(built, tmp_path):
    matrix = write_csv(tmp_path / "pairs.csv", HEAVY_PAIRS)
    done = run_map(built, tmp_path, matrix, "--topology", TWO_NODES, "--algo", "greedy",
                   "--costs", "5,1")
    assert done.returncode == 0, done.stderr
    result = answer(tmp_path)
    assert result["program"] == "mpilens-map"
    topology = result["topology"]
    assert topology["slots"] == 4
    assert [(level["name"], level["arity"], level["cost"]) for level in topology["levels"]] == [
        ("node", 2, 5), ("core", 2, 1)]
    assert topology["places"] == [["node0", 0, 0], ["node0", 1, 1], ["node1", 0, 0],
                                  ["node1", 1, 1]]
    assert result["matrix"] == {"source": str(matrix), "order": 4, "nonzeros": 8,
                                "total_bytes": 4 * HEAVY + 4 * LIGHT}
    assert [r["algo"] for r in result["results"]] == ["greedy", "identity", "packed", "rr",
                                                      "random"]
    identity = result["results"][1]
    assert identity["slot_of"] == [0, 1, 2, 3]
    cost = identity["cost"]
    assert cost["bytes_at_level"] == [4 * HEAVY, 4 * LIGHT, 0]
    assert cost["weighted_bytes"] == 5 * 4 * HEAVY + 1 * 4 * LIGHT
    assert cost["total_bytes"] == 4 * HEAVY + 4 * LIGHT
    assert {"hop_bytes", "busiest_link", "busiest_level"} <= set(cost)
    assert all(r["seconds"] >= 0 and r["max_rss_kib"] > 0 for r in result["results"])
    assert result["load_seconds"] >= 0


def test_topology_from_a_file(built, tmp_path):
    description = tmp_path / "machine.txt"
    description.write_text("node:2 core:2\n", encoding="utf-8")
    matrix = write_csv(tmp_path / "pairs.csv", HEAVY_PAIRS)
    done = run_map(built, tmp_path, matrix, "--topology", str(description))
    assert done.returncode == 0, done.stderr
    assert answer(tmp_path)["topology"]["text"] == "node:2 core:2 cost=10,1"
    assert output(tmp_path, "slurm") == ["node0", "node1", "node0", "node1"]


def test_this_machine_by_default(built, tmp_path):
    matrix = write_csv(tmp_path / "two.csv", [(0, 1, 100), (1, 0, 100)])
    done = run_map(built, tmp_path, matrix)
    assert done.returncode == 0, done.stderr
    result = answer(tmp_path)
    assert result["topology"]["slots"] >= 1
    assert output(tmp_path, "slurm") == ["localhost"] * 2
    pus = [place[2] for place in result["topology"]["places"]]
    slot_of = result["results"][0]["slot_of"]
    assert output(tmp_path, "hydra")[0] == "# -bind-to user:" + ",".join(
        str(pus[slot]) for slot in slot_of)


# --- monitor data --------------------------------------------------------------------------------

def test_monitor_results_of_one_kind(built, tmp_path):
    done = run_map(built, tmp_path, MONITOR_FIXTURE, "--topology", TWO_NODES, "--kind", "p2p")
    assert done.returncode == 0, done.stderr
    result = answer(tmp_path)
    assert result["matrix"]["order"] == 4
    assert result["matrix"]["total_bytes"] == 4096 + 3072 + 2048 + 1024
    assert result["matrix"]["source"] == f"{MONITOR_FIXTURE} (bytes, kind p2p)"
    # The ring's best cut: 0-1 (4096 B) and 2-3 (2048 B) inside nodes.
    hosts = hosts_of(output(tmp_path, "perm"))
    assert hosts[0] == hosts[1] != hosts[2] == hosts[3]


def test_monitor_kinds_are_summed(built, tmp_path):
    done = run_map(built, tmp_path, MONITOR_FIXTURE, "--topology", TWO_NODES)
    assert done.returncode == 0, done.stderr
    assert answer(tmp_path)["matrix"]["total_bytes"] == 10240 + 3 * 512  # p2p + coll (+ no osc)


def test_monitor_results_with_a_known_best(built, tmp_path):
    sizes = [[0] * 4 for _ in range(4)]
    for sender, receiver, size in HEAVY_PAIRS:
        sizes[sender][receiver] = size
    counts = [[1 if value else 0 for value in row] for row in sizes]
    meta = {**read_records(MONITOR_FIXTURE)[0], "points_total": 1}
    results = write_records(tmp_path / "pairs.jsonl", [meta, monitor_point("p2p", counts, sizes)])
    done = run_map(built, tmp_path, results, "--topology", TWO_NODES)
    assert done.returncode == 0, done.stderr
    assert output(tmp_path, "slurm") == ["node0", "node1", "node0", "node1"]


def test_silent_last_rank_keeps_the_order(built, tmp_path):
    sizes = [[0, 100, 0, 0], [100, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    meta = {**read_records(MONITOR_FIXTURE)[0], "points_total": 1}
    results = write_records(tmp_path / "silent.jsonl",
                            [meta, monitor_point("p2p", [[int(v > 0) for v in row]
                                                         for row in sizes], sizes)])
    done = run_map(built, tmp_path, results, "--topology", TWO_NODES)
    assert done.returncode == 0, done.stderr
    assert answer(tmp_path)["matrix"]["order"] == 4
    assert len(output(tmp_path, "rankfile")) == 4


def test_rootflush_prefix(built, tmp_path):
    done = run_map(built, tmp_path, ROOTFLUSH_FIXTURE / "ring", "--topology", TWO_NODES)
    assert done.returncode == 0, done.stderr
    assert answer(tmp_path)["matrix"]["total_bytes"] == 10240


# --- errors --------------------------------------------------------------------------------------

def test_missing_matrix_file(built, tmp_path):
    done = run_map(built, tmp_path, tmp_path / "nope.csv", "--topology", TWO_NODES)
    assert one_line_error(done) == f'mpilens: error: matrix file "{tmp_path / "nope.csv"}" does ' \
                                   "not exist"


def test_unreadable_matrix(built, tmp_path):
    matrix = tmp_path / "bad.csv"
    matrix.write_text("this is, not a\nmatrix\n", encoding="utf-8")
    done = run_map(built, tmp_path, matrix, "--topology", TWO_NODES)
    assert one_line_error(done).startswith(f'mpilens: error: mpilens-map: --matrix "{matrix}": ')
    assert not (tmp_path / "m.json").exists() and not (tmp_path / "m.perm").exists()
    direct = run_program(built, "--matrix", str(matrix), "--topology", TWO_NODES)
    assert direct.returncode == 1 and direct.stdout == ""
    assert direct.stderr.startswith(f'mpilens-map: --matrix "{matrix}": ')


def test_unknown_algorithm(built, tmp_path):
    done = run_map(built, tmp_path, MONITOR_FIXTURE, "--algo", "tabu")
    line = one_line_error(done)
    assert 'invalid algorithm "tabu": choose from treematch, greedy, scotch, identity, packed, ' \
           "rr, random" in line


def test_scotch_unavailable_is_the_programs_error(tmp_path):
    """A build without Scotch: the program's own line, relayed (a stand-in program, since this
    machine's build has Scotch)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stand_in = bin_dir / "mpilens-map"
    stand_in.write_text("#!/bin/sh\necho 'mpilens-map: --algo scotch: algorithm not built in "
                        "this library' >&2\nexit 2\n")
    stand_in.chmod(0o755)
    matrix = write_csv(tmp_path / "pairs.csv", HEAVY_PAIRS)
    done = run_cli("map", str(matrix), "--algo", "scotch", "--mpi", "openmpi", "--bin-dir",
                   str(bin_dir), "--out", str(tmp_path / "m"), cwd=tmp_path)
    assert one_line_error(done) == ("mpilens: error: mpilens-map: --algo scotch: algorithm not "
                                    "built in this library")


def test_topology_that_does_not_parse(built, tmp_path):
    matrix = write_csv(tmp_path / "pairs.csv", HEAVY_PAIRS)
    done = run_map(built, tmp_path, matrix, "--topology", "node:two")
    assert one_line_error(done).startswith('mpilens: error: mpilens-map: --topology "node:two": ')
    direct = run_program(built, "--matrix", str(matrix), "--topology", "node:two")
    assert direct.returncode == 2 and len(direct.stderr.splitlines()) == 1


def test_bad_seed(built, tmp_path):
    matrix = write_csv(tmp_path / "pairs.csv", HEAVY_PAIRS)
    done = run_map(built, tmp_path, matrix, "--seed", "4294967296")
    assert 'invalid seed "4294967296": expected an integer from 0 to 4294967295' in \
        one_line_error(done)


def test_kind_with_a_matrix_file(built, tmp_path):
    matrix = write_csv(tmp_path / "pairs.csv", HEAVY_PAIRS)
    done = run_map(built, tmp_path, matrix, "--kind", "p2p")
    assert "--kind p2p applies to monitor results and flush files" in one_line_error(done)


def test_more_ranks_than_slots_is_mapped_and_said(built, tmp_path):
    matrix = write_csv(tmp_path / "eight.csv", [(r, (r + 1) % 8, 64) for r in range(8)])
    done = run_map(built, tmp_path, matrix, "--topology", TWO_NODES)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("mpilens: note:")]
    assert notes == ["mpilens: note: 8 ranks on 4 slots: the mapping puts up to 2 ranks on a "
                     "slot (oversubscribed)"]
    assert len(output(tmp_path, "rankfile")) == 8


# --- mpilens-map on its own ----------------------------------------------------------------------

def generated(built, spec: str, *extra: str) -> dict:
    done = run_program(built, "--generate", spec, "--topology", "core:64", "--algo", "identity",
                       "--quiet", *extra)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return json.loads(done.stdout)["matrix"]


@pytest.mark.parametrize("spec,order,nonzeros,total", [
    # a 2x2x2 grid: 12 edges, both ways, 8192 B per face
    ("stencil3d:8", 8, 24, 24 * 8192),
    ("stencil3d:8:100", 8, 24, 2400),
    # 3x2: 3 + 4 edges
    ("stencil2d:6:10", 6, 14, 140),
    # the most cubic grid of 12 is 3x2x2: 8 + 6 + 6 edges
    ("stencil3d:12:1", 12, 40, 40),
    ("random:8:3", 8, 24, None),
    ("random:4:10", 4, 12, None),
    # cg.c at 4 ranks: a 2x2 grid, faces of 2x2 doubles; its allreduce pairs are grid neighbours
    ("cg:4:2", 4, 8, 8 * 32 + 8 * 16),
    # 6 ranks: py 2, pz 3; 7 halo edges; the allreduce adds 0-4 and 1-5 (r XOR 4)
    ("cg:6", 6, 18, 14 * 8192 + 14 * 16),
    ("stencil3d:1", 1, 0, 0),
])
def test_generated_matrices(built, spec, order, nonzeros, total):
    matrix = generated(built, spec)
    assert matrix["source"] == spec
    assert (matrix["order"], matrix["nonzeros"]) == (order, nonzeros)
    if total is not None:
        assert matrix["total_bytes"] == total


def test_saved_matrix_reads_back(built, tmp_path):
    """--save-matrix writes what --matrix reads back whole, the silent last process included."""
    saved = tmp_path / "saved.mtx"
    first = generated(built, "random:16:3", "--save-matrix", str(saved))
    lines = saved.read_text().splitlines()
    assert lines[0] == "%%MatrixMarket matrix coordinate real general"
    assert lines[1] == f"16 16 {first['nonzeros']}" and len(lines) == 2 + first["nonzeros"]
    done = run_program(built, "--matrix", str(saved), "--topology", "core:64", "--algo",
                       "identity", "--quiet")
    assert done.returncode == 0, done.stderr
    again = json.loads(done.stdout)["matrix"]
    assert (again["order"], again["nonzeros"], again["total_bytes"]) == \
        (16, first["nonzeros"], first["total_bytes"])
    silent = tmp_path / "silent.mtx"  # process 2 sends and receives nothing
    silent.write_text("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 5\n")
    done = run_program(built, "--matrix", str(silent), "--topology", "core:4", "--algo", "identity",
                       "--quiet", "--save-matrix", str(saved))
    assert done.returncode == 0, done.stderr
    assert saved.read_text().splitlines()[1:] == ["3 3 1", "1 2 5"]


def test_random_matrices_follow_the_seed(built):
    first, again = generated(built, "random:64"), generated(built, "random:64")
    other = generated(built, "random:64", "--seed", "7")
    assert first["nonzeros"] == 640
    assert first["total_bytes"] == again["total_bytes"] != other["total_bytes"]


def test_timing_lines(built):
    done = run_program(built, "--generate", "stencil2d:16", "--topology", "core:16", "--algo",
                       "identity,rr,round-robin")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert [line.split(":")[0] for line in lines] == ["identity", "rr"]
    assert all(line.endswith(" MiB") and " s, peak " in line for line in lines)


def test_algo_all_and_output_file(built, tmp_path):
    done = run_program(built, "--generate", "stencil2d:16", "--topology", "core:16", "--algo",
                       "all", "--quiet", "--output", str(tmp_path / "a.json"))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    result = json.loads((tmp_path / "a.json").read_text())
    assert [r["algo"] for r in result["results"]] == ["treematch", "greedy", "scotch",
                                                      "identity", "packed", "rr", "random"]
    for r in result["results"]:
        assert sorted(r["slot_of"]) == list(range(16))


@pytest.mark.parametrize("args,message", [
    ((), "give one matrix: --matrix FILE or --generate KIND:P[:ARG]"),
    (("--generate", "ring:8"), 'invalid value "ring:8" for --generate'),
    (("--generate", "stencil3d:0"), 'invalid value "stencil3d:0" for --generate'),
    (("--generate", "random:8:x"), 'invalid value "random:8:x" for --generate'),
    (("--generate", "cg:4", "--algo", "best"), 'invalid value "best" for --algo'),
    (("--generate", "cg:4", "--topology", "big"), 'invalid value "big" for --topology'),
    (("--generate", "cg:4", "--topology", "node:2 core:2", "--costs", "1"),
     'invalid value "1" for --costs: the topology has 2 levels'),
    (("--generate", "cg:4", "--seed", "-1"), 'invalid value "-1" for --seed'),
    (("--generate", "cg:4", "--bogus"), "unknown option --bogus"),
])
def test_bad_options(built, args, message):
    done = run_program(built, *args)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("mpilens-map: ") and message in line


def test_missing_matrix_file_is_a_library_error(built, tmp_path):
    done = run_program(built, "--matrix", str(tmp_path / "nope.csv"), "--topology", "core:4",
                       "--output", str(tmp_path / "out.json"))
    assert done.returncode == 1
    assert done.stderr.startswith(f'mpilens-map: --matrix "{tmp_path / "nope.csv"}": ')
    assert not (tmp_path / "out.json").exists()


def test_help_names_the_generators(built):
    done = run_program(built, "--help")
    assert done.returncode == 0
    for kind in ("stencil3d", "stencil2d", "random", "cg"):
        assert f"  {kind} " in done.stdout
