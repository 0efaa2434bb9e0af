"""The schema check never flags a gold query: every gold of the generated sessions, in all seven worlds.

Gold queries execute on the engine and return their gold results, so any
finding on one would be a false verdict (the check's guarantee,
cypherturn.grounding._check).
"""

from __future__ import annotations

import pytest
from session_graphs import WORLDS, WorldGraphs

from cypherturn.grounding import (
    apply_edits,
    bind_reference,
    check_query,
    check_question,
    flip_relationship,
    graph_index,
    query_facts,
)
from cypherturn.protocols import guided_context
from cypherturn.sessions import SessionView


@pytest.mark.parametrize("world", WORLDS)
def test_no_gold_query_gets_a_finding(world: str, worlds: WorldGraphs) -> None:
    index = graph_index(worlds.engine(world))
    golds = [turn.gold_cypher for session in worlds.sample(world) for turn in session.turns]
    assert len(golds) >= 100
    flagged = {}
    unparsed = 0
    for gold in golds:
        report = check_query(gold, index)
        unparsed += not report.parsed
        if report.findings:
            flagged[gold] = [f.message for f in report.findings]
    assert flagged == {}
    assert unparsed == 0  # the parser reads every gold, so the check gave a verdict on each


@pytest.mark.parametrize("world", WORLDS)
def test_golds_with_a_reversed_arrow_are_flagged(world: str, worlds: WorldGraphs) -> None:
    """The same golds with one arrow turned round: flagged wherever the schema has only one way."""
    index = graph_index(worlds.engine(world))
    triples = index.triples()
    mutated = flagged = 0
    for session in worlds.sample(world):
        for turn in session.turns:
            facts = query_facts(turn.gold_cypher)
            for branch in facts.branches:
                for rel in branch.relationships:
                    left = branch.labels_of(rel.left.variable) if rel.left.variable else frozenset()
                    left |= {n for n, _ in rel.left.labels}
                    right = (
                        branch.labels_of(rel.right.variable) if rel.right.variable else frozenset()
                    )
                    right |= {n for n, _ in rel.right.labels}
                    types = {n for n, _ in rel.types}
                    if rel.direction == "both" or rel.var_length or not (left and right and types):
                        continue
                    source, target = (left, right) if rel.direction == "out" else (right, left)
                    if any((t, ty, s) in triples for s in source for t in target for ty in types):
                        continue  # the reverse also occurs (e.g. Person-KNOWS->Person)
                    edit = flip_relationship(turn.gold_cypher, rel)
                    assert edit is not None
                    query = (
                        turn.gold_cypher[: edit.start]
                        + edit.replacement
                        + turn.gold_cypher[edit.end :]
                    )
                    mutated += 1
                    codes = {f.code for f in check_query(query, index).findings}
                    flagged += "reversed_direction" in codes
    assert mutated > 0
    assert flagged == mutated


def _rows(rows: list[list[object]]) -> list[str]:
    """Rows in a canonical order, numbers as floats to 6 decimals (a gold sum read back from
    JSON is an int, the engine's sum a float, added in another order)."""
    return sorted(
        repr([round(float(v), 6) if isinstance(v, int | float) else v for v in row]) for row in rows
    )


@pytest.mark.parametrize("world", WORLDS)
def test_no_gold_query_fails_the_question_check(world: str, worlds: WorldGraphs) -> None:
    """Every gold compares the thresholds its question states, and counts only when asked."""
    index = graph_index(worlds.engine(world))
    counted = 0
    for session in worlds.sample(world):
        for turn in session.turns:
            counted += "count(" in turn.gold_cypher
            found = check_question(turn.utterance, turn.gold_cypher, index)
            assert found == [], (turn.utterance, [f.message for f in found])
    assert counted > 0


def test_binding_golds_to_the_previous_result_keeps_their_answers(worlds: WorldGraphs) -> None:
    """A gold follow-up restricted to the names the guided history showed returns its own rows.

    The gold composes the earlier conditions; binding its one variable of the
    previous result's label to that result's names must not change the answer
    (numbers compared as floats to 6 decimals).
    """
    bound = 0
    changed: list[tuple[str, str]] = []
    for world in WORLDS:
        engine = worlds.engine(world)
        index = graph_index(engine)
        for session in worlds.sample(world):
            view = SessionView.of(session, oracle_history=True)
            for turn in session.turns:
                context = guided_context(view, view.turns[turn.turn_index - 1], index)
                finding = bind_reference(turn.utterance, turn.gold_cypher, context.previous, index)
                if finding is None:
                    continue
                query, _ = apply_edits(turn.gold_cypher, [finding])
                bound += 1
                if _rows(engine.execute(query).rows) != _rows(turn.gold_result.rows):
                    changed.append((turn.utterance, query))
    assert bound >= 50
    assert changed == []
