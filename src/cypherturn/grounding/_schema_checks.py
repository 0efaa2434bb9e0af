"""Schema findings: names, property keys, labels and literal types the graph does not have.

Each check reads one UNION branch's facts (:mod:`._facts`) against the
:class:`~cypherturn.grounding.GraphIndex`. A finding names something that
cannot match the graph as it is; a name equal to one of the graph's but for
case, a missing label that only one label fits, and a date written as a string
are repaired.
"""

from __future__ import annotations

import re

from cypherturn.cypher import where_of
from cypherturn.graph import cypher_name
from cypherturn.grounding._facts import BranchFacts, Span
from cypherturn.grounding._findings import (
    CheckContext,
    Edit,
    Finding,
    close_names,
    name_finding,
)
from cypherturn.grounding._index import GraphIndex

__all__ = [
    "missing_labels",
    "property_findings",
    "temporal_literals",
    "undefined_variables",
    "unknown_labels",
    "unknown_types",
]


def unknown_labels(context: CheckContext, branch: BranchFacts) -> list[Finding]:
    """``unknown_label``: a label the graph does not have."""
    index = context.index
    return [
        name_finding("unknown_label", "label", name, span, index.labels)
        for node in branch.nodes
        for name, span in node.labels
        if name not in index.labels
    ]


def unknown_types(context: CheckContext, branch: BranchFacts) -> list[Finding]:
    """``unknown_relationship_type``: a relationship type the graph does not have."""
    index = context.index
    return [
        name_finding("unknown_relationship_type", "relationship type", name, span, index.types)
        for rel in branch.relationships
        for name, span in rel.types
        if name not in index.types
    ]


def property_findings(context: CheckContext, branch: BranchFacts) -> list[Finding]:
    """``unknown_property`` and ``property_not_on_label``: a key the variable's labels or types lack."""
    index = context.index
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


def _rejecting_conjunct(context: CheckContext, key_at: int) -> bool:
    """Whether the access whose key token is ``tokens[key_at]`` is compared in a conjunct of a WHERE.

    ``v.key <op> ...`` with a comparison operator (not ``IS``), standing in the
    WHERE clause itself or in grouping parentheses, after ``WHERE`` or ``AND`` only,
    in a WHERE with no ``OR``, ``XOR`` or ``NOT`` anywhere: such a predicate is
    null for a node without ``key``, so it keeps only nodes that hold it.
    """
    tokens = context.tokens
    after = tokens[key_at + 1] if key_at + 1 < len(tokens) else None
    if after is None or not (after.is_punct(*_REJECTING) or after.is_name(*_REJECTING_WORDS)):
        return False
    k = key_at - 3
    while k >= 0 and tokens[k].is_punct("("):
        k -= 1
    if k < 0 or not tokens[k].is_name("WHERE", "AND"):
        return False
    where = where_of(tokens, context.depths, key_at)
    if where is None:
        return False
    return not any(tokens[j].is_name("OR", "XOR", "NOT") for j in range(where[0] + 1, where[1]))


def missing_labels(context: CheckContext, branch: BranchFacts) -> list[Finding]:
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
    query, index, tokens = context.query, context.index, context.tokens
    if len(index.labels) < 2:
        return []
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
            and _rejecting_conjunct(context, key_index[a.span.start])
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
        return name_finding("unknown_property", "property key", key, span, keys or index.all_keys)
    elsewhere = index.owners_of(key)
    suggestions = close_names(key, keys)
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


def temporal_literals(context: CheckContext, branch: BranchFacts) -> list[Finding]:
    """A string literal compared with a temporal property: never equal, repaired as ``date('...')``.

    ``c.reportDate = '2020-01-31'`` on a ``DATE`` property compares a date with a
    string, which no stored value equals; the literal, when it is in the
    temporal type's ISO format, is wrapped in the type's constructor.
    """
    query, index = context.query, context.index
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


def undefined_variables(context: CheckContext, branch: BranchFacts) -> list[Finding]:
    """``undefined_variable``: a variable read where no clause defines it."""
    return [
        Finding(
            code="undefined_variable",
            message=f"variable {span.text!r} is used but never defined by a MATCH, WITH or UNWIND",
            span=(span.start, span.end),
        )
        for span in branch.undefined
    ]
