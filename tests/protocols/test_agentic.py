"""The agentic protocol and its variants on the real engine with a replay model (§3.1, App. D.5, F)."""

from __future__ import annotations

import pytest
from helpers_protocols import act, play

from cypherturn.agent import ActionExecutor, TurnEnd
from cypherturn.graph import GraphEngine
from cypherturn.protocols import (
    HISTORY_RESULT_CHARS,
    ProtocolSettings,
    Variant,
    agentic_context,
    session_budget,
)
from cypherturn.records import ProtocolName
from cypherturn.sessions import Session, SessionView

AGENTIC = ProtocolName.AGENTIC
Q1 = "MATCH (h:Hero) RETURN h.name AS name ORDER BY name"
Q2 = "MATCH (g:Guild) RETURN g.name"
SEARCH = {"label": "Hero", "property": "name", "query": "ada"}


def test_budget_is_shared_and_the_cliff_follows(session: Session, heroes: GraphEngine) -> None:
    # B = 4 x 3 = 12: turn 1 uses 7, turn 2 uses 1, turn 3 uses the last 4 without submitting
    replies = [act("INSPECT_SCHEMA")] * 6 + [act("SUBMIT_ANSWER", Q1)]
    replies += [act("SUBMIT_ANSWER", Q2)]
    replies += [act("EXECUTE_CYPHER", Q2), act("EXECUTE_CYPHER", Q1)] * 2
    played = play(session, heroes, replies, protocol=AGENTIC, m=3)
    assert session_budget(4, 3) == 12
    summary = [
        (o.end, o.predicted_cypher, len(o.steps), o.budget_remaining) for o in played.outcomes
    ]
    assert summary == [
        (TurnEnd.SUBMITTED, Q1, 7, 5),
        (TurnEnd.SUBMITTED, Q2, 1, 4),
        (TurnEnd.BUDGET_EXHAUSTED, Q1, 4, 0),
        (TurnEnd.CLIFF, None, 0, 0),
    ]
    assert played.model.remaining == 0
    assert len(played.model.calls) == 12


def test_larger_multiplier_gives_larger_budget(session: Session, heroes: GraphEngine) -> None:
    # B = 4 x 5 = 20: 18 units on turn 1, 1 on turn 2, the last one on turn 3
    replies = [act("INSPECT_SCHEMA")] * 17 + [act("SUBMIT_ANSWER", Q1)] * 2
    replies += [act("EXECUTE_CYPHER", Q2)]
    played = play(session, heroes, replies, protocol=AGENTIC, m=5)
    summary = [(o.end, o.predicted_cypher, o.budget_remaining) for o in played.outcomes]
    assert summary == [
        (TurnEnd.SUBMITTED, Q1, 2),
        (TurnEnd.SUBMITTED, Q1, 1),
        (TurnEnd.BUDGET_EXHAUSTED, Q2, 0),
        (TurnEnd.CLIFF, None, 0),
    ]
    assert played.model.remaining == 0


def test_history_records_own_actions_truncated(session: Session, heroes: GraphEngine) -> None:
    replies = [
        act("INSPECT_SCHEMA"),
        act("SEARCH_VALUES", SEARCH),
        act("EXECUTE_CYPHER", Q1),
        act("ASK_USER", "Do you mean current members?"),
        act("SUBMIT_ANSWER", Q1),
        act("SUBMIT_ANSWER", Q2),
        act("SUBMIT_ANSWER", Q2),
        act("SUBMIT_ANSWER", Q2),
    ]
    played = play(
        session, heroes, replies, protocol=AGENTIC, sim_replies=["Yes, the current ones."]
    )
    system = played.model.calls[0][0].content
    assert "(:Hero {" not in system and "INSPECT_SCHEMA" in system
    assert "Conversation so far" not in played.prompt(0)
    history = played.prompt(5)
    block = history.split("Turn 1\n", 1)[1].split("Current question", 1)[0]
    result_line = block.split("Result: ", 1)[1].split("\nASK_USER", 1)[0]
    assert len(result_line) == HISTORY_RESULT_CHARS + 3 and result_line.endswith("...")
    assert f"EXECUTE_CYPHER: {Q1}" in block
    assert "ASK_USER: Do you mean current members?\nUser: Yes, the current ones." in block
    assert f"SUBMIT_ANSWER: {Q1}" in block
    assert "INSPECT_SCHEMA" not in block and "SEARCH_VALUES" not in block
    assert "Node labels" not in history and "Matches" not in history
    # turn 4's history holds turns 1-3, the model's own predictions (never the gold)
    assert "SUBMIT_ANSWER: MATCH (g:Guild) RETURN g.name" in played.prompt(7)
    assert session.turns[0].gold_cypher not in played.prompt(7)


