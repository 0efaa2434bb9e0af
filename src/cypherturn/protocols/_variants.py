"""Agentic protocol variants as registered objects (CypherTurn appendix F).

A variant changes the agentic protocol along the dimensions the paper's
ablation varies: the system prompt's efficiency line, whether the first
INSPECT_SCHEMA result stays in later turns' context, and a note shown at the
start of each turn. The three appendix F variants and ``base`` register
themselves here; :func:`register_variant` adds another, which
:class:`~cypherturn.protocols.ProtocolSettings` then accepts by name and run
records carry under that name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from cypherturn._registry import Registry
from cypherturn.protocols._prompts import PromptSet, fill

__all__ = [
    "PROTOCOL_VARIANTS",
    "ProtocolVariant",
    "TurnBudget",
    "Variant",
    "get_variant",
    "register_variant",
]


class Variant(StrEnum):
    """Names of the built-in agentic variants (CypherTurn appendix F); see :data:`PROTOCOL_VARIANTS`."""

    BASE = "base"
    PERSISTENT_SCHEMA = "persistent_schema"
    """Agentic-PS: the first INSPECT_SCHEMA result stays in every later turn's context."""
    DISCLOSED_HORIZON = "disclosed_horizon"
    """T, m and a suggested remaining budget are shown at the start of each turn."""
    BUDGET_ENCOURAGING = "budget_encouraging"
    """The efficiency instruction is replaced by encouragement to use the budget (run at x10)."""


@dataclass(frozen=True, slots=True)
class TurnBudget:
    """Where a turn stands in the session's shared budget, for a variant's turn note.

    Attributes:
        total_turns: T, the session's turns.
        turn: this turn's 1-based index.
        per_turn: m, the budget multiplier (``B = T x m``).
        remaining: actions left of the shared budget at the start of this turn.
    """

    total_turns: int
    turn: int
    per_turn: int
    remaining: int


TurnNote = Callable[[PromptSet, TurnBudget], str]
"""``note(prompts, budget) -> text`` shown before the history at the start of a turn."""


@dataclass(frozen=True, slots=True)
class ProtocolVariant:
    """One agentic protocol variant.

    Attributes:
        name: the name settings and records carry.
        summary: one line on what it changes, for help texts.
        efficiency_prompt: the prompt (a :class:`PromptSet` name) filled into the
            system prompt's ``{efficiency}`` slot.
        keeps_schema: the first successful INSPECT_SCHEMA result is shown in
            every later turn's context (Agentic-PS).
        turn_note: text shown at the start of each turn (``None``: nothing).
        default_multiplier: the budget multiplier m a run uses when none is given.
    """

    name: str
    summary: str
    efficiency_prompt: str = "efficiency"
    keeps_schema: bool = False
    turn_note: TurnNote | None = None
    default_multiplier: int = 3

    def note(self, prompts: PromptSet, budget: TurnBudget) -> str:
        """The turn note (empty without one)."""
        return self.turn_note(prompts, budget) if self.turn_note is not None else ""


PROTOCOL_VARIANTS: Registry[ProtocolVariant] = Registry("protocol variant")
"""Every agentic variant by name: ``base``, the appendix F three, then registered ones."""


def register_variant(variant: ProtocolVariant, *, replace: bool = False) -> ProtocolVariant:
    """Make a variant available by its name to :class:`ProtocolSettings` and the runners.

    Raises:
        ConfigError: the name is empty, or taken and ``replace`` is false.
    """
    return PROTOCOL_VARIANTS.register(variant.name, variant, replace=replace)


def get_variant(name: str) -> ProtocolVariant:
    """The registered variant of ``name``.

    Raises:
        ConfigError: unknown name; the message lists the registered ones.
    """
    return PROTOCOL_VARIANTS.get(name)


def _horizon(prompts: PromptSet, budget: TurnBudget) -> str:
    """T, m, the remaining budget and a suggested share of it (appendix F, Disclosed-Horizon)."""
    left_turns = budget.total_turns - budget.turn + 1
    text = fill(
        prompts["horizon"],
        turns=budget.total_turns,
        turn=budget.turn,
        per_turn=budget.per_turn,
        remaining=budget.remaining,
        suggested=max(1, budget.remaining // left_turns),
        left_turns=left_turns,
    )
    return text + "\n\n"


register_variant(ProtocolVariant(Variant.BASE.value, "the agentic protocol as in §3.1"))
register_variant(
    ProtocolVariant(
        Variant.PERSISTENT_SCHEMA.value,
        "the first INSPECT_SCHEMA result stays in later turns' context",
        keeps_schema=True,
    )
)
register_variant(
    ProtocolVariant(
        Variant.DISCLOSED_HORIZON.value,
        "T, m and a suggested share of the remaining budget are shown each turn",
        turn_note=_horizon,
    )
)
register_variant(
    ProtocolVariant(
        Variant.BUDGET_ENCOURAGING.value,
        "the efficiency instruction becomes encouragement to use the budget (m = 10)",
        efficiency_prompt="encouraging",
        default_multiplier=10,
    )
)
