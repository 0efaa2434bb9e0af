"""The run records: the scorer's input and output, versioned pydantic models.

Input, written by a benchmark runner (one JSON object per line):

* :class:`TurnRecord` — one turn of one session as a model played it
  (CypherTurn §3.1-3.2): identity, annotation, gold and predicted Cypher, the
  budget cliff, action counts, tokens, latency and the queries it executed.
* :class:`QerEpisode` — one question answered by one inference strategy in one
  independent run (RAS §4.7): the per-attempt outcomes QER and QER@k need.

Output, written by :func:`cypherturn.metrics.score_run`:

* :class:`TurnScore` — a :class:`TurnRecord` with its EX, relaxed EX and PSJS.
* :class:`RunManifest` — ``run.json``: what was scored, with which settings,
  how many engine executions it took, on which engine (:class:`EngineInfo`).

The vocabularies the records use, :class:`Action` and :class:`ProtocolName`, live
here too, so the agent and the protocols share them without importing the scorer.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Final, Literal, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    model_serializer,
    model_validator,
)

from cypherturn.errors import ErrorClass
from cypherturn.records._ask import DataSplit

__all__ = [
    "BASE_VARIANT",
    "METRICS_VERSION",
    "SCHEMA_VERSION",
    "STORED_CONTEXT",
    "UNKNOWN_VERSION",
    "Action",
    "EngineInfo",
    "ExecutionStats",
    "InfraFailure",
    "PredictionStatus",
    "ProtocolName",
    "PsjsStatus",
    "QerEpisode",
    "QerFailure",
    "QueryAttempt",
    "RunManifest",
    "ScoringSettings",
    "SessionKey",
    "StrategyAttemptLike",
    "StrategyResultLike",
    "TurnEnd",
    "TurnRecord",
    "TurnScore",
    "episode_from_strategy_result",
]

SCHEMA_VERSION: Final = 1
"""Layout version of every record in this module."""

METRICS_VERSION: Final = 2
"""Version of the metric definitions (docs/design/metrics.md, "Versions").

1: PSJS was the output-provenance Jaccard (now ``psjs_output``); relaxed EX had
no list or tie-block tolerance and no subset variant.
2: PSJS is CypherBench's; relaxed EX compares undefined-order ``collect()`` lists
as multisets and pre-filters columns by tie block; ``ex_subset`` added; guided
exhaustion counts only turns that ran out of actions before SUBMIT_ANSWER.
"""

STORED_CONTEXT: Final = "stored"
"""Validation-context key set when records are read back from files (old layouts migrate)."""

BASE_VARIANT: Final = "base"
"""The protocol variant of a run that plays no appendix F variant."""

SessionKey = tuple[str, str, str, int, str, str]
"""``(run id, model, protocol, budget multiplier, variant, session id)``."""


UNKNOWN_VERSION: Final = "unknown"
"""The version recorded when an engine's version could not be read."""


class EngineInfo(BaseModel):
    """An engine's product name and version, as ``run.json`` records it per graph.

    Gold answers can depend on the engine (FalkorDB and Neo4j differ on multi-edge
    patterns, ``LIMIT`` after ``UNION ALL``, integer ``sum()``: the engine divergence
    audits of docs/design/sessions.md), so every
    run directory records the engine of each graph it was scored on.

    Attributes:
        name: ``FalkorDB``, ``Neo4j`` (with its edition), or the engine class name.
        version: the server's version string, ``unknown`` when it could not be read.
    """

    name: str
    version: str = UNKNOWN_VERSION

    def __str__(self) -> str:
        return f"{self.name} {self.version}"


class ProtocolName(StrEnum):
    """The two CypherTurn evaluation protocols (§3.1)."""

    GUIDED = "guided"
    AGENTIC = "agentic"


class Action(StrEnum):
    """The five CypherTurn actions (§3.1, appendix D.5, Table 9)."""

    EXECUTE_CYPHER = "execute_cypher"
    INSPECT_SCHEMA = "inspect_schema"
    SEARCH_VALUES = "search_values"
    ASK_USER = "ask_user"
    SUBMIT_ANSWER = "submit_answer"


