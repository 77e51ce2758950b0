"""Value parsing against the vectors shared with the C option parser, and formatting."""

from pathlib import Path

import pytest

from mpilens import units
from mpilens.errors import MpilensError

VECTORS = Path(__file__).resolve().parents[1] / "data" / "units_vectors.txt"
PARSERS = {
    "size": units.parse_size,
    "time": units.parse_time,
    "size_range": units.parse_size_range,
    "time_range": units.parse_time_range,
}


def _vectors():
    for number, line in enumerate(VECTORS.read_text(encoding="utf-8").splitlines(), start=1):
        if not line or line.startswith("#"):
            continue
        # Texts may start or end with spaces, so only the tab separates fields.
        kind, text, expected = line.split("\t")
        yield pytest.param(kind, text, expected, id=f"line{number}:{kind}:{text!r}")


@pytest.mark.parametrize("kind,text,expected", list(_vectors()))
def test_shared_vector(kind, text, expected):
    parse = PARSERS[kind]
    if expected == "error":
        with pytest.raises(MpilensError, match=r"^invalid (size|time|range) "):
            parse(text)
    elif kind.endswith("_range"):
        low, high = expected.split(":")
        assert parse(text) == (int(low), int(high))
    else:
        assert parse(text) == int(expected)


def test_vector_file_covers_every_kind():
    assert {kind for kind, _, _ in (p.values for p in _vectors())} == set(PARSERS)


@pytest.mark.parametrize("parse,text,message", [
    (units.parse_size, "4Q",
     'invalid size "4Q": expected a number of bytes such as 64, 4K or 16MiB'),
    (units.parse_size, "0.5", 'invalid size "0.5": not a whole number of bytes'),
    (units.parse_size, "1024T", 'invalid size "1024T": must be below 2^50 bytes'),
    (units.parse_time, "0.5ns", 'invalid time "0.5ns": not a whole number of nanoseconds'),
    (units.parse_size_range, "1:0", 'invalid range "1:0": minimum is larger than maximum'),
    (units.parse_size_range, "1:2:3", 'invalid range "1:2:3": expected MIN:MAX such as 1:4M, '
                                      "or a single value"),
])
def test_error_messages(parse, text, message):
    with pytest.raises(MpilensError) as caught:
        parse(text)
    assert str(caught.value) == message


def test_sizes_up_to_the_limit():
    assert units.parse_size("1023T") == 1023 << 40
    assert units.parse_size("1048575.5K") == (1 << 30) - 512


@pytest.mark.parametrize("size,text", [
    (0, "0 B"), (64, "64 B"), (4096, "4 KiB"), (1536, "1.5 KiB"), (16 << 20, "16 MiB"),
    (3 << 30, "3 GiB"), (None, "n/a"),
])
def test_format_size(size, text):
    assert units.format_size(size) == text


@pytest.mark.parametrize("ns,text", [
    (0, "0 ns"), (21.4, "21.4 ns"), (250, "250 ns"), (2500, "2.5 µs"), (1000, "1 µs"),
    (123456, "123 µs"), (2_000_000, "2 ms"), (1.5e9, "1.5 s"), (-3200, "-3.2 µs"), (None, "n/a"),
])
def test_format_time(ns, text):
    assert units.format_time(ns) == text
