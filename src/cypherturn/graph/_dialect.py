"""FalkorDB's dialect: where the engine cypherturn ships answers otherwise than openCypher says.

Each quirk below was demonstrated on the FalkorDB 4.x build cypherturn ships
(``tests/sessions/test_divergence.py`` and ``tests/grounding`` run the
demonstrations on the real engine). The description is declarative: it names
the quirk, what the engine does, and which part of cypherturn acts on it. The
readers take their vocabulary from here:

- the read-only guard (:func:`cypherturn.graph.find_plan_prefix`) refuses the
  :data:`PLAN_PREFIXES` (``explain_runs``);
- grounding's engine-pitfall check (:func:`cypherturn.grounding.engine_pitfalls`)
  rewrites a filter on one of the :data:`TEMPORAL_COMPONENTS`
  (``indexed_temporal_components``);
- the gold audits (:mod:`cypherturn.sessions`) flag golds that meet a quirk
  (``collapsed_unnamed_relationships``, ``exists_without_edges``,
  ``limit_after_union``, ``filter_before_limit``, ``integer_sum_as_float``,
  ``indexed_temporal_components``).

docs/design/falkordb-dialect.md lists them with the
queries that show each one.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FALKORDB_DIALECT", "PLAN_PREFIXES", "TEMPORAL_COMPONENTS", "Dialect", "Quirk"]

TEMPORAL_COMPONENTS = frozenset(
    {"year", "quarter", "month", "week", "weekyear", "day", "dayofweek", "dayofyear",
     "dayofquarter", "hour", "minute", "second", "millisecond", "microsecond", "nanosecond"}
)  # fmt: skip
"""Lower-cased components of a temporal value (``d.month``); each one is an integer."""

PLAN_PREFIXES = ("EXPLAIN", "PROFILE")
"""Query prefixes that ask for a plan; FalkorDB's ``GRAPH.RO_QUERY`` runs the query anyway."""


@dataclass(frozen=True, slots=True)
class Quirk:
    """One place where the engine's answer departs from openCypher's.

    Attributes:
        name: a short identifier (snake case).
        behaviour: what the engine does, in one sentence.
        handled_by: the part of cypherturn that acts on it, and how.
        audit: the gold audit class that drops golds meeting it
            (:data:`cypherturn.sessions.DIVERGENCE_CODES`), ``None`` when none does.
    """

    name: str
    behaviour: str
    handled_by: str
    audit: str | None = None


@dataclass(frozen=True, slots=True)
class Dialect:
    """An engine's quirks, by name.

    Attributes:
        engine: the engine's name, as in an engine URL (``falkordb``).
        quirks: its quirks.
    """

    engine: str
    quirks: tuple[Quirk, ...]

    def quirk(self, name: str) -> Quirk:
        """The quirk called ``name``.

        Raises:
            KeyError: the dialect has no such quirk.
        """
        for quirk in self.quirks:
            if quirk.name == name:
                return quirk
        raise KeyError(name)


FALKORDB_DIALECT = Dialect(
    engine="falkordb",
    quirks=(
        Quirk(
            "indexed_temporal_components",
            "a WHERE comparison on a component of an indexed temporal property "
            "(c.reportDate.month = 9) is answered from the index and matches nothing",
            "grounding's engine_pitfall finding rewrites it as toInteger(c.reportDate.month); "
            "the gold audit temporal_component_filter drops such golds",
            audit="temporal_component_filter",
        ),
        Quirk(
            "collapsed_unnamed_relationships",
            "a relationship pattern whose variable is anonymous or unused binds once per node "
            "pair, not once per relationship, where parallel relationships join a pair",
            "the gold audit parallel_edges drops golds whose counted rows depend on it",
            audit="parallel_edges",
        ),
        Quirk(
            "exists_without_edges",
            "exists((n)-[...]->(...)) is true for every row, even on a graph without such "
            "relationships (and refused inside WHERE)",
            "the gold audit exists_pattern; grounding's engine-error hint names the pattern "
            "condition to write instead",
            audit="exists_pattern",
        ),
        Quirk(
            "limit_after_union",
            "ORDER BY / SKIP / LIMIT after the last UNION ALL branch binds to that branch only",
            "the gold audit union_limit drops such golds",
            audit="union_limit",
        ),
        Quirk(
            "filter_before_limit",
            "a WHERE that reads a variable carried out of a WITH ... LIMIT filters before the "
            "cut and lets rows past it",
            "the gold audit filter_after_limit drops such golds",
            audit="filter_after_limit",
        ),
        Quirk(
            "integer_sum_as_float",
            "sum() over integers stored as floats returns 6.0 where Neo4j returns 6",
            "the gold audit integer_sum; results compare by value",
            audit="integer_sum",
        ),
        Quirk(
            "explain_runs",
            "GRAPH.RO_QUERY runs a query prefixed with EXPLAIN or PROFILE and returns its rows",
            "the read-only guard refuses a generated query with a plan prefix",
        ),
    ),
)
"""The quirks of the FalkorDB build cypherturn ships."""
