"""`mpilens coll`: its options checked by mpilens and passed on, one run per rank count, the
printed table, the report of the series, --resume, and coll in `mpilens suite`; without MPI, by
fake programs that replay one results file per rank count."""

from __future__ import annotations

import argparse
import sys

import pytest

from conftest import (FAKE_PROGRAM, SANITY_FIXTURE, logged_calls, one_line_error, read_records,
                      run_cli, write_records)
from mpilens import cli, cli_common, families, launch, program_command
from test_coll_analysis import chain_points, coll_meta, oli_point

COLL = families.get("coll")
LAUNCHER = "env FAKE_NP={np}"


def forwarded(*argv: str) -> list:
    args = cli.build_parser().parse_args(list(argv))
    return program_command.family_option_args(COLL, args)


@pytest.fixture
def fake(tmp_path):
    """A bin dir whose mpilens-coll replays sources/coll-np<N>.jsonl for the N ranks its launcher
    asked for, and whose other programs replay the sanity fixture."""
    sources, bin_dir = tmp_path / "sources", tmp_path / "bin"
    for ranks in (2, 3, 4):
        points = chain_points(ranks) + [oli_point("bcast", "library", [None] + [
            1000.0 * r for r in range(1, ranks)], hop=chain_points(2)[0]["params"]["hop_delay_ns"])]
        write_records(sources / f"coll-np{ranks}.jsonl",
                      [coll_meta(ranks, len(points)), *points])
    bin_dir.mkdir()
    for family in families.suite_families():
        source = ('"$FAKE_SOURCES/coll-np$FAKE_NP.jsonl"' if family.np_series
                  else f'"{SANITY_FIXTURE}"')
        program = bin_dir / family.program
        program.write_text(f'#!/bin/sh\nFAKE_SOURCE={source} exec {sys.executable} '
                           f'{FAKE_PROGRAM} "$@"\n')
        program.chmod(0o755)
    log = tmp_path / "argv.log"
    return {"bin": str(bin_dir), "log": log, "sources": sources,
            "env": {"FAKE_SOURCES": str(sources), "FAKE_LOG": str(log)}}


def launch_options(fake: dict, *extra: str) -> list:
    return ["--mpi", "openmpi", "--bin-dir", fake["bin"], "--launcher", LAUNCHER, *extra]


# --- the family and its options -----------------------------------------------------------------

def test_registered():
    assert COLL.program == "mpilens-coll"
    assert COLL.np_series and COLL.min_ranks == 2 and COLL.in_suite
    assert COLL.preset_args("quick") == ["--block", "10", "--min-blocks", "3", "--max-blocks", "5"]
    assert COLL.preset_args("default") == ["--block", "50", "--min-blocks", "5", "--max-blocks",
                                           "15"]
    assert COLL.preset_args("full") == ["--estimator", "mean"]
    assert COLL.preset_args("full-64k") == ["--estimator", "mean", "--size", "64K"]
    assert [option.name for option in COLL.options] == [
        "--op", "--method", "--algo", "--size", "--hop-delay", "--block", "--fast", "--estimator",
        "--wait"]
    assert COLL.output_name(8) == "coll-np8.jsonl"
    assert families.get("overlap").output_name(8) == "overlap.jsonl"
    assert "coll" in [family.name for family in families.suite_families()]


@pytest.mark.parametrize("argv,passed", [
    ((), []),
    (("--op", "bcast, reduce", "--method", "oli,rounds-reverse", "--algo", "all"),
     ["--op", "bcast,reduce", "--method", "oli,rounds-reverse", "--algo", "all"]),
    (("--size", "64K", "--hop-delay", "2ms", "--block", "100000", "--fast", "--wait", "sleep"),
     ["--size", "64K", "--hop-delay", "2ms", "--block", "100000", "--fast", "--wait", "sleep"]),
    (("--hop-delay", "1s", "--block", "1"), ["--hop-delay", "1s", "--block", "1"]),
    (("--estimator", "mean"), ["--estimator", "mean"]),
])
def test_options_passed_on(argv, passed):
    assert forwarded("coll", *argv) == passed


def test_rank_counts_parsed():
    assert cli.build_parser().parse_args(["coll"]).np == [2, 4]
    assert cli.build_parser().parse_args(["coll", "--np", " 8, 2,16"]).np == [8, 2, 16]
    assert cli.build_parser().parse_args(["sanity", "--np", "3"]).np == 3
    assert forwarded("suite") == []


