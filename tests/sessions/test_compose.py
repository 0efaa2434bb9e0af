"""Gold composition from skeletons (data-file cases) and its refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cypherturn.errors import DatasetError
from cypherturn.sessions import BlockType, Condition, QueryBlock, Skeleton, compose_session
from cypherturn.sessions._compose import exclude_members

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "compose_cases.yaml").read_text()
)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_compose_case(case: dict[str, Any]) -> None:
    skeletons = [Skeleton.model_validate(t["skeleton"]) for t in case["turns"]]
    golds = [c.gold for c in compose_session(skeletons)]
    assert golds == [t["gold"] for t in case["turns"]]


def _origin(label: str = "Spell") -> list[QueryBlock]:
    return [QueryBlock(block_type=BlockType.ORIGIN, label=label)]


def _project() -> QueryBlock:
    return QueryBlock(block_type=BlockType.PROJECT, property="name")


def test_reference_must_point_to_an_earlier_turn() -> None:
    later = Skeleton(
        blocks=[QueryBlock(block_type=BlockType.REFERENCE, ref_turn=2), _project()],
        result_label="Spell",
    )
    with pytest.raises(DatasetError, match="not an earlier turn"):
        compose_session([Skeleton(blocks=[*_origin(), _project()], result_label="Spell"), later])


def test_complement_must_stay_within_the_label_in_focus() -> None:
    first = Skeleton(blocks=[*_origin(), _project()], result_label="Spell")
    wrong = Skeleton(
        blocks=[
            QueryBlock(block_type=BlockType.REFERENCE, ref_turn=1),
            QueryBlock(block_type=BlockType.COMPLEMENT, label="Course"),
            _project(),
        ],
        result_label="Course",
    )
    with pytest.raises(DatasetError, match="complement over 'Course'"):
        compose_session([first, wrong])


def test_refine_needs_a_condition_to_tighten() -> None:
    first = Skeleton(blocks=[*_origin(), _project()], result_label="Spell")
    refine = Skeleton(
        blocks=[
            QueryBlock(block_type=BlockType.REFERENCE, ref_turn=1),
            QueryBlock(
                block_type=BlockType.FILTER,
                refines=True,
                conditions=[Condition(property="power_level", operator=">", value=3)],
            ),
            _project(),
        ],
        result_label="Spell",
    )
    with pytest.raises(DatasetError, match="REFINE"):
        compose_session([first, refine])


def test_relationship_filter_needs_a_traversal() -> None:
    bad = Skeleton(
        blocks=[
            *_origin(),
            QueryBlock(
                block_type=BlockType.FILTER,
                conditions=[
                    Condition(property="since", operator=">", value=3, on_relationship=True)
                ],
            ),
            _project(),
        ],
        result_label="Spell",
    )
    with pytest.raises(DatasetError, match="traversal"):
        compose_session([bad])


def test_exclusion_after_a_cut_is_fenced() -> None:
    top = Skeleton(
        blocks=[
            *_origin(),
            QueryBlock(
                block_type=BlockType.SORT_LIMIT, sort=[{"property": "power_level"}], limit=3
            ),
            _project(),
        ],
        result_label="Spell",
    )
    focus = exclude_members(compose_session([top])[0].focus, [4, 9])
    assert focus.clauses() == [
        "MATCH (n:Spell)",
        "WITH n ORDER BY n.power_level ASC LIMIT 3",
        "WITH collect(n) AS n_kept",
        "UNWIND n_kept AS n",
        "WITH n",
        "WHERE NOT id(n) IN [4, 9]",
    ]
