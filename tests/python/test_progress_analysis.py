"""The progress analysis on synthetic studies whose answers are known: the files of one study
read as one run, the curves of seed 002 figures 7 to 10, the diagnosis (factors, the time-based
against work-based contrast, where the threads ran, asynchronous progress, interrupts, notes),
the printed table and the comparison of two studies."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpilens import results
from mpilens.analysis import progress as pg
from mpilens.errors import MpilensError
from mpilens.results import Run

from conftest import assert_warned_once

KIB, MIB = 1 << 10, 1 << 20
SIZES = (256 * KIB, MIB, 4 * MIB)
INTERVALS = (64 * KIB, 256 * KIB, MIB)
# The blocking time of the ping-pong; a collective's is twice as long.
T_B = {256 * KIB: 40_000.0, MIB: 130_000.0, 4 * MIB: 500_000.0}
# Without help the program loses 80% of t_b; MPI_Test cuts it by the factor of its interval
# (256 KiB best: 2×), the progress thread on a spare core 10×, the thread sharing a core 8×
# time-based but barely work-based; the library's asynchronous progress changes nothing.
NONE_SHARE = 0.8
INTERVAL_FACTOR = {64 * KIB: 0.9, 256 * KIB: 0.5, MIB: 0.7}
POLL, YIELD, ASYNC = "thread:poll,cpu=2", "thread:yield", "async:MPIR_CVAR_ASYNC_PROGRESS=1"
SETTING_FACTOR = {pg.NONE: {"time": 1.0, "work": 1.0}, POLL: {"time": 0.1, "work": 0.1},
                  YIELD: {"time": 0.125, "work": 0.9}, ASYNC: {"time": 1.01, "work": 1.01}}
PRESENT = "MPILENS_PROGRESS is set but libmpilens-progress is not loaded (add -x LD_PRELOAD)"


def sample(median: float, noise: float = None) -> dict:
    """A sample whose 95% interval reaches 2% of the median (plus 10 ns) either side."""
    noise = abs(median) * 0.02 + 10 if noise is None else noise
    return {"unit": "ns", "n": 10, "median": median, "ci_lo": median - noise,
            "ci_hi": median + noise, "stop": "fixed"}


def prefix(op: str) -> str:
    return "p2p" if op == "p2p" else f"nbc/op={op}"


def params(op: str, size: int, setting: str, **extra) -> dict:
    found = {"size_bytes": size, **extra, "progress": setting}
    return found if op == "p2p" else {"op": op, **found, "ranks": 2}


def point(op: str, key: str, params_: dict, stats: dict) -> dict:
    return {"type": "point", "family": "progress", "bench": "p2p" if op == "p2p" else "nbc",
            "key": f"{prefix(op)}/{key}", "params": params_, "stats": stats}


def blocking_point(op: str, size: int, t_b: float, setting: str = "none") -> dict:
    return point(op, f"size={size}/strategy=blocking",
                 params(op, size, setting, strategy="blocking"),
                 {"t_b_ns": t_b, "sample": sample(t_b)})


def overhead_point(op: str, kind: str, size: int, t_o: float, t_b: float,
                   setting: str = "none", interval: int = None, noise: float = None) -> dict:
    strategy = "none" if interval is None else "test"
    key = f"size={size}/compute={kind}/strategy={strategy}" \
        + ("" if interval is None else f"/interval={interval}")
    extra = {} if interval is None else {"interval_bytes": interval}
    tests = 0 if interval is None else size // interval + 1
    return point(op, key, params(op, size, setting, compute=kind, strategy=strategy, **extra),
                 {"t_b_ns": t_b, "t_o_ns": t_o, "tests": tests, "sample": sample(t_o, noise)})


def best_point(op: str, kind: str, size: int, candidates: dict, setting: str = "none") -> dict:
    interval = min(candidates, key=lambda i: candidates[i])
    return point(op, f"size={size}/compute={kind}/strategy=test-best",
                 params(op, size, setting, compute=kind, strategy="test-best",
                        interval_bytes=interval),
                 {"t_o_ns": candidates[interval], "tests": size // interval + 1,
                  "from_key": f"{prefix(op)}/size={size}/compute={kind}/strategy=test/"
                              f"interval={interval}",
                  "candidates": [{"interval_bytes": i, "t_o_ns": t} for i, t in
                                 candidates.items()]})


def interrupts_point(rate: int = 8192, achieved: float = 8100.0, per: float = 6800.0,
                     t1: float = 1e9, t2: float = 1.015e9, threads: int = 4) -> dict:
    return {"type": "point", "family": "progress", "bench": "interrupts",
            "key": f"interrupts/rate_hz={rate}",
            "params": {"rate_hz": rate, "work_ns": 1e9, "rounds": 7, "progress": "none"},
            "stats": {"threads": threads, "t1_ns": t1, "t2_ns": t2, "wakeups": achieved * t2 / 1e9,
                      "achieved_hz": achieved, "per_interrupt_ns": per, "spread": 0.02}}


def t_b(op: str, size: int) -> float:
    return T_B[size] * (1 if op == "p2p" else 2)


def t_o(op: str, kind: str, size: int, setting: str = "none") -> float:
    return NONE_SHARE * t_b(op, size) * SETTING_FACTOR[setting][kind]


def setting_points(setting: str, ops=("p2p", "iallreduce"), tests: bool = None,
                   sizes=SIZES) -> list:
    """A file's points, in the order the program writes them."""
    tests = setting == pg.NONE if tests is None else tests
    points = []
    for op in ops:
        for size in sizes:
            points.append(blocking_point(op, size, t_b(op, size), setting))
            for kind in pg.KINDS:
                points.append(overhead_point(op, kind, size, t_o(op, kind, size, setting),
                                             t_b(op, size), setting))
                if tests:
                    candidates = {i: t_o(op, kind, size) * f for i, f in INTERVAL_FACTOR.items()}
                    points += [overhead_point(op, kind, size, value, t_b(op, size), setting, i)
                               for i, value in candidates.items()]
                    points.append(best_point(op, kind, size, candidates, setting))
    return points