def test_persistent_schema_variant(session: Session, heroes: GraphEngine) -> None:
    replies = [act("SUBMIT_ANSWER", Q1), act("INSPECT_SCHEMA"), act("SUBMIT_ANSWER", Q1)]
    replies += [act("SUBMIT_ANSWER", Q1)] * 2
    base = play(session, heroes, replies, protocol=AGENTIC)
    ps = play(session, heroes, replies, protocol=AGENTIC, variant=Variant.PERSISTENT_SCHEMA)
    assert "Graph schema (from your INSPECT_SCHEMA)" not in ps.prompt(0)
    assert "Graph schema (from your INSPECT_SCHEMA)" not in ps.prompt(1)
    assert "(:Hero {" in ps.prompt(3) and "(:Hero {" in ps.prompt(4)
    assert "(:Hero {" not in base.prompt(3)


def test_disclosed_horizon_variant(session: Session, heroes: GraphEngine) -> None:
    replies = [act("INSPECT_SCHEMA"), act("INSPECT_SCHEMA"), act("SUBMIT_ANSWER", Q1)]
    replies += [act("SUBMIT_ANSWER", Q1)] * 3
    played = play(
        session, heroes, replies, protocol=AGENTIC, m=5, variant=Variant.DISCLOSED_HORIZON
    )
    assert "This conversation has 4 questions; this is question 1 of 4" in played.prompt(0)
    assert "Budget left: 20 actions" in played.prompt(0)
    assert "this is question 2 of 4" in played.prompt(3)
    assert "Budget left: 17 actions; suggested" in played.prompt(3)
    assert "Plan about 5 actions per question" in played.prompt(3)
    base = play(session, heroes, replies, protocol=AGENTIC, m=5)
    assert "This conversation has" not in base.prompt(0)


def test_budget_encouraging_variant_swaps_the_instruction(
    session: Session, heroes: GraphEngine
) -> None:
    replies = [act("SUBMIT_ANSWER", Q1)] * 4
    base = play(session, heroes, replies, protocol=AGENTIC, m=10)
    enc = play(session, heroes, replies, protocol=AGENTIC, m=10, variant=Variant.BUDGET_ENCOURAGING)
    assert "Be efficient" in base.model.calls[0][0].content
    assert "Be efficient" not in enc.model.calls[0][0].content
    assert "Use your available budget fully" in enc.model.calls[0][0].content


def test_guided_refuses_variants() -> None:
    from cypherturn.protocols import ProtocolSettings

    with pytest.raises(ValueError, match="agentic protocol only"):
        ProtocolSettings(protocol=ProtocolName.GUIDED, variant=Variant.PERSISTENT_SCHEMA)
    with pytest.raises(ValueError, match="fixed budget"):
        ProtocolSettings(protocol=ProtocolName.GUIDED, budget_multiplier=5)


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_resuming_from_finished_turns_plays_as_if_never_interrupted(
    session: Session, heroes: GraphEngine, cut: int
) -> None:
    # Agentic-PS, two schema probes (rejection rotation), a cliff at the end
    replies = [act("INSPECT_SCHEMA"), act("ASK_USER", "Which schema labels exist?")]
    replies += [act("SUBMIT_ANSWER", Q1), act("ASK_USER", "What is a node label here?")]
    replies += [act("SUBMIT_ANSWER", Q2)] + [act("EXECUTE_CYPHER", Q1)] * 7
    whole = play(session, heroes, replies, protocol=AGENTIC, m=3, variant=Variant.PERSISTENT_SCHEMA)
    assert [o.end for o in whole.outcomes][-1] is TurnEnd.CLIFF
    used = sum(len(o.steps) for o in whole.outcomes[:cut])
    resumed = play(
        session,
        heroes,
        replies[used:],
        protocol=AGENTIC,
        m=3,
        variant=Variant.PERSISTENT_SCHEMA,
        prior=whole.outcomes[:cut],
    )
    later = whole.outcomes[cut:]
    assert [(o.turn, o.end, o.predicted_cypher, o.budget_remaining) for o in resumed.outcomes] == [
        (o.turn, o.end, o.predicted_cypher, o.budget_remaining) for o in later
    ]
    assert [s.observation for s in resumed.steps] == [s.observation for o in later for s in o.steps]
    calls_before = sum(len(o.steps) for o in whole.outcomes[:cut])
    assert resumed.model.calls == whole.model.calls[calls_before:]


