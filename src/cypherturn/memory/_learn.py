"""`learn`: read question → Cypher pairs from a file and keep the ones that run on the graph.

The file is JSON Lines, one object per line with ``question`` and the query under
``cypher``, ``query`` or ``gold`` (the keys of Mind the Query, of our question
sets and of ask-benchmark files), and optionally ``graph``. A line naming another
graph is skipped; a line whose query does not run read-only on this graph is
refused with the engine's reason. Neither stops the rest.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from cypherturn.errors import DatasetError, EngineConnectionError, GraphError
from cypherturn.graph import GraphEngine
from cypherturn.memory._store import QuestionMemory, VerifiedPair, verify_pair

__all__ = ["LearnReport", "learn_file"]

_QUERY_KEYS = ("cypher", "query", "gold")


class LearnReport(BaseModel):
    """What :func:`learn_file` kept and why it left the rest.

    Attributes:
        kept: pairs verified and stored.
        new: of those, questions the memory did not hold before.
        skipped: lines that name another graph.
        refused: ``"line N: reason"`` for each line that was not a pair or did not run.
        total: pairs the memory holds now.
    """

    kept: int = 0
    new: int = 0
    skipped: int = 0
    refused: list[str] = []
    total: int = 0


def learn_file(path: Path, engine: GraphEngine, memory: QuestionMemory) -> LearnReport:
    """Verify every pair of ``path`` on ``engine``'s graph and keep those that run.

    Args:
        path: a JSON Lines file (see the module docstring).
        engine: an engine on the graph the pairs are for.
        memory: the graph's memory.

    Returns:
        The counts, and the reason for each refused line.

    Raises:
        DatasetError: the file cannot be read.
        EngineConnectionError: the engine is unreachable.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise DatasetError(f"cannot read {path}: {e}") from e
    report = LearnReport()
    pairs: list[VerifiedPair] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            report.refused.append(f"line {number}: not JSON ({e})")
            continue
        if not isinstance(row, dict):
            report.refused.append(f"line {number}: not a JSON object")
            continue
        graph = row.get("graph")
        if isinstance(graph, str) and graph != engine.graph:
            report.skipped += 1
            continue
        question = row.get("question")
        cypher = next((row[k] for k in _QUERY_KEYS if isinstance(row.get(k), str)), None)
        if (
            not isinstance(question, str)
            or not question.strip()
            or not cypher
            or not cypher.strip()
        ):
            report.refused.append(f"line {number}: needs a question and a cypher (or query, gold)")
            continue
        try:
            pairs.append(verify_pair(engine, question, cypher, "file"))
        except EngineConnectionError:
            raise
        except GraphError as e:
            report.refused.append(f"line {number}: {str(e).splitlines()[0][:200]}")
    report.kept = len(pairs)
    report.new = memory.add(pairs) if pairs else 0
    report.total = len(memory)
    return report