def library(running=(False, False), cpus=(-1, -1), mode: str = "none", reason: str = "") -> dict:
    return {"loaded": any(running) or mode != "none", "running": running[0], "mode": mode,
            "interval_us": 0, "cpu": cpus[0], "realtime": False, "reason": reason,
            "running_per_rank": list(running), "cpu_per_rank": list(cpus)}


def progress_meta(label: str, total: int, lib: dict = None, env: dict = None,
                  binding=("0", "1"), cpus_online: int = 4, flavour: str = "mpich",
                  thread_level: str = "funneled") -> dict:
    return {"type": "meta", "schema": 1, "family": "progress", "program": "mpilens-progress",
            "mpilens_version": "0.1.0", "date": "2026-11-22T13:17:56Z",
            "command": ["mpilens-progress"],
            "mpi": {"library": "MPICH Version:\t4.0.2" if flavour == "mpich"
                    else "Open MPI v4.1.4", "flavour": flavour, "thread_level": thread_level},
            "ranks": 2, "nodes": 1, "hosts": ["vm", "vm"], "binding": list(binding),
            "cpus_online": cpus_online, "env": env or {},
            "options": {"preset": "quick", "thread-level": "funneled"}, "points_total": total,
            "progress_setting": {"label": label, "library": lib or library(), "env": env or {},
                                 "thread_level": thread_level}}


def progress_run(label: str, points: list, name: str = None, notes: list = (), **meta) -> Run:
    name = name or ("progress-none.jsonl" if label == pg.NONE
                    else f"progress-{label.replace(':', '-').replace(',', '-')}.jsonl")
    return Run(path=Path("results") / name, meta=progress_meta(label, len(points), **meta),
               points=points, notes=list(notes))


def poll_run(cpus=(2, 3), **meta) -> Run:
    return progress_run(POLL, setting_points(POLL), env={"MPILENS_PROGRESS": "poll,cpu=2"},
                        lib=library((True, True), cpus, "poll"), **meta)


def yield_run() -> Run:
    return progress_run(YIELD, setting_points(YIELD), env={"MPILENS_PROGRESS": "yield"},
                        lib=library((True, True), (-1, -1), "yield"), thread_level="multiple")


