"""The manual pages made from the reference pages (python/mpilens/manpage.py): what each piece of
Markdown becomes, and every page of docs/programs formatted by groff without an error."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from mpilens import manpage

PAGE = """# mpilens-demo(1)

## NAME
mpilens-demo - show what the converter does

## SYNOPSIS
```
mpirun -n 2 mpilens-demo [--size N]
.starts with a dot
```
Runs `mpilens-demo`, **bold**, *emphasis*, [a page](../x.md) and [a site](https://example.org).

## OPTIONS
| option | default | meaning |
|---|---|---|
| `--size N\\|auto` | `4` | message size in µs×2 |
| `--quiet` | | no lines |

- first item
  continued
- .second item
"""


def test_each_piece_of_markdown():
    roff = manpage.to_roff(PAGE, "9.9.9", "2026-11-28")
    lines = roff.splitlines()
    assert lines[0] == '.TH "MPILENS-DEMO" "1" "2026-11-28" "mpilens 9.9.9" "mpilens manual"'
    assert '.SH "NAME"' in lines and '.SH "OPTIONS"' in lines
    assert "mpilens\\-demo \\- show what the converter does" in lines
    # code: verbatim, hyphens escaped, a leading dot kept as text
    start = lines.index(".nf")
    assert lines[start + 2] == "mpirun \\-n 2 mpilens\\-demo [\\-\\-size N]"
    assert lines[start + 3] == "\\&.starts with a dot"
    # inline: code and bold in bold, emphasis in italics, a web link keeps its address
    assert (
        "Runs \\fBmpilens\\-demo\\fR, \\fBbold\\fR, \\fIemphasis\\fR, a page and a site "
        "<https://example.org>." in lines
    )
    # an option table: tag, then the default before the meaning; beyond ASCII as \[uXXXX]
    tag = lines.index("\\fB\\-\\-size N|auto\\fR")
    assert lines[tag - 1] == ".TP"
    assert lines[tag + 1] == "(default: \\fB4\\fR) message size in \\[u00B5]s\\[u00D7]2"
    assert lines[lines.index("\\fB\\-\\-quiet\\fR") + 1] == "no lines"
    # items, continued lines joined, a leading dot kept as text
    assert lines[-4:] == [".IP \\(bu 2", "first item continued", ".IP \\(bu 2", "\\&.second item"]
    assert all(ord(c) < 128 for c in roff)


def test_a_page_without_a_title_is_refused(tmp_path, capsys):
    source = tmp_path / "page.md"
    source.write_text("## NAME\nx - y\n")
    assert manpage.main([str(source), str(tmp_path / "x.1"), "--version", "1"]) == 2
    assert 'must start with a title "# name(section)"' in capsys.readouterr().err


PROGRAMS = sorted((ROOT / "docs" / "programs").glob("*.md"))


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
@pytest.mark.parametrize("page", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_every_program_page_formats(page, tmp_path):
    """Run as the build runs it (a script, the standard library only); groff reports no error,
    and the page holds its sections."""
    out = tmp_path / f"{page.stem}.1"
    subprocess.run([sys.executable, ROOT / "python" / "mpilens" / "manpage.py", page, out,
                    "--version", "0.2.0"], check=True)
    done = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", out], capture_output=True,
                          text=True, check=True)
    errors = [line for line in done.stderr.splitlines() if "can't break line" not in line]
    assert errors == []
    text = out.read_text()
    for section in ("NAME", "SYNOPSIS", "OPTIONS", "EXIT STATUS"):
        assert f'.SH "{section}"' in text
