"""tests/conformance/run's own logic, without MPI or the suite: how a test's outcome is judged,
which directories a testlist names, and the state file a long run is resumed from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import load_script

RUNNER = Path(__file__).resolve().parents[2] / "tests" / "conformance" / "run"


run = load_script(RUNNER, "conformance_run")

CAP_LINE = (
    "libmpilens-piggyback: supports up to MPI_THREAD_SERIALIZED: the program asked for "
    "MPI_THREAD_MULTIPLE and is given MPI_THREAD_SERIALIZED (only one thread at a time may "
    "call MPI)"
)


def test_judge_passes_only_on_exit_0_with_no_errors_line():
    assert run.judge(0, " No Errors\n", 1.0).status == "pass"
    assert run.judge(1, " No Errors\n", 1.0).status == "fail"
    assert run.judge(0, "Found 2 errors\n", 1.0).status == "fail"
    assert run.judge(0, "Test Skipped\n", 1.0).status == "fail"  # a skip is not a pass


def test_judge_calls_a_failure_under_the_thread_cap_not_applicable():
    result = run.judge(255, CAP_LINE + "\nThread Multiple not supported\n", 0.1)
    assert result.status == "n/a"
    assert "Thread Multiple not supported" in result.message
    # the cap said, yet the program passed: a pass
    assert run.judge(0, CAP_LINE + "\n No Errors\n", 0.1).status == "pass"


def write_testlist(directory: Path, lines: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "testlist").write_text("\n".join(lines) + "\n")


def test_expand_dirs_follows_subdirectories_a_testlist_names(tmp_path):
    write_testlist(tmp_path / "threads", ["pt2pt", "comm", "@spawndir@", "#perf", "missing"])
    write_testlist(tmp_path / "threads" / "pt2pt", ["threads 2", "sub"])
    write_testlist(tmp_path / "threads" / "pt2pt" / "sub", ["deep 1"])
    write_testlist(tmp_path / "threads" / "comm", ["ctxdup 4"])
    (tmp_path / "threads" / "perf").mkdir()
    write_testlist(tmp_path / "pt2pt", ["sendrecv1 2"])
    assert run.expand_dirs(tmp_path, ["threads", "pt2pt"]) == [
        "threads",
        "threads/pt2pt",
        "threads/pt2pt/sub",
        "threads/comm",
        "pt2pt",
    ]
    assert run.read_testlist(tmp_path, "threads/pt2pt") == [("threads", 2, {})]


META = {"suite commit": "pmodels/mpich abc", "MPI library": "MPICH 4.0.2", "mpilens commit": "c1"}


def three_tests_two_layers():
    tests = [
        (run.Test("pt2pt", name, 2, [], {}, None, None), Path(name)) for name in ("a", "b", "c")
    ]
    layers = [run.Layer("none", []), run.Layer("monitor", ["monitor"], monitor=True)]
    return tests, layers


def test_state_keeps_results_and_a_resumed_run_reruns_none_of_them(tmp_path):
    path = tmp_path / "state.jsonl"
    tests, layers = three_tests_two_layers()
    state = run.State(path, META)
    assert state.load(tests, layers) == {}
    state.add(0, tests[0][0], "none", run.Result("pass", "", 1.5))
    state.add(0, tests[0][0], "monitor", run.Result("fail", "exit 1: x", 2.0))
    state.add(1, tests[1][0], "none", run.Result("timeout", "no end", 30.0))

    class Runner:  # what a resumed run launches
        timeout, slow_factor = 60, 1  # b's timeout is not run again here (see the next test)

        def __init__(self):
            self.calls: list[tuple[str, str]] = []

        def run(self, test, exe, layer, timeout=None):
            self.calls.append((test.name, layer.name))
            return run.Result("pass", "", 0.1)

    resumed = run.State(path, dict(META, **{"mpilens commit": "c2"}))
    results = resumed.load(tests, layers)
    assert results[(0, "monitor")].status == "fail" and results[(0, "monitor")].commit == "c1"
    runner = Runner()
    done = run.run_all(tests, layers, runner, results, 1, 0, resumed, lambda done: None)
    assert done == 3
    # b timed out in the baseline: it cannot fail anew under the monitor, and is not run there
    assert runner.calls == [("c", "none"), ("c", "monitor")]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 1 + 3 + 2 and lines[-1]["commit"] == "c2"
    table = run.report(
        dict(META, date="d", command="c", timeout="t", flavour="MPICH"),
        ["pt2pt"],
        layers,
        tests,
        results,
        [],
        done,
    )
    assert "mpilens commits of the results: c1, c2" in table
    assert "| pt2pt | 3 | 2 / 0 / 0 / 1 / 0 | 1 / 0 / 1 / 0 / 0 |" in table
    assert "`pt2pt/a 2` under `monitor`: fail: exit 1: x" in table


class SlowRunner:
    """Each (test, configuration) takes SECONDS; a run within a shorter limit times out."""

    timeout, slow_factor = 60, 3
    SECONDS = {("a", "poll"): 100, ("b", "none"): 90, ("b", "monitor"): 120, ("c", "monitor"): 1e9}

    def __init__(self):
        self.calls: list[tuple[str, str, int]] = []

    def run(self, test, exe, layer, timeout=None):
        limit = timeout or test.time_limit or self.timeout
        self.calls.append((test.name, layer.name, limit))
        seconds = self.SECONDS.get((test.name, layer.name), 1.0)
        if seconds > limit:
            return run.Result("timeout", f"no end within {limit} s", limit)
        return run.Result("pass", "", seconds)


def test_a_timeout_is_run_again_alone_with_the_longer_limit(tmp_path):
    # a is slow under poll (100 s); b's baseline is slow (90 s), so its layers get 180 s too,
    # where the monitor passes in 120 s; c hangs under the monitor: the one new failure.
    tests, layers = three_tests_two_layers()
    layers.append(run.Layer("poll", ["progress"]))
    path = tmp_path / "state.jsonl"
    state = run.State(path, META)
    results = state.load(tests, layers)
    runner = SlowRunner()
    assert run.run_all(tests, layers, runner, results, 1, 0, state, lambda done: None) == 3
    assert runner.calls == [
        ("a", "none", 60), ("a", "monitor", 60), ("a", "poll", 60), ("a", "poll", 180),
        ("b", "none", 60), ("b", "none", 180), ("b", "monitor", 180), ("b", "poll", 180),
        ("c", "none", 60), ("c", "monitor", 60), ("c", "poll", 60), ("c", "monitor", 180),
    ]  # fmt: skip
    status = {(tests[i][0].name, layer): r.status for (i, layer), r in results.items()}
    assert status == {
        ("a", "none"): "pass", ("a", "monitor"): "pass", ("a", "poll"): "slow",
        ("b", "none"): "slow", ("b", "monitor"): "pass", ("b", "poll"): "pass",
        ("c", "none"): "pass", ("c", "monitor"): "timeout", ("c", "poll"): "pass",
    }  # fmt: skip
    assert results[(0, "poll")].message == "no end within 60 s; passed in 100 s within 180 s"
    table = run.report(
        dict(META, date="d", command="c", timeout="t", flavour="MPICH"),
        ["pt2pt"], layers, tests, results, [], 3,
    )  # fmt: skip
    assert "| pt2pt | 3 | 2 / 1 / 0 / 0 / 0 | 2 / 0 / 0 / 1 / 0 | 2 / 1 / 0 / 0 / 0 |" in table
    new = table.split("New failures")[1].split("Slow, not wrong")[0]
    assert "`pt2pt/c 2` under `monitor`: timeout: no end within 180 s" in new
    assert "`pt2pt/a 2`" not in new and "`pt2pt/b 2`" not in new
    slow = table.split("Slow, not wrong")[1].split("Not applicable")[0]
    assert "`pt2pt/a 2` under `poll`" in slow and "`pt2pt/b 2` under `none`" in slow
    assert "`pt2pt/b 2`" not in table.split("Failing in the baseline already")[1]
    # a state file's timeout within the normal limit (an earlier run's) is run again on resume;
    # one at the longer limit is not
    earlier = tmp_path / "earlier.jsonl"
    old = run.State(earlier, META)
    old.load(tests, layers)
    for i, name in enumerate("abc"):
        for layer in layers:
            hung = (name, layer.name) in (("a", "poll"), ("c", "monitor"))
            result = run.Result("timeout", "", 60 if name == "a" else 180) if hung else run.Result("pass")
            old.add(i, tests[i][0], layer.name, result)
    runner = SlowRunner()
    results = run.State(earlier, META).load(tests, layers)
    run.run_all(tests, layers, runner, results, 1, 0, None, lambda done: None)
    assert runner.calls == [("a", "poll", 180)] and results[(0, "poll")].status == "slow"


def test_state_of_another_suite_or_library_is_refused(tmp_path, capsys):
    path = tmp_path / "state.jsonl"
    tests, layers = three_tests_two_layers()
    run.State(path, META).load(tests, layers)
    with pytest.raises(SystemExit) as stop:
        run.State(path, dict(META, **{"MPI library": "Open MPI 4.1.4"})).load(tests, layers)
    assert stop.value.code == 2
    assert "another suite or MPI library" in capsys.readouterr().err
    path.write_text("{not json\n")
    with pytest.raises(SystemExit):
        run.State(path, META).load(tests, layers)


def test_state_of_a_run_that_selected_other_tests_is_refused(tmp_path, capsys):
    # keys are places in the run's list: a --tests run on a whole run's file found none of its
    # test's results and wrote them again under place 0 (it did, 2026-11-30)
    path = tmp_path / "state.jsonl"
    tests, layers = three_tests_two_layers()
    whole = run.State(path, META)
    whole.load(tests, layers)
    whole.add(0, tests[0][0], "none", run.Result("pass", "", 1.0))
    with pytest.raises(SystemExit) as stop:
        run.State(path, META, {"c"}).load(tests[2:], layers)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "made by a run of every test" in err and "--tests c" in err
    assert "delete their lines" in err
    selected = tmp_path / "selected.jsonl"
    run.State(selected, META, {"c", "b"}).load(tests[1:], layers)
    assert json.loads(selected.read_text().splitlines()[0])["tests"] == ["b", "c"]
    assert run.State(selected, META, {"b", "c"}).load(tests[1:], layers) == {}  # the same selection
    with pytest.raises(SystemExit):
        run.State(selected, META).load(tests, layers)
    path.write_text("[1, 2]\n")
    with pytest.raises(SystemExit) as stop:
        run.State(path, META).load(tests, layers)
    assert "another suite or MPI library" in capsys.readouterr().err
