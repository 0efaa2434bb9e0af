"""Versioned prompt templates: the initial context C0 = (x, S) and the RAS feedback turn.

Two versions:

- ``v1``: LangChain's ``GraphCypherQAChain`` Cypher-generation template
  (``CYPHER_GENERATION_TEMPLATE``), zero-shot, one user message: the prompt
  the RAS paper uses to inject the schema (§4.4). Use it to reproduce the paper.
- ``v2`` (default): the same instructions as a system message holding the
  schema, then few-shot question/Cypher pairs derived from the schema
  (:func:`~cypherturn.strategies.schema_examples`), then the question. Small
  models answer it in Cypher instead of prose (see docs/design/prompts.md).

The feedback turn carries the failed query and the engine's own error message
with a corrective instruction (§4.6). Templates are package files
``prompts/<name>.<version>.txt``; the version is recorded in every strategy result.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from cypherturn.errors import ConfigError
from cypherturn.models import ChatMessage
from cypherturn.strategies._examples import FewShotExample

__all__ = ["PROMPT_VERSION", "PromptSet", "load_prompts"]

PROMPT_VERSION = "v2"
"""Version of the prompt templates used unless another is asked for."""

_GENERATION = "cypher_generation"
_FEEDBACK = "ras_feedback"
_SYSTEM = "cypher_system"


@dataclass(frozen=True, slots=True)
class PromptSet:
    """The templates of one prompt version.

    Attributes:
        version: the version string recorded in results (e.g. ``"v1"``).
        generation: the user turn: ``{schema}`` and ``{question}`` fields when
            ``system`` is None (v1), else ``{question}`` only.
        feedback: template with an ``{error}`` field.
        system: the system turn with a ``{schema}`` field, followed by few-shot
            pairs (v2); None for a single-message prompt (v1).
    """

    version: str
    generation: str
    feedback: str
    system: str | None = None

    def initial_context(
        self, question: str, schema_text: str, examples: Sequence[FewShotExample] = ()
    ) -> list[ChatMessage]:
        """The initial context C0 = (x, S), the same for attempt 1 of every strategy.

        Args:
            question: the natural-language question x.
            schema_text: the graph schema S, already rendered as text by the graph package.
            examples: few-shot pairs, shown as user/assistant turns before the
                question; ignored by single-message (zero-shot) versions such as v1.

        Returns:
            v1: one user message. v2: a system message, two messages per example,
            then the question.
        """
        if self.system is None:
            content = self.generation.format(schema=schema_text.strip(), question=question.strip())
            return [ChatMessage(role="user", content=content)]
        context = [
            ChatMessage(role="system", content=self.system.format(schema=schema_text.strip()))
        ]
        for example in examples:
            context.append(
                ChatMessage(role="user", content=self.generation.format(question=example.question))
            )
            context.append(ChatMessage(role="assistant", content=example.cypher))
        context.append(
            ChatMessage(role="user", content=self.generation.format(question=question.strip()))
        )
        return context

    def feedback_turn(self, query: str, error: str) -> list[ChatMessage]:
        """The (q_t, m_t) pair RAS appends after a failed attempt (Algorithm 2, line 11).

        Args:
            query: the failed query q_t as the model wrote it.
            error: the execution message m_t, the engine's own text.

        Returns:
            Two messages: the assistant's query, then a user turn with the error
            and the corrective instruction.
        """
        return [
            ChatMessage(role="assistant", content=query),
            ChatMessage(role="user", content=self.feedback.format(error=error.strip())),
        ]


def _resource(name: str, version: str) -> Traversable:
    return resources.files("cypherturn.strategies").joinpath("prompts", f"{name}.{version}.txt")


def _read(name: str, version: str, fields: set[str]) -> str:
    try:
        text = _resource(name, version).read_text(encoding="utf-8").rstrip("\n")
    except FileNotFoundError as e:
        raise ConfigError(f"no prompt {name!r} for prompt version {version!r}") from e
    found = {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}
    if found != fields:
        raise ConfigError(
            f"prompt {name}.{version} must use exactly the fields {sorted(fields)}, found {sorted(found)}"
        )
    return text


@functools.cache
def load_prompts(version: str = PROMPT_VERSION) -> PromptSet:
    """Load the prompt templates of one version from the package (cached per version).

    Args:
        version: prompt version, e.g. ``"v1"``.

    Returns:
        The templates.

    Raises:
        ConfigError: the version has no templates, or a template's fields are wrong.
    """
    if _resource(_SYSTEM, version).is_file():
        return PromptSet(
            version=version,
            system=_read(_SYSTEM, version, {"schema"}),
            generation=_read(_GENERATION, version, {"question"}),
            feedback=_read(_FEEDBACK, version, {"error"}),
        )
    return PromptSet(
        version=version,
        generation=_read(_GENERATION, version, {"schema", "question"}),
        feedback=_read(_FEEDBACK, version, {"error"}),
    )
