"""The agentic protocol's user simulator: two-phase anti-leakage pipeline (CypherTurn App. D.5).

Phase 1 classifies the model's question: a schema or technical probe is
rejected with one of four rotating canned replies; a clarification request on a
turn with a pre-authored reply (``ambiguity_info``) gets it; anything else gets an
LLM reply at temperature 0.5 in the session persona's voice. Phase 2 scans the
LLM reply for schema terms and replaces a leaking reply with a safe fallback.
From the fourth ASK_USER of a turn on (after three), an impatience signal is
added to the simulator's context.

The simulator is a player: it reads a turn as
:class:`~cypherturn.sessions.PlayerTurn` (utterance and pre-authored reply), never
the gold query or result.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from cypherturn.agent._parse import split_reasoning
from cypherturn.graph import GraphSchema
from cypherturn.models import ChatMessage, ChatModel
from cypherturn.sessions import PlayerTurn

__all__ = [
    "FALLBACK_REPLY",
    "IMPATIENCE_AFTER",
    "REJECTIONS",
    "SIMULATOR_TEMPERATURE",
    "SimIntent",
    "SimulatorReply",
    "UserSimulator",
    "schema_terms",
]

SIMULATOR_TEMPERATURE = 0.5
"""Sampling temperature of the simulator's LLM replies (App. D.5)."""
IMPATIENCE_AFTER = 3
"""ASK_USER calls in one turn after which the simulator turns impatient (App. D.5)."""
REJECTIONS = (
    "I don't know about the database schema. I just want to find the information I asked about.",
    "I'm not a technical person, so I can't help with database details. Please just answer my question.",
    "I have no idea how the data is stored. Can you work it out from my question?",
    "Those technical details are not something I know. I only care about the answer.",
)
"""The rotating pool of canned rejections for schema or technical probes."""
FALLBACK_REPLY = "I'm not sure how to put it differently. Please answer based on what I asked."
"""Reply used in place of an LLM reply that named schema terms."""
IMPATIENCE_SIGNAL = (
    "You have already been asked several questions in this turn and are getting impatient: "
    "say so briefly and insist on getting an answer."
)

_TECHNICAL = re.compile(
    r"\b(schema|labels?|relationships?|relation types?|edges?|nodes?|propert(?:y|ies)|"
    r"cypher|database|fields?|columns?|attributes?)\b",
    re.IGNORECASE,
)
_CLARIFY = re.compile(
    r"\b(do you mean|did you mean|which|what do you mean|clarify|could you specify|"
    r"should i|would you like|prefer|either|or rather|mean by|are you referring|by \w+ do you)\b",
    re.IGNORECASE,
)
_IDENTIFIER_SHAPE = re.compile(r"_|[a-z][A-Z]")


class SimIntent(StrEnum):
    """The simulator's phase-1 classification of a question."""

    REJECT = "reject"
    DISAMBIGUATE = "disambiguate"
    GENERAL = "general"


class SimulatorReply(BaseModel):
    """One simulated user reply.

    Attributes:
        intent: how the question was classified.
        text: the reply the model sees.
        leaked: an LLM reply named schema terms and was replaced by the fallback.
        prompt_tokens / completion_tokens: the simulator model's usage (0 when canned).
    """

    model_config = ConfigDict(frozen=True)

    intent: SimIntent
    text: str
    leaked: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0


def schema_terms(schema: GraphSchema) -> list[re.Pattern[str]]:
    """Patterns of the schema terms a reply must not contain.

    Labels and relationship types match as whole words, case-insensitively
    (relationship types also with spaces for underscores); property keys match
    only when shaped like identifiers (``snake_case`` or ``camelCase``), since
    plain words such as ``name`` are ordinary English, not a leak.

    Args:
        schema: the session graph's schema.

    Returns:
        Compiled patterns, one per term.
    """
    words: set[str] = {label.label for label in schema.labels}
    for rel in schema.relationship_types:
        words.add(rel.type)
        words.add(rel.type.replace("_", " "))
    patterns = [re.compile(rf"\b{re.escape(w)}\b", re.IGNORECASE) for w in sorted(words)]
    keys: set[str] = set()
    for props in [e.properties for e in schema.labels] + [
        e.properties for e in schema.relationship_types
    ]:
        keys.update(k for k in props if _IDENTIFIER_SHAPE.search(k))
    patterns.extend(re.compile(rf"\b{re.escape(k)}\b") for k in sorted(keys))
    return patterns


