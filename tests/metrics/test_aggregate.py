"""SEM, CER, breakdowns, cost and cliff figures on small synthetic score tables with known answers."""

from __future__ import annotations

import pytest

from cypherturn.metrics import (
    breakdown,
    cer,
    cer_by_position,
    ex_by_position,
    group_by_system,
    session_scores,
    summarize,
    turn_losses,
)
from cypherturn.records import (
    Action,
    DataSplit,
    PredictionStatus,
    ProtocolName,
    PsjsStatus,
    QueryAttempt,
    TurnEnd,
    TurnRecord,
    TurnScore,
)
from cypherturn.reports import system_label


def turn(
    session: str,
    t: int,
    ex: int,
    *,
    model: str = "m",
    protocol: str = "agentic",
    depends: bool = True,
    cliff: bool = False,
    phenomenon: str = "EXPAND",
    psjs: float | None = 1.0,
    run_id: str = "r",
    **record: object,
) -> TurnScore:
    rec = TurnRecord(
        run_id=run_id,
        model=model,
        protocol=ProtocolName(protocol),
        session_id=session,
        turn=t,
        graph="g",
        phenomenon=phenomenon,
        depends_on=t - 1 if depends and t > 1 else None,
        gold_cypher="RETURN 1",
        predicted_cypher=None if cliff else "RETURN 1",
        cliff=cliff,
        **record,  # type: ignore[arg-type]
    )
    return TurnScore(
        record=rec,
        ex=ex,
        ex_relaxed=ex,
        psjs=psjs,
        psjs_status=PsjsStatus.OK if psjs is not None else PsjsStatus.PREDICTION_UNSUPPORTED,
        prediction_status=PredictionStatus.OK,
        executions=0 if cliff else 1,
    )


# Session A: 1 0 0 1   Session B: 0 0 1   Session C: 1 1
TABLE = [
    turn("A", 1, 1), turn("A", 2, 0), turn("A", 3, 0), turn("A", 4, 1),
    turn("B", 1, 0), turn("B", 2, 0), turn("B", 3, 1),
    turn("C", 1, 1), turn("C", 2, 1),
]  # fmt: skip


def test_sem_counts_sessions_with_every_turn_correct() -> None:
    sessions = {s.session_id: s for s in session_scores(TABLE)}
    assert {k: s.sem for k, s in sessions.items()} == {"A": 0, "B": 0, "C": 1}
    assert sessions["A"].ex == pytest.approx(0.5)
    assert summarize(TABLE)[0].sem == pytest.approx(1 / 3)


def test_cer_conditions_on_the_failed_dependency() -> None:
    # Failed predecessors: A2 -> A3 fails, A3 -> A4 succeeds, B1 -> B2 fails, B2 -> B3 succeeds.
    assert cer(TABLE) == pytest.approx(2 / 4)
    assert cer_by_position(TABLE) == {2: 1.0, 3: 0.5, 4: 0.0}


def test_cer_ignores_chain_independent_turns() -> None:
    table = [turn("S", 1, 0), turn("S", 2, 0, depends=False), turn("S", 3, 0)]
    assert cer(table) == 1.0
    assert cer([turn("S", 1, 0), turn("S", 2, 0, depends=False)]) is None


def test_ex_by_position_and_breakdown() -> None:
    assert ex_by_position(TABLE) == {
        1: pytest.approx(2 / 3),
        2: pytest.approx(1 / 3),
        3: 0.5,
        4: 1.0,
    }
    cells = breakdown(TABLE, "turn")[("m", "agentic", 3, "base", "")]
    assert list(cells) == ["T1", "T2", "T3", "T4"]
    assert cells["T1"].n == 3 and cells["T1"].ex == pytest.approx(2 / 3)


def test_systems_are_separated_and_sorted() -> None:
    table = [*TABLE, turn("A", 1, 1, protocol="guided"), turn("A", 1, 0, model="a")]
    keys = [(s.model, s.protocol.value) for s in summarize(table)]
    assert keys == [("a", "agentic"), ("m", "agentic"), ("m", "guided")]