def async_run() -> Run:
    env = {"MPIR_CVAR_ASYNC_PROGRESS": "1"}
    return progress_run(ASYNC, setting_points(ASYNC), env=env, thread_level="multiple")


def none_run(flavour: str = "mpich") -> Run:
    return progress_run(pg.NONE, setting_points(pg.NONE) + [interrupts_point()],
                        flavour=flavour)


def study() -> Run:
    return pg.combine([yield_run(), async_run(), none_run(), poll_run()])


@pytest.fixture(scope="module")
def whole() -> Run:
    return study()


# --- combine -------------------------------------------------------------------------------------

def one_sentence(run: Run, start: str) -> str:
    """The one sentence of run's diagnosis that starts with `start` (fails if none or several)."""
    (sentence,) = [s for s in pg.diagnose(run) if s.startswith(start)]
    return sentence


def test_combine_orders_members_none_first_and_sums_the_plan(whole):
    assert [member.path.name for member in whole.members] == [
        "progress-none.jsonl", "progress-async-MPIR_CVAR_ASYNC_PROGRESS=1.jsonl",
        "progress-thread-poll-cpu=2.jsonl", "progress-thread-yield.jsonl"]
    assert whole.path == Path("results/progress.jsonl")
    assert whole.meta["progress_setting"]["label"] == "none"
    assert whole.points_total == sum(len(member.points) for member in whole.members)
    assert len(whole.points) == whole.points_total and whole.complete
    assert pg.settings(whole) == ["none", ASYNC, POLL, YIELD]


def test_combine_twice_or_a_file_twice_changes_nothing(whole):
    again = pg.combine([whole, whole.members[2]])
    assert [m.path for m in again.members] == [m.path for m in whole.members]
    assert again.points == whole.points and again.points_total == whole.points_total


def test_combine_refuses_the_same_point_under_the_same_setting_in_two_files():
    first = none_run()
    copy = progress_run(pg.NONE, setting_points(pg.NONE, ops=("p2p",)), name="again.jsonl")
    with pytest.raises(MpilensError, match=r'"results/again.jsonl" and '
                                           r'"results/progress-none.jsonl" both hold point '
                                           r'"p2p/size=262144/strategy=blocking" under progress '
                                           r'setting "none"'):
        pg.combine([first, copy])
    # the same keys under another setting are another measurement
    assert len(pg.combine([first, poll_run()]).members) == 2


def test_combine_refuses_other_families():
    other = Run(path=Path("results/sanity.jsonl"),
                meta={"family": "sanity", "points_total": 0, "schema": 1})
    with pytest.raises(MpilensError, match="different families"):
        pg.combine([none_run(), other])
    with pytest.raises(MpilensError, match="no progress results"):
        pg.combine([])


# --- curves --------------------------------------------------------------------------------------

def test_curves_hold_exactly_the_values_given(whole):
    found = pg.measurements(whole)
    assert pg.operations_measured(found) == ["p2p", "iallreduce"]
    assert pg.kinds_measured(found, "p2p") == ["time", "work"]
    assert pg.curve(found, "p2p", "time") == {256 * KIB: 32_000, MIB: 104_000, 4 * MIB: 400_000}
    assert pg.curve(found, "iallreduce", "work", POLL) == pytest.approx(
        {256 * KIB: 6_400, MIB: 20_800, 4 * MIB: 80_000})
    assert pg.blocking(found, "iallreduce") == {256 * KIB: 80_000, MIB: 260_000,
                                                4 * MIB: 1_000_000}
    assert pg.reference(found, "p2p") == T_B
    curves = pg.overhead_curves(found, "p2p", "time")
    assert list(curves) == ["none", "test-best", ASYNC, POLL, YIELD]
    assert curves["test-best"] == {256 * KIB: 16_000, MIB: 52_000, 4 * MIB: 200_000}
    assert curves[YIELD][4 * MIB] == 50_000
    assert pg.interval_curve(found, "p2p", "time", 4 * MIB) == pytest.approx(
        {64 * KIB: 360_000, 256 * KIB: 200_000, MIB: 280_000})
    series = pg.named_series(found, "p2p", "work")
    assert series["test-best"][MIB].interval == 256 * KIB
    # test-best borrows the interval of the test point it repeats
    assert series["test-best"][MIB].low == pytest.approx(52_000 - 52_000 * 0.02 - 10)
    assert pg.tests_made(4 * MIB, 64 * KIB) == 65


