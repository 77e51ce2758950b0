"""--launcher templates: the placeholders {np}, {nodes} and {program}, where -n N goes without
{np}, and the templates refused (a rank count of their own, a wrapper without {np}, an unknown
placeholder), for mpirun, mpiexec, srun and container wrappers."""

from __future__ import annotations

import argparse
import json
import sys

import pytest
from conftest import FAKE_PROGRAM, SANITY_FIXTURE, one_line_error, run_cli, write_script

from mpilens import cli_common, launch
from mpilens.errors import MpilensError
from mpilens.launch import Flavour

APP = "/opt/app/bin/solver"
ARGS = ["--grid", "64"]


def command(template, np=4, flavour=Flavour.OPENMPI, **options):
    return launch.build_command(flavour, np, APP, ARGS, launcher=template, **options)


def refusal(template, np=4, flavour=Flavour.OPENMPI, **options) -> str:
    """The message of a refused template, which must be one line."""
    with pytest.raises(MpilensError) as caught:
        command(template, np, flavour, **options)
    message = str(caught.value)
    assert "\n" not in message and "\r" not in message
    return message


@pytest.fixture(autouse=True)
def no_allocation(on_path):
    """No Slurm allocation and nothing on PATH, unless a test says otherwise."""
    on_path()


# --- {np} ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template, flavour, expected",
    [
        ("mpirun -np {np}", Flavour.OPENMPI, ["mpirun", "-np", "4"]),
        (
            "mpirun --np={np} --bind-to core",
            Flavour.OPENMPI,
            ["mpirun", "--np=4", "--bind-to", "core"],
        ),
        ("mpiexec -n {np} -f hosts", Flavour.MPICH, ["mpiexec", "-n", "4", "-f", "hosts"]),
        ("mpiexec.hydra -np {np}", Flavour.MPICH, ["mpiexec.hydra", "-np", "4"]),
        ("srun --mpi=pmix --ntasks={np}", Flavour.OPENMPI, ["srun", "--mpi=pmix", "--ntasks=4"]),
        ("srun -n{np}", Flavour.MPICH, ["srun", "-n4"]),
        ("aprun -n {np} -N 2", Flavour.MPICH, ["aprun", "-n", "4", "-N", "2"]),
    ],
)
def test_np_placeholder(template, flavour, expected):
    assert command(template, flavour=flavour) == [*expected, APP, *ARGS]


@pytest.mark.parametrize(
    "template, flavour, expected",
    [
        ("mpirun --hostfile hosts", Flavour.OPENMPI, ["mpirun", "--hostfile", "hosts", "-n", "4"]),
        (
            "mpiexec -f hosts -bind-to core",
            Flavour.MPICH,
            ["mpiexec", "-f", "hosts", "-bind-to", "core", "-n", "4"],
        ),
        ("srun --mpi=pmi2 -N 2", Flavour.MPICH, ["srun", "--mpi=pmi2", "-N", "2", "-n", "4"]),
        ("mpirun", Flavour.OPENMPI, ["mpirun", "-n", "4"]),
        # --mca and -genv take two values.
        (
            "mpirun --mca btl self,vader --host a:2",
            Flavour.OPENMPI,
            ["mpirun", "--mca", "btl", "self,vader", "--host", "a:2", "-n", "4"],
        ),
        (
            "mpiexec -genv A 1 -bind-to core",
            Flavour.MPICH,
            ["mpiexec", "-genv", "A", "1", "-bind-to", "core", "-n", "4"],
        ),
        # Words before the launcher (env, nice) are not its options; nice's -n is no rank count.
        (
            'env "TAG=a b" mpiexec -f hosts',
            Flavour.MPICH,
            ["env", "TAG=a b", "mpiexec", "-f", "hosts", "-n", "4"],
        ),
        ("nice -n 5 mpirun", Flavour.OPENMPI, ["nice", "-n", "5", "mpirun", "-n", "4"]),
    ],
)
def test_without_np_the_count_follows_the_launchers_options(template, flavour, expected):
    assert command(template, flavour=flavour) == [*expected, APP, *ARGS]


def test_series_of_rank_counts_each_get_theirs():
    assert [command("srun -n {np}", np=np)[2] for np in (2, 4, 8)] == ["2", "4", "8"]


# --- {nodes} -------------------------------------------------------------------------------------


def test_nodes_placeholder():
    assert command("srun -N {nodes} -n {np} --cpu-bind=cores", nodes=2) == [
        "srun",
        "-N",
        "2",
        "-n",
        "4",
        "--cpu-bind=cores",
        APP,
        *ARGS,
    ]
    assert command("mpirun --map-by ppr:{nodes}:node -np {np}", nodes=3) == [
        "mpirun",
        "--map-by",
        "ppr:3:node",
        "-np",
        "4",
        APP,
        *ARGS,
    ]


