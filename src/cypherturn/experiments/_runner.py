"""The resumable QER experiment runner (RAS paper §4.6-§4.7).

For every configuration (dataset x model x tier x strategy) the runner plays
R independent runs of the strategy with budget n on each question, and appends
one :class:`~cypherturn.records.QerEpisode` per (configuration, question, run)
to ``attempts.jsonl`` as soon as it finishes, so ``cypherturn report RUN_DIR``
renders Tables 3-4 and Figure 3 from the directory. The full strategy results
(raw completions, engine messages, RAS context growth) go to ``transcripts.jsonl``.

Fair comparison (RAS §4.6, §5.1): IS and RAS share one :class:`StrategyConfig`
(prompt version, temperature, max tokens, timeout, row cap), and run r of
question q uses the same base seed under both strategies
(:func:`episode_seed`, which ignores the strategy), so attempt 1 sees the same
prompt with the same seed and Q@1 can be averaged over both. Attempt t uses
``seed + t - 1`` (:meth:`StrategyConfig.attempt_seed`). A deterministic backend
then produces the same first query under both; llama.cpp can still differ
slightly between the two when its prompt-cache reuse changes the evaluation
batches, so Q@1 is, as in the paper, the average of IS@1 and RAS@1.

The runner is built on the benchmark runner's batch core
(:mod:`cypherturn.runner._core`); the run-directory layout is described in
:mod:`cypherturn.records`.

Resume: the run directory holds ``qer.json`` (the configuration). Rerunning with
the same configuration skips every episode already in ``attempts.jsonl``; a
different configuration is refused. A line cut short by a kill is dropped.

Failures: an episode whose model or engine fails for good (after the model
layer's retries; :data:`cypherturn.runner.INFRA_ERRORS`) is not written to
``attempts.jsonl``, so it counts in no QER figure; it is listed in
``infra_failures.json`` and :attr:`QerRunSummary.infra_failures`, the run goes on
with the next episode, and a rerun with the same configuration plays it.

Concurrency: ``concurrency`` worker threads share the model and the engines
(the FalkorDB client and the Neo4j driver are thread-safe). The in-process GGUF
model serialises its own calls with a lock, so with ``gguf:``/``default`` more
than one worker only overlaps query execution with generation; the intended use
of concurrency is an ``openai:`` endpoint. Records are written by the calling
thread only, so files never interleave.
"""

from __future__ import annotations

import hashlib
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from cypherturn.errors import ConfigError, DatasetError, EngineConnectionError, ModelError
from cypherturn.experiments._questions import TIERS, Question, QuestionSet, select_questions
from cypherturn.graph import GraphEngine, render_schema_prompt
from cypherturn.models import ChatModel
from cypherturn.records import (
    ATTEMPTS_FILE,
    QER_CONFIG_FILE,
    TRANSCRIPTS_FILE,
    JsonlAppender,
    QerEpisode,
    QerFailure,
    episode_from_strategy_result,
    intact_lines,
    validation_problem,
)
from cypherturn.runner import open_run_dir, run_batch, write_infra_failures
from cypherturn.strategies import (
    PROMPT_VERSION,
    FewShotExample,
    StrategyConfig,
    StrategyResult,
    get_strategy,
    schema_examples,
)

__all__ = [
    "QER_CONFIG_FILE",
    "TRANSCRIPTS_FILE",
    "EpisodeKey",
    "QerRunConfig",
    "QerRunSummary",
    "QerTranscript",
    "episode_seed",
    "plan_tasks",
    "question_set_digest",
    "run_qer_experiment",
]

EpisodeKey = tuple[str, str, str, str, int, str]
"""(strategy, dataset, tier, model, run_index, question_id): one episode's identity."""


