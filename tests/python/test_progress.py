"""Progress display: ETA arithmetic, file tailing, and what is printed."""

from __future__ import annotations

import io
import json

import pytest

from mpilens.progress import Progress, ResultsTail, format_duration, remaining_seconds


def test_eta_is_elapsed_per_point_times_points_left():
    assert remaining_seconds(elapsed=30.0, done=10, total=40) == pytest.approx(90.0)
    assert remaining_seconds(elapsed=30.0, done=40, total=40) == 0.0
    assert remaining_seconds(elapsed=5.0, done=0, total=40) is None


def test_eta_of_resumed_run_counts_only_points_measured_now():
    # 30 points were already in the file; 10 more took 20 s, so the last 60 take 120 s.
    assert remaining_seconds(elapsed=20.0, done=40, total=100, done_before=30) == \
        pytest.approx(120.0)
    assert remaining_seconds(elapsed=20.0, done=30, total=100, done_before=30) is None


@pytest.mark.parametrize("seconds,text", [
    (None, "--"), (0, "0:00"), (42.4, "0:42"), (725, "12:05"), (3723, "1:02:03")])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


META = json.dumps({"type": "meta", "schema": 1, "family": "sanity", "points_total": 4}) + "\n"
POINT = json.dumps({"type": "point", "bench": "clock", "key": "k", "params": {},
                    "stats": {}}) + "\n"
NOTE = json.dumps({"type": "note", "level": "info", "text": "resumed"}) + "\n"


def test_tail_counts_complete_lines_incrementally(tmp_path):
    path = tmp_path / "r.jsonl"
    tail = ResultsTail(path)
    tail.poll()
    assert (tail.points_total, tail.points) == (None, 0)
    with path.open("w") as out:
        out.write(META[:10])
        out.flush()
        tail.poll()
        assert tail.points_total is None
        out.write(META[10:] + POINT + NOTE + POINT[:25])
        out.flush()
        tail.poll()
        assert (tail.points_total, tail.points) == (4, 1)
        out.write(POINT[25:] + POINT)
        out.flush()
        tail.poll()
        assert tail.points == 3
        tail.poll()
        assert tail.points == 3


def test_tail_starts_over_when_the_file_is_replaced(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(META + POINT + POINT + POINT)
    tail = ResultsTail(path)
    tail.poll()
    assert tail.points == 3
    path.write_text(META + POINT)
    tail.poll()
    assert (tail.points_total, tail.points) == (4, 1)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_progress_line_on_a_terminal_is_rewritten():
    clock, stream = FakeClock(), io.StringIO()
    progress = Progress("sanity", stream=stream, clock=clock, tty=True)
    progress.start(0)
    clock.now += 30
    progress.update(10, 40)
    clock.now += 10
    progress.update(12, 40)
    progress.finish()
    assert stream.getvalue() == ("\rsanity: 10/40 points  25%  elapsed 0:30  eta 1:30"
                                 "\rsanity: 12/40 points  30%  elapsed 0:40  eta 1:33\n")


def test_progress_without_terminal_prints_every_ten_percent_or_ten_seconds():
    clock, stream = FakeClock(), io.StringIO()
    progress = Progress("sanity", stream=stream, clock=clock, tty=False)
    progress.start(0)
    printed = []
    for done, step in [(0, 1), (1, 1), (2, 1), (10, 1), (11, 1), (12, 11), (13, 1), (20, 1)]:
        clock.now += step
        progress.update(done, 100)
        printed.append(len(stream.getvalue().splitlines()))
    # printed: first update, reaching 10%, after 11 s, reaching 20%
    assert printed == [1, 1, 1, 2, 2, 3, 3, 4]
    assert stream.getvalue().splitlines()[-1].startswith("sanity: 20/100 points  20%  elapsed")
    assert "\r" not in stream.getvalue()


def test_progress_before_the_meta_record():
    clock = FakeClock()
    progress = Progress("sanity", stream=io.StringIO(), clock=clock, tty=True)
    clock.now += 3
    assert progress.line(0, None) == "sanity: starting  elapsed 0:03"