@pytest.mark.parametrize("option,value,message", [
    ("--np", "1", 'invalid rank counts "1": coll needs at least 2 ranks, not 1'),
    ("--np", "2,x", 'invalid rank counts "2,x": expected integers separated by commas, such as '
                    "2,4,8"),
    ("--np", "2,,4", 'invalid rank counts "2,,4": expected integers separated by commas, such as '
                     "2,4,8"),
    ("--np", "4,2,4", 'invalid rank counts "4,2,4": 4 is given twice'),
    ("--method", "oli,teleport", 'unknown method "teleport": choose from sendlat, rounds, '
                                 "rounds-reverse, barrier, barrier-ring, barrier-dissem, ack, "
                                 "oli, all"),
    ("--method", "osu", 'unknown method "osu" (computed from the barrier method\'s runs: add '
                        "barrier to get it): choose from "),
    ("--method", "oli,", 'invalid method list "oli,": expected names separated by commas, such as '
                         "oli,rounds"),
    ("--op", "scatter", 'unknown operation "scatter": choose from bcast, reduce, allreduce, all'),
    ("--algo", "ring", 'unknown algorithm "ring": choose from library, linear, backward, '
                       "binomial, flat, all"),
    ("--size", "4Q", 'invalid size "4Q": expected a number of bytes'),
    ("--hop-delay", "-5", 'invalid time "-5": expected a time'),
    ("--hop-delay", "2s", 'invalid hop delay "2s": at most 1s'),
    ("--block", "0", 'invalid block "0": expected a number of operations from 1 to 100000'),
    ("--block", "100001", 'invalid block "100001": expected a number of operations from 1 to '
                          "100000"),
    ("--wait", "busy", 'invalid wait "busy": choose from auto, spin, sleep'),
    ("--estimator", "average", 'invalid estimator "average": choose from median, mean'),
    ("--preset", "huge", "invalid choice: 'huge' (choose from 'quick', 'default', 'full', "
                         "'full-64k')"),
])
def test_bad_input_launches_nothing(fake, tmp_path, option, value, message):
    out = tmp_path / "run"
    line = one_line_error(run_cli("coll", option, value, *launch_options(fake, "--output", str(out)),
                                  env=fake["env"]))
    assert line.startswith(f"mpilens: error: argument {option}: {message}")
    assert line.endswith('(see "mpilens coll --help")')
    assert logged_calls(fake) == [] and not out.exists()


def test_fast_takes_no_value():
    assert one_line_error(run_cli("coll", "--fast=yes")).startswith(
        "mpilens: error: argument --fast: ignored explicit argument 'yes'")


def test_suite_refuses_one_rank_before_anything_runs(fake, tmp_path):
    done = run_cli("suite", "--np", "1", *launch_options(fake, "--output", str(tmp_path / "s")),
                   env=fake["env"])
    assert one_line_error(done) == "mpilens: error: coll needs at least 2 ranks; --np is 1"
    assert logged_calls(fake) == [] and not (tmp_path / "s").exists()


@pytest.mark.parametrize("counts,warned", [([2, 4], "4 ranks on 2 cores"), ([2], None)])
def test_oversubscription_warning_for_the_largest_count(monkeypatch, capsys, counts, warned):
    monkeypatch.setattr(launch, "usable_cpus", lambda: 2)
    monkeypatch.setattr(launch, "in_slurm_allocation", lambda: False)
    cli_common.warn_if_oversubscribed(argparse.Namespace(np=counts, launcher=None))
    err = capsys.readouterr().err
    assert (warned in err) if warned else err == ""


def test_help():
    done = run_cli("coll", "--help")
    assert done.returncode == 0
    assert "--np LIST" in done.stdout and "(default 2,4)" in done.stdout
    assert "coll options (passed on to mpilens-coll):" in done.stdout
    assert "--fast " in done.stdout and "--hop-delay TIME" in done.stdout


# --- running -------------------------------------------------------------------------------------

