"""The checks on a tool call's arguments, and the error an assistant's call can cause.

Every input is capped (:mod:`cypherturn.mcp_server._limits`) before anything
runs; a refusal is a :class:`ToolInputError` whose one message names the
argument and what the server takes instead.
"""

from __future__ import annotations

from typing import Any

from cypherturn.errors import CypherTurnError
from cypherturn.graph import NUL, find_parameter_problem
from cypherturn.mcp_server._limits import MAX_PARAMS_BYTES, MAX_QUERY_CHARS, json_size

__all__ = ["ToolInputError", "check_length", "checked_params", "checked_query"]


class ToolInputError(CypherTurnError):
    """A tool call the graph cannot serve: bad arguments, a write, an engine refusal.

    The message is written for the assistant that made the call: it names the
    offending argument or clause and, where it can, what the graph has instead.
    """


def checked_query(query: str) -> str:
    """``query`` stripped, if a query the engine reads whole, else a ToolInputError saying why.

    Raises:
        ToolInputError: an empty query, one longer than :data:`~cypherturn.mcp_server._limits.MAX_QUERY_CHARS`,
            or one holding a NUL character.
    """
    submitted = query.strip()
    if not submitted:
        raise ToolInputError("query must not be empty")
    check_length("query", submitted, MAX_QUERY_CHARS)
    if NUL in submitted:
        raise ToolInputError(
            f"query holds a NUL character at offset {submitted.index(NUL)}; "
            "the engine would read only the text before it"
        )
    return submitted


def check_length(name: str, value: str, most: int) -> None:
    """Refuse ``value`` (the argument ``name``) when it is longer than ``most`` characters."""
    if len(value) > most:
        raise ToolInputError(
            f"{name} is {len(value):,} characters long; this server takes at most {most:,}"
        )


def checked_params(params: dict[str, Any] | None) -> dict[str, Any]:
    """``params`` if the engine can take them as given, else a ToolInputError naming the parameter."""
    if not params:
        return {}
    try:
        size = json_size(params)
    except ValueError as e:  # a value JSON cannot hold (only from Python callers)
        raise ToolInputError(f"params cannot be written as JSON: {e}") from e
    if size > MAX_PARAMS_BYTES:
        raise ToolInputError(
            f"params take {size:,} bytes as JSON; this server takes at most {MAX_PARAMS_BYTES:,}"
        )
    problem = find_parameter_problem(params)
    if problem is not None:
        raise ToolInputError(f"params: {problem}")
    return dict(params)
