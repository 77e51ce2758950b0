"""`mpilens tune` (python/mpilens/tune.py, docs/tune.md): the statistic on constructed samples,
the verdicts on a synthetic target whose cost each setting chooses (tune_target.py, run without a
launcher), settings refused before anything runs, tune.json against its schema in
docs/results-schema.md, the report section, and the real benchmark under MPI.

Timings are never asserted. The tests that rank settings read the time the target says it slept
(SLEPT), which a setting chooses (10 ms or 200 ms against 40 ms), and not its wall time: on a
loaded 2-core machine a Python process waits tens to hundreds of milliseconds for a core to start
on, in no relation to the setting, and a ranking would then depend on the load. The --metric
tests read a number the target prints, whose ratios are exact."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest
from conftest import REAL_LAUNCHERS, ROOT, need_launcher, one_line_error, run_cli

from mpilens import cli, launch, tune, tune_report
from mpilens.errors import MpilensError

TARGET = [sys.executable, "-I", "-S", str(Path(__file__).resolve().parent / "tune_target.py")]
SCHEMA_DOC = ROOT / "docs" / "results-schema.md"
SLEPT = ("--metric", r"slept: ([0-9.]+)")
REQUIRED = os.environ.get("MPILENS_REQUIRE_BUILD", "").split()
# A small library description, as mpilens-cvars prints it: MPICH with one control variable.
MPICH_CVARS = {
    "library": "MPICH Version:\t4.0.2\nMPICH Release date:\tApr 2022\nMPICH Device:\tch4:ucx",
    "flavour": "mpich",
    "cvars": {"count": 1, "vars": {"MPIR_CVAR_ASYNC_PROGRESS": {
        "type": "int", "scope": "all_eq", "value": 0, "default": 0}}},
}


@dataclass
class Tuned:
    status: int
    out: str
    err: str
    document: Optional[dict]


def tune_cli(capsys, out: Path, *args: str, rounds: int = 20) -> Tuned:
    """`mpilens tune --launcher none` of the target in-process, and the tune.json it wrote."""
    status = cli.main(["tune", "--launcher", "none", "--output", str(out), "--budget", "3m",
                       "--rounds-max", str(rounds), *args, "--", *TARGET])
    captured = capsys.readouterr()
    path = out / "tune.json"
    document = json.loads(path.read_text()) if path.exists() else None
    return Tuned(status, captured.out, captured.err, document)


def refused(capsys, *args: str) -> str:
    """The one line `mpilens ARGS` prints when it refuses them (status 2), run in-process: a
    traceback would fail the test by itself."""
    try:
        status = cli.main(list(args))
    except SystemExit as exit_:
        status = exit_.code
    err = capsys.readouterr().err
    assert status == 2, err
    (line,) = err.splitlines()
    return line


def by_name(document: dict) -> dict:
    return {setting["name"]: setting for setting in document["settings"]}


# --- the statistic -------------------------------------------------------------------------------


@pytest.mark.parametrize("n, expected", [
    (6, (1, 6, 1 - 2 / 64)),               # [min, max] reaches 96.9% from 6 values on
    (10, (2, 9, 0.978515625)),             # the C core's example (docs/methods/core.md)
    (12, (3, 10, 1 - 2 * 79 / 4096)),
])
def test_median_ranks_from_the_binomial(n, expected):
    low, high, coverage = tune.median_ranks(n)
    assert (low, high) == expected[:2]
    assert coverage == pytest.approx(expected[2])


def test_median_ranks_is_the_narrowest_that_covers():
    for n in range(6, 60):
        low, high, coverage = tune.median_ranks(n)
        assert high == n - low + 1 and coverage >= 0.95
        narrower = 1 - 2 * tune.binomial_half_cdf(n, low)  # the pair one step inwards
        assert narrower < 0.95


@pytest.mark.parametrize("n", [1, 2, 5])
def test_too_few_values_give_the_full_range_which_decides_nothing(n):
    assert tune.median_ranks(n) is None
    interval = tune.median_interval([3.0, 1.0, 2.0, 5.0, 4.0][:n])
    assert (interval.lo, interval.hi) == (min([3.0, 1.0, 2.0, 5.0, 4.0][:n]),
                                          max([3.0, 1.0, 2.0, 5.0, 4.0][:n]))
    assert not interval.sufficient
    judgement = tune.judge(interval, 0.02, True)
    assert judgement.verdict == "noise" and not judgement.decided


def test_median_interval_of_known_samples():
    interval = tune.median_interval([float(v) for v in (10, 1, 9, 2, 8, 3, 7, 4, 6, 5)])
    assert (interval.median, interval.lo, interval.hi) == (5.5, 2.0, 9.0)
    assert interval.n == 10 and interval.sufficient
    assert tune.median_interval([]) is None


def interval(lo: float, median: float, hi: float) -> tune.Interval:
    return tune.Interval(median, lo, hi, 0.96, 10)


@pytest.mark.parametrize("lo, hi, lower, verdict, decided", [
    (0.50, 0.90, True, "better", True),     # wholly below the band
    (1.10, 1.30, True, "worse", True),      # wholly above
    (0.50, 0.90, False, "worse", True),     # a lower number is worse when higher is better
    (0.99, 1.01, True, "noise", True),      # wholly inside the band: no effect worth the name
    (0.90, 1.10, True, "noise", False),     # contains 1: more rounds may tell
    (0.95, 0.99, True, "noise", False),     # excludes 1 but reaches into the band: not better yet
    (0.97, 0.9801, True, "noise", False),   # crosses the band's lower edge
])
def test_verdicts(lo, hi, lower, verdict, decided):
    judgement = tune.judge(interval(lo, (lo + hi) / 2, hi), 0.02, lower)
    assert (judgement.verdict, judgement.decided) == (verdict, decided)


def test_no_difference_inside_the_interval_is_a_finding():
    """Whatever the median, an interval that holds 1 is noise."""
    for median in (0.5, 0.9, 1.0, 1.1, 2.0):
        assert tune.judge(interval(0.4, median, 2.5), 0.0, True).verdict == "noise"


@pytest.mark.parametrize("text, seconds", [
    ("90s", 90), ("5m", 300), ("1h", 3600), ("2.5min", 150), ("45", 45)])
def test_durations(text, seconds):
    assert tune.parse_duration(text, "--budget") == seconds


@pytest.mark.parametrize("text", ["0", "-1", "5ms", "soon", "1 day", ""])
def test_nonsense_durations_are_refused(text):
    with pytest.raises(MpilensError, match="--budget"):
        tune.parse_duration(text, "--budget")


def test_min_effect_and_try_syntax():
    assert tune.parse_min_effect("2%") == pytest.approx(0.02)
    assert tune.parse_min_effect("0.15") == 0.15
    for bad in ("1", "-0.1", "x", "5%%"):
        with pytest.raises(MpilensError, match="--min-effect"):
            tune.parse_min_effect(bad)
    assert tune.parse_try("a:X=1,Y=b=c") == ("a", {"X": "1", "Y": "b=c"})
    for bad in ("noname", "baseline:X=1", "a:X", "a:1X=2", "a:X=1,X=2", ":X=1"):
        with pytest.raises(MpilensError, match="--try"):
            tune.parse_try(bad)


# --- tuning the synthetic target -----------------------------------------------------------------


def tuned(capsys, directory, *args):
    """A tuning that must succeed on the target's reported sleep: its run, tune.json, and the
    settings of tune.json by name."""
    done = tune_cli(capsys, directory, *SLEPT, *args)
    assert done.status == 0, done.err
    return done, done.document, by_name(done.document)


def test_ranks_a_faster_and_a_slower_setting(capsys, tmp_path):
    done, document, settings = tuned(capsys, tmp_path / "t", "--try", "fast:TUNE_SLEEP_MS=10",
                                     "--try", "slow:TUNE_SLEEP_MS=200")
    assert settings["fast"]["verdict"] == "better" and settings["fast"]["ratio"] < 1
    assert settings["slow"]["verdict"] == "worse" and settings["slow"]["ratio"] > 1
    assert document["best"] == "fast"
    assert settings["fast"]["ratio_ci"][1] < 1 - document["min_effect"]
    assert "export TUNE_SLEEP_MS=10" in (tmp_path / "t" / "best.env").read_text().splitlines()
    assert (tmp_path / "t" / "best.launcher").read_text() == "\n"  # no launcher options
    assert done.out.splitlines()[-1].startswith("best: fast, ")
    assert "apply it: env TUNE_SLEEP_MS=10 " in done.out.splitlines()[-1]
    # every round ran every setting once, each round's ratio against its own baseline
    rounds = document["rounds"]
    assert rounds >= tune.MIN_ROUNDS
    for setting in document["settings"]:
        assert [run["round"] for run in setting["runs"]] == list(range(1, rounds + 1))
        base = {run["round"]: run["value"] for run in document["baseline"]["runs"]}
        for run in setting["runs"]:
            assert run["ratio"] == pytest.approx(run["value"] / base[run["round"]])
    assert [run["round"] for run in document["baseline"]["runs"]] == list(range(rounds + 1))


def test_equal_settings_are_noise(capsys, tmp_path):
    """The same program under a setting that changes nothing, on wall time (the default metric).
    The paired ratios of wall times on a loaded 2-core machine spread by tens of percent around
    1, so the noise band is widened to ±15%: the 95% interval of an effect that is not there
    then has next to no chance of lying wholly outside it, whereas at ±2% (the default) a few
    unlucky rounds could make it cross the band's edge by a hair."""
    done = tune_cli(
        capsys, tmp_path / "t", "--try", "same:TUNE_SLEEP_MS=40", "--min-effect", "0.15",
        rounds=12)
    assert done.status == 0, done.err
    document = done.document
    assert by_name(document)["same"]["verdict"] == "noise"
    assert document["best"] is None
    assert not (tmp_path / "t" / "best.env").exists()
    assert not (tmp_path / "t" / "best.launcher").exists()
    last = done.out.splitlines()[-1]
    assert last.startswith("best: none: no setting beat the baseline beyond noise")


