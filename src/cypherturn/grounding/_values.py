"""Value grounding: after a query returned nothing, its compared string literals against the stored values.

:func:`check_values` looks every literal compared with a labelled property up in
the graph (through the index's engine). A literal no stored value matches is a
``value_not_found`` finding listing the nearest stored values; one stored value
equal to it but for case, one stored value it begins, or values that all belong
to the one neighbouring label, give the edit.
"""

from __future__ import annotations

import re

from cypherturn.cypher import in_top_level_where, predicate_bounds
from cypherturn.errors import CypherParseError
from cypherturn.grounding._facts import BranchFacts, Span, query_facts
from cypherturn.grounding._findings import CheckContext, Edit, Finding, give_edit, string_literal
from cypherturn.grounding._index import GraphIndex
from cypherturn.grounding._topology import hop_predicate, node_labels

__all__ = ["check_values"]


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
    context = CheckContext(query, facts.tokens, index, facts)
    findings: list[Finding] = []
    for branch in facts.branches:
        items: list[tuple[frozenset[str], str, str, str, Span, str | None]] = []
        for c in branch.comparisons:
            owners = branch.labels_of(c.variable) or branch.types_of(c.variable)
            items.append((owners, c.key, c.operator, c.value, c.span, c.fold))
        for node in branch.nodes:
            owners = node_labels(branch, node.variable, (n for n, _ in node.labels))
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
        _attach_neighbour_edits(context, branch, findings)
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
    context: CheckContext, branch: BranchFacts, findings: list[Finding]
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
    query, index = context.query, context.index
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
            or not predicate_bounds(query, start, end)
            or not in_top_level_where(context.tokens, context.depths, start)
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
            hop_predicate(variable, rel_type, arrow, other, key, query[span.start : span.end])
            for _, span in literals
        ]
        replacement = patterns[0] if len(patterns) == 1 else "(" + " OR ".join(patterns) + ")"
        give_edit(
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
                replacement=string_literal(stored, query[span.start]),
                reason=f"the only stored {owner_text}.{key} equal to {value!r} ignoring case",
            )
    elif not same_case and fold is None and operator in ("=", "IN", "MAP"):
        heads = [h for o in owners for h in index.stored_word_prefixes(o, key, value)]
        if len(set(heads)) == 1:
            edit = Edit(
                start=span.start,
                end=span.end,
                replacement=string_literal(heads[0], query[span.start]),
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
