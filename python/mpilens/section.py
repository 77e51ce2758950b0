"""What a family contributes to a report: a titled section of HTML blocks and plots."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Union

from .markup import Markup


@dataclass
class Plot:
    """A rendered figure; the report embeds it and also writes it under plots/, named by name."""

    name: str
    caption: str
    png: bytes


Part = Union[Markup, Plot]


@dataclass
class ReportSection:
    title: str
    parts: List[Part] = field(default_factory=list)