class QerRunConfig(BaseModel):
    """Everything that defines an experiment; stored as ``qer.json`` and compared on resume.

    Attributes:
        schema_version: layout version.
        datasets / tiers / strategies: the grid (strategies ``is``, ``ras``, ``single``).
        model: the model spec (recorded in every episode).
        n_ctx: the context window, tokens, requested for a local model (``--n-ctx``;
            llama.cpp caps it at the model's training context); ``None``: the
            model's default (4,096 for GGUF models). Left out of ``qer.json`` while
            ``None``, so runs recorded before it existed still resume; a run
            started with ``--n-ctx 4096`` and one without it are different.
        budget: n, attempts per question (RAS §4.7: 5).
        runs: R, independent runs per configuration (RAS §4.7: 128).
        temperature: sampling temperature (RAS §4.7: 0.9).
        max_tokens: most tokens per attempt.
        prompt_version: ``v1`` (the paper's zero-shot GraphCypherQAChain prompt) or ``v2``.
        seed: experiment seed, mixed into every episode's base seed.
        questions_per_tier: questions per dataset and tier (``None``: all; the paper's first).
        timeout_s / row_cap: query limits (``None``: the engine's defaults).
        question_sets: dataset -> SHA-256 of its question set, so edited questions are refused.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    datasets: list[str] = Field(min_length=1)
    tiers: list[str] = Field(min_length=1)
    strategies: list[str] = Field(min_length=1)
    model: str = Field(min_length=1)
    n_ctx: int | None = Field(default=None, ge=1)
    budget: int = Field(ge=1)
    runs: int = Field(ge=1)
    temperature: float = Field(ge=0.0)
    max_tokens: int = Field(default=512, ge=1)
    prompt_version: str = PROMPT_VERSION
    seed: int = 0
    questions_per_tier: int | None = Field(default=None, ge=1)
    timeout_s: float | None = Field(default=None, gt=0.0)
    row_cap: int | None = Field(default=None, ge=1)
    question_sets: dict[str, str] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.n_ctx is None:
            data.pop("n_ctx", None)
        return data

    def strategy_config(self, seed: int) -> StrategyConfig:
        """The shared IS/RAS settings for one episode with base seed ``seed``."""
        return StrategyConfig(
            budget=self.budget,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=seed,
            timeout_s=self.timeout_s,
            row_cap=self.row_cap,
            prompt_version=self.prompt_version,
        )


class QerTranscript(BaseModel):
    """The full record of one episode: its key, base seed and the strategy's result.

    Attributes:
        dataset / tier / question_id / run_index: where it belongs.
        seed: the base seed (attempt t used ``seed + t - 1``).
        result: every attempt with raw completion, engine message and context size.
    """

    dataset: str
    tier: str
    question_id: str
    run_index: int
    seed: int
    result: StrategyResult


@dataclass(frozen=True, slots=True)
class _Task:
    dataset: str
    tier: str
    strategy: str
    question: Question
    run_index: int
    seed: int


@dataclass(frozen=True, slots=True)
class QerRunSummary:
    """What one call of :func:`run_qer_experiment` did.

    Attributes:
        planned: episodes in the whole experiment.
        skipped: episodes already in the run directory (resume).
        ran: episodes played and written by this call.
        seconds: wall time of this call.
        infra_failures: episodes this call lost to infrastructure failures (not
            written, so unscored; a rerun plays them), as in ``infra_failures.json``.
    """

    planned: int
    skipped: int
    ran: int
    seconds: float
    infra_failures: list[QerFailure] = field(default_factory=list)


def question_set_digest(qs: QuestionSet) -> str:
    """SHA-256 of a question set's canonical JSON (recorded in the configuration)."""
    return hashlib.sha256(qs.model_dump_json().encode("utf-8")).hexdigest()


def episode_seed(base: int, dataset: str, question_id: str, run_index: int) -> int:
    """The base sampling seed of run ``run_index`` of a question: the same for IS and RAS.

    Args:
        base: the experiment seed.
        dataset / question_id / run_index: the episode (the strategy is left out on purpose).

    Returns:
        A seed in ``[0, 2**31)``, stable across processes.
    """
    mixed = zlib.crc32(f"{dataset}/{question_id}/{run_index}".encode())
    return (base * 1_000_003 + mixed) % 2**31


def plan_tasks(config: QerRunConfig, question_sets: Mapping[str, QuestionSet]) -> list[_Task]:
    """Every episode of the experiment, run-major so an interrupted run leaves whole runs.

    Raises:
        ConfigError: unknown tier or strategy, or a dataset without a question set.
    """
    for strategy in config.strategies:
        get_strategy(strategy)
    for tier in config.tiers:
        if tier not in TIERS:
            raise ConfigError(f"unknown tier {tier!r}; choose from {', '.join(TIERS)}")
    chosen: dict[tuple[str, str], list[Question]] = {}
    for dataset in config.datasets:
        if dataset not in question_sets:
            raise ConfigError(f"no question set for dataset {dataset!r}")
        for tier in config.tiers:
            chosen[(dataset, tier)] = select_questions(
                question_sets[dataset], tier, config.questions_per_tier
            )
    return [
        _Task(dataset, tier, strategy, q, r, episode_seed(config.seed, dataset, q.id, r))
        for r in range(config.runs)
        for dataset in config.datasets
        for tier in config.tiers
        for q in chosen[(dataset, tier)]
        for strategy in config.strategies
    ]


def _key(e: QerEpisode) -> EpisodeKey:
    return (e.strategy, e.dataset, e.tier, e.model, e.run_index, e.question_id)


def _done_keys(out_dir: Path) -> set[EpisodeKey]:
    """Keys of the episodes already written; transcripts are trimmed to match them."""
    done: set[EpisodeKey] = set()
    path = out_dir / ATTEMPTS_FILE
    for number, line in enumerate(intact_lines(path), start=1):
        try:
            done.add(_key(QerEpisode.model_validate_json(line)))
        except ValidationError as e:
            raise DatasetError(f"{path}:{number}: {validation_problem(e, 'QerEpisode')}") from e
    transcripts = out_dir / TRANSCRIPTS_FILE
    kept: list[str] = []
    seen: set[tuple[str, str, str, int, str]] = set()
    for number, line in enumerate(intact_lines(transcripts), start=1):
        try:
            t = QerTranscript.model_validate_json(line)
        except ValidationError as e:
            raise DatasetError(
                f"{transcripts}:{number}: {validation_problem(e, 'QerTranscript')}"
            ) from e
        key = (t.result.strategy, t.dataset, t.tier, t.run_index, t.question_id)
        if key not in seen and (key[0], key[1], key[2], t.result.model, key[3], key[4]) in done:
            seen.add(key)
            kept.append(line)
    if transcripts.exists():
        transcripts.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
    return done


