"""The map family (seed 004, section 6): which rank order fits the communication pattern to the
machine, and does reordering pay? Its results come from the reordering examples, which the user
runs; its command, `mpilens map`, finds the rank order for a communication matrix: it runs
mpilens-map with the chosen algorithm and the baselines, writes the permutation and the files
that make each launcher apply it, and prints what each mapping costs."""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .. import launch, matrices
from ..analysis import map as analysis
from ..analysis import map_costs
from ..cli_common import BIN_DIR_HELP, ensure_writable
from ..errors import MpilensError
from ..family import Command, Family, study_family
from ..plots import map as plots
from ..text import columns, percent
from ..units import format_size, format_time

PROGRAM = "mpilens-map"
ALGOS = ("treematch", "greedy", "scotch", "identity", "packed", "rr", "random")
ALIASES = {"round-robin": "rr"}
BASELINES = ("identity", "packed", "rr", "random")
# Files handed to the program as they are; anything else is what `mpilens matrix` reads.
MATRIX_SUFFIXES = (".csv", ".mat", ".mtx")
MONITOR_SUFFIXES = (".jsonl", ".prof")
DEFAULT_PREFIX = "mpilens-map"
SEED_MAX = 2**32 - 1


def _algo(text: str) -> str:
    name = ALIASES.get(text.strip(), text.strip())
    if name not in ALGOS:
        raise argparse.ArgumentTypeError(
            f'invalid algorithm "{text}": choose from ' + ", ".join(ALGOS)
        )
    return name


def _seed(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) > SEED_MAX:
        raise argparse.ArgumentTypeError(
            f'invalid seed "{text}": expected an integer from 0 to {SEED_MAX}'
        )
    return int(text)


def _add_arguments(sub: argparse.ArgumentParser, family: Family) -> None:
    sub.add_argument(
        "matrix",
        metavar="MATRIX",
        help=(
            "a matrix file (CSV sender,receiver,bytes[,count], dense .mat, Matrix "
            "Market .mtx), or what `mpilens matrix` reads: a monitor results file "
            "or directory, or a prefix of rootflush or flush files"
        ),
    )
    sub.add_argument(
        "--topology",
        default="hwloc",
        metavar="hwloc|SPEC|FILE",
        help="the machine: hwloc (this one, the default), a description such as "
        '"node:4 core:8", or a file (hwloc XML export or a description)',
    )
    sub.add_argument(
        "--algo",
        type=_algo,
        default="treematch",
        metavar="NAME",
        help="the algorithm: " + ", ".join(ALGOS) + " (default treematch)",
    )
    sub.add_argument(
        "--out",
        metavar="PREFIX",
        default=DEFAULT_PREFIX,
        help=(
            f"where to write the files, PREFIX.<ext> (default {DEFAULT_PREFIX} in "
            "the current directory); existing files are replaced"
        ),
    )
    sub.add_argument(
        "--kind",
        choices=matrices.KIND_CHOICES,
        default="all",
        help=(
            "monitor data: which communication to map, the bytes of the kinds "
            "chosen summed (default all)"
        ),
    )
    sub.add_argument(
        "--mpi",
        choices=[f.value for f in launch.Flavour] + [launch.AUTO],
        default=launch.AUTO,
        help=f"the MPI flavour whose build of {PROGRAM} to run (default auto)",
    )
    sub.add_argument("--bin-dir", metavar="DIR", help=BIN_DIR_HELP)
    sub.add_argument(
        "--seed",
        type=_seed,
        default=1,
        metavar="N",
        help="seed of the random choices (random baseline, ties; default 1)",
    )
    sub.add_argument(
        "--hosts",
        metavar="LIST|slurm",
        help=(
            "host names separated by commas, or slurm for the nodes of the current "
            "allocation: the machine is then one copy of --topology per host, "
            "joined under a node level, and the files name those hosts "
            "(docs/cluster.md)"
        ),
    )
    sub.add_argument(
        "--costs",
        metavar="LIST",
        help=(
            "cost per byte at each level of the topology, from the top, separated "
            "by commas (default: the topology's)"
        ),
    )


