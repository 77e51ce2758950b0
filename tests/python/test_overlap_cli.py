"""`mpilens overlap` and its --bench option: checked by mpilens, passed on to the program."""

from __future__ import annotations

import json

import pytest

from conftest import OVERLAP_FIXTURE, fake_bin, one_line_error, run_cli
from mpilens import cli, families, program_command
from mpilens.analysis import overlap

OVERLAP = families.get("overlap")


def forwarded(*argv: str) -> list:
    args = cli.build_parser().parse_args(list(argv))
    return program_command.family_option_args(OVERLAP, args)


def test_registered():
    assert OVERLAP.program == "mpilens-overlap"
    assert OVERLAP.description == (
        "Does non-blocking communication progress while the program computes? Heat maps over "
        "message size × computation time (seed 000)")
    assert OVERLAP.preset_args("full") == ["--preset", "full"]
    assert [option.name for option in OVERLAP.options] == ["--bench", "--kernel", "--omp-threads",
                                                       "--comm-threads"]
    assert families.get("sanity").options == ()


@pytest.mark.parametrize("text,passed", [
    ("sender", "sender"), (" sender, nload ,ibcast", "sender,nload,ibcast"), ("all", "all"),
    (",".join(overlap.BENCHES), ",".join(overlap.BENCHES))])
def test_bench_list_accepted(text, passed):
    assert forwarded("overlap", "--bench", text) == ["--bench", passed]


def test_bench_list_is_optional_and_suite_uses_defaults():
    assert forwarded("overlap") == []
    assert forwarded("suite") == []


@pytest.mark.parametrize("text,message", [
    ("sender,teleport", 'unknown benchmark "teleport": choose from sender, receiver, bidir, '
                        "noncontig, cpu, nload, control, late, multi, multi-same, threads, ibcast, "
                        "iallreduce, ialltoall, all"),
    ("ref-send", 'unknown benchmark "ref-send": choose from '),
    ("sender,,cpu", 'invalid benchmark list "sender,,cpu": expected names separated by commas, '
                    "such as sender,receiver")])
def test_bad_bench_list(text, message):
    line = one_line_error(run_cli("overlap", "--bench", text))
    assert line.startswith(f"mpilens: error: argument --bench: {message}")
    assert line.endswith('(see "mpilens overlap --help")')


def test_the_kernel_is_passed_on():
    assert forwarded("overlap", "--kernel", "openmp", "--omp-threads", "3") == [
        "--kernel", "openmp", "--omp-threads", "3"]
    assert forwarded("overlap", "--bench", "threads", "--comm-threads", "4") == [
        "--bench", "threads", "--comm-threads", "4"]


@pytest.mark.parametrize("argv,message", [
    (("--kernel", "gpu"), 'argument --kernel: invalid kernel "gpu": choose from time, openmp'),
    (("--omp-threads", "0"), 'argument --omp-threads: invalid --omp-threads "0": expected a number '
                             "of threads from 1 to 1024"),
    (("--comm-threads", "1"), 'argument --comm-threads: invalid --comm-threads "1": expected a '
                              "number of threads from 2 to 16"),
])
def test_bad_kernel_is_refused_before_launch(argv, message):
    line = one_line_error(run_cli("overlap", *argv))
    assert line.startswith(f"mpilens: error: {message}"), line


@pytest.mark.parametrize("command", ["sanity", "suite"])
def test_other_commands_have_no_bench(command):
    assert one_line_error(run_cli(command, "--bench", "sender")) == (
        'mpilens: error: unrecognized arguments: --bench sender (see "mpilens --help")')


def test_help_shows_the_family_option():
    done = run_cli("overlap", "--help")
    assert done.returncode == 0
    assert "overlap options (passed on to mpilens-overlap):" in done.stdout
    assert "--bench LIST" in done.stdout


def test_overlap_end_to_end(tmp_path):
    log = tmp_path / "argv.log"
    env = fake_bin(tmp_path / "bin", OVERLAP_FIXTURE, log)
    out = tmp_path / "run"
    done = run_cli("overlap", "--bench", "sender, nload", "--preset", "quick", "--mpi", "openmpi",
                   "--bin-dir", str(tmp_path / "bin"), "--launcher", "env FAKE_NP={np}",
                   "--output", str(out), env=env)
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls == [["--preset", "quick", "--bench", "sender,nload", "--output",
                      str(out / "overlap.jsonl"), "--progress", "off"]]
    lines = done.stdout.splitlines()
    assert lines[-2:] == [f"results: {out / 'overlap.jsonl'}", f"report: {out / 'report.html'}"]
    assert any(line.startswith("method check: ") for line in lines)
    assert any(line.startswith("skipped: ") for line in lines)
    assert (out / "plots" / "overlap-mosaic.png").is_file()
