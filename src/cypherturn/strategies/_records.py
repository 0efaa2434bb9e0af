"""What a strategy run is configured with and what it records: one Attempt per generation, one StrategyResult per question."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    computed_field,
    model_validator,
)

from cypherturn.errors import ConfigError, ErrorClass
from cypherturn.graph import QueryResult
from cypherturn.grounding import Finding, PreviousResult
from cypherturn.models import DEFAULT_TEMPERATURE
from cypherturn.strategies._prompts import PROMPT_VERSION

__all__ = [
    "CONFIDENT_PROBABILITY",
    "DEFAULT_BUDGET",
    "GROUNDING_PARTS",
    "RESULT_SCHEMA_VERSION",
    "Attempt",
    "FollowUp",
    "GroundingParts",
    "StrategyConfig",
    "StrategyResult",
    "Verdict",
]

DEFAULT_BUDGET = 5
"""Inference budget T, attempts per question (RAS paper §4.7)."""

RESULT_SCHEMA_VERSION = 1
"""Version of the StrategyResult layout written to disk."""


class StrategyConfig(BaseModel):
    """Decoding and execution settings shared by every attempt of a run.

    IS and RAS runs compared with each other must use the same config: attempt 1
    then sees the identical prompt and decoding settings (RAS paper §4.6).

    Attributes:
        budget: the budget T, most attempts per question (``single`` always makes one).
        temperature: sampling temperature (RAS §4.7: 0.9).
        max_tokens: most tokens generated per attempt.
        seed: base sampling seed; attempt t uses ``seed + t - 1`` so that resampling
            from the same context (IS) does not repeat one sample. ``None``: unseeded.
        timeout_s: query timeout, seconds (``None``: the engine's default, 120 s).
        row_cap: rows kept per query (``None``: the engine's default).
        prompt_version: version of the prompt templates.
        max_seconds: wall-clock budget of the run, seconds (``None``: none, the
            default, so benchmark and QER runs are unchanged). Once it is spent no
            attempt starts, the one in progress is cut, query timeouts are clamped
            to what is left, and the best finished candidate is returned
            (:mod:`cypherturn.strategies._budget`). Left out of the stored
            configuration while ``None``, so records written before it existed
            read back equal.

    Raises:
        ConfigError: a setting is out of range or of the wrong type (also when a
            record is read back with ``model_validate``, which calls ``__init__``).
    """

    model_config = ConfigDict(frozen=True)

    def __init__(self, **settings: Any) -> None:
        try:
            super().__init__(**settings)
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()
            )
            raise ConfigError(f"invalid strategy settings: {problems}") from e

    budget: int = Field(default=DEFAULT_BUDGET, ge=1)
    temperature: float = Field(default=DEFAULT_TEMPERATURE, ge=0.0)
    max_tokens: int = Field(default=512, ge=1)
    seed: int | None = None
    timeout_s: float | None = Field(default=None, gt=0.0)
    row_cap: int | None = Field(default=None, ge=1)
    prompt_version: str = PROMPT_VERSION
    max_seconds: float | None = Field(default=None, gt=0.0, exclude_if=lambda v: v is None)

    def attempt_seed(self, index: int) -> int | None:
        """The sampling seed of attempt ``index`` (1-based), or None when unseeded."""
        return None if self.seed is None else self.seed + index - 1


CONFIDENT_PROBABILITY = 0.5
"""Model probability of a greedy first candidate above which ``confident`` skips the vote."""

GROUNDING_PARTS = (
    "check", "values", "repair", "grammar", "select", "feedback", "greedy", "vote", "link",
    "confident",
)  # fmt: skip
"""The parts of the grounded strategy ``ras+``, each switchable (``ras+:check,values``)."""

_FIRST_PARTS = frozenset(GROUNDING_PARTS[:7])
"""The parts every record of the grounded strategy names (``vote`` came later)."""


class FollowUp(BaseModel):
    """A conversation's current question and the previous result, for the checks that read them.

    In a conversation the question a strategy answers is the conversation so far
    followed by the current question (:func:`~cypherturn.chat.contextual_question`);
    the grounded strategy's question checks must read the current question alone,
    or a threshold an earlier question stated ("more than 500") would flag a
    follow-up that rightly compares nothing with it.

    Attributes:
        question: the current question as the user typed it.
        previous: the previous answered turn's result when it listed names of one
            label (:func:`~cypherturn.grounding.previous_names`) and the follow-up
            refers to it; with it and the ``repair`` part, a query that ranges over
            that label is restricted to those names
            (:func:`~cypherturn.grounding.bind_reference`).
        earlier: the earlier questions the conversation shows: where one asks for a
            number, an elliptical follow-up ("And in New York?") may too, so its
            count is not rewritten into a list (``answer_shape``).
    """

    model_config = ConfigDict(frozen=True)

    question: str = Field(min_length=1)
    previous: PreviousResult | None = None
    earlier: tuple[str, ...] = ()


class GroundingParts(BaseModel):
    """Which parts of the grounded strategy ``ras+`` are on (every part but ``vote`` by default).

    Attributes:
        check: check every candidate against the schema before it runs
            (labels, relationship types and direction, property keys,
            undefined variables, SQL habits); a flagged query is a failure.
        values: show stored values of low-cardinality string properties in the
            schema text, and check compared literals after a 0-row result.
        repair: apply the deterministic repairs the check and the value check
            find (reversed arrow, case of a name or of a stored value, ``!=``).
        grammar: constrain a GGUF model's decoding with a grammar derived from
            the schema (models without grammar support ignore it).
        select: within the budget, keep sampling past an empty result and
            return the best candidate (rows > empty > flagged > error).
        feedback: feed findings back as notes in a fresh context instead of
            appending the failed query (the RAS paper's form, Algorithm 2).
        greedy: decode the first attempt at temperature 0, the model's most likely
            query; later attempts sample at the configured temperature.
        vote: execution-based self-consistency: after a candidate that returns rows
            and passes the checks, keep drawing candidates from the same context until
            two return the same rows (or the budget ends), and return the largest group
            of candidates that agree (ties: the earliest). **Off by default** since
            2026-12-06: replayed on 236 development questions, stopping at the first
            verified candidate scored the same relaxed EX (paired +0.000 [-0.02,
            +0.02]) in 1.57 model calls instead of 2.78
            (``benchmarks/bench_stopping.py``, docs/results/stopping). Records written
            before this part existed, and whole records without it, read it as on.
        link: value linking: stored values that the question's words name are listed,
            with their label or relationship type and property key, under the
            question (:func:`cypherturn.grounding.link_values`). Records written
            before this part existed read it as on.
        confident: under ``vote``, a greedy first candidate that the model itself
            gives a probability of at least :data:`CONFIDENT_PROBABILITY` is accepted
            without a second candidate: a second draw would return the same query
            at least that often, so the vote would mostly pay a model call to
            confirm it (adaptive stopping of self-consistency, as in Aggarwal et
            al. 2023, "Let's Sample Step by Step", with the model's own sequence
            probability as the stopping signal). Needs a model that reports
            :attr:`~cypherturn.models.ChatResponse.logprob` (GGUF). Records written
            before this part existed read it as off.
    """

    model_config = ConfigDict(frozen=True)

    check: bool = True
    values: bool = True
    repair: bool = True
    grammar: bool = True
    select: bool = True
    feedback: bool = True
    greedy: bool = True
    vote: bool = False
    link: bool = True
    confident: bool = True

    @model_validator(mode="before")
    @classmethod
    def _older_records(cls, data: Any) -> Any:
        # a whole record (every part named) from before a part existed: it ran without
        # `confident`, and with `vote` (then always on)
        if isinstance(data, dict) and data.keys() >= _FIRST_PARTS:
            return {"confident": False, "vote": True, **data}
        return data

    @classmethod
    def only(cls, names: list[str]) -> GroundingParts:
        """Parts with exactly ``names`` on.

        Raises:
            ConfigError: a name is not one of :data:`GROUNDING_PARTS`.
        """
        unknown = sorted(set(names) - set(GROUNDING_PARTS))
        if unknown:
            raise ConfigError(
                f"unknown ras+ part(s) {', '.join(unknown)}; choose from: {', '.join(GROUNDING_PARTS)}"
            )
        return cls(**{part: part in names for part in GROUNDING_PARTS})

    @classmethod
    def parse(cls, options: str) -> GroundingParts:
        """Parts from a strategy name's options.

        ``check,values``: only those parts on. ``-greedy``, ``+vote``, ``+vote,-link``:
        the default parts (every part but ``vote``) with those dropped (``-``) or
        added (``+``).

        Raises:
            ConfigError: an unknown part, or signed and unsigned names mixed.
        """
        names = [p.strip() for p in options.split(",") if p.strip()]
        signed = {n[1:].strip(): n[0] == "+" for n in names if n[0] in "+-"}
        if not signed:
            return cls.only(names)
        if len(signed) != len(names):
            raise ConfigError(
                f"ras+ parts {options!r}: list the parts to keep, or only parts to drop "
                "(-part) and add (+part), not both"
            )
        cls.only(list(signed))  # validates the names
        return cls(**signed)

    def enabled(self) -> list[str]:
        """The names of the parts that are on, in :data:`GROUNDING_PARTS` order."""
        return [part for part in GROUNDING_PARTS if getattr(self, part)]


Verdict = Literal["answer", "empty", "flagged", "explained_empty", "error"]
"""How the grounded strategy rates an attempt, best first: rows and no finding; no rows
that no check explains (an empty answer can be right); executed with findings; no rows
explained by a finding; not executed."""


class Attempt(BaseModel):
    """One generate-extract-execute step (one t of Algorithms 1 and 2).

    Attributes:
        index: t, 1-based.
        context_messages: messages in the context the model was given.
        raw_text: the model's completion, unchanged.
        query: the Cypher extracted from it (``""`` when none was found).
        outcome: ``"ok"`` when the engine executed the query (m_t not in M_error).
        error_class: the failure class; an empty extraction is ``syntax``.
        error_message: the engine's own message (the feedback m_t), or the
            extraction message for an empty extraction.
        row_count: rows returned (after the row cap), on success.
        truncated: the row cap cut the result.
        prompt_tokens: prompt tokens as counted by the model (the context size).
        completion_tokens: tokens generated.
        finish_reason: the model's finish reason, when reported.
        seed: the sampling seed used.
        model_latency_s: wall time of the model call, seconds.
        execution_latency_s: wall time of the engine call, seconds (0 when nothing ran).
        original_query: the model's query before repairs (``None`` when none was applied).
        findings: what the schema and value checks found in the executed ``query``
            (grounded strategy only).
        repairs: the findings whose deterministic edits turned ``original_query``
            into ``query``, in the order applied.
        verdict: the grounded strategy's rating of the attempt.
        grammar: decoding was constrained by the schema grammar.
        temperature: the sampling temperature of this attempt (``None`` in records
            written before it was recorded: the config's).
        votes: with ``ras+``'s ``vote`` part, how many attempts so far (this one
            included) returned the same rows as this one; ``None`` otherwise.
        logprob: the completion's log-probability under the model, nats
            (:attr:`cypherturn.models.ChatResponse.logprob`; ``None`` when the model
            does not report one).
    """

    index: int = Field(ge=1)
    context_messages: int = Field(ge=1)
    raw_text: str
    query: str
    outcome: Literal["ok", "error"]
    error_class: ErrorClass | None = None
    error_message: str | None = None
    row_count: int | None = None
    truncated: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    seed: int | None = None
    model_latency_s: float = 0.0
    execution_latency_s: float = 0.0
    original_query: str | None = None
    findings: list[Finding] = Field(default_factory=list)
    repairs: list[Finding] = Field(default_factory=list)
    verdict: Verdict | None = None
    grammar: bool = False
    temperature: float | None = None
    votes: int | None = None
    logprob: float | None = None

    @property
    def ok(self) -> bool:
        """True when the query executed."""
        return self.outcome == "ok"


class StrategyResult(BaseModel):
    """The outcome of one strategy on one question (the return value of Algorithms 1 and 2).

    Attributes:
        schema_version: layout version of this record.
        strategy: ``single``, ``is`` or ``ras``.
        budget: the budget T the run was allowed.
        prompt_version: version of the prompt templates.
        model: the model's spec string.
        question: the question x.
        config: the decoding and execution settings.
        attempts: every attempt, in order.
        final_query: the first executable query, else the last query (the fallback).
        final_result: its rows when it executed, else None.
        success: True when the final query executed.
        grounding: the grounded strategy's parts (``None`` for single, is, ras).
        selected_attempt: index of the attempt the final query comes from.
        stop_reason: why the run stopped before its budget T when the wall-clock
            budget (``config.max_seconds``) was spent; ``None`` otherwise (and left
            out of the record). ``attempts`` may then be empty.
        elapsed_s: wall time of the run, seconds, recorded for runs under a time
            budget (``config.max_seconds``) so the caller can spend the rest of
            it (the answer in words); ``None``, and left out of the record,
            otherwise, so benchmark and QER records keep their layout.
        recalled: the questions of the remembered pairs shown as examples
            (:mod:`cypherturn.memory`), in the order shown (the nearest last); empty, and left out of the
            record, when none was shown.
    """

    schema_version: int = RESULT_SCHEMA_VERSION
    strategy: str
    budget: int = Field(ge=1)
    prompt_version: str
    model: str
    question: str
    config: StrategyConfig
    attempts: list[Attempt]
    final_query: str
    final_result: QueryResult | None
    success: bool
    grounding: GroundingParts | None = None
    selected_attempt: int | None = None
    stop_reason: str | None = Field(default=None, exclude_if=lambda v: v is None)
    elapsed_s: float | None = Field(default=None, ge=0.0, exclude_if=lambda v: v is None)
    recalled: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def attempts_used(self) -> int:
        """Number of attempts made (1..budget; 0 when the time budget ran out before the first ended)."""
        return len(self.attempts)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def context_messages(self) -> list[int]:
        """Messages in the context at each attempt: constant for IS, +2 per failure for RAS."""
        return [a.context_messages for a in self.attempts]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def context_prompt_tokens(self) -> list[int]:
        """Prompt tokens at each attempt, as counted by the model."""
        return [a.prompt_tokens for a in self.attempts]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens over all attempts (the compute spent)."""
        return sum(a.prompt_tokens + a.completion_tokens for a in self.attempts)
