"""`mpilens progress`: bad input refused before anything runs, the runs it makes and the variables
each gets, a setting the library could not give, a launcher that loses LD_PRELOAD, the overlap
runs and the report; without MPI, through a fake launcher that writes what mpilens-progress and
mpilens-overlap would record under the variables it was given."""

from __future__ import annotations

import sys

import pytest

from conftest import (FAKE_MPIRUN_PROLOGUE, check_refused_before_launch, logged_calls, one_line_error,
                      read_records, run_cli)

# Stands in for Open MPI's mpirun: takes the -x NAME=VALUE options mpilens gives it, logs the call,
# then writes the results file of the program asked for, with the progress setting those
# variables give: FAKE_NO_SPARE makes cpu=spare fall back to an unbound thread, FAKE_LOSE_PRELOAD
# drops LD_PRELOAD as a careless launcher would.
LAUNCHER = FAKE_MPIRUN_PROLOGUE + r'''
np, program, rest = int(args[1]), os.path.basename(args[2]), args[3:]
with open(os.environ["FAKE_LAUNCH_LOG"], "a") as log:
    log.write(json.dumps({"program": program, "args": rest, "env": env}) + "\n")
if os.environ.get("FAKE_LOSE_PRELOAD"):
    env.pop("LD_PRELOAD", None)
asked = env.get("MPILENS_PROGRESS") if "LD_PRELOAD" in env else None
mode, _, where = (asked or "").partition(",")
library = {"loaded": asked is not None, "running": asked is not None, "mode": mode or "none",
           "interval_us": 0, "cpu": -1, "realtime": False, "reason": "",
           "running_per_rank": [asked is not None] * np, "cpu_per_rank": [-1] * np}
label = "none"
if asked is not None:
    label = "thread:" + mode
    if where == "cpu=spare" and os.environ.get("FAKE_NO_SPARE"):
        library["reason"] = "cpu=spare: no spare core; the thread is not bound"
    elif where == "cpu=spare":
        library["cpu"], library["cpu_per_rank"] = 3, [2 + r for r in range(np)]
        label += ",cpu=3"
on = [f"async:{k}={v}" for k, v in env.items() if k in ("MPIR_CVAR_ASYNC_PROGRESS",
                                                          "OMPI_MCA_btl_tcp_progress_thread")]
if on:
    label = "+".join(([label] if label != "none" else []) + on)
family = program.replace("mpilens-", "")
output = rest[rest.index("--output") + 1]
meta = {"type": "meta", "schema": 1, "family": family, "program": program, "ranks": np,
        "mpi": {"library": "Open MPI v4.1.4", "flavour": "openmpi"}, "hosts": ["vm"] * np,
        "binding": [str(r) for r in range(np)], "cpus_online": 4, "points_total": 0,
        "options": {}, "progress_setting": {"label": label, "library": library, "env": {},
                                             "thread_level": "multiple"}}
points = []
if family == "progress":
    for size in (1024, 1048576):
        params = {"size_bytes": size, "progress": label}
        points.append({"type": "point", "family": "progress", "bench": "p2p",
                       "key": f"p2p/size={size}/strategy=blocking",
                       "params": {**params, "strategy": "blocking"},
                       "stats": {"t_b_ns": size * 2.0}})
        points.append({"type": "point", "family": "progress", "bench": "p2p",
                       "key": f"p2p/size={size}/compute=time/strategy=none",
                       "params": {**params, "strategy": "none", "compute": "time"},
                       "stats": {"t_o_ns": size * (0.1 if asked else 1.0), "t_b_ns": size * 2.0,
                                 "tests": 0}})
    meta["points_total"] = len(points)
with open(output, "w") as out:
    for record in [meta, *points]:
        out.write(json.dumps(record) + "\n")
'''