@pytest.mark.parametrize("keep", [Variant.BASE, Variant.PERSISTENT_SCHEMA])
def test_schema_first_spends_the_sessions_first_action_on_the_schema(
    session: Session, heroes: GraphEngine, keep: Variant
) -> None:
    replies = [act("EXECUTE_CYPHER", Q2), act("SUBMIT_ANSWER", Q1)]
    replies += [act("SUBMIT_ANSWER", Q2)] * 3
    first = play(session, heroes, replies, protocol=AGENTIC, variant=keep, schema_first=True)
    plain = play(session, heroes, replies, protocol=AGENTIC, variant=keep)
    taken = first.steps[0]
    assert (taken.turn, taken.step, taken.action, taken.by_harness) == (
        1,
        1,
        "inspect_schema",
        True,
    )
    assert taken.reply == "" and taken.prompt_tokens == taken.output_tokens == 0
    assert taken.observation == ActionExecutor(heroes).inspect_schema().text
    # charged like any action: turn 1 took 3 units of B = 12, the model made 2 calls
    assert [(s.step, s.by_harness) for s in first.outcomes[0].steps] == [
        (1, True),
        (2, False),
        (3, False),
    ]
    assert first.outcomes[0].budget_remaining == plain.outcomes[0].budget_remaining - 1 == 9
    assert len(first.model.calls) == len(plain.model.calls) == 5
    assert [o.predicted_cypher for o in first.outcomes] == [
        o.predicted_cypher for o in plain.outcomes
    ]
    heading = "Graph schema (from the INSPECT_SCHEMA the harness ran for you"
    assert heading in first.prompt(0) and "(:Hero {" in first.prompt(0)
    assert "(:Hero {" not in plain.prompt(0)
    # the schema stays in later turns' prompts only under Agentic-PS
    later = keep is Variant.PERSISTENT_SCHEMA
    assert all((heading in first.prompt(call)) is later for call in (2, 3, 4))
    # a resumed session neither takes the action again nor loses the kept schema
    resumed = play(
        session, heroes, replies[2:], protocol=AGENTIC, variant=keep, schema_first=True,
        prior=first.outcomes[:1],
    )  # fmt: skip
    assert not any(s.by_harness for s in resumed.steps)
    assert resumed.model.calls == first.model.calls[2:]


def test_schema_first_is_a_recorded_agentic_only_setting() -> None:
    from cypherturn.api import SessionRunConfig
    from cypherturn.errors import ConfigError

    on = SessionRunConfig(protocol="agentic", budget=3, schema_first=True).protocol_settings()
    assert on.model_dump()["schema_first"] is True and on.harness == "schema first"
    assert "schema_first" not in ProtocolSettings(protocol=AGENTIC).model_dump()
    with pytest.raises(ConfigError, match=r"^schema first applies to the agentic protocol only"):
        SessionRunConfig(protocol="guided", schema_first=True).protocol_settings()


def test_the_agentic_turn_context_runs_the_previous_prediction(
    session: Session, heroes: GraphEngine
) -> None:
    executor = ActionExecutor(heroes)
    turn = SessionView.of(session).turns[2]
    assert agentic_context(executor, turn, None).previous is None
    listed = "MATCH (g:Guild) RETURN g.name AS name"
    context = agentic_context(executor, turn, listed)
    assert context.question == turn.utterance
    assert context.previous is not None and context.previous.label == "Guild"
    assert sorted(context.previous.names) == ["Iron Circle", "Silver Hand"]
    for unusable in ("MATCH (g:Guild) RETURN count(g)", "MATCH (g:Guild RETURN g"):
        assert agentic_context(executor, turn, unusable).previous is None