def test_a_settings_own_test_best_is_a_curve_of_its_own():
    run = pg.combine([none_run(), progress_run(YIELD, setting_points(YIELD, tests=True))])
    curves = pg.overhead_curves(pg.measurements(run), "p2p", "time")
    assert list(curves) == ["none", "test-best", YIELD, f"{YIELD} test-best"]
    assert pg.describe(f"{YIELD} test-best", pg.named_series(
        pg.measurements(run), "p2p", "time")[f"{YIELD} test-best"][MIB]) \
        == f"MPI_Test every 256 KiB under {YIELD}"


def test_measures_tell_noise():
    zero = pg.Measure(-300.0, -2300.0, 1700.0)
    assert zero.nil and pg.overhead_text(zero) == "~0"
    assert not pg.Measure(300.0, 290.0, 310.0).nil
    assert pg.Measure(100.0, 95.0, 105.0).same(pg.Measure(104.0, 101.0, 107.0))
    assert not pg.Measure(100.0, 95.0, 105.0).same(pg.Measure(110.0, 106.0, 114.0))
    assert pg.change(pg.Measure(400.0, 390.0, 410.0), pg.Measure(40.0, 39.0, 41.0)) == "10× less"
    assert pg.change(pg.Measure(40.0, 39.0, 41.0), pg.Measure(84.0, 82.0, 86.0)) == "2.1× more"
    assert pg.factor(6.14) == "6.1×" and pg.factor(9.96) == "10×" and pg.factor(250) == "250×"


def test_cpu_sets():
    assert pg.cpu_set("0-3,8") == {0, 1, 2, 3, 8}
    assert pg.cpu_set("5") == {5}
    assert pg.cpu_set("") is None and pg.cpu_set("0-x") is None and pg.cpu_set(None) is None


# --- diagnosis -----------------------------------------------------------------------------------

def test_diagnosis_states_the_loss_and_the_best_factor(whole):
    sentences = pg.diagnose(whole)
    assert (f"point-to-point at 4 MiB, time-based: the program loses 400 µs of 500 µs blocking "
            f"time without help (80%); the progress thread ({POLL}) cuts it 10× (to 40 µs); "
            f"then {YIELD} 50 µs (8.0× less), test-best 200 µs (2.0× less), {ASYNC} 404 µs (no "
            "change beyond noise)") in sentences
    # 1 MiB is named besides the largest size
    assert any(s.startswith("Iallreduce at 1 MiB, work-based: the program loses 208 µs of "
                            "260 µs blocking time without help (80%); the progress thread "
                            f"({POLL}) cuts it 10× (to 20.8 µs)") for s in sentences)
    assert not any(s.startswith("point-to-point at 256 KiB") for s in sentences)
    assert not any("warning" in s for s in sentences)


def test_diagnosis_contrasts_time_and_work_based_for_a_thread(whole):
    sentence = one_sentence(whole, f"{YIELD}: the thread costs")
    assert ("point-to-point at 4 MiB 360 µs work-based against 50 µs time-based (7.2×), "
            "Iallreduce at 4 MiB 720 µs work-based against 100 µs time-based (7.2×)") in sentence
    assert "seed §V-B3" in sentence
    # the spare-core thread costs as little either way
    assert not any(s.startswith(f"{POLL}: the thread costs") for s in pg.diagnose(whole))