@pytest.fixture
def fake(tmp_path):
    bin_dir, lib_dir = tmp_path / "bin", tmp_path / "lib"
    bin_dir.mkdir()
    launcher = bin_dir / "mpirun"
    launcher.write_text(f"#!{sys.executable}\n{LAUNCHER}")
    launcher.chmod(0o755)
    for name in ("mpilens-progress", "mpilens-overlap"):
        (bin_dir / name).write_text("#!/bin/sh\nexit 99\n")
        (bin_dir / name).chmod(0o755)
    lib_dir.mkdir()
    (lib_dir / "libmpilens-progress.so").write_text("")
    log = tmp_path / "launch.log"
    return {"bin": bin_dir, "lib": lib_dir, "log": log, "launcher": launcher,
            "env": {"FAKE_LAUNCH_LOG": str(log)}}


def progress(fake: dict, *argv: str, env: dict = None):
    options = ["--mpi", "openmpi", "--bin-dir", str(fake["bin"]), "--lib-dir", str(fake["lib"]),
               "--launcher", str(fake["launcher"])]
    return run_cli("progress", *options, *argv, env={**fake["env"], **(env or {})}, timeout=120)


@pytest.mark.parametrize("argv,message", [
    (("--threads", "poll,spin"), 'argument --threads: invalid thread mode "spin" in "poll,spin": '
                                 "expected poll, yield, sleep:US, rt, rt:US, event or event:US"),
    (("--threads", "sleep:0"), 'argument --threads: invalid thread mode "sleep:0"'),
    # the library refuses pauses and waits above a second: refused before anything runs
    (("--threads", "sleep:1000001"), 'argument --threads: invalid thread mode "sleep:1000001"'),
    (("--threads", "event:1000001"), 'argument --threads: invalid thread mode "event:1000001"'),
    (("--placement", "near"), 'argument --placement: unknown placement "near": choose '
                              "from shared, spare, all"),
    (("--bench", "p2p,ring"), 'argument --bench: unknown benchmark "ring"'),
    (("--ops", "iscan"), 'argument --ops: unknown collective "iscan"'),
    (("--np", "1"), "p2p and nbc need at least 2 ranks; --np is 1"),
    (("--np", "1", "--bench", "interrupts", "--overlap"),
     "--overlap needs at least 2 ranks (a sender and a receiver); --np is 1"),
    (("--resume",), "--resume needs --output DIR: the directory of the run to complete"),
])
def test_bad_input_launches_nothing(fake, tmp_path, argv, message):
    check_refused_before_launch(progress, fake, tmp_path / "run", argv, message)


def test_each_setting_runs_with_its_variables(fake, tmp_path):
    out = tmp_path / "run"
    done = progress(fake, "--threads", "poll,sleep:50,event:0", "--no-overlap", "--output", str(out))
    assert done.returncode == 0, done.stderr
    made = logged_calls(fake)
    assert [call["program"] for call in made] == ["mpilens-progress"] * 8
    envs = [call["env"] for call in made]
    library = str(fake["lib"] / "libmpilens-progress.so")
    assert envs == [{},
                    {"LD_PRELOAD": library, "MPILENS_PROGRESS": "poll"},
                    {"LD_PRELOAD": library, "MPILENS_PROGRESS": "poll,cpu=spare"},
                    {"LD_PRELOAD": library, "MPILENS_PROGRESS": "sleep:50"},
                    {"LD_PRELOAD": library, "MPILENS_PROGRESS": "sleep:50,cpu=spare"},
                    {"LD_PRELOAD": library, "MPILENS_PROGRESS": "event:0"},
                    {"LD_PRELOAD": library, "MPILENS_PROGRESS": "event:0,cpu=spare"},
                    {"OMPI_MCA_btl_tcp_progress_thread": "1"}]
    baseline, *others = [call["args"] for call in made]
    # the library alone: every strategy and the interrupt cost; the others: strategy none only
    assert "--strategy" not in baseline and "--test-placement" not in baseline
    assert baseline[baseline.index("--bench") + 1] == "p2p,nbc,interrupts"
    for args in others:
        assert args[args.index("--strategy") + 1] == "none"
        assert args[args.index("--bench") + 1] == "p2p,nbc"
    names = sorted(path.name for path in out.glob("*.jsonl"))
    assert names == ["progress-async.jsonl", "progress-none.jsonl",
                     "progress-thread-event0-spare.jsonl", "progress-thread-event0.jsonl",
                     "progress-thread-poll-spare.jsonl",
                     "progress-thread-poll.jsonl", "progress-thread-sleep50-spare.jsonl",
                     "progress-thread-sleep50.jsonl"]
    assert (out / "report.html").exists()
    assert f"results: {out}" in done.stdout


