"""The static schema check, value grounding of literals, and deterministic repairs.

:func:`check_query` compares what a query names (:mod:`._facts`) with a
:class:`~cypherturn.grounding.GraphIndex`: labels, relationship types, the
endpoint labels and direction of every relationship pattern, property keys per
label and type, undefined variables, and SQL habits. :func:`check_values`
runs after a query returned no rows and checks each compared string literal
against the stored values. A finding whose fix is unambiguous carries an
:class:`Edit`; :func:`apply_edits` applies them and records each one.

Guarantee: a query the check cannot parse gets no verdict (``parsed`` is
False and no finding but SQL-habit hints), and every finding names something
that cannot match the graph as it is, so a query that the engine runs correctly
is never flagged (tested on every gold query the project ships).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from cypherturn.cypher import Token, TokenKind, tokenize
from cypherturn.errors import CypherParseError
from cypherturn.graph import cypher_name
from cypherturn.grounding._facts import (
    KEYWORDS,
    BranchFacts,
    QueryFacts,
    RelationshipFact,
    Span,
    query_facts,
)
from cypherturn.grounding._index import GraphIndex

__all__ = [
    "FINDING_CODES",
    "CheckReport",
    "Edit",
    "Finding",
    "apply_edits",
    "check_query",
    "check_values",
    "flip_relationship",
]

FindingCode = Literal[
    "unknown_label",
    "unknown_relationship_type",
    "unknown_property",
    "property_not_on_label",
    "reversed_direction",
    "wrong_endpoints",
    "undefined_variable",
    "sql_habit",
    "value_not_found",
    "engine_pitfall",
    "literal_type",
    "question_threshold",
    "answer_shape",
    "unbound_reference",
    "missing_label",
]
FINDING_CODES: tuple[str, ...] = FindingCode.__args__  # type: ignore[attr-defined]
"""Every finding code, in the order the check reports them."""


class Edit(BaseModel):
    """A deterministic textual repair: replace ``query[start:end]`` with ``replacement``.

    Attributes:
        start / end: source offsets in the query the finding was made on.
        replacement: the new text.
        reason: one line saying why the fix is unambiguous.
    """

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    replacement: str
    reason: str


class Finding(BaseModel):
    """One defect of a query, visible from the schema or the stored data.

    Attributes:
        code: the defect class (:data:`FINDING_CODES`).
        message: one sentence for the model and the user, naming what the graph has instead.
        span: ``[start, end)`` offsets of the offending text, when one token is to blame.
        suggestions: names or stored values the query probably meant, best first.
        edit: the deterministic repair, when the fix is unambiguous.
    """

    code: FindingCode
    message: str
    span: tuple[int, int] | None = None
    suggestions: list[str] = Field(default_factory=list)
    edit: Edit | None = None


class CheckReport(BaseModel):
    """The verdict of :func:`check_query` on one query.

    Attributes:
        parsed: cypherturn's parser read the query; False means no verdict.
        parse_error: the parser's message when it could not.
        findings: the defects found (SQL-habit hints are kept even without a parse).
    """

    parsed: bool
    parse_error: str | None = None
    findings: list[Finding] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the query parsed and nothing was found."""
        return self.parsed and not self.findings