def test_nodes_default_to_the_allocations(on_path, monkeypatch):
    on_path("srun")
    monkeypatch.setenv("SLURM_JOB_ID", "12345")
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "3")
    assert command("srun -N {nodes} -n {np}") == ["srun", "-N", "3", "-n", "4", APP, *ARGS]
    assert command("srun -N {nodes} -n {np}", nodes=2)[:3] == ["srun", "-N", "2"]


def test_nodes_unknown():
    assert refusal("srun -N {nodes} -n {np}") == (
        '--launcher "srun -N {nodes} -n {np}" uses {nodes} but the node count is not known: '
        "give it with --nodes N"
    )


@pytest.mark.parametrize("template", ["srun -n {np}", None])
def test_nodes_without_the_placeholder(on_path, template):
    on_path("mpirun.openmpi")
    assert refusal(template, nodes=2) == (
        '--nodes 2 is only for a --launcher with {nodes}, as in "srun -N {nodes} -n {np}"'
    )


@pytest.mark.parametrize("nodes", [0, -1, True, "2"])
def test_invalid_node_count(nodes):
    assert refusal("srun -N {nodes} -n {np}", nodes=nodes) == (
        f'invalid number of nodes "{nodes}": expected an integer of at least 1'
    )


# --- {program} -----------------------------------------------------------------------------------


def test_program_placeholder():
    monitor = [":", "-np", "1", "./monitor"]
    assert command("mpirun -np {np} {program} : -np 1 ./monitor") == [
        *["mpirun", "-np", "4"],
        APP,
        *ARGS,
        *monitor,
    ]
    # Without {np}, -n N goes before {program}, after the launcher's options.
    assert command("mpirun --hostfile h {program} : -np 1 ./monitor") == [
        *["mpirun", "--hostfile", "h", "-n", "4"],
        APP,
        *ARGS,
        *monitor,
    ]
    assert command("mpirun -np {np} -- {program}") == ["mpirun", "-np", "4", "--", APP, *ARGS]


@pytest.mark.parametrize(
    "template",
    ["srun -n {np} bash -c 'cd /tmp && {program}'", "srun -n {np} {program} {program}"],
)
def test_program_must_be_one_word_once(template):
    assert refusal(template) == (
        f'--launcher "srun -n {{np}} {template.split(" ", 3)[3]}" must have {{program}} once, '
        'as a word of its own, as in "srun -n {np} {program}"'
    )


def test_program_cannot_come_first():
    assert refusal("{program} srun") == (
        '--launcher "{program} srun" must start with the launcher, not {program}, as in '
        '"srun -n {np} {program}"'
    )


# --- containers and other wrappers ---------------------------------------------------------------


@pytest.mark.parametrize(
    "template, flavour, expected",
    [
        (
            "srun -n {np} singularity exec img.sif",
            Flavour.OPENMPI,
            ["srun", "-n", "4", "singularity", "exec", "img.sif", APP, *ARGS],
        ),
        (
            "mpirun -np {np} apptainer run x.sif",
            Flavour.OPENMPI,
            ["mpirun", "-np", "4", "apptainer", "run", "x.sif", APP, *ARGS],
        ),
        (
            "mpiexec -n {np} apptainer exec --bind /scratch x.sif",
            Flavour.MPICH,
            ["mpiexec", "-n", "4", "apptainer", "exec", "--bind", "/scratch", "x.sif", APP, *ARGS],
        ),
        # After the image, -n 2 is the container command's business, not a rank count.
        (
            "srun -n {np} singularity exec img.sif {program} -n 2",
            Flavour.OPENMPI,
            ["srun", "-n", "4", "singularity", "exec", "img.sif", APP, *ARGS, "-n", "2"],
        ),
        (
            "srun -n {np} singularity exec img.sif -n 2",
            Flavour.OPENMPI,
            ["srun", "-n", "4", "singularity", "exec", "img.sif", "-n", "2", APP, *ARGS],
        ),
    ],
)
def test_wrapper_with_np(template, flavour, expected):
    assert command(template, flavour=flavour) == expected


def test_wrapper_gets_the_variables_after_the_launcher():
    assert launch.build_command(
        Flavour.MPICH, 2, APP, [], launcher="mpirun -np {np} apptainer run x.sif", env={"A": "1"}
    ) == ["mpirun", "-genv", "A", "1", "-np", "2", "apptainer", "run", "x.sif", APP]


