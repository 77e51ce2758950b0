"""The files the mpilens wheel installs beside the package, generated when it is built (setup.py):

- a manual page for `mpilens` and one per command (`man mpilens-report`), from the argparse
  parser the command runs with, so that they cannot drift from it; a command that runs a
  program (`mpilens overlap`) carries that program's reference page (docs/programs) as well,
  so that its page is the superset of the program's page the C install has;
- bash and zsh completion, from the same parser (shtab);
- the documentation the command's help points to (docs/*.md).

Their places, under the environment's prefix: share/man/man1, share/bash-completion/completions,
share/zsh/site-functions, share/doc/mpilens (docs/install.md).
"""

from __future__ import annotations

import argparse
import datetime
import os
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from . import __version__, manpage

MAN_DIR = "share/man/man1"
BASH_DIR = "share/bash-completion/completions"
ZSH_DIR = "share/zsh/site-functions"
DOC_DIR = "share/doc/mpilens"


def _commands(parser: argparse.ArgumentParser) -> Dict[str, Tuple[argparse.ArgumentParser, str]]:
    """The parser's commands: name -> (their parser, their one-line help)."""
    found: Dict[str, Tuple[argparse.ArgumentParser, str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found[name] = (sub, helps.get(name, ""))
    return found


def _options(parser: argparse.ArgumentParser) -> List[str]:
    """The parser's arguments as tagged paragraphs, under the title of each group."""
    formatter = parser._get_formatter()
    out: List[str] = []
    for group in parser._action_groups:
        actions = [
            a
            for a in group._group_actions
            if a.help != argparse.SUPPRESS and not isinstance(a, argparse._SubParsersAction)
        ]
        if not actions:
            continue
        out.append(f'.SS "{manpage.escape(group.title or "options")}"')
        for action in actions:
            invocation = formatter._format_action_invocation(action)
            out += [".TP", manpage.line(f"\\fB{manpage.escape(invocation)}\\fR")]
            text = formatter._expand_help(action) if action.help else ""
            out.append(manpage.line(manpage.escape(" ".join(text.split()))))
    return out


def _paragraphs(text: Optional[str]) -> List[str]:
    return [".PP", manpage.line(manpage.escape(" ".join(text.split())))] if text else []


def _program_page(programs: Path, name: str) -> List[str]:
    """The reference page of program `name`, without its NAME, its sections titled as the
    program's; nothing when it has none."""
    page = programs / f"{name}.md"
    if not page.is_file():
        return []
    _, _, lines = manpage.split_title(page.read_text(encoding="utf-8"))
    kept, skipping = [], False
    for text in lines:
        if text.startswith("## "):
            skipping = text[3:].strip().upper() == "NAME"
        if not skipping:
            kept.append(text)
    return manpage.body(kept, heading_prefix=f"the program {name}: ")


def command_page(
    name: str, parser: argparse.ArgumentParser, summary: str, programs: Path, date: str
) -> str:
    """The manual page of one command (name "mpilens" for the command itself)."""
    out = manpage.header(name, "1", __version__, date)
    out += ['.SH "NAME"', manpage.line(manpage.escape(f"{name} - {summary}"))]
    usage = parser.format_usage().replace("usage: ", "", 1).rstrip()
    out += ['.SH "SYNOPSIS"', ".nf"] + [manpage.line(manpage.escape(u)) for u in usage.split("\n")]
    out += [".fi", '.SH "DESCRIPTION"'] + _paragraphs(parser.description)
    out += ['.SH "OPTIONS"'] + _options(parser)
    commands = _commands(parser)
    if commands:
        out.append('.SH "COMMANDS"')
        for command, (_, text) in commands.items():
            out += [".TP", f"\\fB{manpage.escape(command)}\\fR", manpage.line(manpage.escape(text))]
            out.append(manpage.escape(f"See {name}-{command}(1)."))
    out += _paragraphs(parser.epilog)
    out += _program_page(programs, name)
    see = ["mpilens(1)"] if name != "mpilens" else [f"mpilens-{c}(1)" for c in commands]
    out += ['.SH "SEE ALSO"', manpage.escape(", ".join(see))]
    return "\n".join(out) + "\n"


def man_pages(parser: argparse.ArgumentParser, programs: Path, date: str) -> Dict[str, str]:
    """File name -> page: mpilens.1 and mpilens-COMMAND.1 for each command."""
    pages = {"mpilens.1": command_page("mpilens", parser, _summary(parser), programs, date)}
    for command, (sub, text) in _commands(parser).items():
        name = f"mpilens-{command}"
        pages[f"{name}.1"] = command_page(name, sub, text, programs, date)
    return pages


def _summary(parser: argparse.ArgumentParser) -> str:
    return (parser.description or "").split(":")[0].rstrip(".")


def completions(parser: argparse.ArgumentParser) -> Dict[str, str]:
    """Install path -> script: bash and zsh completion of every command and option."""
    import shtab  # a build and test dependency only: the installed command never needs it

    return {
        f"{BASH_DIR}/mpilens": shtab.complete(parser, shell="bash"),
        f"{ZSH_DIR}/_mpilens": shtab.complete(parser, shell="zsh"),
    }


def build_date() -> str:
    """Today, or SOURCE_DATE_EPOCH's day for a reproducible build."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (
        datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc)
        if epoch and epoch.isdigit()
        else datetime.datetime.now(datetime.timezone.utc)
    )
    return when.strftime("%Y-%m-%d")


def write_all(root: Path, out: str) -> List[Tuple[str, List[str]]]:
    """Writes every file into root/out and returns setuptools' data_files: (install directory,
    [paths relative to root])."""
    from .cli import build_parser, epilog

    parser = build_parser()
    # the pages are read where the package is installed, whatever the checkout it was built in
    parser.epilog = epilog(f"{DOC_DIR}/cli.md under the installation's prefix")
    files: Dict[str, str] = {
        f"{MAN_DIR}/{name}": text
        for name, text in man_pages(parser, root / "docs" / "programs", build_date()).items()
    }
    files.update(completions(parser))
    for doc in sorted((root / "docs").rglob("*.md")):
        files[f"{DOC_DIR}/{doc.relative_to(root / 'docs')}"] = doc.read_text(encoding="utf-8")
    grouped: Dict[str, List[str]] = {}
    for path, text in files.items():
        target = root / out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        grouped.setdefault(str(Path(path).parent), []).append(f"{out}/{path}")
    return sorted(grouped.items())


def installed_docs(name: str, prefixes: Sequence[str]) -> Optional[Path]:
    """Where documentation page `name` (cli.md) is: the checkout's docs/, else the one installed
    under one of `prefixes` (sys.prefix and the like); None when neither has it."""
    checkout = Path(__file__).resolve().parents[2] / "docs" / name
    if checkout.is_file():
        return checkout
    for prefix in prefixes:
        candidate = Path(prefix) / DOC_DIR / name
        if candidate.is_file():
            return candidate
    return None