def test_a_failing_setting_is_failed_and_the_others_measured(capsys, tmp_path):
    done, document, settings = tuned(capsys, tmp_path / "t", "--try", "broken:TUNE_FAIL=1",
                                     "--try", "fast:TUNE_SLEEP_MS=10")
    broken = settings["broken"]
    assert broken["verdict"] == "failed" and broken["ratio"] is None
    assert "exited with status 3" in broken["reason"]
    assert "failing as asked (TUNE_FAIL)" in broken["reason"]
    assert len(broken["runs"]) == 1 and broken["runs"][0]["value"] is None  # not run again
    assert settings["fast"]["verdict"] == "better"
    assert len(settings["fast"]["runs"]) == document["rounds"] >= tune.MIN_ROUNDS
    assert re.search(r"^broken .* failed +round 1: exited with status 3", done.out, re.M)


def test_a_hanging_setting_is_stopped_and_tuning_goes_on(capsys, tmp_path):
    done = tune_cli(capsys, tmp_path / "t", *SLEPT, "--try", "hang:TUNE_HANG=1", "--try",
                    "fast:TUNE_SLEEP_MS=10", "--timeout", "3s")
    assert done.status == 0, done.err
    document = done.document
    settings = by_name(document)
    assert settings["hang"]["verdict"] == "failed"
    assert "ran longer than the 0:03 timeout and was stopped" in settings["hang"]["reason"]
    assert document["timeout_s"] == 3
    assert settings["fast"]["verdict"] == "better"


