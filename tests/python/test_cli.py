"""The mpilens command, run as a user runs it: `python -m mpilens ...`."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, SANITY_FIXTURE, read_records, run_cli, write_records
from mpilens import cli, cli_common, families, launch

FAKE = Path(__file__).resolve().parent / "fake_program.py"
LAUNCHER = "env FAKE_NP={np}"


def _one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("mpilens: error: ")
    return lines[0]


@pytest.fixture
def fake(tmp_path):
    """A bin dir whose mpilens programs replay the sanity fixture, and the environment for them."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for family in families.FAMILIES.values():
        program = bin_dir / family.program
        program.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE} \"$@\"\n")
        program.chmod(0o755)
    log = tmp_path / "argv.log"
    env = {"FAKE_SOURCE": str(SANITY_FIXTURE), "FAKE_LOG": str(log)}
    return {"bin": str(bin_dir), "log": log, "env": env}


def _launch_options(fake: dict, *extra: str) -> list:
    return ["--mpi", "openmpi", "--bin-dir", fake["bin"], "--launcher", LAUNCHER, *extra]


def _calls(fake: dict) -> list:
    return [json.loads(line) for line in fake["log"].read_text().splitlines()] \
        if fake["log"].exists() else []


def test_help_lists_commands_and_families():
    done = run_cli("--help")
    assert done.returncode == 0
    for name in families.FAMILIES:
        # argparse puts a name longer than its column (piggyback) on a line of its own
        assert f"    {name} " in done.stdout or f"    {name}\n" in done.stdout
    for command in ("suite", "report", "compare", "export", "version"):
        assert f"    {command} " in done.stdout
    assert "sanity    check that this machine and MPI can be measured" in done.stdout


def test_unknown_subcommand():
    line = _one_line_error(run_cli("teleport"))
    assert line.startswith("mpilens: error: argument COMMAND: invalid choice: 'teleport'")


def test_unknown_option():
    line = _one_line_error(run_cli("sanity", "--fast"))
    assert line == 'mpilens: error: unrecognized arguments: --fast (see "mpilens --help")'


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_bad_rank_count(value):
    assert _one_line_error(run_cli("sanity", f"--np={value}")) == (
        f'mpilens: error: argument --np: invalid number of ranks "{value}": expected an integer '
        'of at least 1 (see "mpilens sanity --help")')


def test_bad_preset():
    assert _one_line_error(run_cli("suite", "--preset", "fast")) == (
        "mpilens: error: argument --preset: invalid choice: 'fast' (choose from 'quick', "
        "'default', 'full') (see \"mpilens suite --help\")")


def test_version():
    done = run_cli("version")
    assert done.returncode == 0
    assert done.stdout == f"mpilens {(ROOT / 'VERSION').read_text().strip()}\n"


@pytest.mark.parametrize("output,reason", [
    ("/proc/mpilens-test/out", "No such file or directory"),
    ("{tmp}/file/out", "Not a directory"),
    ("{tmp}/file", "it is not a directory")])
def test_unwritable_output_launches_nothing(fake, tmp_path, output, reason):
    (tmp_path / "file").write_text("")
    output = output.format(tmp=tmp_path)
    done = run_cli("sanity", *_launch_options(fake, "--output", output), env=fake["env"])
    assert _one_line_error(done) == (
        f'mpilens: error: cannot write to output directory "{output}": {reason}')
    assert _calls(fake) == []


def test_missing_launcher_launches_nothing(fake, tmp_path):
    done = run_cli("sanity", "--mpi", "mpich", "--bin-dir", fake["bin"], "--launcher",
                   "no-such-mpiexec -n {np}", "--output", str(tmp_path / "out"), env=fake["env"])
    assert _one_line_error(done) == ('mpilens: error: launcher "no-such-mpiexec" not found; '
                                     "check the command given with --launcher")
    assert not (tmp_path / "out").exists()


def test_resume_needs_output(fake):
    done = run_cli("sanity", "--resume", *_launch_options(fake), env=fake["env"])
    assert _one_line_error(done) == ("mpilens: error: --resume needs --output DIR: the "
                                     "directory of the run to complete")


