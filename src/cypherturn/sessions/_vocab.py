"""The CypherTurn vocabulary: phenomena, chain modes and personas (CypherTurn §2.2-2.4, App. D.2-D.4).

Values are the benchmark's own spellings (upper-case phenomena, lower-case chain
modes and personas) so that files of the official release map onto these enums
one to one.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "AGGREGATION_PHENOMENA",
    "CHAIN_DEPENDENT_MODES",
    "ChainMode",
    "Persona",
    "Phenomenon",
    "PhenomenonCategory",
    "category_of",
    "chain_mode_of",
    "is_chain_dependent",
]


class PhenomenonCategory(StrEnum):
    """The four categories of conversational phenomena (CypherTurn §2.2)."""

    NAVIGATION = "navigation"
    AGGREGATION = "aggregation"
    FILTERING = "filtering"
    DISCOURSE = "discourse"


class Phenomenon(StrEnum):
    """The 13 graph-native conversational phenomena (CypherTurn App. D.2, Table 5)."""

    EXPAND = "EXPAND"
    """One hop out of the prior result set."""
    PIVOT = "PIVOT"
    """Rank the prior set by a property, take the top, then traverse."""
    FIRST = "FIRST"
    """Refer to a specific earlier turn's result by position ("the first one you listed")."""
    COUNT = "COUNT"
    """Cardinality of the prior set."""
    AGG_SUM = "AGG_SUM"
    """Sum of a numeric property over the prior set."""
    AGG_AVG = "AGG_AVG"
    """Mean of a numeric property over the prior set."""
    AGG_MAX = "AGG_MAX"
    """Maximum or minimum of a numeric property over the prior set."""
    FILTER = "FILTER"
    """A new categorical condition on the prior set."""
    REFINE = "REFINE"
    """Tighten a condition already applied to the prior set."""
    VALUE_FILTER = "VALUE_FILTER"
    """A numeric threshold on the prior set."""
    MULTI_CONDITION = "MULTI_CONDITION"
    """Compound criteria (two conditions joined by AND or OR) on the prior set."""
    CONTRAST = "CONTRAST"
    """The complement of the prior result within the same entity type."""
    TOPIC_SHIFT = "TOPIC_SHIFT"
    """A fresh, independent query: the only non-chain-dependent phenomenon."""


class ChainMode(StrEnum):
    """How a turn's query depends on its predecessor (CypherTurn §2.3, App. D.3, Table 6)."""

    NONE = "none"
    """The first turn of a session."""
    TOPIC_SHIFT = "topic_shift"
    EXPAND = "expand"
    PIVOT = "pivot"
    AGG_NUMERIC = "agg_numeric"
    AGGREGATE = "aggregate"
    CONTRAST = "contrast"
    VALUE_NARROW = "value_narrow"
    NARROW = "narrow"


class Persona(StrEnum):
    """The 10 session personas; each fixes the register of every utterance (CypherTurn §2.4, App. D.4)."""

    JOURNALIST = "journalist"
    STUDENT = "student"
    PRODUCT_MANAGER = "product_manager"
    NOVICE_USER = "novice_user"
    DATA_ANALYST = "data_analyst"
    CASUAL_USER = "casual_user"
    IMPATIENT_EXEC = "impatient_exec"
    ADVERSARIAL = "adversarial"
    NON_NATIVE = "non_native"
    VERBOSE_USER = "verbose_user"


_CATEGORY: dict[Phenomenon, PhenomenonCategory] = {
    Phenomenon.EXPAND: PhenomenonCategory.NAVIGATION,
    Phenomenon.PIVOT: PhenomenonCategory.NAVIGATION,
    Phenomenon.FIRST: PhenomenonCategory.NAVIGATION,
    Phenomenon.COUNT: PhenomenonCategory.AGGREGATION,
    Phenomenon.AGG_SUM: PhenomenonCategory.AGGREGATION,
    Phenomenon.AGG_AVG: PhenomenonCategory.AGGREGATION,
    Phenomenon.AGG_MAX: PhenomenonCategory.AGGREGATION,
    Phenomenon.FILTER: PhenomenonCategory.FILTERING,
    Phenomenon.REFINE: PhenomenonCategory.FILTERING,
    Phenomenon.VALUE_FILTER: PhenomenonCategory.FILTERING,
    Phenomenon.MULTI_CONDITION: PhenomenonCategory.FILTERING,
    Phenomenon.CONTRAST: PhenomenonCategory.DISCOURSE,
    Phenomenon.TOPIC_SHIFT: PhenomenonCategory.DISCOURSE,
}

# FIRST selects one entity of an earlier result and traverses from it, which is the
# rank-then-traverse construction (the official release labels its FIRST turns `pivot`);
# MULTI_CONDITION adds compound attribute criteria, the `narrow` construction.
_CHAIN_MODE: dict[Phenomenon, ChainMode] = {
    Phenomenon.EXPAND: ChainMode.EXPAND,
    Phenomenon.PIVOT: ChainMode.PIVOT,
    Phenomenon.FIRST: ChainMode.PIVOT,
    Phenomenon.COUNT: ChainMode.AGGREGATE,
    Phenomenon.AGG_SUM: ChainMode.AGG_NUMERIC,
    Phenomenon.AGG_AVG: ChainMode.AGG_NUMERIC,
    Phenomenon.AGG_MAX: ChainMode.AGG_NUMERIC,
    Phenomenon.FILTER: ChainMode.NARROW,
    Phenomenon.REFINE: ChainMode.NARROW,
    Phenomenon.VALUE_FILTER: ChainMode.VALUE_NARROW,
    Phenomenon.MULTI_CONDITION: ChainMode.NARROW,
    Phenomenon.CONTRAST: ChainMode.CONTRAST,
    Phenomenon.TOPIC_SHIFT: ChainMode.TOPIC_SHIFT,
}

CHAIN_DEPENDENT_MODES: frozenset[ChainMode] = frozenset(ChainMode) - {
    ChainMode.NONE,
    ChainMode.TOPIC_SHIFT,
}
"""The seven chain modes whose query needs the prior result (CypherTurn §2.3)."""

AGGREGATION_PHENOMENA: frozenset[Phenomenon] = frozenset(
    p for p, c in _CATEGORY.items() if c is PhenomenonCategory.AGGREGATION
)
"""COUNT and the three AGG_* phenomena."""


def category_of(phenomenon: Phenomenon) -> PhenomenonCategory:
    """The category a phenomenon belongs to (CypherTurn §2.2).

    Example:
        >>> category_of(Phenomenon.REFINE)
        <PhenomenonCategory.FILTERING: 'filtering'>
    """
    return _CATEGORY[phenomenon]


def chain_mode_of(phenomenon: Phenomenon) -> ChainMode:
    """The chain mode used to construct turns of a phenomenon (App. D.2, Table 5).

    Example:
        >>> chain_mode_of(Phenomenon.VALUE_FILTER)
        <ChainMode.VALUE_NARROW: 'value_narrow'>
    """
    return _CHAIN_MODE[phenomenon]


def is_chain_dependent(mode: ChainMode) -> bool:
    """True for the seven chain modes that need the prior result (§2.3).

    Example:
        >>> is_chain_dependent(ChainMode.TOPIC_SHIFT)
        False
    """
    return mode in CHAIN_DEPENDENT_MODES
