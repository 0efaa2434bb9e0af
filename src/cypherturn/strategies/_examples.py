"""Few-shot examples derived from a graph's own schema (prompt version v2).

Small models given only the GraphCypherQAChain instructions (prompt v1, the
RAS paper's §4.4) mostly answer in prose; shown three question/Cypher pairs
they answer in Cypher, so execution feedback has something to act on. The
examples are built from the schema alone — a count, a property listing and a
one-hop pattern — so they carry no answer to the user's question and need no
data values.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from cypherturn.graph import GraphSchema, LabelSchema, RelationshipPattern
from cypherturn.grounding import GraphIndex
from cypherturn.memory import Recall, VerifiedPair

__all__ = ["FewShotExample", "grounded_examples", "recalled_examples", "schema_examples"]


class FewShotExample(BaseModel):
    """One question and the Cypher that answers it.

    Attributes:
        question: the question in words.
        cypher: the query shown as its answer.
        recalled: from the memory of verified questions (:mod:`cypherturn.memory`),
            picked for this question, rather than built from the schema; a
            strategy that rebuilds its schema examples keeps these, after its own.
    """

    question: str
    cypher: str
    recalled: bool = False


def _string_property(label: LabelSchema) -> str | None:
    names = sorted(key for key, kind in label.properties.items() if kind == "STRING")
    return names[0] if names else None


def _q(name: str) -> str:
    """The name as written in Cypher: bare when it is a plain identifier, else backticked."""
    return name if name.isidentifier() else f"`{name}`"


def _var(label: str) -> str:
    return label[:1].lower() if label[:1].isalpha() else "n"


def schema_examples(schema: GraphSchema) -> list[FewShotExample]:
    """Up to three examples built from the schema, deterministic.

    1. a count over the most frequent label;
    2. a listing of a string property of the next label that has one;
    3. a one-hop traversal over the most frequent relationship pattern whose
       endpoints are different labels.

    Args:
        schema: the introspected or declared schema.

    Returns:
        0-3 examples; an empty schema gives none.
    """
    labels = sorted(schema.labels, key=lambda item: (-item.count, item.label))
    examples: list[FewShotExample] = []
    if labels:
        first = labels[0].label
        v = _var(first)
        examples.append(
            FewShotExample(
                question=f"How many {first} nodes are there?",
                cypher=f"MATCH ({v}:{_q(first)}) RETURN count({v}) AS count",
            )
        )
    for label in labels[1:]:
        prop = _string_property(label)
        if prop is not None:
            v = _var(label.label)
            examples.append(
                FewShotExample(
                    question=f"List the {prop} of every {label.label}.",
                    cypher=f"MATCH ({v}:{_q(label.label)}) RETURN {v}.{_q(prop)} AS {_q(prop)}",
                )
            )
            break
    by_label = {item.label: item for item in schema.labels}
    type_count = {item.type: item.count for item in schema.relationship_types}
    patterns = sorted(
        (p for p in schema.patterns if p.source != p.target),
        key=lambda p: (-type_count.get(p.type, 0), p.source, p.type, p.target),
    )
    for pattern in patterns:
        source_prop = (
            _string_property(by_label[pattern.source]) if pattern.source in by_label else None
        )
        if source_prop is None:
            continue
        examples.append(
            FewShotExample(
                question=f"Which {pattern.source} nodes have a {pattern.type} relationship to a {pattern.target}?",
                cypher=(
                    f"MATCH (a:{_q(pattern.source)})-[:{_q(pattern.type)}]->(b:{_q(pattern.target)}) "
                    f"RETURN DISTINCT a.{_q(source_prop)} AS {_q(source_prop)}"
                ),
            )
        )
        break
    return examples


def _display_property(label: LabelSchema) -> str | None:
    """The string property a person would show: a name, title or description if there is one."""
    names = sorted(key for key, kind in label.properties.items() if kind == "STRING")
    preferred = [n for n in names if _names_entity(n)]
    shown = preferred or names
    return shown[0] if shown else None


def _names_entity(key: str) -> bool:
    """A property that names what it is on (a name, title or description), not an id or code."""
    return any(w in key.lower() for w in ("name", "title", "description"))


def _literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def grounded_examples(index: GraphIndex) -> list[FewShotExample]:
    """Up to six examples that show what small models get wrong, built from schema and data.

    1. a count filtered on a stored value, the question writing the value in
       lower case and the query writing it exactly as stored;
    2. a top-3 over the most frequent relationship pattern, grouped on its side
       with fewer nodes, the pattern keeping the schema's direction, ordered by an alias;
    3. a filter on an aggregate with ``WITH ... WHERE`` (Cypher has no HAVING),
       listing the groups with their counts ("more than 10" is ``> 10``, not a
       LIMIT), over the next most frequent pattern of another type and labels;
    4. a two-hop pattern through one label, filtered on a stored value at one
       end and grouped at the other (needs a listed value and two other labels
       next to the same label);
    5. a month of a ``DATE`` property written as a date range (needs the engine
       for a month that occurs: the earliest);
    6. the entity with the largest numeric value and the entity it belongs to
       (``ORDER BY ... DESC LIMIT 1`` over a pattern from its owner).

    Used by ``ras+`` with its ``values`` part (deterministic; no example is
    about the user's question: the values come from the graph's most common
    categories, not from the question).

    Args:
        index: the graph's grounding index.

    Returns:
        0-6 examples.
    """
    schema = index.schema
    counts = {label.label: label.count for label in schema.labels}
    examples: list[FewShotExample] = []
    # a category: few values, each shared by many entities, held by most of the label
    filters = sorted(
        (
            pv
            for pv in index.values.values()
            if pv.complete and 2 <= len(pv.values) <= pv.holders / 2 and pv.owner in counts
        ),
        key=lambda pv: (-pv.holders, len(pv.values), pv.owner, pv.key),
    )
    if filters:
        pv = filters[0]
        v = _var(pv.owner)
        value = pv.values[0]
        examples.append(
            FewShotExample(
                question=f"How many {pv.owner} have {pv.key} {value.lower()}?",
                cypher=(
                    f"MATCH ({v}:{_q(pv.owner)}) WHERE {v}.{_q(pv.key)} = {_literal(value)} "
                    f"RETURN count({v}) AS count"
                ),
            )
        )
    type_count = {item.type: item.count for item in schema.relationship_types}
    by_label = {item.label: item for item in schema.labels}
    patterns = sorted(
        (p for p in schema.patterns if p.source != p.target and p.target in by_label),
        key=lambda p: (-type_count.get(p.type, 0), p.source, p.type, p.target),
    )
    chosen = _grouping_patterns(patterns, by_label, counts)
    if chosen:
        examples.append(_grouped_example(chosen[0], more_than=False))
        for candidate in (*chosen[1:], chosen[0]):
            example = _grouped_example(candidate, more_than=True)
            engine = index.engine
            if candidate is chosen[0] or engine is None or engine.execute(example.cypher).rows:
                # no group of the second pattern passes the threshold: the first's instead
                examples.append(example)
                break
    largest = _largest_example(index, by_label, counts)
    if largest is not None:
        examples.append(largest)
    two_hop = _two_hop_example(index, by_label, type_count)
    if two_hop is not None:
        examples.append(two_hop)
    dated = _date_range_example(index)
    if dated is not None:
        examples.append(dated)
    return examples


_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip


def _grouping_patterns(
    patterns: list[RelationshipPattern], by_label: dict[str, LabelSchema], counts: dict[str, int]
) -> list[tuple[RelationshipPattern, bool, str]]:
    """Patterns for examples 2 and 3: the two most frequent with different types and labels.

    Each is grouped on its side with fewer nodes (the "one" of one-to-many: a
    ``Client`` performs many ``Transfer``), which must have a display property.
    Two different patterns keep a small model from copying one pattern into
    every answer.

    Returns:
        Up to two ``(pattern, group on the source side, display property)``.
    """
    chosen: list[tuple[RelationshipPattern, bool, str]] = []
    for pattern in patterns:
        group_source = counts.get(pattern.source, 0) < counts.get(pattern.target, 0)
        group = pattern.source if group_source else pattern.target
        prop = _display_property(by_label[group]) if group in by_label else None
        if prop is None:
            continue
        if any(
            p.type == pattern.type or {p.source, p.target} == {pattern.source, pattern.target}
            for p, _, _ in chosen
        ):
            continue
        chosen.append((pattern, group_source, prop))
        if len(chosen) == 2:
            break
    return chosen


def _grouped_example(
    chosen: tuple[RelationshipPattern, bool, str], *, more_than: bool
) -> FewShotExample:
    """Example 2 (top 3 groups) or 3 (groups over a threshold) over one pattern."""
    pattern, group_source, prop = chosen
    rel = f"(a:{_q(pattern.source)})-[:{_q(pattern.type)}]->(b:{_q(pattern.target)})"
    group, other = ("a", "b") if group_source else ("b", "a")
    group_label, other_label = (
        (pattern.source, pattern.target) if group_source else (pattern.target, pattern.source)
    )
    if more_than:
        return FewShotExample(
            question=f"Which {group_label} have more than 10 {other_label}, and how many each?",
            cypher=(
                f"MATCH {rel} WITH {group}, count({other}) AS n WHERE n > 10 "
                f"RETURN {group}.{_q(prop)} AS {_q(prop)}, n"
            ),
        )
    return FewShotExample(
        question=f"Which 3 {group_label} have the most {other_label}, and how many?",
        cypher=(
            f"MATCH {rel} RETURN {group}.{_q(prop)} AS {_q(prop)}, "
            f"count({other}) AS count ORDER BY count DESC LIMIT 3"
        ),
    )


def _largest_example(
    index: GraphIndex, by_label: dict[str, LabelSchema], counts: dict[str, int]
) -> FewShotExample | None:
    """Example 6 of :func:`grounded_examples`: the entity with the largest value, and who it belongs to."""
    numeric = sorted(
        (kind != "FLOAT", -counts.get(label.label, 0), label.label, key)
        for label in index.schema.labels
        for key, kind in label.properties.items()
        if kind in ("FLOAT", "INTEGER") and not key.lower().endswith("id")
    )
    type_count = {item.type: item.count for item in index.schema.relationship_types}
    frequent = sorted(index.schema.patterns, key=lambda p: (-type_count.get(p.type, 0), p.type))
    for _, _, label, key in numeric:
        for p in frequent:
            if label not in (p.source, p.target) or p.source == p.target:
                continue
            owner_is_source = p.target == label
            owner = p.source if owner_is_source else p.target
            prop = _display_property(by_label[owner]) if owner in by_label else None
            if prop is None or not owner_is_source or not _names_entity(prop):
                continue
            return FewShotExample(
                question=f"Which {owner} has the {label} with the largest {key}, and what is it?",
                cypher=(
                    f"MATCH (a:{_q(owner)})-[:{_q(p.type)}]->(b:{_q(label)}) "
                    f"RETURN a.{_q(prop)} AS {_q(prop)}, b.{_q(key)} AS {_q(key)} "
                    f"ORDER BY b.{_q(key)} DESC LIMIT 1"
                ),
            )
    return None


def _two_hop_example(
    index: GraphIndex, by_label: dict[str, LabelSchema], type_count: dict[str, int]
) -> FewShotExample | None:
    """Example 4 of :func:`grounded_examples`: filter at one end of a two-hop pattern, group at the other."""
    hops: dict[str, list[tuple[int, str, str, bool]]] = {}
    for p in index.schema.patterns:
        if p.source == p.target:
            continue
        weight = type_count.get(p.type, 0)
        hops.setdefault(p.source, []).append((weight, p.type, p.target, True))
        hops.setdefault(p.target, []).append((weight, p.type, p.source, False))
    listed = {
        pv.owner: pv
        for pv in sorted(index.values.values(), key=lambda pv: (-pv.holders, pv.owner, pv.key))
        if pv.complete and 2 <= len(pv.values) <= pv.holders / 2 and pv.owner in by_label
    }
    candidates = []
    for center, around in hops.items():
        for weight_a, type_a, label_a, out_a in around:
            if label_a not in listed:
                continue
            for weight_b, type_b, label_b, out_b in around:
                if label_b in (label_a, center) or label_a == center or type_a == type_b:
                    continue
                prop = _display_property(by_label[label_b]) if label_b in by_label else None
                if prop is None:
                    continue
                candidates.append(
                    (
                        -(weight_a + weight_b),
                        center,
                        type_a,
                        label_a,
                        out_a,
                        type_b,
                        label_b,
                        out_b,
                        prop,
                    )
                )
    if not candidates:
        return None
    _, center, type_a, label_a, out_a, type_b, label_b, out_b, prop = min(candidates)
    pv = listed[label_a]
    value = pv.values[0]
    left = f"-[:{_q(type_a)}]->" if not out_a else f"<-[:{_q(type_a)}]-"
    right = f"-[:{_q(type_b)}]->" if out_b else f"<-[:{_q(type_b)}]-"
    pattern = (
        f"(:{_q(label_a)} {{{_q(pv.key)}: {_literal(value)}}}){left}(c:{_q(center)})"
        f"{right}(b:{_q(label_b)})"
    )
    example = FewShotExample(
        question=(
            f"What are the 3 most common {label_b} {prop} for {center} whose {label_a} "
            f"{pv.key} is {value.lower()}, with counts?"
        ),
        cypher=(
            f"MATCH {pattern} RETURN b.{_q(prop)} AS {_q(prop)}, count(c) AS count "
            "ORDER BY count DESC LIMIT 3"
        ),
    )
    if index.engine is not None and not index.engine.execute(example.cypher).rows:
        return None
    return example


def _date_range_example(index: GraphIndex) -> FewShotExample | None:
    """Example 5 of :func:`grounded_examples`: one month of a DATE property as a range of dates."""
    dated = sorted(
        (-label.count, label.label, key)
        for label in index.schema.labels
        for key, kind in label.properties.items()
        if kind == "DATE"
    )
    if not dated or index.engine is None:
        return None
    _, label, key = dated[0]
    v = _var(label)
    earliest = index.engine.execute(
        f"MATCH ({v}:{_q(label)}) WHERE {v}.{_q(key)} IS NOT NULL "
        f"RETURN {v}.{_q(key)}.year AS y, {v}.{_q(key)}.month AS m ORDER BY {v}.{_q(key)} LIMIT 1"
    ).rows
    if not earliest or not all(isinstance(x, int) for x in earliest[0]):
        return None
    year, month = earliest[0]
    after = (year + 1, 1) if month == 12 else (year, month + 1)
    return FewShotExample(
        question=f"How many {label} have {key} in {_MONTHS[month - 1].lower()} {year}?",
        cypher=(
            f"MATCH ({v}:{_q(label)}) WHERE {v}.{_q(key)} >= date('{year:04d}-{month:02d}-01') "
            f"AND {v}.{_q(key)} < date('{after[0]:04d}-{after[1]:02d}-01') RETURN count({v}) AS count"
        ),
    )


def recalled_examples(
    recall: Recall | None,
    question: str,
    k: int,
    *,
    graph: str | None = None,
    exclude: Callable[[VerifiedPair], bool] | None = None,
) -> list[FewShotExample]:
    """The ``k`` remembered pairs nearest ``question`` as few-shot examples, nearest last.

    The nearest pair is put last, next to the question, where a small model
    copies from most.

    Args:
        recall: the index over the memory (``None``: no memory, no examples).
        question: the question as the user asked it.
        k: at most this many examples.
        graph: keep pairs of this graph only.
        exclude: pairs never shown (leave-one-out evaluation).

    Returns:
        0 to ``k`` examples marked ``recalled``.
    """
    if recall is None or k <= 0:
        return []
    nearest = recall.nearest(question, k, graph=graph, exclude=exclude)
    return [
        FewShotExample(question=pair.question, cypher=pair.cypher, recalled=True)
        for pair, _ in reversed(nearest)
    ]