def test_the_metric_is_read_from_the_output(capsys, tmp_path, monkeypatch):
    """The target prints "metric: N": the ratios are exact, whatever the machine's load."""
    monkeypatch.setenv("TUNE_METRIC", "100")
    monkeypatch.setenv("TUNE_SLEEP_MS", "0")
    done = tune_cli(
        capsys, tmp_path / "t", "--metric", r"metric: (\d+)", "--try", "small:TUNE_METRIC=50",
        "--try", "large:TUNE_METRIC=300", "--try", "silent:TUNE_METRIC=", rounds=8)
    assert done.status == 0, done.err
    document = done.document
    settings = by_name(document)
    assert document["metric"] == {"name": r"first number of the output matching metric: (\d+)",
                                  "unit": None, "lower_is_better": True}
    assert document["baseline"]["median"] == 100
    assert (settings["small"]["median"], settings["small"]["ratio"]) == (50, 0.5)
    assert settings["small"]["ratio_ci"] == [0.5, 0.5] and settings["small"]["verdict"] == "better"
    assert settings["large"]["ratio"] == 3 and settings["large"]["verdict"] == "worse"
    assert settings["silent"]["verdict"] == "failed"
    assert "no match for --metric" in settings["silent"]["reason"]
    assert document["best"] == "small" and document["stopped"] == "decided"
    assert document["rounds"] == 6  # the first round count whose interval reaches 95%


