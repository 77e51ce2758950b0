"""`mpilens tune`: prove a fix by measuring it (docs/tune.md).

A target (an mpilens benchmark, or the user's program) runs without any setting (the baseline)
and under each candidate setting, interleaved in rounds: each round runs every setting once, in
an order shuffled with the round's number as seed, so that a drift of the machine hits all
alike. Each candidate is judged by the ratio of its metric to the baseline's of the same round:
the median of those ratios and its 95% confidence interval from order statistics. A setting is
better or worse only when the whole interval lies beyond the noise band (--min-effect); every
other difference is noise. Candidates come from the catalogue of remedies (remedies.json), checked
against the control variables the library reports (mpilens-cvars), or from --try; a variable the
library cannot have is refused before anything is measured."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import __version__, launch, program_options, remedies, results
from .cli_common import (
    add_launch_options,
    add_lib_dir,
    ensure_writable,
    program_tail,
    warn_if_oversubscribed,
)
from .errors import MpilensError
from .progress import Progress, format_duration
from .text import columns, counted
from .units import format_time

# --- what the command measures -------------------------------------------------------------------

NONE = "none"
AUTO = "auto"
BASELINE = "baseline"
LEVEL = 0.95
MIN_ROUNDS = 3
DEFAULT_ROUNDS_MAX = 30
DEFAULT_BUDGET = "10m"
DEFAULT_MIN_EFFECT = 0.02
# Without --timeout, a run is stopped after this many times the warm-up's duration, and never
# sooner than MIN_TIMEOUT_S: a setting may well be slower, but not ten times.
TIMEOUT_FACTOR = 10
MIN_TIMEOUT_S = 60.0
# The probe of the library (mpilens-cvars) only starts MPI and lists its variables.
PROBE_TIMEOUT_S = 120.0
# A failure's reason keeps this much of what the run printed.
REASON_LINES = 3
REASON_CHARS = 300
TUNE_FILE = "tune.json"
SCHEMA = 1

# The benchmarks' fixed sweeps: short, and reaching the rendezvous sizes of the usual transports
# (64 KiB to 1 MiB), where overlap depends on progress. The largest size is what a remedy's
# {size} becomes.
LARGEST_SIZE = 1 << 20
OVERLAP_SWEEP = ("--sizes", "64K:1M", "--density", "1", "--compute", "200us", "--reps", "10")
COLL_SWEEP = (
    "--method", "oli", "--algo", "library", "--size", "1M",
    "--block", "10", "--min-blocks", "3", "--max-blocks", "5",
)  # fmt: skip
SEND, RECV, COLLECTIVE = "no-overlap-send", "no-overlap-recv", "no-overlap-collective"
# The symptom each overlap benchmark shows when it does not overlap; cpu, nload and control have
# none the catalogue treats.
OVERLAP_SYMPTOMS = {
    **dict.fromkeys(("sender", "noncontig", "multi", "multi-same", "threads"), SEND),
    **dict.fromkeys(("receiver", "late", "bidir"), RECV),
    **dict.fromkeys(("ibcast", "iallreduce", "ialltoall"), COLLECTIVE),
}
# Remedies that cannot be set from outside the program.
NOT_SETTABLE = ("code", "rank-order")
# Variables that name a control variable of some library: checking them needs the library's list.
CVAR_PREFIXES = ("MPIR_CVAR_", "MPICH_", "OMPI_MCA_")
FLAVOUR_LABELS = {"openmpi": "Open MPI", "mpich": "MPICH", "intelmpi": "Intel MPI"}

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(s|m|min|h)?\s*", re.IGNORECASE)
_FRACTION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_SECONDS = {"": 1, "s": 1, "m": 60, "min": 60, "h": 3600}


@dataclass(frozen=True)
class Metric:
    name: str
    unit: Optional[str]
    lower_is_better: bool


@dataclass(frozen=True)
class Target:
    """What is measured: an mpilens benchmark (family and bench) or the user's command (words);
    its metric, the symptom the catalogue treats it for, and the values of the placeholders."""

    words: Tuple[str, ...]
    metric: Metric
    family: Optional[str] = None
    bench: Optional[str] = None
    symptom: Optional[str] = None
    regex: Optional[re.Pattern[str]] = None
    values: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_bench(self) -> bool:
        return self.family is not None


# --- option values -------------------------------------------------------------------------------


def parse_duration(text: str, option: str) -> float:
    """Seconds from "90s", "5m", "1h", "2.5min" or a bare number of seconds."""
    match = _DURATION.fullmatch(text)
    if match is None or float(match.group(1)) <= 0:
        raise MpilensError(
            f'invalid {option} "{text}": expected a time such as 90s, 5m or 1h (a bare number is '
            "seconds)"
        )
    return float(match.group(1)) * _SECONDS[(match.group(2) or "").lower()]


def parse_min_effect(text: str) -> float:
    """A fraction from "0.02" or "2%", from 0 to below 1."""
    match = _FRACTION.fullmatch(text)
    value = float(match.group(1)) / (100 if match.group(2) else 1) if match else -1.0
    if not 0 <= value < 1:
        raise MpilensError(
            f'invalid --min-effect "{text}": expected a fraction from 0 to below 1, such as '
            "0.02 or 2%"
        )
    return value


def parse_rounds(text: str) -> int:
    if not text.strip().isdigit() or int(text) < MIN_ROUNDS:
        raise MpilensError(
            f'invalid --rounds-max "{text}": expected a whole number of at least {MIN_ROUNDS}'
        )
    return int(text)


def parse_try(text: str) -> Tuple[str, Dict[str, str]]:
    """NAME:VAR=VALUE[,VAR=VALUE...] as (NAME, {VAR: VALUE})."""
    name, colon, assignments = text.partition(":")
    example = '"--try eager:MPIR_CVAR_CH4_EAGER_MAX_MSG_SIZE=1048576"'
    if not colon or not _NAME.fullmatch(name) or name == BASELINE:
        raise MpilensError(
            f'invalid --try "{text}": expected NAME:VAR=VALUE[,VAR=VALUE...], NAME of letters, '
            f'digits and _.+- other than "{BASELINE}", as in {example}'
        )
    env: Dict[str, str] = {}
    for assignment in assignments.split(","):
        variable, equals, value = assignment.partition("=")
        if not equals or not _VARIABLE.fullmatch(variable) or variable in env:
            raise MpilensError(
                f'invalid --try "{text}": "{assignment}" is not VAR=VALUE with a new variable '
                f"name, as in {example}"
            )
        env[variable] = value
    return name, env


def _setting_names(text: str) -> List[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise MpilensError(
            f'invalid --settings "{text}": expected auto, none, or remedies separated by commas, '
            "such as progress-poll,progress-yield"
        )
    return names


# --- the target ----------------------------------------------------------------------------------


def _bench_target(text: str, np: int) -> Target:
    family, colon, bench = text.partition(":")
    supported = "overlap:BENCH (" + ", ".join(program_options.choices("mpilens-overlap", "bench"))
    supported += "), coll:OP (" + ", ".join(program_options.choices("mpilens-coll", "op")) + ")"
    if not colon or family not in ("overlap", "coll"):
        raise MpilensError(f'invalid --bench "{text}": tune measures {supported}')
    program = f"mpilens-{family}"
    option = "bench" if family == "overlap" else "op"
    if bench not in program_options.choices(program, option):
        raise MpilensError(f'invalid --bench "{text}": tune measures {supported}')
    if np < 2:
        raise MpilensError(f"{program} needs at least 2 ranks; --np is {np}")
    words: Tuple[str, ...]
    if family == "overlap":
        metric = Metric(f"{bench}: sum over its points of t_measured_ns + lat0_ns", "ns", True)
        words = (program, "--bench", bench, *OVERLAP_SWEEP)
        symptom = OVERLAP_SYMPTOMS.get(bench)
    else:
        metric = Metric(f"{bench}: sum over its points of latency_ns (oli)", "ns", True)
        words = (program, "--op", bench, *COLL_SWEEP)
        symptom = COLLECTIVE
    return Target(words, metric, family, bench, symptom, values={"size": str(LARGEST_SIZE)})


def _program_target(words: Sequence[str], regex: Optional[str], higher: bool) -> Target:
    if not launch.is_command(words[0]):
        raise MpilensError(
            f'program "{words[0]}" not found: give the path of an executable, such as ./app, or '
            "a command on PATH"
        )
    if regex is None:
        return Target(tuple(words), Metric("wall time", "s", True))
    try:
        pattern = re.compile(regex)
    except re.error as error:
        raise MpilensError(f'invalid --metric "{regex}": {error}') from None
    metric = Metric(f"first number of the output matching {regex}", None, not higher)
    return Target(tuple(words), metric, regex=pattern)


def target_of(args: argparse.Namespace) -> Target:
    words = list(args.program[1:] if args.program[:1] == ["--"] else args.program)
    if (args.bench is None) == (not words):
        raise MpilensError(
            'tell tune what to measure: --bench FAMILY:BENCH, or a program after "--" (not both), '
            'as in "mpilens tune --bench overlap:receiver" or "mpilens tune --try a:X=1 -- ./app"'
        )
    if args.bench is None:
        if args.higher_is_better and args.metric is None:
            raise MpilensError("--higher-is-better needs --metric REGEX: wall time is lower-better")
        return _program_target(words, args.metric, args.higher_is_better)
    if args.metric is not None or args.higher_is_better:
        raise MpilensError(
            "--metric and --higher-is-better read the output of a program given after --; "
            "--bench has its own metric"
        )
    if args.launcher == NONE:
        raise MpilensError(
            "--bench runs an MPI program, which needs a launcher; --launcher none is for a "
            'command given after "--"'
        )
    return _bench_target(args.bench, args.np)


# --- the library ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Probe:
    """The library as mpilens-cvars (or --cvars-file) describes it."""

    text: str
    flavour: str
    library: remedies.Library
    source: str

    @property
    def label(self) -> str:
        """ "MPICH 4.0.2 (ch4:ucx)", "Open MPI 4.1.4"."""
        name = FLAVOUR_LABELS.get(self.flavour, self.flavour or "the MPI library")
        if self.library.version:
            name += " " + ".".join(map(str, self.library.version))
        return name + (f" ({self.library.device})" if self.library.device else "")

    @property
    def cvar_count(self) -> Optional[int]:
        return None if self.library.cvars is None else len(self.library.cvars)


def _probe_object(text: str) -> Optional[Dict[str, Any]]:
    """mpilens-cvars' object: the whole text, or one of its lines (a launcher may add some)."""
    for candidate in (text, *text.splitlines()):
        with contextlib.suppress(ValueError, RecursionError):
            found = json.loads(candidate)
            if isinstance(found, dict) and "cvars" in found:
                return found
    return None


