"""Model-written questions: a chat model prompted with the schema and a sampled subgraph (RAS §4.3).

The model sees the rendered schema, a handful of relationship instances
sampled from the loaded graph (their end nodes' labels and properties) and the
tier's definition, and writes one question per line. The questions are
appended to a question set marked ``source="model"`` with the model's spec in
``generator_version``; they carry no values or check query (the model chooses
its own wording), so validation checks only their structure.
"""

from __future__ import annotations

import json
import random
import re
from typing import cast

from cypherturn.errors import ConfigError
from cypherturn.experiments._questions import TIERS, Question, QuestionSet
from cypherturn.graph import GraphEngine, render_schema_prompt
from cypherturn.models import ChatMessage, ChatModel, ChatResponse, GuardedChatModel

__all__ = [
    "MIN_QUESTION_CHARS",
    "MODEL_GENERATOR_VERSION",
    "QUESTION_ENDINGS",
    "TIER_DEFINITIONS",
    "TOKENS_PER_QUESTION",
    "generate_model_questions",
    "sample_subgraph",
]

MODEL_GENERATOR_VERSION = "model-1"
"""Version of the prompt and parsing below, stored with the model's spec."""

TIER_DEFINITIONS = {
    "easy": "entity retrieval and direct attribute filters on one node label",
    "medium": "joins across two or three entity types through relationships",
    "hard": "cyclic or mutual multi-hop patterns and conditional aggregation",
}
"""The complexity tiers as the RAS paper's appendix A.2 defines them."""

MIN_QUESTION_CHARS = 15
"""Shortest line, in characters, kept as a model-written question."""

QUESTION_ENDINGS = "?."
"""Characters a kept question may end with (models write requests as well as questions)."""

TOKENS_PER_QUESTION = 48
"""Generation budget per asked-for question, tokens: a question line is rarely over 40."""

_PREAMBLE_TOKENS = 64
"""Budget for what a model writes before its first question ("Here are ...")."""

_LINE = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])?\s*(.+?)\s*$")


def sample_subgraph(engine: GraphEngine, size: int = 6, *, seed: int = 0) -> list[str]:
    """A few relationship instances of the graph, one text line each.

    Args:
        engine: an engine on a loaded graph.
        size: instances to return.
        seed: sampling seed.

    Returns:
        Lines ``(:A {..})-[:TYPE]->(:B {..})`` with the nodes' properties.

    Raises:
        QueryError, EngineConnectionError: the sampling query failed.
    """
    rows = engine.execute(
        "MATCH (a)-[r]->(b) RETURN labels(a)[0], properties(a), type(r), labels(b)[0], "
        "properties(b) LIMIT 500"
    ).rows
    picked = random.Random(seed).sample(rows, min(size, len(rows)))
    return [
        f"(:{a} {json.dumps(pa, default=str)})-[:{r}]->(:{b} {json.dumps(pb, default=str)})"
        for a, pa, r, b, pb in picked
    ]


def _prompt(schema_text: str, samples: list[str], tier: str, count: int) -> list[ChatMessage]:
    body = (
        f"Graph schema:\n{schema_text}\n\nSample of the graph:\n"
        + "\n".join(samples)
        + f"\n\nWrite {count} different natural-language questions a user could ask of this graph. "
        f"Complexity: {tier} ({TIER_DEFINITIONS[tier]}). Use names and values from the sample. "
        "Write one question per line and nothing else."
    )
    return [ChatMessage(role="user", content=body)]


def _parse(text: str) -> list[str]:
    found = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        question = match.group(1).strip().strip('"')
        if len(question) >= MIN_QUESTION_CHARS and question[-1] in QUESTION_ENDINGS:
            found.append(question)
    return found


def _write(
    model: ChatModel, messages: list[ChatMessage], temperature: float, budget: int, seed: int
) -> ChatResponse:
    """One tier's completion; a model with decoding guards stops at a runaway repetition."""
    if model.supports_decoding_guards:
        # the property is the model's promise that its chat takes the guards
        return cast(GuardedChatModel, model).chat(
            messages, temperature=temperature, max_tokens=budget, seed=seed, repetition_guard=True
        )
    return model.chat(messages, temperature=temperature, max_tokens=budget, seed=seed)


def generate_model_questions(
    qs: QuestionSet,
    model: ChatModel,
    engine: GraphEngine,
    *,
    tiers: tuple[str, ...] = TIERS,
    count: int = 5,
    seed: int = 0,
    temperature: float = 0.7,
    max_tokens: int | None = None,
) -> QuestionSet:
    """Ask a model for ``count`` more questions per tier and append them to a copy of ``qs``.

    Args:
        qs: the question set to extend.
        model: the chat model that writes questions.
        engine: an engine on the set's graph, loaded (for the schema and the sample).
        tiers: the tiers to write questions for.
        count: questions asked for per tier (the model may write fewer; duplicates are dropped).
        seed: sampling seed for the subgraph and the model.
        temperature: sampling temperature.
        max_tokens: most tokens per tier; ``None``: ``count`` questions'
            worth (:data:`TOKENS_PER_QUESTION` each, plus a preamble's).
            Models with decoding guards also stop at a runaway repetition
            (small models repeat one line until the budget runs out), so a
            tier costs what its questions cost, not the whole budget.

    Returns:
        A new set with the model's questions (ids ``<prefix>_<tier>_mNN``) appended.

    Raises:
        ConfigError: unknown tier, count < 1 or max_tokens < 1.
        ModelError: the model failed.
        QueryError, EngineConnectionError: the graph could not be read.
    """
    if count < 1:
        raise ConfigError(f"count must be at least 1, got {count}")
    if max_tokens is not None and max_tokens < 1:
        raise ConfigError(f"max_tokens must be at least 1, got {max_tokens}")
    unknown = [t for t in tiers if t not in TIERS]
    if unknown:
        raise ConfigError(f"unknown tier(s) {', '.join(unknown)}; choose from {', '.join(TIERS)}")
    schema_text = render_schema_prompt(engine.schema())
    known = {q.question for q in qs.questions}
    prefix = qs.questions[0].id.split("_", 1)[0] if qs.questions else qs.dataset
    added: list[Question] = []
    chosen = [t for t in TIERS if t in tiers]
    budget = (
        max_tokens if max_tokens is not None else TOKENS_PER_QUESTION * count + _PREAMBLE_TOKENS
    )
    for offset, tier in enumerate(chosen):
        samples = sample_subgraph(engine, seed=seed + offset)
        messages = _prompt(schema_text, samples, tier, count)
        response = _write(model, messages, temperature, budget, seed + offset)
        number = sum(1 for q in qs.questions if q.tier == tier and q.source == "model")
        for text in _parse(response.text)[:count]:
            if text in known:
                continue
            known.add(text)
            number += 1
            added.append(
                Question(
                    id=f"{prefix}_{tier}_m{number:02d}",
                    dataset=qs.dataset,
                    tier=tier,
                    question=text,
                    source="model",
                    generator_version=f"{MODEL_GENERATOR_VERSION}:{model.spec}",
                )
            )
    return qs.model_copy(update={"questions": [*qs.questions, *added]})
