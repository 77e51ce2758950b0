"""What `mpilens monitor` needs from launch.py: the library's place, and variables for every rank
on each launcher's command line (or in its environment)."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from conftest import REAL_LAUNCHERS, need_launcher, write_script
from mpilens import launch
from mpilens.errors import MpilensError
from mpilens.launch import Flavour

APP = "/home/u/app"
ENV = {"LD_PRELOAD": "/opt/mpilens/lib/libmpilens-monitor.so",
       "MPILENS_MONITOR": "/home/u/results/monitor"}


# --- command lines -------------------------------------------------------------------------------

def test_open_mpi_gets_dash_x(on_path):
    on_path("mpirun.openmpi")
    assert launch.build_command(Flavour.OPENMPI, 2, APP, ["-v"], cpus=2, euid=0, env=ENV) == [
        "mpirun.openmpi", "-x", f"LD_PRELOAD={ENV['LD_PRELOAD']}",
        "-x", f"MPILENS_MONITOR={ENV['MPILENS_MONITOR']}",
        "-n", "2", "--allow-run-as-root", APP, "-v"]
    assert launch.process_env("mpirun.openmpi", Flavour.OPENMPI, ENV) == {}


def test_hydra_gets_genv(on_path):
    on_path("mpiexec.mpich")
    assert launch.build_command(Flavour.MPICH, 4, APP, [], env=ENV) == [
        "mpiexec.mpich", "-genv", "LD_PRELOAD", ENV["LD_PRELOAD"],
        "-genv", "MPILENS_MONITOR", ENV["MPILENS_MONITOR"], "-n", "4", APP]
    assert launch.process_env("mpiexec.mpich", Flavour.MPICH, ENV) == {}


@pytest.mark.parametrize("flavour", list(Flavour))
def test_srun_gets_export(on_path, monkeypatch, flavour):
    on_path("srun", "mpirun.openmpi", "mpiexec.mpich")
    monkeypatch.setenv("SLURM_JOB_ID", "12345")
    assert launch.build_command(flavour, 8, APP, ["x"], env=ENV) == [
        "srun", f"--export=ALL,LD_PRELOAD={ENV['LD_PRELOAD']},"
                f"MPILENS_MONITOR={ENV['MPILENS_MONITOR']}", "-n", "8", APP, "x"]
    assert launch.process_env("srun", flavour, ENV) == {}


def test_srun_passes_a_comma_through_its_own_environment(on_path):
    """srun's --export cannot carry a comma: such a value goes into srun's own environment, which
    --export=ALL passes on (a CPU list of libmpilens-progress's placement); a preload cannot, as
    srun would load it itself."""
    on_path()
    env = {"MPILENS_PROGRESS": "yield", "MPILENS_PROGRESS_CPUS": "1,3"}
    command = launch.build_command(Flavour.OPENMPI, 2, APP, [], launcher="srun -n {np}", env=env)
    assert command == ["srun", "--export=ALL,MPILENS_PROGRESS=yield", "-n", "2", APP]
    assert launch.process_env("srun", Flavour.OPENMPI, env) == {"MPILENS_PROGRESS_CPUS": "1,3"}
    with pytest.raises(MpilensError) as caught:
        launch.build_command(Flavour.OPENMPI, 2, APP, [], launcher="srun -n {np}",
                             env={"LD_PRELOAD": "/scratch/a,b/libmpilens-monitor.so"})
    assert str(caught.value) == (
        'cannot pass LD_PRELOAD="/scratch/a,b/libmpilens-monitor.so" to the ranks through srun: '
        "its --export option cannot carry a comma, and srun would load it itself; choose paths "
        "without one")


@pytest.mark.parametrize("launcher,flavour,options", [
    ("mpirun --hostfile h -np {np}", Flavour.OPENMPI, ["-x", "A=1"]),
    ("mpirun --hostfile h -np {np}", Flavour.MPICH, ["-genv", "A", "1"]),
    ("/opt/ompi/bin/mpiexec --hostfile h -np {np}", Flavour.OPENMPI, ["-x", "A=1"]),
    ("mpiexec.hydra --hostfile h -np {np}", Flavour.OPENMPI, ["-genv", "A", "1"]),
    ("prterun --hostfile h -np {np}", Flavour.MPICH, ["-x", "A=1"]),
    ("srun --hostfile h -np {np}", Flavour.MPICH, ["--export=ALL,A=1"]),
])
def test_known_user_launchers_get_options_after_their_command(on_path, launcher, flavour,
                                                              options):
    on_path()
    command = launch.build_command(flavour, 3, APP, [], launcher=launcher, env={"A": "1"})
    assert command == [launcher.split()[0], *options, "--hostfile", "h", "-np", "3", APP]
    assert launch.process_env(command[0], flavour, {"A": "1"}) == {}


def test_options_go_before_a_wrapper(on_path):
    on_path()
    command = launch.build_command(Flavour.OPENMPI, 2, APP, [], env={"A": "1"},
                                   launcher="srun -n {np} singularity exec image.sif")
    assert command == ["srun", "--export=ALL,A=1", "-n", "2", "singularity", "exec", "image.sif",
                       APP]


def test_unknown_launcher_gets_the_variables_in_its_environment(on_path):
    on_path()
    command = launch.build_command(Flavour.OPENMPI, 2, APP, [], launcher="aprun -n {np}",
                                   env=ENV)
    assert command == ["aprun", "-n", "2", APP]
    assert launch.process_env("aprun", Flavour.OPENMPI, ENV) == ENV
    assert launch.process_env("aprun", Flavour.OPENMPI, None) == {}


def test_no_env_changes_nothing(on_path):
    on_path("mpirun.openmpi")
    assert launch.build_command(Flavour.OPENMPI, 2, APP, [], cpus=2, euid=1000, env={}) == \
        launch.build_command(Flavour.OPENMPI, 2, APP, [], cpus=2, euid=1000) == \
        ["mpirun.openmpi", "-n", "2", APP]


# --- running with variables ----------------------------------------------------------------------

SHOW_ENV = """
import os, sys
with open(sys.argv[1], "w") as out:
    out.write(os.environ.get("MPILENS_TEST_A", "-") + " " + str("PATH" in os.environ))
"""


def test_run_sets_variables_over_this_environment(tmp_path):
    shown = tmp_path / "env.txt"
    launch.run([sys.executable, "-c", SHOW_ENV, str(shown)], tmp_path / "x.jsonl",
               poll_interval=0.05, env={"MPILENS_TEST_A": "yes"})
    assert shown.read_text() == "yes True"
    launch.run([sys.executable, "-c", SHOW_ENV, str(shown)], tmp_path / "x.jsonl",
               poll_interval=0.05)
    assert shown.read_text() == "- True"


RANK_ENV = """#!{python}
import os
rank = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "?"))
with open(os.path.join({directory!r}, "rank" + rank), "w") as out:
    out.write(os.environ.get("MPILENS_TEST_A", "-") + "|" + os.environ.get("MPILENS_TEST_B", "-"))