class TurnEnd(StrEnum):
    """Why a turn's action loop stopped (closed vocabulary, logged per turn; CypherTurn App. D.5).

    It lives here, not in :mod:`cypherturn.agent` which re-exports it, so that a
    :class:`TurnRecord` carries it and the scorer reads it without importing the agent.
    """

    SUBMITTED = "submitted"
    """SUBMIT_ANSWER was called; its payload is the prediction."""
    ACTION_CAP = "action_cap"
    """Guided: the 3 actions of the turn were used without SUBMIT (fallback rule)."""
    BUDGET_EXHAUSTED = "budget_exhausted"
    """Agentic: the shared budget reached zero during the turn (fallback rule)."""
    CLIFF = "cliff"
    """Agentic: the budget was already zero when the turn began; no prediction."""
    CONTEXT_OVERFLOW = "context_overflow"
    """The turn's context outgrew the model's window before SUBMIT (fallback rule);
    the failed call costs no unit."""
    STUCK = "stuck"
    """Repeat guard: the model took one action a third time in the turn; the turn ended
    there with the fallback prediction (:data:`cypherturn.protocols.SETTLED_REPEATS`)."""
    INFRA_ERROR = "infra_error"
    """The model endpoint or the engine failed persistently; the session is unscored."""


class QueryAttempt(BaseModel):
    """One generated query that was executed (an EXECUTE_CYPHER action, or one IS/RAS attempt).

    Field names match :class:`cypherturn.strategies.Attempt`, so an attempt's
    ``model_dump()`` validates as a :class:`QueryAttempt` (extra fields ignored).

    Attributes:
        index: 1-based position among the attempts of its turn or question.
        outcome: ``"ok"`` when the engine executed it, ``"error"`` when it failed
            (the QEE indicator of RAS eq. 3).
        error_class: the failure class when it failed.
        prompt_tokens: prompt tokens of the generation that produced it.
        completion_tokens: tokens generated for it.
        model_latency_s: wall time of the model call, seconds.
        execution_latency_s: wall time of the engine call, seconds.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    index: int = Field(ge=1)
    outcome: Literal["ok", "error"]
    error_class: ErrorClass | None = None
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    model_latency_s: float = Field(default=0.0, ge=0.0)
    execution_latency_s: float = Field(default=0.0, ge=0.0)

    @property
    def ok(self) -> bool:
        """True when the query executed."""
        return self.outcome == "ok"


class TurnRecord(BaseModel):
    """One turn of one session, as played by one model under one protocol (scorer input).

    Attributes:
        schema_version: layout version (1).
        run_id: identifier of the benchmark run the turn belongs to.
        model: the model's name or spec string.
        protocol: ``guided`` or ``agentic`` (CypherTurn §3.1).
        budget_multiplier: m of the agentic budget ``B = T x m`` (3, 5 or 10); the
            guided protocol's fixed 3 actions per turn is recorded as 3.
        variant: the protocol variant the turn was played under (CypherTurn appendix F:
            ``base``, ``persistent_schema``, ``disclosed_horizon``,
            ``budget_encouraging``); records written before the field existed read
            as ``base``, the only variant of those runs that could be told apart.
        harness: the harness settings beyond the paper the turn was played under
            (:attr:`cypherturn.protocols.ProtocolSettings.harness`, e.g.
            ``explicit, guards, note``); empty for the paper's agent, and in records
            written before the field existed (``cypherturn report`` then reads the
            run's ``bench_config.json``).
        session_id: the session's identifier, unique within the benchmark.
        turn: 1-based turn position t (T1..T10).
        graph: the graph (world) name the session runs on.
        phenomenon: the turn's conversational phenomenon (§2.2, e.g. ``PIVOT``).
        chain_mode: the turn's chain mode (§2.3, e.g. ``expand``, ``none``).
        persona: the session persona (§2.4).
        depends_on: the turn whose result this turn builds on, or ``None`` for a
            chain-independent turn (T1 and topic shifts). CER conditions on it.
        gold_cypher: the gold query.
        predicted_cypher: the submitted query; ``None`` when nothing was submitted
            (no SUBMIT_ANSWER and no EXECUTE_CYPHER, or the budget cliff).
        cliff: the turn was auto-scored 0 because the shared budget ran out
            before it (appendix D.5, "hard cliff").
        budget_remaining: the shared budget left after the turn (agentic), when known.
        actions: how many times each action was taken in the turn (SUBMIT included).
        output_tokens: clean output tokens generated in the turn, reasoning excluded.
        reasoning_tokens: reasoning (``<think>``) tokens, reported separately.
        prompt_tokens: prompt tokens over the turn's model calls.
        latency_s: wall time of the turn, seconds.
        query_attempts: every EXECUTE_CYPHER query of the turn with its outcome (QER).
        end: why the turn ended (:class:`TurnEnd`); ``None`` in records written before
            the field existed (``cypherturn report`` then reads the run's session logs).
        sim_model: agentic: the user simulator's model spec when the run named one
            (``bench run --sim-model``); ``None`` when the evaluated model played the
            simulator (the default, and every record written before the field
            existed) and for guided turns, which have no simulator
            (:attr:`simulator`).
        model_actions: the steps the model took in the turn, one reply each (steps the
            harness took for it, ``by_harness``, excluded); ``None`` in records written
            before the field existed.
        unreadable_actions: of them, the replies the harness could not read as an
            action (an unreadable reply that ended the turn as ``stuck`` included);
            ``None`` as for ``model_actions``.
        split: the data split of the session (:attr:`cypherturn.sessions.Session.split`):
            ``test`` for a frozen held-out split; ``None`` (undeclared) reads as
            development data.
        paraphrased: the turn's utterance was rewritten by a model
            (``cypherturn.sessions.rewrite_sessions``) from the template's.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = SCHEMA_VERSION
    run_id: str = Field(min_length=1)
    model: str = Field(min_length=1)
    protocol: ProtocolName
    budget_multiplier: int = Field(default=3, ge=1)
    variant: str = Field(default=BASE_VARIANT, min_length=1)
    harness: str = ""
    session_id: str = Field(min_length=1)
    turn: int = Field(ge=1)
    graph: str = Field(min_length=1)
    phenomenon: str = ""
    chain_mode: str = ""
    persona: str = ""
    depends_on: int | None = Field(default=None, ge=1)
    gold_cypher: str = Field(min_length=1)
    predicted_cypher: str | None
    cliff: bool = False
    budget_remaining: int | None = Field(default=None, ge=0)
    actions: dict[Action, int] = Field(default_factory=dict)
    output_tokens: int = Field(default=0, ge=0)
    reasoning_tokens: int = Field(default=0, ge=0)
    prompt_tokens: int = Field(default=0, ge=0)
    latency_s: float = Field(default=0.0, ge=0.0)
    query_attempts: list[QueryAttempt] = Field(default_factory=list)
    end: TurnEnd | None = None
    sim_model: str | None = None
    model_actions: int | None = Field(default=None, ge=0)
    unreadable_actions: int | None = Field(default=None, ge=0)
    split: DataSplit | None = None
    paraphrased: bool = False

    @property
    def data_label(self) -> str:
        """What data the turn comes from, for labels: ``""`` (development), ``test data``,
        ``paraphrased``, or ``test data, paraphrased``."""
        parts = ["test data"] if self.split is DataSplit.TEST else []
        if self.paraphrased:
            parts.append("paraphrased")
        return ", ".join(parts)

    @model_validator(mode="after")
    def _check_play(self) -> TurnRecord:
        if self.end is not None and (self.end is TurnEnd.CLIFF) is not self.cliff:
            raise ValueError(f"a turn that ended {self.end.value} has cliff={self.cliff}")
        if (self.model_actions is None) is not (self.unreadable_actions is None):
            raise ValueError("model_actions and unreadable_actions are recorded together")
        if (self.unreadable_actions or 0) > (self.model_actions or 0):
            raise ValueError("more unreadable actions than actions")
        return self

    @property
    def simulator(self) -> str | None:
        """Who played the user simulator: ``sim_model``, else the evaluated model; ``None`` for guided.

        Agentic EX depends on the simulator's replies to ASK_USER, so two agentic
        systems whose simulators differ are not compared on their agents alone
        (``cypherturn report`` flags such pairs); the paper uses one simulator model
        for every evaluated model (CypherTurn §2.5).
        """
        if self.protocol is ProtocolName.GUIDED:
            return None
        return self.sim_model or self.model

    @model_validator(mode="after")
    def _check(self) -> TurnRecord:
        if self.depends_on is not None and self.depends_on >= self.turn:
            raise ValueError(
                f"depends_on={self.depends_on} must be an earlier turn than {self.turn}"
            )
        if self.cliff and self.predicted_cypher is not None:
            raise ValueError("a cliff turn has no predicted query")
        if any(count < 0 for count in self.actions.values()):
            raise ValueError("action counts must be >= 0")
        return self

    @property
    def chain_dependent(self) -> bool:
        """True when the turn builds on an earlier turn's result."""
        return self.depends_on is not None

    @property
    def budget_exhausted(self) -> bool:
        """The turn's budget ran out (CypherTurn Table 25, "exhaustion").

        Agentic: the shared budget ``B = T x m`` reached zero by the end of the turn,
        or was zero before it (a cliff turn) — the paper's "sessions whose shared
        budget reached zero". Guided has no shared budget: a turn counts only when
        its 3 actions ran out before SUBMIT_ANSWER (the action-cap fallback of
        appendix D.5); a turn that submits with its third action used its budget
        but did not run out of it. SUBMIT_ANSWER ends the loop at once, so a guided
        turn with no actions left and no SUBMIT_ANSWER is exactly the capped one.
        """
        if self.cliff:
            return True
        if self.budget_remaining != 0:
            return False
        if self.protocol is ProtocolName.AGENTIC:
            return True
        return self.actions.get(Action.SUBMIT_ANSWER, 0) == 0

    @property
    def system(self) -> tuple[str, str, int, str, str]:
        """The compared configuration: ``(model, protocol, budget multiplier, variant, harness)``."""
        return (self.model, self.protocol.value, self.budget_multiplier, self.variant, self.harness)

    @property
    def session_key(self) -> SessionKey:
        """Identifies the session as played: run, model, protocol, budget, variant, session id."""
        return (
            self.run_id,
            self.model,
            self.protocol.value,
            self.budget_multiplier,
            self.variant,
            self.session_id,
        )


class PredictionStatus(StrEnum):
    """What happened to the predicted query."""

    OK = "ok"
    NO_PREDICTION = "no_prediction"
    FAILED = "failed"


class PsjsStatus(StrEnum):
    """How a PSJS value was obtained for a turn (docs/design/metrics.md).

    ``ok``, ``no_prediction`` and ``prediction_failed`` give a number (the last
    two give 0.0); ``gold_unsupported`` (the gold's provenance is missing, for
    every prediction of the turn alike), ``prediction_unsupported`` and
    ``not_scored`` (a score written before the metric existed) give ``None``: the
    turn is left out of that PSJS mean and counted apart.
    """

    OK = "ok"
    NO_PREDICTION = "no_prediction"
    PREDICTION_FAILED = "prediction_failed"
    GOLD_UNSUPPORTED = "gold_unsupported"
    PREDICTION_UNSUPPORTED = "prediction_unsupported"
    NOT_SCORED = "not_scored"


class TurnScore(BaseModel):
    """A scored turn (one line of ``scores.jsonl``).

    Attributes:
        schema_version: layout version (1).
        record: the input :class:`TurnRecord`, unchanged.
        valid: the gold query executed; invalid turns are left out of every metric.
        gold_error: the engine's message when the gold query failed.
        ex: strict execution accuracy, 1 iff results are equal, column names and
            order included (docs/design/ex-equivalence.md).
        ex_relaxed: 1 iff results are equal up to column names and column order, the
            lists of gold ``collect()`` columns with undefined order compared as multisets.
        ex_subset: relaxed EX that also accepts extra predicted columns (gold columns
            ⊆ predicted columns); ``None`` in scores written before it existed.
        metrics_version: the metric definitions the score was computed under
            (:data:`METRICS_VERSION`; 1 for scores written before the field existed).
        psjs: CypherBench's provenance subgraph Jaccard similarity in [0, 1] (nodes
            bound by the leading MATCH block; both empty -> 0.0), or ``None`` (see
            ``psjs_status``). Comparable with published PSJS figures.
        psjs_status: how ``psjs`` was obtained.
        psjs_note: why ``psjs`` is missing or 0.0 without a failed query, when it is.
        psjs_output: our output-provenance PSJS (nodes and relationships bound on
            the rows that reach the output; both empty -> 1.0;
            docs/design/psjs-rewrite.md), or ``None``.
        psjs_output_status / psjs_output_note: as for ``psjs``.
        prediction_status: ``ok``, ``no_prediction`` or ``failed``.
        prediction_error_class: the failure class of the predicted query.
        prediction_error: the engine's message for the predicted query.
        ordered: the gold result was compared in order (its RETURN has ORDER BY).
        truncated: a row cap cut the gold or the predicted result.
        gold_rows: rows in the gold result.
        predicted_rows: rows in the predicted result (0 when it did not run).
        executions: engine executions spent on the predicted query (0, 1 or 2).
        metrics: values of the metrics added with
            :func:`~cypherturn.metrics.register_metric`, by name (the built-ins
            have the fields above); written only when not empty, so scores
            without an added metric keep the layout of earlier files.
    """

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = SCHEMA_VERSION
    metrics_version: int = Field(default=METRICS_VERSION, ge=1)
    record: TurnRecord
    valid: bool = True
    gold_error: str | None = None
    ex: int = Field(ge=0, le=1)
    ex_relaxed: int = Field(ge=0, le=1)
    ex_subset: int | None = Field(default=None, ge=0, le=1)
    psjs: float | None = Field(default=None, ge=0.0, le=1.0)
    psjs_status: PsjsStatus
    psjs_note: str | None = None
    psjs_output: float | None = Field(default=None, ge=0.0, le=1.0)
    psjs_output_status: PsjsStatus = PsjsStatus.NOT_SCORED
    psjs_output_note: str | None = None
    prediction_status: PredictionStatus
    prediction_error_class: ErrorClass | None = None
    prediction_error: str | None = None
    ordered: bool = False
    truncated: bool = False
    gold_rows: int = 0
    predicted_rows: int = 0
    executions: int = Field(default=0, ge=0)
    metrics: dict[str, float | None] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _without_empty_metrics(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and not self.metrics:
            data.pop("metrics", None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _read_version_1(cls, data: object, info: ValidationInfo) -> object:
        """Stored scores of metric definitions 1 held our output-provenance PSJS under ``psjs``.

        Applies when reading a file (validation context ``{"stored": True}``,
        :func:`cypherturn.records.read_run`) and the line has no ``metrics_version``.
        """
        stored = bool(info.context and info.context.get(STORED_CONTEXT))
        if not stored or not isinstance(data, dict) or "metrics_version" in data:
            return data
        moved = dict(data)
        moved["metrics_version"] = 1
        moved["psjs_output"] = moved.pop("psjs", None)
        moved["psjs_output_status"] = moved.pop("psjs_status", PsjsStatus.NOT_SCORED)
        moved["psjs_output_note"] = moved.pop("psjs_note", None)
        moved["psjs_status"] = PsjsStatus.NOT_SCORED
        return moved


class ExecutionStats(BaseModel):
    """Engine work spent by one scoring pass (docs/design/psjs-rewrite.md, "One execution for EX and PSJS").

    Attributes:
        predicted_queries: predicted queries that were sent to the engine.
        executions: engine calls for them, fallbacks included.
        fallback_executions: re-runs of an original query after its provenance
            rewrite failed in a way the rewrite may have caused.
        psjs_executions: engine calls for CypherBench PSJS provenance queries (one
            per UNION branch starting with MATCH, gold and predicted), apart from
            ``executions``: that PSJS needs the leading MATCH block's bindings,
            which the scored query's own execution does not return.
        gold_queries: distinct (graph, gold query) pairs scored.
        gold_executions: engine calls for gold queries (cache misses only).
        gold_cache_hits: gold look-ups answered from the cache.
        seconds: wall time of the scoring pass.
    """

    predicted_queries: int = 0
    executions: int = 0
    fallback_executions: int = 0
    psjs_executions: int = 0
    gold_queries: int = 0
    gold_executions: int = 0
    gold_cache_hits: int = 0
    seconds: float = 0.0

    @property
    def executions_per_prediction(self) -> float:
        """Engine calls per predicted query (the issue's goal: at most 1.05)."""
        return self.executions / self.predicted_queries if self.predicted_queries else 0.0


class ScoringSettings(BaseModel):
    """The equivalence and execution settings a run was scored with.

    Attributes:
        rel_tol: relative float tolerance of EX.
        abs_tol: absolute float tolerance of EX (for values near zero).
        timeout_s: per-query timeout, seconds (``None``: the engine's default).
        row_cap: rows kept per query (``None``: the engine's default).
        max_permutations: cap on column assignments checked by relaxed EX.
        workers: scoring threads.
        check_gold_rewrite: each gold query was also run unrewritten and compared.
        verify_failed_rewrites: every failed rewrite was re-run unrewritten.
    """

    rel_tol: float = Field(default=1e-6, gt=0.0)
    abs_tol: float = Field(default=1e-12, ge=0.0)
    timeout_s: float | None = Field(default=None, gt=0.0)
    row_cap: int | None = Field(default=None, ge=1)
    max_permutations: int = Field(default=40_320, ge=1)
    workers: int = Field(default=2, ge=1)
    check_gold_rewrite: bool = True
    verify_failed_rewrites: bool = False


class RunManifest(BaseModel):
    """``run.json``: what a run directory holds and how it was scored.

    Attributes:
        schema_version: layout version (1).
        run_id: the run's identifier(s), joined by ``+`` when several were scored together.
        created_at: when the scores were written (UTC).
        description: free text.
        turns / sessions: counts scored.
        models / protocols / graphs: what the scores cover.
        settings: the :class:`ScoringSettings` used.
        executions: the :class:`ExecutionStats` of the scoring pass.
        metrics_version: the metric definitions the scores follow
            (:data:`METRICS_VERSION`; 1 for manifests written before the field existed).
        engines: graph -> the engine (name, version) its queries ran on; empty for
            manifests written before the field existed.
        files: role -> file name inside the directory (``scores``, ``records``, ``attempts``).
    """

    schema_version: Literal[1] = SCHEMA_VERSION
    run_id: str
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    description: str = ""
    turns: int = 0
    sessions: int = 0
    models: list[str] = Field(default_factory=list)
    protocols: list[str] = Field(default_factory=list)
    graphs: list[str] = Field(default_factory=list)
    settings: ScoringSettings = Field(default_factory=ScoringSettings)
    executions: ExecutionStats = Field(default_factory=ExecutionStats)
    metrics_version: int = Field(default=1, ge=1)
    engines: dict[str, EngineInfo] = Field(default_factory=dict)
    files: dict[str, str] = Field(default_factory=dict)


class QerEpisode(BaseModel):
    """One question answered by one strategy in one independent run (QER input; RAS §4.7).

    Attributes:
        schema_version: layout version (1).
        strategy: ``single``, ``is`` or ``ras`` (RAS §3.4).
        dataset: the graph or dataset (``healthcare``, ``fraud``, ``pole``).
        tier: the question's complexity tier (``easy``, ``medium``, ``hard``).
        model: the model's name or spec string.
        run_index: which of the independent runs (0-based).
        question_id: the question's identifier, stable across runs.
        budget: the budget n the strategy was allowed.
        attempts: the attempts made, in order; the strategies stop at the first
            success, so only the last one can be ``ok``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = SCHEMA_VERSION
    strategy: str = Field(min_length=1)
    dataset: str = Field(min_length=1)
    tier: str = ""
    model: str = Field(min_length=1)
    run_index: int = Field(default=0, ge=0)
    question_id: str = Field(min_length=1)
    budget: int = Field(ge=1)
    attempts: list[QueryAttempt] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> QerEpisode:
        if len(self.attempts) > self.budget:
            raise ValueError(f"{len(self.attempts)} attempts exceed the budget {self.budget}")
        if [a.index for a in self.attempts] != list(range(1, len(self.attempts) + 1)):
            raise ValueError("attempt indexes must be 1, 2, ... in order")
        return self

    def failed_by(self, k: int) -> bool:
        """QEE of the query the strategy would return with budget ``k``: no success in attempts 1..k."""
        return not any(a.ok for a in self.attempts[:k])


class StrategyAttemptLike(Protocol):
    """What :func:`episode_from_strategy_result` reads from one attempt (cf. ``strategies.Attempt``)."""

    def model_dump(self) -> dict[str, object]:
        """The attempt as a dict."""
        ...


class StrategyResultLike(Protocol):
    """What :func:`episode_from_strategy_result` reads (cf. ``strategies.StrategyResult``)."""

    strategy: str
    budget: int
    model: str

    @property
    def attempts(self) -> Sequence[StrategyAttemptLike]:
        """Every attempt, in order."""
        ...


def episode_from_strategy_result(
    result: StrategyResultLike,
    *,
    dataset: str,
    question_id: str,
    tier: str = "",
    run_index: int = 0,
) -> QerEpisode:
    """Turn a strategy's per-question result into the QER input record.

    Args:
        result: a ``cypherturn.strategies.StrategyResult`` (or anything shaped alike).
        dataset: the dataset the question is about.
        question_id: the question's stable identifier.
        tier: its complexity tier.
        run_index: which independent run produced it.

    Returns:
        The :class:`QerEpisode`.

    Raises:
        pydantic.ValidationError: the attempts are malformed.
    """
    return QerEpisode(
        strategy=result.strategy,
        dataset=dataset,
        tier=tier,
        model=result.model,
        run_index=run_index,
        question_id=question_id,
        budget=result.budget,
        attempts=[QueryAttempt.model_validate(a.model_dump()) for a in result.attempts],
    )


class InfraFailure(BaseModel):
    """A session a benchmark run lost to an infrastructure failure (``infra_failures.json``).

    Infrastructure failures (``cypherturn.runner.INFRA_ERRORS``: the model endpoint
    still failing after the model layer's retries, a malformed endpoint answer, an
    unreachable engine) are never scored as model errors: the session is listed
    here, unscored, and the next run with the same configuration continues it
    from its first unfinished turn.

    Attributes:
        session_id: the session.
        error: the failure's message.
    """

    session_id: str
    error: str


class QerFailure(BaseModel):
    """A QER episode a run lost to an infrastructure failure (``infra_failures.json``).

    As for :class:`InfraFailure`: the episode is not written to ``attempts.jsonl``,
    so it counts in no QER figure, and the next run with the same configuration
    plays it.

    Attributes:
        strategy / dataset / tier / model / run_index / question_id: the episode,
            as in :class:`QerEpisode`.
        error: the failure's message.
    """

    strategy: str
    dataset: str
    tier: str
    model: str
    run_index: int
    question_id: str
    error: str
