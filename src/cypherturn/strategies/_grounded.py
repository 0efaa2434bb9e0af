"""``ras+``: Reflection-Augmented Scaling grounded in the schema and the stored data.

The RAS loop (RAS paper Algorithm 2) only sees the engine's errors, but most
wrong queries of small models run and return 0 rows: a reversed relationship,
a property on the wrong label, a literal that matches no stored value. ``ras+``
adds, each switchable through :class:`GroundingParts` so its effect can be
measured (``ras+`` = all on; ``ras+:check,values`` = only those; no part on is
plain ``ras``):

- ``check``: every candidate is checked against the schema before it runs; a
  flagged query counts as a failure even when it executes.
- ``values``: the schema text lists stored values of low-cardinality string
  properties; after 0 rows every compared literal is looked up.
- ``repair``: unambiguous fixes are applied and recorded (never silently).
- ``grammar``: a GGUF model decodes under the schema's grammar.
- ``select``: an unexplained empty result does not end the loop; the best
  candidate within the budget is returned (rows > empty > flagged > error).
- ``feedback``: findings go back as notes appended to the question in a fresh
  C0, without the failed query, which small models copy back unchanged
  (deviation from Algorithm 2, measured against it in benchmarks/).
- ``greedy``: attempt 1 decodes at temperature 0 (the model's most likely
  query); later attempts sample at the configured temperature.
- ``link``: value linking: the stored values the question's words name are
  listed under the question with their label and property key.
- ``vote``: execution-based self-consistency (Wang et al. 2023, "Self-Consistency
  Improves Chain of Thought Reasoning", with answers compared by their rows as in
  execution-guided text-to-SQL decoding): a candidate that returns rows and passes
  the checks is accepted once another candidate returns the same rows; at the end
  of the budget the largest group of agreeing candidates wins (ties: the earliest).
  This spends at least two model calls on every answered question, unless
- ``confident``: the greedy first candidate, unrepaired, has a model probability
  of at least ``CONFIDENT_PROBABILITY`` (0.5): it is accepted alone (adaptive
  stopping; Aggarwal et al. 2023).

Zero rows count as a failure only when a check explains them: an empty answer
can be the right one.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cypherturn.errors import ErrorClass, QueryError, TimeBudgetSpent
from cypherturn.graph import GraphEngine, QueryResult
from cypherturn.grounding import (
    CheckReport,
    Finding,
    GraphIndex,
    check_query,
    error_hint,
    graph_index,
    ground_values,
    link_values,
    looks_empty,
    question_repairs,
    render_links,
    repair_query,
    schema_grammar,
)
from cypherturn.models import ChatMessage, ChatModel, ChatResponse, call_limits
from cypherturn.strategies._budget import TimeBudget
from cypherturn.strategies._examples import FewShotExample, grounded_examples
from cypherturn.strategies._extract import extract_cypher
from cypherturn.strategies._prompts import load_prompts
from cypherturn.strategies._records import (
    CONFIDENT_PROBABILITY,
    Attempt,
    FollowUp,
    GroundingParts,
    StrategyConfig,
    StrategyResult,
    Verdict,
)
from cypherturn.strategies._scaling import (
    EMPTY_EXTRACTION_MESSAGE,
    TokenCallback,
    attempt_record,
)

__all__ = ["NOTES_HEADER", "GroundedStrategy", "answer_key", "looks_empty"]

logger = logging.getLogger(__name__)

NOTES_HEADER = (
    "Notes from checking earlier answers to this question against the graph (follow them):"
)
"""First line of the notes the ``feedback`` part appends to the question."""

_RANK: dict[Verdict, int] = {
    "answer": 4,
    "empty": 3,
    "flagged": 2,
    "explained_empty": 1,
    "error": 0,
}


def _engine_message(message: str) -> str:
    """The engine's message without the echo of the query (FalkorDB's ``errCtx``)."""
    head = message.split(" errCtx:", 1)[0]
    return head.removeprefix("errMsg: ").strip()


@dataclass(frozen=True, slots=True)
class GroundedStrategy:
    """The ``ras+`` strategy with a set of :class:`GroundingParts`.

    Attributes:
        parts: which grounding parts are on.
        on_token: called with each generated piece of text when the model streams.
        follow_up: in a conversation, the current question and the previous result
            (:class:`FollowUp`): the question checks read that question instead of the
            whole text answered, and a follow-up about "those" is bound to the
            names the previous turn listed. ``None``: the question stands alone.
    """

    parts: GroundingParts
    on_token: TokenCallback | None = None
    follow_up: FollowUp | None = None

    @property
    def name(self) -> str:
        """``ras+`` with the default parts, else ``ras+:<parts>`` (``ras+:`` with none).

        The default changed on 2026-12-06 (``vote`` off): a record's ``grounding``
        names its parts, whatever its strategy name.
        """
        if self.parts == GroundingParts():
            return "ras+"
        return "ras+:" + ",".join(self.parts.enabled())

    def initial_context(
        self,
        engine: GraphEngine,
        question: str,
        schema_text: str,
        config: StrategyConfig | None = None,
        examples: Sequence[FewShotExample] = (),
    ) -> list[ChatMessage]:
        """See :meth:`~cypherturn.strategies.Strategy.initial_context`.

        With the ``values`` part the schema text is rebuilt from the graph with
        its stored values, and the graph's own examples replace the built ones
        (recalled ones are kept). The ``link`` part's notes on the question's
        values are added by :meth:`run`, after this context.
        """
        prompts = load_prompts((config or StrategyConfig()).prompt_version)
        if self.parts.values:
            index = graph_index(engine)
            schema_text = index.schema_text(values=True)
            recalled = [example for example in examples if example.recalled]
            built = [example for example in examples if not example.recalled]
            examples = [*(grounded_examples(index) or built), *recalled]
        return prompts.initial_context(question, schema_text, examples)

    def run(
        self,
        model: ChatModel,
        engine: GraphEngine,
        question: str,
        schema_text: str,
        config: StrategyConfig | None = None,
        examples: Sequence[FewShotExample] = (),
    ) -> StrategyResult:
        """Answer one question with at most ``config.budget`` grounded attempts.

        Args are those of :meth:`cypherturn.strategies.Strategy.run`; with the
        ``values`` part the schema text is rebuilt from the graph with its stored values.

        Returns:
            Every attempt (with findings, repairs and a verdict) and the selected
            query; when ``config.max_seconds`` runs out, the best of the attempts
            that finished (none: no query, ``success`` false) and ``stop_reason``.

        Raises:
            ModelError: the model failed.
            EngineConnectionError: the engine is unreachable.
            ConfigError: unknown prompt version, or a grammar llama.cpp rejects.
        """
        config = config or StrategyConfig()
        prompts = load_prompts(config.prompt_version)
        clock = TimeBudget(config.max_seconds)
        index = graph_index(engine)
        base = self.initial_context(engine, question, schema_text, config, examples)
        if self.parts.link:
            base = _with_text(base, render_links(link_values(question, index), index))
        grammar = self._grammar(model, index)
        context = list(base)
        notes: list[str] = []
        attempts: list[Attempt] = []
        results: dict[int, QueryResult] = {}
        answers: dict[int, tuple[str, ...]] = {}
        stop_reason: str | None = None
        for t in range(1, config.budget + 1):
            if clock.spent():
                stop_reason = clock.reason(len(attempts), during=False)
                break
            temperature = 0.0 if t == 1 and self.parts.greedy else config.temperature
            try:
                with call_limits(deadline=clock.deadline):
                    response = self._generate(model, context, config, t, grammar, temperature)
                    attempt, result = self._attempt(
                        engine, index, t, len(context), response, config, question, clock
                    )
            except TimeBudgetSpent:
                # the attempt in progress is cut: the finished ones are chosen from
                stop_reason = clock.reason(len(attempts), during=True)
                break
            attempt.grammar = grammar is not None
            attempt.temperature = temperature
            attempts.append(attempt)
            if result is not None:
                results[t] = result
            logger.debug("%s attempt %d: %s", self.name, t, attempt.verdict)
            if attempt.verdict == "answer" and result is not None and self.parts.vote:
                answers[t] = answer_key(result)
                attempt.votes = sum(key == answers[t] for key in answers.values())
                if attempt.votes >= 2 or t == config.budget or self._confident(attempt):
                    break
                continue
            if attempt.verdict == "answer" or (
                attempt.verdict == "empty" and not self.parts.select
            ):
                break
            if t == config.budget:
                break
            if self.parts.feedback:
                notes += [m for m in _attempt_notes(attempt) if m not in notes]
                context = _with_notes(base, notes)
            else:
                shown = attempt.query or attempt.raw_text.strip()
                context.extend(prompts.feedback_turn(shown, self._paper_feedback(attempt)))
        chosen = self._choose(attempts, answers) if attempts else None
        return StrategyResult(
            strategy=self.name,
            budget=config.budget,
            prompt_version=prompts.version,
            model=model.spec,
            question=question,
            config=config,
            attempts=attempts,
            final_query=chosen.query if chosen is not None else "",
            final_result=results.get(chosen.index) if chosen is not None else None,
            success=chosen is not None and chosen.ok,
            grounding=self.parts,
            selected_attempt=chosen.index if chosen is not None else None,
            stop_reason=stop_reason,
            elapsed_s=clock.elapsed_s(),
            recalled=[e.question for e in examples if e.recalled and prompts.system is not None],
        )

    def _confident(self, attempt: Attempt) -> bool:
        """Whether ``confident`` ends the vote at this greedy, unrepaired first candidate."""
        return (
            self.parts.confident
            and attempt.index == 1
            and attempt.temperature == 0.0
            and not attempt.repairs
            and attempt.logprob is not None
            and math.exp(attempt.logprob) >= CONFIDENT_PROBABILITY
        )

    def _grammar(self, model: ChatModel, index: GraphIndex) -> str | None:
        if not (self.parts.grammar and getattr(model, "supports_grammar", False)):
            return None
        return schema_grammar(index.complete_schema(), values=index.categorical_values())

    def _generate(
        self,
        model: ChatModel,
        context: list[ChatMessage],
        config: StrategyConfig,
        index: int,
        grammar: str | None,
        temperature: float,
    ) -> ChatResponse:
        extra: dict[str, Any] = {}
        if grammar is not None:
            extra["grammar"] = grammar
        if self.on_token is not None:
            extra["on_token"] = self.on_token
        return model.chat(
            list(context),
            temperature=temperature,
            max_tokens=config.max_tokens,
            seed=config.attempt_seed(index),
            **extra,
        )

    def _paper_feedback(self, attempt: Attempt) -> str:
        """m_t of Algorithm 2: the engine's own message, then the findings and, with ``check``, a hint."""
        lines = [attempt.error_message] if attempt.error_message else []
        if self.parts.check and attempt.error_message:
            hint = error_hint(_engine_message(attempt.error_message))
            lines += [hint] if hint else []
        lines += [f.message for f in attempt.findings]
        if not lines:
            lines = ["the query returned no rows"]
        return "\n".join(lines)

    def _choose(self, attempts: list[Attempt], answers: dict[int, tuple[str, ...]]) -> Attempt:
        if answers:
            first = {
                key: min(i for i, k in answers.items() if k == key) for key in answers.values()
            }
            size = {key: sum(k == key for k in answers.values()) for key in first}
            best = max(first, key=lambda key: (size[key], -first[key]))
            return attempts[first[best] - 1]
        if not self.parts.select:
            return next((a for a in attempts if a.verdict in ("answer", "empty")), attempts[-1])
        return max(attempts, key=lambda a: (_RANK[a.verdict or "error"], -a.index))

    def _check(self, query: str, index: GraphIndex) -> CheckReport:
        if not self.parts.check and not self.parts.repair:
            return CheckReport(parsed=True)
        return check_query(query, index)

    def _attempt(
        self,
        engine: GraphEngine,
        index: GraphIndex,
        t: int,
        context_messages: int,
        response: ChatResponse,
        config: StrategyConfig,
        question: str,
        clock: TimeBudget,
    ) -> tuple[Attempt, QueryResult | None]:
        """Check, repair, execute and ground one completion.

        Raises:
            TimeBudgetSpent: no time is left for one of its queries.
        """
        original = extract_cypher(response.text)
        query = original
        repairs: list[Finding] = []
        if self.parts.repair:
            query, repairs, report = repair_query(query, index)
        else:
            report = self._check(query, index) if query else CheckReport(parsed=False)
        findings = list(report.findings) if self.parts.check else []
        if (self.parts.check or self.parts.repair) and query:
            before = query
            follow_up = self.follow_up
            query, applied, asked = question_repairs(
                query,
                question if follow_up is None else follow_up.question,
                index,
                repair=self.parts.repair,
                previous=None if follow_up is None else follow_up.previous,
                # checks alone would only flag the follow-up, and the turn would be refused
                reference=follow_up is not None and self.parts.repair,
                earlier=() if follow_up is None else follow_up.earlier,
            )
            if applied:
                repairs += applied
                if self.parts.check and query != before:
                    findings = list(check_query(query, index).findings)
            if self.parts.check:
                findings += asked
        result: QueryResult | None = None
        error_class: ErrorClass | None = None
        error_message: str | None = None
        started = time.perf_counter()
        if not query:
            error_class, error_message = ErrorClass.SYNTAX, EMPTY_EXTRACTION_MESSAGE
        else:
            result, error_class, error_message = _execute(engine, query, config, clock)
            if self.parts.values:
                grounded = ground_values(
                    query,
                    (result, error_class, error_message),
                    index,
                    run=lambda q: _execute(engine, q, config, clock),
                    result_of=lambda outcome: outcome[0],
                    repair=self.parts.repair,
                )
                query, (result, error_class, error_message) = grounded.query, grounded.outcome
                repairs += grounded.repairs
                findings += grounded.findings
        execution_s = time.perf_counter() - started
        attempt = attempt_record(
            index=t,
            context_messages=context_messages,
            response=response,
            query=query,
            result=result,
            error=(error_class, error_message),
            seed=config.attempt_seed(t),
            execution_s=execution_s,
            original_query=original if repairs else None,
            findings=findings,
            repairs=repairs,
            verdict=_verdict(result, findings),
        )
        return attempt, result


