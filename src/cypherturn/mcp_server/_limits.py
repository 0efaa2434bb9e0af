"""What one MCP tool call may ask for and send back: input caps and the result byte budget.

Every tool's Python-side work grows with its input (the tokenizer and the
schema check with the query, edit distances with the searched text, the
parameter prefix with the parameters), and before these caps a 1 MB
``search_values`` text kept the server busy for 7.7 s outside any timeout
(docs/design/mcp.md, "Inputs and parameters"). The caps are far above what an assistant sends for a real question
and keep each call's own work to milliseconds.

A result travels to the client as one JSON-RPC message. The official client
reads a streamable-HTTP response as server-sent events of at most 1,048,576
bytes, and a result of 10,000 wide rows is several megabytes, so the rows
of one result are cut to :data:`DEFAULT_RESULT_BYTES` of JSON (half the
event limit, leaving room for the query, the findings and the summary), and
the result says how many were shown.
"""

from __future__ import annotations

from typing import Any

import pydantic_core

__all__ = [
    "DEFAULT_CONNECTIONS",
    "DEFAULT_RESULT_BYTES",
    "MAX_LABELS",
    "MAX_NAME_CHARS",
    "MAX_PARAMS_BYTES",
    "MAX_QUERY_CHARS",
    "MAX_QUESTION_CHARS",
    "MAX_TEXT_CHARS",
    "fit_rows",
    "json_size",
]

MAX_QUERY_CHARS = 20_000
"""Longest ``read_cypher`` query, characters (checking one this long takes about 50 ms)."""

MAX_PARAMS_BYTES = 64 * 1024
"""Largest ``read_cypher`` parameters, bytes of JSON (they become query text on FalkorDB)."""

MAX_TEXT_CHARS = 1_000
"""Longest ``search_values`` text, characters (edit distances grow with its square)."""

MAX_NAME_CHARS = 256
"""Longest property key, label or relationship type name in an argument, characters."""

MAX_LABELS = 100
"""Most labels one ``get_schema`` projection may name."""

MAX_QUESTION_CHARS = 2_000
"""Longest ``ask`` question, characters (it goes into the model's prompt)."""

DEFAULT_RESULT_BYTES = 512 * 1024
"""Most bytes of JSON the rows of one result may take (half the client's 1 MiB event limit)."""

DEFAULT_CONNECTIONS = 8
"""Engine connections, hence read calls running at once (the embedded FalkorDB has 8+ workers)."""


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON, as it goes over the wire.

    Example::

        >>> json_size([1, "é"])  # é is two bytes of UTF-8
        8
    """
    return len(pydantic_core.to_json(value, inf_nan_mode="null"))


def fit_rows(rows: list[list[Any]], budget_bytes: int) -> list[list[Any]]:
    """The longest head of ``rows`` whose JSON fits in ``budget_bytes``.

    Rows are kept whole and in order; a first row larger than the budget gives
    no rows (the caller says how many of how many were shown).

    Args:
        rows: result rows of plain JSON values.
        budget_bytes: the most bytes the JSON array of the kept rows may take.

    Returns:
        ``rows`` itself when it fits, else a shorter prefix.

    Example::

        >>> fit_rows([["a" * 10], ["b" * 10], ["c" * 10]], 35)
        [['aaaaaaaaaa'], ['bbbbbbbbbb']]
    """
    used = 2  # the brackets of the array
    for index, row in enumerate(rows):
        used += json_size(row) + (1 if index else 0)
        if used > budget_bytes:
            return rows[:index]
    return rows
