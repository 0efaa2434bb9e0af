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
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from cypherturn.errors import ConfigError

__all__ = ["GROUNDING_CHECKS", "AgentGrounding"]

GROUNDING_CHECKS = ("check", "repair", "values")
"""The agent's grounding parts, in the order they act."""


class AgentGrounding(BaseModel):
    """Which grounding parts act on EXECUTE_CYPHER and SUBMIT_ANSWER (all off: the paper's agent).

    Attributes:
        check: schema check before execution, findings shown.
        repair: deterministic repairs before execution, shown.
        values: value grounding after an empty result.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    check: bool = False
    repair: bool = False
    values: bool = False

    @classmethod
    def parse(cls, text: str) -> AgentGrounding:
        """Read ``check,repair,values`` (any subset, comma-separated), ``all`` or ``none``.

        Raises:
            ConfigError: a part that is not one of :data:`GROUNDING_CHECKS`.
        """
        words = [w.strip().lower() for w in text.split(",") if w.strip()]
        if words in (["none"], []):
            return cls()
        if words == ["all"]:
            return cls(check=True, repair=True, values=True)
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
        return self.check or self.repair or self.values
