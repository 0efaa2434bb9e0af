"""Portable JSON-lines export of a :class:`~cypherturn.graph.GraphData` (``cypherturn worlds build``).

File layout, one JSON object per line, UTF-8, ``\\n`` line ends:

1. a header (:class:`GraphFileHeader`): format name and version, graph name,
   provenance, record counts, indexes, and which property keys hold dates;
2. one ``{"kind": "node", "key", "labels", "properties"}`` object per node, in
   the graph's order;
3. one ``{"kind": "relationship", "type", "start", "end", "properties"}``
   object per relationship, in the graph's order.

Keys are sorted and separators compact, dates are ISO-8601 strings
(``"1326-09-01"``), so the same graph always gives the same bytes: a world
built twice with the same seed exports byte-identical files. Any tool that
reads JSON lines can load the file; :func:`read_graph_jsonl` restores the
:class:`GraphData`, dates included.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from cypherturn.errors import DatasetError
from cypherturn.graph import GraphData, NodeRecord, RelationshipRecord

__all__ = ["GRAPH_FILE_VERSION", "GraphFileHeader", "read_graph_jsonl", "write_graph_jsonl"]

GRAPH_FILE_VERSION = 1


class GraphFileHeader(BaseModel):
    """First line of an exported graph file."""

    format: Literal["cypherturn-graph"] = Field(
        default="cypherturn-graph", description="File format name; always this value."
    )
    format_version: int = Field(default=GRAPH_FILE_VERSION, description="Layout version.")
    name: str = Field(description="Graph name the data is loaded under.")
    source: str = Field(
        default="", description="Provenance: generator, seed and scale, or dataset."
    )
    nodes: int = Field(description="Number of node lines that follow the header.")
    relationships: int = Field(description="Number of relationship lines after the nodes.")
    indexes: list[tuple[str, str]] = Field(
        default_factory=list, description="(label, property key) pairs to index after loading."
    )
    node_dates: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Primary label -> property keys whose values are ISO dates on those nodes.",
    )
    relationship_dates: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Relationship type -> property keys whose values are ISO dates.",
    )


def _json_default(value: object) -> str:
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"cannot export a {type(value).__name__} property value: {value!r}")


def _dumps(obj: dict[str, Any]) -> str:
    return json.dumps(
        obj,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_json_default,
    )


def _date_keys(owners: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, list[str]]:
    found: dict[str, set[str]] = {}
    for owner, properties in owners:
        for key, value in properties.items():
            first = value[0] if isinstance(value, list) and value else value
            if isinstance(first, dt.date):
                found.setdefault(owner, set()).add(key)
    return {owner: sorted(keys) for owner, keys in sorted(found.items())}


def graph_lines(data: GraphData) -> Iterator[str]:
    """The file's lines (without line ends): header, nodes, relationships.

    Raises:
        DatasetError: a property value is not exportable (not str/int/float/bool/date or a list).
    """
    header = GraphFileHeader(
        name=data.name,
        source=data.source,
        nodes=len(data.nodes),
        relationships=len(data.relationships),
        indexes=list(data.indexes),
        node_dates=_date_keys((n.labels[0], n.properties) for n in data.nodes),
        relationship_dates=_date_keys((r.type, r.properties) for r in data.relationships),
    )
    yield _dumps(header.model_dump())
    try:
        for node in data.nodes:
            yield _dumps(
                {
                    "kind": "node",
                    "key": node.key,
                    "labels": list(node.labels),
                    "properties": node.properties,
                }
            )
        for rel in data.relationships:
            yield _dumps(
                {
                    "kind": "relationship",
                    "type": rel.type,
                    "start": rel.start,
                    "end": rel.end,
                    "properties": rel.properties,
                }
            )
    except (TypeError, ValueError) as exc:
        raise DatasetError(f"graph {data.name!r} cannot be exported: {exc}") from exc


def write_graph_jsonl(data: GraphData, out: Path | IO[str]) -> int:
    """Write ``data`` as JSON lines to a path or an open text stream.

    Args:
        data: the graph.
        out: a file path (created or overwritten, UTF-8) or a writable text stream.

    Returns:
        Number of lines written (1 + nodes + relationships).

    Raises:
        DatasetError: a property value cannot be exported, or the file cannot be written.
    """
    if isinstance(out, Path):
        try:
            with out.open("w", encoding="utf-8", newline="\n") as stream:
                return write_graph_jsonl(data, stream)
        except OSError as exc:
            raise DatasetError(f"cannot write {out}: {exc}") from exc
    lines = 0
    for line in graph_lines(data):
        out.write(line)
        out.write("\n")
        lines += 1
    return lines


def _restore(properties: dict[str, Any], date_keys: list[str]) -> dict[str, Any]:
    for key in date_keys:
        value = properties.get(key)
        if isinstance(value, str):
            properties[key] = dt.date.fromisoformat(value)
        elif isinstance(value, list):
            properties[key] = [dt.date.fromisoformat(v) for v in value]
    return properties


def read_graph_jsonl(path: Path) -> GraphData:
    """Read a file written by :func:`write_graph_jsonl` back into a :class:`GraphData`.

    Raises:
        DatasetError: the file is missing, not a cypherturn graph file, of another
            format version, or its record counts disagree with its header.
    """
    try:
        with path.open(encoding="utf-8") as stream:
            first = stream.readline()
            try:
                header = GraphFileHeader.model_validate_json(first)
            except ValidationError as exc:
                raise DatasetError(f"{path} is not a cypherturn graph file: {exc}") from exc
            if header.format_version != GRAPH_FILE_VERSION:
                raise DatasetError(
                    f"{path} has format version {header.format_version}; this cypherturn reads "
                    f"version {GRAPH_FILE_VERSION}"
                )
            data = GraphData(name=header.name, indexes=list(header.indexes), source=header.source)
            for number, line in enumerate(stream, start=2):
                record = json.loads(line)
                kind = record.get("kind")
                if kind == "node":
                    labels = tuple(record["labels"])
                    data.nodes.append(
                        NodeRecord(
                            record["key"],
                            labels,
                            _restore(record["properties"], header.node_dates.get(labels[0], [])),
                        )
                    )
                elif kind == "relationship":
                    data.relationships.append(
                        RelationshipRecord(
                            record["start"],
                            record["end"],
                            record["type"],
                            _restore(
                                record["properties"],
                                header.relationship_dates.get(record["type"], []),
                            ),
                        )
                    )
                else:
                    raise DatasetError(f"{path}:{number}: unknown record kind {kind!r}")
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc
    except (json.JSONDecodeError, KeyError, ValueError) as exc:
        raise DatasetError(f"{path}: malformed record: {exc}") from exc
    if (len(data.nodes), len(data.relationships)) != (header.nodes, header.relationships):
        raise DatasetError(
            f"{path}: header promises {header.nodes} nodes and {header.relationships} "
            f"relationships, file holds {len(data.nodes)} and {len(data.relationships)}"
        )
    return data