def test_runs_of_one_system_merge_unless_they_played_the_same_session(
    caplog: pytest.LogCaptureFixture,
) -> None:
    split = [turn("A", 1, 1, run_id="r1"), turn("B", 1, 0, run_id="r2")]
    assert list(group_by_system(split)) == [("m", "agentic", 3, "base", "")]
    replayed = [*split, turn("A", 1, 0, run_id="r2"), turn("A", 2, 0, run_id="r2")]
    groups = group_by_system(replayed)
    assert {k[4]: len(v) for k, v in groups.items()} == {"run r1": 1, "run r2": 3}
    summaries = {s.harness: s for s in summarize(replayed)}
    assert summaries["run r1"].sessions == 1 and summaries["run r2"].sessions == 2
    assert "played the same sessions (A)" in caplog.text
    harnessed = [
        turn("A", 1, 1, run_id="r1", harness="note"),
        turn("A", 1, 0, run_id="r2", harness="note"),
    ]
    assert sorted(k[4] for k in group_by_system(harnessed)) == ["note, run r1", "note, run r2"]


def test_cliff_exhaustion_and_ex_excluding_cliff() -> None:
    table = [
        turn("A", 1, 1),
        turn("A", 2, 0, cliff=True),
        turn("B", 1, 1, budget_remaining=0),
        turn("C", 1, 0),
    ]
    summary = summarize(table)[0]
    assert summary.exhaustion_rate == pytest.approx(2 / 3)
    assert summary.ex == pytest.approx(0.5)
    assert summary.ex_excl_cliff == pytest.approx(2 / 3)
    assert summary.executions_per_prediction == pytest.approx(1.0)


def test_tokens_actions_qer_and_psjs_coverage() -> None:
    attempts = [QueryAttempt(index=1, outcome="error"), QueryAttempt(index=2, outcome="ok")]
    table = [
        turn("A", 1, 1, output_tokens=100, actions={Action.INSPECT_SCHEMA: 3, Action.SUBMIT_ANSWER: 1}),
        turn(
            "A", 2, 0, output_tokens=50, psjs=None, query_attempts=attempts,
            actions={Action.EXECUTE_CYPHER: 1, Action.SUBMIT_ANSWER: 1},
        ),
        turn("B", 1, 1, output_tokens=30, psjs=0.5),
    ]  # fmt: skip
    summary = summarize(table)[0]
    assert summary.tok_per_session == pytest.approx((150 + 30) / 2)
    assert summary.qer == pytest.approx(0.5)
    assert summary.psjs == pytest.approx(0.75)
    assert summary.psjs_coverage == pytest.approx(2 / 3)
    assert summary.action_fractions == {
        "execute_cypher": 0.25, "inspect_schema": 0.75, "search_values": 0.0, "ask_user": 0.0,
    }  # fmt: skip


def test_invalid_turns_are_left_out() -> None:
    bad = turn("A", 1, 0).model_copy(update={"valid": False, "gold_error": "boom"})
    assert summarize([bad]) == []
    assert summarize([bad, turn("B", 1, 1)])[0].turns == 1


def test_guided_turns_that_submit_with_their_third_action_are_not_exhausted() -> None:
    submitted = {Action.EXECUTE_CYPHER: 2, Action.SUBMIT_ANSWER: 1}
    capped = {Action.EXECUTE_CYPHER: 3}
    table = [
        # Sessions A and B use all 3 actions of every turn and submit with the last one.
        turn("A", 1, 1, protocol="guided", budget_remaining=0, actions=submitted),
        turn("A", 2, 1, protocol="guided", budget_remaining=0, actions=submitted),
        turn("B", 1, 0, protocol="guided", budget_remaining=0, actions=submitted),
        # Session C's second turn ran out of its 3 actions without an answer.
        turn("C", 1, 1, protocol="guided", budget_remaining=1, actions=submitted),
        turn("C", 2, 0, protocol="guided", budget_remaining=0, actions=capped),
    ]
    assert summarize(table)[0].exhaustion_rate == pytest.approx(1 / 3)
    # The same counts under the agentic protocol: the shared budget reached zero in all three.
    agentic = [t.model_copy(update={"record": t.record.model_copy(
        update={"protocol": ProtocolName.AGENTIC})}) for t in table]  # fmt: skip
    assert summarize(agentic)[0].exhaustion_rate == 1.0


