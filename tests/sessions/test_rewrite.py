"""Optional rewriting by a model: recorded per turn, never changing the gold."""

from __future__ import annotations

import pytest
from session_graphs import WorldGraphs

from cypherturn.models import ReplayChatModel
from cypherturn.sessions import load_bank, rewrite_sessions
from cypherturn.sessions._rewrite import required_literals, rewrite_problem


def test_rewrites_are_recorded_and_golds_untouched(worlds: WorldGraphs) -> None:
    session = worlds.sample("merchant_harbor")[0]
    keep = [t.turn_index for t in session.turns if required_literals(t)][:1]
    replies = []
    for turn in session.turns:
        if turn.turn_index in keep:
            replies.append("<think>hmm</think> Hey, something without the values")
        else:
            replies.append(
                f'"Rephrased: {turn.utterance} {" ".join(sorted(required_literals(turn)))}"'
            )
    model = ReplayChatModel(replies, spec="replay:test")
    [rewritten] = rewrite_sessions([session], model)
    assert len(model.calls) == len(session.turns)
    assert load_bank().persona(session.persona).title in model.calls[0][0].content
    assert session.turns[0].utterance in model.calls[0][1].content
    for before, after in zip(session.turns, rewritten.turns, strict=True):
        assert after.gold_cypher == before.gold_cypher and after.gold_result == before.gold_result
        assert after.skeleton == before.skeleton
        if before.turn_index in keep:
            assert after.utterance == before.utterance and after.rewrite is None
        else:
            assert after.utterance.startswith("Rephrased: ")
            assert after.rewrite is not None
            assert (
                after.rewrite.model == "replay:test"
                and after.rewrite.original_utterance == before.utterance
            )
    assert keep, "the sample has a turn with literals to keep"


@pytest.mark.parametrize(
    ("original", "rewrite", "problem"),
    [
        (
            "which ships carry more than 40 crates?",
            "Which ships have over 40 crates?",
            "drops ['more']",
        ),
        ("which ships carry more than 40 crates?", "Which ships carry more than 40 crates?", None),
        ("list the ports", "Sure, here's the rewritten message: list the ports", "an assistant"),
        ("list the ports", "List the ports.\n\nList the ports.", "an assistant"),
        ("how many ports?", "There are 12 ports.", "adds numbers ['12']"),
        ("list the ports", "List the ports of type Harbour", "adds names ['Harbour']"),
        ("the total tonnage of those ships", "the tonnage of the ships", "drops"),
        ("the tonnage of those ships", "the tonnage of the first of those ships", "adds ['first']"),
        ("which captains sail those ships?", "Who is the admiral?", "drops ['those']"),
        (
            "which captains sail those ships, thanks",
            "which ports hold those, thanks",
            "keeps 1 of 4",
        ),
        ("list ports", 'Captain says: "list ports"', "quotes a message"),
    ],
)
def test_a_rewrite_is_kept_only_when_the_gold_still_answers_it(
    original: str, rewrite: str, problem: str | None
) -> None:
    found = rewrite_problem(original, rewrite, set())
    assert (found is None) if problem is None else (found is not None and found.startswith(problem))


def test_a_rewrite_keeps_the_literals_the_gold_compares() -> None:
    assert rewrite_problem("ships named Orca", "ships called orca", {"Orca"}) == "missing ['Orca']"
