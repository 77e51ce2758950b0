"""Manual pages (roff, man(7)) from the Markdown the reference pages are written in.

docs/programs/*.md are written as manual pages: "# name(1)", then "## NAME", "## SYNOPSIS", ...
sections of paragraphs, code blocks, bullet lists and tables (an option table's first column is
the option, the last what it does). This turns one into a page `man` shows, so that the pages
people read on the web and in a terminal come from one source. The C build runs it on each
program's page (CMake, at build time); it needs the standard library only, so that a site
building the programs needs no Python package:

    python3 python/mpilens/manpage.py docs/programs/mpilens-overlap.md out/mpilens-overlap.1 \
        --version 0.2.0
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Iterator, List, Sequence, Tuple

TITLE = re.compile(r"^#\s+(?P<name>[\w.-]+)\((?P<section>\d)\)\s*$")
# Inline markup, in the order it is replaced: code spans first (nothing inside them is markup).
CODE = re.compile(r"`([^`]+)`")
BOLD = re.compile(r"\*\*([^*]+)\*\*")
EMPHASIS = re.compile(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])")
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def escape(text: str) -> str:
    """Text safe in a roff line: backslashes and hyphens escaped (an option stays copyable),
    and characters beyond ASCII (µ, ×, √) as roff's Unicode escapes, which every formatter
    reads whatever the page's encoding."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)


def inline(text: str) -> str:
    """Markdown inline markup as roff fonts: code and bold in bold, emphasis in italics; a
    link shows its text, and its target when that is a web address."""
    spans: List[str] = []

    def keep(match: re.Match) -> str:
        spans.append(match.group(1))
        return f"\0{len(spans) - 1}\0"

    text = CODE.sub(keep, text.replace("\\|", "|"))
    text = LINK.sub(
        lambda m: m.group(1) + (f" <{m.group(2)}>" if "://" in m.group(2) else ""), text
    )
    text = escape(text)
    text = BOLD.sub(r"\\fB\1\\fR", text)
    text = EMPHASIS.sub(r"\\fI\1\\fR", text)
    return re.sub(r"\0(\d+)\0", lambda m: "\\fB" + escape(spans[int(m.group(1))]) + "\\fR", text)


def line(text: str) -> str:
    """A text line that roff does not take for a request (a leading . or ')."""
    return "\\&" + text if text.startswith((".", "'")) else text


def table_cells(row: str) -> List[str]:
    """The cells of a Markdown table row, with escaped pipes kept inside their cell."""
    cells = re.split(r"(?<!\\)\|", row.strip().strip("|"))
    return [cell.strip() for cell in cells]


def table(rows: Sequence[str]) -> Iterator[str]:
    """A table as tagged paragraphs: the first column is the tag, the last the body; the columns
    between (a default, a unit) go before the body as "header: value"."""
    header = table_cells(rows[0])
    for row in rows[2:]:  # rows[1] is the |---| rule
        cells = table_cells(row)
        cells += [""] * (len(header) - len(cells))
        middle = [
            f"{name}: {value}" for name, value in zip(header[1:-1], cells[1:-1]) if value and name
        ]
        body = ("(" + "; ".join(middle) + ") " if middle else "") + cells[-1]
        yield ".TP"
        yield line(inline(cells[0]) or "\\&")
        yield line(inline(body))


def blocks(lines: Sequence[str]) -> Iterator[Tuple[str, List[str]]]:
    """The Markdown body as (kind, lines): heading, code, table, item, paragraph."""
    i = 0
    while i < len(lines):
        text = lines[i]
        if not text.strip():
            i += 1
        elif text.startswith("```"):
            closing = (j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            end = next(closing, len(lines))
            yield "code", list(lines[i + 1 : end])
            i = end + 1
        elif text.startswith("#"):
            yield "heading", [text.lstrip("#").strip()]
            i += 1
        elif text.lstrip().startswith("|"):
            end = i
            while end < len(lines) and lines[end].lstrip().startswith("|"):
                end += 1
            yield "table", list(lines[i:end])
            i = end
        elif re.match(r"^\s*[-*] ", text):
            item = [re.sub(r"^\s*[-*] ", "", text)]
            i += 1
            while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                item.append(lines[i].strip())
                i += 1
            yield "item", item
        else:
            para = []
            while (
                i < len(lines)
                and lines[i].strip()
                and not lines[i].startswith(("```", "#"))
                and not lines[i].lstrip().startswith("|")
                and not re.match(r"^\s*[-*] ", lines[i])
            ):
                para.append(lines[i].strip())
                i += 1
            yield "paragraph", para


def header(name: str, section: str, version: str, date: str) -> List[str]:
    """The title line and the settings every page starts with."""
    return [
        f'.TH "{name.upper()}" "{section}" "{date}" "mpilens {version}" "mpilens manual"',
        ".nh",  # no hyphenation: option names stay whole
        ".ad l",
    ]


def body(lines: Sequence[str], heading_prefix: str = "") -> List[str]:
    """Markdown lines as roff: headings become sections (prefixed, for a page within a page)."""
    out: List[str] = []
    for kind, part in blocks(lines):
        if kind == "heading":
            out.append(f'.SH "{escape((heading_prefix + part[0]).upper())}"')
        elif kind == "code":
            out += [".PP", ".nf", ".RS 4"] + [line(escape(text)) for text in part] + [".RE", ".fi"]
        elif kind == "table":
            out += list(table(part))
        elif kind == "item":
            out += [".IP \\(bu 2", line(inline(" ".join(part)))]
        else:
            out += [".PP", line(inline(" ".join(part)))]
    return out


def split_title(markdown: str) -> Tuple[str, str, List[str]]:
    """(name, section, the lines after the title) of a reference page."""
    lines = markdown.splitlines()
    title = TITLE.match(lines[0]) if lines else None
    if not title:
        raise ValueError('the page must start with a title "# name(section)"')
    return title.group("name"), title.group("section"), lines[1:]


def to_roff(markdown: str, version: str, date: str = "") -> str:
    """The manual page of a Markdown reference page that starts with "# name(section)"."""
    name, section, lines = split_title(markdown)
    return "\n".join(header(name, section, version, date) + body(lines)) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Markdown reference page -> manual page (roff)")
    parser.add_argument("markdown", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--version", required=True, help="mpilens's version, in the footer")
    parser.add_argument("--date", default="", help="the date in the footer")
    args = parser.parse_args(argv)
    try:
        page = to_roff(args.markdown.read_text(encoding="utf-8"), args.version, args.date)
    except (OSError, ValueError) as error:
        print(f"manpage: {args.markdown}: {error}", file=sys.stderr)
        return 2
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(page, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