# Sentences of the whole study's diagnosis, each the one that starts so.
@pytest.mark.parametrize("start,expected", [
    pytest.param(f"{POLL}: ",
                 f"{POLL}: every progress thread ran on a core no rank computes on (rank 0 "
                 "on cpu 2, rank 1 on cpu 3): the spare-core case of the seed (figures 7 "
                 "and 8), in which a thread takes the communication off the computation",
                 id="says_a_thread_on_a_spare_core_is_the_spare_core_case"),
    pytest.param(f"{YIELD}: the progress",
                 f"{YIELD}: the progress thread was not on a spare core (unbound on "
                 "ranks 0-1): these are the shared-core results, the seed's fully "
                 "subscribed case (figures 9 and 10), in which the thread competes with "
                 "the computation for its core; the node has 4 processing units for 2 "
                 "ranks, so the scheduler may have run an unbound thread on an idle one, "
                 "which would put the result between the two cases",
                 id="says_an_unbound_thread_gives_the_shared_core_result"),
    pytest.param(f"{ASYNC}:",
                 f"{ASYNC}: the program cannot ask the library whether it obeyed the "
                 "variable; the library provided MPI_THREAD_MULTIPLE where the program "
                 "asked for funneled, a sign that it started a thread of its own; its "
                 "overheads are within noise of none's everywhere, at the largest sizes: "
                 "nothing shows that it changed anything",
                 id="of_async_progress_within_noise_of_none"),
])
def test_diagnosis_sentence_of_the_whole_study(whole, start, expected):
    assert one_sentence(whole, start) == expected


def test_diagnosis_says_a_thread_on_a_computing_core_gives_the_shared_core_result():
    run = pg.combine([none_run(), poll_run(cpus=(1, 0))])
    sentence = one_sentence(run, f"{POLL}: the progress")
    assert sentence == (f"{POLL}: the progress thread was not on a spare core (rank 0's thread "
                        "on cpu 1, where rank 1 may compute; rank 1's thread on cpu 0, where "
                        "rank 0 may compute): these are the shared-core results, the seed's "
                        "fully subscribed case (figures 9 and 10), in which the thread competes "
                        "with the computation for its core")
    # both ranks bound to every core: whatever core the thread has, it is shared
    run = pg.combine([none_run(), poll_run(binding=("0-3", "0-3"), cpus_online=4)])
    sentence = one_sentence(run, f"{POLL}: the progress")
    assert "rank 0's thread on cpu 2, where ranks 0-1 may compute" in sentence


def test_placement_of_thousands_of_ranks_names_a_few():
    ranks = 8192
    member = poll_run(cpus=[32 + rank % 32 for rank in range(ranks)])
    member.meta.update(ranks=ranks, nodes=ranks // 32,
                       hosts=[f"n{rank // 32}" for rank in range(ranks)],
                       binding=[str(rank % 32) for rank in range(ranks)], cpus_online=64)
    member.meta["progress_setting"]["library"]["running_per_rank"] = [True] * ranks
    found = pg.placement(member)
    assert len(found.spare) == ranks and not found.shared
    sentence = one_sentence(pg.combine([none_run(), member]), f"{POLL}: ")
    assert sentence.startswith(f"{POLL}: every progress thread ran on a core no rank computes on "
                               "(rank 0 on cpu 32, rank 1 on cpu 33, rank 2 on cpu 34, rank 3 on "
                               "cpu 35, 8188 more): the spare-core case")
    # Thread k of a node on the core of its rank k: shared with that rank alone.
    member.meta["binding"] = [str(32 + rank % 32) for rank in range(ranks)]
    found = pg.placement(member)
    assert len(found.shared) == ranks and found.shared[40] == (40, 40, [40])


def test_diagnosis_cannot_judge_a_placement_without_the_ranks_bindings():
    run = pg.combine([none_run(), poll_run(binding=("0", "?"))])
    sentence = one_sentence(run, f"{POLL}: ")
    assert sentence == (f"{POLL}: the progress threads ran on known cores (rank 0 on cpu 2, rank "
                        "1 on cpu 3), but the ranks' bindings are not recorded: whether they "
                        "shared a core with the computation cannot be told")


def test_diagnosis_names_the_librarys_reason_and_ranks_without_thread():
    lib = library((True, False), (2, -1), "poll", reason="cpu=spare: every core is taken")
    member = progress_run(POLL, setting_points(POLL), lib=lib)
    sentence = one_sentence(pg.combine([none_run(), member]), f"{POLL}: every")
    assert sentence.endswith("; no thread ran on ranks 1; libmpilens-progress said: cpu=spare: "
                             "every core is taken")


