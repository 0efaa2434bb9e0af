"""Engine-neutral conversion of driver values to the plain shapes of :class:`QueryResult`.

Both drivers hand back their own objects: the ``falkordb`` client gives
``Node``/``Edge``/``Path``, ``datetime`` values and ``dateutil`` durations; the
``neo4j`` driver gives ``neo4j.graph`` entities, ``neo4j.time`` temporals and
``neo4j.spatial`` points. :func:`to_plain` maps all of them to ``None``, ``bool``,
``int``, ``float``, ``str``, ``list`` and ``dict`` (shapes documented in
:mod:`cypherturn.graph._result`), so results compare equal across engines and
serialise to JSON. Integers stay Python ints (exact at any size).

:func:`type_name` names a value's Cypher type for schema introspection (the type
names of ``apoc.meta`` that LangChain's schema strings use).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any

import neo4j.graph
import neo4j.spatial
import neo4j.time
from dateutil.relativedelta import relativedelta
from falkordb import Edge as FalkorEdge
from falkordb import Node as FalkorNode
from falkordb import Path as FalkorPath

__all__ = ["duration_iso", "to_plain", "type_name"]

_SCALARS = (str, int, float, bool, type(None))


def duration_iso(delta: relativedelta | dt.timedelta) -> str:
    """Write a duration as ISO-8601 (``P1Y2M3DT4H5M6.5S``; zero is ``PT0S``).

    Args:
        delta: a ``dateutil`` relativedelta (FalkorDB durations) or a ``timedelta``.

    Returns:
        The ISO-8601 duration string.
    """
    if isinstance(delta, dt.timedelta):
        delta = relativedelta(
            days=delta.days, seconds=delta.seconds, microseconds=delta.microseconds
        )
    date_part = "".join(
        f"{value}{unit}"
        for value, unit in ((delta.years, "Y"), (delta.months, "M"), (delta.days, "D"))
        if value
    )
    seconds: float | int = delta.seconds
    if delta.microseconds:
        seconds = delta.seconds + delta.microseconds / 1_000_000
    time_part = "".join(
        f"{value}{unit}"
        for value, unit in ((delta.hours, "H"), (delta.minutes, "M"), (seconds, "S"))
        if value
    )
    if not date_part and not time_part:
        return "PT0S"
    return "P" + date_part + ("T" + time_part if time_part else "")


def _falkor_node(node: FalkorNode, naive: bool) -> dict[str, Any]:
    return {
        "_kind": "node",
        "id": node.id,
        "labels": list(node.labels or []),
        "properties": {k: to_plain(v, naive) for k, v in node.properties.items()},
    }


def _falkor_edge(edge: FalkorEdge, naive: bool) -> dict[str, Any]:
    return {
        "_kind": "relationship",
        "id": edge.id,
        "type": edge.relation,
        "start": edge.src_node if isinstance(edge.src_node, int) else edge.src_node.id,
        "end": edge.dest_node if isinstance(edge.dest_node, int) else edge.dest_node.id,
        "properties": {k: to_plain(v, naive) for k, v in edge.properties.items()},
    }


def _falkor_path(path: FalkorPath, naive: bool) -> dict[str, Any]:
    return {
        "_kind": "path",
        "nodes": [_falkor_node(node, naive) for node in path.nodes()],
        "relationships": [_falkor_edge(edge, naive) for edge in path.edges()],
    }


def _neo4j_node(node: neo4j.graph.Node, naive: bool) -> dict[str, Any]:
    return {
        "_kind": "node",
        "id": node.element_id,
        "labels": sorted(node.labels),
        "properties": {k: to_plain(v, naive) for k, v in node.items()},
    }


def _neo4j_relationship(rel: neo4j.graph.Relationship, naive: bool) -> dict[str, Any]:
    return {
        "_kind": "relationship",
        "id": rel.element_id,
        "type": rel.type,
        "start": rel.start_node.element_id if rel.start_node is not None else None,
        "end": rel.end_node.element_id if rel.end_node is not None else None,
        "properties": {k: to_plain(v, naive) for k, v in rel.items()},
    }


def _neo4j_path(path: neo4j.graph.Path, naive: bool) -> dict[str, Any]:
    return {
        "_kind": "path",
        "nodes": [_neo4j_node(node, naive) for node in path.nodes],
        "relationships": [_neo4j_relationship(rel, naive) for rel in path.relationships],
    }


def _datetime(value: dt.datetime, naive: bool) -> str:
    # The falkordb client attaches UTC to FalkorDB's zone-less (local) datetimes;
    # `naive` drops that invented zone so the string matches what was stored.
    if naive and value.tzinfo is not None:
        value = value.replace(tzinfo=None)
    return value.isoformat()


def _point(point: neo4j.spatial.Point) -> dict[str, Any]:
    if isinstance(point, neo4j.spatial.WGS84Point):
        result: dict[str, Any] = {"latitude": point.latitude, "longitude": point.longitude}
        if len(point) == 3:
            result["height"] = point.height
        return result
    return {axis: float(value) for axis, value in zip("xyz", point, strict=False)}


_CONVERTERS: dict[type, Callable[[Any, bool], Any]] = {
    FalkorNode: _falkor_node,
    FalkorEdge: _falkor_edge,
    FalkorPath: _falkor_path,
    neo4j.graph.Node: _neo4j_node,
    neo4j.graph.Relationship: _neo4j_relationship,
    neo4j.graph.Path: _neo4j_path,
    dt.datetime: _datetime,
    dt.date: lambda value, _naive: value.isoformat(),
    dt.time: lambda value, _naive: value.isoformat(),
    relativedelta: lambda value, _naive: duration_iso(value),
    dt.timedelta: lambda value, _naive: duration_iso(value),
    neo4j.time.Date: lambda value, _naive: value.iso_format(),
    neo4j.time.DateTime: lambda value, _naive: value.iso_format(),
    neo4j.time.Time: lambda value, _naive: value.iso_format(),
    neo4j.time.Duration: lambda value, _naive: value.iso_format(),
}


def to_plain(value: Any, naive_datetimes: bool = False) -> Any:
    """Convert one driver value, recursively, to plain Python.

    Args:
        value: a value as a ``falkordb`` or ``neo4j`` driver returns it.
        naive_datetimes: drop the time zone of ``datetime`` values; set for
            FalkorDB, whose datetimes carry no zone (its client labels them UTC).

    Returns:
        ``None``/``bool``/``int``/``float``/``str`` unchanged; lists and tuples as
        lists; maps as dicts; nodes, relationships and paths as ``_kind`` dicts;
        temporal values as ISO-8601 strings; points as ``{latitude, longitude}``
        (Cartesian points as ``{x, y[, z]}``); anything else as its ``str``.
    """
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list or kind is tuple:
        return [to_plain(item, naive_datetimes) for item in value]
    converter = _CONVERTERS.get(kind)
    if converter is not None:
        return converter(value, naive_datetimes)
    if isinstance(value, Mapping):
        return {str(k): to_plain(v, naive_datetimes) for k, v in value.items()}
    if isinstance(value, neo4j.spatial.Point):
        return _point(value)
    for base, base_converter in _CONVERTERS.items():
        if isinstance(value, base):
            return base_converter(value, naive_datetimes)
    if isinstance(value, list | tuple):
        return [to_plain(item, naive_datetimes) for item in value]
    return str(value)


def type_name(value: Any) -> str:
    """Name the Cypher type of one property value, as schema strings print it.

    Args:
        value: a raw driver value (before :func:`to_plain`).

    Returns:
        One of ``STRING``, ``INTEGER``, ``FLOAT``, ``BOOLEAN``, ``DATE``,
        ``LOCAL_DATE_TIME``, ``DATE_TIME``, ``LOCAL_TIME``, ``TIME``, ``DURATION``,
        ``POINT``, ``LIST``, ``MAP`` or ``NULL``.
    """
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "FLOAT"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, neo4j.spatial.Point):
        return "POINT"
    if isinstance(value, list | tuple):
        return "LIST"
    if isinstance(value, dt.datetime | neo4j.time.DateTime):
        # FalkorDB has only zone-less datetimes (its client still attaches UTC).
        if isinstance(value, dt.datetime) or value.tzinfo is None:
            return "LOCAL_DATE_TIME"
        return "DATE_TIME"
    if isinstance(value, dt.date | neo4j.time.Date):
        return "DATE"
    if isinstance(value, dt.time | neo4j.time.Time):
        return "TIME" if getattr(value, "tzinfo", None) is not None else "LOCAL_TIME"
    if isinstance(value, relativedelta | dt.timedelta | neo4j.time.Duration):
        return "DURATION"
    if isinstance(value, Mapping):
        # FalkorDB points arrive as {latitude, longitude} maps.
        return "POINT" if set(value) == {"latitude", "longitude"} else "MAP"
    return type(value).__name__.upper()
