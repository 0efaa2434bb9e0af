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


@pytest.mark.parametrize("world", WORLDS)
def test_no_gold_query_is_told_to_list_instead_of_count(world: str, worlds: WorldGraphs) -> None:
    """A gold count answers a question that asks for a number: the answer-shape check agrees."""
    index = graph_index(worlds.engine(world))
    counted = 0
    for session in worlds.sample(world):
        for turn in session.turns:
            counted += "count(" in turn.gold_cypher
            codes = {f.code for f in check_question(turn.utterance, turn.gold_cypher, index)}
            assert "answer_shape" not in codes, turn.utterance
    assert counted > 0


def test_binding_golds_to_the_previous_result_keeps_their_answers(worlds: WorldGraphs) -> None:
    """A gold follow-up restricted to the names the guided history showed returns its own rows.

    The gold composes the earlier conditions; binding its one variable of the
    previous result's label to that result's names must not change the answer,
    except where a name is shared by several nodes or the follow-up builds on an
    earlier turn than the one before (the bench's ``depends_on``), which the
    wording alone does not tell.
    """
    bound = same = 0
    for world in WORLDS:
        engine = worlds.engine(world)
        index = graph_index(engine)
        for session in worlds.sample(world):
            for turn in session.turns:
                context = guided_context(session, turn, index)
                finding = bind_reference(turn.utterance, turn.gold_cypher, context.previous, index)
                if finding is None:
                    continue
                query, _ = apply_edits(turn.gold_cypher, [finding])
                bound += 1
                same += sorted(map(repr, engine.execute(query).rows)) == sorted(
                    map(repr, turn.gold_result.rows)
                )
    assert bound >= 50
    assert same / bound >= 0.85, (same, bound)
