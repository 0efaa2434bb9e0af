"""The ask benchmark's runner: single questions with gold Cypher, answered and scored, resumably.

:func:`run_ask_benchmark` asks every usable question of a set (its gold kept or
repaired by :func:`~cypherturn.experiments.check_golds`) of every (model,
strategy) pair, scores the final result against the gold's answer with strict
and relaxed EX (:func:`cypherturn.metrics.ex_scores`; rows compared in order
when the gold orders them), and appends one :class:`~cypherturn.records.AskAnswer`
per question to ``answers.jsonl`` as soon as it is done. A rerun of the same
command skips the answers already there; a run directory is bound to its
:class:`AskRunConfig` (the set's digest and split, budget, temperature, seed,
prompt, limits) and a changed setting is refused by name. Model and engine
failures end only their question and are listed apart, never scored
(:func:`cypherturn.runner.run_batch`).

The sampling seed of a question is :func:`~cypherturn.experiments.episode_seed`
of the run's seed, the question's graph and id: the same for every strategy, so
strategies are compared on the same draws (RAS §4.6).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cypherturn.cypher import output_order
from cypherturn.errors import (
    ConfigError,
    CypherTurnError,
    DatasetError,
    EngineConnectionError,
    ModelError,
    RunInterrupted,
)
from cypherturn.experiments._askitems import AskItem, AskSet
from cypherturn.experiments._runner import episode_seed
from cypherturn.graph import GraphEngine, QueryResult
from cypherturn.memory import Recall, normalize_question
from cypherturn.metrics import ex_scores
from cypherturn.models import ChatModel
from cypherturn.records import (
    ANSWERS_FILE,
    ASK_CONFIG_FILE,
    GOLDS_FILE,
    AskAnswer,
    DataSplit,
    GoldCheck,
    Harness,
    JsonlAppender,
    intact_lines,
    validation_problem,
    write_jsonl,
)
from cypherturn.runner import open_run_dir, run_batch
from cypherturn.strategies import (
    FewShotExample,
    GroundedStrategy,
    GroundingParts,
    StrategyConfig,
    get_strategy,
    recalled_examples,
    schema_context,
)

__all__ = [
    "AskFailure",
    "AskRunConfig",
    "AskRunSummary",
    "harness_of",
    "read_answers",
    "run_ask_benchmark",
]

PAPER_STRATEGIES = frozenset({"single", "is", "ras"})
"""The RAS paper's strategies (§3.4); with its prompt (``v1``) they are paper-comparable."""
PAPER_PROMPT = "v1"
"""The RAS paper's zero-shot GraphCypherQAChain prompt."""


def harness_of(strategy: str, prompt: str) -> Harness:
    """Paper-comparable for the paper's strategies under its prompt; system otherwise."""
    if strategy in PAPER_STRATEGIES and prompt == PAPER_PROMPT:
        return Harness.PAPER
    return Harness.SYSTEM


class AskRunConfig(BaseModel):
    """The settings an ask benchmark run directory is bound to (``ask.json``).

    Models and strategies may vary within one directory (each answer names its
    own); everything here may not.

    Attributes:
        schema_version: layout version.
        ask_set: the set's name.
        digest: the set's digest (:attr:`AskSet.digest`): its questions and golds.
        split: the set's data split.
        budget: T, the most attempts per question.
        temperature: sampling temperature.
        seed: the run's base sampling seed.
        prompt: the prompt version (``v1``, ``v2``).
        max_tokens: most tokens generated per attempt.
        timeout_s: limit on a generated query, seconds.
        gold_timeout_s: limit on a gold when the set's labels were made or checked,
            seconds (``None`` in a directory made before the two limits were
            separate: golds then had ``timeout_s``).
        row_cap: rows kept per query.
        n_ctx: a local model's context window (``None``: the model's default).
        memory: the set whose usable golds are the memory of verified questions
            (``None``: no memory); each question is shown the ``recall`` pairs
            nearest it, never its own (leave-one-out: a pair whose question is
            the same, normalized, is left out).
        memory_digest: that set's digest.
        recall: pairs shown per question.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    ask_set: str
    digest: str
    split: DataSplit
    budget: int = Field(ge=1)
    temperature: float = Field(ge=0)
    seed: int
    prompt: str
    max_tokens: int = Field(ge=1)
    timeout_s: float = Field(gt=0)
    gold_timeout_s: float | None = Field(default=None, gt=0, exclude_if=lambda v: v is None)
    row_cap: int = Field(ge=1)
    n_ctx: int | None = None
    memory: str | None = Field(default=None, exclude_if=lambda v: v is None)
    memory_digest: str | None = Field(default=None, exclude_if=lambda v: v is None)
    recall: int = Field(default=0, ge=0, exclude_if=lambda v: v == 0)

    def strategy_config(self, seed: int) -> StrategyConfig:
        """The strategy settings of a question whose sampling seed is ``seed``."""
        return StrategyConfig(
            budget=self.budget,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=seed,
            timeout_s=self.timeout_s,
            row_cap=self.row_cap,
            prompt_version=self.prompt,
        )


class AskFailure(BaseModel):
    """A question lost to an infrastructure failure (unscored; redone by the next run)."""

    model: str
    strategy: str
    question_id: str
    error: str


@dataclass
class AskRunSummary:
    """What one invocation of :func:`run_ask_benchmark` did.

    Attributes:
        planned: answers the grid asks for (models x strategies x usable questions).
        skipped: answers already in the run directory.
        ran: answers written by this invocation.
        seconds: wall time.
        failures: questions lost to model or engine failures (unscored).
    """

    planned: int
    skipped: int
    ran: int
    seconds: float
    failures: list[AskFailure] = field(default_factory=list)


def read_answers(out_dir: Path) -> list[AskAnswer]:
    """The answers already in a run directory (a torn last line is dropped and redone).

    Raises:
        DatasetError: a line other than a torn last one is not an answer.
    """
    path = out_dir / ANSWERS_FILE
    answers: list[AskAnswer] = []
    for number, line in enumerate(intact_lines(path), start=1):
        try:
            answers.append(AskAnswer.model_validate_json(line))
        except ValidationError as e:
            raise DatasetError(f"{path}:{number}: {validation_problem(e, 'ask answer')}") from e
    return answers


@dataclass(frozen=True)
class _Task:
    model: ChatModel
    strategy: str
    item: AskItem
    check: GoldCheck
    gold: QueryResult

    def key(self, config: AskRunConfig) -> tuple[str, str, int, str, str]:
        """The key of this task's answer under ``config`` (:attr:`AskAnswer.key`)."""
        return (self.model.spec, self.strategy, config.budget, config.prompt, self.item.id)

    def failure(self, error: ModelError | EngineConnectionError) -> AskFailure:
        """The record of this question lost to an infrastructure failure."""
        return AskFailure(
            model=self.model.spec,
            strategy=self.strategy,
            question_id=self.item.id,
            error=str(error),
        )


