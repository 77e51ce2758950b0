"""HTML report and comparison pages built from the sanity fixture."""

from __future__ import annotations

import base64
import html
import re

from conftest import SANITY_FIXTURE, read_records, write_records
from mpilens import report, results


def _images(page: str) -> list:
    return [base64.b64decode(data)
            for data in re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)]


def test_report_from_fixture(tmp_path):
    records = read_records(SANITY_FIXTURE)
    records[0]["command"] = ["mpilens-sanity", "--output", 'a&b <script>alert("x")</script>']
    run = results.load(write_records(tmp_path / "res" / "sanity.jsonl", records))
    path = report.write_report([run], tmp_path / "out")
    assert path == tmp_path / "out" / "report.html"
    page = path.read_text(encoding="utf-8")
    meta = records[0]

    assert "<script" not in page and "<link" not in page and 'src="http' not in page
    assert ("mpilens-sanity --output &#x27;a&amp;b &lt;script&gt;alert(&quot;x&quot;)"
            "&lt;/script&gt;&#x27;") in page
    for value in (meta["mpilens_version"], meta["mpi"]["library"], meta["mpi"]["standard"],
                  meta["date"], meta["clock"]["source"], "vm (ranks 0-1)", "0: 0; 1: 1",
                  "OMPI_MCA_btl=self,vader", "preset=quick", "resume=false",
                  f"{meta['points_total']} of {meta['points_total']} points"):
        assert html.escape(value) in page, value
    assert "<h1>mpilens report</h1>" in page
    assert '<p class="subtitle">2026-11-22 · Open MPI v4.1.4</p>' in page
    assert "<h2>Measurement sanity</h2>" in page
    for sentence in report.findings([run]):
        assert f"<li>{html.escape(sentence)}</li>" in page
    note = run.notes[0]
    assert html.escape(f"{note['level']}: {note['text']}") in page

    images = _images(page)
    assert len(images) == 2 and all(png.startswith(b"\x89PNG\r\n\x1a\n") for png in images)
    written = sorted(p.name for p in (tmp_path / "out" / "plots").iterdir())
    assert written == ["sanity-compute.png", "sanity-offsets.png"]
    assert (tmp_path / "out" / "plots" / "sanity-compute.png").read_bytes() in images


def test_report_of_interrupted_run(tmp_path):
    records = read_records(SANITY_FIXTURE)[:6]
    run = results.load(write_records(tmp_path / "sanity.jsonl", records))
    total = run.points_total
    done = len(run.points)
    page = report.write_report([run], tmp_path).read_text(encoding="utf-8")
    assert f"{done} of {total} points (interrupted)" in page
    assert (f'<li class="warn">warning: the run is incomplete: {done} of {total} points '
            "(interrupted)</li>") in page


def test_report_of_unknown_family_keeps_metadata(tmp_path):
    records = read_records(SANITY_FIXTURE)
    for record in records:
        if record.get("family"):
            record["family"] = "teleport"
    run = results.load(write_records(tmp_path / "teleport.jsonl", records))
    page = report.write_report([run], tmp_path).read_text(encoding="utf-8")
    assert "no report section for the &quot;teleport&quot; family" in page
    assert html.escape(records[0]["mpi"]["library"]) in page


def test_report_with_two_runs_prefixes_findings(tmp_path):
    records = read_records(SANITY_FIXTURE)
    runs = [results.load(write_records(tmp_path / name, records))
            for name in ("sanity.jsonl", "sanity-again.jsonl")]
    found = report.findings(runs)
    assert len(found) == 2 * len(report.findings(runs[:1]))
    assert all(sentence.startswith("sanity: ") for sentence in found)
    page = report.write_report(runs, tmp_path / "out").read_text(encoding="utf-8")
    assert "<h2>Measurement sanity (sanity-again.jsonl)</h2>" in page
    assert len(list((tmp_path / "out" / "plots").iterdir())) == 4


def test_comparison(tmp_path):
    records_a = read_records(SANITY_FIXTURE)
    records_b = read_records(SANITY_FIXTURE)
    records_b[0]["mpi"]["library"] = "MPICH Version:\t4.0.2"
    for record in records_b:
        if record.get("bench") == "clock":
            record["stats"]["read_cost_ns"] = 48
    run_a = results.load(write_records(tmp_path / "a" / "sanity.jsonl", records_a))
    run_b = results.load(write_records(tmp_path / "b" / "sanity.jsonl", records_b))
    path = report.write_comparison([run_a], [run_b], tmp_path / "out", ("before", "after <b>"))
    assert path == tmp_path / "out" / "compare.html"
    page = path.read_text(encoding="utf-8")

    assert "<h1>mpilens comparison: before vs after &lt;b&gt;</h1>" in page
    cost_a = max(r["stats"]["read_cost_ns"] for r in records_a if r.get("bench") == "clock")
    ratio = 48 / cost_a
    assert f"<li>sanity: clock read cost: {cost_a} ns vs 48 ns ({ratio:.1f}× slower in B)</li>" \
        in page
    library_a = html.escape(records_a[0]["mpi"]["library"])
    assert (f'<tr class="diff"><td>MPI library</td><td>{library_a}</td>'
            "<td>MPICH Version:\t4.0.2</td></tr>") in page
    assert "<tr><td>ranks</td><td>2</td><td>2</td></tr>" in page
    assert "<h2>Measurement sanity (A: before)</h2>" in page
    assert "<h2>Measurement sanity (B: after &lt;b&gt;)</h2>" in page
    assert len(_images(page)) == 4
    assert sorted(p.name for p in (tmp_path / "out" / "plots").iterdir()) == [
        "compare-a-sanity-compute.png", "compare-a-sanity-offsets.png",
        "compare-b-sanity-compute.png", "compare-b-sanity-offsets.png"]


def test_comparison_lists_families_in_one_side_only(tmp_path):
    records = read_records(SANITY_FIXTURE)
    other = [dict(r, family="teleport") if r.get("family") else r for r in records]
    run_a = results.load(write_records(tmp_path / "a.jsonl", records))
    run_b = results.load(write_records(tmp_path / "b.jsonl", other))
    page = report.write_comparison([run_a], [run_b], tmp_path).read_text(encoding="utf-8")
    assert "<li>only in A: sanity</li>" in page
    assert "<li>only in B: teleport</li>" in page


# Files recorded from the real programs, frozen: the reader, the diagnosis and the report must
# keep handling them as the code evolves (results written today are read by later versions).
RECORDED = ["sanity-openmpi-4ranks.jsonl", "sanity-mpich-2ranks.jsonl"]


def test_recorded_runs_still_report(tmp_path):
    from conftest import FIXTURES

    runs = [results.load(FIXTURES / name) for name in RECORDED]
    assert [run.meta["mpi"]["flavour"] for run in runs] == ["openmpi", "mpich"]
    assert [run.meta["ranks"] for run in runs] == [4, 2]
    assert all(run.complete for run in runs)
    sentences = report.findings(runs)
    assert sum("all ranks share one clock" in s for s in sentences) == 2
    page = report.write_report(runs, tmp_path).read_text(encoding="utf-8")
    assert len(_images(page)) >= 4
    assert "Open MPI v4.1.4" in page and "MPICH Version" in page