def test_the_seeds_test_placement_goes_to_the_run_that_tests(fake, tmp_path):
    done = progress(fake, "--threads", "poll", "--placement", "shared", "--no-async", "--no-overlap",
                    "--test-placement", "seed", "--output", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    baseline, thread = [call["args"] for call in logged_calls(fake)]
    assert baseline[baseline.index("--test-placement") + 1] == "seed"
    assert "--test-placement" not in thread  # strategy none: no tests to place


def test_a_setting_the_library_could_not_give_is_removed(fake, tmp_path):
    out = tmp_path / "run"
    done = progress(fake, "--threads", "yield", "--no-async", "--no-overlap", "--output", str(out),
                    env={"FAKE_NO_SPARE": "1"})
    assert done.returncode == 0, done.stderr
    assert len(logged_calls(fake)) == 3
    assert ("mpilens: thread-yield-spare ran as thread:yield (cpu=spare: no spare core; the thread "
            "is not bound), which thread-yield measured already; "
            "progress-thread-yield-spare.jsonl is removed") in done.stderr
    assert sorted(path.name for path in out.glob("*.jsonl")) == [
        "progress-none.jsonl", "progress-thread-yield.jsonl"]
    # the directory reads back as one study
    assert run_cli("report", str(out)).returncode == 0


def test_a_launcher_that_loses_ld_preload_is_an_error(fake, tmp_path):
    out = tmp_path / "run"
    done = progress(fake, "--threads", "poll", "--placement", "shared", "--output", str(out),
                    env={"FAKE_LOSE_PRELOAD": "1"})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    line = done.stderr.splitlines()[-1]  # after the lines announcing the runs
    assert line.startswith("mpilens: error: ") and "was measured without libmpilens-progress, not under MPILENS_PROGRESS=poll: the ranks " \
           "did not get LD_PRELOAD" in line


def test_overlap_maps_without_and_with_the_thread(fake, tmp_path):
    out = tmp_path / "run"
    done = progress(fake, "--threads", "poll", "--no-async", "--overlap", "--bench", "p2p",
                    "--output", str(out))
    assert done.returncode == 0, done.stderr
    overlap = [call for call in logged_calls(fake) if call["program"] == "mpilens-overlap"]
    assert [call["env"].get("MPILENS_PROGRESS") for call in overlap] == [None, "poll,cpu=spare"]
    for call in overlap:
        assert call["args"][call["args"].index("--bench") + 1] == "sender,receiver"
    assert read_records(out / "overlap-thread-poll-spare.jsonl")[0]["progress_setting"]["label"] \
        == "thread:poll,cpu=3"
    page = (out / "report.html").read_text()
    assert "overlap.jsonl, progress: none" in page
    assert "overlap-thread-poll-spare.jsonl, progress: thread:poll,cpu=3" in page


def test_existing_results_need_resume(fake, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "progress-none.jsonl").write_text("")
    line = one_line_error(progress(fake, "--output", str(out)))
    assert line == (f'mpilens: error: "{out}/progress-none.jsonl" already exists; add --resume to '
                    "complete it, or choose another --output")
    assert logged_calls(fake) == []
