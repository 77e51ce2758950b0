"""The piggyback analysis on synthetic runs whose answers are known: the files of one study read
as one run, the auto threshold, auto's goal, the ratios and overheads, the diagnosis, the printed
tables, the comparison and the auto threshold file."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpilens import families, report
from mpilens.analysis import piggyback as pb
from mpilens.errors import MpilensError
from mpilens.results import Run

OPEN_MPI = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022"
MPICH = "MPICH Version:\t4.0.2"
SIZES = [1 << k for k in range(23)]  # 1 B to 4 MiB
MIB = 1 << 20


def sample(median: float, spread: float = 0.01, stop: str = "precision") -> dict:
    return {"unit": "ns", "n": 20, "median": median, "ci_lo": median * (1 - spread),
            "ci_hi": median * (1 + spread), "stop": stop}


def pb_point(bench: str, recv: str, size: int, figure: float, method: str = "none",
             pb_size: int = 0, spread: float = 0.01, stop: str = "precision") -> dict:
    """A point as mpilens-piggyback writes it: figure is the latency (ns) or bandwidth (B/s)."""
    if bench == "latency":
        stats = {"latency_ns": figure, "sample": sample(figure, spread, stop)}
    else:
        window = 64 * size / figure * 1e9
        stats = {"bandwidth_Bps": figure, "window_ns": window,
                 "sample": sample(window, spread, stop)}
    return {"type": "point", "family": "piggyback", "bench": bench,
            "key": f"{bench}/recv={recv}/size={size}",
            "params": {"bench": bench, "recv": recv, "size_bytes": size, "method": method,
                       "pb_size": pb_size, "iterations": 100, **(
                           {"window": 64} if bench == "bandwidth" else {})},
            "stats": stats}


def pb_meta(method: str, pb_size: int, total: int, library: str = OPEN_MPI,
            env: dict = None) -> dict:
    return {"type": "meta", "schema": 1, "family": "piggyback", "program": "mpilens-piggyback",
            "mpilens_version": "0.1.0", "date": "2026-11-22T10:31:05Z",
            "command": ["mpilens-piggyback"],
            "mpi": {"library": library.split("\n")[0], "library_full": library,
                    "flavour": "mpich" if library.startswith("MPICH") else "openmpi"},
            "ranks": 2, "nodes": 1, "hosts": ["vm", "vm"], "env": env or {},
            "options": {"sizes": "1:4M"}, "points_total": total,
            "piggyback": {"method": method, "pb_size": pb_size}}


def pb_run(method: str, points: list, pb_size: int = None, name: str = None,
           **meta) -> Run:
    pb_size = (0 if method == "none" else 4) if pb_size is None else pb_size
    return Run(path=Path(name or f"results/piggyback-{method}.jsonl"),
               meta=pb_meta(method, pb_size, len(points), **meta), points=points)


# The library alone: 1 µs plus 0.25 ns per byte one way; a window of 64 messages takes 64 times
# as long. Each method adds its own cost.
def base_latency(size: int) -> float:
    return 1000 + 0.25 * size


def base_bandwidth(size: int) -> float:
    return size / base_latency(size) * 1e9


# (latency added in ns as a function of size, bandwidth ratio as a function of size)
MODELS = {
    # a copy: 100 ns plus 0.05 ns per byte
    "pack-before": (lambda s: 100 + 0.05 * s, lambda s: 0.80),
    "pack-after": (lambda s: 110 + 0.05 * s, lambda s: 0.79),
    # a struct type: 400 ns whatever the size, so it beats the copy from 6000 bytes (8 KiB)
    "datatype-before": (lambda s: 400.0, lambda s: 0.97),
    "datatype-after": (lambda s: 450 + 0.05 * s, lambda s: 0.78),
    "separate": (lambda s: 800.0, lambda s: 0.999),
    "separate-after": (lambda s: 820.0, lambda s: 0.998),
    # packs small messages: 5% at 1 B; loses 1% at 1 MiB and 3% at 4 MiB
    "auto": (lambda s: 50.0, lambda s: {MIB: 0.99, 4 * MIB: 0.97}.get(s, 0.98)),
}


def sweep_points(method: str, recvs=("specific", "wildcard"), sizes=SIZES,
                 wildcard_extra: float = 0.0) -> list:
    points = []
    for recv in recvs:
        extra = wildcard_extra if recv == "wildcard" else 0.0
        for size in sizes:
            latency, bandwidth = base_latency(size), base_bandwidth(size)
            if method != "none":
                added, kept = MODELS[method]
                latency, bandwidth = latency + added(size) + extra, bandwidth * kept(size)
            points += [pb_point("latency", recv, size, latency, method,
                                0 if method == "none" else 4),
                       pb_point("bandwidth", recv, size, bandwidth, method,
                                0 if method == "none" else 4)]
    return points


def pb_sweep_run(method: str, pb_size: int, bench: str) -> Run:
    """The pb-size sweep: latency at 4 B grows by 1 ns per pb byte, bandwidth at 512 KiB loses
    1% per KiB of pb."""
    if bench == "latency":
        figure = base_latency(4) + MODELS[method][0](4) + pb_size - 4
        point = pb_point("latency", "specific", 4, figure, method, pb_size)
    else:
        size = 512 * 1024
        figure = base_bandwidth(size) * MODELS[method][1](size) * (1 - 0.01 * pb_size / 1024)
        point = pb_point("bandwidth", "specific", size, figure, method, pb_size)
    return pb_run(method, [point], pb_size=pb_size,
                  name=f"results/piggyback-{method}-pb{pb_size}-{bench}.jsonl")


TIMES = {"sweep": 1.0, "cg": 2.0}
# overhead of each method on cg (sweep: a tenth of it); wildcard receives cost 5% more
CG_OVERHEAD = {"pack-before": 0.10, "pack-after": 0.08, "datatype-before": 0.06,
               "datatype-after": 0.12, "separate": 0.20, "separate-after": 0.19, "auto": 0.07}


def app_point(app: str, recv: str, method: str, pb_size: int, time_s: float,
              checksum: str = "0x1.8p+3") -> dict:
    return {"type": "point", "family": "piggyback", "bench": "app",
            "key": f"app/app={app}/recv={recv}/method={method}/pb_size={pb_size}",
            "params": {"app": app, "recv": recv, "method": method, "pb_size": pb_size},
            "stats": {"time_s": time_s, "checksum": checksum}}


def apps_run(methods=pb.METHODS, wrong: tuple = ()) -> Run:
    points = []
    for app in ("sweep", "cg"):
        for recv in ("specific", "wildcard"):
            points.append(app_point(app, recv, "none", 0, TIMES[app]))
            for method in methods:
                for pb_size in (4, 4096):
                    overhead = CG_OVERHEAD[method] * (1 if app == "cg" else 0.1) \
                        * (2 if pb_size == 4096 else 1) + (0.05 if recv == "wildcard" else 0)
                    checksum = "0x1.9p+3" if (app, recv, method, pb_size) in wrong \
                        else "0x1.8p+3"
                    points.append(app_point(app, recv, method, pb_size,
                                            TIMES[app] * (1 + overhead), checksum))
    meta = pb_meta("none", 0, len(points))
    del meta["piggyback"]
    meta["program"] = "mpilens piggyback (example applications)"
    return Run(path=Path("results/piggyback-apps.jsonl"), meta=meta, points=points)


def study(methods=pb.METHODS, pb_sizes=(64, 4096), apps: bool = True, **extra) -> Run:
    """A whole `mpilens piggyback` directory, read as one run."""
    runs = [pb_run("none", sweep_points("none"))]
    runs += [pb_run(method, sweep_points(method, **extra)) for method in methods]
    runs += [pb_sweep_run(method, pb_size, bench) for method in methods for pb_size in pb_sizes
             for bench in ("latency", "bandwidth")]
    if apps:
        runs.append(apps_run(methods))
    return pb.combine(runs)


@pytest.fixture(scope="module")
def whole() -> Run:
    return study()


# --- reading the files as one run ----------------------------------------------------------------

def test_combine_reads_every_file_as_one_run(whole):
    assert len(whole.members) == 1 + len(pb.METHODS) + len(pb.METHODS) * 2 * 2 + 1
    # the baseline first (its meta is the run's), the applications last
    assert whole.members[0].path.name == "piggyback-none.jsonl"
    assert whole.members[-1].path.name == "piggyback-apps.jsonl"
    assert whole.meta["piggyback"] == {"method": "none", "pb_size": 0}
    assert whole.path == Path("results/piggyback.jsonl")
    assert whole.points_total == len(whole.points) == sum(len(m.points) for m in whole.members)
    assert whole.complete
    # combining again, or a file twice, changes nothing
    again = pb.combine([whole, whole.members[3]])
    assert again.points == whole.points and again.members == whole.members


def test_combine_refuses_the_same_measurement_twice():
    first = pb_run("separate", sweep_points("separate"))
    second = pb_run("separate", sweep_points("separate"), name="elsewhere/piggyback-sep.jsonl")
    with pytest.raises(MpilensError, match=r'"elsewhere/piggyback-sep.jsonl" and '
                       r'"results/piggyback-separate.jsonl" both hold latency at 1 bytes '
                       r"\(specific receives\) under separate with a 4-byte pb; move one of "
                       r"them to another directory"):
        pb.combine([first, second])


def test_report_groups_the_family_by_its_combiner(whole):
    family = families.get("piggyback")
    assert family.combiner is pb.combine and not family.in_suite
    assert families.get("coll").combiner is not None
    assert families.get("sanity").combiner is None
    (shown,) = report.grouped(whole.members)
    assert len(shown.points) == len(whole.points)


# --- ratios and the threshold --------------------------------------------------------------------

def test_ratios_to_the_library_alone(whole):
    found = pb.measurements(whole)
    assert pb.methods_measured(found) == list(pb.METHODS)
    assert pb.ratio(found, "pack-before", "latency", "specific", 1) == \
        pytest.approx((base_latency(1) + 100.05) / base_latency(1))
    assert pb.ratio(found, "separate", "bandwidth", "wildcard", 4 * MIB) == pytest.approx(0.999)
    assert pb.ratio(found, "none", "latency", "specific", 1) is None
    curves = pb.pb_curves(found, "latency", "specific", 4)
    assert list(curves["separate"]) == [4, 64, 4096]
    assert curves["separate"][4096] - curves["separate"][4] == pytest.approx(4092)
    ranked = pb.ranking(found, "latency", "specific", 1)
    assert [method for method, _ in ranked] == ["auto", "pack-before", "pack-after",
                                                "datatype-before", "datatype-after", "separate",
                                                "separate-after"]
    ranked = pb.ranking(found, "bandwidth", "specific", 4 * MIB)
    assert ranked[0][0] == "separate" and ranked[-1][0] == "datatype-after"


def threshold_of(datatype: dict, pack: dict) -> pb.Threshold:
    points = [pb_point("latency", "specific", size, figure, "datatype-before", 4)
              for size, figure in datatype.items()]
    points += [pb_point("latency", "specific", size, figure, "pack-before", 4)
               for size, figure in pack.items()]
    return pb.auto_threshold(pb.measurements(pb_run("datatype-before", points)))


def test_threshold_where_the_struct_type_stops_being_slower(whole):
    # 400 ns against 100 + 0.05 s ns: equal at 6000 bytes, so the first power of 2 is 8 KiB
    assert pb.auto_threshold(pb.measurements(whole)) == pb.Threshold(8192, False, 4 * MIB)


def test_threshold_ignores_a_dip_that_does_not_last():
    sizes = [1, 2, 4, 8, 16, 32, 64]
    pack = {size: 100.0 for size in sizes}
    # faster at 2 B (noise), slower again at 4 and 8 B, then not slower (equal counts) from 16 B
    datatype = {1: 120.0, 2: 90.0, 4: 110.0, 8: 101.0, 16: 100.0, 32: 80.0, 64: 99.0}
    assert threshold_of(datatype, pack) == pb.Threshold(16, False, 64)
    # faster everywhere: from the smallest size
    assert threshold_of({s: 50.0 for s in sizes}, pack).size == 1


def test_threshold_when_the_struct_type_never_wins():
    sizes = [1, 2, 4, 1024]
    found = threshold_of({s: 200.0 for s in sizes}, {s: 100.0 for s in sizes})
    assert found == pb.Threshold(2048, True, 1024)
    # the largest size failing is enough, whatever came before
    assert threshold_of({1: 50.0, 2: 50.0, 4: 50.0, 1024: 101.0},
                        {s: 100.0 for s in sizes}).never


def test_no_threshold_without_both_methods():
    found = pb.measurements(study(methods=("separate", "auto"), apps=False))
    assert pb.auto_threshold(found) is None
    assert pb.auto_threshold({}) is None


# --- auto's goal ---------------------------------------------------------------------------------

def test_goal_verdicts(whole):
    goal = pb.auto_goal(pb.measurements(whole))
    assert goal.latency_size == 1
    assert goal.latency_ratio == pytest.approx((base_latency(1) + 50) / base_latency(1))
    assert goal.latency_met is True
    # 1% lost at 1 MiB, 3% at 4 MiB: the worst is 4 MiB, beyond the 2% allowed
    assert goal.bandwidth_size == 4 * MIB and goal.bandwidth_ratio == pytest.approx(0.97)
    assert goal.bandwidth_met is False and goal.met is False


def test_goal_without_large_sizes_or_auto():
    small = [s for s in SIZES if s < MIB]
    runs = [pb_run("none", sweep_points("none", sizes=small)),
            pb_run("auto", sweep_points("auto", sizes=small))]
    goal = pb.auto_goal(pb.measurements(pb.combine(runs)))
    assert goal.latency_met is True and goal.bandwidth_ratio is None and goal.met is None
    assert pb.auto_goal(pb.measurements(study(methods=("separate",), apps=False))) is None


# --- applications --------------------------------------------------------------------------------

def test_overheads_are_time_over_time_without_the_layer(whole):
    found = pb.overheads(whole)
    assert len(found) == 2 * 2 * len(pb.METHODS) * 2
    assert found[pb.AppKey("cg", "specific", "separate", 4)] == pytest.approx(1.20)
    assert found[pb.AppKey("cg", "wildcard", "separate", 4096)] == pytest.approx(1.45)
    assert found[pb.AppKey("sweep", "specific", "pack-before", 4)] == pytest.approx(1.01)
    assert pb.checksum_mismatches(whole) == []


def test_an_application_faster_with_the_layer_in_every_solve_is_invalid():
    # cg's baseline solves took 2.0 to 2.4 s; under separate every solve took 1.1 to 1.5 s (the
    # machine, not the layer, which only adds work), under pack-before 1.9 to 2.5 s (a ratio
    # below 1 within the spread: kept, as noise)
    def point(method, pb_size, shortest, longest):
        found = app_point("cg", "specific", method, pb_size, shortest)
        found["stats"]["time_max_s"] = longest
        return found

    points = [point("none", 0, 2.0, 2.4), point("separate", 4, 1.1, 1.5),
              point("pack-before", 4, 1.9, 2.5)]
    meta = pb_meta("none", 0, len(points))
    del meta["piggyback"]
    meta["program"] = "mpilens piggyback (example applications)"
    run = pb.combine([pb_run("none", sweep_points("none")),
                      Run(path=Path("results/piggyback-apps.jsonl"), meta=meta, points=points)])
    faster = pb.AppKey("cg", "specific", "separate", 4)
    assert pb.faster_everywhere(run) == {faster: pytest.approx(0.55)}
    assert set(pb.overheads(run)) == {pb.AppKey("cg", "specific", "pack-before", 4)}
    assert (f"warning: {pb.APP_NAMES['cg']}, specific receives, separate with 4 B pb: INVALID "
            f"overhead 0.55: {pb.INVALID_APP_FASTER}") in pb.diagnose(run)
    reasons = {p["params"]["method"]: reason for p, reason in pb.validity(run) if p["bench"] == "app"}
    assert reasons == {"separate": pb.INVALID_APP_FASTER, "pack-before": None}


def test_checksum_mismatch_names_the_method_and_application():
    run = pb.combine([pb_run("none", sweep_points("none")),
                      apps_run(("separate",), wrong=(("cg", "wildcard", "separate", 4096),))])
    (mismatch,) = pb.checksum_mismatches(run)
    assert str(mismatch) == ("cg (wildcard receives) under separate with a 4096-byte pb gave "
                             "checksum 0x1.9p+3, without the layer 0x1.8p+3")
    assert (f"warning: wrong result under the layer: {mismatch}") in pb.diagnose(run)


# --- words ---------------------------------------------------------------------------------------

def test_diagnosis(whole):
    sentences = pb.diagnose(whole)
    assert sentences[:4] == [
        "specific receives, small messages (latency at 1 B), 4 B pb: auto is cheapest, +5.0% "
        "over no layer; then pack-before +10%, pack-after +11%, datatype-before +40%, "
        "datatype-after +45%, separate +80%, separate-after +82%",
        "specific receives, large messages (bandwidth at 4 MiB), 4 B pb: separate is cheapest, "
        "-0.1% against no layer; then separate-after -0.2%, auto -3.0%, datatype-before -3.0%, "
        "pack-before -20%, "
        "pack-after -21%, datatype-after -22%",
        "wildcard receives, small messages (latency at 1 B), 4 B pb: auto is cheapest, +5.0% "
        "over no layer; then pack-before +10%, pack-after +11%, datatype-before +40%, "
        "datatype-after +45%, separate +80%, separate-after +82%",
        "wildcard receives, large messages (bandwidth at 4 MiB), 4 B pb: separate is cheapest, "
        "-0.1% against no layer; then separate-after -0.2%, auto -3.0%, datatype-before -3.0%, "
        "pack-before -20%, "
        "pack-after -21%, datatype-after -22%"]
    assert ("auto threshold: datatype-before's latency is not above pack-before's from 8 KiB on "
            "(specific receives, up to 4 MiB), so auto should pack below 8 KiB and use a struct "
            "type from there (8192 bytes)") in sentences
    assert ("auto misses its goal (specific receives, 4 B pb): latency at 1 B +5.0% over no "
            "layer (goal at most +10%: met); bandwidth from 1 MiB on at most 3.0% lower (worst "
            "at 4 MiB; goal at most 2% lower: missed)") in sentences
    assert any(s.startswith("pb size 4 B to 4 KiB, latency at 4 B (specific receives): "
                            "pack-before 1.1 µs → 5.19 µs (+372%)") for s in sentences)
    assert any(s.startswith("pb size 4 B to 4 KiB, bandwidth at 512 KiB (specific receives): "
                            "pack-before 2.96 GiB/s → 2.84 GiB/s (-4.0%)") for s in sentences)
    assert ("cg (communication-bound, SMG2000-like), wildcard receives: overhead (time with the "
            "layer / without) from 1.11 (datatype-before, 4 B pb) to 1.45 (separate, 4 KiB pb); "
            "2 s without the layer") in sentences
    assert ("checksums: all 56 application runs under the layer gave the same checksum as "
            "without it") in sentences
    assert not any(s.startswith("warning:") for s in sentences)


def test_the_cheapest_method_follows_the_data():
    # separate made the cheapest for small messages with wildcard receives only
    runs = [pb_run("none", sweep_points("none"))]
    for method in ("pack-before", "separate"):
        points = sweep_points(method, wildcard_extra=0.0)
        for point in points:
            if point["params"]["recv"] == "wildcard" and point["bench"] == "latency":
                point["stats"]["latency_ns"] += 500 if method == "pack-before" else -700
        runs.append(pb_run(method, points))
    sentences = pb.diagnose(pb.combine(runs))
    assert sentences[0].startswith("specific receives, small messages (latency at 1 B), 4 B "
                                   "pb: pack-before is cheapest, +10% over no layer; then "
                                   "separate +80%")
    assert sentences[2].startswith("wildcard receives, small messages (latency at 1 B), 4 B "
                                   "pb: separate is cheapest, +10% over no layer; then "
                                   "pack-before +60%")


def test_goal_met_and_never_threshold_are_told():
    runs = [pb_run("none", sweep_points("none", recvs=("specific",)))]
    for method in ("pack-before", "datatype-before", "auto"):
        points = sweep_points(method, recvs=("specific",))
        for point in points:
            if method == "datatype-before" and point["bench"] == "latency":
                point["stats"]["latency_ns"] *= 3  # never as fast as packing
            if method == "auto" and point["bench"] == "bandwidth":
                point["stats"]["bandwidth_Bps"] = base_bandwidth(point["params"]["size_bytes"])
        runs.append(pb_run(method, points, env={"MPILENS_PB_AUTO_DATATYPE_FROM": "8388608"}))
    sentences = pb.diagnose(pb.combine(runs))
    assert ("auto threshold: datatype-before's latency stays above pack-before's up to 4 MiB "
            "(specific receives), so auto should always pack here; threshold set to 8 MiB "
            "(8388608 bytes); the auto runs used 8 MiB (8388608 bytes)") in sentences
    assert ("auto meets its goal (specific receives, 4 B pb): latency at 1 B +5.0% over no "
            "layer (goal at most +10%: met); bandwidth from 1 MiB on never lower than without "
            "the layer (worst at 1 MiB; goal at most 2% lower: met)") in sentences


def test_warnings_missing_baseline_and_noise():
    points = sweep_points("separate")
    for point in points[:10]:
        point["stats"]["sample"].update(stop="time_budget", ci_lo=point["stats"]["sample"][
            "median"] * 0.5, ci_hi=point["stats"]["sample"]["median"] * 1.5)
    sentences = pb.diagnose(pb.combine([pb_run("separate", points)]))
    assert sentences[0].startswith("warning: no run without the layer (method none)")
    assert ("10 of 92 points stopped at their time budget before their median was known within "
            "the precision asked (their 95% intervals reach ±50% of the median, typically, and "
            "±50% at worst): differences between methods smaller than that are noise"
            ) in sentences


def test_printed_tables(whole):
    lines = pb.comparison_table(whole)
    assert lines[:3] == [
        "point-to-point, 4 B pb: the library alone (none), then each method as a ratio to it "
        "(wc: wildcard receives)",
        "method           lat 1B  lat 1B wc       bw 1M    bw 1M wc       bw 4M    bw 4M wc",
        "none               1 µs       1 µs  3.71 GiB/s  3.71 GiB/s  3.72 GiB/s  3.72 GiB/s"]
    assert lines[3] == ("pack-before        1.10       1.10        0.80        0.80        0.80"
                        "        0.80")
    assert lines[8] == ("separate-after     1.82       1.82        1.00        1.00        1.00"
                        "        1.00")
    assert lines[9] == ("auto               1.05       1.05        0.99        0.99        0.97"
                        "        0.97")
    assert lines[10] == ""
    assert lines[11] == "applications: time without the layer (none), then time with it / without"
    assert lines[12].split() == ["method", "sweep", "pb4B", "sweep", "pb4K", "sweep", "wc",
                                 "pb4B", "sweep", "wc", "pb4K", "cg", "pb4B", "cg", "pb4K", "cg",
                                 "wc", "pb4B", "cg", "wc", "pb4K"]
    assert lines[13].split() == ["none"] + ["1s"] * 4 + ["2s"] * 4
    assert lines[18].split() == ["separate", "1.02", "1.04", "1.07", "1.09", "1.20", "1.40",
                                 "1.25", "1.45"]


def test_compare_two_studies(whole):
    other = study(methods=("separate",), apps=False)
    sentences = pb.compare(whole, other)
    assert sentences[:2] == [
        "no layer, latency at 1 B (specific receives): 1 µs in A, 1 µs in B",
        "no layer, bandwidth at 4 MiB (specific receives): 3.72 GiB/s in A, 3.72 GiB/s in B"]
    assert ("separate (4 B pb, specific receives, against no layer): latency at 1 B +80% in A, "
            "+80% in B; bandwidth at 4 MiB -0.1% in A, -0.1% in B") in sentences
    assert ("pack-before (4 B pb, specific receives, against no layer): latency at 1 B +10% in "
            "A, n/a in B; bandwidth at 4 MiB -20% in A, n/a in B") in sentences
    assert "auto threshold: 8 KiB in A, n/a in B" in sentences
    assert ("cg, largest overhead: 1.45 (separate, wildcard receives, 4 KiB pb) in A, n/a in B"
            ) in sentences


# --- the auto threshold file ---------------------------------------------------------------------

def test_auto_file_text_keeps_other_libraries():
    old = f"{MPICH}\t65536\nsome other library\t128\n{OPEN_MPI}\t4096\n"
    assert pb.auto_file_text(old, OPEN_MPI, 8192) == \
        f"{MPICH}\t65536\nsome other library\t128\n{OPEN_MPI}\t8192\n"
    # MPICH's name holds a tab: the last tab on the line separates
    assert pb.auto_file_text(old, MPICH, 1) == \
        f"{MPICH}\t1\nsome other library\t128\n{OPEN_MPI}\t4096\n"
    assert pb.auto_file_text("", MPICH, 2048) == f"{MPICH}\t2048\n"
    assert pb.auto_file_text("no newline at end\t5", OPEN_MPI, 7) == \
        f"no newline at end\t5\n{OPEN_MPI}\t7\n"


def test_auto_file_path_and_library_line(tmp_path):
    assert pb.auto_file_path({"MPILENS_PB_AUTO_FILE": "/x/y", "HOME": "/h"}) == Path("/x/y")
    assert pb.auto_file_path({"XDG_CONFIG_HOME": "/c", "HOME": "/h"}) == \
        Path("/c/mpilens/piggyback-auto")
    assert pb.auto_file_path({"HOME": "/h"}) == Path("/h/.config/mpilens/piggyback-auto")
    run = pb_run("none", [], library=f"{MPICH}\nMPICH Release date:\tThu Apr  7 2022")
    assert pb.library_line(run) == MPICH
    path = tmp_path / "deep" / "auto"
    pb.write_auto_file(path, MPICH, 512)
    pb.write_auto_file(path, OPEN_MPI, 1024)
    pb.write_auto_file(path, MPICH, 2048)
    assert path.read_text() == f"{MPICH}\t2048\n{OPEN_MPI}\t1024\n"
    assert [p.name for p in path.parent.iterdir()] == ["auto"]


# --- numbers that cannot be true ------------------------------------------------------------------

def floor_run(latency_with: float, spread: float) -> Run:
    """The baseline at 1 µs (±1%) and pack-before at latency_with (± spread) at 1 KiB."""
    base = pb_run("none", [pb_point("latency", "specific", 1024, 1000.0)])
    layer = pb_run("pack-before", [pb_point("latency", "specific", 1024, latency_with,
                                            "pack-before", 4, spread=spread)])
    return pb.combine([base, layer])


def test_faster_with_the_layer_beyond_noise_is_invalid():
    run = floor_run(700.0, 0.01)
    config = pb.Config("latency", "specific", "pack-before", 4)
    assert pb.below_floor(run) == [(config, 1024)]
    assert config not in pb.measurements(run)
    assert pb.ratio(pb.measurements(run), "pack-before", "latency", "specific", 1024) is None
    found = pb.diagnose(run)
    assert found[0].startswith("warning: 1 point INVALID and left out: faster with the layer "
                               "than without it")
    assert "pack-before pb 4 B latency specific 1 KiB" in found[0]
    assert not any("cheapest" in sentence and "pack-before" in sentence for sentence in found)


def test_no_threshold_when_every_common_size_is_invalid():
    # the library alone ran slowed (1 µs ± 1%) while both methods took 0.7 µs at 1 KiB: both
    # below the floor, so neither latency is kept and no threshold can be placed; the reason
    # names the invalid points rather than asking for methods that were measured
    base = pb_run("none", [pb_point("latency", "specific", 1024, 1000.0)])
    layers = [pb_run(method, [pb_point("latency", "specific", 1024, 700.0, method, 4)])
              for method in ("pack-before", "datatype-before")]
    run = pb.combine([base, *layers])
    assert pb.auto_threshold(pb.measurements(run)) is None
    why = pb.auto_threshold_missing(run)
    assert why.startswith("at every size where pack-before and datatype-before were both "
                          "measured, one of them is INVALID")
    # the report says so where auto was measured (without auto, a threshold is no finding)
    auto = pb_run("auto", [pb_point("latency", "specific", 1024, 1010.0, "auto", 4)])
    assert f"auto threshold not measured: {why}" in pb.diagnose(pb.combine([base, *layers, auto]))
    # one method valid is not enough: the other's only size is invalid
    layers[1] = pb_run("datatype-before", [pb_point("latency", "specific", 1024, 1100.0,
                                                     "datatype-before", 4)])
    run = pb.combine([base, *layers])
    assert pb.auto_threshold(pb.measurements(run)) is None
    assert "INVALID" in pb.auto_threshold_missing(run)
    # not measured at all: the methods are asked for
    assert pb.auto_threshold_missing(pb.combine([base])) == (
        "it needs the latency of pack-before and datatype-before: add them to --methods")


def test_faster_with_the_layer_within_noise_is_valid():
    # 3% below the baseline, but the intervals meet: noise
    run = floor_run(970.0, 0.05)
    assert pb.below_floor(run) == []
    assert pb.ratio(pb.measurements(run), "pack-before", "latency", "specific", 1024) == \
        pytest.approx(0.97)
    assert not any("INVALID" in sentence for sentence in pb.diagnose(run))
