"""Classify engine error messages into the :class:`~cypherturn.errors.ErrorClass` vocabulary.

Only what an engine actually reports is classified; nothing is inferred from the
schema. FalkorDB does not fail on an unknown label, relationship type or
property key (the pattern simply matches nothing, the property reads as null),
and Neo4j reports those as warnings, not errors, so the ``UNKNOWN_LABEL``,
``UNKNOWN_RELATIONSHIP_TYPE`` and ``UNKNOWN_PROPERTY`` classes are produced only
for engines whose error messages say so (see docs/design/engine-errors.md).

The engine's message is kept verbatim in ``QueryError.engine_message``: it is the
execution feedback RAS appends to the context (RAS paper §3.3, Algorithm 2).
"""

from __future__ import annotations

import re

from cypherturn.errors import (
    CypherSyntaxError,
    CypherTypeError,
    ErrorClass,
    QueryError,
    QueryTimeoutError,
    UnknownVariableError,
    WriteRefusedError,
)

__all__ = [
    "classify_falkordb",
    "classify_neo4j",
    "falkordb_error",
    "neo4j_error",
    "neo4j_notification_class",
]

ErrorType = type[QueryError]

# FalkorDB (4.x) messages, matched in order; the first hit decides.
_FALKORDB_RULES: list[tuple[re.Pattern[str], ErrorType]] = [
    (re.compile(r"RO_QUERY is to be executed only on read-only queries"), WriteRefusedError),
    (re.compile(r"Query timed out"), QueryTimeoutError),
    (re.compile(r"^'.*' not defined$"), UnknownVariableError),
    (re.compile(r"cannot reference variables not projected"), UnknownVariableError),
    (re.compile(r"^Type mismatch"), CypherTypeError),
    (re.compile(r"^errMsg: Invalid input|^Invalid input"), CypherSyntaxError),
    (re.compile(r"^Unknown function '"), CypherSyntaxError),
    (re.compile(r"does not yield output"), CypherSyntaxError),
    (re.compile(r"empty query|more than one statement"), CypherSyntaxError),
    (re.compile(r"Multiple result columns with the same name"), CypherSyntaxError),
    (re.compile(r"UNION must have the same column names"), CypherSyntaxError),
    (re.compile(r"requires bound nodes"), CypherSyntaxError),
    # Query-form errors FalkorDB reports without "Invalid input": the text parses, but
    # the engine refuses its shape (tests/graph/falkordb_errors.json provokes each one).
    (re.compile(r"Unexpected clause following RETURN"), CypherSyntaxError),
    (re.compile(r"Unable to resolve filtered alias"), CypherSyntaxError),  # exists((n)-->())
    (re.compile(r"aggregation expression within ORDER BY"), CypherSyntaxError),
    (re.compile(r"aggregate functions inside of aggregate functions"), CypherSyntaxError),
    (re.compile(r"Invalid use of aggregating function"), CypherSyntaxError),
    (re.compile(r"WITH clause projections must be aliased"), CypherSyntaxError),
    (re.compile(r"^Query cannot conclude with"), CypherSyntaxError),
    (re.compile(r"is the only function which can accept \* as an argument"), CypherSyntaxError),
    (re.compile(r"does not currently support"), CypherSyntaxError),
    (re.compile(r"(?:LIMIT|SKIP) specified value of invalid type"), CypherTypeError),
]

# Neo4j status codes (Neo.<Classification>.<Category>.<Title>), by title.
_NEO4J_CODES: dict[str, ErrorType] = {
    "SyntaxError": CypherSyntaxError,
    "SemanticError": CypherSyntaxError,
    "TypeError": CypherTypeError,
    "TransactionTimedOut": QueryTimeoutError,
    "TransactionTimedOutClientConfiguration": QueryTimeoutError,
    "AccessMode": WriteRefusedError,
    "WriteOnReadOnlyAccessDatabase": WriteRefusedError,
}

