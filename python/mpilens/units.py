"""Parse and format sizes (bytes) and times (nanoseconds).

The grammar matches the C option parser; tests/data/units_vectors.txt holds the shared answers.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Callable, Optional, Tuple, Union

from .errors import MpilensError

Number = Union[int, float]

_SIZE_RE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", re.IGNORECASE)
_TIME_RE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zµμ]*)\s*", re.IGNORECASE)

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tib": 1 << 40,
}
# A bare number is microseconds: the natural scale of the overheads mpilens measures.
# Both the micro sign (U+00B5) and the Greek mu (U+03BC) are accepted for "µs".
_TIME_UNITS = {"": 1000, "ns": 1, "us": 1000, "µs": 1000, "μs": 1000, "ms": 10**6, "s": 10**9}

SIZE_LIMIT = 1 << 50
# The programs send messages of MPI_BYTE with int counts.
MESSAGE_SIZE_MAX = (1 << 31) - 1
# Times travel to the C programs as signed 64-bit nanoseconds.
TIME_LIMIT = 1 << 63

_SIZE_HINT = "expected a number of bytes such as 64, 4K or 16MiB"
_TIME_HINT = "expected a time such as 250ns, 2us, 1.5ms or 1s (a bare number is microseconds)"


def _parse(
    text: str, pattern: re.Pattern, units: dict, what: str, hint: str, unit_name: str, limit: int
) -> int:
    match = pattern.fullmatch(text)
    if match is None or match.group(2).lower() not in units:
        raise MpilensError(f'invalid {what} "{text}": {hint}')
    value = Fraction(match.group(1)) * units[match.group(2).lower()]
    if value.denominator != 1:
        raise MpilensError(f'invalid {what} "{text}": not a whole number of {unit_name}')
    if value >= limit:
        power = limit.bit_length() - 1
        raise MpilensError(f'invalid {what} "{text}": must be below 2^{power} {unit_name}')
    return int(value)


def parse_size(text: str) -> int:
    """Bytes in `text` ("64", "4K", "1.5 MiB"); K, M, G, T are binary multiples (1024)."""
    return _parse(text, _SIZE_RE, _SIZE_UNITS, "size", _SIZE_HINT, "bytes", SIZE_LIMIT)


def parse_time(text: str) -> int:
    """Nanoseconds in `text` ("250ns", "2us", "1.5ms", "1s"); a bare number is microseconds."""
    return _parse(text, _TIME_RE, _TIME_UNITS, "time", _TIME_HINT, "nanoseconds", TIME_LIMIT)


def _parse_range(text: str, parse_one: Callable[[str], int], example: str) -> Tuple[int, int]:
    parts = text.split(":")
    if len(parts) > 2 or any(not part.strip() for part in parts):
        raise MpilensError(
            f'invalid range "{text}": expected MIN:MAX such as {example}, or a single value'
        )
    low, high = parse_one(parts[0]), parse_one(parts[-1])
    if low > high:
        raise MpilensError(f'invalid range "{text}": minimum is larger than maximum')
    return low, high


def parse_size_range(text: str) -> Tuple[int, int]:
    """(low, high) bytes from "MIN:MAX" or from a single size meaning MIN = MAX."""
    return _parse_range(text, parse_size, "1:4M")


def parse_message_size(text: str) -> int:
    """A message size: parse_size, at most MESSAGE_SIZE_MAX."""
    size = parse_size(text)
    if size > MESSAGE_SIZE_MAX:
        raise MpilensError(
            f'invalid size "{text}": at most {MESSAGE_SIZE_MAX} bytes (MPI counts are int)'
        )
    return size


def parse_message_size_range(text: str) -> Tuple[int, int]:
    """(low, high) message sizes from "MIN:MAX" or a single size (parse_message_size)."""
    return _parse_range(text, parse_message_size, "1:4M")


def parse_time_range(text: str) -> Tuple[int, int]:
    """(low, high) nanoseconds from "MIN:MAX" or from a single time meaning MIN = MAX."""
    return _parse_range(text, parse_time, "1us:2ms")


def _significant(value: float) -> str:
    """Three significant digits at most, without trailing zeros: 2.5, 21.4, 123."""
    magnitude = abs(value)
    decimals = 0 if magnitude >= 100 else 1 if magnitude >= 10 else 2
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def format_size(size: Optional[Number]) -> str:
    """Human-readable bytes: 4096 -> "4 KiB", 1536 -> "1.5 KiB"; None -> "n/a"."""
    if size is None:
        return "n/a"
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(size) >= scale:
            return f"{_significant(size / scale)} {unit}"
    return f"{_significant(size)} B"


def format_time(ns: Optional[Number]) -> str:
    """Human-readable nanoseconds: 2500 -> "2.5 µs", 21.4 -> "21.4 ns"; None -> "n/a"."""
    if ns is None:
        return "n/a"
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("µs", 10**3)):
        if abs(ns) >= scale:
            return f"{_significant(ns / scale)} {unit}"
    return f"{_significant(ns)} ns"


def short_size(size: int) -> str:
    """A size in a tick label or table header: 1K, 64K, 1M (format_size without spaces and iB)."""
    return format_size(size).replace(" ", "").replace("iB", "")