def _close(name: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    pool = sorted(set(candidates))
    same_case = [c for c in pool if c.lower() == name.lower()]
    close = difflib.get_close_matches(name, pool, n=limit, cutoff=0.6)
    folded = {c.lower(): c for c in pool}
    close += [
        folded[c]
        for c in difflib.get_close_matches(name.lower(), list(folded), n=limit, cutoff=0.6)
    ]
    out: list[str] = []
    for c in [*same_case, *close]:
        if c not in out:
            out.append(c)
    return out[:limit]


def _quoted_name(name: str) -> str:
    if name.replace("_", "a").isalnum() and not name[0].isdigit():
        return name
    return "`" + name.replace("`", "``") + "`"


def _name_finding(
    code: FindingCode, kind: str, name: str, span: Span, known: Iterable[str]
) -> Finding:
    suggestions = _close(name, known)
    same_case = [s for s in suggestions if s.lower() == name.lower()]
    edit = None
    if len(same_case) == 1:
        edit = Edit(
            start=span.start,
            end=span.end,
            replacement=_quoted_name(same_case[0]),
            reason=f"the graph's only {kind} equal to {name!r} ignoring case",
        )
    hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
    return Finding(
        code=code,
        message=f"the graph has no {kind} {name!r}{hint}",
        span=(span.start, span.end),
        suggestions=suggestions,
        edit=edit,
    )


def _labels(
    branch: BranchFacts, node_variable: str | None, written: Iterable[str]
) -> frozenset[str]:
    labels = set(written)
    if node_variable is not None:
        labels |= branch.labels_of(node_variable)
    return frozenset(labels)


def _pattern(source: str, rel_type: str, target: str) -> str:
    return f"(:{_quoted_name(source)})-[:{_quoted_name(rel_type)}]->(:{_quoted_name(target)})"


def flip_relationship(query: str, rel: RelationshipFact) -> Edit | None:
    """The edit that reverses a relationship pattern's arrow, keeping its bracket body.

    Args:
        query: the query ``rel`` was read from.
        rel: a relationship pattern of :func:`~cypherturn.grounding.query_facts`.

    Returns:
        The edit, or ``None`` for an undirected pattern.
    """
    element = rel.element
    text = query[element.start : element.end]
    if element.insert_at is None:
        body = ""
    else:
        open_at = text.find("[")
        close_at = text.rfind("]")
        if open_at < 0 or close_at < open_at:
            return None
        body = text[open_at : close_at + 1]
    if rel.direction == "out":
        replacement = f"<-{body}-" if body else "<--"
    elif rel.direction == "in":
        replacement = f"-{body}->" if body else "-->"
    else:
        return None
    return Edit(
        start=element.start,
        end=element.end,
        replacement=replacement,
        reason="the schema has this relationship type between these labels only the other way",
    )


def _relationship_findings(
    query: str, branch: BranchFacts, rel: RelationshipFact, index: GraphIndex
) -> list[Finding]:
    types = [name for name, _ in rel.types]
    if not types or any(t not in index.types for t in types) or rel.var_length:
        return []
    left = _labels(branch, rel.left.variable, (n for n, _ in rel.left.labels))
    right = _labels(branch, rel.right.variable, (n for n, _ in rel.right.labels))
    if any(label not in index.labels for label in left | right):
        return []
    triples = index.triples()

    def occurs(sources: frozenset[str], targets: frozenset[str]) -> bool:
        return any(
            t == rel_type and (not sources or s in sources) and (not targets or g in targets)
            for s, t, g in triples
            for rel_type in types
        )

    forward, backward = occurs(left, right), occurs(right, left)
    if rel.direction == "both" and (forward or backward):
        return []
    if rel.direction == "out" and forward:
        return []
    if rel.direction == "in" and backward:
        return []
    written = query[rel.left.start : rel.right.end]
    actual = sorted(_pattern(s, t, g) for s, t, g in triples if t in types)
    if rel.direction != "both" and (backward if rel.direction == "out" else forward):
        return [
            Finding(
                code="reversed_direction",
                message=f"{written} points the wrong way: the graph has {', '.join(actual)}",
                span=(rel.element.start, rel.element.end),
                suggestions=actual,
                edit=flip_relationship(query, rel),
            )
        ]
    finding = Finding(
        code="wrong_endpoints",
        message=f"{written} matches nothing: {', '.join(repr(t) for t in types)} "
        f"connects only {', '.join(actual)}",
        span=(rel.element.start, rel.element.end),
        suggestions=actual,
    )
    if len(types) == 1:
        _attach_retype(query, branch, rel, index, finding)
        if finding.edit is None:
            _attach_path_edit(query, branch, rel, index, finding)
    return [finding]


def _attach_retype(
    query: str, branch: BranchFacts, rel: RelationshipFact, index: GraphIndex, finding: Finding
) -> None:
    """Give a relationship pattern whose type cannot match the one relationship its endpoints have.

    ``(p:Person)-[:INVOLVED_IN]->(c:Crime)`` (no such type) or
    ``(t:Payment)-[:TO]->(c:Client)`` (``TO`` never joins them), in a graph where
    exactly one relationship type, in one direction, joins the two endpoint
    labels, ``(:Person)-[:PARTY_TO]->(:Crime)``, is rewritten with that type and
    direction (the variable kept). Endpoints with several labels or none, a
    variable-length pattern, a property map on the relationship, or two
    candidate relationships: no edit.
    """
    left = _labels(branch, rel.left.variable, (n for n, _ in rel.left.labels))
    right = _labels(branch, rel.right.variable, (n for n, _ in rel.right.labels))
    if len(left) != 1 or len(right) != 1 or rel.var_length or rel.map_keys:
        return
    (source,), (target,) = left, right
    if source == target:
        return
    joins = [("out", t) for s, t, g in index.triples() if s == source and g == target]
    joins += [("in", t) for s, t, g in index.triples() if s == target and g == source]
    if len(joins) != 1:
        return
    ((direction, rel_type),) = joins
    body = f"[{rel.variable or ''}:{_quoted_name(rel_type)}]"
    if rel.direction == "both":
        replacement = f"-{body}-"
    else:
        replacement = f"-{body}->" if direction == "out" else f"<-{body}-"
    shown = (
        _pattern(source, rel_type, target)
        if direction == "out"
        else _pattern(target, rel_type, source)
    )
    finding.message += f"; the only relationship between {source} and {target} is {shown}"
    finding.suggestions = [shown, *finding.suggestions]
    finding.edit = Edit(
        start=rel.element.start,
        end=rel.element.end,
        replacement=replacement,
        reason=f"{shown} is the only relationship the graph has between these labels",
    )


def _connector(triples: frozenset[tuple[str, str, str]], rel_type: str, a: str, b: str) -> str:
    """``-[:T]->`` when ``(a)-[:T]->(b)`` occurs, else ``<-[:T]-``."""
    name = _quoted_name(rel_type)
    return f"-[:{name}]->" if (a, rel_type, b) in triples else f"<-[:{name}]-"


def _joins(triples: frozenset[tuple[str, str, str]], a: str, b: str) -> list[str]:
    """Every relationship type joining labels ``a`` and ``b``, in either direction."""
    return sorted({t for s, t, g in triples if (s, g) in ((a, b), (b, a))})


def _attach_path_edit(
    query: str, branch: BranchFacts, rel: RelationshipFact, index: GraphIndex, finding: Finding
) -> None:
    """Give a relationship pattern whose type belongs one hop away the path the schema has.

    Two unambiguous cases, tried in order, for a typed relationship between
    single-label endpoints that its type never joins:

    - *re-anchor*: in ``(a:Case)-[:IS_PRIMARY_SUSPECT]->(b:Drug)-[:HAS_REACTION]->(c:Reaction)``
      the second type joins ``Case`` to ``Reaction``, the node before ``b``; the
      hop moves to ``a``: ``(a:Case)-[:IS_PRIMARY_SUSPECT]->(b:Drug), (a)-[:HAS_REACTION]->(c:Reaction)``
      (``a`` named, ``c`` the end of the path);
    - *missing hop*: in ``(p:PhoneCall)-[:CALLER]->(c:Person)`` the type reaches
      exactly one label from one endpoint (``Phone``), and exactly one type joins
      that label to the other endpoint: ``(p:PhoneCall)-[:CALLER]->(:Phone)<-[:HAS_PHONE]-(c:Person)``.
      When both endpoints would give a path, the fix is ambiguous: no edit.
    """
    if rel.var_length or rel.direction == "both" or len(rel.types) != 1:
        return
    rel_type = rel.types[0][0]
    left = _labels(branch, rel.left.variable, (n for n, _ in rel.left.labels))
    right = _labels(branch, rel.right.variable, (n for n, _ in rel.right.labels))
    if len(left) != 1 or len(right) != 1:
        return
    (lhs,), (rhs,) = left, right
    if lhs == rhs:
        return  # as for a retype: a type between two nodes of one label has several readings
    triples = index.triples()
    written = query[rel.element.start : rel.element.end]
    right_text = query[rel.right.start : rel.right.end]
    before = next((r for r in branch.relationships if r.right.start == rel.left.start), None)
    continues = any(r.left.start == rel.right.start for r in branch.relationships)
    if before is not None and before.left.variable and not continues:
        anchor = _labels(branch, before.left.variable, (n for n, _ in before.left.labels))
        if len(anchor) == 1:
            (label,) = anchor
            ok = (label, rel_type, rhs) if rel.direction == "out" else (rhs, rel_type, label)
            if ok in triples:
                replacement = f", ({before.left.variable}){written}{right_text}"
                finding.message += (
                    f"; {rel_type!r} joins {label}, the node before: {replacement[2:]}"
                )
                finding.suggestions = [replacement[2:], *finding.suggestions]
                finding.edit = Edit(
                    start=rel.element.start,
                    end=rel.right.end,
                    replacement=replacement,
                    reason=f"{rel_type} joins {label} and {rhs}, and {label} is the node before",
                )
                return
    source, target = (lhs, rhs) if rel.direction == "out" else (rhs, lhs)
    left_label, right_label = (source, target) if rel.direction == "out" else (target, source)
    options: list[str] = []
    # the type is right at the source (source -[type]-> middle ~ target) or at the
    # target (source ~ middle -[type]-> target); the text reads from left_label
    for at_source in (True, False):
        middles = {
            g if at_source else s
            for s, t, g in triples
            if t == rel_type and (s == source if at_source else g == target)
        }
        if len(middles) != 1:
            continue
        (middle,) = middles
        joins = _joins(triples, middle, target) if at_source else _joins(triples, source, middle)
        if len(joins) != 1 or middle in (source, target):
            continue
        node = f"(:{_quoted_name(middle)})"
        if at_source == (rel.direction == "out"):
            options.append(f"{written}{node}{_connector(triples, joins[0], middle, right_label)}")
        else:
            options.append(f"{_connector(triples, joins[0], left_label, middle)}{node}{written}")
    if len(options) != 1:
        return
    path = f"{query[rel.left.start : rel.left.end]}{options[0]}{right_text}"
    finding.message += f"; the graph joins them through one more node: {path}"
    finding.suggestions = [path, *finding.suggestions]
    finding.edit = Edit(
        start=rel.element.start,
        end=rel.element.end,
        replacement=options[0],
        reason=f"the only path the schema has from {source} to {target} through {rel_type}",
    )


def _attach_projection_edits(
    query: str, branch: BranchFacts, index: GraphIndex, findings: list[Finding]
) -> None:
    """Give a property read on the wrong label the hop to the one neighbour label that has it.

    ``RETURN l.areaCode`` on a ``Location`` that has no ``areaCode``, in a graph
    where exactly one relationship pattern joins ``Location`` to a label with
    that key, ``(:Location)-[:LOCATION_IN_AREA]->(:Area)``, becomes a pattern
    added after the path that binds ``l``, ``, (l)-[:LOCATION_IN_AREA]->(lArea:Area)``,
    and every read of ``l.areaCode`` after it reads ``lArea.areaCode``. Findings
    that already carry an edit keep it; a property compared with a string (left
    to the one-hop predicate, which needs the value stored), a read before the
    path, or several candidate neighbours: no edit.
    """
    for finding in findings:
        if finding.code != "property_not_on_label" or finding.edit is not None or not finding.span:
            continue
        access = next(
            (a for a in branch.accesses if (a.span.start, a.span.end) == finding.span), None
        )
        if access is None:
            continue
        var, key = access.variable, access.key
        if any(c.variable == var and c.key == key for c in branch.comparisons):
            continue  # a compared value: the one-hop predicate above, or no repair
        labels = branch.labels_of(var)
        node = next((n for n in branch.nodes if n.variable == var), None)
        if len(labels) != 1 or node is None:
            continue
        (label,) = labels
        hops = {
            (p.type, p.target if p.source == label else p.source)
            for p in index.schema.patterns
            if label in (p.source, p.target) and p.source != p.target
        }
        hops = {(t, other) for t, other in hops if key in index.label_keys.get(other, frozenset())}
        if len(hops) != 1:
            continue
        ((rel_type, other),) = hops
        end = node
        while True:
            step = next((r for r in branch.relationships if r.left.start == end.start), None)
            if step is None:
                break
            end = step.right
        reads = sorted(
            a.span.start - len(var) - 1
            for a in branch.accesses
            if a.variable == var and a.key == key
        )
        name = f"{var}{other}"
        if (
            not reads
            or reads[0] < end.end
            or re.search(rf"\b{re.escape(name)}\b", query)
            or any(query[r : r + len(var) + 1 + len(key)] != f"{var}.{key}" for r in reads)
        ):
            continue
        hop = _connector(index.triples(), rel_type, label, other)
        added = f", ({var}){hop}({name}:{_quoted_name(other)})"
        last = reads[-1] + len(var) + 1 + len(key)
        body = query[end.end : last]
        for r in reversed(reads):
            offset = r - end.end
            body = body[:offset] + f"{name}.{key}" + body[offset + len(var) + 1 + len(key) :]
        finding.message += f"; {label} reaches it through ({var}){hop}(:{_quoted_name(other)})"
        finding.suggestions = [added[2:], *finding.suggestions]
        finding.edit = Edit(
            start=end.end,
            end=last,
            replacement=added + body,
            reason=f"{other} is the only label next to {label} with property {key}",
        )


def _property_findings(branch: BranchFacts, index: GraphIndex) -> list[Finding]:
    findings: list[Finding] = []
    pattern_nodes = {n.variable for n in branch.nodes if n.variable} - branch.rebound
    pattern_rels = {
        r.variable for r in branch.relationships if r.variable and not r.var_length
    } - branch.rebound
    seen: set[tuple[int, int]] = set()
    accesses = [(a.variable, a.key, a.span) for a in branch.accesses]
    for node in branch.nodes:
        accesses += [(node.variable or "", key, span) for key, span in node.map_keys]
        owners = frozenset(n for n, _ in node.labels)
        for key, span in node.map_keys:
            finding = _key_finding(key, span, owners, index, on_type=False)
            if finding is not None and (span.start, span.end) not in seen:
                seen.add((span.start, span.end))
                findings.append(finding)
    for variable, key, span in accesses:
        if (span.start, span.end) in seen:
            continue
        if variable in pattern_nodes:
            owners = branch.labels_of(variable)
            finding = _key_finding(key, span, owners, index, on_type=False)
        elif variable in pattern_rels:
            owners = branch.types_of(variable)
            finding = _key_finding(key, span, owners, index, on_type=True)
        else:
            continue
        if finding is not None:
            seen.add((span.start, span.end))
            findings.append(finding)
    return findings


_REJECTING = ("=", "<>", "<", ">", "<=", ">=", "=~")
_REJECTING_WORDS = ("IN", "STARTS", "ENDS", "CONTAINS")


def _rejecting_conjunct(tokens: Sequence[Token], key_at: int) -> bool:
    """Whether the access whose key token is ``tokens[key_at]`` is compared in a conjunct of a WHERE.

    ``v.key <op> ...`` with a comparison operator (not ``IS``), standing in the
    WHERE clause itself or in grouping parentheses, after ``WHERE`` or ``AND`` only,
    in a WHERE with no ``OR``, ``XOR`` or ``NOT`` anywhere: such a predicate is
    null for a node without ``key``, so it keeps only nodes that hold it.
    """
    after = tokens[key_at + 1] if key_at + 1 < len(tokens) else None
    if after is None or not (after.is_punct(*_REJECTING) or after.is_name(*_REJECTING_WORDS)):
        return False
    k = key_at - 3
    while k >= 0 and tokens[k].is_punct("("):
        k -= 1
    if k < 0 or not tokens[k].is_name("WHERE", "AND"):
        return False
    # the brackets open at the access must all be grouping parentheses of a depth-0 WHERE
    stack: list[bool] = []
    where = None
    for j in range(key_at):
        tok = tokens[j]
        if tok.is_punct("(", "[", "{"):
            before = tokens[j - 1] if j else None
            stack.append(
                tok.is_punct("(")
                and before is not None
                and (before.is_name("WHERE", "AND") or before.is_punct("("))
            )
        elif tok.is_punct(")", "]", "}"):
            if stack:
                stack.pop()
        elif not stack and tok.upper in _CLAUSE_KEYWORDS and _keyword_at(tokens, j):
            where = j if tok.is_name("WHERE") else None
    if where is None or not all(stack):
        return False
    depth = 0
    for tok in tokens[where + 1 :]:
        if tok.is_punct("(", "[", "{"):
            depth += 1
        elif tok.is_punct(")", "]", "}"):
            depth -= 1
        elif depth == 0 and tok.upper in _CLAUSE_KEYWORDS:
            break
        elif tok.is_name("OR", "XOR", "NOT"):
            return False
    return True


def _missing_label_findings(query: str, branch: BranchFacts, index: GraphIndex) -> list[Finding]:
    """A node variable with no label whose compared property keys fit one label.

    Evidence is what keeps only nodes holding a key: a key in the variable's property
    map, or compared (``=``, ``<``, ``IN``, ``STARTS WITH``, ...; not ``IS NULL``) in a
    conjunct of a WHERE without ``OR``, ``XOR`` or ``NOT``. Candidates are the labels that
    hold every such key, narrowed by each relationship attached to the variable (the
    labels at either end of any of its alternative types; either direction, since a
    reversed arrow is the direction check's to report). Only a single candidate, in a
    graph of more than one label, is a finding; the label is inserted after the
    variable in its first node pattern. The rows cannot change: a node without the key
    fails the comparison. A variable whose keys are only projected, tested for null or
    compared under ``OR``/``NOT`` gives no evidence and is left alone. Why: the repairs
    that read the question need a labelled variable (``answer_shape`` lists ``v.name``,
    ``unbound_reference`` binds the names of one label), and Qwen2.5-Coder-1.5B wrote no
    label in 110 of 228 agentic predictions (row E-prime of the local leaderboard).
    """
    if len(index.labels) < 2:
        return []
    tokens = tokenize(query, lenient=True)
    key_index = {tok.start: k for k, tok in enumerate(tokens)}
    findings: list[Finding] = []
    variables = {n.variable for n in branch.nodes if n.variable} - branch.rebound
    triples = index.triples()
    for variable in sorted(variables):
        if branch.labels_of(variable):
            continue
        nodes = sorted((n for n in branch.nodes if n.variable == variable), key=lambda n: n.start)
        keys = {key for n in nodes for key, _ in n.map_keys}
        keys |= {
            a.key
            for a in branch.accesses
            if a.variable == variable
            and a.span.start in key_index
            and _rejecting_conjunct(tokens, key_index[a.span.start])
        }
        if not keys:
            continue
        candidates = set(index.labels)
        for key in keys:
            candidates &= set(index.owners_of(key))
        for rel in branch.relationships:
            if variable not in (rel.left.variable, rel.right.variable) or not rel.types:
                continue
            alternatives = {name for name, _ in rel.types}
            candidates &= {end for a, t, b in triples if t in alternatives for end in (a, b)}
        if len(candidates) != 1:
            continue
        (label,) = candidates
        first = nodes[0]
        opened = re.match(r"\(\s*" + re.escape(variable) + r"\b", query[first.start : first.end])
        if opened is None:
            continue
        at = first.start + opened.end()
        evidence = ", ".join(f"property key {k!r}" for k in sorted(keys))
        findings.append(
            Finding(
                code="missing_label",
                message=(
                    f"variable {variable!r} has no label, and only {label} has its {evidence}; "
                    f"write ({variable}:{cypher_name(label)})"
                ),
                span=(first.start, first.end),
                suggestions=[label],
                edit=Edit(
                    start=at,
                    end=at,
                    replacement=f":{cypher_name(label)}",
                    reason=f"{label} is the only label with the variable's {evidence}",
                ),
            )
        )
    return findings


def _key_finding(
    key: str, span: Span, owners: frozenset[str], index: GraphIndex, *, on_type: bool
) -> Finding | None:
    table = index.type_keys if on_type else index.label_keys
    if any(owner not in table for owner in owners):
        return None  # an unknown label or type is reported on its own
    keys = frozenset().union(*(table[o] for o in owners)) if owners else index.all_keys
    if key in keys:
        return None
    if key not in index.all_keys or not owners:
        return _name_finding("unknown_property", "property key", key, span, keys or index.all_keys)
    elsewhere = index.owners_of(key)
    suggestions = _close(key, keys)
    named = " / ".join(sorted(owners))
    message = f"{named} has no property {key!r}; {key!r} is a property of {', '.join(elsewhere)}"
    if suggestions:
        message += f"; {named} has {', '.join(repr(s) for s in suggestions)}"
    return Finding(
        code="property_not_on_label",
        message=message,
        span=(span.start, span.end),
        suggestions=suggestions,
    )


_TEMPORAL_LITERALS = {
    "DATE": ("date", re.compile(r"\d{4}-\d{2}-\d{2}")),
    "DATETIME": ("datetime", re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")),
    "LOCALDATETIME": ("localdatetime", re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?")),
    "TIME": ("time", re.compile(r"\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")),
    "LOCALTIME": ("localtime", re.compile(r"\d{2}:\d{2}(:\d{2}(\.\d+)?)?")),
}  # fmt: skip


def _temporal_literal_findings(query: str, branch: BranchFacts, index: GraphIndex) -> list[Finding]:
    """A string literal compared with a temporal property: never equal, repaired as ``date('...')``.

    ``c.reportDate = '2021-09-01'`` on a ``DATE`` property compares a date with a
    string, which no stored value equals; the literal, when it is in the
    temporal type's ISO format, is wrapped in the type's constructor.
    """
    findings: list[Finding] = []
    types = {label.label: label.properties for label in index.schema.labels}
    rel_types = {t.type: t.properties for t in index.schema.relationship_types}
    for comparison in branch.comparisons:
        if comparison.operator not in ("=", "<>", "IN", "MAP") or comparison.fold is not None:
            continue
        owners = branch.labels_of(comparison.variable) or branch.types_of(comparison.variable)
        table = types if branch.labels_of(comparison.variable) else rel_types
        kinds = {table.get(owner, {}).get(comparison.key) for owner in owners}
        if len(kinds) != 1:
            continue
        (kind,) = kinds
        if kind not in _TEMPORAL_LITERALS:
            continue
        function, form = _TEMPORAL_LITERALS[kind]
        literal = query[comparison.span.start : comparison.span.end]
        owner = " / ".join(sorted(owners))
        message = f"{owner}.{comparison.key} is a {kind}, which never equals the string {literal}"
        edit = None
        if form.fullmatch(comparison.value):
            message += f": write {function}({literal})"
            edit = Edit(
                start=comparison.span.start,
                end=comparison.span.end,
                replacement=f"{function}({literal})",
                reason=f"the string is in the ISO format of a {kind}",
            )
        findings.append(
            Finding(
                code="literal_type",
                message=message,
                span=(comparison.span.start, comparison.span.end),
                suggestions=[edit.replacement] if edit else [],
                edit=edit,
            )
        )
    return findings


_BEFORE_PREDICATE = frozenset({"WHERE", "AND", "OR", "NOT", "XOR"})
_AFTER_PREDICATE = frozenset({"AND", "OR", "XOR", "RETURN", "WITH", "ORDER", "MATCH", "OPTIONAL"})


_CLAUSE_KEYWORDS = frozenset(
    {"MATCH", "OPTIONAL", "WHERE", "WITH", "RETURN", "UNWIND", "ORDER", "SKIP", "LIMIT", "UNION",
     "CALL", "CREATE", "MERGE", "SET", "DELETE", "REMOVE"}
)  # fmt: skip
_CONNECTIVES = ("WHERE", "AND", "OR", "XOR", "NOT")


def _in_top_level_where(query: str, offset: int) -> bool:
    """True when ``offset`` lies in a WHERE clause, inside nothing but grouping parentheses.

    A comparison inside ``any(x IN list WHERE ...)``, a list, a map or a
    projection (``RETURN (n.name = 'x') AS f``) is an expression whose value is
    used, not a filter, so a predicate rewrite there would change a value.
    """
    tokens = tokenize(query)
    stack: list[bool] = []
    clause = ""
    for k, tok in enumerate(tokens):
        if tok.start >= offset:
            break
        if tok.is_punct("(", "[", "{"):
            before = tokens[k - 1] if k else None
            stack.append(
                tok.is_punct("(")
                and before is not None
                and (before.is_name(*_CONNECTIVES) or before.is_punct("("))
            )
        elif tok.is_punct(")", "]", "}"):
            if stack:
                stack.pop()
        elif not stack and tok.upper in _CLAUSE_KEYWORDS and _keyword_at(tokens, k):
            clause = tok.upper
    return clause == "WHERE" and all(stack)


def _predicate_bounds(query: str, start: int, end: int) -> bool:
    """True when ``query[start:end]`` stands as a whole WHERE predicate (not inside an expression)."""
    before = query[:start].rstrip()
    after = query[end:].lstrip()
    word_before = before.rsplit(None, 1)[-1].upper() if before else ""
    word_after = after.split(None, 1)[0].upper() if after else ""
    return (word_before in _BEFORE_PREDICATE or before.endswith("(")) and (
        not after or word_after in _AFTER_PREDICATE or after.startswith((")", ";"))
    )


def _hop_predicate(
    variable: str, rel_type: str, arrow: str, other: str, key: str, literal: str
) -> str:
    """The pattern predicate ``(v)-[:TYPE]->(:Other {key: literal})`` (``<-`` for ``arrow`` ``<-``)."""
    rel = f"-[:{_quoted_name(rel_type)}]->" if arrow == "->" else f"<-[:{_quoted_name(rel_type)}]-"
    return f"({variable}){rel}(:{_quoted_name(other)} {{{_quoted_name(key)}: {literal}}})"


def _give_edit(finding: Finding, edit: Edit, note: str) -> None:
    """Attach ``edit`` to ``finding``: its replacement becomes the first suggestion, ``note`` ends the message."""
    finding.message += f"; {note}"
    finding.suggestions = [edit.replacement, *finding.suggestions]
    finding.edit = edit


def _attach_hop_edits(
    query: str, branch: BranchFacts, index: GraphIndex, findings: list[Finding]
) -> None:
    """Give a ``property_not_on_label`` finding the one-hop repair, where it is unambiguous.

    ``c.ageGroup = 'Elderly'`` on a ``Case`` that has no ``ageGroup``, in a graph
    where exactly one relationship pattern joins ``Case`` to a label that has
    the key and stores the value, ``(:Case)-[:FALLS_UNDER]->(:AgeGroup)``, is
    rewritten as the pattern predicate ``(c)-[:FALLS_UNDER]->(:AgeGroup {ageGroup:
    'Elderly'})``. Only a whole WHERE predicate ``variable.key = 'literal'`` is
    rewritten; with no engine to look the value up, or several candidate hops, no edit.
    """
    by_key_span = {f.span: f for f in findings if f.code == "property_not_on_label" and f.span}
    for comparison in branch.comparisons:
        if comparison.operator != "=" or comparison.fold is not None:
            continue
        access = next(
            (
                a
                for a in branch.accesses
                if a.variable == comparison.variable
                and a.key == comparison.key
                and a.span.end <= comparison.span.start
                and (a.span.start, a.span.end) in by_key_span
            ),
            None,
        )
        labels = branch.labels_of(comparison.variable)
        if access is None or len(labels) != 1:
            continue
        (label,) = labels
        start = access.span.start - len(comparison.variable) - 1
        if query[start : access.span.end] != f"{comparison.variable}.{comparison.key}":
            continue
        end = comparison.span.end
        between = query[access.span.end : comparison.span.start].strip()
        if (
            between != "="
            or not _predicate_bounds(query, start, end)
            or not _in_top_level_where(query, start)
        ):
            continue
        hops = [
            (p.type, p.target, "->") if p.source == label else (p.type, p.source, "<-")
            for p in index.schema.patterns
            if label in (p.source, p.target)
            and (p.target if p.source == label else p.source) != label
        ]
        hops = [
            (rel_type, other, arrow)
            for rel_type, other, arrow in set(hops)
            if comparison.key in index.label_keys.get(other, frozenset())
            and index.value_exists(other, comparison.key, comparison.value) is True
        ]
        if len(hops) != 1:
            continue
        ((rel_type, other, arrow),) = hops
        literal = query[comparison.span.start : comparison.span.end]
        replacement = _hop_predicate(
            comparison.variable, rel_type, arrow, other, comparison.key, literal
        )
        _give_edit(
            by_key_span[(access.span.start, access.span.end)],
            Edit(
                start=start,
                end=end,
                replacement=replacement,
                reason=f"{other} is the only label next to {label} that stores {comparison.key} = {literal}",
            ),
            f"{label} reaches it through {replacement}",
        )


_SQL_HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("GROUP", "BY"), "Cypher has no GROUP BY: the RETURN or WITH items that are not aggregates are the grouping keys"),
    (("HAVING",), "Cypher has no HAVING: aggregate in WITH, then filter with WHERE, e.g. WITH x, count(*) AS n WHERE n > 5 RETURN x, n"),
    (("SELECT",), "Cypher has no SELECT: MATCH a pattern and RETURN the values"),
    (("JOIN",), "Cypher has no JOIN: connect the nodes in one MATCH pattern, e.g. MATCH (a:A)-[:R]->(b:B)"),
    (("LIKE",), "Cypher has no LIKE: use CONTAINS, STARTS WITH, ENDS WITH or a regular expression with =~"),
)  # fmt: skip


def _sql_position(tokens: Sequence[Token], i: int, words: tuple[str, ...]) -> bool:
    """True where the SQL word stands as a keyword, not as a variable that happens to share its name."""
    after = tokens[i + len(words)] if i + len(words) < len(tokens) else None
    if words == ("SELECT",):
        return i == 0 or tokens[i - 1].is_punct("(")
    if words == ("LIKE",):
        return after is not None and after.kind is TokenKind.STRING
    if words in (("HAVING",), ("JOIN",)):
        return (
            i > 0
            and after is not None
            and not tokens[i - 1].is_name("AS")
            and not after.is_punct(".", ")", ",")
        )
    return True


def _sql_findings(query: str, tokens: Sequence[Token], returns: Sequence[int]) -> list[Finding]:
    findings: list[Finding] = []
    for i, tok in enumerate(tokens):
        if (
            tok.kind is TokenKind.PUNCT
            and tok.text == "!"
            and i + 1 < len(tokens)
            and tokens[i + 1].is_punct("=")
            and tokens[i + 1].start == tok.end
        ):
            findings.append(
                Finding(
                    code="sql_habit",
                    message="Cypher writes 'not equal' as <>, not !=",
                    span=(tok.start, tokens[i + 1].end),
                    suggestions=["<>"],
                    edit=Edit(
                        start=tok.start,
                        end=tokens[i + 1].end,
                        replacement="<>",
                        reason="!= and <> mean the same; Cypher accepts only <>",
                    ),
                )
            )
        if tok.is_name("NOT") and i + 1 < len(tokens) and tokens[i + 1].is_name("IN"):
            finding = _not_in_finding(query, tokens, i)
            if finding is not None:
                findings.append(finding)
        for words, hint in _SQL_HINTS:
            run = tokens[i : i + len(words)]
            if len(run) < len(words) or any(t.kind is not TokenKind.NAME for t in run):
                continue
            if tuple(t.upper for t in run) != words or not _sql_position(tokens, i, words):
                continue
            findings.append(Finding(code="sql_habit", message=hint, span=(tok.start, run[-1].end)))
    if any(n > 1 for n in returns):
        findings.append(
            Finding(
                code="sql_habit",
                message="a query has one RETURN, at its end: return several values as one list of items, "
                "or pass values on with WITH",
            )
        )
    return findings


def _operand_start(tokens: Sequence[Token], last: int) -> int | None:
    """Index of the first token of the operand ``v`` or ``v.key`` that ends at token ``last``."""
    if not _is_operand_name(tokens[last]):
        return None
    if last >= 2 and tokens[last - 1].is_punct(".") and _is_operand_name(tokens[last - 2]):
        return last - 2
    return last


def _is_operand_name(tok: Token) -> bool:
    return tok.kind is TokenKind.QUOTED_NAME or (
        tok.kind is TokenKind.NAME and tok.upper not in KEYWORDS
    )


def _not_in_finding(query: str, tokens: Sequence[Token], i: int) -> Finding | None:
    """``v.key NOT IN [...]`` (SQL's order), rewritten ``NOT v.key IN [...]``.

    Only for an operand that is a variable or a property and stands at the
    start of a predicate, so that moving ``NOT`` before it negates exactly the
    membership test.
    """
    if i == 0:
        return None
    start = _operand_start(tokens, i - 1)
    if start is None:
        return None
    before = tokens[start - 1] if start > 0 else None
    if before is None or not (
        before.is_name("WHERE", "AND", "OR", "XOR", "NOT") or before.is_punct("(")
    ):
        return None
    operand = query[tokens[start].start : tokens[i - 1].end]
    return Finding(
        code="sql_habit",
        message=f"Cypher writes NOT before the test: NOT {operand} IN [...], not {operand} NOT IN [...]",
        span=(tokens[start].start, tokens[i + 1].end),
        suggestions=[f"NOT {operand} IN"],
        edit=Edit(
            start=tokens[start].start,
            end=tokens[i + 1].end,
            replacement=f"NOT {operand} IN",
            reason="x NOT IN list is SQL's order; NOT x IN list is the same test in Cypher",
        ),
    )


_TYPE_NAMES = frozenset(
    {"STRING", "INTEGER", "FLOAT", "BOOLEAN", "DATE", "DATETIME", "LOCALDATETIME", "TIME",
     "LOCALTIME", "DURATION", "POINT", "LIST", "MAP"}
)  # fmt: skip
_CLAUSE_STARTS = frozenset({"MATCH", "UNWIND", "WITH", "RETURN"})


def _shape_findings(tokens: Sequence[Token]) -> list[Finding]:
    """Two shapes small models copy into a query, each with an unambiguous rewrite.

    * ``ORDER BY`` / ``SKIP`` / ``LIMIT`` straight after a ``MATCH`` (or
      ``UNWIND``), with a ``RETURN`` later: Cypher orders and limits a
      projection, so ``WITH *`` is put before it, which passes every variable on
      unchanged (``MATCH (n:Tome) ORDER BY n.pages DESC LIMIT 3 RETURN n.name``).
    * a property map whose every value is a type name of the schema text,
      ``(:Faction)-[:ALLIED_WITH {since_year: INTEGER}]->(...)``: the schema's
      ``{key: TYPE}`` copied into a pattern, where ``INTEGER`` is an undefined
      variable; the map is dropped, which is the pattern without a condition.
    """
    findings: list[Finding] = []
    depth = 0
    last_clause = ""
    for i, tok in enumerate(tokens):
        if tok.is_punct("(", "[", "{"):
            depth += 1
            if tok.is_punct("{") and i > 0:
                finding = _type_map_finding(tokens, i)
                if finding is not None:
                    findings.append(finding)
        elif tok.is_punct(")", "]", "}"):
            depth -= 1
        if depth != 0 or not _keyword_at(tokens, i):
            continue
        word = tok.upper
        if word in _CLAUSE_STARTS:
            last_clause = word
        elif (
            word in ("ORDER", "SKIP", "LIMIT")
            and last_clause in ("MATCH", "UNWIND")
            and _modifier_follows(tokens, i)
            and _plain_projection_after(tokens, i)
        ):
            findings.append(
                Finding(
                    code="sql_habit",
                    message=f"{word} follows a WITH or RETURN in Cypher, not a MATCH: "
                    f"WITH * {word} ...",
                    span=(tok.start, tok.end),
                    suggestions=[f"WITH * {word}"],
                    edit=Edit(
                        start=tok.start,
                        end=tok.start,
                        replacement="WITH * ",
                        reason="WITH * passes every variable on unchanged",
                    ),
                )
            )
            last_clause = "WITH"
    return findings


_AGGREGATES = frozenset(
    {"COUNT", "SUM", "AVG", "MIN", "MAX", "COLLECT", "STDEV", "STDEVP", "PERCENTILECONT",
     "PERCENTILEDISC"}
)  # fmt: skip


def _keyword_at(tokens: Sequence[Token], i: int) -> bool:
    """True where the name at ``i`` is a keyword, not a property key, label or alias spelt like one."""
    tok = tokens[i]
    if tok.kind is not TokenKind.NAME:
        return False
    before = tokens[i - 1] if i > 0 else None
    return before is None or not (before.is_punct(".", ":") or before.is_name("AS"))


def _modifier_follows(tokens: Sequence[Token], i: int) -> bool:
    """``ORDER BY``, or ``SKIP`` / ``LIMIT`` followed by a number or parameter."""
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if after is None:
        return False
    if tokens[i].upper == "ORDER":
        return after.is_name("BY")
    return after.kind in (TokenKind.NUMBER, TokenKind.PARAMETER)


def _plain_projection_after(tokens: Sequence[Token], i: int) -> bool:
    """True when the next WITH or RETURN after token ``i`` exists and aggregates nothing.

    Before an aggregating projection, ``WITH *`` would make the ``LIMIT`` cut
    input rows instead of groups: a different answer, not a repair.
    """
    depth = 0
    projection: int | None = None
    for j in range(i + 1, len(tokens)):
        tok = tokens[j]
        if tok.is_punct("(", "[", "{"):
            depth += 1
        elif tok.is_punct(")", "]", "}"):
            depth -= 1
        elif projection is None:
            if depth == 0 and tok.is_name("WITH", "RETURN") and _keyword_at(tokens, j):
                projection = j
        elif depth == 0 and tok.is_name(*_CLAUSE_STARTS, "ORDER", "SKIP", "LIMIT", "UNION"):
            break
        elif (
            tok.kind is TokenKind.NAME
            and tok.upper in _AGGREGATES
            and j + 1 < len(tokens)
            and tokens[j + 1].is_punct("(")
        ):
            return False
    return projection is not None


def _type_map_finding(tokens: Sequence[Token], i: int) -> Finding | None:
    """The ``{key: TYPE, ...}`` map opening at token ``i`` when it follows a label or type name."""
    before = tokens[i - 1]
    if not (before.kind in (TokenKind.NAME, TokenKind.QUOTED_NAME) and i >= 2):
        return None
    if not tokens[i - 2].is_punct(":", "(", "["):
        return None
    j = i + 1
    while j + 2 < len(tokens):
        key, colon, value = tokens[j], tokens[j + 1], tokens[j + 2]
        if not (
            key.kind in (TokenKind.NAME, TokenKind.QUOTED_NAME)
            and colon.is_punct(":")
            and value.kind is TokenKind.NAME
            and value.text in _TYPE_NAMES
        ):
            return None
        j += 3
        if j < len(tokens) and tokens[j].is_punct(","):
            j += 1
            continue
        if j < len(tokens) and tokens[j].is_punct("}"):
            close = tokens[j]
            values = {tokens[k].text for k in range(i + 3, j, 4)}
            if any(
                t.text in values and k > 0 and tokens[k - 1].is_name("AS")
                for k, t in enumerate(tokens)
            ):
                return None  # a variable named like a type (WITH 'x' AS STRING)
            return Finding(
                code="undefined_variable",
                message=f"{value.text} is a type name of the schema, not a value: "
                "a pattern has no property map of types",
                span=(tokens[i].start, close.end),
                suggestions=[""],
                edit=Edit(
                    start=before.end,
                    end=close.end,
                    replacement="",
                    reason="a map of type names matches nothing; without it the pattern is as written",
                ),
            )
        return None
    return None


_TEMPORAL_COMPONENTS = frozenset(
    {
        "year",
        "quarter",
        "month",
        "week",
        "weekyear",
        "day",
        "dayofweek",
        "dayofyear",
        "dayofquarter",
        "hour",
        "minute",
        "second",
        "millisecond",
        "microsecond",
        "nanosecond",
    }
)
_CLAUSE_WORDS = frozenset(
    {"RETURN", "WITH", "MATCH", "OPTIONAL", "UNWIND", "ORDER", "SKIP", "LIMIT", "UNION", "CALL"}
)


def _engine_findings(tokens: Sequence[Token]) -> list[Finding]:
    """Queries FalkorDB runs without an error but can answer wrongly, with a rewrite it answers right.

    One class today: a comparison in WHERE on a component of a temporal
    property, ``c.reportDate.month = 9``. When the property is indexed, FalkorDB
    (the shipped 4.x build) uses the index for the filter and matches nothing;
    ``toInteger(c.reportDate.month) = 9``, or the expression in RETURN, gives the
    right answer. The components are integers, so the rewrite changes no value,
    and the finding does not fail a query by itself (like a SQL-habit hint):
    it is there for the repair.
    """
    findings: list[Finding] = []
    in_where = False
    for i, tok in enumerate(tokens):
        if tok.kind is TokenKind.NAME and tok.upper == "WHERE":
            in_where = True
        elif tok.kind is TokenKind.NAME and tok.upper in _CLAUSE_WORDS:
            in_where = False
        if not in_where or i < 4 or tok.kind is not TokenKind.NAME:
            continue
        if tok.text.lower() not in _TEMPORAL_COMPONENTS:
            continue
        base, dot1, key, dot2 = tokens[i - 4 : i]
        if not (
            base.kind is TokenKind.NAME
            and dot1.is_punct(".")
            and key.kind is TokenKind.NAME
            and dot2.is_punct(".")
            and not (i >= 5 and tokens[i - 5].is_punct("."))
            and not (i + 1 < len(tokens) and tokens[i + 1].is_punct("("))
            and not (i >= 6 and tokens[i - 5].is_punct("(") and tokens[i - 6].is_name("TOINTEGER"))
        ):
            continue
        text = f"{base.text}.{key.text}.{tok.text}"
        findings.append(
            Finding(
                code="engine_pitfall",
                message=(
                    f"FalkorDB can match nothing on a filter on {text} (when {key.text} is "
                    f"indexed): write toInteger({text})"
                ),
                span=(base.start, tok.end),
                suggestions=[f"toInteger({text})"],
                edit=Edit(
                    start=base.start,
                    end=tok.end,
                    replacement=f"toInteger({text})",
                    reason="a temporal component is an integer, so toInteger changes no value",
                ),
            )
        )
    return findings


def check_query(query: str, index: GraphIndex) -> CheckReport:
    """Check one query against the graph's schema, before it is executed.

    Checks (each a :class:`Finding` code): labels and relationship types exist;
    each relationship pattern's type connects its endpoint labels in the written
    direction (a pattern that occurs only the other way is
    ``reversed_direction``, repaired by flipping the arrow); property keys exist
    on the variable's labels or types; read variables are defined; SQL habits
    (``!=`` and ``x NOT IN list`` repaired as ``<>`` and ``NOT x IN list``;
    ``ORDER BY`` / ``SKIP`` / ``LIMIT`` straight after a MATCH given a ``WITH *``);
    a schema's ``{key: TYPE}`` copied into a pattern (dropped); engine pitfalls
    (``engine_pitfall``: a WHERE comparison on a temporal component that
    FalkorDB answers with nothing, repaired with ``toInteger``).

    Args:
        query: the Cypher text.
        index: the graph's :class:`GraphIndex`.

    Returns:
        The report; ``parsed`` is False when the query does not parse, and then
        the only findings are the token-level ones (SQL habits, the shapes of
        :func:`_shape_findings`), no verdict.
    """
    try:
        tokens = tokenize(query)
    except CypherParseError as e:
        return CheckReport(parsed=False, parse_error=str(e))
    try:
        facts = query_facts(query)
    except CypherParseError as e:
        return CheckReport(
            parsed=False,
            parse_error=str(e),
            findings=_sql_findings(query, tokens, ()) + _shape_findings(tokens),
        )
    findings = _sql_findings(query, tokens, facts.returns_per_branch)
    findings += _shape_findings(tokens)
    findings += _engine_findings(tokens)
    # SQL words the parser took for variables are reported once, as the habit
    findings += [
        f
        for f in _schema_findings(query, facts, index)
        if not (f.code == "undefined_variable" and findings)
    ]
    return CheckReport(parsed=True, findings=findings)


def _schema_findings(query: str, facts: QueryFacts, index: GraphIndex) -> list[Finding]:
    findings: list[Finding] = []
    seen: set[tuple[int, int]] = set()

    def add(finding: Finding) -> None:
        key = finding.span or (-1, len(findings))
        if key not in seen:
            seen.add(key)
            findings.append(finding)

    for branch in facts.branches:
        for node in branch.nodes:
            for name, span in node.labels:
                if name not in index.labels:
                    add(_name_finding("unknown_label", "label", name, span, index.labels))
        for rel in branch.relationships:
            for name, span in rel.types:
                if name not in index.types:
                    finding = _name_finding(
                        "unknown_relationship_type", "relationship type", name, span, index.types
                    )
                    if finding.edit is None and len(rel.types) == 1:
                        _attach_retype(query, branch, rel, index, finding)
                    add(finding)
        for rel in branch.relationships:
            for finding in _relationship_findings(query, branch, rel, index):
                add(finding)
        for finding in _property_findings(branch, index):
            add(finding)
        for finding in _missing_label_findings(query, branch, index):
            add(finding)
        _attach_hop_edits(query, branch, index, findings)
        _attach_projection_edits(query, branch, index, findings)
        for finding in _temporal_literal_findings(query, branch, index):
            add(finding)
        for span in branch.undefined:
            add(
                Finding(
                    code="undefined_variable",
                    message=f"variable {span.text!r} is used but never defined by a MATCH, WITH or UNWIND",
                    span=(span.start, span.end),
                )
            )
    return findings


def _literal(value: str, quote: str) -> str:
    escaped = value.replace("\\", "\\\\").replace(quote, "\\" + quote)
    return f"{quote}{escaped}{quote}"


def check_values(query: str, index: GraphIndex) -> list[Finding]:
    """Check each compared string literal against the stored values (after 0 rows).

    For every ``v.key = 'literal'`` (also ``IN [...]``, ``{key: 'literal'}``,
    ``STARTS WITH``/``ENDS WITH``/``CONTAINS`` and ``toLower``/``toUpper``
    wrappers) where ``v`` has a label, a literal that no stored value matches
    is a ``value_not_found`` finding listing the nearest stored values (by case,
    prefix and edit distance). When exactly one stored value equals the literal
    ignoring case, the finding carries the edit that substitutes it.

    Args:
        query: a query that parsed.
        index: the graph's index; its engine answers the lookups.

    Returns:
        The findings (empty when the query does not parse or every literal matches).
    """
    try:
        facts = query_facts(query)
    except CypherParseError:
        return []
    findings: list[Finding] = []
    for branch in facts.branches:
        items: list[tuple[frozenset[str], str, str, str, Span, str | None]] = []
        for c in branch.comparisons:
            owners = branch.labels_of(c.variable) or branch.types_of(c.variable)
            items.append((owners, c.key, c.operator, c.value, c.span, c.fold))
        for node in branch.nodes:
            owners = _labels(branch, node.variable, (n for n, _ in node.labels))
            items += [
                (owners, key, "MAP", value, span, None) for key, value, span in node.map_strings
            ]
        for owners, key, operator, value, span, fold in items:
            known = [o for o in owners if o in index.labels or o in index.types]
            if not known or len(known) != len(owners):
                continue
            verdicts = [index.value_exists(o, key, value, operator, fold) for o in known]
            if any(v is None or v for v in verdicts):
                continue
            findings.append(_value_finding(query, known, key, operator, value, span, fold, index))
        _attach_neighbour_edits(query, branch, index, findings)
    return findings


_IN_LIST_OPEN = re.compile(r"\s+IN\s*\[\s*", re.IGNORECASE)
_EQUALS = re.compile(r"\s*=\s*")
_LIST_CLOSE = re.compile(r"\s*\]")
_LIST_COMMA = re.compile(r"\s*,\s*")


def _predicate_groups(
    query: str, branch: BranchFacts
) -> list[tuple[str, str, list[tuple[str, Span]], int, int]]:
    """``v.key = 'a'`` and ``v.key IN ['a', 'b']`` predicates: (variable, key, literals, start, end).

    A list qualifies only when it holds string literals alone, so the whole
    predicate is the span from ``v`` to the closing bracket.
    """
    groups: list[tuple[str, str, list[tuple[str, Span]], int, int]] = []
    comparisons = [c for c in branch.comparisons if c.fold is None and c.operator in ("=", "IN")]
    i = 0
    while i < len(comparisons):
        first = comparisons[i]
        members = [first]
        if first.operator == "IN":
            while (
                i + len(members) < len(comparisons)
                and comparisons[i + len(members)].operator == "IN"
                and _LIST_COMMA.fullmatch(
                    query[members[-1].span.end : comparisons[i + len(members)].span.start]
                )
            ):
                members.append(comparisons[i + len(members)])
        i += len(members)
        access = next(
            (
                a
                for a in branch.accesses
                if a.variable == first.variable
                and a.key == first.key
                and a.span.end <= first.span.start
                and (_IN_LIST_OPEN if first.operator == "IN" else _EQUALS).fullmatch(
                    query[a.span.end : first.span.start]
                )
            ),
            None,
        )
        if access is None:
            continue
        start = access.span.start - len(first.variable) - 1
        if query[start : access.span.end] != f"{first.variable}.{first.key}":
            continue
        end = members[-1].span.end
        if first.operator == "IN":
            close = _LIST_CLOSE.match(query, end)
            if close is None:
                continue
            end = close.end()
        literals = [(c.value, c.span) for c in members]
        groups.append((first.variable, first.key, literals, start, end))
    return groups


def _attach_neighbour_edits(
    query: str, branch: BranchFacts, index: GraphIndex, findings: list[Finding]
) -> None:
    """Rewrite a predicate whose values are stored on the one neighbouring label, as a hop.

    A follow-up question often carries the names an earlier result listed under
    the label of what it now asks about: ``MATCH (n:Territory) WHERE n.name IN
    ['Gavos Granary', ...]`` where those are ``Storehouse`` names. When no
    literal of the predicate is stored on the variable's label, every one is
    stored under the same key on exactly one other label, and exactly one
    relationship pattern joins the two labels, the predicate becomes the pattern
    predicates ``((n)<-[:DOCKED_IN]-(:Storehouse {name: 'Gavos Granary'}) OR
    ...)``: the nodes next to the named ones. (FalkorDB rejects pattern
    comprehensions and ``exists()`` in WHERE, hence the disjunction.) With
    several candidate labels or relationship types, no edit.
    """
    by_span = {f.span: f for f in findings if f.code == "value_not_found" and f.span}
    for variable, key, literals, start, end in _predicate_groups(query, branch):
        if not all((span.start, span.end) in by_span for _, span in literals):
            continue
        spans = {span for _, span in literals}
        if any(
            c.variable == variable and c.key == key and c.span not in spans
            for c in branch.comparisons
        ):
            continue  # another test of the same property: which one meant the neighbour is unclear
        labels = branch.labels_of(variable)
        if (
            len(labels) != 1
            or not _predicate_bounds(query, start, end)
            or not _in_top_level_where(query, start)
        ):
            continue
        (label,) = labels
        hops = {
            (p.type, p.target, "->") if p.source == label else (p.type, p.source, "<-")
            for p in index.schema.patterns
            if label in (p.source, p.target) and p.source != p.target
        }
        hops = {
            (rel_type, other, arrow)
            for rel_type, other, arrow in hops
            if key in index.label_keys.get(other, frozenset())
            and all(index.value_exists(other, key, value) is True for value, _ in literals)
        }
        if len(hops) != 1 or len({other for _, other, _ in hops}) != 1:
            continue
        ((rel_type, other, arrow),) = hops
        patterns = [
            _hop_predicate(variable, rel_type, arrow, other, key, query[span.start : span.end])
            for _, span in literals
        ]
        replacement = patterns[0] if len(patterns) == 1 else "(" + " OR ".join(patterns) + ")"
        _give_edit(
            by_span[(literals[0][1].start, literals[0][1].end)],
            Edit(
                start=start,
                end=end,
                replacement=replacement,
                reason=f"{other} is the only label next to {label} (through {rel_type}) "
                f"that stores every {key} of the predicate",
            ),
            f"the {other} next to each {label} has it: {patterns[0]}",
        )


def _value_finding(
    query: str,
    owners: list[str],
    key: str,
    operator: str,
    value: str,
    span: Span,
    fold: str | None,
    index: GraphIndex,
) -> Finding:
    nearest: list[str] = []
    same_case: list[str] = []
    for owner in owners:
        nearest += [v for v in index.nearest_values(owner, key, value) if v not in nearest]
        same_case += [
            v for v in index.case_insensitive_matches(owner, key, value) if v not in same_case
        ]
    owner_text = "/".join(owners)
    message = f"no {owner_text} has {key} {operator if operator != 'MAP' else '='} {value!r}"
    if nearest:
        message += f"; stored values include {', '.join(repr(v) for v in nearest)}"
    elsewhere = [
        f"{o}.{k} = {stored!r}"
        for o, k, stored in index.properties_with_value(value)
        if not (o in owners and k == key)
    ]
    if elsewhere:
        message += f"; the graph stores it as {', '.join(elsewhere[:3])}"
    edit = None
    if len(same_case) == 1 and operator in ("=", "IN", "MAP"):
        stored = same_case[0]
        if fold == "lower":
            stored = stored.lower()
        elif fold == "upper":
            stored = stored.upper()
        if stored != value:
            edit = Edit(
                start=span.start,
                end=span.end,
                replacement=_literal(stored, query[span.start]),
                reason=f"the only stored {owner_text}.{key} equal to {value!r} ignoring case",
            )
    elif not same_case and fold is None and operator in ("=", "IN", "MAP"):
        heads = [h for o in owners for h in index.stored_word_prefixes(o, key, value)]
        if len(set(heads)) == 1:
            edit = Edit(
                start=span.start,
                end=span.end,
                replacement=_literal(heads[0], query[span.start]),
                reason=f"the only stored {owner_text}.{key} that {value!r} starts with, "
                "followed by more words",
            )
    return Finding(
        code="value_not_found",
        message=message,
        span=(span.start, span.end),
        suggestions=nearest,
        edit=edit,
    )


def apply_edits(query: str, findings: Sequence[Finding]) -> tuple[str, list[Finding]]:
    """Apply the edits of ``findings`` that do not overlap, right to left.

    Args:
        query: the text the findings' offsets refer to.
        findings: findings, some carrying an :class:`Edit`.

    Returns:
        The repaired query and the findings whose edits were applied, in source order.
    """
    chosen: list[Finding] = []
    taken: list[tuple[int, int]] = []
    # (start, end): an insertion at the start of a replaced span goes first, so that it
    # is applied after the replacement and lands in front of its text
    edited = (f for f in findings if f.edit is not None)
    for finding in sorted(edited, key=lambda f: (f.edit.start, f.edit.end)):  # type: ignore[union-attr]
        edit = finding.edit
        assert edit is not None
        if any(edit.start < end and start < edit.end for start, end in taken):
            continue
        taken.append((edit.start, edit.end))
        chosen.append(finding)
    repaired = query
    for finding in reversed(chosen):
        edit = finding.edit
        assert edit is not None
        repaired = repaired[: edit.start] + edit.replacement + repaired[edit.end :]
    return repaired, chosen