def job_nodes(args: argparse.Namespace) -> Optional[int]:
    """The nodes the target's ranks span, which decides between a remedy for shared memory and
    one for the network: --nodes; one with the flavour's own launcher outside Slurm (every rank
    runs here); the allocation's (at most one per rank) under srun by default; else unknown."""
    if args.nodes is not None:
        return int(args.nodes)
    if args.launcher is not None:
        return None
    if launch.in_slurm_allocation():
        allocation = launch.allocation_nodes()
        return None if allocation is None else min(allocation, args.np)
    return 1


def _probe_from(found: Dict[str, Any], fallback: str, source: str, nodes: Optional[int]) -> Probe:
    """The probe's library; the nodes it reports, when it does, over what tune infers."""
    flavour = str(found.get("flavour") or fallback)
    text = str(found.get("library") or "")
    reported = found.get("nodes")
    if isinstance(reported, int) and not isinstance(reported, bool) and reported > 0:
        nodes = reported
    library = remedies.library_from(flavour, text, found.get("cvars"), nodes)
    return Probe(text, flavour, library, source)


def _read_cvars_file(path: str, fallback: str, nodes: Optional[int]) -> Probe:
    try:
        found = _probe_object(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise MpilensError(f'cannot read --cvars-file "{path}": {error.strerror}') from None
    if found is None:
        raise MpilensError(
            f'--cvars-file "{path}" is not what mpilens-cvars prints: one JSON object with '
            '"library", "flavour" and "cvars"'
        )
    return _probe_from(found, fallback, path, nodes)


# --- running one command -------------------------------------------------------------------------


@dataclass(frozen=True)
class Completed:
    """One command run to its end, or stopped at its timeout (returncode None)."""

    returncode: Optional[int]
    stdout: str
    stderr: str
    seconds: float

    def failure(self, timeout: float) -> Optional[str]:
        """Why the run failed, with the first lines it printed; None when it succeeded."""
        if self.returncode is None:
            how = f"ran longer than the {format_duration(timeout)} timeout and was stopped"
        elif self.returncode < 0:
            how = f"was killed by signal {_signal_name(-self.returncode)}"
        elif self.returncode > 0:
            how = f"exited with status {self.returncode}"
        else:
            return None
        printed = first_lines(self.stderr) or first_lines(self.stdout)
        return f"{how}: {printed}" if printed else how


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def first_lines(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()][:REASON_LINES]
    joined = " | ".join(lines)
    return joined if len(joined) <= REASON_CHARS else joined[: REASON_CHARS - 3] + "..."


def _read(file: IO[bytes]) -> str:
    file.seek(0)
    return file.read().decode("utf-8", errors="replace")


def run_command(command: Sequence[str], own_env: Mapping[str, str], timeout: float) -> Completed:
    """Run command in a session of its own (so that a timeout or an interrupt stops everything
    it started), its output kept in files (a program may print more than a pipe holds); its
    wall time from start to exit."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                list(command),
                env={**os.environ, **own_env},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        except OSError as error:
            return Completed(127, "", f'cannot start "{command[0]}": {error.strerror}', 0.0)
        returncode: Optional[int] = None
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        except KeyboardInterrupt as interrupt:
            launch.stop_job(process, getattr(interrupt, "signum", signal.SIGINT))
            raise
        seconds = time.monotonic() - started
        # Ranks may outlive their launcher; a run that timed out is stopped whole.
        launch.stop_job(process, signal.SIGTERM if returncode is None else signal.SIGKILL)
        return Completed(returncode, _read(out), _read(err), seconds)


# --- settings ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunRecord:
    """One run of one setting: its round (0: the warm-up), its metric, or why it failed."""

    round: int
    value: Optional[float]
    seconds: float
    failure: Optional[str] = None
    results: Optional[str] = None


@dataclass
class Setting:
    """The baseline or a candidate: what its ranks get (variables, LD_PRELOAD included, and
    launcher options), where it comes from, and its runs."""

    name: str
    env: Dict[str, str] = field(default_factory=dict)
    launcher_options: List[str] = field(default_factory=list)
    source: str = BASELINE
    kind: Optional[str] = None
    about: Optional[str] = None
    runs: List[RunRecord] = field(default_factory=list)
    failure: Optional[str] = None

    def value_in(self, round_number: int) -> Optional[float]:
        for run in self.runs:
            if run.round == round_number:
                return run.value
        return None

    @property
    def values(self) -> List[float]:
        return [run.value for run in self.runs if run.round > 0 and run.value is not None]


def _catalogue_setting(
    remedy: remedies.Remedy, target: Target, launcher_word: Optional[str], preload: Optional[Path]
) -> Setting:
    env = remedy.env_for(target.values)
    if preload is not None:
        env["LD_PRELOAD"] = str(preload)
    options = (
        remedies.launcher_options(remedy, launcher_word, target.values) if launcher_word else []
    )
    return Setting(remedy.name, env, options, "catalogue", remedy.kind, remedy.reason)


def _why_not_settable(
    remedy: remedies.Remedy, target: Target, launcher_word: Optional[str]
) -> Optional[str]:
    """Why tune cannot try the remedy on this target, whatever the library; None if it can."""
    if remedy.kind in NOT_SETTABLE:
        what = "its rank order" if remedy.kind == "rank-order" else "the program"
        return f"{remedy.name} is a change to {what} ({remedy.code}): not a setting to try"
    unknown = [name for name in remedy.needs_values if name not in target.values]
    if unknown and target.is_bench:
        known = ", ".join(f"{{{name}}}" for name in target.values)
        return f"{remedy.name} needs a value for {{{unknown[0]}}}; tune fills only {known}"
    if unknown:
        return (
            f"{remedy.name} needs a value for {{{unknown[0]}}}, which tune chooses only for "
            "--bench: set its variables with --try NAME:VAR=VALUE"
        )
    if remedy.kind == "launcher" and launcher_word is None:
        return f"{remedy.name} is a launcher option, and --launcher is none"
    return None


def _refuse_missing(setting: Setting, probe: Probe) -> None:
    missing = remedies.missing_variables(setting.env, probe.library)
    if missing:
        raise MpilensError(
            f'setting "{setting.name}": {missing[0]} is not a control variable of '
            f"{probe.label} (it reports {probe.cvar_count}), so the library would ignore it; "
            "check the name (MPIR_CVAR_* and MPICH_* are MPICH's, OMPI_MCA_* Open MPI's)"
        )


# --- statistics ----------------------------------------------------------------------------------


def binomial_half_cdf(n: int, k: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


def median_ranks(n: int, level: float = LEVEL) -> Optional[Tuple[int, int, float]]:
    """The order statistics (1-based ranks j and n - j + 1) that bound the median of n values
    with a coverage of at least level, the narrowest such pair, and its exact coverage
    1 - 2 P(X <= j - 1); None when even [min, max] falls short (below 6 values at 95%): as the
    C core does (docs/methods/core.md)."""
    best = None
    for j in range(1, (n + 1) // 2 + 1):
        coverage = 1 - 2 * binomial_half_cdf(n, j - 1)
        if coverage < level:
            break
        best = (j, n - j + 1, coverage)
    return best


@dataclass(frozen=True)
class Interval:
    """A median and its confidence interval; coverage below LEVEL means too few values: the
    interval is then [min, max] and decides nothing."""

    median: float
    lo: float
    hi: float
    coverage: float
    n: int

    @property
    def sufficient(self) -> bool:
        return self.coverage >= LEVEL


def median_interval(values: Sequence[float]) -> Optional[Interval]:
    if not values:
        return None
    ordered = sorted(values)
    n = len(ordered)
    middle = n // 2
    median = ordered[middle] if n % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    ranks = median_ranks(n)
    if ranks is None:
        return Interval(median, ordered[0], ordered[-1], 1 - 2 * 0.5**n, n)
    low, high, coverage = ranks
    return Interval(median, ordered[low - 1], ordered[high - 1], coverage, n)


@dataclass(frozen=True)
class Judgement:
    verdict: str
    decided: bool
    reason: str


def span_text(interval: Interval) -> str:
    return f"[{interval.lo:.3f}, {interval.hi:.3f}]"


def judge(ratio: Optional[Interval], min_effect: float, lower_is_better: bool) -> Judgement:
    """better or worse only when the whole interval of the ratio lies beyond the noise band
    [1 - min_effect, 1 + min_effect]; noise otherwise. Decided once the interval crosses
    neither edge of the band: more rounds would then narrow it without changing the verdict."""
    low_edge, high_edge = 1 - min_effect, 1 + min_effect
    band = f"the noise band {low_edge:g}-{high_edge:g}"
    if ratio is None:
        return Judgement("noise", False, "no round measured it")
    if not ratio.sufficient:
        return Judgement(
            "noise",
            False,
            f"{counted(ratio.n, 'round')}: too few for a 95% interval of the median ratio",
        )
    span = span_text(ratio)
    if ratio.hi < low_edge or ratio.lo > high_edge:
        below = ratio.hi < low_edge
        verdict = "better" if below == lower_is_better else "worse"
        where = "below" if below else "above"
        return Judgement(verdict, True, f"the whole interval {span} is {where} {band}")
    if low_edge <= ratio.lo and ratio.hi <= high_edge:
        return Judgement("noise", True, f"the interval {span} lies within {band}")
    if ratio.lo <= 1 <= ratio.hi:
        return Judgement("noise", False, f"the interval {span} contains 1")
    return Judgement("noise", False, f"the interval {span} reaches into {band}")


# --- the plan: everything checked before the first launch ----------------------------------------


@dataclass
class Plan:
    target: Target
    settings: List[Setting]
    outdir: Path
    flavour: Optional[launch.Flavour]
    np: Optional[int]
    launcher: Optional[str]
    nodes: Optional[int]
    probe: Optional[Probe]
    budget: float
    rounds_max: int
    min_effect: float
    timeout: Optional[float]
    bin_dir: Optional[str] = None

    @property
    def direct(self) -> bool:
        return self.launcher == NONE

    @property
    def launcher_word(self) -> Optional[str]:
        """The launcher's command word, the one a launcher remedy's options follow."""
        if self.direct or self.flavour is None:
            return None
        if self.launcher:
            return shlex.split(self.launcher)[0]
        return launch.default_launcher(self.flavour)

    def program(self) -> Path:
        """The benchmark's program (only for --bench)."""
        assert self.flavour is not None
        return launch.find_program(self.target.words[0], self.flavour, self.bin_dir)

    def command(
        self, setting: Setting, output: Optional[Path], program: str
    ) -> Tuple[List[str], Dict[str, str]]:
        """The command of one run of setting, and the variables for the launcher's own
        environment (all of them when there is no launcher, or one mpilens does not know)."""
        words = [program, *self.target.words[1:]]
        if output is not None:
            words += program_tail(output, False)
        if self.direct or self.flavour is None:
            return words, dict(setting.env)
        command = launch.build_command(
            self.flavour,
            self.np or 1,
            words[0],
            words[1:],
            launcher=self.launcher,
            nodes=self.nodes,
            env=setting.env,
        )
        command[1:1] = setting.launcher_options
        return command, launch.process_env(command[0], self.flavour, setting.env)


def _probe(args: argparse.Namespace, flavour: launch.Flavour) -> Probe:
    """The library the target runs under: mpilens-cvars launched as the target is (same launcher,
    same rank count: Open MPI lists its shared-memory transport's variables only then)."""
    if args.cvars_file:
        return _read_cvars_file(args.cvars_file, flavour.value, job_nodes(args))
    program = launch.find_program("mpilens-cvars", flavour, args.bin_dir)
    launcher = None if args.launcher == NONE else args.launcher
    command = launch.build_command(
        flavour, args.np, program, [], launcher=launcher, nodes=args.nodes
    )
    launch.check_launcher(command, None if launcher else flavour)
    done = run_command(command, {}, PROBE_TIMEOUT_S)
    failure = done.failure(PROBE_TIMEOUT_S)
    found = _probe_object(done.stdout) if failure is None else None
    if found is None:
        why = failure or "it printed no JSON object with the variables"
        raise MpilensError(
            f'cannot read the control variables of the library: "{shlex.join(command)}" {why}; '
            "give them with --cvars-file FILE (what mpilens-cvars prints)"
        )
    return _probe_from(found, flavour.value, "mpilens-cvars", job_nodes(args))


def _auto_settings(
    target: Target, probe: Probe, launcher_word: Optional[str]
) -> List[remedies.Remedy]:
    if target.symptom is None:
        return []
    return [
        remedy
        for remedy in remedies.for_symptom(target.symptom, probe.library)
        if _why_not_settable(remedy, target, launcher_word) is None
    ]


def _named_settings(
    names: Sequence[str], target: Target, probe: Probe, launcher_word: Optional[str]
) -> List[remedies.Remedy]:
    chosen = []
    for name in names:
        remedy = remedies.by_name(name)
        why = remedies.why_not(remedy, probe.library) or _why_not_settable(
            remedy, target, launcher_word
        )
        if why is not None:
            raise MpilensError(f"--settings {name}: {why} ({probe.label})")
        chosen.append(remedy)
    return chosen


def _preload(
    remedy: remedies.Remedy, args: argparse.Namespace, flavour: Optional[launch.Flavour]
) -> Optional[Path]:
    if remedy.preload is None or flavour is None:
        return None
    return launch.find_library(remedy.preload, flavour, args.lib_dir, args.bin_dir)


def _settings(
    args: argparse.Namespace,
    target: Target,
    probe: Optional[Probe],
    flavour: Optional[launch.Flavour],
    launcher_word: Optional[str],
) -> List[Setting]:
    """The candidates, every one checked against the library; refused in one line otherwise."""
    chosen: List[remedies.Remedy] = []
    if probe is not None and args.settings == AUTO:
        chosen = _auto_settings(target, probe, launcher_word)
        if flavour is not None and not _found_library("mpilens-progress", args, flavour):
            skipped = [r.name for r in chosen if r.preload]
            chosen = [r for r in chosen if not r.preload]
            if skipped:
                print(
                    "mpilens: note: libmpilens-progress.so not found (run make build, or give "
                    f"--lib-dir): {', '.join(skipped)} left out",
                    file=sys.stderr,
                )
    elif probe is not None and args.settings != NONE:
        chosen = _named_settings(_setting_names(args.settings), target, probe, launcher_word)
    settings = [
        _catalogue_setting(r, target, launcher_word, _preload(r, args, flavour)) for r in chosen
    ]
    settings += [Setting(name, env, source="try") for name, env in args.tries]
    names = [setting.name for setting in settings]
    for name in names:
        if names.count(name) > 1:
            raise MpilensError(f'two settings are named "{name}": give each --try its own name')
    if probe is not None:
        for setting in settings:
            _refuse_missing(setting, probe)
    if not settings:
        why = (
            f" ({target.family} {target.bench} shows no symptom the catalogue treats)"
            if args.settings == AUTO and target.symptom is None
            else ""
        )
        raise MpilensError(
            f"no setting to try{why}: name remedies with --settings LIST, or give --try "
            "NAME:VAR=VALUE"
        )
    return settings


def _found_library(name: str, args: argparse.Namespace, flavour: launch.Flavour) -> bool:
    try:
        launch.find_library(name, flavour, args.lib_dir, args.bin_dir)
    except MpilensError:
        return False
    return True


def default_output() -> Path:
    return Path("results") / f"tune-{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def plan_of(args: argparse.Namespace) -> Plan:
    """Every check made before anything is measured: options, target, library, settings, the
    launcher and the output directory."""
    args.tries = [parse_try(text) for text in args.try_]
    target = target_of(args)
    if args.settings is None:
        args.settings = AUTO if target.is_bench else NONE
    if args.settings == AUTO and not target.is_bench:
        raise MpilensError(
            "--settings auto needs --bench, whose symptom chooses the remedies; for a program, "
            "name them with --settings LIST or give --try NAME:VAR=VALUE"
        )
    budget = parse_duration(args.budget, "--budget")
    timeout = None if args.timeout is None else parse_duration(args.timeout, "--timeout")
    rounds_max, min_effect = parse_rounds(args.rounds_max), parse_min_effect(args.min_effect)
    if median_ranks(rounds_max) is None:
        print(
            f"mpilens: warning: --rounds-max {rounds_max} is too few for a 95% interval of a "
            "median: every verdict will be noise",
            file=sys.stderr,
        )
    outdir = Path(args.output) if args.output else default_output()
    if (outdir / TUNE_FILE).exists():
        raise MpilensError(f'"{outdir / TUNE_FILE}" already exists; choose another --output')
    # A catalogue remedy applies or not by the library; a variable of --try that names a
    # control variable is checked against the library's list. Both need the library.
    catalogue = args.settings != NONE
    named_cvars = any(v.startswith(CVAR_PREFIXES) for _, env in args.tries for v in env)
    needs_probe = catalogue or named_cvars
    flavour = None
    if args.launcher != NONE or needs_probe:
        flavour = launch.resolve_flavour(args.mpi)
    if flavour is not None and target.is_bench:
        # A missing build is refused before the probe launches anything.
        launch.find_program(target.words[0], flavour, args.bin_dir)
    probe = _probe(args, flavour) if flavour is not None and needs_probe else None
    plan = Plan(
        target,
        [],
        outdir,
        flavour,
        None if args.launcher == NONE else args.np,
        args.launcher,
        args.nodes,
        probe,
        budget,
        rounds_max,
        min_effect,
        timeout,
        args.bin_dir,
    )
    plan.settings = [
        Setting(BASELINE),
        *_settings(args, target, probe, flavour, plan.launcher_word),
    ]
    return plan


# --- measuring -----------------------------------------------------------------------------------


class _RunFailed(Exception):
    """A run that succeeded but whose metric cannot be read."""


def _point_value(target: Target, point: results.Record) -> Optional[float]:
    """A point's share of the metric. overlap: T_measured with the 0-byte latency it had
    subtracted added back, i.e. the median time of the sequence as the ranks measured it. lat0
    comes from another measurement (a ping-pong), which a progress thread on shared cores can
    slow by milliseconds, making T_measured negative: it has no place in a comparison of
    settings. coll: the estimate of the operation's latency (oli)."""
    stats = point["stats"]
    if target.family == "coll":
        return results.record_number(stats.get("latency_ns"))
    measured = results.record_number(stats.get("t_measured_ns"))
    lat0 = results.record_number(stats.get("lat0_ns")) or 0.0
    return None if measured is None else measured + lat0


def _bench_value(target: Target, path: Path) -> float:
    try:
        run = results.load(path)
    except MpilensError as error:
        raise _RunFailed(str(error)) from None
    points = run.points_of(target.bench or "") if target.family == "overlap" else run.points
    if not points:
        skips = "; ".join(run.note_texts("skip"))
        raise _RunFailed(
            f"it measured no point of {target.bench}" + (f": {skips}" if skips else "")
        )
    total = 0.0
    for point in points:
        value = _point_value(target, point)
        if value is None:
            raise _RunFailed(f"its point {point.get('key')} has no value")
        total += value
    return total


def _printed_value(target: Target, done: Completed) -> float:
    """The first number in what --metric matches (its first group, or the whole match), in
    what the run printed on stdout, else on stderr."""
    assert target.regex is not None
    for text in (done.stdout, done.stderr):
        match = target.regex.search(text)
        if match:
            found = (match.group(1) if target.regex.groups else match.group(0)) or ""
            number = _NUMBER.search(found)
            if number is None:
                raise _RunFailed(f'--metric matched "{found}", which holds no number')
            return float(number.group(0))
    raise _RunFailed(f"its output has no match for --metric {target.regex.pattern}")


def metric_value(target: Target, done: Completed, output: Optional[Path]) -> float:
    if output is not None:
        value = _bench_value(target, output)
    elif target.regex is not None:
        value = _printed_value(target, done)
    else:
        value = done.seconds
    if not value > 0 or not math.isfinite(value):
        raise _RunFailed(f"its metric is {value}: ratios need a positive number")
    return value


class Runner:
    """Runs the settings of a plan, one run at a time, keeping each run's record."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.program = str(plan.program()) if plan.target.is_bench else plan.target.words[0]

    def output(self, setting: Setting, label: str) -> Optional[Path]:
        if not self.plan.target.is_bench:
            return None
        return self.plan.outdir / "runs" / setting.name / f"{label}.jsonl"

    def measure(self, setting: Setting, round_number: int, timeout: float) -> RunRecord:
        label = f"round-{round_number}" if round_number else "warmup"
        output = self.output(setting, label)
        if output is not None:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.unlink(missing_ok=True)
        command, own_env = self.plan.command(setting, output, self.program)
        if round_number == 0:
            shown_env = _env_words(own_env)
            print(f"mpilens: running {shlex.join([*shown_env, *command])}", file=sys.stderr)
        done = run_command(command, own_env, timeout)
        shown = None if output is None else str(output.relative_to(self.plan.outdir))
        failure = done.failure(timeout)
        if failure is None:
            try:
                value = metric_value(self.plan.target, done, output)
                return RunRecord(round_number, value, done.seconds, None, shown)
            except _RunFailed as error:
                failure = str(error)
        return RunRecord(round_number, None, done.seconds, failure, shown)


class RoundProgress(Progress):
    """The progress line of tune: the round and the run within it, how many candidates are still
    undecided, and the time spent against the budget."""

    def __init__(self, plan: Plan) -> None:
        super().__init__("tune")
        self.plan = plan
        self.begun = self.clock()
        self.round = 0
        self.undecided = len(plan.settings) - 1

    def line(self, done: int, total: Optional[int]) -> str:
        return (
            f"tune: round {self.round} (at most {self.plan.rounds_max}), run {done} of {total}, "
            f"{self.undecided} of {len(self.plan.settings) - 1} settings undecided, elapsed "
            f"{format_duration(self.clock() - self.begun)} of {format_duration(self.plan.budget)}"
        )


# Why tuning stopped (tune.json's "stopped"), in words.
STOPPED = {
    "decided": "every verdict decided",
    "budget": "the time budget was spent",
    "rounds-max": "the round limit was reached",
    "no-setting-left": "every setting failed",
    "baseline-failed": "the baseline failed",
    "interrupted": "interrupted",
    "running": "still running",
}


@dataclass
class Outcome:
    plan: Plan
    rounds: int = 0
    stopped: str = "running"
    started: str = ""
    elapsed: float = 0.0
    # The timeout of the runs: --timeout, else set by the warm-up.
    timeout: Optional[float] = None


class BaselineFailed(MpilensError):
    """The baseline could not be measured: nothing can be compared."""


def verdicts(plan: Plan) -> Dict[str, Tuple[Optional[Interval], Judgement]]:
    """Each candidate's ratio interval and judgement, from the rounds measured so far."""
    baseline = plan.settings[0]
    judged = {}
    for setting in plan.settings[1:]:
        interval = median_interval([ratio for _, ratio in _ratios(setting, baseline)])
        if setting.failure is not None:
            judged[setting.name] = (interval, Judgement("failed", True, setting.failure))
        else:
            lower = plan.target.metric.lower_is_better
            judged[setting.name] = (interval, judge(interval, plan.min_effect, lower))
    return judged


def _ratios(setting: Setting, baseline: Setting) -> List[Tuple[int, float]]:
    """(round, candidate / baseline of that round) for every round both were measured."""
    pairs = []
    for run in setting.runs:
        base = baseline.value_in(run.round)
        if run.round > 0 and run.value is not None and base:
            pairs.append((run.round, run.value / base))
    return pairs


def _warm_up(runner: Runner, plan: Plan) -> float:
    """A first baseline run, not counted: it warms caches, stops the tuning at once when the
    baseline cannot run, and sets the timeout of the runs that follow."""
    baseline = plan.settings[0]
    record = runner.measure(baseline, 0, plan.timeout or plan.budget)
    baseline.runs.append(record)
    if record.failure is not None:
        raise BaselineFailed(
            f"the baseline (no setting) failed, so nothing can be compared: {record.failure}"
        )
    return plan.timeout or max(MIN_TIMEOUT_S, TIMEOUT_FACTOR * record.seconds)


def _note(progress: Progress, text: str) -> None:
    progress.finish()
    print(f"mpilens: {text}", file=sys.stderr, flush=True)


def _run_round(
    runner: Runner, plan: Plan, number: int, timeout: float, progress: RoundProgress
) -> None:
    """Every setting still in the running once, in an order shuffled by the round's number."""
    active = [s for s in plan.settings if s.failure is None]
    random.Random(number).shuffle(active)
    progress.round = number
    for done, setting in enumerate(active):
        progress.update(done, len(active))
        record = runner.measure(setting, number, timeout)
        setting.runs.append(record)
        if record.failure is None:
            continue
        if setting.name == BASELINE:
            raise BaselineFailed(
                f"the baseline (no setting) failed in round {number}: {record.failure}"
            )
        setting.failure = f"round {number}: {record.failure}"
        _note(
            progress,
            f'setting "{setting.name}" failed in round {number} and is not run again: '
            f"{record.failure}",
        )
    progress.update(len(active), len(active))


def _stop_reason(plan: Plan, rounds: int, elapsed: float, next_round: float) -> Optional[str]:
    """Why to stop after `rounds` rounds, the next expected to take next_round seconds; None to
    go on."""
    judged = verdicts(plan).values()
    if all(judgement.verdict == "failed" for _, judgement in judged):
        return "no-setting-left"
    if rounds >= MIN_ROUNDS and all(judgement.decided for _, judgement in judged):
        return "decided"
    if rounds >= plan.rounds_max:
        return "rounds-max"
    if elapsed + next_round > plan.budget:
        return "budget"
    return None


def tune(plan: Plan) -> Outcome:
    """The rounds, until every verdict is decided, the budget is spent or the round limit
    reached; tune.json is rewritten after every round, so an interrupted tuning keeps what it
    measured."""
    outcome = Outcome(plan, started=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    runner = Runner(plan)
    progress = RoundProgress(plan)
    begun = time.monotonic()
    try:
        outcome.timeout = _warm_up(runner, plan)
        # Until a round has been timed, a round is taken to last as many warm-ups as settings.
        next_round = plan.settings[0].runs[0].seconds * len(plan.settings)
        while True:
            outcome.elapsed = time.monotonic() - begun
            stop = _stop_reason(plan, outcome.rounds, outcome.elapsed, next_round)
            if stop is not None:
                outcome.stopped = stop
                break
            round_begun = time.monotonic()
            _run_round(runner, plan, outcome.rounds + 1, outcome.timeout, progress)
            outcome.rounds += 1
            next_round = time.monotonic() - round_begun
            progress.undecided = sum(not j.decided for _, j in verdicts(plan).values())
            write_json(outcome)
    except BaselineFailed:
        outcome.stopped = "baseline-failed"
        _finish(outcome, progress, begun)
        raise
    except KeyboardInterrupt:
        outcome.stopped = "interrupted"
        _finish(outcome, progress, begun)
        raise
    _finish(outcome, progress, begun)
    return outcome


def _finish(outcome: Outcome, progress: Progress, begun: float) -> None:
    progress.finish()
    outcome.elapsed = time.monotonic() - begun
    write_json(outcome)


# --- outputs -------------------------------------------------------------------------------------


def _interval_json(interval: Optional[Interval]) -> Dict[str, Any]:
    if interval is None:
        return {"median": None, "ci": None, "ci_coverage": None}
    return {
        "median": interval.median,
        "ci": [interval.lo, interval.hi],
        "ci_coverage": interval.coverage,
    }


def _runs_json(setting: Setting, baseline: Setting) -> List[Dict[str, Any]]:
    ratios = dict(_ratios(setting, baseline)) if setting is not baseline else {}
    return [
        {
            "round": run.round,
            "value": run.value,
            "ratio": ratios.get(run.round),
            "seconds": run.seconds,
            "failure": run.failure,
            "results": run.results,
        }
        for run in setting.runs
    ]


def best_of(plan: Plan) -> Optional[Setting]:
    """The better setting with the best median ratio; None when none is better beyond noise."""
    judged = verdicts(plan)
    better = [s for s in plan.settings[1:] if judged[s.name][1].verdict == "better"]
    sign = 1 if plan.target.metric.lower_is_better else -1

    def ratio(setting: Setting) -> float:
        interval = judged[setting.name][0]
        return sign * interval.median if interval else math.inf

    return min(better, key=ratio) if better else None


def _target_json(plan: Plan) -> Dict[str, Any]:
    launcher = plan.launcher or (plan.launcher_word if plan.flavour else None)
    return {
        "kind": "bench" if plan.target.is_bench else "program",
        "family": plan.target.family,
        "bench": plan.target.bench,
        "command": list(plan.target.words),
        "np": plan.np,
        "nodes": plan.nodes,
        "mpi": plan.flavour.value if plan.flavour else None,
        "launcher": launcher,
    }


def document(outcome: Outcome) -> Dict[str, Any]:
    """What tune.json holds (docs/results-schema.md, "tune.json")."""
    plan = outcome.plan
    baseline = plan.settings[0]
    judged = verdicts(plan)
    best = best_of(plan)
    probe = plan.probe
    settings = []
    for setting in plan.settings[1:]:
        ratio, judgement = judged[setting.name]
        settings.append(
            {
                "name": setting.name,
                "source": setting.source,
                "kind": setting.kind,
                "about": setting.about,
                "env": setting.env,
                "launcher_options": setting.launcher_options,
                **_interval_json(median_interval(setting.values)),
                "ratio": ratio.median if ratio else None,
                "ratio_ci": [ratio.lo, ratio.hi] if ratio else None,
                "ratio_ci_coverage": ratio.coverage if ratio else None,
                "verdict": judgement.verdict,
                "decided": judgement.decided,
                "reason": judgement.reason,
                "runs": _runs_json(setting, baseline),
            }
        )
    metric = plan.target.metric
    return {
        "schema": SCHEMA,
        "metric": {
            "name": metric.name,
            "unit": metric.unit,
            "lower_is_better": metric.lower_is_better,
        },
        "target": _target_json(plan),
        "library": {
            "text": probe.text if probe else None,
            "flavour": probe.flavour if probe else (plan.flavour.value if plan.flavour else None),
            "cvars_count": probe.cvar_count if probe else None,
            "nodes": probe.library.nodes if probe else None,
            "source": probe.source if probe else None,
        },
        "baseline": {
            "name": BASELINE,
            **_interval_json(median_interval(baseline.values)),
            "runs": _runs_json(baseline, baseline),
        },
        "settings": settings,
        "best": best.name if best else None,
        "rounds": outcome.rounds,
        "stopped": outcome.stopped,
        "min_effect": plan.min_effect,
        "level": LEVEL,
        "budget_s": plan.budget,
        "rounds_max": plan.rounds_max,
        "timeout_s": outcome.timeout,
        "elapsed_s": outcome.elapsed,
        "date": outcome.started,
        "mpilens_version": __version__,
    }


def write_json(outcome: Outcome) -> Path:
    """tune.json, replaced whole (written beside it, then renamed), so a reader never sees half."""
    path = outcome.plan.outdir / TUNE_FILE
    partial = path.with_name(f".{TUNE_FILE}.partial")
    partial.write_text(json.dumps(document(outcome), indent=1) + "\n", encoding="utf-8")
    partial.replace(path)
    return path


def _env_words(env: Mapping[str, str]) -> List[str]:
    return [f"{name}={value}" for name, value in env.items()]


def how_to_apply(plan: Plan, setting: Setting) -> str:
    """The command that runs a program under the setting, as one would type it."""
    if plan.direct or plan.flavour is None:
        return shlex.join(["env", *_env_words(setting.env), *plan.target.words])
    program = "./your-program" if plan.target.is_bench else plan.target.words[0]
    command, own_env = plan.command(setting, None, program)
    if plan.target.is_bench:
        command = command[: command.index(program) + 1]
    return shlex.join([*_env_words(own_env), *command])


def write_best(plan: Plan, best: Setting) -> List[Path]:
    """best.env (export lines of the variables) and best.launcher (the launcher's options)."""
    env_path, launcher_path = plan.outdir / "best.env", plan.outdir / "best.launcher"
    lines = [
        f'# mpilens tune: the best setting, "{best.name}". Variables for the ranks: pass them',
        "# through the launcher (mpirun -x, mpiexec -genv, srun --export) or source this file",
        "# in a script the launcher starts; LD_PRELOAD in the launcher's own shell loads the",
        "# library into the launcher too.",
        *(f"export {name}={shlex.quote(value)}" for name, value in best.env.items()),
    ]
    env_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    launcher_path.write_text(shlex.join(best.launcher_options) + "\n", encoding="utf-8")
    return [env_path, launcher_path]


def format_value(value: Optional[float], unit: Optional[str]) -> str:
    if value is None:
        return "n/a"
    if unit == "ns":
        return format_time(value)
    if unit == "s":
        return format_time(value * 1e9)
    return f"{value:.4g}"


def table_lines(outcome: Outcome) -> List[str]:
    """setting, median, ratio [95% CI], verdict, then the reason, unaligned (it is long)."""
    plan = outcome.plan
    unit = plan.target.metric.unit
    base = median_interval(plan.settings[0].values)
    rows = [["setting", "median", "ratio [95% CI]", "verdict"]]
    rows.append([BASELINE, format_value(base.median if base else None, unit), "1", ""])
    reasons = ["reason", ""]
    judged = verdicts(plan)
    for setting in plan.settings[1:]:
        ratio, judgement = judged[setting.name]
        own = median_interval(setting.values)
        shown = f"{ratio.median:.3f} {span_text(ratio)}" if ratio is not None else "n/a"
        rows.append([setting.name, format_value(own.median if own else None, unit), shown])
        rows[-1].append(judgement.verdict)
        reasons.append(judgement.reason)
    return [f"{line}  {reason}".rstrip() for line, reason in zip(columns(rows, left=1), reasons)]


def final_line(plan: Plan, best: Optional[Setting]) -> str:
    band = f"±{plan.min_effect * 100:g}%"
    if best is None:
        return (
            f"best: none: no setting beat the baseline beyond noise ({band}); keep the library's "
            "defaults"
        )
    ratio = verdicts(plan)[best.name][0]
    assert ratio is not None
    what = "metric" if plan.target.metric.lower_is_better else "metric (higher is better)"
    return (
        f"best: {best.name}, {ratio.median:.3f}x the baseline's {what} {span_text(ratio)}; "
        f"apply it: {how_to_apply(plan, best)} (variables in "
        f"{plan.outdir / 'best.env'}, launcher options in {plan.outdir / 'best.launcher'})"
    )


def _announce(plan: Plan) -> None:
    probe = plan.probe
    if probe is not None:
        print(
            f"mpilens: library {probe.label} ({probe.cvar_count} control variables)",
            file=sys.stderr,
        )
    for setting in plan.settings[1:]:
        words = shlex.join([*_env_words(setting.env), *setting.launcher_options])
        print(f"mpilens: setting {setting.name}: {words}", file=sys.stderr)
    candidates = counted(len(plan.settings) - 1, "setting")
    print(
        f"mpilens: tuning {plan.target.metric.name} against {candidates}, "
        f"at least {MIN_ROUNDS} rounds, at most {plan.rounds_max}, within "
        f"{format_duration(plan.budget)}",
        file=sys.stderr,
        flush=True,
    )


def run(args: argparse.Namespace) -> None:
    """The command: plan (every check), measure, write and print."""
    plan = plan_of(args)
    if not plan.direct:
        assert plan.flavour is not None
        program = str(plan.program()) if plan.target.is_bench else plan.target.words[0]
        command, _ = plan.command(plan.settings[0], None, program)
        launch.check_launcher(command, None if plan.launcher else plan.flavour)
        warn_if_oversubscribed(args)
    ensure_writable(plan.outdir)
    _announce(plan)
    outcome = tune(plan)
    best = best_of(plan)
    written = [plan.outdir / TUNE_FILE] + (write_best(plan, best) if best else [])
    for line in table_lines(outcome):
        print(line)
    print(f"stopped: {STOPPED[outcome.stopped]} after {counted(outcome.rounds, 'round')}")
    for path in written:
        print(f"results: {path}")
    print(final_line(plan, best))


# --- the command line ----------------------------------------------------------------------------

USAGE = (
    "mpilens tune --bench FAMILY:BENCH [--settings LIST|auto|none] [--try NAME:VAR=VALUE,...]... "
    "[options]\n       mpilens tune [--try NAME:VAR=VALUE,...]... [--metric REGEX] [options] -- "
    "PROGRAM [ARGS...]"
)
HELP = "prove a fix by measuring it: a benchmark or your program under candidate settings"
DESCRIPTION = (
    "Run a target (an mpilens benchmark, or PROGRAM) without any setting and under each "
    "candidate setting, interleaved in rounds, and say which settings are better or worse than "
    "the baseline beyond noise, with a 95% confidence interval of the ratio; writes "
    "DIR/tune.json, and DIR/best.env and DIR/best.launcher when a setting wins (docs/tune.md)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_launch_options(parser, None)
    # tune's own default directory: its --output replaces the launch options' one.
    parser.conflict_handler = "resolve"
    group = parser.add_argument_group("output")
    group.add_argument(
        "--output",
        metavar="DIR",
        help="where to write tune.json, best.env, best.launcher and each run's results "
        "(default results/tune-<YYYYmmdd-HHMMSS>/)",
    )
    add_lib_dir(group, "mpilens-progress")
    group = parser.add_argument_group("tune options")
    group.add_argument(
        "--bench",
        metavar="FAMILY:BENCH",
        help="an mpilens benchmark as the target: overlap:BENCH (a benchmark of mpilens-overlap) "
        "or coll:OP (an operation of mpilens-coll), over a short fixed sweep",
    )
    group.add_argument(
        "--settings",
        metavar="LIST|auto|none",
        help="remedies of the catalogue to try, separated by commas; auto: those that treat the "
        "benchmark's symptom and apply to the library; none: only --try (default: auto with "
        "--bench, none with a program)",
    )
    group.add_argument(
        "--try",
        dest="try_",
        action="append",
        default=[],
        metavar="NAME:VAR=VALUE,...",
        help="a setting of your own: variables given to the ranks (repeat for several)",
    )
    group.add_argument(
        "--budget", default=DEFAULT_BUDGET, metavar="TIME",
        help=f"stop after this long, such as 90s, 5m or 1h (default {DEFAULT_BUDGET})",
    )  # fmt: skip
    group.add_argument(
        "--rounds-max", default=str(DEFAULT_ROUNDS_MAX), metavar="N",
        help=f"stop after N rounds (default {DEFAULT_ROUNDS_MAX}; at least {MIN_ROUNDS})",
    )  # fmt: skip
    group.add_argument(
        "--min-effect", default=str(DEFAULT_MIN_EFFECT), metavar="F",
        help="half-width of the noise band around a ratio of 1, such as 0.02 or 2%% (default "
        f"{DEFAULT_MIN_EFFECT})",
    )  # fmt: skip
    group.add_argument(
        "--timeout", metavar="TIME",
        help=f"stop a run after this long and count its setting as failed (default: "
        f"{TIMEOUT_FACTOR}x the baseline's first run, at least {MIN_TIMEOUT_S:g}s)",
    )  # fmt: skip
    group.add_argument(
        "--metric", metavar="REGEX",
        help="with a program: its metric is the first number its output matches (the first "
        "group, or the whole match), not its wall time",
    )  # fmt: skip
    group.add_argument(
        "--higher-is-better", action="store_true",
        help="with --metric: a higher number is better (a rate, a throughput)",
    )  # fmt: skip
    group.add_argument(
        "--cvars-file", metavar="FILE",
        help="the library's control variables as mpilens-cvars prints them, instead of "
        "launching mpilens-cvars",
    )  # fmt: skip
    parser.add_argument(
        "program",
        nargs=argparse.REMAINDER,
        metavar="-- PROGRAM [ARGS...]",
        help="the program to tune and its arguments, after -- (instead of --bench); with "
        "--launcher none it runs as given, once, without a launcher",
    )
