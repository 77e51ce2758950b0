#!/usr/bin/env python3
"""The PMPI wrappers of a layer, generated from one table and the layer's spec.

    generate_wrappers.py --table src/wrap/mpi_calls.txt --spec src/monitor/wrapped.spec --out F.c
    generate_wrappers.py --table src/wrap/mpi_calls.txt --docs SPEC... > docs/wrapped-calls.md

The table (mpi_calls.txt) holds the C binding of every MPI function a layer may wrap. A layer's
spec says what it does around each function it wraps; this program writes, for each of them:

- the C entry point, MPI_Foo, whose body is the spec's hook around the next implementation
  (ML_NEXT: dlsym(RTLD_NEXT), so that layers stack in any order, src/core/next.h);
- the large-count entry point, MPI_Foo_c, where the table says MPI-4 has one (under
  MPI_VERSION >= 4): the same hook over MPI_Count arguments (`large native`), or the int form
  called with the counts narrowed, refused beyond INT_MAX (`large narrow`);
- the Fortran entry points mpi_foo_, mpi_foo__, mpi_foo and MPI_FOO (the manglings of the
  compilers in use), which convert the Fortran arguments (handles, sentinels such as
  MPI_IN_PLACE, statuses, 1-based indices, logicals; src/core/fortran_args.h) and call the
  layer's implementation of the C function: Open MPI's own Fortran bindings call PMPI_
  directly, so without these a layer never sees a Fortran program's calls.

A spec is a list of directives; lines starting with # are comments:

    include "header.h"                       the layer's header declaring what hooks call
    large native|narrow                      how the large-count forms are made
    lifecycle thread_level=F provided_level=F after_init=F before_finalize=F
                                             MPI_Init, MPI_Init_thread and MPI_Finalize by the
                                             shared life cycle (src/core/lifecycle.h); each
                                             hook is optional
    before NAME...:                          statements run before forwarding the call
    after NAME...:                           statements run after it, when it succeeded
    replace NAME...:                         the whole body: statements that return the result
        statements, indented, naming the arguments as the table does

A layer's cost per call is what it was when the wrappers were written by hand
(bench/layer_instructions): the C entry point holds the body, and the other entries call it by a
local alias.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

HANDLES = {"MPI_Comm": "Comm", "MPI_Datatype": "Type", "MPI_Op": "Op", "MPI_Win": "Win",
           "MPI_Info": "Info", "MPI_Request": "Request"}
# Functions whose request argument the program gives (and gets back): the others create one.
REQUEST_IN = ("MPI_Wait", "MPI_Test", "MPI_Start", "MPI_Request_free", "MPI_Request_get_status")
MESSAGE_IN = ("MPI_Mrecv", "MPI_Imrecv")
LIFECYCLE = ("MPI_Init", "MPI_Init_thread", "MPI_Finalize")
LIFECYCLE_HOOKS = ("thread_level", "provided_level", "after_init", "before_finalize")
MANGLINGS = ("{lower}_", "{lower}__", "{lower}", "{upper}")


class SpecError(Exception):
    pass


# ---- the table ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Param:
    const: bool
    type: str
    stars: int
    name: str
    array: bool

    def declaration(self) -> str:
        const = "const " if self.const else ""
        gap = " " + "*" * self.stars if self.stars else " "
        return f"{const}{self.type}{gap}{self.name}{'[]' if self.array else ''}"


@dataclass(frozen=True)
class Call:
    name: str
    params: Tuple[Param, ...]
    large: bool
    mpi4: bool

    def large_params(self) -> Tuple[Param, ...]:
        """The parameters of NAME_c: int counts become MPI_Count, int displacement arrays
        MPI_Aint (the rule every large-count binding of MPI-4 follows)."""
        result = []
        for p in self.params:
            if p.type == "int" and not p.stars and not p.array and p.name.endswith("count"):
                p = Param(p.const, "MPI_Count", 0, p.name, False)
            elif p.type == "int" and p.array and p.name.endswith("counts"):
                p = Param(p.const, "MPI_Count", 0, p.name, True)
            elif p.type == "int" and p.array and p.name.endswith("displs"):
                p = Param(p.const, "MPI_Aint", 0, p.name, True)
            result.append(p)
        return tuple(result)


PARAM = re.compile(r"^(const )?(\w+) ?(\**) ?(\w+)(\[\])?$")
LINE = re.compile(r"^int (MPI_\w+)\((.*)\)((?:\s+\w+)*)\s*$")


def parse_param(text: str) -> Param:
    match = PARAM.match(text.strip())
    if not match:
        raise SpecError(f'cannot read the parameter "{text}"')
    const, type_, stars, name, array = match.groups()
    return Param(bool(const), type_, len(stars), name, bool(array))


def read_table(path: Path) -> Dict[str, Call]:
    calls: Dict[str, Call] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = LINE.match(line)
        if not match:
            raise SpecError(f"{path}:{number}: not a C binding: {line}")
        name, params, flags = match.groups()
        flag_set = set(flags.split())
        unknown = flag_set - {"large", "mpi4"}
        if unknown:
            raise SpecError(f"{path}:{number}: unknown flags {sorted(unknown)}")
        parsed = () if params.strip() == "void" else tuple(parse_param(p) for p in params.split(","))
        calls[name] = Call(name, parsed, "large" in flag_set, "mpi4" in flag_set)
    return calls


# ---- the spec -------------------------------------------------------------------------------------

@dataclass
class Hook:
    kind: str  # before, after, replace
    body: List[str]


@dataclass
class Spec:
    path: Path
    includes: List[str] = field(default_factory=list)
    large: str = "native"
    lifecycle: Optional[Dict[str, str]] = None
    hooks: Dict[str, Hook] = field(default_factory=dict)


def read_spec(path: Path, calls: Dict[str, Call]) -> Spec:
    spec = Spec(path)
    current: Optional[Hook] = None
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        where = f"{path}:{number}"
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if raw.startswith((" ", "\t")):
            if current is None:
                raise SpecError(f"{where}: an indented line outside a hook")
            current.body.append(raw.strip())
            continue
        current = None
        words = raw.split()
        if words[0] == "include":
            spec.includes.append(raw.split(None, 1)[1].strip())
        elif words[0] == "large":
            if len(words) != 2 or words[1] not in ("native", "narrow"):
                raise SpecError(f"{where}: expected large native or large narrow")
            spec.large = words[1]
        elif words[0] == "lifecycle":
            pairs = dict(word.split("=", 1) for word in words[1:] if "=" in word)
            unknown = set(pairs) - set(LIFECYCLE_HOOKS)
            if unknown or len(pairs) != len(words) - 1:
                raise SpecError(f"{where}: lifecycle takes {', '.join(LIFECYCLE_HOOKS)} as NAME=F")
            spec.lifecycle = pairs
        elif words[0] in ("before", "after", "replace") and raw.rstrip().endswith(":"):
            current = Hook(words[0], [])
            for name in " ".join(words[1:]).rstrip(":").split():
                if name not in calls:
                    raise SpecError(f"{where}: {name} is not in the table")
                if name in LIFECYCLE:
                    raise SpecError(f"{where}: {name} belongs to the lifecycle directive")
                if name in spec.hooks:
                    raise SpecError(f"{where}: {name} has a hook already")
                spec.hooks[name] = current
        else:
            raise SpecError(f"{where}: unknown directive: {raw.strip()}")
    for name, hook in spec.hooks.items():
        if not hook.body:
            raise SpecError(f"{path}: the hook of {name} is empty")
    return spec


# ---- C entry points -------------------------------------------------------------------------------

def declarations(params: Sequence[Param]) -> str:
    return ", ".join(p.declaration() for p in params) or "void"


def arguments(params: Sequence[Param]) -> str:
    return ", ".join(p.name for p in params)


def body(hook: Hook, function: str, params: Sequence[Param]) -> List[str]:
    forward = f"ML_NEXT({function})({arguments(params)})"
    statements = [f"    {line}" for line in hook.body]
    if hook.kind == "replace":
        return statements
    if hook.kind == "before":
        return ["    {", *[f"    {s}" for s in statements], "    }", f"    return {forward};"]
    return [f"    int rc = {forward};", "    if (rc == MPI_SUCCESS) {",
            *[f"    {s}" for s in statements], "    }", "    return rc;"]


def impl_name(call: Call) -> str:
    return f"ml_local_{call.name}"


def c_entry(call: Call, hook: Hook) -> List[str]:
    """The C entry point, and a local name for it that the Fortran and large-count entries call:
    this layer's own function, whatever another layer or the program defines under the MPI name.
    One body: the layer's code inlines into the entry point as when it was written by hand."""
    # A replacing hook calls the layer's own function, which link-time optimisation would leave
    # out of line behind a jump: flattened, the entry point holds it as the hand-written one did.
    flatten = "__attribute__((flatten)) " if hook.kind == "replace" else ""
    return [f"{flatten}int {call.name}({declarations(call.params)})",
            "{", *body(hook, call.name, call.params), "}",
            f"static __typeof__({call.name}) {impl_name(call)} "
            f"__attribute__((alias(\"{call.name}\")));", ""]


