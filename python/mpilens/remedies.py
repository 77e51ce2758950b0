"""The catalogue of remedies (remedies.json, package data; docs/remedies.md): what to set for a
symptom, in which MPI libraries, and why. A remedy is advised, or tried by `mpilens tune`, only
where it applies to the library measured: its flavour, version and device, and the control
variables (MPI_T cvars) the library reports, recorded in the meta record ("cvars") or read by
mpilens-cvars before a launch."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import MpilensError
from .results import Record, record_object

KINDS = ("progress", "env", "code", "rank-order", "launcher")
ANY = "any"


@dataclass(frozen=True)
class LibraryRule:
    """Where a remedy applies: a flavour (as the meta record names it, or "any"), an optional
    version range (inclusive, compared by numbers: "4.99" covers every 4.x) and an optional
    device (MPICH's "MPICH Device:" line starts with it: "ch3", "ch4:ucx"), and the nodes the
    run must span for the remedy's transport to carry its messages: "one" (shared memory) or
    "several" (a network)."""

    flavour: str
    min_version: Optional[str] = None
    max_version: Optional[str] = None
    device: Optional[str] = None
    nodes: Optional[str] = None


@dataclass(frozen=True)
class Remedy:
    name: str
    symptoms: Tuple[str, ...]
    kind: str
    reason: str
    libraries: Tuple[LibraryRule, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    preload: Optional[str] = None
    cvars: Tuple[str, ...] = ()
    launcher: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)
    code: Optional[str] = None

    def env_for(self, values: Mapping[str, str]) -> Dict[str, str]:
        """Its variables with the placeholders ({size}, ...) filled in."""
        return {name: fill(value, values) for name, value in self.env.items()}

    @property
    def needs_values(self) -> Tuple[str, ...]:
        """The placeholders its variables and options hold."""
        texts = [*self.env.values(), *(w for words in self.launcher.values() for w in words)]
        return tuple(sorted({m for text in texts for m in re.findall(r"{(\w+)}", text)}))


def fill(text: str, values: Mapping[str, str]) -> str:
    return re.sub(r"{(\w+)}", lambda m: str(values.get(m.group(1), m.group(0))), text)


def _rule(raw: Mapping[str, object]) -> LibraryRule:
    def text(key: str) -> Optional[str]:
        value = raw.get(key)
        return str(value) if value is not None else None

    return LibraryRule(
        str(raw["flavour"]), text("min_version"), text("max_version"), text("device"), text("nodes")
    )


def _remedy(raw: Mapping[str, object], symptoms: Mapping[str, str]) -> Remedy:
    listed = tuple(str(s) for s in raw["symptoms"])  # type: ignore[attr-defined]
    unknown = [s for s in listed if s not in symptoms]
    kind = str(raw["kind"])
    if unknown or kind not in KINDS:
        raise ValueError(f"remedy {raw.get('name')}: unknown symptom {unknown} or kind {kind}")
    launcher = raw.get("launcher") or {}
    return Remedy(
        name=str(raw["name"]),
        symptoms=listed,
        kind=kind,
        reason=str(raw["reason"]),
        libraries=tuple(_rule(r) for r in raw["libraries"]),  # type: ignore[attr-defined]
        env={str(k): str(v) for k, v in (raw.get("env") or {}).items()},  # type: ignore[attr-defined]
        preload=str(raw["preload"]) if raw.get("preload") else None,
        cvars=tuple(str(c) for c in raw.get("cvars") or ()),  # type: ignore[attr-defined]
        launcher={str(k): tuple(str(w) for w in v) for k, v in launcher.items()},  # type: ignore[attr-defined]
        code=str(raw["code"]) if raw.get("code") else None,
    )


@functools.lru_cache(maxsize=1)
def _catalogue() -> Tuple[Dict[str, str], Tuple[Remedy, ...]]:
    raw = json.loads(
        resources.files("mpilens").joinpath("remedies.json").read_text(encoding="utf-8")
    )
    symptoms = {str(k): str(v) for k, v in raw["symptoms"].items()}
    return symptoms, tuple(_remedy(r, symptoms) for r in raw["remedies"])


def symptoms() -> Dict[str, str]:
    """Every symptom key with its description."""
    return dict(_catalogue()[0])


def catalogue() -> Tuple[Remedy, ...]:
    return _catalogue()[1]


def by_name(name: str) -> Remedy:
    for remedy in catalogue():
        if remedy.name == name:
            return remedy
    raise MpilensError(
        f'no remedy named "{name}" in the catalogue; choose from '
        + ", ".join(r.name for r in catalogue())
    )


# --- the library measured ------------------------------------------------------------------------


@dataclass(frozen=True)
class Library:
    """What the catalogue's rules look at: flavour, version, device, the names of its control
    variables (None when unknown: results written before mpilens recorded them), and the nodes
    the job spans (None when unknown)."""

    flavour: str
    version: Optional[Tuple[int, ...]]
    device: Optional[str]
    cvars: Optional[frozenset] = None
    nodes: Optional[int] = None


def version_numbers(text: Optional[str]) -> Optional[Tuple[int, ...]]:
    if not text:
        return None
    found = re.match(r"\s*(\d+(?:\.\d+)*)", text)
    return tuple(int(part) for part in found.group(1).split(".")) if found else None


def _library_version(flavour: str, text: str) -> Optional[Tuple[int, ...]]:
    patterns = {
        "openmpi": r"Open MPI v(\d+(?:\.\d+)*)",
        "mpich": r"MPICH Version:\s*(\d+(?:\.\d+)*)",
        "intelmpi": r"Library (\d+(?:\.\d+)*)",
        "mvapich": r"MVAPICH2? Version\s*:?\s*(\d+(?:\.\d+)*)",
    }
    found = re.search(patterns.get(flavour, r"(\d+\.\d+(?:\.\d+)*)"), text)
    return version_numbers(found.group(1)) if found else None


def library_from(
    flavour: str, library_text: str, cvars: object, nodes: Optional[int] = None
) -> Library:
    """The library as the meta record or mpilens-cvars describe it, for a job on nodes."""
    device = re.search(r"MPICH Device:\s*(\S+)", library_text)
    names: Optional[frozenset] = None
    if isinstance(cvars, dict) and isinstance(cvars.get("vars"), dict):
        names = frozenset(cvars["vars"])
    return Library(
        flavour,
        _library_version(flavour, library_text),
        device.group(1) if device else None,
        names,
        nodes,
    )


def library_of(meta: Record) -> Library:
    """The library of a run, from its meta record."""
    mpi = record_object(meta, "mpi")
    text = mpi.get("library_full") or mpi.get("library") or ""
    nodes = meta.get("nodes")
    return library_from(
        str(mpi.get("flavour", "")),
        str(text),
        meta.get("cvars"),
        nodes if isinstance(nodes, int) and not isinstance(nodes, bool) else None,
    )


def _rule_applies(rule: LibraryRule, library: Library) -> bool:
    if rule.flavour != ANY and rule.flavour != library.flavour:
        return False
    if rule.device and not (library.device or "").startswith(rule.device):
        return False
    if rule.nodes and library.nodes is not None and (rule.nodes == "one") != (library.nodes == 1):
        return False
    if library.version is None:
        return rule.min_version is None and rule.max_version is None
    low, high = version_numbers(rule.min_version), version_numbers(rule.max_version)
    return (low is None or library.version >= low) and (high is None or library.version <= high)


def why_not(remedy: Remedy, library: Library) -> Optional[str]:
    """Why the remedy does not apply to the library, or None when it does. Control variables are
    checked only when the library's list is known."""
    if not any(_rule_applies(rule, library) for rule in remedy.libraries):
        return f"{remedy.name} applies to {libraries_text(remedy)}, not this library"
    if library.cvars is not None:
        missing = [name for name in remedy.cvars if name not in library.cvars]
        if missing:
            return f"{remedy.name}: the library has no control variable {', '.join(missing)}"
    return None


def libraries_text(remedy: Remedy) -> str:
    """ "MPICH 3.0 and later (device ch4:ucx)", "any MPI library"."""
    parts = []
    for rule in remedy.libraries:
        name = {"any": "any MPI library", "openmpi": "Open MPI", "mpich": "MPICH"}.get(
            rule.flavour, rule.flavour
        )
        if rule.min_version and rule.max_version:
            name += f" {rule.min_version} to {rule.max_version}"
        elif rule.min_version:
            name += f" {rule.min_version} and later"
        if rule.device:
            name += f" (device {rule.device})"
        if rule.nodes:
            name += ", within a node" if rule.nodes == "one" else ", between nodes"
        parts.append(name)
    return ", ".join(parts)


def for_symptom(symptom: str, library: Library) -> List[Remedy]:
    """The remedies of a symptom that apply to the library, in catalogue order."""
    return [r for r in catalogue() if symptom in r.symptoms and why_not(r, library) is None]


# --- settings that name control variables --------------------------------------------------------


def cvar_of_variable(variable: str, flavour: str) -> Optional[str]:
    """The control variable an environment variable sets, for the libraries whose variables map
    one to one (MPICH: MPIR_CVAR_X is X's own name; Open MPI: OMPI_MCA_x sets x); None for
    variables that are not control variables (UCX_*, I_MPI_*, MPILENS_*)."""
    if flavour == "mpich" and variable.startswith("MPIR_CVAR_"):
        return variable
    if flavour == "mpich" and variable.startswith("MPICH_"):
        return "MPIR_CVAR_" + variable[len("MPICH_") :]
    if flavour == "openmpi" and variable.startswith("OMPI_MCA_"):
        return variable[len("OMPI_MCA_") :]
    return None


def missing_variables(env: Mapping[str, str], library: Library) -> List[str]:
    """The variables of env that name a control variable the library does not have: a setting
    that cannot exist there (a typing error, or another library's variable)."""
    if library.cvars is None:
        return []
    missing = []
    for variable in env:
        cvar = cvar_of_variable(variable, library.flavour)
        foreign = library.flavour == "openmpi" and variable.startswith("MPIR_CVAR_")
        foreign |= library.flavour in ("mpich", "intelmpi") and variable.startswith("OMPI_MCA_")
        if foreign or (cvar is not None and cvar not in library.cvars):
            missing.append(variable)
    return missing


def launcher_options(remedy: Remedy, launcher: str, values: Mapping[str, str]) -> List[str]:
    """The remedy's launcher options for a launcher command (mpirun, mpiexec or srun by its
    name), placeholders filled; [] when it has none for that launcher."""
    base = launcher.rsplit("/", 1)[-1].split(".", 1)[0]
    style = (
        "srun"
        if base == "srun"
        else "mpirun"
        if base in ("mpirun", "orterun", "prterun")
        else "mpiexec"
    )
    return [fill(word, values) for word in remedy.launcher.get(style, ())]


def describe(remedy: Remedy, values: Mapping[str, str], launcher: str = "mpirun") -> str:
    """How to apply it, in one phrase: "MPIR_CVAR_ASYNC_PROGRESS=1", "preload
    libmpilens-progress with MPILENS_PROGRESS=poll", "--bind-to core", or the code change."""
    env = " ".join(f"{k}={v}" for k, v in remedy.env_for(values).items())
    if remedy.kind == "progress":
        return f"preload lib{remedy.preload}.so with {env}"
    if remedy.kind == "env":
        return env
    if remedy.kind == "launcher":
        return " ".join(launcher_options(remedy, launcher, values))
    return remedy.code or ""


def names(items: Sequence[Remedy]) -> str:
    return ", ".join(r.name for r in items)