def _execute(
    engine: GraphEngine, query: str, config: StrategyConfig, clock: TimeBudget
) -> tuple[QueryResult | None, ErrorClass | None, str | None]:
    """Run one query under the configured limits, its timeout clamped to the time budget.

    Raises:
        TimeBudgetSpent: no time is left to run it.
    """
    timeout = clock.query_timeout(engine, config.timeout_s)
    try:
        return engine.execute(query, timeout_s=timeout, row_cap=config.row_cap), None, None
    except QueryError as e:
        return None, e.error_class, e.engine_message


def answer_key(result: QueryResult) -> tuple[str, ...]:
    """What two candidates must share to agree under the ``vote`` part: their rows as a multiset.

    Column names and order, row order and the int/float distinction (FalkorDB's
    ``sum`` of integers is a float) are ignored, floats compared to 6 significant
    digits, as relaxed EX compares answers; each row is its sorted value strings.

    Returns:
        The sorted row keys, one string per row.
    """

    def value(v: Any) -> str:
        if isinstance(v, bool) or v is None:
            return repr(v)
        if isinstance(v, int | float):
            return f"{float(v):.6g}"
        if isinstance(v, list):
            return "[" + ",".join(value(x) for x in v) + "]"
        return repr(v)

    return tuple(sorted("|".join(sorted(value(v) for v in row)) for row in result.rows))