def large_entry(call: Call, hook: Hook, mode: str) -> List[str]:
    params = call.large_params()
    head = f"int {call.name}_c({declarations(params)})"
    if mode == "native":
        return [head, "{", *body(hook, f"{call.name}_c", params), "}", ""]
    counts = [p.name for p, q in zip(call.params, params) if p.type != q.type]
    if any(p.array for p in params if p.name in counts):
        raise SpecError(f"{call.name}: large narrow cannot narrow count arrays")
    # The error goes to the handler of the call's communicator or window (MPI_COMM_WORLD for a
    # call on a matched message); handle types may all be int, so the generator picks.
    handle = next((p for p in params if p.type in ("MPI_Comm", "MPI_Win")), None)
    fits = " && ".join(f"ml_count_fits({name})" for name in counts)
    narrowed = ", ".join(f"(int){p.name}" if p.name in counts else p.name for p in params)
    if handle is not None and handle.type == "MPI_Win":
        refuse = f"ml_count_refused_win(\"{call.name}_c\", {handle.name})"
    else:
        refuse = (f"ml_count_refused_comm(\"{call.name}_c\", "
                  f"{handle.name if handle else 'MPI_COMM_WORLD'})")
    return [head, "{", f"    if ({fits})", f"        return {impl_name(call)}({narrowed});",
            f"    return {refuse};", "}", ""]


