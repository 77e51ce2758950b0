"""What the wheel installs beside the package (python/mpilens/packaging_files.py): a manual page
per command holding every option of its parser, the program's page under the commands that run
one, completions of every command, and the docs --help points to. tests/install/check_package.sh
installs the wheel itself (make test-package)."""

from __future__ import annotations

import argparse
import shutil
import subprocess

import pytest

from conftest import ROOT
from mpilens import packaging_files
from mpilens.cli import build_parser

PROGRAMS = ROOT / "docs" / "programs"


@pytest.fixture(scope="module")
def pages():
    return packaging_files.man_pages(build_parser(), PROGRAMS, "2026-11-28")


def commands():
    return packaging_files._commands(build_parser())


def test_a_page_for_the_command_and_each_of_its_commands(pages):
    assert set(pages) == {"mpilens.1"} | {f"mpilens-{name}.1" for name in commands()}
    assert {"mpilens-report.1", "mpilens-export.1", "mpilens-overlap.1"} <= set(pages)


def test_every_option_is_on_its_page(pages):
    for name, (parser, _) in commands().items():
        page = pages[f"mpilens-{name}.1"]
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:
                continue
            for option in action.option_strings:
                assert option.replace("-", "\\-") in page, f"{option} missing from mpilens-{name}"


def test_a_command_that_runs_a_program_carries_its_page(pages):
    page = pages["mpilens-overlap.1"]
    assert '.SH "THE PROGRAM MPILENS\\-OVERLAP: SYNOPSIS"' in page
    assert page.count('.SH "NAME"') == 1  # the program's NAME is left out
    assert "THE PROGRAM" not in pages["mpilens-report.1"]


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_every_page_formats_without_an_error(pages, tmp_path):
    for name, text in pages.items():
        source = tmp_path / name
        source.write_text(text)
        done = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", source],
                              capture_output=True, text=True, check=True)
        errors = [line for line in done.stderr.splitlines() if "can't break line" not in line]
        assert errors == [], name


def test_completions_name_every_command():
    scripts = packaging_files.completions(build_parser())
    assert set(scripts) == {"share/bash-completion/completions/mpilens",
                            "share/zsh/site-functions/_mpilens"}
    for script in scripts.values():
        for name in commands():
            assert name in script
    if shutil.which("bash"):
        subprocess.run(["bash", "-n"], input=scripts["share/bash-completion/completions/mpilens"],
                       text=True, check=True)


def test_write_all_gives_setuptools_its_data_files(tmp_path):
    (tmp_path / "docs" / "programs").mkdir(parents=True)
    (tmp_path / "docs" / "cli.md").write_text("# cli\n")
    (tmp_path / "docs" / "programs" / "mpilens-overlap.md").write_text(
        (PROGRAMS / "mpilens-overlap.md").read_text())
    data = dict(packaging_files.write_all(tmp_path, "out"))
    assert data["share/doc/mpilens"] == ["out/share/doc/mpilens/cli.md"]
    assert "out/share/man/man1/mpilens-report.1" in data["share/man/man1"]
    for files in data.values():
        assert all((tmp_path / f).is_file() for f in files)
    # the pages point at the docs where the package installs them, not at this checkout
    page = (tmp_path / "out/share/man/man1/mpilens.1").read_text()
    assert "share/doc/mpilens/cli.md under the installation" in page.replace("\\-", "-")
    assert str(ROOT) not in page


def test_the_help_points_at_the_docs_it_has(tmp_path):
    assert packaging_files.installed_docs("cli.md", []) == ROOT / "docs" / "cli.md"
    assert packaging_files.installed_docs("nosuch.md", [str(tmp_path)]) is None