def run_qer_experiment(
    config: QerRunConfig,
    model: ChatModel,
    engines: Mapping[str, GraphEngine],
    question_sets: Mapping[str, QuestionSet],
    out_dir: Path,
    *,
    concurrency: int = 1,
    on_start: Callable[[int, int], None] | None = None,
    on_episode: Callable[[QerEpisode], None] | None = None,
) -> QerRunSummary:
    """Play (or resume) the experiment, appending each finished episode to the run directory.

    Args:
        config: the experiment (its ``question_sets`` digests must match ``question_sets``).
        model: the chat model; its ``spec`` must equal ``config.model`` (episodes record it).
        engines: dataset -> engine on that dataset's loaded graph.
        question_sets: dataset -> its question set.
        out_dir: the run directory (created when missing).
        concurrency: worker threads (see the module docstring for GGUF models).
        on_start: called once with (episodes planned, episodes already done).
        on_episode: called in the calling thread after each episode is written.

    Returns:
        The :class:`QerRunSummary`.

    Raises:
        ConfigError: a changed configuration in ``out_dir``, a question set that does
            not match its digest, a model whose spec is not ``config.model``, an
            unknown tier/strategy, or concurrency < 1.
        DatasetError: ``qer.json`` or ``attempts.jsonl`` holds a malformed record.
        EngineConnectionError: an engine is unreachable when its schema is read,
            before any episode is played.

    A model or engine failure ends only its episode (see the module docstring): it is
    recorded in :attr:`QerRunSummary.infra_failures` and ``infra_failures.json``.
    """
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    for dataset, digest in config.question_sets.items():
        if dataset in question_sets and question_set_digest(question_sets[dataset]) != digest:
            raise ConfigError(f"the question set of {dataset!r} differs from the configuration's")
    if model.spec != config.model:
        raise ConfigError(f"the model {model.spec!r} is not the configuration's {config.model!r}")
    missing = [d for d in config.datasets if d not in engines]
    if missing:
        raise ConfigError(f"no engine for dataset(s): {', '.join(missing)}")
    tasks = plan_tasks(config, question_sets)
    started = time.perf_counter()
    open_run_dir(
        out_dir, QER_CONFIG_FILE, config, what="QER configuration", started_by=(ATTEMPTS_FILE,)
    )
    done = _done_keys(out_dir)
    todo = [
        t
        for t in tasks
        if (t.strategy, t.dataset, t.tier, model.spec, t.run_index, t.question.id) not in done
    ]
    if on_start is not None:
        on_start(len(tasks), len(tasks) - len(todo))
    contexts = {d: _schema_context(engines[d]) for d in config.datasets}

    def play(task: _Task) -> QerTranscript:
        schema_text, examples = contexts[task.dataset]
        result = get_strategy(task.strategy).run(
            model,
            engines[task.dataset],
            task.question.question,
            schema_text,
            config.strategy_config(task.seed),
            examples,
        )
        return QerTranscript(
            dataset=task.dataset,
            tier=task.tier,
            question_id=task.question.id,
            run_index=task.run_index,
            seed=task.seed,
            result=result,
        )

    ran = 0
    failures: list[QerFailure] = []
    with (
        JsonlAppender(out_dir / ATTEMPTS_FILE) as attempts,
        JsonlAppender(out_dir / TRANSCRIPTS_FILE) as transcripts,
    ):

        def write(task: _Task, transcript: QerTranscript) -> None:
            nonlocal ran
            episode = episode_from_strategy_result(
                transcript.result,
                dataset=transcript.dataset,
                question_id=transcript.question_id,
                tier=transcript.tier,
                run_index=transcript.run_index,
            )
            # Transcript first: on resume attempts.jsonl is the authority and extra transcripts are trimmed.
            transcripts.append(transcript)
            attempts.append(episode)
            ran += 1
            if on_episode is not None:
                on_episode(episode)

        def failed(task: _Task, error: ModelError | EngineConnectionError) -> None:
            failures.append(
                QerFailure(
                    strategy=task.strategy,
                    dataset=task.dataset,
                    tier=task.tier,
                    model=model.spec,
                    run_index=task.run_index,
                    question_id=task.question.id,
                    error=str(error),
                )
            )

        run_batch(todo, play, on_done=write, on_failed=failed, concurrency=concurrency, name="qer")
    write_infra_failures(out_dir, failures)
    return QerRunSummary(
        planned=len(tasks),
        skipped=len(tasks) - len(todo),
        ran=ran,
        seconds=time.perf_counter() - started,
        infra_failures=failures,
    )


def _schema_context(engine: GraphEngine) -> tuple[str, Sequence[FewShotExample]]:
    schema = engine.schema()
    return render_schema_prompt(schema), schema_examples(schema)