# ---- Fortran entry points -------------------------------------------------------------------------

@dataclass
class FortranArg:
    declaration: Optional[str]  # the Fortran-side parameter; None when Fortran passes nothing
    before: List[str]
    argument: str  # what the C implementation gets
    after: List[str]


def array_lengths(call: Call, param: Param, comm: str) -> Tuple[str, str]:
    """How many elements an array argument has: before the call (what to convert or make room
    for) and after it (what to convert back)."""
    names = {p.name for p in call.params}
    if param.name in ("array_of_requests", "array_of_statuses"):
        given = "*incount" if "incount" in names else "*count"
        if call.name in ("MPI_Waitsome", "MPI_Testsome") and param.name == "array_of_statuses":
            return given, "ml_f_outcount(outcount_c)"
        return given, given
    if param.name in ("sendtypes", "recvtypes"):
        if "neighbor" in call.name.lower():
            length = f"ml_f_neighbours({comm}, {1 if param.name == 'sendtypes' else 0})"
        else:
            length = f"ml_f_peers({comm})"
        return length, length
    raise SpecError(f"{call.name}: no length for the array {param.name}")


def fortran_arg(call: Call, p: Param, comm: str) -> FortranArg:
    """How one argument crosses from Fortran to C and back (docs in src/core/fortran_args.h)."""
    name, local = p.name, f"{p.name}_c"
    if p.type == "void" and p.stars == 1:
        return FortranArg(f"void *{name}", [], f"ml_f_buffer({name})", [])
    if call.name in LIFECYCLE and name in ("argc", "argv"):
        return FortranArg(None, [], "NULL", [])
    if p.type == "int" and not p.stars and not p.array:
        return FortranArg(f"MPI_Fint *{name}", [], f"(int)*{name}", [])
    if p.type == "MPI_Aint" and not p.stars:
        return FortranArg(f"MPI_Aint *{name}", [], name if p.array else f"*{name}", [])
    if p.type == "int" and p.array:
        after = [f"ml_f_indices({name}, ml_f_outcount(outcount_c));"] \
            if name == "array_of_indices" else []
        return FortranArg(f"MPI_Fint *{name}", [], f"({'const ' if p.const else ''}int *){name}",
                          after)
    if p.type == "int" and p.stars == 1:
        convert = {"flag": f"ml_f_logical({local})", "index": f"ml_f_index({local})"}
        return FortranArg(f"MPI_Fint *{name}", [f"int {local} = 0;"], f"&{local}",
                          [f"*{name} = {convert.get(name, local)};"])
    if p.type in HANDLES and not p.stars and not p.array:
        return FortranArg(f"MPI_Fint *{name}", [], f"PMPI_{HANDLES[p.type]}_f2c(*{name})", [])
    if p.type in HANDLES and p.array and p.type != "MPI_Request":
        length, _ = array_lengths(call, p, comm)
        kind = HANDLES[p.type].lower()
        return FortranArg(f"MPI_Fint *{name}",
                          [f"{p.type} *{local} = ml_f_{kind}_handles({name}, {length});"], local,
                          [f"ml_f_free({local});"])
    if p.type in ("MPI_Request", "MPI_Message") and p.stars == 1:
        kind = p.type[4:]
        given = call.name.startswith(REQUEST_IN) if kind == "Request" else call.name in MESSAGE_IN
        start = f"PMPI_{kind}_f2c(*{name})" if given else f"MPI_{kind.upper()}_NULL"
        back = f"*{name} = PMPI_{kind}_c2f({local});"
        return FortranArg(f"MPI_Fint *{name}", [f"{p.type} {local} = {start};"], f"&{local}",
                          [back] if given else [f"if (rc == MPI_SUCCESS)", f"    {back}"])
    if p.type == "MPI_Request" and p.array:
        before, after = array_lengths(call, p, comm)
        return FortranArg(f"MPI_Fint *{name}",
                          [f"MPI_Request *{local} = ml_f_requests({name}, {before});"], local,
                          [f"ml_f_requests_out({local}, {name}, {after});"])
    if p.type == "MPI_Status" and p.stars == 1:
        return FortranArg(f"MPI_Fint *{name}",
                          [f"MPI_Status {local}_own, *{local} = ml_f_status({name}, &{local}_own);"],
                          local, [f"ml_f_status_out(rc, {local}, {name});"])
    if p.type == "MPI_Status" and p.array:
        before, after = array_lengths(call, p, comm)
        return FortranArg(f"MPI_Fint *{name}",
                          [f"MPI_Status *{local} = ml_f_statuses({name}, {before});"], local,
                          [f"ml_f_statuses_out(rc, {local}, {name}, {after});"])
    raise SpecError(f"{call.name}: no Fortran conversion for {p.declaration()}")


