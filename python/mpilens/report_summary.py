"""The first screen of a report (issue 19): the conditions that make its results doubtful, a
verdict per family, then what costs the user time, ranked by that cost, each with its evidence
(a link to its plot), the remedies that apply to the library measured and the command that
verifies them."""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

from . import advice, families
from .analysis.conditions import condition_symptoms, conditions
from .markup import Markup, element, esc, join, table
from .results import Run

# How a finding links to its evidence: the run and the plot's name give the figure's id.
Anchor = Callable[[Run, str], str]

WARNING = "warning:"


def _family_sentences(run: Run) -> List[str]:
    family = families.FAMILIES.get(run.family)
    return family.diagnose(run) if family is not None else []


def doubts(
    runs: Sequence[Run],
    completeness: Callable[[Run], str],
    sentences_of: Callable[[Run], List[str]] = _family_sentences,
) -> List[str]:
    """Why a reader should doubt some results, before reading them: incomplete runs, hosts that
    are one machine or whose cores are full, and the families' warnings (invalid points, a
    method check that failed). The conditions a remedy addresses (condition_findings) come
    with it."""
    several = len(runs) > 1
    found: List[str] = []
    for run in runs:
        prefix = f"{run.family}: " if several else ""
        if not run.complete:
            found.append(f"{prefix}the run is incomplete: {completeness(run)}")
        found += [prefix + sentence for sentence in conditions(run.meta)]
        found += [
            prefix + sentence[len(WARNING) :].strip()
            for sentence in sentences_of(run)
            if sentence.startswith(WARNING)
        ]
    return list(dict.fromkeys(found))


def verdicts(
    runs: Sequence[Run], sentences_of: Callable[[Run], List[str]] = _family_sentences
) -> List[Tuple[str, str]]:
    """(family, verdict) per run: the family's own, else the first sentence of its diagnosis
    that is not a warning, else a pointer to the warnings."""
    rows = []
    for run in runs:
        family = families.FAMILIES.get(run.family)
        said: Optional[str] = family.verdict(run) if family and family.verdict else None
        if said is None:
            sentences = sentences_of(run)
            plain = [
                s for s in sentences if not s.startswith((WARNING, "skipped:", "method check"))
            ]
            if plain:
                said = plain[0][0].upper() + plain[0][1:] + "."
            elif any(s.startswith(WARNING) for s in sentences):
                said = "No conclusion: its results are doubtful (Read with care, above)."
            else:
                said = "Nothing to report."
        rows.append((run.family, said))
    return rows


def ranked_findings(runs: Sequence[Run]) -> List[advice.Finding]:
    """Every run's symptoms that cost time, with their remedies, the costliest first."""
    found: List[advice.Finding] = []
    for run in runs:
        family = families.FAMILIES.get(run.family)
        if family is not None and family.symptoms is not None:
            found += advice.findings_of(run.family, run, family.symptoms(run))
    return advice.ranked(found)


def condition_findings(runs: Sequence[Run]) -> List[advice.Finding]:
    """The conditions of the runs that the catalogue has remedies for (crowded cores, unbound
    ranks), once per condition when several runs share it."""
    found: List[advice.Finding] = []
    seen = set()
    for run in runs:
        for finding in advice.findings_of(run.family, run, condition_symptoms(run.meta)):
            if finding.symptom.text not in seen:
                seen.add(finding.symptom.text)
                found.append(finding)
    return found


def _finding_item(
    finding: advice.Finding, anchor: Anchor, several: bool, shown: Optional[set] = None
) -> Markup:
    """A finding as a list item; its remedies in full the first time a set of them is shown
    (shown: the sets shown above), else by name."""
    symptom = finding.symptom
    head = (f"{finding.family}: " if several else "") + symptom.text
    parts: List[object] = [element("p", join([element("strong", head)]))]
    cost = finding.cost_text()
    facts: List[object] = [f"cost: {cost}"] if cost else []
    if symptom.evidence:
        link = anchor(finding.run, symptom.evidence)
        facts.append(Markup(f'evidence: <a href="#{esc(link)}">{esc(symptom.evidence)}</a>'))
    if facts:
        parts.append(element("p", join(_separated(facts))))
    rows = advice.remedy_rows(finding)
    seen = shown if shown is not None else set()
    key = tuple(tuple(row) for row in rows)
    if rows and key in seen:
        names = ", ".join(row[0] for row in rows)
        parts.append(element("p", f"remedies: as above ({names})"))
    elif rows:
        seen.add(key)
        parts.append(table(["remedy", "how", "applies to", "why"], rows, css_class="remedies"))
    if rows:
        command = advice.verification(finding)
        if command:
            parts.append(element("p", join(["verify: ", element("code", command)])))
        if finding.unchecked:
            parts.append(
                element(
                    "p",
                    "These results do not list the library's control variables (written before "
                    "mpilens recorded them): the settings above are not checked against it.",
                    "note",
                )
            )
    else:
        parts.append(element("p", "No remedy of the catalogue applies to this library.", "note"))
    return element("li", join(parts))


def _separated(items: Sequence[object]) -> List[object]:
    out: List[object] = []
    for i, item in enumerate(items):
        out += ([" · "] if i else []) + [item]
    return out


def first_screen(runs: Sequence[Run], anchor: Anchor, completeness: Callable[[Run], str]) -> Markup:
    """Doubts, verdicts and ranked findings with remedies, as HTML."""
    blocks: List[Markup] = []
    several = len(runs) > 1
    # Each diagnosis once: doubts and verdicts both read it.
    diagnosed = {id(run): _family_sentences(run) for run in runs}

    def sentences_of(run: Run) -> List[str]:
        return diagnosed[id(run)]

    doubtful = doubts(runs, completeness, sentences_of)
    conditioned = condition_findings(runs)
    if doubtful or conditioned:
        items = [element("li", d, "warn") for d in doubtful]
        items += [_finding_item(f, anchor, False) for f in conditioned]
        blocks += [
            element("h2", "Read with care"),
            element("ul", join(items), "doubts"),
        ]
    blocks += [
        element("h2", "Verdict"),
        table(["family", "verdict"], verdicts(runs, sentences_of), css_class="verdicts"),
    ]
    found = ranked_findings(runs)
    blocks.append(element("h2", "What costs time, and what to try"))
    if found:
        shown: set = set()
        items = [_finding_item(f, anchor, several, shown) for f in found]
        blocks.append(element("ol", join(items), "findings"))
    else:
        blocks.append(
            element("p", "No measurement here shows a cost the catalogue of remedies addresses.")
        )
    return join(blocks)