def _play(
    task: _Task,
    *,
    config: AskRunConfig,
    ask_set: AskSet,
    engines: Mapping[str, GraphEngine],
    contexts: dict[tuple[str, str], tuple[str, list[FewShotExample]]],
    memory: Recall | None,
) -> AskAnswer:
    """Ask and score one task; the schema context is built once per (graph, strategy) in ``contexts``."""
    item = task.item
    engine = engines[item.graph]
    key = (item.graph, task.strategy)
    if key not in contexts:
        contexts[key] = schema_context(get_strategy(task.strategy), engine)
    schema_text, examples = contexts[key]
    own = normalize_question(item.question)
    recalled = recalled_examples(
        memory, item.question, config.recall, graph=item.graph, exclude=lambda p: p.key == own
    )
    return _score(task, config, ask_set, engine, (schema_text, [*examples, *recalled]))


def _score(
    task: _Task,
    config: AskRunConfig,
    ask_set: AskSet,
    engine: GraphEngine,
    context: tuple[str, list[FewShotExample]],
) -> AskAnswer:
    item, check = task.item, task.check
    seed = episode_seed(config.seed, item.graph, item.id, 0)
    common: dict[str, Any] = {
        "ask_set": ask_set.name,
        "split": ask_set.split,
        "model": task.model.spec,
        "strategy": task.strategy,
        "budget": config.budget,
        "prompt": config.prompt,
        "harness": harness_of(task.strategy, config.prompt),
        "question_id": item.id,
        "graph": item.graph,
        "category": item.category,
        "phenomena": list(item.phenomena),
        "gold_status": check.status,
    }
    started = time.perf_counter()
    schema_text, examples = context
    try:
        result = get_strategy(task.strategy).run(
            task.model,
            engine,
            item.question,
            schema_text,
            config.strategy_config(seed),
            examples,
        )
    except (ModelError, EngineConnectionError, RunInterrupted):
        # an interrupted question is not an answer: it is asked again on resume
        raise
    except CypherTurnError as e:
        return AskAnswer(
            **common,
            executable=False,
            ex=0,
            ex_relaxed=0,
            attempts=0,
            tokens=0,
            seconds=time.perf_counter() - started,
            error=f"{type(e).__name__}: {e}",
        )
    seconds = time.perf_counter() - started
    predicted = result.final_result if result.success else None
    ex, relaxed = (
        ex_scores(task.gold, predicted, output_order(check.gold))
        if predicted is not None
        else (0, 0)
    )
    return AskAnswer(
        **common,
        executable=predicted is not None,
        ex=ex,
        ex_relaxed=relaxed,
        attempts=result.attempts_used,
        tokens=result.total_tokens,
        seconds=seconds,
        final_query=result.final_query,
        result=result.model_dump(mode="json"),
    )


