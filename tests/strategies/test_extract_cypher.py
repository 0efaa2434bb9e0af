"""extract_cypher against the data-driven cases in extraction_cases.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cypherturn.strategies import extract_cypher

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "extraction_cases.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_extract_cypher(case: dict[str, Any]) -> None:
    assert extract_cypher(case["input"]) == case["expected"]


def test_cases_are_unique_and_cover_the_required_shapes() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    required = {
        "fenced_no_tag",
        "fenced_cypher_tag",
        "prose_wrapped",
        "im_end_suffix",
        "think_block",
        "backticked_label_with_space",
        "string_with_semicolon",
        "multiple_statements",
        "multiple_blocks_first_cypher",
        "empty",
    }
    assert required <= set(ids)
    # issue 17: every class of fault found has cases, and the file holds 100+ replies
    for prefix in ("md_escaped_", "leadin_", "multiline_", "fence", "think", "prose_"):
        assert sum(i.startswith(prefix) for i in ids) >= 3, prefix
    assert len(ids) >= 100