def test_diagnosis_of_async_progress_that_changed_the_overhead():
    points = [p for p in setting_points(ASYNC) if p["bench"] == "p2p"]
    for p in points:
        if p["params"].get("compute") == "time":
            p["stats"]["t_o_ns"] /= 4
            p["stats"]["sample"] = sample(p["stats"]["t_o_ns"])
    run = pg.combine([none_run(), progress_run(ASYNC, points)])
    sentence = one_sentence(run, f"{ASYNC}:")
    assert sentence == (f"{ASYNC}: the program cannot ask the library whether it obeyed the "
                        "variable; lower than none's beyond noise: point-to-point time-based at "
                        "4 MiB (101 µs against 400 µs)")


def test_diagnosis_of_a_changed_blocking_time():
    points = setting_points(YIELD)
    for p in points:
        if p["key"] == "nbc/op=iallreduce/size=4194304/strategy=blocking":
            p["stats"] = {"t_b_ns": 2e6, "sample": sample(2e6)}
    run = pg.combine([none_run(), progress_run(YIELD, points)])
    assert (f"{YIELD} changed the blocking time t_b itself: Iallreduce at 4 MiB (2 ms against "
            "1 ms); its points computed for their own t_b") in pg.diagnose(run)


def test_diagnosis_of_interrupts(whole):
    assert ("interrupts at 8192 Hz (8100 Hz achieved), 4 computing threads: each wake-up took "
            "6.8 µs of CPU per core, 2.0× the seed's 3.4 µs; the work took 2% longer with the "
            "timer (what a progress thread woken as often by interrupts would take, seed "
            "§V-B2)") in pg.diagnose(whole)


def test_diagnosis_of_interrupts_below_the_rate_or_within_noise():
    run = progress_run(pg.NONE, [interrupts_point(achieved=5000.0, per=-120.0, t2=0.99e9)])
    assert pg.diagnose(run) == [
        "interrupts at 8192 Hz (5000 Hz achieved), 4 computing threads: no measurable cost, the "
        "work took as long with the timer as without (within noise)",
        "warning: interrupts: the timer fired 5000 times a second of the 8192 asked: the cost "
        "per wake-up holds, but the cores were loaded less than asked"]


def test_diagnosis_never_prints_a_negative_overhead():
    points = setting_points(pg.NONE, ops=("p2p",))
    for p in points:
        if p["key"] == "p2p/size=4194304/compute=work/strategy=none":
            p["stats"].update(t_o_ns=-500.0, sample=sample(-500.0, 3000.0))
    poll = [p for p in setting_points(POLL, ops=("p2p",))]
    for p in poll:
        if p["key"] == "p2p/size=1048576/compute=work/strategy=none":
            p["stats"].update(t_o_ns=-200.0, sample=sample(-200.0, 900.0))
    run = pg.combine([progress_run(pg.NONE, points), progress_run(POLL, poll)])
    sentences = pg.diagnose(run)
    assert ("point-to-point at 4 MiB, work-based: the program loses nothing measurable without "
            "help (t_o within noise of zero)") in sentences
    assert any(s.startswith("point-to-point at 1 MiB, work-based: the program loses 104 µs of "
                            f"130 µs blocking time without help (80%); the progress thread "
                            f"({POLL}) removes it (t_o within noise of zero)") for s in sentences)
    assert not any("-500" in s or "-200" in s for s in sentences)


def test_diagnosis_when_nothing_helps():
    worse = setting_points(YIELD, ops=("p2p",))
    for p in worse:
        if "t_o_ns" in p["stats"]:
            p["stats"]["t_o_ns"] = 2 * t_o("p2p", p["params"]["compute"], p["params"]["size_bytes"])
            p["stats"]["sample"] = sample(p["stats"]["t_o_ns"])
    run = pg.combine([progress_run(pg.NONE, setting_points(pg.NONE, ops=("p2p",), tests=False)),
                      progress_run(YIELD, worse)])
    assert any(s.startswith("point-to-point at 4 MiB, time-based: the program loses 400 µs of "
                            "500 µs blocking time without help (80%); every strategy and setting "
                            f"costs more: the least is the progress thread ({YIELD}) at 800 µs, "
                            "2.0× more") for s in pg.diagnose(run))