def test_turn_losses_count_wrong_turns_by_why_they_ended_and_unreadable_actions() -> None:
    def played(session: str, t: int, ex: int, end: TurnEnd | None, **more: object) -> TurnScore:
        counts = {"model_actions": 3, "unreadable_actions": 0} if end is not None else {}
        return turn(session, t, ex, end=end, cliff=end is TurnEnd.CLIFF, **{**counts, **more})

    scores = [
        played("A", 1, 1, TurnEnd.SUBMITTED),
        played("A", 2, 0, TurnEnd.SUBMITTED, unreadable_actions=1),
        played("A", 3, 0, TurnEnd.STUCK, unreadable_actions=2),
        played("A", 4, 0, TurnEnd.CLIFF, model_actions=0),
        played("B", 1, 0, TurnEnd.BUDGET_EXHAUSTED),
        played("B", 2, 0, TurnEnd.CONTEXT_OVERFLOW, model_actions=1),
        played("B", 3, 1, TurnEnd.STUCK),  # a stuck turn whose fallback was right is no loss
        played("B", 4, 0, None),  # written before records named their end
        played("C", 1, 0, TurnEnd.ACTION_CAP, protocol="guided"),
        played("C", 2, 1, TurnEnd.SUBMITTED, protocol="guided"),
    ]
    # an invalid turn (its gold failed) counts nowhere
    scores[-1] = scores[-1].model_copy(update={"valid": False})
    losses = turn_losses(scores)
    agentic = losses[("m", "agentic", 3, "base", "")]
    assert (agentic.turns, agentic.wrong, agentic.unrecorded) == (8, 6, 1)
    assert agentic.ends == {
        TurnEnd.SUBMITTED: 1,
        TurnEnd.BUDGET_EXHAUSTED: 1,
        TurnEnd.CLIFF: 1,
        TurnEnd.CONTEXT_OVERFLOW: 1,
        TurnEnd.STUCK: 1,
    }
    # B4 counts no actions: 3 + 3 + 3 + 0 + 3 + 1 + 3 actions over the other seven turns
    assert (agentic.actions, agentic.unreadable, agentic.counted_turns) == (16, 3, 7)
    assert agentic.unreadable_rate == pytest.approx(3 / 16)
    guided = losses[("m", "guided", 3, "base", "")]
    assert (guided.turns, guided.wrong, guided.ends) == (1, 1, {TurnEnd.ACTION_CAP: 1})
    (uncounted,) = turn_losses([played("D", 1, 1, None)]).values()
    assert uncounted.unreadable_rate is None


def test_test_and_paraphrased_data_are_never_pooled_with_development_data() -> None:
    scores = [
        turn("dev-a", 1, 1, harness="explicit"),
        turn("test-a", 1, 0, harness="explicit", split=DataSplit.TEST, run_id="t"),
        turn(
            "test-a", 1, 1, harness="explicit", split=DataSplit.TEST, paraphrased=True, run_id="p"
        ),
        turn("dev-b", 1, 0, harness="", split=DataSplit.DEVELOPMENT),
    ]
    groups = group_by_system(scores)
    labels = {system_label(system): len(turns) for system, turns in groups.items()}
    assert labels == {
        "m agentic x3 [explicit]": 1,
        "m agentic x3 [explicit, test data]": 1,
        "m agentic x3 [explicit, test data, paraphrased]": 1,
        "m agentic x3": 1,
    }
    assert {s.harness for s in summarize(scores)} == {
        "explicit", "explicit, test data", "explicit, test data, paraphrased", ""
    }  # fmt: skip
