"""The real C programs under the real launchers, read back by the Python side.

These catch any drift between what the C side writes and what the Python side reads, and check
the sanity family's invariants on live data. They need the C build: under `make test`
(MPILENS_REQUIRE_BUILD lists the flavours) a missing build fails; elsewhere it skips.
"""

from __future__ import annotations

import os

import pytest

from mpilens import launch, results
from conftest import run_cli

REQUIRED = os.environ.get("MPILENS_REQUIRE_BUILD", "").split()


def _flavours() -> list:
    built = [flavour.value for flavour in launch.built_flavours()]
    return sorted(set(REQUIRED) | set(built))


def _require(flavour: str) -> None:
    bin_dir = launch.dev_bin_dir(launch.Flavour(flavour))
    if bin_dir is None or not (bin_dir / "mpilens-sanity").exists():
        if flavour in REQUIRED:
            pytest.fail(f"make test requires the {flavour} build, and build/{flavour} has no "
                        "mpilens-sanity")
        pytest.skip(f"no {flavour} build")


FLAVOURS_RANKS = [(flavour, ranks) for flavour in ("openmpi", "mpich") for ranks in (2, 4)]


def _succeeded(runs: dict, flavour: str, ranks: int) -> tuple:
    """The (done, outdir) of the flavour's run at `ranks` ranks in runs, which must have succeeded
    (skipped without the flavour's build)."""
    _require(flavour)
    done, outdir = runs[(flavour, ranks)]
    assert done.returncode == 0, done.stderr
    return done, outdir


def _quick_runs(base, family: str, args_at: dict, timeout: int) -> dict:
    """`mpilens FAMILY --preset quick` under every flavour here, at each rank count of args_at
    with its arguments, into base/FLAVOUR-RANKS: {(flavour, ranks): (done, outdir)}."""
    runs = {}
    for flavour in _flavours():
        for ranks, args in args_at.items():
            outdir = base / f"{flavour}-{ranks}"
            done = run_cli(family, "--mpi", flavour, "--np", str(ranks), "--preset", "quick", *args,
                           "--output", str(outdir), timeout=timeout)
            runs[(flavour, ranks)] = (done, outdir)
    return runs


@pytest.fixture(scope="module")
def sanity_runs(tmp_path_factory) -> dict:
    """One quick sanity run per flavour and rank count, shared by the tests below."""
    return _quick_runs(tmp_path_factory.mktemp("real"), "sanity", {2: (), 4: ()}, timeout=300)


@pytest.mark.parametrize("flavour,ranks", FLAVOURS_RANKS)
def test_sanity_run_reads_back(sanity_runs, flavour, ranks):
    done, outdir = _succeeded(sanity_runs, flavour, ranks)
    assert done.stdout.strip().splitlines()[-1] == f"report: {outdir / 'report.html'}"
    assert (outdir / "report.html").stat().st_size > 10000

    run = results.load(outdir / "sanity.jsonl")
    assert run.complete
    meta = run.meta
    assert meta["ranks"] == ranks and len(meta["hosts"]) == ranks and len(meta["binding"]) == ranks
    assert meta["mpi"]["flavour"] == flavour
    assert meta["options"]["preset"] == "quick" and meta["options"]["compute"] == "1us:1ms"
    assert meta["clock"]["source"] == "CLOCK_MONOTONIC" and meta["clock"]["resolution_ns"] > 0

    assert len(run.points_of("clock")) == ranks
    assert len(run.points_of("offset")) == 2 * ranks
    assert len(run.points_of("handshake")) == ranks // 2
    for point in run.points_of("compute"):
        sample = point["stats"]["sample"]
        assert sample["n"] == len(sample["values"]) >= 1
        assert sample["min"] <= sample["q1"] <= sample["median"] <= sample["q3"] <= sample["max"]
        assert sample["ci_lo"] <= sample["median"] <= sample["ci_hi"]
        assert sample["stop"] in ("precision", "max_reps", "time_budget")
        if point["params"]["kernel"] == "time":
            # the time-based kernel never ends before its target
            assert sample["min"] >= point["params"]["target_ns"]
    if meta["nodes"] == 1:
        # one host, one clock: every offset estimate lies within its own error bound of 0
        for point in run.points_of("offset"):
            assert abs(point["stats"]["offset_ns"]) <= point["stats"]["bound_ns"], point
        assert "all ranks share one clock" in done.stdout


