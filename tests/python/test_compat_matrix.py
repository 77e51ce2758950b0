"""tests/compat/matrix, the compatibility matrix of make test-compat, on constructed ctest
results: which cells work, are partial (and why) or are not available (and why)."""

from __future__ import annotations

from pathlib import Path

from conftest import load_script

matrix = load_script(Path(__file__).resolve().parents[2] / "tests" / "compat" / "matrix",
                     "compat_matrix")


def junit(path: Path, cases: dict) -> None:
    """cases: name -> (ctest status, output), as ctest --output-junit writes them."""
    body = []
    for name, (status, output) in cases.items():
        failure = '<failure message="Failed"/>' if status == "fail" else ""
        body.append(f'<testcase name="{name}" classname="{name}" time="1" status="{status}">'
                    f"{failure}<system-out>{output}</system-out></testcase>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('<?xml version="1.0"?><testsuite name="x">' + "".join(body) + "</testsuite>")


def test_cells_from_results(tmp_path):
    junit(tmp_path / "a" / "compat-junit.xml", {
        "unit.json": ("run", ""),
        "mpi.handshake.np2": ("run", ""),
        "mpi.piggyback_layer.np2": ("run", ""),
        "mpi.piggyback_layer.np4": ("fail", "ok 1\nFAIL: pb_calls isendrecv: status tag 14\nmore"),
        "mpi.monitor_fortran.np2": ("run", ""),
    })
    junit(tmp_path / "b" / "compat-junit.xml", {"unit.json": ("run", "")})
    (tmp_path / "b" / "left-out.txt").write_text("Fortran: mpi.h has no MPI_Fint\n")
    cells = matrix.matrix(tmp_path, ["a", "b", "c"])
    assert cells["C units"]["a"].state == "works"
    assert cells["core"]["a"].detail == "1 of 1 tests"
    pb = cells["libmpilens-piggyback"]["a"]
    assert pb.state == "partial" and pb.detail == "1 of 2 tests pass"
    assert [case.name for case in pb.failed] == ["mpi.piggyback_layer.np4"]
    # Fortran's tests belong to Fortran, not to the monitor they are named after.
    assert cells["Fortran"]["a"].state == "works"
    assert cells["libmpilens-monitor"]["a"].state == "not available"
    assert cells["Fortran"]["b"].state == "not available"
    assert cells["Fortran"]["b"].detail == "mpi.h has no MPI_Fint"
    assert cells["core"]["c"].state == "not run"


def test_rendered_table_names_failures_and_known_explanations(tmp_path):
    junit(tmp_path / "a" / "compat-junit.xml", {
        "mpi.piggyback_layer.np4": ("fail", "FAIL: pb_calls isendrecv: status tag 14"),
    })
    cells = matrix.matrix(tmp_path, ["a"])
    known = {"a": {"mpi.piggyback_layer": "the library's own Isendrecv status is wrong"}}
    text = matrix.render(cells, ["a"], known, {"a": "Some MPI 1.0"})
    assert "| **libmpilens-piggyback** | **partial** (0 of 1 tests pass) |" in text
    assert ("`mpi.piggyback_layer.np4` failed: FAIL: pb_calls isendrecv: status tag 14. "
            "Known: the library's own Isendrecv status is wrong") in text
    assert "- `a`: Some MPI 1.0" in text


def test_skipped_tests_are_not_available_with_their_reason(tmp_path):
    junit(tmp_path / "a" / "compat-junit.xml", {
        "mpi.examples.np2": ("notrun", "skipped: needs Open MPI 5"),
    })
    cell = matrix.matrix(tmp_path, ["a"])["examples"]["a"]
    assert cell.state == "not available" and "needs Open MPI 5" in cell.detail


def test_each_column_names_its_run(tmp_path):
    """Columns may come from runs of different commits: each says which, and when."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "compat-junit.xml").write_text(
        '<?xml version="1.0"?><testsuite name="x" timestamp="2026-11-29T16:12:31"></testsuite>')
    (tmp_path / "a" / "compat-commit.txt").write_text("d012609\n")
    assert matrix.run_of(tmp_path, "a") == "run 2026-11-29 16:12:31 at mpilens d012609"
    assert matrix.run_of(tmp_path, "b") == "not run"
