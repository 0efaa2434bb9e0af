"""The QER runner on the real Fraud graph with a replay model: records, seeds, resume, refusal,
and the batch core's failure policy (a model error ends its episode, not the run)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cypherturn.cli import app
from cypherturn.cli._app import console
from cypherturn.cli._exit import ExitCode
from cypherturn.errors import ConfigError, ModelTransientError
from cypherturn.experiments import (
    QER_CONFIG_FILE,
    TRANSCRIPTS_FILE,
    QerRunConfig,
    QerTranscript,
    QuestionSet,
    episode_seed,
    plan_tasks,
    run_qer_experiment,
)
from cypherturn.graph import GraphEngine
from cypherturn.metrics import qer_curves
from cypherturn.models import ChatMessage, ChatResponse, ReplayChatModel
from cypherturn.records import ATTEMPTS_FILE, INFRA_FILE, QerEpisode, QerFailure


def _episodes(run_dir: Path) -> list[QerEpisode]:
    lines = (run_dir / ATTEMPTS_FILE).read_text().splitlines()
    return [QerEpisode.model_validate_json(line) for line in lines if line.strip()]


def _transcripts(run_dir: Path) -> list[QerTranscript]:
    lines = (run_dir / TRANSCRIPTS_FILE).read_text().splitlines()
    return [QerTranscript.model_validate_json(line) for line in lines if line.strip()]


def _key(e: QerEpisode | QerFailure) -> tuple[str, str, str, int, str]:
    return (e.strategy, e.dataset, e.tier, e.run_index, e.question_id)


class FailingModel(ReplayChatModel):
    """Replays responses; the calls numbered in ``fail`` (1-based) raise their error instead.

    A failing call consumes no response, as an endpoint that never answered.
    """

    def __init__(self, responses: list[str], fail: dict[int, BaseException]) -> None:
        super().__init__(responses)
        self.fail = fail
        self.attempted = 0

    def chat(self, messages: list[ChatMessage], **kwargs: object) -> ChatResponse:
        self.attempted += 1
        if self.attempted in self.fail:
            raise self.fail[self.attempted]
        return super().chat(messages, **kwargs)  # type: ignore[arg-type]


def test_plan_is_run_major_and_pairs_is_with_ras(
    make_config: Callable[..., QerRunConfig], fraud_set: QuestionSet
) -> None:
    tasks = plan_tasks(make_config(tiers=["easy", "hard"], runs=3), {"fraud": fraud_set})
    assert len(tasks) == 3 * 2 * 1 * 2
    assert [t.run_index for t in tasks] == sorted(t.run_index for t in tasks)
    # The paper's question comes first in each tier.
    assert {t.question.id for t in tasks} == {"fraud_easy", "fraud_hard"}
    by_pair: dict[tuple[str, int], set[int]] = {}
    for t in tasks:
        by_pair.setdefault((t.question.id, t.run_index), set()).add(t.seed)
    assert all(len(seeds) == 1 for seeds in by_pair.values())  # IS and RAS share the seed
    assert len({next(iter(s)) for s in by_pair.values()}) == len(by_pair)  # runs differ
    assert tasks[0].seed == episode_seed(0, "fraud", "fraud_easy", 0)


def test_records_every_attempt_with_known_qer(tiny_run: Path) -> None:
    episodes = _episodes(tiny_run)
    assert len(episodes) == 4
    assert all([a.outcome for a in e.attempts] == ["error", "ok"] for e in episodes)
    assert episodes[0].attempts[0].error_class is not None
    assert episodes[0].attempts[0].error_class.value == "syntax"
    curves = {c.strategy: c for c in qer_curves(episodes)}
    for curve in curves.values():
        assert curve.runs == 2
        assert curve.mean == [1.0, 0.0]
        assert curve.std == [0.0, 0.0]
    stored = QerRunConfig.model_validate_json((tiny_run / QER_CONFIG_FILE).read_text())
    assert stored.budget == 2


def test_is_and_ras_share_attempt_one_and_ras_grows_its_context(
    make_config: Callable[..., QerRunConfig],
    fraud_engine: GraphEngine,
    fraud_set: QuestionSet,
    run_dir: Path,
    replies: Callable[[int], list[str]],
) -> None:
    model = ReplayChatModel(replies(4))
    run_qer_experiment(make_config(), model, {"fraud": fraud_engine}, {"fraud": fraud_set}, run_dir)
    transcripts = _transcripts(run_dir)
    assert [t.result.strategy for t in transcripts] == ["is", "ras", "is", "ras"]
    is_run, ras_run = transcripts[0], transcripts[1]
    assert is_run.seed == ras_run.seed
    assert is_run.result.attempts[0].seed == ras_run.result.attempts[0].seed == is_run.seed
    assert is_run.result.attempts[1].seed == is_run.seed + 1
    # Calls 1 (IS attempt 1) and 3 (RAS attempt 1) saw the same context and decoding settings.
    assert model.calls[0] == model.calls[2]
    assert model.settings[0] == model.settings[2]
    # IS resamples from C0; RAS appended the failed query and the engine's message.
    assert is_run.result.context_messages[0] == is_run.result.context_messages[1]
    assert ras_run.result.context_messages[1] == ras_run.result.context_messages[0] + 2
    assert "MATCH (c:Client RETURN c.name" in model.calls[3][-2].content
    assert transcripts[2].seed != is_run.seed


def test_resume_after_a_crash_loses_and_duplicates_nothing(
    make_config: Callable[..., QerRunConfig],
    fraud_engine: GraphEngine,
    fraud_set: QuestionSet,
    run_dir: Path,
    replies: Callable[[int], list[str]],
) -> None:
    config = make_config()
    engines, sets = {"fraud": fraud_engine}, {"fraud": fraud_set}
    # The run is killed (Ctrl-C) on the model's 6th call: episodes 1-2 finish, 3 dies mid-way.
    crashing = FailingModel([*replies(2), BAD_REPLY], fail={6: KeyboardInterrupt()})
    with pytest.raises(KeyboardInterrupt):
        run_qer_experiment(config, crashing, engines, sets, run_dir)
    first = (run_dir / ATTEMPTS_FILE).read_text().splitlines()
    assert len(first) == 2
    assert len(_transcripts(run_dir)) == 2
    # A kill can also leave half a line behind.
    with (run_dir / ATTEMPTS_FILE).open("a") as handle:
        handle.write('{"schema_version": 1, "strat')
    started: list[tuple[int, int]] = []
    summary = run_qer_experiment(
        config,
        ReplayChatModel(replies(2)),
        engines,
        sets,
        run_dir,
        on_start=lambda planned, done: started.append((planned, done)),
    )
    assert started == [(4, 2)]
    assert (summary.planned, summary.skipped, summary.ran) == (4, 2, 2)
    lines = (run_dir / ATTEMPTS_FILE).read_text().splitlines()
    assert lines[:2] == first
    keys = [_key(e) for e in _episodes(run_dir)]
    assert len(keys) == len(set(keys)) == 4
    assert {k[3] for k in keys} == {0, 1}
    assert len(_transcripts(run_dir)) == 4
    # Nothing left to do: a third call plays nothing and needs no model reply.
    again = run_qer_experiment(config, ReplayChatModel([]), engines, sets, run_dir)
    assert (again.ran, again.skipped) == (0, 4)
    assert json.loads((run_dir / INFRA_FILE).read_text()) == []


def test_a_model_error_ends_its_episode_not_the_run(
    make_config: Callable[..., QerRunConfig],
    fraud_engine: GraphEngine,
    fraud_set: QuestionSet,
    run_dir: Path,
    replies: Callable[[int], list[str]],
) -> None:
    config = make_config()
    engines, sets = {"fraud": fraud_engine}, {"fraud": fraud_set}
    # Episodes in order: IS run 0, RAS run 0, IS run 1, RAS run 1 (2 calls each). The model
    # fails for good on call 3 (RAS run 0, attempt 1), as after the model layer's retries.
    model = FailingModel(replies(3), fail={3: ModelTransientError("mock: HTTP 503, 6 calls")})
    seen: list[tuple[str, int]] = []
    summary = run_qer_experiment(
        config,
        model,
        engines,
        sets,
        run_dir,
        on_episode=lambda e: seen.append((e.strategy, e.run_index)),
    )
    assert (summary.planned, summary.ran, summary.skipped) == (4, 3, 0)
    # The run went on after the failure: the later episodes were played and written.
    assert seen == [("is", 0), ("is", 1), ("ras", 1)]
    lost = ("ras", "fraud", "easy", 0, "fraud_easy")
    assert [_key(f) for f in summary.infra_failures] == [lost]
    assert "HTTP 503" in summary.infra_failures[0].error
    assert summary.infra_failures[0].model == config.model
    listed = [QerFailure.model_validate(f) for f in json.loads((run_dir / INFRA_FILE).read_text())]
    assert listed == summary.infra_failures
    # Unscored: the failed episode is in neither file, so no QER figure counts it.
    assert lost not in {_key(e) for e in _episodes(run_dir)}
    assert len(_episodes(run_dir)) == len(_transcripts(run_dir)) == 3
    assert all([a.outcome for a in e.attempts] == ["error", "ok"] for e in _episodes(run_dir))

    # A rerun plays only the lost episode; nothing is duplicated.
    later = ReplayChatModel(replies(1))
    again = run_qer_experiment(config, later, engines, sets, run_dir)
    assert (again.ran, again.skipped, again.infra_failures) == (1, 3, [])
    assert len(later.calls) == 2
    keys = [_key(e) for e in _episodes(run_dir)]
    assert len(keys) == len(set(keys)) == 4 and lost in keys
    assert json.loads((run_dir / INFRA_FILE).read_text()) == []


def test_an_exhausted_replay_is_recorded_for_every_episode_left(
    make_config: Callable[..., QerRunConfig],
    fraud_engine: GraphEngine,
    fraud_set: QuestionSet,
    run_dir: Path,
    replies: Callable[[int], list[str]],
) -> None:
    # A malformed or missing answer (ModelResponseError; here the replay has no response
    # left) is an infrastructure failure too: episodes 3 and 4 are listed, 1 and 2 kept.
    summary = run_qer_experiment(
        make_config(),
        ReplayChatModel(replies(2)),
        {"fraud": fraud_engine},
        {"fraud": fraud_set},
        run_dir,
    )
    assert summary.ran == 2 and len(_episodes(run_dir)) == 2
    assert [(f.strategy, f.run_index) for f in summary.infra_failures] == [("is", 1), ("ras", 1)]
    assert all("replay exhausted" in f.error for f in summary.infra_failures)


BAD_REPLY = "```cypher\nMATCH (c:Client RETURN c.name\n```"


def test_a_changed_configuration_is_refused(
    make_config: Callable[..., QerRunConfig],
    fraud_engine: GraphEngine,
    fraud_set: QuestionSet,
    tiny_run: Path,
) -> None:
    engines, sets = {"fraud": fraud_engine}, {"fraud": fraud_set}
    with pytest.raises(ConfigError, match=r"runs 2 -> 3"):
        run_qer_experiment(make_config(runs=3), ReplayChatModel([]), engines, sets, tiny_run)
    with pytest.raises(ConfigError, match="temperature"):
        run_qer_experiment(
            make_config(temperature=0.2), ReplayChatModel([]), engines, sets, tiny_run
        )
    edited = fraud_set.model_copy(
        update={
            "questions": [q.model_copy(update={"question": "Edited?"}) for q in fraud_set.questions]
        }
    )
    with pytest.raises(ConfigError, match="question set"):
        run_qer_experiment(make_config(), ReplayChatModel([]), engines, {"fraud": edited}, tiny_run)
    assert len(_episodes(tiny_run)) == 4


def test_the_context_window_is_recorded_only_when_set_and_checked_on_resume(
    make_config: Callable[..., QerRunConfig],
    fraud_engine: GraphEngine,
    fraud_set: QuestionSet,
    tiny_run: Path,
    tmp_path: Path,
    replies: Callable[[int], list[str]],
) -> None:
    engines, sets = {"fraud": fraud_engine}, {"fraud": fraud_set}
    # a run recorded without a window (as every run before --n-ctx existed) has no key
    assert "n_ctx" not in json.loads((tiny_run / QER_CONFIG_FILE).read_text(encoding="utf-8"))
    with pytest.raises(ConfigError, match=r"n_ctx None -> 8192"):
        run_qer_experiment(make_config(n_ctx=8192), ReplayChatModel([]), engines, sets, tiny_run)
    wide = tmp_path / "wide"
    run_qer_experiment(make_config(n_ctx=8192), ReplayChatModel(replies(4)), engines, sets, wide)
    stored = QerRunConfig.model_validate_json((wide / QER_CONFIG_FILE).read_text(encoding="utf-8"))
    assert stored.n_ctx == 8192
    with pytest.raises(ConfigError, match=r"n_ctx 8192 -> None"):
        run_qer_experiment(make_config(), ReplayChatModel([]), engines, sets, wide)
    resumed = run_qer_experiment(make_config(n_ctx=8192), ReplayChatModel([]), engines, sets, wide)
    assert resumed.skipped == 4 and resumed.ran == 0


def test_concurrent_workers_write_whole_lines(
    make_config: Callable[..., QerRunConfig],
    fraud_engine: GraphEngine,
    fraud_set: QuestionSet,
    run_dir: Path,
) -> None:
    good = "```cypher\nMATCH (c:Client) RETURN c.name LIMIT 3\n```"
    config = make_config(runs=6)
    run_qer_experiment(
        config,
        ReplayChatModel([good] * 24),
        {"fraud": fraud_engine},
        {"fraud": fraud_set},
        run_dir,
        concurrency=3,
    )
    episodes = _episodes(run_dir)
    assert len({_key(e) for e in episodes}) == len(episodes) == 12
    assert all(e.attempts[0].ok for e in episodes)
    assert all(json.loads(line) for line in (run_dir / TRANSCRIPTS_FILE).read_text().splitlines())


def test_bad_settings_are_config_errors(
    make_config: Callable[..., QerRunConfig],
    fraud_engine: GraphEngine,
    fraud_set: QuestionSet,
    run_dir: Path,
) -> None:
    with pytest.raises(ConfigError, match="tier"):
        plan_tasks(make_config(tiers=["trivial"]), {"fraud": fraud_set})
    with pytest.raises(ConfigError, match="strategy"):
        plan_tasks(make_config(strategies=["beam"]), {"fraud": fraud_set})
    with pytest.raises(ConfigError, match="not the configuration's"):
        run_qer_experiment(
            make_config(model="openai:other"),
            ReplayChatModel([]),
            {"fraud": fraud_engine},
            {"fraud": fraud_set},
            run_dir,
        )
    with pytest.raises(ConfigError, match="no engine"):
        run_qer_experiment(make_config(), ReplayChatModel([]), {}, {"fraud": fraud_set}, run_dir)
    with pytest.raises(ConfigError, match="concurrency"):
        run_qer_experiment(
            make_config(),
            ReplayChatModel([]),
            {"fraud": fraud_engine},
            {"fraud": fraud_set},
            run_dir,
            concurrency=0,
        )


def test_qer_run_command_lists_lost_episodes_and_exits_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console, "_width", 250)
    replies = tmp_path / "replies.json"
    any_case = "```cypher\nMATCH (c:Case) RETURN c.primaryid AS primaryid LIMIT 1\n```"
    # one executing reply for two episodes (IS, budget 2, runs 0 and 1): run 1 finds none left
    replies.write_text(json.dumps([any_case]), encoding="utf-8")
    out = tmp_path / "run"
    args = ["qer", "run", "--datasets", "healthcare", "--tiers", "easy", "-q", "1", "-n", "2"]
    args += ["--runs", "2", "--strategies", "is", "--model", f"replay:{replies}", "--out", str(out)]
    lost = CliRunner().invoke(app, args)
    assert lost.exit_code == ExitCode.SESSIONS_LOST, lost.output
    assert "1 episodes lost to infrastructure failures" in lost.output
    assert [f["run_index"] for f in json.loads((out / INFRA_FILE).read_text())] == [1]
    assert len(_episodes(out)) == 1
    resumed = CliRunner().invoke(app, args)
    assert resumed.exit_code == 0, resumed.output
    assert "1 episodes played, 1 already done" in resumed.output
    assert [e.run_index for e in _episodes(out)] == [0, 1]
