"""First layer of the read-only gate: find the write clause of a Cypher text, if any.

Generated Cypher is untrusted (RAS paper §3.3: every candidate is executed).
Before a query reaches an engine, :func:`find_write_clause` reads it with the
lenient mode of :func:`cypherturn.cypher.tokenize`, the tokenizer the parser and
the answer extractor share, so a word like ``CREATE`` inside ``'please create'``,
a comment or ```Delete``` is never a token, and a write keyword glued to a
number (``LIMIT 1CREATE``) still is. It then decides by position whether a
write keyword is a clause or a name: ``drop`` in ``MATCH (drop:Person) RETURN
drop``, ``AS set`` or ``n.merge`` names a variable, an alias or a key, and the
engines run those queries read-only. The engine's own read-only mode
(``GRAPH.RO_QUERY``, Neo4j READ access) stays the final guard; this layer exists
so the refusal names the offending clause and so engines whose read-only mode is
weaker (FalkorDB's Bolt endpoint executes writes in READ mode) are still safe.

:func:`find_plan_prefix` finds an ``EXPLAIN`` or ``PROFILE`` prefix: FalkorDB's
``GRAPH.RO_QUERY`` ignores it and runs the query, Neo4j returns a plan and no
rows, so a generated query with one is refused before it runs (the ``explain_runs``
quirk of :mod:`._dialect`).

:func:`find_parameter_problem` checks query parameters the way the text is
checked (docs/design/engine-reliability.md). FalkorDB takes parameters as a ``CYPHER name=value ...``
prefix of the query text, so a parameter *name* is query text: a name such as
``x=1 MATCH (n) DETACH DELETE n //`` would run another query than the one the
guard read. Names must therefore be identifiers on every engine (the same rule
everywhere, so a query's outcome does not depend on the engine). Where
parameters travel inside the text, values are checked too: a NUL character ends
the text the engine reads, an integer outside 64 bits is silently clamped, a
non-finite float and a value of another type have no literal, and a map key
with a backtick cannot be quoted. Each problem is reported naming the
parameter and where in its value it sits.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from cypherturn.cypher import EXPRESSION_CLAUSES, WRITE_CLAUSES, Token, TokenKind, tokenize
from cypherturn.graph._dialect import PLAN_PREFIXES

__all__ = [
    "INT64_RANGE",
    "MAX_PARAMETER_DEPTH",
    "NUL",
    "PARAMETER_NAME",
    "find_parameter_problem",
    "find_plan_prefix",
    "find_write_clause",
]

PARAMETER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""What a parameter name must fully match: an ASCII identifier (no quoting needed anywhere)."""

MAX_PARAMETER_DEPTH = 32
"""Deepest nesting of lists and maps in a parameter value (deeper is refused, not recursed into)."""

NUL = "\x00"
"""The character that ends the query text FalkorDB reads (its parser reads a C string)."""

INT64_RANGE = (-(2**63), 2**63 - 1)
"""The integers the engines store (FalkorDB clamps a larger literal without a word)."""

# Clause keywords that change the graph or its schema, or reach outside it: the write
# clauses of the scanner's table (DETACH is read with the DELETE after it) and the
# schema and administration commands, which no read query contains.
_WRITE_KEYWORDS = (WRITE_CLAUSES - {"DETACH"}) | frozenset(
    {
        "DROP",
        "ALTER",
        "GRANT",
        "DENY",
        "REVOKE",
        "RENAME",
        "TERMINATE",
        "INSERT",
    }  # INSERT: Cypher 25 / GQL
)

# Keywords after which an expression or a name follows, never a clause: a write
# keyword there is a variable (``RETURN drop``, ``WITH 1 AS merge``, ``DELETE set``).
_EXPRESSION_KEYWORDS = EXPRESSION_CLAUSES | frozenset(
    {"AND", "OR", "XOR", "NOT", "AS", "BY", "DISTINCT", "IN", "CASE", "WHEN", "THEN", "ELSE", "IS",
     "CONTAINS", "STARTS", "ENDS", "YIELD"}
)  # fmt: skip
# Punctuation after which a name follows, never a clause (``*`` is left out: ``WITH *``
# may end a clause, and ``|`` and ``{`` open FOREACH and subquery bodies).
_EXPRESSION_PUNCTUATION = frozenset(
    {",", "(", "[", "=", "<>", "<", ">", "<=", ">=", "=~", "+=", "+", "-", "/", "%", "^", ".", ":"}
)