@pytest.mark.parametrize(
    "template, wrapper, fixed",
    [
        (
            "srun singularity exec img.sif",
            "singularity after srun",
            "srun -n {np} singularity exec img.sif",
        ),
        (
            "srun --mpi=pmix singularity exec img.sif",
            "singularity after srun",
            "srun --mpi=pmix -n {np} singularity exec img.sif",
        ),
        (
            "mpirun apptainer run x.sif",
            "apptainer after mpirun",
            "mpirun -n {np} apptainer run x.sif",
        ),
        (
            "mpirun --hostfile h apptainer run x.sif",
            "apptainer after mpirun",
            "mpirun --hostfile h -n {np} apptainer run x.sif",
        ),
        # --oversubscribe takes no value: valgrind is no value of it.
        (
            "mpirun --oversubscribe valgrind",
            "valgrind after mpirun",
            "mpirun --oversubscribe -n {np} valgrind",
        ),
        (
            "mpiexec -- singularity exec i.sif",
            "singularity after mpiexec",
            "mpiexec -n {np} -- singularity exec i.sif",
        ),
        (
            "srun singularity exec img.sif {program} -v",
            "singularity after srun",
            "srun -n {np} singularity exec img.sif {program} -v",
        ),
    ],
)
def test_wrapper_without_np(template, wrapper, fixed):
    assert refusal(template) == (
        f'--launcher "{template}" runs {wrapper} and has no {{np}}: mpilens cannot tell where '
        f'-n 4 goes; write {{np}} where the count goes, as in "{fixed}" (and {{program}} where '
        "the program goes, if not last)"
    )


# --- a rank count of the template's own ----------------------------------------------------------


@pytest.mark.parametrize(
    "template, flavour, named, fixed",
    [
        ("mpirun -np 2", Flavour.OPENMPI, "-np 2", "mpirun -np {np}"),
        ("mpirun -n 2 --bind-to core", Flavour.OPENMPI, "-n 2", "mpirun -n {np} --bind-to core"),
        ("mpirun --np=4", Flavour.OPENMPI, "--np=4", "mpirun --np={np}"),
        ("mpirun.openmpi -c 2", Flavour.MPICH, "-c 2", "mpirun.openmpi -c {np}"),
        ("mpiexec -np 2 -f hosts", Flavour.MPICH, "-np 2", "mpiexec -np {np} -f hosts"),
        ("mpiexec.mpich --n 2", Flavour.OPENMPI, "--n 2", "mpiexec.mpich --n {np}"),
        ("srun -n 2 --mpi=pmix", Flavour.OPENMPI, "-n 2", "srun -n {np} --mpi=pmix"),
        ("srun --ntasks 2", Flavour.OPENMPI, "--ntasks 2", "srun --ntasks {np}"),
        ("srun --ntasks=2", Flavour.MPICH, "--ntasks=2", "srun --ntasks={np}"),
        ("srun -n2", Flavour.MPICH, "-n2", "srun -n{np}"),
        ("srun -n {nodes}", Flavour.MPICH, "-n {nodes}", "srun -n {np}"),
        ("nice -n 5 mpirun -np 2", Flavour.OPENMPI, "-np 2", "nice -n 5 mpirun -np {np}"),
        (
            "mpirun --mca plm_rsh_agent /x/agent --host n0:2,n1:2 -np 4",
            Flavour.OPENMPI,
            "-np 4",
            "mpirun --mca plm_rsh_agent /x/agent --host n0:2,n1:2 -np {np}",
        ),
        # Also with {np} elsewhere, and before a wrapper.
        (
            "srun -n 2 singularity exec img.sif",
            Flavour.OPENMPI,
            "-n 2",
            "srun -n {np} singularity exec img.sif",
        ),
        ("mpirun -np", Flavour.OPENMPI, "-np", "mpirun -np {np}"),
    ],
)
def test_rank_count_of_its_own(template, flavour, named, fixed):
    assert refusal(template, flavour=flavour) == (
        f"--launcher names a rank count ({named}) and --np asks for 4: write {{np}} where the "
        f'count goes, as in "{fixed}"'
    )


@pytest.mark.parametrize(
    "template",
    [
        "srun -N 2 -n {np}",  # srun's -N is the node count
        "mpiexec -n {np} -c 2",  # hydra has no -c rank count
        "aprun -n {np} -N 1",  # a launcher mpilens does not know: its options are not read
    ],
)
def test_not_a_rank_count(template):
    words = template.split()
    assert command(template, flavour=Flavour.MPICH) == [
        *(word.replace("{np}", "4") for word in words),
        APP,
        *ARGS,
    ]


# --- placeholders and braces ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "template, unknown, hint",
    [
        ("srun -n {ranks}", "{ranks}", ', as in "srun -n {np}"'),
        ("srun -n {n}", "{n}", ', as in "srun -n {np}"'),
        ("srun -N {nnodes} -n {np}", "{nnodes}", ', as in "srun -N {nodes} -n {np}"'),
        ("srun -n {NP}", "{NP}", ', as in "srun -n {np}"'),
        ("srun -n {np} {prog}", "{prog}", ', as in "srun -n {np} {program}"'),
        ("srun -n {np} --comment={x}", "{x}", ""),
        ("srun -n {np} {}", "{}", ""),
    ],
)
def test_unknown_placeholder(template, unknown, hint):
    assert refusal(template) == (
        f'--launcher "{template}" has an unknown placeholder {unknown}: the known ones are {{np}} '
        "(the rank count), {nodes} (the node count) and {program} (where the program goes)"
        f'{hint}; write "{{{{" and "}}}}" for literal braces'
    )