def _verdict(result: QueryResult | None, findings: list[Finding]) -> Verdict:
    flagged = [f for f in findings if f.code not in ("sql_habit", "engine_pitfall")]
    if result is None:
        return "error"
    if looks_empty(result):
        return "explained_empty" if flagged else "empty"
    return "flagged" if flagged else "answer"


def _attempt_notes(attempt: Attempt) -> list[str]:
    """What the next attempt is told about this one, one line each, without its query."""
    notes = [f.message for f in attempt.findings]
    if attempt.error_message and not attempt.ok:
        message = _engine_message(attempt.error_message)
        hint = error_hint(message)
        notes.append(f"a query failed with: {message}" + (f" ({hint})" if hint else ""))
    if attempt.verdict == "empty" and not notes:
        notes.append(
            "a query returned no rows; check the relationship directions and stored values"
        )
    return notes


def _with_text(base: list[ChatMessage], text: str) -> list[ChatMessage]:
    """C0 with ``text`` appended to the question (the last user message); unchanged for ``""``."""
    if not text:
        return base
    last = base[-1]
    return [*base[:-1], ChatMessage(role=last.role, content=f"{last.content}\n\n{text}")]


def _with_notes(base: list[ChatMessage], notes: list[str]) -> list[ChatMessage]:
    """C0 with the notes appended to the question (the last user message)."""
    body = "\n".join(f"- {note}" for note in notes)
    return _with_text(base, f"{NOTES_HEADER}\n{body}")
