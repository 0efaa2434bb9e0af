"""Each audit catches a planted defect (and passes the untouched session)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from session_graphs import WorldGraphs

from cypherturn.graph import GraphEngine
from cypherturn.sessions import (
    AuditCode,
    BlockType,
    Condition,
    GoldResult,
    Phenomenon,
    QueryBlock,
    Session,
    Skeleton,
    Turn,
    compose_session,
    probe_ties,
    verify_session,
)
from cypherturn.sessions._audit import audit_contrast_type, returned_label

WORLD = "ancient_empire"


def _codes(session: Session, engine: GraphEngine) -> set[tuple[int, AuditCode]]:
    return {(f.turn_index, f.code) for f in verify_session(session, engine)}


def _find(sessions: list[Session], test: Callable[[Session, Turn], bool]) -> tuple[Session, Turn]:
    for session in sessions:
        for turn in session.turns:
            if test(session, turn):
                return session, turn
    # a failure, not a skip: the generator has stopped producing the phenomenon
    # this audit is tested on, so the audit would go untested without anyone noticing
    pytest.fail("the sample holds no turn to plant this defect in")


def _replace(session: Session, index: int, **changes: object) -> Session:
    turns = [t.model_copy(update=changes) if t.turn_index == index else t for t in session.turns]
    return session.model_copy(update={"turns": turns})


@pytest.fixture(scope="module")
def sample(worlds: WorldGraphs) -> list[Session]:
    return worlds.sample(WORLD)


def test_untouched_sessions_pass(sample: list[Session], ancient: GraphEngine) -> None:
    for session in sample[:3]:
        assert _codes(session, ancient) == set()


def test_aggregate_label_must_match_function(sample: list[Session], ancient: GraphEngine) -> None:
    session, turn = _find(sample, lambda s, t: Phenomenon.AGG_SUM in t.phenomena)
    planted = _replace(session, turn.turn_index, phenomena=[Phenomenon.AGG_AVG])
    assert (turn.turn_index, AuditCode.AGG_LABEL) in _codes(planted, ancient)


def test_consecutive_golds_must_differ(sample: list[Session], ancient: GraphEngine) -> None:
    session = sample[0]
    second = session.turns[1]
    planted = _replace(session, 3, gold_cypher=second.gold_cypher, gold_result=second.gold_result)
    assert (3, AuditCode.DUPLICATE_GOLD) in _codes(planted, ancient)


def test_contrast_stays_within_the_prior_entity_type(
    sample: list[Session], ancient: GraphEngine
) -> None:
    session, turn = _find(sample, lambda s, t: Phenomenon.CONTRAST in t.phenomena)
    label = returned_label(turn.gold_cypher)
    other = "Monument" if label != "Monument" else "Resource"
    gold = turn.gold_cypher.replace(f"MATCH (c:{label})", f"MATCH (c:{other})").replace(
        f"MATCH (c2:{label})", f"MATCH (c2:{other})"
    )
    planted = _replace(session, turn.turn_index, gold_cypher=gold)
    assert (turn.turn_index, AuditCode.CONTRAST_TYPE) in _codes(planted, ancient)


def test_contrast_audit_on_the_official_layout() -> None:
    prior = "MATCH (n:Spell)\nWITH n ORDER BY n.power_level DESC LIMIT 1\nMATCH (n)<-[:REQUIRES]-(m1:Course)\nRETURN DISTINCT m1.name AS name"
    wrong = prior.replace(
        "RETURN DISTINCT m1.name AS name",
        "WITH COLLECT(m1.name) AS prev_names\nMATCH (c:Spell)\nWHERE NOT c.name IN prev_names\nRETURN DISTINCT c.name AS name",
    )
    right = wrong.replace("MATCH (c:Spell)", "MATCH (c:Course)")
    assert [f.code for f in audit_contrast_type(4, wrong, prior)] == [AuditCode.CONTRAST_TYPE]
    assert audit_contrast_type(4, right, prior) == []


def test_aggregations_do_not_follow_each_other(sample: list[Session], ancient: GraphEngine) -> None:
    session, turn = _find(
        sample,
        lambda s, t: Phenomenon.AGG_MAX in t.phenomena and t.turn_index < len(s.turns),
    )
    following = session.turns[turn.turn_index]
    planted = _replace(session, following.turn_index, phenomena=[Phenomenon.COUNT])
    assert (following.turn_index, AuditCode.CONSECUTIVE_AGGREGATION) in _codes(planted, ancient)


def test_results_must_be_non_empty_and_small(sample: list[Session], ancient: GraphEngine) -> None:
    session = sample[1]
    big = "MATCH (n:Citizen)\nMATCH (m:Legion)\nRETURN n.name AS a, m.name AS b"
    empty = "MATCH (n:Citizen)\nWHERE n.birth_year < 0\nRETURN DISTINCT n.name AS name"
    codes = _codes(_replace(_replace(session, 1, gold_cypher=big), 2, gold_cypher=empty), ancient)
    assert (1, AuditCode.TOO_LARGE) in codes
    assert (2, AuditCode.EMPTY_RESULT) in codes


def test_a_cut_through_ties_is_rejected_and_a_tie_breaker_fixes_it(ancient: GraphEngine) -> None:
    tied = (
        "MATCH (n:Legion)\nWITH n ORDER BY n.specialty ASC LIMIT 3\nRETURN DISTINCT n.name AS name"
    )
    fixed = tied.replace("n.specialty ASC", "n.specialty ASC, n.name ASC")
    probe = probe_ties(tied, ancient)
    assert len(probe) == 1 and probe[0].tied and probe[0].limit == 3
    assert probe[0].boundary[0] == probe[0].boundary[1]
    assert not probe_ties(fixed, ancient)[0].tied
    result = GoldResult(columns=["name"], rows=[["x"]])
    turn = Turn(
        turn_index=1, utterance="u", chain_mode="none", gold_cypher=tied, gold_result=result
    )
    session = Session(session_id="s", world=WORLD, persona="student", turns=[turn])
    assert (1, AuditCode.TIE_CUT) in _codes(session, ancient)
    clean = session.model_copy(update={"turns": [turn.model_copy(update={"gold_cypher": fixed})]})
    assert (1, AuditCode.TIE_CUT) not in _codes(clean, ancient)


def test_a_cut_with_few_rows_is_not_a_tie(ancient: GraphEngine) -> None:
    query = "MATCH (n:Empire)\nWHERE n.era = 'Classical'\nWITH n ORDER BY n.era LIMIT 1000\nRETURN n.name AS name"
    assert probe_ties(query, ancient)[0].tied is False


def test_pasted_prior_result_fails_the_perturbation_check(
    sample: list[Session], ancient: GraphEngine
) -> None:
    session, turn = _find(
        sample,
        lambda s, t: (
            Phenomenon.EXPAND in t.phenomena and t.depends_on is not None and t.skeleton is not None
        ),
    )
    prior = session.turns[turn.depends_on - 1]
    assert turn.skeleton is not None and prior.skeleton is not None
    names = [row[0] for row in prior.gold_result.rows]
    hop = next(b for b in turn.skeleton.blocks if b.block_type is BlockType.TRAVERSE)
    pasted = Skeleton(
        blocks=[
            QueryBlock(block_type=BlockType.ORIGIN, label=prior.skeleton.result_label),
            QueryBlock(
                block_type=BlockType.FILTER,
                conditions=[Condition(property="name", operator="IN", value=names)],
            ),
            hop,
            QueryBlock(block_type=BlockType.PROJECT, property="name"),
        ],
        result_label=turn.skeleton.result_label,
    )
    skeletons = [pasted if t.turn_index == turn.turn_index else t.skeleton for t in session.turns]
    golds = [c.gold for c in compose_session([s for s in skeletons if s is not None])]
    planted = session.model_copy(
        update={
            "turns": [
                t.model_copy(update={"skeleton": skeletons[i], "gold_cypher": golds[i]})
                for i, t in enumerate(session.turns)
            ]
        }
    )
    codes = _codes(planted, ancient)
    assert (turn.turn_index, AuditCode.NOT_CHAIN_DEPENDENT) in codes
    assert (turn.turn_index, AuditCode.RESULT_MISMATCH) not in codes


def test_stored_results_and_skeletons_must_reproduce(
    sample: list[Session], ancient: GraphEngine
) -> None:
    session = sample[2]
    turn = session.turns[0]
    rows = [[*row[:-1], "tampered"] for row in turn.gold_result.rows]
    tampered = _replace(session, 1, gold_result=turn.gold_result.model_copy(update={"rows": rows}))
    assert (1, AuditCode.RESULT_MISMATCH) in _codes(tampered, ancient)
    edited = _replace(session, 2, gold_cypher=session.turns[1].gold_cypher + " LIMIT 1000")
    assert (2, AuditCode.SKELETON_MISMATCH) in _codes(edited, ancient)
    broken = _replace(session, 2, gold_cypher="MATCH (n:Legion RETURN n")
    assert (2, AuditCode.EXECUTION_ERROR) in _codes(broken, ancient)
