"""`bench ask` and `bench ask-import`: the ask benchmark over any question set, and its gold labels."""

from __future__ import annotations

import contextlib
import random
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cypherturn.api._engines import connect
from cypherturn.api._hooks import Status, quiet
from cypherturn.errors import ConfigError
from cypherturn.experiments import (
    AskItem,
    AskRunConfig,
    AskRunSummary,
    AskSet,
    check_golds,
    read_answers,
    read_ask_items,
    run_ask_benchmark,
    write_ask_items,
)
from cypherturn.graph import DEFAULT_ROW_CAP, GraphEngine, QueryResult
from cypherturn.memory import DEFAULT_RECALL, Recall, VerifiedPair
from cypherturn.models import GGUFChatModel, load_model
from cypherturn.records import AskAnswer, DataSplit, GoldCheck, GoldReason
from cypherturn.strategies import PROMPT_VERSION, StrategyConfig, get_strategy

__all__ = [
    "BENCH_TIMEOUT_S",
    "GOLD_TIMEOUT_S",
    "AskBenchConfig",
    "AskBenchResult",
    "AskImportConfig",
    "AskImportResult",
    "import_ask_set",
    "run_ask_bench",
    "stratified_sample",
]


BENCH_TIMEOUT_S = 30.0
"""The ask benchmark's default limit on a generated query, seconds (see :class:`AskBenchConfig`)."""

GOLD_TIMEOUT_S = 120.0
"""The default limit on a gold, seconds, when a set is labelled or its labels are checked.

A gold is a verified query, not a runaway: the slowest Mind the Query gold takes
30-45 s on the embedded engine on 2 shared cores, so a limit near that made a
label depend on the machine's load. Generated queries keep :data:`BENCH_TIMEOUT_S`.
"""


class AskBenchConfig(BaseModel):
    """What `cypherturn bench ask` runs.

    Attributes:
        ask_set: a packaged set's name (``ask-dev``, ``ask-test``) or a YAML/JSONL file
            (:func:`~cypherturn.experiments.read_ask_items`).
        out_dir: the run directory (resumed when it exists).
        models: model specs; ``default`` resolves to the strongest installed model.
        model_options: keyword options for :func:`~cypherturn.models.load_model`.
        strategies: strategy names (``single``, ``is``, ``ras``, ``ras+``, ``ras+:<parts>``).
        budget: T, the most attempts per question.
        temperature: sampling temperature (RAS §4.7: 0.9).
        seed: base sampling seed.
        prompt_version: ``v1`` (the RAS paper's prompt) or ``v2``; ``None``: the default.
        max_tokens: most tokens generated per attempt.
        timeout_s: limit on a generated query, seconds (30 s; ``ask`` itself
            waits 120 s).
        gold_timeout_s: limit on a gold, seconds, when the set's labels are made or
            checked (:data:`GOLD_TIMEOUT_S`): a gold that needs longer than a
            generated query may take is still a gold, and its label must not
            depend on the machine's load.
        row_cap: rows kept per query.
        graph: the graph of JSONL lines that name none.
        engine_url: ``None`` for the embedded FalkorDB, or a server URL.
        n_ctx: a local model's context window, recorded in the run.
        limit: ask only the first N questions (the set's digest covers only those).
        memory: a set (packaged name or file, as ``ask_set``) whose usable golds
            are the memory of verified questions; each question is shown the
            ``recall`` pairs of its graph nearest it, its own never
            (leave-one-out). ``None``: no memory.
        recall: pairs shown per question when ``memory`` is set.
    """

    model_config = ConfigDict(extra="forbid")

    ask_set: str
    out_dir: Path
    models: list[str] = Field(default_factory=lambda: ["default"], min_length=1)
    model_options: dict[str, Any] = Field(default_factory=dict)
    strategies: list[str] = Field(default_factory=lambda: ["ras+"], min_length=1)
    budget: int = Field(default=5, ge=1)
    temperature: float = Field(default=0.9, ge=0)
    seed: int = 0
    prompt_version: str | None = None
    max_tokens: int = Field(default=512, ge=1)
    timeout_s: float = Field(default=BENCH_TIMEOUT_S, gt=0)
    gold_timeout_s: float = Field(default=GOLD_TIMEOUT_S, gt=0)
    row_cap: int = Field(default=DEFAULT_ROW_CAP, ge=1)
    graph: str | None = None
    engine_url: str | None = None
    n_ctx: int | None = Field(default=None, ge=256)
    limit: int | None = Field(default=None, ge=1)
    memory: str | None = None
    recall: int = Field(default=DEFAULT_RECALL, ge=1, le=20)