def test_diagnosis_warns_without_the_none_setting_and_repeats_warning_notes():
    note = {"type": "note", "level": "warning", "text": PRESENT}
    run = pg.combine([progress_run(YIELD, setting_points(YIELD), notes=[note, note])])
    sentences = pg.diagnose(run)
    assert sentences[0].startswith("warning: no run with the none setting")
    assert sentences.count(f"warning: {YIELD}: {PRESENT}") == 1


def test_diagnosis_of_the_real_mpich_files():
    paths = [Path("/tmp/pgs") / name for name in ("progress-none.jsonl",
                                                 "progress-thread-yield.jsonl",
                                                 "progress-async.jsonl")]
    if not all(path.is_file() for path in paths):
        pytest.skip("no sample progress files in /tmp/pgs")
    run = pg.combine([results.load(path) for path in paths])
    assert pg.settings(run) == ["none", ASYNC, YIELD]
    sentences = pg.diagnose(run)
    assert any(s.startswith("Iallreduce at 256 KiB, time-based: the program loses")
               for s in sentences)
    assert any(s.startswith("interrupts at 8192 Hz") for s in sentences)
    assert any(s.startswith(f"{YIELD}: the progress thread was not on a spare core")
               for s in sentences)
    assert len(pg.comparison_table(run)) == 2 + 6


# --- the printed table ---------------------------------------------------------------------------

def test_comparison_table(whole):
    lines = pg.comparison_table(whole)
    assert lines[0].startswith("overhead t_o at the largest size")
    assert lines[1].split() == ["operation", "kind", "size", "t_b", "none", "test-best", ASYNC,
                                POLL, YIELD]
    rows = [line.split("  ") for line in lines[2:]]
    cells = [[cell.strip() for cell in row if cell.strip()] for row in rows]
    assert cells == [
        ["point-to-point", "time", "4 MiB", "500 µs", "400 µs", "200 µs", "404 µs", "40 µs",
         "50 µs"],
        ["point-to-point", "work", "4 MiB", "500 µs", "400 µs", "200 µs", "404 µs", "40 µs",
         "360 µs"],
        ["Iallreduce", "time", "4 MiB", "1 ms", "800 µs", "400 µs", "808 µs", "80 µs", "100 µs"],
        ["Iallreduce", "work", "4 MiB", "1 ms", "800 µs", "400 µs", "808 µs", "80 µs", "720 µs"]]
    assert pg.comparison_table(progress_run(pg.NONE, [interrupts_point()])) == []


# --- comparison ----------------------------------------------------------------------------------

def test_compare_two_studies():
    other = pg.combine([progress_run(pg.NONE, [
        p for p in setting_points(pg.NONE) + [interrupts_point(per=34_000.0)]
        if "size=4194304" not in p["key"]], flavour="openmpi")])
    sentences = pg.compare(study(), other)
    assert sentences[0] == (
        f"point-to-point at 1 MiB, time-based: without help 104 µs (80% of t_b) in MPICH, 104 µs "
        f"(80% of t_b) in Open MPI; best: {POLL} 10.4 µs (10× less) in MPICH, test-best 52 µs "
        "(2.0× less) in Open MPI")
    assert sentences[-1] == ("interrupts at 8192 Hz: 6.8 µs per wake-up per core in MPICH, 34 µs "
                             "in Open MPI (the seed: 3.4 µs)")
    assert len(sentences) == 4 + 1


# --- numbers that cannot be true ------------------------------------------------------------------

