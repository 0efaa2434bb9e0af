"""Gold labels of an ask benchmark: every gold re-executed on our engine, repaired or excluded.

A question set written for another engine (Mind the Query's golds were verified
on Neo4j 5) cannot be scored on the embedded FalkorDB as it is: some golds raise
an error here, some return nothing, some return an answer that depends on the
engine. Before any model sees a question, :func:`check_golds` labels each gold
(:class:`~cypherturn.records.GoldCheck`):

* **repaired** when a rewrite keeps its meaning in FalkorDB's dialect
  (:func:`repair_gold`): ``date(x)`` on a property that already holds dates
  becomes ``x``; a date or number property compared for equality with a
  literal written as a string (the source database stores it as text, our
  loader types it) compares with the typed literal. Only equality (``=``,
  ``<>``, ``IN``, a map pattern) is rewritten: the order of ``'25/08/2017'`` as
  text is not the order of the date, so an ordering comparison, a string
  function or ``STARTS WITH`` on such a value has no faithful rewrite and is
  excluded as ``typed_value``;
* **excluded** when it does not run (``engine_error``, ``timeout``, ``write``),
  has nothing to compare (``empty_on_source``, ``empty_here``, ``null_only``,
  ``too_large``), was judged wrong by the data set's authors
  (``judged_wrong``), depends on the engine (``tie_cut``,
  ``limit_without_order``, ``engine_divergence``: the audits the CypherTurn
  importer runs, :mod:`cypherturn.sessions._divergence`), or repeats an
  earlier question (``duplicate``);
* **kept** otherwise.

The labels are made from the gold, the schema and the engine alone: no rule
here reads a question's wording (nothing in src/ is written from an evaluation
question: docs/design/ask-benchmark.md, "Which data is which").
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from cypherturn.cypher import TokenKind, output_order, parse_query, tokenize
from cypherturn.errors import CypherParseError, QueryError, QueryTimeoutError, WriteRefusedError
from cypherturn.experiments._askitems import AskItem
from cypherturn.graph import GraphEngine, GraphSchema, QueryResult, find_write_clause, to_plain
from cypherturn.records import GoldCheck, GoldReason, GoldStatus
from cypherturn.sessions import ANSWER_CHANGING, DivergenceAuditor, audit_ties, canonical_rows

__all__ = [
    "GoldRepair",
    "answer_digest",
    "check_gold",
    "check_golds",
    "property_types",
    "reason_counts",
    "repair_gold",
]

logger = logging.getLogger(__name__)

_DATE_FORMATS = ("%d/%m/%Y", "%Y-%m-%d")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_EQUALITY = frozenset({"=", "<>"})
_ORDERING = frozenset({"<", ">", "<=", ">="})
_STRING_FUNCTIONS = frozenset(
    {
        "substring",
        "split",
        "left",
        "right",
        "trim",
        "ltrim",
        "rtrim",
        "replace",
        "tolower",
        "toupper",
        "reverse",
    }
)
_STRING_OPERATORS = frozenset({"STARTS", "ENDS", "CONTAINS"})
_LIMIT = re.compile(r"\bLIMIT\s+(\d+)\s*$", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def property_types(schema: GraphSchema) -> dict[str, str]:
    """Property key -> its value type, for keys of one type wherever they occur.

    A key held by several labels or relationship types with different types is
    left out: a literal compared with it cannot be typed without knowing the label.

    Args:
        schema: the introspected schema.

    Returns:
        Key -> ``DATE``, ``INTEGER``, ``FLOAT``, ``STRING``, ...
    """
    seen: dict[str, set[str]] = {}
    owners = [label.properties for label in schema.labels]
    owners += [rel.properties for rel in schema.relationship_types]
    for properties in owners:
        for key, kind in properties.items():
            seen.setdefault(key, set()).add(kind.upper())
    return {key: kinds.pop() for key, kinds in seen.items() if len(kinds) == 1}


def _as_date(text: str) -> str | None:
    for pattern in _DATE_FORMATS:
        try:
            return datetime.strptime(text, pattern).date().isoformat()
        except ValueError:
            continue
    return None


@dataclass
class GoldRepair:
    """What :func:`repair_gold` did to a gold.

    Attributes:
        query: the gold after the rewrites (the input when none applied).
        reasons: the rewrites applied (``date_of_date``, ``string_date``, ``string_number``).
        hazards: typed values read as text (no faithful rewrite: ``typed_value``), as
            human-readable notes.
    """

    query: str
    reasons: list[GoldReason] = field(default_factory=list)
    hazards: list[str] = field(default_factory=list)


def repair_gold(gold: str, types: dict[str, str]) -> GoldRepair:
    """Rewrite a gold written for an engine that stores dates and numbers as text.

    Args:
        gold: the gold query.
        types: property key -> value type on our graph (:func:`property_types`).

    Returns:
        The :class:`GoldRepair`; a gold that does not tokenize is returned unchanged.

    Example (the POLE schema types ``Crime.date`` as DATE):
        >>> repair_gold("MATCH (c:Crime {date: '25/08/2017'}) RETURN count(c)", {"date": "DATE"}).query
        "MATCH (c:Crime {date: date('2017-08-25')}) RETURN count(c)"
    """
    try:
        tokens = tokenize(gold)
    except CypherParseError:
        return GoldRepair(gold)
    edits: list[tuple[int, int, str]] = []
    reasons: list[GoldReason] = []
    hazards: list[str] = []

    def typed(key_index: int) -> str | None:
        tok = tokens[key_index]
        if tok.kind not in (TokenKind.NAME, TokenKind.QUOTED_NAME):
            return None
        kind = types.get(tok.text.strip("`"))
        return kind if kind in ("DATE", "INTEGER", "FLOAT") else None

    def literal(index: int, kind: str) -> None:
        tok = tokens[index]
        if tok.kind is not TokenKind.STRING:
            return
        text = tok.text[1:-1]
        if kind == "DATE":
            iso = _as_date(text)
            if iso is None:
                hazards.append(f"{tok.text} compared with a date property")
                return
            edits.append((tok.start, tok.end, f"date('{iso}')"))
            reasons.append(GoldReason.STRING_DATE)
        elif _NUMBER.match(text):
            edits.append((tok.start, tok.end, text))
            reasons.append(GoldReason.STRING_NUMBER)
        else:
            hazards.append(f"{tok.text} compared with a numeric property")

    def access_at(i: int) -> str | None:
        """Type of the property read by ``var.key`` ending at token ``i`` (the key)."""
        if i >= 2 and tokens[i - 1].is_punct(".") and tokens[i - 2].kind is TokenKind.NAME:
            return typed(i)
        return None

    n = len(tokens)
    for i, tok in enumerate(tokens):
        # date(v.key) on a DATE key
        if (
            tok.is_name("DATE")
            and i + 5 < n
            and tokens[i + 1].is_punct("(")
            and tokens[i + 3].is_punct(".")
            and tokens[i + 5].is_punct(")")
            and typed(i + 4) == "DATE"
        ):
            edits.append(
                (tok.start, tokens[i + 5].end, gold[tokens[i + 2].start : tokens[i + 4].end])
            )
            reasons.append(GoldReason.DATE_OF_DATE)
            continue
        # {key: 'text'} in a pattern or map
        if (
            tok.kind in (TokenKind.NAME, TokenKind.QUOTED_NAME)
            and i > 0
            and tokens[i - 1].is_punct("{", ",")
            and i + 2 < n
            and tokens[i + 1].is_punct(":")
            and (kind := typed(i)) is not None
        ):
            literal(i + 2, kind)
            continue
        kind = access_at(i)
        if kind is None:
            continue
        after = tokens[i + 1] if i + 1 < n else None
        before = tokens[i - 3] if i >= 3 else None
        if (
            after is not None
            and after.kind is TokenKind.PUNCT
            and after.text in _EQUALITY
            and i + 2 < n
        ):
            literal(i + 2, kind)
        elif (
            after is not None and after.is_name("IN") and i + 2 < n and tokens[i + 2].is_punct("[")
        ):
            j = i + 3
            while j < n and not tokens[j].is_punct("]"):
                literal(j, kind)
                j += 1
        elif after is not None and after.kind is TokenKind.PUNCT and after.text in _ORDERING:
            if i + 2 < n and tokens[i + 2].kind is TokenKind.STRING:
                hazards.append(
                    f"{gold[tokens[i - 2].start : tokens[i + 2].end]} orders a typed value as text"
                )
        elif after is not None and after.upper in _STRING_OPERATORS:
            hazards.append(f"{after.text} on {gold[tokens[i - 2].start : tok.end]}, a typed value")
        if (
            i >= 4
            and before is not None
            and before.kind is TokenKind.PUNCT
            and before.text in _EQUALITY
            and tokens[i - 4].kind is TokenKind.STRING
        ):
            literal(i - 4, kind)
        if (
            i >= 4
            and tokens[i - 3].is_punct("(")
            and tokens[i - 4].kind is TokenKind.NAME
            and tokens[i - 4].text.lower() in _STRING_FUNCTIONS
        ):
            hazards.append(
                f"{tokens[i - 4].text}() on {gold[tokens[i - 2].start : tok.end]}, a typed value"
            )
    query = gold
    for start, end, text in sorted(edits, reverse=True):
        query = query[:start] + text + query[end:]
    return GoldRepair(query, list(dict.fromkeys(reasons)), hazards)


def answer_digest(result: QueryResult, ordered: bool) -> str:
    """SHA-256 of an answer's columns and rows (rows sorted unless ``ordered``)."""
    rows = [list(r) for r in to_plain(result.rows)]
    payload = json.dumps(
        {"columns": result.columns, "rows": rows if ordered else canonical_rows(rows)},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _ordered(gold: str) -> bool:
    try:
        return output_order(gold).ordered
    except CypherParseError:
        return False


def _limit_without_order(gold: str, rows: int) -> str | None:
    """Why a LIMIT with no ORDER BY makes the answer the engine's choice, or ``None``."""
    try:
        parsed = parse_query(gold)
    except CypherParseError:
        return None
    for part in parsed.parts:
        for position, clause in enumerate(part.clauses):
            if not hasattr(clause, "order_by") or not getattr(clause, "limit", False):
                continue
            if clause.order_by:
                continue
            found = _LIMIT.search(gold[clause.start : clause.end])
            last = part is parsed.parts[-1] and position == len(part.clauses) - 1
            # a final LIMIT k that kept fewer than k rows cut nothing
            if last and found is not None and rows < int(found.group(1)):
                continue
            return f"{gold[clause.start : clause.end].strip()} has no ORDER BY"
    return None


def _normalized(text: str) -> str:
    return _SPACES.sub(" ", text.strip().lower())


def _excluded(
    item: AskItem, gold: str, reasons: Sequence[GoldReason], note: str, rows: int = 0
) -> GoldCheck:
    return GoldCheck(
        question_id=item.id,
        graph=item.graph,
        status=GoldStatus.EXCLUDED,
        reasons=list(dict.fromkeys(reasons)),
        note=note,
        gold=gold,
        original_gold=item.gold,
        rows=rows,
    )


@dataclass
class _GraphContext:
    engine: GraphEngine
    types: dict[str, str]
    auditor: DivergenceAuditor


def check_gold(
    item: AskItem,
    context: _GraphContext,
    *,
    timeout_s: float,
    row_cap: int,
) -> tuple[GoldCheck, QueryResult | None]:
    """Label one gold (see the module docstring); the answer is returned when it is usable."""
    if item.manual_logical is False:
        return _excluded(
            item, item.gold, [GoldReason.JUDGED_WRONG], "the data set's hand label: logical = 0"
        ), None
    write = find_write_clause(item.gold)
    if write is not None:
        return _excluded(item, item.gold, [GoldReason.WRITE], f"the gold writes ({write})"), None
    repair = repair_gold(item.gold, context.types)
    gold = repair.query
    typed = [GoldReason.TYPED_VALUE] if repair.hazards else []
    hazard_note = "; ".join(repair.hazards)
    try:
        result = context.engine.execute(gold, timeout_s=timeout_s, row_cap=row_cap)
    except QueryTimeoutError as e:
        return _excluded(item, gold, [GoldReason.TIMEOUT], str(e)), None
    except WriteRefusedError as e:
        return _excluded(item, gold, [GoldReason.WRITE], str(e)), None
    except QueryError as e:
        note = "; ".join(filter(None, [f"{e.error_class.value}: {e.engine_message}", hazard_note]))
        return _excluded(item, gold, [*typed, GoldReason.ENGINE_ERROR], note), None
    if result.truncated:
        return _excluded(
            item, gold, [GoldReason.TOO_LARGE], f"more than {row_cap} rows", len(result.rows)
        ), None
    # an engine-dependent gold is named as such even when it came back empty here
    unstable = _unstable(gold, len(result.rows), context, timeout_s)
    if unstable is not None:
        reason, note = unstable
        return _excluded(item, gold, [reason], note, len(result.rows)), None
    if not result.rows:
        empty = GoldReason.EMPTY_ON_SOURCE if item.manual_rows is False else GoldReason.EMPTY_HERE
        note = (
            "no rows on the source database either (the data set's hand label)"
            if item.manual_rows is False
            else "no rows here"
        )
        return _excluded(
            item, gold, [*typed, empty], "; ".join(filter(None, [note, hazard_note]))
        ), None
    if all(cell is None for row in result.rows for cell in row):
        return _excluded(
            item, gold, [GoldReason.NULL_ONLY], "every cell is null", len(result.rows)
        ), None
    if repair.hazards:
        return _excluded(item, gold, typed, hazard_note, len(result.rows)), None
    check = GoldCheck(
        question_id=item.id,
        graph=item.graph,
        status=GoldStatus.REPAIRED if repair.reasons else GoldStatus.KEPT,
        reasons=repair.reasons,
        gold=gold,
        original_gold=item.gold,
        rows=len(result.rows),
        digest=answer_digest(result, _ordered(gold)),
    )
    return check, result


def _unstable(
    gold: str, rows: int, context: _GraphContext, timeout_s: float
) -> tuple[GoldReason, str] | None:
    """Why the gold's answer depends on the engine (ties, LIMIT without ORDER BY, divergences)."""
    try:
        ties = audit_ties(1, gold, context.engine, timeout_s=timeout_s)
    except QueryError as e:
        return GoldReason.TIE_CUT, f"tie probe failed: {e}"
    if ties:
        return GoldReason.TIE_CUT, "; ".join(f.message for f in ties)
    limit = _limit_without_order(gold, rows)
    if limit is not None:
        return GoldReason.LIMIT_WITHOUT_ORDER, limit
    try:
        findings = context.auditor.findings(1, gold)
    except QueryError as e:
        logger.warning("divergence probe of %r failed: %s", gold, e)
        return None
    changing = [f for f in findings if f.code in ANSWER_CHANGING]
    if changing:
        return GoldReason.ENGINE_DIVERGENCE, "; ".join(
            f"{f.code.value}: {f.message}" for f in changing
        )
    return None


def check_golds(
    items: Iterable[AskItem],
    engine_for: Callable[[str], GraphEngine],
    *,
    timeout_s: float = 60.0,
    row_cap: int = 10_000,
    on_check: Callable[[GoldCheck], None] | None = None,
) -> list[tuple[GoldCheck, QueryResult | None]]:
    """Label every gold of a question set on our engine (see the module docstring).

    Args:
        items: the questions.
        engine_for: graph name -> an engine on that graph (loaded).
        timeout_s: per-query limit, seconds.
        row_cap: rows kept per query; a gold with more is excluded (``too_large``).
        on_check: called after each gold is labelled (progress).

    Returns:
        One ``(check, answer)`` per item, in order; ``answer`` is the gold's result
        on our engine when the gold is usable, else ``None``.

    Raises:
        EngineConnectionError: an engine is unreachable (a query error labels the gold instead).
    """
    contexts: dict[str, _GraphContext] = {}
    seen: set[tuple[str, str, str]] = set()
    out: list[tuple[GoldCheck, QueryResult | None]] = []
    for item in items:
        key = (item.graph, _normalized(item.question), _normalized(item.gold))
        if key in seen:
            checked: tuple[GoldCheck, QueryResult | None] = (
                _excluded(item, item.gold, [GoldReason.DUPLICATE], "asked earlier in the set"),
                None,
            )
        else:
            seen.add(key)
            if item.graph not in contexts:
                engine = engine_for(item.graph)
                contexts[item.graph] = _GraphContext(
                    engine, property_types(engine.schema()), DivergenceAuditor(engine, timeout_s)
                )
            checked = check_gold(item, contexts[item.graph], timeout_s=timeout_s, row_cap=row_cap)
        out.append(checked)
        if on_check is not None:
            on_check(checked[0])
    return out


def reason_counts(checks: Iterable[GoldCheck]) -> dict[str, int]:
    """Questions per status and per reason: ``{"kept": n, "repaired": n, "excluded": n, "<reason>": n}``."""
    counts: dict[str, int] = {status.value: 0 for status in GoldStatus}
    for check in checks:
        counts[check.status.value] += 1
        for reason in check.reasons:
            counts[reason.value] = counts.get(reason.value, 0) + 1
    return counts