def test_higher_is_better_turns_the_verdicts(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("TUNE_METRIC", "100")
    monkeypatch.setenv("TUNE_SLEEP_MS", "0")
    done = tune_cli(
        capsys, tmp_path / "t", "--metric", r"metric: \d+", "--higher-is-better", "--try",
        "small:TUNE_METRIC=50", "--try", "large:TUNE_METRIC=300", rounds=8)
    assert done.status == 0, done.err
    document = done.document
    settings = by_name(document)
    assert document["metric"]["lower_is_better"] is False
    assert settings["small"]["verdict"] == "worse" and settings["large"]["verdict"] == "better"
    assert document["best"] == "large"


def test_a_failing_baseline_stops_with_an_error(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("TUNE_FAIL", "1")
    done = tune_cli(capsys, tmp_path / "t", "--try", "a:TUNE_SLEEP_MS=1")
    assert done.status == 2
    line = done.err.strip().splitlines()[-1]
    assert line.startswith("mpilens: error: the baseline (no setting) failed, so nothing can be "
                           "compared: exited with status 3")
    assert done.document["stopped"] == "baseline-failed" and done.document["rounds"] == 0


def test_an_interrupted_tuning_keeps_what_it_measured_and_stops_its_run(tmp_path):
    """SIGTERM while a setting hangs: the run's process is stopped with mpilens, which exits
    with 128 + 15 and leaves tune.json saying it was interrupted."""
    mark, out = tmp_path / "hanging", tmp_path / "t"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MPILENS_")}
    environment["PYTHONPATH"] = str(ROOT / "python")
    process = subprocess.Popen(
        [sys.executable, "-m", "mpilens", "tune", "--launcher", "none", "--output", str(out),
         "--try", f"hang:TUNE_HANG=1,TUNE_MARK={mark}", "--timeout", "1h", "--", *TARGET],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if mark.exists() and mark.read_text().strip():
                break
            time.sleep(0.1)
        else:
            pytest.fail("the hanging setting never started")
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "mpilens: interrupted by SIGTERM" in err
    document = json.loads((out / "tune.json").read_text())
    assert document["stopped"] == "interrupted"
    pid = int(mark.read_text().split()[0])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


# --- refused before anything runs ----------------------------------------------------------------


@pytest.fixture
def mpich_cvars(tmp_path) -> Path:
    path = tmp_path / "cvars.json"
    path.write_text(json.dumps(MPICH_CVARS))
    return path


@pytest.mark.parametrize("setting, message", [
    ("--try=bad:MPIR_CVAR_NO_SUCH_THING=1",
     'setting "bad": MPIR_CVAR_NO_SUCH_THING is not a control variable of MPICH 4.0.2 (ch4:ucx) '
     "(it reports 1)"),
    ("--try=bad:OMPI_MCA_btl_vader_eager_limit=4096",
     'setting "bad": OMPI_MCA_btl_vader_eager_limit is not a control variable of MPICH 4.0.2'),
    ("--settings=ompi-vader-eager",
     "--settings ompi-vader-eager: ompi-vader-eager applies to Open MPI 3.0 to 4.99"),
    ("--settings=test-during-compute",
     "--settings test-during-compute: test-during-compute is a change to the program"),
    ("--settings=no-such-remedy", 'no remedy named "no-such-remedy" in the catalogue'),
])
def test_a_setting_that_cannot_exist_is_refused_before_launch(setting, message, mpich_cvars,
                                                              tmp_path):
    mark = tmp_path / "ran"
    done = run_cli("tune", "--launcher", "none", "--mpi", "mpich", "--cvars-file",
                   str(mpich_cvars), setting, "--output", str(tmp_path / "t"), "--", *TARGET,
                   env={"TUNE_MARK": str(mark)})
    line = one_line_error(done)
    assert line.startswith(f"mpilens: error: {message}")
    if "no remedy named" not in message:
        assert "MPICH 4.0.2 (ch4:ucx)" in line  # the library, named
    assert not mark.exists() and not (tmp_path / "t").exists()


def test_a_setting_the_library_has_is_tried(capsys, mpich_cvars, tmp_path):
    """mpich-async-progress names MPIR_CVAR_ASYNC_PROGRESS, which the library reports: accepted,
    and given to the program (which ignores it: noise, under a wide band)."""
    done = tune_cli(
        capsys, tmp_path / "t", "--mpi", "mpich", "--cvars-file", str(mpich_cvars),
        "--settings", "mpich-async-progress", "--min-effect", "0.5", rounds=6)
    assert done.status == 0, done.err
    document = done.document
    (setting,) = document["settings"]
    assert setting["env"] == {"MPIR_CVAR_ASYNC_PROGRESS": "1"}
    assert setting["source"] == "catalogue" and setting["kind"] == "env"
    assert setting["about"].startswith("MPICH's own progress thread")
    assert document["library"] == {"text": MPICH_CVARS["library"], "flavour": "mpich",
                                   "cvars_count": 1, "nodes": None, "source": str(mpich_cvars)}


def test_settings_reach_the_ranks_through_the_launcher(mpich_cvars, monkeypatch):
    """Variables as the launcher's options (hydra: -genv), a progress remedy's library among
    them, and a launcher remedy's options right after the launcher's command word."""
    monkeypatch.setattr(launch, "find_program", lambda name, *_: Path("/opt/bin") / name)
    monkeypatch.setattr(launch, "find_library", lambda name, *_: Path(f"/opt/lib/lib{name}.so"))
    args = cli.build_parser().parse_args([
        "tune", "--bench", "overlap:sender", "--mpi", "mpich", "--launcher",
        "mpiexec.hydra -n {np}", "--cvars-file", str(mpich_cvars), "--settings",
        "progress-poll,bind-to-core", "--output", "/nonexistent/t"])
    plan = tune.plan_of(args)
    poll, bind = plan.settings[1:]
    command, own_env = plan.command(poll, Path("out.jsonl"), "/opt/bin/mpilens-overlap")
    assert command[:8] == ["mpiexec.hydra", "-genv", "MPILENS_PROGRESS", "poll", "-genv",
                           "LD_PRELOAD", "/opt/lib/libmpilens-progress.so", "-n"]
    assert command[-4:] == ["--output", "out.jsonl", "--progress", "off"]
    assert own_env == {}  # nothing in the launcher's own environment
    command, _ = plan.command(bind, None, "/opt/bin/mpilens-overlap")
    assert command[:5] == ["mpiexec.hydra", "-bind-to", "core", "-n", "2"]
    assert tune.how_to_apply(plan, bind) == "mpiexec.hydra -bind-to core -n 2 ./your-program"


@pytest.mark.parametrize("args, message", [
    (["--bench", "progress:p2p"], 'invalid --bench "progress:p2p": tune measures overlap:BENCH '
                                  "(sender, receiver,"),
    (["--bench", "overlap:nosuch"], 'invalid --bench "overlap:nosuch": tune measures'),
    (["--bench", "overlap:sender", "--launcher", "none"], "--bench runs an MPI program"),
    (["--bench", "overlap:sender", "--metric", "x"], "--metric and --higher-is-better read"),
    (["--budget", "soon"], 'invalid --budget "soon"'),
    (["--rounds-max", "2"], 'invalid --rounds-max "2"'),
    (["--settings", "auto"], "--settings auto needs --bench"),
    ([], "no setting to try"),
    (["--try", "a:X=1", "--try", "a:Y=2"], 'two settings are named "a"'),
])
def test_usage_errors(args, message, tmp_path, capsys):
    program = [] if "--bench" in args else ["--", *TARGET]
    if "--launcher" not in args and "--bench" not in args:
        args = ["--launcher", "none", *args]
    line = refused(capsys, "tune", *args, "--output", str(tmp_path / "t"), *program)
    assert line.startswith(f"mpilens: error: {message}")
    assert not (tmp_path / "t").exists()


def test_neither_or_both_targets_are_refused(capsys):
    for args in ([], ["--bench", "overlap:sender", "--", *TARGET]):
        assert "tell tune what to measure" in refused(capsys, "tune", "--try", "a:X=1", *args)


def test_existing_results_are_kept(tmp_path, capsys):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "tune.json").write_text("{}")
    line = refused(capsys, "tune", "--launcher", "none", "--try", "a:X=1", "--output",
                   str(tmp_path / "t"), "--", *TARGET)
    assert "already exists" in line
    assert (tmp_path / "t" / "tune.json").read_text() == "{}"


# --- tune.json against docs/results-schema.md ----------------------------------------------------

TYPES = {
    "string": (str,), "number": (int, float), "int": (int,), "bool": (bool,),
    "object": (dict,), "list": (list,),
}


def documented_fields() -> dict:
    """The rows of the tune.json table of docs/results-schema.md: {path: (types, nullable)}."""
    text = SCHEMA_DOC.read_text(encoding="utf-8")
    section = text[text.index("## tune.json"):]
    fields = {}
    for paths, kind in re.findall(r"^\| ((?:`[^`]+`(?:, )?)+) \| ([^|]+?) \|", section, re.M):
        kind, nullable = re.subn(r" or null$", "", kind.strip())
        element = re.fullmatch(r"list of (\w+?)s", kind)
        types = TYPES["list"] if element else TYPES[kind]
        for path in re.findall(r"`([^`]+)`", paths):
            fields[path] = (types, bool(nullable), TYPES[element.group(1)] if element else None)
    return fields


def instances(document, path: str) -> list:
    """The values at a documented path such as settings[].runs[].round, one per list element."""
    values = [document]
    for part in path.split("."):
        name, each = part.removesuffix("[]"), part.endswith("[]")
        values = [value[name] for value in values]
        if each:
            values = [item for value in values for item in value]
    return values


def present_paths(value, prefix: str = "") -> set:
    """Every path a document holds, in the notation of the table (env's keys are data)."""
    paths = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            paths.add(path)
            if key != "env":
                paths |= present_paths(item, path)
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        paths.add(prefix + "[]")
        for item in value:
            paths |= present_paths(item, prefix + "[]")
    return paths


def test_tune_json_is_what_the_schema_says(capsys, tmp_path):
    done = tune_cli(
        capsys, tmp_path / "t", "--try", "fast:TUNE_SLEEP_MS=10", "--try", "broken:TUNE_FAIL=1",
        rounds=8)
    assert done.status == 0, done.err
    document = done.document
    fields = documented_fields()
    assert {"metric.name", "metric.unit", "metric.lower_is_better", "target", "library.text",
            "library.flavour", "baseline.median", "baseline.ci", "baseline.runs", "settings",
            "settings[].name", "settings[].env", "settings[].launcher_options",
            "settings[].median", "settings[].ci", "settings[].ratio", "settings[].ratio_ci",
            "settings[].verdict", "settings[].reason", "settings[].runs", "best", "rounds",
            "stopped", "date", "mpilens_version"} <= set(fields)
    documented = {path.removesuffix("[]") for path in fields}
    for path in present_paths(document):
        assert path.removesuffix("[]") in documented, f"{path} is not in docs/results-schema.md"
    for path, (types, nullable, element) in fields.items():
        for value in instances(document, path.removesuffix("[]")):
            if value is None:
                assert nullable, f"{path} is null"
                continue
            assert isinstance(value, types) and not (bool in types) ^ isinstance(value, bool), \
                f"{path}: {value!r}"
            if element is not None:
                assert all(isinstance(item, element) for item in value), f"{path}: {value!r}"
    assert document["settings"][0]["verdict"] in ("better", "worse", "noise", "failed")
    assert document["stopped"] in tune.STOPPED


# --- the report section --------------------------------------------------------------------------


def test_report_section(capsys, tmp_path, monkeypatch):
    """On a printed metric, so that the verdicts are exact."""
    monkeypatch.setenv("TUNE_METRIC", "100")
    monkeypatch.setenv("TUNE_SLEEP_MS", "0")
    done = tune_cli(
        capsys, tmp_path / "t", "--metric", r"metric: (\d+)", "--try", "fast:TUNE_METRIC=50",
        "--try", "broken:TUNE_FAIL=1", rounds=8)
    assert done.status == 0, done.err
    assert tune_report.find_tune_files(tmp_path / "t") == [tmp_path / "t" / "tune.json"]
    assert tune_report.find_tune_files(tmp_path / "t" / "tune.json") == [tmp_path / "t" /
                                                                         "tune.json"]
    assert tune_report.find_tune_files(tmp_path) == []
    section = tune_report.tune_section(tmp_path / "t" / "tune.json")
    assert section.startswith("<section") and section.count("<h2>") == 1
    assert section.count("<img") == 1
    for text in ("fast", "better", "broken", "failed", "exited with status 3",
                 "failing as asked (TUNE_FAIL)", "export TUNE_METRIC=50",
                 "Best: fast, 0.500x the baseline [0.500, 0.500]"):
        assert text in section
    # a verdict per setting in the table
    rows = re.findall(r"<tr>(.*?)</tr>", section)
    assert any("fast" in row and "better" in row for row in rows)
    # `mpilens report` of the tune directory (no results file of its own) shows the section
    assert cli.main(["report", str(tmp_path / "t")]) == 0
    page = (tmp_path / "t" / "report.html").read_text(encoding="utf-8")
    assert "Best: fast, 0.500x the baseline [0.500, 0.500]" in page
    assert tune_report.find_tune_files(tmp_path / "t" / "runs.jsonl") == []


def test_report_section_refuses_what_is_not_tune_json(tmp_path):
    path = tmp_path / "tune.json"
    path.write_text('{"settings": 3}')
    with pytest.raises(MpilensError, match=r"tune\.json"):
        tune_report.tune_section(path)


# --- under MPI -----------------------------------------------------------------------------------


def need_build(flavour: str) -> None:
    """Skips without the flavour's build of mpilens-cvars and mpilens-overlap; under make test
    (MPILENS_REQUIRE_BUILD) a missing build fails."""
    bin_dir = launch.dev_bin_dir(launch.Flavour(flavour))
    if bin_dir is None or not all((bin_dir / p).exists() for p in ("mpilens-cvars",
                                                                   "mpilens-overlap")):
        if flavour in REQUIRED:
            pytest.fail(f"make test requires the {flavour} build, and it has no mpilens-cvars")
        pytest.skip(f"no {flavour} build")


LAUNCHERS = {flavour.value: name for flavour, name in REAL_LAUNCHERS}
BAD_VARIABLES = {"mpich": "MPIR_CVAR_NO_SUCH_THING", "openmpi": "OMPI_MCA_no_such_param"}


def test_overlap_receiver_under_a_progress_thread(tmp_path, monkeypatch):
    """The real benchmark at 2 ranks against libmpilens-progress's polling thread: a verdict,
    whichever the machine's load makes it, and proof that the setting reached the ranks."""
    need_build("mpich")
    need_launcher(LAUNCHERS["mpich"], monkeypatch)
    out = tmp_path / "t"
    done = run_cli("tune", "--bench", "overlap:receiver", "--np", "2", "--mpi", "mpich",
                   "--budget", "2m", "--rounds-max", "6", "--settings", "progress-poll",
                   "--output", str(out), timeout=400)
    assert done.returncode == 0, done.stderr
    document = json.loads((out / "tune.json").read_text())
    assert document["target"] == {
        "kind": "bench", "family": "overlap", "bench": "receiver",
        "command": ["mpilens-overlap", "--bench", "receiver", *tune.OVERLAP_SWEEP], "np": 2,
        "nodes": None, "mpi": "mpich", "launcher": launch.default_launcher(launch.Flavour.MPICH)}
    assert document["library"]["flavour"] == "mpich"
    assert document["library"]["text"].startswith("MPICH Version:")
    assert document["baseline"]["median"] > 0
    (setting,) = document["settings"]
    assert setting["name"] == "progress-poll"
    assert setting["verdict"] in ("better", "worse", "noise"), setting["reason"]
    assert setting["env"]["LD_PRELOAD"].endswith("libmpilens-progress.so")
    run = setting["runs"][0]
    meta = json.loads((out / run["results"]).read_text().splitlines()[0])
    assert meta["progress_setting"]["label"] == "thread:poll"
    baseline_meta = json.loads((out / document["baseline"]["runs"][1]["results"])
                               .read_text().splitlines()[0])
    assert baseline_meta["progress_setting"]["label"] == "none"


@pytest.mark.parametrize("flavour", ["mpich", "openmpi"])
def test_a_variable_the_library_lacks_is_refused_under_mpi(flavour, tmp_path, monkeypatch):
    need_build(flavour)
    need_launcher(LAUNCHERS[flavour], monkeypatch)
    variable = BAD_VARIABLES[flavour]
    done = run_cli("tune", "--bench", "overlap:receiver", "--np", "2", "--mpi", flavour,
                   "--try", f"bad:{variable}=1", "--output", str(tmp_path / "t"), timeout=200)
    line = one_line_error(done)
    assert line.startswith(f'mpilens: error: setting "bad": {variable} is not a control variable '
                           f"of {'MPICH' if flavour == 'mpich' else 'Open MPI'} ")
    assert not (tmp_path / "t").exists()
