"""The runner on the real engine: logs, records, resume after a crash, config checks, infra failures."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from mock_endpoint import Script, serve
from protocol_world import WORLD, make_session

from cypherturn.agent import TurnEnd
from cypherturn.errors import ConfigError, ContextLengthError
from cypherturn.graph import GraphEngine
from cypherturn.models import (
    ChatMessage,
    ChatModel,
    ChatResponse,
    OpenAIChatModel,
    ReplayChatModel,
    RetryPolicy,
)
from cypherturn.protocols import (
    ActionFormat,
    PromptSet,
    ProtocolSettings,
    Variant,
    load_prompts,
)
from cypherturn.records import RECORDS_FILE, Action, ProtocolName, TurnRecord, read_jsonl
from cypherturn.runner import (
    CONFIG_FILE,
    INFRA_FILE,
    PROMPTS_FILE,
    RunConfig,
    RunSummary,
    SessionFinished,
    SessionStarted,
    SessionStatus,
    StepLogged,
    TurnFinished,
    log_path,
    read_log,
    run_benchmark,
    run_session,
    select_sessions,
)
from cypherturn.sessions import Persona, Phenomenon, Session

Q = "MATCH (h:Hero) RETURN h.name AS name"
SUBMIT = json.dumps({"action": "SUBMIT_ANSWER", "input": Q})
EXECUTE = json.dumps({"action": "EXECUTE_CYPHER", "input": Q})
GUIDED = ProtocolSettings(protocol=ProtocolName.GUIDED)
AGENTIC3 = ProtocolSettings(protocol=ProtocolName.AGENTIC, budget_multiplier=3)
FAST_RETRY = RetryPolicy(attempts=4, initial_delay_s=0.01, factor=1.0)


class CrashingModel(ReplayChatModel):
    """Replays responses, then dies on call ``crash_at`` the way a killed process would."""

    def __init__(self, responses: Sequence[str], crash_at: int) -> None:
        super().__init__(responses, spec="replay:crash")
        self.crash_at = crash_at

    def chat(self, messages: list[ChatMessage], **kwargs: object) -> ChatResponse:
        if len(self.calls) + 1 == self.crash_at:
            raise KeyboardInterrupt
        return super().chat(messages, **kwargs)  # type: ignore[arg-type]


def _sessions(heroes: GraphEngine, n: int) -> list[Session]:
    return [make_session(heroes, f"heroes-{i}") for i in range(1, n + 1)]


def _engines(heroes: GraphEngine) -> object:
    def engine_for(world: str) -> GraphEngine:
        assert world == WORLD
        return heroes

    return engine_for


def _run(
    heroes: GraphEngine,
    sessions: list[Session],
    model: ChatModel,
    out: Path,
    settings: ProtocolSettings,
    **options: Any,
) -> RunSummary:
    """``run_benchmark`` of the heroes sessions into ``out``."""
    return run_benchmark(
        sessions, model=model, engines=_engines(heroes), settings=settings, out_dir=out, **options
    )


def test_run_session_logs_every_action(heroes: GraphEngine, tmp_path: Path) -> None:
    session = make_session(heroes)
    replies = [EXECUTE, EXECUTE, EXECUTE, SUBMIT] + [SUBMIT] * 3
    result = run_session(
        session,
        model=ReplayChatModel(replies, spec="replay:test"),
        engine=heroes,
        settings=AGENTIC3,
        run_id="r1",
        log_path=tmp_path / "s.jsonl",
    )
    assert result.status is SessionStatus.COMPLETED
    events = read_log(tmp_path / "s.jsonl")
    assert isinstance(events[0], SessionStarted) and events[0].budget == 12
    assert [type(e).__name__ for e in events].count("StepLogged") == 7
    assert isinstance(events[-1], SessionFinished)
    ends = [e.end for e in events if isinstance(e, TurnFinished)]
    assert ends == [TurnEnd.SUBMITTED] * 4
    first = result.records[0]
    assert first.predicted_cypher == Q
    assert first.actions == {Action.EXECUTE_CYPHER: 3, Action.SUBMIT_ANSWER: 1}
    assert [a.outcome for a in first.query_attempts] == ["ok", "ok", "ok"]
    assert first.budget_remaining == 8 and first.model == "replay:test"
    assert result.records[3].phenomenon == "FIRST" and result.records[3].depends_on == 1
    step = next(e for e in events if isinstance(e, StepLogged)).step
    assert step.output_tokens > 0 and step.prompt_tokens > 0 and step.reply == EXECUTE


def test_records_name_the_harness_they_were_played_under(heroes: GraphEngine) -> None:
    session = make_session(heroes)
    settings = AGENTIC3.model_copy(update={"decoding_guards": True, "repeat_guard": True})
    for played, harness in ((AGENTIC3, ""), (settings, "guards, repeat")):
        result = run_session(
            session, model=ReplayChatModel([SUBMIT] * 4), engine=heroes, settings=played
        )
        assert {r.harness for r in result.records} == {harness}


def test_cliff_turns_are_marked(heroes: GraphEngine) -> None:
    session = make_session(heroes)
    result = run_session(
        session,
        model=ReplayChatModel([json.dumps({"action": "INSPECT_SCHEMA"})] * 12),
        engine=heroes,
        settings=AGENTIC3,
    )
    assert [r.cliff for r in result.records] == [False, True, True, True]
    assert all(r.predicted_cypher is None for r in result.records)


def test_resume_after_crash_mid_session(heroes: GraphEngine, tmp_path: Path) -> None:
    sessions = _sessions(heroes, 3)
    out = tmp_path / "run"
    # session 1 completes (4 calls), session 2 dies on its 3rd call
    crashing = CrashingModel([SUBMIT] * 20, crash_at=7)
    with pytest.raises(KeyboardInterrupt):
        _run(heroes, sessions, crashing, out, GUIDED)
    partial = read_log(log_path(out, "heroes-2"))
    assert len([e for e in partial if isinstance(e, TurnFinished)]) == 2
    # a torn line left by a kill mid-write is tolerated
    with log_path(out, "heroes-2").open("a", encoding="utf-8") as fh:
        fh.write('{"schema_version": 1, "event": "st')

    model = ReplayChatModel([SUBMIT] * 6, spec="replay:crash")
    summary = _run(heroes, sessions, model, out, GUIDED)
    assert (summary.resumed, summary.played, summary.completed) == (1, 2, 3)
    # session 1 is read back; session 2 resumes at turn 3; session 3 is played whole
    assert len(model.calls) == 2 + 4
    resumed = read_log(log_path(out, "heroes-2"))
    assert isinstance(resumed[0], SessionStarted) and resumed[0].resumed_turns == 2
    assert resumed[1:5] == partial[1:5]  # the kept turns' events, timestamps included
    records = list(read_jsonl(out / RECORDS_FILE, TurnRecord))
    keys = [(r.session_id, r.turn) for r in records]
    assert keys == [(f"heroes-{s}", t) for s in (1, 2, 3) for t in (1, 2, 3, 4)]
    aborted = list((out / "aborted").glob("heroes-2.*.jsonl"))
    assert len(aborted) == 1 and len(read_log(aborted[0])) == len(partial)

    again = _run(heroes, sessions, ReplayChatModel([], spec="replay:crash"), out, GUIDED)
    assert (again.resumed, again.played, again.turns) == (3, 0, 12)
    stored = PromptSet.model_validate_json((out / PROMPTS_FILE).read_text(encoding="utf-8"))
    assert stored == load_prompts()


def test_a_kill_before_an_interrupted_session_restarts_keeps_its_turns(
    heroes: GraphEngine, tmp_path: Path
) -> None:
    sessions = _sessions(heroes, 1)
    out = tmp_path / "run"
    crashing = CrashingModel([SUBMIT] * 4, crash_at=3)
    with pytest.raises(KeyboardInterrupt):
        _run(heroes, sessions, crashing, out, GUIDED)

    def killed(world: str) -> GraphEngine:
        raise KeyboardInterrupt  # the run dies after reading the logs, before playing

    with pytest.raises(KeyboardInterrupt):
        run_benchmark(
            sessions,
            model=ReplayChatModel([], spec="replay:crash"),
            engines=killed,
            settings=GUIDED,
            out_dir=out,
        )
    model = ReplayChatModel([SUBMIT] * 2, spec="replay:crash")
    summary = _run(heroes, sessions, model, out, GUIDED)
    assert summary.turns_kept == 2 and len(model.calls) == 2
    assert not list((out / "sessions").glob("*.new"))


def test_agentic_resume_restores_budget_and_history(heroes: GraphEngine, tmp_path: Path) -> None:
    sessions = _sessions(heroes, 1)
    out = tmp_path / "run"
    inspect = json.dumps({"action": "INSPECT_SCHEMA"})
    # turn 1: EXECUTE, EXECUTE, SUBMIT; turn 2: INSPECT, then the process dies
    crashing = CrashingModel([EXECUTE, EXECUTE, SUBMIT, inspect, SUBMIT], crash_at=5)
    with pytest.raises(KeyboardInterrupt):
        _run(heroes, sessions, crashing, out, AGENTIC3)
    model = ReplayChatModel([SUBMIT] * 3, spec="replay:crash")
    summary = _run(heroes, sessions, model, out, AGENTIC3)
    assert summary.completed == 1 and summary.turns == 4
    assert len(model.calls) == 3  # turns 2-4; turn 1 kept, torn turn 2 played again
    first_context = model.calls[0][1].content
    assert f"EXECUTE_CYPHER: {Q}" in first_context and f"SUBMIT_ANSWER: {Q}" in first_context
    records = list(read_jsonl(out / RECORDS_FILE, TurnRecord))
    assert [r.turn for r in records] == [1, 2, 3, 4]
    # B = 4 x 3 = 12: turn 1 spent 3, turns 2-4 one each; the torn INSPECT is not charged
    assert [r.budget_remaining for r in records] == [9, 8, 7, 6]
    steps = [e.step for e in read_log(log_path(out, "heroes-1")) if isinstance(e, StepLogged)]
    assert [(s.turn, s.action) for s in steps].count((2, Action.INSPECT_SCHEMA)) == 0
    aborted = read_log(next((out / "aborted").glob("heroes-1.*.jsonl")))
    assert any(
        isinstance(e, StepLogged) and e.step.action is Action.INSPECT_SCHEMA for e in aborted
    )


# Recorded by the release before action formats existed (text-format runs):
# the prompt v1 digest and the digest of this configuration.
PREVIOUS_PROMPT_DIGEST = "9a29a1e9479f41ba"
PREVIOUS_CONFIG = (
    '{"schema_version":1,"run_id":"run","model":"replay:old","sim_model":null,"settings":'
    '{"protocol":"guided","budget_multiplier":3,"variant":"base","temperature":0.0,'
    '"max_tokens":512,"seed":null},"prompt_version":1,"prompt_digest":"9a29a1e9479f41ba"}'
)
PREVIOUS_CONFIG_DIGEST = "c32ecfca01c48e79"


def test_runs_written_before_action_formats_still_resume(
    heroes: GraphEngine, tmp_path: Path
) -> None:
    assert load_prompts().digest(ActionFormat.TEXT) == PREVIOUS_PROMPT_DIGEST
    assert RunConfig.model_validate_json(PREVIOUS_CONFIG).digest() == PREVIOUS_CONFIG_DIGEST
    sessions = _sessions(heroes, 2)
    out = tmp_path / "run"
    first = ReplayChatModel([SUBMIT] * 8, spec="replay:old")
    _run(heroes, sessions, first, out, GUIDED)
    (out / CONFIG_FILE).write_text(PREVIOUS_CONFIG, encoding="utf-8")
    started = read_log(log_path(out, "heroes-1"))[0]
    assert isinstance(started, SessionStarted)
    assert started.config_digest == PREVIOUS_CONFIG_DIGEST

    again = _run(heroes, sessions, ReplayChatModel([], spec="replay:old"), out, GUIDED)
    assert (again.resumed, again.played, again.turns) == (2, 0, 8)


class OverflowingModel(ReplayChatModel):
    """Replays, but refuses any context of more than ``limit`` messages, as a full window would."""

    def __init__(self, responses: Sequence[str], limit: int) -> None:
        super().__init__(responses, spec="replay:small-window")
        self.limit = limit

    def chat(self, messages: list[ChatMessage], **kwargs: object) -> ChatResponse:
        if len(messages) > self.limit:
            raise ContextLengthError("Requested tokens (4145) exceed context window of 4096")
        return super().chat(messages, **kwargs)  # type: ignore[arg-type]


def test_a_context_overflow_ends_the_turn_not_the_session(
    heroes: GraphEngine, tmp_path: Path
) -> None:
    # each turn's context holds 2 messages plus 2 per step: the 2nd step of a turn overflows
    model = OverflowingModel([EXECUTE, EXECUTE, SUBMIT, SUBMIT, SUBMIT], limit=3)
    result = run_session(
        make_session(heroes),
        model=model,
        engine=heroes,
        settings=AGENTIC3,
        log_path=tmp_path / "s.jsonl",
    )
    assert result.status is SessionStatus.COMPLETED
    ends = [e.end for e in read_log(tmp_path / "s.jsonl") if isinstance(e, TurnFinished)]
    assert ends == [TurnEnd.CONTEXT_OVERFLOW, TurnEnd.CONTEXT_OVERFLOW] + [TurnEnd.SUBMITTED] * 2
    assert [r.predicted_cypher for r in result.records] == [Q] * 4  # fallback: last executed
    # B = 12; the refused calls cost nothing: 1 + 1 + 1 + 1 units
    assert [r.budget_remaining for r in result.records] == [11, 10, 9, 8]


def test_changed_config_is_refused(heroes: GraphEngine, tmp_path: Path) -> None:
    sessions = _sessions(heroes, 1)
    out = tmp_path / "run"
    model = ReplayChatModel([SUBMIT] * 4, spec="replay:a")
    _run(heroes, sessions, model, out, GUIDED)
    with pytest.raises(ConfigError, match=r"changed: settings\.protocol 'guided' -> 'agentic'"):
        _run(heroes, sessions, model, out, AGENTIC3)
    with pytest.raises(ConfigError, match="changed: model 'replay:a' -> 'replay:b'"):
        _run(heroes, sessions, ReplayChatModel([], spec="replay:b"), out, GUIDED)
    with pytest.raises(ConfigError, match="changed: n_ctx None -> 8192"):
        _run(heroes, sessions, model, out, GUIDED, n_ctx=8192)
    edited = sessions[0].model_copy(update={"persona": Persona.STUDENT})
    with pytest.raises(ConfigError, match="changed since"):
        _run(heroes, [edited], model, out, GUIDED)


def test_context_window_is_recorded_only_when_set(heroes: GraphEngine, tmp_path: Path) -> None:
    sessions = _sessions(heroes, 1)
    _run(heroes, sessions, ReplayChatModel([SUBMIT] * 4, spec="replay:a"), tmp_path / "a", GUIDED)
    assert "n_ctx" not in (tmp_path / "a" / CONFIG_FILE).read_text(encoding="utf-8")
    out = tmp_path / "b"
    model = ReplayChatModel([SUBMIT] * 4, spec="replay:a")
    _run(heroes, sessions, model, out, GUIDED, n_ctx=8192)
    stored = RunConfig.model_validate_json((out / CONFIG_FILE).read_text(encoding="utf-8"))
    assert stored.n_ctx == 8192
    again = _run(heroes, sessions, ReplayChatModel([], spec="replay:a"), out, GUIDED, n_ctx=8192)
    assert (again.resumed, again.played) == (1, 0)


def test_endpoint_500s_then_success(heroes: GraphEngine, tmp_path: Path) -> None:
    script = Script([(500, "overloaded"), (503, "busy"), (200, SUBMIT)])
    with serve(script) as url:
        model = OpenAIChatModel("mock", base_url=url, retry=FAST_RETRY)
        summary = _run(heroes, _sessions(heroes, 1), model, tmp_path / "run", GUIDED)
    assert summary.completed == 1 and summary.infra_failures == []
    assert script.calls == 6  # 2 failures + 4 turns
    assert json.loads((tmp_path / "run" / INFRA_FILE).read_text()) == []


def test_endpoint_failing_for_good_is_an_infra_failure(heroes: GraphEngine, tmp_path: Path) -> None:
    sessions = _sessions(heroes, 2)
    out = tmp_path / "run"
    script = Script([(200, SUBMIT)] * 4 + [(500, "down")])
    with serve(script) as url:
        model = OpenAIChatModel("mock", base_url=url, retry=FAST_RETRY)
        summary = _run(heroes, sessions, model, out, GUIDED)
    assert summary.completed == 1
    assert [f.session_id for f in summary.infra_failures] == ["heroes-2"]
    assert "HTTP 500" in summary.infra_failures[0].error
    records = list(read_jsonl(out / RECORDS_FILE, TurnRecord))
    assert {r.session_id for r in records} == {"heroes-1"}
    listed = json.loads((out / INFRA_FILE).read_text())
    assert [f["session_id"] for f in listed] == ["heroes-2"]
    last = read_log(log_path(out, "heroes-2"))[-1]
    assert isinstance(last, SessionFinished) and last.status is SessionStatus.INFRA_FAILURE


def test_an_infra_failure_resumes_after_its_last_finished_turn(
    heroes: GraphEngine, tmp_path: Path
) -> None:
    sessions = _sessions(heroes, 1)
    out = tmp_path / "run"
    script = Script([(200, SUBMIT)] * 2 + [(500, "down")])
    with serve(script) as url:
        model = OpenAIChatModel("mock", base_url=url, retry=FAST_RETRY)
        failed = _run(heroes, sessions, model, out, GUIDED)
    assert failed.completed == 0 and len(failed.infra_failures) == 1
    later = ReplayChatModel([SUBMIT] * 2, spec="openai:mock")
    summary = _run(heroes, sessions, later, out, GUIDED)
    assert summary.completed == 1 and summary.turns_kept == 2 and summary.infra_failures == []
    assert len(later.calls) == 2  # turns 3 and 4 only
    records = list(read_jsonl(out / RECORDS_FILE, TurnRecord))
    assert [r.turn for r in records] == [1, 2, 3, 4]
    assert json.loads((out / INFRA_FILE).read_text()) == []


def test_select_sessions_by_id_or_world(heroes: GraphEngine) -> None:
    sessions = _sessions(heroes, 3)
    assert [s.session_id for s in select_sessions(sessions, "heroes-2,heroes-3")] == [
        "heroes-2",
        "heroes-3",
    ]
    assert len(select_sessions(sessions, WORLD)) == 3
    assert len(select_sessions(sessions, None)) == 3
    with pytest.raises(ConfigError, match="no session id or world"):
        select_sessions(sessions, "ocean_*")


def test_a_stratified_subset_balances_worlds_personas_and_phenomena(heroes: GraphEngine) -> None:
    (base,) = _sessions(heroes, 1)
    kinds = [Phenomenon.EXPAND, Phenomenon.COUNT, Phenomenon.FIRST, Phenomenon.PIVOT]
    pool = [
        base.model_copy(
            update={
                "session_id": f"{world}-{i}",
                "world": world,
                # the first sessions of a world share a persona, as a built benchmark's do
                "persona": list(Persona)[i // 4],
                "turns": [
                    turn.model_copy(
                        update={"phenomena": [kinds[i % 4]] if turn.turn_index > 1 else []}
                    )
                    for turn in base.turns
                ],
            }
        )
        for world in ("alpha", "beta", "gamma")
        for i in range(8)
    ]
    chosen = select_sessions(pool, "stratified:2")
    assert [s.session_id for s in chosen] == [s.session_id for s in pool if s in chosen]
    assert Counter(s.world for s in chosen) == {"alpha": 2, "beta": 2, "gamma": 2}
    # 6 sessions over the 2 personas on offer: 3 each, where the first 2 of each world share one
    first, second, *_ = list(Persona)
    assert Counter(s.persona for s in chosen) == {first: 3, second: 3}
    assert {p for s in chosen for t in s.turns for p in t.phenomena} == set(kinds)
    assert select_sessions(pool, "stratified:2") == chosen
    assert [s.world for s in select_sessions(pool, "beta,stratified:1")] == ["beta"]
    assert len(select_sessions(pool, "stratified:100")) == len(pool)
    with pytest.raises(ConfigError, match="more than one stratified"):
        select_sessions(pool, "stratified:1,stratified:2")
    with pytest.raises(ConfigError, match="at least 1 session"):
        select_sessions(pool, "stratified:0")


def test_variant_runs_record_their_variant_also_when_resumed_from_old_logs(
    heroes: GraphEngine, tmp_path: Path
) -> None:
    sessions = _sessions(heroes, 2)
    out = tmp_path / "run"
    settings = ProtocolSettings(
        protocol=ProtocolName.AGENTIC, budget_multiplier=3, variant=Variant.PERSISTENT_SCHEMA
    )
    summary = _run(heroes, sessions, ReplayChatModel([SUBMIT] * 8), out, settings)
    assert summary.turns == 8
    records = list(read_jsonl(out / RECORDS_FILE, TurnRecord))
    assert {r.variant for r in records} == {"persistent_schema"}
    # A log written before records had a variant: the field is simply absent.
    path = log_path(out, "heroes-1")
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if "record" in event:
            del event["record"]["variant"]
        lines.append(json.dumps(event))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    again = _run(heroes, sessions, ReplayChatModel([]), out, settings)
    assert again.resumed == 2
    records = list(read_jsonl(out / RECORDS_FILE, TurnRecord))
    assert {r.variant for r in records} == {"persistent_schema"}
