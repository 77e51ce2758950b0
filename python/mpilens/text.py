"""Words and tables every analysis writes: percentages, counts, ranges of numbers, lists, aligned
columns. Sizes and times are units.py's."""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence


def percent(fraction: Optional[float], decimals: int = 0) -> str:
    """0.25 -> "25%"; None -> "n/a"."""
    return "n/a" if fraction is None else f"{fraction * 100:.{decimals}f}%"


def counted(number: int, noun: str) -> str:
    """1 rank, 2 ranks."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def ranges(numbers: Iterable[float], dash: str = "-") -> str:
    """ "1-3, 5": whole numbers, each once, runs of consecutive ones joined by dash."""
    spans: List[List[int]] = []
    for number in sorted({int(value) for value in numbers}):
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ", ".join(str(a) if a == b else f"{a}{dash}{b}" for a, b in spans)


def listed(names: Sequence[str], shown: Optional[int] = None) -> str:
    """ "a", "a and b", "a, b and c"; beyond shown + 1 names, "a, b, c and 5 more"."""
    if shown is not None and len(names) > shown + 1:
        return ", ".join(names[:shown]) + f" and {len(names) - shown} more"
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def columns(rows: Sequence[Sequence[str]], left: int = 0) -> List[str]:
    """The rows as lines of aligned columns, two spaces apart: the first `left` columns aligned
    on the left (names), the others on the right (numbers)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.ljust(width) if i < left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths))
        ).rstrip()
        for row in rows
    ]


def short_library(library: str) -> str:
    """The library's name and version out of MPI_Get_library_version's long first line."""
    return " ".join(library.split(",")[0].split())
