"""Bulk loading of a :class:`GraphData` with batched, parameterised Cypher (engine-neutral).

Nodes are created per label set with ``UNWIND $rows AS r CREATE (n:`A`:`B`)
SET n = r.p ... RETURN r.i, <id>(n)``; the returned row index pairs every
loader key with its engine id, whatever order the engine returns rows in.
Relationships are then created per type, looking both endpoints up by that id
(``WITH r.s AS s ... MATCH (a) WHERE id(a) = s``: the ``WITH`` lets FalkorDB
plan a NodeByIdSeek instead of a scan). ``datetime.date`` values travel as ISO
strings and are stored with ``date()``, so they are dates in the engine.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from cypherturn.errors import DatasetError
from cypherturn.graph._data import GraphData, Key, NodeRecord, RelationshipRecord

__all__ = ["load_graph", "quote_name"]

log = logging.getLogger(__name__)

WriteFn = Callable[[str, dict[str, Any]], list[list[Any]]]

_SCALAR_TYPES = (str, int, float, bool)


def quote_name(name: str) -> str:
    """Quote a label, relationship type or property key with backticks.

    Args:
        name: the name, from a trusted loader.

    Returns:
        The backtick-quoted name.

    Raises:
        DatasetError: the name is empty or holds a backtick (FalkorDB cannot
            escape one inside a quoted name).
    """
    if not name or "`" in name:
        raise DatasetError(f"invalid label, relationship type or property key: {name!r}")
    return f"`{name}`"


def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _encode(value: Any, where: str) -> tuple[Any, str]:
    """Encode one property value for a parameter; also name its date kind.

    Returns:
        ``(encoded, kind)`` with kind ``""`` (plain), ``"date"`` or ``"dates"``
        (a list of dates).
    """
    if isinstance(value, _SCALAR_TYPES):
        return value, ""
    if isinstance(value, dt.datetime):
        raise DatasetError(f"{where}: datetime values are not supported, use datetime.date")
    if isinstance(value, dt.date):
        return value.isoformat(), "date"
    if isinstance(value, list | tuple):
        if value and all(
            isinstance(item, dt.date) and not isinstance(item, dt.datetime) for item in value
        ):
            return [item.isoformat() for item in value], "dates"
        if all(isinstance(item, _SCALAR_TYPES) for item in value):
            return list(value), ""
    raise DatasetError(f"{where}: unsupported property value {value!r}")


def _encode_properties(
    properties: dict[str, Any], where: str, date_keys: dict[str, str]
) -> dict[str, Any]:
    encoded: dict[str, Any] = {}
    for key, value in properties.items():
        if value is None:
            continue
        encoded[key], kind = _encode(value, where)
        if kind:
            date_keys[key] = kind
    return encoded


def _date_sets(variable: str, source: str, date_keys: dict[str, str]) -> str:
    parts = []
    for key, kind in sorted(date_keys.items()):
        quoted = quote_name(key)
        if kind == "date":
            parts.append(f"SET {variable}.{quoted} = date({source}.{quoted})")
        else:
            parts.append(f"SET {variable}.{quoted} = [x IN {source}.{quoted} | date(x)]")
    return (" " + " ".join(parts)) if parts else ""


def _validate(data: GraphData) -> None:
    keys: set[Key] = set()
    for node in data.nodes:
        if node.key in keys:
            raise DatasetError(f"graph {data.name!r}: duplicate node key {node.key!r}")
        if not node.labels:
            raise DatasetError(f"graph {data.name!r}: node {node.key!r} has no label")
        keys.add(node.key)
    for rel in data.relationships:
        for end in (rel.start, rel.end):
            if end not in keys:
                raise DatasetError(
                    f"graph {data.name!r}: relationship {rel.type} refers to unknown node key {end!r}"
                )


def _group(items: Iterable[Any], key: Callable[[Any], Any]) -> dict[Any, list[Any]]:
    groups: dict[Any, list[Any]] = defaultdict(list)
    for item in items:
        groups[key(item)].append(item)
    return groups


def _load_nodes(
    write: WriteFn, nodes: list[NodeRecord], batch_size: int, id_function: str
) -> dict[Key, Any]:
    ids: dict[Key, Any] = {}
    for labels, group in _group(nodes, lambda node: node.labels).items():
        label_text = ":".join(quote_name(label) for label in labels)
        for batch in _batches(group, batch_size):
            date_keys: dict[str, str] = {}
            rows = [
                {
                    "i": index,
                    "p": _encode_properties(node.properties, f"node {node.key!r}", date_keys),
                }
                for index, node in enumerate(batch)
            ]
            query = (
                f"UNWIND $rows AS r CREATE (n:{label_text}) SET n = r.p"
                f"{_date_sets('n', 'r.p', date_keys)} RETURN r.i, {id_function}(n)"
            )
            for index, engine_id in write(query, {"rows": rows}):
                ids[batch[index].key] = engine_id
    return ids


def _load_relationships(
    write: WriteFn,
    relationships: list[RelationshipRecord],
    ids: dict[Key, Any],
    batch_size: int,
    id_function: str,
) -> None:
    for rel_type, group in _group(relationships, lambda rel: rel.type).items():
        quoted_type = quote_name(rel_type)
        for batch in _batches(group, batch_size):
            date_keys: dict[str, str] = {}
            rows = [
                {
                    "s": ids[rel.start],
                    "e": ids[rel.end],
                    "p": _encode_properties(rel.properties, f"relationship {rel_type}", date_keys),
                }
                for rel in batch
            ]
            query = (
                "UNWIND $rows AS r WITH r.s AS s, r.e AS e, r.p AS p "
                f"MATCH (a) WHERE {id_function}(a) = s MATCH (b) WHERE {id_function}(b) = e "
                f"CREATE (a)-[x:{quoted_type}]->(b) SET x = p{_date_sets('x', 'p', date_keys)}"
            )
            write(query, {"rows": rows})


def load_graph(
    write: WriteFn,
    data: GraphData,
    *,
    batch_size: int,
    id_function: str,
    index_statement: Callable[[str, str], str],
) -> None:
    """Write all nodes, relationships and indexes of ``data`` through ``write``.

    Args:
        write: runs one trusted write query with parameters and returns its raw rows.
        data: the graph to load (keys unique, endpoints among the keys).
        batch_size: rows per ``UNWIND`` batch (>= 1).
        id_function: the Cypher function giving an entity's engine id
            (``id`` on FalkorDB, ``elementId`` on Neo4j).
        index_statement: builds the index-creation Cypher for ``(label, key)``.

    Raises:
        DatasetError: duplicate keys, dangling endpoints, labels or types that
            cannot be quoted, or property values of unsupported types.
    """
    _validate(data)
    ids = _load_nodes(write, data.nodes, batch_size, id_function)
    log.info("graph %s: created %d nodes", data.name, len(ids))
    for label, key in data.indexes:
        write(index_statement(quote_name(label), quote_name(key)), {})
    _load_relationships(write, data.relationships, ids, batch_size, id_function)
    log.info("graph %s: created %d relationships", data.name, len(data.relationships))
