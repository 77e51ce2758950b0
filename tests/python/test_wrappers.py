"""The PMPI wrapper generator (src/wrap/generate_wrappers.py) and its table: the table reads,
its large-count forms are those an MPI-4 mpi.h declares, bad specs are refused with their line,
a toy spec gives the entries it should, the layers wrap the same sends, and
docs/wrapped-calls.md is what the generator writes today."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Dict, List

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "src" / "wrap" / "mpi_calls.txt"
LAYERS = ("monitor", "piggyback", "progress")
# An MPI-4 mpi.h: MPICH 4's prototypes, one per function, as Debian installs them.
MPICH_PROTO = Path("/usr/include/x86_64-linux-gnu/mpich/mpi_proto.h")


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "generate_wrappers", ROOT / "src" / "wrap" / "generate_wrappers.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate_wrappers"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gen = _load_generator()


@pytest.fixture(scope="module")
def calls() -> Dict[str, object]:
    return gen.read_table(TABLE)


def _spec(tmp_path: Path, text: str, calls: Dict[str, object]) -> object:
    path = tmp_path / "toy" / "wrapped.spec"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return gen.read_spec(path, calls)


# ---- the table ------------------------------------------------------------------------------------


def test_table_reads_every_binding(calls: Dict[str, object]) -> None:
    lines = [line for line in TABLE.read_text().splitlines() if line.startswith("int MPI_")]
    assert len(calls) == len(lines) > 100
    send = calls["MPI_Send"]
    assert [p.name for p in send.params] == ["buf", "count", "datatype", "dest", "tag", "comm"]
    assert send.large and not send.mpi4
    assert calls["MPI_Isendrecv"].mpi4
    assert calls["MPI_Finalize"].params == ()


def _prototypes(text: str) -> Dict[str, List[str]]:
    """name -> parameter types, of every `int MPI_X_c(...)` prototype in an mpi.h."""
    found = {}
    for match in re.finditer(r"^int (MPI_\w+_c)\(([^)]*)\)", text, re.MULTILINE):
        params = [" ".join(p.split()) for p in match.group(2).split(",")]
        found[match.group(1)] = [_type_of(p) for p in params]
    return found


def _type_of(declaration: str) -> str:
    """`const MPI_Count sendcounts[]` -> `const MPI_Count []`: the type without the name."""
    array = declaration.endswith("[]")
    words = declaration.rstrip("[]").replace("*", " * ").split()
    return " ".join(words[:-1]) + (" []" if array else "")


@pytest.mark.skipif(not MPICH_PROTO.exists(), reason=f"no MPI-4 mpi.h at {MPICH_PROTO}")
def test_large_forms_are_those_of_mpi4(calls: Dict[str, object]) -> None:
    """Every derived _c binding has the parameter types MPICH 4 declares, and every function of
    the table that MPI-4 gives a _c form is flagged large."""
    prototypes = _prototypes(MPICH_PROTO.read_text())
    checked = 0
    for name, call in calls.items():
        declared = prototypes.get(f"{name}_c")
        assert call.large == (declared is not None), f"{name}: large flag disagrees with mpi.h"
        if declared is None:
            continue
        derived = [_type_of(p.declaration()) for p in call.large_params()]
        assert derived == declared, f"{name}_c"
        checked += 1
    assert checked > 80


# ---- specs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, message",
    [
        ("frobnicate MPI_Send:\n    return 0;\n", "1: unknown directive"),
        ("before MPI_Sned:\n    x();\n", "1: MPI_Sned is not in the table"),
        (
            "before MPI_Send:\n    x();\nafter MPI_Send:\n    y();\n",
            "3: MPI_Send has a hook already",
        ),
        ("before MPI_Init:\n    x();\n", "1: MPI_Init belongs to the lifecycle directive"),
        ("    x();\n", "1: an indented line outside a hook"),
        ("large wide\n", "1: expected large native or large narrow"),
        ("lifecycle start=f\n", "1: lifecycle takes"),
        ("# a comment\nbefore MPI_Send:\n", "the hook of MPI_Send is empty"),
    ],
)
def test_bad_specs_are_refused_with_their_line(
    tmp_path: Path, calls: Dict[str, object], text: str, message: str
) -> None:
    with pytest.raises(gen.SpecError, match=re.escape(message)):
        _spec(tmp_path, text, calls)


def _fortran_entry(name: str, text: str) -> bool:
    """Whether text defines the Fortran entry `name` (an alias of the converting function)."""
    return (
        re.search(rf"\) {name} __attribute__\(\(alias\(\"ml_f_MPI_\w+\"\)\)\);", text) is not None
    )


def test_toy_spec_gives_c_large_and_fortran_entries(
    tmp_path: Path, calls: Dict[str, object]
) -> None:
    spec = _spec(
        tmp_path,
        'include "toy.h"\nlarge narrow\nbefore MPI_Send MPI_Isend:\n    toy_count(count);\n',
        calls,
    )
    text = gen.generate(calls, spec)
    assert '#include "toy.h"' in text
    assert 'const char ml_layer_name[] = "libmpilens-toy";' in text
    assert "int MPI_Send(const void *buf, int count, MPI_Datatype datatype" in text
    assert text.count("toy_count(count);") == 2  # once per C entry; the others call it
    # the large form narrows and refuses beyond INT_MAX, under MPI-4 only
    large = text[text.index("int MPI_Send_c(") :]
    assert "MPI_Count count" in large.splitlines()[0]
    assert "ml_count_fits(count)" in large and "ml_count_refused_comm" in large
    assert text.index("#if MPI_VERSION >= 4") < text.index("int MPI_Send_c(")
    for name in ("mpi_send_", "mpi_send__", "mpi_send", "MPI_SEND", "mpi_isend_", "MPI_ISEND"):
        assert _fortran_entry(name, text), name
    assert "MPI_Recv(" not in text  # only what the spec names
    assert "MPI_Init(" not in text  # no life cycle asked for


def test_lifecycle_entries(tmp_path: Path, calls: Dict[str, object]) -> None:
    spec = _spec(tmp_path, "lifecycle after_init=toy_start before_finalize=toy_stop\n", calls)
    text = gen.generate(calls, spec)
    for name in ("MPI_Init(", "MPI_Init_thread(", "MPI_Finalize("):
        assert name in text, name
    assert _fortran_entry("mpi_init_", text) and _fortran_entry("MPI_FINALIZE", text)
    assert "toy_start" in text and "toy_stop" in text


# ---- the layers -----------------------------------------------------------------------------------


def _layer_specs(calls: Dict[str, object]) -> List[object]:
    return [
        (layer, gen.read_spec(ROOT / "src" / layer / "wrapped.spec", calls)) for layer in LAYERS
    ]


def _section(title: str) -> List[str]:
    """The functions listed under a `## title` heading of the table."""
    names, inside = [], False
    for line in TABLE.read_text().splitlines():
        if line.startswith("## "):
            inside = line[3:].strip() == title
        elif inside and line.startswith("int MPI_"):
            names.append(line.split("(")[0][4:])
    return names


def _outside_fortran_guards(text: str) -> str:
    """The generated text with its `#ifndef MPILENS_NO_FORTRAN` blocks taken out."""
    kept, depth = [], 0
    for line in text.splitlines():
        if line == "#ifndef MPILENS_NO_FORTRAN":
            depth += 1
        elif depth and line == "#endif":
            depth -= 1
        elif not depth:
            kept.append(line)
    return "\n".join(kept)


def test_fortran_parts_are_guarded_for_the_standard_abi(
    tmp_path: Path, calls: Dict[str, object]
) -> None:
    # The MPI-5 standard ABI's mpi.h has no MPI_Fint: built with MPILENS_NO_FORTRAN, a layer has
    # only its C entries. Everything Fortran lies inside the guards, every C entry outside.
    spec = _spec(
        tmp_path,
        "lifecycle after_init=toy_start\nbefore MPI_Send MPI_Isend:\n    toy_count(count);\n",
        calls,
    )
    text = gen.generate(calls, spec)
    c_only = _outside_fortran_guards(text)
    assert "MPI_Fint" in text and "MPI_Fint" not in c_only
    assert "fortran_args.h" not in c_only and "mpi_send_" not in c_only
    for entry in ("int MPI_Send(", "int MPI_Isend(", "int MPI_Init(", "int MPI_Finalize("):
        assert entry in c_only, entry


def test_monitor_and_piggyback_wrap_the_same_sends(calls: Dict[str, object]) -> None:
    """The lists disagreed once (the monitor wrapped MPI_Isendrecv, the piggyback layer did
    not): every send of the table is now wrapped by both."""
    specs = dict(_layer_specs(calls))
    sends = _section("Point-to-point: sends")
    assert "MPI_Isendrecv" in sends and len(sends) > 10
    for name in sends:
        assert name in specs["monitor"].hooks, f"the monitor does not wrap {name}"
        assert name in specs["piggyback"].hooks, f"the piggyback layer does not wrap {name}"


def test_docs_list_what_the_specs_wrap(calls: Dict[str, object]) -> None:
    expected = gen.docs(calls, _layer_specs(calls))
    written = (ROOT / "docs" / "wrapped-calls.md").read_text()
    assert written == expected, (
        "docs/wrapped-calls.md is out of date: python3 src/wrap/generate_wrappers.py --table "
        "src/wrap/mpi_calls.txt --docs src/monitor/wrapped.spec src/piggyback/wrapped.spec "
        "src/progress/wrapped.spec > docs/wrapped-calls.md"
    )
