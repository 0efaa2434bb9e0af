"""No literal of an evaluation set's golds in the package's code (issue 41, ground rule 2).

A string literal of a gold query (a stored value such as a date, a name or a
category) that appears in ``src/`` is the sign of a rule, hint or example fitted
to that question: the figure on the set then measures the lookup, not the
system. The sets are the ask development set (rules were fitted on it before),
the frozen test splits (``ask-test``, Mind the Query ``heldout-400``, the
CypherTurn test sessions). Question files themselves (package data) are not
code and are not searched.

A literal counts when it appears quoted (``'...'`` or ``"..."``), as it would in a
hint, an example or a rule. Literals shorter than 6 characters, numbers, and
names of the graphs' schema (labels, relationship types, property keys) are not
counted: they occur in any code about those graphs. The world generators
(``worlds/``) are where the graphs' values come from, so they are not searched.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from cypherturn.worlds import get_world

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "cypherturn"
_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def _gold_literals(cypher: str) -> set[str]:
    return {a or b for a, b in _LITERAL.findall(cypher)}


def _evaluation_golds() -> list[str]:
    golds: list[str] = []
    for name in ("ask", "ask-test"):
        for path in sorted((PACKAGE / "experiments" / "data" / name).glob("*.yaml")):
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            golds += [q["gold"] for q in data["questions"]]
    heldout = ROOT / "benchmarks" / "data" / "mind-the-query" / "heldout-400.jsonl"
    golds += [json.loads(x)["gold"] for x in heldout.read_text().splitlines() if x.strip()]
    sessions = ROOT / "benchmarks" / "data" / "cypherturn-test" / "sessions.jsonl"
    for line in sessions.read_text().splitlines():
        golds += [t["gold_cypher"] for t in json.loads(line)["turns"]]
    return golds


def _schema_names() -> set[str]:
    names: set[str] = set()
    for graph in ("pole", "healthcare"):
        schema = get_world(graph).declared_schema()
        names |= {label.label for label in schema.labels}
        names |= {key for label in schema.labels for key in label.properties}
        names |= {rel.type for rel in schema.relationship_types}
        names |= {key for rel in schema.relationship_types for key in rel.properties}
    return names


def test_no_gold_literal_of_an_evaluation_set_is_in_the_code() -> None:
    golds = _evaluation_golds()
    assert len(golds) > 600, "the evaluation sets were not all found"
    skip = _schema_names()
    literals = {
        lit
        for gold in golds
        for lit in _gold_literals(gold)
        if len(lit) >= 6 and not lit.replace("-", "").replace(".", "").isdigit() and lit not in skip
    }
    found = [
        f"{path.relative_to(ROOT)}: {lit!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "worlds" not in path.relative_to(PACKAGE).parts
        for lit in sorted(literals)
        if f"'{lit}'" in (text := path.read_text(encoding="utf-8")) or f'"{lit}"' in text
    ]
    assert found == []