def test_compare_two_flavours(sanity_runs, tmp_path):
    for flavour in ("openmpi", "mpich"):
        _require(flavour)
    a, b = sanity_runs[("openmpi", 2)][1], sanity_runs[("mpich", 2)][1]
    done = run_cli("compare", str(a), str(b), "--labels", "Open MPI,MPICH", "--output", str(tmp_path))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "compare.html").read_text(encoding="utf-8")
    assert "Open MPI v4" in page and "MPICH Version" in page


@pytest.fixture(scope="module")
def overlap_runs(tmp_path_factory) -> dict:
    """The quick overlap suite at 2 ranks (every benchmark), and at 4 ranks two point-to-point
    benchmarks: benchmarks that keep every rank busy (multi, collectives) take minutes at 4 ranks
    on 2 cores; the C-level tests cover them at 4 ranks on a small grid."""
    benches = {2: ("--bench", "all"), 4: ("--bench", "sender,control")}
    return _quick_runs(tmp_path_factory.mktemp("overlap"), "overlap", benches, timeout=600)


@pytest.mark.parametrize("flavour,ranks", FLAVOURS_RANKS)
def test_overlap_run_reads_back(overlap_runs, flavour, ranks):
    done, outdir = _succeeded(overlap_runs, flavour, ranks)
    run = results.load(outdir / "overlap.jsonl")
    assert run.complete and run.meta["ranks"] == ranks and run.meta["mpi"]["flavour"] == flavour
    benches = {point["bench"] for point in run.points}
    if ranks == 2:
        assert {"sender", "receiver", "bidir", "noncontig", "cpu", "nload", "control", "late", "ibcast",
                "iallreduce", "ialltoall"} <= benches
        assert "multi" not in benches and any("multi needs at least 3 ranks" in n["text"] for n in run.notes)
    else:
        assert benches == {"ref-pingpong", "sender", "control"}
    # the terminal shows the diagnosis, including the method check of the blocking control
    assert "method check" in done.stdout
    maps = {bench for bench in benches if not bench.startswith("ref-")}
    plots = {path.name for path in (outdir / "plots").glob("overlap-*.png")}
    assert plots == {"overlap-mosaic.png"} | {f"overlap-map-{bench}.png" for bench in maps}
    page = (outdir / "report.html").read_text(encoding="utf-8")
    assert page.count("data:image/png") >= len(plots)