@dataclass(frozen=True)
class AskBenchResult:
    """What :func:`run_ask_bench` did.

    Attributes:
        ask_set: the questions.
        golds: each question's gold label.
        summary: the runner's summary.
        answers: every answer of the run directory for the asked systems and questions.
    """

    ask_set: AskSet
    golds: list[GoldCheck]
    summary: AskRunSummary
    answers: list[AskAnswer]


@contextlib.contextmanager
def _engines(graphs: Sequence[str], engine_url: str | None) -> Iterator[dict[str, GraphEngine]]:
    with contextlib.ExitStack() as stack:
        yield {g: stack.enter_context(connect(g, engine_url=engine_url)) for g in graphs}


def _verify_labels(items: Sequence[AskItem], golds: Sequence[tuple[GoldCheck, Any]]) -> None:
    """An imported file's labels must be what our engine says now (same graph build).

    Raises:
        ConfigError: a label differs; a gold that ran past the gold timeout is named
            as such, since a slower machine is not a different graph.
    """
    for item, (check, _) in zip(items, golds, strict=True):
        stored = item.check
        if stored is None:
            continue
        if stored.status is check.status and stored.digest == check.digest:
            continue
        if GoldReason.TIMEOUT in check.reasons:
            raise ConfigError(
                f"question {item.id}: its gold ran past the gold timeout here "
                f"({check.note or 'no rows'}); the file labels it {stored.status.value} "
                f"({stored.rows} rows): raise --gold-timeout"
            )
        raise ConfigError(
            f"question {item.id}: the file labels its gold {stored.status.value} "
            f"({stored.rows} rows) but this engine gives {check.status.value} "
            f"({check.rows} rows): the graph differs from the one the file was "
            "labelled on; relabel it with `cypherturn bench ask-import`"
        )


def _check_set(
    ask_set: AskSet,
    engines: dict[str, GraphEngine],
    *,
    timeout_s: float,
    row_cap: int,
    on_check: Callable[[GoldCheck], None] | None = None,
) -> list[tuple[GoldCheck, QueryResult | None]]:
    """Label every gold of ``ask_set`` on ``engines`` and check an imported file's labels.

    Raises:
        ConfigError: a file's stored label differs from what the engine gives now.
    """
    golds = check_golds(
        ask_set.items, engines.__getitem__, timeout_s=timeout_s, row_cap=row_cap, on_check=on_check
    )
    _verify_labels(ask_set.items, golds)
    return golds


def _run_config(
    config: AskBenchConfig, ask_set: AskSet, prompt: str, memory_set: AskSet | None
) -> AskRunConfig:
    """The settings the run directory is bound to (``ask.json``)."""
    return AskRunConfig(
        ask_set=ask_set.name,
        digest=ask_set.digest,
        split=ask_set.split,
        budget=config.budget,
        temperature=config.temperature,
        seed=config.seed,
        prompt=prompt,
        max_tokens=config.max_tokens,
        timeout_s=config.timeout_s,
        gold_timeout_s=config.gold_timeout_s,
        row_cap=config.row_cap,
        n_ctx=config.n_ctx,
        memory=memory_set.name if memory_set is not None else None,
        memory_digest=memory_set.digest if memory_set is not None else None,
        recall=config.recall if memory_set is not None else 0,
    )