def test_negative_overhead_beyond_noise_is_invalid_and_left_out():
    points = setting_points(pg.NONE, ops=("p2p",), tests=False)
    broken = overhead_point("p2p", "work", SIZES[-1], -5000.0, t_b("p2p", SIZES[-1]),
                            noise=1000.0)
    points = [broken if p["key"] == broken["key"] else p for p in points]
    run = progress_run(pg.NONE, points)
    key = pg.Key("p2p", "work", pg.NONE, pg.NONE)
    assert SIZES[-1] not in pg.measurements(run)[key]
    (found,) = pg.impossible_measures(run)
    assert found[:2] == (key, SIZES[-1]) and found[2].high == -4000.0
    sentences = pg.diagnose(run)
    assert_warned_once(sentences, "warning: 1 point INVALID and left out: a time below 0 beyond the "
                       "noise of its repetitions", "-5 µs")


def test_negative_overhead_within_noise_is_valid():
    # a work-based t_o of -50 ns whose interval reaches above 0: noise about no overhead
    points = setting_points(pg.NONE, ops=("p2p",), tests=False)
    close = overhead_point("p2p", "work", SIZES[-1], -50.0, t_b("p2p", SIZES[-1]), noise=100.0)
    points = [close if p["key"] == close["key"] else p for p in points]
    run = progress_run(pg.NONE, points)
    assert pg.measurements(run)[pg.Key("p2p", "work", pg.NONE, pg.NONE)][SIZES[-1]].nil
    assert pg.impossible_measures(run) == []
    assert not any("INVALID" in sentence for sentence in pg.diagnose(run))


def switches(thread_voluntary, rank_involuntary):
    """stats.context_switches of a 2-rank point with a progress thread (None: without)."""
    group = lambda v, i: {"voluntary": list(v), "involuntary": list(i)}  # noqa: E731
    return {"rank": group((3, 4), rank_involuntary),
            "progress_thread": None if thread_voluntary is None
            else group(thread_voluntary, (0, 0)),
            "other_threads": group((0, 0), (0, 0))}


def test_context_switches_per_repetition_of_the_thread_settings():
    # 10 repetitions and the warm-up: 11. The sleeping thread blocked 220 and 330 times on the
    # two ranks (at most 30 a repetition), the ranks were preempted 110 and 121 times (11).
    sleeping = overhead_point("p2p", "time", MIB, 10_000.0, T_B[MIB], setting="thread:sleep:50")
    sleeping["stats"]["context_switches"] = switches((220, 330), (110, 121))
    smaller = overhead_point("p2p", "time", 256 * KIB, 5_000.0, T_B[256 * KIB],
                             setting="thread:sleep:50")
    smaller["stats"]["context_switches"] = switches((11, 11), (0, 0))
    alone = overhead_point("p2p", "time", MIB, 100_000.0, T_B[MIB])
    alone["stats"]["context_switches"] = switches(None, (0, 0))
    run = pg.combine([progress_run("thread:sleep:50", [smaller, sleeping]),
                      progress_run(pg.NONE, [alone])])
    found = [s for s in pg.diagnose(run) if "context_switches" in s]
    assert found == ["thread:sleep:50: per repetition of point-to-point at 1 MiB, the progress "
                     "thread blocked 30 times (one wake-up each) and the computing thread was "
                     "preempted 11 times (the most of any rank; stats.context_switches, seed "
                     "§V-B1a)"]


def test_the_diagnosis_names_where_the_tests_went():
    def placed(placement):
        found = overhead_point("p2p", "time", MIB, 9_000.0, T_B[MIB], interval=256 * KIB)
        if placement is not None:
            found["params"]["test_placement"] = placement
        return found

    def sentence(*points):
        found = [s for s in pg.diagnose(progress_run(pg.NONE, list(points)))
                 if s.startswith("MPI_Test calls")]
        return found[0] if found else None

    untested = overhead_point("p2p", "time", MIB, 9_000.0, T_B[MIB])
    assert sentence(untested) is None
    # results of mpilens 0.2 and before do not record it: their tests were even
    assert sentence(placed(None)) == sentence(placed("even"))
    assert "k/(N+1)" in sentence(placed("even")) and "seed 002" not in sentence(placed("even"))
    seed = sentence(placed("seed"))
    assert "seed 002" in seed and "k/(N-1)" in seed and "--test-placement seed" in seed
    both = sentence(placed("even"), placed("seed"))
    assert "--test-placement even" in both and "--test-placement seed" in both