"""


@pytest.mark.parametrize("flavour,launcher", REAL_LAUNCHERS)
def test_real_launcher_passes_variables_to_every_rank(tmp_path, monkeypatch, flavour, launcher):
    need_launcher(launcher, monkeypatch)
    program = write_script(tmp_path / "show-env", RANK_ENV.format(python=sys.executable, directory=str(tmp_path)))
    env = {"MPILENS_TEST_A": "a b", "MPILENS_TEST_B": "/x=y"}
    command = launch.build_command(flavour, 2, program, [], cpus=2, env=env)
    launch.run(command, tmp_path / "none.jsonl", poll_interval=0.05)
    assert sorted(p.name for p in tmp_path.glob("rank*")) == ["rank0", "rank1"]
    assert {p.read_text() for p in tmp_path.glob("rank*")} == {"a b|/x=y"}


# --- finding the library -------------------------------------------------------------------------

LIB = "libmpilens-monitor.so"


def _library(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF")
    return path


def test_library_in_lib_dir_is_absolute_and_the_only_place(checkout, tmp_path, monkeypatch):
    _library(checkout / "build" / "openmpi" / "lib" / LIB)
    found = _library(tmp_path / "mine" / LIB)
    monkeypatch.chdir(tmp_path)
    assert launch.find_library("mpilens-monitor", Flavour.OPENMPI, "mine") == found
    with pytest.raises(MpilensError) as caught:
        launch.find_library("mpilens-monitor", Flavour.OPENMPI, "elsewhere")
    assert str(caught.value) == (f'library "{LIB}" not found (looked in elsewhere (from '
                                 '--lib-dir "elsewhere")); run "make build", or give --lib-dir DIR')


def test_library_from_environment(checkout, tmp_path, monkeypatch):
    found = _library(tmp_path / "env-lib" / LIB)
    monkeypatch.setenv("MPILENS_LIB_DIR", str(found.parent))
    assert launch.find_library("mpilens-monitor", Flavour.MPICH) == found


@pytest.mark.parametrize("libdir", ["lib", "lib64"])
def test_library_beside_the_programs_of_bin_dir(checkout, tmp_path, monkeypatch, libdir):
    _library(checkout / "build" / "openmpi" / "lib" / LIB)
    found = _library(tmp_path / "prefix" / libdir / LIB)
    assert launch.find_library("mpilens-monitor", Flavour.OPENMPI,
                               bin_dir=tmp_path / "prefix" / "bin") == found
    monkeypatch.setenv("MPILENS_BIN_DIR", str(tmp_path / "prefix" / "bin"))
    assert launch.find_library("mpilens-monitor", Flavour.OPENMPI) == found
    with pytest.raises(MpilensError, match=r'\(looked in .*other/lib and .*other/lib64 \(from '
                                           r'--bin-dir ".*other/bin"\)\)'):
        launch.find_library("mpilens-monitor", Flavour.OPENMPI, bin_dir=tmp_path / "other" / "bin")


def test_library_in_dev_tree_then_beside_path(checkout, tmp_path, monkeypatch):
    dev = _library(checkout / "build" / "mpich" / "lib" / LIB)
    installed = _library(tmp_path / "prefix" / "lib64" / LIB)
    monkeypatch.setenv("PATH", f"{tmp_path / 'empty' / 'bin'}:{tmp_path / 'prefix' / 'bin'}")
    assert launch.find_library("mpilens-monitor", Flavour.MPICH) == dev
    assert launch.find_library("mpilens-monitor", Flavour.OPENMPI) == installed


def test_library_missing(checkout, monkeypatch):
    with pytest.raises(MpilensError) as caught:
        launch.find_library("mpilens-monitor", Flavour.OPENMPI)
    assert str(caught.value) == (
        f'library "{LIB}" not found (looked in {checkout / "build" / "openmpi" / "lib"} and '
        "<prefix>/lib beside each <prefix>/bin on PATH); run \"make build\", or give --lib-dir DIR")
    monkeypatch.setattr(launch, "repo_root", lambda: None)
    with pytest.raises(MpilensError, match=r"\(looked in <prefix>/lib beside each <prefix>/bin "
                                           r"on PATH\)"):
        launch.find_library("mpilens-monitor", Flavour.OPENMPI)


def test_is_command(tmp_path):
    program = tmp_path / "app"
    program.write_text("#!/bin/sh\n")
    assert not launch.is_command(str(program))
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    assert launch.is_command(str(program))
    assert launch.is_command("sh") and not launch.is_command("no-such-command-here")
