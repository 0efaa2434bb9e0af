"""The ask tables' paired differences: which system is A."""

from __future__ import annotations

from cypherturn.records import AskAnswer, DataSplit, GoldStatus, Harness
from cypherturn.reports import ask_tables


def _answer(strategy: str, harness: Harness, question: str, right: int) -> AskAnswer:
    return AskAnswer(
        ask_set="set",
        split=DataSplit.DEVELOPMENT,
        model="m",
        strategy=strategy,
        budget=1,
        prompt="v2" if harness is not Harness.PEER else "theirs",
        harness=harness,
        question_id=question,
        graph="g",
        category="c",
        phenomena=[],
        gold_status=GoldStatus.KEPT,
        executable=True,
        ex=right,
        ex_relaxed=right,
        attempts=1,
        tokens=0,
        seconds=1.0,
        final_query="RETURN 1",
        error=None,
    )


def test_a_peer_is_b_so_the_difference_is_what_cypherturn_adds() -> None:
    answers = [
        _answer("ras+", Harness.SYSTEM, "q1", 1),
        _answer("ras+", Harness.SYSTEM, "q2", 1),
        _answer("a-peer", Harness.PEER, "q1", 0),
        _answer("a-peer", Harness.PEER, "q2", 1),
    ]
    pairs = next(t for t in ask_tables(answers, n_resamples=100) if t.name == "ask_pairs")
    assert [row[:2] for row in pairs.rows] == [["m ras+@1 v2", "m a-peer@1 theirs"]]
    assert str(pairs.rows[0][6]).startswith("+0.500")
