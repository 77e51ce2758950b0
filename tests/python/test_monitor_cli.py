"""`mpilens monitor` and `mpilens matrix`, run as a user runs them, and the monitor family's place
among the others."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import (MONITOR_FIXTURE, ROOTFLUSH_FIXTURE, fake_bin, logged_calls, read_records,
                      run_cli, write_records)
from mpilens import families, matrices, results
from mpilens.analysis import monitor

# Stands in for the user's MPI program under the monitoring library: rank 0 writes what the
# library would, PREFIX.jsonl, from FAKE_SOURCE; every rank logs its arguments and environment.
FAKE_APP = """#!{python}
import json, os, sys
rank = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0"))
with open(os.environ.get("FAKE_LOG", {log!r}), "a") as log:
    log.write(json.dumps({{"rank": rank, "argv": sys.argv[1:], "env": {{
        name: os.environ.get(name) for name in
        ("LD_PRELOAD", "MPILENS_MONITOR", "MPILENS_MONITOR_BACKEND", "FAKE_NP")}}}}) + "\\n")
source = os.environ.get("FAKE_SOURCE", {source!r})
if rank == "0" and source:
    with open(os.environ["MPILENS_MONITOR"] + ".jsonl", "w") as out:
        out.write(open(source).read())
"""


def one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert lines[-1].startswith("mpilens: error: "), done.stderr
    return lines[-1]


def loadable_library() -> Path:
    """A shared library already in this process (the C library), so preloading it again into
    the test's processes changes nothing."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        path = line.split()[-1]
        if "/libc.so" in path or "/libc-" in path:
            return Path(path)
    pytest.skip("no C library found in /proc/self/maps")


@pytest.fixture
def app(tmp_path) -> dict:
    """A fake program, a library directory, and the options and environment to run them."""
    log = tmp_path / "app.log"
    program = tmp_path / "bin" / "ring"
    program.parent.mkdir()
    program.write_text(FAKE_APP.format(python=sys.executable, log=str(log),
                                       source=str(MONITOR_FIXTURE)))
    program.chmod(0o755)
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    (lib_dir / "libmpilens-monitor.so").symlink_to(loadable_library())
    return {"program": str(program), "log": log, "lib": lib_dir / "libmpilens-monitor.so",
            "options": ["--mpi", "openmpi", "--lib-dir", str(lib_dir)]}


# --- the family among the others -----------------------------------------------------------------

def test_registered_outside_the_suite():
    family = families.get("monitor")
    assert (family.program, family.in_suite, family.presets) == ("libmpilens-monitor", False, {})
    assert family.render.__module__ == "mpilens.plots.monitor"
    assert [f.name for f in families.suite_families()] == ["sanity", "overlap", "coll"]


def test_help_lists_monitor_and_matrix():
    done = run_cli("--help")
    assert "    monitor   run PROGRAM under the monitoring library" in done.stdout
    assert "    matrix    render and export communication matrices" in done.stdout
    assert "    suite     run every family (sanity, overlap, coll) into one" in done.stdout
    done = run_cli("monitor", "--help")
    assert done.stdout.startswith("usage: mpilens monitor [options] -- PROGRAM [ARGS...]\n")
    assert "--lib-dir DIR" in done.stdout and "--preset" not in done.stdout


def test_suite_skips_monitor(tmp_path):
    log = tmp_path / "argv.log"
    env = fake_bin(tmp_path / "bin", MONITOR_FIXTURE, log)
    out = tmp_path / "suite"
    done = run_cli("suite", "--mpi", "openmpi", "--bin-dir", str(tmp_path / "bin"), "--launcher",
                   "env FAKE_NP={np}", "--output", str(out), env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in out.glob("*.jsonl")) == [
        "coll-np2.jsonl", "overlap.jsonl", "sanity.jsonl"]
    assert len(log.read_text().splitlines()) == 3


# --- mpilens monitor -----------------------------------------------------------------------------