def fortran_entry(call: Call, target: str) -> List[str]:
    """The Fortran entry points of call: arguments converted, `target` called, results back."""
    comm = next((f"PMPI_Comm_f2c(*{p.name})" for p in call.params
                 if p.type == "MPI_Comm" and not p.stars and not p.array), "MPI_COMM_NULL")
    args = [fortran_arg(call, p, comm) for p in call.params]
    fparams = [a.declaration for a in args if a.declaration] + ["MPI_Fint *ierr"]
    local = f"ml_f_{call.name}"
    lines = [f"static void {local}({', '.join(fparams)})", "{"]
    lines += [f"    {line}" for a in args for line in a.before]
    lines.append(f"    int rc = {target}({', '.join(a.argument for a in args)});")
    lines += [f"    {line}" for a in args for line in a.after]
    lines += ["    *ierr = rc;", "}"]
    return lines + aliases(call.name, local) + [""]


def fortran_only(lines: List[str]) -> List[str]:
    """Lines kept only where the MPI library has Fortran bindings for the layers to stand in for:
    not under the MPI-5 standard ABI, whose mpi.h has no MPI_Fint (cmake/MpilensMpi.cmake)."""
    return ["#ifndef MPILENS_NO_FORTRAN", *lines, "#endif"]


def aliases(name: str, local: str) -> List[str]:
    """The four names Fortran compilers give name, all the same function."""
    return [f"extern __typeof__({local}) {pattern.format(lower=name.lower(), upper=name.upper())} "
            f"__attribute__((alias(\"{local}\")));" for pattern in MANGLINGS]


# ---- the life cycle -------------------------------------------------------------------------------

