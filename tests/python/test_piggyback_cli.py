"""`mpilens piggyback`: bad input refused before anything runs, the runs it makes and the
variables each gets, the applications' file, the auto threshold file, the printed table, the
report, --resume, and the faults it must name; without MPI, through a fake launcher that
replays synthetic results (fake_program.py) and plays the applications."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import (FAKE_MPIRUN_PROLOGUE, FAKE_PROGRAM, check_refused_before_launch, logged_calls,
                      one_line_error, read_records, run_cli, write_records)
from mpilens.analysis import piggyback as pb
from test_piggyback_analysis import (MPICH, OPEN_MPI, apps_run, pb_meta, pb_sweep_run,
                                     sweep_points)

# Stands in for Open MPI's mpirun: takes the -x NAME=VALUE options mpilens gives it, logs the
# call, then plays the program asked for: mpilens-piggyback replays the source of the layer
# configuration in its variables, an application prints the checksum and time of FAKE_APPS.
LAUNCHER = FAKE_MPIRUN_PROLOGUE + r'''
np, program, rest = args[1], os.path.basename(args[2]), args[3:]
with open(os.environ["FAKE_LAUNCH_LOG"], "a") as log:
    log.write(json.dumps({"program": program, "np": np, "args": rest, "env": env}) + "\n")
method, pb_size = env.get("MPILENS_PB_METHOD", "none"), env.get("MPILENS_PB_SIZE", "0")
if program == "mpilens-piggyback":
    kind = rest[rest.index("--bench") + 1] if "--bench" in rest else "sizes"
    source = os.path.join(os.environ["FAKE_SOURCES"], f"{method}-{pb_size}-{kind}.jsonl")
    os.execve(sys.executable, [sys.executable, os.environ["FAKE_PROGRAM"], *rest],
              dict(os.environ, FAKE_SOURCE=source))
app = program.replace("mpilens-example-", "")
recv = "wildcard" if "--wildcard" in rest else "specific"
checksum, time_s = json.load(open(os.environ["FAKE_APPS"]))[f"{app}/{recv}/{method}/{pb_size}"]
print(f"checksum {checksum}\ntime_s {time_s}")
'''

METHODS = ("pack-before", "datatype-before", "separate", "auto")


def app_table(wrong: tuple = ()) -> dict:
    """What each application run prints, from the synthetic applications of the analysis tests."""
    return {f"{p['params']['app']}/{p['params']['recv']}/{p['params']['method']}/"
            f"{p['params']['pb_size']}": [p["stats"]["checksum"], p["stats"]["time_s"]]
            for p in apps_run(METHODS, wrong).points}


@pytest.fixture
def fake(tmp_path):
    sources, bin_dir, lib_dir = tmp_path / "sources", tmp_path / "bin", tmp_path / "lib"
    for method in ("none", *pb.METHODS):
        pb_size = 0 if method == "none" else 4
        points = sweep_points(method)
        write_records(sources / f"{method}-{pb_size}-sizes.jsonl",
                      [pb_meta(method, pb_size, len(points)), *points])
        if method != "none":
            for pb_size in (0, 64, 512, 4096):
                for bench in ("latency", "bandwidth"):
                    run = pb_sweep_run(method, pb_size, bench)
                    write_records(sources / f"{method}-{pb_size}-{bench}.jsonl",
                                  [run.meta, *run.points])
    bin_dir.mkdir()
    launcher = bin_dir / "mpirun"
    launcher.write_text(f"#!{sys.executable}\n{LAUNCHER}")
    launcher.chmod(0o755)
    for name in ("mpilens-piggyback", "mpilens-example-sweep", "mpilens-example-cg"):
        (bin_dir / name).write_text("#!/bin/sh\nexit 99\n")
        (bin_dir / name).chmod(0o755)
    lib_dir.mkdir()
    (lib_dir / "libmpilens-piggyback.so").write_text("")
    apps = tmp_path / "apps.json"
    apps.write_text(json.dumps(app_table()))
    auto_file = tmp_path / "config" / "piggyback-auto"
    auto_file.parent.mkdir()
    auto_file.write_text(f"{MPICH}\t65536\n{OPEN_MPI}\t4096\nsome other MPI\t100\n")
    log = tmp_path / "launch.log"
    return {"bin": bin_dir, "lib": lib_dir, "log": log, "sources": sources, "apps": apps,
            "auto_file": auto_file, "launcher": launcher,
            "env": {"FAKE_SOURCES": str(sources), "FAKE_LAUNCH_LOG": str(log),
                    "FAKE_LOG": str(tmp_path / "argv.log"), "FAKE_PROGRAM": str(FAKE_PROGRAM),
                    "FAKE_APPS": str(apps), "MPILENS_PB_AUTO_FILE": str(auto_file)}}


def piggyback(fake: dict, *argv: str, env: dict = None):
    options = ["--mpi", "openmpi", "--bin-dir", str(fake["bin"]), "--lib-dir", str(fake["lib"]),
               "--launcher", str(fake["launcher"])]
    return run_cli("piggyback", *options, *argv, env={**fake["env"], **(env or {})},
                   timeout=120)


# --- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("argv,message", [
    (("--methods", "pack-before,teleport"),
     'argument --methods: unknown method "teleport": choose from pack-before, pack-after, '
     "datatype-before, datatype-after, separate, separate-after, auto, all"),
    (("--methods", "none"), 'argument --methods: unknown method "none" (the run without the '
                            "layer is always made): choose from pack-before,"),
    (("--methods", "separate,"), 'argument --methods: invalid method list "separate,": expected '
                                 "names separated by commas, such as pack-before,separate"),
    (("--pb-sizes", "4,65537"), 'argument --pb-sizes: invalid pb size "65537" in "4,65537": '
                                "expected numbers of bytes from 0 to 65536 separated by commas"),
    (("--pb-sizes", "4,-1"), 'argument --pb-sizes: invalid pb size "-1" in "4,-1"'),
    (("--pb-sizes", "4,,64"), 'argument --pb-sizes: invalid pb size "" in "4,,64"'),
    (("--pb-sizes", "1M"), 'argument --pb-sizes: invalid pb size "1M" in "1M"'),
    (("--app-scale", "0"), 'argument --app-scale: invalid app scale "0": expected a number '
                           "above 0 and at most 100"),
    (("--np", "1"), "piggyback needs at least 2 ranks; --np is 1"),
    (("--resume",), "--resume needs --output DIR: the directory of the run to complete"),
])
def test_bad_input_launches_nothing(fake, tmp_path, argv, message):
    check_refused_before_launch(piggyback, fake, tmp_path / "run", argv, message)


def test_missing_library_and_programs(fake, tmp_path):
    out = tmp_path / "run"
    (fake["lib"] / "libmpilens-piggyback.so").unlink()
    line = one_line_error(piggyback(fake, "--output", str(out)))
    assert line.startswith(f'mpilens: error: library "libmpilens-piggyback.so" not found (looked '
                           f'in {fake["lib"]} (from --lib-dir "{fake["lib"]}"))')
    (fake["lib"] / "libmpilens-piggyback.so").write_text("")
    (fake["bin"] / "mpilens-example-cg").unlink()
    line = one_line_error(piggyback(fake, "--output", str(out)))
    assert line == (f'mpilens: error: program "mpilens-example-cg" not found in --bin-dir '
                    f'"{fake["bin"]}"')
    (fake["bin"] / "mpilens-piggyback").unlink()
    line = one_line_error(piggyback(fake, "--no-apps", "--output", str(out)))
    assert line == (f'mpilens: error: program "mpilens-piggyback" not found in --bin-dir '
                    f'"{fake["bin"]}"')
    assert logged_calls(fake) == [] and not out.exists()


def test_existing_results_need_resume(fake, tmp_path):
    out = tmp_path / "run"
    write_records(out / "piggyback-separate-pb64-bandwidth.jsonl",
                  read_records(fake["sources"] / "separate-64-bandwidth.jsonl"))
    line = one_line_error(piggyback(fake, "--pb-sizes", "64", "--output", str(out)))
    assert line == (f'mpilens: error: "{out / "piggyback-separate-pb64-bandwidth.jsonl"}" '
                    "already exists; add --resume to complete it, or choose another --output")
    assert logged_calls(fake) == []


# --- the whole command ---------------------------------------------------------------------------

def test_piggyback_end_to_end(fake, tmp_path):
    out = tmp_path / "run"
    done = piggyback(fake, "--preset", "quick", "--methods", ",".join(METHODS), "--pb-sizes",
                     "4,64", "--apps", "--app-scale", "0.1", "--output", str(out))
    assert done.returncode == 0, done.stderr
    made = logged_calls(fake)
    library = str(fake["lib"] / "libmpilens-piggyback.so")

    def env(method, pb_size, **more):
        return {"MPILENS_PB_AUTO_FILE": str(fake["auto_file"]), "LD_PRELOAD": library,
                "MPILENS_PB_METHOD": method, "MPILENS_PB_SIZE": str(pb_size),
                "MPILENS_PB_DRIVER": "bytes", **more}

    auto_from = {"MPILENS_PB_AUTO_DATATYPE_FROM": "8192"}
    # the library alone, then each method over message sizes, auto last with the threshold
    sizes = made[:5]
    assert [(call["program"], call["np"]) for call in sizes] == [("mpilens-piggyback", "2")] * 5
    for call, method in zip(sizes, ("none", *METHODS)):
        output = out / f"piggyback-{method}.jsonl"
        assert call["args"] == ["--budget", "50ms", "--sizes", "1:1M", "--output", str(output),
                                "--progress", "off"]
        assert call["env"] == ({} if method == "none" else env(method, 4, **(
            auto_from if method == "auto" else {})))
        assert output.read_bytes() == (fake["sources"] / (
            f"{method}-{0 if method == 'none' else 4}-sizes.jsonl")).read_bytes()
    # the pb-size sweep: 64 bytes only (4 comes from the sweep over message sizes)
    sweep = made[5:13]
    for call, (method, bench) in zip(sweep, [(m, b) for m in METHODS
                                             for b in ("latency", "bandwidth")]):
        output = out / f"piggyback-{method}-pb64-{bench}.jsonl"
        size = "4:4" if bench == "latency" else "524288:524288"
        assert call["args"] == ["--budget", "50ms", "--sizes", size, "--bench", bench, "--recv",
                                "specific", "--output", str(output), "--progress", "off"]
        assert call["env"] == env(method, 64, **(auto_from if method == "auto" else {}))
        assert output.exists()
    # the applications: without the layer, then under each method at 4 B and 4 KiB
    apps = made[13:]
    assert len(apps) == 2 * 2 * (1 + len(METHODS) * 2) == len(made) - 13
    assert apps[0] == {"program": "mpilens-example-sweep", "np": "2", "env": {},
                       "args": ["--n", "32", "--iterations", "1", "--repeat", "3"]}
    assert apps[1]["env"] == env("pack-before", 4)
    assert apps[-1] == {"program": "mpilens-example-cg", "np": "2",
                        "env": env("auto", 4096, **auto_from),
                        "args": ["--n", "32", "--iterations", "40", "--repeat", "3",
                                 "--wildcard"]}

    records = read_records(out / "piggyback-apps.jsonl")
    meta, points = records[0], records[1:]
    assert meta["family"] == "piggyback" and meta["points_total"] == len(points) == 36
    assert meta["mpi"]["library_full"] == OPEN_MPI and meta["ranks"] == 2
    assert meta["command"][:2] == ["mpilens", "piggyback"]
    table = app_table()
    for point in points:
        params = point["params"]
        key = f"{params['app']}/{params['recv']}/{params['method']}/{params['pb_size']}"
        assert [point["stats"]["checksum"], point["stats"]["time_s"]] == table[key]
        assert point["key"] == f"app/app={params['app']}/recv={params['recv']}/method=" \
                               f"{params['method']}/pb_size={params['pb_size']}"

    # this library's line updated, the others kept
    assert fake["auto_file"].read_text() == \
        f"{MPICH}\t65536\n{OPEN_MPI}\t8192\nsome other MPI\t100\n"

    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "point-to-point, 4 B pb: the library alone (none), then each method as a ratio to it "
        "(wc: wildcard receives)",
        "method           lat 1B  lat 1B wc       bw 1M    bw 1M wc       bw 4M    bw 4M wc",
        "none               1 µs       1 µs  3.71 GiB/s  3.71 GiB/s  3.72 GiB/s  3.72 GiB/s"]
    assert "applications: time without the layer (none), then time with it / without" in lines
    assert ("specific receives, small messages (latency at 1 B), 4 B pb: auto is cheapest, "
            "+5.0% over no layer; then pack-before +10%, datatype-before +40%, separate +80%"
            ) in lines
    assert any(line.startswith("auto misses its goal") for line in lines)
    assert lines[-3:] == [
        f'auto threshold: 8192 bytes for "Open MPI v4.1.4", written to {fake["auto_file"]}',
        f"results: {out}", f"report: {out / 'report.html'}"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("<h2>Piggyback cost") == 1
    assert sorted(path.name for path in (out / "plots").iterdir()) == [
        "piggyback-apps.png", "piggyback-pb-sizes.png", "piggyback-ratios.png",
        "piggyback-sizes.png"]

    # `mpilens report` reads the directory the same way
    again = run_cli("report", str(out), "--output", str(tmp_path / "again"))
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again" / "report.html").read_text(encoding="utf-8").count(
        "<h2>Piggyback cost") == 1


def test_quick_preset_skips_the_applications_and_default_runs_them(fake, tmp_path):
    done = piggyback(fake, "--preset", "quick", "--methods", "separate", "--pb-sizes", "4",
                     "--output", str(tmp_path / "quick"))
    assert done.returncode == 0, done.stderr
    assert [call["program"] for call in logged_calls(fake)] == ["mpilens-piggyback"] * 2
    assert not (tmp_path / "quick" / "piggyback-apps.jsonl").exists()
    # separate alone cannot place auto's switch: the file is left as it was
    assert done.stdout.splitlines()[-3] == (
        "auto threshold: not measured (it needs the latency of pack-before and datatype-before: "
        "add them to --methods); "
        f"{fake['auto_file']} left as it was")
    before = fake["auto_file"].read_text()
    done = piggyback(fake, "--methods", "pack-before,datatype-before", "--pb-sizes", "4",
                     "--no-auto-file", "--output", str(tmp_path / "default"))
    assert done.returncode == 0, done.stderr
    made = logged_calls(fake)[2:]
    assert made[0]["args"][:2] == ["--sizes", "1:4M"]
    assert [call["program"] for call in made].count("mpilens-example-cg") == 2 * (1 + 2 * 2)
    assert made[3]["args"] == ["--n", "32", "--iterations", "6", "--repeat", "3"]
    assert done.stdout.splitlines()[-3] == \
        "auto threshold: 8192 bytes (not written: --no-auto-file)"
    assert fake["auto_file"].read_text() == before


def test_changed_checksum_is_an_error(fake, tmp_path):
    fake["apps"].write_text(json.dumps(app_table(wrong=(("cg", "wildcard", "separate", 4),))))
    out = tmp_path / "run"
    done = piggyback(fake, "--methods", ",".join(METHODS), "--pb-sizes", "4", "--output",
                     str(out))
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "mpilens: error: the layer changed the applications' results: cg (wildcard receives) "
        "under separate with a 4-byte pb gave checksum 0x1.9p+3, without the layer 0x1.8p+3")
    # everything measured is kept and reported
    assert done.stdout.splitlines()[-1] == f"report: {out / 'report.html'}"
    assert ("warning: wrong result under the layer: cg (wildcard receives) under separate with "
            "a 4-byte pb gave checksum 0x1.9p+3, without the layer 0x1.8p+3") in done.stdout


def test_a_run_without_the_layer_loaded_is_refused(fake, tmp_path):
    # what a launcher that does not pass LD_PRELOAD on produces: the program finds no layer
    source = fake["sources"] / "separate-4-sizes.jsonl"
    records = read_records(source)
    records[0]["piggyback"] = {"method": "none", "pb_size": 0}
    write_records(source, records)
    out = tmp_path / "run"
    done = piggyback(fake, "--methods", "separate", "--no-apps", "--output", str(out))
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f'mpilens: error: "{out / "piggyback-separate.jsonl"}" was measured with the layer '
        '"none" and a 0-byte pb, not "separate" with 4 bytes: the ranks did not get LD_PRELOAD '
        "and the MPILENS_PB_ variables (a --launcher must pass its environment on to them)")


def test_resume_completes_the_applications(fake, tmp_path):
    out = tmp_path / "run"
    argv = ("--methods", "separate", "--pb-sizes", "4", "--app-scale", "0.1", "--output",
            str(out))
    assert piggyback(fake, *argv).returncode == 0
    path = out / "piggyback-apps.jsonl"
    complete = path.read_text().splitlines(keepends=True)
    path.write_text("".join(complete[:-3]))
    done = piggyback(fake, *argv, "--resume")
    assert done.returncode == 0, done.stderr
    again = logged_calls(fake)[len(complete) - 1 + 2:]
    # the program's files are completed by the program; the applications' three missing runs
    assert [call["args"][-1] for call in again[:2]] == ["--resume", "--resume"]
    assert [(call["program"], call["env"].get("MPILENS_PB_SIZE"), call["args"][-1])
            for call in again[2:]] == [("mpilens-example-cg", None, "--wildcard"),
                                       ("mpilens-example-cg", "4", "--wildcard"),
                                       ("mpilens-example-cg", "4096", "--wildcard")]
    assert [json.loads(line)["key"] for line in path.read_text().splitlines()[1:]] == \
        [json.loads(line)["key"] for line in complete[1:]]
    # other application settings cannot complete that file; refused before anything runs
    made = len(logged_calls(fake))
    done = piggyback(fake, *argv[:4], "--app-scale", "0.2", "--output", str(out), "--resume")
    assert one_line_error(done).startswith(
        f'mpilens: error: cannot resume "{path}": it was measured with other options')
    assert len(logged_calls(fake)) == made


def test_unwritable_auto_file_is_refused_before_anything_runs(fake, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    out = tmp_path / "run"
    done = piggyback(fake, "--output", str(out),
                     env={"MPILENS_PB_AUTO_FILE": str(blocker / "piggyback-auto")})
    assert one_line_error(done) == (
        f'mpilens: error: cannot write the auto threshold file "{blocker / "piggyback-auto"}"; '
        "give --no-auto-file, or set MPILENS_PB_AUTO_FILE to a writable file")
    assert logged_calls(fake) == [] and not out.exists()
    done = piggyback(fake, "--no-auto-file", "--no-apps", "--methods", "separate", "--pb-sizes",
                     "4", "--output", str(out),
                     env={"MPILENS_PB_AUTO_FILE": str(blocker / "piggyback-auto")})
    assert done.returncode == 0, done.stderr