def run_ask_bench(
    config: AskBenchConfig,
    *,
    status: Status = quiet,
    on_check: Callable[[GoldCheck], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_answer: Callable[[AskAnswer], None] | None = None,
) -> AskBenchResult:
    """Label the set's golds on our engine, then ask every usable question of every system.

    Args:
        config: the run.
        status: wraps the model loads.
        on_check: called after each gold is labelled.
        on_start: called with (answers planned, answers already done).
        on_answer: called after each answer is written.

    Returns:
        The :class:`AskBenchResult`.

    Raises:
        ConfigError: an unknown strategy, model or set, a bad option, a changed run
            configuration, or a file labelled on another graph build.
        DatasetError: a malformed set or run directory.
        ModelError / EngineConnectionError: a model or engine that cannot be used at all.
    """
    ask_set = read_ask_items(config.ask_set, graph=config.graph)
    if config.limit is not None:
        ask_set = ask_set.model_copy(update={"items": ask_set.items[: config.limit]})
    for strategy in config.strategies:
        get_strategy(strategy)
    prompt = config.prompt_version or PROMPT_VERSION
    StrategyConfig(prompt_version=prompt, budget=config.budget)
    memory_set = read_ask_items(config.memory, graph=config.graph) if config.memory else None
    run_config = _run_config(config, ask_set, prompt, memory_set)
    options = dict(config.model_options)
    if config.n_ctx is not None:
        options["n_ctx"] = config.n_ctx
    graphs = list(dict.fromkeys(item.graph for item in ask_set.items))
    with _engines(graphs, config.engine_url) as engines:
        with status("Checking the golds on the engine ..."):
            golds = _check_set(
                ask_set,
                engines,
                timeout_s=config.gold_timeout_s,
                row_cap=config.row_cap,
                on_check=on_check,
            )
        memory = None
        if memory_set is not None:
            with status("Reading the memory's golds ..."):
                memory = Recall(_memory_pairs(memory_set, engines, config))
        with status("Loading the model(s) ..."):
            models = [load_model(spec, **options) for spec in config.models]
            for model in models:
                if isinstance(model, GGUFChatModel):
                    model.load()
        summary = run_ask_benchmark(
            run_config,
            ask_set,
            golds,
            models,
            config.strategies,
            engines,
            config.out_dir,
            on_start=on_start,
            on_answer=on_answer,
            memory=memory,
        )
    answers = _answers(config, ask_set, [m.spec for m in models], prompt)
    return AskBenchResult(ask_set, [c for c, _ in golds], summary, answers)


def _memory_pairs(
    memory_set: AskSet, engines: dict[str, GraphEngine], config: AskBenchConfig
) -> list[VerifiedPair]:
    """The usable golds of ``memory_set`` on the run's graphs, as verified pairs.

    A gold labelled by the importer is taken as labelled (its label was checked
    against this engine when that file was made); an unlabelled one is run now.
    """
    items = [item for item in memory_set.items if item.graph in engines]
    unlabelled = [item for item in items if item.check is None]
    checked = dict(
        zip(
            (item.id for item in unlabelled),
            (
                check
                for check, _ in check_golds(
                    unlabelled,
                    engines.__getitem__,
                    timeout_s=config.gold_timeout_s,
                    row_cap=config.row_cap,
                )
            ),
            strict=True,
        )
    )
    pairs = []
    for item in items:
        check = item.check or checked[item.id]
        if check.usable:
            pairs.append(
                VerifiedPair(
                    question=item.question,
                    cypher=check.gold,
                    graph=item.graph,
                    source="file",
                    rows=check.rows,
                )
            )
    return pairs


def _answers(
    config: AskBenchConfig, ask_set: AskSet, models: list[str], prompt: str
) -> list[AskAnswer]:
    """The answers in the run directory that this run asked for (its systems, questions, budget, prompt)."""
    wanted = {(spec, s) for spec in models for s in config.strategies}
    ids = {item.id for item in ask_set.items}
    return [
        a
        for a in read_answers(config.out_dir)
        if (a.model, a.strategy) in wanted
        and a.question_id in ids
        and a.budget == config.budget
        and a.prompt == prompt
    ]


def stratified_sample(
    items: Sequence[AskItem], size: int, *, seed: int = 0, exclude: set[str] | None = None
) -> list[AskItem]:
    """``size`` questions drawn without replacement, proportionally per (graph, category).

    Each stratum gets its share of ``size`` by largest remainder (at least one
    question where the stratum is not empty and ``size`` allows), drawn with
    ``random.Random(seed)``; the sample keeps file order. Deterministic.

    Args:
        items: the pool.
        size: how many to draw (all when the pool is smaller).
        seed: the draw's seed.
        exclude: ids never drawn (a disjoint second sample).

    Returns:
        The sample, in the pool's order.

    Raises:
        ConfigError: ``size`` < 1.
    """
    if size < 1:
        raise ConfigError(f"a sample needs at least 1 question, got {size}")
    pool = [item for item in items if item.id not in (exclude or set())]
    if size >= len(pool):
        return list(pool)
    strata: dict[tuple[str, str], list[AskItem]] = defaultdict(list)
    for item in pool:
        strata[(item.graph, item.category)].append(item)
    keys = sorted(strata)
    exact = {k: size * len(strata[k]) / len(pool) for k in keys}
    shares = {k: int(exact[k]) for k in keys}
    for k in sorted(keys, key=lambda k: (-(exact[k] - shares[k]), k))[
        : size - sum(shares.values())
    ]:
        shares[k] += 1
    rng = random.Random(seed)
    chosen: set[str] = set()
    for k in keys:
        chosen.update(item.id for item in rng.sample(strata[k], shares[k]))
    return [item for item in pool if item.id in chosen]


class AskImportConfig(BaseModel):
    """What `cypherturn bench ask-import` writes.

    Attributes:
        source: the question set to label (a file, or a packaged set's name).
        out: the labelled JSONL file to write (every question, each with its ``check``).
        graph: the graph of lines that name none.
        engine_url: ``None`` for the embedded FalkorDB, or a server URL.
        split: the data split to declare in the written file (``None``: keep the source's).
        sample: also write a stratified sample of the usable questions to ``sample_out``.
        sample_out: where the sample goes.
        sample_seed: the sample's seed.
        exclude: a labelled file whose question ids the sample must not draw.
        timeout_s / row_cap: per-gold limits (:data:`GOLD_TIMEOUT_S`).
    """

    model_config = ConfigDict(extra="forbid")

    source: str
    out: Path
    graph: str | None = None
    engine_url: str | None = None
    split: DataSplit | None = None
    sample: int | None = Field(default=None, ge=1)
    sample_out: Path | None = None
    sample_seed: int = 0
    sample_split: DataSplit | None = None
    exclude: Path | None = None
    timeout_s: float = Field(default=GOLD_TIMEOUT_S, gt=0)
    row_cap: int = Field(default=DEFAULT_ROW_CAP, ge=1)


@dataclass(frozen=True)
class AskImportResult:
    """What :func:`import_ask_set` wrote.

    Attributes:
        items: every question with its label.
        sample: the sample's questions (empty when none was asked for).
    """

    items: list[AskItem]
    sample: list[AskItem]


def import_ask_set(
    config: AskImportConfig,
    *,
    status: Status = quiet,
    on_check: Callable[[GoldCheck], None] | None = None,
) -> AskImportResult:
    """Re-execute every gold of a question set on our engine and write it with its labels.

    Args:
        config: what to read and write.
        status: wraps the engine work.
        on_check: called after each gold is labelled.

    Returns:
        The :class:`AskImportResult`.

    Raises:
        ConfigError: ``sample`` without ``sample_out`` (or the reverse), an unknown set.
        DatasetError: a malformed set or exclusion file.
        EngineConnectionError: the engine cannot be reached.
    """
    if (config.sample is None) != (config.sample_out is None):
        raise ConfigError("--sample and --sample-out go together")
    ask_set = read_ask_items(config.source, graph=config.graph)
    graphs = list(dict.fromkeys(item.graph for item in ask_set.items))
    with _engines(graphs, config.engine_url) as engines, status("Checking the golds ..."):
        golds = check_golds(
            ask_set.items,
            engines.__getitem__,
            timeout_s=config.timeout_s,
            row_cap=config.row_cap,
            on_check=on_check,
        )
    split = config.split
    labelled = [
        item.model_copy(update={"check": check, "split": split or item.split})
        for item, (check, _) in zip(ask_set.items, golds, strict=True)
    ]
    write_ask_items(config.out, labelled)
    sample: list[AskItem] = []
    if config.sample is not None and config.sample_out is not None:
        excluded = (
            {item.id for item in read_ask_items(config.exclude).items}
            if config.exclude is not None
            else set()
        )
        usable = [item for item in labelled if item.check is not None and item.check.usable]
        sample = stratified_sample(usable, config.sample, seed=config.sample_seed, exclude=excluded)
        sample_split = config.sample_split or split
        sample = [item.model_copy(update={"split": sample_split or item.split}) for item in sample]
        write_ask_items(config.sample_out, sample)
    return AskImportResult(labelled, sample)