def _check_inputs(
    config: AskRunConfig,
    ask_set: AskSet,
    golds: Sequence[tuple[GoldCheck, QueryResult | None]],
    strategies: Sequence[str],
    engines: Mapping[str, GraphEngine],
    memory: Recall | None,
) -> None:
    """Refuse a run whose inputs do not fit together (see :func:`run_ask_benchmark`).

    Raises:
        ConfigError: a set that is not the configuration's, a gold check count
            that is not the set's, an unknown strategy, a graph without an engine, or a
            memory given without the configuration naming one (or the reverse).
    """
    if ask_set.digest != config.digest or ask_set.split is not config.split:
        raise ConfigError("the question set is not the one the configuration names")
    if (memory is None) != (config.memory is None):
        raise ConfigError("a memory must be given exactly when the configuration names one")
    if len(golds) != len(ask_set.items):
        raise ConfigError(f"{len(golds)} gold checks for {len(ask_set.items)} questions")
    for strategy in strategies:
        get_strategy(strategy)
    missing = sorted({i.graph for i in ask_set.items} - set(engines))
    if missing:
        raise ConfigError(f"no engine for graph(s): {', '.join(missing)}")


def _check_parts(done: Sequence[AskAnswer], strategies: Sequence[str]) -> None:
    """A done ``ras+`` answer must have run with the parts its strategy name means now.

    The name ``ras+`` changed meaning once (2026-12-06: ``vote`` off by default); a
    directory resumed across such a change would mix two systems under one name.

    Raises:
        ConfigError: a done answer's recorded parts differ (the message names them).
    """
    wanted = {
        name: strategy.parts
        for name in strategies
        if isinstance(strategy := get_strategy(name), GroundedStrategy)
    }
    for answer in done:
        parts = wanted.get(answer.strategy)
        recorded = (answer.result or {}).get("grounding")
        if parts is None or recorded is None:
            continue
        before = GroundingParts.model_validate(recorded)
        if before != parts:
            changed = sorted(
                f"{'+' if getattr(before, p) else '-'}{p}"
                for p in type(parts).model_fields
                if getattr(before, p) != getattr(parts, p)
            )
            raise ConfigError(
                f"the {answer.strategy!r} answers in this run directory ran with other parts "
                f"({', '.join(changed)}) than the name means now; ask again in a new "
                "directory, or resume with the version that made them"
            )


def run_ask_benchmark(
    config: AskRunConfig,
    ask_set: AskSet,
    golds: Sequence[tuple[GoldCheck, QueryResult | None]],
    models: Sequence[ChatModel],
    strategies: Sequence[str],
    engines: Mapping[str, GraphEngine],
    out_dir: Path,
    *,
    on_start: Callable[[int, int], None] | None = None,
    on_answer: Callable[[AskAnswer], None] | None = None,
    memory: Recall | None = None,
) -> AskRunSummary:
    """Ask every usable question of every (model, strategy), appending each answer as it finishes.

    Args:
        config: the run's settings (its digest and split must be ``ask_set``'s).
        ask_set: the questions.
        golds: one ``(check, answer)`` per question of ``ask_set``, in order
            (:func:`~cypherturn.experiments.check_golds`).
        models: loaded chat models; each answer records its ``spec``.
        strategies: strategy names (``single``, ``is``, ``ras``, ``ras+``, ``ras+:<parts>``).
        engines: graph name -> engine on that loaded graph.
        out_dir: the run directory (created when missing).
        on_start: called once with (answers planned, answers already done).
        on_answer: called after each answer is written.
        memory: the remembered pairs (``config.memory``); each question is shown
            the ``config.recall`` nearest of its graph, its own left out.

    Returns:
        The :class:`AskRunSummary`.

    Raises:
        ConfigError: a changed configuration in ``out_dir``, a set that is not the
            configuration's, an unknown strategy, a graph without an engine, or done
            answers whose ``ras+`` parts are not what their strategy name means now.
        DatasetError: a malformed ``ask.json`` or ``answers.jsonl``.
    """
    _check_inputs(config, ask_set, golds, strategies, engines, memory)
    started = time.perf_counter()
    open_run_dir(
        out_dir, ASK_CONFIG_FILE, config, what="ask run configuration", started_by=(ANSWERS_FILE,)
    )
    write_jsonl(out_dir / GOLDS_FILE, [check for check, _ in golds])
    answered = read_answers(out_dir)
    _check_parts(answered, strategies)
    done = {a.key for a in answered}
    tasks = [
        _Task(model, strategy, item, check, gold)
        for model in models
        for strategy in strategies
        for item, (check, gold) in zip(ask_set.items, golds, strict=True)
        if gold is not None
    ]
    todo = [t for t in tasks if t.key(config) not in done]
    if on_start is not None:
        on_start(len(tasks), len(tasks) - len(todo))
    play = functools.partial(
        _play, config=config, ask_set=ask_set, engines=engines, contexts={}, memory=memory
    )

    ran = 0
    failures: list[AskFailure] = []
    with JsonlAppender(out_dir / ANSWERS_FILE) as answers:

        def write(task: _Task, answer: AskAnswer) -> None:
            nonlocal ran
            answers.append(answer)
            ran += 1
            if on_answer is not None:
                on_answer(answer)

        def failed(task: _Task, error: ModelError | EngineConnectionError) -> None:
            failures.append(task.failure(error))

        run_batch(todo, play, on_done=write, on_failed=failed, name="ask")
    return AskRunSummary(
        planned=len(tasks),
        skipped=len(tasks) - len(todo),
        ran=ran,
        seconds=time.perf_counter() - started,
        failures=failures,
    )