@pytest.mark.parametrize("flavour,ranks", FLAVOURS_RANKS)
def test_monitor_an_unmodified_program(flavour, ranks, tmp_path):
    """`mpilens monitor` preloads the library into a program that knows nothing of it (each rank
    sends 2 x 64 bytes to the next, then rank 0 broadcasts 128 bytes) and reports its matrices."""
    _require(flavour)
    program = launch.dev_bin_dir(launch.Flavour(flavour)).parent / "tests" / "plain_ring"
    done = run_cli("monitor", "--mpi", flavour, "--np", str(ranks), "--output", str(tmp_path / "run"), "--",
                   str(program), timeout=300)
    assert done.returncode == 0, done.stderr
    run = results.load(tmp_path / "run" / "monitor.jsonl")
    assert run.meta["ranks"] == ranks and run.meta["mpi"]["flavour"] == flavour
    p2p = next(p for p in run.points if p["params"]["kind"] == "p2p")["stats"]
    assert sorted(map(tuple, p2p["counts"]["entries"])) == [(i, (i + 1) % ranks, 2) for i in range(ranks)]
    assert p2p["total_bytes"] == 128 * ranks
    coll = next(p for p in run.points if p["params"]["kind"] == "coll")["stats"]
    assert coll["backend"] == "pmpi"
    assert sorted(map(tuple, coll["bytes"]["entries"])) == [(0, j, 128) for j in range(1, ranks)]
    assert f"point-to-point: {128 * ranks} B in {2 * ranks} messages" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == f"report: {tmp_path / 'run' / 'report.html'}"

    exported = run_cli("matrix", str(tmp_path / "run"), "--kind", "p2p", "--export", str(tmp_path / "x"),
                       "--format", "csv,mat")
    assert exported.returncode == 0, exported.stderr
    csv = (tmp_path / "x" / "p2p.csv").read_text().splitlines()
    assert csv[0] == "sender,receiver,bytes,count"
    assert sorted(csv[1:]) == sorted(f"{i},{(i + 1) % ranks},128,2" for i in range(ranks))
    rows = (tmp_path / "x" / "p2p_bytes.mat").read_text().splitlines()
    assert [list(map(int, r.split())) for r in rows] == [
        [128 if j == (i + 1) % ranks else 0 for j in range(ranks)] for i in range(ranks)]

    # The monitored matrix mapped: a ring is already best packed onto two modelled nodes.
    mapped = run_cli("map", str(tmp_path / "run"), "--kind", "p2p", "--mpi", flavour,
                     "--topology", f"node:2 core:{ranks // 2}", "--out", str(tmp_path / "m"))
    assert mapped.returncode == 0, mapped.stderr
    perm = [line.split() for line in (tmp_path / "m.perm").read_text().splitlines()
            if not line.startswith("#")]
    assert sorted(int(row[1]) for row in perm) == list(range(ranks))
    assert len((tmp_path / "m.rankfile").read_text().splitlines()) == ranks


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_reorder_example_report(flavour, tmp_path):
    """Seed 004 6.4 for real at 4 ranks: groups {0, 2} and {1, 3} span the two modelled nodes, the
    reordering puts each group on one node (the cost model predicts 90% less), and the report
    draws the gain map and says what was predicted."""
    _require_program(flavour, "mpilens-example-reorder-allgather")
    f = launch.Flavour(flavour)
    program = launch.dev_bin_dir(f) / "mpilens-example-reorder-allgather"
    output = tmp_path / "res" / "reorder-allgather.jsonl"
    output.parent.mkdir()
    command = launch.build_command(f, 4, program, [
        "--topology", "node:2 core:2", "--iterations", "1,4", "--sizes", "1K,16K", "--repeat", "1",
        "--output", str(output), "--quiet"])
    launch.run(command, output, env=launch.process_env(command[0], f, {}))
    run = results.load(output)
    assert len(run.points) == 4
    assert all(p["stats"]["predicted_gain_pct"] == pytest.approx(90.0) for p in run.points)
    done = run_cli("report", str(tmp_path / "res"), "--output", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Rank reordering" in html and "the cost model predicted +90% in every cell" in html


def _require_program(flavour: str, program: str) -> None:
    """As _require, for a program that may be built later than mpilens-sanity."""
    _require(flavour)
    if not (launch.dev_bin_dir(launch.Flavour(flavour)) / program).exists():
        if flavour in REQUIRED:
            pytest.fail(f"make test requires the {flavour} build, and build/{flavour} has no "
                        f"{program}")
        pytest.skip(f"no {program} in the {flavour} build")


HOP_NS = 1_000_000


@pytest.fixture(scope="module")
def coll_runs(tmp_path_factory) -> dict:
    """A quick `mpilens coll` series at 2 and 4 ranks per flavour: the broadcast of the library and
    of two reference algorithms under a 1 ms hop delay, so that the truth is known."""
    runs = {}
    base = tmp_path_factory.mktemp("coll")
    for flavour in _flavours():
        bin_dir = launch.dev_bin_dir(launch.Flavour(flavour))
        if bin_dir is None or not (bin_dir / "mpilens-coll").exists():
            continue
        outdir = base / flavour
        done = run_cli("coll", "--mpi", flavour, "--np", "2,4", "--preset", "quick", "--op", "bcast",
                       "--algo", "library,linear,binomial", "--method", "oli,rounds,barrier,ack",
                       "--hop-delay", "1ms", "--wait", "sleep", "--output", str(outdir), timeout=900)
        runs[flavour] = (done, outdir)
    return runs


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_coll_series_reads_back(coll_runs, flavour):
    from mpilens.analysis import coll

    _require_program(flavour, "mpilens-coll")
    done, outdir = coll_runs[flavour]
    assert done.returncode == 0, done.stderr
    runs = [results.load(outdir / f"coll-np{ranks}.jsonl") for ranks in (2, 4)]
    for ranks, run in zip((2, 4), runs):
        assert run.complete and run.meta["ranks"] == ranks and run.meta["mpi"]["flavour"] == flavour
        assert run.meta["options"]["block"] == "10" and run.meta["options"]["hop-delay"] == "1ms"
        for point in run.points:
            assert point["family"] == "coll" and point["params"]["np"] == ranks
            assert point["params"]["hop_delay_ns"] == HOP_NS and point["params"]["size_bytes"] == 256
        # osu and imb come with the barrier method: the mean and the largest of its local times
        assert {point["params"]["method"] for point in run.points} == {
            "oli", "rounds", "barrier", "ack", "osu", "imb"}
        for point in run.points:
            local = point["stats"].get("per_rank_local_ns")
            if point["params"]["method"] in ("osu", "imb"):
                assert len(local) == ranks and point["params"]["from_method"] == "barrier"
                expected = sum(local) / ranks if point["params"]["method"] == "osu" else max(local)
                assert point["stats"]["latency_ns"] == pytest.approx(expected, rel=1e-6)
    found = coll.series(results.merge(runs))
    # The method's accuracy at every rank count is the C tests' to check (4 ranks share 2 cores
    # here); these are the numbers the Python side reads, and at 2 ranks the truth.
    for algo, hops in (("linear", lambda n: n - 1), ("binomial", lambda n: (n - 1).bit_length())):
        by_method = found[coll.Config("bcast", algo, 256, HOP_NS)]
        for ranks in (2, 4):
            oli = by_method["oli"][ranks]["stats"]
            assert len(oli["per_rank_ns"]) == ranks and oli["per_rank_ns"][0] is None
            assert oli["truth_ns"] == hops(ranks) * HOP_NS
            assert oli["argmax_rank"] in range(1, ranks)
            assert oli["latency_ns"] == max(v for v in oli["per_rank_ns"] if v is not None)
    lines = done.stdout.splitlines()
    assert "bcast/linear, 256 B, hop delay 1 ms: latency in µs" in lines
    # the analysis's verdict on bcast/linear against its truth; where the rank counts are invalid
    # (4 ranks share the 2 cores here, and a busy machine can put oli outside its bracket at 2),
    # the INVALID warning that says why takes the truth sentence's place
    assert any("bcast/linear: under --hop-delay 1 ms the oli estimate is" in line
               or "bcast/linear: INVALID at" in line for line in lines)
    assert lines[-2:] == [f"results: {outdir}", f"report: {outdir / 'report.html'}"]
    # Last, the times themselves, judged only on a machine quiet enough: the hop delays are sleeps,
    # and when they overslept by more than 10% the cores were taken from the ranks (the rule of
    # tests/mpi/check_coll.py; a busy machine put oli 28% off here).
    overslept = max(point["stats"]["hop_delay_actual_ns"] / HOP_NS for run in runs for point in run.points
                    if "hop_delay_actual_ns" in point["stats"])
    if overslept > 1.10:
        pytest.skip(f"times not judged: the hop delays overslept by {overslept - 1:.0%} (a busy machine)")
    for algo in ("linear", "binomial"):
        oli = found[coll.Config("bcast", algo, 256, HOP_NS)]["oli"][2]["stats"]
        # against the truth at the delays really applied; a 1 ms hop is short beside the sleeping
        # waits' naps, so this read-back check allows 25%: the 10% goal is
        # tests/mpi/test_coll_cli.sh's, with 5 ms hops
        assert abs(oli["latency_ns"] / oli["truth_actual_ns"] - 1) <= 0.25, (algo, oli)
    linear = found[coll.Config("bcast", "linear", 256, HOP_NS)]
    # a chain broadcast from the roots in forward order pipelines: rounds clearly below oli
    assert coll.latency(linear["rounds"][4]) < 0.9 * coll.latency(linear["oli"][4])
    plots = {path.name for path in (outdir / "plots").glob("coll-*.png")}
    assert {"coll-methods.png", "coll-profile-bcast-linear-np4.png",
            "coll-profile-bcast-binomial-np2.png", "coll-profile-bcast-library-np4.png"} <= plots
    # the error plot draws the valid rank counts: on a machine so busy that every one was
    # rejected (the report's table says why), it has nothing to draw and is left out
    _, rejected = coll.valid_series(results.merge(runs), found)
    some_valid = any(point["stats"].get("truth_ns") and ranks not in rejected.get(config, {})
                     for config, by_method in found.items()
                     for ranks, point in by_method.get("oli", {}).items())
    assert ("coll-error.png" in plots) == some_valid, (rejected, sorted(plots))


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_piggyback_command(flavour, tmp_path):
    """`mpilens piggyback --preset quick` with three methods, one extra pb size and tiny
    applications: every run under the layer it asked for, the applications' checksums unchanged by
    the layer, the auto threshold written for this library beside another library's line."""
    from mpilens.analysis import piggyback as pb

    for program in ("mpilens-piggyback", "mpilens-example-sweep", "mpilens-example-cg"):
        _require_program(flavour, program)
    auto_file = tmp_path / "piggyback-auto"
    auto_file.write_text("Some Other MPI 1.0\t123\n")
    out = tmp_path / "run"
    methods = ("pack-before", "datatype-before", "separate")
    done = run_cli("piggyback", "--mpi", flavour, "--preset", "quick", "--methods", ",".join(methods),
                   "--pb-sizes", "4,64", "--apps", "--app-scale", "0.05", "--output", str(out),
                   env={"MPILENS_PB_AUTO_FILE": str(auto_file)}, timeout=600)
    assert done.returncode == 0, done.stderr
    runs = []
    for method in ("none", *methods):
        run = results.load(out / f"piggyback-{method}.jsonl")
        pb_size = 0 if method == "none" else 4
        assert run.complete and len(run.points) == 2 * 2 * 21  # 1 B to 1 MiB, both benchmarks and receives
        assert run.meta["piggyback"] == {"method": method, "pb_size": pb_size}
        assert run.meta["mpi"]["flavour"] == flavour
        assert {(p["params"]["method"], p["params"]["pb_size"]) for p in run.points} == {(method, pb_size)}
        runs.append(run)
        if method == "none":
            continue
        for bench, size in (("latency", 4), ("bandwidth", 512 * 1024)):
            sweep = results.load(out / f"piggyback-{method}-pb64-{bench}.jsonl")
            assert [(p["bench"], p["params"]["recv"], p["params"]["size_bytes"], p["params"]["pb_size"])
                    for p in sweep.points] == [(bench, "specific", size, 64)]
            runs.append(sweep)
    apps = results.load(out / "piggyback-apps.jsonl")
    assert apps.complete and len(apps.points) == 2 * 2 * (1 + len(methods) * 2)
    whole = pb.combine(runs + [apps])
    assert pb.checksum_mismatches(whole) == []
    assert "checksums: all 24 application runs under the layer gave the same checksum as without it" \
        in done.stdout.splitlines()
    # the threshold written is the one the measurements give, on the line of this library
    threshold = pb.auto_threshold(pb.measurements(whole))
    library = runs[0].meta["mpi"]["library_full"].split("\n")[0]
    lines = done.stdout.splitlines()
    if threshold is None:
        # a loaded machine slowed the run without the layer below both methods' at every size
        # (seen in CI under MPICH): those points are INVALID, so nothing is written, and it says why
        assert "INVALID" in pb.auto_threshold_missing(whole)
        assert auto_file.read_text() == "Some Other MPI 1.0\t123\n"
        assert lines[-3] == (f"auto threshold: not measured ({pb.auto_threshold_missing(whole)}); "
                             f"{auto_file} left as it was")
    else:
        assert auto_file.read_text() == f"Some Other MPI 1.0\t123\n{library}\t{threshold.size}\n"
        assert lines[-3].startswith(f"auto threshold: {threshold.size} bytes for ")
    assert lines[-2:] == [f"results: {out}", f"report: {out / 'report.html'}"]
    assert lines[1].split()[:3] == ["method", "lat", "1B"]
    assert [line.split()[0] for line in lines[2:6]] == ["none", *methods]
    assert sorted(path.name for path in (out / "plots").iterdir()) == [
        "piggyback-apps.png", "piggyback-pb-sizes.png", "piggyback-ratios.png", "piggyback-sizes.png"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("<h2>Piggyback cost") == 1 and page.count("data:image/png") == 4


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_progress_command(flavour, tmp_path):
    """`mpilens progress --preset quick` over small sizes with one thread mode, the library's own
    async progress and the overlap runs: every run under the setting it asked for (the library
    found in every rank when a thread was asked for, the async variable recorded), the files read
    back as one study, and the overlap maps without and with the thread in the report."""
    from mpilens.analysis import progress as analysis

    for program in ("mpilens-progress", "mpilens-overlap"):
        _require_program(flavour, program)
    out = tmp_path / "run"
    done = run_cli("progress", "--mpi", flavour, "--preset", "quick", "--np", "2", "--bench",
                   "p2p,nbc", "--ops", "iallreduce", "--sizes", "1K:16K", "--threads", "yield",
                   "--placement", "shared", "--overlap", "--output", str(out), timeout=600)
    assert done.returncode == 0, done.stderr
    async_var = "MPIR_CVAR_ASYNC_PROGRESS" if flavour == "mpich" else "OMPI_MCA_btl_tcp_progress_thread"
    labels = {"none": "none", "thread-yield": "thread:yield", "async": f"async:{async_var}=1"}
    runs = []
    for name, label in labels.items():
        run = results.load(out / f"progress-{name}.jsonl")
        assert run.complete and run.progress_label == label
        assert {p["params"]["progress"] for p in run.points} == {label}
        library = run.meta["progress_setting"]["library"]
        assert library["running_per_rank"] == [name == "thread-yield"] * 2
        runs.append(run)
    strategies = {p["params"]["strategy"] for p in runs[0].points}
    assert strategies == {"blocking", "none", "test", "test-best"}
    assert {p["params"]["strategy"] for p in runs[1].points} == {"blocking", "none"}
    whole = analysis.combine(runs)
    assert len(whole.points) == sum(len(run.points) for run in runs)
    bare, thread = results.load(out / "overlap.jsonl"), results.load(out / "overlap-thread-yield.jsonl")
    assert (bare.progress_label, thread.progress_label) == ("none", "thread:yield")
    assert bare.complete and thread.complete and {p["bench"] for p in thread.points} >= {"sender", "receiver"}
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "overlap.jsonl, progress: none" in page and "overlap-thread-yield.jsonl, progress: thread:yield" in page
    assert done.stdout.splitlines()[-2:] == [f"results: {out}", f"report: {out / 'report.html'}"]