def lifecycle_entries(hooks: Dict[str, str]) -> List[str]:
    fields = ", ".join(f".{key} = {value}" for key, value in hooks.items())
    lines = [f"static const ml_lifecycle_t lifecycle = {{{fields}}};", "",
             "int MPI_Init(int *argc, char ***argv)",
             "{", "    return ml_lifecycle_init(&lifecycle, argc, argv, MPI_THREAD_SINGLE, NULL);",
             "}", "",
             "int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)",
             "{", "    return ml_lifecycle_init(&lifecycle, argc, argv, required, provided);", "}", "",
             "int MPI_Finalize(void) { return ml_lifecycle_finalize(&lifecycle); }", ""]
    fortran = ["static void ml_f_MPI_Init(MPI_Fint *ierr)",
             "{", "    *ierr = ml_lifecycle_init(&lifecycle, NULL, NULL, MPI_THREAD_SINGLE, NULL);",
             "}",
             "static void ml_f_MPI_Init_thread(MPI_Fint *required, MPI_Fint *provided, "
             "MPI_Fint *ierr)",
             "{", "    int provided_c = 0;",
             "    *ierr = ml_lifecycle_init(&lifecycle, NULL, NULL, (int)*required, &provided_c);",
             "    *provided = provided_c;", "}",
             "static void ml_f_MPI_Finalize(MPI_Fint *ierr) "
             "{ *ierr = ml_lifecycle_finalize(&lifecycle); }"]
    for name in LIFECYCLE:
        fortran += aliases(name, f"ml_f_{name}")
    return lines + fortran_only(fortran) + [""]


# ---- the file -------------------------------------------------------------------------------------

def generate(calls: Dict[str, Call], spec: Spec) -> str:
    lines = [f"/* Generated by src/wrap/generate_wrappers.py from {spec.path.name} and "
             "src/wrap/mpi_calls.txt: do not edit. */",
             "#include <mpi.h>", "#include <stddef.h>", "", *fortran_only(["#include \"fortran_args.h\""]),
             "#include \"large_count.h\"", "#include \"lifecycle.h\"", "#include \"next.h\""]
    lines += [f"#include {header}" for header in spec.includes]
    lines += ["", f"const char ml_layer_name[] = \"libmpilens-{spec.path.parent.name}\";", ""]
    if spec.lifecycle is not None:
        lines += lifecycle_entries(spec.lifecycle)
    for name, call in calls.items():
        hook = spec.hooks.get(name)
        if hook is None:
            continue
        part = [f"/* ---- {name} ({hook.kind}) */", *c_entry(call, hook)]
        if call.large:
            part += ["#if MPI_VERSION >= 4", *large_entry(call, hook, spec.large), "#endif"]
        part += fortran_only(fortran_entry(call, impl_name(call)))
        if call.mpi4:
            part = ["#if MPI_VERSION >= 4", *part, "#endif"]
        lines += part
    return "\n".join(lines) + "\n"


def docs(calls: Dict[str, Call], specs: Sequence[Tuple[str, Spec]]) -> str:
    """docs/wrapped-calls.md: which layer wraps which function."""
    layers = [layer for layer, _ in specs]
    lines = ["# The MPI functions each layer wraps", "",
             "Generated by `src/wrap/generate_wrappers.py --docs` from `src/wrap/mpi_calls.txt` "
             "and each layer's `wrapped.spec`: do not edit. Each wrapped function is wrapped in "
             "its C form, its large-count form `_c` where MPI-4 has one and the MPI library "
             "provides it, and its Fortran forms (`mpif.h` and `use mpi`: `mpi_send_`, "
             "`mpi_send__`, `mpi_send`, `MPI_SEND`). Life-cycle functions (MPI_Init, "
             "MPI_Init_thread, MPI_Finalize) are wrapped by every layer that declares a life "
             "cycle.", "",
             "| function | " + " | ".join(layers) + " |",
             "|---|" + "---|" * len(layers)]
    for name, call in calls.items():
        marks = []
        for _, spec in specs:
            wrapped = name in spec.hooks or (name in LIFECYCLE and spec.lifecycle is not None)
            marks.append("yes" if wrapped else "")
        if any(marks):
            flags = (" (MPI-4)" if call.mpi4 else "") + (", `_c`" if call.large else "")
            lines.append(f"| `{name}`{flags} | " + " | ".join(marks) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Generate a layer's PMPI wrappers.")
    parser.add_argument("--table", type=Path, required=True)
    parser.add_argument("--spec", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--docs", nargs="+", type=Path, metavar="SPEC")
    args = parser.parse_args(argv)
    try:
        calls = read_table(args.table)
        if args.docs:
            specs = [(path.parent.name, read_spec(path, calls)) for path in args.docs]
            sys.stdout.write(docs(calls, specs))
            return 0
        if not args.spec or not args.out:
            parser.error("--spec and --out are needed, or --docs")
        text = generate(calls, read_spec(args.spec, calls))
    except SpecError as error:
        print(f"generate_wrappers: {error}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if not args.out.exists() or args.out.read_text() != text:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
