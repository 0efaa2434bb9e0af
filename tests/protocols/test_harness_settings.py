"""Harness settings beyond the paper (issue 16): grounding in the agent, observation framing and
decoding guards, played on the real engine with a replay model, and how they are recorded."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from helpers_protocols import act, play

from cypherturn.agent import ActionExecutor, AgentGrounding, TurnEnd, action_grammar
from cypherturn.graph import GraphEngine
from cypherturn.models import ChatMessage, ChatResponse, ReplayChatModel
from cypherturn.protocols import (
    CUT_OFF,
    OBSERVATION_STOPS,
    REPEATED,
    REPEATING,
    STUCK,
    ActionFormat,
    Framing,
    ModelCaller,
    ProtocolSettings,
    load_prompts,
    run_action_loop,
)
from cypherturn.protocols._loop import RESAMPLE_TEMPERATURE
from cypherturn.records import Action, ProtocolName
from cypherturn.runner import RunConfig
from cypherturn.sessions import Session

ALL = AgentGrounding(check=True, repair=True, values=True)
WRONG = "MATCH (g:Guild)-[:MEMBER_OF]->(h:Hero) WHERE g.name = 'Iron Circle' RETURN h.name AS name"
RIGHT = "MATCH (g:Guild)<-[:MEMBER_OF]-(h:Hero) WHERE g.name = 'Iron Circle' RETURN h.name AS name"
HEADER = "Observation from the database (not written by you):\n"


def test_grounded_guided_turns_run_and_submit_the_repaired_query(
    session: Session, heroes: GraphEngine
) -> None:
    replies = [
        # turn 1: execute the reversed query, then fall back to it at the cap
        act("EXECUTE_CYPHER", WRONG),
        act("INSPECT_SCHEMA"),
        act("INSPECT_SCHEMA"),
        # turns 2-4: submit it at once
        *[act("SUBMIT_ANSWER", WRONG)] * 3,
    ]
    played = play(session, heroes, replies, grounding=ALL, framing=Framing.EXPLICIT)
    first = played.outcomes[0]
    assert (first.end, first.predicted_cypher) == (TurnEnd.ACTION_CAP, RIGHT)
    step = first.steps[0]
    assert (step.payload, step.original_payload, step.rows) == (RIGHT, WRONG, 27)
    assert [f.code for f in step.grounding_repairs] == ["reversed_direction"]
    observed = played.model.calls[1][-1]
    assert observed.role == "user" and observed.content.startswith(HEADER + "name\n")
    assert "The harness repaired your query before running it:" in observed.content
    assert observed.content.endswith("Actions left for this question: 2.")
    submitted = played.outcomes[1]
    assert submitted.end is TurnEnd.SUBMITTED and submitted.predicted_cypher == RIGHT
    assert submitted.steps[0].original_payload == WRONG


def test_by_default_the_paper_agent_is_played(session: Session, heroes: GraphEngine) -> None:
    played = play(
        session, heroes, [act("EXECUTE_CYPHER", WRONG), *[act("SUBMIT_ANSWER", WRONG)] * 4]
    )
    step = played.outcomes[0].steps[0]
    assert (step.payload, step.original_payload, step.grounding_repairs, step.rows) == (
        WRONG,
        None,
        [],
        0,
    )
    assert played.model.calls[1][-1].content.startswith("Observation:\nname\n(0 rows)")
    assert played.outcomes[1].predicted_cypher == WRONG


def test_explicit_framing_names_the_source_in_tool_replies_and_for_the_user(
    session: Session, heroes: GraphEngine
) -> None:
    submit = {"text": "", "tool_calls": [{"name": "SUBMIT_ANSWER", "arguments": '{"query": "x"}'}]}
    calls = [
        {"text": "", "tool_calls": [{"name": "ASK_USER", "arguments": '{"question": "Which?"}'}]},
        "no action here",
        {"text": "", "tool_calls": [{"name": "INSPECT_SCHEMA", "arguments": "{}"}]},
        *[submit] * 3,
    ]
    played = play(
        session, heroes, calls, action_format=ActionFormat.TOOLS, framing=Framing.EXPLICIT
    )
    asked, unparsed = played.model.calls[1][-1], played.model.calls[2][-1]
    assert asked.role == "tool"
    assert asked.content.startswith("Observation from the user (not written by you):\nUser: ")
    assert unparsed.role == "user" and unparsed.content.startswith(
        "Observation from the harness (your reply was not read as an action) "
        "(not written by you):\n"
    )
    schema = played.outcomes[0].steps[2]
    assert schema.action is Action.INSPECT_SCHEMA and schema.ok


def test_explicit_framing_gives_the_guided_history_no_assistant_line_to_copy(
    session: Session, heroes: GraphEngine
) -> None:
    replies = [act("SUBMIT_ANSWER", RIGHT)] * 4
    explicit = play(session, heroes, replies, framing=Framing.EXPLICIT).prompt(1)
    paper = play(session, heroes, replies).prompt(1)
    block = explicit.split("Turn 1\n", 1)[1]
    assert block.startswith("User: ")
    assert "\nResult shown to the user (from the database, not written by you):\nname\n" in block
    assert "[Query Result]" not in explicit and "Assistant:" not in explicit
    assert "\nAssistant: [Query Result] name\n" in paper
    # the rows are the same gold rows either way
    assert (
        explicit.split("not written by you):\n", 1)[1].split("\n\n")[0]
        == (paper.split("[Query Result] ", 1)[1].split("\n\n")[0])
    )


def test_decoding_guards_leave_models_other_than_gguf_unchanged(
    session: Session, heroes: GraphEngine
) -> None:
    replies = [act("SUBMIT_ANSWER", WRONG)] * 4
    guarded = play(session, heroes, replies, decoding_guards=True)
    plain = play(session, heroes, replies)
    assert [o.predicted_cypher for o in guarded.outcomes] == [
        o.predicted_cypher for o in plain.outcomes
    ]
    assert guarded.model.calls == plain.model.calls


def test_settings_at_their_defaults_keep_the_recorded_configuration() -> None:
    plain = ProtocolSettings(protocol=ProtocolName.AGENTIC, budget_multiplier=5)
    assert set(plain.model_dump()) == {
        "protocol", "budget_multiplier", "variant", "temperature", "max_tokens", "seed",
        "action_format",
    }  # fmt: skip
    config = RunConfig(run_id="r", model="m", settings=plain, prompt_version=1, prompt_digest="d")
    # the configuration text as runs recorded it before these settings existed
    old_layout = (
        '{"schema_version":1,"run_id":"r","model":"m","sim_model":null,"settings":'
        '{"protocol":"agentic","budget_multiplier":5,"variant":"base","temperature":0.0,'
        '"max_tokens":512,"seed":null},"prompt_version":1,"prompt_digest":"d"}'
    )
    assert config.digest() == hashlib.sha256(old_layout.encode()).hexdigest()[:16]
    changed = plain.model_copy(update={"grounding": ALL, "decoding_guards": True})
    dumped = changed.model_dump(mode="json")
    assert dumped["grounding"] == {"check": True, "repair": True, "values": True}
    assert dumped["decoding_guards"] is True and "framing" not in dumped
    assert ProtocolSettings.model_validate(dumped) == changed
    other = config.model_copy(update={"settings": changed})
    assert other.digest() != config.digest()


def test_grounded_agentic_history_shows_the_query_that_ran(
    session: Session, heroes: GraphEngine
) -> None:
    replies = [act("EXECUTE_CYPHER", WRONG), act("SUBMIT_ANSWER", WRONG)] + [
        act("SUBMIT_ANSWER", RIGHT)
    ] * 3
    played = play(
        session,
        heroes,
        replies,
        protocol=ProtocolName.AGENTIC,
        grounding=AgentGrounding(repair=True),
    )
    history = played.prompt(2)
    assert f"EXECUTE_CYPHER: {RIGHT}" in history and WRONG not in history
    assert played.outcomes[0].steps[0].action is Action.EXECUTE_CYPHER


def test_run_options_name_the_harness_settings() -> None:
    from cypherturn.api import SessionRunConfig
    from cypherturn.errors import ConfigError

    settings = SessionRunConfig(
        grounding="check,values", framing="explicit", decoding_guards=True, repeat_guard=True
    ).protocol_settings()
    assert settings.grounding == AgentGrounding(check=True, values=True)
    assert settings.framing is Framing.EXPLICIT and settings.decoding_guards
    assert settings.repeat_guard
    assert SessionRunConfig().protocol_settings() == ProtocolSettings(protocol=ProtocolName.GUIDED)
    with pytest.raises(ConfigError, match="unknown grounding part 'vote'"):
        SessionRunConfig(grounding="vote").protocol_settings()
    with pytest.raises(ConfigError, match="framing"):
        SessionRunConfig(framing="loud").protocol_settings()


@pytest.mark.parametrize("protocol", [ProtocolName.GUIDED, ProtocolName.AGENTIC])
def test_the_output_note_ends_the_system_prompt_only_when_on(
    session: Session, heroes: GraphEngine, protocol: ProtocolName
) -> None:
    note = load_prompts()["output"]
    replies = [act("SUBMIT_ANSWER", WRONG)] * len(session.turns)
    noted = play(session, heroes, replies, protocol=protocol, output_note=True)
    plain = play(session, heroes, replies, protocol=protocol)
    noted_system, plain_system = noted.model.calls[0][0], plain.model.calls[0][0]
    assert noted_system.role == plain_system.role == "system"
    assert noted_system.content == f"{plain_system.content}\n\n{note}"
    assert all(note not in m.content for call in plain.model.calls for m in call)
    # the setting is recorded only when on, and the prompt digest covers the note then
    assert "output_note" not in ProtocolSettings(protocol=protocol).model_dump()
    assert ProtocolSettings(protocol=protocol, output_note=True).model_dump()["output_note"]
    prompts = load_prompts()
    assert prompts.digest(ActionFormat.TEXT) != prompts.digest(ActionFormat.TEXT, output_note=True)


@pytest.mark.parametrize("protocol", [ProtocolName.GUIDED, ProtocolName.AGENTIC])
def test_the_chain_note_follows_the_output_note_only_when_on(
    session: Session, heroes: GraphEngine, protocol: ProtocolName
) -> None:
    prompts = load_prompts()
    output, chain = prompts["output"], prompts["chain"]
    replies = [act("SUBMIT_ANSWER", WRONG)] * len(session.turns)
    both = play(session, heroes, replies, protocol=protocol, output_note=True, chain_note=True)
    alone = play(session, heroes, replies, protocol=protocol, chain_note=True)
    plain = play(session, heroes, replies, protocol=protocol)
    plain_system = plain.model.calls[0][0].content
    assert both.model.calls[0][0].content == f"{plain_system}\n\n{output}\n\n{chain}"
    assert alone.model.calls[0][0].content == f"{plain_system}\n\n{chain}"
    assert all(chain not in m.content for call in plain.model.calls for m in call)
    # recorded only when on, named in the harness label, and covered by the prompt digest
    on = ProtocolSettings(protocol=protocol, output_note=True, chain_note=True)
    assert on.model_dump()["chain_note"] is True and on.harness == "note, chain"
    assert "chain_note" not in ProtocolSettings(protocol=protocol).model_dump()
    digests = {
        prompts.digest(ActionFormat.TEXT, output_note=o, chain_note=c)
        for o in (False, True)
        for c in (False, True)
    }
    assert len(digests) == 4


def test_the_chain_note_is_a_run_option() -> None:
    from cypherturn.api import SessionRunConfig

    settings = SessionRunConfig(protocol="guided", chain_note=True).protocol_settings()
    assert settings.chain_note and not settings.output_note


def test_the_last_action_note_ends_only_the_footer_before_a_guided_turns_last_action(
    session: Session, heroes: GraphEngine
) -> None:
    from cypherturn.api import SessionRunConfig
    from cypherturn.errors import ConfigError
    from cypherturn.protocols import LAST_ACTION

    replies = [act("SEARCH_VALUES", {"label": "Guild", "property": "name", "query": "Iron"})] * 3
    replies += [act("SUBMIT_ANSWER", RIGHT)] * (len(session.turns) - 1)
    noted = play(session, heroes, replies, last_action_note=True)
    plain = play(session, heroes, replies)
    observed = [call[-1].content for call in noted.model.calls[1:3]]
    assert observed[0].endswith("Actions left for this question: 2.")
    assert observed[1].endswith(f"Actions left for this question: 1. {LAST_ACTION}")
    assert [call[-1].content for call in plain.model.calls[1:3]] == [
        observed[0],
        observed[1].removesuffix(f" {LAST_ACTION}"),
    ]
    assert all(LAST_ACTION not in m.content for call in plain.model.calls for m in call)
    on = ProtocolSettings(protocol=ProtocolName.GUIDED, last_action_note=True)
    assert on.model_dump()["last_action_note"] is True and on.harness == "last action"
    assert "last_action_note" not in ProtocolSettings(protocol=ProtocolName.GUIDED).model_dump()
    with pytest.raises(ConfigError, match="guided protocol only"):
        SessionRunConfig(protocol="agentic", last_action_note=True).protocol_settings()


class ScriptedGuarded:
    """A model that supports grammars and decoding guards (as a GGUF model does), returns scripted
    replies and records the sampling settings, grammar and guards of every call."""

    spec = "scripted:guarded"
    supports_grammar = True
    supports_decoding_guards = True

    def __init__(self, replies: list[tuple[str, str]]) -> None:
        self.replies = list(replies)
        self.settings: list[dict[str, Any]] = []

    def chat(self, messages: list[ChatMessage], **options: Any) -> ChatResponse:
        self.settings.append(options)
        text, finish = self.replies.pop(0)
        return ChatResponse(text=text, finish_reason=finish, prompt_tokens=1, completion_tokens=1)


def test_the_call_after_a_guard_stopped_reply_is_sampled(heroes: GraphEngine) -> None:
    runaway = '{"action": "SUBMIT_ANSWER", "input": "MATCH (h:Hero) WHERE h.power = 10000000000'
    model = ScriptedGuarded(
        [(runaway, "repetition"), (runaway, "length"), (act("SUBMIT_ANSWER", WRONG), "stop")]
    )
    caller = ModelCaller(model, temperature=0.0, max_tokens=64, seed=7)
    messages = [ChatMessage(role="system", content="s"), ChatMessage(role="user", content="q")]
    result = run_action_loop(
        call=caller,
        messages=messages,
        turn=1,
        max_actions=3,
        executor=ActionExecutor(heroes),
        ask=lambda _question, _asks: ("", 0),
        on_step=lambda _step: None,
        footer=lambda left: f"{left} left",
        guards=True,
    )
    assert [s.observation for s in result.steps[:2]] == [REPEATING, CUT_OFF]
    assert result.submitted == WRONG
    first, second, third = model.settings
    assert first["temperature"] == 0.0 and first["seed"] == 7 and first["repetition_guard"]
    # after each guard stop the next call samples, with a seed that depends on the context
    assert second["temperature"] == third["temperature"] == RESAMPLE_TEMPERATURE
    assert len({first["seed"], second["seed"], third["seed"]}) == 3
    assert all(s["stop"] == OBSERVATION_STOPS for s in model.settings)


@pytest.mark.parametrize("protocol", [ProtocolName.GUIDED, ProtocolName.AGENTIC])
def test_the_repeat_guard_notes_a_repeat_samples_after_it_and_ends_a_stuck_turn(
    session: Session, heroes: GraphEngine, protocol: ProtocolName
) -> None:
    ask = act("ASK_USER", "Which guild?")
    replies = [
        # turn 1: the same query twice (charged both times), then a submission
        act("EXECUTE_CYPHER", WRONG),
        act("EXECUTE_CYPHER", WRONG),
        act("SUBMIT_ANSWER", RIGHT),
        # turn 2: the same query three times: the turn ends on the third, predicting it
        *[act("EXECUTE_CYPHER", WRONG)] * 3,
        # turn 3: the same question three times, nothing executed: no prediction
        *[ask] * 3,
        # (more than the guarded run needs: the plain agentic run goes on after them)
        *[act("SUBMIT_ANSWER", RIGHT)] * (len(session.turns) - 1),
    ]
    kwargs: dict[str, Any] = {"protocol": protocol, "sim_replies": ["The Iron Circle."] * 6}
    guarded = play(session, heroes, replies, repeat_guard=True, **kwargs)
    plain = play(session, heroes, replies, **kwargs)
    steps = guarded.outcomes[0].steps
    assert [s.repeat_of for s in steps] == [None, 1, None]
    assert [s.rows for s in steps[:2]] == [0, 0]
    assert steps[1].budget_remaining == steps[0].budget_remaining - 1
    assert REPEATED.format(step=1) in guarded.model.calls[2][-1].content
    assert REPEATED.format(step=1) not in guarded.model.calls[1][-1].content
    settings = guarded.model.settings
    assert [s["temperature"] for s in settings[:3]] == [0.0, 0.0, RESAMPLE_TEMPERATURE]
    for outcome, action, prediction in (
        (guarded.outcomes[1], Action.EXECUTE_CYPHER, WRONG),
        (guarded.outcomes[2], Action.ASK_USER, None),
    ):
        assert [(s.action, s.repeat_of) for s in outcome.steps] == [
            (action, None),
            (action, 1),
            (action, 1),
        ]
        assert (outcome.end, outcome.predicted_cypher) == (TurnEnd.STUCK, prediction)
        assert outcome.steps[2].observation == STUCK and not outcome.steps[2].ok
    assert [s["temperature"] for s in settings[3:9]] == [0.0, 0.0, RESAMPLE_TEMPERATURE] * 2
    # off (the paper's agent): no note, no sampling; the third time runs as the others
    assert all(s.repeat_of is None for o in plain.outcomes for s in o.steps)
    assert all("word for word" not in m.content for call in plain.model.calls for m in call)
    assert all(s["temperature"] == 0.0 for s in plain.model.settings)
    assert plain.outcomes[1].steps[2].observation != STUCK
    assert TurnEnd.STUCK not in {o.end for o in plain.outcomes}
    assert "repeat_guard" not in ProtocolSettings(protocol=protocol).model_dump()
    assert ProtocolSettings(protocol=protocol, repeat_guard=True).model_dump()["repeat_guard"]


def test_the_repeat_guard_ends_a_turn_at_the_third_identical_unreadable_reply(
    session: Session, heroes: GraphEngine
) -> None:
    runaway = "```json\n{"
    replies = [
        # turn 1: a query, then the same unreadable reply three times
        act("EXECUTE_CYPHER", WRONG),
        *[runaway] * 3,
        # turn 2: three different unreadable replies are not a repeat, then a submission
        "I think",
        "Let me see",
        "Hmm",
        act("SUBMIT_ANSWER", RIGHT),
        *[act("SUBMIT_ANSWER", RIGHT)] * len(session.turns),
    ]
    kwargs: dict[str, Any] = {"protocol": ProtocolName.AGENTIC}
    guarded = play(session, heroes, replies, repeat_guard=True, **kwargs)
    first, second = guarded.outcomes[:2]
    assert [(s.action, s.repeat_of) for s in first.steps] == [
        (Action.EXECUTE_CYPHER, None),
        (None, None),
        (None, 2),
        (None, 2),
    ]
    assert (first.end, first.predicted_cypher) == (TurnEnd.STUCK, WRONG)
    assert first.steps[-1].observation == STUCK
    assert [s.repeat_of for s in second.steps] == [None] * 4
    assert (second.end, second.predicted_cypher) == (TurnEnd.SUBMITTED, RIGHT)
    # off: the runaway is played a third time like any reply
    plain = play(session, heroes, replies, **kwargs)
    assert plain.outcomes[0].end is not TurnEnd.STUCK
    assert plain.outcomes[0].steps[3].observation != STUCK


def test_query_memory_shows_the_models_own_earlier_queries_in_the_guided_history(
    session: Session, heroes: GraphEngine
) -> None:
    replies = [act("SUBMIT_ANSWER", WRONG)]
    replies += [act("ASK_USER", f"Which guild, {n}?") for n in ("first", "second", "third")]
    replies += [act("SUBMIT_ANSWER", RIGHT), act("SUBMIT_ANSWER", WRONG)]
    remembered = play(session, heroes, replies, query_memory=True)
    plain = play(session, heroes, replies)
    assert [o.predicted_cypher for o in remembered.outcomes] == [WRONG, None, RIGHT, WRONG]
    last = remembered.prompt(5)
    turn_blocks = last.split("Conversation so far:\n", 1)[1].split("\n\nTurn ")
    mine = [
        line for block in turn_blocks for line in block.splitlines()
        if line.startswith("Your query for this turn: ")
    ]  # fmt: skip
    assert mine == [f"Your query for this turn: {q}" for q in (WRONG, "none", RIGHT)]
    # nothing else in the prompt changes, and the paper's history has no such line
    assert "\n".join(
        line for line in last.splitlines() if not line.startswith("Your query for this turn: ")
    ) == plain.prompt(5)
    assert all("Your query" not in m.content for call in plain.model.calls for m in call)
    # a resumed run shows the predictions of the turns played before the interruption
    resumed = play(session, heroes, replies[4:], query_memory=True, prior=remembered.outcomes[:2])
    assert resumed.model.calls == remembered.model.calls[4:]


def test_query_memory_is_a_recorded_guided_only_setting() -> None:
    from cypherturn.api import SessionRunConfig
    from cypherturn.errors import ConfigError

    on = ProtocolSettings(protocol=ProtocolName.GUIDED, query_memory=True)
    assert on.model_dump()["query_memory"] is True
    assert "query_memory" not in ProtocolSettings(protocol=ProtocolName.GUIDED).model_dump()
    assert on.harness == "memory"
    with pytest.raises(ConfigError, match="guided protocol only"):
        SessionRunConfig(protocol="agentic", query_memory=True).protocol_settings()


def test_the_action_grammar_is_a_recorded_text_format_setting() -> None:
    from cypherturn.api import SessionRunConfig
    from cypherturn.errors import ConfigError

    on = ProtocolSettings(protocol=ProtocolName.AGENTIC, action_grammar=True)
    assert on.model_dump()["action_grammar"] is True and on.harness == "grammar"
    assert "action_grammar" not in ProtocolSettings(protocol=ProtocolName.AGENTIC).model_dump()
    with pytest.raises(ConfigError, match="text action format only"):
        SessionRunConfig(action_format="tools", action_grammar=True).protocol_settings()
    # a model that decodes under grammars gets it on every call, guarded or not
    model = ScriptedGuarded([(act("SUBMIT_ANSWER", RIGHT), "stop")] * 2)
    caller = ModelCaller(model, temperature=0.0, max_tokens=64, seed=0, grammar=action_grammar())
    caller([ChatMessage(role="user", content="q")], guards=True)
    caller([ChatMessage(role="user", content="q")])
    assert [s["grammar"] for s in model.settings] == [action_grammar()] * 2
    # one that does not is called as before
    replay = ReplayChatModel([act("SUBMIT_ANSWER", RIGHT)])
    ModelCaller(replay, temperature=0.0, max_tokens=64, seed=0, grammar=action_grammar())(
        [ChatMessage(role="user", content="q")]
    )
    assert replay.calls
