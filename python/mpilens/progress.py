"""Progress of a running measurement, read from the results file it is writing."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Callable, Optional, TextIO, Union

# Without a terminal (batch jobs, CI logs) a line is printed at most this often, plus at every 10%.
QUIET_INTERVAL_S = 10.0


class ResultsTail:
    """Follows a results file as it grows: points_total from the meta record, points so far.

    Only complete lines (ending with a newline) are read; a partial last line is left for the next
    poll, so a record being written is never miscounted.
    """

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = Path(path)
        self._reset()

    def _reset(self) -> None:
        self.points_total: Optional[int] = None
        self.points = 0
        self._offset = 0
        self._lines = 0

    def poll(self) -> None:
        try:
            with self.path.open("rb") as file:
                file.seek(0, 2)
                if file.tell() < self._offset:
                    # The file was replaced or cut shorter than what we read: count it afresh.
                    self._reset()
                file.seek(self._offset)
                data = file.read()
        except OSError:
            return
        end = data.rfind(b"\n")
        if end < 0:
            return
        for line in data[:end].split(b"\n"):
            self._take(line)
        self._offset += end + 1

    def _take(self, line: bytes) -> None:
        self._lines += 1
        try:
            record = json.loads(line)
        except ValueError:
            return
        if not isinstance(record, dict):
            return
        if self._lines == 1 and record.get("type") == "meta":
            total = record.get("points_total")
            self.points_total = total if isinstance(total, int) else None
        elif record.get("type") == "point":
            self.points += 1


def remaining_seconds(
    elapsed: float, done: int, total: int, done_before: int = 0
) -> Optional[float]:
    """Time left if the points still to do go at the pace of those done in this session.

    done_before counts the points a resumed run found already measured: they took no time now.
    """
    measured_now = done - done_before
    if measured_now <= 0:
        return None
    return max(0.0, elapsed / measured_now * (total - done))


def format_duration(seconds: Optional[float]) -> str:
    """Seconds as M:SS or H:MM:SS; "--" when unknown."""
    if seconds is None:
        return "--"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Shows "family: done/total points  pct%  elapsed  eta" while a program runs.

    On a terminal one line is rewritten in place; otherwise lines are printed sparingly.
    """

    def __init__(
        self,
        label: str,
        stream: TextIO = sys.stderr,
        clock: Callable[[], float] = time.monotonic,
        tty: Optional[bool] = None,
    ) -> None:
        self.label = label
        self.stream = stream
        self.clock = clock
        self.tty = stream.isatty() if tty is None else tty
        self._started = clock()
        self._done_before = 0
        self._last_print: Optional[float] = None
        self._last_decile = -1
        self._width = 0

    def start(self, done_before: int) -> None:
        self._started = self.clock()
        self._done_before = done_before

    def line(self, done: int, total: Optional[int]) -> str:
        elapsed = self.clock() - self._started
        if total is None:
            return f"{self.label}: starting  elapsed {format_duration(elapsed)}"
        percent = 100.0 * done / total if total > 0 else 100.0
        eta = remaining_seconds(elapsed, done, total, self._done_before)
        return (
            f"{self.label}: {done}/{total} points  {percent:.0f}%  "
            f"elapsed {format_duration(elapsed)}  eta {format_duration(eta)}"
        )

    def update(self, done: int, total: Optional[int]) -> None:
        text = self.line(done, total)
        if self.tty:
            self.stream.write("\r" + text.ljust(self._width))
            self._width = len(text)
            self.stream.flush()
            return
        now = self.clock()
        decile = int(10 * done / total) if total else -1
        due = self._last_print is None or now - self._last_print >= QUIET_INTERVAL_S
        if due or decile > self._last_decile:
            self.stream.write(text + "\n")
            self.stream.flush()
            self._last_print = now
            self._last_decile = max(decile, self._last_decile)

    def finish(self) -> None:
        """Leave the terminal on a fresh line, so what follows is not written over the display."""
        if self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0
