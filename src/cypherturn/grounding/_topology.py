"""Topology: relationship patterns that cannot match the graph's shape, and the repairs that fit it.

Detection compares each typed relationship pattern with the schema's
``(source)-[:TYPE]->(target)`` triples: one that occurs only the other way is
``reversed_direction`` (its arrow flipped), one whose type never joins its
endpoint labels is ``wrong_endpoints``. The repairs rewrite a pattern or a
property read into the one path the schema has, and only when that path is the
only one: a retyped relationship, a re-anchored or a missing hop, a property
read one hop away (in a projection, or as a pattern predicate in WHERE).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cypherturn.cypher import in_top_level_where, predicate_bounds
from cypherturn.grounding._facts import BranchFacts, RelationshipFact
from cypherturn.grounding._findings import CheckContext, Edit, Finding, give_edit, quoted_name
from cypherturn.grounding._index import GraphIndex

__all__ = [
    "endpoint_findings",
    "endpoint_repairs",
    "flip_relationship",
    "hop_predicate",
    "hop_predicates",
    "node_labels",
    "projection_hops",
    "retype_unknown",
]


def node_labels(
    branch: BranchFacts, node_variable: str | None, written: Iterable[str]
) -> frozenset[str]:
    """The labels a node pattern writes, with those the branch gives its variable elsewhere."""
    labels = set(written)
    if node_variable is not None:
        labels |= branch.labels_of(node_variable)
    return frozenset(labels)


def _pattern(source: str, rel_type: str, target: str) -> str:
    """``(:Source)-[:TYPE]->(:Target)``."""
    return f"(:{quoted_name(source)})-[:{quoted_name(rel_type)}]->(:{quoted_name(target)})"


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
    left = node_labels(branch, rel.left.variable, (n for n, _ in rel.left.labels))
    right = node_labels(branch, rel.right.variable, (n for n, _ in rel.right.labels))
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
    return [
        Finding(
            code="wrong_endpoints",
            message=f"{written} matches nothing: {', '.join(repr(t) for t in types)} "
            f"connects only {', '.join(actual)}",
            span=(rel.element.start, rel.element.end),
            suggestions=actual,
        )
    ]


def endpoint_findings(context: CheckContext, branch: BranchFacts) -> list[Finding]:
    """``reversed_direction`` (repaired by flipping the arrow) and ``wrong_endpoints`` findings."""
    return [
        finding
        for rel in branch.relationships
        for finding in _relationship_findings(context.query, branch, rel, context.index)
    ]


def _relationship_of(branch: BranchFacts, finding: Finding) -> RelationshipFact | None:
    """The relationship pattern whose connector is the finding's span."""
    return next(
        (r for r in branch.relationships if (r.element.start, r.element.end) == finding.span),
        None,
    )


def endpoint_repairs(context: CheckContext, branch: BranchFacts, findings: list[Finding]) -> None:
    """Give a ``wrong_endpoints`` finding of one type the retype or the path the schema has."""
    for finding in findings:
        rel = _relationship_of(branch, finding)
        if finding.code != "wrong_endpoints" or finding.edit is not None or rel is None:
            continue
        if len(rel.types) == 1:
            _attach_retype(context.query, branch, rel, context.index, finding)
            if finding.edit is None:
                _attach_path_edit(context.query, branch, rel, context.index, finding)


def retype_unknown(context: CheckContext, branch: BranchFacts, findings: list[Finding]) -> None:
    """Give an ``unknown_relationship_type`` finding the one type its endpoints have."""
    for finding in findings:
        if finding.code != "unknown_relationship_type" or finding.edit is not None:
            continue
        for rel in branch.relationships:
            spans = [(span.start, span.end) for _, span in rel.types]
            if len(rel.types) == 1 and spans[0] == finding.span:
                _attach_retype(context.query, branch, rel, context.index, finding)


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
    left = node_labels(branch, rel.left.variable, (n for n, _ in rel.left.labels))
    right = node_labels(branch, rel.right.variable, (n for n, _ in rel.right.labels))
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
    body = f"[{rel.variable or ''}:{quoted_name(rel_type)}]"
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
    name = quoted_name(rel_type)
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
    left = node_labels(branch, rel.left.variable, (n for n, _ in rel.left.labels))
    right = node_labels(branch, rel.right.variable, (n for n, _ in rel.right.labels))
    if len(left) != 1 or len(right) != 1:
        return
    (lhs,), (rhs,) = left, right
    if lhs == rhs:
        return  # as for a retype: a type between two nodes of one label has several readings
    if not _reanchor(query, branch, rel, index, finding, rhs):
        _missing_hop(query, rel, index, finding, lhs, rhs)