# --- the matrix ----------------------------------------------------------------------------------


def _summed_bytes(source: Path, kind: str) -> matrices.Matrix:
    """The bytes matrix of the chosen kinds of a monitor run or flush files, summed."""
    run = matrices.only_kind(matrices.load(source), kind)
    traffic = list(matrices.traffic_of(run).values())
    if not traffic:
        raise MpilensError(f'"{source}" holds no communication matrix')
    sizes = {t.ranks for t in traffic}
    if len(sizes) > 1:
        raise MpilensError(
            f'"{source}" holds matrices of different sizes ('
            + ", ".join(map(str, sorted(sizes)))
            + "): they are not from one run"
        )
    return matrices.summed(kind, "bytes", [t.bytes for t in traffic])


def _matrix_file(source: Path, kind: str, scratch: Path) -> Path:
    """The file to hand to the program: MATRIX itself, or the monitor data written as Matrix
    Market (which, unlike CSV, records the order even when the last ranks are silent)."""
    if source.suffix in MATRIX_SUFFIXES + MONITOR_SUFFIXES and not source.exists():
        raise MpilensError(f'matrix file "{source}" does not exist')
    if source.suffix in MATRIX_SUFFIXES:
        if kind != "all":
            raise MpilensError(
                f"--kind {kind} applies to monitor results and flush files, not to "
                f'the matrix file "{source}"'
            )
        return source
    path = scratch / "matrix.mtx"
    with open(path, "w", encoding="utf-8") as out:
        matrices.write_matrix_market(_summed_bytes(source, kind), out)
    return path


# --- the hosts -----------------------------------------------------------------------------------


def allocation_hosts() -> List[str]:
    """The nodes of the Slurm allocation this runs in, as `scontrol show hostnames` expands
    SLURM_JOB_NODELIST."""
    nodelist = os.environ.get("SLURM_JOB_NODELIST")
    if not nodelist:
        raise MpilensError(
            "--hosts slurm: not inside a Slurm allocation (SLURM_JOB_NODELIST is "
            "not set); run it inside salloc or sbatch, or name the hosts"
        )
    try:
        done = subprocess.run(
            ["scontrol", "show", "hostnames", nodelist],
            capture_output=True,
            text=True,
            timeout=30,
            errors="replace",
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise MpilensError(f"--hosts slurm: cannot run scontrol: {error}") from None
    hosts = done.stdout.split()
    if done.returncode != 0 or not hosts:
        raise MpilensError(
            f'--hosts slurm: scontrol cannot expand "{nodelist}": '
            f"{done.stderr.strip() or 'no host'}"
        )
    return hosts


def _hosts_option(text: Optional[str]) -> Optional[str]:
    """mpilens-map's --hosts for ours: the names as given, or the allocation's for slurm."""
    if text is None:
        return None
    return ",".join(allocation_hosts()) if text.strip() == "slurm" else text


# --- running the program -------------------------------------------------------------------------


def _algo_list(chosen: str) -> List[str]:
    """The chosen algorithm, then the baselines, each once."""
    return list(dict.fromkeys([chosen, *BASELINES]))


def _run_program(command: Sequence[str]) -> None:
    """Runs mpilens-map; its one-line error becomes ours."""
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, errors="replace")
    except OSError as error:
        raise MpilensError(f'cannot start "{command[0]}": {error.strerror}') from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"{PROGRAM} exited with status {done.returncode}"
        raise MpilensError(reason)


def _read_result(path: Path, source: Optional[str]) -> dict:
    """The program's answer; source, when given, replaces the temporary file it read as the
    matrix's source (in the file too)."""
    try:
        answer = json.loads(path.read_text(encoding="utf-8"))
        if source is not None:
            answer["matrix"]["source"] = source
            path.write_text(json.dumps(answer, separators=(",", ":")) + "\n", encoding="utf-8")
    except (OSError, ValueError) as error:
        raise MpilensError(f'cannot read what {PROGRAM} wrote in "{path}": {error}') from None
    return answer