def test_monitor_end_to_end_through_an_unknown_launcher(app, tmp_path):
    out = tmp_path / "run"
    done = run_cli("monitor", "--np", "3", *app["options"], "--launcher", "env FAKE_NP={np}",
                   "--output", str(out), "--", app["program"], "--np", "5", "--", "x",
                   env={"MPILENS_MONITOR_BACKEND": "pmpi"})
    assert done.returncode == 0, done.stderr
    prefix = out.absolute() / "monitor"
    expected_env = {"LD_PRELOAD": str(app["lib"]), "MPILENS_MONITOR": str(prefix),
                    "MPILENS_MONITOR_BACKEND": "pmpi", "FAKE_NP": "3"}
    assert logged_calls(app) == [{"rank": "0", "argv": ["--np", "5", "--", "x"], "env": expected_env}]
    # An unknown launcher gets the variables in its own environment, shown before its command.
    assert (f"mpilens: running MPILENS_MONITOR_BACKEND=pmpi LD_PRELOAD={app['lib']} "
            f"MPILENS_MONITOR={prefix} env FAKE_NP=3 {app['program']} --np 5 -- x") \
        in done.stderr
    lines = done.stdout.splitlines()
    assert lines == [*monitor.diagnose(results.load(MONITOR_FIXTURE)),
                     f"results: {out / 'monitor.jsonl'}", f"report: {out / 'report.html'}"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>Communication matrices</h2>" in page
    assert (out / "plots" / "monitor-map-p2p.png").is_file()


@pytest.mark.parametrize("flavour,launcher", [("openmpi", "mpirun.openmpi"),
                                              ("mpich", "mpiexec.mpich")])
def test_monitor_through_a_real_launcher(app, tmp_path, flavour, launcher):
    if shutil.which(launcher) is None:
        pytest.skip(f"{launcher} is not installed")
    out = tmp_path / "run"
    done = run_cli("monitor", "--np", "2", "--mpi", flavour, "--lib-dir",
                   str(app["lib"].parent), "--output", str(out), "--", app["program"], "a b",
                   env={"MPILENS_MONITOR_BACKEND": "pmpi"})
    assert done.returncode == 0, done.stderr
    made = logged_calls(app)
    assert sorted(call["rank"] for call in made) == ["0", "1"]
    # Every rank got the variables through the launcher's options, the user's setting too.
    assert all(call["env"] == {"LD_PRELOAD": str(app["lib"]),
                               "MPILENS_MONITOR": str(out.absolute() / "monitor"),
                               "MPILENS_MONITOR_BACKEND": "pmpi", "FAKE_NP": None}
               and call["argv"] == ["a b"] for call in made)
    option = "-x" if flavour == "openmpi" else "-genv"
    assert f"mpilens: running {launcher} {option} " in done.stderr
    assert done.stdout.splitlines()[-1] == f"report: {out / 'report.html'}"


def test_default_output_directory(app, tmp_path):
    done = run_cli("monitor", *app["options"], "--launcher", "env FAKE_NP={np}", app["program"],
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (made,) = (tmp_path / "results").iterdir()
    assert made.name.endswith("-openmpi") and (made / "monitor.jsonl").is_file()
    assert done.stdout.splitlines()[-2] == f"results: results/{made.name}/monitor.jsonl"


def test_program_is_checked_before_launching(app, tmp_path):
    base = ["monitor", *app["options"], "--launcher", "env FAKE_NP={np}", "--output",
            str(tmp_path / "out")]
    assert one_line_error(run_cli(*base)) == (
        'mpilens: error: no program to monitor: give it after "--", as in "mpilens monitor --np '
        '4 -- ./app ARGS"')
    assert one_line_error(run_cli(*base, "--")) == one_line_error(run_cli(*base))
    assert one_line_error(run_cli(*base, "--", "./no-such-app", "-v")) == (
        'mpilens: error: program "./no-such-app" not found: give the path of an executable, such '
        "as ./app, or a command on PATH")
    assert logged_calls(app) == [] and not (tmp_path / "out").exists()


def test_existing_results_are_refused(app, tmp_path):
    out = tmp_path / "run"
    write_records(out / "monitor.jsonl", read_records(MONITOR_FIXTURE))
    done = run_cli("monitor", *app["options"], "--launcher", "env FAKE_NP={np}", "--output",
                   str(out), "--", app["program"])
    assert one_line_error(done) == (f'mpilens: error: "{out / "monitor.jsonl"}" already exists; '
                                    "choose another --output")
    assert logged_calls(app) == []


def test_missing_library_is_refused(app, tmp_path):
    done = run_cli("monitor", "--mpi", "openmpi", "--lib-dir", str(tmp_path), "--", app["program"])
    assert one_line_error(done) == (
        f'mpilens: error: library "libmpilens-monitor.so" not found (looked in {tmp_path} (from '
        f'--lib-dir "{tmp_path}")); run "make build", or give --lib-dir DIR')


def test_program_that_writes_nothing(app, tmp_path):
    out = tmp_path / "run"
    done = run_cli("monitor", *app["options"], "--launcher", "env FAKE_NP={np}", "--output",
                   str(out), "--", app["program"], env={"FAKE_SOURCE": ""})
    assert one_line_error(done) == (
        f'mpilens: error: the program ended without writing "{out / "monitor.jsonl"}": the '
        "monitoring library never started in its rank 0 (the program does not call MPI_Init, is "
        "linked statically, or uses another MPI than Open MPI; a --launcher must pass LD_PRELOAD "
        "and MPILENS_MONITOR on to the ranks)")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    done = run_cli("monitor", *app["options"], "--launcher", "env FAKE_NP={np}", "--output",
                   str(tmp_path / "run2"), "--", app["program"], env={"FAKE_SOURCE": str(empty)})
    assert one_line_error(done).startswith(
        f'mpilens: error: "{tmp_path / "run2" / "monitor.jsonl"}" is empty: monitoring started '
        "in MPI_Init, but the results were not written at MPI_Finalize")


def test_failing_program(app, tmp_path):
    failing = tmp_path / "bin" / "fail"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    done = run_cli("monitor", *app["options"], "--launcher", "env FAKE_NP={np}", "--output",
                   str(tmp_path / "run"), "--", str(failing))
    assert one_line_error(done) == f'mpilens: error: "env FAKE_NP=2 {failing}" exited with status 3'


# --- mpilens matrix ------------------------------------------------------------------------------

@pytest.fixture
def inputs(tmp_path) -> Path:
    """The monitor fixture and the rootflush fixture, copied where reports may be written."""
    write_records(tmp_path / "monitor.jsonl", read_records(MONITOR_FIXTURE))
    for name in ("ring_counts.0.prof", "ring_sizes.0.prof"):
        shutil.copy(ROOTFLUSH_FIXTURE / name, tmp_path / name)
    return tmp_path


def test_matrix_of_a_results_file(inputs):
    done = run_cli("matrix", str(inputs / "monitor.jsonl"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [*monitor.diagnose(results.load(MONITOR_FIXTURE)),
                                        f"report: {inputs / 'report.html'}"]
    assert (inputs / "plots" / "monitor-map-coll.png").is_file()


def test_matrix_of_one_kind_with_exports(inputs, tmp_path):
    done = run_cli("matrix", str(inputs / "monitor"), "--kind", "p2p", "--export",
                   str(tmp_path / "ex"), "--format", "csv, mat", "--output", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("point-to-point: 10 KiB in 10 messages")
    assert lines[2:] == [f"exported: {tmp_path / 'ex' / 'p2p.csv'}",
                         f"exported: {tmp_path / 'ex' / 'p2p_counts.mat'}",
                         f"exported: {tmp_path / 'ex' / 'p2p_bytes.mat'}",
                         f"report: {tmp_path / 'r' / 'report.html'}"]
    assert (tmp_path / "ex" / "p2p_counts.mat").read_text() == \
        (ROOTFLUSH_FIXTURE / "ring_counts.0.prof").read_text()
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert "<h3>point-to-point</h3>" in page and "collectives" not in page
    assert "(interrupted)" not in page


def test_matrix_of_rootflush_files(inputs):
    done = run_cli("matrix", str(inputs / "ring"), "--export", str(inputs / "ex"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "flushed matrices: 10 KiB in 10 messages between 4 of 12 pairs (33%); rank 0 sends most "
        "(4 KiB); busiest pair 0→1 (4 KiB)")
    assert sorted(path.name for path in (inputs / "ex").iterdir()) == [
        "flushed.csv", "flushed_bytes.mat", "flushed_bytes.mtx", "flushed_counts.mat",
        "flushed_counts.mtx"]
    page = (inputs / "report.html").read_text(encoding="utf-8")
    assert "read from ring_counts.0.prof, ring_sizes.0.prof (MPI_M_rootflush)" in page


def test_matrix_of_many_ranks_exports_sparse_formats_unless_asked(tmp_path):
    ranks = matrices.DENSE_DEFAULT_RANKS + 1
    records = read_records(MONITOR_FIXTURE)[:2]
    records[0].update(ranks=ranks, hosts=[], binding=[], points_total=1)
    for what, value in (("counts", 3), ("bytes", 300)):
        records[1]["stats"][what] = {"format": "coo", "shape": [ranks, ranks],
                                     "entries": [[0, ranks - 1, value], [ranks - 1, 0, value]]}
    source = write_records(tmp_path / "monitor.jsonl", records)
    done = run_cli("matrix", str(source), "--export", str(tmp_path / "ex"))
    assert done.returncode == 0, done.stderr
    assert done.stderr == (f"mpilens: note: no dense .mat export above "
                           f"{matrices.DENSE_DEFAULT_RANKS} ranks unless asked (--format mat): "
                           "each file holds P x P values\n")
    assert sorted(path.name for path in (tmp_path / "ex").iterdir()) == [
        "p2p.csv", "p2p_bytes.mtx", "p2p_counts.mtx"]
    assert (tmp_path / "ex" / "p2p_bytes.mtx").read_text().splitlines()[2:] == [
        f"{ranks} {ranks} 2", f"1 {ranks} 300", f"{ranks} 1 300"]


@pytest.mark.parametrize("args,message", [
    (["{d}/nothing"], 'cannot tell what "{d}/nothing" is: expected a monitor results file'),
    (["{d}/ring", "--kind", "coll"], '"{d}/ring" has no coll matrices (it holds: flushed)'),
    (["{d}/monitor.jsonl", "--format", "csv"], "--format needs --export DIR"),
    (["{d}/monitor.jsonl", "--export", "{d}/x", "--format", "xls"],
     'argument --format: invalid format list "xls": expected names separated by commas among '
     "csv, mat, mtx"),
    (["{d}/monitor.jsonl", "--kind", "rma"], "argument --kind: invalid choice: 'rma'"),
])
def test_matrix_errors(inputs, args, message):
    line = one_line_error(run_cli("matrix", *[arg.format(d=inputs) for arg in args]))
    assert line.startswith(f"mpilens: error: {message.format(d=inputs)}")
    assert not (inputs / "report.html").exists()


def test_matrix_refuses_a_corrupt_point(inputs):
    records = read_records(MONITOR_FIXTURE)
    records[1]["stats"]["counts"]["entries"].append([0, 1, 7])
    write_records(inputs / "monitor.jsonl", records)
    assert one_line_error(run_cli("matrix", str(inputs))) == (
        f'mpilens: error: "{inputs / "monitor.jsonl"}", point "matrix/kind=p2p": "counts" has two '
        "entries for sender 0 and receiver 1")


def test_compare_knows_the_family(inputs, tmp_path):
    other = tmp_path / "b"
    records = read_records(MONITOR_FIXTURE)
    records[1]["stats"]["bytes"]["entries"][0] = [0, 1, 8192]
    write_records(other / "monitor.jsonl", records)
    done = run_cli("compare", str(inputs / "monitor.jsonl"), str(other))
    assert done.returncode == 0, done.stderr
    page = Path(done.stdout.strip()).read_text(encoding="utf-8")
    assert "monitor: point-to-point, biggest changes from A to B: 0→1 4 KiB → 8 KiB" in page
    assert os.path.basename(done.stdout.strip()) == "compare-b.html"
