"""Small HTML builders that escape every piece of text they are given."""

from __future__ import annotations

import base64
import html
from typing import Iterable, Optional, Sequence


class Markup(str):
    """HTML that is already safe; everything else put into a page is escaped."""


def esc(value: object) -> Markup:
    return value if isinstance(value, Markup) else Markup(html.escape(str(value), quote=True))


def element(tag: str, content: object = "", css_class: Optional[str] = None) -> Markup:
    attribute = f' class="{esc(css_class)}"' if css_class else ""
    return Markup(f"<{tag}{attribute}>{esc(content)}</{tag}>")


def join(parts: Iterable[object]) -> Markup:
    return Markup("".join(esc(part) for part in parts))


def bullets(items: Iterable[object], css_class: Optional[str] = None) -> Markup:
    return element("ul", join(element("li", item) for item in items), css_class)


def table(
    header: Sequence[object],
    rows: Iterable[Sequence[object]],
    row_classes: Optional[Sequence[Optional[str]]] = None,
    css_class: Optional[str] = None,
) -> Markup:
    rows = list(rows)
    classes = list(row_classes) if row_classes is not None else [None] * len(rows)
    head = element("tr", join(element("th", cell) for cell in header))
    body = join(
        element("tr", join(element("td", cell) for cell in row), css)
        for row, css in zip(rows, classes)
    )
    return element("table", join([element("thead", head), element("tbody", body)]), css_class)


def png_image(png: bytes, alt: str) -> Markup:
    """An <img> carrying the PNG itself, so the page needs no other file."""
    data = base64.b64encode(png).decode("ascii")
    return Markup(f'<img src="data:image/png;base64,{data}" alt="{esc(alt)}">')


def details(summary: object, content: object) -> Markup:
    """A block the reader can unfold; plain HTML, no script needed."""
    return Markup(f"<details><summary>{esc(summary)}</summary>{esc(content)}</details>")


def page(title: str, body: object, css: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{esc(title)}</title>\n<style>\n{css}</style>\n</head>\n"
        f"<body>\n{esc(body)}\n</body>\n</html>\n"
    )