def test_literal_braces():
    assert command("srun -n {np} --comment={{run}} {{np}}") == [
        "srun",
        "-n",
        "4",
        "--comment={run}",
        "{np}",
        APP,
        *ARGS,
    ]


@pytest.mark.parametrize("brace", ["{", "}"])
def test_lone_brace(brace):
    assert refusal(f"srun -n {{np}} --comment=a{brace}b") == (
        f'--launcher "srun -n {{np}} --comment=a{brace}b" has a lone "{brace}": write '
        f'"{brace * 2}" for a literal brace; the placeholders are {{np}}, {{nodes}} and {{program}}'
    )


def test_shown_template_stays_on_one_line():
    message = refusal("srun 'a\nb' singularity exec img.sif")
    assert "srun -n {np} 'a\\nb' singularity exec img.sif" in message


# --- through the command line --------------------------------------------------------------------


@pytest.fixture
def fake_bin(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("mpilens-sanity", "mpilens-coll"):
        write_script(bin_dir / name, f'#!/bin/sh\nexec {sys.executable} {FAKE_PROGRAM} "$@"\n')
    log = tmp_path / "argv.log"
    return {
        "bin": str(bin_dir),
        "log": log,
        "env": {"FAKE_SOURCE": str(SANITY_FIXTURE), "FAKE_LOG": str(log)},
    }


def test_cli_nodes_and_program(fake_bin, tmp_path):
    out = tmp_path / "run"
    done = run_cli(
        "sanity",
        "--mpi",
        "openmpi",
        "--bin-dir",
        fake_bin["bin"],
        "--np",
        "3",
        "--nodes",
        "2",
        "--launcher",
        "env FAKE_NP={np} {program} --nodes-seen {nodes}",
        "--output",
        str(out),
        env=fake_bin["env"],
    )
    assert done.returncode == 0, done.stderr
    # The program's arguments, then the words after {program}.
    args = ["--preset", "default", "--output", str(out / "sanity.jsonl"), "--progress", "off"]
    logged = [json.loads(line) for line in fake_bin["log"].read_text().splitlines()]
    assert logged == [[*args, "--nodes-seen", "2"]]
    program = f"{fake_bin['bin']}/mpilens-sanity"
    assert (
        f"mpilens: running env FAKE_NP=3 {program} {' '.join(args)} --nodes-seen 2"
        in done.stderr.splitlines()
    )


@pytest.mark.parametrize(
    "family, np, template, message",
    [
        (
            "sanity",
            "4",
            "mpirun -np 2",
            "--launcher names a rank count (-np 2) and --np asks for 4: write {np} where the count "
            'goes, as in "mpirun -np {np}"',
        ),
        (
            "coll",
            "2,4",
            "mpirun -np 2",
            "--launcher names a rank count (-np 2) and --np asks for 2: write {np} where the count "
            'goes, as in "mpirun -np {np}"',
        ),
        (
            "sanity",
            "4",
            "srun -N {nodes} -n {np}",
            '--launcher "srun -N {nodes} -n {np}" uses {nodes} but the node count is not known: '
            "give it with --nodes N",
        ),
    ],
)
def test_cli_refuses_before_launching(fake_bin, tmp_path, family, np, template, message):
    out = tmp_path / "run"
    done = run_cli(
        family,
        "--mpi",
        "openmpi",
        "--bin-dir",
        fake_bin["bin"],
        "--np",
        np,
        "--launcher",
        template,
        "--output",
        str(out),
        env=fake_bin["env"],
    )
    assert one_line_error(done) == f"mpilens: error: {message}"
    assert not fake_bin["log"].exists() and not out.exists()


@pytest.mark.parametrize("value", ["0", "two"])
def test_cli_bad_node_count(value):
    line = one_line_error(run_cli("sanity", "--nodes", value))
    assert line == (
        f'mpilens: error: argument --nodes: invalid number of nodes "{value}": expected an '
        'integer of at least 1 (see "mpilens sanity --help")'
    )


def test_env_launcher_passes_nodes():
    args = argparse.Namespace(np=4, launcher="srun -N {nodes} -n {np}", nodes=2)
    launcher = cli_common.EnvLauncher(args, Flavour.OPENMPI)
    assert launcher.command(APP, ["x"], {"A": "1"}) == [
        "srun",
        "--export=ALL,A=1",
        "-N",
        "2",
        "-n",
        "4",
        APP,
        "x",
    ]
