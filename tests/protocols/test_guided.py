"""The guided protocol on the real engine with a replay model (§3.1, App. D.5)."""

from __future__ import annotations

from helpers_protocols import act, play

from cypherturn.agent import ActionStep, AgentGrounding, TurnEnd
from cypherturn.graph import GraphEngine
from cypherturn.grounding import graph_index
from cypherturn.protocols import DISCOURAGEMENT, HISTORY_ROWS, ActionFormat, guided_context
from cypherturn.records import Action
from cypherturn.sessions import Session, SessionView

Q1 = "MATCH (h:Hero) RETURN h.name"
Q2 = "MATCH (g:Guild) RETURN g.name"


def test_three_actions_per_turn_and_fallbacks(session: Session, heroes: GraphEngine) -> None:
    replies = [
        # turn 1: three non-submitting actions -> last EXECUTE payload
        act("EXECUTE_CYPHER", Q1),
        act("EXECUTE_CYPHER", Q2),
        act("INSPECT_SCHEMA"),
        # turn 2: no EXECUTE at all -> no prediction
        act("INSPECT_SCHEMA"),
        "not an action",
        act("ASK_USER", "Which ones?"),
        # turn 3: submit on the second step; only that one counts
        act("EXECUTE_CYPHER", Q1),
        act("SUBMIT_ANSWER", Q2),
        # turn 4: submit at once
        act("SUBMIT_ANSWER", Q1),
    ]
    played = play(session, heroes, replies)
    ends = [(o.end, o.predicted_cypher, len(o.steps)) for o in played.outcomes]
    assert ends == [
        (TurnEnd.ACTION_CAP, Q2, 3),
        (TurnEnd.ACTION_CAP, None, 3),
        (TurnEnd.SUBMITTED, Q2, 2),
        (TurnEnd.SUBMITTED, Q1, 1),
    ]
    assert played.model.remaining == 0
    assert [o.budget_remaining for o in played.outcomes] == [0, 0, 1, 2]
    unparsed = played.outcomes[1].steps[1]
    assert unparsed.action is None and not unparsed.ok and "No JSON object" in unparsed.observation
    assert len(played.steps) == 9


def test_schema_is_injected_and_history_is_gold(session: Session, heroes: GraphEngine) -> None:
    played = play(session, heroes, [act("SUBMIT_ANSWER", Q1)] * 4)
    system = played.model.calls[0][0].content
    assert "(:Hero {" in system and "MEMBER_OF" in system
    assert "Conversation so far" not in played.prompt(0)
    turn3 = played.prompt(2)
    # turn 1's 27 rows are cut to 10 in the history; the prediction is never shown
    block1 = turn3.split("Turn 1\n", 1)[1].split("\n\nTurn 2", 1)[0]
    assert "User: Who is in the Iron Circle?" in block1
    assert "Assistant: [Query Result] name" in block1
    assert "(27 rows, first 10 shown)" in block1
    assert Q1 not in turn3


def test_contrast_turn_sees_previous_result_untruncated(
    session: Session, heroes: GraphEngine
) -> None:
    played = play(session, heroes, [act("SUBMIT_ANSWER", Q1)] * 4)
    contrast_prompt = played.prompt(1)
    assert "(27 rows)" in contrast_prompt and "first 10 shown" not in contrast_prompt
    assert "Recruit 25" in contrast_prompt
    # turn 4 (not CONTRAST) sees turn 1 truncated again
    assert "(27 rows, first 10 shown)" in played.prompt(3)


def test_dependency_hint_on_first_turn(session: Session, heroes: GraphEngine) -> None:
    played = play(session, heroes, [act("SUBMIT_ANSWER", Q1)] * 4)
    hint = "[Note: This turn builds upon the result of Turn 1. Use the result shown for Turn 1"
    assert hint in played.prompt(3)
    assert all("[Note:" not in played.prompt(i) for i in range(3))


def test_ask_user_is_scripted(session: Session, heroes: GraphEngine) -> None:
    replies = [act("ASK_USER", "What do you mean?"), act("SUBMIT_ANSWER", Q1)] * 4
    played = play(session, heroes, replies)
    asks = [s for s in played.steps if s.action is Action.ASK_USER]
    assert [a.observation for a in asks] == [
        f"User: {DISCOURAGEMENT}",
        f"User: {DISCOURAGEMENT}",
        "User: Strong means a power above 80.",
        f"User: {DISCOURAGEMENT}",
    ]
    # ASK_USER does not end the turn: the reply is observed, then SUBMIT follows
    assert all(o.end is TurnEnd.SUBMITTED for o in played.outcomes)
    assert "Observation:\nUser: Strong means" in played.model.calls[5][-1].content


