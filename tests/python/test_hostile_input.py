"""Hostile input and faults (issue 17, section 3): names taken from results files never choose
where mpilens writes; bad input is refused with one line; special files are not read; values the
programs would refuse are refused before launch; SIGTERM and SIGHUP stop the launched job."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import (FAKE_PROGRAM, MONITOR_FIXTURE, ROOT, SANITY_FIXTURE, one_line_error,
                      read_records, run_cli, write_records, write_script)
from mpilens import families, results
from mpilens.errors import MpilensError
from mpilens.safe_names import MAX_PART, file_name_part, printable
from test_coll_analysis import chain_points, coll_files

HOSTILE = ["../../x", "/etc/passwd", "..", ".", "", "a\0b", "é/../" * 100]


def files_under(directory: Path) -> set:
    return {path for path in directory.rglob("*") if path.is_file()}


def hostile(name: str, tmp_path: Path) -> str:
    """`name`, an absolute one moved under tmp_path: the test must not write /etc/passwd.csv
    when it fails (as it did before the fix, run as root)."""
    return str(tmp_path / "abs") + name if name.startswith("/") else name


# --- safe names ----------------------------------------------------------------------------------

def test_safe_names_keep_safe_text_and_make_the_rest_safe():
    for name in ("coll-np4-bcast-oli", "p2p", "size=64K", "thread-sleep50-spare", "a.b,c+d@e"):
        assert file_name_part(name) == name
    made = [file_name_part(text) for text in HOSTILE + ["_._", "~", "a/b", "a_b", "a:b"]]
    for name in made:
        assert "/" not in name and "\0" not in name and ".." not in name
        assert name and not name.startswith(".") and len(name) <= MAX_PART
    assert len(set(made)) == len(made)
    assert file_name_part("x" * MAX_PART) == "x" * MAX_PART
    assert file_name_part("x" * (MAX_PART + 1)) != file_name_part("x" * (MAX_PART + 2))


def test_printable_replaces_what_is_not_utf8():
    assert printable("caf\udcc3\udca9") == "café"
    assert printable("a\udcffb") == "a\ufffdb"
    assert printable("\ud800") == "?"


# --- path traversal ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["../../x", "/etc/passwd"])
def test_report_plot_names_stay_in_the_output_directory(tmp_path, name):
    name = hostile(name, tmp_path)
    points = []
    for point in chain_points(2):
        point["params"].update(op=name, algo=name)
        point["op"] = point["algo"] = name
        points.append(point)
    data = tmp_path / "deep" / "er" / "data"
    coll_files(data, {2: points}, family="coll")
    out = tmp_path / "deep" / "er" / "out"
    before = files_under(tmp_path)
    done = run_cli("report", str(data), "--output", str(out))
    assert done.returncode in (0, 2), done.stderr
    assert "Traceback" not in done.stderr
    new = files_under(tmp_path) - before
    assert all(out in path.parents for path in new), new


@pytest.mark.parametrize("name", ["../../x", "/etc/passwd", "../x/../../y"])
def test_matrix_exports_stay_in_the_export_directory(tmp_path, name):
    (tmp_path / "abs" / "etc").mkdir(parents=True)
    name = hostile(name, tmp_path)
    records = read_records(MONITOR_FIXTURE)
    for record in records[1:]:
        if record.get("type") == "point":
            record["params"]["kind"] = name
            record["key"] = f"matrix/kind={name}/{record['key']}"
    source = write_records(tmp_path / "a" / "b" / "monitor.jsonl", records)
    export = tmp_path / "a" / "b" / "ex"
    before = files_under(tmp_path)
    done = run_cli("matrix", str(source), "--export", str(export), "--output",
                   str(tmp_path / "a" / "b" / "r"))
    assert "Traceback" not in done.stderr
    new = files_under(tmp_path) - before
    assert all(export in path.parents or path.parent.name in ("r", "plots") for path in new), new


def test_report_of_a_family_named_like_a_path(tmp_path):
    records = read_records(SANITY_FIXTURE)
    records[0]["family"] = "../../evil"
    data = write_records(tmp_path / "a" / "b" / "run.jsonl", records)
    before = files_under(tmp_path)
    done = run_cli("report", str(data), "--output", str(tmp_path / "a" / "b" / "out"))
    assert done.returncode == 0, done.stderr
    new = files_under(tmp_path) - before
    assert all((tmp_path / "a" / "b" / "out") in path.parents for path in new), new


# --- one line instead of a traceback -------------------------------------------------------------

def test_unbalanced_quote_in_launcher(tmp_path):
    line = one_line_error(run_cli("sanity", "--mpi", "openmpi", "--launcher", 'mpirun "-n',
                                  "--output", str(tmp_path / "out")))
    assert line.startswith('mpilens: error: invalid --launcher "mpirun "-n": ')
    assert not (tmp_path / "out").exists()


def test_deeply_nested_line(tmp_path):
    lines = SANITY_FIXTURE.read_text().splitlines(keepends=True)
    deep = '{"type":"note","text":' + "[" * 100000 + "]" * 100000 + "}\n"
    path = tmp_path / "deep.jsonl"
    path.write_text(lines[0] + deep + "".join(lines[1:]))
    line = one_line_error(run_cli("report", str(path)))
    assert line == f'mpilens: error: "{path}" is corrupt at line 2: not a JSON object'


def test_non_utf8_file_name_and_labels(tmp_path):
    directory = os.fsencode(tmp_path) + b"/r\xff"
    os.mkdir(directory)
    name = directory + b"/s\xfe.jsonl"
    with open(name, "wb") as out:
        out.write(SANITY_FIXTURE.read_bytes())
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    for argv in ([b"report", name], [b"compare", directory, directory, b"--labels", b"a\xff,b",
                                     b"--output", os.fsencode(tmp_path) + b"/cmp"]):
        done = subprocess.run([sys.executable.encode(), b"-m", b"mpilens", *argv], env=env,
                              capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr.decode(errors="replace")
    page = (tmp_path / "cmp" / "compare.html").read_text(encoding="utf-8")
    assert "a\ufffd" in page
    assert "s\ufffd.jsonl" in (Path(os.fsdecode(directory)) / "report.html").read_text("utf-8")


# --- special files -------------------------------------------------------------------------------

def test_fifo_is_refused(tmp_path):
    fifo = tmp_path / "run.jsonl"
    os.mkfifo(fifo)
    line = one_line_error(run_cli("report", str(tmp_path), timeout=30))
    assert line == (f'mpilens: error: "{fifo}" is not a regular file: mpilens reads results from '
                    "regular files only")


def test_device_link_is_refused(tmp_path):
    (tmp_path / "run.jsonl").symlink_to("/dev/zero")
    line = one_line_error(run_cli("report", str(tmp_path / "run.jsonl"), timeout=30))
    assert "is not a regular file" in line


def test_size_limit(tmp_path, monkeypatch):
    path = write_records(tmp_path / "s.jsonl", read_records(SANITY_FIXTURE))
    monkeypatch.setenv("MPILENS_MAX_RESULTS_BYTES", "100")
    with pytest.raises(MpilensError, match=r'"[^"]*s.jsonl" holds \d+ bytes, more than the '
                                           r"limit of 100 bytes \(MPILENS_MAX_RESULTS_BYTES; raise it"):
        results.load(path)
    monkeypatch.setenv("MPILENS_MAX_RESULTS_BYTES", "lots")
    with pytest.raises(MpilensError, match="invalid MPILENS_MAX_RESULTS_BYTES"):
        results.load(path)
    monkeypatch.delenv("MPILENS_MAX_RESULTS_BYTES")
    assert len(results.load(path).points) > 0


# --- checks before launch ------------------------------------------------------------------------

@pytest.fixture
def fake(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for family in families.FAMILIES.values():
        write_script(bin_dir / family.program, f'#!/bin/sh\nexec {sys.executable} {FAKE_PROGRAM} "$@"\n')
    log = tmp_path / "argv.log"
    return {"bin": str(bin_dir), "log": log,
            "env": {"FAKE_SOURCE": str(SANITY_FIXTURE), "FAKE_LOG": str(log)}}


@pytest.mark.parametrize("argv, message", [
    (["progress", "--sizes", "1M:1K"], 'argument --sizes: invalid --sizes "1M:1K": invalid range '
                                       '"1M:1K": minimum is larger than maximum'),
    (["progress", "--sizes", "4G"], 'argument --sizes: invalid --sizes "4G": invalid size "4G": '
                                    "at most 2147483647 bytes"),
    (["progress", "--sizes", "lots"], 'argument --sizes: invalid --sizes "lots": invalid size '
                                      '"lots"'),
    (["coll", "--size", "1T"], 'argument --size: invalid size "1T": at most 2147483647 bytes'),
    (["overlap", "--compute", "1us:100000s"], "unrecognized arguments: --compute"),
])
def test_refused_before_launch(fake, tmp_path, argv, message):
    out = tmp_path / "out"
    done = run_cli(*argv, "--mpi", "openmpi", "--bin-dir", fake["bin"], "--launcher",
                   "env FAKE_NP={np}", "--output", str(out), env=fake["env"])
    line = one_line_error(done)
    assert line.startswith(f"mpilens: error: {message}"), line
    assert not fake["log"].exists() and not out.exists()


# --- SIGTERM and SIGHUP --------------------------------------------------------------------------

# A launcher like mpirun whose ranks outlive it when it dies alone: the rank runs in the
# background, and the shell waits for it (its first argument is the rank count).
FAKE_LAUNCHER = "#!/bin/sh\nshift\n\"$@\" &\nwait\n"


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_terminate_stops_the_job_and_keeps_the_points(fake, tmp_path, signum, status):
    launcher = write_script(tmp_path / "fakerun", FAKE_LAUNCHER)
    out = tmp_path / "run"
    pidfile = tmp_path / "rank.pid"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), FAKE_DELAY="0.2",
               FAKE_PIDFILE=str(pidfile), **fake["env"])
    process = subprocess.Popen(
        [sys.executable, "-m", "mpilens", "sanity", "--mpi", "openmpi", "--bin-dir", fake["bin"],
         "--launcher", f"{launcher} {{np}}", "--output", str(out)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    results_file = out / "sanity.jsonl"
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and results_file.exists()
               and len(results_file.read_text().splitlines()) >= 3):
        assert time.monotonic() < deadline, "the fake program never wrote its first points"
        time.sleep(0.05)
    rank = int(pidfile.read_text())
    try:
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == status, stderr
        assert stderr.splitlines()[-1] == f"mpilens: interrupted by {signum.name}"
        assert "Traceback" not in stderr
        deadline = time.monotonic() + 10
        while not _gone(rank) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(rank), "the launched program still runs"
        kept = results_file.read_text()
        assert len(kept.splitlines()) >= 3
        assert all(json.loads(line) for line in kept.splitlines())
    finally:
        if not _gone(rank):
            os.kill(rank, signal.SIGKILL)
        if process.poll() is None:
            process.kill()


# --- types of record fields ----------------------------------------------------------------------

@pytest.mark.parametrize("line, change, message", [
    (0, lambda r: r.update(hosts=5),
     'line 1: meta field "hosts": expected a list of strings, found a number'),
    (0, lambda r: r.update(mpi={"flavour": ["x"]}),
     'line 1: meta field "mpi.flavour": expected a string, found a list'),
    (1, lambda r: r["stats"].update(achieved_ns="12"),
     'line 2: point field "stats.achieved_ns": expected a number or null, found a string'),
    (3, lambda r: r["params"].update(target_ns=10**400),
     'line 4: point field "params.target_ns": expected a number, found a number too large'),
    (3, lambda r: r["params"].pop("target_ns"),
     'line 4: point field "params.target_ns": expected a value, found nothing'),
])
def test_a_field_of_another_type_is_refused_with_its_line(tmp_path, sanity_records, line,
                                                          change, message):
    change(sanity_records[line])
    path = write_records(tmp_path / "run.jsonl", sanity_records)
    with pytest.raises(MpilensError) as refused:
        results.load(path)
    assert str(refused.value) == f'"{path}" is corrupt at {message}'