def test_sanity_end_to_end(fake, tmp_path):
    out = tmp_path / "run"
    done = run_cli("sanity", "--np", "3", "--preset", "quick",
                   *_launch_options(fake, "--output", str(out)), env=fake["env"])
    assert done.returncode == 0, done.stderr
    assert _calls(fake) == [["--preset", "quick", "--output", str(out / "sanity.jsonl"),
                             "--progress", "off"]]
    assert (out / "sanity.jsonl").read_bytes() == SANITY_FIXTURE.read_bytes()
    lines = done.stdout.splitlines()
    assert lines[-2:] == [f"results: {out / 'sanity.jsonl'}", f"report: {out / 'report.html'}"]
    assert lines[0].startswith("clock CLOCK_MONOTONIC: resolution")
    assert any(line.startswith("all ranks share one clock") for line in lines)
    assert (out / "report.html").is_file()
    assert "FAKE_NP=3" in done.stderr  # the "running ..." line shows the launched command


def test_default_output_directory(fake, tmp_path):
    done = run_cli("sanity", *_launch_options(fake), cwd=tmp_path, env=fake["env"])
    assert done.returncode == 0, done.stderr
    (made,) = (tmp_path / "results").iterdir()
    assert made.name.endswith("-openmpi") and len(made.name) == len("20261122-103105-openmpi")
    assert done.stdout.splitlines()[-1] == f"report: results/{made.name}/report.html"


def test_existing_results_need_resume(fake, tmp_path):
    out = tmp_path / "run"
    kept = read_records(SANITY_FIXTURE)[:5]
    write_records(out / "sanity.jsonl", kept)
    done = run_cli("sanity", *_launch_options(fake, "--output", str(out)), env=fake["env"])
    assert _one_line_error(done) == (
        f'mpilens: error: "{out / "sanity.jsonl"}" already exists; add --resume to complete it, '
        "or choose another --output")
    done = run_cli("sanity", *_launch_options(fake, "--output", str(out), "--resume"),
                   env=fake["env"])
    assert done.returncode == 0, done.stderr
    assert _calls(fake)[-1][-1] == "--resume"
    assert (out / "sanity.jsonl").read_bytes() == SANITY_FIXTURE.read_bytes()


def test_failing_program_keeps_points(fake, tmp_path):
    out = tmp_path / "run"
    env = dict(fake["env"], FAKE_FAIL_AT="6")
    done = run_cli("sanity", *_launch_options(fake, "--output", str(out)), env=env)
    assert done.returncode == 2
    assert "fake program: simulated failure" in done.stderr
    points = sum(r["type"] == "point" for r in read_records(SANITY_FIXTURE)[:6])
    error = done.stderr.splitlines()[-1]
    assert error.startswith('mpilens: error: "env FAKE_NP=2 ')
    assert error.endswith(f'" exited with status 1; the {points} points measured so far are '
                          f'kept in "{out / "sanity.jsonl"}" (complete them with --resume)')
    assert len((out / "sanity.jsonl").read_text().splitlines()) == 6
    assert not (out / "report.html").exists()


def test_suite_runs_every_family(fake, tmp_path):
    out = tmp_path / "suite"
    done = run_cli("suite", *_launch_options(fake, "--output", str(out)), env=fake["env"])
    assert done.returncode == 0, done.stderr
    suite = families.suite_families()
    quick = [family.preset_args("quick") for family in suite]
    assert [call[:len(args)] for call, args in zip(_calls(fake), quick)] == quick
    assert sorted(p.name for p in out.glob("*.jsonl")) == sorted(f.output_name(2) for f in suite)
    assert done.stdout.splitlines()[-2:] == [f"results: {out}", f"report: {out / 'report.html'}"]