# A procedure name segment that names a mutating or outward-reaching operation:
# db.idx.fulltext.createNodeIndex, apoc.create.node, apoc.refactor.mergeNodes,
# apoc.periodic.iterate, apoc.load.json, apoc.cypher.doIt, gds.pageRank.write, ...
_WRITE_PROCEDURE_SEGMENT = re.compile(
    r"^(create|drop|delete|merge|remove|set|add|write|mutate|refactor|periodic|import|export"
    r"|load|doit|runwrite|runschema|runmany|trigger|atomic|lock)(?:$|[A-Z_0-9])",
    re.IGNORECASE,
)


def _keyword_positions(tokens: list[Token]) -> list[bool]:
    """For each token, whether it is a word standing where a clause keyword can, not a name.

    A word is a name before ``:`` (map key, ``(drop:Person)``), after ``.``
    (property key), ``:`` (label, type), ``(``/``[`` (pattern or comprehension
    variable), ``,`` or another operator, and after a keyword that an expression
    follows (``RETURN drop``, ``AS set``, ``ORDER BY merge``), whatever it spells.
    Whether that previous word is a keyword is itself decided by position, so in
    ``WITH n AS set SET n.x = 1`` the second ``SET`` is a clause.
    """
    keyword = [False] * len(tokens)
    for k, token in enumerate(tokens):
        if token.kind is not TokenKind.NAME:
            continue
        if k + 1 < len(tokens) and tokens[k + 1].is_punct(":"):
            continue
        before = tokens[k - 1] if k > 0 else None
        if before is not None and before.kind is TokenKind.PUNCT:
            keyword[k] = before.text not in _EXPRESSION_PUNCTUATION
        elif before is not None and before.kind is TokenKind.NAME:
            keyword[k] = not (keyword[k - 1] and before.upper in _EXPRESSION_KEYWORDS)
        else:
            keyword[k] = True
    return keyword


def _procedure_name(tokens: list[Token], k: int) -> tuple[str, list[str]]:
    """Read the dotted procedure name that starts at token ``k`` (just after CALL)."""
    segments: list[str] = []
    while k < len(tokens) and tokens[k].kind in (TokenKind.NAME, TokenKind.QUOTED_NAME):
        text = tokens[k].text
        segments.append(text[1:-1] if tokens[k].kind is TokenKind.QUOTED_NAME else text)
        if k + 1 < len(tokens) and tokens[k + 1].is_punct("."):
            k += 2
        else:
            break
    return ".".join(segments), segments


def find_write_clause(query: str) -> str | None:
    """Name the first clause of ``query`` that would write or reach outside the graph.

    Detected: ``CREATE`` (also index/constraint creation), ``INSERT``, ``MERGE``, ``SET``,
    ``REMOVE``, ``DELETE``, ``DETACH DELETE``, ``DROP``, ``FOREACH``, ``LOAD CSV``
    (reads server-side files), administration commands (``ALTER``, ``GRANT``,
    ``DENY``, ``REVOKE``, ``RENAME``, ``TERMINATE``) and ``CALL`` of a procedure
    whose name has a mutating segment (``db.idx.fulltext.createNodeIndex``,
    ``apoc.create.node``, ``apoc.periodic.iterate``, ``apoc.load.json``, ...).

    Args:
        query: untrusted Cypher text.

    Returns:
        The clause as an upper-case string (``"DETACH DELETE"``, ``"LOAD CSV"``,
        ``"CALL apoc.create.node"``), or ``None`` when the text reads only.
    """
    tokens = tokenize(query, lenient=True)
    keyword = _keyword_positions(tokens)
    for k, token in enumerate(tokens):
        if not keyword[k]:
            continue
        word = token.upper
        nxt = tokens[k + 1].upper if k + 1 < len(tokens) else ""
        if word == "DETACH" and nxt == "DELETE":
            return "DETACH DELETE"
        if word == "LOAD" and nxt == "CSV":
            return "LOAD CSV"
        if word in _WRITE_KEYWORDS:
            return word
        if (
            word == "CALL"
            and k + 1 < len(tokens)
            and tokens[k + 1].kind in (TokenKind.NAME, TokenKind.QUOTED_NAME)
        ):
            name, segments = _procedure_name(tokens, k + 1)
            if any(_WRITE_PROCEDURE_SEGMENT.match(segment) for segment in segments):
                return f"CALL {name}"
    return None