# --- the files that apply a mapping --------------------------------------------------------------


def _places(result: dict, answer: dict) -> List[tuple]:
    """(slot, host, core, pu) of each rank."""
    places = answer["topology"]["places"]
    return [(slot, *places[slot]) for slot in result["slot_of"]]


def perm_text(result: dict, answer: dict) -> str:
    lines = [
        f'# mpilens map: {result["algo"]} on "{answer["topology"]["text"]}"; rank slot host core pu'
    ]
    lines += [
        f"{rank} {slot} {host} {core} {pu}"
        for rank, (slot, host, core, pu) in enumerate(_places(result, answer))
    ]
    return "\n".join(lines) + "\n"


def rankfile_text(result: dict, answer: dict) -> str:
    """Open MPI's rankfile: "slot=N" alone is the logical core N of the host."""
    return "".join(
        f"rank {rank}={host} slot={core}\n"
        for rank, (_, host, core, _) in enumerate(_places(result, answer))
    )


def hydra_binding(result: dict, answer: dict) -> Optional[str]:
    """hydra's -bind-to user:PU,PU,... for a mapping on one host (the list binds the host's
    processes in rank order, so it cannot describe several hosts), else None."""
    places = _places(result, answer)
    if len({host for _, host, _, _ in places}) != 1:
        return None
    return "user:" + ",".join(str(pu) for _, _, _, pu in places)


def hydra_text(result: dict, answer: dict) -> str:
    """hydra's machinefile: one slot per line, so consecutive ranks follow the lines."""
    binding = hydra_binding(result, answer)
    header = [f"# -bind-to {binding}"] if binding else []
    lines = header + [f"{host}:1" for _, host, _, _ in _places(result, answer)]
    return "\n".join(lines) + "\n"


def slurm_text(result: dict, answer: dict) -> str:
    """SLURM_HOSTFILE for srun --distribution=arbitrary: the host of each rank, in rank order."""
    return "".join(f"{host}\n" for _, host, _, _ in _places(result, answer))


WRITERS = (
    ("perm", perm_text),
    ("rankfile", rankfile_text),
    ("hydra", hydra_text),
    ("slurm", slurm_text),
)


def _write_files(prefix: Path, result: dict, answer: dict) -> Dict[str, Path]:
    written = {}
    for extension, text in WRITERS:
        path = prefix.with_name(f"{prefix.name}.{extension}")
        try:
            path.write_text(text(result, answer), encoding="utf-8")
        except OSError as error:
            raise MpilensError(f'cannot write "{path}": {error.strerror}') from None
        written[extension] = path
    return written


# --- the comparison ------------------------------------------------------------------------------


def _gain(cost: float, reference: float) -> Optional[float]:
    """1 - cost / reference, the share of the reference's cost a mapping saves."""
    return None if reference <= 0 else 1.0 - cost / reference


def table_lines(answer: dict, chosen: str) -> List[str]:
    """The chosen algorithm, then the baselines: hop-bytes, weighted cost, busiest link, share of
    the bytes between top-level objects, gain over identity, time."""
    results = {r["algo"]: r for r in answer["results"]}
    identity = results["identity"]["cost"]["weighted_bytes"]
    levels = answer["topology"]["levels"]
    top = f"between {levels[0]['name']}s" if levels else "between top objects"
    rows = [
        ["algorithm", "hop-bytes", "weighted cost", "busiest link", top, "gain vs identity", "time"]
    ]
    for name in _algo_list(chosen):
        result = results[name]
        cost = result["cost"]
        total = cost["total_bytes"]
        share = cost["bytes_at_level"][0] / total if total > 0 else None
        rows.append(
            [
                name,
                f"{cost['hop_bytes']:,.0f}",
                f"{cost['weighted_bytes']:,.0f}",
                format_size(cost["busiest_link"]),
                percent(share, 1),
                percent(_gain(cost["weighted_bytes"], identity), 1),
                format_time(result["seconds"] * 1e9),
            ]
        )
    return columns(rows, left=1)


