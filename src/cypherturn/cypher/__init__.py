"""Cypher text analysis: an offset-keeping tokenizer, a clause-level parser and the PSJS provenance rewrite."""

from cypherturn.cypher._parse import (
    AGGREGATE_FUNCTIONS,
    Clause,
    MatchClause,
    OtherClause,
    ParsedQuery,
    PatternElement,
    PatternPart,
    Projection,
    ProjectionItem,
    SingleQuery,
    SortItem,
    parse_query,
)
from cypherturn.cypher._provenance import (
    PROVENANCE_COLUMN,
    PROVENANCE_PREFIX,
    OutputOrder,
    ProvenanceRewrite,
    decode_provenance,
    output_order,
    rewrite_for_provenance,
)
from cypherturn.cypher._runaway import runaway_projection_end
from cypherturn.cypher._tokens import Token, TokenKind, tokenize, unescape_markdown

__all__ = [
    "AGGREGATE_FUNCTIONS",
    "PROVENANCE_COLUMN",
    "PROVENANCE_PREFIX",
    "Clause",
    "MatchClause",
    "OtherClause",
    "OutputOrder",
    "ParsedQuery",
    "PatternElement",
    "PatternPart",
    "Projection",
    "ProjectionItem",
    "ProvenanceRewrite",
    "SingleQuery",
    "SortItem",
    "Token",
    "TokenKind",
    "decode_provenance",
    "output_order",
    "parse_query",
    "rewrite_for_provenance",
    "runaway_projection_end",
    "tokenize",
    "unescape_markdown",
]