class UserSimulator:
    """Answers ASK_USER in the agentic protocol for one session.

    Args:
        model: the chat model behind general replies (``--sim-model``).
        schema: the session graph's schema, for the leak filter.
        persona: the session persona (a :class:`cypherturn.sessions.Persona` value).
        system_prompt: the simulator's system prompt template with ``{persona}``
            and ``{utterance}`` fields.
        max_tokens: reply length cap, tokens.
        seed: sampling seed passed to the model.
    """

    def __init__(
        self,
        model: ChatModel,
        schema: GraphSchema,
        persona: str,
        system_prompt: str,
        *,
        max_tokens: int = 150,
        seed: int | None = None,
    ) -> None:
        self._model = model
        self._terms = schema_terms(schema)
        self._persona = persona
        self._system = system_prompt
        self._max_tokens = max_tokens
        self._seed = seed
        self._rejections = 0

    def note_prior_reply(self, text: str) -> None:
        """Account for a reply given before a resume, so the rejection rotation continues.

        Args:
            text: a reply this simulator gave earlier in the session.
        """
        if text in REJECTIONS:
            self._rejections += 1

    def classify(self, question: str, turn: PlayerTurn) -> SimIntent:
        """Phase 1: which of the three intents the question has.

        Args:
            question: the model's ASK_USER text.
            turn: the current turn (a pre-authored ``simulator_reply`` decides DISAMBIGUATE).

        Returns:
            REJECT for schema or technical probes, DISAMBIGUATE for a
            clarification request on an ambiguous turn, GENERAL otherwise.
        """
        if _TECHNICAL.search(question):
            return SimIntent.REJECT
        if turn.simulator_reply is not None and (_CLARIFY.search(question) or "?" in question):
            return SimIntent.DISAMBIGUATE
        return SimIntent.GENERAL

    def leaks(self, text: str) -> bool:
        """Phase 2: whether a reply names a schema term."""
        return any(p.search(text) for p in self._terms)

    def reply(self, question: str, turn: PlayerTurn, *, asks_before: int) -> SimulatorReply:
        """Answer one ASK_USER.

        Args:
            question: the model's question.
            turn: the current turn.
            asks_before: ASK_USER calls already made in this turn.

        Returns:
            The :class:`SimulatorReply`.

        Raises:
            ModelUnavailableError | ModelResponseError: the simulator model failed.
        """
        intent = self.classify(question, turn)
        if intent is SimIntent.REJECT:
            text = REJECTIONS[self._rejections % len(REJECTIONS)]
            self._rejections += 1
            return SimulatorReply(intent=intent, text=text)
        if intent is SimIntent.DISAMBIGUATE and turn.simulator_reply is not None:
            return SimulatorReply(intent=intent, text=turn.simulator_reply)
        system = self._system.format(persona=self._persona, utterance=turn.utterance)
        if asks_before >= IMPATIENCE_AFTER:
            system = f"{system}\n\n{IMPATIENCE_SIGNAL}"
        response = self._model.chat(
            [
                ChatMessage(role="system", content=system),
                ChatMessage(role="user", content=question),
            ],
            temperature=SIMULATOR_TEMPERATURE,
            max_tokens=self._max_tokens,
            seed=self._seed,
        )
        text, _ = split_reasoning(response.text)
        leaked = self.leaks(text) or not text
        return SimulatorReply(
            intent=intent,
            text=FALLBACK_REPLY if leaked else text,
            leaked=leaked,
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
        )