# Messages that refine a Neo4j syntax error into a more specific cause.
_NEO4J_MESSAGE_RULES: list[tuple[re.Pattern[str], ErrorType]] = [
    (re.compile(r"^Variable `.*` not defined"), UnknownVariableError),
    (re.compile(r"not possible to access variables declared before"), UnknownVariableError),
]

# Neo4j reports unknown names as notifications on a successful query, never as
# errors; they are logged, not raised. GQLSTATUS descriptions read
# "warn: unknown label. The label `X` does not exist ..." (01N50), "warn: unknown
# relationship type. ..." (01N51), "warn: unknown property key. ...".
_NEO4J_NOTIFICATIONS: list[tuple[str, ErrorClass]] = [
    ("warn: unknown label", ErrorClass.UNKNOWN_LABEL),
    ("warn: unknown relationship type", ErrorClass.UNKNOWN_RELATIONSHIP_TYPE),
    ("warn: unknown property key", ErrorClass.UNKNOWN_PROPERTY),
]


def classify_falkordb(message: str) -> ErrorType:
    """Map a FalkorDB error message to an exception class.

    Args:
        message: the engine's error text, unchanged.

    Returns:
        A :class:`QueryError` subclass; :class:`QueryError` itself (class
        ``OTHER``) when no rule matches: failures of a well-formed query on its
        values or arguments (division by zero, ``range`` step 0, negative
        ``substring`` start, date parse failure), an unknown procedure or a
        missing parameter.
    """
    for pattern, error_type in _FALKORDB_RULES:
        if pattern.search(message):
            return error_type
    return QueryError


def classify_neo4j(code: str | None, message: str) -> ErrorType:
    """Map a Neo4j status code and message to an exception class.

    Args:
        code: the status code, e.g. ``Neo.ClientError.Statement.SyntaxError``
            (``None`` when the server sent none).
        message: the server's error text, unchanged.

    Returns:
        A :class:`QueryError` subclass; :class:`QueryError` (``OTHER``) for codes
        with no class (arithmetic, argument, missing parameter, unknown procedure, ...).
    """
    for pattern, error_type in _NEO4J_MESSAGE_RULES:
        if pattern.search(message):
            return error_type
    title = (code or "").rsplit(".", 1)[-1]
    return _NEO4J_CODES.get(title, QueryError)


def falkordb_error(message: str, query: str) -> QueryError:
    """Build the classified exception for a FalkorDB error message.

    Args:
        message: the engine's error text (kept verbatim).
        query: the Cypher that was sent.

    Returns:
        The exception to raise.
    """
    error_type = classify_falkordb(message)
    if error_type is WriteRefusedError:
        return WriteRefusedError(message, query, clause="")
    return error_type(message, query)


def neo4j_error(code: str | None, message: str, query: str) -> QueryError:
    """Build the classified exception for a Neo4j error.

    Args:
        code: the Neo4j status code, if any.
        message: the server's error text (kept verbatim).
        query: the Cypher that was sent.

    Returns:
        The exception to raise.
    """
    error_type = classify_neo4j(code, message)
    if error_type is WriteRefusedError:
        return WriteRefusedError(message, query, clause="")
    return error_type(message, query)


def neo4j_notification_class(description: str | None) -> ErrorClass | None:
    """Name the error class a Neo4j GQL status notification hints at, for logging.

    Args:
        description: the status description of a ``GqlStatusObject``, e.g.
            ``"warn: unknown label. The label `Perso` does not exist."``.

    Returns:
        ``UNKNOWN_LABEL``, ``UNKNOWN_RELATIONSHIP_TYPE`` or ``UNKNOWN_PROPERTY``
        for the unknown-name warnings, else ``None``.
    """
    text = (description or "").lower()
    for prefix, error_class in _NEO4J_NOTIFICATIONS:
        if text.startswith(prefix):
            return error_class
    return None
