"""Grounding inside the agent: which of ``ras+``'s checks EXECUTE_CYPHER and SUBMIT_ANSWER go through.

The same analysis as the ``ras+`` strategy (:mod:`cypherturn.grounding`,
``docs/design/grounding.md``), each part switchable so that protocol results
stay comparable with the paper's, which has none of them (CypherTurn App. D.5):

- ``check``: the query is checked against the schema before it runs; the
  findings (and a hint for engine errors small models cannot act on) are added
  to the observation. A flagged query still runs: the model decides.
- ``repair``: the unambiguous repairs (``!=`` -> ``<>``, a reversed arrow, a
  case-only misspelling, ...) are applied before it runs, in up to
  :data:`~cypherturn.grounding.MAX_REPAIR_ROUNDS` rounds; the observation says
  what was changed and which query ran.
- ``values``: after an empty result every compared literal is looked up in the
  stored values; with ``repair`` a unique case-insensitive match is substituted
  and the query run again (kept only if it runs).
- ``question``: the query is checked against the turn's question
  (:func:`~cypherturn.grounding.check_question`: a threshold it does not compare,
  a count where the question asks for no number); with ``repair``, fixed.
- ``reference``: a question that refers to the previous result ("those",
  "their") is bound to the names that result listed
  (:func:`~cypherturn.grounding.bind_reference`); with ``repair``, fixed.

``question`` and ``reference`` read the conversation (:class:`TurnContext`), the
first three only the query; a run recorded before they existed has them off.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from cypherturn.errors import ConfigError
from cypherturn.grounding import PreviousResult

__all__ = ["GROUNDING_CHECKS", "AgentGrounding", "TurnContext"]

GROUNDING_CHECKS = ("check", "repair", "values", "question", "reference")
"""The agent's grounding parts, in the order they act."""


class AgentGrounding(BaseModel):
    """Which grounding parts act on EXECUTE_CYPHER and SUBMIT_ANSWER (all off: the paper's agent).

    Attributes:
        check: schema check before execution, findings shown.
        repair: deterministic repairs before execution, shown.
        values: value grounding after an empty result.
        question: checks against the turn's question (needs a :class:`TurnContext`).
        reference: binding to the previous result (needs a :class:`TurnContext`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    check: bool = False
    repair: bool = False
    values: bool = False
    question: bool = False
    reference: bool = False

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # a run recorded before question/reference existed keeps its configuration digest
        data: dict[str, Any] = handler(self)
        for name in ("question", "reference"):
            if not data.get(name):
                data.pop(name, None)
        return data

    @classmethod
    def parse(cls, text: str) -> AgentGrounding:
        """Read ``check,repair,values,question,reference`` (any subset, comma-separated), ``all`` or ``none``.

        Raises:
            ConfigError: a part that is not one of :data:`GROUNDING_CHECKS`.
        """
        words = [w.strip().lower() for w in text.split(",") if w.strip()]
        if words in (["none"], []):
            return cls()
        if words == ["all"]:
            return cls(**{w: True for w in GROUNDING_CHECKS})
        unknown = [w for w in words if w not in GROUNDING_CHECKS]
        if unknown:
            raise ConfigError(
                f"unknown grounding part {unknown[0]!r}; choose from "
                f"{', '.join(GROUNDING_CHECKS)}, or all / none"
            )
        return cls(**{w: True for w in words})

    def enabled(self) -> list[str]:
        """The parts that are on, in :data:`GROUNDING_CHECKS` order."""
        return [name for name in GROUNDING_CHECKS if getattr(self, name)]

    @property
    def active(self) -> bool:
        """True when any part is on."""
        return any(getattr(self, name) for name in GROUNDING_CHECKS)


class TurnContext(BaseModel):
    """What the ``question`` and ``reference`` grounding parts read from the conversation.

    Attributes:
        question: the current turn's utterance.
        previous: the previous turn's result as the conversation shows it, when it
            listed names of one label (:func:`~cypherturn.grounding.previous_names`).
    """

    model_config = ConfigDict(frozen=True)

    question: str
    previous: PreviousResult | None = None
