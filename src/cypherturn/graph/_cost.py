"""Refuse, before it runs, a query whose cost is visible in its text and that no timeout can stop.

FalkorDB checks a query's timeout between records, not while one expression is
evaluated. ``range(1, 100000000)`` builds its hundred million values inside a
single evaluation, so with a 1 s limit ``UNWIND range(1, 100000000) AS x
RETURN count(x)`` returned after 9.2 s and ``RETURN reduce(s = '', x IN
range(1, 50000000) | s + 'x')`` after 21.8 s (docs/design/engine-reliability.md,
"The timeout is a promise"), and the server's
worker thread stays busy until the list is built and freed. The client gives
up at its own deadline, but the runaway keeps a worker busy, so such a query
is refused before it is sent.

Only what the text and its parameters show is judged: ``range`` calls whose
bounds (and step) are integer constants, written as literals, as parameters
with a numeric value (``range(1, $n)`` with ``n = 60000000``: the engine runs
the query with the value, so the check reads it too; docs/design/engine-reliability.md,
"Parameters are checked like the query") or as constant
arithmetic over both (``10^8``, ``1e8``, ``100 * $k``). Within one clause the element counts
of such calls are multiplied, because a range inside a list comprehension or
``reduce`` over another range is built once per outer element; the product
bounds the values that clause can build in one evaluation. Ranges in
different clauses (``UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS
b``) are not multiplied: the rows between clauses are a stream, and the
engine's timeout stops it. Measured on the embedded server:
``size(range(1, 10000000))`` takes about 0.25 s, so the default budget of
10,000,000 values keeps the build well inside the one-second grace of the
timeout promise.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

from cypherturn.cypher import READ_CLAUSES, Token, TokenKind, bracket_depths, tokenize
from cypherturn.errors import CypherParseError, QueryCostError

__all__ = ["MAX_LIST_VALUES", "check_cost", "literal_range_values"]

MAX_LIST_VALUES = 10_000_000
"""Most values the literal ``range`` calls of one query may build together."""

_BINARY: dict[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "^": operator.pow,
}
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "^": 3}
# 10^400 is a float overflow; anything this large is refused anyway.
_HUGE = 1e300


class _NotConstant(Exception):
    """The expression is not integer-constant arithmetic."""


def _number(token: Token) -> float:
    text = token.text.replace("_", "").lower()
    try:
        value = float(int(text, 0)) if text.startswith(("0x", "0o")) else float(text)
    except (ValueError, OverflowError) as e:
        raise _NotConstant from e
    return value if math.isfinite(value) else _HUGE


class _Evaluator:
    """Precedence-climbing evaluator of ``+ - * / ^``, unary minus and parentheses over numbers."""

    def __init__(self, tokens: list[Token], params: Mapping[str, Any]) -> None:
        self._tokens = tokens
        self._params = params
        self._i = 0

    def value(self) -> float:
        result = self._expression(1)
        if self._i != len(self._tokens):
            raise _NotConstant
        return result

    def _peek(self) -> Token | None:
        return self._tokens[self._i] if self._i < len(self._tokens) else None

    def _expression(self, min_precedence: int) -> float:
        left = self._unary()
        while True:
            token = self._peek()
            if token is None or token.kind is not TokenKind.PUNCT or token.text not in _BINARY:
                return left
            precedence = _PRECEDENCE[token.text]
            if precedence < min_precedence:
                return left
            self._i += 1
            # ^ is right-associative, the others left-associative.
            right = self._expression(precedence if token.text == "^" else precedence + 1)
            try:
                left = _BINARY[token.text](left, right)
            except (OverflowError, ZeroDivisionError):
                left = _HUGE
            if not math.isfinite(left) or abs(left) > _HUGE:
                left = math.copysign(_HUGE, left) if not math.isnan(left) else _HUGE

    def _unary(self) -> float:
        token = self._peek()
        if token is None:
            raise _NotConstant
        self._i += 1
        if token.is_punct("-"):
            return -self._unary()
        if token.is_punct("+"):
            return self._unary()
        if token.is_punct("("):
            inner = self._expression(1)
            closing = self._peek()
            if closing is None or not closing.is_punct(")"):
                raise _NotConstant
            self._i += 1
            return inner
        if token.kind is TokenKind.NUMBER:
            return _number(token)
        if token.kind is TokenKind.PARAMETER:
            return _parameter(token, self._params)
        raise _NotConstant


def _parameter(token: Token, params: Mapping[str, Any]) -> float:
    """The numeric value the engine will substitute for ``$name``; booleans and others are no number."""
    name = token.text[1:]
    if name.startswith("`") and name.endswith("`") and len(name) >= 2:
        name = name[1:-1].replace("``", "`")
    value = params.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _NotConstant
    try:
        number = float(value)
    except OverflowError:
        return _HUGE
    return number if math.isfinite(number) else _HUGE


def _arguments(
    tokens: list[Token], depths: list[int], open_index: int
) -> tuple[list[list[Token]], Token] | None:
    """The comma-separated arguments of the call whose ``(`` is at ``open_index``, and its ``)``.

    ``depths`` is :func:`cypherturn.cypher.bracket_depths` of ``tokens`` (lenient).
    """
    inner = depths[open_index] + 1
    arguments: list[list[Token]] = [[]]
    for token, depth in zip(tokens[open_index + 1 :], depths[open_index + 1 :], strict=True):
        if depth == inner and token.kind is TokenKind.PUNCT and token.text in ")]}":
            return arguments, token
        if depth == inner and token.is_punct(","):
            arguments.append([])
            continue
        arguments[-1].append(token)
    return None


def _range_size(arguments: list[list[Token]], params: Mapping[str, Any]) -> float | None:
    if len(arguments) not in (2, 3) or any(not argument for argument in arguments):
        return None
    try:
        values = [_Evaluator(argument, params).value() for argument in arguments]
    except _NotConstant:
        return None
    start, end = values[0], values[1]
    step = values[2] if len(values) == 3 else 1.0
    if step == 0:
        return None
    span = (end - start) / step
    if not math.isfinite(span) or abs(span) > _HUGE:
        return _HUGE if span > 0 else 0.0
    return float(max(math.floor(span) + 1, 0))


_CLAUSE_WORDS = READ_CLAUSES | {"UNION"}


def _clause_numbers(tokens: list[Token], depths: list[int]) -> list[int]:
    """For each token, the number of the top-level clause it belongs to."""
    numbers: list[int] = []
    clause = 0
    for token, depth in zip(tokens, depths, strict=True):
        if depth == 0 and token.kind is TokenKind.NAME and token.upper in _CLAUSE_WORDS:
            clause += 1
        numbers.append(clause)
    return numbers


def literal_range_values(
    query: str, params: Mapping[str, Any] | None = None
) -> list[tuple[str, float, int]]:
    """The ``range`` calls of ``query`` whose bounds are constants, with their element counts.

    Args:
        query: Cypher text (tokenized leniently; nothing is executed).
        params: the parameters the query runs with; a ``$name`` bound to a
            number counts as that constant.

    Returns:
        ``(call text, number of values, clause number)`` per constant
        ``range(...)`` call, in source order; calls with a non-constant bound
        are left out. Calls with the same clause number are in one top-level clause.
    """
    try:
        tokens = tokenize(query, lenient=True)
    except CypherParseError:
        return []
    depths = bracket_depths(tokens, lenient=True)
    clauses = _clause_numbers(tokens, depths)
    found: list[tuple[str, float, int]] = []
    for index, token in enumerate(tokens[:-1]):
        if not token.is_name("RANGE") or not tokens[index + 1].is_punct("("):
            continue
        # ``n.range(...)`` is not the function, and ``range`` as a property name is no call.
        if index and tokens[index - 1].is_punct("."):
            continue
        call = _arguments(tokens, depths, index + 1)
        if call is None:
            continue
        size = _range_size(call[0], params or {})
        if size is not None:
            found.append((query[token.start : call[1].end], size, clauses[index]))
    return found


def check_cost(
    query: str, params: Mapping[str, Any] | None = None, *, max_values: int = MAX_LIST_VALUES
) -> None:
    """Refuse a query whose constant ``range`` calls would build more than ``max_values`` values.

    Args:
        query: Cypher text.
        params: the parameters it runs with (numeric ones count as constants).
        max_values: the budget of values (default :data:`MAX_LIST_VALUES`).

    Raises:
        QueryCostError: in one clause, the product of the constant ranges' sizes
            exceeds ``max_values``; the message names the calls. Counted as a timeout
            (``error_class`` ``timeout``): the query could not have finished
            inside its limit.
    """
    by_clause: dict[int, list[tuple[str, float]]] = {}
    for text, size, clause in literal_range_values(query, params):
        by_clause.setdefault(clause, []).append((text, size))
    over = [
        (ranges, total)
        for ranges in by_clause.values()
        if (total := math.prod(size for _, size in ranges)) > max_values
    ]
    if not over:
        return
    ranges, total = over[0]
    calls = ", ".join(
        f"{text}{_bound(text, params or {})} ({_count(size)} values)" for text, size in ranges
    )
    product = "" if len(ranges) == 1 else f", {_count(total)} together"
    raise QueryCostError(
        f"refused before running: {calls}{product}; a query may build at most "
        f"{max_values:,} list values, because the engine cannot stop a list while it "
        "builds it (use a smaller range, or aggregate over the graph instead)",
        query,
    )


def _bound(call: str, params: Mapping[str, Any]) -> str:
    """`` with $n = 60,000,000`` for the numeric parameters a call uses, so the refusal shows them."""
    try:
        tokens = tokenize(call, lenient=True)
    except CypherParseError:
        return ""
    used: list[str] = []
    for token in tokens:
        if token.kind is not TokenKind.PARAMETER:
            continue
        try:
            value = _parameter(token, params)
        except _NotConstant:
            continue
        shown = f"{token.text} = {_count(value) if value == int(value) else value}"
        if shown not in used:
            used.append(shown)
    return f" with {', '.join(used)}" if used else ""


def _count(size: float) -> str:
    return f"{int(size):,}" if size < 1e18 else f"{size:.3g}"