def test_coll_end_to_end(fake, tmp_path):
    out = tmp_path / "run"
    done = run_cli("coll", "--np", "2,4", "--preset", "quick", "--algo", "linear,library",
                   "--hop-delay", "1ms", "--fast", *launch_options(fake, "--output", str(out)),
                   env=fake["env"])
    assert done.returncode == 0, done.stderr
    quick = COLL.preset_args("quick")
    assert logged_calls(fake) == [
        [*quick, "--algo", "linear,library", "--hop-delay", "1ms", "--fast", "--output",
         str(out / f"coll-np{ranks}.jsonl"), "--progress", "off"] for ranks in (2, 4)]
    assert "FAKE_NP=2" in done.stderr and "FAKE_NP=4" in done.stderr
    for ranks in (2, 4):
        assert (out / f"coll-np{ranks}.jsonl").read_bytes() == \
            (fake["sources"] / f"coll-np{ranks}.jsonl").read_bytes()
    lines = done.stdout.splitlines()
    # the table, then the findings, then where everything is
    assert lines[:4] == ["bcast/library, 256 B, hop delay 1 ms: latency in µs", "np   oli  argmax",
                         " 2  1.00       1", " 4  3.00       3"]
    assert lines[5:9] == ["bcast/linear, 256 B, hop delay 1 ms: latency in µs",
                          "np   oli  rounds  barrier   ack   osu  argmax  truth",
                          " 2  1000     500     3000  1050   600       1   1000",
                          " 4  3000    1500     9000  3150  1800       3   3000"]
    assert ("bcast/linear: oli (max OL_i) is 3 ms at 4 ranks, held by rank 3; 1 ms at 2 ranks, "
            "so 3.0x for 2x the ranks") in lines
    assert ("bcast/linear: under --hop-delay 1 ms the oli estimate is within 1% of the analytic "
            "truth at every rank count (2–4 ranks; worst at 2 ranks: 1 ms vs 1 ms)") in lines
    assert lines[-2:] == [f"results: {out}", f"report: {out / 'report.html'}"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("<h2>Collective latency") == 1
    plots = sorted(path.name for path in (out / "plots").iterdir())
    assert plots == ["coll-error.png", "coll-methods.png", "coll-profile-bcast-library-np2.png",
                     "coll-profile-bcast-library-np4.png", "coll-profile-bcast-linear-np2.png",
                     "coll-profile-bcast-linear-np4.png"]


def test_full_presets_are_the_seeds_protocol_and_the_command_line_wins(fake, tmp_path):
    out = tmp_path / "run"
    done = run_cli("coll", "--np", "2", "--preset", "full-64k", "--size", "1K",
                   *launch_options(fake, "--output", str(out)), env=fake["env"])
    assert done.returncode == 0, done.stderr
    # the program takes the last of a repeated option: --size 1K wins over the preset's 64K
    assert logged_calls(fake) == [["--estimator", "mean", "--size", "64K", "--size", "1K",
                                   "--output", str(out / "coll-np2.jsonl"), "--progress", "off"]]
    # a preset of coll's own is not offered by the other families
    refused = run_cli("overlap", "--preset", "full-64k")
    assert "invalid choice: 'full-64k'" in one_line_error(refused)


def test_one_rank_count_names_its_file(fake, tmp_path):
    out = tmp_path / "run"
    done = run_cli("coll", "--np", "3", *launch_options(fake, "--output", str(out)),
                   env=fake["env"])
    assert done.returncode == 0, done.stderr
    assert logged_calls(fake)[0][:len(COLL.preset_args("default"))] == COLL.preset_args("default")
    assert done.stdout.splitlines()[-2] == f"results: {out / 'coll-np3.jsonl'}"


def test_existing_results_need_resume(fake, tmp_path):
    out = tmp_path / "run"
    write_records(out / "coll-np4.jsonl", read_records(fake["sources"] / "coll-np4.jsonl")[:2])
    done = run_cli("coll", *launch_options(fake, "--output", str(out)), env=fake["env"])
    assert one_line_error(done) == (
        f'mpilens: error: "{out / "coll-np4.jsonl"}" already exists; add --resume to complete '
        "it, or choose another --output")
    assert logged_calls(fake) == []


def test_interrupted_series_resumes_each_file(fake, tmp_path):
    out = tmp_path / "run"
    failing = dict(fake["env"], FAKE_FAIL_AT="3")
    done = run_cli("coll", *launch_options(fake, "--output", str(out)), env=failing)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith(
        f'the 2 points measured so far are kept in "{out / "coll-np2.jsonl"}" (complete them '
        "with --resume)")
    assert not (out / "coll-np4.jsonl").exists()
    done = run_cli("coll", "--resume", *launch_options(fake, "--output", str(out)),
                   env=fake["env"])
    assert done.returncode == 0, done.stderr
    assert [call[-1] for call in logged_calls(fake)[1:]] == ["--resume", "--resume"]
    for ranks in (2, 4):
        assert (out / f"coll-np{ranks}.jsonl").read_bytes() == \
            (fake["sources"] / f"coll-np{ranks}.jsonl").read_bytes()
    assert "incomplete" not in done.stdout


def test_suite_runs_coll_quick_at_its_rank_count(fake, tmp_path):
    out = tmp_path / "suite"
    done = run_cli("suite", "--np", "3", *launch_options(fake, "--output", str(out)),
                   env=fake["env"])
    assert done.returncode == 0, done.stderr
    (coll_call,) = [call for call in logged_calls(fake) if call[-3].endswith("coll-np3.jsonl")]
    assert coll_call == [*COLL.preset_args("quick"), "--output", str(out / "coll-np3.jsonl"),
                         "--progress", "off"]
    assert sorted(path.name for path in out.glob("*.jsonl")) == [
        "coll-np3.jsonl", "overlap.jsonl", "sanity.jsonl"]
    lines = done.stdout.splitlines()
    assert "coll: bcast/linear: oli (max OL_i) is 2 ms at 3 ranks, held by rank 2" in lines
    # the suite prints findings only; the table is for `mpilens coll`
    assert not any("latency in µs" in line for line in lines)


def test_report_and_compare_commands_on_series(fake, tmp_path):
    for side in ("a", "b"):
        for ranks in (2, 3):
            name = f"coll-np{ranks}.jsonl"
            write_records(tmp_path / side / name, read_records(fake["sources"] / name))
    done = run_cli("report", str(tmp_path / "a"), "--output", str(tmp_path / "again"))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "again" / "report.html").read_text(encoding="utf-8")
    assert page.count("<h2>Collective latency") == 1
    # each file's context under Runs, one section for the series
    assert all(f"<summary>{name}.jsonl: how it was run</summary>" in page
               for name in ("coll-np2", "coll-np3"))
    done = run_cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--output",
                   str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "cmp" / "compare.html").read_text(encoding="utf-8")
    assert ("<li>coll: bcast/linear, oli at 3 ranks: A 2 ms, B 2 ms (within 5%); within 5% at "
            "every rank count</li>") in page