def test_interrupt_keeps_results(fake, tmp_path):
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), FAKE_DELAY="0.2", **fake["env"])
    # A shell starts background jobs with SIGINT ignored, and Python then keeps ignoring it: as a
    # terminal's foreground job, mpilens has the default disposition (make test & gave status 0).
    process = subprocess.Popen(
        [sys.executable, "-m", "mpilens", "sanity", *_launch_options(fake, "--output", str(out))],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    results = out / "sanity.jsonl"
    deadline = time.monotonic() + 20
    while not (results.exists() and len(results.read_text().splitlines()) >= 3):
        assert time.monotonic() < deadline, "the fake program never wrote its first points"
        time.sleep(0.05)
    # Like Ctrl-C in a terminal: the whole foreground process group gets SIGINT.
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=20)
    assert process.returncode == 130
    assert stderr.splitlines()[-1] == "mpilens: interrupted"
    assert "Traceback" not in stderr
    assert len(results.read_text().splitlines()) >= 3


def test_report_on_fixture_dir(results_dir, tmp_path):
    done = run_cli("report", str(results_dir))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{results_dir / 'report.html'}\n"
    assert (results_dir / "plots" / "sanity-compute.png").is_file()
    elsewhere = tmp_path / "elsewhere"
    done = run_cli("report", str(results_dir / "sanity.jsonl"), "--output", str(elsewhere))
    assert done.stdout == f"{elsewhere / 'report.html'}\n"


def test_report_on_truncated_file(results_dir):
    path = results_dir / "sanity.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[:-25])
    lines = data[:-25].count(b"\n") + 1
    assert _one_line_error(run_cli("report", str(results_dir))) == (
        f'mpilens: error: "{path}" is truncated: line {lines} is incomplete (the run was '
        "interrupted while writing); run the program again with --resume to complete it")
    assert not (results_dir / "report.html").exists()


def test_report_on_missing_dir(tmp_path):
    assert _one_line_error(run_cli("report", str(tmp_path / "nope"))) == (
        f'mpilens: error: results directory "{tmp_path / "nope"}" does not exist')


def test_compare_two_dirs(results_dir, tmp_path):
    records = read_records(SANITY_FIXTURE)
    records[0]["mpi"]["thread_level"] = "multiple"
    run_b = tmp_path / "run-b"
    write_records(run_b / "sanity.jsonl", records)
    done = run_cli("compare", str(results_dir), str(run_b))
    assert done.returncode == 0, done.stderr
    page = results_dir / "compare-run-b.html"
    assert done.stdout == f"{page}\n"
    text = page.read_text(encoding="utf-8")
    assert "<h1>mpilens comparison: run-a vs run-b</h1>" in text
    assert '<tr class="diff"><td>thread level</td><td>single</td><td>multiple</td></tr>' in text

    done = run_cli("compare", str(results_dir), str(run_b), "--labels", "laptop,cluster",
                   "--output", str(tmp_path / "cmp"))
    assert done.stdout == f"{tmp_path / 'cmp' / 'compare.html'}\n"
    assert "laptop vs cluster" in (tmp_path / "cmp" / "compare.html").read_text(encoding="utf-8")


def test_compare_bad_labels(results_dir):
    assert _one_line_error(run_cli("compare", str(results_dir), str(results_dir), "--labels",
                                   "only-one")) == (
        'mpilens: error: invalid --labels "only-one": expected two names separated by a comma, '
        "such as before,after")


@pytest.mark.parametrize("ranks, launcher, slurm, warned", [
    (4, None, False, True),             # more ranks than cores on this machine
    (2, None, False, False),
    (4, "srun -n {np}", False, False),  # the user's launcher places ranks elsewhere
    (4, None, True, False),             # inside a Slurm allocation
])
def test_oversubscription_warning(monkeypatch, capsys, ranks, launcher, slurm, warned):
    monkeypatch.setattr(launch, "usable_cpus", lambda: 2)
    monkeypatch.setattr(launch, "in_slurm_allocation", lambda: slurm)
    cli_common.warn_if_oversubscribed(argparse.Namespace(np=ranks, launcher=launcher))
    err = capsys.readouterr().err
    assert ("mpilens: warning: 4 ranks on 2 cores: ranks share cores" in err) == warned


def test_the_command_line_starts_without_numpy():
    """Every command imports every family; numpy (a third of the start) waits for a matrix."""
    code = "import sys, mpilens.cli; print('numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "python")}, check=True)
    assert done.stdout.strip() == "False", done.stderr
