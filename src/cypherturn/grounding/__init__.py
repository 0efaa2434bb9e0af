"""Grounding: static analysis of generated Cypher against a graph's schema and stored values.

Pure analysis (no model calls): a static schema check, value grounding, deterministic
repairs and a schema-derived llama.cpp grammar, used by the ``ras+`` strategy, the agent
and any other caller that has a :class:`~cypherturn.graph.GraphSchema`.
"""

from cypherturn.grounding._check import (
    FINDING_CODES,
    CheckReport,
    Edit,
    Finding,
    apply_edits,
    check_query,
    check_values,
    flip_relationship,
)
from cypherturn.grounding._facts import QueryFacts, query_facts
from cypherturn.grounding._grammar import GRAMMAR_KEYWORDS, schema_grammar
from cypherturn.grounding._hints import error_hint
from cypherturn.grounding._index import (
    DEFAULT_VALUE_BUDGET_CHARS,
    LOW_CARDINALITY,
    GraphIndex,
    PropertyValues,
    graph_index,
)
from cypherturn.grounding._link import ValueLink, link_values, render_links
from cypherturn.grounding._question import (
    asks_for_number,
    check_question,
    count_as_list,
    question_thresholds,
)
from cypherturn.grounding._reference import (
    MAX_BOUND_NAMES,
    PreviousResult,
    bind_reference,
    previous_names,
    reference_word,
    refers_to_previous,
)
from cypherturn.grounding._repair import (
    MAX_REPAIR_ROUNDS,
    ValueGrounding,
    ground_values,
    looks_empty,
    question_repairs,
    repair_query,
)

__all__ = [
    "DEFAULT_VALUE_BUDGET_CHARS",
    "FINDING_CODES",
    "GRAMMAR_KEYWORDS",
    "LOW_CARDINALITY",
    "MAX_BOUND_NAMES",
    "MAX_REPAIR_ROUNDS",
    "CheckReport",
    "Edit",
    "Finding",
    "GraphIndex",
    "PreviousResult",
    "PropertyValues",
    "QueryFacts",
    "ValueGrounding",
    "ValueLink",
    "apply_edits",
    "asks_for_number",
    "bind_reference",
    "check_query",
    "check_question",
    "check_values",
    "count_as_list",
    "error_hint",
    "flip_relationship",
    "graph_index",
    "ground_values",
    "link_values",
    "looks_empty",
    "previous_names",
    "query_facts",
    "question_repairs",
    "question_thresholds",
    "reference_word",
    "refers_to_previous",
    "render_links",
    "repair_query",
    "schema_grammar",
]