def find_plan_prefix(query: str) -> str | None:
    """Name the ``EXPLAIN`` or ``PROFILE`` prefix of ``query``, if it has one.

    The prefix may follow a ``CYPHER`` version or options (``CYPHER 5 EXPLAIN
    MATCH ...``). On FalkorDB ``GRAPH.RO_QUERY`` runs a prefixed query and
    returns its rows, on Neo4j ``EXPLAIN`` returns a plan and no rows, so the
    same text would score differently per engine; generated queries with a
    prefix are refused instead.

    Args:
        query: untrusted Cypher text.

    Returns:
        ``"EXPLAIN"`` or ``"PROFILE"``, or ``None``.
    """
    tokens = tokenize(query, lenient=True)
    k = 0
    if tokens and tokens[0].is_name("CYPHER"):
        k = 1
        while k < len(tokens) and (
            tokens[k].kind is TokenKind.NUMBER
            or (k + 1 < len(tokens) and tokens[k + 1].is_punct("="))
            or tokens[k].is_punct("=")
            or (k > 0 and tokens[k - 1].is_punct("="))
        ):
            k += 1
    if k < len(tokens) and tokens[k].is_name(*PLAN_PREFIXES):
        return tokens[k].upper
    return None


def _value_problem(value: Any, path: str, depth: int) -> str | None:
    """What in ``value`` (found at ``path``) cannot be written as a literal of the engine, if anything."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        if not INT64_RANGE[0] <= value <= INT64_RANGE[1]:
            return f"the integer at {path} is outside the engine's 64-bit range"
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"the number at {path} is {value!r}; only finite numbers can be sent"
        return None
    if isinstance(value, str):
        if NUL in value:
            return (
                f"the string at {path} holds a NUL character at offset {value.index(NUL)}; "
                "the engine would stop reading the query there"
            )
        return None
    if depth >= MAX_PARAMETER_DEPTH:
        return f"the value at {path} is nested deeper than {MAX_PARAMETER_DEPTH} levels"
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            problem = _value_problem(item, f"{path}[{index}]", depth + 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"the map at {path} has a key of type {type(key).__name__}; keys are strings"
            if not key:
                return f"the map at {path} has an empty key"
            if "`" in key or NUL in key:
                what = "a backtick" if "`" in key else "a NUL character"
                return f"the map key {key!r} at {path} holds {what}, which cannot be quoted"
            problem = _value_problem(item, f"{path}.{key}", depth + 1)
            if problem is not None:
                return problem
        return None
    return (
        f"a {type(value).__name__} at {path} cannot be sent; use a string, number, boolean, "
        "null, list or map"
    )


def find_parameter_problem(params: Mapping[Any, Any], *, values: bool = True) -> str | None:
    """Name the first parameter an engine cannot take as it is, and why.

    Args:
        params: parameter name -> value, as given by the caller.
        values: check the values too (engines that write parameters into the
            query text: FalkorDB); with ``False`` only the names are checked.

    Returns:
        A message naming the parameter (``"parameter 'x': ..."``), or ``None``
        when every name is an identifier and every value can be sent.

    Example::

        >>> find_parameter_problem({"n": 3, "name": "Ann"}) is None
        True
        >>> find_parameter_problem({"a b": 1})
        "parameter name 'a b' is not an identifier (letters, digits and _, not starting with a digit)"
    """
    for name, value in params.items():
        if not isinstance(name, str):
            return f"parameter name {name!r} is a {type(name).__name__}, not a string"
        if not name:
            return "a parameter name is empty; name it with letters, digits and _"
        if PARAMETER_NAME.fullmatch(name) is None:
            return (
                f"parameter name {name!r} is not an identifier "
                "(letters, digits and _, not starting with a digit)"
            )
        if values:
            problem = _value_problem(value, f"${name}", 0)
            if problem is not None:
                return f"parameter {name!r}: {problem}"
    return None