def _reanchor(
    query: str,
    branch: BranchFacts,
    rel: RelationshipFact,
    index: GraphIndex,
    finding: Finding,
    rhs: str,
) -> bool:
    """The *re-anchor* case of :func:`_attach_path_edit`; True when it gave the edit."""
    rel_type = rel.types[0][0]
    written = query[rel.element.start : rel.element.end]
    right_text = query[rel.right.start : rel.right.end]
    before = next((r for r in branch.relationships if r.right.start == rel.left.start), None)
    continues = any(r.left.start == rel.right.start for r in branch.relationships)
    if before is None or not before.left.variable or continues:
        return False
    anchor = node_labels(branch, before.left.variable, (n for n, _ in before.left.labels))
    if len(anchor) != 1:
        return False
    (label,) = anchor
    ok = (label, rel_type, rhs) if rel.direction == "out" else (rhs, rel_type, label)
    if ok not in index.triples():
        return False
    replacement = f", ({before.left.variable}){written}{right_text}"
    finding.message += f"; {rel_type!r} joins {label}, the node before: {replacement[2:]}"
    finding.suggestions = [replacement[2:], *finding.suggestions]
    finding.edit = Edit(
        start=rel.element.start,
        end=rel.right.end,
        replacement=replacement,
        reason=f"{rel_type} joins {label} and {rhs}, and {label} is the node before",
    )
    return True


def _missing_hop(
    query: str, rel: RelationshipFact, index: GraphIndex, finding: Finding, lhs: str, rhs: str
) -> None:
    """The *missing hop* case of :func:`_attach_path_edit`."""
    rel_type = rel.types[0][0]
    triples = index.triples()
    written = query[rel.element.start : rel.element.end]
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
        node = f"(:{quoted_name(middle)})"
        if at_source == (rel.direction == "out"):
            options.append(f"{written}{node}{_connector(triples, joins[0], middle, right_label)}")
        else:
            options.append(f"{_connector(triples, joins[0], left_label, middle)}{node}{written}")
    if len(options) != 1:
        return
    path = f"{query[rel.left.start : rel.left.end]}{options[0]}{query[rel.right.start : rel.right.end]}"
    finding.message += f"; the graph joins them through one more node: {path}"
    finding.suggestions = [path, *finding.suggestions]
    finding.edit = Edit(
        start=rel.element.start,
        end=rel.element.end,
        replacement=options[0],
        reason=f"the only path the schema has from {source} to {target} through {rel_type}",
    )


def projection_hops(context: CheckContext, branch: BranchFacts, findings: list[Finding]) -> None:
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
    query, index = context.query, context.index
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
        added = f", ({var}){hop}({name}:{quoted_name(other)})"
        last = reads[-1] + len(var) + 1 + len(key)
        body = query[end.end : last]
        for r in reversed(reads):
            offset = r - end.end
            body = body[:offset] + f"{name}.{key}" + body[offset + len(var) + 1 + len(key) :]
        finding.message += f"; {label} reaches it through ({var}){hop}(:{quoted_name(other)})"
        finding.suggestions = [added[2:], *finding.suggestions]
        finding.edit = Edit(
            start=end.end,
            end=last,
            replacement=added + body,
            reason=f"{other} is the only label next to {label} with property {key}",
        )


def hop_predicate(
    variable: str, rel_type: str, arrow: str, other: str, key: str, literal: str
) -> str:
    """The pattern predicate ``(v)-[:TYPE]->(:Other {key: literal})`` (``<-`` for ``arrow`` ``<-``)."""
    rel = f"-[:{quoted_name(rel_type)}]->" if arrow == "->" else f"<-[:{quoted_name(rel_type)}]-"
    return f"({variable}){rel}(:{quoted_name(other)} {{{quoted_name(key)}: {literal}}})"


def hop_predicates(context: CheckContext, branch: BranchFacts, findings: list[Finding]) -> None:
    """Give a ``property_not_on_label`` finding the one-hop repair, where it is unambiguous.

    ``c.ageGroup = '<value>'`` on a ``Case`` that has no ``ageGroup``, in a graph
    where exactly one relationship pattern joins ``Case`` to a label that has
    the key and stores the value, ``(:Case)-[:FALLS_UNDER]->(:AgeGroup)``, is
    rewritten as the pattern predicate ``(c)-[:FALLS_UNDER]->(:AgeGroup {ageGroup:
    '<value>'})``. Only a whole WHERE predicate ``variable.key = 'literal'`` is
    rewritten; with no engine to look the value up, or several candidate hops, no edit.
    """
    query, index = context.query, context.index
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
            or not predicate_bounds(query, start, end)
            or not in_top_level_where(context.tokens, context.depths, start)
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
        replacement = hop_predicate(
            comparison.variable, rel_type, arrow, other, comparison.key, literal
        )
        give_edit(
            by_key_span[(access.span.start, access.span.end)],
            Edit(
                start=start,
                end=end,
                replacement=replacement,
                reason=f"{other} is the only label next to {label} that stores {comparison.key} = {literal}",
            ),
            f"{label} reaches it through {replacement}",
        )
