"""The tokenizer layer of the read-only gate, on data-file cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cypherturn.graph import find_write_clause
from cypherturn.graph._guard import tokenize

CASES: list[dict[str, Any]] = json.loads(
    Path(__file__).with_name("guard_cases.json").read_text(encoding="utf-8")
)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["query"][:50] for c in CASES])
def test_find_write_clause(case: dict[str, Any]) -> None:
    assert find_write_clause(case["query"]) == case["clause"]


def test_tokenize_keeps_literals_whole() -> None:
    tokens = tokenize("MATCH (n:`A``B`) WHERE n.s = 'x // y' /* c */ RETURN $p, 1.5")
    kinds = [(t.kind, t.text) for t in tokens]
    assert ("quoted", "A`B") in kinds
    assert ("string", "'x // y'") in kinds
    assert ("param", "$p") in kinds
    assert ("number", "1.5") in kinds
    assert all(t.text != "c" for t in tokens)
