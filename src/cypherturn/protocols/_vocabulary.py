"""The protocols' closed vocabularies: how an action is named and how an observation is framed.

They are values the settings, the prompts and the loop all read, so they live
apart from the settings model that holds them: the prompts read them without
importing the settings, which import the variants, which fill prompts.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ActionFormat", "Framing"]


class ActionFormat(StrEnum):
    """How the model names its action each step (CypherTurn App. D.5)."""

    TEXT = "text"
    """One JSON object per reply, parsed tolerantly (:func:`cypherturn.agent.parse_action`)."""
    TOOLS = "tools"
    """Native tool calling: the five actions are offered as tools (OpenAI ``tools`` on
    endpoints that support it; grammar-constrained calls on GGUF models). A reply
    without a tool call is still read as text."""


class Framing(StrEnum):
    """How an observation is introduced to the model (the observation text itself is the paper's)."""

    PAPER = "paper"
    """``Observation:`` before the text (text format), the bare text as the tool reply (tools)."""
    EXPLICIT = "explicit"
    """A header naming its source and saying it is not the model's own writing, e.g.
    ``Observation from the database (not written by you):`` (both formats); small
    models otherwise continue the observation format instead of acting
    (docs/design/protocols.md, "Harness settings beyond the paper").
    The guided history's ``Assistant: [Query Result]`` line becomes ``Result shown
    to the user (from the database, not written by you):`` for the same reason."""
