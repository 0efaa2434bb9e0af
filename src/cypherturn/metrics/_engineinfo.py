"""Which graph engine, at which version, executed a run's queries.

Gold answers can depend on the engine (FalkorDB and Neo4j differ on multi-edge
patterns, ``LIMIT`` after ``UNION ALL``, integer ``sum()``: the engine divergence
audits of docs/design/sessions.md), so every
run directory records the engine of each graph it was scored on
(:class:`cypherturn.records.EngineInfo`).
"""

from __future__ import annotations

import logging

from redis.exceptions import RedisError

from cypherturn.errors import CypherTurnError
from cypherturn.graph import FalkorDBEngine, GraphEngine, Neo4jEngine
from cypherturn.records import UNKNOWN_VERSION, EngineInfo

__all__ = ["engine_info"]

logger = logging.getLogger(__name__)


def _falkordb_version(engine: FalkorDBEngine) -> str:
    # FalkorDB is a Redis module named "graph"; MODULE LIST gives its version as
    # major * 10000 + minor * 100 + patch (41603 -> 4.16.3).
    modules = engine.client.connection.execute_command("MODULE", "LIST")
    for module in modules:
        fields = {
            (k.decode() if isinstance(k, bytes) else str(k)): v
            for k, v in zip(module[::2], module[1::2], strict=False)
        }
        if fields.get("name") in ("graph", b"graph"):
            ver = int(fields.get("ver", 0))
            return f"{ver // 10000}.{ver // 100 % 100}.{ver % 100}"
    return UNKNOWN_VERSION


def _neo4j_version(engine: Neo4jEngine) -> tuple[str, str]:
    result = engine.execute(
        "CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition"
    )
    for name, versions, edition in result.rows:
        if name == "Neo4j Kernel" and versions:
            return f"Neo4j {edition}", str(versions[0])
    return "Neo4j", UNKNOWN_VERSION


def engine_info(engine: GraphEngine) -> EngineInfo:
    """Ask an engine for its name and version.

    Args:
        engine: an open engine.

    Returns:
        The :class:`EngineInfo`; the version is ``unknown`` when the server does
        not say (the failure is logged, never raised: it must not lose a run's scores).
    """
    try:
        if isinstance(engine, FalkorDBEngine):
            return EngineInfo(name="FalkorDB", version=_falkordb_version(engine))
        if isinstance(engine, Neo4jEngine):
            name, version = _neo4j_version(engine)
            return EngineInfo(name=name, version=version)
    except (CypherTurnError, RedisError, OSError, ValueError, TypeError) as exc:
        logger.warning("cannot read the version of %r: %s", engine, exc)
        name = "FalkorDB" if isinstance(engine, FalkorDBEngine) else "Neo4j"
        return EngineInfo(name=name)
    return EngineInfo(name=type(engine).__name__)
