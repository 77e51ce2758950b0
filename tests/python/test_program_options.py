"""The choice lists and ranges the mpilens command offers, checks and passes on are the programs'
own: program_options.json is what each built program prints with --options-json, and every
option value mpilens passes on by itself is allowed by the program's table. The comparison with
the programs needs the C build: under `make test` (MPILENS_REQUIRE_BUILD lists the flavours) a
missing build fails; elsewhere it skips."""

from __future__ import annotations

import os
from importlib import resources
from typing import List, Tuple

import pytest

from mpilens import families, launch, program_options
from mpilens.analysis import piggyback as pb
from mpilens.analysis import progress as pg
from mpilens.errors import MpilensError
from mpilens.families import progress as progress_family

REQUIRED = os.environ.get("MPILENS_REQUIRE_BUILD", "").split()


@pytest.mark.parametrize("program", program_options.PROGRAMS)
@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_copy_is_what_the_built_program_prints(flavour, program):
    bin_dir = launch.dev_bin_dir(launch.Flavour(flavour))
    path = bin_dir / program if bin_dir is not None else None
    if path is None or not path.exists():
        if flavour in REQUIRED:
            pytest.fail(f"make test requires the {flavour} build, and it has no {program}")
        pytest.skip(f"no {flavour} build")
    assert program_options.read(path) == program_options.tables()[program], (
        f"{program}'s options changed: run tools/update_program_options.py "
        f"build/{flavour}/bin and commit python/mpilens/program_options.json")


def test_copy_is_written_as_the_tool_writes_it():
    text = resources.files("mpilens").joinpath(program_options.FILE).read_text(encoding="utf-8")
    assert list(program_options.tables()) == list(program_options.PROGRAMS)
    assert program_options.dumps(program_options.tables()) == text


def test_kept_is_choices_and_ranges_only():
    printed = {"program": "p", "options": [
        {"name": "bench", "kind": "list", "metavar": "LIST", "default": "all",
         "choices": ["a", "b"], "help": "benchmarks"},
        {"name": "block", "kind": "int", "metavar": "M", "default": "4", "min": 1, "max": 9,
         "help": "a count"},
        {"name": "output", "kind": "string", "metavar": "FILE", "default": None, "help": "file"}]}
    assert program_options.kept(printed) == {"bench": {"choices": ["a", "b"]},
                                             "block": {"min": 1, "max": 9}}


def test_a_program_that_cannot_answer_is_one_error(tmp_path):
    program = tmp_path / "mpilens-old"
    program.write_text("#!/bin/sh\necho 'mpilens-old: unknown option --options-json' >&2\nexit 2\n")
    program.chmod(0o755)
    with pytest.raises(MpilensError, match=r'/mpilens-old --options-json" exited with status 2: '
                                           r"mpilens-old: unknown option --options-json"):
        program_options.read(program)


def _pairs(words: List[str]) -> List[Tuple[str, str]]:
    """(option, value) of program arguments such as ["--block", "10", "--fast"]."""
    return [(word[2:], value) for word, value in zip(words, [*words[1:], ""])
            if word.startswith("--") and not value.startswith("--")]


def _allowed(program: str, option: str, value: str) -> bool:
    row = program_options.tables()[program].get(option)
    if row is None:  # not a choice or an integer: the program's own parser checks it
        return True
    if "choices" in row:
        return all(name in row["choices"] for name in value.split(","))
    return row["min"] <= int(value) <= row["max"]


@pytest.mark.parametrize("family", [family for family in families.FAMILIES.values()
                                    if family.program in program_options.PROGRAMS],
                         ids=lambda family: family.name)
def test_every_preset_is_allowed_by_the_program(family):
    for preset, words in family.presets.items():
        for option, value in _pairs(list(words)):
            assert _allowed(family.program, option, value), (preset, option, value)


def test_what_the_commands_pass_on_is_allowed():
    assert _allowed("mpilens-overlap", "bench", progress_family.OVERLAP_BENCHES)
    assert _allowed("mpilens-progress", "strategy", pg.NONE)
    assert (*pb.RECVS, "both") == program_options.choices("mpilens-piggyback", "recv")
    assert (pb.LATENCY, pb.BANDWIDTH) == program_options.choices("mpilens-piggyback", "bench")