def test_native_tool_calls_drive_the_loop(session: Session, heroes: GraphEngine) -> None:
    query = "MATCH (h:Hero) RETURN h.name AS name"
    execute = {
        "tool_calls": [{"id": "c1", "name": "EXECUTE_CYPHER", "arguments": {"query": query}}]
    }
    twice = {
        "text": "",
        "tool_calls": [
            {"id": "c2", "name": "INSPECT_SCHEMA", "arguments": {}},
            {"id": "c3", "name": "SUBMIT_ANSWER", "arguments": {"query": query}},
        ],
    }
    broken = {"tool_calls": [{"id": "c4", "name": "EXECUTE_CYPHER", "arguments": '{"query": '}]}
    submit = act("SUBMIT_ANSWER", query)
    replies = [execute, twice, submit, broken, submit, submit, broken, broken, broken]
    played = play(session, heroes, replies, action_format=ActionFormat.TOOLS)
    assert [o.predicted_cypher for o in played.outcomes] == [query, query, query, None]
    assert played.model.settings[0]["tools"] == [a.name for a in Action]
    system = played.model.calls[0][0].content
    assert "Call exactly one tool in every reply." in system and '{"action"' not in system
    third = played.model.calls[2]
    assert [m.role for m in third] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert third[2].tool_calls[0].id == "c1" and third[3].tool_call_id == "c1"
    assert [c.id for c in third[4].tool_calls] == ["c2"]  # only the call that was run
    assert "1 more were ignored" in third[5].content and "Hero" in third[5].content
    steps = played.steps
    assert steps[0].tool_call is not None and steps[0].action is Action.EXECUTE_CYPHER
    assert steps[1].action is Action.INSPECT_SCHEMA
    assert steps[2].tool_call is None and steps[2].action is Action.SUBMIT_ANSWER  # text fallback
    assert steps[3].action is None and "not valid JSON" in steps[3].observation


def test_repaired_reply_runs_and_is_recorded(session: Session, heroes: GraphEngine) -> None:
    # single quotes and a trailing comma: not JSON, read after repair, marked in the record
    repaired = "{'action': 'SUBMIT_ANSWER', 'input': '" + Q1 + "',}"
    played = play(session, heroes, [repaired] + [act("SUBMIT_ANSWER", Q1)] * 3)
    first = played.steps[0]
    assert first.repaired and first.payload == Q1
    assert played.outcomes[0].predicted_cypher == Q1
    assert not any(step.repaired for step in played.steps[1:])
    # a record written before the field existed reads as not repaired
    legacy = first.model_dump(exclude={"repaired"})
    assert ActionStep.model_validate(legacy).repaired is False


def test_the_turn_context_holds_only_what_the_history_shows(
    session: Session, heroes: GraphEngine
) -> None:
    index = graph_index(heroes)
    view = SessionView.of(session, oracle_history=True)
    contexts = [guided_context(view, turn, index) for turn in view.turns]
    assert [c.question for c in contexts] == [t.utterance for t in session.turns]
    assert contexts[0].previous is None
    # turn 2 is a CONTRAST turn: the history shows all 27 names of turn 1
    previous = contexts[1].previous
    assert previous is not None and previous.label == "Hero" and len(previous.names) == 27
    # turn 4 sees turn 3's count, which names nothing
    assert contexts[3].previous is None
    # turn 3 sees turn 2's names only if the history shows every one of them
    shown = len(session.turns[1].gold_result.rows) <= HISTORY_ROWS
    assert (contexts[2].previous is not None) is shown


def test_question_grounding_repairs_a_submission_in_play(
    session: Session, heroes: GraphEngine
) -> None:
    counted = "MATCH (h:Hero)-[:MEMBER_OF]->(:Guild {name: 'Iron Circle'}) RETURN count(h) AS n"
    played = play(
        session,
        heroes,
        [act("SUBMIT_ANSWER", counted)] * 4,
        grounding=AgentGrounding(repair=True, question=True),
    )
    first = played.steps[0]
    assert first.original_payload == counted
    assert first.payload == counted.replace("count(h) AS n", "DISTINCT h.name")
    assert [f.code for f in first.grounding_repairs] == ["answer_shape"]
    # turn 3 asks "how many": its count stands
    third = next(s for s in played.steps if s.turn == 3)
    assert third.payload == counted and third.original_payload is None