def _oversubscription(answer: dict) -> Optional[str]:
    order, slots = answer["matrix"]["order"], answer["topology"]["slots"]
    if order <= slots:
        return None
    return (
        f"mpilens: note: {order} ranks on {slots} slots: the mapping puts up to "
        f"{math.ceil(order / slots)} ranks on a slot (oversubscribed)"
    )


def _usage_lines(files: Dict[str, Path], result: dict, answer: dict) -> List[str]:
    ranks = len(result["slot_of"])
    binding = hydra_binding(result, answer)
    bind = f" -bind-to {binding}" if binding else ""
    return [
        f"Open MPI: mpirun -n {ranks} --rankfile {files['rankfile']} PROGRAM",
        f"MPICH:    mpiexec -n {ranks} -f {files['hydra']}{bind} PROGRAM",
        f"Slurm:    SLURM_HOSTFILE={files['slurm']} srun -n {ranks} "
        "--distribution=arbitrary PROGRAM",
    ]


def _run(args: argparse.Namespace, family: Family) -> None:
    flavour = launch.resolve_flavour(args.mpi)
    program = launch.find_program(PROGRAM, flavour, args.bin_dir)
    prefix = Path(args.out)
    ensure_writable(prefix.parent)
    output = prefix.with_name(f"{prefix.name}.json")
    with tempfile.TemporaryDirectory(prefix="mpilens-map-") as scratch:
        matrix = _matrix_file(Path(args.matrix), args.kind, Path(scratch))
        command = [
            str(program),
            "--matrix",
            str(matrix),
            "--topology",
            args.topology,
            "--algo",
            ",".join(_algo_list(args.algo)),
            "--seed",
            str(args.seed),
            "--output",
            str(output),
            "--quiet",
        ]
        hosts = _hosts_option(args.hosts)
        if hosts is not None:
            command += ["--hosts", hosts]
        if args.costs is not None:
            command += ["--costs", args.costs]
        _run_program(command)
        source = None if matrix == Path(args.matrix) else f"{args.matrix} (bytes, kind {args.kind})"
    answer = _read_result(output, source)
    note = _oversubscription(answer)
    if note:
        print(note, file=sys.stderr)
    chosen = next(r for r in answer["results"] if r["algo"] == args.algo)
    files = _write_files(prefix, chosen, answer)
    for line in table_lines(answer, args.algo):
        print(line)
    identity = next(r for r in answer["results"] if r["algo"] == "identity")
    cost, reference = chosen["cost"]["weighted_bytes"], identity["cost"]["weighted_bytes"]
    print(
        f"{args.algo}: predicted gain over identity {percent(_gain(cost, reference), 1)} "
        f"(weighted cost {cost:,.0f} against {reference:,.0f})"
    )
    print(f"results: {output}")
    for path in files.values():
        print(f"written: {path}")
    for line in _usage_lines(files, chosen, answer):
        print(line)


FAMILY = study_family(
    "map",
    "mpilens-example-reorder-allgather",
    "Which rank order fits the communication pattern to the machine, and does reordering pay? "
    "The gain of reordering over iterations and buffer sizes, its break-even, and the cost "
    "model's prediction (seed 004)",
    analysis,
    plots,
    Command(
        _add_arguments,
        _run,
        help=(
            "find the rank order that fits a communication matrix to the machine, and write "
            "the files that make mpirun, mpiexec or srun use it"
        ),
        description=(
            f"Map the ranks of MATRIX onto the machine with --algo and the baselines "
            f"({', '.join(BASELINES)}) by running {PROGRAM}; write PREFIX.json, "
            "PREFIX.perm, PREFIX.rankfile (Open MPI), PREFIX.hydra (MPICH) and "
            "PREFIX.slurm (srun), and print what each mapping costs."
        ),
    ),
    presets={},
    verdict=map_costs.verdict,
    symptoms=map_costs.symptoms,
)
