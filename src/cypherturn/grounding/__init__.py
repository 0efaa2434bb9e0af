"""Grounding: static analysis of generated Cypher against a graph's schema and stored values.

Pure analysis (no model calls): a static schema check (a table of checks,
:data:`CHECKS`), value grounding, deterministic repairs and a schema-derived llama.cpp grammar, used by the ``ras+`` strategy, the agent
and any other caller that has a :class:`~cypherturn.graph.GraphSchema`.
"""

from cypherturn.grounding._check import CHECKS, Check, check_query
from cypherturn.grounding._facts import QueryFacts, query_facts
from cypherturn.grounding._findings import (
    FINDING_CODES,
    CheckContext,
    CheckReport,
    Edit,
    Finding,
    apply_edits,
)
from cypherturn.grounding._grammar import GRAMMAR_KEYWORDS, schema_grammar
from cypherturn.grounding._hints import error_hint
from cypherturn.grounding._index import (
    DEFAULT_VALUE_BUDGET_CHARS,
    LOW_CARDINALITY,
    GraphIndex,
    PropertyValues,
    graph_index,
)
from cypherturn.grounding._link import LinkRules, ValueLink, link_values, render_links
from cypherturn.grounding._pitfalls import engine_pitfalls
from cypherturn.grounding._question import (
    asks_for_number,
    check_question,
    count_as_list,
    question_thresholds,
)
from cypherturn.grounding._reference import (
    MAX_BOUND_NAMES,
    PreviousResult,
    antecedent_inside,
    bind_reference,
    names_prior_output,
    points_to_previous,
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
from cypherturn.grounding._topology import flip_relationship
from cypherturn.grounding._values import check_values
from cypherturn.grounding._words import FUNCTION_WORDS, WORD, stem, stems, words

__all__ = [
    "CHECKS",
    "DEFAULT_VALUE_BUDGET_CHARS",
    "FINDING_CODES",
    "FUNCTION_WORDS",
    "GRAMMAR_KEYWORDS",
    "LOW_CARDINALITY",
    "MAX_BOUND_NAMES",
    "MAX_REPAIR_ROUNDS",
    "WORD",
    "Check",
    "CheckContext",
    "CheckReport",
    "Edit",
    "Finding",
    "GraphIndex",
    "LinkRules",
    "PreviousResult",
    "PropertyValues",
    "QueryFacts",
    "ValueGrounding",
    "ValueLink",
    "antecedent_inside",
    "apply_edits",
    "asks_for_number",
    "bind_reference",
    "check_query",
    "check_question",
    "check_values",
    "count_as_list",
    "engine_pitfalls",
    "error_hint",
    "flip_relationship",
    "graph_index",
    "ground_values",
    "link_values",
    "looks_empty",
    "names_prior_output",
    "points_to_previous",
    "previous_names",
    "query_facts",
    "question_repairs",
    "question_thresholds",
    "reference_word",
    "refers_to_previous",
    "render_links",
    "repair_query",
    "schema_grammar",
    "stem",
    "stems",
    "words",
]
